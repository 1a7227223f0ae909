#!/usr/bin/python3
# tier: fast
"""running-vm.t: compare's running-VM step read back (TAP).  A real step recorded on this project's machine
(tests/host-scripts/fixtures/running-vm: Linux 6.18.44, nested KVM, QEMU 7.2): its raw trace's phases, read again by
runningvm.phases, are the file's; the loader's sentence says what was measured (stable bit on, off on the fallback,
still off after the return, back after the pause, the pause's length), from the phases, never from the file's words;
a kernel that turned the master clock back on by itself, an incomplete trace and forged files (an unknown phase, a
fallback the name does not carry, a stable bit that is not a boolean, another schema) are said or refused in one
line; the summary of a run folder that holds the file shows the row in summary.md, summary.json and the screen,
its strings cut, and a file that does not load costs that one line;
bench-running-vm's usage errors."""
import copy
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts"), os.path.join(ROOT, "analysis")]
from taplib import BEFORE, Tap, read, run  # noqa: E402
from cbcontract import load  # noqa: E402
from cbcontract.util import InputError  # noqa: E402
from cbhost import kvmtrace, runningvm  # noqa: E402

t = Tap()
FX = os.path.join(ROOT, "tests", "host-scripts", "fixtures", "running-vm")
JS, RAW = os.path.join(FX, "running-vm-kvm-clock.json"), os.path.join(FX, "running-vm-kvm-clock.txt")
doc = json.load(open(JS))

ph = runningvm.phases(kvmtrace.Lines(RAW), doc["vm"]["pid"])
t.ok(ph == doc["phases"], "the raw trace's phases, read again, are the recorded file's", json.dumps(ph)[:400])
by = {p["phase"]: p for p in ph}
t.ok(by["before"]["stable_bit"] and by["fallback"]["stable_bit"] is False and by["return"]["stable_bit"] is False
     and not by["return"]["master_on_updates"] and by["heal"]["stable_bit"] and by["heal"]["master_clock"],
     "recorded: on before, off on kvm-clock, still off after the return, back after the pause and resume")
m = load.load_running_vm(JS)
s = m.sentence()
t.ok(s.startswith("on tsc the stable bit on; on kvm-clock off; after the return to tsc it stayed off (")
     and "no master-clock update" in s and "pause and resume brought it back (the pause took 1.5 ms)" in s,
     "the sentence says what was measured", s)


def variant(name, edit, fname="running-vm-kvm-clock.json"):
    d = os.path.join(t.tmp, name)
    os.makedirs(d)
    v = copy.deepcopy(doc)
    edit(v)
    p = os.path.join(d, fname)
    with open(p, "w") as f:
        json.dump(v, f)
    return p


def by_phase(v, name):
    return next(p for p in v["phases"] if p["phase"] == name)


p = variant("selfheal", lambda v: by_phase(v, "return").update(stable_bit=True, master_clock=True, master_on_updates=1))
t.ok("came back by itself" in load.load_running_vm(p).sentence(), "a kernel that turned the master clock back on: said")
p = variant("nopause", lambda v: by_phase(v, "heal").update(stable_bit=False, master_clock=False, master_on_updates=0))
t.ok("did not bring it back" in load.load_running_vm(p).sentence(), "a pause that did not bring it back: said")
p = variant("lost", lambda v: v.update(complete=False))
t.ok("not trusted" in load.load_running_vm(p).sentence(), "a trace that lost events: said not trusted")
p = variant("claims", lambda v: v.update(sentence="all healthy, nothing to see"))
t.ok("all healthy" not in load.load_running_vm(p).sentence(), "the file's own words are never the sentence")
for name, edit, fname, want in (
        ("phase", lambda v: v["phases"][0].update(phase="later"), None, "phases[0].phase"),
        ("bit", lambda v: v["phases"][1].update(stable_bit="yes"), None, "phases[1].stable_bit"),
        ("name", lambda v: None, "running-vm-hpet.json", "not this file's"),
        ("schema", lambda v: v.update(schema="clockbench-running-vm/9"), None, "unknown schema"),
        ("count", lambda v: v["phases"][2].update(pvclock_without=-1), None, "phases[2].pvclock_without")):
    p = variant("bad-" + name, edit, fname or "running-vm-kvm-clock.json")
    try:
        load.load_running_vm(p)
        got = "read"
    except InputError as e:
        got = str(e)
    t.ok(want in got and "\n" not in got, "a forged file (%s) refused in one line" % name, got)

# The summary of a run folder with the step's file.
d = os.path.join(t.tmp, "20260101-120000-hv1")
shutil.copytree(BEFORE, d)
shutil.copy(JS, d)
rc, so, se = run("summary", d, "--screen")
md = read(os.path.join(d, "summary.md")) if rc == 0 else ""
sj = json.loads(read(os.path.join(d, "summary.json"))) if rc == 0 else {}
t.ok("## VMs running across a switch" in md and "- A VM running across the switch to kvm-clock: on tsc" in md,
     "summary.md: the row of the VM that ran across the switch", se)
rv = sj.get("running_vms") or [{}]
t.ok(rv[0].get("fallback") == "kvm-clock" and rv[0].get("text") == s and rv[0].get("pause_ms") == doc["pause_ms"],
     "summary.json: running_vms, with the phases' sentence")
t.ok("A VM running across the switch to kvm-clock: on tsc the stable bit on" in so
     and max(len(x) for x in so.split("\n")) <= 100, "the screen: the row, wrapped at 100 columns", so[-600:])

rc, so, se = run("report", d, "-o", os.path.join(t.tmp, "report"), "--no-plots")
rep = read(os.path.join(t.tmp, "report", "report.md")) if rc == 0 else ""
t.ok("## VMs running across a switch" in rep and m.line() in rep, "report.md: the same row", se)

# A 2 MB host_kernel (and hostclock) is cut on every screen and file; a second file that does not load
# costs one line, the summary written all the same.
d = os.path.join(t.tmp, "20260101-120000-hv2")
shutil.copytree(BEFORE, d)
big = copy.deepcopy(doc)
big["host_kernel"] = "6.1-" + "k" * (2 << 20)
by_phase(big, "return")["hostclock"] = "h" * (2 << 20)
with open(os.path.join(d, "running-vm-kvm-clock.json"), "w") as f:
    json.dump(big, f)
rc, so, se = run("summary", d, "--screen")
md = read(os.path.join(d, "summary.md")) if rc == 0 else ""
sj = read(os.path.join(d, "summary.json")) if rc == 0 else ""
longest = max(len(x) for x in (so + md).split("\n"))
t.ok(rc == 0 and "- A VM running across the switch to kvm-clock: on tsc" in md and len(so.splitlines()) < 200
     and longest <= 400 and len(sj) < 100000,
     "a 2 MB host_kernel and hostclock: cut (exit %d, %d screen lines, the longest line %d, summary.json %d bytes)"
     % (rc, len(so.splitlines()), longest, len(sj)), se[-300:])
d = os.path.join(t.tmp, "20260101-120000-hv3")
shutil.copytree(BEFORE, d)
shutil.copy(JS, d)
with open(os.path.join(d, "running-vm-hpet.json"), "w") as f:
    json.dump(doc, f)  # its fallback is kvm-clock: not this file's
rc, so, se = run("summary", d, "--screen")
md = read(os.path.join(d, "summary.md")) if rc == 0 else ""
bad = [x for x in md.splitlines() if "running-vm-hpet.json" in x]
t.ok(rc == 0 and len(bad) == 1 and "not read" in bad[0] and "to kvm-clock: on tsc" in md and "not this file's" in bad[0]
     and "running-vm-hpet.json" in so, "a running-vm file that does not load: one line in summary.md and on the "
     "screen, the rest written", bad)

# bench-running-vm's usage.
BR = os.path.join(ROOT, "host-scripts", "bench-running-vm")
for args, want in ((["--help"], 0), (["--bogus"], 2), (["--run-dir", t.tmp], 2),
                   (["--run-dir", t.tmp, "--fallback", "a b"], 2), (["--phase-seconds", "0", "--run-dir", t.tmp, "--fallback", "hpet"], 2)):
    r = subprocess.run([sys.executable, BR] + args, capture_output=True, text=True, timeout=30)
    t.ok(r.returncode == want and (want == 0 or len(r.stderr.strip().splitlines()) == 1),
         "bench-running-vm %s: exit %d%s" % (" ".join(args), want, "" if want == 0 else ", one line"), r.stderr)
# The running VM's own view, from a real repeating guest's channel (QEMU TCG, -cpu max, 2026-12-06: 8 result
# frames): each phase's results after its first, their path and medians.
CHAN = os.path.join(FX, "guest-repeat.chan")
t.ok(runningvm.frames_in(CHAN) == 8, "a repeating guest's channel: 8 whole frames", runningvm.frames_in(CHAN))
v = runningvm.guest_view(CHAN, [("before", 3), ("fallback", 5), ("return", 8)])
t.ok([(p["phase"], p["results"], p["paths"]) for p in v] == [("before", 2, ["user"]), ("fallback", 1, ["user"]),
                                                               ("return", 2, ["user"])]
     and all(len(p["median_ns"]) == p["results"] for p in v),
     "per phase: its results but the first (which may have begun before it), their path and medians", v)
m = dict(doc, in_guest={"measured": True, "phases": v})
with open(os.path.join(t.tmp, "running-vm-kvm-clock.json"), "w") as f:
    json.dump(m, f)
rv = load.load_running_vm(os.path.join(t.tmp, "running-vm-kvm-clock.json"))
t.ok("the guest's own CLOCK_MONOTONIC reads: before user (median" in rv.sentence(), "the sentence says the guest's view",
     rv.sentence())
m["in_guest"]["phases"][0]["paths"] = ["user; rm -rf /"]
with open(os.path.join(t.tmp, "running-vm-kvm-clock.json"), "w") as f:
    json.dump(m, f)
try:
    load.load_running_vm(os.path.join(t.tmp, "running-vm-kvm-clock.json"))
    t.ok(False, "a guest path that is no path: refused")
except InputError as e:
    t.ok("in_guest.phases[0].paths" in str(e), "a guest path that is no path: refused in one line", str(e))
t.done()
