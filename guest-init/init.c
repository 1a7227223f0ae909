/* init.c: PID 1 of the clockbench guest: runs the engine, frames its JSON
 * onto a serial line apart from the console, and powers the guest off. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/io.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "clockbench.h"

/* Guest exit codes for isa-debug-exit (QEMU exits with (code << 1) | 1).
 * The table is in docs/guest.md; keep the two in step. */
enum {
	GX_ENGINE = 1,  /* engine returned non-zero: QEMU status 3 */
	GX_SETUP = 2,   /* mount, channel or fork failed: 5 */
	GX_SIGNAL = 3,  /* engine killed by a signal: 7 */
	GX_PARAM = 4,   /* bad clockbench.* parameter: 9 */
	GX_OUTPUT = 5,  /* engine output missing or unreadable: 11 */
};
#define DEBUG_EXIT_PORT 0xf4
#define RESULT_PATH "/tmp/r.json"
#define ENGINE_ERR "/tmp/engine.err"
#define MAX_OUTPUT (16u << 20)
#define MAX_LOGLINES 64

struct params {
	const char *threads, *duration, *clock, *method, *check, *cpus, *channel;
	int cost, probe, verbose, shell;
};

static int chan = -1;   /* results channel, raw */
static unsigned seq;    /* frames sent so far */
static char *eargv[32]; /* the engine's argv, kept for the result */
static int eargc;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	dprintf(2, "clockbench-init: %s\n", buf);
}

static long uptime_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* ---- output: JSON with escaping in one place ---- */

static void jesc(FILE *f, const char *s)
{
	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void jkey(FILE *f, int *first, const char *k)
{
	if (!*first)
		fputc(',', f);
	*first = 0;
	if (k) {
		jesc(f, k);
		fputc(':', f);
	}
}

static void jstr(FILE *f, int *first, const char *k, const char *v)
{
	jkey(f, first, k);
	jesc(f, v);
}

static void jint(FILE *f, int *first, const char *k, long long v)
{
	jkey(f, first, k);
	fprintf(f, "%lld", v);
}

static void jbool(FILE *f, int *first, const char *k, int v)
{
	jkey(f, first, k);
	fputs(v < 0 ? "null" : v ? "true" : "false", f);
}

/* ---- framing ---- */

static uint32_t crc32(const void *data, size_t n)
{
	static uint32_t t[256];
	const unsigned char *p = data;
	uint32_t c = 0xffffffffu;
	if (!t[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t v = i;
			for (int k = 0; k < 8; k++)
				v = v & 1 ? 0xedb88320u ^ (v >> 1) : v >> 1;
			t[i] = v;
		}
	while (n--)
		c = t[(c ^ *p++) & 0xff] ^ (c >> 8);
	return c ^ 0xffffffffu;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Sends one frame: a header line with kind, sequence number, byte length
 * and CRC-32 of the payload, the payload, and an end line naming the same
 * sequence number.  The format is in docs/guest.md. */
static void send_frame(const char *kind, const char *payload, size_t len)
{
	char head[160], tail[64];
	if (chan < 0)
		return;
	seq++;
	int hn = snprintf(head, sizeof head, "\nCLOCKBENCH-BEGIN v1 kind=%s seq=%u len=%zu crc32=%08x\n",
			  kind, seq, len, crc32(payload, len));
	int tn = snprintf(tail, sizeof tail, "\nCLOCKBENCH-END seq=%u\n", seq);
	if (write_all(chan, head, (size_t)hn) || write_all(chan, payload, len) ||
	    write_all(chan, tail, (size_t)tn))
		say("write results channel: %s", strerror(errno));
	tcdrain(chan);
}

/* Ends the guest: QEMU exits with (code << 1) | 1 through isa-debug-exit
 * when code is non-zero and the device exists; otherwise, and for code 0,
 * a power-off or reboot (QEMU status 0 under -no-reboot).  Never returns. */
static void __attribute__((noreturn)) finish(int code)
{
	sync();
	if (code && ioperm(DEBUG_EXIT_PORT, 1, 1) == 0)
		outb((unsigned char)code, DEBUG_EXIT_PORT);
	/* Without ACPI (microvm,acpi=off) power-off only halts; a reboot ends
	 * QEMU under -no-reboot (and libvirt's on_reboot=destroy) instead. */
	if (access("/sys/firmware/acpi", F_OK) == 0)
		reboot(RB_POWER_OFF);
	else
		reboot(RB_AUTOBOOT);
	say("reboot: %s", strerror(errno));
	for (;;)
		pause();
}

/* Reports a failure in-band as a kind=error frame, then ends the guest. */
static void __attribute__((noreturn)) fail(int code, const char *stage, const char *fmt, ...)
{
	char msg[512], *buf = NULL;
	size_t len = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	say("%s", msg);
	FILE *f = open_memstream(&buf, &len);
	if (f) {
		int first = 1;
		fputc('{', f);
		jstr(f, &first, "schema", "clockbench-guest-error/1");
		jstr(f, &first, "stage", stage);
		jstr(f, &first, "error", msg);
		jint(f, &first, "exit_code", code);
		jint(f, &first, "uptime_ms", uptime_ms());
		fputc('}', f);
		if (fclose(f) == 0)
			send_frame("error", buf, len);
		free(buf);
	}
	finish(code);
}

/* ---- setup ---- */

static void mount_one(const char *src, const char *dir, const char *type, unsigned long fl, const char *data)
{
	if (mkdir(dir, 0755) && errno != EEXIST)
		fail(GX_SETUP, "setup", "mkdir %s: %s", dir, strerror(errno));
	if (mount(src, dir, type, fl, data) && errno != EBUSY)
		fail(GX_SETUP, "setup", "mount %s: %s", dir, strerror(errno));
}

/* Opens /dev/NAME in raw mode so the payload's bytes pass unchanged. */
static int open_channel(const char *name)
{
	char path[64];
	struct termios t;
	snprintf(path, sizeof path, "/dev/%s", name);
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		say("open %s: %s", path, strerror(errno));
		return -1;
	}
	if (tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		cfsetospeed(&t, B115200);
		tcsetattr(fd, TCSANOW, &t);
	}
	return fd;
}

/* ---- parameters from /proc/cmdline ---- */

/* Values reach the engine's argv: letters, digits and ",._-", never a
 * leading "-" that could read as an option. */
static int valid_value(const char *v)
{
	const char *first = v;
	if (!*v)
		return 0;
	for (; *v; v++)
		if (!isalnum((unsigned char)*v) && (v == first || !strchr(",.-_", *v)))
			return 0;
	return 1;
}

/* Fills *p from the clockbench.KEY=VALUE words of the kernel command line
 * in buf (modified in place).  Returns NULL, or an error message naming the
 * first unknown key or bad value. */
static const char *parse_cmdline(char *buf, struct params *p, char *err, size_t errn)
{
	static const char *const strkeys[] = { "threads", "duration", "clock", "method", "check", "cpus", "channel" };
	const char **strvals[] = { &p->threads, &p->duration, &p->clock, &p->method, &p->check, &p->cpus, &p->channel };
	static const char *const flagkeys[] = { "cost", "probe", "verbose", "shell" };
	int *flagvals[] = { &p->cost, &p->probe, &p->verbose, &p->shell };

	for (char *save = NULL, *w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save)) {
		if (strncmp(w, "clockbench.", 11))
			continue;
		char *k = w + 11, *v = strchr(k, '=');
		if (!v) {
			snprintf(err, errn, "clockbench.%s: expected clockbench.KEY=VALUE", k);
			return err;
		}
		*v++ = 0;
		size_t i;
		for (i = 0; i < sizeof strkeys / sizeof *strkeys; i++)
			if (!strcmp(k, strkeys[i]))
				break;
		if (i < sizeof strkeys / sizeof *strkeys) {
			if (!valid_value(v)) {
				snprintf(err, errn, "clockbench.%s=%s: bad value", k, v);
				return err;
			}
			*strvals[i] = v;
			continue;
		}
		for (i = 0; i < sizeof flagkeys / sizeof *flagkeys; i++)
			if (!strcmp(k, flagkeys[i]))
				break;
		if (i == sizeof flagkeys / sizeof *flagkeys) {
			snprintf(err, errn, "clockbench.%s: unknown parameter", k);
			return err;
		}
		if (strcmp(v, "0") && strcmp(v, "1")) {
			snprintf(err, errn, "clockbench.%s=%s: expected 0 or 1", k, v);
			return err;
		}
		*flagvals[i] = *v == '1';
	}
	return NULL;
}

/* ---- guest facts ---- */

static void read_line(const char *path, char *buf, size_t n)
{
	buf[0] = 0;
	FILE *f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)n, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

static void cpuid(uint32_t leaf, uint32_t r[4])
{
	__asm__ __volatile__("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(0));
}

struct logfacts {
	int n;
	char line[MAX_LOGLINES][200];
	int kvmclock, sched_stable, tsc_unstable, tsc_warp;
	char switched_to[64];
};

/* Kernel log lines that tell which clock path the guest took. */
static const char *const log_patterns[] = {
	"kvm-clock", "sched_clock: Marking stable", "Marking TSC unstable", "clocksource: Switched",
	"TSC warp", "as unstable", "tsc: Refined TSC", "tsc: Detected", "Hypervisor detected",
	"clocksource: Watchdog", "clocksource: timekeeping watchdog",
};

static void log_match(struct logfacts *lf, const char *msg)
{
	size_t i;
	for (i = 0; i < sizeof log_patterns / sizeof *log_patterns; i++)
		if (strstr(msg, log_patterns[i]))
			break;
	if (i == sizeof log_patterns / sizeof *log_patterns)
		return;
	if (strstr(msg, "kvm-clock"))
		lf->kvmclock = 1;
	if (strstr(msg, "sched_clock: Marking stable"))
		lf->sched_stable = 1;
	if (strstr(msg, "Marking TSC unstable") || strstr(msg, "'tsc' as unstable"))
		lf->tsc_unstable = 1;
	if (strstr(msg, "TSC warp"))
		lf->tsc_warp = 1;
	const char *s = strstr(msg, "Switched to clocksource ");
	if (s)
		snprintf(lf->switched_to, sizeof lf->switched_to, "%.*s", (int)strcspn(s + 24, " \n"), s + 24);
	if (lf->n < MAX_LOGLINES)
		snprintf(lf->line[lf->n++], sizeof lf->line[0], "%s", msg);
}

/* Collects the matching kernel log lines from /dev/kmsg, or from klogctl
 * where /dev/kmsg cannot be read.  Returns the source used, or NULL. */
static const char *collect_log(struct logfacts *lf)
{
	char rec[2048];
	memset(lf, 0, sizeof *lf);
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		for (;;) {
			ssize_t r = read(fd, rec, sizeof rec - 1);
			if (r < 0 && errno == EPIPE)
				continue; /* records overwritten: go on with the next */
			if (r <= 0)
				break;
			rec[r] = 0;
			char *msg = strchr(rec, ';');
			if (!msg)
				continue;
			msg++;
			msg[strcspn(msg, "\n")] = 0;
			log_match(lf, msg);
		}
		close(fd);
		return "/dev/kmsg";
	}
	int n = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	char *buf = n > 0 ? malloc((size_t)n + 1) : NULL;
	if (!buf)
		return NULL;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, n);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *m = strchr(l, ']');
		log_match(lf, m ? m + 1 + (m[1] == ' ') : l);
	}
	free(buf);
	return "klogctl";
}

/* Writes the "guest" object: clocksources before and after the engine,
 * kernel log verdicts, and what CPUID shows the guest. */
static void write_facts(FILE *f, const char *cs_before, const struct params *p, long t_init, long t_engine,
			int status)
{
	char cs[64], avail[256], sig[13] = "";
	struct utsname u;
	struct logfacts *lf = calloc(1, sizeof *lf);
	const char *logsrc = lf ? collect_log(lf) : NULL;
	uint32_t r[4];
	int first = 1, hv = 0, invtsc = 0, kvm_valid = 0;
	uint32_t kvm_feat = 0;

	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs, sizeof cs);
	read_line("/sys/devices/system/clocksource/clocksource0/available_clocksource", avail, sizeof avail);
	cpuid(1, r);
	hv = (int)(r[2] >> 31 & 1);
	cpuid(0x80000000u, r);
	if (r[0] >= 0x80000007u) {
		cpuid(0x80000007u, r);
		invtsc = (int)(r[3] >> 8 & 1);
	}
	if (hv) {
		cpuid(0x40000000u, r);
		memcpy(sig, &r[1], 4);
		memcpy(sig + 4, &r[2], 4);
		memcpy(sig + 8, &r[3], 4);
		sig[12] = 0;
		for (char *c = sig; *c; c++)
			if (!isprint((unsigned char)*c))
				*c = '?';
		if (!strcmp(sig, "KVMKVMKVM") && r[0] >= 0x40000001u) {
			cpuid(0x40000001u, r);
			kvm_valid = 1;
			kvm_feat = r[0];
		}
	}
	if (uname(&u))
		memset(&u, 0, sizeof u);

	fputc('{', f);
	jstr(f, &first, "kernel", u.release);
	jint(f, &first, "vcpus_online", sysconf(_SC_NPROCESSORS_ONLN));
	jstr(f, &first, "clocksource_before", cs_before);
	jstr(f, &first, "clocksource", cs);
	jstr(f, &first, "available_clocksource", avail);
	jbool(f, &first, "hypervisor_bit", hv);
	jstr(f, &first, "hypervisor", hv ? sig : NULL);
	jbool(f, &first, "invtsc", invtsc);
	jbool(f, &first, "kvm_features_valid", kvm_valid);
	jint(f, &first, "kvm_features", kvm_feat);
	jbool(f, &first, "kvmclock_advertised", kvm_valid ? (int)((kvm_feat & 1) | (kvm_feat >> 3 & 1)) : -1);
	jbool(f, &first, "kvm_stable_bit_advertised", kvm_valid ? (int)(kvm_feat >> 24 & 1) : -1);
	jkey(f, &first, "log");
	fputc('{', f);
	int lfirst = 1;
	jstr(f, &lfirst, "source", logsrc);
	jbool(f, &lfirst, "kvm_clock", lf && logsrc ? lf->kvmclock : -1);
	jbool(f, &lfirst, "sched_clock_marked_stable", lf && logsrc ? lf->sched_stable : -1);
	jbool(f, &lfirst, "tsc_marked_unstable", lf && logsrc ? lf->tsc_unstable : -1);
	jbool(f, &lfirst, "tsc_warp", lf && logsrc ? lf->tsc_warp : -1);
	jstr(f, &lfirst, "switched_to", lf && lf->switched_to[0] ? lf->switched_to : NULL);
	jkey(f, &lfirst, "lines");
	fputc('[', f);
	int afirst = 1;
	for (int i = 0; lf && i < lf->n; i++)
		jstr(f, &afirst, NULL, lf->line[i]);
	fputs("]}", f);
	jstr(f, &first, "channel", p->channel);
	jkey(f, &first, "engine_argv");
	fputc('[', f);
	int vfirst = 1;
	for (int i = 0; i < eargc; i++)
		jstr(f, &vfirst, NULL, eargv[i]);
	fputc(']', f);
	jint(f, &first, "uptime_ms_init", t_init);
	jint(f, &first, "uptime_ms_engine_start", t_engine);
	jint(f, &first, "uptime_ms_engine_end", uptime_ms());
	jint(f, &first, "engine_status", status);
	fputc('}', f);
	free(lf);
}

/* ---- the engine ---- */

/* Runs clockbench_main in a child so that an exit() or a crash inside the
 * engine cannot end PID 1.  Returns the raw wait status, or -1. */
static int run_engine(const struct params *p, char *threads_default)
{
	char **argv = eargv;
	int argc = 0;
	argv[argc++] = "clockbench";
	argv[argc++] = "--format";
	argv[argc++] = "json";
	argv[argc++] = "--output";
	argv[argc++] = RESULT_PATH;
	argv[argc++] = "--threads";
	argv[argc++] = (char *)(p->threads ? p->threads : threads_default);
	argv[argc++] = "--duration";
	argv[argc++] = (char *)(p->duration ? p->duration : "0.5");
	argv[argc++] = "--check";
	argv[argc++] = (char *)(p->check ? p->check : "all");
	if (p->clock) {
		argv[argc++] = "--clock";
		argv[argc++] = (char *)p->clock;
	}
	if (p->method) {
		argv[argc++] = "--method";
		argv[argc++] = (char *)p->method;
	}
	if (p->cpus) {
		argv[argc++] = "--cpus";
		argv[argc++] = (char *)p->cpus;
	}
	if (!p->cost)
		argv[argc++] = "--no-cost";
	if (!p->verbose)
		argv[argc++] = "--quiet";
	argv[argc] = NULL;
	eargc = argc;

	dprintf(2, "clockbench-init: running");
	for (int i = 0; i < argc; i++)
		dprintf(2, " %s", argv[i]);
	dprintf(2, "\n");

	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(ENGINE_ERR, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd >= 0)
			dup2(fd, 2);
		optind = 1;
		_exit(clockbench_main(argc, argv));
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return st;
}

/* Copies the engine's stderr to the console; last gets its last line. */
static void engine_stderr(char *last, size_t n)
{
	char line[512];
	last[0] = 0;
	FILE *f = fopen(ENGINE_ERR, "re");
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		dprintf(2, "%s", line);
		line[strcspn(line, "\n")] = 0;
		if (*line)
			snprintf(last, n, "%s", line);
	}
	fclose(f);
}

/* Reads the whole of path into a new buffer; *len gets its size. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || st.st_size <= 0 || (uint64_t)st.st_size > MAX_OUTPUT) {
		close(fd);
		errno = EFBIG;
		return NULL;
	}
	char *buf = malloc((size_t)st.st_size + 1);
	size_t n = 0;
	while (buf && n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		n += (size_t)r;
	}
	close(fd);
	if (buf) {
		buf[n] = 0;
		*len = n;
	}
	return buf;
}

int main(void)
{
	struct params p = { .channel = "ttyS1", .cost = 1 };
	char cmdline[4096], cs_before[64], err[256], threads_default[32];
	long t_init = uptime_ms();

	if (fcntl(2, F_GETFD) < 0) {
		int fd = open("/dev/console", O_RDWR | O_NOCTTY);
		if (fd >= 0 && fd != 2) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
	}
	mount_one("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_one("sysfs", "/sys", "sysfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	mount_one("devtmpfs", "/dev", "devtmpfs", MS_NOSUID, "mode=0755");
	mount_one("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777");

	read_line("/proc/cmdline", cmdline, sizeof cmdline);
	/* The channel comes first so that a bad parameter can be reported on it. */
	for (char *c = strstr(cmdline, "clockbench.channel="); c; c = NULL) {
		static char name[32];
		snprintf(name, sizeof name, "%.*s", (int)strcspn(c + 19, " \n"), c + 19);
		if (valid_value(name))
			p.channel = name;
	}
	chan = open_channel(p.channel);
	if (chan < 0)
		fail(GX_SETUP, "setup", "no results channel /dev/%s", p.channel);
	dprintf(chan, "\nCLOCKBENCH-HELLO v1 uptime_ms=%ld\n", t_init);
	tcdrain(chan);
	say("up at %ld ms; results on /dev/%s", t_init, p.channel);

	char parsebuf[sizeof cmdline];
	memcpy(parsebuf, cmdline, sizeof cmdline);
	if (parse_cmdline(parsebuf, &p, err, sizeof err))
		fail(GX_PARAM, "params", "%s", err);
	if (p.probe)
		finish(0);

	snprintf(threads_default, sizeof threads_default, "1-%ld", sysconf(_SC_NPROCESSORS_ONLN));
	read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cs_before, sizeof cs_before);
	long t_engine = uptime_ms();
	int st = run_engine(&p, threads_default);
	if (st < 0)
		fail(GX_SETUP, "engine", "fork: %s", strerror(errno));
	char last[512];
	engine_stderr(last, sizeof last);
	if (WIFSIGNALED(st))
		fail(GX_SIGNAL, "engine", "engine killed by signal %d (%s)%s%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
		     *last ? ": " : "", last);
	if (WEXITSTATUS(st))
		fail(GX_ENGINE, "engine", "engine exited with status %d%s%s", WEXITSTATUS(st), *last ? ": " : "", last);

	size_t blen = 0;
	char *bench = slurp(RESULT_PATH, &blen);
	if (!bench)
		fail(GX_OUTPUT, "output", "read %s: %s", RESULT_PATH, strerror(errno));
	while (blen && isspace((unsigned char)bench[blen - 1]))
		bench[--blen] = 0;
	if (!blen || bench[0] != '{')
		fail(GX_OUTPUT, "output", "%s: not a JSON object", RESULT_PATH);

	char *out = NULL;
	size_t olen = 0;
	FILE *f = open_memstream(&out, &olen);
	if (!f)
		fail(GX_SETUP, "output", "open_memstream: %s", strerror(errno));
	fputs("{\"schema\":\"clockbench-guest/1\",\"guest\":", f);
	write_facts(f, cs_before, &p, t_init, t_engine, WEXITSTATUS(st));
	fputs(",\"bench\":", f);
	fwrite(bench, 1, blen, f);
	fputs("}\n", f);
	if (fclose(f))
		fail(GX_SETUP, "output", "open_memstream: %s", strerror(errno));
	free(bench);
	send_frame("result", out, olen);
	say("result sent (%zu bytes) at %ld ms", olen, uptime_ms());
	if (p.shell) {
		/* DEBUG=1 images only: a shell on the console instead of power-off. */
		execl("/bin/sh", "sh", (char *)NULL);
		say("exec /bin/sh: %s", strerror(errno));
	}
	finish(0);
}
