#!/usr/bin/env bash
# tier: slow
# serial: host
# test-timeout: 300
# torture.t: the torture driver itself, briefly, on a fake clocksource
# folder (no root needed): a clean short run, and a run over a copy of the
# harness whose TERM skips the restore must fail.  Then the fixes torture
# found: a SIGKILLed run's command is stopped before the next command
# restores under it; an interrupted host measurement leaves no temporaries.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
[ -x bench/clockbench ] || skip_all "bench/clockbench not built" 5
tmp=$(mktemp -d)
bg='' left=''
cleanup() {
	[ -z "$bg" ] || kill -KILL -- "-$bg" "$bg" 2>/dev/null
	[ -z "$left" ] || kill -KILL "$left" 2>/dev/null # a command nobody stopped
	rm -rf "$tmp"
}
trap cleanup EXIT
alive() { # alive PID: running, not a zombie waiting for its reaper
	local s
	s=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${s#Z}" = "$s" ]
}

extras=--no-extras
[ "$(id -u)" -eq 0 ] && extras=
tests/torture/torture --modes fake --iterations 4 --seed 7 $extras >"$tmp/out" 2>&1
rc=$?
ok "$([ "$rc" -eq 0 ] && grep -q '^| leftovers  *| 0 ' "$tmp/out" && grep -q 'seed 7 (replay: TORTURE_SEED=7)' "$tmp/out" &&
	[ "$(grep -c '^\[ *[0-9]/4 fake\]' "$tmp/out")" -eq 4 ]; echo $?)" \
	"4 fake iterations${extras:+ (no extras: not root)}: exit $rc, leftovers 0, the seed printed, progress per iteration"
[ "$rc" -eq 0 ] || sed 's/^/# /' "$tmp/out"

# A copy of the harness whose TERM trap (the bracket's, in
# lib/clocksource.sh) exits without the restore.
mkdir "$tmp/top"
for d in analysis bench build contract guest-init; do ln -s "$PWD/$d" "$tmp/top/$d"; done
cp -r host-scripts "$tmp/top/"
sed -i "s/trap 'cs_caught 143' TERM/trap 'trap - EXIT; exit 143' TERM/" "$tmp/top/host-scripts/lib/clocksource.sh"
tests/torture/torture --top "$tmp/top" --modes fake --iterations 1 --seed 1 --steps switch --signals TERM \
	--after-switch 0.2 --no-extras >"$tmp/out" 2>&1
rc=$?
ok "$([ "$rc" -eq 1 ] && grep -q "the step did not restore 'tsc'" "$tmp/out" && grep -q '^| leftovers  *| [1-9]' "$tmp/out"; echo $?)" \
	"a bracket that skips the restore on TERM: torture exits $rc (want 1) and names it"
work=$(sed -n 's/.*; work folder \(.*\)$/\1/p' "$tmp/out")
case "$work" in /tmp/clockbench-torture.*) rm -rf "$work" ;; esac # kept for its logs

# SIGKILL of a run (its process group, as kill -9 -PGID does) while its
# command, in a session of its own, still measures: the next command stops
# the command first, then restores, and says so.
export CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm
mkdir -p "$CB_CS_DIR"
echo "tsc hpet" >"$CB_CS_DIR/available_clocksource"
echo tsc >"$CB_CS_DIR/current_clocksource"
: >"$CB_KVM_DEV"
cat >"$tmp/cmd" <<EOF2
#!/bin/sh
trap 'echo stopped >"$tmp/cmd.out"; exit 143' TERM
while :; do sleep 0.05; done
EOF2
chmod +x "$tmp/cmd"
setsid host-scripts/clocksource set hpet -- "$tmp/cmd" >/dev/null 2>&1 &
bg=$!
# The command itself (its own session), not the bracket whose command
# line also names it: waiting on that one let the kill land before the
# command began (a CI run under load, 2026-12-01: "pid none").
for _ in $(seq 600); do [ "$(cat "$CB_CS_DIR/current_clocksource")" = hpet ] && pgrep -f "^/bin/sh $tmp/cmd" >/dev/null && break; sleep 0.05; done
kill -KILL -- "-$bg"
wait "$bg" 2>/dev/null
bg=
left=$(pgrep -f "^/bin/sh $tmp/cmd" | head -n1)
host-scripts/clocksource status >/dev/null 2>"$tmp/err"
ok "$([ -n "$left" ] && ! alive "$left" && [ "$(cat "$tmp/cmd.out" 2>/dev/null)" = stopped ] &&
	[ "$(cat "$CB_CS_DIR/current_clocksource")" = tsc ] && [ ! -e "$CB_STATE_DIR/clocksource.state" ] &&
	grep -q 'left its command running' "$tmp/err"; echo $?)" \
	"after a SIGKILLed run, the next command stops its command (pid ${left:-none}) before restoring tsc: $(head -n1 "$tmp/err" | cut -c1-120)"
ok "$(grep -n 'left its command running' "$tmp/err" | cut -d: -f1 | head -n1 | { read -r a; b=$(grep -n 'restoring' "$tmp/err" | cut -d: -f1 | head -n1); [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ]; }; echo $?)" \
	"the command is stopped before the clocksource is put back"

# A host measurement stopped by TERM leaves none of the engine's
# temporaries (NAME.tmp.XXXXXX) in the run folder.
mkdir -p "$tmp/results/r1"
setsid host-scripts/bench-host --duration 1 --threads 1 --clocks monotonic --methods vdso --run-dir "$tmp/results/r1" \
	--clocksource tsc >/dev/null 2>&1 &
bg=$!
temps() { find "$tmp/results/r1" -name '*.tmp.*' | wc -l; }
for _ in $(seq 200); do [ "$(temps)" -gt 0 ] && break; sleep 0.05; done
seen=$(temps)
kill -TERM -- "-$bg"
wait "$bg"
rc=$?
bg=
ok "$([ "$seen" -gt 0 ] && [ "$rc" -eq 143 ] && [ -z "$(ls -A "$tmp/results/r1")" ]; echo $?)" \
	"bench-host stopped by TERM mid-run ($seen temporaries seen): exit $rc, the run folder empty: $(find "$tmp/results/r1" -mindepth 1 -printf '%f ')"
# On a machine that offers one clocksource (a host that lost its TSC, a
# guest on kvm-clock alone), the real mode cannot switch: it is skipped,
# said, and the fake mode's run decides the exit status.
offered=$(xargs </sys/devices/system/clocksource/clocksource0/available_clocksource 2>/dev/null)
# The real mode is the host's own sysfs: DESTRUCTIVE=1 only, though with
# one clocksource it has nothing to switch to.
if destructive && [ "$(wc -w <<<"$offered")" -eq 1 ]; then
	tests/torture/torture --modes fake,real --iterations 1 --seed 5 --no-extras >"$tmp/out" 2>&1
	rc=$?
	ok "$([ "$rc" -eq 0 ] && grep -q "skipped: real (only one clocksource, $offered, is offered" "$tmp/out" &&
		grep -q '^| leftovers  *| 0 ' "$tmp/out"; echo $?)" "one clocksource offered ($offered): the real mode skipped and said, the fake one run, exit $rc"
	[ "$rc" -eq 0 ] || tail -n 30 "$tmp/out" | sed 's/^/# /'
else
	skip "the real mode: root and DESTRUCTIVE=1 on a machine offering one clocksource (offered: ${offered:-none})"
fi
done_testing
