// SPDX-License-Identifier: MIT
/*
 * The state of a RAID 4/5/6 or RAID 10 reshape (reshape_state.h): built
 * from the superblocks with md's checks (raid5_run, raid10_run,
 * super_1_validate), and the members' data areas while both geometries are
 * in use.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/level/level.h"
#include "engine/md/reshape_state.h"

#define COPIES_STEP_SECTORS 8192u      /* a RAID 10 job unit: 4 MiB of the array */

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

static uint64_t lcm64(uint64_t a, uint64_t b)
{
	return a / gcd64(a, b) * b;
}

uint64_t reshape_align(const struct uraid_geom *old, const struct uraid_geom *new)
{
	uint32_t big = old->chunk_sectors > new->chunk_sectors ? old->chunk_sectors
							       : new->chunk_sectors;
	return (uint64_t)big * new->data_disks;
}

uint64_t reshape_step(const struct uraid_geom *old, const struct uraid_geom *new)
{
	uint64_t ro = (uint64_t)old->data_disks * old->chunk_sectors;
	uint64_t rn = (uint64_t)new->data_disks * new->chunk_sectors;
	/* every checkpoint must be a position assembly (md's too) takes */
	return lcm64(lcm64(ro, rn), reshape_align(old, new));
}

uint64_t reshape_top(const struct uraid_geom *old, const struct uraid_geom *new,
		     uint64_t dev_sectors)
{
	uint64_t big = old->chunk_sectors > new->chunk_sectors ? old->chunk_sectors
							       : new->chunk_sectors;
	uint64_t dd = old->data_disks < new->data_disks ? old->data_disks : new->data_disks;
	return dev_sectors / big * big * dd;
}

/*
 * mdadm's choice of a new data offset between lo and hi, inside [min, max]
 * (Grow.c choose_offset): the middle, then moved by each of its low bits up
 * or down, whichever stays inside and farther from the boundary, until it
 * is aligned to 1 MiB. The middle may lie outside [min, max] by more than
 * those bits can move it (room between min and 2 min with a distance of
 * 2 MiB or more: lo 2048, hi = max = min = 6144 gives 4096), and a distance
 * below min fails the reshape's own check: the answer is held inside.
 */
uint64_t reshape_choose_offset(uint64_t lo, uint64_t hi, uint64_t min, uint64_t max)
{
	uint64_t choice = (lo + hi) / 2;

	for (uint64_t bit = 1; bit < 2048; bit <<= 1) {
		if (!(choice & bit))
			continue;
		uint64_t bigger = choice + bit, smaller = choice - bit;
		if (bigger > max && smaller < min)
			break;
		if (bigger > max)
			choice = smaller;
		else if (smaller < min)
			choice = bigger;
		else if (hi - bigger > smaller - lo)
			choice = bigger;
		else
			choice = smaller;
	}
	if (choice < min)
		choice = min;
	if (choice > max)
		choice = max;
	return choice;
}

/*
 * Crash safety of a backwards reshape (the mirror of the forward rule
 * below): the step [L, H) (H the position) is written as new rows at
 * new offset + L/dn on, and the old data still live is [0, H) in the old
 * geometry, up to the end of the old row holding H - 1 (old offset +
 * ceil(H/old row) * old chunk). So per member the distance new - old
 * data offset must be at least
 *     ceil(H/old row)*old chunk - L/dn
 * for every step left. With dd >= dn (md goes backwards only when the
 * data disks do not grow) that falls as H grows: the current step and the
 * last one, [0, step), bound it.
 */
static int64_t backwards_need(const struct reshape_state *rs, uint64_t H)
{
	const struct uraid_geom *go = &rs->g[RESHAPE_OLD], *gn = &rs->g[RESHAPE_NEW];
	uint64_t rowo = (uint64_t)go->data_disks * go->chunk_sectors;
	uint64_t L = (H - 1) / rs->step * rs->step;
	return (int64_t)((H + rowo - 1) / rowo * go->chunk_sectors) -
	       (int64_t)(L / gn->data_disks);
}

static int check_distance_backwards(const struct reshape_state *rs, char *err, size_t errlen)
{
	uint64_t H = rs->position;

	if (H == 0)
		return 0;       /* nothing left to move: the job only finishes */
	int64_t need = backwards_need(rs, H);
	int64_t last = backwards_need(rs, H < rs->step ? H : rs->step);
	need = last > need ? last : need;
	if (need < 1)
		need = 1;
	for (unsigned s = 0; s < URAID_MAX_MEMBERS; s++) {
		if (!rs->off[RESHAPE_OLD][s] || !rs->off[RESHAPE_NEW][s])
			continue;
		int64_t dist = (int64_t)rs->off[RESHAPE_NEW][s] - (int64_t)rs->off[RESHAPE_OLD][s];
		if (dist < need)
			return uraid_errf(err, errlen, -EINVAL, "slot %u: the new data offset %" PRIu64
					  " is %" PRId64 " sectors above the old one (%" PRIu64 "), the "
					  "backwards reshape from position %" PRIu64 " needs %" PRId64
					  " to go on without overwriting live data; let md finish it",
					  s, rs->off[RESHAPE_NEW][s], dist, rs->off[RESHAPE_OLD][s], H,
					  need);
	}
	return 0;
}

/*
 * Crash safety of a forward reshape (jobs/reshape.c): the job writes the
 * new rows of the step from the position on, [P, E), before the superblocks
 * say they moved, so they must land below the old data still live (the old
 * row holding P on); and every later step likewise. Per member that asks
 * for a distance old - new data offset of at least
 *     E/dn - floor(P/old row)*old chunk       (the first step)
 *     step/dn + E/dn - E/do                  (the next; later ones need less)
 * (dn, do: new and old data disks). md refuses what it cannot continue
 * safely too (raid5_run: "reshape_position too early", an in-place
 * reshape). A new offset at or above the old one is never safe.
 */
static int check_distance(const struct reshape_state *rs, char *err, size_t errlen)
{
	const struct uraid_geom *go = &rs->g[RESHAPE_OLD], *gn = &rs->g[RESHAPE_NEW];
	uint64_t dn = gn->data_disks, dd = go->data_disks;
	uint64_t rowo = dd * go->chunk_sectors, rown = dn * gn->chunk_sectors;
	uint64_t P = rs->position;

	if (P >= rs->end)
		return 0;       /* nothing left to move: the job only finishes */
	uint64_t E = (P / rs->step + 1) * rs->step;
	uint64_t last = (rs->end + rown - 1) / rown * rown;
	if (E > last)
		E = last;
	int64_t need = (int64_t)(E / dn) - (int64_t)(P / rowo * go->chunk_sectors);
	if (E < last) {
		int64_t next = (int64_t)(rs->step / dn + E / dn) - (int64_t)(E / dd);
		need = next > need ? next : need;
	}
	if (need < 1)
		need = 1;
	for (unsigned s = 0; s < URAID_MAX_MEMBERS; s++) {
		if (!rs->off[RESHAPE_OLD][s] || !rs->off[RESHAPE_NEW][s])
			continue;
		int64_t dist = (int64_t)rs->off[RESHAPE_OLD][s] - (int64_t)rs->off[RESHAPE_NEW][s];
		if (dist < need)
			return uraid_errf(err, errlen, -EINVAL, "slot %u: the new data offset %" PRIu64
					  " is %" PRId64 " sectors below the old one (%" PRIu64 "), the "
					  "reshape from position %" PRIu64 " needs %" PRId64 " to go on "
					  "without overwriting live data; let md finish it", s,
					  rs->off[RESHAPE_NEW][s], dist, rs->off[RESHAPE_OLD][s], P, need);
	}
	return 0;
}

/* How the level's reshape moves data (its descriptor); NONE if it has none. */
static enum level_reshape reshape_kind(int level)
{
	const struct level *lv = level_find(level);
	return lv ? lv->reshape : LEVEL_RESHAPE_NONE;
}

/* A RAID 10 geometry md reshapes: near or offset copies, not far ones
 * (mdadm: "Cannot reshape RAID10 in far-mode"). */
static bool copies_far(const struct uraid_geom *g)
{
	return g->far_copies > 1 && !g->far_offset;
}

/* md's least distance between the data offsets of a RAID 10 reshape
 * (raid10_run, mdadm's min_offset_change): the larger chunk, times the
 * copies an offset layout keeps in each stripe. */
uint64_t reshape_copies_distance(const struct uraid_geom *old, const struct uraid_geom *new)
{
	uint64_t a = (uint64_t)old->chunk_sectors * (old->far_offset ? old->far_copies : 1);
	uint64_t b = (uint64_t)new->chunk_sectors * (new->far_offset ? new->far_copies : 1);
	return a > b ? a : b;
}

uint64_t reshape_copies_step(const struct uraid_geom *old, const struct uraid_geom *new)
{
	uint64_t big = old->chunk_sectors > new->chunk_sectors ? old->chunk_sectors
							       : new->chunk_sectors;
	return big >= COPIES_STEP_SECTORS ? big : COPIES_STEP_SECTORS / big * big;
}

/*
 * The old data still live (array sectors at or above pos) lies, on every
 * slot, at or above the start of the old row that holds pos's first copy:
 * a later chunk's first copy is in that row or a later one, and its other
 * copies follow it (offset layouts: the row's shifted copies). UINT64_MAX
 * when nothing old is live (pos past the old array).
 */
static uint64_t copies_live_row(const struct uraid_geom *g, uint64_t pos)
{
	struct uraid_loc l[URAID_MAX_MEMBERS];
	uint64_t lo = UINT64_MAX;

	if (pos >= g->array_sectors)
		return UINT64_MAX;
	int n = uraid_geom_map(g, pos, l, URAID_MAX_MEMBERS);
	for (int k = 0; k < n; k++) {
		uint64_t r = l[k].sector / g->chunk_sectors * g->chunk_sectors;
		lo = r < lo ? r : lo;
	}
	return n > 0 ? lo : 0;
}

uint64_t reshape_copies_safe_end(const struct reshape_state *rs, uint64_t pos, uint64_t limit)
{
	const struct uraid_geom *gn = &rs->g[RESHAPE_NEW];
	uint64_t row = copies_live_row(&rs->g[RESHAPE_OLD], pos);
	uint64_t end = pos;

	while (end < limit) {
		struct uraid_loc l[URAID_MAX_MEMBERS];
		uint64_t n = uraid_geom_chunk_left(gn, end);
		if (n > limit - end)
			n = limit - end;
		int c = n ? uraid_geom_map(gn, end, l, URAID_MAX_MEMBERS) : 0;
		if (c <= 0)
			break;
		bool safe = true;
		for (int k = 0; k < c && row != UINT64_MAX; k++) {
			unsigned s = l[k].slot;
			if (!rs->off[RESHAPE_OLD][s])
				continue;       /* a new slot: nothing old on it */
			safe &= rs->off[RESHAPE_NEW][s] + l[k].sector + n <=
				rs->off[RESHAPE_OLD][s] + row;
		}
		if (!safe)
			break;
		end += n;
	}
	return end;
}

/*
 * The old data still live backwards (array sectors below pos) lies, on
 * every slot, below the end of the old row that holds pos - 1's last copy:
 * an earlier chunk's copies are in that row or an earlier one (offset
 * layouts: the stripe's shifted copies, in its last row at most). 0 when
 * nothing old is live (pos 0).
 */
static uint64_t copies_live_end(const struct uraid_geom *g, uint64_t pos)
{
	struct uraid_loc l[URAID_MAX_MEMBERS];
	uint64_t hi = 0;

	if (!pos)
		return 0;
	if (pos > g->array_sectors)
		pos = g->array_sectors;         /* above it: nothing was ever stored */
	int n = uraid_geom_map(g, pos - 1, l, URAID_MAX_MEMBERS);
	for (int k = 0; k < n; k++) {
		uint64_t r = (l[k].sector / g->chunk_sectors + 1) * g->chunk_sectors;
		hi = r > hi ? r : hi;
	}
	return hi;
}

uint64_t reshape_copies_safe_start(const struct reshape_state *rs, uint64_t pos, uint64_t limit)
{
	const struct uraid_geom *gn = &rs->g[RESHAPE_NEW];
	uint64_t live = copies_live_end(&rs->g[RESHAPE_OLD], pos);
	uint64_t start = pos, C = gn->chunk_sectors;

	while (start > limit) {
		struct uraid_loc l[URAID_MAX_MEMBERS];
		uint64_t lo = (start - 1) / C * C;
		if (lo < limit)
			lo = limit;
		int c = uraid_geom_map(gn, lo, l, URAID_MAX_MEMBERS);
		if (c <= 0)
			break;
		bool safe = true;
		for (int k = 0; k < c && live; k++) {
			unsigned s = l[k].slot;
			if (!rs->off[RESHAPE_OLD][s])
				continue;       /* a new slot: nothing old on it */
			/* the piece's copy starts at its lowest sector: all of it
			   above the live old data on that slot */
			safe &= rs->off[RESHAPE_NEW][s] + l[k].sector >=
				rs->off[RESHAPE_OLD][s] + live;
		}
		if (!safe)
			break;
		start = lo;
	}
	return start;
}

/*
 * RAID 10: md's own rule (raid10_run: the data offsets at least
 * reshape_copies_distance apart, the new one below forwards, above
 * backwards), and the piece at the position must be able to go on.
 */
static int check_distance_copies(const struct reshape_state *rs, char *err, size_t errlen)
{
	uint64_t need = reshape_copies_distance(&rs->g[RESHAPE_OLD], &rs->g[RESHAPE_NEW]);
	bool back = rs->backwards;

	if (back ? rs->position == 0 : rs->position >= rs->end)
		return 0;       /* nothing left to move: the job only finishes */
	for (unsigned s = 0; s < URAID_MAX_MEMBERS; s++) {
		if (!rs->off[RESHAPE_OLD][s] || !rs->off[RESHAPE_NEW][s])
			continue;
		int64_t dist = (int64_t)rs->off[RESHAPE_OLD][s] - (int64_t)rs->off[RESHAPE_NEW][s];
		if (back)
			dist = -dist;
		if (dist < (int64_t)need)
			return uraid_errf(err, errlen, -EINVAL, "slot %u: the new data offset %" PRIu64
					  " is %" PRId64 " sectors %s the old one (%" PRIu64 "), a "
					  "RAID 10 reshape %sneeds %" PRIu64 " (md's raid10 refuses it "
					  "too)", s, rs->off[RESHAPE_NEW][s], dist < 0 ? -dist : dist,
					  (dist < 0) != back ? "above" : "below", rs->off[RESHAPE_OLD][s],
					  back ? "backwards (the new offset above) " : "", need);
	}
	bool stuck = back ? reshape_copies_safe_start(rs, rs->position, 0) == rs->position
			  : reshape_copies_safe_end(rs, rs->position, rs->end) == rs->position;
	if (stuck)
		return uraid_errf(err, errlen, -EINVAL, "the RAID 10 reshape cannot go on from "
				  "array sector %" PRIu64 " without overwriting live data (the data "
				  "offsets are too close); let md finish it", rs->position);
	return 0;
}

/* The checks of a RAID 10 reshape's superblock that md makes (raid10_run,
 * setup_geo). */
static int check_copies_sb(const struct uraid_sb *sb, char *err, size_t errlen)
{
	if (sb->reshape_position % 8)
		return uraid_errf(err, errlen, -EINVAL, "reshape_position %" PRIu64 " is not a "
				  "multiple of 4 KiB", sb->reshape_position);
	return 0;
}

int reshape_state_from_sb(const struct uraid_sb *sb, const struct uraid_sb *const *slot_sb,
			  const uint64_t *member_sectors, struct reshape_state **out,
			  char *err, size_t errlen)
{
	char why[200];
	int rc;
	int64_t old_disks = (int64_t)sb->raid_disks - sb->delta_disks;

	*out = NULL;
	enum level_reshape kind = reshape_kind(sb->level);
	if (kind == LEVEL_RESHAPE_NONE || reshape_kind((int)sb->new_level) == LEVEL_RESHAPE_NONE)
		return uraid_errf(err, errlen, -EINVAL, "a reshape of level %d to level %d: uraid "
				  "continues RAID 4/5/6 restripes and RAID 10 reshapes only",
				  sb->level, (int)sb->new_level);
	if (sb->level != (int)sb->new_level)
		return uraid_errf(err, errlen, -EINVAL, "a reshape from level %d to %u: md does "
				  "not resume those either (it changes levels by a takeover)",
				  sb->level, sb->new_level);
	/* md's rule (super_1_validate): fewer members always go backwards,
	   more always forwards; feature 0x20 counts (and is written) only
	   when the count stays */
	bool backwards = sb->delta_disks < 0 ||
			 (sb->delta_disks == 0 && (sb->feature_map & URAID_FEATURE_RESHAPE_BACKWARDS));
	if (kind == LEVEL_RESHAPE_COPIES && (rc = check_copies_sb(sb, err, errlen)))
		return rc;
	if (old_disks < (sb->level == 6 ? 4 : 2) || old_disks > URAID_MAX_MEMBERS)
		return uraid_errf(err, errlen, -EINVAL, "reshape from %" PRId64 " members "
				  "(raid_disks %u, delta_disks %d): not a RAID %d md can run",
				  old_disks, sb->raid_disks, sb->delta_disks, sb->level);
	struct reshape_state *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	struct uraid_geom_params po = { .level = sb->level, .layout = sb->layout,
					.raid_disks = (uint32_t)old_disks,
					.chunk_sectors = sb->chunksize, .dev_sectors = sb->size };
	struct uraid_geom_params pn = { .level = (int)sb->new_level, .layout = sb->new_layout,
					.raid_disks = sb->raid_disks,
					.chunk_sectors = sb->new_chunk, .dev_sectors = sb->size };
	if (uraid_geom_init(&rs->g[RESHAPE_OLD], &po, why, sizeof(why))) {
		free(rs);
		return uraid_errf(err, errlen, -EINVAL, "the geometry before the reshape: %s", why);
	}
	if (uraid_geom_init(&rs->g[RESHAPE_NEW], &pn, why, sizeof(why))) {
		free(rs);
		return uraid_errf(err, errlen, -EINVAL, "the geometry after the reshape: %s", why);
	}
	rs->copies = kind == LEVEL_RESHAPE_COPIES;
	if (rs->copies && (copies_far(&rs->g[RESHAPE_OLD]) || copies_far(&rs->g[RESHAPE_NEW]) ||
			   uraid_geom_copies(&rs->g[RESHAPE_OLD]) !=
			   uraid_geom_copies(&rs->g[RESHAPE_NEW]))) {
		bool far = copies_far(&rs->g[RESHAPE_OLD]) || copies_far(&rs->g[RESHAPE_NEW]);
		free(rs);
		return uraid_errf(err, errlen, -EINVAL, "a RAID 10 reshape %s: md does not run "
				  "it (raid10_run)", far ? "of a far layout" :
				  "that changes the number of copies");
	}
	rs->step = rs->copies ? reshape_copies_step(&rs->g[RESHAPE_OLD], &rs->g[RESHAPE_NEW])
			      : reshape_step(&rs->g[RESHAPE_OLD], &rs->g[RESHAPE_NEW]);
	rs->end = rs->g[RESHAPE_NEW].array_sectors;
	rs->position = sb->reshape_position;
	rs->delta_disks = sb->delta_disks;
	rs->backwards = backwards;
	/* RAID 10 (md's raid10_size with the smaller count, the new chunk and
	   the used size of the new geometry): the new array, as backwards the
	   new count is never the larger */
	rs->top = rs->copies ? rs->end
		 : reshape_top(&rs->g[RESHAPE_OLD], &rs->g[RESHAPE_NEW], sb->size);
	if (backwards && rs->g[RESHAPE_NEW].data_disks > rs->g[RESHAPE_OLD].data_disks) {
		unsigned dd = rs->g[RESHAPE_OLD].data_disks, dn = rs->g[RESHAPE_NEW].data_disks;
		free(rs);
		return uraid_errf(err, errlen, -EINVAL, "a backwards reshape from %u to %u data "
				  "members: md goes backwards only when they do not grow", dd, dn);
	}
	/* md's rule (raid5_run): on a boundary of new rows of the larger chunk.
	   uraid's own positions are whole steps; md's may cut an old row, whose
	   part below the position is then dead (requests go by the position,
	   the first step starts there) */
	uint64_t align = rs->copies ? 8 : reshape_align(&rs->g[RESHAPE_OLD], &rs->g[RESHAPE_NEW]);
	uint64_t limit = backwards ? rs->top : rs->end;
	if (rs->position % align || rs->position > limit) {
		uint64_t pos = rs->position, end = limit;
		free(rs);
		return uraid_errf(err, errlen, -EINVAL, "reshape_position %" PRIu64 " is not on a "
				  "boundary of the new stripes (%" PRIu64 " sectors) inside the array "
				  "(%" PRIu64 ")", pos, align, end);
	}
	unsigned nslots = sb->raid_disks > old_disks ? sb->raid_disks : (unsigned)old_disks;
	for (unsigned s = 0; s < nslots; s++) {
		const struct uraid_sb *own = slot_sb[s];
		if (!own)
			continue;       /* missing: nothing to place */
		bool in_old = s < old_disks, in_new = s < sb->raid_disks;
		int64_t newoff = (int64_t)own->data_offset;
		if (own->feature_map & URAID_FEATURE_NEW_OFFSET)
			newoff += own->new_offset;
		uint64_t used = sb->size;
		if (in_new && (newoff <= 0 || (uint64_t)newoff + used > member_sectors[s])) {
			free(rs);
			return uraid_errf(err, errlen, -EINVAL, "slot %u: the new data area at "
					  "%" PRId64 " (data_offset %" PRIu64 ", new_offset %d) does "
					  "not fit its %" PRIu64 " sectors", s, newoff,
					  own->data_offset, own->new_offset, member_sectors[s]);
		}
		rs->off[RESHAPE_OLD][s] = in_old ? own->data_offset : 0;
		rs->off[RESHAPE_NEW][s] = in_new ? (uint64_t)newoff : 0;
		uint64_t lo = UINT64_MAX;
		for (int w = 0; w < 2; w++)
			if (rs->off[w][s] && rs->off[w][s] < lo)
				lo = rs->off[w][s];
		for (int w = 0; w < 2; w++)
			rs->shift[w][s] = rs->off[w][s] ? rs->off[w][s] - lo : 0;
	}
	rc = rs->copies ? check_distance_copies(rs, err, errlen)
	   : backwards ? check_distance_backwards(rs, err, errlen) : check_distance(rs, err, errlen);
	if (rc) {
		free(rs);
		return rc;
	}
	*out = rs;
	return 0;
}

void reshape_set_member_areas(struct array *a, const struct reshape_state *rs)
{
	for (unsigned s = 0; s < a->geom.raid_disks; s++) {
		struct member *m = a->slot[s].m;
		if (!m)
			continue;
		uint64_t lo = UINT64_MAX, hi = 0;
		for (int w = 0; w < 2; w++) {
			if (!rs->off[w][s])
				continue;
			lo = rs->off[w][s] < lo ? rs->off[w][s] : lo;
			uint64_t end = rs->off[w][s] + a->sb.size;
			hi = end > hi ? end : hi;
		}
		if (!hi)
			continue;
		struct member_area areas[MEMBER_AREAS];
		unsigned n = m->nareas < MEMBER_AREAS ? m->nareas : MEMBER_AREAS;
		memcpy(areas, m->area, n * sizeof(areas[0]));
		m->data_offset = lo;
		member_set_areas(m, lo, hi - lo, areas, n);
	}
}

int reshape_check_member(const struct reshape_state *rs, unsigned s, const struct member *m,
			 uint64_t used, char *err, size_t errlen)
{
	uint64_t lo = rs->off[RESHAPE_NEW][s];

	if (!lo)
		return 0;
	for (unsigned k = 0; k < m->nareas; k++)
		if (m->area[k].start < lo + used && lo < m->area[k].end)
			return uraid_errf(err, errlen, -EINVAL, "%s: the new data area at sector "
					  "%" PRIu64 " overlaps its metadata (sectors %" PRIu64
					  "..%" PRIu64 ")", m->path, lo, m->area[k].start,
					  m->area[k].end);
	return 0;
}
