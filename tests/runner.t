#!/usr/bin/env bash
# runner.t: tests/run on tiny fake test files: it counts passes, failures
# and skips, fails a file that crashes after passing, breaks its plan, or
# outlives its time limit, counts a whole-file skip; runs files side by
# side but never two that share a serial name, and a host-changing one
# alone under DESTRUCTIVE=1; picks files by tier; and unit.t fails a C
# test program that crashes after its first test.
# tier: fast
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
. tests/lib/lib.sh
tap_tmp

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

# Several at once.  hold MARK: a test that holds $tmp/MARK for half a second
# and fails if another file holds it (mkdir is atomic).
hold='if mkdir "$T/$M" 2>/dev/null; then sleep 0.5; rmdir "$T/$M"; echo "ok 1 - alone on $M"; else echo "not ok 1 - $M was held"; fi; echo "1..1"'
fixture_h() { printf '#!/usr/bin/env bash\n%s\nT=%q M=%q\n%s\n' "$2" "$tmp" "$3" "$hold" >"$tmp/$1.t"; chmod +x "$tmp/$1.t"; }
fixture_h sa '# serial: pkg' pkg
fixture_h sb '# tier: slow
# serial: pkg other' pkg
fixture_h na '' pkg
fixture_h nb '' pkg
out=$(timeout -k 5 60 tests/run -j 2 "$tmp/sa.t" "$tmp/sb.t" 2>&1)
ok "$([ "$(tail -n 1 <<<"$out")" = "2 passed, 0 failed, 0 skipped" ]; echo $?)" \
	"-j 2: two files naming one serial name never run at once: $(tail -n 1 <<<"$out")"
out=$(timeout -k 5 60 tests/run -j 2 "$tmp/na.t" "$tmp/nb.t" 2>&1)
ok "$([ "$(tail -n 1 <<<"$out")" = "1 passed, 1 failed, 0 skipped" ]; echo $?)" \
	"-j 2: the same two files without it do run at once (one finds the mark held): $(tail -n 1 <<<"$out")"
# meet NAME OTHER: passes only if OTHER starts while NAME runs.
fixture_m() { printf '#!/usr/bin/env bash\ntouch %q/%s.on\nfor _ in $(seq 50); do [ -e %q/%s.on ] && { echo "ok 1 - met %s"; echo 1..1; exit 0; }; sleep 0.1; done\necho "not ok 1 - %s never ran beside"; echo 1..1\n' \
	"$tmp" "$1" "$tmp" "$2" "$2" "$2" >"$tmp/$1.t"; chmod +x "$tmp/$1.t"; }
fixture_m ma mb
fixture_m mb ma
out=$(timeout -k 5 60 tests/run -j 2 "$tmp/ma.t" "$tmp/mb.t" 2>&1)
ok "$([ "$(tail -n 1 <<<"$out")" = "2 passed, 0 failed, 0 skipped" ]; echo $?)" \
	"-j 2: files without a serial name run side by side: $(tail -n 1 <<<"$out")"
# The order: longest first by the last run's times, a group of one serial
# name weighing its files together, and weighed as a file is: the heavy
# group starts before the light file (the harness's own scheduler hands out
# plain files first).  Run from a folder of its own, whose build/test-times
# is the fixture's.
mkdir -p "$tmp/order/build"
for n in light heavy heavy2; do
	serial=$'# serial: pkg\n'
	[ "$n" != light ] || serial=
	printf '#!/usr/bin/env bash\n%secho %s >>%q/order/log; echo "ok 1"; echo 1..1\n' "$serial" "$n" "$tmp" >"$tmp/order/$n.t"
	chmod +x "$tmp/order/$n.t"
done
printf '3 %s\n' "$tmp/order/light.t" "$tmp/order/heavy.t" "$tmp/order/heavy2.t" >"$tmp/order/build/test-times"
out=$(cd "$tmp/order" && timeout -k 5 60 "$OLDPWD/tests/run" -j 1 light.t heavy.t heavy2.t 2>&1)
order=$(paste -sd' ' "$tmp/order/log" 2>/dev/null)
ok "$([ "$(tail -n 1 <<<"$out")" = "3 passed, 0 failed, 0 skipped" ] && [ "$order" = "heavy heavy2 light" ]; echo $?)" \
	"-j 1: a group of 3 s + 3 s runs before a file of 3 s: $order"
# With DESTRUCTIVE=1 a file that changes the host (serial: host) runs alone:
# the others hold a mark each while they run; it finds none.
fixture_h ha '' a
fixture_h hb '' b
printf '#!/usr/bin/env bash\n# serial: host\nsleep 0.3; if [ -n "$(ls %q | grep -x -e a -e b)" ]; then echo "not ok 1 - ran beside another"; else echo "ok 1 - alone"; fi; echo 1..1\n' \
	"$tmp" >"$tmp/aa-host.t"
chmod +x "$tmp/aa-host.t"
out=$(DESTRUCTIVE=1 timeout -k 5 60 tests/run -j 2 "$tmp/aa-host.t" "$tmp/ha.t" "$tmp/hb.t" 2>&1)
ok "$([ "$(tail -n 1 <<<"$out")" = "3 passed, 0 failed, 0 skipped" ]; echo $?)" \
	"DESTRUCTIVE=1: a file that says serial: host runs with nothing beside it: $(tail -n 1 <<<"$out")"
# Tiers: --tier picks files by their header; --list shows it; a bad tier
# (header or option) is refused.
out=$(timeout -k 5 60 tests/run --tier slow "$tmp/sa.t" "$tmp/sb.t" "$tmp/pass.t" 2>&1)
ok "$([ "$(tail -n 1 <<<"$out")" = "1 passed, 0 failed, 0 skipped" ] && grep -q 'sb\.t' <<<"$out" && ! grep -q 'sa\.t' <<<"$out"; echo $?)" \
	"--tier slow runs only the file that says tier: slow: $(tail -n 1 <<<"$out")"
out=$(tests/run --list "$tmp/sb.t" "$tmp/pass.t" 2>&1)
ok "$(grep -q "^slow .* pkg,other .*sb\.t$" <<<"$out" && grep -q '^fast .*pass\.t$' <<<"$out"; echo $?)" \
	"--list: each file's tier and serial names (no tier line: fast)"
fixture badtier '# tier: quick
echo 1..0'
out=$(tests/run "$tmp/badtier.t" 2>&1)
rc=$?
ok "$([ "$rc" -eq 2 ] && grep -q "tier 'quick': expected fast, slow or destructive" <<<"$out"; echo $?)" \
	"a file whose tier line names no tier is refused: exit $rc"
out=$(tests/run --tier quick "$tmp/pass.t" 2>&1)
rc=$?
ok "$([ "$rc" -eq 2 ]; echo $?)" "--tier quick is refused: exit $rc"
# A fast file's slow part runs in a whole run, not in the fast tier's.
fixture slowpart '. '"$PWD"'/tests/lib/lib.sh; if slow_tier; then ok 0 "slow part ran"; else skip "slow part"; fi; done_testing'
out=$(timeout -k 5 60 tests/run --tier fast "$tmp/slowpart.t" 2>&1 | tail -n 1)
out2=$(timeout -k 5 60 tests/run "$tmp/slowpart.t" 2>&1 | tail -n 1)
ok "$([ "$out" = "0 passed, 0 failed, 1 skipped" ] && [ "$out2" = "1 passed, 0 failed, 0 skipped" ]; echo $?)" \
	"slow_tier: a fast file's slow part skips under --tier fast ($out) and runs in a whole run ($out2)"
# Several at once, a failed file's whole output follows the totals.
fixture why 'echo "1..1"; echo "# the reason it broke"; echo "not ok 1 - broken"'
out=$(timeout -k 5 60 tests/run -j 2 "$tmp/why.t" "$tmp/pass.t" 2>&1)
ok "$(grep -q "^# --- $tmp/why.t: its output ---" <<<"$out" && grep -q '^# # the reason it broke' <<<"$out" && ! grep -q "pass.t: its output" <<<"$out"; echo $?)" \
	"-j 2: the failed file's output (its diagnostics) is shown, the passing file's is not"
# Every test file of the checkout says its tier.
# (bash alone reads each file's first lines: a head and a grep per file cost seconds.)
missing=$(for f in $(find tests -name '*.t' -perm -u+x); do
	mapfile -n 10 -t first <"$f"
	tier=
	for l in "${first[@]+"${first[@]}"}"; do [[ $l == "# tier: "* ]] && tier=1; done
	[ -n "$tier" ] || echo "$f"
done)
ok "$([ -z "$missing" ]; echo $?)" "every test file says its tier in its first ten lines"
[ -z "$missing" ] || diag "no tier line:" $missing

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
