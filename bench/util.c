/* util.c: diagnostics, progress, small file readers and atomic output. */
#include "clockbench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

int cb_quiet;
int cb_progress_mode;

/* none: nothing; steps: a line a step (pipes, logs); tty: one line redrawn
 * in place and cleared when done; cells: a line a cell. */
enum mode { M_NONE, M_STEPS, M_TTY, M_CELLS }; /* --progress names them (opts.c, progress_names) */
static enum mode mode = M_STEPS;
static int shown;         /* mode tty: a line is on the screen */
static double last_line;  /* mode steps: CLOCK_MONOTONIC seconds of the last line */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int cb_progress_setup(void)
{
	mode = cb_progress_mode ? (enum mode)(cb_progress_mode - 1) : isatty(STDERR_FILENO) ? M_TTY : M_STEPS;
	if (cb_quiet)
		mode = M_NONE;
	return 0;
}

void cb_progress_end(void)
{
	if (shown)
		fputs("\r\033[K", stderr);
	shown = 0;
}

/* Writes "clockbench: MSG" as a line, or in mode tty in place, cut to the
 * terminal's width (a line that wrapped could not be redrawn); nothing in
 * mode none, nor for a cell in mode steps within 10 s of the last line. */
static void put(int cell, const char *fmt, va_list ap)
{
	char buf[512];
	struct winsize ws;
	int w = 80;

	if (cb_quiet || mode == M_NONE || (cell && mode == M_STEPS && now_s() - last_line < 10))
		return;
	vsnprintf(buf, sizeof buf, fmt, ap);
	if (mode != M_TTY) {
		cb_progress_end();
		fprintf(stderr, "clockbench: %s\n", buf);
		last_line = now_s();
		return;
	}
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		w = ws.ws_col;
	fprintf(stderr, "\r\033[Kclockbench: %.*s", w - 13, buf);
	shown = 1;
}

void cb_warn(const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	cb_progress_end();
	fprintf(stderr, "clockbench: %s\n", buf);
}

void cb_progress(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put(0, fmt, ap);
	va_end(ap);
}

void cb_progress_cell(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	put(1, fmt, ap);
	va_end(ap);
}

/* Reads the first line of path into buf without its newline.
 * Returns 0, or -1 with errno set and buf "". */
int cb_read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	size_t len;

	buf[0] = '\0';
	if (!f)
		return -1;
	if (!fgets(buf, (int)n, f)) {
		fclose(f);
		buf[0] = '\0';
		errno = EIO;
		return -1;
	}
	fclose(f);
	len = strlen(buf);
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == ' '))
		buf[--len] = '\0';
	return 0;
}

void cb_iso_time(char *buf, size_t n)
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void cb_append(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	va_list ap;

	if (len + 1 >= n)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}
