"""summary.py: the `make compare` table of one run folder: summary.md and summary.json (clockbench-compare/2).

Headline figure: CLOCK_MONOTONIC through the C library (the engine's vdso
method: what a program's clock_gettime does), median ns per call, with one
thread and with every thread (vCPU) reading, and its ratio to the tsc row.
Over rounds (round-<N>/, cbcontract.rounds) each figure is the median of
the rounds' figures and each ratio the median of the rounds' paired ratios
with its interval (interval.py): the FIELD_ratio key keeps its meaning (a
number, x / tsc), FIELD_interval beside it says how far it can be trusted.
"""
import json
import os
import textwrap

from cbcontract import rounds as cbrounds, runfolder
from . import interval, verdict
from cbcontract.load import WORKLOAD_UNITS, WORKLOADS, UnreadVM, load_health, running_vms, trace_facts
from .report import mitigation_text
from cbcontract.util import InputError, printable

FIGURES = ("host_1", "host_all", "guest_1", "guest_all", "host_rdtsc")


def _ends(r, m, one, every):
    """Sets r[one] and r[every] to m's headline medians with the fewest and
    the most threads (None without m or a row) and names in
    r["below_overhead"] those the engine left null (below the loop
    overhead).  Returns the most threads."""
    rows = m.headline() if m is not None else []
    for k, row in ((one, rows[:1]), (every, rows[-1:])):
        r[k] = row[0].median if row else None
        if row and "median" in row[0].below:
            r["below_overhead"].append(k)
    return rows[-1].threads if rows else None


def _onoff(v):
    return "n/a" if v is None else ("on" if v else "off")


def stable_text(r):
    """A row's stable bit with the counts behind it."""
    if r.get("stable_bit") is None:
        return "n/a"
    word = "set" if r["stable_bit"] else "clear"
    return "%s (%d with, %d without)" % (word, r["stable_with"], r["stable_without"])


def rows_of(ms):
    """One row per host clocksource and guest (a clocksource with several
    guests gets a row for each); tsc first.  ms may hold several rounds
    (Measurement.round): each round's rows are made alone, then merged
    (merge)."""
    by = {}
    for m in ms:
        by.setdefault(interval.round_of(m), []).append(m)
    return merge([_rows_one(by[n]) for n in sorted(by)])


def _rkey(r):
    return (r["clocksource"], r.get("guest_file"))


def _base(rows):
    """The tsc row, every ratio's baseline; None where the run has none (a
    host that lost its TSC offers none): then no ratio is given at all."""
    return next((r for r in rows if r["clocksource"] == "tsc"), None)


def _put(d, k, pairs):
    """d[k] the median of the rounds' figures (pairs: (figure, tsc's) a
    round; None without one), d[k + '_ratio'] the median of their paired
    ratios and d[k + '_interval'] its interval document (both None without)."""
    vs = [v for v, _ in pairs if v is not None]
    d[k] = interval.median(vs) if vs else None
    q = interval.paired(pairs)
    d[k + "_ratio"], d[k + "_interval"] = (q.median, q.doc()) if q.n else (None, None)


def merge(per_round):
    """The rows of each round ([rows] per round) as one row per state: its
    figures the median over the rounds that have it, each ratio the median
    of the rounds' paired ratios (x and tsc of the same round) with its
    interval; the facts (trace, paths) those of the state's first round."""
    first = {}  # each state's row of its first round, in order
    for rows in per_round:
        for r in rows:
            first.setdefault(_rkey(r), r)
    bases = [_base(rows) for rows in per_round]
    found = [{_rkey(r): r for r in rows} for rows in per_round]
    out = []
    for key in first:
        r = dict(first[key])
        got = [(f[key], b) for f, b in zip(found, bases) if key in f]
        r["rounds"] = len(got)
        r["below_overhead"] = [k for k in first[key]["below_overhead"]]
        for k in FIGURES:
            _put(r, k, [(x.get(k), b and b.get(k)) for x, b in got])
            if r[k] is not None and k in r["below_overhead"]:
                r["below_overhead"].remove(k)
        r["workloads"] = {}
        for x, b in got:
            for n, w in x["workloads"].items():
                r["workloads"].setdefault(n, {"unit": w["unit"], "_pairs": {}})
                bw = (b or {}).get("workloads", {}).get(n, {})
                for side in ("host", "guest", "host_latency", "guest_latency"):
                    r["workloads"][n]["_pairs"].setdefault(side, []).append((w.get(side), bw.get(side)))
        for n, w in r["workloads"].items():
            for side, pairs in w.pop("_pairs").items():
                if any(v is not None for v, _ in pairs):
                    _put(w, side, pairs)
        out.append(r)
    return out


def _rows_one(ms):
    """rows_of for the measurements of one round."""
    hosts = {m.host_cs: m for m in ms if m.kind == "host"}
    guests = {}
    for m in ms:
        if m.kind == "guest":
            guests.setdefault(m.host_cs, []).append(m)
    rows = []
    for cs in sorted(set(hosts) | set(guests), key=lambda c: (c != "tsc", c)):
        h = hosts.get(cs)
        hs = guests.get(cs) or [None]
        for g in hs:
            r = {"clocksource": cs, "host_file": h and os.path.basename(h.path), "below_overhead": []}
            # A host that is itself QEMU's TCG (the lab's L1) makes every
            # figure an emulator's, its guests' included.
            r["host_emulated"] = bool(h and h.emulated)
            r["host_threads"] = _ends(r, h, "host_1", "host_all")
            # The rdtsc floor on one thread: the basis of an estimate where
            # no tsc row measures a healthy TSC (verdict.lines).
            rd = sorted((x for x in (h.rows if h is not None else []) if x.method == "rdtsc"), key=lambda x: x.threads)
            r["host_rdtsc"] = rd[0].median if rd else None
            r["host_mitigations"] = mitigation_text(h.mitigations) if h and h.mitigations is not None else None
            r["workloads"] = {}
            for side, m in (("host", h), ("guest", g)):
                for w in (m.workloads if m is not None else []):
                    wr = r["workloads"].setdefault(w.workload, {"unit": w.rate_unit})
                    wr[side] = w.rate
                    if w.latency("median") is not None:
                        wr[side + "_latency"] = w.latency("median")
            if g is not None:
                f = trace_facts(g, observer=True)
                t = g.trace
                r.update(guest_file=os.path.basename(g.path), guest_vcpus=g.vcpus, guest_backend=g.backend,
                         accel=g.accel, emulated=g.emulated, guest_clocksource=g.clocksource_after,
                         guest_path=g.probe_path, master_clock=f.master_clock, hostclock=f.hostclock,
                         hostclock_raw=f.hostclock_raw, kvm_facts_from=f.source, stable_bit=f.stable_bit, stable_with=f.with_, stable_without=f.without,
                         trace_subject=t.subject_text if t is not None and t.available else None,
                         trace_note=_trace_note(g, f))
                _ends(r, g, "guest_1", "guest_all")
            r["label"] = cs if g is None or len(hs) == 1 else "%s (%s)" % (cs, g.where)
            rows.append(r)
    return rows


def _trace_note(g, f):
    """A footnote for a row whose KVM facts need one: not the guest's own
    QEMU, or no facts at all (and why)."""
    t = g.trace
    if t is None:
        return "not traced"
    if not t.available:
        return "not traced: %s" % t.reason
    if f.reason:
        return f.reason
    if t.subject != "guest":
        return "KVM state observed from: %s" % (t.subject_text or t.subject)
    return None


# Under TCG the guest's own clocksource and path are the emulator's.
EMULATORS = " (TCG's: the emulator's)"


def mechanism(rows):
    """What holds from the run's figures, by accelerator: the sentences
    summary.md ends with (none where nothing ran emulated)."""
    tcg = any(r.get("emulated") for r in rows)
    kvm = any("guest_file" in r and not r.get("emulated") for r in rows)
    out = []
    if tcg or any(r.get("host_emulated") for r in rows):
        out.append("Figures marked emulated come from QEMU's TCG: an emulator's timings, not a hypervisor's cost.")
    if tcg:
        out.append("Under TCG the guest's clocksource and read path are the emulator's (it has no kvm-clock): they "
                   "say nothing about the host; the master clock and stable bit there are KVM's on this host, from "
                   "the observer VM's trace, not the TCG guest's.")
    if kvm:
        out.append("Under KVM all four are the guest's own: its clocksource and read path, and the master clock and "
                   "stable bit from the host's trace of its QEMU.")
    return out


def render(run, rows, vms=()):
    """(summary.md text, summary.json document) of merged rows (rows_of)
    and the run's VMs that ran across a switch (load.running_vms)."""
    base = _base(rows)
    wls = [n for n in WORKLOADS if any(n in r["workloads"] for r in rows)]
    nrounds = max((r.get("rounds", 1) for r in rows), default=1)
    ratio = "x ratio to the tsc row [its interval]" if base else "no ratio"
    lines = ["# clockbench compare: %s" % run, "",
             "CLOCK_MONOTONIC via the vDSO path, median ns per call (%s)." % ratio
             + (" Workloads: rate on the host / in the guest (%s), higher is better." % ratio if wls else "")
             + ("" if base else " " + NO_BASE + ".")
             + (" %d rounds: each figure the median over them." % nrounds if nrounds > 1 else ""),

             "", "| host clocksource | host 1 thr | host all | guest 1 vCPU | guest all vCPUs | master clock | "
                 "stable bit | master clock and stable bit from | guest clocksource | guest path | accel |"
             + "".join(" %s %s |" % (n, WORKLOAD_UNITS[n]) for n in wls), "|" + "---|" * (11 + len(wls))]
    notes = []
    for r in rows:
        mark = ""
        if r.get("trace_note"):
            if r["trace_note"] not in notes:
                notes.append(r["trace_note"])
            mark = " [%d]" % (notes.index(r["trace_note"]) + 1)

        def fig(k, emulated):
            v = r.get(k)
            if v is None:
                return "n/a (below loop overhead)" if k in r["below_overhead"] else "n/a"
            return "%.1f%s" % (v, ratio_text(r, k, r is base)) + (" (TCG, emulated)" if emulated else "")
        guest = "guest_file" in r
        mc = _onoff(r.get("master_clock")) + (" (hostclock %s)" % r["hostclock"] if r.get("hostclock") else "")
        def work(n):
            w = r["workloads"].get(n, {})
            return " / ".join(
                "n/a" if w.get(side) is None else "%g" % w[side] + ratio_text(w, side, r is base) + (
                    " (TCG, emulated)" if emulated else "")
                for side, emulated in (("host", r["host_emulated"]), ("guest", r.get("emulated"))))
        em = EMULATORS if r.get("emulated") else ""
        lines.append("| %s | %s | %s | %s | %s | %s%s | %s%s | %s | %s | %s | %s |" % (
            r["label"], fig("host_1", r["host_emulated"]), fig("host_all", r["host_emulated"]),
            fig("guest_1", r.get("emulated")), fig("guest_all", r.get("emulated")),
            mc if guest else "n/a", mark, stable_text(r), mark, verdict.summary_from(r) if guest else "n/a",
            (r.get("guest_clocksource") or "n/a") + em, (r.get("guest_path") or "n/a") + em, r.get("accel") or "n/a")
            + "".join(" %s |" % work(n) for n in wls))
    lines += [""] + ([interval.method_note(sorted({r.get("rounds", 1) for r in rows}))] if base else [])
    for i, n in enumerate(notes, 1):
        lines.append("[%d] %s" % (i, n))
    mit = sorted({r["host_mitigations"] for r in rows if r.get("host_mitigations")})
    if mit:
        lines.append("Host speculation mitigations (they set what a syscall costs): %s" % " | ".join(mit))
    m = mechanism(rows)
    if m and any(r.get("emulated") or r.get("host_emulated") for r in rows):
        lines.append(" ".join(m))
    if vms:
        lines += ["", "## VMs running across a switch", ""] + ["- " + v.line() for v in vms]
    doc = {"schema": runfolder.SCHEMA_SUMMARY, "run": run, "baseline": base["clocksource"] if base else None, "rounds": nrounds,
           "rows": rows, "notes": notes,
           "running_vms": [{"fallback": v.fallback, "baseline": v.baseline, "file": v.file, "phases": v.phases,
                            "pause_ms": v.pause_ms, "complete": v.complete, "text": v.sentence()}
                           for v in vms if not isinstance(v, UnreadVM)]}
    # Each line's strings from the results made printable: one place, every line.
    return "\n".join(printable(x) for x in lines) + "\n", doc


# Where a run has no tsc row there is no baseline, and so no ratio: each
# figure stands alone, and the reason is said once.
NO_BASE = "No ratio is given: this run has no tsc row to be the baseline (the host did not offer tsc)"


def ratio_text(d, k, is_base=False):
    """' (x1.16 [0.82, 1.41])', ' (no difference measured [0.95, 1.12])' or
    ' (x1.16 [n/a (1 round)])' for d[k]'s ratio; ' (x1.00)' on the
    baseline's own row (tsc against itself); '' without a ratio."""
    q = d.get(k + "_ratio")
    if q is None:
        return ""
    if is_base:
        return " (x%.2f)" % q
    # merge() gives every ratio its interval document beside it.
    return " (%s)" % verdict.ratio_of(d, k).text()


def host_state(run_dir):
    """What health said of the host when the run began (its
    health.json, load.load_health), or None where the run has
    none; a file that does not load is said, not trusted."""
    p = os.path.join(run_dir, runfolder.HEALTH)
    if not os.path.lexists(p):
        return None
    try:
        return load_health(p)
    except InputError as e:
        return {"problem": str(e)}


def write(run_dir, screen=False, now=None):
    """Writes run_dir's summary.md and summary.json, together or not at all,
    once each (a second summary of the same folder fails before writing);
    returns the table, or with screen the verdict and the tables that fit a
    terminal (verdict.screen; now: the host's clocksource when the run began).  Both are made in a private folder, then linked into
    place; if the second cannot be, the first is removed again."""
    ms = [m for _, round_ms in cbrounds.load_rounds(run_dir) for m in round_ms]
    run = os.path.basename(os.path.abspath(run_dir))
    rows = rows_of(ms)
    vms = running_vms(run_dir)
    text, doc = render(run, rows, vms)
    names = (runfolder.SUMMARY_MD, runfolder.SUMMARY_JSON)
    for n in names:
        p = os.path.join(run_dir, n)
        if os.path.lexists(p):
            raise InputError(p, "exists: a run folder's summary is written once, never replaced")
    try:
        with runfolder.Private(run_dir) as priv:
            for n, data in zip(names, (text, json.dumps(doc, indent=1) + "\n")):
                priv.create(n, data)
            try:
                for n in names:
                    priv.place(n, n)
            except runfolder.RunFolderError as e:
                raise InputError(None, "%s; %s" % (e, _take_back(priv)))
    except runfolder.RunFolderError as e:
        raise InputError(None, "%s; nothing kept" % e)
    if screen:
        avail = next((m.available_clocksources for m in ms if m.kind == "host"), None)
        wrapped = [w for v in vms for w in textwrap.wrap(printable(v.line()), verdict.WIDTH,
                                                                          subsequent_indent="  ", break_on_hyphens=False)]
        return verdict.screen(rows, avail, now, state=host_state(run_dir)) + "".join("\n" + w for w in wrapped) \
            + "\nThe full table: %s\n" % os.path.join(run_dir, runfolder.SUMMARY_MD)
    return text


def _take_back(priv):
    """Removes what priv placed; says what is kept."""
    for n in list(priv.placed):
        try:
            priv.unplace(n)
        except OSError as e:
            return "%s kept without its partner (cannot remove it: %s)" % (n, e.strerror)
    return "nothing kept (summary.md and summary.json are written together)"
