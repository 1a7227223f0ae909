#!/usr/bin/env bash
# tier: fast
# cli.t: every bad input gives one line on stderr, exit 2 (usage) or 1
# (run time), and leaves no file behind, partial or temporary.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
bin=${CB_BIN:-bench/clockbench}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ncpu=$(nproc)

# The checks below read their files with bash alone: a command or two per
# check, not six (process creation is what costs here).
shopt -s nullglob dotglob
# slurp FILE: its text in $text, its count of lines (newlines, as wc -l) in $lines.
slurp() {
	local nl
	text=
	IFS= read -r -d '' text <"$1"
	nl=${text//[!$'\n']/}
	lines=${#nl}
}
# others NAME...: the count of entries in $tmp other than the NAMEs, in $left.
others() {
	local f n keep
	left=0
	for f in "$tmp"/*; do
		keep=0
		# shellcheck disable=SC2053 # a NAME may be a pattern (dir*)
		for n; do [[ ${f##*/} == $n ]] && keep=1; done
		[ "$keep" -eq 1 ] || left=$((left + 1))
	done
}

# expect STATUS DESCRIPTION ARGS...: exit status, one stderr line naming the
# problem, no stdout, and nothing left in $tmp.
expect() {
	local want=$1 what=$2 rc lines text left
	shift 2
	"$bin" --output "$tmp/out.json" "$@" >"$tmp/stdout" 2>"$tmp/stderr"
	rc=$?
	slurp "$tmp/stderr"
	others stdout stderr
	if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && [ ! -s "$tmp/stdout" ] && [ "$left" -eq 0 ] &&
		[[ $text == "clockbench: "* ]]; then
		ok 0 "$what: exit $want, '${text%$'\n'}'"
	else
		ok 1 "$what: exit $rc (want $want), $lines stderr lines, $left files left"
		diag "stderr: ${text%$'\n'}"
	fi
}

expect 2 "unknown clock" --clocks realtime,sundial
expect 2 "unknown method" --methods vdso,hpet
expect 2 "unknown option" --frobnicate
expect 2 "unknown short option" -Z
expect 2 "missing value" --duration
expect 2 "stray argument" monotonic
expect 2 "non-numeric threads" --threads two
expect 2 "zero threads" --threads 0
expect 2 "empty thread list" --threads ,
expect 2 "negative threads" --threads -1
expect 2 "reversed range" --threads 2-1
expect 2 "more threads than CPUs" --threads $((ncpu + 1))
expect 2 "more threads than chosen CPUs" --cpus 0 --threads 2
expect 2 "CPU not online" --cpus 4000
expect 2 "CPU out of range" --cpus 99999
expect 2 "zero duration" --duration 0
expect 2 "negative duration" --duration -1
expect 2 "non-numeric duration" --duration 1x
expect 2 "duration, an unknown unit" --duration 5min
expect 2 "duration, a unit in capitals" --duration 5S
expect 2 "duration, a unit alone" --duration ms
expect 2 "duration, a space before the unit" --duration '1 s'
expect 2 "duration, a sign" --duration +1s
expect 2 "duration, an exponent" --duration 1e-3
expect 2 "duration, two units" --duration 1m30s
expect 2 "duration, zero with a unit" --duration 0ms
expect 2 "duration 2h: beyond 3600 s once converted" --duration 2h
expect 2 "duration 3601s" --duration 3601s
expect 2 "--dry-run-cpus without --dry-run" --dry-run-cpus 2
expect 2 "NaN duration" --duration nan
expect 2 "huge duration" --duration 1e9
expect 2 "zero batch" --batch 0
expect 2 "batch with junk" --batch 12x
expect 2 "batch overflow" --batch 99999999999999999999999
expect 2 "TSC rounds below 3000" --tsc-rounds 100
expect 2 "unknown check" --check everything
expect 2 "unknown workload" --workloads tcp-stream,udp
expect 2 "empty workload list" --workloads ,
expect 2 "message size 0" --workloads tcp-stream --msg-size 0
expect 2 "message size 16M+1" --msg-size 16777217
expect 2 "message size 17M" --msg-size 17M
expect 2 "message size with junk" --msg-size 64KB
expect 2 "message size negative" --msg-size -1
expect 2 "unknown format" --format yaml
expect 2 "empty --json name" --json ''
# Test hooks come from the environment (CLOCKBENCH_TEST_*), checked as
# options are.
CLOCKBENCH_TEST_STALL=yes expect 2 "a test hook's bad value, CLOCKBENCH_TEST_STALL=yes"
rm -f "$tmp/stdout" "$tmp/stderr"

# A long value is cut in its one line.
long=$(printf '9%.0s' $(seq 5000))x
"$bin" --dry-run --duration "$long" >"$tmp/so" 2>"$tmp/se"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/se")" -eq 1 ] && [ "$(wc -c <"$tmp/se")" -lt 250 ]; echo $?)" \
	"--duration of 5001 characters: exit $rc, one line of $(wc -c <"$tmp/se") bytes"
# An unknown name in a list is cut as every value is (80 bytes and "...").
long=$(printf 'x%.0s' $(seq 155))
"$bin" --dry-run --clocks "monotonic,$long" >"$tmp/so" 2>"$tmp/se"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/se")" -eq 1 ] && grep -q "unknown name '$(printf 'x%.0s' $(seq 80))\.\.\.'" "$tmp/se"; echo $?)" \
	"--clocks with a 155-character unknown name: exit $rc, the name cut at 80 bytes: $(head -c 140 "$tmp/se")"
# The limit is named after the unit's conversion.
"$bin" --dry-run --duration 61m >"$tmp/so" 2>"$tmp/se"
rc=$?
ok "$([ "$rc" -eq 2 ] && grep -qF "'61m': 3660 s is beyond the limit of 3600 s" "$tmp/se"; echo $?)" \
	"--duration 61m: exit $rc, the seconds and the limit named: $(cat "$tmp/se")"
# Durations with units, as cyclictest and fio take them: the JSON keeps
# seconds (context.duration_s).  --probe measures no cell, so 2m is quick.
# Each run's report kept, all judged by one python3 at the end.
pairs=()
for pair in 20ms=0.02 1.5s=1.5 2m=120 .5=0.5 0.001h=3.6 250000us=0.25 3=3 60m=3600; do
	"$bin" --probe --quiet --format json --duration "${pair%%=*}" >"$tmp/d${#pairs[@]}.json" 2>"$tmp/d${#pairs[@]}.se"
	pairs+=("$pair")
done
python3 - "$tmp" "${pairs[@]}" >"$tmp/so" 2>&1 <<'PY'
import json, os, sys
bad = 0
for i, pair in enumerate(sys.argv[2:]):
    d, want = pair.split("=")
    base = os.path.join(sys.argv[1], "d%d" % i)
    try:
        got = json.load(open(base + ".json"))["context"]["duration_s"]
        good = abs(float(got) - float(want)) <= 1e-9
    except Exception as e:  # noqa: BLE001 -- no report, or no number in it
        got, good = "none (%s)" % " ".join(str(e).split())[:100], False
    if not good:
        bad = 1
        err = open(base + ".se", errors="replace").read().split("\n")[0][:200]
        print("--duration %s: duration_s %s (want %s): %s" % (d, got, want, err))
sys.exit(bad)
PY
bad=$?
while IFS= read -r line; do diag "$line"; done <"$tmp/so"
ok "$bad" "--duration 20ms 1.5s 2m .5 0.001h 250000us 3 60m: context.duration_s in seconds"
rm -f "$tmp/so" "$tmp/se" "$tmp"/d[0-9]*

# Unwritable outputs are run-time failures, found before measuring.
"$bin" --duration 0.01 --output /nonexistent/dir/out.json >"$tmp/so" 2>"$tmp/se"
rc=$?
ok "$([ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/se")" -eq 1 ] && grep -q '/nonexistent/dir/out.json' "$tmp/se"; echo $?)" \
	"unwritable --output: exit 1, one line naming the path"
"$bin" --duration 0.01 --json "$tmp/ok.json" --csv /proc/nope.csv >"$tmp/so" 2>"$tmp/se"
rc=$?
ok "$([ "$rc" -eq 1 ] && [ -z "$(find "$tmp" -mindepth 1 -not -name so -not -name se)" ]; echo $?)" \
	"one unwritable output of three: exit 1, the writable one not created either"
rm -f "$tmp/so" "$tmp/se"

# --dry-run: every option and output checked as a run would, nothing
# measured, nothing created: a good set passes silently, a bad one fails as
# a run would (usage 2, an unwritable output 1).
dry() { # dry STATUS DESCRIPTION NAMED ARGS...: NAMED must be in the error
	local want=$1 what=$2 named=$3 rc lines text left
	shift 3
	"$bin" --dry-run "$@" >"$tmp/so" 2>"$tmp/se"
	rc=$?
	slurp "$tmp/se"
	others so se keep 'dir*'
	if [ "$rc" -eq "$want" ] && [ ! -s "$tmp/so" ] && [ "$left" -eq 0 ] &&
		{ { [ "$want" -eq 0 ] && [ "$lines" -eq 0 ]; } || { [ "$lines" -eq 1 ] && [[ $text == "clockbench: "*"$named"* ]]; }; }; then
		ok 0 "--dry-run, $what: exit $want, $lines stderr line(s), nothing created"
	else
		ok 1 "--dry-run, $what: exit $rc (want $want), $lines stderr lines, $left files left"
		diag "stderr: ${text:0:300}"
	fi
}
mkdir "$tmp/dir"
dry 0 "a good set" "" --clocks all --methods all --threads 1,max --duration 30 --check all --workloads all \
	--msg-size 1M --output "$tmp/a.txt" --json "$tmp/a.json" --csv "$tmp/a.csv"
dry 2 "a bad --clocks" monotnic --clocks monotnic --json "$tmp/a.json"
# --clock, --method and --workload, the names before 2026-12-06 (each
# the engine's JSON of an older run records): still read, as prefixes.
dry 0 "the old names --clock, --method, --workload" "" --clock monotonic --method vdso --workload none
dry 2 "a bad --duration" "1x" --duration 1x
dry 0 "--duration 500ms" "" --duration 500ms
dry 2 "--duration 2h" "3600 s" --duration 2h
# --dry-run-cpus N: the lists judged against CPUs 0..N-1 (a guest's vCPUs),
# not this process's; a dry run's option only.
dry 0 "--dry-run-cpus $((ncpu + 2)) --threads $((ncpu + 2))" "" --dry-run-cpus $((ncpu + 2)) --threads $((ncpu + 2)) \
	--cpus 0-$((ncpu + 1))
dry 2 "--dry-run-cpus 1 --threads 2" "'2': only 1 CPUs" --dry-run-cpus 1 --threads 2
dry 2 "--dry-run-cpus 2 --cpus 2" "--cpus '2'" --dry-run-cpus 2 --cpus 2
dry 2 "--dry-run-cpus 0" "--dry-run-cpus '0'" --dry-run-cpus 0
dry 2 "more threads than CPUs" "--threads" --threads $((ncpu + 1))
dry 2 "tsc-rate under 5 s" "tsc-rate" --check tsc-rate --duration 1
dry 1 "an output in a missing folder" "nope/a.json" --json "$tmp/nope/a.json"
dry 1 "an output that is a folder" "dir" --json "$tmp/dir"
dry 1 "an output in an unwritable place" "/proc/nope.csv" --csv /proc/nope.csv
"$bin" --help | grep -q -- '--dry-run'
ok $? "--help documents --dry-run"
# --dry-run must not measure: with the clocksource stand-in unsettled it
# still passes (the refusal is the run's), and takes no measuring time.
printf 'tsc-early\n' >"$tmp/keep"
CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/keep" dry 0 "does not look at the clocksource" ""
rm -rf "$tmp/dir" "$tmp/keep" "$tmp/so" "$tmp/se"

"$bin" --help >"$tmp/help" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && grep -q -- '--threads' "$tmp/help" && grep -q 'Exit status' "$tmp/help"; echo $?)" "--help exits 0 and documents options and exit status"
bad=0
slurp "$tmp/help"
help=$text
# --dry-run: the method is parsed and checked as a run's, nothing measured.
for m in vdso syscall syscall-inline rdtsc rdtscp null; do
	[[ $help == *"$m"* ]] || { bad=1; diag "--help does not name method $m"; }
	"$bin" --methods "$m" --dry-run >/dev/null 2>&1 || { bad=1; diag "--methods $m refused"; }
done
ok "$bad" "every method (vdso syscall syscall-inline rdtsc rdtscp null) is in --help and accepted"
"$bin" --version >"$tmp/ver" 2>&1
ok "$(grep -qE '^clockbench [0-9]+\.[0-9]+\.[0-9]+$' "$tmp/ver"; echo $?)" "--version prints the version"
# Every option --help names is one the parser accepts (help tells the truth).
bad=0
slurp bench/opts.c
while read -r opt; do
	[[ $text == *"\"${opt#--}\""* ]] || { bad=1; diag "help names $opt, the parser does not"; }
done < <(grep -oE -- '--[a-z-]+' "$tmp/help" | sort -u)
ok "$bad" "every option in --help exists in the parser"
ok "$(! grep -qE -- '--test-|CLOCKBENCH_TEST' "$tmp/help"; echo $?)" "--help names no test hook"
# The option table writes both --help's ranges and the parser's: every
# numeric option's range as --help states it is what the parser takes
# (both ends in, one past each end out).
python3 - "$bin" "$tmp/help" >"$tmp/ranges" 2>&1 <<'PY'
import re, subprocess, sys
bin, text = sys.argv[1], open(sys.argv[2]).read().split("\n\nExit status:")[0]
items = re.split(r"\n(?=  -\S|      --)", text)
extra = {"watchdog-limit": ["--check", "watchdog"], "msg-size": ["--workloads", "tcp-stream"]}
unit = {"K": 1024, "M": 1 << 20}
def num(s):
    return int(s[:-1]) * unit[s[-1]] if s[-1] in unit else int(s)
found = bad = 0
for it in items:
    flat = " ".join(it.split())
    m = re.match(r"(?:-\w, )?--([a-z-]+) (N|NS|BYTES) .*\(default: [^;()]*(?:\([^)]*\)[^;()]*)*; (\d+[KM]?) to (\d+[KM]?)\)$", flat) or \
        re.match(r"(?:-\w, )?--([a-z-]+) (N|NS|BYTES) .*\((\d+[KM]?) to (\d+[KM]?)\)$", flat)
    if not m:
        continue
    name, lo, hi = m.group(1), num(m.group(3)), num(m.group(4))
    found += 1
    for v, want in ((lo, 0), (hi, 0), (lo - 1, 2), (hi + 1, 2)):
        rc = subprocess.run([bin, "--dry-run", "--" + name, str(v)] + extra.get(name, []),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
        if rc != want:
            bad += 1
            print("--%s %d: exit %d, want %d" % (name, v, rc, want))
print("ranges from --help: %d options" % found)
sys.exit(1 if bad or found < 5 else 0)
PY
ok $? "each numeric option's range in --help is the parser's, both ends: $(tail -n1 "$tmp/ranges")"
[ "$(wc -l <"$tmp/ranges")" -gt 1 ] && diag "$(head -n5 "$tmp/ranges")"
printf 'jiffies\n' >"$tmp/cs"
CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/cs" "$bin" --clocks monotonic --methods rdtsc --threads 1 --duration 0.01 --quiet >"$tmp/so" 2>"$tmp/se"
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q "clocksource 'jiffies'" "$tmp/se"; echo $?)" \
	"CLOCKBENCH_TEST_CLOCKSOURCE_FILE is read as the clocksource (jiffies: refused, exit $rc)"
rm -f "$tmp/cs" "$tmp/so" "$tmp/se"
rm -f "$tmp/help" "$tmp/ver"
done_testing
