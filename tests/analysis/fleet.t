#!/usr/bin/env bash
# fleet.t: the Ansible playbook: syntax, then a run against this machine with a
# stand-in checkout whose `make bench-host` copies fixture results.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/lib.sh
. tests/lib.sh
root=$PWD
pb=analysis/fleet/clockbench.yml

if ! command -v ansible-playbook >/dev/null; then
	for _ in 1 2 3 4 5 6; do skip "ansible-playbook not installed (Debian: ansible-core)"; done
	done_testing
	exit
fi
ansible-playbook --syntax-check -i analysis/fleet/inventory.example.ini "$pb" >/dev/null 2>&1
ok $? "syntax check of $pb with the example inventory"

tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/results" "$tmp/textfile"
ln -s "$root/analysis" "$tmp/src/analysis"
fx=$root/tests/analysis/fixtures/20260101-120000-hv1
# shellcheck disable=SC2016 # $(RUN_ID) is make's, not the shell's
printf 'deps all:\nbench-host:\n\tmkdir results/$(RUN_ID)\n\tcp %s/host-tsc.json %s/host-hpet.json results/$(RUN_ID)/\n' "$fx" "$fx" >"$tmp/src/Makefile"
# host-check's stand-in: a degraded host (exit 1), which must not stop the play.
mkdir "$tmp/src/host-scripts"
printf '#!/bin/sh\necho '"'"'{"schema": "clockbench-host-check/1", "healthy": false, "cause": "watchdog", "cause_text": "watchdog: stand-in"}'"'"'\nexit 1\n' >"$tmp/src/host-scripts/host-check"
chmod +x "$tmp/src/host-scripts/host-check"
# The system's python3 for the modules: a version manager's shim costs seconds here.
py=$(command -v /usr/bin/python3 || command -v python3)
cat >"$tmp/inv.ini" <<EOI
[hypervisors]
hvtest ansible_connection=local ansible_python_interpreter=$py
[hypervisors:vars]
clockbench_become=false
clockbench_src=$tmp/src
clockbench_fetch_dir=$tmp/fetch
clockbench_textfile_dir=$tmp/textfile
EOI
ANSIBLE_NOCOLOR=1 ANSIBLE_PIPELINING=1 ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0 \
	ansible-playbook -i "$tmp/inv.ini" "$pb" >"$tmp/log" 2>&1
rc=$?
ok $rc "the playbook runs against this machine"
[ "$rc" -eq 0 ] || tail -20 "$tmp/log" | sed 's/^/# /'
runs=("$tmp"/fetch/hvtest/*-hvtest)
[ -f "${runs[0]}/host-tsc.json" ] && [ -f "${runs[0]}/host-hpet.json" ]
ok $? "both result files fetched to fetch/hvtest/<stamp>-hvtest/"
grep -q '^node_clockbench_clock_read_median_seconds{where="host",clocksource="hpet",clock="monotonic",method="vdso",threads="1"} 1.5e-06$' \
	"$tmp/textfile/clockbench.prom" 2>/dev/null
ok $? "node_exporter textfile written on the host"
checks=("$tmp"/fetch/hvtest/host-check-*.json)
grep -q '"cause": "watchdog"' "${checks[0]}" 2>/dev/null && grep -q 'hvtest: DEGRADED: watchdog: stand-in' "$tmp/log"
ok $? "host-check: a degraded host reported and its JSON kept on the controller"
reports=("$tmp"/fetch/report-*/report.md)
grep -q '| hpet | 1 | 1500.00 | 1800.00 | 60.00 | 60.00 | syscall |' "${reports[0]}" 2>/dev/null
ok $? "fleet report written on the controller"
done_testing
