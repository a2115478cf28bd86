/* SPDX-License-Identifier: MIT */
/*
 * The workload generator of `uraid bench`: workers × outstanding I/Os on a
 * set of raw targets (files or block devices, each driven with O_DIRECT
 * through the worker's own io_uring: JBOD; or NBD exports named by URI,
 * each worker with its own connection through libnbd) or on one array assembled from
 * member paths and driven in process through liburaid (one worker per
 * reactor; each worker thread drives its reactor, so there is no hand-off).
 *
 * The run is time-based: ramp_s seconds whose I/O is not counted, then
 * runtime_s seconds measured. Latency runs from the I/O's submission, or,
 * when a rate is set, from its intended start on the rate's schedule (no
 * coordinated omission). Write data is random (incompressible) unless the
 * workload asks for zeroes or a repeating pattern. All memory is allocated
 * before the run: the I/O path does no malloc.
 *
 * Functions return 0 or a negative errno with one line of context in err.
 */
#ifndef URAID_BENCH_BENCH_H
#define URAID_BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/histogram.h"
#include "bench/latlog.h"

#define BENCH_MAX_LINES   16        /* access specification lines (bssplit entries) */
#define BENCH_MAX_SPLIT   BENCH_MAX_LINES
#define BENCH_MAX_TARGETS 64
#define BENCH_MAX_WORKERS 256
#define BENCH_MAX_BS      (16u << 20)
#define BENCH_MAX_PATTERN 512       /* bytes of --buffer_pattern */
#define BENCH_MAX_SECONDS 1e6       /* runtime and ramp (11.6 days): kept in ns as uint64 */

/*
 * One line of an Iometer access specification: a share of the I/Os with
 * their transfer size, read share, random share and alignment. fio's
 * --bs/--bssplit/--rwmixread/--percentage_random make lines that differ only
 * in size. The weights of a workload's lines add up to 100.
 */
struct bench_access {
	uint32_t bytes;             /* transfer size, multiple of 512 */
	uint32_t weight;            /* % of the I/Os */
	uint32_t read_pct;          /* 0..100: share of reads */
	uint32_t random_pct;        /* 0..100: share at a random offset; the others start
	                               where the worker's previous I/O on the target ended */
	uint32_t align;             /* of random offsets (relative to the range start);
	                               0: the workload's align, else the transfer size */
};

/* flags of struct bench_workload */
#define BENCH_VERIFY       0x1u     /* stamp written blocks, check what is read */
#define BENCH_REPLAY_TIMED 0x2u     /* replay: keep the trace's timestamps */

struct bench_trace;

/* What writes carry (data.h). */
enum bench_data {
	BENCH_DATA_RANDOM,          /* incompressible (the default) */
	BENCH_DATA_ZERO,            /* fio's --zero_buffers */
	BENCH_DATA_PATTERN,         /* fio's --buffer_pattern, repeated from each buffer's start */
};

/* What each worker does. */
struct bench_workload {
	unsigned nlines;            /* entries in line (>= 1) */
	struct bench_access line[BENCH_MAX_LINES];
	uint32_t align;             /* default alignment of random I/O; 0: each line's size */
	uint64_t offset;            /* the range used in each target starts here (bytes) */
	uint64_t size;              /* its length; 0: to the end of the target */
	/* stop once this many times the range has been issued (each worker its
	   share; runtime_s still bounds the run); 0: time only. A sequential
	   fill of twice the range (SNIA PTS preconditioning) is passes 2. */
	unsigned passes;
	unsigned workers;           /* 0: one per raw target; 1 for an array */
	unsigned iodepth;           /* outstanding I/Os per worker (>= 1) */
	double runtime_s;           /* measured time (replay: the longest it may take) */
	double ramp_s;              /* time before it, not measured */
	uint64_t rate_iops;         /* all workers together; 0: as fast as possible */
	uint64_t seed;              /* of offsets, mix and data; same seed, same stream */
	uint32_t flags;             /* BENCH_VERIFY, BENCH_REPLAY_TIMED */
	const struct bench_trace *trace;    /* non-NULL: replay it (one worker) instead */
	enum bench_data data;       /* of writes */
	unsigned pattern_len;       /* BENCH_DATA_PATTERN: 1..BENCH_MAX_PATTERN */
	uint8_t pattern[BENCH_MAX_PATTERN];
	/* keep each measured I/O's latency (latlog.h), at most this many per
	   worker; 0: none (the histograms only) */
	uint64_t lat_log_max;
};

enum bench_kind {
	BENCH_RAW,                  /* each path is a target (JBOD) */
	BENCH_ARRAY,                /* the paths are the members of one array */
};

/* flags of struct bench_targets */
#define BENCH_FORCE_WRITE 0x1u      /* write to targets that existed before the run */
#define BENCH_BUFFERED    0x2u      /* page-cache I/O instead of O_DIRECT */
#define BENCH_CREATE      0x4u      /* BENCH_ARRAY: create the array on the paths first */
#define BENCH_URING       0x8u      /* raw: io_uring at QD 1 too (else pread/pwrite there) */

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
	/* BENCH_ARRAY: the array's write policy (zero-initialised: through) and
	   its write-back cache size (0: the engine's default) */
	uint32_t write_cache;       /* URAID_WRITE_THROUGH or URAID_WRITE_BACK */
	uint64_t cache_bytes;
	/* BENCH_ARRAY: uraid_assemble_opts.read_ahead_bytes; 0 (URAID_READ_AHEAD_OFF,
	   the default): off, so that in-process array lines measure the level alone */
	uint64_t read_ahead_bytes;
};

struct bench_dir {
	uint64_t ios, bytes;
	struct hist lat;            /* ns */
};

/* One second of the measured window (the last one may be shorter: dur_ns). */
struct bench_second {
	uint64_t ios[2], bytes[2];  /* [0] reads, [1] writes completed in it */
	uint64_t lat_sum_ns;        /* of those I/Os */
	uint64_t dur_ns;
};

struct bench_result {
	struct bench_dir dir[2];    /* [0] reads, [1] writes (measured window only) */
	struct hist lat;            /* both directions */
	uint64_t bs_ios[BENCH_MAX_LINES];   /* I/Os per access line (measured window) */
	uint64_t line_reads[BENCH_MAX_LINES];
	uint64_t runtime_ns;        /* the measured window */
	uint64_t cpu_user_ns, cpu_sys_ns;   /* of the process during the window */
	/* an array target: the flush after the window (uraid_array_flush:
	   the write-back cache destaged, the members flushed), so that what
	   the window acknowledged but did not write is paid somewhere */
	uint64_t drain_ns;
	uint64_t busy_ns;           /* time of the measured window with >= 1 I/O outstanding
	                               (replay: the one worker; else the sum over workers) */
	unsigned workers, iodepth, ntargets;
	uint64_t target_bytes;      /* size of the range used in the (first) target */
	uint64_t range_bytes_total; /* the ranges used in all targets together */
	char target_desc[160];      /* "raid5 4 members, chunk 512 KiB" or "2 files" */
	unsigned degraded;          /* array slots without a member */
	uint64_t verified_blocks;   /* --verify: blocks whose header and checksum were checked */
	uint64_t replay_skipped;    /* replay: trace actions not replayed (trim, wait, open) */
	struct bench_second *series;        /* per second of the window (bench_result_fini) */
	unsigned nseries;
	/* wl->lat_log_max: each worker's samples, in worker order (bench_result_fini) */
	struct bench_lat_log *lat_logs;
	unsigned nlat_logs;
};

/*
 * The latency percentiles every output reports, in order: the values, their
 * keys in JSON and CSV ("p99_9") and their names in tables and charts
 * ("p99.9"). BENCH_PCT_P99 and BENCH_PCT_P99_9 index the two that the
 * one-line summaries show.
 */
#define BENCH_NPCT 6
#define BENCH_PCT_P99   2
#define BENCH_PCT_P99_9 3
extern const double bench_pcts[BENCH_NPCT];             /* 50, 90, 99, 99.9, 99.99, 99.999 */
extern const char *const bench_pct_keys[BENCH_NPCT];
extern const char *const bench_pct_names[BENCH_NPCT];

/* n things in ns nanoseconds, per second; 0 for an empty window. */
static inline double bench_per_s(uint64_t n, uint64_t ns)
{
	return ns ? (double)n * 1e9 / (double)ns : 0;
}

static inline uint64_t bench_total_ios(const struct bench_result *r)
{
	return r->dir[0].ios + r->dir[1].ios;
}

static inline uint64_t bench_total_bytes(const struct bench_result *r)
{
	return r->dir[0].bytes + r->dir[1].bytes;
}

/* Reads and writes together over the measured window. */
static inline double bench_iops(const struct bench_result *r)
{
	return bench_per_s(bench_total_ios(r), r->runtime_ns);
}

static inline double bench_mib_s(const struct bench_result *r)
{
	return bench_per_s(bench_total_bytes(r), r->runtime_ns) / (1 << 20);
}

/* A share of the window in percent (CPU time: of one CPU); 0 for an empty window. */
static inline double bench_pct_of(uint64_t ns, uint64_t window_ns)
{
	return window_ns ? 100.0 * (double)ns / (double)window_ns : 0;
}

/* Called about every 100 ms by the thread that runs bench_run_hooked. */
struct bench_hooks {
	void (*tick)(void *arg, uint64_t elapsed_ns, uint64_t total_ns);
	void *arg;
};

/*
 * Parse fio's --bssplit ("4k/50:64k/50", sizes K/M binary) into lines with
 * only bytes and weight set (the caller sets the rest); 0 or -EINVAL.
 */
int bench_parse_bssplit(const char *s, struct bench_access *line, unsigned *nlines,
			char *err, size_t errlen);

/*
 * Parse one Iometer access line "SIZE,READ%,RANDOM%[,ALIGN][/WEIGHT]"
 * (4k,67,100,4k/60) into line; a missing weight is 0 here and shares what
 * the others leave of 100 in bench_access_finish. 0 or -EINVAL.
 */
int bench_parse_access(const char *s, struct bench_access *line, bool *has_weight,
		       char *err, size_t errlen);
/* Read access lines from a file (one per line, '#' comments); appends.
 * A file without any line is -EINVAL. */
int bench_load_access_file(const char *path, struct bench_access *line, bool *has_weight,
			   unsigned *nlines, char *err, size_t errlen);
/* Give lines without a weight what is left of 100; check the sum. */
int bench_access_finish(struct bench_access *line, const bool *has_weight, unsigned *nlines,
			char *err, size_t errlen);

/* The built-in profiles of workloads.md section 1. */
struct bench_profile {
	const char *name;
	const char *desc;
	unsigned nlines;
	struct bench_access line[BENCH_MAX_LINES];
};
const struct bench_profile *bench_profile_find(const char *name);
/* The i-th profile, NULL past the last. */
const struct bench_profile *bench_profile_at(unsigned i);

/* The workers a run of w on t uses: w->workers, else one per raw target, one for
 * an array or a replay. */
unsigned bench_workers(const struct bench_workload *w, const struct bench_targets *t);

/*
 * Is the path an NBD URI (nbd://, nbds://, nbd+unix://, ...)? Raw targets
 * that are all URIs are NBD exports, driven through libnbd (target_nbd.c).
 */
bool bench_is_nbd_uri(const char *path);

/* Does the workload write (access lines or trace)? */
bool bench_workload_writes(const struct bench_workload *w);

/*
 * Writing destroys data: -EPERM with the reason when the workload writes
 * (or an array is created) on a path that exists and BENCH_FORCE_WRITE is
 * not set.
 */
int bench_check_write_permission(const struct bench_workload *w, const struct bench_targets *t,
				 char *err, size_t errlen);

/*
 * Create the paths that do not exist (create_bytes each, random data when
 * fill_random, else zeroes); created[i] tells which. bench_run does this
 * itself; a caller running several cells does it once first.
 */
int bench_prepare_paths(const struct bench_targets *t, bool fill_random, bool *created,
			char *err, size_t errlen);

/* Run the workload; res is filled on success (free it with bench_result_fini). */
int bench_run(const struct bench_workload *w, const struct bench_targets *t,
	      struct bench_result *res, char *err, size_t errlen);
int bench_run_hooked(const struct bench_workload *w, const struct bench_targets *t,
		     const struct bench_hooks *hooks, struct bench_result *res,
		     char *err, size_t errlen);
void bench_result_fini(struct bench_result *res);

#endif
