#!/usr/bin/env python3
"""guestrun.py: boots the clockbench guest, collects its framed result, writes results/<run-id>/guest-*.json.

Called by launch-guest.sh, which validates the settings first.  Subcommands:
  probe  boot once under KVM with clockbench.probe=1; exit 0 if the guest's
         /init was reached within --timeout seconds, 1 if not
  run    boot under QEMU (or libvirt), pin the vCPUs, read the results
         channel, write the result and the console log, print the table
  table  print the table of result files
Failures exit 1 with one line naming the console log; usage errors exit 2.
"""
import argparse
import datetime
import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import guestframe  # noqa: E402

PROG = "launch-guest"
# QEMU exits with (code << 1) | 1 when the guest writes code to isa-debug-exit.
GUEST_CODES = {
    3: "engine failed",
    5: "guest setup failed (mount, channel or fork)",
    7: "engine killed by a signal",
    9: "bad clockbench.* parameter",
    11: "engine output missing or unreadable",
}


class RunError(Exception):
    """A failed run; the message is one line for the user."""


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def read_text(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def host_facts():
    cs = "/sys/devices/system/clocksource/clocksource0/"
    return {
        "hostname": socket.gethostname(),
        "kernel": os.uname().release,
        "clocksource": read_text(cs + "current_clocksource"),
        "available_clocksource": read_text(cs + "available_clocksource"),
        "cpus_allowed": sorted(os.sched_getaffinity(0)),
    }


def qemu_version(qemu):
    try:
        out = subprocess.run([qemu, "-version"], capture_output=True, text=True, timeout=10).stdout
        return out.splitlines()[0].strip() if out else None
    except (OSError, subprocess.SubprocessError):
        return None


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 16), b""):
            h.update(block)
    return h.hexdigest()


def kernel_append(a, params):
    """The guest kernel command line: console on ttyS0, results on ttyS1,
    the clockbench.* parameters, then the user's APPEND."""
    words = ["console=ttyS0", "panic=-1", "quiet", "clockbench.channel=ttyS1"]
    if a.machine == "microvm":
        words.append("reboot=t")  # /init reboots there: a triple fault is the quick way out
    words += ["clockbench.%s=%s" % kv for kv in params]
    if a.append:
        words.append(a.append)
    return " ".join(words)


def machine_opts(a):
    """-machine's value.  microvm boots only without ACPI here (with it,
    it hung), and /init then reboots instead of powering off."""
    mopts = [a.machine]
    if a.hpet != "default":
        mopts.append("hpet=" + a.hpet)
    if a.machine == "microvm":
        mopts.append("acpi=off")
    return ",".join(mopts)


def qemu_argv(a, accel, work, params):
    """QEMU's argv: paused (-S) until QMP's cont, console and results on two
    file chardevs, the debug-exit device, QMP on a socket in work."""
    res = ["-serial", "chardev:res"]
    if a.machine == "microvm":
        # microvm has one serial port; the results get a second at 0x2f8.
        res = ["-device", "isa-serial,chardev=res,iobase=0x2f8,irq=3"]
    return [
        a.qemu, "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot", "-S",
        "-machine", machine_opts(a),
        "-accel", "tcg,thread=multi" if accel == "tcg" else "kvm",
        "-cpu", a.cpu, "-smp", str(a.vcpus), "-m", str(a.mem),
        "-kernel", a.kernel, "-initrd", a.initramfs, "-append", kernel_append(a, params),
        "-chardev", "file,id=con,path=" + os.path.join(work, "console.log"), "-serial", "chardev:con",
        "-chardev", "file,id=res,path=" + os.path.join(work, "channel.out"), *res,
        "-device", "isa-debug-exit,iobase=0xf4,iosize=0x01",
        "-qmp", "unix:%s,server=on,wait=off" % os.path.join(work, "qmp.sock"),
    ]


class QMP:
    """A minimal QMP client: one command at a time, events skipped."""

    def __init__(self, path, proc, limit=10.0):
        end = time.monotonic() + limit
        while True:
            try:
                self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.s.connect(path)
                break
            except OSError:
                self.s.close()
                if proc.poll() is not None or time.monotonic() > end:
                    raise RunError("QMP socket %s: QEMU did not open it" % path)
                time.sleep(0.005)
        self.s.settimeout(limit)
        self.f = self.s.makefile("rwb")
        try:
            self.f.readline()  # greeting
        except OSError as e:
            raise RunError("QMP: %s" % e.strerror)
        self.cmd("qmp_capabilities")

    def cmd(self, name, **args):
        msg = {"execute": name}
        if args:
            msg["arguments"] = args
        try:
            self.f.write(json.dumps(msg).encode() + b"\n")
            self.f.flush()
        except OSError as e:
            raise RunError("QMP %s: %s" % (name, e.strerror))
        while True:
            try:
                line = self.f.readline()
            except OSError as e:
                raise RunError("QMP %s: %s" % (name, e.strerror))
            if not line:
                raise RunError("QMP %s: connection closed" % name)
            r = json.loads(line)
            if "return" in r:
                return r["return"]
            if "error" in r:
                raise RunError("QMP %s: %s" % (name, r["error"].get("desc")))

    def close(self):
        try:
            self.f.close()
            self.s.close()
        except OSError:
            pass


def pin_vcpus(cpus, pin):
    """Pins each vCPU thread (from query-cpus-fast) to its own host CPU
    where there are enough, round robin where not.  Returns the record."""
    allowed = sorted(os.sched_getaffinity(0))
    rec = {"mode": "pinned" if pin else "floating", "host_cpus": allowed, "vcpus": []}
    tids = [c.get("thread-id") for c in cpus]
    if pin and len(set(tids)) < len(tids):
        rec["note"] = "vCPUs share one thread (single-threaded TCG): pinned to one host CPU"
    if pin and len(cpus) > len(allowed):
        rec["note"] = "more vCPUs than host CPUs: pinned round robin"
    for i, c in enumerate(sorted(cpus, key=lambda c: c.get("cpu-index", 0))):
        e = {"vcpu": c.get("cpu-index"), "thread_id": c.get("thread-id"), "host_cpu": None}
        if pin:
            host = allowed[i % len(allowed)]
            try:
                os.sched_setaffinity(c["thread-id"], {host})
                e["host_cpu"] = host
            except (OSError, KeyError) as ex:
                raise RunError("pin vCPU %s (thread %s) to CPU %d: %s" % (c.get("cpu-index"), c.get("thread-id"), host, ex))
        rec["vcpus"].append(e)
    return rec


POWEROFF_GRACE = 10.0


def mark(what):
    """Writes clockbench-window-WHAT into the KVM trace, where the harness
    traces this run (CB_TRACE_MARKER: its tracefs instance's trace_marker),
    so that the trace summary can count the events of the measuring window
    apart from QEMU's whole life.  Best effort: no trace, no marker."""
    path = os.environ.get("CB_TRACE_MARKER")
    if not path:
        return
    try:
        with open(path, "w") as f:
            f.write("clockbench-window-%s\n" % what)
    except OSError:
        pass


def watch(chan, proc, t0, alive=None, marks=True):
    """Polls the channel file until the guest ends, or POWEROFF_GRACE
    seconds after an end line if it does not.  Returns (bytes, hello ms,
    result ms) with times since t0, None where not seen."""
    data, hello_ms, result_ms = b"", None, None
    f = None
    while True:
        done = (proc.poll() is not None) if proc else not alive()
        if result_ms is not None and time.monotonic() - t0 > result_ms / 1000 + POWEROFF_GRACE:
            done = True
        if f is None and os.path.exists(chan):
            f = open(chan, "rb")
        if f is not None:
            more = f.read()
            if more:
                data += more
                t = round((time.monotonic() - t0) * 1000)
                if hello_ms is None and b"CLOCKBENCH-HELLO" in data:
                    hello_ms = t
                    if marks:
                        mark("start")
                if result_ms is None and b"CLOCKBENCH-END" in data:
                    result_ms = t
                    if marks:
                        mark("end")
        if done:
            break
        time.sleep(0.005)
    if f is not None:
        data += f.read()
        f.close()
    return data, hello_ms, result_ms


def console_verdict(work):
    """A hint from the console log: a panic, or nothing."""
    text = read_text(os.path.join(work, "console.log")) or ""
    for line in text.splitlines():
        if "Kernel panic" in line:
            return line.strip()
    return None


def stop(proc, grace):
    """Waits up to grace seconds for timeout(1) and QEMU to end, then kills
    the process group they run in (their own session)."""
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def boot_qemu(a, accel, work, params, timeout, pin, probe=False):
    """Runs QEMU once under timeout -k.  Returns a dict with the channel
    bytes, times, exit status, pinning and the command line."""
    argv = qemu_argv(a, accel, work, params)
    full = ["timeout", "-k", "5", str(timeout)] + argv
    with open(os.path.join(work, "qemu.log"), "wb") as log:
        t0 = time.monotonic()
        proc = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        pinning = None
        try:
            q = QMP(os.path.join(work, "qmp.sock"), proc)
            pinning = pin_vcpus(q.cmd("query-cpus-fast"), pin)
            q.cmd("cont")
            q.close()
        except RunError as e:
            stop(proc, 2)
            qlog = read_text(os.path.join(work, "qemu.log")) or ""
            raise RunError("QEMU failed to start: %s" % (qlog.splitlines()[-1] if qlog else e))
        data, hello_ms, result_ms = watch(os.path.join(work, "channel.out"), proc, t0, marks=not probe)
        rc = proc.poll()
    finally:
        stop(proc, 0)
    if rc is None:
        print("%s: warning: the guest did not power off within %.0f s of its result: QEMU killed" % (
            PROG, POWEROFF_GRACE), file=sys.stderr)
    return {"data": data, "hello_ms": hello_ms, "result_ms": result_ms, "status": rc,
            "wall_ms": round((time.monotonic() - t0) * 1000), "pinning": pinning, "argv": argv}


def explain_status(b, timeout, work):
    """Raises RunError for an exit status that means failure before the
    channel is looked at, with the best reason known."""
    rc = b["status"]
    if rc is None:
        return
    if rc in (124, 137):
        raise RunError("guest timed out after %ss%s" % (
            timeout, "" if b["hello_ms"] is None else " (init started at %d ms)" % b["hello_ms"]))
    if rc in GUEST_CODES:
        try:
            guestframe.result(guestframe.parse(b["data"]))
        except guestframe.FrameError as e:
            raise RunError("%s (QEMU status %d): %s" % (GUEST_CODES[rc], rc, e))
        raise RunError("%s (QEMU status %d)" % (GUEST_CODES[rc], rc))
    if rc != 0:
        qlog = read_text(os.path.join(work, "qemu.log")) or ""
        raise RunError("QEMU exited with status %d: %s" % (rc, qlog.splitlines()[-1] if qlog else "no message"))


def place(data, final):
    """Writes data to final atomically (temp file beside it, fsync, link),
    never replacing an existing file."""
    d = os.path.dirname(final)
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(final) + ".", dir=d)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        try:
            os.link(tmp, final)
        except FileExistsError:
            raise RunError("%s exists: results are never overwritten; choose another RUN_ID" % final)
    finally:
        os.unlink(tmp)


def fmt(v, nd=1):
    return "-" if v is None else ("%.*f" % (nd, v) if isinstance(v, float) else str(v))


def table(doc, path=None):
    """The readable summary of one result: launcher and guest facts, then
    one row per clock x method x threads."""
    la, g, b = doc.get("launcher", {}), doc.get("guest", {}), doc.get("bench", {})
    lg = g.get("log", {})
    emu = la.get("emulated")
    out = []
    if path:
        out.append(path)
    out.append("guest: %s vCPU, %s, cpu %s, accel %s%s; host clocksource %s; boot %s ms to init, %s ms to result" % (
        la.get("vcpus"), la.get("machine"), la.get("cpu"), la.get("accel"),
        " (EMULATED: TCG figures, not a KVM guest's)" if emu else "",
        la.get("host", {}).get("clocksource"), fmt(la.get("boot_ms")), fmt(la.get("result_ms"))))
    out.append("guest clocksource %s (available: %s); kvm stable bit %s; sched_clock stable %s; TSC marked unstable %s; invtsc %s" % (
        g.get("clocksource"), g.get("available_clocksource", "").strip(), fmt(g.get("kvm_stable_bit_advertised")),
        fmt(lg.get("sched_clock_marked_stable")), fmt(lg.get("tsc_marked_unstable")), fmt(g.get("invtsc"))))
    pin = la.get("pinning") or {}
    out.append("vCPUs %s: %s" % (pin.get("mode"), ", ".join(
        "%s->%s" % (v.get("vcpu"), "float" if v.get("host_cpu") is None else v.get("host_cpu")) for v in pin.get("vcpus", []))))
    rows = b.get("results") or []
    hdr = ("clock", "method", "threads", "path", "median ns", "p99 ns", "calls/s total")
    cells = [hdr]
    for r in rows:
        ns = r.get("ns_per_call") or {}
        cps = r.get("calls_per_sec_total")
        cells.append((fmt(r.get("clock")), fmt(r.get("method")), fmt(r.get("threads")), fmt(r.get("path")),
                      fmt(ns.get("median")), fmt(ns.get("p99")), "-" if cps is None else "%.0f" % cps))
    w = [max(len(c[i]) for c in cells) for i in range(len(hdr))]
    for c in cells:
        out.append("  ".join(c[i].ljust(w[i]) if i in (0, 1, 3) else c[i].rjust(w[i]) for i in range(len(hdr))).rstrip())
    if not rows:
        out.append("(no result rows)")
    if emu:
        out.append("EMULATED: accel tcg; timings are QEMU's emulator, not a hypervisor's. Compare paths and facts, not nanoseconds.")
    return "\n".join(out)


def cmd_probe(a):
    """Prints "ok MS" when the guest reached /init under KVM, else "fail
    REASON" (one line each, on stdout) and exits 1."""
    work = tempfile.mkdtemp(prefix="clockbench-probe.")
    try:
        b = boot_qemu(a, "kvm", work, [("probe", "1")], a.timeout, False, probe=True)
    except RunError as e:
        print("fail %s" % e)
        shutil.rmtree(work, ignore_errors=True)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    if b["hello_ms"] is not None:
        print("ok %d" % b["hello_ms"])
        return 0
    if b["status"] in (124, 137):
        print("fail no guest /init within %ss under -accel kvm" % a.timeout)
    else:
        print("fail guest did not reach /init under -accel kvm (QEMU status %d)" % b["status"])
    return 1


def cmd_run(a):
    host = host_facts()
    suffix = "-libvirt" if a.backend == "libvirt" else ""
    outdir = os.path.join(a.results, a.run_id)
    name = "guest-%s-%dvcpu%s" % (host["clocksource"] or "unknown", a.vcpus, suffix)
    final_json = os.path.join(outdir, name + ".json")
    final_log = os.path.join(outdir, name + ".console.log")
    for p in (final_json, final_log):
        if os.path.lexists(p):
            print("%s: %s exists: results are never overwritten; choose another RUN_ID" % (PROG, p), file=sys.stderr)
            return 1
    params = [tuple(kv.split("=", 1)) for kv in a.param if "=" in kv]
    work = tempfile.mkdtemp(prefix="clockbench-guest.")
    console = os.path.join(work, "console.log")
    started = now_iso()
    try:
        if a.backend == "libvirt":
            import guestvirt
            try:
                b = guestvirt.boot(a, a.accel, work, a.timeout, a.pin, kernel_append(a, params), watch)
            except guestvirt.RunError as e:
                raise RunError(str(e))
        else:
            b = boot_qemu(a, a.accel, work, params, a.timeout, a.pin)
        explain_status(b, a.timeout, work)
        try:
            doc = guestframe.result(guestframe.parse(b["data"]))
        except guestframe.FrameError as e:
            panic = console_verdict(work)
            raise RunError("guest panic: %s" % panic if panic else str(e))
        host["clocksource_end"] = read_text("/sys/devices/system/clocksource/clocksource0/current_clocksource")
        bench = doc.get("bench")
        if not isinstance(bench, dict) or not isinstance(bench.get("results"), list):
            raise RunError("result frame: no bench.results from the engine")
        launcher = {
            "backend": a.backend,
            "qemu": a.qemu,
            "qemu_version": qemu_version(a.qemu),
            "machine": a.machine,
            "machine_options": machine_opts(a),
            "cpu": a.cpu,
            "accel": a.accel,
            "emulated": a.accel == "tcg",
            "accel_requested": a.accel_requested,
            "accel_note": a.accel_note or None,
            "vcpus": a.vcpus,
            "memory_mb": a.mem,
            "hpet": a.hpet,
            "kernel": os.path.abspath(a.kernel),
            "initramfs": os.path.abspath(a.initramfs),
            "initramfs_sha256": sha256(a.initramfs),
            "append": kernel_append(a, params),
            "pinning": b["pinning"],
            "host": host,
            "started": started,
            "boot_ms": b["hello_ms"],
            "boot_ms_means": "launch to the guest's first line on the results channel (/init running)",
            "result_ms": b["result_ms"],
            "wall_ms": b["wall_ms"],
            "timeout_s": a.timeout,
            "exit_status": b["status"],
            "console_log": os.path.basename(final_log),
            "command": b["argv"],
        }
        if "domain_xml" in b:
            launcher["libvirt_uri"] = os.environ.get("LIBVIRT_URI", "qemu:///system")
            launcher["libvirt_domain_xml"] = b["domain_xml"]
        out = {"schema": doc["schema"], "launcher": launcher, "guest": doc.get("guest"), "bench": bench}
        os.makedirs(outdir, exist_ok=True)
        with open(console, "rb") as f:
            place(f.read(), final_log)
        try:
            place(json.dumps(out, indent=1).encode() + b"\n", final_json)
        except BaseException:
            os.unlink(final_log)
            raise
    except RunError as e:
        print("%s: %s (console log: %s)" % (PROG, e, console), file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("%s: interrupted (console log: %s)" % (PROG, console), file=sys.stderr)
        return 1
    except OSError as e:
        print("%s: %s: %s (console log: %s)" % (PROG, e.filename, e.strerror, console), file=sys.stderr)
        return 1
    shutil.rmtree(work, ignore_errors=True)
    if not a.quiet:
        print(table(out, final_json))
    else:
        print(final_json)
    return 0


def cmd_table(a):
    rc = 0
    for p in a.files:
        try:
            with open(p) as f:
                print(table(json.load(f), p))
        except (OSError, ValueError) as e:
            print("%s: %s: %s" % (PROG, p, e), file=sys.stderr)
            rc = 1
    return rc


def main():
    ap = argparse.ArgumentParser(prog="guestrun.py", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("probe", "run"):
        s = sub.add_parser(name)
        s.add_argument("--qemu", default="qemu-system-x86_64")
        s.add_argument("--kernel", required=True)
        s.add_argument("--initramfs", required=True)
        s.add_argument("--machine", default="q35", choices=("q35", "pc", "microvm"))
        s.add_argument("--cpu", default="max")
        s.add_argument("--vcpus", type=int, default=1)
        s.add_argument("--mem", type=int, default=256)
        s.add_argument("--hpet", default="default", choices=("on", "off", "default"))
        s.add_argument("--append", default="")
        s.add_argument("--timeout", type=int, default=300)
        s.add_argument("--param", action="append", default=[], help="KEY=VALUE for clockbench.KEY=VALUE")
    r = sub.choices["run"]
    r.add_argument("--backend", default="qemu", choices=("qemu", "libvirt"))
    r.add_argument("--accel", required=True, choices=("kvm", "tcg"))
    r.add_argument("--accel-requested", default=None)
    r.add_argument("--accel-note", default="")
    r.add_argument("--pin", type=int, default=1, choices=(0, 1))
    r.add_argument("--results", required=True)
    r.add_argument("--run-id", required=True)
    r.add_argument("--quiet", action="store_true")
    t = sub.add_parser("table")
    t.add_argument("files", nargs="+")
    a = ap.parse_args()
    if a.cmd == "probe":
        return cmd_probe(a)
    if a.cmd == "run":
        return cmd_run(a)
    return cmd_table(a)


if __name__ == "__main__":
    sys.exit(main())
