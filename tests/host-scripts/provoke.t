#!/usr/bin/python3
# tier: fast
"""provoke.t: lab/provoke writes RUN/stalls.txt as a new file: a name already there, a link above all
(to a file of root's choosing), is neither followed nor replaced, and the stalls are not begun.  Its
run-lab, L1's console and QEMU are stand-ins here: nothing is booted or stopped."""
import importlib.machinery
import importlib.util
import os
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from taplib import Tap  # noqa: E402

t = Tap()
loader = importlib.machinery.SourceFileLoader("provoke", os.path.join(ROOT, "lab", "provoke"))
provoke = importlib.util.module_from_spec(importlib.util.spec_from_loader("provoke", loader))
loader.exec_module(provoke)


class Proc:
    """run-lab's stand-in: ended, exit 0."""
    pid = os.getpid()

    def poll(self):
        return 0

    def wait(self):
        return 0


stopped = []
provoke.subprocess.Popen = lambda *a, **k: Proc()
provoke.wait_for_readout = lambda *a: True
provoke.qemu_of = lambda pid: 4242
provoke.open_process = lambda pid, name: os.open(os.devnull, os.O_RDONLY)
provoke.stop_loop = lambda fd, stop, every, seconds, log: stopped.append(1) or log.write("0 10 10\n") or "done"
for what, make in (("a link to another file", lambda p, target: os.symlink(target, p)),
                   ("a file", lambda p, target: open(p, "w").write("kept\n")),
                   ("no file", None)):
    run = os.path.join(t.tmp, "run-%d" % len(what))
    os.makedirs(run)
    target = os.path.join(t.tmp, "target-%d" % len(what))
    with open(target, "w") as f:
        f.write("root's own file\n")
    stalls = os.path.join(run, "stalls.txt")
    if make:
        make(stalls, target)
    del stopped[:]
    rc = provoke.main(["provoke", t.tmp, os.path.basename(run), "1", "--stop", "10", "--every", "100", "--seconds", "1"])
    untouched = open(target).read() == "root's own file\n"
    if make:
        t.ok(rc == 1 and untouched and not stopped and (os.path.islink(stalls) or open(stalls).read() == "kept\n"),
             "stalls.txt already there (%s): not followed, not replaced, no stall begun (exit %d)" % (what, rc))
    else:
        t.ok(rc == 0 and stopped and open(stalls).read().endswith("0 10 10\n") and not os.stat(stalls).st_mode & 0o022,
             "stalls.txt made new, writable by root alone, each stop written (exit %d)" % rc)
t.done()
