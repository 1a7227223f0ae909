"""util.py: errors, atomic writes and number formatting shared by the analysis."""
import math
import os
import re

PROG = "clockbench-report"
_SURROGATE = re.compile("[\ud800-\udfff]")


def one_line(s):
    """s with its line breaks (those str.splitlines knows) as spaces: a
    message that quotes a file's keys or values stays one line."""
    return " ".join(str(s).splitlines())


CUT = 80  # a value quoted in a message: at most this many characters
MAX_MESSAGE = 360  # a whole message: the path, the field, the values cut


def cut(s, n=CUT):
    """s as one line of at most n characters (control characters as '?'),
    for quoting a value of a file or the command line in a message."""
    s = "".join("?" if ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 else c for c in one_line(str(s)[:n + 1]))
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


def write_atomic(path, data, mode=0o644):
    """Writes data (str or bytes) to path, replacing it whole: a reader sees
    the old file or the new one, never half of one (runfolder.write_file)."""
    from .runfolder import RunFolderError, write_file
    if isinstance(data, str):
        # A name of invalid UTF-8 (a folder's, read as \udc80-\udcff) written as U+FFFD.
        data = _SURROGATE.sub("\ufffd", data).encode("utf-8")
    try:
        write_file(path, data, mode, replace=True)
    except RunFolderError as e:
        raise InputError(None, str(e))


def make_dir(path):
    if os.path.exists(path) and not os.path.isdir(path):
        raise InputError(path, "exists and is not a folder")
    try:
        # 0755 whatever the umask: a group-writable folder is refused by
        # runfolder.check_folder as soon as a file is written into it.
        os.makedirs(path, 0o755, exist_ok=True)
    except OSError as e:
        raise InputError(path, "mkdir: %s" % e.strerror)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def obj(d, key):
    """d[key] if it is an object, else {}: a fact the loader tolerates
    (missing or of another type) reads as absent."""
    v = d.get(key)
    return v if isinstance(v, dict) else {}


def fnum(v, nd=2):
    """A number for a table: fixed decimals, 'n/a' for None."""
    if v is None:
        return "n/a"
    return "%.*f" % (nd, v)


def fquant(r, q="median", nd=2):
    """A row's quantile for a table: 'n/a' without a row; a quantile the
    engine left null because its overhead subtraction went negative says so,
    with the raw figure (before the subtraction) beside it, never a 0."""
    if r is None:
        return "n/a"
    v = r.ns.get(q)
    if v is None and q in r.below:
        raw = (r.raw or {}).get(q)
        return "n/a (below loop overhead%s)" % ("" if raw is None else "; raw %.*f" % (nd, raw))
    return fnum(v, nd)


def fpct(frac, nd=1):
    return "n/a" if frac is None else "%.*f %%" % (nd, frac * 100)


def frate(r):
    """Reads per second as 1e6, 2.5e5, 1000."""
    if r >= 1000 and float(r).is_integer():
        m, e = ("%e" % r).split("e")
        m = m.rstrip("0").rstrip(".")
        return "%se%d" % (m, int(e))
    return "%g" % r


_CONTROL = dict.fromkeys([c for c in range(0x20)] + [0x7f] + list(range(0x80, 0xa0)), "?")
_CONTROL[ord("\n")] = " "


def md_escape(s):
    """A value for a Markdown table cell: one line, no control character
    (a result's escape sequence never reaches a terminal showing the report)."""
    return str(s).translate(_CONTROL).replace("|", "\\|")


def md_table(header, rows, align=None):
    """A Markdown table; align is a string of 'l'/'r' per column."""
    align = align or "l" * len(header)
    out = ["| " + " | ".join(md_escape(h) for h in header) + " |",
           "| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |"]
    for r in rows:
        out.append("| " + " | ".join(md_escape(c) for c in r) + " |")
    return "\n".join(out)
