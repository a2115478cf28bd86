// SPDX-License-Identifier: MIT
/*
 * The write-intent bitmap is written once per burst: writes that reach a
 * reactor together, each to a clean chunk, wait for one bitmap write
 * between them (md's unplug), not one each. Then every bit they set is on
 * the members (read back from each member's copy), the data reads back,
 * and writes to chunks already set write no bitmap at all.
 *
 *   test_wib [SEED]
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/bitmap.h>
#include <uraid/engine.h>

#include "engine/core/array.h"       /* the bitmap's write count */
#include "../support/check.h"
#include "../support/engine_op.h"
#include "../support/array_fixture.h"

#define N 4
#define MEMBER_MIB 16u
#define BITMAP_CHUNK_KIB 64u
#define BURST 32u
#define PAGE 4096u

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261130, rs = seed;
	char dir[64], paths[N][96], err[256];
	const char *devs[N];
	struct uraid_engine *e = NULL;
	struct uraid_array *ua = NULL;

	printf("test_wib: seed %" PRIu64 " (rerun: %s %" PRIu64 ")\n", seed, argv[0], seed);
	snprintf(dir, sizeof(dir), "/dev/shm/uraid-wib.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", dir, i);
		devs[i] = paths[i];
		if (fixture_make_file(paths[i], (uint64_t)MEMBER_MIB << 20))
			return 1;
	}
	struct uraid_create_opts co = {
		.level = URAID_LEVEL_5, .raid_disks = N, .chunk_kib = 64, .minor = 2,
		.bitmap = URAID_BITMAP_INTERNAL, .bitmap_chunk_kib = BITMAP_CHUNK_KIB,
		.flags = URAID_CREATE_ASSUME_CLEAN, .paths = devs, .npaths = N,
		.homehost = "<none>",
	};
	struct uraid_engine_opts eo = { .reactors = 1 };
	struct uraid_assemble_opts ao = { .paths = devs, .npaths = N };
	if (uraid_create(&co, NULL, err, sizeof(err)) || uraid_engine_create(&eo, &e) ||
	    uraid_array_assemble(e, &ao, &ua, err, sizeof(err))) {
		CHECK(0, "setup: %s", err);
		goto out;
	}
	struct array *a = (struct array *)ua;
	CHECK(a->wib != NULL, "the array runs without its bitmap");
	if (!a->wib)
		goto out;

	/*
	 * BURST writes of a page, each in its own bitmap chunk (member chunks
	 * of 64 KiB, 3 data chunks a row: array offset 192 KiB * k is chunk k),
	 * submitted before the reactor runs: one bitmap write for all.
	 */
	static struct op ops[BURST];
	uint8_t *data = aligned_alloc(PAGE, (size_t)BURST * PAGE);
	rng_fill(&rs, data, (size_t)BURST * PAGE);
	uint64_t row = 3 * 64 * 1024;
	uint64_t before = atomic_load(&a->wib->flushes);
	for (unsigned k = 0; k < BURST; k++) {
		struct op *o = &ops[k];
		o->io = (struct uraid_io){ .op = URAID_IO_WRITE, .offset = (k + 1) * row,
					   .length = PAGE, .buf = data + (size_t)k * PAGE,
					   .done = op_done, .ctx = o };
		CHECK(uraid_array_submit(ua, 0, &o->io) == 0, "submit %u", k);
	}
	for (unsigned k = 0; k < BURST;) {
		uraid_engine_poll(e, 0, 10);
		while (k < BURST && __atomic_load_n(&ops[k].done, __ATOMIC_ACQUIRE))
			CHECK(ops[k++].result == 0, "write %u failed", k);
	}
	uint64_t burst = atomic_load(&a->wib->flushes) - before;
	CHECK(burst == 1, "%u writes to clean chunks took %" PRIu64 " bitmap writes (1 expected)",
	      BURST, burst);

	/* the same chunks again: their bits are on disk, no bitmap write */
	before = atomic_load(&a->wib->flushes);
	for (unsigned k = 0; k < BURST; k++)
		CHECK(uraid_array_pwrite(ua, data + (size_t)k * PAGE, PAGE, (k + 1) * row + PAGE, 0) == 0,
		      "rewrite %u", k);
	CHECK(atomic_load(&a->wib->flushes) == before, "writes to set chunks wrote the bitmap %"
	      PRIu64 " times", atomic_load(&a->wib->flushes) - before);

	/* every member's copy has the bits */
	for (unsigned i = 0; i < N; i++) {
		struct uraid_probe p;
		int fd = open(paths[i], O_RDONLY);
		bool ok = fd >= 0 && uraid_probe_fd(fd, &p) == 0 && p.chosen >= 0;
		CHECK(!ok || p.bitmap_dirty_bits >= BURST, "member %u holds %" PRIu64 " set bits, %u "
		      "at least expected", i, p.bitmap_dirty_bits, BURST);
		if (fd >= 0)
			close(fd);
		CHECK(ok, "member %u: probe", i);
	}

	/* and the data reads back */
	uint8_t *back = aligned_alloc(PAGE, PAGE);
	for (unsigned k = 0; k < BURST; k++) {
		CHECK(uraid_array_pread(ua, back, PAGE, (k + 1) * row) == 0 &&
		      memcmp(back, data + (size_t)k * PAGE, PAGE) == 0, "write %u reads back", k);
	}
	free(back);
	free(data);
out:
	if (ua)
		uraid_array_close(ua);
	if (e)
		uraid_engine_destroy(e);
	for (unsigned i = 0; i < N; i++)
		unlink(paths[i]);
	rmdir(dir);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
