#!/usr/bin/python3
# tier: fast
"""summary.t: clockbench-report summary RUN_DIR (summary.md + summary.json, written once) and the launcher's table."""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "lib")]
from taplib import BEFORE, LAB, WL, Tap, read, run, table_row  # noqa: E402
import roundsfx  # noqa: E402

t = Tap()


def copy(src, name):
    d = os.path.join(t.tmp, name)
    shutil.copytree(src, d)
    return d


d = copy(BEFORE, "20260101-120000-hv1")
rc, so, se = run("summary", d)
md = read(os.path.join(d, "summary.md")) if rc == 0 else ""
t.ok(rc == 0 and se == "" and so == md and md.startswith("# clockbench compare: 20260101-120000-hv1\n"),
     "summary: exit 0, prints summary.md", se)
# 1500/25 = 60.00, 1900/26 = 73.08; guest 187/28 = 6.68, 244/31 = 7.87.
t.ok(table_row(md, "tsc") == ["tsc", "25.0 (x1.00)", "26.0 (x1.00)", "28.0 (x1.00)", "31.0 (x1.00)",
                              "on (hostclock tsc)", "set (4 with, 0 without)", "this guest's QEMU (KVM trace)",
                              "kvm-clock", "user", "kvm"],
     "tsc row: medians, ratio 1, master clock on, stable bit on all 4 updates, from the guest's own trace", table_row(md, "tsc"))
t.ok(table_row(md, "hpet") == ["hpet", "1500.0 (x60.00 [n/a (1 round)])", "1900.0 (x73.08 [n/a (1 round)])",
                               "187.0 (x6.68 [n/a (1 round)])", "244.0 (x7.87 [n/a (1 round)])",
                               "off (hostclock none)", "clear (0 with, 340 without)", "this guest's QEMU (KVM trace)",
                               "kvm-clock", "syscall", "kvm"],
     "hpet row: ratios to tsc, one round so no interval, master clock off, stable bit clear with its counts",
     table_row(md, "hpet"))
doc = json.loads(read(os.path.join(d, "summary.json"))) if rc == 0 else {}
hp = [r for r in doc.get("rows", []) if r["clocksource"] == "hpet"]
t.ok(doc.get("schema") == "clockbench-compare/2" and doc.get("baseline") == "tsc" and hp
     and (hp[0]["stable_bit"], hp[0]["stable_with"], hp[0]["stable_without"]) == (False, 0, 340)
     and abs(hp[0]["host_1_ratio"] - 60.0) < 1e-9, "summary.json: clockbench-compare/2, counts and ratios", doc.get("schema"))
rc, so, se = run("summary", d)
t.ok(rc == 1 and so == "" and len(se.splitlines()) == 1 and os.path.join(d, "summary.md") in se
     and "written once" in se and read(os.path.join(d, "summary.md")) == md,
     "a second summary of the same folder fails, one line, the first kept", se)
t.ok(sorted(n for n in os.listdir(d) if n.startswith(".")) == [], "no temporary file left")

# An emulated run.
rc, so, se = run("summary", copy(LAB, "lab"))
t.ok(rc == 0 and "(TCG, emulated)" in (table_row(so, "tsc") or [""])[3] and "[1] not traced" in so
     and "an emulator's timings, not a hypervisor's cost" in so, "an emulated guest: marked, its trace note, the footnote",
     so + se)
# Under TCG the guest's clocksource and path are the emulator's, said in
# the row and in the sentence of what holds (not "the mechanism" of all four).
row = table_row(so, "tsc") or [""] * 11
t.ok(rc == 0 and row[8].endswith("(TCG's: the emulator's)") and row[9].endswith("(TCG's: the emulator's)")
     and "What holds from them is the mechanism" not in so
     and "Under TCG the guest's clocksource and read path are the emulator's" in so,
     "an emulated guest's clocksource and path: the emulator's, and the summary says which facts hold under TCG", row)

# KVM's tracepoint prints a nested host's kvm-clock as its number (0x2):
# the row names it, summary.json keeps the raw word beside the name.
nest = copy(BEFORE, "nested")
p = os.path.join(nest, "kvm-trace-hpet-2vcpu.json")
tr = json.loads(read(p))
tr["life"]["master_clock"]["hostclock"] = "0x2"
with open(p, "w") as f:
    json.dump(tr, f)
rc, so, se = run("summary", nest)
hp = [r for r in json.loads(read(os.path.join(nest, "summary.json"))).get("rows", []) if r["clocksource"] == "hpet"] \
    if rc == 0 else []
t.ok(rc == 0 and (table_row(so, "hpet") or [""] * 6)[5] == "off (hostclock kvm-clock (pvclock))"
     and hp and (hp[0]["hostclock"], hp[0]["hostclock_raw"]) == ("kvm-clock (pvclock)", "0x2"),
     "hostclock 0x2 shown as kvm-clock (pvclock), the raw word kept in summary.json", so + se)

# The observer VM's trace, and an incomplete one: each row says so in a note.
obs = copy(BEFORE, "obs")
p = os.path.join(obs, "kvm-trace-hpet-2vcpu.json")
tr = json.loads(read(p))
tr.update(subject="observer", subject_text="a short KVM VM clockbench booted on this host only to observe KVM's clock")
with open(p, "w") as f:
    json.dump(tr, f)
p = os.path.join(obs, "kvm-trace-tsc-2vcpu.json")
tr = json.loads(read(p))
tr.update(complete=False)
tr["completeness"].update(overrun=7, lost=7)
with open(p, "w") as f:
    json.dump(tr, f)
rc, so, se = run("summary", obs)
t.ok(rc == 0 and (table_row(so, "hpet") or [""] * 8)[5:8] == ["off (hostclock none) [2]", "clear (0 with, 340 without) [2]",
                                                              "the observer VM (a short KVM VM)"]
     and "[2] KVM state observed from: a short KVM VM clockbench booted" in so,
     "the observer's KVM state, marked with whose it is", so + se)
t.ok((table_row(so, "tsc") or [""] * 7)[5:7] == ["n/a [1]", "n/a [1]"] and "[1] incomplete trace (7 events lost)" in so,
     "an incomplete trace: no facts, a note saying how many events were lost", so)
rc, so, se = run("summary", os.path.join(t.tmp, "nothing-here"))
t.ok(rc == 1 and len(se.splitlines()) == 1 and "no such run folder" in se, "a missing folder: exit 1, one line", se)

# The launcher's table, through the loader.
rc, so, se = run("table", os.path.join(BEFORE, "guest-hpet-2vcpu.json"), os.path.join(LAB, "guest-tsc-2vcpu.json"))
lines = so.splitlines()
t.ok(rc == 0 and lines[0] == os.path.join(BEFORE, "guest-hpet-2vcpu.json")
     and lines[1].startswith("guest: 2 vCPU, q35, cpu host, accel kvm; host clocksource hpet")
     and "host trace: master clock off (hostclock none); stable bit clear (0 updates with, 340 without)" in lines,
     "table: the path, the launcher's line, the trace's facts", so + se)
row = [x.split() for x in lines if x.startswith("monotonic  vdso") and x.split()[2] == "2"]
t.ok(row and row[0][3:6] == ["syscall", "244.0", "400.0"], "table: one row per cell, median and p99", row)
t.ok(lines[-1].startswith("EMULATED: accel tcg") and "accel tcg (EMULATED: TCG figures, not a KVM guest's)" in so,
     "table: a TCG guest marked EMULATED", lines[-1:])
rc, so, se = run("table", os.path.join(BEFORE, "host-tsc.json"))
t.ok(rc == 1 and len(se.splitlines()) == 1 and "not a guest result" in se, "table of a host file: exit 1, one line", se)
# Workloads and the TSC rate in the launcher's table, where the guest ran them.
g = copy(WL, "wlg")
p = os.path.join(g, "guest-hpet-2vcpu.json")
doc = json.loads(read(p))
bench = doc.get("bench") or doc
tr = json.loads(read(os.path.join(WL, "tsc-rate-tsc.json")))["checks"]["tsc_rate"]
bench["checks"]["tsc_rate"] = tr
with open(p, "w") as f:
    json.dump(doc, f)
rc, so, se = run("table", p)
wls = [ln for ln in so.splitlines() if ln.startswith("workload ")]
want = [w for w in bench["workloads"]]
t.ok(rc == 0 and len(wls) == len(want) == 3
     and all(ln.startswith("workload %s: %.3f %s on CPUs %s" % (w["workload"], w["rate"], w["rate_unit"],
                                                                ",".join(map(str, w["cpus"])))) for ln, w in zip(wls, want))
     and ("latency median" in wls[1]) and ("latency" not in wls[0]) and "(no result rows)" not in so,
     "the launcher's table: one line per workload, rate and unit, latency where there is one", so + se)
t.ok(("TSC rate over %.1f s: RTC %.3f ppm from %d edges" % (tr["seconds"], tr["rtc"]["ppm"], tr["rtc"]["edges"])) in so,
     "the launcher's table: the TSC rate, the RTC's ppm and edges", so)

# A nearly full disk: summary.md and summary.json appear together or not at
# all, and a retry once there is room succeeds.  A 64 KiB tmpfs in a mount
# namespace of its own (gone with it), filled to one free page: room for
# summary.md, not for summary.json.
import subprocess  # noqa: E402
FULL = r"""
set -u
mnt=$1 src=$2 tool=$3 out=$4 py=$5
mount -t tmpfs -o size=64k,mode=0755 tmpfs "$mnt" || exit 3
cp -r "$src" "$mnt/r" || exit 4
i=0
while head -c 4096 /dev/zero >"$mnt/fill$i" 2>/dev/null; do i=$((i + 1)); done
rm -f "$mnt/fill$i" "$mnt/fill0"
"$py" "$tool" summary "$mnt/r" >/dev/null 2>"$out/err1"
echo "$?"
ls -A "$mnt/r" | grep -v -e '^host-' -e '^guest-' -e '^kvm-trace-' | tr '\n' ' '; echo
rm -f "$mnt/fill1" "$mnt/fill2"
"$py" "$tool" summary "$mnt/r" >/dev/null 2>"$out/err2"
echo "$?"
ls -A "$mnt/r" | grep -v -e '^host-' -e '^guest-' -e '^kvm-trace-' | tr '\n' ' '; echo
"""
mnt = os.path.join(t.tmp, "mnt")
os.mkdir(mnt)
from taplib import TOOL  # noqa: E402
ns = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
try:
    p = subprocess.run(ns + ["sh", "-c", FULL, "full", mnt, BEFORE, TOOL, t.tmp, sys.executable],
                       capture_output=True, text=True, timeout=120)
    got = p.stdout.splitlines()
except (OSError, subprocess.SubprocessError) as e:
    p, got = None, [str(e)]
if p is None or p.returncode in (3, 4) or len(got) != 4:
    why = "cannot mount a small tmpfs here (%s)" % " ".join(((p and p.stderr) or " ".join(got)).split())[:80]
    t.skip(why)
    t.skip(why)
else:
    err1 = read(os.path.join(t.tmp, "err1"))
    t.ok(got[0] == "1" and got[1].split() == [] and len(err1.splitlines()) == 1 and "nothing kept" in err1,
         "a disk with room for summary.md only: exit 1, one line saying nothing was kept, no summary.md alone, "
         "no temporary file", got + [err1])
    print("# " + err1.strip())
    t.ok(got[2] == "0" and got[3].split() == ["summary.json", "summary.md"],
         "with room again, the retry writes both", got + [read(os.path.join(t.tmp, "err2"))])

# The second placement fails (summary.json put in place by another writer
# meanwhile): the first is taken back, and the line says what was kept.
sys.path[:0] = [os.path.join(os.path.dirname(os.path.dirname(TOOL)), "contract"), os.path.dirname(TOOL)]
from cbcontract import runfolder  # noqa: E402
from cbanalysis import summary  # noqa: E402
from cbcontract.util import InputError  # noqa: E402
d2 = copy(BEFORE, "race")
real_place = runfolder.Private.place


def racing_place(self, name, final, replace=False):
    if final == runfolder.SUMMARY_JSON:
        with open(os.path.join(d2, final), "w") as f:
            f.write("another's\n")
    return real_place(self, name, final, replace)


runfolder.Private.place = racing_place
try:
    summary.write(d2)
    msg = "written"
except InputError as e:
    msg = str(e)
finally:
    runfolder.Private.place = real_place
t.ok("nothing kept" in msg and not os.path.lexists(os.path.join(d2, "summary.md"))
     and read(os.path.join(d2, "summary.json")) == "another's\n"
     and not [n for n in os.listdir(d2) if n.startswith(".")],
     "summary.json placed by another meanwhile: summary.md taken back, theirs untouched, one line (%s)" % msg)
# Five rounds (fixtures/make-rounds.py): each figure the median over them,
# each ratio the median of the per-round ratios with [min, max] (93.75 %).
rd = roundsfx.make(t.tmp)
rc, so, se = run("summary", rd)
hp = (table_row(so, "hpet") or []) + [""] * 14
tscrow = table_row(so, "tsc") or []
# tsc drifts 25 x (1, 1.3, 0.9, 1.1, 1.2): median 27.5; hpet 25 x drift x (58, 60, 62, 59, 61) = 1450, 1950,
# 1395, 1622.5, 1830: median 1622.5 (not 27.5 x 60: the median of the ratios is not the ratio of the medians).
t.ok(rc == 0 and hp[1:3] == ["1622.5 (x60.00 [58.00, 62.00])", "2145.0 (x73.00 [71.00, 75.00])"]
     and tscrow[1] == "27.5 (x1.00)",
     "5 rounds: host figures the median over rounds, ratios the median of paired ratios, [min, max]", hp[:3] or se)
t.ok(hp[3] == "31.4 (no difference measured [0.95, 1.05])" and hp[4] == "262.6 (x7.80 [7.50, 8.00])",
     "the guest's 1-vCPU read, ratios 0.95..1.05 per round: no difference measured, in words", hp[3:5])
col = {n: i for i, n in enumerate((table_row(so, "host clocksource") or []))}
cells = [hp[col[n]] for n in ("tcp-stream Gbit/s", "tcp-rr transactions/s", "timer wakeups/s")] if len(col) > 12 else []
t.ok(cells and "(x0.12 [0.11, 0.13])" in cells[0].split(" / ")[0] and "no difference measured [0.90, 1.10]" in cells[1].split(" / ")[0]
     and "(no difference measured [0.97, 1.03])" in cells[1].split(" / ")[1] and "(x0.79 [0.77, 0.81])" in cells[2].split(" / ")[0],
     "workloads: tcp-stream and timer lose work, tcp-rr's interval holds 1 on host and guest: no difference measured", cells)
t.ok("5 rounds: [min, max] of the per-round ratios, 93.75 % coverage" in so and "5 rounds: each figure the median" in so,
     "the page states the rounds and the interval's coverage", so[:600])
doc = json.loads(read(os.path.join(rd, "summary.json"))) if rc == 0 else {}
hr = next((r for r in doc.get("rows", []) if r["clocksource"] == "hpet"), {})
iv = hr.get("host_1_interval") or {}
lat = (hr.get("workloads") or {}).get("tcp-rr", {}).get("host_latency_interval") or {}
t.ok(doc.get("rounds") == 5 and hr.get("rounds") == 5 and abs(hr.get("host_1_ratio", 0) - 60) < 1e-9
     and (iv.get("lo"), iv.get("hi"), iv.get("rounds"), iv.get("coverage"), iv.get("holds_one")) == (58, 62, 5, 0.9375, False)
     and [round(x, 6) for x in iv.get("ratios", [])] == [58, 60, 62, 59, 61]
     and (hr.get("guest_1_interval") or {}).get("holds_one") is True and lat.get("holds_one") is True
     and abs(lat.get("lo", 0) - 0.9) < 1e-4 and abs(lat.get("hi", 0) - 1.2) < 1e-4,
     "summary.json: rounds, each ratio's interval (lo, hi, rounds, coverage, holds_one, the per-round ratios), "
     "latency too", {k: v for k, v in hr.items() if "interval" in k})
kr = os.path.join(t.tmp, "mixed-rounds")
shutil.copytree(rd, kr)
for n in ("summary.md", "summary.json"):
    os.unlink(os.path.join(kr, n))
shutil.copy(os.path.join(WL, "host-tsc.json"), kr)
rc, so, se = run("summary", kr)
t.ok(rc == 1 and len(se.splitlines()) == 1 and "round folders" in se and not os.path.exists(os.path.join(kr, "summary.md")),
     "flat result files beside round folders: refused, one line, nothing written", se)

t.done()
