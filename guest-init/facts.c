/* facts.c: the guest result: kernel log verdicts, /init's own facts, and
 * the engine's JSON around them. */
#include "facts.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <unistd.h>

/* Kernel log lines that tell which clock path the guest took. */
static const char *const log_patterns[] = {
	"kvm-clock", "sched_clock: Marking stable", "Marking TSC unstable", "clocksource: Switched",
	"TSC warp", "as unstable", "tsc: Refined TSC", "tsc: Detected", "Hypervisor detected",
	"clocksource: Watchdog", "clocksource: timekeeping watchdog",
	/* The watchdog's skip test (5.17+), long intervals (6.5+), CPUs out of
	 * step, and the 2026 rewrite's verdicts by frequency and inter-CPU
	 * skew: the lines contract/cbcontract/kmsg.py knows. */
	"clocksource: wd-", "clocksource: Long readout", "clocksource: Marking clocksource",
	" ahead of CPU ", " behind CPU ",
};

void gf_log_line(struct gf_log *lf, const char *msg)
{
	const char *s;
	size_t i;

	for (i = 0; i < sizeof log_patterns / sizeof *log_patterns; i++)
		if (strstr(msg, log_patterns[i]))
			break;
	if (i == sizeof log_patterns / sizeof *log_patterns)
		return;
	if (strstr(msg, "kvm-clock"))
		lf->kvmclock = 1;
	if (strstr(msg, "sched_clock: Marking stable"))
		lf->sched_stable = 1;
	if (strstr(msg, "Marking TSC unstable") || strstr(msg, "'tsc' as unstable"))
		lf->tsc_unstable = 1;
	if (strstr(msg, "TSC warp"))
		lf->tsc_warp = 1;
	s = strstr(msg, "Switched to clocksource ");
	if (s)
		snprintf(lf->switched_to, sizeof lf->switched_to, "%.*s", (int)strcspn(s + 24, " \n"), s + 24);
	if (lf->n < GF_MAX_LINES)
		snprintf(lf->line[lf->n++], sizeof lf->line[0], "%s", msg);
}

void gf_log_read(struct gf_log *lf)
{
	char rec[2048], *buf, *msg;
	int fd = open(CB_KMSG_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC), n;

	if (fd >= 0) {
		for (;;) {
			ssize_t r = read(fd, rec, sizeof rec - 1);
			if (r < 0 && errno == EPIPE)
				continue; /* records overwritten: go on with the next */
			if (r <= 0)
				break;
			rec[r] = 0;
			msg = strchr(rec, ';');
			if (!msg)
				continue;
			msg++;
			msg[strcspn(msg, "\n")] = 0;
			gf_log_line(lf, msg);
		}
		close(fd);
		lf->source = CB_KMSG_DEV;
		return;
	}
	n = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	buf = n > 0 ? malloc((size_t)n + 1) : NULL;
	if (!buf)
		return;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, n);
	if (n >= 0) {
		buf[n] = 0;
		for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
			char *m = strchr(l, ']');
			gf_log_line(lf, m ? m + 1 + (m[1] == ' ') : l);
		}
		lf->source = "klogctl";
	}
	free(buf);
}

/* A verdict of the log, null when the log could not be read. */
static void verdict(struct cb_json *j, const struct gf_log *lf, const char *key, int v)
{
	if (lf->source)
		cb_json_bool(j, key, v);
	else
		cb_json_null(j, key);
}

/* The clocksource wait as "clocksource_settle" (docs/guest.md). */
static void settle_json(struct cb_json *j, const struct settle *s)
{
	if (!s) {
		cb_json_null(j, "clocksource_settle");
		return;
	}
	cb_json_obj(j, "clocksource_settle");
	cb_json_str(j, "end", settle_end_name(s->end));
	cb_json_bool(j, "settled", s->end == SETTLE_SETTLED || s->end == SETTLE_QUIET);
	cb_json_int(j, "ms", s->last_ms - s->start_ms);
	cb_json_str(j, "from", s->from[0] ? s->from : NULL);
	cb_json_str(j, "to", s->current[0] ? s->current : NULL);
	cb_json_bool(j, "tsc_early_listed", s->early_listed);
	cb_json_bool(j, "refined_line", s->refined);
	cb_json_int(j, "limit_ms", s->limit_ms);
	cb_json_int(j, "quiet_ms", s->quiet_ms);
	cb_json_end_obj(j);
}

/* Writes g as the object key (NULL in an array); escaping is the engine's. */
static void gf_facts_json(struct cb_json *j, const char *key, const struct gf_facts *g)
{
	const struct gf_log *lf = g->log;

	cb_json_obj(j, key);
	cb_json_str(j, "clocksource_before", g->clocksource_before);
	settle_json(j, g->settle);
	cb_json_obj(j, "log");
	cb_json_str(j, "source", lf->source);
	verdict(j, lf, "kvm_clock", lf->kvmclock);
	verdict(j, lf, "sched_clock_marked_stable", lf->sched_stable);
	verdict(j, lf, "tsc_marked_unstable", lf->tsc_unstable);
	verdict(j, lf, "tsc_warp", lf->tsc_warp);
	cb_json_str(j, "switched_to", lf->switched_to[0] ? lf->switched_to : NULL);
	cb_json_arr(j, "lines");
	for (int i = 0; i < lf->n; i++)
		cb_json_str(j, NULL, lf->line[i]);
	cb_json_end_arr(j);
	cb_json_end_obj(j);
	cb_json_str(j, "channel", g->channel);
	cb_json_arr(j, "engine_argv");
	for (int i = 0; i < g->engine_argc; i++)
		cb_json_str(j, NULL, g->engine_argv[i]);
	cb_json_end_arr(j);
	cb_json_int(j, "uptime_ms_init", g->uptime_ms_init);
	cb_json_int(j, "uptime_ms_engine_start", g->uptime_ms_engine_start);
	cb_json_int(j, "uptime_ms_engine_end", g->uptime_ms_engine_end);
	cb_json_int(j, "engine_status", g->engine_status);
	cb_json_end_obj(j);
}

char *gf_result_doc(const struct gf_facts *g, const char *bench, size_t len, size_t *olen)
{
	char *out = NULL;
	struct cb_json j;
	FILE *f = open_memstream(&out, olen);

	if (!f)
		return NULL;
	cb_json_begin(&j, f);
	cb_json_obj(&j, NULL);
	cb_json_str(&j, "schema", "clockbench-guest/1");
	gf_facts_json(&j, "guest", g);
	/* The engine's writer has no call for a ready-made value: this key by hand. */
	fputs(",\"bench\":", f);
	fwrite(bench, 1, len, f);
	cb_json_end_obj(&j);
	if (fclose(f)) {
		free(out);
		return NULL;
	}
	return out;
}
