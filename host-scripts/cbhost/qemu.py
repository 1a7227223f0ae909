"""qemu.py: the one builder of QEMU command lines: the guest, the KVM probe, the observer VM (from the launcher's settings) and the lab's L1 (lab/run-lab).

command() is the builder; guest() and observer() give it the launcher's
settings.  Running a command line is boot.py's.  The only other VM
definition is libvirt's domain XML (libvirt.py), which libvirt turns into
QEMU's command line itself.
"""
import os
import re

from cbcontract.names import DEBUG_EXIT_PORT

# The device /init's exit code leaves by (bench/names.h's port); libvirt's domain adds it too.
DEBUG_EXIT = "isa-debug-exit,iobase=%s,iosize=0x01" % DEBUG_EXIT_PORT

# Where make deps unpacks Debian's kernel image for the guest when /boot has
# none (dpkg-deb -x: never installed, the host's boot kernel untouched).
UNPACKED_KERNELS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))),
                                "build", "guest-kernel", "boot")


def kernels():
    """The kernel images a guest may boot, best first: the running kernel's
    in /boot, the newest other in /boot, the newest make deps unpacked
    (UNPACKED_KERNELS); readable ones only."""
    def newest(d):
        try:
            names = [n for n in os.listdir(d) if n.startswith("vmlinuz-")]
        except OSError:
            return []
        key = lambda n: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", n)]  # noqa: E731
        return [os.path.join(d, n) for n in sorted(names, key=key, reverse=True)]
    own = "/boot/vmlinuz-" + os.uname().release
    found = [own] + [k for k in newest("/boot") + newest(UNPACKED_KERNELS) if k != own]
    return [k for k in found if os.access(k, os.R_OK)]


def default_kernel():
    """The guest's kernel when none is named: kernels()'s first, else the
    running kernel's path in /boot (which the preflight then names as missing)."""
    return (kernels() or ["/boot/vmlinuz-" + os.uname().release])[0]


BINARY = "qemu-system-x86_64"  # the default QEMU of the launcher (QEMU=) and the lab


def command(kernel, *, qemu=BINARY, accel="tcg", cpu="max", vcpus=1, mem=256,
            machine="q35", machine_opts=(), initrd=None, append="", serials=(), virtfs=(),
            debug_exit=False, qmp=None, paused=False, pidfile=None):
    """QEMU's argv for a diskless VM booting kernel directly.

    cpu None leaves QEMU's default model.  serials: file paths; the first
    is ttyS0 (the console), the second ttyS1 (on microvm, which has one
    serial port, an isa-serial at 0x2f8).  virtfs: (host path, mount tag,
    read-only) triples, exported over 9p.  debug_exit: the isa-debug-exit
    device (the guest's outb(v, port) ends QEMU with status (v << 1) | 1).  qmp: a unix socket path for QMP; paused: start stopped
    (-S) until QMP's cont; pidfile: QEMU writes its pid there (the KVM
    trace follows that process).  Under TCG the translator runs one thread
    per vCPU."""
    argv = [qemu, "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot"]
    if paused:
        argv.append("-S")
    argv += ["-machine", ",".join([machine, *machine_opts]),
             "-accel", "tcg,thread=multi" if accel == "tcg" else accel]
    if cpu:
        argv += ["-cpu", cpu]
    argv += ["-smp", str(vcpus), "-m", str(mem), "-kernel", kernel]
    if initrd:
        argv += ["-initrd", initrd]
    argv += ["-append", append]
    for i, path in enumerate(serials):
        argv += ["-chardev", "file,id=serial%d,path=%s" % (i, path)]
        if i == 1 and machine == "microvm":
            argv += ["-device", "isa-serial,chardev=serial1,iobase=0x2f8,irq=3"]
        else:
            argv += ["-serial", "chardev:serial%d" % i]
    for path, tag, ro in virtfs:
        argv += ["-virtfs", "local,path=%s,mount_tag=%s,security_model=none,%smultidevs=remap"
                 % (path, tag, "readonly=on," if ro else "")]
    if debug_exit:
        argv += ["-device", DEBUG_EXIT]
    if qmp:
        argv += ["-qmp", "unix:%s,server=on,wait=off" % qmp]
    if pidfile:
        argv += ["-pidfile", pidfile]
    return argv


def machine_opts(a):
    """-machine's options.  microvm boots only without ACPI here (with it,
    it hung), and /init then reboots instead of powering off."""
    opts = []
    if a.HPET != "default":
        opts.append("hpet=" + a.HPET)
    if a.MACHINE == "microvm":
        opts.append("acpi=off")
    return opts


def kernel_append(a, params):
    """The guest kernel command line: console on ttyS0, results on ttyS1,
    the clockbench.* parameters, then the user's APPEND."""
    words = ["console=ttyS0", "panic=-1", "quiet", "clockbench.channel=ttyS1"]
    if a.MACHINE == "microvm":
        words.append("reboot=t")  # /init reboots there: a triple fault is the quick way out
    words += ["clockbench.%s=%s" % kv for kv in params]
    if a.APPEND:
        words.append(a.APPEND)
    return " ".join(words)


def guest(a, accel, cpu, work, params):
    """The guest's command line (the run and the KVM probe): the initramfs,
    console and results channel as files in work, the debug-exit device,
    QMP and the pidfile in work, started paused (boot.boot pins, then
    continues)."""
    return command(a.KERNEL, qemu=a.QEMU, accel=accel, cpu=cpu, vcpus=a.VCPUS, mem=a.MEM,
                   machine=a.MACHINE, machine_opts=machine_opts(a), initrd=a.INITRAMFS,
                   append=kernel_append(a, params),
                   serials=(os.path.join(work, "console.log"), os.path.join(work, "channel.out")),
                   debug_exit=True, qmp=os.path.join(work, "qmp.sock"), paused=True,
                   pidfile=os.path.join(work, "qemu.pid"))


def observer(a, pidfile):
    """The observer VM's command line: the guest's kernel alone under KVM
    (no initramfs; only KVM's side of it matters), QEMU's default CPU
    model, 256 MiB; QEMU writes its pid to pidfile (the trace follows it)."""
    return command(a.KERNEL, qemu=a.QEMU, accel="kvm", cpu=None, vcpus=a.VCPUS, mem=256,
                   machine=a.MACHINE, machine_opts=machine_opts(a),
                   append="console=ttyS0 panic=-1", pidfile=pidfile)
