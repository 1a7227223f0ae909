#!/usr/bin/python3
# tier: fast
"""badinput.t: missing, partial, corrupt and unknown-schema input: one line naming the file, exit 1 (2 for usage)."""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, ROOT, Tap, read, report_in_process  # noqa: E402


# clockbench-report's main() in this process (taplib.report_in_process).
in_process = report_in_process


def run(*args):
    return in_process(args, ROOT)

t = Tap()
host = read(os.path.join(BEFORE, "host-tsc.json"))
guest = read(os.path.join(BEFORE, "guest-tsc-2vcpu.json"))


def case(name, filename, content):
    """A run folder holding one file; returns (folder, file path)."""
    d = os.path.join(t.tmp, name)
    os.makedirs(d)
    p = os.path.join(d, filename)
    with open(p, "wb") as f:
        f.write(content if isinstance(content, bytes) else content.encode())
    return d, p


def edit(text, fn):
    doc = json.loads(text)
    fn(doc)
    return json.dumps(doc)


def one_line_error(args, path, words, what):
    rc, so, se = run(*args)
    lines = se.splitlines()
    good = (rc == 1 and so == "" and len(lines) == 1 and lines[0].startswith("clockbench-report: " + path + ": ")
            and words in lines[0] and "Traceback" not in se)
    t.ok(good, "%s: exit 1, one line naming %s" % (what, os.path.basename(path)), "rc %d: %s" % (rc, se))


cases = [
    ("empty", "host-tsc.json", "", "empty file (a partial write?)"),
    ("partial", "host-tsc.json", host[:len(host) // 2], "not valid JSON, truncated (a partial write?)"),
    ("corrupt", "host-tsc.json", host[:300] + "\x00#garbage#" + host[310:], "not valid JSON, corrupt"),
    ("binary", "host-tsc.json", b"\xff\xfe\x00\x01" * 10, "not UTF-8 text: corrupt"),
    ("array", "host-tsc.json", "[1, 2]", "not a JSON object"),
    ("nan", "host-tsc.json", host.replace('"median": 25.0', '"median": NaN', 1), "NaN is not allowed"),
    ("schema2", "host-tsc.json", edit(host, lambda d: d.update(schema="clockbench/2")),
     'unknown schema "clockbench/2" (this tool reads clockbench/1)'),
    ("noschema", "host-tsc.json", edit(host, lambda d: d.pop("schema")), 'no "schema" field'),
    ("gschema", "guest-tsc-2vcpu.json", edit(guest, lambda d: d.update(schema="clockbench-guest/2")),
     'unknown schema "clockbench-guest/2" (this tool reads clockbench-guest/1)'),
    ("gbench", "guest-tsc-2vcpu.json", edit(guest, lambda d: d["bench"].update(schema="clockbench/9")),
     'unknown bench.schema "clockbench/9"'),
    ("gnobench", "guest-tsc-2vcpu.json", edit(guest, lambda d: d.pop("bench")), "bench: missing"),
    ("row", "host-tsc.json", edit(host, lambda d: d["results"][4]["ns_per_call"].update(median="fast")),
     'results[4].ns_per_call.median: expected a number >= 0 or null, got "fast"'),
    ("grow", "guest-tsc-2vcpu.json", edit(guest, lambda d: d["bench"]["results"][1].update(threads=0)),
     "bench.results[1].threads: expected a positive integer, got 0"),
    ("noresults", "host-tsc.json", edit(host, lambda d: d.pop("results")), "results: expected a list"),
]
for name, fn, content, words in cases:
    d, p = case(name, fn, content)
    one_line_error(["report", "--no-plots", "-o", os.path.join(t.tmp, "out-" + name), d], p, words, name)

one_line_error(["report", "/nonexistent/run"], "/nonexistent/run", "no such run folder", "a missing run folder")
os.makedirs(os.path.join(t.tmp, "nothing"))
one_line_error(["report", os.path.join(t.tmp, "nothing")], os.path.join(t.tmp, "nothing"),
               "no host-*.json or guest-*.json result files", "a folder without results")
one_line_error(["report", os.path.join(BEFORE, "host-tsc.json")], os.path.join(BEFORE, "host-tsc.json"),
               "not a folder", "a file given as a run folder")
one_line_error(["report", "--results", os.path.join(t.tmp, "nothing")], os.path.join(t.tmp, "nothing"),
               "no run folder with", "no run at all under --results")
d = os.path.join(t.tmp, "partial")
p = os.path.join(d, "host-tsc.json")
one_line_error(["diff", BEFORE, d], p, "truncated", "diff with a partial file")
one_line_error(["prom", "-o", os.path.join(t.tmp, "x.prom"), d], p, "truncated", "prom with a partial file")
t.ok(not os.path.exists(os.path.join(t.tmp, "x.prom")), "prom writes nothing when the input is bad")

# --skip-bad: warn, go on with the good files.
mix = os.path.join(t.tmp, "mix")
shutil.copytree(BEFORE, mix)
with open(os.path.join(mix, "host-hpet.json"), "w") as f:
    f.write(host[:100])
rc, so, se = run("report", "--no-plots", "--skip-bad", "-o", os.path.join(t.tmp, "out-mix"), mix)
t.ok(rc == 0 and len(se.splitlines()) == 1 and "skipped " + os.path.join(mix, "host-hpet.json") in se and
     "| tsc | 1 | 25.00 |" in read(os.path.join(t.tmp, "out-mix", "report.md")), "--skip-bad: one warning, the rest reported", se)

rc, so, se = run("frobnicate")
t.ok(rc == 1 and se.startswith("clockbench-report: frobnicate: no such run folder"), "a first word no command: "
     "report's RUN, not found: exit 1, one line", se)
for args, what in (([], "no subcommand"), (["--frobnicate"], "an unknown option first"), (["report", "--bogus"], "an unknown option"),
                   (["prom", BEFORE], "prom without -o"), (["prom", "-o", "x", BEFORE, BEFORE], "prom with two runs")):
    rc, so, se = run(*args)
    t.ok(rc == 2 and len(se.splitlines()) == 1 and se.startswith("clockbench-report: ") and "Traceback" not in se,
         "usage: %s: exit 2, one line" % what, "rc %d: %s" % (rc, se))
t.done()
