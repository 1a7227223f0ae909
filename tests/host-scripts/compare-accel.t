#!/usr/bin/env bash
# tier: slow
# test-timeout: 300
# compare-accel.t: the accelerator is decided once a run.  compare on a
# fake clocksource folder (2 clocksources, 4 rounds: a default run's 8
# guest steps) with a usable stand-in KVM device and a stand-in QEMU that
# aborts as QEMU does on a nested KVM that creates VMs and cannot run a
# guest kernel ("failed to set MSR", then an assertion): the probe boots
# once, its whole reason is said once (wrapped at 100 columns, not cut, the
# failure named), and every guest step is given TCG and the probe's answer
# instead of probing again.  The stand-in counts QEMU's starts.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
N=6
need_engine "$N"
tap_tmp
mkdir -p "$tmp/cs"
echo "tsc hpet" >"$tmp/cs/available_clocksource"
echo tsc >"$tmp/cs/current_clocksource"
: >"$tmp/kvm"
echo not-a-kernel >"$tmp/image"
why="kvm_buf_set_msrs: Assertion \`ret == cpu->kvm_msr_buf->nmsrs' failed; the whole of this line must reach the screen, however long it is, with its end: END-OF-REASON"
cat >"$tmp/qemu" <<QEMU
#!/bin/sh
accel=
prev=
for a in "\$@"; do [ "\$prev" = -accel ] && accel=\$a; prev=\$a; done
echo "\$accel" >>"$tmp/starts"
echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x0" >&2
cat "$tmp/why" >&2
exit 134
QEMU
echo "qemu-system-x86_64: $why" >"$tmp/why"
chmod +x "$tmp/qemu"
rc=0
CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm host-scripts/bench --clocksources tsc,hpet \
	--rounds 4 --duration 0.01 --threads 1 --clocks monotonic --methods vdso --workloads none \
	--tsc-rate-seconds 0 --kernel "$tmp/image" --initramfs "$tmp/image" --qemu "$tmp/qemu" \
	--report-out "$tmp/report" "$tmp/results" r1 >"$tmp/out" 2>"$tmp/err" || rc=$?
starts=$(grep -c . "$tmp/starts" 2>/dev/null)
kvm=$(grep -c '^kvm$' "$tmp/starts" 2>/dev/null)
tcg=$(grep -c '^tcg' "$tmp/starts" 2>/dev/null)
diag "QEMU started $starts times ($kvm under KVM, $tcg under TCG); compare exit $rc"
ok "$([ "$kvm" = 1 ]; echo $?)" "one KVM probe for the run's 8 guest steps (QEMU under KVM: $kvm times)"
ok "$([ "$tcg" = 8 ] && [ "$starts" = 9 ]; echo $?)" "each of the 8 steps boots once, under TCG: 9 QEMU starts in all ($starts)"
warned=$(grep -c 'warning: this KVM cannot run an ordinary guest kernel: QEMU failed to start' "$tmp/err")
ok "$([ "$warned" = 1 ]; echo $?)" "the probe's reason said once, naming a KVM that cannot run a guest kernel ($warned times)"
# The warning's lines: from its first to the one with its end.
warning=$(sed -n '/warning: this KVM cannot run/,/EMULATED/p' "$tmp/err")
joined=$(printf '%s\n' "$warning" | sed 's/^  //' | tr '\n' ' ')
ok "$([[ $joined == *"$why"* ]] && [[ $joined == *"using TCG: every figure EMULATED"* ]]; echo $?)" \
	"the whole reason reaches the screen, not cut"
ok "$(awk 'length > 100 { bad = 1 } END { exit bad }' <<<"$warning"; echo $?)" \
	"the warning wrapped at 100 columns ($(wc -l <<<"$warning") lines)"
ok "$([ "$(grep -c 'using TCG' "$tmp/err")" = 1 ] && ! grep -q 'sta\.\.\.' "$tmp/err"; echo $?)" \
	"no step says it again, none cut"
[ "$tap_failed" = 0 ] || { diag "stderr:"; sed 's/^/#   /' "$tmp/err" | head -40; }
done_testing
