#!/usr/bin/python3
# tier: fast
"""health-risk.t: contract/cbcontract/risk.py, its arithmetic by hand and by properties.

A constructed readout (100,000 samples, 100 over a 50 us limit, in 80
single slow readouts and 10 pairs) gives the figures worked out by hand;
then, over 300 random readouts: more attempts never raise the risk, and a
higher limit never raises it; the verdicts unwatched, unavailable, margin
and at risk each from the case that makes it.
"""
import os
import random
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path[:0] = [os.path.join(TOP, "contract"), os.path.join(TOP, "tests", "lib")]
from cbcontract import risk  # noqa: E402
from taplib import Tap  # noqa: E402

t = Tap()
YEAR = 2 * 365.25 * 86400


def readout(**kw):
    r = {"device": "stand-in", "how": "file-mmap", "unavailable": None, "samples": 100000, "cpu": 0, "load": False,
         "limit_ns": 50000, "ns": {"p50": 900, "p99": 1500, "p99_9": 4000, "p99_99": 60000, "max": 200000},
         "over_limit": 100, "runs_over_limit": {"1": 80, "2": 10, "longest": 2}, "interrupted": 5,
         "tail_is_upper_bound": True}
    r.update(kw)
    return r


r = risk.assess(readout(), 50000, 2)
t.ok(r["share_over_limit"] == 100 / 100000 and r["share_from"] == "measured", "share over the limit: 100 of 100,000", r)
t.ok(r["p_tick_measured"] == 10 / 99999, "two attempts, both slow: the 10 pairs among 99,999 places", r["p_tick_measured"])
t.ok(abs(r["p_tick_independent"] - 1e-6) < 1e-18, "independence estimate: 0.001^2", r["p_tick_independent"])
t.ok(abs(r["false_alarms_per_host_year"]["measured"] - 10 / 99999 * YEAR) < 1e-6,
     "false alarms per host-year: the measured chance times 63,115,200 ticks", r["false_alarms_per_host_year"])
t.ok(r["verdict"] == "at risk", "pairs of slow readouts and two attempts: at risk", r["verdict"])
r3 = risk.assess(readout(), 50000, 3)
t.ok(r3["p_tick_measured"] == 0 and r3["p_tick_independent"] < r["p_tick_independent"],
     "three attempts: no run of three was seen; the estimate falls to 1e-9", r3)
t.ok(risk.windows({"1": 3, "4": 1, "longest": 7}, 3) == 5,
     "a run longer than the largest bucket counts as long as the longest (7 - 3 + 1)")

clean = readout(over_limit=0, runs_over_limit={"longest": 0}, ns={"p50": 900, "p99": 1500, "p99_9": 3000,
                                                                 "p99_99": 5000, "max": 9000})
r = risk.assess(clean, 50000, 4)
t.ok(r["verdict"] == "margin x10" and r["margin"] == 10, "p99.99 of 5 us against 50 us: margin x10", r["verdict"])
t.ok(risk.assess(clean, 50000, 4, watched=False)["verdict"] == "unwatched", "an unwatched TSC: unwatched")
u = risk.assess(readout(unavailable="no /dev/hpet: this machine has no HPET", samples=0), 50000, 4)
t.ok(u["verdict"] == "unavailable" and "no HPET" in u["reason"], "an unavailable readout: unavailable, with its reason")
t.ok(risk.assess(clean, None, 4)["verdict"] == "unavailable", "no known limit: unavailable, not a guess")
t.ok(risk.assess(clean, 50000, 4, marks_unstable=False)["notes"][-1].startswith("this kernel only reports"),
     "a kernel that only reports a slow tick says so")
# At another limit than the engine counted against: from the percentiles.
s, how = risk.share_over(clean, 4000)
t.ok(abs(s - 0.001) < 1e-12 and how.startswith("percentiles"), "share over 4 us from the percentiles: above p99.9", (s, how))

# Properties over random readouts.
rnd = random.Random(19)
bad_k, bad_l = [], []
for i in range(300):
    n = rnd.randint(1000, 10 ** 7)
    ps = sorted(rnd.uniform(500, 200000) for _ in range(5))
    limit = rnd.choice([50000, 100000, 125000])
    # A count of slow readouts that the percentiles allow (the engine's
    # histogram gives both): above 1 - (the first percentile over the
    # limit), at most 1 - (the last one under it).
    qs = [0.5, 0.99, 0.999, 0.9999, 1.0]
    under = [q for q, v in zip(qs, ps) if v <= limit]
    hi = 1 - (under[-1] if under else 0)
    lo = 1 - next((q for q, v in zip(qs, ps) if v > limit), 1.0)
    over = 0 if ps[-1] <= limit else max(1, int(n * rnd.uniform(lo, hi)))
    runs, left, j = {}, over, 1
    while left > 0 and j < 9:
        c = rnd.randint(0, left // j)
        if c:
            runs[str(j)] = c
            left -= c * j
        j += 1
    runs["longest"] = max([int(k) for k in runs] or [0])
    ro = readout(samples=n, over_limit=over, runs_over_limit=runs, limit_ns=limit,
                 ns=dict(zip(("p50", "p99", "p99_9", "p99_99", "max"), ps)))
    prev = None
    for k in range(1, 8):
        a = risk.assess(ro, limit, k)
        cur = (a["p_tick_measured"] or 0, a["p_tick_independent"])
        if prev and (cur[0] > prev[0] or cur[1] > prev[1]):
            bad_k.append((i, k, prev, cur))
        prev = cur
    prev = None
    for lim in sorted([rnd.uniform(100, 300000) for _ in range(8)] + [limit, limit - 1, limit + 1]):
        a = risk.assess(ro, lim, 3)
        cur = (a["share_over_limit"], a["p_tick_independent"], a["margin"])
        if prev and (cur[0] > prev[0] or cur[1] > prev[1] or cur[2] < prev[2]):
            bad_l.append((i, lim, prev, cur))
        prev = cur
t.ok(not bad_k, "300 readouts: more attempts never raise the chance of an all-slow tick", bad_k[:3])
t.ok(not bad_l, "300 readouts: a higher limit never raises the share, the chance, nor lowers the margin", bad_l[:3])
sys.exit(t.done())
