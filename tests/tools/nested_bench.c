// SPDX-License-Identifier: MIT
/*
 * RAID 50 in process against RAID 0 of the same members (make bench,
 * BENCH_ONLY=nested): 4 KiB random reads at QD 32 on one reactor of an
 * engine with its own threads (stacked members need one), each completion
 * submitting the next from the reactor's thread. The members are made a
 * RAID 50 (2 groups of 3, chunk 64 KiB, uraid_nested_create) and a RAID 0
 * (chunk 64 KiB) in turn, ROUNDS times; the best IOPS of each are printed,
 * and with each round the process's CPU time per read (user + system over
 * the reads done: the reactor's thread is busy the whole time, the main
 * one sleeps), which a loaded machine changes less than IOPS.
 *
 *   nested_bench SECONDS ROUNDS DEV0 .. DEV5      (DEVs are overwritten)
 *
 * NESTED_BENCH_ONLY=50 or =0 runs that one alone (for perf stat: the
 * instructions per read, which the load of the machine does not change).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/engine.h>
#include <uraid/nested.h>

#define QD 32
#define BS 4096u

struct run {
	struct uraid_array *a;
	uint64_t blocks;
	_Atomic bool stop;
	_Atomic uint64_t done;
	_Atomic unsigned in_flight;
	_Atomic int error;
};

struct slot {
	struct uraid_io io;
	struct run *run;
	uint64_t rng;
	void *buf;
};

static void issue(struct slot *s);

static void done(struct uraid_io *io, int res)
{
	struct slot *s = io->ctx;
	if (res)
		atomic_store(&s->run->error, res);
	atomic_fetch_add_explicit(&s->run->done, 1, memory_order_relaxed);
	if (atomic_load(&s->run->stop) || res) {
		atomic_fetch_sub(&s->run->in_flight, 1);
		return;
	}
	issue(s);
}

static void issue(struct slot *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	s->io = (struct uraid_io){ .op = URAID_IO_READ, .offset = s->rng % s->run->blocks * BS,
				   .length = BS, .buf = s->buf, .done = done, .ctx = s };
	int rc = uraid_array_submit(s->run->a, 0, &s->io);
	if (rc) {
		atomic_store(&s->run->error, rc);
		atomic_fetch_sub(&s->run->in_flight, 1);
	}
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

/* IOPS; the CPU time per read in *ns_per_io. */
static double measure(struct uraid_array *a, double secs, double *ns_per_io)
{
	struct run r = { .a = a, .blocks = uraid_array_size(a) / BS };
	struct slot s[QD];
	struct timespec t0, t1, nap = { 0, 2000000 };

	atomic_init(&r.in_flight, QD);
	for (unsigned i = 0; i < QD; i++) {
		s[i].run = &r;
		s[i].rng = 0x9e3779b97f4a7c15ull * (i + 1);
		s[i].buf = aligned_alloc(4096, BS);
	}
	double c0 = cpu_s();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < QD; i++)
		issue(&s[i]);
	usleep((useconds_t)(secs * 1e6));
	atomic_store(&r.stop, true);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	uint64_t n = atomic_load(&r.done);
	double c1 = cpu_s();
	*ns_per_io = n ? (c1 - c0) * 1e9 / (double)n : 0;
	while (atomic_load(&r.in_flight))
		nanosleep(&nap, NULL);
	for (unsigned i = 0; i < QD; i++)
		free(s[i].buf);
	if (atomic_load(&r.error)) {
		fprintf(stderr, "nested_bench: a read failed: %s\n", strerror(-atomic_load(&r.error)));
		return 0;
	}
	return (double)n / ((double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
}

static double one(bool nested, const char *const *devs, double secs, double *ns_per_io)
{
	struct uraid_create_opts co = { .level = nested ? URAID_LEVEL_5 : URAID_LEVEL_0,
					.raid_disks = 6, .chunk_kib = 64, .minor = 2,
					.bitmap = URAID_BITMAP_NONE, .name = "nb", .homehost = "",
					.paths = devs, .npaths = 6,
					.flags = URAID_CREATE_FORCE | URAID_CREATE_ASSUME_CLEAN };
	struct uraid_engine_opts eo = { .reactors = 1, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = 6 };
	struct uraid_engine *e;
	struct uraid_nested n;
	struct uraid_nested_result nr;
	struct uraid_create_result cr;
	struct uraid_array *a = NULL;
	char err[512];
	double iops = 0;
	int rc;

	rc = nested ? uraid_nested_create(&co, 2, &nr, err, sizeof(err))
		    : uraid_create(&co, &cr, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "nested_bench: create: %s\n", err);
		return 0;
	}
	if (uraid_engine_create(&eo, &e))
		return 0;
	rc = nested ? uraid_nested_assemble(e, &ao, &n, err, sizeof(err))
		    : uraid_array_assemble(e, &ao, &a, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "nested_bench: assemble: %s\n", err);
	} else {
		iops = measure(nested ? n.outer : a, secs, ns_per_io);
		if (nested)
			uraid_nested_close(&n);
		else
			uraid_array_close(a);
	}
	uraid_engine_destroy(e);
	return iops;
}

int main(int argc, char **argv)
{
	if (argc != 9) {
		fprintf(stderr, "usage: nested_bench SECONDS ROUNDS DEV0 .. DEV5\n");
		return 2;
	}
	double secs = atof(argv[1]), best50 = 0, best0 = 0;
	int rounds = atoi(argv[2]);
	const char *const *devs = (const char *const *)argv + 3;

	const char *only = getenv("NESTED_BENCH_ONLY");
	if (only) {
		double c = 0, x = one(strcmp(only, "0") != 0, devs, secs, &c);
		printf("only raid%s: %.0f iops, cpu/io %.0f ns\n", only, x, c);
		return x > 0 ? 0 : 1;
	}
	for (int i = 0; i < rounds; i++) {
		/* in turn, the order swapped each round */
		double cx = 0, cy = 0;
		double x = i % 2 ? one(false, devs, secs, &cx) : one(true, devs, secs, &cx);
		double y = i % 2 ? one(true, devs, secs, &cy) : one(false, devs, secs, &cy);
		double r50 = i % 2 ? y : x, r0 = i % 2 ? x : y;
		double c50 = i % 2 ? cy : cx, c0 = i % 2 ? cx : cy;
		printf("round %d: raid50 %.0f raid0 %.0f cpu/io %.0f/%.0f ns\n", i + 1, r50, r0, c50,
		       c0);
		fflush(stdout);
		best50 = r50 > best50 ? r50 : best50;
		best0 = r0 > best0 ? r0 : best0;
	}
	printf("iops_raid50=%.0f iops_raid0=%.0f\n", best50, best0);
	return best50 > 0 && best0 > 0 ? 0 : 1;
}
