#!/usr/bin/env bash
# tier: slow
# test-timeout: 120
# workload.t: the engine's workloads (--workloads): the rows' shape and
# sanity in both builds (no timing assertions), the text table, CSV
# unchanged, and failures that are one line and exit 1, never a hang: no
# loopback (a new network namespace), a peer that never answers.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

# start TAG CMD...: runs CMD in the background (at most 60 s), its exit
# status, stdout and stderr kept under TAG; expect_fail WHAT PATTERN TAG
# then waits for it and wants exit 1 (not a timeout's 124), one stderr
# line matching PATTERN, nothing on stdout.
start() {
	local tag=$1
	shift
	{ timeout 60 "$@" >"$tmp/$tag.so" 2>"$tmp/$tag.se"; echo $? >"$tmp/$tag.rc"; } &
	eval "pid_$tag=\$! start_$tag=\$SECONDS"
}
expect_fail() {
	local what=$1 pat=$2 tag=$3 rc pid began
	pid=pid_$tag began=start_$tag
	wait "${!pid}"
	rc=$(cat "$tmp/$tag.rc")
	if [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/$tag.se")" -eq 1 ] && grep -qE "$pat" "$tmp/$tag.se" && [ ! -s "$tmp/$tag.so" ]; then
		ok 0 "$what: exit 1 in $((SECONDS - ${!began})) s, '$(cat "$tmp/$tag.se")'"
	else
		ok 1 "$what: exit $rc (want 1), $(wc -l <"$tmp/$tag.se") stderr lines"
		diag "stderr: $(cat "$tmp/$tag.se")"
	fi
}

# A receiver and a server that never answer: the socket time limits end
# them (5 s each, started first: they sleep while the rest runs).
start rr env CLOCKBENCH_TEST_STALL=1 bench/clockbench --no-cost --workloads tcp-rr --duration 0.2 --quiet
start stream env CLOCKBENCH_TEST_STALL=1 bench/clockbench --no-cost --workloads tcp-stream --duration 0.2 --quiet

cpus=$(python3 -c 'import os; print(",".join(map(str, sorted(os.sched_getaffinity(0)))))')

# check_rows FILE NAMES CPUS TIMER_THREADS MSG: the rows named (in order),
# each with its fields, counts above 0, ordered quantiles, the rate its
# count over its seconds, and the CPUs given.
check_rows() {
	python3 - "$@" <<'PY'
import json, sys
path, names, cpus, nt, msg = sys.argv[1], sys.argv[2].split(","), [int(c) for c in sys.argv[3].split(",")], int(sys.argv[4]), int(sys.argv[5])
d = json.load(open(path))
assert d["schema"] == "clockbench/1" and d["results"] == [], "a --no-cost run has no cost rows"
rows = d["workloads"]
assert [r["workload"] for r in rows] == names, [r["workload"] for r in rows]
common = {"workload", "threads", "cpus", "seconds", "clocksource", "after_change", "rate", "rate_unit", "latency_us"}
extra = {"tcp-stream": {"msg_bytes", "bytes"}, "tcp-rr": {"transactions"}, "timer": {"interval_us", "wakeups", "overruns"}}
unit = {"tcp-stream": "Gbit/s", "tcp-rr": "transactions/s", "timer": "wakeups/s"}
for r in rows:
    w = r["workload"]
    assert set(r) == common | extra[w], (w, sorted(set(r) ^ (common | extra[w])))
    assert r["seconds"] > 0 and r["rate"] > 0 and r["rate_unit"] == unit[w], r
    assert r["clocksource"] and r["after_change"] is False, r
    pair = [cpus[0], cpus[1] if len(cpus) > 1 else cpus[0]]
    if w == "tcp-stream":
        assert r["threads"] == 2 and r["cpus"] == pair, r
        assert r["msg_bytes"] == msg and r["bytes"] > 0 and r["latency_us"] is None, r
        count, scale = r["bytes"] * 8, 1e9
    elif w == "tcp-rr":
        assert r["threads"] == 2 and r["cpus"] == pair and r["transactions"] > 0, r
        count, scale = r["transactions"], 1
    else:
        assert r["threads"] == nt and r["cpus"] == cpus[:nt], r
        assert r["interval_us"] == 50 and r["wakeups"] > 0 and r["overruns"] >= 0, r
        count, scale = r["wakeups"], 1
    # the rate is the count over the row's seconds (those rounded to 3 decimals)
    lo, hi = count / (r["seconds"] + 0.0005) / scale, count / (r["seconds"] - 0.0005) / scale
    assert lo - 0.001 <= r["rate"] <= hi + 0.001, (r["rate"], lo, hi)
    if w != "tcp-stream":
        q = r["latency_us"]
        assert list(q) == ["min", "median", "mean", "p99", "p999", "max"], q
        assert 0 <= q["min"] <= q["median"] <= q["p99"] <= q["p999"] <= q["max"], q
        assert q["min"] <= q["mean"] <= q["max"], q
PY
}

for bin in bench/clockbench build/clockbench-static; do
	name=$(basename "$bin")
	if [ ! -x "$bin" ]; then
		skip "$bin not built"
		skip "$bin not built"
		continue
	fi
	"$bin" --no-cost --workloads all --duration 0.3 --format json >"$tmp/all.json" 2>"$tmp/err"
	ok $? "$name: --no-cost --workloads all --duration 0.3 exits 0"
	out=$(check_rows "$tmp/all.json" tcp-stream,tcp-rr,timer "$cpus" "$(nproc)" 65536 2>&1)
	ok $? "$name: three rows, each with its fields, counts, ordered latencies, rate = count / seconds, the CPUs"
	[ -n "$out" ] && diag "$out"
done

bin=bench/clockbench
"$bin" --no-cost --workloads timer,tcp-stream --cpus "${cpus%%,*}" --msg-size 1K --duration 0.2 --quiet \
	--format json >"$tmp/one.json"
out=$(check_rows "$tmp/one.json" tcp-stream,timer "${cpus%%,*}" 1 1024 2>&1)
ok $? "one CPU, 1K writes: both TCP threads on it, timer one thread, rows in the fixed order"
[ -n "$out" ] && diag "$out"

"$bin" --probe --quiet --format json >"$tmp/none.json"
ok "$(python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["workloads"] == []' "$tmp/none.json"; echo $?)" \
	"no --workloads: \"workloads\": []"

"$bin" --methods vdso --clocks monotonic --threads 1 --duration 0.05 --workloads tcp-rr --quiet \
	--format text --csv "$tmp/w.csv" >"$tmp/w.txt"
"$bin" --methods vdso --clocks monotonic --threads 1 --duration 0.05 --quiet --format csv >"$tmp/plain.csv"
grep -qE '^tcp-rr +2 +[0-9]+,[0-9]+ +[0-9.]+ +[0-9.]+ transactions/s( +[0-9.]+){6}  [0-9]+ transactions$' "$tmp/w.txt"
rc=$?
ok $rc "the text report has a workloads table with the tcp-rr row"
[ $rc -eq 0 ] || diag "$(cat "$tmp/w.txt")"
ok "$([ "$(head -1 "$tmp/w.csv")" = "$(head -1 "$tmp/plain.csv")" ] && [ "$(wc -l <"$tmp/w.csv")" -eq 2 ] &&
	! grep -q tcp "$tmp/w.csv"; echo $?)" "CSV keeps the cost rows only: the same header, one row, no workload"


# A new network namespace has its loopback down.
if unshare -rn true 2>/dev/null; then
	for w in tcp-stream tcp-rr; do
		start "ns${w//-/_}" unshare -rn "$bin" --no-cost --workloads "$w" --duration 0.1 --quiet
		expect_fail "$w without loopback (unshare -rn)" "^clockbench: $w: loopback is down" "ns${w//-/_}"
	done
	unshare -rn "$bin" --no-cost --workloads timer --duration 0.1 --quiet --format json >"$tmp/t.json"
	ok $? "timer needs no loopback: it runs in the same namespace"
else
	skip "unshare -rn not permitted here"
	skip "unshare -rn not permitted here"
	skip "unshare -rn not permitted here"
fi

expect_fail "tcp-rr against a server that never answers" '^clockbench: tcp-rr: client recv: no progress within 5 s$' rr
expect_fail "tcp-stream into a receiver that never reads" '^clockbench: tcp-stream: send: no progress within 5 s$' stream
done_testing
