"""textfile.py: node_exporter's textfile format and its atomic writer, the project's one Prometheus writer.

Escaping (esc for label values and comments, esc_help for HELP text), sample
families rendered in one place (Families), and write()/write_file(): the
whole file or the old one, never half, made in the folder through its open
descriptor.

The folder (open_folder): reached from / one component at a time with
O_NOFOLLOW, so no symlink on the way is followed (Debian's
/var/lib/prometheus, owned by the prometheus account, holds node-exporter/:
that account could otherwise swap node-exporter for a symlink to /etc and
have root write there).  It must then be the writer's or root's and pass
runfolder.check_folder, or belong to the account node_exporter runs as
(SERVICE_USERS) and be writable by its owner only.  That account may own it
because in such a folder a root writer is as safe as in its own: the
temporary file is created O_EXCL|O_NOFOLLOW relative to the folder's
descriptor, written and chmodded through its own descriptor, and renamed
(which never follows the final name) into place: nothing is ever reopened
by a name the owner can change.  What the owner can do (delete, replace or
symlink the textfile) it could do to its own input anyway.
"""
import errno
import os
import re
import stat
from contextlib import suppress

from .runfolder import RunFolderError, check_folder, check_text, make_open, open_nofollow, open_why, private_dir, show
from .util import SURROGATE, InputError

# The accounts node_exporter runs as: Debian's prometheus-node-exporter
# (User=prometheus in its unit), upstream's examples (node_exporter).
SERVICE_USERS = ("prometheus", "node_exporter", "node-exporter")
MODE = 0o644  # node_exporter reads it as another user

# Characters a textfile line cannot hold as they are: control characters
# other than the line feed (escaped below), the Unicode line breaks, and
# the invisible ones that make a label value read as another (bidi
# controls: U+061C, U+200E-200F, U+202A-202E, U+2066-2069; zero-width:
# U+200B-200D, U+2060-2064, U+FEFF).  Each becomes U+FFFD, visible, rather
# than nothing: "web<ZWSP>1" must not read as a VM "web1" that may exist.
_DROP = dict.fromkeys([c for c in range(0x20) if c != 0x0a] + [0x7f] + list(range(0x80, 0xa0)) + [0x2028, 0x2029]
                      + [0x061c, 0xfeff] + list(range(0x200b, 0x2010)) + list(range(0x202a, 0x202f))
                      + list(range(0x2060, 0x2065)) + list(range(0x2066, 0x206a)), "\ufffd")


def _clean(v):
    return SURROGATE.sub("\ufffd", str(v).translate(_DROP))


def esc(v):
    """Any string as a label value or comment text of the exposition format:
    backslash, double quote and line feed escaped (the format's three
    escapes), other control characters, bidi and zero-width characters and
    lone surrogates replaced by U+FFFD (_DROP), so that it stays within its
    line and its quotes and reads as what it is."""
    return _clean(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def esc_help(v):
    """Any string as HELP text: backslash and line feed escaped (HELP's
    two escapes; a double quote stays as it is), control characters as in
    esc()."""
    return _clean(v).replace("\\", "\\\\").replace("\n", "\\n")


def fmt_value(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if v != v:
        return "NaN"
    if v in (float("inf"), float("-inf")):
        return "+Inf" if v > 0 else "-Inf"
    return "%.12g" % v


NAME = re.compile(r"\A[a-zA-Z_:][a-zA-Z0-9_:]*\Z")
LABEL = re.compile(r"\A[a-zA-Z_][a-zA-Z0-9_]*\Z")


class Families:
    """Samples grouped by metric name, in the order first seen; help: name
    -> HELP text (every name added must have one); types: name -> TYPE
    (default gauge)."""

    def __init__(self, help, types=None):
        self.help, self.types = help, types or {}
        self.order, self.samples = [], {}

    def add(self, name, labels, value):
        """labels: [(name, value)], a None value leaves that label out; a
        None sample value leaves the sample out."""
        if value is None:
            return
        if name not in self.samples:
            if not NAME.match(name) or name not in self.help:
                raise ValueError("metric %s: not a name, or no HELP for it" % show(name))
            self.order.append(name)
            self.samples[name] = []
        self.samples[name].append((labels, value))

    def text(self, comments=()):
        """The textfile: comments first ("# clockbench: ..."), then each
        family's HELP, TYPE gauge and samples; a repeated label set is
        written once (its first value)."""
        out = ["# clockbench: %s" % esc(c) for c in comments]
        for name in self.order:
            out.append("# HELP %s %s" % (name, esc_help(self.help[name])))
            out.append("# TYPE %s %s" % (name, self.types.get(name, "gauge")))
            seen = set()
            for labels, v in self.samples[name]:
                for k, _ in labels:
                    if not LABEL.match(k):
                        raise ValueError("label %s: not a label name" % show(k))
                lab = ",".join('%s="%s"' % (k, esc(val)) for k, val in labels if val is not None)
                if lab in seen:
                    continue
                seen.add(lab)
                out.append("%s{%s} %s" % (name, lab, fmt_value(v)) if lab else "%s %s" % (name, fmt_value(v)))
        return "\n".join(out) + "\n"


def _owner_ok(uid):
    """True for the writer, root and the accounts of SERVICE_USERS."""
    if uid in (os.geteuid(), 0):
        return True
    import pwd
    for n in SERVICE_USERS:
        with suppress(KeyError):
            if pwd.getpwnam(n).pw_uid == uid:
                return True
    return False


def open_folder(path):
    """The folder path open (O_DIRECTORY), reached component by component
    from / (or the current folder) without following a symlink, judged as
    the module's docstring says; RunFolderError (one line) otherwise."""
    fd = open_nofollow(path, "textfile folder")
    try:
        st = os.fstat(fd)
        if st.st_uid in (os.geteuid(), 0):
            check_folder(path, fd)
        elif not _owner_ok(st.st_uid):
            raise RunFolderError("%s: owned by uid %d, neither root nor node_exporter's account (%s): refusing to "
                                 "write in it" % (show(path), st.st_uid, ", ".join(SERVICE_USERS)))
        elif st.st_mode & 0o022:
            raise RunFolderError("%s: a folder other users can write to (mode %04o): refusing to write in it"
                                 % (show(path), st.st_mode & 0o7777))
        return fd
    except BaseException:
        os.close(fd)
        raise


_TMP = ".clockbench-%s.%s.tmp"  # the target's name, 12 hex digits
_TMP_RE = re.compile(r"\A\.clockbench-(.+)\.[0-9a-f]{12}\.tmp\Z", re.S)


LOCK = "textfile-%x-%x.lock"  # a textfile folder's lock in the lock folder: its device and inode


def hold(folder, name, lock_dir):
    """(the folder open (open_folder), the lock held) for the one writer of
    textfile name in it, whose temporaries a kill left there are then
    removed (those of other names are kept).  The lock is a flock on a
    file of lock_dir (private_dir: the writer's alone, made 0700 if
    missing) named after the folder's device and inode (LOCK), created
    O_NOFOLLOW (the writer's, mode 0600), and held until its
    descriptor is closed: no other user can open it, so none can hold it
    (a flock on the folder itself, which any user may open, could).
    InputError (one line) when the folder or the lock folder cannot be
    opened, the lock file is not the writer's, or another process holds
    it."""
    import fcntl
    try:
        fd = open_folder(folder)
    except RunFolderError as e:
        raise InputError(None, str(e))
    lfd = None
    try:
        try:
            ld = private_dir(lock_dir)
        except RunFolderError as e:
            raise InputError(None, "the lock folder %s" % e)
        st = os.fstat(fd)
        lname = LOCK % (st.st_dev, st.st_ino)
        try:
            lfd = os.open(lname, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC,
                          0o600, dir_fd=ld)
        except OSError as e:
            why = "a symlink (never followed)" if e.errno == errno.ELOOP else e.strerror
            raise InputError(None, "%s: open: %s" % (show(os.path.join(lock_dir, lname)), why))
        finally:
            os.close(ld)
        lst = os.fstat(lfd)
        if not stat.S_ISREG(lst.st_mode) or lst.st_uid != os.geteuid() or lst.st_mode & 0o077:
            raise InputError(None, "%s: not a regular file of uid %d's alone: refusing to lock on it"
                             % (show(os.path.join(lock_dir, lname)), os.geteuid()))
        try:
            fcntl.flock(lfd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise InputError(None, "%s: another process writes %s there (it holds the folder's lock in %s)"
                                 % (show(folder), show(name, 40), show(lock_dir)))
            raise InputError(None, "%s: flock: %s" % (show(folder), e.strerror))
    except BaseException:
        os.close(fd)
        if lfd is not None:
            os.close(lfd)
        raise
    clean(fd, name)
    return fd, lfd


def clean(fd, name):
    """Removes the temporaries of textfile name (write()'s, a kill left
    them) from the folder open as fd; those of other names are kept."""
    try:
        names = os.listdir(fd)
    except OSError:
        return
    for n in names:
        m = _TMP_RE.match(n)
        if m and m.group(1) == name:
            with suppress(OSError):
                os.unlink(n, dir_fd=fd)


DELEGATE = ".clockbench-%s.d"  # the subfolder delegate() gives a writer: no .prom name, never read itself


def delegate(fd, name, uid, gid):
    """As root, lets account uid:gid (which cannot write there) keep
    textfile name in the folder open as fd: a subfolder of its own
    (DELEGATE, mode 0755, made or taken over, never through a symlink)
    and name a symlink to the file of that name in it (replaced whole, by
    rename).  node_exporter follows the symlink; the account then writes
    with write() in the subfolder.  Returns (its path relative to the
    folder, the subfolder open: write()'s fd, which reaches it whatever the
    account may traverse).  InputError (one line) when it cannot be
    done."""
    sub = DELEGATE % name
    try:
        sfd = make_open(sub, 0o755, fd)
    except OSError as e:
        raise InputError(None, "%s: %s" % (show(sub), open_why(e)))
    try:
        st = os.fstat(sfd)
        if (st.st_uid, st.st_gid) != (uid, gid):
            os.fchown(sfd, uid, gid)
        if st.st_mode & 0o7777 != 0o755:
            os.fchmod(sfd, 0o755)
        clean(sfd, name)
        target = os.path.join(sub, name)
        try:
            cur = os.readlink(name, dir_fd=fd)
        except OSError:
            cur = None
        if cur != target:
            tmp = _TMP % (name, os.urandom(6).hex())
            os.symlink(target, tmp, dir_fd=fd)
            try:
                os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
            except OSError:
                os.unlink(tmp, dir_fd=fd)
                raise
        if not stat.S_ISLNK(os.lstat(name, dir_fd=fd).st_mode):
            raise OSError(errno.EEXIST, "not a symlink")
    except OSError as e:
        os.close(sfd)
        raise InputError(None, "%s for uid %d: %s" % (show(sub), uid, e.strerror))
    return sub, sfd


def write(folder, name, text, mode=MODE, fd=None):
    """Replaces folder/name (a file name; node_exporter reads *.prom) with
    text, whole: a temporary .clockbench-NAME.*.tmp made in the folder,
    fsynced, renamed over name.  fd: the folder already open (delegate()'s,
    left open), else open_folder(folder).  InputError (one line, naming
    the folder) when it cannot be."""
    if not name or "/" in name or name in (".", "..") or name.startswith(".clockbench-"):
        raise InputError(name, "not a file name for a textfile")
    data = _clean(text).encode("utf-8")
    try:
        check_text(name, "textfile name")
        dfd = open_folder(folder) if fd is None else os.dup(fd)
    except (ValueError, RunFolderError) as e:
        raise InputError(None, str(e))
    tmp = None
    try:
        for _ in range(8):
            tmp = _TMP % (name, os.urandom(6).hex())
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=dfd)
                break
            except FileExistsError:
                tmp = None
        else:
            raise OSError(17, "no free temporary name")
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        tmp = None
        with suppress(OSError):
            os.fsync(dfd)
    except OSError as e:
        raise InputError(folder, "write %s: %s" % (show(name, 40), e.strerror))
    finally:
        if tmp is not None:
            with suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
        os.close(dfd)


def write_file(path, text, mode=MODE):
    """write() by a whole path (FOLDER/NAME.prom, or a NAME.prom here)."""
    return write(os.path.dirname(path) or ".", os.path.basename(path), text, mode)
