"""proplib.py: settings and seeds for the Hypothesis property tests of tests/props (imported, not run);
their TAP goes through tests/lib/taplib.py (the test puts tests/lib on sys.path).

Hypothesis is Debian's python3-hypothesis, seen by /usr/bin/python3 only:
importing this module re-executes the test under /usr/bin/python3 when the
running interpreter lacks it, and skips the whole file when neither has it.

Environment:
  CB_PROP_EXAMPLES=N   examples per property (default DEFAULT_EXAMPLES: all of
                       tests/props well under a minute); a property may scale it
  CB_PROP_SEED=S       S a number: that seed; "random": a new seed, printed.
                       Unset: derandomized (the same inputs every run, for make
                       check), unless CB_PROP_EXAMPLES is set (then random).
  CB_PROP_HANG=S       seconds one example may run before it counts as a hang
                       (default 30)

Hypothesis keeps no example database and its caches go to build/hypothesis/
(nothing is written into the checkout); it has no deadline (the machine is
noisy): a hang is caught by the alarm above instead.
"""
import atexit
import functools
import os
import random
import shutil
import signal
import sys
import traceback

from taplib import Tap, bail_out, skip_all

PYTHON = "/usr/bin/python3"
DEFAULT_EXAMPLES = 200
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

sys.dont_write_bytecode = True
try:
    import hypothesis
except ImportError:
    if os.path.realpath(sys.executable) != os.path.realpath(PYTHON) and os.access(PYTHON, os.X_OK) \
            and not os.environ.get("CB_PROP_REEXEC"):
        os.environ["CB_PROP_REEXEC"] = "1"
        sys.stdout.flush()
        os.execv(PYTHON, [PYTHON, "-B", os.path.abspath(sys.argv[0])] + sys.argv[1:])
    skip_all("Hypothesis not installed for %s (Debian: apt-get install python3-hypothesis)" % PYTHON)
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis.configuration import set_hypothesis_home_dir  # noqa: E402
from hypothesis.reporting import with_reporter  # noqa: E402

# Its caches (the Unicode tables of st.text) go to build/, never into the checkout.
set_hypothesis_home_dir(os.path.join(ROOT, "build", "hypothesis"))

sys.path[:0] = [os.path.join(ROOT, "contract"), os.path.join(ROOT, "host-scripts"), os.path.join(ROOT, "analysis")]


class Hang(Exception):
    """One example ran over CB_PROP_HANG seconds."""


def _env_int(name, default, lo):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    if not v.isdigit() or int(v) < lo:
        bail_out("%s=%s: expected a whole number >= %d" % (name, v, lo))
    return int(v)


def _on_alarm(signum, frame):
    raise Hang("example ran over %d s (CB_PROP_HANG)" % HANG)


EXAMPLES = _env_int("CB_PROP_EXAMPLES", DEFAULT_EXAMPLES, 1)
HANG = _env_int("CB_PROP_HANG", 30, 1)
_seed = os.environ.get("CB_PROP_SEED")
if _seed is None and "CB_PROP_EXAMPLES" not in os.environ:
    SEED = None
elif _seed in (None, "", "random"):
    SEED = random.SystemRandom().getrandbits(32)
else:
    SEED = _env_int("CB_PROP_SEED", 0, 0)


class Props:
    """One test file's properties, each one TAP test: prop() runs it at once.
    tmp: a scratch folder, removed at exit (in memory where there is room:
    the reports are written with fsync)."""

    def __init__(self, name):
        self.name, self.total = name, 0
        self.tallies = {}
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
        self.tap = Tap(prefix="clockbench-props.", dir=shm)
        self.tmp = self.tap.tmp
        atexit.register(shutil.rmtree, self.tmp, True)
        signal.signal(signal.SIGALRM, _on_alarm)
        how = "derandomized" if SEED is None else "seed %d (CB_PROP_SEED=%d repeats it)" % (SEED, SEED)
        Tap.diag("%s: Hypothesis %s, %d examples a property, %s" % (name, hypothesis.__version__, EXAMPLES, how))
        sys.stdout.flush()

    def tally(self, outcome):
        """Counts one example's outcome (printed after the property)."""
        self.tallies[outcome] = self.tallies.get(outcome, 0) + 1

    def prop(self, desc, *strategies, scale=1.0, **kw_strategies):
        """Decorator: runs fn as a property over the strategies, at most
        EXAMPLES*scale examples (at least 1), and prints ok/not ok, the
        number of examples run, and on failure the smallest failing input
        and its exception (as TAP comments)."""
        def run(fn):
            calls = [0]

            @functools.wraps(fn)
            def counted(*a, **k):
                calls[0] += 1
                signal.alarm(HANG)
                try:
                    return fn(*a, **k)
                finally:
                    signal.alarm(0)

            limit = max(1, int(EXAMPLES * scale))
            test = settings(max_examples=limit, derandomize=SEED is None, database=None, deadline=None,
                            print_blob=False,
                            suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                   HealthCheck.large_base_example])(
                given(*strategies, **kw_strategies)(counted))
            if SEED is not None:
                test = hypothesis.seed(SEED)(test)
            report = []
            err = None
            self.tallies = {}
            with with_reporter(report.append):
                try:
                    test()
                except BaseException as e:  # noqa: B902  (a property's failure is any exception)
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    err = e
            self.total += calls[0]
            self.tap.ok(err is None, desc)
            if err is not None:
                for r in report:
                    Tap.diag(r, lines=40, width=400)
                # Each distinct failure (Hypothesis groups them): where it
                # was raised, then its smallest input.
                for e in getattr(err, "exceptions", [err]):
                    tb = traceback.format_exception(type(e), e, e.__traceback__)
                    lines = "".join(tb).splitlines()
                    notes = getattr(e, "__notes__", [])
                    body = lines[:len(lines) - sum(len(str(n).splitlines()) for n in notes)]
                    Tap.diag("\n".join(body[-8:] + [x for n in notes for x in str(n).splitlines()][:12]),
                             lines=20, width=400)
            # Every input the property ran: its pinned examples and any shrinking too.
            Tap.diag("%d examples run (limit %d)%s" % (calls[0], limit, "".join(
                ", %s %d" % kv for kv in sorted(self.tallies.items()))))
            sys.stdout.flush()
            return fn
        return run

    def done(self):
        Tap.diag("%s: %d examples run in all" % (self.name, self.total))
        self.tap.done()
