"""health.py: the one rule that judges a machine's clock, host or guest.

A hypervisor host is healthy on tsc alone: off it, KVM turns the master
clock off and its guests lose PVCLOCK_TSC_STABLE_BIT.  A guest is judged as
a guest: a paravirtual clock (kvm-clock, Hyper-V's TSC page, xen) whose
reads stay in user space is what a healthy guest does; the same clock read
by syscall means the host took the stable bit away; tsc with an invariant
TSC (constant_tsc and nonstop_tsc) is healthy too.  health, the bench
screen's verdict and the watch's metrics all call judge(); none has a rule
of its own.

Whether a machine runs KVM VMs is a fact of its own, beside whether it is
a guest: a guest can be a hypervisor too (nested KVM: cloud instances with
nested virtualization, CI runners).  Such a machine is judged by its own
clock and by its VMs': off tsc, KVM turns its VMs' master clock off and
they lose the stable bit (pvclock_gtod_notify() in arch/x86/kvm/x86.c;
measured on 2026-12-04 on a nested kvm_pvm guest, Linux 6.18.44: its VMs'
pvclock flags went from 0x1 to 0x0 within a second of its switch to
kvm-clock), so it is degraded whatever its own reads do.  Back on tsc it
is healthy again, but KVM turns a VM's master clock back on only when
something sets that VM's clock (a pause and resume, a migration, a
restart): the VMs left without the bit are named in the sentence, with
their remedy.  A guest that runs no VM is judged as above.

machine() says whether this is a guest and of which hypervisor, from the
evidence it is given (each item names where it came from): the CPUID
hypervisor bit (cpuinfo's flag), CPUID's vendor leaf (the engine's
context), the kernel's "Hypervisor detected" line, /sys/hypervisor/type
and DMI.  With no evidence either way, it says so.
"""

from . import names

# A guest's paravirtual clocksources, and whose they are (names.h's catalog).
PV_CLOCKS = {c.name: c.what for c in names.CLOCKSOURCES if c.kind == "paravirtual"}
TSC_NAMES = names.TSC_NAMES
# CPUID leaf 0x40000000's vendor strings, as a person names them.
VENDORS = {"KVMKVMKVM": "KVM", "Microsoft Hv": "Hyper-V", "VMwareVMware": "VMware", "XenVMMXenVMM": "Xen",
           "TCGTCGTCGTCG": "QEMU TCG (an emulator)", "bhyve bhyve": "bhyve", "ACRNACRNACRN": "ACRN",
           " lrpepyh  vr": "Parallels", "VBoxVBoxVBox": "VirtualBox", "QNXQVMBSQG": "QNX"}
# DMI sys_vendor / product_name words of a virtual machine.
DMI_WORDS = {"QEMU": "QEMU", "KVM": "KVM", "VMware": "VMware", "VirtualBox": "VirtualBox", "Xen": "Xen",
             "Amazon EC2": "KVM (Amazon EC2)", "Google Compute Engine": "KVM (Google)", "Virtual Machine": "Hyper-V",
             "OpenStack": "KVM (OpenStack)", "BHYVE": "bhyve", "Firecracker": "Firecracker"}


def vendor_name(v):
    """A CPUID vendor string as a person names it (unknown ones as given)."""
    if not isinstance(v, str) or not v.strip():
        return None
    return VENDORS.get(v.strip(), v.strip()[:16])


def machine(cpu_flag=None, cpuid_vendor=None, log_hypervisor=None, sys_hypervisor=None, dmi=None, sources=None):
    """{"guest": True/False/None, "hypervisor": name or None, "evidence":
    [text]} from what was read (None: not read).  cpu_flag: cpuinfo's
    'hypervisor' flag (CPUID.1:ECX bit 31); cpuid_vendor: leaf 0x40000000;
    log_hypervisor: the kernel's "Hypervisor detected: X"; sys_hypervisor:
    /sys/hypervisor/type; dmi: sys_vendor and product_name joined.
    sources names where each came from ({"cpu_flag": "/proc/cpuinfo",
    ...}).  The CPUID bit decides where it was read (the architecture says
    so); the others name the hypervisor and stand in where it was not."""
    sources = sources or {}
    ev, names = [], []

    def say(key, text):
        ev.append("%s (%s)" % (text, sources.get(key, key)))

    if cpu_flag is not None:
        say("cpu_flag", "CPUID hypervisor bit %s" % ("set" if cpu_flag else "clear"))
    v = vendor_name(cpuid_vendor)
    if v:
        say("cpuid_vendor", "CPUID vendor %r: %s" % (cpuid_vendor.strip(), v))
        names.append(v)
    if log_hypervisor:
        say("log_hypervisor", "the kernel: 'Hypervisor detected: %s'" % log_hypervisor[:40])
        names.append(log_hypervisor[:40])
    if sys_hypervisor:
        say("sys_hypervisor", "/sys/hypervisor/type: %s" % sys_hypervisor[:20])
        names.append(sys_hypervisor[:20].capitalize())
    d = next((n for w, n in DMI_WORDS.items() if dmi and w in dmi), None)
    if d:
        say("dmi", "DMI: %s" % dmi[:60])
        names.append(d)
    if cpu_flag is not None:
        guest = bool(cpu_flag)
    elif names:
        guest = True
    else:
        guest = None
    name = names[0] if guest and names else None
    kernel = (log_hypervisor or "")[:40]
    if name and kernel and not {w.lower() for w in name.split()} & {w.lower() for w in kernel.split()}:
        name = "%s (the kernel says %s)" % (name, kernel)  # a hypervisor that shows another's signature
    return {"guest": guest, "hypervisor": name, "evidence": ev}


def judge(guest, current, path=None, flags=None, vms=None):
    """(state, why): state "healthy", "degraded" or "unknown", why one
    sentence.  guest: machine()'s guest (None: not known, judged as a host,
    and said); current: the clocksource; path: where a CLOCK_MONOTONIC read
    is answered ("user", "syscall", None: not probed); flags: cpuinfo's TSC
    flags ({name: bool}, None: not read); vms: the KVM VMs this machine
    runs, each as whether it has the stable bit (True, False, None: not
    known; "booted_off": it booted while the host was off tsc), None when
    they were not looked at (then the machine is judged by its own clock
    alone, as with no VM).  A machine on tsc whose VMs lost the bit is
    degraded: they pay a syscall a read until healed."""
    state, why = _own(guest, current, path, flags)
    if not vms or not current:
        return state, why
    n = len(vms)
    lost = sum(1 for b in vms if b is False)
    booted = sum(1 for b in vms if b == "booted_off")
    running = "%d KVM VM%s" % (n, "" if n == 1 else "s")
    if current not in TSC_NAMES:
        if guest:
            return "degraded", ("a guest on %s, not tsc, that runs %s: KVM turns their master clock off and they "
                                "lose the stable bit (%d of %d without it now), whatever its own reads do (its own "
                                "clock: %s)" % (current, running, lost, n, why))
        return state, "%s (it runs %s, %d of them without the stable bit now)" % (why, running, lost)
    if lost:
        return "degraded", ("%d of the %s it runs lost the stable bit and %s a syscall per clock read: `clockbench "
                            "heal --yes` heals %s, a pause and resume each (KVM turns a VM's master clock back on "
                            "only when its clock is set again); its own clock: %s"
                            % (lost, running, "pays" if lost == 1 else "pay", "it" if lost == 1 else "them", why))
    if booted:
        return "degraded", ("%d of the %s it runs booted while the host was off tsc and read their clock by syscall "
                            "until rebooted from inside; its own clock: %s" % (booted, running, why))
    return state, why


def _own(guest, current, path, flags):
    """judge() of the machine's own clock, its VMs left out."""
    flags = flags or {}
    invariant = bool(flags.get("constant_tsc") and flags.get("nonstop_tsc"))
    if not current:
        return "unknown", "the clocksource was not read"
    if guest:
        if current in TSC_NAMES:
            if invariant:
                return "healthy", "a guest on tsc with an invariant TSC (constant_tsc, nonstop_tsc): reads in user space"
            return "degraded", "a guest on tsc without an invariant TSC (constant_tsc and nonstop_tsc not both set)"
        if current in PV_CLOCKS:
            if path == "user":
                return "healthy", ("a guest on %s (%s) whose reads stay in user space (the path probe: vDSO): "
                                   "the host gives it the stable bit" % (current, PV_CLOCKS[current]))
            if path == "syscall":
                return "degraded", ("a guest on %s whose reads are syscalls (the path probe): the host took "
                                    "the stable bit away (its own clocksource is not tsc, or its TSC is unstable)"
                                    % current)
            return "unknown", "a guest on %s: whether its reads stay in user space was not probed" % current
        return "degraded", "a guest on %s, neither a paravirtual clock nor tsc: every read is a device read" % current
    role = "a host" if guest is False else "a machine not known to be a guest or a host (judged as a host)"
    if current in TSC_NAMES:
        return "healthy", "%s on tsc" % role
    return "degraded", ("%s on %s, not tsc: its clock reads are syscalls and its KVM guests lose the master clock "
                        "and the stable bit" % (role, current))
