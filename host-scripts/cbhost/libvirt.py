"""libvirt.py: the BACKEND=libvirt boot of the guest launcher: a transient domain
(direct kernel boot, results on a file serial) started with `virsh create`.

QEMU then runs as libvirt's user (libvirt-qemu on Debian), so the kernel, the
initramfs and the run's work folder must be reachable by it; boot() checks
that first and says which path is not.
"""
import contextlib
import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
import uuid
from xml.sax.saxutils import escape, quoteattr

from . import qemu
from .boot import read_channel
from .msg import RunError

URI = os.environ.get("LIBVIRT_DEFAULT_URI", "qemu:///system")
RUN_DIR = "/run/libvirt/qemu"  # libvirtd's NAME.pid for each running domain
MAX_DOMAINS = 4096


def domain_pids(run_dir=None):
    """{QEMU pid: domain name} from libvirt's own pid files (RUN_DIR, or the
    CB_LIBVIRT_RUN test hook): NAME.pid holding the pid of domain NAME's
    QEMU.  A name a process's command line gives itself proves nothing; a
    file there only libvirtd (root) can write.  At most MAX_DOMAINS files,
    each read up to 32 bytes; {} when the folder cannot be read."""
    d = run_dir or os.environ.get("CB_LIBVIRT_RUN", RUN_DIR)
    out = {}
    try:
        names = sorted(os.listdir(d))[:MAX_DOMAINS]
    except OSError:
        return out
    for n in names:
        if not n.endswith(".pid") or len(n) <= 4:
            continue
        try:
            fd = os.open(os.path.join(d, n), os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            raw = os.read(fd, 32).decode("ascii", "replace").strip() if stat.S_ISREG(os.fstat(fd).st_mode) else ""
        except OSError:
            raw = ""
        finally:
            os.close(fd)
        if raw.isdigit() and len(raw) <= 10:
            out[int(raw)] = n[:-4]
    return out


def virsh(*args, check=True, timeout=60):
    """Runs virsh on URI; returns stdout, or raises RunError with its stderr."""
    try:
        r = subprocess.run(["virsh", "-c", URI] + list(args), capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise RunError("virsh %s: %s" % (args[0], e))
    if check and r.returncode != 0:
        msg = (r.stderr.strip() or r.stdout.strip()).splitlines()
        raise RunError("virsh %s: %s" % (args[0], msg[0] if msg else "exit status %d" % r.returncode))
    return r.stdout


def reachable(path):
    """True when every folder above path is searchable by all and path is
    readable by all (QEMU under libvirt is not root)."""
    path = os.path.abspath(path)
    d = os.path.dirname(path)
    while True:
        if not os.stat(d).st_mode & 0o001:
            return False
        if d == "/":
            break
        d = os.path.dirname(d)
    return bool(os.stat(path).st_mode & 0o004)


def need_reachable(paths):
    """RunError naming the first path libvirt's QEMU user cannot reach."""
    for p in paths:
        if not reachable(p):
            raise RunError("%s: not reachable by libvirt's QEMU user: make the path world-readable "
                           "(every folder above it o+x), or set TMPDIR to such a folder" % p)


def check(a):
    """What a libvirt boot needs of the settings, before anything boots (the
    launcher's check): the CPU model in libvirt's terms, and the kernel, the
    initramfs and the folder of the run's work folder reachable by libvirt's
    QEMU user.  RunError."""
    kvm = a.ACCEL != "tcg"
    cpu_xml(a.CPU or ("host" if kvm else "max"), "kvm" if kvm else "tcg")
    need_reachable((a.KERNEL, a.INITRAMFS))
    tmp = tempfile.gettempdir()
    if not reachable(tmp) or not os.stat(tmp).st_mode & 0o001:
        raise RunError("%s: not reachable by libvirt's QEMU user (the run's work folder goes there): make it "
                       "o+rx, or set TMPDIR to such a folder" % tmp)


def cpu_xml(cpu, accel):
    """QEMU's CPU syntax (MODEL[,+feat][,-feat]) as a libvirt <cpu>."""
    parts = cpu.split(",")
    model, feats = parts[0], parts[1:]
    fx = "".join("<feature policy=%s name=%s/>" % (quoteattr("require" if f[0] == "+" else "disable"), quoteattr(f[1:]))
                 for f in feats if f[:1] in "+-" and len(f) > 1)
    if any(f[:1] not in "+-" for f in feats):
        raise RunError("--cpu=%s: under libvirt only +feature and -feature options are understood" % cpu)
    if model == "host":
        if accel != "kvm":
            raise RunError("--cpu=host needs KVM; under TCG use max")
        return "<cpu mode='host-passthrough' check='none'>%s</cpu>" % fx
    if model == "max":
        return "<cpu mode='maximum' check='none'>%s</cpu>" % fx
    return "<cpu mode='custom' match='exact' check='none'><model fallback='forbid'>%s</model>%s</cpu>" % (escape(model), fx)


def domain_xml(a, accel, name, work, append, pins):
    """The transient domain: no disks, no network, two file serials, the
    debug-exit device, and vcpupin entries when pins is not None."""
    tune = ""
    if pins is not None:
        tune = "<cputune>%s</cputune>" % "".join(
            "<vcpupin vcpu='%d' cpuset='%d'/>" % (v, c) for v, c in enumerate(pins))
    hpet = "" if a.HPET == "default" else "<timer name='hpet' present='%s'/>" % ("yes" if a.HPET == "on" else "no")
    return """<domain type=%(type)s xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>
  <name>%(name)s</name>
  <memory unit='MiB'>%(mem)d</memory>
  <vcpu placement='static'>%(vcpus)d</vcpu>
  %(tune)s
  <os>
    <type arch='x86_64' machine=%(machine)s>hvm</type>
    <kernel>%(kernel)s</kernel>
    <initrd>%(initrd)s</initrd>
    <cmdline>%(cmdline)s</cmdline>
  </os>
  <features><acpi/><apic/></features>
  %(cpu)s
  <clock offset='utc'>%(hpet)s</clock>
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>destroy</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <emulator>%(emulator)s</emulator>
    <controller type='usb' model='none'/>
    <serial type='file'><source path=%(console)s/><target type='isa-serial' port='0'/></serial>
    <serial type='file'><source path=%(channel)s/><target type='isa-serial' port='1'/></serial>
    <memballoon model='none'/>
  </devices>
  <qemu:commandline>
    <qemu:arg value='-device'/>
    <qemu:arg value='%(debug_exit)s'/>
  </qemu:commandline>
</domain>
""" % {
        "type": quoteattr("kvm" if accel == "kvm" else "qemu"),
        "name": escape(name), "mem": a.MEM, "vcpus": a.VCPUS, "tune": tune,
        "machine": quoteattr(a.MACHINE), "kernel": escape(os.path.abspath(a.KERNEL)),
        "initrd": escape(os.path.abspath(a.INITRAMFS)), "cmdline": escape(append),
        "cpu": cpu_xml(a.cpu, accel), "hpet": hpet, "emulator": escape(shutil.which(a.QEMU) or a.QEMU),
        "debug_exit": qemu.DEBUG_EXIT, "console": quoteattr(os.path.join(work, "console.log")), "channel": quoteattr(os.path.join(work, "channel.out")),
    }


def boot(a, accel, work, timeout, pin, append, on_hello=None, on_end=None):
    """Runs the guest as a transient libvirt domain, reading the channel
    with boot.read_channel(); returns the same dict as boot.boot (status None:
    libvirt does not pass QEMU's exit status on, or 124 on timeout; pid
    from libvirt's pid file when readable)."""
    try:
        virsh("uri")
    except RunError as e:
        raise RunError("%s: is a libvirt daemon running? (virtlogd -d; libvirtd -d)" % e)
    os.chmod(work, 0o755)
    need_reachable((a.KERNEL, a.INITRAMFS, work))
    allowed = sorted(os.sched_getaffinity(0))
    pins = [allowed[i % len(allowed)] for i in range(a.VCPUS)] if pin else None
    name = "clockbench-" + uuid.uuid4().hex[:12]
    xml = os.path.join(work, "domain.xml")
    text = domain_xml(a, accel, name, work, append, pins)
    with open(xml, "w") as f:
        f.write(text)
    t0 = time.monotonic()
    virsh("create", xml)
    state = {"next": 0.0, "alive": True, "deadline": t0 + timeout, "timed_out": False}

    def alive():
        now = time.monotonic()
        if now >= state["deadline"]:
            virsh("destroy", name, check=False)
            state["timed_out"] = True
            return False
        if now >= state["next"]:
            state["next"] = now + 0.2
            out = subprocess.run(["virsh", "-c", URI, "domstate", name], capture_output=True, text=True)
            state["alive"] = out.returncode == 0 and "shut off" not in out.stdout
        return state["alive"]

    record = {"mode": "pinned" if pin else "floating", "host_cpus": allowed, "vcpus": []}
    try:
        cpus = json.loads(virsh("qemu-monitor-command", name, '{"execute":"query-cpus-fast"}'))["return"]
        for c in sorted(cpus, key=lambda c: c.get("cpu-index", 0)):
            i = c.get("cpu-index")
            record["vcpus"].append({"vcpu": i, "thread_id": c.get("thread-id"),
                                    "host_cpu": pins[i] if pins is not None else None})
    except (RunError, ValueError, KeyError):
        record["note"] = "query-cpus-fast failed (the guest may have ended already)"
        record["vcpus"] = [{"vcpu": i, "thread_id": None, "host_cpu": pins[i] if pins else None}
                           for i in range(a.VCPUS)]
    try:
        pid = None
        with contextlib.suppress(OSError, ValueError), open("/run/libvirt/qemu/%s.pid" % name) as f:
            pid = int(f.read().strip())
        data, hello_ms, result_ms = read_channel(os.path.join(work, "channel.out"), t0, lambda: not alive(),
                                          on_hello, on_end)
    finally:
        virsh("destroy", name, check=False)
    status = 124 if state["timed_out"] and result_ms is None else None
    return {"data": data, "hello_ms": hello_ms, "result_ms": result_ms, "status": status,
            "wall_ms": round((time.monotonic() - t0) * 1000), "pinning": record,
            "argv": ["virsh", "-c", URI, "create", "domain.xml"], "domain_xml": text, "pid": pid}
