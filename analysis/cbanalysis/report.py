"""report.py: report.md for one or more run folders: headline tables, plots, capacity, context, details.

A run folder of rounds (round-<N>/) gives a measurement per state and
round (Measurement.round); each table has one row per state, its figures
the median over rounds and each ratio to tsc the median of the rounds'
paired ratios with its interval (interval.py): "x1.16 [0.82, 1.41]", "no
difference measured [0.95, 1.12]" where the interval holds 1, "[n/a (1
round)]" with one round.  The tsc row itself shows 1.00.
"""
import os
import stat

from . import capacity, interval, plots
from cbcontract import load, runfolder
from cbcontract.load import QUANTS, WORKLOADS, trace_facts
from cbcontract.runfolder import write_atomic
from cbcontract.util import cut, obj, printable
from .fmt import fnum, fquant, md_table

EMU_MARK = "†"
EMU_NOTE = ("%s EMULATED: QEMU's TCG emulator is under these rows (a guest under TCG, or an emulated "
            "hypervisor and its guests). Their figures are an emulator's, not a hypervisor's cost: compare the paths "
            "and facts, never the nanoseconds. They are left out of the capacity planning." % EMU_MARK)


# The measurement on a tsc host that m's ratios are taken against: baseline(m, ms).
baseline = interval.tsc_of


def cs_order(cs):
    return (cs != "tsc", cs)


def sort_key(m):
    return (m.run, m.kind != "host", m.vcpus or 0, m.emulated, m.backend or "", cs_order(m.host_cs))


def is_base(m, ms):
    return baseline(m, ms) is m


def over(m, ms, fig):
    """The Ratio of fig over m's rounds against each round's tsc state."""
    return interval.across(m, ms, lambda x: baseline(x, ms), fig)


def ratio_cell(m, ms, fig):
    """A table's ratio to tsc: '1.00' on the tsc row itself, else the
    median of the rounds' ratios with its interval (Ratio.text), 'n/a'
    where no round has both figures."""
    q = over(m, ms, fig)
    if not q.n:
        return "n/a"
    if is_base(m, ms):
        return "%.2f" % q.median
    return q.text()


def rounds_of(m, ms):
    return len(interval.over_rounds(m, ms))


def figure_cell(m, ms, r, q="median"):
    """Row r's quantile q (of m) for a table: as fquant with one round;
    over rounds, the median of the rounds' figures of the same row."""
    if rounds_of(m, ms) == 1:
        return fquant(r, q)
    v = interval.value(m, ms, interval.row_fig(r, q))
    return fquant(r, q) if v is None else "%.2f" % v


def rounds_note(ms):
    """The one sentence on what the intervals are, for the round counts of ms."""
    return interval.method_note(sorted({rounds_of(m, ms) for m in interval.firsts(ms)}))


def tsc_check(m):
    t = obj(m.doc, "checks").get("tsc")
    if not isinstance(t, dict):
        return "n/a"
    return "%s; kernel: %s" % (t.get("verdict", "n/a"), t.get("kernel_verdict", "n/a"))


def master_clock_cell(m):
    f = trace_facts(m)
    if f.master_clock is None:
        cell = "n/a (%s)" % f.reason if f.reason else "n/a"
        probe = trace_facts(m, observer=True).master_clock
        if probe is not None:
            cell += "; the probe VM's: %s" % ("on" if probe else "off")
        return cell
    s = "on" if f.master_clock else "off"
    if f.hostclock:
        s += " (hostclock %s)" % f.hostclock
    if f.transitions:
        s += ", %d transition%s" % (f.transitions, "" if f.transitions == 1 else "s")
    return s


def stable_bit_cell(m):
    """From the host's trace where there is one (its counts of pvclock
    updates with and without the bit), else from the guest's log."""
    f = trace_facts(m)
    if f.stable_bit is not None:
        counts = "trace: %d with, %d without" % (f.with_, f.without)
        if f.stable_bit:
            return "set (%s)" % counts
        return "clear (%s; vCPU %s)" % (counts, ",".join(f.clear_vcpus))
    if m.hypervisor not in (None, "KVMKVMKVM") or m.kvmclock_advertised is False:
        return "n/a (no kvm-clock)"
    v = m.guest_log.get("sched_clock_marked_stable")
    if v is True:
        return "set (guest log)"
    if v is False:
        return "not set (guest log)"
    return "n/a"


def accel_cell(m):
    a = m.accel
    if m.host_emulated and a != "tcg":
        return "%s on an emulated host (EMULATED)%s" % (a, EMU_MARK)
    return "%s (EMULATED)%s" % (a, EMU_MARK) if m.emulated else a


def machine_cell(m):
    """What the host is: bare metal, a guest itself, or emulated."""
    hv = m.hypervisor
    if m.emulated:
        return "TCG (EMULATED)%s" % EMU_MARK
    if not hv:
        return "bare metal"
    return {"KVMKVMKVM": "KVM guest"}.get(hv, "guest of %s" % hv)


def headline_tables(ms, multi):
    """The host and guest tables for CLOCK_MONOTONIC through the C library."""
    out = []
    hosts = [m for m in ms if m.kind == "host"]
    guests = [m for m in ms if m.kind == "guest"]
    pre = ["run"] if multi else []
    if hosts:
        rows = []
        for m in interval.firsts(hosts):
            for r in m.headline():
                rows.append(([m.run] if multi else []) + [
                    m.host_cs, r.threads, figure_cell(m, ms, r), figure_cell(m, ms, r, "p99"),
                    ratio_cell(m, ms, interval.row_fig(r)), ratio_cell(m, ms, interval.row_fig(r, "p99")), r.path or "n/a",
                    tsc_check(m), machine_cell(m)])
        hdr = pre + ["host clocksource", "threads", "median ns", "p99 ns", "x tsc (median)", "x tsc (p99)",
                     "path", "TSC check", "machine"]
        out += ["### Host", "", md_table(hdr, rows, "l" * len(pre) + "lrrrrrlll"), ""]
    if guests:
        rows = []
        for m in interval.firsts(guests):
            gcs = m.clocksource_after or "n/a"
            for r in m.headline():
                rows.append(([m.run] if multi else []) + [
                    m.host_cs, m.vcpus if m.backend in (None, "qemu") else "%d (%s)" % (m.vcpus, m.backend),
                    r.threads, figure_cell(m, ms, r), figure_cell(m, ms, r, "p99"),
                    ratio_cell(m, ms, interval.row_fig(r)), ratio_cell(m, ms, interval.row_fig(r, "p99")),
                    r.path or "n/a", gcs, master_clock_cell(m), stable_bit_cell(m), accel_cell(m)])
        hdr = pre + ["host clocksource", "vCPUs", "threads", "median ns", "p99 ns", "x tsc (median)",
                     "x tsc (p99)", "guest path", "guest clocksource", "master clock", "stable bit", "accel"]
        out += ["### Guests", "", md_table(hdr, rows, "l" * len(pre) + "lrrrrrrlllll"), ""]

    if any(m.emulated for m in ms):
        out += [EMU_NOTE, ""]
    missing = [m for m in interval.firsts(ms) if not m.headline()]
    for m in missing:
        out += ["No CLOCK_MONOTONIC vdso row in %s (see the detailed section)." % os.path.basename(m.path), ""]
    return out


def kernel_read_cell(r):
    """A syscall row's kernel_read_ns for a table, or why it is not known."""
    if r.kernel_read is not None:
        return "%.2f" % r.kernel_read
    if r.kernel_read_negative:
        return "n/a (below the null call)"
    if r.null_median is None:
        return "n/a (null not measured)"
    return "n/a (median below loop overhead)"


def kernel_read_section(ms, multi):
    """The kernel's own clocksource read: the CLOCK_MONOTONIC syscall rows
    less the null rows, per file that measured null."""
    out = ["## The kernel's own clock read, ns", "",
           "What `clock_gettime` costs inside the kernel beyond a null system call: the clocksource read that "
           "every in-kernel timestamp pays, with the timekeeping arithmetic and copy-out around it. It is the "
           "`syscall` method's median (`clock_gettime(CLOCK_MONOTONIC)` as a system call) less the median of `null` "
           "batches (`getppid`, called the same way, no clock) timed between its own in the same threads (older "
           "files: the `null` row's at the same thread count); a subtraction that goes "
           "negative is `n/a`, never 0. `x tsc` divides by the same row measured with the host on `tsc`.", ""]
    pre = ["run"] if multi else []
    rows, without = [], []
    for m in interval.firsts(ms):
        sys_rows = sorted((r for r in m.rows if r.clock == "monotonic" and r.method == "syscall"),
                          key=lambda r: r.threads)
        if not sys_rows:
            continue
        if not any(r.method == "null" for r in m.rows):
            without.append(os.path.basename(m.path))
            continue
        for r in sys_rows:
            kr = interval.row_fig(r, "kernel_read")
            if rounds_of(m, ms) > 1:
                nmv, krv = interval.value(m, ms, interval.row_fig(r, "null_median")), interval.value(m, ms, kr)
            else:
                nmv, krv = r.null_median, r.kernel_read
            rows.append(([m.run] if multi else []) + [
                "%s%s" % (m.where, EMU_MARK if m.emulated else ""), m.host_cs, r.threads, figure_cell(m, ms, r),
                fnum(nmv), kernel_read_cell(r) if krv is None else "%.2f" % krv, ratio_cell(m, ms, kr)])
    if rows:
        hdr = pre + ["where", "host clocksource", "threads", "syscall median ns", "null median ns",
                     "kernel read ns", "x tsc"]
        out += [md_table(hdr, rows, "l" * len(pre) + "llrrrrr"), ""]
    if without:
        out += ["No `null` rows in %s: the kernel's read is not known there (`--methods` with `null`)."
                % ", ".join(without), ""]
    return out if rows or without else []


AFTER_MARK = "*"


def fnum3(v, unit=""):
    """A figure with three significant digits at least: 1.60, 13.0, 129, 50000."""
    if v is None:
        return "n/a"
    txt = "%.0f" % v if abs(v) >= 100 else "%.1f" % v if abs(v) >= 10 else "%.2f" % v
    return txt + (" " + unit if unit else "")


def workloads_section(ms, multi):
    """Each workload's figure per state (host and guest, each host
    clocksource) and its ratio to the same workload in the tsc state."""
    sel = [m for m in ms if m.workloads]
    if not sel:
        return []
    out = ["## Workloads: real work per clocksource", "",
           "Work the kernel does with the clocksource on its hot path: `tcp-stream` (a loopback TCP stream, "
           "Gbit/s), `tcp-rr` (one-byte request and response over loopback, transactions/s and round-trip "
           "latency), `timer` (threads sleeping 50 us intervals, wake-ups/s and wake-up latency). The rate is "
           "higher-is-better; `x tsc` divides the rate, and the latency, by the same workload (host, or guest "
           "of the same vCPUs) measured with the host on `tsc`: a rate below 1 is work lost, a latency above 1 "
           "is slower, each with its interval over rounds; no difference measured where the interval holds 1. "
           "Latency in microseconds.", ""]
    pre = ["run"] if multi else []
    rows, after = [], False
    for name in WORKLOADS:
        for m in interval.firsts(sel):
            w = m.workload(name)
            if w is None:
                continue
            mark = (EMU_MARK if m.emulated else "") + (AFTER_MARK if w.after_change else "")
            after = after or any(x.workload(name) and x.workload(name).after_change for x in interval.over_rounds(m, ms))

            def wfig(q=None, name=name):
                if q is None:
                    return lambda x: x.workload(name).rate if x.workload(name) else None
                return lambda x: x.workload(name).latency(q) if x.workload(name) else None
            rows.append(([m.run] if multi else []) + [
                name, m.where + mark, m.host_cs, fnum3(interval.value(m, ms, wfig()), w.rate_unit),
                ratio_cell(m, ms, wfig()), fnum3(interval.value(m, ms, wfig("median"))),
                fnum3(interval.value(m, ms, wfig("p99"))), ratio_cell(m, ms, wfig("median")),
                "%d on CPU %s" % (w.threads, ",".join(str(c) for c in w.cpus)),
                "%s: %s" % (os.path.basename(m.path), name)])
    hdr = pre + ["workload", "where", "host clocksource", "rate", "x tsc (rate)", "latency median us",
                 "latency p99 us", "x tsc (median latency)", "threads", "from"]
    out += [md_table(hdr, rows, "l" * len(pre) + "lllrrrrrll"), ""]
    if after:
        out += ["%s measured after the kernel's clocksource changed during the run: not the state it is filed "
                "under." % AFTER_MARK, ""]
    if any(m.emulated for m in sel):
        out += [EMU_NOTE, ""]
    return out


def fppm(v):
    return "n/a" if v is None else "%+.3f ppm" % v


def rtc_cell(rtc):
    if not rtc.get("available"):
        return "no RTC: %s" % rtc.get("reason")
    jit = rtc.get("jitter_us")
    return "%s (%.0f Hz over %d edges%s)" % (fppm(rtc.get("ppm")), rtc["tsc_hz"], rtc["edges"],
                                              "" if jit is None else ", jitter %.1f us" % jit)


def ntp_cells(adj):
    if not adj.get("available"):
        return ["n/a (adjtimex unavailable)", "n/a"]
    sync = adj.get("synchronized")
    return [fppm(adj.get("freq_ppm")), "n/a" if sync is None else ("synchronized" if sync else "not synchronized")]


def tsc_rate_section(ms, multi):
    """--check tsc-rate, wherever it was run: the TSC's rate against the
    RTC, CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW, and NTP's correction."""
    sel = [m for m in ms if m.tsc_rate is not None]
    if not sel:
        return []
    out = ["## The TSC's rate", "",
           "`--check tsc-rate`: the TSC counted against the RTC's update interrupts (one edge a second, an "
           "independent clock), against `CLOCK_MONOTONIC` (what NTP has made of the clocksource) and "
           "`CLOCK_MONOTONIC_RAW`. Each figure is the TSC frequency it implies, in ppm from the reference: the "
           "kernel's TSC frequency where it is known, else the engine's own calibration. NTP's correction is "
           "the kernel's frequency offset (`adjtimex`).", ""]
    pre = ["run"] if multi else []
    rows = []
    for m in sel:
        tr = m.tsc_rate
        ref = ("kernel %.0f kHz (%s)" % (tr["kernel_tsc_khz"], tr.get("kernel_tsc_khz_source"))
               if tr["reference"] == "kernel" else "engine %.1f kHz (the kernel's not known)" % tr["engine_tsc_khz"])
        several = rounds_of(m, ms) > 1 or interval.round_of(m) > 1
        rows.append(([m.run] if multi else []) + [
            m.where + (EMU_MARK if m.emulated else "") + (", round %d" % interval.round_of(m) if several else ""),
            m.host_cs, "%g" % tr["seconds"], ref, rtc_cell(tr["rtc"]),
            fppm(tr["monotonic"]["ppm"]), fppm(tr["monotonic_raw"]["ppm"])] + ntp_cells(tr["adjtimex"]) + [
            os.path.basename(m.path)])
    hdr = pre + ["where", "clocksource", "seconds", "reference", "RTC", "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW",
                 "NTP frequency correction", "NTP", "from"]
    out += [md_table(hdr, rows), ""]
    if any(m.emulated for m in sel):
        out += [EMU_NOTE, ""]
    return out


def findings(ms):
    """A few sentences: each non-tsc state against its tsc baseline."""
    out = []
    for m in interval.firsts(ms):
        b = baseline(m, ms)
        rows = m.headline()
        if b is None or b is m or not rows:
            continue
        r = rows[0]
        br = b.row(r.clock, r.method, r.threads)
        if not br or r.median is None or br.median is None:
            continue  # a median below the loop overhead: the table says so
        what = "the host" if m.kind == "host" else "a %s guest" % m.where.replace("guest ", "")
        fig = interval.row_fig(r)
        s = "- %s%s on %s: CLOCK_MONOTONIC costs %.2f ns against %.2f ns on tsc (%s) at %d thread%s; the read " \
            "is answered %s." % ("[EMULATED] " if m.emulated else "", what, m.host_cs, interval.value(m, ms, fig),
                                 interval.value(b, ms, fig), over(m, ms, fig).text(), r.threads,
                                 "" if r.threads == 1 else "s",
                                 {"user": "in user space (vDSO)", "syscall": "by a syscall"}.get(r.path, "by path %s" % r.path))
        out.append(s)
    return out + [""] if out else []


def mitigation_text(mit):
    """A short line from context.mitigations: each entry not 'Not affected',
    its first clause, 'Mitigation: ' left out."""
    if mit is None:
        return "not recorded"
    parts = []
    for k in sorted(mit):
        v = mit[k].strip()
        if v == "Not affected":
            continue
        v = v[len("Mitigation: "):] if v.startswith("Mitigation: ") else v
        parts.append("%s: %s" % (k, v.split(";")[0].strip()))
    return ", ".join(parts) or "none (every entry Not affected)"


def mitigation_lines(ms):
    """One line per run and machine kind: the speculation mitigations, which
    set what a syscall (a fallback clock read) costs."""
    out = []
    runs = sorted({m.run for m in ms})
    for run in runs:
        for kind in ("host", "guest"):
            # Each text once, in the order of ms.
            texts = list(dict.fromkeys(mitigation_text(m.mitigations) for m in ms if m.run == run and m.kind == kind))
            if texts:
                out.append("- %s%s: %s" % (run + ", " if len(runs) > 1 else "", kind, " | ".join(texts)))
    if not out:
        return []
    return ["Speculation mitigations (`/sys/devices/system/cpu/vulnerabilities/`; they set what a syscall costs):", ""] + out + [""]


def ctx_facts(m):
    c = m.context
    fl = c.get("cpu_flags") if isinstance(c.get("cpu_flags"), dict) else {}
    cmd = c.get("kernel_cmdline") if isinstance(c.get("kernel_cmdline"), str) else ""
    clockopts = [w for w in cmd.split() if w.startswith(("tsc=", "clocksource=", "notsc", "no-kvmclock"))]
    t = obj(m.doc, "checks").get("tsc")
    warps = obj(m.doc, "checks").get("warps")
    nw = sum(w.get("warps", 0) for w in warps if isinstance(w, dict) and isinstance(w.get("warps"), int)) \
        if isinstance(warps, list) else None
    avail = m.available_clocksources
    sb = m.stable_bit_advertised
    facts = [
        ("hostname", c.get("hostname")),
        ("kernel", m.kernel),
        ("clock options on the kernel command line", " ".join(clockopts) or "none"),
        ("CPU", c.get("cpu_model")),
        ("TSC flags", ", ".join(k for k in ("constant_tsc", "nonstop_tsc", "tsc_known_freq", "invtsc_cpuid")
                                if fl.get(k)) or "none"),
        ("hypervisor (CPUID)", m.hypervisor or "none (bare metal)"),
        ("stable bit advertised (CPUID 0x40000001 bit 24)", "n/a" if sb is None else sb),
        ("clocksource (available)", "%s (%s)" % (c.get("clocksource"), " ".join(avail) if avail is not None else "n/a")),
        ("TSC MHz", c.get("tsc_mhz")),
        ("CPUs online / allowed", "%s / %s" % (m.cpus_online, c.get("cpus_allowed"))),
        ("TSC check", "n/a" if not isinstance(t, dict) else "%s (%s)" % (t.get("verdict"), t.get("working", ""))),
        ("clock warps seen", "n/a" if nw is None else nw),
        ("clockbench version", c.get("clockbench_version")),
        ("run", "%s .. %s" % (c.get("start"), c.get("end"))),
    ]
    return facts


def guest_facts(m):
    la, lg = m.launcher, m.guest_log
    pin = la.get("pinning") if isinstance(la.get("pinning"), dict) else {}
    t = m.trace
    life = t.life if t is not None and t.available else {}
    host = obj(la, "host")
    facts = [
        ("host kernel / clocksource at launch", "%s / %s" % (host.get("kernel", "n/a"), host.get("clocksource", "n/a"))),
        ("accel", accel_cell(m)),
        ("accel note", la.get("accel_note")),
        ("QEMU", la.get("qemu_version")),
        ("machine / cpu model given", "%s / %s" % (la.get("machine", "n/a"), la.get("cpu", "n/a"))),
        ("vCPUs (pinning)", "%s (%s)" % (m.vcpus, pin.get("mode", "n/a"))),
        ("boot to /init, ms", la.get("boot_ms")),
        ("guest kernel", m.kernel),
        ("guest clocksource (before the run)", "%s (%s)" % (m.clocksource_after, m.clocksource_before)),
        ("guest sees invtsc", m.invtsc),
        ("guest log: sched_clock marked stable", lg.get("sched_clock_marked_stable")),
        ("guest log: TSC marked unstable", lg.get("tsc_marked_unstable")),
        ("master clock (host trace)", master_clock_cell(m)),
        ("stable bit", stable_bit_cell(m)),
        ("TSC offset writes / pvclock updates (trace, QEMU's life)", "%s / %s" % (
            life.get("tsc_offset_writes", "n/a"), life.get("pvclock_updates", "n/a"))),
        ("the same while measuring (trace)", window_cell(t.measuring if t is not None and t.available else None)),
    ]
    return facts + [("guest " + k, v) for k, v in ctx_facts(m) if k in ("hypervisor (CPUID)", "stable bit advertised (CPUID 0x40000001 bit 24)", "TSC check", "clock warps seen")]


def window_cell(w):
    if not isinstance(w, dict):
        return "n/a"
    if not w.get("available"):
        return "n/a (%s)" % (w.get("reason") or "no window")
    return "%s / %s in %s s" % (w.get("tsc_offset_writes"), w.get("pvclock_updates"), w.get("seconds"))


def cell(v):
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return "yes" if v else "no"
    return v


def context_tables(ms, outdir):
    out = []
    for kind, title in (("host", "Hosts"), ("guest", "Guests")):
        sel = interval.firsts([m for m in ms if m.kind == kind])
        if not sel:
            continue
        hdr = ["fact"] + ["[%s](%s)" % (os.path.basename(m.path), os.path.relpath(m.path, outdir)) for m in sel]
        facts = [ctx_facts(m) if kind == "host" else guest_facts(m) for m in sel]
        rows = []
        for i, (k, _) in enumerate(facts[0]):
            rows.append([k] + [cell(f[i][1]) for f in facts])
        out += ["### %s" % title, "", md_table(hdr, rows), ""]
    return out


def detail_tables(ms, outdir):
    out = []
    for m in ms:
        title = "%s: %s" % (m.run, os.path.basename(m.path))
        if rounds_of(m, ms) > 1 or interval.round_of(m) > 1:
            title = "%s: round %d: %s" % (m.run, interval.round_of(m), os.path.basename(m.path))
        if m.emulated:
            title += " (EMULATED: %s)%s" % ("tcg" if m.accel == "tcg" or m.kind == "host" else "emulated host", EMU_MARK)
        rows = [[r.clock or "-", r.method, r.threads, r.path or "-"] + [fquant(r, q) for q in QUANTS] + [
                 "n/a" if r.cps_total is None else "%.0f" % r.cps_total] for r in m.rows]
        hdr = ["clock", "method", "threads", "path", "min", "median", "mean", "p99", "p99.9", "max", "calls/s total"]
        out += ["### %s" % title, "", "[%s](%s)" % (m.path, os.path.relpath(m.path, outdir)), ""]
        out += [md_table(hdr, rows, "llrl" + "r" * 7) if rows else "(no cost rows)", ""]
    return out


ONE_X = {"ns-vs-threads": "thread count", "ns-vs-vcpus": "vCPU count", "guest-ns-vs-threads": "thread count"}


def plot_section(ms, outdir, multi, want_plots, warn):
    out = ["## Plots", ""]
    if not want_plots:
        return out + ["Plots not drawn (--no-plots).", ""]
    if not plots.available():
        warn("plots skipped: %s not found (Debian: apt-get install gnuplot-nox)" % plots.GNUPLOT)
        return out + ["Plots skipped: gnuplot is not installed (Debian package `gnuplot-nox`).", ""]
    made = []
    for name, chart, missing in plots.charts(ms, multi, lambda m: baseline(m, ms)):
        if chart is None:
            out += [missing, ""]
            continue
        plots.plot(chart, os.path.join(outdir, name))
        made.append(name)
        links = "[SVG](%s.svg), [data](%s.dat)" % (name, name)
        xs = sorted({x for s in chart.series for x, _ in s.pts})
        if len(xs) == 1:
            links += "; one %s (%d) in these results: the figures as points, no line to draw" % (
                ONE_X.get(name, "x value"), xs[0])
        out += ["![%s](%s.png)" % (chart.title.replace("\n", " "), name), "", links, ""]
    if any(m.emulated for m in ms if m.kind == "guest") and {"ns-vs-vcpus", "guest-ns-vs-threads"} & set(made):
        out += ["Lines (dashed) and points marked [EMULATED: tcg] are QEMU TCG runs: an emulator's timings, not a "
                "hypervisor's; a plot of nothing else says so in its title.", ""]
    return out


def input_name(m, ms):
    """RUN/FILE, or RUN/round-N/FILE in a run of rounds."""
    if rounds_of(m, ms) > 1 or interval.round_of(m) > 1:
        return os.path.join(m.run, "round-%d" % interval.round_of(m), os.path.basename(m.path))
    return os.path.join(m.run, os.path.basename(m.path))


def running_vm_section(ms, outdir):
    """The VMs that ran across a switch in the runs of ms (each run
    folder's running-vm-<cs>.json, load.running_vms), one line a fallback
    as summary.md says it; [] where no run has one."""
    folders = []
    for m in ms:
        d = os.path.dirname(m.path)
        if runfolder.round_number(os.path.basename(d)) is not None:
            d = os.path.dirname(d)
        if d not in folders:
            folders.append(d)
    lines = []
    for d in folders:
        lines += ["- %s ([%s](%s))" % (v.line(), v.file, os.path.relpath(os.path.join(d, v.file), outdir))
                  for v in load.running_vms(d)]
    if not lines:
        return []
    return ["## VMs running across a switch", "",
            "A KVM VM started with the host on tsc, kept running while the host switched to a fallback and back, "
            "then paused and resumed; its master clock and stable bit from KVM's events of that VM.", ""] + lines + [""]


# report.md's first line begins so: the mark of a report this tool wrote.
HEAD = "# clockbench report: "


def check_replace(outdir):
    """Refuses (ValueError, one line) to write into outdir over a report.md
    this tool did not write: one whose first line is not HEAD's.  A link
    there is replaced, never followed (runfolder.write_file), as before."""
    path = os.path.join(outdir, "report.md")
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    except OSError as e:
        raise ValueError("%s: open: %s: refusing to replace it" % (cut(path), e.strerror))
    try:
        first = os.read(fd, len(HEAD)) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    finally:
        os.close(fd)
    if first != HEAD.encode():
        raise ValueError("%s: not a report clockbench wrote (its first line is not '%s...'): refusing to replace "
                         "it; give another folder" % (cut(path), HEAD))


def build(ms, outdir, rates, hosts, vcpus, given, want_plots, warn):
    """Writes outdir/report.md (and the plots); returns its path."""
    every = sorted(ms, key=sort_key)
    ms = [m for m in every if m.kind != "tsc-rate"]  # the TSC rate check alone: its own section
    runs = sorted({m.run for m in every})
    multi = len(runs) > 1
    lines = [HEAD + ", ".join(runs), "",
             "Inputs: %s." % ", ".join("[%s](%s)" % (input_name(m, every), os.path.relpath(m.path, outdir))
                                       for m in every), "",
             "## CLOCK_MONOTONIC, ns per call", "",
             "The headline: `clock_gettime(CLOCK_MONOTONIC)` through the C library (the engine's `vdso` method, "
             "served by the vDSO where the kernel allows), median and p99 ns per call over timed batches. "
             "`x tsc` divides by the same row (threads, vCPUs, run, accelerator) measured with the host on `tsc`. "
             "`path` is what the engine's seccomp probe saw: `user` (answered in user space) or `syscall`.", ""]
    lines += [rounds_note(ms), ""]
    lines += findings(ms)
    lines += mitigation_lines(ms)
    lines += headline_tables(ms, multi)
    lines += kernel_read_section(ms, multi)
    lines += workloads_section(ms, multi)
    lines += tsc_rate_section(every, multi)
    lines += running_vm_section(every, outdir)
    lines += plot_section(ms, outdir, multi, want_plots, warn)
    base = capacity.given_baseline(given) or capacity.tsc_state(ms)
    states = capacity.states_from(ms, multi) + capacity.states_given(given, base)
    excluded = sum(1 for m in ms if m.emulated)
    lines += ["## Capacity planning", "", capacity.render(states, rates, hosts, vcpus, excluded,
                                                          capacity.work_from(ms, multi),
                                                          given and capacity.baseline_note(base))]
    lines += ["## Context", ""] + context_tables(ms, outdir)
    lines += ["## Every clock and method", ""] + detail_tables(ms, outdir)
    lines += ["---", "Written by `analysis/clockbench-report`; the formulas and columns are explained in "
              "docs/analysis.md.", ""]
    path = os.path.join(outdir, "report.md")
    # A result's control characters (an escape sequence in a folder name) never reach a terminal showing it.
    write_atomic(path, "\n".join(printable(x) for x in "\n".join(lines).split("\n")))
    return path
