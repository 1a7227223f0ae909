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
tsc_json=$tmp/tsc.json
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

# The measuring window: the launcher's markers (the line format of a
# trace_marker write) put into the recorded trace by hand, a stray start
# first.  Between them, counted by hand: 3 TSC-offset writes (vCPU 1, 0,
# 1), 3 kvm_track_tsc, no pvclock update, no master clock change.
mk() { printf ' python3-9000    (   9000) [000] ..... %s: tracing_mark_write: clockbench-window-%s\n' "$1" "$2"; }
{
	mk 897.600000 start
	sed -n '/897.720205/q;p' "$fx/trace-tsc.txt"
	grep '897.720205' "$fx/trace-tsc.txt"
	mk 897.720300 start
	sed -n '/897.720205/,$p' "$fx/trace-tsc.txt" | sed 1d | sed -n '1,6p'
	mk 897.724800 end
	sed -n '/897.720205/,$p' "$fx/trace-tsc.txt" | sed 1,7d
} >"$tmp/marked.txt"
python3 "$kt" summarize "$tmp/marked.txt" --tgid 8162 >"$tmp/marked.json"
ok "$([ "$(field "$tmp/marked.json" '(d["measuring"]["seconds"], d["measuring"]["tsc_offset_writes"], d["measuring"]["tsc_offset_writes_per_vcpu"], d["measuring"]["events"]["kvm_track_tsc"], d["measuring"]["pvclock_updates"], d["measuring"]["master_clock_transitions"])')" = "(0.0045, 3, {'1': 2, '0': 1}, 3, 0, 0)" ]; echo $?)" \
	"the measuring window counts only the events between the markers: $(field "$tmp/marked.json" 'd["measuring"]')"
ok "$([ "$(field "$tmp/marked.json" '(d["tsc_offset_writes"], sum(d["events"].values()))')" = "(6, 19)" ]; echo $?)" \
	"the whole-life counts are unchanged by the markers"
ok "$([ "$(field "$tsc_json" '(d["measuring"]["available"], d["measuring"]["reason"])')" = "(False, 'no start marker in the trace')" ]; echo $?)" \
	"no markers: the window is unavailable, with the reason"

printf '{"schema":"clockbench-guest/1","launcher":{"accel":"kvm"},"bench":{}}\n' >"$tmp/g-marked.json"
python3 "$kt" attach "$tmp/g-marked.json" "$tmp/marked.txt"
ok "$([ "$(field "$tmp/g-marked.json" '(d["kvm_trace"]["subject"], d["kvm_trace"]["measuring"]["tsc_offset_writes"])')" = "(\"the guest's QEMU process\", 3)" ]; echo $?)" \
	"attach: the launcher's marker lines are not taken for a second VM"

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
ok "$([ "$(field "$tmp/g-tcg.json" '(d["kvm_trace"]["master_clock"]["last"], "only to observe" in d["kvm_trace"]["subject"], "does not measure" in d["kvm_trace"]["measuring"]["reason"])')" = "(False, True, True)" ]; echo $?)" \
	"attach --observer: a VM booted only to observe KVM is labelled so, and has no measuring window"
python3 "$kt" attach "$tmp/g-kvm.json" "$tmp/both.txt"
ok "$([ "$(field "$tmp/g-kvm.json" 'd["kvm_trace"]["available"]')" = False ]; echo $?)" "two QEMUs and no pid: not available, with the reason"
python3 "$kt" attach "$tmp/g-kvm.json" /dev/null
ok "$(field "$tmp/g-kvm.json" 'd["kvm_trace"]["reason"]' | grep -q 'no KVM clock events'; echo $?)" "no events at all: says so"
echo '{"schema":"clockbench/1"}' >"$tmp/host.json"
python3 "$kt" attach "$tmp/host.json" "$fx/trace-tsc.txt" 2>"$tmp/err"
ok "$([ $? -eq 1 ] && grep -q 'not a clockbench guest result' "$tmp/err" && [ "$(cat "$tmp/host.json")" = '{"schema":"clockbench/1"}' ]; echo $?)" \
	"attach refuses a file that is not a guest result, and leaves it alone"

# tracefs for real, where this host allows it (root, kvm loaded).
if inst=$("$(dirname "$kt")/kvmtrace" start $$ 2>"$tmp/why"); then
	ok "$([ "$inst" = /sys/kernel/tracing/instances/clockbench-$$ ] && [ -d "$inst" ]; echo $?)" \
		"kvmtrace start creates an instance of its own and prints its folder ($inst)"
	echo clockbench-window-start >"$inst/trace_marker"
	echo clockbench-window-end >"$inst/trace_marker"
	"$(dirname "$kt")/kvmtrace" stop $$ "$tmp/live.txt"
	ok "$([ $? -eq 0 ] && [ ! -e /sys/kernel/tracing/instances/clockbench-$$ ] && grep -q 'tracer' "$tmp/live.txt"; echo $?)" \
		"kvmtrace stop saves the text and removes the instance"
	python3 "$kt" summarize "$tmp/live.txt" >"$tmp/live.json"
	ok "$([ "$(field "$tmp/live.json" 'd["measuring"]["available"]')" = True ]; echo $?)" \
		"markers written to a live instance's trace_marker open a measuring window"
else
	skip "no tracefs/kvm events here: $(cat "$tmp/why")"
	skip "no tracefs/kvm events here"
	skip "no tracefs/kvm events here"
fi
done_testing
