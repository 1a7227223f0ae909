#!/usr/bin/env python3
"""kvmtrace.py: summarize KVM clock tracepoints for one QEMU process.

  kvmtrace.py summarize TRACE [--tgid PID]   JSON summary on stdout
  kvmtrace.py unavailable REASON              the JSON for "could not trace"
  kvmtrace.py merge RESULT.json SUMMARY.json  put the summary into a guest
                                              result as "kvm_trace" (atomic)
  kvmtrace.py attach RESULT.json TRACE [--observer]
                                              summarize the trace for the
                                              result's QEMU and merge it;
                                              --observer: the trace is of a
                                              VM booted only to observe KVM

TRACE is the text of a tracefs instance's `trace` file with the events
kvm_update_master_clock, kvm_pvclock_update, kvm_track_tsc and
kvm_write_tsc_offset; with options/record-tgid each line carries the
process id, and --tgid keeps only that process's lines.  Where the trace
holds the launcher's markers (clockbench-window-start and -end, written to
the instance's trace_marker when the guest's /init says hello and when its
result arrives), "measuring" counts the events between them as well.
Exit status: 0 done, 1 bad input (one line naming the file), 2 usage.
"""
import json
import os
import re
import sys
import tempfile

LINE = re.compile(
    r"^\s*(?P<comm>.+?)-(?P<tid>\d+)\s+(?:\(\s*(?P<tgid>\d+|-+)\)\s+)?\[(?P<cpu>\d+)\]\s+"
    r"(?:\S+\s+)?(?P<ts>\d+\.\d+):\s+(?P<event>\w+):\s+(?P<msg>.*)$")
MASTER = re.compile(r"masterclock (\d+) hostclock (\S+) offsetmatched (\d+)")
PVCLOCK = re.compile(r"vcpu_id (\d+), pvclock \{.*flags 0x([0-9a-fA-F]+)")
TRACK = re.compile(r"vcpu_id (\d+) masterclock (\d+) offsetmatched (\d+) nr_online (\d+) hostclock (\S+)")
OFFSET = re.compile(r"vcpu=(\d+) prev=(\d+) next=(\d+)")
MARK = re.compile(r"clockbench-window-(start|end)\b")
KVM_EVENTS = ("kvm_update_master_clock", "kvm_pvclock_update", "kvm_track_tsc", "kvm_write_tsc_offset")
PVCLOCK_TSC_STABLE_BIT = 0x1


def fail(msg):
    print("kvmtrace: " + msg, file=sys.stderr)
    sys.exit(1)


def summarize(lines, tgid=None):
    """Returns the summary dict for trace lines, keeping tgid's only, with
    the measuring window's counts where the markers are there."""
    lines = list(lines)
    s = count(lines, tgid)
    s["measuring"] = window(lines, tgid)
    return s


def window(lines, tgid):
    """Counts between the first end marker and the start just before it."""
    start = end = None
    for i, line in enumerate(lines):
        m = LINE.match(line)
        if not m or m.group("event") != "tracing_mark_write":
            continue
        x = MARK.search(m.group("msg"))
        if x and x.group(1) == "start":
            start = (i, float(m.group("ts")))
        elif x and x.group(1) == "end" and start is not None:
            end = (i, float(m.group("ts")))
            break
    if start is None or end is None:
        return {"available": False,
                "reason": "no %s marker in the trace" % ("start" if start is None else "end")}
    w = count(lines[start[0] + 1:end[0]], tgid)
    return {"available": True,
            "from": "the guest's /init up (its hello on the results channel)",
            "to": "its result received", "seconds": round(end[1] - start[1], 6),
            "events": w["events"], "pvclock_updates": w["pvclock_updates"],
            "tsc_offset_writes": w["tsc_offset_writes"],
            "tsc_offset_writes_per_vcpu": w["tsc_offset_writes_per_vcpu"],
            "master_clock_transitions": w["master_clock"]["transitions"]}


def count(lines, tgid=None):
    """The summary of the KVM events in lines, keeping tgid's only."""
    s = {"available": True, "reason": None, "tgid": tgid, "window": "the QEMU process's life",
         "events": dict.fromkeys(KVM_EVENTS, 0),
         "master_clock": {"last": None, "transitions": 0, "hostclock": None, "offset_matched": None},
         "stable_bit": {"per_vcpu": {}, "all": None},
         "pvclock_updates": 0, "pvclock_updates_per_vcpu": {},
         "tsc_offset_writes": 0, "tsc_offset_writes_per_vcpu": {},
         "tsc_matching": {"last_offset_matched": None, "nr_online": None}}
    mc = s["master_clock"]
    for line in lines:
        if line.startswith("#"):
            continue
        m = LINE.match(line)
        if not m:
            continue
        if tgid is not None and m.group("tgid") != str(tgid):
            continue
        ev, msg = m.group("event"), m.group("msg")
        if ev not in s["events"]:
            continue
        if ev == "kvm_update_master_clock" and (x := MASTER.search(msg)):
            on = x.group(1) == "1"
            if mc["last"] is not None and on != mc["last"]:
                mc["transitions"] += 1
            mc["last"], mc["hostclock"], mc["offset_matched"] = on, x.group(2), x.group(3) == "1"
        elif ev == "kvm_pvclock_update" and (x := PVCLOCK.search(msg)):
            v = x.group(1)
            s["stable_bit"]["per_vcpu"][v] = bool(int(x.group(2), 16) & PVCLOCK_TSC_STABLE_BIT)
            s["pvclock_updates"] += 1
            s["pvclock_updates_per_vcpu"][v] = s["pvclock_updates_per_vcpu"].get(v, 0) + 1
        elif ev == "kvm_track_tsc" and (x := TRACK.search(msg)):
            s["tsc_matching"] = {"last_offset_matched": int(x.group(3)), "nr_online": int(x.group(4))}
            if mc["hostclock"] is None:
                mc["hostclock"] = x.group(5)
        elif ev == "kvm_write_tsc_offset" and (x := OFFSET.search(msg)):
            v = x.group(1)
            s["tsc_offset_writes"] += 1
            s["tsc_offset_writes_per_vcpu"][v] = s["tsc_offset_writes_per_vcpu"].get(v, 0) + 1
        else:
            continue
        s["events"][ev] += 1
    per = s["stable_bit"]["per_vcpu"]
    s["stable_bit"]["all"] = all(per.values()) if per else None
    return s


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".kvmtrace.", dir=d)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    except ValueError as e:
        fail("%s: not valid JSON (%s)" % (path, e))


def tgids(lines):
    """The processes with KVM clock events (the launcher's markers are not)."""
    seen = []
    for line in lines:
        m = LINE.match(line)
        if m and m.group("event") in KVM_EVENTS and m.group("tgid") and m.group("tgid").isdigit() \
                and m.group("tgid") not in seen:
            seen.append(m.group("tgid"))
    return seen


def attach(result_path, trace_path, observer=False):
    """Chooses whose events describe the guest run: the launcher's QEMU pid
    if it recorded one, else the only KVM process in the window (the guard
    let no foreign VM run).  Under TCG the guest has no KVM clock of its
    own; a KVM process seen then is the launcher's probe, and is labelled
    so."""
    doc = load_json(result_path)
    if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("clockbench-guest/"):
        fail("%s: not a clockbench guest result" % result_path)
    launcher = doc.get("launcher") or {}
    try:
        with open(trace_path, errors="replace") as f:
            lines = f.readlines()
    except OSError as e:
        fail("%s: %s" % (trace_path, e.strerror))
    ids = tgids(lines)
    pid = launcher.get("qemu_pid")
    accel = launcher.get("accel")
    if observer and len(ids) == 1:
        s = summarize(lines, int(ids[0]))
        subject = ("a short KVM VM clockbench booted on this host only to observe KVM's clock "
                   "(the guest itself ran under %s)" % accel)
        s["measuring"] = {"available": False,
                          "reason": "the KVM VM observed does not measure: the guest ran under %s" % accel}
    elif pid is not None and str(pid) in ids:
        s, subject = summarize(lines, int(pid)), "the guest's QEMU process"
    elif len(ids) == 1:
        s = summarize(lines, int(ids[0]))
        subject = ("the guest's QEMU process" if accel == "kvm" else
                   "a KVM VM the launcher started on this host to probe KVM (the guest itself ran under %s)" % accel)
    elif not ids:
        s = {"available": False, "reason": "no KVM clock events during the guest run (accelerator %s)" % accel}
        subject = None
    else:
        s = {"available": False, "reason": "events from %d processes and no QEMU pid to tell ours" % len(ids)}
        subject = None
    s["subject"] = subject
    s["trace_file"] = os.path.basename(trace_path)
    if os.path.getsize(trace_path) > (1 << 20):
        # A floating vCPU on an unstable host TSC writes its offset a
        # hundred thousand times: keep the text, compressed.
        import gzip
        import shutil
        with open(trace_path, "rb") as src, gzip.open(trace_path + ".gz", "wb", 9) as dst:
            shutil.copyfileobj(src, dst)
        os.unlink(trace_path)
        s["trace_file"] += ".gz"
    doc["kvm_trace"] = s
    write_atomic(result_path, json.dumps(doc, indent=1) + "\n")


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stdout if len(argv) >= 2 else sys.stderr)
        return 0 if len(argv) >= 2 else 2
    cmd = argv[1]
    if cmd == "summarize" and len(argv) in (3, 5):
        tgid = None
        if len(argv) == 5:
            if argv[3] != "--tgid" or not argv[4].isdigit():
                print("kvmtrace: usage: summarize TRACE [--tgid PID]", file=sys.stderr)
                return 2
            tgid = int(argv[4])
        try:
            with open(argv[2], errors="replace") as f:
                s = summarize(f, tgid)
        except OSError as e:
            fail("%s: %s" % (argv[2], e.strerror))
        json.dump(s, sys.stdout, indent=1)
        print()
        return 0
    if cmd == "unavailable" and len(argv) == 3:
        json.dump({"available": False, "reason": argv[2]}, sys.stdout)
        print()
        return 0
    if cmd == "merge" and len(argv) == 4:
        doc, summ = load_json(argv[2]), load_json(argv[3])
        if not isinstance(doc, dict) or not str(doc.get("schema", "")).startswith("clockbench-guest/"):
            fail("%s: not a clockbench guest result" % argv[2])
        doc["kvm_trace"] = summ
        write_atomic(argv[2], json.dumps(doc, indent=1) + "\n")
        return 0
    if cmd == "attach" and len(argv) in (4, 5):
        if len(argv) == 5 and argv[4] != "--observer":
            print("kvmtrace: usage: attach RESULT.json TRACE [--observer]", file=sys.stderr)
            return 2
        attach(argv[2], argv[3], len(argv) == 5)
        return 0
    print("kvmtrace: unknown command or arguments (see --help)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
