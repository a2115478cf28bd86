/* SPDX-License-Identifier: MIT */
/*
 * The run-time partial parity log against its own entries, on a RAID 5 of
 * 4 file members (left-symmetric, 64 KiB chunks, PPL as `uraid create
 * --consistency-policy=ppl` places it). After each engine write of a kind,
 * the newest header of the row's parity member (walked as md does: valid
 * headers while the generation grows) must hold one entry with md's fields
 * (data_sector in 512-byte array sectors of the first written chunk,
 * data_size over the written chunks, pp_size, parity_disk) and a partial
 * parity equal to the XOR of the row's chunks outside the written span:
 *
 *   RMW, one chunk written       span 1 chunk, pp = XOR of the other two
 *   RCW, two chunks written      span 2 chunks, pp = the third
 *   a full row                   pp_size 0, data_size the row
 *   degraded, the missing chunk outside the span: pp read through parity
 *
 * Also: every member the unit wrote (its data chunks and the parity) is
 * flushed before the next log may supersede this one (md's ppl_do_flush);
 * a log write that fails fails its member (the array goes on degraded, the
 * member's older log is never replayed); a spare rebuilt into the failed
 * slot, its area holding a planted log of this array with a high
 * generation, has that area emptied when it takes the slot (md's
 * ppl_modify_log) and is logged on afterwards.
 *
 * Last, the write hole end to end: a unit written through the engine (its
 * log on the parity member), then the row torn on disk (the parity put back
 * as it was before the write: the data reached its member, the parity did
 * not), the array marked dirty and assembled without a data member the
 * write left alone: that member's bytes, rebuilt through the parity, must
 * read back as they were (only the replay of the engine's own entry makes
 * the parity whole).
 *
 *   test_ppl_runtime [SEED]
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
#include "engine/core/array.h"
#include "../support/check.h"

#define N 4u
#define D (N - 1)
#define CHUNK 128u                      /* sectors: 64 KiB */
#define CB (CHUNK * 512u)
#define MEMBER_BYTES (16u << 20)

struct t {
	char dir[64], paths[N][96];
	const char *devs[N];
	struct uraid_sb sb[N];
	uint8_t uuid[16];
	struct uraid_engine *e;
	struct uraid_array *a;
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

static uint64_t area(const struct t *t, unsigned s)
{
	return (uint64_t)((int64_t)t->sb[s].super_offset + uraid_sb_ppl_offset(&t->sb[s]));
}

/* md's walk: the newest valid header of slot s's area; *pp_at: absolute
   sector of its partial parity. false: none. */
static bool newest(struct t *t, unsigned s, struct uraid_ppl_header *h, uint64_t *pp_at)
{
	static struct uraid_ppl_header cur;
	uint8_t page[URAID_PPL_HEADER_BYTES];
	uint64_t size = uraid_sb_ppl_size(&t->sb[s]), off = 0;
	uint32_t sig = uraid_ppl_signature(t->uuid);
	bool found = false;
	char why[200];

	while (off + 8 < size) {
		CHECK(rw(t, s, 0, page, sizeof(page), area(t, s) + off) == 0, "read header");
		if (uraid_ppl_decode(page, sig, (size - off - 8) * 512, &cur, why, sizeof(why)))
			break;
		if (found && h->generation > cur.generation)
			break;
		*h = cur;
		*pp_at = area(t, s) + off + 8;
		found = true;
		off += 8 + uraid_ppl_pp_total(&cur) / 512;
	}
	return found;
}

/*
 * The newest log on row's parity member after a write of chunks [k0, k1] of
 * the row over [x0, x0 + len) bytes of each: one entry, md's fields, pp the
 * XOR of the other chunks (read from the members; missing: skip_slot's
 * chunk is taken as the XOR of the others and the parity).
 */
static void check_entry(struct t *t, const char *what, uint64_t row, unsigned k0, unsigned k1,
			uint32_t x0, uint32_t len, int missing)
{
	static struct uraid_ppl_header h;
	static uint8_t want[CB], b[CB], got[CB];
	unsigned ps = p_slot(row);
	uint64_t pp_at = 0;
	bool full = k0 == 0 && k1 == D - 1;

	if (!newest(t, ps, &h, &pp_at)) {
		CHECK(0, "%s: a valid log on the parity member", what);
		return;
	}
	CHECK(h.entries_count == 1, "%s: one entry (%u)", what, h.entries_count);
	const struct uraid_ppl_entry *e = &h.entries[0];
	CHECK(e->data_sector == row * D * CHUNK + (uint64_t)k0 * CHUNK + x0 / 512,
	      "%s: data_sector %" PRIu64, what, e->data_sector);
	CHECK(e->data_size == (k1 - k0 + 1) * len, "%s: data_size %u", what, e->data_size);
	CHECK(e->parity_disk == ps, "%s: parity_disk %u (want %u)", what, e->parity_disk, ps);
	CHECK(e->pp_size == (full ? 0 : len), "%s: pp_size %u", what, e->pp_size);
	if (full || e->pp_size != len)
		return;
	/* the chunks outside the span, as the members hold them now */
	memset(want, 0, len);
	for (unsigned k = 0; k < D; k++) {
		if (k >= k0 && k <= k1)
			continue;
		unsigned s = d_slot(row, k);
		if ((int)s == missing) {
			/* its content: the XOR of every other member's block */
			for (unsigned o = 0; o < N; o++) {
				if (o == s)
					continue;
				CHECK(rw(t, o, 0, b, len, t->sb[o].data_offset + row * CHUNK + x0 / 512) == 0,
				      "read");
				for (uint32_t i = 0; i < len; i++)
					want[i] ^= b[i];
			}
			continue;
		}
		CHECK(rw(t, s, 0, b, len, t->sb[s].data_offset + row * CHUNK + x0 / 512) == 0, "read");
		for (uint32_t i = 0; i < len; i++)
			want[i] ^= b[i];
	}
	CHECK(rw(t, ps, 0, got, len, pp_at) == 0, "read pp");
	CHECK(!memcmp(got, want, len), "%s: the partial parity is the XOR of the chunks outside "
	      "the span", what);
	CHECK(uraid_ppl_pp_checksum(got, len) == e->checksum, "%s: the entry's checksum", what);
}

/* Write chunks [k0, k1] of row over [x0, x0 + len) of each (k0 < k1: one
   request over the whole chunks between, then only their range checked:
   callers pass x0 = 0, len = CB for several chunks). */
static void write_row(struct t *t, uint64_t *seed, const char *what, uint64_t row, unsigned k0,
		      unsigned k1, uint32_t x0, uint32_t len)
{
	static uint8_t buf[D * CB];
	uint64_t off = (row * D * CHUNK + (uint64_t)k0 * CHUNK) * 512 + x0;
	size_t n = k0 == k1 ? len : (size_t)(k1 - k0 + 1) * CB;

	fill(seed, buf, n);
	CHECK(uraid_array_pwrite(t->a, buf, n, off, 0) == 0, "%s: write", what);
}

static uint64_t flushes(struct t *t, unsigned s)
{
	struct array *A = (struct array *)t->a;

	return A->slot[s].m ? atomic_load(&A->slot[s].m->flushes) : 0;
}

static int open_array(struct t *t, uint32_t engine_flags)
{
	struct uraid_engine_opts eo = { .reactors = 1, .flags = engine_flags };
	struct uraid_assemble_opts ao = { .paths = t->devs, .npaths = N };
	char err[256];

	if (uraid_engine_create(&eo, &t->e) ||
	    uraid_array_assemble(t->e, &ao, &t->a, err, sizeof(err))) {
		fprintf(stderr, "assemble: %s\n", err);
		return -1;
	}
	return 0;
}

static void close_array(struct t *t)
{
	uraid_array_close(t->a);
	uraid_engine_destroy(t->e);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 0x7e57991ull;
	struct t t;
	char err[256];
	uint8_t sbuf[URAID_SB_BYTES];

	printf("test_ppl_runtime: seed 0x%016llx\n", (unsigned long long)seed);
	snprintf(t.dir, sizeof(t.dir), "/tmp/uraid-pplrt.%d", getpid());
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
	if (uraid_create(&co, &cr, err, sizeof(err))) {
		fprintf(stderr, "create: %s\n", err);
		return 1;
	}
	for (unsigned s = 0; s < N; s++) {
		CHECK(rw(&t, s, 0, sbuf, sizeof(sbuf), 8) == 0, "read sb");
		CHECK(uraid_sb_decode(sbuf, &t.sb[s]) == 0, "decode sb");
	}
	if (open_array(&t, 0))
		return 1;
	/* fill every row through the engine (full rows: no partial parity) */
	{
		uint64_t size = uraid_array_size(t.a);
		uint8_t *buf = malloc(D * CB);
		for (uint64_t off = 0; off < size; off += D * CB) {
			fill(&seed, buf, D * CB);
			CHECK(uraid_array_pwrite(t.a, buf, D * CB, off, 0) == 0, "fill");
		}
		free(buf);
	}

	/* the members a unit wrote are flushed before the next log */
	{
		uint64_t row = 6, before[N];
		for (unsigned s = 0; s < N; s++)
			before[s] = flushes(&t, s);
		write_row(&t, &seed, "flush", row, 1, 1, 16 * 512, 4096);
		/* a write logged on the same member (row 14: parity slot 1 too)
		   waits for those flushes: once it is done, they are */
		write_row(&t, &seed, "flush", row + 8, 0, 0, 0, 4096);
		CHECK(flushes(&t, d_slot(row, 1)) > before[d_slot(row, 1)],
		      "the written data member is flushed before the next log");
		CHECK(flushes(&t, p_slot(row)) > before[p_slot(row)],
		      "the parity member is flushed before the next log");
	}

	write_row(&t, &seed, "RMW one chunk", 5, 1, 1, 16 * 512, 8192);
	check_entry(&t, "RMW one chunk", 5, 1, 1, 16 * 512, 8192, -1);
	write_row(&t, &seed, "RMW chunk 0", 9, 0, 0, 0, 4096);
	check_entry(&t, "RMW chunk 0", 9, 0, 0, 0, 4096, -1);
	write_row(&t, &seed, "two chunks", 7, 1, 2, 0, CB);
	check_entry(&t, "two chunks", 7, 1, 2, 0, CB, -1);
	write_row(&t, &seed, "full row", 10, 0, D - 1, 0, CB);
	check_entry(&t, "full row", 10, 0, D - 1, 0, CB, -1);
	/* write-zeroes over a whole row goes through the log (not punched
	   member by member, which a crash would tear with nothing logged) */
	CHECK(uraid_array_write_zeroes(t.a, 11ull * D * CB, D * CB) == 0, "write zeroes");
	check_entry(&t, "write-zeroes of a full row", 11, 0, D - 1, 0, CB, -1);
	/* the same member logs again: the walk finds the newer generation
	   after the older ones (rows 5, 9, 13 share parity slot 2) */
	write_row(&t, &seed, "next on the same member", 13, 2, 2, 0, 4096);
	check_entry(&t, "next on the same member", 13, 2, 2, 0, 4096, -1);

	/* a log write that fails fails its member: the write goes on degraded */
	{
		uint64_t row = 41;                      /* far from the area's sectors */
		unsigned ps = p_slot(row);
		uint64_t first = area(&t, ps);
		struct uraid_fault f = { .kind = URAID_FAULT_WRITE, .first_sector = first,
					 .last_sector = first + uraid_sb_ppl_size(&t.sb[ps]) - 1 };
		struct uraid_array_status st;

		CHECK(uraid_array_inject(t.a, ps, &f) == 0, "inject");
		write_row(&t, &seed, "log write fails", row, 1, 1, 0, 4096);
		CHECK(uraid_array_status(t.a, &st) == 0, "status");
		CHECK(st.degraded == 1, "a failed log write fails its member (degraded %u)",
		      st.degraded);
		f.kind = URAID_FAULT_NONE;
		uraid_array_inject(t.a, ps, &f);

		/* degraded: a unit whose missing data chunk lies outside the
		   span logs pp computed through the parity... the parity
		   member is the failed one here: rows whose parity lives
		   elsewhere still log */
		uint64_t r2 = 4;                        /* parity slot 3, data 0, 1, 2 */
		if (p_slot(r2) != ps) {
			write_row(&t, &seed, "degraded", r2, 0, 0, 0, 4096);
			check_entry(&t, "degraded (missing chunk outside the span)", r2, 0, 0, 0,
				    4096, (int)ps);
		}
	}
	close_array(&t);

	/* a spare with a stale log of this array rebuilt into slot 2 */
	{
		unsigned ps = 2;
		char spare[96];
		uint8_t hdr[URAID_PPL_HEADER_BYTES];
		static struct uraid_ppl_header h = { .generation = 1000000, .entries_count = 1 };
		struct uraid_sync_status ss;
		struct uraid_array_status st;

		snprintf(spare, sizeof(spare), "%s/spare.img", t.dir);
		FILE *f = fopen(spare, "w");
		CHECK(f && ftruncate(fileno(f), MEMBER_BYTES) == 0, "spare");
		if (f)
			fclose(f);
		h.signature = uraid_ppl_signature(t.uuid);
		h.entries[0].data_sector = 5 * D * CHUNK;
		h.entries[0].data_size = 4096;
		h.entries[0].pp_size = 0;
		h.entries[0].parity_disk = ps;
		h.entries[0].checksum = uraid_ppl_pp_checksum(hdr, 0);
		CHECK(uraid_ppl_encode(&h, hdr) == 0, "encode");
		/* where the spare's area will be: as the members' (1.2) */
		int fd = open(spare, O_WRONLY);
		CHECK(fd >= 0 && uraid_pwrite_full(fd, hdr, sizeof(hdr), area(&t, ps) * 512) == 0,
		      "plant a stale log");
		if (fd >= 0)
			close(fd);
		if (open_array(&t, URAID_ENGINE_THREADS))
			return 1;
		CHECK(uraid_array_add_member(t.a, spare, 0, err, sizeof(err)) == 0, "add: %s", err);
		for (int i = 0; i < 20000; i++) {
			uraid_array_status(t.a, &st);
			uraid_array_sync_status(t.a, &ss);
			if (st.degraded == 0 && ss.kind == URAID_SYNC_NONE)
				break;
			usleep(1000);
		}
		CHECK(st.degraded == 0, "the spare rebuilt into slot %u", ps);
		memcpy(t.paths[ps], spare, sizeof(spare));
		CHECK(rw(&t, ps, 0, sbuf, sizeof(sbuf), 8) == 0, "read sb");
		CHECK(uraid_sb_decode(sbuf, &t.sb[ps]) == 0, "decode sb");
		uint64_t pp_at;
		struct uraid_ppl_header got;
		CHECK(newest(&t, ps, &got, &pp_at) && got.generation < 1000000,
		      "the stale log is gone from the rebuilt member's area (generation %" PRIu64 ")",
		      got.generation);
		write_row(&t, &seed, "on the rebuilt member", 5, 0, 0, 0, 4096);
		check_entry(&t, "on the rebuilt member", 5, 0, 0, 0, 4096, -1);
		close_array(&t);
	}

	/* the write hole, torn by hand after an engine write */
	{
		uint64_t row = 20;
		unsigned ps = p_slot(row), victim = d_slot(row, 0);
		uint32_t x0 = 32 * 512, len = 8192;
		static uint8_t oldp[8192], keep[8192], newd[8192], got[8192];
		uint8_t sb[URAID_SB_BYTES];
		struct uraid_array_status st;

		for (unsigned s = 0; s < N; s++) {
			CHECK(rw(&t, s, 0, sb, sizeof(sb), 8) == 0, "read sb");
			CHECK(uraid_sb_decode(sb, &t.sb[s]) == 0, "decode sb");
		}
		uint64_t at = row * CHUNK + x0 / 512;
		CHECK(rw(&t, ps, 0, oldp, len, t.sb[ps].data_offset + at) == 0, "read parity");
		CHECK(rw(&t, victim, 0, keep, len, t.sb[victim].data_offset + at) == 0, "read chunk 0");
		if (open_array(&t, 0))
			return 1;
		fill(&seed, newd, len);
		CHECK(uraid_array_pwrite(t.a, newd, len, (row * D * CHUNK + CHUNK) * 512 + x0, 0) == 0,
		      "write chunk 1");
		close_array(&t);
		/* torn: the parity as before the write; dirty */
		CHECK(rw(&t, ps, 1, oldp, len, t.sb[ps].data_offset + at) == 0, "tear");
		for (unsigned s = 0; s < N; s++) {
			CHECK(rw(&t, s, 0, sb, sizeof(sb), 8) == 0, "read sb");
			CHECK(uraid_sb_decode(sb, &t.sb[s]) == 0, "decode sb");
			t.sb[s].resync_offset = 0;
			uraid_sb_encode(&t.sb[s], sb);
			CHECK(rw(&t, s, 1, sb, uraid_sb_write_bytes(t.sb[s].max_dev), 8) == 0, "dirty");
		}
		const char *three[N - 1];
		unsigned n3 = 0;
		for (unsigned s = 0; s < N; s++)
			if (s != victim)
				three[n3++] = t.paths[s];
		struct uraid_engine_opts eo = { .reactors = 1 };
		struct uraid_assemble_opts ao = { .paths = three, .npaths = n3 };
		if (uraid_engine_create(&eo, &t.e) ||
		    uraid_array_assemble(t.e, &ao, &t.a, err, sizeof(err))) {
			CHECK(0, "assemble dirty and degraded: %s", err);
			return 1;
		}
		CHECK(uraid_array_status(t.a, &st) == 0 && st.degraded == 1, "degraded");
		CHECK(uraid_array_pread(t.a, got, len, (row * D * CHUNK) * 512 + x0) == 0 &&
		      !memcmp(got, keep, len),
		      "the missing member's bytes read back through the replayed parity");
		CHECK(uraid_array_pread(t.a, got, len, (row * D * CHUNK + CHUNK) * 512 + x0) == 0 &&
		      !memcmp(got, newd, len), "the written bytes read back");
		close_array(&t);
	}

	for (unsigned i = 0; i < N; i++)
		unlink(t.paths[i]);
	for (unsigned i = 0; i < N; i++) {
		char old[96];
		snprintf(old, sizeof(old), "%s/m%u.img", t.dir, i);
		unlink(old);
	}
	rmdir(t.dir);
	if (failures) {
		printf("test_ppl_runtime: %d failure(s), seed 0x%016llx\n", failures,
		       (unsigned long long)seed);
		return 1;
	}
	printf("test_ppl_runtime: all passed\n");
	return 0;
}
