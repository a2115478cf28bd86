// SPDX-License-Identifier: MIT
/*
 * src/nbd/tls.c against a GnuTLS client, both in memory: the PSK file's
 * checks (each refusal with its reason), the handshake through the two
 * buffers with the right key, a wrong key and an unknown user, and seeded
 * random data both ways: what the client sends comes out of nbd_tls_read in
 * any slicing, what the server writes arrives whole, every record the
 * server writes holds at most the record size, and the output buffer is
 * never overrun (sends completed in random pieces while records are added).
 *
 *   test_nbd_tls [SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gnutls/gnutls.h>

#include "nbd/tls.h"
#include "../support/check.h"

static char dir[] = "/tmp/uraid-test-nbd-tls.XXXXXX";

static uint64_t rng(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
	chmod(path, 0600);
	return path;
}

/* ---- the client: a GnuTLS session over a pipe of our own ---- */
struct pipe {
	uint8_t *b;
	size_t head, tail, cap;
};

struct client {
	gnutls_session_t s;
	gnutls_psk_client_credentials_t cred;
	struct pipe in;                 /* what the server sent */
	struct pipe out;                /* what the client sends */
};

static ssize_t c_pull(gnutls_transport_ptr_t p, void *data, size_t len)
{
	struct client *c = p;
	size_t n = c->in.tail - c->in.head;
	if (!n) {
		gnutls_transport_set_errno(c->s, EAGAIN);
		return -1;
	}
	if (len < n)
		n = len;
	memcpy(data, c->in.b + c->in.head, n);
	c->in.head += n;
	return (ssize_t)n;
}

static ssize_t c_push(gnutls_transport_ptr_t p, const void *data, size_t len)
{
	struct client *c = p;
	if (c->out.cap - c->out.tail < len) {
		c->out.cap = (c->out.tail + len) * 2;
		c->out.b = realloc(c->out.b, c->out.cap);
	}
	memcpy(c->out.b + c->out.tail, data, len);
	c->out.tail += len;
	return (ssize_t)len;
}

static int c_pull_timeout(gnutls_transport_ptr_t p, unsigned ms)
{
	struct client *c = p;
	(void)ms;
	return c->in.tail > c->in.head;
}

static void client_init(struct client *c, const char *user, const uint8_t *key, size_t klen)
{
	memset(c, 0, sizeof(*c));
	c->in.cap = 64u << 20;
	c->in.b = malloc(c->in.cap);
	gnutls_datum_t k = { (unsigned char *)key, (unsigned)klen };
	gnutls_psk_allocate_client_credentials(&c->cred);
	gnutls_psk_set_client_credentials(c->cred, user, &k, GNUTLS_PSK_KEY_RAW);
	gnutls_init(&c->s, GNUTLS_CLIENT | GNUTLS_NONBLOCK);
	gnutls_priority_set_direct(c->s, "NORMAL:+ECDHE-PSK:+DHE-PSK:+PSK", NULL);
	gnutls_credentials_set(c->s, GNUTLS_CRD_PSK, c->cred);
	gnutls_transport_set_ptr(c->s, c);
	gnutls_transport_set_pull_function(c->s, c_pull);
	gnutls_transport_set_push_function(c->s, c_push);
	gnutls_transport_set_pull_timeout_function(c->s, c_pull_timeout);
}

static void client_fini(struct client *c)
{
	gnutls_deinit(c->s);
	gnutls_psk_free_client_credentials(c->cred);
	free(c->in.b);
	free(c->out.b);
}

/* Move what the client wrote into the server's input (as far as it fits). */
static void to_server(struct client *c, struct nbd_tls *t)
{
	while (c->out.head < c->out.tail) {
		size_t room;
		void *p = nbd_tls_in_space(t, &room);
		if (!p)
			return;
		size_t n = c->out.tail - c->out.head;
		if (n > room)
			n = room;
		memcpy(p, c->out.b + c->out.head, n);
		c->out.head += n;
		nbd_tls_in_added(t, n);
	}
	c->out.head = c->out.tail = 0;
}

/* Check the records in bytes the server sent, then hand them to the client. */
static size_t partial_record;   /* bytes of a record header/body still to come */
static uint8_t rec_hdr[5];
static size_t rec_hdr_have;

static void check_records(const uint8_t *p, size_t n, size_t record_max)
{
	while (n) {
		if (partial_record) {
			size_t k = partial_record < n ? partial_record : n;
			partial_record -= k, p += k, n -= k;
			continue;
		}
		rec_hdr[rec_hdr_have++] = *p++, n--;
		if (rec_hdr_have < 5)
			continue;
		rec_hdr_have = 0;
		size_t len = (size_t)rec_hdr[3] << 8 | rec_hdr[4];
		CHECK(rec_hdr[0] >= 20 && rec_hdr[0] <= 23, "record type %u", rec_hdr[0]);
		CHECK(len <= record_max + 256, "record of %zu bytes (max %zu + overhead)", len,
		      record_max);
		partial_record = len;
	}
}

static void to_client(struct nbd_tls *t, struct client *c, uint64_t *st, bool pieces)
{
	size_t len;
	const void *p;

	while ((p = nbd_tls_out_take(t, &len))) {
		size_t dummy;
		CHECK(nbd_tls_out_take(t, &dummy) == NULL, "two sends in flight");
		size_t n = pieces ? 1 + rng(st) % len : len;    /* a short send */
		check_records(p, n, nbd_tls_record_max(t) ? nbd_tls_record_max(t) : 16384);
		CHECK(c->in.tail + n <= c->in.cap, "client buffer");
		memcpy(c->in.b + c->in.tail, p, n);
		c->in.tail += n;
		CHECK(nbd_tls_out_sent(t, n, NULL) == 0, "out_sent");
	}
}

/* Run both handshakes to the end: 1 both up, < 0 server failed, 0 client failed. */
static int handshake(struct client *c, struct nbd_tls *t, uint64_t *st)
{
	const char *why = NULL;
	int srv = 0, cli = GNUTLS_E_AGAIN;

	for (int round = 0; round < 50; round++) {
		if (cli != 0) {
			cli = gnutls_handshake(c->s);
			if (cli < 0 && gnutls_error_is_fatal(cli))
				return 0;
		}
		to_server(c, t);
		if (srv != 1) {
			srv = nbd_tls_handshake(t, &why);
			if (srv < 0)
				return srv;
		}
		to_client(t, c, st, true);
		if (srv == 1 && cli == 0)
			return 1;
	}
	CHECK(0, "handshake did not finish");
	return 0;
}

static void test_psk_files(void)
{
	struct nbd_tls_creds *cr;
	char err[512];
	struct { const char *text, *want; } bad[] = {
		{ "alice:12345\n", "line 1" },
		{ "alice:00ff\n:abcd\n", "line 2" },
		{ "alice:zz\n", "line 1" },
		{ "alice\n", "line 1" },
		{ "alice:\n", "line 1" },
		{ "\n\n", "no keys" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct nbd_tls_opts o = { .psk_file = write_file("bad.psk", bad[i].text) };
		err[0] = 0;
		CHECK(nbd_tls_creds_load(&o, &cr, err, sizeof(err)) == -EINVAL &&
		      strstr(err, bad[i].want), "bad file %zu: %s", i, err);
	}
	struct nbd_tls_opts o = { .psk_file = "/nonexistent/keys.psk" };
	CHECK(nbd_tls_creds_load(&o, &cr, err, sizeof(err)) == -ENOENT && strstr(err, "keys.psk"),
	      "missing: %s", err);
	o.psk_file = NULL;
	CHECK(nbd_tls_creds_load(&o, &cr, err, sizeof(err)) == -EINVAL, "no keys at all");
	o.psk_file = write_file("k.psk", "bob:0102\r\nalice:00112233445566778899aabbccddeeff\n");
	o.flags = NBD_TLS_VERIFY_PEER;
	CHECK(nbd_tls_creds_load(&o, &cr, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "tls-verify-peer"), "verify-peer with PSK only: %s", err);
}

static const uint8_t alice_key[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
				       0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };

static void test_session(uint64_t seed)
{
	struct nbd_tls_creds *cr;
	char err[512];
	uint64_t st = seed;
	struct nbd_tls_opts o = {
		.psk_file = write_file("k.psk", "bob:0102\r\nalice:00112233445566778899aabbccddeeff\n") };

	if (nbd_tls_creds_load(&o, &cr, err, sizeof(err)) != 0) {
		CHECK(0, "load: %s", err);
		return;
	}
	/* a wrong key, and an unknown user: the handshake fails on the server */
	static const uint8_t wrong[16] = { 1 };
	struct { const char *user; const uint8_t *key; } refused[] = {
		{ "alice", wrong }, { "mallory", alice_key } };
	for (int i = 0; i < 2; i++) {
		struct client c;
		struct nbd_tls *t;
		client_init(&c, refused[i].user, refused[i].key, 16);
		CHECK(nbd_tls_new(cr, &t) == 0, "new");
		int rc = handshake(&c, t, &st);
		CHECK(rc <= 0 && !nbd_tls_ready(t), "refused case %d: handshake %d", i, rc);
		nbd_tls_free(t);
		client_fini(&c);
	}

	/* the right key: data both ways */
	struct client c;
	struct nbd_tls *t;
	client_init(&c, "alice", alice_key, 16);
	CHECK(nbd_tls_new(cr, &t) == 0, "new");
	CHECK(handshake(&c, t, &st) == 1 && nbd_tls_ready(t), "handshake (seed 0x%" PRIx64 ")", seed);
	if (!nbd_tls_ready(t))
		goto out;
	size_t rmax = nbd_tls_record_max(t);
	CHECK(rmax > 0 && rmax <= NBD_TLS_RECORD_BYTES, "record max %zu", rmax);

	/* client -> server: 3 MiB in records of random sizes, read in random slices */
	size_t total = 3u << 20;
	uint8_t *data = malloc(total), *got = malloc(total);
	for (size_t i = 0; i < total; i++)
		data[i] = (uint8_t)rng(&st);
	size_t sent = 0, have = 0;
	const char *why = NULL;
	while (have < total) {
		if (sent < total) {
			size_t n = 1 + rng(&st) % 20000;
			if (n > total - sent)
				n = total - sent;
			ssize_t w = gnutls_record_send(c.s, data + sent, n);
			CHECK(w > 0, "client send %zd", w);
			if (w > 0)
				sent += (size_t)w;
		}
		to_server(&c, t);
		while (have < total) {
			size_t want = 1 + rng(&st) % 9000;
			if (want > total - have)
				want = total - have;
			ssize_t r = nbd_tls_read(t, got + have, want, &why);
			CHECK(r >= 0, "server read %zd (%s)", r, why ? why : "");
			if (r <= 0)
				break;
			have += (size_t)r;
		}
		if (sent == total && c.out.head == c.out.tail && have < total) {
			CHECK(0, "data lost: %zu of %zu", have, total);
			break;
		}
	}
	CHECK(memcmp(data, got, total) == 0, "client to server data differs (seed 0x%" PRIx64 ")", seed);

	/* server -> client: records while there is room, sends completing in
	   random pieces in between; the client reads it all */
	memset(got, 0, total);
	sent = have = 0;
	while (have < total) {
		while (sent < total && nbd_tls_can_write(t)) {
			size_t n = 1 + rng(&st) % rmax;
			if (n > total - sent)
				n = total - sent;
			CHECK(nbd_tls_write(t, data + sent, n, &why) == 0, "server write: %s", why);
			sent += n;
			if (rng(&st) % 4 == 0)
				break;
		}
		to_client(t, &c, &st, true);
		while (have < total) {
			ssize_t r = gnutls_record_recv(c.s, got + have, total - have);
			if (r <= 0)
				break;
			have += (size_t)r;
		}
		if (sent == total && !nbd_tls_out_pending(t) && have < total) {
			CHECK(0, "data lost: %zu of %zu", have, total);
			break;
		}
	}
	CHECK(memcmp(data, got, total) == 0, "server to client data differs (seed 0x%" PRIx64 ")", seed);

	/* the client ends the session: nbd_tls_read says -EPIPE; the server
	   answers with its close_notify */
	uint8_t b[16];
	CHECK(gnutls_bye(c.s, GNUTLS_SHUT_WR) == 0, "client bye");
	to_server(&c, t);
	CHECK(nbd_tls_read(t, b, sizeof(b), &why) == -EPIPE, "server did not see close_notify");
	nbd_tls_bye(t);
	to_client(t, &c, &st, false);
	CHECK(gnutls_record_recv(c.s, b, sizeof(b)) == 0, "client did not get close_notify");
	free(data);
	free(got);
out:
	nbd_tls_free(t);
	client_fini(&c);
	nbd_tls_creds_free(cr);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x746c73;

	printf("test_nbd_tls: seed 0x%" PRIx64 "\n", seed);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_psk_files();
	test_session(seed);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	if (failures)
		printf("test_nbd_tls: %d failures (seed 0x%" PRIx64 ")\n", failures, seed);
	else
		printf("test_nbd_tls: all passed\n");
	return failures ? 1 : 0;
}
