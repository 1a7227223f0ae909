#!/usr/bin/env bash
# compare.t: `make compare`'s orchestration on a fake clocksource folder
# (host only: GUEST=0): every clocksource in turn, results in one new
# folder, the table and the report, the original clocksource back; its
# input errors; a step whose file does not measure its label fails; one
# SIGINT stops the whole run.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
tmp=$(mktemp -d)
bg=
cleanup() {
	[ -z "$bg" ] || kill -KILL -- "-$bg" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
export CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm REPORT_OUT=$tmp/report
mkdir -p "$CB_CS_DIR"
echo "hpet tsc acpi_pm" >"$CB_CS_DIR/available_clocksource"
echo hpet >"$CB_CS_DIR/current_clocksource"
: >"$CB_KVM_DEV"
cur() { cat "$CB_CS_DIR/current_clocksource"; }

CLOCKSOURCES=tsc,sundial host-scripts/compare "$tmp/results" r1 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && grep -q "unknown clocksource 'sundial'" "$tmp/err" && [ ! -e "$tmp/results/r1" ]; echo $?)" \
	"an unknown clocksource is refused before anything changes (exit $rc)"
host-scripts/compare "$tmp/results" 2>/dev/null
ok "$([ $? -eq 2 ]; echo $?)" "a missing run id is a usage error"
host-scripts/compare "$tmp/results" ../x 2>/dev/null
ok "$([ $? -eq 2 ] && [ "$(cur)" = hpet ]; echo $?)" "a run id with a slash is refused"

# One SIGINT to compare's process group (a Ctrl-C) during the first step:
# that step puts the clocksource back and nothing further is switched to or
# measured.  The stand-in engine is slow and writes what it is asked for.
cat >"$tmp/slow-engine" <<EOF2
#!/bin/sh
echo started >>"$tmp/engine.log"
sleep 3
while [ "\$#" -gt 1 ]; do
	case "\$1" in --json | --csv | --output) echo '{}' >"\$2" ;; esac
	shift
done
EOF2
chmod +x "$tmp/slow-engine"
CLOCKBENCH=$tmp/slow-engine GUEST=0 CLOCKSOURCES=tsc,acpi_pm,hpet \
	setsid env --default-signal=INT host-scripts/compare "$tmp/results" r3 >/dev/null 2>"$tmp/err" &
bg=$!
for _ in $(seq 400); do [ -s "$tmp/engine.log" ] && break; sleep 0.05; done
kill -INT -- "-$bg"
wait "$bg"
rc=$?
bg=
ok "$([ "$rc" -eq 130 ] && [ "$(cur)" = hpet ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ] && [ "$(wc -l <"$tmp/engine.log")" -eq 1 ] &&
	[ ! -e "$tmp/results/r3/host-acpi_pm.json" ] && [ ! -e "$tmp/results/r3/host-hpet.json" ]; echo $?)" \
	"one SIGINT in the first step: exit $rc (want 130), hpet back, no state, $(wc -l <"$tmp/engine.log") of 3 steps started"

if [ ! -x bench/clockbench ]; then
	for _ in $(seq 10); do skip "bench/clockbench not built"; done
	done_testing
	exit
fi
# The real engine, behind a stand-in that records each command line but
# its dry runs (the settings' check before anything is measured).
cat >"$tmp/rec-engine" <<EOF2
#!/bin/sh
case "\$*" in *--dry-run*) ;; *) echo "\$*" >>"$tmp/argv.log" ;; esac
exec "$PWD/bench/clockbench" "\$@"
EOF2
chmod +x "$tmp/rec-engine"
CLOCKBENCH=$tmp/rec-engine GUEST=0 DURATION=0.02 THREADS=1 host-scripts/compare "$tmp/results" r2 >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(cur)" = hpet ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ]; echo $?)" \
	"a host-only compare over tsc, hpet, acpi_pm ends with the original (hpet) back (exit $rc)"
ok "$(cd "$tmp/results/r2" && [ -s host-tsc.json ] && [ -s host-hpet.json ] && [ -s host-acpi_pm.json ] && [ -s summary.md ] && [ -s summary.json ]; echo $?)" \
	"one folder: a host result per clocksource, summary.md and summary.json"
order=$(python3 -c 'import json,sys; print(" ".join(r["clocksource"] for r in json.load(open(sys.argv[1]))["rows"]))' "$tmp/results/r2/summary.json")
# The screen's host table (verdict.py): tsc's row first, the baseline.
first=$(sed -n '/^host clocksource  *1 thread/,/^$/p' "$tmp/out" | sed -n 3p)
ok "$([ "$order" = "tsc acpi_pm hpet" ] && [[ $first =~ ^tsc\ +[0-9.]+\ x1\.00 ]] && [ -s "$tmp/results/r2/summary.md" ]; echo $?)" \
	"tsc is first and the baseline of the ratios ($order; on the screen: ${first:-no host table})"
report=$(sed -n 's/^report: //p' "$tmp/out")
ok "$([ "$report" = "$REPORT_OUT/report.md" ] && [ -s "$report" ]; echo $?)" "it ends with the report and says where: ${report:-no 'report:' line}"
# Without REPORT_OUT a checkout's report goes beside its run folders, under
# results/ (make clean removes build/), in a folder no run id can take (none
# begins with _) and git ignores as it does new runs.
rd=$(host-scripts/runfolder report-dir)
ign=0
! git rev-parse --git-dir >/dev/null 2>&1 || git check-ignore -q results/_report/r2/report.md || ign=1
ok "$([ "$rd" = "$PWD/results/_report" ] && [ "$ign" = 0 ] && ! host-scripts/runfolder new "$tmp/results" _report 2>/dev/null &&
	[ ! -e "$tmp/results/_report" ]; echo $?)" "the default report folder: results/_report/RUN_ID, not under build/ ($rd)"
GUEST=0 DURATION=0.02 THREADS=1 host-scripts/compare "$tmp/results" r2 2>"$tmp/err"
ok "$([ $? -eq 1 ] && grep -q 'exists' "$tmp/err"; echo $?)" "an existing run folder is never reused"

# compare's defaults reach the engine: every workload, and a 5 s TSC-rate
# check of its own into tsc-rate-<cs>.json (the run-folder contract's name).
n_all=$(grep -c -- '--workload all ' "$tmp/argv.log")
n_rate=$(grep -c -- '--no-cost --check tsc-rate --duration 5 --format json --output .*/r2/tsc-rate-[a-z_]*\.json' "$tmp/argv.log")
ok "$([ "$n_all" -eq 3 ] && [ "$n_rate" -eq 3 ] && [ "$(wc -l <"$tmp/argv.log")" -eq 6 ]; echo $?)" \
	"compare: WORKLOADS=all and TSC_RATE_SECONDS=5 by default: $n_all cost runs with --workload all, $n_rate rate checks of 3"
why=$(cd "$tmp/results/r2" && for c in tsc hpet acpi_pm; do
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); r = d["checks"]["tsc_rate"]
assert d["schema"] == "clockbench/1" and r["seconds"] >= 5 and r["clocksource"] == sys.argv[2], (d["schema"], r)' \
		"tsc-rate-$c.json" "$c" 2>&1 | tail -n1
done)
ok "$([ -z "$why" ]; echo $?)" "tsc-rate-tsc.json, -hpet.json, -acpi_pm.json: engine documents with the rate check, each on its clocksource${why:+: $why}"

# bench-host alone: no workload and no rate check unless asked; WORKLOADS
# and TSC_RATE_SECONDS as given; a rate check too short is refused at once.
: >"$tmp/argv.log"
CLOCKBENCH=$tmp/rec-engine DURATION=0.02 THREADS=1 CLOCKS=monotonic METHODS=vdso host-scripts/bench-host "$tmp/results" r6 >/dev/null 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/argv.log")" -eq 1 ] && grep -q -- '--workload none ' "$tmp/argv.log" &&
	[ -z "$(find "$tmp/results/r6" -name 'tsc-rate-*')" ]; echo $?)" "bench-host alone: --workload none, no rate check (exit $rc)"
: >"$tmp/argv.log"
CLOCKBENCH=$tmp/rec-engine DURATION=0.02 THREADS=1 CLOCKS=monotonic METHODS=vdso WORKLOADS=tcp-stream TSC_RATE_SECONDS=0 \
	host-scripts/bench-host "$tmp/results" r7 >/dev/null 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(wc -l <"$tmp/argv.log")" -eq 1 ] && grep -q -- '--workload tcp-stream ' "$tmp/argv.log" &&
	python3 -c 'import json, sys; assert [r["workload"] for r in json.load(open(sys.argv[1]))["workloads"]] == ["tcp-stream"]' \
		"$tmp/results/r7/host-hpet.json"; echo $?)" "bench-host: WORKLOADS=tcp-stream gives one tcp-stream row; TSC_RATE_SECONDS=0 no check (exit $rc)"
: >"$tmp/argv.log"
TSC_RATE_SECONDS=3 CLOCKBENCH=$tmp/rec-engine host-scripts/bench-host "$tmp/results" r8 >/dev/null 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "^clockbench: TSC_RATE_SECONDS=3: --duration '3': .*at least 5" "$tmp/err" &&
	[ ! -s "$tmp/argv.log" ] && [ ! -e "$tmp/results/r8" ]; echo $?)" "bench-host: TSC_RATE_SECONDS=3 refused before measuring (exit $rc): $(cat "$tmp/err")"
# A rate check that fails fails the step, in one line, the cost results kept.
cat >"$tmp/norate-engine" <<EOF2
#!/bin/sh
case "\$*" in *--dry-run*) ;; *tsc-rate*) echo "clockbench: tsc-rate: broken on purpose" >&2; exit 1 ;; esac
exec "$PWD/bench/clockbench" "\$@"
EOF2
chmod +x "$tmp/norate-engine"
CLOCKBENCH=$tmp/norate-engine DURATION=0.02 THREADS=1 CLOCKS=monotonic METHODS=vdso TSC_RATE_SECONDS=5 \
	host-scripts/bench-host "$tmp/results" r9 >/dev/null 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q '^clockbench: \[hpet\] TSC-rate check failed (engine exit 1); the cost results are kept in' "$tmp/err" &&
	[ -s "$tmp/results/r9/host-hpet.json" ] && [ ! -e "$tmp/results/r9/tsc-rate-hpet.json" ]; echo $?)" \
	"bench-host: a failed rate check fails it (exit $rc), said in one line, the cost files kept"

# A step whose measurement is not what its file is named after fails: the
# engine here runs on acpi_pm although the step switched to tsc.  The report
# fails too (the engine puts a file where REPORT_OUT's folder was, after the
# settings were checked); neither hides the other, and the clocksource is back.
# shellcheck disable=SC2016 # the stand-in's own $CB_CS_DIR and $@
printf '#!/bin/sh\ncase "$*" in *--dry-run*) ;; *) echo acpi_pm >"$CB_CS_DIR/current_clocksource"; rm -rf "%s"; : >"%s" ;; esac\nexec "%s" "$@"\n' \
	"$tmp/rep" "$tmp/rep" "$PWD/bench/clockbench" >"$tmp/drift-engine"
chmod +x "$tmp/drift-engine"
mkdir -p "$tmp/rep"
CLOCKBENCH=$tmp/drift-engine GUEST=0 DURATION=0.02 THREADS=1 CLOCKSOURCES=tsc REPORT_OUT=$tmp/rep/report \
	host-scripts/compare "$tmp/results" r4 >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q 'host-tsc.json does not measure what its name says' "$tmp/err" && grep -q 'failed for: tsc' "$tmp/err" &&
	grep -q 'report of .* failed' "$tmp/err" && [ "$(cur)" = hpet ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ]; echo $?)" \
	"a host file measured on acpi_pm but named tsc fails its step, and a failed report does not hide it (exit $rc): $(grep 'name says' "$tmp/err" | cut -c1-140)"
done_testing
