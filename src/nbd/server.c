// SPDX-License-Identifier: MIT
/*
 * The NBD server: the export, accepting on reactor 0, handing each new
 * connection to the next reactor, and an orderly stop.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "engine/host.h"
#include "nbd/conn.h"

#define SERVER_POLL_NS (5 * 1000000L)

static void accept_done(struct io_op *op, int res);

static void arm_accept(struct nbd_listener *l)
{
	l->accept_op.cb = accept_done;
	reactor_accept(engine_reactor(l->s->e, 0), &l->accept_op, l->fd);
}

static void new_conn(struct nbd_server *s, int fd)
{
	struct nbd_conn *c = calloc(1, sizeof(*c));
	if (c)
		c->in = malloc(NBD_CONN_IN_BYTES);
	if (c && c->in)
		c->hs = malloc(sizeof(*c->hs));
	if (!c || !c->in || !c->hs || nbd_hs_init(c->hs, &s->ex) != 0) {
		fprintf(stderr, "uraid serve: out of memory for a new connection; closing it\n");
		if (c) {
			free(c->hs);
			free(c->in);
		}
		free(c);
		close(fd);
		return;
	}
	nbd_hs_set_tls(c->hs, s->tls_mode);
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));   /* fails on Unix: fine */
	c->s = s;
	c->fd = fd;
	c->ridx = s->next_reactor++ % s->nreactors;
	c->r = engine_reactor(s->e, c->ridx);
	c->pool = engine_bufpool(s->e, c->ridx);
	c->start_msg.fn = nbd_conn_start;
	pthread_mutex_lock(&s->lock);
	c->next = s->conns;
	s->conns = c;
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&s->nconns, 1);
	atomic_fetch_add(&s->total_conns, 1);
	reactor_post(c->r, &c->start_msg);
}

static void accept_done(struct io_op *op, int res)
{
	struct nbd_listener *l = (struct nbd_listener *)((char *)op -
							  offsetof(struct nbd_listener, accept_op));
	struct nbd_server *s = l->s;

	if (res >= 0) {
		if (atomic_load(&s->stopping))
			close(res);
		else
			new_conn(s, res);
	} else if (res != -ECANCELED && res != -EINTR && res != -ECONNABORTED) {
		fprintf(stderr, "uraid serve: accept: %s\n", strerror(-res));
		if (res == -EMFILE || res == -ENFILE || res == -ENOMEM) {
			/* out of descriptors: let connections close rather than spin */
			struct timespec ts = { 0, 50 * 1000000L };
			nanosleep(&ts, NULL);
		}
	}
	if (atomic_load(&s->stopping) || res == -ECANCELED || res == -EINVAL ||
	    res == -EBADF) {
		atomic_fetch_sub(&s->accepts_armed, 1);
		return;
	}
	arm_accept(l);
}

static void start_accept(struct reactor *r, struct reactor_msg *m)
{
	struct nbd_server *s = (struct nbd_server *)((char *)m -
						   offsetof(struct nbd_server, start_accept_msg));
	(void)r;
	for (unsigned i = 0; i < s->nlisten; i++)
		arm_accept(&s->listeners[i]);
	atomic_fetch_sub(&s->pending, 1);
}

static void cancel_done(struct io_op *op, int res)
{
	struct nbd_listener *l = (struct nbd_listener *)((char *)op -
							  offsetof(struct nbd_listener, cancel_op));
	(void)res;
	atomic_fetch_sub(&l->s->pending, 1);
}

static void stop_accept(struct reactor *r, struct reactor_msg *m)
{
	struct nbd_server *s = (struct nbd_server *)((char *)m -
						   offsetof(struct nbd_server, stop_accept_msg));
	for (unsigned i = 0; i < s->nlisten; i++) {
		struct nbd_listener *l = &s->listeners[i];
		l->cancel_op.cb = cancel_done;
		atomic_fetch_add(&s->pending, 1);
		reactor_cancel(r, &l->cancel_op, &l->accept_op);
	}
	atomic_fetch_sub(&s->pending, 1);       /* this message */
}

/* On reactor r: stop (or cut) the connections that live there. */
static void for_conns_on(struct nbd_server *s, unsigned ridx, bool cut)
{
	struct nbd_conn *list[64];
	bool more = true;

	/* the lock is not held across kicks: a kick may free a connection */
	while (more) {
		unsigned n = 0;
		more = false;
		pthread_mutex_lock(&s->lock);
		for (struct nbd_conn *c = s->conns; c; c = c->next) {
			if (c->ridx != ridx || c->closed || (cut ? c->dead : c->no_more_input))
				continue;
			if (n == 64) {
				more = true;
				break;
			}
			list[n++] = c;
		}
		pthread_mutex_unlock(&s->lock);
		for (unsigned k = 0; k < n; k++) {
			if (cut) {
				nbd_conn_cut(list[k]);
				nbd_conn_kick(list[k]);
			} else {
				nbd_conn_stop(list[k]);
			}
		}
	}
}

static void stop_conns(struct reactor *r, struct reactor_msg *m)
{
	struct nbd_server *s = ((struct nbd_server_msg *)m)->s;
	for_conns_on(s, r->index, false);
	atomic_fetch_sub(&s->pending, 1);
}

static void cut_conns(struct reactor *r, struct reactor_msg *m)
{
	struct nbd_server *s = ((struct nbd_server_msg *)m)->s;
	for_conns_on(s, r->index, true);
	atomic_fetch_sub(&s->pending, 1);
}

/* The preferred block size: a full stripe of data where the level has one. */
static uint64_t stripe_width(const struct uraid_array_status *st)
{
	unsigned n = st->raid_disks;
	switch (st->level) {
	case URAID_LEVEL_0: return (uint64_t)st->chunk_bytes * n;
	case URAID_LEVEL_4:
	case URAID_LEVEL_5: return n > 1 ? (uint64_t)st->chunk_bytes * (n - 1) : 0;
	case URAID_LEVEL_6: return n > 2 ? (uint64_t)st->chunk_bytes * (n - 2) : 0;
	case URAID_LEVEL_10: return st->chunk_bytes;
	default: return 0;
	}
}

int nbd_server_start(const struct nbd_server_opts *o, struct nbd_server **out, char *err,
		     size_t errlen)
{
	struct uraid_array_status *st = malloc(sizeof(*st));
	struct nbd_server *s = calloc(1, sizeof(*s));
	unsigned nr = uraid_engine_reactors(o->engine);
	int rc = 0;

	if (!st || !s || o->nlisten == 0 || o->nlisten > NBD_SERVER_MAX_LISTEN) {
		rc = uraid_errf(err, errlen, st && s ? -EINVAL : -ENOMEM,
				st && s ? "the server needs 1 to %d listening sockets"
					: "out of memory", NBD_SERVER_MAX_LISTEN);
		goto fail;
	}
	s->e = o->engine;
	s->a = o->array;
	s->nreactors = nr;
	s->tls_creds = o->tls_creds;
	s->tls_mode = o->tls_creds ? o->tls_mode : NBD_TLS_OFF;
	s->name = strdup(o->name ? o->name : "");
	s->description = o->description ? strdup(o->description) : NULL;
	s->stop_msgs = calloc(nr, sizeof(*s->stop_msgs));
	s->cut_msgs = calloc(nr, sizeof(*s->cut_msgs));
	if (!s->name || (o->description && !s->description) || !s->stop_msgs || !s->cut_msgs) {
		rc = uraid_errf(err, errlen, -ENOMEM, "out of memory");
		goto fail;
	}
	uraid_array_status(o->array, st);
	s->ex.name = s->name;
	s->ex.description = s->description;
	s->ex.size = st->size_bytes;
	s->ex.flags = NBD_EXPORT_FLUSH | NBD_EXPORT_FUA | NBD_EXPORT_TRIM |
		      NBD_EXPORT_WRITE_ZEROES | NBD_EXPORT_FAST_ZERO |
		      /* a flush syncs every member: it covers writes completed on any connection */
		      NBD_EXPORT_FLUSH_ALL_CONNS;
	if (o->read_only || st->read_only)
		s->ex.flags |= NBD_EXPORT_READ_ONLY;
	nbd_export_block_sizes(&s->ex, stripe_width(st));
	if (nbd_export_check(&s->ex) != 0) {
		rc = uraid_errf(err, errlen, -EINVAL, "the array (%llu bytes) cannot be exported: "
				"its size must be a multiple of 512", (unsigned long long)st->size_bytes);
		goto fail;
	}
	pthread_mutex_init(&s->lock, NULL);
	s->nlisten = o->nlisten;
	for (unsigned i = 0; i < o->nlisten; i++) {
		s->listeners[i].fd = o->listen_fds[i];
		s->listeners[i].s = s;
	}
	atomic_store(&s->accepts_armed, o->nlisten);
	s->start_accept_msg.fn = start_accept;
	atomic_store(&s->pending, 1);
	reactor_post(engine_reactor(s->e, 0), &s->start_accept_msg);
	free(st);
	*out = s;
	return 0;
fail:
	if (s) {
		free(s->name);
		free(s->description);
		free(s->stop_msgs);
		free(s->cut_msgs);
	}
	free(s);
	free(st);
	return rc;
}

unsigned nbd_server_connections(struct nbd_server *s)
{
	return atomic_load(&s->nconns);
}

uint64_t nbd_server_connections_total(struct nbd_server *s)
{
	return atomic_load(&s->total_conns);
}

static void post_all(struct nbd_server *s, struct nbd_server_msg *msgs,
		     void (*fn)(struct reactor *, struct reactor_msg *))
{
	for (unsigned i = 0; i < s->nreactors; i++) {
		msgs[i].m.fn = fn;
		msgs[i].s = s;
		atomic_fetch_add(&s->pending, 1);
		reactor_post(engine_reactor(s->e, i), &msgs[i].m);
	}
}

static void sleep_tick(void)
{
	struct timespec ts = { 0, SERVER_POLL_NS };
	nanosleep(&ts, NULL);
}

void nbd_server_stop(struct nbd_server *s, unsigned timeout_ms)
{
	if (atomic_exchange(&s->stopping, true))
		return;
	s->stop_accept_msg.fn = stop_accept;
	atomic_fetch_add(&s->pending, 1);
	reactor_post(engine_reactor(s->e, 0), &s->stop_accept_msg);
	while (atomic_load(&s->accepts_armed))
		sleep_tick();
	post_all(s, s->stop_msgs, stop_conns);
	uint64_t waited_ns = 0;
	bool cut = false;
	while (atomic_load(&s->nconns)) {
		if (!cut && waited_ns >= (uint64_t)timeout_ms * 1000000u) {
			fprintf(stderr, "uraid serve: %u connection(s) still busy after %u ms; "
				"closing them\n", atomic_load(&s->nconns), timeout_ms);
			post_all(s, s->cut_msgs, cut_conns);
			cut = true;
		}
		sleep_tick();
		waited_ns += SERVER_POLL_NS;
	}
	while (atomic_load(&s->pending))
		sleep_tick();
}

void nbd_server_destroy(struct nbd_server *s)
{
	if (!s)
		return;
	nbd_server_stop(s, 10000);
	for (unsigned i = 0; i < s->nlisten; i++)
		close(s->listeners[i].fd);
	pthread_mutex_destroy(&s->lock);
	free(s->name);
	free(s->description);
	free(s->stop_msgs);
	free(s->cut_msgs);
	free(s);
}
