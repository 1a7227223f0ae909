#!/usr/bin/python3
# tier: fast
# test-timeout: 600
"""kernel-records.t: text a user puts inside a kernel record (a crashing program's file name in its segfault record)
never starts a line or a record of its own, for each character that could (CR, VT, FF, NEL, U+2028, U+2029, and NUL
and ESC) and each reader: health live (a stand-in /dev/kmsg, then the journal's JSON), health recorded
(--log, --boots), the watch, the lab's assertions (and its capture inside L1), and make bench's health step
(compare's health).  Stand-ins forge a real clock phrase (a file misleads no one): the verdict must not change.
Where this machine lets the test crash a program of its own as an unprivileged user, it does so on the real kernel
with a marker of its own (no clock phrase) and reads it back through the live readers (TAP)."""
import json
import os
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts")]
from taplib import Tap  # noqa: E402

t = Tap()
os.chmod(t.tmp, 0o755)  # a program in it is run as nobody below
HC = os.path.join(ROOT, "host-scripts", "health")
CHARS = [("CR", "\r"), ("VT", "\x0b"), ("FF", "\x0c"), ("NEL", "\x85"), ("U+2028", "\u2028"), ("U+2029", "\u2029"),
         ("NUL", "\x00"), ("ESC", "\x1b")]
# What a forger wants read as the kernel's: a warp at boot (cause boot_warp).
FORGED = "tsc: Marking TSC unstable due to check_tsc_sync_source failed"
SWITCH = "clocksource: Switched to clocksource tsc"  # the stand-ins' one true line: the source was read


def stamp(i):
    return "[  326.44444%d]" % i


def crash_text(i, ch, tail=FORGED):
    """The segfault record's text for a program named "cbt" CH STAMP TAIL
    (its comm, 15 bytes, first; its file name at the end)."""
    name = "cbt" + ch + stamp(i) + " " + tail
    return "%s[4242]: segfault at 0 ip 0000000000401000 sp 00007ffd00000000 error 6 in %s[401000+1000]" % (
        name.encode()[:15].decode("utf-8", "ignore"), name)


def forged(lines, i):
    """Lines (or evidence) of which one begins with the forged stamp i (past blanks)."""
    return [x for x in lines if x.lstrip(" \t").startswith(stamp(i))]


def put(path, text, mode="w"):
    with open(path, mode, **({} if "b" in mode else {"newline": ""})) as f:
        f.write(text)
    return path


cs = os.path.join(t.tmp, "cs")
os.mkdir(cs)
put(os.path.join(cs, "current_clocksource"), "hpet\n")
put(os.path.join(cs, "available_clocksource"), "tsc hpet\n")


def dmesg_text(recs):
    """dmesg's rendering of (usec, text) records: the text raw."""
    return "".join("[%5d.%06d] %s\n" % (us // 10 ** 6, us % 10 ** 6, x) for us, x in recs)


def kmsg_text(recs):
    """A stand-in /dev/kmsg: each record's first line, its text raw (the kernel would have escaped it: worse)."""
    return "".join("6,%d,%d,-;%s\n" % (n, us, x) for n, (us, x) in enumerate(recs))


def journal_text(recs):
    """journalctl -o json: one entry a line; MESSAGE as text (U+2028 raw, as systemd writes it) or as bytes."""
    out = []
    for n, (us, x) in enumerate(recs):
        m = x if n % 2 else list(x.encode())
        out.append(json.dumps({"_TRANSPORT": "kernel", "MESSAGE": m, "_SOURCE_MONOTONIC_TIMESTAMP": str(us)},
                              ensure_ascii=False))
    return "\n".join(out) + "\n"


def records(i, ch):
    return [(100000, SWITCH), (262307530, crash_text(i, ch))]


def fakes(where, recs):
    """A bin folder with a stand-in dmesg and journalctl printing recs (as the older readers ran them), and a
    stand-in /dev/kmsg; returns (bin, kmsg)."""
    b = os.path.join(where, "bin")
    os.makedirs(b, exist_ok=True)
    put(os.path.join(where, "dmesg.txt"), dmesg_text(recs))
    put(os.path.join(where, "journal.json"), journal_text(recs))
    put(os.path.join(b, "dmesg"), "#!/bin/sh\ncat '%s/dmesg.txt'\n" % where)
    put(os.path.join(b, "journalctl"), "#!/bin/sh\ncase \"$*\" in *json*) cat '%s/journal.json' ;; *) cat '%s/dmesg.txt' ;; esac\n"
        % (where, where))
    for n in ("dmesg", "journalctl"):
        os.chmod(os.path.join(b, n), 0o755)
    return b, put(os.path.join(where, "kmsg"), kmsg_text(recs))


def health_check(args, **env):
    e = dict(os.environ, **env)
    p = subprocess.run([HC, "--format", "json", "--no-tsc-check", "--trace-seconds", "0", "--watchdog-seconds", "0",
                        "--cs-dir", cs] + args, capture_output=True, text=True, env=e, timeout=120)
    try:
        return json.loads(p.stdout), p
    except ValueError:
        return None, p


def judged(doc, p, i):
    """Why health's report took the record's text for lines of their own (None when it did not)."""
    if doc is None:
        return "no report: %s" % p.stderr[-300:]
    ev = doc["kernel_log"]["evidence"]
    if doc["cause"] == "boot_warp" or forged(ev, i) or forged([doc["cause_line"] or ""], i):
        return "forged: cause %s, evidence %r" % (doc["cause"], ev)
    if not any(SWITCH in x for x in ev):
        return "the source was not read (no switch line): %r, %s" % (ev, doc["kernel_log"]["source"])
    return None


# health live: a stand-in /dev/kmsg (CB_KMSG), then the journal's JSON
# (no /dev/kmsg); the older live readers (dmesg, journalctl -o
# short-monotonic, split with splitlines()) stand by on PATH.
for i, (what, ch) in enumerate(CHARS):
    d = os.path.join(t.tmp, "live-%d" % i)
    os.mkdir(d)
    b, kmsg = fakes(d, records(i, ch))
    path = b + ":" + os.environ["PATH"]
    doc, p = health_check(["--live-log"], CB_KMSG=kmsg, PATH=path)
    why = judged(doc, p, i)
    t.ok(why is None and doc["kernel_log"]["source"] == kmsg,
         "health live, /dev/kmsg: a %s in a record's text starts no line" % what, why or doc["kernel_log"])
    doc, p = health_check(["--live-log"], CB_KMSG=os.path.join(d, "no-kmsg"), PATH=path)
    why = judged(doc, p, i)
    t.ok(why is None and doc["kernel_log"]["source"].startswith("journalctl"),
         "health live, the journal's JSON: a %s in a record's text starts no line" % what,
         why or doc["kernel_log"])

# health recorded: --log FILE and --boots DIR, text split on LF alone.
boots = os.path.join(t.tmp, "boots")
os.mkdir(boots)
for i, (what, ch) in enumerate(CHARS):
    log = put(os.path.join(boots, "%d.log" % i), dmesg_text(records(i, ch)))
    doc, p = health_check(["--log", log])
    why = judged(doc, p, i)
    t.ok(why is None, "health --log: a %s in a line starts no line of its own" % what, why)
doc, p = health_check(["--boots", boots])
bs = (doc or {}).get("boots", {}).get("boots", [])
for i, (what, ch) in enumerate(CHARS):
    x = next((x for x in bs if x["boot"] == "%d.log" % i), {})
    t.ok(x.get("tsc") == "kept" and not forged([x.get("line") or ""], i),
         "health --boots: a %s in a line starts no line of its own (the boot kept the TSC)" % what,
         "%r %s" % (x, p.stderr[-200:]))

# The watch: its reader (Source, drain) on a stand-in /dev/kmsg of records
# and one of dmesg's lines, as its test hook takes them.
from cbhost import watch  # noqa: E402
for i, (what, ch) in enumerate(CHARS):
    bad = []
    for form, text in (("records", kmsg_text), ("lines", dmesg_text)):
        f = put(os.path.join(t.tmp, "watch-%d-%s" % (i, form)), text(records(i, ch)))
        w = watch.Watch(t.tmp, 1.0, trace=False, once=True)
        w.kmsg = watch.Source(f, watch.MAX_RECORD)
        w.drain()
        w.kmsg.close()
        ev = w.state.events
        if w.state.unstable is not None or ev["unstable"] or ev["switched"] != 1:
            bad.append("%s: unstable %s, events %s" % (form, w.state.unstable, {k: v for k, v in ev.items() if v}))
    t.ok(not bad, "the watch: a %s in a record's text starts no record (records and lines)" % what, "\n".join(bad))

# The lab's assertions: state 1 expects L1 on a stable TSC; its kernel log
# (the boot's, with state 2) gains a crash record, as dmesg printed it (older labs) and as
# l1-run.sh now captures it (/dev/kmsg's records, one a line).
LABFX = os.path.join(ROOT, "tests", "host-scripts", "fixtures", "lab")
for i, (what, ch) in enumerate(CHARS):
    bad = []
    for form in ("dmesg", "records"):
        d = os.path.join(t.tmp, "lab-%d-%s" % (i, form))
        shutil.copytree(LABFX, d)
        with open(os.path.join(d, "l1-1-2.dmesg.txt"), newline="") as f:
            base = f.read()
        if form == "records":  # the same log, captured as records
            base = "".join("6,%d,%d,-;%s\n" % (n, int(float(x[1:x.index("]")]) * 1e6), x[x.index("]") + 2:])
                           for n, x in enumerate(base.split("\n")) if x.startswith("["))
        add = records(i, ch)[1:]
        put(os.path.join(d, "l1-1-2.dmesg.txt"), base + (kmsg_text(add) if form == "records" else dmesg_text(add)))
        p = subprocess.run([sys.executable, os.path.join(ROOT, "lab", "assert.py"), d, "1,2"], capture_output=True,
                           text=True, timeout=120)
        mine = [x for x in p.stdout.splitlines() if "state 1: L1's TSC" in x]
        if len(mine) != 1 or not mine[0].startswith("ok"):
            bad.append("%s: %s" % (form, mine or p.stdout[-300:] + p.stderr[-300:]))
    t.ok(not bad, "the lab's assertions: a %s in L1's kernel log starts no line (dmesg's text and records)" % what,
         "\n".join(bad))

# make bench's health step: compare runs health, live (its test hook
# CB_HEALTH_ARGS adds --live-log beside the fake clocksource folder),
# into health.json; every character's record in one log.
SLOW = "slow" in os.environ.get("CB_TIERS", "slow").split(",")  # a real (tiny) measuring run: the slow tier's
if SLOW and os.access(os.path.join(ROOT, "bench", "clockbench"), os.X_OK):
    d = os.path.join(t.tmp, "bench")
    os.mkdir(d)
    recs = [(100000, SWITCH)] + [(262307530 + i, crash_text(i, ch)) for i, (_, ch) in enumerate(CHARS)]
    b, kmsg = fakes(d, recs)
    put(os.path.join(d, "kvm"), "")
    e = dict(os.environ, PATH=b + ":" + os.environ["PATH"], CB_KMSG=kmsg, CB_CS_DIR=cs, CB_STATE_DIR=d + "/state",
             CB_KVM_DEV=d + "/kvm", CB_HEALTH_ARGS="--live-log")
    p = subprocess.run([os.path.join(ROOT, "host-scripts", "bench"), "--no-guest", "--duration", "0.02", "--threads",
                        "1", "--clocks", "monotonic", "--methods", "vdso", "--clocksources", "hpet",
                        "--tsc-rate-seconds", "0", "--workloads", "none", "--report-out", d + "/report", d + "/results",
                        "r1"], capture_output=True, text=True, env=e, timeout=300)
    try:
        with open(os.path.join(d, "results", "r1", "health.json")) as f:
            h = json.load(f)
    except (OSError, ValueError) as x:
        h = None
        p.stderr += "\nhealth.json: %s" % x
    for i, (what, ch) in enumerate(CHARS):
        why = judged(h, p, i) if h else "no health.json: %s" % (p.stdout + p.stderr)[-400:]
        t.ok(why is None and h["kernel_log"]["source"] == kmsg,
             "make bench's health step (compare's health, live): a %s starts no line" % what, why)
else:
    for what, _ in CHARS:
        t.skip("make bench's health step, %s: %s" % (what, "bench/clockbench not built (run make)" if SLOW else
                                                     "a measuring run: the slow tier's (CB_TIERS)"))


# The real kernel: a program of the test's own, named with each character,
# a stamp and a marker (no clock phrase: no other reader is misled),
# crashes as an unprivileged user; its segfault record is read back through
# the live readers: health's (klog), the watch's Source, the lab's
# capture (python3 -m cbcontract.klog) read as assert.py reads it.
def real_kernel():
    """(None, how to run as a user) or (why not, None)."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return "no C compiler to build the crashing program", None
    try:
        with open("/proc/sys/debug/exception-trace") as f:
            if f.read().strip() != "1":
                return "debug.exception-trace=0: the kernel prints no segfault record", None
    except OSError:
        return "no /proc/sys/debug/exception-trace", None
    if os.geteuid() != 0:
        return None, []
    setpriv = shutil.which("setpriv")
    if not setpriv:
        return "root, and no setpriv to run the program as nobody", None
    import pwd
    try:
        pw = pwd.getpwnam("nobody")
    except KeyError:
        return "root, and no user nobody", None
    return None, [setpriv, "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid, "--clear-groups", "--"]


def live_records():
    """(the live reader's Records as a list, which, why not): /dev/kmsg, else the journal (health's order)."""
    from cbcontract import klog, names
    try:
        return list(klog.kmsg_records(names.KMSG_DEV)), names.KMSG_DEV, None
    except OSError as e:
        why = "%s: %s" % (names.KMSG_DEV, e.strerror)
    j = klog.Journal(["journalctl", "-k", "-b", "--no-pager", "-o", "json"])
    recs = list(j.records())
    return (recs, "journalctl", None) if recs else (None, None, why + "; journalctl: no kernel entries")


why, runas = real_kernel()
REAL = [(w, c) for w, c in CHARS if w != "NUL"]  # a file name holds no NUL
if why is None:
    token = "cbtest-%d-%d" % (os.getpid(), int(time.time()))
    marker = "%s marker of clockbench's tests, not a kernel line" % token
    src = put(os.path.join(t.tmp, "crash.c"), "int main(void) { *(volatile int *)0 = 0; return 0; }\n")
    exe = os.path.join(t.tmp, "crash")
    subprocess.run([shutil.which("cc") or "gcc", "-O0", "-o", exe, src], check=True, capture_output=True)

    def crash(i, ch):
        name = os.path.join(t.tmp, "cbt%s%s %s %d" % (ch, stamp(i), marker, i))
        shutil.copy(exe, name)
        os.chmod(name, 0o755)
        subprocess.run(runas + [name], capture_output=True, timeout=30)
    for i, (what, ch) in enumerate(REAL):
        crash(i, ch)
        time.sleep(0.6)  # the kernel rate-limits segfault records (printk_ratelimit: 10 in 5 s)
    recs, source, why = live_records()
    if recs is not None:
        missing = [i for i, _ in enumerate(REAL) if not any("%s %d[" % (marker, i) in r.text for r in recs)]
        if missing:  # rate-limited by another crash on this machine: once more, later
            time.sleep(5)
            for i in missing:
                crash(i, REAL[i][1])
                time.sleep(0.6)
            recs, source, why = live_records()
if why is None:
    from cbcontract import klog
    cap = None
    if source != "journalctl":
        p = subprocess.run([sys.executable, "-m", "cbcontract.klog"], capture_output=True, timeout=60,
                           env=dict(os.environ, PYTHONPATH=os.path.join(ROOT, "contract")))
        cap = klog.text_lines(p.stdout.decode("utf-8", "replace"))
    w = watch.Watch(t.tmp, 1.0, trace=False, once=True)
    wsrc = watch.Source(source, watch.MAX_RECORD) if source != "journalctl" else None
    wrecs = wsrc.lines(1 << 30) if wsrc else None
    for i, (what, ch) in enumerate(REAL):
        key = "%s %d[" % (marker, i)
        mine = [r for r in recs if key in r.text]
        if not mine:
            t.skip("the real kernel, %s: no segfault record of the test's program (rate-limited?)" % what)
            continue
        bad = []
        if len(mine) != 1 or "segfault" not in mine[0].text:
            bad.append("%d records hold the marker: %r" % (len(mine), [r.text for r in mine]))
        lines = [r.line.split("] ", 1)[-1] for r in recs]
        if forged(lines, i) or [x for x in lines if x.startswith(token)]:
            bad.append("health's reader (%s): a record begins with the forged stamp or the marker" % source)
        if cap is not None:
            held = [x for x in cap if key in x]
            if len(held) != 1 or forged([x.split(";", 1)[-1] for x in cap], i):
                bad.append("the lab's capture: %r" % held)
        if wrecs is not None:
            held = [x for x in wrecs if key in x]
            if len(held) != 1 or forged([x.split(";", 1)[-1] for x in wrecs], i):
                bad.append("the watch's Source: %r" % held)
        t.ok(not bad, "the real kernel (%s): a %s in a crashing program's file name starts no record or line "
             "in health's reader%s%s" % (source, what, ", the lab's capture" if cap is not None else "",
                                              ", the watch" if wrecs is not None else ""), "\n".join(bad))
    if wsrc:
        wsrc.close()
else:
    for what, _ in REAL:
        t.skip("the real kernel, %s: %s" % (what, why))
t.skip("the real kernel, NUL: a file name cannot hold one (the stand-ins above carry it)")


# The real kernel, LF (issue 44): a program named with a LF, a stamp and a
# marker of the test's own crashes as an unprivileged user; dmesg (and the
# journal's text, where it holds the kernel's records) print the rest of
# its record indented, on lines of their own.  The paste reader, given
# that text as a user would paste it, reads those lines as the record's
# continuation, never as records; and with the marker replaced by a clock
# phrase (the real text's shape, a forger's words) the verdict is unchanged.
def lf_captures():
    """[(what, text)] of the tools that print this boot's records as text, or (None, why not)."""
    out, why = [], []
    for argv in (["dmesg"], ["journalctl", "-k", "-b", "--no-pager", "-o", "short-monotonic"],
                 ["journalctl", "-k", "-b", "--no-pager", "-o", "short"]):
        if not shutil.which(argv[0]):
            why.append("%s: not installed" % argv[0])
            continue
        p = subprocess.run(argv, capture_output=True, timeout=60)
        text = p.stdout.decode("utf-8", "replace")
        if p.returncode != 0 or "segfault" not in text:
            why.append("%s: %s" % (" ".join(argv[:4]), (p.stderr.decode("utf-8", "replace").strip() or
                                                        "no segfault records")[:80]))
            continue
        out.append((" ".join(argv[:1] + argv[-2:] if argv[0] == "journalctl" else argv), text))
    return out, "; ".join(why)


why, runas = real_kernel()
LF_VERDICT = "clocksource: timekeeping watchdog on CPU1: Marking clocksource 'tsc' as unstable because the skew is too large:"
if why is None:
    from cbcontract import klog, kmsg
    token = "cblf-%d-%d" % (os.getpid(), int(time.time()))
    marker = "%s marker of clockbench's tests, not a kernel line" % token
    src = put(os.path.join(t.tmp, "crash-lf.c"), "int main(void) { *(volatile int *)0 = 0; return 0; }\n")
    exe = os.path.join(t.tmp, "crash-lf")
    subprocess.run([shutil.which("cc") or "gcc", "-O0", "-o", exe, src], check=True, capture_output=True)
    name = os.path.join(t.tmp, "cbx\n[  950.000000] %s" % marker)
    shutil.copy(exe, name)
    os.chmod(name, 0o755)
    subprocess.run(runas + [name], capture_output=True, timeout=30)
    time.sleep(1)
    caps, why_not = lf_captures()
    caps = [(w, x) for w, x in caps if marker in x]
    if not caps:
        t.skip("the real kernel, LF: no text of the test's segfault record (%s)" % (why_not or "rate-limited?"))
    for what, text in caps:
        lines = klog.text_lines(text)
        seen, _ = kmsg.read_paste(lines)
        mine = [r for r in seen if token in r.text]
        starts = [r for r in seen if not r.continuation and (r.text.startswith(token) or "950.000000" in r.text[:16])]
        at = next(i for i, x in enumerate(lines) if marker in x)
        first = max(i for i in range(at + 1) if lines[i][:1] not in (" ", "\t"))
        rec = lines[first:at + 1]
        forged = ["[    1.000000] clocksource: Switched to clocksource tsc"] + [x.replace(marker, LF_VERDICT) for x in rec]
        s = kmsg.summarize(forged, recorded=True)
        log = put(os.path.join(t.tmp, "lf-%d.log" % len(what)), "\n".join(forged) + "\n")
        doc, p = health_check(["--log", log])
        bad = []
        if not mine or not all(r.continuation for r in mine) or starts:
            bad.append("marker lines %r, records starting with it %r" % (mine, starts))
        if s["tsc"] != "kept" or doc is None or doc["cause"] not in ("unknown", "by_hand") or doc["cause_line"]:
            bad.append("forged: %s, %s" % (s["tsc"], doc and (doc["cause"], doc["cause_line"])))
        t.ok(not bad, "the real kernel, %s: a LF in a crashing program's name continues its record (%d lines), "
             "never a record; with a clock phrase in its place, no verdict" % (what, len(rec)),
             "\n".join(bad + rec))
else:
    t.skip("the real kernel, LF: %s" % why)
sys.exit(t.done())
