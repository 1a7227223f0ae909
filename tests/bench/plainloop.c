/* plainloop.c: the simplest possible cost figures, to cross-check
 * clockbench: N back-to-back CLOCK_MONOTONIC reads timed as a whole by the
 * same clock, through the C library's clock_gettime (vdso) or its
 * syscall(SYS_clock_gettime, ...) (syscall).  Prints ns per call twice: over
 * the whole loop, and the median over chunks of 1000 calls (robust to
 * preemption on a busy machine).
 * Usage: plainloop vdso|syscall [N] */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHUNK 1000

static double ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e9 + (b->tv_nsec - a->tv_nsec);
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 20000000, i, k, nc;
	int sys = argc > 1 && !strcmp(argv[1], "syscall");
	struct timespec a, b, c0, c1, t;
	double *chunk;

	if (argc < 2 || (!sys && strcmp(argv[1], "vdso")) || n < CHUNK) {
		fprintf(stderr, "usage: plainloop vdso|syscall [N >= %d]\n", CHUNK);
		return 2;
	}
	nc = n / CHUNK;
	if (!(chunk = malloc(sizeof *chunk * (size_t)nc))) {
		perror("plainloop: malloc");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (k = 0; k < nc; k++) {
		clock_gettime(CLOCK_MONOTONIC, &c0);
		if (sys)
			for (i = 0; i < CHUNK; i++)
				syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &t);
		else
			for (i = 0; i < CHUNK; i++)
				clock_gettime(CLOCK_MONOTONIC, &t);
		clock_gettime(CLOCK_MONOTONIC, &c1);
		chunk[k] = ns(&c0, &c1) / CHUNK;
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	qsort(chunk, (size_t)nc, sizeof *chunk, cmp);
	printf("%.2f %.2f\n", ns(&a, &b) / (double)(nc * CHUNK), chunk[nc / 2]);
	free(chunk);
	return 0;
}
