/* render.c: one report, three formats (text, json, csv), one function each. */
#include "clockbench.h"

#include <math.h>
#include <string.h>

#define KVM_FEATURE_CLOCKSOURCE2 3
#define KVM_FEATURE_CLOCKSOURCE_STABLE_BIT 24

static const char *clock_name(int clock)
{
	return clock >= 0 ? cb_clocks[clock].name : NULL;
}

static void json_quantiles(struct cb_json *j, const char *key, const double *v, int dec)
{
	int i;

	cb_json_obj(j, key);
	for (i = 0; i < CB_NQ; i++)
		cb_json_num(j, cb_quantile_names[i], v[i], dec);
	cb_json_end_obj(j);
}

static void json_probe(struct cb_json *j, const char *key, const struct cb_probe *p)
{
	int i;

	cb_json_obj(j, key);
	cb_json_str(j, "method", "seccomp: clock_gettime syscall fails with a marker errno");
	cb_json_bool(j, "ok", p->ok);
	cb_json_str(j, "reason", p->ok ? NULL : p->reason);
	cb_json_bool(j, "vdso_present", p->vdso_present);
	cb_json_obj(j, "clocks");
	for (i = 0; i < cb_nclocks; i++) {
		cb_json_obj(j, cb_clocks[i].name);
		cb_json_str(j, "vdso", cb_path_names[p->vdso[i]]);
		cb_json_str(j, "syscall", cb_path_names[p->syscall[i]]);
		cb_json_end_obj(j);
	}
	cb_json_end_obj(j);
	cb_json_end_obj(j);
}

/* The first row of each method: the overhead figures of its first CPU. */
static const struct cb_stats *first_row(const struct cb_report *r, int m)
{
	int i;

	for (i = 0; i < r->ncells; i++)
		if ((int)r->cells[i].method == m && r->cells[i].ovh)
			return &r->cells[i];
	return NULL;
}

/* Space-separated words as a JSON array. */
static void json_words(struct cb_json *j, const char *key, const char *s)
{
	char buf[256], *save = NULL, *tok;

	snprintf(buf, sizeof buf, "%s", s);
	cb_json_arr(j, key);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		cb_json_str(j, NULL, tok);
	cb_json_end_arr(j);
}

static void json_workload(struct cb_json *j, const struct cb_workload_result *x)
{
	int k;

	cb_json_obj(j, NULL);
	cb_json_str(j, "workload", cb_workload_names[x->workload]);
	cb_json_int(j, "threads", x->threads);
	cb_json_arr(j, "cpus");
	for (k = 0; k < x->threads; k++)
		cb_json_int(j, NULL, x->cpus[k]);
	cb_json_end_arr(j);
	cb_json_num(j, "seconds", x->seconds, 3);
	cb_json_str(j, "clocksource", x->clocksource[0] ? x->clocksource : NULL);
	cb_json_bool(j, "after_change", x->after_change);
	cb_json_num(j, "rate", x->rate, x->workload == CB_WL_TCP_STREAM ? 3 : 1);
	cb_json_str(j, "rate_unit", x->rate_unit);
	if (x->have_latency)
		json_quantiles(j, "latency_us", x->latency_us, 3);
	else
		cb_json_null(j, "latency_us");
	switch (x->workload) {
	case CB_WL_TCP_STREAM:
		cb_json_uint(j, "msg_bytes", x->msg_bytes);
		cb_json_uint(j, "bytes", x->bytes);
		break;
	case CB_WL_TCP_RR:
		cb_json_uint(j, "transactions", x->transactions);
		break;
	default:
		cb_json_int(j, "interval_us", CB_TIMER_INTERVAL_US);
		cb_json_uint(j, "wakeups", x->wakeups);
		cb_json_uint(j, "overruns", x->overruns);
	}
	cb_json_end_obj(j);
}

/* checks.tsc_rate (docs/schema.md): null where a figure is unknown. */
static void json_tsc_rate(struct cb_json *j, const struct cb_tsc_rate *t)
{
	const struct cb_tsc_rate_ref *ref[2] = { &t->monotonic, &t->monotonic_raw };
	static const char *const ref_names[2] = { "monotonic", "monotonic_raw" };
	int i;

	cb_json_obj(j, "tsc_rate");
	cb_json_num(j, "seconds", t->seconds, 3);
	cb_json_str(j, "clocksource", t->clocksource);
	cb_json_num(j, "kernel_tsc_khz", t->kernel_tsc_khz > 0 ? (double)t->kernel_tsc_khz : NAN, 0);
	cb_json_str(j, "kernel_tsc_khz_source", t->kernel_tsc_khz_source);
	cb_json_num(j, "engine_tsc_khz", t->engine_tsc_khz, 3);
	cb_json_str(j, "ppm_reference", t->ppm_reference);
	cb_json_obj(j, "rtc");
	cb_json_str(j, "device", t->rtc.device);
	cb_json_bool(j, "available", t->rtc.available);
	cb_json_str(j, "reason", t->rtc.available ? NULL : t->rtc.reason);
	cb_json_num(j, "edges", t->rtc.available ? t->rtc.edges : NAN, 0);
	cb_json_num(j, "tsc_hz", t->rtc.tsc_hz, 1);
	cb_json_num(j, "ppm", t->rtc.ppm, 3);
	cb_json_num(j, "jitter_us", t->rtc.jitter_us, 3);
	cb_json_end_obj(j);
	for (i = 0; i < 2; i++) {
		cb_json_obj(j, ref_names[i]);
		cb_json_num(j, "tsc_hz", ref[i]->tsc_hz, 1);
		cb_json_num(j, "ppm", ref[i]->ppm, 3);
		cb_json_end_obj(j);
	}
	cb_json_obj(j, "adjtimex");
	cb_json_bool(j, "available", t->adjtimex.available);
	if (t->adjtimex.available) {
		cb_json_num(j, "freq_ppm", t->adjtimex.freq_ppm, 3);
		cb_json_int(j, "tick_us", t->adjtimex.tick_us);
		cb_json_int(j, "status", t->adjtimex.status);
		cb_json_bool(j, "synchronized", t->adjtimex.synchronized);
		cb_json_int(j, "maxerror_us", t->adjtimex.maxerror_us);
		cb_json_int(j, "esterror_us", t->adjtimex.esterror_us);
	} else {
		static const char *const keys[] = { "freq_ppm", "tick_us", "status", "synchronized",
						     "maxerror_us", "esterror_us" };
		for (i = 0; i < 6; i++)
			cb_json_null(j, keys[i]);
	}
	cb_json_end_obj(j);
	cb_json_end_obj(j);
}

/* watchdog_readout (docs/schema.md): the keys health reads, always all
 * of them; run lengths from 256 on are keyed by their histogram bucket's
 * low end. */
static void json_watchdog(struct cb_json *j, const struct cb_watchdog *w)
{
	char key[24];
	unsigned i;
	int q;

	cb_json_obj(j, "watchdog_readout");
	cb_json_str(j, "device", w->device);
	cb_json_str(j, "how", w->how);
	cb_json_str(j, "unavailable", w->unavailable[0] ? w->unavailable : NULL);
	cb_json_uint(j, "samples", w->samples);
	cb_json_int(j, "cpu", w->cpu);
	cb_json_bool(j, "load", w->load);
	cb_json_uint(j, "limit_ns", w->limit_ns);
	cb_json_obj(j, "ns");
	for (q = 0; q < CB_WD_NQ; q++)
		cb_json_num(j, cb_wd_quantile_names[q], w->ns[q], 0);
	cb_json_end_obj(j);
	cb_json_uint(j, "over_limit", w->over_limit);
	cb_json_obj(j, "runs_over_limit");
	for (i = 0; i < CB_HIST_BUCKETS && w->runs.count; i++)
		if (w->runs.b[i]) {
			snprintf(key, sizeof key, "%llu", (unsigned long long)cb_hist_bucket_low(i));
			cb_json_uint(j, key, w->runs.b[i]);
		}
	cb_json_uint(j, "longest", w->runs.count ? w->runs.max : 0);
	cb_json_end_obj(j);
	cb_json_uint(j, "interrupted", w->interrupted);
	cb_json_bool(j, "tail_is_upper_bound", 1);
	cb_json_end_obj(j);
}

/* context (docs/schema.md): the machine and the run. */
static void json_context(struct cb_json *j, const struct cb_report *r)
{
	const struct cb_context *c = &r->ctx;
	const struct cb_opts *o = r->opts;
	int i;

	cb_json_obj(j, "context");
	cb_json_str(j, "clockbench_version", CB_VERSION);
	cb_json_arr(j, "command_line");
	for (i = 0; i < o->argc; i++)
		cb_json_str(j, NULL, o->argv[i]);
	cb_json_end_arr(j);
	cb_json_str(j, "hostname", c->hostname);
	cb_json_str(j, "kernel", c->kernel);
	cb_json_str(j, "kernel_cmdline", c->cmdline);
	cb_json_str(j, "cpu_model", c->cpu_model);
	cb_json_obj(j, "cpu_flags");
	cb_json_bool(j, "constant_tsc", c->constant_tsc);
	cb_json_bool(j, "nonstop_tsc", c->nonstop_tsc);
	cb_json_bool(j, "tsc_known_freq", c->tsc_known_freq);
	cb_json_bool(j, "rdtscp", c->rdtscp);
	cb_json_bool(j, "hypervisor", c->hypervisor_flag);
	cb_json_bool(j, "invtsc_cpuid", c->invtsc);
	cb_json_end_obj(j);
	cb_json_str(j, "hypervisor", c->hypervisor[0] ? c->hypervisor : NULL);
	if (c->kvm_features_valid) {
		cb_json_obj(j, "kvm_features");
		cb_json_uint(j, "eax", c->kvm_features);
		cb_json_bool(j, "clocksource2", !!(c->kvm_features & (1u << KVM_FEATURE_CLOCKSOURCE2)));
		cb_json_bool(j, "stable_bit", !!(c->kvm_features & (1u << KVM_FEATURE_CLOCKSOURCE_STABLE_BIT)));
		cb_json_end_obj(j);
	} else {
		cb_json_null(j, "kvm_features");
	}
	cb_json_str(j, "clocksource", c->clocksource[0] ? c->clocksource : NULL);
	cb_json_str(j, "clocksource_end", c->clocksource_end[0] ? c->clocksource_end : NULL);
	json_words(j, "available_clocksource", c->available_clocksource);
	cb_json_num(j, "tsc_mhz", c->tsc_per_ns * 1000, 3);
	cb_json_int(j, "cpus_online", c->cpus_online);
	cb_json_int(j, "cpus_allowed", c->cpus_allowed);
	cb_json_num(j, "duration_s", o->duration, 3);
	cb_json_str(j, "start", c->start);
	cb_json_str(j, "end", c->end);
	cb_json_obj(j, "mitigations");
	for (i = 0; i < c->nmitigations; i++)
		cb_json_str(j, c->mitigation[i].name, c->mitigation[i].text);
	cb_json_end_obj(j);
	cb_json_end_obj(j);

}

/* overhead: each method's first row's loop overhead on its first CPU. */
static void json_overhead(struct cb_json *j, const struct cb_report *r)
{
	int k;

	cb_json_obj(j, "overhead");
	for (k = 0; k < CB_NMETHODS; k++) {
		const struct cb_stats *s = first_row(r, k);
		if (!s)
			continue;
		cb_json_obj(j, cb_method_names[k]);
		cb_json_uint(j, "batch", s->batch);
		cb_json_int(j, "cpu", s->ovh[0].cpu);
		cb_json_num(j, "cycles_per_batch", s->ovh[0].cycles_per_batch, 1);
		cb_json_num(j, "ns_per_call", s->ovh[0].ns_per_call, 3);
		cb_json_end_obj(j);
	}
	cb_json_end_obj(j);

}

/* results: one object per cost cell. */
static void json_results(struct cb_json *j, const struct cb_report *r)
{
	int i, k;

	cb_json_arr(j, "results");
	for (i = 0; i < r->ncells; i++) {
		const struct cb_stats *s = &r->cells[i];
		cb_json_obj(j, NULL);
		cb_json_str(j, "clock", clock_name(s->clock));
		cb_json_str(j, "method", cb_method_names[s->method]);
		cb_json_int(j, "threads", s->threads);
		cb_json_str(j, "path", s->clock >= 0 ? cb_path_names[s->path] : NULL);
		cb_json_str(j, "clocksource", s->clocksource[0] ? s->clocksource : NULL);
		cb_json_bool(j, "after_change", s->after_change);
		cb_json_uint(j, "batch", s->batch);
		cb_json_uint(j, "batches", s->batches);
		cb_json_uint(j, "calls", s->calls);
		cb_json_num(j, "seconds", s->seconds, 3);
		cb_json_num(j, "overhead_ns_per_call", s->overhead_ns, 3);
		cb_json_arr(j, "overhead_per_cpu");
		for (k = 0; k < s->threads && s->ovh; k++) {
			cb_json_obj(j, NULL);
			cb_json_int(j, "cpu", s->ovh[k].cpu);
			cb_json_num(j, "cycles_per_batch", s->ovh[k].cycles_per_batch, 1);
			cb_json_num(j, "ns_per_call", s->ovh[k].ns_per_call, 3);
			cb_json_end_obj(j);
		}
		cb_json_end_arr(j);
		json_quantiles(j, "ns_per_call", s->ns, 2);
		json_quantiles(j, "ns_per_call_raw", s->ns_raw, 2);
		json_quantiles(j, "cycles_per_call", s->cyc, 2);
		json_quantiles(j, "cycles_per_call_raw", s->cyc_raw, 2);
		cb_json_arr(j, "below_overhead");
		for (k = 0; k < CB_NQ; k++)
			if (s->below_overhead & (1u << k))
				cb_json_str(j, NULL, cb_quantile_names[k]);
		cb_json_end_arr(j);
		cb_json_num(j, "calls_per_sec_thread", s->calls_per_sec_thread, 0);
		cb_json_num(j, "calls_per_sec_total", s->calls_per_sec_total, 0);
		if (s->method == CB_SYSCALL) {
			cb_json_num(j, "null_median_ns", s->null_ns, 2);
			cb_json_num(j, "kernel_read_ns", s->kernel_read_ns, 2);
			cb_json_bool(j, "kernel_read_negative", s->kernel_read_negative);
		}
		cb_json_end_obj(j);
	}
	cb_json_end_arr(j);

}

/* checks: warps, tsc, tsc_rate; null where not run. */
static void json_checks(struct cb_json *j, const struct cb_report *r)
{
	const struct cb_context *c = &r->ctx;
	const struct cb_opts *o = r->opts;
	int i;

	cb_json_obj(j, "checks");
	if (o->check_warps) {
		cb_json_arr(j, "warps");
		for (i = 0; i < r->nwarps; i++) {
			const struct cb_warp_result *w = &r->warps[i];
			cb_json_obj(j, NULL);
			cb_json_str(j, "clock", clock_name(w->clock));
			cb_json_int(j, "threads", w->threads);
			cb_json_num(j, "seconds", w->seconds, 3);
			cb_json_uint(j, "reads", w->reads);
			cb_json_uint(j, "warps", w->warps);
			cb_json_uint(j, "max_warp_ns", w->max_warp_ns);
			cb_json_end_obj(j);
		}
		cb_json_end_arr(j);
	} else {
		cb_json_null(j, "warps");
	}
	if (r->tsc) {
		const struct cb_tsc_result *t = r->tsc;
		cb_json_obj(j, "tsc");
		cb_json_int(j, "ref_cpu", t->ref_cpu);
		cb_json_bool(j, "complete", !r->tsc_failed);
		cb_json_arr(j, "cpus");
		for (i = 0; i < t->ncpus; i++) {
			cb_json_obj(j, NULL);
			cb_json_int(j, "cpu", t->cpu[i].cpu);
			cb_json_uint(j, "rounds", t->cpu[i].rounds);
			cb_json_uint(j, "warps", t->cpu[i].warps);
			cb_json_int(j, "offset_cycles", t->cpu[i].offset_cycles);
			cb_json_num(j, "offset_ns", (double)t->cpu[i].offset_cycles / c->tsc_per_ns, 1);
			cb_json_uint(j, "best_rtt_cycles", t->cpu[i].best_rtt_cycles);
			cb_json_num(j, "best_rtt_ns", (double)t->cpu[i].best_rtt_cycles / c->tsc_per_ns, 1);
			cb_json_uint(j, "resolution_cycles", t->cpu[i].best_rtt_cycles / 2);
			cb_json_bool(j, "within_resolution", t->cpu[i].within);
			cb_json_end_obj(j);
		}
		cb_json_end_arr(j);
		cb_json_uint(j, "total_warps", t->total_warps);
		cb_json_int(j, "max_abs_offset_cycles", t->max_abs_offset_cycles);
		cb_json_str(j, "kernel_clocksource", t->kernel_clocksource);
		cb_json_str(j, "kernel_verdict", t->kernel_verdict);
		cb_json_str(j, "verdict", r->tsc_failed ? "incomplete" : t->verdict);
		cb_json_str(j, "working", t->working);
		cb_json_end_obj(j);
	} else {
		cb_json_null(j, "tsc");
	}
	if (r->tsc_rate)
		json_tsc_rate(j, r->tsc_rate);
	else
		cb_json_null(j, "tsc_rate");
	cb_json_end_obj(j);
}

static void render_json(FILE *f, const struct cb_report *r)
{
	struct cb_json j;
	int i;

	cb_json_begin(&j, f);
	cb_json_obj(&j, NULL);
	cb_json_str(&j, "schema", CB_SCHEMA);
	json_context(&j, r);
	json_overhead(&j, r);
	json_results(&j, r);
	cb_json_arr(&j, "workloads");
	for (i = 0; i < r->nworkloads; i++)
		json_workload(&j, &r->workloads[i]);
	cb_json_end_arr(&j);

	json_probe(&j, "probe", &r->probe);
	if (r->have_probe_end)
		json_probe(&j, "probe_end", &r->probe_end);
	else
		cb_json_null(&j, "probe_end");
	cb_json_obj(&j, "changed_during_run");
	cb_json_bool(&j, "clocksource", r->changed.clocksource);
	cb_json_bool(&j, "path", r->changed.path);
	cb_json_str(&j, "detail", r->changed.detail[0] ? r->changed.detail : NULL);
	cb_json_end_obj(&j);

	json_checks(&j, r);
	if (r->watchdog)
		json_watchdog(&j, r->watchdog);
	else
		cb_json_null(&j, "watchdog_readout");
	cb_json_end_obj(&j);
}

static const char csv_header[] =
	"clock,method,threads,path,batch,batches,calls,seconds,"
	"ns_min,ns_median,ns_mean,ns_p99,ns_p999,ns_max,"
	"cycles_min,cycles_median,cycles_mean,cycles_p99,cycles_p999,cycles_max,"
	"calls_per_sec_thread,calls_per_sec_total,clocksource,after_change,overhead_ns,"
	"ns_raw_min,ns_raw_median,ns_raw_mean,ns_raw_p99,ns_raw_p999,ns_raw_max,below_overhead,"
	"null_median_ns,kernel_read_ns,kernel_read_negative\n";

/* A number as in the JSON (same precision), or an empty cell for null. */
static void csv_num(FILE *f, double v, int dec)
{
	if (v == v)
		fprintf(f, ",%.*f", dec, v);
	else
		fputc(',', f);
}

/* Numbers as in the JSON (same precision), so the two can be compared;
 * a quantile below the overhead is an empty cell, named in below_overhead. */
static void render_csv(FILE *f, const struct cb_report *r)
{
	int i, k;

	fputs(csv_header, f);
	for (i = 0; i < r->ncells; i++) {
		const struct cb_stats *s = &r->cells[i];
		const char *sep = "";
		fprintf(f, "%s,%s,%d,%s,%u,%llu,%llu,%.3f",
			s->clock >= 0 ? cb_clocks[s->clock].name : "",
			cb_method_names[s->method], s->threads,
			s->clock >= 0 ? cb_path_names[s->path] : "",
			s->batch, (unsigned long long)s->batches, (unsigned long long)s->calls, s->seconds);
		for (k = 0; k < CB_NQ; k++)
			csv_num(f, s->ns[k], 2);
		for (k = 0; k < CB_NQ; k++)
			csv_num(f, s->cyc[k], 2);
		fprintf(f, ",%.0f,%.0f,%s,%s,%.3f", s->calls_per_sec_thread, s->calls_per_sec_total,
			s->clocksource, s->after_change ? "true" : "false", s->overhead_ns);
		for (k = 0; k < CB_NQ; k++)
			csv_num(f, s->ns_raw[k], 2);
		fputc(',', f);
		for (k = 0; k < CB_NQ; k++)
			if (s->below_overhead & (1u << k)) {
				fprintf(f, "%s%s", sep, cb_quantile_names[k]);
				sep = " ";
			}
		if (s->method == CB_SYSCALL) {
			csv_num(f, s->null_ns, 2);
			csv_num(f, s->kernel_read_ns, 2);
			fprintf(f, ",%s\n", s->kernel_read_negative ? "true" : "false");
		} else {
			fputs(",,,\n", f);
		}
	}
}

/* The loud line of a run whose clocksource or path changed under it. */
static void changed_line(FILE *f, const struct cb_report *r)
{
	if (r->changed.clocksource || r->changed.path)
		fprintf(f, "!!! CHANGED DURING THE RUN (%s%s%s): %s\n", r->changed.clocksource ? "clocksource" : "",
			r->changed.clocksource && r->changed.path ? ", " : "", r->changed.path ? "path" : "",
			r->changed.detail);
}

/* One figure of a text table in width columns: v where known, else text. */
static void cell(FILE *f, int width, int known, double v, const char *text)
{
	if (known)
		fprintf(f, " %*.2f", width, v);
	else
		fprintf(f, " %*s", width, text);
}

/* The syscall rows' kernel_read_ns, with the two medians it comes from. */
static void kernel_read_table(FILE *f, const struct cb_report *r)
{
	int i, head = 0, none = 0, negative = 0;

	for (i = 0; i < r->ncells; i++) {
		const struct cb_stats *s = &r->cells[i];
		if (s->method != CB_SYSCALL)
			continue;
		if (!head++)
			fprintf(f, "\nthe kernel's own clock read: the syscall median less the median of null batches timed between its own\n"
				"%-16s %3s %9s %9s %9s\n", "clock", "thr", "syscall", "null", "kernel");
		fprintf(f, "%-16s %3d", cb_clocks[s->clock].name, s->threads);
		cell(f, 9, !(s->below_overhead & (1u << CB_Q_MEDIAN)), s->ns[CB_Q_MEDIAN], "<ovh");
		cell(f, 9, s->null_ns == s->null_ns, s->null_ns, "-");
		cell(f, 9, s->kernel_read_ns == s->kernel_read_ns, s->kernel_read_ns, s->kernel_read_negative ? "<null" : "-");
		fputc('\n', f);
		none |= s->null_ns != s->null_ns;
		negative |= s->kernel_read_negative;
	}
	if (none)
		fprintf(f, "-: no null median at that thread count (add null to --methods)\n");
	if (negative)
		fprintf(f, "<null: the null call cost more than the syscall; not known (both medians in JSON and CSV)\n");
}

/* One row per workload: the rate, the latency quantiles where there are. */
static void workload_table(FILE *f, const struct cb_report *r)
{
	int i, k;

	if (!r->nworkloads)
		return;
	fprintf(f, "\nworkloads, %.2g s each (rate: higher is better; latency in us: tcp-rr round trip, timer wake-up)\n",
		r->opts->duration);
	fprintf(f, "%-10s %3s %-9s %7s %12s %-14s %9s %9s %9s %9s %9s %10s  %s\n", "workload", "thr", "cpus",
		"seconds", "rate", "unit", "min", "median", "mean", "p99", "p99.9", "max", "count");
	for (i = 0; i < r->nworkloads; i++) {
		const struct cb_workload_result *x = &r->workloads[i];
		char cpus[40] = "";
		for (k = 0; k < x->threads; k++)
			cb_append(cpus, sizeof cpus, "%s%d", k ? "," : "", x->cpus[k]);
		if (strlen(cpus) == sizeof cpus - 1) /* cut: say so */
			strcpy(cpus + sizeof cpus - 4, "...");
		fprintf(f, "%-10s %3d %-9s %7.2f %12.*f %-14s", cb_workload_names[x->workload], x->threads, cpus,
			x->seconds, x->workload == CB_WL_TCP_STREAM ? 3 : 1, x->rate, x->rate_unit);
		for (k = 0; k < CB_NQ; k++)
			cell(f, k == CB_Q_MAX ? 10 : 9, x->have_latency, x->latency_us[k], "-");
		if (x->workload == CB_WL_TCP_STREAM)
			fprintf(f, "  %llu bytes in %u-byte writes", (unsigned long long)x->bytes, x->msg_bytes);
		else if (x->workload == CB_WL_TCP_RR)
			fprintf(f, "  %llu transactions", (unsigned long long)x->transactions);
		else
			fprintf(f, "  %llu wakeups, %llu overruns", (unsigned long long)x->wakeups,
				(unsigned long long)x->overruns);
		fprintf(f, "%s\n", x->after_change ? " *" : "");
	}
	if (r->changed.clocksource && r->workloads[r->nworkloads - 1].after_change)
		fprintf(f, "*: measured after the clocksource changed ('%s' read right after the workload)\n",
			r->workloads[r->nworkloads - 1].clocksource);
}

/* The TSC rate check as a paragraph: one line per reference clock. */
static void text_tsc_rate(FILE *f, const struct cb_tsc_rate *t)
{
	const struct cb_tsc_rate_ref *ref[2] = { &t->monotonic, &t->monotonic_raw };
	static const char *const ref_names[2] = { "CLOCK_MONOTONIC", "CLOCK_MONOTONIC_RAW" };
	int i;

	fprintf(f, "\nTSC rate over %.1f s (clocksource %s): the kernel's TSC ", t->seconds, t->clocksource);
	if (t->kernel_tsc_khz > 0)
		fprintf(f, "%.3f MHz (%s)", t->kernel_tsc_khz / 1e3, t->kernel_tsc_khz_source);
	else
		fprintf(f, "not found");
	fprintf(f, ", the engine's %.3f MHz; ppm against the %s's\n", t->engine_tsc_khz / 1e3, t->ppm_reference);
	if (t->rtc.available)
		fprintf(f, "  %-20s %14.6f MHz %+10.3f ppm  (%d edges, jitter %.1f us)\n", t->rtc.device,
			t->rtc.tsc_hz / 1e6, t->rtc.ppm, t->rtc.edges, t->rtc.jitter_us);
	else
		fprintf(f, "  %-20s not available: %s\n", t->rtc.device, t->rtc.reason);
	for (i = 0; i < 2; i++)
		fprintf(f, "  %-20s %14.6f MHz %+10.3f ppm\n", ref_names[i], ref[i]->tsc_hz / 1e6, ref[i]->ppm);
	if (t->adjtimex.available)
		fprintf(f, "  adjtimex: NTP frequency correction %+.3f ppm, tick %ld us, synchronized %s "
			"(maxerror %ld us, esterror %ld us)\n", t->adjtimex.freq_ppm, t->adjtimex.tick_us,
			t->adjtimex.synchronized ? "yes" : "no", t->adjtimex.maxerror_us, t->adjtimex.esterror_us);
	else
		fprintf(f, "  adjtimex: not available\n");
}

/* The watchdog readout as a paragraph; unavailable, one line. */
static void text_watchdog(FILE *f, const struct cb_watchdog *w)
{
	static const char *const names[CB_WD_NQ] = { "p50", "p99", "p99.9", "p99.99", "max" };
	unsigned i;
	int q;

	if (w->unavailable[0]) {
		fprintf(f, "\nwatchdog readout: unavailable: %s\n", w->unavailable);
		return;
	}
	fprintf(f, "\nwatchdog readout (%s, %s) on CPU %d, %s, %.1f s: %llu readouts of watchdog, TSC, watchdog\n",
		w->device, w->how, w->cpu, w->load ? "load on the other CPUs" : "no load", w->seconds,
		(unsigned long long)w->samples);
	fprintf(f, "  one readout, ns:");
	for (q = 0; q < CB_WD_NQ; q++)
		fprintf(f, "  %s %.0f", names[q], w->ns[q]);
	fprintf(f, "\n  over the %llu ns limit: %llu (%.4f%%); runs of consecutive slow readouts (length: count):",
		(unsigned long long)w->limit_ns, (unsigned long long)w->over_limit,
		w->samples ? 100.0 * (double)w->over_limit / (double)w->samples : 0.0);
	if (!w->runs.count)
		fprintf(f, " none");
	for (i = 0; i < CB_HIST_BUCKETS && w->runs.count; i++)
		if (w->runs.b[i])
			fprintf(f, "%s %llu: %llu", i == cb_hist_bucket((uint64_t)w->runs.min) ? "" : ",",
				(unsigned long long)cb_hist_bucket_low(i), (unsigned long long)w->runs.b[i]);
	if (w->runs.count)
		fprintf(f, "; longest %llu", (unsigned long long)w->runs.max);
	fprintf(f, "\n  interrupted: %llu samples, an estimate: per batch, those above twice its median, at most one\n"
		"  per event counted around it (%s)\n", (unsigned long long)w->interrupted, w->interrupts_from);
	fprintf(f, "  the tail is an upper bound: the kernel reads with interrupts off, user space cannot\n");
}

static void render_text(FILE *f, const struct cb_report *r)
{
	const struct cb_context *c = &r->ctx;
	int i, k;

	fprintf(f, "clockbench %s on %s, Linux %s, %s\n", CB_VERSION, c->hostname, c->kernel,
		c->cpu_model[0] ? c->cpu_model : "unknown CPU");
	fprintf(f, "clocksource %s (available: %s); TSC %.1f MHz; %ld CPUs online, %ld used\n",
		c->clocksource[0] ? c->clocksource : "unknown",
		c->available_clocksource[0] ? c->available_clocksource : "unknown",
		c->tsc_per_ns * 1000, c->cpus_online, c->cpus_allowed);
	fprintf(f, "flags: constant_tsc %s, nonstop_tsc %s, invtsc (cpuid) %s; hypervisor %s",
		c->constant_tsc ? "yes" : "no", c->nonstop_tsc ? "yes" : "no", c->invtsc ? "yes" : "no",
		c->hypervisor[0] ? c->hypervisor : c->hypervisor_flag ? "(unnamed)" : "none");
	if (c->kvm_features_valid)
		fprintf(f, ", KVM stable bit advertised %s",
			c->kvm_features & (1u << KVM_FEATURE_CLOCKSOURCE_STABLE_BIT) ? "yes" : "no");
	fprintf(f, "\n%s .. %s\n", c->start, c->end);

	if (c->nmitigations) {
		const char *sep = "";
		fprintf(f, "mitigations (all others 'Not affected'):");
		for (i = 0; i < c->nmitigations; i++)
			if (strcmp(c->mitigation[i].text, "Not affected")) {
				fprintf(f, "%s %s: %s", sep, c->mitigation[i].name, c->mitigation[i].text);
				sep = ";";
			}
		fputc('\n', f);
	}
	changed_line(f, r);

	if (r->ncells) {
		int below = 0;
		fprintf(f, "\nns per call, less each thread's own loop overhead (ovh, measured on its CPU)\n");
		fprintf(f, "%-16s %-14s %-7s %3s %5s %6s %9s %9s %9s %9s %9s %10s %9s %9s\n", "clock", "method",
			"path", "thr", "batch", "ovh", "min", "median", "mean", "p99", "p99.9", "max", "raw med",
			"Mcalls/s");
		for (i = 0; i < r->ncells; i++) {
			const struct cb_stats *s = &r->cells[i];
			fprintf(f, "%-16s %-14s %-7s %3d %5u %6.2f", s->clock >= 0 ? cb_clocks[s->clock].name : "-",
				cb_method_names[s->method], s->clock >= 0 ? cb_path_names[s->path] : "-",
				s->threads, s->batch, s->overhead_ns);
			for (k = 0; k < CB_NQ; k++)
				cell(f, k == CB_Q_MAX ? 10 : 9, !(s->below_overhead & (1u << k)), s->ns[k], "<ovh");
			fprintf(f, " %9.2f %9.2f%s\n", s->ns_raw[CB_Q_MEDIAN], s->calls_per_sec_total / 1e6,
				s->after_change ? " *" : "");
			below |= !!s->below_overhead;
		}
		if (below)
			fprintf(f, "<ovh: the loop overhead exceeds this figure, which is not known (raw figures in JSON and CSV)\n");
		if (r->changed.clocksource)
			fprintf(f, "*: measured after the clocksource changed ('%s' read right after the cell)\n",
				r->cells[r->ncells - 1].clocksource);
		kernel_read_table(f, r);
	}
	workload_table(f, r);

	fprintf(f, "\npath check (a forked child whose clock_gettime syscall fails with a marker):\n");
	if (!r->probe.ok) {
		fprintf(f, "  not available: %s\n", r->probe.reason);
	} else {
		for (i = 0; i < cb_nclocks; i++)
			fprintf(f, "  %-16s vdso -> %-7s syscall -> %s\n", cb_clocks[i].name,
				cb_path_names[r->probe.vdso[i]], cb_path_names[r->probe.syscall[i]]);
	}
	if (r->have_probe_end)
		fprintf(f, "  repeated at the end: %s\n", r->changed.path ? "DIFFERENT (see the line marked !!!)"
			: r->probe_end.ok && r->probe.ok ? "the same" : r->probe_end.ok ? "available only at the end"
			: r->probe.ok ? "not available at the end" : "not available");
	for (i = 0; i < r->nwarps; i++) {
		const struct cb_warp_result *w = &r->warps[i];
		fprintf(f, "%swarp check %-16s %d threads, %.1f s: %llu reads, %llu warps, worst %llu ns\n",
			i ? "" : "\n", cb_clocks[w->clock].name, w->threads, w->seconds,
			(unsigned long long)w->reads, (unsigned long long)w->warps,
			(unsigned long long)w->max_warp_ns);
	}
	if (r->tsc) {
		const struct cb_tsc_result *t = r->tsc;
		fprintf(f, "\nTSC check against CPU %d:\n", t->ref_cpu);
		for (i = 0; i < t->ncpus; i++)
			fprintf(f, "  CPU %-4d offset %8lld cycles (%9.1f ns)  best round trip %6llu cycles (%s half of it)  %llu warps in %llu rounds\n",
				t->cpu[i].cpu, (long long)t->cpu[i].offset_cycles,
				(double)t->cpu[i].offset_cycles / c->tsc_per_ns,
				(unsigned long long)t->cpu[i].best_rtt_cycles, t->cpu[i].within ? "within" : "BEYOND",
				(unsigned long long)t->cpu[i].warps, (unsigned long long)t->cpu[i].rounds);
		fprintf(f, "  %s\n", t->working);
		fprintf(f, "TSC verdict: %s (kernel: %s)\n", r->tsc_failed ? "incomplete" : t->verdict,
			t->kernel_verdict);
	}
	if (r->tsc_rate)
		text_tsc_rate(f, r->tsc_rate);
	if (r->watchdog)
		text_watchdog(f, r->watchdog);
	if (r->changed.clocksource || r->changed.path)
		fputc('\n', f);
	changed_line(f, r);
}

void cb_render(FILE *f, const struct cb_report *r, enum cb_format fmt)
{
	switch (fmt) {
	case CB_JSON: render_json(f, r); break;
	case CB_CSV: render_csv(f, r); break;
	default: render_text(f, r); break;
	}
}
