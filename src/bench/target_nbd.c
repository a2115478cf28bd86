// SPDX-License-Identifier: MIT
/*
 * NBD targets: exports named by URI (nbd://, nbds://, nbd+unix://,
 * nbds+unix://), driven through libnbd's asynchronous API. Each worker
 * opens its own connection to each of its targets and keeps iodepth
 * commands in flight on it from its one thread: nbd_aio_pread/pwrite queue
 * a command, poll(2) on the connections' sockets in the directions libnbd
 * asks for, nbd_aio_notify_read/write run the state machine, and the
 * completion callback hands the slot to bench_complete. That is the shape
 * of fio's nbd engine, so that both measure the server, not the client.
 *
 * The export's size comes from the server (one probing connection at
 * open); a read-only export refuses a workload that writes.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <libnbd.h>

#include "common/errmsg.h"
#include "bench/worker.h"

bool bench_is_nbd_uri(const char *path)
{
	static const char *const schemes[] = { "nbd://", "nbds://", "nbd+unix://",
					       "nbds+unix://", "nbd+vsock://", "nbds+vsock://" };

	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (!strncmp(path, schemes[i], strlen(schemes[i])))
			return true;
	return false;
}

/* libnbd's last error, as -errno (EIO when it gives none). */
static int nbd_rc(void)
{
	int e = nbd_get_errno();
	return e > 0 ? -e : -EIO;
}

static int nbd_connect_target(const char *uri, struct nbd_handle **out, char *err,
			      size_t errlen)
{
	struct nbd_handle *h = nbd_create();

	if (!h)
		return uraid_errf(err, errlen, -ENOMEM, "%s: %s", uri, nbd_get_error());
	if (nbd_supports_uri(h) != 1) {
		nbd_close(h);
		return uraid_errf(err, errlen, -ENOTSUP, "%s: this libnbd cannot parse NBD URIs",
				  uri);
	}
	if (nbd_connect_uri(h, uri) == -1) {
		int rc = nbd_rc();
		uraid_errf(err, errlen, rc, "%s: cannot connect: %s", uri, nbd_get_error());
		nbd_close(h);
		return rc;
	}
	*out = h;
	return 0;
}

int bench_nbd_open(struct bench_run *r, char *err, size_t errlen)
{
	const struct bench_targets *t = r->tg;
	bool writes = bench_workload_writes(r->wl);

	r->ntargets = t->npaths;
	for (unsigned i = 0; i < t->npaths; i++)
		r->fds[i] = -1;
	for (unsigned i = 0; i < t->npaths; i++) {
		const char *uri = t->paths[i];
		struct nbd_handle *h;
		int rc = nbd_connect_target(uri, &h, err, errlen);
		if (rc)
			return rc;
		int64_t size = nbd_get_size(h);
		int ro = nbd_is_read_only(h);
		nbd_shutdown(h, 0);
		nbd_close(h);
		/* a size the server gives is checked before it becomes the range */
		if (size < 0)
			return uraid_errf(err, errlen, -EIO, "%s: the server gives no size", uri);
		if (writes && ro == 1)
			return uraid_errf(err, errlen, -EROFS, "%s: the export is read-only: the "
					  "workload writes; give a read workload (--rw=read or "
					  "randread)", uri);
		rc = bench_set_range(r, i, (uint64_t)size - (uint64_t)size % 512, uri, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

int bench_nbd_worker_init(struct bench_worker *w, char *err, size_t errlen)
{
	const struct bench_targets *t = w->run->tg;

	for (unsigned i = 0; i < w->ntargets; i++) {
		unsigned tg = w->targets[i];
		if (w->nbd[tg])
			continue;
		int rc = nbd_connect_target(t->paths[tg], &w->nbd[tg], err, errlen);
		if (rc)
			return rc;
		w->nbd_can_flush[tg] = nbd_can_flush(w->nbd[tg]) == 1;
	}
	return 0;
}

void bench_nbd_worker_fini(struct bench_worker *w)
{
	for (unsigned i = 0; i < BENCH_MAX_TARGETS; i++) {
		if (!w->nbd[i])
			continue;
		nbd_shutdown(w->nbd[i], 0);
		nbd_close(w->nbd[i]);
		w->nbd[i] = NULL;
	}
}

/*
 * Runs inside nbd_aio_notify_* (or a submission) on the worker's thread: the
 * slot waits on the worker's ready list until nbd_ready_complete dates it,
 * after the notify calls have read and handled the replies. That is where
 * fio's nbd engine dates a completion (its getevents returns, then one clock
 * read for the batch), so that both measure the same span: the reply's
 * reading and handling is part of an I/O's latency for both. Dated when
 * ppoll returned, before the reply was read, the latency left part of each
 * I/O out: at QD 1 (4 KiB randwrite, nbdkit memory + 1 ms delay, 2 s runs,
 * load 8-9) the time of a cycle outside the latency (1/IOPS - mean) was
 * 10-29 us in 4 runs; dated here, -1.3 to 0.2 us; fio's: 1.6 to 4.2 us.
 */
static int nbd_done(void *user_data, int *error)
{
	struct bench_slot *s = user_data;
	struct bench_worker *w = s->w;

	s->nbd_res = *error ? -*error : 0;
	s->nbd_next = w->nbd_ready;
	w->nbd_ready = s;
	return 1;       /* retire the command: nothing polls it by cookie */
}

/* Complete what is on the ready list, dated now (one clock read for them). */
static void nbd_ready_complete(struct bench_worker *w)
{
	if (!w->nbd_ready)
		return;
	uint64_t now = bench_now_ns();
	while (w->nbd_ready) {
		struct bench_slot *s = w->nbd_ready;
		w->nbd_ready = s->nbd_next;
		w->nbd_completed++;
		bench_complete_at(w, s, s->nbd_res, now);
	}
}

static int nbd_submit(struct bench_worker *w, struct bench_slot *s)
{
	struct nbd_handle *h = w->nbd[s->target];
	nbd_completion_callback cb = { .callback = nbd_done, .user_data = s };
	int64_t cookie;

	if (s->flush && !w->nbd_can_flush[s->target]) {
		/* a server without flush has nothing to make durable */
		w->nbd_completed++;
		bench_complete(w, s, 0);
		return 0;
	}
	if (s->flush)
		cookie = nbd_aio_flush(h, cb, 0);
	else if (s->write)
		cookie = nbd_aio_pwrite(h, s->wbuf, s->len, s->offset, cb, 0);
	else
		cookie = nbd_aio_pread(h, s->rbuf, s->len, s->offset, cb, 0);
	return cookie == -1 ? nbd_rc() : 0;     /* the caller reports it */
}

/*
 * Poll every connection of the worker in the directions libnbd waits for,
 * run the state machines on what is ready, until a command completed or
 * the timeout passed (-1: until one completes).
 */
static int nbd_wait(struct bench_worker *w, int64_t timeout_ns)
{
	uint64_t done0 = w->nbd_completed;

	nbd_ready_complete(w);  /* replies read during a submission */
	if (w->nbd_completed != done0)
		return 0;
	uint64_t deadline = timeout_ns >= 0 ? bench_now_ns() + (uint64_t)timeout_ns : 0;
	struct pollfd pfd[BENCH_MAX_TARGETS];
	struct nbd_handle *hs[BENCH_MAX_TARGETS];

	for (;;) {
		unsigned n = 0;
		for (unsigned i = 0; i < w->ntargets; i++) {
			struct nbd_handle *h = w->nbd[w->targets[i]];
			unsigned dir = nbd_aio_get_direction(h);
			int fd = nbd_aio_get_fd(h);
			if (fd < 0)
				return nbd_rc();
			hs[n] = h;
			pfd[n].fd = fd;
			pfd[n].events = (short)((dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
						(dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0));
			pfd[n].revents = 0;
			n++;
		}
		struct timespec ts, *tsp = NULL;
		if (timeout_ns >= 0) {
			uint64_t now = bench_now_ns();
			uint64_t left = deadline > now ? deadline - now : 0;
			ts.tv_sec = (time_t)(left / 1000000000ull);
			ts.tv_nsec = (long)(left % 1000000000ull);
			tsp = &ts;
		}
		int rc = ppoll(pfd, n, tsp, NULL);
		if (rc < 0 && errno != EINTR)
			return -errno;
		for (unsigned i = 0; rc > 0 && i < n; i++) {
			short ev = pfd[i].revents;
			if ((ev & (POLLIN | POLLHUP | POLLERR)) && nbd_aio_notify_read(hs[i]) == -1)
				return nbd_rc();
			if ((ev & POLLOUT) && nbd_aio_notify_write(hs[i]) == -1)
				return nbd_rc();
		}
		nbd_ready_complete(w);
		if (w->nbd_completed != done0 || rc == 0)
			return 0;
		if (timeout_ns >= 0 && bench_now_ns() >= deadline)
			return 0;
	}
}

const struct bench_backend bench_nbd_backend = {
	.submit = nbd_submit,
	.wait = nbd_wait,
};
