#!/usr/bin/python3
# tier: fast
"""verdict.t: the screen make bench ends with (analysis/cbanalysis/verdict.py):
a first line on the host's state, one line per fallback measured with its
cost in CPU cores per million reads a second, the fallbacks this host does
not offer named with the figure to plan with, and tables that fit 100
columns with emulated rows said to be so."""
import copy
import os
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "lib")]
from taplib import BEFORE, LAB, NEW, ROOT, WL, Tap  # noqa: E402
import roundsfx  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
from cbcontract import load, rounds  # noqa: E402
from cbanalysis import summary, verdict  # noqa: E402

t = Tap()


def rows_and_available(run_dir):
    ms = load.load_run(run_dir)
    avail = next((m.available_clocksources for m in ms if m.kind == "host"), None)
    return summary.rows_of(ms), avail


rows, avail = rows_and_available(BEFORE)
v = verdict.lines(rows, avail, now="tsc")
t.ok(v[0] == "This host is on tsc: healthy. On tsc, guests get the stable bit (master clock on).",
     "on tsc: healthy, and the stable bit from the tsc row's KVM trace", v[0])
t.ok(any(l.startswith("A fallback to hpet: 1500 ns a host read against 25 on tsc (x60.00 [n/a (1 round)]), "
                      "1.48 CPU cores more per million reads a second; guests do not get the stable bit "
                      "(master clock off)") for l in v),
     "the hpet fallback: its host read, (1500 - 25) ns x 1e6/s = 1.48 cores, and the guests' loss", "\n".join(v))
v = verdict.lines(rows, avail, now="hpet")
t.ok(v[0].startswith("This host is on hpet, not tsc: DEGRADED"), "on hpet: degraded, first", v[0])
v = verdict.lines(rows, avail, now=None)
t.ok(v[0].startswith("This run did not record the host's own clocksource.") and not any("healthy" in l for l in v),
     "the host's own clocksource not given: not guessed", "\n".join(v))

# A host that offers neither fallback: said so, with the figure to plan with.
v = verdict.lines([r for r in rows if r["clocksource"] == "tsc"], ["tsc", "kvm-clock"], now="tsc")
miss = [l for l in v if l.startswith("This host offers no ")]
t.ok(len(miss) == 2 and "hpet: a fallback to it was not measured here; plan with 561 to 1,542 ns" in miss[0]
     and "acpi_pm" in miss[1], "no hpet, no acpi_pm offered: not measured, the published figure to plan with", "\n".join(v))
v = verdict.lines(rows, ["tsc"], now="tsc")
t.ok(not any(l.startswith("This host offers no hpet") for l in v) and any(l.startswith("This host offers no acpi_pm") for l in v),
     "hpet measured (even where the list of offered ones lacks it): no 'not measured' line for it", "\n".join(v))
v = verdict.lines(rows, avail, now="tsc")
t.ok(not any(l.startswith("This host offers no hpet") for l in v) and "hpet" in avail,
     "hpet offered (and measured): no 'not measured' line for it", "\n".join(v))

# No KVM trace: unknown, not "not set".
norows = copy.deepcopy(rows)
for r in norows:
    r["stable_bit"] = r["master_clock"] = None
v = verdict.lines(norows, avail, now="tsc")
t.ok("whether guests get the stable bit is not known" in v[0] and "do not get" not in " ".join(v),
     "no KVM trace: the stable bit is not known, never 'not set'", "\n".join(v))

# Every line fits 100 columns, on every fixture and a real run folder.
real = os.path.join(ROOT, "results", "20261130-174842-vm")
for d in (BEFORE, WL, LAB, NEW, real):
    if not os.path.isdir(d):
        t.skip("%s: not in this checkout" % d)
        continue
    r, a = rows_and_available(d)
    s = verdict.screen(r, a, now="tsc")
    w = max(len(l) for l in s.splitlines())
    t.ok(w <= 100 and ("Host:" in s) == any(m.kind == "host" for m in load.load_run(d)), "%s: %d lines, the widest %d columns" % (os.path.basename(d), len(s.splitlines()), w), s)

# Emulated guests are said to be so; workloads in their own table.
r, a = rows_and_available(WL)
s = verdict.screen(r, a, now="tsc")
t.ok("Workloads: rate" in s and "tcp-stream" in s.split("Workloads:")[1] and "tcp-stream" not in s.split("Workloads:")[0],
     "workloads in a table of their own", s)
if os.path.isdir(real):
    r, a = rows_and_available(real)
    s = verdict.screen(r, a, now="tsc")
    guests = s.split("Guests:")[1].split("Workloads:")[0]
    body = guests.split("-----\n", 1)[1].split("\n\n")[0].splitlines()
    t.ok("an emulator's timings, not a hypervisor's cost" in " ".join(guests.split()) and len(body) == 4 and all(
        l.rstrip().endswith("TCG") for l in body),
        "a TCG guest: the title says so and every row's accel is TCG", guests)
    # The observer VM's master clock and stable bit in a table of their
    # own, named as its; the TCG guest's clocksource and path in another,
    # named as the emulator's: never side by side as if one guest's.
    tables = [x.splitlines() for x in guests.split("\n\n")]
    kvm = [x for x in tables if x and "stable bit" in x[0]]
    ran = [x for x in tables if x and "path" in x[0]]
    nested = [l for l in (kvm[0] if kvm else []) if l.startswith("kvm-clock")]
    t.ok(len(kvm) == 1 and "path" not in kvm[0][0] and all(l.rstrip().endswith("the observer VM (a short KVM VM)")
                                                           for l in kvm[0][2:])
         and nested and "kvm-clock (pvclock)" in nested[0]
         and len(ran) == 1 and "stable bit" not in ran[0][0] and all(l.rstrip().endswith("TCG: the emulator's")
                                                                    for l in ran[0][2:]),
         "TCG guests: KVM's state from the observer VM (hostclock named) apart from the guest's emulated "
         "clocksource and path", guests)
else:
    t.skip("no recorded TCG run folder")
    t.skip("no recorded TCG run folder")

# Five rounds: every ratio with its interval; one whose interval holds 1 is
# "no difference measured" and costs nothing.
ms = [m for _, rm in rounds.load_rounds(roundsfx.make(t.tmp)) for m in rm]
rrows = summary.rows_of(ms)
v = verdict.lines(rrows, avail, now="tsc")
fb = [l for l in v if l.startswith("A fallback to hpet")]
t.ok(fb and fb[0].startswith("A fallback to hpet: 1622 ns a host read against 28 on tsc (x60.00 [58.00, 62.00]), "
                             "1.59 CPU cores more per million reads a second"),
     "5 rounds: the fallback's ratio with its interval, its cost from the medians over rounds", fb)
same = copy.deepcopy(rrows)
for r in same:
    if r["clocksource"] == "hpet":
        r["host_1_interval"]["ratios"] = [0.9, 1.1, 1.0, 0.95, 1.3]
fb = [l for l in verdict.lines(same, avail, now="tsc") if l.startswith("A fallback to hpet")]
t.ok(fb and "no difference measured [0.90, 1.30]: no cost counted" in fb[0] and "cores" not in fb[0],
     "a fallback whose interval holds 1: no difference measured, no cost counted, no cores", fb)
s = verdict.screen(rrows, avail, now="tsc")
wl = s.split("Workloads:")[1] if "Workloads:" in s else ""
hostwl = [l for l in wl.splitlines() if l.split()[:4] == ["hpet", "host", "tcp-rr", "rate"]]
lost = [l for l in wl.splitlines() if l.split()[:4] == ["hpet", "host", "timer", "rate"]]
gl = [l for l in s.split("Guests:")[1].splitlines() if l.startswith("hpet")] if "Guests:" in s else []
t.ok(max(len(l) for l in s.splitlines()) <= 100 and "x60.00 [58.00, 62.00]" in s and gl
     and "no difference measured [0.95, 1.05]" in gl[0] and hostwl and hostwl[0].endswith("no difference measured [0.90, 1.10]")
     and lost and lost[0].endswith("x0.79 [0.77, 0.81]")
     and "93.75 % coverage" in " ".join(s.split()),
     "the screen over 5 rounds: intervals in every table, no difference measured where they hold 1, the coverage, "
     "100 columns", s)

# The command compare ends with: summary --screen, the verdict first.
import shutil  # noqa: E402
from taplib import run  # noqa: E402
d = os.path.join(t.tmp, "20260101-120000-hv1")
shutil.copytree(BEFORE, d)
rc, so, se = run("summary", d, "--screen", "--host-clocksource", "hpet")
t.ok(rc == 0 and so.startswith("This host is on hpet, not tsc: DEGRADED") and os.path.exists(os.path.join(d, "summary.md"))
     and so.rstrip().endswith("summary.md") and max(len(l) for l in so.splitlines()) <= 100,
     "summary --screen: the verdict first, summary.md still written, 100 columns", so + se)
rc, so, se = run("summary", d + "-x", "--screen", "--host-clocksource", "ts\nc")
t.ok(rc == 2 and len(se.splitlines()) == 1, "a --host-clocksource with a newline: usage, one line", se)
# A figure with its interval is never cut to fit 100 columns: the other
# columns give way (the run of 2026-12-01 12:57 had its workloads' intervals
# cut at "[0.76, 1").
long = "no difference measured [0.76, 1.85]"
lines_ = verdict.table(["state", "where", "workload", "figure", "value", "on tsc", "x tsc"],
                       [["kvm-clock-long-name", "guest (TCG)", "tcp-stream", "rate wakeups/s", "22.3", "23.5", long]],
                       100, keep=(6,))
t.ok(all(len(x) <= 100 for x in lines_) and lines_[2].endswith(long),
     "a table wider than 100 columns cuts its other columns, never the interval", "\n".join(lines_))
t.done()
