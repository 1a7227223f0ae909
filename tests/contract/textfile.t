#!/usr/bin/env python3
"""textfile.t: cbcontract.textfile's escaping of label values (bidi, zero-width and control characters never reach
a textfile) and its folder lock (hold(): one holder a folder, its own temporaries removed, others' kept) (TAP)."""
import os
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "contract"))
from taplib import Tap  # noqa: E402
from cbcontract import textfile  # noqa: E402
from cbcontract.util import InputError  # noqa: E402

t = Tap()
HIDDEN = "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
v = textfile.esc("web" + HIDDEN + "1\x1b[2J\x00")
t.ok(not any(c in v for c in HIDDEN) and "\x1b" not in v and "\x00" not in v and v.startswith("web"),
     "esc(): bidi, zero-width and control characters of a label value replaced (%r)" % v)
f = textfile.Families({"node_x": "x"})
f.add("node_x", [("vm", "a\u202eb")], 1)
text = f.text(comments=["c\u2067d"])
t.ok("\u202e" not in text and "\u2067" not in text, "nor in a sample or a comment of Families.text()", text)
t.ok(textfile.esc("web-1 \u00e9\u20ac") == "web-1 \u00e9\u20ac", "other characters kept as they are")

d = os.path.join(t.tmp, "tf")
os.mkdir(d, 0o755)
for n in (".clockbench-w.prom.0123456789ab.tmp", ".clockbench-other.prom.0123456789ab.tmp", "other.prom"):
    open(os.path.join(d, n), "w").close()
fd = textfile.hold(d, "w.prom")
t.ok(sorted(os.listdir(d)) == [".clockbench-other.prom.0123456789ab.tmp", "other.prom"],
     "hold(): its own temporaries removed, others' kept", sorted(os.listdir(d)))
try:
    textfile.hold(d, "w.prom")
    second = None
except InputError as e:
    second = str(e)
t.ok(second is not None and "another" in second and len(second.splitlines()) == 1,
     "a second hold() on the folder refused while the first holds it: %s" % second)
os.close(fd)
fd = textfile.hold(d, "w.prom")
os.close(fd)
t.ok(True, "held again once the first let go")
textfile.write(d, "w.prom", "x 1\n")
t.ok(sorted(os.listdir(d)) == [".clockbench-other.prom.0123456789ab.tmp", "other.prom", "w.prom"],
     "write() leaves no temporary behind", sorted(os.listdir(d)))
t.done()
