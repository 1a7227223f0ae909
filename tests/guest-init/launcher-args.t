#!/usr/bin/env bash
# tier: slow
# launcher-args.t: host-scripts/bench-guest rejects bad settings (its
# options, as --name=VALUE or --name VALUE; an environment variable of a
# setting's name is ignored), a missing kernel, initramfs or QEMU with the
# fix named, the guest engine's options as the engine judges them, with one
# line and exit 2, never reuses a run folder nor overwrites a result, and
# never leaves files behind.  The units' way into a guest (a real boot) is
# checked on boot-tcg.t's pc boot.
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
# A fake kernel, initramfs and QEMU, under TCG: nothing here boots.  An
# option given again later wins (argparse), so a test's own options follow.
base=(--kernel="$fake" --initramfs="$fake" --qemu=true --accel=tcg)

# expect STATUS PATTERN DESCRIPTION [OPTION...]: runs the launcher with
# those options (after the fake kernel, initramfs and QEMU of base, which
# they override); wants the exit status, exactly one stderr line matching
# PATTERN, and no file in the results folder.
expect() {
	local want=$1 pat=$2 what=$3 rc lines left
	shift 3
	"$launch" "${base[@]}" "$@" --results "$tmp/results" --run-id run1 >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	lines=$(wc -l <"$tmp/stderr")
	left=$(find "$tmp/results" -type f 2>/dev/null | wc -l)
	if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && [ "$left" -eq 0 ] && grep -qE -e "$pat" "$tmp/stderr"; then
		ok 0 "$what: exit $want, '$(cat "$tmp/stderr")'"
	else
		ok 1 "$what: exit $rc (want $want), $lines stderr lines, $left files left"
		diag_lines <"$tmp/stderr"
	fi
}

expect 2 '^bench-guest: --accel=foo: expected one of: auto kvm tcg$' "--accel=foo" --accel=foo
expect 2 '--vcpus=0: expected an integer from 1 to 64' "--vcpus=0" --vcpus=0
expect 2 '--vcpus=two: expected an integer' "--vcpus=two" --vcpus=two
expect 2 '--vcpus=65: expected an integer from 1 to 64' "--vcpus=65" --vcpus=65
expect 2 '--machine=virt: expected one of' "--machine=virt" --machine=virt
expect 2 '--backend=docker: expected one of: qemu libvirt' "--backend=docker" --backend=docker
expect 2 '--pin=yes: expected one of: 0 1' "--pin=yes" --pin=yes
expect 2 '--hpet=maybe: expected one of' "--hpet=maybe" --hpet=maybe
expect 2 '--timeout=0: 0 s: expected from 1 s to 86400 s' "--timeout=0" --timeout=0
expect 2 '--timeout=25h: 90000 s: expected from 1 s to 86400 s$' "--timeout=25h: the limit after the unit" --timeout=25h
expect 2 '--timeout=1.5s: 1.5 s: expected whole seconds' "--timeout=1.5s: whole seconds" --timeout=1.5s
expect 2 '--timeout=5 m: not a duration: .*us, ms, s, m, h' "--timeout with a space" '--timeout=5 m'
expect 2 '--probe-timeout=11m: 660 s: expected from 1 s to 600 s' "--probe-timeout=11m" --probe-timeout=11m
expect 2 '--observe-seconds=5x: not a duration' "--observe-seconds=5x" --observe-seconds=5x
expect 2 "the guest's engine: --duration '1x': not a duration" "--duration=1x, by the engine" --duration=1x
expect 2 "the guest's engine: --duration '2h': 7200 s is beyond the limit of 3600 s" "--duration=2h, by the engine" --duration=2h
expect 2 '--threads=1;reboot: expected a list' "--threads with a shell metacharacter" '--threads=1;reboot'
expect 2 '--clocks=mono tonic: expected a list' "--clocks with a space" '--clocks=mono tonic'
expect 2 '--workloads=tcp-stream;reboot: expected a list' "--workloads with a shell metacharacter" '--workloads=tcp-stream;reboot'
expect 2 '--workloads=tcp stream: expected a list' "--workloads with a space" '--workloads=tcp stream'
expect 2 '--cpu=host invtsc: expected a QEMU CPU model' "--cpu with a space" '--cpu=host invtsc'
expect 2 '--cpu=host,\+invtsc: the host model needs KVM; under TCG use max' "--cpu=host with --accel=tcg" '--cpu=host,+invtsc'
expect 2 '--hpet=off: microvm has no HPET' "--hpet with microvm" --machine=microvm --hpet=off
expect 2 '--machine=microvm: --backend=libvirt supports q35 and pc' "microvm under libvirt" --machine=microvm --backend=libvirt

# expect_args STATUS PATTERN DESCRIPTION ARG...: the same without --results
# and --run-id; the options here as --name VALUE, two words.
expect_args() {
	local want=$1 pat=$2 what=$3 rc lines
	shift 3
	"$launch" "${base[@]}" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	lines=$(wc -l <"$tmp/stderr")
	ok "$([ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -qE -e "$pat" "$tmp/stderr" &&
		[ -z "$(find "$tmp/results" -type f 2>/dev/null)" ]; echo $?)" "$what: exit $rc (want $want), '$(head -1 "$tmp/stderr")'"
}
expect_args 2 '^bench-guest: --accel=foo: expected one of: auto kvm tcg$' "--accel foo: the same check as --accel=foo" --accel foo
expect_args 2 '--vcpus=3x: expected an integer' "--vcpus 3x after a good --vcpus=2: the last one given is judged" \
	--vcpus=2 --vcpus 3x
expect_args 2 'unrecognized arguments: --bogus \(see --help\)$' "unknown option" --bogus
expect_args 2 'unrecognized arguments: a b c' "positional arguments" a b c
expect_args 2 "run id '../escape': letters" "--run-id with a slash" --results "$tmp/results" --run-id ../escape
expect_args 2 "clocksource name 'a/b' cannot be part of a file name" "--clocksource with a slash" --clocksource a/b
expect_args 2 'run-dir names an existing run folder: not with --results or --run-id' "--run-dir with --run-id" --run-dir "$tmp" --run-id x
expect_args 1 "$tmp/none: no such run folder" "--run-dir that does not exist" --run-dir "$tmp/none"
"$launch" --help >"$tmp/stdout" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && grep -q -- '--accel ACCEL' "$tmp/stdout" && grep -q 'auto|kvm|tcg' "$tmp/stdout" &&
	grep -q 'make bench-guest VCPUS=2: --vcpus=2' "$tmp/stdout" && ! grep -qi 'environment' "$tmp/stdout"; echo $?)" \
	"--help: exit 0, lists the settings and says make's variables of their names become options (no environment)"

expect 2 '--kernel=/nonexistent/vmlinuz: no such file: name one with --kernel.*linux-image-amd64' \
	"missing kernel: says --kernel and linux-image-amd64" --kernel=/nonexistent/vmlinuz
expect 2 "--initramfs=$tmp/none: missing or unreadable: run 'make guest-initramfs'" \
	"missing initramfs: says make guest-initramfs" --initramfs="$tmp/none"
expect 2 '--qemu=qemu-nonexistent: not found: .*apt-get install qemu-system-x86' \
	"missing QEMU: names the package" --qemu=qemu-nonexistent
if [ "$(id -u)" -ne 0 ]; then
	chmod 000 "$tmp/fake-image"
	expect 2 'not a readable file: run as root' "unreadable kernel" --kernel="$tmp/fake-image"
	chmod 644 "$tmp/fake-image"
else
	skip "unreadable kernel: root reads everything"
fi
# The guest engine's options, judged by the engine (--dry-run) on as many
# CPUs as the guest has vCPUs, before QEMU starts (--qemu=false would fail).
expect 2 "^bench-guest: the guest's engine: --clock: unknown name 'monotnic'" "--clocks=monotnic, by the engine" \
	--clocks=monotnic --qemu=false
expect 2 "^bench-guest: the guest's engine: --threads '2': only 1 CPUs are allowed" "--threads=2 with --vcpus=1" \
	--threads=2 --vcpus=1 --qemu=false
expect 2 "^bench-guest: the guest's engine: --duration '0.5': the tsc-rate check needs at least 5 seconds" \
	"--check=tsc-rate with the guest's 0.5 s default duration" --check=tsc-rate --qemu=false
"$launch" "${base[@]}" --vcpus=1 --threads=1 --check-only --results "$tmp/results" --run-id run1 >"$tmp/stdout" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/stdout" ] && [ ! -e "$tmp/results" ]; echo $?)" \
	"--check-only with good settings: exit $rc, silent, nothing made"
# checks WHAT OPTION...: --check-only passes those options: exit 0, silent.
checks() {
	local what=$1 rc
	shift
	"$launch" "${base[@]}" "$@" --check-only --results "$tmp/results" --run-id run1 >"$tmp/stdout" 2>&1
	rc=$?
	ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/stdout" ] && [ ! -e "$tmp/results" ]; echo $?)" \
		"--check-only, $what: exit $rc, silent$([ ! -s "$tmp/stdout" ] || echo ": $(head -n1 "$tmp/stdout")")"
}
checks "--duration=500ms --timeout=5m --probe-timeout=30s --observe-seconds=1m: units" --duration=500ms --timeout=5m \
	--probe-timeout=30s --observe-seconds=1m
# No setting is read from the environment: a bad value there is not seen
# (no --vcpus given: the default, not VCPUS, is judged).
VCPUS=0 checks "VCPUS=0 in the environment is ignored"
# More vCPUs than this process may use: the guest's lists are still judged,
# against vCPUs 0..VCPUS-1 (the engine's --dry-run-cpus).
big=$(($(nproc) + 2))
checks "--vcpus=$big --threads=$big --cpus=0-$((big - 1)), beyond the host's $(nproc) CPUs" --vcpus=$big --threads=$big \
	--cpus=0-$((big - 1))
expect 2 "the guest's engine: --threads '$((big + 1))': only $big CPUs are allowed" \
	"--threads=$((big + 1)) with --vcpus=$big, beyond the host's CPUs" --vcpus=$big --threads=$((big + 1)) --qemu=false
expect 2 "the guest's engine: --cpus '$big': CPU $big is not" "--cpus=$big with --vcpus=$big" --vcpus=$big --cpus=$big --qemu=false
# --append's clockbench.* engine words override the settings (the last word
# wins in /init): they are judged with them.
expect 2 "the guest's engine \(--append: clockbench.threads=0\): --threads '0'" "--append=clockbench.threads=0" \
	--append=clockbench.threads=0 --qemu=false
expect 2 "the guest's engine \(--append: clockbench.duration=3x\): --duration '3x'" \
	"--append's duration over a good --duration" --duration=1 --append='tsc=unstable clockbench.duration=3x' --qemu=false
expect 2 "the guest's engine \(--append: clockbench.threads=4\): --threads '4': only 2 CPUs" \
	"--append's threads over a good --threads" --vcpus=2 --threads=1 --append=clockbench.threads=4 --qemu=false
expect 2 "--append: clockbench.cpus=0;reboot: expected a list" "--append with a shell metacharacter in an engine word" \
	'--append=clockbench.cpus=0;reboot' --qemu=false
expect 2 "^bench-guest: --append: one line only$" "--append of two lines" --append="$(printf 'a\nb')"
checks "--append=clockbench.duration=200ms clockbench.threads=1: good engine words" \
	--append='clockbench.duration=200ms clockbench.threads=1'
# The tests' hook that lets a bad engine word reach the guest's engine
# (tests/guest-init/faults.t) skips that check, and only that one.
"$launch" "${base[@]}" --append=clockbench.threads=0 --check-only --test-skip-engine-check --results "$tmp/results" \
	--run-id run1 >"$tmp/stdout" 2>&1
rc1=$?
"$launch" "${base[@]}" --vcpus=0 --check-only --test-skip-engine-check --results "$tmp/results" \
	--run-id run1 >"$tmp/stdout" 2>&1
rc2=$?
ok "$([ "$rc1" -eq 0 ] && [ "$rc2" -eq 2 ]; echo $?)" \
	"--test-skip-engine-check: a bad engine word passes (exit $rc1), --vcpus=0 still refused (exit $rc2)"

# CB_KVM_DEV (a test hook) stands in for /dev/kvm so that a host with KVM
# can test its absence.
CB_KVM_DEV=$tmp/kvm expect 2 "--accel=kvm: $tmp/kvm: no such device \\(load kvm_intel or kvm_amd, or use --accel=tcg\\)" \
	"--accel=kvm without /dev/kvm" --accel=kvm
if [ "$(id -u)" -ne 0 ]; then
	: >"$tmp/kvm"
	chmod 000 "$tmp/kvm"
	CB_KVM_DEV=$tmp/kvm expect 2 "--accel=kvm: $tmp/kvm: permission denied" "--accel=kvm without access" --accel=kvm
	rm -f "$tmp/kvm"
else
	skip "--accel=kvm without access: root can open anything"
fi
CB_KVM_DEV=$tmp/kvm "$launch" "${base[@]}" --accel=auto --probe-only >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(cat "$tmp/stdout")" = tcg ] &&
	grep -q "^bench-guest: warning: no $tmp/kvm; using TCG: every figure EMULATED$" "$tmp/stderr"; echo $?)" \
	"--accel=auto without /dev/kvm: TCG, with the warning (exit $rc)"

# --workloads reaches the guest's kernel command line as clockbench.workload=
# (its /init passes it to the engine as --workload); unset, no parameter
# (the engine's default, none).  A stand-in QEMU records its arguments.
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >>"%s"\nexit 1\n' "$tmp/qemu-argv" >"$tmp/fake-qemu"
chmod +x "$tmp/fake-qemu"
for w in tcp-stream,timer -; do
	rm -f "$tmp/qemu-argv"
	set_w=()
	[ "$w" = - ] || set_w=(--workloads="$w")
	"$launch" "${base[@]}" --qemu="$tmp/fake-qemu" --vcpus=1 "${set_w[@]+"${set_w[@]}"}" \
		--results "$tmp/results" --run-id wl >/dev/null 2>&1
	append=$(grep -A1 -x -- -append "$tmp/qemu-argv" | tail -n1)
	if [ "$w" = - ]; then
		ok "$([ -n "$append" ] && [[ $append != *clockbench.workload* ]]; echo $?)" "no --workloads: no clockbench.workload= ($append)"
	else
		ok "$([[ " $append " == *" clockbench.workload=$w "* ]]; echo $?)" "--workloads=$w: clockbench.workload=$w on the guest's command line ($append)"
	fi
done
rm -rf "$tmp/results"

# A run folder is never reused, and an existing result never overwritten:
# both are refused before anything boots, and left as they were.
cs=$(host_cs)
mkdir -p "$tmp/results/run1"
echo precious >"$tmp/results/run1/guest-$cs-1vcpu.json"
"$launch" "${base[@]}" --vcpus=1 --results "$tmp/results" --run-id run1 >/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q 'run1 exists: a run folder is never reused' "$tmp/stderr" &&
	[ "$(cat "$tmp/results/run1/guest-$cs-1vcpu.json")" = precious ] &&
	[ "$(find "$tmp/results" -type f | wc -l)" -eq 1 ]; echo $?)" \
	"existing run folder: exit 1 ($rc), nothing touched"
diag_lines <"$tmp/stderr"
"$launch" "${base[@]}" --vcpus=1 --run-dir "$tmp/results/run1" >/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q "guest-$cs-1vcpu.json exists: results are never overwritten" "$tmp/stderr" &&
	[ "$(cat "$tmp/results/run1/guest-$cs-1vcpu.json")" = precious ] &&
	[ "$(find "$tmp/results" -type f | wc -l)" -eq 1 ]; echo $?)" \
	"--run-dir with the result there: exit 1 ($rc), file kept, nothing else written"
diag_lines <"$tmp/stderr"
"$launch" "${base[@]}" --vcpus=1 --run-dir "$tmp/results/run1" --clocksource other --trace >/dev/null 2>"$tmp/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && ! grep -q "guest-$cs-1vcpu.json exists" "$tmp/stderr"; echo $?)" \
	"--clocksource names the files: another label is not refused for the kernel's name (exit $rc: the fake kernel)"
rm -rf "$tmp/results"

# --accel=auto (the default) decides by a time-limited boot, and says so
# when it falls back.
kernel=$(guest_kernel)
initrd=$(guest_initramfs)
if [ -z "$kernel" ] || [ -z "$initrd" ] || ! command -v qemu-system-x86_64 >/dev/null; then
	skip "--accel=auto probe: needs a kernel image, the initramfs and qemu-system-x86_64"
else
	start=$SECONDS
	accel=$("$launch" --kernel="$kernel" --initramfs="$initrd" --probe-timeout=6 --probe-only 2>"$tmp/stderr")
	rc=$?
	took=$((SECONDS - start))
	if [ "$accel" = tcg ] && [ -e /dev/kvm ]; then
		ok "$([ "$rc" -eq 0 ] && grep -q 'using TCG: every figure EMULATED' "$tmp/stderr" &&
			[ "$took" -le 12 ]; echo $?)" "--accel=auto: KVM unusable here, fell back to TCG with a warning in ${took}s"
	else
		ok "$([ "$rc" -eq 0 ] && { [ "$accel" = kvm ] || [ "$accel" = tcg ]; }; echo $?)" "--accel=auto chose '$accel' in ${took}s"
	fi
	diag_lines <"$tmp/stderr"
	# With a CPU model KVM accepts here, the kernel spins instead: the probe's
	# time limit is what ends it.
	start=$SECONDS
	accel=$("$launch" --cpu=qemu64 --kernel="$kernel" --initramfs="$initrd" --probe-timeout=3 --probe-only 2>"$tmp/stderr")
	rc=$?
	took=$((SECONDS - start))
	if [ "$accel" = tcg ] && [ -e /dev/kvm ] && { [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; }; then
		skip "--accel=auto, --cpu=qemu64: /dev/kvm is not open to $(id -un), so no probe ran to be limited"
	elif [ "$accel" = tcg ] && [ -e /dev/kvm ]; then
		ok "$([ "$rc" -eq 0 ] && [ "$took" -le 10 ] && grep -qE 'KVM probe failed: (no guest /init within 3|guest did not reach|QEMU failed)' "$tmp/stderr"; echo $?)" \
			"--accel=auto, --cpu=qemu64: probe limited to 3 s, fell back in ${took}s"
	else
		ok "$([ "$rc" -eq 0 ] && { [ "$accel" = kvm ] || [ "$accel" = tcg ]; } && [ "$took" -le 10 ]; echo $?)" \
			"--accel=auto, --cpu=qemu64: chose '$accel' in ${took}s"
	fi
	diag_lines <"$tmp/stderr"
fi
done_testing
