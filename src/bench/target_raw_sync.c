// SPDX-License-Identifier: MIT
/*
 * Raw targets at queue depth 1: each I/O is one pread/pwrite (fdatasync for a
 * replayed sync) in the worker thread, as fio's psync engine does. With one
 * I/O outstanding an asynchronous interface buys nothing, and where a file
 * cannot be read or written without blocking (tmpfs, buffered writes)
 * io_uring hands every I/O to an io-wq thread: a wake-up and two context
 * switches per I/O. On tmpfs at 4 KiB QD 1 (taskset -c 1 on a 2-CPU VM,
 * load 12) that made uraid bench cost 6.7-9.8 us of CPU per I/O where fio's
 * psync cost 4.0-6.1 (scripts/bench.sh, the fidelity block's note on fio's
 * candidates). --ioengine=io_uring, libaio or posixaio keep io_uring at QD 1
 * (BENCH_URING). The I/O is completed by the next wait, not inside submit:
 * the worker's fill loop would otherwise never leave.
 */
#include <errno.h>
#include <time.h>
#include <unistd.h>

#include "bench/worker.h"

static int sync_submit(struct bench_worker *w, struct bench_slot *s)
{
	int fd = w->run->fds[s->target];
	ssize_t n;

	if (s->flush)
		n = fdatasync(fd);
	else if (s->write)
		n = pwrite(fd, s->wbuf, s->len, (off_t)s->offset);
	else
		n = pread(fd, s->rbuf, s->len, (off_t)s->offset);
	w->sync_now = bench_now_ns();
	if (n < 0)
		w->sync_res = -errno;
	else if (!s->flush && (size_t)n != s->len)
		w->sync_res = -EIO;     /* short transfer: past the end of the target */
	else
		w->sync_res = 0;
	w->sync_slot = s;
	return 0;
}

static int sync_wait(struct bench_worker *w, int64_t timeout_ns)
{
	struct bench_slot *s = w->sync_slot;

	if (s) {
		w->sync_slot = NULL;
		bench_complete_at(w, s, w->sync_res, w->sync_now);
		return 0;
	}
	if (timeout_ns > 0) {   /* a rate or a timed replay: until the next start */
		struct timespec ts = { (time_t)(timeout_ns / 1000000000),
				       (long)(timeout_ns % 1000000000) };
		nanosleep(&ts, NULL);
	}
	return 0;
}

const struct bench_backend bench_raw_sync_backend = {
	.submit = sync_submit,
	.wait = sync_wait,
};
