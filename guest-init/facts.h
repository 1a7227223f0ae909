/* facts.h: the guest result /init sends: its "guest" object (what /init
 * knows that the engine's context does not) around the engine's JSON
 * (docs/guest.md). */
#ifndef CLOCKBENCH_FACTS_H
#define CLOCKBENCH_FACTS_H

#include "clockbench.h"
#include "settle.h"

#define GF_MAX_LINES 64
#define GF_LINE_MAX 200

/* What the kernel log says about the clock path the guest took. */
struct gf_log {
	const char *source; /* "/dev/kmsg" or "klogctl"; NULL: unreadable */
	int n;              /* matching lines kept, at most GF_MAX_LINES */
	char line[GF_MAX_LINES][GF_LINE_MAX];
	int kvmclock, sched_stable, tsc_unstable, tsc_warp;
	char switched_to[64];
};

struct gf_facts {
	const char *clocksource_before; /* before the engine ran; NULL unknown */
	const struct settle *settle;    /* the clocksource wait; NULL: none */
	const char *channel;
	char *const *engine_argv;
	int engine_argc;
	long uptime_ms_init, uptime_ms_engine_start, uptime_ms_engine_end;
	int engine_status;
	const struct gf_log *log;
};

/* Adds one kernel log message (any bytes but NUL, no newline) to *lf:
 * sets its verdicts and keeps it (cut to GF_LINE_MAX - 1 bytes) when it is
 * one of the clock lines. */
void gf_log_line(struct gf_log *lf, const char *msg);

/* Fills *lf (zeroed by the caller) from /dev/kmsg, or from klogctl where
 * /dev/kmsg cannot be read; lf->source stays NULL when neither can. */
void gf_log_read(struct gf_log *lf);

/* The result document {"schema":"clockbench-guest/1","guest":...,"bench":...}
 * in a new buffer (*olen bytes, ending in a newline), bench being the
 * engine's JSON object of len bytes, copied as it is.  NULL on failure. */
char *gf_result_doc(const struct gf_facts *g, const char *bench, size_t len, size_t *olen);

#endif
