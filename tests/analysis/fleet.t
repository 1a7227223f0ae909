#!/usr/bin/env bash
# tier: slow
# serial: host
# test-timeout: 600
# fleet.t: the Ansible playbook: syntax; a run against this machine in
# checkout mode with a stand-in checkout whose bench-host copies fixture
# results; a compromised host whose find result a stand-in interpreter
# forges (nothing lands outside its run folder on the controller, no name
# outside the contract's is fetched); package mode refusing a missing .deb;
# and, as root, package mode
# for real: make deb, the playbook installs it on this machine with apt,
# measures with the installed commands, fetches, reports; purged after.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib/lib.sh
. tests/lib/lib.sh
root=$PWD
pb=analysis/fleet/clockbench.yml
plan=22

command -v ansible-playbook >/dev/null || skip_all "ansible-playbook not installed (Debian: ansible-core)" "$plan"
ansible-playbook --syntax-check -i analysis/fleet/inventory.example.ini "$pb" >/dev/null 2>&1
ok $? "syntax check of $pb with the example inventory"
# Package mode runs the installed clockbench's verbs, each one of packaging/commands, and no other command.
named=$(grep -oE "\['clockbench', '[a-z-]+'\]" "$pb" | sed -E "s/.*'([a-z-]+)'\]/\1/" | sort -u)
unknown=$(comm -23 <(echo "$named") <(sed '/^#/d' packaging/commands | awk '{print $1}' | sort))
ok "$([ "$(wc -w <<<"$named")" -ge 5 ] && [ -z "$unknown" ] && ! grep -qE "'clockbench-[a-z-]+'" "$pb"; echo $?)" \
	"package mode runs clockbench VERB (${named//$'\n'/ }), each a verb of packaging/commands${unknown:+; not: $unknown}"

tmp=$(mktemp -d)
installed=0
cleanup() {
	[ "$installed" = 0 ] || dpkg --purge clockbench >/dev/null 2>&1
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap cleanup EXIT
# The playbook's controller polls its workers every millisecond by default:
# CPU spent waiting, in a run whose every task waits on a worker.
printf '[defaults]\ninternal_poll_interval = 0.05\n' >"$tmp/ansible.cfg"
mkdir -p "$tmp/src/results" "$tmp/src/host-scripts" "$tmp/textfile" "$tmp/textfile-pkg"
ln -s "$root/analysis" "$tmp/src/analysis"
fx=$root/tests/analysis/fixtures/20260101-120000-hv1
printf 'deps all guest-initramfs:\n' >"$tmp/src/Makefile"
# bench-host's stand-in: the fixture's results into RESULTS_DIR/RUN_ID, in
# two rounds as compare keeps them (round-1/, round-2/: files of one name).
# shellcheck disable=SC2016 # the stand-in's own $1 and $2
printf '#!/bin/sh\nmkdir "$1/$2" && for r in 1 2; do mkdir "$1/$2/round-$r" && cp %s/host-tsc.json %s/host-hpet.json "$1/$2/round-$r/" || exit 1; done\n' \
	"$fx" "$fx" >"$tmp/src/host-scripts/bench-host"
# health's stand-in: a degraded host (exit 1), which must not stop the play.
printf '#!/bin/sh\necho '"'"'{"schema": "clockbench-health/1", "healthy": false, "cause": "watchdog", "cause_text": "watchdog: stand-in"}'"'"'\nexit 1\n' >"$tmp/src/host-scripts/health"
chmod +x "$tmp/src/host-scripts/bench-host" "$tmp/src/host-scripts/health"
# The watch itself (it finds its parts from its real path).
ln -s "$root/host-scripts/watch" "$tmp/src/host-scripts/watch"
cs_now=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
# The system's python3 for the modules: a version manager's shim costs seconds here.
py=$(command -v /usr/bin/python3 || command -v python3)
# inventory FILE SETTING...: this machine as the one hypervisor.
inventory() {
	local f=$1 s
	shift
	printf '[hypervisors]\nhvtest ansible_connection=local ansible_python_interpreter=%s\n[hypervisors:vars]\nclockbench_become=false\n' "$py" >"$f"
	for s in "$@"; do echo "$s" >>"$f"; done
}
play() { # play INVENTORY LOG (the watch's lock folder one of the test's, not the host's)
	CB_WATCH_RUN_DIR="$tmp/watch-run" ANSIBLE_CONFIG="$tmp/ansible.cfg" ANSIBLE_NOCOLOR=1 ANSIBLE_PIPELINING=1 ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0 \
		ANSIBLE_REMOTE_TMP="$tmp/ansible-remote" ANSIBLE_LOCAL_TEMP="$tmp/ansible-local" \
		ansible-playbook -i "$1" "$pb" >"$2" 2>&1
}

# Two hosts of one short name (hvtest.dc1, hvtest.dc2), fetching into one
# folder: two run folders, both in the fleet report.  hvtest.dc1 is the
# honest host (checkout mode, textfile, the watch's pass).
mkdir -p "$tmp/src2/results"
cp -r "$tmp/src/host-scripts" "$tmp/src/Makefile" "$tmp/src2/"
ln -s "$root/analysis" "$tmp/src2/analysis"
# hvtest.dc2 is a compromised host: a stand-in interpreter runs each module with the real
# one and adds forged paths to find's result (.., absolute paths, the
# report tool's, a symlink-shaped, a templated name); the host's own run
# folder also holds names of no contract (notes.txt, a newline).  Its run
# folder is one level deeper than the controller's, so a path climbing out
# of it names a file that exists on the host, and on the controller a
# place under $tmp/c/ outside fetch3/.
mkdir -p "$tmp/h/src3/results" "$tmp/c/d"
cp -r "$tmp/src/host-scripts" "$tmp/src/Makefile" "$tmp/h/src3/"
ln -s "$root/analysis" "$tmp/h/src3/analysis"
cat >"$tmp/h/src3/host-scripts/bench-host" <<EOF
#!/bin/bash
"$tmp/src/host-scripts/bench-host" "\$@" || exit 1
echo notes >"\$1/\$2/notes.txt" && echo newline >"\$1/\$2/"\$'host-tsc.json\n'
EOF
echo forged >"$tmp/evil-dotdot"
echo secret >"$tmp/host-secret"
cat >"$tmp/forge-python" <<EOF
#!$py
"""The host's python, with find's result forged."""
import json, subprocess, sys
p = subprocess.run(["$py"] + sys.argv[1:], stdout=subprocess.PIPE)
out = p.stdout
try:
    doc = json.loads(out)
except ValueError:
    doc = None
paths = doc.get("invocation", {}).get("module_args", {}).get("paths") if isinstance(doc, dict) else None
if paths and isinstance(doc.get("files"), list) and doc["files"]:
    run = paths[0]
    forged = [run + "/../../../../evil-dotdot", "$tmp/host-secret", run + "/../../../../analysis/clockbench-report",
              run + "/round-1/../../../../../host-secret", run + "/round-1/host-tsc.json -> /etc/passwd",
              run + "/{{ 'templ' ~ 'ated' }}.json"]
    doc["files"] += [dict(doc["files"][0], path=f) for f in forged]
    doc["matched"] = len(doc["files"])
    out = json.dumps(doc).encode()
sys.stdout.buffer.write(out)
sys.exit(p.returncode)
EOF
chmod +x "$tmp/h/src3/host-scripts/bench-host" "$tmp/forge-python"
# One run of the playbook for the two hosts above (ansible-playbook's own
# cost, per task and host, is most of this file's time), both fetching to
# fetch3/; the fleet report of both goes beside their run folders
# (fetch3/report-*/).
{
	printf '[hypervisors]\n'
	printf 'hvtest.dc1 ansible_connection=local ansible_python_interpreter=%s clockbench_src=%s clockbench_fetch_dir=%s clockbench_textfile_dir=%s\n' \
		"$py" "$tmp/src2" "$tmp/c/d/fetch3" "$tmp/textfile"
	printf 'hvtest.dc2 ansible_connection=local ansible_python_interpreter=%s clockbench_src=%s clockbench_fetch_dir=%s clockbench_watch=false\n' \
		"$tmp/forge-python" "$tmp/h/src3" "$tmp/c/d/fetch3"
	printf '[hypervisors:vars]\nclockbench_become=false\nclockbench_install=checkout\n'
} >"$tmp/inv.ini"
play "$tmp/inv.ini" "$tmp/log"
rc=$?
all=$rc
ok $rc "checkout mode: the playbook runs against this machine"
[ "$rc" -eq 0 ] || tail -20 "$tmp/log" | sed 's/^/# /'
runs=("$tmp"/c/d/fetch3/hvtest.dc1/*-hvtest.dc1)
[ -f "${runs[0]}/round-1/host-tsc.json" ] && [ -f "${runs[0]}/round-1/host-hpet.json" ] &&
	[ -f "${runs[0]}/round-2/host-tsc.json" ] && [ -f "${runs[0]}/round-2/host-hpet.json" ] && [ ! -e "${runs[0]}/host-tsc.json" ]
ok $? "every round's result files fetched to fetch3/hvtest.dc1/<stamp>-hvtest.dc1/round-<N>/, none folded into one"
grep -q '^node_clockbench_clock_read_median_seconds{where="host",clocksource="hpet",clock="monotonic",method="vdso",threads="1"} 1.5e-06$' \
	"$tmp/textfile/clockbench.prom" 2>/dev/null
ok $? "node_exporter textfile written on the host"
grep -qx "node_clockbench_clocksource_info{clocksource=\"$cs_now\"} 1" "$tmp/textfile/clockbench-watch.prom" 2>/dev/null
ok $? "the watch's metrics appear in the host's textfile folder (clocksource $cs_now)"
checks=("$tmp"/c/d/fetch3/hvtest.dc1/health-*.json)
grep -q '"cause": "watchdog"' "${checks[0]}" 2>/dev/null && grep -q 'hvtest.dc1: DEGRADED: watchdog: stand-in' "$tmp/log"
ok $? "health: a degraded host reported and its JSON kept on the controller"
reports=("$tmp"/c/d/fetch3/report-*/report.md)
grep -qF "| $(basename "${runs[0]}") | hpet | 1 | 1500.00 | 1800.00 | " "${reports[0]}" 2>/dev/null
ok $? "fleet report written on the controller"

r1=("$tmp"/c/d/fetch3/hvtest.dc1/*-hvtest.dc1) r2=("$tmp"/c/d/fetch3/hvtest.dc2/*-hvtest.dc2)
ok "$([ "$rc" -eq 0 ] && [ -f "${r1[0]}/round-2/host-tsc.json" ] && [ -f "${r2[0]}/round-2/host-tsc.json" ]; echo $?)" \
	"two hosts of one short name: two run folders of two names (exit $rc)"
[ "$rc" -eq 0 ] || tail -20 "$tmp/log" | sed 's/^/# /'
reports=("$tmp"/c/d/fetch3/report-*/report.md)
grep -q "| $(basename "${r1[0]}") | hpet | 1 | 1500.00 |" "${reports[0]}" 2>/dev/null &&
	grep -q "| $(basename "${r2[0]}") | hpet | 1 | 1500.00 |" "${reports[0]}" 2>/dev/null
ok $? "the fleet report holds both hosts"

inventory "$tmp/inv-nodeb.ini" "clockbench_deb=$tmp/nowhere/clockbench_0_amd64.deb" "clockbench_fetch_dir=$tmp/fetch-nodeb"
play "$tmp/inv-nodeb.ini" "$tmp/log-nodeb"
rc=$?
ok "$([ "$rc" -ne 0 ] && grep -q "clockbench_0_amd64.deb: no such package on the controller" "$tmp/log-nodeb" && [ ! -e "$tmp/fetch-nodeb/hvtest" ]; echo $?)" \
	"package mode: a missing .deb stops the play before anything runs (exit $rc)"

rc=$all
r3=("$tmp"/c/d/fetch3/hvtest.dc2/*-hvtest.dc2)
reports=("$tmp"/c/d/fetch3/report-*/report.md)
ok "$([ "$rc" -eq 0 ] && [ -f "${r3[0]}/round-1/host-tsc.json" ] && [ -f "${r3[0]}/round-2/host-hpet.json" ] &&
	grep -qF "| $(basename "${r3[0]}") | hpet | 1 | 1500.00 | " "${reports[0]}" 2>/dev/null; echo $?)" \
	"a forged find result: the host's own results fetched and reported all the same (exit $rc)"
[ "$rc" -eq 0 ] || tail -20 "$tmp/log" | sed 's/^/# /'
# Every file on the controller's side: each host's health report and run folder (contract names), the report's.
stray=$(cd "$tmp/c" && find . -mindepth 1 ! -type d -printf '%P\0' | while IFS= read -r -d '' f; do
	[[ $f =~ ^d/fetch3/hvtest\.dc[12]/health-[0-9-]+\.json$ || $f =~ ^d/fetch3/report-[0-9-]+/ ||
		$f =~ ^d/fetch3/hvtest\.dc1/[0-9]{8}-[0-9]{6}-hvtest\.dc1/(round-[12]/)?host-(tsc|hpet)\.json$ ||
		$f =~ ^d/fetch3/hvtest\.dc2/[0-9]{8}-[0-9]{6}-hvtest\.dc2/(round-[12]/)?host-(tsc|hpet)\.json$ ]] || printf '%q ' "$f"
done)
ok "$([ -z "$stray" ] && [ ! -e "$tmp/c/evil-dotdot" ] && [ ! -e "$tmp/c/host-secret" ]; echo $?)" \
	"nothing written outside the host's run folder on the controller, nothing but the contract's names in it${stray:+: $stray}"
ok "$([ ! -e "${r3[0]}/notes.txt" ] && [ ! -e "${r3[0]}/templated.json" ] && [ ! -e "${r3[0]}/"$'host-tsc.json\n' ]; echo $?)" \
	"no name outside the contract's fetched (notes.txt, a newline, a templated name)"
n=0
for s in '/notes.txt: no file name' '/host-tsc.json\\n: no file name' "/../../../../evil-dotdot: no file name" \
	"$tmp/host-secret: outside the run folder" "/{{ 'templ' ~ 'ated' }}.json: no file name" '/round-1/host-tsc.json -> /etc/passwd: no file'; do
	grep -qF -- "$s" "$tmp/log" || { diag "no skip line with: $s"; n=$((n + 1)); }
done
ok "$n" "each path skipped says so in one line (the newline escaped, the template not run)"

# Package mode for real, on this machine.
why=
if ! destructive; then
	why="package mode installs the package on this machine: root and DESTRUCTIVE=1 only"
elif dpkg -s clockbench >/dev/null 2>&1; then
	why="a clockbench package is already installed here: not touched"
elif ! command -v dpkg-buildpackage >/dev/null || ! command -v dh >/dev/null || ! command -v help2man >/dev/null; then
	why="make deb needs dpkg-dev, debhelper, help2man"
fi
if [ -n "$why" ]; then
	for _ in 1 2 3 4 5 6 7; do skip "$why"; done
	done_testing
	exit
fi
make -s deb >"$tmp/deb.log" 2>&1
debs=("$root"/build/deb/clockbench_*_amd64.deb)
deb=${debs[0]}
ok "$([ -s "$deb" ]; echo $?)" "make deb: ${deb:-no package}"
installed=1
inventory "$tmp/inv-pkg.ini" "clockbench_deb=$deb" "clockbench_results=$tmp/host-results" "clockbench_fetch_dir=$tmp/fetch-pkg" \
	"clockbench_textfile_dir=$tmp/textfile-pkg" clockbench_threads=1 clockbench_duration=0.05
play "$tmp/inv-pkg.ini" "$tmp/log-pkg"
rc=$?
ok $rc "package mode: the playbook installs the .deb here and measures with it"
[ "$rc" -eq 0 ] || tail -20 "$tmp/log-pkg" | sed 's/^/# /'
ok "$([ "$(dpkg-query -W -f='${Status}' clockbench 2>/dev/null)" = "install ok installed" ] && [ "$(readlink -f /usr/bin/clockbench)" = /usr/lib/clockbench/bench/clockbench ]; echo $?)" \
	"the package is installed: /usr/bin/clockbench"
runs=("$tmp"/fetch-pkg/hvtest/*-hvtest)
files=$(cd "${runs[0]}" 2>/dev/null && echo *)
ok "$([[ $files == *host-*.json* ]] && [ -d "$tmp/host-results/$(basename "${runs[0]}")" ]; echo $?)" \
	"the installed clockbench host's run folder, in clockbench_results, fetched: $files"
grep -q '^node_clockbench_clock_read_median_seconds{where="host",.*method="vdso",threads="1"} ' "$tmp/textfile-pkg/clockbench.prom" 2>/dev/null &&
	ls "$tmp"/fetch-pkg/report-*/report.md >/dev/null 2>&1
ok $? "textfile by the installed clockbench report, fleet report on the controller"
# No systemd here: the play's one pass of the installed clockbench watch.
ok "$(grep -q '^node_clockbench_clocksource_info{' "$tmp/textfile-pkg/clockbench-watch.prom" 2>/dev/null ||
	{ [ -d /run/systemd/system ] && systemctl is-enabled clockbench-watch >/dev/null; }; echo $?)" \
	"the installed clockbench watch: enabled (systemd) or its one pass written"
dpkg --purge clockbench >/dev/null 2>&1
installed=0
ok "$(! dpkg -s clockbench >/dev/null 2>&1 && [ ! -e /usr/bin/clockbench ] && [ ! -e /usr/lib/clockbench ]; echo $?)" "purged again"
done_testing
