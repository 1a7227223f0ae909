#!/usr/bin/env bash
# tier: slow
# boot-tcg.t: a real guest boot (host-scripts/bench-guest) under TCG on q35
# with 2 vCPUs, traced: the result parses, has rows for 1 and 2 threads, the
# guest's facts, the accelerator label, boot_ms and the pinning, its path is
# the last line on stdout, and the KVM trace is its own file; then a
# floating 1-vCPU pc boot into the same run folder (also the units' way
# into the guest), then microvm.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/guest-init/guest-lib.sh
tap_tmp --tmpdir
guest_boot_needs

cs=$(host_cs)
out=$tmp/results/run
res=$out/guest-$cs-2vcpu.json
start=$SECONDS
host-scripts/bench-guest --kernel="$kernel" --initramfs="$initrd" --accel=tcg --machine=q35 --vcpus=2 --timeout=120 \
	--duration=0.2 --clocks=monotonic --methods=vdso,syscall --check=all \
	--results "$tmp/results" --run-id run --trace >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ]; echo $?)" "TCG boot with 2 vCPUs: exit $rc in $((SECONDS - start)) s"
[ "$rc" -eq 0 ] || diag_lines <"$tmp/stderr"
ok "$([ -s "$res" ] && [ -s "$out/guest-$cs-2vcpu.console.log" ]; echo $?)" "result and console log in results/<run-id>/guest-$cs-2vcpu.*"
ok "$(no_tmp_left "$tmp/results"; echo $?)" "no temporary file left in results/"
ok "$([ "$(tail -1 "$tmp/stdout")" = "$res" ]; echo $?)" "the last line on stdout is the result's path"
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
jcheck "$res" 'd["launcher"]["clocksource"] == "'"$cs"'" and d["launcher"]["host"]["clocksource_end"] == "'"$cs"'" and d["launcher"]["qemu_pid"] > 0' \
	"the label, the kernel's clocksource at the end and QEMU's pid recorded"
jcheck "$res" '0 < d["launcher"]["boot_ms"] < d["launcher"]["result_ms"] <= d["launcher"]["wall_ms"]' "0 < boot_ms < result_ms <= wall_ms"
# The guest's facts: the engine's context (clocksource, CPUID, vCPUs) plus
# what /init adds (the kernel log).  avail: the list, or its older string.
avail='(lambda a: a.split() if isinstance(a, str) else a)(d["bench"]["context"]["available_clocksource"])'
jcheck "$res" 'd["bench"]["context"]["cpus_online"] == 2' "guest saw 2 vCPUs"
jcheck "$res" 'd["bench"]["context"]["clocksource"] in '"$avail" "guest clocksource and available list"
jcheck "$res" 'd["guest"]["log"]["source"] in ("/dev/kmsg", "klogctl") and any("clocksource" in l or "tsc" in l for l in d["guest"]["log"]["lines"])' "kernel log lines collected"
jcheck "$res" 'd["bench"]["context"]["hypervisor"] == "TCGTCGTCGTCG" and "kvm_features" in d["bench"]["context"] and "sched_clock_marked_stable" in d["guest"]["log"]' \
	"hypervisor signature, KVM features and sched_clock verdict present"
# The mechanism: on hpet/acpi_pm the vDSO cannot serve the read; on tsc or
# kvm-clock (with the stable bit) it can.
jcheck "$res" '(lambda cs, p: p == "syscall" if cs in ("hpet", "acpi_pm") else p in ("user", "syscall"))(d["bench"]["context"]["clocksource"], d["bench"]["probe"]["clocks"]["monotonic"]["vdso"])' \
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
ok "$(grep -q '^clockbench-init: kernel: clocksource: Switched to clocksource ' "$out/guest-$cs-2vcpu.console.log"; echo $?)" \
	"the console carries the kernel's clock lines, copied by /init from its log buffer (the lab's evidence)"
head -4 "$tmp/stdout" | diag_lines

# --trace: the summary is its own file beside the result, which holds none.
kt=$out/kvm-trace-$cs-2vcpu.json
ok "$([ -s "$kt" ]; echo $?)" "--trace: kvm-trace-$cs-2vcpu.json beside the result"
jcheck "$res" '"kvm_trace" not in d' "the guest result holds no trace summary"
if [ -s "$kt" ]; then
	jcheck "$kt" 'd["schema"] == "clockbench-kvm-trace/1" and d["guest_result"] == "guest-'"$cs"'-2vcpu.json"' "kvm-trace: schema and its guest result"
	if [ "$(id -u)" -eq 0 ] && [ -w /dev/kvm ] && grep -q '"subject": "observer"' "$kt"; then
		jcheck "$kt" 'd["available"] and d["trace_file"].startswith("kvm-observe-") and d["measuring"]["available"] is False and d["complete"] is True' \
			"under TCG with /dev/kvm: an observer VM's complete trace, no measuring window"
	else
		jcheck "$kt" 'd["available"] is False and d["reason"]' "no KVM trace of this guest here: says why ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["reason"])' "$kt"))"
	fi
else
	skip "no kvm-trace file to check"
fi
# An instance is named after its owner's pid: one whose owner still runs
# (another clockbench on this host, say a watch) is not left behind.
left=$(for d in /sys/kernel/tracing/instances/clockbench-*; do
	[ -d "$d" ] && ! kill -0 "${d##*-}" 2>/dev/null && echo "$d"
done)
ok "$([ -z "$left" ]; echo $?)" "no tracefs instance left behind${left:+: $left}"

host-scripts/bench-guest --kernel="$kernel" --initramfs="$initrd" --accel=tcg --vcpus=2 --results "$tmp/results" --run-id run \
	>/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q 'a run folder is never reused' "$tmp/stderr"; echo $?)" "same run id again: refused before booting (exit $rc)"
host-scripts/bench-guest --kernel="$kernel" --initramfs="$initrd" --accel=tcg --vcpus=2 --run-dir "$out" >/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q 'never overwritten' "$tmp/stderr"; echo $?)" "--run-dir holding that result: refused before booting (exit $rc)"

# Units reach the guest as they are: clockbench.duration=200ms, read by the
# guest's engine; the result keeps seconds (bench.context.duration_s, and
# --timeout=2m as launcher.timeout_s 120).
res1=$out/guest-$cs-1vcpu.json
host-scripts/bench-guest --kernel="$kernel" --initramfs="$initrd" --accel=tcg --machine=pc --hpet=off --vcpus=1 --pin=0 \
	--timeout=2m --duration=200ms --clocks=monotonic --methods=vdso --check=none --run-dir "$out" --quiet \
	>"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$res1" ] && [ "$(cat "$tmp/stdout")" = "$res1" ]; echo $?)" \
	"pc, --hpet=off, --pin=0, 1 vCPU into the same run folder (--run-dir --quiet): exit $rc, prints only guest-$cs-1vcpu.json"
[ "$rc" -eq 0 ] || diag_lines <"$tmp/stderr"
if [ -s "$res1" ]; then
	jcheck "$res1" 'd["launcher"]["pinning"]["mode"] == "floating" and [v["host_cpu"] for v in d["launcher"]["pinning"]["vcpus"]] == [None]' "--pin=0: recorded as floating"
	jcheck "$res1" '[r["threads"] for r in d["bench"]["results"]] == [1]' "1 vCPU: one row, 1 thread"
	jcheck "$res1" 'd["launcher"]["machine_options"] == "pc,hpet=off" and "hpet" not in '"$avail" \
		"--hpet=off: recorded, and the guest has no hpet clocksource"
	jcheck "$res1" 'd["bench"]["context"]["duration_s"] == 0.2 and d["launcher"]["timeout_s"] == 120 and "clockbench.duration=200ms" in d["launcher"]["append"]' \
		"--duration=200ms --timeout=2m in a TCG guest: duration_s 0.2, timeout_s 120, clockbench.duration=200ms on its command line"
else
	for _ in 1 2 3 4; do skip "no pc result to check"; done
fi

# This run also logs the launcher's own imports (PYTHONPROFILEIMPORTTIME:
# the table's tool, a child, logs to the launcher, which keeps its stderr).
# microvm's guest has no TSC reference (refined-jiffies): /init would wait
# 2 s for its quiet end; clockbench.settle=0 skips a wait not checked here.
res2=$tmp/results/microvm/guest-$cs-1vcpu.json
PYTHONPROFILEIMPORTTIME=1 host-scripts/bench-guest --kernel="$kernel" --initramfs="$initrd" --accel=tcg --machine=microvm \
	--vcpus=1 --timeout=120 --duration=0.1 --clocks=monotonic --methods=vdso --check=none --append=clockbench.settle=0 \
	--results "$tmp/results" --run-id microvm >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$res2" ]; echo $?)" "microvm (results on a second isa-serial): exit $rc"
[ "$rc" -eq 0 ] || grep -v '^import time:' "$tmp/stderr" | diag_lines
ok "$([ "$rc" -eq 0 ] && grep -q '^guest: 1 vCPU, microvm, ' "$tmp/stdout" && grep -q '^import time:.*cbhost\.launcher' "$tmp/stderr" &&
	! grep -q '^import time:.*cbanalysis' "$tmp/stderr"; echo $?)" \
	"the table printed (by clockbench-report table), and the launcher's own process imported no cbanalysis module"
if [ -s "$res2" ]; then
	jcheck "$res2" 'd["launcher"]["machine_options"] == "microvm,acpi=off" and d["launcher"]["exit_status"] == 0 and d["bench"]["context"]["clocksource"]' \
		"microvm: acpi=off recorded, guest ended QEMU with status 0, clocksource recorded"
else
	skip "no microvm result to check"
fi
done_testing
