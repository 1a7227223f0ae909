#!/usr/bin/python3
# tier: fast
"""interval.t: cbcontract.interval, the ratio to tsc over rounds: exact order-statistics coverage, the interval, "no difference measured"."""
import itertools
import os
import sys
from fractions import Fraction

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract")]
from cbcontract import interval as iv  # noqa: E402

t = Tap()

# Exact coverage, by hand: 1 - 2 * sum_{i<k} C(n, i) / 2^n.
known = {(2, 1): Fraction(1, 2), (3, 1): Fraction(3, 4), (5, 1): Fraction(15, 16), (5, 2): Fraction(5, 8),
         (9, 2): Fraction(123, 128), (10, 2): Fraction(501, 512), (20, 6): 1 - Fraction(2 * 21700, 2 ** 20)}
got = {nk: iv.coverage(*nk) for nk in known}
t.ok(got == known, "coverage by hand: 5 rounds [min, max] 15/16 = 93.75 %, 3 rounds 3/4, 2 rounds 1/2, 9 rounds "
     "[2nd, 8th] 123/128, 20 rounds [6th, 15th] 1 - 43400/2^20", {k: (v, known[k]) for k, v in got.items() if v != known[k]})


# The same, counted: of the 2^n ways n draws fall below or above the
# median, those with at least k below and k above.
def counted(n, k):
    hits = sum(1 for s in itertools.product((0, 1), repeat=n) if sum(s) >= k and n - sum(s) >= k)
    return Fraction(hits, 2 ** n)


bad = [(n, k) for n in range(2, 13) for k in range(1, (n + 1) // 2 + 1) if iv.coverage(n, k) != counted(n, k)]
t.ok(not bad, "coverage equals the count over every sign pattern, n = 2..12, every k", bad)

# The ranks: the narrowest symmetric interval at 95 % or more, else [min, max].
want = {2: 1, 3: 1, 5: 1, 6: 1, 8: 1, 9: 2, 10: 2, 17: 5, 20: 6}
got = {n: iv.ranks(n)[0] for n in want}
t.ok(got == want, "ranks: [min, max] up to 8 rounds, the 2nd from 9, the 5th at 17, the 6th at 20", got)
t.ok(all(iv.ranks(n)[1] >= iv.LEVEL and (iv.ranks(n)[0] + 1 > (n + 1) // 2 or iv.coverage(n, iv.ranks(n)[0] + 1) < iv.LEVEL)
         for n in range(6, 60)), "from 6 rounds the interval reaches 95 % and the next narrower one does not")
t.ok(iv.ranks(1) is None and iv.ranks(0) is None, "one round or none: no interval")
t.ok(iv.fcov(iv.ranks(5)[1]) == "93.75 %" and iv.fcov(Fraction(3, 4)) == "75 %", "coverage shown as 93.75 %, 75 %")

# Constructed samples with known answers.
r = iv.Ratio([1.2, 0.8, 1.0, 1.1, 0.9])
t.ok((r.median, r.lo, r.hi, r.holds_one) == (1.0, 0.8, 1.2, True) and r.text() == "no difference measured [0.80, 1.20]",
     "symmetric about 1: median 1, [0.8, 1.2], no difference measured", (r.median, r.lo, r.hi, r.text()))
r = iv.Ratio([1.30, 1.10, 1.25, 1.15, 1.20])
t.ok((r.median, r.lo, r.hi, r.holds_one, r.differs) == (1.2, 1.1, 1.3, False, True) and r.text() == "x1.20 [1.10, 1.30]",
     "all above 1: x1.20 [1.10, 1.30], a difference", r.text())
r = iv.Ratio([1.0, 1.2, 1.4, 1.3, 1.1])
t.ok(r.holds_one is True and r.text().startswith("no difference measured"), "an interval whose end is exactly 1 holds 1",
     r.text())
r = iv.Ratio([0.5, 0.8, 1.25])
inv = r.inverted()
t.ok(abs(inv.median - 1.25) < 1e-12 and abs(inv.lo - 0.8) < 1e-12 and abs(inv.hi - 2.0) < 1e-12 and inv.holds_one,
     "inverted (a rate as a cost factor): 1/r per round, median 1.25 [0.8, 2]", (inv.median, inv.lo, inv.hi))
r = iv.Ratio([1, 2, 3, 4])
t.ok(r.median == 2.5 and (r.lo, r.hi) == (1, 4), "an even count: the median is the mean of the middle two", r.median)
r = iv.Ratio(sorted([1.1 + 0.01 * i for i in range(9)], reverse=True))
t.ok((round(r.lo, 9), round(r.hi, 9), r.k) == (1.11, 1.17, 2), "9 rounds: the 2nd lowest and 2nd highest ratio",
     (r.lo, r.hi, r.k))
r = iv.Ratio([1.001, 1.003, 1.002, 1.004, 1.0015])
t.ok(r.differs and r.text() == "x1.002 [1.001, 1.004]", "an interval just above 1 is printed with the decimals that "
     "keep 1 out of it, never as [1.00, 1.00]", r.text())
r = iv.Ratio([1.16])
t.ok(r.text() == "x1.16 [n/a (1 round)]" and r.holds_one is None and not r.differs, "one round: n/a (1 round), neither "
     "a difference nor none", r.text())
t.ok(iv.Ratio([]).text() == "n/a" and iv.Ratio([]).median is None, "no round: n/a")

# Pairing: the rounds' ratios, not the ratio of the spreads.  tsc and X
# both drift round to round (10..30), X is 1.1 x tsc in every round.
tsc, x = [10, 30, 20, 25, 15], [11, 33, 22, 27.5, 16.5]
r = iv.paired(zip(x, tsc))
t.ok(r.differs and abs(r.lo - 1.1) < 1e-9 and abs(r.hi - 1.1) < 1e-9, "paired: drift that falls on both rounds alike "
     "cancels, x1.10 [1.10, 1.10]", r.text())
r = iv.paired([(11, 10), (None, 10), (12, None), (5, 0), (13, 10)])
t.ok(r.n == 2 and r.ratios == [1.1, 1.3], "paired: a round missing either figure, or a base of 0, is left out", r.ratios)

note = iv.method_note([5, 1])
t.ok("5 rounds: [min, max] of the per-round ratios, 93.75 % coverage" in note and "1 round: no interval" in note,
     "the note states the coverage per round count", note)

t.done()
