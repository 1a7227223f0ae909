#!/usr/bin/python3
# tier: fast
"""guesttable.t: the launcher's table says how /init's clocksource wait
ended (guest.clocksource_settle, docs/guest.md), loudly when it ran out, and
a hostile value in it stays one line without control characters; a TCG
guest's facts say whose they are."""
import json
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import NEW, Tap, run  # noqa: E402

t = Tap()


def table_with(settle):
    d = os.path.join(t.tmp, "r%d" % t.n)
    shutil.copytree(NEW, d)
    p = os.path.join(d, "guest-tsc-1vcpu.json")
    doc = json.load(open(p))
    g = doc.setdefault("guest", {})
    if settle is None:
        g.pop("clocksource_settle", None)
    else:
        g["clocksource_settle"] = settle
    with open(p, "w") as f:
        json.dump(doc, f)
    return run("table", p)


rc, so, se = table_with({"end": "settled", "settled": True, "ms": 65, "from": "tsc-early", "to": "tsc"})
t.ok(rc == 0 and "clocksource wait: settled after 65 ms (tsc-early -> tsc)" in so, "a settled wait, with its time and the switch", so + se)
rc, so, se = table_with({"end": "timeout", "settled": False, "ms": 10000, "from": "tsc-early", "to": "tsc-early"})
t.ok(rc == 0 and "clocksource wait: TIMED OUT after 10000 ms" in so, "a wait that ran out is said loudly", so + se)
rc, so, se = table_with(None)
t.ok(rc == 0 and "clocksource wait" not in so, "a result from before the wait: no line", so + se)
rc, so, se = table_with({"end": "x\n\x1b[2Jevil", "ms": 1, "from": "a" * 500, "to": "tsc"})
line = [l for l in so.splitlines() if l.startswith("clocksource wait")]
t.ok(rc == 0 and len(line) == 1 and "\x1b" not in so and len(line[0]) < 140, "a hostile wait: one line, no escape, bounded", so + se)
# A TCG guest (a recorded run): its clocksource is the emulator's, and the
# master clock and stable bit are the observer VM's, on their own line, the
# nested host's clock named (the trace printed hostclock 0x2).
tcg = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "results", "20261130-174842-vm",
                   "guest-kvm-clock-2vcpu.json")
rc, so, se = run("table", tcg)
lines = so.splitlines()
t.ok(rc == 0 and any(l.startswith("guest clocksource hpet (TCG's: the emulator's, not evidence about the host)")
                     for l in lines)
     and "the observer VM's trace (KVM on this host, not this guest): master clock off (hostclock kvm-clock "
         "(pvclock)); stable bit clear" in so and "hostclock 0x2" not in so,
     "a TCG guest: the emulator's clocksource, the observer VM's facts on their own line, the host clock named",
     so + se)
t.done()
