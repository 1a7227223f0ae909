#!/usr/bin/python3
# tier: fast
"""workloads.t: workloads[] (tcp-stream, tcp-rr, timer): the loader takes good rows and refuses bad ones, the report's
ratios to tsc, the real-work capacity arithmetic, the Prometheus metrics, the summary's columns."""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, ROOT, WL, Tap, read, run, table_row  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
from cbcontract import load  # noqa: E402

t = Tap()


def report(d):
    out = os.path.join(t.tmp, os.path.basename(d) + ".out")
    rc, so, se = run("report", "--no-plots", "-o", out, d)
    return rc, (read(os.path.join(out, "report.md")) if rc == 0 else ""), se


def wl(doc, name):
    """The workloads[] row of that name in a host document or a guest result's bench."""
    return [w for w in (doc.get("bench") or doc)["workloads"] if w["workload"] == name][0]


# The loader: every attribute, with its type.
ms = {os.path.basename(m.path): m for m in load.load_run(WL)}
h = ms["host-hpet.json"]
w = h.workload("tcp-rr")
t.ok([x.workload for x in h.workloads] == ["tcp-stream", "tcp-rr", "timer"]
     and (w.threads, w.cpus, w.seconds, w.clocksource, w.after_change, w.rate, w.rate_unit) ==
     (2, [0, 1], 1.0, "hpet", False, 20000.0, "transactions/s")
     and w.latency_us == {"min": 40.0, "median": 48.0, "mean": 50.0, "p99": 75.0, "p999": 110.0, "max": 900.0}
     and w.doc["transactions"] == 20000 and h.workload("tcp-stream").latency_us is None,
     "the loader's Workload: name, threads, CPUs, seconds, clocksource, rate with its unit, latency, the raw row",
     [(x.workload, x.rate, x.latency_us) for x in h.workloads])
g = ms["guest-tsc-2vcpu.json"]
t.ok(g.kind == "guest" and g.workload("tcp-stream").rate == 10.0 and g.workload("timer").doc["interval_us"] == 50,
     "a guest's workloads come from its bench document", [(x.workload, x.rate) for x in g.workloads])
old = load.load_run(BEFORE)
t.ok(all(m.workloads == [] and m.tsc_rate is None for m in old), "an older file without workloads: [] (and no tsc_rate)")

# Refused: one line naming the file and the field.
cases = [
    ("type", "host-tsc.json", lambda d: wl(d, "tcp-stream").update(rate="13"),
     'workloads[0] (tcp-stream).rate: expected a number >= 0, got "13"'),
    ("negative", "host-hpet.json", lambda d: wl(d, "tcp-rr").update(rate=-1, transactions=None),
     "workloads[1] (tcp-rr).rate: expected a number >= 0, got -1"),
    ("order", "guest-hpet-2vcpu.json", lambda d: wl(d, "timer")["latency_us"].update(p99=20.0),
     "bench.workloads[2] (timer).latency_us: median 59.0 above p99 20.0: quantiles out of order"),
    ("maxorder", "host-tsc.json", lambda d: wl(d, "tcp-rr")["latency_us"].update(max=40.0),
     "workloads[1] (tcp-rr).latency_us: p999 45.0 above max 40.0: quantiles out of order"),
    ("name", "host-tsc.json", lambda d: wl(d, "timer").update(workload="udp-stream"),
     'workloads[2].workload: "udp-stream" is not one of tcp-stream, tcp-rr, timer'),
    ("unit", "host-tsc.json", lambda d: wl(d, "tcp-stream").update(rate_unit="Mbit/s"),
     'workloads[0] (tcp-stream).rate_unit: "Mbit/s", but tcp-stream is measured in Gbit/s'),
    ("counts", "host-tsc.json", lambda d: wl(d, "tcp-stream").update(bytes=162500000),
     "workloads[0] (tcp-stream).rate: 13.0, but bytes x 8 / seconds / 1e9 is 1.3"),
    ("twice", "host-tsc.json", lambda d: d["workloads"].append(dict(d["workloads"][0])),
     "workloads[3]: a second tcp-stream row"),
    ("latstream", "host-tsc.json", lambda d: wl(d, "tcp-stream").update(latency_us=wl(d, "tcp-rr")["latency_us"]),
     "tcp-stream measures no latency"),
    ("notlist", "host-tsc.json", lambda d: d.update(workloads={}), "workloads: expected a list"),
    ("cpus", "host-tsc.json", lambda d: wl(d, "timer").update(cpus=["0"]), "workloads[2] (timer).cpus: expected a list of CPU numbers"),
    ("seconds", "host-tsc.json", lambda d: wl(d, "timer").update(seconds=0), "workloads[2] (timer).seconds: expected a number > 0"),
]
for name, fn, e, words in cases:
    d = t.copy(name, {fn: e})
    rc, so, se = run("report", "--no-plots", "-o", os.path.join(t.tmp, "out-" + name), d)
    t.ok(rc == 1 and so == "" and len(se.splitlines()) == 1 and se.startswith("clockbench-report: %s: " % os.path.join(d, fn))
         and words in se and "Traceback" not in se, "refused (%s): exit 1, one line naming the file and the field" % name, se)
d = t.copy("extra", {"host-tsc.json": lambda d: wl(d, "timer").update(future_field={"x": 1}, histogram=[1, 2])})
rc, md, se = report(d)
t.ok(rc == 0, "unknown extra fields in a row are ignored", se)

# The report: each clocksource's figure and its ratio to the tsc state's.
rc, md, se = report(WL)
t.ok(rc == 0 and table_row(md, "tcp-stream", "host", "hpet", "1.60 Gbit/s", "x0.12 [n/a (1 round)]", "n/a", "n/a", "n/a", "2 on CPU 0,1",
                           "host-hpet.json: tcp-stream") is not None,
     "tcp-stream on the host on hpet: 1.60 Gbit/s, x0.12 of tsc's 13, naming its file and row",
     [x for x in md.splitlines() if "tcp-stream" in x][:6] or se)
t.ok(table_row(md, "tcp-rr", "guest 2 vCPU", "hpet", "32000 transactions/s", "x0.80 [n/a (1 round)]", "30.0", "45.0", "x1.25 [n/a (1 round)]") is not None
     and table_row(md, "timer", "host", "tsc", "38000 wakeups/s", "1.00", "55.0", "70.0", "1.00") is not None,
     "tcp-rr in the guest: 32000/s, x0.80, latency 30/45 us, median x1.25; timer on tsc x1.00",
     [x for x in md.splitlines() if x.startswith("| tcp-rr") or x.startswith("| timer")])


def emulate(doc):
    doc["context"]["hypervisor"] = "TCGTCGTCGTCG"
    wl(doc, "timer")["after_change"] = True


d = t.copy("marks", {"host-hpet.json": emulate})
rc, md, se = report(d)
t.ok(rc == 0 and table_row(md, "timer", "host†*", "hpet") is not None and "* measured after the kernel's clocksource" in md
     and "EMULATED" in md.split("## Workloads")[1].split("## ")[0],
     "a row measured after a clocksource change is marked *, an emulated one †, both explained",
     [x for x in md.splitlines() if x.startswith("| timer")] or se)

# Capacity: work lost and the hosts needed, with the working.
rc, so, se = run("capacity", WL)
r = table_row(so, "host on hpet", "tcp-stream") or []
t.ok(rc == 0 and r[2:8] == ["1.6 Gbit/s", "13 Gbit/s", "87.7 %", "713", "20260220-120000-wl/host-hpet.json: tcp-stream",
                            "20260220-120000-wl/host-tsc.json: tcp-stream"],
     "host on hpet, tcp-stream: 87.7 % lost; 100 x 13 / 1.6 - 100 = 712.5, 713 more hosts; both rows named", r or se)
t.ok("- host on hpet, tcp-stream: 100 x 13 / 1.6 - 100 = 712.50, rounded up: 713" in so
     and "- guest 2 vCPU, host on hpet, timer: 100 x 36000 / 34000 - 100 = 5.88, rounded up: 6" in so,
     "the working is shown, guests too", [x for x in so.splitlines() if x.startswith("- ")])
rc, so, se = run("capacity", "--hosts", "10", WL)
r = table_row(so, "host on hpet", "tcp-rr") or []
t.ok(rc == 0 and r[4:6] == ["60.0 %", "15"] and "10 x 50000 / 20000 - 10 = 15.00, rounded up: 15" in so,
     "--hosts 10, tcp-rr 20000 against 50000: 15 more hosts exactly (not 16)", r)
d = t.copy("emucap", {"guest-hpet-2vcpu.json": lambda doc: doc["launcher"].update(accel="tcg", emulated=True)})
rc, so, se = run("capacity", d)
real = so.split("### Real work")[1] if "### Real work" in so else ""
t.ok(rc == 0 and real and "guest" not in real.split("Working:")[0].split("| state")[1]
     and "1 emulated (TCG) result left out" in real, "an emulated guest's workloads stay out of the real-work planning",
     real[:600] or se)
rc, md, se = report(WL)
t.ok("### Real work: throughput lost and hosts needed" in md and "rounded up: 713" in md,
     "the report's capacity section carries the real work")

# Prometheus.
out = os.path.join(t.tmp, "wl.prom")
rc, so, se = run("prom", "-o", out, WL)
lines = read(out).splitlines() if rc == 0 else []
want = ['node_clockbench_workload_rate{where="host",clocksource="hpet",workload="tcp-stream",unit="Gbit/s"} 1.6',
        'node_clockbench_workload_rate{where="guest",clocksource="tsc",vcpus="2",workload="tcp-rr",unit="transactions/s"} 40000',
        'node_clockbench_workload_latency_median_seconds{where="host",clocksource="tsc",workload="tcp-rr"} 1.95e-05',
        'node_clockbench_workload_latency_p99_seconds{where="guest",clocksource="hpet",vcpus="2",workload="timer"} 8.5e-05']
t.ok(rc == 0 and all(x in lines for x in want) and not any("latency" in x and "tcp-stream" in x for x in lines),
     "prom: each workload's rate with its unit, latency in seconds (none for tcp-stream)",
     [x for x in want if x not in lines] or se)
promtool = shutil.which("promtool")
if promtool:
    p = subprocess.run([promtool, "check", "metrics"], stdin=open(out), capture_output=True, text=True)
    t.ok(p.returncode == 0, "promtool check metrics, with the workload metrics", p.stdout + p.stderr)
else:
    t.skip("promtool not installed (Debian: prometheus)")

# summary.md: one column per workload, host / guest with the ratio to tsc.
d = t.copy("summary")
rc, so, se = run("summary", d)
r = table_row(so, "hpet") or []
doc = json.loads(read(os.path.join(d, "summary.json"))) if rc == 0 else {}
hp = [x for x in doc.get("rows", []) if x["clocksource"] == "hpet"]
t.ok(rc == 0 and r[11:] == ["1.6 (x0.12 [n/a (1 round)]) / 8 (x0.80 [n/a (1 round)])", "20000 (x0.40 [n/a (1 round)]) / 32000 (x0.80 [n/a (1 round)])", "30000 (x0.79 [n/a (1 round)]) / 34000 (x0.94 [n/a (1 round)])"]
     and hp and hp[0]["workloads"]["tcp-rr"]["guest_ratio"] == 0.8,
     "summary: a column per workload, host / guest rates with their ratios to tsc, in the JSON too", (r, se))
rc, so, se = run("summary", t.copy("summary-old", src=BEFORE))
t.ok(rc == 0 and "tcp-stream" not in so and so.splitlines()[4].count("|") == 12,
     "summary of a run without workloads: the table as before", so.splitlines()[4:5])
# The engine's own output, where it is built: its workloads load and report.
ENGINE = os.path.join(ROOT, "bench", "clockbench")
p = subprocess.run([ENGINE, "--no-cost", "--workloads", "all", "--duration", "0.2", "--format", "json"],
                   capture_output=True, text=True, timeout=120) if os.access(ENGINE, os.X_OK) else None
if p is None or p.returncode != 0:
    t.skip("bench/clockbench not built, or without --workloads: %s" % (p.stderr.strip()[-200:] if p else "no binary"))
else:
    d = os.path.join(t.tmp, "engine", "20260101-000000-engine")
    os.makedirs(d)
    with open(os.path.join(d, "host-tsc.json"), "w") as f:
        f.write(p.stdout)
    try:
        got = [(w.workload, w.rate_unit, w.latency_us is None) for w in load.load_run(d)[0].workloads]
    except Exception as e:  # noqa: BLE001 (the test's failure)
        got = str(e)
    t.ok(got == [("tcp-stream", "Gbit/s", True), ("tcp-rr", "transactions/s", False), ("timer", "wakeups/s", False)],
         "bench/clockbench --workloads all: its document loads, three workloads", got)
t.done()
