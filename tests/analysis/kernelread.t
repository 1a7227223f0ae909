#!/usr/bin/python3
# tier: fast
"""kernelread.t: kernel_read_ns (a syscall row's median less the null row's of its thread count) through the
one loader, the report and the Prometheus file; older files without it still load; a file that contradicts
itself is refused in one line."""
import copy
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, ROOT, Tap, read, run, table_row  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
from cbcontract import load  # noqa: E402
from cbcontract.util import InputError  # noqa: E402

t = Tap()


def with_null(doc, nulls):
    """Adds null rows ({threads: median}) to a clockbench/1 document and the
    syscall rows' fields, as the engine writes them (docs/schema.md)."""
    rows = doc["results"]
    base = next(r for r in rows if r["method"] == "rdtsc")
    for th, med in sorted(nulls.items()):
        r = copy.deepcopy(base)
        r.update(method="null", threads=th)
        r["ns_per_call"] = {q: med for q in load.QUANTS}
        rows.append(r)
    for r in rows:
        if r["method"] != "syscall":
            continue
        nm = nulls.get(r["threads"])
        d = None if nm is None else r["ns_per_call"]["median"] - nm
        r["null_median_ns"] = nm
        r["kernel_read_ns"] = None if d is None or d < 0 else round(d, 2)
        r["kernel_read_negative"] = d is not None and d < 0


def bench(doc):
    return doc["bench"] if "bench" in doc else doc


# host tsc: monotonic 250/260 less 220/230 = 30/30, realtime 240/270 = 20/40.
# host hpet: null only at 1 thread: 1450 - 230 = 1220 (x tsc 1220/30 = 40.67).
# guest on tsc: 400 - 410 goes negative at 1 thread; 420 - 380 = 40 at 2.
# guest on hpet: an older file, no null rows.
NULLS = {"host-tsc.json": {1: 220.0, 2: 230.0}, "host-hpet.json": {1: 230.0}, "guest-tsc-2vcpu.json": {1: 410.0, 2: 380.0}}
d = os.path.join(t.tmp, "20260101-120000-hv1")
shutil.copytree(BEFORE, d)


def edit(name, fn):
    p = os.path.join(d, name)
    doc = json.loads(read(p))
    fn(doc)
    with open(p, "w") as f:
        json.dump(doc, f)


for name, nulls in NULLS.items():
    edit(name, lambda doc, n=nulls: with_null(bench(doc), n))

ms = {os.path.basename(m.path): m for m in load.load_run(d)}
got = {n: [(r.clock, r.threads, r.null_median, r.kernel_read, r.kernel_read_negative)
           for r in ms[n].rows if r.method == "syscall" and r.clock == "monotonic"] for n in NULLS}
t.ok(got == {"host-tsc.json": [("monotonic", 1, 220.0, 30.0, False), ("monotonic", 2, 230.0, 30.0, False)],
             "host-hpet.json": [("monotonic", 1, 230.0, 1220.0, False), ("monotonic", 2, None, None, False)],
             "guest-tsc-2vcpu.json": [("monotonic", 1, 410.0, None, True), ("monotonic", 2, 380.0, 40.0, False)]},
     "the loader reads null_median_ns, kernel_read_ns and kernel_read_negative of every syscall row", got)
old = [(r.null_median, r.kernel_read, r.kernel_read_negative) for m in load.load_run(BEFORE) for r in m.rows]
t.ok(old and set(old) == {(None, None, False)}, "older files, without the fields, load: unknown, not negative", set(old))

out = os.path.join(t.tmp, "r")
rc, so, se = run("report", "--no-plots", "-o", out, d)
md = read(os.path.join(out, "report.md")) if rc == 0 else ""
sec = md.split("## The kernel's own clock read, ns", 1)[-1].split("\n## ", 1)[0] if md else ""
t.ok(rc == 0 and sec != md and md.index("## The kernel's own clock read") < md.index("## Capacity planning"),
     "the report has a section for the kernel's read, before capacity planning", se)
t.ok(table_row(sec, "host", "tsc", "1") == ["host", "tsc", "1", "250.00", "220.00", "30.00", "1.00"]
     and table_row(sec, "host", "tsc", "2") == ["host", "tsc", "2", "260.00", "230.00", "30.00", "1.00"],
     "host on tsc: 250 - 220 = 30.00, 260 - 230 = 30.00", [table_row(sec, "host", "tsc", n) for n in "12"])
t.ok(table_row(sec, "host", "hpet", "1") == ["host", "hpet", "1", "1450.00", "230.00", "1220.00", "x40.67 [n/a (1 round)]"],
     "host on hpet: 1450 - 230 = 1220.00, x tsc 1220/30 = 40.67", table_row(sec, "host", "hpet", "1"))
t.ok(table_row(sec, "host", "hpet", "2") == ["host", "hpet", "2", "1850.00", "n/a", "n/a (null not measured)", "n/a"],
     "null not measured beside that row: n/a, said why", table_row(sec, "host", "hpet", "2"))
g = table_row(sec, "guest 2 vCPU", "tsc", "1")
t.ok(g == ["guest 2 vCPU", "tsc", "1", "400.00", "410.00", "n/a (below the null call)", "n/a"],
     "a negative subtraction: n/a and named, never 0", g)
t.ok(table_row(sec, "guest 2 vCPU", "tsc", "2") == ["guest 2 vCPU", "tsc", "2", "420.00", "380.00", "40.00", "1.00"],
     "guest on tsc, 2 threads: 420 - 380 = 40.00", table_row(sec, "guest 2 vCPU", "tsc", "2"))
t.ok("No `null` rows in guest-hpet-2vcpu.json" in sec and table_row(sec, "guest 2 vCPU", "hpet") is None,
     "a file without null rows is named, not tabled", sec)
out0 = os.path.join(t.tmp, "r0")
rc, so, se = run("report", "--no-plots", "-o", out0, BEFORE)
md0 = read(os.path.join(out0, "report.md")) if rc == 0 else ""
t.ok(rc == 0 and "No `null` rows in host-tsc.json, host-hpet.json, guest-tsc-2vcpu.json, guest-hpet-2vcpu.json:" in md0,
     "a run of older files: the report says the kernel's read was not measured", se)

prom = os.path.join(t.tmp, "k.prom")
rc, so, se = run("prom", "-o", prom, d)
lines = read(prom).splitlines() if rc == 0 else []
name = "node_clockbench_kernel_clock_read_seconds"
want = ['%s{where="host",clocksource="tsc",clock="monotonic",threads="1"} 3e-08' % name,
        '%s{where="host",clocksource="tsc",clock="monotonic",threads="2"} 3e-08' % name,
        '%s{where="host",clocksource="hpet",clock="monotonic",threads="1"} 1.22e-06' % name,
        '%s{where="guest",clocksource="tsc",vcpus="2",clock="monotonic",threads="2"} 4e-08' % name]
have = [ln for ln in lines if ln.startswith(name + "{")]
t.ok(rc == 0 and sorted(have) == sorted(want) and "# TYPE %s gauge" % name in lines,
     "prom: kernel read in seconds, monotonic only, none where it is not known", have or se)
t.ok('node_clockbench_clock_read_median_seconds{where="host",clocksource="hpet",clock="none",method="null",threads="1"} 2.3e-07'
     in lines, "prom: the null median itself beside it")
rc, so, se = run("prom", "--all-clocks", "-o", prom, d)
t.ok(rc == 0 and '%s{where="host",clocksource="tsc",clock="realtime",threads="2"} 4e-08' % name in read(prom),
     "prom --all-clocks: every clock's (270 - 230 = 40 ns)", se)
if shutil.which("promtool"):
    p = subprocess.run(["promtool", "check", "metrics"], stdin=open(prom), capture_output=True, text=True)
    t.ok(p.returncode == 0, "promtool check metrics, with the kernel read", p.stdout + p.stderr)
else:
    t.skip("promtool not installed (Debian: prometheus)")


# A file that contradicts itself is refused, in one line naming the field.
def row(doc, threads):
    return next(r for r in bench(doc)["results"] if r["method"] == "syscall" and r["clock"] == "monotonic"
                and r["threads"] == threads)


BAD = [
    ("kernel_read_ns off by 1", lambda doc: row(doc, 1).update(kernel_read_ns=31.0), "kernel_read_ns: 31.0"),
    ("named negative but positive", lambda doc: row(doc, 1).update(kernel_read_ns=None, kernel_read_negative=True),
     "kernel_read_negative: true"),
    ("null but not named", lambda doc: row(doc, 1).update(kernel_read_ns=None), "kernel_read_ns: null"),
    ("without the null median", lambda doc: row(doc, 1).update(null_median_ns=None), "kernel_read_ns: 30.0"),
    ("a string", lambda doc: row(doc, 2).update(kernel_read_ns="30"), "expected a number >= 0 or null"),
    ("negative flag not a bool", lambda doc: row(doc, 2).update(kernel_read_negative=0), "expected true or false"),
]
for what, fn, msg in BAD:
    b = os.path.join(t.tmp, "bad-" + what.replace(" ", "-"))
    shutil.copytree(d, b)
    p = os.path.join(b, "host-tsc.json")
    doc = json.loads(read(p))
    fn(doc)
    with open(p, "w") as f:
        json.dump(doc, f)
    rc, so, se = run("report", "--no-plots", "-o", b + ".out", b)
    t.ok(rc == 1 and len(se.splitlines()) == 1 and p in se and msg in se, "refused: %s" % what, se)
try:
    load.load_host(os.path.join(d, "host-tsc.json"))
    t.ok(True, "load_host reads the edited file directly")
except InputError as e:
    t.ok(False, "load_host reads the edited file directly", e)
t.done()
