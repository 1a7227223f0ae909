"""interval.py: a ratio with its interval: the median of per-round paired ratios and an order-statistics interval.

Shared by the reports (analysis/cbanalysis, over a run's rounds) and the
harness (host-scripts/crosscheck, the engine over its peers' rounds).

Rounds are paired: tsc and the other state are measured in the same round,
so each round gives one ratio x_i / tsc_i, and drift on a shared machine
falls on both alike.  The figure is the median of those ratios; its
interval is the distribution-free one for a median: [r_(k), r_(n+1-k)] of
the n sorted ratios, whose coverage is exact whatever the ratios'
distribution (only that the rounds are independent, and each ratio is
above or below the true median with probability 1/2):

  coverage(n, k) = 1 - 2 * sum_{i<k} C(n, i) / 2^n

k is the largest giving at least LEVEL; where no interval reaches LEVEL
(fewer than 6 rounds) it is [min, max], its coverage stated: 5 rounds give
1 - 2/32 = 93.75 %, 3 rounds 75 %, 2 rounds 50 %.

One round gives no interval ("n/a (1 round)").  The result files carry no
per-batch figures to build one from: each row's ns_per_call is min, median,
mean, p99, p999, max read off the engine's per-batch histogram, which is
not written, and a workload's rate is one figure for its whole run.  Nor
would batches be the right unit: batches of one run share the run's
machine state (its frequency, its neighbours), so an interval over them
measures the batch-to-batch jitter inside a run, not the run-to-run spread
that moved x1.16 to x1.60 on the same host within the hour.

An interval that holds 1 is "no difference measured": the rounds do not
tell the state from tsc.
"""
import math
from fractions import Fraction

LEVEL = Fraction(95, 100)


def median(xs):
    """The median of a non-empty list of numbers (the mean of the two middle ones for an even count)."""
    s = sorted(xs)
    n = len(s)
    if not n:
        raise ValueError("median of no figures")
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def coverage(n, k):
    """The exact probability (a Fraction) that [X_(k), X_(n+1-k)] of n
    independent draws holds their distribution's median."""
    if not 1 <= k <= (n + 1) // 2:
        raise ValueError("rank %r for %r figures" % (k, n))
    return 1 - Fraction(2 * sum(math.comb(n, i) for i in range(k)), 2 ** n)


def ranks(n, level=LEVEL):
    """(k, coverage): the narrowest symmetric interval [X_(k), X_(n+1-k)]
    (1-based ranks) whose coverage is at least level, else [min, max]
    (k = 1) with its coverage; None for fewer than 2 figures."""
    if n < 2:
        return None
    k = 1
    while k + 1 <= (n + 1) // 2 and coverage(n, k + 1) >= level:
        k += 1
    return k, coverage(n, k)


def fcov(c):
    """A coverage as a percentage, at most two decimals: 93.75 %, 75 %, 96.88 %."""
    return ("%.2f" % (float(c) * 100)).rstrip("0").rstrip(".") + " %"


class Ratio:
    """A ratio to tsc over rounds: ratios (one per round, in round order),
    median, and lo, hi, k, coverage (None with fewer than 2 rounds)."""

    def __init__(self, ratios):
        self.ratios = [float(r) for r in ratios]
        self.n = len(self.ratios)
        self.median = median(self.ratios) if self.ratios else None
        self.lo = self.hi = self.k = self.coverage = None
        rk = ranks(self.n)
        if rk:
            s = sorted(self.ratios)
            self.k, self.coverage = rk
            self.lo, self.hi = s[self.k - 1], s[self.n - self.k]

    @property
    def holds_one(self):
        """True when the interval holds 1 (no difference measured), False
        when it does not, None without an interval."""
        return None if self.lo is None else self.lo <= 1 <= self.hi

    @property
    def differs(self):
        """True only when an interval exists and excludes 1."""
        return self.holds_one is False

    def inverted(self):
        """The same rounds as tsc / x (a rate turned into a cost factor)."""
        return Ratio([1 / r for r in self.ratios])

    def interval_text(self, nd=2):
        if self.n == 0:
            return "n/a"
        if self.lo is None:
            return "[n/a (1 round)]"
        return "[%.*f, %.*f]" % (nd, self.lo, nd, self.hi)

    def text(self, nd=2):
        """'x1.16 [0.82, 1.41]'; 'no difference measured [0.95, 1.12]'
        where the interval holds 1; 'x1.16 [n/a (1 round)]'; 'n/a'."""
        if self.n == 0:
            return "n/a"
        if self.holds_one:
            return "no difference measured %s" % self.interval_text(nd)
        # An interval that excludes 1 is never shown as one that holds it:
        # more decimals until its printed ends leave 1 out (at most 4).
        while self.lo is not None and nd < 4 and round(self.lo, nd) <= 1 <= round(self.hi, nd):
            nd += 1
        return "x%.*f %s" % (nd, self.median, self.interval_text(nd))

    def doc(self):
        """The JSON fields of the interval (summary.json)."""
        return {"median": self.median, "lo": self.lo, "hi": self.hi, "rounds": self.n,
                "coverage": None if self.coverage is None else float(self.coverage),
                "holds_one": self.holds_one, "ratios": self.ratios}


def paired(pairs):
    """A Ratio of x / base over rounds from [(x, base)], one pair a round;
    a pair with either figure missing (None) or a base not above 0 is left
    out (that round did not measure both)."""
    return Ratio([x / b for x, b in pairs if x is not None and b is not None and b > 0 and x >= 0])


def method_note(ns, ratios="Ratios to tsc", pair="tsc and the state measured in the same round"):
    """One sentence on the intervals, for the round counts ns seen; ratios
    names them, pair says what one round pairs."""
    parts = []
    for n in sorted(set(ns)):
        rk = ranks(n)
        if rk is None:
            parts.append("%d round: no interval" % n)
        else:
            k, c = rk
            which = "[min, max]" if k == 1 else "the %s lowest and highest" % _ordinal(k)
            parts.append("%d rounds: %s of the per-round ratios, %s coverage" % (n, which, fcov(c)))
    return ("%s: the median of the per-round ratios (%s) with a distribution-free order-statistics interval for "
            "that median (%s); where the interval holds 1 the page says no difference measured."
            % (ratios, pair, "; ".join(parts or ["no rounds"])))


def _ordinal(k):
    return "%d%s" % (k, {1: "st", 2: "nd", 3: "rd"}.get(k if k < 20 else k % 10, "th"))
