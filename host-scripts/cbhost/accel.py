"""accel.py: the accelerator choice: KVM when it really runs a guest, else TCG (every figure then EMULATED).

check(a) judges ACCEL as set, before anything boots; choose(a) decides
(ACCEL=auto boots the guest once under KVM, the KVM probe, within
PROBE_TIMEOUT) and sets a.accel, a.accel_note and a.cpu.  compare probes
once a run (--probe-only) and gives each step the answer (--probed).  The KVM probe
is not the engine's path probe (whether a clock read stays in user space).
"""
import os
import re
import shutil
import tempfile

from cbcontract.names import KVM_DEV
from . import boot, msg, qemu
from .msg import RunError, Usage


def kvm_dev():
    return os.environ.get("CB_KVM_DEV", KVM_DEV)  # a test hook (as the bracket's); QEMU opens the real one


def kvm_usable():
    d = kvm_dev()
    return os.path.exists(d) and os.access(d, os.R_OK | os.W_OK)


def check(a):
    """The accelerator as set: ACCEL=kvm needs a usable KVM device, the host
    CPU model needs KVM.  Usage."""
    kvm = kvm_dev()
    if a.ACCEL == "kvm" and not os.path.exists(kvm):
        raise Usage("--accel=kvm: %s: no such device (load kvm_intel or kvm_amd, or use --accel=tcg)" % kvm)
    if a.ACCEL == "kvm" and not os.access(kvm, os.R_OK | os.W_OK):
        raise Usage("--accel=kvm: %s: permission denied (join group kvm, or use --accel=tcg)" % kvm)
    if a.ACCEL == "tcg" and a.CPU and re.match(r"host(,|$)", a.CPU):
        raise Usage("--cpu=%s: the host model needs KVM; under TCG use max" % a.CPU)


def probe(a):
    """The KVM probe: boots the guest once under KVM with clockbench.probe=1
    within PROBE_TIMEOUT: (True, ms to /init) or (False, why not)."""
    work = tempfile.mkdtemp(prefix="clockbench-probe.")
    try:
        b = boot.boot(qemu.guest(a, "kvm", a.CPU or "host", work, [("probe", "1")]), work, a.PROBE_TIMEOUT, False)
    except RunError as e:
        return False, str(e)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if b["hello_ms"] is not None:
        return True, b["hello_ms"]
    if b["status"] in (124, 137):
        return False, "no guest /init within %ss under -accel kvm" % a.PROBE_TIMEOUT
    return False, "guest did not reach /init under -accel kvm (QEMU status %s)" % b["status"]


# QEMU's own words when KVM could not even create the VM (accel/kvm's
# init): any other failed probe had a VM that KVM created, and it never
# ran the guest's kernel to /init.
NO_VM = ("Could not access KVM kernel module", "KVM_CREATE_VM", "failed to initialize kvm")


def probe_note(why):
    """The reason a failed KVM probe gives, naming what failed: KVM that
    could not create the VM, or a KVM that created it and could not run
    this ordinary guest kernel (a nested KVM that aborts QEMU, or never
    reaches the kernel's first line)."""
    if any(w in why for w in NO_VM):
        return "KVM could not create a VM: %s" % why
    return "this KVM cannot run an ordinary guest kernel: %s" % why


# How a result's accelerator was decided (launcher.accel_decided):
# as set (--accel=kvm|tcg), by this launcher's own KVM probe (auto), or by
# the one probe of compare's run (--probed).
SET, PROBE, RUN_PROBE = "set", "probe", "run-probe"


def choose(a):
    """Sets a.accel, a.accel_note (auto's answer: why TCG, or how soon KVM
    reached /init), a.accel_requested, a.accel_decided and a.cpu, after
    check.  /dev/kvm alone proves nothing (a nested hypervisor may create
    the VM and never run the kernel), so auto boots the guest once under KVM
    and falls back to TCG, said once, whole.  With --probed (compare's: the
    accelerator its one --probe-only of the run decided, as --accel=kvm|tcg)
    nothing is probed or said again: the result records auto, the run's
    probe, and its answer."""
    a.accel_note, a.accel_requested = None, a.ACCEL
    kvm = kvm_dev()
    if a.probed is not None:
        a.accel, a.accel_requested, a.accel_decided, a.accel_note = a.ACCEL, "auto", RUN_PROBE, a.probed
    elif a.ACCEL in ("tcg", "kvm"):
        a.accel, a.accel_decided = a.ACCEL, SET
    else:
        a.accel_decided, why = PROBE, None
        if not os.path.exists(kvm):
            why = "no %s" % kvm
        elif not os.access(kvm, os.R_OK | os.W_OK):
            why = "%s: permission denied" % kvm
        else:
            good, what = probe(a)
            if good:
                a.accel_note = "the KVM probe's guest reached /init in %d ms" % what
                msg.note("%s: using KVM" % a.accel_note)
            else:
                why = probe_note(what)
        a.accel = "tcg" if why else "kvm"
        if why:
            a.accel_note = why
            # The whole reason, once, wrapped (the result records it too).
            msg.warn_wrapped("%s; using TCG: every figure EMULATED" % why)
    if a.accel == "tcg" and a.CPU and re.match(r"host(,|$)", a.CPU):
        raise RunError("--cpu=%s: the host model needs KVM, and --accel=auto fell back to TCG: use --cpu=max, or fix KVM"
                       % a.CPU)
    a.cpu = a.CPU or ("host" if a.accel == "kvm" else "max")
