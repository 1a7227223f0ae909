/* unit.c: TAP tests of the histogram and JSON writer on known data.
 * `unit json` prints a JSON document with hostile strings instead, for a
 * real parser to check (tests/unit.t). */
#include "../bench/clockbench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int n, failed;

static void ok(int cond, const char *what)
{
	n++;
	if (!cond)
		failed++;
	printf("%sok %d - %s\n", cond ? "" : "not ", n, what);
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void hist_tests(void)
{
	static struct cb_hist h, a, b;
	static uint64_t vals[100000];
	uint64_t s = 88172645463325252ull, v;
	unsigned i, good;
	double worst = 0;

	for (good = 1, v = 0; v < 256; v++)
		good &= cb_hist_bucket(v) == v && cb_hist_bucket_low((unsigned)v) == v &&
			cb_hist_bucket_high((unsigned)v) == v;
	ok(good, "values below 256 have exact buckets");

	for (good = 1, i = 0; i < 1000000; i++) {
		unsigned bk;
		v = rnd(&s) >> (rnd(&s) % 64);
		bk = cb_hist_bucket(v);
		good &= bk < CB_HIST_BUCKETS && cb_hist_bucket_low(bk) <= v && v <= cb_hist_bucket_high(bk);
		good &= v < 256 || (cb_hist_bucket_high(bk) - cb_hist_bucket_low(bk)) <= v / 256;
	}
	ok(good, "every value falls inside its bucket, a bucket at most 1/256 of it wide");

	for (good = 1, i = 0; i + 1 < CB_HIST_BUCKETS - 1; i++)
		good &= cb_hist_bucket(cb_hist_bucket_high(i) + 1) == i + 1;
	ok(good, "buckets tile the integers without gaps");
	ok(cb_hist_bucket(UINT64_MAX) == CB_HIST_BUCKETS - 1, "the largest value has the last bucket");

	cb_hist_init(&h);
	ok(isnan(cb_hist_quantile(&h, 0.5)) && isnan(cb_hist_mean(&h)), "empty histogram: no quantile, no mean");
	for (v = 1; v <= 100; v++)
		cb_hist_add(&h, v);
	ok(cb_hist_quantile(&h, 0.5) == 50, "median of 1..100 is 50");
	ok(cb_hist_quantile(&h, 0.99) == 99, "p99 of 1..100 is 99");
	ok(cb_hist_quantile(&h, 0.999) == 100, "p99.9 of 1..100 is 100");
	ok(cb_hist_quantile(&h, 0) == 1 && cb_hist_quantile(&h, 1) == 100, "min 1 and max 100");
	ok(cb_hist_mean(&h) == 50.5, "mean of 1..100 is 50.5");

	cb_hist_init(&h);
	cb_hist_add(&h, 7);
	ok(cb_hist_quantile(&h, 0.5) == 7 && cb_hist_quantile(&h, 0.999) == 7, "one value is every quantile");

	/* Log-normal-ish data: quantiles within a bucket's width of the exact ones. */
	cb_hist_init(&h);
	cb_hist_init(&a);
	cb_hist_init(&b);
	for (i = 0; i < 100000; i++) {
		vals[i] = 1000 + rnd(&s) % 1000 + (rnd(&s) % 100 == 0 ? rnd(&s) % 1000000 : 0);
		cb_hist_add(&h, vals[i]);
		cb_hist_add(i % 2 ? &a : &b, vals[i]);
	}
	qsort(vals, 100000, sizeof vals[0], cmp_u64);
	{
		const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
		for (i = 0; i < 4; i++) {
			double exact = (double)vals[(size_t)ceil(qs[i] * 100000) - 1];
			double err = fabs(cb_hist_quantile(&h, qs[i]) - exact) / exact;
			if (err > worst)
				worst = err;
		}
	}
	ok(worst <= 1.0 / 512, "median, p90, p99, p99.9 within half a bucket (0.2 %) of the exact order statistics");
	cb_hist_merge(&a, &b);
	ok(a.count == h.count && a.min == h.min && a.max == h.max && !memcmp(a.b, h.b, sizeof a.b),
	   "merging two halves gives the histogram of the whole");
}

static void json_tests(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	struct cb_json j;

	cb_json_begin(&j, m);
	cb_json_obj(&j, NULL);
	cb_json_num(&j, "nan", NAN, 2);
	cb_json_num(&j, "inf", INFINITY, 2);
	cb_json_num(&j, "x", 1.5, 2);
	cb_json_arr(&j, "a");
	cb_json_int(&j, NULL, -1);
	cb_json_str(&j, NULL, NULL);
	cb_json_end_arr(&j);
	cb_json_end_obj(&j);
	fclose(m);
	ok(!strcmp(buf, "{\"nan\":null,\"inf\":null,\"x\":1.50,\"a\":[-1,null]}\n"),
	   "NaN and infinity become null; commas only between members");
	free(buf);
}

/* Strings a kernel command line or host name could carry. */
static void json_document(void)
{
	static const char *const nasty[] = {
		"plain", "quote \" backslash \\ slash /", "tab\tnewline\ncr\rbell\a",
		"\x01\x1f\x7f", "utf-8 \xc3\xa9\xe2\x82\xac\xf0\x9f\x95\x90", "bad utf-8 \xff\xfe \xc3 end",
		"truncated \xe2\x82", "",
	};
	struct cb_json j;
	unsigned i;

	cb_json_begin(&j, stdout);
	cb_json_arr(&j, NULL);
	for (i = 0; i < sizeof nasty / sizeof nasty[0]; i++) {
		cb_json_obj(&j, NULL);
		cb_json_str(&j, nasty[i], nasty[i]);
		cb_json_end_obj(&j);
	}
	cb_json_end_arr(&j);
	putchar('\n');
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "json")) {
		json_document();
		return 0;
	}
	hist_tests();
	json_tests();
	printf("1..%d\n", n);
	return failed != 0;
}
