/* unit.c: TAP tests of /init's kernel-log verdicts on the host, linked with
 * the engine.  `unit frames` writes instead a hello and a result frame
 * whose kernel lines hold hostile bytes, for the host's frame reader to
 * check (tests/guest/unit.t). */
#include "facts.h"
#include "../tap.h"
#include "frame.h"
#include "params.h"

#include <stdlib.h>
#include <string.h>


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
	struct gf_facts g = {
		.clocksource_before = "kvm-clock", .channel = "ttyS1", .engine_argv = argv, .engine_argc = 3,
		.uptime_ms_init = 700, .uptime_ms_engine_start = 710, .uptime_ms_engine_end = 900, .log = &lf,
	};
	size_t len;
	char *doc;

	lf.source = "klogctl";
	hostile(&lf, more);
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
	   "clockbench.workload=LIST is kept for --workload");
	ok(params_parse(wlbad, &q, err, sizeof err) && !strcmp(err, "clockbench.workload=all;reboot: bad value"),
	   "a workload list with a character outside [A-Za-z0-9,._-] is refused, named");
	char longname[] = "clockbench.channel=ttyS1234567890123456789012345678";
	ok(!params_channel(longname, name, sizeof name) && params_parse(longname, &p, err, sizeof err),
	   "a channel name of 32 characters is refused");
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
	return done_testing();
}
