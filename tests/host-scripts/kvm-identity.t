#!/usr/bin/python3
# tier: fast
"""kvm-identity.t: a process counts as a VM only if it holds the real KVM device (TAP).  An unprivileged user
bind-mounts a file of their own over /dev/kvm in a mount namespace of their own and holds it open: its descriptor
reads "/dev/kvm", and neither finder (heal's kvm_pids, which health, heal and the watch's callers use, and the
bracket's cs_find_vms, which refuses a switch under foreign VMs) may count it.  Needs root, /dev/kvm and
unprivileged user namespaces; changes nothing on the host (the namespace is the user's own)."""
import os
import pwd
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts")]
from taplib import Tap, skip_all  # noqa: E402
from cbhost import heal  # noqa: E402

t = Tap()
why = None
if os.geteuid() != 0:
    why = "not root (another user's descriptors are root's to read)"
elif not os.path.exists("/dev/kvm"):
    why = "no /dev/kvm here"
elif not shutil.which("unshare") or not shutil.which("setpriv"):
    why = "no unshare or setpriv"
if why:
    skip_all(why)
fake = os.path.join(t.tmp, "fake-kvm")
with open(fake, "w") as f:
    f.write("not a device\n")
os.chmod(t.tmp, 0o755)
os.chmod(fake, 0o644)
nobody = pwd.getpwnam("nobody")
p = subprocess.Popen(["setpriv", "--reuid=%d" % nobody.pw_uid, "--regid=%d" % nobody.pw_gid, "--clear-groups", "unshare", "-Urm", "sh", "-c",
                      'mount --bind "$0" /dev/kvm && exec sleep 60 9</dev/kvm', fake],
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
held = False
for _ in range(100):
    try:
        held = any(os.readlink("/proc/%d/fd/%s" % (p.pid, fd)) == "/dev/kvm" for fd in os.listdir("/proc/%d/fd" % p.pid))
    except OSError:
        held = False
    if held or p.poll() is not None:
        break
    time.sleep(0.05)
try:
    if not held:
        skip_all("no user namespace here: %s" % p.stderr.read().decode(errors="replace").strip()[:120])
    t.ok(True, "the user's process (pid %d) holds a descriptor that reads /dev/kvm" % p.pid)
    t.ok(p.pid not in heal.kvm_pids(), "heal's finder does not count it as a VM")
    sh = subprocess.run(["bash", "-c", 'source "$0"/host-scripts/lib/clocksource.sh && cs_find_vms && '
                         'printf "%s\\n" "${cs_vms[@]+"${cs_vms[@]}"}"', ROOT], capture_output=True, text=True)
    t.ok(sh.returncode == 0 and "pid %d " % p.pid not in sh.stdout,
         "the bracket's finder does not count it (a switch is not refused for it)", sh.stdout + sh.stderr)
finally:
    p.kill()
    p.wait()
t.done()
