#!/usr/bin/env bash
# tier: slow
# run-real.t: short real runs of both builds; the reports parse, JSON and
# CSV agree, and the path check sees what this machine really does.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for bin in bench/clockbench build/clockbench-static; do
	name=$(basename "$bin")
	if [ ! -x "$bin" ]; then
		skip "$bin not built"
		continue
	fi
	"$bin" --clocks monotonic,realtime_coarse --methods all --threads 1-max --duration 0.02 \
		--check all --tsc-rounds 3000 --quiet --format text \
		--json "$tmp/$name.json" --csv "$tmp/$name.csv" >"$tmp/$name.txt" 2>"$tmp/$name.err"
	ok $? "$name: a short run with every method and check exits 0"
	out=$(python3 tests/bench/check_report.py "$tmp/$name.json" "$tmp/$name.csv" "$tmp/$name.txt" 2>&1)
	ok $? "$name: JSON valid, complete, quantiles ordered; CSV and text agree with it"
	[ -n "$out" ] && diag "$out"
	# The report judged for each fact in one process: a line per check below,
	# 0 when it holds, else 1 and why (the first line: the count of rows).
	mapfile -t res < <(python3 - "$tmp/$name.json" "$tmp/$name.txt" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
print(len(d["results"]))


def null_and_kernel_read():
    rows = d["results"]
    n = len(os.sched_getaffinity(0))
    null = {r["threads"]: r for r in rows if r["method"] == "null"}
    assert sorted(null) == list(range(1, n + 1)), sorted(null)
    assert all(r["clock"] is None and r["path"] is None for r in null.values())
    sys_rows = [r for r in rows if r["method"] == "syscall"]
    assert len(sys_rows) == 2 * n, len(sys_rows)
    text = [ln.split() for ln in open(sys.argv[2])]
    for r in sys_rows:
        # null batches timed between the row's own: their median, not the null row's
        med, nm = r["ns_per_call"]["median"], r["null_median_ns"]
        assert isinstance(nm, float) and nm > 0, r
        if r["kernel_read_negative"]:
            assert r["kernel_read_ns"] is None and med - nm < 0.015, r
            want = "<null"
        else:
            assert abs(r["kernel_read_ns"] - (med - nm)) <= 0.015, (r["kernel_read_ns"], med, nm)
            want = "%.2f" % r["kernel_read_ns"]
        line = [ln for ln in text if ln[:2] == [r["clock"], str(r["threads"])] and len(ln) == 5]
        assert line == [[r["clock"], str(r["threads"]), "%.2f" % med, "%.2f" % nm, want]], (line, r)
    for r in rows:
        assert ("kernel_read_ns" in r) == (r["method"] == "syscall"), r


def warps_and_tsc():
    c = d["checks"]
    assert [w["clock"] for w in c["warps"]] == ["monotonic", "realtime_coarse"], c["warps"]
    assert all(w["reads"] > 0 for w in c["warps"])
    t = c["tsc"]
    assert t["kernel_verdict"] in ("tsc-trusted", "tsc-not-used") and t["verdict"] in ("consistent", "inconsistent", "single-cpu")
    assert len(t["cpus"]) == d["context"]["cpus_allowed"] - 1
    assert all(x["rounds"] == 3000 for x in t["cpus"]), t["cpus"]


def tsc_verdict():
    t = d["checks"]["tsc"]
    for x in t["cpus"]:
        assert x["resolution_cycles"] == x["best_rtt_cycles"] // 2, x
        assert x["within_resolution"] == (abs(x["offset_cycles"]) <= x["resolution_cycles"]), x
        assert "CPU %d |%d| " % (x["cpu"], abs(x["offset_cycles"])) in t["working"], t["working"]
    if t["verdict"] == "consistent":
        assert all(x["within_resolution"] for x in t["cpus"])


def overhead_and_changes():
    cpus = sorted(os.sched_getaffinity(0))
    for r in d["results"]:
        got = [o["cpu"] for o in r["overhead_per_cpu"]]
        assert got == cpus[:r["threads"]], (r["method"], r["threads"], got)
        mean = sum(o["ns_per_call"] for o in r["overhead_per_cpu"]) / r["threads"]
        assert abs(mean - r["overhead_ns_per_call"]) < 0.002, r
        assert r["clocksource"] == d["context"]["clocksource"] and not r["after_change"], r
    assert d["context"]["clocksource_end"] == d["context"]["clocksource"]
    assert d["changed_during_run"] == {"clocksource": False, "path": False, "detail": None}, d["changed_during_run"]
    assert d["probe_end"]["clocks"] == d["probe"]["clocks"]


def mitigations():
    v = "/sys/devices/system/cpu/vulnerabilities"
    want = {f: open(os.path.join(v, f)).read().strip() for f in os.listdir(v)} if os.path.isdir(v) else {}
    assert d["context"]["mitigations"] == want, (d["context"]["mitigations"], want)


for check in (null_and_kernel_read, warps_and_tsc, tsc_verdict, overhead_and_changes, mitigations):
    try:
        check()
        print(0)
    except Exception as e:  # noqa: BLE001 -- any failure fails this check alone
        print("1 %s: %s" % (check.__name__, " ".join(repr(e).split())[:300]))
PY
	)
	rows=${res[0]:-none}
	want=$(( (2 * 3 + 3) * $(nproc) ))
	ok "$([ "$rows" = "$want" ]; echo $?)" "$name: $rows rows for 2 clocks x 3 methods + rdtsc, rdtscp, null x $(nproc) thread counts"
	grep -q '^monotonic  *vdso' "$tmp/$name.txt"
	ok $? "$name: the text table has a monotonic vdso row"
	i=1
	for what in "a null row per thread count; every syscall row's kernel_read_ns is its median less the null batches' timed beside it, in JSON and text" \
		"warp check per clock and TSC check per CPU are in the report" \
		"TSC verdict judges each CPU by its own best round trip, working shown per CPU" \
		"overhead measured on the CPU of each thread; clocksource per row, at the end; probe repeated; nothing changed" \
		"context.mitigations holds every file of the vulnerabilities folder"; do
		r=${res[i]:-1 no answer}
		ok "${r%% *}" "$name: $what"
		[ "${r%% *}" = 0 ] || diag "$r"
		i=$((i + 1))
	done
done

# The path check must report user space for the vDSO on a TSC/kvm-clock
# host, and a syscall for the raw path, whatever the build.
cs=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)
for bin in bench/clockbench build/clockbench-static; do
	name=$(basename "$bin")
	[ -x "$bin" ] || { skip "$bin not built"; continue; }
	"$bin" --probe --format json --output "$tmp/probe-$name.json" 2>"$tmp/probe.err"
	case "$cs" in
	tsc | kvm-clock)
		out=$(python3 tests/bench/check_report.py "$tmp/probe-$name.json" \
			--expect-path=monotonic:vdso:user --expect-path=monotonic:syscall:syscall)
		ok $? "$name: CLOCK_MONOTONIC via vdso is served in user space on $cs; via syscall it is a syscall"
		[ -n "$out" ] && diag "$out"
		;;
	*)
		skip "clocksource $cs has no vDSO clock mode here"
		;;
	esac
	rows=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["results"]))' "$tmp/probe-$name.json")
	ok "$([ "$rows" = 0 ]; echo $?)" "$name: --probe alone measures no cost cells"
done

# Only the syscall method asked for: its rows say syscall, from the probe;
# without a null row its kernel read is null, never guessed.
bench/clockbench --clocks monotonic --methods syscall --threads 1 --duration 0.02 --quiet \
	--format json --output "$tmp/sys.json" 2>/dev/null
out=$(python3 tests/bench/check_report.py "$tmp/sys.json" --expect-path=monotonic:syscall:syscall)
ok $? "--methods syscall rows are labelled syscall"
python3 -c '
import json, sys
r, = json.load(open(sys.argv[1]))["results"]
assert (r["null_median_ns"], r["kernel_read_ns"], r["kernel_read_negative"]) == (None, None, False), r
' "$tmp/sys.json"
ok $? "--methods syscall alone: null_median_ns and kernel_read_ns null, not named negative"

# The default methods include null whenever they include syscall.
bench/clockbench --clocks monotonic --threads 1 --duration 0.02 --quiet --format json --output "$tmp/def.json" 2>/dev/null
python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
assert [r["method"] for r in rows] == ["vdso", "syscall", "rdtsc", "null"], [r["method"] for r in rows]
assert rows[1]["kernel_read_ns"] is not None or rows[1]["kernel_read_negative"], rows[1]
' "$tmp/def.json"
ok $? "the default run measures null beside syscall, so kernel_read_ns is there"

# A clocksource that changes during the run (here a stand-in file the test
# rewrites mid-run) marks the rows after it and the run, loudly.
printf 'tsc\n' >"$tmp/cs"
(sleep 0.5; printf 'hpet\n' >"$tmp/cs") &
CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/cs" bench/clockbench --methods rdtsc,rdtscp --threads 1 --duration 0.4 --quiet \
	--json "$tmp/flip.json" >"$tmp/flip.txt" 2>"$tmp/flip.err"
wait
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c, ch, rows = d["context"], d["changed_during_run"], d["results"]
assert c["clocksource"] == "tsc" and c["clocksource_end"] == "hpet", c
assert ch["clocksource"] is True and "hpet" in ch["detail"], ch
assert rows[-1]["clocksource"] == "hpet" and rows[-1]["after_change"], rows[-1]
assert [r["after_change"] for r in rows] == [r["clocksource"] == "hpet" for r in rows], rows
' "$tmp/flip.json"
ok $? "a clocksource change during the run: context start/end, rows marked, changed_during_run"
grep -q '^!!! CHANGED DURING THE RUN (clocksource)' "$tmp/flip.txt" && grep -q 'CHANGED DURING THE RUN' "$tmp/flip.err"
ok $? "the text report and stderr say so loudly"

# With --force an existing output is replaced whole, never appended to or
# half-written.
printf 'old contents that must go\n' >"$tmp/replace.csv"
bench/clockbench --clocks monotonic --methods rdtsc --threads 1 --duration 0.02 --quiet \
	--format csv --output "$tmp/replace.csv" --force
ok "$(head -1 "$tmp/replace.csv" | grep -q '^clock,method,threads' && ! grep -q old "$tmp/replace.csv"; echo $?)" "--output --force replaces a file atomically"
ok "$([ -z "$(find "$tmp" -name '*.tmp.*')" ]; echo $?)" "no temporary files left behind"
done_testing
