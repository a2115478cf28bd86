// SPDX-License-Identifier: MIT
/*
 * src/nbd protocol code against doc/proto.md: handshake transcripts (every
 * option, good and malformed) fed whole, in 1-byte fragments and in seeded
 * random fragments must give the same bytes and the same outcome; exact
 * bytes of the greeting and of NBD_OPT_EXPORT_NAME's answer; request
 * validation as a table; the errno mapping; the reply encoders; the TLS
 * policies (STARTTLS, TLS_REQD) of each mode.
 *
 *   test_nbd_proto [SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "nbd/proto.h"
#include "nbd/server_internal.h"
#include "../support/check.h"

/* ---- byte building ---- */
struct bytes {
	size_t n;
	uint8_t b[1 << 21];
};

static void put(struct bytes *s, uint64_t v, int nbytes)
{
	for (int i = nbytes - 1; i >= 0; i--)
		s->b[s->n++] = (uint8_t)(v >> (8 * i));
}

static void put_mem(struct bytes *s, const void *p, size_t n)
{
	memcpy(s->b + s->n, p, n);
	s->n += n;
}

static uint64_t get(const uint8_t *p, int nbytes)
{
	uint64_t v = 0;
	for (int i = 0; i < nbytes; i++)
		v = v << 8 | p[i];
	return v;
}

static void opt(struct bytes *s, uint32_t o, const void *data, uint32_t len)
{
	put(s, NBD_OPTS_MAGIC, 8);
	put(s, o, 4);
	put(s, len, 4);
	if (data)
		put_mem(s, data, len);
}

/* GO/INFO payload: name, then the information requests. */
static void opt_go(struct bytes *s, uint32_t o, const char *name, int nreq, const uint16_t *req)
{
	uint32_t nl = (uint32_t)strlen(name);
	put(s, NBD_OPTS_MAGIC, 8);
	put(s, o, 4);
	put(s, 4 + nl + 2 + 2 * (uint32_t)nreq, 4);
	put(s, nl, 4);
	put_mem(s, name, nl);
	put(s, (uint64_t)nreq, 2);
	for (int i = 0; i < nreq; i++)
		put(s, req[i], 2);
}

static void client_start(struct bytes *s, uint32_t cflags)
{
	s->n = 0;
	put(s, cflags, 4);
}

/* ---- running a handshake ---- */
static uint64_t rng_next(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

struct run {
	int status;
	unsigned session;
	uint16_t tflags;
	char name[NBD_MAX_STRING + 1];
	size_t consumed;
	struct bytes out;
};

enum { FRAG_WHOLE, FRAG_ONE, FRAG_RANDOM, FRAG_LAZY };

static struct nbd_handshake hs;

/* Feed in (fragmented as mode says); drain the output after every call, or
 * (FRAG_LAZY) only when the state machine stops consuming. */
static void run_hs(const struct nbd_export *ex, const struct bytes *in, int mode, uint64_t seed,
		   struct run *r, unsigned flags_shutdown)
{
	const uint8_t *o;
	size_t n, pos = 0;
	uint64_t st = seed;

	CHECK(nbd_hs_init(&hs, ex) == 0, "init");
	if (flags_shutdown)
		nbd_hs_shutdown(&hs);
	r->out.n = 0;
	while (pos < in->n && hs.status == NBD_HS_NEGOTIATING) {
		size_t frag = in->n - pos;
		if (mode == FRAG_ONE)
			frag = 1;
		else if (mode == FRAG_RANDOM)
			frag = 1 + rng_next(&st) % (frag < 40 ? frag : 40);
		size_t used = nbd_hs_input(&hs, in->b + pos, frag);
		pos += used;
		if (mode != FRAG_LAZY || used < frag) {
			n = nbd_hs_output(&hs, &o);
			if (used < frag && hs.status == NBD_HS_NEGOTIATING && n == 0) {
				CHECK(0, "input refused with no output pending");
				break;
			}
			put_mem(&r->out, o, n);
			nbd_hs_sent(&hs, n);
		}
		if (used < frag && hs.status != NBD_HS_NEGOTIATING)
			break;
	}
	n = nbd_hs_output(&hs, &o);
	put_mem(&r->out, o, n);
	nbd_hs_sent(&hs, n);
	CHECK(nbd_hs_output(&hs, &o) == 0, "output drained");
	r->status = hs.status;
	r->session = hs.session;
	r->tflags = hs.tflags;
	r->consumed = pos;
	memcpy(r->name, hs.name, hs.name_len + 1);
}

static struct run runs[4];

/* Run in every fragmentation mode; all must agree. Returns the whole-feed run. */
static const struct run *transcript(const char *what, const struct nbd_export *ex,
				    const struct bytes *in, unsigned shutdown, uint64_t seed)
{
	for (int m = 0; m < 4; m++)
		run_hs(ex, in, m, seed + (uint64_t)m, &runs[m], shutdown);
	for (int m = 1; m < 4; m++) {
		const struct run *a = &runs[0], *b = &runs[m];
		CHECK(a->status == b->status && a->consumed == b->consumed &&
		      a->session == b->session && a->tflags == b->tflags &&
		      a->out.n == b->out.n && memcmp(a->out.b, b->out.b, a->out.n) == 0 &&
		      strcmp(a->name, b->name) == 0,
		      "%s: fragmentation mode %d differs from whole (status %d/%d, out %zu/%zu, "
		      "consumed %zu/%zu, seed 0x%" PRIx64 ")", what, m, a->status, b->status,
		      a->out.n, b->out.n, a->consumed, b->consumed, seed);
	}
	return &runs[0];
}

/* Option replies after the greeting. */
struct rep {
	uint32_t opt, type, len;
	const uint8_t *data;
};

static int parse_replies(const struct run *r, struct rep *reps, int max, size_t skip_tail)
{
	size_t p = NBD_GREETING_BYTES, end = r->out.n - skip_tail;
	int n = 0;

	while (p + NBD_REP_HEADER_BYTES <= end && n < max) {
		const uint8_t *h = r->out.b + p;
		CHECK(get(h, 8) == NBD_REP_MAGIC, "reply magic at %zu", p);
		reps[n] = (struct rep){ (uint32_t)get(h + 8, 4), (uint32_t)get(h + 12, 4),
					(uint32_t)get(h + 16, 4), h + 20 };
		p += NBD_REP_HEADER_BYTES + reps[n].len;
		n++;
	}
	CHECK(p == end, "replies end at %zu, output at %zu", p, end);
	return n;
}

static struct nbd_export export_default(void)
{
	struct nbd_export ex = { .name = "uraid", .description = "an array", .size = 64u << 20,
				 .flags = NBD_EXPORT_FLUSH | NBD_EXPORT_FUA | NBD_EXPORT_TRIM |
					  NBD_EXPORT_WRITE_ZEROES | NBD_EXPORT_FAST_ZERO };
	nbd_export_block_sizes(&ex, 65536);
	return ex;
}

static struct bytes in;

static void test_greeting_and_export_name(uint64_t seed)
{
	struct nbd_export ex = export_default();
	static const uint8_t greet[18] = { 'N', 'B', 'D', 'M', 'A', 'G', 'I', 'C',
					   'I', 'H', 'A', 'V', 'E', 'O', 'P', 'T', 0, 3 };

	/* EXPORT_NAME "" with zeroes: size, flags, 124 zero bytes */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_EXPORT_NAME, NULL, 0);
	const struct run *r = transcript("export-name default", &ex, &in, 0, seed);
	CHECK(r->out.n == 18 + 134, "out %zu", r->out.n);
	CHECK(memcmp(r->out.b, greet, 18) == 0, "greeting bytes");
	CHECK(get(r->out.b + 18, 8) == ex.size, "size");
	uint16_t tf = nbd_tflags(&ex, 0);
	CHECK(get(r->out.b + 26, 2) == tf, "flags %" PRIx64, get(r->out.b + 26, 2));
	int zero = 1;
	for (int i = 0; i < 124; i++)
		zero &= r->out.b[28 + i] == 0;
	CHECK(zero, "124 zero bytes");
	CHECK(r->status == NBD_HS_TRANSMISSION && r->name[0] == 0, "transmission");
	CHECK(r->tflags == tf && !(tf & NBD_FLAG_SEND_DF), "tflags");

	/* C_NO_ZEROES: no padding; canonical name; request bytes are left unread */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	opt(&in, NBD_OPT_EXPORT_NAME, "uraid", 5);
	size_t hs_len = in.n;
	put(&in, NBD_REQUEST_MAGIC, 4);
	for (int i = 0; i < 3; i++)
		put(&in, 0, 8);
	r = transcript("export-name no-zeroes", &ex, &in, 0, seed);
	CHECK(r->out.n == 18 + 10, "out %zu", r->out.n);
	CHECK(r->consumed == hs_len, "consumed %zu of %zu", r->consumed, hs_len);
	CHECK(r->status == NBD_HS_TRANSMISSION && strcmp(r->name, "uraid") == 0, "name");
	CHECK(r->session & NBD_SESSION_NO_ZEROES, "session");

	/* unknown name: EXPORT_NAME cannot error, so close */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_EXPORT_NAME, "other", 5);
	r = transcript("export-name unknown", &ex, &in, 0, seed);
	CHECK(r->status == NBD_HS_FAILED && r->out.n == 18, "status %d out %zu", r->status, r->out.n);

	/* a name longer than 4096 bytes: closed at the header, data never read */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_EXPORT_NAME, NULL, NBD_MAX_STRING + 1);
	r = transcript("export-name too long", &ex, &in, 0, seed);
	CHECK(r->status == NBD_HS_FAILED && r->consumed == in.n, "status %d", r->status);

	/* old newstyle client (no C_FIXED_NEWSTYLE): EXPORT_NAME works... */
	client_start(&in, 0);
	opt(&in, NBD_OPT_EXPORT_NAME, NULL, 0);
	r = transcript("non-fixed export-name", &ex, &in, 0, seed);
	CHECK(r->status == NBD_HS_TRANSMISSION && r->out.n == 18 + 134, "status %d", r->status);
	/* ...but it could not parse an option reply: anything else closes */
	client_start(&in, 0);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	r = transcript("non-fixed go", &ex, &in, 0, seed);
	CHECK(r->status == NBD_HS_FAILED && r->out.n == 18, "status %d", r->status);
}

static void check_info_set(const struct rep *reps, int n, const struct nbd_export *ex,
			   uint16_t tflags, int want_name, int want_desc, uint32_t opt_code)
{
	int seen_export = 0, seen_bs = 0, seen_name = 0, seen_desc = 0;

	for (int i = 0; i < n - 1; i++) {
		CHECK(reps[i].opt == opt_code && reps[i].type == NBD_REP_INFO, "info %d", i);
		uint16_t t = (uint16_t)get(reps[i].data, 2);
		const uint8_t *d = reps[i].data + 2;
		if (t == NBD_INFO_EXPORT) {
			seen_export++;
			CHECK(reps[i].len == 12 && get(d, 8) == ex->size && get(d + 8, 2) == tflags,
			      "NBD_INFO_EXPORT len %u flags %" PRIx64, reps[i].len, get(d + 8, 2));
		} else if (t == NBD_INFO_BLOCK_SIZE) {
			seen_bs++;
			CHECK(reps[i].len == 14 && get(d, 4) == 512 && get(d + 4, 4) == ex->pref_block &&
			      get(d + 8, 4) == 32u << 20, "NBD_INFO_BLOCK_SIZE");
		} else if (t == NBD_INFO_NAME) {
			seen_name++;
			CHECK(reps[i].len == 2 + strlen(ex->name) &&
			      memcmp(d, ex->name, strlen(ex->name)) == 0, "NBD_INFO_NAME");
		} else if (t == NBD_INFO_DESCRIPTION) {
			seen_desc++;
			CHECK(reps[i].len == 2 + strlen(ex->description) &&
			      memcmp(d, ex->description, strlen(ex->description)) == 0, "DESCRIPTION");
		} else {
			CHECK(0, "unexpected info type %u", t);
		}
	}
	CHECK(seen_export == 1 && seen_bs == 1, "export %d block size %d", seen_export, seen_bs);
	CHECK(seen_name == want_name && seen_desc == want_desc, "name %d desc %d", seen_name, seen_desc);
	CHECK(reps[n - 1].opt == opt_code && reps[n - 1].type == NBD_REP_ACK && reps[n - 1].len == 0,
	      "final ACK");
}

static void test_info_go(uint64_t seed)
{
	struct nbd_export ex = export_default();
	struct rep reps[16];
	const uint16_t all[] = { NBD_INFO_BLOCK_SIZE, NBD_INFO_NAME, NBD_INFO_DESCRIPTION, 999 };

	/* STRUCTURED_REPLY, INFO "" (asks name+desc), GO "uraid" with block size */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES);
	opt(&in, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	opt_go(&in, NBD_OPT_INFO, "", 3, all + 1);
	opt_go(&in, NBD_OPT_GO, "uraid", 4, all);
	size_t hs_len = in.n;
	put(&in, 0x25609513, 4);   /* the first request: not the handshake's */
	const struct run *r = transcript("structured + info + go", &ex, &in, 0, seed);
	int n = parse_replies(r, reps, 16, 0);
	unsigned sess = NBD_SESSION_STRUCTURED | NBD_SESSION_NO_ZEROES;
	uint16_t tf = nbd_tflags(&ex, sess);
	CHECK(tf & NBD_FLAG_SEND_DF, "DF with structured replies");
	CHECK(n == 1 + 5 + 5, "replies %d", n);
	CHECK(reps[0].opt == NBD_OPT_STRUCTURED_REPLY && reps[0].type == NBD_REP_ACK, "sr ack");
	check_info_set(reps + 1, 5, &ex, tf, 1, 1, NBD_OPT_INFO);
	check_info_set(reps + 6, 5, &ex, tf, 1, 1, NBD_OPT_GO);
	CHECK(r->status == NBD_HS_TRANSMISSION && r->consumed == hs_len, "go enters transmission");
	CHECK(r->session == (sess | NBD_SESSION_BLOCK_SIZE) && r->tflags == tf, "session %x", r->session);
	CHECK(strcmp(r->name, "uraid") == 0, "name");

	/* GO with no requests: EXPORT and BLOCK_SIZE only; no block-size promise */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	r = transcript("go plain", &ex, &in, 0, seed);
	n = parse_replies(r, reps, 16, 0);
	CHECK(n == 3, "replies %d", n);
	check_info_set(reps, n, &ex, nbd_tflags(&ex, 0), 0, 0, NBD_OPT_GO);
	CHECK(r->status == NBD_HS_TRANSMISSION && !(r->session & NBD_SESSION_BLOCK_SIZE), "go");

	/* unknown export: ERR_UNKNOWN and negotiation goes on; malformed: ERR_INVALID */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_GO, "nope", 1, all);
	put(&in, NBD_OPTS_MAGIC, 8);                 /* name length past the data */
	put(&in, NBD_OPT_INFO, 4);
	put(&in, 8, 4);
	put(&in, 3, 4);
	put(&in, 0, 4);
	put(&in, NBD_OPTS_MAGIC, 8);                 /* request count disagrees */
	put(&in, NBD_OPT_GO, 4);
	put(&in, 8, 4);
	put(&in, 0, 4);
	put(&in, 2, 2);
	put(&in, 0, 2);
	opt(&in, NBD_OPT_INFO, "abc", 3);            /* shorter than 6 */
	opt(&in, NBD_OPT_GO, NULL, NBD_OPT_DATA_MAX + 1);   /* too long to keep */
	in.n += NBD_OPT_DATA_MAX + 1;
	opt_go(&in, NBD_OPT_GO, "uraid", 0, NULL);
	r = transcript("go errors", &ex, &in, 0, seed);
	n = parse_replies(r, reps, 16, 0);
	CHECK(n == 5 + 3, "replies %d", n);
	uint32_t want[] = { NBD_REP_ERR_UNKNOWN, NBD_REP_ERR_INVALID, NBD_REP_ERR_INVALID,
			    NBD_REP_ERR_INVALID, NBD_REP_ERR_TOO_BIG };
	for (int i = 0; i < 5 && i < n; i++)
		CHECK(reps[i].type == want[i] && reps[i].len > 0, "error %d: %x", i, reps[i].type);
	CHECK(r->status == NBD_HS_TRANSMISSION, "still reaches transmission");
}

static void test_other_options(uint64_t seed)
{
	struct nbd_export ex = export_default();
	struct rep reps[32];

	/* LIST, LIST with data, STARTTLS, meta contexts, unknown (short and long),
	 * STRUCTURED_REPLY with data, ABORT with data (ignored) */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_LIST, NULL, 0);
	opt(&in, NBD_OPT_LIST, "x", 1);
	opt(&in, NBD_OPT_STARTTLS, NULL, 0);
	opt(&in, NBD_OPT_LIST_META_CONTEXT, "\0\0\0\0\0\0\0\0", 8);
	opt(&in, NBD_OPT_SET_META_CONTEXT, "\0\0\0\0\0\0\0\0", 8);
	opt(&in, NBD_OPT_EXTENDED_HEADERS, NULL, 0);
	opt(&in, NBD_OPT_PEEK_EXPORT, NULL, 0);
	opt(&in, 0x7fff1234, "abc", 3);
	opt(&in, 42, NULL, 300000);
	in.n += 300000;
	opt(&in, NBD_OPT_STRUCTURED_REPLY, "x", 1);
	opt(&in, NBD_OPT_ABORT, "junk", 4);
	opt(&in, NBD_OPT_LIST, NULL, 0);   /* after ABORT: never read */
	const struct run *r = transcript("other options", &ex, &in, 0, seed);
	int n = parse_replies(r, reps, 32, 0);
	CHECK(n == 13, "replies %d", n);
	CHECK(reps[0].type == NBD_REP_SERVER && reps[0].len == 4 + 5 + 8 &&
	      get(reps[0].data, 4) == 5 && memcmp(reps[0].data + 4, "uraidan array", 13) == 0,
	      "NBD_REP_SERVER");
	/* LIST_META_CONTEXT with no query lists base:allocation; SET before
	   structured replies is invalid */
	uint32_t want[] = { NBD_REP_SERVER, NBD_REP_ACK, NBD_REP_ERR_INVALID, NBD_REP_ERR_POLICY,
			    NBD_REP_META_CONTEXT, NBD_REP_ACK, NBD_REP_ERR_INVALID,
			    NBD_REP_ERR_UNSUP, NBD_REP_ERR_UNSUP, NBD_REP_ERR_UNSUP,
			    NBD_REP_ERR_UNSUP, NBD_REP_ERR_INVALID, NBD_REP_ACK };
	uint32_t opts[] = { 3, 3, 3, 5, 9, 9, 10, 11, 4, 0x7fff1234, 42, 8, 2 };
	for (int i = 0; i < 13 && i < n; i++)
		CHECK(reps[i].type == want[i] && reps[i].opt == opts[i],
		      "reply %d: opt %u type %x", i, reps[i].opt, reps[i].type);
	CHECK(r->status == NBD_HS_ABORTED, "aborted");
	CHECK(!(r->session & NBD_SESSION_STRUCTURED), "structured not negotiated");

	/* policy: no listing */
	ex.flags |= NBD_EXPORT_NO_LIST;
	ex.description = NULL;
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_LIST, NULL, 0);
	opt(&in, NBD_OPT_ABORT, NULL, 0);
	r = transcript("list policy", &ex, &in, 0, seed);
	n = parse_replies(r, reps, 32, 0);
	CHECK(n == 2 && reps[0].type == NBD_REP_ERR_POLICY && reps[1].type == NBD_REP_ACK, "policy");

	/* shutting down: everything but ABORT gets ERR_SHUTDOWN */
	ex = export_default();
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	opt(&in, NBD_OPT_LIST, NULL, 0);
	opt(&in, NBD_OPT_ABORT, NULL, 0);
	r = transcript("shutdown", &ex, &in, 1, seed);
	n = parse_replies(r, reps, 32, 0);
	CHECK(n == 3 && reps[0].type == NBD_REP_ERR_SHUTDOWN && reps[1].type == NBD_REP_ERR_SHUTDOWN &&
	      reps[2].type == NBD_REP_ACK && r->status == NBD_HS_ABORTED, "shutdown");
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_EXPORT_NAME, NULL, 0);
	r = transcript("shutdown export-name", &ex, &in, 1, seed);
	CHECK(r->status == NBD_HS_FAILED, "export-name while shutting down closes");

	/* many pipelined options without reading the answers: back-pressure */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	for (int i = 0; i < 1000; i++)
		opt(&in, NBD_OPT_LIST, NULL, 0);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	r = transcript("pipelined", &ex, &in, 0, seed);
	CHECK(r->status == NBD_HS_TRANSMISSION && r->consumed == in.n, "pipelined status %d", r->status);
	CHECK(r->out.n == 18 + 1000 * (20 + 4 + 5 + 8 + 20) + 20 + 12 + 20 + 14 + 20, "out %zu", r->out.n);
	/* without draining at all, the state machine stops and waits */
	CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
	size_t used = nbd_hs_input(&hs, in.b, in.n);
	const uint8_t *o;
	CHECK(used < in.n && hs.status == NBD_HS_NEGOTIATING && nbd_hs_output(&hs, &o) > 0,
	      "back-pressure: used %zu of %zu", used, in.n);
}

/* Feed in to a handshake already set up (hs), in seeded fragments, draining
 * the output into out; stops when the status leaves NEGOTIATING. Returns the
 * bytes consumed. */
static size_t feed(const struct bytes *input, size_t from, struct bytes *out, uint64_t *st)
{
	size_t pos = from;
	const uint8_t *o;

	while (pos < input->n && hs.status == NBD_HS_NEGOTIATING) {
		size_t frag = input->n - pos;
		frag = 1 + rng_next(st) % (frag < 40 ? frag : 40);
		pos += nbd_hs_input(&hs, input->b + pos, frag);
		size_t n = nbd_hs_output(&hs, &o);
		put_mem(out, o, n);
		nbd_hs_sent(&hs, n);
	}
	size_t n = nbd_hs_output(&hs, &o);
	put_mem(out, o, n);
	nbd_hs_sent(&hs, n);
	return pos - from;
}

static struct bytes tls_out;

static int replies_of(const struct bytes *out, size_t start, struct rep *reps, int max)
{
	int n = 0;
	size_t p = start;
	while (p + NBD_REP_HEADER_BYTES <= out->n && n < max) {
		const uint8_t *h = out->b + p;
		CHECK(get(h, 8) == NBD_REP_MAGIC, "reply magic at %zu", p);
		reps[n] = (struct rep){ (uint32_t)get(h + 8, 4), (uint32_t)get(h + 12, 4),
					(uint32_t)get(h + 16, 4), h + 20 };
		p += NBD_REP_HEADER_BYTES + reps[n].len;
		n++;
	}
	return n;
}

static void test_tls(uint64_t seed)
{
	struct nbd_export ex = export_default();
	struct rep reps[32];
	uint64_t st = seed;
	int n;

	/* require (FORCEDTLS): everything but STARTTLS and ABORT -> TLS_REQD,
	   INFO and GO included, even for an unknown export; STARTTLS with data
	   -> INVALID; STARTTLS -> ACK and the handshake stops right after it */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_LIST, NULL, 0);
	opt(&in, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	opt_go(&in, NBD_OPT_INFO, "", 0, NULL);
	opt_go(&in, NBD_OPT_GO, "nope", 0, NULL);
	opt(&in, 42, "abc", 3);
	opt(&in, NBD_OPT_STARTTLS, "x", 1);
	opt(&in, NBD_OPT_STARTTLS, NULL, 0);
	size_t before_injection = in.n;
	opt(&in, NBD_OPT_LIST, NULL, 0);           /* plaintext behind STARTTLS */
	CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
	nbd_hs_set_tls(&hs, NBD_TLS_REQUIRE);
	tls_out.n = 0;
	size_t used = feed(&in, 0, &tls_out, &st);
	CHECK(hs.status == NBD_HS_STARTTLS, "require: status %d after STARTTLS", hs.status);
	CHECK(used == before_injection, "require: consumed %zu, STARTTLS ends at %zu (seed 0x%"
	      PRIx64 ")", used, before_injection, seed);
	n = replies_of(&tls_out, NBD_GREETING_BYTES, reps, 32);
	uint32_t want[] = { NBD_REP_ERR_TLS_REQD, NBD_REP_ERR_TLS_REQD, NBD_REP_ERR_TLS_REQD,
			    NBD_REP_ERR_TLS_REQD, NBD_REP_ERR_TLS_REQD, NBD_REP_ERR_INVALID,
			    NBD_REP_ACK };
	uint32_t opts[] = { 3, 8, 6, 7, 42, 5, 5 };
	CHECK(n == 7, "require: %d replies", n);
	for (int i = 0; i < 7 && i < n; i++)
		CHECK(reps[i].type == want[i] && reps[i].opt == opts[i],
		      "require: reply %d: opt %u type %x", i, reps[i].opt, reps[i].type);
	/* nothing more is read until TLS is up */
	const uint8_t *o;
	CHECK(nbd_hs_input(&hs, in.b + used, in.n - used) == 0 && nbd_hs_output(&hs, &o) == 0,
	      "require: input read before TLS is up");
	/* over TLS: the options work, STARTTLS again is INVALID, no TLS_REQD;
	   the structured replies asked for before are forgotten */
	CHECK(nbd_hs_tls_started(&hs) == 0 && hs.status == NBD_HS_NEGOTIATING, "tls started");
	CHECK(nbd_hs_tls_started(&hs) == -EINVAL, "tls started twice");
	in.n = 0;
	opt(&in, NBD_OPT_STARTTLS, NULL, 0);
	opt(&in, NBD_OPT_LIST, NULL, 0);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	tls_out.n = 0;
	used = feed(&in, 0, &tls_out, &st);
	CHECK(hs.status == NBD_HS_TRANSMISSION && used == in.n, "require: GO over TLS: status %d",
	      hs.status);
	CHECK(!(hs.session & NBD_SESSION_STRUCTURED), "structured replies survived STARTTLS");
	n = replies_of(&tls_out, 0, reps, 32);
	CHECK(n == 6 && reps[0].opt == 5 && reps[0].type == NBD_REP_ERR_INVALID &&
	      reps[1].type == NBD_REP_SERVER && reps[2].type == NBD_REP_ACK &&
	      reps[5].opt == 7 && reps[5].type == NBD_REP_ACK, "require over TLS: %d replies", n);
	for (int i = 0; i < n; i++)
		CHECK(reps[i].type != NBD_REP_ERR_TLS_REQD, "TLS_REQD over TLS (reply %d)", i);

	/* require: EXPORT_NAME before TLS cannot be refused: the session ends
	   with no export data sent; ABORT is allowed */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_EXPORT_NAME, NULL, 0);
	CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
	nbd_hs_set_tls(&hs, NBD_TLS_REQUIRE);
	tls_out.n = 0;
	feed(&in, 0, &tls_out, &st);
	CHECK(hs.status == NBD_HS_FAILED && tls_out.n == NBD_GREETING_BYTES,
	      "require: EXPORT_NAME before TLS: status %d, out %zu", hs.status, tls_out.n);
	client_start(&in, 0);                      /* no fixed newstyle: no STARTTLS possible */
	opt(&in, NBD_OPT_EXPORT_NAME, NULL, 0);
	CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
	nbd_hs_set_tls(&hs, NBD_TLS_REQUIRE);
	tls_out.n = 0;
	feed(&in, 0, &tls_out, &st);
	CHECK(hs.status == NBD_HS_FAILED && tls_out.n == NBD_GREETING_BYTES,
	      "require: an old client's EXPORT_NAME: status %d", hs.status);
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_ABORT, NULL, 0);
	CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
	nbd_hs_set_tls(&hs, NBD_TLS_REQUIRE);
	tls_out.n = 0;
	feed(&in, 0, &tls_out, &st);
	n = replies_of(&tls_out, NBD_GREETING_BYTES, reps, 32);
	CHECK(hs.status == NBD_HS_ABORTED && n == 1 && reps[0].type == NBD_REP_ACK,
	      "require: ABORT before TLS");

	/* on (SELECTIVETLS, nothing TLS-only): plain options and GO work,
	   STARTTLS is accepted later too */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	opt(&in, NBD_OPT_LIST, NULL, 0);
	opt(&in, NBD_OPT_STARTTLS, NULL, 0);
	CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
	nbd_hs_set_tls(&hs, NBD_TLS_ON);
	tls_out.n = 0;
	feed(&in, 0, &tls_out, &st);
	n = replies_of(&tls_out, NBD_GREETING_BYTES, reps, 32);
	CHECK(hs.status == NBD_HS_STARTTLS && n == 4 && reps[0].type == NBD_REP_ACK &&
	      reps[1].type == NBD_REP_SERVER && reps[3].opt == 5 && reps[3].type == NBD_REP_ACK,
	      "on: status %d, %d replies", hs.status, n);
	CHECK(hs.session & NBD_SESSION_STRUCTURED, "on: structured before STARTTLS");
	CHECK(nbd_hs_tls_started(&hs) == 0 && !(hs.session & NBD_SESSION_STRUCTURED),
	      "on: STARTTLS forgets structured replies");
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
	nbd_hs_set_tls(&hs, NBD_TLS_ON);
	tls_out.n = 0;
	feed(&in, 0, &tls_out, &st);
	CHECK(hs.status == NBD_HS_TRANSMISSION, "on: plain GO: status %d", hs.status);

	/* a refused client (too many connections) under require and on:
	   STARTTLS is ACKed, then every option over TLS gets ERR_POLICY with
	   the reason (a client insisting on TLS must hear it); under off it
	   gets the reason to STARTTLS itself */
	static const char reason[] = "too many connections; try again later";
	for (int m = 0; m < 3; m++) {
		enum nbd_tls_mode mode = m == 0 ? NBD_TLS_REQUIRE : m == 1 ? NBD_TLS_ON : NBD_TLS_OFF;
		client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
		opt(&in, NBD_OPT_LIST, NULL, 0);
		opt(&in, NBD_OPT_STARTTLS, NULL, 0);
		CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
		nbd_hs_set_tls(&hs, mode);
		nbd_hs_refuse(&hs, reason);
		tls_out.n = 0;
		feed(&in, 0, &tls_out, &st);
		n = replies_of(&tls_out, NBD_GREETING_BYTES, reps, 32);
		CHECK(n == 2 && reps[0].opt == NBD_OPT_LIST && reps[0].type == NBD_REP_ERR_POLICY &&
		      reps[0].len == sizeof(reason) - 1 && !memcmp(reps[0].data, reason, reps[0].len),
		      "refused, mode %d: LIST before TLS gets the reason", mode);
		if (mode == NBD_TLS_OFF) {
			CHECK(n == 2 && reps[1].type == NBD_REP_ERR_POLICY &&
			      hs.status == NBD_HS_NEGOTIATING, "refused, off: STARTTLS refused");
			continue;
		}
		CHECK(n == 2 && reps[1].opt == NBD_OPT_STARTTLS && reps[1].type == NBD_REP_ACK &&
		      hs.status == NBD_HS_STARTTLS, "refused, mode %d: STARTTLS ACKed (reply %x, "
		      "status %d)", mode, n == 2 ? reps[1].type : 0, hs.status);
		if (hs.status != NBD_HS_STARTTLS)
			continue;
		CHECK(nbd_hs_tls_started(&hs) == 0, "refused: tls started");
		in.n = 0;
		opt_go(&in, NBD_OPT_GO, "", 0, NULL);
		opt(&in, NBD_OPT_STARTTLS, NULL, 0);
		opt(&in, NBD_OPT_EXPORT_NAME, NULL, 0);
		tls_out.n = 0;
		feed(&in, 0, &tls_out, &st);
		n = replies_of(&tls_out, 0, reps, 32);
		CHECK(n == 2 && reps[0].type == NBD_REP_ERR_POLICY && reps[1].type == NBD_REP_ERR_POLICY &&
		      reps[0].len == sizeof(reason) - 1 && !memcmp(reps[0].data, reason, reps[0].len) &&
		      hs.status == NBD_HS_FAILED, "refused over TLS, mode %d: %d replies, status %d",
		      mode, n, hs.status);
	}

	/* off (NOTLS): STARTTLS -> POLICY, never TLS_REQD, the session goes on */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_STARTTLS, NULL, 0);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
	tls_out.n = 0;
	feed(&in, 0, &tls_out, &st);
	n = replies_of(&tls_out, NBD_GREETING_BYTES, reps, 32);
	CHECK(hs.status == NBD_HS_TRANSMISSION && n >= 1 && reps[0].type == NBD_REP_ERR_POLICY,
	      "off: status %d, first reply %x", hs.status, n ? reps[0].type : 0);
	CHECK(nbd_hs_tls_started(&hs) == -EINVAL, "off: tls started without STARTTLS");
}

static void test_malformed(uint64_t seed)
{
	struct nbd_export ex = export_default();

	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE | 4);
	const struct run *r = transcript("unknown client flag", &ex, &in, 0, seed);
	CHECK(r->status == NBD_HS_FAILED && r->out.n == 18, "unknown client flag closes");

	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	put(&in, NBD_OPTS_MAGIC ^ 1, 8);
	put(&in, NBD_OPT_LIST, 4);
	put(&in, 0, 4);
	r = transcript("bad option magic", &ex, &in, 0, seed);
	CHECK(r->status == NBD_HS_FAILED && r->out.n == 18, "bad magic closes");

	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, 77, NULL, NBD_OPT_SKIP_MAX + 1);
	r = transcript("huge option", &ex, &in, 0, seed);
	CHECK(r->status == NBD_HS_FAILED && r->consumed == in.n, "huge option closes");
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_INFO, NULL, 0xffffffffu);
	r = transcript("huge info", &ex, &in, 0, seed);
	CHECK(r->status == NBD_HS_FAILED, "huge info closes");

	/* truncated transcripts: every prefix of a good one just waits for more */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_LIST, NULL, 0);
	const uint16_t req[] = { NBD_INFO_NAME };
	opt_go(&in, NBD_OPT_INFO, "uraid", 1, req);
	opt_go(&in, NBD_OPT_GO, "uraid", 1, req);
	struct bytes *full = malloc(sizeof(*full));
	memcpy(full, &in, sizeof(in));
	for (size_t cut = 0; cut < full->n; cut++) {
		in.n = cut;
		r = transcript("truncated", &ex, &in, 0, seed + cut);
		CHECK(r->status == NBD_HS_NEGOTIATING && r->consumed == cut, "cut %zu: status %d",
		      cut, r->status);
	}
	free(full);

	/* an export the spec forbids is refused */
	struct nbd_export bad = ex;
	bad.min_block = 768;
	CHECK(nbd_hs_init(&hs, &bad) == -EINVAL, "min block not a power of 2");
}

static void test_export_flags(void)
{
	struct nbd_export ex = export_default();
	static const struct {
		unsigned flags, session;
		uint16_t want;
	} tab[] = {
		{ 0, 0, NBD_FLAG_HAS_FLAGS },
		{ NBD_EXPORT_READ_ONLY, 0, NBD_FLAG_HAS_FLAGS | NBD_FLAG_READ_ONLY },
		{ NBD_EXPORT_READ_ONLY | NBD_EXPORT_FUA | NBD_EXPORT_TRIM | NBD_EXPORT_WRITE_ZEROES |
		  NBD_EXPORT_FAST_ZERO | NBD_EXPORT_FLUSH, 0,
		  NBD_FLAG_HAS_FLAGS | NBD_FLAG_READ_ONLY | NBD_FLAG_SEND_FLUSH },
		{ NBD_EXPORT_FLUSH | NBD_EXPORT_FUA, 0,
		  NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH | NBD_FLAG_SEND_FUA },
		{ NBD_EXPORT_FAST_ZERO, 0, NBD_FLAG_HAS_FLAGS },   /* needs WRITE_ZEROES */
		{ NBD_EXPORT_WRITE_ZEROES | NBD_EXPORT_FAST_ZERO, 0,
		  NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_WRITE_ZEROES | NBD_FLAG_SEND_FAST_ZERO },
		{ NBD_EXPORT_TRIM, NBD_SESSION_STRUCTURED,
		  NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_TRIM | NBD_FLAG_SEND_DF },
		{ NBD_EXPORT_FLUSH, 0, NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH },  /* no multi-conn */
		{ NBD_EXPORT_FLUSH | NBD_EXPORT_FLUSH_ALL_CONNS, 0,
		  NBD_FLAG_HAS_FLAGS | NBD_FLAG_SEND_FLUSH | NBD_FLAG_CAN_MULTI_CONN },
		{ NBD_EXPORT_ROTATIONAL, 0, NBD_FLAG_HAS_FLAGS | NBD_FLAG_ROTATIONAL },
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		ex.flags = tab[i].flags;
		uint16_t got = nbd_tflags(&ex, tab[i].session);
		CHECK(got == tab[i].want, "tflags row %zu: 0x%x, want 0x%x", i, got, tab[i].want);
	}

	static const struct { uint64_t hint; uint32_t pref; } bs[] = {
		{ 0, 4096 }, { 100, 512 }, { 512, 512 }, { 4096, 4096 }, { 1536 << 10, 1 << 20 },
		{ 3 * 65536, 131072 }, { 1ull << 30, 32u << 20 }, { 32u << 20, 32u << 20 },
	};
	for (size_t i = 0; i < sizeof(bs) / sizeof(bs[0]); i++) {
		nbd_export_block_sizes(&ex, bs[i].hint);
		CHECK(ex.min_block == 512 && ex.max_block == 32u << 20 && ex.pref_block == bs[i].pref,
		      "hint %" PRIu64 ": preferred %u", bs[i].hint, ex.pref_block);
		CHECK(nbd_export_check(&ex) == 0, "hint %" PRIu64 " valid", bs[i].hint);
	}
	struct nbd_export e = export_default();
	CHECK(nbd_export_check(&e) == 0, "default valid");
	e.size = (64u << 20) + 1;
	CHECK(nbd_export_check(&e) == -EINVAL, "size not a multiple of the minimum");
	e = export_default(), e.min_block = 131072;
	CHECK(nbd_export_check(&e) == -EINVAL, "minimum over 64 KiB");
	e = export_default(), e.pref_block = 256;
	CHECK(nbd_export_check(&e) == -EINVAL, "preferred under 512");
	e = export_default(), e.max_block = 1000;
	CHECK(nbd_export_check(&e) == -EINVAL, "maximum not a multiple of the minimum");
	e = export_default(), e.name = NULL;
	CHECK(nbd_export_check(&e) == -EINVAL, "no name");
}

/* What a BLOCK_STATUS request reserves: room for the extents it may get
 * (the reply's 8 bytes each and the engine's), one with REQ_ONE. */
static void test_block_status_buffer(void)
{
	uint32_t one = nbd_bs_buf_bytes(NBD_CMD_FLAG_REQ_ONE), all = nbd_bs_buf_bytes(0);

	CHECK(nbd_bs_max_extents(NBD_CMD_FLAG_REQ_ONE) == 1 &&
	      one >= 4 + 8 + sizeof(struct uraid_extent) && one <= 64,
	      "REQ_ONE reserves %u bytes", one);
	CHECK(nbd_bs_max_extents(0) == NBD_BS_MAX_EXTENTS &&
	      all >= 4 + (8 + sizeof(struct uraid_extent)) * NBD_BS_MAX_EXTENTS &&
	      nbd_bs_ext_at(NBD_BS_MAX_EXTENTS) % 16 == 0 && nbd_bs_ext_at(1) % 16 == 0 &&
	      nbd_bs_ext_at(1) >= 12, "%u extents: %u bytes", NBD_BS_MAX_EXTENTS, all);
}

static void test_requests(void)
{
	struct nbd_export ex = export_default();   /* 64 MiB, 512 .. 32 MiB */
	struct nbd_export ro = ex;
	ro.flags |= NBD_EXPORT_READ_ONLY;
	struct nbd_export small = ex;              /* max 1 MiB: writes up to 32 MiB are drained */
	small.max_block = 1u << 20;
	uint16_t tf = nbd_tflags(&ex, 0);
	uint16_t tf_sr = nbd_tflags(&ex, NBD_SESSION_STRUCTURED);
	uint16_t tf_ro = nbd_tflags(&ro, 0);
	uint16_t tf_bare = NBD_FLAG_HAS_FLAGS;     /* nothing advertised */
	const uint64_t S = 64u << 20, M = 32u << 20;
	static struct {
		const char *what;
		const struct nbd_export *ex;
		uint16_t tflags, flags, type;
		uint64_t offset;
		uint32_t length, magic;
		int verdict, error;
		uint32_t payload;
	} tab[] = {
		{ "read", NULL, 0, 0, NBD_CMD_READ, 0, 4096, 0, NBD_REQ_OK, 0, 0 },
		{ "read last block", NULL, 0, 0, NBD_CMD_READ, 0, 0, 0, NBD_REQ_OK, 0, 0 },
		{ "read max", NULL, 0, 0, NBD_CMD_READ, 0, 0, 0, NBD_REQ_OK, 0, 0 },
		{ "read over max", NULL, 0, 0, NBD_CMD_READ, 0, 0, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "read past end", NULL, 0, 0, NBD_CMD_READ, 0, 1024, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "read offset wraps", NULL, 0, 0, NBD_CMD_READ, ~511ull, 1024, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "read misaligned offset", NULL, 0, 0, NBD_CMD_READ, 100, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "read misaligned length", NULL, 0, 0, NBD_CMD_READ, 0, 100, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "read length 0", NULL, 0, 0, NBD_CMD_READ, 0, 0, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "read fua", NULL, 0, NBD_CMD_FLAG_FUA, NBD_CMD_READ, 0, 512, 0, NBD_REQ_OK, 0, 0 },
		{ "read df without SR", NULL, 0, NBD_CMD_FLAG_DF, NBD_CMD_READ, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "read df with SR", NULL, 1, NBD_CMD_FLAG_DF, NBD_CMD_READ, 0, 512, 0, NBD_REQ_OK, 0, 0 },
		{ "read no-hole", NULL, 0, NBD_CMD_FLAG_NO_HOLE, NBD_CMD_READ, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "read unknown flag", NULL, 0, 1u << 15, NBD_CMD_READ, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "write", NULL, 0, 0, NBD_CMD_WRITE, 512, 8192, 0, NBD_REQ_OK, 0, 8192 },
		{ "write fua", NULL, 0, NBD_CMD_FLAG_FUA, NBD_CMD_WRITE, 0, 512, 0, NBD_REQ_OK, 0, 512 },
		{ "write past end", NULL, 0, 0, NBD_CMD_WRITE, 0, 1024, 0, NBD_REQ_ERROR, -ENOSPC, 1024 },
		{ "write misaligned", NULL, 0, 0, NBD_CMD_WRITE, 1, 512, 0, NBD_REQ_ERROR, -EINVAL, 512 },
		{ "write over max: close", NULL, 0, 0, NBD_CMD_WRITE, 0, 0, 0, NBD_REQ_CLOSE, -EINVAL, 0 },
		{ "write over small max: drain", NULL, 5, 0, NBD_CMD_WRITE, 0, 2u << 20, 0, NBD_REQ_ERROR, -EINVAL, 2u << 20 },
		{ "write read-only", NULL, 2, 0, NBD_CMD_WRITE, 0, 512, 0, NBD_REQ_ERROR, -EPERM, 512 },
		{ "write fua on bare", NULL, 3, NBD_CMD_FLAG_FUA, NBD_CMD_WRITE, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 512 },
		{ "write df", NULL, 1, NBD_CMD_FLAG_DF, NBD_CMD_WRITE, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 512 },
		{ "flush", NULL, 0, 0, NBD_CMD_FLUSH, 0, 0, 0, NBD_REQ_OK, 0, 0 },
		{ "flush with range", NULL, 0, 0, NBD_CMD_FLUSH, 512, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "flush not advertised", NULL, 3, 0, NBD_CMD_FLUSH, 0, 0, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "flush read-only", NULL, 2, 0, NBD_CMD_FLUSH, 0, 0, 0, NBD_REQ_OK, 0, 0 },
		{ "trim", NULL, 0, 0, NBD_CMD_TRIM, 0, 1u << 20, 0, NBD_REQ_OK, 0, 0 },
		{ "trim whole export (no max)", NULL, 0, 0, NBD_CMD_TRIM, 0, 0, 0, NBD_REQ_OK, 0, 0 },
		{ "trim past end", NULL, 0, 0, NBD_CMD_TRIM, 0, 1024, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "trim read-only", NULL, 2, 0, NBD_CMD_TRIM, 0, 512, 0, NBD_REQ_ERROR, -EPERM, 0 },
		{ "trim not advertised", NULL, 3, 0, NBD_CMD_TRIM, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "zeroes", NULL, 0, NBD_CMD_FLAG_NO_HOLE | NBD_CMD_FLAG_FUA, NBD_CMD_WRITE_ZEROES, 0, 4096, 0, NBD_REQ_OK, 0, 0 },
		{ "zeroes over max", NULL, 0, 0, NBD_CMD_WRITE_ZEROES, 0, 0, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "fast zeroes over max", NULL, 0, NBD_CMD_FLAG_FAST_ZERO, NBD_CMD_WRITE_ZEROES, 0, 0, 0, NBD_REQ_OK, 0, 0 },
		{ "zeroes past end", NULL, 0, 0, NBD_CMD_WRITE_ZEROES, 0, 1024, 0, NBD_REQ_ERROR, -ENOSPC, 0 },
		{ "zeroes read-only", NULL, 2, 0, NBD_CMD_WRITE_ZEROES, 0, 512, 0, NBD_REQ_ERROR, -EPERM, 0 },
		{ "zeroes not advertised", NULL, 3, 0, NBD_CMD_WRITE_ZEROES, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "zeroes df", NULL, 1, NBD_CMD_FLAG_DF, NBD_CMD_WRITE_ZEROES, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "disc", NULL, 0, 0, NBD_CMD_DISC, 0, 0, 0, NBD_REQ_DISC, 0, 0 },
		{ "disc with junk", NULL, 0, 0xffff, NBD_CMD_DISC, 5, 7, 0, NBD_REQ_DISC, 0, 0 },
		{ "cache", NULL, 0, 0, NBD_CMD_CACHE, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "block status", NULL, 1, 0, NBD_CMD_BLOCK_STATUS, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		/* tflags 6: structured replies and base:allocation negotiated */
		{ "block status selected", NULL, 6, 0, NBD_CMD_BLOCK_STATUS, 0, 512, 0, NBD_REQ_OK, 0, 0 },
		{ "block status req-one", NULL, 6, NBD_CMD_FLAG_REQ_ONE, NBD_CMD_BLOCK_STATUS, 512, 4096, 0, NBD_REQ_OK, 0, 0 },
		{ "block status whole export (no max)", NULL, 6, 0, NBD_CMD_BLOCK_STATUS, 0, 64u << 20, 0, NBD_REQ_OK, 0, 0 },
		{ "block status past end", NULL, 6, 0, NBD_CMD_BLOCK_STATUS, 512, 64u << 20, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "block status fua", NULL, 6, NBD_CMD_FLAG_FUA, NBD_CMD_BLOCK_STATUS, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "block status df", NULL, 6, NBD_CMD_FLAG_DF, NBD_CMD_BLOCK_STATUS, 0, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "block status length 0", NULL, 6, 0, NBD_CMD_BLOCK_STATUS, 0, 0, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "block status misaligned", NULL, 6, 0, NBD_CMD_BLOCK_STATUS, 100, 512, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "block status offset wraps", NULL, 6, 0, NBD_CMD_BLOCK_STATUS, ~511ull, 1024, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "resize", NULL, 0, 0, NBD_CMD_RESIZE, 0, 0, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "unknown command", NULL, 0, 0, 0x1234, 0, 0, 0, NBD_REQ_ERROR, -EINVAL, 0 },
		{ "bad magic", NULL, 0, 0, NBD_CMD_READ, 0, 512, 0x25609514, NBD_REQ_CLOSE, -EPROTO, 0 },
		{ "old magic", NULL, 0, 0, NBD_CMD_WRITE, 0, 512, 0x12560953, NBD_REQ_CLOSE, -EPROTO, 0 },
	};
	/* the rows whose lengths depend on S and M */
	tab[1].offset = S - 512, tab[1].length = 512;
	tab[2].length = M;
	tab[3].length = M + 512;
	tab[4].offset = S - 512;
	tab[16].offset = S - 512;
	tab[18].length = M + 512;
	tab[28].length = (uint32_t)S;
	tab[29].offset = S - 512;
	tab[33].length = M + 512;
	tab[34].length = (uint32_t)S;
	tab[35].offset = S - 512;

	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++) {
		const struct nbd_export *e = tab[i].tflags == 2 ? &ro : tab[i].tflags == 5 ? &small : &ex;
		uint16_t t = tab[i].tflags == 1 || tab[i].tflags == 6 ? tf_sr :
			     tab[i].tflags == 2 ? tf_ro : tab[i].tflags == 3 ? tf_bare : tf;
		unsigned sess = tab[i].tflags == 1 ? NBD_SESSION_STRUCTURED :
				tab[i].tflags == 6 ? NBD_SESSION_STRUCTURED | NBD_SESSION_ALLOCATION : 0;
		struct bytes *h = &in;
		h->n = 0;
		put(h, tab[i].magic ? tab[i].magic : NBD_REQUEST_MAGIC, 4);
		put(h, tab[i].flags, 2);
		put(h, tab[i].type, 2);
		put(h, 0x0123456789abcdefull + i, 8);
		put(h, tab[i].offset, 8);
		put(h, tab[i].length, 4);
		struct nbd_request rq;
		int v = nbd_request_parse(h->b, e, t, sess, &rq);
		CHECK(v == tab[i].verdict && rq.error == tab[i].error &&
		      (v == NBD_REQ_CLOSE || rq.payload == tab[i].payload),
		      "%s: verdict %d error %d payload %u, want %d %d %u", tab[i].what, v, rq.error,
		      rq.payload, tab[i].verdict, tab[i].error, tab[i].payload);
		CHECK(rq.cookie == 0x0123456789abcdefull + i && rq.type == tab[i].type &&
		      rq.offset == tab[i].offset && rq.length == tab[i].length && rq.flags == tab[i].flags,
		      "%s: fields", tab[i].what);
	}
}

static void test_errno(void)
{
	static const struct { int err; uint32_t wire; } tab[] = {
		{ 0, 0 }, { -EPERM, NBD_EPERM }, { -EROFS, NBD_EPERM }, { -EACCES, NBD_EPERM },
		{ -EIO, NBD_EIO }, { -ENOMEM, NBD_ENOMEM }, { -EINVAL, NBD_EINVAL },
		{ -ENOSPC, NBD_ENOSPC }, { -EDQUOT, NBD_ENOSPC }, { -EFBIG, NBD_ENOSPC },
		{ -EOVERFLOW, NBD_EOVERFLOW }, { -ENOTSUP, NBD_ENOTSUP }, { -EOPNOTSUPP, NBD_ENOTSUP },
		{ -ESHUTDOWN, NBD_ESHUTDOWN }, { -ENODEV, NBD_EIO }, { -EBADMSG, NBD_EIO },
		{ -EPROTO, NBD_EIO }, { EINVAL, NBD_EINVAL }, { -4095, NBD_EIO },
	};
	for (size_t i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)
		CHECK(nbd_errno_to_wire(tab[i].err) == tab[i].wire, "errno %d -> %u, want %u",
		      tab[i].err, nbd_errno_to_wire(tab[i].err), tab[i].wire);
	/* the wire values are the spec's numbers, whatever this host's errno are */
	CHECK(NBD_EPERM == 1 && NBD_EIO == 5 && NBD_ENOMEM == 12 && NBD_EINVAL == 22 &&
	      NBD_ENOSPC == 28 && NBD_EOVERFLOW == 75 && NBD_ENOTSUP == 95 && NBD_ESHUTDOWN == 108,
	      "wire values");
}

static void test_replies(void)
{
	uint8_t b[512];
	const uint64_t ck = 0x1122334455667788ull;

	size_t n = nbd_simple_reply(b, ck, -ENOSPC);
	static const uint8_t simple[] = { 0x67, 0x44, 0x66, 0x98, 0, 0, 0, 28,
					  0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88 };
	CHECK(n == 16 && memcmp(b, simple, 16) == 0, "simple reply bytes");

	n = nbd_reply_read(b, sizeof(b), NBD_SESSION_STRUCTURED, ck, 4096, 512);
	CHECK(n == 28 && get(b, 4) == NBD_STRUCTURED_REPLY_MAGIC && get(b + 4, 2) == NBD_REPLY_FLAG_DONE &&
	      get(b + 6, 2) == NBD_REPLY_TYPE_OFFSET_DATA && get(b + 8, 8) == ck &&
	      get(b + 16, 4) == 520 && get(b + 20, 8) == 4096, "OFFSET_DATA chunk");
	n = nbd_reply_read(b, sizeof(b), 0, ck, 4096, 512);
	CHECK(n == 16 && get(b, 4) == NBD_SIMPLE_REPLY_MAGIC && get(b + 4, 4) == 0, "simple read");
	n = nbd_reply_read(b, sizeof(b), NBD_SESSION_STRUCTURED, ck, 0, 0);
	CHECK(n == 20 && get(b + 6, 2) == NBD_REPLY_TYPE_NONE && get(b + 4, 2) == 1 &&
	      get(b + 16, 4) == 0, "empty read: NONE chunk");
	CHECK(nbd_reply_read(b, 27, NBD_SESSION_STRUCTURED, ck, 0, 512) == 0, "cap");
	CHECK(nbd_chunk_data(b, ck, 0, 0, 0) == 0 && nbd_chunk_data(b, ck, 0, 0, UINT32_MAX - 7) == 0,
	      "OFFSET_DATA length limits");
	n = nbd_chunk_data(b, ck, 0, 512, 1024);
	CHECK(n == 28 && get(b + 4, 2) == 0 && get(b + 16, 4) == 1032, "non-final data chunk");

	n = nbd_chunk_none(b, ck);
	CHECK(n == 20 && get(b, 4) == NBD_STRUCTURED_REPLY_MAGIC && get(b + 4, 2) == 1 &&
	      get(b + 6, 2) == 0 && get(b + 8, 8) == ck && get(b + 16, 4) == 0, "NONE chunk");

	n = nbd_reply_error(b, sizeof(b), NBD_SESSION_STRUCTURED, ck, -EINVAL, "bad");
	CHECK(n == 20 + 6 + 3 && get(b + 4, 2) == 1 && get(b + 6, 2) == NBD_REPLY_TYPE_ERROR &&
	      get(b + 16, 4) == 9 && get(b + 20, 4) == NBD_EINVAL && get(b + 24, 2) == 3 &&
	      memcmp(b + 26, "bad", 3) == 0, "ERROR chunk");
	n = nbd_reply_error(b, sizeof(b), 0, ck, -EPERM, "ignored");
	CHECK(n == 16 && get(b + 4, 4) == NBD_EPERM, "simple error");
	n = nbd_reply_error(b, sizeof(b), 0, ck, 0, NULL);
	CHECK(n == 16 && get(b + 4, 4) == NBD_EIO, "error 0 becomes EIO");
	n = nbd_chunk_error(b, sizeof(b), ck, NBD_CHUNK_AT_OFFSET, -EIO, NULL, 1ull << 40);
	CHECK(n == 20 + 14 && get(b + 6, 2) == NBD_REPLY_TYPE_ERROR_OFFSET && get(b + 4, 2) == 0 &&
	      get(b + 16, 4) == 14 && get(b + 20, 4) == NBD_EIO && get(b + 24, 2) == 0 &&
	      get(b + 26, 8) == 1ull << 40, "ERROR_OFFSET chunk");
	char longmsg[1000];
	memset(longmsg, 'x', sizeof(longmsg) - 1);
	longmsg[sizeof(longmsg) - 1] = 0;
	n = nbd_chunk_error(b, sizeof(b), ck, NBD_REPLY_FLAG_DONE, -EIO, longmsg, 0);
	CHECK(n == 20 + 6 + NBD_MAX_ERRMSG && get(b + 24, 2) == NBD_MAX_ERRMSG, "message cut");
	CHECK(nbd_chunk_error(b, 29, ck, 0, -EIO, "four", 0) == 0 && nbd_chunk_error(b, 30, ck, 0, -EIO, "four", 0) == 30, "error cap");
}

/* limits.c's buffer memory: a connection that waited and then found room
 * on a retry that was not the wake itself (another kick, the wake posted
 * but not yet run) leaves the wait list, so status and later gives do not
 * count it as waiting. */
static void test_mem_wait(void)
{
	struct nbd_reactor nr;
	struct nbd_server s;
	struct nbd_conn a, b;

	memset(&nr, 0, sizeof(nr));
	memset(&s, 0, sizeof(s));
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	nr.s = &s;
	s.rs = &nr;
	s.nreactors = 1;
	s.conn_share = 1u << 20;
	s.shared_cap = 1u << 20;
	a.s = b.s = &s;
	CHECK(nbd_mem_take(&a, 2u << 20), "a: its share and all that is shared");
	CHECK(!nbd_mem_take(&b, 2u << 20), "b: no shared memory left");
	CHECK(b.mem_waiting && atomic_load(&s.mem_waiters) == 1 && nr.wait_head == &b,
	      "b waits");
	atomic_store(&nr.wake_posted, true);    /* a wake is on its way (not run here) */
	nbd_mem_give(&a, 1u << 20);
	CHECK(nbd_mem_take(&b, 2u << 20), "b: room after a gave back");
	CHECK(!b.mem_waiting && atomic_load(&s.mem_waiters) == 0 && !nr.wait_head && !nr.wait_tail,
	      "b still on the wait list after it got its memory (waiters %u)",
	      atomic_load(&s.mem_waiters));
	CHECK(atomic_load(&s.shared_used) == 1u << 20 && atomic_load(&nr.held_bytes) == 3u << 20,
	      "shared %llu, held %llu", (unsigned long long)atomic_load(&s.shared_used),
	      (unsigned long long)atomic_load(&nr.held_bytes));
}

/* ---- metadata contexts: bytes from the network, every length checked ---- */

/* A META_CONTEXT option: name, count (as given, maybe a lie), the queries. */
static void opt_meta(struct bytes *s, uint32_t o, const char *name, uint32_t count,
		     const char *const *q, unsigned nq, uint32_t extra)
{
	uint32_t len = 4 + (uint32_t)strlen(name) + 4 + extra;
	for (unsigned i = 0; i < nq; i++)
		len += 4 + (uint32_t)strlen(q[i]);
	put(s, NBD_OPTS_MAGIC, 8);
	put(s, o, 4);
	put(s, len, 4);
	put(s, strlen(name), 4);
	put_mem(s, name, strlen(name));
	put(s, count, 4);
	for (unsigned i = 0; i < nq; i++) {
		put(s, strlen(q[i]), 4);
		put_mem(s, q[i], strlen(q[i]));
	}
	for (uint32_t i = 0; i < extra; i++)
		put(s, 0xa5, 1);
}

static bool is_allocation_ctx(const struct rep *r, uint32_t id)
{
	return r->type == NBD_REP_META_CONTEXT && r->len == 4 + 15 && get(r->data, 4) == id &&
	       memcmp(r->data + 4, "base:allocation", 15) == 0;
}

static void test_meta_context(uint64_t seed)
{
	struct nbd_export ex = export_default();
	struct rep reps[64];
	static const char *const wild[] = { "base:" };
	static const char *const alloc[] = { "base:allocation" };
	static const char *const other[] = { "x-foo:bar", "base:nope", "qemu:dirty-bitmap:a" };
	static const char *const nons[] = { "base" };
	static const char *const colon0[] = { ":allocation" };
	uint64_t st0 = seed;
	static const char *many[300];     /* 5.7 KB: kept, answered once */
	for (unsigned i = 0; i < 300; i++)
		many[i] = "base:allocation";

	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	opt_meta(&in, NBD_OPT_LIST_META_CONTEXT, "uraid", 1, wild, 1, 0);          /* 1: ctx, ack */
	opt_meta(&in, NBD_OPT_LIST_META_CONTEXT, "", 3, other, 3, 0);              /* 2: ack */
	opt_meta(&in, NBD_OPT_LIST_META_CONTEXT, "", 300, many, 300, 0);           /* 3: once, ack */
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "nope", 1, alloc, 1, 0);           /* 4: unknown */
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "uraid", 1, NULL, 0, 0);           /* 5: no query bytes */
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "uraid", 0xffffffffu, alloc, 1, 0);/* 6: count lies */
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "uraid", 1, alloc, 1, 1);          /* 7: trailing byte */
	opt_meta(&in, NBD_OPT_LIST_META_CONTEXT, "uraid", 1, nons, 1, 0);          /* 8: no namespace */
	opt_meta(&in, NBD_OPT_LIST_META_CONTEXT, "uraid", 1, colon0, 1, 0);        /* 9: empty namespace */
	/* 10: a query length past the option */
	put(&in, NBD_OPTS_MAGIC, 8); put(&in, NBD_OPT_SET_META_CONTEXT, 4); put(&in, 12, 4);
	put(&in, 0, 4); put(&in, 1, 4); put(&in, 0xfffffff0u, 4);
	/* 11: a name length past the option */
	put(&in, NBD_OPTS_MAGIC, 8); put(&in, NBD_OPT_LIST_META_CONTEXT, 4); put(&in, 8, 4);
	put(&in, 0xfffffff9u, 4); put(&in, 0, 4);
	/* 12: shorter than a name length and a count */
	opt(&in, NBD_OPT_SET_META_CONTEXT, "\0\0\0\0\0\0\0", 7);
	/* 13: too long to keep */
	opt(&in, NBD_OPT_SET_META_CONTEXT, NULL, NBD_OPT_DATA_MAX + 1);
	in.n += NBD_OPT_DATA_MAX + 1;
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "", 1, wild, 1, 0);               /* 14: ignored: ack */
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "uraid", 2, other, 2, 0);         /* 15: ack */
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "uraid", 1, alloc, 1, 0);         /* 16: ctx 1, ack */
	opt_go(&in, NBD_OPT_GO, "uraid", 0, NULL);
	const struct run *r = transcript("meta contexts", &ex, &in, 0, seed);
	int n = parse_replies(r, reps, 64, 0);
	uint32_t want[] = { NBD_REP_ACK,
			    NBD_REP_META_CONTEXT, NBD_REP_ACK,      /* 1 */
			    NBD_REP_ACK,                            /* 2 */
			    NBD_REP_META_CONTEXT, NBD_REP_ACK,      /* 3 */
			    NBD_REP_ERR_UNKNOWN, NBD_REP_ERR_INVALID, NBD_REP_ERR_INVALID,
			    NBD_REP_ERR_INVALID, NBD_REP_ERR_INVALID, NBD_REP_ERR_INVALID,
			    NBD_REP_ERR_INVALID, NBD_REP_ERR_INVALID, NBD_REP_ERR_INVALID,
			    NBD_REP_ERR_TOO_BIG,                    /* 13 */
			    NBD_REP_ACK, NBD_REP_ACK,               /* 14, 15 */
			    NBD_REP_META_CONTEXT, NBD_REP_ACK,      /* 16 */
			    NBD_REP_INFO, NBD_REP_INFO, NBD_REP_ACK };
	int nwant = (int)(sizeof(want) / sizeof(want[0]));
	CHECK(n == nwant, "meta contexts: %d replies, want %d", n, nwant);
	for (int i = 0; i < n && i < nwant; i++)
		CHECK(reps[i].type == want[i], "meta contexts: reply %d type %x, want %x", i,
		      reps[i].type, want[i]);
	if (n == nwant) {
		CHECK(is_allocation_ctx(&reps[1], 0) && is_allocation_ctx(&reps[4], 0),
		      "listed context: id 0, base:allocation");
		CHECK(is_allocation_ctx(&reps[18], NBD_META_ID_ALLOCATION), "selected context id");
		for (int i = 6; i < 16; i++)
			CHECK(reps[i].len > 0, "error %d carries a message", i);
	}
	CHECK(r->status == NBD_HS_TRANSMISSION && (r->session & NBD_SESSION_ALLOCATION),
	      "base:allocation selected for transmission (session %x)", r->session);

	/* a later SET replaces the selection, even when it fails; STARTTLS or a
	   SET with no query forgets it; SET before structured replies: invalid */
	const char *const *qs[] = { alloc, alloc, alloc };
	for (int k = 0; k < 3; k++) {
		client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
		if (k != 2)
			opt(&in, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
		opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "", 1, qs[k], 1, 0);
		if (k == 0)
			opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "", 0, NULL, 0, 0);
		if (k == 1)
			opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "", 1, nons, 1, 0);
		opt_go(&in, NBD_OPT_GO, "", 0, NULL);
		r = transcript("meta context replaced", &ex, &in, 0, seed);
		CHECK(r->status == NBD_HS_TRANSMISSION && !(r->session & NBD_SESSION_ALLOCATION),
		      "case %d: base:allocation still selected (session %x)", k, r->session);
		n = parse_replies(r, reps, 64, 0);
		if (k == 2)
			CHECK(n > 0 && reps[0].type == NBD_REP_ERR_INVALID,
			      "SET before structured replies: %x", n > 0 ? reps[0].type : 0);
	}

	/* STARTTLS forgets the selection: it must be made again over TLS */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "", 1, alloc, 1, 0);
	opt(&in, NBD_OPT_STARTTLS, NULL, 0);
	CHECK(nbd_hs_init(&hs, &ex) == 0, "init");
	nbd_hs_set_tls(&hs, NBD_TLS_ON);
	tls_out.n = 0;
	feed(&in, 0, &tls_out, &st0);
	CHECK(hs.status == NBD_HS_STARTTLS && (hs.session & NBD_SESSION_ALLOCATION),
	      "before STARTTLS: status %d session %x", hs.status, hs.session);
	CHECK(nbd_hs_tls_started(&hs) == 0 && !(hs.session & NBD_SESSION_ALLOCATION),
	      "base:allocation survived STARTTLS");
	in.n = 0;
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "", 1, alloc, 1, 0);   /* no structured yet */
	opt(&in, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
	opt_meta(&in, NBD_OPT_SET_META_CONTEXT, "", 1, alloc, 1, 0);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	tls_out.n = 0;
	feed(&in, 0, &tls_out, &st0);
	n = replies_of(&tls_out, 0, reps, 64);
	CHECK(n == 7 && reps[0].type == NBD_REP_ERR_INVALID && reps[1].type == NBD_REP_ACK &&
	      is_allocation_ctx(&reps[2], NBD_META_ID_ALLOCATION) && reps[3].type == NBD_REP_ACK,
	      "over TLS: %d replies", n);
	CHECK(hs.status == NBD_HS_TRANSMISSION && (hs.session & NBD_SESSION_ALLOCATION),
	      "over TLS: selected again (session %x)", hs.session);

	/* random bytes, or a valid query changed, after a valid prefix: never a
	   crash, never a context for a malformed option (the fragmentation
	   modes must agree) */
	uint64_t st = seed;
	unsigned contexts = 0;
	for (int k = 0; k < 200; k++) {
		client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
		opt(&in, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
		/* odd k: random bytes; even k: a valid query for base:allocation,
		   as is, with bytes added, one byte changed or cut short */
		uint8_t body[64];
		uint32_t len;
		if (k & 1) {
			len = (uint32_t)(rng_next(&st) % 64);
			for (uint32_t i = 0; i < len; i++) {
				uint64_t v = rng_next(&st);
				/* mostly small numbers, so that lengths sometimes fit */
				body[i] = (v & 3) ? (v >> 8) % 24 : (uint8_t)(v >> 8);
			}
		} else {
			static const uint8_t valid[] = { 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 15,
				'b', 'a', 's', 'e', ':', 'a', 'l', 'l', 'o', 'c', 'a', 't', 'i', 'o', 'n' };
			len = sizeof(valid);
			memcpy(body, valid, len);
			uint64_t v = rng_next(&st);
			switch ((k >> 1) % 4) {
			case 1:
				for (uint32_t i = 0, add = 1 + v % 8; i < add; i++)
					body[len++] = (uint8_t)(rng_next(&st) >> 16);
				break;
			case 2:
				body[(v >> 8) % len] ^= (uint8_t)(1 + (v >> 16) % 255);
				break;
			case 3:
				len = (uint32_t)((v >> 8) % len);
				break;
			default:
				break;
			}
		}
		put(&in, NBD_OPTS_MAGIC, 8);
		put(&in, (k >> 1) & 1 ? NBD_OPT_SET_META_CONTEXT : NBD_OPT_LIST_META_CONTEXT, 4);
		put(&in, len, 4);
		for (uint32_t i = 0; i < len; i++)
			put(&in, body[i], 1);
		opt_go(&in, NBD_OPT_GO, "", 0, NULL);
		r = transcript("meta context random", &ex, &in, 0, seed + (uint64_t)k);
		n = parse_replies(r, reps, 64, 0);
		CHECK(r->status == NBD_HS_TRANSMISSION, "random %d: status %d", k, r->status);
		CHECK(n >= 2 && n <= 7, "random %d: %d replies", k, n);
		/* a context is only ever answered to an option that then
		   succeeds: META_CONTEXT replies end with that option's ACK */
		for (int i = 0; i < n; i++) {
			if (reps[i].type != NBD_REP_META_CONTEXT)
				continue;
			contexts++;
			int j = i + 1;
			while (j < n && reps[j].type == NBD_REP_META_CONTEXT &&
			       reps[j].opt == reps[i].opt)
				j++;
			CHECK(j < n && reps[j].type == NBD_REP_ACK && reps[j].opt == reps[i].opt,
			      "random %d: META_CONTEXT reply %d (option %u) not followed by its "
			      "ACK (%s)", k, i, reps[i].opt, j < n ? "another reply" : "none");
		}
	}
	/* the 25 valid queries left as they are at least */
	CHECK(contexts >= 25, "meta context random: %u contexts answered in 200 transcripts",
	      contexts);
}

/* ---- several exports (a pool's volumes) ---- */
/* Feed in whole to a handshake over table ex[n]; the replies after the
 * greeting go into reps (at most max); returns their count. */
static unsigned run_table(const struct nbd_export *ex, unsigned n, const struct bytes *feed,
			  struct bytes *out, struct rep *reps, unsigned max)
{
	const uint8_t *o;
	size_t pos = 0;

	CHECK(nbd_hs_init_table(&hs, ex, n) == 0, "init table");
	out->n = 0;
	while (pos < feed->n && hs.status == NBD_HS_NEGOTIATING) {
		size_t used = nbd_hs_input(&hs, feed->b + pos, feed->n - pos);
		pos += used;
		size_t k = nbd_hs_output(&hs, &o);
		put_mem(out, o, k);
		nbd_hs_sent(&hs, k);
		if (!used && !k)
			break;
	}
	size_t k = nbd_hs_output(&hs, &o);
	put_mem(out, o, k);
	nbd_hs_sent(&hs, k);
	unsigned nr = 0;
	for (size_t p = NBD_GREETING_BYTES; p + 20 <= out->n && nr < max; nr++) {
		CHECK(get(out->b + p, 8) == NBD_REP_MAGIC, "reply magic");
		reps[nr].type = (uint32_t)get(out->b + p + 12, 4);
		reps[nr].len = (uint32_t)get(out->b + p + 16, 4);
		reps[nr].data = out->b + p + 20;
		p += 20 + reps[nr].len;
	}
	return nr;
}

static void test_export_table(void)
{
	static struct bytes out;
	struct rep r[16];
	struct nbd_export ex[3];
	const char *names[3] = { "vm", "scratch", "backup" };
	for (unsigned i = 0; i < 3; i++) {
		ex[i] = (struct nbd_export){ .name = names[i], .size = (i + 1) << 20,
					     .flags = NBD_EXPORT_FLUSH };
		nbd_export_block_sizes(&ex[i], 0);
	}
	/* LIST: every export, then ACK */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_LIST, NULL, 0);
	unsigned nr = run_table(ex, 3, &in, &out, r, 16);
	CHECK(nr == 4, "LIST of 3 exports: 3 SERVER replies and ACK (got %u)", nr);
	for (unsigned i = 0; i < 3 && i < nr; i++) {
		CHECK(r[i].type == NBD_REP_SERVER, "reply %u is SERVER", i);
		CHECK(get(r[i].data, 4) == strlen(names[i]) &&
		      !memcmp(r[i].data + 4, names[i], strlen(names[i])), "export %u's name", i);
	}
	CHECK(nr == 4 && r[3].type == NBD_REP_ACK, "LIST ends with ACK");
	/* INFO of the second, then GO of the third: sizes and the choice */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_INFO, "scratch", 0, NULL);
	opt_go(&in, NBD_OPT_GO, "backup", 0, NULL);
	nr = run_table(ex, 3, &in, &out, r, 16);
	CHECK(nr == 6, "INFO and GO: INFO EXPORT, BLOCK_SIZE, ACK each (got %u)", nr);
	CHECK(nr >= 1 && r[0].type == NBD_REP_INFO && get(r[0].data + 2, 8) == 2u << 20,
	      "INFO scratch: its size");
	CHECK(nr >= 4 && r[3].type == NBD_REP_INFO && get(r[3].data + 2, 8) == 3u << 20,
	      "GO backup: its size");
	CHECK(hs.status == NBD_HS_TRANSMISSION && hs.chosen == 2 && !strcmp(hs.name, "backup"),
	      "GO chose export 2");
	/* unknown and default names: ERR_UNKNOWN naming the exports */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_GO, "nope", 0, NULL);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	nr = run_table(ex, 3, &in, &out, r, 16);
	CHECK(nr == 2 && r[0].type == NBD_REP_ERR_UNKNOWN && r[1].type == NBD_REP_ERR_UNKNOWN,
	      "unknown and default names refused");
	CHECK(nr >= 1 && r[0].len < 300 &&
	      !memcmp(r[0].data, "no export 'nope'; the exports: vm, scratch, backup", r[0].len),
	      "the message names the exports (%.*s)", nr ? (int)r[0].len : 0,
	      nr ? (const char *)r[0].data : "");
	CHECK(hs.status == NBD_HS_NEGOTIATING, "still negotiating");
	/* one export: "" picks it */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_GO, "", 0, NULL);
	run_table(&ex[1], 1, &in, &out, r, 16);
	CHECK(hs.status == NBD_HS_TRANSMISSION && hs.chosen == 0, "the default name, one export");
	/* tables refused: a duplicate name, "" among several, too many */
	struct nbd_export dup[2] = { ex[0], ex[0] };
	CHECK(nbd_exports_check(dup, 2) == -EINVAL, "duplicate names refused");
	dup[1].name = "";
	CHECK(nbd_exports_check(dup, 2) == -EINVAL, "an empty name among several refused");
	CHECK(nbd_exports_check(ex, 0) == -EINVAL, "no export refused");
	CHECK(nbd_exports_check(ex, 3) == 0, "the table passes");

	/* a meta context counts only for the export it named (proto.md): SET
	   for vm, then GO backup: no base:allocation; SET and GO of backup: it */
	static const char *const alloc[] = { "base:allocation" };
	for (int same = 0; same < 2; same++) {
		client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
		opt(&in, NBD_OPT_STRUCTURED_REPLY, NULL, 0);
		opt_meta(&in, NBD_OPT_SET_META_CONTEXT, same ? "backup" : "vm", 1, alloc, 1, 0);
		opt_go(&in, NBD_OPT_GO, "backup", 0, NULL);
		run_table(ex, 3, &in, &out, r, 16);
		CHECK(hs.status == NBD_HS_TRANSMISSION && hs.chosen == 2 &&
		      !!(hs.session & NBD_SESSION_ALLOCATION) == same,
		      "SET_META_CONTEXT for %s, GO backup: allocation %s (session %x)",
		      same ? "backup" : "vm", same ? "on" : "off", hs.session);
	}
}

/* Bounds of an export table and of the messages naming its exports. */
static void test_export_table_limits(void)
{
	static struct bytes out;
	static struct nbd_export big[NBD_MAX_EXPORTS + 1];
	static char names[NBD_MAX_EXPORTS + 1][48];
	static char desc[NBD_MAX_STRING + 1], longname[NBD_MAX_STRING + 1];
	struct rep r[16];

	for (unsigned i = 0; i <= NBD_MAX_EXPORTS; i++) {
		snprintf(names[i], sizeof(names[i]), "volume-%03u-with-a-rather-long-name-xx", i);
		big[i] = (struct nbd_export){ .name = names[i], .size = 1 << 20 };
		nbd_export_block_sizes(&big[i], 0);
	}
	CHECK(nbd_exports_check(big, NBD_MAX_EXPORTS) == 0, "NBD_MAX_EXPORTS exports pass");
	CHECK(nbd_exports_check(big, NBD_MAX_EXPORTS + 1) == -EINVAL,
	      "NBD_MAX_EXPORTS + 1 exports refused");

	/* an unknown name among many long names: the message cut with " ..." */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_GO, "nope", 0, NULL);
	unsigned nr = run_table(big, NBD_MAX_EXPORTS, &in, &out, r, 16);
	CHECK(nr == 1 && r[0].type == NBD_REP_ERR_UNKNOWN && r[0].len <= NBD_MAX_ERRMSG &&
	      r[0].len > 4 && !memcmp(r[0].data + r[0].len - 4, " ...", 4) &&
	      !memcmp(r[0].data, "no export 'nope'; the exports: volume-000-", 42),
	      "many exports: the message cut with ' ...' (%.*s)", nr ? (int)r[0].len : 0,
	      nr ? (const char *)r[0].data : "");

	/* control bytes of a name from the network: '?' in the message */
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_GO, "a\001b\nc\177", 0, NULL);
	nr = run_table(big, 2, &in, &out, r, 16);
	static const char ctl_msg[] = "no export 'a?b?c?'; the exports: ";
	CHECK(nr == 1 && r[0].type == NBD_REP_ERR_UNKNOWN && r[0].len > sizeof(ctl_msg) - 1 &&
	      !memcmp(r[0].data, ctl_msg, sizeof(ctl_msg) - 1),
	      "control bytes replaced by '?' (%.*s)", nr ? (int)r[0].len : 0,
	      nr ? (const char *)r[0].data : "");
	for (uint32_t i = 0; nr == 1 && i < r[0].len; i++)
		CHECK(r[0].data[i] >= 0x20 && r[0].data[i] != 0x7f, "byte %u of the message", i);

	/* a 4096-byte unknown name: 64 of its bytes in the message */
	memset(longname, 'x', NBD_MAX_STRING);
	longname[NBD_MAX_STRING] = 0;
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt_go(&in, NBD_OPT_GO, longname, 0, NULL);
	nr = run_table(big, 2, &in, &out, r, 16);
	char want[128];
	int wn = snprintf(want, sizeof(want), "no export '%.64s'; the exports: ", longname);
	CHECK(nr == 1 && r[0].type == NBD_REP_ERR_UNKNOWN && r[0].len > (uint32_t)wn &&
	      !memcmp(r[0].data, want, (size_t)wn), "a 4096-byte name cut at 64 bytes");

	/* LIST's answer must fit one reply's room: two exports with 4096-byte
	   descriptions pass and are listed whole, a third is refused */
	memset(desc, 'd', NBD_MAX_STRING);
	desc[NBD_MAX_STRING] = 0;
	struct nbd_export wide[3];
	for (unsigned i = 0; i < 3; i++) {
		wide[i] = (struct nbd_export){ .name = names[i], .description = desc,
					       .size = 1 << 20 };
		nbd_export_block_sizes(&wide[i], 0);
	}
	CHECK(nbd_exports_check(wide, 3) == -EINVAL, "a LIST answer over NBD_HS_REPLY_MAX refused");
	CHECK(nbd_exports_check(wide, 2) == 0, "a LIST answer within NBD_HS_REPLY_MAX passes");
	client_start(&in, NBD_FLAG_C_FIXED_NEWSTYLE);
	opt(&in, NBD_OPT_LIST, NULL, 0);
	nr = run_table(wide, 2, &in, &out, r, 16);
	size_t dlen = 4 + strlen(names[0]) + NBD_MAX_STRING;
	CHECK(nr == 3 && r[0].type == NBD_REP_SERVER && r[0].len == dlen &&
	      r[1].type == NBD_REP_SERVER && r[1].len == dlen && r[2].type == NBD_REP_ACK &&
	      r[1].data[dlen - 1] == 'd', "LIST: both exports whole, then ACK (%u replies)", nr);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x6e6264;

	printf("test_nbd_proto: seed 0x%" PRIx64 "\n", seed);
	test_greeting_and_export_name(seed);
	test_info_go(seed);
	test_other_options(seed);
	test_meta_context(seed);
	test_tls(seed);
	test_malformed(seed);
	test_export_flags();
	test_requests();
	test_block_status_buffer();
	test_errno();
	test_replies();
	test_mem_wait();
	test_export_table();
	test_export_table_limits();
	if (failures)
		printf("test_nbd_proto: %d failures (seed 0x%" PRIx64 ")\n", failures, seed);
	else
		printf("test_nbd_proto: all passed\n");
	return failures ? 1 : 0;
}
