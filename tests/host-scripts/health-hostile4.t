#!/usr/bin/python3
# tier: fast
"""health-hostile4.t: the paste reader against issue 44's audit (round 4): a record's continuation is never a
record, journal JSON is parsed whole, a syslog paste is said to be forgeable, the reader stops at its budget and says
so; the first cause wins, a recorded log's own command line is read, and a fragment never gives a confident cause
(TAP).  Each check failed on main afb2626."""
import json
import os
import random
import shutil
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path[:0] = [os.path.join(TOP, "contract"), os.path.join(TOP, "tests", "lib")]
from cbcontract import kmsg, paste  # noqa: E402
from taplib import HealthInProcess, Tap, read  # noqa: E402

t = Tap()
FX = os.path.join(TOP, "tests", "host-scripts", "fixtures", "kmsg")
_health = HealthInProcess(t.tmp)
hc, _n, run = _health.hc, _health.n, _health.run


def put(name, lines):
    path = os.path.join(t.tmp, name)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("\n".join(lines) + "\n")
    return path


def judged(path):
    """(cause, cause_line, the boots view's line) of health --log PATH --boots (PATH alone)."""
    boots = os.path.join(t.tmp, "boots%d" % next(_n))
    os.mkdir(boots)
    shutil.copy(path, os.path.join(boots, "0"))
    d = json.loads(run(["--log", path, "--boots", boots])[0])
    return d["cause"], d["cause_line"], d["boots"]["summary"], d


# 1. A record's continuation is never a record.  A LF in a crashing
# program's name or file name: dmesg and journalctl indent the rest of the
# record; a console prints it raw after getty's prompt.  The user's own
# stamp and a clock phrase follow (a file misleads no one).
VERDICT = "clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:"
SEG = "cbt[31058]: segfault at 0 ip 000055a8ea677132 sp 00007ffcb630ef80 error 6 in cbt"
SW = "[    1.316614] clocksource: Switched to clocksource tsc"
SHAPES = {
    "dmesg": [SW, "[  264.980127] " + SEG, " " * 15 + "[  950.000000] " + VERDICT,
              " " * 15 + "[  950.000001] tsc: Marking TSC unstable due to clocksource watchdog"],
    "journalctl -o short-monotonic": ["[    1.316614] kernel: clocksource: Switched to clocksource tsc",
                                      "[  264.980127] kernel: " + SEG,
                                      " " * 23 + "[  950.000000] " + VERDICT],
    "journalctl -o short": ["Dec 24 21:07:07 pc kernel: clocksource: Switched to clocksource tsc",
                            "Dec 24 21:47:28 pc kernel: " + SEG,
                            " " * 27 + "[  950.000000] " + VERDICT],
    "a console's prompt": [SW, "[  264.980127] " + SEG, "myhost login: [  950.000000] " + VERDICT],
    "mail-quoted dmesg": ["> " + SW, "> [  264.980127] " + SEG, ">                [  950.000000] " + VERDICT],
    "dmesg, the paste indented by 4": ["    " + SW, "    [  264.980127] " + SEG, " " * 19 + "[  950.000000] " + VERDICT],
    "dmesg, the continuation after a blank continuation": [SW, "[  264.980127] " + SEG, " " * 15,
                                                           " " * 15 + "[  950.000000] " + VERDICT],
}
for what, lines in SHAPES.items():
    cause, line, boots, d = judged(put("cont-%d.log" % next(_n), lines))
    t.ok(cause == "unknown" and line is None and boots.startswith("0 of 1 boots lost the TSC"),
         "a continuation is never a record: %s (no cause, no boot lost)" % what, (cause, line, boots))
# ... and a paste indented as a whole is dedented as a whole: its records,
# at its own indentation, are read; the continuation, deeper, is not.
lines = ["Here is what dmesg said:", "", "    " + SW, "    [  264.980127] " + SEG, " " * 19 + "[  950.000000] " + VERDICT,
         "    [  970.500000] " + VERDICT.replace("CPU1", "CPU0"), "    [  970.500010] clocksource: Switched to clocksource hpet"]
cause, line, boots, d = judged(put("indented.log", lines))
t.ok(cause == "watchdog" and line and "970.500000" in line and "indented" in d["kernel_log"]["format"],
     "a paste indented as a whole is read at its own indentation (the verdict at 970.5 s, not the continuation's)",
     (cause, line, d["kernel_log"]["format"]))

# 2. Journal JSON parsed whole: _TRANSPORT=kernel must be there, wherever
# journalctl put it and however long the fields before it.
rng = random.Random(44)
entries = [json.dumps({"_TRANSPORT": "kernel", "MESSAGE": "clocksource: Switched to clocksource tsc",
                       "_SOURCE_MONOTONIC_TIMESTAMP": "1316614", "SYSLOG_FACILITY": "0"})]
for i in range(20):
    e = {"MESSAGE": "clocksource: Switched to clocksource hpet", "__MONOTONIC_TIMESTAMP": str(2000000 + i),
         "USER_FIELD": "x" * rng.randrange(1500, 6000), "SYSLOG_IDENTIFIER": "kernel"}
    if i % 2:
        e["_TRANSPORT"] = "syslog"  # after the long field: past a 2 KiB window
    keys = list(e)
    rng.shuffle(keys)
    if i % 2:
        keys.remove("_TRANSPORT")
        keys.append("_TRANSPORT")
    entries.append(json.dumps({k: e[k] for k in keys}))
cause, line, boots, d = judged(put("journal.json", entries))
t.ok(cause == "unknown" and boots.startswith("0 of 1 boots lost the TSC; 1 kept it"),
     "journal JSON: 20 entries of a user's (no _TRANSPORT, or syslog after a long field) switch nothing",
     (cause, line, boots))
kern = {"USER_FIELD": "y" * 4000, "_TRANSPORT": "kernel", "MESSAGE": "clocksource: Switched to clocksource hpet",
        "__MONOTONIC_TIMESTAMP": "3000000"}
cause, line, boots, d = judged(put("journal2.json", entries[:1] + [json.dumps(kern)]))
t.ok(line and "hpet" in line and d["boots"]["boots"][0]["tsc"] == "lost",
     "journal JSON: a kernel entry whose _TRANSPORT follows a 4 KB field is still read", (cause, line, boots))

# 3. A syslog paste: any user can write a kernel: line there; the report says so.
d = json.loads(run(["--log", os.path.join(FX, "paste-syslog-rfc3164-pri.log")])[0])
out, _ = run(["--log", os.path.join(FX, "paste-syslog-rfc3164-pri.log")], fmt="text")
clean = json.loads(run(["--log", os.path.join(FX, "paste-dmesg-T-fr.log")])[0])
t.ok(any("logger -t kernel" in w for w in d["kernel_log"]["warnings"]) and "logger -t kernel" in out
     and not any("logger" in w for w in clean["kernel_log"]["warnings"]),
     "a syslog paste: the report says any user can write its kernel: lines (JSON and text); a dmesg paste: not",
     d["kernel_log"]["warnings"])

# 4. The reader's budget, for all recorded logs together, said when reached.
big = put("big.log", [SW] + ["[  %d.000000] ab" % (i % 100000) for i in range(60000)])
boots = os.path.join(t.tmp, "bigboots")
os.mkdir(boots)
for n in ("1", "2"):
    shutil.copy(big, os.path.join(boots, n))
saved = hc.paste.BUDGET
try:
    hc.paste.BUDGET = paste.Budget(nbytes=1 << 20)
    out, _ = run(["--log", big, "--boots", boots], fmt="text")
    hc.paste.BUDGET = paste.Budget(nbytes=1 << 20)
    d = json.loads(run(["--log", big, "--boots", boots])[0])
    hc.paste.BUDGET = paste.Budget(seconds=0.0)
    d2 = json.loads(run(["--log", big])[0])
finally:
    hc.paste.BUDGET = saved
said = "stopped at its budget"
t.ok(said in out and "boot 2: not read (health's reader stopped at its budget" in out
     and any(said in w for w in d["kernel_log"]["warnings"]) and d["boots"]["boots"][1]["tsc"] == "unknown",
     "the reader's budget (bytes): reading stops, the screen and the JSON say so, later boots are not read",
     out[-900:])
t.ok(any("s spent" in w for w in d2["kernel_log"]["warnings"]),
     "the reader's budget (time): reading stops and the report says so", d2["kernel_log"]["warnings"])
t.ok(paste.BUDGET.nbytes == 1 << 30 and paste.BUDGET.seconds == 60,
     "the default budget is the one docs/reliability.md states (1024 MiB, 60 s)")

# 5. The first cause wins; the later lines of the same loss are its consequences.
out, _ = run(["--log", os.path.join(FX, "paste-era-2.6.24-cpufreq.log")], fmt="text")
d = json.loads(run(["--log", os.path.join(FX, "paste-era-2.6.24-cpufreq.log")])[0])
t.ok(d["cause"] == "marked_unstable" and d["cause_detail"] == "cpufreq changes"
     and d["cause_consequences"] == ["[  302.800249] Clocksource tsc unstable (delta = -172853876 ns)"]
     and "then, its consequence: [  302.800249] Clocksource tsc unstable" in out,
     "2.6.24: cpufreq's rule is the cause, the watchdog's old-form line its consequence",
     (d["cause"], d["cause_detail"], d["cause_consequences"]))
d = json.loads(run(["--log", os.path.join(FX, "paste-era-2.6.22-c2-delta.log")])[0])
t.ok(d["cause"] == "marked_unstable" and d["cause_detail"] == "possible TSC halt in C2"
     and d["cause_consequences"] == ["[    5.216000] Clocksource tsc unstable (delta = -436490118 ns)"],
     "2.6.22: the C-state halt's rule is the cause, the watchdog's old-form line its consequence",
     (d["cause"], d["cause_detail"], d["cause_consequences"]))
# The same in a paste newest first (journalctl -r): read from its end.
rev = put("rev.log", ["Jul  3 22:38:42 pc kernel: [  302.800249] Clocksource tsc unstable (delta = -172853876 ns)",
                      "Jul  3 22:38:42 pc kernel: [  302.456369] Time: acpi_pm clocksource has been installed.",
                      "Jul  3 22:38:41 pc kernel: [  302.454862] Marking TSC unstable due to: cpufreq changes.",
                      "Jul  3 22:33:42 pc kernel: [    9.597715] Time: tsc clocksource has been installed."])
d = json.loads(run(["--log", rev])[0])
t.ok(d["cause"] == "marked_unstable" and d["cause_detail"] == "cpufreq changes" and "newest first" in
     d["kernel_log"]["format"], "newest first: the cause is the earliest loss, not the file's first line",
     (d["cause"], d["cause_detail"], d["kernel_log"]["format"]))

# 6. A recorded log's own "Kernel command line:" is that boot's parameters.
want = {"paste-era-2.6.22-c2-syslog.log": ([], None), "paste-era-2.6.22-c2-delta.log": ([], None),
        "paste-era-2.6.24-cpufreq.log": ([], None),
        "paste-era-5-prompt-cmdline.log": (["reliable"], "tsc")}
bad = []
for name, (tsc, cs) in want.items():
    d = json.loads(run(["--log", os.path.join(FX, name)])[0])
    k = d["kernel_cmdline"]
    if k["from"] != "the recorded log's 'Kernel command line:'" or k["tsc_all"] != tsc or k["clocksource"] != cs \
            or d["watchdog"]["working"]["cmdline_tsc"] != tsc:
        bad.append("%s: %r" % (name, k))
t.ok(not bad, "a recorded log's own command line is read (2.6.22, 2.6.24, 5.x: tsc=reliable reaches the watchdog view)",
     "\n".join(bad))
cs = put("cs-at-boot.log", ["[    0.000000] Kernel command line: BOOT_IMAGE=/vmlinuz-6.1.0-17-amd64 ro clocksource=hpet",
                            "[    1.100000] clocksource: Switched to clocksource hpet"])
d = json.loads(run(["--log", cs])[0])
t.ok(d["cause"] == "set_at_boot" and d["boots"]["boots"] == [] and d["kernel_cmdline"]["clocksource"] == "hpet",
     "clocksource=hpet on the recorded log's own command line: set at boot", (d["cause"], d["kernel_cmdline"]))

# 7. A fragment never gives a confident cause: a soft-broken reason in a
# mail that is not wholly quoted-printable (a bare '=' elsewhere).
frag = put("frag.log", ["[    0.000000] Kernel command line: ro quiet clocksource=tsc",
                        "[    1.316614] clocksource: Switched to clocksource tsc",
                        "[  950.000000] tsc: Marking TSC unstable due to clockso=",
                        "urce watchdog"])
d = json.loads(run(["--log", frag])[0])
out, _ = run(["--log", frag], fmt="text")
t.ok(d["cause"] == "unknown" and "raw log" in (d["cause_detail"] or "") and "not sure" in out,
     "a reason cut at a soft line break: no confident cause, the raw log asked for", (d["cause"], d["cause_detail"]))
# ... nor a line a pager cut: its known beginning counts, said as cut.
W = 80
cutlog = put("cut.log", [(x + " " * W)[:W - 1] + ">" if len(x) >= W else x for x in (
    "[    1.316614] clocksource: Switched to clocksource tsc (and more words for the pager's width to cut)",
    "[  950.000000] " + VERDICT, "[  950.000100] clocksource: Switched to clocksource hpet")])
d = json.loads(run(["--log", cutlog])[0])
t.ok(d["cause"] == "unknown" and "watchdog" in (d["cause_detail"] or "") and "cut by a pager" in d["cause_detail"]
     and d["cause_line"] and "950.000000" in d["cause_line"],
     "a verdict cut by less -S: its known beginning is read, the cause said as not sure", (d["cause"], d["cause_detail"]))
whole = json.loads(run(["--log", os.path.join(FX, "paste-less-S.log")])[0])
t.ok(whole["cause"] == "watchdog" and "8996.144274" in whole["cause_line"] and whole["kernel_log"]["unsure"] is None,
     "the same cut, with tsc.c's whole line after it: the whole line names the cause", whole["cause_line"])
# Free text that is all digits stays text (afb2626 raised AttributeError
# on "due to 0" and "Hypervisor detected: 1": a traceback, no report).
digits = put("digits.log", ["[    0.000000] Hypervisor detected: 1", "[    0.000000] Kernel command line: 1",
                            "[    1.316614] clocksource: Switched to clocksource tsc",
                            "[  950.000000] tsc: Marking TSC unstable due to 0"])
out, rc = run(["--log", digits])
try:
    d = json.loads(out)
except ValueError:
    d = None
t.ok(d is not None and d["cause"] == "marked_unstable" and d["cause_detail"] == "0",
     "a reason, a hypervisor or a command line of digits alone: read as text, a report given", out[-300:])
sys.exit(t.done())
