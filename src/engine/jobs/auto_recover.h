/* SPDX-License-Identifier: MIT */
/*
 * Which background job starts by itself (md's md_check_recovery): a resync
 * that is needed, a replacement that waits, a rebuild when a spare is there
 * for a missing slot. Run from the engine's tick.
 */
#ifndef URAID_ENGINE_JOBS_AUTO_RECOVER_H
#define URAID_ENGINE_JOBS_AUTO_RECOVER_H

struct array;

/* Start jobs by themselves on this array from now on (a tick hook, at
 * assembly, for an array that can be written and has background work).
 * 0, or -ENOSPC. */
int auto_recover_attach(struct array *a);

#endif
