#!/usr/bin/env bash
# l1-run.sh: inside the emulated hypervisor (L1), as root: load KVM, then
# run the project's own harness, unchanged, for each lab state.
# Usage: l1-run.sh TOP OUT STATES   (STATES: comma list of 1,2,3,4; see
# lab/run-lab.sh for what each one is)
set -eu -o pipefail
top=$1
out=$2
states=$3
cd "$top"
say() { echo "lab-l1: $*" >/dev/console; }

modprobe kvm_amd || { say "modprobe kvm_amd failed: the emulated CPU has no SVM? (cpuinfo flags: $(grep -m1 -o -w -e svm -e npt /proc/cpuinfo | paste -sd, -))"; exit 1; }
[ -e /dev/kvm ] || { say "no /dev/kvm after modprobe kvm_amd (no SVM in the emulated CPU?)"; exit 1; }
kernel=$(find /boot -maxdepth 1 -name "vmlinuz-$(uname -r)" | head -n1)
[ -n "$kernel" ] || { say "no /boot/vmlinuz-$(uname -r) for the inner guest"; exit 1; }

# The inner guest (L2): small and quick; what is asserted is the mechanism,
# so the engine runs the monotonic clock only, briefly.
# DURATION serves the host bench and the guest's engine alike.
export KERNEL=$kernel ACCEL=kvm MACHINE=q35 MEM=256 TIMEOUT=${LAB_L2_TIMEOUT:-240}
export CLOCKS=monotonic METHODS=vdso,syscall DURATION=0.05 GUEST=1

# run_state N CLOCKSOURCES [ENV...]: one compare run, folder state-N.  An
# emulator inside an emulator can fail for reasons of its own (a slow or
# stalled inner boot), so a failed state is run once more; the failed
# attempt is kept as state-N.attempt-1{,.log} and the retry is reported.
run_state() {
	local n=$1 cs=$2
	shift 2
	local try rc
	for try in 1 2; do
		say "state $n: host clocksource(s) $cs; $* (attempt $try)"
		echo "$(date -u +%s) start state $n" >>"$out/progress.log"
		rc=0
		env "$@" CLOCKSOURCES="$cs" host-scripts/compare.sh "$out" "state-$n" >"$out/state-$n.log" 2>&1 || rc=$?
		cat /sys/devices/system/clocksource/clocksource0/current_clocksource >"$out/state-$n.clocksource-after"
		if [ "$rc" -eq 0 ]; then
			echo "$(date -u +%s) done state $n" >>"$out/progress.log"
			return 0
		fi
		echo "$(date -u +%s) failed state $n (exit $rc, attempt $try)" >>"$out/progress.log"
		tail -n 5 "$out/state-$n.log" >/dev/console
		[ "$try" = 1 ] || return 0
		mv "$out/state-$n.log" "$out/state-$n.attempt-1.log"
		mv "$out/state-$n.clocksource-after" "$out/state-$n.attempt-1.clocksource-after"
		[ ! -e "$out/state-$n" ] || mv "$out/state-$n" "$out/state-$n.attempt-1"
	done
}

{
	echo "kernel $(uname -r)"
	echo "cmdline $(cat /proc/cmdline)"
	echo "cpus $(nproc)"
	echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	echo "available $(cat /sys/devices/system/clocksource/clocksource0/available_clocksource)"
	grep -m1 -o -w -e svm -e npt /proc/cpuinfo | sort -u | paste -sd' ' - | sed 's/^/flags /'
	dmesg | grep -iE 'tsc|clocksource' | sed 's/^/dmesg /'
} >"$out/l1-facts-${states//,/-}.txt" 2>&1

for s in ${states//,/ }; do
	case "$s" in
	1) run_state 1 tsc VCPUS=1 PIN=1 ;;
	2) run_state 2 hpet VCPUS=1 PIN=1 ;;
	3) run_state 3 "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" VCPUS=2 PIN=0 ;;
	4) run_state 4 hpet VCPUS=1 PIN=1 "CPU=host,+invtsc,x-force-features=on" ;;
	*) say "unknown state $s"; exit 2 ;;
	esac
done
