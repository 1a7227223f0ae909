/* hist.c: log-linear histogram of integer values, in the HDR/fio style. */
#include "clockbench.h"

#include <math.h>
#include <string.h>

#define SUB (1u << CB_HIST_SUB_BITS)

/* Values below SUB get a bucket each; above, each power of two is split
 * into SUB equal buckets, so a bucket is at most 1/SUB of its value wide. */
unsigned cb_hist_bucket(uint64_t v)
{
	unsigned msb, shift;

	if (v < SUB)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	shift = msb - CB_HIST_SUB_BITS;
	/* octave (shift+1), position from the top SUB_BITS bits below the msb */
	return ((shift + 1) << CB_HIST_SUB_BITS) + (unsigned)((v >> shift) & (SUB - 1));
}

uint64_t cb_hist_bucket_low(unsigned i)
{
	unsigned oct = i >> CB_HIST_SUB_BITS, pos = i & (SUB - 1);

	if (oct == 0)
		return pos;
	return ((uint64_t)SUB + pos) << (oct - 1);
}

/* A bucket ends where the next begins; the last at 2^64 - 1 (the next's
 * low end wraps to 0). */
uint64_t cb_hist_bucket_high(unsigned i)
{
	return cb_hist_bucket_low(i + 1) - 1;
}

void cb_hist_init(struct cb_hist *h)
{
	memset(h, 0, sizeof *h);
	h->min = UINT64_MAX;
}

void cb_hist_add(struct cb_hist *h, uint64_t v)
{
	h->b[cb_hist_bucket(v)]++;
	h->count++;
	h->sum += v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void cb_hist_merge(struct cb_hist *dst, const struct cb_hist *src)
{
	unsigned i;

	if (!src->count)
		return;
	for (i = 0; i < CB_HIST_BUCKETS; i++)
		dst->b[i] += src->b[i];
	dst->count += src->count;
	dst->sum += src->sum;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
}

double cb_hist_quantile(const struct cb_hist *h, double q)
{
	uint64_t want, seen = 0;
	unsigned i;

	if (!h->count)
		return NAN;
	if (q <= 0)
		return (double)h->min;
	if (q >= 1)
		return (double)h->max;
	want = (uint64_t)ceil(q * (double)h->count);
	if (want < 1)
		want = 1;
	for (i = 0; i < CB_HIST_BUCKETS; i++) {
		seen += h->b[i];
		if (seen >= want) {
			double lo = (double)cb_hist_bucket_low(i), hi = (double)cb_hist_bucket_high(i);
			double mid = (lo + hi) / 2;
			if (mid < (double)h->min)
				mid = (double)h->min;
			if (mid > (double)h->max)
				mid = (double)h->max;
			return mid;
		}
	}
	return (double)h->max;
}

double cb_hist_mean(const struct cb_hist *h)
{
	return h->count ? (double)(h->sum / h->count) : NAN;
}
