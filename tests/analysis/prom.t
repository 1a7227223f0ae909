#!/usr/bin/python3
# tier: fast
"""prom.t: the node_exporter textfile: format, names, base units, atomic write; promtool where installed."""
import json
import os
import re
import shutil
import stat
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, LAB, ROOT, Tap, read, run  # noqa: E402

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
SAMPLE = re.compile(r'^(%s)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*"(,[a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*")*)\})? '
                    r'(-?[0-9.]+(e[-+]?[0-9]+)?|NaN|[-+]Inf)$' % NAME)

t = Tap()
out = os.path.join(t.tmp, "clockbench.prom")
with open(out, "w") as f:
    f.write("old\n")
rc, so, se = run("prom", "-o", out, BEFORE)
text = read(out)
t.ok(rc == 0 and se == "" and text != "old\n", "prom exits 0 and replaces the file", se)
t.ok(stat.S_IMODE(os.stat(out).st_mode) == 0o644 and sorted(os.listdir(t.tmp)) == ["clockbench.prom"],
     "mode 0644 (node_exporter reads it), no temporary file left", os.listdir(t.tmp))

lines = text.splitlines()
bad, typed, helped, seen_series, seen_families, order_bad = [], set(), set(), set(), [], []
for ln in lines:
    if ln.startswith("# HELP "):
        helped.add(ln.split()[2])
    elif ln.startswith("# TYPE "):
        name, kind = ln.split()[2:4]
        if kind != "gauge" or name in typed:
            bad.append(ln)
        typed.add(name)
        seen_families.append(name)
    elif ln.startswith("#"):
        continue
    else:
        m = SAMPLE.match(ln)
        if not m:
            bad.append(ln)
            continue
        if not seen_families or m.group(1) != seen_families[-1]:
            order_bad.append(ln)
        series = ln.rsplit(" ", 1)[0]
        if series in seen_series:
            bad.append("duplicate " + ln)
        seen_series.add(series)
t.ok(not bad and lines, "every line is HELP, TYPE gauge (once) or a well-formed sample", bad[:5])
t.ok(not order_bad and helped == typed, "samples follow their own HELP and TYPE", order_bad[:3])
t.ok(all(n.startswith("node_clockbench_") for n in typed), "every name begins with node_clockbench_", typed)
units = [n for n in typed if re.search(r"_(ns|nanoseconds|ms|us|mhz)$", n)]
t.ok(not units and "node_clockbench_tsc_frequency_hertz" in typed, "base units only (seconds, hertz)", units)
infos = [ln for ln in lines if re.match(r"node_clockbench_\w+_info\{", ln)]
t.ok(infos and all(ln.endswith("} 1") for ln in infos) and {"node_clockbench_measurement_info", "node_clockbench_tsc_check_info"} <= typed,
     "info metrics end in _info and have the value 1", infos[:2])

# Figures: 25 ns = 2.5e-08 s; 1900 ns p99 2600 ns; the guest on hpet lost the stable bit.
want = [
    'node_clockbench_clock_read_median_seconds{where="host",clocksource="tsc",clock="monotonic",method="vdso",threads="1"} 2.5e-08',
    'node_clockbench_clock_read_p99_seconds{where="host",clocksource="hpet",clock="monotonic",method="vdso",threads="2"} 2.6e-06',
    'node_clockbench_clock_read_user_space{where="guest",clocksource="hpet",vcpus="2",clock="monotonic",method="vdso"} 0',
    'node_clockbench_clock_read_user_space{where="host",clocksource="tsc",clock="monotonic",method="vdso"} 1',
    'node_clockbench_guest_stable_bit{where="guest",clocksource="hpet",vcpus="2",source="trace"} 0',
    'node_clockbench_guest_master_clock{where="guest",clocksource="tsc",vcpus="2"} 1',
    'node_clockbench_guest_tsc_offset_writes{where="guest",clocksource="hpet",vcpus="2"} 12',
    'node_clockbench_tsc_max_offset_seconds{where="host",clocksource="tsc"} 1e-08',
    'node_clockbench_last_run_timestamp_seconds 1767268840',
]
missing = [w for w in want if w not in lines]
t.ok(not missing, "values in seconds and 0/1 facts, as computed by hand", missing)
t.ok(not any('clock="realtime",method="vdso",threads' in ln for ln in lines), "only CLOCK_MONOTONIC by default")
rc, so, se = run("prom", "--all-clocks", "-o", out, BEFORE)
t.ok(rc == 0 and 'clock="realtime",method="vdso",threads="1"} 2.55e-08' in read(out), "--all-clocks adds the others")

rc, so, se = run("prom", "-o", out, LAB)
lab = read(out)
t.ok(rc == 0 and 'where="guest"' not in lab and "# clockbench: left out" in lab and "emulated" in lab,
     "an emulated guest is left out, with a comment saying so")

rc, so, se = run("report", "--no-plots", "-o", os.path.join(t.tmp, "r"), "--prom", os.path.join(t.tmp, "r.prom"), BEFORE)
t.ok(rc == 0 and read(os.path.join(t.tmp, "r.prom")) == text, "report --prom FILE writes the same file as prom", se)
rc, so, se = run("prom", "-o", "/nonexistent-dir/x.prom", BEFORE)
t.ok(rc == 1 and len(se.splitlines()) == 1 and "/nonexistent-dir" in se, "an unwritable folder: exit 1, one line naming it", se)

# The trace's measuring window (kvmtrace.py "measuring"), where a result has one.
mw = os.path.join(t.tmp, "mw")
shutil.copytree(BEFORE, mw)
g = os.path.join(mw, "kvm-trace-hpet-2vcpu.json")
with open(g) as fh:
    doc = json.load(fh)
doc["measuring"] = dict(doc["life"], available=True, reason=None, seconds=2.75, tsc_offset_writes=14680,
                        pvclock_updates=7331)
with open(g, "w") as fh:
    json.dump(doc, fh)
mw_out = os.path.join(t.tmp, "mw.prom")
rc, so, se = run("prom", "-o", mw_out, mw)
mw_lines = read(mw_out).splitlines() if rc == 0 else []
mw_want = ['node_clockbench_guest_measuring_tsc_offset_writes{where="guest",clocksource="hpet",vcpus="2"} 14680',
           'node_clockbench_guest_measuring_pvclock_updates{where="guest",clocksource="hpet",vcpus="2"} 7331',
           'node_clockbench_guest_measuring_seconds{where="guest",clocksource="hpet",vcpus="2"} 2.75']
t.ok(all(w in mw_lines for w in mw_want) and not any("_measuring_" in ln and 'clocksource="tsc"' in ln for ln in mw_lines),
     "the measuring window's counts and length, only for the result that has one",
     [w for w in mw_want if w not in mw_lines] or se)

# The one writer (contract/cbcontract/textfile.py): the folder's rules.  As root, a folder owned by root or by
# node_exporter's account and writable by its owner only is taken; one owned by another user, one others can
# write to, and a path through a symlink are refused, and nothing is written there.
sys.path.insert(0, os.path.join(ROOT, "contract"))
from cbcontract import textfile  # noqa: E402
from cbcontract.util import InputError  # noqa: E402


def try_write(folder):
    try:
        textfile.write(folder, "x.prom", "node_clockbench_x 1\n")
        return None
    except InputError as e:
        return str(e)


import pwd  # noqa: E402
svc = next((pwd.getpwnam(n) for n in textfile.SERVICE_USERS if n in {p.pw_name for p in pwd.getpwall()}), None)
if os.geteuid() != 0 or svc is None:
    for _ in range(4):
        t.skip("needs root and node_exporter's account (Debian: prometheus-node-exporter)")
else:
    base = os.path.join(t.tmp, "w")
    os.mkdir(base, 0o755)
    own = os.path.join(base, "svc")
    os.mkdir(own, 0o755)
    os.chown(own, svc.pw_uid, svc.pw_gid)
    e = try_write(own)
    t.ok(e is None and read(os.path.join(own, "x.prom")) == "node_clockbench_x 1\n" and os.listdir(own) == ["x.prom"],
         "a folder of %s's, 0755: written, no temporary file left" % svc.pw_name, e)
    os.chmod(own, 0o775)
    e = try_write(own)
    t.ok(e and "other users can write" in e and len(e.splitlines()) == 1, "the same, group-writable: refused", e)
    other = os.path.join(base, "nobody")
    os.mkdir(other, 0o755)
    os.chown(other, 65534, 65534)
    e = try_write(other)
    t.ok(e and "uid 65534" in e and os.listdir(other) == [], "a folder of another user's: refused, nothing made", e)
    real = os.path.join(base, "real")
    os.mkdir(real, 0o755)
    os.symlink("real", os.path.join(base, "link"))
    e = try_write(os.path.join(base, "link"))
    t.ok(e and "symlink" in e and os.listdir(real) == [], "a path through a symlink: refused (never followed)", e)

promtool = shutil.which("promtool")
if not promtool:
    for _ in range(4):
        t.skip("promtool not installed (Debian: prometheus)")
else:
    run("prom", "-o", out, BEFORE)
    p = subprocess.run([promtool, "check", "metrics"], stdin=open(out), capture_output=True, text=True)
    t.ok(p.returncode == 0, "promtool check metrics", p.stdout + p.stderr)
    p = subprocess.run([promtool, "check", "metrics"], stdin=open(mw_out), capture_output=True, text=True)
    t.ok(p.returncode == 0, "promtool check metrics, with the measuring window's metrics", p.stdout + p.stderr)
    rules = os.path.join(ROOT, "analysis", "fleet", "clockbench-alerts.yml")
    p = subprocess.run([promtool, "check", "rules", rules], capture_output=True, text=True)
    t.ok(p.returncode == 0, "promtool check rules analysis/fleet/clockbench-alerts.yml", p.stdout + p.stderr)
    p = subprocess.run([promtool, "test", "rules", os.path.join(ROOT, "tests", "analysis", "alerts-test.yml")],
                       capture_output=True, text=True)
    t.ok(p.returncode == 0, "promtool test rules tests/analysis/alerts-test.yml: each rule's cases (a nested "
         "hypervisor and a healed VM among them)", p.stdout + p.stderr)
t.done()
