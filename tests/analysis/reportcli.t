#!/usr/bin/python3
# tier: fast
"""reportcli.t: clockbench-report's command line: every option and argument described in --help (the
argparse list against the help text), RUN as a path or a run id under --results for every command taking
one, each command's --help with its own usage line, capacity --ns without a tsc figure planned against a measured one (named) or told it needs one,
summary --report-out (the summary and the report in one process, a failed part said and not stopping the other),
report --out DIR never replacing a report.md it did not write, and
a 4000-character value cut in every error (one line, no 80-character run of it)."""
import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, LAB, TOOL, WL, Tap, report_in_process, table_row  # noqa: E402

t = Tap()


def tool(*args, cwd=None):
    """The tool from a folder outside the checkout (t.tmp): no relative path
    of the checkout helps it.  Its main() in this process, as its process
    runs it (taplib.report_in_process; a start costs more than most calls)."""
    return report_in_process(args, cwd=cwd or t.tmp, reraise=())


# ---- help: every option of every command described, and shown ----
loader = importlib.machinery.SourceFileLoader("clockbench_report", TOOL)
spec = importlib.util.spec_from_loader("clockbench_report", loader)
cli = importlib.util.module_from_spec(spec)
loader.exec_module(cli)
top = cli.parser()
subs = next(a for a in top._actions if a.__class__.__name__ == "_SubParsersAction").choices
subs = {n: p for n, p in subs.items() if n != "compare"}  # diff's old name, until the next release (compare.t)
missing, unshown = [], []
helps = {}  # each command's --help, run once: (exit status, stdout)
for name, p in [("", top)] + sorted(subs.items()):
    rc, text, se = tool(*([name] if name else []) + ["--help"])
    helps[name] = rc, text
    flat = " ".join(text.split())
    for a in p._actions:
        if a.__class__.__name__ == "_SubParsersAction":
            continue
        what = "/".join(a.option_strings) or a.metavar or a.dest
        if not a.help or a.help == "==SUPPRESS==" or not a.help.strip():
            missing.append("%s %s" % (name or "(top)", what))
        for o in a.option_strings or [a.metavar or a.dest]:
            if not re.search(r"(^|[\s\[,])%s([\s\],=]|$)" % re.escape(o), text):
                unshown.append("%s %s" % (name or "(top)", o))
        # The help text itself reaches --help (argparse wraps it: compared without line breaks).
        if a.help and a.help != "==SUPPRESS==" and " ".join((a.help % {"default": a.default}).split())[:40] not in flat:
            unshown.append("%s %s: its description" % (name or "(top)", what))
    if rc != 0:
        unshown.append("%s --help: exit %d" % (name, rc))
t.ok(len(subs) == 7 and not missing, "every option and argument of every command has a description (%d commands)"
     % len(subs), "\n".join(missing))
t.ok(not unshown, "each command's --help shows every option it takes, with its description", "\n".join(unshown))
wrong = []
for name in sorted(subs):
    rc, text = helps[name]
    first = text.splitlines()[0] if text else ""
    if rc != 0 or not first.startswith("Usage: clockbench-report %s " % name) or text.count("Usage:") != 1:
        wrong.append("%s --help: %s" % (name, first))
t.ok(len(subs) == 7 and not wrong, "each command's --help begins 'Usage: clockbench-report <its name>', once",
     "\n".join(wrong))
runs = [(n, a) for n, p in subs.items() for a in p._actions if a.metavar in ("RUN", "BEFORE", "AFTER")]
rc, text = helps[""]
t.ok(len(runs) == 6 and all("run id" in a.help and "--results" in a.help for _, a in runs)
     and "run id alone" in text and "looked up under --results" in text,
     "RUN, BEFORE and AFTER are described in every command (%d) and in --help: a path, or a run id under --results"
     % len(runs), [(n, a.help) for n, a in runs])

# ---- RUN as a run id under --results, from a folder outside the checkout ----
res = os.path.join(t.tmp, "res")
for d in (BEFORE, LAB, WL):
    shutil.copytree(d, os.path.join(res, os.path.basename(d)))
b, lab = os.path.basename(BEFORE), os.path.basename(LAB)
cases = (("report", ["report", "--no-plots", "-o", os.path.join(t.tmp, "rep"), "--results", res, b], "report.md"),
         ("diff", ["diff", "--results", res, b, lab], "# clockbench diff: %s -> %s" % (b, lab)),
         ("capacity", ["capacity", "--results", res, b], "guest 2 vCPU, host on hpet"),
         ("prom", ["prom", "--results", res, "-o", os.path.join(t.tmp, "x.prom"), b], ""),
         ("summary", ["summary", "--results", res, b], "hpet"))
for what, args, want in cases:
    rc, so, se = tool(*args)
    t.ok(rc == 0 and want in so, "%s --results DIR RUN_ID: the run found there" % what, (rc, se[:300]))
t.ok(os.path.isfile(os.path.join(res, b, "summary.md")), "summary by run id wrote the run's summary.md")
rc, so, se = tool("capacity", "--results", res, "20261201-074741-vm")
t.ok(rc == 1 and len(se.splitlines()) == 1 and "20261201-074741-vm" in se and res in se and "run id" in se,
     "a run id that is not there: exit 1, one line naming it and the --results folder", se)

# ---- capacity --ns without tsc: a tsc figure named, never silently none ----
def tsc_median(run_dir):
    d = json.load(open(os.path.join(run_dir, "host-tsc.json")))
    rows = [r for r in d["results"] if r.get("clock") == "monotonic" and r["method"] == "vdso"]
    return max(rows, key=lambda r: r["threads"])["ns_per_call"]["median"]


newest = max(os.listdir(res))  # run ids sort by time
ns = tsc_median(os.path.join(res, newest))
rc, so, se = tool("capacity", "--results", res, "--ns", "hpet=1500", "--rate", "1e6")
row = [ln for ln in so.splitlines() if ln.startswith("| hpet | ") and " vs " in ln]
extra = 100 * 64 * 1e6 * (1500 - ns) * 1e-9
t.ok(rc == 0 and len(se.splitlines()) == 1 and newest in se and "host-tsc.json" in se and "--ns tsc=" in se
     and ("- baseline: no --ns tsc=NS given: the states given are planned against host on tsc (%s), %.2f ns"
          % (newest, ns)) in so
     and table_row(so, "host on tsc (%s)" % newest, "%.2f" % ns) is not None
     and row and row[0].endswith("| 9600.00 (%+.2f vs host on tsc (%s)) |" % (extra, newest)),
     "capacity --ns hpet=1500 alone: planned against the newest run's measured tsc (%s, %.2f ns), named in the "
     "output and in one line on stderr" % (newest, ns), (rc, se, so[:1500]))
for order in (["--ns", "tsc=25", "--ns", "hpet=1500"], ["--ns", "hpet=1500", "--ns", "tsc=25"]):
    rc, so, se = tool("capacity", "--results", res, "--rate", "1e6", *order)
    row = [ln for ln in so.splitlines() if ln.startswith("| hpet | ") and " vs " in ln]
    tscrow = [ln for ln in so.splitlines() if ln.startswith("| tsc | ") and " vs " in ln]
    t.ok(rc == 0 and se == "" and row and row[0].endswith("| 9600.00 (+9440.00 vs tsc) |") and not tscrow
         and "- baseline: the states given are planned against tsc = 25.00 ns (given, --ns tsc=25)" in so,
         "capacity %s: the tsc given is the baseline (6400 x 1e6 x 1475e-9 = 9440 more cores)" % " ".join(order),
         (se, row, tscrow))
empty = os.path.join(t.tmp, "empty")
os.makedirs(empty)
rc, so, se = tool("capacity", "--results", empty, "--ns", "hpet=1500")
t.ok(rc == 0 and len(se.splitlines()) == 1 and "no tsc baseline" in se and "--ns tsc=NS" in se and empty in se
     and "- baseline: no tsc baseline" in so and " vs " not in so,
     "capacity --ns hpet=1500 with no run measured on tsc: says plainly a tsc figure is needed (--ns tsc=NS)",
     (rc, se, so[-600:]))

# ---- summary --report-out: compare's end, the summary then the report, in one process ----
def fresh(name):
    d = os.path.join(t.tmp, "ro-" + name, b)
    shutil.copytree(BEFORE, d)
    return d


d, out = fresh("good"), os.path.join(t.tmp, "ro-good", "report")
rc, so, se = tool("summary", d, "--screen", "--host-clocksource", "tsc", "--report-out", out)
t.ok(rc == 0 and se == "" and so.rstrip("\n").splitlines()[-1] == "report: %s" % os.path.join(out, "report.md")
     and os.path.isfile(os.path.join(d, "summary.md")) and os.path.isfile(os.path.join(out, "report.md"))
     and "The full table: " in so,
     "summary --screen --report-out DIR: the screen, then 'report: DIR/report.md' last; both written (exit %d)" % rc,
     (se, so[-300:]))
d, out = fresh("nosummary"), os.path.join(t.tmp, "ro-nosummary", "report")
with open(os.path.join(d, "summary.md"), "w") as f:
    f.write("a summary of before\n")
rc, so, se = tool("summary", d, "--report-out", out)
t.ok(rc == 1 and len(se.splitlines()) == 1 and se.startswith("clockbench-report: summary of %s failed: " % d)
     and "exists" in se and so.strip() == "report: %s" % os.path.join(out, "report.md")
     and os.path.isfile(os.path.join(out, "report.md")),
     "a summary that fails (summary.md exists): said in one line, the report written all the same (exit %d)" % rc,
     (se, so[-300:]))
d, out = fresh("noreport"), os.path.join(t.tmp, "ro-noreport", "afile")
open(out, "w").close()
rc, so, se = tool("summary", d, "--report-out", out)
t.ok(rc == 1 and len(se.splitlines()) == 1 and se.startswith("clockbench-report: report of %s failed: " % d)
     and "report: " not in so and os.path.isfile(os.path.join(d, "summary.md")),
     "a report that fails (its folder is a file): said in one line, the summary written (exit %d)" % rc, (se, so[-300:]))
# ---- report --out DIR: a report.md there that the tool did not write is never replaced ----
mine_md = "# my notes\n"
for what, make in (("a file of the user's", lambda p: open(p, "w").write(mine_md)),
                   ("a folder", lambda p: os.mkdir(p))):
    out = os.path.join(t.tmp, "ro-mine-%d" % len(what))
    os.makedirs(out, mode=0o700)
    make(os.path.join(out, "report.md"))
    rc, so, se = tool("report", "--no-plots", "-o", out, fresh("mine-%d" % len(what)))
    kept = os.path.isdir(os.path.join(out, "report.md")) or open(os.path.join(out, "report.md")).read() == mine_md
    t.ok(rc == 1 and kept and len(se.splitlines()) == 1 and "refusing to replace it" in se,
         "report --out DIR over %s named report.md: refused in one line, kept (exit %d)" % (what, rc), se)
rc2, so2, se2 = tool("report", "--no-plots", "-o", out + "-2", fresh("again-2"))
rc3, so3, se3 = tool("report", "--no-plots", "-o", out + "-2", fresh("again-3"))
t.ok(rc2 == 0 and rc3 == 0, "report --out DIR twice: its own report.md replaced (exit %d, %d)" % (rc2, rc3), se2 + se3)
# ---- report is the command when the first word is none: clockbench report RUN, not report report ----
rc, so, se = tool("--no-plots", "-o", out + "-3", fresh("bare"))
rc2, so2, se2 = tool("bogus-command", "-o", out + "-4")
t.ok(rc == 0 and os.path.isfile(os.path.join(out + "-3", "report.md")) and rc2 == 1 and "bogus-command" in se2,
     "a first word that is no command is report's: a RUN, an option (exit %d, %d)" % (rc, rc2), se + se2)
rc, so, se = tool("summary", fresh("empty"), "--report-out", "")
t.ok(rc == 2 and len(se.splitlines()) == 1 and "--report-out" in se, "summary --report-out '': usage (exit %d)" % rc, se)

# ---- a long value in any error: cut, one line ----
X = "x" * 4000
mine = os.path.join(res, b)  # a copy: nothing is written into the fixtures
host = os.path.join(mine, "host-tsc.json")
long_cases = (
    (["no" + X], 1, "a first word no command (report's RUN)"), (["capacity", "--bogus" + X], 2, "an unknown option"),
    (["capacity", "--ns", X], 2, "--ns"), (["capacity", "--rate", X], 2, "--rate"),
    (["capacity", X], 1, "a run id"), (["capacity", "/tmp/" + X], 1, "a run path"),
    (["diff", X, mine], 1, "diff BEFORE"), (["summary", X], 1, "summary RUN"),
    (["prom", "-o", os.path.join(t.tmp, "p.prom"), X], 1, "prom RUN"), (["report", "--no-plots", X], 1, "report RUN"),
    (["report", "--no-plots", "-o", "/tmp/" + X, mine], 1, "report -o"),
    (["table", "/tmp/" + X], 1, "table FILE"), (["check-label", "/tmp/" + X, "tsc"], 1, "check-label FILE"),
    (["check-label", host, X], 1, "check-label CLOCKSOURCE"),
    (["summary", "--screen", "--host-clocksource", X, os.path.join(res, lab)], 2, "--host-clocksource"),
    (["capacity", "--results", "/tmp/" + X], 1, "--results"))
bad = []
for args, code, what in long_cases:
    rc, so, se = tool(*args)
    said = se or so  # check-label says what differs on stdout
    runs_of_x = max((len(m) for m in re.findall("x+", said)), default=0)
    if rc != code or len(said.splitlines()) != 1 or runs_of_x > 80 or len(said) > 400 or "Traceback" in said:
        bad.append("%s: exit %d, %d lines, %d characters, a run of %d x: %s" % (what, rc, len(said.splitlines()),
                                                                              len(said), runs_of_x, said[:160]))
t.ok(not bad, "a 4000-character value in each of %d errors: the exit status of its kind, one line, cut to at "
     "most 80 characters" % len(long_cases), "\n".join(bad))
t.done()
