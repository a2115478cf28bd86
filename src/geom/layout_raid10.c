/* SPDX-License-Identifier: MIT */
/*
 * RAID 10: near, far and offset copies, and far sets. Facts:
 * reference/md-format.md §3.5 (layout word, mapping, calc_sectors sizes).
 *
 * The near region is laid out like RAID 0 with every chunk repeated on nc
 * consecutive members. Far copy f of a near copy sits f*stride further
 * down, on the member nc*f places further along inside the member's far set
 * (the whole array unless far sets are used; with far sets the last set
 * also takes the remainder of raid_disks / set size).
 */
#include <string.h>

#include "geom/geom_internal.h"

#define R10_SET_MODE(layout)   (((layout) >> 17) & 3u)

int geom_r10_check(uint32_t layout, uint32_t disks, char *err, size_t errlen)
{
	uint32_t nc = URAID_RAID10_NEAR(layout), fc = URAID_RAID10_FAR(layout);
	bool offset = layout & URAID_RAID10_OFFSET;
	bool sets = layout & URAID_RAID10_FARSETS;

	if (layout >> 19 || R10_SET_MODE(layout) == 3)
		return geom_fail(err, errlen,
				 "RAID 10 layout 0x%x has bits md does not define", layout);
	if (layout & URAID_RAID10_FARSETS_BROKEN)
		return geom_fail(err, errlen,
				 "RAID 10 layout 0x%x uses the early, unsafe far-sets variant (0x20000); not supported",
				 layout);
	if (nc * fc < 2 || nc * fc > disks)
		return geom_fail(err, errlen,
				 "RAID 10 layout 0x%x has %u copies; it needs 2 to raid_disks (%u)",
				 layout, nc * fc, disks);
	/*
	 * Two corners md accepts but maps two chunks onto one place (its
	 * __raid10_find_phys is not one-to-one there); no tool creates them
	 * (mdadm sets only one of near/far/offset, dm-raid uses far sets with
	 * one near copy), so uraid refuses them instead of losing data.
	 */
	if (offset && nc > 1 && fc > 1 && disks % nc)
		return geom_fail(err, errlen,
				 "RAID 10 layout 0x%x: offset copies with %u near copies need raid_disks (%u) to be a multiple of %u",
				 layout, nc, disks, nc);
	if (sets && nc > 1 && fc > 1 && disks % (nc * fc))
		return geom_fail(err, errlen,
				 "RAID 10 layout 0x%x: far sets with %u near copies need raid_disks (%u) to be a multiple of %u",
				 layout, nc, disks, nc * fc);
	return 0;
}

int geom_r10_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		  char *err, size_t errlen)
{
	uint32_t n = p->raid_disks, nc, fc;
	uint64_t dev_chunks, array_chunks, used_chunks;
	unsigned sh;
	int rc;

	rc = geom_r10_check(p->layout, n, err, errlen);
	if (rc)
		return rc;
	if (!geom_is_pow2(p->chunk_sectors) || p->chunk_sectors < 8)
		return geom_fail(err, errlen,
				 "RAID 10 chunk must be a power of two of at least 4 KiB, got %u sectors",
				 p->chunk_sectors);
	nc = URAID_RAID10_NEAR(p->layout);
	fc = URAID_RAID10_FAR(p->layout);
	sh = (unsigned)__builtin_ctz(p->chunk_sectors);
	g->near_copies = nc;
	g->far_copies = fc;
	g->far_offset = p->layout & URAID_RAID10_OFFSET;
	g->far_set_size = p->layout & URAID_RAID10_FARSETS ? nc * fc : n;

	/*
	 * calc_sectors: chunks the array holds, then the chunks each member
	 * really uses (rounded up), and the far stride from those.
	 */
	dev_chunks = p->dev_sectors >> sh;
	array_chunks = (uint64_t)((unsigned __int128)(dev_chunks / fc) * n / nc);
	if (!array_chunks)
		return geom_fail(err, errlen,
				 "RAID 10 member size %llu sectors is too small for %u far copies of %u-sector chunks",
				 (unsigned long long)p->dev_sectors, fc, p->chunk_sectors);
	used_chunks = (uint64_t)(((unsigned __int128)array_chunks * nc * fc + n - 1) / n);
	g->dev_sectors = used_chunks << sh;
	g->far_stride = g->far_offset ? p->chunk_sectors : (used_chunks / fc) << sh;
	/* raid10_size over the used size; equals array_chunks (§3.6). */
	g->array_sectors = (uint64_t)((unsigned __int128)(used_chunks / fc) * n / nc) << sh;
	for (uint32_t i = 0; i < n; i++)
		g->member_sectors[i] = g->dev_sectors;
	return 0;
}

/* The far set holding member d: [*start, *start + *size). */
static void far_set(const struct uraid_geom *g, uint32_t d, uint32_t *start,
		    uint32_t *size)
{
	uint32_t n = g->raid_disks, fss = g->far_set_size;
	uint32_t last = (n / fss - 1) * fss;

	if (d >= last) {
		*start = last;
		*size = n - last;
	} else {
		*start = d / fss * fss;
		*size = fss;
	}
}

int geom_r10_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		 unsigned max_out)
{
	uint32_t n = g->raid_disks, nc = g->near_copies, fc = g->far_copies;
	unsigned sh = (unsigned)__builtin_ctz(g->chunk_sectors);
	uint64_t v, stripe, base;
	uint32_t dev;
	unsigned idx = 0;

	if (max_out < nc * fc)
		return -ENOSPC;
	v = (a >> sh) * nc;     /* position of the first near copy, row-major */
	stripe = v / n;
	dev = (uint32_t)(v % n);
	if (g->far_offset)
		stripe *= fc;   /* each row is followed by its fc-1 shifted copies */
	base = (stripe << sh) | (a & (g->chunk_sectors - 1));

	for (uint32_t i = 0; i < nc; i++) {
		uint32_t d = dev, start, size;
		uint64_t s = base;

		out[idx].slot = d;
		out[idx++].sector = s;
		far_set(g, d, &start, &size);
		for (uint32_t f = 1; f < fc; f++) {
			d = start + (d - start + nc) % size;
			s += g->far_stride;
			out[idx].slot = d;
			out[idx++].sector = s;
		}
		/* The next near copy goes on the next member, wrapping a row. */
		if (++dev == n) {
			dev = 0;
			base += g->chunk_sectors;
		}
	}
	return (int)idx;
}

int geom_r10_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		     struct uraid_rloc *out)
{
	uint32_t n = g->raid_disks, nc = g->near_copies, fc = g->far_copies;
	unsigned sh = (unsigned)__builtin_ctz(g->chunk_sectors);
	uint64_t row, f, v, a;
	uint32_t start, size, d0;

	if (sector >= g->dev_sectors)
		return 0;
	if (g->far_offset) {
		row = (sector >> sh) / fc;
		f = (sector >> sh) % fc;
	} else {
		f = sector / g->far_stride;
		if (f >= fc)
			return 0;
		row = (sector - f * g->far_stride) >> sh;
	}
	/* Undo f far steps of nc members inside the far set. */
	far_set(g, slot, &start, &size);
	d0 = start + (uint32_t)((slot - start + size - (f * nc) % size) % size);
	v = row * n + d0;
	a = ((v / nc) << sh) | (sector & (g->chunk_sectors - 1));
	if (a >= g->array_sectors)
		return 0;
	out->kind = URAID_CHUNK_DATA;
	out->array_sector = a;
	out->copy = (uint32_t)(v % nc) * fc + (uint32_t)f;
	return 0;
}

/* Every chunk has near x far copies on distinct members. */
static unsigned r10_copies(const struct uraid_geom *g)
{
	return g->near_copies * g->far_copies;
}

/* Guaranteed: any copies-1 members may go (more, in the right places: the
 * engine's RAID 10 descriptor checks which). */
static unsigned r10_max_failures(const struct uraid_geom *g)
{
	return r10_copies(g) - 1;
}

const struct geom_layout geom_layout_raid10 = {
	.init = geom_r10_init,
	.map = geom_r10_map,
	.reverse = geom_r10_reverse,
	.max_failures = r10_max_failures,
	.copies = r10_copies,
};
