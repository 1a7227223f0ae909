#!/usr/bin/env bash
# lab-args.t: `make lab`'s input errors, found before anything boots; and
# its assertions against a lab folder that lacks results (they must fail).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

LAB_STATES=5 lab/run-lab.sh "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q 'LAB_STATES=5' "$tmp/err" && [ ! -e "$tmp/r" ]; echo $?)" "an unknown state is a usage error: $(cat "$tmp/err")"
LAB_TIMEOUT=5 lab/run-lab.sh "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q 'LAB_TIMEOUT=5' "$tmp/err"; echo $?)" "a time limit under 60 s is a usage error"
lab/run-lab.sh "$tmp/r" 2>/dev/null
ok "$([ $? -eq 2 ]; echo $?)" "a missing run id is a usage error"
KERNEL=/nonexistent/vmlinuz lab/run-lab.sh "$tmp/r" x 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -qE 'no readable kernel|not found' "$tmp/err"; echo $?)" "a missing kernel: exit 1, says how to fix it: $(head -n1 "$tmp/err")"

mkdir -p "$tmp/empty"
python3 lab/assert.py "$tmp/empty" 1,2,3,4 >"$tmp/out"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q '^not ok 1 - state 1' "$tmp/out" && tail -n1 "$tmp/out" | grep -qE '^[0-9]+ passed, [1-9][0-9]* failed$'; echo $?)" \
	"the assertions fail on a lab folder with no results"

# A recorded state 3 (the lab of 2026-11-29), then the same as if its first
# attempt had failed, as if L1 had fallen back to acpi_pm, and as if the
# failed attempt had left L1 on another clocksource.
fx=tests/harness/fixtures/lab-state3
cp -r "$fx" "$tmp/s3"
python3 lab/assert.py "$tmp/s3" 3 >"$tmp/out"
ok "$([ $? -eq 0 ] && grep -q '^ok .* state 3: L1 back on its own clocksource (hpet)' "$tmp/out"; echo $?)" "a recorded state 3 passes"
printf 'clockbench: [hpet] the guest run left no result\n' >"$tmp/s3/state-3.attempt-1.log"
echo hpet >"$tmp/s3/state-3.attempt-1.clocksource-after"
python3 lab/assert.py "$tmp/s3" 3 >"$tmp/out"
ok "$([ $? -eq 0 ] && grep -q '^# state 3: the first attempt failed' "$tmp/out" && grep -q '^#   clockbench: \[hpet\] the guest run left no result' "$tmp/out" && grep -q '^ok .* after the failed first attempt L1 was back on hpet' "$tmp/out"; echo $?)" \
	"a retried state says so, with the failed attempt's log, in TAP comments"
echo tsc >"$tmp/s3/state-3.attempt-1.clocksource-after"
python3 lab/assert.py "$tmp/s3" 3 >"$tmp/out"
ok "$([ $? -eq 1 ] && grep -q '^not ok .* after the failed first attempt' "$tmp/out"; echo $?)" "a failed attempt that left L1's clocksource changed fails the lab"
rm "$tmp"/s3/state-3.attempt-1.*
mv "$tmp/s3/state-3/guest-hpet-2vcpu.json" "$tmp/s3/state-3/guest-acpi_pm-2vcpu.json"
sed -i 's/^clocksource hpet$/clocksource acpi_pm/' "$tmp/s3/l1-facts-3.txt"
echo acpi_pm >"$tmp/s3/state-3.clocksource-after"
python3 lab/assert.py "$tmp/s3" 3 >"$tmp/out"
ok "$([ $? -eq 0 ] && grep -q '(acpi_pm) after the run' "$tmp/out"; echo $?)" "state 3 takes whichever clocksource the unstable L1 fell back to"
rm "$tmp/s3/state-3/guest-acpi_pm-2vcpu.json"
python3 lab/assert.py "$tmp/s3" 3 >"$tmp/out"
ok "$([ $? -eq 1 ] && grep -q '^#   state-3.log: ' "$tmp/out"; echo $?)" "a state without a result is followed by the end of its harness log"

# LAB_STATES=3 alone boots only the unstable L1 (a stand-in QEMU that
# reports success; the assertions then fail for want of results).
kernel=$(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort -V | tail -n1)
if [ "$(id -u)" -ne 0 ] || [ -z "$kernel" ] || [ ! -d "/lib/modules/${kernel##*/vmlinuz-}" ] || [ ! -f build/guest/initramfs.cpio ]; then
	skip "LAB_STATES=3 alone: needs root, a /boot kernel with modules and make guest-initramfs"
else
	mkdir -p "$tmp/bin"
	cat >"$tmp/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/sh
for a; do case $a in file:*) echo 'LAB-L1-DONE rc=0' >"${a#file:}" ;; esac; done
QEMU
	chmod +x "$tmp/bin/qemu-system-x86_64"
	PATH=$tmp/bin:$PATH LAB_STATES=3 lab/run-lab.sh "$tmp/r3" x >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" -eq 1 ] && grep -q "L1 'unstable'" "$tmp/err" && ! grep -q "L1 'single'" "$tmp/err"; echo $?)" \
		"LAB_STATES=3 boots the unstable L1 alone (exit $rc)"
fi
done_testing
