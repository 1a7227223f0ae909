#!/usr/bin/env bash
# tier: slow
# lab-freeze.t: a frozen L1 costs one attempt, not its group.  lab/run-lab
# drives a stand-in L1 (a QEMU of a few lines that writes L1's heartbeat
# and progress as lab/l1-init and lab/l1-run.sh do); the test stops it with
# SIGSTOP in state 2, as the emulator's L1 has been seen to freeze, and
# checks that the supervisor notices within the heartbeat's limit, kills
# it, keeps its evidence, and boots a fresh L1 for the states not yet done
# (the stuck one at its next attempt); then that a freeze on the state's
# last attempt fails the lab with its evidence kept.  The attempt count
# across L1s (labtable.py started, keep) is checked without a boot.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
pids=
# Every stand-in this test started is continued and ended, by its pid.
cleanup() {
	local p
	for p in $pids $(cat "$tmp"/*.pids.qmp 2>/dev/null); do kill -CONT "$p" 2>/dev/null; kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT

# The attempt count across L1s, from the progress log alone.
printf '%s\n' "1 boot 1-2 for 1,2" "2 start state 1" "3 done state 1" "4 start state 2" >"$tmp/progress.log"
ok "$([ "$(python3 lab/labtable.py started "$tmp/progress.log" 2)" = 1 ] && [ "$(python3 lab/labtable.py started "$tmp/progress.log" 1)" = 1 ] &&
	[ "$(python3 lab/labtable.py started "$tmp/nothing" 2)" = 0 ]; echo $?)" \
	"labtable.py started: the attempts of a state an earlier L1 made, so the next L1 goes on from the next"
echo "1 boot 1-2-r1 for 2" >>"$tmp/progress.log"
ok "$(python3 -c 'import sys; sys.path[:0] = ["lab", "contract"]; import labtable
a = labtable.attempts(open(sys.argv[1]).read())
sys.exit(not [(x.boot, x.n, x.end) for x in a] == [("1-2", 1, "done"), ("1-2", 2, None)])' "$tmp/progress.log"; echo $?)" \
	"labtable.attempts: each attempt with the L1 that ran it and how it ended (none: frozen)"
echo "9 boot ../../etc for 2" >>"$tmp/progress.log"
echo "9 start state 2" >>"$tmp/progress.log"
ok "$(python3 -c 'import sys; sys.path[:0] = ["lab", "contract"]; import labtable
a = labtable.attempts(open(sys.argv[1]).read())
sys.exit(not a[-1].boot == "1-2-r1")' "$tmp/progress.log"; echo $?)" \
	"an L1 name in the progress log that is not one is not taken (it would name files)"
mkdir -p "$tmp/k/state-2"
touch "$tmp/k/state-2.log" "$tmp/k/state-2.ps.txt"
python3 lab/labtable.py keep "$tmp/k" 2 1
ok "$([ -d "$tmp/k/state-2.attempt-1" ] && [ -f "$tmp/k/state-2.attempt-1.log" ] && [ -f "$tmp/k/state-2.attempt-1.ps.txt" ] &&
	[ ! -e "$tmp/k/state-2.log" ]; echo $?)" "labtable.py keep: a state's files become its attempt's: $(ls "$tmp/k" | tr '\n' ' ')"

# The verdict on a frozen L1's CPU, from its monitor's words: the L1 that
# froze on 2026-12-04 (fixtures/lab/frozen-cpu), a live one read the same
# way (live-cpu), and the frozen one edited where each verdict turns.
ok "$(python3 - <<'PY'; echo $?
import sys
sys.path[:0] = ["lab"]
import l1watch
fx = "tests/host-scripts/fixtures/lab/"
r, a = (open(fx + "frozen-cpu/" + f).read() for f in ("registers.txt", "lapic.txt"))
lr, la = (open(fx + "live-cpu/" + f).read() for f in ("registers.txt", "lapic.txt"))
cases = [
    (r, a, "a stranded timer interrupt: CPU 0 halted with interrupts on (RIP ffffffff81a592eb)"),
    (lr, la, "running (RIP "),
    (r.replace("RFL=00000246", "RFL=00000046"), a, "halted with interrupts off"),
    (r, a.replace("IRR\t 236", "IRR\t (none)"), "halted with interrupts on (RIP ffffffff81a592eb) and nothing pending"),
    (r, a.replace("PPR 0x10", "PPR 0xf0"), "halted with interrupts on (RIP ffffffff81a592eb) and nothing pending"),
    (r, a.replace("IRR\t 236", "IRR\t 48"), "an interrupt stranded: CPU 0 halted with interrupts on (RIP ffffffff81a592eb), vector(s) 48"),
    ("", "", "unknown"),
    # a CPU in 32-bit code (QEMU's monitor says EIP and EFL there)
    (r.replace("RIP=ffffffff81a592eb", "EIP=c0a592eb").replace("RFL=00000246", "EFL=00000246"), a,
     "a stranded timer interrupt: CPU 0 halted with interrupts on (RIP c0a592eb)"),
]
bad = [(want, got) for reg, lap, want in cases for got in [l1watch.judge_cpu(reg, lap)] if not got.startswith(want)]
bad and print(bad, file=sys.stderr)
sys.exit(bool(bad))
PY
)" "l1watch.judge_cpu: a stranded timer interrupt said only where the CPU halted with interrupts on and the timer's vector waits above PPR"

# The same reading from a real QEMU's monitor over QMP: a machine held at
# reset (-S: nothing runs), its CPU at the reset vector.
if command -v qemu-system-x86_64 >/dev/null; then
	got=$(python3 - "$tmp" <<'PY'
import os, subprocess, sys
sys.path[:0] = ["lab", "host-scripts", "contract"]
import l1watch
sock = os.path.join(sys.argv[1], "real.qmp")
q = subprocess.Popen(["qemu-system-x86_64", "-nodefaults", "-display", "none", "-S", "-accel", "tcg", "-M", "pc",
                      "-qmp", "unix:%s,server=on,wait=off" % sock], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    text, verdict = l1watch.cpu_state(sock, q)
finally:
    q.kill()
    q.wait()
print("%s|%s" % (verdict, "LVTT" in (text or "") and "HLT=" in (text or "")))
PY
)
	ok "$([ "${got%%|*}" = "running (RIP 0000fff0, not halted): L1 spins, or runs a guest that does" ] && [ "${got##*|}" = True ]; echo $?)" \
		"l1watch.cpu_state reads a real QEMU's CPU and local APIC over QMP: $got"
else
	skip "l1watch.cpu_state on a real QEMU: no qemu-system-x86_64 (make deps)"
fi

kernel=$(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort -V | tail -n1)
if [ "$(id -u)" -ne 0 ] || [ -z "$kernel" ] || [ ! -d "/lib/modules/${kernel##*/vmlinuz-}" ] || [ ! -f build/guest/initramfs.cpio ]; then
	for _ in $(seq 15); do skip "stand-in L1 boots: need root, a /boot kernel with modules and make guest-initramfs"; done
	done_testing
	exit
fi

# The stand-in L1: records its pid and command line, writes a heartbeat
# every second (in its own loop, so SIGSTOP stops it) and the progress
# lines l1-run.sh writes; in state LAB_FREEZE_IN it goes on beating and
# never ends the state (the test stops it there); otherwise it ends
# every state done and says LAB-L1-DONE on its console.
mkdir -p "$tmp/bin"
# The stand-in L1's monitor: a QMP server (its own process, so a SIGSTOP
# to the stand-in leaves it answering) that prints the CPU and local APIC
# of the L1 that froze on 2026-12-04 (fixtures/lab/frozen-cpu).
cat >"$tmp/bin/qmp-standin" <<'QMP'
#!/usr/bin/python3
import json, os, socket, sys
path, fx = sys.argv[1], sys.argv[2]
text = {c: open(os.path.join(fx, f)).read() for c, f in (("info registers", "registers.txt"), ("info lapic", "lapic.txt"))}
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(4)
while True:
    c, _ = srv.accept()
    f = c.makefile("rwb")
    f.write(b'{"QMP": {"version": {}, "capabilities": []}}\n')
    f.flush()
    for line in f:
        m = json.loads(line)
        arg = m.get("arguments", {}).get("command-line")
        f.write(json.dumps({"return": text.get(arg, "") if arg else {}}).encode() + b"\n")
        f.flush()
    c.close()
QMP
chmod +x "$tmp/bin/qmp-standin"

cat >"$tmp/bin/qemu-system-x86_64" <<'QEMU'
#!/bin/bash
set -u
append= qmp=
for a; do
	case $a in file,id=serial0,path=*) console=${a#*path=} ;; esac
	for w in $a; do
		case $w in
		clockbench.out=*) out=${w#*=} ;; clockbench.boot=*) boot=${w#*=} ;;
		clockbench.states=*) states=${w#*=} ;; clockbench.heartbeat=*) hb=${w#*=} ;;
		esac
	done
	case $a in unix:*,server=on,wait=off) qmp=${a#unix:} qmp=${qmp%%,*} ;; esac
	[ "${prev:-}" = -append ] && append=$a
	prev=$a
done
echo "$boot $$ $states" >>"$LAB_PIDS"
echo "$boot $append" >>"$LAB_PIDS.append"
"${0%/*}/qmp-standin" "$qmp" "$LAB_CPU_FX" </dev/null >/dev/null 2>&1 &
echo "$!" >>"$LAB_PIDS.qmp"
echo "stand-in L1 $boot booting" >"$console"
i=0
beat() { i=$((i + 1)); echo "$i $i.00" >"$out/$hb.tmp" && mv -f "$out/$hb.tmp" "$out/$hb"; sleep 1; }
beat
echo "$(date +%s) boot $boot for $states" >>"$out/progress.log"
for n in ${states//,/ }; do
	echo "$(date +%s) start state $n" >>"$out/progress.log"
	echo "stand-in L1 $boot: state $n" >>"$console"
	if [ "$n" = "$LAB_FREEZE_IN" ] && { [ "$LAB_FREEZE_ALWAYS" = 1 ] || [ "${boot%-r*}" = "$boot" ]; }; then
		echo "PID STAT ARGS (stand-in, state $n)" >"$out/state-$n.ps.txt"
		echo "partial" >"$out/state-$n.log"
		while :; do beat; done
	fi
	beat
	echo "$(date +%s) done state $n" >>"$out/progress.log"
done
echo "LAB-L1-DONE rc=0" >>"$console"
QEMU
chmod +x "$tmp/bin/qemu-system-x86_64"

# run_frozen ID ALWAYS: run-lab for states 1 and 2 (one L1 configuration)
# with the stand-in, a heartbeat limit of 5 s; each L1 that reaches state 2
# (the first only, or every one with ALWAYS=1) is stopped with SIGSTOP
# there.  Sets rc; the stop times in $tmp/ID.stopped.
limit=5
run_frozen() {
	local id=$1 always=$2 rp seen=0 t line inst pid st
	: >"$tmp/$id.pids"
	PATH=$tmp/bin:$PATH LAB_PIDS=$tmp/$id.pids LAB_CPU_FX=$PWD/tests/host-scripts/fixtures/lab/frozen-cpu LAB_FREEZE_IN=2 LAB_FREEZE_ALWAYS=$always \
		lab/run-lab --states 1,2 --heartbeat-limit "$limit" --l1-timeout 60 "$tmp/r" "$id" >"$tmp/$id.out" 2>"$tmp/$id.err" &
	rp=$!
	pids="$pids $rp"
	# Stop each stand-in that reaches state 2 (SIGSTOP, from outside).
	for t in $(seq 600); do
		kill -0 "$rp" 2>/dev/null || break
		while read -r inst pid st; do
			if grep -q "^$inst " "$tmp/$id.stopped" 2>/dev/null; then continue; fi
			[ "$always" = 1 ] || [ "$inst" = 1-2 ] || continue
			grep -q "stand-in L1 $inst: state 2" "$tmp/r/$id/l1-$inst.console.log" 2>/dev/null || continue
			sleep 1
			kill -STOP "$pid" && echo "$inst $pid $(date +%s.%N)" >>"$tmp/$id.stopped"
			pids="$pids $pid"
		done <"$tmp/$id.pids"
		sleep 0.2
	done
	wait "$rp"
	rc=$?
}

run_frozen once 0
err=$(cat "$tmp/once.err")
read -r _ pid stopped <"$tmp/once.stopped"
rec=$tmp/r/once/l1-1-2.frozen
detected=$(sed -n 's/^detected_at \([^ ]*\) .*/\1/p' "$rec" 2>/dev/null)
took=$(($(date -d "$detected" +%s 2>/dev/null || echo 0) - ${stopped%.*}))
ok "$([ -f "$rec" ] && [ "$took" -ge "$((limit - 1))" ] && [ "$took" -le "$((limit + 3))" ]; echo $?)" \
	"a stand-in L1 stopped in state 2 is found frozen $took s after its SIGSTOP (heartbeat limit $limit s, a beat a second, a look a second)"
ok "$(! kill -0 "$pid" 2>/dev/null; echo $?)" "the frozen L1's QEMU was killed, not left stopped"
ok "$(grep -qx "state 2 attempt 1" "$rec" && grep -qx "console l1-1-2.console.log" "$rec" && grep -qx "snapshot state-2.attempt-1.ps.txt" "$rec" &&
	grep -q "^froze_at 20.*L1's uptime then [0-9]* s" "$rec" && grep -q "^qemu used [0-9.]* s of CPU in the [0-9]* s without a heartbeat; threads .*:T" "$rec" && grep -q "^note the emulator's behaviour.*never a hypervisor's" "$rec"; echo $?)" \
	"its record: the state and attempt it froze in, when, QEMU's CPU time while silent and its threads (stopped: T), its console and last process snapshot, the emulator's: $(tr '\n' '|' <"$rec")"
ok "$(grep -q "^cpu a stranded timer interrupt: CPU 0 halted with interrupts on (RIP ffffffff81a592eb) while its local APIC holds the one-shot timer's vector 236 pending (IRR)" "$rec" &&
	grep -qx "cpu_state l1-1-2.frozen.cpu.txt" "$rec" && grep -q '^IRR	 236' "$tmp/r/once/l1-1-2.frozen.cpu.txt" && grep -q 'HLT=1' "$tmp/r/once/l1-1-2.frozen.cpu.txt"; echo $?)" \
	"before the kill, the frozen L1's CPU and local APIC are read through its QEMU's monitor and judged: $(grep '^cpu ' "$rec" | head -n1 | cut -c1-120)"
ok "$(grep -q '^1-2 .* nohz=off highres=off' "$tmp/once.pids.append" && [ "$(grep -c 'nohz=off highres=off' "$tmp/once.pids.append")" = 2 ]; echo $?)" \
	"every L1 boots with a periodic tick (nohz=off highres=off), against a stranded timer interrupt"
ok "$([ -s "$tmp/r/once/l1-1-2.console.log" ] && [ -f "$tmp/r/once/state-2.attempt-1.ps.txt" ] && [ -f "$tmp/r/once/state-2.attempt-1.log" ] &&
	[ ! -e "$tmp/r/once/state-2.ps.txt" ]; echo $?)" "the frozen boot's console kept, its attempt's log and process snapshot kept as attempt 1's"
argv2=$(sed -n 2p "$tmp/once.pids")
ok "$([ "$(wc -l <"$tmp/once.pids")" = 2 ] && [ "$argv2" != "${argv2#1-2-r1 }" ] && [ "${argv2##* }" = 2 ] &&
	[ "$(grep -c 'start state 1$' "$tmp/r/once/progress.log")" = 1 ] && grep -q 'done state 2$' "$tmp/r/once/progress.log"; echo $?)" \
	"a fresh L1 (1-2-r1) was booted for state 2 alone; state 1, done in the frozen one, was not run again: $(tr '\n' '|' <"$tmp/once.pids")"
ok "$(grep -q "lab: 1 L1 froze in state 2 and was replaced by a fresh one: the emulator's behaviour (QEMU TCG), never a hypervisor's" <<<"$err"; echo $?)" \
	"the summary counts it: $(grep 'froze in state 2 and' <<<"$err")"
ok "$(grep -q '^ok [0-9]* - the frozen L1 1-2: its record and its console kept' "$tmp/once.out" &&
	grep -q "^# state 2: attempt 1 ended with L1 1-2 frozen (EMULATED)" "$tmp/once.out"; echo $?)" \
	"lab/assert.py says the frozen L1 and checks its evidence kept"
ok "$([ "$rc" = 1 ] && ! grep -q "froze in state 2, attempt 1; its last attempt" <<<"$err"; echo $?)" \
	"run-lab exit $rc: the assertions fail for want of a real L1's results, not for the freeze"

# Frozen in every L1 that reaches state 2: its attempts (the table's) spent, the lab fails.
att=$(python3 lab/labtable.py plan 2 | cut -f7)
last=1-2-r$((att - 1))
run_frozen always 1
err=$(cat "$tmp/always.err")
ok "$([ "$rc" = 1 ] && [ "$(wc -l <"$tmp/always.pids")" = "$att" ] && grep -q "L1 $last froze in state 2, attempt $att; its last attempt: the state failed" <<<"$err"; echo $?)" \
	"a freeze on the state's last attempt fails the lab (exit $rc), after $att L1s: $(grep 'froze in' <<<"$err" | tr '\n' '|')"
ok "$(grep -qx "state 2 attempt $att" "$tmp/r/always/l1-$last.frozen" && grep -qx "then nothing" "$tmp/r/always/l1-$last.frozen" &&
	[ -f "$tmp/r/always/state-2.ps.txt" ] && [ -f "$tmp/r/always/state-2.attempt-1.ps.txt" ] && [ -s "$tmp/r/always/l1-$last.console.log" ]; echo $?)" \
	"every frozen boot kept: the last attempt's files under the state's own names, the first's as attempt 1's"
ok "$(grep -q "lab: $att L1s froze in state 2\( and state 2\)*; $((att - 1)) \\(was\\|were\\) replaced by a fresh one, 1 froze on its state's last attempt" <<<"$err" &&
	grep -q '^not ok [0-9]* - state 2 (.*): its harness run succeeded' "$tmp/always.out"; echo $?)" \
	"the summary counts them; state 2's harness run is asserted failed"
# SIGTERM (a CI job's time limit) ends run-lab as Ctrl-C does, and the L1
# it runs with it (a live one here: it beats in state 2 and never ends it).
: >"$tmp/term.pids"
PATH=$tmp/bin:$PATH LAB_PIDS=$tmp/term.pids LAB_CPU_FX=$PWD/tests/host-scripts/fixtures/lab/frozen-cpu LAB_FREEZE_IN=2 LAB_FREEZE_ALWAYS=1 \
	lab/run-lab --states 2 --heartbeat-limit 60 --l1-timeout 120 "$tmp/r" term >"$tmp/term.out" 2>"$tmp/term.err" &
rp=$!
pids="$pids $rp"
for _ in $(seq 100); do grep -q "start state 2" "$tmp/r/term/progress.log" 2>/dev/null && break; sleep 0.2; done
read -r _ tpid _ <"$tmp/term.pids"
pids="$pids $tpid"
kill -TERM "$rp"
t0=$(date +%s)
wait "$rp"
rc=$?
sleep 1
ok "$([ "$rc" = 130 ] && [ "$(($(date +%s) - t0))" -le 15 ] && [ -n "$tpid" ] && ! kill -0 "$tpid" 2>/dev/null && grep -q "interrupted; what ran is in" "$tmp/term.err"; echo $?)" \
	"SIGTERM to run-lab: exit $rc, its L1 ended with it: $(tail -n1 "$tmp/term.err")"

left=
for p in $(cut -d' ' -f2 "$tmp/once.pids" "$tmp/always.pids" "$tmp/term.pids"); do kill -0 "$p" 2>/dev/null && left="$left $p"; done
# (the QMP stand-ins are this test's own, ended at its exit)
ok "$([ -z "$left" ]; echo $?)" "no stand-in L1 is left running or stopped${left:+: $left}"
done_testing
