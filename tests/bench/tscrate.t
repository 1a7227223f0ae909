#!/usr/bin/env bash
# tier: slow
# test-timeout: 120
# tscrate.t: --check tsc-rate: its duration floor, "all" leaving it out,
# a real run's JSON (units, not timing: every rate within a generous bound
# of the engine's calibration), its text paragraph, and the RTC loop fed
# from a FIFO at 1 Hz (CLOCKBENCH_TEST_RTC_DEVICE), then from a silent one.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
bin=bench/clockbench
[ -x "$bin" ] || skip_all "$bin not built (make check builds it)"
tmp=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$tmp"' EXIT

# usage: one line, exit 2, no stdout
for args in "--check tsc-rate --duration 4" "--check warps,tsc-rate --duration 4.99" "--check tsc-rate"; do
	# shellcheck disable=SC2086 # the words of $args are the options
	"$bin" --no-cost $args >"$tmp/so" 2>"$tmp/se"
	rc=$?
	ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/se")" -eq 1 ] && [ ! -s "$tmp/so" ] &&
		grep -q "^clockbench: --duration .*tsc-rate check needs at least 5 seconds" "$tmp/se"; echo $?)" \
		"$args: exit 2 ($rc), one line: $(cat "$tmp/se")"
done
for list in all tsc,all; do
	"$bin" --no-cost --check "$list" --duration 0.05 --format json >"$tmp/all.json" 2>"$tmp/se"
	rc=$?
	ok "$([ "$rc" -eq 0 ] && python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["checks"]
assert c["tsc_rate"] is None and c["tsc"] is not None and c["warps"] is not None, c
' "$tmp/all.json"; echo $?)" "--check $list is warps and tsc, not tsc-rate (no 5 s floor; checks.tsc_rate null)"
done

# check.py FILE DEVICE-KIND: the tsc_rate section of a document
cat >"$tmp/check.py" <<'EOF'
import json, math, os, sys
path, kind = sys.argv[1], sys.argv[2]
t = json.load(open(path))["checks"]["tsc_rate"]
want = {"seconds", "clocksource", "kernel_tsc_khz", "kernel_tsc_khz_source", "engine_tsc_khz",
        "ppm_reference", "rtc", "monotonic", "monotonic_raw", "adjtimex"}
assert want <= set(t), want - set(t)
engine = t["engine_tsc_khz"] * 1000
assert engine > 1e8, engine
if t["kernel_tsc_khz"] is None:
    assert t["kernel_tsc_khz_source"] is None and t["ppm_reference"] == "engine"
    ref = engine
else:
    assert isinstance(t["kernel_tsc_khz"], int), t["kernel_tsc_khz"]
    assert t["kernel_tsc_khz_source"] in ("cpuid-0x15", "cpuid-0x40000010", "kmsg"), t["kernel_tsc_khz_source"]
    assert t["ppm_reference"] == "kernel"
    ref = t["kernel_tsc_khz"] * 1000
assert t["seconds"] >= 4.9, t["seconds"]

def near(hz, bound_ppm, what):
    assert isinstance(hz, float) and abs(hz / engine - 1) * 1e6 < bound_ppm, (what, hz, engine)

for k in ("monotonic", "monotonic_raw"):
    near(t[k]["tsc_hz"], 1000, k)
    assert abs(t[k]["ppm"] - (t[k]["tsc_hz"] / ref - 1) * 1e6) < 0.01, (k, t[k], ref)
a = t["adjtimex"]
assert set(a) == {"available", "freq_ppm", "tick_us", "status", "synchronized", "maxerror_us", "esterror_us"}, a
if a["available"]:
    assert isinstance(a["freq_ppm"], float) and isinstance(a["tick_us"], int) and isinstance(a["status"], int)
    assert a["synchronized"] == (not a["status"] & 0x40), a    # STA_UNSYNC
    assert isinstance(a["maxerror_us"], int) and isinstance(a["esterror_us"], int)
r = t["rtc"]
if kind == "fifo-fed":
    assert r["device"] == sys.argv[3] and r["available"] and r["reason"] is None, r
    assert r["edges"] == 5, r
    near(r["tsc_hz"], 20000, "rtc")  # the feeder's sleeps: a units test, 2 %
    assert 0 <= r["jitter_us"] < 200000, r
    assert abs(r["ppm"] - (r["tsc_hz"] / ref - 1) * 1e6) < 0.01, (r, ref)
elif kind == "fifo-silent":
    assert r["device"] == sys.argv[3] and not r["available"], r
    assert r["reason"].startswith("no update interrupt from %s within" % sys.argv[3]), r
    assert r["edges"] is None and r["tsc_hz"] is None and r["ppm"] is None and r["jitter_us"] is None, r
elif not os.path.exists("/dev/rtc0"):
    assert r == {"device": "/dev/rtc0", "available": False, "reason": "no /dev/rtc0 on this machine",
                 "edges": None, "tsc_hz": None, "ppm": None, "jitter_us": None}, r
else:
    assert r["available"] or r["reason"], r
    if r["available"]:
        near(r["tsc_hz"], 1000, "rtc")
EOF

# Three 5 s runs side by side (each sleeps most of its time): the real
# thing, JSON to a file and the text paragraph on stdout; the RTC loop from
# a FIFO fed records; and from a silent one.
"$bin" --no-cost --quiet --check tsc-rate --duration 5 --json "$tmp/real.json" >"$tmp/real.txt" 2>"$tmp/se-real" &
real=$!

# the RTC loop from a FIFO: 8-byte records (interrupts since the last read
# << 8 | RTC_UF | RTC_IRQF), timed by the feeder's monotonic clock
feed() { # feed FIFO SECOND:COUNT,... HOLD-SECONDS: a feeder in the background
	mkfifo "$1"
	timeout 40 python3 -c '
import os, struct, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY)
t0 = time.monotonic() + 0.2
for rec in filter(None, sys.argv[2].split(",")):
    second, count = map(int, rec.split(":"))
    time.sleep(max(0, t0 + second - time.monotonic()))
    os.write(fd, struct.pack("<Q", count << 8 | 0x90))
time.sleep(float(sys.argv[3]))
' "$1" "$2" "$3" &
}
# the edge of second 3 is missed: the read at 4 counts two interrupts
feed "$tmp/rtc-fed" 0:1,1:1,2:1,4:2,5:1 1
fed_feeder=$!
CLOCKBENCH_TEST_RTC_DEVICE="$tmp/rtc-fed" "$bin" --no-cost --quiet --check tsc-rate --duration 5 --format json \
	>"$tmp/fed.json" 2>"$tmp/se-fed" &
fed=$!
feed "$tmp/rtc-silent" "" 6
silent_feeder=$!
start=$SECONDS
CLOCKBENCH_TEST_RTC_DEVICE="$tmp/rtc-silent" "$bin" --no-cost --quiet --check tsc-rate --duration 5 --format json \
	>"$tmp/silent.json" 2>"$tmp/se-silent" &
silent=$!

wait "$real"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/se-real" ] && python3 "$tmp/check.py" "$tmp/real.json" real; echo $?)" \
	"a 5 s run: exit 0; the RTC said plainly, monotonic and raw within 1000 ppm of the engine, adjtimex read"
ok "$(grep -qE '^TSC rate over [0-9.]+ s \(clocksource [a-z_-]+\)' "$tmp/real.txt" &&
	grep -qE '^  CLOCK_MONOTONIC +[0-9.]+ MHz +[-+][0-9.]+ ppm$' "$tmp/real.txt" &&
	grep -qE '^  CLOCK_MONOTONIC_RAW +[0-9.]+ MHz' "$tmp/real.txt" &&
	grep -qE '^  /dev/rtc0 +' "$tmp/real.txt" && grep -q '^  adjtimex: ' "$tmp/real.txt"; echo $?)" \
	"the text report has the TSC rate paragraph"
[ "$rc" -eq 0 ] || diag "$(cat "$tmp/se-real")"

wait "$fed"
rc=$?
wait "$fed_feeder"
ok "$([ "$rc" -eq 0 ] && python3 "$tmp/check.py" "$tmp/fed.json" fifo-fed "$tmp/rtc-fed"; echo $?)" \
	"records for seconds 0-5, one of them counting two: 5 edges over 5 s, a rate within 2 % of the engine's, jitter, ppm"
[ "$rc" -eq 0 ] || diag "$(cat "$tmp/se-fed")"

wait "$silent"
rc=$?
took=$((SECONDS - start))
wait "$silent_feeder"
ok "$([ "$rc" -eq 0 ] && [ "$took" -lt 20 ] && python3 "$tmp/check.py" "$tmp/silent.json" fifo-silent "$tmp/rtc-silent"; echo $?)" \
	"a silent device: no hang ($took s), the RTC not available with the reason, the rest reported"
[ "$rc" -eq 0 ] || diag "$(cat "$tmp/se-silent")"
done_testing
