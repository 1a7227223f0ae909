#!/usr/bin/python3
# tier: fast
"""health-hostile.t: health on recorded inputs another user shaped: a symlink in a "recorded" folder is not
followed when root reads it, only what parses is quoted (clocksource names, the release, tsc= values), and a --rules
or --readout document of an unexpected shape is one line of why, never a traceback (TAP)."""
import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path[:0] = [os.path.join(TOP, "tests", "lib")]
from taplib import Tap  # noqa: E402

t = Tap()
HC = os.path.join(TOP, "host-scripts", "health")
SECRET = "SECRET-TOKEN-7f3a"


def put(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run(*args):
    p = subprocess.run([HC, "--format", "json"] + list(args), capture_output=True, text=True, timeout=120)
    try:
        return json.loads(p.stdout), p
    except ValueError:
        return None, p


d = os.path.join(t.tmp, "rec")
secret = os.path.join(t.tmp, "secret")
put(secret, SECRET + "\n")
os.chmod(secret, 0o600)
put(os.path.join(d, "cs", "available_clocksource"), "tsc hpet\n")
os.symlink(secret, os.path.join(d, "cs", "current_clocksource"))
os.symlink(secret, os.path.join(d, "osrelease"))
os.symlink(secret, os.path.join(d, "cmdline"))
if os.geteuid() == 0:
    doc, p = run("--cs-dir", os.path.join(d, "cs"), "--osrelease", os.path.join(d, "osrelease"),
                 "--cmdline", os.path.join(d, "cmdline"), "--log", secret)
    t.ok(p.returncode == 1 and SECRET not in p.stdout + p.stderr,
         "as root, symlinks in a recorded folder are not followed, nothing of the file they name is quoted (exit %d)"
         % p.returncode, (p.stdout + p.stderr)[-600:])
else:
    t.skip("not root: the symlink rule is root's")
# Files that hold other text than their kind's: not quoted.
e = os.path.join(t.tmp, "junk")
put(os.path.join(e, "cs", "current_clocksource"), SECRET + " and more\n")
put(os.path.join(e, "cs", "available_clocksource"), "tsc " + SECRET + "/x hpet\n")
put(os.path.join(e, "osrelease"), "x " + SECRET + "\n")
put(os.path.join(e, "cmdline"), "ro tsc=" + SECRET + "$(id) clocksource=hpet\n")
doc, p = run("--cs-dir", os.path.join(e, "cs"), "--osrelease", os.path.join(e, "osrelease"), "--cmdline",
             os.path.join(e, "cmdline"))
t.ok(doc is not None and "$(id)" not in p.stdout and SECRET + " and" not in p.stdout and "x " + SECRET not in p.stdout
     and doc["clocksource"]["available"] == ["tsc", "hpet"] and doc["clocksource"]["current"] is None
     and doc["kernel_cmdline"]["clocksource"] == "hpet",
     "only what parses is quoted: clocksource names, a release, a tsc= value of the kernel's shape", p.stdout[-800:])

# --rules and --readout of shapes the table and the engine never write: one
# reason each, no traceback, and over_limit above the samples refused.
cs = os.path.join(t.tmp, "cs")
put(os.path.join(cs, "current_clocksource"), "hpet\n")
put(os.path.join(cs, "available_clocksource"), "tsc hpet\n")
put(os.path.join(t.tmp, "rel"), "6.1.0\n")
RULES = [[], {"unwatched": 5}, {"id": "x", "unwatched": [1]}, {"id": "x", "unwatched": [], "retries": 5},
         {"id": "x", "unwatched": [], "varies": 5}, {"id": "x", "unwatched": [{"effect": "unwatched", "cpu_flags": 5}]},
         {"id": "x", "unwatched": [], "readout_limit": "fixed"}, {"id": "x", "unwatched": [{"overridden_by": 5}]}]
bad = []
for i, r in enumerate(RULES):
    f = os.path.join(t.tmp, "r%d.json" % i)
    put(f, json.dumps(r))
    doc, p = run("--cs-dir", cs, "--osrelease", os.path.join(t.tmp, "rel"), "--rules", f)
    w = (doc or {}).get("watchdog") or {}
    if "Traceback" in p.stderr or not (w.get("rules", {}).get("reason") or w.get("limits", {}).get("reason")):
        bad.append("%s: %s" % (json.dumps(r), p.stderr.strip()[-200:]))
t.ok(not bad, "%d --rules documents of the wrong shape: a reason each, no traceback" % len(RULES), "\n".join(bad))
READOUTS = [{"samples": 10, "over_limit": 20, "limit_ns": 100}, {"samples": 10, "over_limit": 2, "limit_ns": 100, "ns": 5},
            {"samples": 10, "over_limit": 2, "limit_ns": 100, "runs_over_limit": 5},
            {"samples": 10, "over_limit": 2, "limit_ns": 100, "runs_over_limit": {"x": "y"}},
            {"samples": 10, "over_limit": 2, "limit_ns": 0}]
bad = []
for i, r in enumerate(READOUTS):
    f = os.path.join(t.tmp, "o%d.json" % i)
    put(f, json.dumps({"watchdog_readout": r}))
    doc, p = run("--cs-dir", cs, "--osrelease", os.path.join(t.tmp, "rel"), "--readout", f)
    risk = ((doc or {}).get("watchdog") or {}).get("risk") or {}
    if "Traceback" in p.stderr or risk.get("verdict") != "unavailable" or f not in str(risk.get("readout_unavailable")):
        bad.append("%s: %s %s" % (json.dumps(r), risk.get("verdict"), p.stderr.strip()[-200:]))
t.ok(not bad, "%d --readout documents of the wrong shape (over_limit > samples among them): unavailable, saying why"
     % len(READOUTS), "\n".join(bad))
sys.exit(t.done())
