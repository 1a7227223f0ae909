"""upgrade.py: the loader's door: a result file of an earlier shape of today's schema, as today's shape.

The committed results/ hold files that pre-release engines and launchers
wrote under today's schema strings (clockbench/1, clockbench-guest/1,
clockbench-kvm-trace/1) in earlier shapes.  load.py hands each document it
parses to bench() or guest() here, right after its schema string is checked,
and knows only today's shape after that: no reader past this file asks
whether a file is older.  A schema string of an older number than today's
(clockbench/0) names no shape anybody wrote: schema_problem() gives its one
line.  docs/run-folder.md lists the shapes.

The earlier shapes, each upgraded here and nowhere else:
  clockbench/1 (the engine's document; a guest result's bench too)
    - a row without below_overhead (engines before 2026-11-30 10:30,
      d76b099), where the reader let a quantile other than the median be
      null: below_overhead lists such nulls, the one null today's shape has
      (the committed results/ hold none)
    - a syscall row without kernel_read_ns: null_median_ns and
      kernel_read_ns null (unknown), kernel_read_negative false
    - no workloads[]: an empty list (none was run)
    - context.available_clocksource as one string: a list of its words
  clockbench-guest/1 (before PID 1 reused the engine's context)
    - the machine's facts in the guest object (kernel, vcpus_online,
      clocksource read after the engine, available_clocksource, hypervisor,
      invtsc, kvm_features_valid and kvm_features, or kvmclock_advertised
      and kvm_stable_bit_advertised): moved into bench.context where it
      lacks them, and out of the guest object
    - launcher.host_clocksource: launcher.host.clocksource
    - no launcher.vcpus: the file name's N, else the guest's cpus_online;
      no launcher.backend: the file name's
    - the KVM trace as a kvm_trace object inside the result (before
      kvm-trace-*.json): returned apart, as a clockbench-kvm-trace/1
      document that keeps only each vCPU's last stable bit (load.py reads
      it with counted=False)
"""
import re

from .names import QUANTILES, VERSION

_SCHEMA_RE = re.compile(r"\A([a-z][a-z-]{0,40})/([0-9]{1,6})\Z")
# The guest object's facts that moved into the engine's context.
GUEST_FACTS = ("kernel", "vcpus_online", "clocksource", "available_clocksource", "hypervisor", "invtsc",
               "kvm_features_valid", "kvm_features", "kvmclock_advertised", "kvm_stable_bit_advertised")


def schema_problem(found, want):
    """None when schema string `found` is `want`; else the reason, as part
    of one line: older than this reader, newer or unknown (naming what this
    reader reads)."""
    if found == want:
        return None
    a, b = _SCHEMA_RE.match(found) if isinstance(found, str) else None, _SCHEMA_RE.match(want)
    if a and b and a.group(1) == b.group(1) and int(a.group(2)) < int(b.group(2)):
        return ("schema %s is older than any this reader knows: clockbench %s reads %s (and upgrades the "
                "earlier shapes of it in results/), nothing here reads %s" % (found, VERSION, want, found))
    return None if found is None else "unknown"


def _dict(v):
    return v if isinstance(v, dict) else None


def bench(doc):
    """A clockbench/1 document (a dict whose schema was checked) in today's
    shape, changed in place and returned; what is not a dict where one is
    expected is left for the strict reader to refuse."""
    ctx = _dict(doc.get("context"))
    if ctx is not None and isinstance(ctx.get("available_clocksource"), str):
        ctx["available_clocksource"] = ctx["available_clocksource"].split()
    if "workloads" not in doc:
        doc["workloads"] = []
    for r in doc.get("results") if isinstance(doc.get("results"), list) else ():
        if not isinstance(r, dict):
            continue
        ns = _dict(r.get("ns_per_call"))
        if "below_overhead" not in r and ns is not None:
            r["below_overhead"] = [q for q in QUANTILES if q != "median" and q in ns and ns[q] is None]
        if r.get("method") == "syscall" and "kernel_read_ns" not in r:
            r["null_median_ns"], r["kernel_read_ns"] = None, None
            r.setdefault("kernel_read_negative", False)
    return doc


def _facts_into_context(g, ctx):
    """The guest object's facts into the engine's context, where it lacks them."""
    def has_str(d, k):
        return isinstance(d.get(k), str) and d[k] != ""

    if not has_str(ctx, "kernel") and has_str(g, "kernel"):
        ctx["kernel"] = g["kernel"]
    if type(ctx.get("cpus_online")) is not int and type(g.get("vcpus_online")) is int:
        ctx["cpus_online"] = g["vcpus_online"]
    if not has_str(ctx, "clocksource_end") and has_str(g, "clocksource"):
        ctx["clocksource_end"] = g["clocksource"]  # the guest's clocksource read after the engine
    if ctx.get("available_clocksource") is None and g.get("available_clocksource") is not None:
        v = g["available_clocksource"]
        ctx["available_clocksource"] = v.split() if isinstance(v, str) else v
    if "hypervisor" not in ctx and "hypervisor" in g:
        ctx["hypervisor"] = g["hypervisor"]
    fl = _dict(ctx.get("cpu_flags"))
    if not (fl and isinstance(fl.get("invtsc_cpuid"), bool)) and isinstance(g.get("invtsc"), bool):
        ctx["cpu_flags"] = dict(fl or {}, invtsc_cpuid=g["invtsc"])
    if "kvm_features" not in ctx:
        if isinstance(g.get("kvm_features_valid"), bool):
            v = g.get("kvm_features")
            ctx["kvm_features"] = {"eax": v} if g["kvm_features_valid"] and isinstance(v, int) and \
                not isinstance(v, bool) else None
        elif isinstance(g.get("kvmclock_advertised"), bool):
            # The oldest shape kept the two bits alone: CPUID 0x40000001 eax rebuilt from them
            # (bit 0 kvm-clock, bit 24 the stable bit; an unknown stable bit reads as clear).
            eax = (1 if g["kvmclock_advertised"] else 0) | (1 << 24 if g.get("kvm_stable_bit_advertised") else 0)
            ctx["kvm_features"] = {"eax": eax} if eax else None
    for k in GUEST_FACTS:
        g.pop(k, None)


def _trace(kt):
    """The kvm_trace object older launchers spliced into the guest result, as
    a clockbench-kvm-trace/1 document of what it kept (no counts with and
    without the stable bit, no ring-buffer figures); None if not an object."""
    if not isinstance(kt, dict):
        return None
    text = kt.get("subject")
    # Before the subject field every trace was of the guest's own QEMU.
    subject = "guest" if not isinstance(text, str) or text.startswith("the guest's QEMU") else "observer"
    out = {"available": kt.get("available") is not False, "subject": subject, "subject_text": text}
    if not out["available"]:
        out["reason"] = str(kt.get("reason") or "trace unavailable")
        return out
    mc, sb = _dict(kt.get("master_clock")) or {}, _dict(kt.get("stable_bit")) or {}
    out["life"] = {"master_clock": mc,
                   "stable_bit": {"all": sb.get("all") if isinstance(sb.get("all"), bool) else None,
                                  "per_vcpu": _dict(sb.get("per_vcpu")) or {}},
                   "pvclock_updates": kt.get("pvclock_updates"), "tsc_offset_writes": kt.get("tsc_offset_writes")}
    out["measuring"] = _dict(kt.get("measuring"))
    return out


def guest(doc, name_fields):
    """A clockbench-guest/1 document (a dict whose schema was checked) in
    today's shape, changed in place, and the KVM trace it held inside (a
    document load.parse_trace reads with counted=False; None when it held
    none).  name_fields: the file name's fields (runfolder.classify; {} when
    the name is not the contract's).  Its bench is upgraded too."""
    b = _dict(doc.get("bench"))
    la = _dict(doc.get("launcher"))
    if la is None:
        la = doc["launcher"] = {}
    g = _dict(doc.get("guest"))
    if g is None:
        g = doc["guest"] = {}
    if b is not None:
        bench(b)
        if _dict(b.get("context")) is not None:
            _facts_into_context(g, b["context"])
    if "host_clocksource" in la:
        host = _dict(la.get("host")) or {}
        if not host.get("clocksource"):
            host["clocksource"] = la["host_clocksource"]
        la["host"] = host
        del la["host_clocksource"]
    v = la.get("vcpus")
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        ctx = _dict(b.get("context")) if b is not None else None
        n = name_fields.get("vcpus") or (ctx or {}).get("cpus_online")
        if n is not None:
            la["vcpus"] = n
    if not isinstance(la.get("backend"), str) and name_fields.get("backend"):
        la["backend"] = name_fields["backend"]
    inner = doc.pop("kvm_trace", None)
    if inner is None:
        return doc, None
    t = _trace(inner)
    return doc, (t if t is not None else inner)
