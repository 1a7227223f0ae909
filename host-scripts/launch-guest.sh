#!/usr/bin/env bash
# launch-guest.sh: boots clockbench as PID 1 of a tiny QEMU guest on a host
# kernel and writes RESULTS/RUN_ID/guest-<host clocksource>-<N>vcpu.json.
set -eu -o pipefail

PROG=launch-guest
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")

usage() {
	cat <<EOF
usage: $0 [--probe-only] [RESULTS [RUN_ID]]

Boots the guest initramfs (make guest-initramfs) on a host kernel under QEMU,
with clockbench as PID 1, and writes RESULTS/RUN_ID/guest-<host
clocksource>-<N>vcpu.json (never overwriting) with the console log beside it.
RESULTS defaults to results, RUN_ID to <UTC time>-<hostname>.
--probe-only prints the accelerator ACCEL=auto would choose, and exits.

Settings, from the environment (defaults in brackets):
  KERNEL=PATH         kernel image [/boot/vmlinuz-\$(uname -r)]
  INITRAMFS=PATH      [build/guest/initramfs.cpio]
  QEMU=PROG           [qemu-system-x86_64]
  BACKEND=qemu|libvirt [qemu]
  ACCEL=auto|kvm|tcg  auto probes KVM with a time-limited boot, else TCG [auto]
  PROBE_TIMEOUT=S     seconds the KVM probe may take [8]
  VCPUS=N             [min(online CPUs, 4)]
  MEM=MIB             guest memory [256]
  MACHINE=q35|pc|microvm  [q35] (microvm: acpi=off, results on a 2nd isa-serial)
  CPU=MODEL[,+feat]   e.g. host, host,+invtsc, host,-kvmclock, max [host under KVM, max under TCG]
  HPET=on|off|default QEMU's HPET [default]
  PIN=1|0             pin vCPU n to host CPU n (0: leave them floating) [1]
  TIMEOUT=S           limit for the whole guest run [300]
  APPEND=WORDS        more kernel parameters, e.g. tsc=unstable
  THREADS= DURATION= CLOCKS= METHODS= CHECK= CPUS= COST=0|1
                      passed to the engine in the guest [1-VCPUS, 0.5, all, all, all, -, 1]
Exit status: 0 result written, 1 failure (one line naming the console log), 2 usage.
EOF
}

usage_err() {
	echo "$PROG: $*" >&2
	exit 2
}
die() {
	echo "$PROG: $*" >&2
	exit 1
}
warn() { echo "$PROG: warning: $*" >&2; }

# one_of NAME VALUE CHOICE...: usage error unless VALUE is one of them.
one_of() {
	local name=$1 v=$2 c
	shift 2
	for c in "$@"; do
		[ "$v" = "$c" ] && return 0
	done
	usage_err "$name=$v: expected one of: $*"
}

# int_in NAME VALUE MIN MAX: usage error unless VALUE is an integer in range.
int_in() {
	if ! [[ $2 =~ ^[0-9]{1,6}$ ]] || [ "$((10#$2))" -lt "$3" ] || [ "$((10#$2))" -gt "$4" ]; then
		usage_err "$1=$2: expected an integer from $3 to $4"
	fi
}

# word NAME VALUE: usage error unless VALUE is a plain list such as 1-2,4.
word() {
	[[ $2 =~ ^[A-Za-z0-9][A-Za-z0-9,._-]*$ ]] || usage_err "$1=$2: expected a list such as 1,2 or monotonic,realtime"
}

probe_only=0
pos=()
for arg in "$@"; do
	case $arg in
	-h | --help)
		usage
		exit 0
		;;
	--probe-only) probe_only=1 ;;
	-*) usage_err "unknown option $arg (see --help)" ;;
	*) pos+=("$arg") ;;
	esac
done
[ "${#pos[@]}" -le 2 ] || usage_err "too many arguments (see --help)"
RESULTS=${pos[0]:-results}
RUN_ID=${pos[1]:-$(date -u +%Y%m%d-%H%M%S)-$(hostname -s 2>/dev/null || echo host)}
[[ $RUN_ID =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || usage_err "RUN_ID=$RUN_ID: letters, digits, . _ - only"

online=$(getconf _NPROCESSORS_ONLN)
BACKEND=${BACKEND:-qemu}
ACCEL=${ACCEL:-auto}
MACHINE=${MACHINE:-q35}
HPET=${HPET:-default}
PIN=${PIN:-1}
VCPUS=${VCPUS:-$((online < 4 ? online : 4))}
MEM=${MEM:-256}
TIMEOUT=${TIMEOUT:-300}
PROBE_TIMEOUT=${PROBE_TIMEOUT:-8}
QEMU=${QEMU:-qemu-system-x86_64}
INITRAMFS=${INITRAMFS:-$top/build/guest/initramfs.cpio}
COST=${COST:-1}

one_of BACKEND "$BACKEND" qemu libvirt
one_of ACCEL "$ACCEL" auto kvm tcg
one_of MACHINE "$MACHINE" q35 pc microvm
one_of HPET "$HPET" on off default
one_of PIN "$PIN" 0 1
one_of COST "$COST" 0 1
int_in VCPUS "$VCPUS" 1 64
int_in MEM "$MEM" 64 65536
int_in TIMEOUT "$TIMEOUT" 1 86400
int_in PROBE_TIMEOUT "$PROBE_TIMEOUT" 1 600
VCPUS=$((10#$VCPUS))
if [ "$MACHINE" = microvm ] && [ "$HPET" != default ]; then
	usage_err "HPET=$HPET: microvm has no HPET; it applies to q35 and pc"
fi
if [ "$MACHINE" = microvm ] && [ "$BACKEND" = libvirt ]; then
	usage_err "MACHINE=microvm: BACKEND=libvirt supports q35 and pc"
fi
if [ -n "${CPU:-}" ]; then
	[[ $CPU =~ ^[A-Za-z0-9][A-Za-z0-9,.+=_-]*$ ]] || usage_err "CPU=$CPU: expected a QEMU CPU model such as host,+invtsc"
fi
if [ -n "${DURATION:-}" ]; then
	[[ $DURATION =~ ^[0-9]+(\.[0-9]+)?$ ]] || usage_err "DURATION=$DURATION: expected seconds such as 0.5"
fi
params=(--param "cost=$COST")
for v in THREADS DURATION CLOCKS METHODS CHECK CPUS; do
	val=${!v:-}
	[ -n "$val" ] || continue
	word "$v" "$val"
	case $v in
	CLOCKS) key=clock ;;
	METHODS) key=method ;;
	*) key=$(printf '%s' "$v" | tr '[:upper:]' '[:lower:]') ;;
	esac
	params+=(--param "$key=$val")
done
APPEND=${APPEND:-}
[[ $APPEND != *$'\n'* ]] || usage_err "APPEND: one line only"

KERNEL=${KERNEL:-/boot/vmlinuz-$(uname -r)}
if [ ! -e "$KERNEL" ]; then
	found=$(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort | tr '\n' ' ')
	found=${found% }
	die "kernel $KERNEL: no such file: name one with KERNEL=${found:+ (found: $found)}, e.g. the Debian kernel (apt-get install linux-image-amd64 gives /boot/vmlinuz-<version>-amd64)"
fi
[ -r "$KERNEL" ] || die "kernel $KERNEL: not readable: run as root, or copy it somewhere readable and name it with KERNEL="
[ -r "$INITRAMFS" ] || die "initramfs $INITRAMFS: missing or unreadable: run 'make guest-initramfs'"
command -v python3 >/dev/null || die "python3 not found (Debian: apt-get install python3)"
command -v timeout >/dev/null || die "timeout not found (Debian: coreutils)"
command -v "$QEMU" >/dev/null || die "$QEMU not found: name one with QEMU=, or install it (Debian: apt-get install qemu-system-x86)"
if [ "$BACKEND" = libvirt ]; then
	command -v virsh >/dev/null || die "virsh not found (Debian: apt-get install libvirt-daemon-system libvirt-clients)"
fi

common=(--qemu "$QEMU" --kernel "$KERNEL" --initramfs "$INITRAMFS" --machine "$MACHINE"
	--vcpus "$VCPUS" --mem "$MEM" --hpet "$HPET" --append "$APPEND")

# Choose the accelerator.  /dev/kvm alone proves nothing (a nested
# hypervisor may create the VM and then never run the kernel), so auto
# boots the guest once under KVM with a short limit and falls back to TCG.
note=""
kvm=${KVM_DEV:-/dev/kvm} # the tests point this elsewhere; QEMU opens /dev/kvm
case $ACCEL in
tcg) accel=tcg ;;
kvm)
	[ -e "$kvm" ] || die "ACCEL=kvm: $kvm: no such device (load kvm_intel or kvm_amd, or use ACCEL=tcg)"
	if [ ! -r "$kvm" ] || [ ! -w "$kvm" ]; then
		die "ACCEL=kvm: $kvm: permission denied (join group kvm, or use ACCEL=tcg)"
	fi
	accel=kvm
	;;
auto)
	if [ ! -e "$kvm" ]; then
		note="no $kvm"
	elif [ ! -r "$kvm" ] || [ ! -w "$kvm" ]; then
		note="$kvm: permission denied"
	elif verdict=$(python3 "$here/guestrun.py" probe "${common[@]}" --cpu "${CPU:-host}" --timeout "$PROBE_TIMEOUT"); then
		accel=kvm
		echo "$PROG: KVM probe: guest reached /init in ${verdict#ok } ms: using KVM" >&2
	else
		note="KVM probe failed: ${verdict#fail }"
	fi
	if [ -n "$note" ]; then
		accel=tcg
		warn "$note; falling back to TCG: every figure of this run is EMULATED"
	fi
	;;
esac
if [ "$accel" = tcg ] && [[ ${CPU:-} =~ ^host(,|$) ]]; then
	[ "$ACCEL" = tcg ] && usage_err "CPU=$CPU: the host model needs KVM; under TCG use max"
	die "CPU=$CPU: the host model needs KVM, and ACCEL=auto fell back to TCG: use CPU=max, or fix KVM"
fi
CPU=${CPU:-$([ "$accel" = kvm ] && echo host || echo max)}

if [ "$probe_only" = 1 ]; then
	echo "$accel"
	exit 0
fi

exec python3 "$here/guestrun.py" run "${common[@]}" --cpu "$CPU" --backend "$BACKEND" \
	--accel "$accel" --accel-requested "$ACCEL" --accel-note "$note" --pin "$PIN" \
	--timeout "$TIMEOUT" --results "$RESULTS" --run-id "$RUN_ID" "${params[@]}"
