#!/usr/bin/python3
# tier: slow
"""lab-assert.t: the lab's table (lab/states.cfg, lab/labtable.py) and its
assertions (lab/assert.py) on a recorded lab folder, tests/host-scripts/fixtures/lab:
states 1 and 3 of the lab of 2026-11-29 and state 2 of 2026-11-30 in the
run-folder layout (the guest result, its kvm-trace-*.json and raw trace, the
guest's console with its kernel's lines; state 3's raw trace a small
stand-in with its counts); L1's host bench and TSC-rate check of states 1
and 2 come from a later lab; states 6, 8, 9 and 10 from labs of 2026-12-01
(its README.md says which).  State 9 is checked in both outcomes (no
verdict as recorded; a verdict's lines appended), state 10 (a plain
compare on an L1 that lost its TSC) against evidence edited to show a
failure: a ratio printed, exit 1, the cause missing, a tsc row.
Each evidence file is deleted, then emptied, in turn: exactly the
assertions that read it fail; FIFOs in place of evidence files are refused
without waiting."""
import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "lab")]
from taplib import Tap  # noqa: E402
import labtable  # noqa: E402

FX = os.path.join(ROOT, "tests", "host-scripts", "fixtures", "lab")
t = Tap()


ASSERT = os.path.join(ROOT, "lab", "assert.py")
with open(ASSERT) as _f:
    ASSERT_CODE = compile(_f.read(), ASSERT, "exec")


def in_process(folder, states):
    """(exit status, stdout, stderr) of assert.py FOLDER STATES run in this
    process: a fresh module of it each time (its own counts), main() as the
    command line calls it.  A new interpreter per call cost some 0.3 s of
    startup and compiling, ten times the assertions' own work."""
    out, err, path = io.StringIO(), io.StringIO(), list(sys.path)
    g = {"__name__": "lab_assert", "__file__": ASSERT, "__builtins__": __builtins__}
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            exec(ASSERT_CODE, g)
            rc = g["main"]([ASSERT, folder, states])
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 1
        except Exception:  # noqa: B902  (as the interpreter would: a traceback, exit 1)
            traceback.print_exc()
            rc = 1
        finally:
            sys.path[:] = path
    return rc, out.getvalue(), err.getvalue()


def lab(folder, states="1,2,3", proc=False):
    """(exit status, TAP text, {(state, key): passed}) of assert.py: in this
    process, or with proc as a command of its own."""
    if proc:
        p = subprocess.run([sys.executable, ASSERT, folder, states], capture_output=True, text=True)
        rc, so, se = p.returncode, p.stdout, p.stderr
    else:
        rc, so, se = in_process(folder, states)
    seen = {}
    for line in so.splitlines():
        m = re.match(r"^(not )?ok \d+ - state (\d+)\b.*?: (.*)$", line)
        if m:
            seen[(int(m.group(2)), key(m.group(3)))] = m.group(1) is None
    return rc, so + se, seen


KEYS = [("harness run succeeded", "run"), ("a guest result", "result"), ("traced for the guest's own", "subject"),
        ("raw trace is complete", "complete"), ("measuring window marked", "window"), ("L1's TSC", "l1_tsc"),
        ("master clock", "master_clock"), ("hostclock", "hostclock"), ("STABLE_BIT", "stable_bit"),
        ("over QEMU's life", "tsc_offset_writes"), ("while the guest measured", "window_tsc_offset_writes"),
        ("guest's clocksource", "guest_clocksource"), ("Marking stable", "sched_clock_stable"),
        ("running VM's own", "running_vm_guest_paths"), ("clock_gettime path", "path"),
        ("after the failed attempt", "failed_restore"),
        ("after the run", "restore"), ("kernel's own clock read", "l1_kernel_read_vs_tsc"),
        ("through the vDSO", "l1_vdso_read_vs_tsc"),
        ("RTC update interrupts", "l1_rtc_edges"),
        ("against the RTC, |ppm|", "l1_rtc_ppm_abs")]


def key(desc):
    return next((k for words, k in KEYS if words in desc), desc)


def copy():
    d = tempfile.mkdtemp(dir=t.tmp)
    shutil.rmtree(d)
    shutil.copytree(FX, d)
    return d


def failing(seen):
    return {k for k, good in seen.items() if not good}


rc, out, seen = lab(FX, proc=True)
t.ok(rc == 0 and seen and all(seen.values()) and out.rstrip().endswith("%d passed, 0 failed" % len(seen)),
     "the recorded states 1, 2 and 3 pass (%d assertions)" % len(seen), out)
every3 = {k for k in seen if k[0] == 3}
t.ok({k for s, k in every3} == {"run", "result", "subject", "complete", "window", "restore"}
     | {f for f, _, _ in next(s for s in labtable.load() if s.n == 3).expect},
     "state 3 asserts its table row's facts and the checks of every state")

# Evidence file -> the assertions of state 3 (or 1) that read it, when it
# is missing (and when it is empty, where that differs).
S3_TRACE = {"complete", "window", "master_clock", "hostclock", "stable_bit", "tsc_offset_writes",
            "window_tsc_offset_writes"}
S3_RESULT = {"result", "subject", "path"} | S3_TRACE
L1_HOST = {"l1_vdso_read_vs_tsc"}
L1_RATE = {"l1_rtc_edges", "l1_rtc_ppm_abs"}
EVIDENCE = [
    ("state-3/guest-hpet-2vcpu.json", 3, S3_RESULT),
    # The loader refuses a guest result whose trace file is unreadable.
    ("state-3/kvm-trace-hpet-2vcpu.json", 3, ({"subject"}, S3_RESULT)),
    ("state-3/kvm-trace-hpet-2vcpu.txt", 3, S3_TRACE),
    ("state-3/guest-hpet-2vcpu.console.log", 3, {"sched_clock_stable"}),
    ("l1-3.dmesg.txt", 3, {"l1_tsc"}),
    # State 3 runs on whatever L1 fell back to: only L1's facts name it.
    ("l1-3.facts.txt", 3, {k for s, k in every3} - {"run"}),
    ("state-3.clocksource-after", 3, {"restore"}),
    ("state-1/kvm-trace-tsc-1vcpu.txt", 1, {"complete", "window", "master_clock", "hostclock", "stable_bit"}),
    ("state-1/guest-tsc-1vcpu.console.log", 1, {"guest_clocksource", "sched_clock_stable"}),
    ("l1-1-2.dmesg.txt", 1, {"l1_tsc"}),
    # State 2 runs on hpet by the table: L1's facts name only its own
    # clocksource, to be back on after the run.
    ("l1-1-2.facts.txt", 1, {"l1_tsc", "restore", (2, "restore")}),
    # L1's figures in state 2, against state 1's (the tsc state).
    ("state-2/host-hpet.json", 2, L1_HOST),
    ("state-1/host-tsc.json", 2, L1_HOST),
    ("state-2/tsc-rate-hpet.json", 2, L1_RATE),
]
for name, s, wants in EVIDENCE:
    for how, want in zip(("deleted", "empty"), wants if isinstance(wants, tuple) else (wants, wants)):
        d = copy()
        if how == "deleted":
            os.unlink(os.path.join(d, name))
        else:
            open(os.path.join(d, name), "w").close()
        rc, out, seen2 = lab(d)
        got = failing(seen2)
        want = {k if isinstance(k, tuple) else (s, k) for k in want}
        t.ok(rc == 1 and got == want,
             "%s %s: exactly its %d assertions fail" % (name, how, len(want)),
             "exit %d; failing %s; expected %s" % (rc, sorted(got), sorted(want)))
# A FIFO (or device) in place of an evidence file is refused without
# waiting for a writer, as the loader refuses one: the assertions reading
# it fail as for a missing file, naming what it is.
# The running VM's own view: a guest that still read in user space after
# the return (a kernel that gave the bit back, or a wrong reading) fails.
d = copy()
rv = os.path.join(d, "state-2", "running-vm-hpet.json")
with open(rv) as f:
    doc = json.load(f)
doc["in_guest"]["phases"][2]["paths"] = ["user"]
with open(rv, "w") as f:
    json.dump(doc, f)
rc, out, seen2 = lab(d)
t.ok(rc == 1 and failing(seen2) == {(2, "running_vm_guest_paths")},
     "state 2: a running VM that read in user space after the return fails running_vm_guest_paths alone",
     repr(failing(seen2)))

d = copy()
fifos = ("l1-3.dmesg.txt", "state-3/guest-hpet-2vcpu.console.log", "state-3.clocksource-after", "state-3.log")
for name in fifos:
    os.unlink(os.path.join(d, name))
    os.mkfifo(os.path.join(d, name))
try:
    p = subprocess.run([sys.executable, os.path.join(ROOT, "lab", "assert.py"), d, "3"], capture_output=True,
                       text=True, timeout=60)
    rc, out = p.returncode, p.stdout + p.stderr
except subprocess.TimeoutExpired:
    rc, out = None, "still waiting after 60 s"
got = {k for s, k in failing(dict(((int(m.group(2)), key(m.group(3))), m.group(1) is None) for m in
                                  re.finditer(r"(?m)^(not )?ok \d+ - state (\d+)\b.*?: (.*)$", out)))}
t.ok(rc == 1 and {"l1_tsc", "sched_clock_stable", "restore"} <= got and "regular file" in out
     and "Traceback" not in out,
     "%d evidence files as FIFOs: refused without waiting, their assertions fail naming them (exit %s)"
     % (len(fifos), rc), out[-600:])
d = copy()
os.unlink(os.path.join(d, "progress.log"))
rc, out, seen2 = lab(d)
t.ok(rc == 1 and failing(seen2) == {(1, "run"), (2, "run"), (3, "run")}, "no progress log: no state is known to have run",
     sorted(failing(seen2)))


# L1's figures in state 2 (hpet) against state 1's (tsc): each assertion
# fails when its direction or bound does not hold.
def edit_json(d, name, fn):
    p = os.path.join(d, name)
    with open(p) as f:
        doc = json.load(f)
    fn(doc)
    with open(p, "w") as f:
        json.dump(doc, f)


def row(doc, method):
    return next(r for r in doc["results"] if r["method"] == method and r["clock"] == "monotonic" and r["threads"] == 1)


def wl(doc, name):
    return next(w for w in doc["workloads"] if w["workload"] == name)


with open(os.path.join(FX, "state-1", "host-tsc.json")) as f:
    tsc_doc = json.load(f)


def as_tsc_state(doc):
    """state 2's syscall row and tcp-stream as state 1's: no slower read, no
    slower stream."""
    for m in ("syscall", "vdso"):
        r = row(doc, m)
        r.update({k: v for k, v in row(tsc_doc, m).items() if k != "clocksource"})
    w = wl(doc, "tcp-stream")
    w.update({k: v for k, v in wl(tsc_doc, "tcp-stream").items() if k != "clocksource"})


def no_rtc(doc):
    doc["checks"]["tsc_rate"]["rtc"].update({"available": False, "reason": "no /dev/rtc0 on this machine", "edges": None,
                                             "tsc_hz": None, "ppm": None, "jitter_us": None})


def ppm(v):
    def fn(doc):
        tr = doc["checks"]["tsc_rate"]
        ref = (tr["kernel_tsc_khz"] or tr["engine_tsc_khz"]) * 1000
        tr["rtc"].update({"ppm": v, "tsc_hz": round(ref * (1 + v * 1e-6), 1)})
    return fn


def few_edges(doc):
    doc["checks"]["tsc_rate"]["rtc"]["edges"] = 3


def negative_tsc_read(doc):
    """noise: state 1's syscall median below its null median."""
    r = row(doc, "syscall")
    r["ns_per_call"] = {k: (v - r["ns_per_call"]["median"] + r["null_median_ns"] - 5 if v is not None else None)
                        for k, v in r["ns_per_call"].items()}
    r["kernel_read_ns"], r["kernel_read_negative"] = None, True


for what, name, fn, want in (
        ("state 2's syscall and vdso rows and tcp-stream as state 1's", "state-2/host-hpet.json", as_tsc_state,
         {(2, "l1_vdso_read_vs_tsc")}),
        ("no RTC in L1", "state-2/tsc-rate-hpet.json", no_rtc, {(2, "l1_rtc_edges"), (2, "l1_rtc_ppm_abs")}),
        ("the TSC 12000 ppm fast against the RTC", "state-2/tsc-rate-hpet.json", ppm(12000.0), {(2, "l1_rtc_ppm_abs")}),
        ("the TSC 12000 ppm slow", "state-2/tsc-rate-hpet.json", ppm(-12000.0), {(2, "l1_rtc_ppm_abs")}),
        ("3 RTC edges", "state-2/tsc-rate-hpet.json", few_edges, {(2, "l1_rtc_edges")}),
        ("state 1's kernel read negative (noise): counted as 1 ns", "state-1/host-tsc.json", negative_tsc_read, set())):
    d = copy()
    edit_json(d, name, fn)
    rc, out, seen2 = lab(d, "1,2")
    t.ok(rc == (1 if want else 0) and failing(seen2) == want, "%s: %s" % (what, "exactly %s fail" % ", ".join(
        sorted(k for _, k in want)) if want else "all pass"), out)
    if what == "no RTC in L1":
        t.ok("no answer from the RTC: no /dev/rtc0 on this machine" in out, "the RTC's absence is said, with the reason",
             out)
# State 2 without state 1: its comparison is skipped, said so.
d = copy()
for ext in ("dmesg", "facts"):
    shutil.copy(os.path.join(d, "l1-1-2.%s.txt" % ext), os.path.join(d, "l1-2.%s.txt" % ext))
rc, out, seen2 = lab(d, "2")
t.ok(rc == 0 and len(re.findall(r"^ok \d+ - state 2: .*tsc state's .* # SKIP the tsc state was not run", out, re.M)) == 1,
     "state 2 alone: its comparison with the tsc state is skipped, saying why", out)

# The TSC-unstable verdict is the kernel's reaction, never the boot
# parameter the lab set: without the marking line, with a last switch to
# tsc, or with L1 still on tsc, there is no verdict.
for what, edit in (("no 'Marking TSC unstable' line", lambda t_: re.sub(r".*Marking TSC unstable.*\n", "", t_)),
                   ("a last switch to tsc", lambda t_: t_ + "[    9.0] clocksource: Switched to clocksource tsc\n")):
    d = copy()
    p = os.path.join(d, "l1-3.dmesg.txt")
    with open(p) as f:
        text = f.read()
    with open(p, "w") as f:
        f.write(edit(text))
    rc, out, seen2 = lab(d, "3")
    t.ok(rc == 1 and failing(seen2) == {(3, "l1_tsc")}, "L1's TSC is not unstable with %s (tsc=unstable on the "
         "command line notwithstanding)" % what, out)
d = copy()
with open(os.path.join(d, "l1-3.facts.txt")) as f:
    text = f.read()
with open(os.path.join(d, "l1-3.facts.txt"), "w") as f:
    f.write(text.replace("clocksource hpet", "clocksource tsc"))
rc, out, seen2 = lab(d, "3")
t.ok(rc == 1 and (3, "l1_tsc") in failing(seen2), "L1's TSC is not unstable while L1 is on tsc", out)

# Counts hold to the table: a trace with few TSC-offset writes fails state 3.
d = copy()
p = os.path.join(d, "state-3", "kvm-trace-hpet-2vcpu.txt")
with open(p) as f:
    lines = f.readlines()
keep = [x for i, x in enumerate(lines) if "kvm_write_tsc_offset" not in x or i % 3 == 0]
with open(p, "w") as f:
    f.writelines(keep)
rc, out, seen2 = lab(d, "3")
t.ok(rc == 1 and failing(seen2) >= {(3, "tsc_offset_writes"), (3, "window_tsc_offset_writes")},
     "a state-3 trace with under 100 TSC-offset writes fails", out)

# A state that fails twice fails the lab, results or not.
d = copy()
with open(os.path.join(d, "progress.log"), "a") as f:
    f.write("1795982900 start state 3\n1795982990 failed state 3 (exit 1, attempt 2)\n")
rc, out, seen2 = lab(d)
t.ok(rc == 1 and failing(seen2) == {(3, "run")} and "failed state 3 (exit 1, attempt 2)" in out,
     "a state whose last attempt failed fails the lab (exit 1)", out)

# A retried state: the failed attempt's log in TAP comments, and the
# clocksource rule for it too.
d = copy()
with open(os.path.join(d, "state-3.attempt-1.log"), "w") as f:
    f.write("clockbench: [hpet] the guest run left no result\n")
with open(os.path.join(d, "state-3.attempt-1.clocksource-after"), "w") as f:
    f.write("hpet\n")
rc, out, seen2 = lab(d, "3")
t.ok(rc == 0 and "# state 3: attempt 1 failed" in out and
     "#   clockbench: [hpet] the guest run left no result" in out and seen2.get((3, "failed_restore")) is True,
     "a retried state says so, with the failed attempt's log, in TAP comments", out)
# Its second attempt failed too (state 3 may try three times): both are
# reported, the guest's console kept from L1's scratch space among them.
with open(os.path.join(d, "state-3.attempt-2.log"), "w") as f:
    f.write("bench-guest: guest timed out after 120s\n")
with open(os.path.join(d, "state-3.attempt-2.clocksource-after"), "w") as f:
    f.write("hpet\n")
os.makedirs(os.path.join(d, "state-3.attempt-2.guest-work", "clockbench-guest.x"))
with open(os.path.join(d, "state-3.attempt-2.guest-work", "clockbench-guest.x", "console.log"), "w") as f:
    f.write("[  100.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 22s!\n")
with open(os.path.join(d, "state-3.attempt-2.ps.txt"), "w") as f:
    f.write("  PID  PPID STAT     ELAPSED WCHAN                    COMMAND\n"
            "  411   410 D          07:40 kvm_vcpu_block           qemu-system-x86_64 -accel kvm\n"
            "    1     0 S          15:00 do_wait                  /bin/busybox sh /init\n")
rc, out, seen2 = lab(d, "3")
t.ok(rc == 0 and "# state 3: attempt 2 failed" in out and "guest timed out after 120s" in out
     and "soft lockup" in out and out.count("after the failed attempt") == 2
     and "state-3.attempt-2.ps.txt:   411   410 D" in out and "busybox" not in out,
     "a third attempt: both failed attempts reported, with the failed guest's console and the harness's "
     "processes in L1's last process table", out)
os.remove(os.path.join(d, "state-3.attempt-2.log"))
with open(os.path.join(d, "state-3.attempt-1.clocksource-after"), "w") as f:
    f.write("tsc\n")
rc, out, seen2 = lab(d, "3")
t.ok(rc == 1 and failing(seen2) == {(3, "failed_restore")}, "a failed attempt that left L1's clocksource changed fails",
     out)

# State 3 takes whichever clocksource the unstable L1 fell back to.
d = copy()
for old in os.listdir(os.path.join(d, "state-3")):
    os.rename(os.path.join(d, "state-3", old), os.path.join(d, "state-3", old.replace("hpet", "acpi_pm")))
p = os.path.join(d, "state-3", "kvm-trace-acpi_pm-2vcpu.json")
with open(p) as f:
    doc = json.load(f)
doc["guest_result"], doc["trace_file"] = "guest-acpi_pm-2vcpu.json", "kvm-trace-acpi_pm-2vcpu.txt"
with open(p, "w") as f:
    json.dump(doc, f)
for name, old, new in (("l1-3.facts.txt", "clocksource hpet", "clocksource acpi_pm"),
                       ("l1-3.dmesg.txt", "clocksource hpet", "clocksource acpi_pm"),
                       ("state-3.clocksource-after", "hpet", "acpi_pm")):
    with open(os.path.join(d, name)) as f:
        text = f.read()
    with open(os.path.join(d, name), "w") as f:
        f.write(text.replace(old, new))
rc, out, seen2 = lab(d, "3")
t.ok(rc == 0 and "(acpi_pm) after the run" in out and "[guest-acpi_pm-2vcpu.json]" in out,
     "state 3 takes the clocksource the unstable L1 fell back to (acpi_pm)", out)
os.unlink(os.path.join(d, "state-3", "guest-acpi_pm-2vcpu.json"))
rc, out, seen2 = lab(d, "3")
t.ok(rc == 1 and "#   state-3.log: " in out, "a state without a result is followed by the end of its harness log", out)

# An empty lab folder; a bad STATES list.
rc, out, seen2 = lab(tempfile.mkdtemp(dir=t.tmp), "1,2,3,4")
t.ok(rc == 1 and seen2 and not any(seen2.values()) and re.search(r"^0 passed, [1-9][0-9]* failed$", out, re.M),
     "every assertion fails on a lab folder with no results", out)
rc, out, _ = lab(FX, "5", proc=True)
t.ok(rc == 2 and "no state 5 in lab/states.cfg" in out, "an unknown state is a usage error: %s" % out.strip())

# The clocksource watchdog in L1 (state 6 of 2026-12-01; state 8 of the
# same day: a real watchdog verdict).  L1's facts decide whether its TSC
# is watched, through the kernel table; the watchdog's lines are read from
# L1's log after the state.
WD_KEYS = [("watched by its kernel's watchdog", "l1_watched"), ("health in L1", "l1_health_watched"),
           ("readout's device", "watchdog_device"), ("readouts timed", "watchdog_samples"),
           ("verdicts in L1's log", "l1_watchdog_verdict"), ("TSC after the state", "l1_tsc_after")]
KEYS[:0] = WD_KEYS


def edit(d, name, fn):
    p = os.path.join(d, name)
    with open(p) as f:
        text = f.read()
    with open(p, "w") as f:
        f.write(fn(text))


rc, out, seen6 = lab(FX, "6")
t.ok(rc == 0 and seen6 and all(seen6.values()) and {k for _, k in seen6} >= {k for _, k in WD_KEYS},
     "the recorded state 6 passes: L1 watched, health agrees, the readout on hpet, no verdict (%d)" % len(seen6),
     out)
t.ok("EMULATED, TCG" in out and "readout p50 / it" in out and "9565162 readouts" in out,
     "state 6's readout figures are printed, labelled emulated, beside L1's in-kernel read on hpet", out)
S6_FACTS = {"l1_watched", "restore"}
for name, s6, wants in (("state-6.watchdog.json", 6, {"watchdog_device", "watchdog_samples"}),
                        ("state-6.health.json", 6, {"l1_health_watched"}),
                        ("state-6.dmesg.txt", 6, {"l1_watchdog_verdict", "l1_tsc_after"}),
                        ("l1-6.facts.txt", 6, S6_FACTS)):
    for how in ("deleted", "empty"):
        d = copy()
        if how == "deleted":
            os.unlink(os.path.join(d, name))
        else:
            open(os.path.join(d, name), "w").close()
        rc, out, seen2 = lab(d, "6")
        got = failing(seen2)
        want = {(s6, k) for k in wants}
        t.ok(rc == 1 and got == want, "%s %s: exactly its %d assertions fail" % (name, how, len(want)),
             "exit %d; failing %s; expected %s" % (rc, sorted(got), sorted(want)))

# health's JSON is read bounded: over 4 Mi characters is no evidence.
d = copy()
edit(d, "state-6.health.json", lambda x: " " * (4 << 20) + x)
rc, out, seen2 = lab(d, "6")
t.ok(failing(seen2) == {(6, "l1_health_watched")} and "over 4 Mi characters" in out,
     "a health JSON over 4 Mi characters: its one assertion fails, saying so", sorted(failing(seen2)))

# Watched or not, by L1's facts and the era's rules (6.1: constant_tsc,
# nonstop_tsc and tsc_adjust with at most 2 online NUMA nodes leave the
# TSC unwatched; tsc=reliable too); an era the table does not cover is no
# answer; facts without the TSC's flags are no evidence.
QUALIFIED = lambda x: x.replace("tsc_flags \n", "tsc_flags constant_tsc nonstop_tsc tsc_adjust\n")
for what, fn, good in (
        ("a CPU with constant_tsc, nonstop_tsc and tsc_adjust on 1 node: unwatched", QUALIFIED, False),
        ("the same on 3 online NUMA nodes (6.1's limit is 2): watched", lambda x: QUALIFIED(x).replace(
            "nodes 0\n", "nodes 0-1,3\n"), True),
        ("tsc_reliable alone: unwatched", lambda x: x.replace("tsc_flags \n", "tsc_flags tsc_reliable\n"), False),
        ("tsc=reliable on L1's command line: unwatched", lambda x: x.replace("panic=-1", "panic=-1 tsc=reliable"), False),
        ("tsc=watchdog (not a 6.1 option) changes nothing: watched", lambda x: x.replace(
            "panic=-1", "panic=-1 tsc=watchdog"), True),
        ("a 5.10 kernel, before the table: no answer", lambda x: re.sub(r"(?m)^kernel .*$", "kernel 5.10.0-30-amd64",
                                                                        re.sub(r"(?m)^version .*$", "version #1", x)),
         False),
        ("facts without the TSC's flags: no answer", lambda x: x.replace("tsc_flags \n", ""), False)):
    d = copy()
    edit(d, "l1-6.facts.txt", fn)
    rc, out, seen2 = lab(d, "6")
    t.ok(seen2.get((6, "l1_watched")) is good and failing(seen2) <= {(6, "l1_watched")},
         "l1_watched: %s" % what, [line for line in out.splitlines() if "watched by its kernel" in line])

# A verdict line in L1's log after the state (state 8's, a real one) and
# the kernel giving the TSC up: both facts of state 6 fail, naming it.
with open(os.path.join(FX, "state-8.dmesg.txt")) as f:
    verdict = [line for line in f if "skew is too large" in line or "Marking TSC unstable" in line]
d = copy()
edit(d, "state-6.dmesg.txt", lambda x: x + "".join(verdict))
rc, out, seen2 = lab(d, "6")
t.ok(len(verdict) == 2 and failing(seen2) == {(6, "l1_watchdog_verdict"), (6, "l1_tsc_after")}
     and "(got skew)" in out, "a watchdog verdict in L1's log after state 6 fails its two facts", out)

rc, out, seen8 = lab(FX, "8")
t.ok(rc == 0 and seen8 and all(seen8.values()) and (8, "l1_watchdog_verdict") in seen8 and (8, "l1_tsc") in seen8,
     "the recorded state 8 passes: the watchdog's skew verdict, L1 off tsc, master clock off, reads by syscall (%d)"
     % len(seen8), out)
d = copy()
edit(d, "state-8.dmesg.txt", lambda x: "".join(line for line in x.splitlines(True) if "skew is too large" not in line))
rc, out, seen2 = lab(d, "8")
t.ok(failing(seen2) == {(8, "l1_watchdog_verdict")} and "(got none)" in out,
     "state 8 without the watchdog's verdict line: its verdict fact fails (the rest of the chain is other evidence)",
     out)
d = copy()
edit(d, "l1-8.dmesg.txt", lambda x: "".join(line for line in x.splitlines(True)
                                            if "Marking TSC unstable" not in line and "skew is too large" not in line))
rc, out, seen2 = lab(d, "8")
t.ok(failing(seen2) == {(8, "l1_tsc")}, "state 8's boot log without the two lines that give the TSC up (the "
     "watchdog's and tsc.c's): l1_tsc fails", sorted(failing(seen2)))

# State 9 (2026-12-01): L1 alone (no harness run) on 2 vCPUs under an
# Intel vendor string, CPU 1 reading a timer in a loop.  No guest checks;
# L1's vendor is checked, so an L1 booted on another model fails it.
WD_KEYS[:0] = [("table's CPU model", "vendor"), ("readouts of the load", "watchdog_load_samples"),
               ("the outcome, by L1's log", "outcome"), ("readout margin", "l1_readout_margin_pct")]
KEYS[:0] = WD_KEYS[:4]
rc, out, seen9 = lab(FX, "9")
t.ok(rc == 0 and all(seen9.values()) and {k for _, k in seen9} == {
    "run", "vendor", "l1_watched", "l1_health_watched", "watchdog_device", "watchdog_samples",
    "watchdog_load_samples", "l1_readout_margin_pct", "outcome", "l1_watchdog_verdict", "l1_tsc_after", "restore"}
     and "asserting the outcome 'no verdict'" in out and "margin x0.21" in out,
     "the recorded state 9 passes, without a guest's checks: no verdict, the TSC kept, the margin measured (%d)"
     % len(seen9), out)
for what, name, fn, want in (
        ("L1 booted on another vendor", "l1-9.facts.txt", lambda x: x.replace("vendor GenuineIntel", "vendor AuthenticAMD"),
         {"vendor"}),
        ("no document of the timer load", "state-9.watchdog-load.json", None, {"watchdog_load_samples"})):
    d = copy()
    if fn is None:
        os.unlink(os.path.join(d, name))
    else:
        edit(d, name, fn)
    rc, out, seen2 = lab(d, "9")
    t.ok(rc == 1 and failing(seen2) == {(9, k) for k in want}, "state 9, %s: exactly %s fails" % (what, sorted(want)),
         sorted(failing(seen2)))

# State 9 met a real verdict (2026-12-01: a full make lab, at 33.8 s; and
# results/20261201-215823-vm-lab, STATES=9, at 76.5 s).  Either
# outcome is asserted by its evidence: the latter's verdict lines, appended
# to the recorded state 9's log (no verdict) with L1 then on hpet, are the
# verdict's whole chain.
VERDICT9 = ("[   76.525401] clocksource: timekeeping watchdog on CPU0: Marking clocksource 'tsc' as unstable because the skew is too large:\n"
            "[   76.525604] clocksource:                       'hpet' wd_nsec: 507534880 wd_now: cb4d3e03 wd_last: c846ce33 mask: ffffffff\n"
            "[   76.525627] clocksource:                       'tsc' cs_nsec: 507965333 cs_now: 27af600908 cs_last: 276fea26a3 mask: ffffffffffffffff\n"
            "[   76.525665] clocksource:                       'tsc' is current clocksource.\n"
            '[   76.525874] tsc: Marking TSC unstable due to clocksource watchdog\n'
            '[   76.544689] clocksource: Switched to clocksource hpet\n')


def verdict9(after="hpet", drop=None):
    d = copy()
    edit(d, "state-9.dmesg.txt", lambda x: x + "".join(
        line for line in VERDICT9.splitlines(True) if drop is None or drop not in line))
    edit(d, "state-9.clocksource-after", lambda x: after + "\n")
    return d


rc, out, seen2 = lab(verdict9(), "9")
t.ok(rc == 0 and all(seen2.values()) and seen2.get((9, "outcome")) and (9, "l1_watchdog_verdict") in seen2
     and "asserting the outcome 'verdict'" in out and "fell back to (its log's last switch) (hpet)" in out,
     "state 9 with a watchdog verdict: its whole chain asserted and passing (the skew verdict, tsc.c giving the TSC "
     "up, L1 on hpet by its kernel)", out)
for what, d, want in (
        ("L1 still on tsc after it", verdict9(after="tsc"), {"l1_tsc_after", "restore"}),
        ("no switch away from tsc in its log", verdict9(drop="Switched to clocksource hpet"), {"restore"})):
    rc, out, seen2 = lab(d, "9")
    t.ok(rc == 1 and failing(seen2) == {(9, k) for k in want},
         "state 9 with a verdict but %s: exactly %s fail" % (what, sorted(want)), sorted(failing(seen2)))
# Without a verdict the margin must have been measured; without L1's log
# after the state neither outcome is known.
d = copy()
edit(d, "state-9.host-check.json", lambda x: x.replace('"margin": 0.2084445037353255', '"margin": null'))
rc, out, seen2 = lab(d, "9")
t.ok(rc == 1 and failing(seen2) == {(9, "l1_readout_margin_pct")} and "margin is None" in out,
     "state 9 without health's margin: exactly l1_readout_margin_pct fails", sorted(failing(seen2)))
d = copy()
os.unlink(os.path.join(d, "state-9.dmesg.txt"))
rc, out, seen2 = lab(d, "9")
t.ok(rc == 1 and failing(seen2) == {(9, "outcome")} and "no state-9.dmesg.txt" in out,
     "state 9 without L1's log after it: the outcome is unknown and fails, no branch asserted",
     sorted(failing(seen2)))

# State 10 (2026-12-01): a plain make bench (no CLOCKSOURCES) on an L1
# booted tsc=unstable: what it measured, its cause and its screen, from the
# run folder, its health.json and the saved screen (state-10.log).
BENCH_KEYS = [("clocksources the run measured", "bench_measured"), ("a tsc row in", "bench_tsc_row"),
              ("cause health named", "bench_cause"), ("a ratio on the run's screen", "bench_ratio")]
KEYS[:0] = BENCH_KEYS
S10 = {"run", "result", "subject", "complete", "window", "restore"} | {
    f for f, _, _ in next(s for s in labtable.load() if s.n == 10).expect}
rc, out, seen10 = lab(FX, "10")
t.ok(rc == 0 and all(seen10.values()) and {k for _, k in seen10} == S10 and len(seen10) == len(S10),
     "the recorded state 10 passes: exit 0, hpet and acpi_pm measured (what L1 offered), no tsc row, the cause "
     "forced_unstable on the screen with the kernel's line, no ratio (%d)" % len(seen10), out)
RATIO_LINE = "| hpet | 1846.4 (x1.00) (TCG, emulated) | 2919.5 (x1.00) (TCG, emulated) |\n"
for what, name, fn, want in (
        ("a ratio printed against the hpet row (the old compare's screen)", "state-10.log",
         lambda x: x + RATIO_LINE, {"bench_ratio"}),
        ("a fallback costed against tsc", "state-10.log", lambda x: x.replace(
            "No ratio: this run has no tsc row", "A fallback to acpi_pm: 5200 ns a host read against 1800 on tsc "
            "(x2.89). No tsc row"), {"bench_ratio"}),
        ("its last attempt failed (exit 1)", "progress.log",
         lambda x: x + "1796163000 start state 10\n1796163400 failed state 10 (exit 1, attempt 2)\n", {"run"}),
        ("the cause missing from its screen", "state-10.log",
         lambda x: x.replace("Why it is off the TSC", "Why"), {"bench_cause"}),
        ("the kernel's line missing from its screen", "state-10.log",
         lambda x: x.replace("due to boot parameter", "due to"), {"bench_cause"}),
        ("health.json naming no loss", "state-10/health.json",
         lambda x: x.replace('"cause": "forced_unstable"', '"cause": "never_lost"'), {"bench_cause"})):
    d = copy()
    edit(d, name, fn)
    rc, out, seen2 = lab(d, "10")
    t.ok(rc == 1 and failing(seen2) == {(10, k) for k in want}, "state 10, %s: exactly %s fails" % (what, sorted(want)),
         sorted(failing(seen2)))
# L1 on a periodic tick (the lab's since 2026-12-04) also lists the kernel's
# stand-ins, which a run never measures: still what L1 offered.
d = copy()
edit(d, "l1-10.facts.txt", lambda x: re.sub(r"(?m)^(available .*)$", r"\1 refined-jiffies jiffies", x))
rc, out, seen2 = lab(d, "10")
t.ok(rc == 0 and all(seen2.values()) and "refined-jiffies jiffies" in open(os.path.join(d, "l1-10.facts.txt")).read(),
     "state 10 on an L1 that also lists jiffies and refined-jiffies (a periodic tick): hpet and acpi_pm are still what "
     "it offered", sorted(failing(seen2)))
d = copy()
shutil.copy(os.path.join(d, "state-1", "host-tsc.json"), os.path.join(d, "state-10", "host-tsc.json"))
rc, out, seen2 = lab(d, "10")
t.ok(rc == 1 and failing(seen2) == {(10, "bench_measured"), (10, "bench_tsc_row")},
     "state 10 with a tsc row in its run folder: bench_measured and bench_tsc_row fail", sorted(failing(seen2)))
for name, want in (("state-10/guest-acpi_pm-1vcpu.json", {"bench_measured"}),
                   ("state-10/host-acpi_pm.json", {"bench_measured"}),
                   ("state-10/health.json", {"bench_cause"}),
                   ("state-10.log", {"bench_cause", "bench_ratio"}),
                   ("state-10.clocksource-after", {"restore"}),
                   ("l1-10.dmesg.txt", {"l1_tsc"}),
                   ("l1-10.facts.txt", S10 - {"run", "bench_tsc_row", "bench_cause", "bench_ratio"})):
    d = copy()
    os.unlink(os.path.join(d, name))
    rc, out, seen2 = lab(d, "10")
    t.ok(rc == 1 and failing(seen2) == {(10, k) for k in want}, "state 10, %s deleted: exactly its %d assertions fail"
         % (name, len(want)), "failing %s; expected %s" % (sorted(failing(seen2)), sorted(want)))

# lab/provoke's stop loop on a stand-in process (a sleep of our own):
# every stop is logged with the time it was held, and the process is
# running again at the end, also when the loop is cut short.
import importlib.machinery  # noqa: E402
import importlib.util  # noqa: E402
import signal  # noqa: E402
loader = importlib.machinery.SourceFileLoader("provoke", os.path.join(ROOT, "lab", "provoke"))
spec = importlib.util.spec_from_loader("provoke", loader)
provoke = importlib.util.module_from_spec(spec)
loader.exec_module(provoke)


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


opener = getattr(provoke, "open_process", None)  # a pidfd: what the loop signals
sleeper = subprocess.Popen(["sleep", "30"])
logp = os.path.join(t.tmp, "stalls.txt")
with open(logp, "w") as log:
    provoke.stop_loop(opener(sleeper.pid) if opener else sleeper.pid, 5, 20, 0.3, log)
with open(logp) as f:
    rows = [line.split() for line in f]
t.ok(len(rows) >= 3 and all(float(r[2]) >= 5 for r in rows) and proc_state(sleeper.pid) != "T",
     "provoke's stop loop: each stop logged and held at least as asked, the process running at the end (%d stops)"
     % len(rows), rows[:3])
real_sleep = provoke.time.sleep
calls = []


def cut(s):
    calls.append(s)
    if len(calls) == 2:  # the first stop's hold
        raise KeyboardInterrupt
    real_sleep(s)


provoke.time.sleep = cut
try:
    with open(logp, "w") as log:
        provoke.stop_loop(opener(sleeper.pid) if opener else sleeper.pid, 50, 20, 5, log)
except KeyboardInterrupt:
    pass
provoke.time.sleep = real_sleep
t.ok(proc_state(sleeper.pid) != "T", "provoke's stop loop cut short during a stop: the process is continued",
     proc_state(sleeper.pid))
os.kill(sleeper.pid, signal.SIGCONT)
sleeper.kill()
sleeper.wait()

# The process ends (and is reaped) during the loop, and its pid goes to
# another: a stand-in os.kill plays that other process (the signal
# "succeeds").  The loop must not signal the pid again, and it ends with the
# process it was given.
sleeper = subprocess.Popen(["sleep", "30"])
by_pid, calls = [], []
real_kill = provoke.os.kill


def fake_kill(pid, sig):
    if pid == sleeper.pid and sleeper.returncode is not None:
        by_pid.append(sig)  # the pid's new owner would get it
        return
    real_kill(pid, sig)


def reap(s):
    calls.append(s)
    if len(calls) == 3 and sleeper.returncode is None:
        sleeper.kill()
        sleeper.wait()
    real_sleep(s)


provoke.os.kill, provoke.time.sleep = fake_kill, reap
began = time.monotonic()
ended = why = None
try:
    with open(logp, "w") as log:
        ended = provoke.stop_loop(opener(sleeper.pid) if opener else sleeper.pid, 5, 20, 2, log)
except Exception as e:
    why = "%s: %s" % (type(e).__name__, e)
finally:
    provoke.os.kill, provoke.time.sleep = real_kill, real_sleep
took = time.monotonic() - began
if sleeper.returncode is None:
    sleeper.kill()
    sleeper.wait()
t.ok(not by_pid and why is None and ended == "ended" and took < 1.5,
     "provoke's stop loop: its process reaped and the pid taken by another mid-loop: no signal by pid, the loop "
     "ends with the process (%d signals to the pid, %.1f s, %s)" % (len(by_pid), took, why or ended))
for argv, why in ((["r", "x", "7"], "--stop MS --every MS are needed"), (["r", "x", "7", "--stop", "2", "--every", "-1"],
                                                                       "--every -1: expected a positive number"),
                  (["r", "x", "99", "--stop", "2", "--every", "20"], "no state 99")):
    p = subprocess.run([sys.executable, os.path.join(ROOT, "lab", "provoke")] + argv, capture_output=True, text=True)
    t.ok(p.returncode == 2 and why in p.stderr and not os.path.exists("r"), "provoke %s: usage, exit 2 (%s)"
         % (" ".join(argv), p.stderr.strip()))

# An L1 that froze in state 2 and was replaced (lab/run-lab): state 1 ran
# in L1 1-2, state 2's second attempt in 1-2-r1, whose facts are state 2's;
# the frozen L1's record and console are checked, its attempt said in a
# comment (no clocksource read after it); the vDSO read is compared with
# the tsc state's across the two L1s.
def replaced(d, console=True):
    for ext in ("facts.txt", "dmesg.txt"):
        shutil.copy(os.path.join(d, "l1-1-2." + ext), os.path.join(d, "l1-1-2-r1." + ext))
    with open(os.path.join(d, "l1-1-2-r1.facts.txt"), "a") as f:
        f.write("vendor the replacement's\n")
    with open(os.path.join(d, "progress.log")) as f:
        lines = f.read().splitlines()
    two = [x for x in lines if " state 2" in x]
    rest = [x for x in lines if " state 2" not in x]
    with open(os.path.join(d, "progress.log"), "w") as f:
        f.write("\n".join([x for x in rest if not re.search(r" state 1$", x)]
                          + ["1795982400 boot 1-2 for 1,2"] + [x for x in rest if re.search(r" state 1$", x)]
                          + [two[0], "1796037400 boot 1-2-r1 for 2"] + two) + "\n")
    with open(os.path.join(d, "state-2.attempt-1.ps.txt"), "w") as f:
        f.write("PID PPID STAT ELAPSED WCHAN COMMAND\n  901 1 S 00:44 - qemu-system-x86_64 -accel kvm\n")
    with open(os.path.join(d, "l1-1-2.frozen"), "w") as f:
        f.write("froze_at 2026-12-04T10:00:00Z (its last heartbeat)\ndetected_at 2026-12-04T10:01:00Z (60 s)\n"
                "state 2 attempt 1\nconsole l1-1-2.console.log\nsnapshot state-2.attempt-1.ps.txt\n")
    if console:
        with open(os.path.join(d, "l1-1-2.console.log"), "w") as f:
            f.write("lab-l1: state 2: host clocksource hpet (attempt 1 of 2)\n")


d = copy()
replaced(d)
rc, out, seen2 = lab(d)
t.ok(rc == 0 and all(seen2.values()) and "ok" in out and re.search(r"(?m)^ok \d+ - the frozen L1 1-2: its record and its "
                                                                  r"console kept", out)
     and "# state 2: attempt 1 ended with L1 1-2 frozen (EMULATED)" in out
     and "qemu-system-x86_64 -accel kvm" in out
     and re.search(r"(?m)^ok \d+ - state 2: clock_gettime through the vDSO on L1 .* >= 3 ", out)
     and "L1 1-2 FROZE (EMULATED: QEMU TCG's behaviour, never a hypervisor's)" in out,
     "an L1 frozen in state 2 and replaced: its record and console checked, the frozen attempt said, the vDSO "
     "read compared across the two L1s", out)
ev = {"__name__": "lab_assert", "__file__": ASSERT}
exec(ASSERT_CODE, ev)
t.ok(ev["boot_name"](d, 2, labtable.select(labtable.load(), "1,2,3"), False) == "1-2-r1"
     and ev["boot_name"](d, 1, labtable.select(labtable.load(), "1,2,3"), False) == "1-2"
     and ev["boot_name"](FX, 2, labtable.select(labtable.load(), "1,2,3"), False) == "1-2",
     "a state's L1 is the one that ran its last attempt (by the progress log); the table's boot without one")
d = copy()
replaced(d, console=False)
rc, out, seen2 = lab(d)
t.ok(rc == 1 and re.search(r"(?m)^not ok \d+ - the frozen L1 1-2: its record and its console kept", out)
     and out.rstrip().endswith("1 failed"),
     "a frozen L1 whose console was not kept fails the lab", out[-800:])


# The table: its boots, and adding a state is adding a stanza.
states = labtable.load()
t.ok([(b.name, b.vcpus, b.append) for b in labtable.boots(states)]
     == [("1-2-4-6-7", 1, ""), ("3", 2, "tsc=unstable"), ("8", 1, "tsc_early_khz=2400000"), ("9", 2, ""),
         ("10", 1, "tsc=unstable")]
     and labtable.boots(states)[3].cpu == "max,vendor=GenuineIntel",
     "the table's states share L1 boots by configuration (its CPU model too): 1-2-4-6-7, 3, 8, 9 and 10")
cfg = os.path.join(t.tmp, "states.cfg")
with open(labtable.TABLE) as f:
    base = f.read()
with open(cfg, "w") as f:
    f.write(base + "\n[5]\nlabel = L1 on acpi_pm\nclocksource = acpi_pm\nexpect =\n    master_clock = off\n")
five = labtable.load(cfg)
t.ok([b.name for b in labtable.boots(labtable.select(five, "5,1,3"))] == ["1-5", "3"],
     "a stanza more is a state more, in the boot of its L1 configuration")
for bad, why in (("[99]\nlabel = x\nclocksource = tsc\nexpect =\n    master_clok = on\n", "unknown fact"),
                 ("[99]\nlabel = x\nclocksource = tsc\nexpect =\n    tsc_offset_writes = 3\n", "use >= or <"),
                 ("[99]\nlabel = x\nclocksource = tsc\npin = maybe\nexpect =\n    path = user\n", "pin"),
                 ("[99]\nlabel = x\nclocksource = tsc\ncolour = red\nexpect =\n    path = user\n", "unknown key"),
                 ("[99]\nlabel = x\nclocksource = tsc\n", "expect is missing"),
                 ("[99]\nlabel = x\nclocksource = tsc\nexpect =\n    path = user\nexpect_verdict =\n"
                  "    l1_tsc_after = unstable\n", "expect_verdict and expect_no_verdict go together"),
                 ("[99]\nlabel = x\nclocksource = tsc\nexpect =\n    path = user\nexpect_verdict =\n"
                  "    l1_tsc_after = gone\nexpect_no_verdict =\n    l1_tsc_after = stable\n", "expect_verdict"),
                 ("[99]\nlabel = x\nclocksource = tsc\nwatchdog_load = yes\nexpect =\n    path = user\n",
                  "watchdog_load: expected one of none, memory, timer"),
                 ("[99]\nlabel = x\nclocksource = tsc\nl1_cpu = max -smp 9\nexpect =\n    path = user\n", "l1_cpu"),
                 ("[six]\nlabel = x\nclocksource = tsc\nexpect =\n    path = user\n", "a positive number")):
    with open(cfg, "w") as f:
        f.write(base + "\n" + bad)
    try:
        labtable.load(cfg)
        t.ok(False, "a table with a bad stanza is refused (%s)" % why)
    except labtable.TableError as e:
        t.ok(why in str(e) and "states.cfg [" in str(e), "a bad stanza is refused, naming it: %s" % e)
t.done()
