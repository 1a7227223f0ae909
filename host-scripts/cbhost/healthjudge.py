"""healthjudge.py: clockbench health's judgement of what healthcollect read: the cause, the watchdog, the report.

The state is the one rule's (cbcontract.health); here are why the clock is
off the TSC (classify), whether the kernel's watchdog watches the TSC and
within which limits (watched, limits), the risk of a false alarm from the
readout, and the report those make (its fields: --help and docs/health.md).
"""

from cbcontract import health, kernels, kmsg, load, names, risk
from cbcontract.util import cut

from . import heal, healthadvice
from .healthadvice import CAUSES
from .healthcollect import packages, readout

cmdline_options = kmsg.cmdline_options
# The watchdog's failed tests (kmsg.summarize()'s "tests"), as the cause's detail says them.
TEST_TEXT = {"skew": "skew too large", "read-back": "read-back delay", "frequency": "frequency skew",
             "inter-CPU": "inter-CPU skew"}


def classify(current, available, cmdline, log, log_problem=None):
    """The cause of the current state, and the evidence lines, from the one
    reading of a kernel log (log: its kmsg.summarize(), as the boots view
    uses): a line that names its cause wins over the command line and the
    clocksources.  Without a kernel log (None) nothing is concluded from
    its silence: the cause is unknown, and its detail says why the log was
    not read.  A recorded log (--log) was read as people paste it, its
    format named (summary["format"]).  Returns (cause, detail, evidence,
    opts, summary)."""
    s = log or kmsg.summarize([])
    opts, tsc_opts = cmdline_options(cmdline)
    detail = None
    if current in kmsg.TSC_NAMES:
        cause = "never_lost"
    elif s["why"] == "boot_warp":
        cause = "boot_warp"
        if s["cycles"] is not None:
            detail = "%d cycles warp" % s["cycles"]
    elif s["why"] == "watchdog":
        cause = "watchdog"
        tests = list(s["tests"])
        if s["near_misses"].get("near-miss/remote-timeout"):
            tests.append("remote CPU read timed out")
        detail = ", ".join(TEST_TEXT.get(x, x) for x in tests) or None
    elif s["why"] == "cmdline":
        cause = "forced_unstable"
    elif s["why"] == "other":
        cause, detail = "marked_unstable", s["reason"]
    elif any("unstable" in v.split(",") for v in tsc_opts):
        cause = "forced_unstable"
    elif opts.get("clocksource"):
        cause = "set_at_boot"
    elif log is not None and (s["tsc"] == "lost" and s["why"] == "by_hand" or "tsc" in (available or [])):
        cause = "by_hand"
    elif log is not None and s["tsc"] == "not chosen" and current:
        cause = "not_chosen"
    else:
        cause = "unknown"
    if cause == "unknown" and log is None:
        detail = "kernel log not read: %s" % (log_problem or "no log")
    if s.get("unsure") and cause in ("boot_warp", "watchdog", "forced_unstable", "marked_unstable"):
        # A fragment never gives a confident cause: say what it seems, and ask for the raw log.
        detail = "the recorded log's line suggests %s%s, but %s: give the raw log (dmesg > file)" % (
            CAUSES[cause], " (%s)" % detail if detail else "", s["unsure"])
        cause = "unknown"
    evidence = s["evidence"] + s["switch_lines"]
    return cause, detail, evidence, opts, s



def across_switch(log):
    """A recorded log's periods off tsc that ended (heal.off_tsc): each VM
    that ran across one lost the stable bit; [] when none or not read."""
    if log is None:
        return []
    return [p for p in heal.off_tsc(log["switch_times"], log["switch_times_cut"]) if p[1] is not None]


# The clocksource watchdog: is the TSC watched, by what, within which limits.

# Only the TSC's names (tsc, tsc-early: names.h's catalog) are clocksources
# the kernel must verify (CLOCK_SOURCE_MUST_VERIFY); the one that watches
# them, of the others, is the table's to say (kernels.watchdog_for():
# ratings, the jiffies fallback).
MUST_VERIFY = names.TSC_NAMES
FLAGS_RULE = ("constant_tsc", "nonstop_tsc", "tsc_adjust")


def cite(r):
    """A rules row's citation: its era, the tree, tag and commit it was read at."""
    if not isinstance(r, dict):
        return None
    if isinstance(r.get("cite"), str):
        return cut(r["cite"], 200)
    parts = ["era %s" % r["id"]] if isinstance(r.get("id"), str) else []
    if isinstance(r.get("read_at"), str):
        parts.append("read at %s" % r["read_at"])
    commit = r.get("tree_commit") if isinstance(r.get("tree_commit"), str) else None
    if isinstance(r.get("tree"), str) and isinstance(r.get("tag"), str):  # kernel.org's tree and the release's tag
        end = "@" + commit[:12] if commit else " (its commit not checked yet)"
        parts.append("%s %s%s" % (r["tree"], r["tag"], end))
    elif isinstance(r.get("tree"), str):
        parts.append("%s@%s" % (r["tree"], (commit or "?")[:12]))
    if isinstance(r.get("commits"), list) and r["commits"]:
        parts.append(", ".join(str(c) for c in r["commits"][:4]))
    return cut("; ".join(parts), 200) or None



def _last_wins(tsc_vals, a, b):
    """Whether tsc=a comes after every tsc=b on the command line."""
    ia = max((i for i, v in enumerate(tsc_vals) if v == a), default=-1)
    ib = max((i for i, v in enumerate(tsc_vals) if v == b), default=-1)
    return ia > ib


def would_watch(avail, rules):
    """(names the table does not know, the clocksource that would watch the
    TSC or None): kernels.watchdog_for() on the offered clocksources; a name
    it does not know makes the answer unknown, not a guess."""
    cands = [c for c in avail if c not in MUST_VERIFY]
    unknown = [c for c in cands if c not in kernels.WATCHDOG_CANDIDATES]
    if unknown or rules is None:
        return unknown, None
    return [], kernels.watchdog_for(rules, cands)


def watched(w, rules, tsc_vals, flags, counts, avail):
    """Fills w["watched"], w["why"], w["by"], w["rule"] by the kernel's
    order: the TSC not offered; an unwatched rule of its era (tsc_init()
    order, as the table lists them); no clocksource to watch with; else
    watched, by the best-rated clocksource it need not verify."""
    if not any(c in avail for c in MUST_VERIFY):
        w.update(watched="no", why="the TSC is not offered (available: %s): the kernel gave it up already, "
                 "nothing is left to watch" % " ".join(avail))
        return
    if rules is None:
        w.update(watched="unknown", why=w["rules"]["reason"])
        return
    src = w["rules"]["source"]
    for x in rules["unwatched"]:
        if not isinstance(x, dict) or x.get("effect") != "unwatched":
            continue
        over = x.get("overridden_by")
        if isinstance(over, str) and over.startswith("tsc="):
            o = over[4:]
            if o in tsc_vals and _last_wins(tsc_vals, o, "nowatchdog"):
                continue
        rid = x.get("id") or "?"
        if x.get("cmdline"):
            val = str(x["cmdline"]).split("=", 1)[-1]
            if val in tsc_vals:
                w.update(watched="no", why="tsc=%s on the kernel command line turns the watchdog off" % val,
                         rule="%s (%s; %s)" % (rid, x.get("where", "tsc.c"), src))
                return
            continue
        need = [str(f) for f in x.get("cpu_flags") or []]
        if not need:
            continue
        if flags is None:
            w.update(watched="unknown", why="the CPU flags were not read (the rule %s needs %s)" % (rid, ", ".join(need)))
            return
        if not all(flags.get(f) for f in need):
            continue
        mx, what = x.get("max"), str(x.get("count") or "")
        n = None
        if isinstance(mx, int):
            key = "packages" if "package" in what else "nodes" if "node" in what.lower() else None
            n = counts.get(key) if key else None
            if n is None:
                w.update(watched="unknown", why="the CPU has %s; whether the TSC is watched then turns on the %s "
                         "(at most %d), which %s" % (", ".join(need), what or "count", mx,
                                                     "was not read" if key else "health cannot count"))
                return
            if n > mx:
                continue
        w.update(watched="no", why="the CPU has %s%s: tsc.c turns the watchdog off%s" % (
            ", ".join(need), "; %s: %d, at most %d" % (what, n, mx) if n is not None else "",
            " (%s would keep it on)" % over if over else ""),
            rule="%s (%s; %s)" % (rid, x.get("where", "tsc.c"), src))
        return
    unknown, best = would_watch(avail, rules)
    if unknown:
        w.update(watched="unknown", why="the TSC is watched if a clocksource can watch it; %s is not in the kernel "
                 "table's list of watchdogs, so which one would is not known" % ", ".join(unknown))
        return
    if best is None:
        w.update(watched="no", why="no clocksource this era takes as a watchdog (offered: %s): nothing watches it"
                 % " ".join(avail))
        return
    w.update(watched="yes", by=best, why="no rule of this kernel's era leaves it unwatched; %s watches it (the "
             "best-rated clocksource the kernel need not verify, rating %d%s)" % (
                 best, kernels.WATCHDOG_CANDIDATES[best]["rating"],
                 ", registered though not offered" if best not in avail else ""))


def limits(rules, params, online, max_skew_us, watchdog):
    """The running kernel's watchdog limits: the table's arithmetic
    (kernels.limits()) on this host's figures: its compile-time limit
    (CONFIG_CLOCKSOURCE_WATCHDOG_MAX_SKEW_US), online CPUs, the module
    parameter where it has one, the watchdog that would read."""
    lim = {"readout_limit_ns": None, "attempts": None, "slow_readout_marks_unstable": None,
           "skew_margin_ns": None, "wd_wd_skip_ns": None, "freq_ppm": None, "max_skew_us": max_skew_us,
           "max_skew_from": "CONFIG_CLOCKSOURCE_WATCHDOG_MAX_SKEW_US" if max_skew_us is not None else "the era's default",
           "attempts_from": None, "params": params, "reason": None}
    if rules is None:
        lim["reason"] = "no rules for this kernel"
        return lim
    legacy = (rules.get("retries") or {}).get("legacy_param") if isinstance(rules.get("retries"), dict) else None
    retries = (params or {}).get(legacy) if legacy else None
    try:
        n = kernels.limits(rules, max_skew_us=max_skew_us, online_cpus=online, watchdog=watchdog or "hpet",
                           max_cswd_read_retries=retries if isinstance(retries, int) else None)
    except (ValueError, KeyError, TypeError, AttributeError, IndexError) as e:
        lim["reason"] = "the table's arithmetic failed on this host's figures: %s" % cut(e)
        return lim
    for k in ("readout_limit_ns", "attempts", "skew_margin_ns", "wd_wd_skip_ns", "freq_ppm", "max_skew_us"):
        lim[k] = n.get(k)
    lim["slow_readout_marks_unstable"] = {"marked-unstable": True, "reported": False}.get(n.get("all_slow"))
    r = rules.get("retries") or {}
    if "fixed_attempts" in r:
        lim["attempts_from"] = "fixed by the era (%s)" % r.get("note", "")
    elif isinstance(retries, int):
        lim["attempts_from"] = "clocksource.%s=%d + 1 (this kernel's parameter)" % (legacy, retries)
    elif online:
        lim["attempts_from"] = "%s, with %d online CPUs, + 1" % (r.get("formula", "the era's rule"), online)
    else:
        lim["attempts_from"] = "not known: the online CPUs were not read"
    return lim


def near_misses(log):
    """The watchdog's near misses in one boot's log (its kmsg.summarize()),
    counted by kind, and its verdict if it gave one."""
    if log is None:
        return {"total": None, "by_kind": {}, "lines": [], "verdict": None, "verdict_line": None,
                "reason": "kernel log not read"}
    return {"total": sum(log["near_misses"].values()), "by_kind": log["near_misses"], "lines": log["near_miss_lines"],
            "verdict": log["verdict"], "verdict_line": log["verdict_line"], "reason": None}



def watchdog_report(a, f):
    """The report's "watchdog" object (its fields: the module's README
    of this command, --help), from the facts f (healthcollect.gather) and
    their kernel's figures (f["kernel"])."""
    k, flags, avail, rules, nodes = f["kernel"], f["flags"], f["avail"], f["kernel"]["rules"], f["kernel"]["nodes"]
    tsc_vals = cmdline_options(f["cmdline"])[1]
    w = {"watched": None, "why": None, "by": None, "rule": None,
         "working": {"kernel": k["release"], "kernel_version": k["version"], "cmdline_tsc": tsc_vals,
                     "cpu_flags": {x: flags.get(x) for x in FLAGS_RULE + ("tsc_reliable",)} if flags else None,
                     "numa_nodes": nodes, "packages": packages(f["cpuinfo"]), "online_cpus": k["online"],
                     "available": avail, "current": f["cur"], "would_watch": would_watch(avail, rules)[1],
                     "kconfig": k["kconfig"], "max_skew_us": k["max_skew"]},
         "rules": {"source": cite(rules), "era": rules.get("id") if rules else None, "known": rules is not None,
                   "exact": rules.get("exact") if rules else None, "varies": (rules.get("varies") or [])[:4] if rules else [],
                   "reason": k["rules_why"]},
         "limits": None, "near_misses": near_misses(f["log"]), "risk": None}
    watched(w, rules, tsc_vals, flags or None, {"nodes": nodes, "packages": w["working"]["packages"]}, avail)
    w["limits"] = limits(rules, k["params"], k["online"], k["max_skew"], w["by"] or w["working"]["would_watch"])
    lim = w["limits"]
    # The readout is measured even for an unwatched TSC: its margin is what
    # tsc=watchdog, or the next kernel's rules, would live with.
    ro, ro_src, ro_why = readout(a, f["recorded"], lim["readout_limit_ns"])
    marks = lim["slow_readout_marks_unstable"] is not False
    r = risk.assess(ro if ro is not None else {"unavailable": ro_why}, lim["readout_limit_ns"], lim["attempts"],
                    marks_unstable=marks, watched=w["watched"] != "no")
    if w["watched"] == "no":
        r["if_watched"] = risk.assess(ro, lim["readout_limit_ns"], lim["attempts"], marks_unstable=marks)["verdict"] \
            if ro is not None else None
    if w["watched"] == "unknown" and r["verdict"] != "unavailable":
        r["notes"].append("whether the TSC is watched is not known: this is the risk if it is")
    r["readout_source"] = ro_src
    r["readout_unavailable"] = ro_why if ro is None else ro.get("unavailable")
    r["readout"] = {k: ro.get(k) for k in ("device", "how", "samples", "cpu", "load", "limit_ns", "ns", "over_limit",
                                           "runs_over_limit", "interrupted")} if ro else None
    w["risk"] = r
    return w


def tsc_options(cmdline, summary):
    """Every tsc= option in order, and what the kernel did with them: it
    applies each one (tsc_setup() runs for every tsc= given), so
    'tsc=reliable tsc=unstable' both act and the unstable one marks the TSC
    unstable, which its own line says."""
    vals = [v for x in cmdline_options(cmdline)[1] for v in x.split(",")]
    if not vals:
        return vals, None
    note = "the kernel applies every tsc= option given"
    if "unstable" in vals:
        if summary["why"] == "cmdline":
            note += "; tsc=unstable marked the TSC unstable (the kernel log: %s)" % cut(summary["line"], 120)
        elif "reliable" in vals:
            note += "; tsc=unstable marks the TSC unstable whatever tsc=reliable says"
    return vals, note



# What a recorded log is, in the report.
PASTE_NOTE = "a recorded log is another host's statement, not this machine's kernel: evidence of what its author copied"


def report(a, f):
    """The report (schema load.SCHEMA_HEALTH, clockbench-health/1) of the facts f
    (healthcollect.gather), judged."""
    recorded, said, log, vms, mach = f["recorded"], f["said"], f["log"], f["vms"], f["machine"]
    cause, detail, evidence, opts, summary = classify(f["cur"], f["avail"], f["cmdline"], log, f["log_problem"])
    # The one rule, each VM counted by its state (heal.judge's, from the
    # records), and a recorded log's periods off tsc (every VM running
    # across one lost the bit).
    last = [{"ok": True, "lost": False, "booted_off": "booted_off"}.get(v["state"])
            for v in (vms.get("observed") or {}).values()]
    state, state_why = health.judge(mach["guest"], f["cur"], f["path"], f["flags"], last if vms.get("observed") else None)
    # A hypervisor's recorded log (a guest's own switches take no VM's bit).
    crossed = across_switch(log) if recorded and not mach["guest"] else []
    if crossed:
        state_why += ("; the log shows the host off tsc from %.1f s to %.1f s: every VM running across that lost the "
                      "stable bit until paused and resumed (clockbench heal on that host)" % tuple(crossed[-1]))
        if state == "healthy":
            state = "degraded"
    wd = watchdog_report(a, f)
    tsc_vals, tsc_note = tsc_options(f["cmdline"], summary)
    healthy = state == "healthy"
    return {
        "schema": load.SCHEMA_HEALTH,
        "healthy": healthy,
        "state": state, "state_why": state_why,
        "machine": mach,
        "sources": dict(said, log=f["log_source"] or ("not given" if recorded else None),
                        probe="recorded: %s" % cut(a.probe, 80) if a.probe else None if recorded else "this machine"),
        "clocksource": {"current": f["cur"], "available": f["avail"]},
        "tsc_flags": f["flags"],
        "firmware": [cut(summary["firmware"].strip(), 200)] if summary["firmware"] else [],
        "kernel_cmdline": {"tsc": opts.get("tsc"), "clocksource": opts.get("clocksource"),
                           "tsc_all": tsc_vals, "tsc_note": tsc_note, "from": f["cmdline_from"]},
        "cause": cause, "cause_text": CAUSES[cause], "cause_detail": detail,
        "cause_line": summary["line"], "cause_consequences": summary["consequences"],
        "advice": healthadvice.advise(cause, healthy, mach["guest"]),
        "kernel_log": {"source": f["log_source"], "evidence": evidence, "format": summary["format"],
                       "note": PASTE_NOTE if a.log else None, "warnings": summary["warnings"],
                       "unsure": summary["unsure"]},
        "tsc_check": f["tsc"], "tsc_check_note": f["tsc_problem"],
        "clock_read_path": f["path"], "clock_read_path_note": f["path_note"],
        "kvm": vms,
        "vms_lost_stable_bit": vms.get("lost_count"),
        "off_tsc_periods_ended": crossed,
        "watchdog": wd,
        "boots": f["boots"],
        "could_not_read": f["could_not"],
    }
