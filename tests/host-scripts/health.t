#!/usr/bin/env bash
# tier: fast
# health.t: health's classification of why the TSC was lost, against
# recorded kernel logs (tests/host-scripts/fixtures/*.log), and its exit codes.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/empty"
fx=tests/host-scripts/fixtures

# The runs on recorded files go through health's main() in one python3
# (a process each costs some 0.3 s here), queued first, judged in order
# below.  run ARG...: queues one run, its number in $n; run N's stdout,
# stderr and status are in $tmp/hc/N.out, N.err, N.rc, and N.verdict holds
# "exit cause detail" read from its JSON (or why not).
runs=()
nruns=0
run() {
	n=$nruns
	nruns=$((nruns + 1))
	runs+=(:: "$@")
}
# verdict LOG CURRENT AVAILABLE CMDLINE: queues health's JSON verdict
# on these files (its own clocksource folder and command line, $tmp/vN).
verdict() {
	local d=$tmp/v$nruns
	mkdir -p "$d/cs"
	echo "$2" >"$d/cs/current_clocksource"
	echo "$3" >"$d/cs/available_clocksource"
	printf '%s\n' "$4" >"$d/cmdline"
	run --format json --log "$1" --cmdline "$d/cmdline" --cs-dir "$d/cs"
}
# got N: run N's "exit cause detail".
got() { got=$(<"$tmp/hc/$1.verdict"); }
check() { # check WANT DESCRIPTION -- verdict args (queued now, judged by judge_checks)
	checks+=("$1" "$2")
	shift 3
	verdict "$@"
	checks+=("$n")
}
checks=()
judge_checks() {
	local i
	for ((i = 0; i < ${#checks[@]}; i += 3)); do
		got "${checks[i + 2]}"
		ok "$([ "$got" = "${checks[i]}" ]; echo $?)" "${checks[i + 1]}: $got"
	done
}

check "1 boot_warp 6601281288 cycles warp" "boot warp (blog: CPU 0 three seconds behind)" -- "$fx/boot-warp.log" hpet "hpet acpi_pm" "ro quiet"
check "1 watchdog read-back delay" "watchdog, HPET read-back delay (LKML)" -- "$fx/watchdog-readback.log" hpet "hpet acpi_pm" "ro"
check "1 watchdog frequency skew, remote CPU read timed out" "watchdog, remote CPU timeout and frequency skew, named (blog, BIOS 1.30)" -- "$fx/watchdog-remote.log" hpet "hpet acpi_pm" "ro"
check "1 watchdog skew too large" "watchdog, skew too large" -- "$fx/watchdog-skew.log" hpet "hpet acpi_pm" "ro"
check "1 never_lost None" "on tsc, but the log shows switches away and back: not healthy (every VM running across lost the bit)" -- "$fx/healthy-vm.log" tsc "tsc kvm-clock" "ro"
check "1 by_hand None" "flipped by hand: tsc still offered, no loss in the log" -- "$fx/healthy-vm.log" kvm-clock "tsc kvm-clock" "ro"
check "1 forced_unstable None" "tsc=unstable on the command line" -- "$tmp/empty" hpet "hpet acpi_pm" "ro tsc=unstable"
check "1 set_at_boot None" "clocksource=hpet on the command line" -- "$tmp/empty" hpet "tsc hpet acpi_pm" "ro clocksource=hpet"
check "1 unknown None" "not on tsc, tsc gone, nothing in the log: unknown, not guessed" -- "$tmp/empty" hpet "hpet acpi_pm" "ro"
verdict "$fx/boot-warp.log" hpet "hpet acpi_pm" "ro"
evidence=$n
mkdir -p "$tmp/unreadable.log"
verdict "$tmp/unreadable.log" kvm-clock "tsc kvm-clock" "ro"
unreadable=$n
# kvm-clock, with and without a recorded path probe
pfx=tests/analysis/fixtures/20260101-120000-hv1
mkdir -p "$tmp/cs"
echo kvm-clock >"$tmp/cs/current_clocksource"
echo "tsc kvm-clock" >"$tmp/cs/available_clocksource"
printf 'ro\n' >"$tmp/cmdline"
on_kvm=(--log "$fx/healthy-vm.log" --cmdline "$tmp/cmdline" --cs-dir "$tmp/cs")
run "${on_kvm[@]}" --probe "$pfx/host-tsc.json"
probe_user=$n
run "${on_kvm[@]}" --probe "$pfx/host-hpet.json"
probe_syscall=$n
run "${on_kvm[@]}"
no_probe=$n
run --format json "${on_kvm[@]}" --probe "$pfx/host-tsc.json"
probe_json=$n
printf '[    1.000000] tsc: Marking TSC unstable due to \033]0;pwned\007boot parameter\n' >"$tmp/esc.log"
run --log "$tmp/esc.log" --cs-dir "$tmp/cs"
esc=$n

mkdir -p "$tmp/hc"
python3 - "$tmp/hc" "${runs[@]}" <<'PY'
import contextlib, importlib.machinery, importlib.util, io, json, os, sys, traceback
HC = os.path.join(os.getcwd(), "host-scripts", "health")
loader = importlib.machinery.SourceFileLoader("health", HC)
hc = importlib.util.module_from_spec(importlib.util.spec_from_loader("health", loader))
loader.exec_module(hc)
runs = []
for a in sys.argv[2:]:
    if a == "::":
        runs.append([])
    else:
        runs[-1].append(a)
for i, args in enumerate(runs):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = hc.main([HC] + args)
        except SystemExit as e:
            rc = e.code
        except Exception:  # noqa: BLE001 -- as the process would: a traceback, exit 1
            traceback.print_exc()
            rc = 1
    rc = 0 if rc is None else rc if isinstance(rc, int) else 1
    base = os.path.join(sys.argv[1], str(i))
    for ext, text in (("out", out.getvalue()), ("err", err.getvalue()), ("rc", "%d\n" % rc)):
        with open(base + "." + ext, "w") as f:
            f.write(text)
    try:
        d = json.loads(out.getvalue())
        v = "%s %s %s" % (rc, d["cause"], d["cause_detail"])
    except Exception as e:  # noqa: BLE001 -- not a JSON verdict
        v = "%s %s" % (rc, " ".join(repr(e).split())[:200])
    with open(base + ".verdict", "w") as f:
        f.write(v + "\n")
PY
judge_checks
python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["kernel_log"]["evidence"]
assert any("Measured 6601281288 cycles" in l for l in ev), ev
assert d["healthy"] is False and d["clocksource"]["current"] == "hpet"
assert d["tsc_check"] is None and "recorded" in d["tsc_check_note"]
' "$tmp/hc/$evidence.out"
ok $? "the evidence lines are quoted, and no TSC check is run when judging recorded files"

host-scripts/health --format yaml >/dev/null 2>"$tmp/err"
rc=$?
ok "$([ "$rc" -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; echo $?)" "a bad --format: exit 2, one line: $(cat "$tmp/err")"
host-scripts/health --log /nonexistent.log --cmdline "$tmp/empty" --cs-dir "$tmp/cs" --format json >"$tmp/out.json" 2>/dev/null
ok "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any("/nonexistent.log" in c for c in d["could_not_read"])' "$tmp/out.json"; echo $?)" \
	"an unreadable log is reported as not read, not as healthy evidence"

# A kernel log that cannot be read proves nothing: unknown, with the reason
# (not "changed by hand", which is concluded from the log's silence).
got "$unreadable"
ok "$(case "$got" in "1 unknown kernel log not read: $tmp/unreadable.log: "*) echo 0;; *) echo 1;; esac)" \
	"an unreadable kernel log: cause unknown with the reason, not by_hand: $got"

# A FIFO as --log: refused at once, never waited on.
mkfifo "$tmp/log.fifo"
timeout 20 host-scripts/health --format json --log "$tmp/log.fifo" --cmdline "$tmp/empty" --cs-dir "$tmp/cs" >"$tmp/out.json" 2>/dev/null
rc=$?
ok "$([ "$rc" -ne 124 ] && python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert any("log.fifo" in c and "not a regular file" in c for c in d["could_not_read"]), d["could_not_read"]' "$tmp/out.json"; echo $?)" \
	"a FIFO as --log: not read, said so, no hang (exit $rc)"

# A user's log sources: /dev/kmsg refused (here: not there, CB_KMSG), and a
# journal that exits 0 with no kernel entry and its hint on stderr, as
# Debian's does for a user outside adm and systemd-journal.  Not "0
# relevant lines" and not "changed by hand": unknown, with both reasons.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\necho "Hint: You are currently not seeing messages from other users and the system." >&2\necho "      Users in groups '"'"'adm'"'"', '"'"'systemd-journal'"'"' can see all messages." >&2\n' >"$tmp/bin/journalctl"
chmod +x "$tmp/bin/journalctl"
limited() { # limited CURRENT: health's verdict through the fake log sources
	echo "$1" >"$tmp/cs/current_clocksource"
	echo "tsc hpet" >"$tmp/cs/available_clocksource"
	CB_KMSG="$tmp/no-kmsg" PATH="$tmp/bin:$PATH" host-scripts/health --format "$2" --cmdline "$tmp/cmdline" --cs-dir "$tmp/cs" --live-log 2>&1
}
printf 'ro\n' >"$tmp/cmdline"
got=$(limited hpet json | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["cause"], "|", d["cause_detail"], "|", d["kernel_log"]["source"])')
ok "$(case "$got" in "unknown | kernel log not read: $tmp/no-kmsg: No such file or directory; journalctl: access-limited"*"| None") echo 0 ;; *) echo 1 ;; esac)" \
	"an access-limited journal and no /dev/kmsg: unknown with both reasons, not by_hand: $got"
out=$(limited hpet text)
ok "$(grep -q "kernel log (unread): not read" <<<"$out" && ! grep -q "relevant lines" <<<"$out"; echo $?)" \
	"the text says the log was not read, never '0 relevant lines'"

# "Every clock read is a syscall" only where the path probe says so: on
# kvm-clock the vDSO still answers (a recorded probe, --probe FILE).
# text N: run N's stdout and stderr in $out, its status in $rc.
text() { out=$(cat "$tmp/hc/$1.out" "$tmp/hc/$1.err"); rc=$(<"$tmp/hc/$1.rc"); }
echo kvm-clock >"$tmp/cs/current_clocksource"
echo "tsc kvm-clock" >"$tmp/cs/available_clocksource"
text "$probe_user"
ok "$([ "$rc" -eq 1 ] && ! grep -q "is a syscall" <<<"$out" && grep -q "answered in user space" <<<"$out"; echo $?)" \
	"the probe says user: no claim that reads are syscalls (exit $rc)"
text "$probe_syscall"
ok "$([ "$rc" -eq 1 ] && grep -q "every clock read is a syscall on this host (the path probe says so)" <<<"$out"; echo $?)" \
	"the probe says syscall: the text says every read is a syscall (exit $rc)"
text "$no_probe"
ok "$(! grep -q "is a syscall" <<<"$out" && grep -q "whether clock reads are syscalls here is not known" <<<"$out"; echo $?)" \
	"no probe: not known, not guessed"
ok "$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["clock_read_path"] == "user", d' "$tmp/hc/$probe_json.out"; echo $?)" \
	"JSON: clock_read_path from the probe"

# A log line is data: its escapes (ESC, OSC, BEL) never reach the terminal
# raw in the text, whatever line carries them (the cause's, the evidence).
text "$esc"
ok "$(! grep -q $'\033' <<<"$out" && ! grep -q $'\007' <<<"$out" && grep -q 'due to \\x1b]0;pwned\\x07boot' <<<"$out"; echo $?)" \
	"a log line's ESC and BEL are shown escaped (\\x1b, \\x07), never sent to the terminal"

# This host, for real (read-only): the verdict follows the one rule
# (contract/cbcontract/health.py), read here from the facts themselves: a
# host healthy on tsc only; a guest on tsc with an invariant TSC, or on a
# paravirtual clock whose reads the path probe found in user space.
if [ -x bench/clockbench ]; then
	host-scripts/health --format json --trace-seconds 0 >"$tmp/live.json" 2>"$tmp/err"
	rc=$?
	cur=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)
	want=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); cur = sys.argv[2]
guest = " hypervisor " in " %s " % next((l.split(":", 1)[1] for l in open("/proc/cpuinfo") if l.startswith("flags")), "")
f = d["tsc_flags"]
ok = (cur == "tsc" and (not guest or (f["constant_tsc"] and f["nonstop_tsc"]))) or \
     (guest and cur in ("kvm-clock", "hyperv_clocksource_tsc_page", "xen") and d["clock_read_path"] == "user")
assert d["tsc_check"]["verdict"] in ("consistent", "inconsistent", "single-cpu"), d["tsc_check"]
assert d["machine"]["guest"] is guest, d["machine"]
print(0 if ok else 1)' "$tmp/live.json" "$cur" 2>&1)
	ok "$([ "$rc" = "$want" ]; echo $?)" "this host ($cur): exit $rc (want $want by the rule), the machine's role, clockbench's TSC check in the report"
else
	skip "bench/clockbench not built"
fi
done_testing
