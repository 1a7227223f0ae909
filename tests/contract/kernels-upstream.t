#!/usr/bin/python3
# tier: fast
"""kernels-upstream.t: the trees kernels.py cites, checked against kernel.org's tags.

With CLOCKBENCH_KERNEL_GIT naming a git directory that holds mainline's and
stable's tags (a clone of git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git
has both), every row of TREES is checked there: its tag exists, the tag's
commit is the row's commit (where the row has one) and each file's blob at
the tag is the row's blob.  The tags' commits are printed, to be written
into the table with the date.  Without it that check is skipped, and the
check itself is tried on a small repository made here (placeholder files,
no kernel source).
"""
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract")]
from cbcontract import kernels as k  # noqa: E402

t = Tap()
ENV = dict(os.environ, GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C",
           GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org", GIT_COMMITTER_NAME="t",
           GIT_COMMITTER_EMAIL="t@example.org", GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
           GIT_COMMITTER_DATE="2026-01-01T00:00:00Z")


def git(gitdir, *args, stdin=None):
    """git's output, stripped, or None when it fails."""
    p = subprocess.run(["git", "--git-dir", gitdir] + list(args), input=stdin, capture_output=True, text=True,
                       env=ENV, timeout=120)
    return p.stdout.strip() if p.returncode == 0 else None


def check(trees, gitdir):
    """(problems, {version: the tag's commit}) of `trees` (shaped as
    kernels.TREES) in the git directory gitdir."""
    probs, found = [], {}
    for ver, row in sorted(trees.items()):
        tag = row.get("tag")
        commit = git(gitdir, "rev-parse", "--verify", "--quiet", "%s^{commit}" % tag) if tag else None
        if commit is None:
            probs.append("%s: tag %r not in %s" % (ver, tag, gitdir))
            continue
        found[ver] = commit
        if row.get("commit") is not None and row["commit"] != commit:
            probs.append("%s: %s is commit %s, the table says %s" % (ver, tag, commit, row["commit"]))
        for path, blob in sorted(row["files"].items()):
            got = git(gitdir, "rev-parse", "--verify", "--quiet", "%s:%s" % (tag, path))
            if got != blob:
                probs.append("%s: %s:%s is blob %s, the table says %s" % (ver, tag, path, got, blob))
    return probs, found


# --- the check, on a repository made here ------------------------------------
real = k.TREES["6.18.26"]
work = os.path.join(t.tmp, "work")
gd = os.path.join(work, ".git")
os.makedirs(work)
subprocess.run(["git", "init", "-q", work], check=True, env=ENV)
blobs = {}
for i, path in enumerate(sorted(real["files"])):
    os.makedirs(os.path.join(work, os.path.dirname(path)), exist_ok=True)
    with open(os.path.join(work, path), "w") as f:
        f.write("placeholder %d\n" % i)
    blobs[path] = git(gd, "hash-object", os.path.join(work, path))
subprocess.run(["git", "-C", work, "add", "-A"], check=True, env=ENV)
subprocess.run(["git", "-C", work, "commit", "-q", "-m", "placeholders"], check=True, env=ENV)
tag = real.get("tag") or "(no tag)"
subprocess.run(["git", "-C", work, "tag", "-a", "-m", "t", tag], env=ENV, capture_output=True)
head = git(gd, "rev-parse", "HEAD")

row = dict(real, commit=head, files=blobs)
probs, found = check({"6.18.26": row}, gd)
t.ok(probs == [] and found == {"6.18.26": head} and tag.startswith("v"),
     "the check passes a row whose tag (%s, annotated), commit and blobs are those of the clone" % tag, "\n".join(probs))
probs, _ = check({"6.18.26": dict(row, commit=None)}, gd)
t.ok(probs == [], "a row with no commit yet: the blobs are still checked, and the tag's commit is found",
     "\n".join(probs))
path = sorted(blobs)[0]
probs, _ = check({"6.18.26": dict(row, files=dict(blobs, **{path: "0" * 40}))}, gd)
t.ok(len(probs) == 1 and path in probs[0] and blobs[path] in probs[0],
     "a file whose blob differs at the tag is named, with both blobs", "\n".join(probs))
probs, _ = check({"6.18.26": dict(row, commit="1" * 40)}, gd)
t.ok(len(probs) == 1 and head in probs[0], "a wrong commit for the tag is reported", "\n".join(probs))
probs, found = check({"6.18.26": dict(row, tag="v0.0.0")}, gd)
t.ok(len(probs) == 1 and "not in" in probs[0] and found == {}, "a tag the clone lacks is reported", "\n".join(probs))

# --- the table, in a clone of kernel.org's tree ------------------------------
upstream = os.environ.get("CLOCKBENCH_KERNEL_GIT", "")
if not upstream:
    t.skip("CLOCKBENCH_KERNEL_GIT not set (a git directory with kernel.org's stable and mainline tags)")
else:
    probs, found = check(k.TREES, upstream)
    for ver in sorted(found):
        t.diag("%s: %s is commit %s" % (ver, k.TREES[ver]["tag"], found[ver]))
    t.ok(not probs, "every tree of the table: its tag, the tag's commit and every blob, in %s" % upstream,
         "\n".join(probs))
t.done()
