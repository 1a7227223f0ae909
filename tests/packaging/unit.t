#!/usr/bin/env bash
# unit.t: clockbench-watch's systemd unit (packaging/systemd/): systemd-analyze
# verify says nothing of it (its man page is checked by man.t, so --man=no),
# and does speak of a broken copy; its hardening (ProtectSystem=strict, the
# textfile folder the one writable path and the watch's own default,
# NoNewPrivileges=, capabilities no more than kmsg, tracefs, the folder and
# host-check's watchdog readout need); the package installs it without
# enabling or starting it.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
unit=packaging/systemd/clockbench-watch.service
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze not installed (Debian: systemd)" 5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The unit as packaging.mk installs it, with the checkout's command in place of the installed one.
sed "s|@SBINDIR@/clockbench-watch|$PWD/host-scripts/watch|" "$unit" >"$tmp/clockbench-watch.service"
systemd-analyze verify --man=no "$tmp/clockbench-watch.service" >"$tmp/out" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ]; echo $?)" "systemd-analyze verify: exit $rc, nothing said"
sed 's/^/# /' "$tmp/out"
mkdir "$tmp/broken"
sed -e 's/^NoNewPrivileges=yes/NoNewPrivilege=yes/' -e "s|$PWD/host-scripts/watch|$tmp/none|" \
	"$tmp/clockbench-watch.service" >"$tmp/broken/clockbench-watch.service"
systemd-analyze verify --man=no "$tmp/broken/clockbench-watch.service" >"$tmp/out" 2>&1
ok "$(grep -q 'Unknown key' "$tmp/out" && grep -q "$tmp/none" "$tmp/out"; echo $?)" \
	"and it speaks of a misspelt key and a missing command (a broken copy)"
key() { sed -n "s/^$1=//p" "$unit"; }
default=$(python3 -c 'import sys; sys.path[:0] = ["contract", "host-scripts"]; from cbhost import watch; print(watch.DEFAULT_DIR)')
ok "$([ "$(key ProtectSystem)" = strict ] && [ "$(key ReadWritePaths)" = "-$default" ] && [ "$(key NoNewPrivileges)" = yes ] &&
	[[ $(key ExecStart) == "@SBINDIR@/clockbench-watch --textfile-dir $default" ]]; echo $?)" \
	"ProtectSystem=strict, ReadWritePaths= and --textfile-dir the watch's default folder ($default), NoNewPrivileges=yes"
extra=$(key CapabilityBoundingSet | tr ' ' '\n' | grep -vxE 'CAP_SYSLOG|CAP_DAC_OVERRIDE|CAP_SYS_ADMIN|CAP_SYS_RAWIO')
ok "$([ -n "$(key CapabilityBoundingSet)" ] && [ -z "$extra" ] && [ -z "$(key AmbientCapabilities)" ]; echo $?)" \
	"CapabilityBoundingSet= $(key CapabilityBoundingSet) (kmsg, the folder, tracefs's mount, the watchdog readout), no ambient ones"
ok "$(grep -qx $'\tdh_installsystemd --no-enable --no-start' debian/rules && grep -q 'SYSTEMDUNITDIR=/lib/systemd/system' debian/rules; echo $?)" \
	"the package installs it in /lib/systemd/system, neither enabled nor started (debian/rules)"
done_testing
