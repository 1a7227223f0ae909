/* vdso-off.c: an LD_PRELOAD library whose clock_gettime is the bare system
 * call, as on a host whose clocksource the vDSO cannot read (hpet without
 * its mmap, acpi_pm) or a guest the host took the stable bit from: every
 * read enters the kernel.  CLOCKBENCH_VDSO_OFF names the clock ids it
 * takes (decimal, comma-separated; unset: all); the others go to the C
 * library.  Used by tests/bench/require.t. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static int taken(clockid_t clk)
{
	const char *v = getenv("CLOCKBENCH_VDSO_OFF"), *p;
	char *end;

	if (!v)
		return 1;
	for (p = v; *p; p = *end ? end + 1 : end) {
		long id = strtol(p, &end, 10);
		if (end == p)
			return 0;
		if (id == (long)clk)
			return 1;
	}
	return 0;
}

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int (*next)(clockid_t, struct timespec *);

	if (taken(clk))
		return (int)syscall(SYS_clock_gettime, clk, ts);
	if (!next)
		next = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	return next(clk, ts);
}
