#!/usr/bin/env bash
# tier: fast
# readme.t: the README's commands run as written, and those of the docs
# its examples moved to (DOCS below).  Every line of their sh blocks and
# every `make TARGET VAR=...` example in their text is checked
# here: the engine's lines by the engine itself with --dry-run appended
# (the same options, nothing measured), make lines by `make -n` (the target
# exists, and make takes each setting) and, for the measuring targets,
# their settings by bench-host's own preflight (--check-only).  A line of another kind fails: a new README
# command needs a way to be checked here first.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x bench/clockbench ] || skip_all "bench/clockbench not built (make)"

# The docs that hold examples moved out of the README, each checked as it is.
DOCS="docs/engine.md docs/health.md docs/fleet.md"

# A file's command lines: its sh blocks' lines, comments cut; then the make
# examples of its tables and text.
command_lines() {
	awk '/^```sh/{f=1;next} /^```/{f=0} f' "$1" | sed 's/[[:space:]]*#.*$//; /^[[:space:]]*$/d'
	grep -o '`make [a-z-]*\( [A-Z_]*=[^` ]*\)\+`' "$1" | tr -d '`'
}
command_lines README.md >"$tmp/lines"
n=$(wc -l <"$tmp/lines")
ok "$([ "$n" -ge 9 ]; echo $?)" "the README holds $n command lines to check"
for doc in $DOCS; do
	command_lines "$doc" >"$tmp/lines.${doc##*/}"
	n=$(wc -l <"$tmp/lines.${doc##*/}")
	ok "$([ "$n" -ge 1 ]; echo $?)" "$doc holds $n command lines to check"
done

# shellcheck disable=SC2016 # make's $(...), not the shell's
host_settings=$(make -s --no-print-directory -f Makefile -f - print <<<'print: ; @echo $(HOST_SETTINGS)')
check_line() {
	local line=$1 where=${2:-README} words target rc=0
	read -r -a words <<<"$line"
	[ "${words[0]}" = sudo ] && words=("${words[@]:1}")
	case "${words[0]}" in
	bench/clockbench)
		(cd "$tmp" && "$OLDPWD/bench/clockbench" "${words[@]:1}" --dry-run) >"$tmp/out" 2>&1 || rc=$?
		;;
	make)
		target=${words[1]:-all}
		# make itself refuses a setting no target reads.
		# (a fixed run id where the target takes one: packaging/settings)
		run_id=()
		awk -v t="$target" '$1 == "RUN_ID" && index("," $2 ",", "," t ",") { f = 1 } END { exit !f }' packaging/settings &&
			run_id=(RUN_ID=readme-t)
		make -n --no-print-directory "$target" "${words[@]:2}" "${run_id[@]}" >/dev/null 2>"$tmp/out" || rc=$?
		if [ "$rc" = 0 ]; then
			case "$target" in
			bench | bench-host | compare)
				# bench-host's settings among them, as make passes them (NAME=V: --name=V).
				opts=()
				for w in "${words[@]:2}"; do
					[[ " $host_settings " == *" ${w%%=*} "* ]] && opts+=("--$(tr 'A-Z_' 'a-z-' <<<"${w%%=*}")=${w#*=}")
				done
				host-scripts/bench-host --check-only "${opts[@]}" >"$tmp/out" 2>&1 || rc=$?
				;;
			esac
		fi
		;;
	clockbench)
		# An installed verb's line: the verb exists, and each option it
		# shows is in the verb's --help (nothing run).
		bench/clockbench "${words[1]}" --help >"$tmp/help" 2>"$tmp/out" || rc=$?
		for w in "${words[@]:2}"; do
			[[ $w == -* ]] || continue
			grep -q -- "${w%%=*}" "$tmp/help" || { echo "${words[1]} --help has no ${w%%=*}" >"$tmp/out"; rc=1; }
		done
		;;
	host-scripts/health)
		# Read-only: run as written; 0 healthy and 1 degraded are both answers.
		"${words[@]}" >"$tmp/out" 2>&1 || rc=$?
		[ "$rc" = 1 ] && rc=0
		;;
	apt)
		# apt install ./build/deb/NAME.deb PKG...: the file make deb builds
		# (this version), and every other name a Debian package.
		rc=0
		for w in "${words[@]:2}"; do
			case "$w" in
			./build/deb/*.deb)
				# CB_VERSION, in whichever of the engine's headers defines it.
				[ "$w" = "./build/deb/clockbench_$(cat bench/*.h | sed -n 's/^#define CB_VERSION "\(.*\)"$/\1/p' | head -n1)_$(dpkg --print-architecture).deb" ] ||
					{ echo "$w is not what make deb builds" >"$tmp/out"; rc=1; } ;;
			*) apt-cache show "$w" >/dev/null 2>&1 || { echo "no Debian package $w" >"$tmp/out"; rc=1; } ;;
			esac
		done
		;;
	systemctl)
		# systemctl enable --now UNIT: a unit the package installs.
		[ "${words[1]}" = enable ] && [ -f "packaging/systemd/${words[-1]}.service" ] ||
			{ echo "no unit packaging/systemd/${words[-1]}.service" >"$tmp/out"; rc=1; }
		;;
	*)
		echo "no way to check a '${words[0]}' line" >"$tmp/out"
		rc=1
		;;
	esac
	ok "$rc" "$where: $line$([ "$rc" = 0 ] || echo " (exit $rc: $(head -c 200 "$tmp/out" | head -n1))")"
}
while IFS= read -r line; do
	check_line "$line"
done <"$tmp/lines"
for doc in $DOCS; do
	while IFS= read -r line; do
		check_line "$line" "$doc"
	done <"$tmp/lines.${doc##*/}"
done
done_testing
