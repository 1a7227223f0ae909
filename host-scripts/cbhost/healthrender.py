"""healthrender.py: clockbench health's report on a screen, and its --help.

Everything shown comes from the report (healthjudge.report), the JSON's
fields, and the facts it was made of; log text is data: util.printable,
line by line, so no escape reaches the terminal.  --help is the command's own doc.
"""
from cbcontract import kmsg, names
from cbcontract.util import printable

from . import healthadvice



def help_text(doc, prog):
    """--help (the command's doc after its summary) under the name it was run by, the kernel's folder named."""
    return doc.split("\n\n", 1)[1].strip().replace("Usage: health ", "Usage: %s " % prog, 1).replace(" CS_SYSFS\n", " %s\n" % names.CS_SYSFS)


def watchdog_lines(w):
    """The text lines of the watchdog section, its risk last."""
    out = []
    wk = w["working"]
    fl = wk["cpu_flags"]
    out.append("  watchdog: TSC watched: %s (%s)" % (w["watched"], w["why"]))
    out.append("    working: kernel %s; tsc=%s; %s; NUMA nodes %s; online CPUs %s; would watch: %s" % (
        wk["kernel"] or "unknown", ",".join(wk["cmdline_tsc"]) or "(unset)",
        "flags " + ", ".join("%s %s" % (f, "yes" if v else "no") for f, v in fl.items()) if fl else "CPU flags not read",
        wk["numa_nodes"] if wk["numa_nodes"] is not None else "unknown",
        wk["online_cpus"] if wk["online_cpus"] is not None else "unknown",
        "%s%s" % (wk["would_watch"], "" if w["by"] else " (if it were watched)") if wk["would_watch"] else "nothing"))
    if w["rule"]:
        out.append("    rule: %s" % w["rule"])
    lim = w["limits"]
    if w["rules"]["known"] and lim["reason"] is None:
        out.append("    limits (%s%s): readout limit %s, %s attempts a tick (%s); an all-slow tick %s; skew margin %s" % (
            w["rules"]["source"], "; not exact for this sublevel" if w["rules"]["exact"] is False else "",
            "%d ns" % lim["readout_limit_ns"] if lim["readout_limit_ns"] else "unknown",
            lim["attempts"] or "unknown", lim["attempts_from"],
            {True: "marks the TSC unstable", False: "is only reported", None: "does what the table does not say"}[
                lim["slow_readout_marks_unstable"]],
            "%d ns" % lim["skew_margin_ns"] if lim["skew_margin_ns"] else "unknown"))
        if lim["max_skew_us"] is not None:
            out.append("      from WATCHDOG_MAX_SKEW %d us (%s)" % (lim["max_skew_us"], lim["max_skew_from"]))
    else:
        out.append("    limits: unknown (%s)" % (w["rules"]["reason"] or lim["reason"]))
    if lim["params"] is not None:
        out.append("    clocksource parameters: %s" % (", ".join("%s=%s" % kv for kv in lim["params"].items()) or "none"))
    nm = w["near_misses"]
    if nm["total"] is None:
        out.append("    near misses in this boot's log: not known (%s)" % nm["reason"])
    else:
        out.append("    near misses in this boot's log: %s%s" % (
            ", ".join("%d %s" % (c, kmsg.TEXT.get(k, k)) for k, c in nm["by_kind"].items()) or "none",
            "; verdict: %s" % kmsg.TEXT.get(nm["verdict"], nm["verdict"]) if nm["verdict"] else ""))
        for line in nm["lines"][:4] + ([nm["verdict_line"]] if nm["verdict_line"] else []):
            out.append("      %s" % line)
    return out + risk_lines(w["risk"])


def risk_lines(r):
    """The text lines of the watchdog's risk (none when there is none)."""
    out = []
    if r:
        if r["verdict"] in ("unavailable", "unwatched"):
            out.append("    risk: %s (%s)" % (r["verdict"], r["reason"]))
            if r["verdict"] == "unwatched":
                out.append("      its readout: %s" % ("unavailable (%s)" % r["readout_unavailable"]
                                                     if r["readout_unavailable"] else "if it were watched: %s" % r.get("if_watched")))
        else:
            fa = r["false_alarms_per_host_year"]
            out.append("    risk: %s (readout %s: %s%.3g%% over the %d ns limit; all %d attempts slow: %s measured, "
                       "%.3g if independent; false alarms a host-year: %s measured, %.3g if independent)" % (
                           r["verdict"], r["readout_source"], "" if r["share_from"] == "measured" else "at most ",
                           100 * r["share_over_limit"], r["limit_ns"], r["attempts"],
                           "%.3g" % r["p_tick_measured"] if r["p_tick_measured"] is not None else "n/a",
                           r["p_tick_independent"], "%.3g" % fa["measured"] if fa["measured"] is not None else "n/a",
                           fa["independent"]))
            for n in r["notes"]:
                out.append("      %s" % n)
    return out


def boots_lines(b):
    """The text lines of the boots section."""
    out = []
    if b["summary"]:
        out.append("  boots (%s): %s" % (b["source"], b["summary"]))
        fmts = sorted({x["format"] for x in b["boots"] if x.get("format")})
        if fmts:
            out.append("    read as: %s%s (recorded logs: evidence of what their author copied)" % (
                "; ".join(fmts[:3]), "; ..." if len(fmts) > 3 else ""))
        notes = list(dict.fromkeys(n for x in b["boots"] for n in x.get("warnings") or ()))
        for n in notes[:4]:
            out.append("    note: %s" % n)
        shown = [x for x in b["boots"] if x["tsc"] == "lost" or x.get("near_misses")]
        for x in shown[:8]:
            if x["tsc"] == "lost":
                what = "lost the TSC%s: %s%s" % (" at %.3f s" % x["at_s"] if x.get("at_s") is not None else "",
                                                 kmsg.WHY_TEXT.get(x["why"], x["why"]),
                                                 " (%d cycles)" % x["cycles"] if x.get("cycles") else
                                                 " (%s)" % x["reason"] if x.get("reason") else "")
            else:
                what = "kept the TSC" if x["tsc"] == "kept" else x["tsc"]
            if x.get("near_misses"):
                what += "; near misses: %s" % ", ".join("%d %s" % (c, kmsg.TEXT.get(k, k))
                                                        for k, c in x["near_misses"].items())
            if x.get("unsure"):
                what += " (not sure: %s; give the raw log)" % x["unsure"]
            out.append("    boot %s: %s" % (x["boot"], what))
            if x["tsc"] == "lost" and x.get("line") and x["why"] != "boot_warp":
                out.append("      %s" % x["line"])
            for l in (x.get("consequences") or [])[:2] if x["tsc"] == "lost" else ():
                out.append("      then, its consequence: %s" % l)
        if len(shown) > 8:
            out.append("    (%d more boots with something to say: --format json lists every boot)" % (len(shown) - 8))
        for x in [x for x in b["boots"] if "near_misses" not in x][:3]:
            out.append("    boot %s: not read (%s)" % (x["boot"], x["reason"]))
    else:
        out.append("  boots: not read (%s)" % b["reason"])
    return out


def head_lines(r, f):
    """The state, the machine, the clocksource and why it is off the TSC,
    the TSC flags, the firmware, the command line and the kernel log."""
    mach, cs, said, kc, kl = r["machine"], r["clocksource"], r["sources"], r["kernel_cmdline"], r["kernel_log"]
    out = []
    role = ("a guest of %s" % (mach["hypervisor"] or "an unnamed hypervisor") if mach["guest"] else
            "a host" if mach["guest"] is False else "not known whether a guest or a host")
    out.append("clock health: %s (%s)\n" % (r["state"].upper(), r["state_why"]))
    out.append("  machine: %s (%s)\n" % (role, "; ".join(mach["evidence"]) or "no evidence read"))
    out.append("  clocksource: %s (available: %s) [%s]\n" % (cs["current"] or "not read", " ".join(cs["available"])
                                                             or "none", said["cs_dir"]))
    if r["cause"] != "never_lost":
        out.append("  why off the TSC: %s%s\n" % (r["cause_text"], " (%s)" % r["cause_detail"] if r["cause_detail"] else ""))
        if r["cause_line"]:
            out.append("    the kernel's line: %s\n" % r["cause_line"])
        for line in r["cause_consequences"][:4]:
            out.append("    then, its consequence: %s\n" % line)
        if r["advice"]:
            out.append("    what to do: %s\n" % r["advice"])
    if r["tsc_flags"]:
        out.append("  TSC flags [%s]: %s\n" % (said["cpuinfo"], ", ".join("%s %s" % (k, "yes" if v else "no")
                                                                     for k, v in r["tsc_flags"].items())))
    firmware = (f["log"] or {}).get("firmware")
    if firmware:
        out.append("  firmware [the kernel log]: %s\n" % firmware.strip())
    if kc["from"]:
        out.append("  kernel command line [%s]: %s clocksource=%s%s\n" % (
            kc["from"], " ".join("tsc=%s" % v for v in kc["tsc_all"]) or "tsc=(unset)",
            kc["clocksource"] if kc["clocksource"] is not None else "(unset)",
            " (%s)" % kc["tsc_note"] if kc["tsc_note"] else ""))
    else:
        out.append("  kernel command line: not given\n")
    recorded = kl["note"] is not None  # a recorded log (--log) is noted as one
    out.append("  kernel log (%s%s): %s\n" % (kl["source"] or "unread", "; read as: %s" % kl["format"] if recorded else "",
                                              "%d relevant lines" % len(kl["evidence"]) if f["log"] is not None
                                              else "not read"))
    if recorded:
        out.append("    %s\n" % kl["note"])
        for x in kl["warnings"]:
            out.append("    note: %s\n" % x)
    for line in kl["evidence"]:
        out.append("    %s\n" % line)
    return out


def probe_lines(r):
    """The engine's TSC check, the path of a clock read, and the KVM VMs
    with their master clock."""
    out, tsc, vms, path = [], r["tsc_check"], r["kvm"], r["clock_read_path"]
    if tsc:
        out.append("  clockbench TSC check: %s; kernel: %s\n    %s\n" % (tsc["verdict"], tsc["kernel_verdict"],
                                                                    tsc["working"]))
    elif r["tsc_check_note"]:
        out.append("  clockbench TSC check: %s\n" % r["tsc_check_note"])
    out.append("  clock reads (CLOCK_MONOTONIC): %s\n" % (
        {"user": "answered in user space (vDSO)", "syscall": "a syscall each"}.get(path, path or "not known")
        + " (%s)" % r["clock_read_path_note"]))
    if vms["vms"]:
        out.append("  KVM VMs: %s\n" % ", ".join(vms["vms"]))
    for pid, v in (vms.get("observed") or {}).items():
        if v["events"]:
            out.append("    pid %s: master clock %s (hostclock %s), stable bit %s (%d updates with, %d without)%s\n" % (
                pid, {True: "on", False: "off", None: "n/a"}[v["master_clock"]], v["hostclock"],
                {True: "set", False: "clear", None: "n/a"}[v["stable_bit"]], v["stable_with"],
                v["stable_without"], "" if v["complete"] else
                "; incomplete trace (%s events lost): not trusted" % (v["lost"] or "some")
                if v["complete"] is False else "; trace completeness unknown"))
        out.append("    VM %s (pid %s): %s: %s\n" % (v["name"], pid, v["what"], v["advice"]))
    if vms.get("reason") and not r["machine"]["guest"]:
        out.append("  KVM master clock: %s\n" % vms["reason"])
    for x in vms.get("warnings") or ():
        out.append("  warning: %s\n" % x)
    return out


def text(r, f):
    """The report as the screen's text: every line printable."""
    out = head_lines(r, f) + probe_lines(r)
    out += [line + "\n" for line in watchdog_lines(r["watchdog"]) + boots_lines(r["boots"])]
    cost = healthadvice.cost(r["state"], r["machine"]["guest"], r["kvm"].get("lost_count"), r["clock_read_path"],
                             r["clock_read_path_note"])
    if cost:
        out.append("  %s\n" % cost)
    out += ["  could not read: %s\n" % c for c in r["could_not_read"]]
    return "\n".join(printable(x) for x in "".join(out).split("\n"))
