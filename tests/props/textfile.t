#!/usr/bin/python3
# tier: slow
# test-timeout: 1800
"""textfile.t: properties of the node_exporter textfile (contract/cbcontract/textfile.py, the one writer, and
analysis/cbanalysis/prom.py's metrics of a run): any text in a run
folder's name, its files' names and every string of its results gives a textfile whose every line parses as the
exposition format, with node_clockbench_* metrics only, label values that read back as written (control
characters replaced), and that promtool check metrics accepts where promtool is installed (TAP)."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")]
import proplib  # noqa: E402  (re-executes under /usr/bin/python3 when needed)
from hypothesis import example, strategies as st  # noqa: E402

from cbanalysis import prom  # noqa: E402
from cbcontract import textfile  # noqa: E402
from cbcontract.load import load_run  # noqa: E402
from cbcontract.util import InputError  # noqa: E402

FX = os.path.join(proplib.ROOT, "tests", "analysis", "fixtures")
HV1 = os.path.join(FX, "20260101-120000-hv1")
TCG = os.path.join(FX, "20260115-000000-tcg")  # an emulated guest: left out, its path said in a comment
PROMTOOL = shutil.which("promtool")

t = proplib.Props("textfile")
made = [0]

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
VALUE = r'(?:[^"\\\n]|\\[\\"n])*'
SAMPLE = re.compile(r'^(node_clockbench_[a-zA-Z0-9_]+)(?:\{((?:[a-zA-Z_][a-zA-Z0-9_]*="%s",?)*)\})? (\S+)$' % VALUE)
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="(%s)"' % VALUE)
COMMENT = re.compile(r"^# (?:HELP (%s) [^\n]*|TYPE (%s) gauge|clockbench: [^\n]*)$" % (NAME, NAME))


def parse(text):
    """The textfile's samples [(name, {label: value})], asserting every line is the exposition format's."""
    assert text.endswith("\n"), "no final line feed"
    out = []
    for line in text[:-1].split("\n"):
        assert "\r" not in line, "a carriage return: %r" % line[:200]
        if line.startswith("#"):
            m = COMMENT.match(line)
            assert m, "not a HELP, TYPE or clockbench comment: %r" % line[:200]
            assert (m.group(1) or m.group(2) or "node_clockbench_").startswith("node_clockbench_"), line[:200]
            continue
        m = SAMPLE.match(line)
        assert m, "not a sample line: %r" % line[:200]
        float(m.group(3))
        labels = {k: re.sub(r'\\(.)', lambda x: "\n" if x.group(1) == "n" else x.group(1), v)
                  for k, v in LABEL.findall(m.group(2) or "")}
        out.append((m.group(1), labels))
    return out


# promtool checks the first PROMTOOL_MAX texts of a make check run (a Go
# process each, some 0.15 s: all 400 took a minute), every one under make
# fuzz (CB_PROP_EXAMPLES set); this file's own parser checks every text.
PROMTOOL_MAX = None if "CB_PROP_EXAMPLES" in os.environ else 40
promtool_calls = [0]


def promtool(text):
    if PROMTOOL_MAX is not None and promtool_calls[0] >= PROMTOOL_MAX:
        return
    promtool_calls[0] += 1
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=text.encode(), capture_output=True, timeout=proplib.HANG)
    assert p.returncode == 0, (p.stdout + p.stderr).decode(errors="replace")[-500:]


def seen_as(s):
    """A string as the textfile holds it, read back: control characters, bidi and zero-width characters and lone
    surrogates as U+FFFD."""
    return "".join("\ufffd" if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0 or ord(c) in (0x2028, 0x2029)
                   or ord(c) in (0x061c, 0xfeff) or 0x200b <= ord(c) <= 0x200f or 0x202a <= ord(c) <= 0x202e
                   or 0x2060 <= ord(c) <= 0x2069 and ord(c) != 0x2065
                   or 0xd800 <= ord(c) <= 0xdfff else c for c in s)


def path_ok(s):
    """A file or folder name this file system holds: no '/' or NUL, not . or .., at most 255 bytes."""
    try:
        b = os.fsencode(s)  # a name of invalid UTF-8 is read back as \udc80-\udcff (surrogateescape)
    except UnicodeEncodeError:
        return False
    return b not in (b"", b".", b"..") and b"/" not in b and b"\0" not in b and len(b) <= 200


texts = st.text(max_size=30) | st.sampled_from(['run\nnode_evil 1\n#', 'x"} 1\nnode_evil{a="', "\\", "\\n", "\r\n",
                                                "# TYPE node_evil counter", "\u2028node_evil 1", "\x00", "\x1b[2J"])


@t.prop("hostile names and strings: every line of the textfile parses, node_clockbench_* only, labels read back",
        texts.filter(path_ok), texts, texts, texts, texts)
@example("run\nnode_evil 1\n#", "hpet\nnode_evil 1", "k\r\nnode_evil 2", 'c"\\', "host-tsc.json\n")
@example("20260101-120000-hv1", "\udc80", "\ud800x", "\x85", "a\u2028b")
@example("run-\udcff\udc80", "tsc2", "k", "c", "")  # a folder name of invalid UTF-8
def hostile(run, cs, kernel, cpu, tail):
    made[0] += 1
    d = os.path.join(t.tmp, str(made[0]), run)
    os.makedirs(d)
    for src, name in ((HV1, "host-tsc.json"), (HV1, "host-hpet.json"), (TCG, "guest-tsc-1vcpu.json")):
        with open(os.path.join(src, name)) as f:
            doc = json.load(f)
        ctx = doc["bench"]["context"] if "bench" in doc else doc["context"]
        ctx.update(kernel=kernel, cpu_model=cpu, clockbench_version=tail)
        if name == "host-hpet.json":
            ctx["clocksource"] = cs or "x"
        # The contract's names, with a tail where a loose pattern would still take them (a trailing newline).
        target = name + ("\n" if tail.endswith("\n") and name.startswith("guest") else "")
        with open(os.path.join(d, target), "w", encoding="utf-8", errors="surrogatepass") as f:
            json.dump(doc, f)
    try:
        ms = load_run(d)
    except InputError as e:
        assert len(str(e).splitlines()) == 1
        t.tally("refused")
        return
    text = prom.render(ms, True)
    text.encode("utf-8")  # written as UTF-8: no lone surrogate
    samples = parse(text)
    info = [lab for n, lab in samples if n == "node_clockbench_measurement_info"]
    assert info and all(lab["run"] == seen_as(run) for lab in info), (run, info[:1])
    host = [lab for lab in info if lab.get("where") == "host" and lab.get("clocksource") != "tsc"]
    assert all(lab["kernel"] == seen_as(kernel or "n/a") for lab in host), (kernel, host)
    if PROMTOOL:
        promtool(text)
    t.tally("written")


@t.prop("textfile.esc: a label value of one line whose unescaping gives the string back (control characters replaced)",
        st.text(max_size=60))
@example("a\\nb\"\n\\\\")
def esc_round_trip(s):
    e = textfile.esc(s)
    assert "\n" not in e and "\r" not in e and re.fullmatch(VALUE, e), repr(e)
    back = re.sub(r'\\(.)', lambda x: "\n" if x.group(1) == "n" else x.group(1), e)
    assert back == seen_as(s), (s, e, back)


@t.prop("textfile.esc_help: HELP text of one line, only \\\\ and \\n escaped, that reads back; promtool takes it",
        texts)
@example('say "tsc"\\\n\r\x00')
def help_round_trip(s):
    fam = textfile.Families({"node_clockbench_x": "h" + s})  # promtool's lint wants some HELP text
    fam.add("node_clockbench_x", [("a", s)], 1)
    text = fam.text([s])
    lines = text.split("\n")
    assert len(lines) == 5 and lines[-1] == "", repr(text)
    m = re.fullmatch(r"# HELP node_clockbench_x ((?:[^\\\n]|\\[\\n])*)", lines[1])
    assert m, repr(lines[1])
    back = re.sub(r'\\(.)', lambda x: "\n" if x.group(1) == "n" else x.group(1), m.group(1))
    assert back == seen_as("h" + s), (s, lines[1], back)
    parse(text)
    if PROMTOOL:
        promtool(text)


if not PROMTOOL:
    print("# promtool not installed (Debian: prometheus): the textfiles were checked by this file's own parser only")
else:
    print("# promtool checked %d textfiles (make fuzz: every one)" % promtool_calls[0])
t.done()
