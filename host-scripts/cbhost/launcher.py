"""launcher.py: the guest launcher (host-scripts/bench-guest): settings, the KVM probe, one guest run, its files.

Every setting is an option whose default is the environment variable of the
same name (KERNEL, ACCEL, VCPUS...), checked once here.  A run boots the
guest initramfs under QEMU (or libvirt), reads its framed result, and writes
guest-<cs>-<N>vcpu.json with its console log (and, with --trace, the KVM
trace files) into a run folder, each once (cbcontract.runfolder).  The last
line on stdout is the result's path.  Exit status: 0 written, 1 failure
(one line naming the console log), 2 usage.
"""
import argparse
import datetime
import gzip
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap

import cbhost
from cbcontract import runfolder
from cbcontract.util import InputError
from . import duration, frames, kvmtrace, qemu
from .qemu import RunError

PROG = "bench-guest"
CS_DIR = "/sys/devices/system/clocksource/clocksource0/"
EXIT_CODES_H = os.path.join(cbhost.TOP, "guest-init", "exit-codes.h")
GX_RE = re.compile(r'^\s*GX\((\w+),\s*(\d+),\s*(\d+),\s*"([^"]*)"\)')
RAW_GZIP_OVER = 1 << 20  # a raw trace larger than this is kept gzipped


class Usage(Exception):
    """A bad setting: one line, exit 2."""


def warn(msg):
    print("%s: warning: %s" % (PROG, msg), file=sys.stderr)


def note(msg):
    print("%s: %s" % (PROG, msg), file=sys.stderr)


def guest_exits(path=EXIT_CODES_H):
    """{QEMU status: (name, code, meaning)} from the GX(NAME, CODE, STATUS,
    "meaning") lines of guest-init/exit-codes.h, the one list."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                m = GX_RE.match(line)
                if m:
                    out[int(m.group(3))] = (m.group(1), int(m.group(2)), m.group(4))
    except OSError:
        pass
    return out


def explain(status):
    """What a QEMU exit status means, in words; None for an unknown one."""
    if status in (124, 137):
        return "guest timed out" if status == 124 else "guest timed out and was killed"
    gx = guest_exits().get(status)
    return gx[2] if gx else None


# ---- settings ---------------------------------------------------------------

def _env(name, default=None):
    v = os.environ.get(name)
    return default if v is None or v == "" else v


class Parser(argparse.ArgumentParser):
    def error(self, message):
        raise Usage("%s (see --help)" % message)


class Help(argparse.RawDescriptionHelpFormatter):
    """--help as help2man reads it (packaging/packaging.mk): "Usage:", "or:"."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "Usage: ")


def parser():
    online = os.cpu_count() or 1
    p = Parser(prog=PROG, formatter_class=Help,
               usage="%(prog)s [--results DIR] [--run-id ID] [OPTION]...\n"
                     "   or: %(prog)s --run-dir DIR [OPTION]...\n"
                     "   or: %(prog)s --check-only [OPTION]...\n"
                     "   or: %(prog)s --probe-only [OPTION]...",
               description="Boot the guest initramfs (make guest-initramfs) on a host kernel under QEMU,\n"
                           "with clockbench as PID 1, and write guest-<clocksource>-<N>vcpu.json (never\n"
                           "overwriting) with the console log beside it; the last line on stdout is its\n"
                           "path.")
    p._optionals.title = "Options"
    g = p.add_argument_group("Run folder and mode")
    g.add_argument("--results", metavar="DIR", help="results folder for a new run folder [results; installed, as "
                                                    "root: /var/lib/clockbench/results]")
    g.add_argument("--run-id", metavar="ID", help="the new run folder's name [<UTC time>-<host>]; it must not exist")
    g.add_argument("--run-dir", metavar="DIR", help="an existing run folder to write into (compare's)")
    g.add_argument("--clocksource", metavar="CS", help="the host clocksource label of this run [the kernel's "
                                                       "current one]")
    g.add_argument("--trace", action="store_true",
                   help="trace KVM's clock events (kvm-trace-<cs>-<N>vcpu.json beside the result)")
    g.add_argument("--probe-only", action="store_true", help="print the accelerator ACCEL=auto would choose, and exit")
    g.add_argument("--check-only", action="store_true",
                   help="check every setting as a run would (the kernel, initramfs and QEMU, the accelerator, the "
                        "engine's options by the engine's own dry run, the results folder) and exit: 0 and no "
                        "output, or one line; nothing is booted or written")
    g.add_argument("--quiet", action="store_true", help="print only the result's path")
    s = p.add_argument_group("Settings")
    names = []

    def opt(name, default, text):
        names.append(name)
        shown = "" if text.endswith("]") else " [%s]" % ("-" if default is None else default)
        s.add_argument("--" + name.lower().replace("_", "-"), dest=name, metavar=name,
                       default=_env(name, default), help=text + shown)
    # Defaults of this machine or install, shown in words (the man pages are made from --help).
    opt("KERNEL", "/boot/vmlinuz-" + os.uname().release, "kernel image [/boot/vmlinuz-RELEASE of the running kernel]")
    opt("INITRAMFS", os.path.join(cbhost.TOP, "build", "guest", "initramfs.cpio"),
        "the guest initramfs [the suite's own, made by make guest-initramfs; installed: "
        "/usr/lib/clockbench/build/guest/initramfs.cpio]")
    opt("QEMU", "qemu-system-x86_64", "QEMU binary")
    opt("BACKEND", "qemu", "qemu|libvirt")
    opt("ACCEL", "auto", "auto|kvm|tcg; auto probes KVM with a time-limited boot, else TCG")
    opt("PROBE_TIMEOUT", "8", "how long the KVM probe may take: whole seconds, or with a unit (s, m: 30s, 1m)")
    opt("VCPUS", str(min(online, 4)), "vCPUs [min(online CPUs, 4)]")
    opt("MEM", "256", "guest memory, MiB")
    opt("MACHINE", "q35", "q35|pc|microvm (microvm: acpi=off, results on a 2nd isa-serial)")
    opt("CPU", None, "QEMU CPU model, e.g. host, host,+invtsc, host,-kvmclock, max [host under KVM, max under TCG]")
    opt("HPET", "default", "on|off|default: QEMU's HPET")
    opt("PIN", "1", "1: pin vCPU n to host CPU n; 0: leave them floating")
    opt("TIMEOUT", "300", "how long the whole guest run may take: whole seconds, or with a unit (s, m, h: 90s, "
        "5m, 1h; at most 24h)")
    opt("APPEND", "", "more kernel parameters, e.g. tsc=unstable; its clockbench.* words for the engine (threads, "
        "duration, ...) override those settings and are checked with them")
    for name, what in (("THREADS", "[1-VCPUS]"), ("DURATION", "(seconds, or with a unit: us, ms, s, m, h: 500ms, "
                                                                "1.5s, 2m) [0.5]"), ("CLOCKS", "[all]"),
                       ("METHODS", "[all]"), ("WORKLOADS", "(tcp-stream,tcp-rr,timer, all) [none]"),
                       ("CHECK", "[all]"), ("CPUS", "[-]")):
        opt(name, None, "for the engine in the guest " + what)
    opt("COST", "1", "0|1: the engine's cost estimate")
    opt("OBSERVE", "1", "1: with --trace under TCG, boot a short KVM VM to observe KVM's clock")
    opt("OBSERVE_SECONDS", "5", "how long the observer VM runs: whole seconds, or with a unit (s, m: 10s, 1m)")
    p.epilog = "\n".join(["Environment:", "Each setting's default is the environment variable of its name (an option"]
                         + textwrap.wrap(", ".join(names) + ".", 78, initial_indent="given wins): ")
                         + ["", "Exit status:", "  0  result written (--check-only: every setting good; --probe-only: "
                            "printed)", "  1  failure (one line naming the console log)", "  2  usage, or a bad setting "
                            "(one line naming it)"])
    # tests only: skip the engine's dry run, so that a bad engine setting
    # reaches the guest's own engine (tests/guest/faults.t)
    p.add_argument("--test-skip-engine-check", action="store_true", help=argparse.SUPPRESS)
    return p


def _one_of(name, v, *choices):
    if v not in choices:
        raise Usage("%s=%s: expected one of: %s" % (name, v, " ".join(choices)))
    return v


def _int_in(name, v, lo, hi):
    if not re.fullmatch(r"[0-9]{1,6}", v or "") or not lo <= int(v) <= hi:
        raise Usage("%s=%s: expected an integer from %d to %d" % (name, v, lo, hi))
    return int(v)


def settings(argv):
    """Parses and checks argv (environment defaults); raises Usage."""
    a = parser().parse_args(argv)
    if a.run_dir is not None and (a.results is not None or a.run_id is not None):
        raise Usage("--run-dir names an existing run folder: not with --results or --run-id")
    try:
        if a.run_id is not None:
            runfolder.check_run_id(a.run_id)
        if a.clocksource is not None:
            runfolder.check_cs(a.clocksource)
    except ValueError as e:
        raise Usage(str(e))
    _one_of("BACKEND", a.BACKEND, "qemu", "libvirt")
    _one_of("ACCEL", a.ACCEL, "auto", "kvm", "tcg")
    _one_of("MACHINE", a.MACHINE, "q35", "pc", "microvm")
    _one_of("HPET", a.HPET, "on", "off", "default")
    a.PIN = int(_one_of("PIN", a.PIN, "0", "1"))
    _one_of("COST", a.COST, "0", "1")
    a.OBSERVE = int(_one_of("OBSERVE", a.OBSERVE, "0", "1"))
    a.VCPUS = _int_in("VCPUS", a.VCPUS, 1, 64)
    a.MEM = _int_in("MEM", a.MEM, 64, 65536)
    # Whole seconds: the result records the limit as an integer (launcher.timeout_s).
    a.TIMEOUT = _seconds("TIMEOUT", a.TIMEOUT, 86400)
    a.PROBE_TIMEOUT = _seconds("PROBE_TIMEOUT", a.PROBE_TIMEOUT, 600)
    a.OBSERVE_SECONDS = _seconds("OBSERVE_SECONDS", a.OBSERVE_SECONDS, 600)
    if a.MACHINE == "microvm" and a.HPET != "default":
        raise Usage("HPET=%s: microvm has no HPET; it applies to q35 and pc" % a.HPET)
    if a.MACHINE == "microvm" and a.BACKEND == "libvirt":
        raise Usage("MACHINE=microvm: BACKEND=libvirt supports q35 and pc")
    if a.CPU is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9,.+=_-]*", a.CPU):
        raise Usage("CPU=%s: expected a QEMU CPU model such as host,+invtsc" % a.CPU)
    a.params = [("cost", a.COST)]
    for name, key in (("THREADS", "threads"), ("DURATION", "duration"), ("CLOCKS", "clock"),
                      ("METHODS", "method"), ("WORKLOADS", "workload"), ("CHECK", "check"), ("CPUS", "cpus")):
        v = getattr(a, name)
        if v is None:
            continue
        if not _list_ok(v):
            raise Usage("%s=%s: expected a list such as 1,2 or monotonic,realtime" % (name, _cut(v)))
        a.params.append((key, v))
    if "\n" in a.APPEND:
        raise Usage("APPEND: one line only")
    for k, v in append_params(a):
        if not _list_ok(v):
            raise Usage("APPEND: clockbench.%s=%s: expected a list such as 1,2 or monotonic,realtime" % (k, _cut(v)))
    return a


def _list_ok(v):
    """A value /init passes to its engine: one word of letters, digits and , . _ -."""
    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9,._-]*", v) is not None


def _seconds(name, v, hi):
    """A launcher time limit: whole seconds from 1 to hi, units allowed."""
    try:
        return duration.seconds(name, v, 1, hi, whole=True,
                                why_whole="the result records it as an integer, launcher.timeout_s")
    except duration.DurationError as e:
        raise Usage(str(e))


def check_tools(a):
    """A missing kernel, initramfs or QEMU is a bad setting (Usage, naming
    the fix); a missing timeout or virsh a RunError."""
    if not os.path.exists(a.KERNEL):
        found = " ".join(sorted(os.path.join("/boot", n) for n in _listdir("/boot") if n.startswith("vmlinuz-")))
        raise Usage("KERNEL=%s: no such file: name one with KERNEL=%s, e.g. the Debian kernel (apt-get install "
                    "linux-image-amd64 gives /boot/vmlinuz-<version>-amd64)"
                    % (_cut(a.KERNEL), " (found: %s)" % found if found else ""))
    if not os.path.isfile(a.KERNEL) or not os.access(a.KERNEL, os.R_OK):
        raise Usage("KERNEL=%s: not a readable file: run as root, or copy it somewhere readable and name it "
                    "with KERNEL=" % _cut(a.KERNEL))
    if not os.path.isfile(a.INITRAMFS) or not os.access(a.INITRAMFS, os.R_OK):
        raise Usage("INITRAMFS=%s: missing or unreadable: run 'make guest-initramfs'" % _cut(a.INITRAMFS))
    if not shutil.which("timeout"):
        raise RunError("timeout not found (Debian: coreutils)")
    if not shutil.which(a.QEMU):
        raise Usage("QEMU=%s: not found: name one with QEMU=, or install it (Debian: apt-get install "
                    "qemu-system-x86)" % _cut(a.QEMU))
    if a.BACKEND == "libvirt" and not shutil.which("virsh"):
        raise RunError("virsh not found (Debian: apt-get install libvirt-daemon-system libvirt-clients)")


def _cut(v, n=80):
    """A value quoted in an error: one line, at most n characters."""
    v = v.replace("\n", "\\n")
    return v if len(v) <= n else v[:n] + "..."


def _listdir(d):
    try:
        return os.listdir(d)
    except OSError:
        return []


# The engine options /init passes for each clockbench.KEY, with its
# defaults (guest-init/init.c, run_engine): what the guest's engine will be
# given, for the engine's own --dry-run to judge.
GUEST_ENGINE = (("threads", "--threads", None), ("duration", "--duration", "0.5"), ("check", "--check", "all"),
                ("clock", "--clock", None), ("method", "--method", None), ("cpus", "--cpus", None),
                ("workload", "--workload", None))
ENGINE_KEYS = {key for key, _, _ in GUEST_ENGINE} | {"cost"}


def append_params(a):
    """APPEND's clockbench.KEY=VALUE words for the engine, in order: /init
    reads the whole command line, the last word of a key winning, and
    APPEND comes last (kernel_append), so these override the settings."""
    out = []
    for w in a.APPEND.split():
        k, eq, v = w.partition("=")
        if k.startswith("clockbench.") and k[len("clockbench."):] in ENGINE_KEYS and eq:
            out.append((k[len("clockbench."):], v))
    return out


def guest_engine_argv(a):
    """The engine's options in the guest, as /init will build them from
    the settings and APPEND's clockbench.* words."""
    p = dict(a.params + append_params(a))
    argv = []
    for key, opt, default in GUEST_ENGINE:
        v = p.get(key, "1-%d" % a.VCPUS if key == "threads" else default)
        if v is not None:
            argv += [opt, v]
    if p.get("cost") == "0":
        argv.append("--no-cost")
    return argv


def engine_binary():
    return os.environ.get("CLOCKBENCH") or os.path.join(cbhost.TOP, "bench", "clockbench")


def check_engine(a):
    """The guest engine's settings (APPEND's clockbench.* words included),
    judged by the engine itself (clockbench --dry-run, the one owner of its
    option rules) on the CPUs the guest will have: vCPU n is CPU n there,
    so --dry-run-cpus VCPUS, whatever CPUs this process may use.  Usage
    with the engine's line; RunError when it cannot be asked.  A bad cost
    value or an unknown clockbench.* word is /init's to refuse (its stage
    params), not the engine's."""
    if a.test_skip_engine_check:
        return
    binary = engine_binary()
    if not os.access(binary, os.X_OK):
        raise RunError("%s not built (it checks the guest engine's settings): run make" % binary)
    argv = ["--dry-run", "--dry-run-cpus", str(a.VCPUS)] + guest_engine_argv(a)
    try:
        r = subprocess.run([binary] + argv, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, errors="replace", timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        raise RunError("%s --dry-run: %s" % (binary, e))
    line = (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[0]
    line = _cut(line[len("clockbench: "):] if line.startswith("clockbench: ") else line, 200)
    if r.returncode == 2:
        words = " ".join("clockbench.%s=%s" % kv for kv in append_params(a))
        raise Usage("the guest's engine%s: %s" % (" (APPEND: %s)" % _cut(words) if words else "", line))
    if r.returncode != 0:
        raise RunError("%s --dry-run: %s" % (binary, line))


def _writable(what, path):
    """path, or where it would be made (the nearest folder above it that
    exists), is a folder this process can write: Usage naming it."""
    p = os.path.abspath(path)
    while not os.path.lexists(p):
        p = os.path.dirname(p)
    if not os.path.isdir(p) or not os.access(p, os.W_OK | os.X_OK):
        raise Usage("%s %s: %s is not a folder this user can write" % (what, _cut(path), _cut(p)))


def check(a):
    """Every setting as a run needs it, before anything boots or is
    written: the real run and --check call this one function.  Usage (a bad
    setting) or RunError / RunFolderError."""
    check_tools(a)
    check_accel(a)
    if a.BACKEND == "libvirt":
        from . import libvirt
        libvirt.check(a)
    check_engine(a)
    if a.run_dir is None:
        _writable("results folder", a.results or runfolder.default_dirs()[0])
    elif os.path.isdir(a.run_dir):
        _writable("run folder", a.run_dir)
    check_free(a, out_names(a, label(a)))


def kvm_dev():
    return os.environ.get("KVM_DEV", "/dev/kvm")  # the tests point this elsewhere; QEMU opens /dev/kvm


def kvm_usable():
    d = kvm_dev()
    return os.path.exists(d) and os.access(d, os.R_OK | os.W_OK)


# ---- QEMU -------------------------------------------------------------------

def machine_opts(a):
    """-machine's options.  microvm boots only without ACPI here (with it,
    it hung), and /init then reboots instead of powering off."""
    opts = []
    if a.HPET != "default":
        opts.append("hpet=" + a.HPET)
    if a.MACHINE == "microvm":
        opts.append("acpi=off")
    return opts


def kernel_append(a, params):
    """The guest kernel command line: console on ttyS0, results on ttyS1,
    the clockbench.* parameters, then the user's APPEND."""
    words = ["console=ttyS0", "panic=-1", "quiet", "clockbench.channel=ttyS1"]
    if a.MACHINE == "microvm":
        words.append("reboot=t")  # /init reboots there: a triple fault is the quick way out
    words += ["clockbench.%s=%s" % kv for kv in params]
    if a.APPEND:
        words.append(a.APPEND)
    return " ".join(words)


def guest_argv(a, accel, cpu, work, params):
    return qemu.command(a.KERNEL, qemu=a.QEMU, accel=accel, cpu=cpu, vcpus=a.VCPUS, mem=a.MEM,
                        machine=a.MACHINE, machine_opts=machine_opts(a), initrd=a.INITRAMFS,
                        append=kernel_append(a, params),
                        serials=(os.path.join(work, "console.log"), os.path.join(work, "channel.out")),
                        debug_exit=True, qmp=os.path.join(work, "qmp.sock"), paused=True,
                        pidfile=os.path.join(work, "qemu.pid"))


def probe_kvm(a):
    """Boots the guest once under KVM with clockbench.probe=1 within
    PROBE_TIMEOUT: (True, ms to /init) or (False, why not)."""
    work = tempfile.mkdtemp(prefix="clockbench-probe.")
    try:
        b = qemu.boot(guest_argv(a, "kvm", a.CPU or "host", work, [("probe", "1")]), work, a.PROBE_TIMEOUT, False)
    except RunError as e:
        return False, str(e)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if b["hello_ms"] is not None:
        return True, b["hello_ms"]
    if b["status"] in (124, 137):
        return False, "no guest /init within %ss under -accel kvm" % a.PROBE_TIMEOUT
    return False, "guest did not reach /init under -accel kvm (QEMU status %s)" % b["status"]


def check_accel(a):
    """The accelerator as set: ACCEL=kvm needs a usable KVM device, the host
    CPU model needs KVM.  Usage."""
    kvm = kvm_dev()
    if a.ACCEL == "kvm" and not os.path.exists(kvm):
        raise Usage("ACCEL=kvm: %s: no such device (load kvm_intel or kvm_amd, or use ACCEL=tcg)" % kvm)
    if a.ACCEL == "kvm" and not os.access(kvm, os.R_OK | os.W_OK):
        raise Usage("ACCEL=kvm: %s: permission denied (join group kvm, or use ACCEL=tcg)" % kvm)
    if a.ACCEL == "tcg" and a.CPU and re.match(r"host(,|$)", a.CPU):
        raise Usage("CPU=%s: the host model needs KVM; under TCG use max" % a.CPU)


def choose_accel(a):
    """Sets a.accel, a.accel_note and a.cpu, after check_accel.  /dev/kvm
    alone proves nothing (a nested hypervisor may create the VM and never
    run the kernel), so auto boots the guest once under KVM and falls back
    to TCG."""
    a.accel_note = None
    kvm = kvm_dev()
    if a.ACCEL in ("tcg", "kvm"):
        a.accel = a.ACCEL
    else:
        if not os.path.exists(kvm):
            a.accel_note = "no %s" % kvm
        elif not os.access(kvm, os.R_OK | os.W_OK):
            a.accel_note = "%s: permission denied" % kvm
        else:
            good, what = probe_kvm(a)
            if good:
                note("KVM probe: guest reached /init in %d ms: using KVM" % what)
            else:
                a.accel_note = "KVM probe failed: %s" % what
        a.accel = "tcg" if a.accel_note else "kvm"
        if a.accel_note:
            # One terminal line: the whole reason is in the result
            # (launcher.accel_note).
            tail = "; using TCG: every figure EMULATED"
            room = 100 - len("%s: warning: " % PROG) - len(tail)
            why = a.accel_note if len(a.accel_note) <= room else a.accel_note[:room - 3] + "..."
            warn(why + tail)
    if a.accel == "tcg" and a.CPU and re.match(r"host(,|$)", a.CPU):
        raise RunError("CPU=%s: the host model needs KVM, and ACCEL=auto fell back to TCG: use CPU=max, or fix KVM"
                       % a.CPU)
    a.cpu = a.CPU or ("host" if a.accel == "kvm" else "max")


# ---- one run ----------------------------------------------------------------

def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def host_facts():
    return {"hostname": socket.gethostname(), "kernel": os.uname().release,
            "clocksource": read_text(CS_DIR + "current_clocksource"),
            "available_clocksource": read_text(CS_DIR + "available_clocksource"),
            "cpus_allowed": sorted(os.sched_getaffinity(0))}


def qemu_version(binary):
    try:
        out = subprocess.run([binary, "-version"], capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0].strip() if out else None
    except (OSError, subprocess.SubprocessError):
        return None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def console_panic(work):
    for line in (read_text(os.path.join(work, "console.log")) or "").splitlines():
        if "Kernel panic" in line:
            return line.strip()
    return None


def check_status(b, timeout, work):
    """Raises RunError for an exit status that means failure, with the best
    reason known (the guest's error frame first)."""
    rc = b["status"]
    if rc in (None, 0):
        return
    if rc in (124, 137):
        raise RunError("guest timed out after %ss%s" % (
            timeout, "" if b["hello_ms"] is None else " (init started at %d ms)" % b["hello_ms"]))
    meaning = explain(rc)
    if meaning:
        try:
            frames.result(frames.parse(b["data"]))
        except frames.FrameError as e:
            raise RunError("%s (QEMU status %d): %s" % (meaning, rc, e))
        raise RunError("%s (QEMU status %d)" % (meaning, rc))
    raise RunError("QEMU exited with status %d: %s" % (rc, qemu.last_line(os.path.join(work, "qemu.log"))
                                                       or "no message"))


class Tracer:
    """The run's KVM trace: one instance at a time, stopped on every path."""

    def __init__(self):
        self.ident, self.inst, self.why = os.getpid(), None, None

    def start(self):
        try:
            kvmtrace.clean()
            self.inst = kvmtrace.start(self.ident)
        except (kvmtrace.Unavailable, kvmtrace.TraceError) as e:
            self.why = str(e)
        return self.inst is not None

    def mark(self, what):
        """Writes clockbench-window-WHAT into the trace: the measuring window."""
        if self.inst:
            try:
                with open(os.path.join(self.inst, "trace_marker"), "w") as f:
                    f.write("clockbench-window-%s\n" % what)
            except OSError:
                pass

    def stop(self, out):
        if self.inst:
            self.inst = None
            kvmtrace.stop(self.ident, out)


def observe(a, work, tracer):
    """Boots a short KVM VM (the guest's kernel, no initramfs) under its own
    trace, for KVM's clock when the guest itself ran under TCG.  Returns
    (raw trace path, its pid) or (None, why not)."""
    if not tracer.start():
        return None, tracer.why
    raw, pidfile = os.path.join(work, "observe.txt"), os.path.join(work, "observe.pid")
    try:
        qemu.run_for(qemu.command(a.KERNEL, qemu=a.QEMU, accel="kvm", cpu=None, vcpus=a.VCPUS, mem=256,
                                  machine=a.MACHINE, machine_opts=machine_opts(a),
                                  append="console=ttyS0 panic=-1", pidfile=pidfile), a.OBSERVE_SECONDS)
    finally:
        tracer.stop(raw)
    return raw, qemu.read_pid(pidfile)


def place_raw(run_dir, name, src):
    """Writes a raw trace once into run_dir as name, gzipped (name.gz) when
    over RAW_GZIP_OVER, mode kvmtrace.RAW_MODE (it names every VM's
    processes on this host); returns the name written."""
    with open(src, "rb") as f:
        data = f.read()
    if len(data) > RAW_GZIP_OVER:
        name, data = name + ".gz", gzip.compress(data, 9, mtime=0)
    runfolder.write_once(os.path.join(run_dir, name), data, mode=kvmtrace.RAW_MODE)
    return name


def out_names(a, cs):
    """The names of this run's files, from the run-folder contract."""
    return {k: f(cs, a.VCPUS, a.BACKEND) for k, f in (
        ("guest", runfolder.guest_name), ("console", runfolder.console_name),
        ("trace", runfolder.kvm_trace_name), ("raw", runfolder.kvm_trace_raw_name),
        ("observe", runfolder.kvm_observe_raw_name))}


def check_free(a, names):
    """The run folder (to make, or given) and every file name this run may
    write: RunFolderError before anything boots."""
    if a.run_dir is None:
        d = os.path.join(a.results or runfolder.default_dirs()[0], a.run_id)
        if os.path.lexists(d):
            raise runfolder.RunFolderError("%s exists: a run folder is never reused; choose another RUN_ID" % d)
        return
    for key in ("guest", "console") + (("trace", "raw", "observe") if a.trace else ()):
        runfolder.free_path(a.run_dir, names[key])
        if key in ("raw", "observe"):
            runfolder.free_path(a.run_dir, names[key] + ".gz")


def label(a):
    """The host clocksource this run's files are named after."""
    return a.clocksource or read_text(CS_DIR + "current_clocksource") or "unknown"


def run(a):
    """One guest run; returns the result's path.  RunError on failure."""
    host = host_facts()
    cs = label(a)
    names = out_names(a, cs)
    check_free(a, names)
    work = tempfile.mkdtemp(prefix="clockbench-guest.")
    a.console = os.path.join(work, "console.log")
    params = a.params
    append = kernel_append(a, params)
    tracer = Tracer()
    traced = a.trace and tracer.start()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    raw = os.path.join(work, "trace.txt")
    try:
        if a.BACKEND == "libvirt":
            from . import libvirt
            b = libvirt.boot(a, a.accel, work, a.TIMEOUT, a.PIN, append,
                             lambda: tracer.mark("start"), lambda: tracer.mark("end"))
        else:
            b = qemu.boot(guest_argv(a, a.accel, a.cpu, work, params), work, a.TIMEOUT, a.PIN,
                          lambda: tracer.mark("start"), lambda: tracer.mark("end"), warn)
    finally:
        tracer.stop(raw)
    check_status(b, a.TIMEOUT, work)
    try:
        doc = frames.result(frames.parse(b["data"]))
    except frames.FrameError as e:
        panic = console_panic(work)
        raise RunError("guest panic: %s" % panic if panic else str(e))
    host["clocksource_end"] = read_text(CS_DIR + "current_clocksource")
    bench = doc.get("bench")
    if not isinstance(bench, dict) or not isinstance(bench.get("results"), list):
        raise RunError("result frame: no bench.results from the engine")
    launcher = {
        "backend": a.BACKEND, "qemu": a.QEMU, "qemu_version": qemu_version(a.QEMU),
        "machine": a.MACHINE, "machine_options": ",".join([a.MACHINE] + machine_opts(a)),
        "cpu": a.cpu, "accel": a.accel, "emulated": a.accel == "tcg",
        "accel_requested": a.ACCEL, "accel_note": a.accel_note,
        "vcpus": a.VCPUS, "memory_mb": a.MEM, "hpet": a.HPET,
        "kernel": os.path.abspath(a.KERNEL), "initramfs": os.path.abspath(a.INITRAMFS),
        "initramfs_sha256": sha256(a.INITRAMFS), "append": append,
        "pinning": b["pinning"], "clocksource": cs, "host": host, "started": started,
        "boot_ms": b["hello_ms"],
        "boot_ms_means": "launch to the guest's first line on the results channel (/init running)",
        "result_ms": b["result_ms"], "wall_ms": b["wall_ms"], "timeout_s": a.TIMEOUT,
        "exit_status": b["status"], "qemu_pid": b.get("pid"), "console_log": names["console"],
        "command": b["argv"],
    }
    if "domain_xml" in b:
        launcher["libvirt_uri"] = os.environ.get("LIBVIRT_URI", "qemu:///system")
        launcher["libvirt_domain_xml"] = b["domain_xml"]
    out = {"schema": doc["schema"], "launcher": launcher, "guest": doc.get("guest"), "bench": bench}
    run_dir = a.run_dir or runfolder.make_run(a.results or runfolder.default_dirs()[0], a.run_id)
    with open(a.console, "rb") as f:
        runfolder.write_once(os.path.join(run_dir, names["console"]), f.read())
    result = os.path.join(run_dir, names["guest"])
    runfolder.write_once(result, json.dumps(out, indent=1) + "\n")
    if a.trace:
        write_trace(a, run_dir, names, work, traced and raw, b.get("pid"), tracer)
    shutil.rmtree(work, ignore_errors=True)
    return result


def write_trace(a, run_dir, names, work, raw, pid, tracer):
    """Writes the raw trace(s) and kvm-trace-<cs>-<N>vcpu.json, once.
    Under TCG the guest's QEMU has no KVM clock: with a usable /dev/kvm
    (and OBSERVE=1) a short KVM VM of our own is traced instead, and the
    summary's subject says so."""
    try:
        doc = _trace_doc(a, run_dir, names, work, raw, pid, tracer)
    except (OSError, EOFError, kvmtrace.TraceError) as e:
        # An unreadable raw trace costs the trace's facts, not the run.
        doc = kvmtrace.document(names["guest"], reason="raw trace unreadable: %s" % (getattr(e, "strerror", None) or e))
    runfolder.write_once(os.path.join(run_dir, names["trace"]), json.dumps(doc, indent=1) + "\n")


def _trace_doc(a, run_dir, names, work, raw, pid, tracer):
    """write_trace's document: the raw traces placed, then summarised."""
    if not raw:
        doc = kvmtrace.document(names["guest"], reason=tracer.why or "not traced")
    else:
        kept = place_raw(run_dir, names["raw"], raw)
        lines = kvmtrace.read_lines(raw)
        if a.accel == "kvm":
            doc = kvmtrace.document(names["guest"], lines, pid=pid, subject="guest",
                                    subject_text="the guest's QEMU process", trace_file=kept)
        elif a.OBSERVE and kvm_usable():
            note("guest ran under %s: observing KVM's clock with a %d s KVM VM" % (a.accel, a.OBSERVE_SECONDS))
            obs, opid = observe(a, work, tracer)
            if obs is None:
                doc = kvmtrace.document(names["guest"], reason="observer VM not traced: %s" % opid)
            else:
                doc = kvmtrace.document(
                    names["guest"], kvmtrace.read_lines(obs), pid=opid, subject="observer",
                    subject_text="a short KVM VM clockbench booted on this host only to observe KVM's clock "
                                 "(the guest itself ran under %s)" % a.accel,
                    trace_file=place_raw(run_dir, names["observe"], obs),
                    window_reason="the KVM VM observed does not measure: the guest ran under %s" % a.accel)
        else:
            why = "OBSERVE=0" if not a.OBSERVE else "%s is not usable" % kvm_dev()
            doc = kvmtrace.document(names["guest"], trace_file=kept,
                                    reason="the guest ran under %s, so its QEMU has no KVM clock, and no observer "
                                           "VM was booted (%s)" % (a.accel, why))
    return doc


# ---- output -----------------------------------------------------------------

def table(path):
    """The launcher's table, drawn by the one reader of result files."""
    from cbanalysis import guesttable
    from cbcontract import load
    return guesttable.text(load.load_guest(path, os.path.basename(os.path.dirname(os.path.abspath(path)))))


INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum, frame):
    # The first signal starts the clean-up (QEMU stopped, the trace
    # instance removed); a second one (the harness stops a whole process
    # group, and a user presses Ctrl-C twice) must not cut it short.
    for s in INTERRUPTS:
        signal.signal(s, signal.SIG_IGN)
    raise KeyboardInterrupt


def handle_interrupts():
    for s in INTERRUPTS:
        signal.signal(s, _interrupt)


def main(argv):
    handle_interrupts()
    try:
        return _main(argv)
    finally:
        kvmtrace.discard(os.getpid())  # whatever path left it (tests/guest/interrupt.t)


def _main(argv):
    a = None
    try:
        a = settings(argv)
        if a.run_dir is None and a.run_id is None:
            a.run_id = runfolder.new_run_id()
        check(a)
        if a.check_only:
            return 0
        choose_accel(a)
        if a.probe_only:
            print(a.accel)
            return 0
        path = run(a)
    except Usage as e:
        print("%s: %s" % (PROG, e), file=sys.stderr)
        return 2
    except (RunError, runfolder.RunFolderError, kvmtrace.TraceError) as e:
        print("%s: %s%s" % (PROG, e, _console(a)), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("%s: interrupted%s" % (PROG, _console(a)), file=sys.stderr)
        return 1
    except OSError as e:
        print("%s: %s: %s%s" % (PROG, e.filename, e.strerror, _console(a)), file=sys.stderr)
        return 1
    if not a.quiet:
        try:
            print(table(path))
        except InputError as e:  # the result stands; a table the reader refuses is not a failed run
            warn("table of %s: %s" % (path, e))
    print(path)
    return 0


def _console(a):
    c = getattr(a, "console", None)
    return " (console log: %s)" % c if c else ""
