// SPDX-License-Identifier: MIT
/*
 * uraid examine: what `mdadm --examine` shows for each member, the bitmap
 * header besides, and the exact reason when a superblock is damaged. Never
 * writes; members are opened read-only.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/geom.h>
#include <uraid/level.h>

#include "cli/cli.h"
#include "cli/scan.h"
#include "cli/util.h"
#include "common/range_path.h"

static void examine_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid examine [--json] DEVICE...\n"
		"       uraid examine --scan [DEVICE|GLOB...]  one ARRAY line per array found, as\n"
		"                           mdadm --examine --scan (see 'uraid examine --scan --help')\n"
		"\n"
		"Print the md superblock (1.0, 1.1 or 1.2) of each DEVICE with the information\n"
		"'mdadm --examine' gives, plus the internal bitmap's header. A damaged superblock\n"
		"is reported with the check that failed; the exit status is then 1. Read-only.\n"
		"A DEVICE may be a range PATH@START+LENGTH (512-byte sectors: a pool's partition\n"
		"on an image file): the superblock inside the range.\n"
		"\n"
		"  -j, --json   one JSON list with an object per DEVICE (docs/json.md)\n"
		"  -h, --help   this text\n");
}

/* Everything examine derives from one superblock. */
struct exam {
	const char *path;
	const struct uraid_probe *p;
	const struct uraid_probe_slot *s;
	const struct uraid_sb *sb;
	uint64_t array_sectors;      /* 0 when the superblock alone cannot tell */
	uint64_t space_before, space_after;
	char array_state[URAID_MAX_MEMBERS + 1];
	char layout[64];
	bool has_layout;
	bool has_new_offset;         /* NEW_OFFSET set and a non-zero new_offset */
	uint64_t new_offset;         /* data_offset + new_offset, in sectors */
};

static uint64_t bitmap_disk_sectors(const struct uraid_probe *p)
{
	if (!p->has_bitmap || p->bitmap_status)
		return 8;
	return uraid_bitmap_disk_sectors(p->bitmap.sync_size, p->bitmap.chunksize);
}

/* Unused space before and after the data area, as mdadm's getinfo computes it. */
static void unused_space(struct exam *e)
{
	const struct uraid_sb *sb = e->sb;
	uint64_t so = sb->super_offset, doff = sb->data_offset;
	const struct uraid_level_info *li = uraid_level_info(sb->level);
	uint64_t used = li && li->whole_members ? sb->data_size : sb->size;
	bool has_bm = sb->feature_map & URAID_FEATURE_BITMAP_OFFSET;

	e->space_before = e->space_after = 0;
	if (doff < so) {
		uint64_t end = so;
		if (sb->bblog_offset && sb->bblog_size && (int64_t)so + sb->bblog_offset < (int64_t)end)
			end = (uint64_t)((int64_t)so + sb->bblog_offset);
		if (has_bm && (int64_t)so + sb->bitmap_offset < (int64_t)end)
			end = (uint64_t)((int64_t)so + sb->bitmap_offset);
		e->space_before = doff;
		if (doff + used < end)
			e->space_after = end - used - doff;
	} else {
		uint64_t earliest = so + 72;   /* the kernel keeps 36 KiB after the superblock */
		if (has_bm && sb->bitmap_offset > 0 &&
		    so + (uint64_t)sb->bitmap_offset + bitmap_disk_sectors(e->p) > earliest)
			earliest = so + (uint64_t)sb->bitmap_offset + bitmap_disk_sectors(e->p);
		if (sb->bblog_offset && sb->bblog_size &&
		    (uint64_t)((int64_t)so + sb->bblog_offset) + sb->bblog_size > earliest)
			earliest = (uint64_t)((int64_t)so + sb->bblog_offset) + sb->bblog_size;
		if (earliest < doff)
			e->space_before = doff - earliest;
		if (e->p->dev_sectors > doff + used)
			e->space_after = e->p->dev_sectors - used - doff;
	}
}

/* Array size from this superblock: what md exports for levels 1, 4, 5, 6, 10. */
static uint64_t array_sectors_of(const struct uraid_sb *sb)
{
	const struct uraid_level_info *li = uraid_level_info(sb->level);
	if (!li || li->whole_members)
		return 0;   /* RAID 0 and linear need every member's size */
	struct uraid_geom *g = malloc(sizeof(*g));
	char why[160];
	uint64_t n = 0;
	struct uraid_geom_params gp = {
		.level = sb->level, .layout = sb->layout, .raid_disks = sb->raid_disks,
		.chunk_sectors = sb->chunksize, .dev_sectors = sb->size,
	};
	if (g && uraid_geom_init(g, &gp, why, sizeof(why)) == 0)
		n = uraid_geom_array_sectors(g);
	free(g);
	return n;
}

static void derive(struct exam *e)
{
	const struct uraid_sb *sb = e->sb;
	const struct uraid_level_info *li = uraid_level_info(sb->level);
	unsigned slots = sb->raid_disks < URAID_MAX_MEMBERS ? sb->raid_disks : URAID_MAX_MEMBERS;

	e->array_sectors = array_sectors_of(sb);
	unused_space(e);
	e->has_new_offset = (sb->feature_map & URAID_FEATURE_NEW_OFFSET) && sb->new_offset;
	e->new_offset = (uint64_t)((int64_t)sb->data_offset + sb->new_offset);
	/* a reshape to fewer members: the state covers the old slots too */
	if ((sb->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) && sb->delta_disks < 0 &&
	    (int64_t)slots - sb->delta_disks <= URAID_MAX_MEMBERS)
		slots = (unsigned)((int64_t)slots - sb->delta_disks);
	for (unsigned d = 0; d < slots; d++) {
		unsigned cnt = 0;
		for (unsigned i = 0; i < sb->max_dev && i < URAID_SB_MAX_DEV; i++)
			cnt += sb->dev_roles[i] == d;
		e->array_state[d] = cnt == 1 ? 'A' : cnt == 0 ? '.' :
				    cnt == 2 && li && li->redundant ? 'R' : '?';
	}
	e->array_state[slots] = 0;
	/* mdadm prints a layout for RAID 5, 6, 10 (uraid_layout_name gives a
	   name) and RAID 0 with the layout flag (the level's layout_feature) */
	bool named = uraid_layout_name(sb->level, sb->layout, e->layout, sizeof(e->layout));
	e->has_layout = li && named &&
			(!li->layout_feature || (sb->feature_map & li->layout_feature));
	if (!named)
		snprintf(e->layout, sizeof(e->layout), "-unknown-");
}

static const char *role_kind(const struct uraid_sb *sb, uint16_t role)
{
	if (role == URAID_ROLE_SPARE)
		return "spare";
	if (role == URAID_ROLE_FAULTY)
		return "faulty";
	if (role == URAID_ROLE_JOURNAL)
		return "journal";
	if (role >= URAID_ROLE_MAX)
		return "unknown";
	if (sb->feature_map & URAID_FEATURE_REPLACEMENT)
		return "replacement";
	return "active";
}

/*
 * A reshape in progress, in mdadm --examine's words: the position in KiB,
 * the member count change, and the new level, layout and chunk where they
 * differ from the current ones (the new layout named by the current level,
 * as mdadm names it). The direction is in the JSON only (mdadm prints none).
 */
static void print_reshape(const struct exam *e)
{
	const struct uraid_sb *sb = e->sb;
	char b[64];

	printf("  Reshape pos'n : %" PRIu64 "%s\n", sb->reshape_position / 2,
	       cli_mdadm_human(sb->reshape_position * 512, b, sizeof(b)));
	if (sb->delta_disks)
		printf("  Delta Devices : %d (%" PRId64 "->%u)\n", sb->delta_disks,
		       (int64_t)sb->raid_disks - sb->delta_disks, sb->raid_disks);
	if ((int)sb->new_level != sb->level) {
		const char *nl = uraid_level_name((int)sb->new_level);
		printf("      New Level : %s\n", nl ? nl : "-unknown-");
	}
	if (sb->new_layout != sb->layout &&
	    (sb->level == 5 || sb->level == 6 || sb->level == 10)) {
		char nl[64];
		if (!uraid_layout_name(sb->level, sb->new_layout, nl, sizeof(nl)))
			snprintf(nl, sizeof(nl), "-unknown-");
		printf("     New Layout : %s\n", nl);
	}
	if (sb->new_chunk != sb->chunksize)
		printf("  New Chunksize : %uK\n", sb->new_chunk / 2);
	printf("\n");
}

static void print_human(const struct exam *e)
{
	const struct uraid_sb *sb = e->sb;
	char b1[64], b2[64];
	const char *lv = uraid_level_name(sb->level);
	uint16_t role = uraid_sb_role(sb);

	printf("%s:\n", e->path);
	printf("          Magic : %08x\n", sb->magic);
	printf("        Version : 1.%d\n", e->p->chosen);
	printf("    Feature Map : 0x%x\n", sb->feature_map);
	printf("     Array UUID : %s\n", uraid_uuid_text(sb->set_uuid, b1, sizeof(b1)));
	char host[256];
	size_t hl;
	printf("           Name : %s", sb->set_name);
	if (gethostname(host, sizeof(host) - 1) == 0 && (hl = strlen(host)) > 0 && hl < 32 &&
	    sb->set_name[hl] == ':' && strncmp(sb->set_name, host, hl) == 0)
		printf("  (local to host %s)", host);
	printf("\n");
	printf("  Creation Time : %s\n", cli_time(sb->ctime, b1, sizeof(b1)));
	printf("     Raid Level : %s\n", lv ? lv : "-unknown-");
	printf("   Raid Devices : %u\n\n", sb->raid_disks);
	printf(" Avail Dev Size : %" PRIu64 " sectors%s\n", sb->data_size,
	       cli_mdadm_human(sb->data_size * 512, b1, sizeof(b1)));
	if (e->array_sectors)
		printf("     Array Size : %" PRIu64 " KiB%s\n", e->array_sectors / 2,
		       cli_mdadm_human(e->array_sectors * 512, b2, sizeof(b2)));
	/* mdadm tests the level as unsigned, so linear (-1) shows it too */
	if ((uint32_t)sb->level > 0 && sb->size != sb->data_size)
		printf("  Used Dev Size : %" PRIu64 " sectors%s\n", sb->size,
		       cli_mdadm_human(sb->size * 512, b1, sizeof(b1)));
	if (sb->data_offset)
		printf("    Data Offset : %" PRIu64 " sectors\n", sb->data_offset);
	if (e->has_new_offset)
		printf("     New Offset : %" PRIu64 " sectors\n", e->new_offset);
	printf("   Super Offset : %" PRIu64 " sectors\n", sb->super_offset);
	if (sb->feature_map & URAID_FEATURE_RECOVERY_OFFSET)
		printf("Recovery Offset : %" PRIu64 " sectors\n", sb->recovery_offset);
	/* mdadm leaves the line out when there is no room on either side, and
	   while the data offset moves (a second data area is in use) */
	if ((e->space_before || e->space_after) && !(sb->feature_map & URAID_FEATURE_NEW_OFFSET))
		printf("   Unused Space : before=%" PRIu64 " sectors, after=%" PRIu64 " sectors\n",
		       e->space_before, e->space_after);
	printf("          State : %s\n", sb->resync_offset == URAID_MAX_SECTOR ? "clean" : "active");
	if (sb->resync_offset != URAID_MAX_SECTOR && sb->resync_offset)
		printf("  Resync Offset : %" PRIu64 " sectors\n", sb->resync_offset);
	printf("    Device UUID : %s\n\n", uraid_uuid_text(sb->device_uuid, b1, sizeof(b1)));
	if (sb->feature_map & URAID_FEATURE_BITMAP_OFFSET)
		printf("Internal Bitmap : %d sectors from superblock\n", sb->bitmap_offset);
	else if (sb->feature_map & (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS))
		printf("            PPL : %u sectors at offset %d sectors from superblock\n",
		       uraid_sb_ppl_size(sb), uraid_sb_ppl_offset(sb));
	if (sb->feature_map & URAID_FEATURE_RESHAPE_ACTIVE)
		print_reshape(e);
	if (sb->devflags)
		printf("          Flags :%s%s\n", sb->devflags & URAID_DEVFLAG_WRITEMOSTLY ?
		       " write-mostly" : "", sb->devflags & URAID_DEVFLAG_FAILFAST ? " failfast" : "");
	printf("    Update Time : %s\n", cli_time(sb->utime, b1, sizeof(b1)));
	if (sb->bblog_size && sb->bblog_offset)
		printf("  Bad Block Log : %u entries available at offset %d sectors%s\n",
		       sb->bblog_size * 512u / 8, sb->bblog_offset,
		       sb->feature_map & URAID_FEATURE_BAD_BLOCKS ? " - bad blocks present." : "");
	if (e->s->csum_computed == sb->sb_csum)
		printf("       Checksum : %x - correct\n", sb->sb_csum);
	else
		printf("       Checksum : %x - expected %x\n", sb->sb_csum, e->s->csum_computed);
	printf("         Events : %" PRIu64 "\n\n", sb->events);
	if (e->has_layout)
		printf("         Layout : %s\n", e->layout);
	const struct uraid_level_info *li = uraid_level_info(sb->level);
	if (li && li->chunk == URAID_CHUNK_STRIPE)
		printf("     Chunk Size : %uK\n", sb->chunksize / 2);
	else if (li && li->chunk == URAID_CHUNK_ROUNDING)
		printf("       Rounding : %uK\n", sb->chunksize / 2);
	printf("\n   Device Role : ");
	if (role < URAID_ROLE_MAX)
		printf("%s device %u\n", sb->feature_map & URAID_FEATURE_REPLACEMENT ?
		       "Replacement" : "Active", role);
	else
		printf("%s\n", role == URAID_ROLE_JOURNAL ? "Journal" : role_kind(sb, role));
	printf("   Array State : %s ('A' == active, '.' == missing, 'R' == replacing)\n",
	       e->array_state);

	const struct uraid_probe *p = e->p;
	if (p->has_bitmap && p->bitmap_status == 0)
		printf("         Bitmap : %" PRIu64 " bits of %s, %" PRIu64 " dirty, events %"
		       PRIu64 " (cleared %" PRIu64 ")%s\n",
		       uraid_bitmap_bits(p->bitmap.sync_size, p->bitmap.chunksize),
		       cli_bytes(p->bitmap.chunksize, b1, sizeof(b1)), p->bitmap_dirty_bits,
		       p->bitmap.events, p->bitmap.events_cleared,
		       p->bitmap.state & URAID_BITMAP_STATE_STALE ? ", stale" : "");
	else if (p->has_bitmap)
		printf("         Bitmap : damaged: %s\n", p->bitmap_reason);
	if (e->s->status)
		printf("        Problem : %s\n", e->s->reason);
}

/* The reshape fields (null when none runs); "direction" is md's
 * reshape_direction word for the RESHAPE_BACKWARDS bit. */
static void print_json_reshape(struct json *j, const struct uraid_sb *sb)
{
	char b[64];

	if (!(sb->feature_map & URAID_FEATURE_RESHAPE_ACTIVE)) {
		json_null(j, "reshape");
		return;
	}
	json_obj_open(j, "reshape");
	json_u64(j, "position_bytes", sb->reshape_position * 512);
	json_i64(j, "delta_devices", sb->delta_disks);
	json_str(j, "direction", sb->feature_map & URAID_FEATURE_RESHAPE_BACKWARDS ?
		 "backwards" : "forwards");
	const char *nl = uraid_level_name((int)sb->new_level);
	if (nl)
		json_str(j, "new_level", nl);
	else
		json_null(j, "new_level");
	json_i64(j, "new_level_number", (int32_t)sb->new_level);
	if (uraid_layout_name((int)sb->new_level, sb->new_layout, b, sizeof(b)))
		json_str(j, "new_layout", b);
	else
		json_null(j, "new_layout");
	json_u64(j, "new_layout_number", sb->new_layout);
	json_u64(j, "new_chunk_bytes", sb->new_chunk * 512ull);
	json_obj_close(j);
}

static void print_json(struct json *j, const struct exam *e)
{
	const struct uraid_sb *sb = e->sb;
	char b[64];
	uint16_t role = uraid_sb_role(sb);
	const char *lv = uraid_level_name(sb->level);

	json_str(j, "superblock", e->s->status ? "damaged" : "valid");
	if (e->s->status)
		json_str(j, "problem", e->s->reason);
	snprintf(b, sizeof(b), "%08x", sb->magic);
	json_str(j, "magic", b);
	snprintf(b, sizeof(b), "1.%d", e->p->chosen);
	json_str(j, "version", b);
	json_u64(j, "feature_map", sb->feature_map);
	json_str(j, "array_uuid", uraid_uuid_text(sb->set_uuid, b, sizeof(b)));
	json_str(j, "name", sb->set_name);
	json_u64(j, "creation_time_s", uraid_sb_seconds(sb->ctime));
	if (lv)
		json_str(j, "level", lv);
	else
		json_null(j, "level");
	json_i64(j, "level_number", sb->level);
	json_u64(j, "raid_devices", sb->raid_disks);
	json_u64(j, "device_bytes", e->p->dev_sectors * 512);
	json_u64(j, "avail_dev_bytes", sb->data_size * 512);
	if (e->array_sectors)
		json_u64(j, "array_bytes", e->array_sectors * 512);
	else
		json_null(j, "array_bytes");
	json_u64(j, "used_dev_bytes", sb->size * 512);
	json_u64(j, "data_offset_bytes", sb->data_offset * 512);
	json_u64(j, "super_offset_bytes", sb->super_offset * 512);
	if (sb->feature_map & URAID_FEATURE_RECOVERY_OFFSET)
		json_u64(j, "recovery_offset_bytes", sb->recovery_offset * 512);
	else
		json_null(j, "recovery_offset_bytes");
	json_u64(j, "unused_before_bytes", e->space_before * 512);
	json_u64(j, "unused_after_bytes", e->space_after * 512);
	json_str(j, "state", sb->resync_offset == URAID_MAX_SECTOR ? "clean" : "active");
	if (sb->resync_offset == URAID_MAX_SECTOR)
		json_null(j, "resync_offset_bytes");
	else
		json_u64(j, "resync_offset_bytes", sb->resync_offset * 512);
	json_str(j, "device_uuid", uraid_uuid_text(sb->device_uuid, b, sizeof(b)));
	if (sb->feature_map & URAID_FEATURE_BITMAP_OFFSET)
		json_i64(j, "bitmap_offset_bytes", (int64_t)sb->bitmap_offset * 512);
	else
		json_null(j, "bitmap_offset_bytes");
	json_u64(j, "update_time_s", uraid_sb_seconds(sb->utime));
	json_obj_open(j, "bad_block_log");
	json_u64(j, "entries", sb->bblog_offset ? sb->bblog_size * 512u / 8 : 0);
	json_i64(j, "offset_bytes", (int64_t)sb->bblog_offset * 512);
	json_bool(j, "bad_blocks_present", sb->feature_map & URAID_FEATURE_BAD_BLOCKS);
	json_obj_close(j);
	json_obj_open(j, "checksum");
	snprintf(b, sizeof(b), "%08x", sb->sb_csum);
	json_str(j, "found", b);
	snprintf(b, sizeof(b), "%08x", e->s->csum_computed);
	json_str(j, "computed", b);
	json_bool(j, "correct", sb->sb_csum == e->s->csum_computed);
	json_obj_close(j);
	json_u64(j, "events", sb->events);
	if (e->has_layout)
		json_str(j, "layout", e->layout);
	else
		json_null(j, "layout");
	json_u64(j, "layout_number", sb->layout);
	json_u64(j, "chunk_bytes", sb->chunksize * 512ull);
	json_u64(j, "dev_number", sb->dev_number);
	json_str(j, "device_role", role_kind(sb, role));
	if (role < URAID_ROLE_MAX)
		json_u64(j, "role_number", role);
	else
		json_null(j, "role_number");
	json_str(j, "array_state", e->array_state);
	if (e->has_new_offset)
		json_u64(j, "new_offset_bytes", e->new_offset * 512);
	else
		json_null(j, "new_offset_bytes");
	print_json_reshape(j, sb);
	json_u64(j, "max_dev", sb->max_dev);
	json_arr_open(j, "dev_roles");
	for (unsigned i = 0; i < sb->max_dev && i < URAID_SB_MAX_DEV; i++)
		json_u64(j, NULL, sb->dev_roles[i]);
	json_arr_close(j);

	const struct uraid_probe *p = e->p;
	if (!p->has_bitmap) {
		json_null(j, "bitmap");
		return;
	}
	json_obj_open(j, "bitmap");
	json_bool(j, "valid", p->bitmap_status == 0);
	if (p->bitmap_status) {
		json_str(j, "problem", p->bitmap_reason);
	} else {
		json_u64(j, "version", p->bitmap.version);
		json_u64(j, "chunk_bytes", p->bitmap.chunksize);
		json_u64(j, "sync_bytes", p->bitmap.sync_size * 512);
		json_u64(j, "bits", uraid_bitmap_bits(p->bitmap.sync_size, p->bitmap.chunksize));
		json_u64(j, "dirty_bits", p->bitmap_dirty_bits);
		json_u64(j, "events", p->bitmap.events);
		json_u64(j, "events_cleared", p->bitmap.events_cleared);
		json_u64(j, "state", p->bitmap.state);
		json_u64(j, "daemon_sleep_s", p->bitmap.daemon_sleep);
		json_u64(j, "write_behind", p->bitmap.write_behind);
		json_u64(j, "sectors_reserved", p->bitmap.sectors_reserved);
	}
	json_obj_close(j);
}

/* Examine one device; 0 when a valid superblock was shown, 1 otherwise. */
static int examine_one(const char *path, struct json *j)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	char reason[256] = "";
	int rc = CLI_EXIT_FAIL;

	/* a range PATH@START+LENGTH (a pool's partition on an image file): the
	   superblock inside the range, as its array sees it */
	struct uraid_range_path r;
	uint64_t dev_sectors;
	bool blockdev;
	int fd = -1;
	if (uraid_range_path_parse(path, &r, reason, sizeof(reason)) == 0 &&
	    (fd = open(r.path, O_RDONLY | O_CLOEXEC)) < 0)
		snprintf(reason, sizeof(reason), "cannot open: %s", strerror(errno));
	if (reason[0])
		;
	else if (!p)
		snprintf(reason, sizeof(reason), "out of memory");
	else if (r.ranged && ((rc = uraid_dev_sectors(fd, &dev_sectors, &blockdev)) ||
			      uraid_range_path_check(&r, dev_sectors, reason, sizeof(reason))))
		snprintf(reason + strlen(reason), sizeof(reason) - strlen(reason), "%s",
			 rc ? strerror(-rc) : "");
	else if ((rc = r.ranged ? uraid_probe_range(fd, r.start, r.sectors, p)
				: uraid_probe_fd(fd, p)) != 0)
		snprintf(reason, sizeof(reason), "cannot read: %s", strerror(-rc));
	else if (p->chosen >= 0 && p->loc[p->chosen].status == -EIO)
		snprintf(reason, sizeof(reason), "%s", p->loc[p->chosen].reason);
	else if (p->chosen < 0 && p->has_md090)
		snprintf(reason, sizeof(reason),
			 "holds an md 0.90 superblock, which uraid does not handle "
			 "(convert it with mdadm --update=metadata)");
	else if (p->chosen < 0)
		snprintf(reason, sizeof(reason),
			 "no md superblock (looked for 1.0, 1.1 and 1.2 metadata)");
	rc = CLI_EXIT_FAIL;

	if (j) {
		json_obj_open(j, NULL);
		/* in each element, the document being a list; "version" is the
		   superblock's (mdadm's "Version : 1.2"), kept as it was */
		json_u64(j, "json_version", CLI_JSON_VERSION);
		json_str(j, "device", path);
	}
	if (reason[0]) {
		/* the range's own checks name it already */
		if (!strncmp(reason, path, strlen(path)))
			fprintf(stderr, "uraid examine: %s\n", reason);
		else
			fprintf(stderr, "uraid examine: %s: %s\n", path, reason);
		if (j) {
			json_str(j, "superblock", "none");
			json_str(j, "problem", reason);
		}
	} else {
		struct exam e = { .path = path, .p = p, .s = &p->loc[p->chosen] };
		e.sb = &e.s->sb;
		derive(&e);
		if (j)
			print_json(j, &e);
		else
			print_human(&e);
		if (e.s->status)
			fprintf(stderr, "uraid examine: %s: damaged 1.%d superblock at sector %" PRIu64
				": %s\n", path, p->chosen, e.s->sb_start, e.s->reason);
		else if (p->has_bitmap && p->bitmap_status)
			fprintf(stderr, "uraid examine: %s: damaged bitmap: %s\n", path,
				p->bitmap_reason);
		else
			rc = CLI_EXIT_OK;
	}
	if (j)
		json_obj_close(j);
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

int cmd_examine(int argc, char **argv)
{
	if (scan_requested(argc, argv))        /* scan.c */
		return cmd_examine_scan(argc, argv);
	bool json;
	int first;
	int rc = cli_json_and_devices(argc, argv, "examine", examine_usage, &json, &first);
	if (rc >= 0)
		return rc;

	struct json j;
	rc = CLI_EXIT_OK;
	if (json) {
		json_begin(&j, stdout);
		json_arr_open(&j, NULL);
	}
	for (int i = first; i < argc; i++) {
		if (!json && i > first)
			printf("\n");
		if (examine_one(argv[i], json ? &j : NULL))
			rc = CLI_EXIT_FAIL;
	}
	if (json) {
		json_arr_close(&j);
		json_end(&j);
	}
	return rc;
}
