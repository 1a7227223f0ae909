/* tscrate.c: the TSC's rate against clocks it does not drive: the RTC's
 * one-a-second update interrupts, CLOCK_MONOTONIC (what NTP has made of
 * the clocksource) and CLOCK_MONOTONIC_RAW; with the kernel's own TSC
 * frequency and its NTP frequency correction (adjtimex).  The model is
 * the rate test of the seed's tsccheck. */
#include "clockbench.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/rtc.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/timex.h>
#include <unistd.h>

#define RTC_DEVICE "/dev/rtc0"
#define EDGE_TIMEOUT_MS 3000 /* an edge is due every second; the first within one */

/* ---- the arithmetic (pure, unit-tested) ---- */

int cb_rate_fit(const uint64_t *tsc, const int64_t *idx, int n, double *hz, double *rms_ticks)
{
	long double xm = 0, ym = 0, sxx = 0, sxy = 0, ss = 0, slope;
	int i;

	if (n < 2)
		return -1;
	/* relative to the first stamp, signed (a TSC that went back gives no
	 * slope, not a huge one); long double keeps every tick */
	for (i = 0; i < n; i++) {
		xm += idx[i];
		ym += (long double)(int64_t)(tsc[i] - tsc[0]);
	}
	xm /= n;
	ym /= n;
	for (i = 0; i < n; i++) {
		long double dx = idx[i] - xm, dy = (long double)(int64_t)(tsc[i] - tsc[0]) - ym;
		sxx += dx * dx;
		sxy += dx * dy;
	}
	if (sxx <= 0)
		return -1;
	slope = sxy / sxx;
	if (!(slope > 0))
		return -1;
	for (i = 0; i < n; i++) {
		long double r = (long double)(int64_t)(tsc[i] - tsc[0]) - ym - slope * (idx[i] - xm);
		ss += r * r;
	}
	*hz = (double)slope;
	*rms_ticks = (double)sqrtl(ss / n);
	return 0;
}

double cb_rate_ppm(double hz, double ref_hz)
{
	if (!(ref_hz > 0) || !isfinite(hz))
		return NAN;
	return (hz / ref_hz - 1) * 1e6;
}

double cb_adjtimex_freq_ppm(long freq)
{
	return freq / 65536.0; /* struct timex's freq is ppm with a 16-bit fraction */
}

long long cb_kmsg_tsc_khz(const char *rec, int *rank)
{
	static const char *const pre[] = { "tsc: Detected ", "tsc: Refined TSC clocksource calibration: " };
	const char *p = strchr(rec, ';');
	long long mhz = 0, frac = 0;
	int i, digits;

	p = p ? p + 1 : rec; /* /dev/kmsg: "PRI,SEQ,USEC,FLAGS;message" */
	for (i = 0; i < 2 && strncmp(p, pre[i], strlen(pre[i])); i++)
		;
	if (i == 2)
		return -1;
	p += strlen(pre[i]);
	for (digits = 0; *p >= '0' && *p <= '9' && digits < 9; p++, digits++)
		mhz = mhz * 10 + (*p - '0');
	if (!digits || *p++ != '.')
		return -1;
	for (digits = 0; *p >= '0' && *p <= '9' && digits < 3; p++, digits++)
		frac = frac * 10 + (*p - '0');
	if (digits != 3 || strncmp(p, " MHz", 4))
		return -1;
	/* The kernel prints cpu_khz as "MHz processor" and tsc_khz, where it
	 * differs, as "MHz TSC"; the refined calibration replaces both. */
	*rank = i == 1 ? 3 : !strncmp(p + 4, " TSC", 4) ? 2 : 1;
	return mhz * 1000 + frac;
}

void cb_tsc_rate_ppms(struct cb_tsc_rate *t)
{
	double ref = t->kernel_tsc_khz > 0 ? t->kernel_tsc_khz * 1e3 : t->engine_tsc_khz * 1e3;

	t->ppm_reference = t->kernel_tsc_khz > 0 ? "kernel" : "engine";
	t->rtc.ppm = t->rtc.available ? cb_rate_ppm(t->rtc.tsc_hz, ref) : NAN;
	t->monotonic.ppm = cb_rate_ppm(t->monotonic.tsc_hz, ref);
	t->monotonic_raw.ppm = cb_rate_ppm(t->monotonic_raw.tsc_hz, ref);
}

/* ---- what the kernel and the CPU say ---- */

/* The TSC kHz from CPUID 0x15 (with its crystal, as the kernel computes
 * it), else the hypervisor's leaf 0x40000010, else the kernel's log. */
static long long kernel_tsc_khz(const char **source)
{
	static char rec[8192];
	long long khz = 0, v;
	uint32_t r[4];
	int fd, best = 0, rank;
	ssize_t n;

	cb_cpuid(0, r);
	if (r[0] >= 0x15) {
		cb_cpuid(0x15, r);
		if (r[0] && r[1] && r[2]) {
			*source = "cpuid-0x15";
			return (long long)(r[2] / 1000) * r[1] / r[0];
		}
	}
	cb_cpuid(1, r);
	if (r[2] & (1u << 31)) {
		cb_cpuid(0x40000000, r);
		if (r[0] >= 0x40000010) {
			cb_cpuid(0x40000010, r);
			if (r[0]) {
				*source = "cpuid-0x40000010";
				return r[0];
			}
		}
	}
	fd = open(CB_KMSG_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return 0;
	/* one record a read; EPIPE: records overwritten under us, read on */
	while ((n = read(fd, rec, sizeof rec - 1)) > 0 || (n < 0 && (errno == EPIPE || errno == EINTR))) {
		if (n <= 0)
			continue;
		rec[n] = '\0';
		if ((v = cb_kmsg_tsc_khz(rec, &rank)) > 0 && rank >= best) {
			best = rank;
			khz = v;
		}
	}
	close(fd);
	if (khz)
		*source = "kmsg";
	return khz;
}

static void read_adjtimex(struct cb_tsc_rate *t)
{
	struct timex tx;

	memset(&tx, 0, sizeof tx); /* modes 0: read only */
	if (adjtimex(&tx) < 0) {
		cb_warn("adjtimex: %s", strerror(errno));
		return;
	}
	t->adjtimex.available = 1;
	t->adjtimex.freq_ppm = cb_adjtimex_freq_ppm(tx.freq);
	t->adjtimex.tick_us = tx.tick;
	t->adjtimex.status = tx.status;
	t->adjtimex.synchronized = !(tx.status & STA_UNSYNC);
	t->adjtimex.maxerror_us = tx.maxerror;
	t->adjtimex.esterror_us = tx.esterror;
}

/* ---- the measurement ---- */

/* The TSC beside CLOCK_MONOTONIC and beside CLOCK_MONOTONIC_RAW, each the
 * narrowest of several rdtsc/clock_gettime/rdtsc brackets, the TSC taken
 * at its middle. */
struct stamp {
	uint64_t tsc[2];
	long double ns[2];
};

static void stamp_now(struct stamp *s)
{
	cb_tsc_pair(CLOCK_MONOTONIC, 8, &s->tsc[0], &s->ns[0]);
	cb_tsc_pair(CLOCK_MONOTONIC_RAW, 8, &s->tsc[1], &s->ns[1]);
}

/* TSC ticks per second of clock c between two stamps; NaN if none passed. */
static double stamp_hz(const struct stamp *a, const struct stamp *b, int c)
{
	if (b->ns[c] <= a->ns[c] || b->tsc[c] <= a->tsc[c])
		return NAN;
	return (double)((long double)(b->tsc[c] - a->tsc[c]) * 1e9L / (b->ns[c] - a->ns[c]));
}

/* Reads update interrupts from the RTC until span seconds have passed
 * since the first, the TSC taken as each read returns (tsc[], with each
 * edge's second in idx[]: a record counting k interrupts moves it by k),
 * and stamps at the first and last edge.  Update interrupts are always
 * switched off again.  Under test, a device that is not an RTC (ENOTTY:
 * a FIFO of 8-byte records) is read as one.  Returns the number of edges,
 * or -1 with why in t->rtc.reason. */
static int rtc_edges(struct cb_tsc_rate *t, int test, int span, uint64_t *tsc, int64_t *idx,
		     struct stamp *first, struct stamp *last)
{
	const char *dev = t->rtc.device;
	char *why = t->rtc.reason;
	size_t wn = sizeof t->rtc.reason;
	int fd, uie = 0, n = 0;

	fd = open(dev, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			snprintf(why, wn, "no %s on this machine", dev);
		else
			snprintf(why, wn, "open %s: %s", dev, strerror(errno));
		return -1;
	}
	if (ioctl(fd, RTC_UIE_ON, 0) == 0)
		uie = 1;
	else if (!test || errno != ENOTTY) {
		snprintf(why, wn, "ioctl RTC_UIE_ON on %s (update interrupts): %s", dev, strerror(errno));
		close(fd);
		return -1;
	}
	while (!n || idx[n - 1] < span) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		unsigned long data;
		ssize_t got;
		uint64_t now;
		int r = poll(&p, 1, EDGE_TIMEOUT_MS);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(why, wn, "poll %s: %s", dev, strerror(errno));
			break;
		}
		if (r == 0) {
			snprintf(why, wn, "no update interrupt from %s within %d s, after %d edge(s)", dev,
				 EDGE_TIMEOUT_MS / 1000, n);
			break;
		}
		got = read(fd, &data, sizeof data);
		now = cb_rdtsc_end();
		if (got < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (got != (ssize_t)sizeof data) {
			if (got < 0)
				snprintf(why, wn, "read %s: %s", dev, strerror(errno));
			else
				snprintf(why, wn, "read %s: %zd bytes, not %zu", dev, got, sizeof data);
			break;
		}
		/* low byte: flags; the rest: interrupts since the last read */
		tsc[n] = now;
		idx[n] = n ? idx[n - 1] + (int64_t)(data >> 8 ? data >> 8 : 1) : 0;
		stamp_now(n ? last : first);
		n++;
	}
	if (uie && ioctl(fd, RTC_UIE_OFF, 0) < 0)
		cb_warn("ioctl RTC_UIE_OFF on %s: %s", dev, strerror(errno));
	close(fd);
	return why[0] ? -1 : n;
}

int cb_check_tsc_rate(const struct cb_opts *o, double tpn, struct cb_tsc_rate *t)
{
	int span = (int)o->duration, n;
	uint64_t *tsc = calloc((size_t)span + 1, sizeof *tsc);
	int64_t *idx = calloc((size_t)span + 1, sizeof *idx);
	struct stamp s0, s1, first, last;
	cpu_set_t saved;
	int rc = -1;

	memset(t, 0, sizeof *t);
	t->engine_tsc_khz = tpn * 1e6;
	t->rtc.device = o->test_rtc_device ? o->test_rtc_device : RTC_DEVICE;
	t->rtc.tsc_hz = t->rtc.jitter_us = NAN;
	t->kernel_tsc_khz = kernel_tsc_khz(&t->kernel_tsc_khz_source);
	if (!tsc || !idx) {
		cb_warn("calloc: %s", strerror(errno));
		goto out;
	}
	/* one CPU's TSC throughout */
	if (sched_getaffinity(0, sizeof saved, &saved) < 0 || cb_pin(o->cpus[0]) < 0)
		goto out;
	stamp_now(&s0);
	n = rtc_edges(t, !!o->test_rtc_device, span, tsc, idx, &first, &last);
	if (n >= 2 && cb_rate_fit(tsc, idx, n, &t->rtc.tsc_hz, &t->rtc.jitter_us) == 0) {
		t->rtc.available = 1;
		t->rtc.edges = n;
		t->rtc.jitter_us = t->rtc.jitter_us / t->rtc.tsc_hz * 1e6;
		s0 = first; /* the same window for every reference */
		s1 = last;
	} else {
		struct timespec end;
		long double ns;
		if (n >= 0)
			snprintf(t->rtc.reason, sizeof t->rtc.reason, "%d edge(s) from %s gave no rate", n, t->rtc.device);
		/* the window --duration long from before the RTC was tried */
		ns = s0.ns[0] + o->duration * 1e9L;
		end.tv_sec = (time_t)(ns / 1e9L);
		end.tv_nsec = (long)(ns - (long double)end.tv_sec * 1e9L);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &end, NULL) == EINTR)
			;
		stamp_now(&s1);
	}
	sched_setaffinity(0, sizeof saved, &saved);
	t->seconds = (double)((s1.ns[1] - s0.ns[1]) / 1e9L);
	t->monotonic.tsc_hz = stamp_hz(&s0, &s1, 0);
	t->monotonic_raw.tsc_hz = stamp_hz(&s0, &s1, 1);
	read_adjtimex(t);
	cb_tsc_rate_ppms(t);
	if (cb_current_clocksource(t->clocksource, sizeof t->clocksource) < 0)
		snprintf(t->clocksource, sizeof t->clocksource, "unknown");
	rc = 0;
out:
	free(tsc);
	free(idx);
	return rc;
}
