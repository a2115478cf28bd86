// SPDX-License-Identifier: MIT
/*
 * The member's wall: once a member belongs to an array, its I/O may touch
 * only its own superblock, bitmap, bad-block log and data area. Assembly
 * checks every offset read from disk before the areas are set (engine
 * assemble.c, format sb_areas.c), so an I/O that reaches the wall is a bug
 * in uraid, not an attacker: it is refused (-EIO) and reported loudly, once
 * per member. The data path pays two compares (member_in_data).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "io/member_internal.h"

void member_set_areas(struct member *m, uint64_t data_offset, uint64_t data_len,
		      const struct member_area *areas, unsigned nareas)
{
	m->data_offset = data_offset;
	m->data_len = data_len;
	m->nareas = 0;
	for (unsigned i = 0; i < nareas && m->nareas < MEMBER_AREAS; i++)
		if (areas[i].end > areas[i].start)
			m->area[m->nareas++] = areas[i];
}

int member_wall(struct member *m, const char *what, bool data, uint64_t sector, uint64_t nsect)
{
	if (!atomic_exchange(&m->wall_reported, true)) {
		char areas[160];
		int n = 0;
		for (unsigned i = 0; i < m->nareas && n >= 0 && (size_t)n < sizeof(areas); i++)
			n += snprintf(areas + n, sizeof(areas) - (size_t)n, " %" PRIu64 "..%" PRIu64,
				      m->area[i].start, m->area[i].end - 1);
		if (m->nareas == 0)
			snprintf(areas, sizeof(areas), " none");
		ulog(m->log, URAID_LOG_ERR, "BUG: %s outside member areas: member %s sector %" PRIu64
			"%s len %" PRIu64 " sectors (data area %" PRIu64 "+%" PRIu64
			", metadata%s); refused, please report this", what, m->path, sector,
			data ? " (from data_offset)" : "", nsect, m->data_offset, m->data_len,
			areas);
	}
	return -EIO;
}

/* Is [sector, sector + nsect) (absolute) inside one metadata area? */
bool member_in_meta(const struct member *m, uint64_t sector, uint64_t nsect)
{
	for (unsigned i = 0; i < m->nareas; i++)
		if (sector >= m->area[i].start && sector < m->area[i].end &&
		    nsect <= m->area[i].end - sector)
			return true;
	return false;
}
