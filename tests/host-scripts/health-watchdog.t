#!/usr/bin/python3
# tier: fast
"""health-watchdog.t: health's watchdog section and boot history, on recorded hosts.

Is the TSC watched: one recorded host per rule of tsc.c and of the kernel
table (contract/cbcontract/kernels.py; the rules-fixed.json fixture where
the table's figures must not matter), each input given as a file
(--osrelease, --kversion, --cpuinfo, --cmdline, --nodes, --cpus-online,
--cs-dir, --cs-params, --kconfig).  Then the limits, the near misses of the
seeds' logs, the risk from recorded readouts, and the boot history from a
folder of boots and from a stand-in journalctl.  Nothing is measured: the
engine's watchdog check runs only in the last test, on this host, where it
only reads.
"""
import importlib.machinery
import importlib.util
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path[:0] = [os.path.join(TOP, "contract"), os.path.join(TOP, "tests", "lib")]
from taplib import Tap, main_to_files, read  # noqa: E402

t = Tap()
HC = os.path.join(TOP, "host-scripts", "health")
FX = os.path.join(TOP, "tests", "host-scripts", "fixtures", "watchdog")
LOGS = os.path.join(TOP, "tests", "host-scripts", "fixtures")
tmp = tempfile.mkdtemp(prefix="health-watchdog.")
try:
    from cbcontract import kernels  # noqa: F401
    TABLE = True
except ImportError:
    TABLE = False


def host(name, release, cpuinfo, avail="tsc hpet acpi_pm", current=None, cmdline="ro quiet", nodes="0",
         online="0-3", version="#1 SMP PREEMPT_DYNAMIC", params=None, kconfig=None):
    """A recorded host's folder of inputs, and health's options for it."""
    d = os.path.join(tmp, name)
    os.makedirs(os.path.join(d, "cs"), exist_ok=True)
    os.makedirs(os.path.join(d, "params"), exist_ok=True)
    files = {"osrelease": release, "version": version, "cmdline": cmdline, "online": online,
             "cs/available_clocksource": avail, "cs/current_clocksource": current or avail.split()[0]}
    if nodes is not None:
        files["nodes"] = nodes
    for k, v in (params or {}).items():
        files["params/" + k] = str(v)
    if kconfig:
        files["kconfig"] = kconfig
    for k, v in files.items():
        with open(os.path.join(d, k), "w") as f:
            f.write(v + "\n")
    argv = ["--osrelease", d + "/osrelease", "--kversion", d + "/version", "--cmdline", d + "/cmdline",
            "--nodes", d + "/nodes", "--cpus-online", d + "/online", "--cs-dir", d + "/cs", "--cs-params", d + "/params",
            "--kconfig", d + "/kconfig",
            "--cpuinfo", os.path.join(FX, "cpuinfo", cpuinfo) if cpuinfo else d + "/no-cpuinfo"]
    return argv


# health's main() in this one process, as its process would run it
# (taplib.main_to_files): some sixty runs, each a Python start otherwise.
_loader = importlib.machinery.SourceFileLoader("health", HC)
hc = importlib.util.module_from_spec(importlib.util.spec_from_loader("health", _loader))
_loader.exec_module(hc)
_n = itertools.count()


def run(argv, fmt="json", env=None):
    """health on argv: (its JSON or text, the CompletedProcess); env: its
    whole environment, as subprocess takes it."""
    args = [HC, "--format", fmt, "--no-tsc-check", "--trace-seconds", "0", "--watchdog-seconds", "0"] + argv
    words = ["%s=%s" % kv for kv in (env or {}).items() if os.environ.get(kv[0]) != kv[1]]
    base = os.path.join(tmp, "run%d" % next(_n))
    rc = main_to_files(hc.main, args, words, base + ".out", base + ".err")
    p = subprocess.CompletedProcess(args, rc, read(base + ".out"), read(base + ".err"))
    if fmt == "json":
        try:
            return json.loads(p.stdout), p
        except ValueError:
            return None, p
    return p.stdout, p


LOG = ["--log", os.path.join(LOGS, "healthy-vm.log")]


def watched(what, want, why_has, argv, table=True):
    if table and not TABLE:
        t.skip("%s: no kernel table (contract/cbcontract/kernels.py)" % what)
        return None
    d, p = run(argv + LOG)
    w = (d or {}).get("watchdog") or {}
    t.ok(w.get("watched") == want and why_has in (w.get("why") or ""), "%s: watched %s" % (what, want),
         "got %s: %s %s" % (w.get("watched"), w.get("why"), p.stderr[-300:]))
    return w


# One recorded host per rule.
w = watched("the development VM (6.18, EPYC under KVM, all three flags, 1 node)", "no", "tsc.c turns the watchdog off",
            host("devvm", "6.18.44-fc-v1045", "devvm-epyc-kvm.txt", avail="tsc kvm-clock", online="0-1"))
if w:
    t.ok(w["working"]["would_watch"] == "kvm-clock" and w["by"] is None and "qualified-platform" in (w["rule"] or ""),
         "its working: kvm-clock would watch; the rule that decided, cited", w["rule"])
watched("the blog's E595 (AMD Zen, no tsc_adjust), 6.12.48", "yes", "hpet watches it",
        host("e595", "6.12.48+deb13-amd64", "e595-ryzen.txt"))
watched("the E595 with tsc=nowatchdog (the blog's fix)", "no", "tsc=nowatchdog",
        host("e595-now", "6.12.48+deb13-amd64", "e595-ryzen.txt", cmdline="ro quiet tsc=nowatchdog"))
watched("Debian 12 (6.1.0-57, uname -v 6.1.158) with tsc=reliable", "no", "tsc=reliable",
        host("deb-rel", "6.1.0-57-amd64", "skylake-e3.txt", cmdline="ro tsc=reliable",
             version="#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)"))
watched("the LKML Skylake on 6.1: all three flags, 1 node", "no", "at most 2",
        host("sky61", "6.1.0-57-amd64", "skylake-e3.txt", version="#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)"))
watched("an 8-socket Xeon, 8 NUMA nodes, 6.6.63: more than 4", "yes", "hpet watches it",
        host("x8-66", "6.6.63", "xeon-8socket.txt", nodes="0-7", online="0-63"))
watched("the 8-socket Xeon as 2 nodes on 6.6.63 (6.6 counts nodes)", "no", "NUMA nodes",
        host("x8-66n2", "6.6.63", "xeon-8socket.txt", nodes="0-1"))
watched("the 8-socket Xeon as 2 nodes on 6.12.19 (6.12 counts packages: 8)", "yes", "hpet watches it",
        host("x8-612", "6.12.19", "xeon-8socket.txt", nodes="0-1"))
watched("a guest whose CPU has tsc_reliable", "no", "tsc_reliable",
        host("vmw", "6.12.19", "vmware-guest.txt", avail="tsc hpet acpi_pm"))
watched("7.1.3 with tsc=watchdog on a qualified Skylake: forced watched", "yes", "hpet watches it",
        host("sky71", "7.1.3", "skylake-e3.txt", cmdline="ro tsc=watchdog"))
watched("6.6.63 with tsc=watchdog on a qualified Skylake: still unwatched there", "no", "tsc.c turns the watchdog off",
        host("sky66w", "6.6.63", "skylake-e3.txt", cmdline="ro tsc=watchdog"))
w = watched("the LKML machine's 5.15-rc5: not in the table, unknown with the reason", "unknown", "5.15",
            host("lkml", "5.15.0-rc5", "skylake-e3.txt", cmdline="clocksource.max_cswd_read_retries=3"))
if w:
    t.ok(w["limits"]["readout_limit_ns"] is None and w["rules"]["known"] is False, "  and no limits guessed for it")
watched("the TSC already given up (hpet acpi_pm offered)", "no", "not offered",
        host("lost", "6.12.48+deb13-amd64", "e595-ryzen.txt", avail="hpet acpi_pm"))
watched("no CPU flags read", "unknown", "CPU flags were not read", host("noflags", "6.6.63", None))
watched("a qualified CPU and no NUMA node list", "unknown", "not read",
        host("nonodes", "6.6.63", "skylake-e3.txt", nodes=None))
watched("a clocksource the kernel table does not know", "unknown", "weird-clock",
        host("weird", "6.12.48+deb13-amd64", "e595-ryzen.txt", avail="tsc weird-clock"))
watched("the TSC alone offered on 6.12: refined-jiffies, always registered, watches it", "yes", "refined-jiffies watches it",
        host("alone612", "6.12.48+deb13-amd64", "e595-ryzen.txt", avail="tsc"))
watched("the TSC alone offered on 7.1.3: no continuous watchdog, nothing watches it", "no", "nothing watches it",
        host("alone71", "7.1.3", "e595-ryzen.txt", avail="tsc"))
fixed = ["--rules", os.path.join(FX, "rules-fixed.json")]
watched("--rules FILE: its qualified rule counts nodes, at most 2: 3 nodes are watched", "yes", "hpet watches it",
        host("fx3", "6.6.63", "skylake-e3.txt", nodes="0-2") + fixed, table=False)
watched("--rules FILE: its tsc=reliable", "no", "tsc=reliable",
        host("fxrel", "6.6.63", "skylake-e3.txt", nodes="0-2", cmdline="tsc=reliable") + fixed, table=False)
d, p = run(host("fxbad", "6.6.63", "skylake-e3.txt") + ["--rules", os.path.join(FX, "readout-margin.json")] + LOG)
t.ok(d and d["watchdog"]["watched"] == "unknown" and "not a rules object" in d["watchdog"]["why"],
     "--rules with a file that is not a rules object: unknown, said so", (d or {}).get("watchdog", {}).get("why"))

# Limits: the era's arithmetic on this host's figures.
if TABLE:
    d, p = run(host("lim61", "6.1.0-57-amd64", "e595-ryzen.txt", version="#1 SMP Debian 6.1.158-1 (2025-11-09)",
                    params={"max_cswd_read_retries": 3, "verify_n_cpus": 8},
                    kconfig="CONFIG_CLOCKSOURCE_WATCHDOG=y\nCONFIG_CLOCKSOURCE_WATCHDOG_MAX_SKEW_US=100") + LOG)
    lim = d["watchdog"]["limits"]
    t.ok(lim["readout_limit_ns"] == 100000 and lim["attempts"] == 4 and "parameter" in lim["attempts_from"]
         and lim["slow_readout_marks_unstable"] is True and lim["params"] == {"max_cswd_read_retries": 3, "verify_n_cpus": 8},
         "6.1 with CONFIG_..._MAX_SKEW_US=100 and max_cswd_read_retries=3: 100 us, 4 attempts, marks unstable", lim)
    d, p = run(host("lim66", "6.6.63", "xeon-8socket.txt", nodes="0-7", online="0-63") + LOG)
    lim = d["watchdog"]["limits"]
    t.ok(lim["readout_limit_ns"] == 125000 and lim["attempts"] == 5, "6.6.63 on 64 CPUs: 125 us, ilog2(64)/2 + 1 retries = 5 attempts", lim)
    d, p = run(host("lim71", "7.1.3", "e595-ryzen.txt") + LOG)
    lim = d["watchdog"]["limits"]
    t.ok(lim["readout_limit_ns"] == 50000 and lim["attempts"] == 3 and lim["slow_readout_marks_unstable"] is False,
         "7.1.3 (the rewrite): 50 us, 3 attempts, an all-slow tick only reported", lim)
    out, p = run(host("lim71", "7.1.3", "e595-ryzen.txt") + LOG, fmt="text")
    t.ok("an all-slow tick is only reported" in out and "readout limit 50000 ns" in out, "  and the text says so")
else:
    for i in range(4):
        t.skip("limits: no kernel table (contract/cbcontract/kernels.py)")

# Near misses and verdicts of the seeds' logs.
e595 = host("nm", "6.12.48+deb13-amd64", "e595-ryzen.txt", current="hpet")
d, p = run(e595 + ["--log", os.path.join(FX, "logs", "lkml.log")])
nm = d["watchdog"]["near_misses"]
t.ok(nm["verdict"] == "verdict/readback" and "61833ns, attempt 4" in nm["verdict_line"] and nm["total"] == 0
     and d["cause"] == "watchdog" and d["cause_detail"] == "read-back delay",
     "the LKML seed's log: the read-back verdict, its line, no near miss before it", nm)
out, p = run(e595 + ["--log", os.path.join(FX, "logs", "lkml.log")], fmt="text")
t.ok("near misses in this boot's log: none; verdict: every watchdog readout was too slow (read-back delay)" in out
     and "hpet read-back delay of 61833ns, attempt 4, marking unstable" in out, "  and its text")
d, p = run(e595 + ["--log", os.path.join(FX, "logs", "skip-test.log")])
nm = d["watchdog"]["near_misses"]
t.ok(nm["by_kind"] == {"near-miss/skip": 2} and nm["total"] == 2 and nm["verdict"] is None,
     "a busy server's skip tests: 2 near misses, no verdict", nm)
out, p = run(e595 + ["--log", os.path.join(LOGS, "boot-warp.log")], fmt="text")
t.ok("6601281288 cycles warp" in out, "the seed blog's log: the boot-time warp with its cycle count")

# Risk from recorded readouts (the fixture's rules: 50 us, 3 attempts).
fx = host("risk", "6.6.63", "skylake-e3.txt", nodes="0-2") + fixed + LOG
d, p = run(fx + ["--readout", os.path.join(FX, "readout-lkml.json")])
r = d["watchdog"]["risk"]
t.ok(r["verdict"] == "at risk" and r["p_tick_measured"] == 120 / 999998 and r["share_over_limit"] == 0.0024,
     "an LKML-like readout (runs of 3 and more slow readouts): at risk, 120 windows of 3", r)
d, p = run(fx + ["--readout", os.path.join(FX, "readout-margin.json")])
r = d["watchdog"]["risk"]
t.ok(r["verdict"] == "margin x12", "a quiet readout (p99.99 4.1 us against 50 us): margin x12", r["verdict"])
out, p = run(fx + ["--readout", os.path.join(FX, "readout-margin.json")], fmt="text")
t.ok("risk: margin x12 (readout " in out and "the tail is an upper bound" in out, "  and its text, with the upper-bound note")
d, p = run(fx + ["--readout", os.path.join(FX, "readout-nohpet.json")])
r = d["watchdog"]["risk"]
t.ok(r["verdict"] == "unavailable" and "/dev/hpet" in r["reason"], "a readout from a host without HPET: unavailable, why", r)
d, p = run(fx + ["--readout", os.path.join(FX, "rules-fixed.json")])
r = d["watchdog"]["risk"]
t.ok(r["verdict"] == "unavailable" and "no watchdog_readout object" in r["reason"], "--readout of a file without one: said so")
d, p = run(host("riskno", "6.6.63", "skylake-e3.txt", nodes="0", cmdline="tsc=reliable") + fixed + LOG
           + ["--readout", os.path.join(FX, "readout-lkml.json")])
r = d["watchdog"]["risk"]
t.ok(r["verdict"] == "unwatched" and r["if_watched"] == "at risk", "an unwatched TSC: unwatched, and what it would be if watched", r)

# Boot history: a folder of boots.
d, p = run(e595 + LOG + ["--boots", os.path.join(FX, "boots-blog")])
b = d["boots"]
t.ok(b["summary"].startswith("40 of 40 boots lost the TSC: warp at boot; warps of 6160000000 to 9880000000 cycles")
     and len(b["boots"]) == 40 and all(x["why"] == "boot_warp" and x["cycles"] for x in b["boots"]),
     "the blog's 40 boots: 40 of 40 lost the TSC, warp at boot, each with its cycles", b["summary"])
d, p = run(e595 + LOG + ["--boots", os.path.join(FX, "boots-mixed")])
b = d["boots"]
want = "4 of 6 boots lost the TSC (3 watchdog, 1 warp at boot); 2 kept it; watchdog near misses in 3; warps of 6126446316 cycles"
t.ok(b["summary"] == want, "BIOS 1.30's boots, the LKML boot and a skip test: the summary line", b["summary"])
by = {x["boot"]: x for x in b["boots"]}
x = by["2-bios130-sync.log"]
t.ok(x["tsc"] == "lost" and x["why"] == "watchdog" and x["verdict"] == "verdict/freq-skew" and x["at_s"] == 5.532771
     and x["near_misses"] == {"near-miss/remote-timeout": 1}, "a sync boot on 1.30: lost at 5.53 s to frequency skew, "
     "after a remote CPU timeout", x)
t.ok(by["4-bios130-sync-nowatchdog.log"]["tsc"] == "kept" and by["5-lkml.log"]["why"] == "watchdog",
     "tsc=nowatchdog kept it; the LKML boot lost it to the watchdog")
bad = os.path.join(tmp, "boots-bad")
os.makedirs(bad)
os.mkfifo(os.path.join(bad, "fifo.log"))
shutil.copy(os.path.join(FX, "boots-mixed", "1-bios130-nosync.log"), bad)
d, p = run(e595 + LOG + ["--boots", bad])
t.ok(d["boots"]["summary"].endswith("; 1 boots not read") and d["boots"]["summary"].startswith("1 of 1 boots lost"),
     "a FIFO among the boots: not read, counted apart, no hang", d["boots"]["summary"])

# Boot history from the journal: a stand-in journalctl (list-boots, -k -b ID
# -o json: the boots' recorded logs as the journal's kernel entries, one JSON
# object a line, among an entry of another transport that says the same).
fake = os.path.join(tmp, "bin")
os.makedirs(fake)
jx = os.path.join(tmp, "journal")
os.makedirs(os.path.join(jx, "boots-mixed"))
for n in ("1-bios130-nosync.log", "2-bios130-sync.log", "4-bios130-sync-nowatchdog.log"):
    with open(os.path.join(FX, "boots-mixed", n)) as f, open(os.path.join(jx, "boots-mixed", n), "w") as o:
        for line in f.read().split("\n"):
            st, _, text = line.partition("] ")
            if not text:
                continue
            us = str(int(round(float(st.strip("[ ")) * 1e6)))
            o.write(json.dumps({"_TRANSPORT": "kernel", "MESSAGE": text, "_SOURCE_MONOTONIC_TIMESTAMP": us}) + "\n")
        o.write(json.dumps({"_TRANSPORT": "stdout", "MESSAGE": "tsc: Marking TSC unstable due to clocksource watchdog"})
                + "\n")
with open(os.path.join(fake, "journalctl"), "w") as f:
    f.write("""#!/bin/sh
fx=%s
case "$*" in
*--list-boots*)
	echo "IDX BOOT ID                          FIRST ENTRY                 LAST ENTRY"
	echo " -2 0123456789abcdef0123456789abcdef Mon 2026-11-30 08:00:00 UTC Mon 2026-11-30 09:00:00 UTC"
	echo " -1 11111111111111111111111111111111 Mon 2026-11-30 10:00:00 UTC Mon 2026-11-30 11:00:00 UTC"
	echo "  0 22222222222222222222222222222222 Tue 2026-12-01 08:00:00 UTC Tue 2026-12-01 11:00:00 UTC"
	echo "  1 33333333333333333333333333333333 Tue 2026-12-01 11:00:00 UTC Tue 2026-12-01 11:30:00 UTC" ;;
*-b\\ 0123456789abcdef0123456789abcdef*) cat "$fx/boots-mixed/1-bios130-nosync.log" ;;
*-b\\ 11111111111111111111111111111111*) cat "$fx/boots-mixed/2-bios130-sync.log" ;;
*-b\\ 22222222222222222222222222222222*) cat "$fx/boots-mixed/4-bios130-sync-nowatchdog.log" ;;
*-b\\ 33333333333333333333333333333333*) ;;
*) cat "$fx/boots-mixed/4-bios130-sync-nowatchdog.log" ;;
esac
""" % jx)
os.chmod(os.path.join(fake, "journalctl"), 0o755)
with open(os.path.join(fake, "dmesg"), "w") as f:
    f.write("#!/bin/sh\nexit 1\n")
os.chmod(os.path.join(fake, "dmesg"), 0o755)
env = dict(os.environ, PATH=fake + ":" + os.environ["PATH"])
d, p = run([], env=env)
b = (d or {}).get("boots") or {}
t.ok(b.get("source") == "journalctl" and [x["boot"] for x in b.get("boots", [])] == ["-2", "-1", "0", "1"]
     and b.get("summary") == "2 of 3 boots lost the TSC (1 warp at boot, 1 watchdog); 1 kept it; watchdog near misses in 1; "
     "warps of 6126446316 cycles; 1 boots not read", "the journal's boots, each read by its boot ID; one with no entries "
     "is not read, not kept", b.get("summary") or p.stderr[-300:])

# This host, read-only: watched or not, and the readout (no HPET here: unavailable, and why).
if os.access(os.path.join(TOP, "bench", "clockbench"), os.X_OK):
    p = subprocess.run([HC, "--format", "json", "--no-tsc-check", "--trace-seconds", "0", "--watchdog-seconds", "1"],
                       capture_output=True, text=True, timeout=120)
    d = json.loads(p.stdout)
    w = d["watchdog"]
    ro = w["risk"].get("readout_unavailable") or ""
    hpet = os.path.exists("/dev/hpet")
    t.ok(w["watched"] in ("yes", "no", "unknown") and w["why"] and (hpet or "hpet" in ro),
         "this host: watched %s (%s); readout: %s" % (w["watched"], w["why"][:60], (ro or w["risk"]["verdict"])[:90]))
else:
    t.skip("bench/clockbench not built")
shutil.rmtree(tmp)
sys.exit(t.done())
