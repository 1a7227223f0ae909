#!/usr/bin/env bash
# lab-args.t: `make lab`'s input errors, found before anything boots; and
# its assertions against a lab folder that lacks results (they must fail).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

LAB_STATES=5 lab/run-lab.sh "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q 'LAB_STATES=5' "$tmp/err" && [ ! -e "$tmp/r" ]; echo $?)" "an unknown state is a usage error: $(cat "$tmp/err")"
LAB_TIMEOUT=5 lab/run-lab.sh "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q 'LAB_TIMEOUT=5' "$tmp/err"; echo $?)" "a time limit under 60 s is a usage error"
lab/run-lab.sh "$tmp/r" 2>/dev/null
ok "$([ $? -eq 2 ]; echo $?)" "a missing run id is a usage error"
KERNEL=/nonexistent/vmlinuz lab/run-lab.sh "$tmp/r" x 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -qE 'no readable kernel|not found' "$tmp/err"; echo $?)" "a missing kernel: exit 1, says how to fix it: $(head -n1 "$tmp/err")"

mkdir -p "$tmp/empty"
python3 lab/assert.py "$tmp/empty" 1,2,3,4 >"$tmp/out"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q '^not ok 1 - state 1' "$tmp/out" && tail -n1 "$tmp/out" | grep -qE '^[0-9]+ passed, [1-9][0-9]* failed$'; echo $?)" \
	"the assertions fail on a lab folder with no results"
done_testing
