"""kvmtrace.py: KVM's clock events in a tracefs instance of our own, and their summary (clockbench-kvm-trace/1).

An instance (instances/clockbench-<pid>, pid the owning process, so that
clean() can tell a stale one) never touches the host's other tracing.  stop()
saves the instance's `trace` text behind a few header lines of its own (the
buffer size and each CPU's ring-buffer stats), so that one file is the
whole evidence: summarize() reads the events, the launcher's window markers
and whether the kernel dropped any.  docs/run-folder.md has the schema.
"""
import errno
import gzip
import os
import re
import subprocess
import zlib

from cbanalysis.runfolder import SCHEMA_KVM_TRACE

# The one list of KVM's clock events (docs/harness.md says what each tells).
EVENTS = ("kvm_update_master_clock", "kvm_pvclock_update", "kvm_track_tsc", "kvm_write_tsc_offset")
PREFIX = "clockbench-"
PVCLOCK_TSC_STABLE_BIT = 0x1
STATS = "# clockbench-kvm-trace stats:"

# The numbers read as numbers have at most 20 digits (an unsigned long): a
# longer one is not tracefs's, and would pass int()'s digit limit or make an
# infinite float.
LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<tid>\d+)\s+(?:\(\s*(?P<tgid>\d{1,20}|-+)\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?:\S+\s+)?(?P<ts>\d{1,20}\.\d{1,20}):\s+(?P<event>\w+):\s+(?P<msg>.*)$")
MASTER = re.compile(r"masterclock (\d+) hostclock (\S+) offsetmatched (\d+)")
PVCLOCK = re.compile(r"vcpu_id (\d+), pvclock \{.*flags 0x([0-9a-fA-F]+)")
TRACK = re.compile(r"vcpu_id (\d+) masterclock (\d+) offsetmatched (\d+) nr_online (\d+) hostclock (\S+)")
OFFSET = re.compile(r"vcpu=(\d+) prev=(\d+) next=(\d+)")
MARK = re.compile(r"clockbench-window-(start|end)\b")
HEADER = re.compile(r"^#\s*entries-in-buffer/entries-written:\s*(\d{1,20})/(\d{1,20})")
LOST = re.compile(r"\[LOST (\d{1,20}) EVENTS\]")
KV = re.compile(r"\b(\w+)=(\d{1,20})(?!\d)")  # \b: a word is tried from its start only (linear)


class Unavailable(Exception):
    """Tracing is not possible here (not root, no tracefs, no kvm events): the reason."""


class TraceError(Exception):
    """A tracing step failed: one line naming the path."""


def tracefs():
    return os.environ.get("CB_TRACEFS", "/sys/kernel/tracing")


def instance(ident):
    return os.path.join(tracefs(), "instances", PREFIX + str(int(ident)))


def buffer_kb(ncpus=None):
    """The ring buffer per CPU, in KiB.  The lab's TSC-unstable state saw
    about 122,700 TSC-offset writes in one guest run, each with a pvclock
    update: about 100 bytes of ring per migration, 12 MiB in all, possibly
    on one CPU.  32 MiB per CPU holds 2.5 times that; past 8 CPUs the total
    is held to 256 MiB (the events then spread over more CPUs), never
    under 8 MiB per CPU.  stop() records whether anything was lost anyway."""
    n = ncpus or os.cpu_count() or 1
    return min(32768, max(8192, 262144 // n))


def _put(path, text):
    with open(path, "w") as f:
        f.write(text)


def start(ident):
    """Creates instances/clockbench-IDENT, enables EVENTS with the process
    id on each line (record-tgid), sizes its buffer; returns its folder.
    Raises Unavailable(reason) when this host cannot trace, TraceError when
    the instance exists."""
    tfs = tracefs()
    inst_dir = os.path.join(tfs, "instances")
    if not os.path.isdir(inst_dir):
        if os.geteuid() != 0:
            raise Unavailable("tracefs is not mounted and mounting it needs root")
        r = subprocess.run(["mount", "-t", "tracefs", "nodev", tfs], capture_output=True, text=True)
        if r.returncode != 0 or not os.path.isdir(inst_dir):
            raise Unavailable("cannot mount tracefs on %s" % tfs)
    if not os.access(inst_dir, os.W_OK):
        raise Unavailable("cannot create tracing instances in %s (needs root)" % inst_dir)
    for e in EVENTS:
        if not os.path.isdir(os.path.join(tfs, "events", "kvm", e)):
            raise Unavailable("tracepoint kvm/%s not found (is the kvm module loaded?)" % e)
    inst = instance(ident)
    try:
        os.mkdir(inst)
    except FileExistsError:
        raise TraceError("instance %s already exists" % inst)
    except OSError as e:
        raise Unavailable("mkdir %s: %s" % (inst, e.strerror))
    try:
        _put(os.path.join(inst, "options", "record-tgid"), "1")
        try:
            _put(os.path.join(inst, "buffer_size_kb"), str(buffer_kb()))
        except OSError:
            _put(os.path.join(inst, "buffer_size_kb"), "8192")  # short of memory: stop() says if it was too small
        for e in EVENTS:
            _put(os.path.join(inst, "events", "kvm", e, "enable"), "1")
    except BaseException as e:  # also an interrupt: the instance is never left half made
        _remove(inst)
        if isinstance(e, OSError):
            raise Unavailable("cannot set up %s: %s: %s" % (inst, e.filename, e.strerror))
        raise
    return inst


def discard(ident):
    """Removes instance IDENT if it is still there (an interrupted run's
    last step); True if there was one."""
    return _remove(instance(ident))


def _remove(inst):
    try:
        os.rmdir(inst)
        return True
    except OSError:
        return False


def _stats(inst):
    """The header lines stop() puts before the trace text: the buffer size
    and each CPU's ring-buffer counters (per_cpu/cpuN/stats)."""
    out = []
    try:
        with open(os.path.join(inst, "buffer_size_kb")) as f:
            out.append("%s buffer_size_kb=%s" % (STATS, f.read().split()[0]))
    except (OSError, IndexError):
        pass
    try:
        cpus = sorted((d for d in os.listdir(os.path.join(inst, "per_cpu")) if d.startswith("cpu")),
                      key=lambda d: int(d[3:]))
    except OSError:
        cpus = []
    for d in cpus:
        fields = {}
        try:
            with open(os.path.join(inst, "per_cpu", d, "stats")) as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if v.strip().isdigit():
                        fields[k.strip().replace(" ", "_")] = v.strip()
        except OSError:
            continue
        keep = ("entries", "overrun", "commit_overrun", "dropped_events")
        out.append("%s cpu=%s %s" % (STATS, d[3:], " ".join("%s=%s" % (k, fields[k]) for k in keep if k in fields)))
    return "".join(line + "\n" for line in out)


def stop(ident, out_path):
    """Stops instance IDENT, writes its ring-buffer stats and its trace
    text to out_path, and removes it (also when the write fails)."""
    inst = instance(ident)
    if not os.path.isdir(inst):
        raise TraceError("no instance %s" % inst)
    try:
        try:
            _put(os.path.join(inst, "tracing_on"), "0")
            head = _stats(inst)
            with open(os.path.join(inst, "trace"), "rb") as src, open(out_path, "wb") as dst:
                dst.write(head.encode())
                while True:
                    block = src.read(1 << 20)
                    if not block:
                        break
                    dst.write(block)
        except OSError as e:
            raise TraceError("%s: %s" % (e.filename or out_path, e.strerror))
    finally:
        if not _remove(inst):
            raise TraceError("rmdir %s: cannot remove it" % inst)


def clean():
    """Removes the instances of processes that are gone; returns them."""
    d = os.path.join(tracefs(), "instances")
    gone = []
    try:
        names = os.listdir(d)
    except OSError:
        return gone
    for n in names:
        pid = n[len(PREFIX):]
        if not n.startswith(PREFIX) or not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
            continue
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        if _remove(os.path.join(d, n)):
            gone.append(os.path.join(d, n))
    return gone


def read_lines(path):
    """The lines of a raw trace (plain or .gz); OSError as open's (a
    corrupt .gz too), EOFError for a cut one."""
    if path.endswith(".gz"):
        try:
            with gzip.open(path, "rt", errors="replace") as f:
                return f.readlines()
        except zlib.error as e:
            raise OSError(errno.EIO, "corrupt gzip data: %s" % e, path)
    with open(path, errors="replace") as f:
        return f.readlines()


def _counts(lines, tgid):
    """COUNTS of docs/run-folder.md for the KVM events in lines, keeping
    tgid's only (all when None)."""
    c = {"events": dict.fromkeys(EVENTS, 0),
         "master_clock": {"last": None, "on_updates": 0, "off_updates": 0, "transitions": 0,
                          "hostclock": None, "offset_matched": None},
         "stable_bit": {"with": 0, "without": 0, "all": None, "per_vcpu": {}},
         "pvclock_updates": 0, "pvclock_updates_per_vcpu": {},
         "tsc_offset_writes": 0, "tsc_offset_writes_per_vcpu": {}}
    mc, sb = c["master_clock"], c["stable_bit"]
    track_host = None
    for line in lines:
        if line.startswith("#"):
            continue
        m = LINE.match(line)
        if not m or m.group("event") not in c["events"]:
            continue
        if tgid is not None and m.group("tgid") != str(tgid):
            continue
        ev, msg = m.group("event"), m.group("msg")
        if ev == "kvm_update_master_clock" and (x := MASTER.search(msg)):
            on = x.group(1) == "1"
            if mc["last"] is not None and on != mc["last"]:
                mc["transitions"] += 1
            mc["on_updates" if on else "off_updates"] += 1
            mc["last"], mc["hostclock"], mc["offset_matched"] = on, x.group(2), x.group(3) == "1"
        elif ev == "kvm_pvclock_update" and (x := PVCLOCK.search(msg)):
            v, key = x.group(1), "with" if int(x.group(2), 16) & PVCLOCK_TSC_STABLE_BIT else "without"
            sb[key] += 1
            sb["per_vcpu"].setdefault(v, {"with": 0, "without": 0})[key] += 1
            c["pvclock_updates"] += 1
            c["pvclock_updates_per_vcpu"][v] = c["pvclock_updates_per_vcpu"].get(v, 0) + 1
        elif ev == "kvm_track_tsc" and (x := TRACK.search(msg)):
            track_host = x.group(5)
        elif ev == "kvm_write_tsc_offset" and (x := OFFSET.search(msg)):
            v = x.group(1)
            c["tsc_offset_writes"] += 1
            c["tsc_offset_writes_per_vcpu"][v] = c["tsc_offset_writes_per_vcpu"].get(v, 0) + 1
        else:
            continue
        c["events"][ev] += 1
    if mc["hostclock"] is None:
        mc["hostclock"] = track_host
    # Every update of every vCPU must have carried the bit, not the last one.
    sb["all"] = None if sb["with"] + sb["without"] == 0 else sb["without"] == 0
    return c


def _window(lines, tgid):
    """COUNTS between the launcher's markers (the first end marker and the
    start just before it), with available, reason and seconds."""
    start = end = None
    for i, line in enumerate(lines):
        m = LINE.match(line)
        if not m or m.group("event") != "tracing_mark_write":
            continue
        x = MARK.search(m.group("msg"))
        if x and x.group(1) == "start":
            start = (i, float(m.group("ts")))
        elif x and x.group(1) == "end" and start is not None:
            end = (i, float(m.group("ts")))
            break
    if start is None or end is None:
        return {"available": False, "reason": "no %s marker in the trace" % ("start" if start is None else "end"),
                "seconds": None}
    w = _counts(lines[start[0] + 1:end[0]], tgid)
    w.update(available=True, reason=None, seconds=round(end[1] - start[1], 6))
    return w


def _completeness(lines):
    """(complete, completeness) from the trace header's entries-in-buffer/
    entries-written, stop()'s per-CPU stats and [LOST N EVENTS] lines.
    complete is None when the trace carries no header to tell."""
    in_buf = written = None
    per_cpu, extra, lost_lines, size = {}, 0, 0, None
    for line in lines:
        if line.startswith(STATS):
            f = dict(KV.findall(line))
            if "buffer_size_kb" in f:
                size = int(f["buffer_size_kb"])
            if "cpu" in f:
                per_cpu[f["cpu"]] = int(f.get("overrun", 0))
                extra += int(f.get("commit_overrun", 0)) + int(f.get("dropped_events", 0))
            continue
        m = HEADER.match(line)
        if m:
            in_buf = (in_buf or 0) + int(m.group(1))
            written = (written or 0) + int(m.group(2))
            continue
        m = LOST.search(line)
        if m:
            lost_lines += int(m.group(1))
    overrun = sum(per_cpu.values()) if per_cpu else None
    c = {"entries_in_buffer": in_buf, "entries_written": written, "lost": None,
         "overrun": overrun, "overrun_per_cpu": per_cpu or None, "buffer_size_kb": size}
    if written is None and overrun is None:
        return None, c
    c["lost"] = max((written or 0) - (in_buf or 0), overrun or 0, lost_lines) + extra
    return c["lost"] == 0, c


def summarize(lines, tgid=None):
    """The summary of a raw trace for one QEMU process (tgid; None keeps
    every process): {tgid, complete, completeness, life, measuring} as in
    clockbench-kvm-trace/1."""
    lines = list(lines)
    complete, completeness = _completeness(lines)
    return {"tgid": tgid, "complete": complete, "completeness": completeness,
            "life": _counts(lines, tgid), "measuring": _window(lines, tgid)}


def tgids(lines):
    """The processes with KVM clock events, in order of appearance."""
    seen = []
    for line in lines:
        m = LINE.match(line)
        if m and m.group("event") in EVENTS and (m.group("tgid") or "").isdigit() and m.group("tgid") not in seen:
            seen.append(m.group("tgid"))
    return seen


def document(guest_result, lines=None, *, pid=None, subject=None, subject_text=None, trace_file=None,
             reason=None, window_reason=None):
    """The kvm-trace file beside guest_result (a file name).  Without lines
    (or with reason) it says why there is no trace.  pid: the QEMU process
    the trace is of; when it is missing from the trace, the only process
    with KVM events stands for it.  window_reason: why there is no
    measuring window (the observer VM does not measure)."""
    doc = {"schema": SCHEMA_KVM_TRACE, "guest_result": guest_result, "available": False, "reason": reason,
           "subject": None, "subject_text": None, "trace_file": trace_file, "tgid": None,
           "complete": None, "completeness": None, "life": None, "measuring": None}
    if lines is None or reason:
        doc["reason"] = reason or "not traced"
        return doc
    lines = list(lines)
    ids = tgids(lines)
    if pid is not None and str(pid) in ids:
        tgid = pid
    elif len(ids) == 1:
        tgid = int(ids[0])
    else:
        doc["reason"] = ("no KVM clock events during the run" if not ids else
                         "events from %d processes and none is the QEMU followed (pid %s)" % (len(ids), pid))
        return doc
    doc.update(summarize(lines, tgid))
    doc.update(available=True, subject=subject, subject_text=subject_text)
    if window_reason:
        doc["measuring"] = {"available": False, "reason": window_reason, "seconds": None}
    return doc
