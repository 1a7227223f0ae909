#!/usr/bin/env bash
# tier: slow
# test-timeout: 600
# faults.t: a bad guest parameter, an engine failure, a guest panic and a
# guest hang each end in one clear error naming the console log, with the
# documented QEMU status, and nothing written to results/; a guest that
# never powers off after its result is killed and its result kept (and
# settle.t's checks made on that result).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/guest-init/guest-lib.sh
tmp=$(mktemp -d)
grace=
trap '[ -z "$grace" ] || kill "$grace" 2>/dev/null; rm -rf "$tmp"' EXIT
export TMPDIR=$tmp

guest_boot_needs 10

# The smallest run: 1 vCPU, one short row, no checks.
base=(--kernel="$kernel" --initramfs="$initrd" --accel=tcg --vcpus=1 --timeout=60 --duration=0.1 --clocks=monotonic
	--methods=vdso --check=none)
# fault DESCRIPTION PATTERN OPTION...: boots with those options (after
# base's, which they override); wants exit 1, one stderr line matching
# PATTERN and naming an existing console log, and an empty results folder.
fault() {
	local what=$1 pat=$2 rc lines log start=$SECONDS
	shift 2
	host-scripts/bench-guest "${base[@]}" "$@" --results "$tmp/results" --run-id run >/dev/null 2>"$tmp/stderr"
	rc=$?
	lines=$(wc -l <"$tmp/stderr")
	log=$(sed -n 's/.*(console log: \(.*\))$/\1/p' "$tmp/stderr")
	if [ "$rc" -eq 1 ] && [ "$lines" -eq 1 ] && grep -qE "^bench-guest: $pat" "$tmp/stderr" &&
		[ -n "$log" ] && [ -e "$log" ] && [ -z "$(find "$tmp/results" -type f 2>/dev/null)" ]; then
		ok 0 "$what: exit 1 in $((SECONDS - start)) s, '$(cat "$tmp/stderr")'"
	else
		ok 1 "$what: exit $rc, $lines stderr lines, console log '$log'"
		diag_lines <"$tmp/stderr"
	fi
}

# A guest that sends its result but never powers off (the DEBUG image's
# shell waits on a console with no input): killed 10 s later, result kept.
# Those 10 s are idle: it runs beside the faults below, in its own results
# folder, and is waited for after them.
debug=build/guest/initramfs-debug.cpio
if [ -x "${BUSYBOX:-/bin/busybox}" ] && make --no-print-directory -s guest-initramfs DEBUG=1 >&2; then
	host-scripts/bench-guest "${base[@]}" --initramfs="$debug" --append=clockbench.shell=1 \
		--results "$tmp/grace" --run-id grace >/dev/null 2>"$tmp/grace.stderr" &
	grace=$!
fi

fault "unknown clockbench.* parameter" \
	'bad clockbench\.\* parameter \(QEMU status 9\): guest reported an error in stage params: clockbench\.bogus: unknown parameter' \
	--append=clockbench.bogus=1
# The launcher judges every engine word up front (--append's too) with the
# engine's --dry-run; --test-skip-engine-check, the tests' hook, skips that
# check alone, so that the bad value reaches the guest's engine and its
# failure path (stage engine, QEMU status 3) is still the one tested.
fault "engine rejects its arguments" \
	'engine failed \(QEMU status 3\): guest reported an error in stage engine: engine exited with status 2: clockbench: .*threads' \
	--append=clockbench.threads=0 --test-skip-engine-check
fault "guest kernel panic" 'guest panic: .*Kernel panic' --append=rdinit=/nonexistent
# The guest's kernel is still booting when its time is up.
fault "guest hang" 'guest timed out after 2s' --timeout=2

if [ -n "$grace" ]; then
	wait "$grace"
	rc=$?
	grace=
	res=$(find "$tmp/grace/grace" -name 'guest-*.json' 2>/dev/null)
	ok "$([ "$rc" -eq 0 ] && [ -n "$res" ] && grep -q 'did not power off within 10 s of its result: QEMU killed' "$tmp/grace.stderr"; echo $?)" \
		"guest that never powers off: exit $rc, result kept, warning"
	diag_lines <"$tmp/grace.stderr"
	if [ -n "$res" ]; then
		jcheck "$res" 'd["launcher"]["exit_status"] is None and d["launcher"]["wall_ms"] - d["launcher"]["result_ms"] < 20000' "exit_status null, killed within the grace"
		settle_checks "$res" "${res%.json}.console.log" "the same guest, settle.t's checks"
	else
		for _ in 1 2 3 4 5; do skip "no result to check"; done
	fi
else
	skip "no static busybox for the DEBUG image (apt-get install busybox-static)"
	for _ in 1 2 3 4 5; do skip "no static busybox for the DEBUG image"; done
fi

done_testing
