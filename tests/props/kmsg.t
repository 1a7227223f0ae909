#!/usr/bin/python3
# tier: slow
# test-timeout: 1800
"""kmsg.t: properties of contract/cbcontract/kmsg.py, the one reader of kernel-log lines: a record any local user
can shape (a crashing program's name and file name in the kernel's segfault line), in every log format read, is
never a line clockbench knows, whatever the name (TAP).
tests/host-scripts/bench-kmsg.py times the classifier on hostile lines (a figure, not a test)."""
import os
import sys

sys.dont_write_bytecode = True
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")]
import proplib  # noqa: E402  (re-executes under /usr/bin/python3 when needed)
from hypothesis import example, strategies as st  # noqa: E402

from cbcontract import kmsg  # noqa: E402

t = proplib.Props("kmsg")

# The message text of every line the classifier knows (the fixture file).
FX = os.path.join(proplib.ROOT, "tests", "host-scripts", "fixtures", "kmsg", "lines.txt")
KNOWN = []
for raw in open(FX, encoding="utf-8"):
    if raw.startswith("#") or " | " not in raw:
        continue
    kind, line = raw.rstrip("\n").split(" | ", 1)
    if kind != "-":
        KNOWN.append(kmsg.message(line).text)
HEADS = ["", "[ 1234.567890] ", "Dec  1 12:00:00 host kernel: ", "[ 1234.567890] host kernel: ",
         "2026-12-01T12:00:00+0000 host kernel: ", "6,4242,1234567890,-;", "4,4242,1234567890,-,caller=T1234567;"]
# A comm is 15 bytes at most; the kernel prints it with %s (any byte but NUL;
# kmsg escapes control characters, other readers may not).
COMM = st.text(st.characters(blacklist_characters="\x00"), max_size=15)


def segfault(head, comm, pid, filename):
    return "%s%s[%d]: segfault at 0 ip 0000000000401000 sp 00007ffd5e3f1a00 error 4 in %s[401000+1000]" % (
        head, comm, pid, filename)


@t.prop("a segfault record: any comm (15 characters), any file name, every log format: not a line kmsg knows",
        st.sampled_from(HEADS), st.one_of(COMM, st.sampled_from(KNOWN).map(lambda s: s[:15])),
        st.integers(1, 4194304), st.one_of(st.sampled_from(KNOWN), st.text(max_size=200)))
@example("", "tsc: Marking TS", 1, "tsc: Marking TSC unstable due to clocksource watchdog")
@example("[ 1.0] ", "kvm-clock: Usin", 1, "kvm-clock: Using msrs 4b564d01 and 4b564d00")
def forged(head, comm, pid, filename):
    rec = segfault(head, comm, pid, filename)
    assert kmsg.classify(rec) is None, (rec, kmsg.classify(rec))
    # The comm or the file name may hold a newline: each piece alone, as a
    # reader that splits lines would see it, in a framed log, is not read.
    s = kmsg.summarize(["[    0.000000] Linux version 6.1.0"] + [("[ 1.0] " if i == 0 else "") + p for i, p in enumerate(rec.split("\n"))])
    assert s["tsc"] == "unknown" and not s["evidence"] and not s["near_misses"], (rec, s)


# A paste (issue 44): the same record as dmesg and journalctl print one
# whose comm or file name holds a newline (the rest indented under the
# text), in a paste quoted, commented or indented as a whole: after the
# boot's switch to tsc, nothing of it is read.
PRINT = {"dmesg": ("[  264.980127] ", 15), "journalctl -o short-monotonic": ("[  264.980127] kernel: ", 23),
         "journalctl -o short": ("Dec 24 21:47:28 pc kernel: ", 27)}
WRAP = ["", "> ", "    ", "# ", "kern: warning: "]
NAME = st.text(st.characters(blacklist_characters="\x00\r"), max_size=60)


@t.prop("a paste: a segfault record whose name holds newlines, as dmesg or journalctl print it, quoted, commented "
        "or indented: nothing read after the switch to tsc",
        st.sampled_from(sorted(PRINT)), st.sampled_from(WRAP), st.one_of(COMM, st.sampled_from(KNOWN).map(lambda s: s[:15])),
        st.lists(st.one_of(st.sampled_from(KNOWN), NAME), min_size=1, max_size=4))
@example("dmesg", "", "cbt", ["[  950.000000] tsc: Marking TSC unstable due to check_tsc_sync_source failed"])
@example("journalctl -o short", "> ", "a", ["", "[  950.000000] clocksource: Switched to clocksource hpet"])
def pasted(fmt, wrap, comm, pieces):
    head, width = PRINT[fmt]
    rec = segfault("", comm, 4242, "\n".join(pieces))
    first, *rest = rec.split("\n")
    sw = head.replace("264.980127", "  1.316614") + "clocksource: Switched to clocksource tsc"
    lines = [wrap + sw, wrap + head + first] + [wrap + " " * width + x for x in rest]
    s = kmsg.summarize(lines, recorded=True)
    assert s["tsc"] == "kept" and s["switches"] == ["tsc"] and not s["evidence"] and not s["near_misses"], (lines, s)


# Any paste of the pieces the paste reader looks for (transport markers,
# prefixes, stamps, phrases, JSON, export fields) gives a summary, never
# an exception (two crashes found so: a NUL in a quoted-printable line,
# a reason of digits alone).
ATOMS = ["<br>", "=", "=3D", "=0A", "=\n", "|", "`", "# ", "> ", "{", "}", "[", "]", " ", "  ", "\t", "0", "12.345678",
         "kernel: ", "Dec 24 21:47:28 pc ", "tsc: Marking TSC unstable due to ", "clocksource: Switched to clocksource ",
         "hpet", "tsc", "&nbsp;", "&#39;", "<p>", "</p>", "login: ", "$ journalctl -r", ">", "\u2026", "kern: warning: ",
         '"_TRANSPORT":"kernel"', '"MESSAGE":"x"', ",", ":", "\\", "\x00", "\u2028",
         "Content-Transfer-Encoding: quoted-printable", "__CURSOR=", "MESSAGE=a", "[  950.000000] ", " " * 15, "6,1,2,-;",
         "<4>", '{"_TRANSPORT":"kernel","MESSAGE":"tsc: Marking TSC unstable due to x"}', "Measured ",
         "timekeeping watchdog on CPU1: Marking clocksource", "Kernel command line: tsc=unstable ", "| ",
         "Hypervisor detected: "]


@t.prop("any paste of the reader's own pieces: a summary that JSON can hold, never an exception",
        st.lists(st.lists(st.sampled_from(ATOMS), max_size=20).map("".join), min_size=1, max_size=40))
@example(["=3D", "tsc: Marking TSC unstable due to \x00=0A="])
@example(["[  950.000000] tsc: Marking TSC unstable due to 0"])
def any_paste(lines):
    import json
    s = kmsg.summarize("\n".join(lines).split("\n"), recorded=True, budget=kmsg._paste.Budget())
    json.dumps(s)


t.done()
