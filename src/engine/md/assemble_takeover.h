// SPDX-License-Identifier: MIT
/*
 * Assembly: a member behind a RAID 5 -> 6 (or RAID 0 -> 4) takeover whose restripe has not
 * moved anything yet (md/assemble_takeover.c).
 */
#ifndef URAID_MD_ASSEMBLE_TAKEOVER_H
#define URAID_MD_ASSEMBLE_TAKEOVER_H

#include <stdbool.h>
#include <stddef.h>

#include <uraid/superblock.h>

/*
 * fresh: the freshest member's superblock; sb: an older member's, which
 * differs from it in level, layout or chunk. True when sb is exactly the
 * takeover's source (RAID 5, or RAID 0) of fresh's RAID 6 (RAID 4) restripe, one event behind
 * (a spare: any number), and the restripe has not moved a sector: *sb is then rewritten in memory
 * to what the update would have written to that member (nothing on disk).
 * False with the reason in why otherwise (sb unchanged).
 */
bool assemble_takeover_member(const struct uraid_sb *fresh, struct uraid_sb *sb, char *why,
			      size_t whylen);

#endif
