// SPDX-License-Identifier: MIT
/*
 * A connection's requests: buffers, the array request each becomes, and the
 * replies, sent in completion order. Replies wait in a queue and go out
 * together in one sendmsg (header and data of each as iovecs: read data is
 * sent from the buffer the array filled, with no copy).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbd/server_internal.h"
#include "nbd/wire.h"

#define POOL_MAX_BYTES (16u << 20)     /* larger buffers come from the heap (rare) */

struct nbd_op *nbd_op_get(struct nbd_conn *c)
{
	struct nbd_op *op = c->free_ops;

	if (op)
		c->free_ops = op->next;
	else if (!(op = malloc(sizeof(*op))))
		return NULL;
	memset(op, 0, offsetof(struct nbd_op, hdr));
	op->c = c;
	c->nops++;
	return op;
}

/* The buffer, the bytes the array lent, and the memory reserved for it (limits.c). */
static void op_buf_release(struct nbd_conn *c, struct nbd_op *op)
{
	if (op->type == NBD_CMD_READ && op->io.lend.data)
		op->io.lend.give_back(&op->io.lend);
	if (op->buf) {
		if (op->buf_len <= POOL_MAX_BYTES)
			bufpool_put(c->pool, op->buf, op->buf_len);
		else
			free(op->buf);
		op->buf = NULL;
		op->buf_len = 0;
	}
	if (op->budget) {
		nbd_mem_give(c, op->budget);
		op->budget = 0;
	}
}

void nbd_op_put(struct nbd_conn *c, struct nbd_op *op)
{
	op_buf_release(c, op);
	op->next = c->free_ops;
	c->free_ops = op;
	c->nops--;
}

void *nbd_op_buf(struct nbd_conn *c, struct nbd_op *op, size_t len)
{
	void *b = NULL;

	/* only what was reserved when the request was read: the cap holds */
	if (len > op->budget)
		return NULL;
	if (len <= POOL_MAX_BYTES)
		b = bufpool_get(c->pool, len);
	else if (posix_memalign(&b, 4096, len))
		b = NULL;
	if (b) {
		op->buf = b;
		op->buf_len = len;
	}
	return b;
}

void nbd_conn_free_ops(struct nbd_conn *c)
{
	while (c->free_ops) {
		struct nbd_op *op = c->free_ops;
		c->free_ops = op->next;
		free(op);
	}
}

static void op_done(struct uraid_io *io, int result)
{
	struct nbd_op *op = io->ctx;
	struct nbd_conn *c = op->c;

	/* FUA on TRIM or WRITE_ZEROES: durable before the reply, through a flush */
	if (result == 0 && op->flush_after) {
		op->flush_after = false;
		io->op = URAID_IO_FLUSH;
		io->flags = 0;
		io->offset = io->length = 0;
		result = uraid_array_submit(c->a, c->ridx, io);
		if (result == 0)
			return;
	}
	c->in_engine--;
	op->error = result;
	nbd_op_reply(c, op);
	nbd_conn_kick(c);
}

static void block_status_next(struct nbd_conn *c);

/* BLOCK_STATUS answered: the extents become the reply's payload (on the
 * connection's reactor), and the next lookup of the connection starts. */
static void block_status_done(struct uraid_alloc_query *q, int result)
{
	struct nbd_op *op = q->ctx;
	struct nbd_conn *c = op->c;
	const struct uraid_extent *ext = q->extents;
	uint8_t *p = op->buf;

	c->bs_busy = false;
	c->in_engine--;
	if (result < 0) {
		op->error = result;
	} else {
		/* the engine's extents cover at most the request (< 4 GiB), so
		   each length fits in 32 bits; REQ_ONE asked for max 1 */
		nbd_put32(p, NBD_META_ID_ALLOCATION);
		for (int i = 0; i < result; i++) {
			uint32_t f = 0;
			if (ext[i].flags & URAID_EXTENT_HOLE)
				f |= NBD_STATE_HOLE;
			if (ext[i].flags & URAID_EXTENT_ZERO)
				f |= NBD_STATE_ZERO;
			nbd_put32(p + 4 + 8 * i, (uint32_t)ext[i].length);
			nbd_put32(p + 8 + 8 * i, f);
		}
		op->bs_bytes = 4 + 8 * (uint32_t)result;
	}
	nbd_op_reply(c, op);
	block_status_next(c);
	nbd_conn_kick(c);
}

/* The waiting lookups of c, one at a time: the engine looks the allocation
 * up off the reactor (lseek on the members is a blocking call: the metadata
 * worker makes it) and block_status_done runs here later. */
static void block_status_next(struct nbd_conn *c)
{
	while (!c->bs_busy && c->bs_head) {
		struct nbd_op *op = c->bs_head;
		c->bs_head = op->next;
		if (!c->bs_head)
			c->bs_tail = NULL;
		if (c->dead) {
			c->in_engine--;
			nbd_op_reply(c, op);    /* nobody to tell: just freed */
			continue;
		}
		unsigned max = nbd_bs_max_extents(op->flags);
		if (!nbd_op_buf(c, op, nbd_bs_buf_bytes(op->flags))) {
			c->in_engine--;
			op->error = -ENOMEM;
			nbd_op_reply(c, op);
			continue;
		}
		struct uraid_alloc_query *q = &op->aq;
		q->offset = op->offset;
		q->length = op->length;
		q->extents = (struct uraid_extent *)((uint8_t *)op->buf + nbd_bs_ext_at(max));
		q->max_extents = max;
		q->done = block_status_done;
		q->ctx = op;
		c->bs_busy = true;
		int rc = uraid_array_allocation_submit(c->a, c->ridx, q);
		if (rc) {
			c->bs_busy = false;
			c->in_engine--;
			op->error = rc;
			nbd_op_reply(c, op);
		}
	}
}

/* BLOCK_STATUS: behind the connection's earlier ones. */
static void block_status_start(struct nbd_conn *c, struct nbd_op *op)
{
	c->in_engine++;         /* the connection lives until it is answered */
	op->next = NULL;
	if (c->bs_tail)
		c->bs_tail->next = op;
	else
		c->bs_head = op;
	c->bs_tail = op;
	block_status_next(c);
}

void nbd_op_start(struct nbd_conn *c, struct nbd_op *op)
{
	struct uraid_io *io = &op->io;

	io->offset = op->offset;
	io->length = op->length;
	io->flags = 0;
	io->done = op_done;
	io->ctx = op;
	switch (op->type) {
	case NBD_CMD_BLOCK_STATUS:
		block_status_start(c, op);
		return;
	case NBD_CMD_READ:
		io->op = URAID_IO_READ;
		io->flags = URAID_IO_LEND;      /* sent from read-ahead's buffer: no copy */
		if (!nbd_op_buf(c, op, op->length))
			goto nomem;
		break;
	case NBD_CMD_WRITE:
		io->op = URAID_IO_WRITE;
		if (op->flags & NBD_CMD_FLAG_FUA)
			io->flags = URAID_IO_FUA;
		break;
	case NBD_CMD_FLUSH:
		io->op = URAID_IO_FLUSH;
		break;
	case NBD_CMD_TRIM:
		io->op = URAID_IO_DISCARD;
		op->flush_after = op->flags & NBD_CMD_FLAG_FUA;
		break;
	case NBD_CMD_WRITE_ZEROES:
		op->flush_after = op->flags & NBD_CMD_FLAG_FUA;
		/* FAST_ZERO: told at once, before any I/O, when the zeroes would be
		   written (NO_HOLE: the client wants the space allocated; block
		   devices; partial RAID 4/5/6 rows), as that is no faster than a write */
		if ((op->flags & NBD_CMD_FLAG_FAST_ZERO) &&
		    ((op->flags & NBD_CMD_FLAG_NO_HOLE) ||
		     !uraid_array_zeroes_fast(c->a, op->offset, op->length))) {
			op->error = -ENOTSUP;
			nbd_op_reply(c, op);
			return;
		}
		if (!(op->flags & NBD_CMD_FLAG_NO_HOLE)) {
			io->op = URAID_IO_WRITE_ZEROES;   /* holes punched where members can */
			break;
		}
		if (!nbd_op_buf(c, op, op->length))
			goto nomem;
		memset(op->buf, 0, op->length);
		io->op = URAID_IO_WRITE;
		if (op->flags & NBD_CMD_FLAG_FUA)
			io->flags = URAID_IO_FUA;
		op->flush_after = false;
		break;
	default:
		op->error = -EINVAL;
		nbd_op_reply(c, op);
		return;
	}
	io->buf = op->buf;
	c->in_engine++;         /* before: done() may run inside submit */
	int rc = uraid_array_submit(c->a, c->ridx, io);
	if (rc) {
		c->in_engine--;
		op->error = rc;
		nbd_op_reply(c, op);
	}
	return;
nomem:
	op->error = -ENOMEM;
	nbd_op_reply(c, op);
}

void nbd_op_reply(struct nbd_conn *c, struct nbd_op *op)
{
	if (c->dead) {
		nbd_op_put(c, op);
		return;
	}
	op->sent = 0;
	op->data_len = 0;
	if (op->error) {
		op_buf_release(c, op);
		op->hdr_len = (uint32_t)nbd_reply_error(op->hdr, sizeof(op->hdr), c->session,
							op->cookie, op->error, NULL);
	} else if (op->type == NBD_CMD_READ) {
		op->hdr_len = (uint32_t)nbd_reply_read(op->hdr, sizeof(op->hdr), c->session,
						       op->cookie, op->offset, op->length);
		op->data_len = op->length;
	} else if (op->type == NBD_CMD_BLOCK_STATUS) {
		/* negotiated only with structured replies: one chunk, DONE */
		op->hdr_len = (uint32_t)nbd_reply_block_status(op->hdr, op->cookie, op->bs_bytes);
		op->data_len = op->bs_bytes;
	} else {
		/* structured replies are required only for READ: a simple reply will do */
		op_buf_release(c, op);
		op->hdr_len = (uint32_t)nbd_simple_reply(op->hdr, op->cookie, 0);
	}
	op->next = NULL;
	if (c->sq_tail)
		c->sq_tail->next = op;
	else
		c->sq_head = op;
	c->sq_tail = op;
}

void nbd_conn_drop_replies(struct nbd_conn *c)
{
	while (c->sq_head) {
		struct nbd_op *op = c->sq_head;
		c->sq_head = op->next;
		nbd_op_put(c, op);
	}
	c->sq_tail = NULL;
}

static void send_done(struct io_op *iop, int res)
{
	struct nbd_conn *c = nbd_conn_of_send(iop);

	c->send_busy = false;
	if (c->send_hs) {
		c->send_hs = false;
		if (res > 0 && c->hs)
			nbd_hs_sent(c->hs, (size_t)res);
	} else if (res > 0) {
		size_t left = (size_t)res;
		while (left && c->sq_head) {
			struct nbd_op *op = c->sq_head;
			size_t rest = op->hdr_len + op->data_len - op->sent;
			if (left < rest) {
				op->sent += (uint32_t)left;
				break;
			}
			left -= rest;
			c->sq_head = op->next;
			if (!c->sq_head)
				c->sq_tail = NULL;
			nbd_op_put(c, op);
		}
	}
	if (res <= 0) {
		/* the client is gone (EPIPE, ECONNRESET): nothing more can reach it */
		c->dead = true;
		c->no_more_input = true;
		nbd_conn_drop_replies(c);
		shutdown(c->fd, SHUT_RDWR);
	}
	nbd_conn_kick(c);
}

void nbd_conn_send_hs(struct nbd_conn *c, const void *buf, size_t n)
{
	if (c->tls) {
		nbd_conn_tls_send_hs(c);
		return;
	}
	c->iov[0].iov_base = (void *)buf;
	c->iov[0].iov_len = n;
	memset(&c->msg, 0, sizeof(c->msg));
	c->msg.msg_iov = c->iov;
	c->msg.msg_iovlen = 1;
	c->send_op.cb = send_done;
	c->send_hs = true;
	c->send_busy = true;
	reactor_sendmsg(c->r, &c->send_op, c->fd, &c->msg);
}

void nbd_conn_send(struct nbd_conn *c)
{
	unsigned n = 0;

	if (c->tls) {
		nbd_conn_tls_send(c);
		return;
	}
	if (c->send_busy || c->dead || !c->sq_head)
		return;
	for (struct nbd_op *op = c->sq_head; op && n + 2 <= NBD_CONN_SEND_IOV; op = op->next) {
		uint32_t sent = op->sent;
		if (sent < op->hdr_len) {
			c->iov[n].iov_base = op->hdr + sent;
			c->iov[n++].iov_len = op->hdr_len - sent;
			sent = 0;
		} else {
			sent -= op->hdr_len;
		}
		if (op->data_len > sent) {
			c->iov[n].iov_base = (void *)(nbd_op_data(op) + sent);
			c->iov[n++].iov_len = op->data_len - sent;
		}
	}
	memset(&c->msg, 0, sizeof(c->msg));
	c->msg.msg_iov = c->iov;
	c->msg.msg_iovlen = n;
	c->send_op.cb = send_done;
	c->send_busy = true;
	reactor_sendmsg(c->r, &c->send_op, c->fd, &c->msg);
}
