#!/usr/bin/python3
# tier: slow
# test-timeout: 900
"""states.t: every machine state of tests/host-scripts/fixtures/states/states.cfg, judged from recorded inputs:
health's state, cause and exit status; the watch's node_clockbench_clock_healthy; the bench screen of the real compare on a fake clocksource folder (host
only, short cells): its exit status, ratio or no ratio (never x1.00 without a tsc row), the phrase of its first
lines; and the watch's health metric.  Adding a state is adding a stanza (TAP)."""
import concurrent.futures
import configparser
import json
import os
import re
import shutil
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib")]
from taplib import Tap  # noqa: E402

t = Tap()
FX = os.path.join(TOP, "tests", "host-scripts", "fixtures")
CPU = os.path.join(FX, "watchdog", "cpuinfo")
PROBE = {"user": os.path.join(TOP, "tests", "analysis", "fixtures", "20260101-120000-hv1", "host-tsc.json"),
         "syscall": os.path.join(TOP, "tests", "analysis", "fixtures", "20260101-120000-hv1", "host-hpet.json")}
cfg = configparser.ConfigParser(interpolation=None)
cfg.read(os.path.join(FX, "states", "states.cfg"))
KEYS = {"what", "available", "current", "cpuinfo", "cmdline", "log", "probe", "health", "screen", "watch"}


def inputs(name, s):
    """(the state's folder, health's recorded options) for stanza s."""
    d = os.path.join(t.tmp, name)
    os.makedirs(os.path.join(d, "cs"))
    for k in ("available", "current"):
        with open(os.path.join(d, "cs", k + "_clocksource"), "w") as f:
            f.write(s[k] + "\n")
    args = ["--cs-dir", os.path.join(d, "cs"), "--cpuinfo", os.path.join(CPU, s["cpuinfo"]),
            "--log", os.path.join(FX, s["log"]) if s["log"] != "none" else os.path.join(d, "no-log")]
    if s["cmdline"] != "none":
        with open(os.path.join(d, "cmdline"), "w") as f:
            f.write(s["cmdline"] + "\n")
        args += ["--cmdline", os.path.join(d, "cmdline")]
    if s["probe"] != "none":
        args += ["--probe", PROBE[s["probe"]]]
    return d, args


def bench_screen(name, d, args):
    """compare (host only, short cells) on the state's inputs: the
    CompletedProcess.  Every clocksource the state offers (compare's
    default), each in cells of the headline clock (what the screen
    divides).  Its clocksource folder is a copy of the state's (mtimes
    kept): the switches of its steps never reach the folder health
    and the watch read meanwhile."""
    cs = os.path.join(d, "bench-cs")
    shutil.copytree(os.path.join(d, "cs"), cs)
    env = dict(os.environ, CB_CS_DIR=cs, CB_STATE_DIR=os.path.join(d, "state"),
               CB_KVM_DEV=os.path.join(d, "kvm"),
               CB_HEALTH_ARGS=" ".join(a for a in args if a not in ("--cs-dir", os.path.join(d, "cs"))))
    open(env["CB_KVM_DEV"], "w").close()
    return subprocess.run([os.path.join(TOP, "host-scripts", "bench"), "--no-guest", "--report-out", os.path.join(d, "report"),
                           "--duration", "0.02", "--threads", "1", "--rounds", "1", "--workloads", "none",
                           "--tsc-rate-seconds", "0", "--clocks", "monotonic", "--methods", "vdso,syscall,rdtsc",
                           os.path.join(d, "results"), "r1"],
                          capture_output=True, text=True, env=env, timeout=600)


have_engine = os.access(os.path.join(TOP, "bench", "clockbench"), os.X_OK)
# Each state's compare runs in folders of its own: three at a time, begun
# here, beside the health and watch runs below (each waits on its
# engine's cells and checks much of its time); each judged in its turn.
states = {}
for name in cfg.sections():
    states[name] = inputs(name, cfg[name])
pool = concurrent.futures.ThreadPoolExecutor(max_workers=3)
screens = {name: pool.submit(bench_screen, name, *states[name]) for name in cfg.sections()} if have_engine else {}
t.ok(cfg.sections() and all(set(cfg[n]) == KEYS for n in cfg.sections()),
     "states.cfg: %d states, each with every key" % len(cfg.sections()),
     [n for n in cfg.sections() if set(cfg[n]) != KEYS])
for name in cfg.sections():
    s = cfg[name]
    d, args = states[name]
    want_state, want_cause = s["health"].split()
    p = subprocess.run([os.path.join(TOP, "host-scripts", "health"), "--format", "json", "--no-tsc-check",
                        "--trace-seconds", "0", "--watchdog-seconds", "0"] + args,
                       capture_output=True, text=True, timeout=120)
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        doc = {}
    got = (doc.get("state"), doc.get("cause"), p.returncode)
    t.ok(got == (want_state, want_cause, 0 if want_state == "healthy" else 1),
         "%s: health says %s, %s (exit %d)" % (name, got[0], got[1], got[2]), p.stderr[-300:])
    leaked = [k for k, v in (doc.get("sources") or {}).items() if v == "this machine"]
    t.ok(doc and not leaked, "%s: nothing of this machine read for a recorded state" % name, leaked)
    # The watch, on the same inputs (health's JSON recorded, the log as
    # its kernel log): its health metric, by the same rule.
    hcj, tf = os.path.join(d, "health.json"), os.path.join(d, "textfile")
    with open(hcj, "w") as f:
        f.write(p.stdout)
    os.mkdir(tf)
    w = subprocess.run([os.path.join(TOP, "host-scripts", "watch"), "--once", "--no-trace", "--textfile-dir", tf],
                       capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, CB_CS_DIR=os.path.join(d, "cs"), CB_CPUINFO=os.path.join(CPU, s["cpuinfo"]),
                                CB_HEALTH_JSON=hcj, CB_WATCH_KEEP_PRIVILEGES="1",
                                CB_WATCH_RUN_DIR=os.path.join(d, "watch-run"),
                                CB_KMSG=os.path.join(FX, s["log"]) if s["log"] != "none" else os.devnull))
    text = ""
    for root, _, files in os.walk(tf):
        for n in files:
            if n.endswith(".prom"):
                text += open(os.path.join(root, n)).read()
    m = re.search(r"^node_clockbench_clock_healthy (\S+)$", text, re.M)
    got = int(float(m.group(1))) if m else -1
    t.ok(w.returncode == 0 and got == int(s["watch"]), "%s: the watch's node_clockbench_clock_healthy %d (want %s)"
         % (name, got, s["watch"]), w.stderr[-300:])
    if not have_engine:
        t.skip("%s: bench/clockbench not built" % name)
        continue
    q = screens[name].result()
    screen = q.stdout
    kind, phrase = [x.strip() for x in s["screen"].split("|", 1)]
    ratios = re.findall(r"\bx\d+\.\d\d\b", screen)
    flat = " ".join(screen.split())
    ok_ratio = bool(ratios) if kind == "ratio" else (not ratios and "no ratio" in flat)
    t.ok(q.returncode == 0 and ok_ratio and phrase in flat,
         "%s: make bench's screen: exit %d, %s, says '%s'" % (name, q.returncode, kind, phrase),
         "\n".join(("stderr: " + q.stderr[-400:], screen[:1600])))
pool.shutdown()
sys.exit(t.done())
