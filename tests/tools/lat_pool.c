// SPDX-License-Identifier: MIT
/*
 * Pool latency logs in fio's format (fio's --write_lat_log, or uraid
 * bench's, the same format) and print the percentiles of the union of their
 * samples, by one rule for every tool: each sample into uraid bench's
 * histogram (src/bench/histogram.h: nearest rank, a bucket's middle, within
 * 0.4 %), the files merged. make bench's latency-bound fidelity lines
 * compare uraid bench with fio this way (scripts/bench_fidelity_nbd.sh).
 *
 *   lat_pool FILE...
 * prints a line per direction that has samples:
 *   read|write COUNT MEAN_NS P50_NS P99_NS P99.9_NS MAX_NS
 */
#include <inttypes.h>
#include <stdio.h>

#include "bench/latlog.h"

int main(int argc, char **argv)
{
	static struct hist h[2];
	char err[512];

	if (argc < 2) {
		fprintf(stderr, "usage: lat_pool FILE...   (fio latency logs: MSEC, NSEC, DIR, BYTES)\n");
		return 2;
	}
	hist_init(&h[0]);
	hist_init(&h[1]);
	for (int i = 1; i < argc; i++)
		if (bench_lat_pool_file(argv[i], h, err, sizeof(err))) {
			fprintf(stderr, "lat_pool: %s\n", err);
			return 1;
		}
	for (unsigned d = 0; d < 2; d++)
		if (h[d].count)
			printf("%s %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
			       "\n", d ? "write" : "read", h[d].count, hist_mean(&h[d]),
			       hist_percentile(&h[d], 50), hist_percentile(&h[d], 99),
			       hist_percentile(&h[d], 99.9), h[d].max);
	if (!h[0].count && !h[1].count) {
		fprintf(stderr, "lat_pool: no read or write samples in %d file(s)\n", argc - 1);
		return 1;
	}
	return 0;
}
