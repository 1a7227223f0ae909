#!/usr/bin/python3
# tier: fast
"""docs.t: the docs say what the code does, where a test can read both sides.  Every run folder
the docs cite is under results/ (and each file they name in it); every entry of
docs/measurements.md names its date, its machine and its run folder, or says plainly that none was
kept; every `make ... NAME=VALUE` the docs show, and every `NAME=VALUE` they show alone, is a
setting make takes (the Makefile's SETTINGS) for each target the line names (packaging/settings), or an
environment variable the docs describe; and
every option the docs show beside one of the suite's commands is in that command's --help; each
program answers --help and lists --version there if it takes it (its man page is made from
--help: tests/packaging/man.t holds the page to it)."""
import glob
import os
import re
import shlex
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "contract"))
from cbcontract import settingtable  # noqa: E402

t = Tap()
DOCS = sorted(["README.md", "lab/README.md", "tests/host-scripts/fixtures/lab/README.md"]
              + [os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md"))]
              + [os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "packaging", "man", "*.h2m"))])
text = {d: open(os.path.join(ROOT, d), encoding="utf-8").read() for d in DOCS}


def where(doc, pos):
    return "%s:%d" % (doc, text[doc].count("\n", 0, pos) + 1)


# Run folders: results/<date>-<name>[/file], a pattern (with *) or a placeholder (<run-id>) aside.
RUN = re.compile(r"results/([0-9]{8}-[A-Za-z0-9_-]+)((?:/[A-Za-z0-9_.-]+)*)(?![A-Za-z0-9_*<-])")
cited, missing = set(), []
for d in DOCS:
    for m in RUN.finditer(text[d]):
        if text[d][m.end():m.end() + 1] == "*":
            continue
        path = os.path.join("results", m.group(1) + m.group(2))
        cited.add(m.group(1))
        if not os.path.lexists(os.path.join(ROOT, path)):
            missing.append("%s %s" % (where(d, m.start()), path))
t.ok(len(cited) >= 20 and not missing, "every run folder the docs cite is under results/ (%d folders cited)%s"
     % (len(cited), "; not there: " + ", ".join(missing[:8]) if missing else ""))

# docs/measurements.md: each entry's lines of provenance (a paragraph that starts with the date and
# separates its fields with " · ") name a machine and a run folder that is there, or say that none
# was kept.
M = "docs/measurements.md"
NONE_KEPT = "no run folder kept"
sections = re.split(r"\n(?=## )", text[M])
entries, bad = 0, []
for sec in sections[1:]:
    title = sec.splitlines()[0]
    if title == "## The machines":
        continue
    entries += 1
    heads = [p for p in re.split(r"\n\s*\n", sec) if re.match(r"20[0-9]{2}-[0-9]{2}-[0-9]{2}\b", p) and " · " in p]
    if not heads:
        bad.append("%s: no line of date, machine and run folder" % title)
    for h in heads:
        one = " ".join(h.split())
        runs = [m.group(1) for m in RUN.finditer(h)]
        if "machine" not in one and "L1" not in one:
            bad.append("%s: no machine in %r" % (title, one[:80]))
        if not runs and NONE_KEPT not in one:
            bad.append("%s: no run folder, nor %r, in %r" % (title, NONE_KEPT, one[:80]))
t.ok(entries >= 15 and not bad, "each of the %d entries of %s names its date, machine and run folder (or %r)%s"
     % (entries, M, NONE_KEPT, "; " + "; ".join(bad[:8]) if bad else ""))

# make's settings, as the Makefile lists them, and make's own.
def make_value(name):
    p = subprocess.run(["make", "-s", "--no-print-directory", "-f", "Makefile", "-f", "-", "print"], cwd=ROOT,
                       input="print: ; @echo $(%s)\n" % name, capture_output=True, text=True)
    return set(p.stdout.split())


settings = make_value("SETTINGS") | make_value("MAKE_OWN")
takes = {r.name: r.targets for r in settingtable.load()}
# What the docs show as NAME=VALUE that is not make's: the environment of the tests and of the
# programs the docs describe (CB_* test hooks, CLOCKBENCH_*), the kernel's config, placeholders.
ENV_NAMES = re.compile(r"(CB_|CLOCKBENCH_|CONFIG_)[A-Z0-9_]+|NAME|KEY|LABEL|PATH|LC_ALL|COLUMNS")
CODE = re.compile(r"`([^`\n]+)`")
SH = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)
ASSIGN = re.compile(r"(?<![A-Za-z0-9_.-])([A-Za-z_][A-Za-z0-9_]*)=")
spans = []  # (doc, position, code)
for d in DOCS:
    spans += [(d, m.start(), m.group(1)) for m in CODE.finditer(text[d])]
    for b in SH.finditer(text[d]):
        for i, line in enumerate(b.group(1).splitlines()):
            spans.append((d, b.start(1), line.split("#")[0]))
made, unknown = 0, []
for d, pos, code in spans:
    try:
        words = shlex.split(code)
    except ValueError:
        words = code.split()
    if "make" in words[:3]:
        after = words[words.index("make") + 1:]
        names = [ASSIGN.match(w).group(1) for w in after if ASSIGN.match(w)]
        made += 1
        unknown += ["%s %s=" % (where(d, pos), n) for n in names if n not in settings]
        # ... and a setting of each target named (packaging/settings), as make refuses another.
        goals = [w for w in after if not ASSIGN.match(w) and re.fullmatch(r"[a-z][a-z-]*", w)] or ["all"]
        unknown += ["%s make %s %s=" % (where(d, pos), g, n) for n in names for g in goals
                    if n in takes and "*" not in takes[n] and g not in takes[n]]
        continue
    elif words and ASSIGN.match(words[0]) and words[0].split("=")[0].isupper():
        names = [ASSIGN.match(w).group(1) for w in words if ASSIGN.match(w) and w.split("=")[0].isupper()]
        # NAME=VALUE before a command other than make: that command's environment.
        if len(words) > len(names) and words[len(names)] != "make":
            names = []
    else:
        continue
    for n in names:
        if n not in settings and not ENV_NAMES.fullmatch(n):
            unknown.append("%s %s=" % (where(d, pos), n))
t.ok(made >= 20 and not unknown, "every NAME= of the %d make lines the docs show, and every NAME=VALUE shown alone, "
     "is a setting make takes, for the target named%s" % (made, "; not: " + ", ".join(unknown[:8]) if unknown else ""))

# Options shown beside one of the suite's commands are in its --help (a verb's subcommand's own
# --help for clockbench report SUB and clockbench clocksource/trace SUB).
VERBS = {}
for line in open(os.path.join(ROOT, "packaging", "commands")):
    if line.strip() and not line.startswith("#"):
        verb, prog = line.split()[:2]
        VERBS[verb] = prog if "/" in prog else VERBS[prog]  # an alias runs the verb it names
PROGS = {"bench/clockbench": None, "analysis/clockbench-report": "report", "lab/run-lab": "lab/run-lab",
         "lab/provoke": "lab/provoke"}
PROGS.update({prog: verb for verb, prog in VERBS.items()})
helps = {}


def help_opts(argv):
    key = tuple(argv)
    if key not in helps:
        p = subprocess.run(argv + ["--help"], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL,
                           env=dict(os.environ, COLUMNS="80"))
        helps[key] = set(re.findall(r"(?<![A-Za-z0-9-])--[a-z][a-z0-9-]*[a-z0-9]", p.stdout)) if p.returncode == 0 \
            else None
    return helps[key]


def command_of(words):
    """(argv for --help, the words after it) of a span that runs one of the suite's commands, else None."""
    while words and (words[0] == "sudo" or ASSIGN.match(words[0])):
        words = words[1:]
    if not words:
        return None
    w0 = words[0].lstrip("./")
    if w0 == "clockbench" and len(words) > 1 and words[1] in VERBS:
        prog, rest = VERBS[words[1]], words[2:]
    elif w0 == "clockbench":
        prog, rest = "bench/clockbench", words[1:]
    elif w0 in PROGS or w0 in VERBS.values():
        prog, rest = w0, words[1:]
    else:
        return None
    argv = [os.path.join(ROOT, prog)]
    # Commands with subcommands: their --help is the subcommand's own.
    if prog in ("analysis/clockbench-report", "host-scripts/clocksource", "host-scripts/kvm-trace") and rest \
            and re.fullmatch(r"[a-z][a-z-]*", rest[0]):
        argv.append(rest[0])
        rest = rest[1:]
    return argv, rest


shown, absent = 0, []
for d, pos, code in spans:
    c = command_of(code.split())
    if not c:
        continue
    argv, rest = c
    opts = {w.split("=")[0] for w in rest if re.fullmatch(r"--[a-z][a-z0-9-]*[a-z0-9](=.*)?", w)}
    if not opts:
        continue
    have = help_opts(argv)
    shown += 1
    name = " ".join(os.path.relpath(a, ROOT) if a.startswith(ROOT) else a for a in argv)
    if have is None:
        absent.append("%s %s --help failed" % (where(d, pos), name))
        continue
    for o in sorted(opts - have):
        absent.append("%s %s %s" % (where(d, pos), name, o))
t.ok(shown >= 20 and not absent, "every option of the %d command lines the docs show is in its command's --help%s"
     % (shown, "; not: " + ", ".join(absent[:8]) if absent else ""))

# crosscheck's peers, as its --help names them (each workload "beside" a tool), are named wherever
# the docs say what it runs beside, and the README names each package it needs beyond make deps's.
cc = subprocess.run([os.path.join(ROOT, "host-scripts", "crosscheck"), "--help"], capture_output=True, text=True).stdout
peers = sorted(set(re.findall(r"^  [a-z][a-z-]+ +.*?\bbeside (\w+)", cc, re.M)))
own = set(subprocess.run([os.path.join(ROOT, "host-scripts", "deps"), "--list", "bench"], capture_output=True,
                         text=True).stdout.split())
pkgs = sorted(set(subprocess.run([os.path.join(ROOT, "host-scripts", "deps"), "--list", "crosscheck"],
                                 capture_output=True, text=True).stdout.split()) - own)
lines = [("packaging/commands", l) for l in open(os.path.join(ROOT, "packaging", "commands")) if l.startswith("crosscheck ")]
lines += [(d, l) for d in DOCS for l in text[d].splitlines() if re.search(r"crosscheck\b.*\bbeside\b", l)]
lines += [("Makefile", l) for l in open(os.path.join(ROOT, "Makefile")) if l.startswith("\t@echo \"make crosscheck")]
lack = ["%s: %s" % (d, p) for d, l in lines for p in peers if p not in l]
row = [l for l in text["README.md"].splitlines() if l.startswith("|") and "`clockbench crosscheck`" in l]
lack += ["README.md: package %s" % p for p in pkgs for l in row if p not in l]
t.ok(len(peers) >= 3 and len(lines) >= 3 and row and not lack,
     "crosscheck's peers (%s) are named where the docs say what it runs beside (%d lines), and its packages (%s) "
     "in the README%s" % (", ".join(peers), len(lines), ", ".join(pkgs), "; missing: " + "; ".join(lack) if lack else ""))

# Each of the suite's programs answers --help (exit 0, a text on stdout), and one that answers
# --version lists it there: a man page, made from --help, then names every option it takes.
progs = ["bench/clockbench", "lab/run-lab", "lab/provoke"] + sorted(set(VERBS.values()))
bad = []
for prog in progs:
    argv = [os.path.join(ROOT, prog)]
    p = subprocess.run(argv + ["--help"], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    v = subprocess.run(argv + ["--version"], cwd=ROOT, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if p.returncode != 0 or not p.stdout.strip():
        bad.append("%s --help: exit %d %s" % (prog, p.returncode, (p.stderr.strip().splitlines() or [""])[0][:80]))
    elif v.returncode == 0 and not re.search(r"(?<![a-z-])--version\b", p.stdout):
        bad.append("%s: --version works, its --help does not list it" % prog)
t.ok(not bad, "each of the %d programs answers --help, and lists --version where it takes it%s"
     % (len(progs), "; " + "; ".join(bad) if bad else ""))
# The README's Commands: one unbroken table, and each verb (not an alias) in its installed column.
sec = text["README.md"].split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
runs = re.findall(r"(?:^\|.*\n)+", sec, re.M)
own = sorted(v for v, prog in VERBS.items() if v == os.path.basename(prog) or prog.startswith("analysis/"))
absent = [v for v in own if not runs or not re.search(r"`(sudo )?clockbench %s[` ]" % re.escape(v), runs[0])]
t.ok(len(runs) == 1 and len(own) >= 10 and not absent,
     "the README's Commands are one table (%d found) naming each of the %d verbs installed%s"
     % (len(runs), len(own), "; not there: " + ", ".join(absent) if absent else ""))
t.done()
