#!/usr/bin/python3
"""check_report.py: a clockbench/1 report as today's engine writes it.

The JSON is read through the analysis's loader (cbcontract.load.load_host,
the one reader: schema, rows, quantiles, nulls named in below_overhead, the
later fields' types).  Checked here is only what a reader need not demand
but today's engine must do: every context field and the later fields
present, quantiles in order and below the raw ones, overhead per CPU, the
probe repeated, the path expectations, and the CSV and text twins agreeing
with the JSON.

Usage: check_report.py REPORT.json [REPORT.csv] [REPORT.txt] [--expect-path=CLOCK:METHOD:PATH]...
Prints one line per failed expectation; exit 1 if any failed, 2 usage.
"""
import csv
import os
import sys

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", d) for d in ("contract", "analysis")]
from cbcontract import load  # noqa: E402
from cbcontract.util import InputError, is_num  # noqa: E402

QUANTS = list(load.QUANTS)
CONTEXT_KEYS = ["clockbench_version", "command_line", "hostname", "kernel", "kernel_cmdline",
                "cpu_model", "cpu_flags", "hypervisor", "kvm_features", "clocksource", "clocksource_end",
                "available_clocksource", "tsc_mhz", "cpus_online", "cpus_allowed", "start", "end",
                "mitigations"]


def ordered(q):
    """The quantiles that are known are in order."""
    seq = [q[k] for k in ("min", "median", "p99", "p999", "max") if q[k] is not None]
    mean_ok = q["mean"] is None or q["min"] is None or q["max"] is None or q["min"] <= q["mean"] <= q["max"]
    return seq == sorted(seq) and mean_ok


def check_engine(m, errors):
    """What today's engine writes beyond what the loader demands."""
    doc, ctx = m.doc, m.context
    errors += ["context lacks %s" % k for k in CONTEXT_KEYS if k not in ctx]
    for k in ["constant_tsc", "nonstop_tsc", "tsc_known_freq", "rdtscp", "hypervisor", "invtsc_cpuid"]:
        if not isinstance((ctx.get("cpu_flags") or {}).get(k), bool):
            errors.append("cpu_flags.%s is not a boolean" % k)
    if not (isinstance(ctx.get("tsc_mhz"), (int, float)) and ctx["tsc_mhz"] > 0):
        errors.append("tsc_mhz is %r" % ctx.get("tsc_mhz"))
    for d, r in zip(doc["results"], m.rows):
        at = "row %s/%s/%s" % (r.clock, r.method, r.threads)
        if "below_overhead" not in d or r.raw is None:
            errors.append("%s: no below_overhead or ns_per_call_raw" % at)
            continue
        if not ordered(r.ns) or not ordered(r.raw):
            errors.append("%s: quantiles out of order %r / raw %r" % (at, r.ns, r.raw))
        if any(r.ns[q] is not None and r.ns[q] > r.raw[q] for q in QUANTS):
            errors.append("%s: a figure less the overhead exceeds the raw one: %r / %r" % (at, r.ns, r.raw))
        ovh = d.get("overhead_per_cpu")
        if not isinstance(ovh, list) or len(ovh) != r.threads or not all(
                isinstance(o, dict) and is_num(o.get("ns_per_call")) for o in ovh):
            errors.append("%s: overhead_per_cpu is %r" % (at, ovh))
        if r.clocksource is None or not isinstance(d.get("after_change"), bool):
            errors.append("%s: clocksource %r, after_change %r" % (at, r.clocksource, d.get("after_change")))
        n = d.get("batches")
        if not (isinstance(n, int) and n >= 1 and d.get("calls") == n * d.get("batch", 0)):
            errors.append("%s: batches/calls inconsistent" % at)
        if not (r.cps_total or 0) > 0:
            errors.append("%s: no calls per second" % at)
        kr = [k for k in ("null_median_ns", "kernel_read_ns", "kernel_read_negative") if k in d]
        if len(kr) != (3 if r.method == "syscall" else 0):
            errors.append("%s: kernel read fields %r" % (at, kr))
    ch = doc.get("changed_during_run")
    if ch is None or (ch["detail"] is None) != (not ch["clocksource"] and not ch["path"]):
        errors.append("changed_during_run is %r" % ch)
    pe = doc.get("probe_end")
    if not isinstance(pe, dict) or set(pe) != set(doc.get("probe") or {}):
        errors.append("probe_end has not the shape of probe: %r" % pe)


def check_paths(m, expects, errors):
    probe = m.doc.get("probe") or {}
    for e in expects:
        clock, method, path = e.split(":")
        got = (probe.get("clocks") or {}).get(clock, {}).get(method)
        if not probe.get("ok"):
            errors.append("probe not ok: %s" % probe.get("reason"))
        elif got != path:
            errors.append("probe: %s via %s took %r, expected %r" % (clock, method, got, path))
        for r in m.rows:
            if r.clock == clock and r.method == method and r.path != path:
                errors.append("row %s/%s/%s path %r, expected %r" % (clock, method, r.threads, r.path, path))


def check_csv(m, path, errors):
    """Every CSV row says what its JSON row says."""
    with open(path, newline="") as f:
        crows = list(csv.DictReader(f))
    rows = m.doc["results"]
    if len(crows) != len(rows):
        errors.append("CSV has %d rows, JSON %d" % (len(crows), len(rows)))
    for c, r in zip(crows, rows):
        pairs = [("clock", r["clock"] or ""), ("method", r["method"]), ("threads", str(r["threads"])),
                 ("path", r["path"] or ""), ("batch", str(r["batch"])), ("batches", str(r["batches"])),
                 ("calls", str(r["calls"])), ("clocksource", r["clocksource"] or ""),
                 ("after_change", "true" if r["after_change"] else "false"),
                 ("below_overhead", " ".join(r["below_overhead"]))]
        for q in QUANTS:
            pairs.append(("ns_" + q, r["ns_per_call"][q]))
            pairs.append(("cycles_" + q, r["cycles_per_call"][q]))
            pairs.append(("ns_raw_" + q, r["ns_per_call_raw"][q]))
        pairs += [("calls_per_sec_total", r["calls_per_sec_total"]), ("seconds", r["seconds"]),
                  ("overhead_ns", r["overhead_ns_per_call"])]
        # syscall rows only; empty cells on the others
        pairs += [(k, r.get(k)) for k in ("null_median_ns", "kernel_read_ns")]
        pairs.append(("kernel_read_negative", "" if "kernel_read_negative" not in r
                      else "true" if r["kernel_read_negative"] else "false"))
        for k, v in pairs:
            cv = c.get(k)
            if v is None:
                same = cv == ""
            elif isinstance(v, str):
                same = cv == v
            else:
                same = cv not in (None, "") and float(cv) == float(v)
            if not same:
                errors.append("CSV %s=%r but JSON %r (row %s/%s/%s)" % (k, cv, v, r["clock"], r["method"], r["threads"]))


def check_text(m, path, errors):
    """Every JSON row has its line in the text table, with the same figures
    (2 decimals; '<ovh' for a quantile below the loop overhead; '*' after a
    clocksource change)."""
    with open(path) as f:
        lines = [ln.split() for ln in f]
    for d, r in zip(m.doc["results"], m.rows):
        head = [r.clock or "-", r.method, (r.path or "-") if r.clock else "-", str(r.threads), str(d["batch"])]
        got = [ln for ln in lines if ln[:5] == head]
        if len(got) != 1:
            errors.append("text: %d lines for row %s, expected 1" % (len(got), " ".join(head)))
            continue
        want = [d["overhead_ns_per_call"]] + [r.ns[q] for q in QUANTS] + [r.raw["median"], r.cps_total / 1e6]
        cells = got[0][5:5 + len(want)]
        for w, c in zip(want, cells):
            if not (c == "<ovh" if w is None else c != "<ovh" and abs(float(c) - w) <= 0.0051):
                errors.append("text: row %s shows %s where the JSON has %r" % (" ".join(head), c, w))
        if len(cells) != len(want) or (got[0][5 + len(want):] == ["*"]) != d["after_change"]:
            errors.append("text: row %s: %r" % (" ".join(head), got[0][5:]))


def main(argv):
    files = [a for a in argv[1:] if not a.startswith("--")]
    expects = [a.split("=", 1)[1] for a in argv[1:] if a.startswith("--expect-path=")]
    if not files or len(files) > 3 or len(expects) != sum(a.startswith("--") for a in argv[1:]) or any(
            e.count(":") != 2 for e in expects) or not all(f.endswith((".csv", ".txt")) for f in files[1:]):
        print("usage: check_report.py REPORT.json [REPORT.csv] [REPORT.txt] [--expect-path=CLOCK:METHOD:PATH]...",
              file=sys.stderr)
        return 2
    try:
        m = load.load_host(files[0])
    except InputError as e:
        print(e)
        return 1
    errors = []
    check_engine(m, errors)
    check_paths(m, expects, errors)
    for f in files[1:]:
        (check_csv if f.endswith(".csv") else check_text)(m, f, errors)
    for e in errors:
        print(e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
