"""preflight.py: every setting checked against this machine before anything boots or is written.

check(a) is the one function the real run and --check-only call: the
kernel, initramfs and QEMU, the accelerator as set, libvirt's reach, the
guest engine's options (by the engine's own dry run), the results folder
and every file name the run may write.  msg.Usage for a bad setting,
msg.RunError or RunFolderError for a machine that cannot run it.
"""
import os
import shutil
import subprocess

import cbhost
from cbcontract import runfolder
from . import accel, libvirt, qemu, result, settings
from .msg import RunError, Usage, cut


def check(a):
    check_tools(a)
    accel.check(a)
    if a.BACKEND == "libvirt":
        libvirt.check(a)
    check_engine(a)
    if a.run_dir is None:
        _writable("results folder", a.results or runfolder.default_dirs()[0])
    elif os.path.isdir(a.run_dir):
        _writable("run folder", a.run_dir)
    result.check_free(a, result.names(a, result.label(a)))


def check_tools(a):
    """A missing kernel, initramfs or QEMU is a bad setting (Usage, naming
    the fix); a missing timeout or virsh a RunError."""
    if not os.path.exists(a.KERNEL):
        found = " ".join(qemu.kernels())
        raise Usage("--kernel=%s: no such file: name one with --kernel%s, or run make deps (where /boot has none, "
                    "it unpacks Debian's kernel image into build/guest-kernel/ for the guest, never into /boot)"
                    % (cut(a.KERNEL), " (found: %s)" % found if found else ""))
    if not os.path.isfile(a.KERNEL) or not os.access(a.KERNEL, os.R_OK):
        raise Usage("--kernel=%s: not a readable file: run as root, or copy it somewhere readable and name it "
                    "with --kernel" % cut(a.KERNEL))
    if not os.path.isfile(a.INITRAMFS) or not os.access(a.INITRAMFS, os.R_OK):
        raise Usage("--initramfs=%s: missing or unreadable: run 'make guest-initramfs'" % cut(a.INITRAMFS))
    if not shutil.which("timeout"):
        raise RunError("timeout not found (Debian: coreutils)")
    if not shutil.which(a.QEMU):
        raise Usage("--qemu=%s: not found: name one with --qemu, or install it (Debian: apt-get install "
                    "qemu-system-x86)" % cut(a.QEMU))
    if a.BACKEND == "libvirt" and not shutil.which("virsh"):
        raise RunError("virsh not found (Debian: apt-get install libvirt-daemon-system libvirt-clients)")


def check_engine(a):
    """The guest engine's settings (APPEND's clockbench.* words included),
    judged by the engine itself (clockbench --dry-run, the one owner of its
    option rules) on the CPUs the guest will have: vCPU n is CPU n there,
    so --dry-run-cpus VCPUS, whatever CPUs this process may use.  Usage
    with the engine's line; RunError when it cannot be asked.  A bad cost
    value or an unknown clockbench.* word is /init's to refuse (its stage
    params), not the engine's."""
    if a.test_skip_engine_check:
        return
    binary = os.environ.get("CB_ENGINE") or os.path.join(cbhost.TOP, "bench", "clockbench")  # CB_ENGINE: a test hook
    if not os.access(binary, os.X_OK):
        raise RunError("%s not built (it checks the guest engine's settings): run make" % binary)
    argv = ["--dry-run", "--dry-run-cpus", str(a.VCPUS)] + settings.guest_engine_argv(a)
    try:
        r = subprocess.run([binary] + argv, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, errors="replace", timeout=30)
    except (OSError, subprocess.SubprocessError) as e:
        raise RunError("%s --dry-run: %s" % (binary, e))
    line = (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[0]
    line = cut(line.removeprefix("clockbench: "), 200)
    if r.returncode == 2:
        words = " ".join("clockbench.%s=%s" % kv for kv in settings.append_params(a))
        raise Usage("the guest's engine%s: %s" % (" (--append: %s)" % cut(words) if words else "", line))
    if r.returncode != 0:
        raise RunError("%s --dry-run: %s" % (binary, line))


def _writable(what, path):
    """path, or where it would be made (the nearest folder above it that
    exists), is a folder this process can write: Usage naming it."""
    p = os.path.abspath(path)
    while not os.path.lexists(p):
        p = os.path.dirname(p)
    if not os.path.isdir(p) or not os.access(p, os.W_OK | os.X_OK):
        raise Usage("%s %s: %s is not a folder this user can write" % (what, cut(path), cut(p)))
