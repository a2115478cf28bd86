// SPDX-License-Identifier: MIT
/*
 * Raw targets at queue depth 1: each I/O is one pread/pwrite (fdatasync for a
 * replayed sync) in the worker thread, as fio's psync engine does. With one
 * I/O outstanding an asynchronous interface buys nothing, and where a file
 * cannot be read or written without blocking (tmpfs, buffered writes)
 * io_uring hands every I/O to an io-wq thread: a wake-up and two context
 * switches per I/O. On tmpfs, 4 KiB randread QD 1, taskset -c 1 on a 2-CPU
 * VM, 7 interleaved rounds of 2 s at load 8.5-9.7, medians of CPU time per
 * I/O (the process's, over the measured window): uraid bench through
 * io_uring 6.46 us, with pread 3.36 us, fio's psync 3.42 us (its job
 * thread), pvsync2 3.43 us; fio's io_uring 5.3 us without its io-wq thread's
 * share, which fio does not count. The IOPS of those runs say the opposite
 * (io_uring 153K, pread 75K, psync 112K) and swing 2-5x between rounds:
 * on a CPU shared with other jobs a thread that never sleeps gets only its
 * share of it, while one that sleeps on every I/O and a kernel thread doing
 * the copy are scheduled as two; on a CPU of its own the rate is the
 * inverse of the CPU time per I/O. --ioengine=io_uring, libaio or posixaio
 * keep io_uring at QD 1 (BENCH_URING). The I/O is completed by the next
 * wait, not inside submit: the worker's fill loop would otherwise never leave.
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
