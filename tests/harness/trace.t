#!/usr/bin/env bash
# trace.t: the KVM trace summary against trace text recorded on this kind
# of machine (a KVM VM started with the host on tsc, then on kvm-clock,
# where a nested host prints hostclock 0x2), and its merge into a result.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fx=tests/harness/fixtures
kt=host-scripts/kvmtrace.py

field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {"d": d}))' "$@"; }

python3 "$kt" summarize "$fx/trace-tsc.txt" --tgid 8162 >"$tmp/tsc.json"
ok "$([ "$(field "$tmp/tsc.json" '(d["master_clock"]["last"], d["master_clock"]["hostclock"], d["master_clock"]["transitions"])')" = "(True, 'tsc', 1)" ]; echo $?)" \
	"host on tsc: master clock went off -> on (1 transition), hostclock tsc"
ok "$([ "$(field "$tmp/tsc.json" '(d["stable_bit"]["all"], d["pvclock_updates"], d["tsc_offset_writes"], d["tsc_offset_writes_per_vcpu"])')" = "(True, 3, 6, {'0': 3, '1': 3})" ]; echo $?)" \
	"host on tsc: stable bit set (flags 0x1), 3 pvclock updates, 6 TSC-offset writes (3 per vCPU)"

python3 "$kt" summarize "$fx/trace-kvm-clock.txt" >"$tmp/kc.json"
ok "$([ "$(field "$tmp/kc.json" '(d["master_clock"]["last"], d["master_clock"]["hostclock"], d["stable_bit"]["all"], d["pvclock_updates"])')" = "(False, '0x2', False, 5)" ]; echo $?)" \
	"host on kvm-clock (nested): master clock off, hostclock 0x2, stable bit clear, 5 updates"

# Two VMs in one window: each tgid sees only its own events.
cat "$fx/trace-tsc.txt" "$fx/trace-kvm-clock.txt" >"$tmp/both.txt"
a=$(python3 "$kt" summarize "$tmp/both.txt" --tgid 8162 | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["master_clock"]["last"], d["stable_bit"]["all"], sum(d["events"].values()))')
b=$(python3 "$kt" summarize "$tmp/both.txt" --tgid 8311 | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["master_clock"]["last"], d["stable_bit"]["all"], sum(d["events"].values()))')
ok "$([ "$a" = "True True 19" ] && [ "$b" = "False False 19" ]; echo $?)" "--tgid keeps one QEMU's events: '$a' / '$b'"

# Lines without record-tgid, and thread names with spaces ("CPU 0/KVM").
sed -e 's/(   [0-9]*) //' -e 's/qemu-system-x86-8164/CPU 0\/KVM-8164/' "$fx/trace-tsc.txt" >"$tmp/notgid.txt"
n=$(python3 "$kt" summarize "$tmp/notgid.txt" | python3 -c 'import json,sys; print(sum(json.load(sys.stdin)["events"].values()))')
ok "$([ "$n" = 19 ]; echo $?)" "lines without a tgid column and thread names with spaces parse ($n events)"

python3 "$kt" summarize /dev/null >"$tmp/empty.json"
ok "$([ "$(field "$tmp/empty.json" '(d["master_clock"]["last"], d["stable_bit"]["all"])')" = "(None, None)" ]; echo $?)" "no events: null, not a guess"

# attach: one QEMU in the window is the guest's, labelled by accelerator.
for accel in kvm tcg; do
	printf '{"schema":"clockbench-guest/1","launcher":{"accel":"%s"},"bench":{}}\n' "$accel" >"$tmp/g-$accel.json"
	python3 "$kt" attach "$tmp/g-$accel.json" "$fx/trace-tsc.txt"
done
ok "$([ "$(field "$tmp/g-kvm.json" '(d["kvm_trace"]["master_clock"]["last"], d["kvm_trace"]["subject"])')" = "(True, \"the guest's QEMU process\")" ]; echo $?)" \
	"attach under KVM: the summary is the guest's own"
ok "$(field "$tmp/g-tcg.json" 'd["kvm_trace"]["subject"]' | grep -q 'probe KVM (the guest itself ran under tcg)'; echo $?)" \
	"attach under TCG: the KVM state is labelled as the launcher's probe VM, not the guest's"
python3 "$kt" attach "$tmp/g-tcg.json" "$fx/trace-kvm-clock.txt" --observer
ok "$([ "$(field "$tmp/g-tcg.json" '(d["kvm_trace"]["master_clock"]["last"], "only to observe" in d["kvm_trace"]["subject"])')" = "(False, True)" ]; echo $?)" \
	"attach --observer: a VM booted only to observe KVM is labelled so"
python3 "$kt" attach "$tmp/g-kvm.json" "$tmp/both.txt"
ok "$([ "$(field "$tmp/g-kvm.json" 'd["kvm_trace"]["available"]')" = False ]; echo $?)" "two QEMUs and no pid: not available, with the reason"
python3 "$kt" attach "$tmp/g-kvm.json" /dev/null
ok "$(field "$tmp/g-kvm.json" 'd["kvm_trace"]["reason"]' | grep -q 'no KVM clock events'; echo $?)" "no events at all: says so"
echo '{"schema":"clockbench/1"}' >"$tmp/host.json"
python3 "$kt" attach "$tmp/host.json" "$fx/trace-tsc.txt" 2>"$tmp/err"
ok "$([ $? -eq 1 ] && grep -q 'not a clockbench guest result' "$tmp/err" && [ "$(cat "$tmp/host.json")" = '{"schema":"clockbench/1"}' ]; echo $?)" \
	"attach refuses a file that is not a guest result, and leaves it alone"

# tracefs for real, where this host allows it (root, kvm loaded).
if "$(dirname "$kt")/kvmtrace" start $$ 2>"$tmp/why"; then
	ls -d /sys/kernel/tracing/instances/clockbench-$$ >/dev/null 2>&1
	ok $? "kvmtrace start creates an instance of its own"
	"$(dirname "$kt")/kvmtrace" stop $$ "$tmp/live.txt"
	ok "$([ $? -eq 0 ] && [ ! -e /sys/kernel/tracing/instances/clockbench-$$ ] && grep -q 'tracer' "$tmp/live.txt"; echo $?)" \
		"kvmtrace stop saves the text and removes the instance"
else
	skip "no tracefs/kvm events here: $(cat "$tmp/why")"
	skip "no tracefs/kvm events here"
fi
done_testing
