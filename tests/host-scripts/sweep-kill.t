#!/usr/bin/env bash
# tier: fast
# sweep-kill.t: `make bench`'s sweep (one Python process) SIGKILLed alone
# while a step runs, on a fake clocksource folder: its bracket (the bash
# process that switched) stops the step and puts the clocksource back at
# once, not when the step would have ended; it says so, exits with the
# sweep's status, and leaves no state file.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
need_engine
tmp=$(mktemp -d)
bracket=''
cleanup() {
	[ -z "$bracket" ] || kill -KILL -- "-$bracket" 2>/dev/null
	pkill -KILL -f "$tmp/slow-engine" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir "$tmp/cs"
echo "hpet tsc acpi_pm" >"$tmp/cs/available_clocksource"
echo hpet >"$tmp/cs/current_clocksource"
: >"$tmp/kvm"
# The step: the real engine's dry runs and TSC-rate runs, else 120 s asleep,
# its start marked.
cat >"$tmp/slow-engine" <<EOF2
#!/bin/bash
case "\$*" in *--dry-run*|*tsc-rate*) exec "$PWD/bench/clockbench" "\$@" ;; esac
echo "\$\$ \$(cat "$tmp/cs/current_clocksource")" >>"$tmp/started"
exec sleep 120
EOF2
chmod +x "$tmp/slow-engine"
CB_CS_DIR=$tmp/cs CB_STATE_DIR=$tmp/state CB_KVM_DEV=$tmp/kvm CB_ENGINE=$tmp/slow-engine \
	setsid host-scripts/bench --no-guest --clocksources tsc --rounds 1 --duration 0.02 --threads 1 \
	--clocks monotonic --methods vdso --workloads none --tsc-rate-seconds 0 --report-out "$tmp/report" "$tmp/results" k1 \
	>"$tmp/out" 2>"$tmp/err" </dev/null &
bracket=$!
for ((i = 0; i < 300; i++)); do
	[ -s "$tmp/started" ] && break
	sleep 0.1
done
read -r engine on <"$tmp/started" 2>/dev/null || engine='' on=''
sweep=$(pgrep -P "$bracket" -f 'sweep' | head -n1)
ok "$([ -n "$engine" ] && [ "$on" = tsc ] && [ -n "$sweep" ]; echo $?)" \
	"the step runs on tsc (the engine stand-in, pid ${engine:-none}) under the sweep (pid ${sweep:-none})"
[ -n "$sweep" ] && [ -n "$engine" ] || { diag "$(tail -n5 "$tmp/err")"; done_testing; exit; }
t0=$(date +%s%N)
kill -KILL "$sweep"
for ((i = 0; i < 300; i++)); do
	kill -0 "$bracket" 2>/dev/null || break
	sleep 0.1
done
wait "$bracket"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
bracket=''
ok "$([ "$(cat "$tmp/cs/current_clocksource")" = hpet ] && [ ! -e "$tmp/state/clocksource.state" ] &&
	! kill -0 "$engine" 2>/dev/null && [ "$ms" -lt 20000 ]; echo $?)" \
	"SIGKILL of the sweep alone: the step stopped and hpet back in $ms ms (the step had 120 s to go), no state file left"
ok "$([ "$rc" = 137 ] && grep -q 'the sweep ended (status 137) while its step ran: the step stopped, the clocksource put back' "$tmp/err"; echo $?)" \
	"the bracket exits with the sweep's status ($rc) and says why in one line"
diag "$(tail -n3 "$tmp/err")"
done_testing
