/* json.c: libFuzzer target for the JSON writer: the input (cut at its
 * first NUL) as a key and as a string value, beside a number, integers,
 * null and a boolean made from its first bytes.  A real JSON parser
 * (jansson, which refuses invalid UTF-8) must read the document back: each
 * string the same, except that every byte not part of a valid UTF-8
 * sequence reads as U+FFFD, as bench/json.c documents; the number within
 * its rounding, null where it is not finite. */
#include "../bench/clockbench.h"
#include "fuzz.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at p (n bytes left), or 0: decoded
 * here apart from the writer's own check, so the two can disagree. */
static size_t utf8_seq(const unsigned char *p, size_t n)
{
	uint32_t cp, min;
	size_t len;

	if (p[0] < 0x80)
		return 1;
	if ((p[0] & 0xe0) == 0xc0)
		len = 2, cp = p[0] & 0x1f, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		len = 3, cp = p[0] & 0x0f, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		len = 4, cp = p[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* What a parser should read back for s: s, with U+FFFD for each byte of
 * invalid UTF-8.  Returns its length; want holds at least 3 * strlen(s). */
static size_t expected(const char *s, char *want)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s), out = 0;

	for (size_t i = 0; i < n;) {
		size_t len = utf8_seq(p + i, n - i);
		if (len) {
			memcpy(want + out, p + i, len);
			out += len, i += len;
		} else {
			memcpy(want + out, "\xef\xbf\xbd", 3);
			out += 3, i++;
		}
	}
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1), *want = malloc(3 * size + 1), *doc = NULL;
	size_t len = 0, wlen;
	uint64_t bits = 0;
	double d;
	int decimals = size ? data[size - 1] % 10 : 3;
	struct cb_json j;
	json_error_t error;

	FUZZ_ASSERT(s && want);
	memcpy(s, data, size);
	s[size] = 0;
	wlen = expected(s, want);
	want[wlen] = 0;
	memcpy(&bits, data, size < 8 ? size : 8);
	memcpy(&d, &bits, sizeof d);

	FILE *f = open_memstream(&doc, &len);
	FUZZ_ASSERT(f);
	cb_json_begin(&j, f);
	cb_json_obj(&j, NULL);
	cb_json_obj(&j, "k");
	cb_json_str(&j, s, s);
	cb_json_end_obj(&j);
	cb_json_arr(&j, "a");
	cb_json_str(&j, NULL, s);
	cb_json_num(&j, NULL, d, decimals);
	cb_json_int(&j, NULL, (long long)bits);
	cb_json_uint(&j, NULL, bits);
	cb_json_null(&j, NULL);
	cb_json_bool(&j, NULL, (int)(bits & 1));
	cb_json_str(&j, NULL, NULL);
	cb_json_end_arr(&j);
	cb_json_end_obj(&j);
	FUZZ_ASSERT(fclose(f) == 0);

	/* Integers as reals: jansson refuses integers beyond long long, and
	 * %.0f of a large double is one. */
	json_t *root = json_loadb(doc, len, JSON_DECODE_INT_AS_REAL | JSON_REJECT_DUPLICATES, &error);
	if (!root)
		dprintf(2, "jansson: %s at %d\n", error.text, error.position);
	FUZZ_ASSERT(root && json_is_object(root) && json_object_size(root) == 2);
	json_t *k = json_object_get(root, "k"), *a = json_object_get(root, "a");
	FUZZ_ASSERT(json_is_object(k) && json_object_size(k) == 1);
	void *it = json_object_iter(k);
	const char *key = json_object_iter_key(it);
	json_t *v = json_object_iter_value(it);
	FUZZ_ASSERT(!strcmp(key, want));
	FUZZ_ASSERT(json_is_string(v) && json_string_length(v) == wlen && !memcmp(json_string_value(v), want, wlen));
	FUZZ_ASSERT(json_is_array(a) && json_array_size(a) == 7);
	v = json_array_get(a, 0);
	FUZZ_ASSERT(json_is_string(v) && json_string_length(v) == wlen && !memcmp(json_string_value(v), want, wlen));
	v = json_array_get(a, 1);
	if (isfinite(d))
		FUZZ_ASSERT(json_is_real(v) &&
			    fabs(json_real_value(v) - d) <= 0.5 * pow(10, -decimals) + fabs(d) * 0x1p-50);
	else
		FUZZ_ASSERT(json_is_null(v));
	FUZZ_ASSERT(json_real_value(json_array_get(a, 2)) == (double)(long long)bits);
	FUZZ_ASSERT(json_real_value(json_array_get(a, 3)) == (double)bits);
	FUZZ_ASSERT(json_is_null(json_array_get(a, 4)) && json_is_null(json_array_get(a, 6)));
	FUZZ_ASSERT(json_is_boolean(json_array_get(a, 5)) && json_is_true(json_array_get(a, 5)) == (int)(bits & 1));
	json_decref(root);
	free(doc);
	free(want);
	free(s);
	return 0;
}
