// SPDX-License-Identifier: MIT
/* The latency percentiles every output of a run reports (bench.h), written once. */
#include "bench/bench.h"

const double bench_pcts[BENCH_NPCT] = { 50, 90, 99, 99.9, 99.99, 99.999 };
const char *const bench_pct_keys[BENCH_NPCT] = {
	"p50", "p90", "p99", "p99_9", "p99_99", "p99_999",
};
const char *const bench_pct_names[BENCH_NPCT] = {
	"p50", "p90", "p99", "p99.9", "p99.99", "p99.999",
};
