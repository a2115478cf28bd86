// SPDX-License-Identifier: MIT
/*
 * Nested arrays in one process: a member of the upper array (RAID 0 of a
 * RAID 50/60) is a lower array (a RAID 5/6) of the same engine. io/ sees a
 * member with an ops table (member_stack_ops); here each member I/O
 * becomes a request of the lower array (uraid_array_submit) on the
 * reactor that issued it, so it starts at once and completes there: no
 * thread hop, and the data buffer is handed down as it is (the lower array
 * bounces it only when it is not 4 KiB aligned). The upper array's
 * superblock sits on the lower array's data where md stacks it (1.2: 4 KiB
 * in), read and written through the same request path.
 *
 * A read that the lower array's level would serve from one member alone
 * (a healthy RAID 5/6, a read within one chunk: every 4 KiB random read)
 * skips the lower array's request and goes straight to that member
 * (core/direct_read.c): a stacked member then costs one member I/O, as a
 * RAID 0's member does. A failed one is sent again the whole way.
 *
 * Failure: a lower array that fails answers -EIO, which fails the member
 * of the upper array as a dead disk would; a degraded one goes on serving.
 *
 * Metadata I/O of the upper array is synchronous and runs on the metadata
 * worker; the lower array's write may wait for an update of its own on
 * that same worker (marking it active, a bitmap bit): meta_worker_help
 * runs those while it waits.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/md/meta_worker.h"
#include "engine/md/stack.h"

/* One member I/O as a request of the lower array, or its member's read. */
struct stack_io {
	struct uraid_io io;
	struct member_io lower;         /* the direct read's, on the lower member */
	uint64_t start_ns;              /* the direct read's start (latency) */
	uint64_t off;
	struct member_io *mio;
	struct stack_lower *sl;
	unsigned reactor;
	bool submitting;                /* inside uraid_array_submit: complete later */
	struct stack_io *next;          /* the reactor's free list */
};

/* What a lower array keeps for the arrays above it: a free list per reactor. */
struct stack_lower {
	struct array *a;
	struct stack_io **free;         /* [nreactors], each touched by its reactor only */
};

static void sio_put(struct stack_lower *sl, struct stack_io *s)
{
	s->next = sl->free[s->reactor];
	sl->free[s->reactor] = s;
}

static void sio_done(struct uraid_io *io, int res)
{
	struct stack_io *s = io->ctx;
	struct member_io *mio = s->mio;
	struct stack_lower *sl = (struct stack_lower *)mio->m->stack_ctx;

	bool later = s->submitting;

	sio_put(sl, s);
	if (later)
		member_stacked_done(mio, res);          /* the issuer is still in submit */
	else
		member_stacked_finish(mio, res);        /* from the poll: no extra round */
}

/* The member I/O as a request of the lower array (the whole way). */
static void stack_submit_request(struct stack_lower *sl, struct reactor *r, struct stack_io *s,
				 struct member_io *mio, uint64_t off)
{
	int rc;

	memset(&s->io, 0, sizeof(s->io));
	s->mio = mio;
	s->reactor = r->index;
	s->io.offset = off;
	s->io.length = mio->len;
	s->io.buf = mio->buf;
	s->io.done = sio_done;
	s->io.ctx = s;
	switch (mio->kind) {
	case MEMBER_READ:
		s->io.op = URAID_IO_READ;
		break;
	case MEMBER_WRITE:
		s->io.op = URAID_IO_WRITE;
		if (mio->rw_flags & RWF_DSYNC)
			s->io.flags = URAID_IO_FUA;
		break;
	case MEMBER_FLUSH:
		s->io.op = URAID_IO_FLUSH;
		s->io.offset = s->io.length = 0;
		break;
	case MEMBER_DISCARD:
		s->io.op = URAID_IO_DISCARD;
		s->io.buf = NULL;
		break;
	case MEMBER_ZEROES:
		s->io.op = URAID_IO_WRITE_ZEROES;
		s->io.buf = NULL;
		break;
	}
	s->submitting = true;
	rc = uraid_array_submit((struct uraid_array *)sl->a, r->index, &s->io);
	s->submitting = false;  /* s may be back in the free list: a plain store */
	if (rc) {
		sio_put(sl, s);
		member_stacked_done(mio, rc);
	}
}

/* The direct read's member I/O is done (from the reactor's poll). */
static void direct_done(struct member_io *lower, int res)
{
	struct stack_io *s = (struct stack_io *)((char *)lower - offsetof(struct stack_io, lower));
	struct stack_lower *sl = s->sl;
	struct array *a = sl->a;
	struct member_io *mio = s->mio;

	array_direct_read_end(a, &a->e->reactors[s->reactor], s->start_ns);
	if (res) {
		/* the level reads it again, rebuilds it from the others if need
		   be, and fails the member as md does */
		stack_submit_request(sl, lower->r, s, mio, s->off);
		return;
	}
	sio_put(sl, s);
	member_stacked_finish(mio, 0);          /* from the poll: no extra round */
}

static void stack_submit(void *ctx, struct reactor *r, struct member_io *mio, uint64_t off)
{
	struct stack_lower *sl = ctx;
	struct stack_io *s = sl->free[r->index];
	struct array *a = sl->a;
	struct engine_reactor *er = &a->e->reactors[r->index];
	struct member *m;
	uint64_t msector;

	if (s)
		sl->free[r->index] = s->next;
	else if (!(s = malloc(sizeof(*s)))) {   /* first use on this reactor: then reused */
		member_stacked_done(mio, -ENOMEM);
		return;
	}
	s->sl = sl;
	s->mio = mio;
	s->reactor = r->index;
	s->off = off;
	/* (member_submit runs on r's thread, and both arrays are of one
	   engine: er is r's) */
	if (mio->kind == MEMBER_READ && &er->r == r &&
	    array_direct_read_begin(a, er, off / 512, mio->len / 512, &m, &msector)) {
		struct member_io *lo = &s->lower;

		s->start_ns = reactor_now_ns(r);
		/* every field the caller does not set zeroed (the slot is
		   malloc'ed and reused): no stale iov, flags or context */
		*lo = (struct member_io){ .kind = MEMBER_READ, .buf = mio->buf, .len = mio->len,
					  .sector = msector, .m = m, .done = direct_done };
		member_submit(r, lo);   /* sets the rest */
		return;
	}
	stack_submit_request(sl, r, s, mio, off);
}

struct sync_req {
	_Atomic bool done;
	int res;
};

static void sync_req_done(struct uraid_io *io, int res)
{
	struct sync_req *w = io->ctx;

	w->res = res;
	atomic_store(&w->done, true);
}

/* A blocking request of the lower array, off the reactors (see the top). */
static int stack_run_sync(struct stack_lower *sl, struct uraid_io *io)
{
	struct sync_req w = { .res = 0 };

	atomic_init(&w.done, false);
	io->done = sync_req_done;
	io->ctx = &w;
	int rc = uraid_array_submit((struct uraid_array *)sl->a, 0, io);
	if (rc)
		return rc;
	meta_worker_help(sl->a->e, sl->a, &w.done);
	return w.res;
}

static int stack_rw_sync(void *ctx, bool write, void *buf, size_t len, uint64_t off)
{
	struct uraid_io io = { .op = write ? URAID_IO_WRITE : URAID_IO_READ,
			       .flags = write ? URAID_IO_FUA : 0, .offset = off,
			       .length = len, .buf = buf };
	return stack_run_sync(ctx, &io);
}

static int stack_flush_sync(void *ctx)
{
	struct uraid_io io = { .op = URAID_IO_FLUSH };
	return stack_run_sync(ctx, &io);
}

static const struct member_stack_ops stack_ops = {
	.submit = stack_submit,
	.rw_sync = stack_rw_sync,
	.flush_sync = stack_flush_sync,
};

static int probe_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	return stack_rw_sync(ctx, false, buf, len, off);
}

int stack_member_open(struct array *upper, struct member *m, struct array *lower,
		      const char *name, struct uraid_probe *p, char *err, size_t errlen)
{
	struct stack_lower *sl = lower->stack_lower;

	m->fd = -1;     /* nothing to close until member_open_stacked */
	if (lower->e != upper->e)
		return uraid_errf(err, errlen, -EINVAL, "%s: an array of another engine; a nested "
				  "array's members must run in its own engine", name);
	if (!upper->e->worker)
		return uraid_errf(err, errlen, -EINVAL, "%s: nested arrays need an engine that runs "
				  "its own threads (URAID_ENGINE_THREADS)", name);
	if (!sl) {
		sl = calloc(1, sizeof(*sl));
		if (sl)
			sl->free = calloc(lower->e->nreactors, sizeof(*sl->free));
		if (!sl || !sl->free) {
			free(sl);
			return uraid_errf(err, errlen, -ENOMEM, "%s: out of memory", name);
		}
		sl->a = lower;
		lower->stack_lower = sl;
	}
	int rc = member_open_stacked(m, name, uraid_array_size((struct uraid_array *)lower) / 512,
				     &stack_ops, sl, array_log(upper), err, errlen);
	if (rc)
		return rc;
	rc = uraid_probe_reader(probe_read, sl, m->dev_sectors, p);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: cannot read the superblock: %s", name,
				  strerror(-rc));
	return 0;
}

void stack_lower_free(struct array *lower)
{
	struct stack_lower *sl = lower->stack_lower;

	if (!sl)
		return;
	for (unsigned i = 0; i < lower->e->nreactors; i++)
		while (sl->free[i]) {
			struct stack_io *s = sl->free[i];
			sl->free[i] = s->next;
			free(s);
		}
	free(sl->free);
	free(sl);
	lower->stack_lower = NULL;
}
