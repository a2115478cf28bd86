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

#include <uraid/level.h>

#include "common/clock.h"
#include "common/errmsg.h"
#include "engine/core/host.h"
#include "nbd/server_internal.h"

#define SERVER_POLL_NS (5 * 1000000L)
#define ACCEPT_BACKOFF_NS (50 * 1000000L)   /* after accept failed for want of resources */

static void accept_done(struct io_op *op, int res);

static void arm_accept(struct nbd_listener *l)
{
	l->accept_op.cb = accept_done;
	reactor_accept(engine_reactor(l->s->e, 0), &l->accept_op, l->fd);
}

/* On reactor 0: is the client over the limit? Then it is told why
 * (greeted, then every option refused). */
static bool over_limit(struct nbd_server *s)
{
	if (atomic_load(&s->served) < s->max_conns)
		return false;
	atomic_fetch_add(&s->refused, 1);
	uint64_t left_out;      /* the line carries the count: no need to say */
	if (nbd_log_allow(&s->refusal_log, 1, &left_out)) {
		ulog(engine_log(s->e), URAID_LOG_ERR, "%u connections open, the limit (--max-connections); "
			"refusing new ones (%llu so far)", s->max_conns,
			(unsigned long long)atomic_load(&s->refused));
	}
	return true;
}

static void new_conn(struct nbd_server *s, int fd)
{
	bool refuse = over_limit(s);
	struct nbd_conn *c = calloc(1, sizeof(*c));
	if (c)
		c->in = malloc(NBD_CONN_IN_BYTES);
	if (c && c->in)
		c->hs = malloc(sizeof(*c->hs));
	if (!c || !c->in || !c->hs || nbd_hs_init_table(c->hs, s->ex, s->nex) != 0) {
		ulog(engine_log(s->e), URAID_LOG_ERR, "out of memory for a new connection; closing it");
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
	c->a = s->a[0];         /* until the client chooses */
	c->ex = &s->ex[0];
	c->fd = fd;
	/* those refused live on reactor 0 (this thread), where their list is */
	c->ridx = refuse ? 0 : s->next_reactor++ % s->nreactors;
	c->r = engine_reactor(s->e, c->ridx);
	c->pool = engine_bufpool(s->e, c->ridx);
	c->start_msg.fn = nbd_conn_start;
	c->hs_deadline_ns = uraid_now_ns() + s->handshake_ns;
	if (refuse) {
		nbd_refusing_add(c);
		nbd_hs_refuse(c->hs, s->refuse_msg);
	} else {
		c->counted = true;
		atomic_fetch_add(&s->served, 1);
		atomic_fetch_add(&s->total_conns, 1);
	}
	pthread_mutex_lock(&s->lock);
	c->next = s->conns;
	s->conns = c;
	pthread_mutex_unlock(&s->lock);
	atomic_fetch_add(&s->nconns, 1);
	reactor_post(c->r, &c->start_msg);
}

static void backoff_done(struct io_op *op, int res)
{
	struct nbd_listener *l = (struct nbd_listener *)((char *)op -
							  offsetof(struct nbd_listener, backoff_op));
	(void)res;
	if (atomic_load(&l->s->stopping)) {
		atomic_fetch_sub(&l->s->accepts_armed, 1);
		return;
	}
	arm_accept(l);
}

/* Out of descriptors or memory: the client waits in the listening queue
 * while connections close; the reactor goes on serving the others. */
static bool accept_backoff(struct nbd_listener *l, int res)
{
	if (res != -EMFILE && res != -ENFILE && res != -ENOMEM && res != -ENOBUFS)
		return false;
	if (l->accept_errors++ == 0)
		ulog(engine_log(l->s->e), URAID_LOG_ERR, "accept: %s; trying again every %ld ms",
			strerror(-res), ACCEPT_BACKOFF_NS / 1000000);
	if (atomic_load(&l->s->stopping))
		return false;
	l->backoff_ts.tv_sec = 0;
	l->backoff_ts.tv_nsec = ACCEPT_BACKOFF_NS;
	l->backoff_op.cb = backoff_done;
	reactor_timeout(engine_reactor(l->s->e, 0), &l->backoff_op, &l->backoff_ts);
	return true;
}

static void accept_done(struct io_op *op, int res)
{
	struct nbd_listener *l = (struct nbd_listener *)((char *)op -
							  offsetof(struct nbd_listener, accept_op));
	struct nbd_server *s = l->s;

	if (res >= 0) {
		if (l->accept_errors) {
			ulog(engine_log(s->e), URAID_LOG_NOTICE, "accepting again (after %u failures)",
				l->accept_errors);
			l->accept_errors = 0;
		}
		if (atomic_load(&s->stopping))
			close(res);
		else
			new_conn(s, res);
	} else if (accept_backoff(l, res)) {
		return;
	} else if (res != -ECANCELED && res != -EINTR && res != -ECONNABORTED) {
		ulog(engine_log(s->e), URAID_LOG_ERR, "accept: %s", strerror(-res));
	}
	if (atomic_load(&s->stopping) || res == -ECANCELED || res == -EINVAL ||
	    res == -EBADF) {
		atomic_fetch_sub(&s->accepts_armed, 1);
		return;
	}
	arm_accept(l);
}

/* nbd_server_add_client's hand-over to reactor 0, where connections start. */
struct add_client_msg {
	struct reactor_msg m;
	struct nbd_server *s;
	int fd;
};

static void add_client(struct reactor *r, struct reactor_msg *m)
{
	struct add_client_msg *a = (struct add_client_msg *)m;
	struct nbd_server *s = a->s;

	(void)r;
	if (atomic_load(&s->stopping))
		close(a->fd);
	else
		new_conn(s, a->fd);
	free(a);
	atomic_fetch_sub(&s->pending, 1);
}

int nbd_server_add_client(struct nbd_server *s, int fd)
{
	if (atomic_load(&s->stopping)) {
		close(fd);
		return -ESHUTDOWN;
	}
	struct add_client_msg *a = malloc(sizeof(*a));
	if (!a) {
		close(fd);
		return -ENOMEM;
	}
	a->m.fn = add_client;
	a->s = s;
	a->fd = fd;
	atomic_fetch_add(&s->pending, 1);
	reactor_post(engine_reactor(s->e, 0), &a->m);
	return 0;
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

static void backoff_cancel_done(struct io_op *op, int res)
{
	struct nbd_listener *l = (struct nbd_listener *)((char *)op -
							  offsetof(struct nbd_listener,
								   backoff_cancel_op));
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
		/* one of the two is in flight: the other cancel finds nothing */
		l->backoff_cancel_op.cb = backoff_cancel_done;
		atomic_fetch_add(&s->pending, 1);
		reactor_cancel(r, &l->backoff_cancel_op, &l->backoff_op);
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
	nbd_limits_stop(s, r->index);
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
	return uraid_level_full_stripe(uraid_level_info(st->level), st->raid_disks, st->chunk_bytes);
}

/* Export i: the array's size, flags and block sizes; 0 or -errno (err says). */
static int export_init(struct nbd_server *s, unsigned i, const struct nbd_server_opts *o,
		       struct uraid_array_status *st, char *err, size_t errlen)
{
	struct nbd_export *ex = &s->ex[i];

	uraid_array_status(s->a[i], st);
	ex->name = s->names[i];
	ex->description = s->descriptions[i];
	ex->size = st->size_bytes;
	ex->flags = NBD_EXPORT_FLUSH | NBD_EXPORT_FUA | NBD_EXPORT_TRIM |
		    NBD_EXPORT_WRITE_ZEROES | NBD_EXPORT_FAST_ZERO |
		    /* a flush syncs every member: it covers writes completed on any connection */
		    NBD_EXPORT_FLUSH_ALL_CONNS;
	if (o->read_only || st->read_only)
		ex->flags |= NBD_EXPORT_READ_ONLY;
	nbd_export_block_sizes(ex, stripe_width(st));
	if (nbd_export_check(ex) != 0)
		return uraid_errf(err, errlen, -EINVAL, "the array '%s' (%llu bytes) cannot be "
				  "exported: its size must be a multiple of 512", ex->name,
				  (unsigned long long)st->size_bytes);
	return 0;
}

static void exports_free(struct nbd_server *s)
{
	for (unsigned i = 0; s->names && i < s->nex; i++) {
		free(s->names[i]);
		free(s->descriptions[i]);
	}
	free(s->names);
	free(s->descriptions);
	free(s->ex);
	free(s->a);
}

/* The export table from the options: one array, or o->exports. */
static int exports_init(struct nbd_server *s, const struct nbd_server_opts *o,
			struct uraid_array_status *st, char *err, size_t errlen)
{
	unsigned n = o->nexports ? o->nexports : 1;

	if (n > NBD_MAX_EXPORTS)
		return uraid_errf(err, errlen, -EINVAL, "%u exports: one server serves at most %d",
				  n, NBD_MAX_EXPORTS);
	s->ex = calloc(n, sizeof(*s->ex));
	s->a = calloc(n, sizeof(*s->a));
	s->names = calloc(n, sizeof(*s->names));
	s->descriptions = calloc(n, sizeof(*s->descriptions));
	if (!s->ex || !s->a || !s->names || !s->descriptions)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	s->nex = n;
	for (unsigned i = 0; i < n; i++) {
		const char *name = o->nexports ? o->exports[i].name : o->name;
		const char *desc = o->nexports ? o->exports[i].description : o->description;
		s->a[i] = o->nexports ? o->exports[i].array : o->array;
		s->names[i] = strdup(name ? name : "");
		s->descriptions[i] = desc ? strdup(desc) : NULL;
		if (!s->names[i] || (desc && !s->descriptions[i]))
			return uraid_errf(err, errlen, -ENOMEM, "out of memory");
		int rc = export_init(s, i, o, st, err, errlen);
		if (rc)
			return rc;
	}
	if (nbd_exports_check(s->ex, n) != 0)
		return uraid_errf(err, errlen, -EINVAL, "the export names must be distinct and not "
				  "empty, and their list (names and descriptions) at most %d bytes",
				  NBD_HS_REPLY_MAX - 2 * NBD_REP_HEADER_BYTES);
	return 0;
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
	s->nreactors = nr;
	s->tls_creds = o->tls_creds;
	s->tls_mode = o->tls_creds ? o->tls_mode : NBD_TLS_OFF;
	s->stop_msgs = calloc(nr, sizeof(*s->stop_msgs));
	s->cut_msgs = calloc(nr, sizeof(*s->cut_msgs));
	if (!s->stop_msgs || !s->cut_msgs) {
		rc = uraid_errf(err, errlen, -ENOMEM, "out of memory");
		goto fail;
	}
	if ((rc = exports_init(s, o, st, err, errlen)) != 0)
		goto fail;
	rc = nbd_limits_init(s, o);
	if (rc) {
		rc = uraid_errf(err, errlen, rc, rc == -EINVAL ? "the buffer memory limit must be "
				"at least %llu MiB" : "out of memory",
				(unsigned long long)(NBD_MIN_BUFFER_BYTES >> 20));
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
		nbd_limits_fini(s);
		exports_free(s);
		free(s->stop_msgs);
		free(s->cut_msgs);
	}
	free(s);
	free(st);
	return rc;
}

unsigned nbd_server_connections(struct nbd_server *s)
{
	return atomic_load(&s->served);
}

void nbd_server_usage(struct nbd_server *s, struct nbd_server_usage *u)
{
	u->connections = atomic_load(&s->served);
	u->max_connections = s->max_conns;
	u->refusing = atomic_load(&s->refusing);
	u->refused = atomic_load(&s->refused);
	u->handshake_timeout_ms = (unsigned)(s->handshake_ns / 1000000u);
	u->buffer_bytes = 0;
	for (unsigned i = 0; i < s->nreactors; i++)
		u->buffer_bytes += atomic_load_explicit(&s->rs[i].held_bytes,
							memory_order_relaxed);
	u->max_buffer_bytes = s->max_buf_bytes;
	u->buffer_share_bytes = s->conn_share;
	u->waiting_for_memory = atomic_load(&s->mem_waiters);
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
			ulog(engine_log(s->e), URAID_LOG_ERR, "%u connection(s) still busy after %u ms; "
				"closing them", atomic_load(&s->nconns), timeout_ms);
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
	nbd_limits_fini(s);
	exports_free(s);
	free(s->stop_msgs);
	free(s->cut_msgs);
	free(s);
}

void nbd_server_set_export_size(struct nbd_server *s, unsigned idx, uint64_t bytes)
{
	/* read without a lock by the handshakes and request checks of every
	   reactor: one atomic store */
	if (idx < s->nex)
		__atomic_store_n(&s->ex[idx].size, bytes, __ATOMIC_RELAXED);
}

void nbd_server_set_size(struct nbd_server *s, uint64_t bytes)
{
	nbd_server_set_export_size(s, 0, bytes);
}
