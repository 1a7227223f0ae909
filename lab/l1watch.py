"""l1watch.py: the emulated hypervisor (L1) watched from outside.

An L1 under TCG has been seen to freeze: its console, its process snapshots
and every log silent while its QEMU idles, no limit inside L1 able to fire
(lab/README.md).  L1's init writes a heartbeat to the lab folder every few
seconds (lab/l1-init); Heartbeat says, from outside, when it has stopped
for longer than its limit (or never began), and kill() ends that L1's QEMU
through a pidfd.  lab/run-lab uses both; lab/provoke finds L1's QEMU here.
cpu_state() reads L1's vCPU and local APIC through its QEMU's monitor before
the kill, and judge_cpu() says from them why it froze (lab/README.md: a
timer interrupt stranded in the emulated local APIC).
"""
import os
import re
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


def cpu_state(qmp_path, proc, limit=5.0):
    """L1's CPU 0 and its local APIC as its QEMU's monitor prints them
    (`info registers`, `info lapic`, over QMP at qmp_path; proc: the process
    that QEMU runs under), and the verdict judge_cpu() gives: (text,
    verdict).  A QEMU that does not answer within limit seconds (stopped,
    or no monitor) leaves text None and a verdict saying why."""
    from cbhost import boot  # run-lab puts host-scripts on the path
    from cbhost.msg import RunError
    try:
        q = boot.QMP(qmp_path, proc, limit=limit)
        try:
            regs = q.cmd("human-monitor-command", **{"command-line": "info registers"})
            lapic = q.cmd("human-monitor-command", **{"command-line": "info lapic"})
        finally:
            q.close()
    except (RunError, OSError, ValueError) as e:
        return None, "unread: %s" % e
    if not isinstance(regs, str) or not isinstance(lapic, str):
        return None, "unread: the monitor answered no text"
    regs, lapic = regs[:20000], lapic[:20000]
    return regs + lapic, judge_cpu(regs, lapic)


def _field(pattern, text):
    m = re.search(pattern, text, re.M)
    return m.group(1) if m else None


def judge_cpu(regs, lapic):
    """Why an L1 froze, from its CPU 0 (`info registers`) and local APIC
    (`info lapic`), in one line.  The freeze seen in the lab: the vCPU
    halted with interrupts on (HLT=1, IF set) while the APIC holds its
    timer's vector pending in IRR above the processor priority, the one-shot
    timer already expired: an interrupt the CPU could take and never
    got, so nothing wakes it (the tick L1's kernel waits for is that
    interrupt)."""
    # RFL and RIP in long mode; EFL and EIP where the CPU runs 32- or 16-bit code.
    hlt, rfl = _field(r"\bHLT=(\d)", regs), _field(r"\b[RE]FL=([0-9a-fA-F]+)", regs)
    rip = _field(r"\b[RE]IP=([0-9a-fA-F]+)", regs)
    if hlt is None or rfl is None:
        return "unknown: no HLT or RFL in the monitor's registers"
    if hlt != "1":
        return "running (RIP %s, not halted): L1 spins, or runs a guest that does" % rip
    if not int(rfl, 16) & 0x200:
        return "halted with interrupts off (RIP %s): only an NMI can wake it" % rip
    vec = _field(r"^LVTT\s.*\(vec (\d+)\)", lapic)
    mode = _field(r"^LVTT\s.*\b(one-shot|periodic|tsc-deadline)\b", lapic)
    irr = _field(r"^IRR\s+(.*)$", lapic)
    ppr = _field(r"\bPPR (0x[0-9a-fA-F]+)", lapic)
    if vec is None or irr is None or ppr is None:
        return "halted with interrupts on (RIP %s); the local APIC unread (no LVTT, IRR or PPR)" % rip
    pending = [int(x) for x in irr.split() if x.isdigit()]
    takeable = [v for v in pending if (v & 0xf0) > (int(ppr, 16) & 0xf0)]
    if int(vec) in takeable:
        return ("a stranded timer interrupt: CPU 0 halted with interrupts on (RIP %s) while its local APIC holds "
                "the %s timer's vector %s pending (IRR) above its priority (PPR %s); the CPU was never told"
                % (rip, mode or "local", vec, ppr))
    if takeable:
        return ("an interrupt stranded: CPU 0 halted with interrupts on (RIP %s), vector(s) %s pending in IRR above "
                "PPR %s" % (rip, " ".join(map(str, takeable)), ppr))
    return "halted with interrupts on (RIP %s) and nothing pending: waiting for a timer or device (%s timer)" % (
        rip, mode or "local")
