/* exit-codes.h: the guest's exit codes, the one list.  /init writes CODE to
 * isa-debug-exit and QEMU exits with status (CODE << 1) | 1; the launcher
 * (host-scripts/cbhost) explains those statuses from this file. */
#ifndef CLOCKBENCH_EXIT_CODES_H
#define CLOCKBENCH_EXIT_CODES_H

/* GX(NAME, CODE, QEMU status, meaning) */
#define CB_GUEST_EXIT_CODES(GX)                                                    \
	GX(GX_ENGINE, 1, 3, "engine failed")                                       \
	GX(GX_SETUP, 2, 5, "guest setup failed (mount, channel or fork)")          \
	GX(GX_SIGNAL, 3, 7, "engine killed by a signal")                           \
	GX(GX_PARAM, 4, 9, "bad clockbench.* parameter")                           \
	GX(GX_OUTPUT, 5, 11, "engine output missing or unreadable")

#define CB_GX_ENUM(name, code, status, text) name = code,
enum cb_guest_exit { CB_GUEST_EXIT_CODES(CB_GX_ENUM) };
#undef CB_GX_ENUM

#endif
