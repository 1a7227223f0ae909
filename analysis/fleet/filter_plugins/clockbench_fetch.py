"""clockbench_fetch.py: the fleet playbook's filter of a host's run-folder listing: only the contract's names are fetched.

A host's `find` result is data from the host, and a compromised host can
forge it: a path it lists must never choose where a file goes on the
controller.  run_files keeps a path only when it is the run folder's own
path followed by a name contract/cbcontract/runfolder.py makes (NAME or
round-<N>/NAME: runfolder.classify_path, the one list of names); anything
else is skipped with one line.  The playbook then fetches each kept path
to the same relative path under the host's folder on the controller.

Ansible loads this file from filter_plugins/ beside the playbook; it finds
the contract of the checkout it is in, or of the installed suite (make
install, the Debian package), and fails the play if there is none.
"""
import os
import sys

try:
    from ansible.errors import AnsibleFilterError as _Error
    from ansible.utils.unsafe_proxy import wrap_var
except ImportError:  # the tests load it without Ansible
    _Error = ValueError

    def wrap_var(v):
        return v


class ListingError(_Error):
    """A listing that is not find's list of files: one line, the play stops."""


def _contract():
    """cbcontract.runfolder of the checkout (analysis/fleet/filter_plugins/ ->
    contract/) or of the installed suite (share/clockbench/fleet/filter_plugins/
    -> lib/clockbench/contract/)."""
    here = os.path.dirname(os.path.realpath(__file__))
    for d in (os.path.join(here, "..", "..", "..", "contract"),
              os.path.join(here, "..", "..", "..", "..", "lib", "clockbench", "contract")):
        d = os.path.normpath(d)
        if os.path.isfile(os.path.join(d, "cbcontract", "runfolder.py")):
            if d not in sys.path:
                sys.path.insert(0, d)
            from cbcontract import runfolder
            return runfolder
    raise ImportError("clockbench: %s: no contract/cbcontract beside this playbook or in the installed suite" % here)


runfolder = _contract()
MAX_SKIP_LINES = 20  # a forged listing of a million paths says so in this many lines and a count


def run_files(files, run_dir):
    """{"files": [REL...], "skipped": [LINE...]} for find's list of files
    (dicts with a path) in the host's run folder run_dir (the play's own
    string, never the host's): REL each path that is run_dir + "/" + a
    path runfolder.classify_path knows, in order, once; LINE one for each
    other entry (at most MAX_SKIP_LINES, then a count), control characters
    escaped.  Every string is marked unsafe: Ansible never templates it.
    ListingError when files is not a list."""
    if not isinstance(files, list):
        raise ListingError("clockbench: the run folder's listing is a %s, not a list of files" % type(files).__name__)
    prefix = run_dir + "/"
    kept, seen, skipped = [], set(), []
    for entry in files:
        path = entry.get("path") if isinstance(entry, dict) else None
        if not isinstance(path, str):
            why, shown = "not a path", runfolder.show(repr(entry), 60)
        elif not path.startswith(prefix):
            why, shown = "outside the run folder", runfolder.show(path, 100)
        elif runfolder.classify_path(path[len(prefix):]) is None:
            why, shown = "no file name of a run folder (contract/cbcontract/runfolder.py)", runfolder.show(path, 100)
        else:
            rel = path[len(prefix):]
            if rel not in seen:
                seen.add(rel)
                kept.append(rel)
            continue
        skipped.append("skipped %s: %s" % (shown, why))
    if len(skipped) > MAX_SKIP_LINES:
        skipped[MAX_SKIP_LINES:] = ["and %d more paths skipped" % (len(skipped) - MAX_SKIP_LINES)]
    return wrap_var({"files": kept, "skipped": skipped})


class FilterModule:
    def filters(self):
        return {"clockbench_run_files": run_files}
