#!/usr/bin/python3
# tier: fast
"""workloads.t: each row of names.h's workload catalog (CB_WORKLOAD) reaches every place that names a workload
(TAP): the engine accepts and runs it and writes its rate in the row's unit under its name; the loader reads it
with that unit; the summary's table has its column in that unit; the report names it.  A workload written
into one of those places by hand, not from the row, fails here when the row changes."""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
from taplib import Tap, skip_all  # noqa: E402
from cbcontract import load, names  # noqa: E402

t = Tap()
ENGINE = os.path.join(ROOT, "bench", "clockbench")
if not os.access(ENGINE, os.X_OK):
    skip_all("bench/clockbench not built (make)")
rows = names.WORKLOADS
t.ok(len(rows) >= 3 and len({w.name for w in rows}) == len(rows), "names.h: %d workload rows, one a name" % len(rows))

# The engine: --help lists each, and one run of them all writes each under its name, in its unit.
hlp = subprocess.run([ENGINE, "--help"], capture_output=True, text=True).stdout
t.ok(all(w.name in hlp for w in rows), "the engine's --help names each workload")
res = os.path.join(t.tmp, "results")
p = subprocess.run([os.path.join(ROOT, "host-scripts", "bench-host"), "--workloads=" + ",".join(w.name for w in rows),
                    "--duration=50ms", "--clocks=monotonic", "--methods=vdso", "--threads=1", res, "wl"],
                   capture_output=True, text=True, timeout=120)
run = os.path.join(res, "wl")
js = [f for f in os.listdir(run) if f.startswith("host-") and f.endswith(".json")] if os.path.isdir(run) else []
doc = json.load(open(os.path.join(run, js[0]))) if js else {}
got = {w.get("workload"): w.get("rate_unit") for w in doc.get("workloads") or []}
t.ok(p.returncode == 0 and got == {w.name: w.unit for w in rows},
     "the engine ran each and wrote its rate under its name in the row's unit", "%s %s" % (got, p.stderr[-300:]))

# The loader.
m = load.load_host(os.path.join(run, js[0])) if js else None
t.ok(m is not None and all(m.workload(w.name) is not None and m.workload(w.name).rate_unit == w.unit for w in rows),
     "the loader reads each with the row's unit")

# The screen and the report.
scr = subprocess.run([os.path.join(ROOT, "analysis", "clockbench-report"), "summary", "--screen",
                      "--report-out", os.path.join(t.tmp, "report"), run], capture_output=True, text=True, timeout=120)
out = scr.stdout + scr.stderr
summ = os.path.join(run, "summary.md")
head = next((ln for ln in open(summ) if ln.startswith("| host clocksource")), "") if os.path.exists(summ) else ""
t.ok(scr.returncode == 0 and all("| %s %s |" % (w.name, w.unit) in head + "|" for w in rows),
     "the summary's table has a column for each workload in the row's unit", head + out[-500:])
rep = os.path.join(t.tmp, "report", "report.md")
text = open(rep).read() if os.path.exists(rep) else ""
t.ok(text and all(w.name in text for w in rows), "the report names each workload", rep)
t.done()
