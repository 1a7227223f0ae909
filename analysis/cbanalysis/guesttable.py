"""guesttable.py: the guest launcher's readable table of one guest result (a loaded Measurement)."""
from cbcontract.load import trace_facts
from cbcontract.util import cut, is_num, printable
from .fmt import fquant


def fmt(v, nd=1):
    return "-" if v is None else ("%.*f" % (nd, v) if isinstance(v, float) else str(v))


def settle_text(w):
    """/init's clocksource wait (docs/guest.md), in one line; a wait that
    ran out is said loudly (the engine then measured an unsettled kernel)."""
    end = cut(w.get("end"), 20)
    ms = "%d ms" % w["ms"] if is_num(w.get("ms")) else "? ms"
    moved = "%s -> %s" % (cut(w.get("from"), 31), cut(w.get("to"), 31))
    if end == "timeout":
        return "clocksource wait: TIMED OUT after %s (%s): the kernel had not settled when the engine began" % (ms, moved)
    return "clocksource wait: %s after %s (%s)" % (end, ms, moved)


def text(m, path=None):
    """Launcher, guest and host-trace facts, then one row per clock x
    method x threads (raw figures beside the overhead-subtracted median
    where the engine wrote them)."""
    la, lg = m.launcher, m.guest_log
    host = la.get("host") if isinstance(la.get("host"), dict) else {}
    out = [path] if path else []
    out.append("guest: %s vCPU, %s, cpu %s, accel %s%s; host clocksource %s; boot %s ms to init, %s ms to result" % (
        m.vcpus, la.get("machine"), la.get("cpu"), m.accel,
        " (EMULATED: TCG figures, not a KVM guest's)" if m.emulated else "",
        host.get("clocksource"), fmt(la.get("boot_ms")), fmt(la.get("result_ms"))))
    avail = m.available_clocksources
    out.append("guest clocksource %s%s (available: %s); kvm stable bit %s; sched_clock stable %s; TSC marked unstable %s; "
               "invtsc %s" % (fmt(m.clocksource_after), " (TCG's: the emulator's, not evidence about the host)" if m.emulated
                              else "", " ".join(avail) if avail else "-",
                              fmt(m.stable_bit_advertised), fmt(lg.get("sched_clock_marked_stable")),
                              fmt(lg.get("tsc_marked_unstable")), fmt(m.invtsc)))
    w = m.guest.get("clocksource_settle")
    if isinstance(w, dict):
        out.append(settle_text(w))
    f = trace_facts(m, observer=True)
    # The observer VM's facts on a line of their own, named as its: KVM's
    # state on this host, not the TCG guest's.
    who = "the observer VM's trace (KVM on this host, not this guest)" if f.source == "observer" else "host trace"
    if f.reason:
        out.append("host trace: %s" % f.reason)
    else:
        out.append(who + ": master clock %s (hostclock %s); stable bit %s%s" % (
            {True: "on", False: "off", None: "-"}[f.master_clock], fmt(f.hostclock),
            {True: "set", False: "clear", None: "-"}[f.stable_bit],
            " (%d updates with, %d without)" % (f.with_, f.without)))
    pin = la.get("pinning") if isinstance(la.get("pinning"), dict) else {}
    out.append("vCPUs %s: %s" % (pin.get("mode"), ", ".join(
        "%s->%s" % (v.get("vcpu"), "float" if v.get("host_cpu") is None else v.get("host_cpu"))
        for v in (pin.get("vcpus") if isinstance(pin.get("vcpus"), list) else []) if isinstance(v, dict))))
    raw = any(r.raw for r in m.rows)
    hdr = ("clock", "method", "threads", "path", "median ns", "p99 ns") + (("raw median",) if raw else ()) + ("calls/s total",)
    cells = [hdr]
    for r in m.rows:
        c = (fmt(r.clock), r.method, fmt(r.threads), fmt(r.path), fquant(r, "median", 1), fquant(r, "p99", 1))
        if raw:
            c += (fmt((r.raw or {}).get("median")),)
        cells.append(c + ("-" if r.cps_total is None else "%.0f" % r.cps_total,))
    w = [max(len(c[i]) for c in cells) for i in range(len(hdr))]
    for c in cells:
        out.append("  ".join(c[i].ljust(w[i]) if i in (0, 1, 3) else c[i].rjust(w[i]) for i in range(len(hdr))).rstrip())
    for w in m.workloads:
        lat = "" if w.latency_us is None else "; latency median %s us, p99 %s us" % (
            fmt(w.latency("median")), fmt(w.latency("p99")))
        out.append("workload %s: %s %s on CPUs %s%s" % (w.workload, fmt(w.rate, 3), w.rate_unit,
                                                        ",".join(str(c) for c in w.cpus), lat))
    t = m.tsc_rate
    if t:
        rtc = t["rtc"]
        out.append("TSC rate over %s s: RTC %s; CLOCK_MONOTONIC %s ppm; NTP correction %s ppm" % (
            fmt(t["seconds"]),
            "%s ppm from %s edges" % (fmt(rtc["ppm"], 3), rtc["edges"]) if rtc["available"] else "none (%s)" % rtc["reason"],
            fmt(t["monotonic"]["ppm"], 3), fmt(t["adjtimex"]["freq_ppm"], 3)))
    if not m.rows and not m.workloads and not t:
        out.append("(no result rows)")
    if m.emulated:
        out.append("EMULATED: accel tcg; timings, clocksource and path are QEMU's emulator's, not a hypervisor's: "
                   "KVM's facts come from the observer VM's trace.")
    return "\n".join(printable(x) for x in out)  # a result's strings: controls escaped, each line one
