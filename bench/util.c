/* util.c: diagnostics, progress, small file readers and atomic output. */
#include "clockbench.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

int cb_out_open(struct cb_out *out, const char *path)
{
	out->path = path;
	out->fd = -1;
	if (snprintf(out->tmp, sizeof out->tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof out->tmp) {
		cb_warn("%s: path too long", path);
		return -1;
	}
	out->fd = mkstemp(out->tmp);
	if (out->fd < 0) {
		cb_warn("cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int cb_out_commit(struct cb_out *out, const char *data, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t w = write(out->fd, data + off, len - off);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		off += (size_t)w;
	}
	if (fchmod(out->fd, 0644) < 0 || fsync(out->fd) < 0)
		goto fail;
	if (close(out->fd) < 0) {
		out->fd = -1;
		goto fail;
	}
	out->fd = -1;
	if (rename(out->tmp, out->path) < 0)
		goto fail;
	return 0;
fail:
	cb_warn("write %s: %s", out->path, strerror(errno));
	cb_out_abort(out);
	return -1;
}

void cb_out_abort(struct cb_out *out)
{
	if (out->fd >= 0)
		close(out->fd);
	out->fd = -1;
	if (out->tmp[0])
		unlink(out->tmp);
	out->tmp[0] = '\0';
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
