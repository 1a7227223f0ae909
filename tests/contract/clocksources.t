#!/usr/bin/python3
# tier: fast
"""clocksources.t: names.h's clocksource catalog (CB_CLOCKSOURCE) is the one list of clocksource kinds (TAP):
each row is well formed; the TSC's names (on which alone KVM keeps its master clock), a guest's paravirtual
clocks and the published costs of a host's fallbacks are read from it by every reader (the kernel-log reader,
the health rule, heal, the sweep, the screen, the lab); and no code file spells the TSC's names or the
fallbacks' list again by hand."""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts"), os.path.join(ROOT, "analysis")]
from taplib import Tap  # noqa: E402
from cbcontract import health, kmsg, names  # noqa: E402
from cbhost import heal  # noqa: E402
from cbanalysis import verdict  # noqa: E402

t = Tap()
rows = names.CLOCKSOURCES
t.ok(len(rows) >= 8 and len({c.name for c in rows}) == len(rows) and {c.kind for c in rows} == {"tsc", "paravirtual", "device"},
     "names.h: %d clocksource rows, one a name, of the three kinds" % len(rows))
tsc = tuple(c.name for c in rows if c.kind == "tsc")
t.ok(tsc == ("tsc", "tsc-early") and kmsg.TSC_NAMES == health.TSC_NAMES == heal.TSC_NAMES == names.TSC_NAMES == tsc,
     "the TSC's names, as the kernel-log reader, the health rule and heal read them, are the rows'", tsc)
t.ok(health.PV_CLOCKS == {c.name: c.what for c in rows if c.kind == "paravirtual"},
     "a guest's paravirtual clocks, with their owners' names, are the rows'")
t.ok(verdict.PUBLISHED == {c.name: c.published for c in rows if c.kind == "device" and c.published}
     and set(verdict.FALLBACKS) == {"hpet", "acpi_pm"}, "the fallbacks and their published costs are the rows'")
# No code file writes the lists again: the TSC's two names, or the two fallbacks, side by side.
files = subprocess.run(["git", "ls-files", "contract", "host-scripts", "analysis", "lab"], cwd=ROOT,
                       capture_output=True, text=True).stdout.split()
by_hand = []
for f in files:
    path = os.path.join(ROOT, f)
    try:
        text = open(path, encoding="utf-8", errors="replace").read(1 << 20)
    except (OSError, IsADirectoryError):
        continue
    if not (f.endswith(".py") or text.startswith("#!/usr/bin/python3") or text.startswith("#!/usr/bin/env python3")):
        continue
    if re.search(r'\(\s*"tsc",\s*"tsc-early"\s*\)|\(\s*"hpet",\s*"acpi_pm"\s*\)', text):
        by_hand.append(f)
t.ok(not by_hand, "no code file spells the TSC's names or the fallbacks again (%d read)" % len(files), by_hand)
t.done()
