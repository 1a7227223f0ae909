#!/usr/bin/env python3
"""plots.t: PNG and SVG plots drawn, not empty, embedded; a missing gnuplot skips them without failing."""
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import BEFORE, LAB, Tap, read, run  # noqa: E402

t = Tap()
if not shutil.which(os.environ.get("GNUPLOT", "gnuplot")):
    for _ in range(5):
        t.skip("gnuplot not installed (Debian: gnuplot-nox)")
else:
    out = os.path.join(t.tmp, "p")
    rc, so, se = run("report", "-o", out, BEFORE, LAB)
    t.ok(rc == 0 and se == "", "report with plots exits 0", se)
    files = {}
    for name in ("ns-vs-threads", "ns-vs-vcpus"):
        for ext in ("png", "svg"):
            p = os.path.join(out, "%s.%s" % (name, ext))
            files[p] = open(p, "rb").read() if os.path.exists(p) else b""
    pngs = [d for p, d in files.items() if p.endswith(".png")]
    t.ok(all(d.startswith(b"\x89PNG\r\n\x1a\n") and len(d) > 5000 for d in pngs),
         "two PNGs, real images of more than 5 kB", [len(d) for d in pngs])
    svgs = {p: d.decode(errors="replace") for p, d in files.items() if p.endswith(".svg")}
    thr = svgs.get(os.path.join(out, "ns-vs-threads.svg"), "")
    vcp = svgs.get(os.path.join(out, "ns-vs-vcpus.svg"), "")
    t.ok("<svg" in thr and "20260101-120000-hv1: hpet" in thr and "20260301-120000-lab: tsc" in thr and "threads" in thr,
         "threads plot: SVG with one line per run and clocksource")
    t.ok("<svg" in vcp and "host on hpet" in vcp and "[EMULATED: tcg]" in vcp and "log scale" in vcp,
         "vCPU plot: SVG, the TCG line labelled EMULATED, log scale")
    md = read(os.path.join(out, "report.md"))
    t.ok("](ns-vs-threads.png)" in md and "](ns-vs-vcpus.png)" in md and "(ns-vs-vcpus.svg)" in md,
         "both plots embedded (PNG) and linked (SVG) in report.md")

out = os.path.join(t.tmp, "n")
rc, so, se = run("report", "-o", out, BEFORE, env={"GNUPLOT": "/nonexistent/gnuplot"})
t.ok(rc == 0 and "gnuplot-nox" in se and len(se.splitlines()) == 1 and "Plots skipped" in read(os.path.join(out, "report.md")),
     "without gnuplot: one warning, the report says so, exit 0", se)
out = os.path.join(t.tmp, "q")
rc, so, se = run("report", "--no-plots", "-o", out, BEFORE)
t.ok(rc == 0 and sorted(os.listdir(out)) == ["report.md"], "--no-plots: report.md alone", os.listdir(out) if os.path.isdir(out) else None)
t.done()
