// SPDX-License-Identifier: MIT
/*
 * What this host's CPU does for parity: P+Q over d data buffers, timed with
 * the library's ISA-L functions at plan time (docs/planner.md, "Host").
 */
#include <stdlib.h>
#include <string.h>

#include <uraid/parity.h>

#include "common/clock.h"
#include "plan/model.h"

#define PAR_LEN (64u << 10)

double plan_measure_parity_mib_s(unsigned d)
{
	if (d < 1 || d > URAID_PARITY_MAX_SLOTS - 2)
		return 0;
	void **buf = calloc(d + 2, sizeof(void *));
	double rate = 0;
	if (!buf)
		return 0;
	unsigned got = 0;
	for (; got < d + 2; got++) {
		if (posix_memalign(&buf[got], 64, PAR_LEN))
			goto out;
		memset(buf[got], (int)(got * 37 + 1), PAR_LEN);
	}
	/* warm the caches once, then run for about 20 ms */
	uraid_parity_gen_pq(d, PAR_LEN, buf, buf[d], buf[d + 1]);
	uint64_t t0 = uraid_now_ns(), t1 = t0, rounds = 0;
	while (t1 - t0 < 20000000ull) {
		if (uraid_parity_gen_pq(d, PAR_LEN, buf, buf[d], buf[d + 1]))
			goto out;
		rounds++;
		t1 = uraid_now_ns();
	}
	rate = (double)rounds * d * PAR_LEN / ((double)(t1 - t0) * 1e-9) / 1048576.0;
out:
	for (unsigned i = 0; i < got; i++)
		free(buf[i]);
	free(buf);
	return rate;
}
