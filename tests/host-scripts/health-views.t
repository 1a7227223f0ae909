#!/usr/bin/python3
# tier: fast
"""health-views.t: health's two readings of a kernel log, the single log (--log: the cause) and the boot
history (--boots: each boot's why), are one classifier (kmsg.summarize) and agree on every recorded log the tests
hold (tests/host-scripts/fixtures/**/*.log): the same cause where the log names one, and a lone sync-check header,
a tsc-early verdict and a boot-parameter line read alike in both (TAP).  health runs in this process, its main()
once per log (a process each cost some 0.3 s a log here), on recorded inputs only."""
import contextlib
import glob
import importlib.machinery
import importlib.util
import io
import json
import os
import shutil
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib")]
from taplib import Tap  # noqa: E402

t = Tap()
HC = os.path.join(TOP, "host-scripts", "health")
loader = importlib.machinery.SourceFileLoader("health", HC)
spec = importlib.util.spec_from_loader("health", loader)
hc = importlib.util.module_from_spec(spec)
loader.exec_module(hc)


def health_check(*args):
    """health's main(argv) here: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = hc.main([HC] + list(args))
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()

FX = os.path.join(TOP, "tests", "host-scripts", "fixtures")
# The boots view's why, as the single view's cause.
AS_CAUSE = {"boot_warp": "boot_warp", "watchdog": "watchdog", "cmdline": "forced_unstable", "other": "marked_unstable"}
cs = os.path.join(t.tmp, "cs")
os.makedirs(cs)
for n, v in (("current_clocksource", "hpet"), ("available_clocksource", "hpet acpi_pm")):
    with open(os.path.join(cs, n), "w") as f:
        f.write(v + "\n")
extra = os.path.join(t.tmp, "extra")
os.makedirs(extra)
for name, lines in (("lone-sync-check.log", ["[    0.974281] TSC synchronization [CPU#0 -> CPU#36]:"]),
                    ("tsc-early.log", ["[    4.019019] clocksource: timekeeping watchdog on CPU3: Marking clocksource "
                                       "'tsc-early' as unstable because the skew is too large:",
                                       "[    4.019025] tsc: Marking TSC unstable due to clocksource watchdog"]),
                    ("boot-parameter.log", ["[    0.078446] tsc: Marking TSC unstable due to boot parameter"]),
                    ("comma.log", ["timekeeping watchdog: Marking clocksource 'tsc' as unstable, because the skew is too large:",
                                   "Switched to clocksource hpet"])):
    with open(os.path.join(extra, name), "w") as f:
        f.write("\n".join(lines) + "\n")
logs = sorted(glob.glob(os.path.join(FX, "**", "*.log"), recursive=True)) + sorted(glob.glob(os.path.join(extra, "*.log")))
disagree, named = [], 0
for log in logs:
    boots = os.path.join(t.tmp, "boots-%d" % logs.index(log))
    os.makedirs(boots)
    shutil.copy(log, os.path.join(boots, "boot-1.log"))
    rc, out, err = health_check("--format", "json", "--cs-dir", cs, "--log", log, "--boots", boots)
    try:
        d = json.loads(out)
    except ValueError:
        disagree.append("%s: no JSON (exit %s): %s" % (log, rc, err[-200:]))
        continue
    b = d["boots"]["boots"][0] if d["boots"]["boots"] else {}
    want = AS_CAUSE.get(b.get("why"))
    if want:
        named += 1
    if want and want != d["cause"] or not want and d["cause"] in AS_CAUSE.values():
        disagree.append("%s: single view %s, boots view %s" % (os.path.relpath(log, TOP), d["cause"], b.get("why")))
t.ok(named >= 8 and not disagree, "%d logs, %d naming a cause: the single-log and boots views agree" % (len(logs), named),
     "\n".join(disagree))
sys.exit(t.done())
