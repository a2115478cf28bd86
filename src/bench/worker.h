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

struct bench_worker;

/* One outstanding I/O of a worker. */
struct bench_slot {
	struct uraid_io io;         /* array backend */
	struct bench_worker *w;
	void *rbuf, *wbuf;          /* read target; random data to write */
	uint64_t start_ns;          /* submission or intended start */
	uint64_t offset;
	uint32_t len;
	uint8_t write;
	uint8_t bs_idx;
	uint16_t target;            /* index into run->fds (raw) */
	int next_free;
};

struct bench_run;

struct bench_backend {
	/* start the slot's I/O; 0 or -errno */
	int (*submit)(struct bench_worker *w, struct bench_slot *s);
	/* send what is queued, wait up to timeout_ns (-1: until one completes),
	 * run completions through bench_complete; 0 or -errno */
	int (*wait)(struct bench_worker *w, int64_t timeout_ns);
};

struct bench_worker {
	struct bench_run *run;
	unsigned index;
	pthread_t thread;
	bool started;
	struct io_uring ring;       /* raw backend */
	bool ring_ok;
	/* generator */
	uint64_t rng;
	unsigned ntargets;          /* targets this worker drives, round robin */
	uint16_t targets[BENCH_MAX_TARGETS];
	uint64_t seq_next[BENCH_MAX_TARGETS];   /* per target of this worker */
	uint64_t seq_start[BENCH_MAX_TARGETS];
	unsigned next_target;
	uint64_t interval_ns;       /* rate: time between intended starts; 0: none */
	uint64_t next_intended;
	/* slots */
	struct bench_slot *slots;
	void *bufs;
	int free_head;
	unsigned in_flight;
	/* results */
	struct bench_result *stats;
	int error;
	char errmsg[256];
};

struct bench_run {
	const struct bench_workload *wl;
	const struct bench_targets *tg;
	const struct bench_backend *be;
	unsigned nworkers;
	struct bench_worker *workers;
	/* raw targets */
	unsigned ntargets;
	int fds[BENCH_MAX_TARGETS];
	uint64_t range_start[BENCH_MAX_TARGETS], range_len[BENCH_MAX_TARGETS];
	/* array */
	struct uraid_engine *engine;
	struct uraid_array *array;
	/* generator constants */
	uint32_t max_bs, min_bs, align;
	uint32_t bs_weight_total;
	/* timing */
	uint64_t t0, t_ramp_end, t_end;     /* CLOCK_MONOTONIC ns */
	atomic_bool stop;                   /* a worker failed */
};

extern const struct bench_backend bench_raw_backend;
extern const struct bench_backend bench_array_backend;

uint64_t bench_now_ns(void);
/* Called by a backend when slot s has completed with res (0 / bytes or -errno). */
void bench_complete(struct bench_worker *w, struct bench_slot *s, int res);
/* The worker thread. */
void *bench_worker_main(void *arg);

/* Backend setup (prepare.c, target_raw.c, target_array.c). */
int bench_raw_open(struct bench_run *r, char *err, size_t errlen);
void bench_raw_close(struct bench_run *r);
int bench_raw_worker_init(struct bench_worker *w, char *err, size_t errlen);
void bench_raw_worker_fini(struct bench_worker *w);
int bench_array_open(struct bench_run *r, char *err, size_t errlen);
void bench_array_close(struct bench_run *r);

/* Create the paths that do not exist (create_bytes each); *created per path. */
int bench_prepare_paths(const struct bench_targets *t, bool fill_random, bool *created,
			char *err, size_t errlen);

#endif
