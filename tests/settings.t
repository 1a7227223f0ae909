#!/usr/bin/env bash
# tier: fast
# settings.t: each setting has one name. It is an option of its command,
# in that command's --help; make passes a variable given on its command
# line as the option of its name (the Makefile's lists, each the same set as
# its command's options); and no program reads a setting from the
# environment (test hooks are CB_*).
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# list NAME: the Makefile's list NAME, one variable a line, as make expands it.
list() { make -s --no-print-directory -f Makefile -f - print <<<"print: ; @echo \$($1)" | tr ' ' '\n' | sed '/^$/d' | sort -u; }
# as_options: NAME a line to --name a line.
as_options() { tr 'A-Z_' 'a-z-' | sed 's/^/--/' | sort -u; }
# same WHAT WANT GOT: one TAP line, ok when the two sorted lists agree.
same() {
	local d
	d=$(diff "$2" "$3" | grep '^[<>]' | tr '\n' ' ')
	ok "$([ -s "$2" ] && [ -z "$d" ]; echo $?)" "$1 ($(wc -l <"$2") settings)${d:+; differ (< make, > --help): $d}"
}
# between FILE START END: the --options in FILE's lines from START to END.
between() { sed -n "/$2/,/$3/p" "$1" | grep -oE '^ +(-[a-z], )?--[a-z0-9-]+' | grep -oE -- '--[a-z0-9-]+' | sort -u; }

host-scripts/bench-host --help >"$tmp/host"
list HOST_SETTINGS | as_options >"$tmp/make-host"
between "$tmp/host" '^Settings' '^Exit status' >"$tmp/help-host"
same "bench-host: the Makefile's HOST_SETTINGS are its Settings options" "$tmp/make-host" "$tmp/help-host"

host-scripts/bench-guest --help >"$tmp/guest"
list GUEST_SETTINGS | as_options >"$tmp/make-guest"
between "$tmp/guest" '^Settings' '^make bench-guest' >"$tmp/help-guest"
same "bench-guest: the Makefile's GUEST_SETTINGS are its Settings options" "$tmp/make-guest" "$tmp/help-guest"

# compare: its own options that take a value, and the guest's settings
# (passed on to the launcher); its flags are the Makefile's COMPARE_FLAGS.
host-scripts/bench --help >"$tmp/compare"
list COMPARE_SETTINGS | as_options >"$tmp/make-compare"
{ between "$tmp/compare" '^Options' '^  -h, --help' | grep -vxE -- '--(quiet|verbose|no-guest|force|setting|help)'; cat "$tmp/help-guest"; } |
	sort -u >"$tmp/help-compare"
same "compare: the Makefile's COMPARE_SETTINGS are its value options and the guest's settings" "$tmp/make-compare" "$tmp/help-compare"

host-scripts/crosscheck --help >"$tmp/cross"
list CROSSCHECK_SETTINGS | as_options >"$tmp/make-cross"
between "$tmp/cross" '^Options' '^Exit status' | grep -vxE -- '--(help|version)' >"$tmp/help-cross"
same "crosscheck: the Makefile's CROSSCHECK_SETTINGS are its options" "$tmp/make-cross" "$tmp/help-cross"

lab/run-lab --help >"$tmp/lab"
list LAB_SETTINGS | as_options >"$tmp/make-lab"
between "$tmp/lab" '^Options' '^Exit status' | grep -vxE -- '--(help|version)' >"$tmp/help-lab"
same "run-lab: the Makefile's LAB_SETTINGS are its options" "$tmp/make-lab" "$tmp/help-lab"

# What make runs: each variable given as its option, quoted for the shell,
# the flags as flags; a flag's other values refused by make.
make -n bench ROUNDS=6 CLOCKSOURCES=tsc,hpet GUEST=0 QUIET=1 VCPUS=2 "APPEND=a 'b" 2>&1 | grep 'host-scripts/bench ' >"$tmp/cmd"
cmd=$(cat "$tmp/cmd")
ok "$([[ $cmd == *" -q "* && $cmd == *" --no-guest "* && $cmd == *"'--rounds=6'"* && $cmd == *"'--clocksources=tsc,hpet'"* &&
	$cmd == *"'--vcpus=2'"* && $cmd == *"'--append=a '\\''b'"* && $cmd != *"--force"* ]]; echo $?)" \
	"make bench ROUNDS=6 ... GUEST=0 QUIET=1: $(head -c 200 <<<"$cmd")"
out=$(make -n bench GUEST=yes 2>&1)
ok "$([[ $out == *"GUEST=yes: expected 0 or 1"* ]] && ! grep -q 'host-scripts/bench ' <<<"$out"; echo $?)" \
	"make bench GUEST=yes is refused by make: $(tail -n1 <<<"$out" | head -c 120)"
cmd=$(make -n bench-guest KERNEL=/k TIMEOUT=5m 2>&1 | grep -A2 'host-scripts/bench-guest ' | tr -d '\\\n\t')
ok "$([[ $cmd == *"'--kernel=/k'"* && $cmd == *"'--timeout=5m'"* && $cmd == *"--initramfs="* ]]; echo $?)" \
	"make bench-guest KERNEL=/k TIMEOUT=5m: $(head -c 200 <<<"$cmd")"

# A refusal names the option as the user typed it: the engine's own
# spellings (--clocks, --methods, --workloads) are not the verbs'.
for o in clocks methods workloads; do
	err=$(host-scripts/bench-host --check-only "--$o=bogus" 2>&1)
	ok "$([ "$?" -eq 2 ] && [[ $err == "clockbench: --$o: unknown name 'bogus'"* ]]; echo $?)" \
		"bench-host --$o=bogus: one line naming --$o, exit 2: $err"
done
# (A clocksource folder that does not exist: were the refusal gone, the run
# would stop there, this host untouched.)
err=$(CB_CS_DIR=$tmp/no-cs CB_STATE_DIR=$tmp/state timeout 60 host-scripts/bench --no-guest --observe=0 "$tmp/r" x 2>&1)
ok "$([ "$?" -eq 2 ] && [[ $err == *"--observe: not an option of bench, nor of clockbench bench-guest with --no-guest"* ]] &&
	[ ! -e "$tmp/r" ]; echo $?)" "compare --no-guest --observe=0: a guest's setting refused, nothing made: $err"

# No program reads a setting from the environment: not one of the lists'
# names in a shell expansion, os.environ or getenv.
names=$(for l in HOST_SETTINGS GUEST_SETTINGS COMPARE_SETTINGS CROSSCHECK_SETTINGS LAB_SETTINGS; do list "$l"; done |
	sort -u | paste -sd'|' -)
names="$names|QUIET|VERBOSE|GUEST|FORCE|CLOCKBENCH|CLOCKBENCH_PROGRESS|LAB_STATES|LAB_TIMEOUT|LAB_L1_APPEND"
reads=$(git grep -n -E "\\\$\\{($names)(:?[-=+?][^}]*)?\\}|environ(\\.get)?\\(?\\[?\"($names)\"|getenv\\(\"($names)\"\\)" -- \
	host-scripts analysis bench guest-init contract lab ':!*.md' | head -n 5)
ok "$([ -z "$reads" ]; echo $?)" "no program reads a setting from the environment${reads:+: $reads}"
done_testing
