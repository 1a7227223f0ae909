#!/usr/bin/env bash
# tier: slow
# test-timeout: 200
# workload.t: a real TCG guest boot with WORKLOADS=all (clockbench.workload=):
# /init brings lo up, so the TCP workloads run in the guest and every
# workload row comes back (the figures are an emulator's: only that they
# are there).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
. tests/guest-init/guest-lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp

kernel=$(guest_kernel)
command -v qemu-system-x86_64 >/dev/null || skip_all "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
[ -n "$kernel" ] || skip_all "no readable kernel image: set KERNEL= (Debian: apt-get install linux-image-amd64)"
initrd=$(guest_initramfs)
[ -n "$initrd" ] || skip_all "make guest-initramfs failed"

res=$tmp/results/run/guest-$(host_cs)-2vcpu.json
start=$SECONDS
KERNEL=$kernel INITRAMFS=$initrd ACCEL=tcg MACHINE=q35 VCPUS=2 TIMEOUT=150 \
	DURATION=0.3 COST=0 CHECK=none WORKLOADS=all \
	host-scripts/bench-guest --results "$tmp/results" --run-id run --quiet >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$rc" "TCG boot with WORKLOADS=all: exit $rc in $((SECONDS - start)) s"
[ "$rc" -eq 0 ] || diag_lines <"$tmp/stderr"
[ -s "$res" ] || { done_testing; exit; }
jcheck "$res" '"--workload" in d["guest"]["engine_argv"] and d["guest"]["engine_argv"][d["guest"]["engine_argv"].index("--workload") + 1] == "all"' \
	"clockbench.workload=all reached the engine as --workload all"
jcheck "$res" '[r["workload"] for r in d["bench"]["workloads"]] == ["tcp-stream", "tcp-rr", "timer"]' \
	"the guest's engine returned the three workload rows (lo was up)"
jcheck "$res" 'd["bench"]["workloads"][0]["bytes"] > 0 and d["bench"]["workloads"][1]["transactions"] > 0 and d["bench"]["workloads"][2]["wakeups"] > 0' \
	"bytes, transactions and wakeups above 0"
ok "$(grep -q 'loopback lo not brought up' "$(dirname "$res")"/*.console.log; [ $? -ne 0 ]; echo $?)" \
	"the console has no loopback complaint"
done_testing
