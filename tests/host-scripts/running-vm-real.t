#!/usr/bin/env bash
# tier: destructive
# serial: host
# test-timeout: 300
# running-vm-real.t: compare's running-VM step on this machine's own KVM,
# as root with DESTRUCTIVE=1: bench-running-vm writes running-vm-CS.json
# whose phases show the stable bit on tsc, gone on CS, and the pause and
# resume's effect, read by the report tool's loader; then a run
# interrupted (INT to its process group, as a Ctrl-C) while the host is on
# CS: the clocksource back on tsc, no state file, no VM, no tracing
# instance of its own and no result file left.  Skips, saying why, where
# /dev/kvm is missing, the host is not on tsc or offers nothing else, or
# other VMs run.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
destructive || skip_all "changes the host clocksource and runs a KVM VM: as root with DESTRUCTIVE=1"
real=/sys/devices/system/clocksource/clocksource0
[ "$(cat "$real/current_clocksource")" = tsc ] || skip_all "the host is on $(cat "$real/current_clocksource"), not tsc"
read -r -a offered <"$real/available_clocksource"
other=
for c in "${offered[@]}"; do [ "$c" = tsc ] || { other=$c; break; }; done
[ -n "$other" ] || skip_all "the host offers no clocksource but tsc"
[ -c /dev/kvm ] || skip_all "no /dev/kvm"
kernels=(/boot/vmlinuz-* build/guest-kernel/boot/vmlinuz-*)
kernel=${CB_TEST_KERNEL:-${kernels[-1]}}
[ -r "$kernel" ] || kernel=${kernels[0]}
[ -r "$kernel" ] || skip_all "no kernel image for the VM (make deps unpacks one)"
[ -z "$(bash -c '. host-scripts/lib/clocksource.sh; cs_foreign_vms')" ] || skip_all "KVM guests are running on this machine: no real flip under them"
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'host-scripts/clocksource restore >/dev/null 2>&1; rm -rf "$tmp"' EXIT
step=host-scripts/bench-running-vm

mkdir -m 0755 "$tmp/run"
"$step" --run-dir "$tmp/run" --fallback "$other" --kernel "$kernel" --phase-seconds 2 >"$tmp/out" 2>"$tmp/err"
rc=$?
diag "$(cat "$tmp/err")"
ok "$([ "$rc" = 0 ] && [ -s "$tmp/run/running-vm-$other.json" ] && [ "$(cat "$real/current_clocksource")" = tsc ]; echo $?)" \
	"the step: exit $rc, running-vm-$other.json written, the host back on tsc"
line=$(python3 -c 'import sys; sys.path[:0] = ["contract"]
from cbcontract import load
print(load.load_running_vm(sys.argv[1]).sentence())' "$tmp/run/running-vm-$other.json" 2>&1)
ok "$([[ $line == "on tsc the stable bit on; on $other off; after the return to tsc "* ]] && [[ $line == *"pause and resume brought it back"* ]]; echo $?)" \
	"its phases, as the loader reads them: $line"

# Interrupted while the host is on the fallback: a Ctrl-C to its group.
mkdir -m 0755 "$tmp/run2"
setsid "$step" --run-dir "$tmp/run2" --fallback "$other" --kernel "$kernel" --phase-seconds 5 >/dev/null 2>"$tmp/err2" &
p=$!
for _ in $(seq 200); do [ "$(cat "$real/current_clocksource")" = "$other" ] && break; sleep 0.05; done
on=$(cat "$real/current_clocksource")
kill -INT -- "-$p"
wait "$p"
rc=$?
sleep 0.5
left=$(pgrep -f "clockbench-running-vm\." || true)
ok "$([ "$on" = "$other" ] && [ "$rc" = 130 ] && [ "$(cat "$real/current_clocksource")" = tsc ] && [ ! -e /run/clockbench/clocksource.state ] &&
	[ -z "$left" ] && [ ! -e "/sys/kernel/tracing/instances/clockbench-$p" ] && [ -z "$(ls -A "$tmp/run2")" ]; echo $?)" \
	"interrupted on $on: exit $rc, tsc back, no state file, no VM (${left:-none}), no instance, no file ($(tail -n1 "$tmp/err2"))"
# A kernel QEMU cannot open: one line in QEMU's words, nothing switched,
# no file, no private folder left.
mkdir -m 0755 "$tmp/run3"
before=$(find /tmp -maxdepth 1 -name 'clockbench-running-vm.*' | wc -l)
"$step" --run-dir "$tmp/run3" --fallback "$other" --kernel "$tmp/no-such-kernel" >/dev/null 2>"$tmp/err3"
rc=$?
ok "$([ "$rc" = 1 ] && [ "$(wc -l <"$tmp/err3")" = 1 ] && grep -q "QEMU did not start a KVM VM: .*no-such-kernel" "$tmp/err3" &&
	[ "$(cat "$real/current_clocksource")" = tsc ] && [ -z "$(ls -A "$tmp/run3")" ] &&
	[ "$(find /tmp -maxdepth 1 -name 'clockbench-running-vm.*' | wc -l)" = "$before" ]; echo $?)" \
	"a kernel QEMU cannot open: exit $rc, one line ($(head -c 150 "$tmp/err3")), nothing switched or left"
# Killed outright (SIGKILL: nothing of its own runs after): its VM dies
# with it, and the next run removes its tracefs instance and its folder.
mkdir -m 0755 "$tmp/run4" "$tmp/run5"
"$step" --run-dir "$tmp/run4" --fallback "$other" --kernel "$kernel" --phase-seconds 5 >/dev/null 2>&1 &
p=$!
for _ in $(seq 200); do pgrep -f "clockbench-running-vm\.$p\." >/dev/null && break; sleep 0.05; done
vm=$(pgrep -f "clockbench-running-vm\.$p\." || true)
kill -KILL "$p"
wait "$p" 2>/dev/null
sleep 1
alive=$(pgrep -f "clockbench-running-vm\.$p\." || true)
read -r -a left_pids <<<"$alive"
[ -z "$alive" ] || kill -KILL "${left_pids[@]}"
ok "$([ -n "$vm" ] && [ -z "$alive" ] && [ "$(cat "$real/current_clocksource")" = tsc ]; echo $?)" \
	"SIGKILL of the step: its VM (${vm:-not seen}) died with it (left: ${alive:-none})"
"$step" --run-dir "$tmp/run5" --fallback "$other" --kernel "$kernel" --phase-seconds 1 >/dev/null 2>"$tmp/err5"
rc=$?
ok "$([ "$rc" = 0 ] && [ ! -e "/sys/kernel/tracing/instances/clockbench-$p" ] &&
	[ -z "$(find /tmp -maxdepth 1 -name "clockbench-running-vm.$p.*")" ]; echo $?)" \
	"the next run (exit $rc) removed the killed one's tracefs instance and folder"
done_testing
