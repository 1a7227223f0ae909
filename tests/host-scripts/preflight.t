#!/usr/bin/env bash
# tier: slow
# serial: host
# test-timeout: 240
# preflight.t: every setting of compare (and of bench-host and bench-guest
# run alone) is checked once, before a folder is made or a clocksource
# switched: a bad one is one line naming it, exit 2, nothing created,
# nothing switched (a fake clocksource folder whose current_clocksource
# keeps its year-2000 mtime unless written).  Two compares started together:
# one is refused up front, the other is whole.  As root with DESTRUCTIVE=1,
# the same on the real clocksource, counting the kernel's "Switched to
# clocksource" lines.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
pids=() tg_pid=''
cleanup() {
	local p
	[ -z "$tg_pid" ] || kill -KILL "$tg_pid" 2>/dev/null
	[ ! -s "$tmp/tg/pids" ] || mapfile -t -O "${#pids[@]}" pids <"$tmp/tg/pids"
	for p in "${pids[@]+"${pids[@]}"}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
export TMPDIR=$tmp
[ -x bench/clockbench ] || skip_all "bench/clockbench not built" 67

export CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm
mkdir -p "$CB_CS_DIR" "$tmp/results"
echo "hpet tsc acpi_pm" >"$CB_CS_DIR/available_clocksource"
echo hpet >"$CB_CS_DIR/current_clocksource"
: >"$CB_KVM_DEV"
echo not-a-kernel >"$tmp/fake-image"
: >"$tmp/afile"
cs_file=$CB_CS_DIR/current_clocksource
y2k=946684800
touch -d @"$y2k" "$cs_file"
# Good settings, fast ones, as options; each case gives one in place of
# its good one.  The host's (bench-host's own), the guest launcher's
# others, and compare's own.
host=(--duration=0.02 --threads=1 --clocks=monotonic --methods=vdso --workloads=none)
guest_only=(--kernel="$tmp/fake-image" --initramfs="$tmp/fake-image" --qemu=true --accel=tcg)
cmp_only=("--clocksources=tsc,acpi_pm" --tsc-rate-seconds=0 --rounds=1 --report-out="$tmp/report")
# shellcheck disable=SC2034 # the lists with reads by name
full=("${host[@]}" "${guest_only[@]}" "${cmp_only[@]}") nog=(--no-guest "${host[@]}" "${cmp_only[@]}")
# shellcheck disable=SC2034
guest=("${host[@]}" "${guest_only[@]}") bh=("${host[@]}" --tsc-rate-seconds=0)

# with CMD LIST [-u --NAME]... [--NAME=VALUE]... [ARG]...: CMD with the
# good settings of the array LIST, each --NAME=VALUE given in place of the
# good one of its name (or added), each -u --NAME's left out; then ARGs.
with() {
	local cmd=$1 o skip=() given=() keep=()
	local -n good=$2
	shift 2
	while [ "$#" -gt 0 ]; do
		case $1 in
		-u) skip+=("$2"); shift 2 ;;
		--*=*) given+=("$1"); skip+=("${1%%=*}"); shift ;;
		*) break ;;
		esac
	done
	for o in "${good[@]}"; do
		[[ " ${skip[*]} " == *" ${o%%=*} "* ]] || keep+=("$o")
	done
	"$cmd" "${keep[@]}" "${given[@]}" "$@"
}
# cmp [OPTION]...: compare with the good settings and OPTIONs into run1.
cmp() { with host-scripts/bench full "$@" "$tmp/results" run1; }

# Two compares started together (both held at the clocksource lock until
# each is refused or waiting), in a world of their own ($tmp/tg: its
# clocksource and state folders, results and reports), begun here and
# judged below: their steps are long (a slow stand-in engine), asleep.
# The exits land in $tmp/tg/rcs; every process begun in $tmp/tg/pids.
together() {
	local holder sleeper started=() r p rcs=()
	export CB_CS_DIR=$tmp/tg/cs CB_STATE_DIR=$tmp/tg/state CB_KVM_DEV=$tmp/tg/kvm
	mkdir -p "$CB_CS_DIR" "$CB_STATE_DIR" "$tmp/tg/results"
	cp "$tmp/cs/available_clocksource" "$CB_CS_DIR/"
	echo hpet >"$CB_CS_DIR/current_clocksource"
	: >"$CB_KVM_DEV"
	cat >"$tmp/tg/slow-engine" <<EOF2
#!/bin/sh
case "\$*" in *--dry-run*) ;; *) sleep 1 ;; esac
exec "$PWD/bench/clockbench" "\$@"
EOF2
	chmod +x "$tmp/tg/slow-engine"
	flock -o "$CB_STATE_DIR/lock" sleep 60 &
	holder=$!
	echo "$holder" >>"$tmp/tg/pids"
	sleeper=
	for _ in $(seq 100); do
		sleeper=$(ps --ppid "$holder" -o pid= 2>/dev/null | tr -d ' ')
		[ -n "$sleeper" ] && break
		sleep 0.05
	done
	echo "$sleeper" >>"$tmp/tg/pids"
	for r in a b; do
		CB_ENGINE=$tmp/tg/slow-engine with host-scripts/bench nog --report-out="$tmp/tg/report-$r" \
			"$tmp/tg/results" "$r" >"$tmp/tg/out-$r" 2>"$tmp/tg/err-$r" &
		started+=($!)
		echo "$!" >>"$tmp/tg/pids"
	done
	for _ in $(seq 200); do
		waiting=$(pgrep -c -P "${started[0]},${started[1]}" -f '^flock -w')
		[ "$waiting" -ge 2 ] || ! kill -0 "${started[0]}" 2>/dev/null || ! kill -0 "${started[1]}" 2>/dev/null && break
		sleep 0.05
	done
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null
	for p in "${started[@]}"; do
		wait "$p"
		rcs+=($?)
	done
	echo "${rcs[*]}" >"$tmp/tg/rcs"
}
mkdir "$tmp/tg"
together &
tg_pid=$!

# untouched: nothing under the results folder, no report folder, the fake
# current_clocksource never written, no state file; else what was.
untouched() {
	local why=
	[ -z "$(find "$tmp/results" -mindepth 1 | head -n1)" ] || why+=" made: $(find "$tmp/results" -mindepth 1 | head -n3 | paste -sd' ' -);"
	[ ! -e "$tmp/report" ] || why+=" report folder made;"
	[ "$(stat -c %Y "$cs_file")" = "$y2k" ] || why+=" current_clocksource written (now '$(cat "$cs_file")');"
	[ ! -e "$CB_STATE_DIR/clocksource.state" ] || why+=" state file left;"
	[ -f "$tmp/afile" ] || why+=" $tmp/afile replaced;"
	echo "$why"
}
reset() {
	rm -rf "$tmp/results" "$tmp/report"
	mkdir -p "$tmp/results"
	echo hpet >"$cs_file"
	touch -d @"$y2k" "$cs_file"
	rm -f "$CB_STATE_DIR/clocksource.state"
}

# refused WHAT VALUE CMD...: CMD (with the good settings and the one given)
# exits 2 with one stderr line naming VALUE, and nothing is made or switched.
# A test hook (CB_*) for CMD is given before refused.
n=0
refused() {
	local what=$1 value=$2 rc lines why
	shift 2
	n=$((n + 1))
	reset
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	ok "$([ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$value" "$tmp/err"; echo $?)" \
		"$what: exit $rc (want 2), $lines stderr line(s) naming '$value': $(head -c 200 "$tmp/err" | head -n1)"
	[ "$lines" -le 1 ] || diag "$(head -n4 "$tmp/err")"
	why=$(untouched)
	ok "$([ -z "$why" ]; echo $?)" "$what: nothing made, nothing switched${why:+:$why}"
}
threads=$(($(nproc) + 1))
refused "--clocks=monotnic" monotnic cmp --clocks=monotnic
# Without --kernel, where /boot lacks the running kernel's image, compare
# names a stand-in: said only once the settings have passed.
refused "--clocks=monotnic, no --kernel given" monotnic cmp -u --kernel --clocks=monotnic
refused "--duration=1x" 1x cmp --duration=1x
refused "--duration=2h, beyond 3600 s once converted" "3600 s" cmp --duration=2h
refused "--tsc-rate-seconds=1x" '--tsc-rate-seconds=1x' cmp --tsc-rate-seconds=1x
refused "--tsc-rate-seconds=4500ms, under the check's 5 s" '--tsc-rate-seconds=4500ms' cmp --tsc-rate-seconds=4500ms
refused "--timeout=1x" '--timeout=1x' cmp --timeout=1x
# The guest's engine words in --append override --threads and the others:
# they are judged too, on the guest's --vcpus even beyond this process's
# CPUs.
big=$(($(nproc) + 2))
refused "--append=clockbench.threads=0" "clockbench.threads=0" cmp --append=clockbench.threads=0
refused "--vcpus=$big, --append=clockbench.threads=$((big + 1))" "'$((big + 1))'" cmp --vcpus=$big \
	--append=clockbench.threads=$((big + 1))
refused "--threads=$threads, beyond the $(nproc) CPUs allowed" "'$threads'" cmp --threads="$threads"
refused "--workloads=bogus" bogus cmp --workloads=bogus
refused "--tsc-rate-seconds=99999" '--tsc-rate-seconds=99999' cmp --tsc-rate-seconds=99999
refused "--kernel=/boot/vmlinuz-6.99" '--kernel=/boot/vmlinuz-6.99: no such file' cmp --kernel=/boot/vmlinuz-6.99
refused "--initramfs missing" "$tmp/none.cpio" cmp --initramfs="$tmp/none.cpio"
refused "--qemu=/nonexistent" /nonexistent cmp --qemu=/nonexistent
refused "--vcpus=0" '--vcpus=0: ' cmp --vcpus=0
CB_KVM_DEV=$tmp/no-kvm refused "--accel=kvm without the KVM device" '--accel=kvm: ' cmp --accel=kvm
# GUEST=yes cannot reach compare now: make refuses it (make -n: nothing
# run), and --no-guest takes no value.
refused "make bench GUEST=yes" "GUEST=yes: expected 0 or 1" make -n bench GUEST=yes
refused "--no-guest=1" "--no-guest takes no value" cmp --no-guest=1
refused "--rounds=0" '--rounds=0: expected' cmp --rounds=0
refused "--rounds 2x" '--rounds=2x: expected' cmp --rounds 2x
refused "a results folder that cannot be made (under a file)" "$tmp/afile" with host-scripts/bench full "$tmp/afile/results" run1
if [ "$(id -u)" -ne 0 ]; then
	# Made read-only after refused's reset (which makes the folder anew).
	ro() { chmod 555 "$tmp/results" && "$@"; }
	refused "a read-only results folder" "$tmp/results" ro cmp
	chmod 755 "$tmp/results"
else
	skip "a read-only results folder: root writes anyway"
	skip "a read-only results folder: root writes anyway"
fi
refused "--report-out that cannot be made" "$tmp/afile" cmp --report-out="$tmp/afile/report"

# Alone: bench-host judges --tsc-rate-seconds before its cost run (the
# stand-in engine records every command line), bench-guest its engine's
# settings and its results folder before QEMU starts (a stand-in QEMU that
# records a start).
cat >"$tmp/rec-engine" <<EOF2
#!/bin/sh
echo "\$*" >>"$tmp/argv.log"
exec "$PWD/bench/clockbench" "\$@"
EOF2
printf '#!/bin/sh\necho started >>"%s"\nexit 1\n' "$tmp/qemu.log" >"$tmp/rec-qemu"
chmod +x "$tmp/rec-engine" "$tmp/rec-qemu"
: >"$tmp/argv.log"
CB_ENGINE=$tmp/rec-engine refused "bench-host alone, --tsc-rate-seconds=99999" '--tsc-rate-seconds=99999' \
	with host-scripts/bench-host bh --tsc-rate-seconds=99999 "$tmp/results" run1
measured=$(grep -vc -- '--dry-run' "$tmp/argv.log")
ok "$([ "$measured" -eq 0 ]; echo $?)" "bench-host alone: no measurement before the refusal ($measured engine runs other than --dry-run)"
: >"$tmp/qemu.log"
refused "bench-guest alone, --clocks=monotnic" monotnic with host-scripts/bench-guest guest --clocks=monotnic \
	--qemu="$tmp/rec-qemu" --results "$tmp/results" --run-id run1
refused "bench-guest alone, results under a file" "$tmp/afile" with host-scripts/bench-guest guest --qemu="$tmp/rec-qemu" \
	--results "$tmp/afile/results" --run-id run1
ok "$([ ! -s "$tmp/qemu.log" ]; echo $?)" "bench-guest alone: QEMU never started for a bad setting"

# The checks alone pass good settings, silently, creating nothing.
reset
with host-scripts/bench-host bh --check-only >"$tmp/out" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && [ -z "$(untouched)" ]; echo $?)" "bench-host --check-only, good settings: exit $rc, no output, nothing made"
with host-scripts/bench-guest guest --check-only --results "$tmp/results" --run-id run1 >"$tmp/out" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && [ -z "$(untouched)" ]; echo $?)" "bench-guest --check-only, good settings: exit $rc, no output, nothing made$(head -c 200 "$tmp/out")"
# Durations with units pass both checks (the engine reads them, the
# launcher's own limits too), and so do more vCPUs than this process may
# use, their lists judged on the guest's CPUs.
units=(--duration=500ms --tsc-rate-seconds=1m --timeout=5m --probe-timeout=30s)
reset
with host-scripts/bench-host bh "${units[@]:0:2}" --check-only >"$tmp/out" 2>&1
rc1=$?
with host-scripts/bench-guest guest "${units[0]}" "${units[@]:2}" --vcpus=$big --threads=1 \
	--append="clockbench.threads=$big clockbench.duration=200ms" --check-only --results "$tmp/results" --run-id run1 >>"$tmp/out" 2>&1
rc2=$?
ok "$([ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ ! -s "$tmp/out" ] && [ -z "$(untouched)" ]; echo $?)" \
	"${units[*]}, --vcpus=$big with --append's threads=$big: both checks pass (exits $rc1 $rc2), silent$(head -c 200 "$tmp/out")"
# The preflight passes --duration=500ms, and the run measures 0.5 s cells.
reset
with host-scripts/bench nog --duration=500ms --clocksources=tsc "$tmp/results" units >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 0 ] && python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["context"]["duration_s"] != 0.5)' \
	"$tmp/results/units/host-tsc.json"; echo $?)" \
	"compare --duration=500ms --no-guest: exit $rc, host-tsc.json's context.duration_s 0.5$([ "$rc" -eq 0 ] || echo ": $(tail -n1 "$tmp/err" | head -c 200)")"
# Settings in compare's environment, as they were given before they were
# options, each of them bad, none given as an option: none is read.  The
# run is judged whole, then refused for its run folder, which exists
# (exit 1, nothing measured); a setting read would be refused before, exit 2.
ROUNDS=0 CLOCKSOURCES=sundial DURATION=1x THREADS=0 CLOCKS=bogus METHODS=bogus WORKLOADS=bogus TSC_RATE_SECONDS=1x \
	QUIET=yes VERBOSE=yes GUEST=yes FORCE=yes REPORT_OUT=$tmp/afile/report \
	with host-scripts/bench nog -u --rounds -u --clocksources -u --duration -u --threads -u --clocks -u --methods \
	-u --workloads -u --tsc-rate-seconds -u --report-out "$tmp/results" units >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'exists' "$tmp/err"; echo $?)" \
	"settings in compare's environment (ROUNDS=0 CLOCKSOURCES=sundial DURATION=1x ... GUEST=yes REPORT_OUT=...) are not read: exit $rc (want 1: the run folder exists): $(head -n1 "$tmp/err" | head -c 160)"

# Two compares started together (begun above, beside the cases before):
# one refused at once with nothing made, the other whole.
wait "$tg_pid"
tg_pid=
read -r -a rcs <"$tmp/tg/rcs"
won='' lost=''
for i in 0 1; do
	r=$([ "$i" = 0 ] && echo a || echo b)
	if [ "${rcs[$i]}" -eq 0 ]; then won=$r; else lost=$r; fi
done
ok "$([ -n "$won" ] && [ -n "$lost" ] && [ "$(cat "$tmp/tg/cs/current_clocksource")" = hpet ] && [ -s "$tmp/tg/results/$won/host-tsc.json" ] &&
	[ -s "$tmp/tg/results/$won/host-acpi_pm.json" ] && [ -s "$tmp/tg/results/$won/summary.json" ]; echo $?)" \
	"two compares together: exits ${rcs[*]}, one whole (${won:-none}), hpet back"
ok "$([ -n "$lost" ] && [ "${rcs[$([ "$lost" = a ] && echo 0 || echo 1)]}" -eq 1 ] && [ ! -e "$tmp/tg/results/$lost" ] &&
	[ "$(wc -l <"$tmp/tg/err-$lost")" -eq 1 ] && grep -q 'another clockbench compare run (pid [0-9]*) is in progress' "$tmp/tg/err-$lost"; echo $?)" \
	"the other refused at once, no folder: run '${lost:-none}': $(head -c 200 "$tmp/tg/err-${lost:-a}" | head -n1)"
[ -z "$lost" ] || [ "$(wc -l <"$tmp/tg/err-$lost")" -le 1 ] || diag "$(head -n6 "$tmp/tg/err-$lost")"

# The real clocksource, as root with DESTRUCTIVE=1 only: the kernel's count
# of switches is the same after each bad setting.
real=(--clocks=monotnic --duration=1x --kernel=/boot/vmlinuz-6.99 --tsc-rate-seconds=99999)
if [ "$(id -u)" -ne 0 ] || [ "${DESTRUCTIVE:-0}" != 1 ]; then
	for s in "${real[@]}"; do skip "$s on the real clocksource: needs root and DESTRUCTIVE=1"; done
elif ! dmesg >/dev/null 2>&1; then
	for s in "${real[@]}"; do skip "$s on the real clocksource: dmesg cannot be read"; done
else
	all=$(tr ' ' '\n' </sys/devices/system/clocksource/clocksource0/available_clocksource | sed '/^$/d' | paste -sd, -)
	for s in "${real[@]}"; do
		before=$(dmesg | grep -c 'clocksource: Switched to clocksource')
		cs_before=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
		(
			unset CB_CS_DIR CB_STATE_DIR CB_KVM_DEV
			with host-scripts/bench full --clocksources="$all" "$s" "$tmp/results" real
		) >/dev/null 2>"$tmp/err"
		rc=$?
		after=$(dmesg | grep -c 'clocksource: Switched to clocksource')
		ok "$([ "$rc" -eq 2 ] && [ "$before" -eq "$after" ] &&
			[ "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" = "$cs_before" ] &&
			[ ! -e "$tmp/results/real" ]; echo $?)" \
			"$s over $all on the real clocksource: exit $rc, kernel switches $before before, $after after: $(head -n1 "$tmp/err" | head -c 160)"
		rm -rf "$tmp/results/real"
	done
fi
done_testing
