#!/usr/bin/python3
# tier: fast
"""runfolder.t: the run-folder contract: names and patterns agree, write-once, run ids, its CLI."""
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "analysis")]
from cbcontract import runfolder as rf  # noqa: E402

t = Tap()
CLI = os.path.join(ROOT, "host-scripts", "runfolder")


def cli(*args):
    p = subprocess.run([sys.executable, CLI] + list(args), capture_output=True, text=True)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


# Every name a writer can ask for is recognized by the readers' patterns as
# the same kind with the same fields, and by no other pattern.
made = [("host", rf.host_name("kvm-clock", "json"), {"cs": "kvm-clock", "ext": "json"})]
for b in rf.BACKENDS:
    for kind, fn in (("guest", rf.guest_name), ("console", rf.console_name), ("kvm-trace", rf.kvm_trace_name),
                     ("kvm-trace-raw", rf.kvm_trace_raw_name), ("kvm-observe-raw", rf.kvm_observe_raw_name)):
        made.append((kind, fn("acpi_pm", 12, b), {"cs": "acpi_pm", "vcpus": 12, "backend": b}))
made.append(("summary-md", rf.SUMMARY_MD, {}))
made.append(("tsc-rate", rf.tsc_rate_name("kvm-clock"), {"cs": "kvm-clock"}))
made += [("crosscheck", rf.crosscheck_name(e), {"ext": e}) for e in ("json", "txt")]
bad = []
for kind, name, want in made:
    hits = [k for k, rx in rf.PATTERNS.items() if rx.match(name)]
    got = rf.classify(name)
    if hits != [kind] or got is None or any(got[1].get(k) != v for k, v in want.items()):
        bad.append((name, hits, got))
t.ok(not bad, "each of %d names made by the writers' functions is read back as its own kind and fields" % len(made), bad)
t.ok(rf.classify("kvm-trace-tsc-2vcpu.txt.gz") == ("kvm-trace-raw", {"cs": "tsc", "vcpus": 2, "backend": "qemu", "gz": True}),
     "a gzipped raw trace is still the raw trace of its guest run")
t.ok(rf.partner("guest-hpet-4vcpu-libvirt.json", "kvm-trace") == "kvm-trace-hpet-4vcpu-libvirt.json"
     and rf.partner("kvm-trace-tsc-1vcpu.json", "guest") == "guest-tsc-1vcpu.json",
     "partner() pairs a guest result with its KVM trace summary, both ways")
t.ok(all(rf.classify(n) is None for n in ("host-tsc.json.tmp", ".guest-tsc-1vcpu.json.x.tmp", "guest-tsc-vcpu.json",
                                          "guest-tsc-2vcpu-virsh.json", "state-1", "host-.json", "report.md")),
     "temporary files, odd names and other files are not result files")
rejected = 0
for fn, args in ((rf.host_name, ("../x", "json")), (rf.guest_name, ("tsc", 0)), (rf.guest_name, ("tsc", 2, "xen")),
                 (rf.host_name, ("tsc", "exe")), (rf.check_run_id, (".hidden",)), (rf.check_run_id, ("a/b",))):
    try:
        fn(*args)
    except ValueError:
        rejected += 1
t.ok(rejected == 6, "names that would escape the folder or lie are refused (%d of 6)" % rejected)
rid = rf.new_run_id()
t.ok(rf.RUN_ID_RE.match(rid) and rid[:8].isdigit() and rid[8] == "-", "a new run id starts with the UTC date and is a plain word (%s)" % rid)

# Write once: the file appears whole, and an existing one is never replaced.
d = rf.make_run(t.tmp, "r1")
p = os.path.join(d, rf.host_name("tsc", "json"))
rf.write_once(p, "{}\n")
try:
    rf.write_once(p, "{\"replaced\": 1}\n")
    second = "replaced"
except rf.RunFolderError as e:
    second = str(e)
with open(p) as f:
    t.ok(f.read() == "{}\n" and "never overwritten" in second, "a second write of a result file fails and leaves the first (%s)" % second)
t.ok(sorted(os.listdir(d)) == ["host-tsc.json"], "no temporary file is left beside it")
try:
    rf.make_run(t.tmp, "r1")
    again = "reused"
except rf.RunFolderError as e:
    again = str(e)
t.ok("never reused" in again, "a run folder is never reused (%s)" % again)

# The command line bash uses.
rc, out, err = cli("path", d, "guest", "tsc", "2")
t.ok(rc == 0 and out == os.path.join(d, "guest-tsc-2vcpu.json"), "runfolder path names a guest result (%s)" % out)
rc, out, err = cli("path", d, "host", "tsc", "json")
t.ok(rc == 1 and "exists" in err, "runfolder path fails with one line when the file exists (exit %d)" % rc)
rc, out, err = cli("path", d, "guest", "tsc", "two")
t.ok(rc == 2 and err.count("\n") == 0, "a bad vCPU count is a usage error (exit %d)" % rc)
rc, out, err = cli("new", t.tmp, "r2")
t.ok(rc == 0 and os.path.isdir(out), "runfolder new makes the folder and prints it")
rc, out, err = cli("new", t.tmp, "r2")
t.ok(rc == 1 and "never reused" in err, "and refuses to reuse it (exit %d)" % rc)
rc, out, err = cli("check-name", "kvm-clock")
rc2, _, _ = cli("check-name", "a b")
t.ok(rc == 0 and rc2 == 2, "check-name accepts kvm-clock and refuses a name with a space")

# Whole strings only: `$` matched before a final newline, and bash's $(...)
# strips it, so "abe\n" made a folder abe\n and then wrote into abe.
refused = []
for fn, arg in ((rf.check_run_id, "abe\n"), (rf.check_cs, "tsc\n"), (rf.check_run_id, "a\x1bb"),
                (rf.check_cs, "kvm\x7fclock")):
    try:
        fn(arg)
    except ValueError as e:
        refused.append(str(e).count("\n") == 0)
t.ok(refused == [True] * 4, "a run id or clocksource name with a final newline or a control character is refused, one line",
     refused)
t.ok(all(rf.classify(n) is None for n in ("host-tsc.json\n", "summary.md\n", "guest-tsc-2vcpu.json\n")),
     "a file name with a final newline is not a result file")
rc, out, err = cli("new", t.tmp, "abe\n")
t.ok(rc == 2 and len(err.splitlines()) == 1 and not os.path.lexists(os.path.join(t.tmp, "abe\n"))
     and not os.path.lexists(os.path.join(t.tmp, "abe")), "runfolder new RESULTS $'abe\\n': exit 2, one line, nothing made (exit %d)" % rc, err)
rc, out, err = cli("new", os.path.join(t.tmp, "res\n"), "r9")
t.ok(rc == 2 and len(err.splitlines()) == 1 and not os.path.lexists(os.path.join(t.tmp, "res\n")),
     "runfolder new $'res\\n' RUN_ID: exit 2, one line, nothing made (exit %d)" % rc, err)
rc, out, err = cli("path", d + "\n", "host", "tsc", "json")
rc2, _, _ = cli("path", d, "guest", "tsc", "\u00b2")
t.ok(rc == 2 and rc2 == 2 and len(err.splitlines()) == 1, "runfolder path: a run folder with a newline, a vCPU count '\u00b2': usage (exit %d, %d)" % (rc, rc2), err)

# bench-host as the user calls it: the check is on the argument as given.
cs = os.path.join(t.tmp, "cs")
os.mkdir(cs)
for n, v in (("current_clocksource", "tsc\n"), ("available_clocksource", "tsc hpet\n")):
    with open(os.path.join(cs, n), "w") as f:
        f.write(v)
env = dict(os.environ, CB_CS_DIR=cs, CB_ENGINE="/bin/true")
for args, desc in (([os.path.join(t.tmp, "bh"), "abe\n"], "RESULTS $'abe\\n'"),
                   ([os.path.join(t.tmp, "bh\n"), "r1"], "$'RESULTS\\n' r1"),
                   (["--run-dir", d, "--clocksource", "tsc\n"], "--clocksource $'tsc\\n'")):
    p = subprocess.run([os.path.join(ROOT, "host-scripts", "bench-host"), "--tsc-rate-seconds=0"] + args, capture_output=True,
                       text=True, env=env)
    made = sorted(n for n in os.listdir(t.tmp) if n.startswith("bh")) + sorted(set(os.listdir(d)) - {"host-tsc.json"})
    t.ok(p.returncode == 2 and len(p.stderr.splitlines()) == 1 and not made,
         "bench-host %s: exit 2, one line, nothing created (exit %d)" % (desc, p.returncode), p.stderr + repr(made))

# The output folder check shared by every writer (report, plots, summary,
# textfile): refused when another user can write to it, unless sticky and ours.
def refused_in(mode, uid=None, gid=None):
    f = os.path.join(t.tmp, "mode%04o-%s-%s" % (mode, uid, gid))
    os.mkdir(f)
    os.chmod(f, mode)
    if uid is not None or gid is not None:
        os.chown(f, -1 if uid is None else uid, -1 if gid is None else gid)
    try:
        rf.write_file(os.path.join(f, "x.md"), "x\n", replace=True)
        return None if os.listdir(f) == ["x.md"] else "left %r" % os.listdir(f)
    except rf.RunFolderError as e:
        return str(e) if os.listdir(f) == [] else "left %r" % os.listdir(f)


me = os.geteuid()
wide = os.path.join(t.tmp, "wide-run")
os.mkdir(wide)
os.chmod(wide, 0o777)
rc, out, err = cli("path", wide, "host", "tsc", "json")
p = subprocess.run([os.path.join(ROOT, "host-scripts", "bench-host"), "--run-dir", wide], capture_output=True, text=True,
                   env=env)
t.ok(rc == 1 and "refusing" in err and len(err.splitlines()) == 1 and p.returncode == 1 and "refusing" in p.stderr
     and os.listdir(wide) == [], "runfolder path and bench-host --run-dir refuse a 0777 run folder before measuring (exit %d, %d)"
     % (rc, p.returncode), err + p.stderr)
old_umask = os.umask(0)
try:
    made = rf.make_run(t.tmp, "wide-umask")
finally:
    os.umask(old_umask)
t.ok(os.stat(made).st_mode & 0o777 == 0o755, "a new run folder is 0755 whatever the umask (%o)" % (os.stat(made).st_mode & 0o777))

# The results folder a new run goes into is judged as an output folder: in
# one its owner (or anyone) can write to, the new run folder could be swapped
# for a symlink and root's results land where they choose.
def new_run_in(mode, uid=None):
    res = os.path.join(t.tmp, "res%04o-%s" % (mode, uid))
    os.mkdir(res)
    os.chmod(res, mode)
    if uid is not None:
        os.chown(res, uid, -1)
    rc, out, err = cli("new", res, "r1")
    return rc, err, os.listdir(res)


rc, err, left = new_run_in(0o777)
t.ok(rc == 1 and "refusing" in err and len(err.splitlines()) == 1 and left == [],
     "runfolder new in a 0777 results folder: refused in one line, nothing made (exit %d)" % rc, err + repr(left))
rc, err, left = new_run_in(0o1777)
t.ok(rc == 0 and left == ["r1"], "runfolder new in a sticky results folder of ours: made (exit %d)" % rc, err)
if me == 0:
    rc, err, left = new_run_in(0o755, uid=65534)
    t.ok(rc == 1 and "refusing" in err and left == [],
         "runfolder new in a results folder owned by another user: refused, nothing made (exit %d)" % rc, err + repr(left))
else:
    t.skip("chown to another user needs root")
try:
    rf.make_run(os.path.join(t.tmp, "res0777-None"), "r2")
    why = None
except rf.RunFolderError as e:
    why = str(e)
t.ok(why and "refusing" in why, "make_run (crosscheck's, the lab's, the guest launcher's) refuses it too (%s)" % why)
t.ok(refused_in(0o755) is None and refused_in(0o700) is None, "a folder of ours, 0755 or 0700: written")
why = refused_in(0o777)
t.ok(why and "refusing" in why and "0777" in why and "\n" not in why, "0777, ours: refused, one line, nothing written (%s)" % why)
t.ok(refused_in(0o1777) is None, "1777, ours (sticky: nobody can rename or remove our names): written")
if me == 0:
    why = refused_in(0o1777, uid=65534)
    t.ok(why and "refusing" in why, "1777, not ours (a /tmp of another's): refused (%s)" % why)
    why = refused_in(0o755, uid=65534)
    t.ok(why and "refusing" in why, "0755 owned by another user (who can chmod it): refused (%s)" % why)
    why = refused_in(0o775, gid=65534)
    t.ok(why and "refusing" in why and "nobody" in why, "0775 with a group that has another member: refused (%s)" % why)
    t.ok(refused_in(0o775, gid=0) is None, "0775 with root's group (root its only member): written")
else:
    why = None
    try:
        rf.check_folder("/tmp")
    except rf.RunFolderError as e:
        why = str(e)
    t.ok(why and "refusing" in why, "/tmp (1777, not ours): refused (%s)" % why)
    for _ in range(3):
        t.skip("chown to another user needs root")
t.done()
