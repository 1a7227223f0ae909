#!/usr/bin/env python3
"""assert.py: the lab's expectations, as TAP, on the results of each state.

Usage: assert.py LAB_DIR STATES
Asserts the mechanism (path, master clock, stable bit, clocksources, log
lines, TSC-offset writes), never nanoseconds: everything in the lab runs
under an emulator.  Ends with "N passed, N failed"; exit 1 if any failed.
"""
import glob
import json
import os
import sys

n = failed = 0


def ok(cond, what, why=""):
    global n, failed
    n += 1
    if not cond:
        failed += 1
    print("%sok %d - %s%s" % ("" if cond else "not ", n, what, "" if cond or not why else " (%s)" % why))


def load(pattern):
    files = sorted(glob.glob(pattern))
    if not files:
        return None, "no file %s" % pattern
    try:
        with open(files[0]) as f:
            return json.load(f), None
    except (OSError, ValueError) as e:
        return None, "%s: %s" % (files[0], e)


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return None


def facts(g):
    """(master, hostclock, stable, guest clocksource, vdso path, marked stable, offset writes)."""
    kt = g.get("kvm_trace") or {}
    mc = kt.get("master_clock") or {}
    b = g.get("bench") or {}
    log = ((g.get("guest") or {}).get("log") or {})
    return (mc.get("last"), mc.get("hostclock"), (kt.get("stable_bit") or {}).get("all"),
            (b.get("context") or {}).get("clocksource"),
            (((b.get("probe") or {}).get("clocks") or {}).get("monotonic") or {}).get("vdso"),
            log.get("sched_clock_marked_stable"), kt.get("tsc_offset_writes"), kt.get("subject"),
            kt.get("measuring") or {})


def diagnose(d, s):
    """TAP comments saying why a state left no result: its progress line,
    the end of its harness log, the end of L1's console."""
    lines = []
    progress = read(os.path.join(d, "progress.log")) or ""
    lines += ["progress: " + l.split(" ", 1)[-1] for l in progress.splitlines() if l.endswith("state %s" % s)
              or (" state %s " % s) in l + " "]
    log = read(os.path.join(d, "state-%s.log" % s))
    if log is None:
        lines.append("no harness log state-%s.log: the state never started" % s)
    else:
        lines += ["state-%s.log: %s" % (s, l) for l in log.splitlines()[-12:]]
    for c in sorted(glob.glob(os.path.join(d, "state-%s" % s, "*.console.log"))):
        tail = (read(c) or "").splitlines()[-6:]
        lines += ["%s: %s" % (os.path.basename(c), l) for l in tail]
    for c in sorted(glob.glob(os.path.join(d, "l1-*.console.log"))):
        tail = (read(c) or "").splitlines()[-4:]
        lines += ["%s: %s" % (os.path.basename(c), l) for l in tail]
    for l in lines:
        print("#   " + l[:300])


def retried(d, s, restore_to):
    """A state the L1 script ran twice (its first attempt failed): say why,
    and hold the failed attempt to the same rule: L1's clocksource put back."""
    log = read(os.path.join(d, "state-%s.attempt-1.log" % s))
    if log is None:
        return
    print("# state %s: the first attempt failed and was run again; its log ends:" % s)
    for l in log.splitlines()[-8:]:
        print("#   " + l[:300])
    after = read(os.path.join(d, "state-%s.attempt-1.clocksource-after" % s))
    ok(after == restore_to, "state %s: after the failed first attempt L1 was back on %s" % (s, restore_to),
       "got %r" % (after,))


def state(d, s, host_cs, vcpus, restore_to, expect):
    sd = os.path.join(d, "state-%s" % s)
    # host_cs None: whatever L1 fell back to (state 3 takes the clocksource
    # L1's kernel chose once its TSC was marked unstable).
    retried(d, s, restore_to)
    g, err = load(os.path.join(sd, "guest-%s-%dvcpu.json" % (host_cs or "*", vcpus)))
    label = {"1": "L1 on tsc", "2": "L1 flipped to hpet", "3": "L1 booted tsc=unstable, L2 floating",
             "4": "L1 on hpet, L2 with invtsc"}[s]
    ok(g is not None, "state %s (%s): a guest result" % (s, label), err or "")
    if g is None:
        diagnose(d, s)
        return None
    f = dict(zip(["master", "hostclock", "stable", "guest_cs", "path", "marked_stable", "offset_writes", "subject",
                  "window"], facts(g)))
    ok(f["subject"] == "the guest's QEMU process", "state %s: KVM events traced for the guest's own QEMU" % s,
       "subject %r" % f["subject"])
    w = f["window"]
    ok(w.get("available") is True, "state %s: the guest's measuring window marked in the trace (%s s, %s of %s "
       "TSC-offset writes in it)" % (s, w.get("seconds"), w.get("tsc_offset_writes"), f["offset_writes"]),
       w.get("reason") or "")
    f["window_offset_writes"] = w.get("tsc_offset_writes")
    for key, want, what in expect:
        got = f[key]
        good = want(got) if callable(want) else got == want
        ok(good, "state %s: %s" % (s, what), "got %r" % (got,))
    after = read(os.path.join(d, "state-%s.clocksource-after" % s))
    ok(after == restore_to, "state %s: L1 back on its own clocksource (%s) after the run" % (s, restore_to),
       "got %r" % (after,))
    return f


def main(argv):
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    d, states = argv[1], argv[2].split(",")
    l1 = read(os.path.join(d, "l1-facts-3.txt")) or ""
    # The unstable L1's own clocksource: whatever its kernel fell back to.
    l1_cs = ([l.split(" ", 1)[1] for l in l1.splitlines() if l.startswith("clocksource ")] or [None])[0]
    if "1" in states:
        state(d, "1", "tsc", 1, "tsc", [
            ("master", True, "master clock on"),
            ("hostclock", "tsc", "hostclock tsc"),
            ("stable", True, "PVCLOCK_TSC_STABLE_BIT set in every pvclock update"),
            ("guest_cs", "kvm-clock", "the guest runs on kvm-clock"),
            ("path", "user", "the guest's clock_gettime is served in user space (vDSO)"),
            ("marked_stable", True, "'sched_clock: Marking stable' in the guest's log"),
        ])
    s2 = None
    if "2" in states:
        s2 = state(d, "2", "hpet", 1, "tsc", [
            ("master", False, "master clock off"),
            ("hostclock", "none", "hostclock none"),
            ("stable", False, "stable bit clear"),
            ("guest_cs", "kvm-clock", "the guest still runs on kvm-clock"),
            ("path", "syscall", "the guest's clock_gettime makes a syscall"),
            ("marked_stable", False, "no 'sched_clock: Marking stable' in the guest's log"),
        ])
    if "3" in states:
        base = (s2 or {}).get("offset_writes") or 0
        base_w = (s2 or {}).get("window_offset_writes") or 0
        state(d, "3", None, 2, l1_cs, [
            ("master", False, "master clock off"),
            ("hostclock", "none", "hostclock none"),
            ("stable", False, "stable bit clear"),
            ("path", "syscall", "the guest's clock_gettime makes a syscall"),
            ("marked_stable", False, "no 'sched_clock: Marking stable' in the guest's log"),
            ("offset_writes", lambda v: isinstance(v, int) and v >= 100 and v > 10 * base,
             "TSC-offset rewrites as floating vCPUs move (at least 100, and 10x state 2's %d)" % base),
            ("window_offset_writes", lambda v: isinstance(v, int) and v >= 100 and v > 10 * base_w,
             "TSC-offset rewrites while the guest measured, not only at its boot (at least 100, and 10x "
             "state 2's %d)" % base_w),
        ])
        ok("Marking TSC unstable" in l1 or "tsc" not in (l1.split("available ", 1)[-1].split("\n", 1)[0]).split(),
           "state 3: L1's own log says its TSC was marked unstable")
    if "4" in states:
        state(d, "4", "hpet", 1, "tsc", [
            ("master", False, "master clock off (the host is still on hpet)"),
            ("guest_cs", "tsc", "the guest with invtsc picks tsc"),
            ("path", "user", "its clock_gettime is served in user space again (the mitigation)"),
        ])
    print("1..%d" % n)
    print("%d passed, %d failed" % (n - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
