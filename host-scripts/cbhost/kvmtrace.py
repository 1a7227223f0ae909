"""kvmtrace.py: KVM's clock events in a tracefs instance of our own, and their summary (clockbench-kvm-trace/1).

An instance (instances/clockbench-<pid>, pid the owning process, so that
clean() can tell a stale one) never touches the host's other tracing.  stop()
saves the instance's `trace` text behind a few header lines of its own (the
buffer size and each CPU's ring-buffer stats), so that one file is the
whole evidence: summarize() reads the events, the launcher's window markers
and whether the kernel dropped any.  docs/run-folder.md has the schema.

A trace is untrusted text (a run folder fetched from another host): its
reading is linear and bounded (MAX_LINE, MAX_TRACE, streamed; docs/harness.md),
and the raw trace, which names every VM's processes on the host, is written
RAW_MODE.
"""
import contextlib
import errno
import gzip
import os
import re
import shutil
import stat
import subprocess
import zlib

from cbcontract.runfolder import SCHEMA_KVM_TRACE
from cbcontract.util import cut  # a value quoted in an error: the one helper

# The one list of KVM's clock events (docs/harness.md says what each tells).
EVENTS = ("kvm_update_master_clock", "kvm_pvclock_update", "kvm_track_tsc", "kvm_write_tsc_offset")
PREFIX = "clockbench-"
PVCLOCK_TSC_STABLE_BIT = 0x1
STATS = "# clockbench-kvm-trace stats:"

# Every pattern is linear: anchored or led by a literal, no unbounded
# repetition followed by anything that can make it give back what it took
# (`\{.*flags` was quadratic in a line of repeated prefixes), ASCII digits
# only (str.isdigit and \d take "²" or "٣").  The numbers read as numbers
# have at most 20 digits (an unsigned long): a longer one is not tracefs's,
# and would pass int()'s digit limit or make an infinite float.
NUM = re.compile(r"[0-9]{1,20}")
U64 = (1 << 64) - 1  # a sum past it is held there (the loader reads no larger number)
HEAD = re.compile(r"-([0-9]{1,10}) +(?:\( *([0-9]{1,20}|-{1,20})\) +)?\[([0-9]{1,10})\] ")
TAIL = re.compile(r" *(?:[^ ]{1,32} +)?([0-9]{1,20}\.[0-9]{1,20}): ([A-Za-z0-9_]{1,64}): +")
MASTER = re.compile(r"masterclock ([0-9]{1,20}) hostclock ([^ ]{1,64}) offsetmatched ([0-9]{1,20})")
PVCLOCK = re.compile(r"vcpu_id ([0-9]{1,10}), pvclock \{")
FLAGS = " flags 0x"
HEX = re.compile(r"[0-9a-fA-F]+")  # nothing after it: it gives nothing back
TRACK = re.compile(r"vcpu_id ([0-9]{1,10}) masterclock ([0-9]{1,20}) offsetmatched ([0-9]{1,20}) "
                   r"nr_online ([0-9]{1,10}) hostclock ([^ ]{1,64})")
OFFSET = re.compile(r"vcpu=([0-9]{1,10}) prev=([0-9]{1,20}) next=([0-9]{1,20})")
MARK = re.compile(r"clockbench-window-(start|end)\b")
HEADER = re.compile(r"#[ \t]*entries-in-buffer/entries-written:[ \t]*([0-9]{1,20})/([0-9]{1,20})")
LOST = re.compile(r"\[LOST ([0-9]{1,20}) EVENTS\]")
KV = re.compile(r"\b([A-Za-z0-9_]{1,64})=([0-9]{1,20})(?![0-9])", re.ASCII)  # \b: a word from its start only

# Bounds on a raw trace (docs/harness.md).  Its lines are at most 222
# characters (results/*/kvm-*.txt); a longer one than MAX_LINE, newline
# included, is skipped and counted (completeness.skipped_lines).  The
# largest ring buffer start() sets up, 256 MiB, is some 900 MiB as text (a
# pvclock update: 56 bytes of ring, 200 of text): a trace may hold MAX_TRACE
# bytes, decompressed, and read_lines() refuses a longer one (a gzip bomb).
MAX_LINE = 4096
MAX_TRACE = 1 << 30
LONG = "#" * (MAX_LINE + 1)  # what read_lines() yields for a line it skipped
# The raw trace records every VM on the host (other users' QEMU processes,
# by pid and thread name): readable by its owner and group only.
RAW_MODE = 0o640


def number(text):
    """text as a whole number when it is 1-20 ASCII digits and at most
    U64, else None."""
    if isinstance(text, str) and NUM.fullmatch(text) and int(text) <= U64:
        return int(text)
    return None


class Unavailable(Exception):
    """Tracing is not possible here (not root, no tracefs, no kvm events): the reason."""


class TraceError(Exception):
    """A tracing step failed: one line naming the path."""


def tracefs():
    return os.environ.get("CB_TRACEFS", "/sys/kernel/tracing")


def instance(ident):
    """The folder of instance IDENT (a process id: ASCII digits, TraceError
    otherwise)."""
    pid = number(str(ident))
    if pid is None:
        raise TraceError("instance id %s: expected a process id" % cut(ident))
    return os.path.join(tracefs(), "instances", PREFIX + str(pid))


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


def start(ident, kb=None):
    """Creates instances/clockbench-IDENT, enables EVENTS with the process
    id on each line (record-tgid), sizes its buffer (kb KiB per CPU, else
    buffer_kb()'s: a reader that drains it as it goes needs far less);
    returns its folder.
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
            _put(os.path.join(inst, "buffer_size_kb"), str(kb or buffer_kb()))
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
    with contextlib.suppress(OSError, IndexError), open(os.path.join(inst, "buffer_size_kb")) as f:
        out.append("%s buffer_size_kb=%s" % (STATS, f.read().split()[0]))
    try:
        cpus = sorted((d for d in os.listdir(os.path.join(inst, "per_cpu"))
                       if d.startswith("cpu") and number(d[3:]) is not None), key=lambda d: number(d[3:]))
    except OSError:
        cpus = []
    for d in cpus:
        fields = {}
        try:
            with open(os.path.join(inst, "per_cpu", d, "stats")) as f:
                for line in f:
                    k, _, v = line.partition(":")
                    if number(v.strip()) is not None:
                        fields[k.strip().replace(" ", "_")] = v.strip()
        except OSError:
            continue
        keep = ("entries", "overrun", "commit_overrun", "dropped_events")
        out.append("%s cpu=%s %s" % (STATS, d[3:], " ".join("%s=%s" % (k, fields[k]) for k in keep if k in fields)))
    return "".join(line + "\n" for line in out)


def stop(ident, out_path):
    """Stops instance IDENT, writes its ring-buffer stats and its trace
    text to out_path, a new file of mode RAW_MODE (never one that exists,
    nor through a symlink), and removes the instance (also when the write
    fails)."""
    inst = instance(ident)
    if not os.path.isdir(inst):
        raise TraceError("no instance %s" % inst)
    try:
        try:
            _put(os.path.join(inst, "tracing_on"), "0")
            head = _stats(inst)
            with open(os.path.join(inst, "trace"), "rb") as src:
                fd = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, RAW_MODE)
                with os.fdopen(fd, "wb") as dst:
                    os.fchmod(fd, RAW_MODE)  # whatever the umask: the descriptor, never the name
                    dst.write(head.encode())
                    shutil.copyfileobj(src, dst, 1 << 20)
        except OSError as e:
            raise TraceError("%s: %s" % (cut(e.filename or out_path), e.strerror))
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
        pid = number(n[len(PREFIX):])
        if not n.startswith(PREFIX) or pid is None:
            continue
        try:
            os.kill(pid, 0)
            continue
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        if _remove(os.path.join(d, n)):
            gone.append(os.path.join(d, n))
    return gone


def read_lines(path):
    """The lines of a raw trace (plain or .gz, a regular file), read once
    now to check it and streamed again on each pass over them: a line over
    MAX_LINE bytes comes as LONG, the rest of it unread.  OSError as open's
    (EFBIG past MAX_TRACE bytes decompressed, EIO for a corrupt .gz, EINVAL
    for a FIFO or device), EOFError for a cut .gz."""
    lines = Lines(path)
    for _ in lines:
        pass
    return lines


class Lines:
    """The lines of a trace file, streamed: each iteration reads it anew."""

    def __init__(self, path):
        self.path = path

    def __iter__(self):
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        with os.fdopen(fd, "rb", 1 << 20) as raw:  # the file read a MiB at a time
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(errno.EINVAL, "not a regular file", self.path)
            if not self.path.endswith(".gz"):
                yield from _split(raw, self.path)
                return
            try:
                with gzip.GzipFile(fileobj=raw, mode="rb") as f:
                    yield from _split(f, self.path)
            except zlib.error as e:
                raise OSError(errno.EIO, "corrupt gzip data: %s" % e, self.path)


def _split(f, path):
    """The lines of binary stream f as text (bad UTF-8 replaced), LONG for
    each over MAX_LINE bytes (its newline included); OSError(EFBIG) past
    MAX_TRACE bytes.  Read a line at a time, never more than MAX_LINE + 1
    bytes of it (f's buffer aside): the rest of a longer line is read past,
    not held."""
    total, long = 0, False
    while True:
        line = f.readline(MAX_LINE + 1)
        total += len(line)
        if total > MAX_TRACE:
            raise OSError(errno.EFBIG, "over %d MiB of trace text%s: refused" % (
                MAX_TRACE >> 20, " (decompressed)" if path.endswith(".gz") else ""), path)
        if not line:
            break
        if not line.endswith(b"\n") and (long or len(line) > MAX_LINE):
            long = True  # a line over MAX_LINE: read on to its end
        elif long or len(line) > MAX_LINE:
            long = False
            yield LONG
        else:
            yield line.decode("utf-8", "replace")
    if long:
        yield LONG


def fields(line):
    """(tgid or None, ts, event, msg) of a trace event line, or None: in
    time linear in the line (the thread name before "-TID" may hold spaces
    and dashes, "CPU 0/KVM-8164"; the tgid column is there with
    record-tgid)."""
    if len(line) > MAX_LINE:
        return None
    h = HEAD.search(line)
    if not h:
        return None
    m = TAIL.match(line, h.end())
    if not m:
        return None
    tgid = h.group(2)
    return (tgid if tgid and tgid[0] != "-" else None), m.group(1), m.group(2), line[m.end():].rstrip("\n")


def events(lines):
    """(tgid or None, ts, event, msg) of each event line of a trace
    (fields()); '#' lines and lines that are no event skipped."""
    for line in lines:
        if not line.startswith("#"):
            f = fields(line)
            if f is not None:
                yield f


class Counts:
    """COUNTS of docs/run-folder.md, an event at a time."""

    def __init__(self):
        self.c = {"events": dict.fromkeys(EVENTS, 0),
                  "master_clock": {"last": None, "on_updates": 0, "off_updates": 0, "transitions": 0,
                                   "hostclock": None, "offset_matched": None},
                  "stable_bit": {"with": 0, "without": 0, "all": None, "per_vcpu": {}},
                  "pvclock_updates": 0, "pvclock_updates_per_vcpu": {},
                  "tsc_offset_writes": 0, "tsc_offset_writes_per_vcpu": {}}
        self.track_host = None

    def add(self, ev, msg):
        """Counts event ev (one of EVENTS) whose message is msg, when the
        message reads as that event's."""
        c = self.c
        mc, sb = c["master_clock"], c["stable_bit"]
        if ev == "kvm_update_master_clock" and (x := MASTER.search(msg)):
            on = x.group(1) == "1"
            if mc["last"] is not None and on != mc["last"]:
                mc["transitions"] += 1
            mc["on_updates" if on else "off_updates"] += 1
            mc["last"], mc["hostclock"], mc["offset_matched"] = on, x.group(2), x.group(3) == "1"
        elif ev == "kvm_pvclock_update" and (x := PVCLOCK.search(msg)) \
                and (f := msg.rfind(FLAGS, x.end())) >= 0 and (h := HEX.match(msg, f + len(FLAGS))):
            # The last " flags 0x" of the line, as `\{.*flags` found it; its
            # last hex digit carries the bit.
            v, key = x.group(1), "with" if int(h.group()[-1], 16) & PVCLOCK_TSC_STABLE_BIT else "without"
            sb[key] += 1
            sb["per_vcpu"].setdefault(v, {"with": 0, "without": 0})[key] += 1
            c["pvclock_updates"] += 1
            c["pvclock_updates_per_vcpu"][v] = c["pvclock_updates_per_vcpu"].get(v, 0) + 1
        elif ev == "kvm_track_tsc" and (x := TRACK.search(msg)):
            self.track_host = x.group(5)
        elif ev == "kvm_write_tsc_offset" and (x := OFFSET.search(msg)):
            v = x.group(1)
            c["tsc_offset_writes"] += 1
            c["tsc_offset_writes_per_vcpu"][v] = c["tsc_offset_writes_per_vcpu"].get(v, 0) + 1
        else:
            return
        c["events"][ev] += 1

    def done(self):
        c = self.c
        if c["master_clock"]["hostclock"] is None:
            c["master_clock"]["hostclock"] = self.track_host
        sb = c["stable_bit"]
        # Every update of every vCPU must have carried the bit, not the last one.
        sb["all"] = None if sb["with"] + sb["without"] == 0 else sb["without"] == 0
        return c


class Completeness:
    """(complete, completeness) from the trace header's entries-in-buffer/
    entries-written, stop()'s per-CPU stats, [LOST N EVENTS] lines and the
    lines skipped as too long; complete is None when the trace carries no
    header to tell (and no line was skipped)."""

    def __init__(self):
        self.in_buf = self.written = self.size = None
        self.per_cpu, self.extra, self.lost_lines, self.skipped = {}, 0, 0, 0

    def add(self, line):
        if line.startswith(STATS):
            f = {k: int(v) for k, v in KV.findall(line) if int(v) <= U64}
            if "buffer_size_kb" in f:
                self.size = f["buffer_size_kb"]
            if "cpu" in f:
                self.per_cpu[str(f["cpu"])] = f.get("overrun", 0)
                self.extra += f.get("commit_overrun", 0) + f.get("dropped_events", 0)
            return
        m = HEADER.match(line)
        if m:
            a, b = int(m.group(1)), int(m.group(2))
            if a <= U64 and b <= U64:
                self.in_buf = (self.in_buf or 0) + a
                self.written = (self.written or 0) + b
            return
        m = LOST.search(line)
        if m:
            self.lost_lines += int(m.group(1))

    def done(self):
        per_cpu = {k: min(v, U64) for k, v in self.per_cpu.items()}
        written, in_buf = (None if x is None else min(x, U64) for x in (self.written, self.in_buf))
        overrun = min(sum(per_cpu.values()), U64) if per_cpu else None
        c = {"entries_in_buffer": in_buf, "entries_written": written, "lost": None,
             "overrun": overrun, "overrun_per_cpu": per_cpu or None, "buffer_size_kb": self.size,
             "skipped_lines": self.skipped}
        if written is None and overrun is None:
            return (False if self.skipped else None), c
        c["lost"] = min(max((written or 0) - (in_buf or 0), overrun or 0, self.lost_lines) + self.extra, U64)
        return c["lost"] == 0 and not self.skipped, c


def _lines(lines):
    """lines as something to read more than once (a one-shot iterator is
    kept in a list; read_lines()'s Lines and a list are read again)."""
    return list(lines) if iter(lines) is lines else lines


def summarize(lines, tgid=None):
    """The summary of a raw trace for one QEMU process (tgid; None keeps
    every process): {tgid, complete, completeness, life, measuring} as in
    clockbench-kvm-trace/1.  One pass, linear in the text.  measuring: the
    counts between the first end marker and the start just before it."""
    comp, life, win = Completeness(), Counts(), None
    start = end = None
    want = None if tgid is None else str(tgid)
    for line in lines:
        if len(line) > MAX_LINE:
            comp.skipped += 1
            continue
        comp.add(line)
        if line.startswith("#"):
            continue
        f = fields(line)
        if f is None:
            continue
        tg, ts, ev, msg = f
        if ev == "tracing_mark_write":
            x = MARK.search(msg) if end is None else None
            if x and x.group(1) == "start":
                start, win = float(ts), Counts()
            elif x and x.group(1) == "end" and start is not None:
                end = float(ts)
            continue
        if ev not in life.c["events"] or (want is not None and tg != want):
            continue
        life.add(ev, msg)
        if win is not None and end is None:
            win.add(ev, msg)
    complete, completeness = comp.done()
    if end is None:
        w = {"available": False, "reason": "no %s marker in the trace" % ("start" if start is None else "end"),
             "seconds": None}
    else:
        w = win.done()
        w.update(available=True, reason=None, seconds=round(end - start, 6))
    return {"tgid": tgid, "complete": complete, "completeness": completeness, "life": life.done(), "measuring": w}


def tgids(lines):
    """The processes with KVM clock events, in order of appearance."""
    seen = {}
    for line in lines:
        f = fields(line) if not line.startswith("#") else None
        if f and f[2] in EVENTS and f[0] is not None:
            seen.setdefault(f[0], None)
    return list(seen)


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
    lines = _lines(lines)
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
