"""kmsg.py: every kernel-log line clockbench knows, and the one classifier.

The phrases come from the kernel's own format strings (kernel/time/
clocksource.c, arch/x86/kernel/tsc.c, tsc_sync.c, kernel/sched/clock.c) of
every era clockbench reads: 2.6 ("Switching to clocksource"), 5.14's
read-back retries, 6.x's skip test and uncertainty margins, and the 2026
rewrite ("Watchdog %s read timed out", frequency and inter-CPU skew).
tests/host-scripts/fixtures/kmsg/lines.txt holds a real line of each, with where
it came from.  guest-init/facts.c keeps its own short list (C); the test
tests/host-scripts/health-kmsg.t checks that it agrees with this one.

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
import collections
import re

from . import names
from . import paste as _paste

MAX_LINE = 2048

_N = r"(-?\d+)"
# The kernel's own pr_fmt prefixes, optional where an era printed none
# (clocksource.c gained "clocksource: " in 4.x, tsc.c "tsc: " in 3.x).
_CS = r"(?:clocksource: )?"
_TSC = r"(?:tsc: )?"
_FW = r"(?:\[Firmware Bug\]: )?"
_WD = r"(?:clocksource: )?timekeeping watchdog on CPU(?P<cpu>\d+): "

# (kind, pattern): the first that matches names the line.  Every pattern
# is matched at the start of the message text the kernel wrote (after the
# record's header, a timestamp, "host kernel: "; see message()), never
# anywhere in a line: the kernel prints a crashing program's name (15
# characters at most) at the start of its segfault line and its file name
# at the end, so any user can place text in a kernel record, but never 16
# characters of its own at a message's start.  Each pattern therefore
# fixes more than 15 characters before anything it lets vary, and ends
# without a lazy repetition (linear).  Order matters where one phrase
# contains another (a verdict before its near miss).
RULES = [
    # clocksource.c, every era: the switch itself (2.6: "Switching to";
    # 2.6.1x: "Time: %s clocksource has been installed.").
    ("switched", _CS + r"Switched to clocksource (?P<to>[\w.-]+)"),
    ("switched", r"Switching to clocksource (?P<to>[\w.-]+)"),
    ("switched", r"Time: (?P<to>[\w.-]+) clocksource has been installed"),
    # tsc.c mark_tsc_unstable() ("Marking TSC unstable due to %s"; 2.6.2x:
    # "due to: %s.") and tsc_cs_mark_unstable() ("... clocksource watchdog").
    ("unstable", _TSC + r"Marking TSC unstable due to:? (?P<reason>.+)"),
    # tsc_sync.c check_tsc_sync_source(): the boot-time warp test.  Its
    # header is printed only with a warp (a lone header: a log cut short).
    ("warp", r"Measured (?P<cycles>\d+) cycles TSC warp between CPUs, turning off TSC clock"),
    ("warp", r"TSC warped randomly between CPUs"),
    ("sync-check", r"(?:checking )?TSC synchronization \[CPU#(?P<from_cpu>\d+) -> CPU#(?P<to_cpu>\d+)\]:\s*$"),
    # tsc_sync.c: TSC_ADJUST found wrong at boot or changed after it.
    ("tsc-adjust", _FW + r"TSC ADJUST differs: CPU(?P<cpu>\d+) " + _N + r" --> " + _N + r"\. Restoring"),
    ("tsc-adjust", _FW + r"TSC ADJUST differs within socket\(s\), fixing all errors"),
    ("tsc-adjust", _FW + r"TSC ADJUST: CPU(?P<cpu>\d+): " + _N + r" force to 0"),
    ("tsc-adjust", _FW + r"TSC ADJUST compensate: CPU(?P<cpu>\d+) observed (?P<warp>-?\d+) warp\. Adjust: " + _N),
    # clocksource.c cs_watchdog_read(), every attempt slow: 5.14
    # (db3a34e17433) "%s read-back delay of %lldns, attempt %d, marking
    # unstable"; 5.19 "wd-%s-wd read-back delay of ..."; 6.3 "wd-%s-wd
    # excessive read-back delay of %lldns vs. limit of %ldns, wd-wd
    # read-back delay only %lldns, attempt %d, marking %s unstable" (a
    # recorded copy may wrap it after the limit: its first half still
    # names the verdict, its second is a detail).
    ("verdict/readback", _WD + r"(?:wd-(?P<cs>[\w.-]+)-wd |(?P<watchdog>[\w.-]+) )?"
                         r"(?:excessive )?read-back delay (?:of )?(?P<delay_ns>\d+)ns"
                         r"(?:(?: vs\.)? limit of (?P<limit_ns>\d+)ns)?"
                         r"(?:, wd-wd read-back delay only (?P<wd_wd_ns>\d+)ns)?"
                         r"(?:, attempt (?P<attempt>\d+), marking (?:(?P<marked>[\w.-]+) )?unstable"
                         r"|(?(limit_ns),?[ \t]*$|(?!)))"),
    ("detail/readback", _CS + r"wd-wd read-back delay only (?P<wd_wd_ns>\d+)ns, attempt (?P<attempt>\d+), "
                        r"marking (?:(?P<marked>[\w.-]+) )?unstable"),
    # The -rcu patch in the LKML seed (9ec2a03bbf4b, "Forgive repeated
    # long-latency watchdog clocksource reads"): slow, but not marked.
    ("near-miss/coarse", _WD + r"(?P<watchdog>[\w.-]+) read-back delay of "
                         r"(?P<delay_ns>\d+)ns, attempt (?P<attempt>\d+), (?:coarse-grained skew check|awaiting re-initialization)"),
    ("near-miss/coarse", _WD + r"(?P<watchdog>[\w.-]+) (?:(?P<reads>\d+) consecutive "
                         r"coarse-grained reads|coarse-grained [\d.]+ ms clock-skew check)"),
    # The skew test (every era since 4.x; before 4.x without "on CPU%d"
    # and with a comma: "Marking clocksource 'tsc' as unstable, because").
    ("verdict/skew", _CS + r"timekeeping watchdog(?: on CPU(?P<cpu>\d+))?: Marking clocksource '?(?P<cs>[\w.-]+)'? "
                     r"as unstable,? because the skew is too large"),
    # 2.6-3.x: the same verdict, one line.  RHEL 6 appends "Enable
    # clocksource failover by adding clocksource_failover kernel
    # parameter.": its kernel then only warned and kept the TSC (the switch
    # needed that parameter), so that line is a near miss.
    ("near-miss/failover", r"Clocksource (?P<cs>[\w.-]+) unstable \(delta = (?P<delta_ns>-?\d+) ns\)\.?[ \t]{1,4}"
                           r"Enable clocksource failover by adding clocksource_failover kernel parameter"),
    ("verdict/skew", r"Clocksource (?P<cs>[\w.-]+) unstable \(delta = (?P<delta_ns>-?\d+) ns\)"),
    # The 2026 rewrite: verdicts by frequency and by inter-CPU order.
    ("verdict/freq-skew", _CS + r"Marking clocksource (?P<cs>[\w.-]+) unstable due to frequency skew"),
    ("verdict/cpu-skew", _CS + r"Marking clocksource (?P<cs>[\w.-]+) unstable due to inter CPU skew"),
    # Near misses of every era.
    ("near-miss/retried", _WD + r"(?P<watchdog>[\w.-]+) retried (?P<retries>\d+) times before success"),
    ("near-miss/skip", _CS + r"wd-(?P<cs>[\w.-]+)-wd read-back delay of (?P<delay_ns>\d+)ns, clock-skew test skipped"),
    ("detail/wd-wd", _WD + r"(?P<watchdog>[\w.-]+) wd-wd read-back delay of (?P<wd_wd_ns>\d+)ns"),
    ("near-miss/long-interval", _CS + r"Long readout interval, skipping watchdog check"
                                r"(?:: cs_nsec: (?P<cs_ns>-?\d+) wd_nsec: (?P<wd_ns>-?\d+))?"),
    ("near-miss/readout-timeout", _CS + r"Watchdog (?P<watchdog>[\w.-]+) read timed out\. Readout sequence took: (?P<seq_ns>\d+)ns"),
    ("near-miss/remote-timeout", _CS + r"Watchdog remote CPU (?P<remote_cpu>\d+) read timed out"),
    # Continuation lines (indented: only after the kernel's own prefix).
    # clocksource_verify_percpu() runs after a verdict on the current
    # clocksource: CPUs ahead or behind are its findings.
    ("detail/percpu", r"clocksource: +CPUs (?P<cpus>[\d,-]+) (?P<which>ahead of|behind) CPU (?P<cpu>\d+) for clocksource (?P<cs>[\w.-]+)"),
    ("detail/percpu", _CS + r"Checking clocksource (?P<cs>[\w.-]+) synchronization from CPU (?P<cpu>\d+) to CPUs (?P<cpus>[\d,-]+)"),
    ("detail/percpu", r"clocksource: +CPU (?P<cpu>\d+) check durations (?P<min_ns>\d+)ns - (?P<max_ns>\d+)ns for clocksource (?P<cs>[\w.-]+)"),
    ("detail/percpu", _CS + r"Not enough CPUs to check clocksource '(?P<cs>[\w.-]+)'"),
    ("detail/skew", r"clocksource: +'(?P<cs>[\w.-]+)' (?:wd|cs)_(?:nsec: -?\d+ \w+_now|now): [0-9a-f]+ \w+_last: [0-9a-f]+ mask: [0-9a-f]+"),
    ("detail/skew", r"clocksource: +Clocksource '(?P<cs>[\w.-]+)' skewed (?P<skew_ns>-?\d+) ns \(-?\d+ ms\) over watchdog '(?P<watchdog>[\w.-]+)' "
                    r"interval of (?P<interval_ns>-?\d+) ns"),
    ("detail/skew", r"clocksource: +(?:'(?P<cs>[\w.-]+)' (?:\(not '[\w.-]+'\) )?is current clocksource|No current clocksource)\.$"),
    ("detail/freq-skew", r"clocksource: (?P<which>Watchdog|Clocksource) +(?P<cs>[\w.-]+) interval: +(?P<interval_ns>\d+)ns"),
    ("detail/cpu-skew", r"clocksource: CPU(?P<cpu>\d+) +(?P<cycles>\d+) < CPU(?P<cpu2>\d+) +(?P<cycles2>\d+) \(cycles\)"),
    # kernel/sched/clock.c and context.
    ("sched-clock/unstable", r"TSC found unstable after boot, most likely due to broken BIOS"),
    ("sched-clock/unstable", r"sched_clock: Marking unstable"),
    ("sched-clock/stable", r"sched_clock: Marking stable"),
    ("info/refined", _TSC + r"Refined TSC clocksource calibration: (?P<mhz>[\d.]+) MHz"),
    ("info/detected", _TSC + r"Detected (?P<mhz>[\d.]+) MHz (?:processor|TSC)"),
    # amd.c / tsc.c on AMD: the TSC's rate is not the P0 frequency.
    ("info/p0", _FW + r"TSC doesn't count with P0 frequency!"),
    ("info/hypervisor", r"Hypervisor detected: (?P<hypervisor>.+)"),
    # The boot's own parameters (init/main.c, every era): clocksource= and
    # tsc= as that boot had them.
    ("info/cmdline", r"Kernel command line: (?P<cmdline>.{0,2000})"),
    ("info/kvm-clock", r"(?:clocksource: kvm-clock: mask: |kvm-clock: (?:Using msrs|using sched offset|cpu \d+, msr))"),
]
_RULES = [(k, re.compile(p)) for k, p in RULES]

# The known beginnings of the lines that take the TSC away, for a line a
# pager cut (its end missing): read as that kind, marked cut, never as a
# confident cause (each fixes more than 15 characters first, as RULES do).
CUT_RULES = [
    ("verdict/skew", _CS + r"timekeeping watchdog(?: on CPU(?P<cpu>\d+))?: Marking clocksource"),
    ("verdict/readback", _WD + r"(?:wd-[\w.-]+-wd |[\w.-]+ )?(?:excessive )?read-back delay"),
    ("verdict/freq-skew", _CS + r"Marking clocksource (?P<cs>[\w.-]+) unstable due to freq"),
    ("verdict/cpu-skew", _CS + r"Marking clocksource (?P<cs>[\w.-]+) unstable due to inter"),
    ("unstable", _TSC + r"Marking TSC unstable due to:? ?(?P<reason>.*)"),
    ("warp", r"Measured (?P<cycles>\d+) cycles TSC warp"),
]
_CUT_RULES = [(k, re.compile(p)) for k, p in CUT_RULES]

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
    ("possible TSC halt in C2", "idle"),  # 2.6.2x, drivers/acpi/processor_idle.c
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
    "near-miss/failover": "skew found, TSC kept (RHEL 6: no clocksource_failover)",
}

_INT = re.compile(r"-?\d+$")
# Every pattern holds one of these words: a line without any is not read
# further (most of a boot's log).
_ANY = ("locksource", "TSC", "tsc", "atchdog", "sched_clock", "Hypervisor", "kvm-clock", "CPU", "Time: ",
        "command line")

# What stands before the kernel's message text in the logs clockbench
# reads, each part optional, each bounded (so the match is linear):
#   a /dev/kmsg record "PRI,SEQ,USEC,FLAGS[,caller=T123];"  (the watch)
#   a raw priority "<6>" (dmesg -r), or dmesg -x's "kern  :warn  : "
#   a timestamp: dmesg's "[   1.234567]" or "[Tue Dec  1 ...]", an ISO one
#     (dmesg --time-format iso, journalctl -o short-iso, rsyslog), or
#     syslog's "Dec  1 12:00:00[.123456]"
#   "HOST kernel: " (journal, syslog), then syslog's copy of dmesg's stamp.
_HEAD = re.compile(r"""
    (?: (?P<rpri>\d{1,4}),(?P<seq>\d{1,20}),(?P<usec>\d{1,20}),[^;\n]{0,64};
      | <(?P<pri>\d{1,4})>
      | (?P<fac>[a-z]{2,8})\ {0,8}:[a-z]{1,8}\ {0,8}:\ )?
    (?: \[\ {0,16}(?P<stamp>\d{1,12}\.\d{1,9})\]\ ?
      | \[[A-Z][a-z]{2}\ [^\]\n]{1,40}\]\ ?
      | \d{4}-\d\d-\d\d[T\ ][\d:.,]{8,20}(?:Z|[+-]\d\d:?\d\d)?\ )?
    (?: [A-Z][a-z]{2}\ [\ \d]\d\ \d\d:\d\d:\d\d(?:\.\d{1,9})?\ )?
    (?: (?:[^\s\[]{1,64}\ )?kernel:\ (?:\[\ {0,16}(?P<stamp2>\d{1,12}\.\d{1,9})\]\ ?)? )?
    """, re.X)


Message = collections.namedtuple("Message", "text stamp framed seq")


def message(line):
    """Message(text, stamp, framed, seq) of one kernel-log line: the
    message text the kernel wrote, the record's time since boot in seconds
    (None when the line carries none), whether a record header, timestamp
    or "kernel:" stood before it, and a /dev/kmsg record's sequence number
    (else None).  None when the record says it is not the
    kernel's: a /dev/kmsg or raw priority of another facility (what a
    program writes to /dev/kmsg is never facility 0) or dmesg -x's
    facility other than kern."""
    m = _HEAD.match(line)
    pri = m.group("rpri") or m.group("pri")
    if (pri is not None and int(pri) >> 3 != 0) or (m.group("fac") not in (None, "kern")):
        return None
    stamp = m.group("stamp") or m.group("stamp2")
    stamp = float(stamp) if stamp else (int(m.group("usec")) / 1e6 if m.group("usec") else None)
    seq = m.group("seq")
    return Message(line[m.end():], stamp, m.end() > 0, None if seq is None else int(seq))


def _detail(kind, m, cut=False):
    """A rule's match as detail: its figures (ints where they are
    integers) and, for 'unstable', its reason and cause.  cut: a line
    whose end is missing (_CUT_RULES), its reason kept to its last blank,
    "(cut)" when nothing of it is left."""
    text = ("cpus", "reason", "hypervisor", "cmdline")  # free text, even when it is all digits
    d = {k: (int(v) if _INT.match(v) and k not in text else v) for k, v in m.groupdict().items() if v is not None}
    for k in ("reason", "hypervisor"):
        if k in d and cut:
            d[k] = d[k].rstrip() or "(cut)"
        elif k in d:  # the kernel's trailing dot and blanks, stripped without a regex
            d[k] = d[k].rstrip().rstrip(".").rstrip() or d[k]
    if kind == "unstable":
        d["cause"] = next((c for phrase, c in _CAUSES if d["reason"].startswith(phrase)), "other")
    return d


def classify(line, framed=False):
    """(kind, detail) of one kernel-log line, or None when clockbench does
    not know it, or when it is not the kernel's own message (see message()).
    With framed, a line without a record header or timestamp is refused: in
    a log whose lines all carry one, a bare line is the continuation of a
    message (a file name holding a newline), not a message.  detail holds
    the line's figures (ints where they are integers) and, for 'unstable',
    the reason and its cause."""
    if not isinstance(line, str):
        return None
    line = line[:MAX_LINE].rstrip("\r\n")
    if not any(w in line for w in _ANY):
        return None
    msg = message(line)
    if msg is None or (framed and not msg.framed):
        return None
    return _match(msg.text)


def _match(text, cut=False):
    """(kind, detail) of a message's text by the first rule that matches
    at its start, else None; with cut, of a line a pager cut, by its known
    beginning (_CUT_RULES)."""
    for kind, rx in _CUT_RULES if cut else _RULES:
        m = rx.match(text)
        if m:
            return kind, _detail(kind, m, cut)
    return None


def messages(lines, paste=None):
    """(line, kind, detail, stamp_s) of each line of one log that
    clockbench knows, in order.  A log is framed when its first line (past
    '#' comments and blanks) carries a header or timestamp; then its bare
    lines are continuations and are not read (classify's framed).  With
    paste (a cbcontract.paste.Log), the lines are a recorded log, read as
    people paste it (_recorded()); paste.name() then names its format."""
    if paste is not None:
        yield from (m[:4] for m in _recorded(lines, paste))
        return
    framed = None
    for line in lines:
        if not isinstance(line, str) or line.startswith("#") or not line.strip():
            continue
        line = line[:MAX_LINE].rstrip("\r\n")
        if framed is None:
            head = message(line)
            framed = bool(head and head.framed)
        if not any(w in line for w in _ANY):
            continue
        msg = message(line)
        if msg is None or (framed and not msg.framed):
            continue
        c = _match(msg.text)
        if c:
            yield line.strip(), c[0], c[1], msg.stamp


def _known(text):
    """_match() of a message's text, past the cheap word filter."""
    return _match(text) if any(w in text for w in _ANY) else None


# How the paste reader took one line: its text, stamp, whether a header
# stood before it, and whether it was read as a continuation.
Read = collections.namedtuple("Read", "text stamp framed continuation")
MAX_SEEN = 1 << 16


def read_paste(lines):
    """(Read of each line, the paste.Log): how the paste reader took a
    recorded log line by line, whatever its text says (a marker of a
    test's own, no kernel phrase)."""
    seen, log = [], _paste.Log()
    for _ in _recorded(lines, log, _paste.Budget(), seen):
        pass
    return seen, log


def _recorded(lines, log, budget=None, seen=None):
    """messages() of a recorded log: its transport encodings undone
    (paste.decoded()), each line's prefixes stripped and its header read
    by cbcontract.paste (a header of another facility, transport or
    program refuses the line), the rules matched at the message's start
    as everywhere.  A record's continuation is never a record: a line
    indented more than the last record line (at the same quoting depth;
    a truly empty line ends a block, so a paste indented as a whole is
    read at its own indentation) or carried after a console's login
    prompt continues the record before it.  A continuation, and once a
    line with a header was read a bare line, is read only as the second
    half of a line a mail client wrapped: rejoined to the line before it
    (one space between) when that line is not known alone and the two
    together are one; nothing else is guessed.  JSON and export entries
    are quoted as "[stamp] message".  Yields (line, kind, detail, stamp,
    (wall, cut)): wall the seconds of the day of a wall-clock header (for
    a paste's order), cut whether a pager cut the line.  seen: a list
    given gets each line's Read (at most MAX_SEEN)."""
    framed = False
    held = None  # (line, Head): the last line, not known alone (a wrapped line's first half?)
    ref = None  # (indent, depth) of the last line read as a record's start
    for line, cut in _paste.decoded(lines, log, budget):
        if ("$" in line[:300] or "#" in line[:300]) and len(log.commands) < 4:
            cmd = _paste.command(line)
            if cmd:
                log.commands.append(cmd)
                held = None
                continue
        h = log.export_line(line)
        if h is False:
            if not line.strip():
                held = None
                if not line:
                    ref = None
                continue
            if len(line) > MAX_LINE and not line.lstrip(" \t>").startswith("{"):
                line = line[:MAX_LINE]
            h = _paste.head(line, cut)
        if h is None:
            held = None
            continue
        entry = h.fmt in ("journalctl -o json", "journalctl -o export")
        cont = not entry and (h.console or (ref is not None and h.depth == ref[1] and h.indent > ref[0]))
        if cont:
            log.consoles += h.console
        else:
            log.saw(h, line)
        if seen is not None and len(seen) < MAX_SEEN:
            seen.append(Read(h.text, h.stamp, h.framed, bool(cont)))
        if entry:
            line = "[%12.6f] %s" % (h.stamp, h.text) if h.stamp is not None else h.text
        elif cont:
            # A continuation: never a record; only a wrapped line's second half.
            if h.framed or h.console:
                log.continuations += 1
            joined = _known(held[1].text.rstrip() + " " + h.text.strip()) if held is not None else None
            if joined:
                log.rejoined += 1
                yield held[0].strip() + " " + h.text.strip(), joined[0], joined[1], held[1].stamp, (held[1].wall, cut)
            held = None
            continue
        else:
            ref = (h.indent, h.depth)
            log.indented = log.indented or (h.depth == 0 and h.indent > 0)
        c = _known(h.text) if h.framed or not framed else None
        if c is None and h.cut and (h.framed or not framed):
            c = _match(h.text, cut=True)
        if c is None and held is not None and not h.framed and h.depth == held[1].depth:
            joined = _known(held[1].text.rstrip() + " " + h.text.strip())
            if joined:
                log.rejoined += 1
                yield held[0].strip() + " " + h.text.strip(), joined[0], joined[1], held[1].stamp, (held[1].wall, cut)
                held = None
                continue
        framed = framed or h.framed
        # Only a line read alone may begin a wrapped one: in a log with
        # headers, a bare line never does (a file name's newline).
        held = (line, h) if c is None and (h.framed or not framed) else None
        if c:
            yield line.strip(), c[0], c[1], h.stamp, (h.wall, h.cut)


TSC_NAMES = names.TSC_NAMES


def switched_to(line):
    """The clocksource a 'Switched to clocksource' line names, else None."""
    c = classify(line)
    return c[1]["to"] if c and c[0] == "switched" else None


def gives_up_tsc(kind, detail):
    """Whether a classified line says the kernel gave up the TSC: tsc.c's
    'Marking TSC unstable' (any reason) or a watchdog verdict on tsc or
    tsc-early (a verdict that names no clocksource is on the current one,
    which these lines come from only when it is the TSC)."""
    return kind == "unstable" or (kind in VERDICTS and detail.get("marked", detail.get("cs")) in TSC_NAMES + (None,))


def marks_tsc_unstable(line):
    """gives_up_tsc() of one line."""
    c = classify(line)
    return bool(c) and gives_up_tsc(*c)


# One boot's log, read as a whole.
WHY_TEXT = {"boot_warp": "warp at boot", "watchdog": "watchdog", "by_hand": "by hand",
            "cmdline": "tsc=unstable", "set_at_boot": "clocksource= at boot", "other": "another reason"}
# Which of the watchdog's tests failed, in words (a verdict's kind).
TEST_TEXT = {"verdict/skew": "skew", "verdict/readback": "read-back", "verdict/freq-skew": "frequency",
             "verdict/cpu-skew": "inter-CPU"}
MAX_KEPT = 8  # near-miss lines quoted per boot (all are counted)
MAX_EVIDENCE = 32  # lines of a loss quoted per boot
MAX_SWITCH_TIMES = 256  # stamped switches kept per boot (the last ones)
MAX_EVENTS = 32  # lines that gave up the TSC kept per boot: the first and the last ones (a paste may run newest first)

_OPTION = re.compile(r"(?:^|\s)(tsc|clocksource)=([\w.,-]{1,64})(?=\s|$)")


def cmdline_options(cmdline):
    """({tsc, clocksource: the last value}, [every tsc= value in order]) of
    a kernel command line: only values of the kernel's own shape are
    read (and so ever quoted)."""
    found = _OPTION.findall(cmdline or "")
    return dict(found), [v for k, v in found if k == "tsc"]


def _cause_of(kind, d):
    """The cause one line that gave up the TSC names: boot_warp, watchdog,
    cmdline or other."""
    if kind in ("warp", "sync-check"):
        return "boot_warp"
    if kind == "unstable":
        c = d["cause"]
        return c if c in ("boot_warp", "watchdog", "cmdline") else "other"
    return "watchdog"


def _unsure(kind, d, cut):
    """Why the line that names the cause may be a fragment (None when it
    is whole): a pager cut it, or its free text ends where a transport or
    a pager cuts (a soft line break's "=", a ">" or an ellipsis)."""
    if cut:
        return "the line was cut by a pager: its end is missing"
    reason = d.get("reason") if kind == "unstable" else None
    if reason is not None and d.get("cause") == "other" and reason.rstrip().endswith(("=", ">", "\u2026", "...")):
        return "its reason %r ends as a cut line does (a mail's soft line break, a pager)" % reason[-40:]
    return None


def summarize(lines, recorded=False, budget=None):
    """One boot's kernel log (lines, read once, in bounded memory): whether
    the TSC was kept, lost (when, why, the line that says so, the warp's
    cycles, which of the watchdog's tests failed) or never chosen, its
    watchdog near misses counted by kind, the hypervisor the kernel
    detected, AMD's P0 firmware line and the boot's own command line.
    tsc is "kept", "lost", "not chosen" (the kernel never switched to it)
    or "unknown" (no line says: a log cut short or rotated).  The first
    line that gave up the TSC, by its stamps (a paste newest first is
    read in its stamps' order), names the cause; the lines of the same
    loss after it are its consequences (consequences), never a cause of
    their own.  This is the one reading of a log: health's single log,
    its boots and the lab all use it.  With recorded, the lines are a
    recorded log read as a paste (messages()'s paste, within budget:
    paste.BUDGET when None), format names the format read (else None),
    warnings what the reader says of its trust, and unsure why the line
    that names the cause may be a fragment (else None)."""
    s = {"tsc": "unknown", "why": None, "reason": None, "at_s": None, "line": None, "cycles": None,
         "verdict": None, "verdict_line": None, "tests": [], "switches": [], "near_misses": {},
         "near_miss_lines": [], "tsc_adjust": 0, "evidence": [], "switch_lines": [],
         "hypervisor": None, "firmware": None, "cmdline": None, "consequences": [], "unsure": None,
         "warnings": []}
    first_switch_away = None
    switches, switch_lines = collections.deque(maxlen=64), collections.deque(maxlen=4)  # the last ones only
    first_switches = []  # the first 64: the last ones of a paste newest first
    # When each switch came (seconds since boot), the last MAX_SWITCH_TIMES:
    # what the VMs started since lived through (cbhost.heal).
    times, n_times = collections.deque(maxlen=MAX_SWITCH_TIMES), 0
    # The lines that gave up the TSC: (stamp, wall, index, line, kind, detail, cut).
    events_first, events_last, n = [], collections.deque(maxlen=MAX_EVENTS // 2), 0
    log = _paste.Log() if recorded else None
    # Framed records (klog.Records) are read by their own messages().
    framed = getattr(lines, "messages", None)
    for item in (framed() if framed else _recorded(lines, log, budget) if recorded else messages(lines)):
        line, kind, d, stamp = item[:4]
        wall, cut = item[4] if len(item) > 4 else (None, False)
        n += 1
        if kind == "switched":
            if switches and switches[-1] in TSC_NAMES and d["to"] not in TSC_NAMES:
                first_switch_away = first_switch_away or (line, stamp)
            switches.append(d["to"])
            if len(first_switches) < 64:
                first_switches.append(d["to"])
            if stamp is not None:
                times.append([stamp, d["to"]])
                n_times += 1
            switch_lines.append(line)
            continue
        if kind in NEAR_MISSES:
            s["near_misses"][kind] = s["near_misses"].get(kind, 0) + 1
            if len(s["near_miss_lines"]) < MAX_KEPT:
                s["near_miss_lines"].append(line)
            if kind == "near-miss/remote-timeout" and len(s["evidence"]) < MAX_EVIDENCE:
                s["evidence"].append(line)
            continue
        if kind == "info/hypervisor":
            s["hypervisor"] = s["hypervisor"] or d["hypervisor"][:40]
            continue
        if kind == "info/p0":
            s["firmware"] = s["firmware"] or line
            continue
        if kind == "info/cmdline":
            if s["cmdline"] is None and not cut:
                s["cmdline"] = d["cmdline"][:1024]
            continue
        if kind == "tsc-adjust":
            s["tsc_adjust"] += 1
        elif kind in ("warp", "sync-check", "unstable") or (kind in VERDICTS and gives_up_tsc(kind, d)):
            ev = (stamp, wall, n, line, kind, d, cut)
            if len(events_first) < MAX_EVENTS // 2:
                events_first.append(ev)
            else:
                events_last.append(ev)
        else:
            continue
        if len(s["evidence"]) < MAX_EVIDENCE:
            s["evidence"].append(line)
    rev = bool(log and log.reversed())
    events = events_first + list(events_last)
    # The order of the events: the log's own (the kernel's record order),
    # read from its end when its stamps fall (journalctl -r).  Never
    # sorted by stamp: 2.6's printk stamps jump back when the TSC is
    # marked unstable (sched_clock leaves it).
    events.sort(key=lambda e: e[2], reverse=rev)
    sw = list(reversed(first_switches)) if rev else list(switches)
    if rev and first_switch_away is None and any(a in TSC_NAMES and b not in TSC_NAMES for a, b in zip(sw, sw[1:])):
        first_switch_away = (None, None)
    s["switches"], s["switch_lines"] = sw, list(switch_lines)
    s["switch_times"], s["switch_times_cut"] = sorted(times) if rev else list(times), n_times > len(times)
    verdicts = [e for e in events if e[4] in VERDICTS]
    if verdicts:
        s["verdict_line"], s["verdict"] = verdicts[0][3], verdicts[0][4]
    if events:
        first = events[0]
        why = _cause_of(first[4], first[5])
        s["tsc"], s["why"] = "lost", why
        same = [e for e in events if _cause_of(e[4], e[5]) == why]
        whole = [e for e in same if not e[6]] or same  # a line a pager cut counts only where no whole one says it
        if why == "boot_warp":
            warps = [e for e in whole if e[4] == "warp"]
            withc = [e for e in warps if e[5].get("cycles") is not None]
            pick = (withc or warps or whole)[0]
            s["cycles"] = pick[5].get("cycles") if pick[4] == "warp" else None
        elif why == "watchdog":
            # The watchdog's own verdict says more than tsc.c's echo of it.
            pick = next((e for e in whole if e[4] in VERDICTS), whole[0])
        else:
            pick = whole[0]
            s["reason"] = pick[5]["reason"]
        s["line"], s["at_s"] = pick[3], pick[0]
        s["unsure"] = _unsure(pick[4], pick[5], pick[6])
        if first[6] and not s["unsure"] and any(_cause_of(e[4], e[5]) != why for e in events if not e[6]):
            s["unsure"] = "the loss's first line was cut by a pager, and a later whole line names another cause"
        s["consequences"] = [e[3] for e in events if _cause_of(e[4], e[5]) != why][:MAX_KEPT]
        s["tests"] = list(dict.fromkeys(TEST_TEXT[e[4]] for e in same if e[4] in VERDICTS))
    elif first_switch_away and s["switches"][-1] not in TSC_NAMES:
        s["tsc"], s["why"], s["line"] = "lost", "by_hand", first_switch_away[0]
        s["at_s"] = first_switch_away[1]
    elif s["switches"]:
        s["tsc"] = "kept" if s["switches"][-1] in TSC_NAMES else "not chosen"
    # The boot's own parameters: a loss no line explains, or a TSC never chosen.
    opts, tsc_vals = cmdline_options(s["cmdline"])
    if s["why"] in (None, "by_hand") and s["tsc"] in ("lost", "not chosen"):
        if any("unstable" in v.split(",") for v in tsc_vals):
            s["tsc"], s["why"] = "lost", "cmdline"
        elif opts.get("clocksource") and opts["clocksource"] not in TSC_NAMES:
            s["tsc"], s["why"] = "lost", "set_at_boot"
    s["format"] = log.name() if log else None
    s["warnings"] = log.warnings() if log else []
    if log and s["tsc"] == "unknown" and not s["evidence"] and not s["near_misses"]:
        s["warnings"].append("no clock line was read in this paste (read as: %s): if it holds one, give the raw "
                             "log (dmesg > file, or journalctl -k -o short-monotonic --no-pager > file)" % s["format"])
    if s["unsure"]:
        s["warnings"].append("not sure of the cause: %s; paste the raw log (dmesg > file, or journalctl -k -o "
                             "short-monotonic --no-pager > file) and give that file" % s["unsure"])
    return s


def boots_line(summaries):
    """One line over many boots' summaries, e.g. "40 of 40 boots lost the
    TSC: warp at boot", "2 of 10 boots lost the TSC (1 watchdog, 1 by
    hand); 8 kept it; near misses in 3"."""
    n = len(summaries)
    if not n:
        return "no boots read"
    lost = [s for s in summaries if s["tsc"] == "lost"]
    whys = collections.Counter(s["why"] for s in lost)
    parts = []
    if lost:
        if len(whys) == 1:
            parts.append("%d of %d boots lost the TSC: %s" % (len(lost), n, WHY_TEXT[next(iter(whys))]))
        else:
            parts.append("%d of %d boots lost the TSC (%s)" % (len(lost), n, ", ".join(
                "%d %s" % (c, WHY_TEXT[w]) for w, c in whys.most_common())))
    else:
        parts.append("0 of %d boots lost the TSC" % n)
    states = collections.Counter(s["tsc"] for s in summaries)
    for state, words in (("kept", "kept it"), ("not chosen", "never chose it"), ("unknown", "say nothing of it (log cut short?)")):
        if states[state]:
            parts.append("%d %s" % (states[state], words))
    near = sum(1 for s in summaries if s["near_misses"])
    if near:
        parts.append("watchdog near misses in %d" % near)
    cycles = sorted(s["cycles"] for s in lost if s.get("cycles") is not None)
    if cycles:
        med = cycles[len(cycles) // 2] if len(cycles) % 2 else (cycles[len(cycles) // 2 - 1] + cycles[len(cycles) // 2]) // 2
        parts.append("warps of %d cycles" % cycles[0] if len(cycles) == 1 else
                     "warps of %d to %d cycles, median %d" % (cycles[0], cycles[-1], med))
    return "; ".join(parts)
