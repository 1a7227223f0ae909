#!/usr/bin/python3
# tier: fast
"""limits.t: the loader reads regular files only, up to 64 MiB; numbers out of range, lone surrogates and huge
bad values give one short line; report's output folder: -o "" a usage error, a short default name over many runs;
a run id found under --results; check-label and usage errors cut long values."""
import json
import os
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import BEFORE, TOOL, Tap, read, report_in_process  # noqa: E402


# clockbench-report's main() in this process (taplib.report_in_process).
in_process = report_in_process

t = Tap()
host = read(os.path.join(BEFORE, "host-tsc.json"))
MAX_LINE = 400  # an error line: the path, the field, a value cut to ~80 characters


def folder(name, files):
    d = os.path.join(t.tmp, name, "20260101-000000-x")
    os.makedirs(d)
    for n, data in files.items():
        with open(os.path.join(d, n), "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
    return d


def tool(*args, timeout=None):
    """Those given a timeout (they must not wait on what they read) in a
    process of their own, under it; the others in this process."""
    if timeout is None:
        return in_process(args, t.tmp)
    e = dict(os.environ)
    e.pop("CLOCKBENCH_DEBUG", None)
    try:
        p = subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True, env=e, cwd=t.tmp,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s (a hang)" % timeout
    return p.returncode, p.stdout, p.stderr


def short_error(rc, se, words, what, code=1):
    lines = se.splitlines()
    t.ok(rc == code and len(lines) == 1 and len(lines[0]) <= MAX_LINE and all(w in lines[0] for w in words)
         and "Traceback" not in se and "internal error" not in se,
         "%s: exit %d, one line of at most %d characters" % (what, code, MAX_LINE), "rc %s: %s" % (rc, se[:600]))


# ---- files that are not regular files, or too big ----
d = folder("fifo", {})
os.mkfifo(os.path.join(d, "host-tsc.json"))
rc, so, se = tool("report", "--no-plots", "-o", os.path.join(t.tmp, "r-fifo"), d, timeout=30)
short_error(rc, se, ["host-tsc.json", "not a regular file"], "a FIFO as a result file is refused, not waited on")
rc, so, se = tool("check-label", os.path.join(d, "host-tsc.json"), "tsc", timeout=30)
short_error(rc, se, ["not a regular file"], "check-label on a FIFO")
d = folder("dev", {})
os.symlink("/dev/zero", os.path.join(d, "host-tsc.json"))
rc, so, se = tool("report", "--no-plots", "-o", os.path.join(t.tmp, "r-dev"), d, timeout=30)
# As root a result file is never read through a symlink (load.read_regular): refused before the device is opened.
short_error(rc, se, ["host-tsc.json", "a symbolic link" if os.geteuid() == 0 else "not a regular file"],
            "a device (/dev/zero, through a symlink) as a result file is refused")
d = folder("big", {})
with open(os.path.join(d, "host-tsc.json"), "wb") as f:
    f.truncate(64 * 1024 * 1024 + 1)  # sparse: nothing written
rc, so, se = tool("report", "--no-plots", "-o", os.path.join(t.tmp, "r-big"), d, timeout=30)
short_error(rc, se, ["host-tsc.json", "64 MiB"], "a result file over 64 MiB is refused before it is read")

# ---- values the loader must refuse with a short line ----
bad = {
    "1e400": host.replace('"tsc_mhz": 2500.0', '"tsc_mhz": 1e400', 1),  # a fact read as is: inf in the report before
    "10**400": host.replace('"median": 25.0', '"median": 1' + "0" * 400, 1),
    "a lone surrogate": host.replace('"clocksource": "tsc"', '"clocksource": "ts\\ud800c"', 1),
    "a 50 MB bad value": host.replace('"median": 25.0', '"median": "' + "x" * 50000000 + '"', 1),
}
trace = json.loads(read(os.path.join(BEFORE, "kvm-trace-tsc-2vcpu.json")))
trace["life"]["events"]["k" * 1000000] = -1
for what, files in list(bad.items()) + [("a 1 MB key", {"guest-tsc-2vcpu.json": read(os.path.join(BEFORE, "guest-tsc-2vcpu.json")),
                                                       "kvm-trace-tsc-2vcpu.json": json.dumps(trace)})]:
    d = folder("bad-" + what.replace(" ", "-"), files if isinstance(files, dict) else {"host-tsc.json": files})
    rc, so, se = tool("report", "--no-plots", "-o", os.path.join(t.tmp, "r-" + what.replace(" ", "-")), d)
    short_error(rc, se, ["kvm-trace-tsc-2vcpu.json" if "key" in what else "host-tsc.json"],
                "%s in a result: one line naming the file" % what)
assert "1e400" in bad["1e400"] and "ud800" in bad["a lone surrogate"]
rc, so, se = tool("report", "--no-plots", "-o", os.path.join(t.tmp, "r-ok"), folder("ok", {"host-tsc.json": host}))
t.ok(rc == 0, "the same file unchanged is read (exit 0)", se)

# ---- check-label's message: bounded ----
doc = json.loads(host)
for r in doc["results"]:
    r["clocksource"] = "hpet" + "z" * 300
d = folder("label", {"host-tsc.json": json.dumps(doc)})
rc, so, se = tool("check-label", os.path.join(d, "host-tsc.json"), "tsc")
lines = so.splitlines()
t.ok(rc == 1 and len(lines) == 1 and len(lines[0]) <= MAX_LINE and "more" in lines[0],
     "check-label: every row on another clocksource, said in one line of at most %d characters" % MAX_LINE,
     "rc %s: %d characters: %s" % (rc, len(so), so[:300]))

# ---- the report's output folder ----
rc, so, se = tool("report", "--no-plots", "-o", "", BEFORE)
short_error(rc, se, ["-o"], 'report -o "": a usage error', code=2)
for cmd in (["diff", BEFORE, BEFORE, "-o", ""], ["prom", BEFORE, "-o", ""], ["report", BEFORE, "--prom", ""]):
    rc, so, se = tool(*cmd)
    short_error(rc, se, [], "%s with an empty file name: a usage error" % " ".join(cmd[:1] + cmd[-2:]), code=2)
many = []
for i in range(14):
    many.append(os.path.join(t.tmp, "many", "20260101-%06d-host-with-a-long-name-%d" % (i, i)))
    shutil.copytree(BEFORE, many[-1])
build = os.path.join(t.tmp, "build")
rc, so, se = tool("report", "--no-plots", "--build", build, *many)
out = so.strip().splitlines()[-1] if so.strip() else ""
name = os.path.basename(os.path.dirname(out))
t.ok(rc == 0 and os.path.isfile(out) and len(name) <= 120 and name.startswith("20260101-000000"),
     "report over 14 runs without -o: a default folder name of %d characters" % len(name), (rc, se, name))

# ---- a run id under --results ----
rc, so, se = tool("capacity", "--results", os.path.dirname(BEFORE), os.path.basename(BEFORE))
t.ok(rc == 0 and "## Capacity planning" in so and "hpet" in so, "capacity --results DIR RUN_ID finds the run there", se)

# ---- usage errors quoting a value: cut, one line ----
rc, so, se = tool("capacity", "--rate", "x\n" + "9" * 100000, BEFORE)
short_error(rc, se, ["--rate"], "a 100 kB --rate value with a line break: one short usage line", code=2)
t.done()
