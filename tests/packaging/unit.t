#!/usr/bin/env bash
# tier: fast
# unit.t: clockbench-watch's systemd unit (packaging/systemd/): systemd-analyze
# verify says nothing of it (its man page is checked by man.t, so --man=no),
# and does speak of a broken copy; its hardening (ProtectSystem=strict, the
# textfile folder the one writable path and the watch's own default,
# NoNewPrivileges=, capabilities no more than kmsg, tracefs, the folder,
# health's watchdog readout and the watch's own drop need; kernel
# tunables, modules and the clock protected, only the devices it reads, a
# system-service syscall filter, a memory ceiling; HUP reloads, its tracing
# instance removed after it stops); systemd-analyze security's exposure
# below the 4.4 of its first unit; the package installs it without enabling
# it, restarts it on upgrade where it runs and stops it on removal.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
unit=packaging/systemd/clockbench-watch.service
command -v systemd-analyze >/dev/null || skip_all "systemd-analyze not installed (Debian: systemd)" 8
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The unit as packaging.mk installs it, with the checkout's engine in place of the installed one.
run_name=$(make -pnq --no-print-directory help-packaging 2>/dev/null | sed -n 's/^CB_WATCH_RUN_NAME := //p')
sed -e "s|@BINDIR@/clockbench |$PWD/bench/clockbench |" -e "s|@WATCH_RUN_NAME@|$run_name|" "$unit" >"$tmp/clockbench-watch.service"
systemd-analyze verify --man=no "$tmp/clockbench-watch.service" >"$tmp/out" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ]; echo $?)" "systemd-analyze verify: exit $rc, nothing said"
sed 's/^/# /' "$tmp/out"
mkdir "$tmp/broken"
sed -e 's/^NoNewPrivileges=yes/NoNewPrivilege=yes/' -e "s|$PWD/bench/clockbench watch|$tmp/none watch|" \
	"$tmp/clockbench-watch.service" >"$tmp/broken/clockbench-watch.service"
systemd-analyze verify --man=no "$tmp/broken/clockbench-watch.service" >"$tmp/out" 2>&1
ok "$(grep -q 'Unknown key' "$tmp/out" && grep -q "$tmp/none" "$tmp/out"; echo $?)" \
	"and it speaks of a misspelt key and a missing command (a broken copy)"
key() { sed -n "s/^$1=//p" "$unit"; }
default=$(python3 -c 'import sys; sys.path[:0] = ["contract", "host-scripts"]; from cbhost import watch; print(watch.DEFAULT_DIR)')
ok "$([ "$(key ProtectSystem)" = strict ] && [ "$(key ReadWritePaths | head -1)" = "-$default" ] && [ "$(key NoNewPrivileges)" = yes ] &&
	[[ $(key ExecStart) == "@BINDIR@/clockbench watch --textfile-dir $default" ]]; echo $?)" \
	"ProtectSystem=strict, ReadWritePaths= and --textfile-dir the watch's default folder ($default), NoNewPrivileges=yes"
extra=$(key CapabilityBoundingSet | tr ' ' '\n' | grep -vxE 'CAP_SYSLOG|CAP_DAC_OVERRIDE|CAP_SYS_ADMIN|CAP_SYS_RAWIO|CAP_SET(UID|GID|PCAP)|CAP_CHOWN|CAP_FOWNER')
ok "$([ -n "$(key CapabilityBoundingSet)" ] && [ -z "$extra" ] && [ -z "$(key AmbientCapabilities)" ]; echo $?)" \
	"CapabilityBoundingSet= $(key CapabilityBoundingSet) (kmsg, the folder, tracefs, the watchdog readout; its own drop), no ambient ones"
allow=$(key DeviceAllow | tr '\n' ' ')
ok "$([ "$(key ProtectKernelTunables)" = yes ] && [ "$(key ProtectKernelModules)" = yes ] && [ "$(key ProtectClock)" = yes ] &&
	[ "$(key DevicePolicy)" = closed ] && [ "$allow" = '/dev/kmsg r /dev/hpet r ' ] &&
	[[ $(key ReadWritePaths | tr '\n' ' ') == *-/sys/kernel/tracing* ]] &&
	[[ $(key SystemCallFilter) == @system-service* ]] && [ -n "$(key MemoryMax)" ]; echo $?)" \
	"kernel tunables (but its tracefs), modules and the clock protected; devices: $allow; SystemCallFilter=$(key SystemCallFilter); MemoryMax=$(key MemoryMax)"
ok "$([ "$(key ExecReload)" = '/bin/kill -HUP $MAINPID' ] && [ "$(key ExecStopPost)" = '-@BINDIR@/clockbench kvm-trace clean' ] &&
	[ "$(key Restart)" = on-failure ]; echo $?)" \
	"HUP reloads (ExecReload=), an exit other than TERM's restarts it, its stopped tracing instance removed (ExecStopPost=)"
fact=$(bash -c '. host-scripts/lib/version.sh && cb_fact WATCH_RUN_DIR')
ok "$([ -n "$run_name" ] && [ "/run/$run_name" = "$fact" ] && [ "$(key RuntimeDirectory)" = @WATCH_RUN_NAME@ ] &&
	[ "$(key RuntimeDirectoryMode)" = 0700 ] && grep -q "RuntimeDirectory=$run_name\$" "$tmp/clockbench-watch.service"; echo $?)" \
	"the watch's lock folder: RuntimeDirectory= names.h's $fact (packaging.mk's substitution), mode 0700, root's"
if systemd-analyze security --offline=true "$tmp/clockbench-watch.service" >"$tmp/sec" 2>&1; then
	score=$(sed -n 's/.*Overall exposure level for clockbench-watch.service: \([0-9.]*\).*/\1/p' "$tmp/sec")
	ok "$(awk -v s="${score:-99}" 'BEGIN { exit !(s < 4.4) }'; echo $?)" \
		"systemd-analyze security --offline: exposure ${score:-unknown} (4.4 for the unit before issue 26)"
else
	skip "systemd-analyze security --offline not supported here"
fi
ok "$(grep -qx $'\tdh_installsystemd --no-enable' debian/rules && ! grep -q -- '--no-start' debian/rules &&
	grep -q 'SYSTEMDUNITDIR=/lib/systemd/system' debian/rules; echo $?)" \
	"the package installs it in /lib/systemd/system, never enables it, restarts it on upgrade and stops it on removal (debian/rules)"
done_testing
