"""qemu.py: the one builder of QEMU command lines (the guest, the observer VM, the lab's L1)."""


def command(kernel, *, qemu="qemu-system-x86_64", accel="tcg", cpu="max", vcpus=1, mem=256,
            machine="q35", machine_opts=(), initrd=None, append="", serials=(), virtfs=(),
            debug_exit=False, qmp=None, paused=False):
    """QEMU's argv for a diskless VM booting kernel directly.

    serials: file paths; the first is ttyS0 (the console), the second
    ttyS1 (on microvm, which has one serial port, an isa-serial at 0x2f8).
    virtfs: (host path, mount tag, read-only) triples, exported over 9p.
    debug_exit: the isa-debug-exit device at port 0xf4 (the guest's
    outb(v, 0xf4) ends QEMU with status (v << 1) | 1).
    qmp: a unix socket path for QMP; paused: start stopped (-S) until
    QMP's cont.  Under TCG the translator runs one thread per vCPU."""
    argv = [qemu, "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot"]
    if paused:
        argv.append("-S")
    argv += ["-machine", ",".join([machine, *machine_opts]),
             "-accel", "tcg,thread=multi" if accel == "tcg" else accel,
             "-cpu", cpu, "-smp", str(vcpus), "-m", str(mem), "-kernel", kernel]
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
        argv += ["-device", "isa-debug-exit,iobase=0xf4,iosize=0x01"]
    if qmp:
        argv += ["-qmp", "unix:%s,server=on,wait=off" % qmp]
    return argv
