#!/usr/bin/env bash
# tier: slow
# test-timeout: 300
# plan.t: compare's plan is data, one writer, read by its one rounds loop:
# plan.json (a name of the run-folder contract) says every step in the
# order it runs, and the steps that ran are those, in that order, each
# into the files it names; a run stopped in its first step keeps the whole
# plan.  The sweep is one process beside the bracket, not between it and a
# step: each step's engine descends from compare's bash (the bracket),
# never from the sweep; compare itself loops nothing.  On a fake
# clocksource folder, host only.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
N=6
need_engine "$N"
tmp=$(mktemp -d)
bg=''
cleanup() {
	[ -z "$bg" ] || kill -KILL -- "-$bg" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/cs"
echo "hpet tsc acpi_pm" >"$tmp/cs/available_clocksource"
echo hpet >"$tmp/cs/current_clocksource"
: >"$tmp/kvm"
export CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm
# The stand-in engine records, for each cost run, the clocksource it runs
# on, the --json it was given, and the commands of its ancestors.
cat >"$tmp/engine" <<EOF2
#!/bin/bash
case "\$*" in *--dry-run*|*tsc-rate*) exec "$PWD/bench/clockbench" "\$@" ;; esac
json=\$(printf '%s\n' "\$@" | sed -n '/^--json\$/{n;p}')
echo "\$(cat "\$CB_CS_DIR/current_clocksource") \${json#$tmp/results/}" >>"$tmp/steps.log"
p=\$PPID
while [ "\$p" -gt 1 ]; do
	tr '\0' ' ' <"/proc/\$p/cmdline" >>"$tmp/tree.log"
	echo >>"$tmp/tree.log"
	p=\$(sed 's/.*) //' "/proc/\$p/stat" | cut -d' ' -f2)
done
echo -- >>"$tmp/tree.log"
exec "$PWD/bench/clockbench" "\$@"
EOF2
chmod +x "$tmp/engine"
small=(--no-guest --duration 0.02 --threads 1 --clocks monotonic --methods vdso --workloads none --tsc-rate-seconds 0)
CB_ENGINE=$tmp/engine host-scripts/bench -q "${small[@]}" --clocksources tsc,acpi_pm --rounds 3 \
	--report-out "$tmp/report" "$tmp/results" r1 >/dev/null 2>"$tmp/err"
rc=$?
# plan.json's steps as "CS FILE", in their order.
planned() {
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
assert p["schema"] == "clockbench-plan/1", p["schema"]
for s in p["steps"]:
    print(s["clocksource"], sys.argv[2] + "/" + s["host"]["json"])' "$1" "$2"
}
want=$(planned "$tmp/results/r1/plan.json" r1 2>&1)
got=$(cat "$tmp/steps.log" 2>/dev/null)
ok "$([ "$rc" -eq 0 ] && [ -n "$got" ] && [ "$want" = "$got" ]; echo $?)" \
	"the steps that ran are plan.json's, in its order, each into the file it names (exit $rc): $(paste -sd'|' <<<"$got")"
ok "$([ "$(paste -sd' ' <<<"$want" | awk '{ for (i = 1; i <= NF; i += 2) printf "%s ", $i }')" = "tsc acpi_pm acpi_pm tsc tsc acpi_pm " ]; echo $?)" \
	"the plan: odd rounds tsc then acpi_pm, round 2 reversed"
kind=$(python3 -c 'import sys; sys.path.insert(0, "contract"); from cbcontract import runfolder as rf
print(rf.classify("plan.json")[0], rf.classify_path("round-1/plan.json") is not None, rf._NAMERS["plan"][0]())')
ok "$([ "$kind" = "plan True plan.json" ]; echo $?)" "plan.json is a name of the run-folder contract ($kind)"
# Each step's engine: bench-host, then compare's bash (the bracket), with
# no Python process between; the sweep is not an ancestor of a step.
bad=$(awk -v RS='--\n' 'NF && !($0 ~ /^[^\n]*bench-host[^\n]*\n[^\n]*bash [^\n]*host-scripts\/bench /) { n++ } END { print n + 0 }' "$tmp/tree.log")
py=$(grep -c 'python3 -c import sys' "$tmp/tree.log")
ok "$([ "$bad" -eq 0 ] && [ "$py" -eq 0 ] && [ "$(grep -c -- '^--$' "$tmp/tree.log")" -eq 6 ]; echo $?)" \
	"each of the 6 steps runs as bench-host, a child of compare's bracket, no sweep above it ($bad other, $py with the sweep)"
# A run stopped in its first step keeps the whole plan (written before it).
cat >"$tmp/slow-engine" <<EOF2
#!/bin/sh
case "\$*" in *--dry-run*) exit 0 ;; esac
echo started >>"$tmp/slow.log"
sleep 60
EOF2
chmod +x "$tmp/slow-engine"
CB_ENGINE=$tmp/slow-engine setsid env --default-signal=INT host-scripts/bench "${small[@]}" --clocksources tsc,acpi_pm \
	--rounds 2 --report-out "$tmp/report2" "$tmp/results" r2 >/dev/null 2>"$tmp/err2" &
bg=$!
for _ in $(seq 400); do [ -s "$tmp/slow.log" ] && break; sleep 0.05; done
kill -INT -- "-$bg"
wait "$bg"
rc=$?
bg=
n=$(planned "$tmp/results/r2/plan.json" r2 2>/dev/null | wc -l)
ok "$([ "$rc" -eq 130 ] && [ "$n" -eq 4 ] && [ "$(cat "$CB_CS_DIR/current_clocksource")" = hpet ]; echo $?)" \
	"stopped in its first step (exit $rc): plan.json still lists all $n of 4 steps, hpet back"
# A kernel on a periodic tick offers its stand-ins too (jiffies,
# refined-jiffies: the lab's L1 since 2026-12-04): a plain run plans the
# real clocksources alone, says so once, and a stand-in asked for by name
# is refused before anything is switched.
echo "hpet tsc acpi_pm refined-jiffies jiffies" >"$tmp/cs/available_clocksource"
CB_ENGINE=$PWD/bench/clockbench host-scripts/bench -q "${small[@]}" --rounds 1 \
	--report-out "$tmp/report3" "$tmp/results" r3 >/dev/null 2>"$tmp/err3"
rc=$?
got=$(planned "$tmp/results/r3/plan.json" r3 2>/dev/null | cut -d' ' -f1 | paste -sd' ')
ok "$([ "$rc" -eq 0 ] && [ "$got" = "tsc hpet acpi_pm" ] && [ "$(grep -c '^clockbench: not measured: refined-jiffies jiffies, the kernel.s stand-ins' "$tmp/err3")" = 1 ]; echo $?)" \
	"a plain run on a kernel offering jiffies and refined-jiffies plans tsc hpet acpi_pm (exit $rc, planned: $got), saying the stand-ins once"
CB_ENGINE=$PWD/bench/clockbench host-scripts/bench -q "${small[@]}" --clocksources tsc,jiffies \
	--report-out "$tmp/report4" "$tmp/results" r4 >/dev/null 2>"$tmp/err4"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ ! -e "$tmp/results/r4" ] && [ "$(cat "$CB_CS_DIR/current_clocksource")" = hpet ] &&
	grep -q "'jiffies' is one of the kernel's stand-ins" "$tmp/err4"; echo $?)" \
	"--clocksources naming jiffies: exit $rc before anything is made or switched: $(head -c 160 "$tmp/err4")"
echo "hpet tsc acpi_pm" >"$tmp/cs/available_clocksource"
# compare is an entry point: no loop and no plan in its bash.
ok "$(! grep -v '^[[:space:]]*#' host-scripts/bench | grep -Eq '^[[:space:]]*(for|while|until) |round|plan'; echo $?)" \
	"host-scripts/bench loops nothing and reads no plan ($(grep -c . host-scripts/bench) lines)"
done_testing
