"""heal.py: the running VMs a clocksource switch left without the stable bit, found from KVM's events, and their heal (a pause and resume), confirmed.

KVM turns a VM's master clock off when the host leaves a TSC-based
clocksource (arch/x86/kvm/x86.c, pvclock_gtod_notify()), and nothing turns
it back on when the host returns: KVM re-evaluates it on KVM_SET_CLOCK,
which QEMU's kvmclock device issues when a paused VM resumes (and on an
incoming migration).  Measured on Linux 6.18 (docs/health.md): a VM that
lived through a switch away and back kept flags 0x0 for 330 s; QMP stop and
cont brought the master clock and the bit back within a second.

Two kinds of VM lack the bit on a host back on tsc, and only one is
helped by a pause.  A guest kernel chooses at boot whether it reads
kvm-clock in user space (kvmclock.c: only if the bit was set then): one
that booted with the bit and lost it pays a syscall per read until the bit
returns, and a pause and resume ends that; one that booted while the host
was off tsc reads by syscall until the guest itself reboots.  survey()
tells them apart by the VM's start time against the host's switches in
this boot's kernel log, and says so when either is not known.

Every input is data: trace lines (kvmtrace's bounded reader), kernel-log
records (kmsg), /proc files (bounded reads), a QMP peer's replies (one
bounded line each).  A VM is paused only through libvirt (virsh) or a QMP
socket the operator names, never by a signal.
"""
import json
import os
import re
import signal
import socket
import struct
import time

from cbcontract import kmsg, load, names
from cbcontract.util import InputError, cut
from . import kvmtrace, libvirt
from .msg import RunError

TSC_NAMES = kmsg.TSC_NAMES
MAX_VMS = 1024
MAX_QMP_LINE = 1 << 16
INTERRUPTS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
CONFIRM_S = 5.0  # the longest a resumed VM's master clock is waited for
TRACE_KB = 1024  # the heal's own instance: a few seconds of clock events


def proc_dir():
    return os.environ.get("CB_PROC", "/proc")


def read_small(path, limit=4096):
    """A small file's bytes (at most limit), non-blocking; None if unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, limit)
    except OSError:
        return None
    finally:
        os.close(fd)


def kvm_pids(kvm_dev=None):
    """The processes holding the KVM device open (the VMs), sorted; at most
    MAX_VMS.  Another user's processes are seen only by root."""
    proc = proc_dir()
    dev = kvm_dev or os.environ.get("CB_KVM_DEV", names.KVM_DEV)
    real = os.path.realpath(dev)
    out = []
    for pid in sorted(int(p) for p in os.listdir(proc) if p.isdigit() and len(p) <= 10):
        try:
            fds = os.listdir(os.path.join(proc, str(pid), "fd"))
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(os.path.join(proc, str(pid), "fd", fd)) in (dev, real):
                    out.append(pid)
                    break
            except OSError:
                pass
        if len(out) >= MAX_VMS:
            break
    return out


def start_s(pid):
    """When process pid started, in seconds since boot (/proc/PID/stat's
    starttime), or None."""
    raw = read_small(os.path.join(proc_dir(), str(pid), "stat"))
    if raw is None:
        return None
    rest = raw[raw.rfind(b")") + 2:].split()  # the name may hold spaces and ')'
    try:
        return int(rest[19]) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError):
        return None


def off_tsc(sw, cut=False):
    """The periods [from_s, to_s or None] the host spent off a TSC-based
    clocksource after first reaching one (before it, in early boot, no VM
    runs), from a boot's stamped switches ([stamp_s, clocksource], in
    order: kmsg.summarize()'s switch_times; cut: the boot's first ones were
    not kept, so its first switch away from anything counts)."""
    periods, on = [], cut
    for stamp, cs in sw:
        if cs in TSC_NAMES:
            if periods and periods[-1][1] is None:
                periods[-1][1] = stamp
            on = True
        elif on and not (periods and periods[-1][1] is None):
            periods.append([stamp, None])
    return periods


def booted_off_tsc(started, periods, tick=None):
    """True when a VM started at `started` (s since boot) did so while the
    host was off tsc, False when not, None when its start is not known or
    lies within one clock tick (starttime's resolution) of a switch."""
    if started is None:
        return None
    tick = tick or 1.0 / os.sysconf("SC_CLK_TCK")
    for a, b in periods:
        if abs(started - a) <= tick or (b is not None and abs(started - b) <= tick):
            return None
        if a < started and (b is None or started < b):
            return True
    return False


class Clock:
    """One VM's KVM clock from its trace events: the last master-clock
    state, whether its last pvclock update carried the stable bit, and when
    (trace seconds) each was last seen."""

    def __init__(self):
        self.counts = kvmtrace.Counts()
        self.master = self.stable = None
        self.master_at = self.stable_at = None

    def add(self, ts, ev, msg):
        c = self.counts.c
        before = c["stable_bit"]["with"], c["stable_bit"]["without"], c["master_clock"]["on_updates"] + c["master_clock"]["off_updates"]
        self.counts.add(ev, msg)
        after = c["stable_bit"]["with"], c["stable_bit"]["without"], c["master_clock"]["on_updates"] + c["master_clock"]["off_updates"]
        if after[:2] != before[:2]:
            self.stable, self.stable_at = after[0] != before[0], ts
        if after[2] != before[2]:
            self.master, self.master_at = c["master_clock"]["last"], ts

    def state(self):
        """"ok", "lost" or "unknown": the stable bit of the last update, else
        the master clock's last state, else nothing seen."""
        v = self.stable if self.stable is not None else self.master
        return {True: "ok", False: "lost", None: "unknown"}[v]


def clocks(lines, after=None):
    """{tgid: Clock} of a trace's KVM events (record-tgid lines; a line
    with no tgid is no one's); with after, only the events after the
    trace_marker line that holds it.  One pass over bounded lines
    (kvmtrace.fields)."""
    out, on = {}, after is None
    for tg, ts, ev, msg in kvmtrace.events(lines):
        if ev == "tracing_mark_write":
            on = on or msg.strip() == after
            continue
        if not on or tg is None or ev not in kvmtrace.EVENTS:
            continue
        c = out.get(int(tg))
        if c is None:
            if len(out) >= MAX_VMS:
                continue
            c = out[int(tg)] = Clock()
        c.add(float(ts), ev, msg)
    return out


# The watch's record, where its own trace saw nothing: a VM whose master
# clock is off may make no clock update for minutes, and the watch has
# followed every VM's events since it started.
_WATCHED = re.compile(r'node_clockbench_vm_(stable_bit|master_clock)\{[^}\n]{0,512}?\bpid="([0-9]{1,10})"[^}\n]{0,512}\} ([01])$')
MAX_TEXTFILE = 4 << 20


def watched(path):
    """{pid: {"stable_bit": bool, "master_clock": bool}} from the watch's
    textfile (clockbench-watch.prom), or {} when it cannot be read; at most
    MAX_TEXTFILE bytes, each line matched by a bounded pattern.  The file
    is the watch's (a symlink into its own folder, by design): what it
    says counts only for the VMs running now (survey checks the pid)."""
    try:
        raw = load.read_regular(path, MAX_TEXTFILE, nofollow=False)
    except InputError:
        return {}
    out = {}
    for line in raw.decode("utf-8", "replace").split("\n"):
        m = _WATCHED.match(line)
        if m and len(out) < MAX_VMS:
            out.setdefault(int(m.group(2)), {})[m.group(1)] = m.group(3) == "1"
    return out


# The QMP peer: a socket the operator names.

def peer_pid(sock):
    """The pid at the other end of a connected unix socket (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[0]


class QMP:
    """A QMP connection to a socket the operator named: one command at a
    time, each reply one bounded line, events skipped; every failure a
    RunError naming the socket."""

    def __init__(self, path, timeout=5.0):
        self.path = path
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(timeout)
        try:
            self.s.connect(path)
            self.pid = peer_pid(self.s)
            self.f = self.s.makefile("rb")
            try:
                greeting = self._line()
            except RunError as e:
                raise RunError("%s: not a QMP socket (%s)" % (cut(path), str(e).rsplit(": ", 1)[-1]))
            if "QMP" not in greeting:
                raise RunError("%s: not a QMP socket (its first message has no QMP greeting)" % cut(path))
            self.cmd("qmp_capabilities")
        except OSError as e:
            self.close()
            raise RunError("%s: %s" % (cut(path), e.strerror or e or "timed out"))
        except RunError:
            self.close()
            raise

    def _line(self):
        try:
            raw = self.f.readline(MAX_QMP_LINE)
        except OSError as e:
            raise RunError("%s: read: %s" % (cut(self.path), e.strerror or e or "timed out"))
        if not raw:
            raise RunError("%s: QEMU closed the connection" % cut(self.path))
        if not raw.endswith(b"\n"):
            raise RunError("%s: a reply over %d bytes" % (cut(self.path), MAX_QMP_LINE))
        try:
            msg = json.loads(raw)
        except ValueError:
            raise RunError("%s: a reply that is not JSON" % cut(self.path))
        if not isinstance(msg, dict):
            raise RunError("%s: a reply that is not a JSON object" % cut(self.path))
        return msg

    def cmd(self, name):
        try:
            self.s.sendall(json.dumps({"execute": name}).encode() + b"\n")
        except OSError as e:
            raise RunError("%s: %s: %s" % (cut(self.path), name, e.strerror or e or "timed out"))
        for _ in range(1000):  # events before the reply: bounded too
            msg = self._line()
            if "return" in msg:
                return msg["return"]
            if "error" in msg:
                err = msg["error"] if isinstance(msg["error"], dict) else {}
                raise RunError("%s: %s: %s" % (cut(self.path), name, cut(str(err.get("desc", "error")))))
        raise RunError("%s: %s: no reply among 1000 messages" % (cut(self.path), name))

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


# The survey and the heal.

class VM:
    """One running VM: pid, name (and where the name came from), how it can
    be paused (libvirt, qmp or None), its start, its clock."""

    def __init__(self, pid, name, name_from, started):
        self.pid, self.name, self.name_from, self.started = pid, name, name_from, started
        self.via, self.qmp = None, None
        self.source = "KVM's events"  # where its clock state was read
        self.clock = Clock()
        self.booted_off = None
        self.result = None  # the heal's outcome: text

    def verdict(self):
        """(what, advice): this VM's state and what to do about it."""
        st = self.clock.state()
        if self.booted_off:
            return ("booted while the host was off tsc (%s)" % {"ok": "it has the stable bit now", "lost": "it lacks "
                    "the stable bit", "unknown": "no KVM clock event seen"}[st],
                    "its kernel chose at boot to read the clock by syscall, and a pause does not change that: "
                    "reboot the guest (from inside it) to read in user space again")
        if self.source != "KVM's events":
            st_text = " (%s)" % self.source
        else:
            st_text = ""
        if st == "ok":
            return "has the stable bit" + st_text, "nothing to do"
        if st == "unknown":
            return "no KVM clock event seen", "its state is not known (a VM whose master clock is on is quiet)"
        if self.via is None:
            return ("lost the stable bit" + st_text, "pause and resume it (clockbench heal --qmp ITS-QMP-SOCKET %s: "
                    "it is not libvirt's), else migrate or restart it" % self.pid)
        why = "" if self.booted_off is False else " (when it booted is not known: if the host was off tsc then, " \
                                                  "only a reboot of the guest helps)"
        return "lost the stable bit" + st_text, "pause and resume it: clockbench heal --yes" + why


def survey(trace_lines, log, qmp_paths=(), libvirt_run=None, watch_file=None):
    """The running VMs, their clocks (trace_lines: the heal's own trace so
    far; where it holds no event of a VM, the watch's textfile watch_file
    when given and it has that VM), whether each booted while the host was
    off tsc (log: this boot's kmsg.summarize(), or None when the log was
    not read), and how each can be paused.  Returns ([VM], [warning])."""
    warnings = []
    domains = libvirt.domain_pids(libvirt_run)
    periods = off_tsc(log["switch_times"], log["switch_times_cut"]) if log is not None else None
    first = log["switch_times"][0][0] if log and log["switch_times_cut"] else None
    from .watch import vm_name  # the one namer of a QEMU process
    vms = {}
    for pid in kvm_pids():
        n = vm_name(pid, domains)
        if n is None:
            continue
        vm = VM(pid, n[0], n[1], start_s(pid))
        vm.booted_off = booted_off_tsc(vm.started, periods) if periods is not None else None
        if first is not None and (vm.started is None or vm.started < first):
            vm.booted_off = None  # it started before the switches kept: not known
        if n[1] == "libvirt":
            vm.via = "libvirt"
        vms[pid] = vm
    for path in qmp_paths:
        try:
            q = QMP(path)
        except RunError as e:
            warnings.append(str(e))
            continue
        vm = vms.get(q.pid)
        if vm is None:
            warnings.append("%s: its QEMU (pid %d) does not hold %s open: not a KVM VM of this host"
                            % (cut(path), q.pid, names.KVM_DEV))
            q.close()
        elif vm.via is None:
            vm.via, vm.qmp = "qmp", q
        else:
            q.close()
    for tg, c in clocks(trace_lines).items():
        if tg in vms:
            vms[tg].clock = c
    w = watched(watch_file) if watch_file else {}
    for pid, vm in vms.items():
        if vm.clock.state() == "unknown" and pid in w:
            vm.clock.stable, vm.clock.master = w[pid].get("stable_bit"), w[pid].get("master_clock")
            vm.source = "the watch's record"
    return [vms[p] for p in sorted(vms)], warnings


def pause_resume(vm):
    """Pauses and resumes vm through its way (libvirt or its QMP socket);
    returns the pause's length in ms.  RunError when either step fails; a
    resume is tried whatever the pause did, and the error says both."""
    t0 = time.monotonic()
    steps = (lambda: libvirt.virsh("suspend", vm.name), lambda: libvirt.virsh("resume", vm.name)) \
        if vm.via == "libvirt" else (lambda: vm.qmp.cmd("stop"), lambda: vm.qmp.cmd("cont"))
    errors = []
    # A Ctrl-C (INT), TERM or HUP waits until the VM runs again: never a VM
    # left paused by an interrupted heal.
    held = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        for step in steps:
            try:
                step()
            except RunError as e:
                errors.append(str(e))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    if errors:
        raise RunError("; ".join(errors))
    return (time.monotonic() - t0) * 1000.0


def confirm(read_trace, vm, mark, limit=CONFIRM_S):
    """Waits up to limit s for vm's master clock to come back on in the
    trace (read_trace() -> its lines now), after the marker mark, and for
    a pvclock update with the stable bit (up to 1 s more).  Returns (ms
    from the call to the master clock's event being seen, or None; vm's
    Clock after the marker, or None)."""
    t0, seen = time.monotonic(), None
    while True:
        c = clocks(read_trace(), mark).get(vm.pid)
        now = time.monotonic()
        if c is not None and c.master and seen is None:
            seen = now
        if c is not None and c.stable or seen is not None and now - seen > 1.0:
            return ((seen or now) - t0) * 1000.0, c
        if now - t0 > limit:
            return None, c
        time.sleep(0.05)


def read_trace(inst):
    """A running instance's events so far, as lines (its `trace` file, read
    anew: a read does not consume), each at most kvmtrace.MAX_LINE; the
    test hook CB_TRACE_FILE (a recorded trace) stands in for it."""
    return list(kvmtrace.Lines(os.environ.get("CB_TRACE_FILE") or os.path.join(inst, "trace")))


def marker(inst, text):
    """Writes text into the instance's trace, at the trace's own time (the
    test hook CB_TRACE_FILE: appended to that file as tracefs prints a
    marker)."""
    stand_in = os.environ.get("CB_TRACE_FILE")
    if stand_in:
        with open(stand_in, "a") as f:
            f.write("            heal-%d    (%7d) [000] .....   %.6f: tracing_mark_write: %s\n"
                    % (os.getpid(), os.getpid(), time.monotonic(), text))
    elif inst is not None:
        with open(os.path.join(inst, "trace_marker"), "w") as f:
            f.write(text + "\n")
