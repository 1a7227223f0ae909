"""load.py: reads run folders (host-*.json, guest-*.json) into Measurements, strictly.

Strict on what the figures depend on (the schema strings, the clockbench/1
document and its rows); tolerant of the guest's and launcher's facts, which
are shown as "n/a" when missing.
"""
import json
import os
import re

from .util import InputError, is_num

HOST_SCHEMA = "clockbench/1"
GUEST_SCHEMA = "clockbench-guest/1"
TCG_SIGNATURE = "TCGTCGTCGTCG"  # CPUID 0x40000000 under QEMU's TCG
HOST_RE = re.compile(r"^host-(.+)\.json$")
GUEST_RE = re.compile(r"^guest-(.+)-([0-9]+)vcpu(-[a-z0-9]+)?\.json$", re.IGNORECASE)
QUANTS = ("min", "median", "mean", "p99", "p999", "max")
# Clocks read by the same code path (vDSO do_hres, or the same syscall):
# their medians in one run differ by noise (see compare.py).
HRES_CLOCKS = ("realtime", "monotonic", "monotonic_raw", "boottime", "tai")


class Row:
    """One clock x method x threads cell of a clockbench/1 document."""

    __slots__ = ("clock", "method", "threads", "path", "ns", "cps_total")

    def __init__(self, clock, method, threads, path, ns, cps_total):
        self.clock, self.method, self.threads, self.path = clock, method, threads, path
        self.ns, self.cps_total = ns, cps_total

    @property
    def median(self):
        return self.ns.get("median")

    @property
    def p99(self):
        return self.ns.get("p99")


class Measurement:
    """One clockbench/1 document: a host file, or the bench inside a guest
    file, with what is known about where it ran."""

    def __init__(self, path, kind, run, doc, host_cs, vcpus=None, guest=None, launcher=None,
                 trace=None, backend=None, where="results"):
        self.path, self.kind, self.run, self.doc = path, kind, run, doc
        self.host_cs, self.vcpus = host_cs, vcpus
        self.guest, self.launcher, self.trace = guest or {}, launcher or {}, trace
        self.backend = backend
        self.host_emulated = False  # a guest of an emulated hypervisor (set by load_run)
        self.context = doc.get("context") or {}
        self.rows = parse_rows(path, doc.get("results"), where)

    @property
    def emulated(self):
        """TCG anywhere under it: an emulated host (the lab's L1), a guest
        under TCG, or a KVM guest of an emulated host."""
        if self.kind == "host":
            return self.context.get("hypervisor") == TCG_SIGNATURE
        la = self.launcher
        return (bool(la.get("emulated")) or la.get("accel") == "tcg" or self.guest.get("hypervisor") == TCG_SIGNATURE
                or self.host_emulated)

    @property
    def accel(self):
        if self.kind == "host":
            return None
        return self.launcher.get("accel") or "n/a"

    @property
    def where(self):
        """'host', or 'guest 2 vCPU' (with the backend when not QEMU)."""
        if self.kind == "host":
            return "host"
        s = "guest %s vCPU" % self.vcpus
        if self.backend and self.backend != "qemu":
            s += " (%s)" % self.backend
        return s

    def key(self):
        """What identifies a measured state across runs."""
        return (self.kind, self.host_cs, self.vcpus, self.backend, self.emulated)

    def row(self, clock, method, threads):
        for r in self.rows:
            if r.clock == clock and r.method == method and r.threads == threads:
                return r
        return None

    def headline(self):
        """CLOCK_MONOTONIC through the C library, by thread count."""
        return sorted((r for r in self.rows if r.clock == "monotonic" and r.method == "vdso"),
                      key=lambda r: r.threads)


def load_json(path):
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raise InputError(path, "no such file")
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a result file")
    except OSError as e:
        raise InputError(path, "open: %s" % e.strerror)
    if not raw.strip():
        raise InputError(path, "empty file (a partial write?)")
    try:
        doc = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise InputError(path, "not UTF-8 text: corrupt")
    except ValueError as e:
        where = "truncated (a partial write?)" if _truncated(e, raw) else "corrupt"
        raise InputError(path, "not valid JSON, %s: %s" % (where, e))
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


def check_schema(path, doc, want, what="schema"):
    s = doc.get("schema")
    if s != want:
        if s is None:
            raise InputError(path, "no \"schema\" field: not a clockbench result (this tool reads %s)" % want)
        raise InputError(path, "unknown %s %s (this tool reads %s)" % (what, json.dumps(s), want))


def parse_rows(path, rows, where):
    """Validates results[] of a clockbench/1 document; returns Rows."""
    if not isinstance(rows, list):
        raise InputError(path, "%s: expected a list" % where)
    out = []
    for i, r in enumerate(rows):
        at = "%s[%d]" % (where, i)
        if not isinstance(r, dict):
            raise InputError(path, "%s: expected an object" % at)
        method = r.get("method")
        if not isinstance(method, str) or not method:
            raise InputError(path, "%s.method: expected a string, got %s" % (at, json.dumps(method)))
        clock = r.get("clock")
        if clock is not None and not isinstance(clock, str):
            raise InputError(path, "%s.clock: expected a string or null, got %s" % (at, json.dumps(clock)))
        th = r.get("threads")
        if not isinstance(th, int) or isinstance(th, bool) or th < 1:
            raise InputError(path, "%s.threads: expected a positive integer, got %s" % (at, json.dumps(th)))
        ns = r.get("ns_per_call")
        if not isinstance(ns, dict):
            raise InputError(path, "%s.ns_per_call: expected an object" % at)
        clean = {}
        for q in QUANTS:
            v = ns.get(q)
            if v is not None and not (is_num(v) and v >= 0):
                raise InputError(path, "%s.ns_per_call.%s: expected a number >= 0 or null, got %s"
                                 % (at, q, json.dumps(v)))
            clean[q] = float(v) if v is not None else None
        if clean["median"] is None:
            raise InputError(path, "%s.ns_per_call.median: missing" % at)
        p = r.get("path")
        cps = r.get("calls_per_sec_total")
        out.append(Row(clock, method, th, p if isinstance(p, str) else None, clean,
                       float(cps) if is_num(cps) else None))
    seen = set()
    for r in out:
        k = (r.clock, r.method, r.threads)
        if k in seen:
            raise InputError(path, "%s: two rows for clock %s, method %s, %d threads" % (where, r.clock, r.method, r.threads))
        seen.add(k)
    return out


def check_bench(path, doc, where=""):
    """The clockbench/1 document itself: schema, context, results."""
    if not isinstance(doc, dict):
        raise InputError(path, "%s: expected a clockbench/1 object" % (where or "document"))
    s = doc.get("schema")
    if s != HOST_SCHEMA:
        pre = where + "." if where else ""
        if s is None:
            raise InputError(path, "%sschema: missing (this tool reads %s)" % (pre, HOST_SCHEMA))
        raise InputError(path, "unknown %sschema %s (this tool reads %s)" % (pre, json.dumps(s), HOST_SCHEMA))
    if not isinstance(doc.get("context"), dict):
        raise InputError(path, "%scontext: missing or not an object" % (where + "." if where else ""))


def load_host(path, run):
    doc = load_json(path)
    check_schema(path, doc, HOST_SCHEMA)
    check_bench(path, doc)
    m = HOST_RE.match(os.path.basename(path))
    cs = doc["context"].get("clocksource")
    if not isinstance(cs, str) or not cs:
        cs = m.group(1) if m else "unknown"
    return Measurement(path, "host", run, doc, cs)


def load_guest(path, run):
    doc = load_json(path)
    check_schema(path, doc, GUEST_SCHEMA)
    bench = doc.get("bench")
    if bench is None:
        raise InputError(path, "bench: missing (the guest's clockbench/1 document)")
    check_bench(path, bench, "bench")
    m = GUEST_RE.match(os.path.basename(path))
    la = doc.get("launcher") if isinstance(doc.get("launcher"), dict) else {}
    g = doc.get("guest") if isinstance(doc.get("guest"), dict) else {}
    host = la.get("host") if isinstance(la.get("host"), dict) else {}
    cs = host.get("clocksource") or la.get("host_clocksource")
    if not isinstance(cs, str) or not cs:
        cs = m.group(1) if m else "unknown"
    vcpus = la.get("vcpus")
    if not isinstance(vcpus, int) or isinstance(vcpus, bool) or vcpus < 1:
        vcpus = int(m.group(2)) if m else g.get("vcpus_online")
    if not isinstance(vcpus, int):
        raise InputError(path, "no vCPU count (launcher.vcpus, or the file name guest-CS-Nvcpu.json)")
    trace = doc.get("kvm_trace")
    backend = la.get("backend") if isinstance(la.get("backend"), str) else None
    if backend is None and m and m.group(3):
        backend = m.group(3)[1:]
    return Measurement(path, "guest", run, bench, cs, vcpus, g, la,
                       trace if isinstance(trace, dict) else None, backend, "bench.results")


def result_files(folder):
    """host-*.json and guest-*.json in a run folder, sorted."""
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        raise InputError(folder, "no such run folder")
    except NotADirectoryError:
        raise InputError(folder, "not a folder (give a run folder, results/<run-id>)")
    except OSError as e:
        raise InputError(folder, "open: %s" % e.strerror)
    return [n for n in names if (HOST_RE.match(n) or GUEST_RE.match(n))]


def load_run(folder, skip_bad=False, warn=None):
    """All Measurements of one run folder.  Raises InputError for the first
    bad file (or, with skip_bad, reports it through warn and goes on)."""
    folder = folder.rstrip("/") or "/"
    names = result_files(folder)
    if not names:
        raise InputError(folder, "no host-*.json or guest-*.json result files")
    run = os.path.basename(os.path.abspath(folder))
    out = []
    for n in names:
        p = os.path.join(folder, n)
        try:
            out.append(load_host(p, run) if n.startswith("host-") else load_guest(p, run))
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


def newest_run(results):
    """The newest run folder under results/ that holds result files (run ids
    begin with the UTC date and time, so the last name sorted is the newest)."""
    try:
        names = sorted(os.listdir(results), reverse=True)
    except OSError as e:
        raise InputError(results, "cannot list run folders: %s" % e.strerror)
    for n in names:
        p = os.path.join(results, n)
        if os.path.isdir(p) and not n.startswith("."):
            try:
                if result_files(p):
                    return p
            except InputError:
                continue
    raise InputError(results, "no run folder with host-*.json or guest-*.json")


def trace_is_guests(m):
    """Under TCG the harness traces the launcher's KVM probe VM instead, and
    says so in kvm_trace.subject."""
    subj = (m.trace or {}).get("subject")
    return not isinstance(subj, str) or subj.startswith("the guest's QEMU")


def trace_facts(m):
    """The host-side KVM trace facts of a guest, as (master_clock,
    stable_bit) where each is True, False or None, plus a reason."""
    t = m.trace
    if t is None:
        return None, None, "not traced"
    if t.get("available") is False:
        return None, None, str(t.get("reason") or "trace unavailable")
    if not trace_is_guests(m):
        return None, None, "the trace is of a KVM probe VM, not this guest"
    mc = t.get("master_clock") if isinstance(t.get("master_clock"), dict) else {}
    sb = t.get("stable_bit") if isinstance(t.get("stable_bit"), dict) else {}
    last = mc.get("last") if isinstance(mc.get("last"), bool) else None
    allb = sb.get("all") if isinstance(sb.get("all"), bool) else None
    return last, allb, None
