/* duration.c: cb_parse_duration(): a time span, a number and a unit. */
#include "duration.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int cb_parse_duration(const char *s, double *sec)
{
	static const struct { const char *name; double mul, div; } units[] = {
		{ "", 1, 1 }, { "s", 1, 1 }, { "ms", 1, 1e3 }, { "us", 1, 1e6 }, { "m", 60, 1 }, { "h", 3600, 1 },
	};
	char num[40];
	size_t i = 0, n, digits;
	double v;
	char *end;

	/* digits, then optionally '.' and digits: checked by hand, so that
	 * strtod never sees a sign, a space, hex, an exponent, inf or nan */
	digits = strspn(s, "0123456789");
	i = digits;
	if (s[i] == '.') {
		n = strspn(s + i + 1, "0123456789");
		if (!n)
			return -1;
		i += 1 + n;
	} else if (!digits) {
		return -1;
	}
	if (i >= sizeof num)
		return -1;
	memcpy(num, s, i);
	num[i] = 0;
	for (n = 0; n < sizeof units / sizeof units[0]; n++)
		if (!strcmp(s + i, units[n].name))
			break;
	if (n == sizeof units / sizeof units[0])
		return -1;
	errno = 0;
	v = strtod(num, &end);
	if (errno || *end || !isfinite(v))
		return -1;
	/* division, not a multiplication by 1e-3: 500ms is 0.5 exactly */
	*sec = v * units[n].mul / units[n].div;
	return 0;
}
