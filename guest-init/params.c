/* params.c: /init's parameters from the kernel command line, apart from
 * init.c so that the unit tests and the fuzzer link them without PID 1. */
#include "params.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEP " \t\n" /* between the words of the command line */

int params_valid_value(const char *v)
{
	const char *first = v;
	if (!*v)
		return 0;
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && (v == first || !strchr(",.-_", *v)))
			return 0;
	return 1;
}

/* 1 if v is whole seconds from 0 to 60 (one or two digits). */
static int seconds_ok(const char *v)
{
	size_t n = strspn(v, "0123456789");

	return n && n <= 2 && !v[n] && atoi(v) <= 60;
}

const char *params_parse(char *buf, struct params *p, char *err, size_t errn)
{
	static const char *const strkeys[] = { "threads", "duration", "clock", "method", "check", "cpus", "channel",
					       "workload", "settle" };
	const char **strvals[] = { &p->threads, &p->duration, &p->clock, &p->method, &p->check, &p->cpus, &p->channel,
				   &p->workload, &p->settle };
	static const char *const flagkeys[] = { "cost", "probe", "verbose", "shell", "repeat" };
	int *flagvals[] = { &p->cost, &p->probe, &p->verbose, &p->shell, &p->repeat };

	for (char *save = NULL, *w = strtok_r(buf, SEP, &save); w; w = strtok_r(NULL, SEP, &save)) {
		if (strncmp(w, "clockbench.", 11))
			continue;
		char *k = w + 11, *v = strchr(k, '=');
		if (!v) {
			snprintf(err, errn, "clockbench.%s: expected clockbench.KEY=VALUE", k);
			return err;
		}
		*v++ = 0;
		size_t i;
		for (i = 0; i < sizeof strkeys / sizeof *strkeys; i++)
			if (!strcmp(k, strkeys[i]))
				break;
		if (i < sizeof strkeys / sizeof *strkeys) {
			if (!params_valid_value(v) || (strvals[i] == &p->channel && strlen(v) >= PARAMS_NAME_MAX)) {
				snprintf(err, errn, "clockbench.%s=%s: bad value", k, v);
				return err;
			}
			if (strvals[i] == &p->settle && !seconds_ok(v)) {
				snprintf(err, errn, "clockbench.settle=%s: expected whole seconds from 0 to 60", v);
				return err;
			}
			*strvals[i] = v;
			continue;
		}
		for (i = 0; i < sizeof flagkeys / sizeof *flagkeys; i++)
			if (!strcmp(k, flagkeys[i]))
				break;
		if (i == sizeof flagkeys / sizeof *flagkeys) {
			snprintf(err, errn, "clockbench.%s: unknown parameter", k);
			return err;
		}
		if (strcmp(v, "0") && strcmp(v, "1")) {
			snprintf(err, errn, "clockbench.%s=%s: expected 0 or 1", k, v);
			return err;
		}
		*flagvals[i] = *v == '1';
	}
	return NULL;
}

const char *params_channel(const char *cmdline, char *name, size_t n)
{
	const char *v = NULL;
	size_t len = 0;

	/* the words params_parse() reads, the last channel word winning there too */
	for (const char *w = cmdline; *(w += strspn(w, SEP));) {
		size_t wl = strcspn(w, SEP);
		if (wl >= 19 && !strncmp(w, "clockbench.channel=", 19))
			v = w + 19, len = wl - 19;
		w += wl;
	}
	if (!v || len >= n)
		return NULL;
	memcpy(name, v, len);
	name[len] = 0;
	return params_valid_value(name) ? name : NULL;
}
