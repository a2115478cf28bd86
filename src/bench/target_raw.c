// SPDX-License-Identifier: MIT
/*
 * Raw targets (JBOD): files or block devices opened with O_DIRECT and
 * driven by each worker through its own io_uring, as fio's io_uring engine
 * does (no registered files or buffers, no SQ polling).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/create.h>

#include "common/errmsg.h"
#include "bench/worker.h"

int bench_raw_open(struct bench_run *r, char *err, size_t errlen)
{
	const struct bench_targets *t = r->tg;
	bool writes = r->wl->read_pct < 100;

	for (unsigned i = 0; i < t->npaths; i++)
		r->fds[i] = -1;
	r->ntargets = t->npaths;
	for (unsigned i = 0; i < t->npaths; i++) {
		const char *p = t->paths[i];
		struct stat st;
		int flags = (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC;

		if (stat(p, &st))
			return uraid_errf(err, errlen, -errno, "%s: %s", p, strerror(errno));
		if (S_ISBLK(st.st_mode) && writes)
			flags |= O_EXCL;        /* refuse mounted or otherwise busy devices */
		int fd = open(p, flags | (t->flags & BENCH_BUFFERED ? 0 : O_DIRECT));
		if (fd < 0 && errno == EINVAL && !(t->flags & BENCH_BUFFERED)) {
			fd = open(p, flags);
			if (fd >= 0)
				fprintf(stderr, "uraid bench: %s: O_DIRECT refused by the file "
					"system, using buffered I/O\n", p);
		}
		if (fd < 0)
			return uraid_errf(err, errlen, -errno, "%s: %s", p, strerror(errno));
		r->fds[i] = fd;

		uint64_t sectors;
		int rc = uraid_dev_sectors(fd, &sectors, NULL);
		if (rc)
			return uraid_errf(err, errlen, rc, "%s: cannot get its size: %s", p,
					  strerror(-rc));
		uint64_t bytes = sectors * 512;
		if (r->wl->offset >= bytes)
			return uraid_errf(err, errlen, -EINVAL, "%s: --offset is past its end", p);
		uint64_t len = bytes - r->wl->offset;
		if (r->wl->size && r->wl->size < len)
			len = r->wl->size;
		len -= len % r->align;
		if (len < r->max_bs)
			return uraid_errf(err, errlen, -EINVAL,
					  "%s: the range used (%llu bytes) is smaller than a block", p,
					  (unsigned long long)len);
		r->range_start[i] = r->wl->offset;
		r->range_len[i] = len;
	}
	return 0;
}

void bench_raw_close(struct bench_run *r)
{
	for (unsigned i = 0; i < r->ntargets; i++)
		if (r->fds[i] >= 0)
			close(r->fds[i]);
}

int bench_raw_worker_init(struct bench_worker *w, char *err, size_t errlen)
{
	unsigned entries = 1;

	while (entries < w->run->wl->iodepth)
		entries <<= 1;
	int rc = io_uring_queue_init(entries, &w->ring, 0);
	if (rc)
		return uraid_errf(err, errlen, rc, "worker %u: io_uring_queue_init(%u): %s",
				  w->index, entries, strerror(-rc));
	w->ring_ok = true;
	return 0;
}

void bench_raw_worker_fini(struct bench_worker *w)
{
	if (w->ring_ok)
		io_uring_queue_exit(&w->ring);
	w->ring_ok = false;
}

static int raw_submit(struct bench_worker *w, struct bench_slot *s)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);

	if (!sqe) {             /* cannot happen: the ring holds iodepth entries */
		io_uring_submit(&w->ring);
		sqe = io_uring_get_sqe(&w->ring);
		if (!sqe)
			return -EBUSY;
	}
	int fd = w->run->fds[s->target];
	if (s->write)
		io_uring_prep_write(sqe, fd, s->wbuf, s->len, s->offset);
	else
		io_uring_prep_read(sqe, fd, s->rbuf, s->len, s->offset);
	io_uring_sqe_set_data(sqe, s);
	return 0;
}

static int raw_wait(struct bench_worker *w, int64_t timeout_ns)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts;
	int rc;

	if (timeout_ns >= 0) {
		ts.tv_sec = timeout_ns / 1000000000;
		ts.tv_nsec = timeout_ns % 1000000000;
	}
	rc = io_uring_submit_and_wait_timeout(&w->ring, &cqe, 1, timeout_ns >= 0 ? &ts : NULL,
					      NULL);
	if (rc < 0 && rc != -ETIME && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY)
		return rc;

	unsigned head, n = 0;
	io_uring_for_each_cqe(&w->ring, head, cqe) {
		struct bench_slot *s = io_uring_cqe_get_data(cqe);
		int res = cqe->res;
		if (res >= 0 && (uint32_t)res != s->len)
			res = -EIO;     /* short transfer: past the end of the target */
		n++;
		bench_complete(w, s, res < 0 ? res : 0);
	}
	io_uring_cq_advance(&w->ring, n);
	return 0;
}

const struct bench_backend bench_raw_backend = {
	.submit = raw_submit,
	.wait = raw_wait,
};
