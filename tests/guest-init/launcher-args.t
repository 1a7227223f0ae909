#!/usr/bin/env bash
# tier: slow
# launcher-args.t: host-scripts/bench-guest rejects bad settings (options or
# their environment variables, a missing kernel, initramfs or QEMU with the
# fix named, the guest engine's options as the engine judges them) with one
# line and exit 2, never reuses a run folder nor overwrites a result, and
# never leaves files behind.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
. tests/guest-init/guest-lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp # the launcher keeps a failed run's work folder there
fake=$tmp/fake-image
echo not-a-kernel >"$fake"
launch=host-scripts/bench-guest

# expect STATUS PATTERN DESCRIPTION [VAR=VALUE...]: runs the launcher with
# those settings (and a fake kernel, initramfs and QEMU unless overridden);
# wants the exit status, exactly one stderr line matching PATTERN, and no
# file in the results folder.
expect() {
	local want=$1 pat=$2 what=$3 rc lines left
	shift 3
	env KERNEL="$fake" INITRAMFS="$fake" QEMU=true ACCEL=tcg "$@" \
		"$launch" --results "$tmp/results" --run-id run1 >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	lines=$(wc -l <"$tmp/stderr")
	left=$(find "$tmp/results" -type f 2>/dev/null | wc -l)
	if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && [ "$left" -eq 0 ] && grep -qE "$pat" "$tmp/stderr"; then
		ok 0 "$what: exit $want, '$(cat "$tmp/stderr")'"
	else
		ok 1 "$what: exit $rc (want $want), $lines stderr lines, $left files left"
		diag_lines <"$tmp/stderr"
	fi
}

expect 2 '^bench-guest: ACCEL=foo: expected one of: auto kvm tcg$' "ACCEL=foo" ACCEL=foo
expect 2 'VCPUS=0: expected an integer from 1 to 64' "VCPUS=0" VCPUS=0
expect 2 'VCPUS=two: expected an integer' "VCPUS=two" VCPUS=two
expect 2 'VCPUS=65: expected an integer from 1 to 64' "VCPUS=65" VCPUS=65
expect 2 'MACHINE=virt: expected one of' "MACHINE=virt" MACHINE=virt
expect 2 'BACKEND=docker: expected one of: qemu libvirt' "BACKEND=docker" BACKEND=docker
expect 2 'PIN=yes: expected one of: 0 1' "PIN=yes" PIN=yes
expect 2 'HPET=maybe: expected one of' "HPET=maybe" HPET=maybe
expect 2 'TIMEOUT=0: 0 s: expected from 1 s to 86400 s' "TIMEOUT=0" TIMEOUT=0
expect 2 'TIMEOUT=25h: 90000 s: expected from 1 s to 86400 s$' "TIMEOUT=25h: the limit after the unit" TIMEOUT=25h
expect 2 'TIMEOUT=1.5s: 1.5 s: expected whole seconds' "TIMEOUT=1.5s: whole seconds" TIMEOUT=1.5s
expect 2 'TIMEOUT=5 m: not a duration: .*us, ms, s, m, h' "TIMEOUT with a space" 'TIMEOUT=5 m'
expect 2 'PROBE_TIMEOUT=11m: 660 s: expected from 1 s to 600 s' "PROBE_TIMEOUT=11m" PROBE_TIMEOUT=11m
expect 2 'OBSERVE_SECONDS=5x: not a duration' "OBSERVE_SECONDS=5x" OBSERVE_SECONDS=5x
expect 2 "the guest's engine: --duration '1x': not a duration" "DURATION=1x, by the engine" DURATION=1x
expect 2 "the guest's engine: --duration '2h': 7200 s is beyond the limit of 3600 s" "DURATION=2h, by the engine" DURATION=2h
expect 2 'THREADS=1;reboot: expected a list' "THREADS with a shell metacharacter" 'THREADS=1;reboot'
expect 2 'CLOCKS=mono tonic: expected a list' "CLOCKS with a space" 'CLOCKS=mono tonic'
expect 2 'WORKLOADS=tcp-stream;reboot: expected a list' "WORKLOADS with a shell metacharacter" 'WORKLOADS=tcp-stream;reboot'
expect 2 'WORKLOADS=tcp stream: expected a list' "WORKLOADS with a space" 'WORKLOADS=tcp stream'
expect 2 'CPU=host invtsc: expected a QEMU CPU model' "CPU with a space" 'CPU=host invtsc'
expect 2 'CPU=host,\+invtsc: the host model needs KVM; under TCG use max' "CPU=host with ACCEL=tcg" 'CPU=host,+invtsc'
expect 2 'HPET=off: microvm has no HPET' "HPET with microvm" MACHINE=microvm HPET=off
expect 2 'MACHINE=microvm: BACKEND=libvirt supports q35 and pc' "microvm under libvirt" MACHINE=microvm BACKEND=libvirt

# expect_args STATUS PATTERN DESCRIPTION ARG...: the same, for options.
expect_args() {
	local want=$1 pat=$2 what=$3 rc lines
	shift 3
	KERNEL=$fake INITRAMFS=$fake QEMU=true ACCEL=tcg "$launch" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	lines=$(wc -l <"$tmp/stderr")
	ok "$([ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -qE "$pat" "$tmp/stderr" &&
		[ -z "$(find "$tmp/results" -type f 2>/dev/null)" ]; echo $?)" "$what: exit $rc (want $want), '$(head -1 "$tmp/stderr")'"
}
expect_args 2 '^bench-guest: ACCEL=foo: expected one of: auto kvm tcg$' "--accel foo: the same check as ACCEL=" --accel foo
expect_args 2 'VCPUS=3x: expected an integer' "--vcpus over a good VCPUS=" --vcpus 3x
expect_args 2 'unrecognized arguments: --bogus \(see --help\)$' "unknown option" --bogus
expect_args 2 'unrecognized arguments: a b c' "positional arguments" a b c
expect_args 2 "run id '../escape': letters" "--run-id with a slash" --results "$tmp/results" --run-id ../escape
expect_args 2 "clocksource name 'a/b' cannot be part of a file name" "--clocksource with a slash" --clocksource a/b
expect_args 2 'run-dir names an existing run folder: not with --results or --run-id' "--run-dir with --run-id" --run-dir "$tmp" --run-id x
expect_args 1 "$tmp/none: no such run folder" "--run-dir that does not exist" --run-dir "$tmp/none"
"$launch" --help >"$tmp/stdout" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && grep -q -- '--accel ACCEL' "$tmp/stdout" && grep -q 'auto|kvm|tcg' "$tmp/stdout" &&
	grep -q 'environment variable' "$tmp/stdout"; echo $?)" "--help: exit 0, lists the settings and says where defaults come from"

expect 2 'KERNEL=/nonexistent/vmlinuz: no such file: name one with KERNEL=.*linux-image-amd64' \
	"missing kernel: says KERNEL= and linux-image-amd64" KERNEL=/nonexistent/vmlinuz
expect 2 "INITRAMFS=$tmp/none: missing or unreadable: run 'make guest-initramfs'" \
	"missing initramfs: says make guest-initramfs" INITRAMFS="$tmp/none"
expect 2 'QEMU=qemu-nonexistent: not found: .*apt-get install qemu-system-x86' \
	"missing QEMU: names the package" QEMU=qemu-nonexistent
if [ "$(id -u)" -ne 0 ]; then
	chmod 000 "$tmp/fake-image"
	expect 2 'not a readable file: run as root' "unreadable kernel" KERNEL="$tmp/fake-image"
	chmod 644 "$tmp/fake-image"
else
	skip "unreadable kernel: root reads everything"
fi
# The guest engine's options, judged by the engine (--dry-run) on as many
# CPUs as the guest has vCPUs, before QEMU starts (QEMU=false would fail).
expect 2 "^bench-guest: the guest's engine: --clock: unknown name 'monotnic'" "CLOCKS=monotnic, by the engine" \
	CLOCKS=monotnic QEMU=false
expect 2 "^bench-guest: the guest's engine: --threads '2': only 1 CPUs are allowed" "THREADS=2 with VCPUS=1" \
	THREADS=2 VCPUS=1 QEMU=false
expect 2 "^bench-guest: the guest's engine: --duration '0.5': the tsc-rate check needs at least 5 seconds" \
	"CHECK=tsc-rate with the guest's 0.5 s default duration" CHECK=tsc-rate QEMU=false
KERNEL=$fake INITRAMFS=$fake QEMU=true ACCEL=tcg VCPUS=1 THREADS=1 "$launch" --check-only --results "$tmp/results" \
	--run-id run1 >"$tmp/stdout" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/stdout" ] && [ ! -e "$tmp/results" ]; echo $?)" \
	"--check-only with good settings: exit $rc, silent, nothing made"
# checks WHAT VAR=VALUE...: --check-only passes those settings: exit 0, silent.
checks() {
	local what=$1 rc
	shift
	env KERNEL="$fake" INITRAMFS="$fake" QEMU=true ACCEL=tcg "$@" "$launch" --check-only --results "$tmp/results" \
		--run-id run1 >"$tmp/stdout" 2>&1
	rc=$?
	ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/stdout" ] && [ ! -e "$tmp/results" ]; echo $?)" \
		"--check-only, $what: exit $rc, silent$([ ! -s "$tmp/stdout" ] || echo ": $(head -n1 "$tmp/stdout")")"
}
checks "DURATION=500ms TIMEOUT=5m PROBE_TIMEOUT=30s OBSERVE_SECONDS=1m: units" DURATION=500ms TIMEOUT=5m \
	PROBE_TIMEOUT=30s OBSERVE_SECONDS=1m
# More vCPUs than this process may use: the guest's lists are still judged,
# against vCPUs 0..VCPUS-1 (the engine's --dry-run-cpus).
big=$(($(nproc) + 2))
checks "VCPUS=$big THREADS=$big CPUS=0-$((big - 1)), beyond the host's $(nproc) CPUs" VCPUS=$big THREADS=$big \
	CPUS=0-$((big - 1))
expect 2 "the guest's engine: --threads '$((big + 1))': only $big CPUs are allowed" \
	"THREADS=$((big + 1)) with VCPUS=$big, beyond the host's CPUs" VCPUS=$big THREADS=$((big + 1)) QEMU=false
expect 2 "the guest's engine: --cpus '$big': CPU $big is not" "CPUS=$big with VCPUS=$big" VCPUS=$big CPUS=$big QEMU=false
# APPEND's clockbench.* engine words override the settings (the last word
# wins in /init): they are judged with them.
expect 2 "the guest's engine \(APPEND: clockbench.threads=0\): --threads '0'" "APPEND=clockbench.threads=0" \
	APPEND=clockbench.threads=0 QEMU=false
expect 2 "the guest's engine \(APPEND: clockbench.duration=3x\): --duration '3x'" \
	"APPEND's duration over a good DURATION" DURATION=1 APPEND='tsc=unstable clockbench.duration=3x' QEMU=false
expect 2 "the guest's engine \(APPEND: clockbench.threads=4\): --threads '4': only 2 CPUs" \
	"APPEND's threads over a good THREADS" VCPUS=2 THREADS=1 APPEND=clockbench.threads=4 QEMU=false
expect 2 "APPEND: clockbench.cpus=0;reboot: expected a list" "APPEND with a shell metacharacter in an engine word" \
	'APPEND=clockbench.cpus=0;reboot' QEMU=false
checks "APPEND=clockbench.duration=200ms clockbench.threads=1: good engine words" \
	APPEND='clockbench.duration=200ms clockbench.threads=1'
# The tests' hook that lets a bad engine word reach the guest's engine
# (tests/guest-init/faults.t) skips that check, and only that one.
env KERNEL="$fake" INITRAMFS="$fake" QEMU=true ACCEL=tcg APPEND=clockbench.threads=0 "$launch" --check-only \
	--test-skip-engine-check --results "$tmp/results" --run-id run1 >"$tmp/stdout" 2>&1
rc1=$?
env KERNEL="$fake" INITRAMFS="$fake" QEMU=true ACCEL=tcg VCPUS=0 "$launch" --check-only \
	--test-skip-engine-check --results "$tmp/results" --run-id run1 >"$tmp/stdout" 2>&1
rc2=$?
ok "$([ "$rc1" -eq 0 ] && [ "$rc2" -eq 2 ]; echo $?)" \
	"--test-skip-engine-check: a bad engine word passes (exit $rc1), VCPUS=0 still refused (exit $rc2)"

# KVM_DEV stands in for /dev/kvm so that a host with KVM can test its absence.
expect 2 "ACCEL=kvm: $tmp/kvm: no such device \\(load kvm_intel or kvm_amd, or use ACCEL=tcg\\)" \
	"ACCEL=kvm without /dev/kvm" ACCEL=kvm KVM_DEV="$tmp/kvm"
if [ "$(id -u)" -ne 0 ]; then
	: >"$tmp/kvm"
	chmod 000 "$tmp/kvm"
	expect 2 "ACCEL=kvm: $tmp/kvm: permission denied" "ACCEL=kvm without access" ACCEL=kvm KVM_DEV="$tmp/kvm"
	rm -f "$tmp/kvm"
else
	skip "ACCEL=kvm without access: root can open anything"
fi
KERNEL=$fake INITRAMFS=$fake QEMU=true ACCEL=auto KVM_DEV=$tmp/kvm "$launch" --probe-only >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(cat "$tmp/stdout")" = tcg ] &&
	grep -q "^bench-guest: warning: no $tmp/kvm; using TCG: every figure EMULATED$" "$tmp/stderr"; echo $?)" \
	"ACCEL=auto without /dev/kvm: TCG, with the warning (exit $rc)"

# WORKLOADS reaches the guest's kernel command line as clockbench.workload=
# (its /init passes it to the engine as --workload); unset, no parameter
# (the engine's default, none).  A stand-in QEMU records its arguments.
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >>"%s"\nexit 1\n' "$tmp/qemu-argv" >"$tmp/fake-qemu"
chmod +x "$tmp/fake-qemu"
for w in tcp-stream,timer -; do
	rm -f "$tmp/qemu-argv"
	set_w=()
	[ "$w" = - ] || set_w=(WORKLOADS="$w")
	env -u WORKLOADS "${set_w[@]+"${set_w[@]}"}" KERNEL="$fake" INITRAMFS="$fake" QEMU="$tmp/fake-qemu" ACCEL=tcg VCPUS=1 \
		"$launch" --results "$tmp/results" --run-id wl >/dev/null 2>&1
	append=$(grep -A1 -x -- -append "$tmp/qemu-argv" | tail -n1)
	if [ "$w" = - ]; then
		ok "$([ -n "$append" ] && [[ $append != *clockbench.workload* ]]; echo $?)" "no WORKLOADS: no clockbench.workload= ($append)"
	else
		ok "$([[ " $append " == *" clockbench.workload=$w "* ]]; echo $?)" "WORKLOADS=$w: clockbench.workload=$w on the guest's command line ($append)"
	fi
done
rm -rf "$tmp/results"

# A run folder is never reused, and an existing result never overwritten:
# both are refused before anything boots, and left as they were.
cs=$(host_cs)
mkdir -p "$tmp/results/run1"
echo precious >"$tmp/results/run1/guest-$cs-1vcpu.json"
KERNEL=$fake INITRAMFS=$fake QEMU=true ACCEL=tcg VCPUS=1 "$launch" --results "$tmp/results" --run-id run1 >/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q 'run1 exists: a run folder is never reused' "$tmp/stderr" &&
	[ "$(cat "$tmp/results/run1/guest-$cs-1vcpu.json")" = precious ] &&
	[ "$(find "$tmp/results" -type f | wc -l)" -eq 1 ]; echo $?)" \
	"existing run folder: exit 1 ($rc), nothing touched"
diag_lines <"$tmp/stderr"
KERNEL=$fake INITRAMFS=$fake QEMU=true ACCEL=tcg VCPUS=1 "$launch" --run-dir "$tmp/results/run1" >/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q "guest-$cs-1vcpu.json exists: results are never overwritten" "$tmp/stderr" &&
	[ "$(cat "$tmp/results/run1/guest-$cs-1vcpu.json")" = precious ] &&
	[ "$(find "$tmp/results" -type f | wc -l)" -eq 1 ]; echo $?)" \
	"--run-dir with the result there: exit 1 ($rc), file kept, nothing else written"
diag_lines <"$tmp/stderr"
KERNEL=$fake INITRAMFS=$fake QEMU=true ACCEL=tcg VCPUS=1 "$launch" --run-dir "$tmp/results/run1" --clocksource other --trace \
	>/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && ! grep -q "guest-$cs-1vcpu.json exists" "$tmp/stderr"; echo $?)" \
	"--clocksource names the files: another label is not refused for the kernel's name (exit $rc: the fake kernel)"
rm -rf "$tmp/results"

# ACCEL=auto decides by a time-limited boot, and says so when it falls back.
kernel=$(guest_kernel)
initrd=$(guest_initramfs)
if [ -z "$kernel" ] || [ -z "$initrd" ] || ! command -v qemu-system-x86_64 >/dev/null; then
	skip "ACCEL=auto probe: needs a kernel image, the initramfs and qemu-system-x86_64"
else
	start=$SECONDS
	accel=$(KERNEL=$kernel INITRAMFS=$initrd PROBE_TIMEOUT=6 "$launch" --probe-only 2>"$tmp/stderr")
	rc=$?
	took=$((SECONDS - start))
	if [ "$accel" = tcg ] && [ -e /dev/kvm ]; then
		ok "$([ "$rc" -eq 0 ] && grep -q 'using TCG: every figure EMULATED' "$tmp/stderr" &&
			[ "$took" -le 12 ]; echo $?)" "ACCEL=auto: KVM unusable here, fell back to TCG with a warning in ${took}s"
	else
		ok "$([ "$rc" -eq 0 ] && { [ "$accel" = kvm ] || [ "$accel" = tcg ]; }; echo $?)" "ACCEL=auto chose '$accel' in ${took}s"
	fi
	diag_lines <"$tmp/stderr"
	# With a CPU model KVM accepts here, the kernel spins instead: the probe's
	# time limit is what ends it.
	start=$SECONDS
	accel=$(CPU=qemu64 KERNEL=$kernel INITRAMFS=$initrd PROBE_TIMEOUT=3 "$launch" --probe-only 2>"$tmp/stderr")
	rc=$?
	took=$((SECONDS - start))
	if [ "$accel" = tcg ] && [ -e /dev/kvm ] && { [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; }; then
		skip "ACCEL=auto, CPU=qemu64: /dev/kvm is not open to $(id -un), so no probe ran to be limited"
	elif [ "$accel" = tcg ] && [ -e /dev/kvm ]; then
		ok "$([ "$rc" -eq 0 ] && [ "$took" -le 10 ] && grep -qE 'KVM probe failed: (no guest /init within 3|guest did not reach|QEMU failed)' "$tmp/stderr"; echo $?)" \
			"ACCEL=auto, CPU=qemu64: probe limited to 3 s, fell back in ${took}s"
	else
		ok "$([ "$rc" -eq 0 ] && [ "$took" -le 10 ]; echo $?)" "ACCEL=auto, CPU=qemu64: chose '$accel' in ${took}s"
	fi
	diag_lines <"$tmp/stderr"
fi

# Units reach the guest as they are: clockbench.duration=200ms, read by the
# guest's engine; the result keeps seconds (bench.context.duration_s, and
# TIMEOUT=2m as launcher.timeout_s 120).
if [ -z "$kernel" ] || [ -z "$initrd" ] || ! command -v qemu-system-x86_64 >/dev/null; then
	skip "DURATION=200ms in a guest: needs a kernel image, the initramfs and qemu-system-x86_64"
else
	KERNEL=$kernel INITRAMFS=$initrd ACCEL=tcg VCPUS=1 TIMEOUT=2m DURATION=200ms CLOCKS=monotonic METHODS=vdso \
		CHECK=none "$launch" --quiet --results "$tmp/results" --run-id units >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	res=$(tail -n1 "$tmp/stdout")
	ok "$([ "$rc" -eq 0 ] && python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["bench"]["context"]["duration_s"] == 0.2 and d["launcher"]["timeout_s"] == 120
              and "clockbench.duration=200ms" in d["launcher"]["append"]))' "$res"; echo $?)" \
		"DURATION=200ms TIMEOUT=2m in a TCG guest: exit $rc, duration_s 0.2, timeout_s 120"
	diag_lines <"$tmp/stderr"
fi
done_testing
