#!/usr/bin/env bash
# tier: fast
# require.t: clockbench --probe --require user, the startup check: exit 0
# and silent where every asked clock is read in user space; exit 1 and one
# line naming the clock, its path and the clocksource where one falls back
# to the system call (forced here by tests/bench/vdso-off.c, an LD_PRELOAD
# clock_gettime that is the bare syscall: the probe itself sees the kernel
# entered); usage errors; and its time, printed, never asserted.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
need_engine 10
tap_tmp
# a sanitizer build wants its runtime first; the preload comes before it
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0

# run ARGS...: the engine's status in $rc, its stdout and stderr in files
run() { "$@" >"$tmp/so" 2>"$tmp/se"; rc=$?; }

run "$bin" --probe --require user
if [ "$rc" -eq 3 ]; then
	skip_all "the path probe cannot run here: $(head -c 200 "$tmp/se")" 10
fi
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/so" ] && [ ! -s "$tmp/se" ]; echo $?)" \
	"realtime and monotonic in user space here: exit $rc, nothing printed"
run "$bin" --probe --require user --clocks all
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/so" ] && [ ! -s "$tmp/se" ]; echo $?)" "--clocks all: exit $rc, nothing printed"

cc=${CC:-cc}
if ! "$cc" -shared -fPIC -O2 -o "$tmp/vdso-off.so" tests/bench/vdso-off.c -ldl 2>"$tmp/cc"; then
	for i in 1 2 3 4 5; do skip "no C compiler for the vDSO-off library: $(head -c 100 "$tmp/cc")"; done
else
	printf 'hpet\n' >"$tmp/cs"
	# CLOCK_MONOTONIC is clock id 1
	run env LD_PRELOAD="$tmp/vdso-off.so" CLOCKBENCH_VDSO_OFF=1 CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/cs" \
		"$bin" --probe --require user
	line=$(cat "$tmp/se")
	ok "$([ "$rc" -eq 1 ] && [ ! -s "$tmp/so" ] && [ "$(wc -l <"$tmp/se")" -eq 1 ] &&
		grep -qx 'clockbench: not read in user space: monotonic (path syscall); clocksource hpet' "$tmp/se"; echo $?)" \
		"monotonic by syscall: exit $rc, one line: $line"
	ok "$(! grep -q realtime "$tmp/se"; echo $?)" "the line does not name realtime, which stayed in user space"
	run env LD_PRELOAD="$tmp/vdso-off.so" CLOCKBENCH_VDSO_OFF=1 "$bin" --probe --require user --clocks realtime
	ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/se" ]; echo $?)" "only the asked clocks count: --clocks realtime, exit $rc"
	run env LD_PRELOAD="$tmp/vdso-off.so" CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/cs" \
		"$bin" --probe --require user --clocks realtime,tai
	ok "$([ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/se")" -eq 1 ] &&
		grep -qF 'realtime (path syscall), tai (path syscall); clocksource hpet' "$tmp/se"; echo $?)" \
		"two clocks by syscall: exit $rc, both in one line: $(cat "$tmp/se")"
	# the same preload under the probe's own report: the path check agrees
	run env LD_PRELOAD="$tmp/vdso-off.so" CLOCKBENCH_VDSO_OFF=1 "$bin" --probe --quiet --format json
	ok "$(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["probe"]["clocks"]; sys.exit(not (c["monotonic"]["vdso"] == "syscall" and c["realtime"]["vdso"] == "user"))' "$tmp/so"; echo $?)" \
		"the report's path check says the same: monotonic vdso -> syscall, realtime vdso -> user"
fi

run "$bin" --require user
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/se")" -eq 1 ] && grep -q -- '--require: only with --probe' "$tmp/se"; echo $?)" \
	"--require without --probe: exit $rc, $(cat "$tmp/se")"
run "$bin" --probe --require kernel
ok "$([ "$rc" -eq 2 ] && grep -qF "'kernel': expected user" "$tmp/se"; echo $?)" "--require kernel: exit $rc"
run "$bin" --probe --require user --json "$tmp/r.json"
ok "$([ "$rc" -eq 2 ] && [ ! -e "$tmp/r.json" ] && grep -q 'writes no report' "$tmp/se"; echo $?)" \
	"--require user --json: exit $rc, nothing written"

# The time of one check (a figure, not an assertion: this machine is shared).
if command -v python3 >/dev/null; then
	diag "$(python3 - "$bin" <<'PY'
import statistics, subprocess, sys, time
t = []
for _ in range(50):
    a = time.perf_counter()
    subprocess.run([sys.argv[1], "--probe", "--require", "user", "--clocks", "all"], check=False)
    t.append((time.perf_counter() - a) * 1e3)
t.sort()
print("--probe --require user --clocks all, 50 runs: median %.2f ms, max %.2f ms" % (statistics.median(t), t[-1]))
PY
)"
fi
done_testing
