"""l1watch.py: the emulated hypervisor (L1) watched from outside.

An L1 under TCG has been seen to freeze: its console, its process snapshots
and every log silent while its QEMU idles, no limit inside L1 able to fire
(lab/README.md).  L1's init writes a heartbeat to the lab folder every few
seconds (lab/l1-init); Heartbeat says, from outside, when it has stopped
for longer than its limit (or never began), and kill() ends that L1's QEMU
through a pidfd.  lab/run-lab uses both; lab/provoke finds L1's QEMU here.
"""
import os
import signal
import time


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def open_process(pid, comm=None):
    """A pidfd of process pid (os.pidfd_open), or None when it has gone or
    (comm given) its name, read after the pidfd was opened, does not start
    with comm: a pid reused between finding and opening is caught there,
    and every signal after goes to that process or fails (ESRCH), never
    to another that got its pid."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return None
    try:
        with open("/proc/%d/comm" % pid) as f:
            name = f.read().strip()
    except OSError:
        name = None
    if comm is not None and not (name or "").startswith(comm):
        os.close(fd)
        return None
    return fd


def qemu_of(pid):
    """The qemu-system process under pid (run-lab > timeout > qemu), or None."""
    todo = children(pid)
    while todo:
        p = todo.pop()
        try:
            with open("/proc/%d/comm" % p) as f:
                comm = f.read().strip()
        except OSError:
            continue
        if comm.startswith("qemu-system"):
            return p
        todo += children(p)
    return None


def kill(pid):
    """SIGKILL (then SIGCONT, for a stopped one) to the QEMU under pid,
    through its pidfd; True when one was signalled."""
    q = qemu_of(pid)
    fd = open_process(q, "qemu-system") if q is not None else None
    if fd is None:
        return False
    try:
        for sig in (signal.SIGKILL, signal.SIGCONT):
            try:
                signal.pidfd_send_signal(fd, sig)
            except ProcessLookupError:
                break
    finally:
        os.close(fd)
    return True


def cpu_seconds(pid):
    """CPU time (user and system) process pid has used, in seconds, or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            w = f.read(4096).rsplit(")", 1)[1].split()
        return (int(w[11]) + int(w[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def threads(pid):
    """Process pid's threads as 'NAME:STATE' words (CPU 0/TCG:S ...), or ''."""
    out = []
    try:
        tids = sorted(os.listdir("/proc/%d/task" % pid), key=int)
    except OSError:
        return ""
    for t in tids[:64]:
        try:
            with open("/proc/%d/task/%s/stat" % (pid, t)) as f:
                st = f.read(4096)
            name, state = st[st.index("(") + 1:st.rindex(")")], st.rsplit(")", 1)[1].split()[0]
        except (OSError, ValueError, IndexError):
            continue
        out.append("%s:%s" % (name.replace(" ", "_"), state))
    return " ".join(out)


class Heartbeat:
    """L1's heartbeat file, looked at from outside.  The file holds
    `COUNT UPTIME` (L1's own count, and L1's uptime in seconds), replaced
    whole every few seconds.  Its change is timed by this side's monotonic
    clock, never by L1's: a frozen L1 has no clock to trust.

    look() returns None while L1 is alive, or why it counts as frozen:
    no heartbeat within boot_limit seconds of the start, or none new for
    limit seconds."""

    def __init__(self, path, limit, boot_limit, clock=time.monotonic):
        self.path, self.limit, self.boot_limit, self.clock = path, limit, boot_limit, clock
        self.t0 = clock()
        self.last = None  # the file's text when it last changed
        self.changed = None  # this side's time of that change
        self.wall = None  # this side's wall clock then (UTC epoch), for the record
        self.beats = 0  # changes seen
        self.longest = 0.0  # the longest wait between two changes seen, in seconds

    def read(self):
        try:
            with open(self.path, "rb") as f:
                return f.read(200).decode("ascii", "replace").strip()
        except OSError:
            return None

    def look(self):
        now, text = self.clock(), self.read()
        if text and text != self.last:
            if self.changed is not None:
                self.longest = max(self.longest, now - self.changed)
            self.last, self.changed, self.wall = text, now, time.time()
            self.beats += 1
            return None
        if self.changed is None:
            if now - self.t0 > self.boot_limit:
                return "no heartbeat within %d s of its start" % self.boot_limit
            return None
        if now - self.changed > self.limit:
            return "no heartbeat for %d s (limit %d s)" % (now - self.changed, self.limit)
        return None

    def silent(self):
        """Seconds since the last heartbeat (or since the start, with none)."""
        return self.clock() - (self.changed if self.changed is not None else self.t0)

    def uptime(self):
        """L1's uptime in its last heartbeat (its own clock), or None."""
        w = (self.last or "").split()
        try:
            return float(w[1]) if len(w) == 2 else None
        except ValueError:
            return None
