#!/usr/bin/python3
# tier: fast
"""plots.t: PNG and SVG plots drawn, not empty, embedded; one colour per clocksource in every plot script; y axes
a person can read (4+ labelled ticks, log only over a decade, linear from 0 below); one x value drawn as points,
not a line; emulated-only plots titled so; guests over threads, the headline picture's ratios to tsc (from its
data file); a missing gnuplot skips them without failing."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "lib")]
from taplib import AFTER, BEFORE, LAB, NEW, ROOT, WL, Tap, read, run, with_null_rows  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
from cbcontract import load  # noqa: E402
from cbanalysis import plots, report  # noqa: E402

NAMES = ("headline", "ns-vs-threads", "ns-vs-vcpus", "guest-ns-vs-threads")
t = Tap()


def blocks(path):
    """A plot's data file: {block's comment line: [[fields]]}; blocks follow the header, two empty lines apart,
    each with a row of column headers (x, then the title) after its comment; the bars' tick labels left out."""
    out = {}
    if not os.path.exists(path):
        return out
    for chunk in read(path).split("\n\n\n")[1:]:
        lines = chunk.strip("\n").splitlines()
        if not lines[0].startswith("# groups:"):
            assert lines[1].startswith("x\t"), lines[:2]
            out[lines[0][2:]] = [ln.split("\t") for ln in lines[2:]]
    return out


def doc(run_dir, name):
    d = json.load(open(os.path.join(run_dir, name)))
    return d.get("bench", d)


def scripts(runs):
    """Every plot script the report draws for runs: [(chart name, script text)]."""
    ms = [m for r in runs for m in load.load_run(r)]
    out = []
    for name, chart, _ in plots.charts(ms, len(runs) > 1, lambda m: report.baseline(m, ms)):
        if chart is not None:
            out.append((name, plots.script(chart, "svg", "/dev/null", name + ".dat"), chart))
    return out


# The colour mapping: fixed for the four clocksources, distinct, and the
# fallback the same in any process (str hashes are salted per process).
fixed = [plots.colour(cs) for cs in ("tsc", "hpet", "acpi_pm", "kvm-clock")]
code = "import sys; sys.path.insert(0, %r); from cbanalysis import plots; print(plots.colour('xen'), plots.colour('jiffies'))" \
    % os.path.join(ROOT, "analysis")
seen = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONHASHSEED=str(s))).stdout for s in (1, 2, 3)}
t.ok(len(set(fixed)) == 4 and all(re.fullmatch(r"#[0-9a-f]{6}", c) for c in fixed) and len(seen) == 1
     and not set(seen.pop().split()) & set(fixed),
     "one fixed colour each for tsc, hpet, acpi_pm, kvm-clock; others a colour of their own, the same in every process",
     (fixed, seen))

# Every series and bar in every plot script takes its clocksource's colour.
used, bad = {}, []
sc = scripts([BEFORE, LAB]) + scripts([WL])
for name, text, chart in sc:
    plot = next(ln for ln in text.splitlines() if ln.startswith("plot "))
    if chart.series:
        found = re.findall(r'index (\d+) using (?:1|\(\$1\*[0-9.e+-]+\)):2 with (?:linespoints|points) [^,]*?lc rgb "(#[0-9a-f]{6})"', plot)
        pairs = [(chart.series[int(i)].cs, c) for i, c in found]
        if len(found) != len(chart.series):
            bad.append("%s: %d of %d series coloured" % (name, len(found), len(chart.series)))
    else:
        # A bar block's title is its column header (columnheader(2)): block i is the i-th clocksource.
        found = re.findall(r'index (\d+) using [^,]* with boxxyerror lc rgb "(#[0-9a-f]{6})" title columnheader\(2\)', plot)
        css = plots._bar_css(chart)
        if len(found) != len(css):
            bad.append("%s: %d of %d clocksources' bars coloured" % (name, len(found), len(css)))
        pairs = [(css[int(i)], c) for i, c in found] + re.findall(r'()lc rgb "(#[0-9a-f]{6})" title .tsc = 1.0.', plot)
        pairs = [(cs or "tsc", c) for cs, c in pairs]
    for cs, c in pairs:
        used.setdefault(cs, set()).add(c)
t.ok(not bad and set(used) >= {"tsc", "hpet"} and all(c == {plots.colour(cs)} for cs, c in used.items()),
     "each clocksource has one colour across every plot script (%s)" % ", ".join(sorted({n for n, _, _ in sc})),
     "\n".join(bad) + repr(used))


def yaxis_of(text):
    """A plot script's y axis: (log, [(label, value)], lo, hi)."""
    tics = re.search(r"^set ytics \((.*)\)$", text, re.M)
    rng = re.search(r"^set yrange \[([^:]+):([^\]]+)\]$", text, re.M)
    pairs = [(a, float(b)) for a, b in re.findall(r"'([^']*)' ([0-9.e+-]+)", tics.group(1))] if tics else []
    return ("set logscale y 10" in text, pairs, float(rng.group(1)) if rng else None, float(rng.group(2)) if rng else None)


def unreadable(name, chart, text):
    """Why a plot's y axis is not readable, or None: fewer than 4 labelled ticks inside its range, a point
    outside it, labels repeated, or a log axis for figures within a decade (a linear one for more)."""
    log, pairs, lo, hi = yaxis_of(text)
    ys = [y for s in chart.series for _, y in s.pts] or [v for b in chart.bars for v in (plots.cost(b),) + plots.cost_span(b)]
    inside = [v for _, v in pairs if lo is not None and lo <= v <= hi]
    if len(inside) < 4:
        return "%s: %d labelled ticks in [%s, %s]: %s" % (name, len(inside), lo, hi, pairs)
    if len({a for a, _ in pairs}) != len(pairs):
        return "%s: a tick label twice: %s" % (name, pairs)
    if not all(lo <= y <= hi for y in ys):
        return "%s: a figure outside [%s, %s]" % (name, lo, hi)
    if chart.series and log != (max(ys) / min(ys) >= 10):
        return "%s: %s axis for figures %g..%g" % (name, "log" if log else "linear", min(ys), max(ys))
    return None


VM = os.path.join(ROOT, "results", "20261130-174842-vm")  # a real run: host 27.7-32.8 ns, TCG guests, 2 vCPUs
every = [(r, n, txt, c) for r in ([BEFORE], [AFTER], [LAB], [NEW], [WL], [BEFORE, LAB]) + (([VM],) if os.path.isdir(VM) else ())
         for n, txt, c in scripts(r)]
# The issue's axis (20 to 50 ns, two labels) and a headline of bars near 1.0 (0.5, 1, 2: three labels).
narrow = plots.Chart("t", "x", "y", series=[plots.Series("a", "tsc", [(1, 27.7), (2, 27.8)]),
                                            plots.Series("b", "kvm-clock", [(1, 32.8), (2, 30.7)])])
close = plots.Chart("t", "", "y", groups=[("host", "read ns")], bars=[(0, "hpet", 105.0, 100.0, "ns")])
every += [(["synthetic"], n, plots.script(c, "svg", "/dev/null", "x.dat"), c) for n, c in (("narrow", narrow), ("close", close))]
why = [w for w in (unreadable("%s %s" % ("+".join(map(os.path.basename, r)), n), c, txt) for r, n, txt, c in every) if w]
t.ok(len(every) >= 20 and not why,
     "every plot's y axis (%d scripts: fixtures, a real run, 20-50 ns, bars near 1.0): 4+ labelled ticks in range, "
     "every figure inside, log only over a decade or more, else linear from 0" % len(every), "\n".join(why))
t.ok(yaxis_of(plots.script(narrow, "svg", "/dev/null", "x.dat"))[0] is False
     and [v for _, v in yaxis_of(plots.script(narrow, "svg", "/dev/null", "x.dat"))[1]] == [0, 10, 20, 30, 40]
     and "linear from 0" in plots.script(narrow, "svg", "/dev/null", "x.dat"),
     "27.7-32.8 ns: a linear axis 0, 10, 20, 30, 40, its label saying so",
     yaxis_of(plots.script(narrow, "svg", "/dev/null", "x.dat")))

# One x value (every guest of one vCPU count): points side by side, each with its figure; never a line.
single, bad = 0, []
for r, n, txt, c in every:
    if not c.series or len({x for s in c.series for x, _ in s.pts}) != 1:
        continue
    single += 1
    plot = next(ln for ln in txt.splitlines() if ln.startswith("plot "))
    drawn = re.findall(r"using \(\$1\*([0-9.e+-]+)\):2 with points ", plot)
    labels = re.findall(r"using \(\$1\*([0-9.e+-]+)\):2:\(sprintf\('%\.4g', \$2\)\) with labels ", plot)
    if "lines" in plot or len(drawn) != len(c.series) or len(set(drawn)) != len(drawn) or sorted(labels) != sorted(drawn):
        bad.append("%s %s: %s" % ("+".join(map(os.path.basename, r)), n, plot[:300]))
t.ok(single >= 5 and not bad, "a plot of one x value (%d: ns-vs-vcpus of one vCPU count, a 1-thread guest): "
     "points apart, each labelled with its figure, no line" % single, "\n".join(bad))

# A guest plot made only of emulated (TCG) rows says so in its title; one with a real row does not.
emu, bad = 0, []
for r, n, txt, c in every:
    if not c.series:
        continue
    all_emu = all(s.emulated for s in c.series)
    mark = "EMULATED: every figure here is QEMU TCG"
    titled = mark in c.title and mark in next((ln for ln in txt.splitlines() if ln.startswith("set title ")), "")
    emu += all_emu
    if all_emu != titled or ("EMULATED" in c.title) != all_emu:
        bad.append("%s %s: %d of %d series emulated, title %r" % ("+".join(map(os.path.basename, r)), n,
                                                                  sum(s.emulated for s in c.series), len(c.series), c.title))
t.ok(emu >= 4 and not bad, "a plot of emulated rows only (%d) says EMULATED (QEMU TCG) in its title; others do not" % emu,
     "\n".join(bad))
t.ok(plots.ytics(25, 1500) == [20, 50, 100, 200, 500, 1000, 2000]
     and plots.ytics(20, 300000) == [10, 30, 100, 300, 1000, 3000, 10000, 30000, 100000, 300000]
     and [plots.tick_label(v) for v in (0.05, 1.0, 1500.0, 1e6)] == ["0.05", "1", "1500", "1000000"],
     "ticks: 1-2-5 per decade, 1-3 over more than four decades, written without exponents")

if not shutil.which(os.environ.get("CB_GNUPLOT", "gnuplot")):
    for _ in range(11):
        t.skip("gnuplot not installed (Debian: gnuplot-nox)")
else:
    out = os.path.join(t.tmp, "p")
    rc, so, se = run("report", "-o", out, BEFORE, LAB)
    t.ok(rc == 0 and se == "", "report with plots exits 0", se)
    files = {}
    for name in NAMES:
        for ext in ("png", "svg"):
            p = os.path.join(out, "%s.%s" % (name, ext))
            files[p] = open(p, "rb").read() if os.path.exists(p) else b""
    pngs = [d for p, d in files.items() if p.endswith(".png")]
    t.ok(len(pngs) == 4 and all(d.startswith(b"\x89PNG\r\n\x1a\n") and len(d) > 5000 for d in pngs),
         "four PNGs, real images of more than 5 kB", [len(d) for d in pngs])
    svgs = {os.path.basename(p): d.decode(errors="replace") for p, d in files.items() if p.endswith(".svg")}
    thr, vcp = svgs.get("ns-vs-threads.svg", ""), svgs.get("ns-vs-vcpus.svg", "")
    t.ok("<svg" in thr and "20260101-120000-hv1: hpet" in thr and "20260301-120000-lab: tsc" in thr and "threads" in thr,
         "threads plot: SVG with one line per run and clocksource")
    t.ok("<svg" in vcp and "host on hpet" in vcp and "[EMULATED: tcg]" in vcp and "log scale" in vcp,
         "vCPU plot: SVG, the TCG line labelled EMULATED, log scale")
    g = blocks(os.path.join(out, "guest-ns-vs-threads.dat"))
    gsvg = svgs.get("guest-ns-vs-threads.svg", "")
    want = {"20260101-120000-hv1: host on tsc, 2 vCPU\t(clocksource tsc)": [["1", "28"], ["2", "31"]],
            "20260101-120000-hv1: host on hpet, 2 vCPU\t(clocksource hpet)": [["1", "187"], ["2", "244"]]}
    t.ok(all(g.get(k) == v for k, v in want.items()) and "threads in the guest" in gsvg and "[EMULATED: tcg]" in gsvg,
         "guests over threads: one line per guest (host clocksource, vCPUs), its medians by thread count", g)
    md = read(os.path.join(out, "report.md"))
    t.ok(all("](%s.png)" % n in md and "(%s.svg)" % n in md and "(%s.dat)" % n in md for n in NAMES),
         "every plot embedded (PNG) and linked (SVG, data) in report.md")
    alts = [ln for ln in md.splitlines() if ln.startswith("![")]
    t.ok(len(alts) == 4 and all(re.fullmatch(r"!\[[^\]]+\]\([a-z-]+\.png\)", a) for a in alts)
         and "[data](ns-vs-vcpus.dat); one vCPU count (2) in these results: the figures as points, no line to draw" in md
         and "one thread count" not in md,
         "report.md: each picture one line; a plot of one x value says so beside its links", alts)
    # Read costs alone (no workloads): the host and the guest at 1 thread.
    h = blocks(os.path.join(out, "headline.dat"))
    rows = {r[5]: r for r in h.get("clocksource hpet", [])}
    t.ok(list(h) == ["clocksource hpet"] and sorted(rows) == ["20260101-120000-hv1 guest 2 vCPU read ns (1 thread)",
                                                             "20260101-120000-hv1 host read ns (1 thread)"]
         and rows["20260101-120000-hv1 host read ns (1 thread)"][1:5] == ["60", "1500", "25", "ns"]
         and rows["20260101-120000-hv1 guest 2 vCPU read ns (1 thread)"][1:4] == ["6.67857", "187", "28"],
         "headline data without workloads: hpet's read against tsc's, host 1500/25 and guest 187/28; "
         "emulated runs left out", h)
    # With workloads: each one's rate against tsc's, from the result files.
    out = os.path.join(t.tmp, "w")
    rc, so, se = run("report", "-o", out, WL)
    h = blocks(os.path.join(out, "headline.dat"))
    got = {r[5]: float(r[1]) for r in h.get("clocksource hpet", [])}
    want = {}
    for where, suffix in (("host", ""), ("guest 2 vCPU", "-2vcpu")):
        a, b = doc(WL, "host-hpet.json" if not suffix else "guest-hpet%s.json" % suffix), \
            doc(WL, "host-tsc.json" if not suffix else "guest-tsc%s.json" % suffix)
        for w in a["workloads"]:
            bw = next(x for x in b["workloads"] if x["workload"] == w["workload"])
            want["%s %s %s" % (where, w["workload"], w["rate_unit"])] = bw["rate"] / w["rate"]  # a rate inverted: a cost
        ra = next(r for r in a["results"] if r.get("clock") == "monotonic" and r["method"] == "vdso" and r["threads"] == 1)
        rb = next(r for r in b["results"] if r.get("clock") == "monotonic" and r["method"] == "vdso" and r["threads"] == 1)
        want["%s read ns (1 thread)" % where] = ra["ns_per_call"]["median"] / rb["ns_per_call"]["median"]
    t.ok(rc == 0 and len(want) == 8 and set(got) == set(want) and all(abs(got[k] / want[k] - 1) < 1e-5 for k in want)
         and list(got)[:4] == ["host read ns (1 thread)", "host tcp-stream Gbit/s", "host tcp-rr transactions/s",
                               "host timer wakeups/s"],
         "headline data with workloads: host and guest read as ns / tsc's, each workload's rate inverted (tsc's / "
         "its): every bar a cost factor, above 1 slower", (se, got, want))
    # The kernel's own read, where null rows were measured: (syscall - null) against tsc's.
    kr = with_null_rows(BEFORE, os.path.join(t.tmp, "kr", os.path.basename(BEFORE)))
    out = os.path.join(t.tmp, "k")
    rc, so, se = run("report", "-o", out, kr)
    rows = {r[5]: r for r in blocks(os.path.join(out, "headline.dat")).get("clocksource hpet", [])}
    sysc = [next(r["ns_per_call"]["median"] for r in doc(BEFORE, f)["results"]
                 if r.get("clock") == "monotonic" and r["method"] == "syscall" and r["threads"] == 1)
            for f in ("host-hpet.json", "host-tsc.json")]
    k = rows.get("host kernel read ns", [None] * 6)
    t.ok(rc == 0 and k[2:5] == ["%g" % (sysc[0] - 20), "%g" % (sysc[1] - 20), "ns"]
         and abs(float(k[1]) / ((sysc[0] - 20) / (sysc[1] - 20)) - 1) < 1e-5,
         "headline data: the kernel's own read (syscall less null) against tsc's, where null was measured", (se, k, sysc))
    # Host files alone: one bar, above 1 (gnuplot 5.4 crashed on the empty
    # set of labels below 1; a headline must draw whatever its bars are).
    one = os.path.join(t.tmp, "one", os.path.basename(BEFORE))
    os.makedirs(one)
    for f in ("host-tsc.json", "host-hpet.json"):
        shutil.copy(os.path.join(BEFORE, f), one)
    out = os.path.join(t.tmp, "o")
    rc, so, se = run("report", "-o", out, one)
    t.ok(rc == 0 and len(blocks(os.path.join(out, "headline.dat")).get("clocksource hpet", [])) == 1
         and os.path.getsize(os.path.join(out, "headline.png")) > 5000,
         "a headline of one bar, above 1, draws", se)
    out = os.path.join(t.tmp, "l")
    rc, so, se = run("report", "-o", out, LAB)
    t.ok(rc == 0 and not os.path.exists(os.path.join(out, "headline.png"))
         and "No headline picture" in read(os.path.join(out, "report.md")),
         "no headline picture without a state beside its tsc baseline; the report says so", se)

# One direction, with intervals: five rounds (roundsfx).
import roundsfx  # noqa: E402
from cbcontract import rounds  # noqa: E402
rms = [m for _, rm in rounds.load_rounds(roundsfx.make(t.tmp)) for m in rm]
hc = next(c for n, c, _ in plots.charts(rms, False, lambda m: report.baseline(m, rms)) if n == "headline")
bars = {(hc.groups[b[0]][0], hc.groups[b[0]][1]): b for b in hc.bars}
rr, rd, tm = bars.get(("host", "tcp-rr"), ()), bars.get(("host", "read ns"), ()), bars.get(("host", "timer"), ())
t.ok("cost factor vs tsc (above 1 is slower)" in hc.title and "cost factor vs tsc (above 1 is slower)" in hc.ylabel
     and len([b for b in hc.bars if b[1] == "hpet"]) == len(hc.bars) == 10,
     "the headline's title and axis: cost factor vs tsc (above 1 is slower); one bar per figure, not per round", hc.title)
t.ok(rd and abs(plots.cost(rd) - 60) < 1e-9 and plots.cost_span(rd) == (58, 62)
     and tm and abs(plots.cost(tm) - 1 / 0.79) < 1e-9 and abs(plots.cost_span(tm)[0] - 1 / 0.81) < 1e-9
     and abs(plots.cost_span(tm)[1] - 1 / 0.77) < 1e-9 and tm[5].holds_one is False,
     "5 rounds: the read x60 [58, 62]; timer's rate 0.77..0.81 of tsc's as a cost 1/0.79 [1/0.81, 1/0.77]",
     (rd and rd[5].doc(), tm and tm[5].doc()))
t.ok(rr and rr[5].holds_one is True and abs(plots.cost_span(rr)[0] - 1 / 1.1) < 1e-9,
     "5 rounds: tcp-rr's rate ratios 0.90..1.10: its cost interval holds 1", rr and rr[5].doc())
txt = plots.script(hc, "svg", "/dev/null", "headline.dat")
plot = next(ln for ln in txt.splitlines() if ln.startswith("plot "))
dat = plots.data(hc)
rows = [ln.split("\t") for ln in dat.splitlines() if ln and not ln.startswith(("#", "x")) and len(ln.split("\t")) == 10]
same = {r[5]: r[8] for r in rows}
t.ok("with boxxyerror fs empty border" in plot and "with yerrorbars" in plot and "using 1:($9==1?1/0:$2)" in plot
     and same.get("host tcp-rr transactions/s") == "1" and same.get("host timer wakeups/s") == "0"
     and all(r[9] == "1" for r in rows),
     "the script: filled bars where a difference was measured, hollow where the interval holds 1, error bars from "
     "the data's lo and hi columns", plot)
one = next(c for n, c, _ in plots.charts(*(lambda ms: (ms, False, lambda m: report.baseline(m, ms)))(load.load_run(WL)))
           if n == "headline")
p1 = next(ln for ln in plots.script(one, "svg", "/dev/null", "x.dat").splitlines() if ln.startswith("plot "))
t.ok("yerrorbars" not in p1 and "fs empty" not in p1 and all(b[5].lo is None for b in one.bars),
     "one round: no error bars (no interval), no hollow bar", p1)
if shutil.which(os.environ.get("CB_GNUPLOT", "gnuplot")):
    out = os.path.join(t.tmp, "rounds-plot")
    os.mkdir(out)
    try:
        made = plots.plot(hc, os.path.join(out, "headline"))
        err = ""
    except Exception as e:  # noqa: BLE001 - said in the diagnostic
        made, err = [], str(e)
    t.ok(len(made) == 3 and os.path.getsize(os.path.join(out, "headline.png")) > 5000, "gnuplot draws the rounds' "
         "headline (error bars, hollow bars)", err)
else:
    t.skip("gnuplot not installed (Debian: gnuplot-nox)")

out = os.path.join(t.tmp, "n")
rc, so, se = run("report", "-o", out, BEFORE, env={"CB_GNUPLOT": "/nonexistent/gnuplot"})
t.ok(rc == 0 and "gnuplot-nox" in se and len(se.splitlines()) == 1 and "Plots skipped" in read(os.path.join(out, "report.md")),
     "without gnuplot: one warning, the report says so, exit 0", se)
out = os.path.join(t.tmp, "q")
rc, so, se = run("report", "--no-plots", "-o", out, BEFORE)
t.ok(rc == 0 and sorted(os.listdir(out)) == ["report.md"], "--no-plots: report.md alone", os.listdir(out) if os.path.isdir(out) else None)
t.done()
