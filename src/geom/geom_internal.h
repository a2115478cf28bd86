/* SPDX-License-Identifier: MIT */
/*
 * Private interface between the files of src/geom/: one file per family of
 * layouts (layout_raid0.c: linear and RAID 0 zones, layout_raid5.c: RAID
 * 4/5/6, layout_raid10.c), geom.c dispatching to them through one table
 * entry per level (struct geom_layout), names.c for mdadm's words.
 */
#ifndef URAID_GEOM_INTERNAL_H
#define URAID_GEOM_INTERNAL_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

#include <uraid/geom.h>

#include "common/errmsg.h"

/* Write a one-line reason to err (if any) and return -EINVAL. */
#define geom_fail(err, errlen, ...) uraid_errf(err, errlen, -EINVAL, __VA_ARGS__)

static inline bool geom_is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

/*
 * One level's layout math; geom.c looks it up by level (one line per level
 * there) and does what is common to all of them.
 */
struct geom_layout {
	/* validate p (raid_disks already checked against 1..URAID_MAX_MEMBERS) and derive */
	int (*init)(struct uraid_geom *g, const struct uraid_geom_params *p,
		    char *err, size_t errlen);
	/* every copy of array sector a (< array_sectors); max_out >= copies */
	int (*map)(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		   unsigned max_out);
	/* out is cleared to URAID_CHUNK_UNUSED; slot < raid_disks */
	int (*reverse)(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		       struct uraid_rloc *out);
	/* sectors from a to the end of its extent; NULL: of its chunk */
	uint64_t (*extent_left)(const struct uraid_geom *g, uint64_t a);
	unsigned (*max_failures)(const struct uraid_geom *g);
	/* copies of each array sector; NULL: one */
	unsigned (*copies)(const struct uraid_geom *g);
};

extern const struct geom_layout geom_layout_linear, geom_layout_raid0, geom_layout_raid456,
	geom_layout_raid10;

/* Linear and RAID 0 (layout_raid0.c). */
int geom_linear_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		     char *err, size_t errlen);
int geom_raid0_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		    char *err, size_t errlen);
int geom_linear_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		    unsigned max_out);
int geom_raid0_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		   unsigned max_out);
int geom_linear_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
			struct uraid_rloc *out);
int geom_raid0_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		       struct uraid_rloc *out);
uint64_t geom_linear_extent_left(const struct uraid_geom *g, uint64_t a);

/* RAID 4/5/6 (layout_raid5.c). */
bool geom_r56_layout_ok(int level, uint32_t layout);
int geom_r456_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		   char *err, size_t errlen);
int geom_r456_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		  unsigned max_out);
int geom_r456_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		      struct uraid_rloc *out);

/* RAID 10 (layout_raid10.c). */
int geom_r10_check(uint32_t layout, uint32_t raid_disks, char *err, size_t errlen);
int geom_r10_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		  char *err, size_t errlen);
int geom_r10_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		 unsigned max_out);
int geom_r10_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		     struct uraid_rloc *out);

#endif
