#!/usr/bin/python3
# tier: fast
"""health-paste.t: health --log and --boots read recorded logs as people paste them.

tests/host-scripts/fixtures/kmsg/paste-*.log: one file a format family,
each naming its public source (or the real tool that printed it where no
public paste was found) at its top; since issue 44 also the families no
list named (quoted-printable, HTML, journalctl -r, less -S, a Markdown
table, an agent's prefix and comment markers, a shell prompt,
short-monotonic) and logs of 2.6.22, 2.6.24 and 5.x where the first cause
and the boot's own command line are read.  health reads each as --log FILE
and as the one boot of --boots DIR: the verdict (kept or lost, why, when,
the warp's cycles, the near misses) and the format it names.  Then a
forged phrase placed mid-line (after a segfault record's file name), or
split over a file name's newline, is still no kernel line in a paste.
"""
import json
import os
import shutil
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path[:0] = [os.path.join(TOP, "contract"), os.path.join(TOP, "tests", "lib")]
from cbcontract import kmsg  # noqa: E402
from taplib import HealthInProcess, Tap, read  # noqa: E402

t = Tap()
FX = os.path.join(TOP, "tests", "host-scripts", "fixtures", "kmsg")
_health = HealthInProcess(t.tmp)
run = _health.run


# file: (tsc, why, at_s, cycles, near misses, the format's name holds)
CASES = {
    "paste-dmesg-T-fr.log": ("lost", "watchdog", None, None, {}, "dmesg -T (fr_FR)"),
    "paste-dmesg-T-de.log": ("lost", "watchdog", None, None, {}, "dmesg -T (de_DE)"),
    "paste-dmesg-T-delta-ja.log": ("lost", "watchdog", None, None, {}, "dmesg -T (ja_JP)"),
    "paste-dmesg-reltime-fr.log": ("lost", "watchdog", None, None, {}, "dmesg --time-format reltime"),
    "paste-dmesg-delta.log": ("lost", "watchdog", None, None, {}, "dmesg --time-format delta"),
    "paste-busybox-dmesg-r.log": ("kept", None, None, None, {}, "dmesg -r"),
    "paste-caller-id.log": ("kept", None, None, None, {}, "dmesg (printk caller id)"),
    # A line after a console's login prompt continues the record before it
    # (issue 44: a user's file name can put one there), so the verdict
    # after the prompt is not read; tsc.c's line after it is.
    "paste-console-login.log": ("lost", "watchdog", 77.120051, None, {},
                                "a console's login prompt before 2 lines (read as continuations)"),
    "paste-openwrt-logread.log": ("unknown", None, None, None, {"near-miss/skip": 3}, "OpenWrt logread"),
    "paste-rsyslog-rfc3339.log": ("unknown", None, None, None, {"near-miss/failover": 1}, "RFC 3339 stamps (rsyslog)"),
    "paste-syslog-rfc3164-pri.log": ("lost", "watchdog", None, None, {}, "syslog (RFC 3164, with priority)"),
    "paste-syslog-rfc5424.log": ("lost", "watchdog", None, None, {}, "syslog (RFC 5424)"),
    "paste-journal-short-fr.log": ("lost", "watchdog", None, None, {}, "journalctl -o short"),
    "paste-journal-short-full.log": ("lost", "watchdog", None, None, {}, "journalctl -o short-full"),
    "paste-journal-short-iso-precise.log": ("lost", "watchdog", None, None, {}, "journalctl -o short-iso-precise"),
    "paste-journal-short-unix.log": ("lost", "watchdog", None, None, {}, "journalctl -o short-unix"),
    "paste-journal-json.log": ("lost", "watchdog", 2.112443, None, {}, "journalctl -o json"),
    "paste-journal-export.log": ("lost", "watchdog", 2.112443, None, {}, "journalctl -o export"),
    "paste-mail-quoted.log": ("lost", "watchdog", None, None, {}, "quoted (2 levels of '>' stripped)"),
    "paste-mail-quoted-warp.log": ("lost", "boot_warp", 0.916542, 57359, {}, "dmesg; quoted (1 level"),
    "paste-mail-wrapped-warp.log": ("lost", "boot_warp", 0.92362, 2, {}, "dmesg; 2 wrapped lines rejoined"),
    "paste-indented-wrapped.log": ("lost", "watchdog", None, None, {}, "indented, 3 wrapped lines rejoined"),
    # Issue 44: formats outside the old list, found by their structure.
    "paste-journal-short-monotonic.log": ("lost", "watchdog", 2422.148871, None, {}, "journalctl -o short-monotonic"),
    "paste-mail-qp.log": ("lost", "watchdog", 1346249.931484, None, {}, "dmesg; quoted-printable decoded"),
    "paste-forum-html.log": ("lost", "watchdog", 8996.144253, None, {}, "dmesg; html decoded"),
    "paste-journal-reverse.log": ("lost", "watchdog", 257.502141, None, {}, "newest first (read from its end), "
                                  "printed by: journalctl -r -k"),
    "paste-less-S.log": ("lost", "watchdog", 8996.144274, None, {}, "dmesg; 5 lines cut by a pager"),
    "paste-markdown-table.log": ("lost", "watchdog", 384.25894, None, {}, "a Markdown table's cells"),
    "paste-agent-comment.log": ("lost", "watchdog", 257.502141, None, {}, "comment markers stripped, an agent's level "
                                "prefix stripped"),
    "paste-era-5-prompt-cmdline.log": ("lost", "watchdog", 4.019019, None, {}, "printed by: dmesg | grep -i tsc"),
    # The first cause wins: tsc.c's rule before the watchdog's old-form line.
    "paste-era-2.6.24-cpufreq.log": ("lost", "other", 302.454862, None, {}, "dmesg"),
    "paste-era-2.6.22-c2-syslog.log": ("lost", "other", 3.324, None, {}, "syslog (RFC 3164) or journalctl -o short"),
    "paste-era-2.6.22-c2-delta.log": ("lost", "other", 4.948, None, {}, "dmesg"),
}
on_disk = sorted(n for n in os.listdir(FX) if n.startswith("paste-"))
t.ok(on_disk == sorted(CASES), "every paste fixture has its expected reading (%d)" % len(CASES),
     set(on_disk) ^ set(CASES))
for name in sorted(CASES):
    want = CASES[name]
    src = open(os.path.join(FX, name), encoding="utf-8").readline()
    boots = os.path.join(t.tmp, "boots-" + name)
    os.mkdir(boots)
    shutil.copy(os.path.join(FX, name), os.path.join(boots, "0"))
    out, rc = run(["--log", os.path.join(FX, name), "--boots", boots])
    try:
        d = json.loads(out)
        b, k = d["boots"]["boots"][0], d["kernel_log"]
        got = (b["tsc"], b["why"], b["at_s"], b["cycles"], b["near_misses"], k["format"])
    except (ValueError, KeyError, IndexError, TypeError) as e:
        d, got = None, ("no report: %s" % e,)
    ok = d is not None and got[:5] == want[:5] and want[5] in (got[5] or "") and b.get("format") == got[5] \
        and (d["cause"] == {"other": "marked_unstable"}.get(want[1], want[1])
             or (want[1] is None and d["cause"] == "unknown")) \
        and "evidence of what its author copied" in (k.get("note") or "")
    t.ok(src.startswith(("# from: http", "# generated:")) and ok,
         "%s: %s%s, read as %r" % (name, want[0], " (%s)" % want[1] if want[1] else "", want[5]),
         "got %r, cause %s" % (got, d and d.get("cause")))

out, rc = run(["--log", os.path.join(FX, "paste-dmesg-T-fr.log")], fmt="text")
t.ok("read as: dmesg -T (fr_FR)" in out and "evidence of what its author copied" in out,
     "the text report names the format read and what a pasted log is", out[-600:])

# A forged phrase placed mid-line: a segfault record's file name (the user's)
# holding a stamp, a console prompt or a syslog header and a clock phrase.
# In a paste, as live, the kernel's message starts at the record's start.
evil = "tsc: Marking TSC unstable due to check_tsc_sync_source failed"
seg = "a.out[31337]: segfault at 0 ip 0000000000401000 sp 00007ffd5e3f1a00 error 4 in %s[401000+1000]"
inner = ["[   77.120034] " + evil, "myhost login: [   77.120034] " + evil, "> [   77.120034] " + evil,
         "Tue Mar  8 13:19:34 2022 kern.warn kernel: [   77.120034] " + evil, '{"MESSAGE":"%s"}' % evil, evil]
heads = ["[  100.000000] ", "> [  100.000000] ", "myhost login: [  100.000000] ", "",
         "Tue Mar  8 13:19:34 2022 kern.info kernel: [  100.000000] ", "<4>1 2026-12-04T20:37:50Z vm kernel - - - ",
         "Jun 12 09:40:01 pc kernel: "]
forged = []
for h in heads:
    for i in inner:
        rec = h + seg % i
        s = kmsg.summarize(["[    1.0] clocksource: Switched to clocksource tsc", rec], recorded=True)
        if s["tsc"] != "kept" or list(kmsg.messages([rec], kmsg._paste.Log())):
            forged.append(rec)
t.ok(not forged, "a clock phrase after a segfault record's file name is no kernel line in a paste (%d shapes)"
     % (len(heads) * len(inner)), "\n".join(forged[:4]))
# ... nor split over the file name's newline and rejoined as a wrapped line.
log = ["[    1.000000] clocksource: Switched to clocksource tsc", "[  100.000000] " + seg % "/tmp/x",
       "tsc: Marking TSC", "unstable due to clocksource watchdog", "clocksource: Switched to clocksource hpet"]
s = kmsg.summarize(log, recorded=True)
t.ok(s["tsc"] == "kept" and s["switches"] == ["tsc"], "a file name's newlines: its bare lines are neither read nor rejoined",
     (s["tsc"], s["switches"], s["format"]))
pasted = os.path.join(t.tmp, "forged.log")
with open(pasted, "w") as f:
    f.write("\n".join(log[:2] + [h + seg % i for h in heads for i in inner]) + "\n")
d = json.loads(run(["--log", pasted])[0])
t.ok(d["cause"] == "unknown" and not d["cause_line"], "health --log: the forged lines give no cause",
     (d["cause"], d["cause_line"]))

# What the header says is not the kernel's is refused: another facility
# (OpenWrt's user.info kernel:, logger's <12>), a journal entry of another
# transport; the live reader's message() is not the paste reader.
t.ok(kmsg._paste.head("Thu Sep  1 19:19:48 2022 user.info kernel: [   16.4] " + evil) is None
     and kmsg._paste.head('{"_TRANSPORT":"syslog","MESSAGE":"%s"}' % evil) is None
     and kmsg._paste.head("<12>Dec  4 20:37:50 vm kernel: " + evil) is None
     and kmsg.message("[jeu. juin 12 09:41:07 2025] " + evil).framed is False,
     "user facility, syslog transport and logger's <12> refused; the live header reader unchanged")
sys.exit(t.done())
