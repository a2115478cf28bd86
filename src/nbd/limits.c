// SPDX-License-Identifier: MIT
/*
 * What one client may take from the server: time to reach transmission
 * (a deadline per connection, one timer per reactor), and request buffer
 * memory (one cap for all connections together).
 *
 * Deadlines: each reactor keeps its connections still in the handshake in
 * arrival order, which is deadline order (the timeout is the same for all),
 * and one timer set for the first. No timer per connection, nothing to
 * cancel when a handshake ends: it leaves the list.
 *
 * Memory: the cap is split in two halves. One is cut into equal shares, one
 * per allowed connection, that a connection uses without asking anyone (its
 * own counter, its own thread); the other is shared, an atomic counter
 * touched only by the part of a connection's requests beyond its share. A
 * client queueing reads it never takes the replies of thus holds at most its
 * share plus what is shared, and every other client keeps its own share to
 * go on with. A request that finds no room waits, its header left unread;
 * whoever gives shared memory back wakes the reactors that have waiters.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/clock.h"
#include "engine/core/host.h"
#include "nbd/server_internal.h"

bool nbd_log_allow(struct nbd_log_limit *l, unsigned burst, uint64_t *left_out)
{
	uint64_t now = uraid_now_ns();
	uint64_t w = atomic_load_explicit(&l->window_ns, memory_order_relaxed);

	/* a new window: whoever moves it starts the count again (a line or
	   two more may pass in the race, never a flood) */
	if ((!w || now - w >= NBD_LOG_WINDOW_NS) &&
	    atomic_compare_exchange_strong(&l->window_ns, &w, now))
		atomic_store(&l->lines, 0);
	if (atomic_fetch_add(&l->lines, 1) >= burst) {
		atomic_fetch_add(&l->left_out, 1);
		return false;
	}
	*left_out = atomic_exchange(&l->left_out, 0);
	return true;
}

static struct nbd_reactor *slot_of(const struct nbd_conn *c)
{
	return &c->s->rs[c->ridx];
}

/* ---- handshake deadlines ---- */

static void timer_done(struct io_op *op, int res);

static void arm_timer(struct nbd_reactor *nr, uint64_t deadline_ns)
{
	uint64_t now = uraid_now_ns();
	uint64_t rel = deadline_ns > now ? deadline_ns - now : 1000000;

	nr->timer_ts.tv_sec = (long long)(rel / 1000000000u);
	nr->timer_ts.tv_nsec = (long long)(rel % 1000000000u);
	nr->timer_op.cb = timer_done;
	nr->timer_armed = true;
	atomic_fetch_add(&nr->s->pending, 1);
	reactor_timeout(nr->r, &nr->timer_op, &nr->timer_ts);
}

static void timer_done(struct io_op *op, int res)
{
	struct nbd_reactor *nr = (struct nbd_reactor *)((char *)op -
							 offsetof(struct nbd_reactor, timer_op));
	struct nbd_server *s = nr->s;
	uint64_t now = uraid_now_ns();

	(void)res;
	nr->timer_armed = false;
	while (nr->hs_head && nr->hs_head->hs_deadline_ns <= now) {
		struct nbd_conn *c = nr->hs_head;
		nbd_hs_untrack(c);
		char line[96];
		snprintf(line, sizeof(line), "no export chosen within the handshake timeout "
			 "(%llu s); closing", (unsigned long long)(s->handshake_ns / 1000000000u));
		nbd_conn_log(c, line);
		nbd_conn_cut(c);
		nbd_conn_kick(c);       /* may free it: it has left the list */
	}
	if (nr->hs_head && !atomic_load(&s->stopping))
		arm_timer(nr, nr->hs_head->hs_deadline_ns);
	atomic_fetch_sub(&s->pending, 1);       /* last: the server may go after this */
}

void nbd_hs_track(struct nbd_conn *c)
{
	struct nbd_reactor *nr = slot_of(c);

	if (c->hs_tracked)
		return;
	c->hs_tracked = true;
	c->hs_next = NULL;
	c->hs_prev = nr->hs_tail;
	if (nr->hs_tail)
		nr->hs_tail->hs_next = c;
	else
		nr->hs_head = c;
	nr->hs_tail = c;
	if (!nr->timer_armed && !atomic_load(&c->s->stopping))
		arm_timer(nr, nr->hs_head->hs_deadline_ns);
}

void nbd_hs_untrack(struct nbd_conn *c)
{
	struct nbd_reactor *nr = slot_of(c);

	if (!c->hs_tracked)
		return;
	c->hs_tracked = false;
	if (c->hs_prev)
		c->hs_prev->hs_next = c->hs_next;
	else
		nr->hs_head = c->hs_next;
	if (c->hs_next)
		c->hs_next->hs_prev = c->hs_prev;
	else
		nr->hs_tail = c->hs_prev;
	c->hs_prev = c->hs_next = NULL;
}

static void timer_cancel_done(struct io_op *op, int res)
{
	struct nbd_reactor *nr = (struct nbd_reactor *)((char *)op -
							 offsetof(struct nbd_reactor,
								  timer_cancel_op));
	(void)res;
	atomic_fetch_sub(&nr->s->pending, 1);
}

void nbd_limits_stop(struct nbd_server *s, unsigned ridx)
{
	struct nbd_reactor *nr = &s->rs[ridx];

	/* stopping is set: the timer is not set again once it has gone */
	if (!nr->timer_armed)
		return;
	nr->timer_cancel_op.cb = timer_cancel_done;
	atomic_fetch_add(&s->pending, 1);
	reactor_cancel(nr->r, &nr->timer_cancel_op, &nr->timer_op);
}

/* ---- clients being refused: all on reactor 0, a list there ---- */

void nbd_refusing_add(struct nbd_conn *c)
{
	struct nbd_server *s = c->s;

	/* a refused client that lingers makes way for a new one, which then
	   hears why it is refused rather than find its connection closed */
	if (atomic_load(&s->refusing) >= s->max_refusing && s->ref_head) {
		struct nbd_conn *old = s->ref_head;
		nbd_refusing_remove(old);
		nbd_conn_cut(old);
		nbd_conn_kick(old);
	}
	c->refusing = true;
	atomic_fetch_add(&s->refusing, 1);
	c->ref_next = NULL;
	c->ref_prev = s->ref_tail;
	if (s->ref_tail)
		s->ref_tail->ref_next = c;
	else
		s->ref_head = c;
	s->ref_tail = c;
}

void nbd_refusing_remove(struct nbd_conn *c)
{
	struct nbd_server *s = c->s;

	if (!c->refusing)
		return;
	c->refusing = false;
	atomic_fetch_sub(&s->refusing, 1);
	if (c->ref_prev)
		c->ref_prev->ref_next = c->ref_next;
	else
		s->ref_head = c->ref_next;
	if (c->ref_next)
		c->ref_next->ref_prev = c->ref_prev;
	else
		s->ref_tail = c->ref_prev;
	c->ref_prev = c->ref_next = NULL;
}

/* ---- request buffer memory ---- */

static bool shared_take(struct nbd_server *s, uint64_t n)
{
	uint64_t cur = atomic_load_explicit(&s->shared_used, memory_order_relaxed);

	do {
		if (n > s->shared_cap - cur)
			return false;
	} while (!atomic_compare_exchange_weak(&s->shared_used, &cur, cur + n));
	return true;
}

static void wake_waiters(struct reactor *r, struct reactor_msg *m)
{
	struct nbd_reactor *nr = (struct nbd_reactor *)((char *)m -
							 offsetof(struct nbd_reactor, wake_msg));
	struct nbd_server *s = nr->s;

	(void)r;
	atomic_store(&nr->wake_posted, false);
	atomic_store(&nr->has_waiters, false);
	struct nbd_conn *c = nr->wait_head, *next;
	nr->wait_head = nr->wait_tail = NULL;
	/* each tries again (and may wait again, at the end of the new list) */
	for (; c; c = next) {
		next = c->mem_next;
		c->mem_prev = c->mem_next = NULL;
		c->mem_waiting = false;
		atomic_fetch_sub(&s->mem_waiters, 1);
		nbd_conn_kick(c);
	}
	atomic_fetch_sub(&s->pending, 1);
}

/* From any reactor, after shared memory was given back. */
static void wake_all(struct nbd_server *s)
{
	for (unsigned i = 0; i < s->nreactors; i++) {
		struct nbd_reactor *nr = &s->rs[i];
		if (!atomic_load(&nr->has_waiters) || atomic_exchange(&nr->wake_posted, true))
			continue;
		nr->wake_msg.fn = wake_waiters;
		atomic_fetch_add(&s->pending, 1);
		reactor_post(nr->r, &nr->wake_msg);
	}
}

static void mem_wait(struct nbd_conn *c)
{
	struct nbd_reactor *nr = slot_of(c);

	if (c->mem_waiting)
		return;
	c->mem_waiting = true;
	c->mem_next = NULL;
	c->mem_prev = nr->wait_tail;
	if (nr->wait_tail)
		nr->wait_tail->mem_next = c;
	else
		nr->wait_head = c;
	nr->wait_tail = c;
	/* in this order: a giver that sees the count sees the flag */
	atomic_store(&nr->has_waiters, true);
	atomic_fetch_add(&c->s->mem_waiters, 1);
}

void nbd_mem_unwait(struct nbd_conn *c)
{
	struct nbd_reactor *nr = slot_of(c);

	if (!c->mem_waiting)
		return;
	c->mem_waiting = false;
	if (c->mem_prev)
		c->mem_prev->mem_next = c->mem_next;
	else
		nr->wait_head = c->mem_next;
	if (c->mem_next)
		c->mem_next->mem_prev = c->mem_prev;
	else
		nr->wait_tail = c->mem_prev;
	c->mem_prev = c->mem_next = NULL;
	atomic_fetch_sub(&c->s->mem_waiters, 1);
}

static void held_add(struct nbd_conn *c, int64_t delta)
{
	struct nbd_reactor *nr = slot_of(c);
	/* only this reactor writes it: no read-modify-write needed */
	uint64_t v = atomic_load_explicit(&nr->held_bytes, memory_order_relaxed);
	atomic_store_explicit(&nr->held_bytes, v + (uint64_t)delta, memory_order_relaxed);
}

bool nbd_mem_take(struct nbd_conn *c, uint32_t need)
{
	struct nbd_server *s = c->s;
	uint64_t after = c->op_bytes + need;
	uint64_t excess = after > s->conn_share ? after - s->conn_share : 0;
	uint64_t draw = excess - c->shared_held;

	if (draw && !shared_take(s, draw)) {
		/* registered before the second try: a give in between wakes us */
		mem_wait(c);
		if (!shared_take(s, draw))
			return false;
	}
	/* off the wait list whichever way the room was found (a retry from
	   another kick than the wake, its own share freed): a waiter left on
	   it is counted in status and makes every give post a wake */
	nbd_mem_unwait(c);
	c->shared_held = excess;
	c->op_bytes = after;
	held_add(c, need);
	return true;
}

void nbd_mem_give(struct nbd_conn *c, uint32_t len)
{
	struct nbd_server *s = c->s;
	uint64_t after = c->op_bytes - len;
	uint64_t excess = after > s->conn_share ? after - s->conn_share : 0;
	uint64_t back = c->shared_held - excess;

	c->op_bytes = after;
	c->shared_held = excess;
	held_add(c, -(int64_t)len);
	if (!back)
		return;
	atomic_fetch_sub(&s->shared_used, back);
	if (atomic_load(&s->mem_waiters))
		wake_all(s);
}

/* ---- setup ---- */

int nbd_limits_init(struct nbd_server *s, const struct nbd_server_opts *o)
{
	s->max_conns = o->max_connections ? o->max_connections : NBD_DEFAULT_MAX_CONNECTIONS;
	s->max_refusing = o->max_refusing ? o->max_refusing : NBD_DEFAULT_MAX_REFUSING;
	s->handshake_ns = (uint64_t)(o->handshake_timeout_ms ? o->handshake_timeout_ms
					  : NBD_DEFAULT_HANDSHAKE_MS) * 1000000u;
	s->max_buf_bytes = o->max_buffer_bytes ? o->max_buffer_bytes
					       : NBD_DEFAULT_MAX_BUFFER_BYTES;
	if (s->max_buf_bytes < NBD_MIN_BUFFER_BYTES)
		return -EINVAL;
	s->conn_share = s->max_buf_bytes / 2 / s->max_conns & ~(uint64_t)511;
	s->shared_cap = s->max_buf_bytes - s->conn_share * s->max_conns;
	s->conn_max_bytes = s->conn_share + s->shared_cap;
	if (s->conn_max_bytes > NBD_CONN_MAX_BYTES)
		s->conn_max_bytes = NBD_CONN_MAX_BYTES;
	snprintf(s->refuse_msg, sizeof(s->refuse_msg), "too many connections to this export "
		 "(the server's limit is %u); try again later", s->max_conns);
	s->rs = calloc(s->nreactors, sizeof(*s->rs));
	if (!s->rs)
		return -ENOMEM;
	for (unsigned i = 0; i < s->nreactors; i++) {
		s->rs[i].s = s;
		s->rs[i].r = engine_reactor(s->e, i);
	}
	return 0;
}

void nbd_limits_fini(struct nbd_server *s)
{
	free(s->rs);
	s->rs = NULL;
}
