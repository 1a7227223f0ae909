/* tsc.c: TSC frequency calibrated against CLOCK_MONOTONIC_RAW; TSC and clock pairs. */
#include "clockbench.h"

void cb_tsc_pair(clockid_t clk, int tries, uint64_t *tsc, long double *ns)
{
	uint64_t best = UINT64_MAX;
	int i;

	for (i = 0; i < tries; i++) {
		struct timespec ts;
		uint64_t a = cb_rdtsc_start();
		clock_gettime(clk, &ts);
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
	uint64_t t0 = 0, t1 = 0;
	long double n0 = 0, n1 = 0;
	struct timespec d = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };

	cb_tsc_pair(CLOCK_MONOTONIC_RAW, 16, &t0, &n0);
	while (nanosleep(&d, &d))
		;
	cb_tsc_pair(CLOCK_MONOTONIC_RAW, 16, &t1, &n1);
	if (t1 <= t0 || n1 <= n0)
		return 0;
	return (double)((long double)(t1 - t0) / (n1 - n0));
}
