/* SPDX-License-Identifier: MIT */
/*
 * `uraid bench --characterise`: the drive model a planner reads, measured
 * on one device (file, block device or NBD export) with the bench's own
 * runs: 4 KiB random read and write at QD 1..32, 70/30 mixed 4 KiB random
 * at QD 1 and 32, sequential read and write at 128 KiB and 1 MiB. One
 * worker throughout: the model describes the drive, the planner adds the
 * queueing of several clients itself. Nothing here prints; progress goes
 * to a callback.
 */
#ifndef URAID_BENCH_CHARACTERISE_H
#define URAID_BENCH_CHARACTERISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/bench.h"

#define BENCH_CHAR_NQD    6         /* random read and write: QD 1, 2, 4, 8, 16, 32 */
#define BENCH_CHAR_NMIXED 2         /* mixed 70/30: QD 1 and 32 */
#define BENCH_CHAR_NSEQ   2         /* sequential: 128 KiB and 1 MiB */
#define BENCH_CHAR_SEQ_QD 8         /* sequential runs keep this many in flight */
#define BENCH_CHAR_POINTS (2 * BENCH_CHAR_NQD + BENCH_CHAR_NMIXED + 2 * BENCH_CHAR_NSEQ)
#define BENCH_CHAR_MIX_READ 70

extern const unsigned bench_char_qd[BENCH_CHAR_NQD];
extern const unsigned bench_char_mixed_qd[BENCH_CHAR_NMIXED];
extern const uint32_t bench_char_seq_bs[BENCH_CHAR_NSEQ];

/* A random-I/O point: both directions together for the mixed one. */
struct bench_char_point {
	unsigned qd;
	double iops, mean_us, p99_us;
};

struct bench_char_seq {
	uint32_t bs;
	double mib_s;
};

struct bench_drive_model {
	const char *path;
	uint64_t capacity_bytes;    /* the device's (or export's) size */
	struct bench_char_point random_read[BENCH_CHAR_NQD];
	struct bench_char_point random_write[BENCH_CHAR_NQD];
	struct bench_char_point mixed[BENCH_CHAR_NMIXED];
	struct bench_char_seq seq_read[BENCH_CHAR_NSEQ];
	struct bench_char_seq seq_write[BENCH_CHAR_NSEQ];
};

struct bench_char_opts {
	double runtime_s;           /* measured time of each point */
	double ramp_s;              /* before each point, not measured */
	uint64_t size;              /* range used (0: all of it) */
	uint64_t create_bytes;      /* a path that does not exist is created this large */
	uint32_t flags;             /* BENCH_FORCE_WRITE, BENCH_BUFFERED */
	uint64_t seed;
	/* called before each point (may be NULL): index 0..BENCH_CHAR_POINTS-1 */
	void (*progress)(void *arg, const char *path, unsigned index, const char *what);
	void *arg;
};

/*
 * Measure path into m (m->path = path). Writing to a path that existed
 * before needs BENCH_FORCE_WRITE, as for any bench run; 0 or -errno with
 * one line in err.
 */
int bench_characterise(const char *path, const struct bench_char_opts *o,
		       struct bench_drive_model *m, char *err, size_t errlen);

#endif
