#!/usr/bin/env bash
# tier: slow
# serial: man
# man.t: the man pages (make man, from the engine's and each verb's --help
# by help2man, plus packaging/man/<page>.h2m and packaging/man.h2m) read
# like man pages and agree with --help: clockbench(1), whose VERBS section
# lists every verb, and clockbench-VERB(1) for each verb of
# packaging/commands, named and described as there; the sections a user
# looks for; no groff warning; lexgrog parses it; OPTIONS has each long
# option --help lists (and, for a verb with subcommands, each one's own
# --help) as its own item, no other; 2-5 examples of the command
# (clockbench VERB); installed paths only (no PREFIX placeholder, no path
# of the checkout); each setting of packaging/settings its verb takes an
# item of its page.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
n=$(sed '/^#/d' packaging/commands | awk '$2 ~ /\//' | wc -l)
per=9
command -v help2man >/dev/null || skip_all "help2man not installed (Debian: help2man)" $(((n + 1) * per + 3))
make -s man >/dev/null 2>&1
ok $? "make man"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# No page has an ENVIRONMENT section: every setting is an option of its
# command (tests/settings.t), and test hooks stay out of --help.

# long_opts: the long options (--name) in the text on stdin, one a line, sorted.
long_opts() { grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u; }
# plain PAGE: the page's source with help2man's escapes for - and fonts undone.
plain() { sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\f(CW//g' -e 's/\\(aq/'"'"'/g' "$1"; }
# section NAME: the lines of section NAME of the plain page on stdin.
section() { awk -v s="$1" '/^\.SH/ { on = ($0 == ".SH " s || $0 == ".SH \"" s "\"") ; next } on'; }
# subcommands: the names of the "Commands:" block of --help on stdin.
subcommands() { awk '/^Commands:$/ { on = 1; next } on && /^$/ { exit } on && /^  [a-z]/ { print $1 }'; }

# The engine's page lists every verb (its VERBS section, from packaging/commands).
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' build/man/clockbench.1 | section VERBS >"$tmp/verbs"
missing=()
while read -r verb src _; do
	case $src in */*) page=$verb ;; *) page=$src ;; esac # an alias: its verb's page
	grep -qx "\.B clockbench $verb" "$tmp/verbs" && grep -q "clockbench-$page(1)" "$tmp/verbs" || missing+=("$verb")
done < <(sed '/^#/d' packaging/commands)
ok "${#missing[@]}" "clockbench(1): VERBS has each verb of packaging/commands, with its page${missing[*]:+; missing: ${missing[*]}}"

# Each page: its name, description and the engine's arguments before
# --help (none for the engine's own page, VERB for a verb's).
{
	echo "clockbench|$(sed -n 's/^ENGINE_WHAT := //p' packaging/packaging.mk)|"
	sed '/^#/d' packaging/commands | awk '$2 ~ /\//' | while read -r verb _ what; do echo "clockbench-$verb|$what|$verb"; done
} >"$tmp/pages"
sec=1
while IFS='|' read -r name what verb; do
	page=build/man/$name.$sec
	cmd="clockbench${verb:+ $verb}"
	ok "$([ -s "$page" ] && grep -q "^\.TH \"\?${name^^}\"\? \"\?$sec\"\?" "$page"; echo $?)" "$name: a page in section $sec"
	plain "$page" >"$tmp/page"
	# help2man may break a line anywhere but in a word.
	sed -n '/^\.SH NAME/{n;p;q}' "$tmp/page" >"$tmp/name"
	ok "$(grep -qxF "$name - $what" "$tmp/name"; echo $?)" "$name: NAME says the list's description"

	want="NAME SYNOPSIS DESCRIPTION OPTIONS EXIT_STATUS FILES EXAMPLES SEE_ALSO"
	missing=()
	for s in $want; do
		grep -qxE "\.SH \"?${s//_/ }\"?" "$page" || missing+=("${s//_/ }")
	done
	! grep -qxE '\.SH "?ENVIRONMENT"?' "$page" || missing+=("(none:) ENVIRONMENT")
	ok "${#missing[@]}" "$name: sections $want, and no ENVIRONMENT"
	[ "${#missing[@]}" -eq 0 ] || diag "missing: ${missing[*]}"

	man --warnings -l "$page" 2>"$tmp/warn" >/dev/null
	ok "$([ ! -s "$tmp/warn" ]; echo $?)" "$name: man --warnings prints nothing"
	sed 's/^/# /' "$tmp/warn" | head -5
	lexgrog "$page" >"$tmp/lex" 2>&1
	ok "$(grep -q "\"$name - " "$tmp/lex"; echo $?)" "$name: lexgrog parses it"
	grep -q "\"$name - " "$tmp/lex" || sed 's/^/# /' "$tmp/lex"

	# SYNOPSIS: a line per subcommand where there are subcommands.
	# shellcheck disable=SC2086 # $verb: no word, or one
	COLUMNS=80 bench/clockbench $verb --help >"$tmp/help" 2>&1 </dev/null
	subcommands <"$tmp/help" >"$tmp/subs"
	section SYNOPSIS <"$tmp/page" | grep -c '^\.B ' >"$tmp/syn"
	ok "$([ "$(cat "$tmp/syn")" -ge 1 ] && [ "$(cat "$tmp/syn")" -ge "$(wc -l <"$tmp/subs")" ]; echo $?)" \
		"$name: SYNOPSIS has $(cat "$tmp/syn") line(s), at least one per subcommand ($(wc -l <"$tmp/subs"))"

	# OPTIONS: each long option of --help the tag of an item (.TP) of its
	# own, no other; with its commands' own (COMMAND --help), where its
	# packaging/man/<name>.h2m says they have one (subcommand-help).
	long_opts <"$tmp/help" >"$tmp/helpopts"
	if grep -qx subcommand-help "packaging/man/$name.h2m"; then
		while read -r c; do
			# shellcheck disable=SC2086
			COLUMNS=80 bench/clockbench $verb "$c" --help 2>&1 </dev/null | long_opts >>"$tmp/helpopts"
		done <"$tmp/subs"
	fi
	sort -u "$tmp/helpopts" -o "$tmp/helpopts"
	section OPTIONS <"$tmp/page" | awk '/^\.TP/ { getline; print }' | long_opts >"$tmp/tagged"
	long_opts <"$tmp/page" >"$tmp/all"
	diff "$tmp/helpopts" "$tmp/tagged" >"$tmp/diff"
	rc=$?
	diff "$tmp/helpopts" "$tmp/all" >>"$tmp/diff" || rc=1
	ok "$rc" "$name: OPTIONS has the $(wc -l <"$tmp/helpopts") long options of --help, each its own item, and the page no other"
	sed 's/^/# /' "$tmp/diff" | head -20

	# EXAMPLES: 2-5, each a command line of this command (as root: sudo;
	# settings from the environment first).
	section EXAMPLES <"$tmp/page" | awk '/^\.TP/ { getline; print }' >"$tmp/ex"
	bad=$(grep -cvE "^\.B (sudo )?([A-Z_]+=[^ ]+ )*$cmd( |$)" "$tmp/ex")
	ok "$([ "$(wc -l <"$tmp/ex")" -ge 2 ] && [ "$(wc -l <"$tmp/ex")" -le 5 ] && [ "$bad" -eq 0 ]; echo $?)" \
		"$name: EXAMPLES has 2-5 command lines of $cmd ($(wc -l <"$tmp/ex"), $bad not)"

	# Installed paths only: no PREFIX placeholder, no path of the checkout
	# (relative, or this checkout's own).
	grep -nE -e 'PREFIX|(^|[^/[:alnum:]_.-])(host-scripts|analysis|build)/' -e "$PWD" "$tmp/page" >"$tmp/paths"
	ok "$([ ! -s "$tmp/paths" ]; echo $?)" "$name: no PREFIX and no checkout path (host-scripts/, analysis/, build/, $PWD)"
	sed 's/^/# /' "$tmp/paths" | head -5
done <"$tmp/pages"

# Each setting packaging/settings gives a verb as an option is an item of
# its page (compare's guest settings are the guest's page's: --SETTING).
missing=()
for vt in bench-host:bench-host bench-guest:bench-guest bench:compare crosscheck:crosscheck; do
	plain "build/man/clockbench-${vt%%:*}.1" | section OPTIONS | awk '/^\.TP/ { getline; print }' | long_opts >"$tmp/tagged"
	while read -r o; do
		grep -qxF -- "$o" "$tmp/tagged" || missing+=("clockbench-${vt%%:*} $o")
	done < <(awk -v t="${vt#*:}" '!/^#/ && NF >= 5 && $3 == "option" && index("," $2 ",", "," t ",") &&
		(t != "compare" || index($2, "bench-host") || !index($2, "bench-guest")) {
		o = tolower($1); gsub(/_/, "-", o); print "--" o }' packaging/settings)
done
ok "${#missing[@]}" "each option of packaging/settings is an item of its verb's page${missing[*]:+; not: ${missing[*]}}"
done_testing
