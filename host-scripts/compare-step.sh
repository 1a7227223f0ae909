#!/usr/bin/env bash
# compare-step.sh: one clocksource's part of `make compare`, run by
# `clocksource set CS -- compare-step.sh CS DIR` (which restores after):
# the host bench, then the guest bench with KVM's clock events traced.
# Usage: compare-step.sh CLOCKSOURCE RUN_DIR   (env: GUEST=0 skips the guest)
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
[ "$#" -eq 2 ] || { echo "usage: $0 CLOCKSOURCE RUN_DIR" >&2; exit 2; }
cs=$1
dir=$2
now=$(cat "${CB_CS_DIR:-/sys/devices/system/clocksource/clocksource0}/current_clocksource")
[ "$now" = "$cs" ] || { echo "clockbench: expected clocksource '$cs', the kernel reports '$now'" >&2; exit 1; }

echo "clockbench: [$cs] host bench" >&2
DURATION=${DURATION:-0.5} "$here/bench-host.sh" --existing "$(dirname "$dir")" "$(basename "$dir")" >/dev/null

[ "${GUEST:-1}" = 1 ] || exit 0
echo "clockbench: [$cs] guest bench (kvm tracepoints on)" >&2
trace=$dir/kvm-trace-$cs.txt
traced=0
tracing_why=
if why=$("$here/kvmtrace" start "$$" 2>&1); then
	traced=1
	trap '"$here/kvmtrace" stop "$$" /dev/null 2>/dev/null || true' EXIT
	# The launcher marks the guest's measuring window in this trace.
	export CB_TRACE_MARKER=$why/trace_marker
else
	tracing_why=${why#kvmtrace: }
	echo "clockbench: [$cs] no KVM trace: $tracing_why" >&2
fi
shopt -s nullglob
before=("$dir"/guest-"$cs"-*vcpu.json)
rc=0
"$here/launch-guest.sh" "$(dirname "$dir")" "$(basename "$dir")" >/dev/null || rc=$?
if [ "$traced" = 1 ]; then
	trap - EXIT
	"$here/kvmtrace" stop "$$" "$trace"
fi
[ "$rc" -eq 0 ] || exit "$rc"
after=("$dir"/guest-"$cs"-*vcpu.json)
result=
for f in "${after[@]}"; do
	case " ${before[*]+"${before[*]}"} " in *" $f "*) ;; *) result=$f ;; esac
done
[ -n "$result" ] || { echo "clockbench: [$cs] the guest run left no result" >&2; exit 1; }

accel=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["launcher"].get("accel"))' "$result")
if [ "$traced" = 1 ] && [ "$accel" != kvm ] && [ -w /dev/kvm ] && [ "${OBSERVE:-1}" = 1 ]; then
	# The guest ran under TCG (KVM would not boot it here): KVM's clock is
	# still observable from a short KVM VM of our own, whether or not its
	# kernel gets far; labelled as such in the result.
	vcpus=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["launcher"].get("vcpus") or 1)' "$result")
	kernel=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["launcher"].get("kernel") or "")' "$result")
	echo "clockbench: [$cs] guest ran under $accel: observing KVM's clock with a ${OBSERVE_SECONDS:-5} s KVM VM" >&2
	trace=$dir/kvm-observe-$cs.txt
	unset CB_TRACE_MARKER
	"$here/kvmtrace" start "$$" >/dev/null
	trap '"$here/kvmtrace" stop "$$" /dev/null 2>/dev/null || true' EXIT
	timeout -k 2 "${OBSERVE_SECONDS:-5}" qemu-system-x86_64 -accel kvm -nodefaults -no-user-config \
		-display none -m 256 -smp "$vcpus" -kernel "$kernel" -append "console=ttyS0 panic=-1" \
		>/dev/null 2>&1 </dev/null || true
	trap - EXIT
	"$here/kvmtrace" stop "$$" "$trace"
	python3 "$here/kvmtrace.py" attach "$result" "$trace" --observer
elif [ "$traced" = 1 ]; then
	python3 "$here/kvmtrace.py" attach "$result" "$trace"
else
	summary=$(mktemp)
	python3 "$here/kvmtrace.py" unavailable "$tracing_why" >"$summary"
	python3 "$here/kvmtrace.py" merge "$result" "$summary"
	rm -f "$summary"
fi
