"""runningvm.py: compare's running-VM step: a KVM VM started on tsc lives through the switch to a fallback and back, then is paused and resumed; its master clock and stable bit in each phase, from its own KVM trace, into running-vm-<cs>.json.

compare measures a fresh guest on each clocksource; the VMs an operator
lives with were already running when the host switched.  KVM turns a VM's
master clock off when the host leaves tsc and does not turn it back on
when the host returns (cbhost.heal): this step shows it, or shows a kernel
that does.  Phases, each PHASE_S long and opened by a trace marker:
before (the VM starts, the host on tsc), fallback (the host on the
fallback: the bracket, host-scripts/clocksource, switches and always puts
back), return (the host on tsc again), heal (QMP stop then cont).  Each
phase's facts are read from the VM's own events: the updates in it, and
the state at its end (the last master-clock update and the last pvclock
update so far: a state changes only by an event, and the trace is checked
complete).  The VM boots the host's kernel without an initramfs: it runs
no clockbench, so its own read path is not measured here (said in the
file).
"""
import contextlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

from cbcontract import load, runfolder
from cbcontract.util import cut
from . import frames, heal, kvmtrace, qemu, tracing
from .boot import last_line
from .msg import RunError

PHASES = load.RUNNING_VM_PHASES
PHASE_S = 3.0
MARK = "clockbench-phase-"
TRACE_KB = 4096
VCPUS = 2


def phases(lines, pid):
    """[{phase, updates..., master_clock, stable_bit, hostclock}] of VM pid
    from a trace with the phase markers: per phase the events in it, and
    the state at its end (carried from earlier phases when it had none).
    One pass."""
    out, cur, clock = [], None, heal.Clock()
    win = None
    for tg, _, ev, msg in kvmtrace.events(lines):
        if ev == "tracing_mark_write":
            m = msg.strip()
            if m.startswith(MARK) and m[len(MARK):] in PHASES + ("end",):
                if cur is not None:
                    out.append(_close(cur, win, clock))
                cur = m[len(MARK):] if m[len(MARK):] != "end" else None
                win = kvmtrace.Counts()
            continue
        if tg is None or int(tg) != pid or ev not in kvmtrace.EVENTS or cur is None:
            continue
        clock.add(ev, msg)
        win.add(ev, msg)
    if cur is not None:
        out.append(_close(cur, win, clock))
    return out


def _close(name, win, clock):
    c = win.done()
    return {"phase": name, "pvclock_with": c["stable_bit"]["with"], "pvclock_without": c["stable_bit"]["without"],
            "master_on_updates": c["master_clock"]["on_updates"], "master_off_updates": c["master_clock"]["off_updates"],
            "hostclock": c["master_clock"]["hostclock"], "master_clock": clock.master, "stable_bit": clock.stable}


WORK_PREFIX = "clockbench-running-vm."


def clean_leftovers():
    """Removes what a step killed outright (SIGKILL: no finally ran) left:
    its private folder (WORK_PREFIX<pid>.*, ours, in the temporary folder)
    when that pid is gone; its tracefs instance goes by kvmtrace.clean().
    Its VM died with it (die_with_parent)."""
    tmp = tempfile.gettempdir()
    try:
        names_ = os.listdir(tmp)
    except OSError:
        return
    for n in names_:
        if not n.startswith(WORK_PREFIX):
            continue
        pid = n[len(WORK_PREFIX):].split(".", 1)[0]
        path = os.path.join(tmp, n)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if pid.isdigit() and not os.path.exists("/proc/%s" % pid) and stat.S_ISDIR(st.st_mode) \
                and st.st_uid == os.geteuid():
            shutil.rmtree(path, ignore_errors=True)


def die_with_parent():
    """In the child before exec: SIGKILL when the step's process dies, however
    (PR_SET_PDEATHSIG): the VM never outlives the step."""
    import ctypes
    import signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


# The guest's own view (--initramfs: the suite's guest, clockbench.repeat=1):
# it measures CLOCK_MONOTONIC through the vDSO again and again, a result
# frame each on its second serial port; a phase lasts its seconds and until
# the guest sent GUEST_FRAMES results in it (at most GUEST_PHASE_LIMIT s),
# and only the results after a phase's first count for it (the first may
# have begun in the phase before).
GUEST_APPEND = ("clockbench.repeat=1 clockbench.threads=1 clockbench.duration=0.1 clockbench.clock=monotonic "
                "clockbench.method=vdso clockbench.check=none clockbench.settle=0")
GUEST_FRAMES = 3
GUEST_PHASE_LIMIT = 120.0
GUEST_BOOT_LIMIT = 300.0  # its boot and first result, nested under an emulator at worst
END = b"\nCLOCKBENCH-END seq="


def frames_in(path):
    """How many frames the guest's channel file holds whole (their end
    lines), reading at most frames.MAX_CHANNEL bytes."""
    try:
        with open(path, "rb") as f:
            return f.read(frames.MAX_CHANNEL).count(END)
    except OSError:
        return 0


def wait_frames(path, more, limit, alive=lambda: True):
    """Waits until path holds `more` frames beyond those it holds now, or
    limit s, or alive() turns false; True when they came."""
    want, end = frames_in(path) + more, time.monotonic() + limit
    while frames_in(path) < want:
        if time.monotonic() > end or not alive():
            return False
        time.sleep(0.1)
    return True


def guest_view(path, counts):
    """Per phase (counts: [(phase, frames whole at its end)]), what the
    guest measured in it: {phase, results, paths, median_ns, clocksource},
    the first result of each phase left out.  Bounded: frames.parse."""
    try:
        with open(path, "rb") as f:
            parsed = frames.parse(f.read(frames.MAX_CHANNEL))
    except OSError:
        return []
    res = []
    for fr in parsed["frames"]:
        row = None
        if fr["kind"] == "result":
            with contextlib.suppress(ValueError, RecursionError, KeyError, TypeError):
                doc = json.loads(fr["payload"])
                row = next((r for r in doc["bench"]["results"] if r.get("clock") == "monotonic"
                            and r.get("method") == "vdso"), None)
        res.append(row if isinstance(row, dict) else None)
    out, start = [], 0
    ends = frames_in(path)
    for phase, n in counts:
        n = min(n, ends)
        mine = [r for r in res[start + 1:n] if r is not None]
        out.append({"phase": phase, "results": len(mine),
                    "paths": sorted({cut(str(r.get("path")), 16) for r in mine}),
                    "median_ns": [r.get("ns_per_call", {}).get("median") for r in mine
                                  if isinstance(r.get("ns_per_call"), dict)][:64],
                    "clocksource": cut(str(mine[-1].get("clocksource")), 32) if mine else None})
        start = n
    return out


def run(run_dir, fallback, kernel, qemu_bin=qemu.BINARY, baseline="tsc", seconds=PHASE_S, force=False,
        clocksource=None, say=None, initramfs=None):
    """The step: writes running-vm-<fallback>.json (and its raw trace) into
    run_dir once; returns it as read back (load.RunningVM).  RunError on a failure (the
    clocksource is the bracket's to put back, the VM and the trace
    instance are removed on every path)."""
    say = say or (lambda m: None)
    name = runfolder.running_vm_name(fallback)
    runfolder.free_path(run_dir, name)
    clean_leftovers()
    work = tempfile.mkdtemp(prefix="%s%d." % (WORK_PREFIX, os.getpid()))
    try:
        return _step(run_dir, name, work, fallback, kernel, qemu_bin, baseline, seconds, force, clocksource, say,
                     initramfs)
    finally:
        shutil.rmtree(work, ignore_errors=True)  # its QMP socket, console and raw trace, on every path


def _step(run_dir, name, work, fallback, kernel, qemu_bin, baseline, seconds, force, clocksource, say, initramfs):
    """run()'s body, in its private folder work."""
    ident, proc, pause_ms = os.getpid(), None, None
    chan, counts, in_guest = os.path.join(work, "results.chan"), [], None
    raw = os.path.join(work, "trace.txt")
    kvmtrace.clean()
    inst = kvmtrace.start(ident, TRACE_KB)
    try:
        heal.marker(inst, MARK + "before")
        serials = (os.path.join(work, "console.log"),) + ((chan,) if initramfs else ())
        # The suite's guest as the launcher runs it under KVM (-cpu host: the
        # engine needs the host's instructions); KVM's side alone, QEMU's default model.
        argv = qemu.command(kernel, qemu=qemu_bin, accel="kvm", cpu="host" if initramfs else None, vcpus=VCPUS,
                            mem=256, initrd=initramfs,
                            append="console=ttyS0 panic=-1" + (" " + GUEST_APPEND if initramfs else ""),
                            serials=serials, qmp=os.path.join(work, "qmp.sock"),
                            pidfile=os.path.join(work, "qemu.pid"))
        with open(os.path.join(work, "qemu.log"), "wb") as log:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True, preexec_fn=die_with_parent)
        q = _qmp(os.path.join(work, "qmp.sock"), proc, work)
        pid = q.pid
        say("a KVM VM (pid %d) started on %s; %g s a phase" % (pid, baseline, seconds))
        alive = lambda: proc.poll() is None  # noqa: E731
        if initramfs:
            say("waiting for the guest's first results (at most %g s)" % GUEST_BOOT_LIMIT)
            if wait_frames(chan, 1, GUEST_BOOT_LIMIT, alive):  # its first result
                in_guest = True
            else:
                in_guest = "no result from the guest within %g s: this KVM did not boot it" % GUEST_BOOT_LIMIT
        # Each phase ends with the frames the guest sent so far and the next one's marker.
        for phase, then in zip(PHASES, PHASES[1:] + ("end",)):
            if phase == "fallback":
                env = dict(os.environ, CB_OWN_PIDS=str(pid), CB_CS_NOTES="0")
                hold = ["sleep", "%g" % seconds]
                if in_guest is True:  # on the fallback until the guest measured there too
                    env["PYTHONPATH"] = os.pathsep.join(sys.path)
                    hold = [sys.executable, "-m", "cbhost.runningvm", "hold", chan, "%g" % seconds]
                cmd = [clocksource, "set", fallback] + (["--force"] if force else []) + ["--"] + hold
                rc, err = bracket(cmd, env)
                if rc != 0:
                    raise RunError("the switch to %s under the VM failed (exit %d): %s" % (
                        fallback, rc, cut((err.strip().splitlines() or ["?"])[-1], 300)))
            else:
                if phase == "heal":
                    t0 = time.monotonic()
                    q.cmd("stop")
                    q.cmd("cont")
                    pause_ms = (time.monotonic() - t0) * 1000.0
                time.sleep(seconds)
                if in_guest is True:
                    wait_frames(chan, GUEST_FRAMES, GUEST_PHASE_LIMIT, alive)
            counts.append((phase, frames_in(chan)))
            heal.marker(inst, MARK + then)
        q.close()
    finally:
        kvmtrace.stop(ident, raw)
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait()
    lines = list(kvmtrace.read_lines(raw))
    ph = phases(lines, pid)
    summ = kvmtrace.summarize(lines, pid)
    doc = {"schema": runfolder.SCHEMA_RUNNING_VM, "baseline": baseline, "fallback": fallback,
           "host_kernel": os.uname().release, "phase_seconds": seconds,
           "vm": {"pid": pid, "accel": "kvm", "cpu": "QEMU's default model", "vcpus": VCPUS, "kernel": kernel},
           "phases": ph, "pause_ms": None if pause_ms is None else round(pause_ms, 3),
           "complete": summ["complete"],
           "in_guest": ({"measured": True, "what": "CLOCK_MONOTONIC through the vDSO, one thread, 0.1 s a result; "
                                                   "a phase's first result left out",
                         "phases": guest_view(chan, counts)} if in_guest is True else
                        {"measured": False, "reason": in_guest or "the VM boots the host's kernel without clockbench "
                                                                  "as its PID 1 (it exists for KVM's side of its clock)"}),
           "trace_file": tracing.place_raw(run_dir, runfolder.running_vm_raw_name(fallback), raw)}
    runfolder.write_once(os.path.join(run_dir, name), json.dumps(doc, indent=1) + "\n")
    return load.load_running_vm(os.path.join(run_dir, name))


def bracket(cmd, env):
    """Runs the clocksource bracket (cmd) and waits for it: (status, its
    stderr).  Interrupted (KeyboardInterrupt: INT, TERM, HUP), it is never
    killed before it has put the clocksource back: it is sent TERM (on
    which it restores) and waited for, then the interrupt goes on."""
    p = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
    try:
        _, err = p.communicate()
    except KeyboardInterrupt:
        p.terminate()
        p.communicate()
        raise
    return p.returncode, err


def _qmp(path, proc, work):
    """A QMP connection to the VM just started (heal.QMP, whose peer pid is
    the VM's), once QEMU opened its socket; RunError when it did not."""
    end = time.monotonic() + 10
    while not os.path.exists(path):
        if proc.poll() is not None or time.monotonic() > end:
            raise RunError("QEMU did not start a KVM VM: %s" % (last_line(os.path.join(work, "qemu.log")) or
                                                                 "no QMP socket in 10 s"))
        time.sleep(0.02)
    try:
        return heal.QMP(path)
    except RunError as e:
        time.sleep(0.2)  # a QEMU that opened its socket and then failed: its own words
        if proc.poll() is None:
            raise
        raise RunError("QEMU did not start a KVM VM: %s" % (last_line(os.path.join(work, "qemu.log")) or e))


def main(argv):
    """`python3 -m cbhost.runningvm hold CHAN SECONDS`: the command the
    bracket runs on the fallback: SECONDS, then until the guest sent
    GUEST_FRAMES more results (at most GUEST_PHASE_LIMIT s)."""
    if len(argv) != 4 or argv[1] != "hold":
        print("usage: python3 -m cbhost.runningvm hold CHAN SECONDS", file=sys.stderr)
        return 2
    time.sleep(float(argv[3]))
    wait_frames(argv[2], GUEST_FRAMES, GUEST_PHASE_LIMIT)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
