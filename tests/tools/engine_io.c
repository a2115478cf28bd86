// SPDX-License-Identifier: MIT
/*
 * engine_io: a referee helper that moves the test pattern (tests/support/
 * pattern.c) through uraid's engine, so Linux md can judge what the engine
 * wrote and the engine can be judged on what md wrote.
 *
 *   engine_io write [--seed=N] [--fail=SLOT]... [--threads] [--fail-mid=SLOT] MEMBER...
 *       assemble, fail the given slots (as pulled drives) before any I/O,
 *       write the whole array with the pattern in requests of varied sizes
 *       (512 B to 1 MiB, unaligned too), rewrite random ranges with the same
 *       pattern (read-modify-write on parity levels), flush, close.
 *       --threads: an engine that runs its own threads (two reactors and
 *       the metadata worker) instead of one driven by this thread;
 *       --fail-mid: writes to SLOT fail from half-way through the first pass
 *       (a member failure found in a completion)
 *   engine_io read MEMBER...
 *       assemble read-only and write the array's content to stdout
 *   engine_io pattern [--seed=N] BYTES
 *       write the first BYTES of the pattern to stdout
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/engine.h>

#include "../support/pattern.h"

#define MAX_REQ_SECTORS 2048u   /* 1 MiB */

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static struct uraid_array *open_array(struct uraid_engine **e, char **paths, int n,
				      uint32_t flags, bool threads)
{
	struct uraid_engine_opts eo = { .reactors = threads ? 2 : 1,
					.flags = threads ? URAID_ENGINE_THREADS : 0 };
	struct uraid_assemble_opts ao = { .paths = (const char *const *)paths,
					  .npaths = (unsigned)n, .flags = flags };
	struct uraid_array *a = NULL;
	char err[256];

	if (uraid_engine_create(&eo, e)) {
		fprintf(stderr, "engine_io: cannot create the engine\n");
		return NULL;
	}
	if (uraid_array_assemble(*e, &ao, &a, err, sizeof(err))) {
		fprintf(stderr, "engine_io: assemble: %s\n", err);
		return NULL;
	}
	return a;
}

/* Write [sector, sector+n) of the pattern, from a buffer offset by skew bytes. */
static int write_range(struct uraid_array *a, uint64_t seed, uint64_t sector, uint64_t n,
		       uint8_t *buf, size_t skew)
{
	test_pattern(seed, sector, n, buf + skew);
	int rc = uraid_array_pwrite(a, buf + skew, n * 512, sector * 512, 0);
	if (rc)
		fprintf(stderr, "engine_io: write of %" PRIu64 "+%" PRIu64 " failed: %s\n", sector,
			n, strerror(-rc));
	return rc;
}

static int cmd_write(uint64_t seed, const int *fail, int nfail, bool threads, int fail_mid,
		     char **paths, int n)
{
	struct uraid_engine *e;
	struct uraid_array *a = open_array(&e, paths, n, 0, threads);
	if (!a)
		return 1;
	for (int f = 0; f < nfail; f++) {
		struct uraid_fault fl = { .kind = URAID_FAULT_VANISH, .last_sector = UINT64_MAX };
		if (uraid_array_inject(a, (unsigned)fail[f], &fl)) {
			fprintf(stderr, "engine_io: no member in slot %d\n", fail[f]);
			return 1;
		}
	}
	uint64_t sectors = uraid_array_size(a) / 512, rs = seed;
	uint8_t *buf = aligned_alloc(4096, MAX_REQ_SECTORS * 512 + 4096);
	int rc = 0;

	/* the whole array, front to back, in requests of varied size and alignment */
	for (uint64_t s = 0; s < sectors && !rc;) {
		uint64_t len = 1 + rng(&rs) % MAX_REQ_SECTORS;
		if (len > sectors - s)
			len = sectors - s;
		if (fail_mid >= 0 && s >= sectors / 2) {
			struct uraid_fault fl = { .kind = URAID_FAULT_WRITE, .last_sector = UINT64_MAX };
			if (uraid_array_inject(a, (unsigned)fail_mid, &fl)) {
				fprintf(stderr, "engine_io: no member in slot %d\n", fail_mid);
				rc = 1;
				break;
			}
			fail_mid = -1;
		}
		rc = write_range(a, seed, s, len, buf, rng(&rs) % 4 ? 0 : 8);
		s += len;
	}
	/* then small rewrites all over: partial stripes */
	for (int i = 0; i < 200 && !rc; i++) {
		uint64_t len = 1 + rng(&rs) % 64;
		uint64_t s = rng(&rs) % (sectors - len + 1);
		rc = write_range(a, seed, s, len, buf, 0);
	}
	if (!rc && (rc = uraid_array_flush(a)))
		fprintf(stderr, "engine_io: flush failed: %s\n", strerror(-rc));
	struct uraid_array_status *st = malloc(sizeof(*st));
	uraid_array_status(a, st);
	fprintf(stderr, "engine_io: wrote %" PRIu64 " sectors with seed %" PRIu64
		", %u slot(s) degraded\n", sectors, seed, st->degraded);
	free(st);
	int rc2 = uraid_array_close(a);
	uraid_engine_destroy(e);
	free(buf);
	return rc || rc2 ? 1 : 0;
}

static int cmd_read(char **paths, int n)
{
	struct uraid_engine *e;
	struct uraid_array *a = open_array(&e, paths, n, URAID_ASSEMBLE_READONLY, false);
	if (!a)
		return 1;
	uint64_t size = uraid_array_size(a);
	uint8_t *buf = aligned_alloc(4096, MAX_REQ_SECTORS * 512);
	int rc = 0;
	for (uint64_t off = 0; off < size && !rc; off += MAX_REQ_SECTORS * 512) {
		uint64_t len = size - off < MAX_REQ_SECTORS * 512 ? size - off : MAX_REQ_SECTORS * 512;
		rc = uraid_array_pread(a, buf, len, off);
		if (rc)
			fprintf(stderr, "engine_io: read at %" PRIu64 " failed: %s\n", off,
				strerror(-rc));
		else if (fwrite(buf, 1, len, stdout) != len)
			rc = -EIO;
	}
	uraid_array_close(a);
	uraid_engine_destroy(e);
	free(buf);
	return rc ? 1 : 0;
}

static int cmd_pattern(uint64_t seed, uint64_t bytes)
{
	uint8_t *buf = malloc(MAX_REQ_SECTORS * 512);
	for (uint64_t s = 0; s < bytes / 512; s += MAX_REQ_SECTORS) {
		uint64_t n = bytes / 512 - s < MAX_REQ_SECTORS ? bytes / 512 - s : MAX_REQ_SECTORS;
		test_pattern(seed, s, n, buf);
		if (fwrite(buf, 512, n, stdout) != n)
			return 1;
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t seed = 1;
	int fail[8], nfail = 0, i = 2, fail_mid = -1;
	bool threads = false;

	if (argc < 3)
		goto usage;
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strncmp(argv[i], "--seed=", 7))
			seed = strtoull(argv[i] + 7, NULL, 0);
		else if (!strncmp(argv[i], "--fail=", 7) && nfail < 8)
			fail[nfail++] = atoi(argv[i] + 7);
		else if (!strncmp(argv[i], "--fail-mid=", 11))
			fail_mid = atoi(argv[i] + 11);
		else if (!strcmp(argv[i], "--threads"))
			threads = true;
		else
			goto usage;
	}
	if (i >= argc)
		goto usage;
	if (!strcmp(argv[1], "write"))
		return cmd_write(seed, fail, nfail, threads, fail_mid, argv + i, argc - i);
	if (!strcmp(argv[1], "read"))
		return cmd_read(argv + i, argc - i);
	if (!strcmp(argv[1], "pattern"))
		return cmd_pattern(seed, strtoull(argv[i], NULL, 0));
usage:
	fprintf(stderr, "usage: engine_io write [--seed=N] [--fail=SLOT]... [--threads] "
			"[--fail-mid=SLOT] MEMBER...\n"
			"       engine_io read MEMBER...\n"
			"       engine_io pattern [--seed=N] BYTES\n");
	return 2;
}
