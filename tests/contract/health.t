#!/usr/bin/python3
# tier: fast
"""health.t: cbcontract.health.judge, clockbench's one rule, for a machine that runs KVM VMs: a guest that runs
VMs is judged by its own clock and by its VMs' (off tsc: degraded, naming its VMs and their stable bit, whatever
its own reads do); a host as before, its VMs counted in the sentence; back on tsc, the VMs still without the bit
named with their remedy (pause and resume: clockbench heal); a guest that runs none, or whose VMs were not looked
at, judged as before (TAP)."""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract")]
from cbcontract import health  # noqa: E402

t = Tap()
INV = {"constant_tsc": True, "nonstop_tsc": True}

# A machine judged by its own clock: the VMs not looked at (None) and no VM ([]) give the same verdict.
OWN = (("guest kvm-clock user", (True, "kvm-clock", "user", INV), "healthy"),
       ("guest kvm-clock syscall", (True, "kvm-clock", "syscall", INV), "degraded"),
       ("guest kvm-clock not probed", (True, "kvm-clock", None, INV), "unknown"),
       ("guest tsc invariant", (True, "tsc", None, INV), "healthy"),
       ("host tsc", (False, "tsc", None, INV), "healthy"),
       ("host hpet", (False, "hpet", None, INV), "degraded"))
bad = [(n, health.judge(*a), health.judge(*a, vms=None), health.judge(*a, vms=[])) for n, a, want in OWN
       if not health.judge(*a)[0] == health.judge(*a, vms=None)[0] == health.judge(*a, vms=[])[0] == want
       or not health.judge(*a) == health.judge(*a, vms=[])]
t.ok(not bad, "a machine that runs no VM, or whose VMs were not looked at, judged by its own clock as before "
     "(%d cases)" % len(OWN), bad)

# A nested hypervisor off tsc: degraded, whatever its own reads do; the sentence names why.
for path in ("user", "syscall", None):
    state, why = health.judge(True, "kvm-clock", path, INV, vms=[False, None])
    t.ok(state == "degraded" and "kvm-clock, not tsc" in why and "runs 2 KVM VMs" in why
         and "1 of 2 without it now" in why and "stable bit" in why,
         "a guest on kvm-clock (its reads: %s) that runs 2 VMs, one without the stable bit, one not updated yet: "
         "degraded, naming its VMs" % path, (state, why))
state, why = health.judge(True, "kvm-clock", "user", INV, vms=[True])
t.ok(state == "degraded" and "0 of 1 without it now" in why,
     "off tsc with a VM that still shows the bit (no update since the switch): degraded by KVM's rule", (state, why))
state, why = health.judge(None, "kvm-clock", "user", INV, vms=[False])
t.ok(state == "degraded" and "judged as a host" in why and "1 of them without the stable bit now" in why,
     "a machine not known to be a guest, off tsc, that runs a VM: degraded as a host, its VM counted", (state, why))
state, why = health.judge(False, "hpet", None, INV, vms=[False, False, True])
own = health.judge(False, "hpet", None, INV)
t.ok(state == "degraded" and why.startswith(own[1]) and "runs 3 KVM VMs, 2 of them without" in why,
     "a host on hpet: degraded as before, its 3 VMs (2 without the bit) in the sentence", (state, why))

# Back on tsc: degraded while a VM lacks the bit (it pays a syscall a read), counted, with the heal named.
for guest in (True, False):
    state, why = health.judge(guest, "tsc", "user", INV, vms=[False, True])
    own = health.judge(guest, "tsc", "user", INV)
    t.ok(own[0] == "healthy" and state == "degraded" and why.startswith("1 of the 2 KVM VMs it runs lost the stable bit")
         and "clockbench heal --yes" in why and why.endswith(own[1]),
         "a %s back on tsc, one of its VMs still without the bit: degraded, counted, the heal named"
         % ("guest" if guest else "host"), (state, why))
state, why = health.judge(False, "tsc", "user", INV, vms=["booted_off", True])
t.ok(state == "degraded" and "booted while the host was off tsc" in why and "rebooted" in why,
     "back on tsc, a VM that booted off tsc: degraded, its remedy a reboot of the guest", (state, why))
t.ok(health.judge(True, "tsc", "user", INV, vms=[True, None]) == health.judge(True, "tsc", "user", INV),
     "on tsc, every VM with the bit (or not updated yet): the verdict and sentence of its own clock")
t.ok(health.judge(True, "tsc", None, {}, vms=[True])[0] == "degraded",
     "a guest on tsc without an invariant TSC that runs a VM: degraded by its own clock")
t.ok(health.judge(True, None, "user", INV, vms=[False])[0] == "unknown",
     "the clocksource not read: unknown, whatever its VMs")
# The name: CPUID's, and the kernel's beside it where the two disagree (a PVM host shows bhyve's signature).
m = health.machine(True, "bhyve bhyve ", "PVM")
t.ok(m["guest"] and m["hypervisor"] == "bhyve (the kernel says PVM)",
     "CPUID says bhyve, the kernel PVM: both named", m)
same = [health.machine(True, v, k)["hypervisor"] for v, k in
        (("KVMKVMKVM", "KVM"), ("Microsoft Hv", "Microsoft Hyper-V"), ("XenVMMXenVMM", "Xen HVM"), ("KVMKVMKVM", None))]
t.ok(same == ["KVM", "Hyper-V", "Xen", "KVM"], "CPUID and the kernel agree (or the kernel is silent): one name", same)
t.done()
