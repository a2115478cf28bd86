/* SPDX-License-Identifier: MIT */
/*
 * Assembly (src/engine/md/assemble.c) and superblock state changes
 * (src/engine/md/meta.c) on member images that uraid_create makes under /tmp:
 * geometry, slots and states; every refusal, each naming the member; events,
 * resync_offset and dev_roles after clean/active/failure, read back by
 * decoding the members and by Debian's `mdadm --examine` when installed.
 * No engine is needed: the array is filled by assemble_members alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/create.h>
#include "engine/core/array.h"
#include "engine/md/member_state.h"
#include "../support/check.h"
#include "../support/run_cmd.h"

#define IMG_SECTORS (32ull * 2048)   /* 32 MiB sparse files */
#define MAXP 8

static char dir[64];
static const char *mdadm;
static uint8_t next_uuid = 1;

struct set {
	char path[MAXP][128];
	const char *p[MAXP];
	unsigned n;
};

static int make_image(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	int rc = 0;
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)(IMG_SECTORS * 512)))
		rc = -errno;
	close(fd);
	return rc;
}

/* Create an array of raid_disks + spares members named <name>-<i>.img. */
static void mkarray(struct set *s, const char *name, int level, unsigned raid_disks,
		    unsigned spares, unsigned minor, bool bitmap, const char *layout)
{
	struct uraid_create_opts o = { 0 };
	struct uraid_create_result r;
	uint8_t uuid[16];
	char err[300];

	memset(uuid, next_uuid++, sizeof(uuid));
	s->n = raid_disks + spares;
	for (unsigned i = 0; i < s->n; i++) {
		snprintf(s->path[i], sizeof(s->path[i]), "%s/%s-%u.img", dir, name, i);
		s->p[i] = s->path[i];
		CHECK(make_image(s->path[i]) == 0, "image %s", s->path[i]);
	}
	o.level = level;
	o.raid_disks = raid_disks;
	o.spare_devices = spares;
	o.chunk_kib = level == URAID_LEVEL_1 ? 0 : 64;
	o.minor = minor;
	o.bitmap = bitmap ? URAID_BITMAP_INTERNAL : URAID_BITMAP_NONE;
	o.name = name;
	o.homehost = "";
	o.flags = URAID_CREATE_FORCE;
	o.paths = s->p;
	o.npaths = s->n;
	o.uuid = uuid;
	o.ctime = 1700000000;
	if (layout) {
		o.layout_given = true;
		CHECK(uraid_layout_parse(level, layout, &o.layout) == 0, "layout %s", layout);
	}
	int rc = uraid_create(&o, &r, err, sizeof(err));
	CHECK(rc == 0, "create %s: %s", name, err);
}

/* The superblock mdadm would pick; 0, or -EINVAL if it is invalid (still decoded
   when raw is set, so that a test can undo its own damage). */
static int read_sb_raw(const char *path, struct uraid_sb *sb, bool raw)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	int fd = open(path, O_RDONLY), rc = -EINVAL;
	if (fd >= 0 && uraid_probe_fd(fd, p) == 0 && p->chosen >= 0) {
		*sb = p->loc[p->chosen].sb;
		rc = raw ? 0 : p->loc[p->chosen].status;
	}
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

static int read_sb(const char *path, struct uraid_sb *sb)
{
	return read_sb_raw(path, sb, false);
}

static void write_sb(const char *path, struct uraid_sb *sb)
{
	alignas(4096) uint8_t buf[URAID_SB_BYTES];
	int fd = open(path, O_WRONLY);
	uraid_sb_encode(sb, buf);
	CHECK(fd >= 0 && pwrite(fd, buf, sizeof(buf), (off_t)(sb->super_offset * 512)) ==
			(ssize_t)sizeof(buf), "write sb %s", path);
	if (fd >= 0)
		close(fd);
}

static int read_bitmap(const char *path, struct uraid_bitmap_sb *bm)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	int fd = open(path, O_RDONLY), rc = -EINVAL;
	if (fd >= 0 && uraid_probe_fd(fd, p) == 0 && p->has_bitmap) {
		*bm = p->bitmap;
		rc = p->bitmap_status;
	}
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

/* Set the bitmap header's events (and events_cleared) of a member. */
static void set_bitmap_events(const char *path, uint64_t ev)
{
	alignas(4096) uint8_t buf[4096];
	struct uraid_sb sb;
	struct uraid_bitmap_sb bm;
	int fd = open(path, O_RDWR);

	CHECK(fd >= 0 && read_sb(path, &sb) == 0, "bitmap of %s", path);
	off_t at = (off_t)((int64_t)sb.super_offset + sb.bitmap_offset) * 512;
	CHECK(pread(fd, buf, sizeof(buf), at) == (ssize_t)sizeof(buf), "read bitmap");
	CHECK(uraid_bitmap_decode(buf, &bm) == 0, "decode bitmap");
	bm.events = bm.events_cleared = ev;
	uraid_bitmap_encode(&bm, buf);
	CHECK(pwrite(fd, buf, sizeof(buf), at) == (ssize_t)sizeof(buf), "write bitmap");
	close(fd);
}

/* Decode, change, encode, write back. */
#define EDIT(path, stmt) do {                                         \
	struct uraid_sb sb_;                                          \
	CHECK(read_sb_raw(path, &sb_, true) == 0, "read %s", path);   \
	{ struct uraid_sb *sb = &sb_; stmt; }                         \
	write_sb(path, &sb_);                                         \
} while (0)

static struct array *new_array(void)
{
	struct array *a = calloc(1, sizeof(*a));
	pthread_mutex_init(&a->meta_lock, NULL);
	return a;
}

static void free_array(struct array *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < a->nmembers; i++) {
		if (a->members[i]) {
			member_close(a->members[i]);
			free(a->members[i]);
		}
	}
	pthread_mutex_destroy(&a->meta_lock);
	free(a);
}

static char err[1024];

static struct array *assemble(const char *const *paths, unsigned n, uint32_t flags, int *rcp)
{
	struct uraid_assemble_opts o = { .paths = paths, .npaths = n, .flags = flags };
	struct array *a = new_array();
	err[0] = 0;
	int rc = assemble_members(a, &o, err, sizeof(err));
	if (rcp)
		*rcp = rc;
	if (rc) {
		CHECK(a->nmembers == 0, "members left after a refusal");
		free_array(a);
		return NULL;
	}
	return a;
}

/* Refused, with the message naming `who` (and containing `what`). */
static void refused(const char *label, const char *const *paths, unsigned n, uint32_t flags,
		    const char *who, const char *what)
{
	int rc;
	struct array *a = assemble(paths, n, flags, &rc);
	CHECK(a == NULL && rc < 0, "%s: assembled, should be refused", label);
	free_array(a);
	CHECK(strchr(err, '\n') == NULL, "%s: more than one line: %s", label, err);
	if (who)
		CHECK(strstr(err, who) != NULL, "%s: message does not name %s: %s", label, who, err);
	if (what)
		CHECK(strstr(err, what) != NULL, "%s: message lacks \"%s\": %s", label, what, err);
	printf("refused (%s): %s\n", label, err);
}

/* mdadm --examine agrees: checksum correct, state, events. */
static void examine(const char *path, const char *state, uint64_t events)
{
	char cmd[300], want[100];
	if (!mdadm)
		return;
	snprintf(cmd, sizeof(cmd), "%s --examine %s 2>&1", mdadm, path);
	char *out = test_run_cmd(cmd);
	char *ck = strstr(out, "Checksum : ");
	CHECK(ck && strstr(ck, " - correct") && strstr(ck, " - correct") < strchr(ck, '\n'),
	      "%s: mdadm checksum not correct:\n%s", path, out);
	snprintf(want, sizeof(want), "State : %s\n", state);
	CHECK(strstr(out, want), "%s: mdadm lacks \"%s\":\n%s", path, want, out);
	snprintf(want, sizeof(want), "Events : %" PRIu64 "\n", events);
	CHECK(strstr(out, want), "%s: mdadm lacks \"%s\":\n%s", path, want, out);
	free(out);
}

/* ---- assembly ---- */

static void test_healthy(void)
{
	struct set s;
	mkarray(&s, "r5", URAID_LEVEL_5, 4, 0, 2, true, NULL);
	/* given in another order: slots still follow the roles */
	const char *order[4] = { s.p[2], s.p[0], s.p[3], s.p[1] };
	int rc;
	struct array *a = assemble(order, 4, 0, &rc);
	CHECK(a, "raid5 assemble: %s", err);
	if (!a)
		return;
	CHECK(a->geom.level == 5 && a->geom.raid_disks == 4 && a->geom.chunk_sectors == 128,
	      "geometry %d %u %u", a->geom.level, a->geom.raid_disks, a->geom.chunk_sectors);
	CHECK(a->geom.array_sectors == 3 * a->sb.size, "array size %" PRIu64,
	      a->geom.array_sectors);
	CHECK(a->nmembers == 4 && atomic_load(&a->degraded) == 0, "nmembers %u", a->nmembers);
	for (unsigned i = 0; i < 4; i++) {
		CHECK(a->slot[i].state == URAID_MEMBER_IN_SYNC && a->slot[i].m, "slot %u", i);
		CHECK(a->slot[i].m && strcmp(a->slot[i].m->path, s.p[i]) == 0, "slot %u is %s", i,
		      a->slot[i].m ? a->slot[i].m->path : "-");
		CHECK(a->members[i] == a->slot[i].m && a->member_slot[i] == (int)i,
		      "members[] in slot order");
		CHECK(a->member_sb[i].dev_number == i, "member_sb %u", i);
	}
	CHECK(a->in_sync && !a->resync_needed, "clean");
	CHECK(a->has_bitmap && a->bitmap.magic == URAID_BITMAP_MAGIC && !a->bitmap_stale, "bitmap");
	CHECK(a->minor == 2, "minor %u", a->minor);
	CHECK(array_level_survives(a), "survives");
	free_array(a);

	/* readonly and buffered open too */
	a = assemble(s.p, 4, URAID_ASSEMBLE_READONLY | URAID_ASSEMBLE_BUFFERED, &rc);
	CHECK(a && !a->members[0]->direct, "readonly buffered: %s", err);
	if (a) {
		pthread_mutex_lock(&a->meta_lock);
		CHECK(meta_mark_active(a) == -EROFS, "readonly mark_active");
		pthread_mutex_unlock(&a->meta_lock);
	}
	free_array(a);

	/* other levels and metadata versions */
	static const struct { const char *name; int level; unsigned n; unsigned minor;
			      const char *layout; uint64_t mult; } lv[] = {
		{ "lin", URAID_LEVEL_LINEAR, 3, 2, NULL, 0 },
		{ "r0", URAID_LEVEL_0, 3, 1, NULL, 0 },
		{ "r1", URAID_LEVEL_1, 3, 0, NULL, 1 },
		{ "r6", URAID_LEVEL_6, 5, 2, "ddf-N-continue", 3 },
		{ "r10", URAID_LEVEL_10, 4, 2, "f2", 2 },
		{ "r4", URAID_LEVEL_4, 3, 0, NULL, 2 },
	};
	for (unsigned k = 0; k < sizeof(lv) / sizeof(lv[0]); k++) {
		struct set t;
		mkarray(&t, lv[k].name, lv[k].level, lv[k].n, 0, lv[k].minor, false, lv[k].layout);
		a = assemble(t.p, t.n, 0, &rc);
		CHECK(a, "%s: %s", lv[k].name, err);
		if (!a)
			continue;
		CHECK(a->geom.level == lv[k].level && a->nmembers == lv[k].n &&
		      a->minor == lv[k].minor, "%s geometry", lv[k].name);
		if (lv[k].mult)
			CHECK(a->geom.array_sectors == lv[k].mult * a->sb.size, "%s size", lv[k].name);
		else
			CHECK(a->geom.array_sectors > 0, "%s size", lv[k].name);
		free_array(a);
	}
}

static void test_spares_and_roles(void)
{
	struct set s;
	int rc;

	mkarray(&s, "r1s", URAID_LEVEL_1, 2, 1, 2, false, NULL);
	struct array *a = assemble(s.p, 3, 0, &rc);
	CHECK(a && a->nmembers == 3 && a->member_state[2] == URAID_MEMBER_SPARE &&
	      a->member_slot[2] == -1 && a->member_pending_slot[2] == -1, "spare: %s", err);
	free_array(a);

	/* partly recovered member: a spare with a note, its slot missing */
	EDIT(s.p[1], sb->feature_map |= URAID_FEATURE_RECOVERY_OFFSET; sb->recovery_offset = 2048);
	a = assemble(s.p, 3, 0, &rc);
	CHECK(a, "recovering: %s", err);
	if (a) {
		CHECK(a->slot[1].state == URAID_MEMBER_MISSING && atomic_load(&a->degraded) == 1,
		      "recovering slot counts missing");
		int i = 1;   /* slot member first, then the others in given order */
		CHECK(a->member_state[i] == URAID_MEMBER_SPARE && a->member_pending_slot[i] == 1 &&
		      strcmp(a->members[i]->path, s.p[1]) == 0, "recovering is a pending spare");
		/* written back as md does: its slot in dev_roles, 0x2 and recovery_offset kept */
		pthread_mutex_lock(&a->meta_lock);
		CHECK(meta_mark_active(a) == 0, "mark_active with a recovering member");
		pthread_mutex_unlock(&a->meta_lock);
		struct uraid_sb sb;
		read_sb(s.p[1], &sb);
		CHECK((sb.feature_map & URAID_FEATURE_RECOVERY_OFFSET) && sb.recovery_offset == 2048 &&
		      sb.dev_roles[1] == 1 && sb.dev_roles[2] == URAID_ROLE_SPARE,
		      "recovering member written: features 0x%x offset %" PRIu64 " role 0x%x",
		      sb.feature_map, sb.recovery_offset, sb.dev_roles[1]);
		read_sb(s.p[0], &sb);
		CHECK(!(sb.feature_map & URAID_FEATURE_RECOVERY_OFFSET) && sb.dev_roles[1] == 1,
		      "in-sync member: no 0x2");
		pthread_mutex_lock(&a->meta_lock);
		CHECK(meta_mark_clean(a) == 0, "mark_clean");
		pthread_mutex_unlock(&a->meta_lock);
		free_array(a);
	}
	EDIT(s.p[1], sb->feature_map &= ~URAID_FEATURE_RECOVERY_OFFSET; sb->recovery_offset = 0);

	/* a replacement for slot 1 (dev 2 claims role 1 too): the original keeps the slot */
	for (unsigned i = 0; i < 3; i++)
		EDIT(s.p[i], sb->dev_roles[2] = 1;
		     if (i == 2) sb->feature_map |= URAID_FEATURE_REPLACEMENT |
						   URAID_FEATURE_RECOVERY_OFFSET);
	a = assemble(s.p, 3, 0, &rc);
	CHECK(a, "replacement: %s", err);
	if (a) {
		CHECK(a->slot[1].m && strcmp(a->slot[1].m->path, s.p[1]) == 0,
		      "original keeps slot 1");
		CHECK(a->member_state[2] == URAID_MEMBER_SPARE && a->member_pending_slot[2] == 1,
		      "replacement waits");
		free_array(a);
	}
	/* two non-replacements claiming one slot */
	EDIT(s.p[2], sb->feature_map &= ~(URAID_FEATURE_REPLACEMENT | URAID_FEATURE_RECOVERY_OFFSET));
	refused("two claim a slot", s.p, 3, 0, s.p[2], "slot 1");
	/* a finished replacement whose original is gone takes the slot, losing 0x10 */
	EDIT(s.p[2], sb->feature_map |= URAID_FEATURE_REPLACEMENT);
	{
		const char *two[2] = { s.p[0], s.p[2] };
		a = assemble(two, 2, 0, &rc);
		CHECK(a && a->slot[1].m && strcmp(a->slot[1].m->path, s.p[2]) == 0 &&
		      atomic_load(&a->degraded) == 0, "replacement promoted: %s", err);
		if (a) {
			pthread_mutex_lock(&a->meta_lock);
			CHECK(meta_mark_active(a) == 0, "mark_active");
			pthread_mutex_unlock(&a->meta_lock);
			struct uraid_sb sb;
			read_sb(s.p[2], &sb);
			CHECK(!(sb.feature_map & URAID_FEATURE_REPLACEMENT) && sb.dev_roles[2] == 1 &&
			      sb.dev_roles[1] == URAID_ROLE_SPARE,
			      "promoted replacement written: 0x%x", sb.feature_map);
			free_array(a);
		}
	}

	/* faulty role in the freshest superblock */
	mkarray(&s, "r1f", URAID_LEVEL_1, 3, 0, 2, false, NULL);
	for (unsigned i = 0; i < 3; i++)
		EDIT(s.p[i], sb->dev_roles[0] = URAID_ROLE_FAULTY; sb->events = i == 0 ? 0 : 1);
	a = assemble(s.p, 3, 0, &rc);
	CHECK(a && a->slot[0].state == URAID_MEMBER_MISSING, "faulty: %s", err);
	if (a) {
		CHECK(a->member_state[2] == URAID_MEMBER_FAULTY && a->sb.events == 1,
		      "faulty member kept as faulty");
		free_array(a);
	}
}

static void test_events(void)
{
	struct set s;
	int rc;

	mkarray(&s, "ev", URAID_LEVEL_5, 4, 0, 2, false, NULL);
	for (unsigned i = 0; i < 3; i++)
		EDIT(s.p[i], sb->events = 5);
	EDIT(s.p[3], sb->events = 4);
	struct array *a = assemble(s.p, 4, 0, &rc);
	CHECK(a && a->slot[3].state == URAID_MEMBER_IN_SYNC && a->sb.events == 5,
	      "one behind accepted: %s", err);
	free_array(a);

	EDIT(s.p[3], sb->events = 3);
	a = assemble(s.p, 4, 0, &rc);
	CHECK(a, "two behind: still assembles: %s", err);
	if (a) {
		CHECK(a->slot[3].state == URAID_MEMBER_MISSING && atomic_load(&a->degraded) == 1,
		      "stale slot missing");
		CHECK(a->nmembers == 4 && a->member_state[3] == URAID_MEMBER_STALE &&
		      a->member_slot[3] == -1, "stale member kept for status");
		free_array(a);
	}
	/* a second stale member is one too many for RAID 5; the message says why */
	EDIT(s.p[2], sb->events = 1);
	refused("two stale", s.p, 4, 0, s.p[3], "cannot start");
	CHECK(strstr(err, s.p[2]) != NULL, "names both stale members: %s", err);

	/* the freshest decides roles: member 0 is older and its own roles differ */
	mkarray(&s, "rl", URAID_LEVEL_1, 2, 1, 2, false, NULL);
	/* in the fresh view dev 2 (the spare) took slot 1, dev 1 became faulty */
	for (unsigned i = 1; i < 3; i++)
		EDIT(s.p[i], sb->events = 7; sb->dev_roles[1] = URAID_ROLE_FAULTY;
		     sb->dev_roles[2] = 1);
	EDIT(s.p[0], sb->events = 6; sb->dev_roles[2] = URAID_ROLE_SPARE);
	a = assemble(s.p, 3, 0, &rc);
	CHECK(a, "roles from freshest: %s", err);
	if (a) {
		CHECK(a->slot[1].m && strcmp(a->slot[1].m->path, s.p[2]) == 0,
		      "slot 1 is the former spare");
		free_array(a);
	}
}

static void test_refusals(void)
{
	struct set s, t;
	int rc;

	mkarray(&s, "rf", URAID_LEVEL_5, 4, 0, 2, false, NULL);
	mkarray(&t, "other", URAID_LEVEL_5, 4, 0, 2, false, NULL);

	const char *mixed[4] = { s.p[0], s.p[1], t.p[2], s.p[3] };
	refused("other uuid", mixed, 4, 0, t.p[2], "another array");

	const char *twice[4] = { s.p[0], s.p[1], s.p[1], s.p[3] };
	refused("same twice", twice, 4, 0, s.p[1], "twice");

	char link[160];
	snprintf(link, sizeof(link), "%s/link-to-rf-0", dir);
	CHECK(symlink(s.p[0], link) == 0, "symlink");
	const char *twice2[4] = { s.p[0], s.p[1], link, s.p[3] };
	refused("same via symlink", twice2, 4, 0, link, "twice");

	const char *nosuch[2] = { s.p[0], "/nonexistent/uraid-member" };
	refused("open fails", nosuch, 2, 0, "/nonexistent/uraid-member", NULL);

	char blank[160];
	snprintf(blank, sizeof(blank), "%s/blank.img", dir);
	CHECK(make_image(blank) == 0, "blank");
	const char *withblank[4] = { s.p[0], s.p[1], blank, s.p[3] };
	refused("no superblock", withblank, 4, 0, blank, "no md superblock");

	EDIT(s.p[1], sb->feature_map |= URAID_FEATURE_RESHAPE_ACTIVE; sb->reshape_position = 0);
	refused("reshape", s.p, 4, 0, s.p[1], "reshape");
	EDIT(s.p[1], sb->feature_map &= ~URAID_FEATURE_RESHAPE_ACTIVE);

	EDIT(s.p[2], sb->feature_map |= 0x8000);
	refused("unknown feature", s.p, 4, 0, s.p[2], "feature");
	EDIT(s.p[2], sb->feature_map &= ~0x8000u);

	/* a journal array without its journal: refused, or read-only when forced (md) */
	for (int i = 0; i < 4; i++)
		EDIT(s.p[i], sb->feature_map |= URAID_FEATURE_JOURNAL);
	refused("journal missing", s.p, 4, 0, NULL, "--force");
	{
		int jrc;
		struct array *ja = assemble(s.p, 4, URAID_ASSEMBLE_FORCE, &jrc);
		CHECK(ja && (ja->flags & URAID_ASSEMBLE_READONLY),
		      "journal missing, forced: read-only (rc %d: %s)", jrc, err);
		free_array(ja);
	}
	/* a member turned journal: accepted as the journal, its slot missing */
	EDIT(s.p[0], sb->dev_roles[sb->dev_number] = URAID_ROLE_JOURNAL);
	{
		int jrc;
		struct array *ja = assemble(s.p, 4, URAID_ASSEMBLE_READONLY, &jrc);
		CHECK(ja && ja->member_state[ja->nmembers - 1] == URAID_MEMBER_JOURNAL &&
		      ja->member_slot[ja->nmembers - 1] == -1 && ja->slot[0].m == NULL,
		      "journal member without a slot (rc %d: %s)", jrc, err);
		free_array(ja);
	}
	EDIT(s.p[0], sb->dev_roles[sb->dev_number] = 0);
	EDIT(s.p[2], sb->feature_map |= URAID_FEATURE_BITMAP_OFFSET);
	refused("journal and bitmap", s.p, 4, 0, s.p[2], "journal and a bitmap");
	for (int i = 0; i < 4; i++)
		EDIT(s.p[i], sb->feature_map &= ~(URAID_FEATURE_JOURNAL | URAID_FEATURE_BITMAP_OFFSET));
	/* a journal and a partial parity log: md runs one or the other */
	for (uint32_t ppl = URAID_FEATURE_PPL; ppl; ppl = ppl == URAID_FEATURE_PPL ?
						   URAID_FEATURE_MULTIPLE_PPLS : 0) {
		for (int i = 0; i < 4; i++)
			EDIT(s.p[i], sb->feature_map |= URAID_FEATURE_JOURNAL | ppl);
		refused("journal and PPL", s.p, 4, URAID_ASSEMBLE_FORCE, NULL,
			"with JOURNAL (0x200)");
		for (int i = 0; i < 4; i++)
			EDIT(s.p[i], sb->feature_map &= ~(URAID_FEATURE_JOURNAL | ppl));
	}

	EDIT(s.p[3], sb->layout = URAID_RIGHT_SYMMETRIC);
	refused("layout differs", s.p, 4, 0, s.p[3], "strangely different");
	/* older than the others: an update a crash cut short (a level change
	   that reached the others first); md kicks it, the rest runs degraded */
	for (int i = 0; i < 3; i++)
		EDIT(s.p[i], sb->events += 1);
	{
		struct array *a = assemble(s.p, 4, 0, NULL);
		CHECK(a, "older member of another layout: the rest assembles: %s", err);
		if (a) {
			CHECK(a->nmembers == 4 && a->member_state[3] == URAID_MEMBER_STALE &&
			      a->member_slot[3] == -1 && a->slot[3].state == URAID_MEMBER_MISSING &&
			      atomic_load(&a->degraded) == 1, "older member of another layout left "
			      "out, listed as stale (members %u, slot 3 state %d)", a->nmembers,
			      a->slot[3].state);
			free_array(a);
		}
	}
	for (int i = 0; i < 3; i++)
		EDIT(s.p[i], sb->events -= 1);
	EDIT(s.p[3], sb->layout = URAID_LEFT_SYMMETRIC);

	EDIT(s.p[3], sb->dev_number = 1);
	refused("dev_number twice", s.p, 4, 0, s.p[3], "device number");
	EDIT(s.p[3], sb->dev_number = 3);

	/* sanity: the edits were all undone */
	struct array *a = assemble(s.p, 4, 0, &rc);
	CHECK(a, "after undoing edits: %s", err);
	free_array(a);

	/* too many missing */
	refused("raid5 two missing", s.p, 2, 0, s.p[0], "cannot start");
	struct set r0, r10, r1;
	mkarray(&r0, "m0", URAID_LEVEL_0, 3, 0, 2, false, NULL);
	refused("raid0 one missing", r0.p, 2, 0, r0.p[0], "no redundancy");
	mkarray(&r1, "m1", URAID_LEVEL_1, 3, 0, 2, false, NULL);
	a = assemble(r1.p + 2, 1, 0, &rc);
	CHECK(a && atomic_load(&a->degraded) == 2 && a->slot[2].state == URAID_MEMBER_IN_SYNC,
	      "raid1 one of three: %s", err);
	free_array(a);
	mkarray(&r10, "m10", URAID_LEVEL_10, 4, 0, 2, false, "n2");
	const char *r10a[2] = { r10.p[2], r10.p[3] };     /* slots 0 and 1 mirror each other */
	refused("raid10 lost both copies", r10a, 2, 0, r10.p[2], "every copy");
	const char *r10b[2] = { r10.p[1], r10.p[3] };
	a = assemble(r10b, 2, 0, &rc);
	CHECK(a && atomic_load(&a->degraded) == 2, "raid10 one of each pair: %s", err);
	free_array(a);

	/* dirty and degraded RAID 5: refused unless forced */
	for (unsigned i = 0; i < 4; i++)
		EDIT(s.p[i], sb->resync_offset = 0);
	a = assemble(s.p, 4, 0, &rc);
	CHECK(a && a->in_sync && a->resync_needed, "dirty, not degraded (not active on disk until a write): %s", err);
	free_array(a);
	refused("dirty degraded", s.p, 3, 0, s.p[0], "cannot start dirty degraded array");
	a = assemble(s.p, 3, URAID_ASSEMBLE_FORCE, &rc);
	CHECK(a && a->resync_needed && atomic_load(&a->degraded) == 1, "forced: %s", err);
	free_array(a);
	/* RAID 1 has no such rule */
	for (unsigned i = 0; i < 3; i++)
		EDIT(r1.p[i], sb->resync_offset = 0);
	a = assemble(r1.p, 2, 0, &rc);
	CHECK(a && a->resync_needed, "dirty degraded raid1: %s", err);
	free_array(a);
}

/* URAID_ASSEMBLE_COMPLETE: a member merely missing is refused; a slot the
   superblocks record as faulty or removed is not. */
static void test_forgotten(void)
{
	struct set s;
	int rc;
	mkarray(&s, "fg", URAID_LEVEL_5, 4, 1, 2, false, NULL);
	const char *three[4] = { s.p[0], s.p[1], s.p[3], s.p[4] };     /* slot 2 left out */
	refused("forgotten member", three, 4, URAID_ASSEMBLE_COMPLETE, "slot 2 (device number 2)",
		"--run");
	/* without the flag (the library's default, the kernel's way) it starts degraded */
	struct array *a = assemble(three, 4, 0, &rc);
	CHECK(a && atomic_load(&a->degraded) == 1, "no flag: starts degraded: %s", err);
	free_array(a);
	/* the whole set passes with the flag */
	a = assemble(s.p, 5, URAID_ASSEMBLE_COMPLETE, &rc);
	CHECK(a && atomic_load(&a->degraded) == 0, "complete set: %s", err);
	free_array(a);
	/* degraded when it stopped: the others record slot 2 as faulty, then removed */
	static const uint16_t roles[] = { URAID_ROLE_FAULTY, URAID_ROLE_SPARE };
	for (unsigned r = 0; r < 2; r++) {
		uint16_t role = roles[r];
		for (unsigned i = 0; i < 5; i++)
			if (i != 2)
				EDIT(s.p[i], sb->dev_roles[2] = role);
		a = assemble(three, 4, URAID_ASSEMBLE_COMPLETE, &rc);
		CHECK(a && atomic_load(&a->degraded) == 1, "slot recorded as 0x%x: starts: %s",
		      role, err);
		free_array(a);
	}

	/* a replacement: slot 2's member is device 4, device 2 its replacement still
	   recovering; every device holding the role counts, whatever their order */
	struct set r;
	mkarray(&r, "fgr", URAID_LEVEL_5, 4, 1, 2, false, NULL);
	for (unsigned i = 0; i < 5; i++)
		EDIT(r.p[i], sb->dev_roles[4] = 2);
	EDIT(r.p[2], (sb->feature_map |= URAID_FEATURE_REPLACEMENT | URAID_FEATURE_RECOVERY_OFFSET,
		      sb->recovery_offset = 8));
	const char *no_orig[4] = { r.p[0], r.p[1], r.p[2], r.p[3] };
	refused("replacement given, its original forgotten", no_orig, 4, URAID_ASSEMBLE_COMPLETE,
		"slot 2 (device number 4)", "--run");
	a = assemble(r.p, 5, URAID_ASSEMBLE_COMPLETE, &rc);
	CHECK(a && atomic_load(&a->degraded) == 0, "original and replacement: %s", err);
	free_array(a);

	/* a stale copy of slot 2 given: it is not the member, which is missing */
	struct set t;
	mkarray(&t, "fgs", URAID_LEVEL_5, 4, 1, 2, false, NULL);
	struct uraid_sb sb2;
	CHECK(read_sb(t.p[2], &sb2) == 0, "read %s", t.p[2]);
	for (unsigned i = 0; i < 5; i++)
		if (i != 2)
			EDIT(t.p[i], sb->events = sb2.events + 2);
	char want[120];
	snprintf(want, sizeof(want), "slot 2 (device number 2 given but stale (events %" PRIu64
		 " < %" PRIu64 "))", sb2.events, sb2.events + 2);
	refused("stale copy given", t.p, 5, URAID_ASSEMBLE_COMPLETE, want, "--run");
	a = assemble(t.p, 5, 0, &rc);
	CHECK(a && atomic_load(&a->degraded) == 1, "stale copy, no flag: starts degraded: %s",
	      err);
	free_array(a);
}

/* ---- metadata updates ---- */

static void check_members(const struct set *s, unsigned n, uint64_t events, uint64_t resync,
			  const char *what)
{
	for (unsigned i = 0; i < n; i++) {
		struct uraid_sb sb;
		CHECK(read_sb(s->p[i], &sb) == 0, "%s: read %s", what, s->p[i]);
		CHECK(sb.events == events, "%s: %s events %" PRIu64 ", want %" PRIu64, what,
		      s->p[i], sb.events, events);
		CHECK(sb.resync_offset == resync, "%s: %s resync_offset %" PRIx64, what, s->p[i],
		      sb.resync_offset);
	}
}

static void test_meta(void)
{
	struct set s;
	int rc;

	mkarray(&s, "meta", URAID_LEVEL_5, 4, 0, 2, true, NULL);
	/* as the kernel leaves them after a start (md never steps back to events 0) */
	for (unsigned i = 0; i < 4; i++) {
		EDIT(s.p[i], sb->events = 10);
		set_bitmap_events(s.p[i], 10);
	}
	struct array *a = assemble(s.p, 4, 0, &rc);
	CHECK(a, "meta assemble: %s", err);
	if (!a)
		return;
	uint64_t e0 = a->sb.events;
	struct uraid_sb before;
	read_sb(s.p[1], &before);

	pthread_mutex_lock(&a->meta_lock);
	rc = meta_mark_active(a);
	pthread_mutex_unlock(&a->meta_lock);
	CHECK(rc == 0 && !a->in_sync, "mark_active %d", rc);
	check_members(&s, 4, e0 + 1, 0, "active");
	struct uraid_bitmap_sb bm;
	CHECK(read_bitmap(s.p[0], &bm) == 0 && bm.events == e0 + 1, "bitmap events %" PRIu64,
	      bm.events);
	{
		struct uraid_sb sb;
		read_sb(s.p[1], &sb);
		CHECK(memcmp(sb.device_uuid, before.device_uuid, 16) == 0 &&
		      sb.dev_number == 1 && sb.data_offset == before.data_offset &&
		      sb.bblog_offset == before.bblog_offset && sb.feature_map == before.feature_map &&
		      sb.ctime == before.ctime && sb.utime >= before.utime,
		      "per-device fields kept");
		for (unsigned d = 0; d < 4; d++)
			CHECK(sb.dev_roles[d] == d, "role %u = %u", d, sb.dev_roles[d]);
	}
	for (unsigned i = 0; i < 4; i++)
		examine(s.p[i], "active", e0 + 1);

	pthread_mutex_lock(&a->meta_lock);
	rc = meta_mark_clean(a);
	pthread_mutex_unlock(&a->meta_lock);
	CHECK(rc == 0 && a->in_sync, "mark_clean %d", rc);
	/* md rolls events back: the previous update was the matching clean->dirty */
	check_members(&s, 4, e0, URAID_MAX_SECTOR, "clean");
	CHECK(read_bitmap(s.p[2], &bm) == 0 && bm.events == e0, "bitmap events back");
	for (unsigned i = 0; i < 4; i++)
		examine(s.p[i], "clean", e0);

	/* a corrected read is counted, written at the next update */
	md_read_corrected(a, 1);
	pthread_mutex_lock(&a->meta_lock);
	rc = meta_mark_active(a);
	pthread_mutex_unlock(&a->meta_lock);
	check_members(&s, 4, e0 + 1, 0, "active again");
	{
		struct uraid_sb sb;
		read_sb(s.p[1], &sb);
		CHECK(sb.cnt_corrected_read == 1, "cnt_corrected_read %u", sb.cnt_corrected_read);
	}

	/* a member fails: 0xfffe in the others' roles, events+1, degraded */
	bool ok = md_fail_slot(a, 2, -EIO);
	CHECK(ok && atomic_load(&a->degraded) == 1 && a->slot[2].state == URAID_MEMBER_FAULTY,
	      "fail slot 2");
	for (unsigned i = 0; i < 4; i++) {
		struct uraid_sb sb;
		read_sb(s.p[i], &sb);
		uint64_t want = i == 2 ? e0 + 1 : e0 + 2;  /* the failed one is not written */
		CHECK(sb.events == want, "after fail: %s events %" PRIu64, s.p[i], sb.events);
		if (i != 2)
			CHECK(sb.dev_roles[2] == URAID_ROLE_FAULTY && sb.dev_roles[0] == 0 &&
			      sb.dev_roles[3] == 3, "after fail: %s role of dev 2 0x%x", s.p[i],
			      sb.dev_roles[2]);
	}
	/* degraded: clean goes forward (no roll-back, spares not skipped) */
	pthread_mutex_lock(&a->meta_lock);
	rc = meta_mark_clean(a);
	pthread_mutex_unlock(&a->meta_lock);
	CHECK(rc == 0, "clean degraded");
	for (unsigned i = 0; i < 4; i++) {
		if (i == 2)
			continue;
		struct uraid_sb sb;
		read_sb(s.p[i], &sb);
		CHECK(sb.events == e0 + 3 && sb.resync_offset == URAID_MAX_SECTOR,
		      "clean degraded: events %" PRIu64, sb.events);
		examine(s.p[i], "clean", e0 + 3);
	}
	/* a second failure kills RAID 5: reported, and recorded as md does */
	ok = md_fail_slot(a, 0, -EIO);
	CHECK(!ok && atomic_load(&a->degraded) == 2, "second failure is fatal");
	free_array(a);

	/* reassembly after the failure: the failed member is stale or faulty, 3 in sync */
	a = assemble(s.p, 4, 0, &rc);
	CHECK(!a, "two failed members: refused");
	free_array(a);

	/* RAID 1 with a spare: clean/active leave the spare alone (sync_sbs nospares) */
	struct set r;
	mkarray(&r, "meta1", URAID_LEVEL_1, 2, 1, 0, true, NULL);
	for (unsigned i = 0; i < 3; i++)
		EDIT(r.p[i], sb->events = 10);   /* bitmap left at 0: stale */
	a = assemble(r.p, 3, 0, &rc);
	CHECK(a, "raid1 meta: %s", err);
	if (!a)
		return;
	e0 = a->sb.events;
	pthread_mutex_lock(&a->meta_lock);
	meta_mark_active(a);
	pthread_mutex_unlock(&a->meta_lock);
	CHECK(a->bitmap_stale, "bitmap events 0 < 10: stale");
	check_members(&r, 2, e0 + 1, 0, "raid1 active");
	CHECK(read_bitmap(r.p[0], &bm) == 0 && bm.events == 0,
	      "a stale bitmap header keeps its events: %" PRIu64, bm.events);
	{
		struct uraid_sb sb;
		read_sb(r.p[2], &sb);
		CHECK(sb.events == e0, "spare not written on clean->active: %" PRIu64, sb.events);
	}
	pthread_mutex_lock(&a->meta_lock);
	meta_mark_clean(a);
	pthread_mutex_unlock(&a->meta_lock);
	check_members(&r, 3, e0, URAID_MAX_SECTOR, "raid1 clean");
	for (unsigned i = 0; i < 3; i++)
		examine(r.p[i], "clean", e0);
	/* the last copy of a RAID 1 is not failed (raid1_error) */
	CHECK(md_fail_slot(a, 0, -EIO), "raid1 first failure survives");
	CHECK(!md_fail_slot(a, 1, -EIO) && a->slot[1].state == URAID_MEMBER_IN_SYNC,
	      "raid1 last copy kept");
	free_array(a);
	a = assemble(r.p, 3, 0, &rc);
	CHECK(a && a->slot[0].state == URAID_MEMBER_MISSING &&
	      a->slot[1].state == URAID_MEMBER_IN_SYNC, "raid1 reassembled degraded: %s", err);
	if (a) {
		/* the failed member's own superblock is older: it is faulty in the freshest */
		for (unsigned i = 0; i < a->nmembers; i++)
			if (strcmp(a->members[i]->path, r.p[0]) == 0)
				CHECK(a->member_state[i] == URAID_MEMBER_FAULTY, "failed member state %d",
				      a->member_state[i]);
	}
	free_array(a);
}

/* ---- the areas of each member (io wall), hostile fields ---- */

/* Set the bitmap header's sync_size of a member. */
static void set_bitmap_sync(const char *path, uint64_t sync)
{
	alignas(4096) uint8_t buf[4096];
	struct uraid_sb sb;
	struct uraid_bitmap_sb bm;
	int fd = open(path, O_RDWR);

	CHECK(fd >= 0 && read_sb(path, &sb) == 0, "bitmap of %s", path);
	off_t at = (off_t)((int64_t)sb.super_offset + sb.bitmap_offset) * 512;
	CHECK(pread(fd, buf, sizeof(buf), at) == (ssize_t)sizeof(buf), "read bitmap");
	CHECK(uraid_bitmap_decode(buf, &bm) == 0, "decode bitmap");
	bm.sync_size = sync;
	uraid_bitmap_encode(&bm, buf);
	CHECK(pwrite(fd, buf, sizeof(buf), at) == (ssize_t)sizeof(buf), "write bitmap");
	close(fd);
}

static void test_areas(void)
{
	struct set s;
	struct uraid_sb first;
	int rc;

	/* 1.2 RAID 5 with a bitmap: sb at 8, bitmap after it, data at data_offset */
	mkarray(&s, "ar5", URAID_LEVEL_5, 4, 0, 2, true, NULL);
	CHECK(read_sb(s.p[0], &first) == 0, "read ar5");
	struct array *a = assemble(s.p, s.n, URAID_ASSEMBLE_READONLY, &rc);
	CHECK(a != NULL, "ar5: %s", err);
	for (unsigned i = 0; a && i < a->nmembers; i++) {
		const struct member *m = a->members[i];
		CHECK(m->data_offset == first.data_offset && m->data_len == first.size,
		      "ar5 member %u: data %" PRIu64 "+%" PRIu64 ", want %" PRIu64 "+%" PRIu64, i,
		      m->data_offset, m->data_len, first.data_offset, first.size);
		CHECK(m->nareas == 3 && m->area[0].start == 8 && m->area[1].start == 16 &&
		      m->area[1].end - m->area[1].start == a->bitmap_sectors &&
		      m->area[2].start == 8 + (uint64_t)first.bblog_offset,
		      "ar5 member %u: %u areas, sb %" PRIu64 ", bitmap %" PRIu64 "..%" PRIu64, i,
		      m->nareas, m->area[0].start, m->area[1].start, m->area[1].end);
		CHECK(a->bitmap.sync_size == a->geom.dev_sectors, "ar5: sync_size %" PRIu64,
		      a->bitmap.sync_size);
	}
	free_array(a);

	/* a header that covers nothing: the range is the array's, all of it dirty */
	for (unsigned i = 0; i < s.n; i++)
		set_bitmap_sync(s.p[i], 0);
	a = assemble(s.p, s.n, URAID_ASSEMBLE_READONLY, &rc);
	CHECK(a && a->bitmap_found_sync == 0 && a->bitmap.sync_size == a->geom.dev_sectors,
	      "sync_size 0: found %" PRIu64 ", used %" PRIu64, a ? a->bitmap_found_sync : 1,
	      a ? a->bitmap.sync_size : 0);
	free_array(a);

	/* the bitmap moved into the data area, a valid header copied there
	   (checksum fixed by write_sb) */
	for (unsigned i = 0; i < s.n; i++) {
		alignas(4096) uint8_t head[4096];
		int fd = open(s.p[i], O_RDWR);
		CHECK(fd >= 0 && pread(fd, head, sizeof(head), 16 * 512) == (ssize_t)sizeof(head) &&
		      pwrite(fd, head, sizeof(head), (off_t)(first.data_offset * 512)) ==
		      (ssize_t)sizeof(head), "copy the bitmap header of %s", s.p[i]);
		if (fd >= 0)
			close(fd);
		EDIT(s.p[i], sb->bitmap_offset = (int32_t)(sb->data_offset - 8));
	}
	refused("bitmap in data", s.p, s.n, URAID_ASSEMBLE_READONLY, s.p[0], "runs into the data");
	for (unsigned i = 0; i < s.n; i++)
		EDIT(s.p[i], sb->bitmap_offset = 8; sb->chunksize = 1u << 22);
	refused("chunk of 2 GiB", s.p, s.n, URAID_ASSEMBLE_READONLY, s.p[0], "chunksize 4194304");

	/* events at the top of the counter: compared without wrapping */
	mkarray(&s, "aev", URAID_LEVEL_1, 2, 0, 2, false, NULL);
	EDIT(s.p[0], sb->events = UINT64_MAX);
	EDIT(s.p[1], sb->events = UINT64_MAX - 1);
	a = assemble(s.p, s.n, URAID_ASSEMBLE_READONLY, &rc);
	CHECK(a && a->nmembers == 2 && a->member_state[0] == URAID_MEMBER_IN_SYNC &&
	      a->member_state[1] == URAID_MEMBER_IN_SYNC, "events 2^64-1/2^64-2: %s", err);
	free_array(a);
	EDIT(s.p[1], sb->events = 0);
	a = assemble(s.p, s.n, URAID_ASSEMBLE_READONLY, &rc);
	CHECK(a && a->member_state[1] == URAID_MEMBER_STALE, "events 2^64-1/0: member 1 not stale");
	free_array(a);
	refused("events 2^64-1 writable", s.p, s.n, 0, s.p[0], "events 18446744073709551615");
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/uraid-assemble.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	if (access("/usr/sbin/mdadm", X_OK) == 0)
		mdadm = "/usr/sbin/mdadm";
	else if (access("/sbin/mdadm", X_OK) == 0)
		mdadm = "/sbin/mdadm";
	else
		printf("mdadm not installed: --examine cross-checks skipped\n");

	test_healthy();
	test_spares_and_roles();
	test_events();
	test_refusals();
	test_forgotten();
	test_meta();
	test_areas();

	char cmd[100];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (failures == 0 && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
