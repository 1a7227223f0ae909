"""names.py: the names every layer shares, one list each: clocks, methods, exit statuses, the version, the kernel's files.

They are bench/names.h's lines, read here once at import: the one source,
which the engine's C compiles in (bench/opts.c, bench/clockbench.h,
guest-init/exit-codes.h) and host-scripts/lib/version.sh reads for the
shell commands and make.  tests/contract/names.t holds the commands' own
outputs to them, and fails where another file spells them again.
"""
import collections
import os
import re

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # the checkout or installed copy
NAMES_H = os.path.join(TOP, "bench", "names.h")
# One fact a line, in one of names.h's shapes; anything else on a line is no fact.
_FACT_RE = re.compile(r'^(?:#define CB_(?P<fact>[A-Z][A-Z0-9_]{0,31}) (?:"(?P<value>[^"\\]{1,200})"|(?P<num>0x[0-9a-f]{1,8}))'
                      r'|CB_EXIT\((?P<exit>[A-Z]{1,16}), (?P<code>[0-9]{1,3})\)'
                      r'|CB_CLOCK\("(?P<clock>[a-z_]{1,32})", (?P<clock_id>CLOCK_[A-Z_]{1,32})\)'
                      r'|CB_METHOD\([A-Z_]{1,32}, "(?P<method>[a-z-]{1,32})", (?P<clocked>[01])\)'
                      r'|CB_GUEST_EXIT\((?P<gx>GX_[A-Z]{1,16}), (?P<gx_code>[0-9]{1,3}), "(?P<meaning>[^"\\]{1,200})"\)'
                      r'|CB_WORKLOAD\([A-Z_]{1,32}, "(?P<wl>[a-z-]{1,32})", "(?P<wl_unit>[A-Za-z/]{1,32})", '
                      r'"(?P<wl_short>[A-Za-z/]{1,32})", (?P<wl_latency>[01])\)'
                      r'|CB_CLOCKSOURCE\("(?P<cs>[a-z0-9_-]{1,32})", "(?P<cs_kind>tsc|paravirtual|device)", '
                      r'"(?P<cs_what>[^"\\]{1,80})", "(?P<cs_published>[^"\\]{1,200})"\))$')


# A workload's row (names.h's CB_WORKLOAD): its name, its rate's unit (higher is better), that unit as
# the screen's tables shorten it, whether it also measures a latency (microseconds, lower is better).
Workload = collections.namedtuple("Workload", "name unit short_unit latency")
# A clocksource kind's row (CB_CLOCKSOURCE): its name, kind (tsc, paravirtual, device), what it is, and
# what others measured a host read through it to cost, with the source (None: nothing to plan with).
Clocksource = collections.namedtuple("Clocksource", "name kind what published")


def read_names(path=NAMES_H):
    """names.h's facts: {"facts": {NAME: value}, "exits": {NAME: code}, "clocks": [(name, id)],
    "methods": [(name, clocked)], "guest_exits": {NAME: (code, meaning)}, "workloads": [Workload]},
    in the file's order.
    Read linearly, at most 64 KiB.  ValueError, in one line, if the file cannot be read or a
    line that starts a fact (CB_..., #define CB_... "...") has none of the shapes.  A number
    (#define CB_NAME 0x...) is kept as written."""
    out = {"facts": {}, "exits": {}, "clocks": [], "methods": [], "guest_exits": {}, "workloads": [],
           "clocksources": []}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 16)
    except OSError as e:
        raise ValueError("%s: %s" % (path, e.strerror)) from None
    for n, line in enumerate(text.splitlines(), 1):
        m = _FACT_RE.match(line)
        if not m:
            if line.startswith("CB_") or (line.startswith("#define CB_") and '"' in line):
                raise ValueError("%s:%d: a fact of no known shape: %.80s" % (path, n, line))
            continue
        g = m.groupdict()
        if g["fact"]:
            out["facts"][g["fact"]] = g["value"] or g["num"]  # a number as written
        elif g["exit"]:
            out["exits"][g["exit"]] = int(g["code"])
        elif g["clock"]:
            out["clocks"].append((g["clock"], g["clock_id"]))
        elif g["method"]:
            out["methods"].append((g["method"], g["clocked"] == "1"))
        elif g["cs"]:
            out["clocksources"].append(Clocksource(g["cs"], g["cs_kind"], g["cs_what"],
                                                   None if g["cs_published"] == "-" else g["cs_published"]))
        elif g["wl"]:
            out["workloads"].append(Workload(g["wl"], g["wl_unit"], g["wl_short"], g["wl_latency"] == "1"))
        else:
            out["guest_exits"][g["gx"]] = (int(g["gx_code"]), g["meaning"])
    return out


try:
    _NAMES = read_names()
except ValueError as e:
    raise ImportError("cbcontract.names: %s (the suite's one list of shared names)" % e) from None

VERSION = _NAMES["facts"]["VERSION"]
# The kernel's clocksource folder (current_clocksource, available_clocksource).
CS_SYSFS = _NAMES["facts"]["CS_SYSFS"]
KMSG_DEV = _NAMES["facts"]["KMSG_DEV"]
KVM_DEV = _NAMES["facts"]["KVM_DEV"]
STATE_DIR = _NAMES["facts"]["STATE_DIR"]  # root's state of a run: the bracket's lock and state
HEAL_DIR = _NAMES["facts"]["HEAL_DIR"]  # heal's records of VM clocks (cbhost.heal.record, records)
WATCH_RUN_DIR = _NAMES["facts"]["WATCH_RUN_DIR"]  # the watch's lock folder as root (cbhost.watch.lock_dir)
# The kernel's stand-in clocksources (tsc-early; jiffies, refined-jiffies on a
# periodic tick): never measured, never switched to.
CS_STAND_INS = tuple(_NAMES["facts"]["CS_STAND_INS"].split())
DEBUG_EXIT_PORT = _NAMES["facts"]["DEBUG_EXIT_PORT"]  # "0xf4": as written, as QEMU's iobase= takes it
# The workloads, in the engine's order (Workload rows).
WORKLOADS = tuple(_NAMES["workloads"])
# The clocksource kinds (Clocksource rows); the TSC's names, on which alone KVM keeps its master clock.
CLOCKSOURCES = tuple(_NAMES["clocksources"])
TSC_NAMES = tuple(c.name for c in CLOCKSOURCES if c.kind == "tsc")


def version_line(prog):
    """What `PROG --version` prints: "PROG VERSION"."""
    return "%s %s" % (prog, VERSION)


# Clocks in the engine's order: the --clocks names.
CLOCKS = tuple(name for name, _ in _NAMES["clocks"])
# Clocks read by the same code path (vDSO do_hres, or the same syscall):
# their medians in one run differ by noise (cbanalysis/diff.py's band).
HRES_CLOCKS = CLOCKS[:5]
# The headline clock of every table, plot and textfile.
HEADLINE_CLOCK = "monotonic"

# Methods in the engine's order: the --methods names.
METHODS = tuple(name for name, _ in _NAMES["methods"])
CLOCKED_METHODS = tuple(name for name, clocked in _NAMES["methods"] if clocked)  # one row per clock; the others have clock null
# A cost row's quantiles (ns_per_call, below_overhead), from the engine's histogram.
QUANTILES = ("min", "median", "mean", "p99", "p999", "max")

# Exit statuses every command shares (the house style); 3, where a command
# has it, says a check cannot be made on this machine (EXIT_STATUS below).
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_CANNOT = (_NAMES["exits"][k] for k in ("OK", "FAIL", "USAGE", "CANNOT"))

# The guest's exit codes: name -> (CODE /init writes to isa-debug-exit, the
# QEMU status (CODE << 1) | 1, meaning).
GUEST_EXITS = {name: (code, (code << 1) | 1, meaning) for name, (code, meaning) in _NAMES["guest_exits"].items()}
# QEMU statuses that are timeout(1)'s, not the guest's.
TIMEOUT_EXITS = {124: "guest timed out", 137: "guest timed out and was killed"}


def guest_exit(status):
    """What a QEMU exit status means, in words; None for an unknown one."""
    if status in TIMEOUT_EXITS:
        return TIMEOUT_EXITS[status]
    for code, st, meaning in GUEST_EXITS.values():
        if st == status:
            return meaning
    return None


# The documented exit statuses (its --help, "Exit status:") of the engine,
# clockbench, and of each verb of packaging/commands: the codes each
# documents, the one list (tests/contract/names.t reads every --help against
# it).  128+N, "interrupted by signal N", is written "128+N".
EXIT_STATUS = {
    "clockbench": (0, 1, 2, 3),
    "bench-host": (0, 1, 2),
    "bench-guest": (0, 1, 2),
    "health": (0, 1, 2),
    "report": (0, 1, 2),
    "crosscheck": (0, 1, 2),
    "bench": (0, 1, 2, "128+N"),
    "clocksource": (0, 1, 2, "128+N"),
    "kvm-trace": (0, 1, 2, 3),
    "watch": (0, 1, 2),
    "heal": (0, 1, 2),
}
