/* SPDX-License-Identifier: MIT */
/*
 * RAID 4, 5 and 6: where P, Q and each data chunk of a stripe row live, and
 * the order of the RAID 6 Q coefficients. Facts: reference/md-format.md §3.3,
 * §3.4 and §4; the worked tables of §5 and §7 are the unit tests.
 *
 * Every layout places the data chunks of a row by one of three rules, so a
 * row is described by P, Q and one rule (struct row) instead of a case per
 * layout in each function.
 */
#include <string.h>

#include "geom/geom_internal.h"

enum place_rule {
	SKIP,    /* disk = k, plus `skip` once k reaches P (asymmetric layouts) */
	ROTATE,  /* disk = (P + off + k) mod m (symmetric layouts) */
	FIXED,   /* disk = k + base (parity-first/last, RAID 4) */
};

struct row {
	int32_t p, q;          /* q = -1 for RAID 4/5 */
	enum place_rule rule;
	uint32_t m;            /* members the rotation runs over */
	uint32_t arg;          /* skip, off or base */
};

static bool layout_is_ddf(uint32_t layout)
{
	return layout == URAID_ROTATING_ZERO_RESTART ||
	       layout == URAID_ROTATING_N_RESTART ||
	       layout == URAID_ROTATING_N_CONTINUE;
}

bool geom_r56_layout_ok(int level, uint32_t layout)
{
	if (level == URAID_LEVEL_4)
		return true;    /* md ignores the layout word of RAID 4 */
	if (layout <= URAID_PARITY_LAST)
		return level == URAID_LEVEL_5 || level == URAID_LEVEL_6;
	if (level != URAID_LEVEL_6)
		return false;
	return layout_is_ddf(layout) ||
	       (layout >= URAID_LEFT_ASYMMETRIC_6 && layout <= URAID_PARITY_FIRST_6);
}

/* RAID 5 rules over m members (RAID 5 itself, and the *_6 layouts). */
static void raid5_row(uint32_t layout, uint32_t m, uint64_t stripe, struct row *rw)
{
	uint32_t r = (uint32_t)(stripe % m);

	rw->m = m;
	switch (layout) {
	case URAID_LEFT_ASYMMETRIC:
		rw->p = (int32_t)(m - 1 - r);
		rw->rule = SKIP;
		rw->arg = 1;
		break;
	case URAID_RIGHT_ASYMMETRIC:
		rw->p = (int32_t)r;
		rw->rule = SKIP;
		rw->arg = 1;
		break;
	case URAID_LEFT_SYMMETRIC:
		rw->p = (int32_t)(m - 1 - r);
		rw->rule = ROTATE;
		rw->arg = 1;
		break;
	case URAID_RIGHT_SYMMETRIC:
		rw->p = (int32_t)r;
		rw->rule = ROTATE;
		rw->arg = 1;
		break;
	case URAID_PARITY_FIRST:
		rw->p = 0;
		rw->rule = FIXED;
		rw->arg = 1;
		break;
	default:        /* parity-last */
		rw->p = (int32_t)(m - 1);
		rw->rule = FIXED;
		rw->arg = 0;
		break;
	}
}

/* Asymmetric RAID 6 rows (layouts 0, 1, 8, 9): Q follows P, or wraps to 0. */
static void raid6_asym(uint32_t n, uint32_t p, struct row *rw)
{
	rw->p = (int32_t)p;
	rw->m = n;
	if (p == n - 1) {
		rw->q = 0;
		rw->rule = FIXED;
		rw->arg = 1;
	} else {
		rw->q = (int32_t)p + 1;
		rw->rule = SKIP;
		rw->arg = 2;
	}
}

static void get_row(const struct uraid_geom *g, uint64_t stripe, struct row *rw)
{
	uint32_t n = g->raid_disks, r = (uint32_t)(stripe % n);

	rw->q = -1;
	if (g->level == URAID_LEVEL_4) {
		rw->p = (int32_t)(n - 1);
		rw->rule = FIXED;
		rw->arg = 0;
		rw->m = n;
		return;
	}
	if (g->level == URAID_LEVEL_5) {
		raid5_row(g->layout, n, stripe, rw);
		return;
	}
	switch (g->layout) {
	case URAID_LEFT_ASYMMETRIC:
		raid6_asym(n, n - 1 - r, rw);
		break;
	case URAID_RIGHT_ASYMMETRIC:
	case URAID_ROTATING_ZERO_RESTART:   /* placement of 1, DDF Q order */
		raid6_asym(n, r, rw);
		break;
	case URAID_ROTATING_N_RESTART:      /* 0, one row later: D D D P Q first */
		raid6_asym(n, n - 1 - (uint32_t)((stripe + 1) % n), rw);
		break;
	case URAID_LEFT_SYMMETRIC:
	case URAID_RIGHT_SYMMETRIC:
		rw->p = (int32_t)(g->layout == URAID_LEFT_SYMMETRIC ? n - 1 - r : r);
		rw->q = (int32_t)(((uint32_t)rw->p + 1) % n);
		rw->rule = ROTATE;
		rw->arg = 2;
		rw->m = n;
		break;
	case URAID_PARITY_FIRST:
		rw->p = 0;
		rw->q = 1;
		rw->rule = FIXED;
		rw->arg = 2;
		rw->m = n;
		break;
	case URAID_PARITY_LAST:
		rw->p = (int32_t)(n - 2);
		rw->q = (int32_t)(n - 1);
		rw->rule = FIXED;
		rw->arg = 0;
		rw->m = n;
		break;
	case URAID_ROTATING_N_CONTINUE:     /* Q just before P, data after P */
		rw->p = (int32_t)(n - 1 - r);
		rw->q = (int32_t)(((uint32_t)rw->p + n - 1) % n);
		rw->rule = ROTATE;
		rw->arg = 1;
		rw->m = n;
		break;
	default:
		/* 16..20: the RAID 5 layout over the first n-1 members, Q last. */
		raid5_row(g->layout - URAID_LEFT_ASYMMETRIC_6, n - 1, stripe, rw);
		rw->q = (int32_t)(n - 1);
		break;
	}
}

static uint32_t row_disk(const struct row *rw, uint32_t k)
{
	switch (rw->rule) {
	case SKIP:
		return k + ((int32_t)k >= rw->p ? rw->arg : 0);
	case ROTATE:
		return ((uint32_t)rw->p + rw->arg + k) % rw->m;
	default:
		return k + rw->arg;
	}
}

/* Data index of a member in the row, or -1 for P/Q. */
static int64_t row_index(const struct row *rw, uint32_t slot)
{
	if ((int32_t)slot == rw->p || (int32_t)slot == rw->q)
		return -1;
	switch (rw->rule) {
	case SKIP:
		return (int32_t)slot > rw->p ? slot - rw->arg : slot;
	case ROTATE:
		return ((uint64_t)slot + 2 * rw->m - (uint32_t)rw->p - rw->arg) % rw->m;
	default:
		return (int64_t)slot - rw->arg;
	}
}

static unsigned chunk_shift(const struct uraid_geom *g)
{
	return (unsigned)__builtin_ctz(g->chunk_sectors);
}

int geom_r456_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		   char *err, size_t errlen)
{
	uint32_t n = p->raid_disks, parity = p->level == URAID_LEVEL_6 ? 2 : 1;
	uint32_t min = p->level == URAID_LEVEL_6 ? 4 : 2;
	uint64_t dev;

	if (n < min)
		return geom_fail(err, errlen, "RAID %d needs at least %u members, got %u",
				 p->level, min, n);
	if (!geom_r56_layout_ok(p->level, p->layout))
		return geom_fail(err, errlen, "layout %u is not a RAID %d layout",
				 p->layout, p->level);
	if (p->level == URAID_LEVEL_6 && layout_is_ddf(p->layout) && n > 255)
		return geom_fail(err, errlen,
				 "DDF layouts give each of the %u members its own Q coefficient; GF(2^8) has only 255",
				 n);
	/* md: a power of two and at least a page (4 KiB). */
	if (!geom_is_pow2(p->chunk_sectors) || p->chunk_sectors < 8)
		return geom_fail(err, errlen,
				 "RAID %d chunk must be a power of two of at least 4 KiB, got %u sectors",
				 p->level, p->chunk_sectors);
	/* raid5_run rounds the per-member size down to the chunk. */
	dev = p->dev_sectors & ~(uint64_t)(p->chunk_sectors - 1);
	if (!dev)
		return geom_fail(err, errlen,
				 "RAID %d member size %llu sectors is smaller than one chunk (%u sectors)",
				 p->level, (unsigned long long)p->dev_sectors, p->chunk_sectors);
	g->data_disks = n - parity;
	g->dev_sectors = dev;
	g->array_sectors = dev * g->data_disks;
	for (uint32_t i = 0; i < n; i++)
		g->member_sectors[i] = dev;
	return 0;
}

int geom_r456_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		  unsigned max_out)
{
	unsigned sh = chunk_shift(g);
	uint64_t chunk = a >> sh, stripe = chunk / g->data_disks;
	struct row rw;

	get_row(g, stripe, &rw);
	out->slot = row_disk(&rw, (uint32_t)(chunk % g->data_disks));
	out->sector = (stripe << sh) | (a & (g->chunk_sectors - 1));
	return 1;
}

int geom_r456_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		      struct uraid_rloc *out)
{
	unsigned sh = chunk_shift(g);
	uint64_t stripe = sector >> sh;
	struct row rw;
	int64_t k;

	if (sector >= g->dev_sectors)
		return 0;
	get_row(g, stripe, &rw);
	out->stripe = stripe;
	if ((int32_t)slot == rw.p) {
		out->kind = URAID_CHUNK_P;
		return 0;
	}
	if ((int32_t)slot == rw.q) {
		out->kind = URAID_CHUNK_Q;
		return 0;
	}
	k = row_index(&rw, slot);
	if (k < 0 || k >= g->data_disks)
		return 0;       /* cannot happen for a geometry from init */
	out->kind = URAID_CHUNK_DATA;
	out->array_sector = ((stripe * g->data_disks + (uint64_t)k) << sh) |
			    (sector & (g->chunk_sectors - 1));
	return 0;
}

int uraid_geom_stripe(const struct uraid_geom *g, uint64_t stripe,
		      struct uraid_stripe *s)
{
	uint32_t n = g->raid_disks;
	struct row rw;

	if (g->level != URAID_LEVEL_4 && g->level != URAID_LEVEL_5 &&
	    g->level != URAID_LEVEL_6)
		return -EINVAL;
	if (stripe >= g->dev_sectors >> chunk_shift(g))
		return -EINVAL;
	get_row(g, stripe, &rw);
	s->stripe = stripe;
	s->p_slot = rw.p;
	s->q_slot = rw.q;
	s->data_disks = g->data_disks;
	for (uint32_t k = 0; k < g->data_disks; k++)
		s->data_slot[k] = row_disk(&rw, k);
	for (uint32_t i = 0; i < n; i++)
		s->syndrome_of_slot[i] = -1;
	s->syndrome_slots = 0;
	if (g->level != URAID_LEVEL_6)
		return 0;

	if (layout_is_ddf(g->layout)) {
		/* DDF: coefficient g^member; P and Q count as zero blocks. */
		s->syndrome_slots = n;
		for (uint32_t i = 0; i < n; i++)
			s->syndrome_of_slot[i] = (int32_t)i;
	} else {
		/*
		 * md-native: walk the members from just after Q (from 0 when Q
		 * is the last member), numbering the data members met. This is
		 * physical order, not data-index order.
		 */
		uint32_t start = (uint32_t)rw.q == n - 1 ? 0 : (uint32_t)rw.q + 1;
		int32_t next = 0;

		for (uint32_t i = 0; i < n; i++) {
			uint32_t d = (start + i) % n;

			if ((int32_t)d != rw.p && (int32_t)d != rw.q)
				s->syndrome_of_slot[d] = next++;
		}
		s->syndrome_slots = g->data_disks;
	}
	return 0;
}

/* Parity covers as many failures as there are parity chunks in a row. */
static unsigned r456_max_failures(const struct uraid_geom *g)
{
	return g->raid_disks - g->data_disks;
}

const struct geom_layout geom_layout_raid456 = {
	.init = geom_r456_init,
	.map = geom_r456_map,
	.reverse = geom_r456_reverse,
	.max_failures = r456_max_failures,
};
