# guest-lib.sh: helpers for the guest tests (sourced from the top of the
# tree, not run), with the TAP helpers of tests/lib/lib.sh.
# shellcheck shell=bash
. tests/lib/lib.sh

# guest_kernel: prints the kernel the boot tests use: $CB_TEST_KERNEL (a
# test hook: a developer's choice of kernel image; the launcher itself takes
# --kernel and reads no environment), else the running kernel's image, else
# the newest readable /boot/vmlinuz-*, else build/guest-kernel/boot's (make deps).
guest_kernel() {
	local k
	if [ -n "${CB_TEST_KERNEL:-}" ]; then
		echo "$CB_TEST_KERNEL"
		return
	fi
	k=/boot/vmlinuz-$(uname -r)
	if [ -r "$k" ]; then
		echo "$k"
		return
	fi
	# /boot's, else the one make deps unpacked for the guest (never installed).
	# An absolute path: a test may run the guest from another folder.
	for k in $(find /boot -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort -rV) \
		$(find "$PWD/build/guest-kernel/boot" -maxdepth 1 -name 'vmlinuz-*' 2>/dev/null | sort -rV); do
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

# guest_boot_needs [N]: what a real guest boot needs, in $kernel
# (guest_kernel) and $initrd (guest_initramfs); skips the file (N tests,
# skip_all) without QEMU or a kernel image, and fails it (one test) when
# the initramfs does not build.
# shellcheck disable=SC2120 # the argument is optional
guest_boot_needs() {
	kernel=$(guest_kernel)
	command -v qemu-system-x86_64 >/dev/null || skip_all "no qemu-system-x86_64 (apt-get install qemu-system-x86)" "${1:-}"
	[ -n "$kernel" ] || skip_all "no readable kernel image: set CB_TEST_KERNEL= (Debian: apt-get install linux-image-amd64)" "${1:-}"
	initrd=$(guest_initramfs)
	if [ -z "$initrd" ]; then
		ok 1 "make guest-initramfs"
		done_testing
		exit
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

# settle_checks RES LOG WHAT: the clocksource wait's four checks (settle.t)
# on one 1-vCPU TCG guest's result RES and console log LOG, each TAP line
# named WHAT: the kernel booted on tsc-early, the result is not marked
# changed, the engine started on a settled clocksource, and the wait is
# reported (guest.clocksource_settle).  Three 1-vCPU q35 boots make them:
# settle.t's, faults.t's guest that never powers off and workload.t's
# (whether a run's /init starts before the switch depends on the host's
# load: the more runs, the likelier the case).
# True when this run's /init started on tsc-early (and waited).
settle_checks() {
	local res=$1 log=$2 what=$3
	ok "$(grep -q '^clockbench-init: kernel: clocksource: Switched to clocksource tsc-early' "$log"; echo $?)" \
		"$what: the guest kernel booted on tsc-early (console log)"
	jcheck "$res" 'd["bench"]["changed_during_run"]["clocksource"] is False and d["bench"]["context"]["clocksource"] == d["bench"]["context"]["clocksource_end"]' \
		"$what: result not marked changed ($(python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["bench"]; print(c["context"]["clocksource"], "->", c["context"]["clocksource_end"])' "$res" 2>&1))"
	jcheck "$res" 'd["bench"]["context"]["clocksource"] not in ("tsc-early", "jiffies", "refined-jiffies") and d["guest"]["clocksource_before"] == d["bench"]["context"]["clocksource"]' \
		"$what: the engine started on a settled clocksource"
	jcheck "$res" '(lambda w: w["end"] in ("settled", "quiet") and w["settled"] is True and w["from"] in ("tsc-early", w["to"]) and w["to"] == d["bench"]["context"]["clocksource"] and 0 <= w["ms"] < w["limit_ms"] and w["tsc_early_listed"] is False)(d["guest"]["clocksource_settle"])' \
		"$what: the wait is reported: $(python3 -c 'import json,sys; w=json.load(open(sys.argv[1]))["guest"].get("clocksource_settle") or {}; print(w.get("from"), "to", w.get("to"), "in", w.get("ms"), "ms,", w.get("end"))' "$res" 2>&1)"
	python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["guest"]["clocksource_settle"]["from"] != "tsc-early")' "$res" 2>/dev/null
}
