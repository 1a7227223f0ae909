/* settle.h: /init's wait, before the engine measures, until the guest
 * kernel's clocksource has settled (docs/guest.md: the clocksource wait).
 * Apart from init.c so that the unit tests drive it with fake sysfs files,
 * a fake kernel log and a fake clock. */
#ifndef CLOCKBENCH_SETTLE_H
#define CLOCKBENCH_SETTLE_H

#include <stddef.h>

#define SETTLE_LIMIT_MS 10000 /* the longest wait; then the engine measures anyway */
#define SETTLE_QUIET_MS 2000  /* no change for this long ends a wait with nothing pending for sure */
#define SETTLE_POLL_MS 50
#define SETTLE_NAME_MAX 32

enum settle_end { SETTLE_WAITING, SETTLE_SETTLED, SETTLE_QUIET, SETTLE_TIMEOUT, SETTLE_UNREADABLE, SETTLE_OFF };

/* The wait so far: what the kernel showed, from sysfs and its log. */
struct settle {
	long limit_ms, quiet_ms;
	long start_ms, last_ms, change_ms; /* first look, latest look, last change seen */
	int looks;
	char from[SETTLE_NAME_MAX], current[SETTLE_NAME_MAX]; /* current_clocksource; "" unreadable */
	char avail[256];                                       /* available_clocksource as read */
	int early_listed, tsc_listed;                          /* tsc-early, tsc among them */
	int tsc_detected, tsc_unstable, refined;               /* kernel log lines seen */
	char switched_to[SETTLE_NAME_MAX];                     /* the log's last switch */
	char carry[8192];                                      /* a log line cut by a read */
	size_t ncarry;
	enum settle_end end;
};

/* Starts a wait at now_ms with the given limits (SETTLE_*_MS normally). */
void settle_begin(struct settle *s, long now_ms, long limit_ms, long quiet_ms);

/* One look at sysfs at now_ms: current and available as read, NULL where
 * unreadable.  A change of either restarts the quiet period. */
void settle_look(struct settle *s, long now_ms, const char *current, const char *available);

/* One kernel log message (no newline): the refined calibration, a switch,
 * the TSC detected or marked unstable. */
void settle_log_line(struct settle *s, const char *msg);

/* The decision after the latest look; sets and returns s->end.  Settled:
 * the current clocksource is none of tsc-early, jiffies, refined-jiffies,
 * and no switch is pending (tsc-early still listed: the kernel's refined
 * calibration has not run; or, on a kernel without tsc-early, a TSC
 * detected in the log that is neither registered nor marked unstable).
 * Quiet: nothing pending for sure (tsc-early not listed) and no change for
 * quiet_ms.  Timeout: limit_ms passed.  Unreadable: no current_clocksource
 * (the engine cannot read it either).  Else waiting. */
enum settle_end settle_decide(struct settle *s);

/* Clock and sleep for settle_wait; the unit tests give fake ones. */
struct settle_io {
	const char *sysfs;  /* holds current_clocksource, available_clocksource */
	int log_fd;         /* -1: no kernel log */
	long (*now_ms)(void *arg);
	void (*nap_ms)(void *arg, long ms);
	void *arg;
};

/* Looks every SETTLE_POLL_MS until settle_decide() ends the wait; returns
 * how it ended.  s is started here. */
enum settle_end settle_wait(struct settle *s, const struct settle_io *io, long limit_ms, long quiet_ms);

/* "settled", "quiet", "timeout", "unreadable", "off" (and "waiting"). */
const char *settle_end_name(enum settle_end e);

#endif
