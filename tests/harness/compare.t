#!/usr/bin/env bash
# compare.t: `make compare`'s orchestration on a fake clocksource folder
# (host only: GUEST=0): every clocksource in turn, results in one new
# folder, the table, and the original clocksource back; its input errors.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm
mkdir -p "$CB_CS_DIR"
echo "hpet tsc acpi_pm" >"$CB_CS_DIR/available_clocksource"
echo hpet >"$CB_CS_DIR/current_clocksource"
: >"$CB_KVM_DEV"

CLOCKSOURCES=tsc,sundial host-scripts/compare.sh "$tmp/results" r1 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && grep -q "unknown clocksource 'sundial'" "$tmp/err" && [ ! -e "$tmp/results/r1" ]; echo $?)" \
	"an unknown clocksource is refused before anything changes (exit $rc)"
host-scripts/compare.sh "$tmp/results" 2>/dev/null
ok "$([ $? -eq 2 ]; echo $?)" "a missing run id is a usage error"
host-scripts/compare.sh "$tmp/results" ../x 2>/dev/null
ok "$([ $? -eq 2 ]; echo $?)" "a run id with a slash is refused"

if [ ! -x bench/clockbench ]; then
	skip "bench/clockbench not built"
	skip "bench/clockbench not built"
	skip "bench/clockbench not built"
	done_testing
	exit
fi
GUEST=0 DURATION=0.02 THREADS=1 host-scripts/compare.sh "$tmp/results" r2 >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(cat "$CB_CS_DIR/current_clocksource")" = hpet ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ]; echo $?)" \
	"a host-only compare over tsc, hpet, acpi_pm ends with the original (hpet) back (exit $rc)"
ok "$(cd "$tmp/results/r2" && [ -s host-tsc.json ] && [ -s host-hpet.json ] && [ -s host-acpi_pm.json ] && [ -s summary.md ] && [ -s summary.json ]; echo $?)" \
	"one folder: a host result per clocksource, summary.md and summary.json"
order=$(python3 -c 'import json,sys; print(" ".join(r["clocksource"] for r in json.load(open(sys.argv[1]))["rows"]))' "$tmp/results/r2/summary.json")
ok "$([ "$order" = "tsc acpi_pm hpet" ] && grep -q '^| tsc | ' "$tmp/out" && grep -q '(x1.00)' "$tmp/out"; echo $?)" "tsc is first and the baseline of the ratios ($order)"
GUEST=0 DURATION=0.02 THREADS=1 host-scripts/compare.sh "$tmp/results" r2 2>"$tmp/err"
ok "$([ $? -eq 1 ] && grep -q 'exists' "$tmp/err"; echo $?)" "an existing run folder is never reused"
done_testing
