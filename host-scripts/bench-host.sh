#!/usr/bin/env bash
# bench-host.sh: the default host measurement on the current clocksource.
# Writes RESULTS/RUN_ID/host-<clocksource>.{json,csv,txt}; never overwrites.
# Usage: bench-host.sh [--existing] RESULTS_DIR RUN_ID
#   --existing: the run folder exists already (make compare); the files
#   must not.  Env: DURATION, THREADS, CLOCKBENCH.
set -eu -o pipefail

usage() { echo "usage: $0 [--existing] RESULTS_DIR RUN_ID" >&2; exit 2; }
existing=0
if [ "${1:-}" = --existing ]; then
	existing=1
	shift
fi
[ "$#" -eq 2 ] || usage
results=$1
run_id=$2
case "$run_id" in
'' | */* | .*) echo "clockbench: bad run id '$run_id'" >&2; exit 2 ;;
esac
bin=${CLOCKBENCH:-bench/clockbench}
[ -x "$bin" ] || { echo "clockbench: $bin not built: run make" >&2; exit 1; }

cs_file=${CB_CS_DIR:-/sys/devices/system/clocksource/clocksource0}/current_clocksource
cs=$(cat "$cs_file" 2>/dev/null) || { echo "clockbench: cannot read $cs_file" >&2; exit 1; }
case "$cs" in
'' | */* | .*) echo "clockbench: odd clocksource name '$cs'" >&2; exit 1 ;;
esac

dir=$results/$run_id
base=$dir/host-$cs
if [ "$existing" = 1 ]; then
	[ -d "$dir" ] || { echo "clockbench: $dir does not exist" >&2; exit 1; }
	for f in "$base".json "$base".csv "$base".txt; do
		[ -e "$f" ] && { echo "clockbench: $f exists: results are never overwritten" >&2; exit 1; }
	done
else
	mkdir -p "$results"
	# mkdir without -p: an existing run folder is an error, never reused.
	mkdir "$dir" || { echo "clockbench: $dir exists: choose another RUN_ID" >&2; exit 1; }
fi

if ! "$bin" --clock all --method all --threads "${THREADS:-sweep}" \
	--duration "${DURATION:-1}" --check all \
	--format text --output "$base.txt" --json "$base.json" --csv "$base.csv"; then
	[ "$existing" = 1 ] || rmdir "$dir" 2>/dev/null || true
	echo "clockbench: host measurement failed; nothing kept" >&2
	exit 1
fi
cat "$base.txt"
echo
echo "results: $base.json (also .csv, .txt)"
