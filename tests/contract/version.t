#!/usr/bin/python3
# tier: fast
"""version.t: every command of packaging/commands prints one version with --version, the one source's
(CB_VERSION in bench/names.h, read by cbcontract.names): one line "NAME VERSION", exit 0, stderr empty."""
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract")]
from cbcontract import names  # noqa: E402

t = Tap()
t.ok(names.VERSION != "unknown", "the one source gives a version (%s)" % names.VERSION)
# An installed copy reads the same source: packaging.mk's LIB_DATA must carry bench/names.h.
with open(os.path.join(ROOT, "packaging", "packaging.mk")) as f:
    mk = f.read()
lib = re.search(r"^LIB_DATA :=((?:.*\\\n)*.*)$", mk, re.M)
t.ok(lib and "bench/names.h" in lib.group(1).split(),
     "make install carries the one source, bench/names.h (packaging.mk LIB_DATA)", lib and lib.group(0))
# Its readers find it there: LIB_DATA keeps the checkout's layout under lib/clockbench.
inst = os.path.join(t.tmp, "lib", "clockbench")
for rel in ("bench/names.h", "host-scripts/lib/version.sh", "contract/cbcontract/__init__.py",
            "contract/cbcontract/names.py"):
    os.makedirs(os.path.dirname(os.path.join(inst, rel)), exist_ok=True)
    shutil.copy(os.path.join(ROOT, rel), os.path.join(inst, rel))
py = subprocess.run([sys.executable, "-B", "-c", "import sys; sys.path[:0] = [sys.argv[1]]; from cbcontract import names; "
                     "print(names.NAMES_H, names.VERSION)", os.path.join(inst, "contract")],
                    capture_output=True, text=True, cwd=t.tmp)
sh = subprocess.run(["bash", "-c", '. "$1/host-scripts/lib/version.sh" && cb_version NAME "$1/host-scripts"', "-", inst],
                    capture_output=True, text=True, cwd=t.tmp)
t.ok(py.stdout == "%s %s\n" % (os.path.join(inst, "bench", "names.h"), names.VERSION)
     and sh.stdout == "NAME %s\n" % names.VERSION and not sh.stderr,
     "an installed layout's names.py and version.sh read its own bench/names.h (%s)" % names.VERSION,
     py.stdout + py.stderr[-300:] + sh.stdout + sh.stderr)
with open(os.path.join(ROOT, "packaging", "commands")) as f:
    # The engine, then each verb's program (packaging/commands: verb, program, description).
    cmds = [("clockbench", "bench/clockbench")] + [ln.split()[:2] for ln in f if ln.strip() and not ln.startswith("#")
                                                    and "/" in ln.split()[1]]  # an alias: its verb's program
cs = os.path.join(t.tmp, "cs")
os.makedirs(cs)
for f, text in (("current_clocksource", "tsc\n"), ("available_clocksource", "tsc \n")):
    with open(os.path.join(cs, f), "w") as fh:
        fh.write(text)
env = dict(os.environ, CB_CS_DIR=cs, CB_STATE_DIR=os.path.join(t.tmp, "state"), CB_KVM_DEV=os.path.join(t.tmp, "kvm"),
           RESULTS=os.path.join(t.tmp, "results"))
for name, src in cmds:
    path = os.path.join(ROOT, src)
    if not os.access(path, os.X_OK):
        t.skip("%s: %s not built (make all)" % (name, src))
        continue
    # The harness's test hooks point at fakes: a command that took --version for a run would change nothing here.
    p = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                       cwd=t.tmp, env=env)
    lines = p.stdout.splitlines()
    t.ok(p.returncode == 0 and p.stderr == "" and len(lines) == 1 and lines[0].split()[-1:] == [names.VERSION],
         "%s --version: one line ending in %s, exit 0" % (name, names.VERSION),
         "exit %d, stdout %r, stderr %r" % (p.returncode, p.stdout[:200], p.stderr[:200]))
t.done()
