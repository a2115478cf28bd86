/* SPDX-License-Identifier: MIT */
/*
 * Internals of a bench run: the workers, their I/O slots, and the two
 * backends (raw targets on a private io_uring, an array through liburaid).
 */
#ifndef URAID_BENCH_WORKER_H
#define URAID_BENCH_WORKER_H

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>

#include <uraid/engine.h>

#include "bench/bench.h"
#include "bench/gen.h"

struct bench_worker;
struct nbd_handle;

/* One outstanding I/O of a worker. */
struct bench_slot {
	struct uraid_io io;         /* array backend */
	struct bench_worker *w;
	void *rbuf, *wbuf;          /* read target; data to write (data.h) */
	uint64_t start_ns;          /* submission or intended start */
	uint64_t offset;
	uint32_t len;
	uint8_t write;              /* direction (0 read, 1 write) */
	uint8_t flush;              /* replay: a sync action (no data) */
	uint8_t line;               /* access line */
	uint8_t readback;           /* --verify read-back after the run: not measured */
	uint8_t busy;               /* in flight */
	uint16_t target;            /* index into run->fds (raw) */
	uint16_t tslot;             /* index into the worker's targets */
	uint64_t seq;               /* --verify: sequence number of a write */
	int next_free;
	int nbd_res;                /* NBD: the reply's result, while on nbd_ready */
	struct bench_slot *nbd_next;    /* NBD: next on the worker's nbd_ready */
};

struct bench_run;

struct bench_backend {
	/* in the worker thread before its first I/O (may be NULL); 0 or -errno */
	int (*start)(struct bench_worker *w);
	/* start the slot's I/O; 0 or -errno */
	int (*submit)(struct bench_worker *w, struct bench_slot *s);
	/* send what is queued, wait up to timeout_ns (-1: until one completes),
	 * run completions through bench_complete; 0 or -errno */
	int (*wait)(struct bench_worker *w, int64_t timeout_ns);
};

enum bench_phase {
	BENCH_PHASE_RUN,            /* the workload (ramp and measured window) */
	BENCH_PHASE_READBACK,       /* --verify: read back what this worker wrote */
};

struct bench_worker {
	struct bench_run *run;
	unsigned index;
	pthread_t thread;
	bool started;
	struct io_uring ring;       /* raw backend */
	bool ring_ok;
	bool ring_disabled;         /* enabled by the worker thread (raw_start) */
	bool fixed_files;           /* the targets registered with the ring */
	bool fixed_bufs;            /* bufs registered with the ring (buffer 0) */
	struct nbd_handle *nbd[BENCH_MAX_TARGETS];  /* NBD backend: own connection per
	                                               target it drives (by target index) */
	bool nbd_can_flush[BENCH_MAX_TARGETS];
	uint64_t nbd_completed;     /* commands completed (nbd_wait's progress) */
	struct bench_slot *nbd_ready;   /* replies read, to be dated and completed */
	struct bench_slot *sync_slot;   /* raw sync backend: the I/O done, to complete */
	int sync_res;               /* its result (0 or -errno) */
	uint64_t sync_now;          /* when it returned */
	/* generator */
	struct bench_gen gen;
	unsigned ntargets;          /* targets this worker drives, round robin */
	uint16_t targets[BENCH_MAX_TARGETS];
	uint64_t rstart[BENCH_MAX_TARGETS];     /* the range it uses in each (with --verify
	                                           its own part, else the run's range) */
	uint64_t rlen[BENCH_MAX_TARGETS];
	uint64_t seq_next[BENCH_MAX_TARGETS];   /* sequential position per target */
	uint64_t issue_limit;       /* wl->passes: bytes this worker issues; 0: no limit */
	uint64_t issued;            /* bytes issued so far (with issue_limit) */
	unsigned next_target;
	uint64_t interval_ns;       /* rate: time between intended starts; 0: none */
	uint64_t next_intended;
	size_t trace_pos;           /* replay: next action */
	uint64_t wseq;              /* --verify: writes issued */
	enum bench_phase phase;
	unsigned rb_tslot;          /* read-back position */
	uint64_t rb_off;
	uint64_t main_end_ns;       /* when the workload phase drained */
	/* slots */
	struct bench_slot *slots;
	void *bufs;
	size_t bufs_bytes;
	int free_head;
	unsigned in_flight;
	uint64_t busy_since;
	/* results */
	struct bench_result *stats;
	struct bench_second *series;    /* nseries seconds of the window */
	unsigned nseries;
	struct bench_lat_log lat_log;   /* wl->lat_log_max: every measured I/O (latlog.h) */
	int error;
	char errmsg[320];
};

struct bench_run {
	const struct bench_workload *wl;
	const struct bench_targets *tg;
	const struct bench_backend *be;
	unsigned nworkers;
	struct bench_worker *workers;
	/* raw targets (or NBD exports: nbd set, fds unused) */
	bool nbd;
	unsigned ntargets;
	int fds[BENCH_MAX_TARGETS];
	uint64_t range_start[BENCH_MAX_TARGETS], range_len[BENCH_MAX_TARGETS];
	/* array */
	struct uraid_engine *engine;
	struct uraid_array *array;
	/* generator constants */
	uint32_t max_bs, min_bs;
	uint32_t grid;              /* every offset and length is a multiple (from the range
	                               start): the gcd of transfer sizes and alignments */
	uint64_t part_align;        /* sub-ranges of workers start at multiples of this */
	/* --verify */
	uint32_t vunit;             /* 0: off */
	uint32_t *vexp[BENCH_MAX_TARGETS];  /* last write's seq per unit of each range */
	bool vstrict;               /* read-only run: every unit must carry a header */
	/* timing */
	uint64_t t0, t_ramp_end, t_end;     /* CLOCK_MONOTONIC ns */
	atomic_bool stop;                   /* a worker failed */
	atomic_uint main_done;              /* workers past the workload phase */
};

extern const struct bench_backend bench_raw_backend;
extern const struct bench_backend bench_raw_sync_backend;  /* raw at QD 1 */
extern const struct bench_backend bench_array_backend;
extern const struct bench_backend bench_nbd_backend;

uint64_t bench_now_ns(void);
/* Called by a backend when slot s has completed with res (0 / bytes or -errno). */
void bench_complete(struct bench_worker *w, struct bench_slot *s, int res);
/*
 * The same with the completion time read by the caller: a backend that reaps
 * a batch reads the clock once for it (each of those I/Os had completed by
 * then; a read per I/O would cost ~100 ns each on a VM's clock and date the
 * later ones of the batch by the time spent on the earlier ones).
 */
void bench_complete_at(struct bench_worker *w, struct bench_slot *s, int res, uint64_t now);
/* The worker thread. */
void *bench_worker_main(void *arg);

/* Backend setup (prepare.c, target_raw.c, target_array.c). */
int bench_raw_open(struct bench_run *r, char *err, size_t errlen);
void bench_raw_close(struct bench_run *r);
int bench_raw_worker_init(struct bench_worker *w, char *err, size_t errlen);
void bench_raw_worker_fini(struct bench_worker *w);
int bench_array_open(struct bench_run *r, char *err, size_t errlen);
void bench_array_close(struct bench_run *r);
/* NBD exports (target_nbd.c): size and read-only probe; each worker's connections. */
int bench_nbd_open(struct bench_run *r, char *err, size_t errlen);
int bench_nbd_worker_init(struct bench_worker *w, char *err, size_t errlen);
void bench_nbd_worker_fini(struct bench_worker *w);
/* Cut a target's size down to the range the workload uses (range_start/len[i]). */
int bench_set_range(struct bench_run *r, unsigned i, uint64_t bytes, const char *name,
		    char *err, size_t errlen);

#endif
