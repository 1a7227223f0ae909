#!/usr/bin/python3
# tier: fast
"""health-kmsg.t: contract/cbcontract/kmsg.py on real kernel lines of each era.

tests/host-scripts/fixtures/kmsg/lines.txt: KIND | LINE, each under a comment
saying where it came from.  Every line gets its kind; every kind of KINDS
has a line; the figures of a few lines come out as read by hand; removing
one pattern makes its lines fail (the classifier is checked, not trusted);
guest-init/facts.c's own list of phrases agrees with this one.
"""
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path[:0] = [os.path.join(TOP, "contract"), os.path.join(TOP, "tests", "lib")]
from cbcontract import kmsg  # noqa: E402
from taplib import Tap  # noqa: E402

t = Tap()
FX = os.path.join(TOP, "tests", "host-scripts", "fixtures", "kmsg", "lines.txt")
cases = []
legacy = set()  # lines of 2.6- and 3.x-era kernels ("legacy"): no guest of today's host prints them
where = ""
for raw in open(FX, encoding="utf-8"):
    if raw.startswith(("# from:", "# constructed:")):
        where = raw
    if raw.startswith("#") or not raw.strip():
        continue
    kind, line = raw.rstrip("\n").split(" | ", 1)
    cases.append((kind, line))
    if "2.6" in where or "legacy" in where:
        legacy.add(line)


def kind_of(line, mod=kmsg):
    c = mod.classify(line)
    return c[0] if c else "-"


wrong = [(k, kind_of(l), l) for k, l in cases if kind_of(l) != k]
t.ok(not wrong, "every fixture line (%d) gets its kind" % len(cases), "\n".join("want %s got %s: %s" % w for w in wrong))
missing = [k for k in kmsg.KINDS if k not in {k for k, _ in cases}]
t.ok(not missing, "every kind has a real or constructed line (%d kinds)" % len(kmsg.KINDS), missing)

lkml = "[ 13.669682] clocksource: timekeeping watchdog on CPU6: hpet read-back delay of 60666ns, attempt 4, marking unstable"
t.ok(kmsg.classify(lkml) == ("verdict/readback", {"cpu": 6, "watchdog": "hpet", "delay_ns": 60666, "attempt": 4}),
     "5.14 read-back verdict: CPU, watchdog, delay and attempt", kmsg.classify(lkml))
feng = ("clocksource: timekeeping watchdog on CPU227: wd-tsc-wd excessive read-back delay of 153560ns vs. limit of "
        "125000ns, wd-wd read-back delay only 11440ns, attempt 3, marking tsc unstable")
d = kmsg.classify(feng)[1]
t.ok((d["delay_ns"], d["limit_ns"], d["wd_wd_ns"], d["attempt"], d["marked"]) == (153560, 125000, 11440, 3, "tsc"),
     "6.3+ read-back verdict: delay, limit, wd-wd delay, attempt, what was marked", d)
d = kmsg.classify("Measured 6601281288 cycles TSC warp between CPUs, turning off TSC clock.")[1]
t.ok(d == {"cycles": 6601281288}, "boot warp: its cycle count (the blog's 6601281288)", d)
got = [kmsg.classify(l)[1]["cause"] for l in (
    "tsc: Marking TSC unstable due to clocksource watchdog",
    "tsc: Marking TSC unstable due to check_tsc_sync_source failed",
    "Marking TSC unstable due to: check_tsc_sync_source failed.",
    "tsc: Marking TSC unstable due to boot parameter",
    "tsc: Marking TSC unstable due to something new")]
t.ok(got == ["watchdog", "boot_warp", "boot_warp", "cmdline", "other"], "the causes of 'Marking TSC unstable'", got)
d = kmsg.classify("clocksource: Long readout interval, skipping watchdog check: cs_nsec: 8022630082 wd_nsec: 8022627385")[1]
t.ok(d == {"cs_ns": 8022630082, "wd_ns": 8022627385}, "long readout interval: both intervals", d)
t.ok(kmsg.classify("clocksource: Watchdog hpet read timed out. Readout sequence took: 61234ns")[1]
     == {"watchdog": "hpet", "seq_ns": 61234}, "the rewrite's read timeout: the readout's length")

# Which lines mark the TSC lost, for the lab's assertions.
lost = [l for k, l in cases if kmsg.marks_tsc_unstable(l)]
t.ok(all(kind_of(l) in ("unstable",) + kmsg.VERDICTS for l in lost) and
     not kmsg.marks_tsc_unstable("clocksource: timekeeping watchdog on CPU2: Marking clocksource 'kvm-clock' as unstable because the skew is too large:")
     and kmsg.marks_tsc_unstable("clocksource: Marking clocksource tsc unstable due to frequency skew"),
     "marks_tsc_unstable: tsc.c's line and the verdicts on tsc, not on another clocksource")
t.ok(kmsg.switched_to("[ 13.673148] clocksource: Switched to clocksource hpet") == "hpet" and
     kmsg.switched_to("Switching to clocksource acpi_pm") == "acpi_pm" and kmsg.switched_to("tsc: Detected") is None,
     "switched_to: both eras' phrase")

# Hostile lines: bounded and linear (a long line is cut, never scanned whole).
t.ok(kmsg.classify("x" * 10 ** 6) is None and kmsg.classify(None) is None and
     kind_of("Marking TSC unstable due to " + "a" * 5000) == "unstable", "a megabyte line, None, a long reason")

# Every pattern has a line here (so each is tried below), not only every kind.
def rule_of(line):
    msg = kmsg.message(line)
    return next((i for i, (_, rx) in enumerate(kmsg._RULES) if msg and rx.match(msg[0])), None)


unused = [kmsg.RULES[i][1][:60] for i in range(len(kmsg.RULES)) if i not in {rule_of(l) for _, l in cases}]
t.ok(not unused, "every pattern (%d) has a fixture line" % len(kmsg.RULES), unused)

# Any local user writes into kernel records: a crashing program's name (15
# characters, its comm) starts the segfault line, its file name ends it
# (show_signal_msg(), print_vma_addr()).  A record shaped so, for every
# fixture line (every pattern), in every log format read, is refused: the
# comm is the message's first 15 characters, the file name the message.
HEADS = ("", "[ 1234.567890] ", "Dec  1 12:00:00 host kernel: ", "2026-12-01T12:00:00.000000+00:00 host kernel: ",
         "[ 1234.567890] host kernel: ", "kernel: [ 1234.567890] ", "6,4242,1234567890,-;", "4,4242,1234567890,-,caller=T1234567;")
forged = []
for kind, line in cases:
    if kind == "-":
        continue
    text = kmsg.message(line)[0]
    for comm in {text[:15], text[text.find(": ") + 2:][:15] if ": " in text else text[:15], text[:14] + " "}:
        for head in HEADS:
            rec = "%s%s[31337]: segfault at 0 ip 0000000000401000 sp 00007ffd5e3f1a00 error 4 in %s[401000+1000]" % (head, comm, text)
            if kmsg.classify(rec) is not None or kmsg.summarize([rec])["tsc"] != "unknown":
                forged.append(rec)
t.ok(not forged, "segfault-shaped records of every fixture line, in %d log formats: none known" % len(HEADS),
     "\n".join(forged[:5]))

# The file name may hold a newline: journalctl prints the rest indented
# and dmesg may print it bare.  In a log whose lines carry timestamps, a
# bare line is a continuation, never a message.
evil = "Marking TSC unstable due to clocksource watchdog"
log = ["[    0.000000] Linux version 6.1.0", "[    2.100000] clocksource: Switched to clocksource tsc",
       "[  100.000000] a.out[31337]: segfault at 0 ip 0000000000401000 sp 00007ffd5e3f1a00 error 4 in x",
       "tsc: " + evil + "[401000+1000]", "clocksource: Switched to clocksource hpet",
       "                              tsc: " + evil]
s = kmsg.summarize(log)
t.ok(s["tsc"] == "kept" and s["switches"] == ["tsc"], "a timestamped log's bare lines (a file name's newline) are not read",
     (s["tsc"], s["switches"]))
t.ok(kmsg.summarize(["tsc: " + evil, "clocksource: Switched to clocksource hpet"])["why"] == "watchdog",
     "a log without timestamps (quoted lines) is read line by line")

# A record is the kernel's only with facility 0: what a program writes to
# /dev/kmsg never is.  CONFIG_PRINTK_CALLER's caller field (a 7-digit pid)
# is a header like any other.
t.ok(kmsg.classify("6,12,3456,-;tsc: " + evil) and kmsg.classify("6,12,3456,-,caller=T1234567;tsc: " + evil)
     and kmsg.classify("<4>tsc: " + evil) and kmsg.classify("kern  :info  : [    1.234567] tsc: " + evil)
     and kmsg.classify("14,12,3456,-;tsc: " + evil) is None and kmsg.classify("<12>tsc: " + evil) is None
     and kmsg.classify("user  :info  : [    1.234567] tsc: " + evil) is None,
     "kmsg records, raw priorities and dmesg -x facilities: kern read, user refused")

# Removing one pattern: its lines are no longer known (the test can fail).
class Without:
    def __init__(self, kind):
        self._rules = [(k, re.compile(p)) for k, p in kmsg.RULES if k != kind]

    def classify(self, line):
        saved = kmsg._RULES
        kmsg._RULES = self._rules
        try:
            return kmsg.classify(line)
        finally:
            kmsg._RULES = saved


for kind in ("near-miss/retried", "verdict/readback", "near-miss/skip"):
    w = Without(kind)
    broken = [l for k, l in cases if k == kind and kind_of(l, w) != k]
    t.ok(broken and len(broken) == sum(1 for k, _ in cases if k == kind),
         "without the %s pattern, its %d lines fail (seen failing)" % (kind, len(broken)))

# guest-init/facts.c keeps its own phrases (C): each one is a phrase this
# module knows (a fixture line holding it is classified), and every line
# that decides a guest's verdict (a switch, a loss, a warp, a watchdog
# verdict or near miss) holds one of them, so /init keeps it.
src = open(os.path.join(TOP, "guest-init", "facts.c"), encoding="utf-8").read()
arr = re.search(r"log_patterns\[\]\s*=\s*\{(.*?)\};", src, re.S).group(1)
phrases = re.findall(r'"((?:[^"\\]|\\.)*)"', arr)
t.ok(len(phrases) >= 5, "facts.c's phrases read (%d)" % len(phrases))
unknown = [p for p in phrases if not any(p in l and kind_of(l) != "-" for _, l in cases)]
t.ok(not unknown, "every facts.c phrase is in a line kmsg.py knows", unknown)
deciding = [l for k, l in cases if l not in legacy and (k in ("switched", "unstable", "warp") or k.startswith(("verdict/", "near-miss/")))]
dropped = [l for l in deciding if not any(p in l for p in phrases)]
t.ok(not dropped, "every deciding line (%d) holds a facts.c phrase, so a guest keeps it" % len(deciding), "\n".join(dropped))
for flag, test, kinds in (("tsc_unstable", ('"Marking TSC unstable"', "\"'tsc' as unstable\""), None),
                          ("tsc_warp", ('"TSC warp"',), ("warp",))):
    body = re.search(r"if \(([^)]*\)[^{;]*)\)\s*\n\s*lf->%s = 1;" % flag, src)
    t.ok(body and all(x in body.group(1) for x in test), "facts.c sets %s on the phrases kmsg.py reads the same way" % flag,
         body.group(1) if body else "no condition for %s" % flag)

# One boot's log as a whole: kept, lost by hand, never chosen, unknown.
sw = ["[    0.91] clocksource: Switched to clocksource tsc-early", "[    2.11] clocksource: Switched to clocksource tsc"]
got = [(x["tsc"], x["why"], x["at_s"]) for x in map(kmsg.summarize, (
    sw, sw + ["[  612.50] clocksource: Switched to clocksource hpet"],
    ["[    0.10] clocksource: Switched to clocksource kvm-clock"], ["random: crng init done"],
    sw + ["[  612.50] clocksource: Switched to clocksource hpet", "[  700.00] clocksource: Switched to clocksource tsc"]))]
t.ok(got == [("kept", None, None), ("lost", "by_hand", 612.5), ("not chosen", None, None), ("unknown", None, None),
             ("kept", None, None)], "summarize: kept; left by hand at 612.5 s; never chosen; nothing said; back by hand", got)

# The kernel table (contract/cbcontract/kernels.py, its own reading of each
# era) lists the lines each era prints: every one, made a line from its
# format, is known here, as the same kind.  The skip test's first line
# (wd-wd) is a detail here, so that one skip counts once.
try:
    from cbcontract import kernels
except ImportError:
    kernels = None
if kernels is None or not hasattr(kernels, "all_messages"):
    t.skip("no kernel table with all_messages() (contract/cbcontract/kernels.py)")
else:
    sub = [(r"%\*pbl", "1-3"), (r"%\d*s", "tsc"), (r"%\d*(?:ll|l|L)?[du]", "4242"), (r"%\d*llx", "abc123")]

    def sample(m):
        line = m["prefix"] + m["fmt"].rstrip("\n")
        for rx, val in sub:
            line = re.sub(rx, val, line)
        return line

    EXCEPT = {("near-miss/skip", "wd-wd read-back delay of"): "detail/wd-wd"}
    bad = []
    for era, m in kernels.all_messages():
        want = next((v for (k, ph), v in EXCEPT.items() if m["kind"] == k and ph in m["fmt"] and "clock-skew" not in m["fmt"]),
                    m["kind"])
        got = kind_of(sample(m))
        if got != want:
            bad.append("%s: want %s got %s: %s" % (era, want, got, sample(m)))
    t.ok(not bad, "every line of every era in the kernel table (%d) is known, as the table's kind" %
         len(kernels.all_messages()), "\n".join(bad))
sys.exit(t.done())
