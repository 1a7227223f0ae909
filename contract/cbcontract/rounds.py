"""rounds.py: the rounds of a run folder: round-<N>/ subfolders, each a complete flat run folder.

A compare run with ROUNDS=R keeps each round as results/<run-id>/round-<N>/
(N = 1..R), a run folder of the flat shape runfolder describes; summary.json
and summary.md stay at the top.  A flat run folder (no round-*/) reads as one
round.  A folder holding both flat result files and round-*/ folders is
refused: which of them a figure came from would be a guess.
"""
import os
import re
import stat

from . import load, runfolder
from .util import InputError, cut

# The round folders' names are the run folder's (runfolder.py): this module reads them.
from .runfolder import MAX_ROUNDS, ROUND_RE, round_dir, round_name, round_number  # noqa: E402,F401


def round_folders(run_dir):
    """[(n, path)] of run_dir's round-<N> folders, sorted by n; [] for a flat
    folder.  An entry named round-... that is no round folder (round-0,
    round-01, a file, a symlink) is refused (InputError): it is not skipped
    silently."""
    out = []
    for name in load.folder_names(run_dir):
        if not name.startswith("round-"):
            continue
        n = round_number(name)
        p = os.path.join(run_dir, name)
        if n is None:
            raise InputError(p, "not a round folder name (round-<N>, N from 1 to %d, no leading zero)" % MAX_ROUNDS)
        try:
            st = os.lstat(p)
        except OSError as e:
            raise InputError(p, "lstat: %s" % e.strerror)
        if not stat.S_ISDIR(st.st_mode):
            raise InputError(p, "not a folder (a round is a folder; a symlink is not followed)")
        out.append((n, p))
    return sorted(out)


def load_rounds(run_dir, skip_bad=False, warn=None):
    """[(n, measurements)] of a run folder, by round: each round folder read
    by load.load_run (skip_bad, warn as there), or a flat folder as round 1.
    Each Measurement gets .round = n, and .run the run folder's name (not
    round-<N>).  InputError for a folder with both flat result files and
    round folders, or a bad round folder."""
    run_dir = run_dir.rstrip("/") or "/"
    rounds = round_folders(run_dir)
    run = os.path.basename(os.path.abspath(run_dir))
    if not rounds:
        out = [(1, load.load_run(run_dir, skip_bad, warn))]
    else:
        flat = load.result_files(run_dir)
        if flat:
            raise InputError(run_dir, "both result files (%s) and round folders: refusing to guess which to read"
                             % cut(", ".join(flat[:3]) + (", ..." if len(flat) > 3 else ""), 120))
        out = [(n, load.load_run(p, skip_bad, warn)) for n, p in rounds]
    for n, ms in out:
        for m in ms:
            m.round = n
            m.run = run
    return out


def has_results(folder):
    """True when folder holds result files, flat or in its round folders."""
    try:
        return bool(load.result_files(folder)) or any(load.result_files(p) for _, p in round_folders(folder))
    except InputError:
        return False


def newest_run(results):
    """The newest run folder under results/ that holds result files, flat or
    in round-<N>/ folders."""
    try:
        names = sorted(os.listdir(results), reverse=True)
    except OSError as e:
        raise InputError(results, "cannot list run folders: %s" % e.strerror)
    for n in names:
        p = os.path.join(results, n)
        if os.path.isdir(p) and not n.startswith(".") and has_results(p):
            return p
    raise InputError(results, "no run folder with host-*.json or guest-*.json")
