"""verdict.py: the screen `make bench` ends with: one verdict a person reads
first, then tables that fit a terminal (host, guests, workloads apart);
summary.md keeps the full table.

It reads the summary's rows (summary.rows_of) and the clocksources the
host offered; every claim names the row it comes from, and a fact the run
did not measure is said to be unknown, never guessed.
"""
import textwrap

WIDTH = 100
# Fallbacks a host that loses its TSC lands on, and what others measured
# on them (the figures to plan with where this host offers neither):
# published host reads through the fallback's syscall and device read.
FALLBACKS = ("hpet", "acpi_pm")
PUBLISHED = {
    "hpet": "561 to 1,542 ns a host read (bare metal and a laptop, published)",
    "acpi_pm": "about 2,500 ns a host read (Red Hat's real-time guide)",
}


def cores_per_mreads(ns, base):
    """CPU cores a million reads a second cost more than on the baseline:
    (ns - base) ns per read times 1e6 reads a second, in seconds a second."""
    return (ns - base) * 1e6 / 1e9


def _guests(r):
    """What the guests on r's host clocksource get, from its KVM trace."""
    if r.get("stable_bit") is None:
        return "whether guests get the stable bit is not known (no KVM trace of it)"
    mc = "" if r.get("master_clock") is None else " (master clock %s)" % ("on" if r["master_clock"] else "off")
    return ("guests get the stable bit" if r["stable_bit"] else "guests do not get the stable bit") + mc


def lines(rows, available, now=None):
    """The verdict: a first line on the host's state (now: the clocksource
    the host was on when the run began, None when not known), then one
    line per fallback measured, and the fallbacks not measured with the
    figure to plan with."""
    base = next((r for r in rows if r["clocksource"] == "tsc"), None)
    out = []
    if now is None:
        first = "This run did not record the host's own clocksource."
    elif now == "tsc":
        first = "This host is on tsc: healthy."
    else:
        first = "This host is on %s, not tsc: DEGRADED (make host-check says why)." % now
    cur = next((r for r in rows if r["clocksource"] == (now or "tsc")), None)
    if cur is not None and "guest_file" in cur:
        first += " On %s, %s." % (cur["clocksource"], _guests(cur))
    out.append(first)
    if base is None or base.get("host_1") is None:
        out.append("No tsc row with a host figure: no cost is given against tsc.")
        return out
    b = base["host_1"]
    done = {"tsc"}
    for r in rows:
        if r["clocksource"] in done or r.get("host_1") is None:
            continue
        done.add(r["clocksource"])
        ns = r["host_1"]
        cost = cores_per_mreads(ns, b)
        what = "%.2f CPU cores more" % cost if cost > 0 else "no more CPU"
        line = "A fallback to %s: %.0f ns a host read against %.0f on tsc (x%.2f), %s per million reads a second" % (
            r["clocksource"], ns, b, ns / b, what)
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
    return "  ".join(str(c)[:w].ljust(w) for c, w in zip(cells, widths)).rstrip()


def table(head, body, width=WIDTH):
    """A plain table no wider than width: columns as wide as their widest
    cell, the widest cut first when the whole does not fit."""
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body)]
    while sum(widths) + 2 * (len(widths) - 1) > width:
        i = widths.index(max(widths))
        widths[i] -= 1
    rule = "  ".join("-" * w for w in widths)
    return [_fit(head, widths), rule] + [_fit(row, widths) for row in body]


def _x(v, base, fmt="%.1f"):
    """A figure and its ratio to the baseline's."""
    if v is None:
        return "n/a"
    return fmt % v + (" x%.2f" % (v / base) if base else "")


def _title(text, width):
    return textwrap.wrap(text, width, subsequent_indent="  ")


def screen(rows, available, now=None, width=WIDTH):
    """The whole screen: the verdict, then the tables, each line at most
    width columns (the verdict's lines wrapped)."""
    out = []
    for v in lines(rows, available, now):
        out += textwrap.wrap(v, width, subsequent_indent="  ")
    base = next((r for r in rows if r["clocksource"] == "tsc"), rows[0] if rows else None)
    hosts, seen = [], set()
    for r in rows:
        if r["clocksource"] in seen or r.get("host_file") is None:
            continue
        seen.add(r["clocksource"])
        hosts.append([r["clocksource"], _x(r.get("host_1"), base.get("host_1")),
                      _x(r.get("host_all"), base.get("host_all")), r.get("host_threads") or "n/a",
                      "TCG, emulated" if r.get("host_emulated") else "this host"])
    if hosts:
        out += [""] + _title("Host: CLOCK_MONOTONIC through the C library, median ns a read (x to tsc)", width)
        out += table(["host clocksource", "1 thread", "all threads", "threads", "timed on"], hosts, width)
    guests = [r for r in rows if "guest_file" in r]
    if guests:
        out += [""] + _title("Guests: the same read in a guest on that host clocksource" + (
            "; TCG rows are an emulator's timings, not a hypervisor's cost (the mechanism holds)"
            if any(g.get("emulated") for g in guests) else ""), width)
        out += table(["host clocksource", "vCPUs", "1 vCPU", "all vCPUs", "master clock", "stable bit", "path", "accel"],
                     [[g["label"], g.get("guest_vcpus") or "n/a",
                       _x(g.get("guest_1"), base.get("guest_1")), _x(g.get("guest_all"), base.get("guest_all")),
                       "n/a" if g.get("master_clock") is None else ("on" if g["master_clock"] else "off"),
                       "n/a" if g.get("stable_bit") is None else ("set" if g["stable_bit"] else "clear"),
                       g.get("guest_path") or "n/a", "TCG" if g.get("emulated") else (g.get("accel") or "n/a")]
                      for g in guests], width)
    wls = []
    for r in rows:
        for n in r.get("workloads", {}):
            if n not in wls:
                wls.append(n)
    if wls:
        body = []
        for r in rows:
            for side, em in (("host", r.get("host_emulated")), ("guest", r.get("emulated"))):
                if side == "guest" and "guest_file" not in r:
                    continue
                cells = []
                for n in wls:
                    v = r["workloads"].get(n, {}).get(side)
                    b = base["workloads"].get(n, {}).get(side)
                    cells.append(_x(v, b, "%g"))
                if any(c != "n/a" for c in cells):
                    body.append([r["label"], side + (" (TCG)" if em else "")] + cells)
        if body:
            units = {n: next((r["workloads"][n]["unit"] for r in rows if n in r["workloads"]), "") for n in wls}
            out += [""] + _title("Workloads: rate (x to tsc; higher is better)", width)
            out += table(["host clocksource", "where"] + ["%s %s" % (n, units[n]) for n in wls], body, width)
    return "\n".join(out) + "\n"
