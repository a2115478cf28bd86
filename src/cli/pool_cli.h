/* SPDX-License-Identifier: MIT */
/* What `uraid pool`, `uraid volume` and `serve --pool` share (pool.c). */
#ifndef URAID_CLI_POOL_CLI_H
#define URAID_CLI_POOL_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "pool/capacity.h"
#include "pool/pool_find.h"

/* Candidate drive paths: the globs given, else the configuration file's
 * DEVICE lines (config NULL: the default file; no DEVICE line: every
 * partition of /proc/partitions, as mdadm). */
struct pool_candidates {
	char **path;
	unsigned n, cap;
};
int pool_candidates_get(const char *cmd, const char *config, char *const *globs, unsigned n,
			struct pool_candidates *c);
void pool_candidates_free(struct pool_candidates *c);

/* Find pool `name` among the candidates; an exit status after a message
 * when none of them holds it, or on error; -1 when found. */
int pool_cli_find(const char *cmd, const char *name, const struct pool_candidates *c,
		  struct pool *p);

/* Free sectors per drive (the largest free extent of each, and where it starts). */
void pool_free_per_drive(const struct pool *p, uint64_t *largest, uint64_t *first);

/* The largest volume of resiliency r that fits: its sectors, and the drive
 * count that gives it (0 when none fits). */
uint64_t pool_largest_volume(const struct pool *p, enum pool_resiliency r, uint32_t chunk_kib,
			     unsigned *drives);

/* The largest RAID 50 (level 5) or 60 (level 6) volume that fits: its
 * sectors, and the drive and group counts that give it (0 when none fits;
 * a tie goes to more drives, then to fewer groups). */
uint64_t pool_largest_nested(const struct pool *p, int level, uint32_t chunk_kib,
			     unsigned *drives, unsigned *groups);

/* What a volume is in words: its resiliency word, or for a RAID 50/60
 * volume "raid50, G groups". */
const char *pool_volume_word(const struct pool_volume *v, char *buf, size_t len);

/* The resiliency word of a volume's md level and layout ("mirror" for RAID
 * 10 n2, ...), or the level's name. */
const char *pool_level_word(int level, uint32_t layout, unsigned raid_disks);

/* The member specs of a volume in slot order when its superblocks say (else
 * partition order), for uraid serve. Returns the count. */
unsigned pool_volume_members(const struct pool *p, const struct pool_volume *v, char **out,
			     size_t len_each);

/* Is partition i of v one that serve leaves out (superseded: a spare was
 * rebuilt in its place)? Says so on stderr when it is. */
bool pool_member_superseded(const struct pool *p, const struct pool_volume *v, unsigned i);

int cmd_pool(int argc, char **argv);
int cmd_volume(int argc, char **argv);
/* serve --pool=NAME [--volume=VOL] [DEVICE...]: the command line to serve
 * it (the options given, --name=VOL, "--", its members), as serve_scan_args;
 * SERVE_POOL_EVERY when no --volume is given and the pool has several
 * (serve_pool_volumes then gives them all). */
#define SERVE_POOL_EVERY (-2)
/* Volumes one `serve --pool` serves at once (exports of one NBD server). */
#define NBD_MAX_EXPORTS_POOL 64u
int serve_pool_args(int argc, char **argv, int first, const char *pool, const char *volume,
		    const char *config, int *new_argc, char ***new_argv);

#endif
