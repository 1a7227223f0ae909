#!/usr/bin/env bash
# tier: slow
# test-timeout: 600
# compare.t: `make compare`'s orchestration on a fake clocksource folder
# (host only: --no-guest): every clocksource in turn, results in one new
# folder, the table and the report, the original clocksource back; its
# input errors; a step whose file does not measure its label fails; one
# SIGINT stops the whole run.  Rounds: --rounds 3 keeps round-1..3, each
# whole, the clocksources in order, reversed in round 2, the original put
# back before each switch, and no process re-running compare (`_step`);
# Python started once a step (its label check), not once a file name.
# Settings are options, as a user types them; only test hooks (CB_*) are
# in the environment.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
bg='' r2_pid='' r10_pid=''
cleanup() {
	local p
	for p in "$bg" "$r2_pid" "$r10_pid"; do [ -z "$p" ] || kill -KILL -- "-$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
# world DIR: a fake clocksource folder (hpet of hpet tsc acpi_pm), a state
# folder and a KVM device in DIR.  The two long runs below (r2, r10) each
# have one of their own, and run beside the rest of the file: most of
# their time is the TSC-rate checks' 5 s, asleep.
world() {
	mkdir -p "$1/cs"
	echo "hpet tsc acpi_pm" >"$1/cs/available_clocksource"
	echo hpet >"$1/cs/current_clocksource"
	: >"$1/kvm"
}
world "$tmp"
export CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm
cur() { cat "${1:-$CB_CS_DIR}/current_clocksource"; }
# in_world DIR CMD...: CMD in the world of DIR.
in_world() { CB_CS_DIR=$1/cs CB_STATE_DIR=$1/state CB_KVM_DEV=$1/kvm "${@:2}"; }

# The real engine, behind stand-ins.  rec-engine records each command line
# but its dry runs (the settings' check before anything is measured) in
# $REC/argv.log.  round-engine records, for each cost run, its round
# folder, the clocksource it runs on, the original the bracket saved when
# it switched (the original only if the clocksource was put back after
# the step before), and the command lines of its nearest ancestors and of
# every process of this test's folder re-running compare as `_step` (`ps`),
# in $REC/rounds.log, and where $REC/tree.log exists, in it and step.log.
cat >"$tmp/rec-engine" <<EOF2
#!/bin/sh
case "\$*" in *--dry-run*) ;; *) echo "\$*" >>"\$REC/argv.log" ;; esac
exec "$PWD/bench/clockbench" "\$@"
EOF2
cat >"$tmp/round-engine" <<EOF2
#!/bin/bash
case "\$*" in *--dry-run*) exec "$PWD/bench/clockbench" "\$@" ;; esac
echo "\$*" >>"\$REC/argv.log"
case "\$*" in *tsc-rate*) exec "$PWD/bench/clockbench" "\$@" ;; esac
out=\$(printf '%s\n' "\$@" | sed -n 's,.*/\(round-[0-9]*\)/host-.*\.json\$,\1,p' | head -n1)
echo "\${out:-flat} \$(cat "\$CB_CS_DIR/current_clocksource") \$(sed -n 's/^original=//p' "\$CB_STATE_DIR/clocksource.state")" >>"\$REC/rounds.log"
[ -e "\$REC/tree.log" ] || exec "$PWD/bench/clockbench" "\$@"
p=\$\$ n=0
while [ "\$p" -gt 1 ] && [ "\$n" -lt 5 ]; do # the engine, bench-host, (compare _step, clocksource set,) compare
	n=\$((n + 1))
	tr '\0' ' ' <"/proc/\$p/cmdline" >>"\$REC/tree.log"
	echo >>"\$REC/tree.log"
	p=\$(sed 's/.*) //' "/proc/\$p/stat" | cut -d' ' -f2)
done
ps -eo args= | grep -F -- "$tmp/results" | grep -e ' _step ' >>"\$REC/step.log"
exec "$PWD/bench/clockbench" "\$@"
EOF2
chmod +x "$tmp/rec-engine" "$tmp/round-engine"
small=(--no-guest --duration 0.02 --threads 1 --clocks monotonic --methods vdso)
if [ -x bench/clockbench ]; then
	# One round: the run folder itself holds it, the flat folder of before
	# rounds.  The cells kept few (the headline clock and read path: what
	# the screen's table divides), the workloads and the TSC-rate check
	# compare's defaults.
	world "$tmp/w2"
	REC=$tmp/w2 CB_ENGINE=$tmp/rec-engine in_world "$tmp/w2" setsid host-scripts/bench "${small[@]}" --rounds 1 \
		--report-out "$tmp/report" "$tmp/results" r2 >"$tmp/out-r2" 2>"$tmp/err-r2" &
	r2_pid=$!
	# Rounds: --rounds 3 over tsc and acpi_pm (the original hpet, so every
	# step switches), the TSC-rate check compare's default.
	world "$tmp/w10"
	: >"$tmp/w10/tree.log"
	REC=$tmp/w10 CB_ENGINE=$tmp/round-engine in_world "$tmp/w10" setsid host-scripts/bench "${small[@]}" \
		--clocksources tsc,acpi_pm --rounds 3 --report-out "$tmp/report-r10" "$tmp/results" r10 >"$tmp/out-r10" 2>"$tmp/err-r10" &
	r10_pid=$!
fi

host-scripts/bench --clocksources tsc,sundial --report-out "$tmp/report-r1" "$tmp/results" r1 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && grep -q "unknown clocksource 'sundial'" "$tmp/err" && [ ! -e "$tmp/results/r1" ]; echo $?)" \
	"an unknown clocksource is refused before anything changes (exit $rc)"
host-scripts/bench "$tmp/results" 2>/dev/null
ok "$([ $? -eq 2 ]; echo $?)" "a missing run id is a usage error"
host-scripts/bench "$tmp/results" ../x 2>/dev/null
ok "$([ $? -eq 2 ] && [ "$(cur)" = hpet ]; echo $?)" "a run id with a slash is refused"

# One SIGINT to compare's process group (a Ctrl-C) during the first step:
# that step puts the clocksource back and nothing further is switched to or
# measured.  The stand-in engine writes what it is asked for; from its
# run number \$tmp/slow-from on (a file) it first sleeps 60 s, which only
# the signal ends; its dry runs (the settings' check) pass at once and are
# not counted.
cat >"$tmp/slow-engine" <<EOF2
#!/bin/sh
case "\$*" in *--dry-run*) exit 0 ;; esac
echo started >>"$tmp/engine.log"
[ "\$(wc -l <"$tmp/engine.log")" -lt "\$(cat "$tmp/slow-from")" ] || sleep 60
while [ "\$#" -gt 1 ]; do
	case "\$1" in --json | --csv | --output) echo '{}' >"\$2" ;; esac
	shift
done
EOF2
chmod +x "$tmp/slow-engine"
echo 1 >"$tmp/slow-from"
CB_ENGINE=$tmp/slow-engine setsid env --default-signal=INT host-scripts/bench --no-guest --clocksources tsc,acpi_pm,hpet \
	--rounds 2 --report-out "$tmp/report-r3" "$tmp/results" r3 >/dev/null 2>"$tmp/err" &
bg=$!
for _ in $(seq 400); do [ -s "$tmp/engine.log" ] && break; sleep 0.05; done
kill -INT -- "-$bg"
wait "$bg"
rc=$?
bg=
ok "$([ "$rc" -eq 130 ] && [ "$(cur)" = hpet ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ] && [ "$(wc -l <"$tmp/engine.log")" -eq 1 ] &&
	[ "$(cd "$tmp/results/r3" && echo *)" = "health.json plan.json round-1" ] && [ ! -e "$tmp/results/r3/round-1/host-acpi_pm.json" ] &&
	grep -q "^clockbench: stopped at the tsc step of round 1, clocksource back to 'hpet'" "$tmp/err"; echo $?)" \
	"one SIGINT in the first step of 2 rounds: exit $rc (want 130), hpet back, no state, $(wc -l <"$tmp/engine.log") of 6 steps started, no round 2"

# The same in round 2 of 3: the stand-in's '{}' fails round 1's label
# check (the run goes on), round 2's engine is stopped, round 3 never made.
: >"$tmp/engine.log"
echo 2 >"$tmp/slow-from"
CB_ENGINE=$tmp/slow-engine setsid env --default-signal=INT host-scripts/bench --no-guest --clocksources tsc --rounds 3 \
	--tsc-rate-seconds 0 --report-out "$tmp/report-r5" "$tmp/results" r5 >/dev/null 2>"$tmp/err" &
bg=$!
for _ in $(seq 400); do [ "$(wc -l <"$tmp/engine.log")" -ge 2 ] && break; sleep 0.05; done
kill -INT -- "-$bg"
wait "$bg"
rc=$?
bg=
ok "$([ "$rc" -eq 130 ] && [ "$(cur)" = hpet ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ] && [ "$(wc -l <"$tmp/engine.log")" -eq 2 ] &&
	[ "$(cd "$tmp/results/r5" && echo *)" = "health.json plan.json round-1 round-2" ] &&
	grep -q "^clockbench: stopped at the tsc step of round 2, clocksource back to 'hpet'" "$tmp/err"; echo $?)" \
	"one SIGINT in round 2 of 3: exit $rc (want 130), hpet back, no state, $(wc -l <"$tmp/engine.log") engine runs, no round 3: $(tail -n1 "$tmp/err" | cut -c1-100)"

if [ ! -x bench/clockbench ]; then
	for _ in $(seq 24); do skip "bench/clockbench not built"; done
	done_testing
	exit
fi
# bench-host alone: no workload and no rate check unless asked; --workloads
# and --tsc-rate-seconds as given; a rate check too short is refused at once.
hsmall=(--duration=0.02 --threads=1 --clocks=monotonic --methods=vdso)
mkdir "$tmp/bh"
REC=$tmp/bh CB_ENGINE=$tmp/rec-engine host-scripts/bench-host "${hsmall[@]}" "$tmp/results" r6 >/dev/null 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/bh/argv.log")" -eq 1 ] && grep -q -- '--workloads none ' "$tmp/bh/argv.log" &&
	[ -z "$(find "$tmp/results/r6" -name 'tsc-rate-*')" ]; echo $?)" "bench-host alone: --workloads none, no rate check (exit $rc)"
: >"$tmp/bh/argv.log"
REC=$tmp/bh CB_ENGINE=$tmp/rec-engine host-scripts/bench-host "${hsmall[@]}" --workloads tcp-stream --tsc-rate-seconds 0 \
	"$tmp/results" r7 >/dev/null 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/bh/argv.log")" -eq 1 ] && grep -q -- '--workloads tcp-stream ' "$tmp/bh/argv.log" &&
	python3 -c 'import json, sys; assert [r["workload"] for r in json.load(open(sys.argv[1]))["workloads"]] == ["tcp-stream"]' \
		"$tmp/results/r7/host-hpet.json"; echo $?)" "bench-host: --workloads tcp-stream gives one tcp-stream row; --tsc-rate-seconds 0 no check (exit $rc)"
: >"$tmp/bh/argv.log"
REC=$tmp/bh CB_ENGINE=$tmp/rec-engine host-scripts/bench-host --tsc-rate-seconds=3 "$tmp/results" r8 >/dev/null 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^clockbench: --tsc-rate-seconds=3: --duration '3': .*at least 5" "$tmp/err" &&
	[ ! -s "$tmp/bh/argv.log" ] && [ ! -e "$tmp/results/r8" ]; echo $?)" "bench-host: --tsc-rate-seconds=3 refused before measuring (exit $rc): $(cat "$tmp/err")"
# A rate check that fails fails the step, in one line, the cost results kept.
cat >"$tmp/norate-engine" <<EOF2
#!/bin/sh
case "\$*" in *--dry-run*) ;; *tsc-rate*) echo "clockbench: tsc-rate: broken on purpose" >&2; exit 1 ;; esac
exec "$PWD/bench/clockbench" "\$@"
EOF2
chmod +x "$tmp/norate-engine"
CB_ENGINE=$tmp/norate-engine host-scripts/bench-host "${hsmall[@]}" --tsc-rate-seconds 5 "$tmp/results" r9 >/dev/null 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q '^clockbench: \[hpet\] TSC-rate check failed (engine exit 1); the cost results are kept in' "$tmp/err" &&
	[ -s "$tmp/results/r9/host-hpet.json" ] && [ ! -e "$tmp/results/r9/tsc-rate-hpet.json" ]; echo $?)" \
	"bench-host: a failed rate check fails it (exit $rc), said in one line, the cost files kept"

# r2 (started above): compare's defaults over every clocksource offered.
wait "$r2_pid"
rc=$?
r2_pid=
ok "$([ "$rc" -eq 0 ] && [ "$(cur "$tmp/w2/cs")" = hpet ] && [ ! -e "$tmp/w2/state/clocksource.state" ]; echo $?)" \
	"a host-only compare over tsc, hpet, acpi_pm ends with the original (hpet) back (exit $rc)"
ok "$(cd "$tmp/results/r2" && [ -s host-tsc.json ] && [ -s host-hpet.json ] && [ -s host-acpi_pm.json ] && [ -s summary.md ] && [ -s summary.json ]; echo $?)" \
	"one folder: a host result per clocksource, summary.md and summary.json"
order=$(python3 -c 'import json,sys; print(" ".join(r["clocksource"] for r in json.load(open(sys.argv[1]))["rows"]))' "$tmp/results/r2/summary.json")
# The screen's host table (verdict.py): tsc's row first, the baseline.
first=$(sed -n '/^host clocksource  *1 thread/,/^$/p' "$tmp/out-r2" | sed -n 3p)
ok "$([ "$order" = "tsc acpi_pm hpet" ] && [[ $first =~ ^tsc\ +[0-9.]+\ x1\.00 ]] && [ -s "$tmp/results/r2/summary.md" ]; echo $?)" \
	"tsc is first and the baseline of the ratios ($order; on the screen: ${first:-no host table})"
report=$(sed -n 's/^report: //p' "$tmp/out-r2")
ok "$([ "$report" = "$tmp/report/report.md" ] && [ -s "$report" ]; echo $?)" "it ends with the report and says where: ${report:-no 'report:' line}"
# Without --report-out a checkout's report goes beside its run folders, under
# results/ (make clean removes build/), in a folder no run id can take (none
# begins with _) and git ignores as it does new runs.
rd=$(host-scripts/runfolder report-dir)
ign=0
! git rev-parse --git-dir >/dev/null 2>&1 || git check-ignore -q results/_report/r2/report.md || ign=1
ok "$([ "$rd" = "$PWD/results/_report" ] && [ "$ign" = 0 ] && ! host-scripts/runfolder new "$tmp/results" _report 2>/dev/null &&
	[ ! -e "$tmp/results/_report" ]; echo $?)" "the default report folder: results/_report/RUN_ID, not under build/ ($rd)"
host-scripts/bench --no-guest --duration 0.02 --threads 1 --rounds 1 --report-out "$tmp/report-again" "$tmp/results" r2 2>"$tmp/err"
ok "$([ $? -eq 1 ] && grep -q 'exists' "$tmp/err"; echo $?)" "an existing run folder is never reused"

# compare's defaults reach the engine: every workload, and a 5 s TSC-rate
# check of its own into tsc-rate-<cs>.json (the run-folder contract's name).
n_all=$(grep -c -- '--workloads all ' "$tmp/w2/argv.log")
n_rate=$(grep -c -- '--no-cost --check tsc-rate --duration 5 .*--output .*/r2/tsc-rate-[a-z_]*\.json' "$tmp/w2/argv.log")
ok "$([ "$n_all" -eq 3 ] && [ "$n_rate" -eq 3 ] && [ "$(wc -l <"$tmp/w2/argv.log")" -eq 6 ]; echo $?)" \
	"compare: --workloads all and --tsc-rate-seconds 5 by default: $n_all cost runs with --workloads all, $n_rate rate checks of 3"
why=$(cd "$tmp/results/r2" && for c in tsc hpet acpi_pm; do
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); r = d["checks"]["tsc_rate"]
assert d["schema"] == "clockbench/1" and r["seconds"] >= 5 and r["clocksource"] == sys.argv[2], (d["schema"], r)' \
		"tsc-rate-$c.json" "$c" 2>&1 | tail -n1
done)
ok "$([ -z "$why" ]; echo $?)" "tsc-rate-tsc.json, -hpet.json, -acpi_pm.json: engine documents with the rate check, each on its clocksource${why:+: $why}"

# r10 (started above): --rounds 3 keeps each round whole, in order.
wait "$r10_pid"
rc=$?
r10_pid=
whole=$(cd "$tmp/results/r10" 2>/dev/null && for r in round-1 round-2 round-3; do for c in tsc acpi_pm; do for e in json csv txt; do
	[ -s "$r/host-$c.$e" ] || echo "$r/host-$c.$e"; done; done; done)
ok "$([ "$(cd "$tmp/results/r10" && echo *)" = "health.json plan.json round-1 round-2 round-3 summary.json summary.md" ] && [ -z "$whole" ]; echo $?)" \
	"--rounds 3: health.json (health at the start), plan.json, round-1, round-2, round-3 and the summary at the top, each round with host-tsc and host-acpi_pm .json .csv .txt${whole:+; missing: $(paste -sd" " - <<<"$whole")}"
ok "$([ "$rc" -eq 0 ] && [ "$(sed '/^$/d' "$tmp/out-r10" | tail -n1 | cut -c1-8)" = "report: " ]; echo $?)" \
	"--rounds 3: exit $rc, the summary and the report read the rounds, the report's place last$([ "$rc" -eq 0 ] || echo ": $(grep -v '^clockbench: \[' "$tmp/err-r10" | tail -n2 | paste -sd' ' - | cut -c1-160)")"
want='round-1 tsc hpet|round-1 acpi_pm hpet|round-2 acpi_pm hpet|round-2 tsc hpet|round-3 tsc hpet|round-3 acpi_pm hpet'
got=$(paste -sd'|' "$tmp/w10/rounds.log")
ok "$([ "$got" = "$want" ]; echo $?)" "odd rounds tsc then acpi_pm, round 2 reversed, each step on its clocksource: $got"
ok "$([ "$got" = "$want" ] && [ "$(cur "$tmp/w10/cs")" = hpet ] && [ ! -e "$tmp/w10/state/clocksource.state" ] &&
	[ "$(grep -c "clocksource back to 'hpet'" "$tmp/err-r10")" -eq 1 ]; echo $?)" \
	"each switch saved hpet as the original (it was put back after every step), hpet at the end, no state, said once"
rates=$(grep -o -- '--check tsc-rate .*' "$tmp/w10/argv.log" | grep -o 'r10/[a-z0-9-]*/tsc-rate-[a-z_]*\.json' | paste -sd' ' -)
ok "$([ "$rates" = "r10/round-1/tsc-rate-tsc.json r10/round-1/tsc-rate-acpi_pm.json" ] && [ -z "$(find "$tmp/results/r10/round-2" "$tmp/results/r10/round-3" -name 'tsc-rate-*')" ]; echo $?)" \
	"the TSC-rate check in round 1 only: ${rates:-none}"
tree=$(grep -c . "$tmp/w10/tree.log")
ok "$([ "$tree" -gt 0 ] && [ ! -s "$tmp/w10/step.log" ] && ! grep -q -e '_step' -e 'host-scripts/clocksource' "$tmp/w10/tree.log" &&
	[ "$(grep -c "host-scripts/bench .* $tmp/results r10 \$" "$tmp/w10/tree.log")" -eq 6 ]; echo $?)" \
	"during each step no process re-runs compare (_step) nor the clocksource command: the engine's parent's parent is compare itself ($(grep -c . "$tmp/w10/step.log") _step processes seen)"
ok "$(grep -q "^clockbench: \[acpi_pm\] host bench (round 2 of 3, clocksource 1 of 2)\$" "$tmp/err-r10" &&
	grep -q '^clockbench: bench tsc acpi_pm, back to hpet after each: ' "$tmp/err-r10" &&
	grep -q '^clockbench: 3 rounds, the even ones in reverse order (acpi_pm tsc)$' "$tmp/err-r10"; echo $?)" \
	"progress names each round and clocksource: $(grep -c 'host bench (round' "$tmp/err-r10") step lines"
# A bad --rounds is refused before anything is made.
bad=0
for v in 0 x 1001 01; do
	host-scripts/bench --no-guest --rounds "$v" "$tmp/results" r12 2>"$tmp/err"
	rc=$?
	if ! { [ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && [ ! -e "$tmp/results/r12" ] &&
		grep -q "^clockbench: --rounds=$v: expected a whole number from 1 to 1000\$" "$tmp/err"; }; then
		bad=1
		diag "--rounds $v: exit $rc: $(head -n1 "$tmp/err")"
	fi
done
ok "$bad" "--rounds 0, x, 1001, 01: one line each, exit 2, nothing made"
# compare -q --rounds 2 over tsc and acpi_pm: two rounds, nothing on
# stderr.  The same run counts its Python interpreters (tests/lib/pystarts.py
# counts them in an strace of execve): compare asks the run-folder contract
# once before the run and once for the run's plan, health once, the
# report tool once a step (host only: its label check) and once at the end
# (summary and report), not once per file name or round.
mkdir "$tmp/r11"
# strace stops only at execve with --seccomp-bpf (strace 5.3 on), where
# it works; else at every system call.
trace=()
if command -v strace >/dev/null && strace -f -qq -e trace=execve -o /dev/null true 2>/dev/null; then
	trace=(strace -f -qq -s 256 -e trace=execve -o "$tmp/trace")
	! strace --seccomp-bpf -f -qq -e trace=execve -o /dev/null true 2>/dev/null || trace=(strace --seccomp-bpf "${trace[@]:1}")
fi
REC=$tmp/r11 CB_ENGINE=$tmp/round-engine "${trace[@]}" host-scripts/bench -q "${small[@]}" --tsc-rate-seconds 0 --clocksources tsc,acpi_pm \
	--rounds 2 --report-out "$tmp/report-r11" "$tmp/results" r11 >/dev/null 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(paste -sd'|' "$tmp/r11/rounds.log")" = 'round-1 tsc hpet|round-1 acpi_pm hpet|round-2 acpi_pm hpet|round-2 tsc hpet' ] &&
	[ ! -s "$tmp/err" ]; echo $?)" \
	"compare -q --rounds 2: two rounds of tsc and acpi_pm, nothing on stderr (exit $rc)"
if [ "${#trace[@]}" -gt 0 ]; then
	starts=$(/usr/bin/python3 tests/lib/pystarts.py "$tmp/trace" "$PWD")
	n=${starts%%$'\n'*}
	ok "$([ "$rc" -eq 0 ] && [ "$n" -le 8 ]; echo $?)" \
		"2 rounds over tsc and acpi_pm, host only: $n Python interpreters (at most 4, and 1 a step: 8; exit $rc):$(sed 1d <<<"$starts" | tr -s ' ' | paste -sd, -)"
else
	skip "strace is not installed or cannot trace here"
fi
# The run-folder command makes a round's folder: printed, never reused.
mkdir -p "$tmp/results/r13"
p=$(host-scripts/runfolder round "$tmp/results/r13" 2)
rc1=$?
host-scripts/runfolder round "$tmp/results/r13" 2 2>"$tmp/err"
rc2=$?
host-scripts/runfolder round "$tmp/results/r13" 0 2>/dev/null
rc3=$?
ok "$([ "$rc1" -eq 0 ] && [ "$p" = "$tmp/results/r13/round-2" ] && [ -d "$p" ] && [ "$rc2" -eq 1 ] && grep -q 'never reused' "$tmp/err" &&
	[ "$rc3" -eq 2 ] && [ "$(cd "$tmp/results/r13" && echo *)" = round-2 ]; echo $?)" \
	"runfolder round DIR 2 makes and prints round-2 (exit $rc1), refuses it again ($rc2) and round 0 ($rc3)"

# A step whose measurement is not what its file is named after fails: the
# engine here runs on acpi_pm although the step switched to tsc.  The report
# fails too (the engine puts a file where --report-out's folder was, after the
# settings were checked); neither hides the other, and the clocksource is back.
# shellcheck disable=SC2016 # the stand-in's own $CB_CS_DIR and $@
printf '#!/bin/sh\ncase "$*" in *--dry-run*) ;; *) echo acpi_pm >"$CB_CS_DIR/current_clocksource"; rm -rf "%s"; : >"%s" ;; esac\nexec "%s" "$@"\n' \
	"$tmp/rep" "$tmp/rep" "$PWD/bench/clockbench" >"$tmp/drift-engine"
chmod +x "$tmp/drift-engine"
mkdir -p "$tmp/rep"
CB_ENGINE=$tmp/drift-engine host-scripts/bench "${small[@]}" --tsc-rate-seconds 0 --clocksources tsc --rounds 1 --report-out "$tmp/rep/report" \
	"$tmp/results" r4 >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q 'host-tsc.json does not measure what its name says' "$tmp/err" && grep -q 'failed for: tsc' "$tmp/err" &&
	grep -q 'report of .* failed' "$tmp/err" && [ "$(cur)" = hpet ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ]; echo $?)" \
	"a host file measured on acpi_pm but named tsc fails its step, and a failed report does not hide it (exit $rc): $(grep 'name says' "$tmp/err" | cut -c1-140)"
[ "$rc" -eq 1 ] || diag "$(tail -n3 "$tmp/err")"
done_testing
