/* json.c: the one place JSON is written; commas and escaping live here. */
#include "clockbench.h"

#include <math.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlong form, no
 * surrogate, nothing past U+10FFFF), or 0. */
static int utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	int n, i;

	if (*p >= 0xc2 && *p <= 0xdf)
		n = 1;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 2, lo = *p == 0xe0 ? 0xa0 : lo, hi = *p == 0xed ? 0x9f : hi;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 3, lo = *p == 0xf0 ? 0x90 : lo, hi = *p == 0xf4 ? 0x8f : hi;
	else
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (i = 2; i <= n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n + 1;
}

/* s as a JSON string: quoted, escaped, valid UTF-8. */
static void cb_json_escape(FILE *f, const char *s)
{
	/* the bytes with a short escape, and the letter after the backslash */
	static const char shorts[] = "\"\\\n\r\t\b\f";
	static const char letters[] = "\"\\nrtbf";
	const unsigned char *p = (const unsigned char *)s;
	const char *e;
	int n;

	fputc('"', f);
	for (; *p; p++) {
		/* Control bytes escaped; invalid UTF-8 replaced, one U+FFFD a
		 * byte, so the output always parses, even strictly. */
		if ((e = strchr(shorts, *p))) {
			fprintf(f, "\\%c", letters[e - shorts]);
		} else if (*p < 0x20 || *p == 0x7f) {
			fprintf(f, "\\u%04x", *p);
		} else if (*p < 0x80) {
			fputc(*p, f);
		} else if ((n = utf8_len(p))) {
			fwrite(p, 1, (size_t)n, f);
			p += n - 1;
		} else {
			fputs("\\ufffd", f);
		}
	}
	fputc('"', f);
}

static void sep(struct cb_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = 1;
	if (key) {
		cb_json_escape(j->f, key);
		fputc(':', j->f);
	}
}

void cb_json_begin(struct cb_json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = 0;
}

static void open_(struct cb_json *j, const char *key, int c)
{
	sep(j, key);
	fputc(c, j->f);
	if (j->depth < 31)
		j->depth++;
	j->need_comma[j->depth] = 0;
}

void cb_json_obj(struct cb_json *j, const char *key) { open_(j, key, '{'); }
void cb_json_arr(struct cb_json *j, const char *key) { open_(j, key, '['); }

void cb_json_end_obj(struct cb_json *j)
{
	j->depth--;
	fputc('}', j->f);
	if (j->depth == 0)
		fputc('\n', j->f);
}

void cb_json_end_arr(struct cb_json *j)
{
	j->depth--;
	fputc(']', j->f);
}

void cb_json_str(struct cb_json *j, const char *key, const char *v)
{
	sep(j, key);
	if (v)
		cb_json_escape(j->f, v);
	else
		fputs("null", j->f);
}

void cb_json_int(struct cb_json *j, const char *key, long long v)
{
	sep(j, key);
	fprintf(j->f, "%lld", v);
}

void cb_json_uint(struct cb_json *j, const char *key, unsigned long long v)
{
	sep(j, key);
	fprintf(j->f, "%llu", v);
}

void cb_json_num(struct cb_json *j, const char *key, double v, int decimals)
{
	sep(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.*f", decimals, v);
	else
		fputs("null", j->f);
}

void cb_json_bool(struct cb_json *j, const char *key, int v)
{
	sep(j, key);
	fputs(v ? "true" : "false", j->f);
}

void cb_json_null(struct cb_json *j, const char *key)
{
	sep(j, key);
	fputs("null", j->f);
}
