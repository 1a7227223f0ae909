"""plots.py: the report's pictures (ns per call against threads and vCPUs, and each clocksource against tsc), with gnuplot.

Every picture colours a clocksource the same way (colour()), draws y on a
log scale where the figures span a decade or more and on a linear one from
0 where they do not, with at least MIN_TICKS labelled ticks either way
(yaxis()); a picture of one x value (every guest of one vCPU count) is
points side by side with their figures, not a line; one made only of
emulated rows says so in its title. Each leaves the data it drew beside it
(NAME.dat, tab-separated, one block per series) for a reader to check or
re-plot.

The headline picture has one direction: every bar a cost factor against
tsc, above 1 slower (a read's ns / tsc's, a rate's tsc / rate), drawn from
1 with its interval over rounds as an error bar (interval.py); a bar whose
interval holds 1 (no difference measured) is hollow.

No string of a result is gnuplot code: every name from a result (run ids,
clocksources, backends, labels of series and bars) reaches gnuplot only in
the data file (_field() makes each one a single field of one row; gnuplot
reads titles with columnheader and tick labels with xticlabels, and never
evaluates data), and the script holds only the project's own text, which
enters it at one place, _str(), with every byte outside a small safe set
written as an octal escape (so not even a file path can bring a backquote,
quote, @ or newline into the script).
"""
import math
import os
import re
import shutil
import subprocess
import zlib

from cbcontract.load import WORKLOADS
from cbcontract.runfolder import write_atomic
from cbcontract.util import InputError
from . import interval

GNUPLOT = os.environ.get("CB_GNUPLOT", "gnuplot")

# One colour per clocksource in every picture (Okabe-Ito, colour-blind safe);
# any other clocksource takes one of FALLBACK chosen by its name's CRC-32,
# the same in every run (Python's hash() is salted per process).
COLOURS = {"tsc": "#009e73", "hpet": "#d55e00", "acpi_pm": "#cc79a7", "kvm-clock": "#0072b2"}
FALLBACK = ("#e69f00", "#56b4e9", "#882255", "#44aa99", "#999933", "#332288")
POINTS = (7, 5, 9, 11, 13, 15)  # point types telling apart series of one colour (runs, vCPU counts)


def colour(cs):
    """The colour of clocksource cs, '#rrggbb'."""
    return COLOURS.get(cs) or FALLBACK[zlib.crc32(str(cs).encode()) % len(FALLBACK)]


def cs_key(cs):
    """tsc first, then the clocksources of COLOURS in its order, then the rest by name."""
    order = list(COLOURS)
    return (order.index(cs) if cs in order else len(order), str(cs))


def available():
    return shutil.which(GNUPLOT) is not None


_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ,.:=+-_/()[]#%")


def _str(s):
    """The one way a string enters a gnuplot script: a double-quoted string
    of safe bytes only, every other byte (quotes, backslash, backquote, $,
    @, ;, line breaks, non-ASCII) written as an octal escape, which gnuplot
    decodes after it has looked for backquotes and macros."""
    b = os.fsencode(s) if isinstance(s, (str, bytes)) else str(s).encode()
    return '"' + "".join(chr(c) if c in _SAFE else "\\%03o" % c for c in b) + '"'


_SURROGATE = re.compile("[\ud800-\udfff]")
FIELD = 160
_BREAKS = dict.fromkeys(list(range(0x20)) + [0x7f] + list(range(0x80, 0xa0)) + [0x2028, 0x2029], " ")
_BREAKS[ord('"')] = "'"  # a double quote would open a quoted field


def _field(s):
    """A string as one field of a tab-separated data file gnuplot reads:
    no tab, line break or other control character (they would split it or
    its row), no double quote (gnuplot would read a quoted field), lone
    surrogates replaced, at most FIELD characters (a picture's text, not a
    file's); never empty."""
    v = _SURROGATE.sub("\ufffd", str(s)[:FIELD].translate(_BREAKS))
    return v if v.strip() else "-"


class Series:
    """One line of a picture: label, the host clocksource that colours it,
    points [(x, y)], dashed when emulated, variant picking its point type."""

    def __init__(self, label, cs, pts, emulated=False, variant=0):
        self.label, self.cs, self.pts, self.emulated, self.variant = label, cs, pts, emulated, variant


class Chart:
    """A picture: title, axis labels, and either series (lines over x) or
    bars (the headline: groups of bars, one per clocksource, drawn from 1.0).
    A bar is (group index, clocksource, figure, tsc figure, unit, cost): cost
    an interval.Ratio of the cost factor over rounds; a bar given without
    it gets one round's, figure / tsc figure for ns, tsc / figure for a rate."""

    def __init__(self, title, xlabel, ylabel, series=None, groups=None, bars=None):
        self.title, self.xlabel, self.ylabel = title, xlabel, ylabel
        self.series, self.groups = series or [], groups or []
        self.bars = [b if len(b) == 6 else tuple(b) + (interval.Ratio([b[2] / b[3] if b[4] == "ns" else b[3] / b[2]]),)
                     for b in (bars or [])]


def cost(bar):
    """A bar's cost factor (the median over rounds)."""
    return bar[5].median


def cost_span(bar):
    """(lo, hi) of a bar's cost factor: its interval, or the factor itself without one."""
    q = bar[5]
    return (q.median, q.median) if q.lo is None else (q.lo, q.hi)


def _variants(items):
    """items: [(cs, key)]; numbers each key within its clocksource, in order, for point types."""
    seen, out = {}, []
    for cs, key in items:
        keys = seen.setdefault(cs, [])
        if key not in keys:
            keys.append(key)
        out.append(keys.index(key))
    return out


def _ordered(series, variant_of=lambda s: s.label.split(":")[0]):
    """series by clocksource and label, each given its point type: what
    variant_of(s) tells apart within a clocksource (by default the run)."""
    series.sort(key=lambda s: (cs_key(s.cs), s.label))
    for s, v in zip(series, _variants([(s.cs, variant_of(s)) for s in series])):
        s.variant = v
    return series


def _by_threads(measurements, kind, label_of):
    """One series per state of kind (host or guest) with a point, x = threads."""
    out = []
    for m in interval.firsts(measurements):
        pts = _pts(m, measurements) if m.kind == kind else []
        if pts:
            out.append(Series(label_of(m), m.host_cs, pts, m.emulated))
    return out


def _host_label(m, multi_run):
    label = "%s: %s" % (m.run, m.host_cs) if multi_run else m.host_cs
    return label + (" [EMULATED: tcg host]" if m.emulated else "")


def series_threads(measurements, multi_run):
    """Host files: one series per host clocksource, x = threads."""
    return _ordered(_by_threads(measurements, "host", lambda m: _host_label(m, multi_run)))


def _guest_label(m, multi_run, vcpus):
    label = "host on %s" % m.host_cs
    if vcpus:
        label += ", %d vCPU" % m.vcpus
    if m.backend and m.backend != "qemu":
        label += " (%s)" % m.backend
    if m.emulated:
        label += " [EMULATED: tcg]" if m.accel == "tcg" else " [EMULATED: tcg host]"
    return "%s: %s" % (m.run, label) if multi_run else label


def series_vcpus(measurements, multi_run):
    """Guest files: one series per host clocksource (and accelerator),
    x = vCPUs, y = the row with every vCPU reading."""
    groups = {}
    for m in interval.firsts(measurements):
        if m.kind != "guest":
            continue
        pts = _pts(m, measurements)
        if not pts:
            continue
        groups.setdefault((_guest_label(m, multi_run, False), m.host_cs, m.emulated), []).append((m.vcpus, pts[-1][1]))
    return _ordered([Series(label, cs, sorted(pts), emu) for (label, cs, emu), pts in groups.items()])


def series_guest_threads(measurements, multi_run):
    """Guest files: one series per guest (host clocksource, vCPUs), x = threads."""
    out = _by_threads(measurements, "guest", lambda m: _guest_label(m, multi_run, True))
    # vCPU counts (not runs) tell apart the lines of one clocksource here.
    return _ordered(out, lambda s: s.label.rsplit(", ", 1)[-1])


def _pts(m, ms):
    """m's headline medians by thread count, each the median over m's rounds; only those above 0."""
    out = []
    for r in m.headline():
        v = interval.value(m, ms, interval.row_fig(r))
        if v and v > 0:
            out.append((r.threads, v))
    return out


def _first_read(m):
    """m's headline read at its lowest thread count with a median, or None."""
    rows = [r for r in m.headline() if r.median and r.median > 0]
    return rows[0] if rows else None


def headline_bars(measurements, multi_run, baseline):
    """The headline picture's bars: per measured state other than tsc (emulated
    ones left out), its cost factor against baseline(m) (the state on a tsc
    host in m's own round), over m's rounds: the CLOCK_MONOTONIC vdso read at
    the lowest thread count and the kernel's own read (syscall less null)
    there, figure / tsc figure; each workload's rate inverted, tsc rate /
    rate (above 1 is work lost: slower).  Returns (groups, bars): groups the
    x labels in order, bars [(group index, clocksource, figure, tsc figure,
    unit, cost Ratio)], figures the medians over rounds; a group's label is
    a tuple of lines (run, where, what)."""
    found = {}
    for m in interval.firsts(measurements):
        b = baseline(m)
        if m.kind not in ("host", "guest") or m.emulated or b is None or b is m:
            continue
        pre = (m.run,) if multi_run else ()
        r = _first_read(m)
        br = b.row(r.clock, r.method, r.threads) if r else None
        items = []
        if r and br and br.median:
            items.append(((0,), ("read ns", "(%d thread%s)" % (r.threads, "" if r.threads == 1 else "s")),
                          interval.row_fig(r), "ns", False))
            kr = m.row(r.clock, "syscall", r.threads)
            kb = b.row(r.clock, "syscall", r.threads)
            if kr and kb and kr.kernel_read and kb.kernel_read:
                items.append(((1,), ("kernel read ns",), interval.row_fig(r, "kernel_read", "syscall"), "ns", False))
        for w in m.workloads:
            bw = [x for x in b.workloads if x.workload == w.workload and not x.after_change]
            if w.after_change or not bw or not w.rate or not bw[0].rate:
                continue
            items.append(((2, WORKLOADS.index(w.workload)), (w.workload, w.rate_unit), _rate_fig(w.workload),
                          w.rate_unit, True))
        for order, what, fig, unit, rate in items:
            q = interval.across(m, measurements, baseline, fig)
            if not q.n or (rate and not all(q.ratios)):
                continue
            v, bv = interval.value(m, measurements, fig), interval.value(b, measurements, fig)
            gkey = (m.run, m.kind != "host", m.vcpus or 0, m.backend or "", order)
            found.setdefault(gkey, (pre + (m.where,) + what, []))[1].append(
                (m.host_cs, v, bv, unit, q.inverted() if rate else q))
    groups, bars = [], []
    for gkey in sorted(found):
        label, vals = found[gkey]
        for cs, v, bv, unit, q in sorted(vals, key=lambda t: cs_key(t[0])):
            bars.append((len(groups), cs, v, bv, unit, q))
        groups.append(label)
    return groups, bars


def _rate_fig(name):
    """fig(x): x's rate of workload name, None where not run or run after a clocksource change."""
    def fig(x):
        w = x.workload(name)
        return None if w is None or w.after_change else w.rate
    return fig


def charts(measurements, multi_run, baseline):
    """Every picture of the report, in order: [(name, Chart or None, what is missing)]."""
    groups, bars = headline_bars(measurements, multi_run, baseline)
    c = None
    if bars:
        c = Chart("Each clocksource as a cost factor vs tsc (above 1 is slower): CLOCK_MONOTONIC read, the kernel's "
                  "read, workloads\n(reads: ns / tsc's ns; workload rates inverted: tsc's rate / rate; error bars: "
                  "the interval over rounds; hollow, labelled same: no difference measured)",
                  "", "cost factor vs tsc (above 1 is slower), log scale", groups=groups, bars=bars)
    out = [("headline", c, "No headline picture: no measured state beside its tsc baseline "
                           "(emulated states are left out).")]
    for name, series, xl, what, miss in (
            ("ns-vs-threads", series_threads(measurements, multi_run),
             "threads (each pinned to its own CPU, all reading)", "Host", "host"),
            ("ns-vs-vcpus", series_vcpus(measurements, multi_run), "guest vCPUs (all reading)", "Guests", "guest"),
            ("guest-ns-vs-threads", series_guest_threads(measurements, multi_run),
             "threads in the guest (each pinned to its own vCPU, all reading)", "Guests, by threads", "guest")):
        title = "%s: CLOCK_MONOTONIC (vdso method), median ns per call, by host clocksource" % what
        if series and all(s.emulated for s in series):
            title += "\n" + EMULATED_TITLE
        c = Chart(title, xl, "ns per call (median)", series=series) if series else None
        out.append((name, c, "No %s data for `%s`." % (miss, name)))
    return out


EMULATED_TITLE = "EMULATED: every figure here is QEMU TCG's, an emulator's timings, not a hypervisor's cost"
MIN_TICKS = 4  # labelled ticks on a y axis, at least
FINE = (1, 1.5, 2, 3, 5, 7)  # a log axis's ticks where 1-2-5 would label fewer than MIN_TICKS


def ytics(lo, hi, steps=None):
    """Log-axis ticks covering [lo, hi], one step beyond each end: 1-2-5 per
    decade over up to four decades, 1-3 beyond (readable, not crowded);
    FINE where 1-2-5 gives fewer than MIN_TICKS."""
    if steps is None:
        out = ytics(lo, hi, (1, 2, 5) if hi / lo <= 1e4 else (1, 3))
        return out if len(out) >= MIN_TICKS else ytics(lo, hi, FINE)
    out, dec = [], 10.0 ** math.floor(math.log10(lo))
    while not out or out[-1] < hi:
        for m in steps:
            out.append(float("%.12g" % (m * dec)))
        dec *= 10
    while len(out) > 1 and out[1] <= lo:
        out.pop(0)
    while len(out) > 1 and out[-2] >= hi:
        out.pop()
    return out


def linear_tics(hi):
    """Linear-axis ticks from 0 to just past hi (> 0): a step of 1, 2, 2.5
    or 5 times a power of ten, 4 (MIN_TICKS) to 7 ticks."""
    top = hi * 1.1  # room above the highest point and its label
    raw = top / 6  # a step of raw to 2 x raw: 4 to 7 ticks
    step = 10.0 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if m * step >= raw)
    n = int(math.ceil(top / step - 1e-9))
    return [round(i * step, 12) for i in range(max(n, MIN_TICKS - 1) + 1)]


def yaxis(vals, log=None):
    """The y axis for figures vals (all > 0): (log, ticks, lo, hi). A log
    axis where they span a decade or more (or log=True), its ticks by
    ytics(); else a linear one from 0 (a figure's zero, so heights compare
    truly), its ticks by linear_tics()."""
    lo, hi = min(vals), max(vals)
    if log is None:
        log = hi / lo >= 10
    if log:
        yt = ytics(lo, hi)
        return True, yt, yt[0], yt[-1]
    yt = linear_tics(hi)
    return False, yt, 0, yt[-1]


def tick_label(v):
    """A tick's text: no exponents ('0.02', '1500', '100000')."""
    return ("%.6f" % v).rstrip("0").rstrip(".")


LABEL_LINES = 4  # a bar group's label: run (several runs), where, what (up to two lines)


def _lines(label):
    """A bar group's label lines, at most LABEL_LINES (the rest joined into the last)."""
    parts = [p for p in label if str(p)] or ["-"]
    if len(parts) > LABEL_LINES:
        parts = parts[:LABEL_LINES - 1] + [" ".join(map(str, parts[LABEL_LINES - 1:]))]
    return parts


def data(chart):
    """The chart's data file: a header, then one block per series (lines)
    or per clocksource (bars), blocks apart by two empty lines (gnuplot's
    `index`), each opening with a comment naming it and a row of column
    headers (x, then the series' label or the clocksource: gnuplot's
    columnheader(2), the key's title); the bars add a last block, the
    groups' label lines (the x axis's labels).  Tab-separated; every
    string through _field()."""
    out = ["# clockbench: %s" % _field(chart.title)]
    if chart.series:
        out.append("# x\tmedian_ns")
        for s in chart.series:
            out += ["", "", "# %s\t(clocksource %s)" % (_field(s.label), _field(s.cs)), "x\t%s" % _field(s.label)]
            out += ["%g\t%.6g" % (x, y) for x, y in s.pts]
        return "\n".join(out) + "\n"
    out.append("# cost = the cost factor vs tsc, above 1 slower (ns: figure / tsc_figure; a rate: tsc_figure / "
               "figure), the median over rounds; lo, hi its interval (the cost itself without one, interval 0); "
               "same 1 where the interval holds 1 (no difference measured); x = the bar's place: group + offset")
    out.append("# x\tcost\tfigure\ttsc_figure\tunit\tgroup\tlo\thi\tsame\tinterval")
    for cs in _bar_css(chart):
        out += ["", "", "# clocksource %s" % _field(cs),
                "x\t%s\tfigure\ttsc_figure\tunit\tgroup\tlo\thi\tsame\tinterval" % _field(cs)]
        out += ["%.4f\t%.6g\t%.6g\t%.6g\t%s\t%s\t%.6g\t%.6g\t%d\t%d" % (
            x, cost(b), b[2], b[3], _field(b[4]), _field(" ".join(map(str, _lines(chart.groups[b[0]])))),
            cost_span(b)[0], cost_span(b)[1], b[5].holds_one is True, b[5].lo is not None)
            for c, x, b in _bar_places(chart) if c == cs]
    out += ["", "", "# groups: x, then the label's lines (- for none)", "x" + "".join("\tline%d" % (i + 1) for i in range(LABEL_LINES))]
    for i, g in enumerate(chart.groups):
        ls = [_field(x) for x in _lines(g)]
        # "-" for no line: gnuplot 5.4 reads an empty last field as stale text.
        out.append("%d\t%s" % (i, "\t".join(ls + ["-"] * (LABEL_LINES - len(ls)))))
    return "\n".join(out) + "\n"


def _bar_css(chart):
    return sorted({b[1] for b in chart.bars}, key=cs_key)


def _bar_places(chart):
    """[(clocksource, x, bar)] in data-file order: by clocksource, then group."""
    css = _bar_css(chart)
    w = min(0.8 / len(css), 0.3)
    out = []
    for j, cs in enumerate(css):
        for b in chart.bars:
            if b[1] == cs:
                out.append((cs, b[0] + (j - (len(css) - 1) / 2.0) * w, b))
    return out


def script(chart, fmt, out, datafile):
    """The gnuplot script drawing chart from datafile into out (fmt png or
    svg).  It holds no string of a result: those are in datafile (titles
    by columnheader, the bars' tick labels by xticlabels); the rest, the
    project's text and the two paths, through _str()."""
    width = max(960, 160 * len(chart.groups))  # room for each group's label
    lines = []
    if fmt == "png":
        lines.append("set terminal pngcairo size %d,640 noenhanced font ',10'" % width)
    else:
        lines.append("set terminal svg size %d,640 dynamic noenhanced font 'sans,11'" % width)
    df = _str(datafile)
    if chart.series:
        xs = sorted({x for s in chart.series for x, _ in s.pts})
        log, yt, lo, hi = yaxis([y for s in chart.series for _, y in s.pts])
        ylabel = chart.ylabel + (", log scale" if log else ", linear from 0")
    else:
        r = [v for b in chart.bars for v in (cost(b),) + cost_span(b)] + [1.0]
        log, yt, lo, hi = yaxis([min(r) / 1.6, max(r) * 1.6], log=True)  # room for the labels; 1.0 never an edge
        ylabel = chart.ylabel
    lines += ["set output %s" % _str(out), "set title %s" % _str(chart.title),
              "set ylabel %s" % _str(ylabel), "set datafile separator \"\\t\""]
    lines += ["set logscale y 10"] if log else []
    lines += ["set grid ytics", "set key tmargin center horizontal maxcols 3"]
    plots = []
    if chart.series:
        lines += ["set xlabel %s" % _str(chart.xlabel), "set logscale x 2", "set grid xtics",
                  "set xrange [%g:%g]" % (xs[0] / 1.5, xs[-1] * 1.5),
                  "set xtics (%s)" % ", ".join("'%d' %d" % (x, x) for x in xs)]
        n = len(chart.series)
        for i, s in enumerate(chart.series):
            lc = "lc rgb %s" % _str(colour(s.cs))
            pt = POINTS[s.variant % len(POINTS)]
            if len(xs) > 1:
                plots.append("%s index %d using 1:2 with linespoints lw 2 pt %d ps 1.2 %s%s title columnheader(2)"
                             % (df, i, pt, lc, " dt 2" if s.emulated else ""))
                continue
            # One x value: no line to draw; the series' points side by
            # side (a log-2 step apart each), each with its figure.
            f = 2.0 ** ((i - (n - 1) / 2.0) * min(0.15, 0.7 / max(n - 1, 1)))
            plots.append("%s index %d using ($1*%g):2 with points pt %d ps 1.8 %s title columnheader(2)"
                         % (df, i, f, pt, lc))
            plots.append("%s index %d using ($1*%g):2:(sprintf('%%.4g', $2)) with labels offset char 0,1.2 "
                         "font ',9' notitle" % (df, i, f))
    else:
        css = _bar_css(chart)
        w = min(0.8 / len(css), 0.3)
        lines += ["set xrange [-0.6:%g]" % (len(chart.groups) - 0.4), "set style fill solid 0.85 border -1",
                  "set xtics nomirror", "set bmargin 6",
                  "nl(c) = strcol(c) eq \"-\" ? \"\" : \"\\n\".strcol(c)"]
        for i, cs in enumerate(css):
            # Filled where a difference was measured (or one round, no
            # interval); hollow where the interval holds 1 (column 9).
            plots.append("%s index %d using 1:($9==1?1/0:$2):($1-%g):($1+%g):(1):($9==1?1/0:$2) with boxxyerror "
                         "lc rgb %s title columnheader(2)" % (df, i, w / 2, w / 2, _str(colour(cs))))
            if any(b[5].holds_one for b in chart.bars if b[1] == cs):
                plots.append("%s index %d using 1:($9==1?$2:1/0):($1-%g):($1+%g):(1):($9==1?$2:1/0) with boxxyerror "
                             "fs empty border lc rgb %s lw 2 notitle" % (df, i, w / 2, w / 2, _str(colour(cs))))
            if any(b[5].lo is not None for b in chart.bars if b[1] == cs):
                plots.append("%s index %d using 1:($10==1?$2:1/0):7:8 with yerrorbars lc rgb %s lw 1.5 pt 7 ps 0.5 notitle"
                             % (df, i, _str("#000000")))
            ratios = [cost(b) for b in chart.bars if b[1] == cs]
            # A label beyond the bar's end, up or down; only where some bar
            # is labelled (gnuplot 5.4 crashes on a labels plot of no point).
            for cond, off, some in ((">=", 0.8, max(ratios) >= 1), ("<", -0.8, min(ratios) < 1)):
                if some:
                    plots.append("%s index %d using 1:($2%s1?($2>=1?$8:$7):1/0):($9==1?'same':sprintf('x%%.2g', $2)) "
                                 "with labels offset 0,char %g font ',9' notitle" % (df, i, cond, off))
        plots.append("%s index %d using 1:(NaN):xticlabels(strcol(2)%s) notitle"
                     % (df, len(css), "".join(".nl(%d)" % (c + 3) for c in range(LABEL_LINES - 1))))
        plots.append("1 with lines lw 2 dt 2 lc rgb %s title 'tsc = 1.0'" % _str(colour("tsc")))
    lines += ["set ytics (%s)" % ", ".join("'%s' %g" % (tick_label(t), t) for t in yt),
              "set yrange [%g:%g]" % (lo, hi)]
    lines.append("plot " + ", ".join(plots))
    lines.append("unset output")
    return "\n".join(lines) + "\n"


def plot(chart, base):
    """Writes base.dat, then base.png and base.svg from it, both by one
    gnuplot (a start costs more than a picture): it writes each into a
    private folder beside them (runfolder.Private), whence it is renamed
    into place, its mode set on its descriptor; no name another user can
    change is written, chmodded or followed. Returns the three paths."""
    from cbcontract import runfolder
    datafile = base + ".dat"
    write_atomic(datafile, data(chart))
    outs = [datafile]
    fmts = ("png", "svg")
    try:
        with runfolder.Private(os.path.dirname(base) or ".") as priv:
            # gnuplot reaches both folders through their descriptors
            # (/proc/self/fd/N), never by a path that could be swapped.
            via = os.path.isdir("/proc/self/fd")
            dat = priv.fd_path(os.path.basename(datafile), private=False) if via else datafile
            # Each picture from a fresh state (reset: the first one's
            # settings never reach the second).
            text = "reset\n".join(script(chart, fmt, priv.fd_path("plot." + fmt) if via else priv.inside("plot." + fmt), dat)
                                  for fmt in fmts)
            try:
                p = subprocess.run([GNUPLOT], input=text, capture_output=True, text=True, timeout=60, pass_fds=priv.fds())
            except (OSError, subprocess.SubprocessError) as e:
                raise InputError("%s.%s" % (base, fmts[0]), "%s: %s" % (GNUPLOT, e))
            errs = [ln for ln in p.stderr.splitlines() if ln.strip()]
            for fmt in fmts:
                final, tmp = "%s.%s" % (base, fmt), "plot." + fmt
                if p.returncode != 0 or not os.path.lexists(priv.inside(tmp)) or priv.adopt(tmp) == 0:
                    raise InputError(final, "%s failed: %s" % (GNUPLOT, errs[-1] if errs else "exit %d" % p.returncode))
                priv.place(tmp, os.path.basename(final), replace=True)
                outs.append(final)
    except runfolder.RunFolderError as e:
        raise InputError(None, str(e))
    return outs
