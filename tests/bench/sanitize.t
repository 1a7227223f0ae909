#!/usr/bin/env bash
# tier: slow
# test-timeout: 300
# sanitize.t: `make check SANITIZE=1`: the engine and the C unit tests built
# with AddressSanitizer and UndefinedBehaviorSanitizer (build/san/) run
# clean: the unit tests, a short real run of every method and check whose
# reports the checker accepts, and the JSON writer's hostile strings.
# Any sanitizer report fails (halt_on_error, no recovery).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
san=build/san
if [ "${CB_SANITIZE:-}" != 1 ]; then
	skip_all "sanitizers run with make check SANITIZE=1" 8
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

# clean LABEL CMD...: runs CMD; exit 0 and not one sanitizer line.
clean() {
	local label=$1
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$? reports
	reports=$(grep -cE 'Sanitizer|runtime error:' "$tmp/err")
	ok "$([ "$rc" -eq 0 ] && [ "$reports" -eq 0 ]; echo $?)" "$label (exit $rc, $reports sanitizer lines)"
	if [ "$rc" -ne 0 ] || [ "$reports" -ne 0 ]; then
		diag "$(grep -m3 -E 'ERROR|runtime error|SUMMARY' "$tmp/err")"
	fi
}

syms=$(nm "$san/clockbench" 2>/dev/null)
ok "$(grep -q __asan_init <<<"$syms" && grep -q __ubsan_handle <<<"$syms"; echo $?)" \
	"$san/clockbench is built with both sanitizers"
clean "the C unit tests under the sanitizers" "$san/test-unit"
clean "the guest's log and frame unit tests under the sanitizers" "$san/test-guest-unit"
clean "hostile JSON strings under the sanitizers" "$san/test-unit" json
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/out" 2>/dev/null
ok $? "and a real JSON parser reads them"
clean "a short real run of every method and check" "$san/clockbench" --clocks monotonic,realtime_coarse --methods all \
	--threads 1-max --duration 0.05 --check all --tsc-rounds 3000 --quiet --format text \
	--json "$tmp/r.json" --csv "$tmp/r.csv"
cp "$tmp/out" "$tmp/r.txt"
out=$(python3 tests/bench/check_report.py "$tmp/r.json" "$tmp/r.csv" "$tmp/r.txt" 2>&1)
ok $? "its JSON, CSV and text pass the report checker"
[ -z "$out" ] || diag "$out"
# the watchdog readout on a stand-in: two slow readouts in a row
python3 -c 'import struct, sys; d = [0] * 3000; d[100] = d[101] = 2000000; open(sys.argv[1], "wb").write(struct.pack("<3000I", *d))' "$tmp/wd"
clean "the watchdog readout on a stand-in, with --load" env CLOCKBENCH_TEST_WATCHDOG_FILE="$tmp/wd" "$san/clockbench" \
	--no-cost --check watchdog --watchdog-limit 1000000 --load --quiet --format json
done_testing
