"""verdict.py: the screen `make bench` ends with: one verdict a person reads
first, then tables that fit a terminal (host, guests, workloads apart);
summary.md keeps the full table.

It reads the summary's rows (summary.rows_of) and the clocksources the
host offered; every claim names the row it comes from, and a fact the run
did not measure is said to be unknown, never guessed.  Every ratio to tsc
carries its interval over rounds (interval.py); where the interval holds 1
the screen says "no difference measured" and counts no cost.
"""
import textwrap

from cbcontract import kmsg, names

from cbcontract.util import cut, printable
from . import interval

WIDTH = 100
# A value of health's report on the screen (state_why, cause_text,
# advice...) is cut at this many characters, as every quoted value is
# (util.cut): health's longest, its advice to a guest, is some 310.
SHOWN = 400
# Fallbacks a host that loses its TSC lands on, and what others measured
# on them (the figures to plan with where this host offers neither):
# published host reads through the fallback's syscall and device read.
PUBLISHED = {c.name: c.published for c in names.CLOCKSOURCES if c.kind == "device" and c.published}
FALLBACKS = tuple(PUBLISHED)


def cores_per_mreads(ns, base):
    """CPU cores a million reads a second cost more than on the baseline:
    (ns - base) ns per read times 1e6 reads a second, in seconds a second."""
    return (ns - base) * 1e6 / 1e9


def _guests(r):
    """What the guests on r's host clocksource get, from its KVM trace."""
    if r.get("stable_bit") is None:
        return "whether guests get the stable bit is not known (no KVM trace of it)"
    mc = "" if r.get("master_clock") is None else " (master clock %s)" % ("on" if r["master_clock"] else "off")
    if r.get("kvm_facts_from") == "observer":
        # The guest ran under TCG: KVM's state is the observer VM's.
        return ("a KVM VM here gets the stable bit" if r["stable_bit"] else "a KVM VM here does not get the stable "
                "bit") + mc + ", the observer VM's trace"
    return ("guests get the stable bit" if r["stable_bit"] else "guests do not get the stable bit") + mc


def state_lines(state, now):
    """The host's own state, from health's report of it when the run
    began (None: the run has none): host or guest, healthy or not by the
    one rule (cbcontract.health), why it is off the TSC with the kernel's
    own line, and what to do."""
    if state is None:
        return []
    if state.get("problem"):
        return ["health's report of this host was not read: %s." % cut(state["problem"], SHOWN)]
    state = {k: cut(v, SHOWN) if isinstance(v, str) and k != "cause_line" else v for k, v in state.items()}
    cs = state["current"] or now or "an unread clocksource"
    if state["guest"]:
        out = ["This machine is a guest of %s, on %s: %s (%s)." % (
            state["hypervisor"] or "an unnamed hypervisor", cs, state["state"].upper(), state["state_why"]),
            "It measured a guest's clock; the guests it booted ran nested inside it."]
    else:
        out = ["This host is on %s: %s (%s)." % (cs, state["state"].upper(), state["state_why"])]
    if state["cause"] != "never_lost":
        why = "Why it is off the TSC: %s%s" % (state["cause_text"], " (%s)" % state["cause_detail"]
                                                if state["cause_detail"] else "")
        if state["cause_line"]:
            msg = kmsg.message(state["cause_line"])  # the kernel's words, without the log's stamp
            why += "; the kernel's line: \"%s\"" % cut(" ".join((msg.text if msg else state["cause_line"]).split()),
                                                        SHOWN)
        out.append(why + ".")
        if state["advice"]:
            out.append("What to do: %s." % state["advice"])
    return out


def lines(rows, available, now=None, state=None):
    """The verdict: the host's state (state: health's report of it,
    state_lines(); else a first line from now, the clocksource the host was
    on when the run began, None when not known), then one line per fallback
    measured, and the fallbacks not measured with the figure to plan with."""
    base = next((r for r in rows if r["clocksource"] == "tsc"), None)
    out = state_lines(state, now)
    if not out:
        if now is None:
            first = "This run did not record the host's own clocksource."
        elif now == "tsc":
            first = "This host is on tsc: healthy."
        else:
            first = "This host is on %s, not tsc: DEGRADED (make health says why)." % now
        out.append(first)
    if state and state.get("guest") and any(r.get("emulated") for r in rows):
        out[1] = out[1][:-1] + " under TCG, an emulator: their figures are not a hypervisor's cost."
    cur = next((r for r in rows if r["clocksource"] == (now or "tsc")), None)
    if cur is not None and "guest_file" in cur and not (state and state.get("guest")):
        out[0] += " On %s, %s." % (cur["clocksource"], _guests(cur))
    if base is None or base.get("host_1") is None:
        out.append("No ratio: this run has no tsc row to be the baseline (the host did not offer tsc), so no cost is "
                   "given against tsc; the figures below stand alone.")
        floor = next((r["host_rdtsc"] for r in rows if r.get("host_rdtsc") is not None), None)
        if any(r.get("host_1") is not None for r in rows):
            out.append("What a healthy TSC would cost here was not measured. An estimate only, not a ratio: a vDSO "
                       "read on tsc is the rdtsc floor (%s) plus the vDSO's arithmetic, published at 18 to 29 ns a "
                       "read on tsc in all (clockperf: 23.4 ns with rdtsc at 15.9; a laptop: 24 ns; a Xen guest: "
                       "18 ns)." % ("%.1f ns, measured in this run" % floor if floor is not None else
                                    "not measured in this run"))
        return out
    b = base["host_1"]
    done = {"tsc"}
    for r in rows:
        if r["clocksource"] in done or r.get("host_1") is None:
            continue
        done.add(r["clocksource"])
        ns = r["host_1"]
        q = ratio_of(r, "host_1")
        if q.holds_one:
            line = "A fallback to %s: %.0f ns a host read against %.0f on tsc, %s: no cost counted" % (
                r["clocksource"], ns, b, q.text())
        else:
            cost = cores_per_mreads(ns, b)
            what = "%.2f CPU cores more" % cost if cost > 0 else "no more CPU"
            line = "A fallback to %s: %.0f ns a host read against %.0f on tsc (%s), %s per million reads a second" % (
                r["clocksource"], ns, b, q.text(), what)
        if r.get("host_emulated"):
            line += " (an emulated host: the mechanism only)"
        if "guest_file" in r:
            line += "; %s" % _guests(r)
        out.append(line + ".")
    measured = {r["clocksource"] for r in rows}
    missing = [c for c in FALLBACKS if c not in (available or []) and c not in measured]
    for c in missing:
        out.append("This host offers no %s: a fallback to it was not measured here; plan with %s." % (c, PUBLISHED[c]))
    return out


def _fit(cells, widths):
    return "  ".join(c[:w].ljust(w) for c, w in zip(cells, widths)).rstrip()


def table(head, body, width=WIDTH, keep=()):
    """A plain table no wider than width: columns as wide as their widest
    cell (its text printable: a result's controls escaped), the widest cut
    first when the whole does not fit; a column in keep (its index: a
    figure with its interval) is never cut while another can be."""
    head, body = [printable(x) for x in head], [[printable(x) for x in row] for row in body]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    while sum(widths) + 2 * (len(widths) - 1) > width:
        cuttable = [j for j in range(len(widths)) if j not in keep and widths[j] > 1] or list(range(len(widths)))
        i = max(cuttable, key=lambda j: widths[j])
        widths[i] -= 1
    rule = "  ".join("-" * w for w in widths)
    return [_fit(head, widths), rule] + [_fit(row, widths) for row in body]


def ratio_of(d, k):
    """The interval.Ratio of d[k] against tsc: from d[k + '_interval'] (the
    rounds' ratios), else d[k + '_ratio'] alone (one round), else none."""
    doc = d.get(k + "_interval")
    if doc:
        return interval.Ratio(doc["ratios"])
    q = d.get(k + "_ratio")
    return interval.Ratio([] if q is None else [q])


# The ratio's place where the run has no tsc row: a dash, its reason said
# once in the table's title (NO_BASE).
DASH = "\u2014"
NO_BASE = "no ratio (%s): this run has no tsc row to be the baseline" % DASH


def _x(d, k, is_base, fmt="%.1f", has_base=True):
    """d[k] and its ratio to tsc with the interval ('1500.0 x60.00 [58.00,
    62.00]'), or 'no difference measured [0.95, 1.05]' alone where it holds
    1; the baseline's own row x1.00."""
    v = d.get(k)
    if v is None:
        return "n/a"
    q = ratio_of(d, k)
    if not q.n:
        return fmt % v + (" " + DASH if not has_base else "")
    if is_base:
        return fmt % v + " x%.2f" % q.median
    return q.text() if q.holds_one else fmt % v + " " + q.text()


SHORT_UNITS = {w.unit: w.short_unit for w in names.WORKLOADS}


def _fig(v):
    """A workload's figure in few columns, no exponent: 49500, 20.6, 1.56."""
    return "%.0f" % v if abs(v) >= 100 else "%.3g" % v


def _title(text, width):
    return textwrap.wrap(text, width, subsequent_indent="  ", break_on_hyphens=False)


# Whose trace gave a row's master clock and stable bit (its
# kvm_facts_from): the one wording of the screen and summary.md.
FROM = {"guest": "this guest's QEMU (KVM trace)", "observer": "the observer VM (a short KVM VM)"}


def summary_from(r):
    return FROM.get(r.get("kvm_facts_from"), "n/a")


def screen(rows, available, now=None, width=WIDTH, state=None):
    """The whole screen: the verdict, then the tables, each line at most
    width columns (the verdict's lines wrapped).  A figure whose interval
    holds 1 is shown as "no difference measured [lo, hi]" alone; the
    guests' and workloads' figures one a line (state, figure, value, the
    value on tsc, the ratio), so that an interval never has to be cut."""
    out = []
    for v in lines(rows, available, now, state):
        out += textwrap.wrap(printable(v), width, subsequent_indent="  ", break_on_hyphens=False)
    base = next((r for r in rows if r["clocksource"] == "tsc"), None)
    hosts, seen = [], set()
    for r in rows:
        if r["clocksource"] in seen or r.get("host_file") is None:
            continue
        seen.add(r["clocksource"])
        hosts.append([r["clocksource"] + (" (TCG)" if r.get("host_emulated") else ""),
                      _x(r, "host_1", r is base, has_base=base is not None),
                      _x(r, "host_all", r is base, has_base=base is not None), r.get("host_threads") or "n/a"])
    if hosts:
        out += [""] + _title("Host: CLOCK_MONOTONIC through the C library, median ns a read (%s)" % (
                             "x to tsc [interval]" if base else NO_BASE)
                             + ("; (TCG) rows are timed on an emulated host" if any(
                                 r.get("host_emulated") for r in rows) else ""), width)
        out += table(["host clocksource", "1 thread", "all threads", "threads"], hosts, width, keep=(1, 2))
    guests = [r for r in rows if "guest_file" in r]
    if guests:
        out += [""] + _title("Guests: the same read in a guest on that host clocksource, median ns (%s)" % (
                             "x to tsc [interval]" if base else NO_BASE) + ("; TCG rows are an emulator's timings, not a hypervisor's cost (their "
                                              "clocksource and path are the emulator's)" if any(g.get("emulated") for g in guests) else ""),
                             width)
        body = []
        for g in guests:
            for k, what in (("guest_1", "1 vCPU"), ("guest_all", "all vCPUs")):
                body.append([g["label"], g.get("guest_vcpus") or "n/a", what, _x(g, k, g is base, has_base=base is not None),
                             "TCG" if g.get("emulated") else (g.get("accel") or "n/a")])
        out += table(["host clocksource", "vCPUs", "reading", "median ns", "accel"], body, width, keep=(3,))
        # KVM's state on each host clocksource, with whose trace it is
        # (under TCG the observer VM's), apart from what the guest itself
        # ran on (under TCG the emulator's: no evidence about the host).
        out += [""] + table(["host clocksource", "master clock", "hostclock", "stable bit", "from"],
                            [[g["label"],
                              "n/a" if g.get("master_clock") is None else ("on" if g["master_clock"] else "off"),
                              g.get("hostclock") or "n/a",
                              "n/a" if g.get("stable_bit") is None else ("set" if g["stable_bit"] else "clear"),
                              summary_from(g)] for g in guests], width)
        out += [""] + table(["host clocksource", "vCPUs", "guest clocksource", "path", "ran under"],
                            [[g["label"], g.get("guest_vcpus") or "n/a", g.get("guest_clocksource") or "n/a",
                              g.get("guest_path") or "n/a",
                              "TCG: the emulator's" if g.get("emulated") else (g.get("accel") or "n/a")]
                             for g in guests], width)
    wls = list(dict.fromkeys(n for r in rows for n in r.get("workloads", {})))  # each once, in order
    body = []
    for r in rows:
        if r is base:
            continue  # its figures are the "on tsc" column
        for side, em in (("host", r.get("host_emulated")), ("guest", r.get("emulated"))):
            if side == "guest" and "guest_file" not in r:
                continue
            for n in wls:
                w = r["workloads"].get(n, {})
                bw = base["workloads"].get(n, {}) if base else {}
                unit = SHORT_UNITS.get(w.get("unit"), w.get("unit") or "")
                for k, what in ((side, "rate %s" % unit), (side + "_latency", "latency us")):
                    if w.get(k) is None:
                        continue
                    body.append([r["label"], side + ("/TCG" if em else ""), n, what.strip(), _fig(w[k]),
                                 DASH if not base else "n/a" if bw.get(k) is None else _fig(bw[k]),
                                 ratio_of(w, k).text() if base else DASH])
    if body:
        out += [""] + _title("Workloads: rate (higher is better) and median latency, %s" % (
                             "against the same on tsc (x to tsc [interval])" if base else NO_BASE), width)
        out += table(["state", "where", "workload", "figure", "value", "on tsc", "x tsc"], body, width, keep=(6,))
    ns = sorted({r.get("rounds", 1) for r in rows})
    if rows and base is not None:
        out += [""] + _title(interval.method_note(ns), width)
    return "\n".join(out) + "\n"
