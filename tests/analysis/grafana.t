#!/usr/bin/python3
# tier: fast
"""grafana.t: the Grafana dashboard is valid JSON Grafana imports, each panel queries Prometheus, every query
returns data over what the project's own writers write from the fixtures (clockbench-report prom, and
clockbench-watch --once on the recorded kernel log and KVM traces: the fleet view), and every node_clockbench_*
metric it names is one that they write; node_exporter's metrics come from the short list below."""
import copy
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import FX, ROOT, Tap, read, run, with_null_rows  # noqa: E402

DASH = os.path.join(ROOT, "analysis", "grafana", "clockbench.json")
# node_exporter's time collector (Linux), the metrics the dashboard may name
# beside clockbench's: both in Debian 12's prometheus-node-exporter 1.5.0,
# labels device and clocksource.
NODE_EXPORTER = {"node_time_clocksource_current_info", "node_time_clocksource_available_info",
                 "node_textfile_mtime_seconds"}  # the textfile collector's, per file (the watch's age)
HFX = os.path.join(ROOT, "tests", "host-scripts", "fixtures")
METRIC = re.compile(r"(?<![A-Za-z0-9_:])node_[A-Za-z0-9_:]*")

t = Tap()


def exprs(dash):
    """Every PromQL query of the dashboard: (where, expr); templating queries too."""
    out = []
    for p in dash.get("panels", []):
        for tg in p.get("targets") or []:
            out.append(("panel %r %s" % (p.get("title"), tg.get("refId")), tg.get("expr", "")))
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v.get("query")
            out.append(("variable %s" % v.get("name"), q.get("query", "") if isinstance(q, dict) else q or ""))
    return out


def metrics(expr):
    """The node_* metric names an expression reads (string literals, such as label values, left out)."""
    return set(METRIC.findall(re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)))


def unknown(dash, written):
    """[(where, metric)] the writer does not produce (clockbench) or the list does not hold (node_exporter)."""
    out = []
    for where, e in exprs(dash):
        for name in sorted(metrics(e)):
            known = written if name.startswith("node_clockbench_") else NODE_EXPORTER
            if name not in known:
                out.append((where, name))
    return out


def load_doc(path):
    with open(path) as f:
        return json.load(f)


def save_doc(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)


def derive(tmp):
    """Run folders for the writer: every fixture as it is, plus copies that
    carry what no fixture has yet: null rows (the kernel's own read) and a
    KVM trace with a measuring window."""
    runs = sorted(os.path.join(FX, d) for d in os.listdir(FX) if os.path.isdir(os.path.join(FX, d))
                  and any(f.startswith(("host-", "guest-")) for f in os.listdir(os.path.join(FX, d))))
    src = os.path.join(FX, "20260101-120000-hv1")
    d = with_null_rows(src, os.path.join(tmp, "derived", os.path.basename(src)))
    p = os.path.join(d, "kvm-trace-tsc-2vcpu.json")
    doc = load_doc(p)
    doc["measuring"] = dict(copy.deepcopy(doc["life"]), available=True, reason=None, seconds=2.0)
    save_doc(p, doc)
    return runs + [d]


try:
    dash = load_doc(DASH)
    err = None
except (OSError, ValueError) as e:
    dash, err = {}, e
t.ok(err is None and isinstance(dash, dict), "analysis/grafana/clockbench.json is valid JSON", err)
t.ok(isinstance(dash.get("schemaVersion"), int) and dash.get("uid") and dash.get("title")
     and isinstance(dash.get("panels"), list) and dash["panels"],
     "a dashboard Grafana imports: schemaVersion, uid, title, panels")

panels = [p for p in dash.get("panels", []) if p.get("type") != "row"]
bad = []
for p in panels:
    ds, tg = p.get("datasource"), p.get("targets")
    if not (isinstance(ds, dict) and ds.get("type") == "prometheus" and ds.get("uid")):
        bad.append("%r: datasource %r" % (p.get("title"), ds))
    if not (isinstance(tg, list) and tg):
        bad.append("%r: no targets" % p.get("title"))
        continue
    for x in tg:
        if not (x.get("expr") and x.get("refId") and isinstance(x.get("datasource"), dict)):
            bad.append("%r: target %r lacks expr, refId or datasource" % (p.get("title"), x))
    if len({x.get("refId") for x in tg}) != len(tg):
        bad.append("%r: refIds repeat" % p.get("title"))
    g = p.get("gridPos") or {}
    if not all(isinstance(g.get(k), int) for k in ("h", "w", "x", "y")) or g["x"] + g["w"] > 24:
        bad.append("%r: gridPos %r" % (p.get("title"), g))
ids = [p.get("id") for p in dash.get("panels", [])]
if len(set(ids)) != len(ids):
    bad.append("panel ids repeat")
t.ok(panels and not bad, "every panel (%d) has a Prometheus datasource, targets with expr and refId, a place"
     % len(panels), "\n".join(bad))

promtool = shutil.which("promtool")
if not promtool:
    t.skip("promtool not installed (Debian: prometheus): the queries' syntax is not checked")
else:
    rules = os.path.join(t.tmp, "queries.yml")
    with open(rules, "w") as f:
        f.write("groups:\n- name: dashboard\n  rules:\n")
        for i, (where, e) in enumerate(x for x in exprs(dash) if not x[0].startswith("variable")):
            f.write("  - record: dashboard_query_%d\n    expr: %s\n" % (i, json.dumps(e)))
    p = subprocess.run([promtool, "check", "rules", rules], capture_output=True, text=True)
    t.ok(p.returncode == 0, "every panel query is PromQL (promtool check rules)", p.stdout + p.stderr)

written, errs = set(), []
proms = derive(t.tmp)
for i, r in enumerate(proms):
    out = os.path.join(t.tmp, "run%d.prom" % i)
    rc, so, se = run("prom", "-o", out, r)
    if rc != 0:
        errs.append("%s: exit %d: %s" % (r, rc, se))
        continue
    written |= {ln.split()[2] for ln in read(out).splitlines() if ln.startswith("# TYPE ")}
t.ok(not errs and "node_clockbench_clock_read_median_seconds" in written,
     "clockbench-report prom writes a .prom file from each fixture run (%d metrics)" % len(written), "\n".join(errs))

# clockbench-watch --once over the recorded kernel log and traces, a host on hpet: one more instance.
wd, proc = os.path.join(t.tmp, "watch"), os.path.join(t.tmp, "proc")
os.makedirs(wd)
os.chmod(t.tmp, 0o755)  # as root the watch drops to its own account, then reads the fake /proc and clocksource
for pid in ("8162", "8311"):
    os.makedirs(os.path.join(proc, pid))
    with open(os.path.join(proc, pid, "cmdline"), "w") as f:
        f.write("qemu-system-x86_64\0-name\0guest=vm%s\0" % pid)
cs = os.path.join(t.tmp, "cs")
os.makedirs(cs)
for n, v in (("current_clocksource", "hpet"), ("available_clocksource", "tsc hpet acpi_pm")):
    with open(os.path.join(cs, n), "w") as f:
        f.write(v + "\n")
klog, trace = os.path.join(t.tmp, "kmsg.txt"), os.path.join(t.tmp, "trace.txt")
with open(klog, "w") as f:
    f.writelines(ln.split(" | ", 1)[1] for ln in open(os.path.join(HFX, "kmsg", "lines.txt"))
                 if " | " in ln and not ln.startswith("#"))
with open(trace, "w") as f:
    f.write(read(os.path.join(HFX, "trace-tsc.txt")) + read(os.path.join(HFX, "trace-kvm-clock.txt")))
p = subprocess.run([os.path.join(ROOT, "host-scripts", "watch"), "--once", "--textfile-dir", wd],
                   env=dict(os.environ, CB_KMSG=klog, CB_TRACE_PIPE=trace, CB_PROC=proc, CB_CS_DIR=cs,
                            CB_WATCH_RUN_DIR=os.path.join(t.tmp, "watch-run")),
                   capture_output=True, text=True)
watch_prom = os.path.join(wd, "clockbench-watch.prom")
wrote = {ln.split()[2] for ln in read(watch_prom).splitlines() if ln.startswith("# TYPE ")} if p.returncode == 0 else set()
written |= wrote
proms.append(None)
t.ok(p.returncode == 0 and "node_clockbench_vm_stable_bit" in wrote,
     "clockbench-watch --once writes its textfile from the recorded log and traces (%d metrics)" % len(wrote), p.stderr)

if not promtool:
    t.skip("promtool not installed (Debian: prometheus): the queries are not run")
else:
    # Every panel query, run by promtool over what the writer wrote (each
    # run as its own instance), returns data: absent(query) is empty.
    series = []
    for i in range(len(proms)):
        path = watch_prom if proms[i] is None else os.path.join(t.tmp, "run%d.prom" % i)
        for ln in read(path).splitlines():
            if ln and not ln.startswith("#"):
                sel, v = ln.rsplit(" ", 1)
                sel = sel[:-1] + ',instance="run%d"}' % i if sel.endswith("}") else sel + '{instance="run%d"}' % i
                # A counter as one that grew since the first sample (increase(), rate()).
                vals = "0 %s %s" % (v, v) if sel.split("{")[0].endswith("_total") else " ".join([v] * 3)
                series.append({"series": sel, "values": vals})
    series.append({"series": 'node_textfile_mtime_seconds{file="/var/lib/prometheus/node-exporter/clockbench-watch.prom",'
                             'instance="run%d"}' % (len(proms) - 1), "values": "0 60 120"})
    # node_exporter's, as its time collector writes them (not the project's to generate).
    series += [{"series": '%s{clocksource="%s",device="0",instance="run0"}' % (n, cs), "values": "1 1 1"}
               for n, css in (("node_time_clocksource_current_info", ("tsc",)),
                              ("node_time_clocksource_available_info", ("tsc", "hpet", "acpi_pm"))) for cs in css]
    cases = [{"expr": "absent(%s)" % e.replace("$instance", ".*"), "eval_time": "1m", "exp_samples": []}
             for where, e in exprs(dash) if not where.startswith("variable")]
    rules = os.path.join(t.tmp, "none.yml")
    with open(rules, "w") as f:
        f.write("groups: []\n")
    ut = os.path.join(t.tmp, "queries-test.yml")
    with open(ut, "w") as f:
        json.dump({"rule_files": [rules], "evaluation_interval": "1m",
                   "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": cases}]}, f)
    p = subprocess.run([promtool, "test", "rules", ut], capture_output=True, text=True)
    t.ok(p.returncode == 0 and cases, "every panel query (%d) returns data from the written .prom files (promtool test rules)"
         % len(cases), p.stdout + p.stderr)

used = set().union(*(metrics(e) for _, e in exprs(dash))) if dash else set()
miss = unknown(dash, written)
t.ok(used and not miss, "every metric the dashboard queries (%d) is written by clockbench-report prom or is "
     "node_exporter's" % len(used), "\n".join("%s: %s" % m for m in miss))
t.ok(NODE_EXPORTER <= used, "the dashboard shows node_exporter's clocksource (%s)" % ", ".join(sorted(NODE_EXPORTER)),
     sorted(NODE_EXPORTER - used))

# The check itself fails on a name the writer does not produce, and on a
# node_exporter name outside the list.
wrong = copy.deepcopy(dash)
if panels:
    tg = next(p for p in wrong["panels"] if p.get("type") != "row")["targets"][0]
    tg["expr"] = 'node_clockbench_clock_read_mean_seconds{method="vdso"} and on() node_time_clocksource_info'
t.ok({"node_clockbench_clock_read_mean_seconds", "node_time_clocksource_info"} <= {m for _, m in unknown(wrong, written)},
     "a query naming a metric nobody writes is caught", unknown(wrong, written))
t.done()
