/* params.c: libFuzzer target for /init's kernel-parameter parser: the
 * input as /proc/cmdline (cut at its first NUL, at most the 4095 bytes
 * /init reads).  params_parse must end in a result whose every value could
 * reach the engine's argv, or in a one-line message; and the channel /init
 * opens before parsing must be the one the parse ends with. */
#include "../guest-init/params.h"
#include "fuzz.h"

#include <ctype.h>
#include <stdint.h>
#include <string.h>

#define CMDLINE_MAX 4096 /* init.c's cmdline[] */
#define DEFAULT_CHANNEL "ttyS1"

static int inside(const char *s, const char *buf, size_t len)
{
	return s >= buf && s < buf + len;
}

/* What may reach the engine's argv, by docs/guest.md rather than by
 * params_valid_value(): letters, digits and ",._-", a letter or digit
 * first. */
static int argv_safe(const char *s)
{
	if (!isalnum((unsigned char)*s))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr(",._-", *s))
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char cmdline[CMDLINE_MAX], buf[CMDLINE_MAX];
	char err[256], name[PARAMS_NAME_MAX];
	struct params p = { .channel = DEFAULT_CHANNEL, .cost = 1 };
	size_t len = size < CMDLINE_MAX - 1 ? size : CMDLINE_MAX - 1;

	memcpy(cmdline, data, len);
	cmdline[len] = 0;
	len = strlen(cmdline);
	memcpy(buf, cmdline, len + 1);
	const char *channel = params_channel(cmdline, name, sizeof name);
	FUZZ_ASSERT(!strcmp(cmdline, buf)); /* params_channel leaves it alone */
	FUZZ_ASSERT(!channel || (channel == name && argv_safe(name)));
	memset(err, 'x', sizeof err);
	if (params_parse(buf, &p, err, sizeof err)) {
		FUZZ_ASSERT(memchr(err, 0, sizeof err) && *err && !strchr(err, '\n'));
		return 0;
	}
	const char *strs[] = { p.threads, p.duration, p.clock, p.method, p.check, p.cpus, p.channel,
			       p.workload };
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		FUZZ_ASSERT(!strs[i] || (argv_safe(strs[i]) && (inside(strs[i], buf, len) ||
									  !strcmp(strs[i], DEFAULT_CHANNEL))));
	FUZZ_ASSERT((unsigned)p.cost <= 1 && (unsigned)p.probe <= 1 && (unsigned)p.verbose <= 1 &&
		    (unsigned)p.shell <= 1);
	/* the results go where the result says they went */
	FUZZ_ASSERT(!strcmp(p.channel, channel ? channel : DEFAULT_CHANNEL));
	return 0;
}
