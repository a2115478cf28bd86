/* SPDX-License-Identifier: MIT */
/*
 * PPL recovery at assembly on a hand-made dirty RAID 5 (4 members,
 * left-symmetric, 64 KiB chunks, PPL as `uraid create
 * --consistency-policy=ppl` places it): the array is filled through the
 * engine (the run-time log at work), closed; then, by hand, one row is torn
 * (new data on a data member, parity left old), a PPL entry for it written
 * on the row's parity member (md's layout: header, then the partial parity,
 * the XOR of the untouched chunks) and the superblocks marked dirty.
 * Assembly must replay it: the row's parity matches its data again, the
 * array needs no resync, reads give the new data, and the area holds an
 * empty header afterwards. A second round with the entry's checksum broken:
 * not replayed, and the array needs a resync (md's rule).
 *
 *   test_ppl_recover [SEED]
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include <uraid/engine.h>
#include <uraid/ppl.h>

#include "common/full_io.h"
#include "../support/check.h"

#define N 4u
#define D (N - 1)
#define CHUNK 128u                      /* sectors: 64 KiB */
#define MEMBER_BYTES (16u << 20)
#define ROW 5u                          /* the torn row */
#define K 1u                            /* its data chunk written */
#define X0 16u                          /* sectors into the chunk */
#define LEN 8192u                       /* bytes written */

struct t {
	char dir[64], paths[N][96];
	const char *devs[N];
	struct uraid_sb sb[N];
	uint8_t uuid[16];
};

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void fill(uint64_t *s, uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)rng(s);
}

/* md's left-symmetric RAID 5: the parity and data slots of a row. */
static unsigned p_slot(uint64_t row) { return (N - 1) - (unsigned)(row % N); }
static unsigned d_slot(uint64_t row, unsigned k) { return (p_slot(row) + 1 + k) % N; }

static int rw(struct t *t, unsigned s, int write, void *buf, size_t len, uint64_t dev_sector)
{
	int fd = open(t->paths[s], write ? O_WRONLY : O_RDONLY);
	int rc = fd < 0 ? -1 : write ? uraid_pwrite_full(fd, buf, len, dev_sector * 512)
				    : uraid_pread_full(fd, buf, len, dev_sector * 512);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* member sector of the row's unit [X0, X0 + LEN) */
static uint64_t unit_sector(const struct t *t, unsigned s)
{
	return t->sb[s].data_offset + (uint64_t)ROW * CHUNK + X0;
}

static void read_sbs(struct t *t)
{
	uint8_t buf[URAID_SB_BYTES];

	for (unsigned s = 0; s < N; s++) {
		CHECK(rw(t, s, 0, buf, sizeof(buf), 8) == 0, "read sb");
		CHECK(uraid_sb_decode(buf, &t->sb[s]) == 0, "decode sb");
	}
}

static void make_dirty(struct t *t, uint64_t resync_offset)
{
	uint8_t buf[URAID_SB_BYTES];

	for (unsigned s = 0; s < N; s++) {
		t->sb[s].resync_offset = resync_offset;
		uraid_sb_encode(&t->sb[s], buf);
		CHECK(rw(t, s, 1, buf, uraid_sb_write_bytes(t->sb[s].max_dev), 8) == 0, "write sb");
	}
}

/* Does the row's parity over the unit match its data? */
static bool row_consistent(struct t *t)
{
	uint8_t x[LEN], b[LEN];

	memset(x, 0, sizeof(x));
	for (unsigned s = 0; s < N; s++) {
		CHECK(rw(t, s, 0, b, LEN, unit_sector(t, s)) == 0, "read");
		for (unsigned i = 0; i < LEN; i++)
			x[i] ^= b[i];
	}
	for (unsigned i = 0; i < LEN; i++)
		if (x[i])
			return false;
	return true;
}

/* How the parity member's area holds the torn row's entry (md's walk,
   MULTIPLE_PPLS: the newest is the last valid header whose generation grows). */
enum layout {
	ONE_LOG,                /* generation 7 at the area's start */
	NEWER_AFTER_OLDER,      /* a decoy at the start (5), the entry after it (6) */
	WRAPPED,                /* the entry at the start (9), an older decoy after it (8) */
	TORN_NEWEST,            /* the entry (5), then a newer header with a bad checksum */
};

/* A header of one entry over the torn unit whose partial parity is garbage
   (with its checksum right): replaying it would leave the row inconsistent. */
static void write_decoy(struct t *t, uint64_t *seed, uint64_t at, uint64_t generation, bool torn)
{
	uint8_t pp[LEN], hdr[URAID_PPL_HEADER_BYTES];
	unsigned ps = p_slot(ROW);
	struct uraid_ppl_header h = { .signature = uraid_ppl_signature(t->uuid),
				      .generation = generation, .entries_count = 1 };

	fill(seed, pp, LEN);
	h.entries[0].data_sector = (uint64_t)ROW * D * CHUNK + K * CHUNK + X0;
	h.entries[0].pp_size = LEN;
	h.entries[0].data_size = LEN;
	h.entries[0].parity_disk = ps;
	h.entries[0].checksum = uraid_ppl_pp_checksum(pp, LEN);
	uraid_ppl_encode(&h, hdr);
	if (torn)
		hdr[URAID_PPL_RESERVED_BYTES + 40] ^= 0x5a;   /* past the padding: checksum fails */
	CHECK(rw(t, ps, 1, hdr, sizeof(hdr), at) == 0, "write decoy header");
	CHECK(rw(t, ps, 1, pp, LEN, at + 8) == 0, "write decoy pp");
}

/* Tear the row: new data on chunk K, its entry in the parity member's PPL. */
static void tear(struct t *t, uint64_t *seed, bool break_checksum, uint8_t *newdata,
		 enum layout lay)
{
	unsigned ps = p_slot(ROW);
	uint8_t pp[LEN], b[LEN], hdr[URAID_PPL_HEADER_BYTES];
	struct uraid_ppl_header h = { .signature = uraid_ppl_signature(t->uuid),
				      .generation = 7, .entries_count = 1 };

	memset(pp, 0, sizeof(pp));
	for (unsigned k = 0; k < D; k++) {
		if (k == K)
			continue;
		CHECK(rw(t, d_slot(ROW, k), 0, b, LEN, unit_sector(t, d_slot(ROW, k))) == 0, "read");
		for (unsigned i = 0; i < LEN; i++)
			pp[i] ^= b[i];
	}
	fill(seed, newdata, LEN);
	CHECK(rw(t, d_slot(ROW, K), 1, newdata, LEN, unit_sector(t, d_slot(ROW, K))) == 0, "tear");
	h.entries[0].data_sector = (uint64_t)ROW * D * CHUNK + K * CHUNK + X0;
	h.entries[0].pp_size = LEN;
	h.entries[0].data_size = LEN;
	h.entries[0].parity_disk = ps;
	h.entries[0].checksum = uraid_ppl_pp_checksum(pp, LEN) ^ (break_checksum ? 1u : 0u);
	uint64_t area = (uint64_t)((int64_t)t->sb[ps].super_offset + uraid_sb_ppl_offset(&t->sb[ps]));
	uint64_t at = area, next = area + 8 + LEN / 512;
	switch (lay) {
	case ONE_LOG:
		break;
	case NEWER_AFTER_OLDER:
		write_decoy(t, seed, area, 5, false);
		h.generation = 6;
		at = next;
		break;
	case WRAPPED:
		h.generation = 9;
		write_decoy(t, seed, next, 8, false);
		break;
	case TORN_NEWEST:
		h.generation = 5;
		write_decoy(t, seed, next, 6, true);
		break;
	}
	uraid_ppl_encode(&h, hdr);
	CHECK(rw(t, ps, 1, hdr, sizeof(hdr), at) == 0, "write header");
	CHECK(rw(t, ps, 1, pp, LEN, at + 8) == 0, "write pp");
}

/*
 * resync_offset: the superblocks' checkpoint (0: dirty, resync not begun;
 * else a resync stopped there, which a replay must not cancel: md's rule).
 */
static void round_trip(struct t *t, uint64_t *seed, bool break_checksum, uint64_t resync_offset,
		       enum layout lay)
{
	static const char *lay_name[] = { "valid entry", "newer header after an older one",
					  "wrapped ring (the newest at the start)",
					  "newest header torn" };
	const char *what = break_checksum ? "corrupt entry" :
			   resync_offset ? "valid entry, resync stopped mid-array" : lay_name[lay];
	uint8_t newdata[LEN], got[LEN], hdr[URAID_PPL_HEADER_BYTES];
	struct uraid_engine *e = NULL;
	struct uraid_array *a = NULL;
	struct uraid_engine_opts eo = { .reactors = 1 };
	struct uraid_assemble_opts ao = { .paths = t->devs, .npaths = N };
	struct uraid_array_status st;
	char err[256];

	read_sbs(t);
	tear(t, seed, break_checksum, newdata, lay);
	CHECK(!row_consistent(t), "%s: the row is torn before assembly", what);
	make_dirty(t, resync_offset);
	if (uraid_engine_create(&eo, &e) || uraid_array_assemble(e, &ao, &a, err, sizeof(err))) {
		CHECK(0, "%s: assemble: %s", what, err);
		if (e)
			uraid_engine_destroy(e);
		return;
	}
	CHECK(uraid_array_status(a, &st) == 0, "status");
	uint64_t off = ((uint64_t)ROW * D * CHUNK + K * CHUNK + X0) * 512;
	CHECK(uraid_array_pread(a, got, LEN, off) == 0 && !memcmp(got, newdata, LEN),
	      "%s: the array reads the new data", what);
	CHECK(st.consistency_policy && !strcmp(st.consistency_policy, "ppl"),
	      "%s: policy ppl", what);
	if (break_checksum) {
		CHECK(st.resync_needed, "%s: not replayed: a resync is needed", what);
		CHECK(!row_consistent(t), "%s: the row left as it was", what);
	} else {
		if (resync_offset)
			CHECK(st.resync_needed, "%s: replayed, the resync still due", what);
		else if (lay != TORN_NEWEST)
			CHECK(!st.resync_needed, "%s: replayed: no resync needed", what);
		CHECK(row_consistent(t), "%s: the row's parity matches its data", what);
	}
	/* the area holds an empty header now */
	unsigned ps = p_slot(ROW);
	struct uraid_ppl_header h;
	uint64_t area = (uint64_t)((int64_t)t->sb[ps].super_offset + uraid_sb_ppl_offset(&t->sb[ps]));
	CHECK(rw(t, ps, 0, hdr, sizeof(hdr), area) == 0, "read header");
	CHECK(uraid_ppl_decode(hdr, uraid_ppl_signature(t->uuid), UINT64_MAX, &h, err,
			       sizeof(err)) == 0 && h.entries_count == 0,
	      "%s: an empty header after assembly (%s)", what, err);
	/* repair what the broken round left, through the engine's resync path: a
	   write over the row's unit makes it consistent again (RCW or RMW) */
	if (break_checksum) {
		uint8_t whole[CHUNK * 512 * D];
		uint64_t row_off = (uint64_t)ROW * D * CHUNK * 512;
		CHECK(uraid_array_pread(a, whole, sizeof(whole), row_off) == 0, "read row");
		CHECK(uraid_array_pwrite(a, whole, sizeof(whole), row_off, 0) == 0, "rewrite row");
		CHECK(row_consistent(t), "%s: a full-row write made it whole", what);
	}
	uraid_array_close(a);
	uraid_engine_destroy(e);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x99177e57ull;
	struct t t;
	int rc = 0;

	printf("test_ppl_recover: seed 0x%016llx\n", (unsigned long long)seed);
	snprintf(t.dir, sizeof(t.dir), "/tmp/uraid-ppl.%d", getpid());
	mkdir(t.dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(t.paths[i], sizeof(t.paths[i]), "%s/m%u.img", t.dir, i);
		t.devs[i] = t.paths[i];
		FILE *f = fopen(t.paths[i], "w");
		if (!f || ftruncate(fileno(f), MEMBER_BYTES)) {
			perror(t.paths[i]);
			return 1;
		}
		fclose(f);
	}
	fill(&seed, t.uuid, 16);
	struct uraid_create_opts co = {
		.level = 5, .raid_disks = N, .chunk_kib = CHUNK / 2, .minor = 2,
		.bitmap = URAID_BITMAP_NONE, .ppl = true, .flags = URAID_CREATE_ASSUME_CLEAN,
		.paths = t.devs, .npaths = N, .homehost = "<none>", .uuid = t.uuid,
	};
	struct uraid_create_result cr;
	char err[256];
	if (uraid_create(&co, &cr, err, sizeof(err))) {
		fprintf(stderr, "create: %s\n", err);
		return 1;
	}
	/* fill through the engine: every write goes through the run-time log */
	struct uraid_engine *e;
	struct uraid_array *a;
	struct uraid_engine_opts eo = { .reactors = 1 };
	struct uraid_assemble_opts ao = { .paths = t.devs, .npaths = N };
	if (uraid_engine_create(&eo, &e) || uraid_array_assemble(e, &ao, &a, err, sizeof(err))) {
		fprintf(stderr, "assemble: %s\n", err);
		return 1;
	}
	uint64_t size = uraid_array_size(a);
	uint8_t *buf = malloc(size);
	fill(&seed, buf, size);
	/* in pieces of several sizes: partial rows (partial parity), full rows */
	for (uint64_t off = 0, n; off < size; off += n) {
		n = (rng(&seed) % 64 + 1) * 4096;
		if (n > size - off)
			n = size - off;
		CHECK(uraid_array_pwrite(a, buf + off, n, off, 0) == 0, "fill at %" PRIu64, off);
	}
	uraid_array_close(a);
	uraid_engine_destroy(e);
	free(buf);

	round_trip(&t, &seed, false, 0, ONE_LOG);
	round_trip(&t, &seed, true, 0, ONE_LOG);
	round_trip(&t, &seed, false, (uint64_t)D * CHUNK * 40, ONE_LOG);
	round_trip(&t, &seed, false, 0, NEWER_AFTER_OLDER);
	round_trip(&t, &seed, false, 0, WRAPPED);
	round_trip(&t, &seed, false, 0, TORN_NEWEST);

	for (unsigned i = 0; i < N; i++)
		unlink(t.paths[i]);
	rmdir(t.dir);
	if (failures) {
		printf("test_ppl_recover: %d failure(s), seed 0x%016llx\n", failures,
		       (unsigned long long)seed);
		rc = 1;
	} else {
		printf("test_ppl_recover: all passed\n");
	}
	return rc;
}
