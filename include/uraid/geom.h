/* SPDX-License-Identifier: MIT */
/*
 * uraid geometry: where every array sector lives on the members, for every
 * Linux md level and layout (linear, RAID 0/1/4/5/6/10), and the reverse.
 *
 * Pure functions: no I/O, no allocation, no global state. Sectors are 512
 * bytes. Member sectors are relative to the member's data_offset.
 * Facts: reference/md-format.md §3 (layouts), §3.6 (array sizes), §4 (RAID 6
 * Q coefficient order).
 */
#ifndef URAID_GEOM_H
#define URAID_GEOM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* md's level numbers (superblock `level` field). */
enum uraid_level {
	URAID_LEVEL_LINEAR = -1,
	URAID_LEVEL_0 = 0,
	URAID_LEVEL_1 = 1,
	URAID_LEVEL_4 = 4,
	URAID_LEVEL_5 = 5,
	URAID_LEVEL_6 = 6,
	URAID_LEVEL_10 = 10,
};

/* RAID 4/5/6 algorithms (superblock `layout`). */
enum uraid_raid5_layout {
	URAID_LEFT_ASYMMETRIC = 0,
	URAID_RIGHT_ASYMMETRIC = 1,
	URAID_LEFT_SYMMETRIC = 2,
	URAID_RIGHT_SYMMETRIC = 3,
	URAID_PARITY_FIRST = 4,
	URAID_PARITY_LAST = 5,
	URAID_ROTATING_ZERO_RESTART = 8,  /* ddf-zero-restart (RAID 6) */
	URAID_ROTATING_N_RESTART = 9,     /* ddf-N-restart (RAID 6) */
	URAID_ROTATING_N_CONTINUE = 10,   /* ddf-N-continue (RAID 6) */
	URAID_LEFT_ASYMMETRIC_6 = 16,
	URAID_RIGHT_ASYMMETRIC_6 = 17,
	URAID_LEFT_SYMMETRIC_6 = 18,
	URAID_RIGHT_SYMMETRIC_6 = 19,
	URAID_PARITY_FIRST_6 = 20,
};

/* RAID 0 zone layouts (only honoured with feature bit 0x1000). */
enum uraid_raid0_layout {
	URAID_RAID0_ORIG = 1,          /* "original", pre-3.14 kernels */
	URAID_RAID0_ALT_MULTIZONE = 2, /* "alternate", 3.14-5.3 kernels */
};

/* RAID 10 layout word bits. */
#define URAID_RAID10_NEAR(layout)  ((layout) & 0xff)
#define URAID_RAID10_FAR(layout)   (((layout) >> 8) & 0xff)
#define URAID_RAID10_OFFSET        0x10000u
#define URAID_RAID10_FARSETS_BROKEN 0x20000u /* early far-sets; md warns, uraid refuses */
#define URAID_RAID10_FARSETS       0x40000u
#define URAID_RAID10_DEFAULT       0x102u    /* n2 */

/* Upper bound on members of one array handled by uraid. */
#define URAID_MAX_MEMBERS 256

/* What describes an array's geometry; mirrors the superblock fields. */
struct uraid_geom_params {
	int level;                 /* enum uraid_level */
	uint32_t layout;           /* md layout word */
	uint32_t raid_disks;       /* slots */
	uint32_t chunk_sectors;    /* 0 for RAID 1 (and linear without rounding) */
	uint64_t dev_sectors;      /* sb `size`: per-member sectors used (1/4/5/6/10) */
	/* linear and RAID 0: data_size of each slot (array of raid_disks) */
	const uint64_t *member_sectors;
	bool raid0_layout_flag;    /* feature bit 0x1000 is set */
};

struct uraid_raid0_zone {
	uint64_t zone_end;         /* cumulative array sector where the zone ends */
	uint64_t dev_start;        /* member sector where the zone starts */
	uint32_t nb_dev;           /* members in the zone */
	uint32_t first;            /* index into uraid_geom.zone_slots */
};

/* A validated geometry with derived values; fill with uraid_geom_init(). */
struct uraid_geom {
	int level;
	uint32_t layout;             /* RAID 0: the zone layout in effect (1 or 2) */
	uint32_t raid_disks;
	uint32_t chunk_sectors;
	/*
	 * Per-member sectors in use: RAID 4/5/6 rounded down to the chunk,
	 * RAID 10 as calc_sectors derives it, linear/RAID 0 the largest
	 * member's usable size (see member_sectors for each one).
	 */
	uint64_t dev_sectors;
	uint64_t array_sectors;
	uint32_t data_disks;         /* RAID 4/5/6: data chunks per stripe */
	/* RAID 10 */
	uint32_t near_copies, far_copies;
	bool far_offset;             /* offset layout (o2 ...) */
	uint32_t far_set_size;       /* raid_disks without far sets */
	uint64_t far_stride;         /* sectors between far copies (chunk for offset) */
	/* RAID 0 zones and linear members */
	uint32_t nr_zones;
	struct uraid_raid0_zone zones[URAID_MAX_MEMBERS];
	uint16_t zone_slots[URAID_MAX_MEMBERS * URAID_MAX_MEMBERS / 2 + URAID_MAX_MEMBERS];
	uint64_t member_sectors[URAID_MAX_MEMBERS]; /* usable sectors per slot */
	uint64_t linear_start[URAID_MAX_MEMBERS];   /* linear: array sector of each slot */
};

/*
 * Validate params as md would and derive the geometry. Returns 0, or -EINVAL
 * with a one-line reason in err (e.g. "layout 7 is not a RAID 6 layout").
 */
int uraid_geom_init(struct uraid_geom *g, const struct uraid_geom_params *p,
		    char *err, size_t errlen);

/* One place an array sector is stored. */
struct uraid_loc {
	uint32_t slot;     /* member slot (role) */
	uint64_t sector;   /* member sector relative to data_offset */
};

/*
 * Forward map. Writes every copy of array_sector to out (in md's order: RAID 1
 * all slots; RAID 10 as __raid10_find_phys, each near copy followed by its
 * far copies, so copy n*far_copies + f is far copy f of near copy n; other
 * levels one location) and returns the number of copies, or -EINVAL past the
 * end, or -ENOSPC if max_out is too small.
 */
int uraid_geom_map(const struct uraid_geom *g, uint64_t array_sector,
		   struct uraid_loc *out, unsigned max_out);

/* Sectors from array_sector to the end of its chunk (or of its member extent). */
uint64_t uraid_geom_chunk_left(const struct uraid_geom *g, uint64_t array_sector);

/* RAID 4/5/6: the role of every member in one stripe row. */
struct uraid_stripe {
	uint64_t stripe;              /* stripe row = member sector / chunk_sectors */
	int32_t p_slot;               /* member holding P */
	int32_t q_slot;               /* member holding Q, -1 for RAID 4/5 */
	uint32_t data_disks;          /* data chunks in the row */
	uint32_t data_slot[URAID_MAX_MEMBERS]; /* data index k -> member slot */
	/*
	 * RAID 6 syndrome: the number of Q slots (data_disks for md-native
	 * layouts, raid_disks for DDF layouts where P and Q slots count as zero
	 * blocks) and the slot (coefficient exponent) of each member, -1 for
	 * P/Q in md-native layouts. RAID 4/5: 0 slots, every entry -1.
	 */
	uint32_t syndrome_slots;
	int32_t syndrome_of_slot[URAID_MAX_MEMBERS];
};

/*
 * Fill s for stripe row `stripe` (< dev_sectors / chunk_sectors) of a RAID
 * 4/5/6 geometry; -EINVAL otherwise.
 */
int uraid_geom_stripe(const struct uraid_geom *g, uint64_t stripe,
		      struct uraid_stripe *s);

enum uraid_chunk_kind {
	URAID_CHUNK_DATA,
	URAID_CHUNK_P,
	URAID_CHUNK_Q,
	URAID_CHUNK_UNUSED,   /* outside the area the layout uses */
};

/* What a member location holds. */
struct uraid_rloc {
	enum uraid_chunk_kind kind;
	uint64_t array_sector;  /* DATA: the array sector stored here */
	uint64_t stripe;        /* RAID 4/5/6: stripe row */
	uint32_t copy;          /* RAID 1/10: index of this copy in uraid_geom_map's order */
};

/*
 * Reverse map of (slot, member sector); 0 or -EINVAL for a bad slot. Places
 * the layout does not use (past the used size, the unused tail of RAID 10's
 * last row) are URAID_CHUNK_UNUSED. copy is 0 for levels with one copy.
 */
int uraid_geom_reverse(const struct uraid_geom *g, uint32_t slot,
		       uint64_t sector, struct uraid_rloc *out);

/* Array size in sectors as md exports it (§3.6); also g->array_sectors. */
static inline uint64_t uraid_geom_array_sectors(const struct uraid_geom *g)
{
	return g->array_sectors;
}

/*
 * Failures the level always survives (0 for linear/0, raid_disks-1 for RAID
 * 1, 1 for RAID 4/5, 2 for RAID 6, copies-1 for RAID 10).
 */
unsigned uraid_geom_max_failures(const struct uraid_geom *g);

/* Copies of each array sector, as uraid_geom_map counts them (raid_disks for
 * RAID 1, near x far for RAID 10, 1 for the others). */
unsigned uraid_geom_copies(const struct uraid_geom *g);

/*
 * Names, in mdadm's words. uraid_level_parse accepts "5", "raid5", "linear",
 * ...; uraid_layout_parse accepts the mdadm names valid for the level
 * ("left-symmetric", "la", "parity-first", "ddf-N-continue", "n2", "f3",
 * "o2", "original", "alternate", ...). Both return 0 or -EINVAL. Names
 * are case-sensitive as in mdadm. RAID 10 takes n/f/o with 1..255 copies
 * (validity against raid_disks is uraid_layout_valid's job). RAID 4 takes
 * "parity-last" or "default" and gives 0, the word mdadm writes; linear and
 * RAID 1 take only "default" (0).
 */
int uraid_level_parse(const char *name, int *level);
const char *uraid_level_name(int level);           /* "raid5", "linear", NULL if unknown */
int uraid_layout_parse(int level, const char *name, uint32_t *layout);
/*
 * What mdadm --examine (v4.2) prints after "Layout : ", written to buf:
 * "left-symmetric", "ddf-N-continue", "-unknown-" (RAID 5/6); "near=2",
 * "far=2", "offset=2", "near=2, far=2", "NO REDUNDANCY" (RAID 10);
 * "original", "alternate", "dangerous" (RAID 0, which mdadm prints only
 * with feature 0x1000). Returns buf, or NULL for levels mdadm prints no
 * Layout line for (linear, RAID 1, RAID 4; buf then holds "" or, for RAID 4,
 * "parity-last") or when buf/len is empty.
 */
const char *uraid_layout_name(int level, uint32_t layout, char *buf, size_t len);
/* The layout used when none is given (left-symmetric, n2, original, 0). */
uint32_t uraid_layout_default(int level);
/*
 * Is layout valid for level (as md's algorithm_valid_raid5/6, raid10
 * setup_geo with copies in 2..raid_disks)? Always true for linear, RAID 1
 * and RAID 4, whose layout word md ignores; RAID 0: 1 or 2. uraid also
 * refuses three RAID 10 words md would run: the unsafe early far sets
 * (0x20000), and the near+offset / near+far-sets combinations for which
 * md's mapping is not one-to-one (see src/geom/raid10.c).
 */
bool uraid_layout_valid(int level, uint32_t layout, uint32_t raid_disks);

#ifdef __cplusplus
}
#endif
#endif
