// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the connection code of a real server: each input is a
 * client's byte stream (handshake, requests, payloads), fed through a
 * socketpair to `nbd_server_add_client` of one server that serves a small
 * RAID 1 on /dev/shm for the whole run (one reactor thread, limits low
 * enough to be reached: 64 MiB of buffer memory, 4 connections). Properties
 * besides "no crash, no sanitizer report":
 *   - the server greets first (NBDMAGIC, IHAVEOPT);
 *   - once the client has sent everything and shut its side, the server
 *     answers what it will and closes the connection (10 s at most: else a
 *     connection hangs);
 *   - then no connection is left open and no buffer memory is held (leaks
 *     of connections, requests or the limits' accounting).
 *
 * Input: 1 configuration byte (how the stream is cut into writes, and
 * whether the client reads as it writes or only at the end), then the
 * client's bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/engine.h>

#include "nbd/proto.h"
#include "nbd/server.h"
#include "fuzz.h"

#define MAX_INPUT 65536
#define MEMBER_BYTES (8u << 20)
#define HANG_NS (10 * 1000000000ull)

static struct {
	char paths[2][64];
	struct uraid_engine *e;
	struct uraid_array *a;
	struct nbd_server *s;
} F;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_conn: %s\n", what);
	abort();
}

static void teardown(void)
{
	if (F.s) {
		nbd_server_stop(F.s, 1000);
		nbd_server_destroy(F.s);
	}
	if (F.a)
		uraid_array_close(F.a);
	if (F.e)
		uraid_engine_destroy(F.e);
	for (int i = 0; i < 2; i++)
		unlink(F.paths[i]);
}

static void setup(void)
{
	char err[256];
	const char *paths[2] = { F.paths[0], F.paths[1] };

	for (int i = 0; i < 2; i++) {
		snprintf(F.paths[i], sizeof(F.paths[i]), "/dev/shm/uraid-fuzz-conn-%d.%d",
			 (int)getpid(), i);
		int fd = open(F.paths[i], O_CREAT | O_TRUNC | O_RDWR, 0600);
		if (fd < 0 || ftruncate(fd, MEMBER_BYTES) != 0)
			fail("cannot create the members in /dev/shm");
		close(fd);
	}
	atexit(teardown);
	struct uraid_create_opts co = {
		.level = URAID_LEVEL_1, .raid_disks = 2, .bitmap = URAID_BITMAP_NONE,
		.homehost = "<none>", .name = "fz", .flags = URAID_CREATE_ASSUME_CLEAN,
		.paths = paths, .npaths = 2,
	};
	if (uraid_create(&co, NULL, err, sizeof(err)))
		fail(err);
	struct uraid_engine_opts eo = { .reactors = 1, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = paths, .npaths = 2 };
	if (uraid_engine_create(&eo, &F.e) || uraid_array_assemble(F.e, &ao, &F.a, err, sizeof(err)))
		fail("cannot assemble the array");
	/* a listening socket nobody connects to: clients come by add_client */
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "uraid-fuzz-conn-%d", (int)getpid());
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
		fail("cannot listen");
	struct nbd_server_opts so = {
		.engine = F.e, .array = F.a, .name = "fz", .listen_fds = { lfd }, .nlisten = 1,
		.max_connections = 4, .max_buffer_bytes = NBD_MIN_BUFFER_BYTES,
	};
	if (nbd_server_start(&so, &F.s, err, sizeof(err)))
		fail(err);
}

/* Drain what the server sent; false at end of stream. */
static bool read_some(int fd, uint8_t *greeting, size_t *have)
{
	uint8_t buf[65536];

	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0)
			return errno == EAGAIN || errno == EINTR;
		if (r == 0)
			return false;
		if (*have < NBD_GREETING_BYTES) {
			size_t k = NBD_GREETING_BYTES - *have < (size_t)r ? NBD_GREETING_BYTES - *have
									  : (size_t)r;
			memcpy(greeting + *have, buf, k);
			*have += k;
		}
	}
}

static void wait_idle(void)
{
	struct nbd_server_usage u;
	uint64_t t0 = now_ns();

	for (;;) {
		nbd_server_usage(F.s, &u);
		if (!u.connections && !u.refusing && !u.buffer_bytes)
			return;
		if (now_ns() - t0 > HANG_NS)
			fail("a connection or its buffer memory outlives the client");
		usleep(100);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	uint8_t greeting[NBD_GREETING_BYTES];
	size_t have = 0, off = 1;

	if (size < 1 || size > MAX_INPUT)
		return 0;
	if (!F.s)
		setup();
	size_t cut = 1 + (data[0] & 0x3f) * 37;        /* bytes per write: 1 .. 2332 */
	bool read_late = data[0] & 0x80;               /* replies pile up until the end */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		fail("socketpair");
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	if (nbd_server_add_client(F.s, sv[0]))
		fail("add_client");
	uint64_t t0 = now_ns();
	bool open_in = true, shut = false, stalled = false;
	while (open_in) {
		struct pollfd p = { .fd = sv[1], .events = POLLIN };
		if (!shut)
			p.events |= POLLOUT;
		if (now_ns() - t0 > HANG_NS)
			fail("the server neither reads nor closes");
		if (poll(&p, 1, 100) < 0 && errno != EINTR)
			fail("poll");
		if ((p.revents & POLLOUT) && !shut) {
			size_t n = size - off < cut ? size - off : cut;
			ssize_t w = n ? send(sv[1], data + off, n, MSG_NOSIGNAL | MSG_DONTWAIT) : 0;
			if (w > 0)
				off += (size_t)w;
			stalled = w < 0 && errno == EAGAIN;
			if (off == size || (w < 0 && errno != EAGAIN && errno != EINTR)) {
				shutdown(sv[1], SHUT_WR);
				shut = true;
			}
		}
		/* a client that reads late lets the replies pile up until the
		   server stops taking requests (back-pressure); then it reads */
		if ((!read_late || shut || stalled) && (p.revents & (POLLIN | POLLHUP)))
			open_in = read_some(sv[1], greeting, &have);
	}
	close(sv[1]);
	if (have >= 16 && (memcmp(greeting, "NBDMAGIC", 8) || memcmp(greeting + 8, "IHAVEOPT", 8)))
		fail("the server did not greet first");
	wait_idle();
	return 0;
}

/* ---- seeds for the bounded driver ---- */

static size_t put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
	return 4;
}

static size_t put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	return 4 + put32(p + 4, (uint32_t)v);
}

static size_t option(uint8_t *p, uint32_t opt, const uint8_t *d, uint32_t len)
{
	size_t n = put64(p, NBD_OPTS_MAGIC);
	n += put32(p + n, opt);
	n += put32(p + n, len);
	if (len)
		memcpy(p + n, d, len);
	return n + len;
}

static size_t req(uint8_t *p, uint16_t flags, uint16_t type, uint64_t cookie, uint64_t off,
		  uint32_t len)
{
	size_t n = put32(p, NBD_REQUEST_MAGIC);
	p[n++] = (uint8_t)(flags >> 8), p[n++] = (uint8_t)flags;
	p[n++] = (uint8_t)(type >> 8), p[n++] = (uint8_t)type;
	n += put64(p + n, cookie);
	n += put64(p + n, off);
	return n + put32(p + n, len);
}

size_t fuzz_seed(unsigned kind, uint8_t *buf, size_t cap)
{
	static const uint8_t go[] = { 0, 0, 0, 0, 0, 1, 0, 3 };   /* "", one request: BLOCK_SIZE */
	size_t n = 0;

	(void)cap;
	buf[n++] = (uint8_t)(kind * 0x25);
	n += put32(buf + n, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	switch (kind) {
	case 0:         /* options, then GO and requests of every kind */
		n += option(buf + n, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
		n += option(buf + n, NBD_OPT_LIST, NULL, 0);
		n += option(buf + n, NBD_OPT_INFO, go, sizeof(go));
		n += option(buf + n, NBD_OPT_GO, go, sizeof(go));
		n += req(buf + n, 0, NBD_CMD_WRITE, 1, 4096, 8192);
		for (unsigned i = 0; i < 8192; i++)
			buf[n++] = (uint8_t)(i * 7);
		n += req(buf + n, NBD_CMD_FLAG_FUA, NBD_CMD_WRITE, 2, 0, 512);
		memset(buf + n, 0xa5, 512), n += 512;
		n += req(buf + n, 0, NBD_CMD_READ, 3, 0, 65536);
		n += req(buf + n, 0, NBD_CMD_FLUSH, 4, 0, 0);
		n += req(buf + n, NBD_CMD_FLAG_FUA, NBD_CMD_TRIM, 5, 1 << 20, 1 << 20);
		n += req(buf + n, NBD_CMD_FLAG_NO_HOLE, NBD_CMD_WRITE_ZEROES, 6, 2 << 20, 65536);
		n += req(buf + n, NBD_CMD_FLAG_FAST_ZERO, NBD_CMD_WRITE_ZEROES, 7, 0, 4096);
		n += req(buf + n, 0, NBD_CMD_READ, 8, 0, 32u << 20);
		n += req(buf + n, 0, NBD_CMD_DISC, 9, 0, 0);
		break;
	case 1:         /* EXPORT_NAME, then reads and a write, no DISC */
		n += option(buf + n, NBD_OPT_EXPORT_NAME, (const uint8_t *)"fz", 2);
		for (unsigned i = 0; i < 16; i++)
			n += req(buf + n, 0, NBD_CMD_READ, 10 + i, (uint64_t)i << 16, 65536);
		n += req(buf + n, 0, NBD_CMD_WRITE, 30, 0, 1024);
		memset(buf + n, 0x3c, 1024), n += 1024;
		break;
	default:        /* options only, then ABORT */
		n += option(buf + n, NBD_OPT_STARTTLS, NULL, 0);
		n += option(buf + n, 99, go, sizeof(go));
		n += option(buf + n, NBD_OPT_INFO, go, sizeof(go));
		n += option(buf + n, NBD_OPT_ABORT, NULL, 0);
		break;
	}
	return n;
}

static const uint32_t values32[] = { 0, 0xffffffffu, 0x80000000u, 1, 0x7fffffffu,
				     32u << 20, (32u << 20) + 512, 0x02000000u, 0x25609513u };

const struct fuzz_target fuzz_target = {
	.name = "fuzz_conn",
	.seeds = 3,
	.max_input = MAX_INPUT,
	.hot_bytes = 200,
	.iterations = 1000,
	.values32 = values32,
	.nvalues32 = sizeof(values32) / sizeof(values32[0]),
};
