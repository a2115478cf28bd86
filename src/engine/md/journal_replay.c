// SPDX-License-Identifier: MIT
/*
 * The write journal's replay at assembly, md's recovery order (journal.h).
 * A "row" here is md's stripe_head: one 4 KiB high row of the array at one
 * member sector, with the pages the log holds for it.
 *
 * Memory: a row keeps, per slot, only the log sector of the latest page
 * logged for it (8 bytes a slot, not the page); the pages are read back
 * from the log when the rows are written out, at the end of the scan (the
 * log is left intact until the new empty meta block is written after
 * them).
 *
 * I/O: the log is read through one reused window of WINDOW_BYTES, filled
 * by one large read at the first position it lacks, both in the scan and
 * when the pages are read back (the pages to write are taken in log order,
 * so the read back is a second sequential pass over the ring). The writes
 * of one window go out as one batch sorted by member and sector
 * (journal_io.member_write_batch: adjacent pages in one write). A window
 * of the whole log was tried and was slower: a 64 MiB buffer costs more
 * in page faults than the reads it saves; so was the ring mapped (a tmpfs
 * journal: checksums and writes from its pages, not copied), and so was a
 * thread reading the next window ahead (the checksums then take the bytes
 * from the other CPU's cache, and its hand-offs cost more than the reads
 * under load). 256 KiB windows stay in the CPU's L2 cache between the
 * read's copy and the checksums or writes that take the bytes again: the
 * checksums of a full 64 MiB log took 1.5-3 ms so against 6-9 ms with
 * 2 MiB windows, the replay's CPU about 10 % less (its time: journal.h's
 * ns_* fields, logged by journal_assemble).
 *
 * Nothing is written mid-scan: data logged after a row's parity
 * supersedes the slots it names and the newer parity (write-through: the
 * newer unit's parity covers the older unit's data, now on the members), so
 * the row is merged, never written out early; a FLUSH then still drops all
 * of it (an unlogged newer write is never overwritten by an older row).
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <uraid/parity.h>
#include "common/clock.h"
#include "common/errmsg.h"
#include "engine/md/journal.h"
#include "format/r5l.h"

#define PAGE URAID_R5L_BLOCK
#define PAGE_SECTORS URAID_R5L_BLOCK_SECTORS
/* md writes the new log's first block this far past the last seq seen */
#define SEQ_SKIP 10000u
/* the most pages one meta block describes (every payload a RAID 6 PARITY) */
#define MAX_META_PAGES (2u * URAID_R5L_MAX_PAYLOADS)
/* the log read window (above); a meta block's pages larger than it are
   read past it, directly (md and uraid's write-through log both write such
   blocks after large writes: up to ~50 full rows of a 4-member RAID 5 in
   one block; those logs are read ~1.3 times during the scan) */
#define WINDOW_BYTES (256u << 10)
#define WINDOW_SECTORS ((uint64_t)WINDOW_BYTES / 512)
#define WINDOW_PAGES (WINDOW_BYTES / PAGE)

/* A page to write out: where it is in the log, where it goes. */
struct out_page {
	uint64_t rel;           /* log sectors from the scan's start (log order) */
	uint64_t pos;           /* its log sector */
	uint64_t sector;        /* member sector */
	unsigned slot;
};

struct row {
	uint64_t sector;        /* member sector of the row */
	bool active;            /* holds log pages not yet written out */
	bool caching;           /* data seen with no parity after it */
	uint8_t *want;          /* per slot: a page goes to the member */
	uint64_t *pos;          /* per slot: the log sector of that page */
};

struct replay {
	const struct uraid_geom *g;
	const struct journal_io *io;
	struct journal_replay_result *r;
	uint32_t seed;
	uint64_t log_sectors;
	unsigned parity_pages;          /* 1 RAID 4/5, 2 RAID 6 */
	struct row **list;              /* in order of first use */
	size_t n, cap;
	struct row **hash;              /* open addressing by sector, never removed */
	size_t hcap;
	uint8_t *meta;                  /* the meta block being read */
	uint8_t *pages;                 /* its pages when they wrap the ring (MAX_META_PAGES) */
	const uint8_t *pview;           /* its pages: in the window, or pages */
	uint64_t pages_at;              /* ring position of the first */
	uint8_t *win;                   /* the log read window (WINDOW_BYTES) */
	uint64_t win_at, win_len;       /* the ring sectors it holds (len 0: none) */
	uint8_t *rowbuf;                /* raid_disks pages: the row being written out */
	struct uraid_r5l_meta *m;
	char *err;
	size_t errlen;
};

static void note(struct replay *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct replay *p, const char *fmt, ...)
{
	char line[300];
	va_list ap;

	if (!p->io->note)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	p->io->note(p->io->ctx, line);
}

static void *page_alloc(size_t n)
{
	void *b = NULL;
	if (posix_memalign(&b, PAGE, n))
		return NULL;
	return b;
}

/* io->log_read, timed and counted for the debug line (journal.h). */
static int log_read(struct replay *p, uint64_t pos, void *buf, size_t len)
{
	uint64_t t0 = uraid_now_ns();
	int rc = p->io->log_read(p->io->ctx, pos, buf, len);

	p->r->ns_log_read += uraid_now_ns() - t0;
	p->r->log_reads++;
	p->r->log_read_bytes += len;
	return rc;
}

static size_t hash_of(uint64_t sector, size_t hcap)
{
	return (size_t)((sector / PAGE_SECTORS) * 0x9e3779b97f4a7c15ull >> 17) & (hcap - 1);
}

static int hash_grow(struct replay *p)
{
	size_t ncap = p->hcap ? p->hcap * 2 : 1024;
	struct row **nh = calloc(ncap, sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	for (size_t i = 0; i < p->n; i++) {
		size_t h = hash_of(p->list[i]->sector, ncap);
		while (nh[h])
			h = (h + 1) & (ncap - 1);
		nh[h] = p->list[i];
	}
	free(p->hash);
	p->hash = nh;
	p->hcap = ncap;
	return 0;
}

static struct row *row_find(const struct replay *p, uint64_t sector)
{
	if (!p->hcap)
		return NULL;
	for (size_t h = hash_of(sector, p->hcap); p->hash[h]; h = (h + 1) & (p->hcap - 1))
		if (p->hash[h]->sector == sector)
			return p->hash[h];
	return NULL;
}

/* The row at a member sector, made (inactive) when first seen. */
static struct row *row_get(struct replay *p, uint64_t sector)
{
	unsigned disks = p->g->raid_disks;
	size_t h;
	struct row *w = row_find(p, sector);

	if (w)
		return w;
	if ((p->n + 1) * 2 > p->hcap && hash_grow(p))
		return NULL;
	if (p->n == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 256;
		struct row **nl = realloc(p->list, ncap * sizeof(*nl));
		if (!nl)
			return NULL;
		p->list = nl;
		p->cap = ncap;
	}
	w = calloc(1, sizeof(*w) + (size_t)disks * (sizeof(uint64_t) + 1));
	if (!w)
		return NULL;
	w->pos = (uint64_t *)(w + 1);
	w->want = (uint8_t *)(w->pos + disks);
	w->sector = sector;
	p->list[p->n++] = w;
	for (h = hash_of(sector, p->hcap); p->hash[h]; h = (h + 1) & (p->hcap - 1))
		;
	p->hash[h] = w;
	return w;
}

static void row_reset(struct row *w, unsigned disks)
{
	w->active = false;
	w->caching = false;
	memset(w->want, 0, disks);
}

static uint8_t *row_page(const struct replay *p, struct row *w, unsigned slot)
{
	(void)w;
	return p->rowbuf + (size_t)slot * PAGE;
}

static void row_written(struct replay *p, const struct row *w)
{
	if (w->sector < p->r->low_row)
		p->r->low_row = w->sector;
}

/* The row's logged pages, read back from the log into rowbuf. */
static int row_load(struct replay *p, struct row *w)
{
	for (unsigned s = 0; s < p->g->raid_disks; s++) {
		if (!w->want[s])
			continue;
		int rc = log_read(p, w->pos[s], row_page(p, w, s), PAGE);
		if (rc)
			return uraid_errf(p->err, p->errlen, rc, "journal: reading log sector %"
					  PRIu64 " back: %s", w->pos[s], strerror(-rc));
	}
	return 0;
}

static int row_stripe(const struct replay *p, const struct row *w, struct uraid_stripe *st)
{
	return uraid_geom_stripe(p->g, w->sector / p->g->chunk_sectors, st);
}

static void xor_page(uint8_t *dst, const uint8_t *src)
{
	uint64_t *d = (uint64_t *)(void *)dst;
	const uint64_t *q = (const uint64_t *)(const void *)src;
	for (size_t i = 0; i < PAGE / 8; i++)
		d[i] ^= q[i];
}

static int rebuild_missing(struct replay *p, struct row *w, const struct uraid_stripe *st,
			   unsigned missing)
{
	uint8_t *dst = row_page(p, w, missing), *tmp = p->pages;
	int rc = p->io->member_read(p->io->ctx, (unsigned)st->p_slot, w->sector, dst, PAGE);

	if (rc == -ENODEV)
		return uraid_errf(p->err, p->errlen, -EIO,
				  "journal holds data without parity for the row at member "
				  "sector %" PRIu64 ", slot %u and its parity member are missing: "
				  "its parity cannot be computed; add a member back and assemble "
				  "again", w->sector, missing);
	for (unsigned k = 0; !rc && k < st->data_disks; k++) {
		unsigned s = st->data_slot[k];
		if (s == missing)
			continue;
		if (!w->want[s]) {
			xor_page(dst, row_page(p, w, s));
			continue;
		}
		rc = p->io->member_read(p->io->ctx, s, w->sector, tmp, PAGE);
		if (!rc)
			xor_page(dst, tmp);
	}
	if (rc)
		return uraid_errf(p->err, p->errlen, rc, "journal replay: reading the row at "
				  "sector %" PRIu64 " to rebuild slot %u: %s", w->sector, missing,
				  strerror(-rc));
	return 0;
}

/*
 * A row with data and no parity (write-back mode): its data to the members
 * and parity computed from the whole row, read from the members.
 */
static int row_write_data_only(struct replay *p, struct row *w)
{
	const struct uraid_geom *g = p->g;
	struct uraid_stripe st;
	void *syn[URAID_MAX_MEMBERS];
	unsigned nsyn;
	int rc = row_stripe(p, w, &st);

	if (rc)
		return uraid_errf(p->err, p->errlen, rc, "journal row at member sector %" PRIu64
				  ": no stripe", w->sector);
	/* parity is recomputed: a logged (older) parity page is not read */
	w->want[st.p_slot] = 0;
	if (st.q_slot >= 0)
		w->want[st.q_slot] = 0;
	if ((rc = row_load(p, w)))
		return rc;
	row_written(p, w);
	int missing = -1;       /* a data slot not present */
	for (unsigned k = 0; k < st.data_disks; k++) {
		unsigned s = st.data_slot[k];
		if (w->want[s])
			continue;
		rc = p->io->member_read(p->io->ctx, s, w->sector, row_page(p, w, s), PAGE);
		if (rc == -ENODEV && missing < 0) {
			missing = (int)s;
			continue;
		}
		if (rc == -ENODEV)
			return uraid_errf(p->err, p->errlen, -EIO,
					  "journal holds data without parity for the row at member "
					  "sector %" PRIu64 " and slots %d and %u are missing: its "
					  "parity cannot be computed; add a member back and assemble "
					  "again", w->sector, missing, s);
		if (rc)
			return uraid_errf(p->err, p->errlen, rc,
					  "journal replay: reading slot %u at sector %" PRIu64 ": %s",
					  s, w->sector, strerror(-rc));
	}
	/* the missing slot's content as the members hold it: the row's old P
	   xor the other data slots as on the members (those with a new page
	   read again into scratch, the meta pages' buffer, unused by now) */
	if (missing >= 0 && (rc = rebuild_missing(p, w, &st, (unsigned)missing)))
		return rc;
	if (st.q_slot < 0) {
		nsyn = st.data_disks;
		for (unsigned k = 0; k < nsyn; k++)
			syn[k] = row_page(p, w, st.data_slot[k]);
		rc = uraid_parity_gen_p(nsyn, PAGE, syn, row_page(p, w, (unsigned)st.p_slot));
	} else {
		nsyn = st.syndrome_slots;
		for (unsigned k = 0; k < nsyn; k++)
			syn[k] = (void *)uraid_parity_zero_block(PAGE);
		for (unsigned s = 0; s < g->raid_disks; s++)
			if (st.syndrome_of_slot[s] >= 0)
				syn[st.syndrome_of_slot[s]] = row_page(p, w, s);
		rc = uraid_parity_gen_pq(nsyn, PAGE, syn, row_page(p, w, (unsigned)st.p_slot),
					 row_page(p, w, (unsigned)st.q_slot));
	}
	if (rc)
		return uraid_errf(p->err, p->errlen, rc, "journal replay: parity of a row");
	w->want[st.p_slot] = 1;
	if (st.q_slot >= 0)
		w->want[st.q_slot] = 1;
	for (unsigned s = 0; s < g->raid_disks; s++) {
		if (!w->want[s])
			continue;
		rc = p->io->member_write(p->io->ctx, s, w->sector, row_page(p, w, s), PAGE);
		if (rc == -ENODEV && ((int)s == st.p_slot || (int)s == st.q_slot))
			continue;       /* a missing parity member: nothing to keep in step */
		if (rc == -ENODEV)
			continue;       /* a missing data member: the parity written holds it */
		if (rc)
			return uraid_errf(p->err, p->errlen, rc,
					  "journal replay: writing slot %u at sector %" PRIu64 ": %s",
					  s, w->sector, strerror(-rc));
	}
	p->r->data_only_rows++;
	row_reset(w, g->raid_disks);
	return 0;
}

/*
 * Ring sectors [pos, pos + n) through the window: *out points at them,
 * valid until the next call. They must not wrap the ring's end (the
 * callers split there) and n is at most WINDOW_SECTORS. A miss fills the
 * window from pos on, up to the ring's end.
 */
static int win_get(struct replay *p, uint64_t pos, uint64_t n, const uint8_t **out)
{
	if (!p->win_len || pos < p->win_at || pos + n > p->win_at + p->win_len) {
		uint64_t len = p->log_sectors - pos < WINDOW_SECTORS ? p->log_sectors - pos
								     : WINDOW_SECTORS;
		int rc = log_read(p, pos, p->win, len * 512);
		if (rc) {
			p->win_len = 0;
			return uraid_errf(p->err, p->errlen, rc, "journal: reading log sectors %"
					  PRIu64 "+%" PRIu64 ": %s", pos, len, strerror(-rc));
		}
		p->win_at = pos;
		p->win_len = len;
	}
	*out = p->win + (pos - p->win_at) * 512;
	return 0;
}

static int read_page(struct replay *p, uint64_t pos, void *buf)
{
	const uint8_t *src;
	int rc = win_get(p, pos, PAGE_SECTORS, &src);

	if (rc)
		return rc;
	memcpy(buf, src, PAGE);
	return 0;
}

/* The meta block's pages: in the window, or copied out of it in two pieces
   when they wrap the ring's end (read directly when larger than it). */
static int read_meta_pages(struct replay *p, uint64_t pos)
{
	uint64_t at = uraid_r5l_ring_add(p->log_sectors, pos, PAGE_SECTORS);
	uint64_t left = (uint64_t)p->m->total_pages * PAGE_SECTORS, done = 0;
	bool big = left > WINDOW_SECTORS;
	const uint8_t *src;
	int rc;

	p->pages_at = at;
	if (!big && p->log_sectors - at >= left) {
		rc = win_get(p, at, left, &src);
		p->pview = src;
		return rc;
	}
	while (left) {
		uint64_t n = p->log_sectors - at < left ? p->log_sectors - at : left;
		if (big) {
			rc = log_read(p, at, p->pages + done * 512, n * 512);
			if (rc)
				return uraid_errf(p->err, p->errlen, rc, "journal: reading log "
						  "sectors %" PRIu64 "+%" PRIu64 ": %s", at, n,
						  strerror(-rc));
		} else if ((rc = win_get(p, at, n, &src))) {
			return rc;
		} else {
			memcpy(p->pages + done * 512, src, n * 512);
		}
		done += n;
		left -= n;
		at = uraid_r5l_ring_add(p->log_sectors, at, n);
	}
	p->pview = p->pages;
	return 0;
}

/* Page k of payload pl, from the pages read_meta_pages read. */
static const uint8_t *log_page(const struct replay *p, const struct uraid_r5l_payload *pl,
			       unsigned k)
{
	uint64_t d = (pl->log_sector + p->log_sectors - p->pages_at) % p->log_sectors;
	return p->pview + (d / PAGE_SECTORS + k) * (size_t)PAGE;
}

/* md's r5l_recovery_verify_data_checksum_for_mb: 0, 1 on a mismatch, -errno. */
static int pages_mismatch(struct replay *p)
{
	for (unsigned i = 0; i < p->m->npayloads; i++) {
		const struct uraid_r5l_payload *pl = &p->m->p[i];
		for (unsigned k = 0; k < pl->pages; k++) {
			uint64_t at = uraid_r5l_ring_add(p->log_sectors, pl->log_sector,
							 (uint64_t)k * PAGE_SECTORS);
			if (uraid_r5l_page_csum(p->seed, log_page(p, pl, k)) != pl->checksum[k]) {
				note(p, "journal: page at log sector %" PRIu64 " of the meta block "
				     "seq %" PRIu64 " does not match its checksum: block dropped",
				     at, p->m->seq);
				return 1;
			}
		}
	}
	return 0;
}

/* md's r5c_recovery_analyze_meta_block, once the pages are known good. */
static int analyze(struct replay *p)
{
	const struct uraid_geom *g = p->g;
	int rc;

	for (unsigned i = 0; i < p->m->npayloads; i++) {
		const struct uraid_r5l_payload *pl = &p->m->p[i];
		struct uraid_loc loc;
		struct uraid_stripe st;
		struct row *w;

		if (pl->type == URAID_R5L_FLUSH) {
			for (unsigned k = 0; k < pl->nflush; k++) {
				w = row_find(p, uraid_r5l_flush_sector(p->meta, pl, k));
				if (w)
					row_reset(w, g->raid_disks);
			}
			continue;
		}
		if (pl->type == URAID_R5L_DATA) {
			if (pl->location >= g->array_sectors ||
			    g->array_sectors - pl->location < PAGE_SECTORS)
				return uraid_errf(p->err, p->errlen, -EINVAL,
						  "journal: DATA at array sector %" PRIu64
						  " is past the array's end (%" PRIu64 ")",
						  pl->location, g->array_sectors);
			if (uraid_geom_map(g, pl->location, &loc, 1) < 1)
				return uraid_errf(p->err, p->errlen, -EINVAL,
						  "journal: DATA at array sector %" PRIu64
						  " has no place", pl->location);
			w = row_get(p, loc.sector);
			if (!w)
				return uraid_errf(p->err, p->errlen, -ENOMEM, "journal replay: memory");
			/* data after parity: a newer write of the row; its pages
			   replace the slots it names (merged, see the top) */
			w->pos[loc.slot] = pl->log_sector;
			w->want[loc.slot] = 1;
			w->caching = true;
			w->active = true;
			continue;
		}
		/* PARITY: location is the row's member sector */
		if (pl->location >= g->dev_sectors || g->dev_sectors - pl->location < PAGE_SECTORS)
			return uraid_errf(p->err, p->errlen, -EINVAL,
					  "journal: PARITY at member sector %" PRIu64
					  " is past the members' end (%" PRIu64 ")",
					  pl->location, g->dev_sectors);
		w = row_get(p, pl->location);
		if (!w)
			return uraid_errf(p->err, p->errlen, -ENOMEM, "journal replay: memory");
		rc = row_stripe(p, w, &st);
		if (rc)
			return uraid_errf(p->err, p->errlen, rc, "journal: PARITY row %" PRIu64,
					  pl->location);
		w->pos[st.p_slot] = pl->log_sector;
		if (st.q_slot >= 0)
			w->pos[st.q_slot] = uraid_r5l_ring_add(p->log_sectors, pl->log_sector,
								PAGE_SECTORS);
		w->want[st.p_slot] = 1;
		if (st.q_slot >= 0)
			w->want[st.q_slot] = 1;
		w->caching = false;
		w->active = true;
	}
	return 0;
}

static int out_by_log_order(const void *a, const void *b)
{
	const struct out_page *x = a, *y = b;
	return (x->rel > y->rel) - (x->rel < y->rel);
}

static int wr_by_place(const void *a, const void *b)
{
	const struct journal_wr *x = a, *y = b;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return (x->sector > y->sector) - (x->sector < y->sector);
}

/* One window's writes, in member and sector order; a missing slot skipped. */
static int write_batch(struct replay *p, struct journal_wr *w, size_t n)
{
	size_t failed = 0;
	uint64_t t0 = uraid_now_ns();
	int rc = 0;

	qsort(w, n, sizeof(*w), wr_by_place);
	p->r->write_batches++;
	p->r->page_writes += n;
	if (p->io->member_write_batch) {
		rc = p->io->member_write_batch(p->io->ctx, w, n, &failed);
	} else {
		for (; failed < n; failed++) {
			rc = p->io->member_write(p->io->ctx, w[failed].slot, w[failed].sector,
						 w[failed].buf, w[failed].len);
			if (rc && rc != -ENODEV)
				break;
			rc = 0;
		}
	}
	p->r->ns_write += uraid_now_ns() - t0;
	if (rc)
		return uraid_errf(p->err, p->errlen, rc, "journal replay: writing slot %u at "
				  "sector %" PRIu64 ": %s", failed < n ? w[failed].slot : 0,
				  failed < n ? w[failed].sector : 0, strerror(-rc));
	return 0;
}

/*
 * md's r5l_recovery_replay_one_stripe for every row with data and parity:
 * each logged page to its member. The pages are listed, taken in log order
 * (from cp, the scan's start) through the window, and written a window at
 * a time. Each (slot, sector) is written once (one row per sector, one page
 * per slot), so the order of the writes does not matter; all are flushed
 * before the new log starts.
 */
static int write_out_rows(struct replay *p, uint64_t cp)
{
	unsigned disks = p->g->raid_disks;
	struct out_page *o = NULL;
	struct journal_wr *w = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	for (size_t i = 0; i < p->n && !rc; i++) {
		struct row *row = p->list[i];
		struct uraid_stripe st;
		unsigned data = 0;

		if (!row->active || row->caching)
			continue;
		if ((rc = row_stripe(p, row, &st))) {
			rc = uraid_errf(p->err, p->errlen, rc, "journal row at member sector %" PRIu64
					": no stripe", row->sector);
			break;
		}
		for (unsigned s = 0; s < disks; s++)
			data += row->want[s] && (int)s != st.p_slot && (int)s != st.q_slot;
		if (data) {
			row_written(p, row);
			if (n + disks > cap) {
				size_t ncap = cap ? cap * 2 : 4096;
				struct out_page *no = realloc(o, ncap * sizeof(*no));
				if (!no) {
					rc = uraid_errf(p->err, p->errlen, -ENOMEM,
							"journal replay: memory");
					break;
				}
				o = no;
				cap = ncap;
			}
			for (unsigned s = 0; s < disks; s++)
				if (row->want[s])
					o[n++] = (struct out_page){
						.rel = (row->pos[s] + p->log_sectors - cp) % p->log_sectors,
						.pos = row->pos[s], .sector = row->sector, .slot = s };
			p->r->data_parity_rows++;
		}
		row_reset(row, disks);
	}
	if (!rc && n && !(w = malloc(WINDOW_PAGES * sizeof(*w))))
		rc = uraid_errf(p->err, p->errlen, -ENOMEM, "journal replay: memory");
	if (!rc)
		qsort(o, n, sizeof(*o), out_by_log_order);
	for (size_t i = 0; i < n && !rc;) {
		const uint8_t *pg;
		size_t k = 0;

		if ((rc = win_get(p, o[i].pos, PAGE_SECTORS, &pg)))
			break;
		for (; i < n && k < WINDOW_PAGES && o[i].pos >= p->win_at &&
		       o[i].pos + PAGE_SECTORS <= p->win_at + p->win_len; i++)
			w[k++] = (struct journal_wr){ .slot = o[i].slot, .sector = o[i].sector,
				.buf = p->win + (o[i].pos - p->win_at) * 512, .len = PAGE };
		rc = write_batch(p, w, k);
	}
	free(w);
	free(o);
	return rc;
}

static int write_empty_meta(struct replay *p, uint64_t pos, uint64_t seq)
{
	int rc;

	uraid_r5l_meta_init(p->meta, seq, pos);
	uraid_r5l_meta_seal(p->meta, p->seed);
	p->win_len = 0;         /* the window no longer matches the log */
	rc = p->io->log_write(p->io->ctx, pos, p->meta, PAGE);
	if (!rc)
		rc = p->io->log_flush(p->io->ctx);
	if (rc)
		return uraid_errf(p->err, p->errlen, rc, "journal: writing the meta block at log "
				  "sector %" PRIu64 ": %s", pos, strerror(-rc));
	return 0;
}

static int scan_and_replay(struct replay *p, uint64_t cp)
{
	struct journal_replay_result *r = p->r;
	char why[200] = "";
	uint64_t pos = cp, seq, scanned = 0, t0 = uraid_now_ns(), t1;
	int rc;

	rc = read_page(p, cp, p->meta);
	if (rc)
		return rc;
	/* md's r5l_load_log: the block at the tail gives the first seq */
	memcpy(&seq, p->meta + 16, 8);
	seq = le64toh(seq);
	if (uraid_r5l_meta_decode(p->meta, p->seed, cp, seq, p->log_sectors, p->parity_pages,
				  p->m, why, sizeof(why))) {
		uint32_t fresh;
		if (getrandom(&fresh, sizeof(fresh), 0) != sizeof(fresh))
			fresh = (uint32_t)cp ^ 0x5eed;
		note(p, "journal: no valid meta block at the tail (%s): a new log starts", why);
		r->new_log = true;
		rc = write_empty_meta(p, 0, fresh);
		if (rc)
			return rc;
		r->tail = 0;
		r->log_start = PAGE_SECTORS;
		r->next_seq = (uint64_t)fresh + 1;
		snprintf(r->stop, sizeof(r->stop), "%s", why);
		return 0;
	}
	for (;;) {
		uint64_t advance = PAGE_SECTORS;

		if (scanned >= p->log_sectors) {
			snprintf(why, sizeof(why), "scanned the whole ring");
			break;
		}
		rc = read_page(p, pos, p->meta);
		if (rc)
			return rc;
		if (uraid_r5l_meta_decode(p->meta, p->seed, pos, seq, p->log_sectors,
					  p->parity_pages, p->m, why, sizeof(why)))
			break;
		r->meta_blocks++;
		rc = read_meta_pages(p, pos);
		if (rc)
			return rc;
		uint64_t tc = uraid_now_ns();
		rc = pages_mismatch(p);
		r->ns_csum += uraid_now_ns() - tc;
		if (rc < 0)
			return rc;
		if (rc == 0) {
			rc = analyze(p);
			if (rc)
				return rc;
			advance += (uint64_t)p->m->total_pages * PAGE_SECTORS;
		} else {
			r->bad_meta++;
		}
		seq++;
		pos = uraid_r5l_ring_add(p->log_sectors, pos, advance);
		scanned += advance;
	}
	snprintf(r->stop, sizeof(r->stop), "at log sector %" PRIu64 ": %s", pos, why);

	t1 = uraid_now_ns();
	r->ns_scan = t1 - t0;
	/* rows with data and parity, then rows with data only */
	if ((rc = write_out_rows(p, cp)))
		return rc;
	for (size_t i = 0; i < p->n; i++)
		if (p->list[i]->active && (rc = row_write_data_only(p, p->list[i])))
			return rc;
	t0 = uraid_now_ns();
	r->ns_rows = t0 - t1;
	if (r->data_parity_rows || r->data_only_rows) {
		rc = p->io->member_flush(p->io->ctx);
		if (rc)
			return uraid_errf(p->err, p->errlen, rc, "journal replay: flushing the members: %s",
					  strerror(-rc));
	}
	t1 = uraid_now_ns();
	r->ns_flush = t1 - t0;
	/* md's r5l_recovery_log: the new log starts at the first invalid block */
	seq += SEQ_SKIP;
	rc = write_empty_meta(p, pos, seq);
	if (rc)
		return rc;
	r->ns_meta = uraid_now_ns() - t1;
	r->tail = pos;
	r->log_start = uraid_r5l_ring_add(p->log_sectors, pos, PAGE_SECTORS);
	r->next_seq = seq + 1;
	note(p, "journal: %u meta blocks from log sector %" PRIu64 ": %u rows written, %u with "
	     "parity recomputed, %u blocks dropped; log restarts at sector %" PRIu64 " seq %" PRIu64,
	     r->meta_blocks, cp, r->data_parity_rows, r->data_only_rows, r->bad_meta, pos, seq);
	return 0;
}

int journal_replay(const struct uraid_geom *g, const uint8_t uuid[16], uint64_t log_sectors,
		   uint64_t tail, const struct journal_io *io, struct journal_replay_result *r,
		   char *err, size_t errlen)
{
	struct replay p = { .g = g, .io = io, .r = r, .err = err, .errlen = errlen };
	int rc;

	memset(r, 0, sizeof(*r));
	r->low_row = UINT64_MAX;
	if (g->level != URAID_LEVEL_4 && g->level != URAID_LEVEL_5 && g->level != URAID_LEVEL_6)
		return uraid_errf(err, errlen, -EINVAL, "a write journal needs RAID 4, 5 or 6");
	if (g->chunk_sectors % PAGE_SECTORS)
		return uraid_errf(err, errlen, -EINVAL, "chunk of %u sectors is not whole 4 KiB "
				  "pages", g->chunk_sectors);
	log_sectors -= log_sectors % PAGE_SECTORS;
	if (log_sectors < 4 * PAGE_SECTORS)
		return uraid_errf(err, errlen, -EINVAL, "journal of %" PRIu64 " sectors is too "
				  "small", log_sectors);
	p.log_sectors = log_sectors;
	p.parity_pages = g->level == URAID_LEVEL_6 ? 2 : 1;
	p.seed = uraid_r5l_seed(uuid);
	/* md's r5l_load_log: a tail out of the ring or off 4 KiB means 0 */
	if (tail >= log_sectors || tail % PAGE_SECTORS)
		tail = 0;
	p.meta = page_alloc(PAGE);
	p.pages = page_alloc((size_t)MAX_META_PAGES * PAGE);
	p.m = malloc(sizeof(*p.m));
	p.rowbuf = page_alloc((size_t)g->raid_disks * PAGE);
	p.win = page_alloc(WINDOW_BYTES);
	if (!p.meta || !p.pages || !p.m || !p.rowbuf || !p.win)
		rc = uraid_errf(err, errlen, -ENOMEM, "journal replay: memory");
	else
		rc = scan_and_replay(&p, tail);
	for (size_t i = 0; i < p.n; i++)
		free(p.list[i]);
	free(p.rowbuf);
	free(p.list);
	free(p.hash);
	free(p.meta);
	free(p.pages);
	free(p.win);
	free(p.m);
	return rc;
}
