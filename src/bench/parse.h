/* SPDX-License-Identifier: MIT */
/* Small parsers shared by the workload text formats (bssplit, access lines, traces). */
#ifndef URAID_BENCH_PARSE_H
#define URAID_BENCH_PARSE_H

#include <stdint.h>

/* A transfer size "4096", "4k", "4KiB", "1m" in [s, end); 0 or -EINVAL (0 and > 4 GiB refused). */
int bench_parse_xfer(const char *s, const char *end, uint32_t *out);

#endif
