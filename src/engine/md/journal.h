/* SPDX-License-Identifier: MIT */
/*
 * md's write journal (raid5-cache) for RAID 4/5/6: the replay at assembly.
 *
 * The journal device holds a ring of 4 KiB blocks (format/r5l.h) from its
 * data_offset; its superblock's recovery_offset field is journal_tail, the
 * ring position where the scan starts. md's recovery (r5l_load_log,
 * r5l_recovery_log) is followed here:
 *  - a tail that is out of the ring or not on 4 KiB is taken as 0;
 *  - if no valid meta block is at the tail, md starts a new log: an empty
 *    meta block at 0 with a random seq, journal_tail 0;
 *  - otherwise meta blocks are read while each is valid with seq one more
 *    than the last and the position it is read at. A meta block whose pages
 *    do not match their checksums contributes nothing, and the scan goes on
 *    8 sectors further (where md also looks, so in practice it ends there);
 *  - a 4 KiB row ("stripe", one member sector) with data and parity in the
 *    log is written to the members as logged (data pages seen after its
 *    parity start a new generation: the old one is written first), a FLUSH
 *    payload drops rows already written, a row with parity only is dropped;
 *  - the new log starts at the first invalid position with seq + 10000 (so
 *    a later scan never takes stale blocks after it for valid ones): an
 *    empty meta block is written there (FUA) and journal_tail points at it.
 *
 * Rows with data and no parity (md's write-back mode) are where uraid
 * differs in method, not in result: md rewrites them to the log and lets
 * its stripe state machine compute parity; here their data is written to
 * the members and the row's parity recomputed from all its data (every
 * data member must be present, else the replay refuses and says so; a
 * missing parity member is skipped). Either way the members hold the logged
 * data with matching parity before the log is let go.
 */
#ifndef URAID_ENGINE_MD_JOURNAL_H
#define URAID_ENGINE_MD_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uraid/geom.h>

/* One page (or more) to write to a member. */
struct journal_wr {
	unsigned slot;
	uint64_t sector;
	const void *buf;
	size_t len;
};

/* Synchronous I/O the replay uses; sectors are relative to data_offset. */
struct journal_io {
	void *ctx;
	int (*log_read)(void *ctx, uint64_t sector, void *buf, size_t len);
	int (*log_write)(void *ctx, uint64_t sector, const void *buf, size_t len);
	int (*log_flush)(void *ctx);
	/* -ENODEV when the slot has no member (degraded): md skips it */
	int (*member_read)(void *ctx, unsigned slot, uint64_t sector, void *buf, size_t len);
	int (*member_write)(void *ctx, unsigned slot, uint64_t sector, const void *buf,
			    size_t len);
	int (*member_flush)(void *ctx);
	/* may be NULL (member_write one by one): the writes w[0..n), sorted by
	   slot then sector, each place once, in any order or at once; a slot
	   with no member is skipped. 0, or -errno with *failed the index of a
	   write that failed */
	int (*member_write_batch)(void *ctx, const struct journal_wr *w, size_t n,
				  size_t *failed);
	/* one line of progress or of where the scan stopped; may be NULL */
	void (*note)(void *ctx, const char *line);
};

struct journal_replay_result {
	uint64_t tail;              /* new journal_tail to record in the superblock */
	uint64_t log_start;         /* where the next meta block goes */
	uint64_t next_seq;          /* its seq */
	bool new_log;               /* no valid block at the tail: a fresh log */
	unsigned meta_blocks;       /* valid meta blocks scanned */
	unsigned data_parity_rows;  /* rows written out as logged */
	unsigned data_only_rows;    /* rows written with parity recomputed */
	unsigned bad_meta;          /* meta blocks dropped for page checksums */
	uint64_t low_row;           /* lowest member sector written (UINT64_MAX: none) */
	char stop[200];             /* why the scan ended */
	/* where the time went (CLOCK_MONOTONIC ns), for the log's debug line:
	   the scan (meta blocks, checksums, rows), the write-out of the rows
	   (their pages read back, written), the flush, the new meta block;
	   of all of them, the time waiting for log reads, in page checksums,
	   in member writes */
	uint64_t ns_scan, ns_rows, ns_flush, ns_meta, ns_log_read, ns_csum, ns_write;
	uint64_t log_reads, log_read_bytes;     /* log_read calls, bytes */
	uint64_t write_batches, page_writes;    /* member write batches, pages */
};

/*
 * Replay the journal of a RAID 4/5/6 with geometry g and array uuid, whose
 * ring has log_sectors sectors (the journal device's data size rounded down
 * to 8), starting from journal_tail tail. Returns 0 with the result filled
 * (the caller records r->tail in the superblocks), or -errno with the reason
 * in err. Allocates a 256 KiB read window and, per row in the log, a log
 * position per member (the log's size bounds it); runs before the array
 * serves.
 */
int journal_replay(const struct uraid_geom *g, const uint8_t uuid[16], uint64_t log_sectors,
		   uint64_t tail, const struct journal_io *io, struct journal_replay_result *r,
		   char *err, size_t errlen);

struct array;
/*
 * At assembly: replay the journal member's log onto the slots (nothing when
 * the array has no journal, or is assembled read-only or to peek), then
 * record the new journal_tail in the superblocks (md's r5l_write_super).
 */
int journal_assemble(struct array *a, char *err, size_t errlen);

#endif
