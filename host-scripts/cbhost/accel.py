"""accel.py: the accelerator choice: KVM when it really runs a guest, else TCG (every figure then EMULATED).

check(a) judges ACCEL as set, before anything boots; choose(a) decides
(ACCEL=auto boots the guest once under KVM, the KVM probe, within
PROBE_TIMEOUT) and sets a.accel, a.accel_note and a.cpu.  The KVM probe
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


def choose(a):
    """Sets a.accel, a.accel_note and a.cpu, after check.  /dev/kvm alone
    proves nothing (a nested hypervisor may create the VM and never run the
    kernel), so auto boots the guest once under KVM and falls back to TCG."""
    a.accel_note = None
    kvm = kvm_dev()
    if a.ACCEL in ("tcg", "kvm"):
        a.accel = a.ACCEL
    else:
        if not os.path.exists(kvm):
            a.accel_note = "no %s" % kvm
        elif not os.access(kvm, os.R_OK | os.W_OK):
            a.accel_note = "%s: permission denied" % kvm
        else:
            good, what = probe(a)
            if good:
                msg.note("KVM probe: guest reached /init in %d ms: using KVM" % what)
            else:
                a.accel_note = "KVM probe failed: %s" % what
        a.accel = "tcg" if a.accel_note else "kvm"
        if a.accel_note:
            # One terminal line: the whole reason is in the result
            # (launcher.accel_note).
            tail = "; using TCG: every figure EMULATED"
            room = 100 - len("%s: warning: " % msg.PROG) - len(tail)
            why = a.accel_note if len(a.accel_note) <= room else a.accel_note[:room - 3] + "..."
            msg.warn(why + tail)
    if a.accel == "tcg" and a.CPU and re.match(r"host(,|$)", a.CPU):
        raise RunError("--cpu=%s: the host model needs KVM, and --accel=auto fell back to TCG: use --cpu=max, or fix KVM"
                       % a.CPU)
    a.cpu = a.CPU or ("host" if a.accel == "kvm" else "max")
