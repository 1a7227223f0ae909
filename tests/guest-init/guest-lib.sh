# guest-lib.sh: helpers for the guest tests (sourced, not run).
# shellcheck shell=bash

# guest_kernel: prints the kernel the boot tests use: $KERNEL, else the
# running kernel's image, else the newest readable /boot/vmlinuz-*.
guest_kernel() {
	local k
	if [ -n "${KERNEL:-}" ]; then
		echo "$KERNEL"
		return
	fi
	k=/boot/vmlinuz-$(uname -r)
	if [ -r "$k" ]; then
		echo "$k"
		return
	fi
	for k in $(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort -rV); do
		if [ -r "$k" ]; then
			echo "$k"
			return
		fi
	done
}

# guest_initramfs: builds the initramfs if needed (the engine's musl objects
# exist after `make all`); prints its path, or nothing when the build fails.
guest_initramfs() {
	if make --no-print-directory -s guest-initramfs >&2; then
		echo build/guest/initramfs.cpio
	fi
}

# host_cs: the host's current clocksource, as the result's file name has it.
host_cs() {
	cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null || echo unknown
}

# jcheck FILE EXPR DESCRIPTION: one TAP line, ok when the Python expression
# EXPR is true of the JSON document d loaded from FILE.
jcheck() {
	local r
	r=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(bool(eval(sys.argv[2])))' "$1" "$2" 2>&1)
	ok "$([ "$r" = True ]; echo $?)" "$3"
	[ "$r" = True ] || diag "expression: $2" "gave: $r"
}

# no_tmp_left DIR: true when DIR holds no temporary file of the launcher.
no_tmp_left() {
	[ -z "$(find "$1" -name '.*' -type f 2>/dev/null)" ]
}

# diag_lines: each line of stdin as a TAP comment.
diag_lines() {
	local l
	while IFS= read -r l; do
		diag "$l"
	done
}
