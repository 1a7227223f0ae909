/* params.h: /init's parameters, the clockbench.KEY=VALUE words of the
 * kernel command line (docs/guest.md: guest parameters). */
#ifndef CLOCKBENCH_PARAMS_H
#define CLOCKBENCH_PARAMS_H

#include <stddef.h>

#define PARAMS_NAME_MAX 32 /* the channel's name, its NUL included */

struct params {
	const char *threads, *duration, *clock, *method, *check, *cpus, *channel, *workload;
	const char *settle; /* whole seconds, 0 to 60, checked by params_parse() */
	int cost, probe, verbose, shell, repeat; /* repeat: measure and send again until powered off */
};

/* 1 if v may reach the engine's argv: letters, digits and ",._-", never a
 * leading "-" that could read as an option; else 0. */
int params_valid_value(const char *v);

/* Fills *p from the clockbench.KEY=VALUE words of the kernel command line
 * in buf (modified in place; p's strings point into it).  Returns NULL, or
 * err holding a one-line message naming the first unknown key or bad value. */
const char *params_parse(char *buf, struct params *p, char *err, size_t errn);

/* The results channel named by cmdline (not modified), read before the
 * other parameters so that a bad one can be reported on it: the value of
 * the last clockbench.channel= word, the one params_parse() keeps, copied
 * into name (size n, PARAMS_NAME_MAX) and returned; NULL where that value
 * is not valid or does not fit. */
const char *params_channel(const char *cmdline, char *name, size_t n);

#endif
