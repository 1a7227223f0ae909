#!/usr/bin/python3
"""names.t: contract/cbcontract/names.py, the one list of shared names, agrees with its C copies and the commands:
the guest's exit codes with guest-init/exit-codes.h, clocks and methods with bench/opts.c, the version with
bench/clockbench.h, and each command's documented exit statuses with its --help."""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract")]
from cbcontract import names  # noqa: E402

t = Tap()


def text(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


gx = {m.group(1): (int(m.group(2)), int(m.group(3)), m.group(4))
      for m in re.finditer(r'^\s*GX\((\w+),\s*(\d+),\s*(\d+),\s*"([^"]*)"\)', text("guest-init/exit-codes.h"), re.M)}
t.ok(gx and gx == names.GUEST_EXITS, "names.GUEST_EXITS is guest-init/exit-codes.h's table (%d codes)" % len(gx),
     "header %r\nnames  %r" % (gx, names.GUEST_EXITS))
t.ok(all(st == (code << 1) | 1 for code, st, _ in names.GUEST_EXITS.values()),
     "every QEMU status is (CODE << 1) | 1")
t.ok(all(names.guest_exit(st) == m for _, st, m in names.GUEST_EXITS.values())
     and names.guest_exit(124).startswith("guest timed out") and names.guest_exit(1) is None,
     "guest_exit: the header's words for each status, timeout's for 124, none for an unknown one")

opts = text("bench/opts.c")
m = re.search(r"cb_clocks\[\] = \{(.*?)\n\};", opts, re.S)
clocks = tuple(re.findall(r'\{ "([a-z_]+)", CLOCK_', m.group(1))) if m else ()
t.ok(clocks and clocks == names.CLOCKS, "names.CLOCKS is bench/opts.c's cb_clocks[], in order", clocks)
m = re.search(r"cb_method_names\[CB_NMETHODS\] = \{([^}]*)\}", opts)
methods = tuple(re.findall(r'"([a-z-]+)"', m.group(1))) if m else ()
t.ok(methods and methods == names.METHODS, "names.METHODS is bench/opts.c's cb_method_names[], in order", methods)
m = re.search(r"cb_method_clocked\(enum cb_method m\)\n\{\n\treturn ([^;]*);", opts)
clocked = re.findall(r"CB_(\w+)", m.group(1)) if m else []
t.ok([c.lower().replace("_", "-") for c in clocked] == list(names.CLOCKED_METHODS),
     "names.CLOCKED_METHODS are the methods cb_method_clocked() names", clocked)

hv = re.findall(r'^#define CB_VERSION "([^"]*)"$', text("bench/clockbench.h"), re.M)
t.ok(len(hv) == 1 and names.VERSION == hv[0], "names.VERSION is bench/clockbench.h's CB_VERSION (%s)" % names.VERSION, hv)
t.ok(names.read_version(os.path.join(t.tmp, "none.h")) == "unknown", "a missing header reads as version \"unknown\"")

cmds = [ln.split() for ln in text("packaging/commands").splitlines() if ln.strip() and not ln.startswith("#")]
t.ok(sorted(c[0] for c in cmds) == sorted(names.EXIT_STATUS),
     "names.EXIT_STATUS has every command of packaging/commands, no other", sorted(c[0] for c in cmds))
for name, _, _, src, *_ in cmds:
    p = subprocess.run([os.path.join(ROOT, src), "--help"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, LC_ALL="C"))
    sec = p.stdout.split("\nExit status:\n", 1)
    codes = re.findall(r"^  (\d+|128\+N)\s", sec[1].split("\n\n", 1)[0], re.M) if len(sec) == 2 else []
    codes = tuple(int(c) if c.isdigit() else c for c in codes)
    t.ok(codes == names.EXIT_STATUS.get(name), "%s --help documents exit statuses %s" % (name, names.EXIT_STATUS.get(name)),
         "its --help: %s (exit %d)" % (codes or "no Exit status: section", p.returncode))
t.done()
