#!/usr/bin/env bash
# man.t: the man pages (make man, from each command's --help by help2man)
# agree with --help: one page per command of packaging/commands, named and
# described as there, with exactly the long options its --help lists.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib.sh
. tests/lib.sh
n=$(sed '/^#/d' packaging/commands | wc -l)
command -v help2man >/dev/null || skip_all "help2man not installed (Debian: help2man)" $((n * 3 + 1))
make -s man >/dev/null 2>&1
ok $? "make man"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin"

# long_opts: the long options (--name) in the text on stdin, one a line, sorted.
long_opts() { grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' | sort -u; }

while read -r name _ sec src what; do
	page=build/man/$name.$sec
	# --help under the installed name, as help2man ran it.
	ln -sf "$PWD/$src" "$tmp/bin/$name"
	ok "$([ -s "$page" ] && grep -q "^\.TH \"\?${name^^}\"\? \"\?$sec\"\?" "$page"; echo $?)" "$name: a page in section $sec"
	# help2man writes a hyphen as \- and may break a line anywhere but in a word.
	sed -n '/^\.SH NAME/{n;p;q}' "$page" | sed 's/\\-/-/g' >"$tmp/name"
	ok "$(grep -qxF "$name - $what" "$tmp/name"; echo $?)" "$name: NAME says the list's description"
	COLUMNS=80 "$tmp/bin/$name" --help 2>&1 | long_opts >"$tmp/help"
	sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$page" | long_opts >"$tmp/man"
	diff "$tmp/help" "$tmp/man" >"$tmp/diff"
	ok $? "$name: the page has the $(wc -l <"$tmp/help") long options of --help, no other"
	sed 's/^/# /' "$tmp/diff"
done < <(sed '/^#/d' packaging/commands)
done_testing
