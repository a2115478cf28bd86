// SPDX-License-Identifier: MIT
/*
 * Assembling an array from its members as md does (reference/md-format.md
 * §1.6, §1.7, §1.9, §1.12, §1.14; kernel super_1_load/super_1_validate,
 * analyze_sbs, raid5_run; mdadm Assemble.c): one array UUID, the freshest
 * member decides roles, members more than one event behind are left out,
 * unsupported features are refused, and the level must survive the missing
 * slots. Nothing is written here (the write journal is replayed after,
 * journal_assemble.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <uraid/create.h>
#include "common/errmsg.h"
#include "common/file_lock.h"
#include "engine/core/array.h"
#include "engine/md/stack.h"
#include "engine/md/assemble_takeover.h"
#include "engine/md/reshape_state.h"

#define fail uraid_errf

/* Features uraid does not run (reshape, cluster, journal); PPL: md/ppl.c. */
#define UNSUPPORTED_FEATURES                                                         \
	(URAID_FEATURE_RESHAPE_ACTIVE | URAID_FEATURE_RESHAPE_BACKWARDS |                \
	 URAID_FEATURE_NEW_OFFSET | URAID_FEATURE_CLUSTERED | URAID_FEATURE_JOURNAL)

/* md's largest chunk (MAX_CHUNK_SIZE, 1 GiB); a resync buffers a few chunks. */
#define MD_MAX_CHUNK_SECTORS (1u << 21)
/*
 * The most bitmap chunks uraid tracks (4 bytes of state each in memory):
 * 2^25 bits is a 4 MiB bitmap on disk, 32 times what mdadm reserves by
 * default; a bitmap this large has chunks far smaller than md would choose.
 */
#define BITMAP_MAX_BITS (1ull << 25)

/* One given path while it is being examined. */
struct cand {
	struct member *m;
	struct uraid_sb sb;          /* its own superblock */
	unsigned minor;
	struct stat st;
	/* the bitmap found behind its superblock (probe) */
	int bitmap_status;
	char bitmap_reason[160];
	struct uraid_bitmap_sb bitmap;
	/* classification */
	enum uraid_member_state state;
	int slot;                    /* IN_SYNC: its slot */
	int pending;                 /* SPARE holding a slot in dev_roles, else -1 */
	bool filled;                 /* IN_SYNC in a slot a reshape fills (not its old rows) */
	bool kicked;                 /* older and inconsistent with the freshest (note) */
	char note[400];              /* why it is left out or not in sync */
};

static void uuid_text(const uint8_t *u, char *buf, size_t len)
{
	snprintf(buf, len, "%02x%02x%02x%02x:%02x%02x%02x%02x:%02x%02x%02x%02x:%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7],
		 u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

static const char *level_label(int level)
{
	const char *n = uraid_level_name(level);
	return n ? n : "unknown level";
}

/* ---- survival (shared with meta.c through array_level_survives) ---- */

/*
 * Mid-reshape the rows below the position are in the new geometry and those
 * above in the old one: the array survives only if both do (md's raid10
 * enough() and calc_degraded look at the previous geometry too). A slot the
 * reshape fills (old_unsynced) holds nothing of the old rows. Slot-accurate:
 * a RAID 10 offset layout's old copies wrap around the old member count.
 */
bool array_level_survives(const struct array *a)
{
	bool ok[URAID_MAX_MEMBERS];
	unsigned missing = 0;

	for (unsigned s = 0; s < a->geom.raid_disks; s++) {
		ok[s] = meta_slot_in_sync(a, s);
		missing += !ok[s];
	}
	if (!level_survives(a->level, &a->geom, ok, missing, NULL))
		return false;
	const struct reshape_state *rs = a->reshape;
	if (!rs)
		return true;
	for (unsigned k = 0; k < 2; k++) {
		const struct uraid_geom *g = &rs->g[k];
		bool in[URAID_MAX_MEMBERS];
		for (unsigned s = 0; s < g->raid_disks && s < URAID_MAX_MEMBERS; s++)
			in[s] = slot_ok(a, s) && !(k == RESHAPE_OLD && rs->old_unsynced[s]);
		if (!uraid_level_survives(g, in, NULL))
			return false;
	}
	return true;
}

/*
 * raid5_run's only_parity(): a slot that holds nothing but parity in this
 * layout; a not-yet-recovered member there does not make a dirty array unsafe.
 */
static bool only_parity(unsigned slot, uint32_t layout, unsigned raid_disks, unsigned max_degraded)
{
	switch (layout) {
	case URAID_PARITY_FIRST:
		return slot < max_degraded;
	case URAID_PARITY_LAST:
		return slot >= raid_disks - max_degraded;
	case URAID_PARITY_FIRST_6:
		return slot == 0 || slot == raid_disks - 1;
	case URAID_LEFT_ASYMMETRIC_6:
	case URAID_RIGHT_ASYMMETRIC_6:
	case URAID_LEFT_SYMMETRIC_6:
	case URAID_RIGHT_SYMMETRIC_6:
		return slot == raid_disks - 1;
	default:
		return false;
	}
}

/* ---- reading the members ---- */

static void cands_close(struct cand *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (c[i].m) {
			member_close(c[i].m);
			free(c[i].m);
			c[i].m = NULL;
		}
	}
}

/* Open one path and read its superblock; refusals name the path. */
static int read_member(struct array *a, struct cand *c, const char *path, uint32_t flags,
		       struct uraid_array *lower, char *err, size_t errlen)
{
	const struct ulog *log = array_log(a);
	struct uraid_probe *p;
	int rc;

	c->m = member_new();
	if (!c->m)
		return fail(err, errlen, -ENOMEM, "%s: out of memory", path);
	if (lower) {
		/* an array of this engine (nested RAID): probed through its requests */
		p = malloc(sizeof(*p));
		if (!p)
			return fail(err, errlen, -ENOMEM, "%s: out of memory", path);
		rc = stack_member_open(a, c->m, (struct array *)lower, path, p, err, errlen);
		if (rc) {
			free(p);
			if (c->m->fd < 0) {
				free(c->m);
				c->m = NULL;
			}
			return rc;
		}
		goto probed;
	}
	rc = member_open(c->m, path,
			 (flags & URAID_ASSEMBLE_READONLY ? MEMBER_OPEN_READONLY : 0) |
			 (flags & URAID_ASSEMBLE_BUFFERED ? MEMBER_OPEN_BUFFERED : 0) |
			 (flags & URAID_ASSEMBLE_PEEK ? MEMBER_OPEN_UNLOCKED : 0), log, err, errlen);
	if (rc) {
		free(c->m);
		c->m = NULL;
		return rc;
	}
	if (fstat(c->m->fd, &c->st) < 0)
		return fail(err, errlen, -errno, "%s: fstat: %s", path, strerror(errno));

	p = malloc(sizeof(*p));
	if (!p)
		return fail(err, errlen, -ENOMEM, "%s: out of memory", path);
	rc = uraid_probe_range(c->m->fd, c->m->base, c->m->dev_sectors, p);
	if (rc) {
		free(p);
		return fail(err, errlen, rc, "%s: cannot read the superblock: %s", path,
			    strerror(-rc));
	}
probed:
	if (p->chosen < 0) {
		rc = fail(err, errlen, -EINVAL, "%s: no md superblock (none at the 1.0, 1.1 or 1.2 "
			  "location)%s", path,
			  p->has_md090 ? "; it holds an md 0.90 superblock, which uraid does not run"
				       : "");
	} else if (p->loc[p->chosen].status) {
		rc = fail(err, errlen, -EINVAL, "%s: invalid md superblock (metadata 1.%d): %s",
			  path, p->chosen, p->loc[p->chosen].reason);
	} else {
		c->minor = (unsigned)p->chosen;
		c->sb = p->loc[p->chosen].sb;
		c->bitmap_status = p->has_bitmap ? p->bitmap_status : -ENOENT;
		memcpy(c->bitmap_reason, p->bitmap_reason, sizeof(c->bitmap_reason));
		c->bitmap = p->bitmap;
	}
	free(p);
	return rc;
}

/* Features and level of one member, on its own. */
static int check_member(const struct cand *c, char *err, size_t errlen)
{
	const char *path = c->m->path;
	uint32_t f = c->sb.feature_map;

	if (f & ~URAID_FEATURE_ALL)
		return fail(err, errlen, -EINVAL, "%s: unknown feature bits 0x%x in the superblock",
			    path, f & ~URAID_FEATURE_ALL);
	/* RAID 4/5/6 and RAID 10 in mid-reshape: continued (md/reshape_state.c
	   checks it) */
	const struct level *lv = level_find(c->sb.level);
	if ((f & (URAID_FEATURE_RESHAPE_ACTIVE | URAID_FEATURE_RESHAPE_BACKWARDS |
		  URAID_FEATURE_NEW_OFFSET)) &&
	    (!lv || lv->reshape == LEVEL_RESHAPE_NONE || !(f & URAID_FEATURE_RESHAPE_ACTIVE)))
		return fail(err, errlen, -EINVAL,
			    "%s: a reshape of a level %d array is in progress (feature_map 0x%x, "
			    "reshape_position %" PRIu64 "); uraid continues RAID 4/5/6 and RAID 10 "
			    "reshapes only, finish it with mdadm first", path, c->sb.level, f,
			    c->sb.reshape_position);
	if (f & URAID_FEATURE_CLUSTERED)
		return fail(err, errlen, -EINVAL,
			    "%s: clustered md array (feature 0x100), which uraid does not run", path);
	if ((f & URAID_FEATURE_JOURNAL) && (f & (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS)))
		return fail(err, errlen, -EINVAL,
			    "%s: array with both a write journal (feature 0x200) and a partial parity "
			    "log (feature 0x%x), which md does not run either", path,
			    f & (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS));
	if (f & URAID_FEATURE_BAD_BLOCKS)
		return fail(err, errlen, -EINVAL,
			    "%s: its bad-block list is not empty (feature 0x8); uraid does not avoid "
			    "recorded bad blocks yet", path);
	if (!lv)
		return fail(err, errlen, -EINVAL, "%s: level %d is not one uraid runs", path,
			    c->sb.level);
	/* raid5_run: a journal only with RAID 4/5/6, and never with a bitmap */
	if ((f & URAID_FEATURE_JOURNAL) && !lv->info.parity_members)
		return fail(err, errlen, -EINVAL, "%s: write journal (feature 0x200) on %s; md keeps "
			    "one only for RAID 4, 5 and 6", path, level_label(c->sb.level));
	if ((f & URAID_FEATURE_JOURNAL) && (f & URAID_FEATURE_BITMAP_OFFSET))
		return fail(err, errlen, -EINVAL, "%s: array with both a write journal and a "
			    "bitmap, which md does not start", path);
	if (c->sb.raid_disks == 0 || c->sb.raid_disks > URAID_MAX_MEMBERS)
		return fail(err, errlen, -EINVAL, "%s: raid_disks %u (uraid runs 1 to %u)", path,
			    c->sb.raid_disks, URAID_MAX_MEMBERS);
	if (c->sb.chunksize > MD_MAX_CHUNK_SECTORS)
		return fail(err, errlen, -EINVAL,
			    "%s: chunksize %u sectors (%u KiB) exceeds md's limit of %u sectors (1 GiB); "
			    "the superblock is damaged", path, c->sb.chunksize, c->sb.chunksize / 2,
			    MD_MAX_CHUNK_SECTORS);
	if (lv->info.chunk == URAID_CHUNK_STRIPE && (c->sb.chunksize == 0 || c->sb.chunksize % 8))
		return fail(err, errlen, -EINVAL,
			    "%s: chunksize %u sectors is not a non-zero multiple of 4 KiB, as md "
			    "needs for %s", path, c->sb.chunksize, level_label(c->sb.level));
	return 0;
}

/* The kernel's cross-check between members (super_1_load with a refdev). */
static int check_same_array(const struct cand *c, const struct cand *ref, char *err,
			    size_t errlen)
{
	const char *path = c->m->path;

	if (memcmp(c->sb.set_uuid, ref->sb.set_uuid, 16)) {
		char u1[40], u2[40];
		uuid_text(c->sb.set_uuid, u1, sizeof(u1));
		uuid_text(ref->sb.set_uuid, u2, sizeof(u2));
		return fail(err, errlen, -EINVAL,
			    "%s: belongs to another array (UUID %s, name '%s'), not to %s's (UUID %s)",
			    path, u1, c->sb.set_name, ref->m->path, u2);
	}
	if (c->minor != ref->minor)
		return fail(err, errlen, -EINVAL, "%s: has metadata 1.%u, but %s has 1.%u", path,
			    c->minor, ref->m->path, ref->minor);
	if (c->sb.level != ref->sb.level || c->sb.layout != ref->sb.layout ||
	    c->sb.chunksize != ref->sb.chunksize)
		return fail(err, errlen, -EINVAL,
			    "%s: has strangely different superblock to %s (level %d/%d, layout "
			    "0x%x/0x%x, chunk %u/%u sectors)", path, ref->m->path, c->sb.level,
			    ref->sb.level, c->sb.layout, ref->sb.layout, c->sb.chunksize,
			    ref->sb.chunksize);
	return 0;
}

/* Of this array (UUID, metadata minor) but of an older update than ref's. */
static bool same_array_older(const struct cand *c, const struct cand *ref)
{
	return !memcmp(c->sb.set_uuid, ref->sb.set_uuid, 16) && c->minor == ref->minor &&
	       c->sb.events < ref->sb.events;
}

/*
 * Roles (§1.6): a member as fresh as the freshest keeps its own role; an
 * older one gets the role the freshest superblock gives its dev_number.
 */
/* The slots an array has: raid_disks, and during a reshape to fewer
 * members (md's delta_disks < 0) the old count, whose last slots go away
 * at its end. */
static unsigned slots_of(const struct uraid_sb *sb)
{
	if ((sb->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) && sb->delta_disks < 0 &&
	    (int64_t)sb->raid_disks - sb->delta_disks <= URAID_MAX_MEMBERS)
		return (unsigned)((int64_t)sb->raid_disks - sb->delta_disks);
	return sb->raid_disks;
}

static void classify(struct cand *c, const struct cand *fresh)
{
	const struct uraid_sb *f = &fresh->sb;
	uint64_t ev = c->sb.events, fev = f->events;
	uint32_t dn = c->sb.dev_number;
	uint16_t own = uraid_sb_role(&c->sb);
	uint16_t fr = dn < f->max_dev ? f->dev_roles[dn] : URAID_ROLE_SPARE;
	uint16_t role = ev < fev ? fr : own;

	c->slot = -1;
	c->pending = -1;
	if (c->kicked) {
		c->state = URAID_MEMBER_STALE;     /* its note says why */
		return;
	}
	/* more than one behind (written so that events near 2^64 cannot wrap) */
	if (ev < fev && fev - ev > 1 && (own < URAID_ROLE_MAX || fr < URAID_ROLE_MAX ||
					 own == URAID_ROLE_JOURNAL)) {
		c->state = URAID_MEMBER_STALE;
		snprintf(c->note, sizeof(c->note),
			 "events %" PRIu64 " are more than one behind %s's %" PRIu64
			 " (md leaves it out)", ev, fresh->m->path, fev);
		return;
	}
	if (role == URAID_ROLE_JOURNAL) {
		c->state = URAID_MEMBER_JOURNAL;   /* no slot (md's raid_disk 0, Journal) */
		return;
	}
	if (role == URAID_ROLE_FAULTY) {
		c->state = URAID_MEMBER_FAULTY;
		snprintf(c->note, sizeof(c->note), "marked faulty (role 0xfffe)");
		return;
	}
	if (role >= URAID_ROLE_MAX || role >= slots_of(f)) {
		c->state = URAID_MEMBER_SPARE;
		return;
	}
	c->slot = role;         /* provisional: resolved in assign_slots */
	c->state = URAID_MEMBER_IN_SYNC;
}

/*
 * A recovering member (feature 0x2) in a slot of the new geometry of a
 * reshape in progress: md's raid5_start_reshape put it there not in sync
 * (a RAID 5 -> 6's Q slot, the parity slot of a RAID 0 -> 4 growth), and
 * the reshape writes every new row to it. It holds its slot for the new
 * geometry; its old rows are not read (reshape_state.h old_unsynced).
 * Not RAID 10: md's raid10_start_reshape gives such a member (a spare that
 * takes an old slot of a degraded array) recovery_offset 0 and recovers it
 * only after the reshape; its copies are read by plain slot state in both
 * geometries, so it stays a recovering member (the slot missing) until then.
 */
static bool fills_by_reshape(const struct uraid_sb *fsb, const struct cand *c)
{
	return (fsb->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) && fsb->level != 10 &&
	       c->slot >= 0 && (uint32_t)c->slot < fsb->raid_disks;
}

/* At most one in-sync member per slot; replacements and recovering members
 * wait (but those a reshape fills). */
static int assign_slots(const struct uraid_sb *fsb, struct cand *c, unsigned n,
			struct cand **by_slot, char *err, size_t errlen)
{
	/* pass 0: complete, non-replacement members; pass 1: replacements; 2: recovering */
	for (int pass = 0; pass < 3; pass++) {
		for (unsigned i = 0; i < n; i++) {
			if (c[i].state != URAID_MEMBER_IN_SYNC || c[i].slot < 0)
				continue;
			uint32_t f = c[i].sb.feature_map;
			bool repl = f & URAID_FEATURE_REPLACEMENT;
			bool recovering = f & URAID_FEATURE_RECOVERY_OFFSET;
			int kind = repl ? 1 : recovering ? 2 : 0;
			if (kind != pass)
				continue;
			int s = c[i].slot;
			struct cand *holder = by_slot[s];
			if (pass == 1 && !holder && !recovering) {
				/* the replacement finished and the original is gone: it takes the
				   slot, and loses the flag at the next write (raid1/10 run) */
				c[i].sb.feature_map &= ~URAID_FEATURE_REPLACEMENT;
				by_slot[s] = &c[i];
				continue;
			}
			if (pass == 1) {
				c[i].state = URAID_MEMBER_SPARE;
				c[i].pending = s;
				c[i].slot = -1;
				c[i].note[0] = '\0';   /* the copy goes on when served */
				continue;
			}
			if (holder)
				return fail(err, errlen, -EINVAL,
					    "%s: claims slot %d, which %s holds as well", c[i].m->path,
					    s, holder->m->path);
			if (pass == 0) {
				by_slot[s] = &c[i];
				continue;
			}
			if (fills_by_reshape(fsb, &c[i])) {
				by_slot[s] = &c[i];
				c[i].filled = true;
				continue;
			}
			c[i].state = URAID_MEMBER_SPARE;
			c[i].pending = s;
			c[i].slot = -1;
			snprintf(c[i].note, sizeof(c[i].note),
				 "only rebuilt up to sector %" PRIu64 " of slot %d (recovery_offset); "
				 "the slot counts as missing until the rebuild, which goes on from "
				 "there when the array is served",
				 c[i].sb.recovery_offset, s);
		}
	}
	for (unsigned s = 0; s < URAID_MAX_MEMBERS; s++)
		if (by_slot[s])
			by_slot[s]->slot = (int)s;
	return 0;
}

/* Names of members left out, for the "cannot start" line. */
static void left_out_list(const struct cand *c, unsigned n, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = 0;
	for (unsigned i = 0; i < n && used + 1 < len; i++) {
		if (c[i].state == URAID_MEMBER_IN_SYNC || !c[i].note[0])
			continue;
		int k = snprintf(buf + used, len - used, "; %s: %s", c[i].m->path, c[i].note);
		if (k < 0)
			break;
		used += (size_t)k;
	}
	if (used >= len && len > 4)
		memcpy(buf + len - 4, "...", 4);
}

/*
 * URAID_ASSEMBLE_COMPLETE: a slot without a member that the freshest
 * superblock still gives to a device (dev_roles) was forgotten, not lost:
 * starting without it would leave it behind at the first write. Every
 * device holding the slot's role counts (a replacement shares its slot's
 * role), and a copy left out as STALE (events behind) is not the member:
 * it hides the one that is missing. md 1.x superblocks keep no paths, so the
 * refusal names the slot and the device number the superblocks know it by.
 */
static int check_forgotten(const struct uraid_sb *fsb, struct cand *const *by_slot,
			   const struct cand *c, unsigned n, const char *fresh_path, char *err,
			   size_t errlen)
{
	char list[300] = "";
	size_t used = 0;
	unsigned forgotten = 0;

	for (unsigned s = 0; s < fsb->raid_disks; s++) {
		if (by_slot[s])
			continue;
		for (uint32_t d = 0; d < fsb->max_dev && d < URAID_SB_MAX_DEV; d++) {
			if (fsb->dev_roles[d] != s)
				continue;
			/* given (faulty or still recovering counts; a stale copy does not) */
			const struct cand *stale = NULL;
			bool given = false;
			for (unsigned i = 0; i < n && !given; i++) {
				if (c[i].sb.dev_number != d)
					continue;
				if (c[i].state == URAID_MEMBER_STALE)
					stale = &c[i];
				else
					given = true;
			}
			if (given)
				continue;
			if (used + 1 < sizeof(list)) {
				int k;
				if (stale)
					k = snprintf(list + used, sizeof(list) - used, "%sslot %u (device "
						     "number %u given but stale (events %" PRIu64 " < %"
						     PRIu64 "))", forgotten ? ", " : "", s, d,
						     stale->sb.events, fsb->events);
				else
					k = snprintf(list + used, sizeof(list) - used, "%sslot %u (device "
						     "number %u)", forgotten ? ", " : "", s, d);
				if (k > 0)
					used += (size_t)k;
			}
			forgotten++;
		}
	}
	if (!forgotten)
		return 0;
	char when[64] = "";
	time_t t = (time_t)(fsb->utime & 0xffffffffffULL);
	struct tm tm;
	if (gmtime_r(&t, &tm))
		strftime(when, sizeof(when), " at %Y-%m-%d %H:%M:%S UTC", &tm);
	return fail(err, errlen, -ENODEV,
		    "array '%s' not started: %s missing, but %s's superblock (events %" PRIu64
		    "%s) lists %s as an active member; give %s (uraid examine shows each device's "
		    "Device Role), or start the array degraded anyway with --run (the missing "
		    "member then needs a rebuild)", fsb->set_name, list, fresh_path, fsb->events,
		    when, forgotten > 1 ? "them" : "it", forgotten > 1 ? "their members" : "its member");
}

static int check_sizes(const struct cand *c, const struct uraid_sb *asb, const struct level *lv,
		       char *err, size_t errlen)
{
	if (lv->info.whole_members || (c->state != URAID_MEMBER_IN_SYNC && c->pending < 0))
		return 0;
	if (c->sb.data_size < asb->size)
		return fail(err, errlen, -EINVAL,
			    "%s: data area of %" PRIu64 " sectors is smaller than the %" PRIu64
			    " the array uses per member", c->m->path, c->sb.data_size, asb->size);
	return 0;
}

uint64_t array_bitmap_sync_sectors(const struct uraid_geom *g)
{
	const struct level *lv = level_find(g->level);
	/* linear and RAID 0 (no bitmap in md) keep the array's range as before */
	if (!lv || lv->info.sync_in_array_sectors || lv->info.whole_members)
		return g->array_sectors;
	return g->dev_sectors;
}

int array_member_areas_check(const struct array *a, const struct level *lv,
			     const struct member *m, const struct uraid_sb *sb, bool slot_holder,
			     struct uraid_sb_areas *ar, char *err, size_t errlen)
{
	/* the data the array may touch: levels using members whole (RAID 0,
	   linear) data_size, the others `size` (a spare only up to its own
	   data_size until it takes a slot) */
	uint64_t used = a->sb.size;
	if (lv->info.whole_members || (!slot_holder && sb->data_size < used) ||
	    uraid_sb_role(sb) == URAID_ROLE_JOURNAL)   /* the log ring is its data_size */
		used = sb->data_size;
	/* md's super_1_load: the PPL's place from the member's own superblock
	   once it has one (md/ppl.c ppl_place_sb) */
	const struct uraid_sb *pplsb =
		sb->feature_map & (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS) ? sb : &a->sb;
	struct uraid_sb_area_params p = {
		.dev_sectors = m->dev_sectors,
		.minor = a->minor,
		.bitmap = a->has_bitmap,
		.bitmap_offset = a->sb.bitmap_offset,
		.bitmap_sectors = a->bitmap_sectors,
		.data_used = used,
		.ppl = (a->sb.feature_map & (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS)) != 0,
		.ppl_offset = uraid_sb_ppl_offset(pplsb),
		.ppl_sectors = uraid_sb_ppl_size(pplsb),
	};
	char why[300];

	if (uraid_sb_check_areas(sb, &p, ar, why, sizeof(why)))
		return fail(err, errlen, -EINVAL, "%s: %s; not run (the metadata is damaged or "
			    "crafted, see uraid examine)", m->path, why);
	return 0;
}

void array_member_set_areas(struct member *m, const struct uraid_sb_areas *ar)
{
	struct member_area areas[MEMBER_AREAS] = {
		{ ar->sb_start, ar->sb_start + ar->sb_len },
		{ ar->bitmap_start, ar->bitmap_start + ar->bitmap_len },
		{ ar->bblog_start, ar->bblog_start + ar->bblog_len },
		{ ar->ppl_start, ar->ppl_start + ar->ppl_len },
	};
	member_set_areas(m, ar->data_start, ar->data_len, areas, MEMBER_AREAS);
}

int array_member_areas(const struct array *a, struct member *m, const struct uraid_sb *sb,
		       bool slot_holder, char *err, size_t errlen)
{
	struct uraid_sb_areas ar;
	int rc = array_member_areas_check(a, a->level, m, sb, slot_holder, &ar, err, errlen);

	if (rc == 0)
		array_member_set_areas(m, &ar);
	return rc;
}

/*
 * The bitmap's size comes from the array, as md's does (md_bitmap_resize
 * with the array's sync range); the header's chunk must not make it larger
 * than uraid tracks. Then every member's areas are checked and its wall set.
 */
static int check_areas(struct array *a, const struct cand *fresh, struct cand *c, unsigned n,
		       char *err, size_t errlen)
{
	int rc;

	a->bitmap_sectors = 0;
	if (a->has_bitmap) {
		uint64_t sync = array_bitmap_sync_sectors(&a->geom);
		uint32_t chunk = fresh->bitmap.chunksize;
		uint64_t bits = uraid_bitmap_bits(sync, chunk);
		if (bits > BITMAP_MAX_BITS)
			return fail(err, errlen, -EINVAL,
				    "%s: bitmap chunksize %u bytes makes %" PRIu64 " bits for the "
				    "array's %" PRIu64 " sectors, more than the %llu uraid keeps; a "
				    "larger bitmap chunk is needed (mdadm --grow --bitmap)",
				    fresh->m->path, chunk, bits, sync, BITMAP_MAX_BITS);
		a->bitmap_sectors = uraid_bitmap_disk_sectors(sync, chunk);
	}
	for (unsigned i = 0; i < n; i++) {
		bool holder = c[i].state == URAID_MEMBER_IN_SYNC || c[i].pending >= 0 ||
			      c[i].state == URAID_MEMBER_JOURNAL;
		if ((rc = array_member_areas(a, c[i].m, &c[i].sb, holder, err, errlen)))
			return rc;
	}
	return 0;
}

static int build_rest(struct array *a, const struct uraid_assemble_opts *o, struct cand *c,
		      unsigned n, struct cand *fresh, struct cand **by_slot, bool *ok,
		      unsigned missing, struct reshape_state *rs, char *err, size_t errlen);

/* Its own superblock gives it a slot of the array (not a spare, not faulty). */
static bool cand_in_slot(const struct cand *c)
{
	uint32_t dn = c->sb.dev_number;
	return dn < c->sb.max_dev && dn < URAID_SB_MAX_DEV &&
	       c->sb.dev_roles[dn] < c->sb.raid_disks;
}

static int build(struct array *a, const struct uraid_assemble_opts *o, struct cand *c,
		 unsigned n, char *err, size_t errlen)
{
	struct cand *by_slot[URAID_MAX_MEMBERS] = { 0 };
	struct cand *fresh = &c[0];
	int rc;

	for (unsigned i = 0; i < n; i++) {
		if ((rc = check_member(&c[i], err, errlen)))
			return rc;
		/* among the freshest, one in a slot: a spare's own fields (its
		   data offset, set when it was added) are no reference for the
		   others (assemble_takeover_member compares them) */
		if (c[i].sb.events > fresh->sb.events ||
		    (c[i].sb.events == fresh->sb.events && !cand_in_slot(fresh) &&
		     cand_in_slot(&c[i])))
			fresh = &c[i];
	}
	for (unsigned i = 0; i < n; i++) {
		char why[320];
		if (&c[i] == fresh || !(rc = check_same_array(&c[i], fresh, why, sizeof(why))))
			continue;
		if (!same_array_older(&c[i], fresh))
			return fail(err, errlen, rc, "%s", why);
		/* behind a RAID 5 -> 6 update that has moved nothing (one event,
		   a spare any number): taken as the update would have left it
		   (assemble_takeover.c) */
		char because[200];
		unsigned was_disks = c[i].sb.raid_disks;
		uint64_t was_events = c[i].sb.events;
		int was_level = c[i].sb.level;
		bool takeover_source = ((was_level == URAID_LEVEL_5 &&
					 fresh->sb.level == URAID_LEVEL_6) ||
					(was_level == URAID_LEVEL_0 &&
					 fresh->sb.level == URAID_LEVEL_4)) &&
				       (fresh->sb.feature_map & URAID_FEATURE_RESHAPE_ACTIVE);
		if (assemble_takeover_member(&fresh->sb, &c[i].sb, because, sizeof(because))) {
			ulog(array_log(a), URAID_LOG_WARNING, "%s: still RAID %d of %u (events %" PRIu64
			     " < %" PRIu64 "): the RAID %d restripe has not moved data yet, so it is "
			     "taken in as the takeover's update would have left it", c[i].m->path,
			     was_level, was_disks, was_events, fresh->sb.events, fresh->sb.level);
			continue;
		}
		/* md kicks a member its freshest superblock disagrees with
		   (analyze_sbs: "fatal superblock inconsistency"): here one whose
		   update a crash cut short, e.g. a level change that reached the
		   others first; it is left out (STALE, listed with the reason),
		   as a missing member, and nothing is written to it */
		c[i].kicked = true;
		const char *what = why;     /* without its leading "PATH: " */
		size_t pl = strlen(c[i].m->path);
		if (!strncmp(why, c[i].m->path, pl) && !strncmp(why + pl, ": ", 2))
			what += pl + 2;
		int k = snprintf(c[i].note, sizeof(c[i].note), "%s; it is older (events %" PRIu64
				 " < %" PRIu64 "): left out", what, c[i].sb.events,
				 fresh->sb.events);
		if (takeover_source && k > 0 && (size_t)k < sizeof(c[i].note) &&
		    snprintf(c[i].note + k, sizeof(c[i].note) - (size_t)k, " (not taken in as the "
			     "RAID %d takeover's source: %s)", fresh->sb.level, because) < 0)
			c[i].note[k] = '\0';
	}
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = 0; j < i; j++)
			if (c[j].sb.dev_number == c[i].sb.dev_number)
				return fail(err, errlen, -EINVAL,
					    "%s: has device number %u, as %s does (a copy of "
					    "one member?)", c[i].m->path, c[i].sb.dev_number,
					    c[j].m->path);
	/* members as fresh as the freshest agree on a reshape and its position */
	for (unsigned i = 0; i < n; i++)
		if (c[i].sb.events == fresh->sb.events &&
		    ((c[i].sb.feature_map ^ fresh->sb.feature_map) & URAID_FEATURE_RESHAPE_ACTIVE ||
		     ((c[i].sb.feature_map & URAID_FEATURE_RESHAPE_ACTIVE) &&
		      c[i].sb.reshape_position != fresh->sb.reshape_position)))
			return fail(err, errlen, -EINVAL, "%s: its reshape state (feature_map 0x%x, "
				    "reshape_position %" PRIu64 ") differs from %s's (0x%x, %" PRIu64
				    ") at the same events; not run", c[i].m->path,
				    c[i].sb.feature_map, c[i].sb.reshape_position, fresh->m->path,
				    fresh->sb.feature_map, fresh->sb.reshape_position);
	const struct uraid_sb *fsb = &fresh->sb;
	unsigned raid_disks = slots_of(fsb);
	const struct level *lv = level_find(fsb->level);   /* check_member found it */
	a->level = lv;
	for (unsigned i = 0; i < n; i++)
		classify(&c[i], fresh);
	if ((rc = assign_slots(fsb, c, n, by_slot, err, errlen)))
		return rc;
	for (unsigned i = 0; i < n; i++)
		if ((rc = check_sizes(&c[i], fsb, lv, err, errlen)))
			return rc;

	/* geometry */
	uint64_t member_sectors[URAID_MAX_MEMBERS];
	for (unsigned s = 0; s < raid_disks; s++)
		member_sectors[s] = by_slot[s] ? by_slot[s]->sb.data_size : 0;
	struct uraid_geom_params gp = {
		.level = fsb->level,
		.layout = fsb->layout,
		.raid_disks = raid_disks,
		.chunk_sectors = fsb->chunksize,
		.dev_sectors = fsb->size,
		.member_sectors = member_sectors,
		.raid0_layout_flag = fsb->feature_map & URAID_FEATURE_RAID0_LAYOUT,
	};
	bool ok[URAID_MAX_MEMBERS];
	unsigned missing = 0;
	for (unsigned s = 0; s < raid_disks; s++) {
		ok[s] = by_slot[s] != NULL;
		missing += !ok[s];
	}
	char why[200], out[400];
	if (!lv->info.redundant && missing) {
		left_out_list(c, n, out, sizeof(out));
		return fail(err, errlen, -ENODEV,
			    "%s array '%s' cannot start: %u of its %u members missing, and it has "
			    "no redundancy (freshest member %s)%s", level_label(fsb->level),
			    fsb->set_name, missing, raid_disks, fresh->m->path, out);
	}
	struct reshape_state *rs = NULL;
	if (fsb->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) {
		/* both geometries from the superblocks; requests go by the new
		   member count, the size is the smaller one until the end (md) */
		const struct uraid_sb *slot_sb[URAID_MAX_MEMBERS] = { 0 };
		uint64_t dev[URAID_MAX_MEMBERS] = { 0 };
		for (unsigned s = 0; s < raid_disks; s++)
			if (by_slot[s]) {
				slot_sb[s] = &by_slot[s]->sb;
				dev[s] = by_slot[s]->m->dev_sectors;
			}
		if ((rc = reshape_state_from_sb(fsb, slot_sb, dev, &rs, why, sizeof(why))))
			return fail(err, errlen, rc, "%s: %s", fresh->m->path, why);
		/* the slots the reshape fills count as missing in the old rows;
		   the old rows must survive slot by slot (md's raid10 enough()
		   on the previous geometry: offset copies wrap around its count) */
		const struct uraid_geom *og = &rs->g[RESHAPE_OLD];
		bool old_ok[URAID_MAX_MEMBERS] = { 0 };
		unsigned filled = 0, old_missing = 0;
		for (unsigned s = 0; s < raid_disks; s++) {
			if (by_slot[s] && by_slot[s]->filled)
				rs->old_unsynced[s] = true;
			if (s < og->raid_disks) {
				filled += by_slot[s] && by_slot[s]->filled;
				old_ok[s] = by_slot[s] && !by_slot[s]->filled;
				old_missing += !old_ok[s];
			}
		}
		uint64_t old_bad = UINT64_MAX;
		if (!uraid_level_survives(og, old_ok, &old_bad)) {
			if (old_bad != UINT64_MAX)
				snprintf(why, sizeof(why), "the missing slots hold every copy of "
					 "chunk %" PRIu64 " of the old geometry", old_bad);
			else
				snprintf(why, sizeof(why), "the old rows lack %u of %u slots (%u "
					 "filled by the reshape, not in sync there), they survive %u",
					 old_missing, og->raid_disks, filled,
					 uraid_geom_max_failures(og));
			free(rs);       /* og with it: not used below */
			left_out_list(c, n, out, sizeof(out));
			return fail(err, errlen, -ENODEV, "%s array '%s' cannot start mid-reshape: %s "
				    "(freshest member %s)%s", level_label(fsb->level), fsb->set_name,
				    why, fresh->m->path, out);
		}
		/* the larger member count (fewer members: the old one) */
		a->geom = rs->g[rs->delta_disks < 0 ? RESHAPE_OLD : RESHAPE_NEW];
		uint64_t size = rs->g[RESHAPE_OLD].array_sectors < rs->g[RESHAPE_NEW].array_sectors
				? rs->g[RESHAPE_OLD].array_sectors : rs->g[RESHAPE_NEW].array_sectors;
		if (rs->backwards && rs->top < size)
			size = rs->top;         /* md's raid5_size while it runs */
		a->geom.array_sectors = size;
	} else if (uraid_geom_init(&a->geom, &gp, why, sizeof(why)))
		return fail(err, errlen, -EINVAL, "%s: %s", fresh->m->path, why);
	rc = build_rest(a, o, c, n, fresh, by_slot, ok, missing, rs, err, errlen);
	if (rc)
		free(rs);
	return rc;
}

/* build, once the geometry is known (rs: a reshape's state, or NULL;
 * the array owns it when this succeeds). */
static int build_rest(struct array *a, const struct uraid_assemble_opts *o, struct cand *c,
		      unsigned n, struct cand *fresh, struct cand **by_slot, bool *ok,
		      unsigned missing, struct reshape_state *rs, char *err, size_t errlen)
{
	const struct uraid_sb *fsb = &fresh->sb;
	unsigned raid_disks = slots_of(fsb);
	const struct level *lv = a->level;
	unsigned dirty_parity = 0;
	char why[200], out[400];
	int rc;

	uint64_t bad_chunk = 0;
	if (!level_survives(lv, &a->geom, ok, missing, &bad_chunk)) {
		left_out_list(c, n, out, sizeof(out));
		if (bad_chunk != UINT64_MAX)
			snprintf(why, sizeof(why), "the missing slots hold every copy of chunk %" PRIu64,
				 bad_chunk);
		else
			snprintf(why, sizeof(why), "%u of %u slots missing, it survives %u",
				 missing, raid_disks, uraid_geom_max_failures(&a->geom));
		return fail(err, errlen, -ENODEV, "%s array '%s' cannot start: %s (freshest member "
			    "%s)%s", level_label(fsb->level), fsb->set_name, why, fresh->m->path, out);
	}

	if ((o->flags & URAID_ASSEMBLE_COMPLETE) &&
	    (rc = check_forgotten(fsb, by_slot, c, n, fresh->m->path, err, errlen)))
		return rc;

	/* the write journal: one at most; without it md writes nothing (r5l_log_disk_error) */
	bool journal_ro = false;
	const struct cand *journal = NULL;
	for (unsigned i = 0; i < n; i++) {
		if (c[i].state != URAID_MEMBER_JOURNAL)
			continue;
		if (!(fsb->feature_map & URAID_FEATURE_JOURNAL))
			return fail(err, errlen, -EINVAL, "%s: journal role without the array's "
				    "journal feature (0x200)", c[i].m->path);
		if (journal)
			return fail(err, errlen, -EINVAL, "%s: a second write journal (%s is one); "
				    "md keeps one", c[i].m->path, journal->m->path);
		journal = &c[i];
	}
	if ((fsb->feature_map & URAID_FEATURE_JOURNAL) && !journal &&
	    !(o->flags & URAID_ASSEMBLE_READONLY)) {
		if (!(o->flags & URAID_ASSEMBLE_FORCE))
			return fail(err, errlen, -ENODEV,
				    "%s array '%s' has a write journal (feature 0x200) and none of the "
				    "devices given is it: md does not write to it without the journal; "
				    "give the journal device too, or --force to serve it read-only",
				    level_label(fsb->level), fsb->set_name);
		journal_ro = true;
		ulog(array_log(a), URAID_LOG_WARNING, "%s: write journal missing: served read-only, "
		     "as md does", fsb->set_name);
	}

	/* raid5_run: a dirty array that is also degraded does not start unforced */
	bool parity = lv->info.parity_members > 0;
	unsigned max_degraded = lv->info.parity_members;
	for (unsigned i = 0; i < n; i++)
		if (c[i].pending >= 0 && !(c[i].sb.feature_map & URAID_FEATURE_REPLACEMENT) &&
		    !by_slot[c[i].pending] &&
		    only_parity((unsigned)c[i].pending, fsb->layout, raid_disks, max_degraded))
			dirty_parity++;
	if (parity && fsb->resync_offset != URAID_MAX_SECTOR && missing > dirty_parity) {
		left_out_list(c, n, out, sizeof(out));
		bool ppl = fsb->feature_map & (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS);
		if (ppl)        /* md starts it: the log makes the rows it names whole */
			ulog(array_log(a), URAID_LOG_WARNING, "%s: starting dirty degraded array "
			     "'%s' with PPL", fresh->m->path, fsb->set_name);
		else if (!(o->flags & URAID_ASSEMBLE_FORCE))
			return fail(err, errlen, -EINVAL,
				    "%s: cannot start dirty degraded array '%s' (resync_offset %" PRIu64
				    ", %u of %u slots missing): parity may not match the data; use "
				    "force to start it anyway%s", fresh->m->path, fsb->set_name,
				    fsb->resync_offset, missing, raid_disks, out);
		else
			ulog(array_log(a), URAID_LOG_WARNING, "%s: starting dirty degraded array '%s' - "
			     "data corruption possible", fresh->m->path, fsb->set_name);
	}

	/* the bitmap of the freshest member */
	bool has_bitmap = fsb->feature_map & URAID_FEATURE_BITMAP_OFFSET;
	if (has_bitmap && fresh->bitmap_status)
		return fail(err, errlen, fresh->bitmap_status == -EIO ? -EIO : -EINVAL,
			    "%s: write-intent bitmap: %s", fresh->m->path,
			    fresh->bitmap_reason[0] ? fresh->bitmap_reason : "not readable");

	/* every change md records bumps events: at 2^64-1 none can be */
	if (fsb->events == UINT64_MAX && !(o->flags & URAID_ASSEMBLE_READONLY))
		return fail(err, errlen, -EOVERFLOW,
			    "%s: events %" PRIu64 " is the counter's limit, so no change could be "
			    "recorded; serve it --read-only to copy the data off", fresh->m->path,
			    fsb->events);

	a->sb = *fsb;
	a->minor = fresh->minor;
	a->has_bitmap = has_bitmap;
	if ((rc = check_areas(a, fresh, c, n, err, errlen)))
		return rc;
	for (unsigned s = 0; rs && s < raid_disks; s++)
		if (by_slot[s] && (rc = reshape_check_member(rs, s, by_slot[s]->m, fsb->size, err,
							      errlen)))
			return rc;

	/* ---- fill the array: nothing can fail from here ---- */
	a->flags = o->flags | (journal_ro ? URAID_ASSEMBLE_READONLY : 0);
	memset(&a->bitmap, 0, sizeof(a->bitmap));
	a->bitmap_stale = false;
	if (has_bitmap) {
		uint64_t sync = array_bitmap_sync_sectors(&a->geom);
		a->bitmap = fresh->bitmap;
		/* never trusted to skip a resync: chunks the header does not cover
		   count as dirty (wib_init), and the header is written with the
		   array's range from now on, as md writes it */
		a->bitmap_found_sync = a->bitmap.sync_size;
		if (uraid_bitmap_bits(a->bitmap_found_sync, a->bitmap.chunksize) <
		    uraid_bitmap_bits(sync, a->bitmap.chunksize))
			ulog(array_log(a), URAID_LOG_WARNING, "%s: bitmap sync_size %" PRIu64 " covers less "
				"than the array's %" PRIu64 " sectors: the chunks past it count as "
				"dirty", fresh->m->path, a->bitmap_found_sync, sync);
		a->bitmap.sync_size = sync;
		a->bitmap_stale = a->bitmap.events < fsb->events;
		if (a->bitmap_stale)
			ulog(array_log(a), URAID_LOG_WARNING, "%s: bitmap is out of date (events %" PRIu64
				" < %" PRIu64 "): every bit counts as dirty", fresh->m->path,
				a->bitmap.events, fsb->events);
	}
	a->resync_checkpoint = fsb->resync_offset;
	/* resync_offset on disk is where a resync stands (0 after a crash):
	   not active until a write comes, as md_run leaves it (in_sync) */
	a->in_sync = true;
	a->resync_needed = fsb->resync_offset != URAID_MAX_SECTOR;
	a->last_update_was_dirty = false;
	if (!a->idle_clean_ms)
		a->idle_clean_ms = o->idle_clean_ms ? o->idle_clean_ms : 200;

	unsigned k = 0;
	for (unsigned s = 0; s < raid_disks; s++) {
		a->slot[s].m = NULL;
		a->slot[s].state = URAID_MEMBER_MISSING;
		a->slot[s].dev_number = UINT32_MAX;
		for (uint32_t d = 0; d < fsb->max_dev; d++)
			if (fsb->dev_roles[d] == s) {
				a->slot[s].dev_number = d;
				break;
			}
		struct cand *h = by_slot[s];
		if (!h)
			continue;
		h->m->data_offset = h->sb.data_offset;   /* the data path addresses from here */
		a->slot[s].m = h->m;
		a->slot[s].state = URAID_MEMBER_IN_SYNC;
		a->slot[s].dev_number = h->sb.dev_number;
		a->members[k] = h->m;
		a->member_state[k] = URAID_MEMBER_IN_SYNC;
		a->member_slot[k] = (int)s;
		a->member_pending_slot[k] = -1;
		a->member_sb[k] = h->sb;
		h->m = NULL;    /* owned by the array now */
		k++;
	}
	/* then the journal, spares (and members waiting for a slot), faulty, stale, in the order given */
	static const enum uraid_member_state order[] = {
		URAID_MEMBER_JOURNAL, URAID_MEMBER_SPARE, URAID_MEMBER_FAULTY, URAID_MEMBER_STALE };
	for (unsigned pass = 0; pass < 4; pass++) {
		for (unsigned i = 0; i < n; i++) {
			if (!c[i].m || c[i].state != order[pass])
				continue;
			if (c[i].note[0])
				ulog(array_log(a), URAID_LOG_WARNING, "%s: %s", c[i].m->path, c[i].note);
			c[i].m->data_offset = c[i].sb.data_offset;
			a->members[k] = c[i].m;
			a->member_state[k] = c[i].state;
			a->member_slot[k] = -1;
			a->member_pending_slot[k] = c[i].pending;
			a->member_sb[k] = c[i].sb;
			c[i].m = NULL;
			k++;
		}
	}
	a->nmembers = k;
	if (rs) {
		/* the members' data areas cover both geometries' */
		reshape_set_member_areas(a, rs);
		a->reshape = rs;
	}
	/* md's count: a slot the reshape fills is missing until its end */
	meta_recount_degraded(a);
	if (rs) {
		ulog(array_log(a), URAID_LOG_INFO, "'%s' is in mid-reshape at array sector %" PRIu64
		     " of %" PRIu64 ": it goes on", fsb->set_name, rs->position, rs->end);
	}
	return 0;
}

int assemble_members(struct array *a, const struct uraid_assemble_opts *o, char *err,
		     size_t errlen)
{
	struct cand *c;
	int rc = 0;

	if (!o || !o->paths || o->npaths == 0)
		return fail(err, errlen, -EINVAL, "no members given");
	if (o->npaths > URAID_MAX_MEMBERS)
		return fail(err, errlen, -EINVAL, "%u members given, uraid runs at most %u",
			    o->npaths, URAID_MAX_MEMBERS);
	c = calloc(o->npaths, sizeof(*c));
	if (!c)
		return fail(err, errlen, -ENOMEM, "out of memory");

	unsigned n = 0;
	for (; n < o->npaths; n++) {
		const char *path = o->paths[n];
		if (!path || !*path) {
			rc = fail(err, errlen, -EINVAL, "member %u: empty path", n + 1);
			break;
		}
		struct uraid_array *lower = o->stacked ? o->stacked[n] : NULL;
		for (unsigned j = 0; lower && j < n && !rc; j++)
			if (o->stacked[j] == lower)
				rc = fail(err, errlen, -EINVAL, "%s: given twice (also as %s)", path,
					  c[j].m->path);
		if (rc)
			break;
		/* before it is opened: its lock would refuse the second open first */
		struct stat st;
		if (!lower && stat(path, &st) == 0) {
			for (unsigned j = 0; j < n && !rc; j++)
				if (uraid_same_file(&c[j].st, &st))
					rc = fail(err, errlen, -EINVAL, "%s: given twice (also as %s)",
						  path, c[j].m->path);
			if (rc)
				break;
		}
		rc = read_member(a, &c[n], path, o->flags, lower, err, errlen);
		if (rc) {
			n++;    /* close what was opened */
			break;
		}
	}
	/* stacked members carry the I/O of member_submit and the member_*_sync
	   calls only; PPL, journals, bitmaps and reshapes of other levels use
	   member descriptors directly: a RAID 0 (RAID 50/60) is what is run */
	if (!rc && o->stacked && n && c[0].sb.level != URAID_LEVEL_0)
		rc = fail(err, errlen, -EINVAL, "%s: the array on the inner arrays is %s; uraid "
			  "runs nested arrays whose outer array is a RAID 0 (RAID 50/60)",
			  o->paths[0], uraid_level_name(c[0].sb.level) ? uraid_level_name(c[0].sb.level)
			  : "of an unknown level");
	if (!rc)
		rc = build(a, o, c, n, err, errlen);
	cands_close(c, n);      /* members the array took are NULL here */
	free(c);
	return rc;
}
