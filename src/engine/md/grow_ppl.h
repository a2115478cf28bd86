/* SPDX-License-Identifier: MIT */
/* uraid grow --consistency-policy=ppl|resync: md's partial parity log
 * added to or removed from a running RAID 5 (grow_ppl.c). */
#ifndef URAID_ENGINE_MD_GROW_PPL_H
#define URAID_ENGINE_MD_GROW_PPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct array;

/* Where mdadm would put the area on the members: each member's ppl.offset
 * (offset[i] for member i, from its own superblock; 1.0 members of
 * different sizes may differ) and one ppl.size for all (the least room), in
 * sectors. 0, or -ENOSPC / -ENODEV with err saying
 * what is missing. meta_lock held. */
int grow_ppl_place(const struct array *a, int32_t *offset, uint32_t *size, char *err,
		   size_t errlen);
/* Frozen, meta_lock held: add (or remove) the PPL, superblocks written in
 * a crash-safe order, the run-time log installed (or retired). 0, or
 * -errno with err (the array as it was). */
int grow_ppl_apply(struct array *a, bool add, char *err, size_t errlen);

#endif
