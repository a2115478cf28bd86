// SPDX-License-Identifier: MIT
/*
 * Raw targets (JBOD): files or block devices opened with O_DIRECT and
 * driven by each worker through its own io_uring, as fio's io_uring engine
 * does with --registerfiles --fixedbufs: the targets and the worker's
 * buffers are registered with the ring, so that the kernel does not look up
 * the file and map the buffer again for every I/O (where registering is
 * refused, e.g. over RLIMIT_MEMLOCK, the plain calls are used). No SQ polling.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/create.h>

#include "common/errmsg.h"
#include "common/file_lock.h"
#include "common/range_path.h"
#include "bench/worker.h"
#include "io/reactor.h"

int bench_raw_open(struct bench_run *r, char *err, size_t errlen)
{
	const struct bench_targets *t = r->tg;
	bool writes = bench_workload_writes(r->wl);

	for (unsigned i = 0; i < t->npaths; i++)
		r->fds[i] = -1;
	r->ntargets = t->npaths;
	for (unsigned i = 0; i < t->npaths; i++) {
		const char *p = t->paths[i];
		struct stat st;
		int flags = (writes ? O_RDWR : O_RDONLY) | O_CLOEXEC;

		if (stat(p, &st))
			return uraid_errf(err, errlen, -errno, "%s: %s", p, strerror(errno));
		/* a target given again (two workers on one file) is claimed once */
		bool again = false;
		for (unsigned j = 0; j < i && !again; j++) {
			struct stat o;
			again = fstat(r->fds[j], &o) == 0 && uraid_same_file(&o, &st);
		}
		if (S_ISBLK(st.st_mode) && writes && !again)
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
		/* not a file another uraid writes, nor one it serves while this writes */
		if (writes && !again) {
			/* a block device: a lock on all of it keeps off ranges of it (pools) */
			int rc = S_ISBLK(st.st_mode) ? uraid_block_whole_lock(fd, p, err, errlen)
						     : uraid_file_lock(fd, true, p, err, errlen);
			if (rc)
				return rc;
		}

		uint64_t sectors;
		int rc = uraid_dev_sectors(fd, &sectors, NULL);
		if (rc)
			return uraid_errf(err, errlen, rc, "%s: cannot get its size: %s", p,
					  strerror(-rc));
		rc = bench_set_range(r, i, sectors * 512, p, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

void bench_raw_close(struct bench_run *r)
{
	for (unsigned i = 0; i < r->ntargets; i++)
		if (r->fds[i] >= 0)
			close(r->fds[i]);
}

/*
 * The ring is set up as fio's io_uring engine sets up its own: completions
 * of I/O that io-wq threads finish (tmpfs and most buffered writes go there)
 * wait for the worker's next io_uring_enter instead of interrupting it
 * (COOP_TASKRUN, DEFER_TASKRUN; the latter needs a single issuer, so the
 * ring starts disabled and the worker thread enables it, becoming its
 * issuer). Older kernels get the plain ring.
 */
int bench_raw_worker_init(struct bench_worker *w, char *err, size_t errlen)
{
	static const unsigned tries[] = {
		IORING_SETUP_R_DISABLED | IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER |
			IORING_SETUP_DEFER_TASKRUN,
		IORING_SETUP_COOP_TASKRUN,
		0,
	};
	unsigned entries = 1;
	int rc = -EINVAL;

	while (entries < w->run->wl->iodepth)
		entries <<= 1;
	for (size_t i = 0; i < sizeof(tries) / sizeof(tries[0]) && rc == -EINVAL; i++) {
		struct io_uring_params p = { .flags = tries[i] };
		rc = io_uring_queue_init_params(entries, &w->ring, &p);
		if (!rc)
			w->ring_disabled = tries[i] & IORING_SETUP_R_DISABLED;
	}
	if (rc)
		return uraid_errf(err, errlen, rc, "worker %u: io_uring_queue_init(%u): %s",
				  w->index, entries, strerror(-rc));
	w->ring_ok = true;
	return 0;
}

/* In the worker thread: enable a ring that waits for its issuer, register
 * the targets and the buffers with it. */
static int raw_start(struct bench_worker *w)
{
	struct bench_run *r = w->run;

	if (w->ring_disabled) {
		w->ring_disabled = false;
		int rc = ring_enable(&w->ring);
		if (rc)
			return rc;
	}
	w->fixed_files = io_uring_register_files(&w->ring, r->fds, r->ntargets) == 0;
	struct iovec iov = { .iov_base = w->bufs, .iov_len = w->bufs_bytes };
	w->fixed_bufs = io_uring_register_buffers(&w->ring, &iov, 1) == 0;
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
	int fd = w->fixed_files ? (int)s->target : w->run->fds[s->target];
	if (s->flush)
		io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC);
	else if (s->write && w->fixed_bufs)
		io_uring_prep_write_fixed(sqe, fd, s->wbuf, s->len, s->offset, 0);
	else if (s->write)
		io_uring_prep_write(sqe, fd, s->wbuf, s->len, s->offset);
	else if (w->fixed_bufs)
		io_uring_prep_read_fixed(sqe, fd, s->rbuf, s->len, s->offset, 0);
	else
		io_uring_prep_read(sqe, fd, s->rbuf, s->len, s->offset);
	if (w->fixed_files)
		sqe->flags |= IOSQE_FIXED_FILE;
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
	uint64_t now = bench_now_ns();  /* once for the batch (bench_complete_at) */
	io_uring_for_each_cqe(&w->ring, head, cqe) {
		struct bench_slot *s = io_uring_cqe_get_data(cqe);
		int res = cqe->res;
		if (res >= 0 && (uint32_t)res != s->len && !s->flush)
			res = -EIO;     /* short transfer: past the end of the target */
		n++;
		bench_complete_at(w, s, res < 0 ? res : 0, now);
	}
	io_uring_cq_advance(&w->ring, n);
	return 0;
}

const struct bench_backend bench_raw_backend = {
	.start = raw_start,
	.submit = raw_submit,
	.wait = raw_wait,
};
