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
import contextlib
import json
import os
import re
import signal
import socket
import stat
import struct
import time

from cbcontract import kmsg, names
from cbcontract.util import cut
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


def kvm_device(dev):
    """What makes an open file the KVM device: ("chr", rdev) for a character
    device (the real /dev/kvm, whatever path a process opened it by), else
    ("file", (st_dev, st_ino)) for the stand-in of a test (CB_KVM_DEV); None
    when there is none."""
    try:
        st = os.stat(dev)
    except OSError:
        return None
    return ("chr", st.st_rdev) if stat.S_ISCHR(st.st_mode) else ("file", (st.st_dev, st.st_ino))


def is_kvm(path, want):
    """True when the open file behind path (a /proc/PID/fd link, followed
    by the kernel to the file itself, not by its name) is the KVM device
    want (kvm_device()).  A file bind-mounted over /dev/kvm in another
    mount namespace reads as "/dev/kvm" and is not it; a file that cannot
    be stat()ed is not it either."""
    return kvm_device(path) == want


def kvm_pids():
    """The processes holding the KVM device open (the VMs), sorted; at most
    MAX_VMS.  A descriptor counts by the file it is (is_kvm: device
    numbers), its name only picking which to look at.  Another user's
    processes are seen only by root."""
    proc = proc_dir()
    dev = os.environ.get("CB_KVM_DEV", names.KVM_DEV)
    want = kvm_device(dev)
    if want is None:
        return []
    real = os.path.realpath(dev)
    out = []
    for pid in sorted(int(p) for p in os.listdir(proc) if p.isdigit() and len(p) <= 10):
        fd_dir = os.path.join(proc, str(pid), "fd")
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                named = os.readlink(os.path.join(fd_dir, fd)) in (dev, real)
            except OSError:
                continue
            if named and is_kvm(os.path.join(fd_dir, fd), want):
                out.append(pid)
                break
        if len(out) >= MAX_VMS:
            break
    return out


def start_s(pid):
    """When process pid started, in seconds since boot (/proc/PID/stat's
    starttime), or None."""
    ticks = start_ticks(pid)
    return None if ticks is None else ticks / os.sysconf("SC_CLK_TCK")


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
    state, and whether its last pvclock update carried the stable bit."""

    def __init__(self):
        self.counts = kvmtrace.Counts()
        self.master = self.stable = None

    def add(self, ev, msg):
        sb, mc = self.counts.c["stable_bit"], self.counts.c["master_clock"]
        before = sb["with"], sb["without"], mc["on_updates"] + mc["off_updates"]
        self.counts.add(ev, msg)
        if (sb["with"], sb["without"]) != before[:2]:
            self.stable = sb["with"] != before[0]
        if mc["on_updates"] + mc["off_updates"] != before[2]:
            self.master = mc["last"]

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
    for tg, _, ev, msg in kvmtrace.events(lines):
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
        c.add(ev, msg)
    return out


# The watch's record, where its own trace saw nothing: a VM whose master
# clock is off may make no clock update for minutes, and the watch has
# followed every VM's events since it started.
_WATCHED = re.compile(r'node_clockbench_vm_(stable_bit|master_clock)\{[^}\n]{0,512}?\bpid="([0-9]{1,10})"[^}\n]{0,512}\} ([01])$')
MAX_TEXTFILE = 4 << 20


def trusted_owners():
    """The uids whose files heal believes: root and the watch's own account
    (watch.WATCH_USER), never the fallback account nobody, which any
    process of another daemon may run as."""
    import pwd
    from .watch import WATCH_USER
    out = {0}
    with contextlib.suppress(KeyError):
        out.add(pwd.getpwnam(WATCH_USER).pw_uid)
    return out


def open_trusted(path, limit, owners, follow=False):
    """The bytes (at most limit) of path, a regular file owned by one of
    owners and writable by no one else; (None, why not) otherwise."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        return None, e.strerror
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None, "not a regular file"
        if st.st_uid not in owners:
            import pwd
            try:
                who = pwd.getpwuid(st.st_uid).pw_name
            except KeyError:
                who = "uid %d" % st.st_uid
            return None, "owned by %s, which is neither root nor the watch's own account: not trusted" % cut(who, 32)
        if st.st_mode & 0o022:
            return None, "writable by others: not trusted"
        return os.read(fd, limit), None
    except OSError as e:
        return None, e.strerror
    finally:
        os.close(fd)


def watched(path, warnings=None):
    """{pid: {"stable_bit": bool, "master_clock": bool}} from the watch's
    textfile (clockbench-watch.prom), or {} when it cannot be read or is
    not the watch's own (open_trusted: owned by root or the watch's
    account; why not is added to warnings); at most MAX_TEXTFILE bytes,
    each line matched by a bounded pattern.  The file is the watch's (a
    symlink into its own folder, by design): what it says counts only for
    the VMs running now (survey checks the pid), and only when it was
    written after the host's last return to tsc."""
    raw, why = open_trusted(path, MAX_TEXTFILE, trusted_owners(), follow=True)
    if raw is None:
        if warnings is not None and why not in ("No such file or directory",):
            warnings.append("%s: %s" % (cut(path), why))
        return {}
    out = {}
    for line in raw.decode("utf-8", "replace").split("\n"):
        m = _WATCHED.match(line)
        if m and len(out) < MAX_VMS:
            out.setdefault(int(m.group(2)), {})[m.group(1)] = m.group(3) == "1"
    return out


# heal's own records (HEAL_DIR/vm-clock, root's): what it did to a VM's
# clock and what KVM then showed, one line each: "PID START_TICKS STAMP_S
# WHAT", STAMP_S this boot's monotonic seconds (the kernel log's time).
# One writer (record()), one reader (records()); kept for this boot only
# (/run is emptied at boot), at most MAX_LEDGER bytes.
LEDGER = "vm-clock"
MAX_LEDGER = 256 << 10
LEDGER_KINDS = ("healed", "probe-lost")
_LEDGER_LINE = re.compile(r"([0-9]{1,10}) ([0-9]{1,20}) ([0-9]{1,10}\.[0-9]{1,6}) (%s)" % "|".join(LEDGER_KINDS))


def state_dir():
    """heal's own folder: names.h's HEAL_DIR, or the test hook CB_HEAL_DIR."""
    return os.environ.get("CB_HEAL_DIR", names.HEAL_DIR)


def start_ticks(pid):
    """/proc/PID/stat's starttime in clock ticks (with the pid, a process's
    identity for this boot), or None."""
    raw = read_small(os.path.join(proc_dir(), str(pid), "stat"))
    if raw is None:
        return None
    rest = raw[raw.rfind(b")") + 2:].split()  # the name may hold spaces and ')'
    try:
        return int(rest[19])
    except (IndexError, ValueError):
        return None


def record(pid, ticks, what):
    """Appends one record of what heal did or saw to VM pid (started at
    ticks) into HEAL_DIR/vm-clock: a folder of root's that no one else
    can write, the file opened without following a link, owned by root;
    OSError or RunError when it cannot be."""
    if ticks is None:
        raise RunError("its start (/proc/%d/stat) was not read" % pid)
    d = state_dir()
    os.makedirs(d, mode=0o700, exist_ok=True)
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        st = os.fstat(dfd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise RunError("%s: not a folder of this user's alone: heal's record not written" % d)
        fd = os.open(LEDGER, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                     dir_fd=dfd)
        try:
            fst = os.fstat(fd)
            if not stat.S_ISREG(fst.st_mode) or fst.st_uid != os.geteuid() or fst.st_nlink != 1:
                raise RunError("%s/%s: not heal's own file: not written" % (d, LEDGER))
            if fst.st_size > MAX_LEDGER:
                os.ftruncate(fd, 0)  # a boot's worth at most: the oldest go first
            os.write(fd, ("%d %d %.6f %s\n" % (pid, ticks, time.monotonic(), what)).encode())
        finally:
            os.close(fd)
    finally:
        os.close(dfd)


def records():
    """{(pid, start_ticks): [(stamp_s, what)]} of heal's own records, or {}
    when there are none or the file is not root's alone (open_trusted)."""
    raw, _ = open_trusted(os.path.join(state_dir(), LEDGER), MAX_LEDGER, {os.geteuid(), 0})
    out = {}
    for line in (raw or b"").decode("ascii", "replace").split("\n"):
        m = _LEDGER_LINE.fullmatch(line)
        if m:
            out.setdefault((int(m.group(1)), int(m.group(2))), []).append((float(m.group(3)), m.group(4)))
    return out


# The QMP peer: a socket the operator names.

def peer_pid(sock):
    """The pid at the other end of a connected unix socket (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[0]


class QMP:
    """A QMP connection to a socket the operator named: one command at a
    time, each reply one line of at most MAX_QMP_LINE bytes read against a
    deadline (a peer that trickles bytes gains nothing), matched by its id,
    events skipped; every failure, a malformed reply among them, a
    RunError naming the socket."""

    def __init__(self, path, timeout=5.0):
        self.path, self.timeout, self.buf, self.n = path, timeout, b"", 0
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + timeout
        try:
            self.s.settimeout(timeout)
            self.s.connect(path)
            self.pid = peer_pid(self.s)
            try:
                greeting = self._line(deadline)
            except RunError as e:
                raise RunError("%s: not a QMP socket (%s)" % (cut(path), str(e).rsplit(": ", 1)[-1]))
            if "QMP" not in greeting:
                raise RunError("%s: not a QMP socket (its first message has no QMP greeting)" % cut(path))
            self.cmd("qmp_capabilities", deadline)
        except OSError as e:
            self.close()
            raise RunError("%s: %s" % (cut(path), e.strerror or e or "timed out"))
        except RunError:
            self.close()
            raise

    def _line(self, deadline):
        """The next line as a JSON object, read before deadline (monotonic s)."""
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RunError("%s: read: timed out" % cut(self.path))
            if len(self.buf) >= MAX_QMP_LINE:
                raise RunError("%s: a reply over %d bytes" % (cut(self.path), MAX_QMP_LINE))
            try:
                self.s.settimeout(left)
                got = self.s.recv(MAX_QMP_LINE - len(self.buf))
            except socket.timeout:
                raise RunError("%s: read: timed out" % cut(self.path))
            except OSError as e:
                raise RunError("%s: read: %s" % (cut(self.path), e.strerror or e))
            if not got:
                raise RunError("%s: QEMU closed the connection" % cut(self.path))
            self.buf += got
        raw, self.buf = self.buf.split(b"\n", 1)
        try:
            msg = json.loads(raw)
        except (ValueError, RecursionError):
            raise RunError("%s: a reply that is not JSON" % cut(self.path))
        if not isinstance(msg, dict):
            raise RunError("%s: a reply that is not a JSON object" % cut(self.path))
        return msg

    def cmd(self, name, deadline=None):
        """Sends command name, returns its reply's "return"; by deadline
        (monotonic s; default: the connection's timeout from now)."""
        deadline = deadline or time.monotonic() + self.timeout
        self.n += 1
        ident = "clockbench-%d" % self.n
        try:
            self.s.settimeout(max(0.001, deadline - time.monotonic()))
            self.s.sendall(json.dumps({"execute": name, "id": ident}).encode() + b"\n")
        except OSError as e:
            raise RunError("%s: %s: %s" % (cut(self.path), name, e.strerror or e or "timed out"))
        for _ in range(1000):  # events (and a late reply to an earlier command) before the reply: bounded too
            msg = self._line(deadline)
            if msg.get("id", ident) != ident:
                continue
            if "return" in msg:
                return msg["return"]
            if "error" in msg:
                err = msg["error"] if isinstance(msg["error"], dict) else {}
                raise RunError("%s: %s: %s" % (cut(self.path), name, cut(str(err.get("desc", "error")))))
        raise RunError("%s: %s: no reply among 1000 messages" % (cut(self.path), name))

    def close(self):
        with contextlib.suppress(OSError):
            self.s.close()


# The survey and the heal.

class VM:
    """One running VM: pid, name (and where the name came from), how it can
    be paused (libvirt for a domain of libvirt's, qmp or None), its start,
    its clock (KVM's events traced now), and judge()'s state with the
    evidence for it."""

    def __init__(self, pid, name, name_from, started, ticks=None):
        self.pid, self.name, self.name_from, self.started, self.ticks = pid, name, name_from, started, ticks
        self.via, self.qmp = ("libvirt" if name_from == "libvirt" else None), None
        self.clock = Clock()
        self.booted_off = None
        self.state, self.evidence = "unknown", "not judged"

    def verdict(self):
        """(what, advice): this VM's state, with its evidence, and what to do."""
        ev = " (%s)" % self.evidence
        if self.state == "booted_off":
            return ("booted while the host was off tsc" + ev,
                    "its kernel chose at boot to read the clock by syscall, and a pause does not change that: "
                    "reboot the guest (from inside it) to read in user space again")
        if self.state == "ok":
            return "has the stable bit" + ev, "nothing to do"
        if self.state == "unknown":
            return "not known" + ev, ("clockbench heal --yes %d pauses and resumes it (a few ms), which gives the bit "
                                      "back if it lost it" % self.pid)
        if self.via is None:
            return ("lost the stable bit" + ev, "pause and resume it (clockbench heal --qmp ITS-QMP-SOCKET %s: "
                    "it is not libvirt's), else migrate or restart it" % self.pid)
        why = "" if self.booted_off is False else " (when it booted is not known: if the host was off tsc then, " \
                                                  "only a reboot of the guest helps)"
        return "lost the stable bit" + ev, "pause and resume it: clockbench heal --yes" + why


def judge(vm, periods, first_kept=None, log_why=None, ledger=None, watch=None, reason=None):
    """(state, evidence) of vm ("ok", "lost", "booted_off" or "unknown";
    one phrase naming the records that decide it) from, in this order: the
    host's switch records for its start (booted_off); KVM's events traced now (vm.clock); heal's
    own records since the host's last return to tsc (ledger: records()'s
    entries of this VM); the watch's record written since (watch: {"stable_bit",
    "master_clock"}); else KVM's rule on the records: a VM running when
    the host left tsc keeps its master clock off until its clock is set
    again.  periods: off_tsc()'s, None when the kernel log was not read
    (log_why); first_kept: the stamp of the oldest switch the log still
    holds when earlier ones were lost; reason: libvirt's reason for the
    domain's running state ("booted", "unpaused", ...), None when not
    libvirt's or not read."""
    if vm.booted_off:
        return "booted_off", "started at %.1f s, while the host was off tsc: the kernel's switch records" % vm.started
    closed = [p for p in periods or () if p[1] is not None]
    back = closed[-1][1] if closed else None
    st = vm.clock.state()
    if st != "unknown":
        return st, "KVM's events, traced now: its last %s" % (
            "pvclock update %s the stable bit" % ("with" if vm.clock.stable else "without")
            if vm.clock.stable is not None else "master-clock update: %s" % ("on" if vm.clock.master else "off"))
    mine = [r for r in (ledger or ()) if back is None or r[0] > back]
    if mine:
        at, what = max(mine)
        if what == "healed":
            return "ok", "clockbench heal paused and resumed it at %.1f s%s and KVM showed its master clock on: " \
                "heal's records" % (at, ", after the host's return to tsc at %.1f s," % back if back else "")
        return "lost", "clockbench heal's probe at %.1f s: KVM updated its clock without the stable bit" % at
    on = (watch or {}).get("stable_bit", (watch or {}).get("master_clock"))
    if on is not None:
        return ("ok" if on else "lost"), "the watch's record, written since the host's last return to tsc"
    if periods is None:
        return "unknown", "the kernel's switch records were not read (%s)" % cut(log_why or "no kernel log")
    if vm.started is None:
        return "unknown", "its start (/proc/%d/stat) was not read" % vm.pid
    if first_kept is not None and vm.started < first_kept:
        return "unknown", ("it started at %.1f s, before the oldest switch the kernel log still holds (%.1f s): "
                           "the records of the switches before were overwritten" % (vm.started, first_kept))
    crossed = [p for p in periods if p[0] > vm.started]
    if not crossed:
        return "ok", ("started at %.1f s with the host on tsc, which has not left it since: the kernel's switch "
                      "records" % vm.started)
    a, b = crossed[-1]
    if b is None:
        return "lost", "running when the host left tsc at %.1f s; the host is still off it" % a
    if reason and reason != "booted":
        return "unknown", ("running when the host left tsc at %.1f s (back at %.1f s); libvirt says it was resumed "
                           "since it started (running: %s) but not when" % (a, b, cut(reason, 32)))
    return "lost", ("running when the host left tsc at %.1f s (back at %.1f s), and neither heal's records nor "
                    "KVM's events show its clock set since: the kernel's switch records, its start" % (a, b))


def domain_reason(name):
    """libvirt's reason for a domain's running state (virsh domstate
    --reason: "running (booted)" -> "booted"), or None."""
    try:
        out = libvirt.virsh("domstate", "--reason", name, timeout=10).strip()
    except RunError:
        return None
    m = re.fullmatch(r"running \(([a-z -]{1,32})\)", out[:64])
    return m.group(1) if m else None


def survey(trace_lines, log, qmp_paths=(), watch_file=None, log_why=None):
    """The running VMs and each one's state (judge()) from every record
    there is: trace_lines (KVM's events traced now), log (this boot's
    kmsg.summarize(), None when not read: log_why), heal's own records,
    the watch's textfile watch_file when given, libvirt's domain state;
    and how each can be paused.  Returns ([VM], [warning])."""
    warnings = []
    domains = libvirt.domain_pids()
    periods = off_tsc(log["switch_times"], log["switch_times_cut"]) if log is not None else None
    first = log["switch_times"][0][0] if log and log["switch_times_cut"] and log["switch_times"] else None
    from .watch import vm_name  # the one namer of a QEMU process
    vms = {}
    for pid in kvm_pids():
        n = vm_name(pid, domains)
        if n is None:
            continue
        vm = VM(pid, n[0], n[1], start_s(pid), start_ticks(pid))
        vm.booted_off = booted_off_tsc(vm.started, periods) if periods is not None else None
        if first is not None and (vm.started is None or vm.started < first):
            vm.booted_off = None  # it started before the switches kept: not known
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
    back = max((p[1] for p in periods or () if p[1] is not None), default=None)
    w = {}
    if watch_file:
        w = watched(watch_file, warnings)
        try:
            fresh = back is None or os.stat(watch_file).st_mtime - (time.time() - time.monotonic()) > back
        except OSError:
            fresh = False
        w = w if fresh else {}
    ledger = records()
    for pid, vm in vms.items():
        reason = None
        if vm.via == "libvirt" and vm.clock.state() == "unknown" and periods and vm.started is not None \
                and any(p[0] > vm.started for p in periods):
            reason = domain_reason(vm.name)
        vm.state, vm.evidence = judge(vm, periods, first, log_why, ledger.get((pid, vm.ticks)), w.get(pid), reason)
    return [vms[p] for p in sorted(vms)], warnings


PAUSE_S = 5.0  # stop and cont together, over QMP; cont always gets at least CONT_S of its own
CONT_S = 2.0


def pause_resume(vm):
    """Pauses and resumes vm through its way (libvirt or its QMP socket);
    returns the pause's length in ms.  RunError when either step fails; a
    resume is tried whatever the pause did (a stop that timed out may still
    have paused it), and the error says both.  Over QMP both share one
    deadline of PAUSE_S."""
    t0 = time.monotonic()
    deadline = t0 + PAUSE_S
    steps = (lambda: libvirt.virsh("suspend", vm.name, timeout=PAUSE_S),
             lambda: libvirt.virsh("resume", vm.name, timeout=PAUSE_S)) if vm.via == "libvirt" else \
        (lambda: vm.qmp.cmd("stop", deadline), lambda: vm.qmp.cmd("cont", max(deadline, time.monotonic() + CONT_S)))
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


PROBE_S = 2.0  # how long a probed VM's threads stay on their new CPUs


def threads(pid):
    """{tid: (the CPU it last ran on, its allowed CPUs)} of process pid;
    threads that end meanwhile are left out.  At most 4096."""
    out = {}
    try:
        tids = sorted(int(t) for t in os.listdir(os.path.join(proc_dir(), str(pid), "task")) if t.isdigit())[:4096]
    except OSError:
        return out
    for tid in tids:
        raw = read_small(os.path.join(proc_dir(), str(pid), "task", str(tid), "stat"))
        with contextlib.suppress(TypeError, IndexError, ValueError, OSError):
            cpu = int(raw[raw.rfind(b")") + 2:].split()[36])  # field 39, "processor"
            out[tid] = (cpu, os.sched_getaffinity(tid))
    return out


def probe(vm, inst, seconds=PROBE_S):
    """Makes a quiet VM's clock state visible without pausing it: each of
    its threads is moved once to another CPU of those it may already run
    on (its own affinity: a VM pinned to one CPU a thread is not moved),
    for `seconds`, then given its own set back.  With the master clock off,
    KVM asks for a clock update when a vCPU is loaded on another CPU
    (kvm_arch_vcpu_load() in arch/x86/kvm/x86.c), so a pvclock update after
    the move shows the bit; with it on, KVM makes none.  Returns ("lost" or
    "ok", evidence) when an update came, else (None, why nothing is
    decided).  INT, TERM and HUP wait until every thread has its set back."""
    if inst is None:
        return None, "no trace to read the probe from"
    moved = {}
    mark = "clockbench-probe-%d" % vm.pid
    marker(inst, mark)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, INTERRUPTS)
    try:
        for tid, (cpu, allowed) in threads(vm.pid).items():
            other = sorted(c for c in allowed if c != cpu)
            if not other:
                continue
            with contextlib.suppress(OSError):
                os.sched_setaffinity(tid, {other[0]})
                moved[tid] = allowed
        end = time.monotonic() + (seconds if moved else 0)
        c = None
        while time.monotonic() < end:
            c = clocks(read_trace(inst), mark).get(vm.pid)
            if c is not None and c.state() != "unknown":
                break
            time.sleep(0.05)
    finally:
        for tid, allowed in moved.items():
            with contextlib.suppress(OSError):  # the thread ended
                os.sched_setaffinity(tid, allowed)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    if not moved:
        return None, "no thread of it could move (each may run on one CPU only)"
    if c is None or c.state() == "unknown":
        return None, ("moved its %d threads to other CPUs of their own for %g s: no clock update came (its master "
                      "clock is on, or no vCPU ran meanwhile)" % (len(moved), seconds))
    return c.state(), ("clockbench heal's probe: its threads moved to other CPUs of their own, KVM updated its clock "
                       "%s the stable bit" % ("with" if c.state() == "ok" else "without"))


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
