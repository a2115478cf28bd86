// SPDX-License-Identifier: MIT
/*
 * The array backend's wait keeps the timeout it is given to within a few
 * tens of µs: with --rate_iops a worker sleeps in it until the next intended
 * start, and any oversleep counts as latency of the I/O that then starts late.
 * A wait rounded up to whole milliseconds made every rated I/O on an array
 * up to 1 ms late. Checked on a caller-driven engine with nothing in flight:
 * the median of several 200 µs waits must be well under 1 ms (the median,
 * so that one descheduled wait on a busy machine does not decide).
 * The raw targets' QD 1 backend (pread/pwrite, target_raw_sync.c) likewise:
 * its wait with nothing done sleeps the timeout; its submit does the I/O at
 * once and leaves it for the next wait with the data read, and a transfer
 * cut short by the end of the file is an error (-EIO), as on io_uring.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/engine.h>

#include "bench/worker.h"
#include "../support/check.h"

#define WAITS 21
#define WAIT_NS 200000

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(void)
{
	struct uraid_engine_opts eo = { .reactors = 1 };
	struct bench_run r;
	struct bench_worker w;
	uint64_t took[WAITS];

	memset(&r, 0, sizeof(r));
	memset(&w, 0, sizeof(w));
	int rc = uraid_engine_create(&eo, &r.engine);
	CHECK(!rc, "engine: %d", rc);
	if (rc)
		return 1;
	w.run = &r;
	w.index = 0;
	for (unsigned i = 0; i < WAITS; i++) {
		uint64_t t = bench_now_ns();
		rc = bench_array_backend.wait(&w, WAIT_NS);
		took[i] = bench_now_ns() - t;
		CHECK(!rc, "wait %u: %d", i, rc);
	}
	qsort(took, WAITS, sizeof(took[0]), cmp_u64);
	uint64_t median = took[WAITS / 2];
	printf("wait of %d ns: min %llu, median %llu, max %llu ns\n", WAIT_NS,
	       (unsigned long long)took[0], (unsigned long long)median,
	       (unsigned long long)took[WAITS - 1]);
	CHECK(median >= WAIT_NS * 9 / 10, "the wait returned early: median %llu ns",
	      (unsigned long long)median);
	CHECK(median < 700000, "a %d ns wait took %llu ns (median): rounded up to a millisecond?",
	      WAIT_NS, (unsigned long long)median);
	uraid_engine_destroy(r.engine);

	/* the raw QD 1 backend: its wait keeps the timeout too */
	for (unsigned i = 0; i < WAITS; i++) {
		uint64_t t = bench_now_ns();
		rc = bench_raw_sync_backend.wait(&w, WAIT_NS);
		took[i] = bench_now_ns() - t;
		CHECK(!rc, "sync wait %u: %d", i, rc);
	}
	qsort(took, WAITS, sizeof(took[0]), cmp_u64);
	median = took[WAITS / 2];
	printf("sync backend, wait of %d ns: median %llu ns\n", WAIT_NS,
	       (unsigned long long)median);
	CHECK(median >= WAIT_NS * 9 / 10 && median < 700000, "sync wait of %d ns took %llu ns",
	      WAIT_NS, (unsigned long long)median);

	/* a read of a file's second 4 KiB block, then one past its end */
	char path[] = "/tmp/uraid-test-bench-wait.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	if (fd < 0)
		return 1;
	unlink(path);
	static char data[8192], buf[4096];
	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + i / 4096);
	CHECK(pwrite(fd, data, sizeof(data), 0) == (ssize_t)sizeof(data), "pwrite");
	r.fds[0] = fd;
	struct bench_slot sl = { .w = &w, .rbuf = buf, .offset = 4096, .len = 4096 };
	uint64_t t0 = bench_now_ns();
	rc = bench_raw_sync_backend.submit(&w, &sl);
	CHECK(!rc && w.sync_slot == &sl && w.sync_res == 0, "sync read: rc %d, res %d", rc,
	      w.sync_res);
	CHECK(!memcmp(buf, data + 4096, 4096), "sync read: not the file's second block");
	CHECK(w.sync_now >= t0, "sync read: completion dated before its start");
	sl.offset = 6144;       /* 2 KiB left in the file */
	w.sync_slot = NULL;
	rc = bench_raw_sync_backend.submit(&w, &sl);
	CHECK(!rc && w.sync_slot == &sl && w.sync_res == -EIO, "short read: res %d, want -EIO",
	      w.sync_res);
	close(fd);
	return failures ? 1 : 0;
}
