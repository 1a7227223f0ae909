"""util.py: errors, bounded messages and atomic writes, shared by every layer."""
import math
import os
import re

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
