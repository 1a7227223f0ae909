/* plainloop.c: the simplest possible vDSO cost figure, to cross-check
 * clockbench: N back-to-back clock_gettime(CLOCK_MONOTONIC) calls timed as
 * a whole by the same clock.  Prints ns per call. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 20000000, i;
	struct timespec a, b, t;

	if (n <= 0) {
		fprintf(stderr, "plainloop: bad count\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++)
		clock_gettime(CLOCK_MONOTONIC, &t);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.2f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)n);
	return 0;
}
