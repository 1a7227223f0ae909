#!/usr/bin/env bash
# tier: fast
# verbs.t: the one front door (bench/main.c): `clockbench help` lists every
# verb of packaging/commands in one line each; `clockbench VERB` runs the
# verb's program from the engine's own top folder, its arguments as given,
# CB_PROG naming it "clockbench VERB", and each program names itself so;
# an unknown verb, a missing or bad list, a missing program: one line; with
# no verb the engine is as it was.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
bin=$PWD/bench/clockbench
[ -x "$bin" ] || skip_all "bench/clockbench not built (make all)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
verbs=$(sed '/^#/d' packaging/commands | awk '{print $1}')

# help: each verb with its description, then help; no line over 79 columns.
out=$("$bin" help 2>"$tmp/err")
rc=$?
missing=()
while read -r verb src what; do
	grep -qxF "$(printf '  %-12s %s' "$verb" "$what")" <<<"$out" || missing+=("$verb")
done < <(sed '/^#/d' packaging/commands)
listed=$(grep -cE '^  [a-z]' <<<"$out")
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && [ "${#missing[@]}" -eq 0 ] && [ "$listed" -eq $(($(wc -w <<<"$verbs") + 1)) ] &&
	head -1 <<<"$out" | grep -qxF 'Usage: clockbench [OPTION]... | clockbench VERB [ARG]...' &&
	grep -qE '^  help ' <<<"$out" && awk 'length > 79 { exit 1 }' <<<"$out"; echo $?)" \
	"clockbench help: every verb of packaging/commands with its description, and help ($listed lines)${missing[*]:+; missing: ${missing[*]}}"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/err"

# bad STATUS DESCRIPTION WANT ARGS...: exit STATUS, stderr the one line WANT, no stdout.
bad() {
	local want=$1 what=$2 line=$3 rc
	shift 3
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" -eq "$want" ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -qF -- "$line" "$tmp/err"; echo $?)" \
		"$what: exit $rc (want $want), '$(head -c 160 "$tmp/err" | head -n1)'"
}
bad 2 "an unknown verb" "clockbench: 'frob' is not a verb; 'clockbench help' lists them" "$bin" frob --help
bad 2 "help of an unknown verb" "clockbench: 'frob' is not a verb" "$bin" help frob
bad 2 "help of two verbs" "clockbench: help takes one verb at most" "$bin" help health host
# help's own --help (and -h): the list, as help help gives it.
for h in --help -h; do
	"$bin" help "$h" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && cmp -s "$tmp/out" <("$bin" help help); echo $?)" \
		"clockbench help $h: exit $rc, the list on stdout$([ -s "$tmp/err" ] && echo ": $(head -n1 "$tmp/err")")"
done

# health through the engine: health's --help, under the verb's name; its errors too.
out=$("$bin" health --help 2>&1)
rc=$?
ok "$([ "$rc" -eq 0 ] && head -1 <<<"$out" | grep -q '^Usage: clockbench health ' && grep -q 'watchdog section' <<<"$out" &&
	[ "$out" = "$("$bin" help health 2>&1)" ]; echo $?)" \
	"clockbench health --help: health's help, 'Usage: clockbench health', as clockbench help health prints it (exit $rc)"
bad 2 "clockbench health with a bad option" "clockbench health: " "$bin" health --bogus

# Every verb's --help names it as run: "Usage: clockbench VERB".
wrong=()
for verb in $verbs; do
	first=$(COLUMNS=80 "$bin" "$verb" --help 2>&1 </dev/null | head -1)
	[[ $first == "Usage: clockbench $verb "* ]] || wrong+=("$verb: ${first:0:60}")
done
ok "${#wrong[@]}" "every verb's --help begins 'Usage: clockbench VERB'"
for w in "${wrong[@]+"${wrong[@]}"}"; do diag "$w"; done

# A top folder of its own: the engine's copy, a list, a stand-in program
# that prints CB_PROG and its arguments; the engine reached by a symlink,
# as bin/clockbench is installed.
top=$tmp/top
mkdir -p "$top/bench" "$top/packaging" "$top/progs" "$tmp/bin"
cp "$bin" "$top/bench/clockbench"
ln -s "$top/bench/clockbench" "$tmp/bin/clockbench"
printf '#!/bin/sh\nprintf "%%s|" "$CB_PROG" "$@"; echo\n' >"$top/progs/show"
chmod +x "$top/progs/show"
list() { { printf '# a comment\n\n'; printf '%s\n' "$@"; } >"$top/packaging/commands"; }
list "show  progs/show   the arguments" "gone  progs/gone   a program that is not there"
out=$("$tmp/bin/clockbench" show a 'b c' '' -x 2>&1)
ok "$([ "$out" = "clockbench show|a|b c||-x|" ]; echo $?)" "the verb's program, from the engine's real folder, gets its arguments as given and CB_PROG: $out"
bad 1 "a listed program that is not there" "clockbench: gone: cannot run $top/progs/gone: " "$tmp/bin/clockbench" gone
list "show  progs/show   the arguments" "old  show   the old name of show, an alias"
out=$("$tmp/bin/clockbench" old a 2>&1)
ok "$([ "$out" = "clockbench old|a|" ]; echo $?)" "an alias runs its verb's program, under the name typed: $out"
list "old  show   an alias of a verb listed after it" "show  progs/show   the arguments"
bad 1 "an alias of no verb listed before it" "line 3: an alias of no verb listed before it" "$tmp/bin/clockbench" help
rm "$top/packaging/commands"
bad 1 "no list" "clockbench: $top/packaging/commands: " "$tmp/bin/clockbench" show
list "show  /bin/sh   a path outside"
bad 1 "a program outside the top folder" "clockbench: $top/packaging/commands: line 3: " "$tmp/bin/clockbench" show
list "show  ../x   a path outside"
bad 1 "a program above the top folder" "line 3: no program, or not a path under the top folder" "$tmp/bin/clockbench" show
list "Show  progs/show   a capital"
bad 1 "a bad verb name" "line 3: not a verb" "$tmp/bin/clockbench" help
list "show  progs/show   one" "show  progs/show   two"
bad 1 "a verb listed twice" "line 4: a verb listed twice" "$tmp/bin/clockbench" help
list "show  progs/show"
bad 1 "a verb without a description" "line 3: no description" "$tmp/bin/clockbench" help
head -c 17000 /dev/zero | tr '\0' '#' >"$top/packaging/commands"
bad 1 "a list over 16 KiB" "clockbench: $top/packaging/commands: over 16 KiB" "$tmp/bin/clockbench" help

# No verb: the engine, its options unchanged.
out=$("$bin" --version 2>&1)
ok "$([ "$out" = "clockbench $(/usr/bin/python3 -c 'import sys; sys.path[:0] = ["contract"]; from cbcontract import names; print(names.VERSION)')" ]; echo $?)" \
	"clockbench --version: $out"
out=$("$bin" --probe 2>&1)
rc=$?
ok "$([ "$rc" -eq 0 ] && grep -q 'monotonic.*vdso ->' <<<"$out"; echo $?)" "clockbench --probe (exit $rc)"
"$bin" --dry-run --clocks monotonic --threads 1 >/dev/null 2>"$tmp/err"
ok $? "clockbench --dry-run --clocks monotonic --threads 1"
bad 2 "the engine, a stray argument after an option" "clockbench: " "$bin" --threads 1 monotonic
"$bin" --help >"$tmp/out" 2>&1
ok "$(head -2 "$tmp/out" | grep -qxF '   or: clockbench VERB [ARG]...' && grep -q "'clockbench help' lists the verbs" "$tmp/out"; echo $?)" \
	"clockbench --help: the engine's options, and where the verbs are"
done_testing
