/* SPDX-License-Identifier: MIT */
/*
 * Planning an array creation: every check and every on-disk value is decided
 * here, before anything is written (create.c writes the plan).
 */
#ifndef URAID_SETUP_CREATE_PLAN_H
#define URAID_SETUP_CREATE_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <uraid/create.h>
#include <uraid/geom.h>

struct create_member {
	const char *path;
	bool missing;
	bool journal;               /* the write journal (role 0xfffd), last in m[] */
	int fd;                     /* -1 when missing */
	uint64_t dev_sectors;       /* of the member (a range's length) */
	uint64_t base;              /* where it starts in its file or device (PATH@START+LENGTH) */
	bool blockdev;
	struct stat st;             /* its identity: given twice? */
	struct uraid_sb sb;         /* the superblock to write */
	int stale_minor_mask;       /* 1.x locations holding an old md magic */
	bool stale_md090;           /* and an md 0.90 superblock */
};

struct create_plan {
	struct uraid_create_result res;
	unsigned nmembers;
	struct create_member m[URAID_MAX_MEMBERS];
	struct uraid_geom geom;
	/* bitmap (same on every member) */
	struct uraid_bitmap_sb bitmap;
	uint64_t bitmap_sectors;    /* on disk, rounded to 4 KiB */
	bool bitmap_bits_set;       /* mark every chunk dirty (a resync is due) */
};

/* Validate o, open the members and decide everything. 0 or -errno + err. */
int create_plan_build(const struct uraid_create_opts *o, struct create_plan *plan,
		      char *err, size_t errlen);
void create_plan_close(struct create_plan *plan);

#endif
