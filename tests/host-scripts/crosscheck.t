#!/usr/bin/env bash
# crosscheck.t: host-scripts/crosscheck (make crosscheck): its usage errors
# (exit 2, one line, no folder), its refusal without iperf3, cyclictest or sockperf
# (exit 1, naming make deps), and one very short real run (one round of one
# second) whose files hold both tools' figures beside the engine's and the
# ratios.  No timing is asserted: the figures are this machine's.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=host-scripts/crosscheck

# refused STATUS PATTERN DESCRIPTION [VAR=VALUE...] -- [ARG...]: one stderr
# line matching PATTERN, the exit status, and no run folder made.
refused() {
	local want=$1 pat=$2 what=$3 rc vars=()
	shift 3
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	env "${vars[@]+"${vars[@]}"}" "$cc" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" -eq "$want" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qE "$pat" "$tmp/err" &&
		[ ! -e "$tmp/results" ]; echo $?)" "$what: exit $rc (want $want): $(head -1 "$tmp/err")"
}
refused 2 'expected RESULTS_DIR RUN_ID' "one argument" -- "$tmp/results"
refused 2 'expected RESULTS_DIR RUN_ID' "three arguments" -- "$tmp/results" a b
refused 2 "run id '../x'" "a run id with a slash" -- "$tmp/results" ../x
refused 2 'DURATION=0: expected a whole number from 1' "DURATION=0" DURATION=0 -- "$tmp/results" r
refused 2 'DURATION=1.5: expected a whole number' "DURATION=1.5 (iperf3 and cyclictest take whole seconds)" \
	DURATION=1.5 -- "$tmp/results" r
refused 2 'ROUNDS=0: expected a whole number from 1 to 20' "ROUNDS=0" ROUNDS=0 -- "$tmp/results" r
refused 2 'MSG_SIZE=16777217: expected a whole number from 1 to 16777216' "MSG_SIZE over 16 MiB" \
	MSG_SIZE=16777217 -- "$tmp/results" r
refused 2 'CPUS=0-3: expected one or two CPUs' "CPUS as a range" CPUS=0-3 -- "$tmp/results" r
refused 2 'CPUS=0,4095: CPU 4095 is not one this process may use' "CPUS beyond the allowed ones" \
	CPUS=0,4095 -- "$tmp/results" r
"$cc" --help >"$tmp/out" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && grep -q 'iperf3' "$tmp/out" && grep -q 'cyclictest' "$tmp/out" && grep -q 'DURATION' "$tmp/out" &&
	grep -q 'Exit status' "$tmp/out"; echo $?)" "--help: exit 0, names the peers, the settings and the exit status"

# A PATH with python3 and each tool but one: the missing one is named, with
# make deps, before any folder is made.
for gone in iperf3 cyclictest sockperf; do
	rm -rf "${tmp:?}/bin"
	mkdir "$tmp/bin"
	# The interpreter itself, not a shim that needs a shell on PATH.
	ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$tmp/bin/python3"
	for t in iperf3 cyclictest sockperf taskset; do
		[ "$t" = "$gone" ] || ln -s "$(command -v "$t")" "$tmp/bin/$t"
	done
	refused 1 "^crosscheck: $gone not found: run make deps" "no $gone on PATH" PATH="$tmp/bin" -- "$tmp/results" r
done

if [ "$(id -u)" -ne 0 ]; then
	skip "a short real run: needs root (cyclictest's SCHED_FIFO run)"
	skip "a short real run: its text"
elif ! command -v iperf3 >/dev/null || ! command -v cyclictest >/dev/null || ! command -v sockperf >/dev/null; then
	skip "a short real run: needs iperf3, cyclictest and sockperf (make deps-crosscheck)"
	skip "a short real run: its text"
elif [ ! -x bench/clockbench ]; then
	skip "a short real run: bench/clockbench not built"
	skip "a short real run: its text"
else
	DURATION=1 ROUNDS=1 "$cc" "$tmp/results" r1 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	json=$tmp/results/r1/crosscheck.json
	# Both peers' figures with the engine's, the ratios known, the machine
	# and the date named; no figure's size is judged.
	why=$(python3 - "$json" <<'EOF' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "clockbench-crosscheck/1", d["schema"]
assert d["machine"]["hostname"] and d["machine"]["kernel"] and d["date"].endswith("Z"), d["machine"]
tools = {(f["workload"], f["tool"]) for f in d["figures"] if f["median"] is not None and len(f["values"]) == 1}
for want in (("tcp-stream", "clockbench"), ("tcp-stream", "iperf3"), ("timer", "clockbench"),
             ("timer", "cyclictest"), ("timer", "cyclictest SCHED_FIFO"), ("tcp-rr", "clockbench"),
             ("tcp-rr", "sockperf")):
    assert want in tools, "no %s figure of %s" % want[::-1]
r = {(x["workload"], x["figure"], x["peer"]): x["ratio"] for x in d["ratios"]}
for k in (("tcp-stream", "rate", "iperf3"), ("timer", "latency_median_us", "cyclictest"),
          ("timer", "wakeups_per_s", "cyclictest"), ("tcp-rr", "rate", "sockperf"),
          ("tcp-rr", "latency_median_us", "sockperf")):
    assert isinstance(r.get(k), float) and r[k] > 0, "ratio %s: %s" % (k, r.get(k))
assert any("tcp-rr beside sockperf" in n for n in d["notes"]), d["notes"]
EOF
	)
	why=${why##*$'\n'} # the failed assertion's line
	ok "$([ "$rc" -eq 0 ] && [ -z "$why" ] && [ "$(tail -n1 "$tmp/out")" = "$json" ]; echo $?)" \
		"DURATION=1 ROUNDS=1: exit $rc; crosscheck.json has iperf3's and cyclictest's figures beside the engine's, and the ratios${why:+: $why}"
	ok "$(grep -q '^| tcp-stream | rate | Gbit/s | .* | iperf3 | ' "$tmp/results/r1/crosscheck.txt" &&
		grep -q 'cyclictest: # Max Latencies: ' "$tmp/results/r1/crosscheck.txt" && grep -q '^  sockperf: [0-9]* round trips' "$tmp/results/r1/crosscheck.txt" &&
		grep -q 'round 1/1: iperf3' "$tmp/err"; echo $?)" \
		"crosscheck.txt has the table and the tools' own lines; progress on stderr"
	[ "$rc" -eq 0 ] || while IFS= read -r line; do diag "$line"; done <"$tmp/err"
fi
done_testing
