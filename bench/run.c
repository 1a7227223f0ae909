/* run.c: clockbench_main(): options, measuring plan, checks, outputs. */
#include "clockbench.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Renders the report in fmt to output i (see cb_outputs_write), or to
 * stdout if i < 0. */
static int emit(const struct cb_report *r, enum cb_format fmt, int i)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int rc;

	if (!m) {
		cb_warn("open_memstream: %s", strerror(errno));
		return -1;
	}
	cb_render(m, r, fmt);
	if (fclose(m) != 0) {
		cb_warn("rendering the report: %s", strerror(errno));
		free(buf);
		return -1;
	}
	if (i >= 0) {
		rc = cb_outputs_write(i, buf, len);
	} else {
		rc = fwrite(buf, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : -1;
		if (rc < 0)
			cb_warn("write stdout: %s", strerror(errno));
	}
	free(buf);
	return rc;
}

int cb_refuse_unsettled;

int cb_clocksource_unsettled(const char *cs)
{
	size_t n = strlen(cs);

	for (const char *w = CB_CS_STAND_INS; *w;) {
		size_t len = strcspn(w, " ");

		if (len == n && n && !strncmp(w, cs, n))
			return 1;
		w += len;
		w += strspn(w, " ");
	}
	return 0;
}

/* Runs every cost cell in the order clock, method, threads; reads the
 * kernel's clocksource right after each. */
static int measure(struct cb_report *r, const struct cb_opts *o, double tpn)
{
	unsigned batch[32][CB_NMETHODS];
	int k, m, t, n = 0, total = 0, clocked;
	double est;

	/* a row a thread count for each clock of a method that reads one, else one */
	for (m = 0; m < CB_NMETHODS; m++)
		if (o->methods & (1u << m))
			total += o->nthreads * (cb_method_clocked((enum cb_method)m) ? __builtin_popcount(o->clocks) : 1);
	r->cells = calloc((size_t)total, sizeof *r->cells);
	if (!r->cells) {
		cb_warn("calloc: %s", strerror(errno));
		return -1;
	}
	est = total * (o->duration + 0.05);
	if (est > 3)
		cb_progress("%d cells of %.2g s: about %.0f s", total, o->duration, est);

	/* Batch sizes first, on the first CPU, so that every thread count of a
	 * clock and method shares one batch size. */
	for (m = 0; m < CB_NMETHODS; m++)
		for (k = 0; k < cb_nclocks && (o->methods & (1u << m)); k++)
			batch[k][m] = o->batch ? o->batch
				: cb_auto_batch(cb_method_clocked((enum cb_method)m) ? k : -1, (enum cb_method)m, tpn);

	for (k = 0; k < cb_nclocks + 1; k++) {
		for (m = 0; m < CB_NMETHODS; m++) {
			int ck = k < cb_nclocks ? k : -1;
			clocked = cb_method_clocked((enum cb_method)m);
			if (!(o->methods & (1u << m)) || clocked != (ck >= 0) || (ck >= 0 && !(o->clocks & (1u << ck))))
				continue;
			for (t = 0; t < o->nthreads; t++) {
				unsigned b = batch[ck >= 0 ? ck : 0][m];
				struct cb_stats *s = &r->cells[n];
				if (est > 3)
					cb_progress_cell("[%d/%d] %s %s, %d thread%s", n + 1, total,
							 ck >= 0 ? cb_clocks[ck].name : "tsc",
							 cb_method_names[m], o->threads[t], o->threads[t] > 1 ? "s" : "");
				if (cb_measure_cell(o, ck, (enum cb_method)m, o->threads[t], b, tpn, s) < 0)
					return -1;
				cb_current_clocksource(s->clocksource, sizeof s->clocksource);
				s->path = ck < 0 ? CB_PATH_UNKNOWN
					: m == CB_VDSO ? r->probe.vdso[ck] : r->probe.syscall[ck];
				r->ncells = ++n;
			}
		}
	}
	return 0;
}

/* Runs each workload asked for, in the order of enum cb_workload; reads
 * the kernel's clocksource right after each. */
static int workloads(struct cb_report *r, const struct cb_opts *o, double tpn)
{
	int w;

	for (w = 0; w < CB_NWORKLOADS; w++) {
		struct cb_workload_result *x = &r->workloads[r->nworkloads];
		if (!(o->workloads & (1u << w)))
			continue;
		if (w == CB_WL_TIMER)
			cb_progress("workload timer: %d thread%s sleeping %d us intervals, %.2g s",
				    o->threads[o->nthreads - 1], o->threads[o->nthreads - 1] > 1 ? "s" : "",
				    CB_TIMER_INTERVAL_US, o->duration);
		else
			cb_progress("workload %s: CPUs %d and %d, %.2g s", cb_workload_names[w], o->cpus[0],
				    o->cpus[o->ncpus > 1 ? 1 : 0], o->duration);
		if (cb_run_workload(o, (enum cb_workload)w, tpn, x) < 0)
			return -1;
		cb_current_clocksource(x->clocksource, sizeof x->clocksource);
		r->nworkloads++;
	}
	return 0;
}

void cb_report_changes(struct cb_report *r)
{
	struct cb_changes *ch = &r->changed;
	const char *prev = r->ctx.clocksource;
	int i, marked = 0;

	memset(ch, 0, sizeof *ch);
	for (i = 0; i < r->ncells; i++) {
		struct cb_stats *s = &r->cells[i];
		if (!marked && strcmp(s->clocksource, prev)) {
			marked = 1;
			cb_append(ch->detail, sizeof ch->detail, "clocksource '%s' at start, '%s' after row %d "
			       "(%s %s, %d thread%s)", r->ctx.clocksource, s->clocksource, i + 1,
			       s->clock >= 0 ? cb_clocks[s->clock].name : "tsc", cb_method_names[s->method],
			       s->threads, s->threads > 1 ? "s" : "");
		}
		s->after_change = marked;
		prev = s->clocksource;
	}
	for (i = 0; i < r->nworkloads; i++) { /* measured after the cost cells */
		struct cb_workload_result *x = &r->workloads[i];
		if (!marked && strcmp(x->clocksource, prev)) {
			marked = 1;
			cb_append(ch->detail, sizeof ch->detail, "clocksource '%s' at start, '%s' after workload %s",
				  r->ctx.clocksource, x->clocksource, cb_workload_names[x->workload]);
		}
		x->after_change = marked;
		prev = x->clocksource;
	}
	if (marked || strcmp(r->ctx.clocksource_end, r->ctx.clocksource)) {
		ch->clocksource = 1;
		cb_append(ch->detail, sizeof ch->detail, "%sclocksource '%s' at end",
		       marked ? ", " : "", r->ctx.clocksource_end);
		if (!marked)
			cb_append(ch->detail, sizeof ch->detail, ", '%s' at start", r->ctx.clocksource);
	}
	if (!r->have_probe_end || !r->probe.ok || !r->probe_end.ok)
		return;
	for (i = 0; i < cb_nclocks; i++) {
		const struct cb_probe *a = &r->probe, *b = &r->probe_end;
		if (a->vdso[i] == b->vdso[i] && a->syscall[i] == b->syscall[i])
			continue;
		cb_append(ch->detail, sizeof ch->detail, "%s%s path vdso %s, syscall %s at start; vdso %s, syscall %s at end",
		       ch->detail[0] ? "; " : "", cb_clocks[i].name, cb_path_names[a->vdso[i]],
		       cb_path_names[a->syscall[i]], cb_path_names[b->vdso[i]], cb_path_names[b->syscall[i]]);
		ch->path = 1;
	}
}

static int checks(struct cb_report *r, const struct cb_opts *o, double tpn)
{
	static struct cb_tsc_result tsc;
	static struct cb_tsc_rate rate;
	static struct cb_watchdog wd;
	int k, nk = o->check_warps ? __builtin_popcount(o->clocks) : 0;

	if (nk > 1)
		cb_progress("warp checks: %d clocks on %d CPUs, %.2g s each", nk, o->ncpus, o->duration);
	for (k = 0; o->check_warps && k < cb_nclocks; k++) {
		if (!(o->clocks & (1u << k)))
			continue;
		/* one line for all the clocks' checks; each one in place */
		(nk > 1 ? cb_progress_cell : cb_progress)("warp check: %s on %d CPUs for %.2g s",
							  cb_clocks[k].name, o->ncpus, o->duration);
		if (cb_check_warps(o, k, tpn, &r->warps[r->nwarps]) < 0)
			return -1;
		r->nwarps++;
	}
	if (o->check_tsc) {
		cb_progress("TSC check: %d other CPU(s) against CPU %d, %u round trips each", o->ncpus - 1, o->cpus[0],
			    o->tsc_rounds);
		r->tsc = &tsc;
		r->tsc_failed = cb_check_tsc(o, tpn, &tsc) < 0;
	}
	if (o->check_tsc_rate) {
		cb_progress("TSC rate check: against the RTC, CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW for %.2g s",
			    o->duration);
		if (cb_check_tsc_rate(o, tpn, &rate) < 0)
			return -1;
		r->tsc_rate = &rate;
	}
	if (o->check_watchdog) {
		int rc;
		cb_progress("watchdog readout: %s on CPU %d for %.2g s%s",
			    o->test_watchdog_file ? "the stand-in" : "hpet or acpi_pm", o->cpus[0], o->duration,
			    o->load ? ", load on the other CPUs" : "");
		rc = cb_check_watchdog(o, tpn, &wd);
		if (rc < 0)
			return -1;
		r->watchdog = &wd;
		if (rc > 0)
			cb_warn("watchdog readout unavailable: %s", wd.unavailable);
	}
	return 0;
}

/* --probe --require user: the path probe alone, no calibration, no report.
 * Returns 0 if every --clocks is read in user space through the C library,
 * else 1 after one line naming each clock that is not, its path and the
 * kernel's clocksource; CB_EXIT_CANNOT if the probe cannot run here. */
static int require_user(const struct cb_opts *o)
{
	static struct cb_probe p;
	char bad[512] = "", cs[64];
	int k;

	cb_probe_paths(&p);
	if (!p.ok) {
		cb_warn("--require user: cannot tell which path a clock read takes here: %s", p.reason);
		return CB_EXIT_CANNOT;
	}
	for (k = 0; k < cb_nclocks; k++)
		if ((o->clocks & (1u << k)) && p.vdso[k] != CB_PATH_USER)
			cb_append(bad, sizeof bad, "%s%s (path %s)", bad[0] ? ", " : "", cb_clocks[k].name,
				  cb_path_names[p.vdso[k]]);
	if (!bad[0])
		return CB_EXIT_OK;
	if (cb_current_clocksource(cs, sizeof cs) < 0)
		snprintf(cs, sizeof cs, "unknown");
	cb_warn("not read in user space: %s; clocksource %s%s", bad, cs,
		p.vdso_present ? "" : "; this process has no vDSO");
	return CB_EXIT_FAIL;
}

int clockbench_main(int argc, char **argv)
{
	static struct cb_opts o;
	static struct cb_report r;
	enum cb_format fmts[3];
	cpu_set_t saved;
	enum cb_parsed what;
	int rc, i, n = 0, failed = 0;
	double tpn;
	char cs[64];

	what = cb_parse_opts(&o, argc, argv);
	if (what != CB_PARSED_RUN)
		return cb_parsed_status(what);
	if (cb_progress_setup() < 0)
		return CB_EXIT_USAGE;
	/* Every output is checked, and created as a temporary, before any
	 * measuring: a bad path fails in a second, not after the run. */
	if ((rc = cb_outputs_check(&o)))
		return rc;
	if (o.dry_run)
		return CB_EXIT_OK;
	if (o.require_user)
		return require_user(&o);
	if (cb_refuse_unsettled && cb_current_clocksource(cs, sizeof cs) == 0 && cb_clocksource_unsettled(cs)) {
		cb_warn("clocksource '%s': the kernel has not settled on a clocksource yet (tsc-early, jiffies "
			"and refined-jiffies are its stand-ins while it boots); not measuring", cs);
		return CB_EXIT_FAIL;
	}
	memset(&r, 0, sizeof r);
	r.opts = &o;
	if (o.output)
		fmts[n++] = o.format;
	if (o.json_out)
		fmts[n++] = CB_JSON;
	if (o.csv_out)
		fmts[n++] = CB_CSV;
	if (cb_outputs_open(&o) < 0)
		return CB_EXIT_FAIL;

	cb_iso_time(r.ctx.start, sizeof r.ctx.start);
	cb_context_collect(&r.ctx);
	r.ctx.cpus_allowed = o.ncpus;
	if (sched_getaffinity(0, sizeof saved, &saved) < 0 || cb_pin(o.cpus[0]) < 0) {
		failed = 1;
		goto done;
	}
	tpn = cb_tsc_calibrate(250);
	if (tpn <= 0) {
		cb_warn("TSC calibration against CLOCK_MONOTONIC_RAW failed");
		failed = 1;
		goto done;
	}
	r.ctx.tsc_per_ns = tpn;
	cb_probe_paths(&r.probe);
	if (!r.probe.ok)
		cb_warn("path check unavailable: %s", r.probe.reason);
	if (o.cost && measure(&r, &o, tpn) < 0)
		failed = 1;
	sched_setaffinity(0, sizeof saved, &saved);
	if (!failed && workloads(&r, &o, tpn) < 0)
		failed = 1;
	if (!failed && checks(&r, &o, tpn) < 0)
		failed = 1;
	/* What was measured must still be what the labels say. */
	cb_current_clocksource(r.ctx.clocksource_end, sizeof r.ctx.clocksource_end);
	cb_probe_paths(&r.probe_end);
	r.have_probe_end = 1;
	cb_report_changes(&r);
	if (r.changed.clocksource || r.changed.path)
		cb_warn("CHANGED DURING THE RUN: %s", r.changed.detail);
	cb_iso_time(r.ctx.end, sizeof r.ctx.end);

done:
	cb_progress_end();
	/* Every file written first, then all put in place: together or none. */
	for (i = 0; !failed && i < n; i++)
		if (emit(&r, fmts[i], i) < 0)
			failed = 1;
	if (failed)
		cb_outputs_abort();
	else if (n && cb_outputs_place(o.force) < 0)
		failed = 1;
	if (!failed && !o.output && emit(&r, o.format, -1) < 0)
		failed = 1;
	for (i = 0; i < r.ncells; i++)
		free(r.cells[i].ovh);
	free(r.cells);
	if (failed)
		return CB_EXIT_FAIL;
	return r.watchdog && r.watchdog->unavailable[0] ? CB_EXIT_CANNOT : CB_EXIT_OK;
}
