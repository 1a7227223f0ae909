"""plots.py: ns per call against threads and against vCPUs, PNG and SVG, with gnuplot."""
import math
import os
import shutil
import subprocess
import tempfile

from .util import InputError

GNUPLOT = os.environ.get("GNUPLOT", "gnuplot")


def available():
    return shutil.which(GNUPLOT) is not None


def _q(s):
    """A gnuplot double-quoted string."""
    return '"' + str(s).replace("\\", "\\\\").replace('"', '\\"') + '"'


def series_threads(measurements, multi_run):
    """Host files: one series per host clocksource, x = threads."""
    out = []
    for m in measurements:
        if m.kind != "host":
            continue
        pts = [(r.threads, r.median) for r in m.headline() if r.median and r.median > 0]
        if pts:
            label = ("%s: %s" % (m.run, m.host_cs)) if multi_run else m.host_cs
            if m.emulated:
                label += " [EMULATED: tcg host]"
            out.append((label, pts, m.emulated))
    return out


def series_vcpus(measurements, multi_run):
    """Guest files: one series per host clocksource (and accelerator),
    x = vCPUs, y = the row with every vCPU reading."""
    groups = {}
    for m in measurements:
        if m.kind != "guest":
            continue
        rows = [r for r in m.headline() if r.median and r.median > 0]
        if not rows:
            continue
        r = max(rows, key=lambda r: r.threads)
        label = "host on %s" % m.host_cs
        if m.backend and m.backend != "qemu":
            label += " (%s)" % m.backend
        if m.emulated:
            label += " [EMULATED: tcg]" if m.accel == "tcg" else " [EMULATED: tcg host]"
        if multi_run:
            label = "%s: %s" % (m.run, label)
        groups.setdefault((label, m.emulated), []).append((m.vcpus, r.median))
    return [(label, sorted(pts), emu) for (label, emu), pts in sorted(groups.items())]


def ytics(lo, hi):
    """1-2-5 steps covering [lo, hi], one step beyond each end."""
    out, dec = [], 10.0 ** math.floor(math.log10(lo))
    while not out or out[-1] < hi:
        for m in (1, 2, 5):
            out.append(m * dec)
        dec *= 10
    while len(out) > 1 and out[1] <= lo:
        out.pop(0)
    while len(out) > 1 and out[-2] >= hi:
        out.pop()
    return out


def _script(series, xlabel, title, fmt, out):
    xs = sorted({x for _, pts, _ in series for x, _ in pts})
    ys = [y for _, pts, _ in series for _, y in pts]
    yt = ytics(min(ys), max(ys))
    lines = []
    if fmt == "png":
        lines.append("set terminal pngcairo size 960,640 noenhanced font ',10'")
    else:
        lines.append("set terminal svg size 960,640 dynamic noenhanced font 'sans,11'")
    lines += ["set output %s" % _q(out),
              "set title %s" % _q(title),
              "set xlabel %s" % _q(xlabel),
              "set ylabel 'ns per call (median), log scale'",
              "set logscale y 10", "set logscale x 2",
              "set xrange [%g:%g]" % (xs[0] / 1.5, xs[-1] * 1.5),
              "set xtics (%s)" % ", ".join("'%d' %d" % (x, x) for x in xs),
              "set ytics (%s)" % ", ".join("'%g' %g" % (t, t) for t in yt),
              "set yrange [%g:%g]" % ((yt[0], yt[-1]) if len(yt) > 1 else (yt[0] / 2, yt[0] * 2)),
              "set grid", "set key tmargin center horizontal maxcols 2"]
    plots = []
    for i, (label, pts, emu) in enumerate(series):
        lines.append("$d%d << EOD" % i)
        lines += ["%d %.6g" % (x, y) for x, y in pts]
        lines.append("EOD")
        style = "linespoints lw 2 pt 7 ps 1.2" + (" dt 2" if emu else "")
        plots.append("$d%d using 1:2 with %s title %s" % (i, style, _q(label)))
    lines.append("plot " + ", ".join(plots))
    lines.append("unset output")
    return "\n".join(lines) + "\n"


def plot(series, xlabel, title, base):
    """Writes base.png and base.svg (each to a temporary name, then renamed).
    Returns the two paths."""
    outs = []
    for fmt in ("png", "svg"):
        final = "%s.%s" % (base, fmt)
        d = os.path.dirname(os.path.abspath(final))
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(final) + ".", suffix=".tmp", dir=d)
        os.close(fd)
        try:
            try:
                p = subprocess.run([GNUPLOT], input=_script(series, xlabel, title, fmt, tmp),
                                   capture_output=True, text=True, timeout=60)
            except (OSError, subprocess.SubprocessError) as e:
                raise InputError(final, "%s: %s" % (GNUPLOT, e))
            errs = [ln for ln in p.stderr.splitlines() if ln.strip()]
            if p.returncode != 0 or os.path.getsize(tmp) == 0:
                raise InputError(final, "%s failed: %s" % (GNUPLOT, errs[-1] if errs else "exit %d" % p.returncode))
            os.chmod(tmp, 0o644)
            os.rename(tmp, final)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        outs.append(final)
    return outs
