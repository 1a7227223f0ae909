"""frames.py: reads the framed results channel of the clockbench guest (the C twin is /init's frame writer).

The format (docs/guest.md):

    CLOCKBENCH-HELLO v1 uptime_ms=N                       (once, at init start)
    CLOCKBENCH-BEGIN v1 kind=result|error seq=S len=L crc32=XXXXXXXX
    <exactly L bytes of JSON>
    CLOCKBENCH-END seq=S

Every line is preceded by a newline.  The parser trusts nothing: a frame whose
header is malformed, whose payload is short, whose CRC-32 differs, whose end
line is missing or names another sequence number, or whose sequence number was
seen before, is a problem, and any problem fails the run.

The reader is linear and bounded (docs/guest.md): a channel holds at most
MAX_CHANNEL bytes (more is a problem, and only that much is read); a claimed
length is bounded by the cap and by what remains; a frame whose CRC is
checked, good or bad, is stepped over whole, so no byte is checked twice
however many headers nest inside a payload; at most MAX_PROBLEMS problems are
kept, each cut, and the error line is at most MAX_ERROR characters.

As a program (main; the command is host-scripts/read-frames FILE): prints the
frames and problems of a channel capture and exits 0 when it holds exactly
one good result frame, 1 otherwise (2 usage).
"""
import bisect
import errno
import json
import os
import re
import stat
import sys
import zlib

from cbcontract.runfolder import SCHEMA_GUEST

BEGIN = b"CLOCKBENCH-BEGIN"
END = b"CLOCKBENCH-END"
HEADER_RE = re.compile(rb"CLOCKBENCH-BEGIN v1 kind=([a-z]+) seq=([0-9]{1,9}) len=([0-9]{1,10}) crc32=([0-9a-f]{8})\n")
HELLO_RE = re.compile(rb"CLOCKBENCH-HELLO v1 uptime_ms=([0-9]{1,19})\n")  # %ld, never past int()'s digit limit
# A real result frame is about 24 KB (results/*/guest-*.json, 2 vCPUs), a
# console log under 26 KB: 16 MiB is some 700 times the largest seen.
MAX_CHANNEL = 16 << 20
MAX_LEN = MAX_CHANNEL
MAX_PROBLEMS = 8
MAX_ERROR = 400
CUT = 80


class FrameError(Exception):
    """The channel does not hold exactly one good result frame."""


def parse(data):
    """Returns {"hello": uptime_ms or None, "frames": [{kind, seq, payload,
    offset}], "problems": [str]} for the bytes of a channel capture (only
    its first MAX_CHANNEL bytes are read).  Linear in len(data)."""
    frames, problems, seen = [], Problems(), set()
    if len(data) > MAX_CHANNEL:
        problems.append("%d bytes, over the %d MiB a channel may hold" % (len(data), MAX_CHANNEL >> 20))
        data = bytes(data[:MAX_CHANNEL])
    m = HELLO_RE.search(data)
    hello = int(m.group(1)) if m else None
    pos, spans, view = 0, [], memoryview(data)
    while True:
        at = data.find(BEGIN, pos)
        if at < 0:
            break
        nl = data.find(b"\n", at)
        if nl < 0:
            problems.append("offset %d: truncated frame header" % at)
            break
        m = HEADER_RE.match(data, at)
        if not m or m.end() != nl + 1:
            problems.append("offset %d: corrupt frame header %s" % (at, cut(data[at:min(nl, at + CUT + 1)])))
            pos = nl + 1
            continue
        kind, seq, length, crc = m.group(1).decode(), int(m.group(2)), int(m.group(3)), int(m.group(4), 16)
        start = m.end()
        if length > MAX_LEN:
            problems.append("frame seq=%d: length %d too large (at most %d)" % (seq, length, MAX_LEN))
            pos = start
            continue
        if len(data) - start < length:
            problems.append("frame seq=%d: truncated: %d of %d payload bytes" % (seq, len(data) - start, length))
            break
        # The end line before the CRC, and a view, not a copy: a header that
        # lies about its length costs nothing, however long the capture.
        trailer = b"\n" + END + b" seq=%d\n" % seq
        got = data[start + length:start + length + len(trailer)]
        if got != trailer:
            if trailer.startswith(got):
                problems.append("frame seq=%d: truncated: end line missing" % seq)
                break
            problems.append("frame seq=%d: corrupt: end line %s" % (seq, cut(got[:40])))
            pos = start
            continue
        payload = view[start:start + length]
        # Past the end line whether the CRC is good or not: the headers
        # nested in a bad payload are not read again (that was quadratic),
        # and a bad frame fails the run whatever follows it.
        pos = start + length + len(trailer)
        got_crc = zlib.crc32(payload)
        if got_crc != crc:
            problems.append("frame seq=%d: corrupt: CRC-32 %08x, header says %08x" % (seq, got_crc, crc))
            continue
        spans.append((at, pos))
        if seq in seen:
            problems.append("frame seq=%d: duplicated" % seq)
            continue
        seen.add(seq)
        frames.append({"kind": kind, "seq": seq, "payload": bytes(payload), "offset": at})
    starts = [a for a, _ in spans]  # in order, not overlapping
    stray, i = 0, data.find(END)
    while i >= 0:
        k = bisect.bisect_right(starts, i) - 1
        stray += k < 0 or i >= spans[k][1]
        i = data.find(END, i + 1)
    if stray > 0 and not problems.damaged:
        problems.append("%d end line(s) without a frame" % stray)
    return {"hello": hello, "frames": frames, "problems": problems.done()}


class Problems:
    """The first MAX_PROBLEMS problems, then a count of the others."""

    def __init__(self):
        self.kept, self.more, self.damaged = [], 0, False  # damaged: a truncated or corrupt frame was seen

    def append(self, text):
        self.damaged = self.damaged or "truncated" in text or "corrupt" in text
        if len(self.kept) < MAX_PROBLEMS:
            self.kept.append(text)
        else:
            self.more += 1

    def done(self):
        return self.kept + (["%d more problem(s)" % self.more] if self.more else [])


def cut(b):
    """Bytes from the channel as a short quoted string: escaped, then cut
    to CUT characters."""
    text = repr(b[:CUT * 2].decode("ascii", "replace"))[1:-1]
    return "'%s%s'" % (text[:CUT], "..." if len(text) > CUT or len(b) > CUT * 2 else "")


def result(parsed):
    """Returns the one result frame's payload as a dict, or raises
    FrameError naming what is wrong (an error frame's message first)."""
    errors = [f for f in parsed["frames"] if f["kind"] == "error"]
    for f in errors:
        try:
            e = json.loads(f["payload"])
            raise FrameError(_bounded("guest reported an error in stage %s: %s" % (_line(e.get("stage")),
                                                                                    _line(e.get("error")))))
        except (ValueError, AttributeError, RecursionError):
            raise FrameError("guest reported an error (unreadable error frame)")
    if parsed["problems"]:
        raise FrameError(_bounded("results channel: " + "; ".join(parsed["problems"])))
    res = [f for f in parsed["frames"] if f["kind"] == "result"]
    other = [f["kind"] for f in parsed["frames"] if f["kind"] not in ("result", "error")]
    if other:
        raise FrameError("results channel: unknown frame kind %s" % _line(other[0]))
    if not res:
        if parsed["hello"] is None:
            raise FrameError("results channel: empty (the guest never reached /init)")
        raise FrameError("results channel: no result frame (init started at %d ms, then nothing)" % parsed["hello"])
    if len(res) > 1:
        raise FrameError("results channel: %d result frames, expected one" % len(res))
    try:
        doc = json.loads(res[0]["payload"])
    except ValueError as e:
        raise FrameError(_bounded("result frame: not valid JSON: %s" % e))
    except RecursionError:
        raise FrameError("result frame: not valid JSON: nested too deeply")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA_GUEST:
        raise FrameError("result frame: schema is not %s" % SCHEMA_GUEST)
    return doc


def _line(v):
    """v as text on one line of at most CUT characters (the guest's words
    end up in a one-line error)."""
    text = " ".join(str(v)[:CUT * 4].splitlines())
    return text[:CUT] + ("..." if len(text) > CUT else "")


def _bounded(msg):
    """An error line cut to MAX_ERROR characters."""
    return msg if len(msg) <= MAX_ERROR else msg[:MAX_ERROR - 3] + "..."


def read(path):
    """The first MAX_CHANNEL + 1 bytes of a regular file (one more than a
    channel may hold, so that parse() says it is over); OSError as open's,
    ENODEV-like for a FIFO or device (never blocks on one)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", path)
        return f.read(MAX_CHANNEL + 1)


def main(argv):
    if len(argv) != 2:
        print("usage: read-frames CHANNEL-FILE", file=sys.stderr)
        return 2
    try:
        data = read(argv[1])
    except OSError as e:
        print("frames: open %s: %s" % (_line(argv[1]), e.strerror), file=sys.stderr)
        return 1
    p = parse(data)
    print("hello uptime_ms=%s" % p["hello"])
    for f in p["frames"]:
        print("frame seq=%d kind=%s len=%d" % (f["seq"], _line(f["kind"]), len(f["payload"])))
    for pr in p["problems"]:
        print("problem: %s" % pr)
    try:
        result(p)
    except FrameError as e:
        print("frames: %s" % e, file=sys.stderr)
        return 1
    return 0

