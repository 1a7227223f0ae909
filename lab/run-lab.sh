#!/usr/bin/env bash
# run-lab.sh: `make lab`: an emulated hypervisor (QEMU TCG, AMD CPU with SVM
# and nested paging, the Debian kernel) runs the project's own harness in
# four host clock states, and the results are checked (TAP).
#   1  L1 on tsc: master clock on, stable bit set, guest reads in user space
#   2  L1 flipped to hpet at run time: master clock off, guest reads syscall
#   3  L1 booted tsc=unstable, 2 vCPUs, L2 2 vCPUs floating: as 2, plus
#      TSC-offset writes as vCPUs move
#   4  L1 on hpet, L2 CPU with invtsc: the guest picks tsc (the mitigation)
# A state whose harness run fails is run once more (lab/l1-run.sh); the
# failed attempt is kept and reported.
# Usage: run-lab.sh RESULTS_DIR RUN_ID
# Env: LAB_STATES (default 1,2,3,4), LAB_TIMEOUT (s per L1 boot, 600),
#      KERNEL (default: the newest /boot/vmlinuz-*, whose modules L1 loads).
# Exit status: 0 all assertions passed, 1 failure, 2 usage.
set -eu -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
say() { echo "lab: $*" >&2; }
die() { say "$*"; exit 1; }

[ "$#" -eq 2 ] || { echo "usage: $0 RESULTS_DIR RUN_ID" >&2; exit 2; }
states=${LAB_STATES:-1,2,3,4}
[[ $states =~ ^[1-4](,[1-4])*$ ]] || { say "LAB_STATES=$states: expected a list of 1..4"; exit 2; }
timeout=${LAB_TIMEOUT:-600}
if ! [[ $timeout =~ ^[0-9]+$ ]] || [ "$timeout" -lt 60 ]; then
	say "LAB_TIMEOUT=$timeout: expected seconds, at least 60"
	exit 2
fi

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found: run make deps (Debian: qemu-system-x86)"
kernel=${KERNEL:-$(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort -V | tail -n1)}
if [ -z "$kernel" ] || [ ! -r "$kernel" ]; then
	die "no readable kernel in /boot: install linux-image-amd64 (make deps), or name one with KERNEL="
fi
kver=${kernel##*/vmlinuz-}
[ -d "/lib/modules/$kver" ] || die "no modules for $kver in /lib/modules: the lab loads kvm_amd and 9p from there (install linux-image-amd64)"
[ -f "$top/build/guest/initramfs.cpio" ] || die "no guest initramfs: run make guest-initramfs"
[ "$(id -u)" -eq 0 ] || die "the lab needs root: QEMU's 9p export of / must read every file the inner harness uses"

dir=$1/$2
mkdir -p "$1"
mkdir "$dir" || die "$dir exists: choose another RUN_ID"
dir=$(cd "$dir" && pwd)
mkdir -p "$top/build/lab"
l1=$top/build/lab/l1-$kver.cpio
python3 "$here/mkl1.py" -o "$l1" --kver "$kver" || die "building the L1 initramfs failed"

# boot NAME SMP STATES APPEND: one emulated hypervisor, under a time limit.
boot() {
	local name=$1 smp=$2 st=$3 extra=$4 start epoch rc seen qpid
	start=$SECONDS
	epoch=$(date -u +%s)
	seen=0
	[ -f "$dir/progress.log" ] && seen=$(wc -l <"$dir/progress.log")
	say "L1 '$name' ($smp vCPU, states $st${extra:+, $extra}): booting under TCG, limit ${timeout}s"
	timeout -k 10 "$timeout" qemu-system-x86_64 -accel tcg -cpu max -smp "$smp" -m 3072 \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$kernel" -initrd "$l1" \
		-append "console=ttyS0 quiet panic=-1 $extra clockbench.top=$top clockbench.out=$dir clockbench.states=$st" \
		-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap" \
		-virtfs "local,path=$dir,mount_tag=labout,security_model=none,multidevs=remap" \
		-serial "file:$dir/l1-$name.console.log" &
	qpid=$!
	# Progress: the states L1 reports as it goes.
	while kill -0 "$qpid" 2>/dev/null; do
		sleep 5
		if [ -f "$dir/progress.log" ]; then
			tail -n +$((seen + 1)) "$dir/progress.log" | while read -r t what; do
				say "  $what (at $((t - epoch))s)"
			done
			seen=$(wc -l <"$dir/progress.log")
		fi
	done
	rc=0
	wait "$qpid" || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		say "L1 '$name' timed out after ${timeout}s (console: $dir/l1-$name.console.log)"
		return 1
	fi
	if grep -q 'LAB-L1-FAILED' "$dir/l1-$name.console.log" || ! grep -q 'LAB-L1-DONE rc=0' "$dir/l1-$name.console.log"; then
		say "L1 '$name' failed (QEMU status $rc); its last console lines:"
		tail -n 8 "$dir/l1-$name.console.log" >&2
		return 1
	fi
	say "L1 '$name' done in $((SECONDS - start))s"
}

failed=0
a=$(tr ',' '\n' <<<"$states" | { grep -v '^3$' || true; } | paste -sd, -)
if [ -n "$a" ]; then
	# One vCPU: two emulated vCPUs mark L1's TSC unstable at boot.
	boot single 1 "$a" "" || failed=1
fi
if grep -qw 3 <<<"${states//,/ }"; then
	boot unstable 2 3 "tsc=unstable" || failed=1
fi
say "results in $dir; checking them"
python3 "$here/assert.py" "$dir" "$states" || failed=1
exit "$failed"
