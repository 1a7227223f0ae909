#!/usr/bin/python3
# tier: fast
# test-timeout: 300
"""heal.t: clockbench heal on a recorded round trip and against a stand-in QMP server (TAP).  The recorded trace
of a real one (fixtures/heal: a VM started on tsc lost the bit over a switch away and back, one started while off tsc,
the first healed by QMP stop/cont) read as lost, booted-off and healed; the off-tsc periods from the kernel's own
switch records.  The command, with /proc, the clocksource, /dev/kvm, libvirt's pid files and the trace stood in for:
listing pauses nothing; --yes pauses and resumes over QMP and confirms from the trace; a VM that booted off tsc is
never paused; the host off tsc refused; a QMP peer that vanishes, never answers or is not QMP, a confirmation that
never comes, a libvirt domain virsh does not know and a name not running each one line and exit 1."""
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts")]
from taplib import Tap  # noqa: E402
from cbcontract import klog, kmsg  # noqa: E402
from cbhost import heal, kvmtrace  # noqa: E402

t = Tap()
FX = os.path.join(ROOT, "tests", "host-scripts", "fixtures", "heal")
HEAL = os.path.join(ROOT, "host-scripts", "heal")
TRACE, KMSG = os.path.join(FX, "roundtrip.trace"), os.path.join(FX, "kmsg-switches.txt")
TICK = os.sysconf("SC_CLK_TCK")

# The recorded round trip, read as heal reads it.
lines = list(kvmtrace.Lines(TRACE))
heal_at = next(i for i, ln in enumerate(lines) if "masterclock 1" in ln)
before = heal.clocks(lines[:heal_at])
t.ok(before.get(2832) and before[2832].state() == "lost", "recorded: the VM started on tsc lost the bit over the round trip")
t.ok(before.get(13130) and before[13130].state() == "lost", "recorded: the VM started off tsc lacks it too")
after = heal.clocks(lines)
t.ok(after[2832].state() == "ok" and after[2832].master, "recorded: QMP stop/cont gave it back (master clock 1, flags 0x3)")
t.ok(after[13130].state() == "lost", "recorded: the VM not paused still lacks it")
summary = kmsg.summarize(klog.Records(klog.kmsg_records(KMSG)))
periods = heal.off_tsc(summary["switch_times"])
t.ok(len(periods) == 5 and periods[-1] == [531.754502, 533.782205] and periods[-2] == [507.659926, 511.00165],
     "the kernel's switch records give the periods off tsc", repr(periods))
t.ok(heal.booted_off_tsc(507.96, periods, 0.01) is True and heal.booted_off_tsc(244.61, periods, 0.01) is False,
     "started at 507.96 s: off tsc; at 244.61 s: on it")
t.ok(heal.booted_off_tsc(507.66, periods, 0.01) is None and heal.booted_off_tsc(None, periods) is None,
     "a start within a tick of a switch, or not known: not known")
t.ok(heal.off_tsc([(0.3, "kvm-clock"), (0.4, "tsc")]) == [], "the boot's own switch to tsc is no period off it")
cut = dict(summary, switch_times=summary["switch_times"][-2:], switch_times_cut=True)
t.ok(summary["switch_times_cut"] is False and heal.off_tsc(cut["switch_times"], True) == [[531.754502, 533.782205]],
     "the stamped switches a summary keeps, and a cut list")


# The command against stand-ins.
class Peer:
    """A stand-in QMP server on a unix socket in this process (its peer pid
    is ours): mode good, vanish (closes on stop), silent (never greets),
    junk (not QMP), deaf (answers, but KVM shows nothing after cont)."""

    def __init__(self, path, mode, trace):
        self.path, self.mode, self.trace, self.got = path, mode, trace, []
        self.stopping = threading.Event()
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.bind(path)
        self.s.listen(4)
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                c, _ = self.s.accept()
            except OSError:
                return
            threading.Thread(target=self.one, args=(c,), daemon=True).start()

    def one(self, c):
        f = c.makefile("rwb")
        try:
            if self.mode == "silent":
                f.readline()
                return
            if self.mode == "junk":
                f.write(b"SSH-2.0-OpenSSH\n")
                f.flush()
                return
            f.write(b'{"QMP": {"version": {}, "capabilities": []}}\n')
            f.flush()
            for raw in f:
                cmd = raw.decode().split('"execute": "', 1)[1].split('"', 1)[0]
                self.got.append(cmd)
                if cmd == "stop" and self.mode == "trickle":
                    def trickle():
                        try:
                            for b in b'{"return": {}}':
                                time.sleep(2.0)
                                c.send(bytes([b]))
                        except OSError:
                            pass
                    threading.Thread(target=trickle, daemon=True).start()
                    continue
                if self.mode == "trickle" and "stop" in self.got:
                    continue  # cont: seen, never answered
                if cmd == "stop" and self.mode == "nest":
                    f.write(b"[" * 60000 + b"\n")
                    f.flush()
                    continue
                if cmd == "stop" and self.mode == "vanish":
                    return
                if cmd == "stop" and self.mode == "slowstop":
                    self.stopping.set()
                    time.sleep(1.0)
                f.write(b'{"event": "STOP"}\n{"return": {}}\n' if cmd == "stop" else b'{"return": {}}\n')
                f.flush()
                if cmd == "cont" and self.mode in ("good", "slowstop"):
                    with open(self.trace, "a") as tf:
                        tf.write(" qemu-system-x86-%d (%7d) [001] d..1.   900.000001: kvm_update_master_clock: "
                                 "masterclock 1 hostclock tsc offsetmatched 1\n" % (os.getpid(), os.getpid()))
                        tf.write(" qemu-system-x86-%d (%7d) [001] .....   900.000002: kvm_pvclock_update: vcpu_id 0, "
                                 "pvclock { version 9, tsc_timestamp 0x1, system_time 0x2, tsc_to_system_mul 0x3, "
                                 "tsc_shift -1, flags 0x3 }\n" % (os.getpid(), os.getpid()))
        except OSError:
            pass
        finally:
            c.close()


def world(name, cs="tsc", start_s=300.0, libvirt=None, events=True, avail="tsc kvm-clock"):
    """A folder standing in for the host: /proc with this process as the
    one VM (holding the stand-in KVM device, started at start_s), the
    clocksource, libvirt's pid files, and a trace in which the VM lost the
    bit (the recorded one's lines, its pid ours).  Returns the environment."""
    d = os.path.join(t.tmp, name)
    pid = os.getpid()
    os.makedirs(os.path.join(d, "proc", str(pid), "fd"))
    kvm = os.path.join(d, "kvm")
    open(kvm, "w").close()
    os.symlink(kvm, os.path.join(d, "proc", str(pid), "fd", "9"))
    with open(os.path.join(d, "proc", str(pid), "stat"), "w") as f:
        f.write("%d (qemu-system-x86) S %s %d %s\n" % (pid, " ".join(["0"] * 18), int(start_s * TICK), " ".join(["0"] * 10)))
    with open(os.path.join(d, "proc", str(pid), "cmdline"), "wb") as f:
        f.write(b"qemu-system-x86_64\0-name\0vm1\0-accel\0kvm\0")
    os.makedirs(os.path.join(d, "cs"))
    with open(os.path.join(d, "cs", "current_clocksource"), "w") as f:
        f.write(cs + "\n")
    with open(os.path.join(d, "cs", "available_clocksource"), "w") as f:
        f.write(avail + "\n")
    os.makedirs(os.path.join(d, "libvirt"))
    if libvirt:
        with open(os.path.join(d, "libvirt", libvirt + ".pid"), "w") as f:
            f.write("%d\n" % pid)
    with open(os.path.join(d, "trace"), "w") as f:
        for ln in lines[:heal_at] if events else []:
            f.write(ln.replace("(   2832)", "(%7d)" % pid) + "\n")
    return dict(os.environ, CB_PROC=os.path.join(d, "proc"), CB_CS_DIR=os.path.join(d, "cs"), CB_KVM_DEV=kvm,
                CB_LIBVIRT_RUN=os.path.join(d, "libvirt"), CB_KMSG=KMSG, CB_TRACE_FILE=os.path.join(d, "trace"),
                CB_HEAL_DIR=os.path.join(d, "state")), d


def heal_cmd(env, *args):
    p = subprocess.run([sys.executable, HEAL] + list(args), env=env, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


rc, out, err = heal_cmd(dict(os.environ), "--help")
t.ok(rc == 0 and all(o in out for o in ("--yes", "--qmp", "--trace-seconds", "--version")), "--help: exit 0, every option")
for bad, why in ((["--bogus"], "an unknown option"), (["--trace-seconds", "0"], "a trace time under 1 s"),
                 (["--qmp"], "--qmp without a socket"), (["vm\x1b[31m"], "a VM name with a control character")):
    rc, out, err = heal_cmd(dict(os.environ), *bad)
    t.ok(rc == 2 and len(err.strip().splitlines()) == 1 and not out, "usage: %s is one line, exit 2" % why, err)

env, d = world("list")
peer = Peer(os.path.join(d, "qmp.sock"), "good", env["CB_TRACE_FILE"])
rc, out, err = heal_cmd(env, "--qmp", peer.path)
t.ok(rc == 0 and "vm1 (pid %d, qmp): lost the stable bit" % os.getpid() in out and "heal --yes" in out,
     "listed: lost the stable bit, with the remedy", out + err)
t.ok(peer.got == ["qmp_capabilities"], "listing pauses nothing", repr(peer.got))
rc, out, err = heal_cmd(env, "--qmp", peer.path, "--yes")
t.ok(rc == 0 and "healed: paused for" in out and "the stable bit back" in out, "--yes: paused, resumed, confirmed", out + err)
t.ok(peer.got[-2:] == ["stop", "cont"], "over QMP: stop then cont", repr(peer.got))

env, d = world("offtsc", cs="kvm-clock")
peer = Peer(os.path.join(d, "qmp.sock"), "good", env["CB_TRACE_FILE"])
rc, out, err = heal_cmd(env, "--qmp", peer.path, "--yes")
t.ok(rc == 1 and "not tsc" in err and len(err.strip().splitlines()) == 1 and "stop" not in peer.got,
     "the host off tsc: refused in one line, nothing paused", err)

env, d = world("bootedoff", start_s=509.0)
peer = Peer(os.path.join(d, "qmp.sock"), "good", env["CB_TRACE_FILE"])
rc, out, err = heal_cmd(env, "--qmp", peer.path, "--yes")
t.ok("booted while the host was off tsc" in out and "reboot the guest" in out and "stop" not in peer.got,
     "a VM started while off tsc: listed apart with a reboot as its remedy, never paused", out + err)

env, d = world("nolog", start_s=509.0)
env["CB_KMSG"] = os.path.join(d, "no-such-kmsg")
peer = Peer(os.path.join(d, "qmp.sock"), "good", env["CB_TRACE_FILE"])
rc, out, err = heal_cmd(env, "--qmp", peer.path)
t.ok("kernel log not read" in out and "when it booted is not known" in out,
     "no kernel log: says when each VM booted is not known", out + err)

for mode, expect, what in (("vanish", "closed the connection", "a QMP peer that vanishes mid-heal"),
                           ("deaf", "not healed", "a resume KVM does not confirm within 5 s"),
                           ("junk", "not a QMP socket", "a socket that is not QMP"),
                           ("silent", "timed out", "a QMP socket that never answers")):
    env, d = world(mode)
    peer = Peer(os.path.join(d, "qmp.sock"), mode, env["CB_TRACE_FILE"])
    rc, out, err = heal_cmd(env, "--qmp", peer.path, "--yes")
    t.ok(rc == 1 and expect in err and "Traceback" not in err, "%s: said (%s), exit 1" % (what, expect), err)

# A Ctrl-C typed at the terminal (tmux) while the VM is paused: it is
# resumed first, then heal stops.
env, d = world("ctrlc")
peer = Peer(os.path.join(d, "qmp.sock"), "slowstop", env["CB_TRACE_FILE"])
if shutil.which("tmux"):
    script = os.path.join(d, "run.sh")
    with open(script, "w") as f:
        f.write("#!/bin/bash\n%s %s --qmp %s --yes 2>%s/err; echo $? >%s/rc\n"
                % (sys.executable, HEAL, peer.path, d, d))
    os.chmod(script, 0o755)
    sock, sess = os.path.join(d, "tmux.sock"), "heal"
    subprocess.run(["tmux", "-S", sock, "new-session", "-d", "-s", sess, "-x", "120", "-y", "20", script],
                   env=env, check=True)
    got_stop = peer.stopping.wait(30)
    subprocess.run(["tmux", "-S", sock, "send-keys", "-t", sess, "C-c"], check=True)
    for _ in range(600):
        if os.path.exists(os.path.join(d, "rc")) and open(os.path.join(d, "rc")).read().strip():
            break
        time.sleep(0.05)
    subprocess.run(["tmux", "-S", sock, "kill-server"], stderr=subprocess.DEVNULL)
    rc = open(os.path.join(d, "rc")).read().strip() if os.path.exists(os.path.join(d, "rc")) else "?"
    err = open(os.path.join(d, "err")).read() if os.path.exists(os.path.join(d, "err")) else ""
    t.ok(got_stop and peer.got[-2:] == ["stop", "cont"] and rc == "130" and "no VM left paused" in err
         and "Traceback" not in err, "a Ctrl-C typed between stop and cont: the VM resumed, then exit 130 in one line",
         "%s %s %s" % (rc, peer.got, err))
else:
    t.skip("tmux not installed (make deps-dev): no terminal to type a Ctrl-C into")

env, d = world("libvirt", libvirt="dom1")
bin_dir = os.path.join(d, "bin")
os.makedirs(bin_dir)
with open(os.path.join(bin_dir, "virsh"), "w") as f:
    f.write("#!/bin/sh\necho \"virsh $*\" >> %s/virsh.log\necho \"error: failed to get domain '$4'\" >&2\nexit 1\n" % d)
os.chmod(os.path.join(bin_dir, "virsh"), 0o755)
env["PATH"] = bin_dir + os.pathsep + env["PATH"]
rc, out, err = heal_cmd(env, "--yes")
log = open(os.path.join(d, "virsh.log")).read() if os.path.exists(os.path.join(d, "virsh.log")) else ""
t.ok(rc == 1 and "dom1 (pid %d, libvirt)" % os.getpid() in out and "failed to get domain" in err,
     "a libvirt domain virsh does not know: said, exit 1", out + err)
t.ok("suspend dom1" in log and "resume dom1" in log, "a failed suspend is still followed by a resume", log)

# The operator's flow: the switch away and back happened with nothing
# traced (no event of the VM now), no watch.  The records decide: the
# kernel's stamped switches (the last away at 531.75 s, back at 533.78 s)
# against the VM's start (300 s).
env, d = world("records", events=False)
peer = Peer(os.path.join(d, "qmp.sock"), "good", env["CB_TRACE_FILE"])
rc, out, err = heal_cmd(env, "--qmp", peer.path, "--textfile-dir", d)
t.ok(rc == 0 and "vm1 (pid %d, qmp): lost the stable bit (running when the host left tsc at 531.8 s (back at 533.8 s)"
     % os.getpid() in out and "heal --yes" in out and peer.got == ["qmp_capabilities"],
     "no trace across the switch, no watch: the records say it lost the bit, nothing paused", out + err)
rc, out, err = heal_cmd(env, "--qmp", peer.path, "--yes", "--textfile-dir", d)
t.ok(rc == 0 and peer.got[-2:] == ["stop", "cont"] and "healed: paused for" in out,
     "--yes heals it from the records alone, confirmed by KVM's events", out + err)
rec = open(os.path.join(d, "state", "vm-clock")).read() if os.path.exists(os.path.join(d, "state", "vm-clock")) else ""
st = os.stat(os.path.join(d, "state", "vm-clock")) if rec else None
t.ok(rec.startswith("%d %d " % (os.getpid(), int(300.0 * TICK))) and rec.rstrip().endswith(" healed")
     and st.st_mode & 0o077 == 0, "the heal is recorded in the state folder (pid, start, when), 0600", rec)
with open(env["CB_TRACE_FILE"], "w"):
    pass  # the next look traces nothing again
rc, out, err = heal_cmd(env, "--qmp", peer.path, "--textfile-dir", d)
t.ok("vm1 (pid %d, qmp): has the stable bit (clockbench heal paused and resumed it at" % os.getpid() in out,
     "afterwards, with nothing traced: heal's own record says it has the bit", out + err)
env, d = world("started-after", events=False, start_s=600.0)
rc, out, err = heal_cmd(env, "--textfile-dir", d)
t.ok("has the stable bit (started at 600.0 s with the host on tsc" in out,
     "a VM started after the return: has the bit, by the records", out + err)
env, d = world("no-records", events=False)
env["CB_KMSG"] = os.path.join(d, "no-such-kmsg")
rc, out, err = heal_cmd(env, "--textfile-dir", d, "--yes")
t.ok(rc == 0 and "not known (the kernel's switch records were not read (" in out and "no-such-kmsg" in out,
     "no kernel log and nothing traced: not known, naming the record missing; --yes pauses nothing", out + err)

# The host's kernel gave up tsc for good: only a reboot brings it back.
env, d = world("tsc-gone", cs="hpet", avail="hpet acpi_pm")
rc, out, err = heal_cmd(env, "--yes")
t.ok(rc == 1 and "no longer offers tsc" in err and "only a reboot of the host" in err and "virsh migrate" in err
     and "system call per clock read" in err, "tsc gone for good: reboot the host, migrate or stop the VMs first", err)
rc, out, err = heal_cmd(env)
t.ok("only a reboot of the host brings it back" in out, "and the listing says so too", out)

# A pid asked for is that pid, whatever name another VM claims.
env, d = world("pidname")
peer = Peer(os.path.join(d, "qmp.sock"), "good", env["CB_TRACE_FILE"])
other = os.path.join(d, "proc", "999999")
os.makedirs(os.path.join(other, "fd"))
os.symlink(env["CB_KVM_DEV"], os.path.join(other, "fd", "9"))
with open(os.path.join(other, "cmdline"), "wb") as f:
    f.write(b"qemu-system-x86_64\0-name\0%d\0" % os.getpid())
rc, out, err = heal_cmd(env, "--qmp", peer.path, str(os.getpid()))
t.ok(rc == 0 and "healed" in out and peer.got[-2:] == ["stop", "cont"],
     "a pid asked for selects that pid, though another VM claims it as its name", out + err)

# A QMP peer that trickles a byte every 2 s, or answers 60,000 '[': stop and
# cont share one deadline, cont is always sent, each failure is one line.
for mode, what in (("trickle", "a peer that trickles bytes"), ("nest", "a reply of 60,000 '['")):
    env, d = world(mode)
    peer = Peer(os.path.join(d, "qmp.sock"), mode, env["CB_TRACE_FILE"])
    t0 = time.monotonic()
    rc, out, err = heal_cmd(env, "--qmp", peer.path, "--yes")
    took = time.monotonic() - t0
    t.ok(rc == 1 and "Traceback" not in err and "cont" in peer.got and took < 25
         and len([ln for ln in err.splitlines() if "vm1" in ln]) == 1,
         "%s: cont still sent, one error line, over in %.0f s" % (what, took), "%s %s" % (peer.got, err))

# The watch's textfile counts only when it is the watch's own.
env, d = world("nobody-file", events=False)
with open(os.path.join(d, "clockbench-watch.prom"), "w") as f:
    f.write('node_clockbench_vm_stable_bit{vm="vm1",pid="%d",name_from="cmdline"} 1\n' % os.getpid())
import pwd
os.chown(os.path.join(d, "clockbench-watch.prom"), pwd.getpwnam("nobody").pw_uid, -1) if os.geteuid() == 0 else None
rc, out, err = heal_cmd(env, "--textfile-dir", d)
if os.geteuid() == 0:
    t.ok("lost the stable bit" in out and "owned by nobody" in err and "not trusted" in err,
         "a textfile owned by nobody (any such process could write it): not trusted, said", out + err)
else:
    t.skip("not root: cannot give a file to nobody")

# A VM quiet while traced: the watch's textfile says what it last saw.
env, d = world("watched", events=False)
peer = Peer(os.path.join(d, "qmp.sock"), "good", env["CB_TRACE_FILE"])
with open(os.path.join(d, "clockbench-watch.prom"), "w") as f:
    f.write('node_clockbench_vm_master_clock{vm="vm1",pid="%d",name_from="cmdline"} 0\n' % os.getpid())
    f.write('node_clockbench_vm_stable_bit{vm="vm1",pid="%d",name_from="cmdline"} 0\n' % os.getpid())
    f.write('node_clockbench_vm_stable_bit{vm="gone",pid="999999999",name_from="pid"} 0\n')
rc, out, err = heal_cmd(env, "--qmp", peer.path, "--textfile-dir", d)
t.ok("vm1 (pid %d, qmp): lost the stable bit (the watch's record" % os.getpid() in out and "gone" not in out,
     "a VM quiet while traced: judged by the watch's record, which names no VM not running", out + err)
with open(os.path.join(d, "clockbench-watch.prom"), "w") as f:
    f.write('node_clockbench_vm_stable_bit{vm="vm1",pid="%d",name_from="cmdline"} 1\n' % os.getpid())
os.utime(os.path.join(d, "clockbench-watch.prom"), (time.time() - 3 * 86400,) * 2)
rc, out, err = heal_cmd(env, "--qmp", peer.path, "--textfile-dir", d)
t.ok("vm1 (pid %d, qmp): lost the stable bit (running when" % os.getpid() in out,
     "a textfile older than the host's return to tsc: not used", out + err)

# A name claimed by two VMs (any process can claim one) picks neither.
env, d = world("twins")
peer = Peer(os.path.join(d, "qmp.sock"), "good", env["CB_TRACE_FILE"])
twin = os.path.join(d, "proc", "999999")
os.makedirs(os.path.join(twin, "fd"))
os.symlink(env["CB_KVM_DEV"], os.path.join(twin, "fd", "9"))
with open(os.path.join(twin, "cmdline"), "wb") as f:
    f.write(b"qemu-system-x86_64\0-name\0vm1\0")
rc, out, err = heal_cmd(env, "--qmp", peer.path, "vm1")
t.ok(rc == 1 and "vm1: the name of 2 VMs" in err and "stop" not in peer.got,
     "a name two VMs claim: refused, naming their pids, nothing paused", out + err)

env, d = world("missing")
rc, out, err = heal_cmd(env, "vm-that-is-not-here")
t.ok(rc == 1 and "no such running KVM VM" in err, "a name not running: said, exit 1", err)

# Every piece of advice that puts the host back on tsc says what the running VMs keep.
HC = os.path.join(ROOT, "host-scripts", "health")
for cause, cmdline in (("by_hand", "ro"), ("set_at_boot", "ro clocksource=kvm-clock")):
    d = os.path.join(t.tmp, "hc-" + cause)
    os.makedirs(os.path.join(d, "cs"))
    for f, v in (("current_clocksource", "kvm-clock"), ("available_clocksource", "tsc kvm-clock")):
        with open(os.path.join(d, "cs", f), "w") as fh:
            fh.write(v + "\n")
    with open(os.path.join(d, "cmdline"), "w") as fh:
        fh.write(cmdline + "\n")
    p = subprocess.run([sys.executable, HC, "--format", "json", "--log", os.path.join(ROOT, "tests", "host-scripts",
                        "fixtures", "healthy-vm.log"), "--cmdline", os.path.join(d, "cmdline"), "--cs-dir",
                        os.path.join(d, "cs")], capture_output=True, text=True, timeout=60)
    try:
        import json
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    adv = doc.get("advice") or ""
    t.ok(doc.get("cause") == cause and "switch back" in adv and "clockbench heal" in adv and "was running" in adv,
         "health's advice for %s: switching back leaves running VMs without the bit, heal named" % cause, adv or p.stderr)

t.done()
