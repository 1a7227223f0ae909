"""kmsg.py: every kernel-log line clockbench knows, and the one classifier.

The phrases come from the kernel's own format strings (kernel/time/
clocksource.c, arch/x86/kernel/tsc.c, tsc_sync.c, kernel/sched/clock.c) of
every era clockbench reads: 2.6 ("Switching to clocksource"), 5.14's
read-back retries, 6.x's skip test and uncertainty margins, and the 2026
rewrite ("Watchdog %s read timed out", frequency and inter-CPU skew).
tests/host-scripts/fixtures/kmsg/lines.txt holds a real line of each, with where
it came from.  guest-init/facts.c keeps its own short list (C); the test
tests/host-scripts/hostcheck-kmsg.t checks that it agrees with this one.

classify(line) -> (kind, detail) or None.  kind is one of KINDS:
  switched                 the kernel changed clocksource (detail: to)
  unstable                 tsc.c marked the TSC unstable (reason, cause)
  warp, sync-check         tsc_sync.c's boot-time warp test (cycles; CPUs)
  tsc-adjust               IA32_TSC_ADJUST found or set wrong at boot
  verdict/...              the watchdog marked a clocksource unstable
  near-miss/...            the watchdog was close, skipped, or retried
  detail/...               a continuation line of a verdict or a check
  sched-clock/..., info/...  context lines (calibration, hypervisor)
A line is data: it is cut to MAX_LINE characters before it is matched and
every pattern is linear (no nested repetition).
"""
import re

MAX_LINE = 2048

_N = r"(-?\d+)"

# (kind, pattern): the first that matches names the line.  Order matters
# where one phrase contains another (a verdict before its near miss).
RULES = [
    # clocksource.c, every era: the switch itself (2.6: "Switching to").
    ("switched", r"clocksource: Switched to clocksource (?P<to>\S+)"),
    ("switched", r"Switching to clocksource (?P<to>\S+)"),
    # tsc.c mark_tsc_unstable() ("Marking TSC unstable due to %s"; 2.6.2x:
    # "due to: %s.") and tsc_cs_mark_unstable() ("... clocksource watchdog").
    ("unstable", r"Marking TSC unstable due to:? (?P<reason>.+?)\.?\s*$"),
    # tsc_sync.c check_tsc_sync_source(): the boot-time warp test.
    ("warp", r"Measured (?P<cycles>\d+) cycles TSC warp between CPUs, turning off TSC clock"),
    ("warp", r"TSC warped randomly between CPUs"),
    ("sync-check", r"(?:checking )?TSC synchronization \[CPU#(?P<from_cpu>\d+) -> CPU#(?P<to_cpu>\d+)\]:\s*$"),
    # tsc_sync.c: TSC_ADJUST found wrong at boot or changed after it.
    ("tsc-adjust", r"TSC ADJUST differs: CPU(?P<cpu>\d+) " + _N + r" --> " + _N + r"\. Restoring"),
    ("tsc-adjust", r"TSC ADJUST differs within socket\(s\), fixing all errors"),
    ("tsc-adjust", r"TSC ADJUST: CPU(?P<cpu>\d+): " + _N + r" force to 0"),
    ("tsc-adjust", r"TSC ADJUST compensate: CPU(?P<cpu>\d+) observed (?P<warp>-?\d+) warp\. Adjust: " + _N),
    # clocksource.c cs_watchdog_read(), every attempt slow: 5.14
    # (db3a34e17433) "%s read-back delay of %lldns, attempt %d, marking
    # unstable"; 5.19 "wd-%s-wd read-back delay of ..."; 6.3 "wd-%s-wd
    # excessive read-back delay of %lldns vs. limit of %ldns, wd-wd
    # read-back delay only %lldns, attempt %d, marking %s unstable".
    ("verdict/readback", r"timekeeping watchdog on CPU(?P<cpu>\d+): (?:wd-(?P<cs>[\w.-]+)-wd |(?P<watchdog>[\w.-]+) )?"
                         r"(?:excessive )?read-back delay (?:of )?(?P<delay_ns>\d+)ns"
                         r"(?:(?: vs\.)? limit of (?P<limit_ns>\d+)ns)?"
                         r"(?:, wd-wd read-back delay only (?P<wd_wd_ns>\d+)ns)?"
                         r", attempt (?P<attempt>\d+), marking (?:(?P<marked>[\w.-]+) )?unstable"),
    # The -rcu patch in the LKML seed (9ec2a03bbf4b, "Forgive repeated
    # long-latency watchdog clocksource reads"): slow, but not marked.
    ("near-miss/coarse", r"timekeeping watchdog on CPU(?P<cpu>\d+): (?P<watchdog>[\w.-]+) read-back delay of "
                         r"(?P<delay_ns>\d+)ns, attempt (?P<attempt>\d+), (?:coarse-grained skew check|awaiting re-initialization)"),
    ("near-miss/coarse", r"timekeeping watchdog on CPU(?P<cpu>\d+): (?P<watchdog>[\w.-]+) (?:(?P<reads>\d+) consecutive "
                         r"coarse-grained reads|coarse-grained [\d.]+ ms clock-skew check)"),
    # The skew test (every era since 4.x): TSC and watchdog disagree.
    ("verdict/skew", r"timekeeping watchdog(?: on CPU(?P<cpu>\d+))?: Marking clocksource '?(?P<cs>[\w.-]+)'? "
                     r"as unstable because the skew is too large"),
    ("verdict/skew", r"Clocksource (?P<cs>[\w.-]+) unstable \(delta = (?P<delta_ns>-?\d+) ns\)"),  # 2.6-3.x
    # The 2026 rewrite: verdicts by frequency and by inter-CPU order.
    ("verdict/freq-skew", r"Marking clocksource (?P<cs>[\w.-]+) unstable due to frequency skew"),
    ("verdict/cpu-skew", r"Marking clocksource (?P<cs>[\w.-]+) unstable due to inter CPU skew"),
    # Near misses of every era.
    ("near-miss/retried", r"timekeeping watchdog on CPU(?P<cpu>\d+): (?P<watchdog>[\w.-]+) retried (?P<retries>\d+) times before success"),
    ("near-miss/skip", r"wd-(?P<cs>[\w.-]+)-wd read-back delay of (?P<delay_ns>\d+)ns, clock-skew test skipped"),
    ("detail/wd-wd", r"timekeeping watchdog on CPU(?P<cpu>\d+): (?P<watchdog>[\w.-]+) wd-wd read-back delay of (?P<wd_wd_ns>\d+)ns"),
    ("near-miss/long-interval", r"Long readout interval, skipping watchdog check(?:: cs_nsec: (?P<cs_ns>-?\d+) wd_nsec: (?P<wd_ns>-?\d+))?"),
    ("near-miss/readout-timeout", r"Watchdog (?P<watchdog>[\w.-]+) read timed out\. Readout sequence took: (?P<seq_ns>\d+)ns"),
    ("near-miss/remote-timeout", r"Watchdog remote CPU (?P<remote_cpu>\d+) read timed out"),
    # Continuation lines.  clocksource_verify_percpu() runs after a verdict
    # on the current clocksource: CPUs ahead or behind are its findings.
    ("detail/percpu", r"CPUs (?P<cpus>[\d,-]+) (?P<which>ahead of|behind) CPU (?P<cpu>\d+) for clocksource (?P<cs>[\w.-]+)"),
    ("detail/percpu", r"Checking clocksource (?P<cs>[\w.-]+) synchronization from CPU (?P<cpu>\d+) to CPUs (?P<cpus>[\d,-]+)"),
    ("detail/percpu", r"CPU (?P<cpu>\d+) check durations (?P<min_ns>\d+)ns - (?P<max_ns>\d+)ns for clocksource (?P<cs>[\w.-]+)"),
    ("detail/percpu", r"Not enough CPUs to check clocksource '(?P<cs>[\w.-]+)'"),
    ("detail/skew", r"'(?P<cs>[\w.-]+)' (?:wd|cs)_(?:nsec: -?\d+ \w+_now|now): [0-9a-f]+ \w+_last: [0-9a-f]+ mask: [0-9a-f]+"),
    ("detail/skew", r"Clocksource '(?P<cs>[\w.-]+)' skewed (?P<skew_ns>-?\d+) ns \(-?\d+ ms\) over watchdog '(?P<watchdog>[\w.-]+)' "
                    r"interval of (?P<interval_ns>-?\d+) ns"),
    ("detail/skew", r"clocksource: +(?:'(?P<cs>[\w.-]+)' (?:\(not '[\w.-]+'\) )?is current clocksource|No current clocksource)\.$"),
    ("detail/freq-skew", r"clocksource: (?P<which>Watchdog|Clocksource) +(?P<cs>[\w.-]+) interval: +(?P<interval_ns>\d+)ns"),
    ("detail/cpu-skew", r"clocksource: CPU(?P<cpu>\d+) +(?P<cycles>\d+) < CPU(?P<cpu2>\d+) +(?P<cycles2>\d+) \(cycles\)"),
    # kernel/sched/clock.c and context.
    ("sched-clock/unstable", r"TSC found unstable after boot, most likely due to broken BIOS"),
    ("sched-clock/unstable", r"sched_clock: Marking unstable"),
    ("sched-clock/stable", r"sched_clock: Marking stable"),
    ("info/refined", r"tsc: Refined TSC clocksource calibration: (?P<mhz>[\d.]+) MHz"),
    ("info/detected", r"tsc: Detected (?P<mhz>[\d.]+) MHz (?:processor|TSC)"),
    ("info/hypervisor", r"Hypervisor detected: (?P<hypervisor>.+?)\s*$"),
    ("info/kvm-clock", r"kvm-clock"),
]
_RULES = [(k, re.compile(p)) for k, p in RULES]

KINDS = tuple(dict.fromkeys(k for k, _ in RULES))
VERDICTS = tuple(k for k in KINDS if k.startswith("verdict/"))
NEAR_MISSES = tuple(k for k in KINDS if k.startswith("near-miss/"))

# mark_tsc_unstable()'s reasons (tsc.c, tsc_sync.c and their callers), as cause.
_CAUSES = [
    ("clocksource watchdog", "watchdog"),
    ("check_tsc_sync_source failed", "boot_warp"),
    ("boot parameter", "cmdline"),        # tsc=unstable
    ("TSCs unsynchronized", "unsynchronized"),
    ("cpufreq changes", "cpufreq"),
    ("TSC halts in idle", "idle"),
    ("running on Hyper-V", "hypervisor"),
    ("KVM discovered backwards TSC", "kvm"),
]

# Human words for each kind, for reports.
TEXT = {
    "verdict/readback": "every watchdog readout was too slow (read-back delay)",
    "verdict/skew": "skew too large",
    "verdict/freq-skew": "frequency skew",
    "verdict/cpu-skew": "inter-CPU skew",
    "near-miss/retried": "readout retried before success",
    "near-miss/skip": "readout slow, clock-skew test skipped",
    "near-miss/long-interval": "long readout interval, check skipped",
    "near-miss/readout-timeout": "watchdog read timed out (reported only)",
    "near-miss/remote-timeout": "remote CPU read timed out",
    "near-miss/coarse": "slow readouts, coarse-grained check",
}

_INT = re.compile(r"-?\d+$")
# Every pattern holds one of these words: a line without any is not read
# further (most of a boot's log).
_ANY = ("locksource", "TSC", "tsc", "atchdog", "sched_clock", "Hypervisor", "kvm-clock", "CPU")


def classify(line):
    """(kind, detail) of one kernel-log line, or None when clockbench does
    not know it.  detail holds the line's figures (ints where they are
    integers) and, for 'unstable', the reason and its cause."""
    if not isinstance(line, str):
        return None
    line = line[:MAX_LINE].rstrip("\r\n")
    if not any(w in line for w in _ANY):
        return None
    for kind, rx in _RULES:
        m = rx.search(line)
        if not m:
            continue
        d = {k: (int(v) if _INT.match(v) and k != "cpus" else v) for k, v in m.groupdict().items() if v is not None}
        if kind == "unstable":
            d["cause"] = next((c for phrase, c in _CAUSES if d["reason"].startswith(phrase)), "other")
        return kind, d
    return None


def switched_to(line):
    """The clocksource a 'Switched to clocksource' line names, else None."""
    c = classify(line)
    return c[1]["to"] if c and c[0] == "switched" else None


def marks_tsc_unstable(line):
    """Whether a line says the kernel gave up the TSC: tsc.c's 'Marking TSC
    unstable' (any reason) or a watchdog verdict on tsc."""
    c = classify(line)
    return bool(c) and (c[0] == "unstable" or (c[0] in VERDICTS and c[1].get("marked", c[1].get("cs")) in ("tsc", None)))


# One boot's log, read as a whole.
WHY_TEXT = {"boot_warp": "warp at boot", "watchdog": "watchdog", "by_hand": "by hand",
            "cmdline": "tsc=unstable", "other": "another reason"}
_STAMP = re.compile(r"\[\s*(\d+\.\d+)\]")
MAX_KEPT = 8  # near-miss lines quoted per boot (all are counted)


def _stamp(line):
    m = _STAMP.search(line[:120])
    return float(m.group(1)) if m else None


def summarize(lines):
    """One boot's kernel log (lines): whether the TSC was kept, lost (when,
    why, the line that says so, the warp's cycles) or never chosen, and its
    watchdog near misses counted by kind.  tsc is "kept", "lost", "not
    chosen" (the kernel never switched to it) or "unknown" (no line says:
    a log cut short or rotated)."""
    s = {"tsc": "unknown", "why": None, "reason": None, "at_s": None, "line": None, "cycles": None,
         "verdict": None, "verdict_line": None, "switches": [], "near_misses": {}, "near_miss_lines": [],
         "tsc_adjust": 0}
    warp = unstable = verdict = first_switch_away = None
    for line in lines:
        c = classify(line)
        if not c:
            continue
        kind, d = c
        line = line[:MAX_LINE].strip()
        if kind == "switched":
            if s["switches"] and s["switches"][-1] in ("tsc", "tsc-early") and d["to"] not in ("tsc", "tsc-early"):
                first_switch_away = first_switch_away or line
            s["switches"].append(d["to"])
        elif kind in NEAR_MISSES:
            s["near_misses"][kind] = s["near_misses"].get(kind, 0) + 1
            if len(s["near_miss_lines"]) < MAX_KEPT:
                s["near_miss_lines"].append(line)
        elif kind == "tsc-adjust":
            s["tsc_adjust"] += 1
        elif kind == "warp" and warp is None:
            warp = (line, d.get("cycles"))
        elif kind == "unstable" and unstable is None:
            unstable = (line, d)
        elif kind in VERDICTS and verdict is None and marks_tsc_unstable(line):
            verdict = (line, kind)
    if verdict:
        s["verdict_line"], s["verdict"] = verdict
    if warp or unstable or verdict:
        s["tsc"] = "lost"
        cause = unstable[1]["cause"] if unstable else None
        if warp or cause == "boot_warp":
            s["why"] = "boot_warp"
            s["line"] = warp[0] if warp else unstable[0]
            s["cycles"] = warp[1] if warp else None
        elif verdict or cause == "watchdog":
            s["why"] = "watchdog"
            s["line"] = verdict[0] if verdict else unstable[0]
        else:
            s["why"] = cause if cause == "cmdline" else "other"
            s["reason"] = unstable[1]["reason"]
            s["line"] = unstable[0]
    elif first_switch_away and s["switches"][-1] not in ("tsc", "tsc-early"):
        s["tsc"], s["why"], s["line"] = "lost", "by_hand", first_switch_away
    elif s["switches"]:
        s["tsc"] = "kept" if s["switches"][-1] in ("tsc", "tsc-early") else "not chosen"
    if s["line"]:
        s["at_s"] = _stamp(s["line"])
    return s


def boots_line(summaries):
    """One line over many boots' summaries, e.g. "40 of 40 boots lost the
    TSC: warp at boot", "2 of 10 boots lost the TSC (1 watchdog, 1 by
    hand); 8 kept it; near misses in 3"."""
    n = len(summaries)
    if not n:
        return "no boots read"
    lost = [s for s in summaries if s["tsc"] == "lost"]
    whys = {}
    for s in lost:
        whys[s["why"]] = whys.get(s["why"], 0) + 1
    parts = []
    if lost:
        if len(whys) == 1:
            parts.append("%d of %d boots lost the TSC: %s" % (len(lost), n, WHY_TEXT[next(iter(whys))]))
        else:
            parts.append("%d of %d boots lost the TSC (%s)" % (len(lost), n, ", ".join(
                "%d %s" % (c, WHY_TEXT[w]) for w, c in sorted(whys.items(), key=lambda x: -x[1]))))
    else:
        parts.append("0 of %d boots lost the TSC" % n)
    for state in ("kept", "not chosen", "unknown"):
        c = sum(1 for s in summaries if s["tsc"] == state)
        if c:
            parts.append("%d %s" % (c, {"kept": "kept it", "not chosen": "never chose it",
                                        "unknown": "say nothing of it (log cut short?)"}[state]))
    near = sum(1 for s in summaries if s["near_misses"])
    if near:
        parts.append("watchdog near misses in %d" % near)
    cycles = sorted(s["cycles"] for s in lost if s.get("cycles") is not None)
    if cycles:
        med = cycles[len(cycles) // 2] if len(cycles) % 2 else (cycles[len(cycles) // 2 - 1] + cycles[len(cycles) // 2]) // 2
        parts.append("warps of %d cycles" % cycles[0] if len(cycles) == 1 else
                     "warps of %d to %d cycles, median %d" % (cycles[0], cycles[-1], med))
    return "; ".join(parts)
