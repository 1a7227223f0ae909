#!/usr/bin/python3
# tier: fast
# test-timeout: 300
"""watch-nested.t: clockbench watch on a guest that runs VMs (nested KVM), from a recorded round trip
(tests/host-scripts/fixtures/trace-nested-round-trip.txt: a VM started on tsc, its host switched to kvm-clock,
back to tsc, then a QMP stop and cont).  Each phase's lines as the instance's trace_pipe, the clocksource of that
phase in a fake folder, health's JSON saying a KVM guest whose reads stay in user space: the VM is one
(its vCPU threads' lines counted to QEMU's pid by the TGID column), node_clockbench_vms_running counts it, its
stable bit follows the phases, and node_clockbench_clock_healthy is 0 while the machine is off tsc under its VM
(clockbench's one rule), 1 back on tsc and after the heal; a guest that runs no VM is judged as before (TAP)."""
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
from taplib import Tap  # noqa: E402

t = Tap()
os.chmod(t.tmp, 0o755)  # as root the watch drops to its own account, then re-reads the fake files below
FX = os.path.join(ROOT, "tests", "host-scripts", "fixtures")
WATCH = os.path.join(ROOT, "host-scripts", "watch")
FILE = "clockbench-watch.prom"
PROMTOOL = shutil.which("promtool")
QEMU, VCPUS = "2832", ("2836", "2837")  # the fixture's VM: QEMU's pid, its vCPU threads

# The fixture's phases, in order, each the lines up to its end.
phases, name = {}, None
with open(os.path.join(FX, "trace-nested-round-trip.txt")) as f:
    for ln in f:
        m = re.match(r"# phase: (\w+)$", ln)
        if m:
            name = m.group(1)
            phases[name] = []
        elif name and not ln.startswith("#"):
            phases[name].append(ln)
t.ok(list(phases) == ["start", "switch", "return", "heal"] and all(phases.values())
     and all("(   %s)" % QEMU in ln for p in phases.values() for ln in p),
     "the fixture: four phases of VM %s's lines, each line with the TGID column" % QEMU, list(phases))

cpuinfo = os.path.join(t.tmp, "cpuinfo")
with open(cpuinfo, "w") as f:
    f.write("processor\t: 0\nflags\t\t: fpu tsc rdtscp constant_tsc nonstop_tsc hypervisor\n")
hcj = os.path.join(t.tmp, "health.json")
with open(hcj, "w") as f:  # health on that machine: a KVM guest, its own reads in user space
    json.dump({"schema": "clockbench-health/1", "machine": {"guest": True, "hypervisor": "KVM"},
               "clock_read_path": "user"}, f)
proc = os.path.join(t.tmp, "proc")
os.makedirs(os.path.join(proc, QEMU))
with open(os.path.join(proc, QEMU, "cmdline"), "w") as f:
    f.write("\0".join(["qemu-system-x86_64", "-name", "l2", "-accel", "kvm", "-cpu", "qemu64", "-smp", "2"]) + "\0")
libvirt_run = os.path.join(t.tmp, "libvirt")
os.mkdir(libvirt_run)
log = os.path.join(t.tmp, "kmsg.txt")
open(log, "w").close()


def fake_cs(d, cur):
    os.makedirs(d, exist_ok=True)
    for n, v in (("current_clocksource", cur), ("available_clocksource", "tsc kvm-clock acpi_pm")):
        with open(os.path.join(d, n), "w") as f:
            f.write(v + "\n")
    return d


def samples(text):
    """{(name, frozenset(labels)): value} of a textfile's text."""
    out = {}
    for ln in text.splitlines():
        if ln.startswith("#") or not ln:
            continue
        m = re.match(r'([a-z_:]+)(?:\{(.*)\})? (\S+)$', ln)
        out[(m.group(1), frozenset(re.findall(r'([a-z_]+)="((?:[^"\\]|\\.)*)"', m.group(2) or "")))] = float(m.group(3))
    return out


def value(s, name, **labels):
    return s.get((name, frozenset(labels.items())))


def watch(tag, lines, cs, *args):
    """--once on lines as the trace_pipe and clocksource cs: (exit, stderr, samples, text)."""
    d = os.path.join(t.tmp, tag)
    os.mkdir(d, 0o755)
    trace = os.path.join(t.tmp, tag + ".trace")
    with open(trace, "w") as f:
        f.writelines(lines)
    env = dict(os.environ, CB_CS_DIR=fake_cs(os.path.join(t.tmp, tag + "-cs"), cs), CB_CPUINFO=cpuinfo,
               CB_HEALTH_JSON=hcj, CB_LIBVIRT_RUN=libvirt_run, CB_KMSG=log, CB_TRACE_PIPE=trace, CB_PROC=proc)
    p = subprocess.run([WATCH, "--once", "--textfile-dir", d] + list(args), capture_output=True, text=True,
                       env=env, timeout=60)
    try:
        with open(os.path.join(d, FILE)) as f:
            text = f.read()
    except OSError:
        text = ""
    return p.returncode, p.stderr, samples(text), os.path.join(d, FILE)


def promtool_ok(path):
    if not PROMTOOL:
        return True
    with open(path) as f:
        p = subprocess.run([PROMTOOL, "check", "metrics"], stdin=f, capture_output=True, text=True)
    return p.returncode == 0 or print("# " + (p.stdout + p.stderr)[-300:].replace("\n", "\n# "))


vm = dict(vm="l2", pid=QEMU, name_from="cmdline")
# Each phase: the lines so far, the clocksource then, and what the watch must say.
# (tag, clocksource, stable bit, master clock, healthy, health state)
WANT = (("start", "tsc", 1, 1, 1, "healthy"),
        ("switch", "kvm-clock", 0, 0, 0, "degraded"),
        ("return", "tsc", 0, 0, 0, "degraded"),  # back on tsc, its VM still without the bit: not healthy
        ("heal", "tsc", 1, 1, 1, "healthy"))
sofar = []
for tag, cs, bit, mc, healthy, state in WANT:
    sofar += phases[tag]
    rc, err, s, path = watch(tag, sofar, cs)
    vm_pids = sorted({dict(k[1]).get("pid") for k in s if k[0].startswith("node_clockbench_vm_")})
    got = (value(s, "node_clockbench_vm_stable_bit", **vm), value(s, "node_clockbench_vm_master_clock", **vm),
           value(s, "node_clockbench_vms_running"), value(s, "node_clockbench_clock_healthy"),
           value(s, "node_clockbench_clock_health_info", state=state))
    t.ok(rc == 0 and vm_pids == [QEMU] and got == (bit, mc, 1, healthy, 1),
         "%s (on %s): one VM (pid %s, its vCPU threads' lines counted to it), stable bit %d, master clock %d; "
         "node_clockbench_vms_running 1; node_clockbench_clock_healthy %d (%s)" % (tag, cs, QEMU, bit, mc, healthy, state),
         (err, vm_pids, got))
t.ok(value(s, "node_clockbench_vm_pvclock_updates_total", stable_bit="0", **vm) == 2
     and value(s, "node_clockbench_vm_pvclock_updates_total", stable_bit="1", **vm) == 4
     and value(s, "node_clockbench_machine_info", guest="true", hypervisor="KVM") == 1 and promtool_ok(path),
     "after the heal: 2 pvclock updates without the bit (the switch, the return), 4 with; a KVM guest "
     "(node_clockbench_machine_info); promtool check metrics")

# The same switch with the VM's process gone: no VM runs, the guest is judged by its own clock.
shutil.rmtree(os.path.join(proc, QEMU))
rc, err, s, _ = watch("gone", phases["start"] + phases["switch"], "kvm-clock")
t.ok(rc == 0 and value(s, "node_clockbench_vms_running") == 0 and value(s, "node_clockbench_clock_healthy") == 1
     and not any(k[0] == "node_clockbench_vm_stable_bit" for k in s),
     "its QEMU gone: node_clockbench_vms_running 0, and the guest on kvm-clock read in user space is healthy",
     (err, value(s, "node_clockbench_vms_running"), value(s, "node_clockbench_clock_healthy")))
# A plain guest, its KVM events not followed: whether it runs VMs is not known (no gauge), judged as before.
rc, err, s, _ = watch("plain", [], "kvm-clock", "--no-trace")
t.ok(rc == 0 and value(s, "node_clockbench_clock_healthy") == 1
     and not any(k[0] == "node_clockbench_vms_running" for k in s),
     "KVM's events not followed (--no-trace): no node_clockbench_vms_running, the guest judged by its own clock (1)",
     (err, sorted(k[0] for k in s if "vms" in k[0] or "healthy" in k[0])))
t.done()
