"""healthcollect.py: what clockbench health reads, of this machine or of recorded files, each fact with where it came from.

Nothing here judges: it reads the clocksource folder, the CPU flags, the
kernel command line and log (this boot's and every boot's), the engine's
TSC check, path probe and watchdog readout, the watchdog's rules of the
kernel and the VMs running now.  A file not read says why (Unread); every
recorded input is bounded and, read as root, never followed through a link.
"""
import contextlib
import errno
import os
import re
import subprocess
import tempfile
import time

import cbhost
from cbcontract import health, kernels, klog, kmsg, load, names, paste
from cbcontract.util import InputError, bounded, cut

from . import heal, kvmtrace, watch

class Unread(Exception):
    """A file not read, and why (as an OSError would say it)."""

    def __init__(self, why):
        super().__init__(why)
        self.strerror = why


NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,31}")
# Set by main: recorded inputs read as root are never followed through a
# symbolic link (a user's "recorded" folder cannot make root's report
# read a file only root may).
NOFOLLOW = [False]


def read(path):
    """The text of a regular file (a kernel log, sysfs, /proc), bounded
    (the loader's rule: a FIFO or device is refused without blocking, at
    most 64 MiB; a symlink refused under NOFOLLOW); an Unread saying why
    otherwise."""
    try:
        return load.read_regular(path, nofollow=NOFOLLOW[0]).decode("utf-8", "replace")
    except InputError as e:
        return Unread(bounded(str(e).split(": ", 1)[-1] if str(e).startswith(path) else str(e)))


def recorded_log(path):
    """A recorded kernel log, text: a stream of lines split on LF alone
    (klog.file_lines), one line held at a time, summarized: (its
    kmsg.summarize(), None), or (None, why it was not read)."""
    try:
        return kmsg.summarize(klog.file_lines(path, load.MAX_FILE, NOFOLLOW[0]), True), None
    except InputError as e:
        return None, bounded(str(e).split(": ", 1)[-1] if str(e).startswith(path) else str(e))


def kernel_log(path):
    """The kernel log read once, in constant memory: (its kmsg.summarize(),
    source, problem), or (None, source, problem) when it was not read.  A
    recorded FILE is text, split on LF alone (klog.file_lines).  This
    host's log is read as records, each one unit whatever its text holds
    (klog): /dev/kmsg, else (kernel.dmesg_restrict=1 for a user) the
    journal's kernel entries; source says which, and why not the first."""
    if path:
        s, why = recorded_log(path)
        return s, path, None if s is not None else "%s: %s" % (path, why)
    why = []
    dev = os.environ.get("CB_KMSG", names.KMSG_DEV)  # a test hook: a stand-in file of records
    try:
        records = klog.Records(klog.kmsg_records(dev))
    except OSError as e:
        restrict = read("/proc/sys/kernel/dmesg_restrict")
        extra = " (kernel.dmesg_restrict=1)" if e.errno in (errno.EPERM, errno.EACCES) and \
            not isinstance(restrict, Exception) and restrict.strip() == "1" else ""
        why.append("%s: %s%s" % (dev, e.strerror, extra))
    else:
        s = kmsg.summarize(records)
        if records.count:
            return s, dev, None
        why.append("%s: no records" % dev)
    s, limited = journal_log(JOURNAL)
    if limited:
        why.append(limited)
        return None, None, "; ".join(why)
    return s, "%s (%s)" % (" ".join(JOURNAL), "; ".join(why)), None


# The journal's kernel entries of this boot, one JSON object a line.
JOURNAL = ["journalctl", "-k", "-b", "--no-pager", "-o", "json"]
# A journal read by a user outside adm/systemd-journal exits 0 with only
# that user's own lines (none of the kernel's) and says so on stderr.
JOURNAL_HINT = "not seeing messages from other users and the system"


def journal_log(argv):
    """A journal's kernel entries (journalctl argv) as records (klog.Journal),
    streamed: (their kmsg.summarize(), None), or (None, why what it read
    cannot be trusted as the whole kernel log: a failure, an empty answer,
    or the journal's own hint that it shows only part)."""
    j = klog.Journal(argv)
    records = klog.Records(j.records())
    s = kmsg.summarize(records)
    cmd = j.argv[0]
    if j.why:
        return None, j.why
    first = (j.err.strip().split("\n") or [""])[0][:120]
    if j.timed_out:
        return None, "%s: timed out after %d s" % (cmd, j.timeout)
    if j.rc != 0 and not j.cut:
        return None, "%s: exit %d%s" % (cmd, j.rc, ": " + first if first else "")
    if JOURNAL_HINT in j.err:
        return None, "%s: access-limited (%s; the groups adm and systemd-journal see all)" % (cmd, JOURNAL_HINT)
    if not records.count:
        return None, "%s: no entries" % cmd
    return s, None


@contextlib.contextmanager
def scratch(name):
    """A path in a private temporary folder, removed after: the engine
    refuses an existing output, and no other user can place a name in it."""
    tmp = tempfile.mkdtemp(prefix="health.")
    out = os.path.join(tmp, name)
    try:
        yield out
    finally:
        if os.path.exists(out):
            os.unlink(out)
        os.rmdir(tmp)


def engine(args):
    """Runs bench/clockbench with args, JSON to a temporary file, read by
    the one reader; returns (Measurement, None) or (None, why)."""
    binary = os.path.join(cbhost.TOP, "bench", "clockbench")
    if not os.access(binary, os.X_OK):
        return None, "%s not built (run make)" % binary
    with scratch("probe.json") as out:
        try:
            p = subprocess.run([binary] + args + ["--quiet", "--format", "json", "--output", out],
                               capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                return None, "clockbench failed: %s" % (p.stderr.strip().splitlines() or ["?"])[-1]
            return load.load_host(out), None
        except (InputError, OSError, subprocess.TimeoutExpired) as e:
            return None, "clockbench: %s" % e


def tsc_check(skip):
    """(the TSC check, its Measurement (which carries the path probe), why not)."""
    if skip:
        return None, None, "skipped (--no-tsc-check)"
    m, why = engine(["--no-cost", "--check", "tsc"])
    if m is None:
        return None, None, why
    t = (m.doc.get("checks") or {}).get("tsc")
    if not isinstance(t, dict):
        return None, m, "clockbench wrote no TSC check"
    return t, m, None


def read_path(m, why):
    """Which path CLOCK_MONOTONIC reads take, from a path probe: 'user',
    'syscall', or None, and a note saying where it came from or why not."""
    if m is None:
        return None, "no path probe: %s" % why
    p = m.probe_path
    if p is None:
        reason = (m.doc.get("probe") or {}).get("reason") if isinstance(m.doc.get("probe"), dict) else None
        return None, "no path probe in %s%s" % (m.path, ": %s" % reason if reason else "")
    return p, "clockbench's path probe"


def vm_master_clock(seconds, log=None, log_why=None):
    """The KVM VMs running now (cbhost.heal's one finder) and each one's
    state by heal's one judge from every record there is (heal.survey: the
    kernel's switch records against its start, heal's own records, the
    watch's textfile, libvirt's state, KVM's events traced for `seconds`
    where tracing works); per VM its counts, name, state, evidence and what
    to do.  log: this boot's kmsg.summarize() (None: not read, log_why)."""
    vms = [str(p) for p in heal.kvm_pids()]
    if not vms:
        return {"vms": [], "observed": None, "reason": "no KVM processes whose files this user can see"}
    lines, reason = [], None
    if seconds <= 0:
        reason = "KVM's events not traced (--trace-seconds 0)"
    else:
        lines, reason = trace_kvm(seconds)
    found, warnings = heal.survey(lines, log, watch_file=os.path.join(watch.DEFAULT_DIR, watch.FILE), log_why=log_why)
    per = {}
    for vm in found:
        s = kvmtrace.summarize(lines, vm.pid)
        life, sb = s["life"], s["life"]["stable_bit"]
        what, advice = vm.verdict()
        per[str(vm.pid)] = {
            "events": sum(life["events"].values()), "master_clock": life["master_clock"]["last"],
            "hostclock": life["master_clock"]["hostclock"], "stable_bit": load.stable_all(sb["with"], sb["without"]),
            "stable_with": sb["with"], "stable_without": sb["without"], "complete": s["complete"] if lines else None,
            "lost": (s.get("completeness") or {}).get("lost"), "name": vm.name, "name_from": vm.name_from,
            "last": vm.state, "state": vm.state, "evidence": vm.evidence, "what": what, "advice": advice,
            "booted_off_tsc": vm.booted_off}
    return {"vms": vms, "observed": per, "reason": reason, "warnings": warnings,
            "lost_count": sum(1 for v in found if v.state == "lost")}


def trace_kvm(seconds):
    """KVM's clock events of this host for `seconds`, in an instance of
    clockbench's own: (lines, None), or ([], why not)."""
    ident = os.getpid()
    try:
        kvmtrace.start(ident)
    except (kvmtrace.Unavailable, kvmtrace.TraceError) as e:
        return [], "KVM's events not traced: %s" % e
    with scratch("kvm.trace") as out:
        try:
            try:
                time.sleep(seconds)
            finally:
                kvmtrace.stop(ident, out)
            return list(kvmtrace.read_lines(out)), None  # read before the file goes (a few seconds of events)
        except (kvmtrace.TraceError, OSError) as e:
            return [], "KVM's events not traced: %s" % e



PARAMS_DIR = "/sys/module/clocksource/parameters"


def ranges_count(text):
    """How many numbers a kernel range list ("0-3,6,8-9") names; None if
    it is not one."""
    n = 0
    for part in text.strip().split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            return None
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo or hi - lo > 1 << 20:
            return None
        n += hi - lo + 1
    return n


def small_int(text):
    """A sysfs number ("3\\n", "-1"), else the text cut."""
    t = text.strip()
    return int(t) if re.fullmatch(r"-?\d{1,18}", t) else cut(t, 40)


def module_params(d):
    """The clocksource module's parameters: {name: value}, at most 32
    regular files; None when the folder is not there."""
    try:
        names = sorted(os.listdir(d))[:32]
    except OSError:
        return None
    out = {}
    for name in names:
        if not re.fullmatch(r"[a-z0-9_]{1,64}", name):
            continue
        v = read(os.path.join(d, name))
        if not isinstance(v, Exception):
            out[name] = small_int(v)
    return out


def kconfig_value(path, name):
    """CONFIG_name=N of a kernel config, an int, or None."""
    t = read(path)
    if isinstance(t, Exception):
        return None
    m = re.search(r"^CONFIG_%s=(\d{1,9})$" % re.escape(name), t, re.M)
    return int(m.group(1)) if m else None


# The JSON types of a rules object's fields (kernels.py's rules_for()); a
# recorded --rules file is held to them before anything reads it.
_NUM = (int, float)
TYPE_TEXT = {list: "a list", dict: "an object", _NUM: "a number"}
RULE_TYPES = {"id": str, "cite": str, "interval_s": _NUM, "readout_limit": str, "readout_limit_ns": int,
              "wd_wd_skip": str, "max_skew_us_default": int, "max_skew_us_range": list, "retries": dict,
              "all_slow": str, "freq_check": dict, "unwatched": list, "varies": list, "commits": list,
              "read_at": str, "tree": str, "tag": str, "tree_commit": str, "exact": bool, "skew_margin": str}
UNWATCHED_TYPES = {"id": str, "cmdline": str, "effect": str, "where": str, "cpu_flags": list, "count": str,
                   "max": int, "overridden_by": str}


def rules_shape(doc):
    """Why doc is not a rules object of the table's shape, or None: an
    object with id and unwatched (a list of objects), each field of
    RULE_TYPES of its type or null (id and unwatched never null)."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    for k, want in RULE_TYPES.items():
        v = doc.get(k)
        if v is None and k not in ("id", "unwatched"):
            continue
        if not isinstance(v, want) or isinstance(v, bool) and want is not bool:
            return "%s: expected %s, got %s" % (k, TYPE_TEXT.get(want, want.__name__), cut(v, 40))
    if len(doc["unwatched"]) > 64:
        return "unwatched: more than 64 rules"
    for i, x in enumerate(doc["unwatched"]):
        if not isinstance(x, dict):
            return "unwatched[%d]: expected an object" % i
        for k, want in UNWATCHED_TYPES.items():
            if x.get(k) is not None and (not isinstance(x[k], want) or isinstance(x[k], bool)):
                return "unwatched[%d].%s: expected %s" % (i, k, TYPE_TEXT.get(want, want.__name__))
        if not all(isinstance(f, str) for f in x.get("cpu_flags") or []):
            return "unwatched[%d].cpu_flags: expected names" % i
    r = doc.get("retries") or {}
    if r.get("fixed_attempts") is not None and (not isinstance(r["fixed_attempts"], int) or r["fixed_attempts"] < 1):
        return "retries.fixed_attempts: expected a count"
    return None


def kernel_rules(release, version, rules_file):
    """The watchdog's rules for a kernel: (rules, None) or (None, why).
    From the table, contract/cbcontract/kernels.py (rules_for()), or
    --rules FILE: a JSON object of the same shape (a kernel the table does
    not have yet, and tests)."""
    if rules_file:
        try:
            doc = load.load_json(rules_file)
        except InputError as e:
            return None, str(e)
        why = rules_shape(doc)
        if why:
            return None, "%s: not a rules object (kernels.py's rules_for() shape): %s" % (rules_file, why)
        return doc, None
    if not release:
        return None, "the kernel release is not known"
    r = kernels.rules_for(release, version)
    if r is None:
        return None, "kernel %s: %s" % (cut(release), kernels.why_unknown(release, version) or "not in the table")
    return r, None



def packages(cpuinfo):
    """Distinct 'physical id's of /proc/cpuinfo (CPU packages), or None."""
    if not isinstance(cpuinfo, str):
        return None
    ids = set(re.findall(r"^physical id\s*:\s*(\d+)\s*$", cpuinfo, re.M))
    return len(ids) or None



def check_readout(doc, path):
    """The watchdog_readout object of an engine document, or why not."""
    r = doc.get("watchdog_readout") if isinstance(doc, dict) else None
    if not isinstance(r, dict):
        return None, "%s: no watchdog_readout object (clockbench --check watchdog writes it)" % path
    for k in ("samples", "over_limit", "limit_ns"):
        v = r.get(k)
        if r.get("unavailable") is None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            return None, "%s: watchdog_readout.%s: %s, expected a count" % (path, k, cut(v))
    if r.get("unavailable") is not None and not isinstance(r["unavailable"], str):
        return None, "%s: watchdog_readout.unavailable: expected a reason or null" % path
    if r.get("unavailable") is None:
        if r["over_limit"] > r["samples"]:
            return None, "%s: watchdog_readout.over_limit %d over its %d samples" % (path, r["over_limit"], r["samples"])
        if r["limit_ns"] < 1:
            return None, "%s: watchdog_readout.limit_ns: expected a limit of at least 1 ns" % path
        runs = r.get("runs_over_limit")
        if runs is not None and (not isinstance(runs, dict) or len(runs) > 4096 or not all(
                isinstance(k, str) and k.isdigit() and isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= r["samples"]
                for k, v in runs.items() if k != "longest")):
            return None, "%s: watchdog_readout.runs_over_limit: expected counts of runs (\"j\": n, n <= samples)" % path
        if r.get("ns") is not None and not (isinstance(r["ns"], dict) and all(
                isinstance(v, (int, float)) and not isinstance(v, bool) or v is None for v in r["ns"].values())):
            return None, "%s: watchdog_readout.ns: expected an object of figures or null" % path
    return r, None


def readout(a, recorded, limit_ns):
    """(readout, source, why not): --readout FILE, else the engine's check
    for --watchdog-seconds (never when judging recorded files)."""
    if a.readout:
        try:
            doc = load.load_json(a.readout)
        except InputError as e:
            return None, a.readout, str(e)
        r, why = check_readout(doc, a.readout)
        return r, a.readout, why
    if recorded:
        return None, None, "judging recorded files: give --readout FILE"
    if a.watchdog_seconds <= 0:
        return None, None, "not measured (--watchdog-seconds 0)"
    binary = os.path.join(cbhost.TOP, "bench", "clockbench")
    if not os.access(binary, os.X_OK):
        return None, None, "%s not built (run make)" % binary
    src = "clockbench --check watchdog"
    with scratch("watchdog.json") as out:
        argv = [binary, "--no-cost", "--check", "watchdog", "--duration", "%gs" % a.watchdog_seconds,
                "--quiet", "--format", "json", "--output", out]
        if isinstance(limit_ns, int) and 1 <= limit_ns <= 10 ** 9:
            argv[4:4] = ["--watchdog-limit", str(limit_ns)]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=a.watchdog_seconds + 60)
            if os.path.exists(out):
                r, why = check_readout(load.load_json(out), src)
                return r, src, why
            return None, src, "%s: exit %d: %s" % (src, p.returncode, cut((p.stderr.strip().splitlines()
                                                                            or ["no message"])[-1], 160))
        except InputError as e:
            return None, src, str(e)
        except (OSError, subprocess.TimeoutExpired) as e:
            return None, src, "clockbench: %s" % e



BOOTS_MAX = 100           # boots read from the journal, newest first
BOOT_LOG_MAX = 16 << 20   # bytes of the journal's list of boots


def _run_bounded(argv, timeout=20):
    """A command's stdout, at most BOOT_LOG_MAX bytes (read no further: the
    command is killed), and why not."""
    import threading
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    except OSError as e:
        return None, "%s: %s" % (argv[0], e.strerror)
    timer = threading.Timer(timeout, p.kill)
    timer.start()
    try:
        out = p.stdout.read(BOOT_LOG_MAX)
        if p.stdout.read(1):
            p.kill()
        p.stdout.close()
        rc = p.wait()
    finally:
        timer.cancel()
    if rc != 0 and rc != -9:
        return None, "%s: exit %d" % (" ".join(argv[:3]), rc)
    if rc == -9 and len(out) < BOOT_LOG_MAX:
        return None, "%s: timed out after %d s" % (" ".join(argv[:3]), timeout)
    return out.decode("utf-8", "replace"), None


# What the report keeps of each boot's log (kmsg.summarize()), in order; a few lines of each list.
BOOT_KEYS = ("tsc", "why", "reason", "at_s", "line", "cycles", "verdict", "tests", "near_misses", "near_miss_lines",
             "format", "consequences", "unsure", "warnings")
CUT_TO_3 = ("near_miss_lines", "consequences")


def boots(a, recorded):
    """The boot history: per boot, kept or lost (when, why) and near
    misses, from --boots DIR (one recorded kernel log per boot, in name
    order) or the journal's boots."""
    res = {"source": None, "reason": None, "summary": None, "boots": []}
    logs = []
    if a.boots:
        res["source"] = a.boots
        try:
            names = sorted(n for n in os.listdir(a.boots) if not n.startswith("."))
        except OSError as e:
            res["reason"] = "%s: %s" % (a.boots, e.strerror)
            return res
        for n in names[:1000]:
            # Each within the one budget of every recorded log (paste.BUDGET).
            if paste.BUDGET.spent:
                logs.append((cut(n), None, paste.BUDGET.spent))
                continue
            logs.append((cut(n),) + recorded_log(os.path.join(a.boots, n)))
    elif recorded:
        res["reason"] = "judging recorded files: give --boots DIR"
        return res
    else:
        res["source"] = "journalctl"
        out, why = _run_bounded(["journalctl", "--list-boots", "--no-pager", "-q"])
        if out is None:
            res["reason"] = why
            return res
        ids = re.findall(r"^\s*(-?\d+)\s+([0-9a-f]{32})\b", out, re.M)
        if not ids:
            res["reason"] = "journalctl --list-boots: no boots listed (a volatile journal, or no access)"
            return res
        for idx, bid in ids[-BOOTS_MAX:]:
            # The boot's kernel entries as records (klog.Journal), streamed.
            s, why = journal_log(["journalctl", "-k", "-b", bid, "--no-pager", "-q", "-o", "json"])
            if why:
                logs.append((idx, None, "%s (a user outside adm and systemd-journal sees only part of it)" % why
                             if why.endswith("no entries") else why))
                continue
            logs.append((idx, s, None))
    for name, s, why in logs:
        if s is None:
            res["boots"].append({"boot": name, "tsc": "unknown", "why": None, "reason": why})
            continue
        res["boots"].append(dict({"boot": name}, **{k: s[k][:3] if k in CUT_TO_3 else s[k] for k in BOOT_KEYS},
                                 cmdline=cut(s["cmdline"], 400) if s["cmdline"] else None))
    full = [b for b in res["boots"] if "near_misses" in b]
    res["summary"] = kmsg.boots_line(full) if full else None
    if len(full) < len(res["boots"]):
        res["summary"] = (res["summary"] + "; " if res["summary"] else "") + "%d boots not read" % (
            len(res["boots"]) - len(full))
    return res



LIVE = {"cs_dir": names.CS_SYSFS, "cpuinfo": "/proc/cpuinfo",
        "cmdline": "/proc/cmdline", "osrelease": "/proc/sys/kernel/osrelease",
        "kversion": "/proc/sys/kernel/version", "nodes": "/sys/devices/system/node/online",
        "cpus_online": "/sys/devices/system/cpu/online", "cs_params": PARAMS_DIR}
# The options that judge recorded files: with any of them, nothing of this
# machine is read unless its own option names it.
RECORDED = ("log", "cmdline", "cs_dir", "cpuinfo", "probe", "osrelease", "kversion", "nodes", "cpus_online",
            "cs_params", "kconfig", "rules", "boots")


def sources(a):
    """Each input's path, and where it comes from ('this machine', or
    'recorded: PATH'), by the rule above; an input of neither is None."""
    recorded = any(getattr(a, k) for k in RECORDED)
    paths, said = {}, {}
    for k, live in LIVE.items():
        given = getattr(a, k)
        paths[k] = given or (None if recorded else live)
        said[k] = "recorded: %s" % cut(given, 80) if given else "this machine" if not recorded else "not given"
    return recorded, paths, said


def hypervisor_facts(recorded, flags, probe_m, log_summary_hv):
    """health.machine() on what was read: the CPUID bit (cpuinfo), CPUID's
    vendor (the engine's context, its probe), the kernel's line, and on
    this machine /sys/hypervisor/type and DMI."""
    sys_hv = dmi = None
    if not recorded:
        t = read("/sys/hypervisor/type")
        sys_hv = None if isinstance(t, Exception) else cut(t.strip(), 20) or None
        parts = [read("/sys/class/dmi/id/%s" % n) for n in ("sys_vendor", "product_name")]
        dmi = " ".join(cut(x.strip(), 40) for x in parts if not isinstance(x, Exception)) or None
    vendor = probe_m.context.get("hypervisor") if probe_m is not None else None
    return health.machine(cpu_flag=flags.get("hypervisor") if flags else None,
                          cpuid_vendor=vendor if isinstance(vendor, str) else None,
                          log_hypervisor=log_summary_hv, sys_hypervisor=sys_hv, dmi=dmi,
                          sources={"cpu_flag": "cpuinfo", "cpuid_vendor": "the engine's CPUID read",
                                   "log_hypervisor": "the kernel log", "sys_hypervisor": "this machine",
                                   "dmi": "this machine"})



def kernel_facts(a, recorded, could_not):
    """The kernel's figures the watchdog section works from: its release
    and version, NUMA nodes, online CPUs, the clocksource module's
    parameters, the config's WATCHDOG_MAX_SKEW and the rules of its era
    (each None when not read; a recorded input that fails is said in
    could_not)."""
    def given(path):  # a recorded input not given is not read (None), and not missed
        return read(path) if path else Unread("not given")
    rel = given(a.osrelease)
    release = None
    if isinstance(rel, Exception):
        if a.osrelease:
            could_not.append("kernel release: %s: %s" % (a.osrelease, rel.strerror))
    elif re.fullmatch(r"[0-9][\w.+~-]{0,79}", rel.strip()):
        release = rel.strip()
    else:
        could_not.append("kernel release: %s: not a kernel release" % a.osrelease)
    ver = given(a.kversion)
    version = ver.strip() if not isinstance(ver, Exception) and re.fullmatch(r"#[\x20-\x7e]{1,200}", ver.strip()) else None
    node_text = given(a.nodes)
    nodes = None if isinstance(node_text, Exception) else ranges_count(node_text)
    if nodes is None and a.nodes:
        could_not.append("NUMA nodes: %s: %s" % (a.nodes, node_text.strerror if isinstance(node_text, Exception)
                                                 else "not a node list"))
    on = given(a.cpus_online)
    online = None if isinstance(on, Exception) else ranges_count(on)
    params = module_params(a.cs_params) if a.cs_params else None
    kc_path = a.kconfig or ("/boot/config-%s" % release if release and not recorded else None)
    max_skew = kconfig_value(kc_path, "CLOCKSOURCE_WATCHDOG_MAX_SKEW_US") if kc_path else None
    rules, why = kernel_rules(release, version, a.rules)
    return {"release": release, "version": version, "nodes": nodes, "online": online, "params": params,
            "kconfig": kc_path, "max_skew": max_skew, "rules": rules, "rules_why": why}


class Fail(Exception):
    """A failure the command reports under its name, exit 1."""


def clocksources(cs_dir, could_not):
    """(current, available) of a clocksource folder (None, [] when none is
    read); Fail when its files cannot be read.  Only what parses is quoted:
    clocksource names (a file holding anything else is not shown)."""
    if not cs_dir:
        return None, []
    cur_t = read(os.path.join(cs_dir, "current_clocksource"))
    avail_t = read(os.path.join(cs_dir, "available_clocksource"))
    if isinstance(cur_t, Exception) or isinstance(avail_t, Exception):
        raise Fail("cannot read %s: no clocksource sysfs" % cs_dir)
    cur = cur_t.strip() if NAME.fullmatch(cur_t.strip()) else None
    if cur is None:
        could_not.append("%s/current_clocksource: not a clocksource name" % cut(cs_dir, 80))
    return cur, [x for x in avail_t.split()[:32] if NAME.fullmatch(x)]


TSC_FLAGS = ("tsc", "constant_tsc", "nonstop_tsc", "tsc_known_freq", "tsc_reliable", "tsc_adjust", "rdtscp",
             "hypervisor")


def cpu(path, could_not):
    """(the CPU list's text, or an Unread, and its TSC flags: {} when not read)."""
    cpuinfo = read(path) if path else Unread("not given")
    if isinstance(cpuinfo, Exception):
        if path:
            could_not.append("%s: %s" % (path, cpuinfo.strerror))
        return cpuinfo, {}
    m = re.search(r"^flags\s*:\s*(.*)$", cpuinfo, re.M)
    words = set(m.group(1).split()) if m else set()
    return cpuinfo, {f: f in words for f in TSC_FLAGS}


def boot_params(a, recorded, said, could_not):
    """(the kernel command line, where it came from or None, the kernel log's
    summary or None, its source, why it was not read): --cmdline, else the
    recorded log's own 'Kernel command line:' line."""
    cmdline = read(a.cmdline) if a.cmdline else ""
    if isinstance(cmdline, Exception):
        could_not.append("kernel command line: %s" % cmdline.strerror)
        cmdline = ""
    if a.log or a.live_log or not recorded:
        log, log_source, log_problem = kernel_log(a.log)
    else:
        log, log_source, log_problem = None, None, "judging recorded files: give --log FILE"
    if log_problem and (a.log or a.live_log or not recorded):
        could_not.append(log_problem)
    cmdline_from = said["cmdline"] if a.cmdline else None
    if a.log and log is not None and log.get("cmdline"):
        # The recorded boot's own parameters, where no --cmdline names them.
        if not a.cmdline:
            cmdline, cmdline_from = log["cmdline"], "the recorded log's 'Kernel command line:'"
        elif kmsg.cmdline_options(log["cmdline"]) != kmsg.cmdline_options(cmdline):
            could_not.append("the recorded log's own 'Kernel command line:' differs from --cmdline's (%s): "
                             "--cmdline's was used" % cut(log["cmdline"], 160))
    return cmdline, cmdline_from, log, log_source, log_problem


def probe(a, recorded, tsc_m):
    """The path probe's Measurement and why not: --probe FILE, the TSC
    check's own, else the engine's --probe (never when judging recorded files)."""
    if a.probe:
        try:
            return load.load_host(a.probe), None
        except InputError as e:
            return None, str(e)
    if recorded:
        return None, "judging recorded files: give --probe FILE"
    if tsc_m is not None:
        return tsc_m, None
    return engine(["--probe"])


def gather(a):
    """Every fact the report is made of, read once in the order the report
    was always read in (its could-not-read lines keep that order); a's
    inputs are set to the paths read (sources())."""
    recorded, paths, said = sources(a)
    for k, v in paths.items():
        setattr(a, k, v)
    NOFOLLOW[0] = recorded and os.geteuid() == 0
    could_not = []
    cur, avail = clocksources(a.cs_dir, could_not)
    cpuinfo, flags = cpu(a.cpuinfo, could_not)
    cmdline, cmdline_from, log, log_source, log_problem = boot_params(a, recorded, said, could_not)
    tsc, tsc_m, tsc_problem = tsc_check(a.no_tsc_check or recorded)
    if recorded and not a.no_tsc_check:
        tsc_problem = "skipped: judging recorded files, not this host"
    if tsc_problem and not tsc_problem.startswith("skipped"):
        could_not.append("TSC check: " + tsc_problem)
    probe_m, probe_why = probe(a, recorded, tsc_m)
    path, path_note = read_path(probe_m, probe_why)
    summary = log or kmsg.summarize([])
    if recorded:
        vms = {"vms": [], "observed": None, "reason": "judging recorded files: this host's VMs not looked at"}
    else:
        vms = vm_master_clock(a.trace_seconds, log, log_problem)
    return {"recorded": recorded, "said": said, "could_not": could_not, "cur": cur, "avail": avail,
            "cpuinfo": None if isinstance(cpuinfo, Exception) else cpuinfo, "flags": flags, "cmdline": cmdline,
            "cmdline_from": cmdline_from, "log": log, "log_source": log_source, "log_problem": log_problem,
            "tsc": tsc, "tsc_problem": tsc_problem, "path": path, "path_note": path_note,
            "machine": hypervisor_facts(recorded, flags, probe_m, summary["hypervisor"]), "vms": vms,
            "kernel": kernel_facts(a, recorded, could_not), "boots": boots(a, recorded)}
