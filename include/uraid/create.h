/* SPDX-License-Identifier: MIT */
/*
 * Creating arrays (as `mdadm --create` does) and probing members for md
 * superblocks (as `mdadm --examine` does).
 */
#ifndef URAID_CREATE_H
#define URAID_CREATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uraid/superblock.h>
#include <uraid/bitmap.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- probing ---- */

/* What one superblock location of a member holds. */
struct uraid_probe_slot {
	int status;                 /* 0 valid, -ENOENT no magic, -EINVAL invalid, -EIO unreadable */
	char reason[160];           /* why it is invalid (uraid_sb_validate's line) */
	uint64_t sb_start;          /* sectors */
	struct uraid_sb sb;         /* decoded when the magic is present */
	uint32_t csum_computed;     /* checksum computed over what was read */
};

struct uraid_probe {
	uint64_t dev_sectors;       /* member size in 512-byte sectors */
	bool is_blockdev;
	struct uraid_probe_slot loc[3];  /* by minor version 0, 1, 2 */
	int chosen;                 /* minor of the superblock mdadm would use, -1 none */
	bool has_md090;             /* an md 0.90 superblock (magic at end - 64 KiB) */
	/* the internal bitmap of the chosen superblock, when it has one */
	bool has_bitmap;
	int bitmap_status;          /* 0, -ENOENT (no magic), -EINVAL, -EIO */
	char bitmap_reason[160];
	struct uraid_bitmap_sb bitmap;
	uint64_t bitmap_dirty_bits; /* set bits among the bitmap's bits */
};

/*
 * Read the three superblock locations of an open member (read-only). The
 * chosen superblock is the one with a magic at the location it claims, valid
 * first, then the latest ctime (mdadm's rule). Returns 0 (see p->chosen) or
 * -errno when the member cannot be sized or read.
 */
int uraid_probe_fd(int fd, struct uraid_probe *p);
/* The same for the range [base, base + sectors) of fd (a pool's partition
 * given as PATH@START+LENGTH); -EINVAL when it does not fit in fd. */
int uraid_probe_range(int fd, uint64_t base, uint64_t sectors, struct uraid_probe *p);

/* Reads len bytes at byte offset off of what is probed: 0 or -errno. */
typedef int (*uraid_probe_read_fn)(void *ctx, void *buf, size_t len, uint64_t off);
/* The same for `sectors` read through read(ctx, ...): an array of the
 * engine that holds another array's superblocks (nested RAID 50/60). */
int uraid_probe_reader(uraid_probe_read_fn read, void *ctx, uint64_t sectors,
		       struct uraid_probe *p);

/* Size of an open file or block device in sectors; 0 or -errno. */
int uraid_dev_sectors(int fd, uint64_t *sectors, bool *is_blockdev);

/* ---- creation ---- */

enum uraid_bitmap_choice {
	URAID_BITMAP_DEFAULT,   /* mdadm 4.2: internal when members use > 100 GiB */
	URAID_BITMAP_NONE,
	URAID_BITMAP_INTERNAL,
};

/* flags for uraid_create_opts.flags */
#define URAID_CREATE_ASSUME_CLEAN 0x1u  /* redundancy is right already: no resync */
#define URAID_CREATE_FORCE        0x2u  /* overwrite members of other arrays */
#define URAID_CREATE_DRY_RUN      0x4u  /* validate and plan, write nothing */

struct uraid_create_opts {
	int level;                  /* enum uraid_level */
	bool layout_given;
	uint32_t layout;
	uint32_t raid_disks;
	uint32_t spare_devices;
	uint32_t chunk_kib;         /* 0: mdadm's default (512 KiB; none for RAID 1) */
	unsigned minor;             /* metadata 1.<minor>: 0, 1 or 2 */
	enum uraid_bitmap_choice bitmap;
	uint32_t bitmap_chunk_kib;  /* 0: mdadm's default */
	uint32_t bitmap_delay_s;    /* bitmap daemon_sleep; 0: md's default, 5 s */
	bool ppl;                   /* --consistency-policy=ppl: md's partial parity log
				       (RAID 5; no bitmap), 1 MiB per member as mdadm */
	const char *name;           /* array name; NULL: "uraid" */
	const char *homehost;       /* NULL: this host's name; "" or "<none>": no prefix */
	uint64_t size_kib;          /* per-member size to use; 0: the largest possible */
	uint32_t flags;             /* URAID_CREATE_* */
	const char *const *paths;   /* raid_disks + spare_devices entries; "missing" allowed */
	unsigned npaths;
	const char *write_journal;  /* RAID 4/5/6: md's write journal device, or NULL */
	/* for reproducible tests: fixed identities and time (all zero: random / now) */
	const uint8_t *uuid;        /* 16 bytes or NULL */
	uint64_t ctime;             /* seconds, 0: now */
};

/* What was (or, with DRY_RUN, would be) created. */
struct uraid_create_result {
	uint8_t uuid[16];
	char set_name[33];
	int level;
	uint32_t layout;
	uint32_t raid_disks;
	uint32_t spares;
	uint32_t missing;
	uint32_t chunk_sectors;
	uint64_t size_sectors;      /* per-member sectors used (sb size; 0 for linear/0) */
	uint64_t array_sectors;
	uint64_t data_offset;       /* sectors, of the first member */
	bool bitmap;
	uint32_t bitmap_chunk;      /* bytes */
	bool ppl;                   /* a partial parity log (feature 0x400) */
	bool clean;                 /* resync_offset == MaxSector */
	bool journal;               /* a write journal device was written */
	bool members_zero;          /* every data area read as zeroes (no resync needed) */
	unsigned minor;
};

/*
 * Create an array: validate everything, refuse with one line in err (and
 * without writing a byte) when anything is wrong, then write bad-block logs,
 * bitmaps and finally superblocks to every member (synchronously). Returns 0
 * or -errno (-EINVAL bad request, -EEXIST member of another array without
 * FORCE, -EBUSY/-EACCES/-ENOENT cannot open, -EIO write failed).
 */
int uraid_create(const struct uraid_create_opts *o, struct uraid_create_result *r,
		 char *err, size_t errlen);

/* mdadm's placement policy (reference/md-format.md §1.10), exposed for tests. */
uint64_t uraid_choose_bm_space(uint64_t dev_sectors);
uint64_t uraid_default_data_offset(uint64_t dev_sectors, uint32_t chunk_sectors);
/* The same with meta_space sectors reserved after the superblock instead of
 * the bitmap's (mdadm: 2048 for a PPL). */
uint64_t uraid_default_data_offset_space(uint64_t dev_sectors, uint32_t chunk_sectors,
					 uint64_t meta_space);

#ifdef __cplusplus
}
#endif
#endif
