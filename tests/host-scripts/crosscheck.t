#!/usr/bin/env bash
# tier: fast
# crosscheck.t: host-scripts/crosscheck (make crosscheck): its usage errors
# (exit 2, one line, no folder), its refusal without iperf3, cyclictest or sockperf
# (exit 1, naming make deps), peers' outputs it cannot read (stand-ins: one
# line, exit 1, no run folder left), and one very short real run (one round of one
# second, the slow tier's part) whose files hold both tools' figures beside
# the engine's and the ratios.  No timing is asserted: the figures are this machine's.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc=host-scripts/crosscheck

# refused STATUS PATTERN DESCRIPTION [VAR=VALUE...] -- [ARG...]: one stderr
# line matching PATTERN, the exit status, and no run folder made (VAR: the
# environment; settings are options, among the ARGs).
refused() {
	local want=$1 pat=$2 what=$3 rc vars=()
	shift 3
	while [ "$#" -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	env "${vars[@]+"${vars[@]}"}" "$cc" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" -eq "$want" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qE -e "$pat" "$tmp/err" &&
		[ ! -e "$tmp/results" ]; echo $?)" "$what: exit $rc (want $want): $(head -1 "$tmp/err")"
}
# Runs that need no process of their own go through crosscheck's main() in
# one python3 (a process each costs some 0.3 s here).  queue [VAR=VALUE...]
# -- ARG...: queues a run (its number in $n) in that environment; run_queue
# runs those queued; run N's stdout, stderr (its file descriptors: the
# children's output too) and exit status are in $tmp/cc/N.out, N.err, N.rc.
mkdir -p "$tmp/cc"
q=()
nq=0
queue() {
	n=$nq
	nq=$((nq + 1))
	q+=(:: "$@")
}
run_queue() {
	python3 - "$tmp/cc" "$cc" "${q[@]}" >"$tmp/cc.log" 2>&1 <<'PY'
import importlib.machinery, importlib.util, os, sys
sys.path.insert(0, "tests/lib")
from taplib import main_to_files
out_dir, cc = sys.argv[1:3]
sys.argv[0] = cc  # its name, PROG, as run
loader = importlib.machinery.SourceFileLoader("crosscheck", cc)
mod = importlib.util.module_from_spec(importlib.util.spec_from_loader("crosscheck", loader))
loader.exec_module(mod)
runs = []
for a in sys.argv[3:]:
    if a == "::":
        runs.append([[], None])
    elif runs[-1][1] is not None:
        runs[-1][1].append(a)
    elif a == "--":
        runs[-1][1] = []
    else:
        runs[-1][0].append(a)
for env, args in runs:
    n = len([f for f in os.listdir(out_dir) if f.endswith(".rc")])
    rc = main_to_files(mod.main, args, env, os.path.join(out_dir, "%d.out" % n), os.path.join(out_dir, "%d.err" % n))
    with open(os.path.join(out_dir, "%d.rc" % n), "w") as f:
        f.write("%d\n" % rc)
PY
	q=()
}
# refused_q: refused's arguments, the run queued; judged by judge_refused
# once run_queue has run it.
refusals=()
refused_q() {
	local want=$1 pat=$2 what=$3
	shift 3
	queue "$@"
	refusals+=("$want" "$pat" "$what" "$n")
}
judge_refused() {
	local i rc err
	for ((i = 0; i < ${#refusals[@]}; i += 4)); do
		rc=$(<"$tmp/cc/${refusals[i + 3]}.rc")
		err=$tmp/cc/${refusals[i + 3]}.err
		ok "$([ "$rc" -eq "${refusals[i]}" ] && [ "$(wc -l <"$err")" -eq 1 ] && grep -qE -e "${refusals[i + 1]}" "$err" &&
			[ ! -e "$tmp/results" ]; echo $?)" "${refusals[i + 2]}: exit $rc (want ${refusals[i]}): $(head -1 "$err")"
	done
	refusals=()
}
refused_q 2 'expected RESULTS_DIR RUN_ID' "one argument" -- "$tmp/results"
refused_q 2 'expected RESULTS_DIR RUN_ID' "three arguments" -- "$tmp/results" a b
refused_q 2 "run id '../x'" "a run id with a slash" -- "$tmp/results" ../x
refused_q 2 '--duration=0: expected a whole number from 1' "--duration=0" -- --duration=0 "$tmp/results" r
refused_q 2 '--duration=1.5: expected a whole number' "--duration 1.5 (iperf3 and cyclictest take whole seconds)" \
	-- --duration 1.5 "$tmp/results" r
refused_q 2 '--rounds=0: expected a whole number from 1 to 20' "--rounds=0" -- --rounds=0 "$tmp/results" r
refused_q 2 '--msg-size=16777217: expected a whole number from 1 to 16777216' "--msg-size over 16 MiB" \
	-- --msg-size=16777217 "$tmp/results" r
refused_q 2 '--cpus=0-3: expected one or two CPUs' "--cpus as a range" -- --cpus=0-3 "$tmp/results" r
refused_q 2 '--cpus=0,4095: CPU 4095 is not one this process may use' "--cpus beyond the allowed ones" \
	-- --cpus 0,4095 "$tmp/results" r
refused_q 2 'unrecognized arguments: --bogus' "an unknown option" -- --bogus "$tmp/results" r
refused_q 2 'expected one argument' "--rounds without its value" -- "$tmp/results" r --rounds
queue -- --help
help=$n
run_queue
judge_refused
rc=$(<"$tmp/cc/$help.rc")
cat "$tmp/cc/$help.out" "$tmp/cc/$help.err" >"$tmp/out"
ok "$([ "$rc" -eq 0 ] && grep -q 'iperf3' "$tmp/out" && grep -q 'cyclictest' "$tmp/out" && grep -q -- '--duration DURATION' "$tmp/out" && grep -q -- '--msg-size MSG_SIZE' "$tmp/out" &&
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

# Peers that print what this script cannot read (stand-ins on PATH, and a
# stand-in engine): malformed numbers, deep JSON, numbers beyond a double.
# Each is one line, exit 1, and no run folder is left; a run that succeeds
# writes finite numbers only (JSON without NaN or Infinity).
fb=$tmp/fakebin
mkdir -p "$fb" || exit 1
cat >"$fb/iperf3" <<'END'
#!/bin/sh
case " $* " in *" --version "*) echo "iperf 3.fake"; exit 0 ;; *" -s "*) echo "Server listening on 5201"; exit 0 ;; esac
cat "$FAKE_DIR/iperf3.out"
END
cat >"$fb/sockperf" <<'END'
#!/bin/sh
case "$1" in --version) echo "sockperf fake"; exit 0 ;; server) echo "sockperf: using recvfrom"; exec sleep 100 ;; esac
cat "$FAKE_DIR/sockperf.out"
END
cat >"$fb/cyclictest" <<'END'
#!/bin/sh
for a; do
	case "$a" in --json=*) j=${a#--json=} ;; --histfile=*) h=${a#--histfile=} ;; --help) echo "cyclictest fake"; exit 0 ;; esac
done
cat "$FAKE_DIR/cyclictest.json" >"$j" && echo "# Max Latencies: 00006" >"$h"
END
cat >"$fb/engine" <<'END'
#!/bin/sh
[ "$1" = --version ] && { echo "clockbench fake"; exit 0; }
w= prev=
for a; do [ "$prev" = --workloads ] && w=$a; prev=$a; done
printf '{"workloads": [{"workload": "%s", "rate": 1.5, "rate_unit": "x", "clocksource": "%s", "latency_us": {"median": 10, "p99": 20, "mean": 11, "max": 30}}]}\n' \
	"$w" "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
END
chmod +x "$fb/iperf3" "$fb/sockperf" "$fb/cyclictest" "$fb/engine"
good() {
	rm -rf "$tmp/fake"
	mkdir "$tmp/fake"
	echo '{"end": {"sum_received": {"bits_per_second": 2e10}, "sum_sent": {"bits_per_second": 2e10}}}' >"$tmp/fake/iperf3.out"
	printf '%s\n' "sockperf: [Valid Duration] RunTime=1.000 sec; SentMessages=1000; ReceivedMessages=1000" \
		"sockperf: Summary: Round trip is 20.000 usec" "sockperf: ---> percentile 50.000 =   19.000" >"$tmp/fake/sockperf.out"
	echo '{"thread": {"0": {"histogram": {"5": 10, "6": 10}, "cycles": 20, "max": 6, "avg": 5.5}}}' >"$tmp/fake/cyclictest.json"
}
# fake RUN_ID: crosscheck with the stand-ins (their outputs in $tmp/fake,
# moved to a folder of the run's own), into $tmp/fres/RUN_ID: queued.
fake() {
	mv "$tmp/fake" "$tmp/fake-$1"
	queue PATH="$fb:$PATH" FAKE_DIR="$tmp/fake-$1" CB_ENGINE="$fb/engine" \
		-- --duration 1 --rounds 1 --cpus 0 "$tmp/fres" "$1"
}
good
fake r0
first=$n
# bad WHAT FILE CONTENT: the stand-in's FILE holds CONTENT (queued, judged
# in order once run): one error line, exit 1, no folder.
cases=()
bad() {
	good
	printf '%s\n' "$3" >"$tmp/fake/$2"
	cases+=("$1")
	fake "r${#cases[@]}"
}
digits() { printf "%${1}s" "" | tr ' ' 9; }
sp() { printf '%s\n' "sockperf: [Valid Duration] RunTime=$1 sec; SentMessages=1; ReceivedMessages=1" \
	"sockperf: Summary: Round trip is 20.000 usec" "sockperf: ---> percentile 50.000 =   $2"; }
cyc() { echo "{\"thread\": {\"0\": {\"histogram\": {\"$1\": 10}, \"cycles\": $2, \"max\": $3, \"avg\": $4}}}"; }
deep=$(printf '%100000s' "" | tr ' ' '[')
bad "iperf3's JSON nested 100000 deep" iperf3.out "$deep"
bad "iperf3's bits_per_second 1e999 (Infinity)" iperf3.out \
	'{"end": {"sum_received": {"bits_per_second": 1e999}, "sum_sent": {"bits_per_second": 1}}}'
bad "sockperf's RunTime=1.2.3" sockperf.out "$(sp 1.2.3 19.000)"
bad "sockperf's median of 400 digits" sockperf.out "$(sp 1.000 "$(digits 400)")"
bad "cyclictest's JSON nested 100000 deep" cyclictest.json "$deep"
bad "cyclictest's avg Infinity" cyclictest.json "$(cyc 5 10 5 Infinity)"
bad "cyclictest's max NaN" cyclictest.json "$(cyc 5 10 NaN 5.0)"
bad "cyclictest's histogram bucket of 5000 digits" cyclictest.json "$(cyc "$(digits 5000)" 10 5 5.0)"
bad "cyclictest's cycles of 400 digits" cyclictest.json "$(cyc 5 "$(digits 400)" 5 5.0)"
run_queue
cp "$tmp/cc/$first.out" "$tmp/out"
cp "$tmp/cc/$first.err" "$tmp/err"
rc=$(<"$tmp/cc/$first.rc")
if [ "$rc" -ne 0 ] || ! python3 -c 'import json, sys
def no(c): raise ValueError("a %s in it" % c)
json.load(open(sys.argv[1]), parse_constant=no)' "$tmp/fres/r0/crosscheck.json"; then
	diag "the stand-ins' good outputs fail (exit $rc): the cases below cannot tell"
	while IFS= read -r line; do diag "$line"; done <"$tmp/err"
fi
for ((n = 1; n <= ${#cases[@]}; n++)); do
	cp "$tmp/cc/$((first + n)).err" "$tmp/err"
	rc=$(<"$tmp/cc/$((first + n)).rc")
	# Progress lines, then the error: every line the command's own, the last a new one.
	last=$(tail -n1 "$tmp/err")
	ok "$([ "$rc" -eq 1 ] && ! grep -qv "^crosscheck: " "$tmp/err" && [ "${#last}" -lt 400 ] &&
		! grep -qE "results in |round [0-9]+/[0-9]+: " <<<"$last" && [ ! -e "$tmp/fres/r$n" ]; echo $?)" \
		"${cases[n - 1]}: exit $rc (want 1), one line, no run folder left: $(cut -c1-200 <<<"$last")"
	[ "$rc" -eq 1 ] || tail -n3 "$tmp/err" | while IFS= read -r line; do diag "$line"; done
done

if ! slow_tier; then
	skip "a short real run: the slow tier's (make check runs it, make check-fast does not)"
	skip "a short real run: its text"
elif [ "$(id -u)" -ne 0 ]; then
	skip "a short real run: needs root (cyclictest's SCHED_FIFO run)"
	skip "a short real run: its text"
elif ! command -v iperf3 >/dev/null || ! command -v cyclictest >/dev/null || ! command -v sockperf >/dev/null; then
	skip "a short real run: needs iperf3, cyclictest and sockperf (make deps-crosscheck)"
	skip "a short real run: its text"
elif [ ! -x bench/clockbench ]; then
	skip "a short real run: bench/clockbench not built"
	skip "a short real run: its text"
else
	"$cc" --duration 1 --rounds 1 "$tmp/results" r1 >"$tmp/out" 2>"$tmp/err"
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
		"--duration 1 --rounds 1: exit $rc; crosscheck.json has iperf3's and cyclictest's figures beside the engine's, and the ratios${why:+: $why}"
	ok "$(grep -q '^| tcp-stream | rate | Gbit/s | .* | iperf3 | ' "$tmp/results/r1/crosscheck.txt" &&
		grep -q 'cyclictest: # Max Latencies: ' "$tmp/results/r1/crosscheck.txt" && grep -q '^  sockperf: [0-9]* round trips' "$tmp/results/r1/crosscheck.txt" &&
		grep -q 'round 1/1: iperf3' "$tmp/err"; echo $?)" \
		"crosscheck.txt has the table and the tools' own lines; progress on stderr"
	[ "$rc" -eq 0 ] || while IFS= read -r line; do diag "$line"; done <"$tmp/err"
fi
done_testing
