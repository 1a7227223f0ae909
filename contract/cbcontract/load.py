"""load.py: the one reader of result files: host, guest and KVM trace files into Measurements, strictly.

File names are recognized only through runfolder (its patterns).  It
reads today's shape of each schema and no other.  Strict on what the
figures and verdicts depend on (the schema strings, the clockbench/1
document and its rows, the KVM trace counts); tolerant of the guest's and
launcher's facts, which are shown as "n/a" when missing.
"""
import errno
import json
import math
import os
import stat

from . import runfolder
from . import names
from .names import HEADLINE_CLOCK, QUANTILES
from .util import SURROGATE, InputError, bounded, cut, is_num, obj

HOST_SCHEMA = runfolder.SCHEMA_HOST
GUEST_SCHEMA = runfolder.SCHEMA_GUEST
TRACE_SCHEMA = runfolder.SCHEMA_KVM_TRACE
TCG_SIGNATURE = "TCGTCGTCGTCG"  # CPUID 0x40000000 under QEMU's TCG
QUANTS = QUANTILES


class Row:
    """One clock x method x threads cell of a clockbench/1 document.
    clocksource: the kernel's clocksource read right after the cell (None
    unknown); raw: the quantiles before the overhead was subtracted (None
    unknown); below: the quantiles whose subtraction went negative (null in
    ns).  A syscall row's kernel_read: its median less null_median, the
    median of null calls timed beside it (None when unknown: null not
    measured, or kernel_read_negative, the subtraction having gone
    negative)."""

    __slots__ = ("clock", "method", "threads", "path", "ns", "cps_total", "clocksource", "raw", "below",
                 "null_median", "kernel_read", "kernel_read_negative")

    def __init__(self, clock, method, threads, path, ns, cps_total, clocksource=None, raw=None, below=(),
                 null_median=None, kernel_read=None, kernel_read_negative=False):
        self.clock, self.method, self.threads, self.path = clock, method, threads, path
        self.ns, self.cps_total = ns, cps_total
        self.clocksource, self.raw, self.below = clocksource, raw, tuple(below)
        self.null_median, self.kernel_read = null_median, kernel_read
        self.kernel_read_negative = kernel_read_negative

    @property
    def median(self):
        return self.ns.get("median")

    @property
    def p99(self):
        return self.ns.get("p99")


# The workloads (docs/schema.md, workloads[]): each one's headline unit,
# and whether it measures latency.
WORKLOAD_UNITS = {w.name: w.unit for w in names.WORKLOADS}
WORKLOADS = tuple(WORKLOAD_UNITS)


class Workload:
    """One row of workloads[]: a workload run for `seconds`, its headline
    `rate` in `rate_unit` (higher is better), latency_us its latency
    quantiles in microseconds ({min..max}, floats) or None (tcp-stream);
    clocksource the kernel's read right after it (None unknown),
    after_change as for cost rows; doc the row as written (its
    workload-specific counts: msg_bytes, bytes, transactions, interval_us,
    wakeups, overruns)."""

    __slots__ = ("workload", "threads", "cpus", "seconds", "clocksource", "after_change", "rate", "rate_unit",
                 "latency_us", "doc")

    def __init__(self, workload, threads, cpus, seconds, clocksource, after_change, rate, rate_unit, latency_us, doc):
        self.workload, self.threads, self.cpus, self.seconds = workload, threads, cpus, seconds
        self.clocksource, self.after_change = clocksource, after_change
        self.rate, self.rate_unit, self.latency_us, self.doc = rate, rate_unit, latency_us, doc

    def latency(self, q):
        """A latency quantile in microseconds, None without latency."""
        return self.latency_us.get(q) if self.latency_us else None


class Measurement:
    """One clockbench/1 document: a host file, the bench inside a guest
    file, or a TSC rate check run beside the host bench (kind "tsc-rate",
    no cost rows), with what is known about where it ran.  workloads: its
    Workload rows ([] when none was run); tsc_rate: its checks.tsc_rate
    object, validated (None when not run).  The machine's facts (kernel,
    cpus_online, ...) are the engine's context's; None where it lacks one."""

    def __init__(self, path, kind, run, doc, host_cs, vcpus=None, guest=None, launcher=None,
                 trace=None, backend=None, where="results"):
        self.path, self.kind, self.run, self.doc = path, kind, run, doc
        self.host_cs, self.vcpus = host_cs, vcpus
        self.guest, self.launcher, self.trace = guest or {}, launcher or {}, trace
        self.backend = backend
        self.host_emulated = False  # a guest of an emulated hypervisor (set by load_run)
        self.context = doc.get("context") or {}
        self.rows = parse_rows(path, doc.get("results"), where)
        pre = where.rsplit(".", 1)[0] + "." if "." in where else ""
        check_extras(path, doc, pre)
        self.workloads = parse_workloads(path, doc.get("workloads"), pre + "workloads")
        self.tsc_rate = parse_tsc_rate(path, obj(doc, "checks").get("tsc_rate"), pre + "checks.tsc_rate")

    @property
    def emulated(self):
        """TCG anywhere under it: an emulated host (the lab's L1), a guest
        under TCG, or a KVM guest of an emulated host."""
        if self.kind != "guest":
            return self.hypervisor == TCG_SIGNATURE
        la = self.launcher
        return (bool(la.get("emulated")) or la.get("accel") == "tcg" or self.hypervisor == TCG_SIGNATURE
                or self.host_emulated)

    def _text(self, key):
        """The context's key if it is a string, not empty; else None."""
        v = self.context.get(key)
        return v if isinstance(v, str) and v else None

    @property
    def kernel(self):
        return self._text("kernel")

    @property
    def cpus_online(self):
        v = self.context.get("cpus_online")
        return v if type(v) is int else None

    @property
    def clocksource_after(self):
        """The machine's clocksource as the engine left it: context.clocksource_end,
        else the one the engine read at its start; None unknown."""
        return self._text("clocksource_end") or self._text("clocksource")

    @property
    def clocksource_before(self):
        """A guest's clocksource when its PID 1 started, before the engine."""
        v = self.guest.get("clocksource_before")
        return v if isinstance(v, str) else None

    @property
    def available_clocksources(self):
        """The kernel's available clocksources, a list, or None."""
        v = self.context.get("available_clocksource")
        return [w for w in v if isinstance(w, str)] if isinstance(v, list) else None

    @property
    def hypervisor(self):
        """The CPUID 0x40000000 signature (KVMKVMKVM, TCGTCGTCGTCG...), None on bare metal or unknown."""
        return self._text("hypervisor")

    @property
    def invtsc(self):
        """CPUID's invariant TSC bit: True, False, None unknown."""
        fl = self.context.get("cpu_flags")
        return fl["invtsc_cpuid"] if isinstance(fl, dict) and isinstance(fl.get("invtsc_cpuid"), bool) else None

    def _kvm(self):
        """(known, CPUID 0x40000001 eax or None without KVM's leaf)."""
        if "kvm_features" not in self.context:
            return False, None
        kf = self.context["kvm_features"]
        return True, kf.get("eax") if isinstance(kf, dict) and is_num(kf.get("eax")) else None

    @property
    def kvmclock_advertised(self):
        """KVM's leaf advertises kvm-clock (eax bit 0 or 3): True, False
        (also without KVM's leaf), None unknown."""
        known, eax = self._kvm()
        return None if not known else eax is not None and bool(int(eax) & 0x9)

    @property
    def stable_bit_advertised(self):
        """KVM's leaf advertises PVCLOCK_TSC_STABLE_BIT (eax bit 24): True,
        False, None without KVM's leaf or unknown."""
        known, eax = self._kvm()
        return None if eax is None else bool(int(eax) >> 24 & 1)

    @property
    def guest_log(self):
        """The guest kernel log's facts ({} for a host or when missing)."""
        return obj(self.guest, "log")

    @property
    def accel(self):
        if self.kind != "guest":
            return None
        return self.launcher.get("accel") or "n/a"

    @property
    def where(self):
        """'host' (a tsc-rate file too), or 'guest 2 vCPU' (with the backend when not QEMU)."""
        if self.kind != "guest":
            return "host"
        s = "guest %s vCPU" % self.vcpus
        if self.backend and self.backend != "qemu":
            s += " (%s)" % self.backend
        return s

    @property
    def mitigations(self):
        """{name: text} from /sys/devices/system/cpu/vulnerabilities/, or None (not read)."""
        m = self.context.get("mitigations")
        return m if isinstance(m, dict) else None

    @property
    def probe_path(self):
        """What the path probe saw for CLOCK_MONOTONIC through the C library:
        'user', 'syscall', ... or None when there was no usable probe."""
        p = obj(self.doc, "probe")
        if p.get("ok") is False:
            return None
        v = obj(obj(p, "clocks"), "monotonic").get("vdso")
        return v if isinstance(v, str) else None

    def key(self):
        """What identifies a measured state across runs."""
        return (self.kind, self.host_cs, self.vcpus, self.backend, self.emulated)

    def workload(self, name):
        """The Workload row of that name, None when not run."""
        return next((w for w in self.workloads if w.workload == name), None)

    def row(self, clock, method, threads):
        return next((r for r in self.rows if (r.clock, r.method, r.threads) == (clock, method, threads)), None)

    def headline(self):
        """CLOCK_MONOTONIC through the C library, by thread count; a row
        whose median went below the loop overhead is kept (median None, "median"
        in row.below): readers show it as such (util.fquant), never as 0."""
        return sorted((r for r in self.rows if r.clock == HEADLINE_CLOCK and r.method == "vdso"),
                      key=lambda r: r.threads)


MAX_FILE = 64 * 1024 * 1024  # the largest result or trace summary read (docs/analysis.md)
MAX_INT = 2 ** 64  # the engine writes nothing larger (uint64 counts)


def _v(v):
    """A file's value quoted in a message: JSON, cut to ~80 characters."""
    try:
        return cut(json.dumps(v))
    except (RecursionError, ValueError):
        return "(a value nested too deeply)"


def open_regular(path, limit=MAX_FILE, nofollow=None):
    """A descriptor of path, open for reading, if it is a regular file of
    at most limit bytes; a FIFO, device or socket is refused without
    blocking (opened O_NONBLOCK, checked with fstat).  nofollow: a symlink
    as path is refused (O_NOFOLLOW); by default (None) so as root, whom a
    user's symlink in a run folder could otherwise make read and quote a
    file only root may (health's recorded inputs, every result file, a
    run's health.json), and followed otherwise.  InputError says why not.
    The caller closes it, and stops at limit + 1 bytes whatever the file's
    size says (read_regular, klog.file_lines).  The one opener of every
    input file."""
    if nofollow is None:
        nofollow = os.geteuid() == 0
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0) | (os.O_NOFOLLOW if nofollow else 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise InputError(path, "no such file")
    except OSError as e:
        if nofollow and e.errno == errno.ELOOP:
            raise InputError(path, "a symbolic link: a recorded input is not followed when read as root")
        if isinstance(e, IsADirectoryError):
            raise InputError(path, "is a folder, not a result file")
        raise InputError(path, "open: %s" % e.strerror)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise InputError(path, "is a folder, not a result file")
        if not stat.S_ISREG(st.st_mode):
            raise InputError(path, "not a regular file (a FIFO, device or socket): not read")
        if st.st_size > limit:
            raise InputError(path, "%d bytes, over the %d MiB a result file may hold: not read" % (st.st_size, limit >> 20))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_regular(path, limit=MAX_FILE, nofollow=None):
    """The bytes of path if it is a regular file of at most limit bytes
    (open_regular's rules), read whole."""
    fd = open_regular(path, limit, nofollow)
    try:
        chunks, n = [], 0
        while n <= limit:
            b = os.read(fd, min(1 << 20, limit + 1 - n))
            if not b:
                break
            chunks.append(b)
            n += len(b)
        if n > limit:
            raise InputError(path, "grew over the %d MiB a result file may hold while read" % (limit >> 20))
        return b"".join(chunks)
    except OSError as e:
        raise InputError(path, "read: %s" % e.strerror)
    finally:
        os.close(fd)


class _Bad(Exception):
    """A number or string json.loads parsed that no result file holds."""


def _json_float(s):
    v = float(s)
    if not math.isfinite(v):
        raise _Bad("number %s out of range (beyond a double)" % cut(s))
    return v


def _json_int(s):
    if len(s) > 21 or abs(int(s)) > MAX_INT:
        raise _Bad("number %s out of range (beyond 2^64)" % cut(s))
    return int(s)


def _no_surrogates(doc):
    """Refuses a lone surrogate (\\ud800 written alone) in any key or string:
    no UTF-8 text holds one, and every writer downstream would fail on it."""
    todo = [doc]
    while todo:
        v = todo.pop()
        if isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
        elif isinstance(v, str) and SURROGATE.search(v):
            raise _Bad("a lone surrogate in the string %s" % _v(v))


def load_json(path):
    raw = read_regular(path)
    if not raw.strip():
        raise InputError(path, "empty file (a partial write?)")
    try:
        doc = json.loads(raw.decode("utf-8"), parse_constant=_no_constant, parse_float=_json_float, parse_int=_json_int)
        _no_surrogates(doc)
    except _Bad as e:
        raise InputError(path, "not a result file: %s" % e)
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text: corrupt")
    except ValueError as e:
        where = "truncated (a partial write?)" if _truncated(e, raw) else "corrupt"
        raise InputError(path, "not valid JSON, %s: %s" % (where, cut(e, 160)))
    except RecursionError:
        raise InputError(path, "not valid JSON, corrupt: nested too deeply")
    if not isinstance(doc, dict):
        raise InputError(path, "not a JSON object")
    return doc


def _no_constant(name):
    raise ValueError("%s is not allowed (the schema writes null)" % name)


def _truncated(err, raw):
    """A document cut short: the error is at its end, or it does not end
    the way every result file ends (with the closing brace)."""
    pos = getattr(err, "pos", None)
    end = raw.rstrip()
    return (pos is not None and pos >= len(end)) or not end.endswith(b"}")


def check_schema(path, doc, want, where=""):
    """The document's schema string is want: else one line, naming the
    schema found and what this reader reads.  where: the document's place
    in the file ("bench"), or ""."""
    s = doc.get("schema")
    if s == want:
        return
    pre = where + "." if where else ""
    if s is None:
        if where:
            raise InputError(path, "%sschema: missing (this tool reads %s)" % (pre, want))
        raise InputError(path, "no \"schema\" field: not a clockbench result (this tool reads %s)" % want)
    raise InputError(path, "unknown %sschema %s (this tool reads %s)" % (pre, _v(s), want))


def _quantiles(path, at, ns, below):
    """A {min..max} object: numbers >= 0, or null where allowed."""
    if not isinstance(ns, dict):
        raise InputError(path, "%s: expected an object" % at)
    clean = {}
    for q in QUANTS:
        v = ns.get(q)
        if v is None:
            if below is not None and q not in below:
                raise InputError(path, "%s.%s: null but not named in below_overhead" % (at, q))
            clean[q] = None
        elif is_num(v) and v >= 0:
            if below is not None and q in below:
                raise InputError(path, "%s.%s: named in below_overhead but not null" % (at, q))
            clean[q] = float(v)
        else:
            raise InputError(path, "%s.%s: expected a number >= 0 or null, got %s" % (at, q, _v(v)))
    return clean


def parse_rows(path, rows, where):
    """Validates results[] of a clockbench/1 document; returns Rows.  A
    quantile is null only where the row names it in below_overhead."""
    if not isinstance(rows, list):
        raise InputError(path, "%s: expected a list" % where)
    out = []
    for i, r in enumerate(rows):
        at = "%s[%d]" % (where, i)
        if not isinstance(r, dict):
            raise InputError(path, "%s: expected an object" % at)
        method = _str(path, at + ".method", r.get("method"))
        clock = r.get("clock")
        if clock is not None and not isinstance(clock, str):
            raise InputError(path, "%s.clock: expected a string or null, got %s" % (at, _v(clock)))
        th = _positive(path, at + ".threads", r.get("threads"))
        below = r.get("below_overhead")
        if below is None:
            raise InputError(path, "%s.below_overhead: missing or null (a list of quantile names, [] for none)" % at)
        if not (isinstance(below, list) and all(q in QUANTS for q in below)):
            raise InputError(path, "%s.below_overhead: expected a list of quantile names, got %s" % (at, _v(below)))
        clean = _quantiles(path, at + ".ns_per_call", r.get("ns_per_call"), below)
        raw = r.get("ns_per_call_raw")
        if raw is not None:
            raw = _quantiles(path, at + ".ns_per_call_raw", raw, None)
        cs = r.get("clocksource")
        if cs is not None and (not isinstance(cs, str) or not cs):
            raise InputError(path, "%s.clocksource: expected a string, got %s" % (at, _v(cs)))
        p = r.get("path")
        cps = r.get("calls_per_sec_total")
        kr = _kernel_read(path, at, r, clean["median"]) if method == "syscall" else (None, None, False)
        out.append(Row(clock, method, th, p if isinstance(p, str) else None, clean,
                       float(cps) if is_num(cps) else None, cs, raw, below, *kr))
    seen = set()
    for r in out:
        k = (r.clock, r.method, r.threads)
        if k in seen:
            raise InputError(path, "%s: two rows for clock %s, method %s, %d threads" % (where, r.clock, r.method, r.threads))
        seen.add(k)
    return out


def _kernel_read(path, at, r, median):
    """A syscall row's (null_median_ns, kernel_read_ns, kernel_read_negative):
    kernel_read_ns is null exactly where it is not known, and otherwise the
    row's median less null_median_ns (both written to 2 decimals)."""
    nm = _num(path, at + ".null_median_ns", r.get("null_median_ns"), 0, null=True)
    kr = _num(path, at + ".kernel_read_ns", r.get("kernel_read_ns"), 0, null=True)
    neg = _bool(path, at + ".kernel_read_negative", r.get("kernel_read_negative", False))
    d = median - nm if nm is not None and median is not None else None
    if kr is not None and (d is None or abs(d - kr) > 0.015 + 1e-9):
        raise InputError(path, "%s.kernel_read_ns: %s, but the median %s less null_median_ns %s is not that"
                         % (at, _v(kr), _v(median), _v(nm)))
    if neg and (d is None or kr is not None or d >= 0.015):
        raise InputError(path, "%s.kernel_read_negative: true, but the median %s less null_median_ns %s is %s"
                         % (at, _v(median), _v(nm), "unknown" if d is None else "%.2f" % d))
    if d is not None and kr is None and not neg:
        raise InputError(path, "%s.kernel_read_ns: null, but both medians are known and it is not named negative" % at)
    return nm, kr, neg


def _num(path, at, v, lo=None, null=False, above=False):
    """v as a float: a finite number (>= lo, or > lo with above), or None where null is allowed."""
    if v is None and null:
        return None
    if not is_num(v) or (lo is not None and (v <= lo if above else v < lo)):
        want = "a number" + ("" if lo is None else " %s %g" % (">" if above else ">=", lo))
        raise InputError(path, "%s: expected %s%s, got %s" % (at, want, " or null" if null else "", _v(v)))
    return float(v)


def _positive(path, at, v):
    """v, a positive integer (a count of threads or vCPUs)."""
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise InputError(path, "%s: expected a positive integer, got %s" % (at, _v(v)))
    return v


def _typed(path, at, v, good, want, null):
    """v if good(v) is true (or None where null is allowed), else one line
    saying it is not want."""
    if v is None and null:
        return None
    if not good(v):
        raise InputError(path, "%s: expected %s%s, got %s" % (at, want, " or null" if null else "", _v(v)))
    return v


def _str(path, at, v, null=False):
    return _typed(path, at, v, lambda x: isinstance(x, str) and x, "a string", null)


def _bool(path, at, v, null=False):
    return _typed(path, at, v, lambda x: isinstance(x, bool), "true or false", null)


def _agrees(a, b, rel):
    """Two figures one of which the engine computed from the other: equal
    within rel, and within the rounding of the written figures."""
    return abs(a - b) <= rel * max(abs(a), abs(b)) + 0.01


# Quantiles come from the engine's histogram, clamped to the exact min and
# max; written to 2 decimals.
_ORDER = (("min", "median"), ("median", "p99"), ("p99", "p999"), ("p999", "max"), ("min", "mean"), ("mean", "max"))


def parse_workloads(path, rows, at):
    """Validates workloads[] ([] when none was run); returns Workloads."""
    if rows is None:
        raise InputError(path, "%s: missing or null (a list, [] when none was run)" % at)
    if not isinstance(rows, list):
        raise InputError(path, "%s: expected a list, got %s" % (at, _v(rows)[:60]))
    out, seen = [], set()
    for i, r in enumerate(rows):
        a = "%s[%d]" % (at, i)
        if not isinstance(r, dict):
            raise InputError(path, "%s: expected an object" % a)
        name = r.get("workload")
        if name not in WORKLOAD_UNITS:
            raise InputError(path, "%s.workload: %s is not one of %s" % (a, _v(name), ", ".join(WORKLOADS)))
        if name in seen:
            raise InputError(path, "%s: a second %s row" % (a, name))
        seen.add(name)
        a = "%s (%s)" % (a, name)
        th = _positive(path, a + ".threads", r.get("threads"))
        cpus = r.get("cpus")
        if not (isinstance(cpus, list) and cpus and all(isinstance(c, int) and not isinstance(c, bool) and c >= 0
                                                          for c in cpus)):
            raise InputError(path, "%s.cpus: expected a list of CPU numbers, got %s" % (a, _v(cpus)))
        secs = _num(path, a + ".seconds", r.get("seconds"), 0, above=True)
        cs = _str(path, a + ".clocksource", r.get("clocksource"), null=True)
        after = _bool(path, a + ".after_change", r.get("after_change", False))
        rate = _num(path, a + ".rate", r.get("rate"), 0)
        unit = r.get("rate_unit")
        if unit != WORKLOAD_UNITS[name]:
            raise InputError(path, "%s.rate_unit: %s, but %s is measured in %s"
                             % (a, _v(unit), name, WORKLOAD_UNITS[name]))
        lat = r.get("latency_us")
        if lat is not None:
            if name == "tcp-stream":
                raise InputError(path, "%s.latency_us: tcp-stream measures no latency (expected null)" % a)
            if not isinstance(lat, dict):
                raise InputError(path, "%s.latency_us: expected an object or null, got %s" % (a, _v(lat)))
            lat = {q: _num(path, "%s.latency_us.%s" % (a, q), lat.get(q), 0) for q in QUANTS}
            for lo, hi in _ORDER:
                if lat[lo] > lat[hi] * (1 + 1e-9) + 0.01:
                    raise InputError(path, "%s.latency_us: %s %s above %s %s: quantiles out of order"
                                     % (a, lo, _v(lat[lo]), hi, _v(lat[hi])))
        _workload_counts(path, a, name, r, secs, rate)
        out.append(Workload(name, th, list(cpus), secs, cs, after, rate, unit, lat, r))
    return out


def _workload_counts(path, a, name, r, secs, rate):
    """The counts behind a workload's rate, where written: whole numbers
    >= 0 that give the rate over the seconds (within 1 %, and the rounding
    of the seconds, written to the millisecond)."""
    def count(k, lo=0):
        v = r.get(k)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < lo):
            raise InputError(path, "%s.%s: expected an integer >= %d, got %s" % (a, k, lo, _v(v)))
        return v

    if name == "tcp-stream":
        count("msg_bytes", 1)
        n, implied = count("bytes"), lambda n: n * 8 / secs / 1e9
        what = "bytes x 8 / seconds / 1e9"
    elif name == "tcp-rr":
        n, implied, what = count("transactions"), lambda n: n / secs, "transactions / seconds"
    else:
        _num(path, a + ".interval_us", r.get("interval_us"), 0, null=True, above=True)
        count("overruns")
        n, implied, what = count("wakeups"), lambda n: n / secs, "wakeups / seconds"
    if n is not None and not _agrees(rate, implied(n), 0.01 + 0.0005 / secs):
        raise InputError(path, "%s.rate: %s, but %s is %.6g" % (a, _v(r.get("rate")), what, implied(n)))


def _ppm(path, at, o, ref):
    """A {tsc_hz, ppm} pair: ppm = (tsc_hz / reference Hz - 1) x 1e6
    (within 0.1 ppm, the written figures' rounding)."""
    hz = _num(path, at + ".tsc_hz", o.get("tsc_hz"), 0, above=True)
    ppm = _num(path, at + ".ppm", o.get("ppm"), null=True)
    if ppm is not None and ref is not None and abs((hz / ref - 1) * 1e6 - ppm) > 0.1:
        raise InputError(path, "%s.ppm: %s, but tsc_hz %s against the reference %.1f Hz is %.3f ppm"
                         % (at, _v(o.get("ppm")), _v(o.get("tsc_hz")), ref, (hz / ref - 1) * 1e6))
    return hz, ppm


def parse_tsc_rate(path, tr, at):
    """Validates checks.tsc_rate (--check tsc-rate; docs/schema.md): the
    TSC rate against the RTC, CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW, and
    the kernel's NTP correction.  Returns the object with its numbers as
    floats, or None when the check was not run."""
    if tr is None:
        return None
    if not isinstance(tr, dict):
        raise InputError(path, "%s: expected an object or null, got %s" % (at, _v(tr)[:60]))
    out = dict(tr)
    out["seconds"] = _num(path, at + ".seconds", tr.get("seconds"), 0, above=True)
    out["clocksource"] = _str(path, at + ".clocksource", tr.get("clocksource"), null=True)
    k = out["kernel_tsc_khz"] = _num(path, at + ".kernel_tsc_khz", tr.get("kernel_tsc_khz"), 0, null=True, above=True)
    src = _str(path, at + ".kernel_tsc_khz_source", tr.get("kernel_tsc_khz_source"), null=True)
    if (k is None) != (src is None):
        raise InputError(path, "%s.kernel_tsc_khz_source: %s with kernel_tsc_khz %s: both or neither"
                         % (at, _v(src), _v(tr.get("kernel_tsc_khz"))))
    e = out["engine_tsc_khz"] = _num(path, at + ".engine_tsc_khz", tr.get("engine_tsc_khz"), 0, above=True)
    ref = (k if k is not None else e) * 1000
    out["reference_hz"], out["reference"] = ref, "kernel" if k is not None else "engine"
    if tr.get("ppm_reference") not in (None, out["reference"]):
        raise InputError(path, "%s.ppm_reference: %s, but the reference is the %s's (kernel_tsc_khz %s)"
                         % (at, _v(tr["ppm_reference"]), out["reference"], _v(tr.get("kernel_tsc_khz"))))
    rtc = out["rtc"] = dict(_obj(path, at + ".rtc", tr.get("rtc")))
    _str(path, at + ".rtc.device", rtc.get("device"), null=True)
    if _bool(path, at + ".rtc.available", rtc.get("available")):
        edges = rtc.get("edges")
        if not isinstance(edges, int) or isinstance(edges, bool) or edges < 2:
            raise InputError(path, "%s.rtc.edges: expected an integer >= 2 (two edges make one second), got %s"
                             % (at, _v(edges)))
        rtc["tsc_hz"], rtc["ppm"] = _ppm(path, at + ".rtc", rtc, ref)
        rtc["jitter_us"] = _num(path, at + ".rtc.jitter_us", rtc.get("jitter_us"), 0, null=True)
    else:
        _str(path, at + ".rtc.reason", rtc.get("reason"))
    for c in ("monotonic", "monotonic_raw"):
        o = out[c] = dict(_obj(path, "%s.%s" % (at, c), tr.get(c)))
        o["tsc_hz"], o["ppm"] = _ppm(path, "%s.%s" % (at, c), o, ref)
    adj = out["adjtimex"] = dict(_obj(path, at + ".adjtimex", tr.get("adjtimex")))
    if _bool(path, at + ".adjtimex.available", adj.get("available")):
        adj["freq_ppm"] = _num(path, at + ".adjtimex.freq_ppm", adj.get("freq_ppm"), null=True)
        for key in ("tick_us", "status", "maxerror_us", "esterror_us"):
            _num(path, "%s.adjtimex.%s" % (at, key), adj.get(key), 0, null=True)
        _bool(path, at + ".adjtimex.synchronized", adj.get("synchronized"), null=True)
    return out


def check_extras(path, doc, pre):
    """The engine's later fields, where present: clocksource_end,
    mitigations, probe_end, changed_during_run."""
    c = doc.get("context") or {}
    if "clocksource_end" in c and not (c["clocksource_end"] is None or isinstance(c["clocksource_end"], str)):
        raise InputError(path, "%scontext.clocksource_end: expected a string or null" % pre)
    mit = c.get("mitigations")
    if mit is not None and not (isinstance(mit, dict) and all(isinstance(v, str) for v in mit.values())):
        raise InputError(path, "%scontext.mitigations: expected an object of strings" % pre)
    if doc.get("probe_end") is not None and not isinstance(doc.get("probe_end"), dict):
        raise InputError(path, "%sprobe_end: expected an object" % pre)
    ch = doc.get("changed_during_run")
    if ch is not None:
        if not (isinstance(ch, dict) and isinstance(ch.get("clocksource"), bool) and isinstance(ch.get("path"), bool)
                and (ch.get("detail") is None or isinstance(ch.get("detail"), str))):
            raise InputError(path, "%schanged_during_run: expected {clocksource: bool, path: bool, detail: string|null}" % pre)


def check_bench(path, doc, where=""):
    """The clockbench/1 document itself: its context."""
    if not isinstance(doc.get("context"), dict):
        raise InputError(path, "%scontext: missing or not an object" % (where + "." if where else ""))


def _name(path, kind):
    """The file name's fields if it is a `kind` file of the contract, else {}."""
    c = runfolder.classify(os.path.basename(path))
    return c[1] if c and c[0] == kind else {}


def load_host(path, run=None, kind="host"):
    """A clockbench/1 document (host-<cs>.json, or any engine output; with
    kind "tsc-rate", a tsc-rate-<cs>.json file, which must hold the check)."""
    doc = load_json(path)
    check_schema(path, doc, HOST_SCHEMA)
    check_bench(path, doc)
    cs = doc["context"].get("clocksource")
    if not isinstance(cs, str) or not cs:
        cs = _name(path, kind).get("cs", "unknown")
    m = Measurement(path, kind, run, doc, cs)
    if kind == "tsc-rate" and m.tsc_rate is None:
        raise InputError(path, "checks.tsc_rate: missing (a tsc-rate file holds --check tsc-rate)")
    return m


def load_guest(path, run=None):
    """A clockbench-guest/1 result and its KVM trace: the partner
    kvm-trace-*.json file (none: not traced)."""
    doc = load_json(path)
    check_schema(path, doc, GUEST_SCHEMA)
    bench = doc.get("bench")
    if bench is None:
        raise InputError(path, "bench: missing (the guest's clockbench/1 document)")
    if not isinstance(bench, dict):
        raise InputError(path, "bench: expected a clockbench/1 object")
    check_schema(path, bench, HOST_SCHEMA, "bench")
    f = _name(path, "guest")
    check_bench(path, bench, "bench")
    la = obj(doc, "launcher")
    cs = obj(la, "host").get("clocksource")
    if not isinstance(cs, str) or not cs:
        cs = f.get("cs", "unknown")
    vcpus = _positive(path, "launcher.vcpus", la.get("vcpus"))
    backend = la.get("backend") if isinstance(la.get("backend"), str) else None
    trace = None
    if f:
        tpath = os.path.join(os.path.dirname(path), runfolder.partner(os.path.basename(path), "kvm-trace"))
        if os.path.lexists(tpath):
            trace = load_trace(tpath, os.path.basename(path))
    return Measurement(path, "guest", run, bench, cs, vcpus, obj(doc, "guest"), la, trace, backend, "bench.results")


# ---- KVM traces ----

class Trace:
    """A guest run's KVM trace.  life and measuring are the
    clockbench-kvm-trace/1 COUNTS (measuring with available, reason,
    seconds)."""

    def __init__(self, path, available, reason, subject, subject_text, complete, lost, life, measuring):
        self.path, self.available, self.reason = path, available, reason
        self.subject, self.subject_text = subject, subject_text
        self.complete, self.lost = complete, lost
        self.life, self.measuring = life or {}, measuring


def _int(path, at, v, null=False):
    return _typed(path, at, v, lambda x: isinstance(x, int) and not isinstance(x, bool) and x >= 0,
                  "an integer >= 0", null)


def _obj(path, at, v):
    if not isinstance(v, dict):
        raise InputError(path, "%s: expected an object, got %s" % (at, _v(v)))
    return v


def stable_all(with_, without):
    """The stable-bit verdict from the counts: True only when every update
    carried the bit, False when any did not, None without updates."""
    if without:
        return False
    return True if with_ else None


def _counts(path, at, c):
    """Validates a COUNTS object (docs/run-folder.md); returns it."""
    _obj(path, at, c)
    ev = _obj(path, at + ".events", c.get("events"))
    for k, v in ev.items():
        _int(path, "%s.events.%s" % (at, cut(k, 40)), v)
    mc = _obj(path, at + ".master_clock", c.get("master_clock"))
    if mc.get("last") is not None and not isinstance(mc.get("last"), bool):
        raise InputError(path, "%s.master_clock.last: expected true, false or null" % at)
    for k in ("on_updates", "off_updates", "transitions"):
        _int(path, "%s.master_clock.%s" % (at, k), mc.get(k))
    if mc.get("hostclock") is not None and not isinstance(mc.get("hostclock"), str):
        raise InputError(path, "%s.master_clock.hostclock: expected a string or null" % at)
    sb = _obj(path, at + ".stable_bit", c.get("stable_bit"))
    w, wo = _int(path, at + ".stable_bit.with", sb.get("with")), _int(path, at + ".stable_bit.without", sb.get("without"))
    if sb.get("all") != stable_all(w, wo):
        raise InputError(path, "%s.stable_bit.all: %s, but the counts say %s (%d with, %d without)"
                         % (at, _v(sb.get("all")), _v(stable_all(w, wo)), w, wo))
    for v, pv in _obj(path, at + ".stable_bit.per_vcpu", sb.get("per_vcpu")).items():
        _obj(path, "%s.stable_bit.per_vcpu.%s" % (at, cut(v, 40)), pv)
        for k in ("with", "without"):
            _int(path, "%s.stable_bit.per_vcpu.%s.%s" % (at, cut(v, 40), k), pv.get(k))
    for k in ("pvclock_updates", "tsc_offset_writes"):
        _int(path, "%s.%s" % (at, k), c.get(k))
        for v, n in _obj(path, "%s.%s_per_vcpu" % (at, k), c.get(k + "_per_vcpu")).items():
            _int(path, "%s.%s_per_vcpu.%s" % (at, k, cut(v, 40)), n)
    return c


def load_trace(path, guest_name=None):
    """A kvm-trace-*.json file (clockbench-kvm-trace/1), strictly, as a Trace."""
    doc = load_json(path)
    check_schema(path, doc, TRACE_SCHEMA)
    if guest_name is not None and doc.get("guest_result") != guest_name:
        raise InputError(path, "guest_result %s: expected %s" % (_v(doc.get("guest_result")), guest_name))
    avail = _bool(path, "available", doc.get("available"))
    subject = doc.get("subject")
    if subject not in ("guest", "observer", None):
        raise InputError(path, "subject %s: expected \"guest\", \"observer\" or null" % _v(subject))
    st = doc.get("subject_text")
    if not avail:
        reason = doc.get("reason")
        if not isinstance(reason, str) or not reason:
            raise InputError(path, "reason: expected a string saying why there is no trace")
        return Trace(path, False, reason, subject, st, None, None, None, None)
    complete = doc.get("complete")
    if complete is not None and not isinstance(complete, bool):
        raise InputError(path, "complete: expected true, false or null, got %s" % _v(complete))
    comp = doc.get("completeness")
    comp = _obj(path, "completeness", comp) if comp is not None else {}
    nums = {k: _int(path, "completeness." + k, comp.get(k), True)
            for k in ("entries_in_buffer", "entries_written", "overrun", "lost")}
    seen = [nums["lost"] or 0, nums["overrun"] or 0]
    if nums["entries_in_buffer"] is not None and nums["entries_written"] is not None:
        seen.append(nums["entries_written"] - nums["entries_in_buffer"])
    lost = max(seen)
    # The figures win over the flag: events lost make a trace incomplete.
    if lost:
        complete = False
    life = _counts(path, "life", doc.get("life"))
    meas = _obj(path, "measuring", doc.get("measuring"))
    if meas.get("available") is True:
        _counts(path, "measuring", meas)
        if not is_num(meas.get("seconds")):
            raise InputError(path, "measuring.seconds: expected a number")
    elif meas.get("available") is not False:
        raise InputError(path, "measuring.available: expected true or false")
    return Trace(path, True, None, subject, st, complete, lost, life, meas)


# KVM's kvm_update_master_clock tracepoint prints the host's vclock mode
# by name only for none and tsc (arch/x86/kvm/trace.h); the others as
# numbers (enum vdso_clock_mode: 2 pvclock, 3 hvclock): a host that is
# itself a KVM guest on kvm-clock prints 0x2.  The one mapping of the
# trace's word to a name (TraceFacts.hostclock: the word itself where the
# mapping has none, None for None); the raw word is kept beside it.
HOSTCLOCK_NAMES = {"none": "none", "tsc": "tsc", "0x2": "kvm-clock (pvclock)", "0x3": "Hyper-V TSC page (hvclock)"}


class TraceFacts:
    """What a guest's KVM trace says, or why it says nothing (reason).
    master_clock, stable_bit: True, False or None; hostclock: the host's
    clock by name (hostclock_raw: as the trace printed it); with_/without:
    the pvclock update counts (None without facts); clear_vcpus: the vCPUs
    with an update without the bit; source: "guest" (the trace of this
    guest's own QEMU) or "observer" (the observer VM's)."""

    def __init__(self, reason=None, master_clock=None, hostclock=None, transitions=None,
                 stable_bit=None, with_=None, without=None, clear_vcpus=(), source=None):
        self.reason, self.master_clock, self.transitions = reason, master_clock, transitions
        self.hostclock_raw, self.hostclock, self.source = hostclock, HOSTCLOCK_NAMES.get(hostclock, hostclock), source
        self.stable_bit, self.with_, self.without = stable_bit, with_, without
        self.clear_vcpus = list(clear_vcpus)


def trace_facts(m, observer=False):
    """The host-side KVM trace facts of a guest measurement: over its QEMU's
    life, from the counts.  No facts (a reason instead) when not traced, not
    available, incomplete (or not known to be complete), or of another VM
    (the observer VM booted when the guest ran under TCG; with observer=True
    its facts are given: KVM's state on this host, not the guest's)."""
    t = m.trace
    if t is None:
        return TraceFacts("not traced")
    if not t.available:
        return TraceFacts(t.reason or "trace unavailable")
    if t.subject != "guest" and not (observer and t.subject == "observer"):
        return TraceFacts("the trace is of the observer VM, not this guest")
    if t.complete is False:
        return TraceFacts("incomplete trace (%s events lost)" % (t.lost if t.lost else "some"))
    if t.complete is None:
        return TraceFacts("trace completeness unknown (no ring-buffer figures in it)")
    mc = t.life.get("master_clock") or {}
    sb = t.life.get("stable_bit") or {}
    last = mc.get("last") if isinstance(mc.get("last"), bool) else None
    tr = mc.get("transitions") if isinstance(mc.get("transitions"), int) else None
    per = obj(sb, "per_vcpu")
    clear = sorted((v for v, c in per.items() if c.get("without")), key=_vcpu_key)
    return TraceFacts(None, last, mc.get("hostclock"), tr, stable_all(sb["with"], sb["without"]),
                      sb["with"], sb["without"], clear, t.subject)


def _vcpu_key(v):
    return (0, int(v)) if str(v).isdigit() else (1, str(v))


# ---- labels ----

def label_problem(m, cs):
    """None when measurement m was measured on host clocksource cs all
    along, else one line naming the file and what differs: the file name,
    the clocksource at start and at end, a row measured on another, a change
    the engine saw during the run; for a guest, what the launcher read on
    the host before and after."""
    diff = []
    c = runfolder.classify(os.path.basename(m.path))
    if c and c[1].get("cs") not in (None, cs):
        diff.append("the file name says %s" % cut(c[1]["cs"], 40))
    if m.kind != "guest":
        start, end = m.context.get("clocksource"), m.context.get("clocksource_end")
        other = [r for r in m.rows if r.clocksource is not None and r.clocksource != cs]
        for r in other[:3]:
            diff.append("row %s/%s/%d measured on %s" % (cut(r.clock or "-", 20), cut(r.method, 20), r.threads,
                                                        cut(r.clocksource, 40)))
        if len(other) > 3:
            diff.append("%d more rows on another clocksource" % (len(other) - 3))
    else:
        h = obj(m.launcher, "host")
        start, end = h.get("clocksource"), h.get("clocksource_end")
    if start != cs:
        diff.append("clocksource at start %s" % (cut(start, 40) if start else "not recorded"))
    if end is not None and end != cs:
        diff.append("clocksource at end %s" % cut(end, 40))
    ch = m.doc.get("changed_during_run")
    if isinstance(ch, dict) and (ch.get("clocksource") or ch.get("path")):
        what = " and ".join(k for k in ("clocksource", "path") if ch.get(k))
        whose = "the guest's " if m.kind == "guest" else ""
        diff.append("%s%s changed during the run%s" % (whose, what, ": %s" % cut(ch["detail"]) if ch.get("detail") else ""))
    if not diff:
        return None
    return bounded("%s: labelled %s, but %s" % (m.path, cut(cs, 40), "; ".join(diff)))


def mislabel_line(path, cs, why):
    """The line a step of compare says when its file at path does not
    measure its label cs (why: label_problem's): the one writer, for the
    guest launcher and for check-label --step."""
    return "[%s] %s does not measure what its name says: %s" % (cut(cs, 40), cut(os.path.basename(path), 80), why)


def result_kind(path):
    """The kind of result file path names: "host" (host-<cs>.json),
    "tsc-rate" or "guest"; None for any other name."""
    c = runfolder.classify(os.path.basename(path))
    if c and (c[0] in ("guest", "tsc-rate") or (c[0] == "host" and c[1]["ext"] == "json")):
        return c[0]
    return None


def load_file(path, run=None):
    """A host or guest result file, by its name."""
    kind = result_kind(path)
    if kind == "guest":
        return load_guest(path, run)
    if kind is None:
        raise InputError(path, "not a host-<cs>.json or guest-<cs>-<N>vcpu.json result file (nor a tsc-rate-<cs>.json)")
    return load_host(path, run, kind)


# ---- a VM that ran across a switch (running-vm-<cs>.json) ----

RUNNING_VM_PHASES = ("before", "fallback", "return", "heal")


class RunningVM:
    """A running-vm-<cs>.json, read: fallback, baseline, phases (each a
    dict of RUNNING_VM_PHASES' facts), pause_ms, complete, host_kernel,
    file."""

    def __init__(self, path, doc):
        self.file = os.path.basename(path)
        self.fallback, self.baseline = doc["fallback"], doc["baseline"]
        # The file's strings cut where they are kept: a 2 MB host_kernel is one short line.
        self.phases = [dict(p, hostclock=p["hostclock"] and cut(p["hostclock"])) if "hostclock" in p else p
                       for p in doc["phases"]]
        self.pause_ms, self.complete = doc["pause_ms"], doc["complete"]
        self.host_kernel = doc["host_kernel"] and cut(doc["host_kernel"])
        g = doc.get("in_guest")
        # The guest's own view: [(phase, [path], [median ns])] when measured (load_running_vm checked it).
        self.guest = [(p["phase"], p["paths"], p["median_ns"]) for p in g["phases"]] \
            if isinstance(g, dict) and g.get("measured") is True else None

    def line(self):
        """The row as the screen, summary.md and the report say it."""
        return "A VM running across the switch to %s: %s (%s; KVM's events of that VM, Linux %s)." % (
            self.fallback, self.sentence(), self.file, self.host_kernel or "?")

    def sentence(self):
        """The row's one sentence, derived here from the phases as recorded
        (a file's own words are never shown as a verdict)."""
        by = {p["phase"]: p for p in self.phases}
        onoff = {True: "on", False: "off", None: "not seen"}
        b, f = by.get("before", {}), by.get("fallback", {})
        parts = ["on %s the stable bit %s" % (self.baseline, onoff[b.get("stable_bit")]),
                 "on %s %s" % (self.fallback, onoff[f.get("stable_bit")])]
        r = by.get("return")
        if r is None:
            parts.append("the return not traced")
        elif r["stable_bit"] is False and not r["master_on_updates"]:
            n = r["pvclock_with"] + r["pvclock_without"]
            parts.append("after the return to %s it stayed off (%d pvclock update%s, %d with the bit; no "
                         "master-clock update)" % (self.baseline, n, "" if n == 1 else "s", r["pvclock_with"]))
        elif r["stable_bit"] or r["master_clock"]:
            parts.append("after the return to %s it came back by itself (this kernel turned the master clock on)"
                         % self.baseline)
        else:
            parts.append("after the return: no evidence either way")
        h = by.get("heal")
        if h is not None and self.pause_ms is not None:
            back = h["stable_bit"] and h["master_on_updates"]
            parts.append("pause and resume %s (the pause took %.1f ms)" % (
                "brought it back" if back else "did not bring it back", self.pause_ms))
        if self.complete is False:
            parts.append("the trace lost events: not trusted")
        if self.guest:
            parts.append("the guest's own CLOCK_MONOTONIC reads: %s" % ", ".join(
                "%s %s%s" % (ph, "/".join(paths) or "none", " (median %.0f ns)" % sorted(ns)[len(ns) // 2]
                             if ns else "")
                for ph, paths, ns in self.guest))
        return "; ".join(parts)


def load_running_vm(path):
    """A running-vm-<cs>.json (clockbench-running-vm/1), strictly."""
    doc = load_json(path)
    check_schema(path, doc, runfolder.SCHEMA_RUNNING_VM)
    for k in ("fallback", "baseline"):
        v = _str(path, k, doc.get(k))
        if not runfolder.CS_RE.fullmatch(v):
            raise InputError(path, "%s %s: not a clocksource name" % (k, _v(v)))
    c = runfolder.classify(os.path.basename(path))
    if not c or c[0] != "running-vm" or c[1]["cs"] != doc["fallback"]:
        raise InputError(path, "fallback %s: not this file's (its name says otherwise)" % _v(doc["fallback"]))
    _str(path, "host_kernel", doc.get("host_kernel"), null=True)
    _num(path, "pause_ms", doc.get("pause_ms"), 0, null=True)
    if doc.get("complete") not in (True, False, None):
        raise InputError(path, "complete: expected true, false or null, got %s" % _v(doc.get("complete")))
    ph = doc.get("phases")
    if not isinstance(ph, list) or len(ph) > len(RUNNING_VM_PHASES):
        raise InputError(path, "phases: expected a list of at most %d phases" % len(RUNNING_VM_PHASES))
    for i, p in enumerate(ph):
        at = "phases[%d]" % i
        _obj(path, at, p)
        if p.get("phase") not in RUNNING_VM_PHASES:
            raise InputError(path, "%s.phase %s: expected one of %s" % (at, _v(p.get("phase")), ", ".join(RUNNING_VM_PHASES)))
        for k in ("pvclock_with", "pvclock_without", "master_on_updates", "master_off_updates"):
            _int(path, "%s.%s" % (at, k), p.get(k))
        for k in ("master_clock", "stable_bit"):
            _bool(path, "%s.%s" % (at, k), p.get(k), null=True)
        _str(path, at + ".hostclock", p.get("hostclock"), null=True)
    g = doc.get("in_guest")
    if isinstance(g, dict) and g.get("measured") is True:
        gp = g.get("phases")
        if not isinstance(gp, list) or len(gp) > len(RUNNING_VM_PHASES):
            raise InputError(path, "in_guest.phases: expected a list of at most %d phases" % len(RUNNING_VM_PHASES))
        for i, p in enumerate(gp):
            at = "in_guest.phases[%d]" % i
            _obj(path, at, p)
            if p.get("phase") not in RUNNING_VM_PHASES:
                raise InputError(path, "%s.phase %s: not a phase" % (at, _v(p.get("phase"))))
            if not isinstance(p.get("paths"), list) or len(p["paths"]) > 4 or \
                    any(x not in ("user", "syscall", "fallback", "n/a", "None") for x in p["paths"]):
                raise InputError(path, "%s.paths: expected at most 4 of user, syscall" % at)
            if not isinstance(p.get("median_ns"), list) or len(p["median_ns"]) > 64:
                raise InputError(path, "%s.median_ns: expected a list of at most 64 numbers" % at)
            for j, v in enumerate(p["median_ns"]):
                _num(path, "%s.median_ns[%d]" % (at, j), v, 0)
    return RunningVM(path, doc)


class UnreadVM:
    """A running-vm-<cs>.json that did not load: its one line in place of its row."""

    def __init__(self, path, err):
        self.file, self.problem = os.path.basename(path), str(err)

    def line(self):
        return "A VM running across a switch: not read (%s)." % self.problem


def running_vms(folder):
    """The running-vm-<cs>.json files of a run folder, read (sorted by name):
    a RunningVM each, or an UnreadVM for one that does not load (one bad file
    costs its own line, not the summary)."""
    out = []
    for n in folder_names(folder):
        c = runfolder.classify(n)
        if c and c[0] == "running-vm":
            try:
                out.append(load_running_vm(os.path.join(folder, n)))
            except InputError as e:
                out.append(UnreadVM(n, e))
    return out


# ---- run folders ----

SCHEMA_HEALTH = "clockbench-health/1"
# health's old name, still read in the run folders it wrote (never written).
SCHEMA_HEALTH_OLD = "clockbench-host-check/1"
HOST_STATES = ("healthy", "degraded", "unknown")


def load_health(path):
    """What a run's health.json (clockbench health --output, the host when
    the run began; clockbench-health/1, or clockbench-host-check/1 of the
    runs before the rename) says, as a dict of checked fields: state, state_why, guest
    (True, False, None), hypervisor, machine evidence, current and
    available clocksource, cause, cause_text, cause_detail, cause_line,
    advice.  InputError in one line for anything else; every string is
    data, cut (util.cut) where it is shown."""
    doc = load_json(path)
    check_schema(path, doc, SCHEMA_HEALTH_OLD if doc.get("schema") == SCHEMA_HEALTH_OLD else SCHEMA_HEALTH)
    state = doc.get("state")
    if state not in HOST_STATES:
        raise InputError(path, "state: expected one of %s, got %s" % (", ".join(HOST_STATES), _v(state)))
    mach = _obj(path, "machine", doc.get("machine"))
    cs = _obj(path, "clocksource", doc.get("clocksource"))
    avail = cs.get("available")
    if not isinstance(avail, list) or len(avail) > 64 or not all(isinstance(x, str) and x for x in avail):
        raise InputError(path, "clocksource.available: expected a list of names, got %s" % _v(avail))
    ev = mach.get("evidence", [])
    if not isinstance(ev, list) or len(ev) > 16 or not all(isinstance(x, str) for x in ev):
        raise InputError(path, "machine.evidence: expected a list of strings, got %s" % _v(ev))
    return {"state": state, "state_why": _str(path, "state_why", doc.get("state_why")),
            "guest": _bool(path, "machine.guest", mach.get("guest"), null=True),
            "hypervisor": _str(path, "machine.hypervisor", mach.get("hypervisor"), null=True),
            "evidence": [cut(x, 200) for x in ev],
            "current": _str(path, "clocksource.current", cs.get("current"), null=True), "available": avail,
            "cause": _str(path, "cause", doc.get("cause")), "cause_text": _str(path, "cause_text", doc.get("cause_text")),
            "cause_detail": _str(path, "cause_detail", doc.get("cause_detail"), null=True),
            "cause_line": _str(path, "cause_line", doc.get("cause_line"), null=True),
            "advice": _str(path, "advice", doc.get("advice"), null=True)}


def folder_names(folder):
    """The names in a run folder, sorted; InputError in one line when it
    cannot be listed."""
    try:
        return sorted(os.listdir(folder))
    except FileNotFoundError:
        raise InputError(folder, "no such run folder")
    except NotADirectoryError:
        raise InputError(folder, "not a folder (give a run folder, results/<run-id>)")
    except OSError as e:
        raise InputError(folder, "open: %s" % e.strerror)


def result_files(folder):
    """The host, guest and tsc-rate result files of a run folder, sorted."""
    return [n for n in folder_names(folder) if result_kind(n)]


def load_run(folder, skip_bad=False, warn=None):
    """All Measurements of one run folder: kind "host", "guest" and
    "tsc-rate" (readers of cost rows and workloads take the first two).
    Raises InputError for the first bad file (or, with skip_bad, reports it
    through warn and goes on)."""
    folder = folder.rstrip("/") or "/"
    names = result_files(folder)
    if not names:
        raise InputError(folder, "no host-*.json or guest-*.json result files")
    run = os.path.basename(os.path.abspath(folder))
    out = []
    for n in names:
        try:
            out.append(load_file(os.path.join(folder, n), run))
        except InputError as e:
            if not skip_bad:
                raise
            if warn:
                warn("skipped %s" % e)
    if not out:
        raise InputError(folder, "no readable result files")
    hosts = [m for m in out if m.kind == "host"]
    for g in (m for m in out if m.kind == "guest"):
        same = [h for h in hosts if h.host_cs == g.host_cs] or hosts
        g.host_emulated = any(h.emulated for h in same)
    return out
