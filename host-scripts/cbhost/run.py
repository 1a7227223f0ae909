"""run.py: one guest run: boot (QEMU or libvirt) under the KVM trace, judge QEMU's exit status, read the result frame, write the files.

run(a) takes checked settings with the accelerator chosen (preflight.check,
accel.choose) and returns the result's path, or raises RunError with the
best reason known (the guest's error frame first).
"""
import datetime
import os
import shutil
import tempfile

from cbcontract import names
from . import boot, frames, libvirt, msg, qemu, result, tracing
from .msg import RunError

def run(a):
    cs = result.label(a)
    names = result.names(a, cs)
    result.check_free(a, names)  # again: the KVM probe took seconds since preflight's
    host = result.host_facts()
    work = tempfile.mkdtemp(prefix="clockbench-guest.")
    a.console = os.path.join(work, "console.log")
    append = qemu.kernel_append(a, a.params)
    tracer = tracing.Tracer()
    traced = a.trace and tracer.start()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    raw = os.path.join(work, "trace.txt")
    try:
        b = _boot(a, work, append, tracer)
    finally:
        tracer.stop(raw)
    check_status(b, a.TIMEOUT, work)
    try:
        doc = frames.result(frames.parse(b["data"]))
    except frames.FrameError as e:
        panic = console_panic(work)
        raise RunError("guest panic: %s" % panic if panic else str(e))
    host["clocksource_end"] = result.read_text(result.CS_DIR + "current_clocksource")
    out = result.document(a, doc, b, host, cs, names, append, started)
    run_dir, path = result.write(a, names, a.console, out)
    if a.trace:
        tracing.write(a, run_dir, names, work, traced and raw, b.get("pid"), tracer)
    shutil.rmtree(work, ignore_errors=True)
    return path


def _boot(a, work, append, tracer):
    """The guest booted by the backend set, the trace marked at the
    guest's hello and at the end of its result frame (the measuring
    window); the boot record."""
    start, end = (lambda: tracer.mark("start")), (lambda: tracer.mark("end"))
    if a.BACKEND == "libvirt":
        return libvirt.boot(a, a.accel, work, a.TIMEOUT, a.PIN, append, start, end)
    return boot.boot(qemu.guest(a, a.accel, a.cpu, work, a.params), work, a.TIMEOUT, a.PIN, start, end, msg.warn)


def guest_exits():
    """{QEMU status: (name, code, meaning)} of the guest's exit codes, from
    cbcontract.names (the Python side's one list; guest-init/exit-codes.h
    is the C side's, held to it by tests/contract/names.t)."""
    return {st: (name, code, meaning) for name, (code, st, meaning) in names.GUEST_EXITS.items()}


def explain(status):
    """What a QEMU exit status means, in words (the guest's codes and
    timeout(1)'s); None for an unknown one."""
    return names.guest_exit(status)


def console_panic(work):
    for line in (result.read_text(os.path.join(work, "console.log")) or "").splitlines():
        if "Kernel panic" in line:
            return line.strip()
    return None


def check_status(b, timeout, work):
    """Raises RunError for an exit status that means failure, with the best
    reason known (the guest's error frame first)."""
    rc = b["status"]
    if rc in (None, 0):
        return
    if rc in (124, 137):
        raise RunError("guest timed out after %ss%s" % (
            timeout, "" if b["hello_ms"] is None else " (init started at %d ms)" % b["hello_ms"]))
    meaning = explain(rc)
    if meaning:
        try:
            frames.result(frames.parse(b["data"]))
        except frames.FrameError as e:
            raise RunError("%s (QEMU status %d): %s" % (meaning, rc, e))
        raise RunError("%s (QEMU status %d)" % (meaning, rc))
    raise RunError("QEMU exited with status %d: %s" % (rc, boot.last_line(os.path.join(work, "qemu.log"))
                                                       or "no message"))
