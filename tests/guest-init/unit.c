/* unit.c: TAP tests of /init's kernel-log verdicts and its clocksource
 * wait (fake sysfs files, kernel log and clock) on the host, linked with
 * the engine.  `unit frames` writes instead a hello and a result frame
 * whose kernel lines hold hostile bytes, for the host's frame reader to
 * check (tests/guest-init/unit.t). */
#include "facts.h"
#include "../lib/tap.h"
#include "frame.h"
#include "params.h"
#include "settle.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


/* The hostile lines: kept by the log filter, each holding bytes a strict
 * UTF-8 decoder refuses; unit.t knows them by their order. */
static void hostile(struct gf_log *lf, int more)
{
	char cut[GF_LINE_MAX + 8];

	gf_log_line(lf, "tsc: Detected 2000.000 MHz \xff\xc3\x28 processor");
	gf_log_line(lf, "clocksource: Switched to clocksource kvm-clock \xc3");
	/* "\xc3\xa9" (e-acute) straddles the cut at GF_LINE_MAX - 1 bytes. */
	memset(cut, 'x', sizeof cut);
	memcpy(cut, "kvm-clock: ", 11);
	memcpy(cut + GF_LINE_MAX - 2, "\xc3\xa9 end", 7);
	gf_log_line(lf, cut);
	if (!more)
		return;
	gf_log_line(lf, "kvm-clock: surrogate \xed\xa0\x80 overlong \xe0\x80\xaf too big \xf4\x90\x80\x80");
	gf_log_line(lf, "kvm-clock: past f4 \xf5\x80\x80\x80 and ff \xff\x80\x80");
}

static int frames(int more)
{
	static struct gf_log lf;
	static char *argv[] = { "clockbench", "--format", "json" };
	static const char bench[] = "{\"schema\":\"clockbench/1\"}";
	struct frame_chan c = { .fd = 1 };
	static struct settle sw;
	struct gf_facts g = {
		.clocksource_before = "kvm-clock", .settle = &sw, .channel = "ttyS1", .engine_argv = argv, .engine_argc = 3,
		.uptime_ms_init = 700, .uptime_ms_engine_start = 710, .uptime_ms_engine_end = 900, .log = &lf,
	};
	size_t len;
	char *doc;

	lf.source = "klogctl";
	hostile(&lf, more);
	settle_begin(&sw, 100, SETTLE_LIMIT_MS, SETTLE_QUIET_MS);
	settle_look(&sw, 100, "tsc-early", "tsc-early hpet acpi_pm");
	settle_log_line(&sw, "tsc: Refined TSC clocksource calibration: 2445.382 MHz");
	settle_look(&sw, 800, "tsc", "tsc hpet acpi_pm");
	settle_decide(&sw);
	doc = gf_result_doc(&g, bench, sizeof bench - 1, &len);
	if (!doc || frame_hello(&c, 700) || frame_send(&c, "result", doc, len)) {
		perror("unit frames");
		return 1;
	}
	free(doc);
	return 0;
}

/* /init's parameters; the channel it opens first is the one the parse
 * keeps (fuzz/regressions/params). */
static void params_tests(void)
{
	char line[] = "console=ttyS0 panic=-1 quiet clockbench.channel=ttyS1 clockbench.cost=0 "
		      "clockbench.duration=0.05\tclockbench.method=vdso,syscall\n";
	char twice[] = "clockbench.channel=ttyS1 clockbench.channel=ttyS2", bad[] = "clockbench.clock=-x";
	char err[128], name[PARAMS_NAME_MAX];
	struct params p = { .channel = "ttyS1", .cost = 1 };

	ok(!params_parse(line, &p, err, sizeof err) && !strcmp(p.duration, "0.05") && !strcmp(p.method, "vdso,syscall") &&
	   !p.cost && !p.threads, "the launcher's words parse");
	ok(params_parse(bad, &p, err, sizeof err) && !strcmp(err, "clockbench.clock=-x: bad value"),
	   "a value that could read as an option is refused, named");
	ok(!strcmp(params_channel(twice, name, sizeof name), "ttyS2") && !params_parse(twice, &p, err, sizeof err) &&
	   !strcmp(p.channel, "ttyS2"), "two channel words: the last, both before and after parsing");
	ok(!params_channel("quiet xclockbench.channel=ttyS2", name, sizeof name), "a channel word inside another word is none");
	char wl[] = "clockbench.workload=tcp-stream,timer clockbench.cost=0", wlbad[] = "clockbench.workload=all;reboot";
	struct params q = { .cost = 1 };
	ok(!params_parse(wl, &q, err, sizeof err) && !strcmp(q.workload, "tcp-stream,timer") && !q.cost,
	   "clockbench.workload=LIST is kept for --workloads");
	ok(params_parse(wlbad, &q, err, sizeof err) && !strcmp(err, "clockbench.workload=all;reboot: bad value"),
	   "a workload list with a character outside [A-Za-z0-9,._-] is refused, named");
	char longname[] = "clockbench.channel=ttyS1234567890123456789012345678";
	ok(!params_channel(longname, name, sizeof name) && params_parse(longname, &p, err, sizeof err),
	   "a channel name of 32 characters is refused");
	char rep[] = "clockbench.repeat=1", repbad[] = "clockbench.repeat=2";
	struct params rp = { 0 };
	ok(!params_parse(rep, &rp, err, sizeof err) && rp.repeat == 1 && params_parse(repbad, &rp, err, sizeof err) &&
	   !strcmp(err, "clockbench.repeat=2: expected 0 or 1"), "clockbench.repeat=1 kept, =2 refused");
	char s0[] = "clockbench.settle=0", s60[] = "clockbench.settle=60";
	struct params r = { 0 };
	ok(!params_parse(s0, &r, err, sizeof err) && !strcmp(r.settle, "0") && !params_parse(s60, &r, err, sizeof err) &&
	   !strcmp(r.settle, "60"), "clockbench.settle=0 and =60 are kept");
	static const char *const sbad[] = { "61", "1.5", "007", "99999999999999999999" };
	int refused = 0;
	for (size_t i = 0; i < sizeof sbad / sizeof *sbad; i++) {
		char w[64], want[128];
		snprintf(w, sizeof w, "clockbench.settle=%s", sbad[i]);
		snprintf(want, sizeof want, "clockbench.settle=%s: expected whole seconds from 0 to 60", sbad[i]);
		refused += params_parse(w, &r, err, sizeof err) && !strcmp(err, want);
	}
	ok(refused == 4, "clockbench.settle=61, 1.5, 007, a 20-digit number: refused, named");
}

/* ---- the clocksource wait, on a fake timeline ---- */

#define K(msg) "6,1,1,-;" msg "\n" /* one /dev/kmsg record */
#define GONE "-"                    /* the sysfs file removed */

/* At ms `at` the kernel shows cur and avail (NULL: as before) and logs
 * the raw bytes log (NULL: nothing). */
struct ev {
	long at;
	const char *cur, *avail, *log;
};

/* One case: its timeline, its limit, and how the wait must end. */
struct scase {
	const char *name;
	long limit;
	struct ev ev[4];
	enum settle_end end;
	long ms;
	const char *from, *to;
	int refined;          /* -1: either */
	const char *switched; /* the log's last switch; NULL: either */
};

static const struct scase scases[] = {
	{ "TCG 1 vCPU: tsc-early until the refined calibration switches to tsc", SETTLE_LIMIT_MS,
	  { { 0, "tsc-early", "tsc-early hpet acpi_pm ", K("tsc: Detected 2445.412 MHz processor") K("clocksource: Switched to clocksource tsc-early") },
	    { 700, "tsc", "tsc hpet acpi_pm ", K("tsc: Refined TSC clocksource calibration: 2445.382 MHz") K("clocksource: Switched to clocksource tsc") } },
	  SETTLE_SETTLED, 700, "tsc-early", "tsc", 1, "tsc" },
	{ "tsc current but tsc-early not yet unregistered: still waiting", SETTLE_LIMIT_MS,
	  { { 0, "tsc-early", "tsc-early hpet acpi_pm", K("tsc: Detected 2445.412 MHz processor") },
	    { 700, "tsc", "tsc-early tsc hpet acpi_pm", K("clocksource: Switched to clocksource tsc") },
	    { 800, NULL, "tsc hpet acpi_pm", NULL } },
	  SETTLE_SETTLED, 800, "tsc-early", "tsc", 0, NULL },
	{ "kvm-clock from the start: no wait", SETTLE_LIMIT_MS,
	  { { 0, "kvm-clock", "kvm-clock tsc hpet acpi_pm", K("clocksource: Switched to clocksource kvm-clock") } },
	  SETTLE_SETTLED, 0, "kvm-clock", "kvm-clock", 0, NULL },
	{ "tsc=unstable: hpet from the start, no wait", SETTLE_LIMIT_MS,
	  { { 0, "hpet", "hpet acpi_pm", K("tsc: Detected 2445.412 MHz processor") K("tsc: Marking TSC unstable due to boot parameter") } },
	  SETTLE_SETTLED, 0, "hpet", "hpet", 0, NULL },
	{ "TCG 2 vCPUs: TSCs unsynchronized, hpet, no wait", SETTLE_LIMIT_MS,
	  { { 0, "hpet", "hpet acpi_pm", K("tsc: Detected 2445.404 MHz processor") K("tsc: Marking TSC unstable due to TSCs unsynchronized") } },
	  SETTLE_SETTLED, 0, "hpet", "hpet", 0, NULL },
	{ "microvm: refined-jiffies and nothing pending: quiet after 2 s", SETTLE_LIMIT_MS,
	  { { 0, "refined-jiffies", "refined-jiffies jiffies", K("tsc: Marking TSC unstable due to could not calculate TSC khz") } },
	  SETTLE_QUIET, SETTLE_QUIET_MS, "refined-jiffies", "refined-jiffies", 0, NULL },
	{ "a refinement that never ends (tsc-early listed for good): the limit, not quiet", SETTLE_LIMIT_MS,
	  { { 0, "tsc-early", "tsc-early hpet acpi_pm", K("tsc: Detected 2445.412 MHz processor") } },
	  SETTLE_TIMEOUT, SETTLE_LIMIT_MS, "tsc-early", "tsc-early", 0, NULL },
	{ "a kernel without tsc-early: hpet until tsc registers", SETTLE_LIMIT_MS,
	  { { 0, "hpet", "hpet acpi_pm", K("tsc: Detected 2445.412 MHz processor") },
	    { 1200, "tsc", "tsc hpet acpi_pm", K("tsc: Refined TSC clocksource calibration: 2445.382 MHz") } },
	  SETTLE_SETTLED, 1200, "hpet", "tsc", 1, NULL },
	{ "a kernel without tsc-early whose tsc never comes: quiet after 2 s", SETTLE_LIMIT_MS,
	  { { 0, "hpet", "hpet acpi_pm", K("tsc: Detected 2445.412 MHz processor") } },
	  SETTLE_QUIET, SETTLE_QUIET_MS, "hpet", "hpet", 0, NULL },
	{ "a change restarts the quiet period", SETTLE_LIMIT_MS,
	  { { 0, "jiffies", "jiffies", NULL }, { 1500, "refined-jiffies", "refined-jiffies jiffies", NULL } },
	  SETTLE_QUIET, 1500 + SETTLE_QUIET_MS, "jiffies", "refined-jiffies", 0, NULL },
	{ "the refinement finds the TSC unstable: tsc-early to hpet", SETTLE_LIMIT_MS,
	  { { 0, "tsc-early", "tsc-early hpet acpi_pm", NULL },
	    { 900, "hpet", "hpet acpi_pm", K("clocksource: Marking clocksource 'tsc-early' as unstable because the skew is too large:") K("tsc: Marking TSC unstable due to clocksource watchdog") } },
	  SETTLE_SETTLED, 900, "tsc-early", "hpet", 0, NULL },
	{ "clocksource=hpet with tsc-early listed: waits for the refinement all the same", SETTLE_LIMIT_MS,
	  { { 0, "hpet", "tsc-early hpet acpi_pm", NULL }, { 900, NULL, "tsc hpet acpi_pm", NULL } },
	  SETTLE_SETTLED, 900, "hpet", "hpet", 0, NULL },
	{ "no current_clocksource: unreadable, no wait", SETTLE_LIMIT_MS, { { 0, GONE, GONE, NULL } },
	  SETTLE_UNREADABLE, 0, NULL, NULL, 0, NULL },
	{ "a limit of 0 (clockbench.settle=0): off, no look", 0, { { 0, "tsc-early", "tsc-early", NULL } },
	  SETTLE_OFF, 0, NULL, NULL, 0, NULL },
	{ "a shorter limit ends a pending wait sooner", 3000, { { 0, "tsc-early", "tsc-early", NULL } },
	  SETTLE_TIMEOUT, 3000, "tsc-early", "tsc-early", 0, NULL },
	{ "a record cut across two reads, a continuation line ignored", SETTLE_LIMIT_MS,
	  { { 0, "tsc-early", "tsc-early hpet", "6,1,1,-;tsc: Refined TSC clock" },
	    { 100, NULL, NULL, "source calibration: 2445.382 MHz\n" },
	    { 200, "tsc", "tsc hpet", K("clocksource: Switched to clocksource tsc") " DEVICE=+x;Switched to clocksource evil\n" } },
	  SETTLE_SETTLED, 200, "tsc-early", "tsc", 1, "tsc" },
};

/* The fake kernel: a sysfs folder, a kmsg file, a clock. */
struct fake {
	const struct scase *c;
	char dir[64], log[96];
	int wfd, next;
	long t0, t; /* the case's start, now */
};

static void put(const char *dir, const char *name, const char *v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (!strcmp(v, GONE)) {
		unlink(path);
		return;
	}
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%s\n", v);
		fclose(f);
	}
}

/* Applies the timeline's events up to now. */
static void fake_apply(struct fake *k)
{
	/* the unused events of a case are all zero: the first of them ends it */
	for (; k->next < 4 && (k->next == 0 || k->c->ev[k->next].at) && k->t0 + k->c->ev[k->next].at <= k->t; k->next++) {
		const struct ev *e = &k->c->ev[k->next];
		if (e->cur)
			put(k->dir, "current_clocksource", e->cur);
		if (e->avail)
			put(k->dir, "available_clocksource", e->avail);
		if (e->log && write(k->wfd, e->log, strlen(e->log)) < 0)
			perror("write");
	}
}

static long fake_now(void *arg)
{
	return ((struct fake *)arg)->t;
}

static void fake_nap(void *arg, long ms)
{
	struct fake *k = arg;
	k->t += ms;
	fake_apply(k);
}

static int same(const char *a, const char *b)
{
	return b ? !strcmp(a, b) : !*a;
}

static void settle_tests(void)
{
	char what[300];

	for (size_t i = 0; i < sizeof scases / sizeof *scases; i++) {
		const struct scase *c = &scases[i];
		struct fake k = { .c = c, .t0 = 5000, .t = 5000 };
		static struct settle s;
		struct settle_io io = { k.dir, -1, fake_now, fake_nap, &k };

		snprintf(k.dir, sizeof k.dir, "/tmp/cb-settle.XXXXXX");
		if (!mkdtemp(k.dir)) {
			perror("mkdtemp");
			exit(1);
		}
		snprintf(k.log, sizeof k.log, "%s/kmsg", k.dir);
		k.wfd = open(k.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		io.log_fd = open(k.log, O_RDONLY | O_CLOEXEC);
		fake_apply(&k);
		settle_wait(&s, &io, c->limit, SETTLE_QUIET_MS);
		snprintf(what, sizeof what, "%s: %s after %ld ms, %s -> %s", c->name, settle_end_name(s.end),
			 s.last_ms - s.start_ms, s.from[0] ? s.from : "-", s.current[0] ? s.current : "-");
		ok(s.end == c->end && s.last_ms - s.start_ms == c->ms && same(s.from, c->from) && same(s.current, c->to) &&
		   (c->refined < 0 || s.refined == c->refined) && (!c->switched || !strcmp(s.switched_to, c->switched)), what);
		close(k.wfd);
		close(io.log_fd);
		unlink(k.log);
		put(k.dir, "current_clocksource", GONE);
		put(k.dir, "available_clocksource", GONE);
		rmdir(k.dir);
	}
}

int main(int argc, char **argv)
{
	static struct gf_log lf, many, none;
	char line[GF_LINE_MAX];

	if (argc >= 2 && !strcmp(argv[1], "frames"))
		return frames(argc == 3 && !strcmp(argv[2], "more"));

	gf_log_line(&lf, "Hypervisor detected: KVM");
	gf_log_line(&lf, "kvm-clock: Using msrs 4b564d01 and 4b564d00");
	gf_log_line(&lf, "random: crng init done");
	gf_log_line(&lf, "sched_clock: Marking stable (1234, -5)->(2345, -6)");
	gf_log_line(&lf, "clocksource: Switched to clocksource kvm-clock");
	gf_log_line(&lf, "clocksource: Marking clocksource 'tsc' as unstable because the skew is too large:");
	gf_log_line(&lf, "clocksource: Switched to clocksource hpet");
	ok(lf.n == 6 && !strcmp(lf.line[1], "kvm-clock: Using msrs 4b564d01 and 4b564d00"),
	   "clock lines kept in order, others dropped");
	ok(lf.kvmclock && lf.sched_stable && lf.tsc_unstable && !lf.tsc_warp, "verdicts: kvm-clock, sched_clock stable, TSC unstable, no warp");
	ok(!strcmp(lf.switched_to, "hpet"), "switched_to is the last switch");

	gf_log_line(&none, "Marking TSC unstable due to clocksource watchdog");
	gf_log_line(&none, "Measured 4000 cycles TSC warp between CPUs, turning off TSC clock.");
	ok(none.tsc_unstable && none.tsc_warp && !none.kvmclock && !none.switched_to[0], "the kernel's other unstable line and a warp");

	for (int i = 0; i < GF_MAX_LINES + 10; i++) {
		snprintf(line, sizeof line, "kvm-clock: cpu %d", i);
		gf_log_line(&many, line);
	}
	ok(many.n == GF_MAX_LINES && !strcmp(many.line[GF_MAX_LINES - 1], "kvm-clock: cpu 63"),
	   "at most 64 lines, the first ones");

	memset(&lf, 0, sizeof lf);
	hostile(&lf, 1);
	ok(lf.n == 5 && strlen(lf.line[2]) == GF_LINE_MAX - 1, "lines with hostile bytes kept, a long one cut");
	params_tests();
	settle_tests();
	return done_testing();
}
