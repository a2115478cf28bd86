// SPDX-License-Identifier: MIT
/*
 * One client connection, driven on its reactor: at most one receive and one
 * send in flight; after each completion nbd_conn_kick moves every part
 * forward (handshake, parsing what arrived, replies, the next receive) and
 * frees the connection once nothing is left in flight.
 *
 * Requests are parsed from a receive buffer; a WRITE payload that has not
 * fully arrived is received straight into the request's aligned buffer,
 * which then goes to the array as is (no copy for large writes; small ones
 * arrive with their header and are copied once out of the buffer).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine/core/host.h"
#include "nbd/server_internal.h"
#include "nbd/wire.h"

void nbd_conn_log(const struct nbd_conn *c, const char *what)
{
	uint64_t left_out;

	if (!nbd_log_allow(&c->s->conn_log, NBD_LOG_CONN_BURST, &left_out))
		return;
	if (left_out)
		ulog(engine_log(c->s->e), URAID_LOG_INFO, "%llu messages about connections left out (at most "
			"%u every %llu s)", (unsigned long long)left_out, NBD_LOG_CONN_BURST,
			NBD_LOG_WINDOW_NS / 1000000000ull);
	ulog(engine_log(c->s->e), URAID_LOG_INFO, "connection %d: %s", c->fd, what);
}

/* The request whose payload is complete goes on: to the array or, when it
 * was rejected and its payload only drained, to its error reply. */
void nbd_conn_payload_complete(struct nbd_conn *c)
{
	struct nbd_op *op = c->cur;

	c->cur = NULL;
	c->cur_have = 0;
	if (op->error)
		nbd_op_reply(c, op);
	else
		nbd_op_start(c, op);
}

static void recv_done(struct io_op *iop, int res)
{
	struct nbd_conn *c = nbd_conn_of_recv(iop);

	c->recv_busy = false;
	if (res <= 0) {
		/* end of stream, a reset, or shut down by a stop */
		if (res < 0 && res != -ECONNRESET && res != -ECANCELED)
			nbd_conn_log(c, strerror(-res));
		c->no_more_input = true;
	} else if (c->recv_direct) {
		c->cur_have += (uint32_t)res;
		if (c->cur_have == c->cur->payload)
			nbd_conn_payload_complete(c);
	} else {
		c->in_tail += (uint32_t)res;
	}
	nbd_conn_kick(c);
}

/* A rejected request: its payload (if any) is discarded, then EINVAL & co. */
static void reject(struct nbd_conn *c, struct nbd_op *op, int err)
{
	op->error = err;
	if (op->payload) {
		c->cur = op;
		c->cur_have = 0;
	} else {
		nbd_op_reply(c, op);
	}
}

/* Buffer bytes a valid request will take: READ data, WRITE payload, zeroes
 * written as data (NO_HOLE; with FAST_ZERO it is refused before any), a
 * BLOCK_STATUS reply's extents. */
static uint32_t buffer_bytes(const struct nbd_request *rq)
{
	switch (rq->type) {
	case NBD_CMD_READ:
	case NBD_CMD_WRITE:
		return rq->length;
	case NBD_CMD_WRITE_ZEROES:
		return (rq->flags & NBD_CMD_FLAG_NO_HOLE) && !(rq->flags & NBD_CMD_FLAG_FAST_ZERO)
		       ? rq->length : 0;
	case NBD_CMD_BLOCK_STATUS:
		return nbd_bs_buf_bytes(rq->flags);
	default:
		return 0;
	}
}

/* Take one request header off the buffer; false when parsing must stop
 * (also when its buffer must wait for memory: the header stays). */
static bool parse_request(struct nbd_conn *c)
{
	struct nbd_request rq;
	int v = nbd_request_parse(c->in + c->in_head, c->ex, c->tflags, c->session, &rq);
	uint32_t need = v == NBD_REQ_OK ? buffer_bytes(&rq) : 0;

	if (need && !nbd_mem_take(c, need))
		return false;
	c->in_head += NBD_REQUEST_BYTES;
	if (v == NBD_REQ_DISC) {
		c->no_more_input = true;
		return false;
	}
	if (v == NBD_REQ_CLOSE) {
		char why[96];
		snprintf(why, sizeof(why), "bad request (%s), closing", strerror(-rq.error));
		nbd_conn_log(c, why);
		nbd_conn_cut(c);
		return false;
	}
	struct nbd_op *op = nbd_op_get(c);
	if (!op) {
		if (need)
			nbd_mem_give(c, need);
		nbd_conn_log(c, "out of memory, closing");
		nbd_conn_cut(c);
		return false;
	}
	op->budget = need;
	op->cookie = rq.cookie;
	op->offset = rq.offset;
	op->length = rq.length;
	op->payload = rq.payload;
	op->type = rq.type;
	op->flags = rq.flags;
	if (v == NBD_REQ_ERROR) {
		reject(c, op, rq.error);
	} else if (rq.type == NBD_CMD_WRITE) {
		if (!nbd_op_buf(c, op, rq.length))
			reject(c, op, -ENOMEM);
		else
			c->cur = op, c->cur_have = 0;
	} else {
		nbd_op_start(c, op);
	}
	return true;
}

/* Everything the receive buffer holds: payload bytes, then whole headers. */
static void parse_input(struct nbd_conn *c)
{
	while (!c->no_more_input && !c->dead) {
		uint32_t avail = c->in_tail - c->in_head;
		if (c->cur) {
			uint32_t take = c->cur->payload - c->cur_have;
			if (take > avail)
				take = avail;
			if (!take)
				break;
			if (c->cur->buf)
				memcpy((uint8_t *)c->cur->buf + c->cur_have, c->in + c->in_head, take);
			c->in_head += take;
			c->cur_have += take;
			if (c->cur_have == c->cur->payload)
				nbd_conn_payload_complete(c);
			continue;
		}
		/* back-pressure: leave requests in the socket until some complete */
		if (nbd_conn_held_back(c))
			break;
		if (avail < NBD_REQUEST_BYTES || !parse_request(c))
			break;
	}
	if (c->in_head == c->in_tail)
		c->in_head = c->in_tail = 0;
}

uint8_t *nbd_conn_in_room(struct nbd_conn *c, size_t *len)
{
	if (!c->cur && c->transmission && nbd_conn_held_back(c))
		return NULL;
	if (c->in_head == c->in_tail) {
		c->in_head = c->in_tail = 0;
	} else if (c->in_tail == NBD_CONN_IN_BYTES ||
		   (c->in_head && NBD_CONN_IN_BYTES - c->in_tail < NBD_REQUEST_BYTES * 64)) {
		memmove(c->in, c->in + c->in_head, c->in_tail - c->in_head);
		c->in_tail -= c->in_head;
		c->in_head = 0;
	}
	*len = NBD_CONN_IN_BYTES - c->in_tail;
	return *len ? c->in + c->in_tail : NULL;
}

static void arm_recv(struct nbd_conn *c)
{
	if (c->tls) {
		nbd_conn_tls_input(c);  /* decrypts even while a receive is in flight */
		return;
	}
	if (c->recv_busy || c->no_more_input || c->dead)
		return;
	c->recv_op.cb = recv_done;
	if (c->cur && c->cur->buf && c->in_head == c->in_tail &&
	    c->cur->payload - c->cur_have >= NBD_CONN_DIRECT_MIN) {
		/* the rest of a large payload: straight into the buffer the array
		   will write (a small one comes with the requests behind it, in
		   one receive, and is copied) */
		c->recv_direct = true;
		c->recv_busy = true;
		reactor_recv(c->r, &c->recv_op, c->fd, (uint8_t *)c->cur->buf + c->cur_have,
			     c->cur->payload - c->cur_have);
		return;
	}
	size_t len;
	uint8_t *room = nbd_conn_in_room(c, &len);
	if (!room)
		return;         /* held back, or full of requests waiting for it to ease */
	c->recv_direct = false;
	c->recv_busy = true;
	reactor_recv(c->r, &c->recv_op, c->fd, room, len);
}

/* The handshake: feed it input, send its output, until it decides. */
static void handshake(struct nbd_conn *c)
{
	struct nbd_handshake *hs = c->hs;

	for (;;) {
		if (c->send_busy || c->dead)
			return;
		const uint8_t *out;
		size_t n = nbd_hs_output(hs, &out);
		if (n) {
			nbd_conn_send_hs(c, out, n);
			return;
		}
		if (hs->status == NBD_HS_STARTTLS) {
			if (c->no_more_input)
				return;         /* stopping: no TLS to start */
			if (!c->tls && nbd_conn_tls_start(c) != 0) {
				c->no_more_input = true;
				return;
			}
			if (!nbd_conn_tls_handshake(c))
				return;
			continue;
		}
		if (hs->status == NBD_HS_TRANSMISSION) {
			c->session = hs->session;
			c->tflags = hs->tflags;
			c->a = c->s->a[hs->chosen];
			c->ex = &c->s->ex[hs->chosen];
			c->transmission = true;
			free(hs);
			c->hs = NULL;
			nbd_hs_untrack(c);      /* the handshake deadline no longer applies */
			return;
		}
		if (hs->status != NBD_HS_NEGOTIATING) {
			if (hs->status == NBD_HS_FAILED)
				nbd_conn_log(c, hs->why ? hs->why : "handshake failed");
			c->no_more_input = true;
			return;
		}
		if (c->in_head == c->in_tail) {
			c->in_head = c->in_tail = 0;
			arm_recv(c);
			return;
		}
		c->in_head += (uint32_t)nbd_hs_input(hs, c->in + c->in_head, c->in_tail - c->in_head);
	}
}

static void conn_free(struct nbd_conn *c)
{
	struct nbd_server *s = c->s;

	pthread_mutex_lock(&s->lock);
	for (struct nbd_conn **pp = &s->conns; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	nbd_hs_untrack(c);
	nbd_mem_unwait(c);
	close(c->fd);
	nbd_conn_tls_free(c);
	nbd_conn_free_ops(c);
	free(c->hs);
	free(c->in);
	if (c->counted)
		atomic_fetch_sub(&s->served, 1);
	nbd_refusing_remove(c);
	free(c);
	atomic_fetch_sub(&s->nconns, 1);
}

/* One pass over everything; true when the connection is finished. */
static bool kick_once(struct nbd_conn *c)
{
	if (!c->transmission && c->hs)
		handshake(c);
	if (c->transmission) {
		parse_input(c);
		nbd_conn_send(c);
		arm_recv(c);
	}
	if (!c->no_more_input && !c->dead)
		return false;
	/* a payload that will never arrive: the request is dropped unanswered */
	if (c->cur && !c->recv_busy) {
		nbd_op_put(c, c->cur);
		c->cur = NULL;
	}
	if (c->dead)
		nbd_conn_drop_replies(c);
	if (c->tls && nbd_conn_tls_closing(c))
		return false;
	return !(c->recv_busy || c->send_busy || c->in_engine || c->sq_head || c->cur);
}

/*
 * Called after every event. A request can complete inside the kick that
 * submitted it (an error found before any I/O), and its completion kicks
 * again: that nested kick only asks the outer one for another pass, so the
 * connection is never freed under a caller.
 */
void nbd_conn_kick(struct nbd_conn *c)
{
	if (c->closed)
		return;
	if (c->in_kick) {
		c->kick_again = true;
		return;
	}
	c->in_kick = true;
	bool finished;
	do {
		c->kick_again = false;
		finished = kick_once(c);
	} while (c->kick_again && !finished);
	c->in_kick = false;
	if (finished && c->started) {
		c->closed = true;
		conn_free(c);
	}
}

void nbd_conn_start(struct reactor *r, struct reactor_msg *m)
{
	struct nbd_conn *c = (struct nbd_conn *)((char *)m - offsetof(struct nbd_conn, start_msg));

	(void)r;
	c->started = true;
	if (atomic_load(&c->s->stopping))
		c->no_more_input = true;
	else if (!c->dead)
		nbd_hs_track(c);
	nbd_conn_kick(c);
}

void nbd_conn_stop(struct nbd_conn *c)
{
	if (c->closed)
		return;
	c->no_more_input = true;
	if (c->hs)
		nbd_hs_shutdown(c->hs);
	/* a receive in flight ends (with 0) when the read side is shut */
	if (c->recv_busy)
		shutdown(c->fd, SHUT_RD);
	nbd_conn_kick(c);
}

void nbd_conn_cut(struct nbd_conn *c)
{
	if (c->closed)
		return;
	c->no_more_input = true;
	c->dead = true;
	shutdown(c->fd, SHUT_RDWR);
}
