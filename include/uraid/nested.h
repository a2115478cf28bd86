/* SPDX-License-Identifier: MIT */
/*
 * Nested RAID 50 and 60 as mdadm users build them: a RAID 0 whose members
 * are RAID 5 (50) or RAID 6 (60) arrays, all md 1.2 on disk, the RAID 0's
 * superblocks on the inner arrays' data (4 KiB in, as md stacks them).
 * One engine runs all of them: the RAID 0's member I/O is a request of the
 * inner array on the same reactor (uraid_assemble_opts.stacked).
 */
#ifndef URAID_NESTED_H
#define URAID_NESTED_H

#include <uraid/create.h>
#include <uraid/engine.h>
#include <uraid/geom.h>
#include <uraid/superblock.h>

#ifdef __cplusplus
extern "C" {
#endif

#define URAID_NESTED_MAX_GROUPS 16

/* What uraid_nested_create made (or, with DRY_RUN, would make). */
struct uraid_nested_result {
	unsigned groups;
	struct uraid_create_result inner[URAID_NESTED_MAX_GROUPS];
	struct uraid_create_result outer;
};

/*
 * Create a nested array: o->level is the inner level (5 or 6), o->paths
 * every member, split in order into `groups` inner arrays of equal count
 * named NAME-0 .. NAME-(groups-1), then a RAID 0 named NAME (o->name) over
 * them with the same chunk. Everything is checked (a dry run of every
 * array) before a byte is written; the inner arrays are then created, and
 * the RAID 0's superblocks written through them. 0 or -errno with err.
 */
int uraid_nested_create(const struct uraid_create_opts *o, unsigned groups,
			struct uraid_nested_result *r, char *err, size_t errlen);

struct uraid_nested {
	struct uraid_array *outer;
	unsigned groups;
	struct uraid_array *inner[URAID_NESTED_MAX_GROUPS];
	char inner_name[URAID_NESTED_MAX_GROUPS][33];
};

/*
 * Do o->paths hold members of more than one md array (the inner arrays of
 * a nested one)? 1 yes, 0 no (one array, or unreadable: plain assembly
 * says why), never an error.
 */
int uraid_nested_detect(const char *const *paths, unsigned npaths);
/*
 * The same answer, and when it is yes the RAID 0's superblock (as read
 * from the first inner array whose data could be read) in *outer and the
 * number of inner arrays found in *groups (either may be NULL). A path may
 * be a range, PATH@START+LENGTH (a pool's partition).
 */
int uraid_nested_probe(const char *const *paths, unsigned npaths, struct uraid_sb *outer,
		       unsigned *groups);

/*
 * Assemble the inner arrays from o->paths (grouped by array UUID, each with
 * o->flags), then the RAID 0 found on their data with o's cache and
 * read-ahead options. The engine must run its own threads. 0 or -errno
 * with err; on failure nothing stays open.
 */
int uraid_nested_assemble(struct uraid_engine *e, const struct uraid_assemble_opts *o,
			  struct uraid_nested *n, char *err, size_t errlen);
/* Close the RAID 0, then the inner arrays. First error. */
int uraid_nested_close(struct uraid_nested *n);

/*
 * Where the RAID 0's superblock (1.2: 4 KiB, 4 KiB into the inner array's
 * data) lies on the members of the inner array whose superblock is
 * `inner`: the slot that holds it and the sector from that member's
 * data_offset (what erasing a nested array zeroes, besides the inner
 * superblocks; the row's parity at that sector is often a copy of it).
 * 0, or -EINVAL when inner is not a RAID 5/6 geometry.
 */
int uraid_nested_outer_sb_loc(const struct uraid_sb *inner, struct uraid_loc *loc);

/* "raid50" or "raid60" for the inner level 5 or 6; "raid?0" else. */
const char *uraid_nested_level_name(int inner_level);

#ifdef __cplusplus
}
#endif
#endif
