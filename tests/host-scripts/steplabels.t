#!/usr/bin/python3
# tier: fast
"""steplabels.t: in a step of compare (--run-dir and --clocksource), the guest launcher checks in its own process
that the step's files measured their label: the host result before the guest boots (none booted for a wrong one),
its own result once written; each failure one line in compare's words, exit 1.  Without a label given (bench-guest
alone) nothing is checked.  The boot is a stand-in (run.run), as are the machine's checks and the accelerator."""
import contextlib
import io
import os
import shutil
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts")]
from taplib import BEFORE, Tap  # noqa: E402
from cbhost import accel, launcher, preflight, run  # noqa: E402

t = Tap()
booted = []


def stand_in(src, name):
    """run.run's stand-in: puts the fixture src into the run folder as name
    (the result the launcher wrote) and returns its path."""
    def fake_run(a):
        booted.append(name)
        dst = os.path.join(a.run_dir, name)
        shutil.copy(src, dst)
        return dst
    return fake_run


preflight.check = lambda a: None
accel.choose = lambda a: setattr(a, "accel", "tcg")


def launch(folder, host, guest, cs="tsc", label=True):
    """The launcher on a run folder holding host (a fixture copied as
    host-<cs>.json, or None), its stand-in boot writing guest: (exit
    status, stdout, stderr, booted)."""
    d = os.path.join(t.tmp, folder)
    os.mkdir(d)
    if host:
        shutil.copy(host, os.path.join(d, "host-%s.json" % cs))
    del booted[:]
    run.run = stand_in(guest, "guest-%s-2vcpu.json" % cs)
    out, err = io.StringIO(), io.StringIO()
    argv = ["--run-dir", d, "--quiet"] + (["--clocksource", cs] if label else [])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = launcher.main(argv)
    return rc, out.getvalue(), err.getvalue(), list(booted)


HOST = os.path.join(BEFORE, "host-tsc.json")  # measured on tsc all along
GUEST = os.path.join(BEFORE, "guest-tsc-2vcpu.json")

rc, out, err, ran = launch("good", HOST, GUEST)
t.ok(rc == 0 and out.strip().endswith("/good/guest-tsc-2vcpu.json") and err == "" and ran,
     "host and guest measured on tsc, labelled tsc: exit %d, the result's path last, nothing on stderr" % rc, err)

rc, out, err, ran = launch("badhost", HOST, GUEST, cs="hpet")
want = "bench-guest: [hpet] host-hpet.json does not measure what its name says: "
t.ok(rc == 1 and err.startswith(want) and "labelled hpet, but clocksource at start tsc" in err
     and len(err.splitlines()) == 1 and not ran and out == "",
     "a host result measured on tsc, labelled hpet: exit %d, one line in compare's words, no guest booted" % rc, err)

with open(os.path.join(t.tmp, "empty.json"), "w") as f:
    f.write("{}\n")
rc, out, err, ran = launch("unreadable", os.path.join(t.tmp, "empty.json"), GUEST)
t.ok(rc == 1 and err.startswith("bench-guest: [tsc] host-tsc.json does not measure what its name says: ")
     and len(err.splitlines()) == 1 and not ran,
     "a host result that cannot be read: exit %d, said as not measuring its label (why: the reader's line)" % rc, err)

rc, out, err, ran = launch("noguesthost", None, GUEST, cs="hpet")
t.ok(rc == 1 and ran and err.startswith("bench-guest: [hpet] guest-hpet-2vcpu.json does not measure what its name says: ")
     and "labelled hpet, but clocksource at start tsc" in err and len(err.splitlines()) == 1 and out == "",
     "no host result, a guest measured on tsc labelled hpet: booted, then exit %d, one line, no path printed" % rc, err)

rc, out, err, ran = launch("alone", None, GUEST, cs="hpet", label=False)
t.ok(rc == 0 and ran and err == "" and out.strip().endswith("guest-hpet-2vcpu.json"),
     "no label given (bench-guest alone): nothing checked, exit %d" % rc, err)
t.done()
