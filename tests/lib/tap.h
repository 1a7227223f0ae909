/* tap.h: TAP output for the C unit tests (included by one test program each). */
#ifndef CLOCKBENCH_TAP_H
#define CLOCKBENCH_TAP_H

#include <stdio.h>

static int tap_n, tap_failed;

static inline void ok(int cond, const char *what)
{
	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", tap_n, what);
}

static inline void skip(const char *why)
{
	printf("ok %d # SKIP %s\n", ++tap_n, why);
}

/* Prints the plan; the program's exit status. */
static inline int done_testing(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed != 0;
}

#endif
