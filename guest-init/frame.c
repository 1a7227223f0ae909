/* frame.c: writes the results channel's frames (frame.h, docs/guest.md). */
#include "frame.h"

#include <errno.h>
#include <stdio.h>
#include <termios.h>
#include <unistd.h>

/* CRC-32 of zlib (polynomial 0xEDB88320). */
static uint32_t frame_crc32(const void *data, size_t n)
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
		if (w < 0)
			return -1;
		if (w == 0) {
			errno = EIO;
			return -1;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int frame_hello(struct frame_chan *c, long uptime_ms)
{
	char line[64];
	int n = snprintf(line, sizeof line, "\nCLOCKBENCH-HELLO v1 uptime_ms=%ld\n", uptime_ms);

	if (write_all(c->fd, line, (size_t)n))
		return -1;
	tcdrain(c->fd);
	return 0;
}

int frame_send(struct frame_chan *c, const char *kind, const char *payload, size_t len)
{
	char head[160], tail[64];
	int hn, tn;

	if (c->fd < 0) {
		errno = EBADF;
		return -1;
	}
	c->seq++;
	hn = snprintf(head, sizeof head, "\nCLOCKBENCH-BEGIN v1 kind=%s seq=%u len=%zu crc32=%08x\n", kind, c->seq,
		      len, frame_crc32(payload, len));
	tn = snprintf(tail, sizeof tail, "\nCLOCKBENCH-END seq=%u\n", c->seq);
	if (write_all(c->fd, head, (size_t)hn) || write_all(c->fd, payload, len) ||
	    write_all(c->fd, tail, (size_t)tn))
		return -1;
	tcdrain(c->fd);
	return 0;
}
