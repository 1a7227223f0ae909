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
