/* SPDX-License-Identifier: MIT */
/*
 * The uraid engine: reactors (one io_uring each, one thread each) that run
 * the I/O of assembled arrays, in md's on-disk format, healthy or degraded.
 *
 * Threads: an engine either runs one thread per reactor itself
 * (URAID_ENGINE_THREADS) or the caller drives each reactor by calling
 * uraid_engine_poll() from one thread per reactor (the in-process benchmark
 * does this so that its workers are the reactors, with no hand-off).
 * Requests complete on the reactor they were submitted to.
 *
 * All functions return 0 (or a count) or a negative errno. Sizes are bytes;
 * offsets and lengths of I/O are multiples of 512.
 */
#ifndef URAID_ENGINE_H
#define URAID_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uraid/geom.h>
#include <uraid/log.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uraid_engine;
struct uraid_array;

/* ---- engine ---- */

#define URAID_ENGINE_THREADS 0x1u   /* run one thread per reactor inside the engine */

struct uraid_engine_opts {
	unsigned reactors;          /* 0: one per online CPU */
	unsigned ring_entries;      /* io_uring entries per reactor, 0: 256 */
	uint32_t flags;             /* URAID_ENGINE_* */
	/* every message of the engine, its arrays and its NBD server goes
	   here (include/uraid/log.h), with log_opaque; NULL: "uraid: ..."
	   lines on stderr (uraid_log_stderr) */
	uraid_log_fn log;
	void *log_opaque;
	/*
	 * Called when a member of an array changes state (fails, becomes a
	 * spare's rebuild target, comes in sync, is added or removed) or a
	 * background job starts or ends, so that a server can tell monitors
	 * at once (uraid serve writes to an eventfd). It runs on whichever
	 * engine thread made the change (the metadata worker, the caller of
	 * a management function; a reactor only on a caller-driven engine),
	 * possibly under the array's locks: it must return at once, never
	 * block and never call back into the engine. It carries no detail:
	 * the callee asks uraid_array_status and uraid_array_sync_status.
	 * NULL: none.
	 */
	void (*changed)(void *opaque);
	void *changed_opaque;
};

int uraid_engine_create(const struct uraid_engine_opts *o, struct uraid_engine **e);
/* Arrays must be closed first. */
void uraid_engine_destroy(struct uraid_engine *e);
unsigned uraid_engine_reactors(const struct uraid_engine *e);
/*
 * Caller-driven engines: submit what is queued on reactor i, wait up to
 * timeout_ms (0: do not wait, -1: until something completes) and run the
 * completions. Always from the same thread for a given reactor. Returns the
 * number of completions run.
 */
int uraid_engine_poll(struct uraid_engine *e, unsigned reactor, int timeout_ms);
/* The same with the timeout in ns (-1: until something completes): a caller
 * that starts I/O on a schedule (a rate) wakes on time, not up to 1 ms late. */
int uraid_engine_poll_ns(struct uraid_engine *e, unsigned reactor, int64_t timeout_ns);

/* ---- arrays ---- */

#define URAID_ASSEMBLE_FORCE     0x1u  /* start a dirty degraded RAID 4/5/6 (md's --force) */
#define URAID_ASSEMBLE_READONLY  0x2u  /* never write: no state changes on the members */
#define URAID_ASSEMBLE_BUFFERED  0x4u  /* page-cache I/O instead of O_DIRECT */
/* with READONLY: a look at members another process may be serving (uraid
   detail): they are neither locked nor opened exclusively */
#define URAID_ASSEMBLE_PEEK      0x8u
/*
 * Refuse to start an array whose member is merely missing: the freshest
 * superblock lists a device as active in a slot, but no member for that slot
 * was given (forgotten, not found), as mdadm's incremental assembly waits
 * without --run. A slot the superblocks already record as faulty or removed
 * (an array that was degraded when it stopped) does not count. Without this
 * flag the library starts what it is given, as the kernel's RUN_ARRAY does:
 * the policy of waiting for members is the caller's (uraid serve sets it
 * unless --run).
 */
#define URAID_ASSEMBLE_COMPLETE  0x10u

/*
 * The stripe cache of RAID 4/5/6, as md's stripe_cache_size: a number of
 * stripe heads, each one 4 KiB page per member (memory: size x 4 KiB x
 * members, allocated when the size is set). It bounds the row pieces in
 * work at once (written, or rebuilt for a read), one head each whatever
 * its size: a request that finds every head taken waits for one. A head
 * whose write was a 4 KiB unit keeps that unit's pages afterwards (row
 * data, as md's stripe cache), while no new work needs the head: the next
 * write of the unit reads none of its blocks from the members. Other
 * levels have none: they keep the value and ignore it
 * (uraid_stripe_cache_status.used is false).
 */
#define URAID_STRIPE_CACHE_MIN     17u
#define URAID_STRIPE_CACHE_DEFAULT 256u
#define URAID_STRIPE_CACHE_MAX     32768u

struct uraid_assemble_opts {
	const char *const *paths;   /* members, spares too, in any order */
	unsigned npaths;
	uint32_t flags;             /* URAID_ASSEMBLE_* */
	unsigned idle_clean_ms;     /* mark clean after this much write silence; 0: 200 (md) */
	/*
	 * Write policy (URAID_WRITE_*). Write-back acknowledges a write once it
	 * is in the array's cache memory and writes it to the members later:
	 * a crash or power loss loses what was acknowledged since the last
	 * completed FLUSH (never anything before it); FLUSH and FUA writes are
	 * honoured as a disk's volatile write cache does. Ignored (through)
	 * for READONLY arrays.
	 */
	uint32_t write_cache;
	/* the cache's memory, allocated at assembly when write-back (or at the
	   first switch to it): 0 is 64 MiB; 1 MiB .. 64 GiB, else -EINVAL */
	uint64_t cache_bytes;
	/* stripe heads, URAID_STRIPE_CACHE_MIN..MAX; 0: the default (256) */
	unsigned stripe_cache;
	/* read-ahead window per sequential stream, in bytes:
	   URAID_READ_AHEAD_OFF (0, what a zeroed struct asks; also anything
	   below 8 KiB) none; URAID_READ_AHEAD_DEFAULT four stripe rows, or four
	   chunks where a piece is a chunk, within 256 KiB .. 8 MiB; else the
	   size rounded down to 4 KiB, at most URAID_READ_AHEAD_MAX. Memory,
	   allocated at assembly: URAID_READ_AHEAD_STREAMS windows, i.e. 8 x the
	   window per array (the default on RAID 5 x4 with 512 KiB chunks:
	   8 x 3 MiB = 24 MiB; off: none). `uraid serve` asks for the default. */
	uint64_t read_ahead_bytes;
	/*
	 * Nested RAID: NULL, or npaths entries where stacked[i], when not
	 * NULL, is an assembled array of the same engine that is member i
	 * (paths[i] then only names it in messages). Its I/O is a request of
	 * that array on the same reactor. The engine must run its own threads;
	 * close this array before the ones it stands on. uraid_nested_assemble
	 * (uraid/nested.h) does all of it from the members' paths.
	 */
	struct uraid_array *const *stacked;
	/*
	 * The write journal's mode (URAID_JOURNAL_*; arrays with a journal
	 * only, else URAID_JOURNAL_WRITE_BACK is -EINVAL). Write-back (md's
	 * r5c write-back): a write of whole 4 KiB pages completes once its
	 * pages are durable in the journal; it is kept in the array's cache
	 * memory (cache_bytes) and destaged later, with full-stripe gathering;
	 * a crash loses nothing acknowledged (the journal's replay). A
	 * degraded array writes through, as md leaves write-back then.
	 */
	uint32_t journal_mode;
};

#define URAID_JOURNAL_WRITE_THROUGH 0u
#define URAID_JOURNAL_WRITE_BACK    1u

#define URAID_READ_AHEAD_OFF 0ull
#define URAID_READ_AHEAD_DEFAULT UINT64_MAX
#define URAID_READ_AHEAD_MAX (64ull << 20)      /* per stream */
#define URAID_READ_AHEAD_STREAMS 8              /* streams with a window at a time */

#define URAID_WRITE_THROUGH 0u     /* every write reaches the members before it completes */
#define URAID_WRITE_BACK    1u     /* writes complete in memory; destaged later */

/*
 * Assemble as md does (reference/md-format.md §1.7, §1.9, §1.14): one
 * array UUID; the member with the most events decides the roles; members
 * more than one event behind are stale (left out); unknown features or a
 * reshape are refused; a dirty RAID 4/5/6 that is also degraded is refused
 * without URAID_ASSEMBLE_FORCE. Refusals name the member and the reason in
 * err; too few members for the level to run is -ENODEV (mdadm's "failed"),
 * other refusals -EINVAL. Nothing is written until the first write request.
 */
int uraid_array_assemble(struct uraid_engine *e, const struct uraid_assemble_opts *o,
			 struct uraid_array **a, char *err, size_t errlen);

/* Wait for in-flight I/O, destage the write-back cache, flush the members,
 * mark the array clean, free it. */
int uraid_array_close(struct uraid_array *a);

/*
 * Change the write policy at run time (URAID_WRITE_BACK or _THROUGH). To
 * write-back: the cache is set up (uraid_assemble_opts.cache_bytes) if it was
 * not; to write-through: every dirty byte is destaged before this returns
 * (it blocks: not from a reactor's thread). 0, -EINVAL, -EROFS (read-only
 * array), -ENOMEM, -EIO (to write-through: the policy is through now, but
 * cached data could not be destaged and is lost; the next FLUSH fails).
 */
int uraid_array_set_write_cache(struct uraid_array *a, uint32_t policy);

/*
 * Change the write journal's mode at run time (URAID_JOURNAL_*), as md's
 * journal_mode. To write-through: every cached byte is destaged before this
 * returns (it blocks: not from a reactor's thread). 0, -ENODEV (no
 * journal), -EROFS, -EBUSY (to write-back on a degraded array: md refuses
 * it too), -ENOMEM, -EIO (as uraid_array_set_write_cache).
 */
int uraid_array_set_journal_mode(struct uraid_array *a, uint32_t mode);

/* ---- I/O ---- */

enum uraid_io_op {
	URAID_IO_READ,
	URAID_IO_WRITE,
	URAID_IO_FLUSH,          /* every completed write is durable on every member */
	URAID_IO_DISCARD,        /* the range may read back as anything (zeroes on files) */
	URAID_IO_WRITE_ZEROES,   /* the range reads back as zeroes */
};

#define URAID_IO_FUA 0x1u        /* WRITE: durable when it completes */
/*
 * READ: the engine may answer from memory of its own (read-ahead's
 * buffers) instead of copying into buf: then io->lend.data points at the
 * io->length bytes read when done() runs, and they stay as they are until
 * the caller calls io->lend.give_back(&io->lend) (from any thread; before
 * the array is closed). lend.data NULL: the bytes are in buf as usual.
 */
#define URAID_IO_LEND 0x4u

struct uraid_lend {
	const void *data;           /* set by the engine; NULL: not lent */
	void (*give_back)(struct uraid_lend *l);
	void *tok[2];               /* the engine's */
};

struct uraid_io {
	enum uraid_io_op op;
	uint32_t flags;             /* URAID_IO_* */
	uint64_t offset;            /* bytes into the array, multiple of 512 */
	uint64_t length;            /* bytes, multiple of 512 (0 for FLUSH) */
	void *buf;                  /* READ/WRITE; 4096-byte alignment avoids a copy */
	void (*done)(struct uraid_io *io, int result);   /* 0 or -errno, on the reactor */
	void *ctx;                  /* the caller's */
	uint64_t priv[6];           /* the engine's; do not touch while in flight */
	struct uraid_lend lend;     /* URAID_IO_LEND: see above */
};

/*
 * Start io on the given reactor; done() runs there. From the thread driving
 * that reactor the request starts at once; from any other thread it is
 * handed over. Returns 0, or -EINVAL (misaligned, past the end, a flag
 * other than URAID_IO_FUA and URAID_IO_LEND), -EROFS.
 */
int uraid_array_submit(struct uraid_array *a, unsigned reactor, struct uraid_io *io);

/*
 * Synchronous helpers for any thread that is not a reactor of a
 * caller-driven engine (on such engines they drive reactor 0 themselves).
 */
int uraid_array_pread(struct uraid_array *a, void *buf, uint64_t len, uint64_t off);
int uraid_array_pwrite(struct uraid_array *a, const void *buf, uint64_t len, uint64_t off,
		       uint32_t flags);
int uraid_array_flush(struct uraid_array *a);
int uraid_array_discard(struct uraid_array *a, uint64_t off, uint64_t len);
int uraid_array_write_zeroes(struct uraid_array *a, uint64_t off, uint64_t len);

/*
 * Would WRITE_ZEROES of [off, off + len) only punch holes, with no data read
 * or written? (NBD's FAST_ZERO asks a server to refuse at once a zeroing
 * that is no faster than a write.) True when every member that may be
 * written is a file on a file system known to punch holes (by its type, or
 * a punch that went through) and, on RAID 4/5/6, the range is made of whole
 * stripe rows.
 */
bool uraid_array_zeroes_fast(struct uraid_array *a, uint64_t off, uint64_t len);

/* ---- allocation (what NBD's base:allocation reports) ---- */

#define URAID_EXTENT_HOLE 0x1u   /* no member holds blocks for it (a hole of every copy) */
#define URAID_EXTENT_ZERO 0x2u   /* reads return zeroes */

/* A run of array bytes with one status. */
struct uraid_extent {
	uint64_t length;            /* bytes, a nonzero multiple of 512 */
	uint32_t flags;             /* URAID_EXTENT_*: HOLE and ZERO together, or 0 (data) */
};

/*
 * Which bytes of [off, off + len) are holes: ranges a read is certain to
 * return as zeroes because every place it may read them from is a hole of
 * a member file (lseek SEEK_DATA/SEEK_HOLE): RAID 0 and linear the one
 * copy; RAID 1/10 every in-sync copy; RAID 4/5/6 the data chunk on an
 * in-sync member (a failed one's data comes from parity: reported as data).
 * Block devices, files on a file system whose lseek answers are not
 * trusted (only tmpfs, ext2/3/4, XFS, btrfs and F2FS are), and anything not
 * known, are data. Fills ext[0..] in order from off, neighbours with
 * different flags, and returns their count (at least 1), or -EINVAL
 * (misaligned, empty, past the end, max 0). The extents may cover less
 * than len (max reached, or a bounded amount of work or time spent): ask
 * again from where they end. It makes blocking system
 * calls: from a thread that is not a reactor.
 */
int uraid_array_allocation(struct uraid_array *a, uint64_t off, uint64_t len,
			   struct uraid_extent *ext, unsigned max);

/* The same, asked from a reactor: the lookup runs on the engine's metadata
 * worker (on the calling thread for a caller-driven engine), one of the
 * array's at a time (the others wait their turn in order), and done() runs
 * on `reactor` with the count or -errno. The array stays busy (close waits)
 * until then. 0, or -EINVAL as above (done is not called then). */
struct uraid_alloc_query {
	uint64_t offset, length;
	struct uraid_extent *extents;
	unsigned max_extents;
	void (*done)(struct uraid_alloc_query *q, int result);
	void *ctx;                  /* the caller's */
	uint64_t priv[12];          /* the engine's */
};
int uraid_array_allocation_submit(struct uraid_array *a, unsigned reactor,
				  struct uraid_alloc_query *q);

/* ---- state ---- */

enum uraid_member_state {
	URAID_MEMBER_IN_SYNC,
	URAID_MEMBER_FAULTY,        /* failed while assembled (role 0xfffe) */
	URAID_MEMBER_MISSING,       /* slot without a member */
	URAID_MEMBER_SPARE,
	URAID_MEMBER_STALE,         /* given, but left out (events behind, other array) */
	URAID_MEMBER_REBUILDING,    /* a spare being rebuilt into a slot (recovery) */
	URAID_MEMBER_JOURNAL,       /* the RAID 4/5/6 write journal (role 0xfffd), no slot */
};

struct uraid_member_status {
	char path[256];
	int slot;                   /* -1 for spares and stale members */
	enum uraid_member_state state;
	bool replacing;             /* REBUILDING as the replacement of slot's member */
	bool direct;                /* O_DIRECT in use */
	uint64_t events;
	uint64_t reads, writes, read_bytes, write_bytes;
	uint64_t read_errors, write_errors, corrected_reads;
};

/* The write-back cache (all zero but policy while write-through and no
   cache was ever set up). */
struct uraid_write_cache_status {
	uint32_t policy;            /* URAID_WRITE_THROUGH or URAID_WRITE_BACK */
	uint64_t size_bytes;        /* the cache's memory (0: none) */
	uint64_t dirty_bytes;       /* acknowledged, not yet on the members */
	uint64_t cached_bytes;      /* held in the cache, dirty or not */
	uint64_t read_hits;         /* reads served from the cache whole */
	uint64_t read_misses;       /* reads that went to the members (overlaid) */
	uint64_t read_hit_bytes;
	uint64_t writes_cached;     /* writes acknowledged from the cache */
	uint64_t write_hits;        /* of those: on pages already dirty (overwrites absorbed) */
	uint64_t writes_through;    /* FUA, large and non-cached writes, discards, zeroes */
	uint64_t write_waits;       /* writes that waited for room (destage behind) */
	uint64_t destage_writes;    /* write requests the cache sent to the members */
	uint64_t destaged_bytes;
	uint64_t destage_errors;    /* destage writes that failed (data lost; next FLUSH fails) */
};

/* The stripe cache of RAID 4/5/6 (tune: uraid_array_set_stripe_cache). */
struct uraid_stripe_cache_status {
	bool used;                  /* false: the level has no stripes (size kept, ignored) */
	uint32_t size;              /* stripe heads (md's stripe_cache_size) */
	uint64_t memory_bytes;      /* size x 4 KiB x members (0 when not used) */
	uint32_t in_use;            /* heads held by rows in work now */
	uint32_t peak;              /* most held at once, since assembly or the last resize */
	uint64_t waits;             /* requests (writes, rebuilding reads) that waited for a head */
	uint32_t kept;              /* idle heads keeping a row's 4 KiB unit (row data) */
	uint64_t hits;              /* write units that found their unit kept (no member reads) */
	uint64_t misses;            /* 4 KiB write units that did not */
};
/*
 * Read-ahead (engine/cache/readahead.c): sequential read streams are
 * detected and whole stripe rows (or chunks) ahead of them are read into
 * buffers set aside at assembly; reads they cover are copied from there.
 * Counters only grow while the array is open (a change of window resets
 * none of them).
 */
struct uraid_read_ahead_status {
	uint64_t window_bytes;      /* per stream; 0: off */
	uint64_t unit_bytes;        /* what one prefetch reads: a stripe row or chunk */
	unsigned streams_max;       /* streams that can hold a window at once */
	unsigned streams;           /* sequential streams holding a window now */
	/* every member is in memory (tmpfs: copied inline): nothing is read
	   ahead, there being no latency to hide, and streams are not tracked
	   (streams stays 0) */
	bool members_in_memory;
	uint64_t memory_bytes;      /* buffers set aside */
	uint64_t prefetched_bytes;  /* read ahead from the members */
	uint64_t served_bytes;      /* of the client reads, copied from read-ahead */
	uint64_t served_reads;      /* client reads answered whole from read-ahead */
	uint64_t waited_reads;      /* of those, reads that waited for a prefetch to land */
	uint64_t wasted_bytes;      /* prefetched, then dropped unread (a write, eviction) */
	uint64_t invalidated_bytes; /* read ahead or being read, dropped by a write over it */
};

/*
 * Change the read-ahead window per stream at run time, as
 * uraid_assemble_opts.read_ahead_bytes (URAID_READ_AHEAD_OFF, 0: off;
 * URAID_READ_AHEAD_DEFAULT: the default window). New buffers are allocated here (not on the I/O path), the old ones
 * freed once their reads ahead in flight have landed, and what was read
 * ahead is dropped. Any thread but a reactor's. 0, -EINVAL (above
 * URAID_READ_AHEAD_MAX), -ENOMEM (the window is unchanged then).
 */
int uraid_array_set_read_ahead(struct uraid_array *a, uint64_t bytes);

struct uraid_array_status {
	uint8_t uuid[16];
	char name[33];
	int level;
	uint32_t layout;
	uint32_t raid_disks;
	uint32_t chunk_bytes;
	uint64_t size_bytes;
	unsigned degraded;          /* slots without an in-sync member */
	bool clean;                 /* resync_offset on disk is MaxSector */
	bool resync_needed;         /* assembled dirty: redundancy not known good */
	bool read_only;
	uint64_t events;
	uint64_t in_flight;
	/* write-intent bitmap (0 bytes per chunk: none); bits on disk now */
	uint32_t bitmap_chunk_bytes;
	uint64_t bitmap_bits, bitmap_dirty_bits;
	bool bitmap_stale;          /* every bit counts as set (a full resync) */
	uint64_t bitmap_events_cleared;
	/* how a crash is made good, in md's words (consistency_policy):
	   "ppl", "journal", "bitmap", "resync" or "none"; a static string */
	const char *consistency_policy;
	/* the write journal (journal_ring_bytes 0: none): its mode
	   (URAID_JOURNAL_*), the ring's bytes, those from the tail to the
	   end of what is written (in use), the seq of the next meta block
	   after it (a batch being written counts once written), the records
	   of the write-back mode not yet destaged */
	uint32_t journal_mode;
	uint64_t journal_ring_bytes, journal_used_bytes, journal_seq, journal_records;
	/* write-back mode, writes not cached: journal_partial_waits not whole
	   4 KiB pages (each waited until the whole cache was destaged, and no
	   write was cached meanwhile), journal_row_waits written through on
	   stripe rows with cached pages (each waited until those were
	   destaged), journal_full_through the log had no room for */
	uint64_t journal_partial_waits, journal_row_waits, journal_full_through;
	struct uraid_write_cache_status write_cache;
	struct uraid_stripe_cache_status stripe_cache;
	struct uraid_read_ahead_status read_ahead;
	unsigned nmembers;
	struct uraid_member_status members[URAID_MAX_MEMBERS];
};

int uraid_array_status(struct uraid_array *a, struct uraid_array_status *st);

/*
 * Set the stripe cache's size at run time (any thread but a reactor's):
 * heads are allocated now; fewer are freed as rows in work let them go.
 * -EINVAL outside URAID_STRIPE_CACHE_MIN..MAX, -ENOMEM; nothing changed then.
 * A level without stripes keeps the value and ignores it.
 */
int uraid_array_set_stripe_cache(struct uraid_array *a, unsigned size);
/*
 * The most memory one array's stripe cache may take: half of this
 * machine's physical memory (sysconf). A size that needs more (size x
 * 4 KiB x members) is refused, -E2BIG at run time and an error at
 * assembly, nothing changed: its pages are populated up front, and more
 * than that would put the machine in the OOM killer's hands.
 */
uint64_t uraid_stripe_cache_memory_limit(void);
int uraid_array_stripe_cache(struct uraid_array *a, struct uraid_stripe_cache_status *st);

/*
 * Is member i (as in uraid_array_status's members) detached, its device or
 * file gone: a file with no name left (deleted), a block device whose kernel
 * device is gone? Asks the descriptor the array holds, opens nothing: a
 * renamed file is not detached. 1, 0, or -errno (-ENOENT: no such member).
 */
int uraid_array_member_detached(struct uraid_array *a, unsigned i);
uint64_t uraid_array_size(const struct uraid_array *a);

/* ---- request latency ---- */

/*
 * Completed requests by kind, in log2 buckets of their time on the engine
 * (from reaching their reactor to the completion callback): bucket
 * b < URAID_LATENCY_BUCKETS - 1 counts requests of at most 2^b microseconds
 * (and more than 2^(b-1)); the last bucket counts the longer ones. Each
 * reactor keeps its own counts (no shared cache line, no atomic
 * read-modify-write on the I/O path, and no clock read of its own: a
 * request's start and end are its reactor's poll time, read once per poll,
 * so a request costs two increments and the resolution is one poll
 * batch); uraid_array_latency sums them. Counts only grow while the array
 * is open.
 */
#define URAID_LATENCY_BUCKETS 28        /* 1 us .. 2^26 us (67 s), then longer */

enum uraid_latency_kind {
	URAID_LATENCY_READ,
	URAID_LATENCY_WRITE,
	URAID_LATENCY_OTHER,            /* flush, discard, write zeroes */
	URAID_LATENCY_KINDS
};

struct uraid_latency_hist {
	uint64_t count[URAID_LATENCY_KINDS][URAID_LATENCY_BUCKETS];   /* not cumulative */
	uint64_t sum_ns[URAID_LATENCY_KINDS];
};

/* Bucket b's upper bound in nanoseconds (UINT64_MAX for the last one). */
uint64_t uraid_latency_bucket_le_ns(unsigned b);
/* "read", "write", "other". */
const char *uraid_latency_kind_name(enum uraid_latency_kind kind);
/* The sums over every reactor of the array (any thread). 0. */
int uraid_array_latency(struct uraid_array *a, struct uraid_latency_hist *h);

/* ---- background work: resync, check, repair (md's sync_action) ---- */

enum uraid_sync_kind {
	URAID_SYNC_NONE,
	URAID_SYNC_RESYNC,          /* redundancy recomputed from data (unclean stop) */
	URAID_SYNC_CHECK,           /* read and compare; count mismatches, change nothing */
	URAID_SYNC_REPAIR,          /* as check, and rewrite redundancy that differs */
	URAID_SYNC_RECOVER,         /* rebuild a missing slot onto a spare (started by itself) */
	URAID_SYNC_REPLACE,         /* copy a slot onto its replacement, then swap (uraid replace) */
	URAID_SYNC_RESHAPE,         /* restripe RAID 4/5/6 (uraid_array_reshape_start; resumed by itself) */
};

struct uraid_sync_status {
	enum uraid_sync_kind kind;  /* running, or the last one that ran (NONE: never) */
	uint64_t job;               /* its number on this array: 1, 2, ... (0: none yet) */
	bool running;
	int result;                 /* of the last one: 0, -ECANCELED, -EIO */
	uint64_t done_bytes;        /* per member, as md's sync_completed (see array_positions) */
	uint64_t skipped_bytes;     /* of done_bytes: resync passed over, clean by the bitmap */
	uint64_t total_bytes;
	uint64_t rate_bytes_s;      /* recent, per member; 0 before the first measure */
	/* done, skipped and total are of the array, not per member: a RAID 10
	   resync, check or repair (md runs those over the array's sectors) */
	bool array_positions;
	uint64_t mismatch_sectors;  /* check/repair: as md's mismatch_cnt */
	uint32_t min_kib_s, max_kib_s;   /* throttling (md's speed_limit_min/max) */
	/* a reshape (kind RESHAPE): md's reshape_position, in array bytes
	   (done_bytes is the same per member: reshape_position / new data members) */
	uint64_t reshape_position_bytes;
};

/*
 * Start background work on a running array (RAID 4/5/6 not degraded, RAID 1/10
 * with two working copies or more; engine with its own threads); -EBUSY while another runs, -EINVAL with the reason
 * in err when the level or state does not allow it. A recovery starts by
 * itself on such an engine when a slot is missing and a spare is there (md's
 * rule), and goes on from recovery_offset after a restart.
 */
int uraid_array_sync_start(struct uraid_array *a, enum uraid_sync_kind kind, char *err,
			   size_t errlen);
/*
 * A check or repair of the part of the array that holds bytes [offset,
 * offset + length) (length 0, or past the end: to the end), widened to the
 * units the work goes by (whole stripe rows on RAID 4/5/6). A repair of a
 * part does not end a needed resync. -EINVAL with the reason in err for a
 * range that starts past the end; otherwise as uraid_array_sync_start.
 */
int uraid_array_sync_start_range(struct uraid_array *a, enum uraid_sync_kind kind,
				 uint64_t offset, uint64_t length, char *err, size_t errlen);
/* ---- reshape: restripe a RAID 4/5/6 or RAID 10 (md's grow of raid_disks, chunk, layout) ---- */

struct uraid_reshape {
	int new_level;               /* 4, 5, 6 (the level after any takeover) or 10 */
	uint32_t new_layout;
	uint32_t new_chunk_sectors;
	uint32_t new_raid_disks;     /* the new slots' members are already spares */
};
/* Start restriping a RAID 4/5/6 or RAID 10 array to r, the data offset
 * moving as mdadm picks it: down (forwards) for more data members, up
 * (backwards) for fewer (RAID 4/5/6 only), the same count towards the
 * larger room; at least a step's worth of rows per member (there is no
 * backup file). RAID 10: near and offset layouts, the same copies, more or
 * as many members, forwards only. -EBUSY while another job runs; -ENOSPC
 * with "needs N KiB before (after) the data, has M" in err when there is
 * no room to move the data offset; -EINVAL with the reason otherwise.
 * The job (kind URAID_SYNC_RESHAPE) is throttled and stopped as the others;
 * an array assembled in mid-reshape resumes it by itself. */
int uraid_array_reshape_start(struct uraid_array *a, const struct uraid_reshape *r,
			      char *err, size_t errlen);

/* "resync", "check", "repair", "recovery", "none". */
const char *uraid_sync_kind_name(enum uraid_sync_kind kind);
/* Stop it (the position reached is kept for a resync: resync_offset). A
 * resync stopped so is not resumed by itself until another job ends or the
 * array is assembled again; a needed resync otherwise starts by itself
 * whenever nothing else runs and the array is not degraded. */
int uraid_array_sync_cancel(struct uraid_array *a);
int uraid_array_sync_status(struct uraid_array *a, struct uraid_sync_status *st);
/*
 * The status of job number `job` (uraid_sync_status.job): the running one
 * or one of the last few that ended, so that who waits for a job learns its
 * outcome after others have started. -ENOENT for a number not seen yet or
 * no longer kept.
 */
int uraid_array_sync_job(struct uraid_array *a, uint64_t job, struct uraid_sync_status *st);
/* KiB/s per member: min holds while foreground I/O runs, max when idle.
 * 0 keeps the current value (defaults: md's 1000 and 200000). -EINVAL,
 * nothing changed, when the minimum would be above the maximum. */
int uraid_array_sync_speed(struct uraid_array *a, uint32_t min_kib_s, uint32_t max_kib_s);

/* ---- management of a running array (mdadm --fail / --remove) ---- */

/* Index in uraid_array_status.members of the member at path (the same file
 * or block device, whatever the path's spelling), or -ENOENT. */
int uraid_array_find_member(struct uraid_array *a, const char *path);

#define URAID_FAIL_FORCE 0x1u   /* fail even when the array cannot survive it */

/*
 * Mark a member faulty as md's set_disk_faulty does (role 0xfffe, events+1
 * in every live superblock); the array goes on degraded. Refused (-EBUSY,
 * reason in err) when the array would not survive, unless URAID_FAIL_FORCE
 * on RAID 4/5/6; the last copy of linear/0/1/10 data is never failed (md's
 * rule). A member already faulty: 0, nothing changes.
 */
int uraid_array_fail_member(struct uraid_array *a, unsigned member, uint32_t flags,
			    char *err, size_t errlen);

/*
 * Take a faulty, spare or stale member out of the array (hot remove): its
 * device is released and its dev_roles entry becomes 0xffff in the others'
 * superblocks (events+1). An in-sync member is refused (-EBUSY): fail it
 * first, as md requires. Member indexes after it shift down by one.
 */
int uraid_array_remove_member(struct uraid_array *a, unsigned member, char *err,
			      size_t errlen);

#define URAID_ADD_FORCE 0x1u    /* overwrite an md superblock found on the device */
#define URAID_ADD_APPEND 0x2u   /* a linear's spare, appended by the grow that follows */
#define URAID_ADD_READDED 1     /* uraid_array_add_member: back in its old slot */

/*
 * Add a device as a spare (hot add): its superblock is written with the
 * array's fields and its own (a free dev_number, a new device UUID), and the
 * other members' superblocks list it (events+1). A missing slot is then
 * rebuilt onto it by itself. A former member is re-added instead when the
 * array has a live write-intent bitmap that covers its absence and its slot
 * is empty (md's re-add, feature 0x80): it keeps its superblock, takes its
 * slot back and only the chunks whose bits are set are rebuilt. Any other
 * device holding an md superblock is refused without URAID_ADD_FORCE; one
 * too small is refused. A linear array takes no spare (md's linear_add
 * takes an added disk into the geometry at once and refuses a spare's
 * superblock): refused (-EINVAL) unless URAID_ADD_APPEND, the first half of
 * uraid_array_grow's append. Metadata 1.0 (superblock at the device's end),
 * 1.1 and 1.2. Returns 0 (a spare),
 * URAID_ADD_READDED, or -errno with the reason in err.
 */
int uraid_array_add_member(struct uraid_array *a, const char *path, uint32_t flags, char *err,
			   size_t errlen);

/*
 * md's replacement (mdadm --replace OLD --with NEW): path (a spare of the
 * array, or a device added as one now, as uraid_array_add_member) takes
 * over the slot of in-sync member old_idx. The slot's data is copied onto
 * it in the background (from the old member; rebuilt from the others where
 * that fails) while the old member goes on serving, and every write reaches
 * both in the rows copied so far; the superblocks show it as the slot's
 * replacement (features 0x10 and 0x2, recovery_offset), so a restart goes
 * on where it stopped, in uraid or md. At the end the new member holds the
 * slot and the old one is faulty. RAID 4/5/6; one at a time. 0 or -errno.
 */
int uraid_array_replace_member(struct uraid_array *a, unsigned old_idx, const char *path,
			       uint32_t flags, char *err, size_t errlen);

/* ---- grow (mdadm --grow): level, members, chunk, layout, sizes, bitmap ---- */

#define URAID_GROW_MAX UINT64_MAX       /* --size=max, --array-size=max */

/* --consistency-policy (mdadm's): how a crash is made good */
enum {
	URAID_GROW_POLICY_KEEP,
	URAID_GROW_POLICY_RESYNC,   /* no PPL, no bitmap: a resync after a crash */
	URAID_GROW_POLICY_PPL,      /* md's partial parity log (RAID 5) */
	URAID_GROW_POLICY_BITMAP,   /* the internal write-intent bitmap (as --bitmap=internal) */
};

/* What `uraid grow` asks; 0 / false: unchanged. */
struct uraid_grow {
	uint32_t raid_disks;
	bool level_set;
	int level;
	uint32_t chunk_bytes;
	bool layout_set;
	uint32_t layout;
	uint64_t size_bytes;        /* per member used (md's component size); URAID_GROW_MAX */
	uint64_t array_bytes;       /* exported (md's array_size); URAID_GROW_MAX: the full size */
	int bitmap;                 /* 0 unchanged, 1 internal, -1 none */
	int policy;                 /* --consistency-policy: URAID_GROW_POLICY_*, 0 unchanged */
	unsigned adding;            /* devices the caller adds as spares before (plan_only) */
	unsigned append;            /* linear: members appended from spares (--add alone) */
	bool plan_only;             /* check and describe the steps (done), change nothing */
};

/*
 * Plan the change as mdadm --grow would (md's takeovers, restripes, sizes)
 * and carry it out on the running array: what moves no data is done here,
 * under a freeze (clients' requests wait, none fails); a restripe is
 * started as a background job. done gets one line per step done or started
 * ("takeover RAID 4 -> RAID 5 (...)\n"). -EINVAL with md's reason and what
 * to do in err (nothing changed), -EALREADY when nothing would change,
 * -EBUSY while another background job runs, other -errno with err when a
 * step failed (the steps before it stay done; done lists them).
 * The exported size is not kept in the superblocks (md keeps it in memory
 * only): it is back to the full size when the array is assembled again.
 */
int uraid_array_grow(struct uraid_array *a, const struct uraid_grow *r, char *done,
		     size_t donelen, char *err, size_t errlen);
/*
 * Steps of a grow that wait for the one before to end (a restripe, or the
 * rebuild of a slot a takeover added: RAID 0 -> 4 -> restripe -> RAID 0,
 * RAID 5 -> 6 -> restripe) are kept by the engine, as mdadm's background
 * process keeps them: uraid_array_grow_continue carries them out once their
 * wait is over (call it from time to time and after change notices, not on
 * a reactor). 0: nothing done (still waiting, or nothing pending); 1: steps
 * done, a line each in done; -errno with err: the step failed or its wait
 * ended badly (the job failed or was stopped), the rest is dropped. They are
 * lost when the array closes (as mdadm's process would be).
 */
int uraid_array_grow_continue(struct uraid_array *a, char *done, size_t donelen, char *err,
			      size_t errlen);
bool uraid_array_grow_pending(struct uraid_array *a);

/* ---- fault injection (tests) ---- */

enum uraid_fault_kind {
	URAID_FAULT_NONE,           /* clear */
	URAID_FAULT_READ,           /* reads in the range fail with EIO */
	URAID_FAULT_WRITE,          /* writes in the range fail with EIO */
	URAID_FAULT_VANISH,         /* every I/O fails with ENODEV, as a pulled drive */
	/* the next synchronous write of two 4 KiB pages or more (bitmap
	   pages, a grow's area writes; superblocks and bad-block logs are
	   smaller and never trip it) reaches the member torn: its first half of whole pages (at least
	   one) is written and flushed, then the process is killed (SIGKILL),
	   as a power cut in the middle of it; the range and rate are not
	   used. For tests, in a child process. */
	URAID_FAULT_TORN_KILL,
};

struct uraid_fault {
	enum uraid_fault_kind kind;
	uint64_t first_sector;      /* member sectors from data_offset; 0..UINT64_MAX */
	uint64_t last_sector;
	uint32_t rate_ppm;          /* 0 or 1000000: every matching I/O; else that share */
	uint64_t seed;              /* for rate_ppm */
};

/* Set the fault of the member in `slot`; any thread. */
int uraid_array_inject(struct uraid_array *a, unsigned slot, const struct uraid_fault *f);

#ifdef __cplusplus
}
#endif
#endif
