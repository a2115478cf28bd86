// SPDX-License-Identifier: MIT
/* Rates and times left from samples of a counter (see rate.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "common/rate.h"

bool rate_per_s(uint64_t prev, uint64_t cur, uint64_t dt_ns, double *per_s)
{
	if (!dt_ns || cur < prev)
		return false;
	*per_s = (double)(cur - prev) * 1e9 / (double)dt_ns;
	return true;
}

int64_t rate_eta_s(uint64_t done, uint64_t total, double per_s)
{
	if (done >= total)
		return 0;
	if (!(per_s > 0))
		return -1;
	double s = ceil((double)(total - done) / per_s);
	/* a crawling rate would overflow the conversion: a century is "unknown" too */
	return s < 100.0 * 365 * 86400 ? (int64_t)s : -1;
}

const char *rate_eta_text(int64_t s, char *buf, size_t len)
{
	if (s < 0)
		snprintf(buf, len, "-:--");
	else if (s < 3600)
		snprintf(buf, len, "%d:%02d", (int)(s / 60), (int)(s % 60));
	else if (s < 86400)
		snprintf(buf, len, "%d:%02d:%02d", (int)(s / 3600), (int)(s / 60 % 60), (int)(s % 60));
	else
		snprintf(buf, len, "%" PRId64 "d %02d:%02d:%02d", s / 86400, (int)(s / 3600 % 24),
			 (int)(s / 60 % 60), (int)(s % 60));
	return buf;
}

void rate_window_add(struct rate_window *w, uint64_t key, uint64_t t_ns, uint64_t value)
{
	if (w->n) {
		unsigned last = (w->next + RATE_WINDOW_SAMPLES - 1) % RATE_WINDOW_SAMPLES;
		if (w->key != key || value < w->value[last] || t_ns < w->t_ns[last])
			w->n = 0;
	}
	if (!w->n) {
		memset(w, 0, sizeof(*w));
		w->key = key;
	}
	w->t_ns[w->next] = t_ns;
	w->value[w->next] = value;
	w->next = (w->next + 1) % RATE_WINDOW_SAMPLES;
	if (w->n < RATE_WINDOW_SAMPLES)
		w->n++;
}

bool rate_window_rate(const struct rate_window *w, double *per_s)
{
	if (w->n < 2)
		return false;
	unsigned newest = (w->next + RATE_WINDOW_SAMPLES - 1) % RATE_WINDOW_SAMPLES;
	unsigned oldest = (w->next + RATE_WINDOW_SAMPLES - w->n) % RATE_WINDOW_SAMPLES;
	return rate_per_s(w->value[oldest], w->value[newest], w->t_ns[newest] - w->t_ns[oldest],
			  per_s);
}
