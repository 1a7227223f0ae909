/* opts.c: command line to struct cb_opts, with every number range-checked. */
#include "clockbench.h"
#include "duration.h"

#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

const struct cb_clock cb_clocks[] = {
	{ "realtime", CLOCK_REALTIME },
	{ "monotonic", CLOCK_MONOTONIC },
	{ "monotonic_raw", CLOCK_MONOTONIC_RAW },
	{ "boottime", CLOCK_BOOTTIME },
	{ "tai", CLOCK_TAI },
	{ "realtime_coarse", CLOCK_REALTIME_COARSE },
	{ "monotonic_coarse", CLOCK_MONOTONIC_COARSE },
};
const int cb_nclocks = (int)(sizeof cb_clocks / sizeof cb_clocks[0]);
static const char *const clock_names[] = {
	"realtime", "monotonic", "monotonic_raw", "boottime", "tai", "realtime_coarse", "monotonic_coarse",
};
const char *const cb_method_names[CB_NMETHODS] = { "vdso", "syscall", "syscall-inline", "rdtsc", "rdtscp", "null" };

int cb_method_clocked(enum cb_method m)
{
	return m == CB_VDSO || m == CB_SYSCALL || m == CB_SYSCALL_INLINE;
}

static const char usage[] =
"Usage: clockbench [OPTION]...\n"
"Measure what a clock_gettime() call costs, per clock and per path, on 1..N\n"
"pinned threads; check which path a read really took; check the TSC.\n"
"The JSON report's schema: /usr/share/doc/clockbench/docs/schema.md.\n"
"\n"
"Options:\n"
"  -c, --clock LIST     clocks: realtime monotonic monotonic_raw boottime tai\n"
"                       realtime_coarse monotonic_coarse, or all\n"
"                       (default: realtime,monotonic)\n"
"  -m, --method LIST    vdso (the C library's clock_gettime), syscall (the\n"
"                       syscall instruction inside a function call, as a vDSO\n"
"                       fallback pays it), syscall-inline (the instruction\n"
"                       inlined: kernel entry and exit alone), rdtsc, rdtscp\n"
"                       (baselines), null (getppid called as syscall calls\n"
"                       clock_gettime; with syscall, also timed between its\n"
"                       batches: syscall's median less that is the kernel's\n"
"                       own clock read, kernel_read_ns), or all\n"
"                       (default: vdso,syscall,null,rdtsc)\n"
"  -t, --threads LIST   thread counts: 1,2,4 or 1-8 or max or sweep (powers of\n"
"                       two up to max, and max) (default: 1,max)\n"
"  -C, --cpus LIST      CPUs to pin threads to, in order (default: all allowed)\n"
"  -d, --duration TIME  per cell and per check: seconds, or with a unit: us,\n"
"                       ms, s, m, h (500ms, 2m, 1.5s); more than 0, at most\n"
"                       3600 s (1h) (default: 1)\n"
"  -b, --batch N        calls per timed batch (default: automatic, ~2.5 us)\n"
"      --check LIST     also run checks, apart from the cost cells: warps\n"
"                       (clock read backwards across CPUs), tsc (per-CPU TSC\n"
"                       offset from the first CPU), all (those two), none\n"
"                       (default: none); tsc-rate, only by name: the TSC's\n"
"                       rate against the RTC's update interrupts (where there\n"
"                       is one), CLOCK_MONOTONIC and CLOCK_MONOTONIC_RAW over\n"
"                       --duration (at least 5 s), and the kernel's NTP\n"
"                       frequency correction\n""                       watchdog, only by name: the clocksource watchdog's\n"
"                       own readout (watchdog, TSC, watchdog, as the kernel\n"
"                       reads them) timed from user space on the first\n"
"                       --cpus CPU for --duration: the HPET's main counter\n"
"                       through /dev/hpet's mmap, else the ACPI PM timer's\n"
"                       I/O port (root); p50..p99.99 and max in ns, the\n"
"                       share over --watchdog-limit, runs of slow readouts,\n"
"                       and the samples an interrupt or a context switch hit\n"
"                       (this CPU's /proc/interrupts and getrusage, per\n"
"                       batch); the tail is an upper bound (user space\n"
"                       cannot turn interrupts off); exit 3 where neither\n"
"                       device can be read\n"
"      --watchdog-limit NS\n"
"                       with --check watchdog: a readout slower than this is\n"
"                       slow, 1 to 1000000000 (default: 125000, the limit of\n"
"                       kernels 5.15 to 6.11; the harness gives the running\n"
"                       kernel's)\n"
"      --load           with --check watchdog: a memory-bandwidth loop on\n"
"                       every other --cpus CPU while it runs\n"
"      --tsc-rounds N   round trips per CPU in the TSC check (default: 5000,\n"
"                       at least 3000)\n"
"      --workload LIST  also run real work, after the cost cells: tcp-stream\n"
"                       (loopback TCP, Gbit/s), tcp-rr (one-byte request and\n"
"                       response, transactions/s, round-trip latency), timer\n"
"                       (50 us sleeps on the largest --threads count of CPUs,\n"
"                       wake-up latency), all, none (default: none); each for\n"
"                       --duration, TCP pinned to the first two --cpus\n"
"      --msg-size BYTES\n"
"                       tcp-stream's write size, 1 to 16M; K and M suffixes\n"
"                       are KiB and MiB (default: 64K)\n"
"      --no-cost        skip the cost cells (probe, workloads and checks only)\n"
"      --probe          only the path check: vDSO or syscall, per clock\n"
"      --require user   with --probe: a startup check that measures nothing and\n"
"                       writes no report: exit 0 if every --clock is read in\n"
"                       user space (the vDSO), else 1 with one line naming\n"
"                       the clock, its path and the clocksource; 3 if the\n"
"                       path check cannot run here (in systemd: ExecStartPre=\n"
"                       clockbench --probe --require user)\n"
"  -f, --format FMT     text, json or csv for stdout or --output (default: text)\n"
"  -o, --output FILE    write there instead of stdout\n"
"      --json FILE      also write the JSON report to FILE\n"
"      --csv FILE       also write the CSV rows to FILE\n"
"                       (each output is checked before measuring and must\n"
"                       not exist; all of a run's files appear together, or\n"
"                       none does)\n"
"      --force          replace output files that exist\n"
"      --dry-run        check every option and output as a run would, then\n"
"                       exit 0 without measuring or creating anything (the\n"
"                       clocksource is the run's to check: it may be switched\n"
"                       in between)\n"
"      --dry-run-cpus N\n"
"                       with --dry-run: judge --threads and --cpus against\n"
"                       CPUs 0..N-1 (a guest's N vCPUs) instead of the CPUs\n"
"                       this process may use\n"
"  -q, --quiet          no progress on stderr (else as CLOCKBENCH_PROGRESS\n"
"                       says)\n"
"  -h, --help           this text\n"
"  -V, --version        the version\n"
"\n"
"Environment:\n"
"  CLOCKBENCH_PROGRESS  progress on stderr, without --quiet: auto (the\n"
"                       default: redrawn in place on a terminal, a line a\n"
"                       step otherwise), tty, steps, cells (a line a cell),\n"
"                       none\n"
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
 * Returns -1, or CB_EXIT_USAGE after one line. */
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
	return -1;
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
			fprintf(stderr, "clockbench: %s: unknown name '%s' (see --help)\n", opt, tok);
			return CB_EXIT_USAGE;
		}
		*mask |= 1u << i;
	}
	if (!*mask)
		return bad(opt, arg, "expected a comma-separated list");
	return -1;
}

/* Parses "1,2,4", "1-8", "max", "sweep" into a sorted set within [lo, max]. */
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
	return -1;
}

int cb_parse_opts(struct cb_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "clock", required_argument, NULL, 'c' },
		{ "method", required_argument, NULL, 'm' },
		{ "threads", required_argument, NULL, 't' },
		{ "cpus", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "batch", required_argument, NULL, 'b' },
		{ "check", required_argument, NULL, 'K' },
		{ "tsc-rounds", required_argument, NULL, 'R' },
		{ "workload", required_argument, NULL, 'W' },
		{ "msg-size", required_argument, NULL, 'M' },
		{ "no-cost", no_argument, NULL, 'N' },
		{ "probe", no_argument, NULL, 'P' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, 'J' },
		{ "csv", required_argument, NULL, 'S' },
		{ "force", no_argument, NULL, 'F' },
		{ "dry-run", no_argument, NULL, 'D' },
		{ "dry-run-cpus", required_argument, NULL, 'u' },
		{ "watchdog-limit", required_argument, NULL, 'L' },
		{ "load", no_argument, NULL, 'A' },
		{ "require", required_argument, NULL, 'Q' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		/* The old spellings of three test hooks (test_hooks() has them
		 * now), kept only until host-scripts/bench-host, tests/tscrate.t
		 * and tests/run-real.t use the environment; then deleted. */
		{ "test-clocksource-file", required_argument, NULL, 'T' },
		{ "test-rtc-device", required_argument, NULL, 'E' },
		{ "test-stall", no_argument, NULL, 'X' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const check_names[] = { "warps", "tsc", "none", "tsc-rate", "watchdog" };
	static const char *const workload_names[] = { "tcp-stream", "tcp-rr", "timer", "none" };
	const char *threads_arg = "1,max", *cpus_arg = NULL, *dry_cpus_arg = NULL, *duration_arg = NULL;
	const char *limit_arg = NULL;
	static unsigned char set[CB_MAX_CPUS + 1];
	cpu_set_t allowed;
	int c, i, rc, maxcpu = 0, dry_cpus = 0, probe = 0;
	unsigned mask;

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
	if ((rc = test_hooks(o)) >= 0)
		return rc;

	opterr = 0;
	/* 0, not 1: glibc and musl then also forget a cluster such as "-Vq"
	 * that an earlier call stopped inside (tests/unit.c, fuzz/opts.c). */
	optind = 0;
	while ((c = getopt_long(argc, argv, ":c:m:t:C:d:b:f:o:qhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			if ((rc = parse_names("--clock", optarg, clock_names, cb_nclocks, &o->clocks)) >= 0)
				return rc;
			break;
		case 'm':
			if ((rc = parse_names("--method", optarg, cb_method_names, CB_NMETHODS, &o->methods)) >= 0)
				return rc;
			break;
		case 't': threads_arg = optarg; break;
		case 'C': cpus_arg = optarg; break;
		case 'd':
			duration_arg = optarg;
			if (cb_parse_duration(optarg, &o->duration) < 0)
				return bad("--duration", optarg,
					   "not a duration: seconds, or a number with a unit (" CB_DURATION_UNITS ")");
			/* after the unit: 2h is 7200 s, beyond the limit */
			if (o->duration <= 0)
				return bad("--duration", optarg, "must be more than 0 s");
			if (o->duration > 3600) {
				char why[96];
				snprintf(why, sizeof why, "%.6g s is beyond the limit of 3600 s (1h)", o->duration);
				return bad("--duration", optarg, why);
			}
			break;
		case 'b': {
			long long v = parse_num(optarg, 1, 1000000);
			if (v < 0)
				return bad("--batch", optarg, "must be a whole number from 1 to 1000000");
			o->batch = (unsigned)v;
			break;
		}
		case 'K':
			if ((rc = parse_names("--check", optarg, check_names, 5, &mask)) >= 0)
				return rc;
			if (!strcmp(optarg, "all"))
				mask = 3;
			o->check_warps = !!(mask & 1);
			o->check_tsc = !!(mask & 2);
			o->check_tsc_rate = named(optarg, "tsc-rate"); /* not in "all" */
			o->check_watchdog = named(optarg, "watchdog"); /* nor this */
			break;
		case 'L': {
			long long v = parse_num(optarg, 1, 1000000000);
			if (v < 0)
				return bad("--watchdog-limit", optarg, "must be a whole number of ns from 1 to 1000000000");
			o->watchdog_limit_ns = (unsigned long long)v;
			limit_arg = optarg;
			break;
		}
		case 'A': o->load = 1; break;
		case 'Q':
			if (strcmp(optarg, "user"))
				return bad("--require", optarg, "expected user");
			o->require_user = 1;
			break;
		case 'R': {
			long long v = parse_num(optarg, 3000, 100000000);
			if (v < 0)
				return bad("--tsc-rounds", optarg, "must be a whole number from 3000 to 100000000");
			o->tsc_rounds = (unsigned)v;
			break;
		}
		case 'W':
			if ((rc = parse_names("--workload", optarg, workload_names, CB_NWORKLOADS + 1, &mask)) >= 0)
				return rc;
			o->workloads = mask & ((1u << CB_NWORKLOADS) - 1); /* "none" adds nothing */
			break;
		case 'M': {
			long long v = cb_parse_bytes(optarg, 1, CB_MSG_SIZE_MAX);
			if (v < 0)
				return bad("--msg-size", optarg, "must be a byte count from 1 to 16M (K, M: KiB, MiB)");
			o->msg_size = (unsigned)v;
			break;
		}
		case 'X': o->test_stall = 1; break;
		case 'N': o->cost = 0; break;
		case 'P':
			o->cost = 0;
			o->check_warps = o->check_tsc = o->check_tsc_rate = o->check_watchdog = 0;
			o->workloads = 0;
			probe = 1;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				o->format = CB_TEXT;
			else if (!strcmp(optarg, "json"))
				o->format = CB_JSON;
			else if (!strcmp(optarg, "csv"))
				o->format = CB_CSV;
			else
				return bad("--format", optarg, "expected text, json or csv");
			break;
		case 'o': o->output = optarg; break;
		case 'J': o->json_out = optarg; break;
		case 'S': o->csv_out = optarg; break;
		case 'F': o->force = 1; break;
		case 'D': o->dry_run = 1; break;
		case 'u': {
			long long v = parse_num(optarg, 1, CB_MAX_CPUS);
			if (v < 0)
				return bad("--dry-run-cpus", optarg, "must be a whole number from 1 to 1024");
			dry_cpus = (int)v;
			dry_cpus_arg = optarg;
			break;
		}
		case 'q': o->quiet = 1; break;
		case 'T': cb_clocksource_file = optarg; break;
		case 'E': o->test_rtc_device = optarg; break;
		case 'h': fputs(usage, stdout); return CB_EXIT_OK;
		case 'V': printf("clockbench %s\n", CB_VERSION); return CB_EXIT_OK;
		case ':':
			fprintf(stderr, "clockbench: option '%s' needs a value (see --help)\n", argv[optind - 1]);
			return CB_EXIT_USAGE;
		default:
			/* optopt: inside a cluster such as "-Zq", optind has not moved on */
			if (optopt)
				fprintf(stderr, "clockbench: unknown option '-%c' (see --help)\n", optopt);
			else
				fprintf(stderr, "clockbench: unknown option '%s' (see --help)\n", argv[optind - 1]);
			return CB_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "clockbench: unexpected argument '%s' (see --help)\n", argv[optind]);
		return CB_EXIT_USAGE;
	}
	for (i = 0; i < 3; i++) {
		const char *p = i == 0 ? o->output : i == 1 ? o->json_out : o->csv_out;
		if (p && !*p)
			return bad(i == 0 ? "--output" : i == 1 ? "--json" : "--csv", p, "empty file name");
	}

	if (limit_arg && !o->check_watchdog)
		return bad("--watchdog-limit", limit_arg, "only with --check watchdog");
	if (o->load && !o->check_watchdog)
		return bad_opt("--load", "only with --check watchdog");
	if (o->require_user && !probe)
		return bad_opt("--require", "only with --probe (a startup check measures nothing)");
	if (o->require_user && (o->output || o->json_out || o->csv_out))
		return bad_opt("--require", "writes no report: not with --output, --json or --csv");
	if (dry_cpus && !o->dry_run)
		return bad("--dry-run-cpus", dry_cpus_arg, "only with --dry-run (nothing is measured on those CPUs)");
	if (dry_cpus) {
		/* the CPUs a guest of that many vCPUs has, not this process's */
		CPU_ZERO(&allowed);
		for (i = 0; i < dry_cpus && i < CPU_SETSIZE; i++)
			CPU_SET(i, &allowed);
	} else if (sched_getaffinity(0, sizeof allowed, &allowed) < 0) {
		cb_warn("sched_getaffinity: %s", strerror(errno));
		return CB_EXIT_FAIL;
	}
	for (i = 0; i < CB_MAX_CPUS && i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &allowed))
			maxcpu = i;
	memset(set, 0, sizeof set);
	if (cpus_arg) {
		if ((rc = parse_list("--cpus", cpus_arg, 0, maxcpu, 0, set)) >= 0)
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
			return bad("--cpus", cpus_arg, "no CPU given");
	} else {
		for (i = 0; i <= maxcpu; i++)
			if (CPU_ISSET(i, &allowed))
				o->cpus[o->ncpus++] = i;
	}

	memset(set, 0, sizeof set);
	if ((rc = parse_list("--threads", threads_arg, 1, o->ncpus, 1, set)) >= 0)
		return rc;
	for (i = 1; i <= o->ncpus; i++)
		if (set[i])
			o->threads[o->nthreads++] = i;
	if (!o->nthreads)
		return bad("--threads", threads_arg, "no thread count given");
	if (o->check_tsc_rate && o->duration < 5) {
		char v[32];
		snprintf(v, sizeof v, "%g", o->duration);
		return bad("--duration", duration_arg ? duration_arg : v, "the tsc-rate check needs at least 5 seconds");
	}
	cb_quiet = o->quiet;
	return -1;
}
