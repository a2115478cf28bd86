// SPDX-License-Identifier: MIT
/*
 * RAID 5 <-> RAID 6 as md 6.1 / mdadm 4.2 do them (md/grow.c, grow_plan.c,
 * jobs/reshape_start.c), in-process with the engine's threads, members in
 * /dev/shm, 12 MiB each used for 8 MiB (room after the data, so that the
 * restripe goes backwards as mdadm picks it):
 *
 * 1. RAID 5 of 4 + a spare -> RAID 6 (uraid_array_grow --level=6) while a
 *    writer writes and reads random ranges against a shadow copy: the
 *    takeover (raid6, left-symmetric-6, 5 slots) and the restripe to
 *    left-symmetric start at once; on disk while it runs: feature map 0x64
 *    on the members (reshape, backwards, new offset), the spare in slot 4
 *    with feature 0x2 and recovery_offset 0 (md's raid5_start_reshape: in
 *    its slot, not in sync); at the end every byte equals the shadow, a
 *    check finds 0 mismatches (the Q slot was filled by the restripe, no
 *    rebuild), the superblocks say raid6 layout 2 with 5 members and no
 *    reshape or recovery bits, and the array assembles again with the
 *    same bytes.
 *    While it runs the array counts degraded 1, as md's sysfs does (the Q
 *    member is not In_sync until the end: raid5_calc_degraded), 0 after.
 * 2. A kill -9 at a random moment of that restripe (seeded, printed):
 *    assembly puts the member being filled back in slot 4 (its old rows not
 *    read, degraded 1), the data is whole, the restripe goes on and
 *    finishes, a check finds 0. Then the same with member 0 left out at the
 *    assembly after the kill (the old rows lack two slots, which RAID 6
 *    survives), and with members 0 and 1 left out: refused with the reason.
 *    And RAID 5 of 3 + 2 spares -> RAID 6 of 5 (--level=6
 *    --raid-devices=5, mdadm's one reshape after the takeover: layout and
 *    member count at once, forwards), killed and resumed the same way, the
 *    Q member's recovery_offset the position per new data member.
 * 2c. Killed between the members' superblock writes of that update (4 -> 5
 *    slots, and 3 -> 5 with --raid-devices=5; made on purpose, kill points
 *    seeded and printed): the members still at RAID 5, one event behind
 *    (the spares: their own older events), are taken in
 *    (md/assemble_takeover.c) and
 *    the restripe ends degraded 0; a member behind with any field off is
 *    still left out (run_takeover_window).
 * 2b. Killed as soon as the members show level 6: the takeover and the
 *    restripe's start reach the disks in one superblock update (the
 *    reshape bit is already there), so the restart goes on to the layout
 *    asked for (md, crashed between its two writes, would rebuild Q and
 *    stay in the -6 layout).
 * 3. RAID 6 of 5 -> RAID 5 (--level=5): a restripe to left-symmetric-6,
 *    then the takeover drops the Q slot, whose member becomes a spare;
 *    data whole, check 0, superblocks raid5 layout 2 with 4 members.
 * 4. RAID 5 -> 6 without a spare: refused, nothing changed. With a spare
 *    but a write-intent bitmap (the restripe refuses it, after the
 *    takeover was planned): refused, and no superblock was written (the
 *    takeover is made in memory and reaches the disks only with the
 *    restripe's start: events as before, raid5 on every member).
 *
 *   test_grow_r6 [seed]
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdatomic.h>
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

#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define NFILES 5
#define MEMBER_MIB 12u
#define USED_KIB 8192u
#define DEADLINE_S 180
#define IO_MAX (64u * 1024)

struct t {
	uint64_t seed;
	const char *name;
	char dir[64];
	char paths[NFILES][96];
	const char *p[NFILES];
	unsigned np;            /* members given to assembly */
	struct uraid_engine *e;
	struct uraid_array *a;
	uint8_t *shadow;
	uint64_t size;
	unsigned grow_disks;    /* the crash child's --raid-devices (0: not given) */
	bool r0;                /* the crash child grows a RAID 0 (--raid-devices only) */
	bool bitmap;            /* setup: an internal bitmap */
	_Atomic bool stop;
};

static void pause_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, NULL);
}

static int engine_up(struct t *t)
{
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	return uraid_engine_create(&eo, &t->e);
}

static int assemble_paths(struct t *t, const char *const *paths, unsigned n, uint32_t flags,
			  char *err, size_t errlen)
{
	struct uraid_assemble_opts ao = { .paths = paths, .npaths = n, .idle_clean_ms = 20,
					  .flags = flags };
	if (uraid_array_assemble(t->e, &ao, &t->a, err, errlen)) {
		t->a = NULL;
		return -1;
	}
	return 0;
}

static int assemble(struct t *t)
{
	char err[256];
	if (assemble_paths(t, t->p, t->np, 0, err, sizeof(err))) {
		fprintf(stderr, "%s: assemble: %s\n", t->name, err);
		return -1;
	}
	return 0;
}

/* level ("raid5"/"raid6") of n members, USED_KIB each, and the spare files. */
static int setup(struct t *t, const char *name, const char *level, unsigned n)
{
	t->name = name;
	snprintf(t->dir, sizeof(t->dir), "/dev/shm/uraid-grow-r6.%d", getpid());
	mkdir(t->dir, 0700);
	for (unsigned i = 0; i < NFILES; i++) {
		snprintf(t->paths[i], sizeof(t->paths[i]), "%s/m%u.img", t->dir, i);
		t->p[i] = t->paths[i];
		if (fixture_make_file(t->paths[i], MEMBER_MIB * MIB))
			return -1;
	}
	struct uraid_create_opts o = {
		.raid_disks = n, .chunk_kib = 64, .minor = 2,
		.bitmap = t->bitmap ? URAID_BITMAP_INTERNAL : URAID_BITMAP_NONE,
		.flags = URAID_CREATE_ASSUME_CLEAN, .paths = t->p, .npaths = n,
		.homehost = "<none>", .size_kib = strcmp(level, "raid0") ? USED_KIB : 0,
	};
	char err[256];
	if (uraid_level_parse(level, &o.level) || uraid_create(&o, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s: create: %s\n", name, err);
		return -1;
	}
	t->np = n;
	return 0;
}

static void teardown(struct t *t)
{
	if (t->a)
		CHECK(uraid_array_close(t->a) == 0, "%s: close", t->name);
	t->a = NULL;
	if (t->e)
		uraid_engine_destroy(t->e);
	t->e = NULL;
	for (unsigned i = 0; i < NFILES; i++)
		unlink(t->paths[i]);
	rmdir(t->dir);
	free(t->shadow);
	t->shadow = NULL;
}

static int fill(struct t *t)
{
	t->size = uraid_array_size(t->a);
	t->shadow = aligned_alloc(4096, t->size);
	if (!t->shadow)
		return -1;
	rng_fill(&t->seed, t->shadow, t->size);
	return uraid_array_pwrite(t->a, t->shadow, t->size, 0, 0);
}

static void verify(struct t *t, const char *when)
{
	uint8_t *back = aligned_alloc(4096, t->size);
	CHECK(back && uraid_array_pread(t->a, back, t->size, 0) == 0, "%s: %s: read", t->name, when);
	if (back && memcmp(back, t->shadow, t->size)) {
		uint64_t at = 0;
		while (at < t->size && back[at] == t->shadow[at])
			at++;
		CHECK(0, "%s: %s: data differs from byte %" PRIu64, t->name, when, at);
	}
	free(back);
}

/* Random writes and reads, each read checked against the shadow. */
static void *writer(void *arg)
{
	struct t *t = arg;
	uint64_t s = t->seed ^ 0x5eed;
	uint8_t *buf = aligned_alloc(4096, IO_MAX), *back = aligned_alloc(4096, IO_MAX);
	unsigned bad = 0;

	while (!atomic_load(&t->stop) && !bad) {
		uint64_t len = (rng_next(&s) % (IO_MAX / 4096) + 1) * 4096;
		uint64_t off = rng_next(&s) % ((t->size - len) / 4096) * 4096;
		if (rng_next(&s) % 3) {
			rng_fill(&s, buf, len);
			if (uraid_array_pwrite(t->a, buf, len, off, 0)) {
				bad++;
				break;
			}
			memcpy(t->shadow + off, buf, len);
		} else if (uraid_array_pread(t->a, back, len, off) ||
			   memcmp(back, t->shadow + off, len)) {
			CHECK(0, "%s: read of %" PRIu64 " bytes at %" PRIu64 " during the grow "
			      "differs", t->name, len, off);
			bad++;
		}
		pause_ms(1);
	}
	CHECK(bad == 0, "%s: the writer met an error", t->name);
	free(buf);
	free(back);
	return NULL;
}

/* Until no job runs (one ran, or none started), at most DEADLINE_S. */
static void wait_job(struct t *t, struct uraid_sync_status *st)
{
	time_t until = time(NULL) + DEADLINE_S;
	do {
		pause_ms(10);
		uraid_array_sync_status(t->a, st);
	} while ((st->running || st->kind == URAID_SYNC_NONE) && time(NULL) < until);
}

static int disk_sb(struct t *t, unsigned i, struct uraid_sb *out)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	int fd = open(t->paths[i], O_RDONLY);
	int rc = -1;

	if (p && fd >= 0 && uraid_probe_fd(fd, p) == 0 && p->chosen >= 0) {
		*out = p->loc[p->chosen].sb;
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

/* Member i's role in its own superblock (0xffff spare). */
static unsigned role_of(const struct uraid_sb *sb)
{
	return sb->dev_number < sb->max_dev ? sb->dev_roles[sb->dev_number] : 0xffff;
}

static int add_spare(struct t *t, unsigned i)
{
	char err[256];
	int rc = uraid_array_add_member(t->a, t->paths[i], 0, err, sizeof(err));
	CHECK(rc == 0, "%s: add %s: %s", t->name, t->paths[i], err);
	return rc;
}

static int grow_level(struct t *t, int level, char *done, size_t donelen)
{
	char err[256];
	struct uraid_grow g = { .level_set = true, .level = level };
	int rc = uraid_array_grow(t->a, &g, done, donelen, err, sizeof(err));
	CHECK(rc == 0, "%s: grow --level=%d: %s", t->name, level, err);
	return rc;
}

static void check_zero(struct t *t, const char *when)
{
	char err[256];
	struct uraid_sync_status st;
	CHECK(uraid_array_sync_start(t->a, URAID_SYNC_CHECK, err, sizeof(err)) == 0,
	      "%s: %s: check: %s", t->name, when, err);
	wait_job(t, &st);
	CHECK(st.kind == URAID_SYNC_CHECK && st.result == 0 && st.mismatch_sectors == 0,
	      "%s: %s: check: result %d, %" PRIu64 " mismatched sectors", t->name, when,
	      st.result, st.mismatch_sectors);
}

/* The superblocks of a finished RAID 6 of 5, left-symmetric: no reshape,
 * member qi (the Q slot's) in slot qi in sync. */
static void sb_raid6_done(struct t *t, const char *when, unsigned qi)
{
	struct uraid_sb sb, q;
	CHECK(disk_sb(t, 0, &sb) == 0 && disk_sb(t, qi, &q) == 0, "%s: %s: superblocks",
	      t->name, when);
	CHECK(sb.level == 6 && sb.layout == 2 && sb.raid_disks == 5 && !(sb.feature_map & 0x64),
	      "%s: %s: level %d layout %u raid_disks %u feature_map 0x%x (want 6 2 5, no "
	      "reshape bits)", t->name, when, sb.level, sb.layout, sb.raid_disks, sb.feature_map);
	CHECK(role_of(&q) == qi && !(q.feature_map & 0x2) && q.data_offset == sb.data_offset,
	      "%s: %s: the Q member: role %u feature_map 0x%x data_offset %" PRIu64 " (want %u, "
	      "no 0x2, %" PRIu64 ")", t->name, when, role_of(&q), q.feature_map, q.data_offset,
	      qi, sb.data_offset);
}

/* 1. RAID 5 of 4 -> RAID 6 under a writer. */
static void run_5_to_6(uint64_t seed)
{
	struct t t = { .seed = seed };
	struct uraid_sync_status st;
	struct uraid_array_status as;
	char done[1024];
	pthread_t w;

	if (setup(&t, "5->6", "raid5", 4) || engine_up(&t) || assemble(&t) || fill(&t) ||
	    add_spare(&t, 4)) {
		CHECK(0, "5->6: setup");
		teardown(&t);
		return;
	}
	t.np = 5;
	struct uraid_sb sb0;
	CHECK(disk_sb(&t, 0, &sb0) == 0, "5->6: superblock before");
	/* slow at first: the superblocks are looked at while it runs */
	uraid_array_sync_speed(t.a, 1000, 2000);
	pthread_create(&w, NULL, writer, &t);
	pause_ms(20);
	if (grow_level(&t, 6, done, sizeof(done)) == 0) {
		printf("5->6: %s", done);
		CHECK(strstr(done, "takeover RAID 5 -> RAID 6 (4 -> 5 slots, layout "
			      "left-symmetric-6)") && strstr(done, "restripe RAID 6: layout "
			      "left-symmetric-6 -> left-symmetric: started") && !strstr(done, "then"),
		      "5->6: the takeover and the restripe at once: %s", done);
		struct uraid_sb sb, q;
		CHECK(disk_sb(&t, 0, &sb) == 0 && disk_sb(&t, 4, &q) == 0, "5->6: superblocks");
		CHECK(sb.level == 6 && sb.layout == 18 && sb.new_level == 6 && sb.new_layout == 2 &&
		      sb.raid_disks == 5 && sb.delta_disks == 0 &&
		      (sb.feature_map & 0x64) == 0x64 && sb.new_offset > 0,
		      "5->6: while it runs: level %d layout %u -> %u, raid_disks %u delta %d, "
		      "feature_map 0x%x, new_offset %d (want 6, 18 -> 2, 5, 0, 0x64, > 0)",
		      sb.level, sb.layout, sb.new_layout, sb.raid_disks, sb.delta_disks,
		      sb.feature_map, sb.new_offset);
		CHECK(role_of(&q) == 4 && (q.feature_map & 0x2) && q.recovery_offset == 0 &&
		      (q.feature_map & 0x40) && q.new_offset == sb.new_offset,
		      "5->6: the spare while it runs: role %u feature_map 0x%x recovery_offset %"
		      PRIu64 " new_offset %d (want 4, 0x2, 0, %d)", role_of(&q), q.feature_map,
		      q.recovery_offset, q.new_offset, sb.new_offset);
		uraid_array_status(t.a, &as);
		CHECK(as.degraded == 1, "5->6: degraded %u while the Q slot is filled (md: 1)",
		      as.degraded);
		/* shown rebuilding in its slot (md: not In_sync, mdadm "spare rebuilding") */
		unsigned qstate = 99;
		for (unsigned i = 0; i < as.nmembers; i++)
			if (as.members[i].slot == 4)
				qstate = as.members[i].state;
		CHECK(qstate == URAID_MEMBER_REBUILDING, "5->6: the Q member's state %u while "
		      "it is filled (want rebuilding)", qstate);
		uraid_array_sync_speed(t.a, 1000, 200000);
		wait_job(&t, &st);
		CHECK(st.kind == URAID_SYNC_RESHAPE && !st.running && st.result == 0,
		      "5->6: the restripe ended: kind %d running %d result %d", st.kind,
		      st.running, st.result);
	}
	atomic_store(&t.stop, true);
	pthread_join(w, NULL);
	uraid_array_status(t.a, &as);
	CHECK(as.level == 6 && as.layout == 2 && as.raid_disks == 5 && as.degraded == 0 &&
	      as.size_bytes == t.size, "5->6: after: level %d layout %u raid_disks %u degraded "
	      "%u size %" PRIu64, as.level, as.layout, as.raid_disks, as.degraded, as.size_bytes);
	pause_ms(50);
	uraid_array_sync_status(t.a, &st);
	CHECK(st.kind == URAID_SYNC_RESHAPE && !st.running, "5->6: no rebuild after the "
	      "restripe (kind %d running %d)", st.kind, st.running);
	verify(&t, "after the grow");
	check_zero(&t, "after the grow");
	CHECK(uraid_array_close(t.a) == 0, "5->6: close");
	t.a = NULL;
	sb_raid6_done(&t, "after", 4);
	if (assemble(&t) == 0) {
		verify(&t, "assembled again");
		uraid_array_status(t.a, &as);
		CHECK(as.degraded == 0, "5->6: assembled again: degraded %u", as.degraded);
	}
	teardown(&t);
}

/* The child: RAID 5 -> 6, the restripe fast, until killed. */
static void crash_child(struct t *t)
{
	char done[1024], err[256];
	if (engine_up(t) || assemble(t))
		_exit(2);
	uraid_array_sync_speed(t->a, 20000, 20000);
	struct uraid_grow g = { .level_set = !t->r0, .level = 6, .raid_disks = t->grow_disks };
	if (uraid_array_grow(t->a, &g, done, sizeof(done), err, sizeof(err))) {
		fprintf(stderr, "crash child: %s\n", err);
		_exit(3);
	}
	for (;;)
		pause();
}

/*
 * 2. Killed part-way; assembled again with `leave_out` members (0, 1, 2:
 * members 0.. left out), which must finish it (or, two left out, refuse).
 * plus: RAID 5 of 3 with two spares to RAID 6 of 5 (forwards), else RAID 5
 * of 4 with one to RAID 6 of 5 (backwards). The Q slot's member is file n0.
 */
static void run_crash(uint64_t seed, unsigned leave_out, bool plus)
{
	struct t t = { .seed = seed };
	struct uraid_sync_status st;
	struct uraid_array_status as;
	uint64_t s = seed ^ 0xc7a5;
	char name[80];
	unsigned n0 = plus ? 3 : 4;

	snprintf(name, sizeof(name), "5->6%s crash, %u left out after", plus ? " +1 member" : "",
		 leave_out);
	if (setup(&t, name, "raid5", n0) || engine_up(&t) || assemble(&t) || fill(&t) ||
	    add_spare(&t, n0) || (plus && add_spare(&t, n0 + 1))) {
		CHECK(0, "%s: setup", name);
		teardown(&t);
		return;
	}
	t.np = 5;
	t.grow_disks = plus ? 5 : 0;
	CHECK(uraid_array_close(t.a) == 0, "%s: close", name);
	t.a = NULL;
	uraid_engine_destroy(t.e);
	t.e = NULL;
	/* backwards: the position runs down from the top (the old size);
	   forwards (plus): up from 0 */
	uint64_t top = t.size / 512;
	uint64_t target = rng_next(&s) % (top / 2) + 1;
	printf("%s: kill -9 once the restripe has moved %" PRIu64 " of %" PRIu64 " sectors\n",
	       name, target, top);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		crash_child(&t);
	struct uraid_sb sb = { 0 };
	time_t until = time(NULL) + DEADLINE_S;
	while (time(NULL) < until) {
		if (disk_sb(&t, 0, &sb) == 0 && (sb.feature_map & 0x4) &&
		    (plus ? sb.reshape_position >= target : sb.reshape_position + target <= top))
			break;
		int status;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			CHECK(0, "%s: the child ended by itself (status 0x%x)", name, status);
			pid = -1;
			break;
		}
		pause_ms(2);
	}
	if (pid > 0) {
		unsigned delay_us = (unsigned)(rng_next(&s) % 20000);
		printf("%s: kill %u us after the checkpoint passed it\n", name, delay_us);
		fflush(stdout);
		struct timespec ts = { 0, (long)delay_us * 1000 };
		nanosleep(&ts, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	struct uraid_sb q;
	CHECK(disk_sb(&t, 0, &sb) == 0 && (sb.feature_map & 0x4) && disk_sb(&t, n0, &q) == 0,
	      "%s: a reshape on disk after the kill (feature_map 0x%x)", name, sb.feature_map);
	printf("%s: killed at reshape_position %" PRIu64 "\n", name, sb.reshape_position);
	/* md's recovery_offset on the member being filled: 0 backwards, the
	   position in new member sectors forwards (3 data members after) */
	uint64_t want_ro = plus ? q.reshape_position / 3 : 0;
	CHECK(role_of(&q) == n0 && (q.feature_map & 0x2) && q.recovery_offset == want_ro,
	      "%s: the member being filled: role %u feature_map 0x%x recovery_offset %" PRIu64
	      " (want %u, 0x2, %" PRIu64 ")", name, role_of(&q), q.feature_map,
	      q.recovery_offset, n0, want_ro);
	if (plus) {
		struct uraid_sb nw;
		CHECK(disk_sb(&t, 4, &nw) == 0 && role_of(&nw) == 4 && !(nw.feature_map & 0x2) &&
		      sb.raid_disks == 5 && sb.delta_disks == 1 && sb.new_layout == 2 &&
		      sb.layout == 18 && !(sb.feature_map & 0x20),
		      "%s: the new member in slot 4 in sync (role %u feature_map 0x%x), raid_disks "
		      "%u delta %d layout %u -> %u feature_map 0x%x (want 5 1 18 -> 2, forwards)",
		      name, role_of(&nw), nw.feature_map, sb.raid_disks, sb.delta_disks, sb.layout,
		      sb.new_layout, sb.feature_map);
	}
	char err[300];
	if (engine_up(&t)) {
		CHECK(0, "%s: engine", name);
		teardown(&t);
		return;
	}
	int arc = assemble_paths(&t, t.p + leave_out, t.np - leave_out, 0, err, sizeof(err));
	if (leave_out >= 2) {
		CHECK(arc != 0 && strstr(err, "filled by the reshape"), "%s: refused: %s", name,
		      arc ? err : "assembled");
		printf("%s: %s\n", name, err);
		teardown(&t);
		return;
	}
	if (arc) {
		CHECK(0, "%s: assembly after the kill: %s", name, err);
		teardown(&t);
		return;
	}
	uraid_array_status(t.a, &as);
	struct uraid_sync_status now;
	uraid_array_sync_status(t.a, &now);
	/* the resumed restripe may already have ended (it runs at full speed
	   from the assembly on): then the slot is in sync */
	bool ended = now.kind == URAID_SYNC_RESHAPE && !now.running;
	bool qslot = false;
	for (unsigned i = 0; i < as.nmembers; i++)
		qslot |= as.members[i].slot == (int)n0;
	/* md: the member being filled is not In_sync, degraded counts it */
	CHECK(qslot && (as.degraded == leave_out + 1 || (ended && as.degraded == leave_out)),
	      "%s: assembled: the filled member in slot %u (%s), degraded %u (want %u%s)", name,
	      n0, qslot ? "yes" : "no", as.degraded, leave_out + 1,
	      ended ? ", or one less: the restripe had ended" : "");
	verify(&t, "assembled in mid-reshape");
	wait_job(&t, &st);
	CHECK(st.kind == URAID_SYNC_RESHAPE && st.result == 0, "%s: the resumed restripe: kind "
	      "%d result %d", name, st.kind, st.result);
	verify(&t, "after the resumed restripe");
	uraid_array_status(t.a, &as);
	uint64_t want_size = plus ? t.size / 2 * 3 : t.size;
	CHECK(as.level == 6 && as.layout == 2 && as.raid_disks == 5 && as.degraded == leave_out &&
	      as.size_bytes == want_size, "%s: after: level %d layout %u raid_disks %u degraded "
	      "%u size %" PRIu64 " (want 6 2 5 %u %" PRIu64 ")", name, as.level, as.layout,
	      as.raid_disks, as.degraded, as.size_bytes, leave_out, want_size);
	if (!leave_out) {
		check_zero(&t, "after the resumed restripe");
		CHECK(uraid_array_close(t.a) == 0, "%s: close", name);
		t.a = NULL;
		sb_raid6_done(&t, "after the resumed restripe", n0);
		if (plus)
			sb_raid6_done(&t, "after the resumed restripe (the new member)", 4);
	}
	teardown(&t);
}

/*
 * 2b. Killed at the first sight of level 6 on the members: the reshape bit
 * must be there with it (one superblock update for the takeover and the
 * restripe's start), and the restart finishes the layout asked for.
 */
static void run_crash_early(uint64_t seed)
{
	struct t t = { .seed = seed };
	struct uraid_sync_status st;
	struct uraid_array_status as;
	const char *name = "5->6 killed at the takeover";

	if (setup(&t, name, "raid5", 4) || engine_up(&t) || assemble(&t) || fill(&t) ||
	    add_spare(&t, 4)) {
		CHECK(0, "%s: setup", name);
		teardown(&t);
		return;
	}
	t.np = 5;
	CHECK(uraid_array_close(t.a) == 0, "%s: close", name);
	t.a = NULL;
	uraid_engine_destroy(t.e);
	t.e = NULL;
	pid_t pid = fork();
	if (pid == 0)
		crash_child(&t);
	/* as fast as member 0's superblock (1.2: at 4 KiB) can be read, its
	   raw fields (magic, feature_map at 8, level at 72): a few
	   microseconds a look, against a window of a superblock update */
	int fd = open(t.paths[0], O_RDONLY);
	uint8_t raw[256];
	uint32_t magic = 0, fm = 0, layout = 0;
	int32_t level = 0;
	bool seen = false;
	unsigned looks = 0;
	time_t until = time(NULL) + DEADLINE_S;
	while (fd >= 0 && !seen && time(NULL) < until) {
		looks++;
		if (pread(fd, raw, sizeof(raw), 4096) == (ssize_t)sizeof(raw)) {
			memcpy(&magic, raw, 4);
			memcpy(&fm, raw + 8, 4);
			memcpy(&level, raw + 72, 4);
			memcpy(&layout, raw + 76, 4);
			seen = magic == 0xa92b4efc && level == 6;
		}
		int status;
		if (!seen && looks % 1024 == 0 && waitpid(pid, &status, WNOHANG) == pid) {
			CHECK(0, "%s: the child ended by itself (status 0x%x)", name, status);
			pid = -1;
			break;
		}
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	if (fd >= 0)
		close(fd);
	printf("%s: level 6 first seen after %u looks: layout %u, feature_map 0x%x\n", name,
	       looks, layout, fm);
	CHECK(seen && (fm & 0x4) && layout == 18, "%s: the takeover on disk only with the "
	      "reshape (first seen: feature_map 0x%x, layout %u)", name, fm, layout);
	struct uraid_sb sb;
	CHECK(disk_sb(&t, 0, &sb) == 0 && (sb.feature_map & 0x4) && sb.new_layout == 2,
	      "%s: after the kill: a reshape to layout 2 (feature_map 0x%x, new_layout %u)",
	      name, sb.feature_map, sb.new_layout);
	/* the kill may land between the members' superblock writes: those
	   still at level 5 (one event behind, nothing moved yet) are taken in
	   as the update would have left them (md/assemble_takeover.c), so the
	   restripe ends with every member (run_takeover_window makes each
	   such state on purpose) */
	unsigned behind = 0;
	for (unsigned i = 0; i < t.np; i++) {
		struct uraid_sb mi;
		if (disk_sb(&t, i, &mi) == 0 && mi.level != 6)
			behind++;
	}
	printf("%s: %u of %u members still at level 5 after the kill%s\n", name, behind, t.np,
	       behind ? " (the kill landed mid-update: they are taken in)" : "");
	if (engine_up(&t) || assemble(&t)) {
		CHECK(0, "%s: assembly after the kill (%u members behind)", name, behind);
		teardown(&t);
		return;
	}
	verify(&t, "assembled after the kill");
	wait_job(&t, &st);
	CHECK(st.kind == URAID_SYNC_RESHAPE && st.result == 0, "%s: the restripe after the "
	      "restart: kind %d result %d", name, st.kind, st.result);
	uraid_array_status(t.a, &as);
	CHECK(as.level == 6 && as.layout == 2 && as.raid_disks == 5 && as.degraded == 0,
	      "%s: after: level %d layout %u raid_disks %u degraded %u (want 6 2 5 0; %u were "
	      "behind)", name, as.level, as.layout, as.raid_disks, as.degraded, behind);
	verify(&t, "after the restripe");
	check_zero(&t, "after the restripe");
	teardown(&t);
}

/* Member i's superblock area as bytes (metadata 1.2: 4 KiB at 4 KiB). */
#define SB_AT 4096
static int sb_raw(struct t *t, unsigned i, uint8_t *buf, bool write)
{
	int fd = open(t->paths[i], write ? O_WRONLY : O_RDONLY);
	ssize_t n = -1;
	if (fd >= 0) {
		n = write ? pwrite(fd, buf, URAID_SB_BYTES, SB_AT) : pread(fd, buf, URAID_SB_BYTES, SB_AT);
		close(fd);
	}
	return n == URAID_SB_BYTES ? 0 : -1;
}

static int sb_put(struct t *t, unsigned i, struct uraid_sb *sb)
{
	alignas(4096) uint8_t buf[URAID_SB_BYTES];
	uraid_sb_encode(sb, buf);
	return sb_raw(t, i, buf, true);
}

static int copy_file(const char *from, const char *to)
{
	size_t len = (size_t)MEMBER_MIB * MIB;
	uint8_t *buf = malloc(len);
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int rc = buf && in >= 0 && out >= 0 && pread(in, buf, len, 0) == (ssize_t)len &&
		 pwrite(out, buf, len, 0) == (ssize_t)len ? 0 : -1;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	free(buf);
	return rc;
}

/*
 * The child grows to RAID 6 and is killed as soon as every member holds
 * the takeover's update (all five at level 6, read as they are written).
 * 0: captured, the restripe still at its start (top, backwards); 1: it had
 * moved already (try again); -1: failed.
 */
static int capture_update(struct t *t, const char *name)
{
	pid_t pid = fork();
	if (pid == 0)
		crash_child(t);
	alignas(4096) uint8_t buf[URAID_SB_BYTES];
	struct uraid_sb sb[NFILES];
	unsigned at6 = 0, looks = 0;
	int to = t->r0 ? 4 : 6;     /* the takeover's level */
	time_t until = time(NULL) + DEADLINE_S;
	while (at6 < NFILES && time(NULL) < until) {
		at6 = 0;
		for (unsigned i = 0; i < NFILES; i++)
			at6 += sb_raw(t, i, buf, false) == 0 && uraid_sb_decode(buf, &sb[i]) == 0 &&
			       sb[i].level == to;
		int status;
		if (at6 < NFILES && ++looks % 256 == 0 && waitpid(pid, &status, WNOHANG) == pid) {
			CHECK(0, "%s: the child ended by itself (status 0x%x)", name, status);
			return -1;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (at6 < NFILES) {
		CHECK(0, "%s: the members never all showed level %d", name, to);
		return -1;
	}
	/* backwards (same count): from the top, the array's size; forwards
	   (--raid-devices=5): from 0 */
	uint64_t start = t->grow_disks ? 0 : t->size / 512;
	uint32_t bits = t->grow_disks ? 0x4 : 0x24;
	for (unsigned i = 0; i < NFILES; i++) {
		if (disk_sb(t, i, &sb[i]))
			return -1;
		if (sb[i].events != sb[0].events || (sb[i].feature_map & 0x24) != bits ||
		    sb[i].reshape_position != start) {
			printf("%s: the restripe had moved (member %u: events %" PRIu64 " feature_map "
			       "0x%x reshape_position %" PRIu64 ", start %" PRIu64 ")\n", name, i,
			       sb[i].events, sb[i].feature_map, sb[i].reshape_position, start);
			return 1;
		}
	}
	printf("%s: captured after %u looks: events %" PRIu64 ", reshape_position %" PRIu64
	       " (its start: nothing moved)\n", name, looks, sb[0].events, start);
	return 0;
}

/* Member i's state after assembly (URAID_MEMBER_MISSING if not listed). */
static enum uraid_member_state state_of(struct t *t, unsigned i, int *slot)
{
	struct uraid_array_status as;
	uraid_array_status(t->a, &as);
	for (unsigned k = 0; k < as.nmembers; k++)
		if (!strcmp(as.members[k].path, t->paths[i])) {
			*slot = as.members[k].slot;
			return as.members[k].state;
		}
	*slot = -1;
	return URAID_MEMBER_MISSING;
}

static void restore(struct t *t, char backup[NFILES][112])
{
	for (unsigned i = 0; i < NFILES; i++)
		CHECK(copy_file(backup[i], t->paths[i]) == 0, "%s: restore member %u", t->name, i);
}

/*
 * 2c and 2d's start: an array of LEVEL on files 0..N0-1 with files N0..4
 * added as spares (data seed SEED + the attempt), closed, the members'
 * superblocks kept in OLD (what they held before the growth to GROW_DISKS
 * members, 0: the same count); the growth's update captured on every member
 * with the restripe at its start (capture_update, up to 4 attempts), then
 * every member copied to BACKUP. 0: captured, T set up; -1: failed
 * (reported; T torn down).
 */
static int capture_window(struct t *t, const char *name, uint64_t seed, const char *level,
			  unsigned n0, unsigned grow_disks, uint8_t (*old)[URAID_SB_BYTES],
			  char backup[NFILES][112])
{
	int got = 1;

	for (unsigned attempt = 1; attempt <= 4 && got == 1; attempt++) {
		*t = (struct t){ .seed = seed + attempt, .grow_disks = grow_disks,
				 .r0 = !strcmp(level, "raid0") };
		bool ok = !setup(t, name, level, n0) && !engine_up(t) && !assemble(t) && !fill(t);
		for (unsigned i = n0; ok && i < NFILES; i++)
			ok = !add_spare(t, i);
		if (!ok) {
			CHECK(0, "%s: setup", name);
			teardown(t);
			return -1;
		}
		t->np = 5;
		CHECK(uraid_array_close(t->a) == 0, "%s: close", name);
		t->a = NULL;
		uraid_engine_destroy(t->e);
		t->e = NULL;
		for (unsigned i = 0; i < NFILES; i++)
			CHECK(sb_raw(t, i, old[i], false) == 0, "%s: superblock %u", name, i);
		printf("%s: attempt %u (data seed %" PRIu64 ")\n", name, attempt, seed + attempt);
		got = capture_update(t, name);
		if (got)
			teardown(t);
	}
	if (got) {
		CHECK(0, "%s: no capture with the restripe at its start", name);
		return -1;
	}
	for (unsigned i = 0; i < NFILES; i++) {
		snprintf(backup[i], sizeof(backup[i]), "%s/full%u.img", t->dir, i);
		CHECK(copy_file(t->paths[i], backup[i]) == 0, "%s: keep member %u", name, i);
	}
	return 0;
}

/*
 * One kill point of 2c and 2d: every member as the captured update left it
 * (BACKUP), then the superblocks from before it (OLD, RAID OLD_LEVEL) put
 * back on BEHIND members in a seeded order (from *S), named in LIST: what
 * a kill after the other members' writes leaves. Then assembled. 0:
 * assembled; -1: failed (reported).
 */
static int kill_point(struct t *t, const char *name, uint64_t *s, unsigned behind, int old_level,
		      uint8_t (*old)[URAID_SB_BYTES], char backup[NFILES][112], char list[64])
{
	unsigned order[NFILES] = { 0, 1, 2, 3, 4 };
	for (unsigned i = NFILES - 1; i > 0; i--) {
		unsigned j = (unsigned)(rng_next(s) % (i + 1)), x = order[i];
		order[i] = order[j];
		order[j] = x;
	}
	list[0] = '\0';
	restore(t, backup);
	for (unsigned k = 0; k < behind; k++) {
		CHECK(sb_raw(t, order[k], old[order[k]], true) == 0, "%s: put back", name);
		snprintf(list + strlen(list), 64 - strlen(list), "%s%u", k ? "," : "", order[k]);
	}
	printf("%s: kill point %u: members %s still RAID %d (behind)\n", name, behind, list,
	       old_level);
	fflush(stdout);
	if (engine_up(t) || assemble(t)) {
		CHECK(0, "%s: members %s behind: assembly", name, list);
		return -1;
	}
	return 0;
}

/* A kill point's end: assembled again, the data whole; the engine down. */
static void kill_point_end(struct t *t, const char *name)
{
	if (assemble(t) == 0) {
		verify(t, "assembled again");
		CHECK(uraid_array_close(t->a) == 0, "%s: close", name);
		t->a = NULL;
	}
	uraid_engine_destroy(t->e);
	t->e = NULL;
}

static void window_end(struct t *t, char backup[NFILES][112])
{
	for (unsigned i = 0; i < NFILES; i++)
		unlink(backup[i]);
	teardown(t);
}

/*
 * 2c. The kill between the members' superblock writes of the takeover's
 * update, made on purpose: the update captured on every member with the
 * restripe at its start, then the RAID 5 superblocks put back on a seeded
 * set of members (1 to 4 of the 5, the Q spare among them or not): what a
 * kill after the other members' writes leaves. Each is assembled: every
 * member is taken in (the behind ones as the update would have left them,
 * the Q spare filled by the restripe), the data is whole, the restripe
 * finishes with degraded 0, a check finds 0, every superblock says RAID 6
 * layout 2 in its own slot. Then what must still be left out (md's kick):
 * a member two events behind, of another chunk, data offset or layout,
 * and one whose fellows' restripe has moved (read-only assemblies).
 */
static void run_takeover_window(uint64_t seed, bool plus)
{
	const char *name = plus ? "5 of 3 -> 6 of 5 killed between the superblock writes"
				: "5->6 killed between the superblock writes";
	unsigned n0 = plus ? 3 : 4;     /* the RAID 5's members; file n0: the Q slot's */
	struct t t = { .seed = seed };
	uint8_t old[NFILES][URAID_SB_BYTES];   /* the superblocks before the growth */
	char backup[NFILES][112];
	uint64_t s = seed ^ 0x7a6e;
	int failed_before = failures;

	if (capture_window(&t, name, seed, "raid5", n0, plus ? 5 : 0, old, backup))
		return;
	for (unsigned behind = 1; behind < NFILES && failures == failed_before; behind++) {
		char list[64];
		if (kill_point(&t, name, &s, behind, 5, old, backup, list))
			break;
		struct uraid_array_status as;
		struct uraid_sync_status st;
		uraid_array_status(t.a, &as);
		CHECK(as.degraded == 1, "%s: members %s behind: degraded %u at assembly (want 1: "
		      "the Q slot being filled)", name, list, as.degraded);
		for (unsigned i = 0; i < NFILES; i++) {
			int slot;
			enum uraid_member_state ms = state_of(&t, i, &slot);
			CHECK(slot == (int)i && ms == (i == n0 ? URAID_MEMBER_REBUILDING
								: URAID_MEMBER_IN_SYNC),
			      "%s: members %s behind: member %u in slot %d state %u", name, list, i,
			      slot, ms);
		}
		verify(&t, "assembled with members behind");
		wait_job(&t, &st);
		CHECK(st.kind == URAID_SYNC_RESHAPE && st.result == 0, "%s: members %s behind: "
		      "the restripe: kind %d result %d", name, list, st.kind, st.result);
		uraid_array_status(t.a, &as);
		uint64_t want_size = plus ? t.size / 2 * 3 : t.size;
		CHECK(as.level == 6 && as.layout == 2 && as.raid_disks == 5 && as.degraded == 0 &&
		      as.size_bytes == want_size, "%s: members %s behind: after: level %d layout %u "
		      "raid_disks %u degraded %u size %" PRIu64 " (want 6 2 5 0 %" PRIu64 ")", name,
		      list, as.level, as.layout, as.raid_disks, as.degraded, as.size_bytes, want_size);
		verify(&t, "after the restripe");
		check_zero(&t, "after the restripe");
		CHECK(uraid_array_close(t.a) == 0, "%s: close", name);
		t.a = NULL;
		sb_raid6_done(&t, "after the restripe", n0);
		struct uraid_sb sb0, sb;
		CHECK(disk_sb(&t, 0, &sb0) == 0, "%s: superblock 0", name);
		for (unsigned i = 1; i < NFILES; i++)
			CHECK(disk_sb(&t, i, &sb) == 0 && sb.events == sb0.events && sb.level == 6 &&
			      sb.layout == 2 && role_of(&sb) == i && !(sb.feature_map & 0x66),
			      "%s: members %s behind: member %u after: events %" PRIu64 "/%" PRIu64
			      " level %d layout %u role %u feature_map 0x%x", name, list, i,
			      sb.events, sb0.events, sb.level, sb.layout, role_of(&sb), sb.feature_map);
		kill_point_end(&t, name);
	}
	/* what stays left out: member 1 behind with one field off */
	static const char *const what[] = {
		"two events behind", "another chunk", "another data_offset",
		"another RAID 5 layout", "the restripe moved on the others",
	};
	for (unsigned k = 0; k < sizeof(what) / sizeof(what[0]) && failures == failed_before; k++) {
		struct uraid_sb o, f;
		restore(&t, backup);
		CHECK(uraid_sb_decode(old[1], &o) == 0, "%s: decode", name);
		switch (k) {
		case 0: o.events--; break;
		case 1: o.chunksize *= 2; break;
		case 2: o.data_offset -= 8; break;
		case 3: o.layout = 0; break;
		case 4:
			/* every other member at a later checkpoint, one step down */
			for (unsigned i = 0; i < NFILES; i++) {
				if (i == 1)
					continue;
				CHECK(disk_sb(&t, i, &f) == 0, "%s: superblock %u", name, i);
				if (plus)
					f.reshape_position += 3 * 2 * f.chunksize;
				else
					f.reshape_position -= 3 * 2 * f.chunksize;
				CHECK(sb_put(&t, i, &f) == 0, "%s: write %u", name, i);
			}
			break;
		}
		CHECK(sb_put(&t, 1, &o) == 0, "%s: write member 1", name);
		char err[400];
		if (engine_up(&t) || assemble_paths(&t, t.p, NFILES, URAID_ASSEMBLE_READONLY, err,
						    sizeof(err))) {
			CHECK(0, "%s: member 1 behind, %s: assembly: %s", name, what[k], err);
			break;
		}
		int slot;
		enum uraid_member_state ms = state_of(&t, 1, &slot);
		printf("%s: member 1 behind with %s: state %u slot %d\n", name, what[k], ms, slot);
		CHECK(ms == URAID_MEMBER_STALE && slot < 0, "%s: member 1 behind with %s: "
		      "state %u slot %d (want left out)", name, what[k], ms, slot);
		CHECK(uraid_array_close(t.a) == 0, "%s: close", name);
		t.a = NULL;
		uraid_engine_destroy(t.e);
		t.e = NULL;
	}
	window_end(&t, backup);
}

/*
 * 2d. The same window for a RAID 0 growth (RAID 0 of 4 and a spare ->
 * 5: the takeover to RAID 4, parity-last with P missing, and the forwards
 * restripe in one update): the update captured with the restripe at its
 * start, the RAID 0 superblocks put back on a seeded set of 1 to 4 of the
 * 5 (the spare among them or not). Each is assembled: every member taken
 * in its slot, the data whole, the restripe runs to RAID 4 of 6 missing P
 * (the takeover back to RAID 0 was the killed grow's), every superblock
 * then says so in its own slot, and it assembles again, the data whole.
 * Then member 1 two events behind or of another chunk stays out (md's
 * kick), which a RAID 4 missing P cannot run without: refused.
 */
static void run_takeover_window_r0(uint64_t seed)
{
	const char *name = "RAID 0 of 4 -> 5 killed between the superblock writes";
	struct t t = { .seed = seed };
	uint8_t old[NFILES][URAID_SB_BYTES];   /* the superblocks before the growth */
	char backup[NFILES][112];
	uint64_t s = seed ^ 0x7a60;
	int failed_before = failures;

	if (capture_window(&t, name, seed, "raid0", 4, 5, old, backup))
		return;
	for (unsigned behind = 1; behind < NFILES && failures == failed_before; behind++) {
		char list[64];
		if (kill_point(&t, name, &s, behind, 0, old, backup, list))
			break;
		struct uraid_array_status as;
		struct uraid_sync_status st;
		for (unsigned i = 0; i < NFILES; i++) {
			int slot;
			enum uraid_member_state ms = state_of(&t, i, &slot);
			CHECK(slot == (int)i && (i == 4 ? ms == URAID_MEMBER_REBUILDING ||
							      ms == URAID_MEMBER_IN_SYNC
							    : ms == URAID_MEMBER_IN_SYNC),
			      "%s: members %s behind: member %u in slot %d state %u", name, list, i,
			      slot, ms);
		}
		verify(&t, "assembled with members behind");
		/* the restripe; the takeover back to RAID 0 was the killed
		   grow's last step, which no superblock records (md's is
		   mdadm's --grow process's): a RAID 4 of 6 missing P stays,
		   as md leaves it */
		wait_job(&t, &st);
		uraid_array_status(t.a, &as);
		CHECK(st.kind == URAID_SYNC_RESHAPE && st.result == 0 && as.level == 4 &&
		      as.raid_disks == 6 && as.degraded == 1 && as.size_bytes == t.size / 4 * 5,
		      "%s: members %s behind: after: kind %d result %d level %d raid_disks %u "
		      "degraded %u size %" PRIu64 " (want 4 6 1 %" PRIu64 ")", name, list, st.kind,
		      st.result, as.level, as.raid_disks, as.degraded, as.size_bytes,
		      t.size / 4 * 5);
		verify(&t, "after the restripe");
		CHECK(uraid_array_close(t.a) == 0, "%s: close", name);
		t.a = NULL;
		struct uraid_sb sb0, sb;
		CHECK(disk_sb(&t, 0, &sb0) == 0, "%s: superblock 0", name);
		for (unsigned i = 0; i < NFILES; i++)
			CHECK(disk_sb(&t, i, &sb) == 0 && sb.events == sb0.events && sb.level == 4 &&
			      sb.raid_disks == 6 && role_of(&sb) == i && !(sb.feature_map & 0x66),
			      "%s: members %s behind: member %u after: events %" PRIu64 "/%" PRIu64
			      " level %d raid_disks %u role %u feature_map 0x%x", name, list, i,
			      sb.events, sb0.events, sb.level, sb.raid_disks, role_of(&sb),
			      sb.feature_map);
		kill_point_end(&t, name);
	}
	static const char *const what[] = { "two events behind", "another chunk" };
	for (unsigned k = 0; k < 2 && failures == failed_before; k++) {
		struct uraid_sb o;
		restore(&t, backup);
		CHECK(uraid_sb_decode(old[1], &o) == 0, "%s: decode", name);
		if (k == 0)
			o.events--;
		else
			o.chunksize *= 2;
		CHECK(sb_put(&t, 1, &o) == 0, "%s: write member 1", name);
		char err[400] = "";
		int rc = engine_up(&t) ? -1 : assemble_paths(&t, t.p, NFILES,
							     URAID_ASSEMBLE_READONLY, err,
							     sizeof(err));
		int slot = -1;
		enum uraid_member_state ms = rc ? URAID_MEMBER_MISSING : state_of(&t, 1, &slot);
		printf("%s: member 1 behind with %s: assembly %d (%s), state %u slot %d\n", name,
		       what[k], rc, err, ms, slot);
		CHECK(slot < 0, "%s: member 1 behind with %s: taken in slot %d", name, what[k],
		      slot);
		if (t.a)
			CHECK(uraid_array_close(t.a) == 0, "%s: close", name);
		t.a = NULL;
		if (t.e)
			uraid_engine_destroy(t.e);
		t.e = NULL;
	}
	window_end(&t, backup);
}

/* 3. RAID 6 of 5 -> RAID 5 under a writer. */
static void run_6_to_5(uint64_t seed)
{
	struct t t = { .seed = seed };
	struct uraid_sync_status st;
	struct uraid_array_status as;
	char done[1024], err[256];
	pthread_t w;

	if (setup(&t, "6->5", "raid6", 5) || engine_up(&t) || assemble(&t) || fill(&t)) {
		CHECK(0, "6->5: setup");
		teardown(&t);
		return;
	}
	pthread_create(&w, NULL, writer, &t);
	pause_ms(20);
	if (grow_level(&t, 5, done, sizeof(done)) == 0) {
		printf("6->5: %s", done);
		CHECK(strstr(done, "restripe RAID 6: layout left-symmetric -> left-symmetric-6") &&
		      strstr(done, "then, when the restripe ends: takeover RAID 6 -> RAID 5"),
		      "6->5: restripe to the -6 layout, then the takeover: %s", done);
		struct uraid_sb sb;
		CHECK(disk_sb(&t, 0, &sb) == 0, "6->5: superblock");
		wait_job(&t, &st);
		CHECK(st.kind == URAID_SYNC_RESHAPE && st.result == 0, "6->5: the restripe: kind "
		      "%d result %d", st.kind, st.result);
		int rc = uraid_array_grow_continue(t.a, done, sizeof(done), err, sizeof(err));
		CHECK(rc == 1, "6->5: the takeover after the restripe (%d): %s", rc, rc < 0 ? err : done);
	}
	atomic_store(&t.stop, true);
	pthread_join(w, NULL);
	uraid_array_status(t.a, &as);
	unsigned spares = 0;
	for (unsigned i = 0; i < as.nmembers; i++)
		spares += as.members[i].slot < 0;
	CHECK(as.level == 5 && as.layout == 2 && as.raid_disks == 4 && as.degraded == 0 &&
	      spares == 1 && as.size_bytes == t.size, "6->5: after: level %d layout %u "
	      "raid_disks %u degraded %u spares %u size %" PRIu64, as.level, as.layout,
	      as.raid_disks, as.degraded, spares, as.size_bytes);
	verify(&t, "after");
	check_zero(&t, "after");
	CHECK(uraid_array_close(t.a) == 0, "6->5: close");
	t.a = NULL;
	struct uraid_sb sb, q;
	CHECK(disk_sb(&t, 0, &sb) == 0 && disk_sb(&t, 4, &q) == 0, "6->5: superblocks");
	CHECK(sb.level == 5 && sb.layout == 2 && sb.raid_disks == 4 && !(sb.feature_map & 0x64) &&
	      role_of(&q) == 0xffff, "6->5: superblocks: level %d layout %u raid_disks %u "
	      "feature_map 0x%x, the Q member's role 0x%x (want 5 2 4, spare)", sb.level,
	      sb.layout, sb.raid_disks, sb.feature_map, role_of(&q));
	t.np = 4;
	if (assemble(&t) == 0)
		verify(&t, "assembled again");
	teardown(&t);
}

/* 4. No spare for the Q slot. */
static void run_refusal(uint64_t seed)
{
	struct t t = { .seed = seed };
	char done[512] = "", err[256] = "";

	if (setup(&t, "5->6 no spare", "raid5", 4) || engine_up(&t) || assemble(&t)) {
		CHECK(0, "refusal: setup");
		teardown(&t);
		return;
	}
	struct uraid_grow g = { .level_set = true, .level = 6 };
	int rc = uraid_array_grow(t.a, &g, done, sizeof(done), err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "needs a spare"), "refusal: %d %s", rc, err);
	printf("refusal: %s\n", err);
	struct uraid_array_status as;
	uraid_array_status(t.a, &as);
	CHECK(as.level == 5 && as.raid_disks == 4, "refusal: level %d raid_disks %u after",
	      as.level, as.raid_disks);
	teardown(&t);
}

/* 4b. The restripe refused after its takeover: nothing reaches the disks. */
static void run_refusal_bitmap(uint64_t seed)
{
	struct t t = { .seed = seed, .bitmap = true };
	const char *name = "5->6 with a bitmap";
	char done[512] = "", err[400] = "";

	if (setup(&t, name, "raid5", 4) || engine_up(&t) || assemble(&t) || add_spare(&t, 4)) {
		CHECK(0, "%s: setup", name);
		teardown(&t);
		return;
	}
	/* the spare's superblock and the clean marking written: waited for as
	   the array reports it (a fixed 100 ms can end before the marking on a
	   loaded machine, which then changes the events compared below) */
	bool quiet = false;
	for (unsigned k = 0; k < 2000 && !quiet; k++) {
		struct uraid_array_status as;
		quiet = uraid_array_status(t.a, &as) == 0 && as.clean && !as.in_flight &&
			!as.bitmap_dirty_bits;
		if (!quiet)
			pause_ms(5);
	}
	CHECK(quiet, "%s: clean, nothing in flight, no bit set within 10 s", name);
	struct uraid_sb before[NFILES], after;
	for (unsigned i = 0; i < NFILES; i++)
		CHECK(disk_sb(&t, i, &before[i]) == 0, "%s: superblock %u before", name, i);
	struct uraid_grow g = { .level_set = true, .level = 6 };
	int rc = uraid_array_grow(t.a, &g, done, sizeof(done), err, sizeof(err));
	printf("%s: %d %s\n", name, rc, err);
	CHECK(rc == -EINVAL && strstr(err, "write-intent bitmap") && strstr(err, "as it was"),
	      "%s: refused, the takeover not made: %d %s", name, rc, err);
	for (unsigned i = 0; i < NFILES; i++)
		CHECK(disk_sb(&t, i, &after) == 0 && after.events == before[i].events &&
		      after.level == 5 && after.raid_disks == 4, "%s: member %u: events %" PRIu64
		      " -> %" PRIu64 ", level %d, raid_disks %u (nothing written)", name, i,
		      before[i].events, after.events, after.level, after.raid_disks);
	struct uraid_array_status as;
	uraid_array_status(t.a, &as);
	CHECK(as.level == 5 && as.layout == 2 && as.raid_disks == 4 && as.degraded == 0,
	      "%s: in memory after: level %d layout %u raid_disks %u degraded %u", name,
	      as.level, as.layout, as.raid_disks, as.degraded);
	teardown(&t);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : (uint64_t)time(NULL);
	printf("test_grow_r6 seed %" PRIu64 "\n", seed);
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "r0")) {     /* 2d alone */
		run_takeover_window_r0(seed + 15);
		printf("%s\n", failures ? "FAIL" : "PASS");
		return failures ? 1 : 0;
	}
	run_refusal(seed);
	run_refusal_bitmap(seed);
	run_5_to_6(seed);
	for (unsigned k = 0; k < 3; k++)
		run_crash(seed + 1 + k, 0, false);
	run_crash(seed + 7, 1, false);
	run_crash(seed + 8, 2, false);
	run_crash(seed + 10, 0, true);
	run_crash(seed + 11, 1, true);
	run_crash_early(seed + 12);
	run_takeover_window(seed + 13, false);
	run_takeover_window(seed + 14, true);
	run_takeover_window_r0(seed + 15);
	run_6_to_5(seed + 9);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
