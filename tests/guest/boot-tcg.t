#!/usr/bin/env bash
# boot-tcg.t: a real guest boot under TCG on q35 with 2 vCPUs: the result
# parses, has rows for 1 and 2 threads, the guest's facts, the accelerator
# label, boot_ms and the pinning; then a floating 1-vCPU boot.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
. tests/guest/guest-lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp

kernel=$(guest_kernel)
if ! command -v qemu-system-x86_64 >/dev/null; then
	skip "no qemu-system-x86_64 (apt-get install qemu-system-x86)"
	done_testing
	exit
fi
if [ -z "$kernel" ]; then
	skip "no readable kernel image: set KERNEL= (Debian: apt-get install linux-image-amd64)"
	done_testing
	exit
fi
initrd=$(guest_initramfs)
ok "$([ -n "$initrd" ]; echo $?)" "make guest-initramfs"
[ -n "$initrd" ] || { done_testing; exit; }

cs=$(host_cs)
out=$tmp/results/run
res=$out/guest-$cs-2vcpu.json
start=$SECONDS
KERNEL=$kernel INITRAMFS=$initrd ACCEL=tcg MACHINE=q35 VCPUS=2 TIMEOUT=120 \
	DURATION=0.2 CLOCKS=monotonic METHODS=vdso,syscall CHECK=all \
	host-scripts/launch-guest.sh "$tmp/results" run >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ]; echo $?)" "TCG boot with 2 vCPUs: exit $rc in $((SECONDS - start)) s"
[ "$rc" -eq 0 ] || diag_lines <"$tmp/stderr"
ok "$([ -s "$res" ] && [ -s "$out/guest-$cs-2vcpu.console.log" ]; echo $?)" "result and console log in results/<run-id>/guest-$cs-2vcpu.*"
ok "$(no_tmp_left "$tmp/results"; echo $?)" "no temporary file left in results/"
if [ ! -s "$res" ]; then
	done_testing
	exit
fi
jcheck "$res" 'd["schema"] == "clockbench-guest/1" and d["bench"]["schema"] == "clockbench/1"' "schemas: clockbench-guest/1 around clockbench/1"
jcheck "$res" '{(r["method"], r["threads"]) for r in d["bench"]["results"]} == {(m, t) for m in ("vdso", "syscall") for t in (1, 2)}' \
	"rows for vdso and syscall at 1 and 2 threads"
jcheck "$res" 'all(r["ns_per_call"]["median"] > 0 and r["calls_per_sec_total"] > 0 for r in d["bench"]["results"])' "every row has a median and a call rate"
jcheck "$res" 'd["launcher"]["accel"] == "tcg" and d["launcher"]["emulated"] is True' "labelled accel tcg, emulated"
ok "$(grep -q 'accel tcg (EMULATED' "$tmp/stdout" && grep -q '^EMULATED: ' "$tmp/stdout"; echo $?)" "the table says EMULATED"
jcheck "$res" 'd["launcher"]["machine"] == "q35" and d["launcher"]["cpu"] == "max" and d["launcher"]["qemu_version"].startswith("QEMU emulator")' \
	"launcher records machine, CPU model and QEMU version"
jcheck "$res" 'd["launcher"]["host"]["clocksource"] == "'"$cs"'" and d["launcher"]["kernel"] == "'"$(realpath "$kernel")"'"' "host clocksource and kernel recorded"
jcheck "$res" '0 < d["launcher"]["boot_ms"] < d["launcher"]["result_ms"] <= d["launcher"]["wall_ms"]' "0 < boot_ms < result_ms <= wall_ms"
jcheck "$res" 'd["guest"]["vcpus_online"] == 2 and d["bench"]["context"]["cpus_online"] == 2' "guest saw 2 vCPUs"
jcheck "$res" 'd["guest"]["clocksource"] and d["guest"]["clocksource"] in d["guest"]["available_clocksource"].split()' "guest clocksource and available list"
jcheck "$res" 'd["guest"]["log"]["source"] in ("/dev/kmsg", "klogctl") and any("clocksource" in l or "tsc" in l for l in d["guest"]["log"]["lines"])' "kernel log lines collected"
jcheck "$res" 'all(k in d["guest"] for k in ("invtsc", "kvm_stable_bit_advertised", "hypervisor")) and "sched_clock_marked_stable" in d["guest"]["log"]' "invtsc, KVM stable bit and sched_clock verdict present"
# The mechanism: on hpet/acpi_pm the vDSO cannot serve the read; on tsc or
# kvm-clock (with the stable bit) it can.
jcheck "$res" '(lambda cs, p: p == "syscall" if cs in ("hpet", "acpi_pm") else p in ("user", "syscall"))(d["guest"]["clocksource"], d["bench"]["probe"]["clocks"]["monotonic"]["vdso"])' \
	"path probe agrees with the guest clocksource"
jcheck "$res" 'all(r["path"] == d["bench"]["probe"]["clocks"]["monotonic"][r["method"]] for r in d["bench"]["results"])' "each row's path is the probe's"
jcheck "$res" '"tsc" in d["bench"]["checks"] and d["bench"]["checks"]["warps"]' "warp and TSC checks ran"
host_cpus=$(getconf _NPROCESSORS_ONLN)
if [ "$host_cpus" -ge 2 ]; then
	jcheck "$res" 'd["launcher"]["pinning"]["mode"] == "pinned" and sorted(v["host_cpu"] for v in d["launcher"]["pinning"]["vcpus"]) == sorted(d["launcher"]["pinning"]["host_cpus"][:2]) and all(v["thread_id"] for v in d["launcher"]["pinning"]["vcpus"])' \
		"vCPU threads pinned one per host CPU"
else
	skip "pinning one per host CPU: only $host_cpus host CPU"
fi
ok "$(grep -q 'clockbench-init: result sent' "$out/guest-$cs-2vcpu.console.log"; echo $?)" "console log holds the init's own lines"
head -4 "$tmp/stdout" | diag_lines

KERNEL=$kernel INITRAMFS=$initrd ACCEL=tcg VCPUS=2 host-scripts/launch-guest.sh "$tmp/results" run >/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q 'never overwritten' "$tmp/stderr"; echo $?)" "same run id again: refused before booting (exit $rc)"

res1=$out/guest-$cs-1vcpu.json
KERNEL=$kernel INITRAMFS=$initrd ACCEL=tcg MACHINE=pc HPET=off VCPUS=1 PIN=0 TIMEOUT=120 DURATION=0.1 \
	CLOCKS=monotonic METHODS=vdso CHECK=none host-scripts/launch-guest.sh "$tmp/results" run >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$res1" ]; echo $?)" "pc, HPET=off, PIN=0, 1 vCPU: exit $rc, guest-$cs-1vcpu.json"
[ "$rc" -eq 0 ] || diag_lines <"$tmp/stderr"
if [ -s "$res1" ]; then
	jcheck "$res1" 'd["launcher"]["pinning"]["mode"] == "floating" and [v["host_cpu"] for v in d["launcher"]["pinning"]["vcpus"]] == [None]' "PIN=0: recorded as floating"
	jcheck "$res1" '[r["threads"] for r in d["bench"]["results"]] == [1]' "1 vCPU: one row, 1 thread"
	jcheck "$res1" 'd["launcher"]["machine_options"] == "pc,hpet=off" and "hpet" not in d["guest"]["available_clocksource"].split()' \
		"HPET=off: recorded, and the guest has no hpet clocksource"
else
	for _ in 1 2 3; do skip "no pc result to check"; done
fi

res2=$tmp/results/microvm/guest-$cs-1vcpu.json
KERNEL=$kernel INITRAMFS=$initrd ACCEL=tcg MACHINE=microvm VCPUS=1 TIMEOUT=120 DURATION=0.1 \
	CLOCKS=monotonic METHODS=vdso CHECK=none host-scripts/launch-guest.sh "$tmp/results" microvm >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$res2" ]; echo $?)" "microvm (results on a second isa-serial): exit $rc"
[ "$rc" -eq 0 ] || diag_lines <"$tmp/stderr"
if [ -s "$res2" ]; then
	jcheck "$res2" 'd["launcher"]["machine_options"] == "microvm,acpi=off" and d["launcher"]["exit_status"] == 0 and d["guest"]["clocksource"]' \
		"microvm: acpi=off recorded, guest ended QEMU with status 0, clocksource recorded"
else
	skip "no microvm result to check"
fi
done_testing
