#!/usr/bin/env bash
# tier: slow
# lab-args.t: `make lab`'s outer runner (lab/run-lab): input errors found
# before anything boots; with a stand-in QEMU, the L1 boots it makes from
# the table, their command line, and its exit status when a boot fails.
# The assertions themselves: lab-assert.t.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

lab/run-lab --states 5 "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q -- '--states=5: no state 5 in lab/states.cfg' "$tmp/err" && [ ! -e "$tmp/r" ]; echo $?)" "an unknown state is a usage error: $(cat "$tmp/err")"
lab/run-lab --states=1,x "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q -- '--states=1,x' "$tmp/err"; echo $?)" "a malformed state list is a usage error"
lab/run-lab --l1-timeout 5 "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q -- '--l1-timeout=5' "$tmp/err"; echo $?)" "a time limit under 60 s is a usage error"
lab/run-lab --tier fast "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q -- "--tier=fast: 'fast': expected one of all, ci" "$tmp/err" && [ ! -e "$tmp/r" ]; echo $?)" "an unknown tier is a usage error: $(cat "$tmp/err")"
lab/run-lab --tier ci --states 3 "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q -- '--states=3: no state 3 .*(in the ci tier)' "$tmp/err"; echo $?)" "a state outside the tier is a usage error: $(cat "$tmp/err")"
lab/run-lab --heartbeat-limit 2 "$tmp/r" x 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q -- '--heartbeat-limit' "$tmp/err"; echo $?)" "a heartbeat limit under 5 s is a usage error: $(cat "$tmp/err")"
lab/run-lab "$tmp/r" 2>/dev/null
ok "$([ $? -eq 2 ]; echo $?)" "a missing run id is a usage error"
lab/run-lab "$tmp/r" ../x 2>/dev/null
ok "$([ $? -eq 2 ] && [ ! -e "$tmp/r" ]; echo $?)" "a run id that is not a plain word is a usage error"
lab/run-lab --kernel /nonexistent/vmlinuz "$tmp/r" x 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -qE 'no readable kernel|not found' "$tmp/err" && [ ! -e "$tmp/r/x" ]; echo $?)" "a missing kernel: exit 1, says how to fix it: $(head -n1 "$tmp/err")"

# A stand-in QEMU: records its command line, and ends L1 as LAB_FAKE says
# (pass: its runner's success; failed: a state failed twice).
kernel=$(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort -V | tail -n1)
if [ "$(id -u)" -ne 0 ] || [ -z "$kernel" ] || [ ! -d "/lib/modules/${kernel##*/vmlinuz-}" ] || [ ! -f build/guest/initramfs.cpio ]; then
	for _ in 1 2 3 4 5 6; do skip "stand-in L1 boots: need root, a /boot kernel with modules and make guest-initramfs"; done
else
	mkdir -p "$tmp/bin"
	cat >"$tmp/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/sh
echo "$*" >>"$LAB_ARGV"
rc=0
[ "$LAB_FAKE" = failed ] && rc=1
for a; do case $a in file,id=serial0,path=*) echo "LAB-L1-DONE rc=$rc" >"${a#*path=}" ;; esac; done
QEMU
	chmod +x "$tmp/bin/qemu-system-x86_64"
	PATH=$tmp/bin:$PATH LAB_ARGV=$tmp/argv LAB_FAKE=pass lab/run-lab --states 3 "$tmp/r" s3 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/argv")" -eq 1 ] && grep -q "L1 3 (2 vCPU, tsc=unstable, states 3)" "$tmp/err" && grep -q '^not ok .* state 3' "$tmp/out"; echo $?)" \
		"--states 3 boots one L1, the table's for state 3; the assertions then fail for want of results (exit $rc)"
	argv=$(cat "$tmp/argv")
	ok "$([[ $argv == *"-accel tcg,thread=multi -cpu max -smp 2 -m 3072"* && $argv == *"tsc=unstable clockbench.top=$PWD clockbench.out=$tmp/r/s3 clockbench.states=3"* && $argv == *"-machine pc "* && $argv == *"mount_tag=hostroot,security_model=none,readonly=on"* && $argv == *"path=$tmp/r/s3,mount_tag=labout"* ]]; echo $?)" \
		"L1's command line comes from the table through the one builder: $argv"
	: >"$tmp/argv"
	PATH=$tmp/bin:$PATH LAB_ARGV=$tmp/argv LAB_FAKE=pass lab/run-lab "$tmp/r" all >"$tmp/out" 2>"$tmp/err"
	# The boots the table groups its states into (lab/labtable.py, the one
	# reader of lab/states.cfg): STATES CONSOLE a line.
	mapfile -t want < <(python3 -c 'import sys; sys.path[:0] = ["lab", "contract"]; import labtable
for b in labtable.boots(labtable.load()): print(",".join(str(s.n) for s in b.states), labtable.boot_files(b.name)["console"])')
	seen=0 shared=0
	for w in "${want[@]}"; do
		read -r states console <<<"$w"
		grep -q "clockbench.states=$states " "$tmp/argv" && [ -f "$tmp/r/all/$console" ] && seen=$((seen + 1))
		[[ $states != *,* ]] || shared=$((shared + 1))
	done
	ok "$([ "${#want[@]}" -ge 2 ] && [ "$shared" -ge 1 ] && [ "$(wc -l <"$tmp/argv")" -eq "${#want[@]}" ] && [ "$seen" -eq "${#want[@]}" ]; echo $?)" \
		"all states: one L1 boot per L1 configuration (${#want[@]}: $(printf '%s ' "${want[@]%% *}")), states sharing one share a boot, each with its console log"
	# The ci tier: the table's states with ci = yes, an L1 each (a name of its own, its heartbeat's).
	: >"$tmp/argv"
	PATH=$tmp/bin:$PATH LAB_ARGV=$tmp/argv LAB_FAKE=pass lab/run-lab --tier ci "$tmp/r" ci >"$tmp/out" 2>"$tmp/err"
	want=$(python3 -c 'import sys; sys.path[:0] = ["lab", "contract"]; import labtable
print(" ".join(str(s.n) for s in labtable.load() if s.ci))')
	got=$(grep -o 'clockbench.states=[0-9,]* clockbench.boot=[0-9r-]* clockbench.heartbeat=[^ ]*' "$tmp/argv" | tr '\n' ' ')
	exp=$(for n in $want; do printf 'clockbench.states=%s clockbench.boot=%s clockbench.heartbeat=l1-%s.heartbeat ' "$n" "$n" "$n"; done)
	ok "$([ -n "$want" ] && [ "$got" = "$exp" ] && grep -q 'limit 900s' "$tmp/err"; echo $?)" \
		"the ci tier boots one L1 per state of the table's ci = yes ($want), 900 s each: $got"
	PATH=$tmp/bin:$PATH LAB_ARGV=$tmp/argv LAB_FAKE=failed lab/run-lab --states 1 "$tmp/r" f >"$tmp/out" 2>"$tmp/err"
	rc=$?
	ok "$([ "$rc" -eq 1 ] && grep -q "L1 1 failed (lab/l1-run.sh exit 1: a state failed twice" "$tmp/err"; echo $?)" \
		"an L1 whose runner failed (a state failed twice) fails make lab (exit $rc)"
	PATH=$tmp/bin:$PATH LAB_ARGV=$tmp/argv LAB_FAKE=pass lab/run-lab --states 1 "$tmp/r" f 2>"$tmp/err" >/dev/null
	ok "$([ $? -eq 1 ] && grep -q 'exists' "$tmp/err"; echo $?)" "a lab folder is never reused"
fi

# The runner inside L1 reads the table through labtable.py's command line.
ok "$(python3 lab/labtable.py plan 3 | grep -qx $'3\tcurrent\t2\t0\t-\t-\t3'; echo $?)" "the L1 runner's plan for state 3: $(python3 lab/labtable.py plan 3 | tr '\t' ' ')"
ok "$(python3 lab/labtable.py plan 10 | grep -qx $'10\tdefault\t1\t1\t-\t-\t3'; echo $?)" "the L1 runner's plan for state 10: default, a plain compare without CLOCKSOURCES: $(python3 lab/labtable.py plan 10 2>&1 | tr '\t' ' ')"
ok "$(python3 lab/labtable.py boot-files 1,2,4 | grep -qx $'progress.log\tl1-1-2-4.facts.txt\tl1-1-2-4.dmesg.txt'; echo $?)" "an L1 boot's files come from labtable.py"
ok "$(python3 lab/labtable.py boot-files 1,2,4 1-2-4-r2 | grep -qx $'progress.log\tl1-1-2-4-r2.facts.txt\tl1-1-2-4-r2.dmesg.txt'; echo $?)" "an L1 booted in place of a frozen one has files of its own name"
python3 lab/labtable.py boot-files 1 ../1 2>/dev/null
ok "$([ $? -eq 2 ]; echo $?)" "an L1 name that is not one is refused (it names files)"
python3 lab/labtable.py boot-files 1,3 2>"$tmp/err"
ok "$([ $? -eq 2 ] && grep -q 'not one L1 boot' "$tmp/err"; echo $?)" "states of two L1 boots are refused"
ok "$(shellcheck lab/l1-run.sh >/dev/null 2>&1 || ! command -v shellcheck >/dev/null; echo $?)" "lab/l1-run.sh is shellcheck-clean"
done_testing
