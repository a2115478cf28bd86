/* SPDX-License-Identifier: MIT */
/*
 * The workload generator of `uraid bench`: workers × outstanding I/Os on a
 * set of raw targets (files or block devices, each driven with O_DIRECT
 * through the worker's own io_uring: JBOD) or on one array assembled from
 * member paths and driven in process through liburaid (one worker per
 * reactor; each worker thread drives its reactor, so there is no hand-off).
 *
 * The run is time-based: ramp_s seconds whose I/O is not counted, then
 * runtime_s seconds measured. Latency runs from the I/O's submission, or,
 * when a rate is set, from its intended start on the rate's schedule (no
 * coordinated omission). Write data is random (incompressible). All memory
 * is allocated before the run: the I/O path does no malloc.
 *
 * Functions return 0 or a negative errno with one line of context in err.
 */
#ifndef URAID_BENCH_BENCH_H
#define URAID_BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/histogram.h"

#define BENCH_MAX_SPLIT   16        /* block sizes in a bssplit */
#define BENCH_MAX_TARGETS 64
#define BENCH_MAX_WORKERS 256
#define BENCH_MAX_BS      (16u << 20)

struct bench_bs {
	uint32_t bytes;             /* multiple of 512 */
	uint32_t weight;            /* relative share of I/Os */
};

/* What each worker does. */
struct bench_workload {
	unsigned nbs;               /* entries in bs (>= 1) */
	struct bench_bs bs[BENCH_MAX_SPLIT];
	unsigned read_pct;          /* 0..100: share of reads */
	unsigned random_pct;        /* 0..100: share of I/Os at a random offset; the others
	                               start where the worker's previous I/O ended */
	uint32_t align;             /* offset alignment of random I/O; 0: smallest bs */
	uint64_t offset;            /* the range used in each target starts here (bytes) */
	uint64_t size;              /* its length; 0: to the end of the target */
	unsigned workers;           /* 0: one per raw target; 1 for an array */
	unsigned iodepth;           /* outstanding I/Os per worker (>= 1) */
	double runtime_s;           /* measured time */
	double ramp_s;              /* time before it, not measured */
	uint64_t rate_iops;         /* all workers together; 0: as fast as possible */
	uint64_t seed;              /* of offsets, mix and data; same seed, same stream */
};

enum bench_kind {
	BENCH_RAW,                  /* each path is a target (JBOD) */
	BENCH_ARRAY,                /* the paths are the members of one array */
};

/* flags of struct bench_targets */
#define BENCH_FORCE_WRITE 0x1u      /* write to targets that existed before the run */
#define BENCH_BUFFERED    0x2u      /* page-cache I/O instead of O_DIRECT */
#define BENCH_CREATE      0x4u      /* BENCH_ARRAY: create the array on the paths first */

struct bench_targets {
	enum bench_kind kind;
	const char *const *paths;
	unsigned npaths;
	uint32_t flags;             /* BENCH_* */
	uint64_t create_bytes;      /* size of each path that does not exist: it is created,
	                               filled, and may be written without BENCH_FORCE_WRITE */
	/* BENCH_CREATE: the array to make (assume-clean, no bitmap) */
	int level;                  /* enum uraid_level */
	bool layout_given;
	uint32_t layout;
	uint32_t chunk_kib;         /* 0: mdadm's default */
};

struct bench_dir {
	uint64_t ios, bytes;
	struct hist lat;            /* ns */
};

struct bench_result {
	struct bench_dir dir[2];    /* [0] reads, [1] writes (measured window only) */
	struct hist lat;            /* both directions */
	uint64_t bs_ios[BENCH_MAX_SPLIT];   /* I/Os per bssplit entry (measured window) */
	uint64_t runtime_ns;        /* the measured window */
	uint64_t cpu_user_ns, cpu_sys_ns;   /* of the process during the window */
	unsigned workers, iodepth, ntargets;
	uint64_t target_bytes;      /* size of the range used in the (first) target */
	char target_desc[160];      /* "raid5 4 members, chunk 512 KiB" or "2 files" */
	unsigned degraded;          /* array slots without a member */
};

/* Parse fio's --bssplit ("4k/50:64k/50", sizes K/M binary); 0 or -EINVAL. */
int bench_parse_bssplit(const char *s, struct bench_workload *w, char *err, size_t errlen);

/* Run the workload; res is filled on success. */
int bench_run(const struct bench_workload *w, const struct bench_targets *t,
	      struct bench_result *res, char *err, size_t errlen);

#endif
