#!/usr/bin/python3
"""mkl1.py: the emulated hypervisor's initramfs: lab/l1-init as /init,
static busybox, and the kernel modules that mount the host's files over
9p, as a reproducible cpio (newc) built without root (the writer of
guest-init/mkinitramfs.py).

Usage: mkl1.py -o OUT --kver VERSION [--busybox PATH]
Exit status: 0, 1 failure (one line naming the file), 2 usage.
"""
import argparse
import os
import stat
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "guest-init"))
import mkinitramfs  # noqa: E402

MODULES = ["virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci",
           "netfs", "fscache", "9pnet", "9pnet_virtio", "9p"]


def module_path(name, kver):
    p = subprocess.run(["modinfo", "-n", "-k", kver, name], capture_output=True, text=True)
    path = p.stdout.strip()
    if p.returncode != 0 or not path:
        raise LookupError("module %s not found for kernel %s (install linux-image-amd64)" % (name, kver))
    if not path.endswith(".ko"):
        raise LookupError("module %s is compressed (%s): busybox insmod needs a plain .ko" % (name, path))
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--kver", required=True)
    ap.add_argument("--busybox", default="/bin/busybox")
    a = ap.parse_args()
    try:
        items = [(d, stat.S_IFDIR | 0o755, b"") for d in ("bin", "dev", "host", "modules", "proc", "sys")]
        items.append(("tmp", stat.S_IFDIR | 0o1777, b""))
        with open(os.path.join(HERE, "l1-init"), "rb") as f:
            items.append(("init", stat.S_IFREG | 0o755, f.read()))
        with open(a.busybox, "rb") as f:
            items.append(("bin/busybox", stat.S_IFREG | 0o755, f.read()))
        items.append(("bin/sh", stat.S_IFLNK | 0o777, b"busybox"))
        for m in MODULES:
            with open(module_path(m, a.kver), "rb") as f:
                items.append(("modules/%s.ko" % m, stat.S_IFREG | 0o644, f.read()))
        items.sort(key=lambda it: it[0])
        out = bytearray()
        mtime = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
        for ino, (name, mode, data) in enumerate(items, start=1):
            mkinitramfs._entry(out, ino, name, mode, data, (0, 0), mtime)
        mkinitramfs._entry(out, 0, "TRAILER!!!", 0, mtime=0)
        out += b"\0" * (-len(out) % 512)
        mkinitramfs.write_atomic(a.output, bytes(out))
    except LookupError as e:
        print("mkl1: %s" % e, file=sys.stderr)
        return 1
    except OSError as e:
        print("mkl1: %s: %s" % (e.filename, e.strerror), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
