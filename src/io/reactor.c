// SPDX-License-Identifier: MIT
/*
 * The reactor: an io_uring, an overflow list for operations that found no
 * ring space, a list of deferred completions, and an MPSC inbox woken through
 * an eventfd that the ring itself reads.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/reactor.h"

#define REACTOR_DEFAULT_ENTRIES 256

static void reactor_event_cb(struct io_op *op, int res)
{
	(void)op;
	(void)res;
}

static int reactor_setup(struct reactor *r, unsigned index, unsigned entries, bool owned)
{
	struct io_uring_params p;
	int rc = -EINVAL;

	memset(r, 0, sizeof(*r));
	r->index = index;
	r->event_fd = -1;
	atomic_init(&r->inbox, NULL);
	if (entries == 0)
		entries = REACTOR_DEFAULT_ENTRIES;

	/*
	 * Not COOP_TASKRUN/DEFER_TASKRUN: completion work runs in the task that
	 * submitted, and the thread polling a reactor may change (setup on one
	 * thread, a worker later); without an IPI a completion could then wait
	 * for a thread that is not looking at the ring.
	 */
	/* CQSIZE: the budget's completions (twice the SQ, as the default CQ
	   would be) and as many socket completions again as REACTOR_SOCKET_CQ */
	unsigned cq_entries = 2 * entries + REACTOR_SOCKET_CQ;
	if (owned) {
		/* one thread for the ring's whole life: completions wait for that
		   thread's next io_uring_enter instead of interrupting it (as fio
		   sets up its rings); enabled from that thread by reactor_claim */
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_SINGLE_ISSUER |
			  IORING_SETUP_DEFER_TASKRUN | IORING_SETUP_R_DISABLED | IORING_SETUP_CQSIZE;
		p.cq_entries = cq_entries;
		rc = io_uring_queue_init_params(entries, &r->ring, &p);
		r->disabled = rc == 0;
	}
	if (rc == -EINVAL) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_SUBMIT_ALL | IORING_SETUP_CQSIZE;
		p.cq_entries = cq_entries;
		rc = io_uring_queue_init_params(entries, &r->ring, &p);
	}
	if (rc == -EINVAL) {
		memset(&p, 0, sizeof(p));
		p.flags = IORING_SETUP_CQSIZE;
		p.cq_entries = cq_entries;
		rc = io_uring_queue_init_params(entries, &r->ring, &p);
	}
	if (rc < 0)
		return rc;
	/* Socket completions beyond the CQ are then held by the kernel, never
	   lost (Linux 5.5 and later) */
	if (!(p.features & IORING_FEAT_NODROP)) {
		io_uring_queue_exit(&r->ring);
		return -EOPNOTSUPP;
	}
	r->max_in_flight = 2 * (uint64_t)r->ring.sq.ring_entries - 1;
	if (r->max_in_flight >= r->ring.cq.ring_entries)
		r->max_in_flight = r->ring.cq.ring_entries - 1;   /* one CQ slot for the eventfd read */

	/* Blocking on purpose: io_uring then polls it instead of failing with -EAGAIN. */
	r->event_fd = eventfd(0, EFD_CLOEXEC);
	if (r->event_fd < 0) {
		rc = -errno;
		io_uring_queue_exit(&r->ring);
		return rc;
	}
	r->event_op.cb = reactor_event_cb;
	return 0;
}

int reactor_init(struct reactor *r, unsigned index, unsigned entries)
{
	return reactor_setup(r, index, entries, false);
}

int reactor_init_owned(struct reactor *r, unsigned index, unsigned entries)
{
	return reactor_setup(r, index, entries, true);
}

int ring_enable(struct io_uring *ring)
{
	/* io_uring_enable_rings, which Debian 12's liburing does not export */
	if (syscall(__NR_io_uring_register, ring->ring_fd, IORING_REGISTER_ENABLE_RINGS, NULL, 0) < 0)
		return -errno;
	return 0;
}

int reactor_claim(struct reactor *r)
{
	if (!r->disabled)
		return 0;
	int rc = ring_enable(&r->ring);
	if (rc == 0)
		r->disabled = false;
	return rc;
}

void reactor_fini(struct reactor *r)
{
	if (r->event_fd < 0)
		return;
	io_uring_queue_exit(&r->ring);
	close(r->event_fd);
	r->event_fd = -1;
}

/* Completed when the peer acts: outside the budget (see reactor.h). */
static bool is_socket_op(uint8_t opcode)
{
	return opcode == IORING_OP_RECV || opcode == IORING_OP_SENDMSG || opcode == IORING_OP_ACCEPT;
}

static bool reactor_try_issue(struct reactor *r, struct io_op *op)
{
	struct io_uring_sqe *sqe;
	bool sock = is_socket_op(op->opcode);

	if (!sock && r->in_flight >= r->max_in_flight)
		return false;
	sqe = io_uring_get_sqe(&r->ring);
	if (!sqe)
		return false;
	switch (op->opcode) {
	case IORING_OP_READ:
		io_uring_prep_read(sqe, op->fd, op->buf, (unsigned)op->len, op->off);
		break;
	case IORING_OP_WRITE:
		io_uring_prep_write(sqe, op->fd, op->buf, (unsigned)op->len, op->off);
		sqe->rw_flags = op->rw_flags;
		break;
	case IORING_OP_WRITEV:
		io_uring_prep_writev(sqe, op->fd, op->buf, (unsigned)op->len, op->off);
		sqe->rw_flags = op->rw_flags;
		break;
	case IORING_OP_FSYNC:
		io_uring_prep_fsync(sqe, op->fd, IORING_FSYNC_DATASYNC);
		break;
	case IORING_OP_FALLOCATE:
		io_uring_prep_fallocate(sqe, op->fd, op->rw_flags, (off_t)op->off, (off_t)op->len);
		break;
	case IORING_OP_RECV:
		io_uring_prep_recv(sqe, op->fd, op->buf, (size_t)op->len, op->rw_flags);
		break;
	case IORING_OP_SENDMSG:
		io_uring_prep_sendmsg(sqe, op->fd, op->buf, (unsigned)op->rw_flags);
		break;
	case IORING_OP_ACCEPT:
		io_uring_prep_accept(sqe, op->fd, NULL, NULL, op->rw_flags);
		break;
	case IORING_OP_ASYNC_CANCEL:
		io_uring_prep_cancel(sqe, op->buf, 0);
		break;
	case IORING_OP_TIMEOUT:
		io_uring_prep_timeout(sqe, op->buf, 0, 0);
		break;
	default:
		io_uring_prep_nop(sqe);
		break;
	}
	io_uring_sqe_set_data(sqe, op);
	if (sock)
		r->sock_in_flight++;
	else
		r->in_flight++;
	r->queued++;
	return true;
}

static void reactor_queue(struct reactor *r, struct io_op *op)
{
	op->next = NULL;
	if (!r->overflow_head && reactor_try_issue(r, op))
		return;
	if (r->overflow_tail)
		r->overflow_tail->next = op;
	else
		r->overflow_head = op;
	r->overflow_tail = op;
}

/* Move waiting operations into the ring while there is room; true if some remain. */
static bool reactor_drain_overflow(struct reactor *r)
{
	while (r->overflow_head) {
		struct io_op *op = r->overflow_head;

		if (!reactor_try_issue(r, op))
			return true;
		r->overflow_head = op->next;
		if (!r->overflow_head)
			r->overflow_tail = NULL;
		op->next = NULL;
	}
	return false;
}

/* Fill the fields that are submitted later, possibly from the overflow list. */
static void reactor_prep(struct reactor *r, struct io_op *op, uint8_t opcode, int fd,
			 void *buf, uint64_t len, uint64_t off, int rw_flags)
{
	op->opcode = opcode;
	op->fd = fd;
	op->buf = buf;
	op->len = len;
	op->off = off;
	op->rw_flags = rw_flags;
	reactor_queue(r, op);
}

void reactor_read(struct reactor *r, struct io_op *op, int fd, void *buf, uint32_t len,
		  uint64_t off)
{
	reactor_prep(r, op, IORING_OP_READ, fd, buf, len, off, 0);
}

void reactor_write(struct reactor *r, struct io_op *op, int fd, const void *buf, uint32_t len,
		   uint64_t off, int rw_flags)
{
	reactor_prep(r, op, IORING_OP_WRITE, fd, (void *)buf, len, off, rw_flags);
}

void reactor_writev(struct reactor *r, struct io_op *op, int fd, const struct iovec *iov,
		    unsigned iovcnt, uint64_t off, int rw_flags)
{
	reactor_prep(r, op, IORING_OP_WRITEV, fd, (void *)iov, iovcnt, off, rw_flags);
}

void reactor_fsync(struct reactor *r, struct io_op *op, int fd)
{
	reactor_prep(r, op, IORING_OP_FSYNC, fd, NULL, 0, 0, 0);
}

void reactor_fallocate(struct reactor *r, struct io_op *op, int fd, int mode, uint64_t off,
		       uint64_t len)
{
	reactor_prep(r, op, IORING_OP_FALLOCATE, fd, NULL, len, off, mode);
}

void reactor_recv(struct reactor *r, struct io_op *op, int fd, void *buf, size_t len)
{
	reactor_prep(r, op, IORING_OP_RECV, fd, buf, len, 0, 0);
}

void reactor_sendmsg(struct reactor *r, struct io_op *op, int fd, const struct msghdr *msg)
{
	/* MSG_NOSIGNAL: a client that hangs up must cost an error, not the process */
	reactor_prep(r, op, IORING_OP_SENDMSG, fd, (void *)msg, 0, 0, MSG_NOSIGNAL);
}

void reactor_accept(struct reactor *r, struct io_op *op, int fd)
{
	reactor_prep(r, op, IORING_OP_ACCEPT, fd, NULL, 0, 0, SOCK_CLOEXEC);
}

void reactor_cancel(struct reactor *r, struct io_op *op, struct io_op *target)
{
	reactor_prep(r, op, IORING_OP_ASYNC_CANCEL, -1, target, 0, 0, 0);
}

void reactor_timeout(struct reactor *r, struct io_op *op, struct __kernel_timespec *ts)
{
	reactor_prep(r, op, IORING_OP_TIMEOUT, -1, ts, 0, 0, 0);
}

void reactor_complete(struct reactor *r, struct io_op *op, int res)
{
	op->res = res;
	op->next = NULL;
	if (r->deferred_tail)
		r->deferred_tail->next = op;
	else
		r->deferred_head = op;
	r->deferred_tail = op;
}

void reactor_post(struct reactor *r, struct reactor_msg *m)
{
	struct reactor_msg *head = atomic_load_explicit(&r->inbox, memory_order_relaxed);
	uint64_t one = 1;

	do {
		atomic_store_explicit(&m->next, head, memory_order_relaxed);
	} while (!atomic_compare_exchange_weak_explicit(&r->inbox, &head, m,
							memory_order_release,
							memory_order_relaxed));
	/*
	 * Only the post that found the inbox empty needs to wake the reactor,
	 * and not one from a callback of its poll: nobody sleeps in a poll of
	 * r meanwhile, and every poll looks at the inbox before it sleeps (a
	 * wake-up through the event fd is a write(2) and a completion to reap;
	 * the write-back journal's destage resumes its units from their own
	 * reactor several times per I/O). Outside a poll another thread may be
	 * polling r now (a caller-driven engine's), so such a post wakes it.
	 */
	if (!head && !(reactor_is_current(r) && r->in_poll)) {
		while (write(r->event_fd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
	}
}

bool reactor_is_current(const struct reactor *r)
{
	return atomic_load_explicit(&r->thread_known, memory_order_acquire) &&
	       pthread_equal(atomic_load_explicit(&r->thread, memory_order_relaxed), pthread_self());
}

static void reactor_arm_event(struct reactor *r)
{
	struct io_uring_sqe *sqe;

	if (r->event_armed)
		return;
	sqe = io_uring_get_sqe(&r->ring);
	if (!sqe)
		return;                 /* ring full: try again after the next submit */
	io_uring_prep_read(sqe, r->event_fd, &r->event_buf, sizeof(r->event_buf), 0);
	io_uring_sqe_set_data(sqe, &r->event_op);
	r->event_armed = true;
	r->queued++;
}

/*
 * Hand the ring to the kernel; wait for a completion when asked. -ETIME,
 * -EINTR, and -EAGAIN/-EBUSY (the kernel could not take more now: what is
 * left stays in the SQ ring for the next call) are not errors here.
 */
static int reactor_submit(struct reactor *r, int64_t wait_ns)
{
	struct io_uring_cqe *cqe;
	struct __kernel_timespec ts;
	int rc;

	if (wait_ns == 0) {
		rc = r->queued ? io_uring_submit(&r->ring) : 0;
	} else if (wait_ns < 0) {
		rc = io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, NULL, NULL);
	} else {
		ts.tv_sec = wait_ns / 1000000000;
		ts.tv_nsec = wait_ns % 1000000000;
		rc = io_uring_submit_and_wait_timeout(&r->ring, &cqe, 1, &ts, NULL);
	}
	r->queued = io_uring_sq_ready(&r->ring);
	if (rc == -ETIME || rc == -EINTR || rc == -EAGAIN || rc == -EBUSY)
		return 0;
	return rc < 0 ? rc : 0;
}

static int reactor_reap(struct reactor *r)
{
	struct io_uring_cqe *cqe;
	int ran = 0;

	while (io_uring_peek_cqe(&r->ring, &cqe) == 0) {
		struct io_op *op = io_uring_cqe_get_data(cqe);
		int res = cqe->res;

		io_uring_cqe_seen(&r->ring, cqe);
		if (op == &r->event_op) {
			r->event_armed = false;
			continue;
		}
		if (is_socket_op(op->opcode))
			r->sock_in_flight--;
		else
			r->in_flight--;
		op->cb(op, res);
		ran++;
	}
	return ran;
}

static int reactor_run_inbox(struct reactor *r)
{
	struct reactor_msg *m = atomic_exchange_explicit(&r->inbox, NULL, memory_order_acquire);
	struct reactor_msg *fifo = NULL, *next;
	int ran = 0;

	while (m) {                     /* the inbox is a stack: reverse into arrival order */
		next = atomic_load_explicit(&m->next, memory_order_relaxed);
		atomic_store_explicit(&m->next, fifo, memory_order_relaxed);
		fifo = m;
		m = next;
	}
	for (m = fifo; m; m = next) {
		next = atomic_load_explicit(&m->next, memory_order_relaxed);
		m->fn(r, m);
		ran++;
	}
	return ran;
}

static int reactor_run_deferred(struct reactor *r)
{
	struct io_op *op = r->deferred_head, *next;
	int ran = 0;

	/* Only what was deferred before this point: a callback that defers runs next poll. */
	r->deferred_head = r->deferred_tail = NULL;
	for (; op; op = next) {
		next = op->next;
		op->next = NULL;
		op->cb(op, op->res);
		ran++;
	}
	return ran;
}

int reactor_poll(struct reactor *r, int timeout_ms)
{
	return reactor_poll_ns(r, timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000);
}

int reactor_poll_ns(struct reactor *r, int64_t timeout_ns)
{
	bool idle, more;
	int ran = 0, rc;

	/* written only when the polling thread changes (a caller-driven engine
	   may be polled by another thread later), as other threads read it */
	pthread_t self = pthread_self();
	if (!atomic_load_explicit(&r->thread_known, memory_order_relaxed) ||
	    !pthread_equal(atomic_load_explicit(&r->thread, memory_order_relaxed), self)) {
		atomic_store_explicit(&r->thread, self, memory_order_relaxed);
		atomic_store_explicit(&r->thread_known, true, memory_order_release);
	}

	/* Fill the ring from the overflow list, submitting as often as it fills. */
	for (;;) {
		more = reactor_drain_overflow(r);
		if (!more || io_uring_sq_space_left(&r->ring) > 0)
			break;
		rc = reactor_submit(r, 0);
		if (rc < 0)
			return rc;
		if (io_uring_sq_space_left(&r->ring) == 0)
			break;
	}
	reactor_arm_event(r);

	idle = r->in_flight == 0 && r->sock_in_flight == 0 && !r->overflow_head;
	if (r->deferred_head || atomic_load_explicit(&r->inbox, memory_order_relaxed) ||
	    (timeout_ns < 0 && idle))
		timeout_ns = 0;
	rc = reactor_submit(r, timeout_ns);
	if (rc < 0)
		return rc;

	/* One clock read for every callback of this poll (reactor_now_ns);
	   a callback that polls again nests, so restore rather than clear. */
	bool outer_in_poll = r->in_poll;
	r->now_ns = uraid_now_ns();
	r->in_poll = true;
	ran += reactor_reap(r);
	ran += reactor_run_inbox(r);
	ran += reactor_run_deferred(r);
	r->in_poll = outer_in_poll;

	/* Send what the callbacks queued now rather than at the next poll. */
	reactor_drain_overflow(r);
	reactor_arm_event(r);
	if (r->queued) {
		rc = reactor_submit(r, 0);
		if (rc < 0)
			return rc;
	}
	return ran;
}
