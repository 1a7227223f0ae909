"""watch.py: clockbench-watch's state and loop: the kernel log, the clocksource, KVM's clock events, one textfile.

Three sources feed one State: the kernel log (/dev/kmsg from the boot's
first record, each line classified by cbcontract.kmsg), the clocksource
and TSC flags (re-read every interval, and at once after a switch line),
and KVM's clock events (a tracefs instance of the watch's own, made and
cleaned by kvmtrace, read from its trace_pipe) turned into per-VM facts.
The textfile (cbcontract.textfile) is written when a value changes, and at
least every REFRESH seconds so that its age tells the watch is alive.

Every input is data: a kernel-log record, a trace line and a process's
command line are read bounded (MAX_RECORD, kvmtrace.MAX_LINE, MAX_CMDLINE)
and only matched, never run; the names they carry reach the textfile
through textfile.esc only, cut to NAME_MAX.

Test hooks (environment): CB_KMSG (a file or FIFO standing in for
/dev/kmsg: kmsg records or plain log lines), CB_TRACE_PIPE (a file or FIFO
of trace lines instead of an instance), CB_PROC (a folder standing in for
/proc, for VM names and liveness), CB_CS_DIR (the clocksource folder),
CB_CPUINFO (for /proc/cpuinfo), CB_LIBVIRT_RUN (libvirt's pid files,
/run/libvirt/qemu).

As root, the watch opens what needs privilege (the kernel log, its tracing
instance, health's readout, its textfile's place: a symlink to a
subfolder of its own, textfile.delegate) and then becomes its own account
(account(), drop_privileges()): no uid 0 left, no capability, no new
privileges.
"""
import errno
import os
import select
import signal
import stat
import time

from cbcontract import health, kmsg, names, textfile
from cbcontract.util import InputError
from cbhost import kvmtrace, libvirt

DEFAULT_DIR = "/var/lib/prometheus/node-exporter"


def lock_dir():
    """The folder of the watch's single-instance lock (textfile.hold): as
    root names.h's WATCH_RUN_DIR (the unit's RuntimeDirectory=, 0700,
    root's); as a user $XDG_RUNTIME_DIR/clockbench-watch, else one of the
    user's in the temporary folder.  CB_WATCH_RUN_DIR (a test hook) names
    another."""
    d = os.environ.get("CB_WATCH_RUN_DIR")
    if d:
        return d
    if os.geteuid() == 0:
        return names.WATCH_RUN_DIR
    base = os.path.basename(names.WATCH_RUN_DIR)
    run = os.environ.get("XDG_RUNTIME_DIR")
    if run and run.startswith("/"):
        return os.path.join(run, base)
    import tempfile
    return os.path.join(tempfile.gettempdir(), "%s-%d" % (base, os.geteuid()))
FILE = "clockbench-watch.prom"
REFRESH = 60.0  # seconds: the longest the textfile goes unwritten
MAX_RECORD = 8192  # a kmsg record is at most 1 KiB of text and its escapes
MAX_CMDLINE = 64 << 10
NAME_MAX = 64
MAX_VMS = 1024
TRACE_KB = 1024  # the instance's ring per CPU: read all the time, a burst's worth
TSC_FLAGS = ("tsc", "rdtscp", "constant_tsc", "nonstop_tsc", "tsc_known_freq", "tsc_reliable", "tsc_adjust",
             "tsc_deadline_timer")
# The kernel-log kinds counted: what changes the clock, and the watchdog's near misses.
COUNTED = tuple(k for k in kmsg.KINDS if k in ("switched", "unstable", "warp", "sync-check", "tsc-adjust")
                or k.startswith(("verdict/", "near-miss/", "sched-clock/")))

HELP = {
    "node_clockbench_clocksource_info": "The host's current clocksource, as clockbench-watch read it (sysfs).",
    "node_clockbench_clocksource_available": "1 for each clocksource the kernel offers (available_clocksource).",
    "node_clockbench_tsc_flag": "1 if the first CPU's flags in /proc/cpuinfo carry this TSC flag, else 0.",
    "node_clockbench_tsc_unstable": "1 if the kernel log of this boot says the TSC was marked unstable (cause: why), else 0.",
    "node_clockbench_kernel_log_events_total": "Kernel-log lines of this boot by kind (cbcontract.kmsg): switches, TSC verdicts, watchdog near misses.",
    "node_clockbench_kernel_log_last_event_timestamp_seconds": "When the last kernel-log line of this kind was logged, Unix time (boot time plus its stamp).",
    "node_clockbench_kernel_log_from_boot": "1 if the kernel log was read from the boot's first record (nothing overwritten before the watch read it).",
    "node_clockbench_watch_vm_events_dropped_total": "KVM clock events of VMs past the watch's limit of followed VMs (node_clockbench_watch_vm_limit), not counted.",
    "node_clockbench_watch_vms_followed": "VMs whose KVM clock events the watch follows now (at most node_clockbench_watch_vm_limit).",
    "node_clockbench_watch_vm_limit": "The most VMs the watch follows at once (MAX_VMS). A VM first seen while that many are followed has no node_clockbench_vm_* series (master clock, stable bit, pvclock updates, TSC-offset writes), so no alert on them, until a followed VM's process ends and a later event of it is seen; its events until then count only in node_clockbench_watch_vm_events_dropped_total.",
    "node_clockbench_vm_master_clock": "1 if KVM's master clock was on at the VM's last master-clock update (kvm_update_master_clock), else 0 (name_from: libvirt, from libvirt's own pid file; cmdline, a name the process's command line claims; pid).",
    "node_clockbench_vm_stable_bit": "1 if the VM's last pvclock update carried PVCLOCK_TSC_STABLE_BIT, else 0.",
    "node_clockbench_vm_pvclock_updates_total": "kvm_pvclock_update events of the VM since the watch started, by whether they carried the stable bit.",
    "node_clockbench_vm_tsc_offset_writes_total": "kvm_write_tsc_offset events of the VM since the watch started.",
    "node_clockbench_watch_kernel_log_available": "1 if the watch follows the kernel log, else 0 (reason: why, e.g. kernel.dmesg_restrict for a user).",
    "node_clockbench_watchdog_watched": "1 if the kernel's clocksource watchdog watches the TSC, 0 if not (clockbench health at the watch's start; absent when unknown).",
    "node_clockbench_watchdog_risk_info": "clockbench health's verdict on a false watchdog alarm (risk.verdict) at the watch's start.",
    "node_clockbench_watchdog_readout_limit_seconds": "The kernel's limit on one watchdog readout in this kernel era (limits.readout_limit_ns).",
    "node_clockbench_watchdog_margin": "The readout limit over the measured readout's 99.99th percentile (risk.margin): below 1, near misses are expected.",
    "node_clockbench_watchdog_false_alarms_per_host_year": "False watchdog verdicts a host-year expected from the measured readouts (model: measured or independent ticks).",
    "node_clockbench_watchdog_check_available": "1 if clockbench health's watchdog section was read at the watch's start, else 0 (reason: why).",
    "node_clockbench_watch_trace_available": "1 if the watch follows KVM's clock events (its tracefs instance), else 0 (reason: why).",
    "node_clockbench_watch_start_timestamp_seconds": "When this clockbench-watch started, Unix time.",
    "node_clockbench_machine_info": "1, labelled with whether this machine is a guest (true, false, unknown) and of which hypervisor (clockbench health at the watch's start, else the CPUID hypervisor flag).",
    "node_clockbench_clock_health_info": "1, labelled with the clock's state by clockbench's one rule (cbcontract.health): healthy, degraded or unknown, on the current clocksource and the VMs it runs now (node_clockbench_vms_running); the read path is clockbench health's at the watch's start.",
    "node_clockbench_clock_healthy": "1 if the clock is healthy by clockbench's one rule (a host on tsc; a guest on a paravirtual clock read in user space, or on an invariant tsc; a machine that runs KVM VMs, guest or not, only while on tsc), 0 if degraded; absent when not known.",
    "node_clockbench_vms_running": "KVM VMs this machine runs, as the watch follows them: QEMU processes with KVM clock events since the watch started that still run (a VM started before the watch shows at its next clock event; absent when KVM's events are not followed).",
}
TYPES = {n: "counter" for n in HELP if n.endswith("_total")}


def cs_dir():
    return os.environ.get("CB_CS_DIR", names.CS_SYSFS)


def read_small(path, limit=64 << 10):
    """The text of a small file (sysfs, /proc), at most limit bytes; None
    when it cannot be read.  Opened non-blocking: a FIFO put there never
    blocks the watch."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, limit).decode("utf-8", "replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def vm_name(pid, domains=None):
    """(name, source) of QEMU process pid: the name libvirt's own pid file
    gives it (domains: pid -> name, source "libvirt"), else the name its
    command line claims (-name guest=NAME or -name NAME[,...]: any process
    can say so, source "cmdline"), else the pid; None when the process is
    gone."""
    proc = os.environ.get("CB_PROC", "/proc")
    raw = read_small(os.path.join(proc, str(pid), "cmdline"), MAX_CMDLINE)
    if raw is None:
        return None
    if domains and pid in domains:
        return domains[pid][:NAME_MAX], "libvirt"
    args = raw.split("\0")
    for i, a in enumerate(args[:-1]):
        if a in ("-name", "--name"):
            parts = args[i + 1].split(",")
            for part in parts:
                if part.startswith("guest="):
                    return part[6:][:NAME_MAX], "cmdline"
            if parts[0] and "=" not in parts[0]:
                return parts[0][:NAME_MAX], "cmdline"
    return str(pid), "pid"


class VM:
    """One QEMU process's KVM clock facts, from its trace events."""

    def __init__(self, pid):
        self.pid = pid
        self.counts = kvmtrace.Counts()
        self.stable = None
        self.name = None

    def add(self, ev, msg):
        sb = self.counts.c["stable_bit"]
        before = sb["with"], sb["without"]
        self.counts.add(ev, msg)
        if (sb["with"], sb["without"]) != before:
            self.stable = sb["with"] != before[0]


class State:
    """What the textfile says, kept between passes."""

    def __init__(self, boot_epoch):
        self.boot = boot_epoch
        self.cs, self.available, self.flags = None, [], {}
        self.events = dict.fromkeys(COUNTED, 0)
        self.last = {}
        self.unstable = None  # the cause, once the TSC was marked unstable
        self.from_boot = None
        self.vms = {}
        self.vm_events_dropped = 0  # events of VMs past MAX_VMS
        self.trace = (None, "not started")
        self.kmsg_error = None
        self.watchdog = None, "not read"
        self.machine = {}  # health's machine and read path at the start ({} when not read)
        self.hypervisor_flag = None  # the CPUID hypervisor flag (cpuinfo), None until read
        self.started = time.time()

    def read_clock(self):
        """Re-reads the clocksource and the TSC flags."""
        cur = read_small(os.path.join(cs_dir(), "current_clocksource"))
        self.cs = cur.strip() if cur and cur.strip() else None
        av = read_small(os.path.join(cs_dir(), "available_clocksource"))
        self.available = av.split()[:32] if av else []
        info = read_small(os.environ.get("CB_CPUINFO", "/proc/cpuinfo"), 1 << 20) or ""
        flags = next((ln.split(":", 1)[1].split() for ln in info.splitlines() if ln.startswith("flags")), None)
        self.flags = {} if flags is None else {f: f in flags for f in TSC_FLAGS}
        self.hypervisor_flag = None if flags is None else "hypervisor" in flags

    def running(self):
        """The last stable bit (True, False, None) of each VM followed now,
        None when KVM's events are not followed (then whether this machine
        runs VMs is not known)."""
        return [vm.stable for vm in self.vms.values()] if self.trace[0] else None

    def health(self):
        """(guest, hypervisor, state) by the one rule: health's machine
        and read path where it ran, else the CPUID flag (path unknown), and
        the VMs this machine runs now (a nested hypervisor is judged by its
        VMs' clock too)."""
        m = self.machine
        guest = m.get("guest") if "guest" in m else self.hypervisor_flag
        state, _ = health.judge(guest, self.cs, m.get("path"), self.flags, self.running())
        return guest, m.get("hypervisor"), state

    def log_line(self, line, framed=False):
        """Counts one kernel-log line or /dev/kmsg record (its header read
        by kmsg, which refuses another facility's records; with framed, a
        line without a header too); returns its kind when it is counted."""
        c = kmsg.classify(line, framed)
        if c is None or c[0] not in self.events:
            return None
        kind, detail = c
        stamp = kmsg.message(line[:kmsg.MAX_LINE]).stamp
        self.events[kind] += 1
        self.last[kind] = self.boot + stamp if stamp is not None and self.boot else time.time()
        if kmsg.gives_up_tsc(kind, detail) and self.unstable is None:
            self.unstable = detail.get("cause") or kind
        return kind

    def trace_line(self, line):
        """Adds one trace line's KVM event to its VM."""
        f = kvmtrace.fields(line)
        if f is None or f[0] is None or f[2] not in kvmtrace.EVENTS:
            return
        pid = kvmtrace.number(f[0])
        if pid is None:
            return
        vm = self.vms.get(pid)
        if vm is None:
            if len(self.vms) >= MAX_VMS:
                self.vm_events_dropped += 1
                return
            vm = self.vms[pid] = VM(pid)
        vm.add(f[2], f[3])

    def prune(self):
        """Names each VM, dropping those whose process is gone."""
        domains = libvirt.domain_pids() if self.vms else {}
        for pid in list(self.vms):
            n = vm_name(pid, domains)
            if n is None:
                del self.vms[pid]
            else:
                self.vms[pid].name = n

    def render(self):
        f = textfile.Families(HELP, TYPES)
        if self.cs:
            f.add("node_clockbench_clocksource_info", [("clocksource", self.cs)], 1)
        for cs in self.available:
            f.add("node_clockbench_clocksource_available", [("clocksource", cs)], 1)
        for k, v in self.flags.items():
            f.add("node_clockbench_tsc_flag", [("flag", k)], v)
        f.add("node_clockbench_tsc_unstable", [("cause", self.unstable)], self.unstable is not None)
        guest, hv, state = self.health()
        f.add("node_clockbench_machine_info", [("guest", {True: "true", False: "false"}.get(guest, "unknown")),
                                               ("hypervisor", (hv or "")[:NAME_MAX] or None)], 1)
        vms = self.running()
        f.add("node_clockbench_vms_running", [], None if vms is None else len(vms))
        f.add("node_clockbench_clock_health_info", [("state", state)], 1)
        if state != "unknown":
            f.add("node_clockbench_clock_healthy", [], state == "healthy")
        for k, n in self.events.items():
            f.add("node_clockbench_kernel_log_events_total", [("kind", k)], n)
        for k, ts in self.last.items():
            f.add("node_clockbench_kernel_log_last_event_timestamp_seconds", [("kind", k)], round(ts, 3))
        f.add("node_clockbench_kernel_log_from_boot", [], self.from_boot)
        f.add("node_clockbench_watch_kernel_log_available", [("reason", self.kmsg_error)], self.kmsg_error is None)
        for pid in sorted(self.vms):
            vm = self.vms[pid]
            name, source = vm.name or (str(pid), "pid")
            lab = [("vm", name), ("pid", str(pid)), ("name_from", source)]
            c = vm.counts.c
            f.add("node_clockbench_vm_master_clock", lab, c["master_clock"]["last"])
            f.add("node_clockbench_vm_stable_bit", lab, vm.stable)
            if c["pvclock_updates"]:
                for key, bit in (("with", "1"), ("without", "0")):
                    f.add("node_clockbench_vm_pvclock_updates_total", lab + [("stable_bit", bit)], c["stable_bit"][key])
            f.add("node_clockbench_vm_tsc_offset_writes_total", lab, c["tsc_offset_writes"])
        f.add("node_clockbench_watch_vm_events_dropped_total", [], self.vm_events_dropped)
        f.add("node_clockbench_watch_vms_followed", [], len(self.vms))
        f.add("node_clockbench_watch_vm_limit", [], MAX_VMS)
        wd, why = self.watchdog
        f.add("node_clockbench_watchdog_check_available", [("reason", why if wd is None else None)], wd is not None)
        for name, labels, v in watchdog_samples(wd or {}):
            f.add(name, labels, v)
        ok, why = self.trace
        f.add("node_clockbench_watch_trace_available", [("reason", None if ok else why)], bool(ok))
        f.add("node_clockbench_watch_start_timestamp_seconds", [], round(self.started, 3))
        over = []
        if self.vm_events_dropped:
            over.append("VMs past the watch's limit of %d are not followed: no node_clockbench_vm_* series for them; "
                        "%d of their KVM clock events dropped" % (MAX_VMS, self.vm_events_dropped))
        return f.text(comments=over)


MAX_JSON = 4 << 20


def _num(v):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf") else None


def watchdog_samples(wd):
    """The node_clockbench_watchdog_* samples of health's "watchdog"
    object (a dict from another program: every field checked)."""
    out = []
    w = wd.get("watched")
    if w in ("yes", "no"):
        out.append(("node_clockbench_watchdog_watched", [], w == "yes"))
    risk = wd.get("risk") if isinstance(wd.get("risk"), dict) else {}
    lim = wd.get("limits") if isinstance(wd.get("limits"), dict) else {}
    if isinstance(risk.get("verdict"), str):
        out.append(("node_clockbench_watchdog_risk_info", [("verdict", risk["verdict"][:NAME_MAX])], 1))
    ns = _num(lim.get("readout_limit_ns"))
    if ns is not None:
        out.append(("node_clockbench_watchdog_readout_limit_seconds", [], ns / 1e9))
    if _num(risk.get("margin")) is not None:
        out.append(("node_clockbench_watchdog_margin", [], risk["margin"]))
    fa = risk.get("false_alarms_per_host_year") if isinstance(risk.get("false_alarms_per_host_year"), dict) else {}
    for model in ("measured", "independent"):
        if _num(fa.get(model)) is not None:
            out.append(("node_clockbench_watchdog_false_alarms_per_host_year", [("model", model)], fa[model]))
    return out


def read_health(argv, timeout=180):
    """((watchdog object, None), machine_of(its JSON)) from health's
    JSON (argv run, or the file CB_HEALTH_JSON names), else ((None,
    why), {}).  At most MAX_JSON bytes are read."""
    import json
    import subprocess
    hook = os.environ.get("CB_HEALTH_JSON")
    try:
        if hook:
            with open(hook, "rb") as f:
                raw = f.read(MAX_JSON + 1)
        else:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               timeout=timeout)
            if p.returncode not in (0, 1):
                return (None, "clockbench health: exit %d" % p.returncode), {}
            raw = p.stdout
    except subprocess.TimeoutExpired:
        return (None, "clockbench health: no answer in %d s" % timeout), {}
    except OSError as e:
        return (None, "clockbench health: %s" % e.strerror), {}
    if len(raw) > MAX_JSON:
        return (None, "clockbench health: over %d MiB of JSON" % (MAX_JSON >> 20)), {}
    try:
        doc = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return (None, "clockbench health: not JSON"), {}
    wd = doc.get("watchdog") if isinstance(doc, dict) else None
    if not isinstance(wd, dict):
        return (None, "clockbench health: no watchdog section (an older version of it)"), machine_of(doc)
    return (wd, None), machine_of(doc)


def machine_of(doc):
    """{guest, hypervisor, path} of health's JSON (another program's:
    each field checked), {} when it says nothing of them."""
    if not isinstance(doc, dict):
        return {}
    m = doc.get("machine") if isinstance(doc.get("machine"), dict) else {}
    out = {}
    if m.get("guest") in (True, False, None) and "guest" in m:
        out["guest"] = m["guest"]
    if isinstance(m.get("hypervisor"), str):
        out["hypervisor"] = m["hypervisor"][:NAME_MAX]
    if doc.get("clock_read_path") in ("user", "syscall"):
        out["path"] = doc["clock_read_path"]
    return out


def boot_epoch():
    """Unix time of the boot: kmsg stamps are CLOCK_MONOTONIC microseconds."""
    return time.time() - time.monotonic()


class Source:
    """A stream of lines, read non-blocking: /dev/kmsg (a record a read),
    or a FIFO or a regular file of lines (the test hooks).  lines() returns
    what is there now, each at most limit bytes (a longer one is dropped
    and counted in self.dropped)."""

    def __init__(self, path, limit):
        self.path, self.limit, self.pending, self.dropped, self.long = path, limit, b"", 0, False
        self.eof = False
        # O_RDWR for a FIFO: the watch holds a writer too, so a closed
        # writer never makes poll() report a hang-up forever.
        st = os.stat(path)
        mode = os.O_RDWR if stat.S_ISFIFO(st.st_mode) else os.O_RDONLY
        self.fd = os.open(path, mode | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
        self.regular = stat.S_ISREG(os.fstat(self.fd).st_mode)
        self.records = stat.S_ISCHR(os.fstat(self.fd).st_mode)  # /dev/kmsg: one record a read

    def lines(self, most=4096):
        out = []
        while len(out) < most and not self.eof:
            try:
                b = os.read(self.fd, MAX_RECORD if self.records else 1 << 16)
            except BlockingIOError:
                break
            except OSError as e:
                if e.errno == errno.EPIPE:  # kmsg: records overwritten before they were read
                    self.dropped += 1
                    continue
                if e.errno == errno.EINVAL and self.records:
                    continue
                raise
            if not b:
                self.eof = self.regular
                break
            if self.records:
                out.append(b.decode("utf-8", "replace"))
                continue
            parts = (self.pending + b).split(b"\n")
            self.pending = parts.pop()
            for p in parts:
                if self.long:
                    self.long = False
                    self.dropped += 1
                elif len(p) <= self.limit:
                    out.append(p.decode("utf-8", "replace"))
                else:
                    self.dropped += 1
            if len(self.pending) > self.limit:
                self.pending, self.long = b"", True
        return out

    def close(self):
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Watch:
    """The loop: sources, state, textfile."""

    def __init__(self, folder, interval, trace=True, once=False, say=None, health_check=None, folder_fd=None):
        self.folder, self.interval = folder, interval
        self.folder_fd = folder_fd  # the folder open (textfile.delegate's), else reached by its path at each write
        self.state = State(boot_epoch())
        self.say = say or (lambda m: None)
        self.kmsg = self.tpipe = None
        self.instance = None
        self.written, self.written_at = None, 0.0
        self.stop = self.reread = False
        self.controls = []  # the instance's tracing_on and buffer_size_kb, open for writing from the setup on
        self.trace, self.one_pass = trace, once
        self.health_check = health_check  # health's argv, or None: not run
        self.wake = None

    def open(self):
        """Opens the kernel log and KVM's events (the steps that need
        privilege); what cannot be opened is said (stderr and the textfile)
        and left out."""
        if self.health_check or os.environ.get("CB_HEALTH_JSON"):
            # Before privileges are dropped: its watchdog readout reads a device.
            self.state.watchdog, self.state.machine = read_health(self.health_check)
        else:
            self.state.watchdog = None, "not asked for (--no-health)"
        path = os.environ.get("CB_KMSG", names.KMSG_DEV)
        try:
            self.kmsg = Source(path, MAX_RECORD)
        except OSError as e:
            self.state.kmsg_error = "open %s: %s" % (path[:80], e.strerror)
            self.say("the kernel log is not followed: %s" % self.state.kmsg_error)
        if not self.trace:
            self.state.trace = (None, "not asked for (--no-trace)")
            return
        hook = os.environ.get("CB_TRACE_PIPE")
        if self.one_pass and not hook:
            self.state.trace = (None, "--once: one pass follows no KVM events")
            return
        try:
            if hook:
                self.tpipe = Source(hook, kvmtrace.MAX_LINE)
            else:
                kvmtrace.clean()  # instances left by a crash (their process is gone)
                self.instance = kvmtrace.start(os.getpid(), kb=TRACE_KB)
                # Kept: after the drop only these descriptors can stop the instance and free its ring (close()).
                self.controls = [os.open(os.path.join(self.instance, n), os.O_WRONLY | os.O_CLOEXEC)
                                 for n in ("tracing_on", "buffer_size_kb")]
                self.tpipe = Source(os.path.join(self.instance, "trace_pipe"), kvmtrace.MAX_LINE)
            self.state.trace = (True, None)
        except (kvmtrace.Unavailable, kvmtrace.TraceError, OSError) as e:
            self.state.trace = (None, str(e)[:160])
            self.say("KVM's clock events not followed: %s" % str(e)[:160])

    def close(self):
        for s in (self.kmsg, self.tpipe):
            if s:
                s.close()
        self.kmsg = self.tpipe = None
        if self.instance:
            if not kvmtrace.discard(os.getpid()):
                # Dropped: the instance cannot be removed, only stopped and
                # its ring shrunk to the least; the next start (or
                # clockbench kvm-trace clean, the unit's ExecStopPost=)
                # removes it.
                for fd, value in zip(self.controls, (b"0", b"1")):
                    try:
                        os.write(fd, value)
                    except OSError:
                        pass
            self.instance = None
        for fd in self.controls:
            os.close(fd)
        self.controls = []

    def drain(self):
        """Reads what the sources hold now; True if a switch was seen (the
        clocksource is then re-read at once)."""
        switched = False
        if self.kmsg:
            for rec in self.kmsg.lines():
                rec = rec.split("\n", 1)[0]  # a record's dictionary lines are not its text
                if self.state.from_boot is None:
                    head = kmsg.message(rec[:kmsg.MAX_LINE])
                    if head and head.seq is not None:
                        self.state.from_boot = head.seq == 0
                if self.state.log_line(rec, self.kmsg.records) in ("switched", "unstable"):
                    switched = True
        if self.tpipe:
            for line in self.tpipe.lines():
                self.state.trace_line(line)
        return switched

    def publish(self, force=False):
        """Writes the textfile if it changed, or if force, or if REFRESH
        seconds went by since the last write."""
        text = self.state.render()
        body = text.split("# HELP node_clockbench_watch_start_timestamp_seconds")[0]
        now = time.monotonic()
        if not force and body == self.written and now - self.written_at < REFRESH:
            return False
        textfile.write(self.folder, FILE, text, fd=self.folder_fd)
        self.written, self.written_at = body, now
        return True

    def once(self):
        self.state.read_clock()
        self.drain()
        self.state.prune()
        self.publish(force=True)

    def run(self):
        """Until TERM or INT: poll the sources; re-read the clock every
        interval (and at once on HUP); write when a value changes."""
        next_clock = 0.0
        next_prune = 0.0
        while not self.stop:
            now = time.monotonic()
            if self.reread:  # HUP
                self.reread = False
                next_clock = next_prune = now
                self.written_at = -REFRESH
            if now >= next_clock:
                self.state.read_clock()
                next_clock = now + self.interval
            switched = self.drain()
            if switched:
                self.state.read_clock()
            if now >= next_prune or switched:
                self.state.prune()
                next_prune = now + min(self.interval, 10.0)
            self.publish()
            wait = max(0.05, min(next_clock, next_prune, self.written_at + REFRESH) - time.monotonic())
            fds = [s.fd for s in (self.kmsg, self.tpipe) if s and not s.eof and not s.regular]
            r = select.select(fds + [self.wake[0]], [], [], wait)[0]
            if self.wake[0] in r:
                os.read(self.wake[0], 64)  # a signal: its handler set self.stop


# The watch's own account (the package makes it); where there is none, nobody.
WATCH_USER, FALLBACK_USER = "clockbench", "nobody"


def account():
    """(name, uid, gid) the watch becomes after its setup as root: WATCH_USER,
    else FALLBACK_USER; InputError when neither exists (or is root)."""
    import pwd
    for n in (WATCH_USER, FALLBACK_USER):
        try:
            pw = pwd.getpwnam(n)
        except KeyError:
            continue
        if pw.pw_uid != 0 and pw.pw_gid != 0:
            return n, pw.pw_uid, pw.pw_gid
    raise InputError(None, "no account to run as after the setup (%s, %s): the package makes %s"
                     % (WATCH_USER, FALLBACK_USER, WATCH_USER))


def drop_privileges(uid, gid):
    """After setup, as root: no new privileges, an empty bounding set, then
    uid and gid (real, effective, saved) and no supplementary group, which
    leaves no capability (the kernel clears them when root's uids go; the
    inheritable and ambient sets are cleared here).  Returns None, or why
    it could not (then nothing must run on)."""
    import ctypes
    import ctypes.util
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    try:
        last = int((read_small("/proc/sys/kernel/cap_last_cap") or "40").strip())
    except ValueError:
        last = 40
    PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 24, 47, 4
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return "prctl(PR_SET_NO_NEW_PRIVS): %s" % os.strerror(ctypes.get_errno())
    for cap in range(last + 1):
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)  # EPERM without CAP_SETPCAP: the uid change below still clears
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    try:
        os.setgroups([])
        os.setresgid(gid, gid, gid)
        os.setresuid(uid, uid, uid)
    except OSError as e:
        return "setresuid(%d): %s" % (uid, e.strerror)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    h = Header(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3
    d = (Data * 2)()
    if libc.capset(ctypes.byref(h), d) != 0:
        return "capset: %s" % os.strerror(ctypes.get_errno())
    if 0 in os.getresuid() + os.getresgid() or os.getgroups():
        return "root's ids are still there"
    status = read_small("/proc/self/status") or ""
    left = [ln for ln in status.splitlines() if ln.startswith(("CapPrm", "CapEff", "CapAmb"))
            and ln.split(":")[1].strip().strip("0")]
    return "capabilities left: %s" % " ".join(left) if left else None


def install_signals(w):
    """TERM and INT stop w's loop at once, HUP makes it re-read the clock
    and the VM names and rewrite the textfile: the handler sets w.stop or
    w.reread and the signal's byte on w.wake (set_wakeup_fd) ends its
    select()."""
    w.wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(w.wake[1])

    def on_term(signum, frame):
        w.stop = True

    def on_hup(signum, frame):
        w.reread = True
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_term)
    signal.signal(signal.SIGHUP, on_hup)
