#!/usr/bin/python3
# tier: fast
"""frames.t: the results-channel reader (host-scripts/cbhost/frames.py) takes one
good frame and rejects truncated, corrupt, duplicated and missing ones (TAP)."""
import json
import os
import sys
import zlib

sys.dont_write_bytecode = True
sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", d) for d in ("contract", "host-scripts")]
from cbhost import frames  # noqa: E402

n = 0
failed = 0


def ok(cond, what, detail=None):
    global n, failed
    n += 1
    if cond:
        print("ok %d - %s" % (n, what))
    else:
        failed += 1
        print("not ok %d - %s" % (n, what))
        if detail:
            print("# %s" % detail)


def frame(payload, kind="result", seq=1, crc=None, length=None):
    """A frame exactly as guest-init/init.c writes it."""
    if crc is None:
        crc = zlib.crc32(payload)
    if length is None:
        length = len(payload)
    return (b"\nCLOCKBENCH-BEGIN v1 kind=%s seq=%d len=%d crc32=%08x\n" % (kind.encode(), seq, length, crc)
            + payload + b"\nCLOCKBENCH-END seq=%d\n" % seq)


def error_of(data):
    """The FrameError message for data, or None when it is accepted."""
    try:
        frames.result(frames.parse(data))
        return None
    except frames.FrameError as e:
        return str(e)


hello = b"\nCLOCKBENCH-HELLO v1 uptime_ms=812\n"
doc = {"schema": "clockbench-guest/1", "guest": {"clocksource": "kvm-clock"},
       "bench": {"results": [{"threads": 1}, {"threads": 2}], "note": "CLOCKBENCH-END inside a string\nand a newline"}}
good_payload = json.dumps(doc, indent=1).encode()
good = hello + frame(good_payload)

p = frames.parse(good)
ok(p["hello"] == 812, "hello line gives the guest's uptime at /init")
ok(len(p["frames"]) == 1 and not p["problems"], "one good frame, no problems", repr(p["problems"]))
try:
    r = frames.result(p)
    ok(r["bench"]["results"][1]["threads"] == 2, "payload (with newlines and an END marker in a string) parses as JSON")
except frames.FrameError as e:
    ok(False, "good frame accepted", str(e))

ok(error_of(b"noise\r\n\x00\xff" + good + b"trailing noise") is None, "noise around the frame is ignored")

# truncation, at every interesting place
cut_payload = good[:len(good) - 200]
e = error_of(cut_payload)
ok(e is not None and "truncated" in e and "of %d payload bytes" % len(good_payload) in e,
   "payload cut short: truncated, with byte counts", e)
e = error_of(good[:-5])
ok(e is not None and "truncated" in e and "end line" in e, "end line cut short: truncated", e)
e = error_of(hello + b"\nCLOCKBENCH-BEGIN v1 kind=res")
ok(e is not None and "truncated frame header" in e, "header cut short: truncated", e)
e = error_of(hello)
ok(e is not None and "no result frame" in e and "812" in e, "hello but no frame: says /init started then nothing", e)
e = error_of(b"")
ok(e is not None and "never reached /init" in e, "empty channel: says the guest never reached /init", e)

# corruption
flipped = bytearray(good)
i = good.index(b'"kvm-clock"') + 2
flipped[i] ^= 0x20
e = error_of(bytes(flipped))
ok(e is not None and "corrupt" in e and "CRC-32" in e, "one flipped payload bit: CRC-32 mismatch", e)
e = error_of(hello + frame(good_payload, crc=0x12345678))
ok(e is not None and "corrupt" in e, "wrong CRC in header: corrupt", e)
e = error_of(hello + frame(good_payload, length=len(good_payload) - 3))
ok(e is not None and ("corrupt" in e), "length 3 bytes short: rejected as corrupt", e)
e = error_of(hello + frame(good_payload).replace(b"seq=1 len", b"seq=x len"))
ok(e is not None and "corrupt frame header" in e, "malformed header: corrupt frame header", e)
e = error_of(hello + frame(good_payload).replace(b"CLOCKBENCH-END seq=1", b"CLOCKBENCH-END seq=2"))
ok(e is not None and "corrupt" in e and "end line" in e, "end line naming another frame: corrupt", e)
bad_json = b'{"schema":"clockbench-guest/1",'
e = error_of(hello + frame(bad_json))
ok(e is not None and "not valid JSON" in e, "good frame, bad JSON: not valid JSON", e)
e = error_of(hello + frame(json.dumps({"schema": "other/1"}).encode()))
ok(e is not None and "schema" in e, "good frame, wrong schema: rejected", e)

# duplication
e = error_of(good + frame(good_payload))
ok(e is not None and "duplicated" in e, "same frame twice (same seq): duplicated", e)
e = error_of(good + frame(good_payload, seq=2))
ok(e is not None and "2 result frames" in e, "two result frames (seq 1 and 2): rejected", e)
e = error_of(good + b"\nCLOCKBENCH-END seq=1\n")
ok(e is not None and "without a frame" in e, "stray end line: rejected", e)

# in-band errors from the guest
err = json.dumps({"schema": "clockbench-guest-error/1", "stage": "params",
                  "error": "clockbench.bogus: unknown parameter", "exit_code": 4}).encode()
e = error_of(hello + frame(err, kind="error"))
ok(e is not None and "stage params" in e and "clockbench.bogus: unknown parameter" in e,
   "error frame: its stage and message are reported", e)
e = error_of(hello + frame(good_payload, kind="weird"))
ok(e is not None and "unknown frame kind" in e, "unknown frame kind: rejected", e)

# Bounded (docs/guest.md): 2 MB of nested headers that share one end line
# (each claims the bytes up to it) was quadratic, with a 31 MB error line.
# The bound asserted is the error's length, not the time.


def nested(size, seq=1):
    """Headers nested inside each other's payloads, all ending at one end line."""
    heads, inside = [], 0  # innermost first; inside: the bytes after a header, up to the end line
    while inside < size:
        heads.append(b"\nCLOCKBENCH-BEGIN v1 kind=result seq=%d len=%d crc32=00000000\n" % (seq, inside))
        inside += len(heads[-1])
    return b"".join(reversed(heads)) + b"\nCLOCKBENCH-END seq=%d\n" % seq


big = nested(2 << 20)
p = frames.parse(big)
e = error_of(big)
ok(e is not None and len(e) <= 400 and len(e.splitlines()) == 1 and "CRC-32" in e,
   "2 MB of nested frame headers sharing one end line: one error line of at most 400 characters (%d)"
   % len(e or ""), (e or "")[:200])
ok(len(p["problems"]) <= 9, "and at most 8 problems kept, then a count (%d)" % len(p["problems"]))
e = error_of(hello + frame(json.dumps({"stage": "x" * 100000, "error": "y\n" * 100000}).encode(), kind="error"))
ok(e is not None and len(e) <= 400 and len(e.splitlines()) == 1 and "stage xxx" in e,
   "an error frame with a 100 KB stage and a 200 KB message: one line of at most 400 characters (%d)" % len(e or ""))
e = error_of(hello + frame(good_payload, kind="z" * 100000))
ok(e is not None and len(e) <= 400 and "unknown frame kind zzz" in e,
   "a frame of a 100 KB unknown kind: one line of at most 400 characters (%d)" % len(e or ""))
over = good + b"x" * (16 << 20)
e = error_of(over)
ok(e is not None and "16 MiB" in e and len(e) <= 400,
   "a channel of a good frame and 16 MiB more: refused, naming the 16 MiB cap", (e or "")[:200])
e = error_of(hello + b"\nCLOCKBENCH-BEGIN v1 kind=result seq=1 len=16777217 crc32=00000000\n" + b"x" * 100)
ok(e is not None and "too large" in e, "a header claiming more than 16 MiB: too large", e)

# As a program: exit 0 for one good result frame, 1 otherwise.
import subprocess  # noqa: E402
import tempfile  # noqa: E402
prog = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "host-scripts", "read-frames")
with tempfile.TemporaryDirectory() as d:
    rcs = []
    for data in (good, good[:-5]):
        with open(os.path.join(d, "ch"), "wb") as f:
            f.write(data)
        rcs.append(subprocess.run([sys.executable, prog, os.path.join(d, "ch")], capture_output=True).returncode)
    ok(rcs == [0, 1], "read-frames FILE: exit 0 for a good capture, 1 for a truncated one", rcs)
    os.mkfifo(os.path.join(d, "fifo"))
    try:
        r = subprocess.run([sys.executable, prog, os.path.join(d, "fifo")], capture_output=True, text=True, timeout=20)
        ok(r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "regular file" in r.stderr,
           "read-frames FIFO: exit 1, one line, never waits for a writer", r.stderr)
    except subprocess.TimeoutExpired:
        ok(False, "read-frames FIFO: exit 1, one line, never waits for a writer", "hung 20 s")
    with open(os.path.join(d, "big"), "wb") as f:
        f.write(over)
    r = subprocess.run([sys.executable, prog, os.path.join(d, "big")], capture_output=True, text=True)
    ok(r.returncode == 1 and len(r.stderr.splitlines()) == 1 and "16 MiB" in r.stderr,
       "read-frames on a 16 MiB+ file: exit 1, one line naming the cap", r.stderr[:200])

print("1..%d" % n)
sys.exit(1 if failed else 0)
