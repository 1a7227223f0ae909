#!/usr/bin/env bash
# tier: slow
# serial: host
# clocksource.t: the clocksource switch always puts things back: after the
# command, after INT, TERM and HUP, and after SIGKILL (on the next call);
# a live run is never disturbed, also over a clocksource kept by hand.
# Most tests use a fake clocksource folder (no root needed); the last ones
# flip this machine's real clocksource where it offers two, as root with
# DESTRUCTIVE=1 only.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]+"${pids[@]}"}"; do kill -KILL -- "-$p" "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
cs=host-scripts/clocksource
export CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm
mkdir -p "$CB_CS_DIR"
echo "tsc hpet acpi_pm " >"$CB_CS_DIR/available_clocksource"
echo tsc >"$CB_CS_DIR/current_clocksource"
: >"$CB_KVM_DEV"
cur() { cat "$CB_CS_DIR/current_clocksource"; }
# until_flag FLAG: a shell command that runs until the test makes the file FLAG (at most 60 s).
# shellcheck disable=SC2016 # the command's own $(seq ...)
until_flag() { printf 'for _ in $(seq 1200); do [ -e %q ] && exit 0; sleep 0.05; done; exit 1' "$1"; }
wait_for() { # wait_for VALUE: until the fake clocksource reads VALUE (5 s)
	for _ in $(seq 100); do [ "$(cur)" = "$1" ] && return 0; sleep 0.05; done
	return 1
}
# killed_run: a run of `set hpet -- sleep 30`, SIGKILLed (with its command)
# once it has switched; its pid in $p.  Nothing can catch SIGKILL.
killed_run() {
	local child
	"$cs" set hpet -- sleep 30 2>/dev/null &
	p=$!
	pids+=("$p")
	wait_for hpet
	child=$(pgrep -P "$p" | head -n1)
	kill -KILL "$p"
	wait "$p" 2>/dev/null
	[ -n "$child" ] && kill -KILL -- "-$child" 2>/dev/null
}

out=$("$cs" list 2>&1)
ok "$([ "$out" = "$(printf 'tsc *\nhpet\nacpi_pm')" ]; echo $?)" "list names every clocksource and marks the current one"

"$cs" set sundial -- true 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(cur)" = tsc ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ] && grep -q "unknown clocksource 'sundial'" "$tmp/err"; echo $?)" \
	"an unknown name is refused (exit 2), nothing changed, nothing saved"
"$cs" set hpet 2>/dev/null
ok "$([ $? -eq 2 ] && [ "$(cur)" = tsc ]; echo $?)" "set without a command or --keep is a usage error"

inside=$("$cs" set hpet -- cat "$CB_CS_DIR/current_clocksource" 2>/dev/null)
ok "$([ "$inside" = hpet ] && [ "$(cur)" = tsc ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ]; echo $?)" \
	"the command runs under hpet; tsc is back after it"
"$cs" set acpi_pm -- sh -c 'exit 7' 2>/dev/null
ok "$([ $? -eq 7 ] && [ "$(cur)" = tsc ]; echo $?)" "a failing command: its status is kept, and tsc restored"

# A background job inherits SIGINT ignored; --default-signal undoes that,
# as for a command run in the foreground of a terminal.
for sig in INT TERM HUP; do
	env --default-signal=INT "$cs" set hpet -- sleep 30 2>/dev/null &
	p=$!
	pids+=("$p")
	wait_for hpet
	child=$(pgrep -P "$p" | head -n1)
	kill -"$sig" "$p"
	wait "$p"
	rc=$?
	want=$((128 + $(kill -l "$sig")))
	ok "$([ "$rc" -eq "$want" ] && [ "$(cur)" = tsc ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ] && [ -n "$child" ] && ! kill -0 "$child" 2>/dev/null; echo $?)" \
		"SIG$sig: exit $rc (want $want), the command stopped, tsc restored, state removed"
done

# SIGKILL cannot be caught: the next invocation must notice and restore.
killed_run
ok "$([ "$(cur)" = hpet ] && [ -e "$CB_STATE_DIR/clocksource.state" ]; echo $?)" "after SIGKILL the clocksource is still hpet, with the state file"
"$cs" get >"$tmp/out" 2>"$tmp/err"
ok "$([ "$(cur)" = tsc ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ] && grep -q "interrupted run (pid $p" "$tmp/err" && grep -q "restoring 'tsc'" "$tmp/err"; echo $?)" \
	"the next command restores tsc and says so: $(head -n1 "$tmp/err" | cut -c1-160)"

# A killed run's owner can linger a moment as a zombie (or with its SIGKILL
# still pending): it is no longer a live run (found by make torture, where
# the next command refused with "another clockbench run holds it").
( sleep 0.1 & exec sleep 30 ) &
parent=$!
pids+=("$parent")
zombie=
for _ in $(seq 100); do
	zombie=$(pgrep -P "$parent" | head -n1)
	[ -n "$zombie" ] && [ "$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$zombie/status" 2>/dev/null)" = Z ] && break
	sleep 0.05
done
printf 'original=tsc\nowner=%s\nowner_start=%s\nsince=2026-11-30T00:00:00Z\n' "$zombie" \
	"$(bash -c '. host-scripts/lib/clocksource.sh; cs_proc_start "$1"' - "$zombie")" >"$CB_STATE_DIR/clocksource.state"
echo hpet >"$CB_CS_DIR/current_clocksource"
"$cs" get >"$tmp/out" 2>"$tmp/err"
ok "$([ -n "$zombie" ] && [ "$(cur)" = tsc ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ] && grep -q "interrupted run (pid $zombie" "$tmp/err"; echo $?)" \
	"an owner that is a zombie is gone: the next command restores tsc ($(head -n1 "$tmp/err" | cut -c1-120))"
kill -KILL "$parent" 2>/dev/null
wait "$parent" 2>/dev/null

# A state write cut short leaves no temporary file (found by make torture:
# an INT between the temporary's creation and its rename): the restore on
# the way out removes it, and the next locking command removes a SIGKILLed
# writer's, never a live one's.
leftover=$(bash -c '. host-scripts/lib/clocksource.sh
	cs_state_tmp=$(mktemp "$CB_STATE_DIR/.state.$$.XXXXXX"); echo original=ts >"$cs_state_tmp"
	cs_restore found; ls -A "$CB_STATE_DIR" | grep "^\.state\." || true')
ok "$([ -z "$leftover" ]; echo $?)" "an interrupted state write: the restore removes its temporary (left: ${leftover:-none})"
sleep 0 &
dead=$!
wait "$dead"
: >"$CB_STATE_DIR/.state.$dead.AbCdEf"
: >"$CB_STATE_DIR/.state.$$.GhIjKl"
"$cs" set hpet -- true 2>"$tmp/err"
ok "$([ ! -e "$CB_STATE_DIR/.state.$dead.AbCdEf" ] && [ -e "$CB_STATE_DIR/.state.$$.GhIjKl" ] && [ "$(cur)" = tsc ]; echo $?)" \
	"the next locking command removes a dead writer's temporary state file and keeps a live one's"
rm -f "$CB_STATE_DIR/.state.$$.GhIjKl"

# The restore hint names the command the user has: the checkout's script, or
# the installed one (a copy of the library outside any checkout).
# (the library with what it reads: lib/version.sh and bench/names.h, as
# make install lays them out).
mkdir -p "$tmp/inst/host-scripts/lib" "$tmp/inst/bench"
cp host-scripts/lib/clocksource.sh host-scripts/lib/version.sh "$tmp/inst/host-scripts/lib/"
cp bench/names.h "$tmp/inst/bench/"
hints="$(bash -c '. host-scripts/lib/clocksource.sh; echo "$CS_RESTORE"' 2>&1)|$(bash -c ". '$tmp/inst/host-scripts/lib/clocksource.sh'; echo \"\$CS_RESTORE\"" 2>&1)"
ok "$([ "$hints" = "host-scripts/clocksource restore|clockbench clocksource restore" ]; echo $?)" "the restore hint, checkout and installed (nothing on stderr): $hints"

# The guard: a process holding the KVM device is a guest we did not start.
sleep 30 3<"$CB_KVM_DEV" &
vm=$!
pids+=("$vm")
"$cs" set hpet -- true 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && [ "$(cur)" = tsc ] && grep -q "pid $vm (sleep)" "$tmp/err" && [ ! -e "$CB_STATE_DIR/clocksource.state" ]; echo $?)" \
	"refuses while a foreign VM runs, naming it: $(head -n1 "$tmp/err" | cut -c1-160)"
inside=$("$cs" set hpet --force -- cat "$CB_CS_DIR/current_clocksource" 2>"$tmp/err")
ok "$([ "$inside" = hpet ] && [ "$(cur)" = tsc ]; echo $?)" "--force overrides the guard, and still restores"
ok "$(tail -n1 "$tmp/err" | grep -q "ran across the switch.*pid $vm (sleep); 'clockbench heal'"; echo $?)" \
	"--force off tsc and back: its last line names the VM left without the stable bit and the heal: $(tail -n1 "$tmp/err" | cut -c1-100)"
inside=$(CB_OWN_PIDS=$vm "$cs" set hpet -- cat "$CB_CS_DIR/current_clocksource" 2>"$tmp/err")
ok "$([ "$inside" = hpet ] && ! grep -q "ran across" "$tmp/err"; echo $?)" \
	"a VM clockbench started itself (CB_OWN_PIDS) does not block, and is not named as left without the bit"
kill "$vm"
wait "$vm" 2>/dev/null

# Two runs at once: the second must not touch what the first saved.
"$cs" set hpet -- sleep 30 2>/dev/null &
p=$!
pids+=("$p")
wait_for hpet
"$cs" set acpi_pm -- true 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && [ "$(cur)" = hpet ] && grep -q 'another clockbench run' "$tmp/err"; echo $?)" "a second run is refused while the first holds the clocksource"
"$cs" restore 2>"$tmp/err"
ok "$([ $? -eq 1 ] && [ "$(cur)" = hpet ]; echo $?)" "restore refuses to pull the clocksource from under a live run"
kill -TERM "$p"
wait "$p" 2>/dev/null
ok "$([ "$(cur)" = tsc ]; echo $?)" "the first run restores tsc when it ends"

"$cs" set acpi_pm --keep 2>/dev/null
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(cur)" = acpi_pm ] && grep -q '^owner=manual' "$CB_STATE_DIR/clocksource.state"; echo $?)" "--keep leaves the change, with the original saved"
"$cs" status >"$tmp/out" 2>"$tmp/err"
ok "$([ "$(cur)" = acpi_pm ] && grep -q 'set by hand' "$tmp/err" && grep -q 'saved original: tsc' "$tmp/out"; echo $?)" "a kept change is reported, not undone behind the operator's back"
"$cs" restore 2>/dev/null
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(cur)" = tsc ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ]; echo $?)" "restore puts the original back"
"$cs" restore 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 0 ] && grep -q 'nothing to restore' "$tmp/err"; echo $?)" "restore with nothing saved is harmless"

# A clocksource kept by hand does not turn the guard off: a run over it
# records itself as owner, a second run is refused while it measures, and
# it ends on the kept one, the original still saved.
st=$CB_STATE_DIR/clocksource.state
"$cs" set acpi_pm --keep 2>/dev/null
"$cs" set hpet -- sh -c "$(until_flag "$tmp/measured")" 2>/dev/null &
p=$!
pids+=("$p")
wait_for hpet
ok "$(grep -qx "owner=$p" "$st" && grep -qx original=tsc "$st" && grep -qx kept=acpi_pm "$st"; echo $?)" \
	"a run over a kept acpi_pm records itself as owner, with the original tsc and the kept acpi_pm"
"$cs" set tsc -- true 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 1 ] && [ "$(cur)" = hpet ] && grep -qx "owner=$p" "$st" && grep -q 'another clockbench run' "$tmp/err"; echo $?)" \
	"a second run is refused while the first measures; the first's state stays (exit $rc)"
"$cs" restore 2>/dev/null
ok "$([ $? -eq 1 ] && [ "$(cur)" = hpet ] && grep -qx "owner=$p" "$st"; echo $?)" "restore refuses to pull a kept-over run's clocksource from under it"
touch "$tmp/measured"
wait "$p"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(cur)" = acpi_pm ] && grep -qx owner=manual "$st" && grep -qx original=tsc "$st" && ! grep -q '^kept=' "$st"; echo $?)" \
	"the run ends back on the kept acpi_pm, the original tsc still saved for restore"
# SIGKILLed over a kept one: the next command puts the kept one back.
killed_run
"$cs" get >/dev/null 2>"$tmp/err"
ok "$([ "$(cur)" = acpi_pm ] && grep -qx owner=manual "$st" && grep -qx original=tsc "$st" && grep -q "restoring 'acpi_pm'" "$tmp/err"; echo $?)" \
	"after a SIGKILL over a kept acpi_pm, the next command puts acpi_pm back, the original still saved"
# restore takes the state lock.
flock "$CB_STATE_DIR/lock" sh -c "$(until_flag "$tmp/unlock")" &
l=$!
pids+=("$l")
# Until the holder has the lock (a probe that cannot take it).
for _ in $(seq 200); do flock -n "$CB_STATE_DIR/lock" true || break; sleep 0.01; done
timeout 1 "$cs" restore 2>/dev/null
rc=$?
ok "$([ "$rc" -eq 124 ] && [ "$(cur)" = acpi_pm ] && [ -e "$st" ]; echo $?)" "restore waits while another command holds the state lock (exit $rc)"
touch "$tmp/unlock"
wait "$l"
"$cs" restore 2>/dev/null
rc=$?
ok "$([ "$rc" -eq 0 ] && [ "$(cur)" = tsc ] && [ ! -e "$st" ]; echo $?)" "then restore puts the original tsc back and removes the state"

if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	chmod 0755 "$tmp" "$CB_CS_DIR"
	chmod 0644 "$CB_CS_DIR/current_clocksource"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$cs" set hpet -- true 2>"$tmp/err"
	ok "$([ $? -eq 1 ] && grep -q 'needs root' "$tmp/err" && [ "$(cur)" = tsc ]; echo $?)" "without root: one line saying root is needed"
else
	skip "needs root and setpriv to test the non-root message"
fi

# status as a user during a live run: the state file is root's, 0600, so a
# user cannot tell a live run from a dead one, and says so (it said "an
# interrupted run (pid , since )").  Without root: a state file of one's
# own made unreadable stands in.
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	chmod 0755 "$tmp" "$CB_CS_DIR" "$CB_STATE_DIR"
	"$cs" set hpet -- sleep 30 2>/dev/null &
	p=$!
	pids+=("$p")
	wait_for hpet
	setpriv --reuid=65534 --regid=65534 --clear-groups "$cs" status >"$tmp/out" 2>"$tmp/err"
	rc=$?
	kill -TERM "$p"
	wait "$p" 2>/dev/null
else
	echo "owner=$$" >"$st"
	chmod 000 "$st"
	"$cs" status >"$tmp/out" 2>"$tmp/err"
	rc=$?
	rm -f "$st"
fi
ok "$([ "$rc" -eq 1 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] && grep -q 'cannot tell whether a run holds the clocksource' "$tmp/err" &&
	! grep -q 'interrupted run' "$tmp/err" && [ "$(cur)" = tsc ]; echo $?)" "status as a user who cannot read the state file says it cannot tell (exit $rc): $(cat "$tmp/err")"

# The CB_RUN mark copied by another user's process (the owner's pid and
# start time are public): after a SIGKILL of the run that process is not
# taken for the run's command, neither stopped nor waited for.
if command -v setpriv >/dev/null && [ "$(id -u)" -eq 0 ]; then
	"$cs" set hpet -- sleep 30 2>/dev/null &
	p=$!
	pids+=("$p")
	wait_for hpet
	mark="CB_RUN=$p:$(sed -n 's/^owner_start=//p' "$st")"
	# The run's command may not be started yet on a loaded machine: wait
	# for it (up to 20 s), or it lives on after the kill below.
	child=
	for _ in $(seq 400); do child=$(pgrep -P "$p" | head -n1); [ -n "$child" ] && break; sleep 0.05; done
	kill -KILL "$p"
	wait "$p" 2>/dev/null
	[ -n "$child" ] && kill -KILL -- "-$child" 2>/dev/null
	setpriv --reuid=65534 --regid=65534 --clear-groups env "$mark" sleep 30 &
	f=$!
	pids+=("$f")
	for _ in $(seq 400); do grep -qzx "$mark" "/proc/$f/environ" 2>/dev/null && break; sleep 0.05; done
	"$cs" get >/dev/null 2>"$tmp/err"
	ok "$([ "$(cur)" = tsc ] && kill -0 "$f" 2>/dev/null && ! grep -q 'left its command running' "$tmp/err" && grep -q "restoring 'tsc'" "$tmp/err"; echo $?)" \
		"a process of another user carrying a copied CB_RUN mark is not stopped and does not hold off the restore"
	kill -KILL "$f" 2>/dev/null
	wait "$f" 2>/dev/null
else
	skip "needs root and setpriv to run a process as another user"
fi

# The real thing, where this machine offers a second clocksource.
unset CB_CS_DIR CB_KVM_DEV
real=/sys/devices/system/clocksource/clocksource0
orig=$(cat "$real/current_clocksource" 2>/dev/null)
other=$(tr ' ' '\n' <"$real/available_clocksource" 2>/dev/null | grep -vx "$orig" | grep -v '^$' | head -n1)
if ! destructive; then
	skip "a real flip changes this host: root and DESTRUCTIVE=1 only"
	skip "a real flip changes this host: root and DESTRUCTIVE=1 only"
elif [ -z "$other" ]; then
	skip "a real flip needs two clocksources"
	skip "a real flip needs two clocksources"
elif [ -n "$(CB_STATE_DIR=$tmp/state bash -c '. host-scripts/lib/clocksource.sh; cs_foreign_vms')" ]; then
	skip "KVM guests are running on this machine: no real flip"
	skip "KVM guests are running on this machine: no real flip"
else
	inside=$("$cs" set "$other" -- cat "$real/current_clocksource" 2>/dev/null)
	ok "$([ "$inside" = "$other" ] && [ "$(cat "$real/current_clocksource")" = "$orig" ]; echo $?)" \
		"real flip: $orig -> $inside during the command -> $(cat "$real/current_clocksource") after"
	"$cs" set "$other" -- sleep 30 2>/dev/null &
	p=$!
	pids+=("$p")
	for _ in $(seq 100); do [ "$(cat "$real/current_clocksource")" = "$other" ] && break; sleep 0.05; done
	kill -TERM "$p"
	wait "$p" 2>/dev/null
	ok "$([ "$(cat "$real/current_clocksource")" = "$orig" ]; echo $?)" "real flip interrupted by TERM: $orig restored"
fi

# A copy of the commands whose bench/names.h lacks the shared paths: the
# bracket refuses to act, in one line (it would not know what it switches,
# nor where it keeps the original).
mkdir -p "$tmp/damaged/bench"
cp -r host-scripts "$tmp/damaged/"
grep -v -e CB_CS_SYSFS bench/names.h >"$tmp/damaged/bench/names.h"
err=$("$tmp/damaged/host-scripts/clocksource" status 2>&1 >/dev/null)
rc=$?
ok "$([ "$rc" -eq 1 ] && [ "$(wc -l <<<"$err")" -eq 1 ] && [[ $err == *"lacks the clocksource folder, the state folder or the KVM device: nothing switched" ]]; echo $?)" \
	"names.h without the clocksource folder: the bracket refuses to act (exit $rc): $err"
done_testing
