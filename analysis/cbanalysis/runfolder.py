"""runfolder.py: the run-folder contract: run ids, file names, their patterns, write-once files.

Every program that writes into results/<run-id>/ takes its file names from
here, and every reader recognizes them with the patterns here: no other code
builds or parses a result file's name.  A result file is written once,
atomically (temporary file, fsync, hard link into place), and never
replaced.  docs/run-folder.md describes the folder; this is its code.

Bash reaches it through its command line (host-scripts/runfolder):

  runfolder run-id                          a new default run id
  runfolder new RESULTS [RUN_ID]            create a new run folder, print its path
  runfolder path RUN_DIR KIND [ARGS...]     print the path of one file, fail if it exists
  runfolder check-name CLOCKSOURCE          exit 0 if a clocksource name is safe in a file name
  runfolder results-dir | report-dir        where run folders and reports go by default

Exit status: 0 done, 1 the folder or file exists (or cannot be made), 2 usage.
"""
import datetime
import os
import re
import socket
import sys
import tempfile

# Schemas of the files in a run folder, one string each.
SCHEMA_HOST = "clockbench/1"
SCHEMA_GUEST = "clockbench-guest/1"
SCHEMA_KVM_TRACE = "clockbench-kvm-trace/1"
SCHEMA_SUMMARY = "clockbench-compare/2"

# A run id and a clocksource name become parts of paths: plain words only.
WORD = r"[A-Za-z0-9][A-Za-z0-9._-]*"
RUN_ID_RE = re.compile(r"^%s$" % WORD)
CS_RE = re.compile(r"^%s$" % WORD)
BACKENDS = ("qemu", "libvirt")

# The guest part of a name: <clocksource>-<N>vcpu[-libvirt].  A guest result,
# its console log and its KVM trace files share it.  N as _guest_part writes
# it (no 0, no leading zero): a name is recognized only if it can be made.
_GUEST = r"(?P<cs>%s)-(?P<vcpus>[1-9][0-9]*)vcpu(?:-(?P<backend>libvirt))?" % WORD

# Every file name of the contract: kind -> pattern.  The order matters only
# for readability; the patterns do not overlap.
PATTERNS = {
    "host": re.compile(r"^host-(?P<cs>%s)\.(?P<ext>json|csv|txt)$" % WORD),
    "guest": re.compile(r"^guest-%s\.json$" % _GUEST),
    "console": re.compile(r"^guest-%s\.console\.log$" % _GUEST),
    "kvm-trace": re.compile(r"^kvm-trace-%s\.json$" % _GUEST),
    "kvm-trace-raw": re.compile(r"^kvm-trace-%s\.txt(?P<gz>\.gz)?$" % _GUEST),
    "kvm-observe-raw": re.compile(r"^kvm-observe-%s\.txt(?P<gz>\.gz)?$" % _GUEST),
    "tsc-rate": re.compile(r"^tsc-rate-(?P<cs>%s)\.json$" % WORD),
    "crosscheck": re.compile(r"^crosscheck\.(?P<ext>json|txt)$"),
    "summary-md": re.compile(r"^summary\.md$"),
    "summary-json": re.compile(r"^summary\.json$"),
}


# Where run folders and reports go when the user names no folder.  A
# checkout (its top holds the Makefile) keeps results/ of the current folder
# and its own build/report/; an installed copy (make install, the Debian
# package) uses /var/lib/clockbench/ as root, else the current folder.
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
STATE_DIR = "/var/lib/clockbench"


def default_dirs():
    """(results folder, report folder) for a user who names neither."""
    if os.path.isfile(os.path.join(TOP, "Makefile")):
        return "results", os.path.join(TOP, "build", "report")
    base = STATE_DIR if os.geteuid() == 0 else ""
    return os.path.join(base, "results"), os.path.join(base, "report")


class RunFolderError(Exception):
    """A run folder or file that cannot be made as the contract says: one line."""


def new_run_id(now=None, host=None):
    """<UTC date>-<UTC time>-<short host name>: sorts by time."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    host = (host or socket.gethostname()).split(".")[0]
    host = re.sub(r"[^A-Za-z0-9._-]", "_", host) or "host"
    return now.strftime("%Y%m%d-%H%M%S-") + host


def check_run_id(run_id):
    if not isinstance(run_id, str) or not RUN_ID_RE.match(run_id):
        raise ValueError("run id %r: letters, digits and . _ - only, not starting with . _ or -" % (run_id,))
    return run_id


def check_cs(cs):
    if not isinstance(cs, str) or not CS_RE.match(cs):
        raise ValueError("clocksource name %r cannot be part of a file name" % (cs,))
    return cs


def _guest_part(cs, vcpus, backend):
    check_cs(cs)
    if not isinstance(vcpus, int) or isinstance(vcpus, bool) or vcpus < 1:
        raise ValueError("vCPU count %r: expected a positive integer" % (vcpus,))
    if backend not in BACKENDS:
        raise ValueError("backend %r: expected one of %s" % (backend, ", ".join(BACKENDS)))
    return "%s-%dvcpu%s" % (cs, vcpus, "-libvirt" if backend == "libvirt" else "")


def host_name(cs, ext):
    if ext not in ("json", "csv", "txt"):
        raise ValueError("host result extension %r" % (ext,))
    return "host-%s.%s" % (check_cs(cs), ext)


def guest_name(cs, vcpus, backend="qemu"):
    return "guest-%s.json" % _guest_part(cs, vcpus, backend)


def console_name(cs, vcpus, backend="qemu"):
    return "guest-%s.console.log" % _guest_part(cs, vcpus, backend)


def kvm_trace_name(cs, vcpus, backend="qemu"):
    """The KVM trace summary of one guest run (schema clockbench-kvm-trace/1)."""
    return "kvm-trace-%s.json" % _guest_part(cs, vcpus, backend)


def kvm_trace_raw_name(cs, vcpus, backend="qemu"):
    """The raw tracefs text of the guest's QEMU (gzipped when large: + .gz)."""
    return "kvm-trace-%s.txt" % _guest_part(cs, vcpus, backend)


def kvm_observe_raw_name(cs, vcpus, backend="qemu"):
    """The raw trace of a short KVM VM booted only to observe KVM's clock."""
    return "kvm-observe-%s.txt" % _guest_part(cs, vcpus, backend)


def tsc_rate_name(cs):
    """The TSC rate check run beside the host bench (an engine document,
    --no-cost --check tsc-rate, schema clockbench/1)."""
    return "tsc-rate-%s.json" % check_cs(cs)


def crosscheck_name(ext):
    """The workloads cross-checked against iperf3 and cyclictest (json: the
    figures, txt: the tools' own output)."""
    if ext not in ("json", "txt"):
        raise ValueError("crosscheck extension %r: expected json or txt" % (ext,))
    return "crosscheck.%s" % ext


SUMMARY_MD = "summary.md"
SUMMARY_JSON = "summary.json"

_NAMERS = {
    "host": (host_name, 2),
    "guest": (guest_name, 3),
    "console": (console_name, 3),
    "kvm-trace": (kvm_trace_name, 3),
    "kvm-trace-raw": (kvm_trace_raw_name, 3),
    "kvm-observe-raw": (kvm_observe_raw_name, 3),
    "tsc-rate": (tsc_rate_name, 1),
    "crosscheck": (crosscheck_name, 1),
    "summary-md": (lambda: SUMMARY_MD, 0),
    "summary-json": (lambda: SUMMARY_JSON, 0),
}


def classify(name):
    """(kind, fields) for a file name of the contract, else None.  fields:
    cs, vcpus (int), backend ('qemu' or 'libvirt'), ext, gz where they apply."""
    for kind, rx in PATTERNS.items():
        m = rx.match(name)
        if m:
            f = {k: v for k, v in m.groupdict().items()}
            if "vcpus" in f:
                f["vcpus"] = int(f["vcpus"])
                f["backend"] = f.get("backend") or "qemu"
            if "gz" in f:
                f["gz"] = bool(f["gz"])
            return kind, f
    return None


def partner(name, kind):
    """The name of the file of `kind` that belongs with a guest-part file
    (a guest result's KVM trace summary, a trace's guest result...)."""
    c = classify(name)
    if not c or "vcpus" not in c[1]:
        raise ValueError("%s is not a guest run's file" % name)
    f = c[1]
    return _NAMERS[kind][0](f["cs"], f["vcpus"], f["backend"])


def make_run(results, run_id=None):
    """Creates results/<run_id> (never reusing one); returns its path."""
    run_id = check_run_id(run_id or new_run_id())
    try:
        os.makedirs(results, exist_ok=True)
    except OSError as e:
        raise RunFolderError("%s: mkdir: %s" % (results, e.strerror))
    path = os.path.join(results, run_id)
    try:
        os.mkdir(path)
    except FileExistsError:
        raise RunFolderError("%s exists: a run folder is never reused; choose another RUN_ID" % path)
    except OSError as e:
        raise RunFolderError("%s: mkdir: %s" % (path, e.strerror))
    return path


def free_path(run_dir, name):
    """run_dir/name, after checking the folder exists and the file does not."""
    if not os.path.isdir(run_dir):
        raise RunFolderError("%s: no such run folder" % run_dir)
    p = os.path.join(run_dir, name)
    if os.path.lexists(p):
        raise RunFolderError("%s exists: results are never overwritten; choose another RUN_ID" % p)
    return p


def kept_raw(run_dir, name):
    """The path of a raw trace (kvm-trace-*.txt, kvm-observe-*.txt) as its
    writer kept it: run_dir/name, or name.gz when it was gzipped; None when
    neither exists."""
    for n in (name, name + ".gz"):
        p = os.path.join(run_dir, n)
        if os.path.lexists(p):
            return p
    return None


def write_file(path, data, mode=0o644, replace=False):
    """Writes data (bytes or str) to path through a temporary file beside
    it, fsynced: a reader sees the whole file or none.  Without replace the
    file is hard-linked into place, which fails if path exists; with it,
    renamed over the old one (reports and other outputs outside results/)."""
    if isinstance(data, str):
        data = data.encode()
    d = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=d)
    except OSError as e:
        raise RunFolderError("%s: cannot create a file there: %s" % (d, e.strerror))
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        if replace:
            os.rename(tmp, path)
        else:
            os.link(tmp, path)
    except FileExistsError:
        raise RunFolderError("%s exists: results are never overwritten; choose another RUN_ID" % path)
    except OSError as e:
        raise RunFolderError("%s: write: %s" % (path, e.strerror))
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def write_once(path, data, mode=0o644):
    """A result file: written whole, and never replacing an existing one."""
    write_file(path, data, mode)


def main(argv):
    prog = "runfolder"

    def usage(msg):
        print("%s: %s (see --help)" % (prog, msg), file=sys.stderr)
        return 2

    if len(argv) < 2:
        return usage("a command is needed")
    cmd, args = argv[1], argv[2:]
    try:
        if cmd in ("-h", "--help"):
            print(__doc__.split("\n\n", 2)[2].strip())
            print("kinds: %s" % ", ".join("%s (%d args)" % (k, n) for k, (_, n) in _NAMERS.items()))
            return 0
        if cmd == "run-id" and not args:
            print(new_run_id())
            return 0
        if cmd == "new" and len(args) in (1, 2):
            print(make_run(args[0], args[1] if len(args) == 2 else None))
            return 0
        if cmd == "path" and len(args) >= 2:
            run_dir, kind, rest = args[0], args[1], args[2:]
            if kind not in _NAMERS:
                return usage("unknown kind %r" % kind)
            namer, n = _NAMERS[kind]
            if len(rest) not in (n, n - 1 if n == 3 else n):
                return usage("%s takes %d arguments" % (kind, n))
            if n == 3:
                if not rest[1].isdigit():
                    return usage("vCPU count %r: expected a positive integer" % rest[1])
                rest = [rest[0], int(rest[1])] + rest[2:]
            print(free_path(run_dir, namer(*rest)))
            return 0
        if cmd == "check-name" and len(args) == 1:
            check_cs(args[0])
            return 0
        if cmd in ("results-dir", "report-dir") and not args:
            print(default_dirs()[cmd == "report-dir"])
            return 0
    except ValueError as e:
        return usage(str(e))
    except RunFolderError as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        return 1
    return usage("unknown command or arguments: %s" % " ".join(argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
