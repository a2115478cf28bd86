// SPDX-License-Identifier: MIT
/*
 * The state of a RAID 4/5/6 reshape (reshape_state.h): built from the
 * superblocks with md's checks (raid5_run, super_1_validate), and the
 * members' data areas while both geometries are in use.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/md/reshape_state.h"

static uint64_t gcd64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

uint64_t reshape_step(const struct uraid_geom *a, const struct uraid_geom *b)
{
	uint64_t ra = (uint64_t)a->data_disks * a->chunk_sectors;
	uint64_t rb = (uint64_t)b->data_disks * b->chunk_sectors;
	return ra / gcd64(ra, rb) * rb;
}

static bool restripe_level(int level)
{
	return level == 4 || level == 5 || level == 6;
}

int reshape_state_from_sb(const struct uraid_sb *sb, const struct uraid_sb *const *slot_sb,
			  const uint64_t *member_sectors, struct reshape_state **out,
			  char *err, size_t errlen)
{
	char why[200];
	int64_t old_disks = (int64_t)sb->raid_disks - sb->delta_disks;

	*out = NULL;
	if (!restripe_level(sb->level) || !restripe_level((int)sb->new_level))
		return uraid_errf(err, errlen, -EINVAL, "a reshape of level %d to level %d: uraid "
				  "continues RAID 4/5/6 restripes only", sb->level, (int)sb->new_level);
	if (sb->level != (int)sb->new_level)
		return uraid_errf(err, errlen, -EINVAL, "a reshape from level %d to %u: md does "
				  "not resume those either (it changes levels by a takeover)",
				  sb->level, sb->new_level);
	if (sb->feature_map & URAID_FEATURE_RESHAPE_BACKWARDS)
		return uraid_errf(err, errlen, -EINVAL, "a backwards reshape (feature 0x20): uraid "
				  "continues forward ones only; let md finish it");
	if (old_disks < (sb->level == 6 ? 4 : 2) || old_disks > URAID_MAX_MEMBERS)
		return uraid_errf(err, errlen, -EINVAL, "reshape from %" PRId64 " members "
				  "(raid_disks %u, delta_disks %d): not a RAID %d md can run",
				  old_disks, sb->raid_disks, sb->delta_disks, sb->level);
	if (sb->delta_disks < 0)
		return uraid_errf(err, errlen, -EINVAL, "a reshape to fewer members: uraid does "
				  "not continue those yet; let md finish it");
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
	rs->step = reshape_step(&rs->g[RESHAPE_OLD], &rs->g[RESHAPE_NEW]);
	rs->end = rs->g[RESHAPE_NEW].array_sectors;
	rs->position = sb->reshape_position;
	rs->delta_disks = sb->delta_disks;
	/* md's rule (raid5_run): on a boundary of new rows of the larger chunk.
	   uraid's own positions are whole steps; md's may cut an old row, whose
	   part below the position is then dead (requests go by the position,
	   the first step starts there) */
	uint32_t big = sb->chunksize > sb->new_chunk ? sb->chunksize : sb->new_chunk;
	uint64_t align = (uint64_t)big * rs->g[RESHAPE_NEW].data_disks;
	if (rs->position % align || rs->position > rs->end) {
		uint64_t pos = rs->position, end = rs->end;
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
