#!/usr/bin/python3
# tier: fast
"""report.t: report.md from the fixture runs, figures checked against hand arithmetic."""
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "lib")]
from taplib import BEFORE, AFTER, FX, LAB, ROOT, TOOL, Tap, read, run, table_row  # noqa: E402

t = Tap()
p = subprocess.run([TOOL, "--version"], capture_output=True, text=True)
t.ok(p.returncode == 0 and p.stdout.startswith("clockbench-report "), "the tool runs by its own #! line", p.stderr)
out = os.path.join(t.tmp, "r1")
rc, so, se = run("report", "--no-plots", "-o", out, BEFORE)
t.ok(rc == 0 and so.strip() == os.path.join(out, "report.md") and se == "", "report exits 0 and prints the report's path", se)
md = read(os.path.join(out, "report.md")) if rc == 0 else ""

# Host table: hpet against tsc, same thread count.  1500/25 = 60.00, 1800/30 = 60.00,
# 1900/26 = 73.08, 2600/32 = 81.25.
t.ok(table_row(md, "tsc", "1") == ["tsc", "1", "25.00", "30.00", "1.00", "1.00", "user", "consistent; kernel: tsc-trusted", "bare metal"],
     "host tsc, 1 thread: median, p99, ratio 1, path user", table_row(md, "tsc", "1"))
N1 = " [n/a (1 round)]"
t.ok((table_row(md, "hpet", "1") or [])[2:7] == ["1500.00", "1800.00", "x60.00" + N1, "x60.00" + N1, "syscall"],
     "host hpet, 1 thread: x60.00 median and p99, path syscall", table_row(md, "hpet", "1"))
t.ok((table_row(md, "hpet", "2") or [])[2:6] == ["1900.00", "2600.00", "x73.08" + N1, "x81.25" + N1],
     "host hpet, 2 threads: 1900/26 = 73.08, 2600/32 = 81.25", table_row(md, "hpet", "2"))

# Guest table: 187/28 = 6.68, 250/35 = 7.14; 244/31 = 7.87, 400/40 = 10.00.
g1 = table_row(md, "hpet", "2", "1") or []
g2 = table_row(md, "hpet", "2", "2") or []
t.ok(g1[3:7] == ["187.00", "250.00", "x6.68" + N1, "x7.14" + N1]
     and g2[3:7] == ["244.00", "400.00", "x7.87" + N1, "x10.00" + N1],
     "guest on hpet host: ratios to the tsc host's guest", (g1, g2))
t.ok(g1[7:] == ["syscall", "kvm-clock", "off (hostclock none), 1 transition",
               "clear (trace: 0 with, 340 without; vCPU 0,1)", "kvm"],
     "guest on hpet host: path syscall, master clock off, stable bit clear with the trace's counts", g1)
gt = table_row(md, "tsc", "2", "2") or []
t.ok(gt[7:] == ["user", "kvm-clock", "on (hostclock tsc)", "set (trace: 4 with, 0 without)", "kvm"],
     "guest on tsc host: path user, master clock on, stable bit set on all 4 updates", gt)
t.ok("- the host on hpet: CLOCK_MONOTONIC costs 1500.00 ns against 25.00 ns on tsc (x60.00 [n/a (1 round)]) at 1 thread; "
     "the read is answered by a syscall." in md, "findings line for the hpet host")

# Capacity: 100 x 64 = 6400 vCPUs.  Guest on hpet, 2 vCPUs reading: 244 ns.
# 1e6 x 244e-9 = 24.4 %; 6400 x 0.244 = 1561.60 cores; tsc guest 31 ns: 198.40; +1363.20.
cap = table_row(md, "guest 2 vCPU, host on hpet", "244.00") or []
t.ok(cap[2:] == ["monotonic vdso, 2 threads, median", "0.244 %", "2.44 %", "24.4 %"],
     "capacity: share of a vCPU at 1e4, 1e5, 1e6 reads/s", cap)
fl = table_row(md, "guest 2 vCPU, host on hpet") or []
want = "1561.60 (+1363.20 vs guest 2 vCPU, host on tsc)"
flt = [r for r in md.splitlines() if r.startswith("| guest 2 vCPU, host on hpet |") and "cores" not in r and "+" in r]
t.ok(any(want in r for r in flt) and any("15.62 (+13.63 vs guest 2 vCPU, host on tsc)" in r for r in flt),
     "capacity: fleet cores 1561.60 at 1e6 (+1363.20 vs tsc), 15.62 at 1e4", flt)
hp = table_row(md, "host on hpet", "1900.00") or []
t.ok(hp[-1] == "190 % (over 1 vCPU)" and hp[-2] == "19 %", "capacity: 1900 ns at 1e6/s is 190 %, flagged over 1 vCPU", hp)
t.ok("share of a vCPU = reads/s x ns per read x 1e-9" in md and "6400 vCPUs" in md, "capacity: formula and inputs shown")

# Context and links.
t.ok("| kernel | 6.12.9-amd64 | 6.12.9-amd64 |" in md and "clock options on the kernel command line | none | tsc=unstable |" in md,
     "context: kernel and clock options per host file")
t.ok("](%s)" % os.path.relpath(os.path.join(BEFORE, "host-tsc.json"), out) in md, "inputs linked relative to the report")

# Determinism, newest run by default, several runs.
out2 = os.path.join(t.tmp, "r2")
run("report", "--no-plots", "-o", out2, BEFORE)
t.ok(os.path.exists(os.path.join(out2, "report.md")) and read(os.path.join(out2, "report.md")) == md,
     "the same input gives the same report")
out3 = os.path.join(t.tmp, "r3")
rc, so, se = run("report", "--no-plots", "--results", FX, "-o", out3)
t.ok(rc == 0 and read(os.path.join(out3, "report.md")).startswith("# clockbench report: 20260301-120000-lab\n"),
     "without RUN: the newest run folder", se)
out4 = os.path.join(t.tmp, "r4")
rc, so, se = run("report", "--no-plots", "-o", out4, BEFORE, AFTER)
md4 = read(os.path.join(out4, "report.md")) if rc == 0 else ""
r4 = table_row(md4, "20260201-120000-hv1", "hpet", "1") or []
t.ok(r4[3:6] == ["1800.00", "2100.00", "x70.87" + N1], "two runs: a run column, ratios within each run (1800/25.4 = 70.87)", r4)
out5 = os.path.join(t.tmp, "r5")
rc, so, se = run("report", "--no-plots", "--build", os.path.join(t.tmp, "b"), BEFORE, AFTER)
t.ok(rc == 0 and os.path.exists(os.path.join(t.tmp, "b", "report", "20260101-120000-hv1+20260201-120000-hv1", "report.md")),
     "default output folder: BUILD/report/<run ids>", se)

# Emulated runs: marked on every row, kept out of capacity.
out6 = os.path.join(t.tmp, "r6")
rc, so, se = run("report", "--no-plots", "-o", out6, LAB)
md6 = read(os.path.join(out6, "report.md")) if rc == 0 else ""
rows = [r for r in md6.splitlines() if r.startswith(("| tsc | 2 | 1 |", "| tsc | 2 | 2 |"))]
t.ok(len(rows) == 2 and all(r.endswith("| tcg (EMULATED)† |") for r in rows) and "† EMULATED: QEMU's TCG emulator" in md6,
     "emulated guest: every row marked, footnote present", rows)
t.ok("1 emulated (TCG) result left out" in md6 and "guest 2 vCPU, host on" not in md6,
     "emulated guest: left out of capacity planning")
t.ok("20260301-120000-lab: guest-tsc-2vcpu.json (EMULATED: tcg)†" in md6, "emulated guest: marked in the detailed section")


def edited_run(name, edit):
    """A run folder in tmp: BEFORE's tsc host and guest files, edit(file name, doc) applied."""
    d = os.path.join(t.tmp, name)
    os.makedirs(d)
    for fn in ("host-tsc.json", "guest-tsc-2vcpu.json", "kvm-trace-tsc-2vcpu.json"):
        with open(os.path.join(BEFORE, fn)) as f:
            doc = json.load(f)
        edit(fn, doc)
        with open(os.path.join(d, fn), "w") as f:
            json.dump(doc, f)
    return d


# An emulated hypervisor (make lab's L1 under TCG): its rows and its KVM guests' rows are emulated too.
def tcg_host(fn, doc):
    if fn.startswith("host"):
        doc["context"]["hypervisor"] = "TCGTCGTCGTCG"


l1 = edited_run("l1", tcg_host)
out7 = os.path.join(t.tmp, "r7")
rc, so, se = run("report", "--no-plots", "-o", out7, l1)
md7 = read(os.path.join(out7, "report.md")) if rc == 0 else ""
t.ok((table_row(md7, "tsc", "1") or [""])[-1] == "TCG (EMULATED)†" and
     (table_row(md7, "tsc", "2", "1") or [""])[-1] == "kvm on an emulated host (EMULATED)†",
     "emulated host: its rows and its KVM guest's rows marked", (table_row(md7, "tsc", "1"), se))
t.ok("2 emulated (TCG) results left out" in md7, "emulated host and guest: left out of capacity planning")

# The trace's measuring window (kvm-trace-*.json "measuring"), beside the whole-life counts.
def window(fn, doc):
    if fn.startswith("kvm-trace"):
        doc["measuring"] = dict(doc["life"], available=True, reason=None, seconds=3.79, tsc_offset_writes=15122,
                                pvclock_updates=7553)


mw = edited_run("mw", window)
out8 = os.path.join(t.tmp, "r8")
rc, so, se = run("report", "--no-plots", "-o", out8, mw)
md8 = read(os.path.join(out8, "report.md")) if rc == 0 else ""
t.ok("| the same while measuring (trace) | 15122 / 7553 in 3.79 s |" in md8,
     "the measuring window's TSC-offset writes and pvclock updates, with its length", se)
t.ok("| the same while measuring (trace) | n/a (no start marker in the trace) | n/a (no start marker in the trace) |" in md,
     "no window in a result: n/a and why, not a guess")

# Five rounds (roundsfx): one row per state, figures the median over rounds,
# ratios the median of the paired per-round ratios with [min, max].
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
import roundsfx  # noqa: E402
from cbcontract import rounds  # noqa: E402
from cbanalysis import capacity, report  # noqa: E402
rms = [m for _, rm in rounds.load_rounds(roundsfx.make(t.tmp)) for m in rm]
out9 = os.path.join(t.tmp, "r9")
os.mkdir(out9)
md9 = read(report.build(rms, out9, sorted(capacity.PRESET_RATES), 100, 64, [], False, lambda m: None))
h1 = table_row(md9, "hpet", "1") or []
t.ok(h1[2:6] == ["1622.50", "1947.00", "x60.00 [58.00, 62.00]", "x60.00 [58.00, 62.00]"]
     and len([r for r in md9.splitlines() if r.startswith("| hpet | 1 |")]) == 1,
     "5 rounds, host: one row, the median over rounds, x60.00 [58.00, 62.00]", h1)
g1 = table_row(md9, "hpet", "2", "1") or []
t.ok(g1[5] == "no difference measured [0.95, 1.05]", "5 rounds, guest 1 vCPU: no difference measured", g1)
kr = [r for r in md9.split("## The kernel's own clock read")[1].splitlines() if r.startswith("| host | hpet | 1 |")] \
    if "## The kernel's own clock read" in md9 else []
t.ok(kr and kr[0].rstrip(" |").endswith("x6.20 [6.00, 6.40]"), "5 rounds, kernel read: x6.20 [6.00, 6.40]", kr)
wl = md9.split("## Workloads")[1].split("\n## ")[0] if "## Workloads" in md9 else ""
rr = table_row(wl, "tcp-rr", "host", "hpet") or []
tm = table_row(wl, "timer", "host", "hpet") or []
t.ok(rr[4] == "no difference measured [0.90, 1.10]" and rr[7] == "no difference measured [0.90, 1.20]"
     and tm[4] == "x0.79 [0.77, 0.81]" and tm[7] == "x1.13 [1.10, 1.15]",
     "5 rounds, workloads: tcp-rr rate and latency no difference measured, timer's rate and latency with intervals",
     (rr, tm))
t.ok("5 rounds: [min, max] of the per-round ratios, 93.75 % coverage" in md9
     and "x60.00 [58.00, 62.00]) at 1 thread" in md9 and "round 3: host-hpet.json" in md9,
     "5 rounds: the coverage stated, the findings with the interval, each round's file in the details")
t.ok("[20260401-120000-rounds/round-4/host-hpet.json](" in md9 and "| host, round 2 | tsc |" in md9
     and "monotonic vdso, 2 threads, median of 5 rounds" in md9,
     "5 rounds: inputs named by round, the TSC rate check per round, capacity from the median of 5 rounds")
t.done()
