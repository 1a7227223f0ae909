"""interval.py: a run's measurements over its rounds, for the reports.

The arithmetic of a ratio and its interval is the contract's
(cbcontract.interval: median, coverage, Ratio, paired, method_note),
re-exported here so the report modules read interval.Ratio and
interval.firsts from one place; this module adds which measurements pair
up across rounds.
"""
from cbcontract.interval import LEVEL, Ratio, coverage, fcov, median, method_note, paired, ranks  # noqa: F401


# ---- measurements over rounds ----

def round_of(m):
    """A measurement's round (cbcontract.rounds.load_rounds sets it; 1 otherwise)."""
    return getattr(m, "round", 1)


def state_key(m):
    """What one state is in every round: run, kind, host clocksource, vCPUs, backend, emulated."""
    return (m.run, m.kind, m.host_cs, m.vcpus, m.backend, m.emulated)


def firsts(ms):
    """One measurement per state (its earliest round), in the order of ms:
    the rows of a table over rounds."""
    best = {}
    for m in ms:
        k = state_key(m)
        if k not in best or round_of(m) < round_of(best[k]):
            best[k] = m
    keep = set(id(m) for m in best.values())
    return [m for m in ms if id(m) in keep]


def tsc_of(m, ms):
    """The measurement on a tsc host that m's ratios are taken against: the
    same run, kind, vCPUs, backend and emulation, in m's own round; None
    without one."""
    for b in ms:
        if b.host_cs == "tsc" and b.run == m.run and b.kind == m.kind and b.vcpus == m.vcpus \
                and b.backend == m.backend and b.emulated == m.emulated and round_of(b) == round_of(m):
            return b
    return None


def row_fig(r, attr="median", method=None):
    """fig(x): attr (median, p99, kernel_read...) of x's row of the same
    clock, method (or the one given) and threads as r; None without one."""
    return lambda x: getattr(x.row(r.clock, method or r.method, r.threads), attr, None)


def over_rounds(m, ms):
    """The measurements of m's state in each round, by round."""
    k = state_key(m)
    return sorted((x for x in ms if state_key(x) == k), key=round_of)


def across(m, ms, baseline, fig):
    """The Ratio of fig(x) / fig(baseline(x)) over the rounds x of m's
    state; baseline(x) is the tsc measurement of x's own round (None: that
    round has no pair), fig a figure of a measurement or None."""
    pairs = []
    for x in over_rounds(m, ms):
        b = baseline(x)
        pairs.append((fig(x), fig(b) if b is not None else None))
    return paired(pairs)


def value(m, ms, fig):
    """The median over rounds of fig(x) for m's state (None where no round has it)."""
    vs = [v for v in (fig(x) for x in over_rounds(m, ms)) if v is not None]
    return median(vs) if vs else None

