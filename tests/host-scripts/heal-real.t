#!/usr/bin/env bash
# tier: destructive
# serial: host
# test-timeout: 300
# heal-real.t: the operator's flow on this machine's own KVM, as root with
# DESTRUCTIVE=1.  A VM of the test's own (QEMU -accel kvm, the host's
# kernel, no initramfs, a QMP socket of its own) starts on tsc; the host is
# switched away and back by a plain sysfs write, nothing of clockbench
# running (no trace across the switch, no watch); a second VM starts while
# the host is away.  Then, as an operator would: `health` exits 1, naming
# the first VM as without the stable bit and `clockbench heal` as its
# remedy, and the second apart as booted off tsc; `heal --yes --qmp SOCK`
# (no names) pauses and resumes the first, KVM's events show its master
# clock on again, the second is never paused; then health no longer counts
# the first.  Skips, saying why, where /dev/kvm is missing or cannot create
# a VM, the host is not on tsc or offers no other clocksource, or other VMs
# run.  Both VMs are killed by pid at the end, and the clocksource is put
# back on every path.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
flip_needs "changes the host clocksource and runs KVM VMs"
command -v qemu-system-x86_64 >/dev/null || skip_all "no qemu-system-x86_64 (make deps)"
kernels=(/boot/vmlinuz-* build/guest-kernel/boot/vmlinuz-*)
kernel=${CB_TEST_KERNEL:-${kernels[-1]}}
[ -r "$kernel" ] || kernel=${kernels[0]}
[ -r "$kernel" ] || skip_all "no kernel image for the VM (make deps unpacks one)"
tmp=$(mktemp -d)
vms=()
cleanup() {
	local p
	for p in "${vms[@]+"${vms[@]}"}"; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	[ "$(cat "$real/current_clocksource")" = "$orig" ] || echo "$orig" >"$real/current_clocksource"
	rm -rf "$tmp"
}
trap cleanup EXIT
heal=host-scripts/heal

# vm NAME: starts a VM in the background (its pid in $vm, its QMP socket
# $tmp/NAME.qmp); false when QEMU did not come up.
vm() {
	qemu-system-x86_64 -nodefaults -no-user-config -display none -name "$1" -accel kvm -cpu qemu64 -smp 2 -m 256 \
		-kernel "$kernel" -append "console=ttyS0 panic=-1" -qmp "unix:$tmp/$1.qmp,server=on,wait=off" \
		-pidfile "$tmp/$1.pid" >"$tmp/$1.log" 2>&1 &
	for _ in $(seq 100); do [ -S "$tmp/$1.qmp" ] && [ -s "$tmp/$1.pid" ] && break; sleep 0.05; done
	vm=$(cat "$tmp/$1.pid" 2>/dev/null) || return 1
	vms+=("$vm")
	kill -0 "$vm" 2>/dev/null
}
vm early || skip_all "QEMU did not start a KVM VM here: $(head -c 200 "$tmp/early.log")"
early=$vm
sleep 2

# Away and back by hand, as someone fixing a host does: nothing of ours runs.
echo "$other" >"$real/current_clocksource"
sleep 2
echo tsc >"$real/current_clocksource"
ok "$([ "$(cat "$real/current_clocksource")" = tsc ]; echo $?)" "away to $other and back by a plain sysfs write: on tsc again"
# A second VM started while the host is away.
echo "$other" >"$real/current_clocksource"
sleep 0.3
vm late
late=$vm
sleep 1
echo tsc >"$real/current_clocksource"
ok "$([ "$(cat "$real/current_clocksource")" = tsc ] && kill -0 "$late"; echo $?)" "a second VM started while on $other; back on tsc"
sleep 3

# The probe, alone: KVM shows the state of a VM that makes no clock event
# when its threads move to another CPU (its master clock off: an update
# without the bit).  Run again after the heal below: no update (on).
probe() {
	python3 - "$1" <<'PY'
import os, sys
sys.path[:0] = ["contract", "host-scripts"]
from cbhost import heal, kvmtrace
pid = int(sys.argv[1])
inst = kvmtrace.start(os.getpid(), heal.TRACE_KB)
try:
    vm = heal.VM(pid, "early", "cmdline", heal.start_s(pid), heal.start_ticks(pid))
    print(*heal.probe(vm, inst), sep=": ")
finally:
    kvmtrace.discard(os.getpid())
PY
}
probe "$early" >"$tmp/probe.out" 2>&1
diag "$(cat "$tmp/probe.out")"
ok "$(grep -q "^lost: clockbench heal's probe: its threads moved to other CPUs of their own, KVM updated its clock without the stable bit" "$tmp/probe.out"; echo $?)" \
	"the probe: threads moved, KVM updated the VM's clock without the bit (its master clock off)"

host-scripts/health >"$tmp/health.out" 2>"$tmp/health.err"
rc=$?
diag "$(head -c 3000 "$tmp/health.out")"
ok "$([ "$rc" = 1 ] && head -n1 "$tmp/health.out" | grep -q "DEGRADED (1 of the 2 KVM VMs it runs lost the stable bit.*clockbench heal --yes"; echo $?)" \
	"health: exit 1 ($rc), its first line counts the VM that lost the bit and names the heal"
ok "$(grep -q "VM early (pid $early): lost the stable bit" "$tmp/health.out" && grep -q "VM late (pid $late): booted while the host was off tsc" "$tmp/health.out"; echo $?)" \
	"health names the VM that ran across the switch, and the one booted off tsc apart"

"$heal" --yes --qmp "$tmp/early.qmp" --qmp "$tmp/late.qmp" >"$tmp/heal.out" 2>"$tmp/heal.err"
rc=$?
diag "$(cat "$tmp/heal.out" "$tmp/heal.err")"
ok "$([ "$rc" = 0 ] && grep -q "^early (pid $early): healed: paused for [0-9.]* ms; KVM's master clock on again" "$tmp/heal.out"; echo $?)" \
	"heal --yes: the VM paused and resumed over QMP, KVM's master clock on again (exit $rc)"
ok "$(! grep -q "^late (pid $late): healed" "$tmp/heal.out"; echo $?)" "the VM booted off tsc is not paused"
probe "$early" >"$tmp/probe2.out" 2>&1
diag "$(cat "$tmp/probe2.out")"
ok "$(grep -q "^None: moved its [0-9]* threads to other CPUs of their own for 2 s: no clock update came" "$tmp/probe2.out"; echo $?)" \
	"the probe after the heal: no clock update (its master clock on)"
host-scripts/health --trace-seconds 0 >"$tmp/health2.out" 2>&1
ok "$(grep -q "VM early (pid $early): has the stable bit (clockbench heal paused and resumed it" "$tmp/health2.out" && ! head -n1 "$tmp/health2.out" | grep -q "lost the stable bit"; echo $?)" \
	"afterwards health, tracing nothing, knows from heal's record that it has the bit"
done_testing
