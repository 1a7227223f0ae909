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
  runfolder round RUN_DIR N                 create round N's folder (round-<N>) in a run folder, print its path
  runfolder check-round N                   exit 0 if N can number a round (1 to rounds.MAX_ROUNDS)
  runfolder results-dir | report-dir        where run folders and reports go by default
  runfolder defaults ROUNDS                 check-round ROUNDS, then results-dir, report-dir and
                                            run-id, one a line (what compare asks before a run)
  runfolder plan RESULTS RUN_ID ROUNDS CS...
                                            create a new run folder, print its path, then a line
                                            per round and clocksource: N, CS, the round's folder
                                            (round-<N>, not made; one round: the run folder) and
                                            its host-<CS>.json, .csv, .txt and tsc-rate-<CS>.json,
                                            separated by tabs
  runfolder host-paths RUN_DIR CS           print host-<CS>.json, .csv, .txt and tsc-rate-<CS>.json
                                            of a run folder on one line, separated by tabs; fail if
                                            one exists

Exit status: 0 done, 1 the folder or file exists (or cannot be made), 2 usage.
"""
import datetime
import errno
import os
import re
import socket
import sys
import tempfile
from contextlib import suppress

from .util import SURROGATE, InputError
from .util import cut as show  # a value quoted in a message: escaped, cut

# Schemas of the files in a run folder, one string each.
SCHEMA_HOST = "clockbench/1"
SCHEMA_GUEST = "clockbench-guest/1"
SCHEMA_KVM_TRACE = "clockbench-kvm-trace/1"
SCHEMA_SUMMARY = "clockbench-compare/2"
SCHEMA_RUNNING_VM = "clockbench-running-vm/1"
SCHEMA_PLAN = "clockbench-plan/1"

# A run id and a clocksource name become parts of paths: plain words only.
# Every pattern here is anchored with \A..\Z and matched with fullmatch:
# `$` would also match before a final newline, which bash's $(...) then
# strips ("abe\n" is not "abe").
WORD = r"[A-Za-z0-9][A-Za-z0-9._-]*"
RUN_ID_RE = re.compile(r"\A%s\Z" % WORD)
CS_RE = re.compile(r"\A%s\Z" % WORD)
BACKENDS = ("qemu", "libvirt")

# The guest part of a name: <clocksource>-<N>vcpu[-libvirt].  A guest result,
# its console log and its KVM trace files share it.  N as _guest_part writes
# it (no 0, no leading zero): a name is recognized only if it can be made.
_GUEST = r"(?P<cs>%s)-(?P<vcpus>[1-9][0-9]*)vcpu(?:-(?P<backend>libvirt))?" % WORD

# Every file name of the contract: kind -> pattern.  The order matters only
# for readability; the patterns do not overlap.
PATTERNS = {
    "host": re.compile(r"\Ahost-(?P<cs>%s)\.(?P<ext>json|csv|txt)\Z" % WORD),
    "guest": re.compile(r"\Aguest-%s\.json\Z" % _GUEST),
    "console": re.compile(r"\Aguest-%s\.console\.log\Z" % _GUEST),
    "kvm-trace": re.compile(r"\Akvm-trace-%s\.json\Z" % _GUEST),
    "kvm-trace-raw": re.compile(r"\Akvm-trace-%s\.txt(?P<gz>\.gz)?\Z" % _GUEST),
    "kvm-observe-raw": re.compile(r"\Akvm-observe-%s\.txt(?P<gz>\.gz)?\Z" % _GUEST),
    "tsc-rate": re.compile(r"\Atsc-rate-(?P<cs>%s)\.json\Z" % WORD),
    "crosscheck": re.compile(r"\Acrosscheck\.(?P<ext>json|txt)\Z"),
    "running-vm": re.compile(r"\Arunning-vm-(?P<cs>%s)\.json\Z" % WORD),
    "running-vm-raw": re.compile(r"\Arunning-vm-(?P<cs>%s)\.txt(?P<gz>\.gz)?\Z" % WORD),
    "health": re.compile(r"\Ahealth\.json\Z"),
    "plan": re.compile(r"\Aplan\.json\Z"),
    "summary-md": re.compile(r"\Asummary\.md\Z"),
    "summary-json": re.compile(r"\Asummary\.json\Z"),
}


# A round of a compare run: results/<run-id>/round-<N>/, a run folder of the
# flat shape above (cbcontract.rounds reads them).  Anchored and matched with
# fullmatch, as the patterns above: N as round_name writes it (no 0, no
# leading zero).
ROUND_RE = re.compile(r"\Around-(?P<n>[1-9][0-9]*)\Z")
MAX_ROUNDS = 1000  # a reader of rounds is bounded: no run measures more


def round_name(n):
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_ROUNDS:
        raise ValueError("round %s: expected an integer from 1 to %d" % (show(repr(n)), MAX_ROUNDS))
    return "round-%d" % n


def round_number(name):
    """N of a round folder's name round-<N>, else None."""
    m = ROUND_RE.fullmatch(name)
    return int(m.group("n")) if m and int(m.group("n")) <= MAX_ROUNDS else None


def round_dir(run_dir, n):
    """Creates run_dir/round-<n> (0755, never reusing one) and returns its
    path.  run_dir must exist and pass check_folder (no other user
    can write in it); RunFolderError otherwise, or when the round exists."""
    name = round_name(n)
    if not os.path.isdir(run_dir):
        raise RunFolderError("%s: no such run folder" % show(run_dir))
    return _mkdir_in(run_dir, name, "a round folder is never reused")


def _mkdir_in(parent, name, reused):
    """parent/name made, mode 0755, through one descriptor of parent, which
    check_folder judges first; RunFolderError ("... exists: REUSED") when
    it exists."""
    path = os.path.join(parent, name)
    try:
        fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise RunFolderError("%s: open: %s" % (show(parent), e.strerror))
    try:
        check_folder(parent, fd)  # judged and written in through one descriptor
        os.mkdir(name, 0o755, dir_fd=fd)  # never wider, whatever the umask: check_folder must pass it
    except FileExistsError:
        raise RunFolderError("%s exists: %s" % (show(path), reused))
    except OSError as e:
        raise RunFolderError("%s: mkdir: %s" % (show(path), e.strerror))
    finally:
        os.close(fd)
    return path


# Where run folders and reports go when the user names no folder.  A
# checkout (its top holds the Makefile) keeps results/ of the current folder
# and its reports in its own results/_report/ (beside the runs, so make clean
# never deletes one; no run id begins with _, so it is no run folder, and
# git ignores it as it does new runs); an installed copy (make install, the
# Debian package) uses /var/lib/clockbench/ as root, else the current folder.
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
STATE_DIR = "/var/lib/clockbench"


def default_dirs():
    """(results folder, report folder) for a user who names neither."""
    if os.path.isfile(os.path.join(TOP, "Makefile")):
        return "results", os.path.join(TOP, "results", "_report")
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
    if not isinstance(run_id, str) or not RUN_ID_RE.fullmatch(run_id):
        raise ValueError("run id %s: letters, digits and . _ - only, not starting with . _ or -" % show(repr(run_id)))
    return run_id


# The kernel's CS_NAME_LEN (32, kernel/time/timekeeping.h), less the NUL:
# no clocksource name is longer.
CS_NAME_MAX = 31


def check_cs(cs):
    if not isinstance(cs, str) or not CS_RE.fullmatch(cs):
        raise ValueError("clocksource name %s cannot be part of a file name" % show(repr(cs)))
    if len(cs) > CS_NAME_MAX:
        raise ValueError("clocksource name %s: longer than the kernel's %d characters" % (show(repr(cs)), CS_NAME_MAX))
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


def running_vm_name(cs):
    """A VM that ran across the switch to fallback cs and back (schema
    clockbench-running-vm/1): its phases' master clock and stable bit."""
    return "running-vm-%s.json" % check_cs(cs)


def running_vm_raw_name(cs):
    """That VM's raw trace (gzipped when large: + .gz)."""
    return "running-vm-%s.txt" % check_cs(cs)


SUMMARY_MD = "summary.md"
SUMMARY_JSON = "summary.json"
# health's report of the host when a compare run began (why it is off
# the TSC, host or guest): its one writer is health --output.
HEALTH = "health.json"
# What a compare run was meant to run, written once before its first step:
# its one writer is the sweep (host-scripts/cbhost/sweep.py).
PLAN = "plan.json"

_NAMERS = {
    "host": (host_name, 2),
    "guest": (guest_name, 3),
    "console": (console_name, 3),
    "kvm-trace": (kvm_trace_name, 3),
    "kvm-trace-raw": (kvm_trace_raw_name, 3),
    "kvm-observe-raw": (kvm_observe_raw_name, 3),
    "tsc-rate": (tsc_rate_name, 1),
    "crosscheck": (crosscheck_name, 1),
    "running-vm": (running_vm_name, 1),
    "running-vm-raw": (running_vm_raw_name, 1),
    "summary-md": (lambda: SUMMARY_MD, 0),
    "summary-json": (lambda: SUMMARY_JSON, 0),
    "health": (lambda: HEALTH, 0),
    "plan": (lambda: PLAN, 0),
}


# The kernel's longest file name in bytes (NAME_MAX, include/uapi/linux/limits.h):
# a longer name is no file's, and its digits could pass Python's int limit.
NAME_MAX = 255


def classify(name):
    """(kind, fields) for a file name of the contract, else None (a name
    over NAME_MAX bytes among them).  fields: cs, vcpus (int), backend
    ('qemu' or 'libvirt'), ext, gz where they apply."""
    if not isinstance(name, str) or len(name) > NAME_MAX or len(name.encode("utf-8", "surrogatepass")) > NAME_MAX:
        return None
    for kind, rx in PATTERNS.items():
        m = rx.fullmatch(name)
        if m:
            f = m.groupdict()
            if "vcpus" in f:
                f["vcpus"] = int(f["vcpus"])
                f["backend"] = f.get("backend") or "qemu"
            if "gz" in f:
                f["gz"] = bool(f["gz"])
            return kind, f
    return None


def classify_path(rel):
    """(N, kind, fields) for a path inside a run folder as the contract
    names its files: NAME (N None) or round-<N>/NAME, one '/' between, NAME
    a file name of PATTERNS (classify) and round-<N> ROUND_RE's; None for
    anything else: an absolute path, '.', '..', an empty part, a control
    character or a deeper folder match no pattern here."""
    if not isinstance(rel, str):
        return None
    parts = rel.split("/")
    if len(parts) > 2:
        return None
    n = round_number(parts[0]) if len(parts) == 2 and len(parts[0]) <= NAME_MAX else None
    if len(parts) == 2 and n is None:
        return None
    c = classify(parts[-1])
    return (n,) + c if c else None


def partner(name, kind):
    """The name of the file of `kind` that belongs with a guest-part file
    (a guest result's KVM trace summary, a trace's guest result...)."""
    c = classify(name)
    if not c or "vcpus" not in c[1]:
        raise ValueError("%s is not a guest run's file" % name)
    f = c[1]
    return _NAMERS[kind][0](f["cs"], f["vcpus"], f["backend"])


def make_run(results, run_id=None):
    """Creates results/<run_id> (0755, never reusing one) and returns its
    path.  results (made 0755 if missing) must pass check_folder, judged on
    its open descriptor, and the run folder is made relative to that
    descriptor: whoever could write in results could swap the new folder
    for a symlink, and the results written by name into it would land
    where they chose."""
    run_id = check_run_id(run_id or new_run_id())
    _writer_text(results, "results folder")
    try:
        os.makedirs(results, 0o755, exist_ok=True)
    except OSError as e:
        raise RunFolderError("%s: mkdir: %s" % (show(results), e.strerror))
    return _mkdir_in(results, run_id, "a run folder is never reused; choose another RUN_ID")


def host_step_names(cs):
    """A host step's files (bench-host's): host-<cs>.json, .csv, .txt and
    tsc-rate-<cs>.json."""
    return [host_name(cs, e) for e in ("json", "csv", "txt")] + [tsc_rate_name(cs)]


def check_plan(rounds, css):
    """ValueError unless rounds rounds over the clocksources css can be
    named: a round count of round_name's, and each clocksource a name of
    check_cs's, given once (its files would have one name)."""
    round_name(rounds)
    if not css:
        raise ValueError("no clocksource to plan for")
    for cs in css:
        check_cs(cs)
    twice = sorted({cs for cs in css if css.count(cs) > 1})
    if twice:
        raise ValueError("clocksource %s given twice: its files would have one name" % show(twice[0]))


def plan(results, run_id, rounds, css):
    """Creates a new run folder (make_run) for rounds rounds over the
    clocksources css and returns (its path, [(n, cs, round folder, host
    paths)...]).  Every argument is judged before the folder is made; the
    round folders (round_name) are named, not made: each is made when its
    round begins, in the new folder no other user can write in."""
    check_plan(rounds, css)
    run_dir = make_run(results, check_run_id(run_id))
    steps = []
    for n in range(1, rounds + 1):
        where = run_dir if rounds == 1 else os.path.join(run_dir, round_name(n))
        steps.extend((n, cs, where, [os.path.join(where, f) for f in host_step_names(cs)]) for cs in css)
    return run_dir, steps


def free_path(run_dir, name):
    """run_dir/name, after checking the folder exists, is safe to write in
    (check_folder: also for the engine, which writes by name) and the file
    does not exist."""
    if not os.path.isdir(run_dir):
        raise RunFolderError("%s: no such run folder" % show(run_dir))
    check_folder(run_dir)
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


def check_text(s, what):
    """s, unless it holds a control character (a newline, an escape...):
    no name a user or a result supplies may carry one into a path, a message
    or a file.  ValueError (usage) otherwise."""
    if not isinstance(s, str) or any(ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0 for c in s):
        raise ValueError("%s %s: a control character in it" % (what, show(s)))
    return s


def _writer_text(s, what):
    """check_text(s, what) for a writer: RunFolderError, its one line."""
    try:
        return check_text(s, what)
    except ValueError as e:
        raise RunFolderError(str(e))


def _group_others(gid):
    """The names of the users in group gid (as a supplementary or primary
    group) other than the writer and root; None when gid names no group."""
    import grp
    import pwd
    try:
        g = grp.getgrgid(gid)
    except KeyError:
        return None
    names = set(g.gr_mem) | {p.pw_name for p in pwd.getpwall() if p.pw_gid == gid}
    for uid in (os.geteuid(), 0):
        with suppress(KeyError):
            names.discard(pwd.getpwuid(uid).pw_name)
    return sorted(names)


def check_folder(path, fd=None):
    """Refuses (RunFolderError) an output folder that a user other than the
    writer (or root) can write to, unless it is sticky and the writer's: in
    such a folder that user could swap a name for a symlink while it is
    written.  Also refuses a path with a control character.  fd, when given,
    is the folder open (its fstat is what is judged).  The one check of
    every writer (write_file, Private: reports, plots, summary, textfile)."""
    _writer_text(path, "output folder")
    try:
        st = os.fstat(fd) if fd is not None else os.stat(path)
    except OSError as e:
        raise RunFolderError("%s: stat: %s" % (show(path), e.strerror))
    me = os.geteuid()
    mode = st.st_mode & 0o7777
    why = None
    if st.st_mode & 0o1000 and st.st_uid == me:
        return
    if st.st_uid not in (me, 0):
        why = "owned by uid %d, who can make it writable" % st.st_uid
    elif mode & 0o002:
        why = "writable by every user" + (", sticky but not yours" if st.st_mode & 0o1000 else "")
    elif mode & 0o020:
        others = _group_others(st.st_gid)
        if others is None:
            why = "writable by gid %d, which names no group" % st.st_gid
        elif others:
            why = "writable by group %d (%s)" % (st.st_gid, show(", ".join(others), 40))
    if why:
        raise RunFolderError("%s: a folder other users can write to (mode %04o, %s): refusing to write in it; "
                             "use a folder only you can write to" % (show(path), mode, why))


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _guard(shown, fd, child):
    """Refuses (RunFolderError, check_folder's line) folder fd (shown) as a
    part of a path to write under when another user could swap its entry
    child: it passes check_folder, or it is sticky and child is the
    writer's or root's (or missing: the writer makes it)."""
    try:
        check_folder(shown, fd)
        return
    except RunFolderError:
        if not os.fstat(fd).st_mode & 0o1000:
            raise
        try:
            if os.lstat(child, dir_fd=fd).st_uid not in (os.geteuid(), 0):
                raise
        except FileNotFoundError:
            pass


def open_nofollow(path, what="folder", make=False, guard=False):
    """The folder path open (O_DIRECTORY), reached from / (or the current
    folder) one component at a time with O_NOFOLLOW, so that no symlink on
    the way is followed.  make: a missing component is made (mode 0755)
    through its parent's descriptor.  guard: every folder a component is
    opened in must be one no other user can swap it in (_guard).  The
    caller judges the folder returned.  RunFolderError (one line)
    otherwise.  The one walk of every writer that must not follow a link
    (textfile folders, report folders, the watch's lock folder)."""
    _writer_text(path, what)
    shown = "/" if path.startswith("/") else "."
    try:
        fd = os.open(shown, _DIR_FLAGS)
    except OSError as e:
        raise RunFolderError("%s: open %s: %s" % (show(path), shown, e.strerror))
    try:
        for part in [p for p in path.split("/") if p not in ("", ".")]:
            if guard:
                _guard(shown, fd, part)
            try:
                try:
                    nfd = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not make:
                        raise
                    nfd = make_open(part, 0o755, fd)
            except OSError as e:
                raise RunFolderError("%s: open %s: %s" % (show(path), show(part, 40), open_why(e)))
            os.close(fd)
            fd, shown = nfd, os.path.join(shown, part)
        return fd
    except BaseException:
        os.close(fd)
        raise


def open_why(e):
    """Why an O_NOFOLLOW open of a folder failed (e its OSError), in words."""
    return "not a folder, or a symlink (never followed)" if e.errno in (errno.ENOTDIR, errno.ELOOP) else e.strerror


def make_open(name, mode, dir_fd):
    """Folder name in folder dir_fd, made with mode when missing (a race
    that made it first is fine), opened as a folder, no link followed."""
    with suppress(FileExistsError):
        os.mkdir(name, mode, dir_fd=dir_fd)
    return os.open(name, _DIR_FLAGS, dir_fd=dir_fd)


def private_dir(path):
    """path open: a folder only the writer can enter (the writer's, no
    access for group or others), made mode 0700 when missing, in a parent
    reached by open_nofollow(guard=True) that no other user can swap it in
    (_guard).  Nothing is followed, and a folder of another owner or
    mode is refused, never taken over: RunFolderError (one line)."""
    parent, name = os.path.split(path.rstrip("/"))
    if not name or name in (".", ".."):
        raise RunFolderError("%s: not a folder name" % show(path))
    pfd = open_nofollow(parent or ".", guard=True)
    try:
        _guard(parent or ".", pfd, name)
        fd = make_open(name, 0o700, pfd)
    except OSError as e:
        raise RunFolderError("%s: %s" % (show(path), open_why(e)))
    finally:
        os.close(pfd)
    st = os.fstat(fd)
    if st.st_uid != os.geteuid() or st.st_mode & 0o077:
        os.close(fd)
        raise RunFolderError("%s: owned by uid %d, mode %04o: not a folder of uid %d's alone; refusing to use it"
                             % (show(path), st.st_uid, st.st_mode & 0o7777, os.geteuid()))
    return fd


def report_dir(path):
    """Makes or opens the folder path for a writer that puts its own files
    there by name (a report and its plots, summary --report-out's too) and
    returns the path: reached without following a link, each component
    made or passed in a folder no other user can swap it in
    (open_nofollow, guard), the folder itself passing check_folder.  Every
    name on the path is then fixed but for root and the writer, so what is
    written there by name lands there.  RunFolderError (one line)."""
    fd = open_nofollow(path, "output folder", make=True, guard=True)
    try:
        check_folder(path, fd)
    finally:
        os.close(fd)
    return path


class Private:
    """A private folder (tempfile.mkdtemp: 0700, the writer's) inside the
    destination folder dest, where files are made and then put in place in
    dest by name, relative to dest's open descriptor: link(2) (never
    replacing) or rename(2) (replacing).  Nobody else can enter it, so no
    name a file is made or chmodded under can be swapped for a symlink; the
    final name is never followed (link and rename act on the name itself).
    Use as a context manager: the folder and what is left in it go at exit."""

    def __init__(self, dest):
        self.dest = dest or "."
        self.placed = []
        self.pfd = None
        try:
            self.dfd = os.open(self.dest, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise RunFolderError("%s: open: %s" % (show(self.dest), e.strerror))
        try:
            check_folder(self.dest, self.dfd)
            try:
                self.path = tempfile.mkdtemp(prefix=".clockbench.", suffix=".tmp", dir=self.dest)
            except OSError as e:
                raise RunFolderError("%s: cannot create a file there: %s" % (show(self.dest), e.strerror))
            self.name = os.path.basename(self.path)
            # The folder made is the one in the folder checked, and private.
            self.pfd = os.open(self.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                               dir_fd=self.dfd)
            st = os.fstat(self.pfd)
            if st.st_uid != os.geteuid() or st.st_mode & 0o077:
                raise RunFolderError("%s: the private folder is not private" % show(self.path))
        except BaseException:
            self.close()
            raise

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def inside(self, name):
        """The path of name in the private folder (for a program that writes
        a file by name, as gnuplot does; then adopt(name))."""
        return os.path.join(self.path, name)

    def fd_path(self, name, private=True):
        """name in the private folder (or in dest) as a child given
        pass_fds=self.fds() reaches it: through /proc/self/fd/N, the folder
        itself, not a path whose parents someone could swap meanwhile."""
        return "/proc/self/fd/%d/%s" % (self.pfd if private else self.dfd, name)

    def fds(self):
        return (self.pfd, self.dfd)

    def create(self, name, data, mode=0o644):
        """Makes name in the private folder with data (bytes or str),
        fsynced, mode set on the descriptor."""
        if isinstance(data, str):
            data = data.encode()
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=self.pfd)
        except OSError as e:
            raise RunFolderError("%s: cannot create a file there: %s" % (show(self.dest), e.strerror))
        self._finish(fd, name, data, mode)

    def adopt(self, name, mode=0o644):
        """Takes a file another program made in the private folder: fsync,
        mode set on the descriptor.  Returns its size."""
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=self.pfd)
        except OSError as e:
            raise RunFolderError("%s: %s" % (show(self.inside(name)), e.strerror))
        return self._finish(fd, name, None, mode)

    def _finish(self, fd, name, data, mode):
        try:
            if data is not None:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            os.fsync(fd)
            os.fchmod(fd, mode)
            return os.fstat(fd).st_size
        except OSError as e:
            raise RunFolderError("%s: write: %s" % (show(os.path.join(self.dest, name)), e.strerror))
        finally:
            os.close(fd)

    def place(self, name, final, replace=False):
        """Puts private name in place as dest/final: link(2), failing if
        final exists (a symlink there included), or with replace rename(2)
        over it."""
        where = os.path.join(self.dest, final)
        _writer_text(final, "file name")
        try:
            if replace:
                os.rename(name, final, src_dir_fd=self.pfd, dst_dir_fd=self.dfd)
            else:
                os.link(name, final, src_dir_fd=self.pfd, dst_dir_fd=self.dfd, follow_symlinks=False)
        except FileExistsError:
            raise RunFolderError("%s exists: results are never overwritten; choose another RUN_ID" % show(where))
        except OSError as e:
            raise RunFolderError("%s: write: %s" % (show(where), e.strerror))
        self.placed.append(final)
        with suppress(OSError):
            os.fsync(self.dfd)  # the name made durable; a folder that cannot be fsynced has it all the same
        return where

    def unplace(self, final):
        """Removes a file this placed (the first of a pair whose second
        could not be placed)."""
        os.unlink(final, dir_fd=self.dfd)
        self.placed.remove(final)

    def close(self):
        if self.pfd is not None:
            for n in os.listdir(self.pfd):
                with suppress(OSError):
                    os.unlink(n, dir_fd=self.pfd)
            os.close(self.pfd)
            self.pfd = None
            with suppress(OSError):
                os.rmdir(self.name, dir_fd=self.dfd)
        if getattr(self, "dfd", None) is not None:
            os.close(self.dfd)
            self.dfd = None


def write_file(path, data, mode=0o644, replace=False):
    """Writes data (bytes or str) to path through a private folder beside
    it (Private), fsynced: a reader sees the whole file or none, and no name
    another user can change is followed.  Without replace the file is
    hard-linked into place, which fails if path exists; with it, renamed
    over the old one (reports and other outputs outside results/).  The
    folder must pass check_folder."""
    with Private(os.path.dirname(path) or ".") as p:
        tmp = "f.tmp"
        p.create(tmp, data, mode)
        p.place(tmp, os.path.basename(path), replace)

def write_atomic(path, data, mode=0o644):
    """Writes data (str or bytes) to path, replacing it whole: a reader sees
    the old file or the new one, never half of one (write_file); a failure
    is util.InputError, the readers' one-line error."""
    if isinstance(data, str):
        # A name of invalid UTF-8 (a folder's, read as \udc80-\udcff) written as U+FFFD.
        data = SURROGATE.sub("\ufffd", data).encode("utf-8")
    try:
        write_file(path, data, mode, replace=True)
    except RunFolderError as e:
        raise InputError(None, str(e))



def write_once(path, data, mode=0o644):
    """A result file: written whole, and never replacing an existing one."""
    write_file(path, data, mode)


def _round_arg(n):
    """A round count or number as the command line gives it: digits only,
    1 to MAX_ROUNDS; ValueError (usage) otherwise."""
    if not re.fullmatch(r"[1-9][0-9]*", n) or int(n) > MAX_ROUNDS:
        raise ValueError("round %s: expected a whole number from 1 to %d" % (show(n), MAX_ROUNDS))
    return int(n)


def main(argv):
    # Its callers' name in its lines (CB_PROG: compare's, bench-host's), the
    # user never having typed "runfolder".
    prog = os.environ.get("CB_PROG") or "runfolder"

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
            # Checked as given: the caller's $(...) would strip a final newline.
            check_text(args[0], "results folder")
            print(make_run(args[0], check_run_id(args[1]) if len(args) == 2 else None))
            return 0
        if cmd == "path" and len(args) >= 2:
            run_dir, kind, rest = check_text(args[0], "run folder"), args[1], args[2:]
            if kind not in _NAMERS:
                return usage("unknown kind %s" % show(kind))
            namer, n = _NAMERS[kind]
            if len(rest) not in (n, n - 1 if n == 3 else n):
                return usage("%s takes %d arguments" % (kind, n))
            if n == 3:
                if not re.fullmatch(r"[0-9]+", rest[1]):
                    return usage("vCPU count %s: expected a positive integer" % show(rest[1]))
                rest = [rest[0], int(rest[1])] + rest[2:]
            print(free_path(run_dir, namer(*rest)))
            return 0
        if cmd == "check-name" and len(args) == 1:
            check_cs(args[0])
            return 0
        if cmd in ("round", "check-round") and len(args) == (2 if cmd == "round" else 1):
            n = _round_arg(args[-1])
            if cmd == "round":
                print(round_dir(check_text(args[0], "run folder"), n))
            return 0
        if cmd in ("results-dir", "report-dir") and not args:
            print(default_dirs()[cmd == "report-dir"])
            return 0
        if cmd == "defaults" and len(args) == 1:
            _round_arg(args[0])
            print("\n".join(default_dirs() + (new_run_id(),)))
            return 0
        if cmd == "plan" and len(args) >= 4:
            # Checked as given, as new's: no control character in a path
            # (check_run_id, check_cs the others), and the caller splits
            # the lines at tabs.
            check_text(args[0], "results folder")
            run_dir, steps = plan(args[0], args[1], _round_arg(args[2]), args[3:])
            print(run_dir)
            for n, cs, where, paths in steps:
                print("\t".join([str(n), cs, where] + paths))
            return 0
        if cmd == "host-paths" and len(args) == 2:
            run_dir = check_text(args[0], "run folder")
            print("\t".join(free_path(run_dir, f) for f in host_step_names(args[1])))
            return 0
    except ValueError as e:
        return usage(str(e))
    except RunFolderError as e:
        print("%s: %s" % (prog, e), file=sys.stderr)
        return 1
    return usage("unknown command or arguments: %s" % show(" ".join(argv[1:])))


if __name__ == "__main__":
    sys.exit(main(sys.argv))
