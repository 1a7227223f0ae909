#!/usr/bin/python3
# tier: fast
"""symlink.t: no write of the report, plots, textfile or summary follows a name another user planted or swapped.

Another user (nobody, through runuser) plants symlinks to a root-only file
at the final names and at temporary-name patterns, and swaps every
temporary file it can reach for such a symlink at each fsync and after each
gnuplot (the race the issue saw).  The file must keep its bytes, its mode
and its one link; a folder that user can write to is refused (one line,
exit 1), a sticky one of ours is written without following anything.  The report's folder itself: a symlink as
-o DIR or summary --report-out DIR is never followed, nor a folder made under a parent another user owns.
"""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, TOOL, Tap  # noqa: E402

t = Tap()
loader = importlib.machinery.SourceFileLoader("cbreport", TOOL)
spec = importlib.util.spec_from_loader("cbreport", loader)
cli = importlib.util.module_from_spec(spec)
loader.exec_module(cli)
NOBODY = 65534
real_run = subprocess.run
real_fsync = os.fsync

ATTACK = r"""
top=$1 target=$2
find "$top" -type f \( -path "$top/*/*" -o -name '.*.tmp' \) 2>/dev/null | while IFS= read -r p; do
	evil=$(dirname "$p")/.evil
	{ ln -s "$target" "$evil" && mv -fT "$evil" "$p"; } 2>/dev/null || rm -f "$evil"
done
"""


def invoke(*argv):
    """clockbench-report in this process (so that the attacker can be hooked
    in): (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = cli.main(list(argv))
    return rc, out.getvalue(), err.getvalue()


class Attacker:
    """While active, nobody swaps what it can in folder top at every fsync
    and after every gnuplot run."""

    def __init__(self, top, target, script):
        self.top, self.target, self.script = top, target, script

    def attack(self):
        real_run(["runuser", "-u", "nobody", "--", "sh", self.script, self.top, self.target],
                 capture_output=True, timeout=30)

    def __enter__(self):
        def fsync(fd):
            self.attack()
            return real_fsync(fd)

        def run(*a, **k):
            p = real_run(*a, **k)
            self.attack()
            return p
        os.fsync, subprocess.run = fsync, run
        return self

    def __exit__(self, *exc):
        os.fsync, subprocess.run = real_fsync, real_run


def as_nobody(*cmd):
    return real_run(["runuser", "-u", "nobody", "--"] + list(cmd), capture_output=True, text=True)


def plant(folder, target):
    """Symlinks to target, made by nobody, at final names and temporary-name patterns."""
    names = ["report.md", "headline.png", "headline.dat", "x.prom", ".report.md.planted.tmp",
             ".headline.png.planted.tmp", ".clockbench.planted.tmp", ".x.prom.planted.tmp"]
    for n in names:
        as_nobody("ln", "-s", target, os.path.join(folder, n))
    return sorted(n for n in names if os.path.islink(os.path.join(folder, n)))


def untouched(secret):
    st = os.lstat(secret)
    with open(secret) as f:
        data = f.read()
    return data == "secret\n" and st.st_mode & 0o7777 == 0o600 and st.st_nlink == 1 and st.st_uid == 0


# Refused without root too: a 0777 folder of ours (anyone can swap names in it).
wide = os.path.join(t.tmp, "wide")
os.mkdir(wide)
os.chmod(wide, 0o777)
rc, so, se = invoke("report", BEFORE, "-o", wide)
rc2, so2, se2 = invoke("prom", BEFORE, "-o", os.path.join(wide, "x.prom"))
t.ok(rc == 1 and rc2 == 1 and len(se.splitlines()) == 1 and "refusing" in se and "refusing" in se2
     and os.listdir(wide) == [], "report -o and prom -o into a 0777 folder: exit 1, one line, nothing written (%d, %d)"
     % (rc, rc2), se + se2 + repr(os.listdir(wide)))
run777 = os.path.join(t.tmp, "run777")
shutil.copytree(BEFORE, run777)
os.chmod(run777, 0o777)
rc, so, se = invoke("summary", run777)
t.ok(rc == 1 and "refusing" in se and len(se.splitlines()) == 1 and not os.path.lexists(os.path.join(run777, "summary.md")),
     "summary of a 0777 run folder: exit 1, one line, nothing written (%d)" % rc, se)

# The report's folder is reached without following a link (issue 35, N3): a symlink as -o DIR is refused, even to a
# folder of ours.
mine = os.path.join(t.tmp, "mine")
os.mkdir(mine)
os.symlink(mine, os.path.join(t.tmp, "to-mine"))
rc, so, se = invoke("report", BEFORE, "-o", os.path.join(t.tmp, "to-mine"))
t.ok(rc == 1 and len(se.splitlines()) == 1 and "symlink" in se and os.listdir(mine) == [],
     "report -o a symlink (to a folder of ours): exit 1, one line, nothing written where it points (%d)" % rc,
     se + repr(os.listdir(mine)))

if os.geteuid() != 0 or not shutil.which("runuser"):
    for _ in range(9):
        t.skip("another user planting symlinks needs root and runuser")
    t.done()

os.chmod(t.tmp, 0o711)  # nobody may pass, not list


def new_secret(name):
    """A root-only file for one scenario (each judged on its own)."""
    p = os.path.join(t.tmp, name)
    with open(p, "w") as f:
        f.write("secret\n")
    os.chmod(p, 0o600)
    return p


script = os.path.join(t.tmp, "attack.sh")
with open(script, "w") as f:
    f.write(ATTACK)
os.chmod(script, 0o644)

# A folder nobody owns: refused, whatever nobody does in it.
theirs = os.path.join(t.tmp, "theirs")
secret = new_secret("secret1")
os.mkdir(theirs)
os.chown(theirs, NOBODY, NOBODY)
planted = plant(theirs, secret)
with Attacker(theirs, secret, script):
    rc, so, se = invoke("report", BEFORE, "-o", theirs)
    rc2, so2, se2 = invoke("prom", BEFORE, "-o", os.path.join(theirs, "y.prom"))
t.ok(len(planted) == 8 and untouched(secret), "nobody's folder: the root-only file keeps its bytes, mode 0600 and one link",
     "%o %d" % (os.lstat(secret).st_mode, os.lstat(secret).st_nlink))
t.ok(rc == 1 and rc2 == 1 and "refusing" in se and "refusing" in se2 and len(se.splitlines()) == 1
     and sorted(os.listdir(theirs)) == planted, "report -o and prom -o into nobody's folder: exit 1, one line, nothing written",
     se + se2 + repr(sorted(os.listdir(theirs))))
runs = os.path.join(t.tmp, "runs-theirs")
secret = new_secret("secret2")
shutil.copytree(BEFORE, runs)
os.chown(runs, NOBODY, NOBODY)
with Attacker(runs, secret, script):
    rc, so, se = invoke("summary", runs)
t.ok(rc == 1 and "refusing" in se and untouched(secret) and not os.path.lexists(os.path.join(runs, "summary.md")),
     "summary of a run folder nobody owns: refused, nothing followed (%d)" % rc, se)

# A sticky folder of ours (as /tmp is root's): nobody can plant names but
# not rename ours; what is written is a file of its own, never a link's target.
sticky = os.path.join(t.tmp, "sticky")
secret = new_secret("secret3")
os.mkdir(sticky)
os.chmod(sticky, 0o1777)
planted = plant(sticky, secret)
with Attacker(sticky, secret, script):
    rc, so, se = invoke("report", BEFORE, "-o", sticky)
    rc2, so2, se2 = invoke("prom", BEFORE, "-o", os.path.join(sticky, "x.prom"))
written = [n for n in ("report.md", "headline.png", "headline.svg", "headline.dat", "x.prom")
           if os.path.isfile(os.path.join(sticky, n)) and not os.path.islink(os.path.join(sticky, n))
           and os.stat(os.path.join(sticky, n)).st_mode & 0o777 == 0o644]
t.ok(rc == 0 and rc2 == 0 and untouched(secret) and len(written) == 5,
     "a sticky folder of ours with symlinks planted at the final names: written as new files (0644), the root-only file "
     "untouched", se + se2 + repr(written))
left = [n for n in planted if n.endswith(".tmp") and os.path.realpath(os.path.join(sticky, n)) == secret]
t.ok(left == [n for n in planted if n.endswith(".tmp")] and not [n for n in os.listdir(sticky) if n.startswith(".clockbench.")
                                                                 and not n.endswith("planted.tmp")],
     "the planted temporary-name symlinks are left as they were, and no private folder is left behind",
     repr(sorted(os.listdir(sticky))))
run_sticky = os.path.join(t.tmp, "run-sticky")
secret = new_secret("secret4")
shutil.copytree(BEFORE, run_sticky)
os.chmod(run_sticky, 0o1777)
as_nobody("ln", "-s", secret, os.path.join(run_sticky, "summary.json"))
with Attacker(run_sticky, secret, script):
    rc, so, se = invoke("summary", run_sticky)
t.ok(rc == 1 and untouched(secret) and not os.path.lexists(os.path.join(run_sticky, "summary.md"))
     and os.path.islink(os.path.join(run_sticky, "summary.json")),
     "summary with summary.json planted as a symlink: refused, the pair not split, nothing followed (%d)" % rc, se)

# As root (issue 35, N3): -o DIR and summary --report-out DIR a symlink nobody planted (in the sticky folder) to a
# root-only folder holding a report: neither follows it; a new folder under a parent nobody owns is not made.
private = os.path.join(t.tmp, "private")
os.mkdir(private, 0o700)
with open(os.path.join(private, "report.md"), "w") as f:
    f.write("root's own report\n")
link = os.path.join(sticky, "out")
as_nobody("ln", "-s", private, link)
rc, so, se = invoke("report", BEFORE, "-o", link)
kept = sorted(os.listdir(private)) == ["report.md"] and open(os.path.join(private, "report.md")).read() == "root's own report\n"
t.ok(os.path.islink(link) and rc == 1 and len(se.splitlines()) == 1 and "symlink" in se and kept,
     "report -o a symlink nobody planted to a root-only report folder: exit 1, one line, its report.md untouched (%d)"
     % rc, se + repr(sorted(os.listdir(private))))
run_r = os.path.join(t.tmp, "run-r")
shutil.copytree(BEFORE, run_r)
rc, so, se = invoke("summary", "--report-out", link, run_r)
kept = sorted(os.listdir(private)) == ["report.md"] and open(os.path.join(private, "report.md")).read() == "root's own report\n"
t.ok(rc == 1 and "symlink" in se and kept, "summary --report-out the same symlink: the report part refused, exit 1, "
     "nothing written where it points (%d)" % rc, se + repr(sorted(os.listdir(private))))
parent = os.path.join(t.tmp, "their-parent")
os.mkdir(parent, 0o755)
os.chown(parent, NOBODY, NOBODY)
rc, so, se = invoke("report", BEFORE, "-o", os.path.join(parent, "out"))
t.ok(rc == 1 and len(se.splitlines()) == 1 and "refusing" in se and os.listdir(parent) == [],
     "report -o a new folder under a parent nobody owns: exit 1, one line, nothing made there (%d)" % rc,
     se + repr(os.listdir(parent)))
t.done()
