#!/usr/bin/python3
# tier: fast
"""tscrate.t: --check tsc-rate's results (checks.tsc_rate, tsc-rate-<cs>.json): run-folder names, the loader (good and
bad), the report's TSC-rate section, the Prometheus metrics."""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, WL, Tap, read, run, table_row  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
from cbcontract import load, runfolder as rf  # noqa: E402

t = Tap()


def tr(doc):
    return doc["checks"]["tsc_rate"]


# Run-folder names: the writers' command line and the readers' patterns agree.
rd = rf.make_run(t.tmp, "r1")
p = subprocess.run([sys.executable, os.path.join(ROOT, "host-scripts", "runfolder"), "path", rd, "tsc-rate", "tsc"],
                   capture_output=True, text=True)
t.ok(p.returncode == 0 and p.stdout == os.path.join(rd, "tsc-rate-tsc.json") + "\n", "runfolder path DIR tsc-rate tsc",
     p.stdout + p.stderr)
p = subprocess.run([sys.executable, os.path.join(ROOT, "host-scripts", "runfolder"), "path", rd, "crosscheck", "exe"],
                   capture_output=True, text=True)
t.ok(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and "json or txt" in p.stderr,
     "runfolder path DIR crosscheck exe: usage, one line", p.stderr)
t.ok(rf.classify("tsc-rate-kvm-clock.json") == ("tsc-rate", {"cs": "kvm-clock"})
     and rf.classify("crosscheck.txt") == ("crosscheck", {"ext": "txt"})
     and rf.classify("tsc-rate-.json") is None and rf.classify("crosscheck.json.tmp") is None,
     "classify() knows tsc-rate-<cs>.json and crosscheck.json|txt, and nothing near them")

# The loader: tsc-rate files are measurements of their own kind, with the check.
ms = {os.path.basename(m.path): m for m in load.load_run(WL)}
a, b = ms.get("tsc-rate-tsc.json"), ms.get("tsc-rate-hpet.json")
t.ok(a is not None and a.kind == "tsc-rate" and a.host_cs == "tsc" and a.rows == [] and a.workloads == []
     and a.where == "host" and not a.emulated,
     "tsc-rate-tsc.json: a measurement of kind tsc-rate, no cost rows, on the host", a and vars(a).keys())
t.ok(a.tsc_rate["rtc"]["ppm"] == 10.0 and a.tsc_rate["reference_hz"] == 2.5e9 and a.tsc_rate["reference"] == "kernel"
     and a.tsc_rate["adjtimex"]["synchronized"] is True and b.tsc_rate["reference"] == "engine"
     and b.tsc_rate["reference_hz"] == 2500001200.0 and b.tsc_rate["rtc"]["available"] is False,
     "tsc_rate: the RTC's ppm, the reference (the kernel's, else the engine's), NTP's state", a.tsc_rate)
t.ok(ms["host-tsc.json"].tsc_rate is None, "a host file with checks.tsc_rate null: None")

# Refused: one line naming the file and the field.
cases = [
    ("ppm", "tsc-rate-tsc.json", lambda d: tr(d)["rtc"].update(ppm=12.0),
     "checks.tsc_rate.rtc.ppm: 12.0, but tsc_hz 2500025000.0 against the reference 2500000000.0 Hz is 10.000 ppm"),
    ("engineppm", "tsc-rate-hpet.json", lambda d: tr(d)["monotonic"].update(ppm=1.5),
     "checks.tsc_rate.monotonic.ppm: 1.5, but tsc_hz 2500003700.0 against the reference 2500001200.0 Hz is 1.000 ppm"),
    ("type", "tsc-rate-tsc.json", lambda d: tr(d)["monotonic_raw"].update(tsc_hz="2.5e9"),
     'checks.tsc_rate.monotonic_raw.tsc_hz: expected a number > 0, got "2.5e9"'),
    ("noreason", "tsc-rate-hpet.json", lambda d: tr(d)["rtc"].update(reason=None),
     "checks.tsc_rate.rtc.reason: expected a string, got null"),
    ("edges", "tsc-rate-tsc.json", lambda d: tr(d)["rtc"].update(edges=1),
     "checks.tsc_rate.rtc.edges: expected an integer >= 2"),
    ("source", "tsc-rate-tsc.json", lambda d: tr(d).update(kernel_tsc_khz=None),
     'checks.tsc_rate.kernel_tsc_khz_source: "cpuid-0x15" with kernel_tsc_khz null: both or neither'),
    ("sync", "tsc-rate-tsc.json", lambda d: tr(d)["adjtimex"].update(synchronized="yes"),
     'checks.tsc_rate.adjtimex.synchronized: expected true or false or null, got "yes"'),
    ("missing", "tsc-rate-tsc.json", lambda d: d["checks"].update(tsc_rate=None),
     "checks.tsc_rate: missing (a tsc-rate file holds --check tsc-rate)"),
    ("guest", "guest-tsc-2vcpu.json", lambda d: d["bench"]["checks"].update(tsc_rate=[]),
     "bench.checks.tsc_rate: expected an object or null"),
]
for name, fn, e, words in cases:
    d = t.copy(name, {fn: e})
    rc, so, se = run("report", "--no-plots", "-o", d + ".out", d)
    t.ok(rc == 1 and so == "" and len(se.splitlines()) == 1 and se.startswith("clockbench-report: %s: " % os.path.join(d, fn))
         and words in se and "Traceback" not in se, "refused (%s): exit 1, one line naming the file and the field" % name, se)
d = t.copy("extra", {"tsc-rate-tsc.json": lambda d: tr(d).update(samples=[1, 2, 3], note="later engine")})
t.ok(run("report", "--no-plots", "-o", d + ".out", d)[0] == 0, "unknown extra fields are ignored")

# The report's section: per clocksource, RTC (or why not), ppm, NTP.
out = os.path.join(t.tmp, "rep")
rc, so, se = run("report", "--no-plots", "-o", out, WL)
md = read(os.path.join(out, "report.md")) if rc == 0 else ""
r1 = table_row(md, "host", "tsc", "5")
r2 = table_row(md, "host", "hpet", "5")
t.ok(rc == 0 and r1 == ["host", "tsc", "5", "kernel 2500000 kHz (cpuid-0x15)",
                        "+10.000 ppm (2500025000 Hz over 6 edges, jitter 12.5 us)", "+1.000 ppm", "+0.000 ppm",
                        "-9.000 ppm", "synchronized", "tsc-rate-tsc.json"],
     "tsc: the RTC's +10 ppm against the kernel's TSC kHz, monotonic +1, raw 0, NTP -9 ppm, synchronized", r1 or se)
t.ok(r2 is not None and r2[3:5] == ["engine 2500001.2 kHz (the kernel's not known)",
                                    "no RTC: /dev/rtc0: No such file or directory"] and r2[8] == "not synchronized",
     "hpet: no RTC, said plainly with the reason; the engine's calibration as the reference", r2)
t.ok("No CLOCK_MONOTONIC vdso row in tsc-rate" not in md and "### 20260220-120000-wl: tsc-rate" not in md,
     "a tsc-rate file is not taken for a cost measurement")
d = t.copy("inline", {"host-tsc.json": lambda doc: doc["checks"].update(
    tsc_rate=json.loads(read(os.path.join(WL, "tsc-rate-tsc.json")))["checks"]["tsc_rate"])})
os.unlink(os.path.join(d, "tsc-rate-tsc.json"))
rc, so, se = run("report", "--no-plots", "-o", d + ".out", d)
md = read(os.path.join(d + ".out", "report.md")) if rc == 0 else ""
t.ok(table_row(md, "host", "tsc", "5", "kernel 2500000 kHz (cpuid-0x15)") is not None
     and (table_row(md, "host", "tsc", "5") or [""])[-1] == "host-tsc.json",
     "the check inside a host file (bench/clockbench --check tsc-rate) is shown too, naming that file", se)

# Prometheus.
pf = os.path.join(t.tmp, "tr.prom")
rc, so, se = run("prom", "-o", pf, WL)
lines = read(pf).splitlines() if rc == 0 else []
want = ['node_clockbench_tsc_rate_ppm{where="host",clocksource="tsc",reference="rtc"} 10',
        'node_clockbench_tsc_rate_ppm{where="host",clocksource="hpet",reference="monotonic"} 1',
        'node_clockbench_tsc_rate_ppm{where="host",clocksource="tsc",reference="monotonic_raw"} 0',
        'node_clockbench_ntp_frequency_ppm{where="host",clocksource="tsc"} -9']
t.ok(rc == 0 and all(x in lines for x in want) and not any('clocksource="hpet",reference="rtc"' in x for x in lines),
     "prom: ppm against each reference (no rtc sample without an RTC), NTP's correction",
     [x for x in want if x not in lines] or se)
t.ok(sum(1 for x in lines if x.startswith("node_clockbench_measurement_info{")) == 4,
     "a tsc-rate file adds no measurement of its own (4 info lines: 2 hosts, 2 guests)")
promtool = shutil.which("promtool")
if promtool:
    p = subprocess.run([promtool, "check", "metrics"], stdin=open(pf), capture_output=True, text=True)
    t.ok(p.returncode == 0, "promtool check metrics, with the TSC rate metrics", p.stdout + p.stderr)
else:
    t.skip("promtool not installed (Debian: prometheus)")
# The engine's own output, where it is built: the check loads and reports.
ENGINE = os.path.join(ROOT, "bench", "clockbench")
p = subprocess.run([ENGINE, "--no-cost", "--check", "tsc-rate", "--duration", "5", "--format", "json"],
                   capture_output=True, text=True, timeout=120) if os.access(ENGINE, os.X_OK) else None
if p is None or p.returncode != 0:
    t.skip("bench/clockbench not built, or without --check tsc-rate: %s" % (p.stderr.strip()[-200:] if p else "no binary"))
else:
    d = os.path.join(t.tmp, "engine", "20260101-000000-engine")
    os.makedirs(d)
    with open(os.path.join(d, "tsc-rate-tsc.json"), "w") as f:
        f.write(p.stdout)
    rc, so, se = run("report", "--no-plots", "-o", d + ".out", d)
    md = read(os.path.join(d + ".out", "report.md")) if rc == 0 else ""
    t.ok(rc == 0 and "## The TSC's rate" in md and "tsc-rate-tsc.json |" in md,
         "bench/clockbench --check tsc-rate: its document loads and is reported", se)
t.done()
