// SPDX-License-Identifier: MIT
/*
 * An array target: (optionally created, then) assembled on a caller-driven
 * engine with one reactor per worker. Worker i submits on reactor i and
 * drives it with uraid_engine_poll, so requests never change threads.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <uraid/create.h>
#include <uraid/engine.h>
#include <uraid/geom.h>

#include "common/errmsg.h"
#include "bench/worker.h"

static int array_create(const struct bench_targets *t, char *err, size_t errlen)
{
	struct uraid_create_opts o = {
		.level = t->level,
		.layout_given = t->layout_given,
		.layout = t->layout,
		.raid_disks = t->npaths,
		.chunk_kib = t->chunk_kib,
		.minor = 2,
		.bitmap = URAID_BITMAP_NONE,
		.name = "bench",
		.homehost = "<none>",
		.flags = URAID_CREATE_ASSUME_CLEAN | URAID_CREATE_FORCE,
		.paths = t->paths,
		.npaths = t->npaths,
	};
	char why[256];
	int rc = uraid_create(&o, NULL, why, sizeof(why));
	if (rc)
		return uraid_errf(err, errlen, rc, "creating the array: %s", why);
	return 0;
}

int bench_array_open(struct bench_run *r, char *err, size_t errlen)
{
	const struct bench_targets *t = r->tg;
	char why[256];
	int rc;

	if (t->flags & BENCH_CREATE) {
		rc = array_create(t, err, errlen);
		if (rc)
			return rc;
	}
	unsigned entries = 256;
	while (entries < r->wl->iodepth * 8 && entries < 4096)
		entries <<= 1;
	struct uraid_engine_opts eo = { .reactors = r->nworkers, .ring_entries = entries };
	rc = uraid_engine_create(&eo, &r->engine);
	if (rc)
		return uraid_errf(err, errlen, rc, "cannot start the engine: %s", strerror(-rc));
	struct uraid_assemble_opts ao = {
		.paths = t->paths,
		.npaths = t->npaths,
		.flags = t->flags & BENCH_BUFFERED ? URAID_ASSEMBLE_BUFFERED : 0,
		.write_cache = t->write_cache,
		.cache_bytes = t->cache_bytes,
		.read_ahead_bytes = t->read_ahead_bytes,
	};
	rc = uraid_array_assemble(r->engine, &ao, &r->array, why, sizeof(why));
	if (rc)
		return uraid_errf(err, errlen, rc, "assembling the array: %s", why);

	rc = bench_set_range(r, 0, uraid_array_size(r->array), "the array", err, errlen);
	if (rc)
		return rc;
	r->ntargets = 1;
	return 0;
}

void bench_array_close(struct bench_run *r)
{
	if (r->array)
		uraid_array_close(r->array);
	r->array = NULL;
	if (r->engine)
		uraid_engine_destroy(r->engine);
	r->engine = NULL;
}

static void array_done(struct uraid_io *io, int result)
{
	struct bench_slot *s = io->ctx;

	bench_complete(s->w, s, result);
}

static int array_submit(struct bench_worker *w, struct bench_slot *s)
{
	s->io = (struct uraid_io){
		.op = s->flush ? URAID_IO_FLUSH : s->write ? URAID_IO_WRITE : URAID_IO_READ,
		.offset = s->flush ? 0 : s->offset,
		.length = s->flush ? 0 : s->len,
		.buf = s->write ? s->wbuf : s->rbuf,
		.done = array_done,
		.ctx = s,
	};
	return uraid_array_submit(w->run->array, w->index, &s->io);
}

/* ns precision: with a rate, a wait that ends late makes the next I/O start late,
 * and that delay counts as its latency (it is measured from the intended start). */
static int array_wait(struct bench_worker *w, int64_t timeout_ns)
{
	int rc = uraid_engine_poll_ns(w->run->engine, w->index, timeout_ns < 0 ? -1 : timeout_ns);

	return rc < 0 ? rc : 0;
}

const struct bench_backend bench_array_backend = {
	.submit = array_submit,
	.wait = array_wait,
};
