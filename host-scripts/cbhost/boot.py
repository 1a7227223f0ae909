"""boot.py: one VM run: QEMU under timeout(1), its vCPUs pinned over QMP, the guest's results channel read as it grows.

The command lines come from qemu.py, the one builder; this module runs them.
"""
import json
import os
import signal
import socket
import subprocess
import time

from . import frames
from .msg import RunError

# A guest that sent its result is given this long to power off, then killed.
POWEROFF_GRACE = 10.0
# timeout(1) sends SIGKILL 5 s after its limit; past this many seconds
# more, a QEMU that has not ended is stuck and no longer waited for.
STUCK_GRACE = 20


class QMP:
    """A minimal QMP client: one command at a time, events skipped."""

    def __init__(self, path, proc, limit=10.0):
        end = time.monotonic() + limit
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if proc.poll() is not None or time.monotonic() > end:
                    raise RunError("QMP socket %s: QEMU did not open it" % path)
                time.sleep(0.005)
        self.s.settimeout(limit)
        self.f = self.s.makefile("rwb")
        try:
            self.f.readline()  # greeting
        except OSError as e:
            raise RunError("QMP: read: %s" % (e.strerror or e))
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        try:
            self.f.write(json.dumps(msg).encode() + b"\n")
            self.f.flush()
            while True:
                line = self.f.readline()
                if not line:
                    raise RunError("QMP %s: connection closed" % name)
                r = json.loads(line)
                if "return" in r:
                    return r["return"]
                if "error" in r:
                    raise RunError("QMP %s: %s" % (name, r["error"].get("desc")))
        except OSError as e:
            raise RunError("QMP %s: %s" % (name, e.strerror or e))

    def close(self):
        try:
            self.f.close()
            self.s.close()
        except OSError:
            pass


def pin_vcpus(cpus, pin):
    """Pins each vCPU thread (from query-cpus-fast) to its own host CPU
    where there are enough, round robin where not.  Returns the record."""
    allowed = sorted(os.sched_getaffinity(0))
    rec = {"mode": "pinned" if pin else "floating", "host_cpus": allowed, "vcpus": []}
    tids = [c.get("thread-id") for c in cpus]
    if pin and len(set(tids)) < len(tids):
        rec["note"] = "vCPUs share one thread (single-threaded TCG): pinned to one host CPU"
    if pin and len(cpus) > len(allowed):
        rec["note"] = "more vCPUs than host CPUs: pinned round robin"
    for i, c in enumerate(sorted(cpus, key=lambda c: c.get("cpu-index", 0))):
        e = {"vcpu": c.get("cpu-index"), "thread_id": c.get("thread-id"), "host_cpu": None}
        if pin:
            host = allowed[i % len(allowed)]
            try:
                os.sched_setaffinity(c["thread-id"], {host})
                e["host_cpu"] = host
            except (OSError, KeyError) as ex:
                raise RunError("pin vCPU %s (thread %s) to CPU %d: %s"
                               % (c.get("cpu-index"), c.get("thread-id"), host, ex))
        rec["vcpus"].append(e)
    return rec


def read_channel(chan, t0, done, on_hello=None, on_end=None, limit=None):
    """Polls the channel file until done() is true, POWEROFF_GRACE seconds
    after an end line, or limit seconds after t0 (whatever happens to the
    process watched: a QEMU stuck in the kernel outlives timeout(1)'s
    SIGKILL, and timeout then waits for it for ever).  Calls
    on_hello/on_end when the guest's hello and the end of a frame first
    appear.  Returns (bytes, hello ms, end ms) with times since t0, None
    where not seen."""
    data, hello_ms, result_ms = bytearray(), None, None
    cap = frames.MAX_CHANNEL + 1  # one byte over: the frame reader says "too long"
    f = None

    def seen(mark, new):
        """mark in the part read last (and the bytes before it a mark may
        straddle): each byte is searched a bounded number of times."""
        return data.find(mark, max(0, len(data) - new - len(mark))) >= 0

    while True:
        finished = done()
        if result_ms is not None and time.monotonic() - t0 > result_ms / 1000 + POWEROFF_GRACE:
            finished = True
        if limit is not None and time.monotonic() - t0 > limit:
            finished = True
        if f is None and os.path.exists(chan):
            f = open(chan, "rb")
        if f is not None and len(data) < cap:
            more = f.read(cap - len(data))
            if more:
                data += more
                t = round((time.monotonic() - t0) * 1000)
                if hello_ms is None and seen(b"CLOCKBENCH-HELLO", len(more)):
                    hello_ms = t
                    if on_hello:
                        on_hello()
                if result_ms is None and seen(b"CLOCKBENCH-END", len(more)):
                    result_ms = t
                    if on_end:
                        on_end()
        if finished:
            break
        time.sleep(0.005)
    if f is not None:
        if len(data) < cap:
            data += f.read(cap - len(data))
        f.close()
    return bytes(data), hello_ms, result_ms


def stop(proc, grace):
    """Waits up to grace seconds for timeout(1) and QEMU to end, then kills
    the process group they run in (their own session)."""
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def read_pid(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = f.read().strip().splitlines()
    except OSError:
        return None
    return lines[-1] if lines else None


def boot(argv, work, timeout, pin, on_hello=None, on_end=None, warn=None):
    """Runs argv (qemu.guest(): paused, QMP and the pidfile in work, the
    channel at work/channel.out) under timeout -k 5: pins the
    vCPUs over QMP, continues, reads the channel until QEMU ends.  Returns
    {data, hello_ms, result_ms, status (None: killed after its result),
    wall_ms, pinning, argv, pid}."""
    full = ["timeout", "-k", "5", str(timeout)] + argv
    qlog = os.path.join(work, "qemu.log")
    with open(qlog, "wb") as log:
        t0 = time.monotonic()
        proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        try:
            q = QMP(os.path.join(work, "qmp.sock"), proc)
            pinning = pin_vcpus(q.cmd("query-cpus-fast"), pin)
            pid = read_pid(os.path.join(work, "qemu.pid"))
            q.cmd("cont")
            q.close()
        except RunError as e:
            stop(proc, 2)
            raise RunError("QEMU failed to start: %s" % (last_line(qlog) or e))
        data, hello_ms, result_ms = read_channel(os.path.join(work, "channel.out"), t0,
                                          lambda: proc.poll() is not None, on_hello, on_end,
                                          timeout + STUCK_GRACE)
        rc = proc.poll()
    finally:
        stop(proc, 0)
    if rc is None and result_ms is None:
        # timeout(1) should have ended QEMU long ago: it did not die.
        rc = 137
        if warn:
            warn("QEMU did not end within %d s of its time limit, even after SIGKILL (stuck in the "
                 "kernel?): given up on" % STUCK_GRACE)
    elif rc is None and warn:
        warn("the guest did not power off within %.0f s of its result: QEMU killed" % POWEROFF_GRACE)
    return {"data": data, "hello_ms": hello_ms, "result_ms": result_ms, "status": rc,
            "wall_ms": round((time.monotonic() - t0) * 1000), "pinning": pinning, "argv": argv, "pid": pid}


def run_for(argv, seconds):
    """Runs argv under timeout -k 2 for at most seconds, output discarded,
    and waits for it (the observer VM: only KVM's side of it matters; QEMU
    is a child of timeout, so argv should write a pidfile)."""
    p = subprocess.Popen(["timeout", "-k", "2", str(seconds)] + argv, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        p.wait()
    finally:
        stop(p, 0)
