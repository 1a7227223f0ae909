/* util.c: diagnostics, progress, small file readers and atomic output. */
#include "clockbench.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cb_quiet;

void cb_warn(const char *fmt, ...)
{
	va_list ap;
	char buf[1024];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "clockbench: %s\n", buf);
}

void cb_progress(const char *fmt, ...)
{
	va_list ap;
	char buf[512];

	if (cb_quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fprintf(stderr, "clockbench: %s\n", buf);
}

/* Reads the first line of path into buf without its newline.
 * Returns 0, or -1 with errno set. */
int cb_read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "re");
	size_t len;

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
