"""diff.py: `clockbench report diff`: per-cell deltas between two runs, with a noise band from each run's own spread.

The band of a cell (clock, method, threads in one measured state) is the
spread of the medians of its *sibling clocks* in the same run: the
high-resolution clocks (realtime, monotonic, monotonic_raw, boottime, tai)
that took the same path (user or syscall), read by the same code, so their
medians differ by noise (and any small systematic difference, which only
widens the band).  spread = (max - min) / min of the sibling medians.  A
cell with no measured sibling (coarse clocks, rdtsc, a run of one clock)
uses half its own (p99 - median) / median instead.  The band of a comparison is the larger of
the two runs' bands, never below MIN_BAND.  docs/analysis.md explains why.
"""
from cbcontract.names import HEADLINE_CLOCK, HRES_CLOCKS
from .fmt import fquant, md_table

MIN_BAND = 0.01


def siblings(clock):
    """The coarse clocks are not siblings: realtime_coarse and
    monotonic_coarse were measured 9.5 and 5.5 ns, steadily, on one host."""
    return HRES_CLOCKS if clock in HRES_CLOCKS else ()


def band(m, r):
    """The relative noise band of row r of measurement m, and how it was
    found ('siblings N' or 'p99')."""
    group = siblings(r.clock)
    meds = [x.median for x in m.rows if x.clock in group and x.method == r.method and x.threads == r.threads
            and x.path == r.path and x.median and x.median > 0]
    if len(meds) >= 2:
        return (max(meds) - min(meds)) / min(meds), "siblings %d" % len(meds)
    if r.p99 is not None and r.median and r.median > 0:
        return max(0.0, (r.p99 - r.median) / r.median / 2), "p99"
    return None, "none"


def cell_key(m, r):
    return (m.kind, m.vcpus or 0, m.backend or "", m.emulated, m.host_cs, r.clock or "", r.method, r.threads)


def index(ms):
    """cell key -> (measurement, row); one measured state per key."""
    out = {}
    for m in ms:
        for r in m.rows:
            out[cell_key(m, r)] = (m, r)
    return out


def diff_cells(before, after):
    """Yields one dict per cell present in either run."""
    a, b = index(before), index(after)
    for k in sorted(set(a) | set(b), key=lambda k: (k[0] != "host", k[1], k[2], k[3], k[4] != "tsc", k[4],
                                                    k[6], k[5], k[7])):
        d = {"key": k, "before": a.get(k), "after": b.get(k)}
        if k in a and k in b:
            (ma, ra), (mb, rb) = a[k], b[k]
            ba, ha = band(ma, ra)
            bb, hb = band(mb, rb)
            bands = [x for x in (ba, bb) if x is not None]
            d["band"] = max(bands + [MIN_BAND]) if bands else None
            d["band_how"] = ha if (ba or 0) >= (bb or 0) else hb
            d["delta"] = None if rb.median is None or ra.median is None else rb.median - ra.median
            d["rel"] = d["delta"] / ra.median if d["delta"] is not None and ra.median else None
            if d["rel"] is None or d["band"] is None:
                d["verdict"] = "n/a"
            elif abs(d["rel"]) <= d["band"]:
                d["verdict"] = "within noise"
            else:
                d["verdict"] = "slower" if d["rel"] > 0 else "faster"
        else:
            d["verdict"] = "only before" if k in a else "only after"
        yield d


def where(k):
    kind, vcpus, backend, emulated = k[0], k[1], k[2], k[3]
    if kind == "host":
        return "host"
    s = "guest %d vCPU" % vcpus
    if backend and backend != "qemu":
        s += " (%s)" % backend
    return s + (" EMULATED" if emulated else "")


def context_changes(before, after):
    """Facts that differ between the two runs' host files: what changed."""
    keys = ("kernel", "kernel_cmdline", "cpu_model", "clocksource", "available_clocksource", "tsc_mhz",
            "hypervisor", "cpus_online", "clockbench_version")
    hb = {m.host_cs: m for m in before if m.kind == "host"}
    ha = {m.host_cs: m for m in after if m.kind == "host"}
    out = []
    for cs in sorted(set(hb) & set(ha), key=lambda c: (c != "tsc", c)):
        for k in keys:
            x, y = hb[cs].context.get(k), ha[cs].context.get(k)
            if x != y:
                out.append(["host on %s" % cs, k, str(x), str(y)])
    return out


def render(before, after, name_a, name_b):
    """diff.md text, and counts {verdict: n}."""
    cells = list(diff_cells(before, after))
    counts = {}
    for d in cells:
        counts[d["verdict"]] = counts.get(d["verdict"], 0) + 1

    def row(d):
        k = d["key"]
        ra = d["before"][1] if d["before"] else None
        rb = d["after"][1] if d["after"] else None
        rel = d.get("rel")
        return [where(k), k[4], k[5] or "-", k[6], k[7], fquant(ra), fquant(rb),
                "n/a" if d.get("delta") is None else "%+.2f" % d["delta"],
                "n/a" if rel is None else "%+.1f %%" % (rel * 100),
                "n/a" if d.get("band") is None else "+/-%.1f %% (%s)" % (d["band"] * 100, d["band_how"]),
                d["verdict"]]

    hdr = ["where", "host clocksource", "clock", "method", "threads", "before ns", "after ns", "delta ns",
           "delta", "noise band", "verdict"]
    al = "llllrrrrrll"
    head = [d for d in cells if d["key"][5] == HEADLINE_CLOCK and d["key"][6] == "vdso"]
    lines = ["# clockbench diff: %s -> %s" % (name_a, name_b), "",
             "Median ns per call, before and after. A delta is called slower or faster only when it leaves the "
             "noise band: the larger of the two runs' own spreads for that cell (the spread of the medians of "
             "clocks read by the same code path, else half of (p99 - median) / median), at least %.0f %%. "
             "See docs/analysis.md." % (MIN_BAND * 100), "",
             "Verdicts: " + ", ".join("%s %d" % (v, n) for v, n in sorted(counts.items())) + ".", ""]
    ch = context_changes(before, after)
    if ch:
        lines += ["## What changed", "", md_table(["state", "fact", "before", "after"], ch), ""]
    if any(m.emulated for m in before + after):
        lines += ["Rows marked EMULATED are QEMU TCG guests: an emulator's timings, not a hypervisor's cost.", ""]
    lines += ["## CLOCK_MONOTONIC (vdso method)", "", md_table(hdr, [row(d) for d in head], al), "",
              "## Every cell", "", md_table(hdr, [row(d) for d in cells], al), ""]
    return "\n".join(lines), counts
