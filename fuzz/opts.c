/* opts.c: libFuzzer target for the engine's option parser: the input split
 * at NUL and newline bytes into argv words.  cb_parse_opts must say run,
 * done or usage (never crash, never exit), the same twice over, and on run leave a
 * struct within every bound the engine relies on. */
#include "../bench/clockbench.h"
#include "fuzz.h"

#include <sched.h>
#include <string.h>

#define MAXWORDS 64

/* Splits data into argv (argv[0] "clockbench"), words owned by buf. */
static int split(const uint8_t *data, size_t size, char *buf, char **argv)
{
	int argc = 0;

	memcpy(buf, data, size);
	buf[size] = 0;
	argv[argc++] = "clockbench";
	for (size_t i = 0, start = 0; i <= size && argc < MAXWORDS; i++) {
		if (i == size || buf[i] == 0 || buf[i] == '\n') {
			buf[i] = 0;
			argv[argc++] = buf + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	return argc;
}

/* The bounds the engine relies on after a successful parse. */
static void check(const struct cb_opts *o)
{
	cpu_set_t allowed;

	FUZZ_ASSERT(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
	FUZZ_ASSERT(o->ncpus >= 1 && o->ncpus <= CB_MAX_CPUS);
	FUZZ_ASSERT(o->nthreads >= 1 && o->nthreads <= o->ncpus);
	for (int i = 0; i < o->ncpus; i++) {
		FUZZ_ASSERT(o->cpus[i] >= 0 && o->cpus[i] < CB_MAX_CPUS && (o->dry_run || CPU_ISSET(o->cpus[i], &allowed)));
		FUZZ_ASSERT(i == 0 || o->cpus[i] > o->cpus[i - 1]);
	}
	for (int i = 0; i < o->nthreads; i++) {
		FUZZ_ASSERT(o->threads[i] >= 1 && o->threads[i] <= o->ncpus);
		FUZZ_ASSERT(i == 0 || o->threads[i] > o->threads[i - 1]);
	}
	FUZZ_ASSERT(o->clocks && !(o->clocks >> cb_nclocks) && o->methods && !(o->methods >> CB_NMETHODS));
	FUZZ_ASSERT(o->duration > 0 && o->duration <= 3600 && o->batch <= 1000000);
	FUZZ_ASSERT(o->tsc_rounds >= 3000 && o->tsc_rounds <= 100000000);
	FUZZ_ASSERT(!(o->workloads >> CB_NWORKLOADS) && o->msg_size >= 1 && o->msg_size <= CB_MSG_SIZE_MAX);
	FUZZ_ASSERT((unsigned)o->test_stall <= 1);
	FUZZ_ASSERT((unsigned)o->format <= CB_CSV && (unsigned)o->cost <= 1 && (unsigned)o->quiet <= 1);
	FUZZ_ASSERT((unsigned)o->check_warps <= 1 && (unsigned)o->check_tsc <= 1);
	FUZZ_ASSERT(!o->output || *o->output);
	FUZZ_ASSERT(!o->json_out || *o->json_out);
	FUZZ_ASSERT(!o->csv_out || *o->csv_out);
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int same(const struct cb_opts *a, const struct cb_opts *b)
{
	return a->ncpus == b->ncpus && !memcmp(a->cpus, b->cpus, sizeof a->cpus) && a->nthreads == b->nthreads &&
	       !memcmp(a->threads, b->threads, sizeof a->threads) && a->clocks == b->clocks &&
	       a->methods == b->methods && a->duration == b->duration && a->batch == b->batch &&
	       a->cost == b->cost && a->check_warps == b->check_warps && a->check_tsc == b->check_tsc &&
	       a->tsc_rounds == b->tsc_rounds && a->format == b->format && a->quiet == b->quiet &&
	       a->workloads == b->workloads && a->msg_size == b->msg_size && a->test_stall == b->test_stall &&
	       same_str(a->output, b->output) && same_str(a->json_out, b->json_out) && same_str(a->csv_out, b->csv_out);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* The parser's messages and --help go nowhere; libFuzzer keeps its own
	 * stream and the sanitizers write to descriptor 2 directly. */
	stdout = fopen("/dev/null", "w");
	stderr = fopen("/dev/null", "w");
	return !stdout || !stderr;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cb_opts a, b;
	char *argv1[MAXWORDS + 1], *argv2[MAXWORDS + 1];
	char *buf1 = malloc(size + 1), *buf2 = malloc(size + 1);
	enum cb_parsed ra, rb;

	FUZZ_ASSERT(buf1 && buf2);
	ra = cb_parse_opts(&a, split(data, size, buf1, argv1), argv1);
	rb = cb_parse_opts(&b, split(data, size, buf2, argv2), argv2);
	cb_clocksource_file = NULL; /* it may point into buf1 or buf2 */
	FUZZ_ASSERT(ra == CB_PARSED_RUN || ra == CB_PARSED_DONE || ra == CB_PARSED_USAGE);
	FUZZ_ASSERT(ra == rb);
	if (ra == CB_PARSED_RUN) {
		check(&a);
		FUZZ_ASSERT(same(&a, &b)); /* the same words parse the same way twice */
	}
	free(buf1);
	free(buf2);
	return 0;
}
