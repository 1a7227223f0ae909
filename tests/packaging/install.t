#!/usr/bin/env bash
# tier: slow
# serial: man
# test-timeout: 240
# install.t: `make install` into a DESTDIR: every command of packaging/commands
# with its man page, the parts under lib/clockbench, docs and the playbook;
# the installed commands run from elsewhere with no checkout on PATH and find
# their parts where they are installed; `make uninstall` leaves nothing.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
top=$PWD

command -v help2man >/dev/null || skip_all "help2man not installed (Debian: help2man): make install makes the man pages" 16
tmp=$(mktemp -d)
chmod 755 "$tmp" # a user runs an installed command too
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
dest=$tmp/dest
make -s install DESTDIR="$dest" PREFIX=/usr >"$tmp/log" 2>&1
rc=$?
ok $rc "make install DESTDIR=... PREFIX=/usr"
[ "$rc" -eq 0 ] || { tail -20 "$tmp/log" | sed 's/^/# /'; done_testing; exit; }

# Every command: a link in bin/ or sbin/ resolving inside the installed tree,
# and its man page.
bad=()
while read -r name dir sec src _; do
	link=$dest/usr/$dir/$name
	real=$(readlink -f "$link")
	case "$real" in "$dest"/usr/lib/clockbench/"$src") ;; *) bad+=("$name -> ${real:-missing}") ;; esac
	[ -x "$real" ] || bad+=("$name: not executable")
	[ -s "$dest/usr/share/man/man$sec/$name.$sec" ] || bad+=("$name: no man page $name.$sec")
done < <(sed '/^#/d' packaging/commands)
ok "${#bad[@]}" "every command of packaging/commands installed as a link into lib/clockbench, with its man page"
for b in "${bad[@]+"${bad[@]}"}"; do diag "$b"; done
# Every program of host-scripts/ is a command, but deps (the checkout's
# apt-get), runfolder (the commands' own helper) and read-frames (a reader
# of a guest's channel capture, for debugging a checkout).
unlisted=()
for f in host-scripts/*; do
	if [ ! -f "$f" ] || [ ! -x "$f" ]; then continue; fi
	case "${f##*/}" in deps | runfolder | read-frames) continue ;; esac
	sed '/^#/d' packaging/commands | awk '{print $4}' | grep -qx "$f" || unlisted+=("$f")
done
ok "${#unlisted[@]}" "every program of host-scripts/ is a command of packaging/commands"
for u in "${unlisted[@]+"${unlisted[@]}"}"; do diag "not installed as a command: $u"; done
lib=$dest/usr/lib/clockbench
ok "$([ -x "$lib/build/clockbench-static" ] && [ -x "$lib/build/guest/init" ] && [ -s "$lib/build/guest/initramfs.cpio" ] &&
	[ -x "$lib/guest-init/mkinitramfs.py" ] && [ -f "$lib/host-scripts/cbhost/launcher.py" ] && [ -f "$lib/contract/cbcontract/load.py" ]; echo $?)" \
	"the static engine, the guest's init, its initramfs and builder, the Python packages"
ok "$([ -f "$dest/usr/share/doc/clockbench/README.md" ] && [ -f "$dest/usr/share/doc/clockbench/docs/harness.md" ] &&
	[ -f "$dest/usr/share/clockbench/fleet/clockbench.yml" ] && [ -f "$dest/usr/share/clockbench/fleet/clockbench-alerts.yml" ] &&
	[ -f "$dest/usr/share/clockbench/grafana/clockbench.json" ]; echo $?)" \
	"docs under share/doc/clockbench, the playbook and alert rules under share/clockbench/fleet, the dashboard under share/clockbench/grafana"
unit=$dest/usr/lib/systemd/system/clockbench-watch.service
ok "$([ -f "$unit" ] && grep -qx 'ExecStart=/usr/sbin/clockbench-watch --textfile-dir /var/lib/prometheus/node-exporter' "$unit" &&
	[ -z "$(find "$dest" -path '*.wants*')" ]; echo $?)" \
	"clockbench-watch's systemd unit under lib/systemd/system, starting the installed command, enabled nowhere"
grep -rlIF "$top" "$dest" >"$tmp/refs"
ok "$([ ! -s "$tmp/refs" ]; echo $?)" "no installed text file names the checkout ($top)"
sed 's/^/# /' "$tmp/refs"

# From elsewhere, the checkout off PATH.
mkdir "$tmp/work"
cd "$tmp/work" || exit 1
export PATH="$dest/usr/bin:$dest/usr/sbin:/usr/bin:/bin"
unset PYTHONPATH
out=$(clockbench --probe 2>&1)
rc=$?
ok "$([ "$rc" -eq 0 ] && grep -q 'monotonic.*vdso ->' <<<"$out"; echo $?)" "the installed clockbench --probe"
names_ok=()
while read -r name dir _; do
	[ "$name" = clockbench ] && continue
	h=$("$name" --help 2>&1) || names_ok+=("$name --help: exit $?")
	grep -q "$name" <<<"$h" || names_ok+=("$name --help does not name $name")
done < <(sed '/^#/d' "$top/packaging/commands")
ok "${#names_ok[@]}" "each installed command's --help runs and names the command as installed"
for b in "${names_ok[@]+"${names_ok[@]}"}"; do diag "$b"; done
out=$(THREADS=1 DURATION=0.02 CLOCKS=monotonic METHODS=vdso clockbench-host "$tmp/work/results" r1 2>"$tmp/err")
rc=$?
last=${out##*$'\n'}
ok "$([ "$rc" -eq 0 ] && [ -s "$last" ] && [ "$(dirname "$last")" = "$tmp/work/results/r1" ]; echo $?)" \
	"clockbench-host measures with the installed engine into the folder named (exit $rc)"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/err"
clockbench-report report --no-plots -o "$tmp/work/rep" "$top/tests/analysis/fixtures/20260101-120000-hv1" >/dev/null 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$tmp/work/rep/report.md" ]; echo $?)" "clockbench-report writes a report"

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
