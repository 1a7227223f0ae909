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
pids=()
cleanup() {
	local p
	for p in "${pids[@]+"${pids[@]}"}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
export TMPDIR=$tmp
[ -x bench/clockbench ] || skip_all "bench/clockbench not built" 64

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
# Good settings, fast ones; each case overrides one.
# shellcheck disable=SC2054 # a comma inside one word, on purpose
base=(KERNEL="$tmp/fake-image" INITRAMFS="$tmp/fake-image" QEMU=true ACCEL=tcg CLOCKSOURCES=tsc,acpi_pm
	DURATION=0.02 THREADS=1 CLOCKS=monotonic METHODS=vdso WORKLOADS=none TSC_RATE_SECONDS=0 ROUNDS=1
	REPORT_OUT="$tmp/report")

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
n=0
refused() {
	local what=$1 value=$2 rc lines why
	shift 2
	n=$((n + 1))
	reset
	env "${base[@]}" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	ok "$([ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -qF -- "$value" "$tmp/err"; echo $?)" \
		"$what: exit $rc (want 2), $lines stderr line(s) naming '$value': $(head -c 200 "$tmp/err" | head -n1)"
	[ "$lines" -le 1 ] || diag "$(head -n4 "$tmp/err")"
	why=$(untouched)
	ok "$([ -z "$why" ]; echo $?)" "$what: nothing made, nothing switched${why:+:$why}"
}
compare=(host-scripts/compare "$tmp/results" run1)
threads=$(($(nproc) + 1))
refused "CLOCKS=monotnic" monotnic CLOCKS=monotnic "${compare[@]}"
# Without KERNEL, where /boot lacks the running kernel's image, compare
# names a stand-in: said only once the settings have passed.
refused "CLOCKS=monotnic, no KERNEL given" monotnic env -u KERNEL CLOCKS=monotnic "${compare[@]}"
refused "DURATION=1x" 1x DURATION=1x "${compare[@]}"
refused "DURATION=2h, beyond 3600 s once converted" "3600 s" DURATION=2h "${compare[@]}"
refused "TSC_RATE_SECONDS=1x" 'TSC_RATE_SECONDS=1x' TSC_RATE_SECONDS=1x "${compare[@]}"
refused "TSC_RATE_SECONDS=4500ms, under the check's 5 s" 'TSC_RATE_SECONDS=4500ms' TSC_RATE_SECONDS=4500ms "${compare[@]}"
refused "TIMEOUT=1x" 'TIMEOUT=1x' TIMEOUT=1x "${compare[@]}"
# The guest's engine words in APPEND override THREADS and the others: they
# are judged too, on the guest's VCPUS even beyond this process's CPUs.
big=$(($(nproc) + 2))
refused "APPEND=clockbench.threads=0" "clockbench.threads=0" APPEND=clockbench.threads=0 "${compare[@]}"
refused "VCPUS=$big, APPEND=clockbench.threads=$((big + 1))" "'$((big + 1))'" VCPUS=$big \
	APPEND=clockbench.threads=$((big + 1)) "${compare[@]}"
refused "THREADS=$threads, beyond the $(nproc) CPUs allowed" "'$threads'" THREADS="$threads" "${compare[@]}"
refused "WORKLOADS=bogus" bogus WORKLOADS=bogus "${compare[@]}"
refused "TSC_RATE_SECONDS=99999" 'TSC_RATE_SECONDS=99999' TSC_RATE_SECONDS=99999 "${compare[@]}"
refused "KERNEL=/boot/vmlinuz-6.99" /boot/vmlinuz-6.99 KERNEL=/boot/vmlinuz-6.99 "${compare[@]}"
refused "INITRAMFS missing" "$tmp/none.cpio" INITRAMFS="$tmp/none.cpio" "${compare[@]}"
refused "QEMU=/nonexistent" /nonexistent QEMU=/nonexistent "${compare[@]}"
refused "VCPUS=0" VCPUS=0 VCPUS=0 "${compare[@]}"
refused "ACCEL=kvm without the KVM device" "ACCEL=kvm" ACCEL=kvm KVM_DEV="$tmp/no-kvm" "${compare[@]}"
refused "GUEST=yes" GUEST=yes GUEST=yes "${compare[@]}"
refused "ROUNDS=0" ROUNDS=0 ROUNDS=0 "${compare[@]}"
refused "--rounds 2x" ROUNDS=2x host-scripts/compare --rounds 2x "$tmp/results" run1
refused "a results folder that cannot be made (under a file)" "$tmp/afile" host-scripts/compare "$tmp/afile/results" run1
if [ "$(id -u)" -ne 0 ]; then
	# Made read-only after refused's reset (which makes the folder anew).
	refused "a read-only results folder" "$tmp/results" \
		bash -c 'chmod 555 "$1" && shift && exec "$@"' - "$tmp/results" "${compare[@]}"
	chmod 755 "$tmp/results"
else
	skip "a read-only results folder: root writes anyway"
	skip "a read-only results folder: root writes anyway"
fi
refused "REPORT_OUT that cannot be made" "$tmp/afile" REPORT_OUT="$tmp/afile/report" "${compare[@]}"

# Alone: bench-host judges TSC_RATE_SECONDS before its cost run (the
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
refused "bench-host alone, TSC_RATE_SECONDS=99999" 'TSC_RATE_SECONDS=99999' TSC_RATE_SECONDS=99999 CLOCKBENCH="$tmp/rec-engine" \
	host-scripts/bench-host "$tmp/results" run1
measured=$(grep -vc -- '--dry-run' "$tmp/argv.log")
ok "$([ "$measured" -eq 0 ]; echo $?)" "bench-host alone: no measurement before the refusal ($measured engine runs other than --dry-run)"
: >"$tmp/qemu.log"
refused "bench-guest alone, CLOCKS=monotnic" monotnic CLOCKS=monotnic QEMU="$tmp/rec-qemu" \
	host-scripts/bench-guest --results "$tmp/results" --run-id run1
refused "bench-guest alone, results under a file" "$tmp/afile" QEMU="$tmp/rec-qemu" \
	host-scripts/bench-guest --results "$tmp/afile/results" --run-id run1
ok "$([ ! -s "$tmp/qemu.log" ]; echo $?)" "bench-guest alone: QEMU never started for a bad setting"

# The checks alone pass good settings, silently, creating nothing.
reset
env "${base[@]}" host-scripts/bench-host --check-only >"$tmp/out" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && [ -z "$(untouched)" ]; echo $?)" "bench-host --check-only, good settings: exit $rc, no output, nothing made"
env "${base[@]}" host-scripts/bench-guest --check-only --results "$tmp/results" --run-id run1 >"$tmp/out" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/out" ] && [ -z "$(untouched)" ]; echo $?)" "bench-guest --check-only, good settings: exit $rc, no output, nothing made$(head -c 200 "$tmp/out")"
# Durations with units pass both checks (the engine reads them, the
# launcher's own limits too), and so do more vCPUs than this process may
# use, their lists judged on the guest's CPUs.
units=(DURATION=500ms TSC_RATE_SECONDS=1m TIMEOUT=5m PROBE_TIMEOUT=30s)
reset
env "${base[@]}" "${units[@]}" host-scripts/bench-host --check-only >"$tmp/out" 2>&1
rc1=$?
env "${base[@]}" "${units[@]}" VCPUS=$big THREADS=1 APPEND="clockbench.threads=$big clockbench.duration=200ms" \
	host-scripts/bench-guest --check-only --results "$tmp/results" --run-id run1 >>"$tmp/out" 2>&1
rc2=$?
ok "$([ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ ! -s "$tmp/out" ] && [ -z "$(untouched)" ]; echo $?)" \
	"${units[*]}, VCPUS=$big with APPEND's threads=$big: both checks pass (exits $rc1 $rc2), silent$(head -c 200 "$tmp/out")"
# The preflight passes DURATION=500ms, and the run measures 0.5 s cells.
reset
env "${base[@]}" GUEST=0 DURATION=500ms host-scripts/compare "$tmp/results" units >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 0 ] && python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["context"]["duration_s"] != 0.5)' \
	"$tmp/results/units/host-tsc.json"; echo $?)" \
	"compare DURATION=500ms GUEST=0: exit $rc, host-tsc.json's context.duration_s 0.5$([ "$rc" -eq 0 ] || echo ": $(tail -n1 "$tmp/err" | head -c 200)")"

# Two compares started together (both held at the clocksource lock until
# each is refused or waiting): one refused at once with nothing made, the
# other whole.  A slow stand-in engine keeps each step long.
reset
cat >"$tmp/slow-engine" <<EOF2
#!/bin/sh
case "\$*" in *--dry-run*) ;; *) sleep 1 ;; esac
exec "$PWD/bench/clockbench" "\$@"
EOF2
chmod +x "$tmp/slow-engine"
mkdir -p "$CB_STATE_DIR"
flock -o "$CB_STATE_DIR/lock" sleep 60 &
holder=$!
pids+=("$holder")
sleeper=
for _ in $(seq 100); do
	sleeper=$(ps --ppid "$holder" -o pid= 2>/dev/null | tr -d ' ')
	[ -n "$sleeper" ] && break
	sleep 0.05
done
pids+=("$sleeper")
started=()
for r in a b; do
	env "${base[@]}" GUEST=0 CLOCKBENCH="$tmp/slow-engine" REPORT_OUT="$tmp/report-$r" \
		host-scripts/compare "$tmp/results" "$r" >"$tmp/out-$r" 2>"$tmp/err-$r" &
	started+=($!)
	pids+=($!)
done
for _ in $(seq 200); do
	waiting=$(pgrep -c -P "${started[0]},${started[1]}" -f '^flock -w')
	[ "$waiting" -ge 2 ] || ! kill -0 "${started[0]}" 2>/dev/null || ! kill -0 "${started[1]}" 2>/dev/null && break
	sleep 0.05
done
kill "$holder" 2>/dev/null
wait "$holder" 2>/dev/null
[ -z "$sleeper" ] || kill "$sleeper" 2>/dev/null
rcs=()
for p in "${started[@]}"; do
	wait "$p"
	rcs+=($?)
done
pids=()
won='' lost=''
for i in 0 1; do
	r=$([ "$i" = 0 ] && echo a || echo b)
	if [ "${rcs[$i]}" -eq 0 ]; then won=$r; else lost=$r; fi
done
ok "$([ -n "$won" ] && [ -n "$lost" ] && [ "$(cat "$cs_file")" = hpet ] && [ -s "$tmp/results/$won/host-tsc.json" ] &&
	[ -s "$tmp/results/$won/host-acpi_pm.json" ] && [ -s "$tmp/results/$won/summary.json" ]; echo $?)" \
	"two compares together: exits ${rcs[*]}, one whole (${won:-none}), hpet back"
ok "$([ -n "$lost" ] && [ "${rcs[$([ "$lost" = a ] && echo 0 || echo 1)]}" -eq 1 ] && [ ! -e "$tmp/results/$lost" ] &&
	[ "$(wc -l <"$tmp/err-$lost")" -eq 1 ] && grep -q 'another clockbench compare run (pid [0-9]*) is in progress' "$tmp/err-$lost"; echo $?)" \
	"the other refused at once, no folder: run '${lost:-none}': $(head -c 200 "$tmp/err-${lost:-a}" | head -n1)"
[ -z "$lost" ] || [ "$(wc -l <"$tmp/err-$lost")" -le 1 ] || diag "$(head -n6 "$tmp/err-$lost")"

# The real clocksource, as root with DESTRUCTIVE=1 only: the kernel's count
# of switches is the same after each bad setting.
real=(CLOCKS=monotnic DURATION=1x KERNEL=/boot/vmlinuz-6.99 TSC_RATE_SECONDS=99999)
if [ "$(id -u)" -ne 0 ] || [ "${DESTRUCTIVE:-0}" != 1 ]; then
	for s in "${real[@]}"; do skip "$s on the real clocksource: needs root and DESTRUCTIVE=1"; done
elif ! dmesg >/dev/null 2>&1; then
	for s in "${real[@]}"; do skip "$s on the real clocksource: dmesg cannot be read"; done
else
	all=$(tr ' ' '\n' </sys/devices/system/clocksource/clocksource0/available_clocksource | sed '/^$/d' | paste -sd, -)
	for s in "${real[@]}"; do
		before=$(dmesg | grep -c 'clocksource: Switched to clocksource')
		cs_before=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
		env -u CB_CS_DIR -u CB_STATE_DIR -u CB_KVM_DEV "${base[@]}" CLOCKSOURCES="$all" "$s" \
			host-scripts/compare "$tmp/results" real >/dev/null 2>"$tmp/err"
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
