/* watchdog.c: the clocksource watchdog's own readout, timed from user space.
 *
 * The kernel's watchdog reads its clocksource (hpet or acpi_pm), the TSC,
 * and its clocksource again, with interrupts off, and calls the TSC's
 * check off (or, before the 2026 rewrite, the TSC unstable) when every
 * retry of that readout is slower than its limit.  Here the same three
 * reads run pinned to one CPU, back to back, each readout timed by the TSC
 * around it: the HPET's main counter through /dev/hpet's mmap, or the ACPI
 * PM timer's I/O port (root).  User space cannot turn interrupts off, so a
 * readout an interrupt or a preemption hit is longer than the kernel's
 * would be: the tail is an upper bound.  Such samples are counted per
 * batch: this CPU's interrupts (/proc/interrupts) and the thread's context
 * switches (getrusage) before and after, attributed to the batch's samples
 * above twice its median, at most one per event.
 *
 * A test's stand-in (CLOCKBENCH_TEST_WATCHDOG_FILE): a regular file of
 * little-endian 32-bit delays in ns, mapped as the counter; readout i
 * spins delay i inside its first watchdog read, and the run ends with the
 * schedule (or --duration), so its tail is what the test constructed. */
#include "clockbench.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HPET_DEVICE "/dev/hpet"
#define HPET_COUNTER 0xf0          /* main counter, low 32 bits (what the kernel reads) */
#define FADT_PATH "/sys/firmware/acpi/tables/FACP"
#define STANDIN_MAX (64u << 20)    /* bytes: 16 Mi readouts */
#define BATCH_MAX 65536            /* readouts per batch */
#define BATCH_NS 1000000           /* a batch's length, at least */
#define INTERRUPTS_MAX (1u << 20)  /* /proc/interrupts read to this, no further */
#define LOAD_BYTES (32u << 20)     /* per load thread: beyond any cache here */

const char *const cb_wd_quantile_names[CB_WD_NQ] = { "p50", "p99", "p99_9", "p99_99", "max" };

enum wd_kind { WD_HPET, WD_ACPI_PM, WD_FILE };

struct wd_dev {
	enum wd_kind kind;
	const volatile uint32_t *counter; /* hpet */
	unsigned short port;              /* acpi_pm */
	const uint32_t *sched;            /* stand-in: delays in ns */
	size_t nsched, pos;
	void *map;
	size_t maplen;
	double tpn;
};

/* ---- the arithmetic (pure, unit-tested) ---- */

void cb_watchdog_init(struct cb_watchdog *w, uint64_t limit_ns)
{
	memset(w, 0, sizeof *w);
	cb_hist_init(&w->readout);
	cb_hist_init(&w->runs);
	w->limit_ns = limit_ns;
	w->cpu = -1;
	for (int q = 0; q < CB_WD_NQ; q++)
		w->ns[q] = (double)NAN;
}

/* The k-th smallest of v[0..n-1] (0-based), v reordered (Hoare's select). */
static uint64_t select_kth(uint64_t *v, int n, int k)
{
	int lo = 0, hi = n - 1;

	while (lo < hi) {
		uint64_t pivot = v[lo + (hi - lo) / 2], t;
		int i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i];
				v[i++] = v[j];
				v[j--] = t;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			break;
	}
	return v[k];
}

void cb_watchdog_batch(struct cb_watchdog *w, const uint64_t *ns, int n, uint64_t events)
{
	static uint64_t scratch[BATCH_MAX];
	uint64_t outliers = 0, median;
	int i;

	for (i = 0; i < n; i++) {
		cb_hist_add(&w->readout, ns[i]);
		if (ns[i] > w->limit_ns) {
			w->over_limit++;
			w->run++;
		} else if (w->run) {
			cb_hist_add(&w->runs, w->run);
			w->run = 0;
		}
	}
	w->samples += (uint64_t)n;
	if (!events || n <= 0 || n > BATCH_MAX)
		return;
	memcpy(scratch, ns, sizeof *ns * (size_t)n);
	median = select_kth(scratch, n, n / 2);
	for (i = 0; i < n; i++)
		outliers += ns[i] > 2 * median;
	w->interrupted += outliers < events ? outliers : events;
}

void cb_watchdog_finish(struct cb_watchdog *w)
{
	static const double q[CB_WD_NQ - 1] = { 0.5, 0.99, 0.999, 0.9999 };
	int i;

	if (w->run) {
		cb_hist_add(&w->runs, w->run);
		w->run = 0;
	}
	if (!w->readout.count)
		return;
	for (i = 0; i < CB_WD_NQ - 1; i++)
		w->ns[i] = cb_hist_quantile(&w->readout, q[i]);
	w->ns[CB_WD_MAX] = (double)w->readout.max;
}

/* ---- the devices ---- */

static inline uint32_t inl_port(unsigned short port)
{
	uint32_t v;

	__asm__ __volatile__("inl %w1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static void spin_ns(double ns, double tpn)
{
	uint64_t t0 = cb_rdtsc(), ticks = (uint64_t)(ns * tpn);

	while (cb_rdtsc() - t0 < ticks)
		;
}

/* 1 if two reads 20 us apart differ: the device counts. */
static int counts(struct wd_dev *d)
{
	uint32_t a = d->kind == WD_HPET ? *d->counter : inl_port(d->port), b;

	spin_ns(20000, d->tpn);
	b = d->kind == WD_HPET ? *d->counter : inl_port(d->port);
	return a != b;
}

static int open_hpet(struct wd_dev *d, char *why, size_t n)
{
	int fd = open(HPET_DEVICE, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0) {
		snprintf(why, n, "%s: %s", HPET_DEVICE, strerror(errno));
		return -1;
	}
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		snprintf(why, n, "mmap %s: %s (a kernel without CONFIG_HPET_MMAP, or hpet_mmap=0)", HPET_DEVICE,
			 strerror(errno));
		return -1;
	}
	d->kind = WD_HPET;
	d->map = m;
	d->maplen = 4096;
	d->counter = (const volatile uint32_t *)((char *)m + HPET_COUNTER);
	if (!counts(d)) {
		snprintf(why, n, "%s: the main counter does not count (HPET disabled)", HPET_DEVICE);
		munmap(m, 4096);
		d->map = NULL;
		return -1;
	}
	return 0;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The PM timer's port from a FADT: X_PM_TMR_BLK (offset 208, a generic
 * address) where the table has it in I/O space, else PM_TMR_BLK (offset
 * 76, with PM_TMR_LEN 4 at 91).  Returns the port, or 0 with why set. */
unsigned cb_fadt_pm_port(const unsigned char *t, size_t len, char *why, size_t n)
{
	uint64_t port = 0;

	if (len < 116 || memcmp(t, "FACP", 4)) {
		snprintf(why, n, "not a FADT (%zu bytes)", len);
		return 0;
	}
	if (len >= 220 && t[208] == 1 && t[209] >= 24)
		port = (uint64_t)le32(t + 212) | (uint64_t)le32(t + 216) << 32;
	if (!port && t[91] == 4)
		port = le32(t + 76);
	if (!port) {
		snprintf(why, n, "the FADT names none%s", le32(t + 112) & (1u << 20) ? ", hardware-reduced ACPI" : "");
		return 0;
	}
	if (port > 0xfffc) {
		snprintf(why, n, "the FADT's PM timer at 0x%llx is not an I/O port", (unsigned long long)port);
		return 0;
	}
	return (unsigned)port;
}

static int open_acpi_pm(struct wd_dev *d, char *why, size_t n)
{
	unsigned char t[1024];
	unsigned port;
	size_t len;
	FILE *f = fopen(FADT_PATH, "rbe");

	if (!f) {
		snprintf(why, n, "%s: %s%s", FADT_PATH, strerror(errno), errno == EACCES ? " (root reads it)" : "");
		return -1;
	}
	len = fread(t, 1, sizeof t, f);
	fclose(f);
	if (!(port = cb_fadt_pm_port(t, len, why, n)))
		return -1;
	if (syscall(SYS_ioperm, (unsigned long)port, 4UL, 1L) < 0) {
		snprintf(why, n, "ioperm(0x%x): %s (the PM timer's port needs root)", port, strerror(errno));
		return -1;
	}
	d->kind = WD_ACPI_PM;
	d->port = (unsigned short)port;
	if (!counts(d)) {
		snprintf(why, n, "the PM timer at port 0x%x does not count", d->port);
		return -1;
	}
	return 0;
}

/* Returns 0, or -1 after one line (a stand-in that is not one is the
 * test's mistake, not this host's). */
static int open_standin(struct wd_dev *d, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	void *m;

	if (fd < 0) {
		cb_warn("CLOCKBENCH_TEST_WATCHDOG_FILE %.80s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || st.st_size % 4 ||
	    st.st_size > STANDIN_MAX) {
		cb_warn("CLOCKBENCH_TEST_WATCHDOG_FILE %.80s: not a regular file of 32-bit delays (4 bytes to 64 MiB)",
			path);
		close(fd);
		return -1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		cb_warn("mmap %.80s: %s", path, strerror(errno));
		return -1;
	}
	d->kind = WD_FILE;
	d->map = m;
	d->maplen = (size_t)st.st_size;
	d->sched = m;
	d->nsched = (size_t)st.st_size / 4;
	return 0;
}

/* ---- the readout loop ---- */

/* The first watchdog read of a readout (the stand-in's carries its delay). */
static inline uint32_t wd_read_first(struct wd_dev *d)
{
	uint32_t v;

	switch (d->kind) {
	case WD_HPET: return *d->counter;
	case WD_ACPI_PM: return inl_port(d->port);
	default:
		v = d->sched[d->pos++];
		if (v)
			spin_ns(v, d->tpn);
		return v;
	}
}

static inline uint32_t wd_read_again(const struct wd_dev *d)
{
	switch (d->kind) {
	case WD_HPET: return *d->counter;
	case WD_ACPI_PM: return inl_port(d->port);
	default: return d->sched[d->pos - 1];
	}
}

volatile uint64_t cb_watchdog_sink;

/* Readouts into ticks[] until the TSC passes end, BATCH_MAX of them, or
 * the stand-in's schedule ends; returns how many. */
static __attribute__((noinline)) int readout_batch(struct wd_dev *d, uint64_t *ticks, uint64_t end)
{
	uint64_t t0, t1, mix = 0;
	int n = 0;

	while (n < BATCH_MAX && (d->kind != WD_FILE || d->pos < d->nsched)) {
		t0 = cb_rdtsc_start();
		mix += wd_read_first(d);   /* the watchdog */
		mix += cb_rdtsc();         /* the TSC */
		mix += wd_read_again(d);   /* the watchdog again */
		t1 = cb_rdtsc_end();
		ticks[n++] = t1 - t0;
		if (t1 >= end)
			break;
	}
	cb_watchdog_sink = mix;
	return n;
}

/* This CPU's interrupts so far, from /proc/interrupts (every line with a
 * column for it); -1 if unreadable or over INTERRUPTS_MAX. */
static long long cpu_interrupts(int cpu)
{
	static char buf[INTERRUPTS_MAX + 1];
	char name[16], *p, *line, *end;
	long long sum = 0;
	ssize_t got, r;
	int fd, col = -1, i;

	fd = open("/proc/interrupts", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	for (got = 0; got < (ssize_t)INTERRUPTS_MAX; got += r)
		if ((r = read(fd, buf + got, INTERRUPTS_MAX - (size_t)got)) <= 0)
			break;
	close(fd);
	if (got <= 0 || got >= (ssize_t)INTERRUPTS_MAX)
		return -1;
	buf[got] = 0;
	/* the header names the online CPUs' columns */
	snprintf(name, sizeof name, "CPU%d", cpu);
	line = buf;
	end = strchr(line, '\n');
	if (!end)
		return -1;
	*end = 0;
	for (p = strtok(line, " "), i = 0; p; p = strtok(NULL, " "), i++)
		if (!strcmp(p, name))
			col = i;
	if (col < 0)
		return -1;
	for (line = end + 1; *line; line = end + 1) {
		char *q = strchr(line, ':');
		long long v = -1;
		end = strchr(line, '\n');
		if (!end)
			break;
		*end = 0;
		if (!q)
			continue;
		q++;
		for (i = 0; i <= col; i++) {
			char *e;
			v = strtoll(q, &e, 10);
			if (e == q) {
				v = -1;
				break;
			}
			q = e;
		}
		if (v > 0)
			sum += v;
	}
	return sum;
}

static long long context_switches(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_THREAD, &ru) < 0)
		return -1;
	return (long long)ru.ru_nvcsw + ru.ru_nivcsw;
}

/* ---- load on the other CPUs ---- */

struct loader {
	pthread_t tid;
	int cpu;
	atomic_int *stop;
};

static void *load_main(void *arg)
{
	struct loader *l = arg;
	unsigned char *buf = malloc(LOAD_BYTES);
	unsigned k = 0;

	if (!buf)
		return NULL;
	if (cb_pin(l->cpu) == 0)
		while (!atomic_load(l->stop)) {
			size_t i;
			uint64_t s = 0;
			memset(buf, (int)(k++ & 0xff), LOAD_BYTES);
			for (i = 0; i < LOAD_BYTES; i += 64)
				s += buf[i];
			cb_watchdog_sink = s;
		}
	free(buf);
	return NULL;
}

int cb_check_watchdog(const struct cb_opts *o, double tpn, struct cb_watchdog *w)
{
	static uint64_t ticks[BATCH_MAX];
	static struct loader load[CB_MAX_CPUS];
	static atomic_int stop;
	static const char *const devices[] = { [WD_HPET] = "hpet", [WD_ACPI_PM] = "acpi_pm", [WD_FILE] = "stand-in" };
	static const char *const hows[] = { [WD_HPET] = "hpet-mmap", [WD_ACPI_PM] = "acpi-pm-port", [WD_FILE] = "file-mmap" };
	struct wd_dev d = { .tpn = tpn };
	char hpet_why[160] = "", pm_why[160] = "", avail[256] = "";
	long long irq0, irq1, cs0, cs1;
	uint64_t start, end, batch_ticks;
	int i, nload = 0, use_irq, rc = 0;
	cpu_set_t saved;

	cb_watchdog_init(w, o->watchdog_limit_ns);
	w->cpu = o->cpus[0];
	if (o->test_watchdog_file) {
		if (open_standin(&d, o->test_watchdog_file) < 0)
			return -1;
	} else if (open_hpet(&d, hpet_why, sizeof hpet_why) < 0 && open_acpi_pm(&d, pm_why, sizeof pm_why) < 0) {
		cb_read_line(CB_CS_SYSFS "/available_clocksource", avail, sizeof avail);
		snprintf(w->unavailable, sizeof w->unavailable,
			 "neither device can be read (%s; ACPI PM timer: %s); clocksources here: %s", hpet_why,
			 pm_why, avail[0] ? avail : "unknown");
		return 1;
	}
	w->device = devices[d.kind];
	w->how = hows[d.kind];

	if (sched_getaffinity(0, sizeof saved, &saved) < 0 || cb_pin(w->cpu) < 0) {
		rc = -1;
		goto out;
	}
	atomic_store(&stop, 0);
	for (i = 1; o->load && i < o->ncpus; i++) {
		load[nload] = (struct loader){ .cpu = o->cpus[i], .stop = &stop };
		if (pthread_create(&load[nload].tid, NULL, load_main, &load[nload]) == 0)
			nload++;
	}
	w->load = nload > 0;
	if (o->load && !nload)
		cb_warn("--load: no other CPU among --cpus to load; measuring without load");

	use_irq = cpu_interrupts(w->cpu) >= 0;
	w->interrupts_from = use_irq ? "this CPU's /proc/interrupts, the thread's context switches by getrusage"
				     : "the thread's context switches by getrusage; /proc/interrupts unreadable";
	batch_ticks = (uint64_t)(BATCH_NS * tpn);
	start = cb_rdtsc();
	end = start + (uint64_t)(o->duration * 1e9 * tpn);
	for (;;) {
		uint64_t now = cb_rdtsc(), events = 0;
		int n;
		if (now >= end || (d.kind == WD_FILE && d.pos >= d.nsched))
			break;
		irq0 = use_irq ? cpu_interrupts(w->cpu) : 0;
		cs0 = context_switches();
		n = readout_batch(&d, ticks, now + batch_ticks < end ? now + batch_ticks : end);
		cs1 = context_switches();
		irq1 = use_irq ? cpu_interrupts(w->cpu) : 0;
		if (cs0 >= 0 && cs1 > cs0)
			events += (uint64_t)(cs1 - cs0);
		if (irq0 >= 0 && irq1 > irq0)
			events += (uint64_t)(irq1 - irq0);
		for (i = 0; i < n; i++)
			ticks[i] = (uint64_t)((double)ticks[i] / tpn + 0.5);
		cb_watchdog_batch(w, ticks, n, events);
	}
	w->seconds = (double)(cb_rdtsc() - start) / tpn / 1e9;
	cb_watchdog_finish(w);
	sched_setaffinity(0, sizeof saved, &saved);
out:
	atomic_store(&stop, 1);
	for (i = 0; i < nload; i++)
		pthread_join(load[i].tid, NULL);
	if (d.map)
		munmap(d.map, d.maplen);
	return rc;
}
