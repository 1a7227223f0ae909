#!/usr/bin/env bash
# tier: slow
# serial: deb host
# test-timeout: 420
# deb.t: `make deb` builds the Debian package into build/deb/ (nothing beside
# the checkout); its fields and contents; lintian without errors (where
# installed); then it is installed into a fresh dpkg root (dpkg --root: the
# package's files alone; python3, QEMU and the C library are the machine's)
# and, from another folder with the checkout off PATH, the installed
# clockbench --probe, clockbench help and each verb's --help and man page,
# clockbench health and a TCG guest run (clockbench bench-guest); purged, it
# leaves nothing but the watch's account.  clockbench-watch.service's lifecycle:
# its maintainer scripts run against stand-ins for systemd's helpers (never
# enabled unasked, restarted on upgrade, stopped on removal); for real with
# DESTRUCTIVE=1 where systemd runs the host.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/guest-init/guest-lib.sh
top=$PWD
plan=20

for t in dpkg-buildpackage dh help2man musl-gcc; do
	command -v "$t" >/dev/null || skip_all "$t not installed (Debian: dpkg-dev debhelper help2man musl-tools)" "$plan"
done
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
# The package build's own names beside the checkout (dpkg-buildpackage
# writes ../clockbench_VERSION_ARCH.{deb,buildinfo,changes} unless told not
# to, and clockbench-dbgsym_*): only those are compared, not what other
# jobs write to the parent (another test's clockbench-test.* in /tmp).
beside() { find .. -maxdepth 1 \( -name 'clockbench_*' -o -name 'clockbench-dbgsym_*' \) -printf '%f\n' 2>/dev/null | sort; }
beside >"$tmp/parent-before"
make -s deb >"$tmp/log" 2>&1
rc=$?
debs=(build/deb/clockbench_*_amd64.deb)
deb=${debs[0]}
ok "$([ "$rc" -eq 0 ] && [ -s "$deb" ]; echo $?)" "make deb: ${deb:-no package} ($(du -k "$deb" 2>/dev/null | cut -f1) KiB)"
[ -s "$deb" ] || { sed 's/^/# /' "$tmp/log" | tail -20; done_testing; exit; }
beside >"$tmp/parent-after"
ok "$(diff -q "$tmp/parent-before" "$tmp/parent-after" >/dev/null; echo $?)" "nothing of the package build written beside the checkout: $(comm -13 "$tmp/parent-before" "$tmp/parent-after" | paste -sd' ' -)"

# lintian reads the package alone: it runs beside the checks below, its
# verdict taken near the end.
lint=
if command -v lintian >/dev/null; then
	lintian --fail-on error "$deb" >"$tmp/lintian" 2>&1 &
	lint=$!
fi
lint_verdict() {
	if [ -n "$lint" ]; then
		wait "$lint"
		ok $? "lintian: no error ($(grep -c '^[EW]:' "$tmp/lintian") errors and warnings)"
		grep '^[EWI]:' "$tmp/lintian" | sed 's/^/# /'
	else
		skip "lintian not installed (Debian: lintian)"
	fi
}

field() { dpkg-deb -f "$deb" "$1"; }
version=$(sed -n 's/^#define CB_VERSION "\(.*\)"/\1/p' bench/names.h)
ok "$([ "$(field Version)" = "$version" ] && [ "$(dpkg-parsechangelog -S Version)" = "$version" ]; echo $?)" \
	"package and changelog version $(field Version) = the engine's $version"
deps=$(field Depends)
ok "$([[ $deps == *python3* && $deps == *qemu-system-x86* ]] && [[ $(field Recommends) == *gnuplot-nox* ]] &&
	[[ $(field Suggests) == *prometheus* && $(field Suggests) == *ansible* ]]; echo $?)" \
	"Depends: $deps; Recommends: $(field Recommends); Suggests: $(field Suggests)"

dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|' >"$tmp/contents"
missing=()
# One command: /usr/bin/clockbench, nothing else of the suite in /usr/bin or /usr/sbin.
bins=$(grep -E '^/usr/s?bin/.' "$tmp/contents" | tr '\n' ' ')
[ "$bins" = "/usr/bin/clockbench " ] || missing+=("/usr/bin/clockbench alone (there: ${bins:-nothing})")
for page in clockbench $(sed '/^#/d' packaging/commands | awk '$2 ~ /\// {print "clockbench-" $1}'); do
	grep -qx "/usr/share/man/man1/$page.1.gz" "$tmp/contents" || missing+=("$page.1.gz")
done
for f in /usr/lib/clockbench/packaging/commands /usr/lib/clockbench/build/clockbench-static /usr/lib/clockbench/build/guest/initramfs.cpio \
	/usr/lib/clockbench/guest-init/mkinitramfs.py /usr/share/clockbench/fleet/clockbench.yml /usr/share/doc/clockbench/copyright \
	/lib/systemd/system/clockbench-watch.service /usr/lib/sysusers.d/clockbench.conf /var/lib/clockbench/; do
	grep -qx "$f" "$tmp/contents" || missing+=("$f")
done
ok "${#missing[@]}" "the package holds /usr/bin/clockbench alone, its list of verbs, each man page, the static engine, the initramfs, the playbook, the watch's unit and account"
for m in "${missing[@]+"${missing[@]}"}"; do diag "missing: $m"; done
varlib=$(dpkg-deb -c "$deb" | awk '$6 == "./var/lib/clockbench/" {print $1, $2}')
ok "$([ "$varlib" = "drwxr-xr-x root/root" ]; echo $?)" "/var/lib/clockbench (run folders) shipped root's, mode 0755: ${varlib:-absent}"

# A fresh root: an empty dpkg database, an empty /etc (its account goes there) and the package.
root=$tmp/root
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/etc"
: >"$root/var/lib/dpkg/status"
force=--force-depends
[ "$(id -u)" -eq 0 ] || force=$force,not-root
# dpkg wants ldconfig and start-stop-daemon on PATH.  The maintainer scripts
# (dh_installsystemd's, for the watch's unit) run outside the fresh root,
# which has no shell, with DPKG_ROOT naming it (deb-systemd-helper acts there).
force=$force,script-chrootless
dpkg_root() { PATH="$PATH:/usr/sbin:/sbin" DPKG_ROOT="$root" dpkg --root="$root" --log=/dev/null "$force" "$@"; }
dpkg_root -i "$deb" >"$tmp/dpkg" 2>&1
ok $? "dpkg --root installs it into a fresh root"
[ -x "$root/usr/bin/clockbench" ] || { sed 's/^/# /' "$tmp/dpkg"; lint_verdict; done_testing; exit; }
# The TCG guest run of the installed clockbench bench-guest, beside the checks
# below (from another folder, the checkout off PATH); its verdict near the end.
mkdir "$tmp/work"
kernel=$(guest_kernel)
# inst CMD...: CMD with the fresh root's commands first on PATH and no checkout on it;
# Python free to write its bytecode caches, as on a machine without the setting (purge removes them).
inst() { env -u PYTHONPATH -u PYTHONDONTWRITEBYTECODE PATH="$root/usr/bin:/usr/bin:/bin" "$@"; }
guest=
if command -v qemu-system-x86_64 >/dev/null && [ -n "$kernel" ]; then
	(cd "$tmp/work" && inst clockbench bench-guest --kernel="$kernel" --accel=tcg --vcpus=1 \
		--timeout=150 --duration=0.1 --clocks=monotonic --methods=vdso --check=none --results "$tmp/work/results" --run-id pkg \
		>"$tmp/guest.out" 2>"$tmp/err") &
	guest=$!
fi
# The watch's unit: installed, not enabled, in the fresh root only; its account made there (systemd-sysusers --root).
dpkg-deb -e "$deb" "$tmp/control"
ok "$([ -f "$root/lib/systemd/system/clockbench-watch.service" ] && [ -z "$(find "$root/etc" -name 'clockbench-watch*' 2>/dev/null)" ] &&
	[ -z "$(find /etc/systemd /var/lib/systemd -name 'clockbench-watch*' 2>/dev/null)" ]; echo $?)" \
	"clockbench-watch.service installed, enabled nowhere; nothing of it outside the fresh root"
acct=$(grep '^clockbench:' "$root/etc/passwd" 2>/dev/null)
ok "$([[ $acct == clockbench:x:*:*:*:/nonexistent:/usr/sbin/nologin ]] && [ "$(stat -c '%a %U' "$root/var/lib/clockbench")" = "755 root" ]; echo $?)" \
	"the watch's account made in the fresh root (${acct:-none}); /var/lib/clockbench 0755, root's"

# The maintainer scripts against stand-ins: systemd "running" (a folder in place of /run/systemd/system), the
# helpers logging their calls; deb-systemd-helper says the unit was never enabled (the case where nothing may start).
sim=$tmp/sim
mkdir -p "$sim/bin" "$sim/run-systemd"
for h in deb-systemd-helper deb-systemd-invoke systemctl systemd-sysusers; do
	# shellcheck disable=SC2016 # the stand-in's own $* and $1 $2
	printf '#!/bin/sh\necho "%s $*" >>"%s/calls"\n[ "$1 $2" != "--quiet was-enabled" ]\n' "$h" "$sim" >"$sim/bin/$h"
	chmod +x "$sim/bin/$h"
done
# step SCRIPT ARGS...: the package's maintainer script SCRIPT run with ARGS; prints the unit calls it made.
step() {
	local script=$1
	shift
	: >"$sim/calls"
	sed "s|/run/systemd/system|$sim/run-systemd|g" "$tmp/control/$script" >"$sim/$script"
	env -u DPKG_ROOT PATH="$sim/bin:/usr/bin:/bin" sh -e "$sim/$script" "$@" >/dev/null 2>&1 || echo "exit $?;"
	grep -E 'deb-systemd-invoke|systemctl .*(start|stop|enable)|deb-systemd-helper enable' "$sim/calls" | tr '\n' ';'
}
fresh=$(step postinst configure)
upgrade=$(step postinst configure 0.1.0)
ok "$([ "$fresh" = "deb-systemd-invoke start clockbench-watch.service;" ] &&
	[ "$upgrade" = "deb-systemd-invoke restart clockbench-watch.service;" ]; echo $?)" \
	"postinst never enables it; a fresh install starts it only as deb-systemd-invoke does, no disabled unit ('$fresh'); an upgrade restarts it ('$upgrade')"
remove=$(step prerm remove)
pre_upgrade=$(step prerm upgrade 0.2.0)
ok "$([ "$remove" = "deb-systemd-invoke stop clockbench-watch.service;" ] && [ -z "$pre_upgrade" ]; echo $?)" \
	"prerm: removal stops it ('$remove'); an upgrade leaves it running until postinst restarts it ('$pre_upgrade')"

# For real: install, enable and start, upgrade (the same package again), remove; only where systemd runs this host.
if ! destructive; then
	skip "destructive: installs the package on this host and starts its service (DESTRUCTIVE=1, as root)"
elif [ ! -d /run/systemd/system ] || dpkg -s clockbench >/dev/null 2>&1; then
	skip "systemd does not run this host, or clockbench is installed here already"
else
	pid_of() { systemctl show -p MainPID --value clockbench-watch.service; }
	{ dpkg -i "$deb" && systemctl enable --now clockbench-watch.service; } >"$tmp/real" 2>&1
	sleep 2
	p1=$(pid_of)
	dpkg -i "$deb" >>"$tmp/real" 2>&1
	sleep 2
	p2=$(pid_of)
	dpkg -r clockbench >>"$tmp/real" 2>&1
	state=$(systemctl is-active clockbench-watch.service 2>/dev/null)
	dpkg --purge clockbench >>"$tmp/real" 2>&1
	ok "$([ "${p1:-0}" != 0 ] && [ "${p2:-0}" != 0 ] && [ "$p1" != "$p2" ] && [ "$state" != active ]; echo $?)" \
		"for real: enabled and running ($p1), restarted by the upgrade ($p2), stopped by the removal ($state)"
	sed 's/^/# /' "$tmp/real" | tail -5
fi

cd "$tmp/work" || exit 1
out=$(inst clockbench --probe 2>&1)
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(inst sh -c 'command -v clockbench')" = "$root/usr/bin/clockbench" ] && grep -q 'monotonic.*vdso ->' <<<"$out"; echo $?)" \
	"the installed clockbench --probe"
# clockbench help lists every verb; each verb's --help names it, and its page renders.
help=$(inst clockbench help 2>&1)
bad=()
n=0
while read -r verb src _; do
	n=$((n + 1))
	grep -qE "^  $verb " <<<"$help" || bad+=("clockbench help does not list $verb")
	first=$(inst clockbench "$verb" --help 2>&1 </dev/null | head -1)
	[[ $first == "Usage: clockbench $verb "* ]] || bad+=("clockbench $verb --help: ${first:0:60}")
	[[ $src == */* ]] || verb=$src # an alias: its verb's page
	MANWIDTH=80 man --warnings -l "$root/usr/share/man/man1/clockbench-$verb.1.gz" >"$tmp/page" 2>"$tmp/warn" </dev/null
	{ [ ! -s "$tmp/warn" ] && grep -qE "clockbench-$verb +- " "$tmp/page"; } || bad+=("clockbench-$verb.1.gz: $(head -c 100 "$tmp/warn")")
done < <(sed '/^#/d' "$top/packaging/commands")
[ "$n" -ge 9 ] || bad+=("only $n verbs read from $top/packaging/commands")
ok "${#bad[@]}" "the installed clockbench help lists every verb ($n); each verb's --help begins 'Usage: clockbench VERB'; each clockbench-VERB(1) renders"
for b in "${bad[@]+"${bad[@]}"}"; do diag "$b"; done
inst clockbench health --format json >"$tmp/check.json" 2>"$tmp/health-err"
rc=$?
ok "$([ "$rc" -le 1 ] && grep -q '"schema": "clockbench-health/1"' "$tmp/check.json"; echo $?)" \
	"the installed clockbench health (exit $rc: $([ "$rc" -eq 0 ] && echo healthy || echo degraded))"
[ "$rc" -le 1 ] || sed 's/^/# /' "$tmp/health-err"
lint_verdict
if [ -z "$guest" ]; then
	skip "no qemu-system-x86_64 or no readable kernel image for the guest"
	skip "no guest run"
else
	wait "$guest"
	rc=$?
	out=$(cat "$tmp/guest.out")
	res=${out##*$'\n'}
	ok "$([ "$rc" -eq 0 ] && [ -s "$res" ]; echo $?)" "a TCG guest run of the installed clockbench bench-guest (exit $rc)"
	[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/err" | tail -5
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(d["launcher"]["initramfs"] != sys.argv[2] or d["launcher"]["accel"] != "tcg")' \
		"$res" "$root/usr/lib/clockbench/build/guest/initramfs.cpio" 2>/dev/null
	ok $? "its result names the installed initramfs, accel tcg"
fi
cd "$top" || exit 1
grep -rlIF "$top" "$root" >"$tmp/refs"
ok "$([ ! -s "$tmp/refs" ]; echo $?)" "no installed text file names the checkout"
sed 's/^/# /' "$tmp/refs"
dpkg_root --purge clockbench >"$tmp/dpkg" 2>&1
# The account stays (Debian removes no system account): /etc's user and group files and their lock.
find "$root" \( -type f -o -type l \) -not -path "$root/var/lib/dpkg/*" | grep -vxE "$root/etc/((passwd|group|shadow|gshadow)-?|\.pwd\.lock)" >"$tmp/left"
ok "$([ ! -s "$tmp/left" ]; echo $?)" "dpkg --purge leaves nothing but the account ($(wc -l <"$tmp/left") files)"
sed 's/^/# left: /' "$tmp/left" | head -5
done_testing
