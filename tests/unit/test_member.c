// SPDX-License-Identifier: MIT
/*
 * member: open (O_DIRECT on tmpfs and /tmp), synchronous metadata I/O with
 * and without alignment, async reads/writes at data_offset, FUA, flush,
 * discard reading back zeroes, end of device = -EIO (after a short read),
 * every fault kind, a rate fault with a fixed seed, counters.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "io/member.h"
#include "io/member_internal.h"
#include "../support/check.h"

#define SEED 0x6d656d62u
#define FILE_BYTES (8u << 20)
#define DATA_OFFSET 2048u       /* sectors: 1 MiB */
#define FAULT_SEED 42u

struct tio {
	struct member_io mio;
	int res;
	int done;
};

static void tio_done(struct member_io *mio, int res)
{
	struct tio *t = (struct tio *)mio;

	t->res = res;
	t->done++;
}

/* One member I/O, waited for. */
static int run(struct reactor *r, struct member *m, enum member_op kind, void *buf, uint32_t len,
	       uint64_t sector, int rw_flags)
{
	struct tio t = { .mio = { .kind = kind, .buf = buf, .len = len, .sector = sector,
				  .rw_flags = rw_flags, .m = m, .done = tio_done } };

	member_submit(r, &t.mio);
	CHECK(t.done == 0, "done ran inside member_submit");
	for (int i = 0; i < 1000 && !t.done; i++)
		reactor_poll(r, -1);
	CHECK(t.done == 1, "I/O completed %d times", t.done);
	return t.res;
}

static struct member_totals totals(const struct member *m)
{
	struct member_totals t;
	member_counters(m, &t);
	return t;
}

static void fill(unsigned char *b, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed ^= seed << 13;
		seed ^= seed >> 17;
		seed ^= seed << 5;
		b[i] = (unsigned char)seed;
	}
}

static int all_zero(const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (b[i])
			return 0;
	return 1;
}

static void test_open_errors(void)
{
	struct member m;
	char err[256] = "";
	int rc = member_open(&m, "/nonexistent/uraid-member", 0, NULL, err, sizeof(err));

	CHECK(rc == -ENOENT, "open missing: %d", rc);
	CHECK(strstr(err, "/nonexistent/uraid-member") != NULL, "error names the path: %s", err);
	CHECK(m.fd == -1, "fd after failure %d", m.fd);
	member_close(&m);               /* harmless after a failure */
	rc = member_open(&m, "/dev/shm", 0, NULL, err, sizeof(err));
	CHECK(rc == -EINVAL, "open a directory: %d (%s)", rc, err);
}

static void test_sync(struct member *m, const char *dir, unsigned char *a, unsigned char *b)
{
	/* aligned, at an absolute sector */
	fill(a, 8192, SEED);
	CHECK(member_pwrite_sync(m, a, 8192, 8) == 0, "%s: pwrite_sync", dir);
	memset(b, 0, 8192);
	CHECK(member_pread_sync(m, b, 8192, 8) == 0, "%s: pread_sync", dir);
	CHECK(memcmp(a, b, 8192) == 0, "%s: sync read back differs", dir);

	/* 512 bytes from an unaligned buffer at an odd sector: read-modify-write if direct */
	fill(a + 512, 512, SEED + 1);
	CHECK(member_pwrite_sync(m, a + 512, 512, 9) == 0, "%s: pwrite_sync 512 @9", dir);
	CHECK(member_pread_sync(m, b + 100, 1024, 8) == 0, "%s: pread_sync unaligned", dir);
	CHECK(memcmp(b + 100, a, 1024) == 0, "%s: unaligned sync I/O", dir);
	CHECK(member_pread_sync(m, b, 8192, 8) == 0 && memcmp(a, b, 8192) == 0,
	      "%s: RMW disturbed its neighbours", dir);

	/* past the end */
	CHECK(member_pread_sync(m, b, 4096, FILE_BYTES / 512 - 4) == -EIO,
	      "%s: pread_sync across the end", dir);
	CHECK(totals(m).reads == 0 && totals(m).writes == 0 && m->read_errors == 1,
	      "%s: sync I/O counted as data I/O, or its error not counted", dir);
	m->read_errors = 0;
}

static void test_rw(struct reactor *r, struct member *m, const char *dir, unsigned char *a,
		    unsigned char *b)
{
	const uint32_t len = 65536;
	unsigned char *c = b + len;
	int rc;

	fill(a, 64 * len / 16, SEED + 2);
	for (int i = 0; i < 16; i++) {
		rc = run(r, m, MEMBER_WRITE, a + (size_t)i * (len / 16), len / 16,
			 (uint64_t)i * (len / 16 / 512), i % 2 ? RWF_DSYNC : 0);
		CHECK(rc == 0, "%s: write %d: %d", dir, i, rc);
	}
	CHECK(run(r, m, MEMBER_FLUSH, NULL, 0, 0, 0) == 0, "%s: flush", dir);
	memset(b, 0, len);
	rc = run(r, m, MEMBER_READ, b, len, 0, 0);
	CHECK(rc == 0 && memcmp(a, b, len) == 0, "%s: read back: %d", dir, rc);
	/* sectors are relative to data_offset */
	CHECK(member_pread_sync(m, c, 4096, DATA_OFFSET) == 0 && memcmp(a, c, 4096) == 0,
	      "%s: data not at data_offset", dir);

	/* discard punches a hole that reads back zeroes; the rest stays */
	rc = run(r, m, MEMBER_DISCARD, NULL, 16384, 16, 0);
	CHECK(rc == 0, "%s: discard: %d", dir, rc);
	rc = run(r, m, MEMBER_READ, b, len, 0, 0);
	CHECK(rc == 0 && all_zero(b + 8192, 16384), "%s: discarded range not zero", dir);
	CHECK(memcmp(a, b, 8192) == 0 && memcmp(a + 24576, b + 24576, len - 24576) == 0,
	      "%s: discard touched its neighbours", dir);

	/* the last 4 KiB of the device, then past it: a short read, continued, ends in -EIO */
	uint64_t data_sectors = FILE_BYTES / 512 - DATA_OFFSET;
	CHECK(run(r, m, MEMBER_READ, b, 4096, data_sectors - 8, 0) == 0, "%s: last block", dir);
	memset(b, 0xee, 8192);
	rc = run(r, m, MEMBER_READ, b, 8192, data_sectors - 8, 0);
	CHECK(rc == -EIO, "%s: read across the end: %d", dir, rc);
	CHECK(b[0] != 0xee || b[4095] != 0xee, "%s: the short read's part did not land", dir);
	/* (no check on b[4096..]: ext4's O_DIRECT zero-fills past EOF yet reports a short read) */
	rc = run(r, m, MEMBER_READ, b, 4096, data_sectors, 0);
	CHECK(rc == -EIO, "%s: read at the end: %d", dir, rc);
	CHECK(run(r, m, MEMBER_READ, b, 100, 0, 0) == -EINVAL, "%s: length not sectors", dir);

	struct member_totals t = totals(m);
	CHECK(t.writes == 16 && t.write_bytes == 16ull * (len / 16), "%s: write counters %llu %llu",
	      dir, (unsigned long long)t.writes, (unsigned long long)t.write_bytes);
	CHECK(t.reads == 3 && t.read_bytes == 2ull * len + 4096, "%s: read counters %llu %llu",
	      dir, (unsigned long long)t.reads, (unsigned long long)t.read_bytes);
	CHECK(m->read_errors == 3 && m->write_errors == 0, "%s: error counters %llu %llu", dir,
	      (unsigned long long)m->read_errors, (unsigned long long)m->write_errors);
}

/*
 * A gathered write (member_io.iov, the journal's log writes): three buffers
 * out of order in memory land in order on the member; the iovecs of a short
 * transfer are advanced in place (member_iov_advance, called here through a
 * write cut by hand: the first half written plain, the rest continued).
 */
static void test_writev(struct reactor *r, struct member *m, const char *dir, unsigned char *a,
			unsigned char *b)
{
	fill(a, 3 * 4096, SEED + 3);
	struct iovec iov[3] = {
		{ .iov_base = a + 8192, .iov_len = 4096 },
		{ .iov_base = a, .iov_len = 8192 },
		{ .iov_base = a + 4096, .iov_len = 4096 },
	};
	struct tio t = { .mio = { .kind = MEMBER_WRITE, .iov = iov, .iovcnt = 3, .len = 16384,
				  .sector = 64, .rw_flags = RWF_DSYNC, .m = m, .done = tio_done } };
	member_submit(r, &t.mio);
	for (int i = 0; i < 1000 && !t.done; i++)
		reactor_poll(r, -1);
	CHECK(t.done == 1 && t.res == 0, "%s: gathered write: %d %d", dir, t.done, t.res);
	memset(b, 0, 16384);
	CHECK(run(r, m, MEMBER_READ, b, 16384, 64, 0) == 0, "%s: read back gathered", dir);
	CHECK(memcmp(b, a + 8192, 4096) == 0 && memcmp(b + 4096, a, 8192) == 0 &&
	      memcmp(b + 12288, a + 4096, 4096) == 0, "%s: gathered write out of order", dir);

	/* the same written now by the calling thread (member_write_sync: the
	   journal's log writer), a member in memory only; counted and done()
	   only once handed to member_write_sync_done on the reactor */
	struct iovec iov4[2] = {
		{ .iov_base = a + 8192, .iov_len = 8192 },
		{ .iov_base = a, .iov_len = 4096 },
	};
	struct tio t4 = { .mio = { .kind = MEMBER_WRITE, .iov = iov4, .iovcnt = 2, .len = 12288,
				   .sector = 256, .rw_flags = RWF_DSYNC, .m = m, .done = tio_done } };
	struct member_totals before4 = totals(m);
	int n4 = member_write_sync(&t4.mio);
	if (!m->in_memory) {
		CHECK(n4 == -EINVAL, "%s: write_sync refused on a member not in memory: %d", dir, n4);
	} else {
		CHECK(n4 == 12288 && t4.done == 0 && totals(m).writes == before4.writes,
		      "%s: write_sync: %d, done %d, not counted yet", dir, n4, t4.done);
		member_write_sync_done(r, &t4.mio, n4);
		CHECK(t4.done == 1 && t4.res == 0 && totals(m).writes == before4.writes + 1 &&
		      totals(m).write_bytes == before4.write_bytes + 12288,
		      "%s: write_sync_done: done %d res %d, counted", dir, t4.done, t4.res);
		memset(b, 0, 12288);
		CHECK(run(r, m, MEMBER_READ, b, 12288, 256, 0) == 0 &&
		      memcmp(b, a + 8192, 8192) == 0 && memcmp(b + 8192, a, 4096) == 0,
		      "%s: write_sync read back", dir);
		/* an injected write fault: -EIO, nothing written; done() with it */
		struct uraid_fault f4 = { .kind = URAID_FAULT_WRITE, .first_sector = 260,
					  .last_sector = 260 };
		member_set_fault(m, &f4);
		/* sectors 256..271 cross the fault */
		struct iovec iov6[2] = { { .iov_base = a + 4096, .iov_len = 4096 },
					 { .iov_base = a + 4096, .iov_len = 4096 } };
		struct tio t5 = { .mio = { .kind = MEMBER_WRITE, .iov = iov6, .iovcnt = 2,
					   .len = 8192, .sector = 256, .m = m, .done = tio_done } };
		int n5 = member_write_sync(&t5.mio);
		uint64_t errs = m->write_errors;
		member_write_sync_done(r, &t5.mio, n5);
		CHECK(n5 == -EIO && t5.done == 1 && t5.res == -EIO && m->write_errors == errs + 1,
		      "%s: write_sync under a write fault: %d, done %d res %d", dir, n5, t5.done,
		      t5.res);
		memset(b, 0, 8192);
		CHECK(run(r, m, MEMBER_READ, b, 8192, 256, 0) == 0 && memcmp(b, a + 8192, 8192) == 0,
		      "%s: nothing written under the fault", dir);
		f4.kind = URAID_FAULT_NONE;
		member_set_fault(m, &f4);
		atomic_store(&m->write_errors, errs);  /* the checks after count from 0 */
	}

	/* advance past 6 KiB: the second iovec's last 2 KiB and the third remain */
	struct iovec v2[3] = { iov[0], iov[1], iov[2] };
	v2[0].iov_base = a + 8192;
	v2[1].iov_base = a;
	v2[1].iov_len = 8192;
	t.mio.iov = v2;
	t.mio.iovcnt = 3;
	member_iov_advance(&t.mio, 6144);
	CHECK(t.mio.iovcnt == 2 && t.mio.iov == &v2[1] && v2[1].iov_base == a + 2048 &&
	      v2[1].iov_len == 6144, "%s: iovecs advanced wrong: %u", dir, t.mio.iovcnt);
	member_iov_advance(&t.mio, 6144);
	CHECK(t.mio.iovcnt == 1 && t.mio.iov == &v2[2] && v2[2].iov_len == 4096,
	      "%s: iovecs advanced wrong at an edge: %u", dir, t.mio.iovcnt);

	/* not a write: refused */
	struct tio t2 = { .mio = { .kind = MEMBER_READ, .iov = iov, .iovcnt = 3, .len = 16384,
				   .sector = 64, .m = m, .done = tio_done } };
	member_submit(r, &t2.mio);
	for (int i = 0; i < 1000 && !t2.done; i++)
		reactor_poll(r, -1);
	CHECK(t2.done == 1 && t2.res == -EINVAL, "%s: gathered read: %d", dir, t2.res);
}

static void test_faults(struct reactor *r, struct member *m, const char *dir, unsigned char *a,
			unsigned char *b)
{
	struct uraid_fault f = { .kind = URAID_FAULT_READ, .first_sector = 100, .last_sector = 107 };
	uint64_t rerr = m->read_errors, werr = m->write_errors;
	int rc;

	/* READ: reads overlapping [100, 107] fail, others and writes do not */
	member_set_fault(m, &f);
	CHECK(run(r, m, MEMBER_READ, b, 4096, 96, 0) == -EIO, "%s: read fault head", dir);
	CHECK(run(r, m, MEMBER_READ, b, 512, 107, 0) == -EIO, "%s: read fault last", dir);
	CHECK(run(r, m, MEMBER_READ, b, 4096, 92, 0) == 0, "%s: read before fault", dir);
	CHECK(run(r, m, MEMBER_READ, b, 4096, 108, 0) == 0, "%s: read after fault", dir);
	fill(a, 4096, SEED + 3);
	CHECK(run(r, m, MEMBER_WRITE, a, 4096, 100, 0) == 0, "%s: write under read fault", dir);
	CHECK(m->read_errors == rerr + 2, "%s: read_errors %llu", dir,
	      (unsigned long long)m->read_errors);

	/* WRITE: the write fails without touching the device */
	f.kind = URAID_FAULT_WRITE;
	member_set_fault(m, &f);
	memset(b, 0x77, 4096);
	CHECK(run(r, m, MEMBER_WRITE, b, 4096, 104, RWF_DSYNC) == -EIO, "%s: write fault", dir);
	CHECK(run(r, m, MEMBER_WRITE, b, 4096, 108, 0) == 0, "%s: write after fault", dir);
	CHECK(run(r, m, MEMBER_READ, b, 4096, 100, 0) == 0 && memcmp(a, b, 4096) == 0,
	      "%s: failed write reached the device", dir);
	CHECK(m->write_errors == werr + 1, "%s: write_errors", dir);

	/* VANISH: everything fails with -ENODEV, metadata too */
	f = (struct uraid_fault){ .kind = URAID_FAULT_VANISH };
	member_set_fault(m, &f);
	CHECK(run(r, m, MEMBER_READ, b, 4096, 0, 0) == -ENODEV, "%s: vanish read", dir);
	CHECK(run(r, m, MEMBER_WRITE, b, 4096, 0, 0) == -ENODEV, "%s: vanish write", dir);
	CHECK(run(r, m, MEMBER_FLUSH, NULL, 0, 0, 0) == -ENODEV, "%s: vanish flush", dir);
	CHECK(run(r, m, MEMBER_DISCARD, NULL, 4096, 0, 0) == -ENODEV, "%s: vanish discard", dir);
	CHECK(member_pread_sync(m, b, 4096, 0) == -ENODEV, "%s: vanish pread_sync", dir);
	CHECK(member_pwrite_sync(m, b, 4096, 0) == -ENODEV, "%s: vanish pwrite_sync", dir);

	/* NONE clears */
	f.kind = URAID_FAULT_NONE;
	member_set_fault(m, &f);
	CHECK(run(r, m, MEMBER_READ, b, 4096, 100, 0) == 0, "%s: cleared", dir);

	/* a rate: same seed, same failures; about the share asked for */
	int fails[2] = { 0, 0 };
	unsigned char pattern[2][500];
	for (int pass = 0; pass < 2; pass++) {
		f = (struct uraid_fault){ .kind = URAID_FAULT_READ, .first_sector = 0,
					  .last_sector = UINT64_MAX, .rate_ppm = 250000,
					  .seed = FAULT_SEED };
		member_set_fault(m, &f);
		for (int i = 0; i < 500; i++) {
			rc = run(r, m, MEMBER_READ, b, 512, (uint64_t)i, 0);
			CHECK(rc == 0 || rc == -EIO, "%s: rate read %d", dir, rc);
			pattern[pass][i] = rc != 0;
			fails[pass] += rc != 0;
		}
	}
	f.kind = URAID_FAULT_NONE;
	member_set_fault(m, &f);
	printf("%s: rate fault 250000 ppm seed %u: %d of 500 reads failed\n", dir, FAULT_SEED,
	       fails[0]);
	CHECK(fails[0] == fails[1] && memcmp(pattern[0], pattern[1], 500) == 0,
	      "%s: rate fault not deterministic: %d vs %d", dir, fails[0], fails[1]);
	CHECK(fails[0] > 75 && fails[0] < 175, "%s: %d of 500 failed at 25%%", dir, fails[0]);
	/* rate 1000000 = always */
	f = (struct uraid_fault){ .kind = URAID_FAULT_WRITE, .first_sector = 0,
				  .last_sector = UINT64_MAX, .rate_ppm = 1000000, .seed = 1 };
	member_set_fault(m, &f);
	for (int i = 0; i < 20; i++)
		CHECK(run(r, m, MEMBER_WRITE, b, 512, (uint64_t)i, 0) == -EIO, "%s: always", dir);
	member_set_fault(m, NULL);
	CHECK(!m->has_fault, "%s: cleared with NULL", dir);
}

/*
 * Short-transfer continuation: files give short reads only at their end, so
 * a pipe stands in for the device (it ignores offsets): the read of 1024
 * bytes gets 512, then the rest after the writer's pause.
 */
struct slow_writer {
	pthread_t tid;
	int fd;
};

static void *slow_writer_main(void *arg)
{
	struct slow_writer *w = arg;
	unsigned char half[512];

	memset(half, 1, sizeof(half));
	CHECK(write(w->fd, half, sizeof(half)) == 512, "pipe write");
	usleep(20 * 1000);
	memset(half, 2, sizeof(half));
	CHECK(write(w->fd, half, sizeof(half)) == 512, "pipe write");
	return NULL;
}

static void test_short_read(struct reactor *r, struct member *m)
{
	static unsigned char buf[1024];
	struct slow_writer w;
	int fds[2], fd = m->fd;
	bool in_memory = m->in_memory;
	struct member_totals before = totals(m);
	uint64_t data_offset = m->data_offset;

	if (pipe(fds) < 0) {
		CHECK(0, "pipe");
		return;
	}
	m->fd = fds[0];
	m->in_memory = false;           /* a pipe: through io_uring, which waits for it */
	m->data_offset = 0;
	w.fd = fds[1];
	pthread_create(&w.tid, NULL, slow_writer_main, &w);
	struct tio t = { .mio = { .kind = MEMBER_READ, .buf = buf, .len = 1024, .m = m,
				  .done = tio_done } };
	member_submit(r, &t.mio);
	for (int i = 0; i < 1000 && !t.done; i++)
		reactor_poll(r, 1000);
	pthread_join(w.tid, NULL);
	CHECK(t.done == 1 && t.res == 0, "short read: done %d res %d", t.done, t.res);
	CHECK(buf[0] == 1 && buf[511] == 1 && buf[512] == 2 && buf[1023] == 2,
	      "short read continued at the wrong place");
	CHECK(totals(m).reads == before.reads + 1 && t.mio.done_bytes == 1024,
	      "short read counted %llu, %u bytes",
	      (unsigned long long)(totals(m).reads - before.reads), t.mio.done_bytes);
	m->fd = fd;
	m->in_memory = in_memory;
	m->data_offset = data_offset;
	member_counters_reset(m);       /* the pipe's read is no I/O of the file */
	close(fds[0]);
	close(fds[1]);
}

static void test_dir(const char *dir)
{
	char path[256], err[256] = "";
	struct member m;
	struct reactor r;
	unsigned char *a, *b;
	int fd, rc;

	snprintf(path, sizeof(path), "%s/uraid-test-member-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0) {
		printf("skip %s: %s\n", dir, strerror(errno));
		return;
	}
	CHECK(ftruncate(fd, FILE_BYTES) == 0, "ftruncate");
	close(fd);
	if (posix_memalign((void **)&a, 4096, 1 << 20) || posix_memalign((void **)&b, 4096, 1 << 20))
		exit(1);

	rc = member_open(&m, path, MEMBER_OPEN_BUFFERED, NULL, err, sizeof(err));
	CHECK(rc == 0 && !m.direct, "%s: buffered open: %d %s", dir, rc, err);
	member_close(&m);
	rc = member_open(&m, path, 0, NULL, err, sizeof(err));
	CHECK(rc == 0, "%s: open: %s", dir, err);
	if (rc) {
		unlink(path);
		return;
	}
	printf("%s: %s, dio_align %u, %llu sectors\n", dir, m.direct ? "O_DIRECT" : "buffered",
	       m.dio_align, (unsigned long long)m.dev_sectors);
	CHECK(m.dev_sectors == FILE_BYTES / 512, "%s: size %llu", dir,
	      (unsigned long long)m.dev_sectors);
	bool tmpfs = strcmp(dir, "/dev/shm") == 0;
	CHECK(m.in_memory == tmpfs, "%s: in memory %d, expected %d", dir, m.in_memory, tmpfs);
	m.data_offset = DATA_OFFSET;
	CHECK(reactor_init(&r, 0, 16) == 0, "reactor");
	test_sync(&m, dir, a, b);
	test_short_read(&r, &m);
	test_rw(&r, &m, dir, a, b);
	test_writev(&r, &m, dir, a, b);
	if (m.in_memory) {
		/* the same through io_uring, as for copies over MEMBER_INLINE_MAX */
		char what[300];
		snprintf(what, sizeof(what), "%s (through io_uring)", dir);
		m.in_memory = false;
		member_counters_reset(&m);
		atomic_store(&m.read_errors, 0);
		test_rw(&r, &m, what, a, b);
		test_writev(&r, &m, what, a, b);
		m.in_memory = true;
	}
	test_faults(&r, &m, dir, a, b);
	reactor_fini(&r);
	member_close(&m);
	member_close(&m);

	/* read-only: writes fail with -EBADF */
	rc = member_open(&m, path, MEMBER_OPEN_READONLY, NULL, err, sizeof(err));
	CHECK(rc == 0, "%s: read-only open: %s", dir, err);
	if (rc == 0) {
		CHECK(member_pwrite_sync(&m, a, 4096, 0) == -EBADF, "%s: write read-only", dir);
		member_close(&m);
	}
	unlink(path);
	free(a);
	free(b);
}

/*
 * A block device with 4096-byte logical blocks (a loop device, when we may
 * make one): O_EXCL, BLKSSZGET, read-modify-write of 512-byte metadata,
 * BLKDISCARD. Skipped quietly without root or loop devices.
 */
static int loop_attach(const char *backing, char *dev, size_t devlen)
{
	struct loop_config cfg;
	int ctl, lfd = -1, bfd, n;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	bfd = open(backing, O_RDWR | O_CLOEXEC);
	for (int tries = 0; bfd >= 0 && tries < 5 && lfd < 0; tries++) {
		n = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (n < 0)
			break;
		snprintf(dev, devlen, "/dev/loop%d", n);
		lfd = open(dev, O_RDWR | O_CLOEXEC);
		if (lfd < 0)
			break;
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = (unsigned)bfd;
		cfg.block_size = 4096;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;   /* gone when the last opener closes */
		if (ioctl(lfd, LOOP_CONFIGURE, &cfg) < 0) {
			close(lfd);
			lfd = -1;
			if (errno != EBUSY)
				break;
		}
	}
	if (bfd >= 0)
		close(bfd);
	close(ctl);
	return lfd;
}

static void test_blockdev(void)
{
	char img[] = "/dev/shm/uraid-test-loop-XXXXXX", dev[64], err[256] = "";
	struct member m, m2;
	struct reactor r;
	unsigned char *a, *b;
	int fd, lfd, rc;

	fd = mkstemp(img);
	if (fd < 0)
		return;
	CHECK(ftruncate(fd, FILE_BYTES) == 0, "ftruncate");
	close(fd);
	lfd = loop_attach(img, dev, sizeof(dev));
	unlink(img);
	if (lfd < 0) {
		printf("block device part skipped: no loop device (%s)\n", strerror(-lfd));
		return;
	}
	if (posix_memalign((void **)&a, 4096, 65536) || posix_memalign((void **)&b, 4096, 65536))
		exit(1);
	rc = member_open(&m, dev, 0, NULL, err, sizeof(err));
	CHECK(rc == 0, "%s: open: %s", dev, err);
	if (rc) {
		close(lfd);
		return;
	}
	printf("%s: 4096-byte blocks, %s, dio_align %u, %llu sectors\n", dev,
	       m.direct ? "O_DIRECT" : "buffered", m.dio_align, (unsigned long long)m.dev_sectors);
	CHECK(m.blockdev && m.dio_align == 4096 && m.dev_sectors == FILE_BYTES / 512,
	      "%s: blockdev %d align %u", dev, m.blockdev, m.dio_align);
	rc = member_open(&m2, dev, 0, NULL, err, sizeof(err));
	CHECK(rc == -EBUSY, "%s: second exclusive open: %d %s", dev, rc, err);

	/* 512-byte metadata on a 4096-byte device: read-modify-write */
	fill(a, 8192, SEED + 5);
	CHECK(member_pwrite_sync(&m, a, 8192, 8) == 0, "%s: pwrite_sync", dev);
	fill(a + 512, 512, SEED + 6);
	CHECK(member_pwrite_sync(&m, a + 512, 512, 9) == 0, "%s: pwrite_sync 512", dev);
	memset(b, 0, 8192);
	CHECK(member_pread_sync(&m, b + 512, 512, 9) == 0 && memcmp(a + 512, b + 512, 512) == 0,
	      "%s: pread_sync 512", dev);
	CHECK(member_pread_sync(&m, b, 8192, 8) == 0 && memcmp(a, b, 8192) == 0,
	      "%s: read-modify-write lost its neighbours", dev);

	/* async on the data area, then BLKDISCARD */
	m.data_offset = DATA_OFFSET;
	CHECK(reactor_init(&r, 0, 16) == 0, "reactor");
	fill(a, 65536, SEED + 7);
	CHECK(run(&r, &m, MEMBER_WRITE, a, 65536, 0, RWF_DSYNC) == 0, "%s: write", dev);
	CHECK(run(&r, &m, MEMBER_FLUSH, NULL, 0, 0, 0) == 0, "%s: flush", dev);
	CHECK(run(&r, &m, MEMBER_READ, b, 65536, 0, 0) == 0 && memcmp(a, b, 65536) == 0,
	      "%s: read back", dev);
	rc = run(&r, &m, MEMBER_DISCARD, NULL, 16384, 16, 0);
	CHECK(rc == 0 || rc == -EOPNOTSUPP, "%s: discard %d", dev, rc);
	if (rc == 0) {
		CHECK(run(&r, &m, MEMBER_READ, b, 65536, 0, 0) == 0, "%s: read", dev);
		CHECK(all_zero(b + 8192, 16384) && memcmp(a, b, 8192) == 0 &&
		      memcmp(a + 24576, b + 24576, 65536 - 24576) == 0,
		      "%s: loop discard did not read back zeroes", dev);
	}
	reactor_fini(&r);
	member_close(&m);
	close(lfd);
	free(a);
	free(b);
}

int main(void)
{
	printf("test_member seed %#x fault seed %u\n", SEED, FAULT_SEED);
	test_open_errors();
	test_dir("/dev/shm");
	test_dir("/tmp");
	test_blockdev();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("member: ok\n");
	return 0;
}
