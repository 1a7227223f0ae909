#!/usr/bin/env python3
"""compare-summary.py: the `make compare` table for one run folder.

Usage: compare-summary.py RUN_DIR
Reads host-<cs>.json and guest-<cs>-<N>vcpu.json, prints the table and
writes RUN_DIR/summary.md and RUN_DIR/summary.json (atomically).
Headline figure: CLOCK_MONOTONIC through the vDSO path (what a program's
clock_gettime does), median ns per call.  Exit: 0, 1 bad input, 2 usage.
"""
import glob
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kvmtrace import write_atomic  # noqa: E402


def fail(msg):
    print("compare-summary: " + msg, file=sys.stderr)
    sys.exit(1)


def load(path, prefix):
    try:
        with open(path) as f:
            d = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))
    if not isinstance(d, dict) or not str(d.get("schema", "")).startswith(prefix):
        fail("%s: schema %r, expected %s*" % (path, d.get("schema") if isinstance(d, dict) else None, prefix))
    return d


def cell(doc, threads):
    """Median ns of monotonic/vdso at `threads` ('one' or 'all')."""
    rows = [r for r in doc.get("results", []) if r.get("clock") == "monotonic" and r.get("method") == "vdso"]
    if not rows:
        return None, None
    r = min(rows, key=lambda r: r["threads"]) if threads == "one" else max(rows, key=lambda r: r["threads"])
    return r["ns_per_call"]["median"], r["threads"]


def ratio(v, base):
    return None if v is None or not base else v / base


def fmt(v, spec="%.1f"):
    return "n/a" if v is None else spec % v


def main(argv):
    if len(argv) != 2 or argv[1].startswith("-"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    d = argv[1]
    if not os.path.isdir(d):
        fail("%s: no such run folder" % d)
    hosts = {}
    for p in sorted(glob.glob(os.path.join(d, "host-*.json"))):
        hosts[re.sub(r"^host-(.*)\.json$", r"\1", os.path.basename(p))] = load(p, "clockbench/1")
    guests = {}
    for p in sorted(glob.glob(os.path.join(d, "guest-*-*vcpu*.json"))):
        m = re.match(r"^guest-(.*)-(\d+)vcpu.*\.json$", os.path.basename(p))
        if m:
            guests[m.group(1)] = load(p, "clockbench-guest/")
    if not hosts:
        fail("%s: no host-*.json results" % d)
    order = sorted(set(hosts) | set(guests), key=lambda c: (c != "tsc", c))
    rows = []
    for cs in order:
        h, g = hosts.get(cs), guests.get(cs)
        r = {"clocksource": cs}
        # A host that is itself QEMU's TCG (the lab's L1) makes every figure
        # an emulator's, its guests' included.
        r["host_emulated"] = bool(h and (h.get("context") or {}).get("hypervisor") == "TCGTCGTCGTCG")
        r["host_1"], _ = cell(h, "one") if h else (None, None)
        r["host_all"], r["host_threads"] = cell(h, "all") if h else (None, None)
        if g:
            b = g.get("bench") or {}
            la = g.get("launcher") or {}
            kt = g.get("kvm_trace") or {}
            r["guest_1"], _ = cell(b, "one")
            r["guest_all"], r["guest_vcpus"] = cell(b, "all")
            r["accel"] = la.get("accel")
            r["emulated"] = bool(la.get("emulated")) or r["host_emulated"]
            r["guest_clocksource"] = (b.get("context") or {}).get("clocksource")
            r["guest_path"] = (((b.get("probe") or {}).get("clocks") or {}).get("monotonic") or {}).get("vdso")
            if kt.get("available"):
                mc = kt.get("master_clock") or {}
                r["master_clock"] = mc.get("last")
                r["hostclock"] = mc.get("hostclock")
                r["stable_bit"] = (kt.get("stable_bit") or {}).get("all")
                r["trace_subject"] = kt.get("subject")
            else:
                r["master_clock"] = r["stable_bit"] = r["hostclock"] = None
                r["trace_subject"] = "not traced: %s" % kt.get("reason", "no trace in the result")
        rows.append(r)
    base = next((r for r in rows if r["clocksource"] == "tsc"), rows[0])
    for r in rows:
        for k in ("host_1", "host_all", "guest_1", "guest_all"):
            r[k + "_ratio"] = ratio(r.get(k), base.get(k))

    def onoff(v):
        return "n/a" if v is None else ("on" if v else "off")

    head = ("| host clocksource | host 1 thr | host all | guest 1 vCPU | guest all vCPUs | master clock | "
            "stable bit | guest clocksource | guest path | accel |")
    lines = ["# clockbench compare: %s" % os.path.basename(os.path.abspath(d)), "",
             "CLOCK_MONOTONIC via the vDSO path, median ns per call (x ratio to the %s row)." % base["clocksource"],
             "", head, "|" + "---|" * 10]
    notes = []
    for r in rows:
        emu = " (TCG, emulated)" if r.get("emulated") else ""
        hemu = " (TCG, emulated)" if r.get("host_emulated") else ""
        mark = ""
        subj = r.get("trace_subject")
        if subj and subj != "the guest's QEMU process":
            if subj not in notes:
                notes.append(subj)
            mark = " [%d]" % (notes.index(subj) + 1)

        def fig(k):
            v, q = r.get(k), r.get(k + "_ratio")
            return "n/a" if v is None else "%.1f (x%.2f)" % (v, q) if q is not None else "%.1f" % v
        lines.append("| %s | %s | %s | %s%s | %s%s | %s%s | %s%s | %s | %s | %s |" % (
            r["clocksource"], fig("host_1") + hemu, fig("host_all") + hemu,
            fig("guest_1"), emu if r.get("guest_1") is not None else "",
            fig("guest_all"), emu if r.get("guest_all") is not None else "",
            onoff(r.get("master_clock")) + (" (hostclock %s)" % r["hostclock"] if r.get("hostclock") else ""), mark,
            onoff(r.get("stable_bit")), mark,
            r.get("guest_clocksource") or "n/a", r.get("guest_path") or "n/a", r.get("accel") or "n/a"))
    lines.append("")
    for i, n in enumerate(notes, 1):
        lines.append("[%d] KVM state observed from: %s" % (i, n))
    if any(r.get("emulated") or r.get("host_emulated") for r in rows):
        lines.append("Figures marked emulated come from QEMU's TCG: an emulator's timings, not a "
                     "hypervisor's cost. What holds from them is the mechanism: clocksource, path, "
                     "master clock, stable bit.")
    text = "\n".join(lines) + "\n"
    write_atomic(os.path.join(d, "summary.md"), text)
    write_atomic(os.path.join(d, "summary.json"),
                 json.dumps({"schema": "clockbench-compare/1", "baseline": base["clocksource"], "rows": rows},
                            indent=1) + "\n")
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
