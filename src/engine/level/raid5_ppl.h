/* SPDX-License-Identifier: MIT */
/*
 * md's partial parity log at run time (raid5_ppl.c): the parity-log hooks
 * (parity_log.h) of a RAID 5 array with a PPL. md/ppl.c creates it once
 * the areas are replayed and emptied.
 */
#ifndef URAID_ENGINE_RAID5_PPL_H
#define URAID_ENGINE_RAID5_PPL_H

#include <stdbool.h>
#include <stdint.h>

struct array;
struct parity_log;
struct member;

/*
 * A log for a's members (those in sync now, whose areas md/ppl.c has just
 * emptied), each with an area of area_sectors at ppl.offset
 * from its superblock, headers signed with signature; multi: write log
 * after log through the area (md's MULTIPLE_PPLS), else always at its start.
 * 0 with *out set, or -ENOMEM.
 */
int raid5_ppl_log_create(struct array *a, uint64_t area_sectors, uint32_t signature, bool multi,
			 struct parity_log **out);
/* Member m's area for slot s was emptied in this run (md/ppl.c
   ppl_member_joins): the log may write there from now on. */
void raid5_ppl_set_ready(struct parity_log *pl, unsigned s, struct member *m);

#endif
