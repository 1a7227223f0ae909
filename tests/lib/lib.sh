# lib.sh: TAP helpers for the shell tests (sourced, not run).
# shellcheck shell=bash
tap_n=0
tap_failed=0
ok() { # ok CONDITION-STATUS DESCRIPTION
	tap_n=$((tap_n + 1))
	if [ "$1" -eq 0 ]; then
		echo "ok $tap_n - $2"
	else
		tap_failed=$((tap_failed + 1))
		echo "not ok $tap_n - $2"
	fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n # SKIP $1"; }
diag() { printf '# %s\n' "$@"; }
done_testing() { echo "1..$tap_n"; [ "$tap_failed" -eq 0 ]; }

# skip_all REASON [N]: skips the whole file and exits 0: N tests skipped
# when the file knows how many it would run, else the plan 1..0 (which
# tests/run counts as one skip).
skip_all() {
	local i
	if [ -n "${2:-}" ]; then
		for ((i = 0; i < $2; i++)); do skip "$1"; done
		done_testing
	else
		echo "1..0 # SKIP $1"
	fi
	exit 0
}

# tap_pass CMD...: runs a TAP program and prints its tests as this file's
# (renumbered, directives kept), then one more: CMD exited 0 and ran its
# whole plan (a crash or an early exit after passing tests fails here).
tap_pass() {
	local out rc line plan="" ran=0 re='^(not )?ok [0-9]+(.*)$'
	out=$("$@" 2>&1)
	rc=$?
	while IFS= read -r line; do
		if [[ $line =~ $re ]]; then
			ran=$((ran + 1))
			tap_n=$((tap_n + 1))
			echo "${BASH_REMATCH[1]}ok $tap_n${BASH_REMATCH[2]}"
			if [ -n "${BASH_REMATCH[1]}" ] && [[ ${BASH_REMATCH[2]} != *"# TODO"* ]]; then
				tap_failed=$((tap_failed + 1))
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
		elif [ -n "$line" ]; then
			diag "$line"
		fi
	done <<<"$out"
	ok "$([ "$rc" -eq 0 ] && [ "$plan" = "$ran" ]; echo $?)" "$1: exit $rc, plan 1..${plan:-missing}, ran $ran"
}


# tap_tmp [--tmpdir]: a scratch folder in $tmp, removed when the file exits
# (its EXIT trap: a file that needs more at exit sets its own trap); with
# --tmpdir it is TMPDIR too, so what the tested programs leave is removed
# with it.
# shellcheck disable=SC2120 # the argument is optional
tap_tmp() {
	tmp=$(mktemp -d) || exit 1
	trap 'rm -rf "$tmp"' EXIT
	if [ "${1:-}" = --tmpdir ]; then export TMPDIR=$tmp; fi
}

# need_engine [N]: the engine under test in $bin ($CB_BIN, else
# bench/clockbench); skips the file (N tests, skip_all) when it is not built.
# shellcheck disable=SC2120 # the argument is optional
need_engine() {
	bin=${CB_BIN:-bench/clockbench}
	[ -x "$bin" ] || skip_all "$bin not built (make all)" "${1:-}"
}

# destructive: true when this run may change the host: DESTRUCTIVE=1, as
# root (CI sets it).  Without it make check changes nothing here: no real
# clocksource flip, no package installed, no daemon started.
destructive() { [ "${DESTRUCTIVE:-0}" = 1 ] && [ "$(id -u)" -eq 0 ]; }

# flip_needs WHAT: a real switch under KVM VMs of a test's own, as root
# with DESTRUCTIVE=1 (WHAT: what the file changes, for the skip line):
# sets real (the clocksource folder), orig (tsc, the host's clocksource)
# and other (the first other one offered); skips the file, saying why,
# where any of it is missing or VMs not the test's run.
flip_needs() {
	destructive || skip_all "$1: as root with DESTRUCTIVE=1"
	real=/sys/devices/system/clocksource/clocksource0
	orig=$(cat "$real/current_clocksource")
	[ "$orig" = tsc ] || skip_all "the host is on $orig, not tsc"
	local c offered
	other=
	read -r -a offered <"$real/available_clocksource"
	for c in "${offered[@]}"; do [ "$c" = tsc ] || { other=$c; break; }; done
	[ -n "$other" ] || skip_all "the host offers no clocksource but tsc"
	[ -c /dev/kvm ] || skip_all "no /dev/kvm"
	[ -z "$(bash -c '. host-scripts/lib/clocksource.sh; cs_foreign_vms')" ] ||
		skip_all "KVM guests are running on this machine: no real flip under them"
}

# libvirt_up URI: a libvirt daemon answering at URI: virtlogd and libvirtd
# started (-d, no systemd) where none runs, their pids added to the array
# libvirt_started (the caller kills exactly those at its end); false when
# none answers after 10 s.  Starting one changes the host: callers ask
# destructive first.
libvirt_started=()
libvirt_up() {
	local d pidfile
	for d in virtlogd libvirtd; do
		pidfile=/run/$d.pid
		# A live one, not a zombie left by an earlier daemon's exit.
		pgrep -x --runstates RSDI "$d" >/dev/null && continue
		"$d" -d || return 1
		for _ in $(seq 50); do
			[ -s "$pidfile" ] && break
			sleep 0.1
		done
		[ -s "$pidfile" ] && libvirt_started+=("$(cat "$pidfile")")
	done
	for _ in $(seq 100); do
		virsh -c "$1" uri >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# slow_tier: true when this run takes the slow tier (tests/run's CB_TIERS;
# a file run alone takes every tier): a fast file's real run is its slow part.
slow_tier() { case ",${CB_TIERS:-slow}," in *,slow,*) return 0 ;; esac; return 1; }
