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

As a program: `python3 host-scripts/cbhost/frames.py FILE` prints the frames
and problems of a channel capture and exits 0 when it holds exactly one good
result frame, 1 otherwise (2 usage).
"""
import bisect
import json
import os
import re
import sys
import zlib

if not __package__:  # run as a program: make cbhost importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import cbhost  # noqa: E402,F401  (puts analysis/ on the path)
from cbanalysis.runfolder import SCHEMA_GUEST  # noqa: E402

BEGIN = b"CLOCKBENCH-BEGIN"
END = b"CLOCKBENCH-END"
HEADER_RE = re.compile(rb"CLOCKBENCH-BEGIN v1 kind=([a-z]+) seq=([0-9]{1,9}) len=([0-9]{1,10}) crc32=([0-9a-f]{8})\n")
HELLO_RE = re.compile(rb"CLOCKBENCH-HELLO v1 uptime_ms=([0-9]{1,19})\n")  # %ld, never past int()'s digit limit
MAX_LEN = 64 << 20


class FrameError(Exception):
    """The channel does not hold exactly one good result frame."""


def parse(data):
    """Returns {"hello": uptime_ms or None, "frames": [{kind, seq, payload,
    offset}], "problems": [str]} for the bytes of a channel capture."""
    frames, problems, seen = [], [], set()
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
            problems.append("offset %d: corrupt frame header %r" % (at, data[at:nl][:80].decode("ascii", "replace")))
            pos = nl + 1
            continue
        kind, seq, length, crc = m.group(1).decode(), int(m.group(2)), int(m.group(3)), int(m.group(4), 16)
        start = m.end()
        if length > MAX_LEN:
            problems.append("frame seq=%d: length %d too large" % (seq, length))
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
            problems.append("frame seq=%d: corrupt: end line %r" % (seq, got[:40].decode("ascii", "replace")))
            pos = start
            continue
        payload = view[start:start + length]
        if zlib.crc32(payload) != crc:
            problems.append("frame seq=%d: corrupt: CRC-32 %08x, header says %08x" % (seq, zlib.crc32(payload), crc))
            pos = start
            continue
        pos = start + length + len(trailer)
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
    if stray > 0 and not any("truncated" in p or "corrupt" in p for p in problems):
        problems.append("%d end line(s) without a frame" % stray)
    return {"hello": hello, "frames": frames, "problems": problems}


def result(parsed):
    """Returns the one result frame's payload as a dict, or raises
    FrameError naming what is wrong (an error frame's message first)."""
    errors = [f for f in parsed["frames"] if f["kind"] == "error"]
    for f in errors:
        try:
            e = json.loads(f["payload"])
            raise FrameError("guest reported an error in stage %s: %s" % (_line(e.get("stage")), _line(e.get("error"))))
        except (ValueError, AttributeError, RecursionError):
            raise FrameError("guest reported an error (unreadable error frame)")
    if parsed["problems"]:
        raise FrameError("results channel: " + "; ".join(parsed["problems"]))
    res = [f for f in parsed["frames"] if f["kind"] == "result"]
    other = [f["kind"] for f in parsed["frames"] if f["kind"] not in ("result", "error")]
    if other:
        raise FrameError("results channel: unknown frame kind %s" % other[0])
    if not res:
        if parsed["hello"] is None:
            raise FrameError("results channel: empty (the guest never reached /init)")
        raise FrameError("results channel: no result frame (init started at %d ms, then nothing)" % parsed["hello"])
    if len(res) > 1:
        raise FrameError("results channel: %d result frames, expected one" % len(res))
    try:
        doc = json.loads(res[0]["payload"])
    except ValueError as e:
        raise FrameError("result frame: not valid JSON: %s" % e)
    except RecursionError:
        raise FrameError("result frame: not valid JSON: nested too deeply")
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA_GUEST:
        raise FrameError("result frame: schema is not %s" % SCHEMA_GUEST)
    return doc


def _line(v):
    """v as text on one line (the guest's words end up in a one-line error)."""
    return " ".join(str(v).splitlines())


def main(argv):
    if len(argv) != 2:
        print("usage: frames.py CHANNEL-FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[1], "rb") as f:
            data = f.read()
    except OSError as e:
        print("frames: open %s: %s" % (argv[1], e.strerror), file=sys.stderr)
        return 1
    p = parse(data)
    print("hello uptime_ms=%s" % p["hello"])
    for f in p["frames"]:
        print("frame seq=%d kind=%s len=%d" % (f["seq"], f["kind"], len(f["payload"])))
    for pr in p["problems"]:
        print("problem: %s" % pr)
    try:
        result(p)
    except FrameError as e:
        print("frames: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
