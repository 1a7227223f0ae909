#!/usr/bin/python3
# tier: fast
"""textfile.t: cbcontract.textfile's escaping of label values (bidi, zero-width and control characters never reach
a textfile), its folder lock (hold(): one holder a folder, in a lock folder of the holder's alone, never through a symlink;
its own temporaries removed, others' kept) and
delegate() (as root: a writer's own subfolder, the textfile a symlink into it, never through a symlink) (TAP)."""
import os
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path.insert(0, os.path.join(ROOT, "contract"))
from taplib import Tap  # noqa: E402
from cbcontract import textfile  # noqa: E402
from cbcontract.util import InputError  # noqa: E402

t = Tap()
HIDDEN = "\u061c\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
v = textfile.esc("web" + HIDDEN + "1\x1b[2J\x00")
t.ok(not any(c in v for c in HIDDEN) and "\x1b" not in v and "\x00" not in v and v.startswith("web"),
     "esc(): bidi, zero-width and control characters of a label value replaced (%r)" % v)
f = textfile.Families({"node_x": "x"})
f.add("node_x", [("vm", "a\u202eb")], 1)
text = f.text(comments=["c\u2067d"])
t.ok("\u202e" not in text and "\u2067" not in text, "nor in a sample or a comment of Families.text()", text)
t.ok(textfile.esc("web-1 \u00e9\u20ac") == "web-1 \u00e9\u20ac", "other characters kept as they are")

d = os.path.join(t.tmp, "tf")
os.mkdir(d, 0o755)
for n in (".clockbench-w.prom.0123456789ab.tmp", ".clockbench-other.prom.0123456789ab.tmp", "other.prom"):
    open(os.path.join(d, n), "w").close()
LOCKS = os.path.join(t.tmp, "locks")
fd = textfile.hold(d, "w.prom", LOCKS)
t.ok(sorted(os.listdir(d)) == [".clockbench-other.prom.0123456789ab.tmp", "other.prom"],
     "hold(): its own temporaries removed, others' kept", sorted(os.listdir(d)))
try:
    textfile.hold(d, "w.prom", LOCKS)
    second = None
except InputError as e:
    second = str(e)
t.ok(second is not None and "another" in second and len(second.splitlines()) == 1,
     "a second hold() on the folder refused while the first holds it: %s" % second)
for x in fd:
    os.close(x)
fd = textfile.hold(d, "w.prom", LOCKS)
for x in fd:
    os.close(x)
t.ok(True, "held again once the first let go")
st = os.stat(LOCKS)
t.ok(st.st_uid == os.geteuid() and st.st_mode & 0o7777 == 0o700 and os.listdir(d).count("w.prom") == 0,
     "the lock folder made the holder's, mode 0700 (%04o); nothing of the lock in the textfile folder"
     % (st.st_mode & 0o7777))
# Lock folders no other user may be able to reach: a symlink, a mode that lets others in, a lock file not ours.
bad = os.path.join(t.tmp, "bad-locks")
os.mkdir(bad, 0o700)
os.symlink(bad, os.path.join(t.tmp, "link-locks"))
os.mkdir(os.path.join(t.tmp, "open-locks"), 0o755)
os.chmod(os.path.join(t.tmp, "open-locks"), 0o755)
st = os.stat(d)
os.symlink("/etc/passwd", os.path.join(bad, textfile.LOCK % (st.st_dev, st.st_ino)))
for name, why in (("link-locks", "symlink"), ("open-locks", "mode 0755"), ("bad-locks", "symlink")):
    try:
        for x in textfile.hold(d, "w.prom", os.path.join(t.tmp, name)):
            os.close(x)
        err = None
    except InputError as e:
        err = str(e)
    t.ok(err and len(err.splitlines()) == 1 and ("never followed" in err or "mode 0755" in err),
         "hold(): a lock folder %s (%s) refused in one line: %s" % (name, why, err))
textfile.write(d, "w.prom", "x 1\n")
t.ok(sorted(os.listdir(d)) == [".clockbench-other.prom.0123456789ab.tmp", "other.prom", "w.prom"],
     "write() leaves no temporary behind", sorted(os.listdir(d)))

# delegate(): as root, a writer's own subfolder and the textfile a symlink into it; never through a symlink.
if os.geteuid() != 0:
    t.skip("not root: delegate() gives a folder away")
    t.skip("not root")
else:
    import pwd
    nobody = pwd.getpwnam("nobody")
    d2 = os.path.join(t.tmp, "deleg")
    os.mkdir(d2, 0o755)
    with open(os.path.join(d2, "w.prom"), "w") as f:
        f.write("old 1\n")
    fd, lfd = textfile.hold(d2, "w.prom", LOCKS)
    sub, sfd = textfile.delegate(fd, "w.prom", nobody.pw_uid, nobody.pw_gid)
    st = os.fstat(sfd)
    textfile.write(os.path.join(d2, sub), "w.prom", "x 1\n", fd=sfd)
    t.ok(os.readlink(os.path.join(d2, "w.prom")) == sub + "/w.prom" and (st.st_uid, st.st_mode & 0o7777) == (nobody.pw_uid, 0o755)
         and open(os.path.join(d2, "w.prom")).read() == "x 1\n",
         "delegate(): %s a symlink into %s (nobody's, 0755), written through its descriptor" % ("w.prom", sub))
    os.close(sfd)
    os.close(fd)
    os.close(lfd)
    d3 = os.path.join(t.tmp, "deleg-link")
    os.mkdir(d3, 0o755)
    target = os.path.join(t.tmp, "elsewhere")
    os.mkdir(target, 0o700)
    os.symlink(target, os.path.join(d3, ".clockbench-w.prom.d"))
    fd, lfd = textfile.hold(d3, "w.prom", LOCKS)
    try:
        textfile.delegate(fd, "w.prom", nobody.pw_uid, nobody.pw_gid)
        why = None
    except InputError as e:
        why = str(e)
    os.close(fd)
    os.close(lfd)
    t.ok(why and "symlink" in why and os.stat(target).st_uid == 0 and os.stat(target).st_mode & 0o777 == 0o700,
         "a symlink in the subfolder's place: refused, what it points to untouched (%s)" % why)
t.done()
