#!/usr/bin/env bash
# runner.t: tests/run on tiny fake test files: it counts passes, failures
# and skips, fails a file that crashes after passing, breaks its plan, or
# outlives its time limit, counts a whole-file skip; and unit.t fails a
# C test program that crashes after its first test.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fixture NAME BODY: an executable bash test file in $tmp.
fixture() {
	printf '#!/usr/bin/env bash\n%s\n' "$2" >"$tmp/$1.t"
	chmod +x "$tmp/$1.t"
}
fixture pass 'echo "ok 1 - a"; echo "ok 2 # SKIP not here"; echo "ok 3 - b"; echo "1..3"'
fixture fail 'echo "1..3"; echo "ok 1"; echo "not ok 2 - broken"; echo "not ok 3 # TODO later"; exit 1'
fixture crash 'echo "ok 1 - first"; kill -SEGV $$'
fixture plan 'echo "1..3"; echo "ok 1"; echo "ok 2"'
fixture noplan 'echo "ok 1"'
fixture hang '# test-timeout: 2
echo "ok 1 - before the hang"; sleep 600; echo "1..1"'
fixture skipall 'echo "1..0 # SKIP no such device"'
fixture exit3 'echo "ok 1"; echo "1..1"; exit 3'

# runs FIXTURE TOTALS RC DESCRIPTION: tests/run on one fixture (itself
# limited to 30 s) ends with TOTALS and exits RC.
runs() {
	local out rc start=$SECONDS
	out=$(timeout -k 5 30 tests/run "$tmp/$1.t" 2>&1)
	rc=$?
	ok "$([ "$(tail -n 1 <<<"$out")" = "$2" ] && [ "$rc" -eq "$3" ]; echo $?)" \
		"$4: '$(tail -n 1 <<<"$out")', exit $rc in $((SECONDS - start)) s"
	[ "$rc" -eq "$3" ] || printf '%s\n' "$out" | tail -n 15 | sed 's/^/# /'
}
runs pass "2 passed, 0 failed, 1 skipped" 0 "passing file with a skip"
runs fail "1 passed, 1 failed, 1 skipped" 1 "failing test; a failing TODO counts as skipped"
runs crash "1 passed, 1 failed, 0 skipped" 1 "crash after ok 1 fails the file"
runs plan "2 passed, 1 failed, 0 skipped" 1 "plan 1..3 with two tests run fails the file"
runs noplan "1 passed, 1 failed, 0 skipped" 1 "a missing plan fails the file"
runs hang "1 passed, 1 failed, 0 skipped" 1 "a file past its time limit (2 s) fails"
runs skipall "0 passed, 0 failed, 1 skipped" 0 "a whole-file skip (plan 1..0, SKIP) counts one skip"
runs exit3 "1 passed, 1 failed, 0 skipped" 1 "exit 3 after passing its plan fails the file"
out=$(timeout -k 5 60 tests/run "$tmp/pass.t" "$tmp/skipall.t" "$tmp/plan.t" 2>&1)
ok "$([ "$(tail -n 1 <<<"$out")" = "4 passed, 1 failed, 2 skipped" ] && grep -q "^# BROKEN $tmp/plan.t: " <<<"$out"; echo $?)" \
	"several files add up; the broken one is named"
out=$(TEST_TIMEOUT=soon tests/run "$tmp/pass.t" 2>&1)
rc=$?
ok "$([ "$rc" -eq 2 ] && grep -q 'TEST_TIMEOUT=soon' <<<"$out"; echo $?)" "a bad TEST_TIMEOUT is refused: exit $rc"

# lib.sh: skip_all with a known plan skips each test.
fixture skipn '. '"$PWD"'/tests/lib/lib.sh; skip_all "no device" 4'
runs skipn "0 passed, 0 failed, 4 skipped" 0 "skip_all REASON 4 counts four skips"

# unit.t against a C test program that passes its first test, then crashes.
mkdir -p "$tmp/tree/tests/lib" "$tmp/tree/tests/bench" "$tmp/tree/build"
cp tests/bench/unit.t "$tmp/tree/tests/bench/"
cp tests/lib/lib.sh "$tmp/tree/tests/lib/"
# shellcheck disable=SC2016 # $1 and $$ are the fake's own
printf '#!/bin/sh\n[ "$1" = json ] && exec %s json\necho "1..3"; echo "ok 1 - first"; kill -SEGV $$\n' \
	"$PWD/build/test-unit" >"$tmp/tree/build/test-unit"
chmod +x "$tmp/tree/build/test-unit"
if [ -x build/test-unit ]; then
	out=$("$tmp/tree/tests/bench/unit.t" 2>&1)
	rc=$?
	ok "$([ "$rc" -ne 0 ] && grep -q '^not ok .*exit 139, plan 1..3, ran 1' <<<"$out"; echo $?)" \
		"unit.t fails a C test program killed after ok 1 (exit $rc)"
else
	skip "build/test-unit not built (make check builds it)"
fi
done_testing
