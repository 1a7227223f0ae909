#!/usr/bin/python3
# tier: fast
"""kernels.t: the watchdog rules table: one release per rule maps to its era, unknown releases say why, the table is consistent."""
import importlib.machinery
import importlib.util
import os
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from taplib import ROOT, Tap  # noqa: E402

sys.path[:0] = [os.path.join(ROOT, "contract")]
from cbcontract import kernels as k  # noqa: E402

t = Tap()
HEX40 = re.compile(r"^[0-9a-f]{40}$")
DEBIAN_612 = "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1 (2025-11-09)"

# One release per era row, and the figures that row gives (defaults of its
# Kconfig, tsc watched by hpet).  Every row of ERAS must appear here.
FIXTURES = [
    # (release, uname -v, era, readout limit ns, wd-wd skip ns, skew margin ns, all slow)
    ("6.1.55", None, "6.1-legacy", 100000, 50000, 400000, "marked-unstable"),
    ("6.1.0-57-amd64", None, "6.1", 100000, 50000, 400000, "marked-unstable"),
    ("6.6.9", None, "6.6-legacy", 125000, 62500, 500000, "marked-unstable"),
    ("6.6.63", None, "6.6", 125000, 62500, 500000, "marked-unstable"),
    ("6.12.19", None, "6.12-750", 750000, 500000, 500000, "marked-unstable"),
    ("6.12.68", None, "6.12-500", 500000, 250000, 500000, "marked-unstable"),
    ("6.18.7", None, "6.18-750", 750000, 500000, 500000, "marked-unstable"),
    ("6.18.44", None, "6.18-500", 500000, 250000, 500000, "marked-unstable"),
    ("7.1.3", None, "7.1", 50000, None, 244140, "reported"),
]


def fixture_failures(eras):
    """What is wrong with the table `eras` against FIXTURES: [] when every
    fixture maps to its row with its figures and every row has a fixture."""
    saved = k.ERAS
    k.ERAS = eras
    bad = []
    try:
        for rel, ver, era, lim, skip, margin, slow in FIXTURES:
            r = k.rules_for(rel, ver)
            if r is None:
                bad.append("%s: None (%s)" % (rel, k.why_unknown(rel, ver)))
                continue
            got = k.limits(r)
            want = {"era": era, "readout_limit_ns": lim, "wd_wd_skip_ns": skip, "skew_margin_ns": margin, "all_slow": slow}
            diff = {key: got[key] for key in want if got[key] != want[key]}
            if diff:
                bad.append("%s: %r, want %r" % (rel, diff, want))
        ids = {row["id"] for row in eras}
        bad.extend("row %s has no fixture" % i for i in sorted(ids - {f[2] for f in FIXTURES}))
    finally:
        k.ERAS = saved
    return bad


bad = fixture_failures(k.ERAS)
t.ok(not bad, "every era row: its fixture release maps to it with the row's limits, every row has a fixture", "\n".join(bad))

# Removing any one row is seen by the fixture check (the check can fail).
missed = [row["id"] for row in k.ERAS if not fixture_failures(tuple(r for r in k.ERAS if r is not row))]
t.ok(not missed, "removing any one era row makes the fixture check fail", "not seen: %r" % missed)

# --- one fixture per rule ---------------------------------------------------
# Each check runs in check(): a table missing a row fails the check that
# needs it, and the file goes on.


def check(desc, fn):
    try:
        cond, diag = fn()
    except Exception as e:  # a missing row: rules_for() gave None
        cond, diag = False, "%s: %s" % (type(e).__name__, e)
    t.ok(bool(cond), desc, diag)


def era(release, version=None):
    r = k.rules_for(release, version)
    return r and r["id"]


def lim(release, **kw):
    return k.limits(k.rules_for(release), **kw)


def rule(release, rid):
    return next((u for u in k.unwatched_rules(release) if u["id"] == rid), None)


def debian_abi():
    r = k.rules_for("6.1.0-57-amd64")
    return r["sublevel"] is None and r["parsed_by"] == "debian-abi" and not r["at_or_after_read"], r["sublevel"]


def debian_version():
    r = k.rules_for("6.1.0-57-amd64", DEBIAN_612)
    return r["sublevel"] == 158 and r["parsed_by"] == "debian-version" and r["at_or_after_read"], r["sublevel"]


check("Debian 6.1.0-57: upstream sublevel unknown from uname -r, so not claimed at the 6.1.158 reading", debian_abi)
check("Debian 6.1.0-57 with uname -v naming 6.1.158: sublevel 158, at the reading", debian_version)
check("6.1: a kernel with the old clocksource.max_cswd_read_retries parameter is named as the exception",
      lambda: ("max_cswd_read_retries" in k.rules_for("6.1.0-57-amd64")["retries"].get("legacy_param", ""), None))
check("6.1.0-N: its module parameters decide between 6.1-legacy and 6.1, and say so",
      lambda: ((lambda a, b: ((a["id"], b["id"], a["chosen_by"]) == ("6.1-legacy", "6.1", "module parameters"), (a["id"], b["id"])))
               (k.rules_for("6.1.0-10-amd64", None, ["max_cswd_read_retries", "verify_n_cpus"]),
                k.rules_for("6.1.0-57-amd64", None, ["verify_n_cpus"]))))
check("6.1.0-N with neither uname -v nor parameters: the current 6.1 row, chosen_by says it was the default",
      lambda: ((lambda r: (r["id"] == "6.1" and "default" in r["chosen_by"], r["chosen_by"]))(k.rules_for("6.1.0-57-amd64"))))
check("6.1.105 and 6.1.106 (the retries backport is in one of them): None without parameters, known with them",
      lambda: (k.rules_for("6.1.105") is None and "105" in k.why_unknown("6.1.105")
               and era("6.1.106", None) is None and k.rules_for("6.1.105", None, ["verify_n_cpus"])["id"] == "6.1", None))
check("6.1.55 / 6.6.9: max_cswd_read_retries (default 2: 3 attempts, whatever the CPUs); its value when read",
      lambda: ((lim("6.1.55", online_cpus=64)["attempts"], lim("6.6.9", online_cpus=64)["attempts"],
                lim("6.6.9", max_cswd_read_retries=5)["attempts"]) == (3, 3, 6), None))
check("6.1.55: the retried line on any success after 2+ retries (||); 6.1.158: only at the last attempt (&&)",
      lambda: ("||" in k.messages("6.1.55")[0]["meaning"] and "&&" in k.messages("6.1.158")[0]["meaning"], None))
check("the legacy rows: no 'Long readout interval' skip (absent at 6.1.55 and 6.6.9)",
      lambda: (k.rules_for("6.1.55")["long_interval_ns"] is None and k.rules_for("6.6.9")["long_interval_ns"] is None
               and k.rules_for("6.6.63")["long_interval_ns"] == 10 ** 9, None))
check("6.1: the readout limit is CONFIG_CLOCKSOURCE_WATCHDOG_MAX_SKEW_US",
      lambda: (lim("6.1.0-57-amd64", max_skew_us=100)["readout_limit_ns"] == 100000
               and lim("6.1.0-57-amd64", max_skew_us=50)["readout_limit_ns"] == 50000, None))
check("6.6: a kernel built with MAX_SKEW_US=100 has a 100 us limit, not the Kconfig default 125",
      lambda: (lim("6.6.63", max_skew_us=100)["readout_limit_ns"] == 100000, None))
check("6.12.19: limit 2*wd+cs margins, skip at 2*wd, each margin 2*MAX_SKEW",
      lambda: ((lambda L: ((L["readout_limit_ns"], L["wd_wd_skip_ns"], L["skew_margin_ns"]) == (600000, 400000, 400000), L))
               (lim("6.12.19", max_skew_us=100))))
check("6.12.19: tsc-early's own 32 ms margin widens its readout limit",
      lambda: ((lambda L: (L["readout_limit_ns"] == 2 * 250000 + 32000000, L))(lim("6.12.19", cs="tsc-early"))))
check("6.12.y: c06343be0b4e arrives at 6.12.68", lambda: (era("6.12.67") == "6.12-750" and era("6.12.68") == "6.12-500", None))
check("6.18.y: c06343be0b4e arrives at 6.18.8", lambda: (era("6.18.7") == "6.18-750" and era("6.18.8") == "6.18-500", None))
check("a vendor suffix after the sublevel: this machine's 6.18.44-fc-v1045 is 6.18.44",
      lambda: ((lambda r: (r["id"] == "6.18-500" and r["sublevel"] == 44 and r["at_or_after_read"], r["sublevel"]))
               (k.rules_for("6.18.44-fc-v1045"))))
check("bullseye-backports' 6.1.0-0.deb11.17-amd64 hides its sublevel; its uname -v names it",
      lambda: ((lambda a, b: (a["sublevel"] is None and b["sublevel"] == 76, (a["sublevel"], b["sublevel"])))
               (k.rules_for("6.1.0-0.deb11.17-amd64"),
                k.rules_for("6.1.0-0.deb11.17-amd64", "#1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1~bpo11+1 (2024-02-12)"))))
check("6.19.0 reads as 6.18.26; Debian 13's 6.12.48+deb13 has its sublevel in uname -r",
      lambda: (era("6.19.0") == "6.18-500" and era("6.12.48+deb13-amd64") == "6.12-750", None))

# Attempts per tick: ilog2(online CPUs)/2 + 1 retries, one attempt more.
WANT = {1: 2, 2: 2, 3: 2, 4: 3, 15: 3, 16: 4, 63: 4, 64: 5, 256: 6, 1024: 7}
check("6.6: attempts = ilog2(online CPUs)//2 + 2 (retries + the first)",
      lambda: ((lambda got: (got == WANT, got))({n: lim("6.6.63", online_cpus=n)["attempts"] for n in WANT})))
check("a kernel with clocksource.max_cswd_read_retries=3: 4 attempts",
      lambda: (lim("6.6.40", max_cswd_read_retries=3)["attempts"] == 4, None))
check("6.6.45 is legacy, 6.6.46 has the scaled retries", lambda: (era("6.6.45") == "6.6-legacy" and era("6.6.46") == "6.6", None))
check("no CPU count, no parameter: attempts unknown, not guessed", lambda: (lim("6.6.63")["attempts"] is None, None))
check("7.1: 50 us readout, 3 attempts whatever the CPUs, an all-slow tick only reported",
      lambda: ((lambda L: ((L["readout_limit_ns"], L["attempts"], L["all_slow"]) == (50000, 3, "reported"), L))
               (lim("7.1.3", online_cpus=64))))
check("7.1: frequency check 1/2048 (about 488 ppm) when both calibrated, 1/256 (about 3906 ppm) otherwise",
      lambda: (abs(lim("7.1.3")["freq_ppm"] - 488.28125) < 1e-9
               and abs(lim("7.1.3", calibrated=False)["freq_ppm"] - 3906.25) < 1e-9, None))

# --- unwatched rules --------------------------------------------------------
check("6.1: constant_tsc+nonstop_tsc+tsc_adjust and at most 2 online NUMA nodes",
      lambda: ((lambda q: (q["max"] == 2 and "NUMA" in q["count"]
                           and q["cpu_flags"] == ["constant_tsc", "nonstop_tsc", "tsc_adjust"], q))
               (rule("6.1.0-57-amd64", "qualified-platform"))))
check("6.1: tsc=watchdog is no option", lambda: (rule("6.1.0-57-amd64", "tsc=watchdog")["effect"] == "none", None))
check("6.6: at most 4 online NUMA nodes",
      lambda: ((lambda q: (q["max"] == 4 and "NUMA" in q["count"], q))(rule("6.6.63", "qualified-platform"))))
check("6.6: tsc=watchdog makes the TSC watch hpet/acpi_pm, it does not watch the TSC",
      lambda: (rule("6.6.63", "tsc=watchdog")["effect"] == "tsc-watches-others", None))
check("6.12: at most 4 packages (sockets), not NUMA nodes",
      lambda: ((lambda q: (q["max"] == 4 and "packages" in q["count"], q))(rule("6.12.19", "qualified-platform"))))
check("7.1: tsc=watchdog forces the TSC watched over tsc=reliable and the qualified-platform rule",
      lambda: (rule("7.1.3", "tsc=watchdog")["effect"] == "watched"
               and all(x.get("overridden_by") == "tsc=watchdog" for x in k.unwatched_rules("7.1.3") if x["effect"] == "unwatched"),
               None))
check("every era: tsc=reliable, tsc=nowatchdog and the tsc_reliable CPU flag leave the TSC unwatched",
      lambda: (all(rule(rel, i)["effect"] == "unwatched" for rel in ("6.1.0-57-amd64", "6.6.63", "6.12.19", "7.1.3")
                   for i in ("tsc=reliable", "tsc=nowatchdog", "tsc_reliable-flag")), None))


# --- which clocksource watches ---------------------------------------------
check("6.x: hpet (250) over acpi_pm (200); kvm-clock (400) over both; with neither, refined-jiffies",
      lambda: ((lambda r: ((k.watchdog_for(r, ["tsc", "acpi_pm", "hpet"]), k.watchdog_for(r, ["tsc", "hpet", "kvm-clock"]),
                            k.watchdog_for(r, ["tsc", "refined-jiffies"])) == ("hpet", "kvm-clock", "refined-jiffies"), None))
               (k.rules_for("6.12.19"))))
check("6.x: with no hpet, acpi_pm or kvm-clock offered, the always-registered refined-jiffies watches",
      lambda: (k.watchdog_for(k.rules_for("6.6.63"), ["tsc"]) == "refined-jiffies", None))
check("7.1: a non-continuous clocksource never watches (no watchdog at all without hpet/acpi_pm)",
      lambda: (k.watchdog_for(k.rules_for("7.1.3"), ["tsc", "refined-jiffies"]) is None
               and k.watchdog_for(k.rules_for("7.1.3"), ["tsc", "acpi_pm"]) == "acpi_pm", None))
check("6.12.19: watched by refined-jiffies, its 32 ms margin sets the limits",
      lambda: ((lambda L: ((L["readout_limit_ns"], L["skew_margin_ns"]) == (64250000, 32250000), L))
               (lim("6.12.19", watchdog="refined-jiffies"))))

# --- unknown releases -------------------------------------------------------
for rel, ver, word in (("7.0.5", None, "7.0"), ("7.3.1", None, "newer"), ("5.15.0-100-generic", None, "older"),
                       ("6.8.0-45-generic", None, "6.8"), ("6.15.2", None, "6.15"),
                       ("6.12.0-1-amd64", None, "uname -v"), ("not-a-kernel", None, "not a kernel release"),
                       ("", None, "not a kernel release"), (None, None, "not a kernel release")):
    why = k.why_unknown(rel, ver)
    t.ok(k.rules_for(rel, ver) is None and word in why and len(why) < 200,
         "unknown %r: None, because %s" % (rel, why[:70]), why)
t.ok(k.rules_for("6.12.1" + "9" * 5000) is None and len(k.why_unknown("6.12.1" + "9" * 5000)) < 200,
     "a 5000-character release: None with a short reason")
t.ok(k.why_unknown("6.12.19") == "", "a known release has no reason")

# --- the table's own consistency -------------------------------------------
probs = []
for row in k.ERAS:
    tree = k.TREES.get(row["read_at"])
    if tree is None:
        probs.append("%s: read_at %s not in TREES" % (row["id"], row["read_at"]))
        continue
    if not (tree.get("commit") is None or HEX40.match(str(tree.get("commit")))):
        probs.append("%s: tree commit %r" % (row["id"], tree.get("commit")))
    if not re.match(r"^\d+\.\d+\.\d+$", row["read_at"]):
        probs.append("%s: version %r" % (row["id"], row["read_at"]))
    for path, blob in tree["files"].items():
        if not HEX40.match(blob):
            probs.append("%s: %s blob %r" % (row["id"], path, blob))
    if "kernel/time/clocksource.c" not in tree["files"] or not row["functions"]:
        probs.append("%s: no clocksource.c blob or no functions" % row["id"])
    for c in row["commits"]:
        if c not in k.COMMITS:
            probs.append("%s: commit %s not in COMMITS" % (row["id"], c))
    L = k.limits(row, online_cpus=8)
    if not (L["readout_limit_ns"] > 0 and L["attempts"] > 0 and L["skew_margin_ns"] > 0 and row["interval_s"] > 0):
        probs.append("%s: a limit not positive: %r" % (row["id"], L))
    if row["max_skew_us_default"] is not None:
        lo, hi = row["max_skew_us_range"]
        if not lo <= row["max_skew_us_default"] <= hi:
            probs.append("%s: default max skew outside its range" % row["id"])
    for m in row["messages"]:
        if not m["fmt"].endswith("\n") or "/" not in m["kind"] or not m["where"]:
            probs.append("%s: message %r" % (row["id"], m["fmt"][:60]))
for full, _, _ in k.COMMITS.values():
    if full and not HEX40.match(full) and "not pinned" not in full:
        probs.append("COMMITS id %r: neither 40 hex nor said not pinned" % full)
t.ok(not probs, "every row cites a version, a tree commit (40 hex, or none yet) and blobs, its functions and commits; "
     "limits positive", "\n".join(probs))

# --- the citation: kernel.org's tree, the release's tag, the tag's commit ------
# A copy of a release (a project's or a board vendor's tree) is where the
# files were read, never what is cited: the tag is, in the tree that holds it.
MAINLINE = "git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git"
STABLE = "git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git"


def upstream_of(version):
    """(tree, tag) of a release: a .0 is mainline's vX.Y, the rest stable's vX.Y.Z."""
    ma, mi, sub = version.split(".")
    return (MAINLINE, "v%s.%s" % (ma, mi)) if sub == "0" else (STABLE, "v" + version)


bad = []
for ver, tree in sorted(k.TREES.items()):
    where, tag = upstream_of(ver)
    if tree.get("tree") != where or tree.get("tag") != tag:
        bad.append("%s: cites %r %r, not %s %s" % (ver, tree.get("tree"), tree.get("tag"), where, tag))
    c = tree.get("commit")
    if not (c is None or HEX40.match(str(c))):
        bad.append("%s: commit %r: neither 40 hex nor None (not checked yet)" % (ver, c))
    if c is not None and not re.match(r"^\d{4}-\d{2}-\d{2}$", str(tree.get("checked"))):
        bad.append("%s: a commit with no date its blobs were checked against the tag" % ver)
    cited = {key: v for key, v in tree.items() if key != "copy"}
    if "github" in repr(cited).lower():
        bad.append("%s: a copy cited: %r" % (ver, cited.get("tree")))
t.ok(bad == [] and len(k.TREES) == 8,
     "every tree read is cited as kernel.org's mainline or stable tree, the release's tag and the tag's commit "
     "(None until checked); a copy it was read in is not cited", "\n".join(bad))

r = k.rules_for("6.18.44") or {}
t.ok(r.get("tree") == STABLE and r.get("tag") == "v6.18.26" and "tree_commit" in r
     and r["tree_commit"] == k.TREES["6.18.26"].get("commit") and "copy" not in r,
     "rules_for() gives the row's tree, tag and tag commit (6.18.44: stable v6.18.26), not the copy",
     repr({key: r.get(key) for key in ("tree", "tag", "tree_commit", "copy")}))
r = k.rules_for("6.19.2") or {}
t.ok(r.get("tag") == "v6.18.26" and r.get("also_read") == ["6.19.0"] and k.TREES["6.19.0"].get("tag") == "v6.19",
     "6.19.y: the 6.18 row, read at stable v6.18.26 (mainline v6.19 read beside it)",
     repr((r.get("tag"), r.get("also_read"), k.TREES["6.19.0"].get("tag"))))


def load_health():
    """host-scripts/health as a module (its main() does not run)."""
    loader = importlib.machinery.SourceFileLoader("health", os.path.join(ROOT, "host-scripts", "health"))
    spec = importlib.util.spec_from_loader("health", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


hc = load_health()
r = k.rules_for("6.18.44")
s = hc.cite(r) or ""
unchecked = r.get("tree_commit") is None
t.ok((STABLE + " v6.18.26") in s and "github" not in s and ("not checked" in s) == unchecked and len(s) <= 200,
     "health cites 6.18.44's rules as kernel.org's stable tree at v6.18.26 (saying so while its commit is not "
     "checked), never a copy", s)
s = hc.cite(dict(r, tree_commit="0123456789abcdef0123456789abcdef01234567")) or ""
t.ok((STABLE + " v6.18.26@0123456789ab") in s and "not checked" not in s,
     "health: a checked row's citation ends with the tag's commit (12 hex)", s)
s = hc.cite({"id": "old", "read_at": "6.1.158", "tree": "example.org/t", "tree_commit": "ab" * 20}) or ""
t.ok("example.org/t@abababababab" in s and "read at 6.1.158" in s,
     "health: a rules file of the old shape (no tag) is still cited as tree@commit", s)

spans = []
for row in k.ERAS:
    for (ma, mi, lo, hi) in row["covers"]:
        spans.append((ma, mi, lo, 1 << 30 if hi is None else hi, row["id"]))
overlap = [(a[4], b[4]) for i, a in enumerate(spans) for b in spans[i + 1:]
           if a[:2] == b[:2] and a[2] <= b[3] and b[2] <= a[3]]
t.ok(not overlap, "no release is covered by two rows", overlap)

# kmsg.py (health's classifier) knows every line of every era's table as its kind.
from cbcontract import kmsg


def render(fmt):
    subs = [(r"%\*pbl", "0-3"), (r"%16llu", "  500000123"), (r"%20s", "                hpet"), (r"%llx", "1f2e"),
            (r"%llu", "51234"), (r"%lld", "51234"), (r"%ld", "125000"), (r"%Ld", "4242"), (r"%u", "3"), (r"%d", "3"), (r"%s", "tsc")]
    s = fmt.rstrip("\n")
    for a, b in subs:
        s = re.sub(a, b, s)
    return s


unknown = sorted({"%s (table: %s, kmsg: %s)" % (line, m["kind"], c and c[0]) for _, m in k.all_messages()
                  for line in [m["prefix"] + render(m["fmt"])] for c in [kmsg.classify(line)]
                  if c is None or c[0] != m["kind"]})
t.ok(not unknown, "kmsg.classify() knows every line of every era's table, with the table's kind", unknown[:20])
t.done()
