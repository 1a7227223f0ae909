#!/usr/bin/python3
# tier: fast
"""duration.t: the host side's one duration parser (host-scripts/cbhost/duration.py):
units us ms s m h, bare seconds, exact conversions, range checked after the
unit, one-line errors naming the value; and the same answer as the engine's
parser (clockbench --dry-run --duration) on every case and on random words."""
import os
import random
import subprocess
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts")]
from taplib import Tap  # noqa: E402
from cbhost import duration  # noqa: E402

t = Tap()
GOOD = {"1": 1, "0.5": 0.5, ".5": 0.5, "10s": 10, "500ms": 0.5, "250us": 250e-6, "2m": 120, "1.5s": 1.5,
        "1h": 3600, "0.001h": 3.6, "0": 0, "0ms": 0, "007s": 7, "1" * 39: float("1" * 39)}
BAD = ["", "s", "1x", "1S", "1 s", " 1", "1s ", "+1", "-1", "1e3", "0x10", "inf", "nan", "1.", ".", "1..5",
       "1m30s", "5min", "1ms2", "1\u00b5s", "\uff11s", "1\ns", "1" * 40, None, 5]
wrong = ["%r: %r" % (k, duration.parse(k)) for k, v in GOOD.items() if duration.parse(k) != v]
t.ok(not wrong, "accepted: bare seconds, us ms s m h, exact (500ms is 0.5, 250us is 250e-6)", "\n".join(wrong))
wrong = ["%r: %r" % (k, duration.parse(k)) for k in BAD if duration.parse(k) is not None]
t.ok(not wrong, "refused: signs, exponents, spaces, capitals, two units, non-ASCII digits, 40 digits, non-strings",
     "\n".join(wrong))


def err(*args, **kw):
    try:
        return duration.seconds(*args, **kw)
    except duration.DurationError as e:
        return "E:" + str(e)


r = err("TIMEOUT", "5m", 1, 86400, whole=True)
t.ok(r == 300 and isinstance(r, int), "TIMEOUT=5m, whole: 300 (an int)", r)
r = err("TIMEOUT", "2d", 1, 86400, whole=True)
t.ok(r.startswith("E:TIMEOUT=2d: not a duration") and "us, ms, s, m, h" in r, "a bad unit: named, units listed", r)
r = err("TIMEOUT", "25h", 1, 86400)
t.ok(r == "E:TIMEOUT=25h: 90000 s: expected from 1 s to 86400 s", "25h: range checked after the unit, "
     "limit named", r)
r = err("DURATION", "500ms", 1, 3600, whole=True, why_whole="iperf3 -t takes whole seconds")
t.ok(r == "E:DURATION=500ms: 0.5 s: expected from 1 s to 3600 s", "500ms below a 1 s floor", r)
r = err("DURATION", "1.5s", 1, 3600, whole=True, why_whole="iperf3 -t takes whole seconds")
t.ok(r == "E:DURATION=1.5s: 1.5 s: expected whole seconds (iperf3 -t takes whole seconds)", "whole: 1.5s refused, why said", r)
r = err("--trace-seconds", "0", 0, 60)
t.ok(r == 0, "0 where 0 is allowed", r)
r = err("X", "0ms", 0, 60, above=True)
t.ok(isinstance(r, str) and "more than 0 s" in r, "above: 0ms refused where more than 0 is needed", r)
r = err("X", "9" * 500 + "x", 0, 60)
t.ok(isinstance(r, str) and "\n" not in r and len(r) < 200, "a 500-character value is cut in one line (%d characters)"
     % len(r))
r = err("X", "1\ns", 0, 60)
t.ok(isinstance(r, str) and "\n" not in r, "a line feed in the value is escaped, one line", r)

# Its users: health's --trace-seconds, crosscheck's --duration (whole
# seconds: iperf3 -t), run-lab's --l1-timeout; each refusal one line, exit 2.
# Settings are options, as the user types them.


def tool(argv):
    p = subprocess.run(argv, capture_output=True, text=True, cwd=ROOT, stdin=subprocess.DEVNULL, timeout=60)
    return p.returncode, p.stderr.strip()


LOG = os.path.join(ROOT, "tests", "host-scripts", "fixtures", "healthy-vm.log")
HC = [os.path.join(ROOT, "host-scripts", "health"), "--format", "json", "--no-tsc-check", "--log", LOG]
CC = os.path.join(ROOT, "host-scripts", "crosscheck")
LAB = os.path.join(ROOT, "lab", "run-lab")
CASES = [  # (command, options, exit status wanted or None for "not 2", text in stderr)
    (HC, ["--trace-seconds", "500ms"], None, ""),
    (HC, ["--trace-seconds", "2m"], 2, "--trace-seconds=2m: 120 s: expected from 0 s to 60 s"),
    (HC, ["--trace-seconds", "1x"], 2, "--trace-seconds=1x: not a duration"),
    # --duration=2m passed: the next setting is the one refused
    ([CC], ["--duration=2m", "--rounds=0", t.tmp, "r"], 2, "--rounds=0"),
    ([CC], ["--duration=2h", t.tmp, "r"], 2, "--duration=2h (7200 s): expected a whole number from 1 to 3600"),
    ([CC], ["--duration", "1500ms", t.tmp, "r"], 2, "iperf3 -t takes whole seconds"),
    ([LAB], ["--l1-timeout=59s", t.tmp, "r"], 2, "--l1-timeout=59s: 59 s: expected from 60 s"),
    ([LAB], ["--l1-timeout=90.5", t.tmp, "r"], 2, "expected whole seconds"),
    # --l1-timeout=30m passes: the kernel (or a missing QEMU) is what fails next, exit 1, nothing boots
    ([LAB], ["--l1-timeout=30m", "--kernel=/nonexistent/vmlinuz", t.tmp, "r"], 1, ""),
]
for cmd, opts, want, text in CASES:
    rc, err = tool(cmd + opts)
    what = "%s %s" % (os.path.basename(cmd[0]), " ".join(o for o in opts if o not in (t.tmp, "r")))
    good = (rc != 2 if want is None else rc == want) and text in err and len(err.splitlines()) <= 1
    t.ok(good, "%s: exit %d, %s" % (what, rc, err[:160] or "no error"), err)

# The engine's parser and this one agree: accepted or refused alike, over
# the cases above and random words of the alphabet that matters.
engine = os.environ.get("CB_ENGINE") or os.path.join(ROOT, "bench", "clockbench")
if not os.access(engine, os.X_OK):
    t.skip("bench/clockbench not built: the engine's agreement")
else:
    rnd = random.Random(22)
    words = [k for k in GOOD if len(k) < 39] + [k for k in BAD if isinstance(k, str) and "\n" not in k and k]
    words += ["".join(rnd.choice("0123456789.smuhx ") for _ in range(rnd.randint(1, 6))) for _ in range(150)]
    differ = []
    for w in words:
        p = subprocess.run([engine, "--dry-run", "--duration", w], capture_output=True, text=True)
        s = duration.parse(w)
        mine = 0 if s is not None and 0 < s <= 3600 else 2
        if p.returncode != mine:
            differ.append("%r: engine %d, python %d (%r) %s" % (w, p.returncode, mine, s, p.stderr.strip()))
    t.ok(not differ, "the engine and the Python parser agree on %d words" % len(words), "\n".join(differ))
t.done()
