#!/usr/bin/python3
"""labtable.py: the lab's one table (lab/states.cfg) and the lab's own file names.

lab/run-lab and lab/assert.py import it; lab/l1-run.sh (bash, inside L1)
reaches it through its command line:

  labtable.py check LIST       exit 0 if LIST names states of the table
  labtable.py plan LIST        one line per state, tab-separated, '-' for
                               empty: N CLOCKSOURCE L2_VCPUS PIN(1|0) CPU L2_APPEND ATTEMPTS
                               (CLOCKSOURCE: a name, current, or default:
                               no CLOCKSOURCES, compare's own list)
  labtable.py files N [K]      state N's files, tab-separated: RUN LOG AFTER WORK PS
                               WATCHDOG HOSTCHECK DMESG WATCHDOG_LOAD; with K, those of
                               its failed attempt K, kept
  labtable.py watchdog N       state N's watchdog readout in L1, tab-separated:
                               SECONDS (0: none) LOAD(none|memory|timer) HARNESS(1|0)
  labtable.py boot-files LIST [INSTANCE]
                               the files of the L1 boot of LIST (or of its
                               INSTANCE: NAME, or NAME-rJ, the J-th L1 booted
                               in place of a frozen one): PROGRESS FACTS DMESG
  labtable.py started PROGRESS N
                               how many attempts of state N the progress log
                               PROGRESS holds (the next is one more)
  labtable.py keep DIR N K     renames state N's files in the lab folder DIR
                               to those of its failed attempt K, kept

LIST is a comma list of state numbers ("1,2,4").  A state's own results
are a run folder of the contract (docs/run-folder.md), named by RUN;
everything else in a lab folder is named here.
Exit status: 0 done, 1 a bad table (one line naming it), 2 usage.
"""
import configparser
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLE = os.path.join(HERE, "states.cfg")
sys.dont_write_bytecode = True
if __name__ == "__main__":  # run as a command: the one place it finds its packages
    sys.path[:0] = [os.path.join(os.path.dirname(HERE), "contract")]
from cbcontract import runfolder  # noqa: E402

KEYS = ("label", "l1_vcpus", "l1_mem", "l1_machine", "l1_append", "l1_cpu", "clocksource", "l2_vcpus", "pin", "cpu",
        "l2_append", "attempts", "watchdog", "watchdog_load", "harness", "expect", "expect_verdict",
        "expect_no_verdict", "ci")
# The facts a state may expect: the values each takes (int: a count or a
# measure, with >= or < and a whole number; str: any plain word).
# lab/assert.py reads each from its evidence.
FACTS = {
    "l1_tsc": ("stable", "unstable"),
    "master_clock": ("on", "off"),
    "hostclock": str,
    "stable_bit": ("all", "none"),
    "tsc_offset_writes": int,
    "window_tsc_offset_writes": int,
    "guest_clocksource": str,
    "sched_clock_stable": ("yes", "no"),
    "path": ("user", "syscall"),
    "l1_kernel_read_vs_tsc": int,
    "l1_vdso_read_vs_tsc": int,
    "l1_rtc_edges": int,
    "l1_rtc_ppm_abs": int,
    # The clocksource watchdog in L1 (issue 19): whether it watches L1's
    # TSC, by L1's own facts and the kernel table; health's answer in
    # L1; the engine's readout (--check watchdog) of L1's HPET; the
    # watchdog's lines in L1's log after the state, and L1's TSC then.
    "l1_watched": ("yes", "no"),
    "l1_health_watched": ("yes", "no", "unknown"),
    "watchdog_device": str,
    "watchdog_samples": int,
    "watchdog_over_limit": int,
    "watchdog_runs_longest": int,
    "watchdog_load_samples": int,
    "l1_watchdog_verdict": str,
    "l1_watchdog_near_misses": int,
    "l1_tsc_after": ("stable", "unstable"),
    # health's margin in L1 on the state's readout: the kernel's limit
    # over the readout's p99.99, in hundredths (0.21: 21).
    "l1_readout_margin_pct": int,
    # A plain compare run (clocksource = default) on an L1 that lost its
    # TSC: the clocksources its run folder measured against those L1
    # offered, whether it holds a tsc row, the cause its health.json
    # (health at the run's start) names and its screen says, and
    # whether the screen gave a ratio.
    "bench_measured": ("offered",),
    "bench_tsc_row": ("yes", "no"),
    "bench_cause": str,
    "bench_ratio": ("none", "printed"),
    # compare's running-VM step, from the guest's own results in its file
    # (running-vm-CS.json): the path of its CLOCK_MONOTONIC reads through
    # the vDSO in each phase (before, on the fallback, after the return,
    # after the pause and resume), comma-joined; a phase whose results
    # took both paths says "mixed".
    "running_vm_guest_paths": str,
}
CURRENT = "current"  # clocksource: L1's own, whatever its kernel chose
# clocksource: no CLOCKSOURCES at all, as a plain `make bench`: compare
# measures every clocksource L1 offers; the state's files are named after
# L1's own, as for CURRENT.
DEFAULT = "default"
LOADS = ("none", "memory", "timer")  # watchdog_load
EXPECT_RE = re.compile(r"^([a-z0-9_]+)\s*(>=|<|=)\s*(\S+)$")

# The lab's own files (a state's results are the run folder state-N).
PROGRESS = "progress.log"
# The tiers of lab/run-lab --tier: the states each runs, and how.  ci: the
# states with `ci = yes` (the mechanism end to end on every submission),
# each in an L1 boot of its own, under a shorter limit per boot.
TIERS = ("all", "ci")


def state_files(n, attempt=None):
    """State n's files: its run folder, harness log, L1's clocksource read
    after it and, when the run failed, its guest's console and QEMU log
    (the launcher keeps them only in L1's scratch space) and L1's last
    process table taken while it ran; where the state measures the
    watchdog's readout, the engine's document of it and health's JSON
    (both in L1) and, under the hpet load, the loading readout's document;
    L1's kernel log after the state.  With attempt K: the
    same of its failed attempt K, kept."""
    run = "state-%d" % n + (".attempt-%d" % attempt if attempt else "")
    return {"run": run, "log": run + ".log", "after": run + ".clocksource-after", "work": run + ".guest-work",
            "ps": run + ".ps.txt", "watchdog": run + ".watchdog.json", "health": run + ".health.json",
            "dmesg": run + ".dmesg.txt", "watchdog_load": run + ".watchdog-load.json"}


# Each of these is renamed to the failed attempt's own name when a state is
# run again (by lab/l1-run.sh inside L1, or by lab/run-lab after L1 froze);
# in this order, the columns of the files command (lab/l1-run.sh reads them so).
KEPT = ("run", "log", "after", "work", "ps", "watchdog", "health", "dmesg", "watchdog_load")


def keep_attempt(d, n, k):
    """Renames state n's files in the lab folder d (and its run's report
    folder) to those of its failed attempt k; returns the names moved."""
    now, kept, moved = state_files(n), state_files(n, k), []
    pairs = [(now[key], kept[key]) for key in KEPT] + [(now["run"] + ".report", kept["run"] + ".report")]
    for a, b in pairs:
        if os.path.lexists(os.path.join(d, a)):
            os.rename(os.path.join(d, a), os.path.join(d, b))
            moved.append(b)
    return moved


def boot_files(boot):
    """An L1 boot's files (boot: its name, or its instance's, NAME-rJ): its
    console, its facts (sysfs reads at its start), its kernel log (dmesg,
    whole), its heartbeat (L1's init writes it every few seconds; lab/run-lab
    watches it) and, when it froze, lab/run-lab's record of the freeze and
    its CPU and local APIC as its QEMU's monitor showed them."""
    return {"console": "l1-%s.console.log" % boot, "facts": "l1-%s.facts.txt" % boot,
            "dmesg": "l1-%s.dmesg.txt" % boot, "heartbeat": "l1-%s.heartbeat" % boot,
            "frozen": "l1-%s.frozen" % boot, "frozen_cpu": "l1-%s.frozen.cpu.txt" % boot}


def instance(boot, j):
    """The name of boot's j-th L1 (0: the first; j: the j-th booted in place
    of a frozen one)."""
    return boot if j == 0 else "%s-r%d" % (boot, j)


class Attempt:
    """One attempt of a state, as the progress log tells it: the L1 instance
    that ran it (None where the log names none: a lab from before L1s were
    replaced), the state, and how it ended (done, failed, or None: it never
    said, as when L1 froze)."""

    def __init__(self, boot, n):
        self.boot, self.n, self.end = boot, n, None


# An L1's name: its boot's (its states, "1-2-4"), or NAME-rJ (instance()).
INSTANCE_RE = r"[0-9]+(?:-[0-9]+)*(?:-r[0-9]+)?"
# A line of the progress log (written in L1: data, so an L1's name in it is
# taken only in this shape).
PROGRESS_RE = re.compile(r"^[0-9]+ (?:boot (%s) for ([0-9,]+)|(start|done|failed) state ([0-9]+)\b.*)$" % INSTANCE_RE)


def attempts(text):
    """Every attempt of every state in the progress log's text, in order
    (lab/l1-run.sh writes `<epoch> boot INSTANCE for LIST` at its start,
    then `<epoch> start|done|failed state N ...`)."""
    out, boot = [], None
    for line in text.splitlines():
        m = PROGRESS_RE.match(line)
        if not m:
            continue
        if m.group(1):
            boot = m.group(1)
            continue
        n = int(m.group(4))
        if m.group(3) == "start":
            out.append(Attempt(boot, n))
            continue
        mine = [a for a in out if a.n == n]
        if mine and mine[-1].end is None:
            mine[-1].end = m.group(3)
    return out


class TableError(Exception):
    """A table that does not say what a state is: one line naming it."""


class State:
    """One stanza of the table."""

    def __init__(self, n, label, l1, clocksource, l2_vcpus, pin, cpu, l2_append, attempts, expect,
                 watchdog=0, watchdog_load="none", harness=True, outcomes=None):
        self.n, self.label, self.l1, self.clocksource = n, label, l1, clocksource
        self.l2_vcpus, self.pin, self.cpu, self.l2_append, self.expect = l2_vcpus, pin, cpu, l2_append, expect
        self.attempts = attempts
        self.ci = False  # in the ci tier (lab/run-lab --tier=ci)
        # watchdog: seconds of the engine's watchdog readout in L1 before the
        # harness run (0: none); watchdog_load: none, memory (the engine's
        # --load on L1's other CPUs) or timer (a second readout on L1's CPU
        # 1: reads of an emulated timer in a loop); harness: False runs no host-scripts/bench
        # (a state of L1 alone: no guest, no trace to check).
        self.watchdog, self.watchdog_load, self.harness = watchdog, watchdog_load, harness
        # outcomes: None, or {"verdict": facts, "no_verdict": facts}: the
        # facts expected when L1's log after the state holds a watchdog
        # verdict, and when it holds none (under an emulator either can
        # come); the evidence decides which, lab/assert.py says which.
        self.outcomes = outcomes

    @property
    def own_cs(self):
        """True where the state runs on L1's own clocksource (current or
        default), not one the table names."""
        return self.clocksource in (CURRENT, DEFAULT)


class Boot:
    """One emulated hypervisor: the states that share an L1 configuration."""

    def __init__(self, states):
        self.states = states
        self.name = "-".join(str(s.n) for s in states)
        self.vcpus, self.mem, self.machine, self.append, self.cpu = states[0].l1


def _int(where, v, least):
    if not re.match(r"^[0-9]+$", v) or int(v) < least:
        raise TableError("%s: expected an integer >= %d, got %r" % (where, least, v))
    return int(v)


def _line(where, v):
    if "\n" in v or "\t" in v:
        raise TableError("%s: one line, no tabs" % where)
    return v


def _expect(where, text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        m = EXPECT_RE.match(line)
        if not m:
            raise TableError("%s: %r: expected NAME = VALUE, NAME >= N or NAME < N" % (where, line))
        name, op, value = m.groups()
        kind = FACTS.get(name)
        if kind is None:
            raise TableError("%s: unknown fact %r (known: %s)" % (where, name, ", ".join(FACTS)))
        if kind is int:
            if op == "=":
                raise TableError("%s: %s is a count: use >= or <" % (where, name))
            value = _int("%s: %s" % (where, name), value, 0)
        elif op != "=":
            raise TableError("%s: %s takes =" % (where, name))
        elif isinstance(kind, tuple) and value not in kind:
            raise TableError("%s: %s = %s: expected one of %s" % (where, name, value, ", ".join(kind)))
        out.append((name, op, value))
    if not out:
        raise TableError("%s: no facts: a state must expect something" % where)
    return out


def load(path=TABLE):
    """The states of the table, in its order.  Raises TableError."""
    cp = configparser.ConfigParser(interpolation=None, empty_lines_in_values=False)
    try:
        with open(path) as f:
            cp.read_file(f)
    except OSError as e:
        raise TableError("%s: open: %s" % (path, e.strerror))
    except configparser.Error as e:
        raise TableError("%s: %s" % (path, str(e).splitlines()[0]))
    name = os.path.basename(path)
    states = []
    for sec in cp.sections():
        w = "%s [%s]" % (name, sec)
        if not re.match(r"^[1-9][0-9]*$", sec):
            raise TableError("%s: a state is a positive number" % w)
        s = cp[sec]
        unknown = sorted(set(s) - set(KEYS))
        if unknown:
            raise TableError("%s: unknown key %s (keys: %s)" % (w, unknown[0], ", ".join(KEYS)))
        for k in ("label", "clocksource", "expect"):
            if not s.get(k, "").strip():
                raise TableError("%s: %s is missing" % (w, k))
        cs = s["clocksource"].strip()
        if cs not in (CURRENT, DEFAULT):
            try:
                runfolder.check_cs(cs)
            except ValueError as e:
                raise TableError("%s: %s" % (w, e))
        for k, default in (("pin", None), ("harness", "yes")):
            if s.get(k, default) not in ("yes", "no"):
                raise TableError("%s: %s: expected yes or no, got %r" % (w, k, s.get(k, default)))
        if s.get("watchdog_load", "none") not in LOADS:
            raise TableError("%s: watchdog_load: expected one of %s, got %r" % (w, ", ".join(LOADS), s.get("watchdog_load")))
        if not re.match(r"^[A-Za-z0-9][A-Za-z0-9,=+._-]*$", s.get("l1_cpu", "max")):
            raise TableError("%s: l1_cpu: a QEMU CPU model and its properties, got %r" % (w, s.get("l1_cpu")))
        l1 = (_int(w + ": l1_vcpus", s.get("l1_vcpus", ""), 1), _int(w + ": l1_mem", s.get("l1_mem", ""), 256),
              _line(w + ": l1_machine", s.get("l1_machine", "")), _line(w + ": l1_append", s.get("l1_append", "")),
              s.get("l1_cpu", "max"))
        branches = [s.get(k, "").strip() for k in ("expect_verdict", "expect_no_verdict")]
        if any(branches) and not all(branches):
            raise TableError("%s: expect_verdict and expect_no_verdict go together" % w)
        outcomes = None
        if all(branches):
            outcomes = {"verdict": _expect(w + ": expect_verdict", branches[0]),
                        "no_verdict": _expect(w + ": expect_no_verdict", branches[1])}
        states.append(State(int(sec), _line(w + ": label", s["label"]), l1, cs,
                            _int(w + ": l2_vcpus", s.get("l2_vcpus", ""), 1), s["pin"] == "yes",
                            _line(w + ": cpu", s.get("cpu", "")), _line(w + ": l2_append", s.get("l2_append", "")),
                            _int(w + ": attempts", s.get("attempts", "2"), 1), _expect(w + ": expect", s["expect"]),
                            _int(w + ": watchdog", s.get("watchdog", "0"), 0), s.get("watchdog_load", "none"),
                            s.get("harness", "yes") == "yes", outcomes))
        if s.get("ci", "no") not in ("yes", "no"):
            raise TableError("%s: ci: expected yes or no, got %r" % (w, s.get("ci")))
        states[-1].ci = s.get("ci", "no") == "yes"
        if states[-1].watchdog > 3600:
            raise TableError("%s: watchdog: at most 3600 s, got %d" % (w, states[-1].watchdog))
    if not states:
        raise TableError("%s: no states" % name)
    return states


def select(states, spec):
    """The states named by spec ("1,3"; empty or None: all), in table order.
    Raises ValueError naming the bad value."""
    known = {s.n: s for s in states}
    if not spec:
        return list(states)
    if not re.match(r"^[0-9]+(,[0-9]+)*$", spec):
        raise ValueError("%r: expected a comma list of state numbers (%s)" % (spec, ",".join(map(str, known))))
    want = {int(x) for x in spec.split(",")}
    bad = sorted(want - set(known))
    if bad:
        raise ValueError("no state %d in lab/states.cfg (states: %s)" % (bad[0], ",".join(map(str, known))))
    return [s for s in states if s.n in want]


def boots(selected, each=False):
    """The L1 boots for the selected states: one per distinct L1
    configuration, in the order of their first state (each: one per state)."""
    if each:
        return [Boot([s]) for s in selected]
    groups = {}
    for s in selected:
        groups.setdefault(s.l1, []).append(s)
    return [Boot(g) for g in groups.values()]


def tier(states, name):
    """(the states of tier name, one boot per state?).  Raises ValueError."""
    if name == "all":
        return list(states), False
    if name == "ci":
        sel = [s for s in states if s.ci]
        if not sel:
            raise ValueError("no state of lab/states.cfg has ci = yes")
        return sel, True
    raise ValueError("%r: expected one of %s" % (name, ", ".join(TIERS)))


def boot_of(selected, n, each=False):
    return next(b for b in boots(selected, each) if any(s.n == n for s in b.states))


def main(argv):
    def usage(msg):
        print("labtable: %s (see --help)" % msg, file=sys.stderr)
        return 2

    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__.split("\n\n", 1)[1].strip())
        return 0
    if len(argv) != 3 and not (len(argv) == 4 and argv[1] in ("files", "boot-files", "started")) and \
            not (len(argv) == 5 and argv[1] == "keep"):
        return usage("a command and one argument are needed")
    cmd, arg, extra = argv[1], argv[2], argv[3:]
    try:
        states = load()
        if cmd == "started":
            if not extra[0].isdigit():
                return usage("started takes a progress log and a state number")
            try:
                with open(arg) as f:
                    text = f.read(1 << 20)
            except FileNotFoundError:
                text = ""
            print(sum(1 for a in attempts(text) if a.n == int(extra[0])))
            return 0
        if cmd == "keep":
            if not (extra[0].isdigit() and extra[1].isdigit() and int(extra[1]) >= 1):
                return usage("keep takes a lab folder, a state number and an attempt")
            select(states, extra[0])
            keep_attempt(arg, int(extra[0]), int(extra[1]))
            return 0
        if cmd == "files":
            if not arg.isdigit() or (extra and not extra[0].isdigit()):
                return usage("files takes a state number and an attempt, got %s" % " ".join([arg] + extra))
            select(states, arg)
            f = state_files(int(arg), int(extra[0]) if extra else None)
            print("\t".join(f[k] for k in KEPT))
            return 0
        sel = select(states, arg)
        if cmd == "check":
            return 0
        if cmd == "watchdog":
            if len(sel) != 1:
                return usage("watchdog takes one state, got %s" % arg)
            s = sel[0]
            print("\t".join([str(s.watchdog), s.watchdog_load, "1" if s.harness else "0"]))
            return 0
        if cmd == "plan":
            for s in sel:
                print("\t".join([str(s.n), s.clocksource, str(s.l2_vcpus), "1" if s.pin else "0",
                                 s.cpu or "-", s.l2_append or "-", str(s.attempts)]))
            return 0
        if cmd == "boot-files":
            b = boots(sel)
            if len(b) != 1:
                return usage("states %s are not one L1 boot (%s)" % (arg, " and ".join(x.name for x in b)))
            name = b[0].name
            if extra:
                if not re.match("^%s$" % INSTANCE_RE, extra[0]):
                    return usage("boot-files: %r is not an L1 instance's name" % extra[0][:40])
                name = extra[0]
            f = boot_files(name)
            print("\t".join([PROGRESS, f["facts"], f["dmesg"]]))
            return 0
    except TableError as e:
        print("labtable: %s" % e, file=sys.stderr)
        return 1
    except ValueError as e:
        return usage(str(e))
    return usage("unknown command %r" % cmd)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
