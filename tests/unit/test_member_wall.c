// SPDX-License-Identifier: MIT
/*
 * The member wall (src/io/member_wall.c): once a member's areas are set,
 * data-path I/O (read, write, discard, write-zeroes) outside its data area
 * and metadata I/O outside its superblock, bitmap and log fail with -EIO,
 * reach nothing on the file (sha of the whole file before and after), and
 * are reported on stderr once per member; I/O inside goes through. Also the
 * sectors near 2^64 (no wrap-around into the area).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/member.h"
#include "../support/check.h"

#define FILE_BYTES (8u << 20)
#define DATA_OFFSET 2048u       /* sectors */
#define DATA_LEN 4096u          /* sectors */

struct tio {
	struct member_io mio;
	int res, done;
};

static void tio_done(struct member_io *mio, int res)
{
	struct tio *t = (struct tio *)mio;
	t->res = res;
	t->done++;
}

static int run(struct reactor *r, struct member *m, enum member_op kind, void *buf, uint32_t len,
	       uint64_t sector)
{
	struct tio t = { .mio = { .kind = kind, .buf = buf, .len = len, .sector = sector, .m = m,
				  .done = tio_done } };
	member_submit(r, &t.mio);
	for (int i = 0; i < 1000 && !t.done; i++)
		reactor_poll(r, -1);
	CHECK(t.done == 1, "I/O completed %d times", t.done);
	return t.res;
}

/* FNV-1a of the whole file: did anything change? */
static uint64_t file_hash(const char *path)
{
	static unsigned char buf[1 << 16];
	uint64_t h = 0xcbf29ce484222325ull;
	int fd = open(path, O_RDONLY);
	ssize_t n;

	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < n; i++)
			h = (h ^ buf[i]) * 0x100000001b3ull;
	if (fd >= 0)
		close(fd);
	return h;
}

static void test_dir(const char *dir)
{
	struct member m;
	struct reactor r;
	char path[256], err[256], log[300];
	unsigned char *buf;
	int fd;

	snprintf(path, sizeof(path), "%s/uraid-test-wall-XXXXXX", dir);
	if ((fd = mkstemp(path)) < 0) {
		printf("skip %s\n", dir);
		return;
	}
	/* a pattern everywhere, so that a zeroing or a punched hole shows */
	if (posix_memalign((void **)&buf, 4096, 1 << 20))
		exit(1);
	memset(buf, 0xa5, 1 << 20);
	for (unsigned i = 0; i < FILE_BYTES >> 20; i++)
		CHECK(write(fd, buf, 1 << 20) == 1 << 20, "fill");
	close(fd);

	CHECK(member_open(&m, path, 0, NULL, err, sizeof(err)) == 0, "open %s: %s", path, err);
	CHECK(reactor_init(&r, 0, 16) == 0, "reactor");
	/* before the areas are set the wall is the device: the end is refused */
	CHECK(member_pwrite_sync(&m, buf, 4096, FILE_BYTES / 512 - 4) == -EIO,
	      "%s: a write across the device end went through", dir);

	struct member_area areas[MEMBER_AREAS] = { { 8, 16 }, { 16, 24 }, { 24, 32 } };
	member_set_areas(&m, DATA_OFFSET, DATA_LEN, areas, MEMBER_AREAS);
	atomic_store(&m.wall_reported, false);

	/* stderr to a file: the reports are counted */
	snprintf(log, sizeof(log), "%s.log", path);
	fflush(stderr);
	int saved = dup(2), lfd = open(log, O_RDWR | O_CREAT | O_TRUNC, 0600);
	dup2(lfd, 2);

	/* inside: through */
	CHECK(run(&r, &m, MEMBER_WRITE, buf, 4096, 0) == 0, "%s: write at the data start", dir);
	CHECK(run(&r, &m, MEMBER_WRITE, buf, 4096, DATA_LEN - 8) == 0, "%s: write at the data end",
	      dir);
	CHECK(run(&r, &m, MEMBER_READ, buf, 4096, DATA_LEN - 8) == 0, "%s: read at the end", dir);
	CHECK(member_pwrite_sync(&m, buf, 4096, 8) == 0, "%s: superblock write", dir);
	CHECK(member_pwrite_sync(&m, buf, 256, 16) == 0, "%s: bitmap header write", dir);
	CHECK(member_pread_sync(&m, buf, 4096, 24) == 0, "%s: log read", dir);
	uint64_t before = file_hash(path);

	/* outside: refused, nothing written */
	static const struct { enum member_op kind; uint64_t sector; uint32_t len; } bad[] = {
		{ MEMBER_WRITE, DATA_LEN - 7, 4096 },      /* one sector past the end */
		{ MEMBER_WRITE, DATA_LEN, 512 },
		{ MEMBER_WRITE, UINT64_MAX - 3, 4096 },    /* would wrap past 2^64 */
		{ MEMBER_READ, DATA_LEN, 4096 },
		{ MEMBER_DISCARD, DATA_LEN - 8, 8192 },
		{ MEMBER_ZEROES, 1ull << 40, 4096 },
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(run(&r, &m, bad[i].kind, buf, bad[i].len, bad[i].sector) == -EIO,
		      "%s: I/O %u (kind %d at %llu) not refused", dir, i, bad[i].kind,
		      (unsigned long long)bad[i].sector);
	CHECK(member_pwrite_sync(&m, buf, 4096, 4) == -EIO, "%s: write across the sb start", dir);
	CHECK(member_pwrite_sync(&m, buf, 4096, 28) == -EIO, "%s: write across the log end", dir);
	CHECK(member_pwrite_sync(&m, buf, 4096, DATA_OFFSET) == -EIO, "%s: metadata write in data",
	      dir);
	CHECK(member_pwrite_sync(&m, buf, 512, UINT64_MAX / 512) == -EIO, "%s: write at 2^64", dir);
	CHECK(member_pread_sync(&m, buf, 4096, 40) == -EIO, "%s: read between areas", dir);
	CHECK(file_hash(path) == before, "%s: a refused I/O changed the file", dir);

	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char text[4096] = { 0 };
	CHECK(pread(lfd, text, sizeof(text) - 1, 0) > 0, "read the log");
	close(lfd);
	unsigned reports = 0;
	for (char *p = text; (p = strstr(p, "BUG: ")); p++)
		reports++;
	CHECK(reports == 1, "%s: %u reports, one expected: %s", dir, reports, text);
	CHECK(strstr(text, "write outside member areas: member ") && strstr(text, path),
	      "%s: the report lacks context: %s", dir, text);
	printf("%s: %s", dir, text);

	reactor_fini(&r);
	member_close(&m);
	unlink(log);
	unlink(path);
	free(buf);
}

int main(void)
{
	printf("test_member_wall (no randomness)\n");
	test_dir("/dev/shm");
	test_dir("/tmp");
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("member_wall: ok\n");
	return 0;
}
