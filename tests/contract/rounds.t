#!/usr/bin/python3
# tier: fast
"""rounds.t: round-<N>/ folders of a run folder: the name pattern, round_dir, load_rounds (flat = round 1, mixed refused)."""
import os
import shutil
import stat
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, ROOT, WL, Tap  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract")]
from cbcontract import rounds, runfolder  # noqa: E402
from cbcontract.util import InputError  # noqa: E402

t = Tap()


def raises(exc, fn, *a):
    try:
        fn(*a)
    except exc as e:
        return str(e)
    return None


# The pattern: anchored, N as round_name writes it.
good = ["round-1", "round-9", "round-10", "round-1000"]
bad = ["round-0", "round-01", "round-1\n", "xround-1", "round-1/", "round-", "round-a", "Round-1", " round-1"]
t.ok(all(rounds.ROUND_RE.fullmatch(n) for n in good), "round-1, -9, -10, -1000 match ROUND_RE")
t.ok(not any(rounds.ROUND_RE.fullmatch(n) or rounds.ROUND_RE.match(n) for n in bad),
     "round-0, round-01, a final newline, prefixes and suffixes do not match, even with match()",
     [n for n in bad if rounds.ROUND_RE.match(n)])
t.ok(all(rounds.round_number(rounds.round_name(n)) == n for n in (1, 2, 17, 1000)),
     "round_name and round_number agree")
t.ok(all(raises(ValueError, rounds.round_name, v) for v in (0, -1, 1001, True, "1", 1.0)),
     "round_name refuses 0, negative, over the cap, a bool, a string, a float")

# round_dir: made once, 0755 whatever the umask, in a folder only we can write to.
run = os.path.join(t.tmp, "run")
os.mkdir(run, 0o755)
old = os.umask(0)
try:
    p = rounds.round_dir(run, 3)
finally:
    os.umask(old)
t.ok(p == os.path.join(run, "round-3") and os.path.isdir(p) and stat.S_IMODE(os.stat(p).st_mode) == 0o755,
     "round_dir makes run/round-3, mode 0755 under umask 0", (p, oct(os.stat(p).st_mode)))
e = raises(runfolder.RunFolderError, rounds.round_dir, run, 3)
t.ok(e and "exists" in e and "\n" not in e, "round_dir refuses a round that exists, one line", e)
t.ok(raises(runfolder.RunFolderError, rounds.round_dir, os.path.join(t.tmp, "none"), 1),
     "round_dir refuses a run folder that does not exist")
wide = os.path.join(t.tmp, "wide")
os.mkdir(wide)
os.chmod(wide, 0o777)
e = raises(runfolder.RunFolderError, rounds.round_dir, wide, 1)
t.ok(e and "other users can write" in e and not os.path.exists(os.path.join(wide, "round-1")),
     "round_dir refuses a run folder every user can write to, and makes nothing there", e)

# load_rounds: a flat folder is round 1.
r = rounds.load_rounds(BEFORE)
t.ok([n for n, _ in r] == [1] and len(r[0][1]) == 4 and all(m.round == 1 for m in r[0][1]),
     "a flat folder reads as one round, its 4 result files in it", [(n, len(ms)) for n, ms in r])

# Rounds 1..3 (round 2 missing its hpet files): each read as a run folder, in order.
multi = os.path.join(t.tmp, "20260220-120000-wl")
os.mkdir(multi)
for n in (3, 1, 2):
    shutil.copytree(WL, os.path.join(multi, "round-%d" % n))
for f in ("host-hpet.json", "guest-hpet-2vcpu.json", "tsc-rate-hpet.json"):
    os.unlink(os.path.join(multi, "round-2", f))
r = rounds.load_rounds(multi)
t.ok([(n, len(ms)) for n, ms in r] == [(1, 6), (2, 3), (3, 6)], "round-1..3 read in order, each its own files",
     [(n, len(ms)) for n, ms in r])
t.ok(all(m.run == "20260220-120000-wl" and m.round == n for n, ms in r for m in ms),
     "each measurement names the run folder (not round-N) and its round")
t.ok(all(os.path.dirname(m.path).endswith("round-%d" % n) for n, ms in r for m in ms),
     "each measurement's path is in its round's folder")

# Refused, one line each.
mixed = os.path.join(t.tmp, "mixed")
shutil.copytree(WL, mixed)
shutil.copytree(WL, os.path.join(mixed, "round-1"))
e = raises(InputError, rounds.load_rounds, mixed)
t.ok(e and "both result files" in e and "round folders" in e and "\n" not in e,
     "a folder with flat result files and round-1/ is refused in one line", e)
for name, what in (("round-01", "a leading zero"), ("round-0", "round 0")):
    d = os.path.join(t.tmp, "odd-" + name)
    os.mkdir(d)
    shutil.copytree(WL, os.path.join(d, "round-1"))
    shutil.copytree(WL, os.path.join(d, name))
    e = raises(InputError, rounds.load_rounds, d)
    t.ok(e and name in e and "not a round folder name" in e, "%s (%s) beside round-1 is refused, not skipped" % (name, what), e)
ln = os.path.join(t.tmp, "link")
os.mkdir(ln)
shutil.copytree(WL, os.path.join(ln, "round-1"))
os.symlink(os.path.join(ln, "round-1"), os.path.join(ln, "round-2"))
e = raises(InputError, rounds.load_rounds, ln)
t.ok(e and "round-2" in e and "symlink" in e, "a symlink round-2 is refused, not followed", e)
empty = os.path.join(t.tmp, "empty")
os.makedirs(os.path.join(empty, "round-1"))
e = raises(InputError, rounds.load_rounds, empty)
t.ok(e and "round-1" in e and "no host-" in e, "an empty round folder is refused as load_run refuses a run folder", e)
t.ok(raises(InputError, rounds.load_rounds, os.path.join(t.tmp, "nothing")), "a missing run folder is refused")


# The newest run folder: one of rounds counts.
res = os.path.join(t.tmp, "results")
os.makedirs(res)
shutil.copytree(BEFORE, os.path.join(res, "20260101-120000-hv1"))
shutil.copytree(multi, os.path.join(res, "20260220-120000-wl"))
os.makedirs(os.path.join(res, "20260301-000000-empty", "round-1"))
t.ok(rounds.newest_run(res) == os.path.join(res, "20260220-120000-wl") and rounds.has_results(BEFORE)
     and not rounds.has_results(os.path.join(res, "20260301-000000-empty")),
     "newest_run: a run folder of rounds is a run folder; one with empty rounds is not", rounds.newest_run(res))
t.done()
