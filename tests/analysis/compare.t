#!/usr/bin/python3
# tier: fast
"""compare.t: `clockbench-report diff`, deltas between two fixture runs, with noise bands computed by hand;
and `compare`, its old name for one release: the same text, and one line on stderr saying so.

Band = the larger of the two runs' spread of sibling-clock medians,
(max - min) / min, at least 1 %; without siblings, half of (p99 - median) / median.
"""
import os
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import AFTER, BEFORE, Tap, read, run, table_row  # noqa: E402

t = Tap()
rc, so, se = run("diff", BEFORE, AFTER)
t.ok(rc == 0 and se == "" and so.startswith("# clockbench diff: 20260101-120000-hv1 -> 20260201-120000-hv1"),
     "diff exits 0 and writes Markdown to stdout", se)
head = so.split("## Every cell")[0]


def row(*k):
    return table_row(head, *k) or []


# host tsc 1 thread: 25.0 -> 25.4, +1.6 %; band max(0.5/25, 0.5/25.4) = 2.0 %.
t.ok(row("host", "tsc", "monotonic", "vdso", "1")[5:] == ["25.00", "25.40", "+0.40", "+1.6 %", "+/-2.0 % (siblings 2)", "within noise"],
     "host tsc: +1.6 % inside a 2.0 % band is noise", row("host", "tsc", "monotonic", "vdso", "1"))
# host hpet 1 thread: 1500 -> 1800, +20.0 %; band max(20/1500, 10/1800) = 1.3 %.
t.ok(row("host", "hpet", "monotonic", "vdso", "1")[5:] == ["1500.00", "1800.00", "+300.00", "+20.0 %", "+/-1.3 % (siblings 2)", "slower"],
     "host hpet 1 thread: +20 % beyond a 1.3 % band is slower", row("host", "hpet", "monotonic", "vdso", "1"))
# host hpet 2 threads: 1900 -> 1500, -21.1 %; band max(50/1900, 20/1500) = 2.6 %.
t.ok(row("host", "hpet", "monotonic", "vdso", "2")[5:] == ["1900.00", "1500.00", "-400.00", "-21.1 %", "+/-2.6 % (siblings 2)", "faster"],
     "host hpet 2 threads: -21.1 % is faster", row("host", "hpet", "monotonic", "vdso", "2"))
# guest tsc 1 thread: 28 -> 29, +3.6 %; band max(0.5/28, 0.5/28.5) = 1.8 %.
t.ok(row("guest 2 vCPU", "tsc", "monotonic", "vdso", "1")[8:] == ["+3.6 %", "+/-1.8 % (siblings 2)", "slower"],
     "guest tsc: +3.6 % beyond a 1.8 % band is slower", row("guest 2 vCPU", "tsc", "monotonic", "vdso", "1"))
t.ok(row("guest 2 vCPU", "hpet", "monotonic", "vdso", "1")[5:] == ["187.00", "n/a", "n/a", "n/a", "n/a", "only before"],
     "a cell measured only before is named so", row("guest 2 vCPU", "hpet", "monotonic", "vdso", "1"))
# rdtsc has no sibling clock: half of (p99 - median) / median = (12 - 10) / 10 / 2 = 10 %.
r = table_row(so, "host", "tsc", "-", "rdtsc", "1") or []
t.ok(r[5:] == ["10.00", "10.00", "+0.00", "+0.0 %", "+/-10.0 % (p99)", "within noise"],
     "no sibling clock: the band falls back to half the p99 spread", r)
t.ok("| host on tsc | kernel | 6.12.9-amd64 | 6.12.10-amd64 |" in so, "what changed: the kernel")
t.ok("Verdicts: faster 2, only before 10, slower 3, within noise 25." in so, "verdict counts")

out = os.path.join(t.tmp, "c.md")
rc, so2, se = run("diff", "-o", out, BEFORE, AFTER)
t.ok(rc == 0 and so2.strip() == out and read(out) == so and not [f for f in os.listdir(t.tmp) if f.endswith(".tmp")],
     "-o FILE: the same text, written atomically (no temporary left)", se)
rc, so2, se = run("diff", BEFORE)
t.ok(rc == 2 and len(se.splitlines()) == 1, "diff with one run: usage, exit 2, one line", se)

# compare, the old spelling: the same document, and one line on stderr that names the new one.
rc, so2, se = run("compare", BEFORE, AFTER)
t.ok(rc == 0 and so2 == so, "compare (the old name) exits 0 and prints what diff prints", se)
t.ok(se.splitlines() == ["clockbench-report: note: 'compare' is the old name of 'diff' (the two-run delta), "
                         "kept until the next release"], "compare says once, on stderr, that it is diff's old name", se)
rc, so2, se = run("compare", BEFORE)
t.ok(rc == 2 and len(se.splitlines()) == 1, "compare with one run: usage, exit 2, one line", se)
rc, so2, se = run("--help")
cmds = so2.split("\nCommands:\n", 1)[-1].split("\n\n", 1)[0]
t.ok(rc == 0 and "\n  diff " in "\n" + cmds and "\n  compare " not in "\n" + cmds and "'compare' is its old name" in " ".join(cmds.split()),
     "--help lists diff, names compare as its old name, and lists no compare command", cmds)
t.done()
