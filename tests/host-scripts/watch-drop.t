#!/usr/bin/python3
# tier: fast
# test-timeout: 300
"""watch-drop.t: what clockbench watch keeps after its setup and how it lives beside others (TAP).  As root: the
textfile a root-owned symlink into a folder of the watch's own account (clockbench, else nobody), which the watch
becomes (uid, gid, no other group), with no capability and no new privileges, and from inside the running watch (a thread of the same
process, after the drop) core_pattern and the clocksource file cannot be opened for writing nor /etc/shadow read.
Anyone: HUP re-reads (the watch goes on), a second watch on the same folder refused by its lock, its own temporaries
left by a SIGKILL removed at start (others' kept), VM names from libvirt's own pid files (else said to be claimed by
the command line), VMs past the limit counted, bidi and zero-width characters never in a label value."""
import os
import pwd
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts")]
from taplib import Tap, signal_and_wait  # noqa: E402

t = Tap()
os.chmod(t.tmp, 0o755)  # the dropped watch re-reads the fake clocksource and /proc below it
FX = os.path.join(ROOT, "tests", "host-scripts", "fixtures")
WATCH = os.path.join(ROOT, "host-scripts", "watch")
FILE = "clockbench-watch.prom"
CAP = 30.0
ROOT_USER = os.geteuid() == 0



def account():
    """The account the watch drops to: the package's clockbench, else nobody
    (a machine where the package was once installed keeps its account)."""
    try:
        return pwd.getpwnam("clockbench")
    except KeyError:
        return pwd.getpwnam("nobody")


NOBODY = account() if ROOT_USER else None
PROBES = ("/proc/sys/kernel/core_pattern", "/sys/devices/system/clocksource/clocksource0/current_clocksource")


def fake_cs(cur, d=None):
    d = d or os.path.join(t.tmp, "cs")
    os.makedirs(d, exist_ok=True)
    for n, v in (("current_clocksource", cur), ("available_clocksource", "tsc hpet acpi_pm")):
        with open(os.path.join(d, n + ".new"), "w") as f:
            f.write(v + "\n")
        os.rename(os.path.join(d, n + ".new"), os.path.join(d, n))
    return d


def folder(name):
    d = os.path.join(t.tmp, name)
    os.mkdir(d, 0o755)
    return d


empty = os.path.join(t.tmp, "kmsg-empty")
open(empty, "w").close()


def env(**kw):
    e = dict(os.environ, CB_CS_DIR=fake_cs("tsc"), CB_KMSG=empty, CB_HEALTH_JSON=os.devnull,
             CB_LIBVIRT_RUN=os.path.join(t.tmp, "no-libvirt"), CB_WATCH_RUN_DIR=os.path.join(t.tmp, "watch-run"))
    e.pop("CB_WATCH_KEEP_PRIVILEGES", None)
    e.update(kw)
    return e


def wait_for(pred, cap=CAP):
    t0 = time.monotonic()
    while time.monotonic() - t0 < cap:
        if pred():
            return True
        time.sleep(0.05)
    return False


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


# 1-3: as root, the drop, seen from inside the running watch: a driver runs the watch's main() in its main thread
# and, in a second thread of the same process, once the first textfile is written (after the drop), tries the opens.
DRIVER = r"""
import errno, os, runpy, signal, sys, threading, time
probes, folder = sys.argv[1].split(","), sys.argv[2]
mod = runpy.run_path(sys.argv[3], run_name="watch_driver")
def probe():
    while not os.path.exists(os.path.join(folder, "clockbench-watch.prom")):
        time.sleep(0.05)
    out = ["ids %s %s %s" % (os.getresuid(), os.getresgid(), sorted(os.getgroups()))]
    with open("/proc/self/status") as f:  # the watch's own thread's
        out += [ln.strip() for ln in f if ln.startswith(("Cap", "NoNewPrivs"))]
    for p, flags in [(p, os.O_WRONLY) for p in probes] + [("/etc/shadow", os.O_RDONLY)]:
        try:
            os.close(os.open(p, flags))
            out.append("opened %s" % p)
        except OSError as e:
            out.append("refused %s %s" % (p, errno.errorcode.get(e.errno)))
    os.write(1, ("\n".join(out) + "\n").encode())
    os.kill(os.getpid(), signal.SIGTERM)
threading.Thread(target=probe, daemon=True).start()
sys.argv = ["watch", "--textfile-dir", folder, "--no-trace", "--no-host-check"]
sys.exit(mod["main"](sys.argv))
"""
if not ROOT_USER:
    for _ in range(4):
        t.skip("not root: nothing to drop")
else:
    d0 = folder("layout")
    with open(os.path.join(d0, FILE), "w") as f:  # an older watch's file, written as root
        f.write("node_old 1\n")
    p = subprocess.run([WATCH, "--once", "--textfile-dir", d0], capture_output=True, text=True, env=env(), timeout=60)
    sub = os.path.join(d0, ".clockbench-%s.d" % FILE)
    ls = os.lstat(os.path.join(d0, FILE))
    ss = os.lstat(sub) if os.path.isdir(sub) else None
    t.ok(p.returncode == 0 and os.path.islink(os.path.join(d0, FILE)) and ls.st_uid == 0
         and os.readlink(os.path.join(d0, FILE)) == ".clockbench-%s.d/%s" % (FILE, FILE)
         and ss and ss.st_uid == NOBODY.pw_uid and ss.st_mode & 0o7777 == 0o755
         and os.stat(os.path.join(sub, FILE)).st_uid == NOBODY.pw_uid and "node_clockbench_" in read(os.path.join(d0, FILE))
         and sorted(os.listdir(d0)) == sorted([FILE, ".clockbench-%s.d" % FILE]),
         "as root, in a folder of root's: %s a root-owned symlink into a folder of the watch's account (%s, 0755), "
         "which writes the file" % (FILE, NOBODY.pw_name), (p.returncode, p.stderr, sorted(os.listdir(d0))))
    d1 = folder("drop")
    p = subprocess.run([sys.executable, "-c", DRIVER, ",".join(PROBES), d1, WATCH], capture_output=True, text=True,
                       env=env(), timeout=120)
    got = p.stdout.splitlines()
    ids = next((ln for ln in got if ln.startswith("ids ")), "")
    n = NOBODY
    caps = {ln.split(":")[0]: ln.split(":")[1].strip() for ln in got if ln.startswith(("Cap", "NoNewPrivs"))}
    t.ok(ids == "ids (%d, %d, %d) (%d, %d, %d) []" % ((n.pw_uid,) * 3 + (n.pw_gid,) * 3)
         and all(caps.get(k) == "0000000000000000" for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))
         and caps.get("NoNewPrivs") == "1" and p.returncode == 0,
         "after its setup the watch is the folder's owner (%s: uid, gid; no other group), no capability, no new privileges"
         % (NOBODY.pw_name if NOBODY else "-"),
         (p.returncode, got, p.stderr[-600:]))
    for path in PROBES + ("/etc/shadow",):
        if path != "/etc/shadow" and not os.path.exists(path):
            t.skip("%s: not on this host" % path)
            continue
        t.ok(any(ln.startswith("refused %s " % path) for ln in got),
             "from inside the running watch: %s cannot be opened %s" % (path, "for reading" if path == "/etc/shadow"
                                                                       else "for writing"),
             got)

# 5-6: HUP re-reads the clocksource and goes on; TERM then ends it with 0.
d2 = folder("hup")
cs = fake_cs("tsc", os.path.join(t.tmp, "cs-hup"))
fifo = os.path.join(t.tmp, "kmsg.fifo")
os.mkfifo(fifo)
os.chmod(fifo, 0o644)
w = subprocess.Popen([WATCH, "--textfile-dir", d2, "--interval", "1h", "--no-trace", "--no-host-check"],
                     env=env(CB_KMSG=fifo, CB_CS_DIR=cs), stderr=subprocess.PIPE, text=True)
path2 = os.path.join(d2, FILE)
wait_for(lambda: 'clocksource="tsc"' in read(path2))
fake_cs("hpet", cs)
w.send_signal(signal.SIGHUP)
seen = wait_for(lambda: 'node_clockbench_clocksource_info{clocksource="hpet"}' in read(path2))
t.ok(seen and w.poll() is None, "HUP: the watch goes on and re-reads the clocksource at once (interval 1h): hpet",
     (w.poll(), read(path2)[:200]))

# 7: a second watch on the same folder is refused while the first runs.
p = subprocess.run([WATCH, "--once", "--textfile-dir", d2, "--no-host-check"], capture_output=True, text=True,
                   env=env(CB_CS_DIR=fake_cs("acpi_pm", os.path.join(t.tmp, "cs-other"))), timeout=60)
t.ok(p.returncode == 1 and len(p.stderr.splitlines()) == 1 and "another" in p.stderr
     and 'clocksource="hpet"' in read(path2) and 'clocksource="acpi_pm"}' not in read(path2).split("available")[0],
     "a second watch on the same folder: exit 1, one line, the first's textfile untouched", (p.returncode, p.stderr))
rc = signal_and_wait(w, signal.SIGTERM, CAP)
t.ok(rc == 0, "TERM after HUP: exit 0", (rc, w.stderr.read()))

# 9: its own temporaries left by a SIGKILL mid-write are removed at start; anyone else's are kept.
d3 = folder("tmp")
mine = [".clockbench-%s.0123456789ab.tmp" % FILE]
theirs = [".clockbench-other.prom.0123456789ab.tmp", "other.prom", ".hidden.tmp"]
for n in mine + theirs:
    with open(os.path.join(d3, n), "w") as f:
        f.write("x 1\n")
p = subprocess.run([WATCH, "--once", "--textfile-dir", d3, "--no-health"], capture_output=True, text=True, env=env(),
                   timeout=60)
t.ok(p.returncode == 0 and sorted(n for n in os.listdir(d3) if not n.endswith(".d")) == sorted(theirs + [FILE]),
     "a temporary of its own left by a kill is removed at start, others' files kept (--no-health; the others here "
     "give its old name, --no-host-check)", (p.stderr, sorted(os.listdir(d3))))

# 10-12: VM names: libvirt's own pid files name a VM; a command line only claims a name; hostile characters.
proc = os.path.join(t.tmp, "proc")
run = os.path.join(t.tmp, "libvirt")
os.makedirs(run)
for pid, argv in ((8162, ["qemu-system-x86_64", "-name", "guest=web-1,debug-threads=on"]),
                  (8311, ["qemu-system-x86_64", "-name", "guest=db-7,debug-threads=on"]),
                  (8400, ["qemu-system-x86_64", "-name", "guest=web\u202e1\u200b,debug-threads=on"])):
    os.makedirs(os.path.join(proc, str(pid)))
    with open(os.path.join(proc, str(pid), "cmdline"), "w") as f:
        f.write("\0".join(argv) + "\0")
with open(os.path.join(run, "web-1.pid"), "w") as f:
    f.write("8162")
with open(os.path.join(run, "mail-2.pid"), "w") as f:  # libvirt's name wins over the command line's
    f.write("8311\n")
trace = os.path.join(t.tmp, "trace.txt")
with open(os.path.join(FX, "trace-tsc.txt")) as f:
    lines = [ln for ln in f if "(   8162)" in ln]
with open(trace, "w") as f:
    for pid in (8162, 8311, 8400):
        f.writelines(ln.replace("(   8162)", "(   %d)" % pid) for ln in lines)
d4 = folder("vms")
p = subprocess.run([WATCH, "--once", "--textfile-dir", d4, "--no-host-check"], capture_output=True, text=True,
                   env=env(CB_TRACE_PIPE=trace, CB_PROC=proc, CB_LIBVIRT_RUN=run), timeout=60)
text = read(os.path.join(d4, FILE))
t.ok(p.returncode == 0 and 'vm="web-1",pid="8162",name_from="libvirt"' in text
     and 'vm="mail-2",pid="8311",name_from="libvirt"' in text and 'name_from="cmdline"' in text,
     "VM names: libvirt's pid files name web-1 and mail-2 (over the command line's db-7); another only claims its name",
     (p.stderr, [ln for ln in text.splitlines() if "master_clock{" in ln]))
t.ok(p.returncode == 0 and 'pid="8400"' in text and not any(c in text for c in "\u202e\u200b\u2066\u200f"),
     "bidi and zero-width characters of a VM name never reach the textfile",
     [ln for ln in text.splitlines() if 'pid="8400"' in ln][:1])

# 12: VMs past the limit: their events counted as dropped, not silently lost.
import cbhost.watch as cw  # noqa: E402
cw.MAX_VMS = 1
st = cw.State(0)
with open(trace) as f:
    for ln in f:
        st.trace_line(ln)
out = st.render()
dropped = [ln for ln in out.splitlines() if ln.startswith("node_clockbench_watch_vm_events_dropped_total ")]
t.ok(len(st.vms) == 1 and dropped and float(dropped[0].split()[1]) == 2 * len(lines),
     "VMs past the limit (1 here): their %d events counted in node_clockbench_watch_vm_events_dropped_total"
     % (2 * len(lines)), dropped)
# What a host past the limit loses, in the textfile itself: the limit and the VMs followed as metrics, a comment.
said = [ln for ln in out.splitlines() if ln.startswith(("node_clockbench_watch_vm_limit ", "node_clockbench_watch_vms_followed ",
                                                         "# clockbench: VMs past"))]
t.ok(said == ["# clockbench: VMs past the watch's limit of 1 are not followed: no node_clockbench_vm_* series for them; "
              "%d of their KVM clock events dropped" % (2 * len(lines)),
              "node_clockbench_watch_vms_followed 1", "node_clockbench_watch_vm_limit 1"]
     and "no node_clockbench_vm_* series" in out.split("# HELP node_clockbench_watch_vm_limit ")[1].split("\n")[0],
     "the textfile says the limit, the VMs followed and, in a comment and the limit's HELP, what VMs past it lose", said)
t.done()
