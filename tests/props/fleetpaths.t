#!/usr/bin/python3
# tier: slow
# test-timeout: 1800
"""fleetpaths.t: properties of the fleet playbook's filter of a host's run-folder listing
(analysis/fleet/filter_plugins/clockbench_fetch.py): every path the contract names
(contract/cbcontract/runfolder.py's namers, flat or in round-<N>/) is fetched; from random and hostile
paths (.., ., absolute paths, empty parts, control characters, any Unicode, mutated contract names) nothing
accepted leaves the run's folder on the controller, even made on a real file system; skip lines stay one
bounded line each (TAP)."""
import importlib.util
import os
import posixpath
import sys

sys.dont_write_bytecode = True
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")]
import proplib  # noqa: E402  (re-executes under /usr/bin/python3 when needed)
from hypothesis import example, strategies as st  # noqa: E402

spec = importlib.util.spec_from_file_location(
    "clockbench_fetch", os.path.join(proplib.ROOT, "analysis", "fleet", "filter_plugins", "clockbench_fetch.py"))
fp = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fp)
rf = fp.runfolder

t = proplib.Props("fleetpaths")
RUN = "/var/lib/clockbench/results/20260101-120000-hv1"
DEST = os.path.join(t.tmp, "fleet", "hv1", "20260101-120000-hv1")
os.makedirs(DEST)

word = st.from_regex(rf.CS_RE, fullmatch=True).filter(lambda s: len(s) <= rf.CS_NAME_MAX)
vcpus = st.integers(1, 4096)
backend = st.sampled_from(rf.BACKENDS)
gz = st.sampled_from(["", ".gz"])
# Every kind's names, from the contract's own namers (runfolder._NAMERS): its arguments by their number, the
# two kinds of one or two arguments named; a kind this cannot build fails the first property.
ARGS = {
    "host": st.tuples(word, st.sampled_from(["json", "csv", "txt"])),
    "tsc-rate": st.tuples(word),
    "crosscheck": st.tuples(st.sampled_from(["json", "txt"])),
    "running-vm": st.tuples(word),
    "running-vm-raw": st.tuples(word),
}


def builder(kind):
    namer, n = rf._NAMERS[kind]
    args = st.just(()) if n == 0 else ARGS.get(kind) if n < 3 else st.tuples(word, vcpus, backend)
    if args is None:
        return None
    # A raw trace is kept gzipped when large (+ .gz), where the pattern has it.
    return st.builds(lambda a, z: namer(*a) + z if rf.classify(namer(*a) + z) else namer(*a), args, gz)


BUILD = {k: builder(k) for k in rf._NAMERS}
contract_name = st.sampled_from(sorted(k for k in BUILD if BUILD[k] is not None)).flatmap(lambda k: BUILD[k])
rnd = st.none() | st.integers(1, rf.MAX_ROUNDS)
contract_rel = st.builds(lambda n, name: name if n is None else rf.round_name(n) + "/" + name, rnd, contract_name)


@t.prop("every path the contract names, flat or in a round, is fetched as is", contract_rel)
@example("round-%d/summary.json" % rf.MAX_ROUNDS)
def named_fetched(rel):
    missing = sorted(k for k in rf.PATTERNS if BUILD.get(k) is None)
    assert not missing, "kinds this test cannot name (add their arguments to ARGS): %s" % missing
    out = fp.run_files([{"path": RUN + "/" + rel}], RUN)
    assert list(out["files"]) == [rel] and not out["skipped"], (rel, out)


def stays_in(rel):
    """Asserts the accepted rel cannot leave DEST: relative, normal, at most round/name, contract names only,
    and, made on this file system (folders, then the file), its real path is under DEST."""
    d = posixpath.join(DEST, rel)
    assert not posixpath.isabs(rel) and posixpath.normpath(d) == d and d.startswith(DEST + "/"), rel
    assert rel.count("/") <= 1 and rf.classify_path(rel) is not None, rel
    assert all(c.isprintable() and c not in "\\{}" for c in rel), rel
    os.makedirs(posixpath.dirname(d), exist_ok=True)
    with open(d, "w"):
        pass
    real = os.path.realpath(d)
    assert real.startswith(os.path.realpath(DEST) + os.sep), (rel, real)
    os.unlink(d)


PIECES = ["..", ".", "", "round-1", "round-0", "round-01", "round-1001", "host-tsc.json", "summary.json", "~",
          "\n", "\r", "\x00", "\t", "{{ x }}", " -> /etc", "host-tsc.json\n", "guest-tsc-1vcpu.json", "\u202e", "\\",
          "host-tsc.json/..", RUN.lstrip("/"), "//"]
piece = st.sampled_from(PIECES) | st.text(max_size=12) | contract_name
hostile_rel = st.lists(piece, min_size=0, max_size=6).map("/".join)


def mutate(s, data):
    """s with one character inserted, replaced or removed at a random place."""
    i = data.draw(st.integers(0, len(s)))
    how = data.draw(st.sampled_from(["insert", "replace", "remove"]))
    c = data.draw(st.sampled_from(["/", ".", "\n", "\x00", "-", "\\", "{", "\u0441"]) | st.characters())
    return s[:i] + c + s[i:] if how == "insert" else s[:i] + (c if how == "replace" else "") + s[i + 1:]


prefixes = st.sampled_from([RUN + "/", RUN, RUN + "//", RUN + "/../", "/", "", RUN + "x/", RUN[:-1], "../"])


@t.prop("random and hostile paths: whatever is fetched stays in the run's folder on the controller",
        prefixes, hostile_rel | contract_rel, st.data(), scale=2.0)
@example(RUN + "/", "../../../../analysis/clockbench-report", None)
@example("", "/etc/passwd", None)
@example(RUN + "/", "round-1/../host-tsc.json", None)
@example(RUN + "/", "host-tsc.json\n", None)
def hostile(prefix, rel, data):
    path = prefix + rel
    if data is not None and data.draw(st.booleans()):
        path = mutate(path, data)
    out = fp.run_files([{"path": path}], RUN)
    files, skipped = list(out["files"]), list(out["skipped"])
    assert len(files) + len(skipped) == 1, (path, out)
    if files:
        assert RUN + "/" + files[0] == path, (path, files)
        stays_in(files[0])
    t.tally("fetched" if files else "skipped")


@t.prop("contract names mutated: fetched only if still a contract path, and then it stays in the folder",
        contract_rel, st.data())
def mutated(rel, data):
    bad = mutate(rel, data)
    out = fp.run_files([{"path": RUN + "/" + bad}], RUN)
    files = list(out["files"])
    assert files in ([], [bad]), (bad, out)
    assert bool(files) == (rf.classify_path(bad) is not None), (bad, out)
    if files:
        stays_in(bad)
    t.tally("fetched" if files else "skipped")


entry = st.one_of(st.builds(lambda p, r: {"path": p + r}, prefixes, hostile_rel | contract_rel),
                  st.none(), st.integers(), st.text(max_size=20), st.builds(dict),
                  st.builds(lambda v: {"path": v}, st.none() | st.integers() | st.lists(st.text(max_size=5), max_size=2)))


@t.prop("any listing: skip lines one each up to %d then a count, each one short line" % fp.MAX_SKIP_LINES,
        st.lists(entry, max_size=40), scale=0.5)
def listing(entries):
    out = fp.run_files(entries, RUN)
    files, skipped = list(out["files"]), list(out["skipped"])
    assert len(files) == len(set(files)), out
    for f in files:
        stays_in(f)
    assert len(skipped) <= fp.MAX_SKIP_LINES + 1, len(skipped)
    for s in skipped:
        assert len(s) <= 200 and s.isprintable(), repr(s)
    accepted = sum(1 for e in entries if isinstance(e, dict) and isinstance(e.get("path"), str)
                   and e["path"].startswith(RUN + "/") and rf.classify_path(e["path"][len(RUN) + 1:]))
    n_skip = len(entries) - accepted
    if n_skip <= fp.MAX_SKIP_LINES:
        assert len(skipped) == n_skip, (n_skip, skipped)
    else:
        assert skipped[-1] == "and %d more paths skipped" % (n_skip - fp.MAX_SKIP_LINES), skipped[-1]


t.done()
