// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the NBD parsers that read a client's bytes: the handshake
 * state machine (options) and the transmission request parser. Properties
 * besides "no crash, no sanitizer report":
 *   - the state machine consumes no more than it is given, and when it stops
 *     short while negotiating it has output waiting (so a server never stalls);
 *   - what it sends is well formed: the greeting, then whole option replies
 *     with the reply magic, known types, INFO payloads of the spec's lengths
 *     and the export's size; EXPORT_NAME's answer is 10 or 134 bytes;
 *   - a chosen export is the canonical or default name, with the flags
 *     nbd_tflags gives for the negotiated session;
 *   - a meta context reply names base:allocation (id 0 when listing), and
 *     the session selects it only with structured replies;
 *   - a request accepted for execution lies inside the export, is aligned,
 *     within the maximum and uses only advertised commands and flags
 *     (BLOCK_STATUS only with base:allocation selected, REQ_ONE its only
 *     flag); a refused one carries EINVAL, EPERM or ENOSPC and a payload it
 *     may drain.
 *
 * Input: 3 configuration bytes (export flags, fragmentation and shutdown,
 * size), then the client's byte stream (handshake, then requests).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "nbd/proto.h"
#include "fuzz.h"

#define MAX_INPUT 16384

static uint64_t be(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* One drained block of handshake output: the greeting first, then replies. */
static void check_output(const struct nbd_export *ex, const uint8_t *o, size_t n, int *first,
			 const struct nbd_handshake *hs)
{
	if (*first) {
		if (n < NBD_GREETING_BYTES || be(o, 8) != NBD_MAGIC || be(o + 8, 8) != NBD_OPTS_MAGIC ||
		    be(o + 16, 2) != (NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES))
			abort();
		o += NBD_GREETING_BYTES, n -= NBD_GREETING_BYTES;
		*first = 0;
	}
	while (n) {
		if (n == 10 || n == 134) {   /* NBD_OPT_EXPORT_NAME's answer ends the handshake */
			if (hs->status != NBD_HS_TRANSMISSION || be(o, 8) != ex->size ||
			    be(o + 8, 2) != hs->tflags)
				abort();
			for (size_t i = 10; i < n; i++)
				if (o[i])
					abort();
			return;
		}
		if (n < NBD_REP_HEADER_BYTES || be(o, 8) != NBD_REP_MAGIC)
			abort();
		uint32_t type = (uint32_t)be(o + 12, 4), len = (uint32_t)be(o + 16, 4);
		const uint8_t *d = o + NBD_REP_HEADER_BYTES;
		if (len > n - NBD_REP_HEADER_BYTES)
			abort();
		if (type == NBD_REP_ACK && len)
			abort();
		if (type == NBD_REP_INFO) {
			uint16_t info = len >= 2 ? (uint16_t)be(d, 2) : 0xffff;
			if (info == NBD_INFO_EXPORT && (len != 12 || be(d + 2, 8) != ex->size))
				abort();
			if (info == NBD_INFO_BLOCK_SIZE && (len != 14 || be(d + 2, 4) != ex->min_block ||
							    be(d + 10, 4) != ex->max_block))
				abort();
			if (info > NBD_INFO_BLOCK_SIZE)
				abort();
		} else if (type == NBD_REP_SERVER) {
			if (len < 4 || be(d, 4) != strlen(ex->name))
				abort();
		} else if (type == NBD_REP_META_CONTEXT) {
			if (len != 4 + 15 || memcmp(d + 4, NBD_META_BASE_ALLOCATION, 15) != 0 ||
			    (be(o + 8, 4) == NBD_OPT_LIST_META_CONTEXT ? be(d, 4) != 0
			     : be(d, 4) != NBD_META_ID_ALLOCATION))
				abort();
		} else if (type & NBD_REP_FLAG_ERROR) {
			if (type > NBD_REP_ERR_TOO_BIG || len > NBD_MAX_ERRMSG)
				abort();
		} else if (type != NBD_REP_ACK) {
			abort();
		}
		o += NBD_REP_HEADER_BYTES + len, n -= NBD_REP_HEADER_BYTES + len;
	}
}

static void check_request(const struct nbd_export *ex, uint16_t tf, const struct nbd_request *rq,
			  int v, unsigned session)
{
	static uint8_t reply[NBD_CHUNK_HEADER_BYTES + 6 + NBD_MAX_ERRMSG];

	if (v == NBD_REQ_OK) {
		int range = rq->type != NBD_CMD_FLUSH;
		if (rq->type != NBD_CMD_READ && rq->type != NBD_CMD_WRITE && rq->type != NBD_CMD_FLUSH &&
		    rq->type != NBD_CMD_TRIM && rq->type != NBD_CMD_WRITE_ZEROES &&
		    rq->type != NBD_CMD_BLOCK_STATUS)
			abort();
		if (rq->type == NBD_CMD_BLOCK_STATUS &&
		    (!(session & NBD_SESSION_ALLOCATION) || !(session & NBD_SESSION_STRUCTURED) ||
		     (rq->flags & ~NBD_CMD_FLAG_REQ_ONE)))
			abort();
		if (range && (rq->length == 0 || rq->offset > ex->size ||
			      rq->length > ex->size - rq->offset ||
			      (rq->offset | rq->length) % ex->min_block))
			abort();
		if ((rq->type == NBD_CMD_READ || rq->type == NBD_CMD_WRITE) && rq->length > ex->max_block)
			abort();
		if ((tf & NBD_FLAG_READ_ONLY) && rq->type != NBD_CMD_READ && rq->type != NBD_CMD_FLUSH &&
		    rq->type != NBD_CMD_BLOCK_STATUS)
			abort();
		if ((rq->flags & NBD_CMD_FLAG_FUA) && !(tf & NBD_FLAG_SEND_FUA))
			abort();
		if ((rq->flags & NBD_CMD_FLAG_DF) && !(tf & NBD_FLAG_SEND_DF))
			abort();
		if (rq->payload != (rq->type == NBD_CMD_WRITE ? rq->length : 0))
			abort();
		if (rq->type == NBD_CMD_READ &&
		    nbd_reply_read(reply, sizeof(reply), session, rq->cookie, rq->offset, rq->length) == 0)
			abort();
	} else if (v == NBD_REQ_ERROR) {
		if (rq->error != -EINVAL && rq->error != -EPERM && rq->error != -ENOSPC)
			abort();
		if (rq->payload > NBD_DRAIN_MAX)
			abort();
		size_t n = nbd_reply_error(reply, sizeof(reply), session, rq->cookie, rq->error, "no");
		if (n == 0 || be(reply + ((session & NBD_SESSION_STRUCTURED) ? 20 : 4), 4) !=
			      nbd_errno_to_wire(rq->error))
			abort();
	} else if (v != NBD_REQ_DISC && v != NBD_REQ_CLOSE) {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct nbd_handshake hs;   /* static: large; the target is single-threaded */
	struct nbd_export ex = { .name = "uraid", .description = (data && size && data[0] & 1) ? "d" : NULL };

	if (size < 3)
		return 0;
	ex.flags = data[0] >> 1 | (unsigned)(data[1] & 1) << 7;
	ex.size = (uint64_t)(1 + data[2] % 64) << 16;
	nbd_export_block_sizes(&ex, (uint64_t)1 << (data[1] >> 3));
	if (nbd_hs_init(&hs, &ex) != 0)
		abort();
	if (data[1] & 2)
		nbd_hs_shutdown(&hs);
	unsigned tls = (data[2] >> 6) % 3;     /* enum nbd_tls_mode */
	nbd_hs_set_tls(&hs, tls);
	unsigned frag = 1 + ((data[1] >> 2) & 1) * 7 + (data[1] >> 5);   /* 1 .. 15 bytes */
	const uint8_t *p = data + 3;
	size_t left = size - 3;
	int first = 1;

	while (hs.status == NBD_HS_NEGOTIATING) {
		const uint8_t *o;
		size_t give = left < frag ? left : frag;
		size_t used = nbd_hs_input(&hs, p, give);
		if (used > give)
			abort();
		size_t n = nbd_hs_output(&hs, &o);
		if (used < give && hs.status == NBD_HS_NEGOTIATING && n == 0)
			abort();
		check_output(&ex, o, n, &first, &hs);
		nbd_hs_sent(&hs, n);
		p += used, left -= used;
		if (hs.status == NBD_HS_STARTTLS) {
			/* acked only when TLS is offered and not up yet; then the rest
			   of the input plays the options sent over TLS */
			if (tls == NBD_TLS_OFF || hs.tls_active || nbd_hs_tls_started(&hs) != 0 ||
			    (hs.session & NBD_SESSION_STRUCTURED))
				abort();
			continue;
		}
		if (left == 0 || (used == 0 && n == 0))
			break;
		frag = frag * 5 % 17 + 1;
	}
	if (hs.status != NBD_HS_TRANSMISSION)
		return 0;
	if (tls == NBD_TLS_REQUIRE && !hs.tls_active)
		abort();        /* transmission without TLS when it is required */
	if ((hs.session & NBD_SESSION_ALLOCATION) && !(hs.session & NBD_SESSION_STRUCTURED))
		abort();
	if (hs.tflags != nbd_tflags(&ex, hs.session) || hs.name_len > NBD_MAX_STRING ||
	    (hs.name_len && strcmp(hs.name, ex.name) != 0))
		abort();

	while (left >= NBD_REQUEST_BYTES) {
		struct nbd_request rq;
		int v = nbd_request_parse(p, &ex, hs.tflags, hs.session, &rq);
		check_request(&ex, hs.tflags, &rq, v, hs.session);
		if (v == NBD_REQ_DISC || v == NBD_REQ_CLOSE)
			break;
		p += NBD_REQUEST_BYTES, left -= NBD_REQUEST_BYTES;
		size_t skip = rq.payload < left ? rq.payload : left;
		p += skip, left -= skip;
	}
	return 0;
}

/* ---- seeds for the standalone driver ---- */
static const uint32_t values32[] = { 0, 0xffffffffu, 0x80000000u, 512, 4096, 1u << 25,
				     (1u << 25) + 512, 0x25609513u, 0x49484156u };

const struct fuzz_target fuzz_target = {
	.name = "fuzz_nbd", .seeds = 7, .max_input = MAX_INPUT, .hot_bytes = 0,
	.iterations = 200000, .values32 = values32,
	.nvalues32 = sizeof(values32) / sizeof(values32[0]),
};

struct w {
	uint8_t *b;
	size_t n, cap;
};

static void put(struct w *w, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0 && w->n < w->cap; i--)
		w->b[w->n++] = (uint8_t)(v >> (8 * i));
}

static void opt(struct w *w, uint32_t o, const char *d, uint32_t len)
{
	put(w, NBD_OPTS_MAGIC, 8);
	put(w, o, 4);
	put(w, len, 4);
	for (uint32_t i = 0; i < len; i++)
		put(w, (uint8_t)d[i], 1);
}

static void go(struct w *w, uint32_t o, const char *name, int info)
{
	uint32_t nl = (uint32_t)strlen(name);
	put(w, NBD_OPTS_MAGIC, 8);
	put(w, o, 4);
	put(w, 4 + nl + 2 + (info ? 6 : 0), 4);
	put(w, nl, 4);
	for (uint32_t i = 0; i < nl; i++)
		put(w, (uint8_t)name[i], 1);
	put(w, info ? 3 : 0, 2);
	if (info) {
		put(w, NBD_INFO_BLOCK_SIZE, 2);
		put(w, NBD_INFO_NAME, 2);
		put(w, NBD_INFO_DESCRIPTION, 2);
	}
}

static void req(struct w *w, uint16_t flags, uint16_t type, uint64_t off, uint32_t len)
{
	put(w, NBD_REQUEST_MAGIC, 4);
	put(w, flags, 2);
	put(w, type, 2);
	put(w, 0x1000 + w->n, 8);
	put(w, off, 8);
	put(w, len, 4);
	if (type == NBD_CMD_WRITE)
		for (uint32_t i = 0; i < len; i++)
			put(w, (uint8_t)i, 1);
}

size_t fuzz_seed(unsigned kind, uint8_t *buf, size_t cap)
{
	struct w w = { buf, 0, cap };
	/* config: export flags (all write features), fragmentation, 1 MiB */
	put(&w, kind == 3 ? 0x03 : 0x7c, 1);   /* bit 0: description; ex.flags = byte >> 1 */
	put(&w, (uint8_t)(kind << 5 | 4 | 12 << 3), 1);
	put(&w, 15, 1);
	put(&w, kind == 5 ? 0 : NBD_FLAG_C_FIXED_NEWSTYLE | (kind & 1) * NBD_FLAG_C_NO_ZEROES, 4);
	switch (kind) {
	case 0:
		opt(&w, NBD_OPT_EXPORT_NAME, "", 0);
		break;
	case 1:
		opt(&w, NBD_OPT_STRUCTURED_REPLY, "", 0);
		go(&w, NBD_OPT_INFO, "", 1);
		go(&w, NBD_OPT_GO, "uraid", 1);
		break;
	case 2:
		opt(&w, NBD_OPT_LIST, "", 0);
		opt(&w, 42, "abcdefgh", 8);
		opt(&w, NBD_OPT_STARTTLS, "", 0);
		opt(&w, NBD_OPT_SET_META_CONTEXT, "\0\0\0\0\0\0\0\0", 8);
		go(&w, NBD_OPT_GO, "nope", 1);
		opt(&w, NBD_OPT_ABORT, "", 0);
		break;
	case 3:
		go(&w, NBD_OPT_GO, "uraid", 0);
		break;
	case 6:
		/* meta contexts: listed, selected, then BLOCK_STATUS requests */
		opt(&w, NBD_OPT_STRUCTURED_REPLY, "", 0);
		opt(&w, NBD_OPT_LIST_META_CONTEXT, "\0\0\0\0\0\0\0\1\0\0\0\5base:", 17);
		opt(&w, NBD_OPT_SET_META_CONTEXT,
		    "\0\0\0\5uraid\0\0\0\1\0\0\0\x0f" NBD_META_BASE_ALLOCATION, 32);
		go(&w, NBD_OPT_GO, "", 1);
		req(&w, 0, NBD_CMD_BLOCK_STATUS, 0, 1 << 20);
		req(&w, NBD_CMD_FLAG_REQ_ONE, NBD_CMD_BLOCK_STATUS, 4096, 512);
		break;
	case 4:
		put(&w, NBD_OPTS_MAGIC, 8);   /* malformed GO, then a good one */
		put(&w, NBD_OPT_GO, 4);
		put(&w, 6, 4);
		put(&w, 7, 4);
		put(&w, 0, 2);
		opt(&w, NBD_OPT_STRUCTURED_REPLY, "", 0);
		go(&w, NBD_OPT_GO, "", 1);
		break;
	default:
		opt(&w, NBD_OPT_EXPORT_NAME, "uraid", 5);
		break;
	}
	req(&w, 0, NBD_CMD_READ, 4096, 4096);
	req(&w, NBD_CMD_FLAG_FUA, NBD_CMD_WRITE, 512, 1024);
	req(&w, kind == 1 ? NBD_CMD_FLAG_DF : 0, NBD_CMD_READ, (1 << 20) - 512, 512);
	req(&w, NBD_CMD_FLAG_NO_HOLE | NBD_CMD_FLAG_FAST_ZERO, NBD_CMD_WRITE_ZEROES, 0, 1 << 20);
	req(&w, 0, NBD_CMD_TRIM, 8192, 65536);
	req(&w, 0, NBD_CMD_WRITE, 100, 3);
	req(&w, 0, NBD_CMD_FLUSH, 0, 0);
	req(&w, 0, NBD_CMD_DISC, 0, 0);
	return w.n;
}
