#!/usr/bin/env bash
# tier: slow
# serial: man
# test-timeout: 240
# install.t: `make install` into a DESTDIR: one command, bin/clockbench, a
# link to the engine under lib/clockbench, and nothing else in bin/ or
# sbin/; its man page and each verb's (clockbench-VERB.1), which man
# renders; the parts under lib/clockbench, docs and the playbook; clockbench
# and its verbs run from elsewhere with no checkout on PATH and find their
# parts where they are installed; `make uninstall` leaves nothing.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
top=$PWD

command -v help2man >/dev/null || skip_all "help2man not installed (Debian: help2man): make install makes the man pages" 17
tmp=$(mktemp -d)
chmod 755 "$tmp" # a user runs an installed command too
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
dest=$tmp/dest
make -s install DESTDIR="$dest" PREFIX=/usr >"$tmp/log" 2>&1
rc=$?
ok $rc "make install DESTDIR=... PREFIX=/usr"
[ "$rc" -eq 0 ] || { tail -20 "$tmp/log" | sed 's/^/# /'; done_testing; exit; }

# One command: bin/clockbench, a link to the installed engine; nothing else
# in bin/ or sbin/.  Each verb's program and the list under lib/clockbench.
bins=$(cd "$dest/usr" && find bin sbin -mindepth 1 2>/dev/null | sort | tr '\n' ' ')
ok "$([ "$bins" = "bin/clockbench " ] && [ "$(readlink -f "$dest/usr/bin/clockbench")" = "$dest/usr/lib/clockbench/bench/clockbench" ] &&
	[ -x "$dest/usr/bin/clockbench" ] && cmp -s packaging/commands "$dest/usr/lib/clockbench/packaging/commands"; echo $?)" \
	"bin/ and sbin/ hold clockbench alone ($bins), a link to lib/clockbench/bench/clockbench, beside its list of verbs"
# The man pages: clockbench.1 and clockbench-VERB.1 of every verb (an
# alias has none: its verb's), each rendered by man without a warning.
bad=()
for page in clockbench $(sed '/^#/d' packaging/commands | awk '$2 ~ /\// {print "clockbench-" $1}'); do
	f=$dest/usr/share/man/man1/$page.1
	[ -s "$f" ] || { bad+=("$page: no page $page.1"); continue; }
	MANWIDTH=80 man --warnings -l "$f" >"$tmp/page" 2>"$tmp/warn" </dev/null
	{ [ ! -s "$tmp/warn" ] && grep -q "^NAME" "$tmp/page" && grep -q "$page" "$tmp/page"; } || bad+=("$page: man -l: $(head -c 160 "$tmp/warn")")
	[ ! -e "$dest/usr/share/man/man8/$page.8" ] || bad+=("$page: a page in man8 too")
done
ok "${#bad[@]}" "man1 holds clockbench.1 and clockbench-VERB.1 of each verb of packaging/commands, each rendered by man -l"
for b in "${bad[@]+"${bad[@]}"}"; do diag "$b"; done
# Every program of host-scripts/ is a verb's, but deps (the checkout's
# apt-get), runfolder (the programs' own helper), bench-running-vm
# (compare's running-VM step) and read-frames (a reader of a guest's
# channel capture, for debugging a checkout).
unlisted=()
for f in host-scripts/*; do
	if [ ! -f "$f" ] || [ ! -x "$f" ]; then continue; fi
	case "${f##*/}" in deps | runfolder | bench-running-vm | read-frames) continue ;; esac
	sed '/^#/d' packaging/commands | awk '{print $2}' | grep -qx "$f" || unlisted+=("$f")
done
ok "${#unlisted[@]}" "every program of host-scripts/ is a verb's of packaging/commands"
for u in "${unlisted[@]+"${unlisted[@]}"}"; do diag "not a verb's program: $u"; done
lib=$dest/usr/lib/clockbench
ok "$([ -x "$lib/build/clockbench-static" ] && [ -x "$lib/build/guest/init" ] && [ -s "$lib/build/guest/initramfs.cpio" ] &&
	[ -x "$lib/guest-init/mkinitramfs.py" ] && [ -f "$lib/host-scripts/cbhost/launcher.py" ] && [ -f "$lib/contract/cbcontract/load.py" ]; echo $?)" \
	"the static engine, the guest's init, its initramfs and builder, the Python packages"
ok "$([ -f "$dest/usr/share/doc/clockbench/README.md" ] && [ -f "$dest/usr/share/doc/clockbench/docs/harness.md" ] &&
	[ -f "$dest/usr/share/clockbench/fleet/clockbench.yml" ] && [ -f "$dest/usr/share/clockbench/fleet/clockbench-alerts.yml" ] &&
	[ -f "$dest/usr/share/clockbench/grafana/clockbench.json" ]; echo $?)" \
	"docs under share/doc/clockbench, the playbook and alert rules under share/clockbench/fleet, the dashboard under share/clockbench/grafana"
unit=$dest/usr/lib/systemd/system/clockbench-watch.service
ok "$([ -f "$unit" ] && grep -qx 'ExecStart=/usr/bin/clockbench watch --textfile-dir /var/lib/prometheus/node-exporter' "$unit" &&
	grep -qx 'ExecStopPost=-/usr/bin/clockbench kvm-trace clean' "$unit" && [ -z "$(find "$dest" -path '*.wants*')" ]; echo $?)" \
	"the watch's systemd unit under lib/systemd/system, starting the installed clockbench watch, enabled nowhere"
grep -rlIF "$top" "$dest" >"$tmp/refs"
ok "$([ ! -s "$tmp/refs" ]; echo $?)" "no installed text file names the checkout ($top)"
sed 's/^/# /' "$tmp/refs"

# From elsewhere, the checkout off PATH.
mkdir "$tmp/work"
cd "$tmp/work" || exit 1
export PATH="$dest/usr/bin:/usr/bin:/bin"
unset PYTHONPATH
out=$(clockbench --probe 2>&1)
rc=$?
ok "$([ "$rc" -eq 0 ] && grep -q 'monotonic.*vdso ->' <<<"$out"; echo $?)" "the installed clockbench --probe"
help=$(clockbench help 2>&1)
names_ok=()
while read -r verb _; do
	grep -qE "^  $verb " <<<"$help" || names_ok+=("clockbench help does not list $verb")
	h=$(clockbench "$verb" --help 2>&1) || names_ok+=("clockbench $verb --help: exit $?")
	[[ $(head -1 <<<"$h") == "Usage: clockbench $verb "* ]] || names_ok+=("clockbench $verb --help: $(head -1 <<<"$h" | cut -c1-60)")
done < <(sed '/^#/d' "$top/packaging/commands")
ok "${#names_ok[@]}" "the installed clockbench help lists every verb; each verb's --help runs and begins 'Usage: clockbench VERB'"
for b in "${names_ok[@]+"${names_ok[@]}"}"; do diag "$b"; done
out=$(clockbench bench-host --threads=1 --duration=0.02 --clocks=monotonic --methods=vdso "$tmp/work/results" r1 2>"$tmp/err")
rc=$?
last=${out##*$'\n'}
ok "$([ "$rc" -eq 0 ] && [ -s "$last" ] && [ "$(dirname "$last")" = "$tmp/work/results/r1" ]; echo $?)" \
	"clockbench bench-host measures with the installed engine into the folder named (exit $rc)"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/err"
clockbench report --no-plots -o "$tmp/work/rep" "$top/tests/analysis/fixtures/20260101-120000-hv1" >/dev/null 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$tmp/work/rep/report.md" ]; echo $?)" "clockbench report writes a report"

# Default folders: an installed copy as root uses /var/lib/clockbench, as a
# user the current folder; the checkout keeps results/ and its reports in results/_report.
rf=$dest/usr/lib/clockbench/host-scripts/runfolder
if [ "$(id -u)" -eq 0 ]; then
	ok "$([ "$("$rf" results-dir)" = /var/lib/clockbench/results ] && [ "$("$rf" report-dir)" = /var/lib/clockbench/report ]; echo $?)" \
		"installed, as root: /var/lib/clockbench/results and report"
	user=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$rf" results-dir 2>&1)
	ok "$([ "$user" = results ]; echo $?)" "installed, as a user: results in the current folder ($user)"
else
	skip "root's default folder (not root)"
	ok "$([ "$("$rf" results-dir)" = results ] && [ "$("$rf" report-dir)" = report ]; echo $?)" "installed, as a user: results and report in the current folder"
fi
ok "$([ "$("$top/host-scripts/runfolder" results-dir)" = results ] && [ "$("$top/host-scripts/runfolder" report-dir)" = "$top/results/_report" ]; echo $?)" \
	"the checkout keeps results and results/_report (never under build/, which make clean deletes), as root too"

cd "$top" || exit 1
make -s uninstall DESTDIR="$dest" PREFIX=/usr >"$tmp/log" 2>&1
ok $? "make uninstall"
find "$dest" \( -type f -o -type l \) >"$tmp/left"
ok "$([ ! -s "$tmp/left" ]; echo $?)" "nothing installed is left ($(wc -l <"$tmp/left") files)"
sed 's/^/# left: /' "$tmp/left" | head -5
done_testing
