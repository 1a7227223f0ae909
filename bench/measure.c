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

/* Never inlined, and (GCC) never cloned or analysed across the call: the
 * call and ret around the syscall are what a fallback really pays. */
#if defined(__GNUC__) && !defined(__clang__)
#define CB_NOINLINE __attribute__((noinline, noipa))
#else
#define CB_NOINLINE __attribute__((noinline))
#endif

const char *const cb_quantile_names[CB_NQ] = { "min", "median", "mean", "p99", "p999", "max" };

CB_NOINLINE long cb_syscall_clock_gettime(clockid_t clk, struct timespec *ts)
{
	long r = cb_raw_clock_gettime(clk, ts);

	__asm__ __volatile__("" : "+r"(r) :: "memory");
	return r;
}

/* The syscall method's function with getppid for clock_gettime: the same
 * call, the same registers loaded, the same syscall instruction and ret;
 * the kernel's work is entry, getppid and exit, no clock. */
CB_NOINLINE long cb_syscall_null(clockid_t clk, struct timespec *ts)
{
	long r;

	__asm__ __volatile__("syscall"
			     : "=a"(r)
			     : "0"((long)SYS_getppid), "D"((long)clk), "S"(ts)
			     : "rcx", "r11", "memory");
	__asm__ __volatile__("" : "+r"(r) :: "memory");
	return r;
}

/* The calls of the methods without a clock, shaped as clock_gettime's so
 * that CB_BATCH makes their loops too (clk and ts unused). */
static inline void rdtsc_only(clockid_t clk, struct timespec *ts)
{
	(void)cb_rdtsc();
}

static inline void rdtscp_only(clockid_t clk, struct timespec *ts)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
}

/* Nothing: the loop alone, for the overhead. */
static inline void empty_call(clockid_t clk, struct timespec *ts)
{
	__asm__ __volatile__("" ::: "memory");
}

/* One function per method, each timing a batch of n calls and returning the
 * TSC ticks it took (*end: the TSC at its end).  Kept apart and out of line
 * so that tests/bench/bench-symbols.t can read each loop in the binary.
 * CB_BATCH(method, call): cb_batch_<method>, the loop of n calls of call
 * (reading the clock clk into ts, where it reads a clock). */
#define CB_BATCH(method, call)                                                    \
	CB_NOINLINE uint64_t cb_batch_##method(clockid_t clk, unsigned n, uint64_t *end) \
	{                                                                         \
		struct timespec ts;                                               \
		uint64_t t0 = cb_rdtsc_start();                                   \
		unsigned i;                                                       \
                                                                                  \
		for (i = 0; i < n; i++)                                           \
			call(clk, &ts);                                           \
		*end = cb_rdtsc_end();                                            \
		return *end - t0;                                                 \
	}

CB_BATCH(vdso, clock_gettime)
CB_BATCH(syscall, cb_syscall_clock_gettime)
CB_BATCH(null, cb_syscall_null)
CB_BATCH(syscall_inline, cb_raw_clock_gettime)
CB_BATCH(rdtsc, rdtsc_only)
CB_BATCH(rdtscp, rdtscp_only)
CB_BATCH(empty, empty_call)

typedef uint64_t (*batch_fn)(clockid_t, unsigned, uint64_t *);

/* The batch function of each method. */
static const batch_fn batch_fns[CB_NMETHODS] = {
	[CB_VDSO] = cb_batch_vdso,
	[CB_SYSCALL] = cb_batch_syscall,
	[CB_SYSCALL_INLINE] = cb_batch_syscall_inline,
	[CB_RDTSC] = cb_batch_rdtsc,
	[CB_RDTSCP] = cb_batch_rdtscp,
	[CB_NULL] = cb_batch_null,
};

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

int cb_run_threads(struct cb_gate *g, void *(*fn)(void *), void *arg, pthread_t *tid, size_t size, int n)
{
	int i, e, started;

	cb_gate_init(g);
	for (started = 0; started < n; started++) {
		e = pthread_create((pthread_t *)((char *)tid + started * size), NULL, fn, (char *)arg + started * size);
		if (e) {
			cb_warn("pthread_create: %s", strerror(e));
			break;
		}
	}
	cb_gate_open(g, started, started == n);
	for (i = 0; i < started; i++)
		pthread_join(*(pthread_t *)((char *)tid + i * size), NULL);
	return started == n ? 0 : -1;
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
	batch_fn fn = batch_fns[m];
	uint64_t end, best = UINT64_MAX;
	double ns;
	int i;

	for (i = 0; i < 20; i++) {
		uint64_t t = fn(clock_of(clock), 16, &end);
		if (t < best)
			best = t;
	}
	ns = (double)best / 16 / tsc_per_ns;
	if (ns < 1)
		ns = 1;
	ns = 2500 / ns;  /* ~2.5 us a batch: the fences' cost shrinks below 1 ns a call */
	return ns < 16 ? 16 : ns > 4096 ? 4096 : (unsigned)ns;
}

void cb_tally_init(struct cb_tally *t)
{
	cb_hist_init(&t->raw);
	cb_hist_init(&t->net);
	t->below = 0;
	t->net_sum = 0;
}

void cb_tally_add(struct cb_tally *t, uint64_t ticks, uint64_t overhead_ticks)
{
	cb_hist_add(&t->raw, ticks);
	if (ticks < overhead_ticks) {
		t->below++;
		cb_hist_add(&t->net, 0);
	} else {
		cb_hist_add(&t->net, ticks - overhead_ticks);
	}
	t->net_sum += (long double)ticks - (long double)overhead_ticks;
}

void cb_tally_merge(struct cb_tally *dst, const struct cb_tally *src)
{
	cb_hist_merge(&dst->raw, &src->raw);
	cb_hist_merge(&dst->net, &src->net);
	dst->below += src->below;
	dst->net_sum += src->net_sum;
}

void cb_stats_fill(struct cb_stats *s, const struct cb_tally *t, unsigned batch, double tpn)
{
	static const double qs[CB_NQ] = { 0, 0.5, -1, 0.99, 0.999, 1 };
	uint64_t n = t->raw.count;
	int i;

	s->below_overhead = 0;
	for (i = 0; i < CB_NQ; i++) {
		double raw, net;
		int below;
		if (i == CB_Q_MEAN) {
			raw = cb_hist_mean(&t->raw);
			net = n ? (double)(t->net_sum / n) : NAN;
			below = n && net < 0;
		} else {
			/* the rank cb_hist_quantile() reads: negative if among the below */
			uint64_t rank = qs[i] <= 0 ? 1 : (uint64_t)ceil(qs[i] * (double)n);
			raw = cb_hist_quantile(&t->raw, qs[i]);
			net = cb_hist_quantile(&t->net, qs[i]);
			below = n && rank <= t->below;
		}
		if (below) {
			net = NAN;
			s->below_overhead |= 1u << i;
		}
		s->cyc_raw[i] = raw / batch;
		s->ns_raw[i] = s->cyc_raw[i] / tpn;
		s->cyc[i] = net / batch;
		s->ns[i] = s->cyc[i] / tpn;
	}
}

double cb_kernel_read(double syscall_ns, double null_ns, int *negative)
{
	double d = syscall_ns - null_ns;

	*negative = d < 0;  /* false for NaN */
	return d < 0 ? NAN : d;
}

struct worker {
	pthread_t tid;
	int cpu;
	batch_fn fn;
	batch_fn pair;                  /* batches interleaved with fn's (null beside syscall), or NULL */
	clockid_t clk;
	unsigned batch;
	uint64_t duration_ticks;
	struct cb_gate *gate;
	int err;
	double overhead;                /* cycles per empty batch on this CPU */
	uint64_t first, last;           /* TSC at start and end of its batches */
	struct cb_tally tally;          /* this thread only */
	struct cb_tally pair_tally;     /* the pair's batches */
} __attribute__((aligned(64)));

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t end, deadline, ovt;
	int i, first = 0;

	w->err = cb_pin(w->cpu);
	for (i = 0; i < 64 && !w->err; i++) {        /* warm caches and the vDSO page */
		w->fn(w->clk, w->batch, &end);
		if (w->pair)
			w->pair(w->clk, w->batch, &end);
	}
	/* This CPU's loop overhead, with the net histogram as scratch. */
	for (i = 0; i < 5000 && !w->err; i++)
		cb_hist_add(&w->tally.net, cb_batch_empty(w->clk, w->batch, &end));
	w->overhead = cb_hist_quantile(&w->tally.net, 0.5);
	cb_tally_init(&w->tally);
	ovt = (uint64_t)llround(w->overhead);
	if (!cb_gate_wait(w->gate) || w->err)
		return NULL;
	w->first = cb_rdtsc();
	deadline = w->first + w->duration_ticks;
	do {
		/* With a pair, its batch goes before and after fn's in turn
		 * (pair fn, fn pair, pair fn...): both see the same moments of
		 * the machine, and neither always follows the other. */
		if (w->pair && (first ^= 1))
			cb_tally_add(&w->pair_tally, w->pair(w->clk, w->batch, &end), ovt);
		cb_tally_add(&w->tally, w->fn(w->clk, w->batch, &end), ovt);
		if (w->pair && !first)
			cb_tally_add(&w->pair_tally, w->pair(w->clk, w->batch, &end), ovt);
	} while (end < deadline);
	w->last = end;
	return NULL;
}

int cb_measure_cell(const struct cb_opts *o, int clock, enum cb_method m, int threads,
		    unsigned batch, double tsc_per_ns, struct cb_stats *s)
{
	struct worker *w;
	struct cb_tally *all, *pall;
	struct cb_gate gate;
	double cps = 0, ovsum = 0;
	int i, rc = -1;
	/* A syscall row's kernel read needs a null call measured beside it:
	 * timed in the same threads, batch for batch, so that a machine whose
	 * kernel entry costs one thing now and another a second later (seen
	 * here: 190 or 255 ns) gives both medians the same mix. */
	int paired = m == CB_SYSCALL && (o->methods & (1u << CB_NULL));

	w = aligned_alloc(64, sizeof *w * (size_t)threads);
	all = malloc(sizeof *all);
	pall = malloc(sizeof *pall);
	memset(s, 0, sizeof *s);
	s->ovh = calloc((size_t)threads, sizeof *s->ovh);
	if (!w || !all || !pall || !s->ovh) {
		cb_warn("malloc: %s", strerror(errno));
		goto fail;
	}
	for (i = 0; i < threads; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].cpu = o->cpus[i];
		w[i].fn = batch_fns[m];
		w[i].pair = paired ? cb_batch_null : NULL;
		w[i].clk = clock_of(clock);
		w[i].batch = batch;
		w[i].duration_ticks = (uint64_t)(o->duration * 1e9 * tsc_per_ns);
		w[i].gate = &gate;
		cb_tally_init(&w[i].tally);
		cb_tally_init(&w[i].pair_tally);
	}
	if (CB_RUN_THREADS(&gate, worker_main, w, threads) < 0)
		goto fail;

	cb_tally_init(all);
	cb_tally_init(pall);
	for (i = 0; i < threads; i++) {
		uint64_t calls = w[i].tally.raw.count * batch;
		double secs = (double)(w[i].last - w[i].first) / tsc_per_ns / 1e9;
		/* the rate over this method's own batches, the pair's left out */
		double busy = paired ? (double)w[i].tally.raw.sum / tsc_per_ns / 1e9 : secs;
		if (w[i].err)
			goto fail;
		cb_tally_merge(all, &w[i].tally);
		cb_tally_merge(pall, &w[i].pair_tally);
		cps += (double)calls / busy;
		if (secs > s->seconds)
			s->seconds = secs;
		s->ovh[i].cpu = w[i].cpu;
		s->ovh[i].cycles_per_batch = w[i].overhead;
		s->ovh[i].ns_per_call = w[i].overhead / batch / tsc_per_ns;
		ovsum += s->ovh[i].ns_per_call;
	}
	s->clock = clock;
	s->method = m;
	s->threads = threads;
	s->batch = batch;
	s->batches = all->raw.count;
	s->calls = all->raw.count * batch;
	cb_stats_fill(s, all, batch, tsc_per_ns);
	s->overhead_ns = ovsum / threads;
	s->calls_per_sec_total = cps;
	s->calls_per_sec_thread = cps / threads;
	s->null_ns = NAN;
	if (paired) {
		struct cb_stats ns;
		memset(&ns, 0, sizeof ns);
		cb_stats_fill(&ns, pall, batch, tsc_per_ns);
		s->null_ns = ns.ns[CB_Q_MEDIAN];
	}
	s->kernel_read_ns = cb_kernel_read(s->ns[CB_Q_MEDIAN], s->null_ns, &s->kernel_read_negative);
	rc = 0;
	goto out;
fail:
	free(s->ovh);
	s->ovh = NULL;
out:
	free(w);
	free(all);
	free(pall);
	return rc;
}
