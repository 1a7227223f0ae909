#!/usr/bin/env bash
# tier: fast
# bench-symbols.t: the built binaries time what the methods say.  The
# syscall method must reach the syscall through a call (what a vDSO
# fallback pays), never an inlined copy; syscall-inline must be inlined;
# null must be the syscall method with getppid for clock_gettime.
# BINS="a b" checks other builds (default: both of this tree).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/lib.sh

# body BIN FUNCTION: the instructions of FUNCTION, one per line.
body() {
	objdump -d --no-show-raw-insn "$1" | awk -v f="<$2>:" '$2 == f { on = 1; next } on && /^$/ { exit } on'
}

# shape BIN FUNCTION: its instructions without addresses, jump targets or
# the callee's name: two loops that differ only in what they call match.
shape() {
	body "$1" "$2" | cut -f2- | sed -E 's/ +[0-9a-f]+ <[^>]*>$//; s/[[:space:]]+/ /g; s/ $//'
}

for bin in ${BINS:-bench/clockbench build/clockbench-static}; do
	if ! command -v nm >/dev/null || ! command -v objdump >/dev/null; then
		skip "nm or objdump missing (binutils)"
		continue
	fi
	if [ ! -x "$bin" ]; then
		skip "$bin not built"
		continue
	fi
	syms=$(nm "$bin")
	ok "$(grep -qE ' T cb_syscall_clock_gettime$' <<<"$syms" && grep -qE ' T cb_batch_syscall$' <<<"$syms"; echo $?)" \
		"$bin: cb_syscall_clock_gettime and the syscall method's loop are functions of their own"
	fn=$(body "$bin" cb_syscall_clock_gettime)
	ok "$(grep -qE '\ssyscall\s*$' <<<"$fn"; echo $?)" "$bin: cb_syscall_clock_gettime issues the syscall itself"
	loop=$(body "$bin" cb_batch_syscall)
	ok "$(grep -qE 'call .*<cb_syscall_clock_gettime>' <<<"$loop" && ! grep -qE '\ssyscall\s*$' <<<"$loop"; echo $?)" \
		"$bin: the syscall method's loop calls it and holds no syscall instruction of its own"
	loop=$(body "$bin" cb_batch_syscall_inline)
	ok "$(grep -qE '\ssyscall\s*$' <<<"$loop" && ! grep -qE '\scall ' <<<"$loop"; echo $?)" \
		"$bin: the syscall-inline loop has the instruction inlined, no call"

	# null: the same call, but getppid (110, 0x6e) and no clock.
	ok "$(grep -qE ' T cb_syscall_null$' <<<"$syms" && grep -qE ' T cb_batch_null$' <<<"$syms"; echo $?)" \
		"$bin: cb_syscall_null and the null method's loop are functions of their own"
	fn=$(body "$bin" cb_syscall_null)
	ok "$(grep -qE '\ssyscall\s*$' <<<"$fn" && grep -qE 'mov +[$]0x6e,%eax' <<<"$fn"; echo $?)" \
		"$bin: cb_syscall_null issues the syscall itself, with getppid's number"
	loop=$(body "$bin" cb_batch_null)
	ok "$(grep -qE 'call .*<cb_syscall_null>' <<<"$loop" && ! grep -qE '\ssyscall\s*$' <<<"$loop"; echo $?)" \
		"$bin: the null method's loop calls it and holds no syscall instruction of its own"
	a=$(shape "$bin" cb_batch_null) b=$(shape "$bin" cb_batch_syscall)
	ok "$([ -n "$a" ] && [ "$a" = "$b" ]; echo $?)" "$bin: the null loop is the syscall loop, instruction for instruction"
	[ "$a" = "$b" ] || diag "$(diff <(echo "$b") <(echo "$a"))"
	a=$(shape "$bin" cb_syscall_null | grep -vE 'mov +[$]0x(6e|e4),%eax')
	b=$(shape "$bin" cb_syscall_clock_gettime | grep -vE 'mov +[$]0x(6e|e4),%eax')
	ok "$([ -n "$a" ] && [ "$a" = "$b" ]; echo $?)" "$bin: cb_syscall_null is cb_syscall_clock_gettime but for the syscall number"
done
done_testing
