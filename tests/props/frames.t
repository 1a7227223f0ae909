#!/usr/bin/python3
# tier: slow
# test-timeout: 1800
"""frames.t: properties of the results-channel reader (host-scripts/cbhost/frames.py): any bytes, and
good channels cut, duplicated, reordered or corrupted, give the guest's document or one FrameError line (TAP)."""
import json
import os
import sys
import zlib

sys.dont_write_bytecode = True
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")]
import proplib  # noqa: E402  (re-executes under /usr/bin/python3 when needed)
from hypothesis import example, strategies as st  # noqa: E402

from cbhost import frames  # noqa: E402
from cbcontract.runfolder import SCHEMA_GUEST  # noqa: E402

t = proplib.Props("frames")
# The bounds docs/guest.md states (the numbers, not the module's names: the
# properties held the code before them too).
MAX_CHANNEL, MAX_PROBLEMS, MAX_ERROR = 16 << 20, 8, 400


def frame(payload, kind=b"result", seq=1, crc=None, length=None):
    """A frame as guest-init/frame.c writes it (crc and length may lie)."""
    return (b"\nCLOCKBENCH-BEGIN v1 kind=%s seq=%d len=%d crc32=%08x\n"
            % (kind, seq, len(payload) if length is None else length, zlib.crc32(payload) if crc is None else crc)
            + payload + b"\nCLOCKBENCH-END seq=%d\n" % seq)


def hello(ms):
    return b"\nCLOCKBENCH-HELLO v1 uptime_ms=%s\n" % ms


def outcome(data):
    """The reader's verdict on data: the document, or None after a
    FrameError; asserts the shape of parse()'s answer and that the error
    is one non-empty line.  Any other exception fails the property."""
    p = frames.parse(data)
    assert set(p) == {"hello", "frames", "problems"}
    assert p["hello"] is None or (type(p["hello"]) is int and p["hello"] >= 0)
    for f in p["frames"]:
        assert isinstance(f["payload"], bytes) and type(f["seq"]) is int and type(f["offset"]) is int
    assert all(isinstance(x, str) and len(x.splitlines()) == 1 for x in p["problems"]), p["problems"]
    assert len(p["problems"]) <= MAX_PROBLEMS + 1 and all(len(x) <= 200 for x in p["problems"]), \
        "problems unbounded: %d, longest %d" % (len(p["problems"]), max(map(len, p["problems"]), default=0))
    try:
        doc = frames.result(p)
    except frames.FrameError as e:
        msg = str(e)
        assert len(msg.splitlines()) == 1, "FrameError is not one line: %r" % msg[:400]
        assert len(msg) <= MAX_ERROR, "FrameError of %d characters: %r..." % (len(msg), msg[:200])
        return None
    assert isinstance(doc, dict) and doc.get("schema") == SCHEMA_GUEST
    assert not p["problems"]
    return doc


# JSON values as the guest could write them (finite floats: the writer
# writes null, never nan).
scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
values = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                      max_leaves=12)
docs = st.fixed_dictionaries({"schema": st.just(SCHEMA_GUEST)},
                             optional={"bench": values, "guest": values, "launcher": values})
error_docs = st.fixed_dictionaries({}, optional={"schema": st.just("clockbench-guest-error/1"), "stage": values,
                                                 "error": values, "exit_code": values})


def dumps(v):
    return json.dumps(v).encode()


payloads = (docs.map(dumps) | error_docs.map(dumps) | values.map(dumps) | st.binary(max_size=64)
            | st.sampled_from([b"", b"[" * 100000 + b"]" * 100000, b"{}", b"null", b"\xff\xfe"]))
kinds = st.sampled_from([b"result", b"error", b"weird", b"RESULT", b""])
seqs = st.integers(0, 10**10)
# The pieces a channel is made of, each good, lying or cut.
pieces = st.one_of(
    st.builds(frame, payloads, kinds, seqs),
    st.builds(frame, payloads, kinds, seqs, st.integers(0, 2**32 - 1), st.integers(0, 2**40)),
    st.builds(hello, st.integers(0, 2**64).map(lambda n: b"%d" % n) | st.binary(max_size=8)
              | st.integers(1, 6000).map(lambda n: b"9" * n)),
    st.builds(lambda s: b"\nCLOCKBENCH-END seq=%s\n" % s, st.integers(0, 99).map(lambda n: b"%d" % n)
              | st.binary(max_size=4)),
    st.sampled_from([b"\n", b"CLOCKBENCH-BEGIN", b"CLOCKBENCH-END", b"CLOCKBENCH-HELLO v1 uptime_ms=", b" seq=1",
                     b"\nCLOCKBENCH-BEGIN v1 kind=result seq=1 len=2 crc32=", b"\r\n", b"\x00"]),
    st.binary(max_size=32),
)
channels = st.lists(pieces, max_size=8).map(b"".join)


# Captures that took minutes (quadratic): 64000 frames and as many stray
# end lines (about 450 s); 16000 headers each claiming 8 MiB (140 s).
MANY_ENDS = b"".join(frame(b"{}", seq=i) for i in range(64000)) + b"\nCLOCKBENCH-END seq=1\n" * 64000
LYING_LENGTHS = b"\nCLOCKBENCH-BEGIN v1 kind=result seq=1 len=8388608 crc32=00000000\n" * 16000 + b"x" * (8 << 20)


@t.prop("any bytes: a document or one FrameError line, never another exception, never a hang", st.binary(max_size=4096))
@example(b"CLOCKBENCH-BEGIN")
@example(b"\nCLOCKBENCH-BEGIN v1 kind=result seq=1 len=99999999999 crc32=00000000\n")
@example(MANY_ENDS)
@example(LYING_LENGTHS)
@example(b"\nCLOCKBENCH-BEGIN" + b"\x00" * 200 + b"\n")  # a 336-character problem: escaped after the cut
def any_bytes(data):
    outcome(data)


@t.prop("channels of good, lying and cut frames, hellos and end lines: a document or one FrameError line", channels)
@example(hello(b"9" * 5000))  # int() of over 4300 digits raised ValueError
@example(frame(b"[" * 100000 + b"]" * 100000))  # a nested payload raised RecursionError
@example(frame(dumps({"stage": "engine", "error": "two\nlines"}), b"error"))  # a two-line FrameError
def any_channel(data):
    outcome(data)


# A good channel: noise (no marker in it), the hello, one result frame, noise.
noise = st.binary(max_size=64).filter(lambda b: b"CLOCKBENCH-" not in b)
good = st.tuples(noise, st.integers(0, 10**9), docs, st.integers(0, 10**9 - 1), noise).map(
    lambda x: (x[0] + hello(b"%d" % x[1]) + frame(dumps(x[2]), seq=x[3]) + x[4], x[2]))


@t.prop("a good channel (noise, hello, one result frame, noise) gives its document back", good)
def round_trip(g):
    data, doc = g
    assert outcome(data) == doc


@t.prop("a good channel cut anywhere inside its frame: FrameError", good, st.data())
def cut(g, data):
    whole, doc = g
    end = whole.rindex(b"CLOCKBENCH-END")
    ch = whole[:data.draw(st.integers(0, end + len(b"CLOCKBENCH-END seq=")), label="cut at")]
    assert outcome(ch) is None


def mutate(data, draw):
    """One mutation of data: cut, delete, duplicate, move (reorder), overwrite
    or insert bytes, or flip a bit."""
    n = len(data)
    op = draw(st.sampled_from(["cut", "delete", "duplicate", "move", "overwrite", "insert", "flip"]), label="op")
    i = draw(st.integers(0, n), label="at")
    j = draw(st.integers(i, min(n, i + 200)), label="to")
    if op == "cut":
        return data[:i]
    if op == "delete":
        return data[:i] + data[j:]
    if op == "duplicate":
        k = draw(st.integers(0, n), label="copy to")
        return data[:k] + data[i:j] + data[k:]
    if op == "move":
        rest = data[:i] + data[j:]
        k = draw(st.integers(0, len(rest)), label="move to")
        return rest[:k] + data[i:j] + rest[k:]
    if op == "overwrite":
        b = draw(st.binary(min_size=1, max_size=8), label="bytes")
        return data[:i] + b + data[i + len(b):]
    if op == "insert":
        return data[:i] + draw(st.binary(min_size=1, max_size=16), label="bytes") + data[i:]
    if i == n:
        return data
    return data[:i] + bytes([data[i] ^ (1 << draw(st.integers(0, 7), label="bit"))]) + data[i + 1:]


@t.prop("a good channel cut, duplicated, reordered or corrupted (1-4 times): its own document or FrameError",
        good, st.data())
def mutated(g, data):
    ch, doc = g
    for _ in range(data.draw(st.integers(1, 4), label="mutations")):
        ch = mutate(ch, data.draw)
    got = outcome(ch)
    assert got is None or got == doc, "a corrupted channel gave another document: %r" % got


# ---- hostile shapes: bounded output whatever the size ----

def nested(n, seq, gap, crc):
    """n headers nested in each other's payloads (gap bytes of noise after
    each), all ending at one shared end line."""
    heads, inside = [], 0
    for _ in range(n):
        heads.append(b"\nCLOCKBENCH-BEGIN v1 kind=result seq=%d len=%d crc32=%08x\n" % (seq, inside, crc) + gap)
        inside += len(heads[-1])
    return b"".join(reversed(heads)) + b"\nCLOCKBENCH-END seq=%d\n" % seq


@t.prop("nested frame headers sharing one end line (1-20000, noise between): one FrameError line of at most "
        "400 characters, at most 9 problems", st.integers(1, 20000), st.integers(0, 10**9 - 1),
        noise, st.integers(0, 2**32 - 1), scale=0.25)
@example(30000, 1, b"", 0)  # about 2 MB
def nested_headers(n, seq, gap, crc):
    assert outcome(nested(n, seq, gap, crc)) is None


@t.prop("many corrupt headers, lying lengths and stray end lines (up to 5000 of each): at most 9 problems, "
        "one FrameError line of at most 400 characters",
        st.lists(st.sampled_from([b"\nCLOCKBENCH-BEGIN v1 kind=result seq=x\n",
                                  b"\nCLOCKBENCH-BEGIN v1 kind=result seq=1 len=99999999 crc32=00000000\n",
                                  b"\nCLOCKBENCH-BEGIN v1 kind=result seq=1 len=2 crc32=00000000\nxx\nCLOCKBENCH-END seq=2\n",
                                  b"\nCLOCKBENCH-END seq=1\n", b"\nCLOCKBENCH-BEGIN " + b"k" * 300 + b"\n"]),
                 min_size=1, max_size=8), st.integers(1, 5000), scale=0.25)
def many_problems(parts, times):
    assert outcome(b"".join(parts) * times) is None


@t.prop("error frames whose stage and message are any size (to 1 MB, newlines too): one line of at most "
        "400 characters", st.integers(0, 1 << 20), st.integers(0, 1 << 20), st.sampled_from(["x", "\n", "é", "a\nb"]),
        scale=0.1)
def big_error(n_stage, n_error, ch):
    doc = dumps({"schema": "clockbench-guest-error/1", "stage": ch * n_stage, "error": ch * n_error})
    assert outcome(hello(b"1") + frame(doc, b"error")) is None


@t.prop("a good channel padded past 16 MiB (before or after its frame): FrameError naming the cap", good,
        st.integers(1, 1 << 16), st.booleans(), scale=0.02)
def over_cap(g, extra, before):
    ch, _ = g
    pad = b"\0" * (MAX_CHANNEL - len(ch) + extra)
    data = pad + ch if before else ch + pad
    assert outcome(data) is None
    try:
        frames.result(frames.parse(data))
    except frames.FrameError as e:
        assert "16 MiB" in str(e), str(e)[:200]


@t.prop("two good frames of one channel in any order, or one twice: FrameError", good, st.booleans())
def two_frames(g, same):
    ch, doc = g
    other = frame(dumps(doc), seq=ch.count(b"x") + 10**9 + 1) if not same else ch[ch.index(b"\nCLOCKBENCH-BEGIN"):]
    assert outcome(ch + other) is None and outcome(other + ch) is None


t.done()
