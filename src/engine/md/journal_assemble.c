// SPDX-License-Identifier: MIT
/*
 * The write journal at assembly: the replay (journal_replay.c) over the
 * assembled members with synchronous I/O, then journal_tail recorded in the
 * superblocks before any new write, as md's r5l_recovery_log ends with
 * r5l_write_super and a superblock update; then the run-time hooks
 * (level/raid5_journal.c) from where the replay left the log.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <liburing.h>
#include <stdlib.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/errmsg.h"
#include "common/full_io.h"
#include "engine/core/array.h"
#include "engine/level/raid5_journal.h"
#include "engine/md/journal.h"

/* pages of one member's run in one write */
#define RUN_PAGES 64
/* the replay's io_uring: writes submitted at once */
#define RING_ENTRIES 256u

struct jctx {
	struct array *a;
	struct member *journal;
	struct io_uring ring;       /* for the row writes (j_member_write_batch) */
	bool ring_ok;               /* set up and usable */
	uint64_t runs, submits;     /* writes (runs) and io_uring submissions, for the log */
};

/*
 * Data-area I/O before the array serves (no reactor yet): through the
 * member's wall like the data path, 4 KiB buffers 4 KiB aligned, so O_DIRECT
 * holds whenever data_offset is on the device's alignment.
 */
static int data_rw(struct member *m, bool write, void *buf, size_t len, uint64_t sector)
{
	uint64_t off = (m->base + m->data_offset + sector) * 512;   /* base: a range member */

	if (!member_in_data(m, sector, len / 512))
		return member_wall(m, write ? "journal replay write" : "journal replay read", true,
				   sector, len / 512);
	if (m->direct && (off % m->dio_align || len % m->dio_align))
		return -EINVAL;
	return write ? uraid_pwrite_full(m->fd, buf, len, (off_t)off)
		     : uraid_pread_full(m->fd, buf, len, (off_t)off);
}

static int j_log_read(void *c, uint64_t sector, void *buf, size_t len)
{
	struct jctx *j = c;
	return data_rw(j->journal, false, buf, len, sector);
}

static int j_log_write(void *c, uint64_t sector, const void *buf, size_t len)
{
	struct jctx *j = c;
	return data_rw(j->journal, true, (void *)buf, len, sector);
}

static int sync_fd(struct member *m)
{
	return fdatasync(m->fd) < 0 ? -errno : 0;
}

static int j_log_flush(void *c)
{
	struct jctx *j = c;
	return sync_fd(j->journal);
}

static int j_member_flush(void *c)
{
	struct jctx *j = c;
	for (unsigned s = 0; s < j->a->geom.raid_disks; s++) {
		struct member *m = j->a->slot[s].m;
		int rc = m && j->a->slot[s].state == URAID_MEMBER_IN_SYNC ? sync_fd(m) : 0;
		if (rc)
			return rc;
	}
	return 0;
}

static struct member *slot_member(struct jctx *j, unsigned slot)
{
	if (slot >= j->a->geom.raid_disks || j->a->slot[slot].state != URAID_MEMBER_IN_SYNC)
		return NULL;
	return j->a->slot[slot].m;
}

static int j_member_read(void *c, unsigned slot, uint64_t sector, void *buf, size_t len)
{
	struct jctx *j = c;
	struct member *m = slot_member(j, slot);
	if (!m)
		return -ENODEV;
	return data_rw(m, false, buf, len, sector);
}

static int j_member_write(void *c, unsigned slot, uint64_t sector, const void *buf, size_t len)
{
	struct jctx *j = c;
	struct member *m = slot_member(j, slot);
	if (!m)
		return -ENODEV;
	return data_rw(m, true, (void *)buf, len, sector);
}

/* pwritev until all of iov is written (iov is used up). */
static int pwritev_full(int fd, struct iovec *iov, int cnt, uint64_t off)
{
	while (cnt > 0) {
		ssize_t r = pwritev(fd, iov, cnt, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		off += (uint64_t)r;
		for (; cnt > 0 && (size_t)r >= iov->iov_len; iov++, cnt--)
			r -= (ssize_t)iov->iov_len;
		if (cnt > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

/* A run of adjacent pages on one member: where, and its pages in iov. */
struct run {
	struct member *m;
	size_t first;           /* index of its first write in the batch */
	uint64_t off, len;      /* bytes on the device */
	struct iovec *iov;
	int cnt;
};

/* The runs of w[0..n) (sorted by slot and sector), each checked against the
   member's wall and O_DIRECT alignment; a slot with no member skipped. */
static int make_runs(struct jctx *j, const struct journal_wr *w, size_t n, struct run *runs,
		     struct iovec *iov, size_t *nruns, size_t *failed)
{
	size_t r = 0, v = 0;

	for (size_t i = 0, k; i < n; i = k) {
		struct member *m = slot_member(j, w[i].slot);
		struct run *u = &runs[r];
		uint64_t len = 0;

		u->iov = iov + v;
		u->cnt = 0;
		for (k = i; k < n && u->cnt < RUN_PAGES && w[k].slot == w[i].slot &&
		     w[k].sector == w[i].sector + len / 512; k++) {
			u->iov[u->cnt++] = (struct iovec){ (void *)w[k].buf, w[k].len };
			len += w[k].len;
		}
		if (!m)
			continue;
		*failed = i;
		if (!member_in_data(m, w[i].sector, len / 512))
			return member_wall(m, "journal replay write", true, w[i].sector, len / 512);
		u->m = m;
		u->first = i;
		u->off = (m->base + m->data_offset + w[i].sector) * 512;
		u->len = len;
		for (int x = 0; m->direct && x < u->cnt; x++)
			if ((uintptr_t)u->iov[x].iov_base % m->dio_align ||
			    u->iov[x].iov_len % m->dio_align)
				return -EINVAL;
		if (m->direct && u->off % m->dio_align)
			return -EINVAL;
		v += (size_t)u->cnt;
		r++;
	}
	*nruns = r;
	return 0;
}

/* The rest of a run after done bytes went (a short write), synchronously. */
static int run_rest(struct run *u, uint64_t done)
{
	struct iovec *iov = u->iov;
	uint64_t skip = done;
	int cnt = u->cnt;

	for (; cnt > 0 && skip >= iov->iov_len; iov++, cnt--)
		skip -= iov->iov_len;
	if (cnt > 0) {
		iov->iov_base = (uint8_t *)iov->iov_base + skip;
		iov->iov_len -= skip;
	}
	return pwritev_full(u->m->fd, iov, cnt, u->off + done);
}

/*
 * The replay's writes (sorted by slot and sector): each run of adjacent
 * pages on one member in one write, the runs of a batch through one
 * io_uring submission (a write each to tmpfs or the page cache costs a
 * system call otherwise: 12,800 of them for a full 64 MiB journal of 4 KiB
 * rows), or by pwritev when there is no ring. A slot with no member is
 * skipped.
 */
static int j_member_write_batch(void *c, const struct journal_wr *w, size_t n, size_t *failed)
{
	struct jctx *j = c;
	struct run *runs = malloc(n * sizeof(*runs));
	struct iovec *iov = malloc(n * sizeof(*iov));
	size_t nruns = 0;
	int rc = runs && iov ? make_runs(j, w, n, runs, iov, &nruns, failed) : -ENOMEM;

	for (size_t r = 0; !rc && r < nruns;) {
		size_t k = 0;

		if (!j->ring_ok) {
			*failed = runs[r].first;
			rc = pwritev_full(runs[r].m->fd, runs[r].iov, runs[r].cnt, runs[r].off);
			j->runs++;
			j->submits++;
			r++;
			continue;
		}
		for (; r + k < nruns && k < RING_ENTRIES; k++) {
			struct run *u = &runs[r + k];
			struct io_uring_sqe *sqe = io_uring_get_sqe(&j->ring);
			io_uring_prep_writev(sqe, u->m->fd, u->iov, (unsigned)u->cnt, u->off);
			/* a file in memory (tmpfs): a write cannot go without
			   blocking (its pages are allocated), so io_uring would
			   try each inline, fail and hand it to a worker; straight
			   to the worker: the replay's CPU 83 against 93 ms (medians
			   of 6, interleaved, load 8) for a full 64 MiB journal */
			if (u->m->in_memory)
				io_uring_sqe_set_flags(sqe, IOSQE_ASYNC);
			io_uring_sqe_set_data64(sqe, r + k);
		}
		int sub = io_uring_submit_and_wait(&j->ring, (unsigned)k);
		j->submits++;
		j->runs += k;
		size_t inflight = sub < 0 ? 0 : (size_t)sub;
		if (inflight != k) {
			/* those submitted are reaped below (their buffers stay until
			   then); the ring is given up, with what it did not take */
			rc = sub < 0 ? sub : -EIO;
			*failed = runs[r].first;
			j->ring_ok = false;
		}
		for (size_t got = 0; got < inflight; got++) {
			struct io_uring_cqe *cqe;
			int wrc;
			do
				wrc = io_uring_wait_cqe(&j->ring, &cqe);
			while (wrc == -EINTR || wrc == -EAGAIN);
			if (wrc) {
				/* cannot wait: the process must not reuse the
				   buffers the kernel may still write from */
				ulog(array_log(j->a), URAID_LOG_ERR, "%s: journal replay: waiting for "
				     "its writes: %s", j->a->sb.set_name, strerror(-wrc));
				abort();
			}
			struct run *u = &runs[io_uring_cqe_get_data64(cqe)];
			int res = cqe->res;
			io_uring_cqe_seen(&j->ring, cqe);
			if (rc)
				continue;       /* drain the others */
			if (res < 0 && res != -EAGAIN && res != -EINTR) {
				rc = res;
				*failed = u->first;
			} else if ((uint64_t)(res < 0 ? 0 : res) < u->len &&
				   (rc = run_rest(u, (uint64_t)(res < 0 ? 0 : res)))) {
				*failed = u->first;
			}
		}
		r += k;
	}
	free(runs);
	free(iov);
	return rc;
}

/* CPU time of the whole process (its io_uring workers too), for the log. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) < 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void j_note(void *c, const char *line)
{
	struct jctx *j = c;
	ulog(array_log(j->a), URAID_LOG_NOTICE, "%s: %s", j->a->sb.set_name, line);
}

/*
 * The replay wrote only to in-sync slots. A member partway through its
 * rebuild (a spare with a slot and recovery_offset, attached later by
 * md_attach_pending, or a replacement) holds the old content of the rows
 * replayed below its offset: its recovery_offset goes down to the lowest
 * row written, so the rebuild copies them again (md writes the replayed
 * rows to such members instead; same result). Recorded with the tail.
 */
static void lower_rebuilds(struct array *a, uint64_t low_row)
{
	if (low_row == UINT64_MAX)
		return;
	for (unsigned i = 0; i < a->nmembers; i++) {
		struct uraid_sb *own = &a->member_sb[i];
		int s = a->member_pending_slot[i];

		if (!a->members[i] || s < 0 || a->member_state[i] == URAID_MEMBER_JOURNAL ||
		    !(own->feature_map & URAID_FEATURE_RECOVERY_OFFSET) ||
		    own->recovery_offset <= low_row)
			continue;
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: %s: rebuild goes back from sector %"
		     PRIu64 " to %" PRIu64 " (journal rows replayed below it)", a->sb.set_name,
		     a->members[i]->path, own->recovery_offset, low_row);
		own->recovery_offset = low_row;
	}
	/* a slot already rebuilding from its superblock at assembly */
	for (unsigned s = 0; s < a->geom.raid_disks; s++)
		if (a->slot[s].state == URAID_MEMBER_REBUILDING &&
		    atomic_load(&a->slot[s].rebuilt) > low_row)
			atomic_store(&a->slot[s].rebuilt, low_row);
}

int journal_assemble(struct array *a, char *err, size_t errlen)
{
	struct journal_replay_result r;
	struct jctx j = { .a = a };
	unsigned idx = a->nmembers;
	int rc;

	for (unsigned i = 0; i < a->nmembers; i++)
		if (a->member_state[i] == URAID_MEMBER_JOURNAL && a->members[i])
			idx = i;
	if (idx == a->nmembers)
		return 0;
	if (a->flags & (URAID_ASSEMBLE_READONLY | URAID_ASSEMBLE_PEEK)) {
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: read-only: the write journal on %s is not "
		     "replayed (rows written just before a crash may read back old until it is "
		     "served read-write)", a->sb.set_name, a->members[idx]->path);
		return 0;
	}
	j.journal = a->members[idx];
	struct journal_io io = {
		.ctx = &j, .log_read = j_log_read, .log_write = j_log_write, .log_flush = j_log_flush,
		.member_read = j_member_read, .member_write = j_member_write,
		.member_flush = j_member_flush, .member_write_batch = j_member_write_batch,
		.note = j_note,
	};
	char why[300];
	uint64_t t0 = uraid_now_ns(), c0 = cpu_ns();
	/* no ring (an old kernel, a limit): the writes go by pwritev */
	j.ring_ok = io_uring_queue_init(RING_ENTRIES, &j.ring, 0) == 0;
	bool had_ring = j.ring_ok;
	rc = journal_replay(&a->geom, a->sb.set_uuid, a->member_sb[idx].data_size,
			    a->member_sb[idx].recovery_offset, &io, &r, why, sizeof(why));
	if (had_ring)
		io_uring_queue_exit(&j.ring);
	uint64_t t1 = uraid_now_ns(), c1 = cpu_ns();
	if (!rc && (r.data_parity_rows || r.data_only_rows))
		ulog(array_log(a), URAID_LOG_NOTICE, "%s: write journal replayed in %.3f s",
		     a->sb.set_name, (double)(t1 - t0) / 1e9);
	if (rc && (a->flags & URAID_ASSEMBLE_FORCE)) {
		/* nothing was written (rows go out at the scan's end, all or none but
		   for a failing write): served read-only, the log left as it is */
		ulog(array_log(a), URAID_LOG_WARNING, "%s: write journal %s: %s; --force: served "
		     "read-only without the replay (rows written just before the crash may read "
		     "back old)", a->sb.set_name, j.journal->path, why);
		a->flags |= URAID_ASSEMBLE_READONLY;
		return 0;
	}
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: write journal %s: %s (--force serves the "
				  "array read-only without replaying it)", a->sb.set_name,
				  j.journal->path, why);
	lower_rebuilds(a, r.low_row);
	/* the new tail must be on disk before anything is written to the slots */
	a->member_sb[idx].recovery_offset = r.tail;
	rc = meta_record_change(a);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: recording journal_tail %" PRIu64 " in the "
				  "superblocks: %s", a->sb.set_name, r.tail, strerror(-rc));
	/* where the time went (debug): the phases in ms, the I/O counts */
	if (r.data_parity_rows || r.data_only_rows)
		ulog(array_log(a), URAID_LOG_INFO, "%s: journal replay phases: scan %.1f (checksums "
		     "%.1f), rows %.1f, flush %.1f, meta block %.1f, superblocks %.1f ms, CPU %.1f ms "
		     "(threads and io_uring workers); log reads %.1f ms (%" PRIu64 " of %" PRIu64
		     " KiB), writes %.1f ms (%" PRIu64 " pages in %" PRIu64
		     " batches, %" PRIu64 " runs in %" PRIu64 " submissions)", a->sb.set_name,
		     r.ns_scan / 1e6, r.ns_csum / 1e6, r.ns_rows / 1e6, r.ns_flush / 1e6, r.ns_meta / 1e6,
		     (uraid_now_ns() - t1) / 1e6, (c1 - c0) / 1e6, r.ns_log_read / 1e6, r.log_reads,
		     r.log_read_bytes / 1024, r.ns_write / 1e6, r.page_writes,
		     r.write_batches, j.runs, j.submits);
	/* md sets MD_JOURNAL_CLEAN at a clean start (raid5_run): from now on
	   a crash leaves the superblocks clean and the next replay is enough */
	atomic_store(&a->journal_clean, !a->resync_needed);
	/* from now on every RAID 4/5/6 unit is logged before its member writes */
	rc = raid5_journal_log_create(a, idx, a->member_sb[idx].data_size / 8 * 8, r.log_start,
				      r.next_seq, r.tail, &a->plog);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: write journal %s: %s", a->sb.set_name,
				  j.journal->path, strerror(-rc));
	return 0;
}
