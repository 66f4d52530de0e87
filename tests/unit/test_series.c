/* The bounded series (src/model/series.c, issue 21): a day of samples
 * keeps at most GP_SERIES_MAX points; the first and the newest half stay
 * as pushed; what counts over intervals is not lost in the merge. */
#include "config.h"
#include "unit.h"
#include "series.h"

#include <stdbool.h>
#include <string.h>

static struct gp_point at(double t, uint32_t created, float cpu)
{
	struct gp_point p;
	memset(&p, 0, sizeof p);
	p.t = t;
	p.threads_created = created;
	p.cpu_pct = cpu;
	p.top_cpu_pct = cpu;
	p.top_tid = (int32_t)t;
	p.utime = t / 2; /* a counter: the later point's value stands */
	return p;
}

static void test_bounded_and_exact_where_it_matters(void **st)
{
	(void)st;
	struct gp_series s = { .max = 64 };
	uint64_t created = 0;
	for (int i = 0; i < 100000; i++) {
		uint32_t c = i % 7 == 0;
		created += c;
		struct gp_point p = at(i, c, (float)(i % 3));
		assert_int_equal(gp_series_push(&s, &p), 0);
		assert_true(s.n <= 64);
	}
	assert_int_equal(s.samples, 100000);
	assert_true(s.merged);
	assert_true(s.cap <= 64 + 256); /* gp_grow's first step */
	/* The start, and the newest 32 exactly as pushed. */
	assert_true(s.pt[0].t == 0);
	for (size_t k = 0; k < 32; k++)
		assert_true(s.pt[s.n - 32 + k].t == 100000 - 32 + (double)k);
	uint64_t sum = 0;
	for (size_t k = 0; k < s.n; k++) {
		sum += s.pt[k].threads_created;
		if (k)
			assert_true(s.pt[k].t > s.pt[k - 1].t);
		/* a merged point is its last sample's counters */
		assert_true(s.pt[k].utime == s.pt[k].t / 2);
	}
	assert_int_equal(sum, created);
	/* The merged part is even: every merged point spans one width (the
	 * last of them may be partly filled; the points after it are single
	 * samples, 1 s apart). */
	size_t last = 0, merged = 0;
	for (size_t k = 1; k < s.n; k++)
		if (s.pt[k].t - s.pt[k - 1].t > 1)
			last = k;
	for (size_t k = 1; k < last; k++) {
		assert_true(s.pt[k].t - s.pt[k - 1].t == s.width);
		merged++;
	}
	assert_true(merged >= 8 && merged <= 16); /* GP_SERIES_MAX / 4 at most */
	gp_series_free(&s);
}

static void test_merge_keeps_the_busier(void **st)
{
	(void)st;
	struct gp_series s = { .max = 8 };
	for (int i = 0; i < 8; i++) {
		struct gp_point p = at(i, 0, i == 2 ? 90.0f : 1.0f);
		gp_series_push(&s, &p);
	}
	struct gp_point p = at(8, 0, 1.0f);
	gp_series_push(&s, &p); /* compacts 1..3 into one or two points */
	bool seen = false;
	for (size_t k = 0; k < s.n; k++)
		if (s.pt[k].top_cpu_pct == 90.0f)
			seen = s.pt[k].top_tid == 2;
	assert_true(seen);
	gp_series_free(&s);
}

UNIT_MAIN(cmocka_unit_test(test_bounded_and_exact_where_it_matters),
	  cmocka_unit_test(test_merge_keeps_the_busier))
