/* SPDX-License-Identifier: MIT */
/*
 * Private interface between the files of src/geom/: one file per family of
 * layouts (raid0.c: linear and RAID 0 zones, raid5.c: RAID 4/5/6, raid10.c),
 * geom.c dispatching to them, names.c for mdadm's words.
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

/* Linear and RAID 0 (raid0.c). */
int geom_linear_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		     char *err, size_t errlen);
int geom_raid0_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		    char *err, size_t errlen);
int geom_linear_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out);
int geom_raid0_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out);
int geom_linear_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
			struct uraid_rloc *out);
int geom_raid0_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		       struct uraid_rloc *out);
uint64_t geom_linear_extent_left(const struct uraid_geom *g, uint64_t a);

/* RAID 4/5/6 (raid5.c). */
bool geom_r56_layout_ok(int level, uint32_t layout);
int geom_r456_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		   char *err, size_t errlen);
int geom_r456_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out);
int geom_r456_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		      struct uraid_rloc *out);

/* RAID 10 (raid10.c). */
int geom_r10_check(uint32_t layout, uint32_t raid_disks, char *err, size_t errlen);
int geom_r10_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		  char *err, size_t errlen);
int geom_r10_map(const struct uraid_geom *g, uint64_t a, struct uraid_loc *out,
		 unsigned max_out);
int geom_r10_reverse(const struct uraid_geom *g, uint32_t slot, uint64_t sector,
		     struct uraid_rloc *out);

#endif
