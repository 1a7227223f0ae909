#!/usr/bin/env bash
# tier: slow
# test-timeout: 900
# screen.t: what `make bench` shows, seen as its user sees it: compare on a
# fake clocksource folder (host only, short cells) typed into a 100-column
# tmux terminal, then the screen read back (capture-pane); the same in a
# pipe; QUIET=1 and -v; one Ctrl-C typed mid-run.
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
export CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm
mkdir -p "$CB_CS_DIR"
echo "hpet tsc acpi_pm" >"$CB_CS_DIR/available_clocksource"
echo hpet >"$CB_CS_DIR/current_clocksource"
: >"$CB_KVM_DEV"
cur() { cat "$CB_CS_DIR/current_clocksource"; }
cells='\[[0-9]+/[0-9]+\]' # the engine's "[n/48] monotonic vdso, 2 threads"
restore="clocksource (restored|back) to 'hpet'"
# One step of 48 cells of 0.05 s: about 5 s (the engine shows progress
# for a step over 3 s); no TSC-rate check, which needs 5 s of its own; one
# round unless a case asks for more.
settings=(GUEST=0 DURATION=0.05 TSC_RATE_SECONDS=0 "THREADS=1,2" ROUNDS=1)

# term NAME CLOCKSOURCES ARGS...: compare ARGS typed into a new 100x50
# terminal; its exit status lands in $tmp/NAME.rc, the terminal stays for
# capture-pane.
term() {
	local name=$1 env=("${settings[@]}" CLOCKSOURCES="$2")
	shift 2
	{
		echo '#!/usr/bin/env bash'
		printf 'cd %q || exit 1\n' "$PWD"
		printf 'export CB_CS_DIR=%q CB_STATE_DIR=%q CB_KVM_DEV=%q REPORT_OUT=%q\n' \
			"$CB_CS_DIR" "$CB_STATE_DIR" "$CB_KVM_DEV" "$tmp/report-$name"
		printf 'export %q\n' "${env[@]}"
		printf '%q ' host-scripts/compare "$@"
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
# screen after it.
term tty tsc,hpet,acpi_pm --rounds 2 "$tmp/results" t1
rc=$(wait_rc tty)
pane tty >"$tmp/screen"
pane tty all >"$tmp/all"
diag "the screen after the run:" && while IFS= read -r l; do diag "|$l"; done <"$tmp/screen"
ok "$([ "$rc" = 0 ] && [ "$(cur)" = hpet ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ]; echo $?)" \
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

# 2. In a pipe (a log): a line a step, never a line a cell, no escapes.
start=$SECONDS
env "${settings[@]}" CLOCKSOURCES=tsc,hpet,acpi_pm REPORT_OUT="$tmp/report-pipe" \
	host-scripts/compare "$tmp/results" p1 2>&1 | cat >"$tmp/log"
rc=$?
took=$((SECONDS - start))
n=$(grep -cE "$cells" "$tmp/log")
# The engine writes a cell line at most once every 10 s: with 3 runs of it,
# at most took/10 + 3 of them, against one a cell (144) before.
ok "$([ "$rc" -eq 0 ] && [ "$n" -le $((took / 10 + 3)) ]; echo $?)" \
	"in a pipe: $n cell lines in $took s (at most one each 10 s), exit $rc"
ok "$([ "$(grep -c 'cells of 0.05 s' "$tmp/log")" -eq 3 ]; echo $?)" "each host step says its cells and time once"
ok "$(! grep -q $'[\r\033]' "$tmp/log"; echo $?)" "no carriage return or escape sequence in a log"
n=$(grep -cE "$restore" "$tmp/log")
ok "$([ "$n" -eq 1 ] && [ "$(tail -n1 "$tmp/log" | cut -c1-8)" = "report: " ]; echo $?)" \
	"in a pipe too: the restore said once ($n), the report's place last"

# 3. QUIET=1: errors and the final screen only; -v: a line a cell.
env "${settings[@]}" QUIET=1 CLOCKSOURCES=tsc REPORT_OUT="$tmp/report-q" \
	host-scripts/compare "$tmp/results" q1 >"$tmp/out" 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ ! -s "$tmp/err" ] && grep -q '^This host is on hpet' "$tmp/out" && [ "$(tail -n1 "$tmp/out" | cut -c1-8)" = "report: " ]; echo $?)" \
	"QUIET=1: nothing on stderr ($(wc -l <"$tmp/err") lines: $(head -n1 "$tmp/err" | cut -c1-60)), the verdict and the report's place (exit $rc)"
env "${settings[@]}" CLOCKSOURCES=tsc REPORT_OUT="$tmp/report-v" \
	host-scripts/compare -v "$tmp/results" v1 >/dev/null 2>"$tmp/err"
rc=$?
n=$(grep -cE "$cells" "$tmp/err")
ok "$([ "$rc" -eq 0 ] && [ "$n" -eq 48 ] && grep -q '\[48/48\] tsc null, 2 threads' "$tmp/err"; echo $?)" "compare -v: a line a cell ($n of 48), exit $rc"
QUIET=1 VERBOSE=1 host-scripts/compare "$tmp/results" qv 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'QUIET=1 (-q) and VERBOSE=1 (-v) exclude' "$tmp/err" && [ ! -e "$tmp/results/qv" ]; echo $?)" \
	"QUIET=1 with VERBOSE=1: one line, exit $rc, nothing made: $(head -n1 "$tmp/err")"
QUIET=yes host-scripts/compare "$tmp/results" qy 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && grep -q "QUIET=yes: expected 0 or 1" "$tmp/err" && [ ! -e "$tmp/results/qy" ]; echo $?)" \
	"QUIET=yes refused before anything is made (exit $rc)"
CLOCKBENCH_PROGRESS=loud bench/clockbench --dry-run 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q "CLOCKBENCH_PROGRESS 'loud'" "$tmp/err"; echo $?)" \
	"the engine: an unknown CLOCKBENCH_PROGRESS is a usage error in one line (exit $rc)"

# 4. One Ctrl-C typed while the first step's engine measures: one line
# says it stopped, the clocksource is back.
term int tsc,acpi_pm "$tmp/results" i1
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
ok "$([ "$seen" -eq 0 ] && [ "$rc" = 130 ] && [ "$(cur)" = hpet ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ] &&
	[ ! -e "$tmp/results/i1/host-acpi_pm.json" ]; echo $?)" "one Ctrl-C mid-step: exit $rc, hpet back, nothing further measured"
ok "$([ "$(printf '%s\n' "$ours" | wc -l)" -eq 1 ] && [[ $ours == "clockbench: stopped at the tsc step, clocksource back to 'hpet'; what was measured: "* ]]; echo $?)" \
	"one line of compare's and the bracket's says it stopped and that the clocksource is back"
ok "$([ "$(printf '%s\n' "$after" | wc -l)" -eq 1 ]; echo $?)" "and nothing else is left on the screen (no shell's 'Terminated')"
done_testing
