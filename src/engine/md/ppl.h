/* SPDX-License-Identifier: MIT */
/*
 * md's partial parity log (PPL) at assembly: recovery of a dirty start and
 * the run-time log's installation (md/ppl.c). The run-time log itself, the
 * parity-log hooks around RAID 5 member writes, is level/raid5_ppl.c.
 */
#ifndef URAID_ENGINE_MD_PPL_H
#define URAID_ENGINE_MD_PPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct array;

/* Does the array's superblock say it has a PPL (feature 0x400 or 0x800)? */
bool ppl_enabled(const struct array *a);

/*
 * For an array with a PPL, once the level is set up and before any request:
 * refuse what md refuses (a level other than 5, more than 64 members); on
 * each member find the newest valid log (md's walk through the area); at a
 * dirty start (resync needed, read-write) rewrite the parity of every entry
 * whose partial parity checks, as md's ppl_recover does, and when entries
 * were recovered and none failed its checksum, the array needs no resync;
 * then write an empty log on each member (the area zeroed) and install the
 * run-time log (a->plog). Read-only: nothing is written, no log installed.
 * Returns 0 (also for arrays without a PPL), or -errno with one line in err.
 */
int ppl_attach(struct array *a, char *err, size_t errlen);

/*
 * The superblock that places member k's area: its own once it has a PPL
 * (md's super_1_load reads each member's ppl.offset and ppl.size from that
 * member's superblock, super_1_sync writes them back per member: members of
 * different sizes may have theirs at different offsets), else the array's
 * (a member not written with the PPL yet: a spare about to be).
 */
struct uraid_sb;
const struct uraid_sb *ppl_place_sb(const struct array *a, unsigned k);

/* The absolute start sector of member m's PPL area (its superblock's place). */
struct member;
uint64_t ppl_member_area(const struct array *a, const struct member *m);

/*
 * Member m takes slot s in sync (a rebuild or a replacement done; meta_lock
 * held, on a thread that may block): its area is zeroed and an empty header
 * written (md's ppl_modify_log), then the run-time log may write there. A
 * member added since assembly may hold stale logs of this array with a
 * higher generation: until then it is neither logged on nor would it be
 * replayed. No PPL: nothing. 0 or -errno (reported; the slot is then
 * written without a log until the next assembly).
 */
int ppl_member_joins(struct array *a, unsigned s, struct member *m);

/*
 * For uraid grow --consistency-policy=ppl (grow_ppl.c), with a->sb's PPL
 * fields set: member m's area zeroed and an empty header written, durable
 * (mdadm's write_init_ppl); whether an area of that many sectors (ppl.size)
 * holds two logs (md's use_multippl: MULTIPLE_PPLS); a run-time
 * log for the members in sync now (their areas emptied). 0 or -errno.
 */
int ppl_write_empty(struct array *a, struct member *m);
bool ppl_area_multi(uint64_t sectors);
struct parity_log;
int ppl_log_new(struct array *a, struct parity_log **out);

#endif
