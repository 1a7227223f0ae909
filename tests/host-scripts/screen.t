#!/usr/bin/env bash
# tier: slow
# test-timeout: 900
# screen.t: what `make bench` shows, seen as its user sees it: compare on a
# fake clocksource folder (host only, short cells) typed into a 100-column
# tmux terminal, then the screen read back (capture-pane); the same in a
# pipe; -q and -v; one Ctrl-C typed mid-run.  Settings are options, as
# the user types them.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
N=19
[ -x bench/clockbench ] || skip_all "bench/clockbench not built" "$N"
command -v tmux >/dev/null || skip_all "tmux not installed (host-scripts/deps lists it for make check)" "$N"
tmp=$(mktemp -d)
sock=$tmp/tmux.sock
cleanup() {
	tmux -S "$sock" kill-server 2>/dev/null
	if [ "${KEEP:-0}" = 1 ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
# world NAME: a fake clocksource folder (hpet of hpet tsc acpi_pm), a
# state folder and a KVM device of its own, in $tmp/NAME: the runs of
# cases 1 to 3 run side by side, each in its world.
world() {
	mkdir -p "$tmp/$1/cs"
	echo "hpet tsc acpi_pm" >"$tmp/$1/cs/available_clocksource"
	echo hpet >"$tmp/$1/cs/current_clocksource"
	: >"$tmp/$1/kvm"
}
# in_world NAME CMD...: CMD in the world NAME.
in_world() { CB_CS_DIR=$tmp/$1/cs CB_STATE_DIR=$tmp/$1/state CB_KVM_DEV=$tmp/$1/kvm "${@:2}"; }
# cur NAME, state NAME: the world's current clocksource, its state file.
cur() { cat "$tmp/$1/cs/current_clocksource"; }
state() { echo "$tmp/$1/state/clocksource.state"; }
# Every other command here (refused ones) in a world too, never the host's.
world main
export CB_CS_DIR=$tmp/main/cs CB_STATE_DIR=$tmp/main/state CB_KVM_DEV=$tmp/main/kvm
cells='\[[0-9]+/[0-9]+\]' # the engine's "[n/48] monotonic vdso, 2 threads"
restore="clocksource (restored|back) to 'hpet'"
# One step of 48 cells of 0.015 s, the shortest cells for which the engine
# still shows its progress (it does for a step it estimates over 3 s, at
# 0.05 s a cell more than the cell's own time: 48 x 0.065 s); no TSC-rate
# check, which needs 5 s of its own.
settings=(--no-guest --duration 0.015 --tsc-rate-seconds 0 --threads '1,2')

# term NAME CLOCKSOURCES ROUNDS ARGS...: compare with the settings and
# ARGS typed into a new 100x50 terminal, in the world NAME; its exit status
# lands in $tmp/NAME.rc, the terminal stays for capture-pane.
term() {
	local name=$1 opts=("${settings[@]}" --clocksources "$2" --rounds "$3" --report-out "$tmp/report-$1")
	shift 3
	world "$name"
	{
		echo '#!/usr/bin/env bash'
		printf 'cd %q || exit 1\n' "$PWD"
		printf 'export CB_CS_DIR=%q CB_STATE_DIR=%q CB_KVM_DEV=%q\n' "$tmp/$name/cs" "$tmp/$name/state" "$tmp/$name/kvm"
		printf '%q ' host-scripts/bench "${opts[@]}" "$@"
		printf '\necho $? >%q\nexec sleep 900\n' "$tmp/$name.rc"
	} >"$tmp/$name.sh"
	chmod +x "$tmp/$name.sh"
	tmux -S "$sock" new-session -d -x 100 -y 50 -s "$name" "$tmp/$name.sh"
}
# wait_rc NAME: waits (at most 5 min) for the command of term NAME to end.
wait_rc() {
	for _ in $(seq 3000); do [ -s "$tmp/$1.rc" ] && break; sleep 0.1; done
	cat "$tmp/$1.rc" 2>/dev/null || echo none
}
# pane NAME [all]: the screen (or all it showed), wrapped lines joined.
pane() {
	if [ "${2:-}" = all ]; then
		tmux -S "$sock" capture-pane -p -J -S - -t "$1"
	else
		tmux -S "$sock" capture-pane -p -J -t "$1"
	fi | sed 's/[[:space:]]*$//'
}

# 1. The whole run in a terminal, in 2 rounds: what stays on the first
# screen after it.  Begun first; cases 2 and 3 run meanwhile.
term tty tsc,hpet,acpi_pm 2 "$tmp/results" t1
# 2. In a pipe (a log), begun now, judged below.
world pipe
(
	start=$SECONDS
	in_world pipe host-scripts/bench "${settings[@]}" --clocksources tsc,acpi_pm --rounds 1 --report-out "$tmp/report-pipe" \
		"$tmp/results" p1 2>&1 | cat >"$tmp/log"
	echo "$? $((SECONDS - start))" >"$tmp/pipe.rc"
) &
pipe_pid=$!
# 3. -q and -v, each in a world of its own, one after the other.
world q
in_world q host-scripts/bench -q "${settings[@]}" --clocksources tsc --rounds 1 --report-out "$tmp/report-q" \
	"$tmp/results" q1 >"$tmp/out-q" 2>"$tmp/err-q"
rc_q=$?
world v
in_world v host-scripts/bench -v "${settings[@]}" --clocksources tsc --rounds 1 --report-out "$tmp/report-v" \
	"$tmp/results" v1 >/dev/null 2>"$tmp/err-v"
rc_v=$?

rc=$(wait_rc tty)
pane tty >"$tmp/screen"
pane tty all >"$tmp/all"
diag "the screen after the run:" && while IFS= read -r l; do diag "|$l"; done <"$tmp/screen"
ok "$([ "$rc" = 0 ] && [ "$(cur tty)" = hpet ] && [ ! -e "$(state tty)" ]; echo $?)" \
	"compare in a terminal: exit $rc, hpet back, no state left"
ok "$(grep -q '^This host is on hpet' "$tmp/screen" && grep -q '^host clocksource  *1 thread' "$tmp/screen" &&
	grep -q '^Workloads' "$tmp/screen"; echo $?)" "the first screen after the run holds the verdict line and the tables"
ok "$([ "$(sed '/^$/d' "$tmp/screen" | tail -n1 | cut -c1-8)" = "report: " ]; echo $?)" \
	"its last line says where the report is: $(sed '/^$/d' "$tmp/screen" | tail -n1 | cut -c1-90)"
wide=$(awk 'length > 100' "$tmp/all" | wc -l)
ok "$([ "$wide" -eq 0 ]; echo $?)" "no line wider than 100 columns ($wide wrapped; widest $(awk '{ if (length > w) w = length } END { print w + 0 }' "$tmp/all"))"
n=$(grep -cE "$cells" "$tmp/all")
ok "$([ "$n" -eq 0 ]; echo $?)" "no engine cell line left on the terminal ($n)"
n=$(grep -cE "$restore" "$tmp/all")
ok "$([ "$n" -eq 1 ]; echo $?)" "the restore is announced once ($n times)"
n=$(grep -c '^clockbench: ' "$tmp/all")
ok "$([ "$n" -le 11 ]; echo $?)" "at most 11 progress lines for 2 rounds of 3 host steps ($n)"

# 2. In a pipe (a log): a line a step, never a line a cell, no escapes;
# two steps, so that once a run is not once a step.
wait "$pipe_pid"
read -r rc took <"$tmp/pipe.rc"
n=$(grep -cE "$cells" "$tmp/log")
# The engine writes a cell line at most once every 10 s: with 2 runs of it,
# at most took/10 + 2 of them, against one a cell (96) before.
ok "$([ "$rc" -eq 0 ] && [ "$n" -le $((took / 10 + 2)) ]; echo $?)" \
	"in a pipe: $n cell lines in $took s (at most one each 10 s), exit $rc"
ok "$([ "$(grep -c 'cells of 0.015 s' "$tmp/log")" -eq 2 ]; echo $?)" "each host step says its cells and time once"
ok "$(! grep -q $'[\r\033]' "$tmp/log"; echo $?)" "no carriage return or escape sequence in a log"
n=$(grep -cE "$restore" "$tmp/log")
ok "$([ "$n" -eq 1 ] && [ "$(tail -n1 "$tmp/log" | cut -c1-8)" = "report: " ]; echo $?)" \
	"in a pipe too: the restore said once ($n), the report's place last"

# 3. -q: errors and the final screen only; -v: a line a cell.
rc=$rc_q
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/err-q" ] && grep -q '^This host is on hpet' "$tmp/out-q" && [ "$(tail -n1 "$tmp/out-q" | cut -c1-8)" = "report: " ]; echo $?)" \
	"-q: nothing on stderr ($(wc -l <"$tmp/err-q") lines: $(head -n1 "$tmp/err-q" | cut -c1-60)), the verdict and the report's place (exit $rc)"
rc=$rc_v
n=$(grep -cE "$cells" "$tmp/err-v")
ok "$([ "$rc" -eq 0 ] && [ "$n" -eq 48 ] && grep -q '\[48/48\] tsc null, 2 threads' "$tmp/err-v"; echo $?)" "compare -v: a line a cell ($n of 48), exit $rc"
host-scripts/bench -q -v "$tmp/results" qv 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q -- '-q (QUIET=1) and -v (VERBOSE=1) exclude' "$tmp/err" && [ ! -e "$tmp/results/qv" ]; echo $?)" \
	"-q with -v: one line, exit $rc, nothing made: $(head -n1 "$tmp/err")"
# QUIET=yes cannot reach compare now: make refuses it (make -n: nothing
# run), and compare's -q takes no value.
make -n bench QUIET=yes >/dev/null 2>"$tmp/err"
rc=$?
host-scripts/bench --quiet=yes "$tmp/results" qy 2>"$tmp/err2"
rc2=$?
ok "$([ "$rc" -eq 2 ] && grep -q "QUIET=yes: expected 0 or 1" "$tmp/err" && [ "$rc2" -eq 2 ] && [ "$(wc -l <"$tmp/err2")" -eq 1 ] &&
	grep -q -- "--quiet takes no value" "$tmp/err2" && [ ! -e "$tmp/results/qy" ]; echo $?)" \
	"make bench QUIET=yes refused by make (exit $rc), compare --quiet=yes before anything is made (exit $rc2): $(head -n1 "$tmp/err2")"
bench/clockbench --progress loud --dry-run 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "\-\-progress 'loud'" "$tmp/err"; echo $?)" \
	"the engine: an unknown --progress is a usage error in one line (exit $rc)"

# 4. One Ctrl-C typed while the first step's engine measures: one line
# says it stopped, the clocksource is back.
term int tsc,acpi_pm 1 "$tmp/results" i1
seen=1
for _ in $(seq 600); do
	pane int | grep -qE "^clockbench: ($cells|48 cells)" && { seen=0; break; }
	sleep 0.1
done
tmux -S "$sock" send-keys -t int C-c
rc=$(wait_rc int)
pane int all >"$tmp/all"
after=$(sed -n '/host bench/,$p' "$tmp/all" | sed '1d;/^$/d')
diag "after the Ctrl-C:" && printf '%s\n' "$after" | while IFS= read -r l; do diag "|$l"; done
ours=$(printf '%s\n' "$after" | grep '^clockbench: ' | grep -vE "^clockbench: ($cells|48 cells)")
ok "$([ "$seen" -eq 0 ] && [ "$rc" = 130 ] && [ "$(cur int)" = hpet ] && [ ! -e "$(state int)" ] &&
	[ ! -e "$tmp/results/i1/host-acpi_pm.json" ]; echo $?)" "one Ctrl-C mid-step: exit $rc, hpet back, nothing further measured"
ok "$([ "$(printf '%s\n' "$ours" | wc -l)" -eq 1 ] && [[ $ours == "clockbench: stopped at the tsc step, clocksource back to 'hpet'; what was measured: "* ]]; echo $?)" \
	"one line of compare's and the bracket's says it stopped and that the clocksource is back"
ok "$([ "$(printf '%s\n' "$after" | wc -l)" -eq 1 ]; echo $?)" "and nothing else is left on the screen (no shell's 'Terminated')"
done_testing
