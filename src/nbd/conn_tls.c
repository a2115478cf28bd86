// SPDX-License-Identifier: MIT
/*
 * A connection over TLS, after NBD_OPT_STARTTLS. The socket carries only
 * ciphertext: one receive at a time fills the session's input buffer and one
 * sendmsg at a time drains its output buffer, as for a plaintext
 * connection, and everything else happens in memory on the reactor thread:
 *
 *   receive -> ciphertext -> nbd_tls_read -> c->in (or straight into a
 *   large WRITE's buffer) -> the same parsing as without TLS
 *   replies -> records of up to 16 KiB (small replies gathered into one,
 *   large data encrypted from the array's buffer) -> ciphertext -> sendmsg
 *
 * So a burst of requests costs one receive and one send, as without TLS,
 * however many records it holds. Ciphertext keeps arriving while the
 * requests wait for back-pressure, but only until the input buffer is full.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbd/server_internal.h"

static void tls_fail(struct nbd_conn *c, const char *what, const char *why)
{
	char line[256];

	snprintf(line, sizeof(line), "TLS %s: %s", what, why);
	nbd_conn_log(c, line);
	c->no_more_input = true;
}

static void send_done(struct io_op *iop, int res);

/* Send what is encrypted, if no send is in flight. */
static void flush(struct nbd_conn *c)
{
	size_t len;

	if (c->send_busy || c->dead)
		return;
	const void *p = nbd_tls_out_take(c->tls, &len);
	if (!p)
		return;
	c->iov[0].iov_base = (void *)p;
	c->iov[0].iov_len = len;
	memset(&c->msg, 0, sizeof(c->msg));
	c->msg.msg_iov = c->iov;
	c->msg.msg_iovlen = 1;
	c->send_op.cb = send_done;
	c->send_busy = true;
	reactor_sendmsg(c->r, &c->send_op, c->fd, &c->msg);
}

static void send_done(struct io_op *iop, int res)
{
	struct nbd_conn *c = nbd_conn_of_send(iop);

	c->send_busy = false;
	if (res <= 0) {
		/* the client is gone: nothing more can reach it */
		nbd_tls_out_sent(c->tls, 0, NULL);
		c->dead = true;
		c->no_more_input = true;
		nbd_conn_drop_replies(c);
		shutdown(c->fd, SHUT_RDWR);
	} else {
		const char *why = NULL;
		if (nbd_tls_out_sent(c->tls, (size_t)res, &why) != 0) {
			tls_fail(c, "send", why);
			nbd_conn_cut(c);
		} else {
			flush(c);
		}
	}
	nbd_conn_kick(c);
}

static void recv_done(struct io_op *iop, int res)
{
	struct nbd_conn *c = nbd_conn_of_recv(iop);

	c->recv_busy = false;
	if (res > 0) {
		nbd_tls_in_added(c->tls, (size_t)res);
	} else {
		if (res < 0 && res != -ECONNRESET && res != -ECANCELED)
			nbd_conn_log(c, strerror(-res));
		/* what arrived before the end is still decrypted and served, as
		   a plaintext connection serves what it received */
		c->tls_eof = true;
		if (res < 0 || !nbd_tls_ready(c->tls))
			c->no_more_input = true;
	}
	nbd_conn_kick(c);
}

static void arm_recv(struct nbd_conn *c)
{
	size_t len;

	if (c->recv_busy || c->no_more_input || c->dead || c->tls_eof)
		return;
	void *p = nbd_tls_in_space(c->tls, &len);
	if (!p)
		return;         /* full: decrypting it needs room in c->in first */
	c->recv_op.cb = recv_done;
	c->recv_busy = true;
	reactor_recv(c->r, &c->recv_op, c->fd, p, len);
}

int nbd_conn_tls_start(struct nbd_conn *c)
{
	if (c->recv_busy) {
		/* cannot happen (the handshake reads no further than STARTTLS):
		   a receive would land in the plaintext buffer */
		tls_fail(c, "STARTTLS", "a plaintext receive is in flight");
		return -EPROTO;
	}
	int rc = nbd_tls_new(c->s->tls_creds, &c->tls);
	if (!rc && !(c->tls_stage = malloc(NBD_TLS_RECORD_BYTES)))
		rc = -ENOMEM;
	if (rc) {
		tls_fail(c, "STARTTLS", strerror(-rc));
		return rc;
	}
	/* Bytes the client sent behind STARTTLS, before our ACK, were not
	   protected: they must not be read as options once TLS is up (an
	   injection a man in the middle could make). */
	if (c->in_tail != c->in_head) {
		char line[128];
		snprintf(line, sizeof(line), "%u plaintext bytes after STARTTLS dropped",
			 c->in_tail - c->in_head);
		nbd_conn_log(c, line);
	}
	c->in_head = c->in_tail = 0;
	return 0;
}

bool nbd_conn_tls_handshake(struct nbd_conn *c)
{
	const char *why = NULL;

	if (nbd_tls_ready(c->tls))
		return true;
	int rc = nbd_tls_handshake(c->tls, &why);
	flush(c);               /* our flight, or the alert of a failure */
	if (rc < 0) {
		tls_fail(c, "handshake", why);
		return false;
	}
	if (rc == 0) {
		if (c->tls_eof)
			tls_fail(c, "handshake", "the client closed the connection");
		arm_recv(c);
		return false;
	}
	if (nbd_hs_tls_started(c->hs) != 0) {
		/* cannot happen: TLS is started only from NBD_HS_STARTTLS */
		tls_fail(c, "handshake", "TLS came up outside STARTTLS");
		nbd_conn_cut(c);
		return false;
	}
	return true;
}

/* Where decrypted bytes go: straight into the buffer of a WRITE whose
 * payload is arriving when nothing else is buffered, else c->in. */
static uint8_t *plain_space(struct nbd_conn *c, size_t *len, bool *direct)
{
	if (c->cur && c->cur->buf && c->in_head == c->in_tail && c->cur_have < c->cur->payload) {
		*direct = true;
		*len = c->cur->payload - c->cur_have;
		return (uint8_t *)c->cur->buf + c->cur_have;
	}
	*direct = false;
	/* back-pressure: requests stay encrypted until some complete */
	return nbd_conn_in_room(c, len);
}

void nbd_conn_tls_input(struct nbd_conn *c)
{
	const char *why = NULL;
	bool produced = false, more = true;

	if (c->no_more_input || c->dead)
		return;
	if (!nbd_tls_ready(c->tls)) {
		arm_recv(c);
		return;
	}
	while (more) {
		size_t len;
		bool direct;
		uint8_t *dst = plain_space(c, &len, &direct);
		if (!dst)
			break;
		ssize_t n = nbd_tls_read(c->tls, dst, len, &why);
		if (n == 0) {
			more = false;
			break;
		}
		if (n == -EPIPE) {
			/* close_notify: the client ended the session. What was
			   decrypted before it in this batch is still parsed and
			   served (a disconnect waits for outstanding requests). */
			c->tls_eof = true;
			more = false;
			break;
		}
		if (n < 0) {
			tls_fail(c, "receive", why);
			nbd_conn_cut(c);
			return;
		}
		produced = true;
		if (direct) {
			c->cur_have += (uint32_t)n;
			if (c->cur_have == c->cur->payload)
				nbd_conn_payload_complete(c);
		} else {
			c->in_tail += (uint32_t)n;
		}
	}
	if (produced) {
		/* parse it, then come back for more; no receive yet, so that
		   none is left waiting when what was decrypted ends the session */
		c->kick_again = true;
		return;
	}
	if (!more && c->tls_eof)
		c->no_more_input = true;        /* all that came before the end is in */
	arm_recv(c);
}

/* Encrypt what the reply queue holds, in records as full as the queue
 * allows; replies leave the queue once encrypted. */
static int encrypt_replies(struct nbd_conn *c, const char **why)
{
	struct nbd_tls *t = c->tls;
	size_t rmax = nbd_tls_record_max(t);

	if (rmax > NBD_TLS_RECORD_BYTES)
		rmax = NBD_TLS_RECORD_BYTES;
	while (c->sq_head && nbd_tls_can_write(t)) {
		size_t staged = 0;
		while (c->sq_head && staged < rmax) {
			struct nbd_op *op = c->sq_head;
			const uint8_t *p;
			size_t plen;
			if (op->sent < op->hdr_len) {
				p = op->hdr + op->sent;
				plen = op->hdr_len - op->sent;
			} else {
				p = nbd_op_data(op) + (op->sent - op->hdr_len);
				plen = op->hdr_len + op->data_len - op->sent;
			}
			size_t take;
			if (!staged && plen >= rmax) {
				/* a whole record of data: from the array's buffer, no copy */
				int rc = nbd_tls_write(t, p, rmax, why);
				if (rc)
					return rc;
				take = rmax;
			} else {
				take = plen < rmax - staged ? plen : rmax - staged;
				memcpy(c->tls_stage + staged, p, take);
				staged += take;
			}
			op->sent += (uint32_t)take;
			if (op->sent == op->hdr_len + op->data_len) {
				c->sq_head = op->next;
				if (!c->sq_head)
					c->sq_tail = NULL;
				nbd_op_put(c, op);
			}
			if (take == rmax && !staged)
				break;
		}
		if (staged) {
			int rc = nbd_tls_write(t, c->tls_stage, staged, why);
			if (rc)
				return rc;
		}
	}
	return 0;
}

void nbd_conn_tls_send(struct nbd_conn *c)
{
	const char *why = NULL;

	if (c->dead)
		return;
	if (encrypt_replies(c, &why)) {
		tls_fail(c, "send", why);
		nbd_conn_cut(c);
		return;
	}
	flush(c);
}

void nbd_conn_tls_send_hs(struct nbd_conn *c)
{
	const char *why = NULL;
	const uint8_t *out;
	size_t n = nbd_hs_output(c->hs, &out), done = 0;
	size_t rmax = nbd_tls_record_max(c->tls);

	while (done < n && nbd_tls_can_write(c->tls)) {
		size_t chunk = n - done < rmax ? n - done : rmax;
		if (nbd_tls_write(c->tls, out + done, chunk, &why)) {
			tls_fail(c, "send", why);
			nbd_conn_cut(c);
			return;
		}
		done += chunk;
	}
	nbd_hs_sent(c->hs, done);
	flush(c);
}

bool nbd_conn_tls_closing(struct nbd_conn *c)
{
	if (c->dead)
		return false;
	/* the server ends the session: close_notify once the replies are out */
	if (nbd_tls_ready(c->tls) && !c->tls_bye && !c->sq_head && !c->in_engine && !c->cur) {
		c->tls_bye = true;
		nbd_tls_bye(c->tls);
	}
	flush(c);
	return nbd_tls_out_pending(c->tls);
}

void nbd_conn_tls_free(struct nbd_conn *c)
{
	nbd_tls_free(c->tls);
	free(c->tls_stage);
	c->tls = NULL;
	c->tls_stage = NULL;
}
