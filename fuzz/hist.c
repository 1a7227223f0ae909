/* hist.c: libFuzzer target for the histogram: the input as operations on
 * two histograms a and b, one byte each: by its low two bits, add a value
 * of 0 to 8 bytes (bits 2-5) to a or b (bit 6), merge a or b with a copy
 * of itself (doubling it), or probe the quantile (next 2 bytes) / 65535;
 * then a and b merged.  Against the values kept aside: counts conserved bucket by
 * bucket, min, max and sum; quantiles non-decreasing in q, within
 * [min, max], each in the bucket of the exact value at its rank; and,
 * while nothing was doubled, merge(a, b) equal to adding every value to
 * one histogram. */
#include "../bench/clockbench.h"
#include "fuzz.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXVALS 1024
#define MAXCOUNT (1ull << 33) /* a side doubles up to here, past 2^32 */
#define MAXDOUBLINGS 34        /* in all: each costs a merge */

struct side {
	struct cb_hist h;
	uint64_t v[MAXVALS], mult; /* every value of the side counts mult times */
	int n;
};

struct val {
	uint64_t v, mult;
};

static int cmp_val(const void *x, const void *y)
{
	uint64_t a = ((const struct val *)x)->v, b = ((const struct val *)y)->v;
	return a < b ? -1 : a > b;
}

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct side s[2];
	static struct cb_hist copy, merged, all;
	static uint64_t want[CB_HIST_BUCKETS];
	static struct val vals[2 * MAXVALS];
	double qs[16] = { 0, 0.001, 0.25, 0.5, 0.75, 0.99, 0.999, 1 };
	int nq = 8, nv = 0, doubled = 0;

	for (int k = 0; k < 2; k++) {
		cb_hist_init(&s[k].h);
		s[k].n = 0;
		s[k].mult = 1;
	}
	for (size_t i = 0; i < size;) {
		uint8_t op = data[i++];
		struct side *sd = &s[(op >> 6) & 1];
		if (op % 4 < 2) {
			size_t width = ((op >> 2) & 15) % 9;
			uint64_t v = 0;
			if (sd->n == MAXVALS || sd->mult > 1)
				continue;
			for (size_t b = 0; b < width && i < size; b++)
				v |= (uint64_t)data[i++] << (8 * b);
			cb_hist_add(&sd->h, v);
			sd->v[sd->n++] = v;
		} else if (op % 4 == 2) {
			if (doubled == MAXDOUBLINGS || sd->mult >= MAXCOUNT || sd->h.count * 2 > MAXCOUNT)
				continue;
			memcpy(&copy, &sd->h, sizeof copy);
			cb_hist_merge(&sd->h, &copy);
			sd->mult *= 2;
			doubled++;
		} else if (nq < 16 && i + 2 <= size) {
			qs[nq++] = (data[i] | data[i + 1] << 8) / 65535.0;
			i += 2;
		}
	}

	cb_hist_init(&merged);
	cb_hist_merge(&merged, &s[0].h);
	cb_hist_merge(&merged, &s[1].h);

	/* the values aside, with their multiplicities, sorted */
	uint64_t count = 0, min = UINT64_MAX, max = 0;
	unsigned __int128 sum = 0;
	memset(want, 0, sizeof want);
	for (int k = 0; k < 2; k++) {
		FUZZ_ASSERT(s[k].h.count == (uint64_t)s[k].n * s[k].mult);
		for (int i = 0; i < s[k].n; i++) {
			uint64_t v = s[k].v[i];
			vals[nv++] = (struct val){ v, s[k].mult };
			count += s[k].mult;
			sum += (unsigned __int128)v * s[k].mult;
			want[cb_hist_bucket(v)] += s[k].mult;
			min = v < min ? v : min;
			max = v > max ? v : max;
		}
	}
	qsort(vals, (size_t)nv, sizeof *vals, cmp_val);

	FUZZ_ASSERT(merged.count == count);
	uint64_t total = 0;
	for (unsigned b = 0; b < CB_HIST_BUCKETS; b++) {
		FUZZ_ASSERT(merged.b[b] == want[b]);
		total += merged.b[b];
	}
	FUZZ_ASSERT(total == count);
	if (!count) {
		FUZZ_ASSERT(isnan(cb_hist_quantile(&merged, 0.5)) && isnan(cb_hist_mean(&merged)));
		return 0;
	}
	FUZZ_ASSERT(merged.min == min && merged.max == max);
	FUZZ_ASSERT(fabsl(merged.sum - (long double)sum) <= (long double)sum * 0x1p-50L);
	double mean = cb_hist_mean(&merged);
	FUZZ_ASSERT(mean >= (double)min && mean <= (double)max);

	qsort(qs, (size_t)nq, sizeof *qs, cmp_double);
	double last = -1;
	for (int i = 0; i < nq; i++) {
		double r = cb_hist_quantile(&merged, qs[i]);
		FUZZ_ASSERT(r >= last);
		FUZZ_ASSERT(r >= (double)min && r <= (double)max);
		last = r;
		/* the exact value at the rank the histogram reads */
		uint64_t rank = qs[i] <= 0 ? 1 : qs[i] >= 1 ? count : (uint64_t)ceil(qs[i] * (double)count), seen = 0;
		int j = 0;
		rank = rank < 1 ? 1 : rank;
		while ((seen += vals[j].mult) < rank)
			j++;
		unsigned b = cb_hist_bucket(vals[j].v);
		FUZZ_ASSERT(r >= (double)cb_hist_bucket_low(b) && r <= (double)cb_hist_bucket_high(b));
	}

	if (!doubled) {
		cb_hist_init(&all);
		for (int k = 0; k < 2; k++)
			for (int i = 0; i < s[k].n; i++)
				cb_hist_add(&all, s[k].v[i]);
		FUZZ_ASSERT(all.count == merged.count && all.min == merged.min && all.max == merged.max);
		FUZZ_ASSERT(!memcmp(all.b, merged.b, sizeof all.b));
		FUZZ_ASSERT(fabsl(all.sum - merged.sum) <= (long double)sum * 0x1p-50L);
	}
	return 0;
}
