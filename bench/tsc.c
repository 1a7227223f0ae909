/* tsc.c: TSC frequency calibrated against CLOCK_MONOTONIC_RAW. */
#include "clockbench.h"

/* One (tsc, ns) pair taken as close together as this CPU allows: the
 * narrowest of several bracketed reads, with the TSC taken at its middle. */
static void pair(uint64_t *tsc, long double *ns)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < 16; i++) {
		struct timespec ts;
		uint64_t a = cb_rdtsc_start();
		clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
		uint64_t b = cb_rdtsc_end();
		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*ns = (long double)ts.tv_sec * 1e9L + ts.tv_nsec;
		}
	}
}

double cb_tsc_calibrate(unsigned ms)
{
	uint64_t t0, t1;
	long double n0, n1;
	struct timespec d = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	pair(&t0, &n0);
	while (nanosleep(&d, &d))
		;
	pair(&t1, &n1);
	if (t1 <= t0 || n1 <= n0)
		return 0;
	return (double)((long double)(t1 - t0) / (n1 - n0));
}
