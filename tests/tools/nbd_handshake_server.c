// SPDX-License-Identifier: MIT
/*
 * A test NBD server without the engine: listens on a Unix socket, runs
 * src/nbd's handshake state machine for each client (one child process per
 * client) and serves READ of a fixed pattern computed from the offset (see
 * pattern_byte), so that real clients (nbdinfo, nbdcopy) can referee the
 * protocol code.
 * FLUSH succeeds, WRITE is drained and fails with EIO (nothing is stored),
 * BLOCK_STATUS (base:allocation) says data for the whole range asked;
 * everything else is answered as nbd_request_parse decides.
 *
 *   nbd_handshake_server SOCKET [--size=BYTES] [--name=NAME] [--desc=TEXT]
 *       [--pref=BYTES] [--flags=ro,flush,fua,trim,zero,fast-zero,multi-conn,no-list]
 *       [--clients=N]
 *
 * Exits 0 after N clients (default 1), 1 on a setup error; gives up after 60 s.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "nbd/proto.h"

struct conn {
	int fd;
	size_t pos, len;
	uint8_t in[1 << 16];
};

static uint8_t pattern_byte(uint64_t off)
{
	return (uint8_t)(off * 7 + (off >> 9) + 1);
}

static int write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n) {
		/* MSG_NOSIGNAL: a client may close without reading (ABORT's ACK) */
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w, n -= (size_t)w;
	}
	return 0;
}

/* Fill c->in when it is empty: 1 with bytes, 0 at end of stream, -1 on error. */
static int fill(struct conn *c)
{
	if (c->pos < c->len)
		return 1;
	ssize_t r;
	do
		r = read(c->fd, c->in, sizeof(c->in));
	while (r < 0 && errno == EINTR);
	if (r <= 0)
		return (int)r;
	c->pos = 0, c->len = (size_t)r;
	return 1;
}

/* Copy n bytes (into buf, or discard them when buf is NULL). */
static int read_exact(struct conn *c, uint8_t *buf, size_t n)
{
	while (n) {
		if (fill(c) <= 0)
			return -1;
		size_t k = c->len - c->pos < n ? c->len - c->pos : n;
		if (buf)
			memcpy(buf, c->in + c->pos, k), buf += k;
		c->pos += k, n -= k;
	}
	return 0;
}

static int flush_output(struct conn *c, struct nbd_handshake *hs)
{
	const uint8_t *out;
	size_t n = nbd_hs_output(hs, &out);

	if (n && write_all(c->fd, out, n) != 0)
		return -1;
	nbd_hs_sent(hs, n);
	return 0;
}

static int handshake(struct conn *c, struct nbd_handshake *hs)
{
	for (;;) {
		if (flush_output(c, hs) != 0)
			return -1;
		if (hs->status != NBD_HS_NEGOTIATING)
			break;
		if (fill(c) <= 0) {
			fprintf(stderr, "client left during the handshake\n");
			return -1;
		}
		c->pos += nbd_hs_input(hs, c->in + c->pos, c->len - c->pos);
	}
	if (hs->status != NBD_HS_TRANSMISSION) {
		fprintf(stderr, "handshake ended: %s\n", hs->why);
		return -1;
	}
	fprintf(stderr, "export '%s' chosen, flags 0x%x, session 0x%x\n", hs->name,
		hs->tflags, hs->session);
	return 0;
}

static int serve_read(struct conn *c, const struct nbd_request *rq, unsigned session)
{
	static uint8_t data[NBD_MAX_BLOCK];
	uint8_t hdr[NBD_CHUNK_DATA_HEADER_BYTES];
	size_t h = nbd_reply_read(hdr, sizeof(hdr), session, rq->cookie, rq->offset, rq->length);

	for (uint32_t i = 0; i < rq->length; i++)
		data[i] = pattern_byte(rq->offset + i);
	if (write_all(c->fd, hdr, h) != 0)
		return -1;
	return write_all(c->fd, data, rq->length);
}

static int transmission(struct conn *c, const struct nbd_export *ex, struct nbd_handshake *hs)
{
	uint8_t hdr[NBD_REQUEST_BYTES], out[NBD_CHUNK_HEADER_BYTES + 6 + NBD_MAX_ERRMSG];
	struct nbd_request rq;

	for (;;) {
		if (read_exact(c, hdr, sizeof(hdr)) != 0)
			return -1;   /* the client went away without NBD_CMD_DISC */
		int v = nbd_request_parse(hdr, ex, hs->tflags, hs->session, &rq);
		if (v == NBD_REQ_DISC)
			return 0;
		if (v == NBD_REQ_CLOSE) {
			fprintf(stderr, "closing: %s\n", strerror(-rq.error));
			return -1;
		}
		if (v == NBD_REQ_OK && rq.type == NBD_CMD_READ) {
			if (serve_read(c, &rq, hs->session) != 0)
				return -1;
			continue;
		}
		if (v == NBD_REQ_OK && rq.type == NBD_CMD_BLOCK_STATUS) {
			/* base:allocation: the pattern is data everywhere, one extent */
			uint8_t bs[NBD_CHUNK_HEADER_BYTES + 12];
			size_t h = nbd_reply_block_status(bs, rq.cookie, 12);
			for (int i = 0; i < 4; i++) {
				bs[h + i] = (uint8_t)(NBD_META_ID_ALLOCATION >> (24 - 8 * i));
				bs[h + 4 + i] = (uint8_t)(rq.length >> (24 - 8 * i));
				bs[h + 8 + i] = 0;
			}
			if (write_all(c->fd, bs, sizeof(bs)) != 0)
				return -1;
			continue;
		}
		int err = v == NBD_REQ_ERROR ? rq.error : 0;
		if (rq.payload && read_exact(c, NULL, rq.payload) != 0)
			return -1;
		if (v == NBD_REQ_OK && rq.type != NBD_CMD_FLUSH)
			err = -EIO;   /* nothing is stored here */
		size_t n = err ? nbd_reply_error(out, sizeof(out), hs->session, rq.cookie, err,
						 "refused by the test server")
			       : nbd_simple_reply(out, rq.cookie, 0);
		if (write_all(c->fd, out, n) != 0)
			return -1;
	}
}

static unsigned parse_flags(const char *s)
{
	static const struct { const char *name; unsigned bit; } tab[] = {
		{ "ro", NBD_EXPORT_READ_ONLY }, { "flush", NBD_EXPORT_FLUSH },
		{ "fua", NBD_EXPORT_FUA }, { "trim", NBD_EXPORT_TRIM },
		{ "zero", NBD_EXPORT_WRITE_ZEROES }, { "fast-zero", NBD_EXPORT_FAST_ZERO },
		{ "multi-conn", NBD_EXPORT_FLUSH_ALL_CONNS }, { "no-list", NBD_EXPORT_NO_LIST },
	};
	unsigned f = 0;
	char buf[256];

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		size_t i;
		for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
			if (strcmp(t, tab[i].name) == 0)
				break;
		if (i == sizeof(tab) / sizeof(tab[0])) {
			fprintf(stderr, "unknown flag '%s'\n", t);
			exit(1);
		}
		f |= tab[i].bit;
	}
	return f;
}

int main(int argc, char **argv)
{
	struct nbd_export ex = { .name = "uraid", .description = "uraid protocol test export",
				 .size = 64u << 20 };
	uint64_t pref = 0;
	unsigned long clients = 1;
	const char *path = NULL;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strncmp(a, "--size=", 7) == 0)
			ex.size = strtoull(a + 7, NULL, 0);
		else if (strncmp(a, "--name=", 7) == 0)
			ex.name = a + 7;
		else if (strncmp(a, "--desc=", 7) == 0)
			ex.description = a + 7;
		else if (strncmp(a, "--pref=", 7) == 0)
			pref = strtoull(a + 7, NULL, 0);
		else if (strncmp(a, "--flags=", 8) == 0)
			ex.flags = parse_flags(a + 8);
		else if (strncmp(a, "--clients=", 10) == 0)
			clients = strtoul(a + 10, NULL, 0);
		else if (a[0] != '-' && !path)
			path = a;
		else {
			fprintf(stderr, "usage: %s SOCKET [--size=] [--name=] [--desc=] [--pref=] "
				"[--flags=] [--clients=]\n", argv[0]);
			return 1;
		}
	}
	nbd_export_block_sizes(&ex, pref);
	if (!path || nbd_export_check(&ex) != 0) {
		fprintf(stderr, "bad arguments (socket path, or an export the spec forbids)\n");
		return 1;
	}
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "socket path too long\n");
		return 1;
	}
	strcpy(sa.sun_path, path);
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	unlink(path);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(lfd, 4) != 0) {
		perror(path);
		return 1;
	}
	alarm(60);
	printf("listening on %s\n", path);
	fflush(stdout);

	/* One child per client: clients such as nbdcopy open several connections
	 * at once when CAN_MULTI_CONN is advertised. */
	signal(SIGCHLD, SIG_IGN);
	for (unsigned long n = 0; n < clients; n++) {
		int fd = accept(lfd, NULL, NULL);
		if (fd < 0) {
			perror("accept");
			return 1;
		}
		pid_t child = fork();
		if (child == 0) {
			static struct conn c;
			static struct nbd_handshake hs;
			close(lfd);
			c.fd = fd;
			if (nbd_hs_init(&hs, &ex) == 0 && handshake(&c, &hs) == 0)
				transmission(&c, &ex, &hs);
			close(fd);
			_exit(0);
		}
		if (child < 0)
			perror("fork");
		close(fd);
	}
	close(lfd);
	unlink(path);
	return 0;
}
