# version.sh: the shared facts of bench/names.h for the shell commands and
# make (sourced), as cbcontract.names reads them for the Python commands.
# shellcheck shell=bash
# cb_fact [-v VAR] NAME [FILE]: the value of names.h's line
# `#define CB_NAME "VALUE"`, printed or with -v put in VAR (FILE: default the
# names.h of the checkout or installed copy this file is in); status 1
# without one.  bash alone, no process: lib/clocksource.sh reads two facts
# each time it is sourced.
cb_fact() {
	local cb_to='' cb_line cb_re cb_lines
	if [ "$1" = -v ]; then
		cb_to=$2
		shift 2
	fi
	cb_re='^#define CB_'"$1"' "([^"\\]{1,200})"$'
	mapfile -t cb_lines <"${2:-${BASH_SOURCE[0]%/*}/../../bench/names.h}" || return 1
	for cb_line in "${cb_lines[@]}"; do
		if [[ $cb_line == "#define CB_$1 "* && $cb_line =~ $cb_re ]]; then
			if [ -n "$cb_to" ]; then
				printf -v "$cb_to" '%s' "${BASH_REMATCH[1]}"
			else
				printf '%s\n' "${BASH_REMATCH[1]}"
			fi
			return 0
		fi
	done
	return 1
}
# cb_version NAME HERE: `NAME --version`, one line "NAME VERSION" (HERE: the command's own folder).
cb_version() {
	printf '%s %s\n' "$1" "$(cb_fact VERSION "$2/../bench/names.h")"
}
