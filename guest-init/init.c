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
#include <net/if.h>
#include <sys/io.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "clockbench.h"
#include "exit-codes.h"
#include "facts.h"
#include "frame.h"
#include "params.h"
#include "settle.h"

#define RESULT_PATH "/tmp/r.json"
#define ENGINE_ERR "/tmp/engine.err"
#define MAX_OUTPUT (16u << 20)

static struct frame_chan chan = { .fd = -1 }; /* the results channel */
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

/* Ends the guest: QEMU exits with (code << 1) | 1 through isa-debug-exit
 * when code is non-zero and the device exists; otherwise, and for code 0,
 * a power-off or reboot (QEMU status 0 under -no-reboot).  Never returns. */
static void __attribute__((noreturn)) finish(int code)
{
	sync();
	if (code && ioperm(CB_DEBUG_EXIT_PORT, 1, 1) == 0)
		outb((unsigned char)code, CB_DEBUG_EXIT_PORT);
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

/* Sends a frame, saying on the console when the channel fails. */
static void channel_send(const char *kind, const char *payload, size_t len)
{
	if (frame_send(&chan, kind, payload, len))
		say("write results channel: %s", strerror(errno));
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
		struct cb_json j;
		cb_json_begin(&j, f);
		cb_json_obj(&j, NULL);
		cb_json_str(&j, "schema", "clockbench-guest-error/1");
		cb_json_str(&j, "stage", stage);
		cb_json_str(&j, "error", msg);
		cb_json_int(&j, "exit_code", code);
		cb_json_int(&j, "uptime_ms", uptime_ms());
		cb_json_end_obj(&j);
		if (fclose(f) == 0 && chan.fd >= 0)
			channel_send("error", buf, len);
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

/* Brings the loopback interface up (the kernel then gives it 127.0.0.1),
 * for the engine's TCP workloads; says so on the console if it cannot, and
 * those workloads then fail with a line of their own. */
static void loopback_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&ifr, 0, sizeof ifr);
	strcpy(ifr.ifr_name, "lo");
	if (fd < 0 || ioctl(fd, SIOCGIFFLAGS, &ifr) < 0 ||
	    (!(ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags |= IFF_UP, ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)))
		say("loopback lo not brought up: %s", strerror(errno));
	if (fd >= 0)
		close(fd);
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

/* ---- the clocksource wait ---- */

static long io_now(void *arg)
{
	return uptime_ms();
}

static void io_nap(void *arg, long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Waits until the kernel's clocksource has settled (settle.h), at most
 * limit_ms, and says on the console how the wait ended. */
static void settle(struct settle *s, long limit_ms)
{
	struct settle_io io = { CB_CS_SYSFS, -1, io_now, io_nap, NULL };

	io.log_fd = open(CB_KMSG_DEV, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	settle_wait(s, &io, limit_ms, SETTLE_QUIET_MS);
	if (io.log_fd >= 0)
		close(io.log_fd);
	say("clocksource %s after %ld ms: %s -> %s%s", settle_end_name(s->end), s->last_ms - s->start_ms,
	    s->from[0] ? s->from : "?", s->current[0] ? s->current : "?",
	    s->end == SETTLE_TIMEOUT ? " (not settled: measuring anyway)" : "");
}

/* ---- the engine ---- */

/* Runs clockbench_main in a child so that an exit() or a crash inside the
 * engine cannot end PID 1.  Returns the raw wait status, or -1. */
static int run_engine(const struct params *p, char *threads_default)
{
	/* Each option with its value: the parameter's, else the default;
	 * left out where it has neither (NULL). */
	const char *const opts[][2] = {
		{ "--format", "json" },
		{ "--output", RESULT_PATH },
		{ "--threads", p->threads ? p->threads : threads_default },
		{ "--duration", p->duration ? p->duration : "0.5" },
		{ "--check", p->check ? p->check : "all" },
		{ "--clocks", p->clock },
		{ "--methods", p->method },
		{ "--cpus", p->cpus },
		{ "--workloads", p->workload },
	};
	char **argv = eargv;
	int argc = 0;
	argv[argc++] = "clockbench";
	for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
		if (opts[i][1]) {
			argv[argc++] = (char *)opts[i][0];
			argv[argc++] = (char *)opts[i][1];
		}
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

/* Runs the engine once and sends its result, framed with the guest's facts;
 * a failure ends the guest (fail()). */
static void measure(const struct params *p, char *threads_default, const struct cb_context *ctx,
		    struct settle *swp, long t_init)
{
	struct gf_log *log;
	unlink(RESULT_PATH); /* the engine never replaces a file: a repeat's result is a new one */
	long t_engine = uptime_ms();
	int st = run_engine(p, threads_default);
	long t_end = uptime_ms();
	if (st < 0)
		fail(GX_SETUP, "engine", "fork: %s", strerror(errno));
	char last[512];
	engine_stderr(last, sizeof last);
	if (WIFSIGNALED(st))
		fail(GX_SIGNAL, "engine", "engine killed by signal %d (%s)%s%s", WTERMSIG(st), strsignal(WTERMSIG(st)),
		     *last ? ": " : "", last);
	if (WEXITSTATUS(st))
		fail(GX_ENGINE, "engine", "engine exited with status %d%s%s", WEXITSTATUS(st), *last ? ": " : "", last);

	size_t blen = 0, olen = 0;
	char *bench = slurp(RESULT_PATH, &blen);
	if (!bench)
		fail(GX_OUTPUT, "output", "read %s: %s", RESULT_PATH, strerror(errno));
	while (blen && isspace((unsigned char)bench[blen - 1]))
		bench[--blen] = 0;
	if (!blen || bench[0] != '{')
		fail(GX_OUTPUT, "output", "%s: not a JSON object", RESULT_PATH);

	log = calloc(1, sizeof *log);
	if (!log)
		fail(GX_SETUP, "output", "calloc: %s", strerror(errno));
	gf_log_read(log);
	/* The clock lines of the kernel's log, copied to the console: under
	 * `quiet` the kernel prints them only to its buffer, and a console at
	 * loglevel 7 would cost a nested guest minutes of serial output. */
	static int said; /* once: a repeating guest would say them again and again */
	for (int i = 0; !said && i < log->n; i++)
		say("kernel: %s", log->line[i]);
	said = 1;
	struct gf_facts g = {
		.clocksource_before = ctx->clocksource[0] ? ctx->clocksource : NULL,
		.settle = swp,
		.channel = p->channel,
		.engine_argv = eargv,
		.engine_argc = eargc,
		.uptime_ms_init = t_init,
		.uptime_ms_engine_start = t_engine,
		.uptime_ms_engine_end = t_end,
		.engine_status = WEXITSTATUS(st),
		.log = log,
	};
	char *out = gf_result_doc(&g, bench, blen, &olen);
	if (!out)
		fail(GX_SETUP, "output", "open_memstream: %s", strerror(errno));
	free(bench);
	channel_send("result", out, olen);
	say("result sent (%zu bytes) at %ld ms", olen, uptime_ms());
	free(out);
	free(log);
}

int main(void)
{
	struct params p = { .channel = "ttyS1", .cost = 1 };
	struct cb_context ctx = { 0 };
	char cmdline[4096], err[256], threads_default[32];
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

	cb_read_line("/proc/cmdline", cmdline, sizeof cmdline);
	/* The channel comes first so that a bad parameter can be reported on it. */
	static char channel[PARAMS_NAME_MAX];
	if (params_channel(cmdline, channel, sizeof channel))
		p.channel = channel;
	chan.fd = open_channel(p.channel);
	if (chan.fd < 0)
		fail(GX_SETUP, "setup", "no results channel /dev/%s", p.channel);
	if (frame_hello(&chan, t_init))
		say("write results channel: %s", strerror(errno));
	say("up at %ld ms; results on /dev/%s", t_init, p.channel);

	if (params_parse(cmdline, &p, err, sizeof err))
		fail(GX_PARAM, "params", "%s", err);
	if (p.probe)
		finish(0);

	/* Before the context: clocksource_before is what the engine starts on. */
	static struct settle sw;
	settle(&sw, p.settle ? atol(p.settle) * 1000 : SETTLE_LIMIT_MS);
	loopback_up();
	cb_context_collect(&ctx);
	snprintf(threads_default, sizeof threads_default, "1-%ld", ctx.cpus_online);
	measure(&p, threads_default, &ctx, &sw, t_init);
	/* clockbench.repeat=1: a guest that lives through the host's changes
	 * (the running-VM step) measures again and again, a result frame each,
	 * until the host powers it off. */
	while (p.repeat)
		measure(&p, threads_default, &ctx, &sw, t_init);
	if (p.shell) {
		/* DEBUG=1 images only: a shell on the console instead of power-off. */
		execl("/bin/sh", "sh", (char *)NULL);
		say("exec /bin/sh: %s", strerror(errno));
	}
	finish(0);
}
