// SPDX-License-Identifier: MIT
/*
 * Planning `uraid create`: check the request the way mdadm and md would,
 * open the members, and compute every superblock, bitmap and log position
 * (reference/md-format.md §1.10, §1.11, §1.15, §2.1, §2.4). Nothing is
 * written here, so a refusal leaves every member untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uraid/level.h>
#include <uraid/ppl.h>

#include "common/block_parts.h"
#include "common/errmsg.h"
#include "common/file_lock.h"
#include "common/range_path.h"
#include "setup/create_plan.h"

#define fail uraid_errf

#define KIB_SECTORS 2ull
#define BITMAP_AUTO_KIB (100ull * 1024 * 1024)   /* mdadm 4.2: bitmap above 100 GiB */
#define DEFAULT_CHUNK_KIB 512

static const char *level_label(int level)
{
	const char *n = uraid_level_name(level);
	return n ? n : "unknown level";
}

static int random_bytes(uint8_t *buf, size_t len)
{
	while (len) {
		ssize_t n = getrandom(buf, len, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n, len -= (size_t)n;
	}
	return 0;
}

/* The facts of the level asked for (check_shape refuses one uraid does not run). */
static const struct uraid_level_info *info_of(const struct uraid_create_opts *o)
{
	return uraid_level_info(o->level);
}

static int check_shape(const struct uraid_create_opts *o, char *err, size_t errlen)
{
	const char *lv = level_label(o->level);
	const struct uraid_level_info *li = info_of(o);

	if (!li)
		return fail(err, errlen, -EINVAL, "unknown RAID level %d", o->level);
	if (o->minor > 2)
		return fail(err, errlen, -EINVAL, "metadata 1.%u does not exist (use 1.0, 1.1 or 1.2)",
			    o->minor);
	if (o->raid_disks < li->create_min_members)
		return fail(err, errlen, -EINVAL, "%s needs at least %u members, --raid-devices=%u given",
			    lv, li->create_min_members, o->raid_disks);
	if (o->raid_disks + o->spare_devices > URAID_MAX_MEMBERS)
		return fail(err, errlen, -EINVAL, "%u members are more than uraid supports (%u)",
			    o->raid_disks + o->spare_devices, URAID_MAX_MEMBERS);
	if (o->npaths != o->raid_disks + o->spare_devices)
		return fail(err, errlen, -EINVAL,
			    "%u devices given, but --raid-devices=%u and --spare-devices=%u need %u",
			    o->npaths, o->raid_disks, o->spare_devices,
			    o->raid_disks + o->spare_devices);
	if (o->spare_devices && !li->redundant)
		return fail(err, errlen, -EINVAL, "%s has no redundancy, so spares are pointless", lv);
	if (o->layout_given && !li->has_layouts)
		return fail(err, errlen, -EINVAL, "%s has no layouts; leave out --layout", lv);
	if (o->layout_given && !uraid_layout_valid(o->level, o->layout, o->raid_disks)) {
		char name[64];
		uraid_layout_name(o->level, o->layout, name, sizeof(name));
		return fail(err, errlen, -EINVAL, "layout %s (0x%x) is not valid for %s with %u members",
			    name, o->layout, lv, o->raid_disks);
	}
	if (o->chunk_kib && li->chunk == URAID_CHUNK_NONE)
		return fail(err, errlen, -EINVAL, "%s has no chunks; leave out --chunk", lv);
	if (o->chunk_kib && (o->chunk_kib < 4 || o->chunk_kib % 4))
		return fail(err, errlen, -EINVAL,
			    "chunk %u KiB is not a multiple of 4 KiB (md's page size)", o->chunk_kib);
	if (o->chunk_kib && (o->chunk_kib & (o->chunk_kib - 1)) && li->chunk_pow2)
		return fail(err, errlen, -EINVAL, "chunk %u KiB is not a power of two, which %s requires",
			    o->chunk_kib, lv);
	if (o->ppl && o->level != URAID_LEVEL_5)
		return fail(err, errlen, -EINVAL, "--consistency-policy=ppl is for RAID 5 only "
			    "(md's partial parity log), not %s", lv);
	if (o->ppl && o->bitmap == URAID_BITMAP_INTERNAL)
		return fail(err, errlen, -EINVAL, "a partial parity log and a write-intent bitmap "
			    "exclude each other (md); choose one consistency policy");
	if (o->bitmap == URAID_BITMAP_INTERNAL && !li->redundant)
		return fail(err, errlen, -EINVAL, "a write-intent bitmap is not meaningful for %s", lv);
	if (o->bitmap_chunk_kib && (o->bitmap_chunk_kib < 4 ||
				    (o->bitmap_chunk_kib & (o->bitmap_chunk_kib - 1))))
		return fail(err, errlen, -EINVAL,
			    "bitmap chunk %u KiB must be a power of two of at least 4 KiB",
			    o->bitmap_chunk_kib);
	if (o->name && strlen(o->name) > 31)
		return fail(err, errlen, -EINVAL, "array name '%s' is longer than 31 characters", o->name);
	if (o->size_kib && li->whole_members)
		return fail(err, errlen, -EINVAL,
			    "%s uses every member whole; --size applies to levels with redundancy", lv);
	if (o->chunk_kib > (1u << 21))
		return fail(err, errlen, -EINVAL, "chunk %u KiB is larger than 2 GiB", o->chunk_kib);
	/* raid5_run: a journal for RAID 4/5/6 only, and never with a bitmap */
	if (o->write_journal && !li->parity_members)
		return fail(err, errlen, -EINVAL, "--write-journal is for RAID 4, 5 and 6, not %s", lv);
	if (o->write_journal && o->bitmap == URAID_BITMAP_INTERNAL)
		return fail(err, errlen, -EINVAL, "--write-journal and --bitmap=internal: md runs an "
			    "array with one or the other; leave out --bitmap");
	if (o->write_journal && o->ppl)
		return fail(err, errlen, -EINVAL, "--write-journal and --consistency-policy=ppl: md "
			    "runs an array with one or the other; choose one");
	if (o->write_journal && o->raid_disks + o->spare_devices + 1 > URAID_MAX_MEMBERS)
		return fail(err, errlen, -EINVAL, "%u members and a journal are more than uraid "
			    "supports (%u)", o->raid_disks + o->spare_devices, URAID_MAX_MEMBERS);
	return 0;
}

/* Open one member read-write and learn its identity and size. */
static int open_member(struct create_member *m, bool force, char *err, size_t errlen)
{
	struct stat st;
	struct uraid_range_path range;
	int rc = uraid_range_path_parse(m->path, &range, err, errlen);

	if (rc)
		return rc;
	if (stat(range.path, &st) < 0)
		return fail(err, errlen, -errno, "cannot open %s: %s", m->path, strerror(errno));
	if (!S_ISBLK(st.st_mode) && !S_ISREG(st.st_mode))
		return fail(err, errlen, -ENOTBLK, "%s is neither a block device nor a regular file",
			    m->path);
	/* O_EXCL on a block device: refuse one that is mounted or held by a driver. */
	int flags = O_RDWR | O_CLOEXEC | (S_ISBLK(st.st_mode) && !range.ranged ? O_EXCL : 0);
	m->fd = open(range.path, flags);
	if (m->fd < 0) {
		int e = errno;
		if (e == EBUSY)
			return fail(err, errlen, -e, "%s is in use (mounted, or held by another driver)",
				    m->path);
		return fail(err, errlen, -e, "cannot open %s read-write: %s", m->path, strerror(e));
	}
	if (range.ranged)
		rc = uraid_range_path_lock(m->fd, &range, true, err, errlen);
	else if (!S_ISBLK(st.st_mode))
		rc = uraid_file_lock(m->fd, true, m->path, err, errlen);
	else
		rc = uraid_block_whole_lock(m->fd, m->path, err, errlen);   /* keeps ranges off */
	/* a partition over the range's sectors held by the kernel or a program */
	if (rc == 0 && range.ranged && S_ISBLK(st.st_mode))
		rc = uraid_block_parts_free(st.st_rdev, range.start, range.sectors, m->path, err,
					    errlen);
	if (rc)
		return rc;
	if (fstat(m->fd, &st) < 0)
		return fail(err, errlen, -errno, "cannot stat %s: %s", m->path, strerror(errno));
	m->st = st;
	rc = uraid_dev_sectors(m->fd, &m->dev_sectors, &m->blockdev);
	if (rc)
		return fail(err, errlen, rc, "cannot size %s: %s", m->path, strerror(-rc));
	if ((rc = uraid_range_path_check(&range, m->dev_sectors, err, errlen)))
		return rc;
	if (range.ranged) {
		m->base = range.start;
		m->dev_sectors = range.sectors;
	}

	struct uraid_probe *p = malloc(sizeof(*p));
	if (!p)
		return fail(err, errlen, -ENOMEM, "out of memory");
	rc = uraid_probe_range(m->fd, m->base, m->dev_sectors, p);
	if (rc) {
		free(p);
		return fail(err, errlen, rc, "cannot read %s: %s", m->path, strerror(-rc));
	}
	for (int minor = 0; minor < 3; minor++)
		if (p->loc[minor].status != -ENOENT)
			m->stale_minor_mask |= 1 << minor;
	m->stale_md090 = p->has_md090;
	if (p->chosen >= 0 && !force) {
		const struct uraid_probe_slot *s = &p->loc[p->chosen];
		char uuid[40];
		uraid_uuid_text(s->sb.set_uuid, uuid, sizeof(uuid));
		if (s->status == 0)
			rc = fail(err, errlen, -EEXIST,
				  "%s is a member of %s array '%s' (UUID %s, metadata 1.%d); "
				  "use --force to overwrite it", m->path, level_label(s->sb.level),
				  s->sb.set_name, uuid, p->chosen);
		else
			rc = fail(err, errlen, -EEXIST,
				  "%s holds a damaged md superblock (metadata 1.%d: %s); "
				  "use --force to overwrite it", m->path, p->chosen, s->reason);
	}
	else if (p->has_md090 && !force)
		rc = fail(err, errlen, -EEXIST,
			  "%s holds an md 0.90 superblock; use --force to overwrite it", m->path);
	free(p);
	return rc;
}

static int open_members(const struct uraid_create_opts *o, struct create_plan *plan,
			char *err, size_t errlen)
{
	bool force = o->flags & URAID_CREATE_FORCE;
	unsigned missing = 0;

	plan->nmembers = o->npaths;
	for (unsigned i = 0; i < o->npaths; i++)
		plan->m[i].fd = -1;
	for (unsigned i = 0; i < o->npaths; i++) {
		struct create_member *m = &plan->m[i];
		m->path = o->paths[i];
		if (strcmp(m->path, "missing") == 0) {
			if (i >= o->raid_disks)
				return fail(err, errlen, -EINVAL,
					    "a spare cannot be 'missing' (device %u of %u)", i + 1,
					    o->npaths);
			if (!info_of(o)->redundant)
				return fail(err, errlen, -EINVAL,
					    "%s has no redundancy, so no member can be missing",
					    level_label(o->level));
			m->missing = true;
			missing++;
			continue;
		}
		/* before it is opened: its lock would refuse the second open first */
		struct stat st;
		bool known = stat(m->path, &st) == 0;
		for (unsigned j = 0; known && j < i; j++) {
			const struct create_member *n = &plan->m[j];
			if (!n->missing && uraid_same_file(&n->st, &st))
				return fail(err, errlen, -EINVAL, "%s is given twice (also as %s)",
					    m->path, n->path);
		}
		int rc = open_member(m, force, err, errlen);
		if (rc)
			return rc;
	}
	if (missing == o->raid_disks)
		return fail(err, errlen, -EINVAL, "every member is 'missing'");
	plan->res.missing = missing;
	if (o->write_journal) {
		/* the journal goes last: dev_number raid_disks + spares, as mdadm numbers it */
		struct create_member *m = &plan->m[plan->nmembers];
		struct stat st;
		m->path = o->write_journal;
		m->journal = true;
		if (stat(m->path, &st) == 0)
			for (unsigned j = 0; j < plan->nmembers; j++)
				if (!plan->m[j].missing && uraid_same_file(&plan->m[j].st, &st))
					return fail(err, errlen, -EINVAL, "%s is given as a member and "
						    "as the write journal", m->path);
		int rc = open_member(m, force, err, errlen);
		if (rc)
			return rc;
		plan->nmembers++;
		plan->res.journal = true;
	}
	return 0;
}

/* The data area of each member and the per-member size the array uses. */
static int plan_sizes(const struct uraid_create_opts *o, struct create_plan *plan,
		      char *err, size_t errlen)
{
	struct uraid_create_result *r = &plan->res;
	uint32_t chunk = r->chunk_sectors;
	uint64_t data_offset = 0, min_avail = UINT64_MAX;
	const char *min_path = NULL;
	bool first = true;

	for (unsigned i = 0; i < plan->nmembers; i++) {
		struct create_member *m = &plan->m[i];
		if (m->missing)
			continue;
		uint64_t dev = m->dev_sectors;
		uint64_t sb_start = uraid_sb_location(o->minor, dev);
		uint64_t data_size;

		if (o->minor == 0) {
			uint64_t reserve = (o->ppl ? URAID_PPL_AREA_SECTORS : uraid_choose_bm_space(dev)) +
					   URAID_BBLOG_SECTORS;
			if (dev < 24 || sb_start < reserve + 8)
				return fail(err, errlen, -ENOSPC,
					    "%s is too small (%llu KiB) for 1.0 metadata", m->path,
					    (unsigned long long)dev / 2);
			m->sb.data_offset = 0;
			data_size = sb_start - reserve;
		} else {
			/* mdadm decides the offset on the first member and uses it for all. */
			if (first)
				data_offset = o->ppl ? uraid_default_data_offset_space(
							       dev, chunk, URAID_PPL_AREA_SECTORS)
						     : uraid_default_data_offset(dev, chunk);
			if (dev <= data_offset + 8)
				return fail(err, errlen, -ENOSPC,
					    "%s is too small (%llu KiB): with 1.%u metadata the "
					    "data starts after %llu KiB", m->path, (unsigned long long)dev / 2,
					    o->minor, (unsigned long long)data_offset / 2);
			m->sb.data_offset = data_offset;
			data_size = dev - data_offset;
		}
		if (first)
			r->data_offset = m->sb.data_offset;
		first = false;
		m->sb.super_offset = sb_start;
		m->sb.data_size = data_size;
		/* the journal's ring is its whole data area (mdadm); it holds no chunk */
		if (m->journal) {
			if (data_size < 64)
				return fail(err, errlen, -ENOSPC, "%s is too small for a write journal "
					    "(%llu KiB of data space)", m->path,
					    (unsigned long long)data_size / 2);
			continue;
		}

		/* mdadm works in KiB and rounds each member to the chunk. */
		uint64_t avail = data_size & ~1ull;
		if (chunk)
			avail -= avail % chunk;
		if (avail == 0)
			return fail(err, errlen, -ENOSPC,
				    "%s is too small: %llu KiB of data space holds no %u KiB chunk",
				    m->path, (unsigned long long)data_size / 2, chunk / 2);
		if (avail < min_avail) {   /* spares too: they must be able to take over */
			min_avail = avail;
			min_path = m->path;
		}
		if (o->size_kib && avail < o->size_kib * KIB_SECTORS)
			return fail(err, errlen, -ENOSPC,
				    "%s is smaller than --size: %llu KiB available, %llu KiB asked",
				    m->path, (unsigned long long)avail / 2,
				    (unsigned long long)o->size_kib);
	}

	const struct uraid_level_info *li = info_of(o);
	if (li->whole_members) {
		r->size_sectors = 0;    /* md derives RAID 0 / linear sizes from data_size */
		return 0;
	}
	uint64_t size = o->size_kib ? o->size_kib * KIB_SECTORS : min_avail;
	if (chunk)
		size -= size % chunk;
	if (li->create_size_align_kib && !o->size_kib)
		size &= ~(li->create_size_align_kib * KIB_SECTORS - 1);  /* e.g. RAID 1's */
	if (size == 0)
		return fail(err, errlen, -ENOSPC, "%s leaves no usable space per member",
			    o->size_kib ? "--size" : min_path);
	/*
	 * The per-member size is what the layout uses: md's raid10 trims
	 * it (calc_sectors) and writes that back; writing it at once
	 * keeps mdadm --examine's array size equal to the real one. (The
	 * other levels use the size, chunk-rounded, as it is.)
	 */
	struct uraid_geom_params gp = {
		.level = o->level, .layout = r->layout, .raid_disks = o->raid_disks,
		.chunk_sectors = chunk, .dev_sectors = size,
	};
	char why[200];
	if (uraid_geom_init(&plan->geom, &gp, why, sizeof(why)))
		return fail(err, errlen, -EINVAL, "%s", why);
	r->size_sectors = plan->geom.dev_sectors;
	return 0;
}

static int plan_geometry(const struct uraid_create_opts *o, struct create_plan *plan,
			 char *err, size_t errlen)
{
	struct uraid_create_result *r = &plan->res;
	uint64_t member_sectors[URAID_MAX_MEMBERS];
	char why[200];

	for (unsigned i = 0; i < o->raid_disks; i++)
		member_sectors[i] = plan->m[i].missing ? 0 : plan->m[i].sb.data_size;
	struct uraid_geom_params gp = {
		.level = o->level,
		.layout = r->layout,
		.raid_disks = o->raid_disks,
		.chunk_sectors = r->chunk_sectors,
		.dev_sectors = r->size_sectors,
		.member_sectors = member_sectors,
		/* uraid create always sets the flag that makes md honour the layout word */
		.raid0_layout_flag = info_of(o)->layout_feature != 0,
	};
	if (uraid_geom_init(&plan->geom, &gp, why, sizeof(why)))
		return fail(err, errlen, -EINVAL, "%s", why);
	r->array_sectors = uraid_geom_array_sectors(&plan->geom);

	/* RAID 10 survives more than copies-1 losses in the right places */
	bool present[URAID_MAX_MEMBERS];
	uint64_t bad_chunk;
	for (unsigned i = 0; i < o->raid_disks; i++)
		present[i] = !plan->m[i].missing;
	if (r->missing && !uraid_level_survives(&plan->geom, present, &bad_chunk)) {
		if (bad_chunk != UINT64_MAX)
			return fail(err, errlen, -EINVAL,
				    "the missing members hold every copy of chunk %llu; "
				    "%s cannot start without them", (unsigned long long)bad_chunk,
				    level_label(o->level));
		return fail(err, errlen, -EINVAL, "%s with %u members survives %u missing, not %u",
			    level_label(o->level), o->raid_disks,
			    uraid_geom_max_failures(&plan->geom), r->missing);
	}
	return 0;
}

/* Does every present member read as zeroes over its data area? (SEEK_DATA) */
static bool members_read_zero(const struct create_plan *plan, unsigned raid_disks)
{
	for (unsigned i = 0; i < raid_disks; i++) {
		const struct create_member *m = &plan->m[i];
		if (m->missing)
			continue;
		if (m->blockdev)
			return false;   /* no cheap way to know what a drive holds */
		uint64_t start = (m->base + m->sb.data_offset) * 512;
		uint64_t used = plan->res.size_sectors ? plan->res.size_sectors : m->sb.data_size;
		off_t data = lseek(m->fd, (off_t)start, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			continue;       /* only a hole up to the end */
		if (data < 0 || (uint64_t)data < start + used * 512)
			return false;
	}
	return true;
}

/*
 * Resync state at birth. mdadm's rules: clean with --assume-clean, for RAID 0
 * and linear, and for a RAID 4/5/6 created degraded (there is no redundancy
 * left to compute, or md could not compute it while degraded); otherwise a
 * full resync. uraid adds one: members whose data areas read as zeroes are
 * consistent already.
 */
static void plan_state(const struct uraid_create_opts *o, struct create_plan *plan)
{
	struct uraid_create_result *r = &plan->res;
	const struct uraid_level_info *li = info_of(o);
	bool parity = li->parity_members > 0;

	r->members_zero = members_read_zero(plan, o->raid_disks);
	r->clean = (o->flags & URAID_CREATE_ASSUME_CLEAN) || !li->redundant ||
		   r->members_zero || (parity && r->missing);
}

static int plan_bitmap(const struct uraid_create_opts *o, struct create_plan *plan,
		       char *err, size_t errlen)
{
	struct uraid_create_result *r = &plan->res;
	bool want = !o->ppl && (o->bitmap == URAID_BITMAP_INTERNAL ||
		    (o->bitmap == URAID_BITMAP_DEFAULT && info_of(o)->redundant &&
		     r->size_sectors / 2 > BITMAP_AUTO_KIB));
	if (!want || o->write_journal)
		return 0;

	uint64_t sync_size = r->size_sectors;
	if (info_of(o)->sync_in_array_sectors) {
		/* the array's size, from plan_sizes' geometry */
		uint32_t copies = uraid_geom_copies(&plan->geom);
		/* mdadm: size (KiB) * raid_disks / copies, in sectors */
		sync_size = r->size_sectors / 2 * o->raid_disks / copies * 2;
	}
	/* mdadm budgets the bitmap within the default reserve for the member size */
	uint64_t room = uraid_choose_bm_space(r->size_sectors);
	uint32_t min_chunk = uraid_bitmap_min_chunk(sync_size, room);
	if (min_chunk == 0)
		return fail(err, errlen, -ENOSPC,
			    "members of %llu KiB leave no room for a bitmap; use --bitmap=none",
			    (unsigned long long)r->size_sectors / 2);
	uint32_t chunk = o->bitmap_chunk_kib ? o->bitmap_chunk_kib * 1024u
					     : uraid_bitmap_default_chunk(sync_size, room);
	if (chunk < min_chunk)
		return fail(err, errlen, -EINVAL,
			    "bitmap chunk %u KiB is too small for this array: at least %u KiB "
			    "fits in the %llu KiB mdadm reserves", chunk / 1024, min_chunk / 1024,
			    (unsigned long long)room / 2);
	uint64_t sectors = uraid_bitmap_disk_sectors(sync_size, chunk);

	struct uraid_bitmap_sb *bm = &plan->bitmap;
	memset(bm, 0, sizeof(*bm));
	bm->magic = URAID_BITMAP_MAGIC;
	bm->version = URAID_BITMAP_VERSION;
	memcpy(bm->uuid, r->uuid, 16);
	bm->sync_size = sync_size;
	bm->chunksize = chunk;
	bm->daemon_sleep = o->bitmap_delay_s ? o->bitmap_delay_s : 5;
	bm->sectors_reserved = (uint32_t)room;
	plan->bitmap_sectors = sectors;
	r->bitmap = true;
	r->bitmap_chunk = chunk;

	/* 1.1/1.2: between the superblock and the data */
	for (unsigned i = 0; i < plan->nmembers && o->minor; i++) {
		const struct create_member *m = &plan->m[i];
		if (!m->missing && m->sb.super_offset + 8 + sectors > m->sb.data_offset)
			return fail(err, errlen, -ENOSPC,
				    "a bitmap of %llu KiB (chunk %u KiB) does not fit before the data "
				    "of %s; choose a larger --bitmap-chunk",
				    (unsigned long long)sectors / 2, chunk / 1024, m->path);
	}
	return 0;
}

/*
 * Where the data area ends and the bad-block log goes, as mdadm's
 * write_init_super1 decides once size and bitmap are known: the space
 * reserved for a bitmap is the real bitmap, or choose_bm_space(size).
 */
static int plan_data_area(const struct uraid_create_opts *o, struct create_plan *plan,
			  char *err, size_t errlen)
{
	const struct uraid_create_result *r = &plan->res;
	uint64_t bm_space = r->bitmap ? plan->bitmap_sectors
			    : o->ppl  ? URAID_PPL_AREA_SECTORS
				      : uraid_choose_bm_space(r->size_sectors);

	for (unsigned i = 0; i < plan->nmembers; i++) {
		struct uraid_sb *sb = &plan->m[i].sb;
		if (plan->m[i].missing)
			continue;
		sb->bblog_shift = 0;
		/* 1.0: a journal keeps the data area plan_sizes gave it */
		if (plan->m[i].journal && o->minor == 0) {
			sb->bblog_size = 0;
			sb->bblog_offset = 0;
			continue;
		}
		sb->bblog_size = 0;
		sb->bblog_offset = 0;
		if (o->minor == 0) {
			/* below the superblock: [data][bitmap][8-sector log][superblock] */
			uint64_t space = bm_space + URAID_BBLOG_SECTORS;
			if (sb->super_offset < r->size_sectors + space) {
				if (r->bitmap)
					return fail(err, errlen, -ENOSPC,
						    "a bitmap of %llu KiB does not fit after the data "
						    "of %s; use a smaller --size or --bitmap=none",
						    (unsigned long long)plan->bitmap_sectors / 2,
						    plan->m[i].path);
				space = sb->super_offset - r->size_sectors;
			}
			sb->data_size = sb->super_offset - space;
			if (space >= URAID_BBLOG_SECTORS) {
				sb->bblog_size = URAID_BBLOG_SECTORS;
				sb->bblog_offset = -URAID_BBLOG_SECTORS;
			}
			if (r->bitmap)
				sb->bitmap_offset = (int32_t)-(int64_t)(plan->bitmap_sectors +
									URAID_BBLOG_SECTORS);
			if (o->ppl)     /* mdadm: the PPL just below the log */
				uraid_sb_set_ppl(sb, -(int16_t)(URAID_PPL_AREA_SECTORS +
								URAID_BBLOG_SECTORS),
						 URAID_PPL_AREA_SECTORS);
			continue;
		}
		uint64_t log_rel = 8 + bm_space;   /* bitmap (or its reserve) at +8, then the log */
		if (r->bitmap)
			sb->bitmap_offset = 8;
		if (o->ppl)
			uraid_sb_set_ppl(sb, 8, URAID_PPL_AREA_SECTORS);
		if (sb->data_offset >= sb->super_offset + log_rel + URAID_BBLOG_SECTORS) {
			sb->bblog_offset = (int32_t)log_rel;
			sb->bblog_size = URAID_BBLOG_SECTORS;
		} else if (sb->data_offset >= sb->super_offset + 16 &&
			   (!r->bitmap || sb->data_offset - URAID_BBLOG_SECTORS >=
						  sb->super_offset + 8 + plan->bitmap_sectors)) {
			/* the last 8 sectors before the data, when they are free */
			sb->bblog_offset = (int32_t)(sb->data_offset - URAID_BBLOG_SECTORS -
						     sb->super_offset);
			sb->bblog_size = URAID_BBLOG_SECTORS;
		}
	}
	return 0;
}

static void compose_name(const struct uraid_create_opts *o, char *out)
{
	const char *name = o->name && *o->name ? o->name : "uraid";
	char host[256] = "";

	if (o->homehost)
		snprintf(host, sizeof(host), "%s", o->homehost);
	else if (gethostname(host, sizeof(host) - 1) < 0)
		host[0] = 0;
	if (strcmp(host, "<none>") == 0)
		host[0] = 0;
	/* mdadm: "homehost:name" when the name has no ':' and it all fits in 31 chars */
	size_t hl = strlen(host), nl = strlen(name);
	if (host[0] && !strchr(name, ':') && hl + 1 + nl < 32)
		snprintf(out, 33, "%.*s:%.*s", (int)hl, host, (int)nl, name);
	else
		snprintf(out, 33, "%.31s", name);
}

static int plan_superblocks(const struct uraid_create_opts *o, struct create_plan *plan)
{
	struct uraid_create_result *r = &plan->res;
	uint32_t total = o->raid_disks + o->spare_devices + (r->journal ? 1 : 0);
	uint32_t max_dev = ((256 + 2 * total + 511) / 512 * 512 - 256) / 2;
	uint64_t now = o->ctime ? o->ctime : (uint64_t)time(NULL);

	for (unsigned i = 0; i < plan->nmembers; i++) {
		struct create_member *m = &plan->m[i];
		if (m->missing)
			continue;
		struct uraid_sb *sb = &m->sb;
		sb->magic = URAID_SB_MAGIC;
		sb->major_version = 1;
		sb->feature_map = (r->bitmap ? URAID_FEATURE_BITMAP_OFFSET : 0) |
				  (r->journal ? URAID_FEATURE_JOURNAL : 0) |
				  (o->ppl ? URAID_FEATURE_PPL : 0) | info_of(o)->layout_feature;
		memcpy(sb->set_uuid, r->uuid, 16);
		memcpy(sb->set_name, r->set_name, sizeof(sb->set_name));
		sb->ctime = sb->utime = now;
		sb->level = o->level;
		sb->layout = r->layout;
		sb->size = r->size_sectors;
		sb->chunksize = r->chunk_sectors;
		sb->raid_disks = o->raid_disks;
		sb->dev_number = i;
		int rc = random_bytes(sb->device_uuid, 16);
		if (rc)
			return rc;
		sb->events = 0;
		sb->resync_offset = r->clean ? URAID_MAX_SECTOR : 0;
		sb->max_dev = max_dev;
		for (unsigned d = 0; d < URAID_SB_MAX_DEV; d++)
			sb->dev_roles[d] = URAID_ROLE_SPARE;
		for (unsigned d = 0; d < plan->nmembers; d++)
			if (!plan->m[d].missing && d < o->raid_disks)
				sb->dev_roles[d] = (uint16_t)d;
			else if (plan->m[d].journal)
				sb->dev_roles[d] = URAID_ROLE_JOURNAL;   /* journal_tail 0 */
	}
	return 0;
}

int create_plan_build(const struct uraid_create_opts *o, struct create_plan *plan,
		      char *err, size_t errlen)
{
	struct uraid_create_result *r = &plan->res;
	int rc;

	memset(plan, 0, sizeof(*plan));
	for (unsigned i = 0; i < URAID_MAX_MEMBERS; i++)
		plan->m[i].fd = -1;
	rc = check_shape(o, err, errlen);
	if (rc)
		return rc;

	r->level = o->level;
	r->raid_disks = o->raid_disks;
	r->spares = o->spare_devices;
	r->minor = o->minor;
	r->ppl = o->ppl;
	r->layout = o->layout_given ? o->layout : uraid_layout_default(o->level);
	switch (info_of(o)->chunk) {
	case URAID_CHUNK_NONE:
		r->chunk_sectors = 0;
		break;
	case URAID_CHUNK_ROUNDING:
		r->chunk_sectors = o->chunk_kib * 2;  /* rounding, none by default */
		break;
	case URAID_CHUNK_STRIPE:
		r->chunk_sectors = (o->chunk_kib ? o->chunk_kib : DEFAULT_CHUNK_KIB) * 2;
		break;
	}
	if (o->uuid)
		memcpy(r->uuid, o->uuid, 16);
	else if ((rc = random_bytes(r->uuid, 16)))
		return fail(err, errlen, rc, "cannot get random bytes: %s", strerror(-rc));
	compose_name(o, r->set_name);

	if ((rc = open_members(o, plan, err, errlen)) ||
	    (rc = plan_sizes(o, plan, err, errlen)) ||
	    (rc = plan_bitmap(o, plan, err, errlen)) ||
	    (rc = plan_data_area(o, plan, err, errlen)) ||
	    (rc = plan_geometry(o, plan, err, errlen)))
		return rc;
	plan_state(o, plan);
	plan->bitmap_bits_set = plan->res.bitmap && !plan->res.clean;
	rc = plan_superblocks(o, plan);
	if (rc)
		return fail(err, errlen, rc, "cannot get random bytes: %s", strerror(-rc));
	return 0;
}

void create_plan_close(struct create_plan *plan)
{
	for (unsigned i = 0; i < URAID_MAX_MEMBERS; i++) {
		if (plan->m[i].fd >= 0)
			close(plan->m[i].fd);
		plan->m[i].fd = -1;
	}
}
