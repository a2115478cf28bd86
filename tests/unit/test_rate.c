// SPDX-License-Identifier: MIT
/*
 * test_rate: the arithmetic of the live views (common/rate.h), table by
 * table: a counter's rate between two polls (none when no time passed or
 * the counter went back), the time left rounded up and never 0 while work
 * is left, its text, and the windowed rate of a job that starts over when
 * another job, or a smaller value, comes.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/rate.h"
#include "../support/check.h"

#define S 1000000000ull         /* a second in ns */

static void test_rate_per_s(void)
{
	static const struct {
		uint64_t prev, cur, dt_ns;
		bool ok;
		double want;
	} t[] = {
		{ 0, 0, S, true, 0 },
		{ 100, 300, S, true, 200 },
		{ 100, 300, 2 * S, true, 100 },             /* over the measured interval */
		{ 0, 1, S / 1000, true, 1000 },             /* 1 in a millisecond */
		{ 0, 4096ull << 20, 4 * S, true, 1024.0 * 1024 * 1024 },
		{ 5, 5, 0, false, 0 },                      /* no time passed */
		{ 300, 100, S, false, 0 },                  /* went back: restarted */
		{ 0, UINT64_MAX, S, true, (double)UINT64_MAX },
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		double got = -1;
		bool ok = rate_per_s(t[i].prev, t[i].cur, t[i].dt_ns, &got);
		CHECK(ok == t[i].ok, "row %u: ok %d", i, ok);
		if (t[i].ok)
			CHECK(fabs(got - t[i].want) <= t[i].want * 1e-9, "row %u: %g, want %g", i, got,
			      t[i].want);
		else
			CHECK(got == -1, "row %u: the result was touched (%g)", i, got);
	}
}

static void test_eta(void)
{
	static const struct {
		uint64_t done, total;
		double rate;
		int64_t want;
		const char *text;
	} t[] = {
		{ 0, 100, 10, 10, "0:10" },
		{ 95, 100, 10, 1, "0:01" },                  /* half a second: rounded up */
		{ 99, 100, 1000, 1, "0:01" },                /* never 0 while work is left */
		{ 100, 100, 10, 0, "0:00" },                 /* done */
		{ 100, 100, 0, 0, "0:00" },                  /* done, even without a rate */
		{ 150, 100, 10, 0, "0:00" },                 /* past the end: done */
		{ 0, 100, 0, -1, "-:--" },                   /* no rate yet */
		{ 0, 100, -5, -1, "-:--" },
		{ 0, 100, NAN, -1, "-:--" },
		{ 0, 754, 1, 754, "12:34" },
		{ 0, 3723, 1, 3723, "1:02:03" },
		{ 0, 86399, 1, 86399, "23:59:59" },
		{ 0, 3 * 86400 + 4 * 3600 + 5 * 60 + 6, 1, 3 * 86400 + 4 * 3600 + 5 * 60 + 6,
		  "3d 04:05:06" },
		{ 0, UINT64_MAX, 1e-9, -1, "-:--" },         /* beyond a century: unknown */
	};
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		char buf[32];
		int64_t got = rate_eta_s(t[i].done, t[i].total, t[i].rate);
		CHECK(got == t[i].want, "row %u: %" PRId64 " s, want %" PRId64, i, got, t[i].want);
		rate_eta_text(got, buf, sizeof(buf));
		CHECK(!strcmp(buf, t[i].text), "row %u: '%s', want '%s'", i, buf, t[i].text);
	}
}

/* Samples fed in order; after each, the windowed rate (or none). */
static void test_window(void)
{
	static const struct {
		uint64_t key, t_ns, value;
		bool ok;
		double want;
	} t[] = {
		{ 1, 0, 0, false, 0 },                  /* one sample: no rate */
		{ 1, S, 100, true, 100 },
		{ 1, 2 * S, 300, true, 150 },           /* oldest to newest: 300 in 2 s */
		{ 1, 2 * S, 300, true, 150 },           /* the same instant again: still fine */
		{ 2, 3 * S, 50, false, 0 },             /* another job: starts over */
		{ 2, 4 * S, 250, true, 200 },
		{ 2, 5 * S, 100, false, 0 },            /* went back: starts over */
		{ 2, 6 * S, 100, true, 0 },             /* standing still: rate 0 */
	};
	struct rate_window w;
	memset(&w, 0, sizeof(w));
	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		double got = -1;
		rate_window_add(&w, t[i].key, t[i].t_ns, t[i].value);
		bool ok = rate_window_rate(&w, &got);
		CHECK(ok == t[i].ok, "sample %u: ok %d", i, ok);
		if (ok && t[i].ok)
			CHECK(fabs(got - t[i].want) < 1e-9, "sample %u: %g, want %g", i, got,
			      t[i].want);
	}
	/* the window keeps the last RATE_WINDOW_SAMPLES: a fast start then a
	   steady 10/s is measured as 10/s once the start has left the window */
	memset(&w, 0, sizeof(w));
	rate_window_add(&w, 7, 0, 0);
	rate_window_add(&w, 7, S, 1000000);
	for (unsigned i = 2; i < 2 + RATE_WINDOW_SAMPLES; i++)
		rate_window_add(&w, 7, i * S, 1000000 + (i - 1) * 10);
	double got = -1;
	CHECK(rate_window_rate(&w, &got) && fabs(got - 10) < 1e-9, "steady rate %g, want 10", got);
}

int main(void)
{
	test_rate_per_s();
	test_eta();
	test_window();
	if (failures)
		fprintf(stderr, "test_rate: %d failure(s)\n", failures);
	else
		printf("test_rate: ok\n");
	return failures ? 1 : 0;
}
