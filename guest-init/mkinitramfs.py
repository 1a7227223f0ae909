#!/usr/bin/python3
"""mkinitramfs.py: writes the guest's initramfs, a reproducible cpio (newc), without root.

Every entry is owned by 0:0 with the mtime of SOURCE_DATE_EPOCH (default 0),
inode numbers are assigned in a fixed order, and device nodes are written as
archive entries, so no mknod and no root are needed and two builds of the same
inputs are byte-identical.  Usage errors exit 2, failures 1.
"""
import argparse
import os
import stat
import sys
import tempfile


def _entry(out, ino, name, mode, data=b"", rdev=(0, 0), mtime=0):
    """Appends one newc header, its padded name and its padded data."""
    namesz = len(name) + 1
    hdr = "070701" + "".join("%08x" % v for v in (
        ino, mode, 0, 0, 2 if stat.S_ISDIR(mode) else 1, mtime, len(data),
        0, 0, rdev[0], rdev[1], namesz, 0))
    out += hdr.encode() + name.encode() + b"\0"
    out += b"\0" * (-len(out) % 4)
    out += data
    out += b"\0" * (-len(out) % 4)


def build(init_path, busybox=None, mtime=0):
    """Returns the archive bytes: /init, the mount points, /dev/console,
    and with busybox, /bin/busybox and links to a few applets."""
    with open(init_path, "rb") as f:
        init = f.read()
    items = [
        ("dev", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("dev/console", stat.S_IFCHR | 0o600, b"", (5, 1)),
        ("init", stat.S_IFREG | 0o755, init, (0, 0)),
        ("proc", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("sys", stat.S_IFDIR | 0o755, b"", (0, 0)),
        ("tmp", stat.S_IFDIR | 0o1777, b"", (0, 0)),
    ]
    if busybox:
        with open(busybox, "rb") as f:
            items.append(("bin", stat.S_IFDIR | 0o755, b"", (0, 0)))
            items.append(("bin/busybox", stat.S_IFREG | 0o755, f.read(), (0, 0)))
        for applet in ("sh", "ls", "cat", "dmesg", "mount", "poweroff", "grep", "ps", "taskset"):
            items.append(("bin/" + applet, stat.S_IFLNK | 0o777, b"busybox", (0, 0)))
    items.sort(key=lambda it: it[0])
    out = bytearray()
    for ino, (name, mode, data, rdev) in enumerate(items, start=1):
        _entry(out, ino, name, mode, data, rdev, mtime)
    _entry(out, 0, "TRAILER!!!", 0, mtime=0)
    out += b"\0" * (-len(out) % 512)
    return bytes(out)


def write_atomic(path, data):
    """Writes data to path through a temporary file beside it (fsync,
    rename): a reader never sees half an archive."""
    fd, tmp = tempfile.mkstemp(prefix=".initramfs.", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True, help="archive to write (atomically)")
    ap.add_argument("--init", required=True, help="static PID 1 to install as /init")
    ap.add_argument("--busybox", help="static busybox to add with a shell (DEBUG=1)")
    args = ap.parse_args()
    try:
        mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
    except ValueError:
        print("mkinitramfs: SOURCE_DATE_EPOCH: not an integer", file=sys.stderr)
        return 2
    try:
        data = build(args.init, args.busybox, mtime)
        write_atomic(args.output, data)
    except OSError as e:
        print("mkinitramfs: %s: %s" % (e.filename or args.output, e.strerror), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
