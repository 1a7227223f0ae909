"""msg.py: the guest launcher's one-line messages on stderr and its two errors (Usage: exit 2; RunError: exit 1)."""
import sys
import textwrap

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




def warn_wrapped(text, width=100):
    """A warning too long for one line, whole: wrapped at width columns,
    its further lines indented, never cut."""
    lines = textwrap.wrap("%s: warning: %s" % (PROG, text), width, subsequent_indent="  ",
                          break_long_words=True, break_on_hyphens=False)
    print("\n".join(lines), file=sys.stderr)
