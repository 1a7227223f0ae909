"""sweep.py: `make bench`'s sweep (host-scripts/bench) in one process: settings, the plan, the rounds, every step, the screen.

host-scripts/bench starts main() inside the privileged bracket
(lib/clocksource.sh, cs_serve): that bash process is the only one that
switches the clocksource, owns the state file and is the parent of every
step's command; this one decides.  It reads each setting once, where it
enters (the options here; the host bench's by the engine's dry run, the
guest's by the guest launcher's own check, in this process), asks the
bracket for the run (begin: one sweep at a time, the VM guard), probes the
accelerator once, builds the plan once (plan(): every step in the order it
runs, written into the run folder as plan.json), says what the host is
(health, in this process), then runs the plan's steps: for each, the
bracket switches (enter), runs the host bench and the guest launcher as
its children (run), and puts the clocksource back (leave).  Then the
running-VM step, the line that says the clocksource is back, and the
summary with the screen (the report tool, a process).  Every message is
one line on stderr as "clockbench: ..."; usage errors exit 2.
"""
import contextlib
import io
import json
import os
import re
import runpy
import signal
import subprocess
import sys
import tempfile

import cbhost
from cbcontract import names, runfolder, settingtable
from cbcontract.util import bounded, cut
from . import accel, kvmtrace, launcher, msg, preflight, qemu, settings
from .msg import RunError, Usage

HERE = os.path.join(cbhost.TOP, "host-scripts")
# The defaults: 4 rounds (the [min, max] of 4 per-round ratios holds their
# median with probability 7/8; 6 rounds would reach 31/32, 96.9 %), of 50
# ms a cell, host and guest.  A round and clocksource costs some 9 s beyond
# its cells on a real host (the guest's boot and /init, the launcher, the
# steps' commands), so 4 rounds of 50 ms keep make bench about as long as
# one of 0.5 s did: some 2 min against 1 min 45 s for two clocksources.
# The defaults are packaging/settings's (the table says this too).
DEFAULTS = {r.name: r.default("bench") for r in settingtable.of("bench")}
# Its flags, each with the setting it sets (--no-guest: guest to False, the others to True).
FLAGS = {"-h": "help", "--help": "help", "--version": "version", "-q": "quiet", "--quiet": "quiet", "-v": "verbose",
         "--verbose": "verbose", "--no-guest": "guest", "--force": "force"}
# The guest launcher's options a step's are made of: bench's to set.
STEP_OPTIONS = ("--results", "--run-id", "--run-dir", "--clocksource", "--trace", "--check-only", "--probe-only",
                "--probed")
PROG = "bench"

USAGE = """\
Usage: {prog} [OPTION]... [RESULTS_DIR RUN_ID]
First health (read-only) into the run's health.json: host or guest,
healthy or not, why the host is off the TSC. Then in --rounds rounds, for
each clocksource the kernel offers (one is enough) in turn: switch to it, measure
the host (as clockbench bench-host does) and a guest with KVM's clock events
traced (as clockbench bench-guest does), check that each file measured what it is
named after, and switch back; then one screen: health's answer, the
verdict and the tables (no ratio where there is no tsc row to be the baseline)
(at most 100 columns; summary.md has them all), and where the report is.
Odd rounds take the clocksources in their order (tsc first), even rounds in
the reverse order, so that a drift of the machine over the run falls on
each alike; each round is kept whole in round-<N>/ of the run folder (one
round: the run folder itself); what was meant to run is the run folder's
plan.json. One Ctrl-C stops it, the clocksource put back. Progress: a line
a step; on a terminal the engine's is redrawn in place and gone when done.

Every setting is checked first, each by the command that uses it, before a
folder is made or anything switched: a bad one is one line and exit 2. One
bench at a time: a second one started while one runs is refused at once
(exit 1). Without RESULTS_DIR RUN_ID: results in the current folder (as
root: /var/lib/clockbench/results) and a new run id. Needs root.

Options:
  -q, --quiet            errors and the final screen only
  -v, --verbose          the engine's line per measured cell too
      --no-guest         the host only
      --force            switch even under KVM guests clockbench did not
                         start
{settings}
      --SETTING VALUE    any other setting of clockbench bench-guest (kernel,
                         accel, vcpus, timeout...: its --help lists them),
                         for the guest; without a kernel given, where /boot
                         has no image of the running kernel, the newest
                         /boot/vmlinuz-* (said); the observer VM in round 1
                         only
  -h, --help             this text
      --version          print the version and exit

make bench passes each of its variables as the option of its name
(CLOCKSOURCES=tsc,hpet as --clocksources=tsc,hpet; GUEST=0 as --no-guest,
FORCE=1 as --force, QUIET=1 as -q, VERBOSE=1 as -v).

Exit status:
  0      done
  1      a step, the summary or the report failed; another bench runs
  2      usage, or a bad setting
  128+N  interrupted by signal N, the clocksource put back"""


class Exit(Exception):
    """Ends the sweep with this status (its line already said)."""


class Stop(Exception):
    """A signal came while this process ran something of its own."""


def say(text):
    """One line on stderr; on a terminal the line the cursor is on is
    cleared first (what a stopped engine left drawn in place, or a ^C), as
    the bracket's cs_say does."""
    sys.stderr.write(("\r\033[Kclockbench: %s\n" if sys.stderr.isatty() else "clockbench: %s\n") % text)
    sys.stderr.flush()


# ---- signals -------------------------------------------------------------------
# INT, TERM and HUP reach this process from the terminal (its process
# group) and from the bracket, which passes on every one it catches: the
# first is recorded and ends the run after what runs now.  While the
# bracket runs a step, the bracket stops it and its answer carries the
# signal; while this process runs something of its own (a check, the
# probe, health, the summary), that is stopped (Stop).
_signal = [0]
_own = [False]


def _caught(signum, frame):
    if not _signal[0]:
        _signal[0] = 128 + signum
    if _own[0]:
        _own[0] = False
        raise Stop()


@contextlib.contextmanager
def own():
    """Something of this process's own, stopped by a signal."""
    if _signal[0]:
        raise Stop()
    _own[0] = True
    try:
        yield
    finally:
        _own[0] = False


# ---- the bracket -----------------------------------------------------------------

class Bracket:
    """The bracket's requests (lib/clocksource.sh, cs_serve): NUL-ended
    words on fd 3, one line of answer on fd 4 ("STATUS SIGNAL VALUE").  A
    bracket gone (killed) is BracketGone."""

    def __init__(self, rq=3, rp=4):
        self.rq, self.rp = os.fdopen(rq, "wb", buffering=0), os.fdopen(rp, "rb", buffering=0)
        self.signal = 0

    def ask(self, verb, *args):
        """(status, value) of one request."""
        words = [verb, str(len(args))] + [str(a) for a in args]
        if any("\0" in w for w in words):
            raise ValueError("a NUL in a request to the bracket")
        try:
            self.rq.write(b"".join(w.encode("utf-8", "surrogateescape") + b"\0" for w in words))
            line = b""
            while not line.endswith(b"\n"):
                c = self.rp.read(1)
                if not c:
                    raise BracketGone()
                line += c
        except (BrokenPipeError, ConnectionError):
            raise BracketGone()
        rc, sig, value = line[:-1].decode("utf-8", "surrogateescape").split(" ", 2)
        self.signal = self.signal or int(sig)
        return int(rc), value

    def status(self, verb, *args):
        return self.ask(verb, *args)[0]


class BracketGone(Exception):
    """The bracket's process is gone (SIGKILL): nothing more can be switched."""


# ---- the settings ------------------------------------------------------------------

def parse(argv):
    """bench's options as the user typed them (--NAME=VALUE is --NAME
    VALUE; a value is taken from the next word only by an option that
    takes one): a dict of settings, each checked once here or named for the
    command that checks it.  Usage."""
    s = dict(quiet=False, verbose=False, guest=True, force=False, rounds=DEFAULTS["ROUNDS"], clocksources="",
             duration=DEFAULTS["DURATION"], workloads=DEFAULTS["WORKLOADS"], tsc_rate=DEFAULTS["TSC_RATE_SECONDS"],
             report_out="", observe=DEFAULTS["OBSERVE"],
             kernel_given=False, engine=[], guest_opts=[], guest_only=[], help=False, version=False)
    args = list(argv)
    while args:
        opt, eq, val = args[0].partition("=") if args[0].startswith("--") else (args[0], "", "")
        if opt in FLAGS:
            if eq:
                raise Usage("%s takes no value" % opt)
            args.pop(0)
            key = FLAGS[opt]
            s[key] = key != "guest"
            if key in ("help", "version"):
                return s, []
        elif opt in STEP_OPTIONS:
            raise Usage("%s: bench sets it for each run of clockbench bench-guest" % cut(opt, 80))
        elif opt == "--":
            args.pop(0)
            break
        elif re.match(r"--[a-z]", opt):
            if not eq:
                if len(args) < 2:
                    raise Usage("%s needs a value" % opt)
                val = args.pop(1)
            args.pop(0)
            key = {"--rounds": "rounds", "--clocksources": "clocksources", "--duration": "duration",
                   "--workloads": "workloads", "--tsc-rate-seconds": "tsc_rate", "--report-out": "report_out"}.get(opt)
            if key:
                s[key] = val
            elif opt in ("--threads", "--clocks", "--methods"):
                s["engine"].append("%s=%s" % (opt, val))
            elif opt == "--observe":
                s["observe"] = val
                s["guest_only"].append(opt)
            else:
                # A setting of the guest's, judged by the guest launcher's check.
                s["guest_opts"].append("%s=%s" % (opt[:80], val))
                s["guest_only"].append(opt[:80])
                s["kernel_given"] = s["kernel_given"] or opt == "--kernel"
        elif opt.startswith("-"):
            raise Usage("unknown option '%s'" % opt[:80])
        else:
            break
    if len(args) not in (0, 2):
        raise Usage("RESULTS_DIR and RUN_ID go together, or neither")
    if s["quiet"] and s["verbose"]:
        raise Usage("-q (QUIET=1) and -v (VERBOSE=1) exclude each other")
    if not s["guest"] and s["guest_only"]:
        raise Usage("%s: not an option of bench, nor of clockbench bench-guest with --no-guest" % s["guest_only"][0])
    return s, args


def rounds_of(v):
    """--rounds: a whole number from 1 to 1000 (the contract's rule);
    Exit(2) with its one line otherwise."""
    try:
        return runfolder._round_arg(v)
    except ValueError as e:
        say("--rounds=%s: expected %s" % (v[:80], str(e).split(": expected ", 1)[-1]))
        raise Exit(2)


def clocksources(s, offered, rounds):
    """The clocksources compared: as given, each one the kernel offers and
    each once (the contract's check_plan, which runfolder.plan applies
    again); by default every one it offers, tsc first.  One is enough:
    a host that lost its TSC is measured on what it has, without ratios.
    The kernel's stand-ins (names.CS_STAND_INS: jiffies and refined-jiffies
    are offered on a periodic tick) are never measured nor switched to:
    left out of the default, said once; refused when asked for."""
    stand_ins = [c for c in offered if c in names.CS_STAND_INS]
    if s["clocksources"]:
        css = s["clocksources"].replace(",", " ").split()
    else:
        real = [c for c in offered if c not in names.CS_STAND_INS]
        css = [c for c in real if c == "tsc"] + [c for c in real if c != "tsc"]
        if stand_ins:
            say("not measured: %s, the kernel's stand-in%s (offered on a periodic tick), never a host's clock"
                % (" ".join(stand_ins), "s" if len(stand_ins) > 1 else ""))
    if not css:
        say("the kernel offers no clocksource (available_clocksource is empty%s)"
            % (" but for its stand-ins %s" % " ".join(stand_ins) if stand_ins else ""))
        raise Exit(1)
    for c in css:
        if c in names.CS_STAND_INS:
            say("--clocksources: '%s' is one of the kernel's stand-ins (%s), never measured nor switched to"
                % (c, ", ".join(names.CS_STAND_INS)))
            raise Exit(2)
        if c not in offered:
            say("unknown clocksource '%s': this kernel offers: %s" % (c, " ".join(offered)))
            raise Exit(2)
    try:
        runfolder.check_plan(rounds, css)
    except ValueError as e:
        say("--clocksources=%s: %s (see --help)" % (cut(s["clocksources"], 80), e))
        raise Exit(2)
    return css


def stand_in_kernel(s):
    """The guest boots the host's own kernel; where /boot has no image of
    it (a custom or cloud kernel), the newest one there stands in: (the
    option, the note said once the settings have passed), or None."""
    release = os.uname().release
    if not s["guest"] or s["kernel_given"] or os.access("/boot/vmlinuz-" + release, os.R_OK):
        return None
    found = qemu.kernels()
    if not found:
        return None
    return "--kernel=" + found[0], "the guest boots %s: /boot has no image of %s" % (found[0], release)


def writable(what, path):
    """path, or the nearest folder above it that exists (where it would be
    made), is a folder this user can write; else one line and Exit(2)."""
    p = os.path.abspath(path)
    while not os.path.lexists(p):
        p = os.path.dirname(p)
    if not (os.path.isdir(p) and os.access(p, os.W_OK | os.X_OK)):
        say("%s %s: %s is not a folder this user can write" % (what, path[:80], p[:80]))
        raise Exit(2)


def guest_settings(argv):
    """The guest launcher's settings, read and checked against this machine
    once, by its own code (settings.read, preflight.check), in its words
    under bench's name: the settings object, or Exit(2) for a bad one,
    Exit(1) for a machine that cannot run it."""
    msg.PROG = PROG
    try:
        with own():
            a = settings.read(argv)
            preflight.check(a)
    except Usage as e:
        msg.note(str(e))
        raise Exit(2)
    except (RunError, runfolder.RunFolderError) as e:
        msg.note(str(e))
        raise Exit(1)
    except OSError as e:
        msg.note("%s: %s" % (e.filename, e.strerror))
        raise Exit(1)
    return a


def probe(a):
    """The accelerator, decided once a run (accel.choose: under --accel=auto
    one KVM probe, its answer said here once and whole, as the guest
    launcher says it): the options each step is given (--accel, and the
    probe's answer as --probed, which its result records); none when set
    as kvm or tcg."""
    msg.PROG = "clockbench bench-guest"
    try:
        with own():
            accel.choose(a)
    except RunError as e:
        msg.note(str(e))
        raise Exit(1)
    if a.accel_decided != accel.PROBE:
        return []
    return ["--accel=%s" % a.accel, "--probed=%s" % a.accel_note]


# ---- the plan --------------------------------------------------------------------------

def plan(results, run_id, rounds, css, s, guest_opts, accel_opts, original):
    """Makes the run folder and returns (its path, the plan): every step in
    the order it runs (odd rounds as listed, tsc first; even rounds
    reversed: over each pair of rounds every clocksource's mean place in
    time is the same, so a drift of the machine that is linear over the
    pair falls on each alike; with an odd number of rounds the last alone
    is not balanced), each step's folder and files (the contract's names:
    round N in round-<N>/, a run of one round the run folder itself), the
    TSC-rate check and the observer VM in round 1 only, and the running-VM
    step's fallbacks.  Paths in the plan are relative to the run folder."""
    run_dir, planned = runfolder.plan(results, run_id, rounds, css)
    by = {(n, cs): (where, paths) for n, cs, where, paths in planned}
    steps = []
    for n in range(1, rounds + 1):
        order = css if n % 2 else css[::-1]
        for place, cs in enumerate(order, 1):
            where, paths = by[(n, cs)]
            rel = [os.path.relpath(p, run_dir) for p in paths]
            steps.append({"round": n, "clocksource": cs, "place": place,
                          "folder": os.path.relpath(where, run_dir),
                          "host": {"json": rel[0], "csv": rel[1], "txt": rel[2]},
                          "tsc_rate": rel[3] if n == 1 and s["tsc_rate"] != "0" else None,
                          "tsc_rate_seconds": s["tsc_rate"] if n == 1 else "0",
                          "guest": s["guest"], "observe": s["observe"] if n == 1 else "0"})
    fallbacks = [c for c in css if c not in names.TSC_NAMES] if s["guest"] else []
    tcg = "--accel=tcg" in guest_opts
    p = {"schema": runfolder.SCHEMA_PLAN, "run_id": os.path.basename(run_dir), "rounds": rounds, "clocksources": css,
         "original": original, "force": s["force"], "guest": s["guest"],
         "host_options": host_options(s), "guest_options": guest_opts + accel_opts if s["guest"] else [],
         "steps": steps,
         "running_vm": {"fallbacks": [] if tcg else fallbacks,
                        "skipped": "--accel=tcg" if tcg and fallbacks else None,
                        # Where KVM boots the guest, the running VM is one too: its own view measured.
                        "in_guest": "--accel=kvm" in guest_opts + accel_opts},
         "health": runfolder.HEALTH}
    return run_dir, p


def host_options(s):
    """The host bench's options, each setting once: a round's cells alike
    (the guest's own default duration differs), every workload by default;
    the engine's progress: none with -q, a line a cell with -v, else its
    own choice (in place on a terminal, a line a step in a pipe)."""
    o = ["--duration=%s" % s["duration"], "--workloads=%s" % s["workloads"]] + s["engine"]
    return o + (["--quiet"] if s["quiet"] else []) + (["--progress=cells"] if s["verbose"] else [])


# ---- the run -------------------------------------------------------------------------------

class Sweep:
    def __init__(self, s, bracket, run_dir, p, work):
        self.s, self.b, self.dir, self.plan, self.work = s, bracket, run_dir, p, work
        self.failed, self.at = [], None

    def note(self, text):
        if not self.s["quiet"]:
            say(text)

    def stopped(self):
        return self.b.signal or _signal[0]

    def run(self, argv, out=os.devnull, err="-"):
        """argv as a child of the bracket (in a session of its own; a signal
        stops it and ends the step): its status, 128+N when stopped."""
        return self.b.status("run", out, err, *argv)

    def path(self, rel):
        return os.path.join(self.dir, rel)

    def health(self):
        """The host as it is before anything is switched: host or guest,
        healthy or not by the one rule, and why it is off the TSC
        (clockbench health, host-scripts/health, read-only, a few seconds, in this process; its report
        is the run's health.json, the screen's first lines).  A failure is
        said and the run goes on: it measures all the same.  Tests judge
        recorded inputs: the bracket's fake clocksource folder (CB_CS_DIR)
        and CB_HEALTH_ARGS (health's options, space-separated),
        test hooks only: then nothing of this machine is read."""
        self.note("health: this machine's clock as it is now")
        out = self.path(self.plan["health"])
        args = ["--format", "json", "--no-tsc-check", "--trace-seconds", "0", "--watchdog-seconds", "0",
                "--output", out]
        cs_dir = os.environ.get("CB_CS_DIR")
        if cs_dir and cs_dir != names.CS_SYSFS:
            args += ["--cs-dir", cs_dir]
        args += os.environ.get("CB_HEALTH_ARGS", "").split()
        err, rc = io.StringIO(), 0
        try:
            with own(), contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                hc = runpy.run_path(os.path.join(HERE, "health"), run_name="health")
                rc = hc["main"](["health"] + args)  # its messages under its name
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
        except Stop:
            raise
        except Exception as e:  # its own failure is said, and the run goes on
            rc, _ = 3, err.write("%s: %s" % (type(e).__name__, bounded(e)))
        if rc > 1 or not os.path.isfile(out) or not os.path.getsize(out):
            say("health failed (exit %s): %s; the screen will not say why the host is off the TSC"
                % (rc, err.getvalue()[:200]))

    def step(self, st, where):
        """One clocksource's part of a round, inside the bracket (entered on
        its clocksource): the host bench into the files the plan named, then
        the guest launcher (it checks both files' labels in its own
        process: the host result before it boots); host only, the label
        check here.  Its status; 128+N when a signal stopped it."""
        cs, h = st["clocksource"], st["host"]
        self.note("[%s] host bench (%s)" % (cs, where))
        argv = [os.path.join(HERE, "bench-host")] + self.plan["host_options"] + [
            "--tsc-rate-seconds", st["tsc_rate_seconds"], "--run-dir", self.path(st["folder"]), "--clocksource", cs,
            "--json", self.path(h["json"]), "--csv", self.path(h["csv"]), "--txt", self.path(h["txt"])]
        if st["tsc_rate"]:
            argv += ["--tsc-rate", self.path(st["tsc_rate"])]
        rc = self.run(argv)
        if rc or self.stopped():
            return rc or self.stopped()
        if not st["guest"]:
            # 1 unless the host file measured cs all along, said in the
            # words of the guest launcher's check (load.mislabel_line).
            return 1 if launcher.mislabelled(self.path(h["json"]), cs, say) else 0
        self.note("[%s] guest bench, KVM clock events traced (%s)" % (cs, where))
        # Its lines (a mislabelled file) under the name of the verb the
        # user knows, as bench's own say "clockbench".
        return self.run(["env", "CB_PROG=clockbench bench-guest", os.path.join(HERE, "bench-guest")]
                        + self.plan["guest_options"] + ["--observe=%s" % st["observe"], "--run-dir",
                                                        self.path(st["folder"]), "--clocksource", cs, "--trace",
                                                        "--quiet"])

    def rounds(self):
        """The plan's steps in their order, each in a bracket of its own; a
        round's folder made as its round begins (a stopped run leaves none
        empty), never reusing one.  A signal ends the run after the step it
        came in: no further round or clocksource is switched to."""
        p, force = self.plan, "1" if self.s["force"] else "0"
        n, made = len(p["clocksources"]), set()
        for st in p["steps"]:
            if self.stopped():
                break
            r, cs = st["round"], st["clocksource"]
            if p["rounds"] != 1 and r not in made:
                made.add(r)
                try:
                    runfolder.round_dir(self.dir, r)
                except (runfolder.RunFolderError, ValueError, OSError) as e:
                    say(str(e))
                    self.failed.append("round %d" % r)
                    break
            where = "clocksource %d of %d" % (st["place"], n)
            self.at = "the %s step" % cs
            if p["rounds"] != 1:
                where = "round %d of %d, %s" % (r, p["rounds"], where)
                self.at = "the %s step of round %d" % (cs, r)
            rc = self.b.status("enter", cs, force)
            if rc == 0:
                rc = self.step(st, where)
                if self.b.status("leave"):
                    self.failed.append("%s (round %d)" % (cs, r))
                    say("the clocksource could not be put back: no further step")
                    break
            if rc:
                self.failed.append(cs if p["rounds"] == 1 else "%s (round %d)" % (cs, r))

    def running_vm(self, guest_opts):
        """The running-VM step (bench-running-vm): a KVM VM started on tsc
        lives through each fallback and back, then a pause and resume; its
        master clock and stable bit in each phase, from its own trace
        (running-vm-CS.json).  Where no KVM VM can run, or the host did not
        start on tsc, it is said and skipped; a step that fails is a failed
        step of the run."""
        if self.stopped() or not self.s["guest"] or self.failed:
            return
        if self.plan["running_vm"]["skipped"]:
            self.note("running-VM step skipped: %s" % self.plan["running_vm"]["skipped"])
            return
        vm = ["--kernel", qemu.default_kernel()]
        for o in guest_opts:
            name, _, value = o.partition("=")
            if name in ("--kernel", "--qemu"):
                vm += [name, value]
        if self.s["force"]:
            vm.append("--force")
        if self.plan["running_vm"].get("in_guest"):
            initrd = next((o[len("--initramfs="):] for o in guest_opts if o.startswith("--initramfs=")),
                          os.path.join(cbhost.TOP, "build", "guest", "initramfs.cpio"))
            vm += ["--initramfs", initrd]
        err = os.path.join(self.work, "running-vm.err")
        for c in self.plan["running_vm"]["fallbacks"]:
            if self.stopped():
                break
            self.note("[%s] a KVM VM running across the switch to %s and back, then paused and resumed" % (c, c))
            rc = self.run(["env", "CB_PROG=clockbench bench", os.path.join(HERE, "bench-running-vm"),
                           "--run-dir", self.dir, "--fallback", c] + vm, err=err)
            with open(err, errors="replace") as f:
                lines = f.read(1 << 20).splitlines()
            last = lines[-1] if lines else ""
            if rc == 0:
                if not self.s["quiet"] and last:
                    print(last, file=sys.stderr, flush=True)
            elif rc == 3:
                self.note("running-VM step skipped: %s" % last[:300])
                break
            elif not self.stopped():
                print("\n".join(lines), file=sys.stderr, flush=True)
                self.failed.append("the running VM on %s" % c)

    def summary(self, report_out):
        """The summary and the report, read only from the folder, in one
        process (the report tool).  The screen: the verdict first, then the
        tables (at most 100 columns), then 'report: PATH'; a part that fails
        says so in its line and does not stop the other.  Its status."""
        try:
            with own():
                return subprocess.run([launcher.REPORT_TOOL, "summary", self.dir, "--screen", "--host-clocksource",
                                       self.plan["original"], "--report-out", report_out],
                                      stdin=subprocess.DEVNULL).returncode and 1
        except OSError as e:
            say("%s: %s" % (launcher.REPORT_TOOL, e.strerror))
            return 1


def main(argv):
    """bench's main: the sweep's status (the bracket exits with it)."""
    global PROG
    PROG = argv[0] if argv else PROG
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _caught)
    try:
        b = Bracket()
    except OSError:
        say("bench's sweep runs inside its bracket: run host-scripts/bench")
        return 2
    try:
        return _main(argv[1:], b)
    except Exit as e:
        return e.args[0]
    except (Stop, KeyboardInterrupt):
        return _signal[0] or 130
    except BracketGone:
        return 1


def _main(argv, b):
    try:
        s, pos = parse(argv)
    except Usage as e:
        say("%s (see --help)" % e)
        return 2
    if s["help"]:
        # Its own settings, and the engine's it passes to host and guest: the guest's others are --SETTING.
        guest = {r.name for r in settingtable.of("bench-guest") if "bench-host" not in r.targets}
        print(USAGE.format(prog=PROG, settings=settingtable.help_text("bench", skip=guest, col=25)))
        return 0
    if s["version"]:
        print(names.version_line(PROG))
        return 0
    rounds = rounds_of(s["rounds"])
    results_default, report_default = runfolder.default_dirs()
    results, run_id = (pos[0], pos[1]) if pos else (results_default, runfolder.new_run_id())
    rc, offered = b.ask("offered")
    if rc:
        say("cannot read the offered clocksources")
        return 1
    css = clocksources(s, offered.split(), rounds)
    kernel = stand_in_kernel(s)
    guest_opts = s["guest_opts"] + ([kernel[0]] if kernel else [])
    guest_opts += ["--duration=%s" % s["duration"], "--workloads=%s" % s["workloads"]] + s["engine"]
    report_out = s["report_out"] or os.path.join(report_default, run_id)
    # Every setting, once, before anything is made or switched: each
    # command judges its own with the code its run uses (the engine's
    # --dry-run, the launcher's check); a bad one is its one line, and its
    # exit status.
    writable("results folder", results)
    writable("--report-out", report_out)
    with own():
        rc = subprocess.run([os.path.join(HERE, "bench-host")] + host_options(s) + [
            "--tsc-rate-seconds=%s" % s["tsc_rate"], "--check-only"], env=dict(os.environ, CB_PROG=PROG),
            stdin=subprocess.DEVNULL).returncode
    if rc:
        return rc
    a = None
    if s["guest"]:
        a = guest_settings(guest_opts + ["--observe=%s" % s["observe"], "--check-only", "--results", results,
                                         "--run-id", run_id, "--trace"])
    rc, original = b.ask("begin", "1" if s["force"] else "0")
    if rc or b.signal:
        return b.signal or 1
    if s["guest"]:
        with contextlib.suppress(OSError, kvmtrace.TraceError, kvmtrace.Unavailable):
            for inst in kvmtrace.clean():
                say("removed stale tracing instance %s (its process is gone)" % inst)
    if kernel and not s["quiet"]:
        say(kernel[1])
    accel_opts = probe(a) if s["guest"] else []
    try:
        run_dir, p = plan(results, run_id, rounds, css, s, guest_opts, accel_opts, original)
        runfolder.write_once(os.path.join(run_dir, runfolder.PLAN), json.dumps(p, indent=1) + "\n")
    except (runfolder.RunFolderError, OSError) as e:
        say(str(e))
        return 1
    except ValueError as e:
        say("%s (see --help)" % e)
        return 2
    with tempfile.TemporaryDirectory(prefix="clockbench-bench.") as work:
        return run(Sweep(s, b, run_dir, p, work), s, guest_opts, report_out)


def run(w, s, guest_opts, report_out):
    """The run itself, after the plan: what the host is, the rounds, the
    running VM, the line that says the clocksource is back, the screen."""
    css, rounds = w.plan["clocksources"], w.plan["rounds"]
    w.note("bench %s, back to %s after each: %s" % (" ".join(css), w.plan["original"], w.dir))
    if rounds != 1:
        w.note("%d rounds, the even ones in reverse order (%s)" % (rounds, " ".join(css[::-1])))
    try:
        w.health()
    except Stop:
        pass
    w.rounds()
    w.running_vm(guest_opts)
    stop = w.stopped()
    rc, back = w.b.ask("end", w.plan["original"])
    if stop:
        say("stopped %s, %s; what was measured: %s" % ("at " + w.at if w.at else "before the first step", back,
                                                        w.dir))
        w.b.status("left-vms")
        return stop
    if rc == 0:
        w.note(back)
    else:
        say(back)
    rc = w.summary(report_out)
    w.b.status("left-vms")
    if w.stopped():
        return w.stopped()
    if w.failed:
        say("failed for: %s (see above); the table has what was measured" % " ".join(w.failed))
        return 1
    return rc
