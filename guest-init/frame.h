/* frame.h: the results channel's frames, written by /init: the C twin of
 * the host's frame reader (host-scripts/cbhost).  Format: docs/guest.md. */
#ifndef CLOCKBENCH_FRAME_H
#define CLOCKBENCH_FRAME_H

#include <stddef.h>
#include <stdint.h>

struct frame_chan {
	int fd;       /* the channel, raw; -1 sends nothing */
	unsigned seq; /* frames sent so far */
};

/* The hello line: /init runs, at guest CLOCK_BOOTTIME uptime_ms.
 * Returns 0, or -1 with errno set. */
int frame_hello(struct frame_chan *c, long uptime_ms);

/* Sends one frame: a header line with kind, the next sequence number, the
 * payload's length and CRC-32, the payload, and an end line naming the same
 * sequence number; then waits for a tty to drain.  Returns 0, or -1 with
 * errno set. */
int frame_send(struct frame_chan *c, const char *kind, const char *payload, size_t len);

#endif
