"""msg.py: the guest launcher's one-line messages on stderr and its two errors (Usage: exit 2; RunError: exit 1)."""
import sys

from cbcontract.util import cut  # noqa: F401 (preflight, settings: a value quoted in an error, the one helper)

PROG = "bench-guest"  # the command's name as run (host-scripts/bench-guest sets it)


class Usage(Exception):
    """A bad setting: one line, exit 2."""


class RunError(Exception):
    """A failed check or boot: one line for the user, exit 1."""


def warn(text):
    print("%s: warning: %s" % (PROG, text), file=sys.stderr)


def note(text):
    print("%s: %s" % (PROG, text), file=sys.stderr)


