/* SPDX-License-Identifier: MIT */
/*
 * A member's areas (superblock, bitmap, bad-block log, data) checked against
 * the device and against each other. md does part of this when it loads the
 * bitmap (md-bitmap.c: "bitmap runs into data", "data runs into bitmap") and
 * when it runs the array ("data overlaps metadata"); mdadm and md leave the
 * rest to the tools that wrote the superblock. uraid trusts none of it: every
 * offset and length here came from a disk someone else may have written.
 *
 * Placement rules (reference/md-format.md §1.10, §1.11, §2.1):
 *  - metadata before data (1.1, 1.2; also a 1.0 whose data lies after its
 *    superblock): superblock, then bitmap and log, all below data_offset;
 *  - metadata after data (1.0): the data ends before the bitmap and the log,
 *    which lie below the superblock; a bitmap after the superblock (the
 *    kernel's "DATA METADATA BITMAP") must end by the device end.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "uraid/superblock.h"
#include "format/sb_disk.h"
#include "common/errmsg.h"

#define fail(err, errlen, ...) uraid_errf(err, errlen, -EINVAL, __VA_ARGS__)

/* The kernel reads one page of bad-block log (super_1_load). */
#define BBLOG_MAX_SECTORS 8
/* The kernel reads and writes 4 KiB at the superblock's place. */
#define SB_ROOM_SECTORS 8

struct range {
	uint64_t start, end;     /* [start, end) sectors */
};

static bool overlap(struct range a, struct range b)
{
	return a.start < b.end && b.start < a.end && a.start < a.end && b.start < b.end;
}

/* sb_start + a signed offset read from disk; false when it falls before sector 0. */
static bool place(uint64_t sb_start, int32_t rel, uint64_t *out)
{
	if (rel < 0 && (uint64_t)-(int64_t)rel > sb_start)
		return false;
	*out = sb_start + (uint64_t)(int64_t)rel;
	return true;
}

static int check_data(const struct uraid_sb *sb, const struct uraid_sb_area_params *p,
		      struct range sbr, struct range *data, char *err, size_t errlen)
{
	uint64_t dev = p->dev_sectors;

	if (sb->data_offset > dev)
		return fail(err, errlen,
			    "data_offset %" PRIu64 " lies beyond the device end (%" PRIu64
			    " sectors); the superblock is damaged or not this device's",
			    sb->data_offset, dev);
	if (sb->data_size > dev - sb->data_offset)
		return fail(err, errlen,
			    "data_offset %" PRIu64 " + data_size %" PRIu64
			    " runs past the device end (%" PRIu64 " sectors)",
			    sb->data_offset, sb->data_size, dev);
	if (p->data_used > sb->data_size)
		return fail(err, errlen,
			    "the array uses %" PRIu64 " sectors per member, more than its data_size %"
			    PRIu64, p->data_used, sb->data_size);
	data->start = sb->data_offset;
	data->end = sb->data_offset + p->data_used;
	if (overlap(*data, sbr))
		return fail(err, errlen,
			    "data (data_offset %" PRIu64 ", %" PRIu64 " sectors used) overlaps the "
			    "superblock at sectors %" PRIu64 "..%" PRIu64,
			    sb->data_offset, p->data_used, sbr.start, sbr.end - 1);
	return 0;
}

/*
 * One metadata area besides the superblock (what names it in messages):
 * inside the device, clear of the superblock and the data, and on the side
 * of the superblock md puts it.
 */
static int check_meta_area(const char *what, const char *field, int32_t rel, uint64_t len,
			   const struct uraid_sb_area_params *p, struct range sbr,
			   struct range data, bool meta_first, struct range *out, char *err,
			   size_t errlen)
{
	struct range r;

	if (!place(sbr.start, rel, &r.start))
		return fail(err, errlen, "%s %" PRId32 " puts the %s before the device start "
			    "(superblock at sector %" PRIu64 ")", field, rel, what, sbr.start);
	if (len > p->dev_sectors || r.start > p->dev_sectors - len)
		return fail(err, errlen, "the %s (%s %" PRId32 ", %" PRIu64 " sectors) runs past "
			    "the device end (%" PRIu64 " sectors)", what, field, rel, len,
			    p->dev_sectors);
	r.end = r.start + len;
	if (overlap(r, sbr))
		return fail(err, errlen, "the %s (%s %" PRId32 ": sectors %" PRIu64 "..%" PRIu64
			    ") overlaps the superblock at sectors %" PRIu64 "..%" PRIu64, what,
			    field, rel, r.start, r.end - 1, sbr.start, sbr.end - 1);
	if (meta_first) {
		/* METADATA, BITMAP/LOG, DATA: between the superblock and data_offset */
		if (r.start < sbr.start)
			return fail(err, errlen, "the %s (%s %" PRId32 ") lies before the "
				    "superblock; md keeps it between the superblock and data_offset",
				    what, field, rel);
		if (r.end > data.start)
			return fail(err, errlen, "the %s (%s %" PRId32 ": sectors %" PRIu64
				    "..%" PRIu64 ") runs into the data at data_offset %" PRIu64,
				    what, field, rel, r.start, r.end - 1, data.start);
	} else if (overlap(r, data)) {
		/* DATA, BITMAP/LOG, METADATA (1.0): the data ends first */
		return fail(err, errlen, "the %s (%s %" PRId32 ": sectors %" PRIu64 "..%" PRIu64
			    ") runs into the data (sectors %" PRIu64 "..%" PRIu64 " used)", what,
			    field, rel, r.start, r.end - 1, data.start, data.end - 1);
	}
	*out = r;
	return 0;
}

int uraid_sb_check_areas(const struct uraid_sb *sb, const struct uraid_sb_area_params *p,
			 struct uraid_sb_areas *out, char *err, size_t errlen)
{
	struct range sbr, data, bm = { 0, 0 }, log = { 0, 0 }, ppl = { 0, 0 };
	bool meta_first;
	int rc;

	if (err && errlen)
		err[0] = '\0';
	if (sb->max_dev > URAID_SB_MAX_DEV)
		return fail(err, errlen, "max_dev %u exceeds the limit %u", sb->max_dev,
			    URAID_SB_MAX_DEV);
	sbr.start = sb->super_offset;
	sbr.end = sbr.start + sb1_sectors(sb->max_dev);
	if (sbr.start >= p->dev_sectors || sbr.end > p->dev_sectors)
		return fail(err, errlen, "super_offset %" PRIu64 " lies beyond the device end (%"
			    PRIu64 " sectors)", sb->super_offset, p->dev_sectors);
	if ((rc = check_data(sb, p, sbr, &data, err, errlen)))
		return rc;
	meta_first = data.start >= sbr.start;

	if (sb->bblog_offset && sb->bblog_size) {
		if (sb->bblog_size > BBLOG_MAX_SECTORS)
			return fail(err, errlen, "bblog_size %u sectors exceeds the one-page "
				    "limit %d", sb->bblog_size, BBLOG_MAX_SECTORS);
		rc = check_meta_area("bad-block log", "bblog_offset", sb->bblog_offset,
				     sb->bblog_size, p, sbr, data, meta_first, &log, err, errlen);
		if (rc)
			return rc;
	}
	if (p->bitmap) {
		if (p->bitmap_sectors == 0)
			return fail(err, errlen, "bitmap of 0 sectors");
		rc = check_meta_area("bitmap", "bitmap_offset", p->bitmap_offset,
				     p->bitmap_sectors, p, sbr, data, meta_first, &bm, err, errlen);
		if (rc)
			return rc;
		if (overlap(bm, log))
			return fail(err, errlen, "the bitmap (bitmap_offset %" PRId32 ": sectors %"
				    PRIu64 "..%" PRIu64 ") overlaps the bad-block log (bblog_offset %"
				    PRId32 ": sectors %" PRIu64 "..%" PRIu64 ")", p->bitmap_offset,
				    bm.start, bm.end - 1, sb->bblog_offset, log.start, log.end - 1);
	}

	if (p->ppl) {
		/* md (ppl_validate_rdev) wants the header and one 4 KiB of room */
		if (p->ppl_sectors < 16)
			return fail(err, errlen, "ppl.size %" PRIu64 " sectors is too small for a "
				    "PPL (a 4 KiB header and 4 KiB of partial parity)",
				    p->ppl_sectors);
		rc = check_meta_area("partial parity log", "ppl.offset", p->ppl_offset,
				     p->ppl_sectors, p, sbr, data, meta_first, &ppl, err, errlen);
		if (rc)
			return rc;
		if (overlap(ppl, log))
			return fail(err, errlen, "the partial parity log (ppl.offset %" PRId32
				    ": sectors %" PRIu64 "..%" PRIu64 ") overlaps the bad-block log "
				    "(bblog_offset %" PRId32 ": sectors %" PRIu64 "..%" PRIu64 ")",
				    p->ppl_offset, ppl.start, ppl.end - 1, sb->bblog_offset,
				    log.start, log.end - 1);
	}

	/* the superblock's room: up to 4 KiB, as far as the next area allows */
	uint64_t room_end = sbr.start + SB_ROOM_SECTORS;
	if (room_end > p->dev_sectors)
		room_end = p->dev_sectors;
	const struct range *next[] = { &bm, &log, &data, &ppl };
	for (unsigned i = 0; i < 4; i++)
		if (next[i]->end > next[i]->start && next[i]->start >= sbr.end &&
		    next[i]->start < room_end)
			room_end = next[i]->start;
	if (room_end < sbr.end)
		room_end = sbr.end;

	out->sb_start = sbr.start;
	out->sb_len = room_end - sbr.start;
	out->bitmap_start = bm.start;
	out->bitmap_len = bm.end - bm.start;
	out->bblog_start = log.start;
	out->bblog_len = log.end - log.start;
	out->ppl_start = ppl.start;
	out->ppl_len = ppl.end - ppl.start;
	out->data_start = data.start;
	out->data_len = data.end - data.start;
	return 0;
}
