#!/usr/bin/python3
# tier: fast
"""peers.t: crosscheck's readers of its peers' outputs (iperf3 -J,
cyclictest --json, sockperf ping-pong --full-rtt), each on an output
recorded from that peer (tests/host-scripts/fixtures/peers/: iperf3 3.12,
cyclictest 2.40 and sockperf 3.7 of Debian 12, recorded on the development
machine 2026-12-01), and on outputs they cannot read: each of those fails
loudly (crosscheck's Failure, naming the peer), never a 0."""
import importlib.machinery
import importlib.util
import json
import os
import re
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from taplib import Tap  # noqa: E402

FX = os.path.join(ROOT, "tests", "host-scripts", "fixtures", "peers")
loader = importlib.machinery.SourceFileLoader("crosscheck", os.path.join(ROOT, "host-scripts", "crosscheck"))
cc = importlib.util.module_from_spec(importlib.util.spec_from_loader("crosscheck", loader))
loader.exec_module(cc)
t = Tap()


def read(name):
    with open(os.path.join(FX, name)) as f:
        return f.read()


def fails(fn, *args):
    """The Failure's message, or None when fn returned (its value in the
    diagnostic)."""
    try:
        v = fn(*args)
    except cc.Failure as e:
        return str(e)
    fails.last = v
    return None


# iperf3 -J: bits_per_second of sum_received, as Gbit/s.
ip = read("iperf3-3.12-client.json")
doc = json.loads(ip)
gbit, line = cc.parse_iperf3(ip)
t.ok(abs(gbit - doc["end"]["sum_received"]["bits_per_second"] / 1e9) < 1e-9 and gbit > 1,
     "iperf3 3.12 -J: Gbit/s received read (%.3f)" % gbit, line)
for what, text in (("truncated", ip[: len(ip) // 2]), ("no end object", json.dumps({"start": {}})),
                   ("a zero rate", ip.replace('"bits_per_second":', '"bits_per_second": 0, "x":')),
                   ("a rate as a string", json.dumps({"end": {"sum_received": {"bits_per_second": "9e9"},
                                                              "sum_sent": {"bits_per_second": 1}}}))):
    msg = fails(cc.parse_iperf3, text)
    t.ok(msg is not None and msg.startswith("iperf3"), "iperf3 output with %s: refused, naming iperf3" % what, msg)

# cyclictest --json: the threads' histograms merged, the median from them.
ct = json.loads(read("cyclictest-2.40.json"))
fig = cc.parse_cyclictest(ct, 1)
cycles = sum(th["cycles"] for th in ct["thread"].values())
t.ok(abs(fig["wakeups_per_s"] - cycles) < 1e-9 and fig["latency_median_us"] is not None and
     fig["latency_median_us"] <= fig["latency_p99_us"] <= fig["latency_max_us"],
     "cyclictest 2.40 --json: wake-ups (%d), median %s <= p99 %s <= max %s us"
     % (cycles, fig["latency_median_us"], fig["latency_p99_us"], fig["latency_max_us"]))
t.ok(min(th["min"] for th in ct["thread"].values()) <= fig["latency_median_us"],
     "cyclictest: the median is not below the threads' own minimum", fig)
bad = json.loads(json.dumps(ct))
next(iter(bad["thread"].values()))["cycles"] = "many"
for what, d in (("no thread object", {"num_threads": 2}), ("threads without a histogram", {"thread": {"0": {}}}),
                ("a count as a string", bad), ("no wake-up", {"thread": {"0": {"histogram": {}, "cycles": 0,
                                                                              "max": 0, "avg": 0}}}),
                ("a list, not an object", [1, 2])):
    msg = fails(cc.parse_cyclictest, d, 1)
    t.ok(msg is not None and msg.startswith("cyclictest"), "cyclictest --json with %s: refused" % what, msg)

# sockperf ping-pong --full-rtt: round trips over the valid duration, the
# median from its percentile 50 line (its colour escapes ignored).
sp = read("sockperf-3.7-ping-pong.txt")
rate, med, line = cc.parse_sockperf(sp)
t.ok(abs(rate - 43909 / 1.550) < 1e-6 and med == 23.303,
     "sockperf 3.7 ping-pong: %.0f round trips/s, median %.3f us (43909 in 1.550 s; percentile 50 = 23.303)"
     % (rate, med), line)
for what, text in (("no percentile lines", "\n".join(x for x in sp.splitlines() if "percentile" not in x)),
                   ("latency, not --full-rtt", sp.replace("Round trip is", "Latency is")),
                   ("no [Valid Duration] line", sp.replace("[Valid Duration]", "[Total]")),
                   ("no round trip received", sp.replace("ReceivedMessages=43909", "ReceivedMessages=0")),
                   ("nothing", "")):
    msg = fails(cc.parse_sockperf, text)
    t.ok(msg is not None and msg.startswith("sockperf"), "sockperf output with %s: refused" % what, msg)

# Ratios to a peer are paired by round, each with its interval: the engine
# at 10, 20, 40 beside a peer at 20, 40, 10 is 0.5, 0.5, 4 round by round
# (median 0.5, [0.5, 4] holds 1), though the medians' ratio is 20/20.
vals = {("tcp-stream", "rate", "clockbench"): [10.0, 20.0, 40.0], ("tcp-stream", "rate", "iperf3"): [20.0, 40.0, 10.0],
        ("tcp-stream", "rate", "none"): [1.0]}
vals.update({(w, f, "clockbench"): [1.0, 1.0, 1.0] for w, f, *_ in cc.ENGINE_FIGURES if w != "tcp-stream"})
vals.update({("tcp-rr", f, "sockperf"): [2.0, 2.2, 2.1] for f in ("rate", "latency_median_us")})
figures, ratios = cc.tabulate(vals, False)
r = next(x for x in ratios if x["peer"] == "iperf3")
t.ok(r["ratio"] == 0.5 and r["interval"]["lo"] == 0.5 and r["interval"]["hi"] == 4.0 and r["interval"]["holds_one"]
     and r["text"].startswith("no difference measured"),
     "tcp-stream vs iperf3: per-round ratios 0.5, 0.5, 4: median 0.5, [0.50, 4.00], no difference measured", r)
r = next(x for x in ratios if x["peer"] == "sockperf" and x["figure"] == "rate")
t.ok(r["interval"]["hi"] < 1 and r["text"].startswith("x0.4"),
     "tcp-rr vs sockperf: every round below 1: a difference, with its interval (%s)" % r["text"], r)

# One list of peers, and host-scripts/deps installs every one of them.
deps = open(os.path.join(ROOT, "host-scripts", "deps")).read()
group = re.search(r"^\s*crosscheck=\(([^)]*)\)", deps, re.M)
t.ok(group is not None and all(pkg in group.group(1).split() for _, pkg in cc.PEERS),
     "every peer's package (%s) is in deps' crosscheck group" % ", ".join(p for _, p in cc.PEERS))
t.done()
