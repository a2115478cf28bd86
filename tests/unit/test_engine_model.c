// SPDX-License-Identifier: MIT
/*
 * Model test of the engine: seeded random reads, writes, flushes, discards
 * and write-zeroes (512 B to several stripes, aligned and not, batches of
 * disjoint requests in flight together) against every level and many
 * layouts, member counts and chunk sizes, compared with an in-memory copy of
 * what the array must hold. Each configuration also runs with members
 * failed before the run and during it (each member for RAID 4/5, pairs for
 * RAID 6). At the end the members are read directly: every stripe's parity
 * (or every mirror copy) must be consistent, and a fresh assembly must read
 * back the same data. The configurations marked "wb" run with the write-back
 * cache, small enough (1-2 MiB) that writes wait for room and destages run
 * during the run, with members failing under it; "wb large" with 8 MiB,
 * which takes writes of 512 KiB and more too (destaged in whole rows).
 *
 *   test_engine_model [SEED [FILTER]]    FILTER: substring of the config name
 *   URAID_MODEL_STRIPE_CACHE=N            stripe cache size (RAID 4/5/6) of every run
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>

#include "../support/array_fixture.h"
#include "../support/check.h"
#include "../support/engine_op.h"

#define MIB (1u << 20)
#define MAX_BATCH 8

struct config {
	const char *level;
	const char *layout;     /* NULL: default */
	unsigned n;
	unsigned chunk_kib;
	unsigned member_mib;
	unsigned minor;
	unsigned reactors;      /* >1: threaded engine */
	unsigned wback_kib;     /* write-back cache of this size; 0: write-through */
};

/* ---- the run ---- */

struct model {
	uint64_t seed;
	char name[160];
	char dir[64];
	char paths[16][96];
	unsigned npaths;
	uint8_t *ref;           /* what the array must hold */
	uint8_t *known;         /* per sector: 1 when ref is defined (not discarded) */
	uint64_t size;
	struct uraid_engine *e;
	struct uraid_array *a;
	bool threaded;
	unsigned reactors;
	unsigned wback_kib;
};

static void wait_ops(struct model *m, struct op *ops, unsigned n)
{
	for (;;) {
		bool all = true;
		for (unsigned i = 0; i < n; i++)
			all &= __atomic_load_n(&ops[i].done, __ATOMIC_ACQUIRE);
		if (all)
			return;
		if (m->threaded)
			usleep(50);
		else
			for (unsigned r = 0; r < m->reactors; r++)
				uraid_engine_poll(m->e, r, 0);
	}
}

static int create_members(struct model *m, const struct config *c, const char *missing_mask)
{
	snprintf(m->dir, sizeof(m->dir), "/dev/shm/uraid-model.%d", getpid());
	mkdir(m->dir, 0700);
	const char *devs[16];
	for (unsigned i = 0; i < c->n; i++) {
		snprintf(m->paths[i], sizeof(m->paths[i]), "%s/m%u.img", m->dir, i);
		unlink(m->paths[i]);
		int fd = open(m->paths[i], O_CREAT | O_RDWR, 0600);
		/* unequal members for RAID 0 and linear: zones and concatenation */
		unsigned mib = c->member_mib + ((!strcmp(c->level, "0") || !strcmp(c->level, "linear"))
						? i % 3 : 0);
		if (fd < 0 || ftruncate(fd, (off_t)mib * MIB)) {
			perror(m->paths[i]);
			return -1;
		}
		close(fd);
		devs[i] = missing_mask && missing_mask[i] == 'x' ? "missing" : m->paths[i];
	}
	m->npaths = c->n;
	return fixture_create_array(m->name, c->level, c->layout, c->n, c->chunk_kib, c->minor,
				    devs);
}

static int assemble(struct model *m)
{
	const char *p[16];
	unsigned k = 0;
	char err[256];

	for (unsigned i = 0; i < m->npaths; i++)
		p[k++] = m->paths[i];
	/* a short safe-mode delay keeps the clean-marking check quick */
	struct uraid_assemble_opts ao = { .paths = p, .npaths = k, .idle_clean_ms = 20,
					  .write_cache = m->wback_kib ? URAID_WRITE_BACK
								      : URAID_WRITE_THROUGH,
					  .cache_bytes = (uint64_t)m->wback_kib << 10 };
	/* URAID_MODEL_STRIPE_CACHE=N: the runs at another stripe cache size (17..32768) */
	if (getenv("URAID_MODEL_STRIPE_CACHE"))
		ao.stripe_cache = (unsigned)strtoul(getenv("URAID_MODEL_STRIPE_CACHE"), NULL, 10);
	int rc = uraid_array_assemble(m->e, &ao, &m->a, err, sizeof(err));
	if (rc)
		fprintf(stderr, "%s: assemble: %s\n", m->name, err);
	return rc;
}

/* A random range: mostly small, sometimes stripes long; aligned or not to 4 KiB. */
static void pick_range(struct model *m, uint64_t *rs, uint64_t *off, uint64_t *len)
{
	uint64_t sectors = m->size / 512;
	uint64_t r = rng_next(rs) % 100;
	uint64_t n = r < 50 ? 1 + rng_next(rs) % 16 : r < 85 ? 1 + rng_next(rs) % 512
							: 1 + rng_next(rs) % 4096;
	/* write-back: mostly writes the cache takes (under 1/8 of it), so it fills */
	if (m->wback_kib && r < 90)
		n = 1 + rng_next(rs) % (r < 50 ? 16 : m->wback_kib / 8 * 2 - 16);
	if (rng_next(rs) % 2)
		n = (n + 7) & ~7ull;
	if (n > sectors)
		n = sectors;
	uint64_t start = rng_next(rs) % (sectors - n + 1);
	if (rng_next(rs) % 2)
		start &= ~7ull;
	*off = start * 512;
	*len = n * 512;
}

static bool overlaps(const struct op *ops, unsigned n, uint64_t off, uint64_t len)
{
	for (unsigned i = 0; i < n; i++)
		if (off < ops[i].io.offset + ops[i].io.length && ops[i].io.offset < off + len)
			return true;
	return false;
}

/* Compare a read with the reference where the reference is defined. */
static void check_read(struct model *m, const struct op *o, unsigned opno)
{
	uint64_t first = o->io.offset / 512;
	for (uint64_t s = 0; s < o->io.length / 512; s++) {
		if (!m->known[first + s])
			continue;
		if (memcmp(o->buf + s * 512, m->ref + (first + s) * 512, 512)) {
			CHECK(0, "%s seed %" PRIu64 " op %u: read of sector %" PRIu64
			      " differs from what was written", m->name, m->seed, opno, first + s);
			return;
		}
	}
}

/* Run nops random operations; inject a failure of `fail_slots` at op fail_at. */
static void run_ops(struct model *m, uint64_t *rs, unsigned nops, const int *fail_slots,
		    unsigned nfail, unsigned fail_at)
{
	/* URAID_MODEL_BATCH=1 runs one request at a time (for debugging) */
	unsigned max_batch = getenv("URAID_MODEL_BATCH") ? (unsigned)atoi(getenv("URAID_MODEL_BATCH"))
							 : MAX_BATCH;
	if (max_batch < 1 || max_batch > MAX_BATCH)
		max_batch = MAX_BATCH;
	struct op ops[MAX_BATCH];
	unsigned opno = 0;

	while (opno < nops) {
		unsigned batch = 1 + rng_next(rs) % max_batch, n = 0;
		memset(ops, 0, sizeof(ops));
		for (unsigned b = 0; b < batch && opno < nops; b++, opno++) {
			if (opno == fail_at) {
				for (unsigned f = 0; f < nfail; f++) {
					struct uraid_fault fl = { .kind = URAID_FAULT_VANISH,
								  .last_sector = UINT64_MAX };
					uraid_array_inject(m->a, (unsigned)fail_slots[f], &fl);
				}
			}
			uint64_t off, len;
			pick_range(m, rs, &off, &len);
			if (overlaps(ops, n, off, len))
				continue;
			struct op *o = &ops[n];
			unsigned kind = (unsigned)(rng_next(rs) % 100);
			o->io.op = kind < 45 ? URAID_IO_READ : kind < 88 ? URAID_IO_WRITE
				 : kind < 92 ? URAID_IO_FLUSH : kind < 96 ? URAID_IO_WRITE_ZEROES
				 : URAID_IO_DISCARD;
			/* write-back: fewer flushes, so that dirty data piles up */
			if (m->wback_kib && o->io.op == URAID_IO_FLUSH && rng_next(rs) % 4)
				o->io.op = URAID_IO_WRITE;
			o->io.offset = o->io.op == URAID_IO_FLUSH ? 0 : off;
			o->io.length = o->io.op == URAID_IO_FLUSH ? 0 : len;
			o->io.flags = rng_next(rs) % 8 == 0 ? URAID_IO_FUA : 0;
			o->io.done = op_done;
			o->io.ctx = o;
			if (o->io.op == URAID_IO_READ || o->io.op == URAID_IO_WRITE) {
				/* sometimes unaligned: the engine must bounce */
				size_t skew = rng_next(rs) % 4 == 0 ? 8 : 0;
				o->buf = aligned_alloc(4096, (len + 8191) & ~(uint64_t)4095);
				o->buf += skew;
				o->io.buf = o->buf;
				if (o->io.op == URAID_IO_WRITE)
					for (uint64_t i = 0; i < len; i += 8) {
						uint64_t v = rng_next(rs);
						memcpy(o->buf + i, &v, 8);
					}
			}
			unsigned reactor = (unsigned)(rng_next(rs) % m->reactors);
			int rc = uraid_array_submit(m->a, reactor, &o->io);
			CHECK(rc == 0, "%s: submit: %s", m->name, strerror(-rc));
			if (rc) {
				o->done = true;
				o->result = rc;
			}
			n++;
		}
		wait_ops(m, ops, n);
		for (unsigned i = 0; i < n; i++) {
			struct op *o = &ops[i];
			uint64_t first = o->io.offset / 512, cnt = o->io.length / 512;
			if (getenv("URAID_MODEL_TRACE")) {
				uint64_t t = strtoull(getenv("URAID_MODEL_TRACE"), NULL, 0);
				if (t >= first && t < first + cnt)
					fprintf(stderr, "trace: op %u kind %d %" PRIu64 "+%" PRIu64
						" res %d\n", opno, o->io.op, first, cnt, o->result);
			}
			CHECK(o->result == 0, "%s seed %" PRIu64 ": %s at %" PRIu64 "+%" PRIu64
			      " failed: %s", m->name, m->seed,
			      (const char *[]){ "read", "write", "flush", "discard", "zeroes" }[o->io.op],
			      o->io.offset, o->io.length, strerror(-o->result));
			if (o->result == 0) {
				switch (o->io.op) {
				case URAID_IO_READ:
					check_read(m, o, opno);
					break;
				case URAID_IO_WRITE:
					memcpy(m->ref + o->io.offset, o->buf, o->io.length);
					memset(m->known + first, 1, cnt);
					break;
				case URAID_IO_WRITE_ZEROES:
					memset(m->ref + o->io.offset, 0, o->io.length);
					memset(m->known + first, 1, cnt);
					break;
				case URAID_IO_DISCARD:
					memset(m->known + first, 0, cnt);
					break;
				default:
					break;
				}
			}
			if (o->buf) {
				size_t skew = (uintptr_t)o->buf & 4095;
				free(o->buf - skew);
			}
		}
	}
}

/* Every sector the array can be read back in one piece, against the reference. */
static void verify_all(struct model *m, const char *when)
{
	uint8_t *buf = aligned_alloc(4096, (m->size + 4095) & ~(uint64_t)4095);
	int rc = uraid_array_pread(m->a, buf, m->size, 0);
	CHECK(rc == 0, "%s: full read %s: %s", m->name, when, strerror(-rc));
	for (uint64_t s = 0; rc == 0 && s < m->size / 512; s++) {
		if (m->known[s] && memcmp(buf + s * 512, m->ref + s * 512, 512)) {
			CHECK(0, "%s seed %" PRIu64 ": %s, sector %" PRIu64 " differs", m->name,
			      m->seed, when, s);
			break;
		}
	}
	free(buf);
}

/*
 * Read the members directly and check redundancy: P/Q of every stripe row
 * (RAID 4/5/6), every copy equal (RAID 1/10). Only for arrays with all members.
 */
static void check_redundancy(struct model *m)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	struct uraid_geom *g = malloc(sizeof(*g));
	uint64_t member_sectors[16] = { 0 }, data_offset[16] = { 0 };
	int fds[16];
	struct uraid_sb sb;

	for (unsigned i = 0; i < m->npaths; i++) {
		fds[i] = open(m->paths[i], O_RDONLY);
		uraid_probe_fd(fds[i], p);
		sb = p->loc[p->chosen].sb;
		unsigned role = uraid_sb_role(&sb);
		if (role < 16) {
			member_sectors[role] = sb.data_size;
			data_offset[role] = sb.data_offset;
		}
	}
	char why[200];
	struct uraid_geom_params gp = { .level = sb.level, .layout = sb.layout,
		.raid_disks = sb.raid_disks, .chunk_sectors = sb.chunksize, .dev_sectors = sb.size,
		.member_sectors = member_sectors,
		.raid0_layout_flag = sb.feature_map & URAID_FEATURE_RAID0_LAYOUT };
	uraid_geom_init(g, &gp, why, sizeof(why));
	unsigned n = g->raid_disks;
	uint32_t C = g->chunk_sectors;

	if (sb.level == 4 || sb.level == 5 || sb.level == 6) {
		struct uraid_stripe *st = malloc(sizeof(*st));
		size_t len = (size_t)C * 512;
		uint8_t *chunks = aligned_alloc(64, (len * n + 63) & ~(size_t)63);
		void *slots[256];
		for (uint64_t s = 0; s < g->dev_sectors / C; s++) {
			uraid_geom_stripe(g, s, st);
			for (unsigned i = 0; i < n; i++)
				pread(fds[i], chunks + i * len, len, (off_t)((data_offset[i] + s * C) * 512));
			int bad;
			if (st->q_slot < 0) {
				for (unsigned k = 0; k < st->data_disks; k++)
					slots[k] = chunks + st->data_slot[k] * len;
				bad = uraid_parity_check_p(st->data_disks, len, slots,
							   chunks + st->p_slot * len);
			} else {
				for (unsigned k = 0; k < st->syndrome_slots; k++)
					slots[k] = (void *)uraid_parity_zero_block(len);
				for (unsigned i = 0; i < n; i++)
					if (st->syndrome_of_slot[i] >= 0 && (int)i != st->p_slot &&
					    (int)i != st->q_slot)
						slots[st->syndrome_of_slot[i]] = chunks + i * len;
				bad = uraid_parity_check_pq(st->syndrome_slots, len, slots,
							    chunks + st->p_slot * len,
							    chunks + st->q_slot * len);
			}
			if (bad) {
				CHECK(0, "%s seed %" PRIu64 ": stripe %" PRIu64 " parity inconsistent",
				      m->name, m->seed, s);
				break;
			}
		}
		free(chunks);
		free(st);
	} else if (sb.level == 1 || sb.level == 10) {
		struct uraid_loc loc[16];
		uint8_t *a = malloc(512), *b = malloc(512);
		for (uint64_t s = 0; s < g->array_sectors; s += 7) {
			int c = uraid_geom_map(g, s, loc, 16);
			pread(fds[loc[0].slot], a, 512, (off_t)((data_offset[loc[0].slot] + loc[0].sector) * 512));
			for (int k = 1; k < c; k++) {
				pread(fds[loc[k].slot], b, 512,
				      (off_t)((data_offset[loc[k].slot] + loc[k].sector) * 512));
				if (memcmp(a, b, 512)) {
					CHECK(0, "%s seed %" PRIu64 ": copies of sector %" PRIu64
					      " differ", m->name, m->seed, s);
					s = g->array_sectors;
					break;
				}
			}
		}
		free(a);
		free(b);
	}
	for (unsigned i = 0; i < m->npaths; i++)
		close(fds[i]);
	free(g);
	free(p);
}

static void cleanup(struct model *m)
{
	for (unsigned i = 0; i < m->npaths; i++)
		unlink(m->paths[i]);
	rmdir(m->dir);
}

/*
 * One configuration with the given failures: members pulled (VANISH) before
 * or during the run, or with read_faults, the members in `fail` return read
 * errors on a share of their reads, which redundancy must answer and repair.
 */
static void run_config(const struct config *c, uint64_t seed, const int *fail, unsigned nfail,
		       bool during, unsigned nops, bool read_faults)
{
	struct model m = { .seed = seed, .reactors = c->reactors ? c->reactors : 1,
			   .wback_kib = c->wback_kib };
	/*
	 * Members failing while two reactor threads run is a timing-dependent
	 * case (it once found a RAID 6 unit planned with one view of the failed
	 * members and its reads issued with another); it runs in `make soak`,
	 * with one reactor in `make check` so that check stays deterministic.
	 * URAID_MODEL_SOAK=2 runs every configuration's failures threaded.
	 */
	const char *soak = getenv("URAID_MODEL_SOAK");
	if (nfail && !read_faults && !soak)
		m.reactors = 1;
	else if (nfail && !read_faults && atoi(soak) >= 2 && m.reactors < 2)
		m.reactors = 2;
	m.threaded = m.reactors > 1;
	int len = snprintf(m.name, sizeof(m.name), "raid%s %s n=%u chunk=%uK 1.%u r=%u%s", c->level,
			   c->layout ? c->layout : "default", c->n, c->chunk_kib, c->minor, m.reactors,
			   c->wback_kib ? " write-back" : "");
	for (unsigned f = 0; f < nfail; f++)
		len += snprintf(m.name + len, sizeof(m.name) - (size_t)len, " %s%u%s",
				read_faults ? "readerr" : "fail", (unsigned)fail[f],
				read_faults ? "" : during ? "-during" : "-before");

	if (create_members(&m, c, NULL)) {
		CHECK(0, "%s: cannot create", m.name);
		return;
	}
	struct uraid_engine_opts eo = { .reactors = m.reactors,
					.flags = m.threaded ? URAID_ENGINE_THREADS : 0 };
	if (uraid_engine_create(&eo, &m.e)) {
		CHECK(0, "%s: engine", m.name);
		return;
	}
	if (assemble(&m)) {
		CHECK(0, "%s: assemble failed", m.name);
		uraid_engine_destroy(m.e);
		cleanup(&m);
		return;
	}
	m.size = uraid_array_size(m.a);
	m.ref = calloc(1, m.size);
	m.known = malloc(m.size / 512);
	memset(m.known, 1, m.size / 512);   /* created on zeroed members with --assume-clean */

	uint64_t rs = seed;
	if (read_faults) {
		for (unsigned f = 0; f < nfail; f++) {
			struct uraid_fault fl = { .kind = URAID_FAULT_READ, .last_sector = UINT64_MAX,
						  .rate_ppm = 100000, .seed = seed };
			uraid_array_inject(m.a, (unsigned)fail[f], &fl);
		}
		run_ops(&m, &rs, nops, NULL, 0, UINT32_MAX);
	} else {
		run_ops(&m, &rs, nops, fail, nfail, nfail ? (during ? nops / 2 : 0) : UINT32_MAX);
	}
	verify_all(&m, "after the run");
	/* write-back: a FLUSH with no write after it leaves nothing dirty (all
	   acknowledged before it is on the members) */
	int frc = m.wback_kib ? uraid_array_flush(m.a) : 0;
	CHECK(frc == 0, "%s: flush after the run: %s", m.name, strerror(-frc));
	struct uraid_array_status *st = malloc(sizeof(*st));
	uraid_array_status(m.a, st);
	if (m.wback_kib) {
		const struct uraid_write_cache_status *w = &st->write_cache;
		/* the cache took part (how much it destaged by now depends on timing) */
		CHECK(w->policy == URAID_WRITE_BACK && w->writes_cached > 0,
		      "%s: write-back cache not used (%" PRIu64 " writes cached)", m.name,
		      w->writes_cached);
		CHECK(w->dirty_bytes == 0, "%s: %" PRIu64 " bytes dirty after a FLUSH with no write after it",
		      m.name, w->dirty_bytes);
		if (getenv("URAID_MODEL_VERBOSE"))
			printf("  %s: cached %" PRIu64 " (hits %" PRIu64 ", waited %" PRIu64
			       "), through %" PRIu64 ", read hits %" PRIu64 " misses %" PRIu64
			       ", destaged %" PRIu64 " writes %" PRIu64 " bytes\n", m.name,
			       w->writes_cached, w->write_hits, w->write_waits, w->writes_through,
			       w->read_hits, w->read_misses, w->destage_writes, w->destaged_bytes);
	}
	if (read_faults) {
		/* read errors are answered and repaired, never a reason to fail a member */
		uint64_t corrected = 0;
		for (unsigned i = 0; i < st->nmembers; i++)
			corrected += st->members[i].corrected_reads;
		CHECK(st->degraded == 0, "%s: read errors failed a member", m.name);
		uint64_t errors = 0;
		for (unsigned i = 0; i < st->nmembers; i++)
			errors += st->members[i].read_errors;
		/* every read error seen must have been corrected (none may be seen by chance) */
		CHECK(corrected == errors, "%s: %" PRIu64 " read errors, %" PRIu64 " corrected",
		      m.name, errors, corrected);
	} else {
		CHECK(st->degraded <= nfail, "%s: degraded %u, at most %u expected",
		      m.name, st->degraded, nfail);
	}
	/* quiet writes: md's safe mode marks the array clean again (200 ms) */
	if (!m.threaded) {
		for (int i = 0; i < 60 && !st->clean; i++) {
			uraid_engine_poll(m.e, 0, 10);
			uraid_array_status(m.a, st);
		}
	} else {
		for (int i = 0; i < 60 && !st->clean; i++) {
			usleep(10000);
			uraid_array_status(m.a, st);
		}
	}
	CHECK(st->clean, "%s: not marked clean after 600 ms without writes", m.name);
	free(st);
	int rc = uraid_array_close(m.a);
	CHECK(rc == 0, "%s: close: %s", m.name, strerror(-rc));

	if (!nfail || read_faults)
		check_redundancy(&m);
	/* a fresh assembly (which leaves the failed members out) reads the same */
	if (assemble(&m) == 0) {
		verify_all(&m, "after reassembly");
		uraid_array_close(m.a);
	} else {
		CHECK(0, "%s: reassembly failed", m.name);
	}
	uraid_engine_destroy(m.e);
	free(m.ref);
	free(m.known);
	cleanup(&m);
}

static const struct config configs[] = {
	{ "linear", NULL, 3, 0, 2, 2, 1, 0 },
	{ "linear", NULL, 2, 64, 2, 0, 1, 0 },
	{ "0", NULL, 2, 4, 2, 2, 1, 0 },
	{ "0", NULL, 3, 16, 3, 2, 1, 0 },
	{ "0", "alternate", 4, 64, 3, 1, 2, 0 },
	{ "1", NULL, 2, 0, 2, 2, 1, 0 },
	{ "1", NULL, 3, 0, 2, 0, 2, 0 },
	{ "10", "n2", 4, 16, 3, 2, 1, 0 },
	{ "10", "f2", 5, 4, 3, 2, 1, 0 },
	{ "10", "o2", 4, 64, 3, 1, 2, 0 },
	{ "10", "n3", 3, 16, 3, 2, 1, 0 },
	{ "4", NULL, 3, 16, 3, 2, 1, 0 },
	{ "5", "left-asymmetric", 4, 16, 3, 2, 1, 0 },
	{ "5", "right-asymmetric", 3, 4, 3, 2, 1, 0 },
	{ "5", "left-symmetric", 5, 64, 3, 2, 2, 0 },
	{ "5", "right-symmetric", 6, 16, 3, 0, 1, 0 },
	{ "5", "parity-first", 4, 32, 3, 1, 1, 0 },
	{ "5", "parity-last", 2, 16, 3, 2, 1, 0 },
	{ "6", "left-asymmetric", 5, 16, 3, 2, 1, 0 },
	{ "6", "right-asymmetric", 4, 4, 3, 2, 1, 0 },
	{ "6", "left-symmetric", 6, 64, 3, 2, 2, 0 },
	{ "6", "right-symmetric", 7, 16, 3, 2, 1, 0 },
	{ "6", "parity-first", 5, 16, 3, 2, 1, 0 },
	{ "6", "parity-last", 5, 16, 3, 2, 1, 0 },
	{ "6", "ddf-zero-restart", 5, 16, 3, 2, 1, 0 },
	{ "6", "ddf-N-restart", 6, 8, 3, 2, 1, 0 },
	{ "6", "ddf-N-continue", 5, 16, 3, 2, 1, 0 },
	{ "6", "left-asymmetric-6", 5, 16, 3, 2, 1, 0 },
	{ "6", "right-asymmetric-6", 6, 16, 3, 2, 1, 0 },
	{ "6", "left-symmetric-6", 5, 32, 3, 2, 1, 0 },
	{ "6", "right-symmetric-6", 5, 16, 3, 2, 1, 0 },
	{ "6", "parity-first-6", 8, 16, 3, 2, 1, 0 },
	/* the write-back cache in front of the levels */
	{ "5", "left-symmetric", 4, 16, 3, 2, 1, 1024 },
	{ "5", "left-symmetric", 4, 64, 3, 2, 2, 2048 },
	{ "6", "left-symmetric", 5, 16, 3, 2, 1, 1024 },
	{ "1", NULL, 2, 0, 2, 2, 1, 1024 },
	{ "10", "n2", 4, 16, 3, 2, 2, 1024 },
	{ "0", NULL, 3, 16, 3, 2, 1, 1024 },
	{ "linear", NULL, 2, 64, 2, 0, 1, 1024 },
	/* a cache that takes large writes too (up to an eighth of it: 1 MiB),
	   destaged in whole rows where the runs allow ("wb large") */
	{ "5", "left-symmetric", 4, 64, 8, 2, 2, 8192 },
	{ "6", "left-symmetric", 5, 32, 8, 2, 1, 8192 },
};

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20261129;
	const char *filter = argc > 2 ? argv[2] : NULL;
	unsigned configs_run = 0;

	printf("test_engine_model: seed %" PRIu64 " (rerun: %s %" PRIu64 " [FILTER])\n", seed,
	       argv[0], seed);
	fflush(stdout);
	for (size_t i = 0; i < sizeof(configs) / sizeof(configs[0]); i++) {
		const struct config *c = &configs[i];
		char label[64];
		snprintf(label, sizeof(label), "raid%s %s%s", c->level, c->layout ? c->layout : "",
			 c->wback_kib >= 8192 ? " wb large" : c->wback_kib ? " wb" : "");
		if (filter && !strstr(label, filter))
			continue;
		configs_run++;
		uint64_t s = seed + i * 1000;
		int before = failures;
		run_config(c, s, NULL, 0, false, 400, false);
		/* redundant levels: lose members before and during the run */
		int level = 0;
		uraid_level_parse(c->level, &level);
		if (level == 1 || level == 4 || level == 5 || level == 10) {
			for (unsigned f = 0; f < c->n; f++) {
				int slot[1] = { (int)f };
				run_config(c, s + 1 + f, slot, 1, f % 2 == 1, 200, false);
			}
			/* read errors on a member that holds data (not a fixed parity member) */
			int slot[1] = { level == 4 || (c->layout && !strcmp(c->layout, "parity-last"))
					? 0 : c->layout && !strcmp(c->layout, "parity-first") ? 1
					: (int)(seed % c->n) };
			run_config(c, s + 50, slot, 1, false, 300, true);
		} else if (level == 6) {
			for (unsigned a = 0; a < c->n; a++)
				for (unsigned b = a + 1; b < c->n; b++) {
					int slots[2] = { (int)a, (int)b };
					run_config(c, s + 100 + a * 16 + b, slots, 2, (a + b) % 2, 120,
						   false);
				}
			/* two data members, whichever layout: P/Q sit at the ends or rotate */
			int slots[2] = { 1, 2 };
			if (c->layout && !strcmp(c->layout, "parity-last"))
				slots[0] = 0, slots[1] = 1;
			else if (c->layout && !strcmp(c->layout, "parity-first"))
				slots[0] = 2, slots[1] = 3;
			run_config(c, s + 50, slots, 2, false, 300, true);
		}
		printf("%s %-28s %s\n", failures == before ? "ok  " : "FAIL", label,
		       failures == before ? "" : "(see above)");
		fflush(stdout);
	}
	printf("%u configurations, %d failures (seed %" PRIu64 ")\n", configs_run, failures, seed);
	return failures ? 1 : 0;
}
