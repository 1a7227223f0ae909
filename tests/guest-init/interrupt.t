#!/usr/bin/python3
# tier: slow
"""interrupt.t: an interrupted guest run leaves no tracefs instance (found by
`make torture`: a TERM during the observer VM left one): a second signal
cannot cut the launcher's clean-up short, an instance interrupted while
being set up is removed, and the launcher removes its own on every way out
(TAP; a fake tracefs folder, no root)."""
import os
import signal
import sys

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(here, "..", "..", "contract"), os.path.join(here, "..", "..", "host-scripts"), os.path.join(here, "..", "lib")]
from taplib import Tap  # noqa: E402

t = Tap()
work = t.tmp
os.environ["CB_TRACEFS"] = work
from cbhost import kvmtrace, launcher  # noqa: E402

ok = t.ok
for e in kvmtrace.EVENTS:
    os.makedirs(os.path.join(work, "events", "kvm", e))
os.makedirs(os.path.join(work, "instances"))
inst = kvmtrace.instance(os.getpid())

# 1-2: two TERMs; the second arrives during the clean-up the first started.
launcher.handle_interrupts()
steps = []
try:
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        steps.append("not interrupted")
    finally:
        steps.append("clean-up started")
        os.kill(os.getpid(), signal.SIGTERM)
        steps.append("clean-up finished")
except KeyboardInterrupt:
    steps.append("interrupted")
ok(steps == ["clean-up started", "clean-up finished", "interrupted"],
   "a second TERM does not cut the clean-up short: %s" % steps)
ok(signal.getsignal(signal.SIGINT) == signal.SIG_IGN, "after the first signal, INT, TERM and HUP are ignored")
launcher.handle_interrupts()

# 3: interrupted between mkdir and the end of its set-up.
real_put = kvmtrace._put


def interrupted_put(path, value):
    raise KeyboardInterrupt


kvmtrace._put = interrupted_put
try:
    kvmtrace.start(os.getpid())
except KeyboardInterrupt:
    pass
kvmtrace._put = real_put
ok(not os.path.exists(inst), "an instance interrupted while being set up is removed")

# 4: whatever way the run ends, main() removes the launcher's own instance.


def run_that_leaves_it(argv):
    os.makedirs(inst, exist_ok=True)
    raise KeyboardInterrupt


launcher._main = run_that_leaves_it
try:
    launcher.main([])
except KeyboardInterrupt:
    pass
ok(not os.path.exists(inst), "the launcher removes its own instance on the way out")

t.done()
