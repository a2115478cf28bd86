// SPDX-License-Identifier: MIT
/*
 * Review finding (wave6, r5to6 x r10grow): assembly takes a member that is
 * not in sync (feature 0x2) in a slot of a RAID 10 in mid-reshape as
 * "filled by the reshape" (md/assemble.c fills_by_reshape, any level with a
 * reshape), in sync, with only rs->old_unsynced[slot] set. RAID 10 never
 * looks at old_unsynced (level/mirror_io.c copy_readable, jobs/reshape.c
 * read_old_copies): requests above the position read that member's old
 * rows, which hold no data.
 *
 * md makes this state: raid10_start_reshape gives a spare that takes an
 * old slot of a degraded RAID 10 (mdadm --grow -n5 with the spares there)
 * recovery_offset 0, not In_sync; md's reshape writes its new rows, and
 * md recovers it only after the reshape. Here: a RAID 10 n2 of 4 is grown
 * to 5 by uraid, closed part-way, then member 1 is made such a spare
 * (feature 0x2, recovery_offset 0, its old rows from the position's row on
 * overwritten with 0xa5). Assembled read-only (no job runs), every byte
 * must read back as written; or assembly must refuse. Served writable with
 * the reshape held back, the superblocks keep member 1's new offset (md's
 * raid10_run counts every member in a slot, a recovering one too, and
 * refuses a least move below a chunk). Assembled writable, the reshape
 * ends and member 1 is recovered after it at its new data offset
 * (md_finish_reshape moves every member), as md does, and a check finds 0:
 * read then without slots 0 and 2, every byte it alone holds is right.
 *
 *   test_reshape_r10_degraded [seed]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/create.h>
#include <uraid/engine.h>
#include <uraid/superblock.h>

#include "engine/core/array.h"       /* no job starts by itself (sync_retry_ns) */
#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define NFILES 5
#define MEMBER_MIB 12u
#define CHUNK_KIB 64u

static char paths[NFILES][96];
static const char *p[NFILES];

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int disk_sb_path(const char *path, struct uraid_sb *out)
{
	struct uraid_probe *pr = malloc(sizeof(*pr));
	int fd = open(path, O_RDONLY);
	int rc = -1;

	if (pr && fd >= 0 && uraid_probe_fd(fd, pr) == 0 && pr->chosen >= 0) {
		*out = pr->loc[pr->chosen].sb;
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	free(pr);
	return rc;
}

static int disk_sb_of(unsigned i, struct uraid_sb *out)
{
	return disk_sb_path(paths[i], out);
}

/*
 * md's raid10_run, starting a RAID 10 in mid-reshape: the least move of
 * the data offset over every member in a slot (a recovering one too) must
 * be at least the larger chunk times the far copies, or md refuses ("offset
 * difference not enough to continue reshape"). mdadm gives every device its
 * new offset. 1 when the superblocks on disk pass (or show no reshape).
 */
static int md_offset_rule(const char *what, unsigned far)
{
	int64_t least = INT64_MAX;
	uint64_t need = 0;
	bool active = false;

	for (unsigned i = 0; i < NFILES; i++) {
		struct uraid_sb s;
		if (disk_sb_of(i, &s) || !(s.feature_map & URAID_FEATURE_RESHAPE_ACTIVE) ||
		    s.dev_number >= URAID_SB_MAX_DEV)
			continue;
		unsigned role = s.dev_roles[s.dev_number];
		if (role >= s.raid_disks && role >= s.raid_disks - (unsigned)s.delta_disks)
			continue;       /* spare, faulty: no slot in either geometry */
		active = true;
		uint64_t chunk = s.chunksize > s.new_chunk ? s.chunksize : s.new_chunk;
		need = chunk * far;
		int64_t diff = (s.feature_map & URAID_FEATURE_NEW_OFFSET) ? s.new_offset : 0;
		bool back = (s.feature_map & URAID_FEATURE_RESHAPE_BACKWARDS) || s.delta_disks < 0;
		if (!back)
			diff = -diff;
		if (diff < 0)
			diff = 0;
		printf("%s: member %u role %u feature 0x%x data_offset %" PRIu64 " new_offset %d "
		       "recovery_offset %" PRIu64 "\n", what, i, role, s.feature_map, s.data_offset,
		       s.new_offset, s.recovery_offset);
		least = diff < least ? diff : least;
	}
	if (!active)
		return 1;
	CHECK((uint64_t)least >= need, "%s: md's raid10_run would refuse: the least data offset "
	      "move over the members in a slot is %" PRId64 " sectors, md needs %" PRIu64, what,
	      least, need);
	return (uint64_t)least >= need;
}

struct run {
	char dir[64];
	struct uraid_engine *e;
	uint64_t size;
	uint8_t *shadow, *back;
};

/* A RAID 10 `layout` of 4 filled with seeded data, grown to 5 by uraid and
 * closed part-way; member 1's superblock in *sb. 0 or -1. */
static int grown_part_way(struct run *t, const char *layout, uint64_t seed, struct uraid_sb *sb)
{
	char err[256];
	struct uraid_array *a = NULL;

	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-revfix-r10.%d", getpid());
	mkdir(t->dir, 0700);
	for (unsigned i = 0; i < NFILES; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", t->dir, i);
		p[i] = paths[i];
		if (fixture_make_file(paths[i], MEMBER_MIB * MIB))
			return -1;
	}
	if (fixture_create_array("r10 review", "raid10", layout, 4, CHUNK_KIB, 2, p))
		return -1;
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = p, .npaths = 4, .idle_clean_ms = 20 };
	if (uraid_engine_create(&eo, &t->e) ||
	    uraid_array_assemble(t->e, &ao, &a, err, sizeof(err))) {
		fprintf(stderr, "assemble: %s\n", err);
		return -1;
	}
	t->size = uraid_array_size(a);
	t->shadow = aligned_alloc(4096, t->size);
	t->back = aligned_alloc(4096, t->size);
	uint64_t s = seed;
	rng_fill(&s, t->shadow, t->size);
	CHECK(uraid_array_pwrite(a, t->shadow, t->size, 0, 0) == 0, "fill");
	CHECK(uraid_array_add_member(a, paths[4], 0, err, sizeof(err)) == 0, "add: %s", err);

	/* grow 4 -> 5, slowly, and stop part-way */
	struct uraid_array_status as;
	uraid_array_status(a, &as);
	struct uraid_reshape r = { .new_level = 10, .new_layout = as.layout,
				   .new_raid_disks = 5, .new_chunk_sectors = CHUNK_KIB * 2 };
	uraid_array_sync_speed(a, 100, 1000);
	CHECK(uraid_array_reshape_start(a, &r, err, sizeof(err)) == 0, "reshape start: %s", err);
	for (unsigned k = 0; k < 500; k++) {
		pause_ms(10);
		if (disk_sb_of(0, sb) == 0 && (sb->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) &&
		    sb->reshape_position >= 2048)
			break;
	}
	CHECK(uraid_array_close(a) == 0, "close");
	bool mid = disk_sb_of(1, sb) == 0 && (sb->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) &&
		   sb->reshape_position > 0 && sb->reshape_position < t->size / 512;
	CHECK(mid, "stopped mid-reshape: feature 0x%x position %" PRIu64, sb->feature_map,
	      sb->reshape_position);
	return mid ? 0 : -1;
}

/* Assembled read-only from paths: refused (printed), or every byte as written. */
static void read_back(struct run *t, const char *const *ps, unsigned n, const char *what,
		      uint64_t pos, bool may_refuse)
{
	char err[256];
	struct uraid_array *a = NULL;
	struct uraid_assemble_opts ao = { .paths = ps, .npaths = n, .idle_clean_ms = 20,
					  .flags = URAID_ASSEMBLE_READONLY };

	if (uraid_array_assemble(t->e, &ao, &a, err, sizeof(err))) {
		printf("%s: assembly refused%s: %s\n", what, may_refuse ? " (acceptable)" : "", err);
		CHECK(may_refuse, "%s: refused", what);
		return;
	}
	uint64_t bad = 0, first = UINT64_MAX, failed = 0;
	for (uint64_t off = 0; off < t->size; off += 64 * 1024) {
		if (uraid_array_pread(a, t->back + off, 64 * 1024, off)) {
			failed++;
			first = first < off ? first : off;
		} else if (memcmp(t->back + off, t->shadow + off, 64 * 1024)) {
			bad++;
			first = first < off ? first : off;
		}
	}
	CHECK(bad == 0 && failed == 0, "%s: of %" PRIu64 " 64 KiB pieces %" PRIu64 " read back "
	      "wrong and %" PRIu64 " failed (first at byte %" PRIu64 "; the position is at byte %"
	      PRIu64 ")", what, t->size / (64 * 1024), bad, failed, first, pos * 512);
	if (!bad && !failed)
		printf("%s: every byte read back right\n", what);
	CHECK(uraid_array_close(a) == 0, "%s: close read-only", what);
}

static void run_done(struct run *t)
{
	if (t->e)
		uraid_engine_destroy(t->e);
	for (unsigned i = 0; i < NFILES; i++)
		unlink(paths[i]);
	rmdir(t->dir);
	free(t->shadow);
	free(t->back);
	memset(t, 0, sizeof(*t));
}

/* Finding 1: a not-in-sync member in an old slot is read for old rows. */
static void run_filled(uint64_t seed)
{
	struct run t = { 0 };
	struct uraid_sb sb;

	if (grown_part_way(&t, "n2", seed, &sb)) {
		CHECK(0, "filled: setup");
		run_done(&t);
		return;
	}
	uint64_t pos = sb.reshape_position, chunk = CHUNK_KIB * 2;
	/* member 1, in sync when uraid started the reshape, has its new offset;
	   the other members' own are the same (one data offset for all) */
	CHECK(sb.feature_map & URAID_FEATURE_NEW_OFFSET, "filled: member 1 has no new offset "
	      "(feature 0x%x)", sb.feature_map);
	uint64_t want_new = sb.data_offset + (uint64_t)(int64_t)sb.new_offset;
	/* old geometry n2 over 4: a row holds 2 chunks of the array */
	uint64_t live = sb.data_offset + pos / (2 * chunk) * chunk;
	printf("stopped at reshape_position %" PRIu64 "; member 1: data_offset %" PRIu64
	       ", its old rows from member sector %" PRIu64 " made garbage\n", pos,
	       sb.data_offset, live);

	/* member 1 as md's raid10_start_reshape leaves a spare in an old slot */
	sb.feature_map |= URAID_FEATURE_RECOVERY_OFFSET;
	sb.recovery_offset = 0;
	alignas(4096) uint8_t buf[URAID_SB_BYTES];
	uraid_sb_encode(&sb, buf);
	int fd = open(paths[1], O_RDWR);
	CHECK(fd >= 0 && pwrite(fd, buf, sizeof(buf), (off_t)(sb.super_offset * 512)) ==
	      (ssize_t)sizeof(buf), "rewrite member 1's superblock");
	uint64_t end = sb.data_offset + sb.size;
	uint8_t *junk = malloc(MIB);
	memset(junk, 0xa5, MIB);
	for (uint64_t at = live; fd >= 0 && at < end;) {
		uint64_t n = end - at > MIB / 512 ? MIB / 512 : end - at;
		CHECK(pwrite(fd, junk, n * 512, (off_t)(at * 512)) == (ssize_t)(n * 512), "junk");
		at += n;
	}
	free(junk);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}

	read_back(&t, p, 5, "filled", pos, true);
	md_offset_rule("filled, as md leaves it", 1);

	/* served writable with the reshape held back: the superblocks uraid
	   writes keep the recovering member's new offset (md continues it) */
	{
		struct uraid_assemble_opts ao = { .paths = p, .npaths = 5, .idle_clean_ms = 20 };
		struct uraid_array *a = NULL;
		char err[256];
		if (uraid_array_assemble(t.e, &ao, &a, err, sizeof(err)) == 0) {
			uraid_array_sync_speed(a, 1, 1);
			uint8_t *one = aligned_alloc(4096, 4096);
			memset(one, 0x5a, 4096);
			CHECK(uraid_array_pwrite(a, one, 4096, 0, 0) == 0, "filled, held: write");
			free(one);
			CHECK(uraid_array_close(a) == 0, "filled, held: close");
			memset(t.shadow, 0x5a, 4096);
			struct uraid_sb s1;
			CHECK(disk_sb_of(1, &s1) == 0 &&
			      (s1.feature_map & URAID_FEATURE_RECOVERY_OFFSET) &&
			      (s1.feature_map & URAID_FEATURE_NEW_OFFSET) &&
			      s1.data_offset + (uint64_t)(int64_t)s1.new_offset == want_new,
			      "filled, held: member 1 feature 0x%x new offset %" PRIu64 " (want 0x2, "
			      "0x40, %" PRIu64 ")", s1.feature_map,
			      s1.data_offset + (uint64_t)(int64_t)s1.new_offset, want_new);
			md_offset_rule("filled, held by uraid", 1);
		} else {
			CHECK(0, "filled, held: assemble: %s", err);
		}
	}

	/* writable: the superblocks are written with meta.c's recovery_offset
	   for a filled slot, reshape_position / data_disks, and a RAID 10
	   geometry has no data_disks (0). In a child: it may die of SIGFPE. */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		struct uraid_engine *ce = NULL;
		struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
		struct uraid_assemble_opts ao = { .paths = p, .npaths = 5, .idle_clean_ms = 20 };
		struct uraid_array *a = NULL;
		char err[256];
		if (uraid_engine_create(&eo, &ce) || uraid_array_assemble(ce, &ao, &a, err, sizeof(err)))
			_exit(3);
		uint8_t *one = aligned_alloc(4096, 4096);
		memset(one, 0x5a, 4096);
		int rc = uraid_array_pwrite(a, one, 4096, 0, 0);    /* marks dirty: superblocks */
		/* the reshape goes on and ends, then member 1 is recovered (md
		   recovers it after the reshape): wait for both, 120 s at most */
		uraid_array_sync_speed(a, 100000, 1000000);
		struct uraid_array_status as;
		struct uraid_sync_status ss;
		unsigned k;
		for (k = 0; k < 12000 && !rc; k++) {
			pause_ms(10);
			if (uraid_array_status(a, &as) == 0 && uraid_array_sync_status(a, &ss) == 0 &&
			    as.raid_disks == 5 && as.degraded == 0 && !ss.running)
				break;
		}
		/* check after the rebuild: 0 mismatches */
		uint64_t mism = UINT64_MAX;
		if (!rc && k < 12000 && uraid_array_sync_start(a, URAID_SYNC_CHECK, err,
							       sizeof(err)) == 0) {
			for (unsigned w = 0; w < 12000; w++) {
				pause_ms(10);
				if (uraid_array_sync_status(a, &ss) == 0 && !ss.running &&
				    ss.kind == URAID_SYNC_CHECK) {
					if (ss.result == 0)
						mism = ss.mismatch_sectors;
					break;
				}
			}
		}
		printf("filled: check after the rebuild: %" PRId64 " mismatched sectors\n",
		       mism == UINT64_MAX ? (int64_t)-1 : (int64_t)mism);
		fflush(stdout);
		if (uraid_array_close(a))
			rc = 5;
		_exit(rc ? 4 : k == 12000 ? 6 : mism != 0 ? 7 : 0);
	}
	int wst = 0;
	waitpid(pid, &wst, 0);
	CHECK(!WIFSIGNALED(wst), "filled: a writable assembly died of signal %d (meta.c compose: "
	      "reshape_position / data_disks of a RAID 10 geometry)", WTERMSIG(wst));
	CHECK(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "filled: the writable assembly did not "
	      "finish the reshape, member 1's recovery and a check with 0 mismatches (child "
	      "exit %d)",
	      WIFEXITED(wst) ? WEXITSTATUS(wst) : -1);
	disk_sb_of(1, &sb);
	printf("filled: member 1 after: feature 0x%x recovery_offset %" PRIu64 " raid_disks %u\n",
	       sb.feature_map, sb.recovery_offset, sb.raid_disks);
	CHECK(!(sb.feature_map & (URAID_FEATURE_RESHAPE_ACTIVE | URAID_FEATURE_RECOVERY_OFFSET)) &&
	      sb.raid_disks == 5, "filled: member 1 still mid-reshape or recovering (feature 0x%x)",
	      sb.feature_map);
	/* rebuilt at its new offset, as md_finish_reshape moves every member */
	struct uraid_sb s0;
	CHECK(disk_sb_of(0, &s0) == 0 && sb.data_offset == want_new &&
	      s0.data_offset == want_new && !(sb.feature_map & URAID_FEATURE_NEW_OFFSET),
	      "filled: member 1 at data offset %" PRIu64 ", member 0 at %" PRIu64 " (want both "
	      "at the new offset %" PRIu64 ")", sb.data_offset, s0.data_offset, want_new);
	/* member 1's content: n2 over 5 without slots 0 and 2, the chunks
	   copied on slots 0-1 and 1-2 come from member 1 alone */
	memset(t.shadow, 0x5a, 4096);
	const char *ps[3] = { p[1], p[3], p[4] };
	read_back(&t, ps, 3, "filled, recovered (read without slots 0 and 2)", 0, false);
	run_done(&t);
}

/*
 * Finding 2: survival during a RAID 10 reshape is judged on the new
 * geometry only (md/assemble.c array_level_survives on a->geom; md's
 * raid10 calc_degraded/enough look at both). RAID 10 o2 4 -> 5: slots 0
 * and 3 hold both copies of old chunks (offset copies wrap mod 4) but of
 * no new chunk (mod 5). Without members 0 and 3: refused as md does, or
 * (if assembled) every byte readable.
 */
static void run_old_lost(uint64_t seed)
{
	struct run t = { 0 };
	struct uraid_sb sb;

	if (grown_part_way(&t, "o2", seed, &sb)) {
		CHECK(0, "old lost: setup");
		run_done(&t);
		return;
	}
	printf("old lost: stopped at reshape_position %" PRIu64 "\n", sb.reshape_position);
	const char *ps[3] = { p[1], p[2], p[4] };
	read_back(&t, ps, 3, "old lost (o2 4->5 without slots 0 and 3)", sb.reshape_position, true);
	run_done(&t);
}

/*
 * Finding 2 at run time: mid-reshape (o2 4 -> 5, writable, the job
 * throttled), failing member 0 leaves both geometries whole; failing member
 * 3 then would lose old chunks (slots 0 and 3 hold both copies of some, mod
 * 4) though no new one (mod 5): refused, as md's raid10 enough() on the
 * previous geometry. Every byte reads back right with member 0 failed.
 */
static void run_fail_mid(uint64_t seed)
{
	struct run t = { 0 };
	struct uraid_sb sb;
	char err[256];

	if (grown_part_way(&t, "o2", seed, &sb)) {
		CHECK(0, "fail mid: setup");
		run_done(&t);
		return;
	}
	struct uraid_assemble_opts ao = { .paths = p, .npaths = 5, .idle_clean_ms = 20 };
	struct uraid_array *a = NULL;
	if (uraid_array_assemble(t.e, &ao, &a, err, sizeof(err))) {
		CHECK(0, "fail mid: assemble: %s", err);
		run_done(&t);
		return;
	}
	uraid_array_sync_speed(a, 1, 1);
	int m0 = uraid_array_find_member(a, p[0]), m3 = uraid_array_find_member(a, p[3]);
	int rc0 = uraid_array_fail_member(a, (unsigned)m0, 0, err, sizeof(err));
	CHECK(rc0 == 0, "fail mid: failing member 0 refused: %s", err);
	int rc3 = uraid_array_fail_member(a, (unsigned)m3, 0, err, sizeof(err));
	struct uraid_sync_status ss;
	bool mid = uraid_array_sync_status(a, &ss) == 0 && ss.reshape_position_bytes > 0 &&
		   ss.reshape_position_bytes < t.size;
	CHECK(mid, "fail mid: the reshape (throttled) ended before the test");
	printf("fail mid: member 3 after member 0: %s%s\n", rc3 ? "refused: " : "failed",
	       rc3 ? err : "");
	CHECK(!mid || rc3 != 0, "fail mid: member 3 failed after member 0 mid-reshape (o2 4->5): "
	      "the old rows lose chunks whose copies are both on slots 0 and 3");
	uint64_t bad = 0, failed = 0;
	for (uint64_t off = 0; off < t.size; off += 64 * 1024) {
		if (uraid_array_pread(a, t.back + off, 64 * 1024, off))
			failed++;
		else if (memcmp(t.back + off, t.shadow + off, 64 * 1024))
			bad++;
	}
	CHECK(bad == 0 && failed == 0, "fail mid: %" PRIu64 " pieces wrong, %" PRIu64 " failed",
	      bad, failed);
	CHECK(uraid_array_close(a) == 0, "fail mid: close");
	run_done(&t);
}

/* Status of the member at path into *ms; false when it is not there. */
static bool member_status(struct uraid_array *a, const char *path, struct uraid_member_status *ms)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	int i = uraid_array_find_member(a, path);
	bool ok = as && i >= 0 && uraid_array_status(a, as) == 0 && (unsigned)i < as->nmembers;

	if (ok)
		*ms = as->members[i];
	free(as);
	return ok;
}

/* Waits (10 s at most) until no job runs; its status in *ss. */
static void wait_idle(struct uraid_array *a, struct uraid_sync_status *ss, unsigned secs)
{
	for (unsigned k = 0; k < secs * 100; k++) {
		if (uraid_array_sync_status(a, ss) == 0 && !ss->running)
			return;
		pause_ms(10);
	}
}

/*
 * The start with a member waiting in a slot (md's raid_disk >= 0, not in
 * sync): uraid starts no reshape on a degraded array, so a replacement
 * whose copy was stopped is that member here (RAID 5 of 4 -> 5). mdadm
 * gives every device its new offset and md's run counts each member in a
 * slot: the replacement gets the others' new offset and recovery_offset 0
 * (the reshape writes none of its rows). After the reshape the copy goes on
 * from 0 at the new offset, completes, a check finds 0 and the data reads
 * back.
 */
static void run_replace_start(uint64_t seed)
{
	char dir[64], mp[6][96], err[256];
	const char *mpp[6];
	struct uraid_engine *e = NULL;
	struct uraid_array *a = NULL;
	struct uraid_sync_status ss;
	struct uraid_member_status ms;

	snprintf(dir, sizeof(dir), "/dev/shm/uraid-r10rec-rep.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < 6; i++) {
		snprintf(mp[i], sizeof(mp[i]), "%s/m%u.img", dir, i);
		mpp[i] = mp[i];
		CHECK(fixture_make_file(mp[i], MEMBER_MIB * MIB) == 0, "replace: make %s", mp[i]);
	}
	CHECK(fixture_create_array("r5 replace", "raid5", "left-symmetric", 4, CHUNK_KIB, 2, mpp)
	      == 0, "replace: create");
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = mpp, .npaths = 4, .idle_clean_ms = 20 };
	if (uraid_engine_create(&eo, &e) || uraid_array_assemble(e, &ao, &a, err, sizeof(err))) {
		CHECK(0, "replace: assemble: %s", err);
		goto out;
	}
	uint64_t size = uraid_array_size(a), s = seed;
	uint8_t *data = aligned_alloc(4096, size), *back = aligned_alloc(4096, size);
	rng_fill(&s, data, size);
	CHECK(uraid_array_pwrite(a, data, size, 0, 0) == 0, "replace: fill");
	struct array *ia = (struct array *)a;
	atomic_store(&ia->sync_retry_ns, UINT64_MAX);   /* no job starts by itself */
	uraid_array_sync_speed(a, 1000, 1000);
	int old = uraid_array_find_member(a, mp[1]);
	CHECK(uraid_array_replace_member(a, (unsigned)old, mp[4], 0, err, sizeof(err)) == 0,
	      "replace: replace: %s", err);
	pause_ms(1500);
	uraid_array_sync_cancel(a);
	wait_idle(a, &ss, 10);
	struct uraid_sb s0, s4;
	if (disk_sb_path(mp[4], &s4) == 0)
		printf("replace: the copy stopped at recovery_offset %" PRIu64 " (feature 0x%x)\n",
		       s4.recovery_offset, s4.feature_map);
	CHECK(uraid_array_add_member(a, mp[5], 0, err, sizeof(err)) == 0, "replace: add: %s", err);
	struct uraid_array_status *as = malloc(sizeof(*as));
	uraid_array_status(a, as);
	struct uraid_reshape r = { .new_level = 5, .new_layout = as->layout,
				   .new_raid_disks = 5, .new_chunk_sectors = CHUNK_KIB * 2 };
	free(as);
	uraid_array_sync_speed(a, 100, 100);
	int rc = uraid_array_reshape_start(a, &r, err, sizeof(err));
	CHECK(rc == 0, "replace: reshape start with a stopped replacement: %s", err);
	if (rc == 0 && disk_sb_path(mp[0], &s0) == 0 && disk_sb_path(mp[4], &s4) == 0) {
		printf("replace: at the start: member 0 feature 0x%x new_offset %d; replacement "
		       "feature 0x%x new_offset %d recovery_offset %" PRIu64 "\n", s0.feature_map,
		       s0.new_offset, s4.feature_map, s4.new_offset, s4.recovery_offset);
		CHECK((s4.feature_map & URAID_FEATURE_NEW_OFFSET) && s4.new_offset == s0.new_offset &&
		      s4.data_offset == s0.data_offset && s4.recovery_offset == 0 &&
		      (s4.feature_map & URAID_FEATURE_RECOVERY_OFFSET),
		      "replace: the replacement's superblock: feature 0x%x new_offset %d "
		      "recovery_offset %" PRIu64 " (want 0x40 and 0x2, %d, 0)", s4.feature_map,
		      s4.new_offset, s4.recovery_offset, s0.new_offset);
	}
	uraid_array_sync_speed(a, 400000, 800000);
	wait_idle(a, &ss, 60);
	CHECK(ss.kind == URAID_SYNC_RESHAPE && ss.result == 0, "replace: reshape: kind %d result %d",
	      ss.kind, ss.result);
	atomic_store(&ia->sync_retry_ns, 0);
	bool done = false;
	for (unsigned k = 0; k < 6000 && !done; k++) {
		pause_ms(10);
		done = member_status(a, mp[4], &ms) && ms.state == URAID_MEMBER_IN_SYNC && ms.slot == 1;
	}
	CHECK(done, "replace: the copy did not complete after the reshape");
	wait_idle(a, &ss, 10);
	CHECK(uraid_array_sync_start(a, URAID_SYNC_CHECK, err, sizeof(err)) == 0, "replace: check: %s",
	      err);
	pause_ms(50);
	wait_idle(a, &ss, 60);
	printf("replace: check after the copy: result %d, %" PRIu64 " mismatched sectors\n",
	       ss.result, ss.mismatch_sectors);
	CHECK(ss.kind == URAID_SYNC_CHECK && ss.result == 0 && ss.mismatch_sectors == 0,
	      "replace: check: kind %d result %d mismatches %" PRIu64, ss.kind, ss.result,
	      ss.mismatch_sectors);
	CHECK(uraid_array_pread(a, back, size, 0) == 0 && memcmp(back, data, size) == 0,
	      "replace: the data read back differs");
	CHECK(uraid_array_close(a) == 0, "replace: close");
	if (disk_sb_path(mp[0], &s0) == 0 && disk_sb_path(mp[4], &s4) == 0)
		CHECK(s4.data_offset == s0.data_offset && !(s4.feature_map & 0x56) &&
		      s4.raid_disks == 5, "replace: after: the replacement at data offset %" PRIu64
		      " feature 0x%x, member 0 at %" PRIu64, s4.data_offset, s4.feature_map,
		      s0.data_offset);
	free(data);
	free(back);
out:
	if (e)
		uraid_engine_destroy(e);
	for (unsigned i = 0; i < 6; i++)
		unlink(mp[i]);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);

	printf("test_reshape_r10_degraded seed %" PRIu64 "\n", seed);
	fflush(stdout);
	run_filled(seed);
	run_old_lost(seed + 1);
	run_fail_mid(seed + 2);
	run_replace_start(seed + 3);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
