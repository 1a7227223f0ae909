#!/usr/bin/env bash
# l1-run.sh: inside the emulated hypervisor (L1), as root: load KVM, record
# L1's clock facts, then run the project's own harness (host-scripts/bench)
# for each lab state of this boot, as lab/states.cfg says (read through
# lab/labtable.py).  A state whose run fails is run again, up to the
# table's `attempts`; each failed attempt is kept.
# Usage: l1-run.sh TOP OUT STATES BOOT  (STATES: comma list, one L1 boot's;
# BOOT: this L1's name, whose files it writes: the boot's, or NAME-rJ for
# the J-th L1 booted in place of a frozen one).  The attempts of a state
# are counted across L1s: a state an earlier L1 froze in starts at its
# next attempt (from the progress log).
# Exit status: 0 every state ran, 1 a state failed every attempt or L1 has
# no KVM.
set -eu -o pipefail
top=$1
out=$2
states=$3
boot=$4
cd "$top"
say() { echo "lab-l1: $*" >/dev/console; }
# The kernel's clocksource folder, from the one source (bench/names.h).
# shellcheck source=host-scripts/lib/version.sh
. host-scripts/lib/version.sh
cs_dir=
cb_fact -v cs_dir CS_SYSFS
cs_now() { cat "$cs_dir/current_clocksource"; }

files=$(python3 lab/labtable.py boot-files "$states" "$boot")
IFS=$'\t' read -r progress facts dmesg <<<"$files"
echo "$(date -u +%s) boot $boot for $states" >>"$out/$progress"
mapfile -t plan < <(python3 lab/labtable.py plan "$states")
[ "${#plan[@]}" -gt 0 ] || { say "no plan for states $states"; exit 1; }
{
	echo "kernel $(uname -r)"
	echo "cmdline $(cat /proc/cmdline)"
	echo "cpus $(nproc)"
	echo "clocksource $(cs_now)"
	echo "available $(cat "$cs_dir/available_clocksource")"
	echo "flags $(grep -o -w -e svm -e npt /proc/cpuinfo | sort -u | paste -sd' ' -)"
	# What decides whether the kernel's watchdog watches the TSC
	# (docs/watchdog.md): the release and version, the TSC's CPU flags,
	# the online NUMA nodes, the clocksource module's parameters, the
	# kernel's CONFIG_CLOCKSOURCE_WATCHDOG_MAX_SKEW_US.
	echo "version $(uname -v)"
	echo "vendor $(sed -n 's/^vendor_id[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
	echo "tsc_flags $(grep -m1 '^flags' /proc/cpuinfo | grep -o -w -e constant_tsc -e nonstop_tsc -e tsc_adjust -e tsc_reliable | sort -u | paste -sd' ' -)"
	echo "nodes $(cat /sys/devices/system/node/online 2>/dev/null)"
	echo "cs_params $(find /sys/module/clocksource/parameters -mindepth 1 -maxdepth 1 -printf "%f\n" 2>/dev/null | sort | paste -sd' ' -)"
	# CPU 0's tick device and its mode (0 periodic, 1 one-shot): lab/run-lab
	# boots L1 with a periodic tick, against a timer interrupt stranded in
	# the emulated local APIC (lab/README.md, "Why L1 froze").
	echo "tick $(awk '/^Tick Device: mode:/ { m = $NF } /^Per CPU device: 0$/ { c = 1 }
		c && /^Clock Event Device:/ { print $NF, (m == 0 ? "periodic" : "one-shot"); exit }' /proc/timer_list)"
	echo "max_skew_us $(sed -n 's/^CONFIG_CLOCKSOURCE_WATCHDOG_MAX_SKEW_US=//p' "/boot/config-$(uname -r)" 2>/dev/null)"
} >"$out/$facts" 2>&1
# The guard the lab's states rely on: a one-shot tick lets a timer
# interrupt strand L1 (lab/README.md, "Why L1 froze").
tick=$(sed -n 's/^tick //p' "$out/$facts")
case $tick in
*" periodic") ;;
*) say "L1's tick is ${tick:-unknown}, not periodic: lab/run-lab boots L1 with nohz=off highres=off, against a timer interrupt stranded in the emulated local APIC (lab/README.md)"
	exit 1 ;;
esac
# L1's kernel log as its records (/dev/kmsg: one record a line, its text
# escaped by the kernel), never dmesg's text: a CR or U+2028 in a record
# would start a line of its own there (lab/assert.py splits on LF alone).
kmsg_capture() { PYTHONPATH="$top/contract" python3 -m cbcontract.klog; }
kmsg_capture >"$out/$dmesg"

# KVM only where a state of this boot runs the harness (a state of L1
# alone may run on a CPU model without SVM).
need_kvm=0
for line in "${plan[@]}"; do
	h=$(python3 lab/labtable.py watchdog "${line%%$'\t'*}" | cut -f3)
	[ "$h" = 0 ] || need_kvm=1
done
[ "$need_kvm" = 0 ] || modprobe kvm_amd || { say "modprobe kvm_amd failed: the emulated CPU has no SVM? (cpuinfo flags: $(grep -m1 -o -w -e svm -e npt /proc/cpuinfo | paste -sd, -))"; exit 1; }
[ "$need_kvm" = 0 ] || [ -e /dev/kvm ] || { say "no /dev/kvm after modprobe kvm_amd (no SVM in the emulated CPU?)"; exit 1; }
kernel=$(find /boot -maxdepth 1 -name "vmlinuz-$(uname -r)" | head -n1)
[ -n "$kernel" ] || { say "no /boot/vmlinuz-$(uname -r) for the inner guest"; exit 1; }

# The inner guest (L2): small and quick; what is asserted is the mechanism,
# so the engine runs the monotonic clock only, briefly, on L1 (the host
# bench) and in the guest alike (--clocks, --methods, --duration, --workloads
# serve both): null beside syscall gives the kernel's own clock read, and
# each workload runs for --duration (0.2 s, not the 0.05 s the cost cells
# need: state 2 compares tcp-stream's rate with state 1's, and a longer run
# steadies it).  --tsc-rate-seconds: the host bench's TSC-rate check against
# L1's RTC (L1 only; 5 s, its minimum, per state).  --rounds=1: one round,
# kept flat in the state's run folder (what lab/assert.py reads).
# A guest run takes 36-40 s here (boot included); 120 s ends a stalled boot
# soon enough to try again within L1's own limit.
compare_opts=(--kernel="$kernel" --accel=kvm --machine=q35 --mem=256 --timeout=120
	--clocks=monotonic --methods="vdso,syscall,null" --duration=0.2 --workloads=all --tsc-rate-seconds=5 --rounds=1)

# keep_guest_work DIR: a failed guest run leaves its console and QEMU log in
# L1's scratch space (the launcher's work folder); copies them to DIR, where
# the lab's diagnosis shows them, and clears the scratch for the next try.
keep_guest_work() {
	local w
	for w in "${TMPDIR:-/tmp}"/clockbench-guest.*; do
		[ -d "$w" ] || continue
		mkdir -p "$1/${w##*/}"
		cp "$w"/*.log "$1/${w##*/}/" 2>/dev/null || true
		rm -rf "$w"
	done
}

# process_table FILE: L1's process table every 20 s, into FILE (replaced
# whole), while a state runs: what was stuck, if the attempt hangs.
process_table() {
	while sleep 20; do
		ps -eo pid,ppid,stat,etime,wchan:24,args >"$1.tmp" 2>&1 && mv "$1.tmp" "$1"
	done
}

# watchdog_readout N WATCHDOG HOSTCHECK SECONDS LOAD WATCHDOG_LOAD: the clocksource
# watchdog's readout in L1, measured by the engine (--check watchdog: L1's
# HPET through /dev/hpet's mmap) on CPU 0 for SECONDS, with LOAD on L1's
# other CPUs (memory: the engine's memory-bandwidth loop; timer: a second
# readout on CPU 1, an emulated timer read in a loop, its document
# WATCHDOG_LOAD; none),
# against the running kernel's
# readout limit (health's, from the kernel table); then health's
# JSON on that readout (watched or not, and its working).  Emulated:
# every figure is TCG's.
watchdog_readout() {
	local limit load=() hammer=
	# health's exit status is L1's health (1: degraded, as an emulated
	# guest is), not its report's: only the JSON counts here.
	limit=$({ host-scripts/health --format json --no-tsc-check --trace-seconds 0 --watchdog-seconds 0 || true; } |
		python3 -c 'import json,sys; print(int(json.load(sys.stdin)["watchdog"]["limits"]["readout_limit_ns"]))' 2>/dev/null) || limit=
	[ -n "$limit" ] || { say "state $1: no readout limit from health; the engine's default"; limit=125000; }
	case $5 in
	memory) load=(--load) ;;
	timer)
		if [ "$(nproc)" -ge 2 ]; then
			# The same command on CPU 1, 3 s later: each runs its null cell,
			# then its readout, so the readouts overlap, and CPU 0's opens
			# /dev/hpet first (it takes one opener; CPU 1's reads the PM timer).
			{ sleep 3; exec bench/clockbench --check watchdog -c monotonic -m null -t 1 --cpus 1 --duration "$4" \
				--json "$out/$6" >/dev/null 2>&1 </dev/null; } &
			hammer=$!
		else
			say "state $1: one CPU: no timer load on another"
		fi
		;;
	esac
	say "state $1: the watchdog's readout for $4 s (limit $limit ns, load $5)"
	bench/clockbench --check watchdog -c monotonic -m null -t 1 --cpus 0 --duration "$4" --watchdog-limit "$limit" \
		"${load[@]}" --json "$out/$2" >/dev/null 2>&1 </dev/null || say "state $1: clockbench --check watchdog exit $?"
	[ -z "$hammer" ] || wait "$hammer" || say "state $1: the timer load's readout exit $?"
	host-scripts/health --format json --no-tsc-check --trace-seconds 0 --readout "$out/$2" >"$out/$3" 2>&1 </dev/null || true
}

# run_state N CLOCKSOURCE VCPUS PIN CPU APPEND ATTEMPTS: one compare run
# (CLOCKSOURCE default: without --clocksources, as a plain make bench),
# ATTEMPTS times at most (the table says how many): an emulator inside an
# emulator can fail for reasons of its own (a slow or stalled inner boot).
# Each failed attempt is kept under its own names.  Returns 1 when every
# attempt failed.
run_state() {
	local n=$1 cs=$2 attempts=$7 try rc run log after work ps pspid k wd hc dm wl wsec wload harness offered first
	local opts=(--vcpus="$3" --pin="$4") limit=420
	[ "$5" = - ] || opts+=(--cpu="$5")
	[ "$6" = - ] || opts+=(--append="$6")
	[ "$cs" != current ] || cs=$(cs_now)
	if [ "$cs" = default ]; then
		# A plain make bench: no --clocksources, so compare measures every
		# clocksource L1 offers; the attempt's limit is per clocksource.
		offered=$(cat "$cs_dir/available_clocksource")
		read -r -a k <<<"$offered"
		limit=$((limit * ${#k[@]}))
		cs="compare's default (L1 offers: ${offered% })"
	else
		opts+=(--clocksources="$cs")
	fi
	files=$(python3 lab/labtable.py files "$n") || return 1
	IFS=$'\t' read -r run log after work ps wd hc dm wl <<<"$files"
	files=$(python3 lab/labtable.py watchdog "$n") || return 1
	IFS=$'\t' read -r wsec wload harness <<<"$files"
	# Attempts an earlier L1 made (one that froze) count: this L1 goes on
	# from the next.
	first=$(python3 lab/labtable.py started "$out/$progress" "$n") || return 1
	first=$((first + 1))
	[ "$first" -le "$attempts" ] || { say "state $n: no attempt left ($attempts made)"; return 1; }
	for try in $(seq "$first" "$attempts"); do
		say "state $n: host clocksource $cs; ${opts[*]} (attempt $try of $attempts)"
		echo "$(date -u +%s) start state $n" >>"$out/$progress"
		rc=0
		[ "$wsec" = 0 ] || watchdog_readout "$n" "$wd" "$hc" "$wsec" "$wload" "$wl"
		process_table "$out/$ps" &
		pspid=$!
		# A limit per attempt: one stuck step must not use up L1's own.
		if [ "$harness" = 1 ]; then
			timeout -k 30 "$limit" host-scripts/bench "${compare_opts[@]}" "${opts[@]}" \
				--report-out="$out/$run.report" "$out" "$run" </dev/null >"$out/$log" 2>&1 || rc=$?
		else
			echo "no harness run: the state is L1's alone" >"$out/$log"
		fi
		kmsg_capture >"$out/$dm" 2>&1 || true
		kill "$pspid" 2>/dev/null || true
		wait "$pspid" 2>/dev/null || true
		rm -f "$out/$ps.tmp"
		cs_now >"$out/$after"
		if [ "$rc" -eq 0 ]; then
			rm -f "$out/$ps"
			echo "$(date -u +%s) done state $n" >>"$out/$progress"
			return 0
		fi
		echo "$(date -u +%s) failed state $n (exit $rc, attempt $try)" >>"$out/$progress"
		tail -n 5 "$out/$log" >/dev/console
		keep_guest_work "$out/$work"
		[ "$try" -lt "$attempts" ] || return 1
		python3 lab/labtable.py keep "$out" "$n" "$try" || return 1
	done
}

failed=0
for line in "${plan[@]}"; do
	IFS=$'\t' read -r n cs vcpus pin cpu append attempts <<<"$line"
	run_state "$n" "$cs" "$vcpus" "$pin" "$cpu" "$append" "$attempts" || failed=1
done
exit "$failed"
