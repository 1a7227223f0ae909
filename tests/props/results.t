#!/usr/bin/python3
# tier: slow
# test-timeout: 1800
"""results.t: properties of the results loader (contract/cbcontract/load.py) and of what reads its
measurements: any bytes, any JSON and the fixtures' run folders mutated give measurements that every
report renders, or one InputError line; analysis/clockbench-report exits 0 or 1, one line, no traceback (TAP)."""
import copy
import json
import os
import re
import sys
import types

sys.dont_write_bytecode = True
sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib")]
import proplib  # noqa: E402  (re-executes under /usr/bin/python3 when needed)
from hypothesis import example, strategies as st  # noqa: E402
from taplib import report_in_process  # noqa: E402

from cbcontract import runfolder  # noqa: E402
from cbanalysis import capacity, diff, guesttable, prom, report, summary  # noqa: E402
from cbcontract.load import label_problem, load_file, load_run  # noqa: E402
from cbcontract.util import InputError  # noqa: E402

TOOL = os.path.join(proplib.ROOT, "analysis", "clockbench-report")
FX = os.path.join(proplib.ROOT, "tests", "analysis", "fixtures")
BASES = sorted(os.listdir(FX))
FILES = {b: {n: open(os.path.join(FX, b, n), "rb").read() for n in sorted(os.listdir(os.path.join(FX, b)))}
         for b in BASES}
DOCS = {(b, n): json.loads(data) for b in BASES for n, data in FILES[b].items()}
AFTER = load_run(os.path.join(FX, "20260201-120000-hv1"))

t = proplib.Props("results")
tmp = t.tmp
made = [0]


def one_line(e):
    msg = str(e)
    assert len(msg.splitlines()) == 1, "InputError is not one line: %r" % msg
    return msg


def folder(files, run="20260101-120000-hv1"):
    """A new run folder named run holding files {name: bytes}."""
    made[0] += 1
    d = os.path.join(tmp, str(made[0]), run)
    os.makedirs(d)
    for n, data in files.items():
        with open(os.path.join(d, n), "wb") as f:
            f.write(data)
    return d


PROM_LINE = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? (\S+)$')


def render_all(ms, d):
    """Everything the report command line renders from measurements ms:
    raises nothing but InputError; its files are well formed."""
    run = os.path.basename(d)
    text, doc = summary.render(run, summary.rows_of(ms))
    json.dumps(doc, allow_nan=False)  # summary.json: strict JSON
    out = os.path.join(os.path.dirname(d), "report")
    os.makedirs(out, exist_ok=True)
    report.build(ms, out, sorted(capacity.PRESET_RATES), 100, 64, [("given", 100.0)], False, lambda m: None)
    diff.render(ms, AFTER, run, AFTER[0].run)
    diff.render(AFTER, ms, AFTER[0].run, run)
    capacity.render(capacity.states_from(ms, False), sorted(capacity.PRESET_RATES), 100, 64, 0,
                    capacity.work_from(ms, False))
    for all_clocks in (False, True):
        for line in prom.render(ms, all_clocks).splitlines():
            if not line.startswith("#"):
                m = PROM_LINE.match(line)
                assert m, "not a Prometheus sample line: %r" % line
                float(m.group(4))
            else:
                assert "\n" not in line
    for m in ms:
        if m.kind == "guest":
            guesttable.text(m, m.path)
        why = label_problem(m, "tsc")
        assert why is None or len(why.splitlines()) == 1, "label problem not one line: %r" % why


def verdict(d):
    """load_run(d) and render: the measurements, or None after one InputError line."""
    try:
        ms = load_run(d)
    except InputError as e:
        one_line(e)
        t.tally("load error")
        return None
    try:
        render_all(ms, d)
    except InputError as e:
        one_line(e)
        t.tally("render error")
        return None
    t.tally("rendered")
    return ms


def verdict_file(path):
    try:
        m = load_file(path)
    except InputError as e:
        one_line(e)
        t.tally("load error")
        return None
    return verdict(os.path.dirname(path)) if m else None


# ---- any bytes, any JSON ----

names = st.sampled_from(["host-tsc.json", "guest-tsc-2vcpu.json", "guest-hpet-1vcpu-libvirt.json", "tsc-rate-tsc.json"])
scalars = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
           | st.sampled_from([0, -1, 1, 2**64, -0.0, 1e308, 5e-324, "", "tsc", "monotonic", "vdso", "clockbench/1"]))
values = st.recursive(scalars, lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
                      max_leaves=16)


@t.prop("any bytes in a result file: a measurement or one InputError line", names, st.binary(max_size=2048))
@example("host-tsc.json", b"[" * 100000)  # RecursionError out of json.loads
@example("host-tsc.json", b"{\"a\": " * 100000)
@example("host-tsc.json", b"1" * 5000)  # past int()'s digit limit (json says so: a ValueError)
def any_bytes(name, data):
    verdict_file(os.path.join(folder({name: data}), name))


# The fields the loader reads, at the top level, with any values.
keyed = st.fixed_dictionaries({}, optional={
    "schema": st.sampled_from([runfolder.SCHEMA_HOST, runfolder.SCHEMA_GUEST, runfolder.SCHEMA_KVM_TRACE]) | values,
    "context": values, "results": values, "bench": values, "launcher": values, "guest": values,
    "probe": values, "checks": values, "changed_during_run": values, "probe_end": values,
    "workloads": values})


@t.prop("any JSON in a result file: a measurement or one InputError line", names, values | keyed)
def any_json(name, doc):
    verdict_file(os.path.join(folder({name: json.dumps(doc).encode()}), name))


# ---- the fixtures' run folders, mutated ----

def paths(v, at=()):
    """Every path into a JSON value (the root included)."""
    yield at
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, at + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from paths(x, at + (i,))


def mutate_doc(doc, draw, log):
    """One change at a random place of doc: a value replaced by any JSON,
    a key removed or added, a list item removed or doubled (said in log)."""
    at = draw(st.sampled_from(sorted(paths(doc), key=repr)), label="at")
    if not at:
        doc = draw(values, label="new document")
        log.append("the whole document = %s" % json.dumps(doc)[:200])
        return doc
    parent = doc
    for k in at[:-1]:
        parent = parent[k]
    k = at[-1]
    where = ".".join(map(str, at))
    op = draw(st.sampled_from(["replace", "remove", "add", "double"]), label="op")
    if op == "replace":
        parent[k] = draw(values, label="value")
        log.append("%s = %s" % (where, json.dumps(parent[k])[:200]))
    elif op == "remove":
        del parent[k]
        log.append("%s removed" % where)
    elif op == "add" and isinstance(parent, dict):
        new = draw(st.text(max_size=8), label="key")
        parent[new] = draw(values, label="value")
        log.append("%s.%s added = %s" % (".".join(map(str, at[:-1])), new, json.dumps(parent[new])[:200]))
    elif op == "double" and isinstance(parent, list):
        parent.insert(k, copy.deepcopy(parent[k]))
        log.append("%s doubled" % where)
    return doc


def name_like(kind, draw):
    """A contract file name of kind, with any clocksource word and vCPU count."""
    words = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,12}\Z")
    cs = draw(st.sampled_from(["tsc", "hpet", "kvm-clock", "acpi_pm"]) | words, label="cs")
    if kind in ("host", "tsc-rate"):
        return "%s-%s.json" % (kind, cs)
    vcpus = draw(st.integers(0, 300) | st.sampled_from(["00", "007"]).map(int), label="vcpus")
    lib = draw(st.booleans(), label="libvirt") and "-libvirt" or ""
    return "%s-%s-%dvcpu%s.json" % ("guest" if kind == "guest" else "kvm-trace", cs, vcpus, lib)


@st.composite
def run_folders(draw):
    """(what was changed, files {name: bytes}) of a fixture run folder
    changed 1-4 times: its JSON edited, its bytes cut or flipped, a file
    renamed, removed or added."""
    base = draw(st.sampled_from(BASES), label="fixture")
    log = [base]
    files = dict(FILES[base])
    docs = {n: copy.deepcopy(DOCS[(base, n)]) for n in files}
    for _ in range(draw(st.integers(1, 4), label="changes")):
        n = draw(st.sampled_from(sorted(docs)), label="file")
        how = draw(st.sampled_from(["json"] * 6 + ["cut", "flip", "rename", "remove", "add"]), label="how")
        if how == "json":
            log.append(n + ":")
            docs[n] = mutate_doc(docs[n], draw, log)
            files[n] = json.dumps(docs[n], indent=draw(st.sampled_from([None, 1]))).encode()
        elif how == "cut":
            files[n] = files[n][:draw(st.integers(0, len(files[n])), label="cut at")]
            log.append("%s cut to %d bytes" % (n, len(files[n])))
        elif how == "flip":
            i = draw(st.integers(0, max(0, len(files[n]) - 1)), label="flip at")
            files[n] = files[n][:i] + bytes([files[n][i:i + 1][0] ^ 0xff if files[n] else 0]) + files[n][i + 1:]
            log.append("%s byte %d flipped" % (n, i))
        elif how == "rename":
            kind = (runfolder.classify(n) or ("host",))[0]
            new = name_like(kind if kind in ("host", "guest", "kvm-trace", "tsc-rate") else "host", draw)
            files[new], docs[new] = files.pop(n), docs.pop(n)
            log.append("%s renamed %s" % (n, new))
        elif how == "remove" and len(docs) > 1:
            del files[n], docs[n]
            log.append("%s removed" % n)
        elif how == "add":
            new = name_like(draw(st.sampled_from(["host", "guest", "kvm-trace", "tsc-rate"]), label="kind"), draw)
            src = draw(st.sampled_from(sorted(DOCS)), label="copy of")
            files[new], docs[new] = FILES[src[0]][src[1]], copy.deepcopy(DOCS[src])
            log.append("%s added, a copy of %s/%s" % (new, src[0], src[1]))
    return " | ".join(log), files


def edited(base, name, at, value):
    """(what, files) of fixture base with one value of file name replaced."""
    doc = copy.deepcopy(DOCS[(base, name)])
    parent = doc
    for k in at[:-1]:
        parent = parent[k]
    parent[at[-1]] = value
    files = dict(FILES[base])
    files[name] = json.dumps(doc).encode()
    return "%s: %s = %s" % (name, ".".join(map(str, at)), json.dumps(value)), files


# A guest result named for 0 vCPUs: loading it raised ValueError (runfolder.partner).
ZERO_VCPUS = ("guest-tsc-0vcpu.json", {"guest-tsc-0vcpu.json": FILES["20260115-000000-tcg"]["guest-tsc-1vcpu.json"]})


@t.prop("fixture run folders edited, cut, renamed: every report renders, or one InputError line", run_folders())
@example(ZERO_VCPUS)
# Facts the loader tolerates, of another type, that a report read as objects or lists:
@example(edited("20260301-120000-lab", "guest-tsc-2vcpu.json", ("bench", "checks"), True))  # report.py
@example(edited("20260201-120000-hv1", "guest-tsc-2vcpu.json", ("launcher", "host"), [None]))  # report.py
@example(edited("20260301-120000-lab", "guest-tsc-2vcpu.json", ("launcher", "pinning", "vcpus"), True))  # guesttable.py
@example(edited("20260101-120000-hv1", "guest-tsc-2vcpu.json", ("bench", "probe", "clocks"), True))  # load.py probe_path
# Line breaks in a file's keys and values, quoted in a message:
@example(edited("20260101-120000-hv1", "kvm-trace-tsc-2vcpu.json", ("life", "events", "\x1e"), None))  # InputError
@example(edited("20260101-120000-hv1", "host-tsc.json", ("results", 0, "clocksource"), "a\nb"))  # label_problem
@example(edited("20260101-120000-hv1", "guest-hpet-2vcpu.json", ("bench", "checks", "warps"), True))  # prom.py
# Workloads and the TSC rate check (the 20260220-120000-wl fixture), with figures of other types:
@example(edited("20260220-120000-wl", "host-hpet.json", ("workloads", 1, "latency_us"), {"median": 1}))
@example(edited("20260220-120000-wl", "guest-tsc-2vcpu.json", ("bench", "workloads", 0, "rate"), 0))
@example(edited("20260220-120000-wl", "tsc-rate-tsc.json", ("checks", "tsc_rate", "rtc"), {"available": True, "edges": 6}))
@example(edited("20260220-120000-wl", "tsc-rate-hpet.json", ("checks", "tsc_rate", "adjtimex"), {"available": False}))
def mutated(changed):
    verdict(folder(changed[1]))


contract_names = st.text(max_size=40) | st.sampled_from(["crosscheck.json", "crosscheck.txt", "crosscheck.csv",
                                                         "tsc-rate-tsc.json", "tsc-rate-.json"]) | st.builds(
    "{}{}-{}vcpu{}{}".format,
    st.sampled_from(["guest-", "kvm-trace-", "kvm-observe-", "host-"]),
    st.sampled_from(["tsc", "kvm-clock", "a.b", "-x", ""]),
    st.sampled_from(["0", "1", "007", "12", ""]) | st.integers(0, 10**6).map(str),
    st.sampled_from(["", "-libvirt", "-qemu"]),
    st.sampled_from([".json", ".console.log", ".txt", ".txt.gz", ".csv"]))


@t.prop("a file name is recognized (runfolder.classify) only if the contract's namer makes it back", contract_names,
        scale=5)
@example("guest-tsc-0vcpu.json")  # 0 vCPUs: no namer makes it, and loading it raised ValueError
@example("kvm-trace-tsc-007vcpu.json")
def names_round_trip(name):
    c = runfolder.classify(name)
    if c is None:
        t.tally("not a contract name")
        return
    kind, f = c
    t.tally(kind)
    maker, nargs = runfolder._NAMERS[kind]
    args = {0: (), 1: (f.get("cs") or f.get("ext"),), 2: (f.get("cs"), f.get("ext")), 3: (f.get("cs"), f.get("vcpus"), f.get("backend"))}[nargs]
    made = maker(*args)
    assert made == name or (kind.endswith("-raw") and f.get("gz") and made + ".gz" == name), (name, made)


@t.prop("the fixtures as they are: every report renders", st.sampled_from(BASES), scale=0.02)
def fixtures(base):
    assert verdict(folder(FILES[base], base)) is not None


# ---- the command line ----

COMMANDS = ["summary", "check-label", "table", "report", "diff", "capacity", "prom"]


def cli(cmd, d):
    """argv of clockbench-report for cmd on run folder d."""
    out = os.path.join(os.path.dirname(d), "out")
    files = sorted(n for n in os.listdir(d) if n.endswith(".json")) or ["host-tsc.json"]
    f = os.path.join(d, files[0])
    return {"summary": ["summary", d], "check-label": ["check-label", f, "tsc"],
            "table": ["table"] + ([os.path.join(d, n) for n in files if n.startswith("guest-")][:1] or [f]),
            "report": ["report", d, "-o", out], "diff": ["diff", d, os.path.join(FX, BASES[0])],
            "capacity": ["capacity", d], "prom": ["prom", d, "-o", out + ".prom"]}[cmd]


# clockbench-report's main() in this process (a process an example cost some
# 0.35 s here), as its process runs it (sys.exit(main(argv))), in tmp,
# without CLOCKBENCH_DEBUG; what would escape main is the traceback the
# process would print (the example's alarm, proplib.HANG, still bounds it).
def in_process(argv):
    rc, out, err = report_in_process(argv, tmp, reraise=proplib.Hang)
    if "CB_PROP_HANG" in err:  # main() said the alarm's Hang as a bad input: a hang still
        raise proplib.Hang(err.strip())
    return types.SimpleNamespace(returncode=rc, stdout=out, stderr=err)


@t.prop("clockbench-report on mutated run folders: exit 0, or 1 with one line; never a traceback",
        st.sampled_from(COMMANDS), run_folders(), scale=0.05)
@example("summary", ZERO_VCPUS)
def command_line(cmd, changed):
    d = folder(changed[1])
    p = in_process(cli(cmd, d))
    err = p.stderr.splitlines()
    t.tally("exit %d" % p.returncode)
    assert "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr[-2000:]
    assert p.returncode in (0, 1), "exit %d: %s" % (p.returncode, p.stderr[-2000:])
    if p.returncode == 1:
        if cmd == "check-label" and not err:
            assert len(p.stdout.splitlines()) == 1, p.stdout
        else:
            assert len(err) == 1 and err[0].startswith("clockbench-report: "), p.stderr[-2000:]


t.done()
