/* workload.c: real work beside the clock reads: a loopback TCP stream
 * (netperf's TCP_STREAM, iperf3), one-byte TCP request and response
 * (TCP_RR), and short absolute sleeps (cyclictest).  Every socket operation
 * has a time limit, so a workload that cannot run fails within seconds with
 * one line, never hangs. */
#include "clockbench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define IO_TIMEOUT_S 5 /* any one socket operation, connect included */

const char *const cb_workload_names[CB_NWORKLOADS] = {
#define CB_WORKLOAD(member, name, unit, short_unit, latency) name,
#include "names.h"
};

double cb_workload_rate(enum cb_workload w, uint64_t count, double seconds, const char **unit)
{
	static const char *const units[CB_NWORKLOADS] = {
#define CB_WORKLOAD(member, name, unit, short_unit, latency) unit,
#include "names.h"
	};

	*unit = units[w];
	if (!(seconds > 0))
		return NAN;
	return w == CB_WL_TCP_STREAM ? (double)count * 8 / seconds / 1e9 : (double)count / seconds;
}

/* min, median, mean, p99, p999, max of h (ns) in microseconds. */
static void fill_latency(struct cb_workload_result *r, const struct cb_hist *h)
{
	static const double qs[CB_NQ] = { 0, 0.5, -1, 0.99, 0.999, 1 };
	int i;

	r->have_latency = 1;
	for (i = 0; i < CB_NQ; i++)
		r->latency_us[i] = (i == CB_Q_MEAN ? cb_hist_mean(h) : cb_hist_quantile(h, qs[i])) / 1000;
}

/* ---- a TCP connection over loopback ---- */

/* 1 if the kernel says "lo" is not up, 0 if it is or cannot say. */
static int loopback_down(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), down = 0;

	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0)
		down = !(ifr.ifr_flags & IFF_UP);
	if (fd >= 0)
		close(fd);
	return down;
}

/* Waits up to IO_TIMEOUT_S for events on fd: 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n;

	while ((n = poll(&p, 1, IO_TIMEOUT_S * 1000)) < 0 && errno == EINTR)
		;
	return n;
}

/* fd[0] the connecting end, fd[1] the accepted one, both blocking with
 * send and receive time limits.  Returns 0, or -1 after one line. */
static int tcp_connect_pair(const char *name, int nodelay, int fd[2])
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { .tv_sec = IO_TIMEOUT_S };
	socklen_t len = sizeof a;
	int l, e = 0, i, port = 0, one = 1;

	fd[0] = fd[1] = -1;
	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (l < 0) {
		cb_warn("%s: socket: %s", name, strerror(errno));
		return -1;
	}
	if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&a, &len) < 0) {
		e = errno;
		if (loopback_down())
			cb_warn("%s: loopback is down (bind 127.0.0.1: %s)", name, strerror(e));
		else
			cb_warn("%s: listen on 127.0.0.1: %s", name, strerror(e));
		goto fail;
	}
	port = ntohs(a.sin_port);
	fd[0] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd[0] < 0) {
		cb_warn("%s: socket: %s", name, strerror(errno));
		goto fail;
	}
	if (connect(fd[0], (struct sockaddr *)&a, sizeof a) < 0) {
		if (errno != EINPROGRESS) {
			e = errno;
		} else if ((i = wait_fd(fd[0], POLLOUT)) <= 0) {
			e = i < 0 ? errno : ETIMEDOUT;
		} else {
			len = sizeof e;
			if (getsockopt(fd[0], SOL_SOCKET, SO_ERROR, &e, &len) < 0)
				e = errno;
		}
	}
	if (e) {
		if (loopback_down())
			cb_warn("%s: loopback is down (connect 127.0.0.1:%d: %s)", name, port, strerror(e));
		else
			cb_warn("%s: connect 127.0.0.1:%d: %s", name, port, strerror(e));
		goto fail;
	}
	if ((i = wait_fd(l, POLLIN)) <= 0 || (fd[1] = accept4(l, NULL, NULL, SOCK_CLOEXEC)) < 0) {
		cb_warn("%s: accept on 127.0.0.1:%d: %s", name, port, strerror(i == 0 ? ETIMEDOUT : errno));
		goto fail;
	}
	close(l);
	l = -1;
	if (fcntl(fd[0], F_SETFL, fcntl(fd[0], F_GETFL) & ~O_NONBLOCK) < 0) {
		cb_warn("%s: fcntl: %s", name, strerror(errno));
		goto fail;
	}
	for (i = 0; i < 2; i++)
		if (setsockopt(fd[i], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0 ||
		    setsockopt(fd[i], SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv) < 0 ||
		    (nodelay && setsockopt(fd[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)) {
			cb_warn("%s: setsockopt: %s", name, strerror(errno));
			goto fail;
		}
	return 0;
fail:
	if (l >= 0)
		close(l);
	for (i = 0; i < 2; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	fd[0] = fd[1] = -1;
	return -1;
}

/* Two threads over one connection: side 0 sends (tcp-stream) or asks
 * (tcp-rr), side 1 receives or answers. */
struct pair {
	const char *name;
	enum cb_workload w;
	int fd[2], cpu[2];
	unsigned msg;
	int stall;                  /* tests: side 1 never reads */
	uint64_t duration_ticks, timeout_ticks;
	double tpn;
	struct cb_gate gate;
	atomic_int failed;
	char err[256];
	uint64_t count, first, last; /* bytes received or transactions; TSC */
	struct cb_hist *lat;         /* tcp-rr round trips, ns */
};

struct side {
	struct pair *p;
	int i;
	pthread_t tid;
};

/* The first failure of either side is the one reported (e 0: closed).  The
 * failing side resets its end, so the other's blocked call returns now. */
static void side_fail(struct pair *p, int i, const char *what, int e)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (!atomic_exchange(&p->failed, 1)) {
		if (e == EAGAIN || e == EWOULDBLOCK)
			snprintf(p->err, sizeof p->err, "%s: %s: no progress within %d s", p->name, what, IO_TIMEOUT_S);
		else
			snprintf(p->err, sizeof p->err, "%s: %s: %s", p->name, what,
				 e ? strerror(e) : "connection closed by the other side");
	}
	setsockopt(p->fd[i], SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
	close(p->fd[i]);
	p->fd[i] = -1;
}

/* tests: side 1 never reads or answers, until the other side has failed
 * (bounded all the same, and then a failure of its own). */
static void stall(struct pair *p)
{
	uint64_t end = cb_rdtsc() + p->duration_ticks + 4 * p->timeout_ticks;

	while (!atomic_load(&p->failed) && cb_rdtsc() < end)
		usleep(1000);
	side_fail(p, 1, "stalled for the tests", ETIMEDOUT);
}

static void stream_side(struct pair *p, int i, char *buf)
{
	uint64_t deadline;
	size_t off;
	ssize_t n;

	if (!cb_gate_wait(&p->gate))
		return;
	if (i == 0) {
		deadline = cb_rdtsc() + p->duration_ticks;
		while (cb_rdtsc() < deadline) {
			/* Whole writes.  The time limit ending a write partway
			 * returns what went (seen here): a write that took
			 * that long is the failure, as one with nothing sent. */
			for (off = 0; off < p->msg; off += n > 0 ? (size_t)n : 0) {
				uint64_t t0 = cb_rdtsc();
				n = send(p->fd[0], buf + off, p->msg - off, MSG_NOSIGNAL);
				if ((n < 0 && errno != EINTR) ||
				    (n >= 0 && (size_t)n < p->msg - off && cb_rdtsc() - t0 >= p->timeout_ticks)) {
					side_fail(p, 0, "send", n < 0 ? errno : EAGAIN);
					return;
				}
			}
		}
		shutdown(p->fd[0], SHUT_WR);
		return;
	}
	if (p->stall) {
		stall(p);
		return;
	}
	p->first = cb_rdtsc();
	while ((n = recv(p->fd[1], buf, p->msg, 0)) != 0) {
		if (n > 0)
			p->count += (uint64_t)n;
		else if (errno != EINTR) {
			side_fail(p, 1, "recv", errno);
			return;
		}
	}
	p->last = cb_rdtsc();
}

/* One byte each way, 'q' then 'a'; a short read is a failure. */
static void rr_side(struct pair *p, int i)
{
	uint64_t deadline, t0, t1;
	char b = 'q';
	ssize_t n;

	if (!cb_gate_wait(&p->gate))
		return;
	if (i == 1) {
		if (p->stall) {
			stall(p);
			return;
		}
		for (;;) {
			while ((n = recv(p->fd[1], &b, 1, 0)) < 0 && errno == EINTR)
				;
			if (n == 0)
				return; /* the client is done */
			if (n < 0) {
				side_fail(p, 1, "server recv", errno);
				return;
			}
			b = 'a';
			while ((n = send(p->fd[1], &b, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR)
				;
			if (n != 1) {
				side_fail(p, 1, "server send", n < 0 ? errno : 0);
				return;
			}
		}
	}
	p->first = cb_rdtsc();
	deadline = p->first + p->duration_ticks;
	do {
		t0 = cb_rdtsc();
		b = 'q';
		while ((n = send(p->fd[0], &b, 1, MSG_NOSIGNAL)) < 0 && errno == EINTR)
			;
		if (n != 1) {
			side_fail(p, 0, "client send", n < 0 ? errno : 0);
			return;
		}
		while ((n = recv(p->fd[0], &b, 1, 0)) < 0 && errno == EINTR)
			;
		if (n != 1) {
			side_fail(p, 0, "client recv", n < 0 ? errno : 0);
			return;
		}
		t1 = cb_rdtsc();
		cb_hist_add(p->lat, (uint64_t)llround((double)(t1 - t0) / p->tpn));
		p->count++;
	} while (t1 < deadline);
	p->last = t1;
	shutdown(p->fd[0], SHUT_WR);
}

static void *side_main(void *arg)
{
	struct side *s = arg;
	struct pair *p = s->p;
	char *buf = NULL;

	if (cb_pin(p->cpu[s->i]) < 0) {
		atomic_store(&p->failed, 1); /* cb_pin said why */
		cb_gate_wait(&p->gate);
		close(p->fd[s->i]);
		p->fd[s->i] = -1;
		return NULL;
	}
	if (p->w == CB_WL_TCP_STREAM) {
		buf = malloc(p->msg);
		if (!buf) {
			cb_gate_wait(&p->gate);
			side_fail(p, s->i, "malloc", errno);
			return NULL;
		}
		memset(buf, 'x', p->msg);
		stream_side(p, s->i, buf);
	} else {
		rr_side(p, s->i);
	}
	free(buf);
	return NULL;
}

static int run_pair(const struct cb_opts *o, enum cb_workload w, double tpn, struct cb_workload_result *r)
{
	static struct cb_hist lat;
	struct pair *p = calloc(1, sizeof *p);
	struct side s[2];
	int i, rc = -1;

	if (!p) {
		cb_warn("calloc: %s", strerror(errno));
		return -1;
	}
	p->name = cb_workload_names[w];
	p->w = w;
	p->cpu[0] = o->cpus[0];
	p->cpu[1] = o->cpus[o->ncpus > 1 ? 1 : 0];
	p->msg = o->msg_size;
	p->stall = o->test_stall;
	p->duration_ticks = (uint64_t)(o->duration * 1e9 * tpn);
	p->timeout_ticks = (uint64_t)(IO_TIMEOUT_S * 1e9 * tpn);
	p->tpn = tpn;
	p->lat = &lat;
	cb_hist_init(&lat);
	atomic_store(&p->failed, 0);
	if (tcp_connect_pair(p->name, w == CB_WL_TCP_RR, p->fd) < 0)
		goto out;
	for (i = 0; i < 2; i++) {
		s[i].p = p;
		s[i].i = i;
	}
	if (CB_RUN_THREADS(&p->gate, side_main, s, 2) < 0)
		goto out;
	if (atomic_load(&p->failed)) {
		if (p->err[0])
			cb_warn("%s", p->err);
		goto out;
	}
	r->workload = w;
	r->threads = 2;
	r->cpus[0] = p->cpu[0];
	r->cpus[1] = p->cpu[1];
	r->seconds = (double)(p->last - p->first) / tpn / 1e9;
	r->rate = cb_workload_rate(w, p->count, r->seconds, &r->rate_unit);
	if (w == CB_WL_TCP_STREAM) {
		r->msg_bytes = p->msg;
		r->bytes = p->count;
	} else {
		r->transactions = p->count;
		fill_latency(r, &lat);
	}
	rc = 0;
out:
	for (i = 0; i < 2; i++)
		if (p->fd[i] >= 0)
			close(p->fd[i]);
	free(p);
	return rc;
}

/* ---- timer: absolute sleeps of CB_TIMER_INTERVAL_US, as cyclictest ---- */

struct ticker {
	pthread_t tid;
	int cpu, err;
	int64_t duration_ns;
	struct cb_gate *gate;
	struct cb_hist *lat;         /* wake time less the deadline, ns */
	uint64_t wakeups, overruns;
	double seconds;
} __attribute__((aligned(64)));

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static void *ticker_main(void *arg)
{
	struct ticker *t = arg;
	const int64_t interval = CB_TIMER_INTERVAL_US * 1000;
	struct timespec ts;
	int64_t start, next, now;
	int e;

	t->err = cb_pin(t->cpu);
	if (!cb_gate_wait(t->gate) || t->err)
		return NULL;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	start = now = ns_of(&ts);
	next = start + interval;
	while (now - start < t->duration_ns) {
		ts.tv_sec = next / 1000000000;
		ts.tv_nsec = next % 1000000000;
		if ((e = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))) {
			if (e == EINTR)
				continue;
			cb_warn("timer: clock_nanosleep: %s", strerror(e));
			t->err = 1;
			return NULL;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = ns_of(&ts);
		cb_hist_add(t->lat, (uint64_t)(now > next ? now - next : 0));
		t->wakeups++;
		/* deadlines already past when the thread comes to sleep again */
		for (next += interval; next <= now; next += interval)
			t->overruns++;
	}
	t->seconds = (double)(now - start) / 1e9;
	return NULL;
}

static int run_timer(const struct cb_opts *o, struct cb_workload_result *r)
{
	int n = o->threads[o->nthreads - 1], i, rc = -1;
	struct ticker *t = aligned_alloc(64, sizeof *t * (size_t)n);
	struct cb_hist *all = malloc(sizeof *all * (size_t)(n + 1));
	struct cb_gate gate;
	uint64_t wakeups = 0;

	if (!t || !all) {
		cb_warn("malloc: %s", strerror(errno));
		goto out;
	}
	cb_hist_init(&all[n]);
	for (i = 0; i < n; i++) {
		memset(&t[i], 0, sizeof t[i]);
		t[i].cpu = o->cpus[i];
		t[i].duration_ns = (int64_t)(o->duration * 1e9);
		t[i].gate = &gate;
		t[i].lat = &all[i];
		cb_hist_init(&all[i]);
	}
	if (CB_RUN_THREADS(&gate, ticker_main, t, n) < 0)
		goto out;
	for (i = 0; i < n; i++) {
		if (t[i].err)
			goto out;
		cb_hist_merge(&all[n], &all[i]);
		wakeups += t[i].wakeups;
		r->overruns += t[i].overruns;
		r->cpus[i] = t[i].cpu;
		if (t[i].seconds > r->seconds)
			r->seconds = t[i].seconds;
	}
	r->workload = CB_WL_TIMER;
	r->threads = n;
	r->wakeups = wakeups;
	r->rate = cb_workload_rate(CB_WL_TIMER, wakeups, r->seconds, &r->rate_unit);
	fill_latency(r, &all[n]);
	rc = 0;
out:
	free(t);
	free(all);
	return rc;
}

int cb_run_workload(const struct cb_opts *o, enum cb_workload w, double tsc_per_ns,
		    struct cb_workload_result *out)
{
	memset(out, 0, sizeof *out);
	return w == CB_WL_TIMER ? run_timer(o, out) : run_pair(o, w, tsc_per_ns, out);
}
