#!/usr/bin/python3
# tier: slow
# test-timeout: 1800
"""loader.t: properties of the result loader's limits (contract/cbcontract/load.py) on hostile shapes: numbers
past a double or 2^64, lone surrogates, huge values and keys, control characters, spliced into the fixtures'
files; FIFOs, devices, folders and oversized files in place of a result: a measurement holding only finite
numbers and real text, or one InputError line of bounded length, never a hang (TAP)."""
import json
import os
import re
import stat
import sys

sys.dont_write_bytecode = True
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")]
import proplib  # noqa: E402  (re-executes under /usr/bin/python3 when needed)
from hypothesis import example, strategies as st  # noqa: E402

from cbcontract import load, util  # noqa: E402
from cbanalysis import prom  # noqa: E402
from cbcontract.util import InputError  # noqa: E402

FX = os.path.join(proplib.ROOT, "tests", "analysis", "fixtures")
HOST = open(os.path.join(FX, "20260101-120000-hv1", "host-hpet.json")).read()
GUEST = open(os.path.join(FX, "20260101-120000-hv1", "guest-hpet-2vcpu.json")).read()
TRACE = open(os.path.join(FX, "20260101-120000-hv1", "kvm-trace-hpet-2vcpu.json")).read()
MAX_MESSAGE = getattr(util, "MAX_MESSAGE", 360)  # docs/analysis.md: a message's bound
MAX_FILE = getattr(load, "MAX_FILE", 64 << 20)  # the loader's size bound, 64 MiB
SURROGATE = re.compile("[\ud800-\udfff]")

t = proplib.Props("loader")
made = [0]


def folder(files):
    made[0] += 1
    d = os.path.join(t.tmp, str(made[0]), "20260101-120000-hv1")
    os.makedirs(d)
    for n, data in files.items():
        with open(os.path.join(d, n), "wb") as f:
            f.write(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    return d


def clean(v):
    """Every number finite and within 2^64, every string and key free of lone surrogates."""
    todo = [v]
    while todo:
        x = todo.pop()
        if isinstance(x, dict):
            todo += list(x.keys()) + list(x.values())
        elif isinstance(x, list):
            todo += x
        elif isinstance(x, float):
            assert x == x and abs(x) != float("inf"), x
        elif isinstance(x, int) and not isinstance(x, bool):
            assert abs(x) <= 2 ** 64, x
        elif isinstance(x, str):
            assert not SURROGATE.search(x), ascii(x[:80])


def verdict(d):
    """load_run(d): measurements of clean documents whose textfile renders, or one bounded InputError line."""
    try:
        ms = load.load_run(d)
    except InputError as e:
        msg = str(e)
        assert len(msg.splitlines()) == 1 and len(msg) <= MAX_MESSAGE, "%d characters: %r" % (len(msg), msg[:300])
        t.tally("refused")
        return
    for m in ms:
        clean(m.doc)
        clean(m.guest)
        clean(m.launcher)
    prom.render(ms).encode("utf-8")
    t.tally("read")


# ---- hostile tokens spliced into the fixtures' text ----

TOKENS = st.sampled_from([
    "1e400", "-1e400", "1" + "0" * 400, "-" + "9" * 30, "18446744073709551617", "1E+309", "4.9e-325",
    '"\\ud800"', '"a\\udfffb"', '"\\udc00\\ud800"', '"\\ud83d\\ude00"', '"\\u0000\\u001b[31m\\r\\n"',
    '"' + "x" * 200000 + '"', "[" * 50 + "]" * 50, '{"' + "k" * 100000 + '": 1}',
]) | st.integers(-2 ** 70, 2 ** 70).map(str) | st.text(max_size=40).map(json.dumps) \
    | st.text(alphabet=st.characters(min_codepoint=0xd800, max_codepoint=0xdfff), min_size=1, max_size=3).map(
        lambda s: json.dumps(s))

VALUE = re.compile(r'(?<=: )(-?[0-9][0-9.eE+-]*|"(?:[^"\\]|\\.)*"|true|false|null)')


@st.composite
def spliced(draw):
    """(file name, text): a fixture file with 1-3 of its values replaced by hostile tokens."""
    name, text = draw(st.sampled_from([("host-hpet.json", HOST), ("guest-hpet-2vcpu.json", GUEST),
                                       ("kvm-trace-hpet-2vcpu.json", TRACE)]), label="file")
    spans = [m.span() for m in VALUE.finditer(text)]
    for _ in range(draw(st.integers(1, 3), label="changes")):
        a, b = draw(st.sampled_from(spans), label="value")
        tok = draw(TOKENS, label="token")
        text = text[:a] + tok + text[b:]
        spans = [m.span() for m in VALUE.finditer(text)]
    return name, text


def files_of(name, text):
    base = {"guest-hpet-2vcpu.json": GUEST, "kvm-trace-hpet-2vcpu.json": TRACE}
    if name == "host-hpet.json":
        return {name: text}
    base[name] = text
    return base


@t.prop("hostile numbers, surrogates, huge values spliced into a result: clean measurements or one short line",
        spliced())
@example(("host-hpet.json", HOST.replace('"tsc_mhz": 2500.0', '"tsc_mhz": 1e400', 1)))
@example(("host-hpet.json", HOST.replace('"threads": 1,', '"threads": 1' + "0" * 400 + ",", 1)))
@example(("host-hpet.json", HOST.replace('"clocksource": "hpet"', '"clocksource": "\\ud800"', 1)))
@example(("guest-hpet-2vcpu.json", GUEST.replace('"qemu_version": "', '"qemu_version": "\\udfff', 1)))
def hostile_values(case):
    verdict(folder(files_of(*case)))


# ---- not a regular file, or too big ----

@t.prop("a FIFO, device, socket, folder, dangling link or oversized file as a result: one line, never a hang",
        st.sampled_from(["fifo", "dev-zero", "dev-null", "folder", "dangling", "sparse-big", "socket"]),
        st.sampled_from(["host-tsc.json", "guest-tsc-2vcpu.json", "kvm-trace-hpet-2vcpu.json"]), scale=0.1)
def not_regular(kind, name):
    d = folder({"guest-hpet-2vcpu.json": GUEST} if name.startswith("kvm-trace") else {})
    p = os.path.join(d, name)
    if kind == "fifo":
        os.mkfifo(p)
    elif kind.startswith("dev-"):
        os.symlink("/dev/" + kind[4:], p)
    elif kind == "folder":
        os.mkdir(p)
    elif kind == "dangling":
        os.symlink(os.path.join(d, "nowhere"), p)
    elif kind == "socket":
        import socket
        s = socket.socket(socket.AF_UNIX)
        try:
            s.bind(p)
        except OSError:
            return
        finally:
            s.close()
    else:
        with open(p, "wb") as f:
            f.truncate(MAX_FILE + 1)
    try:
        load.load_run(d) if not name.startswith("kvm-trace") else load.load_trace(p)
    except InputError as e:
        assert len(str(e).splitlines()) == 1 and len(str(e)) <= MAX_MESSAGE, str(e)[:300]
        t.tally("refused")
        return
    assert kind in ("folder", "dangling") and not stat.S_ISFIFO(os.lstat(p).st_mode), kind
    t.tally("no result there")


t.done()
