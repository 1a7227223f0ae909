#!/usr/bin/python3
"""bench-kmsg.py: times contract/cbcontract/kmsg.py's classifier on hostile
2 KiB lines and a 1 MiB log of them (a benchmark that prints figures, not a
test).  Usage: tests/host-scripts/bench-kmsg.py [CHECKOUT] (default: this one),
so two checkouts can be compared side by side."""
import os
import sys
import time

top = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(top, "contract"))
from cbcontract import kmsg  # noqa: E402

CASES = {"hypervisor, blanks": "Hypervisor detected: " + " " * 2030 + "x",
         "unstable, blanks": "Marking TSC unstable due to " + " " * 2020 + "x",
         "unstable, tabs, newline": "tsc: Marking TSC unstable due to " + "\t" * 2000 + "\nx"}
for name, line in CASES.items():
    runs = []
    for _ in range(21):
        t = time.perf_counter()
        kmsg.classify(line)
        runs.append(time.perf_counter() - t)
    print("%-24s median %8.3f ms a line (21 runs)" % (name, sorted(runs)[10] * 1e3))
log = [CASES["unstable, tabs, newline"]] * 512
t = time.perf_counter()
kmsg.summarize(log)
print("%-24s %8.3f s (512 lines of 2 KiB)" % ("1 MiB log", time.perf_counter() - t))
