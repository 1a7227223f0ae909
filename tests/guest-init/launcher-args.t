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
. tests/guest-init/guest-lib.sh
tap_tmp --tmpdir # the launcher keeps a failed run's work folder there
fake=$tmp/fake-image
echo not-a-kernel >"$fake"
launch=host-scripts/bench-guest
# A fake kernel, initramfs and QEMU, under TCG: nothing here boots.  An
# option given again later wins (argparse), so a test's own options follow.
base=(--kernel="$fake" --initramfs="$fake" --qemu=true --accel=tcg)

# Runs that need no process of their own (nothing but the launcher's checks,
# and stand-in QEMUs) go through the launcher's main() in one interpreter,
# its own (#! of bench-guest): a process each costs some 0.3 s here.
# queue [VAR=VALUE...] -- ARG...: queues a run (its number in $n) in that
# environment (the test's, plus VAR=VALUE); run_queue runs those queued.
# Run N's stdout, stderr (their file descriptors: the children's output,
# such as the engine's --dry-run, too), exit status and what the results
# folders then hold are in $tmp/cc/N.out, N.err, N.rc and N.res (a line
# "D DIR" when $tmp/results or $tmp/kept exists, "F PATH MD5" for each file
# in them).  run_now: queue's arguments, run now as a process of its own,
# into the same files.
mkdir -p "$tmp/cc"
q=()
nq=0
roots=("$tmp/results" "$tmp/kept")
queue() {
	n=$nq
	nq=$((nq + 1))
	q+=(:: "$n" "$@")
}
run_queue() {
	/usr/bin/python3 - "$tmp/cc" "$launch" "${roots[@]}" "${q[@]}" >"$tmp/cc.log" 2>&1 <<'PY'
import hashlib, importlib.machinery, importlib.util, os, signal, sys, tempfile
sys.path.insert(0, "tests/lib")
from taplib import main_to_files
out_dir, launch, roots = sys.argv[1], sys.argv[2], sys.argv[3:5]
sys.argv[0] = launch
# bench-guest itself, as a module: its sys.path and imports, not its main block.
loader = importlib.machinery.SourceFileLoader("bench_guest", launch)
bg = importlib.util.module_from_spec(importlib.util.spec_from_loader("bench_guest", loader))
loader.exec_module(bg)
launcher, msg = bg.launcher, bg.msg
runs = []
it = iter(sys.argv[5:])
for a in it:
    if a == "::":
        runs.append([next(it), [], None])
    elif runs[-1][2] is not None:
        runs[-1][2].append(a)
    elif a == "--":
        runs[-1][2] = []
    else:
        runs[-1][1].append(a)


def listing():
    lines = []
    for root in roots:
        if os.path.lexists(root):
            lines.append("D %s" % root)
        for d, _, files in sorted(os.walk(root)):
            for f in sorted(files):
                p = os.path.join(d, f)
                try:
                    with open(p, "rb") as fh:
                        lines.append("F %s %s" % (p, hashlib.md5(fh.read()).hexdigest()))
                except OSError:
                    lines.append("F %s -" % p)
    return "".join(l + "\n" for l in lines)


for n, env, args in runs:
    saved = os.getcwd(), list(sys.path), {s: signal.getsignal(s) for s in launcher.INTERRUPTS}
    tempfile.tempdir = None  # TMPDIR as this run has it
    msg.PROG = os.path.basename(launch)  # as bench-guest names itself, run by that name
    rc = main_to_files(launcher.main, args, env, os.path.join(out_dir, "%s.out" % n), os.path.join(out_dir, "%s.err" % n))
    os.chdir(saved[0])
    sys.path[:] = saved[1]
    for s, h in saved[2].items():
        signal.signal(s, h)
    tempfile.tempdir = None
    with open(os.path.join(out_dir, "%s.res" % n), "w") as f:
        f.write(listing())
    with open(os.path.join(out_dir, "%s.rc" % n), "w") as f:
        f.write("%d\n" % (rc & 0xFF))
PY
	local rc=$?
	[ "$rc" -eq 0 ] || { diag "the launcher's runs in one interpreter failed (exit $rc):"; diag_lines <"$tmp/cc.log"; }
	q=()
}
run_now() {
	local vars=() r
	n=$nq
	nq=$((nq + 1))
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	env "${vars[@]+"${vars[@]}"}" "$launch" "$@" >"$tmp/cc/$n.out" 2>"$tmp/cc/$n.err"
	echo $? >"$tmp/cc/$n.rc"
	for r in "${roots[@]}"; do
		[ -e "$r" ] || continue
		echo "D $r"
		find "$r" -type f -exec md5sum {} + | while read -r sum path; do echo "F $path $sum"; done
	done >"$tmp/cc/$n.res"
}
# Judged in this shell, with its builtins only (a process each costs here
# too): load N sets rc (255: run N did not run), out and err (its stdout and
# stderr, whole), err_n (its stderr's lines, as wc -l counts them), errf
# (its stderr's file) and res (what the results folders held after it);
# files_in DIR: how many files DIR held then, in left; made DIR: DIR existed then;
# err_has ERE: a line of stderr matches (grep -E).
load() {
	local nl
	{ read -r rc <"$tmp/cc/$1.rc"; } 2>/dev/null || rc=255
	out='' err='' res=()
	IFS= read -r -d '' out <"$tmp/cc/$1.out"
	IFS= read -r -d '' err <"$tmp/cc/$1.err"
	errf=$tmp/cc/$1.err
	nl=${err//[!$'\n']/}
	err_n=${#nl}
	mapfile -t res <"$tmp/cc/$1.res"
}
files_in() {
	local l
	left=0
	for l in "${res[@]+"${res[@]}"}"; do [[ $l != "F $1/"* ]] || left=$((left + 1)); done
}
made() {
	local l
	for l in "${res[@]+"${res[@]}"}"; do [ "$l" != "D $1" ] || return 0; done
	return 1
}
err_has() {
	local l
	while IFS= read -r l; do [[ ! $l =~ $1 ]] || return 0; done <<<"${err%$'\n'}"
	return 1
}
first_line() { local l; IFS= read -r l <<<"$1"; printf '%s' "$l"; }
# later FUNCTION ARG...: judged, in order, by judge_all once the queue ran.
judged=()
later() { judged+=("$#" "$@"); }
judge_all() {
	local i=0 k
	while [ "$i" -lt "${#judged[@]}" ]; do
		k=${judged[i]}
		"${judged[@]:i+1:k}"
		i=$((i + 1 + k))
	done
	judged=()
}
# split_env ARG...: the leading VAR=VALUE words of a case (its environment)
# in env_words, the rest (the launcher's arguments) in args_words.
split_env() {
	env_words=()
	while [ "$#" -gt 0 ] && [[ $1 =~ ^[A-Z][A-Z0-9_]*= ]]; do
		env_words+=("$1")
		shift
	done
	args_words=("$@")
}

# expect STATUS PATTERN DESCRIPTION [VAR=VALUE...] [OPTION...]: runs the
# launcher (in that environment) with those options (after the fake kernel,
# initramfs and QEMU of base, which they override); wants the exit status,
# exactly one stderr line matching PATTERN, and no file in the results folder.
expect() {
	local want=$1 pat=$2 what=$3
	shift 3
	split_env "$@"
	queue "${env_words[@]+"${env_words[@]}"}" -- "${base[@]}" "${args_words[@]+"${args_words[@]}"}" \
		--results "$tmp/results" --run-id run1
	later judge_expect "$n" "$want" "$pat" "$what"
}
judge_expect() {
	local n=$1 want=$2 pat=$3 what=$4
	load "$n"
	files_in "$tmp/results"
	if [ "$rc" -eq "$want" ] && [ "$err_n" -eq 1 ] && [ "$left" -eq 0 ] && err_has "$pat"; then
		ok 0 "$what: exit $want, '${err%$'\n'}'"
	else
		ok 1 "$what: exit $rc (want $want), $err_n stderr lines, $left files left"
		diag_lines <"$errf"
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
	local want=$1 pat=$2 what=$3
	shift 3
	queue -- "${base[@]}" "$@"
	later judge_expect_args "$n" "$want" "$pat" "$what"
}
judge_expect_args() {
	local n=$1 want=$2 pat=$3 what=$4 s=1
	load "$n"
	[ "$rc" -eq "$want" ] && [ "$err_n" -eq 1 ] && err_has "$pat" && files_in "$tmp/results" && [ "$left" -eq 0 ] && s=0
	ok "$s" "$what: exit $rc (want $want), '$(first_line "$err")'"
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
queue -- --help
judge_help() {
	load "$1"
	printf '%s' "$out$err" >"$tmp/stdout" # as 2>&1
	ok "$([ "$rc" -eq 0 ] && grep -q -- '--accel ACCEL' "$tmp/stdout" && grep -q 'one of: auto, kvm, tcg' "$tmp/stdout" &&
		grep -q 'make bench-guest VCPUS=2: --vcpus=2' "$tmp/stdout" && ! grep -qi 'environment' "$tmp/stdout"; echo $?)" \
		"--help: exit 0, lists the settings and says make's variables of their names become options (no environment)"
}
later judge_help "$n"

expect 2 '--kernel=/nonexistent/vmlinuz: no such file: name one with --kernel.*or run make deps .*never into /boot' \
	"missing kernel: says --kernel and make deps (which never installs one into /boot)" --kernel=/nonexistent/vmlinuz
expect 2 "--initramfs=$tmp/none: missing or unreadable: run 'make guest-initramfs'" \
	"missing initramfs: says make guest-initramfs" --initramfs="$tmp/none"
expect 2 '--qemu=qemu-nonexistent: not found: .*apt-get install qemu-system-x86' \
	"missing QEMU: names the package" --qemu=qemu-nonexistent
if [ "$(id -u)" -ne 0 ]; then
	echo not-a-kernel >"$tmp/unreadable-image"
	chmod 000 "$tmp/unreadable-image"
	expect 2 'not a readable file: run as root' "unreadable kernel" --kernel="$tmp/unreadable-image"
else
	later skip "unreadable kernel: root reads everything"
fi
# The guest engine's options, judged by the engine (--dry-run) on as many
# CPUs as the guest has vCPUs, before QEMU starts (--qemu=false would fail).
expect 2 "^bench-guest: the guest's engine: --clocks: unknown name 'monotnic'" "--clocks=monotnic, by the engine" \
	--clocks=monotnic --qemu=false
expect 2 "^bench-guest: the guest's engine: --threads '2': only 1 CPUs are allowed" "--threads=2 with --vcpus=1" \
	--threads=2 --vcpus=1 --qemu=false
expect 2 "^bench-guest: the guest's engine: --duration '0.5': the tsc-rate check needs at least 5 seconds" \
	"--check=tsc-rate with the guest's 0.5 s default duration" --check=tsc-rate --qemu=false
# judge_checks N WHAT [TAIL]: run N (--check-only) exit 0, silent (stdout and
# stderr, as 2>&1), no results folder made.
judge_checks() {
	local n=$1 what=$2 all s=1
	load "$n"
	all=$out$err # as 2>&1
	[ "$rc" -eq 0 ] && [ -z "$all" ] && ! made "$tmp/results" && s=0
	ok "$s" "$what: exit $rc, silent${3-${all:+: $(first_line "$all")}}"
}
queue -- "${base[@]}" --vcpus=1 --threads=1 --check-only --results "$tmp/results" --run-id run1
later judge_checks "$n" "--check-only with good settings" ", nothing made"
# checks WHAT [VAR=VALUE...] OPTION...: --check-only passes those options:
# exit 0, silent.
checks() {
	local what=$1
	shift
	split_env "$@"
	queue "${env_words[@]+"${env_words[@]}"}" -- "${base[@]}" "${args_words[@]+"${args_words[@]}"}" --check-only \
		--results "$tmp/results" --run-id run1
	later judge_checks "$n" "--check-only, $what"
}
checks "--duration=500ms --timeout=5m --probe-timeout=30s --observe-seconds=1m: units" --duration=500ms --timeout=5m \
	--probe-timeout=30s --observe-seconds=1m
# No setting is read from the environment: a bad value there is not seen
# (no --vcpus given: the default, not VCPUS, is judged).  A process of its
# own, started with VCPUS=0 in its environment.
run_now VCPUS=0 -- "${base[@]}" --check-only --results "$tmp/results" --run-id run1
later judge_checks "$n" "--check-only, VCPUS=0 in the environment is ignored"
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
queue -- "${base[@]}" --append=clockbench.threads=0 --check-only --test-skip-engine-check --results "$tmp/results" \
	--run-id run1
skip1=$n
queue -- "${base[@]}" --vcpus=0 --check-only --test-skip-engine-check --results "$tmp/results" --run-id run1
judge_skip_engine_check() {
	local rc1 rc2 s=1
	load "$1"
	rc1=$rc
	load "$2"
	rc2=$rc
	[ "$rc1" -eq 0 ] && [ "$rc2" -eq 2 ] && s=0
	ok "$s" \
		"--test-skip-engine-check: a bad engine word passes (exit $rc1), --vcpus=0 still refused (exit $rc2)"
}
later judge_skip_engine_check "$skip1" "$n"

# CB_KVM_DEV (a test hook) stands in for /dev/kvm so that a host with KVM
# can test its absence.
expect 2 "--accel=kvm: $tmp/kvm: no such device \\(load kvm_intel or kvm_amd, or use --accel=tcg\\)" \
	"--accel=kvm without /dev/kvm" CB_KVM_DEV="$tmp/kvm" --accel=kvm
if [ "$(id -u)" -ne 0 ]; then
	: >"$tmp/kvm0"
	chmod 000 "$tmp/kvm0"
	expect 2 "--accel=kvm: $tmp/kvm0: permission denied" "--accel=kvm without access" CB_KVM_DEV="$tmp/kvm0" --accel=kvm
else
	later skip "--accel=kvm without access: root can open anything"
fi
queue CB_KVM_DEV="$tmp/kvm" -- "${base[@]}" --accel=auto --probe-only
judge_auto() {
	local s=1
	load "$1"
	[ "$rc" -eq 0 ] && [ "${out%$'\n'}" = "tcg"$'\n'"no $tmp/kvm" ] &&
		grep -q "^bench-guest: warning: no $tmp/kvm; using TCG: every figure EMULATED$" "$errf" && s=0
	ok "$s" \
		"--accel=auto without /dev/kvm: TCG and why (the probe's answer compare passes on), with the warning (exit $rc)"
}
later judge_auto "$n"
# --probed (compare's: the accelerator its one probe decided) goes with
# --accel=kvm or tcg, never with auto or --probe-only; a set accelerator
# is printed alone by --probe-only (no probe, no reason).
expect 2 "--probed: the accelerator a probe decided, with --accel=kvm or tcg; not with --accel=auto" \
	"--probed with --accel=auto" --accel=auto --probed=why
expect 2 "--probed: the accelerator a probe decided, with --accel=kvm or tcg; not with --probe-only" \
	"--probed with --probe-only" --probe-only --probed=why
queue -- "${base[@]}" --probe-only
judge_set() {
	load "$1"
	ok "$([ "$rc" -eq 0 ] && [ "$out" = tcg$'\n' ] && [ ! -s "$errf" ]; echo $?)" "--accel=tcg --probe-only: tcg alone, nothing said"
}
later judge_set "$n"

# --workloads reaches the guest's kernel command line as clockbench.workload=
# (its /init passes it to the engine as --workloads); unset, no parameter
# (the engine's default, none).  A stand-in QEMU (one for each run) records
# its arguments.
judge_workloads() {
	local w=$1 append
	append=$(grep -A1 -x -- -append "$2" | tail -n1)
	if [ "$w" = - ]; then
		ok "$([ -n "$append" ] && [[ $append != *clockbench.workload* ]]; echo $?)" "no --workloads: no clockbench.workload= ($append)"
	else
		ok "$([[ " $append " == *" clockbench.workload=$w "* ]]; echo $?)" "--workloads=$w: clockbench.workload=$w on the guest's command line ($append)"
	fi
}
i=0
for w in tcp-stream,timer -; do
	i=$((i + 1))
	printf '#!/bin/sh\nprintf "%%s\\n" "$@" >>"%s"\nexit 1\n' "$tmp/qemu-argv-$i" >"$tmp/fake-qemu-$i"
	chmod +x "$tmp/fake-qemu-$i"
	set_w=()
	[ "$w" = - ] || set_w=(--workloads="$w")
	queue -- "${base[@]}" --qemu="$tmp/fake-qemu-$i" --vcpus=1 "${set_w[@]+"${set_w[@]}"}" \
		--results "$tmp/results" --run-id wl
	later judge_workloads "$w" "$tmp/qemu-argv-$i"
done

# A run folder is never reused, and an existing result never overwritten:
# both are refused before anything boots, and left as they were (a results
# folder of their own, $tmp/kept, made before the runs above run).
cs=$(host_cs)
kept=$tmp/kept/run1/guest-$cs-1vcpu.json
mkdir -p "$tmp/kept/run1"
echo precious >"$kept"
sum=$(md5sum <"$kept")
sum=${sum%% *}
# untouched: after the run loaded, the kept result is as it was and alone.
untouched() {
	local l
	for l in "${res[@]}"; do [ "$l" != "F $kept $sum" ] || { files_in "$tmp/kept" && [ "$left" -eq 1 ]; return; }; done
	return 1
}
queue -- "${base[@]}" --vcpus=1 --results "$tmp/kept" --run-id run1
judge_reused() {
	local s=1
	load "$1"
	[ "$rc" -eq 1 ] && grep -q 'run1 exists: a run folder is never reused' "$errf" && untouched && s=0
	ok "$s" "existing run folder: exit 1 ($rc), nothing touched"
	diag_lines <"$errf"
}
later judge_reused "$n"
queue -- "${base[@]}" --vcpus=1 --run-dir "$tmp/kept/run1"
judge_overwrite() {
	local s=1
	load "$1"
	[ "$rc" -eq 1 ] && grep -q "guest-$cs-1vcpu.json exists: results are never overwritten" "$errf" && untouched && s=0
	ok "$s" "--run-dir with the result there: exit 1 ($rc), file kept, nothing else written"
	diag_lines <"$errf"
}
later judge_overwrite "$n"
queue -- "${base[@]}" --vcpus=1 --run-dir "$tmp/kept/run1" --clocksource other --trace
judge_label() {
	local s=1
	load "$1"
	[ "$rc" -eq 1 ] && ! grep -q "guest-$cs-1vcpu.json exists" "$errf" && s=0
	ok "$s" \
		"--clocksource names the files: another label is not refused for the kernel's name (exit $rc: the fake kernel)"
}
later judge_label "$n"
run_queue
judge_all

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
	accel=${accel%%$'\n'*} # the probe's answer on its second line
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
	accel=${accel%%$'\n'*}
	took=$((SECONDS - start))
	if [ "$accel" = tcg ] && [ -e /dev/kvm ] && { [ ! -r /dev/kvm ] || [ ! -w /dev/kvm ]; }; then
		skip "--accel=auto, --cpu=qemu64: /dev/kvm is not open to $(id -un), so no probe ran to be limited"
	elif [ "$accel" = tcg ] && [ -e /dev/kvm ]; then
		ok "$([ "$rc" -eq 0 ] && [ "$took" -le 10 ] && grep -qE 'this KVM cannot run an ordinary guest kernel: (no guest /init within 3|guest did not reach|QEMU failed)' "$tmp/stderr"; echo $?)" \
			"--accel=auto, --cpu=qemu64: probe limited to 3 s, fell back in ${took}s"
	else
		ok "$([ "$rc" -eq 0 ] && { [ "$accel" = kvm ] || [ "$accel" = tcg ]; } && [ "$took" -le 10 ]; echo $?)" \
			"--accel=auto, --cpu=qemu64: chose '$accel' in ${took}s"
	fi
	diag_lines <"$tmp/stderr"
fi
done_testing
