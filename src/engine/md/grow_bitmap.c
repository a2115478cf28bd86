// SPDX-License-Identifier: MIT
/*
 * uraid grow --bitmap=internal|none on a running array (mdadm's
 * Grow_addbitmap, md's bitmap_store of "internal"/"none"): the internal
 * write-intent bitmap written between the superblock and the data (1.1 and
 * 1.2) or between the data and the superblock (1.0), or dropped. Frozen and under meta_lock (grow.c): no write is in
 * flight, so no bit is needed for one.
 *
 * md's facts kept: the bitmap of a grown array starts at superblock + 8
 * sectors (1.0: it ends right below the bad-block log under the
 * superblock, in whole 4 KiB pages, as mdadm's add_internal_bitmap1
 * places it on a running array), its chunk is mdadm's default for the room there, its events and
 * events_cleared are the array's, its bits clear (nothing written is
 * unsynced: no write in flight); removing it clears feature bit 0x1 and
 * leaves bitmap_offset as it was (md's super_1_sync sets the field only
 * while a bitmap is there).
 *
 * The run-time bits (md/wib.c) are set up with wib_init; the ones of a
 * bitmap removed or resized are detached and kept until close in
 * a->wib_retired (the bitmap daemon on the tick reads a->wib without
 * meta_lock and may hold them a moment longer; wib_sweep looks again under
 * the lock). A freeze does not stop the tick, so none is ever freed while
 * the array is open.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "engine/core/array.h"
#include "engine/md/grow_bitmap.h"
#include "engine/md/member_state.h"

/* Metadata 1.0 (mdadm's add_internal_bitmap1 on a running array): the
 * sectors between the end of the data and the superblock, and the part of
 * them mdadm leaves to the bad-block log below the superblock (at least 8,
 * more when the log says so). */
static uint64_t room_below_sb(const struct uraid_sb *sb)
{
	uint64_t end = sb->data_offset + sb->data_size;
	return sb->super_offset > end ? sb->super_offset - end : 0;
}

static uint64_t bblog_below_sb(const struct uraid_sb *sb)
{
	uint64_t bbl = sb->bblog_size < 8 ? 8 : sb->bblog_size;
	if (sb->bblog_offset < 0 && (uint64_t)-(int64_t)sb->bblog_offset > bbl)
		bbl = (uint64_t)-(int64_t)sb->bblog_offset;
	return bbl;
}

/* The room for a bitmap on member i (sectors): 1.1 and 1.2 at superblock
 * + 8, up to the bad-block log or the data; 1.0 below the superblock and
 * its bad-block log, down to the end of the data. */
static uint64_t room_on(const struct array *a, unsigned i)
{
	const struct uraid_sb *sb = &a->member_sb[i];
	uint64_t end = sb->data_offset;

	if (a->minor == 0) {
		uint64_t room = room_below_sb(sb), bbl = bblog_below_sb(sb);
		return room > bbl ? room - bbl : 0;
	}
	if (sb->data_offset <= sb->super_offset + 8)
		return 0;
	if (sb->bblog_size && sb->bblog_offset > 8 &&
	    sb->super_offset + (uint64_t)sb->bblog_offset < end)
		end = sb->super_offset + (uint64_t)sb->bblog_offset;
	return end - sb->super_offset - 8;
}

/* a->wib detached, onto the retired list (never freed before close). */
static void retire(struct array *a)
{
	struct wib *w = a->wib;

	if (!w)
		return;
	w->retired_next = a->wib_retired;
	a->wib_retired = w;
	a->wib = NULL;
}

static bool attached(const struct array *a, unsigned i)
{
	return a->members[i] && a->members[i]->fd >= 0 &&
	       a->member_state[i] != URAID_MEMBER_STALE &&
	       a->member_state[i] != URAID_MEMBER_FAULTY;
}

uint64_t grow_bitmap_room(const struct array *a)
{
	uint64_t room = UINT64_MAX;

	for (unsigned i = 0; i < a->nmembers; i++)
		if (attached(a, i) && room_on(a, i) < room)
			room = room_on(a, i);
	return room == UINT64_MAX ? 0 : room;
}

int grow_walls(struct array *a, char *err, size_t errlen)
{
	for (unsigned i = 0; i < a->nmembers; i++) {
		if (!attached(a, i))
			continue;
		int rc = array_member_areas(a, a->members[i], &a->member_sb[i],
					    a->member_slot[i] >= 0, err, errlen);
		if (rc)
			return rc;
	}
	return 0;
}

static int add_bitmap(struct array *a, char *err, size_t errlen)
{
	uint64_t sync = array_bitmap_sync_sectors(&a->geom);
	uint64_t room = grow_bitmap_room(a);
	uint32_t chunk = uraid_bitmap_default_chunk(sync, room);

	if (!chunk || !uraid_bitmap_min_chunk(sync, room))
		return uraid_errf(err, errlen, -ENOSPC, "no room for an internal bitmap between "
				  "the superblock and the data (%" PRIu64 " KiB)", room / 2);
	uint64_t sectors = uraid_bitmap_disk_sectors(sync, chunk);
	if (sectors > room)
		return uraid_errf(err, errlen, -ENOSPC, "a bitmap of %" PRIu64 " KiB does not fit "
				  "in the %" PRIu64 " KiB of room next to the superblock", sectors / 2,
				  room / 2);
	/* where it goes, relative to each superblock: 1.1 and 1.2 at + 8;
	   1.0 (mdadm's "movable offset") whole 4 KiB pages ending right below
	   the bad-block log, the same offset on every member */
	int64_t off = 8;
	if (a->minor == 0) {
		uint64_t bbl = 0;
		for (unsigned i = 0; i < a->nmembers; i++)
			if (attached(a, i) && bblog_below_sb(&a->member_sb[i]) > bbl)
				bbl = bblog_below_sb(&a->member_sb[i]);
		off = -(int64_t)(sectors + bbl);
		for (unsigned i = 0; i < a->nmembers; i++)
			if (attached(a, i) && room_below_sb(&a->member_sb[i]) < sectors + bbl)
				return uraid_errf(err, errlen, -ENOSPC, "%s: a bitmap of %" PRIu64
						  " KiB and the bad-block log (%" PRIu64 " KiB) do not "
						  "fit in the %" PRIu64 " KiB between its data and its "
						  "superblock", a->members[i]->path, sectors / 2, bbl / 2,
						  room_below_sb(&a->member_sb[i]) / 2);
	}
	/* the space the bitmap may take: 1.1/1.2 up to the next area; 1.0
	   its own pages (md's limit for 1.0 is the superblock, which would
	   take the bad-block log in; see resized_chunk) */
	struct uraid_bitmap_sb bm = {
		.magic = URAID_BITMAP_MAGIC, .version = URAID_BITMAP_VERSION,
		.events = a->sb.events, .events_cleared = a->sb.events, .sync_size = sync,
		.chunksize = chunk, .daemon_sleep = 5,
		.sectors_reserved = (uint32_t)(a->minor == 0 ? sectors : room),
	};
	memcpy(bm.uuid, a->sb.set_uuid, 16);
	uint8_t *area = NULL;
	if (posix_memalign((void **)&area, 4096, sectors * 512))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	memset(area, 0, sectors * 512);
	uraid_bitmap_encode(&bm, area);
	/* the walls let the bitmap's pages through, then the header and clear
	   bits are written, then the superblocks point at them */
	struct uraid_sb old_sb = a->sb;
	a->bitmap = bm;
	a->bitmap_sectors = sectors;
	a->bitmap_found_sync = sync;
	a->bitmap_stale = false;
	a->has_bitmap = true;
	a->sb.feature_map |= URAID_FEATURE_BITMAP_OFFSET;
	a->sb.bitmap_offset = (int32_t)off;
	int rc = grow_walls(a, err, errlen);
	for (unsigned i = 0; !rc && i < a->nmembers; i++) {
		if (!attached(a, i))
			continue;
		rc = member_pwrite_sync(a->members[i], area, sectors * 512,
					(uint64_t)((int64_t)a->member_sb[i].super_offset + off));
		if (rc)
			uraid_errf(err, errlen, rc, "%s: cannot write the bitmap: %s",
				   a->members[i]->path, strerror(-rc));
	}
	free(area);
	if (!rc)
		rc = wib_init(a, err, errlen);
	if (rc) {
		wib_free(a);
		a->has_bitmap = false;
		a->sb = old_sb;
		a->bitmap_sectors = 0;
		grow_walls(a, NULL, 0);
		return rc;
	}
	return meta_record_change(a);
}

static int remove_bitmap(struct array *a, char *err, size_t errlen)
{
	/* detached, not freed: the tick may still hold it (see above) */
	retire(a);
	a->has_bitmap = false;
	a->sb.feature_map &= ~URAID_FEATURE_BITMAP_OFFSET;
	a->bitmap_sectors = 0;
	int rc = grow_walls(a, err, errlen);
	if (rc)
		return rc;
	return meta_record_change(a);
}

int grow_bitmap_apply(struct array *a, bool add, char *err, size_t errlen)
{
	return add ? add_bitmap(a, err, errlen) : remove_bitmap(a, err, errlen);
}

/*
 * md_bitmap_resize's chunk for a new sync range: the chunk in use, doubled
 * until header and bits fit in the bitmap's space. md's space (measured in
 * the referee guest): the header's sectors_reserved when set (uraid and
 * the kernel write it; a 1.0 bitmap also no further than the superblock),
 * else the sectors the bits in use fill, so that a bitmap mdadm made
 * (sectors_reserved 0) never grows on disk: RAID 1 of 4 MiB, 4 KiB chunks,
 * grown to 39936 KiB keeps 4 KiB with 8 sectors reserved, takes 32 KiB
 * with none. 0 when even the largest chunk md takes (2^30 bytes) does not
 * fit.
 */
static uint32_t resized_chunk(const struct array *a, uint64_t new_sync, uint64_t *space)
{
	uint64_t bits_now = uraid_bitmap_bits(a->bitmap.sync_size, a->bitmap.chunksize);
	uint64_t reserved = a->bitmap.sectors_reserved;
	int32_t off = a->sb.bitmap_offset;

	/* md_bitmap_read_sb: the space known (1.0's, to the superblock) is
	   lowered to sectors_reserved, an unknown one (1.1, 1.2) set to it */
	*space = reserved;
	if (a->minor == 0) {
		uint64_t lim = off > 0 ? (uint64_t)(off < 8 ? 8 - off : 0) : (uint64_t)(-(int64_t)off);
		*space = lim > reserved ? reserved : lim;
	}
	if (!*space)
		*space = (URAID_BITMAP_HEADER_BYTES + (bits_now + 7) / 8 + 511) / 512;
	for (uint64_t chunk = a->bitmap.chunksize; chunk <= (1u << 30); chunk *= 2)
		if (uraid_bitmap_bytes(new_sync, (uint32_t)chunk) <= *space * 512)
			return (uint32_t)chunk;
	return 0;
}

/* Sectors a bitmap can take on every member where it is: up to the next
 * metadata area or the data (1.1, 1.2 at +8; 1.0 before the superblock, up
 * to the bad-block log mdadm puts there), at least what it takes now. */
static uint64_t bitmap_room(const struct array *a)
{
	uint64_t room = a->bitmap_sectors;
	int32_t off = a->sb.bitmap_offset, bb = a->sb.bblog_offset;

	if (a->minor != 0 && off == 8) {
		uint64_t r = grow_bitmap_room(a);
		room = r > room ? r : room;
	} else if (a->minor == 0 && off < 0) {
		uint64_t r = a->sb.bblog_size && bb > off && bb <= 0 ? (uint64_t)(bb - off)
								      : (uint64_t)(-(int64_t)off);
		room = r > room ? r : room;
	}
	return room;
}

/* Write area (sectors) at the bitmap's place on every member that carries
 * the bitmap (in a slot: a spare keeps the copy it got when added, as the
 * bitmap's own updates in wib.c and meta.c leave it). */
static int write_area(struct array *a, const uint8_t *area, uint64_t sectors, char *err,
		      size_t errlen)
{
	for (unsigned i = 0; i < a->nmembers; i++) {
		if (!meta_bitmap_target(a, i))
			continue;
		int64_t at = (int64_t)a->member_sb[i].super_offset + a->sb.bitmap_offset;
		int rc = at < 0 ? -EINVAL
				: member_pwrite_sync(a->members[i], area, sectors * 512, (uint64_t)at);
		if (rc)
			return uraid_errf(err, errlen, rc, "%s: cannot write the resized bitmap: %s",
					  a->members[i]->path, strerror(-rc));
	}
	return 0;
}

int grow_bitmap_resize(struct array *a, uint64_t new_sync, struct grow_bitmap_undo *undo,
		       char *err, size_t errlen)
{
	memset(undo, 0, sizeof(*undo));
	if (!a->has_bitmap)
		return 0;
	if (a->bitmap_stale)
		return uraid_errf(err, errlen, -EBUSY, "the bitmap is out of date (every bit counts "
				  "as dirty): let the resync finish, then grow the size");
	/* wib_init loads no bits on a read-only array, a level without
	   redundancy or one with no member in sync */
	if (!a->wib)
		return uraid_errf(err, errlen, -EBUSY, "the bitmap's bits are not loaded (the array "
				  "is read-only or has no member in sync): the bitmap cannot be "
				  "resized; --bitmap=none first, or serve it writable and whole");
	uint64_t space;
	uint32_t chunk = resized_chunk(a, new_sync, &space);
	if (!chunk)
		return uraid_errf(err, errlen, -ENOSPC, "a bitmap for %" PRIu64 " KiB does not fit "
				  "in its %" PRIu64 " sectors with any chunk md takes: --bitmap=none "
				  "first", new_sync / 2, space);
	uint64_t nbits = uraid_bitmap_bits(new_sync, chunk);
	if (nbits > (1ull << 25))
		return uraid_errf(err, errlen, -EINVAL, "the resized bitmap would have %" PRIu64
				  " bits, more than uraid keeps: --bitmap=none first", nbits);
	uint64_t sectors = uraid_bitmap_disk_sectors(new_sync, chunk);
	/* uraid writes whole 4 KiB pages: they must fit the room there (a
	   sectors_reserved read from disk is no proof of it) */
	uint64_t room = bitmap_room(a);
	if (sectors > room)
		return uraid_errf(err, errlen, -ENOSPC, "the resized bitmap's %" PRIu64 " sectors "
				  "do not fit the %" PRIu64 " sectors of room it has: --bitmap=none "
				  "first", sectors, room);
	uint8_t *area = NULL;
	if (posix_memalign((void **)&area, 4096, sectors * 512))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	memset(area, 0, sectors * 512);
	struct uraid_bitmap_sb bm = a->bitmap;
	bm.sync_size = new_sync;
	bm.chunksize = chunk;
	bm.sectors_reserved = (uint32_t)space;
	uraid_bitmap_encode(&bm, area);
	/* each bit set now sets the new chunks it overlaps (md copies the
	   counters block by block) */
	const struct wib *w = a->wib;
	uint64_t oc = w->chunk_sectors, nc = chunk / 512;
	for (uint64_t c = 0; c < w->nbits; c++) {
		if (!uraid_bitmap_test(w->area, c))
			continue;
		uint64_t lo = c * oc, hi = (c + 1) * oc;
		for (uint64_t b = lo / nc; b * nc < hi && b < nbits; b++)
			uraid_bitmap_set(area, b);
	}
	/* the grown range was never written through the array: every chunk of
	   it is set, on disk too (md_bitmap_resize gives new space NEEDED and
	   a count), so that the resync from the old end visits it, a resync
	   stopped early goes on over it (md's too), and a member added back
	   while degraded gets it copied */
	uint64_t grown = w->sync_size < new_sync ? w->sync_size : new_sync;
	for (uint64_t b = grown / nc; b < nbits && grown < new_sync; b++)
		uraid_bitmap_set(area, b);
	/* the old one kept to be written back if the superblocks refuse */
	undo->bitmap = a->bitmap;
	undo->sectors = a->bitmap_sectors;
	undo->found_sync = a->bitmap_found_sync;
	undo->area_sectors = w->area_bytes / 512;
	if (posix_memalign((void **)&undo->area, 4096, w->area_bytes)) {
		free(area);
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	}
	memcpy(undo->area, w->area, w->area_bytes);
	/* the header as it is now: the area's copy is re-encoded only when its
	   page is flushed, so its events may be older than the members' */
	uraid_bitmap_encode(&a->bitmap, undo->area);
	/* more pages than before: the walls let them through first */
	int rc = 0;
	if (sectors > a->bitmap_sectors) {
		a->bitmap_sectors = sectors;
		if ((rc = grow_walls(a, err, errlen))) {
			a->bitmap_sectors = undo->sectors;
			grow_walls(a, NULL, 0);
			free(area);
			grow_bitmap_undo_done(undo);
			return rc;
		}
	}
	rc = write_area(a, area, sectors, err, errlen);
	free(area);
	if (rc) {
		/* some members may hold the new one: the old one back on all */
		char why[200];
		if (write_area(a, undo->area, undo->area_sectors, why, sizeof(why)))
			ulog(array_log(a), URAID_LOG_ERR, "bitmap resize: the old bitmap could not "
			     "be written back: %s", why);
		a->bitmap_sectors = undo->sectors;
		grow_walls(a, NULL, 0);
		grow_bitmap_undo_done(undo);
		return rc;
	}
	{
		/* the run-time bits anew from what the members now hold; the old
		   ones retired, not freed (the tick may hold them, see above) */
		retire(a);
		a->bitmap = bm;
		a->bitmap_sectors = sectors;
		a->bitmap_found_sync = new_sync;
		rc = wib_init(a, err, errlen);
		/* the grown range's bits need the resync that apply_size asks for
		   next (wib_init marks only the set bits of a dirty array) */
		if (!rc && grown < new_sync)
			wib_mark_needed(a, grown, new_sync);
		if (!rc)
			ulog(array_log(a), URAID_LOG_INFO, "bitmap resized: %" PRIu64 " KiB in chunks "
			     "of %u KiB (%u KiB before)", new_sync / 2, chunk / 1024,
			     undo->bitmap.chunksize / 1024);
	}
	if (rc)
		grow_bitmap_undo(a, undo);
	return rc;
}

void grow_bitmap_undo(struct array *a, struct grow_bitmap_undo *undo)
{
	char why[200];

	if (!undo->area)
		return;
	/* the old header with the events of now (apply_size has put the
	   superblock back; meta.c's header writes may have gone on meanwhile):
	   older events would make the next assembly resync everything */
	a->bitmap = undo->bitmap;
	if (a->bitmap.events < a->sb.events)
		a->bitmap.events = a->sb.events;
	uraid_bitmap_encode(&a->bitmap, undo->area);
	if (write_area(a, undo->area, undo->area_sectors, why, sizeof(why)))
		ulog(array_log(a), URAID_LOG_ERR, "bitmap resize undone in memory only: %s", why);
	/* the new bits retired too (the tick may hold them); the old ones,
	   retired last by the resize, back in use */
	struct wib *old = a->wib_retired;
	retire(a);
	a->bitmap_sectors = undo->sectors;
	a->bitmap_found_sync = undo->found_sync;
	grow_walls(a, NULL, 0);
	if (old) {
		struct wib **p = &a->wib_retired;
		while (*p && *p != old)
			p = &(*p)->retired_next;
		if (*p)
			*p = old->retired_next;
		old->retired_next = NULL;
	}
	a->wib = old;
	grow_bitmap_undo_done(undo);
}

void grow_bitmap_undo_done(struct grow_bitmap_undo *undo)
{
	free(undo->area);
	undo->area = NULL;
}

void grow_bitmap_free(struct array *a)
{
	struct wib *keep = a->wib;

	while (a->wib_retired) {
		a->wib = a->wib_retired;
		a->wib_retired = a->wib->retired_next;
		wib_free(a);
	}
	a->wib = keep;
}
