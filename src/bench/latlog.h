/* SPDX-License-Identifier: MIT */
/*
 * Every I/O's latency, in fio's latency log format (--write_lat_log), so
 * that samples of several runs, of uraid bench and of fio alike, can be
 * pooled and their percentiles computed by one rule (bench_lat_pool_file).
 *
 * A worker keeps its measured window's samples in a buffer allocated before
 * the run (virtual memory: only the pages written are used), at most
 * wl->lat_log_max of them; later ones are counted in dropped, not kept. The
 * run hands the buffers to its result (bench_result.lat_logs, one per
 * worker); bench_lat_log_write writes them as fio does, one file per worker:
 * PREFIX_lat.N.log (N from 1), a line per I/O
 *   "MSEC, NSEC, DIR, BYTES, 0"
 * MSEC: when it completed, in ms since the measured window began; NSEC: its
 * latency in ns; DIR: 0 read, 1 write; the last field is fio's priority.
 */
#ifndef URAID_BENCH_LATLOG_H
#define URAID_BENCH_LATLOG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench/histogram.h"

/* Samples a worker keeps at most (--write_lat_log): 64 MiB of address space. */
#define BENCH_LAT_LOG_MAX (1ull << 22)

struct bench_lat_sample {
	uint64_t ns;
	uint32_t ms;                /* since the measured window began */
	uint32_t bytes_dir;         /* bytes (<= BENCH_MAX_BS) | 1u << 31 for a write */
};

struct bench_lat_log {
	struct bench_lat_sample *s; /* cap entries */
	uint64_t n, cap;
	uint64_t dropped;           /* samples past cap */
};

/* Allocate room for cap samples (untouched: no memory used until written). */
int bench_lat_log_init(struct bench_lat_log *l, uint64_t cap);
void bench_lat_log_fini(struct bench_lat_log *l);

/* On the I/O path: keep one sample (or count it as dropped). */
static inline void bench_lat_log_add(struct bench_lat_log *l, uint64_t ns, uint64_t ms,
				     uint32_t bytes, unsigned write)
{
	if (l->n == l->cap) {
		l->dropped++;
		return;
	}
	struct bench_lat_sample *s = &l->s[l->n++];
	s->ns = ns;
	s->ms = ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
	s->bytes_dir = bytes | (uint32_t)!!write << 31;
}

/*
 * Write nlogs logs as PREFIX_lat.1.log ... (a note on stderr for a log that
 * dropped samples); 0 or -errno with the path in err.
 */
int bench_lat_log_write(const struct bench_lat_log *logs, unsigned nlogs, const char *prefix,
			char *err, size_t errlen);

/*
 * Parse one line of a fio latency log ("MSEC, VALUE, DIR, BYTES[, ...]"):
 * 0 with the value (ns) and the direction (0 read, 1 write, 2 trim), or
 * -EINVAL for anything else (a number that does not fit, a missing field).
 */
int bench_lat_log_parse_line(const char *line, uint64_t *ns, unsigned *dir);

/*
 * Pool a latency log file (uraid bench's or fio's, same format) into h[0]
 * (reads) and h[1] (writes); trims are left out. Several files pooled into
 * the same h give the percentiles of the union of their samples by
 * hist_percentile's rule. 0, or -errno with the file and line in err.
 */
int bench_lat_pool_file(const char *path, struct hist h[2], char *err, size_t errlen);

#endif
