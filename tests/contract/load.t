#!/usr/bin/python3
# tier: fast
"""load.t: the one reader: KVM trace files (stable bit from the counts, completeness), today's shape only (an earlier one
refused in one line), the engine's later fields, the guest's facts, medians below the loop overhead, labels."""
import json
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, NEW, ROOT, Tap, read, run, table_row  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
from cbcontract import load  # noqa: E402

t = Tap()


def folder(name, edits=None, files=("host-tsc.json", "guest-tsc-2vcpu.json", "kvm-trace-tsc-2vcpu.json"), src=BEFORE):
    """A run folder in tmp from src's files, edits {file name: fn(doc)} applied (fn None: the file left out)."""
    d = os.path.join(t.tmp, name)
    os.makedirs(d)
    for fn in files:
        doc = json.loads(read(os.path.join(src, fn)))
        e = (edits or {}).get(fn, lambda doc: doc)
        if e is None:
            continue
        e(doc)
        with open(os.path.join(d, fn), "w") as f:
            json.dump(doc, f)
    return d


def report(d):
    out = d + ".out"
    rc, so, se = run("report", "--no-plots", "-o", out, d)
    return rc, (read(os.path.join(out, "report.md")) if rc == 0 else ""), se


def guest_row(md):
    return table_row(md, "tsc", "2", "2") or []


def facts(d):
    """trace_facts of the guest of run folder d, as a dict (an error's text on failure)."""
    try:
        return vars(load.trace_facts([x for x in load.load_run(d) if x.kind == "guest"][0]))
    except Exception as e:  # noqa: BLE001 (reported by the test that asked)
        return {"error": "%s: %s" % (type(e).__name__, e)}


def counts(doc, with_, without, at="life"):
    """Sets one vCPU's pvclock updates: with_ with the stable bit, without without."""
    c = doc[at]
    c["stable_bit"] = {"with": with_, "without": without, "all": False if without else (True if with_ else None),
                       "per_vcpu": {"0": {"with": with_, "without": without}}}
    c["pvclock_updates"] = with_ + without
    c["pvclock_updates_per_vcpu"] = {"0": with_ + without}


# B1: the stable bit is "all" only when every update carried it.  flags 0x0
# then 0x1 on one vCPU (the last update set) is 1 with, 1 without: clear.
d = folder("flip", {"kvm-trace-tsc-2vcpu.json": lambda doc: counts(doc, 1, 1)})
rc, md, se = report(d)
t.ok(rc == 0 and guest_row(md)[10:11] == ["clear (trace: 1 with, 1 without; vCPU 0)"],
     "0x0 then 0x1 on one vCPU: stable bit clear, with the counts", guest_row(md) or se)
f = facts(d)
t.ok([f.get(k) for k in ("stable_bit", "with_", "without", "clear_vcpus")] == [False, 1, 1, ["0"]],
     "trace_facts: from the counts", f)


def lie(doc):
    counts(doc, 1, 1)
    doc["life"]["stable_bit"]["all"] = True


d = folder("lie", {"kvm-trace-tsc-2vcpu.json": lie})
rc, so, se = run("report", "--no-plots", "-o", d + ".out", d)
t.ok(rc == 1 and len(se.splitlines()) == 1 and os.path.join(d, "kvm-trace-tsc-2vcpu.json") in se
     and "life.stable_bit.all: true, but the counts say false (1 with, 1 without)" in se,
     "a trace whose all contradicts its counts: exit 1, one line naming the trace file", se)

# B2: a trace that lost events is not trusted, and says how many.
def lost(doc):
    doc["complete"] = False
    doc["completeness"].update(overrun=12, lost=12)


d = folder("lost", {"kvm-trace-tsc-2vcpu.json": lost})
rc, md, se = report(d)
t.ok(rc == 0 and guest_row(md)[9:11] == ["n/a (incomplete trace (12 events lost))", "set (guest log)"],
     "complete false: incomplete trace (12 events lost), the trace's facts not used", guest_row(md) or se)


def flag_lies(doc):
    doc["completeness"].update(entries_in_buffer=100, entries_written=130)


d = folder("flaglies", {"kvm-trace-tsc-2vcpu.json": flag_lies})
t.ok(facts(d).get("reason") == "incomplete trace (30 events lost)",
     "complete true but 30 entries written and not in the buffer: incomplete, the figures win", facts(d))


def unknown(doc):
    doc["complete"] = None
    doc["completeness"] = None


d = folder("unknown", {"kvm-trace-tsc-2vcpu.json": unknown})
t.ok(facts(d).get("master_clock") is None and "completeness unknown" in str(facts(d).get("reason")),
     "complete null: not trusted either", facts(d))

# No trace file: not traced.
d = folder("untraced", {"kvm-trace-tsc-2vcpu.json": None})
rc, md, se = report(d)
t.ok(rc == 0 and guest_row(md)[9:10] == ["n/a (not traced)"], "no kvm-trace file: not traced", guest_row(md) or se)

# Strictness, one line naming the trace file.
cases = [
    ("tschema", lambda doc: doc.update(schema="clockbench-kvm-trace/2"),
     'unknown schema "clockbench-kvm-trace/2" (this tool reads clockbench-kvm-trace/1)'),
    ("tbelongs", lambda doc: doc.update(guest_result="guest-hpet-2vcpu.json"),
     'guest_result "guest-hpet-2vcpu.json": expected guest-tsc-2vcpu.json'),
    ("tcount", lambda doc: doc["life"]["stable_bit"].update(without=-1), "life.stable_bit.without: expected an integer >= 0"),
    ("tsubject", lambda doc: doc.update(subject="qemu"), 'subject "qemu"'),
    ("tnoreason", lambda doc: doc.update(available=False, reason=None), "reason: expected a string"),
]
for name, e, words in cases:
    d = folder(name, {"kvm-trace-tsc-2vcpu.json": e})
    rc, so, se = run("report", "--no-plots", "-o", d + ".out", d)
    t.ok(rc == 1 and len(se.splitlines()) == 1 and se.startswith("clockbench-report: %s: " % os.path.join(
        d, "kvm-trace-tsc-2vcpu.json")) and words in se, "kvm-trace %s: exit 1, one line naming it" % name, se)

# Every committed run under results/ reads, in today's shape.
bad, seen = [], 0
for top, dirs, files in os.walk(os.path.join(ROOT, "results")):
    if load.result_files(top):
        seen += 1
        try:
            load.load_run(top)
        except Exception as e:  # noqa: BLE001 (any failure is the test's)
            bad.append("%s: %s" % (top, e))
t.ok(seen > 0 and not bad, "every committed run folder under results/ reads (%d folders)" % seen, bad)


# A file of a shape only pre-release builds wrote: one line naming the file and what is missing, exit 1.
def rows_without_below(doc):
    for r in doc["results"]:
        del r["below_overhead"]
    del doc["workloads"]


def oldest_guest(doc):
    """Facts in the guest object, launcher.host_clocksource, no launcher.vcpus, the KVM trace inside."""
    doc["guest"].update(kernel="5.10.0-old", vcpus_online=2, clocksource="kvm-clock")
    doc["launcher"]["host_clocksource"] = doc["launcher"].pop("host")["clocksource"]
    del doc["launcher"]["vcpus"]
    doc["kvm_trace"] = {"available": True, "stable_bit": {"per_vcpu": {"0": True}, "all": True}}
    rows_without_below(doc["bench"])


for name, fn, e, words in (
        ("old-rows", "host-tsc.json", rows_without_below, "results[0].below_overhead: missing or null"),
        ("old-noworkloads", "host-tsc.json", lambda doc: doc.pop("workloads"), "workloads: missing or null"),
        ("old-schema", "host-tsc.json", lambda doc: doc.update(schema="clockbench/0"),
         'unknown schema "clockbench/0" (this tool reads clockbench/1)'),
        ("old-guest", "guest-tsc-2vcpu.json", oldest_guest, "launcher.vcpus: expected a positive integer, got null")):
    d = folder(name, {fn: e}, files=(fn,))
    rc, so, se = run("report", "--no-plots", "-o", d + ".out", d)
    t.ok(rc == 1 and so == "" and len(se.splitlines()) == 1
         and se.startswith("clockbench-report: %s: %s" % (os.path.join(d, fn), words)),
         "%s of an earlier shape (%s): exit 1, one line naming the file and the field" % (fn, name), se)

# The engine's later fields: per-row clocksource, raw figures, below_overhead.
def later(doc):
    r = doc["results"][0]
    r["clocksource"] = "tsc"
    r["ns_per_call_raw"] = dict(r["ns_per_call"], median=40.0)
    r["below_overhead"] = []
    rd = [x for x in doc["results"] if x["method"] == "rdtsc"][0]
    rd["below_overhead"] = ["min", "median"]
    rd["ns_per_call"].update(min=None, median=None)
    doc["context"]["clocksource_end"] = "tsc"
    doc["context"]["mitigations"] = {"spectre_v2": "Mitigation: Retpolines; STIBP: disabled",
                                     "spec_rstack_overflow": "Vulnerable: Safe RET, no microcode",
                                     "meltdown": "Not affected"}
    doc["probe_end"] = doc["probe"]
    doc["changed_during_run"] = {"clocksource": False, "path": False, "detail": None}


d = folder("later", {"host-tsc.json": later})
rc, md, se = report(d)
try:
    m = [x for x in load.load_run(d) if x.kind == "host"][0]
    rd = [r for r in m.rows if r.method == "rdtsc"][0]
    got = (m.rows[0].clocksource, m.rows[0].raw["median"], rd.median, rd.below)
except Exception as e:  # noqa: BLE001
    got = e
t.ok(rc == 0 and got == ("tsc", 40.0, None, ("min", "median")),
     "row clocksource, ns_per_call_raw and a null median named in below_overhead: read", (got, se))
t.ok("- host: spec_rstack_overflow: Vulnerable: Safe RET, no microcode, spectre_v2: Retpolines" in md,
     "the report shows the mitigations beside the figures, one short line", [x for x in md.splitlines() if "host:" in x])


def unnamed(doc):
    doc["results"][1]["below_overhead"] = ["min"]
    doc["results"][1]["ns_per_call"].update(min=None, p99=None)


d = folder("unnamed", {"host-tsc.json": unnamed})
rc, so, se = run("report", "--no-plots", "-o", d + ".out", d)
t.ok(rc == 1 and "results[1].ns_per_call.p99: null but not named in below_overhead" in se, "a null not named: refused", se)

# The guest's facts are the engine's context's (bench.context): a real
# guest result of today's PID 1 (TCG) shows them, and a KVM guest's too.
g_new = os.path.join(NEW, "guest-tsc-1vcpu.json")
rc, so, se = run("table", g_new)
t.ok(rc == 0 and "\nguest clocksource tsc (TCG's: the emulator's, not evidence about the host) (available: tsc hpet acpi_pm); kvm stable bit -; sched_clock stable True; "
     "TSC marked unstable False; invtsc False\n" in so, "today's guest result: the launcher's table shows its clocksource",
     so + se)
rc, md, se = report(folder("new", files=("guest-tsc-1vcpu.json",), src=NEW))
gr = table_row(md, "tsc", "1", "1") or []
t.ok(rc == 0 and gr[8:11] == ["tsc", "n/a (not traced)", "n/a (no kvm-clock)"] and "| guest kernel | 6.1.0-57-amd64 |" in md,
     "today's guest result in the report: its clocksource; a TCG guest's stable bit n/a, not the guest log's", gr or se)
PROPS = ("kernel", "cpus_online", "clocksource_after", "clocksource_before", "available_clocksources", "hypervisor",
         "invtsc", "kvmclock_advertised", "stable_bit_advertised")


def props(path):
    try:
        m = load.load_guest(path)
        return {k: getattr(m, k) for k in PROPS}
    except Exception as e:  # noqa: BLE001 (reported by the test that asked)
        return {"error": "%s: %s" % (type(e).__name__, e)}


t.ok(props(g_new) == {"kernel": "6.1.0-57-amd64", "cpus_online": 1, "clocksource_after": "tsc",
                      "clocksource_before": "tsc", "available_clocksources": ["tsc", "hpet", "acpi_pm"],
                      "hypervisor": "TCGTCGTCGTCG", "invtsc": False, "kvmclock_advertised": False,
                      "stable_bit_advertised": None}, "the loader's facts of today's guest result", props(g_new))
g_kvm = props(os.path.join(BEFORE, "guest-hpet-2vcpu.json"))
t.ok(g_kvm == {"kernel": "6.1.0-57-amd64", "cpus_online": 2, "clocksource_after": "kvm-clock",
               "clocksource_before": "kvm-clock", "available_clocksources": ["kvm-clock", "tsc"],
               "hypervisor": "KVMKVMKVM", "invtsc": True, "kvmclock_advertised": True, "stable_bit_advertised": True},
     "a KVM guest's facts from bench.context, its CPUID leaf's bits among them", g_kvm)
# A median below the loop overhead: null in ns_per_call, named in
# below_overhead.  Shown as such, with the raw figure, in every reader;
# never 0, never a crash, never a row silently gone.
def below(doc):
    b = doc.get("bench", doc)
    for r in b["results"]:
        if r["clock"] == "monotonic" and r["method"] == "vdso":
            r["ns_per_call_raw"] = dict(r["ns_per_call"], min=2.5, median=3.5)
            r["ns_per_call"].update(min=None, median=None)
            r["below_overhead"] = ["min", "median"]


d = folder("below", {"host-tsc.json": below, "guest-tsc-2vcpu.json": below},
           files=("host-tsc.json", "guest-tsc-2vcpu.json", "kvm-trace-tsc-2vcpu.json", "host-hpet.json"))
rc, md, se = report(d)
h1, g1 = table_row(md, "tsc", "1") or [], table_row(md, "tsc", "2", "1") or []
hp = table_row(md, "hpet", "1") or []
t.ok(rc == 0 and h1[2:5] == ["n/a (below loop overhead; raw 3.50)", "30.00", "n/a"]
     and g1[3:6] == ["n/a (below loop overhead; raw 3.50)", "35.00", "n/a"] and hp[4] == "n/a",
     "report: a median below the loop overhead said so with its raw figure, its ratios n/a", (h1, g1, hp, se))
t.ok("| monotonic | vdso | 1 | user | n/a (below loop overhead; raw 2.50) | n/a (below loop overhead; raw 3.50) |" in md
     and "left out, no figure to plan with (median below the loop overhead): host on tsc" in md,
     "report: the detailed rows, and capacity planning leaves the state out saying why",
     [x for x in md.splitlines() if "below" in x])
rc, so, se = run("table", os.path.join(d, "guest-tsc-2vcpu.json"))
t.ok(rc == 0 and [x for x in so.splitlines() if x.startswith("monotonic  vdso")][0].split()[4:10]
     == ["n/a", "(below", "loop", "overhead;", "raw", "3.5)"], "the launcher's table: the same", so + se)
rc, so, se = run("summary", d)
t.ok(rc == 0 and (table_row(so, "tsc") or [])[1:3] == ["n/a (below loop overhead)", "n/a (below loop overhead)"]
     and (table_row(so, "hpet") or [""])[1] == "1500.0", "summary: the same, the others without a ratio", so + se)
rc, so, se = run("prom", d, "-o", d + ".pr")
pr = read(d + ".pr") if rc == 0 else ""
t.ok(rc == 0 and 'clocksource="tsc",clock="monotonic",method="vdso",threads="1"} 3e-08' in pr
     and not any("median" in x and 'clocksource="tsc"' in x and 'method="vdso"' in x for x in pr.splitlines()),
     "prom: no median sample for it (absent, not 0), its p99 kept", pr + se)
rc, so, se = run("diff", BEFORE, d)
t.ok(rc == 0 and "| host | tsc | monotonic | vdso | 1 | 25.00 | n/a (below loop overhead; raw 3.50) | n/a |" in so,
     "diff: the same, no delta", [x for x in so.splitlines() if "below" in x] or se)

# Labels: check-label FILE CS.
rc, so, se = run("check-label", os.path.join(BEFORE, "host-tsc.json"), "tsc")
t.ok(rc == 0 and so == "" and se == "", "check-label: consistent, exit 0, silent", so + se)
rc, so, se = run("check-label", os.path.join(BEFORE, "host-tsc.json"), "hpet")
t.ok(rc == 1 and so.strip() == "%s: labelled hpet, but the file name says tsc; clocksource at start tsc"
     % os.path.join(BEFORE, "host-tsc.json"), "check-label: another clocksource, one line naming the file", so + se)


def switched(doc):
    later(doc)
    doc["results"][2]["clocksource"] = "hpet"
    doc["context"]["clocksource_end"] = "hpet"
    doc["changed_during_run"] = {"clocksource": True, "path": False, "detail": "tsc -> hpet after cell 3"}


d = folder("switched", {"host-tsc.json": switched})
rc, so, se = run("check-label", os.path.join(d, "host-tsc.json"), "tsc")
want = ("row %s/%s/%d measured on hpet; clocksource at end hpet; clocksource changed during the run: "
        "tsc -> hpet after cell 3")
r2 = json.loads(read(os.path.join(d, "host-tsc.json")))["results"][2]
t.ok(rc == 1 and len(so.splitlines()) == 1 and so.strip().endswith(want % (r2["clock"], r2["method"], r2["threads"])),
     "check-label: a watchdog switch mid-run (row, end, changed_during_run)", so + se)


def host_moved(doc):
    doc["launcher"]["host"]["clocksource_end"] = "hpet"


d = folder("gmoved", {"guest-tsc-2vcpu.json": host_moved})
rc, so, se = run("check-label", os.path.join(d, "guest-tsc-2vcpu.json"), "tsc")
t.ok(rc == 1 and so.strip().endswith("labelled tsc, but clocksource at end hpet"),
     "check-label: a guest whose host left tsc by the end (launcher.host.clocksource_end)", so + se)
rc, so, se = run("check-label", os.path.join(BEFORE, "kvm-trace-tsc-2vcpu.json"), "tsc")
t.ok(rc == 1 and so == "" and len(se.splitlines()) == 1 and "not a host-<cs>.json or guest" in se,
     "check-label of a file that is not a result: exit 1, one line", se)
rc, so, se = run("check-label", os.path.join(BEFORE, "host-tsc.json"))
t.ok(rc == 2 and len(se.splitlines()) == 1, "check-label without CS: usage, exit 2", se)
# health.json: health's schema, and its old name in the run folders written before the rename; another refused.
doc = json.loads(read(os.path.join(ROOT, "tests", "host-scripts", "fixtures", "lab", "state-10", "health.json")))
seen = {}
for schema in ("clockbench-health/1", "clockbench-host-check/1", "clockbench-health/2"):
    path = os.path.join(t.tmp, "health-%s.json" % schema.replace("/", "-"))
    with open(path, "w") as f:
        json.dump(dict(doc, schema=schema), f)
    try:
        seen[schema] = load.load_health(path)["state"]
    except load.InputError as e:
        seen[schema] = str(e)
t.ok(seen["clockbench-health/1"] == seen["clockbench-host-check/1"] == doc["state"]
     and "unknown schema" in seen["clockbench-health/2"] and "clockbench-health/1" in seen["clockbench-health/2"],
     "health.json: clockbench-health/1 and its old name clockbench-host-check/1 read alike; another schema refused, "
     "naming health's", str(seen))
t.done()
