#!/usr/bin/python3
# tier: fast
"""capacity.t: the capacity arithmetic, by hand: share = reads/s x ns x 1e-9, cores = hosts x vCPUs x share."""
import os
import sys

sys.dont_write_bytecode = True

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "lib")]
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", d) for d in ("contract", "analysis")]
from taplib import BEFORE, LAB, Tap, run, table_row  # noqa: E402
from cbanalysis import capacity, interval  # noqa: E402
import roundsfx  # noqa: E402

t = Tap()
# DOMAIN.md's example: 1e6 reads/s at 28 ns is 2.8 % of a vCPU, at 187 ns 18.7 %.
t.ok(abs(capacity.share(1e6, 28) - 0.028) < 1e-12 and abs(capacity.share(1e6, 187) - 0.187) < 1e-12,
     "share(1e6/s, 28 ns) = 0.028, share(1e6/s, 187 ns) = 0.187")
t.ok(abs(capacity.cores(100, 64, 1e6, 187) - 1196.8) < 1e-9, "cores(100 hosts x 64 vCPUs, 1e6/s, 187 ns) = 1196.8")

# Real work: more hosts = ceil(hosts x rate on tsc / rate - hosts); exact sums are not rounded up further.
def ws(rate, tsc):
    s = capacity.WorkState("s", "tcp-stream", rate, "Gbit/s", "src", False)
    s.baseline = capacity.WorkState("t", "tcp-stream", tsc, "Gbit/s", "src", False)
    return s


t.ok(capacity.more_hosts(100, ws(1.6, 13.0)) == (712.5, 713) and capacity.more_hosts(100, ws(20000, 50000))[1] == 150
     and capacity.more_hosts(3, ws(0.3, 0.9))[1] == 6,
     "more hosts: 100 x 13 / 1.6 - 100 = 712.5 -> 713; 100 x 50000 / 20000 - 100 = 150; 3 x 0.9 / 0.3 - 3 = 6 (not 7)",
     [capacity.more_hosts(100, ws(1.6, 13.0)), capacity.more_hosts(3, ws(0.3, 0.9))])
t.ok(capacity.more_hosts(100, ws(14.0, 13.0))[1] == 0 and capacity.more_hosts(100, ws(0.0, 13.0)) == (None, None)
     and abs(capacity.lost(ws(1.6, 13.0)) - (1 - 1.6 / 13)) < 1e-12,
     "a state faster than tsc needs 0 more hosts; one that did no work, no number; work lost = 1 - rate / tsc's")

rc, so, se = run("capacity", "--ns", "tsc=28", "--ns", "hpet=187", "--rate", "1e6")
t.ok(rc == 0 and se == "", "capacity with given states exits 0", se)
a = table_row(so, "tsc", "28.00") or []
b = table_row(so, "hpet", "187.00") or []
t.ok(a[-1] == "2.8 %" and b[-1] == "18.7 %", "1e6 reads/s: 2.8 % and 18.7 % of a vCPU", (a, b))
t.ok(a[3:] == ["0.028 %", "0.28 %", "2.8 %"], "presets 1e4 and 1e5 are shown beside the rate given", a)
fb = [r for r in so.splitlines() if r.startswith("| hpet | ") and "vs tsc" in r]
t.ok(len(fb) == 1 and fb[0].endswith("| 1196.80 (+1017.60 vs tsc) |"),
     "fleet 100 x 64 at 1e6/s: 1196.80 cores, 1017.60 more than tsc (6400 x 1e6 x 159e-9)", fb)

rc, so, se = run("capacity", "--ns", "tsc=28", "--ns", "hpet=187", "--rate", "2.5e5", "--hosts", "10", "--vcpus", "4")
fb = [r for r in so.splitlines() if r.startswith("| hpet | ") and "vs tsc" in r]
# 40 vCPUs x 2.5e5/s x 187e-9 = 1.87 cores; tsc 0.28; +1.59.
t.ok(rc == 0 and "10 hosts x 4 vCPUs each = 40 vCPUs" in so and fb and "| 1.87 (+1.59 vs tsc) |" in fb[0],
     "fleet 10 x 4 at 2.5e5/s: 1.87 cores, +1.59 against tsc", (se, fb))
t.ok("| 2.5e5 reads/s | 1e6 reads/s |" in so, "the rate given appears in the table, in order")

rc, so, se = run("capacity", BEFORE)
r = table_row(so, "guest 2 vCPU, host on hpet", "244.00") or []
t.ok(rc == 0 and r[-1] == "24.4 %", "from a run: the guest on hpet, 2 vCPUs reading, 244 ns: 24.4 % at 1e6/s", r)
rc, so, se = run("capacity", LAB)
t.ok(rc == 0 and "1 emulated (TCG) result left out" in so and "guest" not in so.split("### Share")[1],
     "an emulated guest is not a state to plan with", so[-400:])

for args, what in ((["--rate", "abc"], "--rate abc"), (["--rate", "0"], "--rate 0"), (["--hosts", "0"], "--hosts 0"),
                   (["--ns", "hpet=x"], "--ns hpet=x"), (["--vcpus", "2.5"], "--vcpus 2.5")):
    rc, so, se = run("capacity", *(args + ["--ns", "a=1"]))
    t.ok(rc == 2 and len(se.splitlines()) == 1 and what in se and so == "", "usage error %s: exit 2, one line naming it" % what, se)

# A ratio whose interval holds 1 is no cost: never extra cores, never a gain.
base = capacity.State("host on tsc", 30.0, "src")
worse = capacity.State("host on a", 31.0, "src", base, interval.Ratio([0.95, 1.05, 1.0, 1.02, 1.08]))
better = capacity.State("host on b", 29.0, "src", base, interval.Ratio([0.9, 0.95, 0.97, 1.0, 1.05]))
real = capacity.State("host on c", 60.0, "src", base, interval.Ratio([1.9, 2.0, 2.1, 1.95, 2.05]))
txt = capacity.render([base, worse, better, real], [1e6], 100, 64)
fleet = txt.split("### Fleet")[1]
ra, rb, rc_ = (table_row(fleet, s.label) or [""] * 2 for s in (worse, better, real))
t.ok("no cost counted: no difference measured" in ra[1] and "no cost counted: no difference measured" in rb[1]
     and "+" not in ra[1] and "-" not in rb[1].split("(")[1],
     "an interval that holds 1: no cost counted, neither +0.06 cores (a) nor -0.06 (b)", (ra, rb))
t.ok("(+192.00 vs host on tsc)" in rc_[1] and "Worked example, host on c" in txt,
     "an interval that excludes 1 is counted: +192.00 cores, and it is the worked example", rc_)
t.ok("- host on a: its interval against tsc [0.95, 1.08] holds 1: no difference measured, so no extra cores are "
     "counted (neither a gain nor a loss)." in txt and "- host on b: its interval against tsc [0.90, 1.05] holds 1" in txt,
     "each state not counted says so, with its interval", fleet)
one = capacity.State("host on d", 60.0, "src", base, interval.Ratio([2.0]))
t.ok("(+192.00 vs host on tsc)" in capacity.render([base, one], [1e6], 100, 64),
     "one round (no interval): counted as measured, as before")

# Five rounds (roundsfx): tcp-rr's rate ratio holds 1 on the host: no work lost, no host more.
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "contract")]
from cbcontract import rounds  # noqa: E402
rms = [m for _, rm in rounds.load_rounds(roundsfx.make(t.tmp)) for m in rm]
work = capacity.work_from(rms, False)
txt = "\n".join(capacity.render_work(work, 100))
rr = table_row(txt, "host on hpet", "tcp-rr") or []
tm = table_row(txt, "host on hpet", "timer") or []
t.ok(rr[4:6] == ["none counted (no difference measured [0.90, 1.10])", "0 (no difference measured)"]
     and "- host on hpet, tcp-rr: its interval [0.90, 1.10] holds 1: no difference measured, so no work lost" in txt
     and not any(l.startswith("- host on hpet, tcp-rr: 100") for l in txt.splitlines()),
     "5 rounds, tcp-rr on hpet (ratios 0.90..1.10): none counted, 0 hosts, said so, no working line", rr)
# timer: ratios 0.77..0.81, median 0.79: lost 21.0 % [19.0, 23.0]; 100 / 0.79 - 100 = 26.58 -> 27.
t.ok(tm[4:6] == ["21.0 % [19.0, 23.0]", "27"] and len([w for w in work if w.label == "host on hpet"]) == 3,
     "5 rounds, timer on hpet: 21.0 % lost [19.0, 23.0], 27 more hosts from the median ratio; one state, not five", tm)
st = [s for s in capacity.states_from(rms, False) if s.label == "host on hpet"]
t.ok(len(st) == 1 and abs(st[0].ns - 2145.0) < 1e-9 and "median of 5 rounds" in st[0].source
     and abs(st[0].ratio.median - 73) < 1e-9, "5 rounds, reads: one state, the median over rounds (2145 ns), x73",
     [(s.label, s.ns, s.source) for s in st])
t.done()
