"""taplib.py: TAP output for every Python test, and the analysis fixtures' paths (imported, not run).

The one TAP writer of the Python tests: Tap (ok, skip, diag, done),
skip_all and bail_out.  A test file reaches it by putting tests/lib on
sys.path; the property tests' setup (tests/props/proplib.py) prints through
it too."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "analysis", "clockbench-report")
FX = os.path.join(ROOT, "tests", "analysis", "fixtures")
BEFORE = os.path.join(FX, "20260101-120000-hv1")
AFTER = os.path.join(FX, "20260201-120000-hv1")
LAB = os.path.join(FX, "20260301-120000-lab")
# A real TCG guest run of today's PID 1 (its facts in bench.context, not in guest).
NEW = os.path.join(FX, "20260115-000000-tcg")
# Workloads (host and 2-vCPU guest, tsc and hpet) and TSC rate checks (tsc: with an RTC, hpet: without).
WL = os.path.join(FX, "20260220-120000-wl")


def skip_all(reason):
    """Skips the whole file (the plan 1..0, one skip for tests/run); exits 0."""
    print("1..0 # SKIP %s" % reason)
    sys.exit(0)


def bail_out(why, status=2):
    """Stops the file with TAP's Bail out! line; exits status."""
    print("Bail out! %s" % why)
    sys.exit(status)


class Tap:
    """One file's tests.  tmp: a scratch folder (under dir, default the
    system's), removed by done()."""

    def __init__(self, prefix="clockbench-test.", dir=None):
        self.n = 0
        self.failed = 0
        self.tmp = tempfile.mkdtemp(prefix=prefix, dir=dir)

    @staticmethod
    def diag(text, lines=20, width=None):
        """Prints text as TAP comments: its first lines lines, each cut to width."""
        for line in str(text).splitlines()[:lines]:
            print("# " + (line if width is None else line[:width]))

    def ok(self, cond, desc, diag=None):
        self.n += 1
        if cond:
            print("ok %d - %s" % (self.n, desc))
        else:
            self.failed += 1
            print("not ok %d - %s" % (self.n, desc))
            if diag:
                self.diag(diag)
        sys.stdout.flush()
        return cond

    def skip(self, reason):
        self.n += 1
        print("ok %d # SKIP %s" % (self.n, reason))

    def copy(self, name, edits=None, src=WL):
        """edited_copy into tmp: run folder src (the workloads fixture
        unless named) as tmp/name, edits {file name: fn(doc)} applied."""
        return edited_copy(self.tmp, name, src, edits)

    def done(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        print("1..%d" % self.n)
        sys.exit(1 if self.failed else 0)


def run(*args, env=None):
    e = dict(os.environ)
    e.pop("CLOCKBENCH_DEBUG", None)
    if env:
        e.update(env)
    # The interpreter running the test, not the shebang: skips a slow pyenv shim.
    p = subprocess.run([sys.executable, TOOL] + list(args), capture_output=True, text=True, env=e, cwd=ROOT)
    return p.returncode, p.stdout, p.stderr


_REPORT = []  # clockbench-report loaded as a module, once


def report_in_process(args, cwd=ROOT, reraise=None):
    """(exit status, stdout, stderr) of clockbench-report ARGS run by its
    main() in this process (a process a call costs some 0.3 s here), as its
    process runs it (sys.exit(main(argv))), in cwd, without
    CLOCKBENCH_DEBUG.  An exception escaping main() escapes here too; with
    reraise (exception types), any other one is printed as the process's
    traceback and is exit 1."""
    import contextlib
    import importlib.machinery
    import importlib.util
    import io
    import traceback
    if not _REPORT:
        loader = importlib.machinery.SourceFileLoader("cbreport", TOOL)
        _REPORT.append(importlib.util.module_from_spec(importlib.util.spec_from_loader("cbreport", loader)))
        loader.exec_module(_REPORT[0])
    out, err = io.StringIO(), io.StringIO()
    debug, here = os.environ.pop("CLOCKBENCH_DEBUG", None), os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = _REPORT[0].main(list(args))
            except SystemExit as e:
                rc = e.code if isinstance(e.code, int) else 0 if e.code is None else 1
            except BaseException as e:  # noqa: BLE001 -- the process's traceback, exit 1
                if reraise is None or isinstance(e, reraise):
                    raise
                traceback.print_exc()
                rc = 1
    finally:
        os.chdir(here)
        if debug is not None:
            os.environ["CLOCKBENCH_DEBUG"] = debug
    return rc, out.getvalue(), err.getvalue()


def main_to_files(main, args, env, out, err):
    """A command's main(ARGS) run in this process as its process would run
    it, its exit status returned: ENV ("VAR=VALUE" words) added to the
    environment for the call; its file descriptors 1 and 2 (so its
    children's output too) into the files OUT and ERR; SystemExit's code,
    sys.exit(TEXT) as the text and exit 1, any other exception as its
    traceback and exit 1.  The environment is restored; the caller restores
    whatever else main() changed."""
    import traceback
    saved = dict(os.environ)
    os.environ.update(v.split("=", 1) for v in env)
    fds = os.dup(1), os.dup(2)
    with open(out, "w") as o, open(err, "w") as e:
        os.dup2(o.fileno(), 1)
        os.dup2(e.fileno(), 2)
        try:
            rc = main(args)
        except SystemExit as x:
            rc = x.code
        except BaseException:  # noqa: BLE001 -- as the process would: a traceback, exit 1
            traceback.print_exc()
            rc = 1
        if rc is not None and not isinstance(rc, int):
            print(rc, file=sys.stderr)
            rc = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(fds[0], 1)
        os.dup2(fds[1], 2)
    os.close(fds[0])
    os.close(fds[1])
    os.environ.clear()
    os.environ.update(saved)
    return rc or 0


class HealthInProcess:
    """health loaded once as a module (self.hc) and its main() run in
    this process (run): each call's output in files of its own under tmp,
    numbered by self.n (next(self.n) also names a test's own files)."""

    def __init__(self, tmp):
        import importlib.machinery
        import importlib.util
        import itertools
        self.tmp, self.n = tmp, itertools.count()
        self.path = os.path.join(ROOT, "host-scripts", "health")
        loader = importlib.machinery.SourceFileLoader("health", self.path)
        self.hc = importlib.util.module_from_spec(importlib.util.spec_from_loader("health", loader))
        loader.exec_module(self.hc)

    def run(self, argv, fmt="json"):
        """main() on argv with the recorded-input flags: (stdout, exit status)."""
        base = os.path.join(self.tmp, "run%d" % next(self.n))
        args = [self.path, "--format", fmt, "--no-tsc-check", "--trace-seconds", "0", "--watchdog-seconds", "0"] + argv
        rc = main_to_files(self.hc.main, args, [], base + ".out", base + ".err")
        return read(base + ".out"), rc


def read(path):
    with open(path) as f:
        return f.read()


def table_row(md, *cells):
    """The first Markdown table row whose leading cells are exactly cells."""
    for line in md.splitlines():
        if not line.startswith("| "):
            continue
        parts = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if parts[:len(cells)] == [str(c) for c in cells]:
            return parts
    return None


def with_null_rows(src, dest, null_ns=20.0):
    """Copies run folder src to dest with a null row (median null_ns) beside
    each syscall thread count of its host files, and the syscall rows'
    kernel_read_ns as the engine writes it (docs/schema.md); returns dest."""
    import copy
    import json
    shutil.copytree(src, dest)
    for name in sorted(os.listdir(dest)):
        if not (name.startswith("host-") and name.endswith(".json")):
            continue
        p = os.path.join(dest, name)
        with open(p) as f:
            doc = json.load(f)
        rows = doc["results"]
        base = next(r for r in rows if r["method"] == "rdtsc")
        for th in sorted({r["threads"] for r in rows if r["method"] == "syscall"}):
            r = copy.deepcopy(base)
            r.update(method="null", threads=th)
            r["ns_per_call"] = {q: null_ns for q in r["ns_per_call"]}
            rows.append(r)
        for r in rows:
            if r["method"] == "syscall":
                k = r["ns_per_call"]["median"] - null_ns
                r.update(null_median_ns=null_ns, kernel_read_ns=None if k < 0 else round(k, 2), kernel_read_negative=k < 0)
        with open(p, "w") as f:
            json.dump(doc, f, indent=1)
    return dest


def edited_copy(tmp, name, src, edits=None):
    """A copy of run folder src as tmp/name, edits {file name: fn(doc)}
    applied to its JSON files (fn None: the file left out)."""
    d = os.path.join(tmp, name)
    shutil.copytree(src, d)
    for fn, e in (edits or {}).items():
        p = os.path.join(d, fn)
        if e is None:
            os.unlink(p)
            continue
        doc = json.loads(read(p))
        e(doc)
        with open(p, "w") as f:
            json.dump(doc, f)
    return d


def signal_and_wait(proc, sig, timeout):
    """Sends sig to proc (a Popen) and returns its exit status, or None
    when it did not end within timeout seconds (then it is killed)."""
    proc.send_signal(sig)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        return None
