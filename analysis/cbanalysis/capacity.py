"""capacity.py: what clock reads cost a vCPU and a fleet, in each measured state, and what each state costs in real work.

share of a vCPU = reads/s x seconds per read; cores = hosts x vCPUs x share.
work lost = 1 - rate / rate on tsc; more hosts = ceil(hosts x rate on tsc / rate - hosts).

Over rounds a measured state's figure is the median of its rounds', and its
ratio to tsc carries the interval of interval.py: a state whose interval
holds 1 (no difference measured) is counted as no cost, and said to be so:
no extra cores, no work lost, no more hosts, never a gain or a loss.
"""
import math
import os

from cbcontract.util import cut, UsageError
from . import interval
from .fmt import frate, md_table

PRESET_RATES = (1e4, 1e5, 1e6)
DEFAULT_HOSTS = 100
DEFAULT_VCPUS = 64


class State:
    """A measured (or given) cost per read, and the tsc state it is compared to."""

    def __init__(self, label, ns, source, baseline=None, ratio=None):
        self.label, self.ns, self.source, self.baseline = label, ns, source, baseline
        self.ratio = ratio  # interval.Ratio against the baseline over rounds (None: given by hand)


def no_difference(st):
    """True when st's ratio to tsc has an interval that holds 1: no cost is counted."""
    return st.ratio is not None and st.ratio.holds_one is True


def ratio_text(st):
    """st's ratio to its baseline with its interval, 'n/a' without one measured."""
    return "n/a" if st.ratio is None or not st.ratio.n else st.ratio.text()


def share(rate, ns):
    """Fraction of one vCPU spent reading the clock rate times a second at
    ns nanoseconds a read."""
    return rate * ns * 1e-9


def cores(hosts, vcpus, rate, ns):
    return hosts * vcpus * share(rate, ns)


def fshare(s):
    txt = "%.3g %%" % (s * 100)
    return txt + " (over 1 vCPU)" if s > 1 else txt


def parse_rate(text):
    try:
        r = float(text)
    except ValueError:
        raise UsageError("--rate %s: expected reads per second, e.g. 1e6" % cut(text))
    if not (r > 0 and r < 1e12):
        raise UsageError("--rate %s: expected a number above 0 and below 1e12" % cut(text))
    return r


def parse_ns(text):
    """LABEL=NS (or NS alone) for a state given by hand."""
    label, sep, val = text.rpartition("=")
    if not sep:
        label, val = "given %s ns" % text, text
    try:
        ns = float(val)
    except ValueError:
        raise UsageError("--ns %s: expected LABEL=NANOSECONDS, e.g. hpet=187" % cut(text))
    if not (ns > 0 and ns < 1e9) or not label:
        raise UsageError("--ns %s: expected LABEL=NANOSECONDS with 0 < NS < 1e9" % cut(text))
    return label, ns


def parse_count(text, what):
    try:
        n = int(text)
    except ValueError:
        raise UsageError("--%s %s: expected a whole number" % (what, cut(text)))
    if not 1 <= n <= 10 ** 9:
        raise UsageError("--%s %s: expected 1 to 1000000000" % (what, cut(text)))
    return n


def state_label(m, multi_run=False):
    """'host on CS', or 'WHERE, host on CS' for a guest; after 'RUN: ' with several runs."""
    label = "host on %s" % m.host_cs if m.kind == "host" else "%s, host on %s" % (m.where, m.host_cs)
    return "%s: %s" % (m.run, label) if multi_run else label


def headline_read(m, ms, r):
    """(ns, source) of m's headline row r: its median, over rounds the
    median of the rounds' (None: below the loop overhead), and the row named."""
    n = len(interval.over_rounds(m, ms))
    ns = r.median if n == 1 else interval.value(m, ms, interval.row_fig(r))
    return ns, "monotonic vdso, %d thread%s, median%s" % (r.threads, "" if r.threads == 1 else "s",
                                                          " of %d rounds" % n if n > 1 else "")


def states_from(measurements, multi_run):
    """One State per measured, non-emulated state: CLOCK_MONOTONIC through
    the C library, median, with every thread (vCPU) reading; its baseline is
    the state on a tsc host of the same kind, vCPU count and run."""
    out, by_key, ms = [], {}, [m for m in measurements if not m.emulated]
    for m in interval.firsts(ms):
        rows = m.headline()
        if not rows:
            continue
        r = rows[-1]
        # ns None: below the loop overhead (render leaves it out, saying so)
        st = State(state_label(m, multi_run), *headline_read(m, ms, r))
        st.ratio = interval.across(m, ms, lambda x: interval.tsc_of(x, ms), interval.row_fig(r))
        st.key = (m.run, m.kind, m.vcpus, m.backend)
        st.cs = m.host_cs
        out.append(st)
        by_key.setdefault(st.key, {})[m.host_cs] = st
    for st in out:
        base = by_key[st.key].get("tsc")
        if base is not None and base is not st and base.ns is not None:
            st.baseline = base
        else:
            st.ratio = None
    return out


class WorkState:
    """One workload's rate in one measured state, where it came from
    (run, file, workload), and the tsc state it is compared to."""

    def __init__(self, label, workload, rate, unit, source, after_change):
        self.label, self.workload, self.rate, self.unit = label, workload, rate, unit
        self.source, self.after_change, self.baseline = source, after_change, None
        self.ratio = None  # interval.Ratio of the rate against tsc over rounds


def work_from(measurements, multi_run):
    """One WorkState per workload of each measured, non-emulated state (host
    or guest); its baseline: the same workload on a tsc host, same kind,
    vCPU count, backend and run."""
    out, by_key = [], {}
    ms = [m for m in measurements if not m.emulated and m.kind in ("host", "guest")]
    for m in interval.firsts(ms):
        n = len(interval.over_rounds(m, ms))
        for w in m.workloads:
            fig = (lambda x, name=w.workload: x.workload(name).rate if x.workload(name) else None)
            after = any(x.workload(w.workload) and x.workload(w.workload).after_change
                        for x in interval.over_rounds(m, ms))
            st = WorkState(state_label(m, multi_run), w.workload, w.rate if n == 1 else interval.value(m, ms, fig),
                           w.rate_unit, "%s/%s: %s%s" % (m.run, os.path.basename(m.path), w.workload,
                                                         ", median of %d rounds" % n if n > 1 else ""), after)
            st.ratio = interval.across(m, ms, lambda x: interval.tsc_of(x, ms), fig)
            st.key = (m.run, m.kind, m.vcpus, m.backend, w.workload)
            out.append(st)
            by_key.setdefault(st.key, {})[m.host_cs] = st
    for st in out:
        base = by_key[st.key].get("tsc")
        if base is not None and base is not st:
            st.baseline = base
    return out


def rate_ratio(st):
    """rate / rate on tsc: over rounds the median of the rounds' paired ratios, else the two figures'."""
    if st.ratio is not None and st.ratio.n > 1:
        return st.ratio.median
    return st.rate / st.baseline.rate


def lost(st):
    """Work lost against tsc: 1 - rate / rate on tsc (negative: more work done)."""
    return 1 - rate_ratio(st)


def lost_text(st):
    """Work lost as a percentage; over rounds with its interval (1 - the
    rate ratio's interval, reversed): '87.7 % [86.0, 89.0]'."""
    txt = "%.1f %%" % (lost(st) * 100)
    q = st.ratio
    if q is not None and q.lo is not None:
        txt += " [%.1f, %.1f]" % ((1 - q.hi) * 100, (1 - q.lo) * 100)
    return txt


def more_hosts(hosts, st):
    """(hosts x rate on tsc / rate - hosts, that rounded up): the hosts a
    fleet of `hosts` on tsc needs beside it to do the same work in this
    state; (None, None) when the state did no work."""
    if st.rate <= 0:
        return None, None
    if st.ratio is not None and st.ratio.n > 1:
        exact = hosts / st.ratio.median - hosts
    else:
        exact = hosts * st.baseline.rate / st.rate - hosts
    return exact, max(0, math.ceil(exact - 1e-9))


def render_work(work, hosts, excluded=0):
    """The real-work part of the capacity section."""
    lines = ["### Real work: throughput lost and hosts needed", "",
             "Each workload's rate (higher is better) in each state, against the same workload measured with "
             "the host on tsc: work lost = 1 - rate / rate on tsc; a fleet of %d hosts on tsc needs "
             "ceil(%d x rate on tsc / rate - %d) more hosts in that state to serve the same load." % (hosts, hosts, hosts), ""]
    if excluded:
        lines += ["- %d emulated (TCG) result%s left out" % (excluded, "" if excluded == 1 else "s"), ""]
    ex = [s for s in work if s.baseline is not None]
    if not ex:
        return lines + ["No workload measured both on tsc and in another state.", ""]
    hdr = ["state", "workload", "rate", "rate on tsc", "work lost", "more hosts (of %d)" % hosts, "from", "tsc from"]
    rows, working, same = [], [], []
    for s in ex:
        b = s.baseline
        rates = [s.label + (" (after a clocksource change)" if s.after_change else ""), s.workload,
                 "%g %s" % (s.rate, s.unit), "%g %s" % (b.rate, b.unit)]
        if no_difference(s):
            rows.append(rates + ["none counted (%s)" % ratio_text(s), "0 (no difference measured)", s.source, b.source])
            same.append("- %s, %s: its interval %s holds 1: no difference measured, so no work lost and no host "
                        "more counted (neither a gain nor a loss)" % (s.label, s.workload, s.ratio.interval_text()))
            continue
        exact, n = more_hosts(hosts, s)
        rows.append(rates + [lost_text(s), "none (no work done)" if n is None else str(n), s.source, b.source])
        if n is not None and s.ratio is not None and s.ratio.n > 1:
            working.append("- %s, %s: %d / %.4g (the median of %d rounds' rate ratios) - %d = %.2f, rounded up: %d" % (
                s.label, s.workload, hosts, s.ratio.median, s.ratio.n, hosts, exact, n))
        elif n is not None:
            working.append("- %s, %s: %d x %g / %g - %d = %.2f, rounded up: %d" % (
                s.label, s.workload, hosts, b.rate, s.rate, hosts, exact, n))
    lines += [md_table(hdr, rows, "llrrrrll"), "", "Working:", ""] + working + same + [""]
    return lines


def is_tsc(label):
    return label.strip().lower() == "tsc"


def given_baseline(pairs):
    """The state given as tsc (--ns tsc=NS), whatever its place, or None."""
    for label, ns in pairs:
        if is_tsc(label):
            return State(label, ns, "given (--ns)")
    return None


def tsc_state(measurements, named=True):
    """The host on tsc among measurements (not emulated, a median known) as
    a State to plan given states against, its run named in the label when
    named; a guest on a tsc host where no host was measured; else None."""
    for kind in ("host", "guest"):
        for m in measurements:
            if m.kind != kind or m.host_cs != "tsc" or m.emulated:
                continue
            rows = m.headline()
            if not rows or rows[-1].median is None:
                continue
            what = state_label(m)
            ns, src = headline_read(m, measurements, rows[-1])
            st = State("%s (%s)" % (what, m.run) if named else what, ns,
                       "measured: %s/%s, %s" % (m.run, os.path.basename(m.path), src))
            st.cs = "tsc"
            return st
    return None


def baseline_note(base, results=None):
    """One line saying what the states given by hand are planned against:
    base (a State) or, without one, that a tsc figure is needed (results:
    the folder whose newest runs had none)."""
    if base is None:
        where = " (none of the newest runs under %s has a host on tsc)" % cut(results) if results else ""
        return ("no tsc baseline for the states given%s: their extra cores against tsc are not shown; give the tsc "
                "read's cost with --ns tsc=NS, or a run folder measured on tsc" % where)
    if base.source.startswith("given"):
        return "the states given are planned against tsc = %.2f ns (given, --ns %s=%g)" % (base.ns, base.label, base.ns)
    return ("no --ns tsc=NS given: the states given are planned against %s, %.2f ns (%s); "
            "give --ns tsc=NS for another tsc figure" % (base.label, base.ns, base.source))


def states_given(pairs, base=None):
    """States for --ns LABEL=NS, each but a tsc one planned against base
    (given_baseline(), tsc_state() or None: no baseline)."""
    out = [State(label, ns, "given (--ns)") for label, ns in pairs]
    for st in out:
        if not is_tsc(st.label) and base is not None:
            st.baseline = base
    return out


def render(states, rates, hosts, vcpus, excluded=0, work=(), note=None):
    """The capacity section: inputs (note: what the states given are planned
    against), formula, share of a vCPU and fleet cores; with work
    (WorkStates), the real work each state loses."""
    return "\n".join(_render_reads(states, rates, hosts, vcpus, excluded, note).rstrip("\n").split("\n") + [""] + (
        render_work(work, hosts, excluded) if work else []))


def _render_reads(states, rates, hosts, vcpus, excluded, note=None):
    total = hosts * vcpus
    lines = ["### Inputs", "",
             "- reads per second per vCPU: %s" % ", ".join(frate(r) for r in rates),
             "- fleet: %d hosts x %d vCPUs each = %d vCPUs, every vCPU reading at that rate" % (hosts, vcpus, total),
             "- ns per read: the median ns per call of each state (the row named); the median, not the mean, "
             "because the mean carries preemptions of the measuring thread, which are not the clock's cost"]
    lines += ["- baseline: " + note] if note else []
    lines += [""]
    if excluded:
        lines += ["- %d emulated (TCG) result%s left out: an emulator's timings are not a hypervisor's cost" %
                  (excluded, "" if excluded == 1 else "s"), ""]
    below = [s.label for s in states if s.ns is None]
    if below:
        lines += ["- left out, no figure to plan with (median below the loop overhead): %s" % ", ".join(below), ""]
        states = [s for s in states if s.ns is not None]
    lines += ["### Formula", "", "```",
              "share of a vCPU = reads/s x ns per read x 1e-9",
              "cores spent     = hosts x vCPUs per host x share of a vCPU",
              "extra cores     = hosts x vCPUs per host x reads/s x (ns per read - ns per read on tsc) x 1e-9",
              "```", ""]
    if not states:
        return "\n".join(lines + ["No measured state to plan with.", ""])
    hdr = ["state", "ns per read", "from"] + ["%s reads/s" % frate(r) for r in rates]
    rows = [[s.label, "%.2f" % s.ns, s.source] + [fshare(share(r, s.ns)) for r in rates] for s in states]
    lines += ["### Share of one vCPU", "", md_table(hdr, rows, "lrl" + "r" * len(rates)), ""]
    hdr = ["state"] + ["cores at %s reads/s" % frate(r) for r in rates]

    def cores_cell(s, r):
        """The cores s spends at r reads/s, and how many more than its baseline."""
        c = "%.2f" % cores(hosts, vcpus, r, s.ns)
        if s.baseline is None:
            return c
        if no_difference(s):
            return c + " (no cost counted: no difference measured vs %s)" % s.baseline.label
        return c + " (%+.2f vs %s)" % (cores(hosts, vcpus, r, s.ns) - cores(hosts, vcpus, r, s.baseline.ns),
                                       s.baseline.label)
    rows = [[s.label] + [cores_cell(s, r) for r in rates] for s in states]
    lines += ["### Fleet: cores spent on clock reads (%d x %d vCPUs)" % (hosts, vcpus), "",
              md_table(hdr, rows, "l" + "r" * len(rates)), ""]
    same = [s for s in states if s.baseline is not None and no_difference(s)]
    for s in same:
        lines += ["- %s: its interval against tsc %s holds 1: no difference measured, so no extra cores are counted "
                  "(neither a gain nor a loss)." % (s.label, s.ratio.interval_text())]
    lines += [""] if same else []
    ex = [s for s in states if s.baseline is not None and not no_difference(s)]
    if ex:
        s, r = ex[0], max(rates)
        b = s.baseline
        lines += ["Worked example, %s at %s reads/s: %s x %.2f ns = %s of a vCPU (%s on %s: %s); "
                  "x %d vCPUs = %.2f cores against %.2f, %.2f more." % (
                      s.label, frate(r), frate(r), s.ns, fshare(share(r, s.ns)), "%.2f ns" % b.ns, b.label,
                      fshare(share(r, b.ns)), total, cores(hosts, vcpus, r, s.ns), cores(hosts, vcpus, r, b.ns),
                      cores(hosts, vcpus, r, s.ns) - cores(hosts, vcpus, r, b.ns)), ""]
    return "\n".join(lines)
