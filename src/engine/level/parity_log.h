/* SPDX-License-Identifier: MIT */
/*
 * The parity-log hook: what md's two cures for the RAID 4/5/6 write hole
 * plug into. md closes the hole by logging, before a stripe's member
 * writes, what a crash between them needs to make the row's parity match
 * its data again:
 *
 *   PPL (raid5-ppl, RAID 5 only)   the partial parity of the row (the XOR
 *                                  of the data chunks the write leaves
 *                                  alone) on the row's parity member;
 *   the journal (raid5-cache)      the new data and parity on a journal
 *                                  device.
 *
 * Both are one table of hooks around the member writes of a unit in the
 * RAID 4/5/6 write path (raid5_write.c write_compute): parity (P, Q) is
 * computed, then before_writes logs, then the member writes are issued
 * once the log says its part is durable, then after_writes is told the
 * unit's writes are done. The table hangs off the array (struct array's
 * plog); it is NULL when the array has neither, and the write path then
 * pays one load and one branch per unit, nothing else.
 *
 * Who makes it: assembly (engine/md/), after the level's init and after
 * the log's recovery (md replays its PPL or journal before it starts the
 * array), installs a->plog before the array takes requests; close calls
 * ops->fini after the level's fini (no piece is left then). Recovery at
 * assembly is not in this table: it runs once, off the reactors, with
 * blocking I/O, and each log has its own (md/ppl.c ppl_recover).
 *
 * Threads: before_writes and after_writes run on the piece's reactor
 * (r5_piece_reactor(pc) in raid5_priv.h: the one a resume must be posted
 * to) and must not block (no system call beyond queueing member I/O, no
 * allocation: pools sized at install). A log shared by reactors locks
 * inside itself. The piece holds its row lock and stripe head across both
 * calls, so a row has one unit in the log at a time.
 *
 * A piece carries room for the log while it waits in it (raid5_priv.h,
 * r5_piece.log_*: a list link, the resume function, a result and a reactor
 * message to resume it on its own reactor with reactor_post). The log may
 * read the unit's buffers (pc->sbuf, r5_new_data) until it resumes the
 * piece. The level's hot path also asks the log for its largest unit
 * (max_unit_sectors) and whether a unit with unwritten chunks between
 * written ones must read them (span_reads).
 */
#ifndef URAID_ENGINE_PARITY_LOG_H
#define URAID_ENGINE_PARITY_LOG_H

#include <stdbool.h>
#include <stdint.h>

struct array;
struct r5_piece;
struct parity_log;
struct reactor;

/* The write path's continuation: res 0 (go on and write) or -errno. */
typedef void parity_log_resume_fn(struct r5_piece *pc, int res);

struct parity_log_ops {
	const char *name;               /* "ppl", "journal": for status and logs */
	/*
	 * Before the member writes of pc's current unit (pc->ux..uy of the
	 * chunks pc->wr marks; old blocks in pc->sbuf as the plan read them,
	 * new P/Q computed; see raid5_priv.h). Returns:
	 *   0        nothing to wait for: the write path issues its writes now
	 *            (resume is not called);
	 *   1        logging under way: resume(pc, res) runs later on pc's
	 *            reactor, exactly once, and the member writes wait for it;
	 *   -errno   the unit fails (the piece completes with it).
	 */
	int (*before_writes)(struct parity_log *pl, struct r5_piece *pc,
			     parity_log_resume_fn *resume);
	/*
	 * The unit's member writes are done (res: the piece's result so far);
	 * called for every unit before_writes accepted (returned 0 or 1 and,
	 * for 1, resumed with 0). That includes units the log let go without
	 * logging them (returned 0, or resumed with 0 after deciding not to
	 * log, e.g. their log member left): the log must tell those apart
	 * itself (PPL: pc->log_resume NULL). Not called for a unit resumed
	 * with -errno. The log may release what it held for it.
	 */
	void (*after_writes)(struct parity_log *pl, struct r5_piece *pc, int res);
	/*
	 * An NBD FLUSH (or uraid_array_flush) reached the level. NULL: the
	 * members' flush covers the log (PPL: its area is on the members).
	 * Otherwise 0 when nothing is needed, 1 when done(arg, res) will be
	 * called once, on the reactor that called flush, when the log's part
	 * of the flush is done, or -errno (the flush fails). It runs
	 * alongside the members' flushes (core/array.c start_flush).
	 */
	int (*flush)(struct parity_log *pl, void (*done)(void *arg, int res), void *arg);
	/* Free the log (close, after the level's fini; no unit in it). */
	void (*fini)(struct parity_log *pl);

	/*
	 * Write-back (the journal's, md's r5c write-back; NULL for PPL): the
	 * write-back cache (engine/cache/wcache.c) logs a cached write's whole
	 * 4 KiB pages as DATA payloads (no parity: md's data-only stripes)
	 * and acknowledges it once done(arg, rec, 0) says they are durable.
	 * wb_add, under the cache's lock (it only queues: wb_kick, called
	 * unlocked after it, starts the log write), returns the record's id
	 * with one reference per page (the cache pages naming it), or 0 when
	 * the log has no room for it now (more than half the ring held by
	 * records not yet destaged, or no free record): the cache then writes
	 * it through and destages. done runs once, on a reactor, nothing held;
	 * res < 0: the journal failed. wb_put drops one page's reference (the
	 * page was destaged, or a newer logged record holds its bytes): the
	 * log's tail may pass the record once it is logged and unreferenced.
	 * Ids carry a generation: a stale id never names a reused record.
	 */
	uint32_t (*wb_add)(struct parity_log *pl, uint64_t sector, uint32_t npg, const void *buf,
			   void (*done)(void *arg, uint32_t rec, int res), void *arg);
	void (*wb_put)(struct parity_log *pl, uint32_t rec);
	void (*wb_kick)(struct parity_log *pl, struct reactor *r);
	/* the log runs low (a quarter of the ring in use, or records holding
	   a sixteenth): the cache should destage everything */
	bool (*wb_pressure)(struct parity_log *pl);
	/* batches the log can still start before its oldest pending one is
	   done (each log write is one; a record keeps its batch pending until
	   destaged): the cache destages at full width when few are left */
	uint32_t (*wb_batches_free)(struct parity_log *pl);
	/* for status: ring sectors, sectors in use (tail to the end of what is
	   written), the seq of the next meta block after it, records held for
	   the write-back cache */
	void (*wb_status)(struct parity_log *pl, uint64_t *ring, uint64_t *used, uint64_t *seq,
			  uint64_t *held);
};

/* The base of every log: embed it first in the log's own state. */
struct parity_log {
	const struct parity_log_ops *ops;
	struct array *a;
	/* the largest unit the log takes, sectors (0: the write path's own);
	   the write path cuts its units to it (PPL: 128 KiB of partial parity
	   per log write) */
	uint32_t max_unit_sectors;
	/* the log needs the old content of unwritten data chunks that lie
	   between written ones (PPL): such units read every block (FULL) */
	bool span_reads;
	/* a log removed while the array runs (grow_ppl.c) is kept until close
	   on a->plog_retired: completions of its member flushes may still run */
	struct parity_log *retired_next;
};

#endif
