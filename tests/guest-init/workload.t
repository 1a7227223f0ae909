#!/usr/bin/env bash
# tier: slow
# test-timeout: 200
# workload.t: a real TCG guest boot with --workloads=all (clockbench.workload=):
# /init brings lo up, so the TCP workloads run in the guest and every
# workload row comes back (the figures are an emulator's: only that they
# are there).  One vCPU (both ends of a TCP workload share it), so that
# settle.t's checks are made on this boot too.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/guest-init/guest-lib.sh
tap_tmp --tmpdir
guest_boot_needs

res=$tmp/results/run/guest-$(host_cs)-1vcpu.json
start=$SECONDS
host-scripts/bench-guest --kernel="$kernel" --initramfs="$initrd" --accel=tcg --machine=q35 --vcpus=1 --timeout=150 \
	--duration=0.2 --cost=0 --check=none --clocks=monotonic --methods=vdso --workloads=all \
	--results "$tmp/results" --run-id run --quiet >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$rc" "TCG boot with --workloads=all: exit $rc in $((SECONDS - start)) s"
[ "$rc" -eq 0 ] || diag_lines <"$tmp/stderr"
[ -s "$res" ] || { done_testing; exit; }
jcheck "$res" '"--workloads" in d["guest"]["engine_argv"] and d["guest"]["engine_argv"][d["guest"]["engine_argv"].index("--workloads") + 1] == "all"' \
	"clockbench.workload=all reached the engine as --workloads all"
jcheck "$res" '[r["workload"] for r in d["bench"]["workloads"]] == ["tcp-stream", "tcp-rr", "timer"]' \
	"the guest's engine returned the three workload rows (lo was up)"
jcheck "$res" 'd["bench"]["workloads"][0]["bytes"] > 0 and d["bench"]["workloads"][1]["transactions"] > 0 and d["bench"]["workloads"][2]["wakeups"] > 0' \
	"bytes, transactions and wakeups above 0"
ok "$([ -s "${res%.json}.console.log" ] && ! grep -q 'loopback lo not brought up' "${res%.json}.console.log"; echo $?)" \
	"the console has no loopback complaint"
settle_checks "$res" "${res%.json}.console.log" "the same guest, settle.t's checks"
done_testing
