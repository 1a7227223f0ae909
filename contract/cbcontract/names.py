"""names.py: the names every layer shares, one list each: clocks, methods, exit statuses, the version.

The engine's C keeps its own copies (bench/opts.c: cb_clocks[] and
cb_method_names[]; guest-init/exit-codes.h: the guest's exit codes);
tests/contract/names.t checks that they and these agree.  The version has
one source, CB_VERSION in bench/clockbench.h, which the engine compiles in,
packaging/packaging.mk reads with sed and VERSION here reads once at import.
"""
import os
import re

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))  # the checkout or installed copy
VERSION_H = os.path.join(TOP, "bench", "clockbench.h")
_VERSION_RE = re.compile(r'^#define CB_VERSION "([0-9A-Za-z.+~-]{1,40})"$')


def read_version(path=VERSION_H):
    """CB_VERSION from the engine's header (read linearly, at most 64 KiB);
    "unknown" when the header or its line is missing."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f.read(1 << 16).splitlines():
                m = _VERSION_RE.match(line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return "unknown"


VERSION = read_version()


def version_line(prog):
    """What `PROG --version` prints: "PROG VERSION"."""
    return "%s %s" % (prog, VERSION)


# Clocks in the engine's order (bench/opts.c cb_clocks[]): the --clock names.
CLOCKS = ("realtime", "monotonic", "monotonic_raw", "boottime", "tai", "realtime_coarse", "monotonic_coarse")
# Clocks read by the same code path (vDSO do_hres, or the same syscall):
# their medians in one run differ by noise (cbanalysis/diff.py's band).
HRES_CLOCKS = CLOCKS[:5]
COARSE_CLOCKS = CLOCKS[5:]
# The headline clock of every table, plot and textfile.
HEADLINE_CLOCK = "monotonic"

# Methods in the engine's order (bench/opts.c cb_method_names[]).
METHODS = ("vdso", "syscall", "syscall-inline", "rdtsc", "rdtscp", "null")
CLOCKED_METHODS = METHODS[:3]  # one row per clock; the others have clock null
# A cost row's quantiles (ns_per_call, below_overhead), from the engine's histogram.
QUANTILES = ("min", "median", "mean", "p99", "p999", "max")
# The path probe's answers (a row's "path"): where a clock read went.
PATHS = ("user", "syscall")

# Exit statuses every command shares (the house style); 3, where a command
# has it, says a check cannot be made on this machine (EXIT_STATUS below).
EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_CANNOT = 0, 1, 2, 3

# The guest's exit codes (guest-init/exit-codes.h, the source for the C
# side): name -> (CODE /init writes to isa-debug-exit, the QEMU status
# (CODE << 1) | 1, meaning).
GUEST_EXITS = {
    "GX_ENGINE": (1, 3, "engine failed"),
    "GX_SETUP": (2, 5, "guest setup failed (mount, channel or fork)"),
    "GX_SIGNAL": (3, 7, "engine killed by a signal"),
    "GX_PARAM": (4, 9, "bad clockbench.* parameter"),
    "GX_OUTPUT": (5, 11, "engine output missing or unreadable"),
}
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


# Each installed command's documented exit statuses (its --help, "Exit
# status:"): the codes each documents, the one list (tests/contract/names.t
# reads every --help against it).  128+N, "interrupted by signal N", is
# written "128+N".
EXIT_STATUS = {
    "clockbench": (0, 1, 2, 3),
    "clockbench-host": (0, 1, 2),
    "clockbench-guest": (0, 1, 2),
    "clockbench-host-check": (0, 1, 2),
    "clockbench-report": (0, 1, 2),
    "clockbench-crosscheck": (0, 1, 2),
    "clockbench-compare": (0, 1, 2, "128+N"),
    "clockbench-clocksource": (0, 1, 2, "128+N"),
    "clockbench-kvm-trace": (0, 1, 2, 3),
    "clockbench-watch": (0, 1, 2),
}
