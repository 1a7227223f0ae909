#!/usr/bin/env bash
# run-real.t: short real runs of both builds; the reports parse, JSON and
# CSV agree, and the path check sees what this machine really does.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for bin in bench/clockbench build/clockbench-static; do
	name=$(basename "$bin")
	if [ ! -x "$bin" ]; then
		skip "$bin not built"
		continue
	fi
	"$bin" --clock monotonic,realtime_coarse --method all --threads 1-max --duration 0.1 \
		--check all --tsc-rounds 3000 --quiet --format text \
		--json "$tmp/$name.json" --csv "$tmp/$name.csv" >"$tmp/$name.txt" 2>"$tmp/$name.err"
	ok $? "$name: a short run with every method and check exits 0"
	out=$(python3 tests/check_report.py "$tmp/$name.json" "$tmp/$name.csv" 2>&1)
	ok $? "$name: JSON valid, complete, quantiles ordered; CSV agrees with it"
	[ -n "$out" ] && diag "$out"
	rows=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["results"]))' "$tmp/$name.json")
	want=$(( (2 * 2 + 2) * $(nproc) ))
	ok "$([ "$rows" = "$want" ]; echo $?)" "$name: $rows rows for 2 clocks x 2 paths + 2 baselines x $(nproc) thread counts"
	grep -q '^monotonic  *vdso' "$tmp/$name.txt"
	ok $? "$name: the text table has a monotonic vdso row"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = d["checks"]
assert [w["clock"] for w in c["warps"]] == ["monotonic", "realtime_coarse"], c["warps"]
assert all(w["reads"] > 0 for w in c["warps"])
t = c["tsc"]
assert t["kernel_verdict"] in ("tsc-trusted", "tsc-not-used") and t["verdict"] in ("consistent", "inconsistent", "single-cpu")
assert len(t["cpus"]) == d["context"]["cpus_allowed"] - 1
assert all(x["rounds"] == 3000 for x in t["cpus"]), t["cpus"]
' "$tmp/$name.json"
	ok $? "$name: warp check per clock and TSC check per CPU are in the report"
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
		out=$(python3 tests/check_report.py "$tmp/probe-$name.json" \
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

# Only the syscall method asked for: its rows say syscall, from the probe.
bench/clockbench --clock monotonic --method syscall --threads 1 --duration 0.05 --quiet \
	--format json --output "$tmp/sys.json" 2>/dev/null
out=$(python3 tests/check_report.py "$tmp/sys.json" --expect-path=monotonic:syscall:syscall)
ok $? "--method syscall rows are labelled syscall"

# An existing output is replaced whole, never appended to or half-written.
printf 'old contents that must go\n' >"$tmp/replace.csv"
bench/clockbench --clock monotonic --method rdtsc --threads 1 --duration 0.05 --quiet \
	--format csv --output "$tmp/replace.csv"
ok "$(head -1 "$tmp/replace.csv" | grep -q '^clock,method,threads' && ! grep -q old "$tmp/replace.csv"; echo $?)" "--output replaces a file atomically"
ok "$([ -z "$(find "$tmp" -name '*.tmp.*')" ]; echo $?)" "no temporary files left behind"
done_testing
