#!/usr/bin/python3
# tier: fast
"""names.t: bench/names.h, the one source of the names C, Python and shell share, read alike by each: names.py's
reading of it is what the C compiler makes of it (a small program built on its lines), what the engine's own
outputs show (--clocks names in --help, the clock and method of each CSV row, --version), and what
host-scripts/lib/version.sh and make read; no other file spells those facts again (the clocksource folder, the
clock and method lists, the devices, the guest's exit table, a version reader); names.py refuses a line of no
known shape; and each command's documented exit statuses agree with its --help."""
import csv
import io
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract")]
from cbcontract import names  # noqa: E402

t = Tap()
NAMES_H = os.path.join(ROOT, "bench", "names.h")
n = names.read_names()
FACTS = ("VERSION", "CS_SYSFS", "KMSG_DEV", "KVM_DEV", "STATE_DIR", "WATCH_RUN_DIR", "HEAL_DIR", "CS_STAND_INS")  # strings; and one number, DEBUG_EXIT_PORT


def text(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env=dict(os.environ, LC_ALL="C"), **kw)


# names.py's reading.
t.ok(n["clocks"] and n["methods"] and len(n["exits"]) == 4 and n["guest_exits"]
     and sorted(n["facts"]) == sorted(FACTS + ("DEBUG_EXIT_PORT",)),
     "names.py reads every kind of line of names.h (%d clocks, %d methods, %d exits, %d guest exits, facts %s)"
     % (len(n["clocks"]), len(n["methods"]), len(n["exits"]), len(n["guest_exits"]), sorted(n["facts"])), n)
t.ok(names.CLOCKS == tuple(c for c, _ in n["clocks"]) and names.METHODS == tuple(m for m, _ in n["methods"])
     and names.VERSION == n["facts"]["VERSION"] and names.CS_SYSFS == n["facts"]["CS_SYSFS"]
     and (names.EXIT_OK, names.EXIT_FAIL, names.EXIT_USAGE, names.EXIT_CANNOT) == (0, 1, 2, 3),
     "names.CLOCKS, METHODS, VERSION, CS_SYSFS and EXIT_* are names.h's")
t.ok(all(st == (code << 1) | 1 for code, st, _ in names.GUEST_EXITS.values()),
     "every QEMU status is (CODE << 1) | 1")
t.ok(all(names.guest_exit(st) == m for _, st, m in names.GUEST_EXITS.values())
     and names.guest_exit(124).startswith("guest timed out") and names.guest_exit(1) is None,
     "guest_exit: names.h's words for each status, timeout's for 124, none for an unknown one")

# A line that starts a fact but has none of the shapes is refused, in one line; so is a missing file.
src = text("bench/names.h")
for bad, why in (('CB_CLOCK("realtime", CLOCK_REALTIME)', 'CB_CLOCK("real time", CLOCK_REALTIME)'),
                 ('#define CB_VERSION "', '#define CB_VERSION "a\\\\'),
                 ('CB_EXIT(USAGE, 2)', 'CB_EXIT(USAGE,2)')):
    p = os.path.join(t.tmp, "bad.h")
    with open(p, "w") as f:
        f.write(src.replace(bad, why, 1))
    try:
        names.read_names(p)
        err = None
    except ValueError as e:
        err = str(e)
    t.ok(err and "\n" not in err and "no known shape" in err, "a fact line of no known shape is refused: %s" % why, err)
try:
    names.read_names(os.path.join(t.tmp, "none.h"))
    err = None
except ValueError as e:
    err = str(e)
t.ok(err and "none.h" in err, "a missing names.h is refused, naming it", err)

# Linux's clock ids (uapi/linux/time.h), against which the compiled ids are read.
CLOCK_IDS = {"CLOCK_REALTIME": 0, "CLOCK_MONOTONIC": 1, "CLOCK_MONOTONIC_RAW": 4, "CLOCK_REALTIME_COARSE": 5,
             "CLOCK_MONOTONIC_COARSE": 6, "CLOCK_BOOTTIME": 7, "CLOCK_TAI": 11}
# What the C compiler makes of the same lines (clockbench.h's enums and #defines, exit-codes.h's enum).
cc = shutil.which(os.environ.get("CC", "cc"))
if not cc:
    t.skip("no C compiler (cc): the C reading of names.h is not compared")
else:
    prog = os.path.join(t.tmp, "facts.c")
    with open(prog, "w") as f:
        f.write('#include "clockbench.h"\n#include "exit-codes.h"\nint main(void)\n{\n'
                + "".join('\tprintf("fact %s %%s\\n", CB_%s);\n' % (k, k) for k in FACTS)
                + '\tprintf("fact DEBUG_EXIT_PORT %#x\\n", CB_DEBUG_EXIT_PORT);\n'
                + '#define CB_EXIT(name, code) printf("exit %s %d\\n", #name, CB_EXIT_##name);\n'
                '#define CB_CLOCK(name, id) printf("clock %s %s %d\\n", name, #id, (int)(id));\n'
                '#define CB_METHOD(member, name, clocked) printf("method %s %d %d\\n", name, CB_##member, clocked);\n'
                '#define CB_GUEST_EXIT(name, code, meaning) printf("gx %s %d %s\\n", #name, name, meaning);\n'
                '#include "names.h"\n\treturn 0;\n}\n')
    exe = os.path.join(t.tmp, "facts")
    p = run([cc, "-std=c11", "-D_GNU_SOURCE", "-Wall", "-Werror", "-I", os.path.join(ROOT, "bench"),
             "-I", os.path.join(ROOT, "guest-init"), "-o", exe, prog])
    out = run([exe]).stdout if p.returncode == 0 else ""
    want = "".join("fact %s %s\n" % (k, n["facts"][k]) for k in FACTS + ("DEBUG_EXIT_PORT",)) \
        + "".join("exit %s %d\n" % kv for kv in n["exits"].items()) \
        + "".join("clock %s %s %d\n" % (c, i, CLOCK_IDS.get(i, -1)) for c, i in n["clocks"]) \
        + "".join("method %s %d %d\n" % (m, i, c) for i, (m, c) in enumerate(n["methods"])) \
        + "".join("gx %s %d %s\n" % (g, code, mean) for g, (code, mean) in n["guest_exits"].items())
    t.ok(p.returncode == 0 and out == want,
         "the C compiler reads names.h as names.py does: facts, exit statuses, clocks (with Linux's ids), methods "
         "(enum cb_method, clocked), the guest's exit codes (exit-codes.h's enum)",
         p.stderr[-800:] + "".join("C: %s\npy: %s\n" % ab for ab in zip(out.splitlines(), want.splitlines()) if ab[0] != ab[1]))

# The engine's own outputs.
engine = os.path.join(ROOT, "bench", "clockbench")
if not os.access(engine, os.X_OK):
    t.skip("bench/clockbench not built (make all)")
else:
    h = run([engine, "--help"]).stdout
    m = re.search(r"clocks: ([a-z_ ]+?), or all", re.sub(r"\s+", " ", h))
    t.ok(m and tuple(m.group(1).split()) == names.CLOCKS, "clockbench --help lists names.CLOCKS, in order",
         m and m.group(1))
    p = run([engine, "--clocks", "all", "--methods", "all", "--threads", "1", "--duration", "0.01", "--format", "csv",
             "--quiet"], cwd=t.tmp)
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    seen_c = tuple(dict.fromkeys(r["clock"] for r in rows if r["clock"]))
    seen_m = tuple(dict.fromkeys(r["method"] for r in rows))
    clocked = tuple(dict.fromkeys(r["method"] for r in rows if r["clock"]))
    t.ok(p.returncode == 0 and seen_c == names.CLOCKS and seen_m == names.METHODS and clocked == names.CLOCKED_METHODS
         and all(r["clock"] == "" for r in rows if r["method"] not in clocked),
         "a run of every clock and method: its rows' clocks are names.CLOCKS, methods names.METHODS, "
         "those with a clock names.CLOCKED_METHODS, in order",
         "exit %d: clocks %s, methods %s, clocked %s %s" % (p.returncode, seen_c, seen_m, clocked, p.stderr[-300:]))
    v = run([engine, "--version"]).stdout
    t.ok(v == "clockbench %s\n" % names.VERSION, "clockbench --version is names.h's version", v)

# The shell's reader (version.sh's cb_fact) and make's.
sh = run(["bash", "-c", '. host-scripts/lib/version.sh && for f; do printf "%s=%s\\n" "$f" "$(cb_fact "$f")"; done',
          "-"] + list(FACTS), cwd=ROOT)
t.ok(sh.stdout == "".join("%s=%s\n" % (k, n["facts"][k]) for k in FACTS) and not sh.stderr,
     "host-scripts/lib/version.sh's cb_fact reads each fact as names.py does", sh.stdout + sh.stderr)
mk = run(["make", "-pnq", "--no-print-directory", "help-packaging"], cwd=ROOT).stdout
mv = re.findall(r"^CB_VERSION := (.*)$", mk, re.M)
t.ok(mv == [names.VERSION], "packaging.mk's CB_VERSION is names.h's (%s)" % names.VERSION, mv)

# Nobody writes these facts by hand again.  Checked: every text file of the
# checkout but names.h itself, the tests, the docs (prose: *.md, docs/, the
# man pages' .h2m) and what is built or measured.  PENDING: copies in files
# of other owners, to be switched to the one source and then struck here.
HAND = (
    ("the clocksource folder", re.compile(r"devices/system/clocksource/clocksource0")),
    ("the clock list", re.compile(r"""["']realtime["'],\s*["']monotonic["']|realtime monotonic monotonic_raw""")),
    ("the method list", re.compile(r"""["']vdso["'],\s*["']syscall["']""")),
    ("the bracket's state folder", re.compile(r"/run/clockbench\b")),
    ("a device path", re.compile(r"""[(=,]\s*["']/dev/(kvm|kmsg)["']|:-/dev/(kvm|kmsg)\b""")),
    ("the debug-exit port", re.compile(r"isa-debug-exit,iobase=0x|#define \w*DEBUG_EXIT_PORT\b")),
    ("the guest's exit table", re.compile(r"engine output missing or unreadable|\bGX\(GX_")),
    ("a reader of the version", re.compile(r"define CB_VERSION")),
)
PENDING = {}
SKIP_DIRS = {".git", "build", "results", "tests", "docs", "__pycache__", ".hypothesis", "corpus"}


def hand_copies(top):
    """{(what, rel)} where a file under top spells a shared fact by hand."""
    found = set()
    for d, dirs, files in os.walk(top):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS]
        for f in files:
            rel = os.path.relpath(os.path.join(d, f), top)
            if rel == os.path.join("bench", "names.h") or f.endswith((".md", ".h2m")):
                continue
            try:
                with open(os.path.join(d, f), "rb") as fh:
                    data = fh.read(1 << 20)
            except OSError:
                continue
            if b"\0" in data:
                continue  # a binary: the engine holds the path it was built with
            s = data.decode("utf-8", "replace")
            found.update((what, rel) for what, rx in HAND if rx.search(s))
    return found


copies = hand_copies(ROOT)
extra = sorted((what, rel) for what, rel in copies if rel not in PENDING)
t.ok(not extra, "no file spells a shared fact of names.h by hand (%d copies await their owners: %s)"
     % (len(PENDING), ", ".join(sorted(PENDING))), "\n".join("%s: %s" % (rel, what) for what, rel in extra))
gone = sorted(set(PENDING) - {rel for _, rel in copies})
if gone:
    t.diag("switched, to be struck from PENDING: %s" % ", ".join(gone))
# The search itself finds each kind of copy.
fake = os.path.join(t.tmp, "tree")
os.makedirs(os.path.join(fake, "tests"))
for rel, body in (("a.py", 'CS = "/sys/devices/system/clocksource/clocksource0"\n'),
                  ("b.c", 'static const char *c[] = { "realtime", "monotonic" };\n'),
                  ("c.py", 'M = ("vdso", "syscall")\n'), ("d.sh", 'dev=${KVM:-/dev/kvm}\n'),
                  ("e.py", 'X = {"GX_OUTPUT": (5, 11, "engine output missing or unreadable")}\n'),
                  ("f.mk", "V := $(shell sed -n 's/^\\#define CB_VERSION \"\\(.*\\)\"/\\1/p' x.h)\n"),
                  ("h.c", "#define DEBUG_EXIT_PORT 0xf4\n"),
                  ("notes.md", "/sys/devices/system/clocksource/clocksource0\n"),
                  ("tests/g.t", 'CS = "/sys/devices/system/clocksource/clocksource0"\n')):
    with open(os.path.join(fake, rel), "w") as f:
        f.write(body)
got = hand_copies(fake)
t.ok(sorted(rel for _, rel in got) == ["a.py", "b.c", "c.py", "d.sh", "e.py", "f.mk", "h.c"] and len(got) == 7,
     "the search finds a copy of each kind, and none in prose or tests", sorted(got))

# Each command's documented exit statuses.
# The engine, then each verb's program (packaging/commands: verb, program, description).
cmds = [("clockbench", "bench/clockbench")] + [ln.split()[:2] for ln in text("packaging/commands").splitlines()
                                                if ln.strip() and not ln.startswith("#") and "/" in ln.split()[1]]
t.ok(sorted(c[0] for c in cmds) == sorted(names.EXIT_STATUS),
     "names.EXIT_STATUS has the engine and every verb of packaging/commands, no other", sorted(c[0] for c in cmds))
for name, src in cmds:
    p = subprocess.run([os.path.join(ROOT, src), "--help"], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, LC_ALL="C"))
    sec = p.stdout.split("\nExit status:\n", 1)
    codes = re.findall(r"^  (\d+|128\+N)\s", sec[1].split("\n\n", 1)[0], re.M) if len(sec) == 2 else []
    codes = tuple(int(c) if c.isdigit() else c for c in codes)
    t.ok(codes == names.EXIT_STATUS.get(name), "%s --help documents exit statuses %s" % (name, names.EXIT_STATUS.get(name)),
         "its --help: %s (exit %d)" % (codes or "no Exit status: section", p.returncode))
t.done()
