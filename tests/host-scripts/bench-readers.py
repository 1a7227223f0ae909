#!/usr/bin/python3
"""bench-readers.py: seconds per MB of the frame reader and the KVM trace summariser on hostile inputs (not a test).

usage: tests/host-scripts/bench-readers.py [--frames PATH] [--kvmtrace PATH] [--sizes 1,4,16] [--timeout S]

PATH: the module to time (default: host-scripts/cbhost/frames.py and
kvmtrace.py of this checkout); to time an older one, write it out first,
e.g. `git show HEAD~5:host-scripts/cbhost/frames.py > /tmp/old_frames.py`.
Each case runs in a child process of its own, under a 4 GiB address-space
limit and a time limit (default 90 s): a case over it prints "> S s", and
its larger sizes are not run.  The inputs, for each size N MB:

  frames-nested   frame headers nested in each other's payloads, all ending
                  at one shared end line, each with a wrong CRC (parse and
                  result, as the launcher does)
  trace-line      a trace file of one line: an event's head, then "vcpu_id 0,
                  pvclock {" repeated to N MB
  trace-lines     the same prefix in lines of 4000 bytes (every one parsed)
  trace-bomb      a gzip file of N MB: 64 MiB members of zeros (about 1000:1)

The trace files go through read_lines and summarize, as `kvm-trace summarize`
reads them.

Nothing is asserted: it prints one line per case (seconds, seconds per MB,
the outcome) so that before and after can be quoted.
"""
import argparse
import gzip
import importlib.util
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
KINDS = ("frames-nested", "trace-line", "trace-lines", "trace-bomb")
PREFIX = " qemu-system-x86-8164    (   8162) [000] .....   898.041499: kvm_pvclock_update: "
UNIT = "vcpu_id 0, pvclock {"
MB = 1000 * 1000


def load(path, name):
    sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts"), os.path.join(ROOT, "analysis")]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def nested(size):
    heads, inside = [], 0
    while inside < size:
        heads.append(b"\nCLOCKBENCH-BEGIN v1 kind=result seq=1 len=%d crc32=00000000\n" % inside)
        inside += len(heads[-1])
    return b"".join(reversed(heads)) + b"\nCLOCKBENCH-END seq=1\n"


def one(kind, size, module, tmp):
    """Builds the input (untimed), runs the reader on it; returns (seconds, outcome)."""
    if kind == "frames-nested":
        fr = load(module, "frames_timed")
        data = nested(size)
        t = time.perf_counter()
        try:
            fr.result(fr.parse(data))
            out = "accepted"
        except fr.FrameError as e:
            out = "FrameError of %d characters" % len(str(e))
        return time.perf_counter() - t, out
    kt = load(module, "kvmtrace_timed")
    path = os.path.join(tmp, "trace.txt")
    with open(path + (".gz" if kind == "trace-bomb" else ""), "wb") as f:
        if kind == "trace-line":
            f.write((PREFIX + UNIT * ((size - len(PREFIX)) // len(UNIT)) + "\n").encode())
        elif kind == "trace-lines":
            line = (PREFIX + UNIT * ((4000 - len(PREFIX)) // len(UNIT)) + "\n").encode()
            f.write(line * (size // len(line)))
        else:
            member = gzip.compress(b"\0" * (64 << 20), 9)
            f.write(member * max(1, size // len(member)))
            path += ".gz"
    t = time.perf_counter()
    try:
        s = kt.summarize(kt.read_lines(path))
        out = "%d events, skipped_lines %s" % (sum(s["life"]["events"].values()),
                                               s["completeness"].get("skipped_lines", "(none: not counted)"))
    except MemoryError:
        out = "MemoryError"
    except (OSError, EOFError) as e:
        out = "refused: %s" % (getattr(e, "strerror", None) or e)
    return time.perf_counter() - t, out


def child(args):
    with tempfile.TemporaryDirectory(prefix="clockbench-bench.") as tmp:
        secs, out = one(args.one, args.size, args.module, tmp)
    print(json.dumps({"seconds": secs, "outcome": out}))
    return 0


def limit():
    resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--frames", default=os.path.join(ROOT, "host-scripts", "cbhost", "frames.py"))
    p.add_argument("--kvmtrace", default=os.path.join(ROOT, "host-scripts", "cbhost", "kvmtrace.py"))
    p.add_argument("--sizes", default="1,4,16", help="MB, comma-separated (default 1,4,16)")
    p.add_argument("--timeout", type=float, default=90.0)
    p.add_argument("--kinds", default=",".join(KINDS))
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--size", type=int, help=argparse.SUPPRESS)
    p.add_argument("--module", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.one:
        return child(args)
    sizes = [float(x) for x in args.sizes.split(",")]
    print("# %s, Python %s, %s" % (time.strftime("%Y-%m-%d %H:%M %Z"), sys.version.split()[0], os.uname().machine))
    print("# frames: %s\n# kvmtrace: %s" % (args.frames, args.kvmtrace))
    print("%-14s %6s %10s %10s  %s" % ("input", "MB", "seconds", "s/MB", "outcome"))
    for kind in args.kinds.split(","):
        module = args.frames if kind.startswith("frames") else args.kvmtrace
        over = False
        for mb in sizes:
            if over:
                print("%-14s %6g %10s %10s  %s" % (kind, mb, "-", "-", "not run (a smaller size took over the limit)"))
                continue
            argv = [sys.executable, os.path.abspath(__file__), "--one", kind, "--size", str(int(mb * MB)),
                    "--module", module]
            try:
                r = subprocess.run(argv, capture_output=True, text=True, timeout=args.timeout, preexec_fn=limit)
            except subprocess.TimeoutExpired:
                over = True
                print("%-14s %6g %10s %10s  %s" % (kind, mb, "> %g" % args.timeout, "> %.3g" % (args.timeout / mb),
                                                   "stopped at the time limit"))
                continue
            try:
                res = json.loads(r.stdout.strip().splitlines()[-1])
            except (ValueError, IndexError):
                last = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
                print("%-14s %6g %10s %10s  %s" % (kind, mb, "-", "-", "failed: %s" % last[:100]))
                continue
            print("%-14s %6g %10.3f %10.4f  %s" % (kind, mb, res["seconds"], res["seconds"] / mb, res["outcome"]))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
