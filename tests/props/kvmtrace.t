#!/usr/bin/python3
# tier: slow
# test-timeout: 1800
"""kvmtrace.t: properties of the KVM trace summarizer (host-scripts/cbhost/kvmtrace.py): any text, and the
real traces of tests/host-scripts/fixtures mutated, give counts that add up, in a document the loader reads;
any file gives lines or the documented open error (TAP)."""
import errno
import gzip
import json
import os
import subprocess
import sys
import types

sys.dont_write_bytecode = True
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")]
import proplib  # noqa: E402  (re-executes under /usr/bin/python3 when needed)
from hypothesis import example, strategies as st  # noqa: E402

from cbhost import kvmtrace  # noqa: E402
from cbcontract.load import load_trace, stable_all, trace_facts  # noqa: E402
from cbcontract.util import InputError  # noqa: E402

FX = os.path.join(proplib.ROOT, "tests", "host-scripts", "fixtures")
TRACES = {n: open(os.path.join(FX, n)).read().splitlines(keepends=True)
          for n in sorted(os.listdir(FX)) if n.startswith("trace-")}
ALL_LINES = sorted({line for lines in TRACES.values() for line in lines})
TOOL = os.path.join(proplib.ROOT, "host-scripts", "kvm-trace")

t = proplib.Props("kvmtrace")
tmp = t.tmp


def check_counts(c, life=None):
    """A COUNTS object adds up (and, for a window, stays within life)."""
    ev = c["events"]
    assert set(ev) == set(kvmtrace.EVENTS) and all(type(v) is int and v >= 0 for v in ev.values())
    mc, sb = c["master_clock"], c["stable_bit"]
    assert mc["on_updates"] + mc["off_updates"] == ev["kvm_update_master_clock"]
    assert 0 <= mc["transitions"] <= max(0, ev["kvm_update_master_clock"] - 1)
    assert sb["with"] + sb["without"] == c["pvclock_updates"] == ev["kvm_pvclock_update"]
    assert sum(v["with"] + v["without"] for v in sb["per_vcpu"].values()) == c["pvclock_updates"]
    assert sum(c["pvclock_updates_per_vcpu"].values()) == c["pvclock_updates"]
    assert sum(c["tsc_offset_writes_per_vcpu"].values()) == c["tsc_offset_writes"] == ev["kvm_write_tsc_offset"]
    assert sb["all"] == stable_all(sb["with"], sb["without"])
    if life is not None:
        assert all(ev[k] <= life["events"][k] for k in ev), (ev, life["events"])


def check(lines, tgid=None):
    """summarize() and document() on lines: counts that add up, strict
    JSON, a document the loader reads and the report's facts from it."""
    s = kvmtrace.summarize(lines, tgid)
    check_counts(s["life"])
    w = s["measuring"]
    assert w["available"] in (True, False)
    if w["available"]:
        check_counts(w, s["life"])
    assert s["complete"] in (True, False, None)
    comp = s["completeness"]
    assert comp["lost"] is None or (type(comp["lost"]) is int and comp["lost"] >= 0)
    json.dumps(s, allow_nan=False)  # kvm-trace summarize prints it; the loader reads no NaN
    pid = tgid if tgid is not None else 8162
    doc = kvmtrace.document("guest-tsc-2vcpu.json", lines, pid=pid, subject="guest",
                            subject_text="the guest's QEMU process", trace_file="kvm-trace-tsc-2vcpu.txt")
    text = json.dumps(doc, indent=1, allow_nan=False)
    path = os.path.join(tmp, "kvm-trace-tsc-2vcpu.json")
    with open(path, "w") as f:
        f.write(text)
    try:
        tr = load_trace(path, "guest-tsc-2vcpu.json")
    except InputError as e:
        raise AssertionError("the loader refuses what the summarizer wrote: %s" % e)
    for observer in (False, True):
        trace_facts(types.SimpleNamespace(trace=tr), observer)
    t.tally("available" if doc["available"] else "not available")


# ---- any text ----

@t.prop("any text: counts that add up, a document the loader reads", st.lists(st.text(max_size=200), max_size=30),
        st.none() | st.integers(0, 99999))
def any_text(lines, tgid):
    check(lines, tgid)


# ---- trace-like lines, each field any value ----

digits = st.integers(0, 10**6).map(str) | st.integers(1, 5000).map(lambda n: "9" * n)
hexes = st.integers(0, 2**64).map(lambda n: "%x" % n)


def event_line(comm, tid, tgid, cpu, ts, event, msg):
    return " %s-%s    (%s) [%s] d..1.   %s: %s: %s\n" % (comm, tid, tgid, cpu, ts, event, msg)


messages = st.one_of(
    st.builds("masterclock {} hostclock {} offsetmatched {}".format, st.sampled_from("01"),
              st.sampled_from(["tsc", "0x2", "hpet", ""]), st.sampled_from("01")),
    st.builds("vcpu_id {}, pvclock {{ version 2, tsc_timestamp 0x1, flags 0x{} }}".format, digits, hexes),
    st.builds("vcpu_id {} masterclock {} offsetmatched 1 nr_online {} hostclock {}".format, digits,
              st.sampled_from("01"), digits, st.sampled_from(["tsc", "0x2"])),
    st.builds("vcpu={} prev={} next={}".format, digits, digits, digits),
    st.sampled_from(["clockbench-window-start", "clockbench-window-end", "clockbench-window-startx"]),
    st.text(max_size=40),
)
events = st.sampled_from(list(kvmtrace.EVENTS) + ["tracing_mark_write", "kvm_exit", "x"])
tgids = st.sampled_from(["8162", "8311", "-----", "  1"]) | digits
stamps = st.builds("{}.{}".format, digits, digits)
lines_like = st.one_of(
    st.builds(event_line, st.sampled_from(["qemu-system-x86", "python3", "a-b-c", ""]), digits, tgids,
              st.integers(0, 999).map("{:03d}".format), stamps, events, messages),
    st.builds("# entries-in-buffer/entries-written: {}/{}   #P:2\n".format, digits, digits),
    st.builds(lambda kv: "%s %s\n" % (kvmtrace.STATS, " ".join("%s=%s" % x for x in kv)),
              st.lists(st.tuples(st.sampled_from(["cpu", "entries", "overrun", "commit_overrun", "dropped_events",
                                                  "buffer_size_kb", "x"]), digits), max_size=5)),
    st.builds("CPU:{} [LOST {} EVENTS]\n".format, digits, digits),
    st.sampled_from(ALL_LINES),
    st.text(alphabet=" -0123456789.()[]:#=_x\t", max_size=300),
)


@t.prop("trace-like lines, every field any value (huge numbers too): counts that add up, a document the loader reads",
        st.lists(lines_like, max_size=40), st.none() | st.sampled_from([8162, 8311, 9000]))
@example(["# entries-in-buffer/entries-written: 1/%s   #P:2\n" % ("9" * 5000)], None)  # int() past 4300 digits
@example([event_line("qemu", 1, 8162, "000", "9" * 400 + ".0", "tracing_mark_write", "clockbench-window-start"),
          event_line("qemu", 1, 8162, "000", "9" * 400 + ".0", "tracing_mark_write", "clockbench-window-end")],
         8162)  # seconds: inf - inf is NaN, not JSON
@example(["%s cpu=0 %s\n" % (kvmtrace.STATS, "x" * 60000)], None)  # the key=value regex was quadratic: about 60 s
def like(lines, tgid):
    check(lines, tgid)


# ---- the real traces, mutated ----

@st.composite
def mutated_traces(draw):
    """A fixture trace with lines removed, doubled, moved, cut or overwritten."""
    lines = list(TRACES[draw(st.sampled_from(sorted(TRACES)), label="trace")])
    for _ in range(draw(st.integers(1, 6), label="changes")):
        if not lines:
            break
        i = draw(st.integers(0, len(lines) - 1), label="line")
        op = draw(st.sampled_from(["remove", "double", "move", "cut", "overwrite", "insert"]), label="op")
        if op == "remove":
            del lines[i]
        elif op == "double":
            lines.insert(i, lines[i])
        elif op == "move":
            lines.insert(draw(st.integers(0, len(lines) - 1), label="to"), lines.pop(i))
        elif op == "cut":
            lines[i] = lines[i][:draw(st.integers(0, len(lines[i])), label="at")]
        elif op == "overwrite":
            j = draw(st.integers(0, len(lines[i])), label="at")
            s = draw(st.text(min_size=1, max_size=6) | digits, label="with")
            lines[i] = lines[i][:j] + s + lines[i][j + len(s):]
        else:
            lines.insert(i, draw(lines_like, label="new line"))
    return lines


@t.prop("the fixture traces with lines removed, doubled, moved, cut or overwritten: counts that add up, "
        "a document the loader reads", mutated_traces(), st.none() | st.sampled_from([8162, 8311]))
def mutated(lines, tgid):
    check(lines, tgid)


# ---- files: plain, gzip, corrupt gzip ----

@st.composite
def trace_files(draw):
    """(name, bytes): any bytes, or a trace, gzipped and maybe corrupted."""
    data = draw(st.binary(max_size=512) | st.sampled_from(sorted(TRACES)).map(lambda n: "".join(TRACES[n]).encode()),
                label="content")
    if not draw(st.booleans(), label="gzip"):
        return "trace.txt", data
    z = gzip.compress(data)
    how = draw(st.sampled_from(["whole", "cut", "flip"]), label="how")
    i = draw(st.integers(0, len(z) - 1), label="at")
    if how == "cut":
        z = z[:i]
    elif how == "flip":
        z = z[:i] + bytes([z[i] ^ draw(st.integers(1, 255), label="xor")]) + z[i + 1:]
    return "trace.txt.gz", z


def write(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def corrupt_gz():
    """A gzip file whose deflate stream is corrupt (zlib.error, not OSError)."""
    z = gzip.compress(b"x" * 100, mtime=0)
    return z[:10] + bytes([z[10] ^ 0xff]) + z[11:]


@t.prop("read_lines on any file, plain or gzip, whole or corrupt: its lines or OSError/EOFError", trace_files())
@example(("trace.txt.gz", corrupt_gz()))  # zlib.error
def files(f):
    path = write(*f)
    try:
        lines = kvmtrace.read_lines(path)
    except (OSError, EOFError):
        t.tally("open error")
        return
    t.tally("read")
    check(lines)


@t.prop("kvm-trace summarize on such files: exit 0 with strict JSON, or 1 with one line", trace_files(),
        scale=0.05)
@example(("trace.txt.gz", corrupt_gz()))  # a traceback
def command_line(f):
    path = write(*f)
    p = subprocess.run([sys.executable, TOOL, "summarize", path], capture_output=True, text=True,
                       timeout=proplib.HANG)
    t.tally("exit %d" % p.returncode)
    assert p.returncode in (0, 1) and "Traceback" not in p.stderr, "exit %d: %s" % (p.returncode, p.stderr[-2000:])
    if p.returncode == 0:
        json.loads(p.stdout, parse_constant=lambda c: 1 / 0)
    else:
        assert len(p.stderr.splitlines()) == 1 and p.stderr.startswith("kvm-trace: "), p.stderr


# ---- hostile shapes: long lines, repeated prefixes, gzip bombs, non-ASCII digits ----
# The bounds docs/harness.md states (numbers, not the module's names: these
# properties ran against the code before them too).
MAX_LINE, MAX_TRACE = 4096, 1 << 30
PV = " qemu-system-x86-8164    (   8162) [000] .....   898.041499: kvm_pvclock_update: "
prefixes = st.sampled_from([
    "vcpu_id 0, pvclock {", " flags 0x", "vcpu_id 0 masterclock 1 offsetmatched 1 nr_online 2 hostclock ",
    "masterclock 1 hostclock tsc ", "vcpu=0 prev=1 ", "-1 ", "-1 (1) ", "-1 [0] ", "x-1    (   1) [000] ", "1.1: ",
    "[LOST 1 ", "a=1 ", "clockbench-window-", " " * 8, "9" * 25, "²", "٣",
])


@st.composite
def long_lines(draw):
    """Lines of one prefix repeated, each under or over MAX_LINE, some with
    a good pvclock update's head and tail (an event hidden in a long line)."""
    out = []
    for _ in range(draw(st.integers(1, 8), label="lines")):
        unit = draw(prefixes, label="prefix")
        size = draw(st.integers(0, 2 * MAX_LINE) | st.sampled_from([MAX_LINE - 1, MAX_LINE, MAX_LINE + 1]),
                    label="size")
        head = draw(st.sampled_from(["", PV, PV + "vcpu_id 0, pvclock { "]), label="head")
        body = head + unit * (max(0, size - len(head)) // len(unit) + 1)
        out.append(body[:max(size - 1, 0)] + draw(st.sampled_from([" flags 0x1 }\n", "\n", ""]), label="end"))
    return out


@t.prop("lines of one prefix repeated, to twice 4096 characters: counts that add up, every line over 4096 "
        "skipped and counted (completeness.skipped_lines), none of its events counted", long_lines(),
        st.none() | st.just(8162))
@example([PV + "vcpu_id 0, pvclock { " * 300 + " flags 0x1 }\n"], None)  # an event 6 KB long: not counted
def long_prefix(lines, tgid):
    check(lines, tgid)
    s = kvmtrace.summarize(lines, tgid)
    over = sum(len(x) > MAX_LINE for x in lines)
    got = s["completeness"].get("skipped_lines")
    assert got == over, "skipped_lines %r, %d lines over %d" % (got, over, MAX_LINE)
    assert sum(s["life"]["events"].values()) <= len(lines) - over
    assert not over or s["complete"] is False, "lines skipped, yet complete is %r" % s["complete"]
    t.tally("skipped" if over else "none over")


@t.prop("the same lines in a file, plain or gzip: read_lines streams them, the lines over 4096 bytes come "
        "counted, never whole", long_lines(), st.booleans(), scale=0.5)
def long_file(lines, gz):
    data = "".join(x if x.endswith("\n") else x + "\n" for x in lines).encode()
    path = write("long.txt.gz" if gz else "long.txt", gzip.compress(data, 1) if gz else data)
    got = kvmtrace.read_lines(path)
    assert all(len(x) <= MAX_LINE + 1 for x in got), "a line of %d characters read whole" % max(map(len, got))
    s = kvmtrace.summarize(got)
    over = sum(len(x) > MAX_LINE for x in data.splitlines(keepends=True))
    assert s["completeness"].get("skipped_lines") == over, (s["completeness"].get("skipped_lines"), over)
    check(got)


@t.prop("gzip streams of any bytes repeated past the cap (1 MiB here): OSError EFBIG naming it, never "
        "more read than the cap; under the cap: the lines", st.binary(min_size=1, max_size=64),
        st.integers(1, 4 << 20), scale=0.1)
@example(b"\0", 3 << 20)
@example(b"x" * 63 + b"\n", 1 << 15)
def bomb(unit, size):
    data = (unit * (size // len(unit) + 1))[:size]
    path = write("bomb.txt.gz", gzip.compress(data, 9))
    saved = getattr(kvmtrace, "MAX_TRACE", None)
    kvmtrace.MAX_TRACE = 1 << 20
    try:
        try:
            lines = kvmtrace.read_lines(path)
        except OSError as e:
            assert size > 1 << 20 and e.errno == errno.EFBIG, "size %d: %s" % (size, e)
            assert len(str(e).splitlines()) == 1 and "1 MiB" in str(e), str(e)
            t.tally("refused")
            return
        assert size <= 1 << 20, "%d bytes decompressed, over the 1 MiB cap: read" % size
        check(lines)
        t.tally("read")
    finally:
        kvmtrace.MAX_TRACE = saved


def is_num(text):
    """1-20 ASCII digits, at most 2^64 - 1: what kvm-trace takes for a number."""
    return text.isascii() and text.isdigit() and len(text) <= 20 and int(text) < 1 << 64


# Only what a command line can carry: any text but NUL (execve's arguments
# are C strings; subprocess refuses an embedded NUL before the tool runs).
ids = st.one_of(st.text(st.characters(blacklist_characters="\x00"), max_size=12), st.sampled_from(["²", "٣", "１", " 1", "1 ", "1_0", "+1", "-1", "1\n", "0x1",
                                                       "9" * 5000, "", "12"]),
                st.integers(0, 10**20).map(str))


@t.prop("any process id (non-ASCII digits too): instance() its folder for 1-20 ASCII digits, else TraceError "
        "in one line, never another exception", ids)
def any_id(text):
    ascii_num = is_num(text)
    try:
        path = kvmtrace.instance(text)
    except kvmtrace.TraceError as e:
        assert not ascii_num and len(str(e).splitlines()) == 1 and len(str(e)) <= 200, str(e)[:300]
        return
    assert ascii_num and path.endswith("/clockbench-%d" % int(text))


@t.prop("kvm-trace stop ID OUT and summarize TRACE --tgid N, any ID or N: exit 2 (not a number) or 1, one line, "
        "no traceback", ids, st.booleans(), scale=0.1)
@example("²", True)
@example("²", False)
def cli_ids(text, stop):
    env = dict(os.environ, CB_TRACEFS=os.path.join(tmp, "no-tracefs"))  # nothing real is stopped
    trace = os.path.join(FX, "trace-tsc.txt")
    argv = ["stop", text, os.path.join(tmp, "out")] if stop else ["summarize", trace, "--tgid", text]
    p = subprocess.run([sys.executable, TOOL] + argv, capture_output=True, text=True, env=env, timeout=proplib.HANG)
    num = is_num(text)
    assert "Traceback" not in p.stderr, p.stderr[-1000:]
    if stop or not num:
        assert p.returncode == (1 if num else 2) and len(p.stderr.splitlines()) == 1 and len(p.stderr) < 300, \
            "exit %d: %r" % (p.returncode, p.stderr[:300])
    else:
        assert p.returncode == 0, p.stderr


t.done()
