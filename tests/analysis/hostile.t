#!/usr/bin/python3
# tier: fast
"""hostile.t: result folders with hostile strings (backquotes, system(), $(...), newlines, ;, quotes) in every
name that reaches a plot or the Prometheus textfile: no command runs, the plots are drawn, the textfile passes
promtool and holds no metric of the attacker's; two run folders of one name are both reported; terminal
controls (ESC, OSC, BEL, newlines, C1) in result strings escaped in summary, summary --screen and table."""
import glob
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, NEW, ROOT, WL, Tap, read, report_in_process  # noqa: E402


# clockbench-report's main() in this process (taplib.report_in_process).
in_process = report_in_process

t = Tap()
tmp = t.tmp


def hostile(mark):
    """The hostile strings, each creating a marker named mark-<n> if run by gnuplot or a shell.
    mark is absolute (strings in files) or relative to the tool's cwd (folder names: no '/')."""
    return ["tsc`touch %s-bq`" % mark,
            'hpet system("touch %s-sys")' % mark,
            "x$(touch %s-dollar)" % mark,
            'a\nsystem("touch %s-nl")\n`touch %s-nl2`\n' % (mark, mark),
            'x"; system("touch %s-semi"); print "\\' % mark,
            "y'; `touch %s-sq`; '\t#@x" % mark]


def tool(*args, cwd=tmp):
    return in_process(args, cwd)


def edit(path, fn):
    with open(path) as f:
        d = json.load(f)
    fn(d)
    with open(path, "w") as f:
        json.dump(d, f)


def poison(d, s):
    """Every string of the run folder d that reaches a plot, label or comment, made s
    (the clocksources of the hpet files; tsc stays the baseline)."""
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        if n.startswith("host-") or n.startswith("tsc-rate-"):
            def f(doc, hp=("hpet" in n)):
                c = doc["context"]
                c.update(hostname=s, kernel=s, cpu_model=s, clockbench_version=s)
                if hp:
                    c["clocksource"] = s
            edit(p, f)
        elif n.startswith("guest-"):
            def f(doc, hp=("hpet" in n)):
                la = doc["launcher"]
                la["backend"] = s
                la["qemu_version"] = s
                if hp:
                    la["host"]["clocksource"] = s
                doc["bench"]["context"].update(hostname=s, kernel=s, cpu_model=s, clocksource=s, clocksource_end=s)
            edit(p, f)


markers = os.path.join(tmp, "PWNED")
folders = []
for i, s in enumerate(hostile(markers)):
    run = "2026%04d-%s" % (i, hostile("PWNED-run")[i])  # the run id: the folder's name
    d = os.path.join(tmp, "in", str(i), run)
    shutil.copytree(WL if i % 2 else BEFORE, d)
    poison(d, s)
    folders.append(d)

have_gp = shutil.which(os.environ.get("CB_GNUPLOT", "gnuplot"))
if not have_gp:
    for _ in range(3):
        t.skip("gnuplot not installed (Debian: gnuplot-nox; make deps installs it)")
else:
    out = os.path.join(tmp, "report")
    rc, so, se = tool("report", "-o", out, *folders)
    pwned = glob.glob(os.path.join(tmp, "PWNED*")) + glob.glob(os.path.join(ROOT, "PWNED*"))
    t.ok(not pwned, "no command of a result ran while plotting (backquotes, system(), $(), newlines, ;)", pwned)
    made = [n for n in ("headline", "ns-vs-threads", "ns-vs-vcpus", "guest-ns-vs-threads")
            if all(os.path.getsize(os.path.join(out, n + e)) > 2000 if os.path.exists(os.path.join(out, n + e)) else 0
                   for e in (".png", ".svg"))]
    t.ok(rc == 0 and len(made) == 4, "the report and its four plots are made from the hostile results", (rc, se, made))
    # One run (a key of two lines fits): its names are text in the pictures.
    rc, so, se = tool("report", "-o", out + "1", folders[0])
    svg = {n: read(os.path.join(out + "1", n + ".svg")) if os.path.exists(os.path.join(out + "1", n + ".svg")) else ""
           for n in ("ns-vs-threads", "headline")}
    s0 = hostile(markers)[0]
    t.ok(rc == 0 and "<text>%s</text>" % s0 in svg["ns-vs-threads"] and "<text>%s</text>" % s0 in svg["headline"]
         and "<text>guest 2 vCPU (%s)</text>" % s0 in svg["headline"] and not glob.glob(os.path.join(tmp, "PWNED*")),
         "the hostile names are text in the pictures: the key, the bars' tick labels", (rc, se))

# Every plot script of the hostile runs: the project's text only (none of a result's bytes, no backquote).
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
from cbcontract import load  # noqa: E402
from cbanalysis import plots, report  # noqa: E402
ms = [m for d in folders for m in load.load_run(d)]
# Letters, digits, the punctuation the project's scripts are written in; no backquote, no @.
allowed = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789 ,.:=+-_/()[]#%\n\\\"'?$<>!*")
bad = []
for name, chart, _ in plots.charts(ms, True, lambda m: report.baseline(m, ms)):
    if chart is not None:
        for fmt in ("png", "svg"):
            text = plots.script(chart, fmt, os.path.join(tmp, "o`x$(y)\n"), os.path.join(tmp, 'd"@z;.dat'))
            bad += ["%s: %r" % (name, c) for c in set(text) - allowed]
            bad += ["%s: %s" % (name, w) for w in ("`", "touch", "PWNED", "@") if w in text]
t.ok(not bad, "plot scripts of hostile runs hold no byte of a result (paths octal-escaped, names in the data)", bad[:10])

# The same over rounds (error bars, hollow bars: new columns, all numbers): a hostile run of three rounds.
from cbcontract import rounds  # noqa: E402
rdir = os.path.join(tmp, "rounds", os.path.basename(folders[1]))
for n in (1, 2, 3):
    shutil.copytree(folders[1], os.path.join(rdir, "round-%d" % n))
rms = [m for _, rm in rounds.load_rounds(rdir) for m in rm]
bad, drawn = [], []
for name, chart, _ in plots.charts(rms, False, lambda m: report.baseline(m, rms)):
    if chart is None:
        continue
    text = plots.script(chart, "svg", os.path.join(tmp, "o`x$(y)\n"), os.path.join(tmp, 'd"@z;.dat'))
    bad += ["%s: %r" % (name, c) for c in set(text) - allowed]
    bad += ["%s: %s" % (name, w) for w in ("`", "touch", "PWNED", "@") if w in text]
    if name == "headline" and have_gp:
        po = os.path.join(tmp, "rounds-plot")
        os.makedirs(po, exist_ok=True)
        drawn = plots.plot(chart, os.path.join(po, "headline"))
t.ok(not bad and (drawn or not have_gp) and not glob.glob(os.path.join(tmp, "PWNED*")),
     "a hostile run of rounds: its plot scripts hold no byte of a result, its headline (error bars) draws, "
     "nothing of it runs", bad[:10])

# ---- the Prometheus textfile ----
evil = os.path.join(tmp, "prom", "run\nnode_evil 1\n#")
shutil.copytree(NEW, evil)  # a TCG guest: left out, its path said in a comment
nl = os.path.join(tmp, "prom2", "20260102-000000-nl")
os.makedirs(nl)
shutil.copy(os.path.join(BEFORE, "host-tsc.json"), os.path.join(nl, "host-tsc.json\n"))
shutil.copy(os.path.join(NEW, "guest-tsc-1vcpu.json"), os.path.join(nl, "guest-tsc-1vcpu.json\nnode_evil 1"))
shutil.copy(os.path.join(BEFORE, "host-hpet.json"), nl)
edit(os.path.join(nl, "host-hpet.json"), lambda d: d["context"].update(
    clocksource='hpet"\\\nnode_evil{a="b"} 1\n', kernel="k\r\n# TYPE node_evil counter\nnode_evil 2", cpu_model="\\"))
files = []
for i, d in enumerate([evil, nl] + folders[:2]):
    f = os.path.join(tmp, "t%d.prom" % i)
    rc, so, se = tool("prom", d, "-o", f)
    files.append((d, f, rc, se))
t.ok(all(rc == 0 for _, _, rc, _ in files), "prom writes a textfile from each hostile folder", [(rc, se) for _, _, rc, se in files])
texts = [read(f) if os.path.exists(f) else "" for _, f, _, _ in files]
bad = [ln for x in texts for ln in x.splitlines() if ln.startswith("node_evil") or ln.startswith("# TYPE node_evil")]
t.ok(all(texts) and not bad, "no line of the attacker's in any textfile (folder names, file names, context strings)", bad)
if not shutil.which("promtool"):
    t.skip("promtool not installed (Debian: prometheus)")
else:
    res = []
    for x in texts:
        p = subprocess.run(["promtool", "check", "metrics"], input=x, capture_output=True, text=True)
        res.append((p.returncode, (p.stdout + p.stderr)[-300:]))
    t.ok(all(x for x in texts) and all(rc == 0 for rc, _ in res), "promtool check metrics passes on every textfile", res)

# ---- two run folders of one name (two fleet hosts, one short name) ----
a = os.path.join(tmp, "fleet", "hv1.dc1", "20260101-120000-hv1")
b = os.path.join(tmp, "fleet", "hv1.dc2", "20260101-120000-hv1")
shutil.copytree(BEFORE, a)
shutil.copytree(BEFORE, b)
edit(os.path.join(b, "host-hpet.json"), lambda d: d["results"][0]["ns_per_call"].update(median=1234.5))
out = os.path.join(tmp, "fleet-report")
rc, so, se = tool("report", "--no-plots", "-o", out, a, b)
md = read(os.path.join(out, "report.md")) if os.path.exists(os.path.join(out, "report.md")) else ""
t.ok(rc == 0 and "hv1.dc1/20260101-120000-hv1" in md and "hv1.dc2/20260101-120000-hv1" in md
     and len(se.splitlines()) == 1 and "hv1.dc1" in se and "hv1.dc2" in se,
     "two run folders of one name: both reported, told apart by their parent folders, said in one line", (rc, se))
rc, so, se = tool("report", "--no-plots", "-o", out + "2", a, a)
t.ok(rc == 0 and len(se.splitlines()) == 1 and "once" in se, "one run folder given twice: read once, said in one line",
     (rc, se))
# ---- a folder name of invalid UTF-8 with a terminal escape sequence ----
raw = os.path.join(os.fsencode(tmp), b"raw", b"20260101-120000-\xff\x1b[31m")
shutil.copytree(os.fsencode(BEFORE), raw)
out = os.path.join(tmp, "raw-report")
rc, so, se = tool("report", "--no-plots", "-o", out, os.fsdecode(raw))
try:
    md = open(os.path.join(out, "report.md"), "rb").read()
    md.decode("utf-8")
except (OSError, UnicodeDecodeError) as e:
    md = repr(e).encode()
t.ok(rc == 0 and b"\x1b" not in md and b"20260101-120000-\xef\xbf\xbd\\x1b[31m" in md,
     "a folder name of invalid UTF-8 with an escape sequence: report.md in UTF-8, U+FFFD and \\x1b in its place",
     (rc, se))
# ---- terminal controls in result strings: escaped where text is rendered ----
# An OSC title, BEL, a screen clear, a newline, U+2028 and a C1 CSI in the
# strings that reach summary.md, summary --screen (the verdict's tables) and
# table: each shown escaped, on its own line, nothing a terminal acts on.
EVIL = "a\x1b]0;owned\x07\x1b[2J\nnext\u2028\x9bb"
CONTROLS = [chr(c) for c in list(range(0x20)) + list(range(0x7f, 0xa0)) if c != 0x0a] + ["\u2028", "\u2029"]


def controlled(text):
    return sorted({repr(c) for c in text if c in CONTROLS} | ({"an extra line"} if "\nnext" in text else set()))


def ctl_run(name):
    d = os.path.join(tmp, "ctl", name)
    shutil.copytree(BEFORE, d)

    def g(doc):
        doc["launcher"].update(machine=EVIL, cpu=EVIL)
        doc["guest"]["clocksource"] = EVIL
        doc["bench"]["probe"]["clocks"]["monotonic"]["vdso"] = EVIL

    def tr(doc):
        doc.update(subject="observer", subject_text=EVIL)
    edit(os.path.join(d, "guest-hpet-2vcpu.json"), g)
    edit(os.path.join(d, "kvm-trace-hpet-2vcpu.json"), tr)
    return d


d = ctl_run("summary")
rc, so, se = tool("summary", d)
md = read(os.path.join(d, "summary.md")) if os.path.exists(os.path.join(d, "summary.md")) else ""
t.ok(rc == 0 and md and not controlled(so) and not controlled(md) and "a\\x1b]0;owned\\x07" in md,
     "summary: terminal controls in result strings are escaped on the screen and in summary.md (seen: %s)"
     % ", ".join(controlled(so + md)), se)
rc, so, se = tool("summary", "--screen", "--host-clocksource", "hpet", ctl_run("screen"))
t.ok(rc == 0 and not controlled(so) and "a\\x1b]0;owned" in so and max(len(x) for x in so.splitlines()) <= 100,
     "summary --screen: the verdict's tables escape them, and stay within 100 columns (seen: %s)"
     % ", ".join(controlled(so)), se)
rc, so, se = tool("table", os.path.join(ctl_run("table"), "guest-hpet-2vcpu.json"))
t.ok(rc == 0 and not controlled(so) and "a\\x1b]0;owned" in so,
     "table: a guest result's strings escaped (seen: %s)" % ", ".join(controlled(so)), se)

# ---- a run's health.json (health's report of the host when it began) ----
HEALTH = os.path.join(ROOT, "tests", "host-scripts", "fixtures", "lab", "state-10", "health.json")


def health_run(name, why):
    """A copy of BEFORE with health's report (a degraded guest) whose state_why is why."""
    d = os.path.join(tmp, "health", name)
    shutil.copytree(BEFORE, d)
    doc = json.loads(read(HEALTH))
    doc["state_why"] = why
    with open(os.path.join(d, "health.json"), "w") as f:
        json.dump(doc, f)
    return d


# A state_why of 1 MB (issue 35, N8): cut on the screen as every quoted value is, not 20,000 lines of it.
d = health_run("long", "w" * 9 + " " + "why " * (1 << 18))
rc, so, se = tool("summary", "--screen", d)
t.ok(rc == 0 and "This machine is a guest" in so and "why why" in so and len(so) < 20000 and len(so.splitlines()) < 200,
     "summary --screen: a 1 MB state_why is cut (%d characters, %d lines on the screen)" % (len(so), len(so.splitlines())),
     se)
# As root (issue 35, N4): a health.json that is a symlink to a root-only file is not followed: nothing of it shown.
if os.geteuid() != 0:
    t.skip("not root: the symlink rule is root's (a user reads only what it may)")
else:
    secret = os.path.join(tmp, "health", "root-only.json")
    d = health_run("link", "secret-marker-of-root")
    os.rename(os.path.join(d, "health.json"), secret)
    os.chmod(secret, 0o600)
    os.symlink(secret, os.path.join(d, "health.json"))
    rc, so, se = tool("summary", "--screen", d)
    t.ok(rc == 0 and "secret-marker" not in so + se and "symbolic link" in so,
         "as root, a health.json symlink to a root-only file: not followed, nothing of it shown, the reason said",
         [x for x in so.splitlines() if "health" in x or "secret" in x][:2])
t.done()
