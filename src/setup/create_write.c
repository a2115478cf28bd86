// SPDX-License-Identifier: MIT
/*
 * Writing a planned array (create_plan.c decides everything). Order per
 * member: bad-block log, bitmap, then superblock last, each synced, so that
 * a member is only claimed by a superblock once what it points to exists.
 */
#include <errno.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/level.h>

#include <uraid/ppl.h>

#include "common/errmsg.h"
#include "format/r5l.h"
#include "setup/create_plan.h"
#include "common/full_io.h"

static int write_or_report(const struct create_member *m, const void *buf, size_t len,
			   uint64_t sector, const char *what, char *err, size_t errlen)
{
	int rc = uraid_pwrite_full(m->fd, buf, len, (m->base + sector) * 512);
	if (rc)
		uraid_errf(err, errlen, rc, "writing the %s of %s at sector %llu failed: %s", what,
			   m->path, (unsigned long long)sector, strerror(-rc));
	return rc;
}

static int write_bblog(const struct create_member *m, char *err, size_t errlen)
{
	alignas(4096) uint8_t log[URAID_BBLOG_SECTORS * 512];

	if (!m->sb.bblog_size || !m->sb.bblog_offset)
		return 0;
	uraid_bblog_init(log, sizeof(log));
	return write_or_report(m, log, sizeof(log),
			       (uint64_t)((int64_t)m->sb.super_offset + m->sb.bblog_offset),
			       "bad-block log", err, errlen);
}

static int write_bitmap(const struct create_plan *plan, const struct create_member *m,
			char *err, size_t errlen)
{
	size_t len = plan->bitmap_sectors * 512;
	uint8_t *area;

	if (!plan->res.bitmap)
		return 0;
	if (posix_memalign((void **)&area, 4096, len))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory for the bitmap of %s", m->path);
	/* mdadm marks the whole area dirty when a resync is due; clean arrays start clear */
	memset(area, plan->bitmap_bits_set ? 0xff : 0, len);
	uraid_bitmap_encode(&plan->bitmap, area);
	int rc = write_or_report(m, area, len,
				 (uint64_t)((int64_t)m->sb.super_offset + m->sb.bitmap_offset),
				 "bitmap", err, errlen);
	free(area);
	return rc;
}

/* mdadm's write_init_ppl1: the PPL area zeroed, then an empty header. */
static int write_ppl(const struct create_plan *plan, const struct create_member *m,
		     char *err, size_t errlen)
{
	size_t len = (size_t)uraid_sb_ppl_size(&m->sb) * 512;
	struct uraid_ppl_header h = { .signature = uraid_ppl_signature(plan->res.uuid) };
	uint8_t *area;

	if (!plan->res.ppl)
		return 0;
	if (posix_memalign((void **)&area, 4096, len))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory for the PPL of %s", m->path);
	memset(area, 0, len);
	uraid_ppl_encode(&h, area);
	int rc = write_or_report(m, area, len,
				 (uint64_t)((int64_t)m->sb.super_offset + uraid_sb_ppl_offset(&m->sb)),
				 "partial parity log", err, errlen);
	free(area);
	return rc;
}

/*
 * With --force, old md superblocks must go first, wherever they are (as
 * mdadm's Kill does): one left at another location could make mdadm's probe,
 * which prefers the latest ctime, find the old array instead of the new one.
 */
static int wipe_stale(const struct create_member *m, char *err, size_t errlen)
{
	alignas(4096) uint8_t zero[URAID_SB_BYTES] = { 0 };

	for (unsigned minor = 0; minor < 3; minor++) {
		if (!(m->stale_minor_mask & (1 << minor)))
			continue;
		uint64_t loc = uraid_sb_location(minor, m->dev_sectors);
		int rc = write_or_report(m, zero, sizeof(zero), loc, "old superblock", err, errlen);
		if (rc)
			return rc;
	}
	if (m->stale_md090) {
		uint64_t loc = ((m->dev_sectors * 512) & ~(uint64_t)0xffff) / 512 - 128;
		return write_or_report(m, zero, sizeof(zero), loc, "old 0.90 superblock", err, errlen);
	}
	return 0;
}

/* mdadm's write_empty_r5l_meta_block: an empty log at the journal's data start. */
static int write_journal_start(const struct create_plan *plan, const struct create_member *m,
			       char *err, size_t errlen)
{
	alignas(4096) uint8_t block[URAID_R5L_BLOCK];
	uint32_t seq;

	if (!m->journal)
		return 0;
	if (getentropy(&seq, sizeof(seq)))
		return uraid_errf(err, errlen, -errno, "cannot get random bytes: %s", strerror(errno));
	uraid_r5l_meta_init(block, seq, 0);
	uraid_r5l_meta_seal(block, uraid_r5l_seed(plan->res.uuid));
	return write_or_report(m, block, sizeof(block), m->sb.data_offset, "journal's first block",
			       err, errlen);
}

static int sync_member(const struct create_member *m, char *err, size_t errlen)
{
	if (fdatasync(m->fd) == 0)
		return 0;
	return uraid_errf(err, errlen, -errno, "flushing %s failed: %s", m->path, strerror(errno));
}

/*
 * The plan passes the check assembly will make (format/sb_areas.c) before a
 * byte is written: a planning bug must not put a bitmap or a log where data
 * or another area lies.
 */
static int check_plan_areas(const struct create_plan *plan, char *err, size_t errlen)
{
	for (unsigned i = 0; i < plan->nmembers; i++) {
		const struct create_member *m = &plan->m[i];
		struct uraid_sb_areas ar;
		char why[300];

		if (m->missing)
			continue;
		struct uraid_sb_area_params p = {
			.dev_sectors = m->dev_sectors, .minor = plan->res.minor,
			.bitmap = plan->res.bitmap, .bitmap_offset = m->sb.bitmap_offset,
			.bitmap_sectors = plan->bitmap_sectors,
			.ppl = plan->res.ppl, .ppl_offset = uraid_sb_ppl_offset(&m->sb),
			.ppl_sectors = uraid_sb_ppl_size(&m->sb),
			.data_used = uraid_level_info(plan->res.level)->whole_members || m->journal
					     ? m->sb.data_size : m->sb.size,
		};
		if (uraid_sb_check_areas(&m->sb, &p, &ar, why, sizeof(why)))
			return uraid_errf(err, errlen, -EINVAL, "BUG: the layout planned for %s is "
					  "unsafe: %s; nothing was written, please report this",
					  m->path, why);
	}
	return 0;
}

static int write_plan(struct create_plan *plan, char *err, size_t errlen)
{
	alignas(4096) uint8_t sbuf[URAID_SB_BYTES];
	int rc;

	if ((rc = check_plan_areas(plan, err, errlen)))
		return rc;

	for (unsigned i = 0; i < plan->nmembers; i++) {
		struct create_member *m = &plan->m[i];
		if (m->missing)
			continue;
		if ((rc = wipe_stale(m, err, errlen)) || (rc = write_bblog(m, err, errlen)) ||
		    (rc = write_bitmap(plan, m, err, errlen)) || (rc = write_ppl(plan, m, err, errlen)) ||
		    (rc = write_journal_start(plan, m, err, errlen)) || (rc = sync_member(m, err, errlen)))
			return rc;
	}
	for (unsigned i = 0; i < plan->nmembers; i++) {
		struct create_member *m = &plan->m[i];
		if (m->missing)
			continue;
		uraid_sb_encode(&m->sb, sbuf);
		if ((rc = write_or_report(m, sbuf, sizeof(sbuf), m->sb.super_offset, "superblock",
					  err, errlen)) ||
		    (rc = sync_member(m, err, errlen)))
			return rc;
	}
	return 0;
}

int uraid_create(const struct uraid_create_opts *o, struct uraid_create_result *r,
		 char *err, size_t errlen)
{
	struct create_plan *plan = calloc(1, sizeof(*plan));

	if (!plan)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	int rc = create_plan_build(o, plan, err, errlen);
	if (rc == 0 && !(o->flags & URAID_CREATE_DRY_RUN))
		rc = write_plan(plan, err, errlen);
	if (rc == 0 && r)
		*r = plan->res;
	create_plan_close(plan);
	free(plan);
	return rc;
}
