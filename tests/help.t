#!/usr/bin/env bash
# tier: fast
# help.t: `make help` is one screen (at most 15 lines) of the targets a user
# needs, each of them there; `make help-dev` has the rest; every target
# either names is one of the Makefile's.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make -s --no-print-directory help >"$tmp/help" 2>&1
rc=$?
n=$(wc -l <"$tmp/help")
ok "$([ "$rc" -eq 0 ] && [ "$n" -le 15 ]; echo $?)" "make help: $n lines (at most 15), exit $rc"
named() { grep -oE '^make [a-z][a-z-]*' "$1" | awk '{print $2}' | sort -u; }
named "$tmp/help" >"$tmp/user"
missing=()
for t in bench check check-fast health report lab install deb deps clean help-dev; do
	grep -qx "$t" "$tmp/user" || missing+=("$t")
done
grep -qx host-check "$tmp/user" && missing+=("host-check named: its old name")
ok "${#missing[@]}" "make help names bench, check, check-fast, health, report, lab, install, deb, deps, clean and help-dev${missing[*]:+; missing: ${missing[*]}}"
make -s --no-print-directory help-dev >"$tmp/dev" 2>&1
rc=$?
named "$tmp/dev" >"$tmp/devnamed"
ok "$([ "$rc" -eq 0 ] && grep -qx compare "$tmp/devnamed" && [ -z "$(comm -12 "$tmp/user" "$tmp/devnamed" | grep -vxE 'report|install|deb')" ]; echo $?)" \
	"make help-dev: the rest ($(wc -l <"$tmp/devnamed") targets), none of make help's but the lines of their own files (report, install, deb)"
# The Makefile's targets, from make's own database (no recipe runs).
make -qp 2>/dev/null | grep -E '^[a-z][a-z-]*:' | grep -v ':=' | cut -d: -f1 | sort -u >"$tmp/targets"
unknown=$(sort -u "$tmp/user" "$tmp/devnamed" | comm -23 - "$tmp/targets" | tr '\n' ' ')
ok "$([ -s "$tmp/targets" ] && [ -z "$unknown" ]; echo $?)" "every target make help and help-dev name is a target ($(wc -l <"$tmp/targets") in all)${unknown:+; not: $unknown}"

# What make help says of a command that a test can read from the command:
# health's exit statuses (its --help), the lab's states (lab/states.cfg).
said=$(sed -n '/^make health /,/^make [a-z]/p' "$tmp/help" | sed '$d' | grep -oE 'exit [0-9].*' | grep -oE '(^exit |, )[0-9]' | grep -oE '[0-9]' | sort -u | tr '\n' ' ')
has=$(host-scripts/health --help | sed -n '/^Exit status/,$p' | grep -oE '^  [0-9]' | tr -d ' ' | sort -u | tr '\n' ' ')
ok "$([ -n "$has" ] && [ "$said" = "$has" ]; echo $?)" "make help's health exit statuses ($said) are health --help's ($has)"
said=$(sed -n '/^make lab /,/^make [a-z]/p' "$tmp/help" | sed '$d' | tr '\n' ' ' | grep -oE 'states [0-9]+-[0-9]+( and [0-9]+-[0-9]+)*' | grep -oE '[0-9]+-[0-9]+' |
	while IFS=- read -r a b; do seq "$a" "$b"; done | sort -n | tr '\n' ' ')
has=$(grep -oE '^\[[0-9]+\]' lab/states.cfg | tr -d '[]' | sort -n | tr '\n' ' ')
ok "$([ -n "$has" ] && [ "$said" = "$has" ]; echo $?)" "make help's lab states ($said) are lab/states.cfg's ($has)"

# make host-check, health's old name, still runs it and says the new name
# once: one line on stderr before health's own (a real run, read-only; not
# when the engine would be built here).
if make -q --no-print-directory all 2>/dev/null; then
	make -s --no-print-directory health >"$tmp/h.out" 2>"$tmp/h.err"
	rc_h=$?
	make -s --no-print-directory host-check >"$tmp/a.out" 2>"$tmp/a.err"
	rc_a=$?
	ok "$([ "$rc_a" = "$rc_h" ] && [ "$(head -n 1 "$tmp/a.err")" = "clockbench: make host-check is now make health" ] &&
		[ "$(tail -n +2 "$tmp/a.err")" = "$(cat "$tmp/h.err")" ] && [ "$(head -n 1 "$tmp/a.out")" = "$(head -n 1 "$tmp/h.out")" ] &&
		[ -s "$tmp/h.out" ]; echo $?)" \
		"make host-check: health's report and exit ($rc_a, health's $rc_h), after one line naming make health ($(head -n 1 "$tmp/a.err"))"
else
	skip "the engine is not built (make all): make health would build it"
fi
done_testing
