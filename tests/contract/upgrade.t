#!/usr/bin/python3
"""upgrade.t: one reader, one format generation: every committed results/ folder still loads, each of its
documents upgraded to today's shape at the loader's door (cbcontract/upgrade.py) and nowhere else; the earlier
shapes read as they did; a schema older than any this reader knows gets one line naming it and what reads what."""
import copy
import glob
import json
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, ROOT, Tap, read, run  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract")]
from cbcontract import load, runfolder, upgrade  # noqa: E402

t = Tap()

# ---- every committed run folder (and the lab's state-N, a round's round-N inside one) loads ----
folders = []
for p in sorted(glob.glob(os.path.join(ROOT, "results", "*")) + glob.glob(os.path.join(ROOT, "results", "*", "*"))):
    if os.path.isdir(p) and not os.path.basename(p).startswith(("_", ".")) and load.result_files(p):
        folders.append(p)
t.ok(len(folders) >= 20, "%d committed folders under results/ hold result files" % len(folders))
for p in folders:
    try:
        ms = load.load_run(p)
        why = None if ms else "nothing read"
    except Exception as e:  # noqa: BLE001 (the test reports it)
        why = "%s: %s" % (type(e).__name__, e)
    t.ok(why is None, "%s loads" % os.path.relpath(p, ROOT), why)


# ---- after the door, today's shape only ----
def shape_faults(name, doc):
    """What of an earlier shape is left in an upgraded document."""
    out = []
    benches = [doc]
    if doc.get("schema") == runfolder.SCHEMA_GUEST:
        benches = [doc["bench"]]
        out += ["guest.%s" % k for k in upgrade.GUEST_FACTS if k in doc["guest"]]
        out += ["launcher.%s" % k for k in ("host_clocksource",) if k in doc["launcher"]]
        out += ["kvm_trace inside"] if "kvm_trace" in doc else []
        v = doc["launcher"].get("vcpus")
        out += [] if isinstance(v, int) and v >= 1 else ["no launcher.vcpus"]
    for b in benches:
        out += [] if isinstance(b.get("workloads"), list) else ["no workloads[]"]
        av = b["context"].get("available_clocksource")
        out += ["available_clocksource a string"] if isinstance(av, str) else []
        for i, r in enumerate(b["results"]):
            out += [] if isinstance(r.get("below_overhead"), list) else ["results[%d] without below_overhead" % i]
            if r.get("method") == "syscall":
                out += [] if "kernel_read_ns" in r else ["results[%d] without kernel_read_ns" % i]
    return out


faults, n, earlier = [], 0, 0
for p in folders:
    for name in load.result_files(p):
        kind = runfolder.classify(name)[0]
        path = os.path.join(p, name)
        doc = load.load_json(path)
        old = copy.deepcopy(doc)
        if kind == "guest":
            doc, _ = upgrade.guest(doc, runfolder.classify(name)[1])
        else:
            upgrade.bench(doc)
        n += 1
        earlier += doc != old
        faults += ["%s: %s" % (os.path.relpath(path, ROOT), f) for f in shape_faults(name, doc)]
t.ok(n > 50 and earlier > 0 and not faults,
     "each of %d committed result documents is in today's shape after the door (%d were of an earlier shape)"
     % (n, earlier), "\n".join(faults[:20]))

# The loader past the door names no earlier shape's field.
src = read(os.path.join(ROOT, "contract", "cbcontract", "load.py"))
left = sorted(set(re.findall(r"\b(vcpus_online|host_clocksource|kvm_features_valid|kvm_stable_bit_advertised|"
                             r"legacy\w*|_old)\b", src)))
t.ok(not left, "load.py past the door names no field of an earlier shape", left)


# ---- the earlier shapes read as they did ----
def folder(name, edit):
    d = os.path.join(t.tmp, name)
    os.makedirs(d)
    for fn in ("host-tsc.json", "guest-tsc-2vcpu.json"):
        doc = json.loads(read(os.path.join(BEFORE, fn)))
        edit(fn, doc)
        with open(os.path.join(d, fn), "w") as f:
            json.dump(doc, f)
    return d


def oldest(fn, doc):
    """The oldest guest shape: facts only in the guest object, the host's clocksource at launcher.host_clocksource,
    no launcher.vcpus, its KVM trace inside; host rows without below_overhead, one with a null p99."""
    if fn.startswith("guest-"):
        ctx = doc["bench"]["context"]
        for k in ("kernel", "cpus_online", "available_clocksource", "hypervisor", "kvm_features", "cpu_flags"):
            ctx.pop(k, None)
        doc["guest"].update(kernel="5.10.0-old", vcpus_online=2, clocksource="kvm-clock", invtsc=True,
                            available_clocksource="kvm-clock tsc ", hypervisor="KVMKVMKVM",
                            kvm_features_valid=True, kvm_features=(1 << 24) | 1)
        doc["launcher"]["host_clocksource"] = doc["launcher"].pop("host")["clocksource"]
        doc["launcher"].pop("vcpus")
        doc["kvm_trace"] = {"available": True, "master_clock": {"last": True, "transitions": 0, "hostclock": "tsc"},
                            "stable_bit": {"per_vcpu": {"0": True, "1": False}, "all": False},
                            "pvclock_updates": 3, "tsc_offset_writes": 2}
    else:
        for r in doc["results"]:
            r.pop("below_overhead", None)
        doc["results"][0]["ns_per_call"]["p99"] = None


d = folder("oldest", oldest)
ms = {m.kind: m for m in load.load_run(d)}
g, h = ms["guest"], ms["host"]
got = (g.kernel, g.cpus_online, g.clocksource_after, g.available_clocksources, g.hypervisor, g.invtsc,
       g.kvmclock_advertised, g.stable_bit_advertised, g.host_cs, g.vcpus)
t.ok(got == ("5.10.0-old", 2, "kvm-clock", ["kvm-clock", "tsc"], "KVMKVMKVM", True, True, True, "tsc", 2),
     "a guest result of the oldest shape: its facts, host clocksource and vCPUs read from where it kept them", got)
t.ok(load.label_problem(g, "tsc") is None and "clocksource at start tsc" in (load.label_problem(g, "hpet") or ""),
     "its label is checked against launcher.host_clocksource", load.label_problem(g, "hpet"))
t.ok(h.rows[0].below == ("p99",) and h.rows[0].p99 is None and all(r.below == () for r in h.rows[1:]),
     "a row without below_overhead: its null p99 is one below the loop overhead", [r.below for r in h.rows[:3]])
f = load.trace_facts(g)
t.ok(g.trace is not None and not g.trace.counted and (f.reason, f.stable_bit, f.clear_vcpus, f.with_, f.master_clock)
     == (None, False, ["1"], None, True),
     "the kvm_trace an older launcher kept inside reads as a trace of last stable bits (counted: false)",
     vars(f))
rc, so, se = run("report", "--no-plots", "-o", d + ".out", d)
t.ok(rc == 0 and se == "" and "5.10.0-old" in read(os.path.join(d + ".out", "report.md")),
     "clockbench-report report reads it, the guest's kernel shown", se)


# ---- a schema older than any this reader knows: one line ----
def older(fn, where, schema):
    d = os.path.join(t.tmp, "older-" + re.sub(r"\W", "-", schema + where))
    os.makedirs(d)
    doc = json.loads(read(os.path.join(BEFORE, fn)))
    (doc["bench"] if where == "bench" else doc)["schema"] = schema
    with open(os.path.join(d, fn), "w") as f:
        json.dump(doc, f)
    return d, os.path.join(d, fn)


for fn, where, schema, reads in (("host-tsc.json", "", "clockbench/0", "clockbench/1"),
                                 ("guest-tsc-2vcpu.json", "", "clockbench-guest/0", "clockbench-guest/1"),
                                 ("guest-tsc-2vcpu.json", "bench", "clockbench/0", "clockbench/1")):
    d, path = older(fn, where, schema)
    rc, so, se = run("report", "--no-plots", "-o", d + ".out", d)
    lines = se.splitlines()
    want = "clockbench-report: %s: %sschema %s is older than any this reader knows: clockbench " % (
        path, where + "." if where else "", schema)
    t.ok(rc == 1 and len(lines) == 1 and lines[0].startswith(want) and (" reads %s " % reads) in lines[0]
         and lines[0].endswith("nothing here reads %s" % schema),
         "%s%s %s: exit 1, one line naming it and what this reader reads (%s)" % (fn, " bench" if where else "",
                                                                                  schema, reads), se)
d = os.path.join(t.tmp, "older-trace")
os.makedirs(d)
tr = {"schema": "clockbench-kvm-trace/0", "guest_result": "guest-tsc-2vcpu.json", "available": False, "reason": "x"}
with open(os.path.join(d, "kvm-trace-tsc-2vcpu.json"), "w") as f:
    json.dump(tr, f)
try:
    load.load_trace(os.path.join(d, "kvm-trace-tsc-2vcpu.json"))
    msg = ""
except load.InputError as e:
    msg = str(e)
t.ok("schema clockbench-kvm-trace/0 is older than any this reader knows" in msg and "\n" not in msg
     and "reads clockbench-kvm-trace/1" in msg, "a KVM trace of schema clockbench-kvm-trace/0: the same line", msg)
t.ok(upgrade.schema_problem("clockbench/2", "clockbench/1") == "unknown"
     and upgrade.schema_problem("other/0", "clockbench/1") == "unknown"
     and upgrade.schema_problem("clockbench/1", "clockbench/1") is None,
     "a newer or foreign schema stays 'unknown schema' (its line unchanged); today's passes")
t.done()
