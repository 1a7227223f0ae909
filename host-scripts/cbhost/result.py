"""result.py: the run's result document (guest-<cs>-<N>vcpu.json: the launcher's record, the guest's facts, the engine's bench) and the files it is written with.

The names come from the run-folder contract (cbcontract.runfolder); every
file is written once.  check_free runs before anything boots, so that a
run never measures for a name it may not write.
"""
import hashlib
import json
import os
import socket
import subprocess

from cbcontract import runfolder
from cbcontract.names import CS_SYSFS
from . import qemu
from .msg import RunError

CS_DIR = CS_SYSFS + "/"


def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def label(a):
    """The host clocksource this run's files are named after."""
    return a.clocksource or read_text(CS_DIR + "current_clocksource") or "unknown"


def names(a, cs):
    """The names of this run's files, from the run-folder contract."""
    return {k: f(cs, a.VCPUS, a.BACKEND) for k, f in (
        ("guest", runfolder.guest_name), ("console", runfolder.console_name),
        ("trace", runfolder.kvm_trace_name), ("raw", runfolder.kvm_trace_raw_name),
        ("observe", runfolder.kvm_observe_raw_name))}


def check_free(a, names):
    """The run folder (to make, or given) and every file name this run may
    write: RunFolderError before anything boots."""
    if a.run_dir is None:
        d = os.path.join(a.results or runfolder.default_dirs()[0], a.run_id)
        if os.path.lexists(d):
            raise runfolder.RunFolderError("%s exists: a run folder is never reused; choose another RUN_ID" % d)
        return
    for key in ("guest", "console") + (("trace", "raw", "observe") if a.trace else ()):
        runfolder.free_path(a.run_dir, names[key])
        if key in ("raw", "observe"):
            runfolder.free_path(a.run_dir, names[key] + ".gz")


def host_facts():
    return {"hostname": socket.gethostname(), "kernel": os.uname().release,
            "clocksource": read_text(CS_DIR + "current_clocksource"),
            "available_clocksource": read_text(CS_DIR + "available_clocksource"),
            "cpus_allowed": sorted(os.sched_getaffinity(0))}


def qemu_version(binary):
    try:
        out = subprocess.run([binary, "-version"], capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0].strip() if out else None
    except (OSError, subprocess.SubprocessError):
        return None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def document(a, doc, b, host, cs, names, append, started):
    """The result document from the guest's result frame doc and the boot
    record b (boot.boot's or libvirt.boot's); RunError when the frame holds
    no engine result."""
    bench = doc.get("bench")
    if not isinstance(bench, dict) or not isinstance(bench.get("results"), list):
        raise RunError("result frame: no bench.results from the engine")
    launcher = {
        "backend": a.BACKEND, "qemu": a.QEMU, "qemu_version": qemu_version(a.QEMU),
        "machine": a.MACHINE, "machine_options": ",".join([a.MACHINE] + qemu.machine_opts(a)),
        "cpu": a.cpu, "accel": a.accel, "emulated": a.accel == "tcg",
        "accel_requested": a.accel_requested, "accel_note": a.accel_note, "accel_decided": a.accel_decided,
        "vcpus": a.VCPUS, "memory_mb": a.MEM, "hpet": a.HPET,
        "kernel": os.path.abspath(a.KERNEL), "initramfs": os.path.abspath(a.INITRAMFS),
        "initramfs_sha256": sha256(a.INITRAMFS), "append": append,
        "pinning": b["pinning"], "clocksource": cs, "host": host, "started": started,
        "boot_ms": b["hello_ms"],
        "boot_ms_means": "launch to the guest's first line on the results channel (/init running)",
        "result_ms": b["result_ms"], "wall_ms": b["wall_ms"], "timeout_s": a.TIMEOUT,
        "exit_status": b["status"], "qemu_pid": b.get("pid"), "console_log": names["console"],
        "command": b["argv"],
    }
    if "domain_xml" in b:
        launcher["libvirt_uri"] = os.environ.get("LIBVIRT_DEFAULT_URI", "qemu:///system")
        launcher["libvirt_domain_xml"] = b["domain_xml"]
    return {"schema": doc["schema"], "launcher": launcher, "guest": doc.get("guest"), "bench": bench}


def write(a, names, console, out):
    """Makes the run folder (or takes --run-dir's) and writes the console
    log and the result document into it, once each; returns (run folder,
    result path)."""
    run_dir = a.run_dir or runfolder.make_run(a.results or runfolder.default_dirs()[0], a.run_id)
    with open(console, "rb") as f:
        runfolder.write_once(os.path.join(run_dir, names["console"]), f.read())
    path = os.path.join(run_dir, names["guest"])
    runfolder.write_once(path, json.dumps(out, indent=1) + "\n")
    return run_dir, path
