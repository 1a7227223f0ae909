#!/usr/bin/env bash
# tier: fast
# test-timeout: 120
# watchdog.t: clockbench --check watchdog.  On a stand-in counter whose
# schedule of delays the test constructs (CLOCKBENCH_TEST_WATCHDOG_FILE),
# the tail, the slow readouts and their runs come out as constructed; on
# this host, the real devices (usually unavailable here: exit 3, one line,
# the reason in the report); the JSON object's keys are health's
# (notes: layout.md); usage errors.  Limits and delays are tens of ms, so a
# preemption of this shared machine cannot pass for a constructed one.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
need_engine 20
tap_tmp

run() { "$@" >"$tmp/so" 2>"$tmp/se"; rc=$?; }
# sched FILE N SLOW-INDEX...: N readouts of no delay but 120 ms at each index
sched() {
	python3 - "$@" <<'PY'
import struct, sys
n = int(sys.argv[2]); d = [0] * n
for i in sys.argv[3:]:
    d[int(i)] = 120000000
open(sys.argv[1], "wb").write(struct.pack("<%dI" % n, *d))
PY
}
# jq-less: q FILE PYTHON-EXPRESSION over w (the watchdog_readout object); exit 0 if true
q() { python3 -c 'import json, sys
w = json.load(open(sys.argv[1]))["watchdog_readout"]
sys.exit(0 if eval(sys.argv[2]) else 1)' "$1" "$2" 2>"$tmp/qe"; }
keys='["device","how","unavailable","samples","cpu","load","limit_ns","ns","over_limit","runs_over_limit","interrupted","tail_is_upper_bound"]'

# runs of 1 (twice), 2 and 3: seven slow readouts in 20000 (each spun, 0.84 s
# in all: one run gives the text on stdout, the JSON and the CSV)
sched "$tmp/s" 20000 1000 5000 9000 9001 15000 15001 15002
run env CLOCKBENCH_TEST_WATCHDOG_FILE="$tmp/s" "$bin" --no-cost --quiet --check watchdog --duration 10 \
	--watchdog-limit 50000000 --json "$tmp/r.json" --csv "$tmp/r.csv"
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/se" ]; echo $?)" "stand-in: exit $rc, nothing on stderr $(head -c 200 "$tmp/se")"
q "$tmp/r.json" "list(w) == $keys"
ok $? "the object's keys, in order, are layout.md's"
q "$tmp/r.json" 'w["device"] == "stand-in" and w["how"] == "file-mmap" and w["unavailable"] is None and w["samples"] == 20000 and w["limit_ns"] == 50000000 and w["tail_is_upper_bound"] is True'
ok $? "stand-in, file-mmap, 20000 samples (the schedule's length), the limit given, the tail an upper bound"
q "$tmp/r.json" 'w["over_limit"] == 7'
ok $? "7 readouts over the limit, as constructed"
q "$tmp/r.json" 'w["runs_over_limit"] == {"1": 2, "2": 1, "3": 1, "longest": 3}'
ok $? "runs of consecutive slow readouts: two of 1, one of 2, one of 3, longest 3: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["watchdog_readout"]["runs_over_limit"])' "$tmp/r.json")"
# p99.99 of 20000 is the 19998th: among the seven slow ones; p99.9 is not
q "$tmp/r.json" 'w["ns"]["p99_99"] >= 119e6 and w["ns"]["max"] >= 120e6 and w["ns"]["p99_9"] < 50e6 and w["ns"]["p50"] < 50e6'
ok $? "the tail as constructed: p99.99 and max at 120 ms or more, p99.9 and p50 under the limit: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["watchdog_readout"]["ns"])' "$tmp/r.json")"
q "$tmp/r.json" 'isinstance(w["interrupted"], int) and 0 <= w["interrupted"] <= w["samples"] and w["cpu"] == 0 and w["load"] is False'
ok $? "interrupted is a count within the samples; pinned to the first CPU; no load"
ok "$([ "$(head -c 6 "$tmp/r.csv")" = "clock," ] && [ "$(wc -l <"$tmp/r.csv")" -eq 1 ]; echo $?)" "the CSV (cost rows only) stays a header"

# the same in text (the same run's stdout)
ok "$([ "$rc" -eq 0 ] && grep -q '^watchdog readout (stand-in, file-mmap) on CPU 0, no load, .*: 20000 readouts' "$tmp/so" &&
	grep -qF 'over the 50000000 ns limit: 7 (0.0350%); runs of consecutive slow readouts (length: count): 1: 2, 2: 1, 3: 1; longest 3' "$tmp/so" &&
	grep -q 'the tail is an upper bound' "$tmp/so" && grep -q 'interrupted: [0-9]* samples, an estimate' "$tmp/so"; echo $?)" \
	"text: the device, the count, the slow ones and their runs, the upper bound said"
grep -A5 '^watchdog readout' "$tmp/so" | while IFS= read -r l; do diag "$l"; done

# a higher limit: none slow, no runs (a readout of 120 ms among 2000)
sched "$tmp/s1" 2000 1000
run env CLOCKBENCH_TEST_WATCHDOG_FILE="$tmp/s1" "$bin" --no-cost --quiet --check watchdog --duration 10 \
	--watchdog-limit 1000000000 --format json --output "$tmp/h.json"
q "$tmp/h.json" 'w["over_limit"] == 0 and w["runs_over_limit"] == {"longest": 0}'
ok $? "--watchdog-limit 1 s: no readout over it, no runs (exit $rc)"

# --load on the other CPUs, where there are any.  Not its count over the
# limit: a readout the scheduler preempts past 50 ms (the load itself, a
# busy machine) is a real slow one (make check, 2026-12-02 06:25).
sched "$tmp/z" 2000
run env CLOCKBENCH_TEST_WATCHDOG_FILE="$tmp/z" "$bin" --no-cost --quiet --check watchdog --load --format json --output "$tmp/l.json"
if [ "$(nproc)" -ge 2 ]; then
	q "$tmp/l.json" 'w["load"] is True and w["samples"] == 2000'
	ok $? "--load: load true on $(nproc) CPUs, 2000 samples (exit $rc)"
else
	q "$tmp/l.json" 'w["load"] is False' && grep -q 'no other CPU' "$tmp/se"
	ok $? "--load on one CPU: load false, said (exit $rc)"
fi

# --check all is warps and tsc: no watchdog readout
run env CLOCKBENCH_TEST_WATCHDOG_FILE="$tmp/z" "$bin" --no-cost --quiet --check all --tsc-rounds 3000 --duration 0.02 --format json --output "$tmp/a.json"
ok "$(python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["watchdog_readout"] is not None)' "$tmp/a.json"; echo $?)" \
	"--check all does not run the watchdog readout (null, exit $rc)"

# This host's own devices: measured, or unavailable with exit 3 and one line.
run env -u CLOCKBENCH_TEST_WATCHDOG_FILE "$bin" --no-cost --quiet --check watchdog --duration 0.2 --format json --output "$tmp/host.json"
if [ "$rc" -eq 3 ]; then
	ok "$([ "$(wc -l <"$tmp/se")" -eq 1 ] && grep -q '^clockbench: watchdog readout unavailable: neither device can be read (/dev/hpet: ' "$tmp/se" &&
		q "$tmp/host.json" "list(w) == $keys and w['device'] is None and w['how'] is None and w['unavailable'] and w['samples'] == 0 and set(w['ns'].values()) == {None} and w['runs_over_limit'] == {'longest': 0}"; echo $?)" \
		"this host: exit 3, one line, the report says why: $(cat "$tmp/se")"
else
	ok "$([ "$rc" -eq 0 ] && q "$tmp/host.json" "w['device'] in ('hpet', 'acpi_pm') and w['samples'] > 0"; echo $?)" \
		"this host: measured on its $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["watchdog_readout"]["device"])' "$tmp/host.json" 2>/dev/null) (exit $rc)"
fi

# bad stand-ins are the test's mistake: exit 1, one line
: >"$tmp/empty"
printf 'abc' >"$tmp/odd"
bad=0
for f in "$tmp/empty" "$tmp/odd" "$tmp" "$tmp/none"; do
	run env CLOCKBENCH_TEST_WATCHDOG_FILE="$f" "$bin" --no-cost --quiet --check watchdog
	{ [ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/se")" -eq 1 ] && grep -q '^clockbench: CLOCKBENCH_TEST_WATCHDOG_FILE' "$tmp/se"; } ||
		{ bad=1; diag "$f: exit $rc: $(head -c 200 "$tmp/se")"; }
done
ok "$bad" "an empty, odd-sized, folder or missing stand-in: exit 1, one line each"

# usage
run "$bin" --no-cost --check watchdog --watchdog-limit 0
ok "$([ "$rc" -eq 2 ] && grep -qF -- "--watchdog-limit '0'" "$tmp/se"; echo $?)" "--watchdog-limit 0: exit $rc"
run "$bin" --no-cost --check watchdog --watchdog-limit 12us
ok "$([ "$rc" -eq 2 ]; echo $?)" "--watchdog-limit 12us (whole ns only): exit $rc"
run "$bin" --no-cost --watchdog-limit 1000
ok "$([ "$rc" -eq 2 ] && grep -q 'only with --check watchdog' "$tmp/se"; echo $?)" "--watchdog-limit without the check: exit $rc"
run "$bin" --no-cost --load
ok "$([ "$rc" -eq 2 ] && grep -q -- '--load: only with --check watchdog' "$tmp/se"; echo $?)" "--load without the check: exit $rc"
"$bin" --help >"$tmp/help"
ok "$(grep -q -- '--watchdog-limit NS' "$tmp/help" && grep -q 'watchdog, only by name' "$tmp/help" &&
	grep -q '^  3  the check asked for cannot be made here: --check watchdog' "$tmp/help"; echo $?)" \
	"--help documents --check watchdog, --watchdog-limit, and exit status 3"
ok "$(! grep -qi 'CLOCKBENCH_TEST' "$tmp/help"; echo $?)" "--help does not show the stand-in (a test hook)"
done_testing
