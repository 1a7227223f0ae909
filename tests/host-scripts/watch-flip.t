#!/usr/bin/env bash
# tier: destructive
# serial: host
# test-timeout: 180
# watch-flip.t: a real clocksource flip under the project's bracket
# (host-scripts/clocksource set ... -- COMMAND) shows in clockbench watch's
# textfile, and so does the restore: the watch follows /dev/kmsg for real
# (--interval 1h: the kernel's "Switched to clocksource" line, not the slow
# re-read, is what it reacts to).  Destructive (it flips the host's
# clocksource): only with DESTRUCTIVE=1 as root.  The waits are functional,
# capped at 30 s; the delays are printed, not asserted (the benchmark's job).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
plan=4
destructive || skip_all "destructive: flips the host clocksource (DESTRUCTIVE=1, as root)" "$plan"
cur=$(host-scripts/clocksource get)
other=$(host-scripts/clocksource list | sed 's/ \*$//' | grep -vx "$cur" | head -1)
[ -n "$other" ] || skip_all "only one clocksource ($cur) on this host" "$plan"
tmp=$(mktemp -d)
chmod 755 "$tmp"
pid=
cleanup() {
	[ -z "$pid" ] || kill "$pid" 2>/dev/null
	[ -z "$pid" ] || wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
prom=$tmp/clockbench-watch.prom
# shows CS: exit 0 once the textfile says the clocksource is CS, within 30 s; prints the seconds it took.
shows() {
	local t0 now
	t0=$(date +%s.%N)
	for _ in $(seq 600); do
		if grep -qx "node_clockbench_clocksource_info{clocksource=\"$1\"} 1" "$prom" 2>/dev/null; then
			now=$(date +%s.%N)
			echo "$now - $t0" | bc
			return 0
		fi
		sleep 0.05
	done
	return 1
}
export -f shows
export prom
CB_WATCH_RUN_DIR=$tmp/watch-run host-scripts/watch --textfile-dir "$tmp" --interval 1h --no-trace 2>"$tmp/err" &
pid=$!
took=$(shows "$cur")
ok $? "the watch writes the clocksource it starts on ($cur)"
# shellcheck disable=SC2016 # $1 is the inner bash's own argument
out=$(host-scripts/clocksource set "$other" -- bash -c 'shows "$1"' _ "$other")
rc=$?
ok "$rc" "a flip to $other under the bracket shows in the textfile (${out:-never} s)"
took=$(shows "$cur")
rc=$?
ok "$rc" "and so does the restore to $cur (${took:-never} s)"
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
ok "$([ "$rc" -eq 0 ] && [ "$(host-scripts/clocksource get)" = "$cur" ] && [ ! -s "$tmp/err" ]; echo $?)" \
	"TERM: the watch exits 0; the clocksource is $cur again"
sed 's/^/# /' "$tmp/err"
done_testing
