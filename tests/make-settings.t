#!/usr/bin/env bash
# tier: fast
# make-settings.t: what make takes is what it reads (packaging/settings).
# A variable on make's command line that no target reads is refused in one
# line naming the setting meant, exit 2, before anything runs; an old name
# gets its new one; a setting given to a target that does not take it names
# the targets that do.  Every setting a recipe passes to a command is one
# shell word whatever it holds, no value is ever expanded by make (run as
# code), none but the build's conventions is read from the environment, and
# the environment's MAKEFLAGS, GNUMAKEFLAGS and MAKEFILES carry none.
# (Nothing here switches a clocksource: the real invocations run in a copy
# of the makefiles whose commands are stubs.)
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# value NAME: the Makefile's variable NAME as make expands it.
value() { make -s --no-print-directory -f Makefile -f - print <<<"print: ; @echo \$($1)"; }
settings=$(value SETTINGS)
env_ok=$(value ENV_SETTINGS)
ok "$([ "$(wc -w <<<"$settings")" -ge 60 ]; echo $?)" "the Makefile's SETTINGS: $(wc -w <<<"$settings") names"

# refused ARGS... -- WANT: make -n ARGS exits 2 with the one line WANT, nothing on stdout.
refused() {
	local args=() want rc
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	want=$2
	make -n --no-print-directory "${args[@]}" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -qF "$want" "$tmp/err"; echo $?)" \
		"make -n ${args[*]}: exit $rc, one line: $(head -c 160 "$tmp/err" | head -n1)$([ -s "$tmp/out" ] && echo "; ran: $(head -n1 "$tmp/out")")"
}
refused bench CLOCKSOURCE=hpet -- "unknown setting CLOCKSOURCE (did you mean CLOCKSOURCES?)"
refused bench ROUND=2 -- "unknown setting ROUND (did you mean ROUNDS?)"
refused bench rounds=2 -- "unknown setting rounds (did you mean ROUNDS?)"
refused lab LAB_STATES=9 -- "unknown setting LAB_STATES (now STATES)"
refused lab LAB_L1_APPEND=loglevel=7 -- "unknown setting LAB_L1_APPEND (now L1_APPEND)"
refused lab LAB_TIMEOUT=1h -- "unknown setting LAB_TIMEOUT (now L1_TIMEOUT)"
refused report XYZZY=1 -- "unknown setting XYZZY (no target of this Makefile reads it)"
refused check-fast SANITISE=1 -- "unknown setting SANITISE (did you mean SANITIZE?)"
# A setting to a target that does not take it (make -n showed neither
# --rounds nor --clocksources: dropped in silence).
refused bench-host ROUNDS=6 -- "ROUNDS is not a setting of make bench-host (make bench, compare, crosscheck take it)"
refused crosscheck CLOCKSOURCES=tsc -- "CLOCKSOURCES is not a setting of make crosscheck (make bench, compare take it)"
refused lab-ci TIER=all -- "TIER is not a setting of make lab-ci (make lab take it)"

# envrefused VAR=VALUE TARGET -- WANT: make -n TARGET with VAR=VALUE in its environment: exit 2, the one line WANT.
# make's environment is pinned: SHELL set, as in a login shell (CI's has none; see below).
envrefused() {
	env SHELL=/bin/sh "$1" make -n --no-print-directory "$2" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	ok "$([ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ] && grep -qF -- "$4" "$tmp/err"; echo $?)" \
		"$1 make -n $2: exit $rc, one line: $(head -c 200 "$tmp/err" | head -n1)"
}
envrefused MAKEFLAGS=CLOCKSOURCE=hpet bench -- "MAKEFLAGS in the environment sets CLOCKSOURCE: refused; settings come from make's command line only"
envrefused MAKEFLAGS=DURATION=5s bench -- "MAKEFLAGS in the environment sets DURATION: refused"
envrefused "MAKEFLAGS=k -- ROUNDS=2 DURATION=5s" bench -- "MAKEFLAGS in the environment sets ROUNDS, DURATION: refused"
envrefused GNUMAKEFLAGS=DURATION=5s bench-host -- "GNUMAKEFLAGS in the environment sets DURATION: refused"
# (make itself expands such a value before it reads any makefile: refused after the fact.)
# shellcheck disable=SC2016 # make's $(shell), not the shell's
envrefused 'MAKEFLAGS=DURATION=$(shell true)' bench -- "MAKEFLAGS in the environment sets DURATION: refused"
# Without SHELL in the environment (a service's, CI's) make's startup $(shell)
# has no shell and says so on a line of its own; the refusal is still the last line.
env -u SHELL 'MAKEFLAGS=DURATION=$(shell true)' make -n --no-print-directory bench >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && tail -n1 "$tmp/err" | grep -qF "MAKEFLAGS in the environment sets DURATION: refused"; echo $?)" \
	"no SHELL, MAKEFLAGS=DURATION=\$(shell true) make -n bench: exit $rc, refused: $(tail -n1 "$tmp/err" | head -c 160)"
envrefused "MAKEFLAGS=--eval=X:=1" bench -- "MAKEFLAGS in the environment has --eval=X:=1: refused"
envrefused "MAKEFLAGS=-E X:=1" bench -- "MAKEFLAGS in the environment has -E (--eval): refused"
envrefused "MAKEFLAGS=ke" bench -- "MAKEFLAGS in the environment has -e (--environment-overrides): refused"
printf 'X := 1\n' >"$tmp/evil.mk"
envrefused "MAKEFILES=$tmp/evil.mk" bench -- "MAKEFILES in the environment: refused"
out=$(MAKEFLAGS="-j2 -k --no-print-directory" make -n bench-host DURATION=2s 2>&1)
rc=$?
ok "$([ "$rc" = 0 ] && [[ $out == *"'--duration=2s'"* ]]; echo $?)" \
	"MAKEFLAGS=-j2 -k in the environment: make's own flags pass: $(tail -n1 <<<"$out" | head -c 120)"

# Every variable the makefiles read and none of them sets is a setting
# (or make's own): else a user's value of it would be refused.
files=(Makefile guest-init/guest.mk analysis/analysis.mk fuzz/fuzz.mk tests/torture/torture.mk packaging/packaging.mk)
own=$(value MAKE_OWN)
grep -hoE '\$\(([A-Z][A-Z0-9_]*)\)|\$\(origin ([A-Z][A-Z0-9_]*)\)|ifeq \(\$\(([A-Z][A-Z0-9_]*)\)' "${files[@]}" |
	grep -oE '[A-Z][A-Z0-9_]*\)?$' | tr -d ')' | sort -u >"$tmp/read"
grep -hoE '(^|: *)(private |override |export )?[A-Za-z_][A-Za-z0-9_]* *[:?+]?=' "${files[@]}" | sed -E 's/^: *//; s/^(private|override|export) //' |
	grep -oE '^[A-Za-z_][A-Za-z0-9_]*' | sort -u >"$tmp/set"
missing=$(comm -23 "$tmp/read" "$tmp/set" | grep -vxF -f <(tr ' ' '\n' <<<"$settings $own"))
ok "$([ -s "$tmp/read" ] && [ -z "$missing" ]; echo $?)" \
	"every variable the makefiles read and do not set is a setting ($(wc -l <"$tmp/read") read)${missing:+; not: $(tr "\n" " " <<<"$missing")}"

# A real invocation stops before its first command: the makefiles in a
# copy whose every command of the suite is a stub that leaves a mark.
mkdir -p "$tmp/copy"
cp --parents "${files[@]}" packaging/settings host-scripts/lib/make-settings.awk host-scripts/lib/version.sh bench/names.h \
	packaging/commands "$tmp/copy/"
for s in host-scripts/deps host-scripts/bench host-scripts/runfolder lab/run-lab; do
	mkdir -p "$tmp/copy/${s%/*}"
	printf '#!/bin/sh\necho "%s $*" >>"%s"\nexit 1\n' "$s" "$tmp/ran" >"$tmp/copy/$s"
	chmod +x "$tmp/copy/$s"
done
for a in "bench CLOCKSOURCE=hpet" "bench ROUND=2" "lab LAB_STATES=9"; do
	read -r -a w <<<"$a"
	(cd "$tmp/copy" && timeout 60 make --no-print-directory "${w[@]}") >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" = 2 ] && [ ! -e "$tmp/ran" ] && [ ! -s "$tmp/out" ] && [ "$(wc -l <"$tmp/err")" = 1 ]; echo $?)" \
		"make $a (run, not -n): exit $rc in one line, nothing started: $(head -n1 "$tmp/err")$([ -e "$tmp/ran" ] && echo "; ran: $(tr '\n' ' ' <"$tmp/ran")")"
	rm -f "$tmp/ran"
done

# Each target with every setting it takes (packaging/settings), each
# holding a quote and a $(shell ...): make -n passes (the flags 0), each
# value appears only as quote() writes it, and no value is run as code.
targets=$(awk '!/^#/ && NF >= 5 && $2 != "*" { n = split($2, t, ","); for (i = 1; i <= n; i++) print t[i] }' packaging/settings | sort -u)
seen=0 raw='' failed=''
for t in $targets; do
	args=()
	while read -r n; do
		case $n in
		QUIET | VERBOSE | GUEST | FORCE) args+=("$n=0") ;; # 0 or 1, or make refuses it
		INSTALL_DEPS) args+=("$n=1") ;; # 0 or 1 too; 0 would install nothing
		*) args+=("$n=$n'@\$(shell touch $tmp/ran-$n)") ;;
		esac
	done < <(awk -v t="$t" '!/^#/ && NF >= 5 && index("," $2 ",", "," t ",") { print $1 }' packaging/settings)
	make -n -k --no-print-directory "$t" "${args[@]}" V=1 "CC=CC'@\$(shell touch $tmp/ran-CC)" >"$tmp/cmds" 2>&1 || failed="$failed $t"
	raw="$raw$(grep -oE "[A-Z][A-Z0-9_]*'@" "$tmp/cmds" | sort -u | tr '\n' ' ')"
	seen=$((seen + $(grep -oE "[A-Z][A-Z0-9_]*'\\\\''@" "$tmp/cmds" | sort -u | wc -l)))
done
ran=$(cd "$tmp" && find . -name 'ran-*' -printf '%f ')
ok "$([ -z "$failed" ]; echo $?)" "make -n of $(wc -w <<<"$targets") targets, each with every setting it takes${failed:+; refused:$failed}"
ok "$([ "$seen" -ge 20 ] && [ -z "$raw" ]; echo $?)" "every setting a quote: $seen passed as one word each${raw:+; as shell text: $raw}"
ok "$([ -z "$ran" ]; echo $?)" "every setting a \$(shell touch F): none run by make${ran:+; ran: $ran}"

# The two of the audit, run for real (clockbench-report reads a results
# folder that is not there and fails; nothing else may run).
make -s --no-print-directory capacity "RESULTS=x\"; touch $tmp/F1; echo \"" >/dev/null 2>&1
RUNS="; touch $tmp/F2 #" make -s --no-print-directory capacity RESULTS="$tmp/none" >/dev/null 2>&1
ok "$([ ! -e "$tmp/F1" ] && [ ! -e "$tmp/F2" ]; echo $?)" \
	"make capacity RESULTS='x\"; touch F...' and RUNS='; touch F #' in the environment run nothing"

# None read from the environment but the build's conventions: every
# other setting set there, and no command of any target shows it.
env_args=()
for n in $settings; do
	grep -qxF "$n" <(tr ' ' '\n' <<<"$env_ok") || env_args+=("$n=ENV$n")
done
# shellcheck disable=SC2086
env "${env_args[@]}" make -n -k --no-print-directory $targets >"$tmp/cmds" 2>&1
leaked=$(grep -oE "ENV[A-Z][A-Z0-9_]*" "$tmp/cmds" | sort -u | tr '\n' ' ')
ok "$([ "${#env_args[@]}" -ge 50 ] && [ -z "$leaked" ]; echo $?)" \
	"${#env_args[@]} settings in the environment: none reaches a command${leaked:+; read: $leaked}"
done_testing
