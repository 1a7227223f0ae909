"""util.py: errors, bounded messages and atomic writes, shared by every layer."""
import math
import re

SURROGATE = re.compile("[\ud800-\udfff]")  # a lone surrogate (a name of invalid UTF-8)


CUT = 80  # a value quoted in a message: at most this many characters
MAX_MESSAGE = 360  # a whole message: the path, the field, the values cut


def _escape(c):
    if c.isprintable():
        return c
    if "\udc80" <= c <= "\udcff":
        return "\ufffd"  # a byte of a name that was not UTF-8 (os.fsdecode's surrogateescape)
    return {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c) or (
        "\\x%02x" % ord(c) if ord(c) < 0x100 else "\\u%04x" % ord(c) if ord(c) < 0x10000 else "\\U%08x" % ord(c))


def printable(s):
    """s with every character a terminal could act on (C0 and C1 controls,
    DEL, line and paragraph separators, format characters...: what
    str.isprintable refuses) written as its escape (\\x1b, \\n, \\u2028),
    a byte of a file name that was not UTF-8 as U+FFFD: one line, nothing
    an ESC, OSC or BEL of a result can do to a screen.
    The one place text from a result or a log is made safe to show: every
    renderer (summary, verdict, table, Markdown cells) and cut() use it."""
    s = str(s)
    return s if s.isprintable() else "".join(_escape(c) for c in s)


def cut(s, n=CUT):
    """s as one line of at most n characters (printable: controls
    escaped), for quoting a value of a file or the command line in a
    message or a table."""
    s = printable(str(s)[:n + 1])
    return s if len(s) <= n else s[:n - 3] + "..."


def bounded(msg):
    """A message as one line of at most MAX_MESSAGE characters: the
    backstop behind cut() at each quoted value."""
    return cut(msg, MAX_MESSAGE)


class InputError(Exception):
    """Bad input or a failed write: one line for the user, naming the file
    (at most MAX_MESSAGE characters)."""

    def __init__(self, path, msg):
        # The path cut first, so that a long one leaves room for the reason.
        super().__init__(bounded("%s: %s" % (cut(path, 160), msg) if path else msg))
        self.path = path


class UsageError(Exception):
    """A bad option value: exit 2."""


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def obj(d, key):
    """d[key] if it is an object, else {}: a fact the loader tolerates
    (missing or of another type) reads as absent."""
    v = d.get(key)
    return v if isinstance(v, dict) else {}
