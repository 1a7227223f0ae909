/* checks.c: clock warps across CPUs, and per-CPU TSC offsets from the first.
 * Models: the kernel's timers/inconsistency-check, kvm-unit-tests'
 * kvmclock_test (one shared last value), and the blog's tsccheck. */
#include "clockbench.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- warps: a read lower than one another thread already published ---- */

struct warp_shared {
	_Alignas(64) _Atomic uint64_t last;
};

struct warper {
	pthread_t tid;
	int cpu, err;
	clockid_t clk;
	uint64_t duration_ticks;
	struct cb_gate *gate;
	struct warp_shared *sh;
	uint64_t reads, warps, max_warp;
} __attribute__((aligned(64)));

static void *warper_main(void *arg)
{
	struct warper *w = arg;
	uint64_t deadline, n = 0;
	struct timespec ts;

	w->err = cb_pin(w->cpu);
	if (!cb_gate_wait(w->gate) || w->err)
		return NULL;
	deadline = cb_rdtsc() + w->duration_ticks;
	do {
		/* Load the shared value first: anything published before our
		 * read must not be later than what we read. */
		uint64_t prev = atomic_load(&w->sh->last), now;
		clock_gettime(w->clk, &ts);
		now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		if (now < prev) {
			w->warps++;
			if (prev - now > w->max_warp)
				w->max_warp = prev - now;
		} else {
			while (now > prev && !atomic_compare_exchange_weak(&w->sh->last, &prev, now))
				;
		}
		n++;
	} while ((n & 255) || cb_rdtsc() < deadline);
	w->reads = n;
	return NULL;
}

int cb_check_warps(const struct cb_opts *o, int clock, double tpn, struct cb_warp_result *r)
{
	struct warper *w = aligned_alloc(64, sizeof *w * (size_t)o->ncpus);
	struct warp_shared *sh = aligned_alloc(64, sizeof *sh);
	struct cb_gate gate;
	int i, rc = -1;

	if (!w || !sh) {
		cb_warn("malloc: %s", strerror(errno));
		goto out;
	}
	atomic_store(&sh->last, 0);
	memset(r, 0, sizeof *r);
	for (i = 0; i < o->ncpus; i++) {
		memset(&w[i], 0, sizeof w[i]);
		w[i].cpu = o->cpus[i];
		w[i].clk = cb_clocks[clock].id;
		w[i].duration_ticks = (uint64_t)(o->duration * 1e9 * tpn);
		w[i].gate = &gate;
		w[i].sh = sh;
	}
	if (CB_RUN_THREADS(&gate, warper_main, w, o->ncpus) < 0)
		goto out;
	r->clock = clock;
	r->threads = o->ncpus;
	r->seconds = o->duration;
	for (i = 0; i < o->ncpus; i++) {
		if (w[i].err)
			goto out;
		r->reads += w[i].reads;
		r->warps += w[i].warps;
		if (w[i].max_warp > r->max_warp_ns)
			r->max_warp_ns = w[i].max_warp;
	}
	rc = 0;
out:
	free(w);
	free(sh);
	return rc;
}

/* ---- TSC: round trips between the reference CPU and each other CPU ---- */

struct pingpong {
	_Alignas(64) _Atomic uint64_t seq;
	uint64_t t1;
	_Alignas(64) int cpu, err;
	uint64_t rounds, timeout_ticks;
	struct cb_gate *gate;
};

static void *remote_main(void *arg)
{
	struct pingpong *pp = arg;
	uint64_t r, limit;

	pp->err = cb_pin(pp->cpu);
	if (!cb_gate_wait(pp->gate) || pp->err)
		return NULL;
	for (r = 0; r < pp->rounds; r++) {
		limit = cb_rdtsc() + pp->timeout_ticks;
		while (atomic_load_explicit(&pp->seq, memory_order_acquire) != 2 * r + 1)
			if (cb_rdtsc() > limit) {
				pp->err = ETIMEDOUT;
				return NULL;
			}
		pp->t1 = cb_rdtsc_start();
		atomic_store_explicit(&pp->seq, 2 * r + 2, memory_order_release);
	}
	return NULL;
}

/* Runs the reference side on the calling thread, already pinned. */
static int one_cpu(int cpu, const struct cb_opts *o, double tpn, struct cb_tsc_cpu *res)
{
	struct pingpong *pp = aligned_alloc(64, sizeof *pp);
	struct cb_gate gate;
	pthread_t tid;
	uint64_t r, t0, t1, t2, limit;
	int e, rc = -1;

	if (!pp)
		return -1;
	memset(pp, 0, sizeof *pp);
	memset(res, 0, sizeof *res);
	res->cpu = cpu;
	res->best_rtt_cycles = UINT64_MAX;
	pp->cpu = cpu;
	pp->rounds = o->tsc_rounds;
	pp->timeout_ticks = (uint64_t)(2e9 * tpn);    /* a remote silent for 2 s */
	pp->gate = &gate;
	atomic_store(&pp->seq, 0);
	cb_gate_init(&gate);
	if ((e = pthread_create(&tid, NULL, remote_main, pp))) {
		cb_warn("pthread_create: %s", strerror(e));
		free(pp);
		return -1;
	}
	cb_gate_open(&gate, 1, 1);
	for (r = 0; r < pp->rounds; r++) {
		t0 = cb_rdtsc_start();
		atomic_store_explicit(&pp->seq, 2 * r + 1, memory_order_release);
		limit = t0 + pp->timeout_ticks;
		while (atomic_load_explicit(&pp->seq, memory_order_acquire) != 2 * r + 2)
			if (cb_rdtsc() > limit || pp->err)
				goto join;
		t2 = cb_rdtsc_start();
		t1 = pp->t1;
		res->rounds++;
		if (t1 < t0 || t2 < t1)
			res->warps++;
		if (t2 - t0 < res->best_rtt_cycles) {
			res->best_rtt_cycles = t2 - t0;
			res->offset_cycles = (int64_t)(t1 - t0) - (int64_t)((t2 - t0) / 2);
		}
	}
	rc = 0;
join:
	if (rc < 0)
		pp->err = ETIMEDOUT;
	pthread_join(tid, NULL);
	if (rc < 0 || pp->err) {
		cb_warn("TSC check: CPU %d did not answer within 2 s", cpu);
		rc = -1;
	}
	free(pp);
	return rc;
}

void cb_tsc_verdict(struct cb_tsc_result *t, unsigned rounds, double tpn)
{
	int i, outside = 0;

	t->total_warps = 0;
	t->max_abs_offset_cycles = 0;
	for (i = 0; i < t->ncpus; i++) {
		struct cb_tsc_cpu *c = &t->cpu[i];
		t->total_warps += c->warps;
		if (llabs(c->offset_cycles) > t->max_abs_offset_cycles)
			t->max_abs_offset_cycles = llabs(c->offset_cycles);
		/* An offset within half the CPU's own best round trip cannot be
		 * told from 0; each CPU is judged by its own resolution. */
		c->within = (uint64_t)llabs(c->offset_cycles) * 2 <= c->best_rtt_cycles;
		outside += !c->within;
	}
	t->verdict = t->total_warps == 0 && outside == 0 ? "consistent" : "inconsistent";
	t->working[0] = '\0';
	cb_append(t->working, sizeof t->working,
	       "%d other CPU(s) against CPU %d, %u round trips each: %llu warps (a remote read "
	       "outside its round trip); %d CPU(s) with |offset| above half their own best round trip:",
	       t->ncpus, t->ref_cpu, rounds, (unsigned long long)t->total_warps, outside);
	for (i = 0; i < t->ncpus; i++) {
		const struct cb_tsc_cpu *c = &t->cpu[i];
		cb_append(t->working, sizeof t->working, "%s CPU %d |%lld| %s %llu cycles (%.1f %s %.1f ns)",
		       i ? ";" : "", c->cpu, (long long)llabs(c->offset_cycles), c->within ? "<=" : ">",
		       (unsigned long long)(c->best_rtt_cycles / 2), (double)llabs(c->offset_cycles) / tpn,
		       c->within ? "<=" : ">", (double)c->best_rtt_cycles / 2 / tpn);
	}
	cb_append(t->working, sizeof t->working, "; kernel clocksource '%s'%s", t->kernel_clocksource,
	       strcmp(t->kernel_verdict, "tsc-trusted") ? ": the kernel does not use the TSC, "
	       "and its verdict has the last word" : ": the kernel trusts the TSC");
	if (strlen(t->working) + 1 >= sizeof t->working)
		memcpy(t->working + sizeof t->working - 4, "...", 4);
}

int cb_check_tsc(const struct cb_opts *o, double tpn, struct cb_tsc_result *t)
{
	cpu_set_t saved;
	int i, rc = 0;

	memset(t, 0, sizeof *t);
	t->ref_cpu = o->cpus[0];
	if (cb_current_clocksource(t->kernel_clocksource, sizeof t->kernel_clocksource) < 0)
		snprintf(t->kernel_clocksource, sizeof t->kernel_clocksource, "unknown");
	t->kernel_verdict = !strcmp(t->kernel_clocksource, "tsc") ? "tsc-trusted" : "tsc-not-used";
	if (o->ncpus < 2) {
		t->verdict = "single-cpu";
		snprintf(t->working, sizeof t->working, "one CPU allowed: nothing to compare");
		return 0;
	}
	if (sched_getaffinity(0, sizeof saved, &saved) < 0 || cb_pin(t->ref_cpu) < 0)
		return -1;
	for (i = 1; i < o->ncpus; i++) {
		if (one_cpu(o->cpus[i], o, tpn, &t->cpu[t->ncpus]) < 0) {
			rc = -1;
			break;
		}
		t->ncpus++;
	}
	sched_setaffinity(0, sizeof saved, &saved);
	cb_tsc_verdict(t, o->tsc_rounds, tpn);
	return rc;
}
