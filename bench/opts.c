/* opts.c: command line to struct cb_opts, with every number range-checked. */
#include "clockbench.h"
#include "duration.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* The clocks and methods are names.h's lines. */
const struct cb_clock cb_clocks[] = {
#define CB_CLOCK(name, id) { name, id },
#include "names.h"
};
const int cb_nclocks = (int)(sizeof cb_clocks / sizeof cb_clocks[0]);
/* The names alone, as the option table's lists are. */
static const char *const clock_names[] = {
#define CB_CLOCK(name, id) name,
#include "names.h"
};
/* --clocks's line of --help. */
#define CB_CLOCK(name, id) " " name
static const char clock_help[] = "clocks:"
#include "names.h"
	", or all";
const char *const cb_method_names[CB_NMETHODS] = {
#define CB_METHOD(member, name, clocked) name,
#include "names.h"
};
static const unsigned char method_clocked[CB_NMETHODS] = {
#define CB_METHOD(member, name, clocked) clocked,
#include "names.h"
};

int cb_method_clocked(enum cb_method m)
{
	return (unsigned)m < CB_NMETHODS && method_clocked[m];
}

static int bad(const char *opt, const char *val, const char *why)
{
	/* a value cut at 80 bytes: the line stays one line of a screen */
	fprintf(stderr, "clockbench: %s '%.80s%s': %s (see --help)\n", opt, val, strlen(val) > 80 ? "..." : "", why);
	return CB_EXIT_USAGE;
}

static int bad_opt(const char *opt, const char *why)
{
	fprintf(stderr, "clockbench: %s: %s (see --help)\n", opt, why);
	return CB_EXIT_USAGE;
}

/* The test hooks, read from the environment once per parse: never options,
 * so that no user meets them in --help or in a command line.
 *   CLOCKBENCH_TEST_CLOCKSOURCE_FILE  read as the current clocksource
 *   CLOCKBENCH_TEST_RTC_DEVICE        read as the RTC (a FIFO of 8-byte records)
 *   CLOCKBENCH_TEST_STALL=1           the workloads' receiver and server never answer
 *   CLOCKBENCH_TEST_WATCHDOG_FILE     a delay schedule read as the watchdog
 *                                     (bench/watchdog.c)
 * Returns 0, or CB_EXIT_USAGE after one line. */
static int test_hooks(struct cb_opts *o)
{
	const char *v;

	if ((v = getenv("CLOCKBENCH_TEST_CLOCKSOURCE_FILE")) && *v)
		cb_clocksource_file = v;
	if ((v = getenv("CLOCKBENCH_TEST_RTC_DEVICE")) && *v)
		o->test_rtc_device = v;
	if ((v = getenv("CLOCKBENCH_TEST_WATCHDOG_FILE")) && *v)
		o->test_watchdog_file = v;
	if ((v = getenv("CLOCKBENCH_TEST_STALL")) && *v && strcmp(v, "0")) {
		if (strcmp(v, "1"))
			return bad("CLOCKBENCH_TEST_STALL", v, "expected 1 or 0");
		o->test_stall = 1;
	}
	return 0;
}

/* Parses an unsigned decimal in [lo, hi]; -1 if not one. */
static long long parse_num(const char *s, long long lo, long long hi)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < (unsigned long long)lo || v > (unsigned long long)hi)
		return -1;
	return (long long)v;
}

long long cb_parse_bytes(const char *s, long long lo, long long hi)
{
	char digits[32];
	size_t n = strlen(s);
	long long v, unit = 1;

	if (n && (s[n - 1] == 'K' || s[n - 1] == 'M')) {
		unit = s[n - 1] == 'K' ? 1024 : 1024 * 1024;
		n--;
	}
	if (!n || n >= sizeof digits)
		return -1;
	memcpy(digits, s, n);
	digits[n] = 0;
	v = parse_num(digits, 0, hi);
	if (v < 0 || v * unit < lo || v * unit > hi)
		return -1;
	return v * unit;
}

/* 1 if the comma list arg names w itself ("all" does not). */
static int named(const char *arg, const char *w)
{
	size_t n = strlen(w);
	const char *p;

	for (p = arg; (p = strstr(p, w)); p += n)
		if ((p == arg || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

/* Returns 0 with *mask set, or CB_EXIT_USAGE after one line. */
static int parse_names(const char *opt, const char *arg, const char *const *names, int n,
		       unsigned *mask)
{
	char buf[512], *save = NULL, *tok;
	int i;

	if (strlen(arg) >= sizeof buf || !*arg)
		return bad(opt, arg, "expected a comma-separated list");
	strcpy(buf, arg);
	*mask = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "all")) {
			*mask = (1u << n) - 1;
			continue;
		}
		for (i = 0; i < n && strcmp(tok, names[i]); i++)
			;
		if (i == n) {
			fprintf(stderr, "clockbench: %s: unknown name '%.80s%s' (see --help)\n", opt, tok,
				strlen(tok) > 80 ? "..." : "");
			return CB_EXIT_USAGE;
		}
		*mask |= 1u << i;
	}
	if (!*mask)
		return bad(opt, arg, "expected a comma-separated list");
	return 0;
}

/* Parses "1,2,4", "1-8", "max", "sweep" into a sorted set within [lo, max].
 * Returns 0, or CB_EXIT_USAGE after one line. */
static int parse_list(const char *opt, const char *arg, int lo, int max, int allow_words,
		      unsigned char *set)
{
	char buf[1024], *save = NULL, *tok;
	long long a, b;

	if (strlen(arg) >= sizeof buf || !*arg)
		return bad(opt, arg, "expected a list such as 1,2,4 or 1-8");
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-');
		if (allow_words && !strcmp(tok, "max")) {
			set[max] = 1;
			continue;
		}
		if (allow_words && !strcmp(tok, "sweep")) {
			for (a = 1; a < max; a *= 2)
				set[a] = 1;
			set[max] = 1;
			continue;
		}
		if (dash) {
			*dash = '\0';
			a = parse_num(tok, 0, 1 << 30);
			b = allow_words && !strcmp(dash + 1, "max") ? max : parse_num(dash + 1, 0, 1 << 30);
			*dash = '-';
			if (a < 0 || b < 0 || a > b)
				return bad(opt, tok, "not a range such as 1-8");
		} else {
			a = b = parse_num(tok, 0, 1 << 30);
			if (a < 0)
				return bad(opt, tok, "not a number");
		}
		if (a < lo)
			return bad(opt, tok, lo ? "must be at least 1" : "out of range");
		if (b > max) {
			char why[96];
			if (allow_words)
				snprintf(why, sizeof why, "only %d CPUs are allowed", max);
			else
				snprintf(why, sizeof why, "CPU %lld is not online or allowed", b);
			return bad(opt, tok, why);
		}
		for (; a <= b; a++)
			set[a] = 1;
	}
	return 0;
}


/* ---- the option table: parsing, ranges and --help from one place ---- */

/* What a parse has seen beyond struct cb_opts: the lists judged once all
 * options are in, and which options were given. */
struct parse {
	const char *threads_arg, *cpus_arg, *dry_cpus_arg, *duration_arg, *limit_arg;
	int dry_cpus, probe, stop; /* stop: --help or --version printed */
};

/* A value as the table's kind parsed it. */
union val {
	long long n;       /* K_UINT, K_BYTES */
	double sec;        /* K_DURATION */
	unsigned mask;     /* K_NAMES: bits over names[] */
	int choice;        /* K_CHOICE: index into names[] */
	const char *s;     /* K_STRING */
};

enum kind { K_FLAG, K_UINT, K_BYTES, K_DURATION, K_NAMES, K_CHOICE, K_STRING };

/* One option (fio's struct fio_option): its names, its value's kind and
 * range, what it sets, and its --help text (one paragraph, wrapped when
 * printed; the default and the range are added from the fields). */
struct opt {
	const char *name;
	char short_name;          /* 0: none */
	const char *metavar;      /* NULL: takes no value */
	enum kind kind;
	long long lo, hi;         /* K_UINT, K_BYTES; K_DURATION: hi seconds */
	const char *const *names; /* K_NAMES, K_CHOICE */
	int nnames;
	const char *dflt;         /* for --help; NULL: none said */
	const char *help;         /* NULL: not shown (the old test-hook spellings) */
	/* stores v; returns 0, or an exit status after one line */
	int (*set)(struct cb_opts *o, struct parse *p, const char *arg, union val v);
};

static const char *const check_names[] = { "warps", "tsc", "none", "tsc-rate", "watchdog" };
static const char *const workload_names[] = {
#define CB_WORKLOAD(member, name, unit, short_unit, latency) name,
#include "names.h"
	"none"
};
static const char *const format_names[] = { "text", "json", "csv" };
static const char *const require_names[] = { "user" };
/* util.c's modes, in its order after "auto" (cb_progress_setup) */
static const char *const progress_names[] = { "auto", "none", "steps", "tty", "cells" };

static int set_clock(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->clocks = v.mask; return 0; }
static int set_method(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->methods = v.mask; return 0; }
static int set_threads(struct cb_opts *o, struct parse *p, const char *arg, union val v) { p->threads_arg = arg; return 0; }
static int set_cpus(struct cb_opts *o, struct parse *p, const char *arg, union val v) { p->cpus_arg = arg; return 0; }
static int set_batch(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->batch = (unsigned)v.n; return 0; }
static int set_rounds(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->tsc_rounds = (unsigned)v.n; return 0; }
static int set_msg(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->msg_size = (unsigned)v.n; return 0; }
static int set_load(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->load = 1; return 0; }
static int set_nocost(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->cost = 0; return 0; }
static int set_require(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->require_user = 1; return 0; }
static int set_format(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->format = (enum cb_format)v.choice; return 0; }
static int set_progress(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->progress = (int)v.choice; return 0; }
static int set_output(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->output = arg; return 0; }
static int set_json(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->json_out = arg; return 0; }
static int set_csv(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->csv_out = arg; return 0; }
static int set_force(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->force = 1; return 0; }
static int set_dry(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->dry_run = 1; return 0; }
static int set_quiet(struct cb_opts *o, struct parse *p, const char *arg, union val v) { o->quiet = 1; return 0; }

static int set_duration(struct cb_opts *o, struct parse *p, const char *arg, union val v)
{
	o->duration = v.sec;
	p->duration_arg = arg;
	return 0;
}

static int set_check(struct cb_opts *o, struct parse *p, const char *arg, union val v)
{
	unsigned mask = !strcmp(arg, "all") ? 3 : v.mask;

	o->check_warps = !!(mask & 1);
	o->check_tsc = !!(mask & 2);
	o->check_tsc_rate = named(arg, "tsc-rate"); /* not in "all" */
	o->check_watchdog = named(arg, "watchdog"); /* nor this */
	return 0;
}

static int set_limit(struct cb_opts *o, struct parse *p, const char *arg, union val v)
{
	o->watchdog_limit_ns = (unsigned long long)v.n;
	p->limit_arg = arg;
	return 0;
}

static int set_workload(struct cb_opts *o, struct parse *p, const char *arg, union val v)
{
	o->workloads = v.mask & ((1u << CB_NWORKLOADS) - 1); /* "none" adds nothing */
	return 0;
}

static int set_probe(struct cb_opts *o, struct parse *p, const char *arg, union val v)
{
	o->cost = 0;
	o->check_warps = o->check_tsc = o->check_tsc_rate = o->check_watchdog = 0;
	o->workloads = 0;
	p->probe = 1;
	return 0;
}

static int set_dry_cpus(struct cb_opts *o, struct parse *p, const char *arg, union val v)
{
	p->dry_cpus = (int)v.n;
	p->dry_cpus_arg = arg;
	return 0;
}

static void print_usage(void);

static int set_help(struct cb_opts *o, struct parse *p, const char *arg, union val v)
{
	print_usage();
	p->stop = 1;
	return 0;
}

static int set_version(struct cb_opts *o, struct parse *p, const char *arg, union val v)
{
	printf("clockbench %s\n", CB_VERSION);
	p->stop = 1;
	return 0;
}

#define NAMES(a) a, (int)(sizeof a / sizeof a[0])

static const struct opt opts[] = {
	{ "clocks", 'c', "LIST", K_NAMES, 0, 0, NAMES(clock_names), "realtime,monotonic",
	  clock_help, set_clock },
	{ "methods", 'm', "LIST", K_NAMES, 0, 0, cb_method_names, CB_NMETHODS, "vdso,syscall,null,rdtsc",
	  "vdso (the C library's clock_gettime), syscall (the syscall instruction inside a function call, as a "
	  "vDSO fallback pays it), syscall-inline (the instruction inlined: kernel entry and exit alone), rdtsc, "
	  "rdtscp (baselines), null (getppid called as syscall calls clock_gettime; with syscall, also timed "
	  "between its batches: syscall's median less that is the kernel's own clock read, kernel_read_ns), or all",
	  set_method },
	{ "threads", 't', "LIST", K_STRING, 0, 0, NULL, 0, "1,max",
	  "thread counts: 1,2,4 or 1-8 or max or sweep (powers of two up to max, and max)", set_threads },
	{ "cpus", 'C', "LIST", K_STRING, 0, 0, NULL, 0, "all allowed", "CPUs to pin threads to, in order", set_cpus },
	{ "duration", 'd', "TIME", K_DURATION, 0, 3600, NULL, 0, "1",
	  "per cell and per check: seconds, or with a unit: " CB_DURATION_UNITS " (500ms, 2m, 1.5s)", set_duration },
	{ "batch", 'b', "N", K_UINT, 1, 1000000, NULL, 0, "automatic, ~2.5 us", "calls per timed batch", set_batch },
	{ "check", 0, "LIST", K_NAMES, 0, 0, NAMES(check_names), "none",
	  "also run checks, apart from the cost cells: warps (clock read backwards across CPUs), tsc (per-CPU TSC "
	  "offset from the first CPU), all (those two), none; tsc-rate, only by name: the TSC's rate against the "
	  "RTC's update interrupts (where there is one), CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW over --duration "
	  "(at least 5 s), and the kernel's NTP frequency correction; watchdog, only by name: the clocksource "
	  "watchdog's own readout (watchdog, TSC, watchdog, as the kernel reads them) timed from user space on the "
	  "first --cpus CPU for --duration: the HPET's main counter through /dev/hpet's mmap, else the ACPI PM "
	  "timer's I/O port (root); p50..p99.99 and max in ns, the share over --watchdog-limit, runs of slow "
	  "readouts, and the samples an interrupt or a context switch hit (this CPU's /proc/interrupts and "
	  "getrusage, per batch); the tail is an upper bound (user space cannot turn interrupts off); exit 3 where "
	  "neither device can be read", set_check },
	{ "watchdog-limit", 0, "NS", K_UINT, 1, 1000000000, NULL, 0, "125000, the limit of kernels 5.15 to 6.11",
	  "with --check watchdog: a readout slower than this is slow (the harness gives the running kernel's)",
	  set_limit },
	{ "load", 0, NULL, K_FLAG, 0, 0, NULL, 0, NULL,
	  "with --check watchdog: a memory-bandwidth loop on every other --cpus CPU while it runs", set_load },
	{ "tsc-rounds", 0, "N", K_UINT, 3000, 100000000, NULL, 0, "5000", "round trips per CPU in the TSC check",
	  set_rounds },
	{ "workloads", 0, "LIST", K_NAMES, 0, 0, NAMES(workload_names), "none",
	  "also run real work, after the cost cells: tcp-stream (loopback TCP, Gbit/s), tcp-rr (one-byte request "
	  "and response, transactions/s, round-trip latency), timer (50 us sleeps on the largest --threads count "
	  "of CPUs, wake-up latency), all, none; each for --duration, TCP pinned to the first two --cpus",
	  set_workload },
	{ "msg-size", 0, "BYTES", K_BYTES, 1, CB_MSG_SIZE_MAX, NULL, 0, "64K",
	  "tcp-stream's write size; K and M suffixes are KiB and MiB", set_msg },
	{ "no-cost", 0, NULL, K_FLAG, 0, 0, NULL, 0, NULL, "skip the cost cells (probe, workloads and checks only)",
	  set_nocost },
	{ "probe", 0, NULL, K_FLAG, 0, 0, NULL, 0, NULL, "only the path check: vDSO or syscall, per clock", set_probe },
	{ "require", 0, "user", K_CHOICE, 0, 0, NAMES(require_names), NULL,
	  "with --probe: a startup check that measures nothing and writes no report: exit 0 if every --clocks is "
	  "read in user space (the vDSO), else 1 with one line naming the clock, its path and the clocksource; 3 "
	  "if the path check cannot run here (in systemd: ExecStartPre=clockbench --probe --require user)",
	  set_require },
	{ "format", 'f', "FMT", K_CHOICE, 0, 0, NAMES(format_names), "text",
	  "text, json or csv for stdout or --output", set_format },
	{ "output", 'o', "FILE", K_STRING, 0, 0, NULL, 0, NULL, "write there instead of stdout", set_output },
	{ "json", 0, "FILE", K_STRING, 0, 0, NULL, 0, NULL, "also write the JSON report to FILE", set_json },
	{ "csv", 0, "FILE", K_STRING, 0, 0, NULL, 0, NULL,
	  "also write the CSV rows to FILE (each output is checked before measuring and must not exist; all of a "
	  "run's files appear together, or none does)", set_csv },
	{ "force", 0, NULL, K_FLAG, 0, 0, NULL, 0, NULL, "replace output files that exist", set_force },
	{ "dry-run", 0, NULL, K_FLAG, 0, 0, NULL, 0, NULL,
	  "check every option and output as a run would, then exit 0 without measuring or creating anything (the "
	  "clocksource is the run's to check: it may be switched in between)", set_dry },
	{ "dry-run-cpus", 0, "N", K_UINT, 1, CB_MAX_CPUS, NULL, 0, NULL,
	  "with --dry-run: judge --threads and --cpus against CPUs 0..N-1 (a guest's N vCPUs) instead of the CPUs "
	  "this process may use", set_dry_cpus },
	{ "quiet", 'q', NULL, K_FLAG, 0, 0, NULL, 0, NULL, "no progress on stderr (as --progress none)", set_quiet },
	{ "progress", 0, "MODE", K_CHOICE, 0, 0, NAMES(progress_names), "auto",
	  "progress on stderr: auto (redrawn in place on a terminal, a line a step otherwise), none, steps, tty, "
	  "cells (a line a cell)", set_progress },
	{ "help", 'h', NULL, K_FLAG, 0, 0, NULL, 0, NULL, "this text", set_help },
	{ "version", 'V', NULL, K_FLAG, 0, 0, NULL, 0, NULL, "the version", set_version },
};
#define NOPTS ((int)(sizeof opts / sizeof opts[0]))

static const char usage_head[] =
"Usage: clockbench [OPTION]...\n"
"   or: clockbench VERB [ARG]...\n"
"Measure what a clock_gettime() call costs, per clock and per path, on 1..N\n"
"pinned threads; check which path a read really took; check the TSC.\n"
"The JSON report's schema: /usr/share/doc/clockbench/docs/schema.md.\n"
"\n"
"A verb runs the rest of the suite (the main job, the health check, the\n"
"reports, the watch...): 'clockbench help' lists the verbs.\n"
"\n"
"Options:\n";

static const char usage_tail[] =
"\n"
"Exit status:\n"
"  0  done\n"
"  1  run-time failure (also: an output that cannot be written, or a\n"
"     clocksource the kernel has not settled on: tsc-early, jiffies,\n"
"     refined-jiffies)\n"
"  2  usage error (also: one file given twice)\n"
"  3  the check asked for cannot be made here: --check watchdog with neither\n"
"     the HPET nor the ACPI PM timer readable (the report says why), or\n"
"     --probe --require user without a working path check\n";

/* A byte count as --msg-size takes it: 16M, 64K, or digits. */
static void bytes_text(char *buf, size_t n, long long v)
{
	if (v >= 1 << 20 && v % (1 << 20) == 0)
		snprintf(buf, n, "%lldM", v >> 20);
	else if (v >= 1024 && v % 1024 == 0)
		snprintf(buf, n, "%lldK", v >> 10);
	else
		snprintf(buf, n, "%lld", v);
}

/* The range of o in words, for --help and for errors ("" if none). */
static void range_text(const struct opt *o, char *buf, size_t n)
{
	char lo[32], hi[32];

	buf[0] = 0;
	switch (o->kind) {
	case K_UINT:
		snprintf(buf, n, "%lld to %lld", o->lo, o->hi);
		break;
	case K_BYTES:
		bytes_text(lo, sizeof lo, o->lo);
		bytes_text(hi, sizeof hi, o->hi);
		snprintf(buf, n, "%s to %s", lo, hi);
		break;
	case K_DURATION:
		snprintf(buf, n, "more than 0, at most %lld s", o->hi);
		if (o->hi % 3600 == 0)
			cb_append(buf, n, " (%lldh)", o->hi / 3600);
		break;
	default:
		break;
	}
}

/* Writes words to stdout from column col, wrapped before column 79. */
static void wrap(const char *text, int col)
{
	const char *p = text;
	int at = col;

	while (*p) {
		const char *e = p;
		int len;
		while (*e && *e != ' ')
			e++;
		len = (int)(e - p);
		if (at > col && at + 1 + len > 78) {
			printf("\n%*s", col, "");
			at = col;
		} else if (at > col) {
			putchar(' ');
			at++;
		}
		printf("%.*s", len, p);
		at += len;
		for (p = e; *p == ' '; p++)
			;
	}
	putchar('\n');
}

/* --help: each option of the table with its help, default and range. */
static void print_usage(void)
{
	char left[64], range[96], text[2048];
	int i;

	fputs(usage_head, stdout);
	for (i = 0; i < NOPTS; i++) {
		const struct opt *o = &opts[i];
		if (!o->help)
			continue;
		snprintf(left, sizeof left, "  %c%c%s--%s%s%s", o->short_name ? '-' : ' ', o->short_name ? o->short_name : ' ',
			 o->short_name ? ", " : "  ", o->name, o->metavar ? " " : "", o->metavar ? o->metavar : "");
		range_text(o, range, sizeof range);
		snprintf(text, sizeof text, "%s", o->help);
		if (o->dflt && range[0])
			cb_append(text, sizeof text, " (default: %s; %s)", o->dflt, range);
		else if (o->dflt)
			cb_append(text, sizeof text, " (default: %s)", o->dflt);
		else if (range[0])
			cb_append(text, sizeof text, " (%s)", range);
		if (strlen(left) > 21)
			printf("%s\n%23s", left, "");
		else
			printf("%-23s", left);
		wrap(text, 23);
	}
	fputs(usage_tail, stdout);
}

/* Parses arg by o's kind and range into *v.  Returns 0, or CB_EXIT_USAGE
 * after one line naming the value and the range. */
static int parse_value(const struct opt *o, const char *arg, union val *v)
{
	char opt[40], range[96], why[192];
	int i;

	snprintf(opt, sizeof opt, "--%s", o->name);
	range_text(o, range, sizeof range);
	switch (o->kind) {
	case K_FLAG:
		return 0;
	case K_UINT:
		if ((v->n = parse_num(arg, o->lo, o->hi)) < 0) {
			snprintf(why, sizeof why, "must be a whole number from %s", range);
			return bad(opt, arg, why);
		}
		return 0;
	case K_BYTES:
		if ((v->n = cb_parse_bytes(arg, o->lo, o->hi)) < 0) {
			snprintf(why, sizeof why, "must be a byte count from %s (K, M: KiB, MiB)", range);
			return bad(opt, arg, why);
		}
		return 0;
	case K_DURATION:
		if (cb_parse_duration(arg, &v->sec) < 0)
			return bad(opt, arg, "not a duration: seconds, or a number with a unit (" CB_DURATION_UNITS ")");
		/* after the unit: 2h is 7200 s, beyond the limit */
		if (v->sec <= 0)
			return bad(opt, arg, "must be more than 0 s");
		if (v->sec > (double)o->hi) {
			snprintf(why, sizeof why, "%.6g s is beyond the limit of %lld s", v->sec, o->hi);
			if (o->hi % 3600 == 0)
				cb_append(why, sizeof why, " (%lldh)", o->hi / 3600);
			return bad(opt, arg, why);
		}
		return 0;
	case K_NAMES:
		return parse_names(opt, arg, o->names, o->nnames, &v->mask);
	case K_CHOICE:
		for (i = 0; i < o->nnames && strcmp(arg, o->names[i]); i++)
			;
		if (i == o->nnames) {
			snprintf(why, sizeof why, "expected ");
			for (int k = 0; k < o->nnames; k++)
				cb_append(why, sizeof why, "%s%s", k == 0 ? "" : k == o->nnames - 1 ? " or " : ", ",
					  o->names[k]);
			return bad(opt, arg, why);
		}
		v->choice = i;
		return 0;
	case K_STRING:
		v->s = arg;
		return 0;
	}
	return 0;
}

/* The table as getopt_long's: each option's index in .val, offset past
 * the short letters' range. */
#define LONG_BASE 256

static void getopt_tables(struct option *lo, char *shorts, size_t n)
{
	size_t k = 0;
	int i;

	shorts[k++] = ':';
	for (i = 0; i < NOPTS; i++) {
		lo[i] = (struct option){ opts[i].name, opts[i].metavar ? required_argument : no_argument, NULL,
					 LONG_BASE + i };
		if (opts[i].short_name && k + 3 < n) {
			shorts[k++] = opts[i].short_name;
			if (opts[i].metavar)
				shorts[k++] = ':';
		}
	}
	lo[NOPTS] = (struct option){ NULL, 0, NULL, 0 };
	shorts[k] = 0;
}

/* The option for getopt_long's c: a long option's index, or a short letter. */
static const struct opt *opt_of(int c)
{
	int i;

	if (c >= LONG_BASE && c < LONG_BASE + NOPTS)
		return &opts[c - LONG_BASE];
	for (i = 0; i < NOPTS; i++)
		if (opts[i].short_name && opts[i].short_name == c)
			return &opts[i];
	return NULL;
}

/* Reads argv through the table.  Returns 0, or an exit status. */
static int read_argv(struct cb_opts *o, struct parse *p, int argc, char **argv)
{
	static struct option longopts[NOPTS + 1];
	static char shorts[2 * NOPTS + 2];
	const struct opt *op;
	union val v;
	int c, rc;

	getopt_tables(longopts, shorts, sizeof shorts);
	opterr = 0;
	/* 0, not 1: glibc and musl then also forget a cluster such as "-Vq"
	 * that an earlier call stopped inside (tests/bench/unit.c, fuzz/opts.c). */
	optind = 0;
	while ((c = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
		if (c == ':') {
			fprintf(stderr, "clockbench: option '%s' needs a value (see --help)\n", argv[optind - 1]);
			return CB_EXIT_USAGE;
		}
		if (c == '?' || !(op = opt_of(c))) {
			/* optopt: inside a cluster such as "-Zq", optind has not moved on */
			if (optopt)
				fprintf(stderr, "clockbench: unknown option '-%c' (see --help)\n", optopt);
			else
				fprintf(stderr, "clockbench: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return CB_EXIT_USAGE;
		}
		memset(&v, 0, sizeof v);
		if ((rc = parse_value(op, optarg, &v)) || (rc = op->set(o, p, optarg, v)))
			return rc;
		if (p->stop)
			return CB_EXIT_OK;
	}
	if (optind < argc) {
		fprintf(stderr, "clockbench: unexpected argument '%s' (see --help)\n", argv[optind]);
		return CB_EXIT_USAGE;
	}
	return 0;
}

/* What only the whole command line can tell: options that need another,
 * empty file names.  Returns 0, or CB_EXIT_USAGE after one line. */
static int check_together(const struct cb_opts *o, const struct parse *p)
{
	int i;

	for (i = 0; i < 3; i++) {
		const char *f = i == 0 ? o->output : i == 1 ? o->json_out : o->csv_out;
		if (f && !*f)
			return bad(i == 0 ? "--output" : i == 1 ? "--json" : "--csv", f, "empty file name");
	}
	if (p->limit_arg && !o->check_watchdog)
		return bad("--watchdog-limit", p->limit_arg, "only with --check watchdog");
	if (o->load && !o->check_watchdog)
		return bad_opt("--load", "only with --check watchdog");
	if (o->require_user && !p->probe)
		return bad_opt("--require", "only with --probe (a startup check measures nothing)");
	if (o->require_user && (o->output || o->json_out || o->csv_out))
		return bad_opt("--require", "writes no report: not with --output, --json or --csv");
	if (p->dry_cpus && !o->dry_run)
		return bad("--dry-run-cpus", p->dry_cpus_arg, "only with --dry-run (nothing is measured on those CPUs)");
	return 0;
}

/* --cpus and --threads against the CPUs allowed (or a dry run's).
 * Returns 0, or an exit status after one line. */
static int cpu_lists(struct cb_opts *o, const struct parse *p)
{
	static unsigned char set[CB_MAX_CPUS + 1];
	cpu_set_t allowed;
	int i, rc, maxcpu = 0;

	if (p->dry_cpus) {
		/* the CPUs a guest of that many vCPUs has, not this process's */
		CPU_ZERO(&allowed);
		for (i = 0; i < p->dry_cpus && i < CPU_SETSIZE; i++)
			CPU_SET(i, &allowed);
	} else if (sched_getaffinity(0, sizeof allowed, &allowed) < 0) {
		cb_warn("sched_getaffinity: %s", strerror(errno));
		return CB_EXIT_FAIL;
	}
	for (i = 0; i < CB_MAX_CPUS && i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &allowed))
			maxcpu = i;
	memset(set, 0, sizeof set);
	if (p->cpus_arg) {
		if ((rc = parse_list("--cpus", p->cpus_arg, 0, maxcpu, 0, set)))
			return rc;
		for (i = 0; i <= maxcpu; i++) {
			if (!set[i])
				continue;
			if (!CPU_ISSET(i, &allowed)) {
				char v[16];
				snprintf(v, sizeof v, "%d", i);
				return bad("--cpus", v, "CPU is not online or allowed");
			}
			o->cpus[o->ncpus++] = i;
		}
		if (!o->ncpus)
			return bad("--cpus", p->cpus_arg, "no CPU given");
	} else {
		for (i = 0; i <= maxcpu; i++)
			if (CPU_ISSET(i, &allowed))
				o->cpus[o->ncpus++] = i;
	}

	memset(set, 0, sizeof set);
	if ((rc = parse_list("--threads", p->threads_arg, 1, o->ncpus, 1, set)))
		return rc;
	for (i = 1; i <= o->ncpus; i++)
		if (set[i])
			o->threads[o->nthreads++] = i;
	if (!o->nthreads)
		return bad("--threads", p->threads_arg, "no thread count given");
	return 0;
}

static enum cb_parsed parsed(int status)
{
	return status == CB_EXIT_OK ? CB_PARSED_DONE : status == CB_EXIT_USAGE ? CB_PARSED_USAGE : CB_PARSED_FAILED;
}

enum cb_parsed cb_parse_opts(struct cb_opts *o, int argc, char **argv)
{
	struct parse p = { .threads_arg = "1,max" };
	int rc;

	memset(o, 0, sizeof *o);
	o->clocks = 1u << 0 | 1u << 1;
	o->methods = 1u << CB_VDSO | 1u << CB_SYSCALL | 1u << CB_NULL | 1u << CB_RDTSC;
	o->duration = 1.0;
	o->cost = 1;
	o->tsc_rounds = 5000;
	o->msg_size = 65536;
	o->watchdog_limit_ns = 125000;
	o->argc = argc;
	o->argv = argv;
	if ((rc = test_hooks(o)))
		return parsed(rc);
	if ((rc = read_argv(o, &p, argc, argv)))
		return parsed(rc);
	if (p.stop)
		return CB_PARSED_DONE;
	if ((rc = check_together(o, &p)) || (rc = cpu_lists(o, &p)))
		return parsed(rc);
	if (o->check_tsc_rate && o->duration < 5) {
		char v[32];
		snprintf(v, sizeof v, "%g", o->duration);
		return parsed(bad("--duration", p.duration_arg ? p.duration_arg : v,
				  "the tsc-rate check needs at least 5 seconds"));
	}
	cb_quiet = o->quiet;
	cb_progress_mode = o->progress;
	return CB_PARSED_RUN;
}

int cb_parsed_status(enum cb_parsed r)
{
	return r == CB_PARSED_USAGE ? CB_EXIT_USAGE : r == CB_PARSED_FAILED ? CB_EXIT_FAIL : CB_EXIT_OK;
}
