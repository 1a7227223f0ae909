#!/usr/bin/python3
"""assert.py: the lab's expectations (lab/states.cfg), as TAP, on raw evidence.

Usage: assert.py LAB_DIR STATES [--each]   (--each: one L1 boot per state, as run-lab's ci tier)
Each fact a state expects is read from its own evidence, never from a
summary the harness wrote: the raw KVM trace of the guest's QEMU (counted
here with cbhost.kvmtrace.summarize), the guest's console (its kernel's own
lines), the path probe in the guest result (read by cbcontract.load), L1's
kernel log and the clocksource L1 read.  An assertion whose evidence file
is missing or empty fails.  Every state is also checked for a harness run
that succeeded (at most one retry), a guest result, a complete trace of the
guest's own QEMU with its measuring window, and L1 back on its own
clocksource after the run.  Mechanism only, never nanoseconds: everything
in the lab runs under an emulator.  A state's L1 figures (its host bench,
its TSC-rate check) are compared with the tsc state's, the table's first
state on tsc with the same L1 configuration, as directions or generous
factors; where that state was not selected, the comparison is skipped.
An L1 that froze (lab/run-lab's record, l1-NAME.frozen) is said as the
emulator's and its evidence checked: its console and its record kept; a
state's L1 facts are those of the L1 that ran its last attempt (the
progress log names it).
Ends with "N passed, N failed"; exit 0 all passed, 1 any failed, 2 usage.
"""
import glob
import gzip
import json
import os
import re
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path[:0] = [os.path.join(TOP, "contract"), os.path.join(TOP, "host-scripts"), HERE]  # the one place this command finds its packages
import labtable  # noqa: E402
from cbcontract import kernels, klog, kmsg, load, names as cbnames, runfolder
from cbhost import kvmtrace

# The kernel's lines, of every era, from the one list (cbcontract/kmsg.py):
# the clocksource a switch names, and whether a line gives the TSC up.
switched_to = kmsg.switched_to
marks_tsc_unstable = kmsg.marks_tsc_unstable
ON_TSC = cbnames.TSC_NAMES

n = failed = 0


def ok(cond, what, why=""):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print("%sok %d - %s%s" % ("" if cond else "not ", n, what, "" if cond or not why else " (%s)" % why))


def skip(what, why):
    global n
    n += 1
    print("ok %d - %s # SKIP %s" % (n, what, why))


READ_MAX = 32 << 20  # bytes: a lab's largest text file (a kernel log, a console) is well under it


class NoEvidence(Exception):
    """Why a fact has no evidence, in one line: a missing, unreadable or
    empty file, or one that does not say it."""


def why_not(fn, *args):
    """(fn(*args), None), or (None, why) where fn raises NoEvidence."""
    try:
        return fn(*args), None
    except NoEvidence as e:
        return None, str(e)


def loaded(fn, *args, **kw):
    """What a reader of cbcontract.load returns; its InputError is no evidence."""
    try:
        return fn(*args, **kw)
    except load.InputError as e:
        raise NoEvidence(str(e))


def read_text(path):
    """The text of a file, errors as U+FFFD; NoEvidence for a missing file,
    or one the loader's rule refuses (load.read_regular: a FIFO or device
    without waiting for a writer, a file over READ_MAX)."""
    if not os.path.lexists(path):
        raise NoEvidence("no %s" % os.path.basename(path))
    return loaded(load.read_regular, path, READ_MAX).decode("utf-8", "replace")


def read(path):
    """The text of a file, or None when read_text gives none."""
    return why_not(read_text, path)[0]


def text(path):
    """The text of a file: a missing, unreadable or empty file is no evidence."""
    t = read_text(path)
    if not t.strip():
        raise NoEvidence("%s is empty" % os.path.basename(path))
    return t


def comment(lines):
    """Lines as TAP comments, each cut at 300 characters."""
    for line in lines:
        print("#   " + line[:300])


def state_progress(t, n):
    """The progress log's lines on state n, their epoch dropped."""
    return [line.split(" ", 1)[-1] for line in t.splitlines() if re.search(r" state %d\b" % n, line)]


def pairs(t):
    """Lines of 'KEY VALUE' as {key: value} (a key alone: '')."""
    return dict((line.split(" ", 1) + [""])[:2] for line in t.splitlines() if line.strip())


class Evidence:
    """One state's evidence files, each read once: its value, or NoEvidence."""

    def __init__(self, d, st, boot, base=None):
        """boot: the name of the L1 that ran the state's last attempt."""
        self.d, self.st = d, st
        self.files = labtable.state_files(st.n)
        self.boot_name = boot
        self.boot = labtable.boot_files(boot)
        self.run = os.path.join(d, self.files["run"])
        self.memo = {}
        # The tsc state's evidence, for the facts that compare with it:
        # (Evidence, None), or (None, why there is none).
        self.base = base

    def get(self, key, fn):
        """fn()'s value, read once; its NoEvidence, raised again each time."""
        if key not in self.memo:
            self.memo[key] = why_not(fn)
        value, why = self.memo[key]
        if why is not None:
            raise NoEvidence(why)
        return value

    def l1_facts(self):
        """L1's sysfs reads at its boot ("clocksource tsc", ...) as a dict."""
        return self.get("facts", lambda: pairs(text(os.path.join(self.d, self.boot["facts"]))))

    def l1_clocksource(self):
        cs = self.l1_facts().get("clocksource", "").strip()
        if not cs:
            raise NoEvidence("%s: no clocksource line" % self.boot["facts"])
        return cs

    def cs(self):
        """The host clocksource the state ran under: the table's, or L1's own."""
        return self.l1_clocksource() if self.st.own_cs else self.st.clocksource

    def name(self, kind):
        try:
            cs = self.cs()
        except NoEvidence as e:
            raise NoEvidence("the state's clocksource is unknown: %s" % e)
        if kind == "host":
            return runfolder.host_name(cs, "json")
        if kind == "tsc-rate":
            return runfolder.tsc_rate_name(cs)
        g = runfolder.guest_name(cs, self.st.l2_vcpus)
        return g if kind == "guest" else runfolder.partner(g, kind)

    def host(self, kind="host"):
        """L1's own engine document of the state's run: the host bench
        (host-<cs>.json) or its TSC-rate check (tsc-rate-<cs>.json)."""
        return self.get(kind, lambda: loaded(load.load_host, os.path.join(self.run, self.name(kind)), kind=kind))

    def guest(self):
        return self.get("guest", lambda: loaded(load.load_guest, os.path.join(self.run, self.name("guest"))))

    def trace(self):
        """The raw trace of the guest's QEMU (its pid from the guest result),
        summarized here."""
        def fn():
            try:
                m = self.guest()
            except NoEvidence as e:
                raise NoEvidence("no QEMU pid to follow: %s" % e)
            pid = m.launcher.get("qemu_pid")
            if not isinstance(pid, int) or isinstance(pid, bool):
                raise NoEvidence("%s: no launcher.qemu_pid: whose events to count is unknown"
                                 % os.path.basename(m.path))
            raw = self.name("kvm-trace-raw")
            path = runfolder.kept_raw(self.run, raw)
            if path is None:
                raise NoEvidence("no %s[.gz]" % raw)
            try:
                lines = kvmtrace.read_lines(path)
            except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
                raise NoEvidence("%s: %s" % (os.path.basename(path), getattr(e, "strerror", None) or e))
            if not any(line.strip() for line in lines):
                raise NoEvidence("%s is empty" % os.path.basename(path))
            s = kvmtrace.summarize(lines, pid)
            if not sum(s["life"]["events"].values()):
                raise NoEvidence("%s: no KVM event of QEMU pid %d" % (os.path.basename(path), pid))
            return s
        return self.get("trace", fn)

    def console(self):
        """The guest console's lines; it must carry its kernel's lines."""
        def fn():
            name = self.name("console")
            lines = klog.text_lines(text(os.path.join(self.run, name)))
            if not any(switched_to(line) for line in lines):
                raise NoEvidence("%s holds no kernel line 'clocksource: Switched to clocksource' (/init copies "
                                 "them there)" % name)
            return lines
        return self.get("console", fn)

    def dmesg(self):
        """L1's kernel log as its lines, split on LF alone: l1-run.sh
        captures /dev/kmsg's records one a line (older labs: dmesg's
        text), so nothing a record's text holds (a CR, U+2028) starts
        another line."""
        return self.get("dmesg", lambda: klog.text_lines(text(os.path.join(self.d, self.boot["dmesg"]))))

    def dmesg_after(self):
        """L1's kernel log read after the state (state-N.dmesg.txt), as dmesg()."""
        return self.get("dmesg-after", lambda: klog.text_lines(text(os.path.join(self.d, self.files["dmesg"]))))

    def readout(self, which="watchdog"):
        """The engine's watchdog readout in L1 (state-N.watchdog.json; which
        "watchdog_load": the timer load's on CPU 1), its watchdog_readout
        object, fields type-checked here."""
        def fn():
            m = loaded(load.load_host, os.path.join(self.d, self.files[which]))
            r = m.doc.get("watchdog_readout")
            if not isinstance(r, dict):
                raise NoEvidence("%s: no watchdog_readout object" % self.files[which])
            ns = r.get("ns")
            runs = r.get("runs_over_limit")
            if (not isinstance(ns, dict) or not isinstance(runs, dict)
                    or any(not _count(r.get(k)) for k in ("samples", "over_limit", "limit_ns"))
                    or not _count(runs.get("longest"))
                    or any(ns.get(k) is not None and not isinstance(ns.get(k), (int, float)) for k in NS_KEYS)):
                raise NoEvidence("%s: watchdog_readout: a field of the wrong type" % self.files[which])
            return r
        return self.get(which, fn)

    def run_names(self):
        """The run folder's contract files: {(kind, clocksource)} for its
        host and guest documents (runfolder.classify)."""
        def fn():
            out = set()
            for name in loaded(load.folder_names, self.run):
                c = runfolder.classify(name)
                if c and c[0] in ("host", "guest") and c[1].get("cs"):
                    out.add((c[0], c[1]["cs"]))
            return out
        return self.get("names", fn)

    def health(self):
        """health's report of L1 when the state's run began (the run
        folder's health.json), read by load.load_health."""
        return self.get("health", lambda: loaded(load.load_health, os.path.join(self.run, runfolder.HEALTH)))

    def screen(self):
        """The state's run as it printed it (state-N.log: compare's progress,
        then its final screen), whitespace folded to single blanks: the
        screen wraps its lines at 100 columns."""
        return self.get("screen", lambda: " ".join(text(os.path.join(self.d, self.files["log"])).split()))

    def l1_health(self):
        """health's JSON in L1 (state-N.health.json; a run before the rename:
        state-N.host-check.json), its watchdog object."""
        def fn():
            name = self.files["health"]
            old = name[:-len(".health.json")] + ".host-check.json"
            if not os.path.lexists(os.path.join(self.d, name)) and os.path.lexists(os.path.join(self.d, old)):
                name = old
            t = text(os.path.join(self.d, name))
            if len(t) > 4 << 20:
                raise NoEvidence("%s: over 4 Mi characters" % name)
            try:
                doc = json.loads(t)
            except ValueError as e:
                raise NoEvidence("%s: not JSON: %s" % (name, str(e)[:80]))
            w = doc.get("watchdog") if isinstance(doc, dict) else None
            if not isinstance(w, dict):
                raise NoEvidence("%s: no watchdog object" % name)
            return w
        return self.get("l1-health", fn)


NS_KEYS = ("p50", "p99", "p99_9", "p99_99", "max")


def _count(v):
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _trace(path):
    """A reader of one field of the raw trace's summary."""
    def fn(ev):
        v = ev.trace()
        for k in path:
            v = v.get(k) if isinstance(v, dict) else None
        return v
    return fn


def master_clock(ev):
    return {True: "on", False: "off"}.get(_trace(("life", "master_clock", "last"))(ev), "never updated")


def stable_bit(ev):
    sb = _trace(("life", "stable_bit"))(ev)
    w, wo = sb["with"], sb["without"]
    if w and not wo:
        return "all"
    if wo and not w:
        return "none"
    return ("%d updates with it, %d without" % (w, wo)) if w + wo else "no pvclock update"


def guest_clocksource(ev):
    return [c for c in map(switched_to, ev.console()) if c][-1]


def sched_clock_stable(ev):
    return "yes" if any("sched_clock: Marking stable" in line for line in ev.console()) else "no"


def path(ev):
    m = ev.guest()
    if not m.probe_path:
        raise NoEvidence("%s: no usable path probe" % os.path.basename(m.path))
    return m.probe_path


def l1_tsc(ev):
    """The kernel's own reaction: a line marking the TSC unstable, its switch
    away from tsc, and L1's current clocksource; never L1's command line."""
    lines = ev.dmesg()
    cur = ev.l1_clocksource()
    switched = [c for c in map(switched_to, lines) if c]
    if not switched:
        raise NoEvidence("%s: no 'clocksource: Switched to clocksource' line" % ev.boot["dmesg"])
    return tsc_verdict(lines, [("switched to", switched[-1]), ("current", cur)])


def tsc_verdict(lines, seen):
    """'unstable' where a line of L1's log gives the TSC up and every
    clocksource seen ([(words, name)]) is off it, 'stable' where none does
    and every one is tsc; else 'no verdict' with what was seen."""
    marked = any(marks_tsc_unstable(line) for line in lines)
    names = [cs for _, cs in seen]
    if marked and all(cs not in ON_TSC for cs in names):
        return "unstable"
    if not marked and all(cs == "tsc" for cs in names):
        return "stable"
    return "no verdict: marked unstable %s, %s" % (
        "yes" if marked else "no", ", ".join("%s %s" % pair for pair in seen))


def l1_watched(ev):
    """Whether L1's kernel watches its TSC, by L1's own facts (release,
    version, command line, the TSC's CPU flags, online NUMA nodes, the
    clocksource module's parameters, its clocksources) and the kernel
    table's rules (cbcontract.kernels): never by health's answer."""
    f = ev.l1_facts()
    rel, ver = f.get("kernel", "").strip(), f.get("version", "").strip() or None
    if "tsc_flags" not in f:
        raise NoEvidence("%s: no tsc_flags line (L1's facts predate the watchdog check)" % ev.boot["facts"])
    params = f.get("cs_params", "").split()
    rules = kernels.rules_for(rel, ver, params)
    if rules is None:
        raise NoEvidence("kernel %s: %s" % (rel, kernels.why_unknown(rel, ver, params)))
    cmd = f.get("cmdline", "").split()
    tsc_opts = [o for w in cmd if w.startswith("tsc=") for o in w[4:].split(",")]
    flags = set(f.get("tsc_flags", "").split())
    nodes = _range_count(f.get("nodes", "").strip())
    why = []
    for r in kernels.unwatched_rules(rel, ver, params) or []:
        if r.get("effect") != "unwatched":
            continue
        if r.get("cmdline") and r["cmdline"][4:] in tsc_opts:
            why.append(r["id"])
        elif r.get("cpu_flags") and set(r["cpu_flags"]) <= flags:
            if "count" not in r:
                why.append(r["id"])
            elif "NUMA" not in r["count"]:
                raise NoEvidence("rule %s counts %s, which L1's facts do not hold" % (r["id"], r["count"]))
            elif nodes is None:
                raise NoEvidence("%s: no online NUMA nodes" % ev.boot["facts"])
            elif nodes <= r["max"]:
                why.append(r["id"])
    if why:
        return "no"
    by = kernels.watchdog_for(rules, f.get("available", "").split())
    return "yes" if by else "no"


def _range_count(spec):
    """How many numbers a sysfs range list ("0", "0-3,5") names, or None."""
    if not re.match(r"^[0-9]+(-[0-9]+)?(,[0-9]+(-[0-9]+)?)*$", spec or ""):
        return None
    n = 0
    for part in spec.split(","):
        a, _, b = part.partition("-")
        n += int(b or a) - int(a) + 1
    return n


def health_watched(ev):
    v = ev.l1_health().get("watched")
    if v not in ("yes", "no", "unknown"):
        raise NoEvidence("watchdog.watched is %r" % (v,))
    return v


def _readout(field, which="watchdog"):
    def fn(ev):
        r = ev.readout(which)
        if field == "device":
            if r.get("unavailable"):
                raise NoEvidence("unavailable: %s" % str(r["unavailable"])[:120])
            return "%s" % r.get("device")
        if field == "longest":
            return r["runs_over_limit"]["longest"]
        return r[field]
    return fn


def watchdog_kinds(ev, prefix):
    """The kinds (cbcontract.kmsg's) of the watchdog's own lines in L1's
    log after the state that start with prefix, in the log's order."""
    return [k for k in ((kmsg.classify(line) or ("",))[0] for line in ev.dmesg_after()) if k.startswith(prefix)]


def watchdog_verdict(ev):
    """The watchdog's verdicts in L1's log after the state: their kinds
    without 'verdict/' ("skew", "readback", "skew,readback"), or "none"."""
    return ",".join(dict.fromkeys(k[len("verdict/"):] for k in watchdog_kinds(ev, "verdict/"))) or "none"


def near_misses(ev):
    return len(watchdog_kinds(ev, "near-miss/"))


def l1_tsc_after(ev):
    """L1's TSC after the state: its kernel's log read then (a line giving
    the TSC up) and the clocksource L1 read after the run."""
    lines = ev.dmesg_after()
    cur = text(os.path.join(ev.d, ev.files["after"])).strip()
    return tsc_verdict(lines, [("current", cur)])


def readout_margin_pct(ev):
    """health's margin in L1 on the state's readout (the kernel's limit
    over the readout's p99.99), in hundredths."""
    risk = ev.l1_health().get("risk")
    m = risk.get("margin") if isinstance(risk, dict) else None
    if not isinstance(m, (int, float)) or isinstance(m, bool) or m != m or m < 0:
        raise NoEvidence("%s: watchdog.risk.margin is %r (%s)" % (
            ev.files["health"], m, (risk or {}).get("reason") if isinstance(risk, dict) else "no risk object"))
    return int(round(m * 100))


def offered(ev):
    """The clocksources L1 offered (its facts' available line), a set,
    but for the kernel's stand-ins (jiffies and refined-jiffies are listed
    on L1's periodic tick), which a run never measures."""
    got = set(ev.l1_facts().get("available", "").split()) - set(cbnames.CS_STAND_INS)
    if not got:
        raise NoEvidence("%s: no available line" % ev.boot["facts"])
    return got


def bench_measured(ev):
    """'offered' when the run folder's host documents name exactly the
    clocksources L1 offered, each with its guest; else what it measured."""
    names = ev.run_names()
    want = offered(ev)
    hosts = {c for k, c in names if k == "host"}
    guests = {c for k, c in names if k == "guest"}
    if hosts == want and (guests == want or not ev.st.harness):
        return "offered"
    return "host %s, guest %s; L1 offered %s" % (" ".join(sorted(hosts)) or "none", " ".join(sorted(guests)) or "none",
                                                 " ".join(sorted(want)))


def bench_tsc_row(ev):
    return "yes" if any(c in ON_TSC for _, c in ev.run_names()) else "no"


def running_vm_guest_paths(ev):
    """The guest's own read path in each phase of compare's running-VM
    step ("user,syscall,syscall,user"), from running-vm-CS.json."""
    ev.run_names()  # a run folder the loader refuses is no evidence
    files = sorted(n for n in os.listdir(ev.run) if n.startswith("running-vm-") and n.endswith(".json")) \
        if os.path.isdir(ev.run) else []
    if not files:
        raise NoEvidence("%s/: no running-vm-*.json (the running-VM step did not run)" % ev.files["run"])
    m = loaded(load.load_running_vm, os.path.join(ev.run, files[0]))
    if not m.guest:
        raise NoEvidence("%s: the guest's own view not measured" % files[0])
    return ",".join(paths[0] if len(paths) == 1 else "mixed" if paths else "none" for _, paths, _ in m.guest)


def bench_cause(ev):
    """The cause health named in the run's health.json, where the
    run's screen says it as the verdict does (its 'Why it is off the TSC'
    sentence with the kernel's own line); else what is missing."""
    h = ev.health()
    scr = ev.screen()
    if h["cause"] == "never_lost":
        return "never_lost"
    why = " ".join(("Why it is off the TSC: %s" % h["cause_text"]).split())
    if why not in scr:
        return "%s, but the screen lacks %r" % (h["cause"], why[:120])
    line = " ".join((h["cause_line"] or "").split())
    if not line:
        return "%s, but health.json quotes no kernel line" % h["cause"]
    msg = kmsg.message(h["cause_line"] or "")
    text = " ".join(msg.text.split()) if msg else line
    # The screen quotes the kernel's words ("the kernel's line: \"tsc: ...\""),
    # the screens of 2026-12-01 21:47 the whole line with its stamp.
    if "the kernel's line: \"%s\"" % text not in scr and "the kernel's line: " + line not in scr:
        return "%s, but the screen lacks the kernel's line %r" % (h["cause"], line[:120])
    return h["cause"]


# A ratio on the screen: 'x1.00', 'x60.00 [58.00, 62.00]', or a verdict
# line costing a fallback 'against N on tsc'.
RATIO_RE = re.compile(r"(?<![\w.])x\d+\.\d+|against [0-9.]+ on tsc")
NO_RATIO = "No ratio: this run has no tsc row to be the baseline"


def bench_ratio(ev):
    """'none' when the run's screen says it has no ratio (verdict.py's
    sentence) and shows none; 'printed' with the first it shows."""
    scr = ev.screen()
    m = RATIO_RE.search(scr)
    if m:
        return "printed (%r)" % scr[max(0, m.start() - 60):m.end() + 20]
    return "none" if NO_RATIO in scr else "not said: no %r on the screen" % NO_RATIO


def kernel_read(ev):
    """L1's in-kernel clock read, monotonic on 1 thread: the syscall row's
    median less its null median, negative where noise made it so."""
    m = ev.host()
    r = m.row("monotonic", "syscall", 1)
    if r is None or r.median is None or r.null_median is None:
        raise NoEvidence("%s: no syscall row with a null median (monotonic, 1 thread)" % os.path.basename(m.path))
    return r.median - r.null_median


def vdso_read(ev):
    """L1's clock_gettime through the vDSO, monotonic on 1 thread: the vdso
    row's median (on hpet the vDSO falls back to the syscall)."""
    m = ev.host()
    r = m.row("monotonic", "vdso", 1)
    if r is None or r.median is None:
        raise NoEvidence("%s: no vdso row (monotonic, 1 thread)" % os.path.basename(m.path))
    return r.median


def against_base(reader, floor=None):
    """A reader of this state's figure over the tsc state's (the base
    figure raised to floor first, where noise can bring it near 0)."""
    def fn(ev):
        base, why = ev.base
        if why:
            raise NoEvidence(why)
        mine = reader(ev)
        try:
            theirs = reader(base)
        except NoEvidence as e:
            raise NoEvidence("the tsc state (%d): %s" % (base.st.n, e))
        if floor is not None:
            theirs = max(theirs, floor)
        if not theirs > 0:
            raise NoEvidence("the tsc state's figure is %s" % theirs)
        return round(mine / theirs, 2)
    return fn


def rtc(ev):
    """The rate check's answer from L1's RTC, or NoEvidence saying why there is none."""
    m = ev.host("tsc-rate")
    r = m.tsc_rate["rtc"]
    if not r["available"]:
        raise NoEvidence("%s: no answer from the RTC: %s" % (os.path.basename(m.path), r.get("reason")))
    return r


def rtc_edges(ev):
    return rtc(ev)["edges"]


def rtc_ppm_abs(ev):
    r = rtc(ev)
    if r["ppm"] is None:
        raise NoEvidence("rtc.ppm is null")
    return round(abs(r["ppm"]), 1)


# Each fact of labtable.FACTS: its reader, its words, its evidence.
FACTS = {
    "l1_tsc": (l1_tsc, "L1's TSC, by its kernel's log and clocksource", "l1"),
    "master_clock": (master_clock, "KVM's master clock", "trace"),
    "hostclock": (_trace(("life", "master_clock", "hostclock")), "KVM's hostclock", "trace"),
    "stable_bit": (stable_bit, "PVCLOCK_TSC_STABLE_BIT in the pvclock updates", "trace"),
    "tsc_offset_writes": (_trace(("life", "tsc_offset_writes")), "TSC-offset writes over QEMU's life", "trace"),
    "window_tsc_offset_writes": (_trace(("measuring", "tsc_offset_writes")),
                                 "TSC-offset writes while the guest measured", "trace"),
    "guest_clocksource": (guest_clocksource, "the guest's clocksource, by its kernel", "console"),
    "sched_clock_stable": (sched_clock_stable, "'sched_clock: Marking stable' from the guest's kernel", "console"),
    "path": (path, "the guest's clock_gettime path, by its probe", "guest"),
    # A base under 1 ns (noise can take syscall less null there) counts as 1 ns.
    "l1_kernel_read_vs_tsc": (against_base(kernel_read, 1.0), "the kernel's own clock read on L1 (syscall less "
                              "null, monotonic, 1 thread), as a multiple of the tsc state's", "host+base"),
    "l1_vdso_read_vs_tsc": (against_base(vdso_read, 1.0), "clock_gettime through the vDSO on L1 (monotonic, 1 "
                            "thread), as a multiple of the tsc state's", "host+base"),
    "l1_rtc_edges": (rtc_edges, "RTC update interrupts timed by the rate check on L1", "tsc-rate"),
    "l1_rtc_ppm_abs": (rtc_ppm_abs, "the TSC's rate on L1 against the RTC, |ppm| from the kernel's", "tsc-rate"),
    "l1_watched": (l1_watched, "L1's TSC watched by its kernel's watchdog, by L1's facts and the kernel table", "l1"),
    "l1_health_watched": (health_watched, "health in L1 says the TSC is watched", "health"),
    "watchdog_device": (_readout("device"), "the watchdog readout's device in L1", "readout"),
    "watchdog_samples": (_readout("samples"), "watchdog readouts timed in L1", "readout"),
    "watchdog_over_limit": (_readout("over_limit"), "watchdog readouts in L1 over the kernel's limit", "readout"),
    "watchdog_runs_longest": (_readout("longest"), "the longest run of slow watchdog readouts in L1", "readout"),
    "watchdog_load_samples": (_readout("samples", "watchdog_load"), "timer readouts of the load on L1's CPU 1",
                              "readout-load"),
    "l1_watchdog_verdict": (watchdog_verdict, "the watchdog's verdicts in L1's log (kmsg's kinds)", "dmesg-after"),
    "l1_watchdog_near_misses": (near_misses, "the watchdog's near-miss lines in L1's log", "dmesg-after"),
    "l1_tsc_after": (l1_tsc_after, "L1's TSC after the state, by its kernel's log and clocksource", "dmesg-after"),
    "l1_readout_margin_pct": (readout_margin_pct, "health's readout margin in L1 (the kernel's limit over the "
                              "readout's p99.99), in hundredths", "health"),
    "bench_measured": (bench_measured, "the clocksources the run measured (its host and guest documents) against "
                       "those L1 offered", "names+l1"),
    "bench_tsc_row": (bench_tsc_row, "a tsc row in the run folder", "names"),
    "bench_cause": (bench_cause, "the cause health named at the run's start, said on its screen with the kernel's "
                    "line", "health+log"),
    "bench_ratio": (bench_ratio, "a ratio on the run's screen", "log"),
    "running_vm_guest_paths": (running_vm_guest_paths, "the running VM's own clock_gettime path in each phase "
                               "(before, on the fallback, after the return, after the pause and resume)", "names"),
}




def evidence(ev, kind):
    """The files a kind of fact is read from, for the TAP line."""
    if kind == "host+base":
        base, _ = ev.base
        mine = why_not(ev.name, "host")[0] or "?"
        return mine if base is None else "%s, %s/%s" % (mine, base.files["run"], why_not(base.name, "host")[0] or "?")
    named = {"trace": "kvm-trace-raw", "console": "console", "guest": "guest", "tsc-rate": "tsc-rate"}
    if kind in named:
        return why_not(ev.name, named[kind])[0] or "?"
    return {"l1": "%s, %s" % (ev.boot["dmesg"], ev.boot["facts"]),
            "names+l1": "%s/, %s" % (ev.files["run"], ev.boot["facts"]),
            "names": ev.files["run"] + "/",
            "health+log": "%s/%s, %s" % (ev.files["run"], runfolder.HEALTH, ev.files["log"]),
            "log": ev.files["log"], "health": ev.files["health"], "dmesg-after": ev.files["dmesg"],
            "readout": ev.files["watchdog"], "readout-load": ev.files["watchdog_load"]}[kind]


def holds(got, op, want):
    if op == "=":
        return got == want
    if not isinstance(got, (int, float)) or isinstance(got, bool):
        return False
    return got >= want if op == ">=" else got < want


def runs(d):
    """Every attempt in the progress log (labtable.attempts), [] without one."""
    return labtable.attempts(read(os.path.join(d, labtable.PROGRESS)) or "")


def boot_name(d, n, selected, each):
    """The L1 that ran state n's last attempt, by the progress log; where it
    names none (a lab from before L1s were replaced), the state's boot."""
    mine = [a for a in runs(d) if a.n == n and a.boot]
    return mine[-1].boot if mine else labtable.boot_of(selected, n, each).name


def tsc_state(d, st, selected, table, each):
    """(Evidence of the tsc state for st, None), (None, why), or None when
    the tsc state was not selected (its comparisons are skipped)."""
    base = next((s for s in table if s.clocksource == "tsc" and s.l1 == st.l1), None)
    if base is None:
        return None, "no state on tsc with L1's configuration in lab/states.cfg"
    if base.n not in {s.n for s in selected}:
        return None
    return Evidence(d, base, boot_name(d, base.n, selected, each)), None


def freeze_record(d, inst):
    """lab/run-lab's record of L1 inst's freeze as {key: text}, or None."""
    t = read(os.path.join(d, labtable.boot_files(inst)["frozen"]))
    return None if t is None else pairs(t)


def freezes(d):
    """Each frozen L1 of the lab, said (EMULATED) and checked: its record
    names its console, which was kept and holds its boot."""
    for path in sorted(glob.glob(os.path.join(d, "l1-*.frozen"))):
        inst = os.path.basename(path)[len("l1-"):-len(".frozen")]
        rec = freeze_record(d, inst) or {}
        print("# L1 %s FROZE (EMULATED: QEMU TCG's behaviour, never a hypervisor's): at %s; detected %s; state %s"
              % (inst, rec.get("froze_at", "?"), rec.get("detected_at", "?"), rec.get("state", "?")))
        for key in ("qemu", "cpu", "snapshot", "kept", "then"):
            print("#   %s: %s" % (key, rec.get(key, "?")[:300]))
        con = labtable.boot_files(inst)["console"]
        ok(rec.get("console") == con and bool(read(os.path.join(d, con))),
           "the frozen L1 %s: its record and its console kept [%s, %s]" % (inst, os.path.basename(path), con),
           "record %r, console %s" % (rec.get("console"), "empty or missing" if not read(os.path.join(d, con)) else "kept"))


def harness_ran(d, st):
    """(verdict, why) from the progress log: the state's last word is 'done'."""
    t, err = why_not(text, os.path.join(d, labtable.PROGRESS))
    if err:
        return False, err
    mine = state_progress(t, st.n)
    if not mine:
        return False, "the state never started"
    return mine[-1] == "done state %d" % st.n, mine[-1]


def after(d, name, want, werr):
    """(verdict, why): L1's clocksource read after a run equals want."""
    t, err = why_not(text, os.path.join(d, name))
    if err or werr:
        return False, err or "L1's own clocksource is unknown: %s" % werr
    return t.strip() == want, "got %s" % t.strip()


def guest_work_logs(d, files):
    """The last lines of a failed guest run's console and QEMU log, which
    lab/l1-run.sh keeps (files: labtable.state_files), and the harness's
    processes in L1's last process table taken while the state ran."""
    out = []
    for log in sorted(glob.glob(os.path.join(d, files["work"], "*", "*.log"))):
        name = os.path.relpath(log, d)
        out += ["%s: %s" % (name, line) for line in (read(log) or "").splitlines()[-6:]]
    return out + harness_processes(d, files["ps"])


def harness_processes(d, name):
    """The harness's processes in L1's process table name (its header line
    first), each as 'NAME: LINE'."""
    table = (read(os.path.join(d, name)) or "").splitlines()
    return ["%s: %s" % (name, line) for line in table[:1] + [
        line for line in table[1:] if re.search(r"qemu|bench-|host-scripts/bench\b|compare|clocksource|kvm-trace|timeout", line)]]


def diagnose(ev, d, st):
    """TAP comments saying why a state left no result: its progress lines,
    the end of its harness log, of the guest's console and of L1's."""
    lines = ["progress: " + line for line in state_progress(read(os.path.join(d, labtable.PROGRESS)) or "", st.n)]
    log = read(os.path.join(d, ev.files["log"]))
    if log is None:
        lines.append("no harness log %s: the state never started" % ev.files["log"])
    else:
        lines += ["%s: %s" % (ev.files["log"], line) for line in log.splitlines()[-12:]]
    con = why_not(ev.name, "console")[0]
    for name, path, k in ((con, os.path.join(ev.run, con or ""), 6),
                          (ev.boot["console"], os.path.join(d, ev.boot["console"]), 4)):
        if name:
            lines += ["%s: %s" % (name, line) for line in (read(path) or "").splitlines()[-k:]]
    comment(lines + guest_work_logs(d, ev.files))


def state(d, st, selected, table, each):
    ev = Evidence(d, st, boot_name(d, st.n, selected, each), tsc_state(d, st, selected, table, each))
    own, own_err = why_not(ev.l1_clocksource)
    own_words = "back on its own clocksource"
    mine = [a for a in runs(d) if a.n == st.n]
    for k in range(1, st.attempts):
        kept = labtable.state_files(st.n, k)
        a = mine[k - 1] if k <= len(mine) else None
        if a is not None and a.end is None and a.boot and freeze_record(d, a.boot) is not None:
            # L1 froze in it: no clocksource was read after it, and no
            # guest's scratch was copied out; the record says what was kept.
            print("# state %d: attempt %d ended with L1 %s frozen (EMULATED), and the state was run again in a "
                  "fresh L1" % (st.n, k, a.boot))
            comment(harness_processes(d, kept["ps"]))
            continue
        flog = read(os.path.join(d, kept["log"]))
        if flog is None:
            break
        print("# state %d: attempt %d failed and the state was run again; its log ends:" % (st.n, k))
        comment(flog.splitlines()[-8:] + guest_work_logs(d, kept))
        good, why = after(d, kept["after"], own, own_err)
        ok(good, "state %d: after the failed attempt %d L1 was back on its own clocksource (%s) [%s]"
           % (st.n, k, own, kept["after"]), why)
    good, why = harness_ran(d, st)
    ok(good, "state %d (%s): its harness run succeeded [%s]" % (st.n, st.label, labtable.PROGRESS), why)
    vendor = re.search(r"(?:^|,)vendor=([^,]+)", st.l1[4])
    if vendor:
        f, err = why_not(ev.l1_facts)
        got = (f or {}).get("vendor", "").strip()
        ok(err is None and got == vendor.group(1), "state %d: L1 booted the table's CPU model (vendor %s) [%s]"
           % (st.n, vendor.group(1), ev.boot["facts"]), err or "got vendor %r: lab/run-lab did not pass l1_cpu?" % got)
    if st.harness:
        guest_checks(ev, d, st)
    expect = list(st.expect)
    if st.outcomes:
        outcome, err = why_not(watchdog_verdict, ev)
        ok(err is None, "state %d: the outcome, by L1's log after the state: %s [%s]" % (
            st.n, "no watchdog verdict" if outcome == "none" else "a watchdog verdict (%s)" % outcome
            if outcome else "unknown", ev.files["dmesg"]), err)
        if outcome is not None:
            branch = "no_verdict" if outcome == "none" else "verdict"
            print("# state %d: asserting the outcome '%s' (EMULATED: under TCG either can come)"
                  % (st.n, branch.replace("_", " ")))
            expect += st.outcomes[branch]
            if branch == "verdict":
                # L1 is where its kernel put it after the verdict, not on
                # its own clocksource of the boot.
                lines, err = why_not(ev.dmesg_after)
                last = [c for c in map(switched_to, lines or []) if c]
                own, own_err = (last[-1], None) if last and last[-1] not in ON_TSC else (
                    None, err or "%s: no switch away from tsc after the verdict" % ev.files["dmesg"])
                own_words = "on the clocksource its kernel fell back to (its log's last switch)"
    for fact, op, want in expect:
        reader, words, kind = FACTS[fact]
        if kind == "host+base" and ev.base is None:
            skip("state %d: %s %s %s" % (st.n, words, op, want), "the tsc state was not run in this lab")
            continue
        got, err = why_not(reader, ev)
        ok(err is None and holds(got, op, want), "state %d: %s %s %s [%s]" % (st.n, words, op, want, evidence(ev, kind)),
           err or "got %s" % (got,))
    if st.watchdog:
        readout_figures(ev, st)
    good, why = after(d, ev.files["after"], own, own_err)
    ok(good, "state %d: L1 %s (%s) after the run [%s]" % (st.n, own_words, own, ev.files["after"]), why)


def readout_figures(ev, st):
    """The watchdog readout's figures in L1, as TAP comments (a benchmark,
    never asserted): emulated, TCG's, beside L1's in-kernel read on the
    state's clocksource (syscall less null) from the same sitting."""
    r, err = why_not(ev.readout)
    if err:
        print("# state %d: no watchdog readout figures: %s" % (st.n, err))
        return
    ns = r["ns"]
    fig = " ".join("%s %s" % (k, "-" if ns.get(k) is None else "%.0f" % ns[k]) for k in NS_KEYS)
    runs = " ".join("%s:%s" % (k, v) for k, v in sorted(r["runs_over_limit"].items()) if k != "longest")
    print("# state %d: watchdog readout in L1 (EMULATED, TCG: not a hypervisor's cost), %s via %s, %d readouts%s: "
          "ns %s; over %d ns: %d (runs %s; longest %d); interrupted %s"
          % (st.n, r.get("device"), r.get("how"), r["samples"], ", under load" if r.get("load") else "", fig,
             r["limit_ns"], r["over_limit"], runs or "none", r["runs_over_limit"]["longest"], r.get("interrupted")))
    if st.watchdog_load == "timer":
        lr, err = why_not(ev.readout, "watchdog_load")
        print("# state %d: the timer load on L1's CPU 1: %s" % (st.n, err or "%s, %d readouts, p50 %s ns (EMULATED)"
                                                             % (lr.get("device"), lr["samples"], lr["ns"].get("p50"))))
    risk = (why_not(ev.l1_health)[0] or {}).get("risk")
    if isinstance(risk, dict):
        print("# state %d: health in L1 on it (EMULATED): %s, margin %s" % (
            st.n, risk.get("verdict"), "x%.2f" % risk["margin"] if isinstance(risk.get("margin"), (int, float))
            else "unknown"))
    kr, err = why_not(kernel_read, ev) if st.harness else (None, "no harness run")
    cs = why_not(ev.cs)[0]
    if err:
        print("# state %d: L1's in-kernel read: none (%s)" % (st.n, err))
    elif ns.get("p50"):
        print("# state %d: L1's in-kernel clock read on %s (EMULATED, TCG), same boot: %.0f ns; readout p50 / it = %.2f"
              % (st.n, cs, kr, ns["p50"] / kr if kr > 0 else float("nan")))


def guest_checks(ev, d, st):
    """What every state with a harness run is checked for: a guest result,
    the guest's QEMU traced, a complete raw trace with its window."""
    m, err = why_not(ev.guest)
    gname = why_not(ev.name, "guest")[0]
    ok(m is not None, "state %d: a guest result [%s]" % (st.n, gname), err)
    if m is None:
        diagnose(ev, d, st)
    tname = why_not(ev.name, "kvm-trace")[0]
    t = m.trace if m is not None else None
    ok(t is not None and t.available and t.subject == "guest",
       "state %d: KVM's events traced for the guest's own QEMU [%s]" % (st.n, tname),
       err if m is None else "no %s" % tname if t is None else t.reason if not t.available else "subject %s" % t.subject)
    raw = why_not(ev.name, "kvm-trace-raw")[0]
    s, err = why_not(ev.trace)
    ok(s is not None and s["complete"] is True, "state %d: the raw trace is complete [%s]" % (st.n, raw),
       err or ("%s events lost" % s["completeness"].get("lost") if s["complete"] is False
               else "completeness unknown: no ring-buffer figures in it"))
    w = (s or {}).get("measuring") or {}
    secs = " (%s s)" % w["seconds"] if w.get("seconds") is not None else ""
    ok(w.get("available") is True, "state %d: the guest's measuring window marked in the raw trace%s [%s]"
       % (st.n, secs, raw), err or w.get("reason"))


def main(argv):
    each = argv[3:] == ["--each"]
    if len(argv) != 3 and not each:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    d = argv[1]
    try:
        table = labtable.load()
        sel = labtable.select(table, argv[2])
    except labtable.TableError as e:
        print("assert.py: %s" % e, file=sys.stderr)
        return 1
    except ValueError as e:
        print("assert.py: STATES %s" % e, file=sys.stderr)
        return 2
    if set(FACTS) != set(labtable.FACTS):
        print("assert.py: the facts read here and labtable.FACTS differ: %s"
              % " ".join(sorted(set(FACTS) ^ set(labtable.FACTS))), file=sys.stderr)
        return 1
    freezes(d)
    for boot in labtable.boots(sel, each):
        for st in boot.states:
            state(d, st, sel, table, each)
    print("1..%d" % n)
    print("%d passed, %d failed" % (n - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
