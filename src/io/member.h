/* SPDX-License-Identifier: MIT */
/*
 * A member device as the data path sees it: an open file descriptor
 * (O_DIRECT where the file system allows), its data area, counters, and an
 * optional injected fault. I/O addresses are member sectors relative to the
 * data offset, as the geometry gives them.
 */
#ifndef URAID_IO_MEMBER_H
#define URAID_IO_MEMBER_H

#include <stdatomic.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <uraid/engine.h>
#include "common/log.h"
#include "io/reactor.h"

#define MEMBER_COUNTER_SETS 8

struct member;
struct member_io;

/*
 * A member that is not a file or a device but another array of the same
 * engine (nested RAID 50/60: engine/md/stack.c installs this table, so io/
 * never calls up into the engine). Offsets are bytes from the start of the
 * lower array. submit runs on r's thread and must end with exactly one
 * member_stacked_done(mio, res), from r's thread, never inside submit
 * itself being required (member_stacked_done defers to r's poll). rw_sync
 * and flush_sync block: never from a reactor thread.
 */
struct member_stack_ops {
	void (*submit)(void *ctx, struct reactor *r, struct member_io *mio, uint64_t off);
	int (*rw_sync)(void *ctx, bool write, void *buf, size_t len, uint64_t off);
	int (*flush_sync)(void *ctx);
};

struct member_counters {
	_Atomic uint64_t reads, writes, read_bytes, write_bytes;
} __attribute__((aligned(64)));

/* A metadata area of a member: sectors [start, end) from the device start. */
struct member_area {
	uint64_t start, end;
};
#define MEMBER_AREAS 4   /* superblock, bitmap, bad-block log, PPL */

struct member {
	char path[256];
	/* where this member's messages go (the engine's log); NULL: stderr */
	const struct ulog *log;
	int fd;
	bool direct;                /* opened with O_DIRECT */
	bool blockdev;
	bool in_memory;             /* a file on tmpfs or ramfs: see member_submit */
	/* a file on a file system whose SEEK_DATA/SEEK_HOLE answers are trusted
	   (member_open's list); the allocation of any other member is data */
	bool seek_trusted;
	uint32_t dio_align;         /* O_DIRECT offset/length alignment in bytes (512, 4096):
	                               member_submit READ/WRITE must respect it when direct */
	uint64_t dev_sectors;       /* of the member: the range's length when ranged */
	/* where the member starts in its file or device, in sectors: 0, or the
	   start of a range given as PATH@START+LENGTH (common/range_path.h, a
	   pool's partition); every offset below is relative to it */
	uint64_t base;
	bool ranged;                /* given as a range: its length is fixed */
	uint64_t data_offset;       /* sectors */
	/* data-path counters: one set per reactor (its index modulo
	   MEMBER_COUNTER_SETS), so that reactors do not share a cache line
	   per I/O; member_counters() adds them up */
	struct member_counters count[MEMBER_COUNTER_SETS];
	/* errors (rare), updated from any reactor */
	_Atomic uint64_t read_errors, write_errors, corrected_reads;
	/* FLUSHes done (the PPL flushes the members a log covers before the
	   next log: tests count them) */
	_Atomic uint64_t flushes;
	/* corrected reads not yet in the array's copy of this member's
	   superblock (cnt_corrected_read): folded in by the next update */
	_Atomic uint32_t corrected_unrecorded;
	/* fault injection: the fault is replaced whole under fault_lock */
	pthread_mutex_t fault_lock;
	struct uraid_fault fault;
	_Atomic bool has_fault;
	_Atomic uint64_t fault_rng;
	/*
	 * The wall: what this member's I/O may touch (member_set_areas). The
	 * data path (member_submit) stays in [0, data_len) sectors from
	 * data_offset; metadata I/O (member_p*_sync) in one of area[]. Set to
	 * the whole device by member_open, narrowed when the member joins an
	 * array. An I/O outside is a bug in uraid: it fails with -EIO and is
	 * reported once (wall_reported).
	 */
	uint64_t data_len;
	struct member_area area[MEMBER_AREAS];
	unsigned nareas;
	_Atomic bool wall_reported;
	/* its file system cannot punch holes: ZEROES writes them (member_submit) */
	_Atomic bool no_punch;
	/* it can: a file system known to, or a punch that went through (what
	   NBD's FAST_ZERO may count on before trying) */
	_Atomic bool punches;
	/* a stacked member (member_open_stacked): every I/O goes to stack */
	const struct member_stack_ops *stack;
	void *stack_ctx;
};

#define MEMBER_OPEN_READONLY 0x1u   /* read-only (a shared lock on a file) */
#define MEMBER_OPEN_BUFFERED 0x2u   /* page-cache I/O, not O_DIRECT */
#define MEMBER_OPEN_UNLOCKED 0x4u   /* (read-only) a look: no lock, no O_EXCL */

/*
 * Open path read-write (MEMBER_OPEN_* flags) with O_DIRECT, falling back to
 * buffered I/O with a warning on stderr only when the file system refuses
 * O_DIRECT (EINVAL). Block devices are opened O_EXCL, image files locked
 * (common/file_lock.h), unless MEMBER_OPEN_UNLOCKED. A path PATH@START+LENGTH
 * is that range of PATH (common/range_path.h: no O_EXCL, the range locked).
 * Sets dev_sectors (the range's length), base,
 * dio_align; data_offset starts at 0 (the caller sets it). 0 or -errno with
 * the reason in err; after a failure m->fd is -1 and member_close is a no-op.
 */
int member_open(struct member *m, const char *path, unsigned flags, const struct ulog *log,
		char *err, size_t errlen);
/*
 * Open a stacked member: `name` (for messages), `sectors` long, whose I/O
 * goes through ops with ctx. It has no file of its own: fd holds an empty
 * memfd so that "fd >= 0 means attached" holds for it as for any member,
 * while reads, writes, flushes and discards, data and metadata, go to ops.
 * 0 or -errno with the reason in err.
 */
int member_open_stacked(struct member *m, const char *name, uint64_t sectors,
			const struct member_stack_ops *ops, void *ctx, const struct ulog *log,
			char *err, size_t errlen);
/* The end of a stacked member's I/O (ops->submit): res 0 or -errno; mio's
 * done runs from its reactor's next poll, with the counters updated. */
void member_stacked_done(struct member_io *mio, int res);
/* The same at once, from r's poll (a completion of the lower array), not
 * from inside ops->submit: saves the trip through the next poll. */
void member_stacked_finish(struct member_io *mio, int res);
/* Make everything written to m durable (fdatasync, or the lower array's
 * FLUSH for a stacked member); blocking. 0 or -errno. */
int member_flush_sync(struct member *m);

/* A zeroed struct member on the heap, aligned as its counters want (free()
 * releases it); NULL when out of memory. */
struct member *member_new(void);
void member_close(struct member *m);

/*
 * The member's own areas once it belongs to an array: its data area
 * (data_offset, data_len sectors) and up to MEMBER_AREAS metadata areas
 * (empty ones, end <= start, are skipped). Call before the member's first
 * I/O for the array, with no I/O in flight.
 */
void member_set_areas(struct member *m, uint64_t data_offset, uint64_t data_len,
		      const struct member_area *areas, unsigned nareas);

/*
 * The wall's verdict on an I/O outside the member's areas: reports it once
 * per member ("BUG: <what> outside member areas: member <path> sector S len
 * L ...") and returns -EIO. Sectors are absolute when `data` is false,
 * relative to data_offset when it is true.
 */
int member_wall(struct member *m, const char *what, bool data, uint64_t sector, uint64_t nsect);

/* Is [sector, sector + nsect) (relative to data_offset) inside the data area? */
static inline bool member_in_data(const struct member *m, uint64_t sector, uint64_t nsect)
{
	return sector < m->data_len && nsect <= m->data_len - sector;
}

enum member_op { MEMBER_READ, MEMBER_WRITE, MEMBER_FLUSH, MEMBER_DISCARD, MEMBER_ZEROES };

/* One member I/O; embed, set the fields, call member_submit. */
struct member_io {
	struct io_op op;            /* internal: member_submit sets op.cb */
	enum member_op kind;
	void *buf;
	uint32_t len;               /* bytes, multiple of 512 */
	uint64_t sector;            /* relative to data_offset (absolute if meta) */
	bool meta;                  /* in a metadata area (the PPL): sector is absolute */
	int rw_flags;               /* RWF_DSYNC for FUA */
	struct member *m;
	/*
	 * A gathered WRITE (not on a stacked member): iovcnt (<= IOV_MAX)
	 * buffers adding up to len, buf unused. The array is the caller's
	 * and is consumed: a short transfer advances it in place.
	 */
	struct iovec *iov;
	unsigned iovcnt;
	void (*done)(struct member_io *mio, int res);
	void *ctx;                  /* the caller's */
	uint32_t done_bytes;        /* short transfers are continued internally */
	bool writing_zeroes;        /* internal: ZEROES fell back to writes */
	struct reactor *r;          /* internal: set by member_submit */
};

/*
 * Issue mio on reactor r: applies an injected fault, retries short
 * transfers, counts, and calls mio->done(mio, 0 or -errno) from r's poll.
 * DISCARD punches a hole in a file (reads back zeroes) or issues BLKDISCARD
 * on a block device (synchronously; -EOPNOTSUPP is passed on, not counted as
 * an error). ZEROES (files only; buf unused) makes the range read back
 * zeroes: a punched hole, or, on a file system that cannot punch (noted in
 * no_punch), zeroes written a MiB at a time. A hole punched (DISCARD or
 * ZEROES) sets punches. A member in memory (a file on tmpfs or ramfs) is read and
 * written by the calling thread, up to MEMBER_INLINE_MAX bytes at a time:
 * the kernel cannot do such I/O without blocking, so io_uring would hand
 * every request to a worker thread, and for a memory copy that hand-off
 * (a wake-up and two context switches) costs more than the copy; the
 * completion still runs from r's poll. Counters: reads/writes and bytes on
 * success, read_errors or write_errors (FLUSH, DISCARD count as writes) on
 * failure. A fault fails the I/O (-EIO, VANISH -ENODEV) without touching
 * the device. A read that hits the end of the device is -EIO.
 */
void member_submit(struct reactor *r, struct member_io *mio);
/*
 * A gathered WRITE to a member in memory done now by the calling thread,
 * which may be any thread (not only a reactor's): member_submit's checks
 * (an injected fault, the data area's walls), then the whole transfer
 * (RWF_* of rw_flags); returns len or -errno. Nothing is counted and
 * done() is not called: the caller then hands the result to
 * member_write_sync_done on reactor r's thread, which counts it and calls
 * done(mio, 0 or -errno) as a completion of member_submit would. Meant for
 * a copy moved off the reactors (the journal's log writes).
 */
int member_write_sync(struct member_io *mio);
void member_write_sync_done(struct reactor *r, struct member_io *mio, int res);
/* Larger copies go through io_uring: a reactor should not stall that long. */
#define MEMBER_INLINE_MAX (1u << 20)

/* The data-path counters of every reactor added up (plain numbers in out). */
struct member_totals {
	uint64_t reads, writes, read_bytes, write_bytes;
};
void member_counters(const struct member *m, struct member_totals *out);
/* Back to zero (tests). */
void member_counters_reset(struct member *m);

/* Replace the member's fault (kind NONE clears it). */
void member_set_fault(struct member *m, const struct uraid_fault *f);

/*
 * The injected fault's verdict on one I/O of `kind` (MEMBER_*) covering
 * sectors [sector, sector + nsect) relative to the data offset: 0 (go ahead),
 * -EIO or -ENODEV. Draws from fault_rng when the fault has a rate.
 * nsect 0 means metadata I/O outside the data area: only VANISH applies.
 * member_submit applies it; I/O done outside it (the reshape job's
 * blocking reads and writes) asks it too.
 */
int member_fault_check(struct member *m, enum member_op kind, uint64_t sector, uint64_t nsect);
/* URAID_FAULT_TORN_KILL set and a synchronous write of len bytes (two
 * pages or more) to tear: member_pwrite_sync writes half and kills. */
#define MEMBER_FAULT_PAGE 4096u
bool member_fault_torn(struct member *m, size_t len);

/*
 * Synchronous whole-buffer I/O for metadata (superblocks, bitmap) at an
 * absolute device sector (not relative to data_offset); a write is durable
 * (fdatasync) when it returns. Any buffer, length multiple of 512: unaligned
 * O_DIRECT cases go through a bounce buffer (read-modify-write). Only a
 * VANISH fault applies (-ENODEV). Failures count in read/write_errors, successes
 * are not counted (the counters are the data path's). 0, -errno, -EIO at the
 * end of the device.
 */
int member_pwrite_sync(struct member *m, const void *buf, size_t len, uint64_t dev_sector);
int member_pread_sync(struct member *m, void *buf, size_t len, uint64_t dev_sector);

#endif
