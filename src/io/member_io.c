// SPDX-License-Identifier: MIT
/* Asynchronous member I/O: faults, short-transfer continuation, counters. */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <stddef.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>

#include "common/zero_block.h"
#include "io/member_internal.h"

/* ZEROES written (no hole punching): this much per write, the zero block's size */
#define ZERO_WRITE_MAX ((uint32_t)URAID_ZERO_BLOCK_BYTES)

#define MEMBER_IO(op_) ((struct member_io *)((char *)(op_) - offsetof(struct member_io, op)))

/* Every member_io ends here, from the reactor's poll. */
static void member_io_finish(struct member_io *mio, int res)
{
	struct member *m = mio->m;

	if (res < 0) {
		/* An unsupported discard is not a failing device. */
		if (!(mio->kind == MEMBER_DISCARD && res == -EOPNOTSUPP))
			atomic_fetch_add(mio->kind == MEMBER_READ ? &m->read_errors
								  : &m->write_errors, 1);
	} else if (mio->kind == MEMBER_FLUSH) {
		atomic_fetch_add_explicit(&m->flushes, 1, memory_order_relaxed);
	} else if (mio->kind == MEMBER_READ || mio->kind == MEMBER_WRITE) {
		struct member_counters *c = &m->count[mio->r->index % MEMBER_COUNTER_SETS];
		bool rd = mio->kind == MEMBER_READ;
		atomic_fetch_add_explicit(rd ? &c->reads : &c->writes, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(rd ? &c->read_bytes : &c->write_bytes, mio->len,
					  memory_order_relaxed);
	}
	mio->done(mio, res < 0 ? res : 0);
}

/* A memory copy done here and now (member in memory); completes from the poll. */
static void member_io_inline(struct member_io *mio, void *buf, uint32_t len, uint64_t off)
{
	struct member *m = mio->m;
	struct iovec v = { .iov_base = buf, .iov_len = len };
	ssize_t n;

	do {
		n = mio->kind == MEMBER_READ ? preadv2(m->fd, &v, 1, (off_t)off, 0)
					     : pwritev2(m->fd, &v, 1, (off_t)off, mio->rw_flags);
	} while (n < 0 && errno == EINTR);
	reactor_complete(mio->r, &mio->op, n < 0 ? -errno : (int)n);
}

void member_iov_advance(struct member_io *mio, size_t n)
{
	while (n && mio->iovcnt) {
		if (n < mio->iov->iov_len) {
			mio->iov->iov_base = (char *)mio->iov->iov_base + n;
			mio->iov->iov_len -= n;
			return;
		}
		n -= mio->iov->iov_len;
		mio->iov++;
		mio->iovcnt--;
	}
}

/* Where mio's sectors count from: data_offset, or the device start (meta);
 * a member that is a range of its file starts at its base. */
static inline uint64_t member_io_base(const struct member_io *mio)
{
	return mio->m->base + (mio->meta ? 0 : mio->m->data_offset);
}

/* Issue (the rest of) a read or write. */
static void member_io_issue_rw(struct member_io *mio)
{
	struct member *m = mio->m;
	uint64_t off = (member_io_base(mio) + mio->sector) * 512 + mio->done_bytes;
	char *buf = (char *)mio->buf + mio->done_bytes;
	uint32_t left = mio->len - mio->done_bytes;

	if (mio->iov && mio->kind == MEMBER_WRITE) {
		if (m->in_memory && left <= MEMBER_INLINE_MAX) {
			ssize_t n;
			do {
				n = pwritev2(m->fd, mio->iov, (int)mio->iovcnt, (off_t)off,
					     mio->rw_flags);
			} while (n < 0 && errno == EINTR);
			reactor_complete(mio->r, &mio->op, n < 0 ? -errno : (int)n);
		} else {
			reactor_writev(mio->r, &mio->op, m->fd, mio->iov, mio->iovcnt, off,
				       mio->rw_flags);
		}
	} else if (m->in_memory && left <= MEMBER_INLINE_MAX)
		member_io_inline(mio, buf, left, off);
	else if (mio->kind == MEMBER_READ)
		reactor_read(mio->r, &mio->op, m->fd, buf, left, off);
	else
		reactor_write(mio->r, &mio->op, m->fd, buf, left, off, mio->rw_flags);
}

/* ZEROES on a file system that cannot punch: the next MiB of zeroes, written. */
static void member_zeroes_write(struct member_io *mio)
{
	struct member *m = mio->m;
	uint64_t off = (member_io_base(mio) + mio->sector) * 512 + mio->done_bytes;
	uint32_t n = mio->len - mio->done_bytes;

	if (n > ZERO_WRITE_MAX)
		n = ZERO_WRITE_MAX;
	mio->writing_zeroes = true;
	reactor_write(mio->r, &mio->op, m->fd, (void *)uraid_zero_block(n), n, off,
		      mio->rw_flags);
}

static void member_io_cb(struct io_op *op, int res)
{
	struct member_io *mio = MEMBER_IO(op);

	/* a hole punched in a file: its file system punches (FAST_ZERO counts on it) */
	if (res == 0 && !mio->m->blockdev &&
	    (mio->kind == MEMBER_DISCARD || (mio->kind == MEMBER_ZEROES && !mio->writing_zeroes)))
		atomic_store(&mio->m->punches, true);

	if (mio->kind == MEMBER_ZEROES) {
		if (res == -EOPNOTSUPP && !mio->writing_zeroes) {
			atomic_store(&mio->m->no_punch, true);
			member_zeroes_write(mio);
			return;
		}
		if (mio->writing_zeroes && res > 0) {
			mio->done_bytes += (uint32_t)res;
			if (mio->done_bytes < mio->len) {
				member_zeroes_write(mio);
				return;
			}
			res = 0;
		} else if (mio->writing_zeroes && res == 0) {
			res = -EIO;                     /* end of device */
		}
		member_io_finish(mio, res);
		return;
	}

	if (res > 0 && (mio->kind == MEMBER_READ || mio->kind == MEMBER_WRITE)) {
		mio->done_bytes += (uint32_t)res;
		if (mio->done_bytes < mio->len) {
			if (mio->iov)
				member_iov_advance(mio, (size_t)res);
			member_io_issue_rw(mio);        /* short transfer: go on */
			return;
		}
		res = 0;
	} else if (res == 0 && (mio->kind == MEMBER_READ || mio->kind == MEMBER_WRITE) &&
		   mio->done_bytes < mio->len) {
		res = -EIO;                             /* end of device */
	}
	member_io_finish(mio, res);
}

int member_write_sync(struct member_io *mio)
{
	struct member *m = mio->m;
	uint64_t off = (member_io_base(mio) + mio->sector) * 512;
	uint32_t left = mio->len;
	int rc;

	mio->done_bytes = 0;
	if (mio->kind != MEMBER_WRITE || !mio->iov || !mio->iovcnt || !m->in_memory || m->stack ||
	    mio->meta || mio->len == 0 || mio->len % 512 || m->fd < 0)
		return -EINVAL;
	rc = member_fault_check(m, mio->kind, mio->sector, mio->len / 512);
	if (rc == 0 && !member_in_data(m, mio->sector, mio->len / 512))
		rc = member_wall(m, "write", true, mio->sector, mio->len / 512);
	if (rc < 0)
		return rc;
	while (left) {
		ssize_t n = pwritev2(m->fd, mio->iov, (int)mio->iovcnt,
				     (off_t)(off + mio->done_bytes), mio->rw_flags);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;                    /* end of device */
		mio->done_bytes += (uint32_t)n;
		left -= (uint32_t)n;
		if (left)
			member_iov_advance(mio, (size_t)n);
	}
	return (int)mio->len;
}

void member_write_sync_done(struct reactor *r, struct member_io *mio, int res)
{
	mio->r = r;
	mio->op.cb = member_io_cb;
	mio->done_bytes = 0;
	member_io_cb(&mio->op, res);
}

/* A stacked member's I/O, back from the lower array: nothing to continue. */
static void member_stacked_cb(struct io_op *op, int res)
{
	member_io_finish(MEMBER_IO(op), res);
}

void member_stacked_done(struct member_io *mio, int res)
{
	reactor_complete(mio->r, &mio->op, res);
}

void member_stacked_finish(struct member_io *mio, int res)
{
	member_io_finish(mio, res);
}

void member_counters(const struct member *m, struct member_totals *out)
{
	memset(out, 0, sizeof(*out));
	for (unsigned i = 0; i < MEMBER_COUNTER_SETS; i++) {
		const struct member_counters *c = &m->count[i];
		out->reads += atomic_load_explicit(&c->reads, memory_order_relaxed);
		out->writes += atomic_load_explicit(&c->writes, memory_order_relaxed);
		out->read_bytes += atomic_load_explicit(&c->read_bytes, memory_order_relaxed);
		out->write_bytes += atomic_load_explicit(&c->write_bytes, memory_order_relaxed);
	}
}

void member_counters_reset(struct member *m)
{
	for (unsigned i = 0; i < MEMBER_COUNTER_SETS; i++) {
		struct member_counters *c = &m->count[i];
		atomic_store(&c->reads, 0);
		atomic_store(&c->writes, 0);
		atomic_store(&c->read_bytes, 0);
		atomic_store(&c->write_bytes, 0);
	}
}

static int member_discard_blockdev(struct member *m, uint64_t off, uint64_t len)
{
	uint64_t range[2] = { off, len };

	return ioctl(m->fd, BLKDISCARD, range) < 0 ? -errno : 0;
}

static const char *member_op_name(enum member_op kind)
{
	switch (kind) {
	case MEMBER_READ: return "read";
	case MEMBER_WRITE: return "write";
	case MEMBER_DISCARD: return "discard";
	case MEMBER_ZEROES: return "write-zeroes";
	default: return "I/O";
	}
}

void member_submit(struct reactor *r, struct member_io *mio)
{
	struct member *m = mio->m;
	uint64_t off = (member_io_base(mio) + mio->sector) * 512;
	int rc;

	mio->r = r;
	mio->done_bytes = 0;
	mio->op.cb = member_io_cb;
	mio->op.next = NULL;

	rc = member_fault_check(m, mio->kind, mio->sector, ((uint64_t)mio->len + 511) / 512);
	if (rc == 0 && m->fd < 0)
		rc = -EBADF;
	if (rc == 0 && mio->kind != MEMBER_FLUSH && (mio->len == 0 || mio->len % 512))
		rc = -EINVAL;
	/* gathered: writes only, and not through another array's request path */
	if (rc == 0 && mio->iov && (mio->kind != MEMBER_WRITE || m->stack || !mio->iovcnt))
		rc = -EINVAL;
	if (rc == 0 && mio->meta) {
		/* the PPL's log writes: reads and writes inside a metadata area only */
		if ((mio->kind != MEMBER_READ && mio->kind != MEMBER_WRITE) ||
		    !member_in_meta(m, mio->sector, mio->len / 512))
			rc = member_wall(m, member_op_name(mio->kind), false, mio->sector,
					 mio->len / 512);
	} else if (rc == 0 && mio->kind != MEMBER_FLUSH &&
		   !member_in_data(m, mio->sector, mio->len / 512))
		rc = member_wall(m, member_op_name(mio->kind), true, mio->sector, mio->len / 512);
	if (rc < 0) {
		reactor_complete(r, &mio->op, rc);
		return;
	}
	if (m->stack) {
		/* another array of the engine: its request path does the rest */
		mio->op.cb = member_stacked_cb;
		m->stack->submit(m->stack_ctx, r, mio, off);   /* base is 0 */
		return;
	}

	switch (mio->kind) {
	case MEMBER_READ:
	case MEMBER_WRITE:
		member_io_issue_rw(mio);
		break;
	case MEMBER_FLUSH:
		/* nothing to write back in memory: only the hand-off would cost */
		if (m->in_memory)
			reactor_complete(r, &mio->op, 0);
		else
			reactor_fsync(r, &mio->op, m->fd);
		break;
	case MEMBER_ZEROES:
		if (m->blockdev) {
			reactor_complete(r, &mio->op, -EINVAL);   /* the caller writes zeroes */
		} else if (atomic_load(&m->no_punch)) {
			member_zeroes_write(mio);
		} else {
			mio->writing_zeroes = false;
			reactor_fallocate(r, &mio->op, m->fd,
					  FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, mio->len);
		}
		break;
	case MEMBER_DISCARD:
		if (m->blockdev)
			reactor_complete(r, &mio->op, member_discard_blockdev(m, off, mio->len));
		else
			reactor_fallocate(r, &mio->op, m->fd,
					  FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, mio->len);
		break;
	default:
		reactor_complete(r, &mio->op, -EINVAL);
		break;
	}
}
