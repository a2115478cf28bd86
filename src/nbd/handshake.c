// SPDX-License-Identifier: MIT
/*
 * NBD fixed newstyle handshake, server side, as a state machine fed with
 * whatever bytes the socket gave (any fragmentation). It never allocates: an
 * option's payload is kept only up to NBD_OPT_DATA_MAX bytes, longer ones are
 * counted off and refused, and an option longer than NBD_OPT_SKIP_MAX ends
 * the session.
 *
 * What doc/proto.md asks, and what uraid answers:
 *   client flags other than C_FIXED_NEWSTYLE/C_NO_ZEROES -> close (MUST)
 *   a client without C_FIXED_NEWSTYLE may only send EXPORT_NAME (it could not
 *   parse a reply); anything else closes
 *   EXPORT_NAME: size, flags and 124 zeroes (none with C_NO_ZEROES); an
 *     unknown name cannot be refused with an error: close (MUST terminate)
 *   ABORT: ACK (any data ignored), then the caller closes
 *   LIST: one NBD_REP_SERVER (name, then the description) and ACK; data ->
 *     ERR_INVALID; NBD_EXPORT_NO_LIST -> ERR_POLICY
 *   INFO/GO: NBD_INFO_EXPORT and NBD_INFO_BLOCK_SIZE always, NAME and
 *     DESCRIPTION when asked for; malformed -> ERR_INVALID, unknown export ->
 *     ERR_UNKNOWN, too long to keep -> ERR_TOO_BIG; GO's ACK enters
 *     transmission with no padding
 *   STRUCTURED_REPLY: ACK (data -> ERR_INVALID)
 *   LIST_META_CONTEXT / SET_META_CONTEXT: export name, query count, queries,
 *     every length checked against the option's: anything that runs past
 *     it, bytes left after the last query, a query without a namespace
 *     ("ns:") -> ERR_INVALID; too long to keep -> ERR_TOO_BIG; unknown
 *     export -> ERR_UNKNOWN. The one context is base:allocation, answered
 *     once per option however often it is asked for: LIST with no query,
 *     "base:" or "base:allocation" lists it (id 0); SET with
 *     "base:allocation" selects it (id NBD_META_ID_ALLOCATION), other
 *     queries are ignored. SET needs structured replies first
 *     (ERR_INVALID) and forgets the earlier selection even when it fails;
 *     STARTTLS forgets it too
 *   STARTTLS: data -> ERR_INVALID; TLS off -> ERR_POLICY; TLS already up ->
 *     ERR_INVALID; else ACK, and the caller switches to TLS (status
 *     NBD_HS_STARTTLS) before anything more is read; structured replies
 *     negotiated before it are forgotten
 *   TLS required and not up: every option but STARTTLS and ABORT ->
 *     ERR_TLS_REQD (INFO and GO included); EXPORT_NAME cannot be refused:
 *     close. NBD_REP_ERR_TLS_REQD is never sent once TLS is up.
 *   a client refused (too many connections): everything but ABORT and
 *     STARTTLS gets ERR_POLICY with the reason, EXPORT_NAME closes; the
 *     spec's way to tell a client it is unwelcome. STARTTLS is answered as
 *     for anyone (ACK when TLS is on or required), so a client that insists
 *     on TLS hears the reason over TLS instead of taking a refused STARTTLS
 *     for a server without TLS. The cost is bounded by the caller: at most
 *     max_refusing such clients at a time, each within the handshake
 *     deadline.
 *   every other option (extended headers, ...): ERR_UNSUP;
 *   while shutting down everything but ABORT: ERR_SHUTDOWN
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nbd/proto.h"
#include "nbd/wire.h"

enum { ST_FLAGS, ST_OPT_HDR, ST_OPT_DATA, ST_OPT_SKIP, ST_END };

#define KNOWN_CLIENT_FLAGS (NBD_FLAG_C_FIXED_NEWSTYLE | NBD_FLAG_C_NO_ZEROES)

static void fail(struct nbd_handshake *hs, const char *why)
{
	hs->status = NBD_HS_FAILED;
	hs->why = why;
	hs->stage = ST_END;
}

static size_t out_free(const struct nbd_handshake *hs)
{
	return NBD_HS_OUT_BYTES - (hs->out_tail - hs->out_head);
}

/* Room for n more output bytes (the caller checked out_free before the option). */
static uint8_t *out_reserve(struct nbd_handshake *hs, size_t n)
{
	if (NBD_HS_OUT_BYTES - hs->out_tail < n) {
		memmove(hs->out, hs->out + hs->out_head, hs->out_tail - hs->out_head);
		hs->out_tail -= hs->out_head;
		hs->out_head = 0;
	}
	if (NBD_HS_OUT_BYTES - hs->out_tail < n)
		return NULL;
	uint8_t *p = hs->out + hs->out_tail;
	hs->out_tail += n;
	return p;
}

/* An option reply with len bytes of data; returns where the data goes. */
static uint8_t *reply(struct nbd_handshake *hs, uint32_t type, uint32_t len)
{
	uint8_t *p = out_reserve(hs, NBD_REP_HEADER_BYTES + (size_t)len);

	if (!p) {
		fail(hs, "option reply does not fit the output buffer");
		return NULL;
	}
	nbd_put64(p, NBD_REP_MAGIC);
	nbd_put32(p + 8, hs->opt);
	nbd_put32(p + 12, type);
	nbd_put32(p + 16, len);
	return p + NBD_REP_HEADER_BYTES;
}

static void reply_ack(struct nbd_handshake *hs)
{
	reply(hs, NBD_REP_ACK, 0);
}

static void reply_error(struct nbd_handshake *hs, uint32_t type, const char *msg)
{
	size_t n = strnlen(msg, NBD_MAX_ERRMSG);
	uint8_t *p = reply(hs, type, (uint32_t)n);

	if (p)
		memcpy(p, msg, n);
}

static void reply_info_string(struct nbd_handshake *hs, uint16_t info, const char *s)
{
	size_t n = strlen(s);
	uint8_t *p = reply(hs, NBD_REP_INFO, (uint32_t)(2 + n));

	if (!p)
		return;
	nbd_put16(p, info);
	memcpy(p + 2, s, n);
}

/*
 * The export a name picks: its index, or -1 (hs->unknown_msg then says which
 * names there are). The default name "" picks the only export, when there
 * is only one.
 */
static int find_export(struct nbd_handshake *hs, const uint8_t *name, uint32_t len)
{
	if (len == 0 && hs->nex == 1)
		return 0;
	for (unsigned i = 0; i < hs->nex; i++)
		if (len == strlen(hs->ex[i].name) && memcmp(name, hs->ex[i].name, len) == 0)
			return (int)i;
	/* a message naming the exports, cut (with "...") to what a reply holds */
	char *m = hs->unknown_msg;
	size_t cap = sizeof(hs->unknown_msg), used;
	if (len == 0)
		used = (size_t)snprintf(m, cap, "no default export here (there are %u): name one; "
					"the exports:", hs->nex);
	else
		used = (size_t)snprintf(m, cap, "no export '%.*s'; the exports:",
					(int)(len < 64 ? len : 64), (const char *)name);
	for (unsigned i = 0; i < hs->nex && used < cap; i++) {
		size_t want = strlen(hs->ex[i].name) + 2;
		if (used + want + 4 >= cap) {
			snprintf(m + used, cap - used, " ...");
			break;
		}
		used += (size_t)snprintf(m + used, cap - used, "%s %s", i ? "," : "",
					 hs->ex[i].name);
	}
	/* the name comes from the network: no control bytes in a message */
	for (char *c = m; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return -1;
}

static void choose(struct nbd_handshake *hs, int idx, const uint8_t *name, uint32_t len)
{
	hs->chosen = idx;
	memcpy(hs->name, name, len);
	hs->name[len] = 0;
	hs->name_len = len;
	hs->status = NBD_HS_TRANSMISSION;
	hs->stage = ST_END;
}

static void opt_export_name(struct nbd_handshake *hs)
{
	int idx = find_export(hs, hs->data, hs->opt_len);

	if (idx < 0) {
		fail(hs, "NBD_OPT_EXPORT_NAME: no export of that name");
		return;
	}
	const struct nbd_export *ex = &hs->ex[idx];
	hs->tflags = nbd_tflags(ex, hs->session);
	size_t n = 10 + ((hs->session & NBD_SESSION_NO_ZEROES) ? 0 : 124);
	uint8_t *p = out_reserve(hs, n);
	if (!p) {
		fail(hs, "option reply does not fit the output buffer");
		return;
	}
	memset(p, 0, n);
	nbd_put64(p, ex->size);
	nbd_put16(p + 8, hs->tflags);
	choose(hs, idx, hs->data, hs->opt_len);
}

static void opt_list(struct nbd_handshake *hs, int oversize)
{
	if (oversize || hs->opt_len) {
		reply_error(hs, NBD_REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
		return;
	}
	if (hs->ex[0].flags & NBD_EXPORT_NO_LIST) {
		reply_error(hs, NBD_REP_ERR_POLICY, "listing exports is disabled");
		return;
	}
	/* one NBD_REP_SERVER per export: they all fit (nbd_exports_check) */
	for (unsigned i = 0; i < hs->nex; i++) {
		const struct nbd_export *ex = &hs->ex[i];
		size_t nlen = strlen(ex->name);
		size_t dlen = ex->description ? strlen(ex->description) : 0;
		uint8_t *p = reply(hs, NBD_REP_SERVER, (uint32_t)(4 + nlen + dlen));
		if (!p)
			return;
		nbd_put32(p, (uint32_t)nlen);
		memcpy(p + 4, ex->name, nlen);
		if (dlen)
			memcpy(p + 4 + nlen, ex->description, dlen);
	}
	reply_ack(hs);
}

/* NBD_OPT_INFO and NBD_OPT_GO: name length, name, count, count x info type. */
static void opt_info_go(struct nbd_handshake *hs, int oversize)
{
	const uint8_t *d = hs->data;
	uint32_t n = hs->opt_len;

	if (oversize) {
		reply_error(hs, NBD_REP_ERR_TOO_BIG, "option data too long");
		return;
	}
	uint32_t nlen = n >= 6 ? nbd_get32(d) : 0;
	if (n < 6 || nlen > n - 6) {
		reply_error(hs, NBD_REP_ERR_INVALID, "malformed NBD_OPT_INFO/GO");
		return;
	}
	uint32_t nreq = nbd_get16(d + 4 + nlen);
	if (6 + nlen + 2 * nreq != n) {
		reply_error(hs, NBD_REP_ERR_INVALID, "malformed NBD_OPT_INFO/GO request list");
		return;
	}
	unsigned asked = 0;
	for (uint32_t i = 0; i < nreq; i++) {
		uint16_t t = nbd_get16(d + 6 + nlen + 2 * i);
		if (t < 16)
			asked |= 1u << t;   /* unknown requests are ignored, as the spec says */
	}
	int idx = find_export(hs, d + 4, nlen);
	if (idx < 0) {
		reply_error(hs, NBD_REP_ERR_UNKNOWN, hs->unknown_msg);
		return;
	}
	const struct nbd_export *ex = &hs->ex[idx];
	unsigned session = hs->session;
	/* the contexts were set for another export: none for this one */
	if (hs->meta_export != idx)
		session &= ~NBD_SESSION_ALLOCATION;
	if (hs->opt == NBD_OPT_GO && (asked & (1u << NBD_INFO_BLOCK_SIZE)))
		session |= NBD_SESSION_BLOCK_SIZE;
	uint16_t tflags = nbd_tflags(ex, session);

	uint8_t *p = reply(hs, NBD_REP_INFO, 12);
	if (!p)
		return;
	nbd_put16(p, NBD_INFO_EXPORT);
	nbd_put64(p + 2, ex->size);
	nbd_put16(p + 10, tflags);
	/* Sent even when not asked for (allowed): uraid enforces them anyway. */
	p = reply(hs, NBD_REP_INFO, 14);
	if (!p)
		return;
	nbd_put16(p, NBD_INFO_BLOCK_SIZE);
	nbd_put32(p + 2, ex->min_block);
	nbd_put32(p + 6, ex->pref_block);
	nbd_put32(p + 10, ex->max_block);
	if (asked & (1u << NBD_INFO_NAME))
		reply_info_string(hs, NBD_INFO_NAME, ex->name);
	if ((asked & (1u << NBD_INFO_DESCRIPTION)) && ex->description && ex->description[0])
		reply_info_string(hs, NBD_INFO_DESCRIPTION, ex->description);
	if (hs->status != NBD_HS_NEGOTIATING)
		return;
	reply_ack(hs);
	if (hs->opt == NBD_OPT_GO && hs->status == NBD_HS_NEGOTIATING) {
		hs->session = session;
		hs->tflags = tflags;
		choose(hs, idx, d + 4, nlen);
	}
}

/* One query of a META_CONTEXT option: does it name base:allocation? */
static int query_selects_allocation(const uint8_t *q, uint32_t len, int listing)
{
	static const char ctx[] = NBD_META_BASE_ALLOCATION;

	if (len == sizeof(ctx) - 1 && memcmp(q, ctx, len) == 0)
		return 1;
	/* the namespace alone is a wildcard when listing, ignored when setting */
	return listing && len == 5 && memcmp(q, "base:", 5) == 0;
}

/* NBD_OPT_LIST_META_CONTEXT and NBD_OPT_SET_META_CONTEXT: name length, name,
 * query count, count x (length, query). Bytes from the network: every
 * length is checked against what is left of the option before use. */
static void opt_meta_context(struct nbd_handshake *hs, int oversize)
{
	const uint8_t *d = hs->data;
	uint32_t n = hs->opt_len;
	int listing = hs->opt == NBD_OPT_LIST_META_CONTEXT;

	if (!listing)
		hs->session &= ~NBD_SESSION_ALLOCATION;   /* replaced, even by a failure */
	if (oversize) {
		reply_error(hs, NBD_REP_ERR_TOO_BIG, "option data too long");
		return;
	}
	if (!listing && !(hs->session & NBD_SESSION_STRUCTURED)) {
		reply_error(hs, NBD_REP_ERR_INVALID,
			    "NBD_OPT_SET_META_CONTEXT before NBD_OPT_STRUCTURED_REPLY");
		return;
	}
	uint32_t nlen = n >= 8 ? nbd_get32(d) : 0;
	if (n < 8 || nlen > n - 8) {
		reply_error(hs, NBD_REP_ERR_INVALID, "malformed meta context option");
		return;
	}
	uint32_t nq = nbd_get32(d + 4 + nlen);
	uint32_t pos = 8 + nlen;
	int want = listing && nq == 0;  /* no query: list every context */
	/* each query takes 4 bytes at least: the loop ends by pos, not by nq */
	for (uint32_t i = 0; i < nq; i++) {
		if (n - pos < 4) {
			reply_error(hs, NBD_REP_ERR_INVALID, "meta context queries run past the option");
			return;
		}
		uint32_t qlen = nbd_get32(d + pos);
		pos += 4;
		if (qlen > n - pos) {
			reply_error(hs, NBD_REP_ERR_INVALID, "meta context query runs past the option");
			return;
		}
		const uint8_t *q = d + pos;
		pos += qlen;
		const uint8_t *colon = memchr(q, ':', qlen);
		if (!colon || colon == q) {
			reply_error(hs, NBD_REP_ERR_INVALID, "meta context query without a namespace");
			return;
		}
		want |= query_selects_allocation(q, qlen, listing);
	}
	if (pos != n) {
		reply_error(hs, NBD_REP_ERR_INVALID, "bytes after the meta context queries");
		return;
	}
	int idx = find_export(hs, d + 4, nlen);
	if (idx < 0) {
		reply_error(hs, NBD_REP_ERR_UNKNOWN, hs->unknown_msg);
		return;
	}
	if (!listing)
		hs->meta_export = idx;
	if (want) {
		size_t clen = sizeof(NBD_META_BASE_ALLOCATION) - 1;
		uint8_t *p = reply(hs, NBD_REP_META_CONTEXT, (uint32_t)(4 + clen));
		if (!p)
			return;
		nbd_put32(p, listing ? 0 : NBD_META_ID_ALLOCATION);
		memcpy(p + 4, NBD_META_BASE_ALLOCATION, clen);
	}
	reply_ack(hs);
	if (!listing && want && hs->status == NBD_HS_NEGOTIATING)
		hs->session |= NBD_SESSION_ALLOCATION;
}

static void opt_starttls(struct nbd_handshake *hs, int oversize)
{
	if (oversize || hs->opt_len) {
		reply_error(hs, NBD_REP_ERR_INVALID, "NBD_OPT_STARTTLS takes no data");
		return;
	}
	if (hs->tls_active) {
		reply_error(hs, NBD_REP_ERR_INVALID, "TLS is already running");
		return;
	}
	if (hs->tls_mode == NBD_TLS_OFF) {
		reply_error(hs, NBD_REP_ERR_POLICY, "TLS is not enabled on this server");
		return;
	}
	reply_ack(hs);
	if (hs->status == NBD_HS_NEGOTIATING) {
		/* nbd_hs_input stops here: what follows is the TLS handshake */
		hs->status = NBD_HS_STARTTLS;
		hs->stage = ST_OPT_HDR;
	}
}

static void handle_option(struct nbd_handshake *hs, int oversize)
{
	/* a refused client may still start TLS when the server offers it, so
	   that a client insisting on TLS hears the reason over TLS rather
	   than read a refused STARTTLS as "no TLS here" */
	if (hs->refuse && hs->opt != NBD_OPT_ABORT &&
	    !(hs->opt == NBD_OPT_STARTTLS && hs->tls_mode != NBD_TLS_OFF && !hs->tls_active)) {
		if (hs->opt == NBD_OPT_EXPORT_NAME)
			fail(hs, hs->refuse);
		else
			reply_error(hs, NBD_REP_ERR_POLICY, hs->refuse);
		return;
	}
	if (hs->shutdown && hs->opt != NBD_OPT_ABORT) {
		if (hs->opt == NBD_OPT_EXPORT_NAME)
			fail(hs, "NBD_OPT_EXPORT_NAME while shutting down");
		else
			reply_error(hs, NBD_REP_ERR_SHUTDOWN, "server shutting down");
		return;
	}
	if (hs->tls_mode == NBD_TLS_REQUIRE && !hs->tls_active && hs->opt != NBD_OPT_STARTTLS &&
	    hs->opt != NBD_OPT_ABORT) {
		if (hs->opt == NBD_OPT_EXPORT_NAME)
			fail(hs, "NBD_OPT_EXPORT_NAME before STARTTLS, and TLS is required");
		else
			reply_error(hs, NBD_REP_ERR_TLS_REQD,
				    "TLS is required: send NBD_OPT_STARTTLS first");
		return;
	}
	switch (hs->opt) {
	case NBD_OPT_EXPORT_NAME:
		opt_export_name(hs);
		break;
	case NBD_OPT_ABORT:
		reply_ack(hs);
		if (hs->status == NBD_HS_NEGOTIATING) {
			hs->status = NBD_HS_ABORTED;
			hs->why = "client sent NBD_OPT_ABORT";
			hs->stage = ST_END;
		}
		break;
	case NBD_OPT_LIST:
		opt_list(hs, oversize);
		break;
	case NBD_OPT_INFO:
	case NBD_OPT_GO:
		opt_info_go(hs, oversize);
		break;
	case NBD_OPT_STRUCTURED_REPLY:
		if (oversize || hs->opt_len) {
			reply_error(hs, NBD_REP_ERR_INVALID, "NBD_OPT_STRUCTURED_REPLY takes no data");
			break;
		}
		hs->session |= NBD_SESSION_STRUCTURED;
		reply_ack(hs);
		break;
	case NBD_OPT_LIST_META_CONTEXT:
	case NBD_OPT_SET_META_CONTEXT:
		opt_meta_context(hs, oversize);
		break;
	case NBD_OPT_STARTTLS:
		opt_starttls(hs, oversize);
		break;
	default:
		reply_error(hs, NBD_REP_ERR_UNSUP, "option not supported");
		break;
	}
}

static void got_client_flags(struct nbd_handshake *hs)
{
	uint32_t f = nbd_get32(hs->hdr);

	hs->client_flags = f;
	if (f & ~(uint32_t)KNOWN_CLIENT_FLAGS) {
		fail(hs, "unknown client flags");
		return;
	}
	if (f & NBD_FLAG_C_NO_ZEROES)
		hs->session |= NBD_SESSION_NO_ZEROES;
	hs->stage = ST_OPT_HDR;
}

static void got_option_header(struct nbd_handshake *hs)
{
	if (nbd_get64(hs->hdr) != NBD_OPTS_MAGIC) {
		fail(hs, "bad option magic");
		return;
	}
	hs->opt = nbd_get32(hs->hdr + 8);
	hs->opt_len = nbd_get32(hs->hdr + 12);
	hs->opt_have = 0;
	if (!(hs->client_flags & NBD_FLAG_C_FIXED_NEWSTYLE) && hs->opt != NBD_OPT_EXPORT_NAME) {
		fail(hs, "option other than EXPORT_NAME from a client without fixed newstyle");
		return;
	}
	if (hs->opt == NBD_OPT_EXPORT_NAME && hs->opt_len > NBD_MAX_STRING) {
		fail(hs, "NBD_OPT_EXPORT_NAME: name longer than 4096 bytes");
		return;
	}
	if (hs->opt_len > NBD_OPT_SKIP_MAX) {
		fail(hs, "option data longer than 1 MiB");
		return;
	}
	if (hs->opt_len == 0) {
		hs->stage = ST_OPT_HDR;
		handle_option(hs, 0);
		return;
	}
	hs->stage = hs->opt_len > NBD_OPT_DATA_MAX ? ST_OPT_SKIP : ST_OPT_DATA;
}

int nbd_exports_check(const struct nbd_export *ex, unsigned n)
{
	size_t list = NBD_REP_HEADER_BYTES;     /* LIST's ACK */

	if (n == 0 || n > NBD_MAX_EXPORTS)
		return -EINVAL;
	for (unsigned i = 0; i < n; i++) {
		if (nbd_export_check(&ex[i]) != 0 || (n > 1 && !ex[i].name[0]))
			return -EINVAL;
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(ex[i].name, ex[j].name))
				return -EINVAL;
		list += NBD_REP_HEADER_BYTES + 4 + strlen(ex[i].name) +
			(ex[i].description ? strlen(ex[i].description) : 0);
	}
	return list <= NBD_HS_REPLY_MAX ? 0 : -EINVAL;
}

int nbd_hs_init(struct nbd_handshake *hs, const struct nbd_export *ex)
{
	return nbd_hs_init_table(hs, ex, 1);
}

int nbd_hs_init_table(struct nbd_handshake *hs, const struct nbd_export *ex, unsigned n)
{
	if (nbd_exports_check(ex, n) != 0)
		return -EINVAL;
	memset(hs, 0, sizeof(*hs));
	hs->ex = ex;
	hs->nex = n;
	hs->status = NBD_HS_NEGOTIATING;
	hs->stage = ST_FLAGS;
	uint8_t *p = out_reserve(hs, NBD_GREETING_BYTES);
	nbd_put64(p, NBD_MAGIC);
	nbd_put64(p + 8, NBD_OPTS_MAGIC);
	nbd_put16(p + 16, NBD_FLAG_FIXED_NEWSTYLE | NBD_FLAG_NO_ZEROES);
	return 0;
}

size_t nbd_hs_input(struct nbd_handshake *hs, const uint8_t *buf, size_t len)
{
	size_t used = 0;

	while (used < len && hs->status == NBD_HS_NEGOTIATING) {
		size_t avail = len - used;

		if (hs->stage == ST_FLAGS || hs->stage == ST_OPT_HDR) {
			size_t need = hs->stage == ST_FLAGS ? 4 : NBD_OPT_HEADER_BYTES;

			/* Read a new option only when its longest answer fits. */
			if (hs->stage == ST_OPT_HDR && hs->hdr_have == 0 &&
			    out_free(hs) < NBD_HS_REPLY_MAX)
				break;
			size_t take = need - hs->hdr_have < avail ? need - hs->hdr_have : avail;
			memcpy(hs->hdr + hs->hdr_have, buf + used, take);
			hs->hdr_have += (uint32_t)take;
			used += take;
			if (hs->hdr_have < need)
				break;
			hs->hdr_have = 0;
			if (hs->stage == ST_FLAGS)
				got_client_flags(hs);
			else
				got_option_header(hs);
		} else if (hs->stage == ST_OPT_DATA || hs->stage == ST_OPT_SKIP) {
			uint32_t left = hs->opt_len - hs->opt_have;
			size_t take = left < avail ? left : avail;

			if (hs->stage == ST_OPT_DATA)
				memcpy(hs->data + hs->opt_have, buf + used, take);
			hs->opt_have += (uint32_t)take;
			used += take;
			if (hs->opt_have < hs->opt_len)
				break;
			int oversize = hs->stage == ST_OPT_SKIP;
			hs->stage = ST_OPT_HDR;
			handle_option(hs, oversize);
		} else {
			break;
		}
	}
	return used;
}

size_t nbd_hs_output(const struct nbd_handshake *hs, const uint8_t **buf)
{
	*buf = hs->out + hs->out_head;
	return hs->out_tail - hs->out_head;
}

void nbd_hs_sent(struct nbd_handshake *hs, size_t n)
{
	size_t pending = hs->out_tail - hs->out_head;

	hs->out_head += n < pending ? n : pending;
	if (hs->out_head == hs->out_tail)
		hs->out_head = hs->out_tail = 0;
}

void nbd_hs_shutdown(struct nbd_handshake *hs)
{
	hs->shutdown = 1;
}

void nbd_hs_refuse(struct nbd_handshake *hs, const char *msg)
{
	hs->refuse = msg;
}

void nbd_hs_set_tls(struct nbd_handshake *hs, enum nbd_tls_mode mode)
{
	hs->tls_mode = mode;
}

int nbd_hs_tls_started(struct nbd_handshake *hs)
{
	if (hs->status != NBD_HS_STARTTLS)
		return -EINVAL;
	hs->tls_active = 1;
	/* no option state survives the upgrade (NO_ZEROES is a client flag of
	   the greeting, not an option) */
	hs->session &= NBD_SESSION_NO_ZEROES;
	hs->status = NBD_HS_NEGOTIATING;
	return 0;
}
