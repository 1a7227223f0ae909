"""prom.py: a node_exporter textfile-collector file from one run's results.

The metrics of a run; their format and writer are cbcontract.textfile's.
Names sit beside node_time_clocksource_*: node_clockbench_*, base units
(seconds, hertz), info metrics end in _info.  Emulated (TCG) guests are left
out: their timings are not a hypervisor's.
"""
import datetime

from cbcontract import names, textfile
from cbcontract.load import trace_facts

HELP = {
    "node_clockbench_clock_read_median_seconds": "Seconds per clock read measured by clockbench: median over timed batches.",
    "node_clockbench_clock_read_p99_seconds": "Seconds per clock read measured by clockbench: 99th percentile over timed batches.",
    "node_clockbench_kernel_clock_read_seconds": "Seconds the kernel spends per clocksource read: the syscall method's median less the null syscall's (getppid) timed beside it.",
    "node_clockbench_clock_read_user_space": "1 if the clock read was answered in user space (vDSO), 0 if it made a syscall (seccomp probe).",
    "node_clockbench_guest_stable_bit": "1 if the guest's pvclock had PVCLOCK_TSC_STABLE_BIT (host trace, else the guest's kernel log).",
    "node_clockbench_guest_master_clock": "1 if KVM's master clock was on for the guest at the end of the run (host trace).",
    "node_clockbench_guest_tsc_offset_writes": "kvm_write_tsc_offset events for the guest over its QEMU's life, boot included (host trace).",
    "node_clockbench_guest_pvclock_updates": "kvm_pvclock_update events for the guest over its QEMU's life, boot included (host trace).",
    "node_clockbench_guest_measuring_tsc_offset_writes": "kvm_write_tsc_offset events for the guest while it measured (host trace, launcher's markers).",
    "node_clockbench_guest_measuring_pvclock_updates": "kvm_pvclock_update events for the guest while it measured (host trace, launcher's markers).",
    "node_clockbench_guest_measuring_seconds": "Length of the guest's measuring window in the host trace.",
    "node_clockbench_clock_warps": "Reads lower than one another thread had already published, during the warp check.",
    "node_clockbench_tsc_warps": "TSC reads outside their own round trip in the TSC check.",
    "node_clockbench_tsc_max_offset_seconds": "Largest absolute TSC offset from the reference CPU in the TSC check.",
    "node_clockbench_tsc_frequency_hertz": "TSC frequency calibrated against CLOCK_MONOTONIC_RAW.",
    "node_clockbench_workload_rate": "A clockbench workload's headline rate (higher is better), in the unit its label names: %s." % ", ".join("%s %s" % (w.name, w.unit) for w in names.WORKLOADS),
    "node_clockbench_workload_latency_median_seconds": "A clockbench workload's latency, median: tcp-rr round trip, timer wake-up latency.",
    "node_clockbench_workload_latency_p99_seconds": "A clockbench workload's latency, 99th percentile: tcp-rr round trip, timer wake-up latency.",
    "node_clockbench_tsc_rate_ppm": "TSC rate against a reference clock (rtc, monotonic, monotonic_raw), ppm from the kernel's TSC frequency (else the engine's calibration).",
    "node_clockbench_ntp_frequency_ppm": "The kernel's NTP frequency correction (adjtimex), ppm, during clockbench's TSC rate check.",
    "node_clockbench_run_end_timestamp_seconds": "End of the clockbench measurement, Unix time.",
    "node_clockbench_last_run_timestamp_seconds": "End of the newest clockbench measurement in the file, Unix time.",
    "node_clockbench_measurement_info": "Facts of a clockbench measurement (kernel, CPU, clocksource, guest facts).",
    "node_clockbench_tsc_check_info": "Verdicts of clockbench's TSC check and of the kernel.",
}


def epoch(iso):
    try:
        return datetime.datetime.strptime(iso, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc).timestamp()
    except (TypeError, ValueError):
        return None


def base_labels(m):
    return [("where", "guest" if m.kind == "guest" else "host"), ("clocksource", m.host_cs),
            ("vcpus", str(m.vcpus) if m.kind == "guest" else None),
            ("backend", m.backend if m.backend not in (None, "qemu") else None)]


def tsc_rate(f, bl, tr):
    """The TSC rate check's figures (checks.tsc_rate), where it was run."""
    if tr is None:
        return
    for ref, o in (("rtc", tr["rtc"]), ("monotonic", tr["monotonic"]), ("monotonic_raw", tr["monotonic_raw"])):
        f.add("node_clockbench_tsc_rate_ppm", bl + [("reference", ref)], o.get("ppm"))
    if tr["adjtimex"].get("available"):
        f.add("node_clockbench_ntp_frequency_ppm", bl, tr["adjtimex"].get("freq_ppm"))


def render(ms, all_clocks=False):
    f = textfile.Families(HELP)
    comments = []
    last = None
    for m in ms:
        if m.emulated:
            comments.append("left out %s: emulated (TCG), not a hypervisor's cost" % m.path)
            continue
        bl = base_labels(m)
        tsc_rate(f, bl, m.tsc_rate)
        if m.kind == "tsc-rate":
            continue  # a TSC rate check alone: nothing else measured
        for w in m.workloads:
            wl = bl + [("workload", w.workload)]
            f.add("node_clockbench_workload_rate", wl + [("unit", w.rate_unit)], w.rate)
            for q in ("median", "p99"):
                v = w.latency(q)
                f.add("node_clockbench_workload_latency_%s_seconds" % q, wl, None if v is None else v / 1e6)
        c = m.context
        for r in m.rows:
            if not all_clocks and r.clock not in (None, "monotonic"):
                continue
            rl = bl + [("clock", r.clock or "none"), ("method", r.method), ("threads", str(r.threads))]
            for key in ("median", "p99"):
                v = r.ns.get(key)
                f.add("node_clockbench_clock_read_%s_seconds" % key, rl, None if v is None else v / 1e9)
        for r in m.rows:
            if r.method == "syscall" and r.kernel_read is not None and (all_clocks or r.clock == "monotonic"):
                f.add("node_clockbench_kernel_clock_read_seconds",
                      bl + [("clock", r.clock), ("threads", str(r.threads))], r.kernel_read / 1e9)
        for r in sorted(m.rows, key=lambda r: r.threads):
            if r.clock is not None and r.path in ("user", "syscall") and (all_clocks or r.clock == "monotonic"):
                f.add("node_clockbench_clock_read_user_space", bl + [("clock", r.clock), ("method", r.method)],
                      r.path == "user")
        if m.kind == "guest":
            tf = trace_facts(m)
            if tf.stable_bit is None:
                v = m.guest_log.get("sched_clock_marked_stable")
                if isinstance(v, bool) and m.hypervisor == "KVMKVMKVM":
                    f.add("node_clockbench_guest_stable_bit", bl + [("source", "guest_log")], v)
            else:
                f.add("node_clockbench_guest_stable_bit", bl + [("source", "trace")], tf.stable_bit)
            f.add("node_clockbench_guest_master_clock", bl, tf.master_clock)
            t = m.trace
            if t is not None and t.available and t.subject == "guest" and t.complete is not False:
                for k in ("tsc_offset_writes", "pvclock_updates"):
                    if isinstance(t.life.get(k), int) and not isinstance(t.life.get(k), bool):
                        f.add("node_clockbench_guest_" + k, bl, t.life[k])
                w = t.measuring or {}
                if w.get("available") is True:
                    for k in ("tsc_offset_writes", "pvclock_updates"):
                        if isinstance(w.get(k), int) and not isinstance(w.get(k), bool):
                            f.add("node_clockbench_guest_measuring_" + k, bl, w[k])
                    if isinstance(w.get("seconds"), (int, float)) and not isinstance(w.get("seconds"), bool):
                        f.add("node_clockbench_guest_measuring_seconds", bl, w["seconds"])
        checks = m.doc.get("checks") if isinstance(m.doc.get("checks"), dict) else {}
        for w in checks.get("warps") if isinstance(checks.get("warps"), list) else []:
            if isinstance(w, dict) and isinstance(w.get("warps"), int) and w.get("clock"):
                f.add("node_clockbench_clock_warps", bl + [("clock", w["clock"])], w["warps"])
        t = checks.get("tsc")
        mhz = c.get("tsc_mhz") if isinstance(c.get("tsc_mhz"), (int, float)) else None
        if isinstance(t, dict):
            if isinstance(t.get("total_warps"), int):
                f.add("node_clockbench_tsc_warps", bl, t["total_warps"])
            off = t.get("max_abs_offset_cycles")
            if isinstance(off, (int, float)) and mhz:
                f.add("node_clockbench_tsc_max_offset_seconds", bl, off / (mhz * 1e6))
            f.add("node_clockbench_tsc_check_info", bl + [("verdict", t.get("verdict") or "n/a"),
                                                          ("kernel_verdict", t.get("kernel_verdict") or "n/a")], 1)
        if mhz:
            f.add("node_clockbench_tsc_frequency_hertz", bl, mhz * 1e6)
        end = epoch(c.get("end"))
        f.add("node_clockbench_run_end_timestamp_seconds", bl, end)
        if end is not None:
            last = end if last is None else max(last, end)
        info = bl + [("run", m.run), ("kernel", m.kernel or "n/a"), ("cpu_model", c.get("cpu_model") or "n/a"),
                     ("hypervisor", m.hypervisor or "none"), ("version", c.get("clockbench_version") or "n/a"),
                     ("measured_clocksource", c.get("clocksource") or "n/a")]
        if m.kind == "guest":
            info += [("accel", m.accel), ("qemu_version", m.launcher.get("qemu_version") or "n/a"),
                     ("guest_clocksource", m.clocksource_after or "n/a")]
        f.add("node_clockbench_measurement_info", info, 1)
    f.add("node_clockbench_last_run_timestamp_seconds", [], last)
    return f.text(comments)


def write(ms, path, all_clocks=False):
    textfile.write_file(path, render(ms, all_clocks))
