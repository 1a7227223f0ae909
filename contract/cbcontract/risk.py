"""risk.py: how close a host's clocksource watchdog is to a false alarm, in the kernel's terms.

From the engine's measured watchdog readout ("watchdog_readout" of
`clockbench --check watchdog`, docs in notes/layout.md) and the running
kernel's rules (the readout limit, the attempts per tick, whether an
all-slow tick marks the TSC unstable), assess() gives:
  - the share of readouts over the limit;
  - the chance that every attempt of one watchdog tick is slow: measured
    (windows of `attempts` consecutive slow readouts among all readouts,
    from runs_over_limit) beside the independence estimate share**attempts;
  - the expected false alarms per host-year at TICKS_PER_S ticks a second;
  - a verdict: "unwatched", "margin xK" (the limit over p99.99), "at risk",
    or "unavailable" (no readout, with the reason).
runs_over_limit is read as the engine writes it: "j" -> how many maximal
runs of exactly j consecutive over-limit readouts, "longest" -> the longest
run; a run longer than the largest j given counts as "longest" long.
Pure arithmetic on numbers: nothing here reads a file.
"""
from .util import is_num

TICKS_PER_S = 2.0            # WATCHDOG_INTERVAL = HZ/2 (kernel/time/clocksource.c)
SECONDS_PER_YEAR = 365.25 * 86400
AT_RISK_PER_YEAR = 0.01      # one false alarm in 100 host-years, or worse
PCTS = (("p50", 0.50), ("p99", 0.99), ("p99_9", 0.999), ("p99_99", 0.9999))


def share_over(readout, limit_ns):
    """(share of readouts over limit_ns, how it was had).  At the limit the
    engine counted against, its count; at another limit, bounded from the
    percentiles (the share above the highest percentile below the limit;
    0 above max), a step function that never rises with the limit."""
    n = readout.get("samples")
    if not is_num(n) or n <= 0:
        return None, "no samples"
    if readout.get("limit_ns") == limit_ns and is_num(readout.get("over_limit")):
        return readout["over_limit"] / n, "measured"
    ns = readout.get("ns") or {}
    if is_num(ns.get("max")) and ns["max"] <= limit_ns:
        return 0.0, "percentiles (max under the limit)"
    share = 1.0
    for key, q in PCTS:
        if is_num(ns.get(key)) and ns[key] <= limit_ns:
            share = round(1.0 - q, 6)
    # The engine's own count bounds it from the other side: no more slow
    # readouts above its limit, no fewer below.
    if is_num(readout.get("limit_ns")) and is_num(readout.get("over_limit")):
        counted = readout["over_limit"] / n
        share = min(share, counted) if limit_ns > readout["limit_ns"] else max(share, counted)
    return share, "percentiles (an upper bound: the engine counted against %s ns)" % readout.get("limit_ns")


def windows(runs, k):
    """How many places in the readout sequence start k consecutive slow
    readouts, from the runs of exactly j slow readouts (runs_over_limit)."""
    if not isinstance(runs, dict):
        return None
    total = 0
    longest = runs.get("longest")
    keys = sorted(int(j) for j in runs if str(j).isdigit())
    for j in keys:
        c = runs[str(j)]
        if not is_num(c) or c <= 0:
            continue
        length = j
        if j == keys[-1] and is_num(longest) and longest > j:
            length = longest  # the top bucket, counted as long as the longest
        if length >= k:
            total += c * (length - k + 1)
    if not keys and is_num(longest) and longest >= k:
        total = longest - k + 1
    return total


def assess(readout, limit_ns, attempts, marks_unstable=True, watched=True, ticks_per_s=TICKS_PER_S):
    """The risk dict (see the module's summary).  limit_ns: the kernel's
    readout limit; attempts: readouts per tick before it gives up
    (retries + 1); marks_unstable: whether an all-slow tick marks the TSC
    unstable (False after the 2026 rewrite: it is only reported)."""
    out = {"verdict": None, "reason": None, "limit_ns": limit_ns, "attempts": attempts,
           "marks_unstable": marks_unstable, "share_over_limit": None, "share_from": None,
           "p_tick_measured": None, "p_tick_independent": None,
           "false_alarms_per_host_year": {"measured": None, "independent": None},
           "margin": None, "p99_99_ns": None, "notes": []}
    if not watched:
        out["verdict"] = "unwatched"
        out["reason"] = "the kernel does not watch this TSC: no false alarm can happen"
        return out
    if not isinstance(readout, dict):
        out["verdict"], out["reason"] = "unavailable", "no watchdog readout"
        return out
    if readout.get("unavailable"):
        out["verdict"], out["reason"] = "unavailable", str(readout["unavailable"])
        return out
    if not is_num(limit_ns) or limit_ns <= 0 or not isinstance(attempts, int) or attempts < 1:
        out["verdict"], out["reason"] = "unavailable", "the kernel's limit or attempts are not known"
        return out
    n = readout.get("samples")
    share, how = share_over(readout, limit_ns)
    if share is None:
        out["verdict"], out["reason"] = "unavailable", "the readout has no samples"
        return out
    out["share_over_limit"], out["share_from"] = share, how
    if how != "measured":
        out["notes"].append("counted against %s ns, not this kernel's %s ns: the share is bounded from the percentiles "
                            "and the runs cannot be read (measure with --watchdog-limit %s)" % (
                                readout.get("limit_ns"), limit_ns, limit_ns))
    indep = share ** attempts
    out["p_tick_independent"] = indep
    per_year = ticks_per_s * SECONDS_PER_YEAR
    if how == "measured":
        w = windows(readout.get("runs_over_limit"), attempts)
        if w is not None and n >= attempts:
            out["p_tick_measured"] = w / (n - attempts + 1)
            out["false_alarms_per_host_year"]["measured"] = out["p_tick_measured"] * per_year
    out["false_alarms_per_host_year"]["independent"] = indep * per_year
    p9999 = (readout.get("ns") or {}).get("p99_99")
    out["p99_99_ns"] = p9999
    if is_num(p9999) and p9999 > 0:
        out["margin"] = limit_ns / p9999
    if n < 10000:
        out["notes"].append("%d samples: p99.99 is near the maximum (10,000 or more make it a percentile)" % n)
    if readout.get("tail_is_upper_bound", True):
        out["notes"].append("read from user space, interrupts on: the tail is an upper bound")
    if not marks_unstable:
        out["notes"].append("this kernel only reports an all-slow tick: a 'false alarm' here is a log line, not a lost TSC")
    worst = max(v for v in out["false_alarms_per_host_year"].values() if v is not None)
    if (out["margin"] is not None and out["margin"] < 1) or worst >= AT_RISK_PER_YEAR or \
            (out["p_tick_measured"] or 0) > 0:
        out["verdict"] = "at risk"
    elif out["margin"] is not None:
        out["verdict"] = "margin x%s" % _fmt(out["margin"])
    else:
        out["verdict"], out["reason"] = "unavailable", "the readout has no p99.99"
    return out


def _fmt(k):
    """A margin as a short number: 2.5, 12, 1200."""
    return ("%.1f" % k).rstrip("0").rstrip(".") if k < 10 else "%d" % int(k)
