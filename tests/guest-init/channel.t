#!/usr/bin/python3
# tier: fast
"""channel.t: the launcher stops waiting for a QEMU that does not end (a process
stuck in the kernel outlives timeout(1)'s SIGKILL): cbhost.boot.boot gives up
STUCK_GRACE seconds past its limit and reports a timeout (TAP)."""
import os
import shutil
import stat
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", d) for d in ("contract", "host-scripts")]
from cbhost import boot  # noqa: E402

n = failed = 0


def ok(cond, what):
    global n, failed
    n += 1
    failed += not cond
    print("%sok %d - %s" % ("" if cond else "not ", n, what))


work = tempfile.mkdtemp(prefix="clockbench-channel-test.")
chan = os.path.join(work, "channel.out")
t0 = time.monotonic()
data, hello, end = boot.read_channel(chan, t0, lambda: False, limit=0.3)
took = time.monotonic() - t0
ok(0.3 <= took < 2 and (data, hello, end) == (b"", None, None),
   "read_channel() ends at its limit while the process never ends (%.2f s)" % took)

# A channel is read to frames.MAX_CHANNEL + 1 bytes and no further (the
# frame reader then says it is too long).
from cbhost import frames  # noqa: E402
with open(chan, "wb") as f:
    f.write(b"x" * 1000 + b"CLOCKBENCH-HELLO" + b"y" * (frames.MAX_CHANNEL + (1 << 20)))
data, hello, end = boot.read_channel(chan, time.monotonic(), lambda: True)
ok(len(data) == frames.MAX_CHANNEL + 1 and hello is not None and end is None,
   "a channel over 16 MiB: read to the cap and one byte (%d bytes), the hello seen" % len(data))
os.unlink(chan)

# A mark cut in two by the guest's writes is still found (each poll
# searches the new bytes and the few before them).
with open(chan, "wb") as f:
    f.write(b"z" * 5000 + b"CLOCKBENCH-E")
calls = []


def grow():
    calls.append(1)
    if len(calls) == 2:
        with open(chan, "ab") as g:
            g.write(b"ND\n")
    return len(calls) > 3


data, hello, end = boot.read_channel(chan, time.monotonic(), grow)
ok(end is not None and data.endswith(b"CLOCKBENCH-END\n"), "an end mark written in two parts is seen (end %s)" % end)
os.unlink(chan)

# Stand-ins for timeout(1) and QEMU: `timeout` is replaced by a program.
stub = os.path.join(work, "timeout")


def stand_in(script):
    with open(stub, "w") as f:
        f.write("#!/bin/sh\n" + script)
    os.chmod(stub, stat.S_IRWXU)


os.environ["PATH"] = work + os.pathsep + os.environ["PATH"]
boot.STUCK_GRACE = 1
qmp = os.path.join(work, "qmp.sock")
seen = []
# One that says why and ends, as a QEMU refusing its arguments does (the
# launcher waits up to 2 s for it to end: it need not).
stand_in("echo 'qemu-stand-in: no such machine' >&2\nexit 1\n")
try:
    boot.QMP = lambda path, proc, limit=10.0: (_ for _ in ()).throw(boot.RunError("no QMP"))
    boot.boot(["qemu-stand-in"], work, 1, False, warn=seen.append)
    started = "started"
except boot.RunError as e:
    started = str(e)
ok(started.startswith("QEMU failed to start"), "a QEMU that never opens QMP is a failure to start (%s)" % started)

# One that ignores SIGTERM and whose timeout(1) never ends: it waits for
# ever, deaf to TERM.
stand_in("trap '' TERM\nwhile :; do sleep 1; done\n")

boot.QMP = type("Q", (), {"__init__": lambda self, path, proc, limit=10.0: None,
                          "cmd": lambda self, name, **a: [] if name == "query-cpus-fast" else {},
                          "close": lambda self: None})
t0 = time.monotonic()
b = boot.boot(["qemu-stand-in"], work, 1, False, warn=seen.append)
took = time.monotonic() - t0
ok(b["status"] == 137 and 2 <= took < 8, "a QEMU that outlives its limit and SIGKILL: given up on after limit + "
   "STUCK_GRACE, reported as timed out (status %s in %.1f s)" % (b["status"], took))
ok(any("stuck in the kernel" in w for w in seen), "and the launcher says so: %s" % (seen[-1] if seen else "nothing"))
shutil.rmtree(work, ignore_errors=True)
print("1..%d" % n)
sys.exit(1 if failed else 0)
