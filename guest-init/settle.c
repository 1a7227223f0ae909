/* settle.c: the clocksource wait: what the guest kernel shows (sysfs, its
 * log), the decision, and the loop that looks until it is made. */
#include "settle.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clockbench.h"

void settle_begin(struct settle *s, long now_ms, long limit_ms, long quiet_ms)
{
	memset(s, 0, sizeof *s);
	s->limit_ms = limit_ms;
	s->quiet_ms = quiet_ms;
	s->start_ms = s->last_ms = s->change_ms = now_ms;
}

/* 1 if name is a whole word of the space-separated list. */
static int listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *w = list; *(w += strspn(w, " ")); w += strcspn(w, " "))
		if (strcspn(w, " ") == n && !strncmp(w, name, n))
			return 1;
	return 0;
}

void settle_look(struct settle *s, long now_ms, const char *current, const char *available)
{
	char cur[SETTLE_NAME_MAX], avail[sizeof s->avail];

	snprintf(cur, sizeof cur, "%s", current ? current : "");
	snprintf(avail, sizeof avail, "%s", available ? available : "");
	if (s->looks && (strcmp(cur, s->current) || strcmp(avail, s->avail)))
		s->change_ms = now_ms;
	if (!s->looks)
		memcpy(s->from, cur, sizeof cur);
	memcpy(s->current, cur, sizeof cur);
	memcpy(s->avail, avail, sizeof avail);
	s->early_listed = listed(avail, "tsc-early");
	s->tsc_listed = listed(avail, "tsc");
	s->last_ms = now_ms;
	s->looks++;
}

void settle_log_line(struct settle *s, const char *msg)
{
	const char *sw = strstr(msg, "Switched to clocksource ");

	if (strstr(msg, "tsc: Refined TSC clocksource calibration"))
		s->refined = 1;
	if (strstr(msg, "tsc: Detected "))
		s->tsc_detected = 1;
	if (strstr(msg, "Marking TSC unstable") || strstr(msg, "'tsc' as unstable") || strstr(msg, "'tsc-early' as unstable"))
		s->tsc_unstable = 1;
	if (sw)
		snprintf(s->switched_to, sizeof s->switched_to, "%.*s", (int)strcspn(sw + 24, " \n"), sw + 24);
}

/* One record line: "LEVEL,SEQ,USEC,FLAGS;message" (a kmsg record), or a
 * continuation line (" KEY=VALUE"), which is skipped. */
static void record_line(struct settle *s, char *line)
{
	char *msg = strchr(line, ';');

	if (*line != ' ' && msg)
		settle_log_line(s, msg + 1);
}

/* Reads what fd (/dev/kmsg opened O_NONBLOCK, or a file of such records)
 * holds now, record by record, into settle_log_line; a bounded number of
 * reads, so a flood of messages cannot hold /init here. */
static void settle_log_read(struct settle *s, int fd)
{
	/* /dev/kmsg gives one record a read; a regular file gives many, the
	 * last one possibly cut: kept in carry for the next read. */
	for (int reads = 0; fd >= 0 && reads < 4096; reads++) {
		size_t room = sizeof s->carry - 1 - s->ncarry;
		ssize_t r = read(fd, s->carry + s->ncarry, room);
		char *line, *nl;

		if (r < 0 && errno == EPIPE)
			continue; /* records overwritten: go on with the next */
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return;
		s->ncarry += (size_t)r;
		s->carry[s->ncarry] = 0;
		for (line = s->carry; (nl = memchr(line, '\n', s->ncarry - (size_t)(line - s->carry))); line = nl + 1) {
			*nl = 0;
			record_line(s, line);
		}
		s->ncarry -= (size_t)(line - s->carry);
		memmove(s->carry, line, s->ncarry);
		if (s->ncarry == sizeof s->carry - 1)
			s->ncarry = 0; /* a line longer than the buffer: dropped */
	}
}

enum settle_end settle_decide(struct settle *s)
{
	int unsettled_cur, pending_log;

	if (!s->looks)
		return s->end = SETTLE_WAITING;
	if (!s->current[0])
		return s->end = SETTLE_UNREADABLE;
	/* the engine's list: what its host build refuses to measure on */
	unsettled_cur = cb_clocksource_unsettled(s->current);
	/* tsc_refine_calibration_work (arch/x86/kernel/tsc.c) unregisters
	 * tsc-early at its end whatever it found, after registering tsc unless
	 * the TSC was marked unstable: while tsc-early is listed, a switch may
	 * come.  Kernels without tsc-early register tsc only then: a TSC the
	 * log detected, neither listed nor marked unstable, may still come. */
	pending_log = s->tsc_detected && !s->tsc_unstable && !s->tsc_listed && !s->early_listed;
	if (!unsettled_cur && !s->early_listed && !pending_log)
		return s->end = SETTLE_SETTLED;
	if (!s->early_listed && s->last_ms - s->change_ms >= s->quiet_ms)
		return s->end = SETTLE_QUIET;
	if (s->last_ms - s->start_ms >= s->limit_ms)
		return s->end = SETTLE_TIMEOUT;
	return s->end = SETTLE_WAITING;
}

enum settle_end settle_wait(struct settle *s, const struct settle_io *io, long limit_ms, long quiet_ms)
{
	char cur[SETTLE_NAME_MAX], avail[sizeof s->avail], path[256];
	int rc, ra;

	settle_begin(s, io->now_ms(io->arg), limit_ms, quiet_ms);
	if (limit_ms <= 0)
		return s->end = SETTLE_OFF;
	for (;;) {
		settle_log_read(s, io->log_fd);
		snprintf(path, sizeof path, "%s/current_clocksource", io->sysfs);
		rc = cb_read_line(path, cur, sizeof cur);
		snprintf(path, sizeof path, "%s/available_clocksource", io->sysfs);
		ra = cb_read_line(path, avail, sizeof avail);
		settle_look(s, io->now_ms(io->arg), rc ? NULL : cur, ra ? NULL : avail);
		if (settle_decide(s) != SETTLE_WAITING)
			return s->end;
		io->nap_ms(io->arg, SETTLE_POLL_MS);
	}
}

const char *settle_end_name(enum settle_end e)
{
	static const char *const names[] = { "waiting", "settled", "quiet", "timeout", "unreadable", "off" };

	return (unsigned)e < sizeof names / sizeof *names ? names[e] : "waiting";
}
