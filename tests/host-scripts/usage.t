#!/usr/bin/env bash
# tier: fast
# usage.t: every command's usage error (an unknown or misspelled option
# among them) is one line on stderr and exit 2, with nothing made or switched (each bad call here fails before the
# command reads or writes anything of the host's).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state
mkdir -p "$CB_CS_DIR"
echo "tsc hpet" >"$CB_CS_DIR/available_clocksource"
echo tsc >"$CB_CS_DIR/current_clocksource"

# bad DESCRIPTION CMD...: exit 2, one line on stderr, nothing new in $tmp.
# What $tmp holds after one call is what it holds before the next (nothing
# else writes there): listed once per call, not twice.  The stderr is read
# in bash, its lines counted as wc -l would.
listing() { find "$tmp" ! -name .err | sort; }
after=$(listing)
bad() {
	local what=$1 rc before err nl
	shift
	before=$after
	(cd "$tmp" && "$@") >/dev/null 2>"$tmp/.err" </dev/null
	rc=$?
	after=$(listing)
	err=
	IFS= read -r -d '' err <"$tmp/.err"
	nl=${err//[!$'\n']/}
	ok "$([ "$rc" -eq 2 ] && [ "${#nl}" -eq 1 ] && [ "$before" = "$after" ]; echo $?)" \
		"$what: exit $rc, ${#nl} line(s): $(head -n1 <<<"${err:0:160}")"
	rm -f "$tmp/.err"
}
top=$PWD
bad "bench-host, an unknown option" "$top/host-scripts/bench-host" --bogus
bad "bench-host, three arguments" "$top/host-scripts/bench-host" a b c
bad "bench-host, --run-dir without a folder" "$top/host-scripts/bench-host" --run-dir
bad "compare, one argument" "$top/host-scripts/bench" results
bad "compare, an unknown option" "$top/host-scripts/bench" --bogus
bad "clocksource, no command" "$top/host-scripts/clocksource"
bad "clocksource, an unknown command" "$top/host-scripts/clocksource" frob
bad "kvm-trace, an unknown command" "$top/host-scripts/kvm-trace" frob
bad "bench-guest, an unknown option" "$top/host-scripts/bench-guest" --bogus
bad "health, an unknown option" "$top/host-scripts/health" --bogus
bad "runfolder, no command" "$top/host-scripts/runfolder"
bad "deps, an unknown option" "$top/host-scripts/deps" --bogus
bad "clockbench-report, no command" "$top/analysis/clockbench-report"
bad "clockbench-report, an unknown option" "$top/analysis/clockbench-report" report --bogus
bad "clockbench, an unknown option" "$top/bench/clockbench" --bogus
bad "clockbench, an unknown verb" "$top/bench/clockbench" frob
bad "watch, an unknown option" "$top/host-scripts/watch" --bogus
bad "crosscheck, an unknown option" "$top/host-scripts/crosscheck" --bogus
# A prefix of an option is no abbreviation of it (argparse's allow_abbrev):
# taken, bench-guest --check-only and health (both read-only) would
# answer 0 or 1, and crosscheck, with no tool on PATH, stop there (exit 1).
bad "crosscheck, a prefix of --rounds (--round)" env PATH=/nonexistent "$top/host-scripts/crosscheck" --round=2
bad "bench-guest, a prefix of --vcpus (--vcpu)" "$top/host-scripts/bench-guest" --check-only --vcpu=2 --kernel=/bin/sh
bad "health, a prefix of --trace-seconds (--trace)" "$top/host-scripts/health" --trace=0 --no-tsc-check
bad "clockbench-report, a prefix of --rate (--rat)" "$top/analysis/clockbench-report" capacity --rat=1e4 "$tmp/none"
bad "compare, a near name (--clocksource)" "$top/host-scripts/bench" --clocksource=hpet results x
bad "run-lab, an unknown option" "$top/lab/run-lab" --bogus results x
bad "run-lab, its old setting's name as an option (--lab-states)" "$top/lab/run-lab" --lab-states=9 results x
bad "provoke, an unknown option" "$top/lab/provoke" --bogus
done_testing
