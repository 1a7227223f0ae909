/* exit-codes.h: the guest's exit codes, from their one list, bench/names.h's
 * CB_GUEST_EXIT lines.  /init writes CODE to isa-debug-exit and QEMU exits
 * with status (CODE << 1) | 1; the launcher (host-scripts/cbhost) explains
 * those statuses from the same lines (cbcontract.names). */
#ifndef CLOCKBENCH_EXIT_CODES_H
#define CLOCKBENCH_EXIT_CODES_H

#define CB_GUEST_EXIT(name, code, meaning) name = code,
enum cb_guest_exit {
#include "names.h"
};

#endif
