// SPDX-License-Identifier: MIT
/*
 * uraid grow --consistency-policy=ppl killed at each write: the member
 * images' metadata (everything before the data) is taken after every step
 * of grow_ppl.c (the areas emptied, each superblock written, the last
 * update), then each of those states is put back on the members and
 * assembled, all members given and in both orders:
 *  - uraid assembles every state, every member in its slot or a spare
 *    (none left out as stale), the PPL on exactly from the state where the
 *    freshest superblock has it;
 *  - md's rules hold in every state (read from the superblocks): every
 *    member within one event of the freshest (md leaves out older ones),
 *    and when the freshest says PPL, every member's own superblock gives
 *    its place (md reads it per member and will not start otherwise);
 *  - the data areas are never touched.
 * Then the PPL is removed and the array assembles without it. A member
 * that fails its area write refuses the grow with nothing changed.
 *
 * RAID 5, 4 members + 1 spare of 24 MiB, metadata 1.2, 64 KiB chunk, no
 * bad-block log (as mdadm --update=no-bbl leaves it): the PPL takes 264
 * sectors at superblock + 8.
 *
 *   test_grow_ppl_crash [SEED]      (SEED: the data areas' bytes)
 */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>
#include <uraid/superblock.h>

#include "engine/core/array.h"
#include "engine/md/ppl.h"
#include "../support/check.h"
#include "../support/array_fixture.h"

#define N 5                     /* 4 in slots, 1 spare */
#define MEMBER_MIB 24u
#define SB_AT 4096              /* metadata 1.2 */
#define STEPS 16
#define PPL_BITS (URAID_FEATURE_PPL | URAID_FEATURE_MULTIPLE_PPLS)

struct snaps {
	const char *const *paths;
	size_t head;                    /* bytes before the data */
	unsigned n;
	uint8_t *img[STEPS][N];
};

static int rw(const char *path, void *buf, size_t len, off_t at, bool write)
{
	int fd = open(path, write ? O_WRONLY : O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = write ? pwrite(fd, buf, len, at) : pread(fd, buf, len, at);
	close(fd);
	return n == (ssize_t)len ? 0 : -1;
}

static void hook(void *arg, unsigned step)
{
	struct snaps *s = arg;

	CHECK(step == s->n && step < STEPS, "step %u, %u expected", step, s->n);
	if (step >= STEPS)
		return;
	for (unsigned i = 0; i < N; i++) {
		s->img[step][i] = malloc(s->head);
		CHECK(s->img[step][i] && rw(s->paths[i], s->img[step][i], s->head, 0, false) == 0,
		      "step %u: member %u read", step, i);
	}
	s->n++;
}

/* FNV-1a over each member's data area (head..end). */
static uint64_t data_sum(const char *const *paths, size_t head)
{
	uint64_t h = 14695981039346656037ull;
	size_t len = ((size_t)MEMBER_MIB << 20) - head;
	uint8_t *buf = malloc(len);

	for (unsigned i = 0; buf && i < N; i++) {
		if (rw(paths[i], buf, len, (off_t)head, false))
			return 0;
		for (size_t k = 0; k < len; k++)
			h = (h ^ buf[k]) * 1099511628211ull;
	}
	free(buf);
	return h;
}

static int sb_of(const uint8_t *img, struct uraid_sb *sb)
{
	return uraid_sb_decode(img + SB_AT, sb);
}

/* md's view of a state: every member within one event of the freshest,
   and the freshest's PPL backed by every member's own place. */
static void md_rules(unsigned step, uint8_t *const *img, bool *fresh_ppl)
{
	struct uraid_sb sb[N];
	unsigned f = 0;

	for (unsigned i = 0; i < N; i++) {
		CHECK(sb_of(img[i], &sb[i]) == 0, "step %u: member %u superblock", step, i);
		if (sb[i].events > sb[f].events)
			f = i;
	}
	*fresh_ppl = sb[f].feature_map & PPL_BITS;
	for (unsigned i = 0; i < N; i++) {
		/* md counts events of members with a slot only */
		CHECK(uraid_sb_role(&sb[i]) >= URAID_ROLE_MAX || sb[i].events + 1 >= sb[f].events,
		      "step %u: member %u at events %" PRIu64 ", more than one behind %" PRIu64
		      " (md leaves it out)", step, i, sb[i].events, sb[f].events);
		if (*fresh_ppl)
			CHECK((sb[i].feature_map & PPL_BITS) && uraid_sb_ppl_size(&sb[i]) == 264 &&
			      uraid_sb_ppl_offset(&sb[i]) == 8,
			      "step %u: the freshest (member %u) has the PPL, member %u's own "
			      "superblock does not place it (features 0x%x): md would not start",
			      step, f, i, sb[i].feature_map);
	}
}

static struct uraid_array *open_array(struct uraid_engine *e, const char *const *order,
				      const char *what, char *err, size_t errlen)
{
	struct uraid_assemble_opts ao = { .paths = order, .npaths = N };
	struct uraid_array *ua = NULL;

	if (uraid_array_assemble(e, &ao, &ua, err, errlen)) {
		CHECK(0, "%s: assemble: %s", what, err);
		return NULL;
	}
	return ua;
}

/* All members there: 4 slots in sync, 1 spare, none stale or faulty. */
static void all_there(struct array *a, const char *what)
{
	unsigned in_sync = 0, spares = 0;

	for (unsigned i = 0; i < a->nmembers; i++) {
		in_sync += a->member_state[i] == URAID_MEMBER_IN_SYNC;
		spares += a->member_state[i] == URAID_MEMBER_SPARE;
	}
	CHECK(a->nmembers == N && in_sync == 4 && spares == 1 && atomic_load(&a->degraded) == 0,
	      "%s: %u members, %u in sync, %u spares, degraded %u", what, a->nmembers, in_sync,
	      spares, atomic_load(&a->degraded));
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261202;
	char dir[64], paths[N][96], err[512], done[1024], what[64];
	const char *devs[N], *rev[N];
	struct uraid_engine *e = NULL;
	struct uraid_array *ua = NULL;
	static struct snaps sn;
	static uint8_t page[4096];

	printf("test_grow_ppl_crash: seed %" PRIu64 "\n", seed);
	snprintf(dir, sizeof(dir), "/dev/shm/uraid-gpc.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u.img", dir, i);
		devs[i] = paths[i];
		rev[N - 1 - i] = paths[i];
		if (fixture_make_file(paths[i], (uint64_t)MEMBER_MIB << 20))
			return 1;
	}
	struct uraid_create_opts co = {
		.level = URAID_LEVEL_5, .raid_disks = 4, .spare_devices = 1, .minor = 2,
		.chunk_kib = 64, .flags = URAID_CREATE_ASSUME_CLEAN, .paths = devs, .npaths = N,
		.homehost = "<none>",
	};
	struct uraid_engine_opts eo = { .reactors = 1 };
	if (uraid_create(&co, NULL, err, sizeof(err)) || uraid_engine_create(&eo, &e)) {
		CHECK(0, "setup: %s", err);
		goto out;
	}
	/* no bad-block log (mdadm --update=no-bbl); the data areas random */
	struct uraid_sb sb;
	CHECK(rw(paths[0], page, 4096, SB_AT, false) == 0 && uraid_sb_decode(page, &sb) == 0,
	      "member 0: superblock");
	sn.paths = devs;
	sn.head = (size_t)sb.data_offset * 512;
	srandom((unsigned)seed);
	for (unsigned i = 0; i < N; i++) {
		CHECK(rw(paths[i], page, 4096, SB_AT, false) == 0 && uraid_sb_decode(page, &sb) == 0,
		      "member %u: superblock", i);
		sb.bblog_offset = 0;
		sb.bblog_size = 0;
		uraid_sb_encode(&sb, page);
		CHECK(rw(paths[i], page, 4096, SB_AT, true) == 0, "member %u: write", i);
		for (size_t at = sn.head; at < ((size_t)MEMBER_MIB << 20); at += 4096) {
			for (unsigned k = 0; k < 4096 / 4; k++)
				((uint32_t *)page)[k] = (uint32_t)random();
			if (rw(paths[i], page, 4096, (off_t)at, true))
				break;
		}
	}
	uint64_t sum = data_sum(devs, sn.head);

	/* a member whose area cannot be written: refused, nothing changed */
	if (!(ua = open_array(e, devs, "first", err, sizeof(err))))
		goto out;
	struct array *a = (struct array *)ua;
	uint64_t ev = a->sb.events;
	struct uraid_fault vanish = { .kind = URAID_FAULT_VANISH, .last_sector = UINT64_MAX };
	struct uraid_grow g = { .policy = URAID_GROW_POLICY_PPL };
	CHECK(uraid_array_inject(ua, 2, &vanish) == 0, "inject");
	int rc = uraid_array_grow(ua, &g, done, sizeof(done), err, sizeof(err));
	CHECK(rc < 0, "grow with a member that cannot be written: rc %d", rc);
	printf("refused as expected: %s\n", err);
	CHECK(!ppl_enabled(a) && !a->plog && a->sb.events == ev,
	      "after the refusal: ppl %d, log %p, events %" PRIu64 " (%" PRIu64 " before)",
	      ppl_enabled(a), (void *)a->plog, a->sb.events, ev);
	struct uraid_fault none = { .kind = URAID_FAULT_NONE };
	CHECK(uraid_array_inject(ua, 2, &none) == 0, "clear the fault");
	uraid_array_close(ua);
	ua = NULL;

	/* the grow, each step taken */
	if (!(ua = open_array(e, devs, "second", err, sizeof(err))))
		goto out;
	a = (struct array *)ua;
	a->grow_ppl_hook = hook;
	a->grow_ppl_hook_arg = &sn;
	rc = uraid_array_grow(ua, &g, done, sizeof(done), err, sizeof(err));
	CHECK(rc == 0, "grow: %s", err);
	printf("grown: %s", done);
	CHECK(ppl_enabled(a) && a->plog && uraid_sb_ppl_size(&a->sb) == 264 &&
	      uraid_sb_ppl_offset(&a->sb) == 8 && (a->sb.feature_map & URAID_FEATURE_PPL),
	      "after the grow: features 0x%x, log %p, ppl %u at %d", a->sb.feature_map,
	      (void *)a->plog, uraid_sb_ppl_size(&a->sb), uraid_sb_ppl_offset(&a->sb));
	a->grow_ppl_hook = NULL;
	uraid_array_close(ua);
	ua = NULL;
	/* areas, anchor, 3 members and the spare, anchor again, the last update */
	CHECK(sn.n == 8, "%u steps taken, 8 expected", sn.n);

	for (unsigned k = 0; k < sn.n; k++) {
		bool fresh_ppl;
		md_rules(k, sn.img[k], &fresh_ppl);
		CHECK(fresh_ppl == (k >= 6), "step %u: the freshest superblock %s the PPL", k,
		      fresh_ppl ? "has" : "lacks");
		for (int ord = 0; ord < 2; ord++) {
			for (unsigned i = 0; i < N; i++)
				CHECK(rw(paths[i], sn.img[k][i], sn.head, 0, true) == 0, "restore");
			snprintf(what, sizeof(what), "step %u, %s order", k, ord ? "reverse" : "given");
			if (!(ua = open_array(e, ord ? rev : devs, what, err, sizeof(err))))
				continue;
			a = (struct array *)ua;
			all_there(a, what);
			CHECK(ppl_enabled(a) == fresh_ppl && (a->plog != NULL) == fresh_ppl,
			      "%s: ppl %d, log %p (freshest has it: %d)", what, ppl_enabled(a),
			      (void *)a->plog, fresh_ppl);
			uraid_array_close(ua);
			ua = NULL;
		}
	}

	/* and back: the final state, the PPL removed */
	for (unsigned i = 0; i < N; i++)
		CHECK(rw(paths[i], sn.img[sn.n - 1][i], sn.head, 0, true) == 0, "restore");
	if (!(ua = open_array(e, devs, "third", err, sizeof(err))))
		goto out;
	g.policy = URAID_GROW_POLICY_RESYNC;
	rc = uraid_array_grow(ua, &g, done, sizeof(done), err, sizeof(err));
	CHECK(rc == 0, "grow back to resync: %s", err);
	a = (struct array *)ua;
	CHECK(!ppl_enabled(a) && !a->plog && a->plog_retired, "after the removal: features "
	      "0x%x, log %p, retired %p", a->sb.feature_map, (void *)a->plog,
	      (void *)a->plog_retired);
	uraid_array_close(ua);
	ua = NULL;
	if ((ua = open_array(e, rev, "fourth", err, sizeof(err)))) {
		a = (struct array *)ua;
		all_there(a, "after the removal");
		CHECK(!ppl_enabled(a) && !a->plog, "reassembled after the removal: features 0x%x",
		      a->sb.feature_map);
		uraid_array_close(ua);
		ua = NULL;
	}
	CHECK(data_sum(devs, sn.head) == sum, "the data areas changed");
out:
	if (ua)
		uraid_array_close(ua);
	if (e)
		uraid_engine_destroy(e);
	for (unsigned k = 0; k < sn.n; k++)
		for (unsigned i = 0; i < N; i++)
			free(sn.img[k][i]);
	for (unsigned i = 0; i < N; i++)
		unlink(paths[i]);
	rmdir(dir);
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
