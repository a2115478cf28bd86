// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the connection code of a real server: each input is a
 * client's byte stream (handshake, requests, payloads), fed through a
 * socketpair to `nbd_server_add_client` of one of three servers that serve
 * the same small RAID 1 on /dev/shm for the whole run (one reactor thread,
 * limits low enough to be reached: 64 MiB of buffer memory, 4 connections):
 * --tls=off, --tls=on and --tls=require, the last two with a PSK. So the
 * bytes reach STARTTLS, the TLS-required refusals and, after STARTTLS, the
 * GnuTLS handshake (as garbage). In a fourth mode the target itself is a
 * GnuTLS client with the right key: it sends the flags and STARTTLS in
 * plaintext, runs a real TLS handshake, and then the input's bytes go
 * encrypted, to the option parser and the requests behind TLS. Properties
 * besides "no crash, no sanitizer report":
 *   - the server greets first (NBDMAGIC, IHAVEOPT);
 *   - once the client has sent everything and shut its side, the server
 *     answers what it will and closes the connection (10 s at most: else a
 *     connection hangs);
 *   - then no connection is left open and no buffer memory is held (leaks
 *     of connections, requests or the limits' accounting).
 *
 * Input: 2 configuration bytes (how the stream is cut into writes, whether
 * the client reads as it writes or only at the end; the server's TLS mode
 * or the TLS client), then the client's bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include <uraid/create.h>
#include <uraid/engine.h>

#include "nbd/proto.h"
#include "nbd/server.h"
#include "nbd/tls.h"
#include "fuzz.h"

#define MAX_INPUT 65536
#define MEMBER_BYTES (8u << 20)
#define HANG_NS (10 * 1000000000ull)
#define PSK_USER "alice"
/* 32 bytes, the server's PSK file and the client's key alike */
#define PSK_HEX "0123456789abcdef00112233445566778899aabbccddeeff0f1e2d3c4b5a6978"

/* The servers, by the input's mode; MODE_TLS_CLIENT uses the "on" server. */
enum { MODE_OFF, MODE_ON, MODE_REQUIRE, MODE_TLS_CLIENT, MODES };
#define SERVERS 3

static struct {
	char paths[2][64];
	char psk_path[64];
	struct uraid_engine *e;
	struct uraid_array *a;
	struct nbd_tls_creds *creds;
	struct nbd_server *s[SERVERS];
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
	for (int i = 0; i < SERVERS; i++) {
		if (F.s[i]) {
			nbd_server_stop(F.s[i], 1000);
			nbd_server_destroy(F.s[i]);
		}
	}
	if (F.a)
		uraid_array_close(F.a);
	if (F.e)
		uraid_engine_destroy(F.e);
	nbd_tls_creds_free(F.creds);
	for (int i = 0; i < 2; i++)
		unlink(F.paths[i]);
	unlink(F.psk_path);
}

static void write_psk_file(void)
{
	snprintf(F.psk_path, sizeof(F.psk_path), "/dev/shm/uraid-fuzz-conn-%d.psk", (int)getpid());
	int fd = open(F.psk_path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	static const char line[] = PSK_USER ":" PSK_HEX "\n";
	if (fd < 0 || write(fd, line, sizeof(line) - 1) != (ssize_t)(sizeof(line) - 1))
		fail("cannot write the PSK file in /dev/shm");
	close(fd);
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
	/* GnuTLS sends without MSG_NOSIGNAL: a server that closed first must
	   not kill the client */
	signal(SIGPIPE, SIG_IGN);
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
	write_psk_file();
	struct nbd_tls_opts to = { .psk_file = F.psk_path };
	if (nbd_tls_creds_load(&to, &F.creds, err, sizeof(err)))
		fail(err);
	static const unsigned tls_modes[SERVERS] = { NBD_TLS_OFF, NBD_TLS_ON, NBD_TLS_REQUIRE };
	for (int i = 0; i < SERVERS; i++) {
		/* a listening socket nobody connects to: clients come by add_client */
		int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1, "uraid-fuzz-conn-%d.%d",
			 (int)getpid(), i);
		if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 1))
			fail("cannot listen");
		struct nbd_server_opts so = {
			.engine = F.e, .array = F.a, .name = "fz", .listen_fds = { lfd },
			.nlisten = 1, .max_connections = 4,
			.max_buffer_bytes = NBD_MIN_BUFFER_BYTES,
			.tls_creds = tls_modes[i] == NBD_TLS_OFF ? NULL : F.creds,
			.tls_mode = tls_modes[i],
		};
		if (nbd_server_start(&so, &F.s[i], err, sizeof(err)))
			fail(err);
	}
}

/* Drain what the server sent (counted in *got); false at end of stream. */
static bool read_some(int fd, uint8_t *greeting, size_t *have, uint64_t *got)
{
	uint8_t buf[65536];

	for (;;) {
		ssize_t r = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (r < 0)
			return errno == EAGAIN || errno == EINTR;
		if (r == 0)
			return false;
		*got += (uint64_t)r;
		if (*have < NBD_GREETING_BYTES) {
			size_t k = NBD_GREETING_BYTES - *have < (size_t)r ? NBD_GREETING_BYTES - *have
									  : (size_t)r;
			memcpy(greeting + *have, buf, k);
			*have += k;
		}
	}
}

static void wait_idle(struct nbd_server *srv)
{
	struct nbd_server_usage u;
	uint64_t t0 = now_ns();

	for (;;) {
		nbd_server_usage(srv, &u);
		if (!u.connections && !u.refusing && !u.buffer_bytes)
			return;
		if (now_ns() - t0 > HANG_NS)
			fail("a connection or its buffer memory outlives the client");
		usleep(100);
	}
}

/* Wait for the socket to be ready for events; false when HANG_NS is over. */
static bool wait_fd(int fd, short events, uint64_t t0)
{
	struct pollfd p = { .fd = fd, .events = events };

	if (now_ns() - t0 > HANG_NS)
		return false;
	if (poll(&p, 1, 100) < 0 && errno != EINTR)
		fail("poll");
	return true;
}

/* Receive exactly len plaintext bytes (the greeting, an option reply). */
static bool recv_plain(int fd, uint8_t *buf, size_t len, uint64_t t0)
{
	size_t have = 0;

	while (have < len) {
		ssize_t r = recv(fd, buf + have, len - have, MSG_DONTWAIT);
		if (r == 0)
			return false;
		if (r > 0)
			have += (size_t)r;
		else if (errno != EAGAIN && errno != EINTR)
			return false;
		else if (!wait_fd(fd, POLLIN, t0))
			fail("the server sends nothing in the plaintext handshake");
	}
	return true;
}

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/*
 * The client of MODE_TLS_CLIENT: the flags and NBD_OPT_STARTTLS in
 * plaintext, its ACK, a TLS-PSK handshake with the right key (GnuTLS over
 * the socket, non-blocking), then the input's bytes as application data in
 * records of `cut` bytes while reading (and dropping) what comes back, then
 * close_notify and the end of the stream, and the rest read until the
 * server closes. A server that accepts the handshake and then neither reads
 * nor closes fails the run (HANG_NS).
 */
static void tls_client(int fd, const uint8_t *data, size_t size, size_t cut)
{
	uint8_t buf[65536], hello[4 + 16];
	uint64_t t0 = now_ns();

	if (!recv_plain(fd, buf, NBD_GREETING_BYTES, t0))
		fail("no greeting");
	if (memcmp(buf, "NBDMAGIC", 8) || memcmp(buf + 8, "IHAVEOPT", 8))
		fail("the server did not greet first");
	put_be32(hello, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	put_be32(hello + 4, (uint32_t)(NBD_OPTS_MAGIC >> 32));
	put_be32(hello + 8, (uint32_t)NBD_OPTS_MAGIC);
	put_be32(hello + 12, NBD_OPT_STARTTLS);
	put_be32(hello + 16, 0);
	if (send(fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello))
		fail("cannot send STARTTLS");
	/* the option reply: magic, option, type, length (0 for the ACK) */
	if (!recv_plain(fd, buf, 20, t0))
		fail("the server closed instead of answering STARTTLS");
	if (buf[15] != NBD_REP_ACK || buf[16] | buf[17] | buf[18] | buf[19])
		fail("STARTTLS was not acknowledged by --tls=on");

	static const uint8_t key[] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef,
		0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb,
		0xcc, 0xdd, 0xee, 0xff, 0x0f, 0x1e, 0x2d, 0x3c, 0x4b, 0x5a, 0x69, 0x78 };
	gnutls_psk_client_credentials_t cred;
	gnutls_session_t ss;
	gnutls_datum_t k = { (unsigned char *)key, sizeof(key) };
	if (gnutls_psk_allocate_client_credentials(&cred) ||
	    gnutls_psk_set_client_credentials(cred, PSK_USER, &k, GNUTLS_PSK_KEY_RAW) ||
	    gnutls_init(&ss, GNUTLS_CLIENT | GNUTLS_NONBLOCK))
		fail("gnutls client");
	gnutls_priority_set_direct(ss, "NORMAL:+ECDHE-PSK:+DHE-PSK:+PSK", NULL);
	gnutls_credentials_set(ss, GNUTLS_CRD_PSK, cred);
	gnutls_transport_set_int(ss, fd);

	int rc;
	while ((rc = gnutls_handshake(ss)) < 0) {
		if (gnutls_error_is_fatal(rc))
			fail("the TLS handshake with the right key failed");
		if (!wait_fd(fd, gnutls_record_get_direction(ss) ? POLLOUT : POLLIN, t0))
			fail("the TLS handshake hangs");
	}
	/* the application data: sent in records of `cut` bytes, replies dropped */
	size_t off = 0, pending = 0;
	bool sent_all = false, bye = false, open_in = true;
	t0 = now_ns();
	while (open_in) {
		if (!sent_all) {
			if (!pending)
				pending = size - off < cut ? size - off : cut;
			rc = pending ? (int)gnutls_record_send(ss, data + off, pending) : 0;
			if (rc > 0) {
				off += (size_t)rc;
				pending = 0;
			} else if (rc < 0 && rc != GNUTLS_E_AGAIN && rc != GNUTLS_E_INTERRUPTED) {
				sent_all = true;        /* the server closed: read the rest */
			}
			if (off == size)
				sent_all = true;
		} else if (!bye) {
			rc = gnutls_bye(ss, GNUTLS_SHUT_WR);
			if (rc != GNUTLS_E_AGAIN && rc != GNUTLS_E_INTERRUPTED) {
				shutdown(fd, SHUT_WR);
				bye = true;
			}
		}
		ssize_t r;
		while ((r = gnutls_record_recv(ss, buf, sizeof(buf))) > 0)
			;
		if (r == 0 || (r < 0 && r != GNUTLS_E_AGAIN && r != GNUTLS_E_INTERRUPTED &&
			       r != GNUTLS_E_REHANDSHAKE)) {
			/* close_notify, or a TLS error: drain the raw stream to its end */
			while (open_in) {
				ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
				if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
					open_in = false;
				else if (n < 0 && !wait_fd(fd, POLLIN, t0))
					fail("the server neither reads nor closes (TLS)");
			}
			break;
		}
		if (!wait_fd(fd, POLLIN | (sent_all && bye ? 0 : POLLOUT), t0))
			fail("the server neither reads nor closes (TLS)");
	}
	gnutls_deinit(ss);
	gnutls_psk_free_client_credentials(cred);
}

/*
 * Where the client stops sending to wait for the answer to a STARTTLS: the
 * end of the next NBD_OPT_STARTTLS option at or after from (its header and
 * data), or size. Bytes sent behind STARTTLS before its ACK are dropped by
 * the server (they were not protected), so without the pause the TLS
 * handshake would never see the input's bytes.
 */
static size_t starttls_end(const uint8_t *data, size_t from, size_t size)
{
	static const uint8_t hdr[12] = { 'I', 'H', 'A', 'V', 'E', 'O', 'P', 'T', 0, 0, 0,
					 NBD_OPT_STARTTLS };

	for (size_t i = from; i + 16 <= size; i++) {
		if (memcmp(data + i, hdr, sizeof(hdr)) == 0) {
			uint32_t len = (uint32_t)data[i + 12] << 24 | (uint32_t)data[i + 13] << 16 |
				       (uint32_t)data[i + 14] << 8 | data[i + 15];
			return len < size - i - 16 ? i + 16 + len : size;
		}
	}
	return size;
}

#define STARTTLS_WAIT_NS (20 * 1000000ull)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int sv[2];
	uint8_t greeting[NBD_GREETING_BYTES];
	size_t have = 0, off = 2;

	if (size < 2 || size > MAX_INPUT)
		return 0;
	if (!F.s[0])
		setup();
	size_t cut = 1 + (data[0] & 0x3f) * 37;        /* bytes per write: 1 .. 2332 */
	bool read_late = data[0] & 0x80;               /* replies pile up until the end */
	unsigned mode = data[1] % MODES;
	struct nbd_server *srv = F.s[mode == MODE_TLS_CLIENT ? MODE_ON : mode];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		fail("socketpair");
	fcntl(sv[1], F_SETFL, O_NONBLOCK);
	if (nbd_server_add_client(srv, sv[0]))
		fail("add_client");
	if (mode == MODE_TLS_CLIENT) {
		tls_client(sv[1], data + 2, size - 2, cut);
		close(sv[1]);
		wait_idle(srv);
		return 0;
	}
	uint64_t t0 = now_ns(), got = 0, got_at_pause = 0, paused_at = 0;
	bool open_in = true, shut = false, stalled = false;
	size_t pause = starttls_end(data, off, size);
	while (open_in) {
		/* at a STARTTLS: send no more until the server answered, or
		   STARTTLS_WAIT_NS (it was data of another option, say) */
		bool waiting = off == pause && pause < size;
		if (waiting && !paused_at)
			paused_at = now_ns(), got_at_pause = got;
		if (waiting && (got > got_at_pause || now_ns() - paused_at > STARTTLS_WAIT_NS)) {
			pause = starttls_end(data, off, size);
			paused_at = 0;
			waiting = false;
		}
		struct pollfd p = { .fd = sv[1], .events = POLLIN };
		if (!shut && !waiting)
			p.events |= POLLOUT;
		if (now_ns() - t0 > HANG_NS)
			fail("the server neither reads nor closes");
		if (poll(&p, 1, waiting ? 1 : 100) < 0 && errno != EINTR)
			fail("poll");
		if ((p.revents & POLLOUT) && !shut && !waiting) {
			size_t n = pause - off < cut ? pause - off : cut;
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
		if ((!read_late || shut || stalled || waiting) && (p.revents & (POLLIN | POLLHUP)))
			open_in = read_some(sv[1], greeting, &have, &got);
	}
	close(sv[1]);
	if (have >= 16 && (memcmp(greeting, "NBDMAGIC", 8) || memcmp(greeting + 8, "IHAVEOPT", 8)))
		fail("the server did not greet first");
	wait_idle(srv);
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

/* Options, GO, and requests of every kind (seed 0's body, behind TLS in 5) */
static size_t session(uint8_t *buf)
{
	static const uint8_t go[] = { 0, 0, 0, 0, 0, 1, 0, 3 };   /* "", one request: BLOCK_SIZE */
	size_t n = 0;

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
	return n;
}

/* The start of a TLS 1.2/1.3 ClientHello record, its body cut short */
static const uint8_t client_hello[] = { 0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0xc4,
					0x03, 0x03, 0x5e, 0xed, 0x20, 0x26 };

size_t fuzz_seed(unsigned kind, uint8_t *buf, size_t cap)
{
	static const uint8_t go[] = { 0, 0, 0, 0, 0, 1, 0, 3 };
	static const unsigned modes[] = { MODE_OFF, MODE_OFF, MODE_OFF, MODE_REQUIRE, MODE_ON,
					  MODE_TLS_CLIENT, MODE_REQUIRE };
	size_t n = 0;

	(void)cap;
	buf[n++] = (uint8_t)(kind * 0x25);
	buf[n++] = (uint8_t)modes[kind];
	if (modes[kind] == MODE_TLS_CLIENT)     /* the flags and STARTTLS are the target's */
		return n + session(buf + n);
	n += put32(buf + n, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	switch (kind) {
	case 0:         /* options, then GO and requests of every kind */
		n += session(buf + n);
		break;
	case 1:         /* EXPORT_NAME, then reads and a write, no DISC */
		n += option(buf + n, NBD_OPT_EXPORT_NAME, (const uint8_t *)"fz", 2);
		for (unsigned i = 0; i < 16; i++)
			n += req(buf + n, 0, NBD_CMD_READ, 10 + i, (uint64_t)i << 16, 65536);
		n += req(buf + n, 0, NBD_CMD_WRITE, 30, 0, 1024);
		memset(buf + n, 0x3c, 1024), n += 1024;
		break;
	case 2:         /* options only (STARTTLS refused: TLS off), then ABORT */
		n += option(buf + n, NBD_OPT_STARTTLS, NULL, 0);
		n += option(buf + n, 99, go, sizeof(go));
		n += option(buf + n, NBD_OPT_INFO, go, sizeof(go));
		n += option(buf + n, NBD_OPT_ABORT, NULL, 0);
		break;
	case 3:         /* TLS required: options refused, STARTTLS, garbage into the handshake */
		n += option(buf + n, NBD_OPT_LIST, NULL, 0);
		n += option(buf + n, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
		n += option(buf + n, NBD_OPT_GO, go, sizeof(go));
		n += option(buf + n, NBD_OPT_STARTTLS, (const uint8_t *)"x", 1);
		n += option(buf + n, NBD_OPT_STARTTLS, NULL, 0);
		memcpy(buf + n, client_hello, sizeof(client_hello)), n += sizeof(client_hello);
		for (unsigned i = 0; i < 200; i++)
			buf[n++] = (uint8_t)(i * 13 + 5);
		break;
	case 4:         /* TLS on: plain options, STARTTLS, a ClientHello's start, bytes
			   behind it before the ACK (dropped), then records */
		n += option(buf + n, NBD_OPT_INFO, go, sizeof(go));
		n += option(buf + n, NBD_OPT_STARTTLS, NULL, 0);
		memcpy(buf + n, client_hello, sizeof(client_hello)), n += sizeof(client_hello);
		for (unsigned i = 0; i < 3; i++) {
			static const uint8_t rec[] = { 0x17, 0x03, 0x03, 0x00, 0x10 };
			memcpy(buf + n, rec, sizeof(rec)), n += sizeof(rec);
			memset(buf + n, 0x42 + i, 16), n += 16;
		}
		break;
	default:        /* TLS required: EXPORT_NAME before STARTTLS closes */
		n += option(buf + n, NBD_OPT_EXPORT_NAME, (const uint8_t *)"fz", 2);
		n += req(buf + n, 0, NBD_CMD_READ, 1, 0, 4096);
		break;
	}
	return n;
}

static const uint32_t values32[] = { 0, 0xffffffffu, 0x80000000u, 1, 0x7fffffffu,
				     32u << 20, (32u << 20) + 512, 0x02000000u, 0x25609513u };

const struct fuzz_target fuzz_target = {
	.name = "fuzz_conn",
	.seeds = 7,
	.max_input = MAX_INPUT,
	.hot_bytes = 200,
	.iterations = 1000,
	.values32 = values32,
	.nvalues32 = sizeof(values32) / sizeof(values32[0]),
};
