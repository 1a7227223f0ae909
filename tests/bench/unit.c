/* unit.c: TAP tests of the histogram, JSON writer, overhead subtraction,
 * path probe (positive controls), TSC verdict, change detection and the
 * watchdog readout's arithmetic (slow readouts, their runs, interrupted).
 * `unit json` prints a JSON document with hostile strings instead, for a
 * real parser to check (tests/bench/unit.t). */
#include "../../bench/clockbench.h"
#include "../../bench/duration.h"
#include "../lib/tap.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void hist_tests(void)
{
	static struct cb_hist h, a, b;
	static uint64_t vals[100000];
	uint64_t s = 88172645463325252ull, v;
	unsigned i, good;
	double worst = 0;

	for (good = 1, v = 0; v < 256; v++)
		good &= cb_hist_bucket(v) == v && cb_hist_bucket_low((unsigned)v) == v &&
			cb_hist_bucket_high((unsigned)v) == v;
	ok(good, "values below 256 have exact buckets");

	for (good = 1, i = 0; i < 1000000; i++) {
		unsigned bk;
		v = rnd(&s) >> (rnd(&s) % 64);
		bk = cb_hist_bucket(v);
		good &= bk < CB_HIST_BUCKETS && cb_hist_bucket_low(bk) <= v && v <= cb_hist_bucket_high(bk);
		good &= v < 256 || (cb_hist_bucket_high(bk) - cb_hist_bucket_low(bk)) <= v / 256;
	}
	ok(good, "every value falls inside its bucket, a bucket at most 1/256 of it wide");

	for (good = 1, i = 0; i + 1 < CB_HIST_BUCKETS - 1; i++)
		good &= cb_hist_bucket(cb_hist_bucket_high(i) + 1) == i + 1;
	ok(good, "buckets tile the integers without gaps");
	ok(cb_hist_bucket(UINT64_MAX) == CB_HIST_BUCKETS - 1, "the largest value has the last bucket");

	cb_hist_init(&h);
	ok(isnan(cb_hist_quantile(&h, 0.5)) && isnan(cb_hist_mean(&h)), "empty histogram: no quantile, no mean");
	for (v = 1; v <= 100; v++)
		cb_hist_add(&h, v);
	ok(cb_hist_quantile(&h, 0.5) == 50, "median of 1..100 is 50");
	ok(cb_hist_quantile(&h, 0.99) == 99, "p99 of 1..100 is 99");
	ok(cb_hist_quantile(&h, 0.999) == 100, "p99.9 of 1..100 is 100");
	ok(cb_hist_quantile(&h, 0) == 1 && cb_hist_quantile(&h, 1) == 100, "min 1 and max 100");
	ok(cb_hist_mean(&h) == 50.5, "mean of 1..100 is 50.5");

	cb_hist_init(&h);
	cb_hist_add(&h, 7);
	ok(cb_hist_quantile(&h, 0.5) == 7 && cb_hist_quantile(&h, 0.999) == 7, "one value is every quantile");

	/* Log-normal-ish data: quantiles within a bucket's width of the exact ones. */
	cb_hist_init(&h);
	cb_hist_init(&a);
	cb_hist_init(&b);
	for (i = 0; i < 100000; i++) {
		vals[i] = 1000 + rnd(&s) % 1000 + (rnd(&s) % 100 == 0 ? rnd(&s) % 1000000 : 0);
		cb_hist_add(&h, vals[i]);
		cb_hist_add(i % 2 ? &a : &b, vals[i]);
	}
	qsort(vals, 100000, sizeof vals[0], cmp_u64);
	{
		const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
		for (i = 0; i < 4; i++) {
			double exact = (double)vals[(size_t)ceil(qs[i] * 100000) - 1];
			double err = fabs(cb_hist_quantile(&h, qs[i]) - exact) / exact;
			if (err > worst)
				worst = err;
		}
	}
	ok(worst <= 1.0 / 512, "median, p90, p99, p99.9 within half a bucket (0.2 %) of the exact order statistics");
	cb_hist_merge(&a, &b);
	ok(a.count == h.count && a.min == h.min && a.max == h.max && !memcmp(a.b, h.b, sizeof a.b),
	   "merging two halves gives the histogram of the whole");

	/* Threads' merged batches can put 2^32 in one bucket (fuzz/regressions/hist). */
	cb_hist_init(&h);
	cb_hist_add(&h, 5);
	for (i = 0; i < 32; i++) {
		memcpy(&a, &h, sizeof a);
		cb_hist_merge(&h, &a);
	}
	ok(h.b[5] == 1ull << 32 && h.count == 1ull << 32 && cb_hist_quantile(&h, 0.5) == 5,
	   "a bucket counts past 2^32");
}

/* Option parsing twice in one process (fuzz/regressions/opts). */
static void opts_tests(void)
{
	static struct cb_opts o;
	char a0[] = "clockbench", a1[] = "-Zq";
	char *first[] = { a0, a1, NULL }, *second[] = { a0, NULL };
	char line[128] = "";
	FILE *err = tmpfile();
	int fd = dup(2), rc1, rc2;

	if (!err) {
		ok(0, "tmpfile for the usage error");
		return;
	}
	dup2(fileno(err), 2); /* the one line of the usage error */
	rc1 = cb_parse_opts(&o, 2, first);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	rewind(err);
	if (!fgets(line, sizeof line, err))
		line[0] = 0;
	fclose(err);
	ok(!strcmp(line, "clockbench: unknown option '-Z' (see --help)\n"), "-Zq: the unknown option named");
	rc2 = cb_parse_opts(&o, 1, second);
	ok(rc1 == CB_PARSED_USAGE && rc2 == CB_PARSED_RUN && !o.quiet,
	   "a usage error inside a cluster (-Zq) leaves nothing to the next parse");
}

/* ---- durations with units (bench/duration.c) ---- */

static void duration_tests(void)
{
	static const struct { const char *in; int good; double sec; } cases[] = {
		{ "1", 1, 1 }, { "0.5", 1, 0.5 }, { ".5", 1, 0.5 }, { "10s", 1, 10 }, { "500ms", 1, 0.5 },
		{ "250us", 1, 250e-6 }, { "2m", 1, 120 }, { "1.5s", 1, 1.5 }, { "1h", 1, 3600 }, { "0.001h", 1, 3.6 },
		{ "0", 1, 0 }, { "0ms", 1, 0 }, { "007s", 1, 7 },
		{ "", 0, 0 }, { "s", 0, 0 }, { "1x", 0, 0 }, { "1S", 0, 0 }, { "1 s", 0, 0 }, { " 1", 0, 0 },
		{ "1s ", 0, 0 }, { "+1", 0, 0 }, { "-1", 0, 0 }, { "1e3", 0, 0 }, { "0x10", 0, 0 }, { "inf", 0, 0 },
		{ "nan", 0, 0 }, { "1.", 0, 0 }, { ".", 0, 0 }, { "1..5", 0, 0 }, { "1m30s", 0, 0 }, { "5min", 0, 0 },
		{ "1ms2", 0, 0 }, { "1\xc2\xb5s", 0, 0 },
		{ "0000000000000000000000000000000000000001", 0, 0 }, /* 40 characters of number: too long */
	};
	size_t i, bad = 0;
	double v;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		v = -1;
		int rc = cb_parse_duration(cases[i].in, &v);
		if (cases[i].good ? rc != 0 || v != cases[i].sec : rc != -1 || v != -1) {
			printf("# '%s': rc %d, %.17g s (want %s %.17g)\n", cases[i].in, rc, v,
			       cases[i].good ? "0," : "-1, untouched", cases[i].good ? cases[i].sec : -1.0);
			bad++;
		}
	}
	ok(!bad, "durations: bare seconds, us ms s m h, exact (500ms is 0.5); signs, exponents, spaces, two units refused");
	ok(cb_parse_duration("000000000000000000000000000000000000001", &v) == 0 && v == 1,
	   "a 39-character number is read");
}

/* --workloads and --msg-size, and the rate arithmetic of a workload row. */
static void workload_tests(void)
{
	static struct cb_opts o;
	static struct cb_report r;
	static struct cb_stats cell;
	char a0[] = "clockbench", w[] = "--workloads", m[] = "--msg-size", all[] = "all", two[] = "timer,tcp-rr",
	     none[] = "none", k[] = "1K";
	char *argv_all[] = { a0, w, all, NULL }, *argv_two[] = { a0, w, two, m, k, NULL }, *argv_none[] = { a0, w, none, NULL },
	     *argv_dflt[] = { a0, NULL };
	const char *unit = NULL;

	ok(cb_parse_bytes("65536", 1, CB_MSG_SIZE_MAX) == 65536 && cb_parse_bytes("64K", 1, CB_MSG_SIZE_MAX) == 65536 &&
	   cb_parse_bytes("16M", 1, CB_MSG_SIZE_MAX) == 16777216 && cb_parse_bytes("1", 1, CB_MSG_SIZE_MAX) == 1,
	   "byte counts: 65536, 64K, 16M (KiB, MiB), 1");
	ok(cb_parse_bytes("0", 1, CB_MSG_SIZE_MAX) < 0 && cb_parse_bytes("16777217", 1, CB_MSG_SIZE_MAX) < 0 &&
	   cb_parse_bytes("17M", 1, CB_MSG_SIZE_MAX) < 0 && cb_parse_bytes("0K", 1, CB_MSG_SIZE_MAX) < 0,
	   "byte counts: 0, 16M+1, 17M, 0K refused");
	ok(cb_parse_bytes("", 1, 9) < 0 && cb_parse_bytes("K", 1, 9) < 0 && cb_parse_bytes("1KK", 1, 9999) < 0 &&
	   cb_parse_bytes("-1", 1, 9) < 0 && cb_parse_bytes("1k", 1, 9999) < 0 && cb_parse_bytes("1G", 1, 9999) < 0 &&
	   cb_parse_bytes(" 1", 1, 9) < 0 && cb_parse_bytes("99999999999999999999K", 1, 9) < 0,
	   "byte counts: empty, a bare suffix, two suffixes, signs, other suffixes, spaces, overflow refused");

	ok(cb_parse_opts(&o, 1, argv_dflt) == CB_PARSED_RUN && o.workloads == 0 && o.msg_size == 65536,
	   "no workload and 64 KiB writes by default");
	ok(cb_parse_opts(&o, 3, argv_all) == CB_PARSED_RUN && o.workloads == 7, "--workloads all is the three");
	ok(cb_parse_opts(&o, 5, argv_two) == CB_PARSED_RUN && o.workloads == (1u << CB_WL_TIMER | 1u << CB_WL_TCP_RR) &&
	   o.msg_size == 1024, "--workloads timer,tcp-rr --msg-size 1K");
	ok(cb_parse_opts(&o, 3, argv_none) == CB_PARSED_RUN && o.workloads == 0, "--workloads none is none");

	ok(fabs(cb_workload_rate(CB_WL_TCP_STREAM, 1250000000, 2.0, &unit) - 5.0) < 1e-12 && !strcmp(unit, "Gbit/s"),
	   "tcp-stream: 1.25 GB in 2 s is 5 Gbit/s (10^9 bits)");
	ok(cb_workload_rate(CB_WL_TCP_RR, 30000, 1.5, &unit) == 20000 && !strcmp(unit, "transactions/s"),
	   "tcp-rr: 30000 transactions in 1.5 s is 20000/s");
	ok(cb_workload_rate(CB_WL_TIMER, 40000, 2.0, &unit) == 20000 && !strcmp(unit, "wakeups/s") &&
	   isnan(cb_workload_rate(CB_WL_TIMER, 5, 0, &unit)), "timer: wakeups/s; no time gives no rate");

	/* A clocksource change during a workload marks it, as it marks cost rows. */
	memset(&r, 0, sizeof r);
	memset(&cell, 0, sizeof cell);
	cell.clock = 1;
	cell.threads = 1;
	strcpy(cell.clocksource, "tsc");
	r.cells = &cell;
	r.ncells = 1;
	r.nworkloads = 2;
	r.workloads[0].workload = CB_WL_TCP_STREAM;
	r.workloads[1].workload = CB_WL_TIMER;
	strcpy(r.workloads[0].clocksource, "tsc");
	strcpy(r.workloads[1].clocksource, "hpet");
	strcpy(r.ctx.clocksource, "tsc");
	strcpy(r.ctx.clocksource_end, "hpet");
	cb_report_changes(&r);
	ok(r.changed.clocksource && !cell.after_change && !r.workloads[0].after_change && r.workloads[1].after_change &&
	   strstr(r.changed.detail, "'tsc' at start, 'hpet' after workload timer") != NULL,
	   "a clocksource change during a workload marks that workload and names it");
}

static void json_tests(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct cb_json j;

	cb_json_begin(&j, m);
	cb_json_obj(&j, NULL);
	cb_json_num(&j, "nan", NAN, 2);
	cb_json_num(&j, "inf", INFINITY, 2);
	cb_json_num(&j, "x", 1.5, 2);
	cb_json_arr(&j, "a");
	cb_json_int(&j, NULL, -1);
	cb_json_str(&j, NULL, NULL);
	cb_json_end_arr(&j);
	cb_json_end_obj(&j);
	fclose(m);
	ok(!strcmp(buf, "{\"nan\":null,\"inf\":null,\"x\":1.50,\"a\":[-1,null]}\n"),
	   "NaN and infinity become null; commas only between members");
	free(buf);
}

/* Batches of 10..100 ticks: what survives subtracting an overhead of 50,
 * then of 60 (more than half the batches), per call of a 1-call batch. */
static void overhead_tests(void)
{
	static struct cb_tally t, a, b;
	struct cb_stats s;
	uint64_t v;

	cb_tally_init(&t);
	for (v = 10; v <= 100; v++)
		cb_tally_add(&t, v, 50);
	memset(&s, 0, sizeof s);
	cb_stats_fill(&s, &t, 1, 1.0);
	ok(isnan(s.ns[CB_Q_MIN]) && s.below_overhead == 1u << CB_Q_MIN,
	   "overhead above the fastest batch: min is null and named, nothing else");
	ok(s.ns[CB_Q_MEDIAN] == 5 && s.ns[CB_Q_MEAN] == 5 && s.ns[CB_Q_MAX] == 50,
	   "the other quantiles are the batch less the overhead (median 5, mean 5, max 50)");
	ok(s.ns_raw[CB_Q_MIN] == 10 && s.ns_raw[CB_Q_MEDIAN] == 55 && s.ns_raw[CB_Q_MAX] == 100,
	   "raw figures are the batches as timed");

	cb_tally_init(&t);
	for (v = 10; v <= 100; v++)
		cb_tally_add(&t, v, 60);
	cb_stats_fill(&s, &t, 1, 1.0);
	ok(isnan(s.ns[CB_Q_MEDIAN]) && isnan(s.ns[CB_Q_MEAN]) && !isnan(s.ns[CB_Q_P99]) &&
	   s.below_overhead == (1u << CB_Q_MIN | 1u << CB_Q_MEDIAN | 1u << CB_Q_MEAN),
	   "a median and mean below the overhead are null and named, never clamped to 0");
	ok(s.ns_raw[CB_Q_MEDIAN] == 55, "the raw median stays beside them");

	/* Two threads, each with its own overhead: 100 less 20, 200 less 120. */
	cb_tally_init(&a);
	cb_tally_init(&b);
	for (v = 0; v < 1000; v++) {
		cb_tally_add(&a, 100, 20);
		cb_tally_add(&b, 200, 120);
	}
	cb_tally_merge(&a, &b);
	cb_stats_fill(&s, &a, 2, 1.0);
	ok(s.ns[CB_Q_MIN] == 40 && s.ns[CB_Q_MAX] == 40 && s.below_overhead == 0,
	   "each thread's batches less its own overhead: 40 per call on both");
}

/* kernel_read_ns: a syscall median less the median of null batches timed
 * beside it; never clamped, null (NaN) where unknown or negative. */
static void kernel_read_tests(void)
{
	static struct cb_opts o;
	struct cb_stats s;
	int neg = -1, rc;
	double tpn;

	ok(cb_kernel_read(100, 60, &neg) == 40 && !neg, "kernel read: 100 less 60 is 40");
	ok(cb_kernel_read(60, 60, &neg) == 0 && !neg, "kernel read: equal medians give 0, not negative");
	ok(isnan(cb_kernel_read(50, 60, &neg)) && neg, "kernel read: negative is null and named, never clamped");
	ok(isnan(cb_kernel_read(100, NAN, &neg)) && !neg && isnan(cb_kernel_read(NAN, 60, &neg)) && !neg,
	   "kernel read: an unknown median gives null, not named negative");

	/* Measured: the null batches are timed in the syscall row's own
	 * threads, between its batches, only where null is asked for. */
	memset(&o, 0, sizeof o);
	o.cpus[0] = sched_getcpu() < 0 ? 0 : sched_getcpu();
	o.ncpus = 1;
	o.duration = 0.05;
	o.methods = 1u << CB_SYSCALL | 1u << CB_NULL;
	tpn = cb_tsc_calibrate(50);
	rc = cb_measure_cell(&o, 1, CB_SYSCALL, 1, 64, tpn, &s);
	ok(rc == 0 && s.null_ns > 0 && s.null_ns == s.null_ns && s.calls == s.batches * 64 &&
	   (s.kernel_read_negative ? isnan(s.kernel_read_ns) && s.ns[CB_Q_MEDIAN] < s.null_ns
				   : s.kernel_read_ns == s.ns[CB_Q_MEDIAN] - s.null_ns),
	   "a syscall cell with null asked for times null batches beside its own: its median less theirs");
	free(s.ovh);
	o.methods = 1u << CB_SYSCALL;
	rc = cb_measure_cell(&o, 1, CB_SYSCALL, 1, 64, tpn, &s);
	ok(rc == 0 && isnan(s.null_ns) && isnan(s.kernel_read_ns) && !s.kernel_read_negative,
	   "without null: no null median and no kernel read, not named negative");
	free(s.ovh);
	o.methods = 1u << CB_VDSO | 1u << CB_NULL;
	rc = cb_measure_cell(&o, 1, CB_VDSO, 1, 64, tpn, &s);
	ok(rc == 0 && isnan(s.null_ns) && isnan(s.kernel_read_ns), "only syscall rows carry it");
	free(s.ovh);
}

/* Readers for the probe's positive controls. */
static long no_kernel(clockid_t clk, struct timespec *ts)
{
	ts->tv_sec = 1;
	ts->tv_nsec = 0;
	return 0;
}

static long fails_in_user_space(clockid_t clk, struct timespec *ts)
{
	return -EINVAL;
}

static void probe_tests(void)
{
	struct cb_probe_case c[] = {
		{ cb_syscall_clock_gettime, CLOCK_MONOTONIC, -1 },
		{ no_kernel, CLOCK_MONOTONIC, -1 },
		{ fails_in_user_space, CLOCK_MONOTONIC, -1 },
	};
	char why[160];

	if (cb_probe_cases(c, 3, why, sizeof why) < 0) {
		char msg[200];
		snprintf(msg, sizeof msg, "probe unavailable: %s", why);
		skip(msg);
		skip(msg);
		return;
	}
	ok(c[0].path == CB_PATH_SYSCALL, "probe control: the syscall method's function is seen as a syscall");
	ok(c[1].path == CB_PATH_USER && c[2].path == CB_PATH_ERROR,
	   "probe control: a read that never enters the kernel is user; one failing otherwise is error");
}

/* Two CPUs: CPU 1 (offset 30, round trip 100) is within its resolution;
 * CPU 2 (offset -45, round trip 60) is not, although it is within half of
 * the slowest round trip (50). */
static void tsc_tests(void)
{
	static struct cb_tsc_result t;

	memset(&t, 0, sizeof t);
	t.ref_cpu = 0;
	t.ncpus = 2;
	t.cpu[0] = (struct cb_tsc_cpu){ .cpu = 1, .rounds = 3000, .offset_cycles = 30, .best_rtt_cycles = 100 };
	t.cpu[1] = (struct cb_tsc_cpu){ .cpu = 2, .rounds = 3000, .offset_cycles = -45, .best_rtt_cycles = 60 };
	snprintf(t.kernel_clocksource, sizeof t.kernel_clocksource, "tsc");
	t.kernel_verdict = "tsc-trusted";
	cb_tsc_verdict(&t, 3000, 1.0);
	ok(!strcmp(t.verdict, "inconsistent") && t.cpu[0].within && !t.cpu[1].within,
	   "TSC verdict: each CPU's offset against its own best round trip");
	ok(strstr(t.working, "CPU 2 |45| > 30 cycles") != NULL, "TSC working names the CPU and its own resolution");
	t.cpu[1].offset_cycles = -30;
	cb_tsc_verdict(&t, 3000, 1.0);
	ok(!strcmp(t.verdict, "consistent"), "TSC verdict: consistent when every CPU is within its own");
}

static void changes_tests(void)
{
	static struct cb_report r;
	static struct cb_stats cells[3];
	int i;

	memset(&r, 0, sizeof r);
	r.cells = cells;
	r.ncells = 3;
	for (i = 0; i < 3; i++) {
		memset(&cells[i], 0, sizeof cells[i]);
		cells[i].clock = 1;
		cells[i].threads = 1;
		snprintf(cells[i].clocksource, sizeof cells[i].clocksource, i ? "hpet" : "tsc");
	}
	snprintf(r.ctx.clocksource, sizeof r.ctx.clocksource, "tsc");
	snprintf(r.ctx.clocksource_end, sizeof r.ctx.clocksource_end, "hpet");
	r.probe.ok = r.probe_end.ok = r.have_probe_end = 1;
	r.probe.vdso[1] = r.probe_end.vdso[1] = CB_PATH_USER;
	cb_report_changes(&r);
	ok(r.changed.clocksource && !r.changed.path && !cells[0].after_change && cells[1].after_change &&
	   cells[2].after_change, "a clocksource change marks the run and the rows from the one after it");
	ok(strstr(r.changed.detail, "'tsc' at start, 'hpet' after row 2") != NULL, "the change's detail says where");

	strcpy(cells[1].clocksource, "tsc");
	strcpy(cells[2].clocksource, "tsc");
	strcpy(r.ctx.clocksource_end, "tsc");
	r.probe_end.vdso[1] = CB_PATH_SYSCALL;
	cb_report_changes(&r);
	ok(!r.changed.clocksource && r.changed.path && !cells[2].after_change &&
	   strstr(r.changed.detail, "monotonic path vdso user") != NULL,
	   "a path that differs at the end marks the run, rows unmarked");

	r.probe_end.vdso[1] = CB_PATH_USER;
	cb_report_changes(&r);
	ok(!r.changed.clocksource && !r.changed.path && !r.changed.detail[0], "nothing changed: nothing marked");
}

/* ---- the TSC rate check's arithmetic (bench/tscrate.c) ---- */

static void tsc_rate_tests(void)
{
	static const int pattern[8] = { 1, -1, -1, 1, 1, -1, -1, 1 }; /* orthogonal to 1 and to k */
	static const int64_t gaps[8] = { 0, 1, 2, 4, 5, 6, 7, 9 };
	static uint64_t tsc[61];
	static int64_t idx[61];
	const uint64_t base = 1000000000000000ull, rate = 2445406123ull, jit = 61135; /* 25 us */
	static struct cb_tsc_rate t;
	uint64_t s = 2463534242ull;
	double hz = 0, rms = -1;
	int k, rank = 0;

	for (k = 0; k < 8; k++) {
		idx[k] = k;
		tsc[k] = base + (uint64_t)k * rate + (uint64_t)(pattern[k] * (int64_t)jit);
	}
	ok(cb_rate_fit(tsc, idx, 8, &hz, &rms) == 0 && fabs(hz - (double)rate) < 1e-3 && fabs(rms - (double)jit) < 1e-3,
	   "rate fit: 8 edges at a known rate with +-25 us of jitter give the rate and 25 us RMS");
	ok(fabs(rms / hz * 1e6 - 25.0) < 1e-3, "rate fit: the residuals' RMS over the rate is the jitter in us");
	for (k = 0; k < 8; k++)
		tsc[k] = base + (uint64_t)gaps[k] * rate;
	ok(cb_rate_fit(tsc, gaps, 8, &hz, &rms) == 0 && fabs(hz - (double)rate) < 1e-3 && rms < 1e-3,
	   "rate fit: missed edges (seconds 3 and 8) count by their second, not their order");
	for (k = 0; k < 61; k++) {
		idx[k] = k;
		/* uniform jitter in +-100 us */
		tsc[k] = base + (uint64_t)k * rate + rnd(&s) % (2 * 244541) - 244541;
	}
	ok(cb_rate_fit(tsc, idx, 61, &hz, &rms) == 0 && fabs(cb_rate_ppm(hz, (double)rate)) < 5 &&
	   fabs(rms / hz * 1e6 - 57.7) < 10,
	   "rate fit: 61 edges with uniform +-100 us jitter: within 5 ppm, jitter near 58 us");
	ok(cb_rate_fit(tsc, idx, 1, &hz, &rms) < 0, "rate fit: one edge gives no rate");
	idx[1] = 0;
	ok(cb_rate_fit(tsc, idx, 2, &hz, &rms) < 0, "rate fit: two stamps of the same second give no rate");
	idx[1] = 1;
	tsc[1] = tsc[0] - rate;
	ok(cb_rate_fit(tsc, idx, 2, &hz, &rms) < 0, "rate fit: a TSC that went back gives no rate, not a huge one");

	ok(fabs(cb_rate_ppm(2445406000.0 * (1 + 20e-6), 2445406000.0) - 20) < 1e-6 &&
	   fabs(cb_rate_ppm(2445406000.0 * (1 - 7e-6), 2445406000.0) + 7) < 1e-6, "ppm: +20 and -7 ppm");
	ok(isnan(cb_rate_ppm(1e9, 0)) && isnan(cb_rate_ppm(NAN, 1e9)), "ppm: unknown without a reference or a rate");
	ok(cb_adjtimex_freq_ppm(-819200) == -12.5 && cb_adjtimex_freq_ppm(32768000) == 500 &&
	   cb_adjtimex_freq_ppm(1) == 1.0 / 65536, "adjtimex freq: ppm with a 16-bit fraction");

	ok(cb_kmsg_tsc_khz("6,301,1234567,-;tsc: Refined TSC clocksource calibration: 2445.406 MHz\n", &rank) ==
	   2445406 && rank == 3, "kmsg: the refined calibration, in kHz, ranked first");
	ok(cb_kmsg_tsc_khz("6,12,0,-;tsc: Detected 2445.428 MHz processor", &rank) == 2445428 && rank == 1,
	   "kmsg: the detected processor MHz, ranked last");
	ok(cb_kmsg_tsc_khz("tsc: Detected 2096.073 MHz TSC", &rank) == 2096073 && rank == 2,
	   "kmsg: a bare message, the detected TSC MHz ranked between");
	ok(cb_kmsg_tsc_khz("6,1,0,-;clocksource: tsc: mask: 0xffffffffffffffff", &rank) < 0 &&
	   cb_kmsg_tsc_khz("6,1,0,-;x86/tsc: Detected 1000.000 MHz", &rank) < 0 &&
	   cb_kmsg_tsc_khz("tsc: Detected 2445.42 MHz processor", &rank) < 0 &&
	   cb_kmsg_tsc_khz("tsc: Detected .428 MHz processor", &rank) < 0 &&
	   cb_kmsg_tsc_khz("tsc: Detected 2445.428 GHz", &rank) < 0 && cb_kmsg_tsc_khz("", &rank) < 0,
	   "kmsg: other lines, two decimals, no integer part, other units: no figure");

	memset(&t, 0, sizeof t);
	t.kernel_tsc_khz = 2445406;
	t.engine_tsc_khz = 2445430.0;
	t.monotonic.tsc_hz = 2445406000.0 * (1 + 5e-6);
	t.monotonic_raw.tsc_hz = 2445406000.0;
	t.rtc.tsc_hz = 2445406000.0 * (1 - 21e-6);
	t.rtc.available = 1;
	cb_tsc_rate_ppms(&t);
	ok(!strcmp(t.ppm_reference, "kernel") && fabs(t.monotonic.ppm - 5) < 1e-6 && fabs(t.monotonic_raw.ppm) < 1e-6 &&
	   fabs(t.rtc.ppm + 21) < 1e-6, "tsc-rate ppms: against the kernel's kHz when known");
	t.kernel_tsc_khz = 0;
	t.rtc.available = 0;
	cb_tsc_rate_ppms(&t);
	ok(!strcmp(t.ppm_reference, "engine") && fabs(t.monotonic_raw.ppm - cb_rate_ppm(2445406000.0, 2445430000.0)) < 1e-9 &&
	   isnan(t.rtc.ppm), "tsc-rate ppms: against the engine's kHz otherwise; no RTC, no RTC ppm");
}

/* Strings a kernel command line or host name could carry. */
static void json_document(void)
{
	static const char *const nasty[] = {
		"plain", "quote \" backslash \\ slash /", "tab\tnewline\ncr\rbell\a",
		"\x01\x1f\x7f", "utf-8 \xc3\xa9\xe2\x82\xac\xf0\x9f\x95\x90", "bad utf-8 \xff\xfe \xc3 end",
		"truncated \xe2\x82", "",
	};
	struct cb_json j;
	unsigned i;

	cb_json_begin(&j, stdout);
	cb_json_arr(&j, NULL);
	for (i = 0; i < sizeof nasty / sizeof nasty[0]; i++) {
		cb_json_obj(&j, NULL);
		cb_json_str(&j, nasty[i], nasty[i]);
		cb_json_end_obj(&j);
	}
	cb_json_end_arr(&j);
	putchar('\n');
}

static void watchdog_tests(void)
{
	static struct cb_watchdog w;
	static const uint64_t b1[] = { 10, 200, 300 }, b2[] = { 400, 5, 600 }, b3[] = { 10, 10, 10, 100 };
	static uint64_t big[65536];
	int i;

	cb_watchdog_init(&w, 100);
	cb_watchdog_batch(&w, b1, 3, 0);
	cb_watchdog_batch(&w, b2, 3, 5);
	ok(w.samples == 6 && w.over_limit == 4 && w.run == 1 && w.runs.count == 1 && w.runs.b[3] == 1,
	   "watchdog: a run of slow readouts that crosses a batch boundary is one run (of 3); the last one still open");
	ok(w.interrupted == 0, "watchdog: events in a batch without outliers (above twice its median) count no sample");
	cb_watchdog_finish(&w);
	ok(w.runs.count == 2 && w.runs.b[1] == 1 && w.runs.max == 3 && w.run == 0,
	   "watchdog: the open run is closed at the end (runs of 3 and 1, longest 3)");
	ok(w.ns[CB_WD_P50] == 200 && w.ns[CB_WD_MAX] == 600 && w.ns[CB_WD_P99_99] == 600,
	   "watchdog: p50 and max of one readout from the histogram (200, 600)");
	cb_watchdog_batch(&w, b3, 4, 3);
	ok(w.interrupted == 1, "watchdog: 3 events, 1 outlier: 1 sample interrupted, never more than the outliers");
	cb_watchdog_batch(&w, b3, 4, 0);
	ok(w.interrupted == 1, "watchdog: an outlier in a batch no event touched is not counted interrupted");
	for (i = 0; i < 65536; i++)
		big[i] = i % 100 ? 10 : 1000;
	cb_watchdog_batch(&w, big, 65536, 2);
	ok(w.interrupted == 3, "watchdog: 656 outliers, 2 events: 2 more interrupted, at most one per event");
	cb_watchdog_init(&w, 100);
	cb_watchdog_finish(&w);
	ok(isnan(w.ns[CB_WD_P50]) && isnan(w.ns[CB_WD_MAX]) && w.runs.count == 0,
	   "watchdog: no samples, no figures (NaN, null in JSON)");
	/* a higher limit never finds more slow readouts, nor longer runs */
	{
		static struct cb_watchdog lo, hi;
		uint64_t seed = 12345, v[4096];
		int good = 1, round;
		for (round = 0; round < 20; round++) {
			uint64_t l = 50 + rnd(&seed) % 200;
			for (i = 0; i < 4096; i++)
				v[i] = rnd(&seed) % 400;
			cb_watchdog_init(&lo, l);
			cb_watchdog_init(&hi, l + 1 + rnd(&seed) % 100);
			cb_watchdog_batch(&lo, v, 4096, 0);
			cb_watchdog_batch(&hi, v, 4096, 0);
			cb_watchdog_finish(&lo);
			cb_watchdog_finish(&hi);
			good &= hi.over_limit <= lo.over_limit && hi.runs.max <= lo.runs.max &&
				hi.runs.count <= lo.over_limit;
		}
		ok(good, "watchdog: a higher limit gives no more slow readouts and no longer runs (20 random rounds)");
	}
}

/* A FADT of 276 bytes (revision 6): PM_TMR_BLK legacy, X_PM_TMR_BLK
 * (space, width, port), the flags. */
static void fadt(unsigned char *t, unsigned legacy, int xspace, int xwidth, unsigned xport, unsigned flags)
{
	memset(t, 0, 276);
	memcpy(t, "FACP", 4);
	t[8] = 6;
	memcpy(t + 76, &legacy, 4);
	t[91] = legacy ? 4 : 0;
	memcpy(t + 112, &flags, 4);
	t[208] = (unsigned char)xspace;
	t[209] = (unsigned char)xwidth;
	memcpy(t + 212, &xport, 4);
}

static void fadt_tests(void)
{
	unsigned char t[276];
	char why[160];

	fadt(t, 0xb008, 1, 32, 0x608, 0);
	ok(cb_fadt_pm_port(t, sizeof t, why, sizeof why) == 0x608, "FADT: X_PM_TMR_BLK in I/O space first (0x608)");
	fadt(t, 0xb008, 0, 0, 0, 0);
	ok(cb_fadt_pm_port(t, sizeof t, why, sizeof why) == 0xb008, "FADT: else the legacy PM_TMR_BLK (0xb008)");
	fadt(t, 0xb008, 0, 32, 0xfed00000, 0);
	ok(cb_fadt_pm_port(t, sizeof t, why, sizeof why) == 0xb008, "FADT: an X_PM_TMR_BLK in memory space is not a port");
	fadt(t, 0xb008, 1, 32, 0x608, 0);
	ok(cb_fadt_pm_port(t, 200, why, sizeof why) == 0xb008, "FADT: a short (ACPI 1.0) table has only the legacy one");
	fadt(t, 0, 0, 0, 0, 1u << 20);
	ok(cb_fadt_pm_port(t, sizeof t, why, sizeof why) == 0 && !strcmp(why, "the FADT names none, hardware-reduced ACPI"),
	   "FADT: none on hardware-reduced ACPI, said");
	fadt(t, 0, 1, 32, 0x10000, 0);
	ok(cb_fadt_pm_port(t, sizeof t, why, sizeof why) == 0 && strstr(why, "not an I/O port"),
	   "FADT: an address past the I/O ports is refused");
	memcpy(t, "APIC", 4);
	ok(cb_fadt_pm_port(t, sizeof t, why, sizeof why) == 0 && strstr(why, "not a FADT") &&
	   cb_fadt_pm_port(t, 100, why, sizeof why) == 0, "FADT: another table, or too short, is not one");
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "json")) {
		json_document();
		return 0;
	}
	hist_tests();
	opts_tests();
	duration_tests();
	workload_tests();
	json_tests();
	overhead_tests();
	kernel_read_tests();
	probe_tests();
	tsc_tests();
	changes_tests();
	tsc_rate_tests();
	watchdog_tests();
	fadt_tests();
	return done_testing();
}
