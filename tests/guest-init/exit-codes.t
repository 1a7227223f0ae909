#!/usr/bin/python3
# tier: fast
"""exit-codes.t: the launcher explains QEMU's exit statuses with the guest's exit codes
of cbcontract.names, which are bench/names.h's CB_GUEST_EXIT lines (the one
source /init's C builds from): STATUS == (CODE << 1) | 1, and the launcher's
words for each status are the header's."""
import os
import re
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts")]
from taplib import Tap  # noqa: E402
from cbhost import run  # noqa: E402

t = Tap()
with open(os.path.join(ROOT, "bench", "names.h")) as f:
    gx = {(int(m.group(2)) << 1) | 1: (m.group(1), int(m.group(2)), m.group(3)) for m in
          (re.match(r'^CB_GUEST_EXIT\((\w+), (\d+), "([^"]*)"\)$', x) for x in f) if m}
exits = run.guest_exits()
t.ok(gx and exits == gx, "the launcher's exit codes are names.h's CB_GUEST_EXIT lines (%d lines, %d statuses)" % (len(gx), len(exits)),
     sorted(set(exits.items()) ^ set(gx.items())))
t.ok(len({code for _, code, _ in exits.values()}) == len(exits), "no guest code appears twice")
for status, (name, code, meaning) in sorted(exits.items()):
    t.ok(status == (code << 1) | 1, "%s: QEMU status %d == (%d << 1) | 1" % (name, status, code))
    t.ok(run.explain(status) == meaning, "%s: the launcher explains status %d as %r" % (name, status, meaning),
         run.explain(status))
t.ok(run.explain(124).startswith("guest timed out") and run.explain(1) is None,
     "124 is timeout's; a status outside the list is not explained")
t.done()
