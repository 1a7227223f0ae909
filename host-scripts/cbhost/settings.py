"""settings.py: the guest launcher's settings: its options, checked once.

read(argv) parses and checks every value on its own (no file is looked at:
that is preflight.check's); it raises msg.Usage, one line naming the value.
The settings object it returns is the one the other modules read
(a.KERNEL, a.VCPUS, ...; a.params: the clockbench.* words for /init).
"""
import argparse
import os
import re

import cbhost
from cbcontract import names, runfolder, settingtable
from . import duration, msg, qemu
from .msg import Usage, cut

def flag(name):
    """A setting's option, as messages name it: VCPUS -> --vcpus (make
    bench-guest VCPUS=2 passes --vcpus=2)."""
    return "--" + name.lower().replace("_", "-")


class Parser(argparse.ArgumentParser):
    """One name an option: a prefix of one (--vcpu) is no abbreviation of it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, allow_abbrev=False, **kwargs)

    def error(self, message):
        raise Usage("%s (see --help)" % message)


class Help(argparse.RawDescriptionHelpFormatter):
    """--help as help2man reads it (packaging/packaging.mk): "Usage:", "or:"."""

    def add_usage(self, usage, actions, groups, prefix=None):
        super().add_usage(usage, actions, groups, "Usage: ")


def parser():
    online = os.cpu_count() or 1
    p = Parser(prog=msg.PROG, formatter_class=Help,
               usage="%(prog)s [--results DIR] [--run-id ID] [OPTION]...\n"
                     "   or: %(prog)s --run-dir DIR [OPTION]...\n"
                     "   or: %(prog)s --check-only [OPTION]...\n"
                     "   or: %(prog)s --probe-only [OPTION]...\n"
                     "   or: %(prog)s --version",
               description="Boot the guest initramfs (make guest-initramfs) on a host kernel under QEMU,\n"
                           "with clockbench as PID 1, and write guest-<clocksource>-<N>vcpu.json (never\n"
                           "overwriting) with the console log beside it; the last line on stdout is its\n"
                           "path.")
    p._optionals.title = "Options"
    p.add_argument("--version", action="version", version=names.version_line(msg.PROG), help="print the version and exit")
    g = p.add_argument_group("Run folder and mode")
    g.add_argument("--results", metavar="DIR", help="results folder for a new run folder [results; installed, as "
                                                    "root: /var/lib/clockbench/results]")
    g.add_argument("--run-id", metavar="ID", help="the new run folder's name [<UTC time>-<host>]; it must not exist")
    g.add_argument("--run-dir", metavar="DIR", help="an existing run folder to write into (compare's)")
    g.add_argument("--clocksource", metavar="CS", help="the host clocksource label of this run [the kernel's "
                                                       "current one]")
    g.add_argument("--trace", action="store_true",
                   help="trace KVM's clock events (kvm-trace-<cs>-<N>vcpu.json beside the result)")
    g.add_argument("--probe-only", action="store_true",
                   help="print the accelerator --accel would choose, and exit; with --accel=auto, the probe's answer "
                        "on a second line (why TCG, or how soon KVM ran the guest)")
    g.add_argument("--probed", metavar="WHY", help="with --accel=kvm or tcg: that accelerator was decided by this "
                                                   "run's one --probe-only, for the reason WHY (compare's, once a run: "
                                                   "the result records auto and WHY; nothing is probed again)")
    g.add_argument("--check-only", action="store_true",
                   help="check every setting as a run would (the kernel, initramfs and QEMU, the accelerator, the "
                        "engine's options by the engine's own dry run, the results folder) and exit: 0 and no "
                        "output, or one line; nothing is booted or written")
    g.add_argument("--quiet", action="store_true", help="print only the result's path")
    s = p.add_argument_group("Settings")
    # Each from packaging/settings: its name, doc and default; the defaults of
    # this machine or install here, the table saying them in words.
    here = {"KERNEL": "/boot/vmlinuz-" + os.uname().release, "QEMU": qemu.BINARY, "VCPUS": str(min(online, 4)),
            "INITRAMFS": os.path.join(cbhost.TOP, "build", "guest", "initramfs.cpio"), "APPEND": ""}
    for r in settingtable.of("bench-guest"):
        shown = r.default("bench-guest")
        # The engine's settings are /init's to default (given only when set).
        value = None if r.name in dict(ENGINE_PARAMS) or shown == "-" else shown
        s.add_argument(r.option, dest=r.name, metavar=r.name, default=here.get(r.name, value),
                       help=r.help("bench-guest"))
    p.epilog = "\n".join(["make bench-guest passes each of its variables of these names as the option",
                          "(make bench-guest VCPUS=2: --vcpus=2).", "",
                          "Exit status:", "  0  result written (--check-only: every setting good; --probe-only: "
                          "printed)", "  1  failure (one line naming the console log)", "  2  usage, or a bad setting "
                          "(one line naming it)"])
    # tests only: skip the engine's dry run, so that a bad engine setting
    # reaches the guest's own engine (tests/guest-init/faults.t)
    p.add_argument("--test-skip-engine-check", action="store_true", help=argparse.SUPPRESS)
    return p


# The settings for the engine in the guest, each the clockbench.KEY /init reads.
ENGINE_PARAMS = (("THREADS", "threads"), ("DURATION", "duration"), ("CLOCKS", "clock"), ("METHODS", "method"),
                 ("WORKLOADS", "workload"), ("CHECK", "check"), ("CPUS", "cpus"))


def _one_of(name, v, *choices):
    if v not in choices:
        raise Usage("%s=%s: expected one of: %s" % (flag(name), cut(v), " ".join(choices)))
    return v


def _int_in(name, v, lo, hi):
    if not re.fullmatch(r"[0-9]{1,6}", v or "") or not lo <= int(v) <= hi:
        raise Usage("%s=%s: expected an integer from %d to %d" % (flag(name), cut(v), lo, hi))
    return int(v)


def read(argv):
    """Parses and checks argv (environment defaults); raises Usage.  A new
    run folder's id defaults to the time and host (runfolder.new_run_id)."""
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
    # Each value of a kind the table gives (one of, 0 or 1, an integer, whole
    # seconds: the result records a limit as an integer, launcher.timeout_s) in its range.
    for r in settingtable.of("bench-guest"):
        kind, _, span = r.type("bench-guest").partition(":")
        lo, _, hi = span.partition("-")
        v = getattr(a, r.name)
        if kind in ("one", "bool"):
            v = _one_of(r.name, v, *(span.split("|") if span else ("0", "1")))
        elif kind in ("int", "seconds"):
            v = (_int_in if kind == "int" else _seconds)(r.name, v, *(int(duration.parse(x)) for x in (lo, hi)))
        setattr(a, r.name, int(v) if kind == "bool" else v)
    if a.probed is not None and (a.ACCEL == "auto" or a.probe_only):
        raise Usage("--probed: the accelerator a probe decided, with --accel=kvm or tcg; not with %s"
                    % ("--probe-only" if a.probe_only else "--accel=auto"))
    if a.probed is not None and ("\n" in a.probed or not a.probed.strip()):
        raise Usage("--probed: one line, not empty")
    if a.MACHINE == "microvm" and a.HPET != "default":
        raise Usage("--hpet=%s: microvm has no HPET; it applies to q35 and pc" % a.HPET)
    if a.MACHINE == "microvm" and a.BACKEND == "libvirt":
        raise Usage("--machine=microvm: --backend=libvirt supports q35 and pc")
    if a.CPU is not None and not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9,.+=_-]*", a.CPU):
        raise Usage("--cpu=%s: expected a QEMU CPU model such as host,+invtsc" % cut(a.CPU))
    a.params = [("cost", str(a.COST))]
    for name, key in ENGINE_PARAMS:
        v = getattr(a, name)
        if v is None:
            continue
        if not _list_ok(v):
            raise Usage("%s=%s: expected a list such as 1,2 or monotonic,realtime" % (flag(name), cut(v)))
        a.params.append((key, v))
    if "\n" in a.APPEND:
        raise Usage("--append: one line only")
    for k, v in append_params(a):
        if not _list_ok(v):
            raise Usage("--append: clockbench.%s=%s: expected a list such as 1,2 or monotonic,realtime" % (k, cut(v)))
    if a.run_dir is None and a.run_id is None:
        a.run_id = runfolder.new_run_id()
    return a


def _list_ok(v):
    """A value /init passes to its engine: one word of letters, digits and , . _ -."""
    return re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9,._-]*", v) is not None


def _seconds(name, v, lo, hi):
    """A launcher time limit: whole seconds from lo to hi, units allowed."""
    try:
        return duration.seconds(flag(name), v, lo, hi, whole=True,
                                why_whole="the result records it as an integer, launcher.timeout_s")
    except duration.DurationError as e:
        raise Usage(str(e))


# The engine options /init passes for each clockbench.KEY, with its
# defaults (guest-init/init.c, run_engine; the table's, tests/settingtable.t
# holds init.c's to them): what the guest's engine will be given, for the
# engine's own --dry-run to judge.
_TABLE = {r.name: r.default("bench-guest") for r in settingtable.of("bench-guest")}
GUEST_ENGINE = (("threads", "--threads", None), ("duration", "--duration", _TABLE["DURATION"]),
                ("check", "--check", _TABLE["CHECK"]),
                ("clock", "--clocks", None), ("method", "--methods", None), ("cpus", "--cpus", None),
                ("workload", "--workloads", None))
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
