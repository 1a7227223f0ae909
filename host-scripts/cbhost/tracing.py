"""tracing.py: the run's KVM trace: one tracefs instance at a time (cbhost.kvmtrace), the observer VM under TCG, and the trace files written once.

Under TCG the guest's QEMU has no KVM clock: with a usable /dev/kvm (and
OBSERVE=1) a short KVM VM of our own is traced instead, and the summary's
subject says so.
"""
import contextlib
import gzip
import json
import os

from cbcontract import runfolder
from . import accel, boot, kvmtrace, msg, qemu

RAW_GZIP_OVER = 1 << 20  # a raw trace larger than this is kept gzipped


class Tracer:
    """The run's KVM trace: one instance at a time, stopped on every path."""

    def __init__(self):
        self.ident, self.inst, self.why = os.getpid(), None, None

    def start(self):
        try:
            kvmtrace.clean()
            self.inst = kvmtrace.start(self.ident)
        except (kvmtrace.Unavailable, kvmtrace.TraceError) as e:
            self.why = str(e)
        return self.inst is not None

    def mark(self, what):
        """Writes clockbench-window-WHAT into the trace: the measuring window."""
        if self.inst:
            with contextlib.suppress(OSError), open(os.path.join(self.inst, "trace_marker"), "w") as f:
                f.write("clockbench-window-%s\n" % what)

    def stop(self, out):
        if self.inst:
            self.inst = None
            kvmtrace.stop(self.ident, out)


def observe(a, work, tracer):
    """Boots a short KVM VM (the guest's kernel, no initramfs) under its own
    trace, for KVM's clock when the guest itself ran under TCG.  Returns
    (raw trace path, its pid) or (None, why not)."""
    if not tracer.start():
        return None, tracer.why
    raw, pidfile = os.path.join(work, "observe.txt"), os.path.join(work, "observe.pid")
    try:
        boot.run_for(qemu.observer(a, pidfile), a.OBSERVE_SECONDS)
    finally:
        tracer.stop(raw)
    return raw, boot.read_pid(pidfile)


def place_raw(run_dir, name, src):
    """Writes a raw trace once into run_dir as name, gzipped (name.gz) when
    over RAW_GZIP_OVER, mode kvmtrace.RAW_MODE (it names every VM's
    processes on this host); returns the name written."""
    with open(src, "rb") as f:
        data = f.read()
    if len(data) > RAW_GZIP_OVER:
        name, data = name + ".gz", gzip.compress(data, 9, mtime=0)
    runfolder.write_once(os.path.join(run_dir, name), data, mode=kvmtrace.RAW_MODE)
    return name


def write(a, run_dir, names, work, raw, pid, tracer):
    """Writes the raw trace(s) and kvm-trace-<cs>-<N>vcpu.json, once (raw:
    the guest's raw trace, or None when it was not traced)."""
    try:
        doc = _document(a, run_dir, names, work, raw, pid, tracer)
    except (OSError, EOFError, kvmtrace.TraceError) as e:
        # An unreadable raw trace costs the trace's facts, not the run.
        doc = kvmtrace.document(names["guest"], reason="raw trace unreadable: %s" % (getattr(e, "strerror", None) or e))
    runfolder.write_once(os.path.join(run_dir, names["trace"]), json.dumps(doc, indent=1) + "\n")


def _document(a, run_dir, names, work, raw, pid, tracer):
    """write's document: the raw traces placed, then summarised."""
    if not raw:
        return kvmtrace.document(names["guest"], reason=tracer.why or "not traced")
    kept = place_raw(run_dir, names["raw"], raw)
    lines = kvmtrace.read_lines(raw)
    if a.accel == "kvm":
        return kvmtrace.document(names["guest"], lines, pid=pid, subject="guest",
                                 subject_text="the guest's QEMU process", trace_file=kept)
    if a.OBSERVE and accel.kvm_usable():
        msg.note("guest ran under %s: observing KVM's clock with a %d s KVM VM" % (a.accel, a.OBSERVE_SECONDS))
        obs, opid = observe(a, work, tracer)
        if obs is None:
            return kvmtrace.document(names["guest"], reason="observer VM not traced: %s" % opid)
        return kvmtrace.document(
            names["guest"], kvmtrace.read_lines(obs), pid=opid, subject="observer",
            subject_text="a short KVM VM clockbench booted on this host only to observe KVM's clock "
                         "(the guest itself ran under %s)" % a.accel,
            trace_file=place_raw(run_dir, names["observe"], obs),
            window_reason="the KVM VM observed does not measure: the guest ran under %s" % a.accel)
    why = "OBSERVE=0" if not a.OBSERVE else "%s is not usable" % accel.kvm_dev()
    return kvmtrace.document(names["guest"], trace_file=kept,
                             reason="the guest ran under %s, so its QEMU has no KVM clock, and no observer "
                                    "VM was booted (%s)" % (a.accel, why))
