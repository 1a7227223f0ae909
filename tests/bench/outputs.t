#!/usr/bin/env bash
# tier: fast
# outputs.t: the engine's output files.  Every target is checked before
# measuring (a folder, an existing file without --force, one file named
# twice); a run's files appear together or not at all (a write that fails,
# a name that appears while it measures: nothing kept); of two engines on
# one file exactly one wins; a signal leaves no temporary; a clocksource the
# kernel has not settled on is refused.  Races are made deterministic with
# a FIFO the engine blocks on, never with sleeps.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
bin=${CB_BIN:-bench/clockbench}
[ -x "$bin" ] || skip_all "$bin not built"
tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]+"${pids[@]}"}"; do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
quick=(--clocks monotonic --methods rdtsc --threads 1 --duration 0.05 --quiet)

# files: what is in $tmp now, one name a line, sorted.
files() { (cd "$tmp" && find . -mindepth 1 -not -name so -not -name se | sort); }
temps() { find "$tmp" -name '*.tmp.*' | wc -l; }
# fresh: an empty $tmp, so that what one case leaves cannot fail the next.
fresh() { find "$tmp" -mindepth 1 -delete; }
# wait_temp GLOB: until a temporary matching GLOB exists (10 s at most).
wait_temp() {
	local i
	for ((i = 0; i < 200; i++)); do
		compgen -G "$1" >/dev/null && return 0
		sleep 0.05
	done
	return 1
}
# one_line PATTERN: stderr is one line that matches PATTERN.
one_line() { [ "$(wc -l <"$tmp/se")" -eq 1 ] && grep -q -- "$1" "$tmp/se"; }

# A folder is refused before measuring: one line, no progress of a run
# (two cells of 2 s print "2 cells of 2 s" first when they do run).
mkdir "$tmp/dir"
for opt in --output --json --csv; do
	"$bin" --clocks monotonic --methods rdtsc,rdtscp --threads 1 --duration 2 "$opt" "$tmp/dir" >"$tmp/so" 2>"$tmp/se"
	rc=$?
	ok "$([ "$rc" -eq 1 ] && one_line "dir: Is a directory" && [ "$(files)" = "./dir" ]; echo $?)" \
		"$opt DIR: exit $rc, refused before measuring: $(head -c 200 "$tmp/se")"
done
rmdir "$tmp/dir"

# An existing file is refused (and left as it was) unless --force.
for opt in --output --json --csv; do
	echo earlier >"$tmp/exists"
	"$bin" "${quick[@]}" "$opt" "$tmp/exists" >"$tmp/so" 2>"$tmp/se"
	rc=$?
	ok "$([ "$rc" -eq 1 ] && one_line "exists: File exists (--force" && [ "$(cat "$tmp/exists")" = earlier ] &&
		[ "$(files)" = "./exists" ]; echo $?)" "$opt EXISTING: exit $rc, the earlier file kept, nothing else made"
done
"$bin" "${quick[@]}" --force --csv "$tmp/exists" >"$tmp/so" 2>"$tmp/se"
rc=$?
ok "$([ "$rc" -eq 0 ] && head -1 "$tmp/exists" | grep -q '^clock,method'; echo $?)" "--force replaces it: exit $rc"
rm -f "$tmp/exists"

# One file named twice, by the same name, through a symbolic link to its
# folder, or as a hard link: a usage error, nothing made.
mkdir "$tmp/real"
ln -s real "$tmp/link"
echo x >"$tmp/real/h1"
ln "$tmp/real/h1" "$tmp/real/h2"
twice() { # twice DESCRIPTION ARGS...
	local what=$1
	shift
	"$bin" "${quick[@]}" "$@" >"$tmp/so" 2>"$tmp/se"
	rc=$?
	ok "$([ "$rc" -eq 2 ] && one_line "the same file as" &&
		[ "$(files | tr '\n' ' ')" = "./link ./real ./real/h1 ./real/h2 " ]; echo $?)" \
		"$what: exit $rc, $(head -c 160 "$tmp/se")"
}
twice "-o F --json F --csv F" --output "$tmp/s" --json "$tmp/s" --csv "$tmp/s"
twice "--json F --csv ./F" --json "$tmp/s" --csv "$tmp/./s"
twice "the same file through a linked folder" --json "$tmp/real/s" --csv "$tmp/link/s"
twice "two hard links of one file, --force" --force --json "$tmp/real/h1" --csv "$tmp/real/h2"
rm -rf "$tmp/real" "$tmp/link"

fresh
# A write that fails (here the file size limit: EFBIG, as ENOSPC would):
# the files written before it are not kept either.
(trap '' XFSZ; ulimit -f 2; exec "$bin" --clocks monotonic --methods rdtsc,rdtscp --threads 1 --duration 0.05 --quiet \
	--format csv --output "$tmp/w.csv" --json "$tmp/w.json") >"$tmp/so" 2>"$tmp/se"
rc=$?
ok "$([ "$rc" -eq 1 ] && one_line "write .*w.json: .*; nothing kept" && [ -z "$(files)" ]; echo $?)" \
	"a failed write: exit $rc, no file kept, no temporary: $(head -c 160 "$tmp/se")"

# A gate: the engine reads its clocksource stand-in (a FIFO here, which
# the test holds open on fd 7) once before it makes its temporaries and
# again right after; each read waits for a line.  gate_arm gives the first
# line; gate_open puts a plain file in the FIFO's place for the reads to
# come and gives the second line, to a read that may be waiting already.
# No race is left to timing.
gate_arm() {
	rm -f "$tmp/gate"
	mkfifo "$tmp/gate"
	exec 7<>"$tmp/gate"
	printf 'tsc\n' >&7
}
gate_open() {
	printf 'tsc\n' >"$tmp/gate.new"
	mv "$tmp/gate.new" "$tmp/gate"
	printf 'tsc\n' >&7
}
gate_close() { exec 7>&-; }

# A name that appears while the engine measures is never replaced: the
# engine fails naming it, and takes back what it had already put in place.
fresh
gate_arm
CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/gate" "$bin" --clocks monotonic --methods rdtsc --threads 1 --duration 0.05 --quiet \
	--output "$tmp/first.txt" --json "$tmp/p.json" >"$tmp/so" 2>"$tmp/se" 7>&- &
pid=$!
pids+=("$pid")
wait_temp "$tmp/p.json.tmp.*"
echo planted >"$tmp/p.json"
gate_open
wait "$pid"
rc=$?
gate_close
ok "$([ "$rc" -eq 1 ] && one_line "p.json: File exists.*nothing kept" && [ "$(cat "$tmp/p.json")" = planted ] &&
	[ "$(files | tr "\n" " ")" = "./gate ./p.json " ] && [ "$(wc -l <"$tmp/se")" -eq 1 ]; echo $?)" \
	"a file planted during the run: exit $rc, it is untouched, the run's other file gone: $(head -c 160 "$tmp/se")"
rm -f "$tmp/p.json"

# Two engines, one file: A has passed its check and made its temporary
# when B starts; B finishes first and wins, A fails; B's result is there,
# whole.
fresh
gate_arm
CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/gate" "$bin" --clocks monotonic --methods rdtsc --threads 1 --duration 0.05 --quiet \
	--format json --output "$tmp/same.json" >"$tmp/so" 2>"$tmp/se" 7>&- &
a=$!
pids+=("$a")
wait_temp "$tmp/same.json.tmp.*"
"$bin" "${quick[@]}" --methods rdtscp --format json --output "$tmp/same.json" >"$tmp/so2" 2>"$tmp/se2" 7>&-
rc_b=$?
gate_open
wait "$a"
rc_a=$?
gate_close
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [r["method"] for r in d["results"]] == ["rdtscp"], d["results"]
' "$tmp/same.json" 2>/dev/null
whole=$?
ok "$([ "$rc_a" -eq 1 ] && [ "$rc_b" -eq 0 ] && [ ! -s "$tmp/se2" ] && one_line "same.json: File exists" && [ "$whole" -eq 0 ] &&
	[ "$(temps)" -eq 0 ]; echo $?)" "two engines on one file: exits $rc_a and $rc_b, one result survives whole"
rm -f "$tmp/same.json" "$tmp/so2" "$tmp/se2" "$tmp/gate"

# A temporary swapped for another file while the engine measures (as a
# user who can write to the folder could): that file is never put in
# place, and nothing is kept.
fresh
gate_arm
CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/gate" "$bin" --clocks monotonic --methods rdtsc --threads 1 --duration 0.05 --quiet \
	--format json --output "$tmp/sw.json" >"$tmp/so" 2>"$tmp/se" 7>&- &
pid=$!
pids+=("$pid")
wait_temp "$tmp/sw.json.tmp.*"
t=$(compgen -G "$tmp/sw.json.tmp.*")
echo swapped >"$tmp/other"
mv "$tmp/other" "$t"
gate_open
wait "$pid"
rc=$?
gate_close
ok "$([ "$rc" -eq 1 ] && one_line "sw.json: .*temporary was replaced.*nothing kept" && [ ! -e "$tmp/sw.json" ] &&
	[ "$(temps)" -eq 0 ]; echo $?)" "a temporary swapped mid-run: exit $rc, not put in place: $(head -c 160 "$tmp/se")"

# INT, TERM and HUP during a run: the temporaries go, the status says which.
for sig in INT TERM HUP; do
	fresh
	# A background job of a script starts with SIGINT ignored: undo that.
	python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$bin" --clocks monotonic --methods rdtsc --threads 1 --duration 60 --quiet \
		--output "$tmp/sig.txt" --json "$tmp/sig.json" --csv "$tmp/sig.csv" >"$tmp/so" 2>"$tmp/se" &
	pid=$!
	pids+=("$pid")
	seen=0
	wait_temp "$tmp/sig.csv.tmp.*" && seen=1
	kill -"$sig" "$pid"
	{ wait "$pid"; } 2>/dev/null # not the shell's "Hangup" line
	rc=$?
	want=$((128 + $(kill -l "$sig")))
	ok "$([ "$seen" -eq 1 ] && [ "$rc" -eq "$want" ] && [ -z "$(files)" ]; echo $?)" \
		"SIG$sig mid-run: exit $rc (want $want), no temporary left ($(files | tr '\n' ' '))"
	rm -f "$tmp"/sig.*
done

# A clocksource the kernel leaves once it has settled is refused: one
# line naming it, nothing measured, nothing made.
for cs in tsc-early jiffies refined-jiffies; do
	fresh
	printf '%s\n' "$cs" >"$tmp/cs"
	CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/cs" "$bin" "${quick[@]}" --json "$tmp/r.json" >"$tmp/so" 2>"$tmp/se"
	rc=$?
	ok "$([ "$rc" -eq 1 ] && one_line "clocksource '$cs': the kernel has not settled" && [ ! -s "$tmp/so" ] &&
		[ "$(files)" = "./cs" ]; echo $?)" "clocksource $cs: exit $rc, refused: $(head -c 160 "$tmp/se")"
done
printf 'tsc\n' >"$tmp/cs"
CLOCKBENCH_TEST_CLOCKSOURCE_FILE="$tmp/cs" "$bin" "${quick[@]}" --json "$tmp/r.json" >"$tmp/so" 2>"$tmp/se"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$tmp/r.json" ]; echo $?)" "clocksource tsc: measured, exit $rc"
done_testing
