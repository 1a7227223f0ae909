#!/usr/bin/python3
# tier: slow
# test-timeout: 600
"""health-memory.t: health reads a recorded kernel log (--log FILE, --boots DIR) as a stream: its peak memory
(the child's maxrss) stays under MAX_RSS and does not grow with the log (4 MiB and 16 MiB of short lines, the worst
case for a reader that holds every line as a string), and its CPU time grows linearly with it (TAP)."""
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from taplib import Tap  # noqa: E402

t = Tap()
HC = os.path.join(ROOT, "host-scripts", "health")
MAX_RSS = 100 << 20  # bytes: the bound at any size the reader allows (64 MiB a file)
GROWTH = 8 << 20  # bytes: what 12 MiB more of log may add to the peak (a reader that holds it adds some 200 MB)

cs = os.path.join(t.tmp, "cs")
os.mkdir(cs)
for n, v in (("current_clocksource", "hpet"), ("available_clocksource", "tsc hpet")):
    with open(os.path.join(cs, n), "w") as f:
        f.write(v + "\n")


def log(name, mib):
    """A log of mib MiB of short lines (3 bytes: a str object each, some 50 bytes, if held), a clock line first."""
    path = os.path.join(t.tmp, name)
    with open(path, "w") as f:
        f.write("[    0.400000] clocksource: Switched to clocksource tsc\n")
        f.write("ab\n" * ((mib << 20) // 3 - 20))
    return path


def run(*args):
    """(exit status, peak RSS in bytes, CPU seconds) of health ARGS (JSON to /dev/null)."""
    with open(os.devnull, "w") as null:
        p = subprocess.Popen([HC, "--format", "json", "--cs-dir", cs] + list(args), stdout=null,
                             stderr=subprocess.PIPE)
        err = p.stderr.read()
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    if err.strip():
        t.diag(err.decode("utf-8", "replace"))
    return p.returncode, ru.ru_maxrss * 1024, ru.ru_utime + ru.ru_stime


small, big = log("small.log", 4), log("big.log", 16)
boots = os.path.join(t.tmp, "boots")
os.mkdir(boots)
for n in ("1", "2"):
    os.link(big, os.path.join(boots, n))
rc4, rss4, cpu4 = run("--log", small)
rc16, rss16, cpu16 = run("--log", big)
t.ok(rc16 == 1 and rss16 < MAX_RSS, "--log, 16 MiB of short lines: peak memory %.0f MB, under %d MB"
     % (rss16 / 1e6, MAX_RSS >> 20))
t.ok(rss16 - rss4 < GROWTH, "--log: the peak does not grow with the log (4 MiB: %.0f MB, 16 MiB: %.0f MB)"
     % (rss4 / 1e6, rss16 / 1e6))
t.ok(cpu16 < 8 * cpu4, "--log: CPU time linear in the log (4 MiB: %.2f s, 16 MiB: %.2f s; a quadratic reader: 16x)"
     % (cpu4, cpu16))
rc, rss, cpu = run("--boots", boots)
t.ok(rc == 1 and rss < MAX_RSS, "--boots, two boots of 16 MiB: peak memory %.0f MB, under %d MB (%.2f CPU-s)"
     % (rss / 1e6, MAX_RSS >> 20, cpu))
sys.exit(t.done())
