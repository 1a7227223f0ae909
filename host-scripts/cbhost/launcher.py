"""launcher.py: the guest launcher (host-scripts/bench-guest), top to bottom: settings, their checks, the accelerator, the run, the table.

Every setting is an option whose default is the environment variable of the
same name (settings.py), checked once against this machine (preflight.py).
The accelerator is chosen (accel.py), the guest booted under QEMU or
libvirt with the command line of qemu.py, its framed result read, and
guest-<cs>-<N>vcpu.json written with its console log (and, with --trace,
the KVM trace files) into a run folder, each once (run.py, result.py,
tracing.py).  The table of the result is the report tool's
(`clockbench-report table`), run as a process: the harness writes result
files and never imports the modules that read them for a report (compare
asks for none: --quiet).  In a step of a run folder under a label its
caller gave (--run-dir and --clocksource, as compare runs it), the step's
files are checked to have measured that clocksource all along, in this
process with the contract's check (cbcontract.load.label_problem, as
`clockbench-report check-label`): the host result of that label, when the
folder has one, before the guest boots, and the guest's own once written;
one that did not fails the run in compare's words.  The last line on stdout
is the result's path.  Exit status: 0 written, 1 failure (one line naming
the console log, or the file that does not measure its label), 2 usage.
"""
import os
import signal
import subprocess
import sys

import cbhost
from cbcontract import load, runfolder
from cbcontract.util import InputError, bounded
from . import accel, kvmtrace, msg, preflight, run, settings
from .msg import RunError, Usage

REPORT_TOOL = os.path.join(cbhost.TOP, "analysis", "clockbench-report")
INTERRUPTS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def main(argv):
    handle_interrupts()
    try:
        return _main(argv)
    finally:
        kvmtrace.discard(os.getpid())  # whatever path left it (tests/guest-init/interrupt.t)


def _main(argv):
    """Each step once, in order; --check-only stops after the checks,
    --probe-only after the accelerator.  Every error ends here, as one line
    (the console log named once a run has one)."""
    a = None
    try:
        a = settings.read(argv)
        preflight.check(a)
        if a.check_only:
            return 0
        step = a.run_dir is not None and a.clocksource is not None and not a.probe_only
        host = os.path.join(a.run_dir, runfolder.host_name(a.clocksource, "json")) if step else None
        if host and os.path.lexists(host) and mislabelled(host, a.clocksource):
            return 1  # no guest booted for a step whose host result is wrong
        accel.choose(a)
        if a.probe_only:
            # The accelerator; when probed, the probe's reason on a second
            # line (compare passes both to each step: --accel, --probed).
            print(a.accel)
            if a.accel_decided == accel.PROBE:
                print(a.accel_note)
            return 0
        path = run.run(a)
        if step and mislabelled(path, a.clocksource):
            return 1
    except Usage as e:
        msg.note(str(e))
        return 2
    except (RunError, runfolder.RunFolderError, kvmtrace.TraceError) as e:
        msg.note("%s%s" % (e, _console(a)))
        return 1
    except KeyboardInterrupt:
        msg.note("interrupted%s" % _console(a))
        return 1
    except OSError as e:
        msg.note("%s: %s%s" % (e.filename, e.strerror, _console(a)))
        return 1
    if not a.quiet:
        show_table(path)
    print(path)
    return 0


def mislabelled(path, cs, say=msg.note):
    """False when the result file at path measured clocksource cs all
    along; else True, said (by say) in compare's words for a step whose
    file does not measure its label (compare's host-only step says the
    same line through this function, under its own name)."""
    try:
        why = load.label_problem(load.load_file(path), cs)
    except InputError as e:
        why = bounded(e)
    if why:
        say(load.mislabel_line(path, cs, why))
    return bool(why)


def _console(a):
    c = getattr(a, "console", None)
    return " (console log: %s)" % c if c else ""


def show_table(path):
    """Prints the result's table; a table the report tool refuses is a
    warning, not a failed run (the result stands)."""
    try:
        print(table(path))
    except RunError as e:
        msg.warn("table of %s: %s" % (path, e))


def table(path):
    """The result's table as `clockbench-report table PATH` draws it
    (through the one reader of result files), without the line of PATH it
    heads the table with: the launcher prints the path last, alone.
    RunError with the tool's one line when it refuses."""
    try:
        r = subprocess.run([sys.executable, REPORT_TOOL, "table", path], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, errors="replace", timeout=120)
    except (OSError, subprocess.SubprocessError) as e:
        raise RunError("%s: %s" % (REPORT_TOOL, e))
    if r.returncode != 0:
        line = (r.stderr.strip().splitlines() or ["exit status %d" % r.returncode])[0]
        raise RunError(msg.cut(line.removeprefix("%s: " % os.path.basename(REPORT_TOOL)), 400))
    lines = r.stdout.rstrip("\n").split("\n")
    return "\n".join(lines[1:] if lines[0] == path else lines)


def _interrupt(signum, frame):
    # The first signal starts the clean-up (QEMU stopped, the trace
    # instance removed); a second one (the harness stops a whole process
    # group, and a user presses Ctrl-C twice) must not cut it short.
    for s in INTERRUPTS:
        signal.signal(s, signal.SIG_IGN)
    raise KeyboardInterrupt


def handle_interrupts():
    for s in INTERRUPTS:
        signal.signal(s, _interrupt)
