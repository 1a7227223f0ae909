/* measure.c: the cost cells: pinned threads, timed batches, merged stats. */
#include "clockbench.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline void rdtscp_only(void)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
}

/* Times one batch of n calls; returns the TSC ticks it took.  The empty
 * method (CB_NMETHODS) times the loop alone, for the overhead. */
static uint64_t timed_batch(enum cb_method m, clockid_t clk, unsigned n, uint64_t *end)
{
	struct timespec ts;
	uint64_t t0, t1;
	unsigned i;

	switch (m) {
	case CB_VDSO:
		t0 = cb_rdtsc_start();
		for (i = 0; i < n; i++)
			clock_gettime(clk, &ts);
		t1 = cb_rdtsc_end();
		break;
	case CB_SYSCALL:
		t0 = cb_rdtsc_start();
		for (i = 0; i < n; i++)
			cb_raw_clock_gettime(clk, &ts);
		t1 = cb_rdtsc_end();
		break;
	case CB_RDTSC:
		t0 = cb_rdtsc_start();
		for (i = 0; i < n; i++)
			(void)cb_rdtsc();
		t1 = cb_rdtsc_end();
		break;
	case CB_RDTSCP:
		t0 = cb_rdtsc_start();
		for (i = 0; i < n; i++)
			rdtscp_only();
		t1 = cb_rdtsc_end();
		break;
	default:
		t0 = cb_rdtsc_start();
		for (i = 0; i < n; i++)
			__asm__ __volatile__("" ::: "memory");
		t1 = cb_rdtsc_end();
		break;
	}
	*end = t1;
	return t1 - t0;
}

void cb_gate_init(struct cb_gate *g)
{
	atomic_store(&g->ready, 0);
	atomic_store(&g->state, 0);
}

int cb_gate_wait(struct cb_gate *g)
{
	int st;

	atomic_fetch_add(&g->ready, 1);
	while ((st = atomic_load(&g->state)) == 0)
		sched_yield();
	return st > 0;
}

void cb_gate_open(struct cb_gate *g, int n, int go)
{
	if (go)
		while (atomic_load(&g->ready) < n)
			sched_yield();
	atomic_store(&g->state, go ? 1 : -1);
}

int cb_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof set, &set) < 0) {
		cb_warn("sched_setaffinity(CPU %d): %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

static clockid_t clock_of(int clock)
{
	return clock >= 0 ? cb_clocks[clock].id : CLOCK_MONOTONIC;
}

unsigned cb_auto_batch(int clock, enum cb_method m, double tsc_per_ns)
{
	uint64_t end, best = UINT64_MAX;
	double ns;
	int i;

	for (i = 0; i < 20; i++) {
		uint64_t t = timed_batch(m, clock_of(clock), 16, &end);
		if (t < best)
			best = t;
	}
	ns = (double)best / 16 / tsc_per_ns;
	if (ns < 1)
		ns = 1;
	ns = 2500 / ns;  /* ~2.5 us a batch: the fences' cost shrinks below 1 ns a call */
	return ns < 16 ? 16 : ns > 4096 ? 4096 : (unsigned)ns;
}

int cb_measure_overhead(const struct cb_opts *o, unsigned batch, double tsc_per_ns,
			struct cb_overhead *ov)
{
	struct cb_hist *h = malloc(sizeof *h);
	uint64_t end;
	int i;

	if (!h) {
		cb_warn("malloc: %s", strerror(errno));
		return -1;
	}
	cb_hist_init(h);
	for (i = 0; i < 20000; i++)
		cb_hist_add(h, timed_batch(CB_NMETHODS, 0, batch, &end));
	ov->batch = batch;
	ov->cycles_per_batch = cb_hist_quantile(h, 0.5);
	ov->ns_per_call = ov->cycles_per_batch / batch / tsc_per_ns;
	free(h);
	return 0;
}

struct worker {
	pthread_t tid;
	int cpu;
	enum cb_method m;
	clockid_t clk;
	unsigned batch;
	uint64_t duration_ticks;
	struct cb_gate *gate;
	int err;
	uint64_t first, last;           /* TSC at start and end of its batches */
	struct cb_hist hist;            /* batch ticks, this thread only */
} __attribute__((aligned(64)));

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t end, deadline;
	int i;

	w->err = cb_pin(w->cpu);
	for (i = 0; i < 64 && !w->err; i++)          /* warm caches and the vDSO page */
		timed_batch(w->m, w->clk, w->batch, &end);
	if (!cb_gate_wait(w->gate) || w->err)
		return NULL;
	w->first = cb_rdtsc();
	deadline = w->first + w->duration_ticks;
	do {
		cb_hist_add(&w->hist, timed_batch(w->m, w->clk, w->batch, &end));
	} while (end < deadline);
	w->last = end;
	return NULL;
}

int cb_measure_cell(const struct cb_opts *o, int clock, enum cb_method m, int threads,
		    unsigned batch, double tsc_per_ns, const struct cb_overhead *ov,
		    struct cb_stats *s)
{
	struct worker *w;
	struct cb_hist *all;
	struct cb_gate gate;
	double cps = 0, ovc = ov ? ov->cycles_per_batch : 0, q[6];
	int i, started = 0, rc = -1;

	w = aligned_alloc(64, sizeof *w * (size_t)threads);
	all = malloc(sizeof *all);
	if (!w || !all) {
		cb_warn("malloc: %s", strerror(errno));
		free(w);
		free(all);
		return -1;
	}
	cb_gate_init(&gate);
	for (i = 0; i < threads; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].cpu = o->cpus[i];
		w[i].m = m;
		w[i].clk = clock_of(clock);
		w[i].batch = batch;
		w[i].duration_ticks = (uint64_t)(o->duration * 1e9 * tsc_per_ns);
		w[i].gate = &gate;
		cb_hist_init(&w[i].hist);
	}
	for (i = 0; i < threads; i++) {
		int e = pthread_create(&w[i].tid, NULL, worker_main, &w[i]);
		if (e) {
			cb_warn("pthread_create: %s", strerror(e));
			break;
		}
		started++;
	}
	cb_gate_open(&gate, started, started == threads);
	for (i = 0; i < started; i++)
		pthread_join(w[i].tid, NULL);
	if (started < threads)
		goto out;

	cb_hist_init(all);
	memset(s, 0, sizeof *s);
	for (i = 0; i < threads; i++) {
		uint64_t calls = w[i].hist.count * batch;
		if (w[i].err)
			goto out;
		cb_hist_merge(all, &w[i].hist);
		cps += (double)calls / ((double)(w[i].last - w[i].first) / tsc_per_ns / 1e9);
		if ((double)(w[i].last - w[i].first) / tsc_per_ns / 1e9 > s->seconds)
			s->seconds = (double)(w[i].last - w[i].first) / tsc_per_ns / 1e9;
	}
	s->clock = clock;
	s->method = m;
	s->threads = threads;
	s->batch = batch;
	s->batches = all->count;
	s->calls = all->count * batch;
	q[0] = (double)all->min;
	q[1] = cb_hist_quantile(all, 0.5);
	q[2] = cb_hist_mean(all);
	q[3] = cb_hist_quantile(all, 0.99);
	q[4] = cb_hist_quantile(all, 0.999);
	q[5] = (double)all->max;
	for (i = 0; i < 6; i++) {
		double c = (q[i] - ovc) / batch;
		if (c < 0)
			c = 0;
		q[i] = c;
	}
	s->cyc_min = q[0]; s->cyc_median = q[1]; s->cyc_mean = q[2];
	s->cyc_p99 = q[3]; s->cyc_p999 = q[4]; s->cyc_max = q[5];
	s->ns_min = q[0] / tsc_per_ns; s->ns_median = q[1] / tsc_per_ns;
	s->ns_mean = q[2] / tsc_per_ns; s->ns_p99 = q[3] / tsc_per_ns;
	s->ns_p999 = q[4] / tsc_per_ns; s->ns_max = q[5] / tsc_per_ns;
	s->calls_per_sec_total = cps;
	s->calls_per_sec_thread = cps / threads;
	rc = 0;
out:
	free(w);
	free(all);
	return rc;
}
