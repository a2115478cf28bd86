/* SPDX-License-Identifier: MIT */
/*
 * A reactor: one io_uring driven by one thread, with a queue for work handed
 * over by other threads. Everything the engine does to a member goes through
 * the reactor of the request that caused it; completions run on that
 * reactor's thread.
 *
 * Operations never fail to queue: when the submission ring is full they wait
 * in an overflow list and go out on the next poll. Member I/O, timers and
 * cancels share a budget of operations in flight (so that their completions
 * always fit the completion ring); socket operations (receive, send, accept)
 * are kept out of it, as a peer decides when they complete: a thousand
 * clients that say nothing park a thousand receives without taking one slot
 * from the work that must go on. The completion ring has room for the budget
 * plus REACTOR_SOCKET_CQ socket completions; should more arrive at once, the
 * kernel holds them (IORING_FEAT_NODROP, required) until they are reaped.
 * Callbacks run from
 * reactor_poll() only, never from inside the call that queued the operation,
 * so code can queue and then update its own state without reentrancy.
 */
#ifndef URAID_IO_REACTOR_H
#define URAID_IO_REACTOR_H

#include <liburing.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "common/clock.h"

struct reactor;

/* Embed in the structure that waits for the result; res is as io_uring's cqe->res. */
struct io_op {
	void (*cb)(struct io_op *op, int res);
	struct io_op *next;         /* overflow / deferred lists */
	/* what to submit when it had to wait for ring space */
	uint8_t opcode;
	int fd;
	void *buf;
	uint64_t len;               /* 64-bit: fallocate ranges may exceed 4 GiB */
	uint64_t off;
	int rw_flags;               /* RWF_DSYNC for FUA writes */
	int res;                    /* deferred completions */
};

/* Work handed over from another thread; fn runs on the reactor's thread. */
struct reactor_msg {
	void (*fn)(struct reactor *r, struct reactor_msg *m);
	struct reactor_msg *_Atomic next;
};

struct reactor {
	struct io_uring ring;
	unsigned index;             /* in its engine */
	/* the thread polling it (set by reactor_poll; others read it) */
	_Atomic(pthread_t) thread;
	_Atomic bool thread_known;
	bool disabled;              /* reactor_init_owned: until reactor_claim */
	int event_fd;               /* wakes the ring when messages arrive */
	uint64_t event_buf;
	struct io_op event_op;
	bool event_armed;
	struct io_op *overflow_head, *overflow_tail;   /* waiting for ring space */
	struct io_op *deferred_head, *deferred_tail;   /* completions to run */
	struct reactor_msg *_Atomic inbox;             /* MPSC stack, reversed on drain */
	unsigned queued;            /* SQEs prepared but not submitted */
	uint64_t in_flight;         /* operations issued and not completed, sockets' aside */
	uint64_t sock_in_flight;    /* socket operations issued and not completed */
	uint64_t max_in_flight;     /* the budget of in_flight */
	/* The monotonic clock read once per poll, when its wait ends: what
	   its callbacks see as now (reactor_now_ns). Polling thread only. */
	uint64_t now_ns;
	bool in_poll;               /* inside reactor_poll: now_ns is current */
};

/* Completion slots beyond the budget, for socket completions arriving at once. */
#define REACTOR_SOCKET_CQ 1024u

int reactor_init(struct reactor *r, unsigned index, unsigned entries);
/* A reactor that one thread will poll for its whole life: that thread calls
 * reactor_claim first (the ring starts disabled). Cheaper completions. */
int reactor_init_owned(struct reactor *r, unsigned index, unsigned entries);
int reactor_claim(struct reactor *r);
/* Enable a ring set up with IORING_SETUP_R_DISABLED, from its issuer thread. */
int ring_enable(struct io_uring *ring);
void reactor_fini(struct reactor *r);

/* Queue operations (any of them may complete with a negative errno). */
void reactor_read(struct reactor *r, struct io_op *op, int fd, void *buf, uint32_t len,
		  uint64_t off);
void reactor_write(struct reactor *r, struct io_op *op, int fd, const void *buf, uint32_t len,
		   uint64_t off, int rw_flags);
/* A gathered write of iovcnt buffers (iov must stay valid until completion). */
struct iovec;
void reactor_writev(struct reactor *r, struct io_op *op, int fd, const struct iovec *iov,
		    unsigned iovcnt, uint64_t off, int rw_flags);
void reactor_fsync(struct reactor *r, struct io_op *op, int fd);       /* fdatasync */
void reactor_fallocate(struct reactor *r, struct io_op *op, int fd, int mode, uint64_t off,
		       uint64_t len);
/* Sockets: receive up to len bytes (0: the peer closed), send a message
 * (never raises SIGPIPE; msg must stay valid until completion), accept a
 * connection (res is the new descriptor, close-on-exec). Outside the budget:
 * they may wait for the peer for ever. */
struct msghdr;
void reactor_recv(struct reactor *r, struct io_op *op, int fd, void *buf, size_t len);
void reactor_sendmsg(struct reactor *r, struct io_op *op, int fd, const struct msghdr *msg);
void reactor_accept(struct reactor *r, struct io_op *op, int fd);
/* Ask for target (issued on r) to end early: it completes with -ECANCELED
 * (or its own result if it was done); op completes with 0, -ENOENT or -EALREADY. */
void reactor_cancel(struct reactor *r, struct io_op *op, struct io_op *target);
/* Complete op after ts (which must stay valid until then) with -ETIME. */
void reactor_timeout(struct reactor *r, struct io_op *op, struct __kernel_timespec *ts);
/* Complete op with res on the next poll, without any I/O (errors, no-ops). */
void reactor_complete(struct reactor *r, struct io_op *op, int res);

/*
 * Submit queued operations, wait up to timeout_ms for one to complete
 * (0: no wait, -1: until one completes), run completions, handed-over
 * messages and deferred completions. With -1 and nothing in flight, queued or
 * deferred it returns 0 at once rather than sleep forever; with a positive
 * timeout it sleeps on the inbox too, so reactor_post wakes it. Returns the
 * number of callbacks (and messages) run, or -errno.
 */
int reactor_poll(struct reactor *r, int timeout_ms);
/* The same with the timeout in ns (-1: until one completes), for callers
 * that wake on a schedule finer than a millisecond. */
int reactor_poll_ns(struct reactor *r, int64_t timeout_ns);

/* From any thread: run m->fn on r's thread at its next poll (wakes it). */
void reactor_post(struct reactor *r, struct reactor_msg *m);

/*
 * On r's thread: the time for stamps on the I/O path. Inside a poll, the
 * clock read when its wait ended (no clock read per call, so stale by at
 * most the time the poll's callbacks take); outside one (a caller-driven
 * engine's thread submitting between polls), the clock itself.
 */
static inline uint64_t reactor_now_ns(const struct reactor *r)
{
	return r->in_poll ? r->now_ns : uraid_now_ns();
}

/* Is the calling thread the one polling r? */
bool reactor_is_current(const struct reactor *r);

#endif
