/* SPDX-License-Identifier: MIT */
/*
 * md's PPL at assembly (kernel raid5-ppl.c ppl_load, ppl_recover; facts in
 * uraid/ppl.h). Runs once, on the assembling thread, with blocking I/O,
 * before the array takes requests:
 *
 *   for each member in its slot: walk its area from the start, header by
 *   header (each followed by its entries' partial parity), while headers
 *   are valid (checksum, signature) and their generation grows: the last is
 *   the newest log (an area too small for two logs holds one, at its start:
 *   the walk stops there). At a dirty start, each entry of it whose partial parity
 *   checks is replayed: parity = XOR(current data of the entry's chunks) ^
 *   partial parity, written to the row's parity member, 4 KiB at a time
 *   where aligned (else 512 bytes), as md does. An entry whose data member
 *   is missing is left (md's rule). Then the area is zeroed and an empty
 *   header written.
 *
 * md then marks the array clean when entries were recovered, no entry or
 * header failed its checksum and the resync checkpoint was 0 (a resync
 * begun before goes on from its checkpoint); uraid does the same
 * (a->resync_needed false), and otherwise the resync runs as for an array
 * without a log.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <linux/fs.h>

#include <uraid/ppl.h>

#include "common/errmsg.h"
#include "common/full_io.h"
#include "engine/core/array.h"
#include "engine/level/parity_log.h"
#include "engine/level/raid5_ppl.h"
#include "engine/md/ppl.h"

#define PPL_FEATURES (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS)
/* md: one bit per member in a flush bitmap of 64 bits */
#define PPL_MAX_MEMBERS 64u
#define HDR_SECTORS (URAID_PPL_HEADER_BYTES / 512u)

bool ppl_enabled(const struct array *a)
{
	return (a->sb.feature_map & PPL_FEATURES) != 0;
}

struct recover {
	struct array *a;
	uint32_t signature;
	uint64_t area_sectors;
	bool multi;                     /* md's use_multippl: the area holds two logs */
	uint8_t *page;                  /* 4 KiB, aligned: headers, partial parity */
	uint8_t *blk, *acc;             /* 4 KiB each: a data block, the new parity */
	struct uraid_ppl_header *h, *prev;
	unsigned recovered, mismatches, skipped;
};

const struct uraid_sb *ppl_place_sb(const struct array *a, unsigned k)
{
	if (k < a->nmembers && (a->member_sb[k].feature_map & PPL_FEATURES))
		return &a->member_sb[k];
	return &a->sb;
}

uint64_t ppl_member_area(const struct array *a, const struct member *m)
{
	for (unsigned k = 0; m && k < a->nmembers; k++)
		if (a->members[k] == m)
			return (uint64_t)((int64_t)a->member_sb[k].super_offset +
					  uraid_sb_ppl_offset(ppl_place_sb(a, k)));
	return (uint64_t)((int64_t)a->sb.super_offset + uraid_sb_ppl_offset(&a->sb));
}

/* The PPL area of the member in slot s: absolute start sector (its own
   superblock's place; assembly checked the area against its device). */
static uint64_t area_start(const struct array *a, unsigned s)
{
	return ppl_member_area(a, a->slot[s].m);
}

/* The area's sectors md uses: its log's room rounded down to whole 4 KiB
   pages (ppl_validate_rdev). Each member's superblock gives its own
   ppl.size; uraid runs one log shape on every member, in the least (the
   members' kinds, one log or two, agree: ppl_attach). */
static uint64_t area_sectors(const struct array *a)
{
	uint64_t n = uraid_sb_ppl_size(&a->sb);

	for (unsigned k = 0; k < a->nmembers; k++)
		if (a->members[k] && a->member_state[k] != URAID_MEMBER_JOURNAL &&
		    uraid_sb_ppl_size(ppl_place_sb(a, k)) < n)
			n = uraid_sb_ppl_size(ppl_place_sb(a, k));
	if (n < HDR_SECTORS)
		return HDR_SECTORS;     /* refused by the area check at assembly */
	return HDR_SECTORS + (n - HDR_SECTORS) / 8 * 8;
}

/* Members whose own ppl.size makes md keep two logs where another's makes
   it keep one: -1 when they agree, else the index of one that differs
   from the least (md decides per member, uraid once for all). */
static int mixed_kinds(const struct array *a, uint64_t least)
{
	for (unsigned k = 0; k < a->nmembers; k++)
		if (a->members[k] && a->member_state[k] != URAID_MEMBER_JOURNAL &&
		    ppl_area_multi(uraid_sb_ppl_size(ppl_place_sb(a, k))) != ppl_area_multi(least))
			return (int)k;
	return -1;
}

/* Read or write within a member's data area (sectors from data_offset). */
static int data_rw(struct member *m, bool write, void *buf, uint32_t len, uint64_t sector)
{
	if (!member_in_data(m, sector, len / 512))
		return member_wall(m, write ? "PPL recovery write" : "PPL recovery read", true,
				   sector, len / 512);
	uint64_t off = (m->base + m->data_offset + sector) * 512;   /* base: a range member */
	return write ? uraid_pwrite_full(m->fd, buf, len, off)
		     : uraid_pread_full(m->fd, buf, len, off);
}

/* Word by word: the buffers are 4 KiB aligned, len a multiple of 512. */
static void xor_into(uint8_t *dst, const uint8_t *src, size_t len)
{
	uint64_t *d = (uint64_t *)dst;
	const uint64_t *s = (const uint64_t *)src;

	for (size_t i = 0; i < len / 8; i++)
		d[i] ^= s[i];
}

/*
 * Replay one entry logged on slot ls (its partial parity at pp_sector,
 * absolute). md's ppl_recover_entry: the entry covers data_disks
 * consecutive data chunks from data_sector, strip_sectors of each.
 */
static int recover_entry(struct recover *rc, unsigned ls, const struct uraid_ppl_entry *e,
			 uint64_t pp_sector)
{
	struct array *a = rc->a;
	const struct uraid_geom *g = &a->geom;
	uint32_t C = g->chunk_sectors, d = g->data_disks;
	uint64_t row_len = (uint64_t)d * C;
	uint64_t first = e->data_sector, last;
	uint32_t data_disks, strip;
	const struct ulog *log = array_log(a);

	if (e->pp_size / 512 < C) {
		if (e->pp_size) {
			data_disks = e->data_size / e->pp_size;
			strip = e->pp_size / 512;
		} else {
			data_disks = d;
			strip = e->data_size / 512 / d;
		}
		last = first + (uint64_t)(data_disks - 1) * C + strip;
	} else {
		data_disks = d;
		strip = C;
		last = first + e->data_size / 512;
	}
	/* every number came from the disk: the entry must lie in one row */
	if (data_disks == 0 || data_disks > d || strip == 0 || strip > C ||
	    first >= uraid_geom_array_sectors(g) || first % C + strip > C ||
	    last > (first / row_len + 1) * row_len) {
		ulog(log, URAID_LOG_WARNING, "PPL on %s: entry at array sector %" PRIu64
		     " (pp_size %" PRIu32 ", data_size %" PRIu32 ") does not fit one stripe row "
		     "of this array: not replayed", a->slot[ls].m->path, first, e->pp_size,
		     e->data_size);
		rc->skipped++;
		return 0;
	}
	struct uraid_stripe st;
	uint64_t row = first / row_len;
	if (uraid_geom_stripe(g, row, &st) < 0 || (uint32_t)st.p_slot != e->parity_disk ||
	    (unsigned)st.p_slot != ls) {
		ulog(log, URAID_LOG_WARNING, "PPL on %s: entry at array sector %" PRIu64
		     " names parity member %" PRIu32 ", the row's is %d: not replayed",
		     a->slot[ls].m->path, first, e->parity_disk, st.p_slot);
		rc->skipped++;
		return 0;
	}
	uint32_t k0 = (uint32_t)((first % row_len) / C), x0 = (uint32_t)(first % C);
	uint32_t bs = 1;
	if (first % 8 == 0 && last % 8 == 0)
		bs = 8;                 /* md: 4 KiB blocks when both ends are aligned */
	for (uint32_t i = 0; i < strip; i += bs) {
		uint32_t n = bs * 512;
		bool update = false;

		memset(rc->acc, 0, n);
		for (uint32_t disk = 0; disk < data_disks; disk++) {
			uint64_t r = first + i + (uint64_t)disk * C;

			if (r >= last)
				continue;
			/* r < last <= the row's end: data index k0 + disk < d */
			unsigned s = st.data_slot[k0 + disk];
			if (!slot_ok(a, s)) {
				update = false;         /* a modified data member is missing */
				break;
			}
			update = true;
			int err = data_rw(a->slot[s].m, false, rc->blk, n, row * C + x0 + i);
			if (err)
				return err;
			xor_into(rc->acc, rc->blk, n);
		}
		if (!update)
			continue;
		if (e->pp_size) {
			int err = member_pread_sync(a->slot[ls].m, rc->blk, n, pp_sector + i);
			if (err)
				return err;
			xor_into(rc->acc, rc->blk, n);
		}
		int err = data_rw(a->slot[ls].m, true, rc->acc, n, row * C + x0 + i);
		if (err)
			return err;
	}
	rc->recovered++;
	return 0;
}

/*
 * md's walk: the newest valid header of slot s's area into rc->h (NULL
 * return: none); *at: its sector offset in the area.
 */
static struct uraid_ppl_header *find_newest(struct recover *rc, unsigned s, uint64_t *at, int *ioerr)
{
	struct member *m = rc->a->slot[s].m;
	struct uraid_ppl_header *bufs[2] = { rc->h, rc->prev }, *prev = NULL;
	unsigned ci = 0;
	uint64_t off = 0, prev_off = 0;
	char why[200];

	*ioerr = 0;
	while (off + HDR_SECTORS < rc->area_sectors) {
		struct uraid_ppl_header *cur = bufs[ci];
		int err = member_pread_sync(m, rc->page, URAID_PPL_HEADER_BYTES,
					    area_start(rc->a, s) + off);
		if (err) {
			*ioerr = err;
			return NULL;
		}
		uint64_t room = (rc->area_sectors - off - HDR_SECTORS) * 512;
		if (uraid_ppl_decode(rc->page, rc->signature, room, cur, why, sizeof(why))) {
			if (!prev) {
				rc->mismatches++;
				ulog(array_log(rc->a), URAID_LOG_INFO, "PPL on %s: no valid log (%s)",
				     m->path, why);
			}
			break;
		}
		if (prev && prev->generation > cur->generation)
			break;          /* the one before was the newest */
		prev = cur;
		prev_off = off;
		ci ^= 1;
		/* one log at the area's start only: what follows it is not the
		   log's (md walks on only with multiple PPLs) */
		if (!rc->multi)
			break;
		off += HDR_SECTORS + uraid_ppl_pp_total(prev) / 512;
	}
	*at = prev_off;
	return prev;
}

/* Replay the newest log of slot s. */
static int recover_member(struct recover *rc, unsigned s)
{
	uint64_t at;
	int ioerr;
	struct uraid_ppl_header *h = find_newest(rc, s, &at, &ioerr);

	if (ioerr)
		return ioerr;
	if (!h)
		return 0;
	uint64_t pp = area_start(rc->a, s) + at + HDR_SECTORS;
	for (uint32_t i = 0; i < h->entries_count; i++) {
		const struct uraid_ppl_entry *e = &h->entries[i];
		uint32_t crc = ~0u;

		/* the entry's partial parity must check before it is used */
		for (uint32_t done = 0; done < e->pp_size; done += URAID_PPL_HEADER_BYTES) {
			uint32_t n = e->pp_size - done < URAID_PPL_HEADER_BYTES ?
				     e->pp_size - done : URAID_PPL_HEADER_BYTES;
			int err = member_pread_sync(rc->a->slot[s].m, rc->page, n, pp + done / 512);
			if (err)
				return err;
			crc = uraid_ppl_crc32c(crc, rc->page, n);
		}
		if (~crc != e->checksum) {
			ulog(array_log(rc->a), URAID_LOG_WARNING, "PPL on %s: entry %" PRIu32
			     " (generation %" PRIu64 ") fails its checksum: the replay of this log "
			     "skips it", rc->a->slot[s].m->path, i, h->generation);
			rc->mismatches++;
		} else {
			int err = recover_entry(rc, s, e, pp);
			if (err)
				return err;
		}
		pp += e->pp_size / 512;
	}
	return 0;
}

/* md's ppl_write_empty_header: member m's area (start, sectors) zeroed,
   then an empty header; page: 4 KiB of room. */
static int empty_area(struct member *m, uint64_t start, uint64_t sectors, uint32_t signature,
		      uint8_t *page)
{
	struct uraid_ppl_header h = { .signature = signature };
	int err = 0;

	memset(page, 0, URAID_PPL_HEADER_BYTES);
	for (uint64_t off = HDR_SECTORS; off < sectors && !err; off += HDR_SECTORS) {
		uint64_t n = sectors - off < HDR_SECTORS ? sectors - off : HDR_SECTORS;
		err = member_pwrite_sync(m, page, n * 512, start + off);
	}
	if (!err)
		err = uraid_ppl_encode(&h, page);
	if (!err)
		err = member_pwrite_sync(m, page, URAID_PPL_HEADER_BYTES, start);
	if (!err && fdatasync(m->fd) < 0)
		err = -errno;
	return err;
}

static int write_empty(struct recover *rc, unsigned s)
{
	return empty_area(rc->a->slot[s].m, area_start(rc->a, s), rc->area_sectors, rc->signature,
			  rc->page);
}

int ppl_write_empty(struct array *a, struct member *m)
{
	uint8_t *page = aligned_alloc(4096, URAID_PPL_HEADER_BYTES);
	if (!page)
		return -ENOMEM;
	int err = empty_area(m, ppl_member_area(a, m), area_sectors(a),
			     uraid_ppl_signature(a->sb.set_uuid), page);
	free(page);
	return err;
}

bool ppl_area_multi(uint64_t sectors)
{
	return sectors * 512 >= 2ull * (URAID_PPL_SPACE_BYTES + URAID_PPL_HEADER_BYTES);
}

int ppl_log_new(struct array *a, struct parity_log **out)
{
	uint64_t n = area_sectors(a);

	return raid5_ppl_log_create(a, n, uraid_ppl_signature(a->sb.set_uuid), ppl_area_multi(n),
				    out);
}

int ppl_member_joins(struct array *a, unsigned s, struct member *m)
{
	if (!a->plog || !ppl_enabled(a) || !m)
		return 0;
	int err = ppl_write_empty(a, m);
	if (err) {
		ulog(array_log(a), URAID_LOG_WARNING, "%s: cannot empty its PPL area (%s): slot %u "
		     "is written without a log", m->path, strerror(-err), s);
		return err;
	}
	raid5_ppl_set_ready(a->plog, s, m);
	return 0;
}

int ppl_attach(struct array *a, char *err, size_t errlen)
{
	struct recover rc = { .a = a };
	int rc_err = 0;
	unsigned s;

	if (!ppl_enabled(a))
		return 0;
	if (a->sb.level != 5)
		return uraid_errf(err, errlen, -EINVAL, "a partial parity log on a level %d array: "
				  "md runs PPL on RAID 5 only; not run", a->sb.level);
	if (a->geom.raid_disks > PPL_MAX_MEMBERS)
		return uraid_errf(err, errlen, -EINVAL, "a partial parity log on %u members: md "
				  "runs PPL on %u at most; not run", a->geom.raid_disks,
				  PPL_MAX_MEMBERS);
	/* md counts an entry's data_sector in the array's logical blocks;
	   uraid's entries and replay count 512-byte sectors */
	for (s = 0; s < a->geom.raid_disks; s++) {
		struct member *m = a->slot[s].m;
		int lbs = 512;

		if (m && m->blockdev && m->fd >= 0 && ioctl(m->fd, BLKSSZGET, &lbs) == 0 && lbs != 512)
			return uraid_errf(err, errlen, -EINVAL, "%s: logical block size %d: uraid "
					  "runs a partial parity log on 512-byte blocks only (md "
					  "counts its entries in logical blocks); not run",
					  m->path, lbs);
	}
	rc.area_sectors = area_sectors(a);
	int mixed = mixed_kinds(a, rc.area_sectors);
	if (mixed >= 0) {
		/* name the member of the least size too (the one that differs
		   may be the odd one out) */
		const char *least = "another member";
		for (unsigned k = 0; k < a->nmembers; k++)
			if (a->members[k] && a->member_state[k] != URAID_MEMBER_JOURNAL &&
			    ppl_area_multi(uraid_sb_ppl_size(ppl_place_sb(a, k))) ==
			    ppl_area_multi(rc.area_sectors)) {
				least = a->members[k]->path;
				break;
			}
		return uraid_errf(err, errlen, -EINVAL, "%s: its ppl.size of %u sectors holds %s "
				  "where %s's (%" PRIu64 " sectors used) holds %s: md keeps the log's "
				  "shape per member, uraid one for all; not run",
				  a->members[mixed]->path,
				  uraid_sb_ppl_size(ppl_place_sb(a, (unsigned)mixed)),
				  ppl_area_multi(rc.area_sectors) ? "one log" : "two logs",
				  least, rc.area_sectors,
				  ppl_area_multi(rc.area_sectors) ? "two" : "one");
	}
	/* md logs one write after another through an area that holds two
	   (use_multippl, MULTIPLE_PPLS) and at its start otherwise */
	rc.multi = ppl_area_multi(rc.area_sectors);
	rc.signature = uraid_ppl_signature(a->sb.set_uuid);
	if (a->flags & URAID_ASSEMBLE_READONLY)
		return 0;       /* nothing written: no replay, no log (no writes come) */

	rc.page = aligned_alloc(4096, 3 * URAID_PPL_HEADER_BYTES);
	rc.h = malloc(sizeof(*rc.h));
	rc.prev = malloc(sizeof(*rc.prev));
	if (!rc.page || !rc.h || !rc.prev) {
		rc_err = -ENOMEM;
		goto out;
	}
	rc.blk = rc.page + URAID_PPL_HEADER_BYTES;
	rc.acc = rc.blk + URAID_PPL_HEADER_BYTES;
	bool dirty = a->resync_needed;
	for (s = 0; s < a->geom.raid_disks && dirty; s++) {
		if (!slot_ok(a, s))
			continue;
		if ((rc_err = recover_member(&rc, s))) {
			uraid_errf(err, errlen, rc_err, "PPL replay on %s: %s", a->slot[s].m->path,
				   strerror(-rc_err));
			goto out;
		}
	}
	if (dirty) {
		/* md (ppl_init_log) marks the array clean only when its resync
		   had not begun: a stopped initial or partial resync goes on
		   from its checkpoint, the replay does not cover the rows past it */
		bool clean = rc.recovered && !rc.mismatches && a->resync_checkpoint == 0;
		ulog(array_log(a), clean ? URAID_LOG_INFO : URAID_LOG_WARNING,
		     "PPL replay: %u entries replayed, %u failed their checksum, %u skipped%s",
		     rc.recovered, rc.mismatches, rc.skipped,
		     clean ? "; no resync needed" : "; the resync goes on from its checkpoint");
		if (clean) {
			a->resync_needed = false;
			a->resync_checkpoint = URAID_MAX_SECTOR;
		}
	}
	for (s = 0; s < a->geom.raid_disks; s++) {
		if (!slot_ok(a, s))
			continue;
		if ((rc_err = write_empty(&rc, s))) {
			uraid_errf(err, errlen, rc_err, "writing an empty PPL on %s: %s",
				   a->slot[s].m->path, strerror(-rc_err));
			goto out;
		}
	}
	/* the superblock says which, both ways (md sets or clears the bit
	   per its area check) */
	if (rc.multi)
		a->sb.feature_map = (a->sb.feature_map & ~URAID_FEATURE_PPL) | URAID_FEATURE_MULTIPLE_PPLS;
	else
		a->sb.feature_map = (a->sb.feature_map & ~URAID_FEATURE_MULTIPLE_PPLS) | URAID_FEATURE_PPL;
	rc_err = raid5_ppl_log_create(a, rc.area_sectors, rc.signature, rc.multi, &a->plog);
	if (rc_err)
		uraid_errf(err, errlen, rc_err, "cannot set up the partial parity log: %s",
			   strerror(-rc_err));
out:
	free(rc.page);
	free(rc.h);
	free(rc.prev);
	return rc_err;
}
