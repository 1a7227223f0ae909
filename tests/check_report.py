#!/usr/bin/env python3
"""check_report.py: validate a clockbench JSON report (and its CSV twin).

Usage: check_report.py REPORT.json [REPORT.csv] [--expect-path CLOCK:METHOD:PATH]...
Prints one line per failed expectation and exits 1 if any failed.
"""
import csv
import json
import math
import sys

QUANTS = ["min", "median", "mean", "p99", "p999", "max"]
CONTEXT_KEYS = ["clockbench_version", "command_line", "hostname", "kernel", "kernel_cmdline",
                "cpu_model", "cpu_flags", "hypervisor", "kvm_features", "clocksource",
                "available_clocksource", "tsc_mhz", "cpus_online", "cpus_allowed", "start", "end"]


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--expect-path")]
    expects = [a.split("=", 1)[1] for a in argv[1:] if a.startswith("--expect-path=")]
    errors = []
    with open(args[0]) as f:
        doc = json.load(f)
    if doc.get("schema") != "clockbench/1":
        errors.append("schema is %r" % doc.get("schema"))
    ctx = doc.get("context", {})
    for k in CONTEXT_KEYS:
        if k not in ctx:
            errors.append("context lacks %s" % k)
    for k in ["constant_tsc", "nonstop_tsc", "tsc_known_freq", "rdtscp", "hypervisor"]:
        if not isinstance(ctx.get("cpu_flags", {}).get(k), bool):
            errors.append("cpu_flags.%s is not a boolean" % k)
    if not (isinstance(ctx.get("tsc_mhz"), (int, float)) and ctx["tsc_mhz"] > 0):
        errors.append("tsc_mhz is %r" % ctx.get("tsc_mhz"))
    rows = doc.get("results")
    if not isinstance(rows, list):
        errors.append("results is not a list")
        rows = []
    for r in rows:
        ns = r.get("ns_per_call", {})
        vals = [ns.get(q) for q in QUANTS]
        if any(not isinstance(v, (int, float)) or math.isnan(v) or v < 0 for v in vals):
            errors.append("row %s/%s/%s: bad ns_per_call %r" % (r.get("clock"), r.get("method"), r.get("threads"), ns))
            continue
        if not (ns["min"] <= ns["median"] <= ns["p99"] <= ns["p999"] <= ns["max"]):
            errors.append("row %s/%s/%s: quantiles out of order %r" % (r["clock"], r["method"], r["threads"], ns))
        if not (ns["min"] <= ns["mean"] <= ns["max"]):
            errors.append("row %s/%s/%s: mean outside [min,max]" % (r["clock"], r["method"], r["threads"]))
        if r.get("batches", 0) < 1 or r.get("calls") != r["batches"] * r["batch"]:
            errors.append("row %s/%s: batches/calls inconsistent" % (r["clock"], r["method"]))
        if not r.get("calls_per_sec_total", 0) > 0:
            errors.append("row %s/%s: no calls per second" % (r["clock"], r["method"]))
    probe = doc.get("probe", {})
    for e in expects:
        clock, method, path = e.split(":")
        got = probe.get("clocks", {}).get(clock, {}).get(method)
        if not probe.get("ok"):
            errors.append("probe not ok: %s" % probe.get("reason"))
        elif got != path:
            errors.append("probe: %s via %s took %r, expected %r" % (clock, method, got, path))
        for r in rows:
            if r["clock"] == clock and r["method"] == method and r["path"] != path:
                errors.append("row %s/%s/%s path %r, expected %r" % (clock, method, r["threads"], r["path"], path))
    if len(args) > 1:
        with open(args[1], newline="") as f:
            crows = list(csv.DictReader(f))
        if len(crows) != len(rows):
            errors.append("CSV has %d rows, JSON %d" % (len(crows), len(rows)))
        for c, r in zip(crows, rows):
            pairs = [("clock", r["clock"] or ""), ("method", r["method"]), ("threads", str(r["threads"])),
                     ("path", r["path"] or ""), ("batch", str(r["batch"])), ("batches", str(r["batches"])),
                     ("calls", str(r["calls"]))]
            for q in QUANTS:
                pairs.append(("ns_" + q, r["ns_per_call"][q]))
                pairs.append(("cycles_" + q, r["cycles_per_call"][q]))
            pairs += [("calls_per_sec_total", r["calls_per_sec_total"]), ("seconds", r["seconds"])]
            for k, v in pairs:
                cv = c.get(k)
                same = cv == v if isinstance(v, str) else (cv is not None and float(cv) == float(v))
                if not same:
                    errors.append("CSV %s=%r but JSON %r (row %s/%s/%s)" % (k, cv, v, r["clock"], r["method"], r["threads"]))
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
