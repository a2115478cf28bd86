/* SPDX-License-Identifier: MIT */
/*
 * The array's resync state as md keeps it (recovery_cp, written as
 * resync_offset): whether a resync is needed, where one stands, and
 * whether one stopped on request is held. The background jobs read and
 * move it through these functions; each takes meta_lock.
 */
#ifndef URAID_ENGINE_MD_RESYNC_STATE_H
#define URAID_ENGINE_MD_RESYNC_STATE_H

#include <stdbool.h>
#include <stdint.h>

struct array;

/* How a job left the redundancy (md_resync_end's flags). */
#define MD_RESYNC_WHOLE  0x1u   /* whole again: a resync, or a repair of everything, completed */
#define MD_RESYNC_AT_POS 0x2u   /* a resync stopped part-way, at pos */
#define MD_RESYNC_HELD   0x4u   /* ... on request: not resumed by itself until another job ends */

/* A job ended (any kind: a held resync is let go by the next one's end).
 * Written now if the array is not active on disk. */
void md_resync_end(struct array *a, uint32_t flags, uint64_t pos);
/* A resync's progress: on disk now if the array is not active there (an
 * idle array's progress survives a kill), else with the next clean marking. */
void md_resync_checkpoint(struct array *a, uint64_t at);
/* Where a resync starts: the checkpoint of one that is needed (if below
 * span, the job's end), else 0. */
uint64_t md_resync_from(struct array *a, uint64_t span);
/* Is a resync needed and not held (stopped on request)? */
bool md_resync_wanted(struct array *a);

#endif
