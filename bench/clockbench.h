/* clockbench.h: shared types and entry points of the measuring engine. */
#ifndef CLOCKBENCH_H
#define CLOCKBENCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>

#include "names.h" /* CB_VERSION, the kernel's files; and the lists below */
#define CB_SCHEMA "clockbench/1"
#define CB_MAX_CPUS 1024

/* Exit statuses, documented in README.md and --help.  CB_EXIT_CANNOT: the
 * check asked for cannot be made here (--probe --require user without a
 * working path probe; --check watchdog with neither device readable). */
#define CB_EXIT(name, code) CB_EXIT_##name = code,
enum {
#include "names.h"
};

/* The whole program as a function: the host build's main() and the guest's
 * PID 1 both call it, so the two builds share every line of the engine. */
int clockbench_main(int argc, char **argv);

/* ---- clocks and methods ---- */

struct cb_clock {
	const char *name;
	clockid_t id;
};
extern const struct cb_clock cb_clocks[];
extern const int cb_nclocks;

/* vdso: the C library's clock_gettime; syscall: the syscall instruction in a
 * function that is never inlined (what a vDSO fallback and the C library's
 * syscall() pay: a call and a ret around it); syscall-inline: the same
 * instruction inlined into the loop (the floor of kernel entry and exit);
 * rdtsc, rdtscp: baselines without a clock; null: getppid() through a call
 * shaped like syscall's (kernel entry and exit, no clock: what a syscall
 * row less null batches timed beside it leaves is the kernel's own
 * clocksource read, kernel_read_ns). */
#define CB_METHOD(member, name, clocked) CB_##member,
enum cb_method {
#include "names.h"
	CB_NMETHODS
};
extern const char *const cb_method_names[CB_NMETHODS];
/* 1 if the method reads a clock (one row per clock), 0 for rdtsc, rdtscp, null. */
int cb_method_clocked(enum cb_method m);

/* ---- workloads ---- */

/* Real work beside the clock reads (bench/workload.c): a loopback TCP
 * stream, one-byte TCP request and response, and short sleeps. */
#define CB_WORKLOAD(member, name, unit, short_unit, latency) CB_WL_##member,
enum cb_workload {
#include "names.h"
	CB_NWORKLOADS
};
extern const char *const cb_workload_names[CB_NWORKLOADS];
#define CB_MSG_SIZE_MAX (16u << 20)
#define CB_TIMER_INTERVAL_US 50

/* ---- options ---- */

enum cb_format { CB_TEXT, CB_JSON, CB_CSV };

struct cb_opts {
	unsigned clocks;          /* bitmask over cb_clocks[] */
	unsigned methods;         /* bitmask over enum cb_method */
	int threads[CB_MAX_CPUS]; /* thread counts to sweep, ascending */
	int nthreads;
	int cpus[CB_MAX_CPUS];    /* CPUs to pin to, in order of use */
	int ncpus;
	double duration;          /* seconds per cell and per check */
	unsigned batch;           /* calls per timed batch; 0 = automatic */
	int cost;                 /* measure cost cells */
	int check_warps, check_tsc;
	int check_tsc_rate;       /* --check tsc-rate: only when named */
	int check_watchdog;       /* --check watchdog: only when named */
	unsigned long long watchdog_limit_ns; /* --watchdog-limit */
	int load;                 /* --load: memory-bandwidth loops on the other CPUs */
	int require_user;         /* --probe --require user */
	/* Test hooks, from the environment only (CLOCKBENCH_TEST_*, see
	 * cb_parse_opts); never options a user sees. */
	const char *test_rtc_device; /* read as the RTC (NULL: /dev/rtc0) */
	const char *test_watchdog_file; /* a delay schedule read as the watchdog */
	unsigned tsc_rounds;      /* round trips per CPU in the TSC check */
	unsigned workloads;       /* bitmask over enum cb_workload */
	unsigned msg_size;        /* tcp-stream's write size, bytes */
	int test_stall;           /* test hook: the peer never answers */
	enum cb_format format;
	const char *output;       /* NULL = stdout */
	const char *json_out, *csv_out;
	int force;                /* --force: replace existing output files */
	int dry_run;              /* --dry-run: check everything, measure nothing */
	int quiet;
	int progress; /* --progress: 0 auto, else util.c's mode + 1 */
	int argc;
	char **argv;
};

/* What a command line asks for: a run, or an end (bench/opts.c). */
enum cb_parsed {
	CB_PARSED_RUN,              /* options good: go on and run */
	CB_PARSED_DONE,             /* --help or --version printed: exit 0 */
	CB_PARSED_USAGE,            /* one line on stderr: exit CB_EXIT_USAGE */
	CB_PARSED_FAILED,           /* one line on stderr: exit CB_EXIT_FAIL (the CPUs unreadable) */
};
/* Parses argv (and the test hooks of the environment) into *o, through
 * the one option table that also writes --help. */
enum cb_parsed cb_parse_opts(struct cb_opts *o, int argc, char **argv);
/* The exit status of a parse that ends the program (0 for CB_PARSED_RUN). */
int cb_parsed_status(enum cb_parsed r);
/* A byte count: decimal digits, then optionally K or M (KiB, MiB), within
 * [lo, hi]; -1 if not one. */
long long cb_parse_bytes(const char *s, long long lo, long long hi);

/* ---- histogram (log-linear, integer values) ---- */

#define CB_HIST_SUB_BITS 8 /* 256 buckets per power of two: < 0.4 % error */
#define CB_HIST_BUCKETS ((64 - CB_HIST_SUB_BITS + 1) << CB_HIST_SUB_BITS)

struct cb_hist {
	uint64_t count, min, max;
	long double sum;
	uint64_t b[CB_HIST_BUCKETS]; /* 64 bits: one bucket can pass 2^32 (fuzz/hist.c) */
};

void cb_hist_init(struct cb_hist *h);
void cb_hist_add(struct cb_hist *h, uint64_t v);
void cb_hist_merge(struct cb_hist *dst, const struct cb_hist *src);
/* Value at quantile q in [0,1]: the smallest bucket whose cumulative count
 * reaches ceil(q * count), reported as the bucket's midpoint clamped to
 * [min, max].  Exact for values below 2^CB_HIST_SUB_BITS. */
double cb_hist_quantile(const struct cb_hist *h, double q);
double cb_hist_mean(const struct cb_hist *h);
unsigned cb_hist_bucket(uint64_t v);
uint64_t cb_hist_bucket_low(unsigned i);
uint64_t cb_hist_bucket_high(unsigned i);

/* ---- TSC ---- */

static inline uint64_t cb_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/* rdtsc ordered after every earlier instruction and before every later one. */
static inline uint64_t cb_rdtsc_start(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* rdtscp waits for earlier instructions; lfence keeps later ones after it. */
static inline uint64_t cb_rdtsc_end(void)
{
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp\n\tlfence" : "=a"(lo), "=d"(hi), "=c"(aux) :: "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* CPUID leaf (subleaf 0) into r: eax, ebx, ecx, edx. */
static inline void cb_cpuid(uint32_t leaf, uint32_t r[4])
{
	__asm__ __volatile__("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "0"(leaf), "2"(0));
}

/* The raw path, identical in both builds: a syscall instruction, no C
 * library wrapper in the way.  Returns 0 or -errno.  Inlined wherever it is
 * used: the syscall-inline method. */
static inline long cb_raw_clock_gettime(clockid_t clk, struct timespec *ts)
{
	long ret;

	__asm__ __volatile__("syscall"
			     : "=a"(ret)
			     : "0"((long)SYS_clock_gettime), "D"((long)clk), "S"(ts)
			     : "rcx", "r11", "memory");
	return ret;
}

/* cb_raw_clock_gettime() behind a call that is never inlined, cloned or
 * folded (bench/measure.c): the syscall method and the probe's syscall case.
 * tests/bench/bench-symbols.t checks the built binaries keep it a call. */
long cb_syscall_clock_gettime(clockid_t clk, struct timespec *ts);
/* The null method's call: the same shape and arguments, but the syscall is
 * getppid (no clock work); also never inlined, cloned or folded. */
long cb_syscall_null(clockid_t clk, struct timespec *ts);

/* One (tsc, ns) pair of clock clk taken as close together as this CPU
 * allows: the narrowest of tries bracketed reads, with the TSC taken at
 * its middle (bench/tsc.c). */
void cb_tsc_pair(clockid_t clk, int tries, uint64_t *tsc, long double *ns);
/* TSC ticks per nanosecond, calibrated against CLOCK_MONOTONIC_RAW over
 * about ms milliseconds.  Returns 0 on failure. */
double cb_tsc_calibrate(unsigned ms);

/* ---- threads ---- */

#include <pthread.h>
#include <stdatomic.h>

/* A start line: every thread waits at it, then all go at once, or none
 * does if the run is abandoned (so a failed pthread_create never leaves
 * threads stuck, as a short barrier would). */
struct cb_gate {
	atomic_int ready, state;
};
void cb_gate_init(struct cb_gate *g);
int cb_gate_wait(struct cb_gate *g);               /* 1 go, 0 abandoned */
void cb_gate_open(struct cb_gate *g, int n, int go); /* waits for n first if go */
int cb_pin(int cpu);                               /* this thread to one CPU */
/* Starts n threads of fn, the i-th on the i-th element of the array arg
 * (elements size bytes apart) with its id in that element's tid; lets them
 * go at g all at once, or none if one could not be started; joins them.
 * Returns 0, or -1 after one line.  CB_RUN_THREADS: over an array of
 * structs with a pthread_t member tid. */
int cb_run_threads(struct cb_gate *g, void *(*fn)(void *), void *arg, pthread_t *tid, size_t size, int n);
#define CB_RUN_THREADS(g, fn, array, n) cb_run_threads(g, fn, array, &(array)->tid, sizeof *(array), n)

/* ---- cost measurement ---- */

/* Quantiles reported per row, in this order (JSON keys). */
enum { CB_Q_MIN, CB_Q_MEDIAN, CB_Q_MEAN, CB_Q_P99, CB_Q_P999, CB_Q_MAX, CB_NQ };
extern const char *const cb_quantile_names[CB_NQ];

/* Batch times of one cell: raw, and less each thread's own loop overhead.
 * A batch whose net time is negative counts in `below` and as 0 in `net`,
 * so a quantile whose rank falls among them is known to be negative. */
struct cb_tally {
	struct cb_hist raw, net;
	uint64_t below;
	long double net_sum;        /* exact, negative batches included */
};
void cb_tally_init(struct cb_tally *t);
void cb_tally_add(struct cb_tally *t, uint64_t ticks, uint64_t overhead_ticks);
void cb_tally_merge(struct cb_tally *dst, const struct cb_tally *src);

struct cb_cpu_overhead {        /* one measuring thread's loop overhead */
	int cpu;
	double cycles_per_batch;    /* median of empty timed batches on that CPU */
	double ns_per_call;
};

struct cb_stats {               /* one cell: clock x method x threads */
	int clock;                  /* index into cb_clocks, -1 for rdtsc(p) */
	enum cb_method method;
	int threads;
	unsigned batch;
	uint64_t batches, calls;
	double seconds;             /* wall time of the cell */
	/* per call; NaN where the overhead subtraction went negative, and
	 * that quantile's bit (1 << CB_Q_*) set in below_overhead */
	double ns[CB_NQ], cyc[CB_NQ];
	double ns_raw[CB_NQ], cyc_raw[CB_NQ]; /* before the overhead is subtracted */
	unsigned below_overhead;
	double calls_per_sec_thread, calls_per_sec_total;
	double overhead_ns;         /* mean over threads of their own overhead, per call */
	struct cb_cpu_overhead *ovh; /* one per thread (malloc'd; freed by the caller) */
	/* syscall rows, where null is among the methods: the median of null
	 * batches timed in the same threads, interleaved batch for batch with
	 * this row's (NaN without null), and this median less it (NaN if
	 * either is unknown, or if it went negative: then kernel_read_negative
	 * is set) */
	double null_ns, kernel_read_ns;
	int kernel_read_negative;
	int path;                   /* enum cb_path of the probe, for the table */
	char clocksource[64];       /* the kernel's, read right after the cell */
	int after_change;           /* measured after the clocksource changed */
};

/* Fills the per-call figures of s from a cell's merged tally. */
void cb_stats_fill(struct cb_stats *s, const struct cb_tally *t, unsigned batch, double tsc_per_ns);

/* The kernel's clocksource read of one syscall row: syscall_ns less
 * null_ns, or NaN where either is NaN or the difference is negative (then
 * *negative is set).  Never clamped to 0. */
double cb_kernel_read(double syscall_ns, double null_ns, int *negative);

/* Calls per batch that keeps a batch near 2.5 us for this clock and method. */
unsigned cb_auto_batch(int clock, enum cb_method m, double tsc_per_ns);
/* Runs one cell; each thread first measures the loop overhead on its own
 * CPU and subtracts it from its own batches.  Returns 0, or -1 with a
 * message printed. */
int cb_measure_cell(const struct cb_opts *o, int clock, enum cb_method m, int threads,
		    unsigned batch, double tsc_per_ns, struct cb_stats *out);

/* ---- path probe ---- */

enum cb_path { CB_PATH_UNKNOWN, CB_PATH_USER, CB_PATH_SYSCALL, CB_PATH_ERROR };
extern const char *const cb_path_names[];

struct cb_probe {
	int ok;                     /* seccomp worked; else reason says why */
	char reason[160];
	int vdso_present;           /* AT_SYSINFO_EHDR in the aux vector */
	int vdso[32], syscall[32];  /* enum cb_path per clock index */
};

/* A way to read a clock: returns 0 or -errno. */
typedef long (*cb_clock_reader)(clockid_t clk, struct timespec *ts);

struct cb_probe_case {
	cb_clock_reader read;
	clockid_t clk;
	int path;                   /* out: enum cb_path */
};

/* The probe's core: in a forked child whose clock_gettime syscall fails
 * with a marker errno, calls each case's reader once and records whether it
 * was answered in user space, by the kernel, or failed otherwise.  Returns
 * 0, or -1 with why in reason (seccomp unavailable, child lost). */
int cb_probe_cases(struct cb_probe_case *c, int n, char *reason, size_t len);
/* Every clock through the C library (vdso) and through the syscall method. */
void cb_probe_paths(struct cb_probe *p);

/* ---- checks ---- */

struct cb_warp_result {
	int clock;
	int threads;
	double seconds;
	uint64_t reads, warps;
	uint64_t max_warp_ns;
};

struct cb_tsc_cpu {
	int cpu;
	uint64_t rounds, warps;
	int64_t offset_cycles;      /* from the fastest round trip */
	uint64_t best_rtt_cycles;
	int within;                 /* |offset| <= half this CPU's best round trip */
};

struct cb_tsc_result {
	int ref_cpu;
	int ncpus;
	struct cb_tsc_cpu cpu[CB_MAX_CPUS];
	uint64_t total_warps;
	int64_t max_abs_offset_cycles;
	char kernel_clocksource[64];
	const char *verdict;        /* "consistent", "inconsistent", "single-cpu" */
	const char *kernel_verdict; /* "tsc-trusted" or "tsc-not-used" */
	char working[4096];
};

int cb_check_warps(const struct cb_opts *o, int clock, double tsc_per_ns, struct cb_warp_result *r);
int cb_check_tsc(const struct cb_opts *o, double tsc_per_ns, struct cb_tsc_result *r);
/* The verdict and its working from r->cpu[]: each CPU's offset against half
 * of that CPU's own best round trip, and the warps. */
void cb_tsc_verdict(struct cb_tsc_result *r, unsigned rounds, double tsc_per_ns);

/* ---- TSC rate (bench/tscrate.c) ---- */

struct cb_tsc_rate_ref {        /* the TSC against one clock over the window */
	double tsc_hz, ppm;         /* NaN where unknown */
};

struct cb_tsc_rate {
	double seconds;             /* the window, by CLOCK_MONOTONIC_RAW */
	char clocksource[64];       /* the kernel's, read right after the check */
	long long kernel_tsc_khz;   /* 0 if not found */
	const char *kernel_tsc_khz_source; /* "cpuid-0x15", "cpuid-0x40000010", "kmsg" or NULL */
	double engine_tsc_khz;      /* cb_tsc_calibrate()'s */
	const char *ppm_reference;  /* "kernel" or "engine": what every ppm is against */
	struct {
		const char *device;
		int available;
		char reason[160];       /* why not, in plain words; "" if available */
		int edges;
		double tsc_hz, ppm, jitter_us; /* jitter: RMS of the fit's residuals */
	} rtc;
	struct cb_tsc_rate_ref monotonic, monotonic_raw;
	struct {
		int available;
		double freq_ppm;
		long tick_us, maxerror_us, esterror_us;
		int status, synchronized;
	} adjtimex;
};

/* Least squares of TSC stamps against their edges' seconds idx[] (n >= 2):
 * the slope in ticks a second, and the root mean square of the residuals
 * in ticks.  Returns 0, or -1 if there is no positive slope. */
int cb_rate_fit(const uint64_t *tsc, const int64_t *idx, int n, double *hz, double *rms_ticks);
/* (hz / ref_hz - 1) * 1e6; NaN if ref_hz is not positive or hz not finite. */
double cb_rate_ppm(double hz, double ref_hz);
/* struct timex's freq (ppm scaled by 2^16) in ppm. */
double cb_adjtimex_freq_ppm(long freq);
/* The TSC kHz of a kernel log line (a /dev/kmsg record or the bare
 * message) "tsc: Refined TSC clocksource calibration: X MHz" (*rank 3),
 * "tsc: Detected X MHz TSC" (2) or "tsc: Detected X MHz processor" (1);
 * -1 for any other line. */
long long cb_kmsg_tsc_khz(const char *rec, int *rank);
/* Sets ppm_reference and every ppm from the tsc_hz figures: against the
 * kernel's kHz where known, else the engine's. */
void cb_tsc_rate_ppms(struct cb_tsc_rate *t);
/* The check, over o->duration (>= 5 s): RTC edges where there is an RTC,
 * the two monotonic clocks over the same window, adjtimex, the kernel's
 * TSC kHz.  Returns 0, or -1 with a message printed. */
int cb_check_tsc_rate(const struct cb_opts *o, double tsc_per_ns, struct cb_tsc_rate *t);

/* ---- the clocksource watchdog's readout (bench/watchdog.c) ---- */

enum { CB_WD_P50, CB_WD_P99, CB_WD_P99_9, CB_WD_P99_99, CB_WD_MAX, CB_WD_NQ };
extern const char *const cb_wd_quantile_names[CB_WD_NQ]; /* JSON keys: p50 .. max */

struct cb_watchdog {
	const char *device;         /* "hpet", "acpi_pm", "stand-in"; NULL if none */
	const char *how;            /* "hpet-mmap", "acpi-pm-port", "file-mmap"; NULL if none */
	char unavailable[512];      /* "" if measured, else why not, one line */
	int cpu;                    /* pinned to */
	int load;                   /* --load ran */
	double seconds;
	uint64_t limit_ns;          /* a readout over this is slow */
	uint64_t samples, over_limit;
	uint64_t interrupted;       /* samples an interrupt or a context switch hit (estimate) */
	const char *interrupts_from; /* what counted the events */
	double ns[CB_WD_NQ];        /* one readout; NaN without samples */
	struct cb_hist readout;     /* one readout, ns */
	struct cb_hist runs;        /* lengths of runs of consecutive slow readouts */
	uint64_t run;               /* the run still open */
};

void cb_watchdog_init(struct cb_watchdog *w, uint64_t limit_ns);
/* Adds one batch of n readouts (ns, in the order taken) to w: the
 * histogram, the slow ones and their runs (a run open at the end of a
 * batch goes on into the next), and as interrupted the batch's samples
 * above twice its median, at most events of them (events: interrupts and
 * context switches counted around the batch).  n <= 65536. */
void cb_watchdog_batch(struct cb_watchdog *w, const uint64_t *ns, int n, uint64_t events);
/* Closes the open run and fills ns[] from the histogram. */
void cb_watchdog_finish(struct cb_watchdog *w);
/* The ACPI PM timer's I/O port from a FADT of len bytes (X_PM_TMR_BLK in
 * I/O space, else PM_TMR_BLK); 0 with why (n bytes) set if it names none. */
unsigned cb_fadt_pm_port(const unsigned char *t, size_t len, char *why, size_t n);
/* The check, pinned to o->cpus[0] for o->duration.  Returns 0 measured;
 * 1 if neither device can be read (w->unavailable says why); -1 after one
 * line on a failure. */
int cb_check_watchdog(const struct cb_opts *o, double tsc_per_ns, struct cb_watchdog *w);

/* ---- context ---- */

struct cb_context {
	char hostname[256], kernel[256], cmdline[2048], cpu_model[128];
	int constant_tsc, nonstop_tsc, tsc_known_freq, rdtscp, hypervisor_flag, invtsc;
	char hypervisor[16];        /* CPUID 0x40000000 signature, "" if none */
	int kvm_features_valid;
	uint32_t kvm_features;      /* CPUID 0x40000001 EAX */
	char clocksource[64], available_clocksource[256];
	char clocksource_end[64];   /* read again at the end of the run */
	struct {                    /* /sys/devices/system/cpu/vulnerabilities/ */
		char name[48], text[256];
	} mitigation[32];
	int nmitigations;
	double tsc_per_ns;
	long cpus_online, cpus_allowed;
	char start[40], end[40];
};

void cb_context_collect(struct cb_context *c);
/* The kernel's current clocksource into buf ("" and -1 if unreadable). */
int cb_current_clocksource(char *buf, size_t n);
extern const char *cb_clocksource_file; /* its sysfs file; tests point it elsewhere */
void cb_iso_time(char *buf, size_t n);
/* The first line of path, less its newline and trailing spaces, into buf;
 * 0, or -1 with errno set and buf "" (bench/util.c). */
int cb_read_line(const char *path, char *buf, size_t n);
/* Appends to buf (size n, NUL-terminated) what fits; never overruns. */
void cb_append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- workload rows ---- */

struct cb_workload_result {
	enum cb_workload workload;
	int threads;
	int cpus[CB_MAX_CPUS];      /* the threads' CPUs, in order */
	double seconds;             /* measured wall time */
	double rate;                /* the headline figure, higher is better */
	const char *rate_unit;
	int have_latency;           /* tcp-rr and timer */
	double latency_us[CB_NQ];
	unsigned msg_bytes;         /* tcp-stream */
	uint64_t bytes;             /* tcp-stream: received */
	uint64_t transactions;      /* tcp-rr */
	uint64_t wakeups, overruns; /* timer */
	char clocksource[64];       /* the kernel's, read right after the row */
	int after_change;
};

/* A row's headline rate from its count (bytes, transactions or wakeups)
 * over seconds: Gbit/s (10^9 bits), transactions/s or wakeups/s.  NaN
 * when seconds is not positive. */
double cb_workload_rate(enum cb_workload w, uint64_t count, double seconds, const char **unit);
/* Runs one workload for o->duration.  Returns 0, or -1 after one line
 * through cb_warn; every socket operation has a time limit. */
int cb_run_workload(const struct cb_opts *o, enum cb_workload w, double tsc_per_ns,
		    struct cb_workload_result *out);

/* ---- report and output ---- */

struct cb_changes {             /* what changed between start and end */
	int clocksource, path;
	char detail[512];           /* "" if nothing changed */
};

struct cb_report {
	const struct cb_opts *opts;
	struct cb_context ctx;
	struct cb_stats *cells;
	int ncells;
	struct cb_workload_result workloads[CB_NWORKLOADS];
	int nworkloads;
	struct cb_probe probe, probe_end;
	int have_probe_end;
	struct cb_changes changed;
	struct cb_warp_result warps[32];
	int nwarps;
	struct cb_tsc_result *tsc;  /* NULL if not checked */
	struct cb_tsc_rate *tsc_rate; /* NULL if not checked */
	struct cb_watchdog *watchdog; /* NULL if not checked */
	int tsc_failed;
};

/* Fills r->changed from the start and end clocksource, each row's
 * clocksource and the two probes, and marks the rows measured after a
 * clocksource change. */
void cb_report_changes(struct cb_report *r);
void cb_render(FILE *f, const struct cb_report *r, enum cb_format fmt);

/* Output files (bench/output.c).  cb_outputs_check(): every target of
 * --output, --json, --csv can be created (no folder, no existing file
 * unless --force, not one file twice); 0 if so, else the exit status
 * after one line; creates nothing.  cb_outputs_open(): a temporary
 * NAME.tmp.XXXXXX beside each, removed on SIGINT, SIGTERM and SIGHUP.
 * cb_outputs_write(i, ...): the i-th given (in the order --output, --json,
 * --csv) written and synced.  cb_outputs_place(): all put in place or
 * none (link(2), which refuses a name that appeared meanwhile; rename(2)
 * with force).  Each returns 0, or -1 after one line with every
 * temporary removed. */
int cb_outputs_check(const struct cb_opts *o);
int cb_outputs_open(const struct cb_opts *o);
int cb_outputs_write(int i, const char *data, size_t len);
int cb_outputs_place(int force);
void cb_outputs_abort(void);

/* 1 in the host build (bench/main.c): refuse to measure on a clocksource
 * the kernel has not settled on (tsc-early, jiffies, refined-jiffies). */
extern int cb_refuse_unsettled;
/* The clocksource in cs is one the kernel uses only until it settles. */
int cb_clocksource_unsettled(const char *cs);

/* ---- json ---- */

struct cb_json {
	FILE *f;
	int depth;
	int need_comma[32];
};
void cb_json_begin(struct cb_json *j, FILE *f);
void cb_json_obj(struct cb_json *j, const char *key);   /* key NULL in arrays */
void cb_json_arr(struct cb_json *j, const char *key);
void cb_json_end_obj(struct cb_json *j);
void cb_json_end_arr(struct cb_json *j);
void cb_json_str(struct cb_json *j, const char *key, const char *v); /* NULL -> null */
void cb_json_int(struct cb_json *j, const char *key, long long v);
void cb_json_uint(struct cb_json *j, const char *key, unsigned long long v);
void cb_json_num(struct cb_json *j, const char *key, double v, int decimals); /* nan -> null */
void cb_json_bool(struct cb_json *j, const char *key, int v);
void cb_json_null(struct cb_json *j, const char *key);

/* ---- diagnostics ---- */

void cb_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
extern int cb_quiet;
extern int cb_progress_mode; /* --progress (struct cb_opts.progress) */
/* Progress on stderr, by mode (bench/util.c): a step of the run. */
void cb_progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Chooses the mode once, after the options: none with --quiet; else
 * --progress (auto, none, steps, tty, cells: cb_progress_mode); auto is tty
 * when stderr is a terminal, else steps.  Returns 0 (the option parser has
 * judged the mode). */
int cb_progress_setup(void);
/* A step within a step (a cell of the cost sweep, one clock's warp check):
 * one line each in mode cells; redrawn in place in mode tty; in mode steps
 * a line only when the last one is 10 s old. */
void cb_progress_cell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Clears the line drawn in place (mode tty), so that what follows starts
 * on a clean line: called when the run ends and before anything else is
 * printed. */
void cb_progress_end(void);

#endif
