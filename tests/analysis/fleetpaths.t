#!/usr/bin/python3
# tier: fast
"""fleetpaths.t: the fleet playbook's filter of a host's run-folder listing
(analysis/fleet/filter_plugins/clockbench_fetch.py), without Ansible: every
name the contract makes is fetched, flat or in a round; a forged listing
(.., absolute paths, symlink-shaped and unknown names, newlines, template
markers, non-strings) is skipped, one bounded line each; nothing accepted
can leave the run folder on the controller; the names come from
contract/cbcontract/runfolder.py, not a copy; the playbook fetches only
what the filter accepts (TAP)."""
import importlib.util
import os
import posixpath
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap  # noqa: E402

t = Tap()
PLUGIN = os.path.join(ROOT, "analysis", "fleet", "filter_plugins", "clockbench_fetch.py")
PLAYBOOK = os.path.join(ROOT, "analysis", "fleet", "clockbench.yml")
RUN = "/var/lib/clockbench/results/20260101-120000-hv1"
DEST = "/ctl/results/fleet/hv1/20260101-120000-hv1"


def load():
    """The plugin module, loaded by its path as Ansible loads it (it finds the contract itself)."""
    spec = importlib.util.spec_from_file_location("clockbench_fetch_under_test", PLUGIN)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


try:
    fp = load()
    err = None
except Exception as e:  # noqa: B902  (any failure to load is the test's failure)
    fp, err = None, "%s: %s" % (type(e).__name__, e)
t.ok(fp is not None and hasattr(fp, "run_files") and "clockbench_run_files" in fp.FilterModule().filters(),
     "the filter plugin loads without Ansible and offers clockbench_run_files", err)
if fp is None:
    t.done()
    sys.exit(1)
rf = fp.runfolder


def run_files(paths, run=RUN):
    """The filter on find's entries of these paths: (accepted, skipped lines)."""
    out = fp.run_files([p if isinstance(p, dict) else {"path": p} for p in paths], run)
    return list(out["files"]), list(out["skipped"])


# Every name the contract makes, from its own namers (runfolder._NAMERS), their arguments by their number.
ARGS = {"host": [(cs, ext) for cs in ("tsc", "hpet", "acpi_pm", "kvm-clock") for ext in ("json", "csv", "txt")],
        "tsc-rate": [("tsc",)], "crosscheck": [("json",), ("txt",)], "running-vm": [("hpet",)],
        "running-vm-raw": [("kvm-clock",)]}
names, kinds = [], set()
for kind, (namer, n) in rf._NAMERS.items():
    args = [()] if n == 0 else ARGS.get(kind, []) if n < 3 else \
        [(cs, v, b) for cs in ("tsc", "hpet") for v in (1, 2, 64) for b in rf.BACKENDS]
    for a in args:
        made = [namer(*a)] + ([namer(*a) + ".gz"] if rf.classify(namer(*a) + ".gz") else [])
        names += made
        kinds |= {kind for m in made if rf.PATTERNS[kind].fullmatch(m)}
t.ok(kinds == set(rf.PATTERNS), "the names made cover every kind of the contract", sorted(set(rf.PATTERNS) - kinds))
rels = names + [rf.round_name(n) + "/" + x for n in (1, 2, 10, rf.MAX_ROUNDS) for x in names]
got, skipped = run_files([RUN + "/" + r for r in rels])
t.ok(got == rels and skipped == [], "every contract name is fetched, flat and in round-1 ... round-%d (%d paths)"
     % (rf.MAX_ROUNDS, len(rels)), "accepted %d of %d; skipped: %s" % (len(got), len(rels), skipped[:3]))

HOSTILE = [
    RUN + "/../../../../analysis/clockbench-report",
    RUN + "/round-1/../../../etc/cron.d/x",
    RUN + "/round-1/../host-tsc.json",
    RUN + "/./host-tsc.json",
    RUN + "/.",
    RUN + "/..",
    RUN + "//host-tsc.json",
    RUN + "/host-tsc.json/",
    RUN + "/",
    RUN,
    "/etc/passwd",
    "/root/.ssh/authorized_keys",
    "host-tsc.json",
    "../host-tsc.json",
    "",
    "/var/lib/clockbench/results/other-run/host-tsc.json",
    RUN + "x/host-tsc.json",  # a sibling folder whose name starts with the run's
    RUN[:-1] + "/host-tsc.json",
    RUN + "/host-tsc.json\n",
    RUN + "/host-tsc.json\n/../../x",
    RUN + "/round-1\n/host-tsc.json",
    RUN + "/host-tsc.json\r",
    RUN + "/host-tsc.json\x00/../x",
    RUN + "/host-tsc.json -> /etc/passwd",
    RUN + "/round-1/host-tsc.json@",
    RUN + "/link",
    RUN + "/notes.txt",
    RUN + "/.host-tsc.json",
    RUN + "/host-tsc.json.tmp",
    RUN + "/host-.json",
    RUN + "/host-ts\u0441.json",  # a Cyrillic es
    RUN + "/host-\uff54sc.json",  # a fullwidth t
    RUN + "/round-0/host-tsc.json",
    RUN + "/round-01/host-tsc.json",
    RUN + "/round-%d/host-tsc.json" % (rf.MAX_ROUNDS + 1),
    RUN + "/round-1/round-2/host-tsc.json",
    RUN + "/round-1/",
    RUN + "/round-1",
    RUN + "/round-x/host-tsc.json",
    RUN + "/{{ lookup('pipe', 'id') }}",
    RUN + "/host-{{ 7 * 7 }}.json",
    RUN + "/\u202ehost-tsc.json",
    RUN + "/host-tsc.json" * 3,
    RUN + "/" + "a" * 100000,
]
got, skipped = run_files(HOSTILE)
t.ok(got == [], "a forged listing (.., absolute, outside, newlines, symlink-shaped, unknown names, rounds out of range): "
     "nothing fetched", "accepted: %r" % got[:5])
t.ok(len(skipped) == min(len(HOSTILE), fp.MAX_SKIP_LINES) + (len(HOSTILE) > fp.MAX_SKIP_LINES),
     "one line for each path skipped, at most %d and then a count" % fp.MAX_SKIP_LINES, "%d lines" % len(skipped))
bad = [s for s in skipped if len(s) > 200 or any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in s)]
t.ok(skipped and not bad, "every skip line is one line, under 200 characters", repr(bad[:3]))
t.ok(skipped and "\\n" in skipped[HOSTILE.index(RUN + "/host-tsc.json\n")]
     and "../../../../analysis/clockbench-report" in skipped[0],
     "a skip line names the path skipped, its newline escaped", repr(skipped[:1]))
if len(HOSTILE) > fp.MAX_SKIP_LINES:
    t.ok(re.search(r"\b%d more\b" % (len(HOSTILE) - fp.MAX_SKIP_LINES), skipped[-1]), "the last line counts the rest",
         skipped[-1])
else:
    t.skip("fewer hostile paths than MAX_SKIP_LINES")

# Numbers past Python's int conversion limit and names past the kernel's 255 bytes (issue 35, N7): each entry one
# skip line, no error (a ValueError failed the play for that host) and no name no file can have kept.
LONG = [RUN + "/guest-tsc-%svcpu.json" % ("9" * 5000), RUN + "/kvm-trace-tsc-%svcpu.txt.gz" % ("9" * 5000),
        RUN + "/round-%s/host-tsc.json" % ("9" * 5000), RUN + "/guest-tsc-%svcpu.json" % ("9" * 300),
        RUN + "/round-1/kvm-trace-tsc-%svcpu-libvirt.json" % ("7" * 300),
        RUN + "/host-%s.json" % ("t" * 250), RUN + "/guest-%s-2vcpu.json" % ("\u00e9" * 126)]
outcome = []
for p in LONG:
    try:
        got, skipped = run_files([p])
        outcome.append("ok" if got == [] and len(skipped) == 1 and len(skipped[0]) <= 200 else "kept %r" % got)
    except ValueError as e:
        outcome.append("ValueError: %s" % str(e)[:80])
t.ok(outcome == ["ok"] * len(LONG),
     "a 5000-digit vCPU count or round, a name over the kernel's 255 bytes: one skip line each, nothing kept, no error",
     outcome)

odd = [None, 5, ["x"], {"path": None}, {"path": 7}, {"no-path": RUN + "/host-tsc.json"}, "not a dict",
       {"path": [RUN + "/host-tsc.json"]}]
try:
    out = fp.run_files(odd, RUN)
    ok, why = list(out["files"]) == [] and len(out["skipped"]) == len(odd), out
except Exception as e:  # noqa: B902
    ok, why = False, "%s: %s" % (type(e).__name__, e)
t.ok(ok, "entries that are not paths (None, numbers, lists, dicts without one) are skipped, one line each", why)
for files, desc in ((None, "no listing"), ({"path": RUN + "/host-tsc.json"}, "a dict, not a list"),
                    ("host-tsc.json", "a string, not a list")):
    try:
        out = fp.run_files(files, RUN)
        ok, why = list(out["files"]) == [], out
    except Exception as e:  # noqa: B902
        ok, why = isinstance(e, fp.ListingError), "%s: %s" % (type(e).__name__, e)
    t.ok(ok, "%s: nothing fetched" % desc, why)

# Mixed: the real files fetched, in order, the forged ones skipped; duplicates fetched once.
mixed = [RUN + "/round-1/host-tsc.json", RUN + "/../../x", RUN + "/summary.json", RUN + "/round-1/host-tsc.json",
         RUN + "/notes.txt"]
got, skipped = run_files(mixed)
t.ok(got == ["round-1/host-tsc.json", "summary.json"] and len(skipped) == 2,
     "a listing of real and forged paths: the real ones fetched once each, two skipped", (got, skipped))

# The run folder's own string is the prefix, as given (a clockbench_results of "/r/results/" makes "//").
got, skipped = run_files(["/r/results//run/host-tsc.json", "/r/results/run/host-tsc.json"], "/r/results//run")
t.ok(got == ["host-tsc.json"] and len(skipped) == 1, "the run folder's path is matched as the play gives it, never normalized",
     (got, skipped))

# Nothing accepted leaves the run folder on the controller.
esc = []
for p in [RUN + "/" + r for r in rels] + HOSTILE:
    for r in run_files([p])[0]:
        d = posixpath.join(DEST, r)
        if posixpath.isabs(r) or posixpath.normpath(d) != d or not d.startswith(DEST + "/") or "\n" in r:
            esc.append(r)
t.ok(not esc, "every accepted path stays in the run folder on the controller, already normal", esc[:3])

# The names are the contract's: a kind added to runfolder.PATTERNS is fetched at once, one removed is not.
rx = re.compile(r"\Aextra-kind\.json\Z")
rf.PATTERNS["extra-kind"] = rx
try:
    got = run_files([RUN + "/extra-kind.json", RUN + "/round-3/extra-kind.json"])[0]
finally:
    del rf.PATTERNS["extra-kind"]
summary = rf.PATTERNS.pop("summary-json")
try:
    gone = run_files([RUN + "/summary.json"])[0]
finally:
    rf.PATTERNS["summary-json"] = summary
t.ok(got == ["extra-kind.json", "round-3/extra-kind.json"] and gone == [],
     "the names are runfolder.PATTERNS itself, imported (a kind added is fetched, one removed is not)", (got, gone))
src = open(PLUGIN, encoding="utf-8").read()
t.ok(not re.search(r"^\s*(import re|from re)\b|re\.compile|\\A|\\Z|[\"'](host|guest|kvm|tsc|crosscheck|summary|round)\b", src, re.M),
     "the plugin holds no file name or pattern of its own")
t.ok(os.path.samefile(os.path.dirname(rf.__file__), os.path.join(ROOT, "contract", "cbcontract")),
     "the plugin imports the contract of the checkout it is in", rf.__file__)

# Installed (make install, the package): share/clockbench/fleet/filter_plugins/ finds lib/clockbench/contract/;
# with no contract anywhere it fails in one line, never fetching unfiltered.
WHERE = "import importlib.util, sys; spec = importlib.util.spec_from_file_location('cf', sys.argv[1]); " \
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); print(m.runfolder.__file__)"
usr = os.path.join(t.tmp, "usr")
plug = os.path.join(usr, "share", "clockbench", "fleet", "filter_plugins")
os.makedirs(plug)
shutil.copy(PLUGIN, plug)
shutil.copytree(os.path.join(ROOT, "contract", "cbcontract"), os.path.join(usr, "lib", "clockbench", "contract", "cbcontract"),
                ignore=shutil.ignore_patterns("__pycache__"))
p = subprocess.run([sys.executable, "-B", "-c", WHERE, os.path.join(plug, "clockbench_fetch.py")], capture_output=True,
                   text=True, cwd=t.tmp)
t.ok(p.returncode == 0 and p.stdout.strip() == os.path.join(usr, "lib", "clockbench", "contract", "cbcontract", "runfolder.py"),
     "installed: the plugin imports the installed suite's contract", p.stdout + p.stderr[-300:])
shutil.rmtree(os.path.join(usr, "lib"))
p = subprocess.run([sys.executable, "-B", "-c", WHERE, os.path.join(plug, "clockbench_fetch.py")], capture_output=True,
                   text=True, cwd=t.tmp)
t.ok(p.returncode != 0 and "no contract/cbcontract beside this playbook or in the installed suite" in p.stderr,
     "no contract to be found: the plugin fails to load, saying so", p.stdout + p.stderr[-300:])

# Outputs are data to Ansible: marked unsafe (never templated again), checked by the Python that has Ansible.
UNSAFE = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("cf", sys.argv[1])
fp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fp)
from ansible.utils.unsafe_proxy import AnsibleUnsafe
out = fp.run_files([{"path": sys.argv[2] + "/{{ lookup('pipe', 'id') }}"}, {"path": sys.argv[2] + "/summary.md"}], sys.argv[2])
strs = list(out["files"]) + list(out["skipped"])
sys.exit(0 if len(strs) == 2 and all(isinstance(x, AnsibleUnsafe) for x in strs) else 1)
"""
pys = [p for p in (sys.executable, "/usr/bin/python3")
       if os.access(p, os.X_OK) and subprocess.run([p, "-c", "import ansible"], capture_output=True).returncode == 0]
if not pys:
    t.skip("ansible-core not installed: the unsafe marking is checked by fleet.t's play")
else:
    p = subprocess.run([pys[0], "-B", "-c", UNSAFE, PLUGIN, RUN], capture_output=True, text=True)
    t.ok(p.returncode == 0, "every string the filter returns is marked unsafe for Ansible's templating (%s)" % pys[0],
         p.stderr[-500:])

# The playbook: the fetch's source and destination come from the filter's output, never from item.path.
pb = open(PLAYBOOK, encoding="utf-8").read()
fetch = re.search(r"\n( *)- name: Fetch the run folder[^\n]*\n(.*?)(?=\n\1- name:|\Z)", pb, re.S)
body = fetch.group(2) if fetch else ""
t.ok("clockbench_run_files" in pb and "relpath" not in pb and "item.path" not in body and "clockbench_fetch_list" in body,
     "the playbook fetches the filter's list (clockbench_run_files), no path of the host's own", body[:300])

t.done()
