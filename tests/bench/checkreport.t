#!/usr/bin/python3
# tier: fast
"""checkreport.t: tests/bench/check_report.py (run-real.t's checker) passes the engine's own output and fails each broken field."""
import csv
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap, read  # noqa: E402

CHECK = os.path.join(ROOT, "tests", "bench", "check_report.py")
ENGINE = os.path.join(ROOT, "bench", "clockbench")
CASES = 10
t = Tap()
if not os.access(ENGINE, os.X_OK):
    for _ in range(CASES):
        t.skip("bench/clockbench not built (make)")
    t.done()
base = os.path.join(t.tmp, "run")
p = subprocess.run([ENGINE, "--clocks", "monotonic", "--methods", "vdso,rdtsc", "--threads", "1", "--duration", "0.05",
                    "--check", "none", "--quiet", "--format", "text", "--json", base + ".json", "--csv", base + ".csv"],
                   capture_output=True, text=True)
with open(base + ".txt", "w") as f:
    f.write(p.stdout)


def check(name, edit=None, *extra):
    """check_report.py on a copy of the run, edit(json doc, csv rows, text) applied: (rc, stdout, stderr)."""
    d = os.path.join(t.tmp, name)
    os.makedirs(d)
    doc, text = json.loads(read(base + ".json")), read(base + ".txt")
    with open(base + ".csv", newline="") as f:
        rows = list(csv.DictReader(f))
    if edit:
        text = edit(doc, rows, text) or text  # an edit of the text returns it
    with open(os.path.join(d, "r.json"), "w") as f:
        json.dump(doc, f)
    with open(os.path.join(d, "r.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(d, "r.txt"), "w") as f:
        f.write(text)
    q = subprocess.run([sys.executable, CHECK] + [os.path.join(d, "r." + x) for x in ("json", "csv", "txt")] + list(extra),
                       capture_output=True, text=True)
    return q.returncode, q.stdout, q.stderr


rc, so, se = check("good", None, "--expect-path=monotonic:vdso:user")
t.ok(p.returncode == 0 and rc == 0 and so == "", "the engine's output: JSON, CSV and text agree", so + se + p.stderr)


def vdso(doc):
    return [r for r in doc["results"] if r["method"] == "vdso"][0]


def text_cell(text, method, old, new, column=None):
    """The text table's line of method with the cell old replaced by new
    (the one under the header's column when given: min and median can be
    the same figure)."""
    lines = text.split("\n")
    h = next(i for i, ln in enumerate(lines) if ln.split()[:2] == ["clock", "method"])
    at = lines[h].index(" " + column) + 1 + len(column) - len(old) if column else None
    for i in range(h + 1, len(lines)):
        ln = lines[i]
        if not ln.strip():
            break
        if ln.split()[1:2] == [method]:
            if at is None:
                lines[i] = ln.replace(old, new, 1)
            else:
                assert ln[at:at + len(old)] == old, (ln, at, old)
                lines[i] = ln[:at] + new + ln[at + len(old):]
    return "\n".join(lines)


def below(doc, rows, text):
    """The median below the loop overhead, written as the engine writes it in all three."""
    r = vdso(doc)
    med = "%.2f" % r["ns_per_call"]["median"]
    r["ns_per_call"]["median"] = None
    r["below_overhead"] = ["median"]
    c = [x for x in rows if x["method"] == "vdso"][0]
    c.update(ns_median="", below_overhead="median")
    return text_cell(text, "vdso", " " + med, " " * (len(med) - 3) + "<ovh", "median")


rc, so, se = check("below", below)
t.ok(rc == 0 and so == "", "a median below the loop overhead, null and named: accepted", so + se)
broken = [
    ("schema", lambda doc, rows, text: doc.update(schema="clockbench/2"), 'unknown schema "clockbench/2"'),
    ("unnamed", lambda doc, rows, text: vdso(doc)["ns_per_call"].update(median=None),
     "results[0].ns_per_call.median: null but not named in below_overhead"),
    ("raw", lambda doc, rows, text: vdso(doc)["ns_per_call_raw"].update(median=0.5), "exceeds the raw one"),
    ("context", lambda doc, rows, text: doc["context"].__delitem__("clocksource_end"), "context lacks clocksource_end"),
    ("changed", lambda doc, rows, text: doc["changed_during_run"].update(detail="tsc -> hpet"), "changed_during_run is"),
    ("csv", lambda doc, rows, text: rows[0].update(ns_p99="12345.67"), "CSV ns_p99='12345.67' but JSON"),
    ("text", lambda doc, rows, text: text_cell(text, "vdso", "%.2f " % vdso(doc)["ns_per_call"]["p99"], "99999.99 "),
     "text: row monotonic vdso user 1"),
]
for name, edit, words in broken:
    rc, so, se = check(name, edit)
    t.ok(rc == 1 and words in so and se == "", "a broken %s: exit 1, saying what" % name, so + se)
rc, so, se = check("usage", None, "--expect-path=monotonic")
t.ok(rc == 2 and "usage:" in se, "a bad option: usage, exit 2", so + se)
shutil.rmtree(os.path.join(t.tmp, "good"))
t.done()
