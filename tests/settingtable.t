#!/usr/bin/python3
# tier: fast
"""settingtable.t: packaging/settings, the one table of the settings, agrees with what the commands say.
Each row is well formed (a known HOW and value kind, targets that are make targets, one row a name); each
command's --help shows, for each of its options in the table, the table's default for that command where it
shows one; docs/settings.md holds the table as cbcontract.settingtable renders it.  (tests/settings.t holds
each command's options to the table's, both ways; tests/make-settings.t what make does with it.)  The checks
are first run on a table with a row added in one place only, so that each is seen to fail."""
import os
import re
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "contract"))
from cbcontract import settingtable  # noqa: E402

t = Tap()
rows = settingtable.load()
COMMANDS = (("bench-host", "host-scripts/bench-host"), ("bench-guest", "host-scripts/bench-guest"),
            ("compare", "host-scripts/bench"), ("crosscheck", "host-scripts/crosscheck"), ("lab", "lab/run-lab"))
OPT = re.compile(r"^ {1,8}(?:-[a-zA-Z], )?(--[a-z0-9-]+)")
SHOWN = re.compile(r"\[([^\]]+)\]$|[(;,] ?default:? ([^),;]+)|(\S+) \(the default")


def blocks(text):
    """{--option: its --help text in one line}."""
    out, cur = {}, None
    for line in text.splitlines():
        m = OPT.match(line)
        if m:
            cur = m.group(1)
            out[cur] = line[m.end():]
        elif cur and line.startswith("  ") and line.strip():
            out[cur] += " " + line.strip()
        else:
            cur = None
    return {k: " ".join(v.split()) for k, v in out.items()}


helps = {target: blocks(subprocess.run([os.path.join(ROOT, prog), "--help"], capture_output=True, text=True,
                                       timeout=60).stdout) for target, prog in COMMANDS}


def default_faults(table):
    """Each option whose command's --help shows a default other than the table's for that command."""
    bad = []
    for target, _ in COMMANDS:
        for r in settingtable.of(target, rows=table):
            m = SHOWN.search(helps[target].get(r.option, ""))
            shown = next(g for g in m.groups() if g).strip() if m else None
            if r.default(target) != "-" and shown is not None and shown != r.default(target):
                bad.append("%s %s: --help says %s, the table %s" % (target, r.option, shown, r.default(target)))
            if r.default(target) != "-" and r.option in helps[target] and shown is None:
                bad.append("%s %s: --help shows no default, the table %s" % (target, r.option, r.default(target)))
    return bad


def row_faults(table):
    names = [r.name for r in table]
    bad = ["%s: %d rows" % (n, names.count(n)) for n in sorted(set(names)) if names.count(n) > 1]
    for r in table:
        if r.how not in ("option", "flag", "make", "env", "build"):
            bad.append("%s: HOW %s" % (r.name, r.how))
        try:
            [r.kind(x) for x in r.types]
        except KeyError:
            bad.append("%s: TYPE %s" % (r.name, r.types))
        bad += ["%s: %s is no make target" % (r.name, x) for x in r.targets if x != "*" and x not in make_targets]
        bad += ["%s: %s= is for a target it lacks" % (r.name, x) for x in list(r.defaults) + list(r.types)
                if x and x not in r.targets]
    return bad


p = subprocess.run(["make", "-qp"], cwd=ROOT, capture_output=True, text=True, timeout=120)
make_targets = set(re.findall(r"^([a-z][a-z-]*):(?!=)", p.stdout, re.M))
DOC = os.path.join(ROOT, "docs", "settings.md")
doc = open(DOC, encoding="utf-8").read()

# First on a table with one fault of each kind: each check fails.
fake = settingtable.Setting("LATENCY", ("bench-host", "nowhere"), "option", {"": "int:1-9"}, {"": "7", "compare": "1"}, "x")
wrong = [r._replace(defaults={"": "2s"}) if r.name == "DURATION" else r for r in rows]
t.ok(settingtable.markdown(rows + [fake]) not in doc and len(row_faults(rows + [fake])) == 2
     and default_faults(wrong), "the checks, on a table with a row added in one place only and a default changed, fail")

t.ok(len(rows) >= 70 and not row_faults(rows), "packaging/settings: %d rows, one a name, each HOW, value and target "
     "known" % len(rows), "\n".join(row_faults(rows)))
bad = default_faults(rows)
t.ok(not bad, "each command's --help shows the table's default for it (%s)" % ", ".join(c for c, _ in COMMANDS),
     "\n".join(bad))
t.ok(settingtable.markdown(rows) in doc, "docs/settings.md holds the table as it is (python3 -m "
     "cbcontract.settingtable, from contract/)")
bad = []
for target in ("bench-guest", "bench-host", "compare", "crosscheck", "lab"):
    flat = {k: "".join(v.split()) for k, v in helps[target].items()}
    bad += ["%s %s" % (target, r.option) for r in settingtable.of(target, rows=rows)
            if r.option in flat and "".join(r.help(target).split()) not in flat[r.option]]
t.ok(not bad, "each command's --help: each setting's text, kind and default the table's", bad)
# The guest's /init defaults what it is not given: its literals are the table's (C reads no table).
init = open(os.path.join(ROOT, "guest-init", "init.c"), encoding="utf-8").read()
lit = dict(re.findall(r'p->(duration|check) \? p->\1 : "([^"]*)"', init))
want = {k.lower(): r.default("bench-guest") for r in rows for k in ("DURATION", "CHECK") if r.name == k}
t.ok(lit == want, "guest-init/init.c's defaults for the engine are the table's for bench-guest: %s" % lit, want)
t.done()
