"""klog.py: the kernel log as its source frames it: /dev/kmsg's records, the journal's kernel entries, text split on LF.

A user can place text in a kernel record (a crashing program's file name
in its segfault record) and that text may hold any byte but NUL and "/":
CR, VT, FF, ESC, NEL (U+0085), U+2028, U+2029.  Read live, a record is
one unit, taken from the source that frames it, never re-split:
  /dev/kmsg      one record a read(), its text escaped by the kernel
                 ("\\x0d": every byte below 0x20, from 0x7f, and "\\");
                 the lines after its first (" SUBSYSTEM=...") are its
                 dictionary, not text
  the journal    `journalctl -o json`: one entry a line, read only where
                 _TRANSPORT is kernel and the facility the kernel's; its
                 MESSAGE escaped here as the kernel escapes /dev/kmsg's
so a Record's text is one line of printable ASCII whatever a user put in
it.  A recorded log (a file, a command's output) is text: file_lines()
and stream_lines() split it on LF alone (a CRLF line's CR dropped), each
line bounded (MAX_LINE_CHARS), read as a stream in constant memory;
never str.splitlines() (which also splits at CR, VT, FF, FS, GS, RS, NEL,
U+2028 and U+2029).

Records feed kmsg.summarize() through Records (its messages()): each
record's text is matched by kmsg's rules at its start, with no header to
guess.  `python3 -m cbcontract.klog` writes every /dev/kmsg record's
first line as it came (the lab's capture inside L1); with --show it
writes the live reader's records as health reads them.
"""
import codecs
import collections
import errno
import os
import stat
import subprocess
import sys
import tempfile
import threading

from . import kmsg, names, paste
from .util import InputError

MAX_RECORD = 16 << 10  # a read of /dev/kmsg: the kernel formats a record into 8 KiB at most
MAX_LINE_CHARS = 64 << 10  # one line of a text source; a longer one is kept cut (its start is what is read)
CHUNK = 64 << 10  # a read: its lines are held at once (64 Ki short lines at most)
JOURNAL_MAX = 512 << 20  # bytes of the journal's JSON read for one boot (streamed: time, not memory)


class Record(collections.namedtuple("Record", "text stamp seq")):
    """One kernel record: its message text (printable ASCII, the kernel's
    escapes), its time since boot in seconds (None when unknown) and its
    sequence number (None when unknown)."""

    @property
    def line(self):
        """The record as dmesg shows one: "[  12.345678] text"."""
        if self.stamp is None:
            return self.text
        us = int(round(self.stamp * 1e6))
        return "[%5d.%06d] %s" % (us // 1000000, us % 1000000, self.text)


def escape(raw):
    """Text as /dev/kmsg escapes it: every byte below 0x20, from 0x7f,
    and the backslash as \\xNN (bytes of UTF-8 for a str)."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "replace")
    if all(0x20 <= c < 0x7f and c != 0x5c for c in raw):
        return raw.decode("ascii")
    return "".join(chr(c) if 0x20 <= c < 0x7f and c != 0x5c else "\\x%02x" % c for c in raw)


def _digits(s, most=20):
    return isinstance(s, str) and 0 < len(s) <= most and s.isascii() and s.isdigit()


def parse_kmsg(raw):
    """The Record of one /dev/kmsg record ("PRI,SEQ,USEC,FLAGS[,...];text"
    and its dictionary lines; bytes or str), or None when it is not one
    or not the kernel's (a facility other than 0: what a program writes to
    /dev/kmsg)."""
    if isinstance(raw, bytes):
        raw = raw.decode("utf-8", "replace")
    head, sep, text = raw.partition(";")
    if not sep or len(head) > 128:
        return None
    f = head.split(",")
    if len(f) < 4 or not all(_digits(x) for x in f[:3]) or int(f[0]) >> 3 != 0:
        return None
    # The kernel escapes its text: a raw control or non-ASCII character
    # here is a stand-in's, escaped all the same.
    text = text.split("\n", 1)[0]
    return Record(escape(text) if not (text.isascii() and text.isprintable()) else text,
                  int(f[2]) / 1e6, int(f[1]))


def journal_record(line):
    """The Record of one line of `journalctl -o json` (bytes or str), or
    None: not a JSON object, not of the kernel transport, of another
    facility, or without a MESSAGE (paste.journal_entry())."""
    j = paste.journal_entry(line, MAX_RECORD)
    return None if j is None else Record(escape(j[0][:MAX_RECORD]), j[1], None)


def stream_lines(read, limit=None, what="input"):
    """The lines of a byte stream (read(n) -> bytes, b"" at its end),
    decoded as UTF-8 (errors as U+FFFD) and split on LF alone: a CRLF
    line's CR dropped, every other character kept in its line, each line
    cut to MAX_LINE_CHARS (the rest of a longer one skipped).  Constant
    memory.  With limit, InputError once more than limit bytes were read."""
    dec = codecs.getincrementaldecoder("utf-8")("replace")
    pending, n, long = "", 0, False
    while True:
        b = read(CHUNK)
        n += len(b)
        if limit is not None and n > limit:
            raise InputError(what, "grew over the %d MiB a log may hold while read" % (limit >> 20))
        parts = (pending + dec.decode(b, not b)).split("\n")
        pending = parts.pop()
        for p in parts:
            if long:  # the rest of a line already given, cut
                long = False
                continue
            yield p[:MAX_LINE_CHARS].removesuffix("\r")
        if len(pending) > MAX_LINE_CHARS:
            if not long:
                yield pending[:MAX_LINE_CHARS]
            pending, long = "", True
        if not b:
            break
    if pending and not long:
        yield pending.removesuffix("\r")


def text_lines(text):
    """The lines of a text already read whole, split on LF alone (a CRLF
    line's CR dropped): a list."""
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    return [x[:-1] if x.endswith("\r") else x for x in lines]


def file_lines(path, limit, nofollow=None):
    """The lines of a recorded log (stream_lines), by load.open_regular's
    rule (a regular file, at most limit bytes; no symlink under nofollow).
    InputError when it cannot be opened (at once: this is not a
    generator) or grows over limit (while read)."""
    from .load import open_regular
    fd = open_regular(path, limit, nofollow)

    def gen():
        try:
            yield from stream_lines(lambda k: _read(fd, k, path), limit, path)
        finally:
            os.close(fd)
    return gen()


def _read(fd, k, path):
    try:
        return os.read(fd, k)
    except OSError as e:
        raise InputError(path, "read: %s" % e.strerror)


class Records:
    """Records from one source, read once, counted as they go (count).
    kmsg.summarize() reads it through messages(): each record's text
    matched by kmsg's rules at its start (its stamp the record's own),
    quoted as its line (Record.line)."""

    def __init__(self, records):
        self._it = records
        self.count = 0

    def messages(self):
        for r in self._it:
            self.count += 1
            c = kmsg._match(r.text[:kmsg.MAX_LINE])
            if c:
                yield r.line, c[0], c[1], r.stamp


def kmsg_raw(path):
    """Every record /dev/kmsg holds now, from the first, in order, read
    non-blocking (a record a read), each as its first line (bytes; its
    dictionary lines left), then the descriptor closed; a stand-in (a
    regular file or FIFO of records' first lines) gives its lines (LF) as
    they are.  Records the kernel overwrote while they were read are
    skipped.  The open happens at the call (OSError: EPERM for a user
    under kernel.dmesg_restrict=1), not at the first record."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        device = stat.S_ISCHR(os.fstat(fd).st_mode)
    except OSError:
        os.close(fd)
        raise

    def gen():
        try:
            if not device:
                for line in stream_lines(lambda k: _nb_read(fd, k)):
                    yield line.encode("utf-8", "surrogateescape")
                return
            while True:
                try:
                    b = os.read(fd, MAX_RECORD)
                except BlockingIOError:
                    return
                except OSError as e:
                    if e.errno == errno.EPIPE:  # overwritten before it was read: the next one
                        continue
                    return  # EINVAL (a record over the buffer) or worse: no further
                if not b:
                    return
                yield b.split(b"\n", 1)[0]
        finally:
            os.close(fd)
    return gen()


def kmsg_records(path):
    """The kernel's Records of kmsg_raw(path) (parse_kmsg: another
    facility's left out)."""
    raw = kmsg_raw(path)
    return (r for r in map(parse_kmsg, raw) if r)


def _nb_read(fd, k):
    try:
        return os.read(fd, k)
    except BlockingIOError:  # a FIFO stand-in: what is there now
        return b""


class Journal:
    """`journalctl ... -o json` run and read as a stream of Records
    (records()); after it, rc (None while running, -9 when killed for
    time), err (its stderr, 4 KiB at most), cut (stopped at JOURNAL_MAX
    bytes) and why (a failure to start)."""

    def __init__(self, argv, timeout=20):
        self.argv, self.timeout = argv, timeout
        self.rc = self.why = None
        self.err, self.cut, self.timed_out = "", False, False

    def records(self):
        errf = tempfile.TemporaryFile()
        try:
            p = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=errf, stdin=subprocess.DEVNULL)
        except OSError as e:
            errf.close()
            self.why = "%s: %s" % (self.argv[0], e.strerror)
            return
        seen = [0]

        def read(k):
            if seen[0] >= JOURNAL_MAX:
                self.cut = True
                return b""
            b = p.stdout.read1(min(k, JOURNAL_MAX - seen[0]))
            seen[0] += len(b)
            return b

        def kill():
            self.timed_out = True
            p.kill()
        timer = threading.Timer(self.timeout, kill)
        timer.start()
        try:
            for line in stream_lines(read):
                r = journal_record(line)
                if r:
                    yield r
        finally:
            timer.cancel()
            if p.poll() is None:
                p.kill()
            p.stdout.close()
            self.rc = p.wait()
            errf.seek(0)
            self.err = errf.read(4096).decode("utf-8", "replace")
            errf.close()


def main(argv):
    """python3 -m cbcontract.klog [--show] [PATH]: every record of /dev/kmsg
    (or PATH) now, its first line as the kernel wrote it (with --show: as
    health quotes it, "[stamp] text"); exit 1 when it cannot be read."""
    show = "--show" in argv[1:]
    rest = [a for a in argv[1:] if a != "--show"]
    if len(rest) > 1 or any(a.startswith("-") for a in rest):
        print("usage: python3 -m cbcontract.klog [--show] [PATH]", file=sys.stderr)
        return 2
    path = rest[0] if rest else os.environ.get("CB_KMSG", names.KMSG_DEV)
    out = sys.stdout.buffer
    try:
        raw = kmsg_raw(path)
    except OSError as e:
        print("klog: open %s: %s" % (path, e.strerror), file=sys.stderr)
        return 1
    for b in raw:
        if show:
            r = parse_kmsg(b)
            if r:
                out.write(r.line.encode() + b"\n")
        else:
            out.write(b + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
