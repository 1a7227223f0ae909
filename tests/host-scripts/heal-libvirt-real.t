#!/usr/bin/env bash
# tier: destructive
# serial: host
# test-timeout: 300
# heal-libvirt-real.t: the operator's flow through a real libvirtd, as
# root with DESTRUCTIVE=1.  A transient KVM domain of the test's own
# (virsh create, direct kernel boot of the host's kernel: whether the guest
# boots does not matter, it is a VM that libvirt can suspend and resume)
# starts on tsc; the host is switched away and back by a plain sysfs write
# with nothing of clockbench running; then `health` exits 1 naming the
# domain by libvirt's own name, `heal --yes` (no other option) suspends and
# resumes it through virsh, KVM's events show its master clock on again,
# and health no longer counts it.  Starts virtlogd and libvirtd where none
# runs and stops exactly those; the domain is destroyed and the
# clocksource put back on every path.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
flip_needs "changes the host clocksource, runs a libvirt daemon and a KVM VM"
if ! command -v virsh >/dev/null || ! command -v libvirtd >/dev/null; then
	skip_all "libvirt not installed (make deps-integrations)"
fi
command -v qemu-system-x86_64 >/dev/null || skip_all "no qemu-system-x86_64 (make deps)"
kernel=$(python3 -c 'import sys; sys.path[:0] = ["contract", "host-scripts"]
from cbhost import qemu; print((qemu.kernels() or [""])[0])')
[ -n "$kernel" ] || skip_all "no kernel image for the VM (make deps unpacks one)"
uri=qemu:///system
tmp=$(mktemp -d)
chmod 755 "$tmp" # libvirt's QEMU user reads the kernel here
dom=clockbench-heal-test-$$
cleanup() {
	virsh -c "$uri" destroy "$dom" >/dev/null 2>&1
	[ "$(cat "$real/current_clocksource")" = "$orig" ] || echo "$orig" >"$real/current_clocksource"
	local pid
	for pid in "${libvirt_started[@]+"${libvirt_started[@]}"}"; do kill "$pid" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
libvirt_up "$uri" || skip_all "no libvirt daemon answers at $uri"
cp "$kernel" "$tmp/vmlinuz" && chmod 644 "$tmp/vmlinuz"
cat >"$tmp/dom.xml" <<XML
<domain type='kvm'>
  <name>$dom</name>
  <memory unit='MiB'>256</memory>
  <vcpu>2</vcpu>
  <os><type arch='x86_64' machine='q35'>hvm</type><kernel>$tmp/vmlinuz</kernel><cmdline>console=ttyS0 panic=-1</cmdline></os>
  <cpu mode='custom' match='exact' check='none'><model fallback='allow'>qemu64</model><feature policy='disable' name='svm'/></cpu>
  <devices><emulator>$(command -v qemu-system-x86_64)</emulator><serial type='file'><source path='$tmp/console.log'/></serial></devices>
</domain>
XML
virsh -c "$uri" create "$tmp/dom.xml" >"$tmp/create.out" 2>&1 || skip_all "libvirt did not start a KVM domain here: $(grep -m1 error "$tmp/create.out" | head -c 200)"
pid=$(cat "/run/libvirt/qemu/$dom.pid" 2>/dev/null)
ok "$([ -n "$pid" ] && kill -0 "$pid"; echo $?)" "libvirt started KVM domain $dom (pid ${pid:-none})"
sleep 2

# Away and back by hand, as someone fixing a host does: nothing of ours runs.
echo "$other" >"$real/current_clocksource"
sleep 2
echo tsc >"$real/current_clocksource"
sleep 2
host-scripts/health >"$tmp/health.out" 2>&1
rc=$?
diag "$(grep -E '^clock health|VM ' "$tmp/health.out" | head -c 2000)"
ok "$([ "$rc" = 1 ] && head -n1 "$tmp/health.out" | grep -q "DEGRADED (1 of the 1 KVM VM it runs lost the stable bit" &&
	grep -q "VM $dom (pid $pid): lost the stable bit (" "$tmp/health.out"; echo $?)" \
	"health: exit 1 ($rc), the domain named by libvirt's name as without the stable bit"
# Its own short trace may catch an update of the VM or not: with none, the records decide.
host-scripts/health --trace-seconds 0 >"$tmp/health0.out" 2>&1
ok "$(grep -q "VM $dom (pid $pid): lost the stable bit (running when the host left tsc" "$tmp/health0.out"; echo $?)" \
	"health tracing nothing: the same from the records (the kernel's switches, the domain's start)"
host-scripts/heal --yes >"$tmp/heal.out" 2>"$tmp/heal.err"
rc=$?
diag "$(cat "$tmp/heal.out" "$tmp/heal.err")"
ok "$([ "$rc" = 0 ] && grep -q "^$dom (pid $pid): healed: paused for [0-9.]* ms; KVM's master clock on again" "$tmp/heal.out"; echo $?)" \
	"heal --yes: suspended and resumed through virsh, KVM's master clock on again (exit $rc)"
ok "$([ "$(virsh -c "$uri" domstate "$dom" 2>/dev/null | head -n1)" = running ]; echo $?)" "the domain runs again"
host-scripts/health --trace-seconds 0 >"$tmp/health2.out" 2>&1
ok "$(grep -q "VM $dom (pid $pid): has the stable bit (clockbench heal" "$tmp/health2.out"; echo $?)" \
	"afterwards health knows it from heal's record"
done_testing
