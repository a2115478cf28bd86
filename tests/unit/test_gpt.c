// SPDX-License-Identifier: MIT
/*
 * The GPT (src/pool/gpt.c): a table written and read back is the same
 * table; the CRC32 is zlib's; each kind of damage to one copy is found and
 * the other copy used, damage to both refused, tables uraid does not handle
 * refused; a drive that grew read as it was and its backup moved to the
 * new end, hostile alternate LBAs and a half-done repair; the pool
 * label's record round trip. Also members given as a
 * range of a file (PATH@START+LENGTH, common/range_path.c, io/member_open.c):
 * I/O lands at the range's start, nothing outside the range changes, and
 * two ranges of one file are opened side by side while one range is
 * claimed once. Random data from a fixed seed (printed).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/range_path.h"
#include "io/member.h"
#include "io/reactor.h"
#include "pool/gpt.h"
#include "pool/pool.h"
#include "../support/check.h"

#define SEED 0x6770u
#define DEV_SECTORS (64u * 2048u)       /* 64 MiB */

static uint64_t rng = SEED;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void random_table(struct gpt *g)
{
	uint8_t guid[16];
	char err[200];

	for (int i = 0; i < 16; i++)
		guid[i] = (uint8_t)next_rand();
	CHECK(gpt_init(g, DEV_SECTORS, guid, err, sizeof(err)) == 0, "init: %s", err);
	uint64_t at = 2048;
	for (unsigned i = 0; i < 5; i++) {
		struct gpt_part *p = &g->part[i * 7];   /* gaps in the entries too */
		for (int k = 0; k < 16; k++) {
			p->type[k] = (uint8_t)next_rand();
			p->guid[k] = (uint8_t)next_rand();
		}
		p->first = at;
		p->last = at + 2048 * (1 + next_rand() % 4) - 1;
		p->attrs = next_rand();
		snprintf(p->name, sizeof(p->name), "part-%u/%llx", i,
			 (unsigned long long)(next_rand() & 0xffffff));
		at = p->last + 1 + 2048;
	}
}

static bool same_table(const struct gpt *a, const struct gpt *b)
{
	if (a->dev_sectors != b->dev_sectors || memcmp(a->disk_guid, b->disk_guid, 16) ||
	    a->first_usable != b->first_usable || a->last_usable != b->last_usable)
		return false;
	for (unsigned i = 0; i < GPT_ENTRIES; i++) {
		const struct gpt_part *p = &a->part[i], *q = &b->part[i];
		if (memcmp(p->type, q->type, 16) || memcmp(p->guid, q->guid, 16) ||
		    p->first != q->first || p->last != q->last || p->attrs != q->attrs ||
		    strcmp(p->name, q->name))
			return false;
	}
	return true;
}

static void test_crc_and_guid(void)
{
	/* the check value of CRC-32/ISO-HDLC (zlib's crc32) */
	CHECK(gpt_crc32("123456789", 9) == 0xcbf43926u, "crc32 %08x", gpt_crc32("123456789", 9));
	uint8_t g[16], h[16];
	char text[37];
	CHECK(gpt_guid_parse(POOL_TYPE_VOLUME_TEXT, g) == 0, "parse");
	CHECK(!memcmp(g, pool_type_volume, 16), "the volume type's bytes match its text");
	CHECK(gpt_guid_parse(POOL_TYPE_LABEL_TEXT, h) == 0 && !memcmp(h, pool_type_label, 16),
	      "the label type's bytes match its text");
	gpt_guid_text(g, text);
	CHECK(!strcmp(text, POOL_TYPE_VOLUME_TEXT), "text %s", text);
	CHECK(gpt_guid_parse("c4667a33-60e5-446a-85d3-32d64c31e51", g) == -EINVAL, "short");
	CHECK(gpt_guid_parse("c4667a33+60e5-446a-85d3-32d64c31e516", g) == -EINVAL, "dash");
	CHECK(gpt_guid_parse("g4667a33-60e5-446a-85d3-32d64c31e516", g) == -EINVAL, "hex");
}

/* Encode a random table, damage a copy as `how` says, decode. */
static void test_damage(void)
{
	static uint8_t primary[GPT_PRIMARY_BYTES], backup[GPT_BACKUP_BYTES];
	struct gpt *g = malloc(sizeof(*g)), *r = malloc(sizeof(*r));
	struct gpt_read_info info;
	char err[400];

	random_table(g);
	CHECK(gpt_encode(g, primary, backup, err, sizeof(err)) == 0, "encode: %s", err);
	CHECK(primary[510] == 0x55 && primary[511] == 0xaa && primary[446 + 4] == 0xee,
	      "protective MBR");
	CHECK(gpt_decode(primary, backup, DEV_SECTORS, r, &info, err, sizeof(err)) == 0,
	      "decode: %s", err);
	CHECK(info.primary_ok && info.backup_ok && info.protective_mbr, "both copies good");
	CHECK(same_table(g, r), "round trip");

	/* damage in the primary: the backup is used, and the reverse */
	struct { bool primary; size_t off; const char *what; } cases[] = {
		{ true, 512 + 0, "signature" }, { true, 512 + 16, "header CRC" },
		{ true, 1024 + 5 * 128 + 33, "an entry" }, { true, 512 + 80, "entry count" },
		{ false, GPT_ENTRY_SECTORS * 512 + 24, "my LBA" }, { false, 7, "an entry" },
		{ false, GPT_ENTRY_SECTORS * 512 + 40, "first usable" },
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		static uint8_t p2[GPT_PRIMARY_BYTES], b2[GPT_BACKUP_BYTES];
		memcpy(p2, primary, sizeof(p2));
		memcpy(b2, backup, sizeof(b2));
		(cases[i].primary ? p2 : b2)[cases[i].off] ^= 0x41;
		memset(r, 0, sizeof(*r));
		int rc = gpt_decode(p2, b2, DEV_SECTORS, r, &info, err, sizeof(err));
		CHECK(rc == 0, "%s damaged: %d %s", cases[i].what, rc, err);
		CHECK(info.primary_ok == !cases[i].primary && info.backup_ok == cases[i].primary,
		      "%s damaged: the %s copy not found damaged", cases[i].what,
		      cases[i].primary ? "primary" : "backup");
		CHECK(same_table(g, r), "%s damaged: the other copy is not the table", cases[i].what);
		/* both copies damaged: refused with both reasons */
		(cases[i].primary ? b2 : p2)[cases[i].primary ? 7 : 512 + 16] ^= 0x41;
		rc = gpt_decode(p2, b2, DEV_SECTORS, r, &info, err, sizeof(err));
		CHECK(rc == -EINVAL && strstr(err, "primary") && strstr(err, "backup"),
		      "%s + other copy damaged: %d %s", cases[i].what, rc, err);
	}
	/* a header that is right by its CRC but wrong within: overlapping partitions */
	{
		struct gpt bad = *g;
		bad.part[7].first = bad.part[0].last;   /* part 8 starts inside part 1 */
		CHECK(gpt_encode(&bad, primary, backup, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "overlap"), "overlap not refused: %s", err);
		bad = *g;
		bad.part[0].last = bad.last_usable + 1;
		CHECK(gpt_encode(&bad, primary, backup, err, sizeof(err)) == -EINVAL,
		      "a partition past the usable LBAs not refused");
	}
	/* no table at all; an MBR with partitions */
	memset(primary, 0, sizeof(primary));
	memset(backup, 0, sizeof(backup));
	CHECK(gpt_decode(primary, backup, DEV_SECTORS, r, &info, err, sizeof(err)) == -ENOENT,
	      "zeroes: no GPT");
	primary[446 + 4] = 0x83;
	primary[446 + 12] = 0x10;
	primary[510] = 0x55;
	primary[511] = 0xaa;
	CHECK(gpt_decode(primary, backup, DEV_SECTORS, r, &info, err, sizeof(err)) == -ENOENT &&
	      info.mbr_partitions && strstr(err, "MBR"), "MBR seen: %s", err);
	free(g);
	free(r);
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
	le32(p, (uint32_t)v);
	le32(p + 4, (uint32_t)(v >> 32));
}

/* Seal a header again after an edit: the entries' CRC32 (byte 88) and the
 * header's (byte 16, over the 92 bytes uraid writes), so that only the
 * field checks can find what was edited. */
static void reseal(uint8_t *hdr, const uint8_t *entries)
{
	le32(hdr + 88, gpt_crc32(entries, GPT_ENTRIES * 128));
	le32(hdr + 16, 0);
	le32(hdr + 16, gpt_crc32(hdr, 92));
}

/* Field damage behind valid CRCs, in the primary copy: each is found by
 * the field checks (the CRCs match), the backup is used. */
static void test_field_damage(void)
{
	static uint8_t primary[GPT_PRIMARY_BYTES], backup[GPT_BACKUP_BYTES];
	struct gpt *g = malloc(sizeof(*g)), *r = malloc(sizeof(*r));
	struct gpt_read_info info;
	char err[400];

	random_table(g);
	CHECK(gpt_encode(g, primary, backup, err, sizeof(err)) == 0, "encode: %s", err);
	enum { COUNT, ENTRY_SIZE, HDR_SIZE, LAST_USABLE, PART_PAST_END, OVERLAP, FIRST_USABLE,
	       MY_LBA, NCASES };
	static const char *what[NCASES] = {
		"entry count 0xFFFFFFFF", "entry size 256", "header size 600",
		"last usable past the device", "a partition ending past the device",
		"overlapping entries", "first usable inside the entries", "my LBA",
	};
	for (int c = 0; c < NCASES; c++) {
		static uint8_t p2[GPT_PRIMARY_BYTES];
		uint8_t *hdr = p2 + 512, *ent = p2 + 1024;
		memcpy(p2, primary, sizeof(p2));
		switch (c) {
		case COUNT: le32(hdr + 80, 0xFFFFFFFFu); break;
		case ENTRY_SIZE: le32(hdr + 84, 256); break;
		case HDR_SIZE: le32(hdr + 12, 600); break;
		case LAST_USABLE: le64(hdr + 48, DEV_SECTORS + 10); break;
		case PART_PAST_END: le64(ent + 40, DEV_SECTORS + 10); break;     /* entry 0's last */
		case OVERLAP: le64(ent + 7 * 128 + 32, g->part[0].last); break;  /* entry 7's first */
		case FIRST_USABLE: le64(hdr + 40, 3); break;
		case MY_LBA: le64(hdr + 24, 5); break;
		}
		reseal(hdr, ent);
		memset(r, 0, sizeof(*r));
		int rc = gpt_decode(p2, backup, DEV_SECTORS, r, &info, err, sizeof(err));
		CHECK(rc == 0 && !info.primary_ok && info.backup_ok,
		      "%s: not found by the field checks (rc %d, primary %s)", what[c], rc,
		      info.primary_ok ? "ok" : info.primary_why);
		CHECK(!strstr(info.primary_why, "CRC"), "%s: refused by a CRC (%s), not the field",
		      what[c], info.primary_why);
		CHECK(same_table(g, r), "%s: the backup is not the table", what[c]);
	}
	/* two sound copies that differ: the primary is used, the backup reported */
	{
		static uint8_t b2[GPT_BACKUP_BYTES];
		memcpy(b2, backup, sizeof(b2));
		b2[5 * 128 + 56] ^= 0x01;       /* entry 5's name, first character... */
		b2[7 * 128 + 56] ^= 0x01;       /* ...and entry 7's, the CRCs resealed */
		reseal(b2 + GPT_ENTRY_SECTORS * 512, b2);
		int rc = gpt_decode(primary, b2, DEV_SECTORS, r, &info, err, sizeof(err));
		CHECK(rc == 0 && info.primary_ok && !info.backup_ok &&
		      strstr(info.backup_why, "differs"), "differing copies: rc %d, backup %s", rc,
		      info.backup_ok ? "ok" : info.backup_why);
		CHECK(same_table(g, r), "differing copies: the primary is not the table");
	}
	/* another tool's non-ASCII name (U+00E9 in entry 0) survives a rewrite */
	{
		static uint8_t p2[GPT_PRIMARY_BYTES], b2[GPT_BACKUP_BYTES];
		memcpy(p2, primary, sizeof(p2));
		memcpy(b2, backup, sizeof(b2));
		p2[1024 + 56] = b2[56] = 0xe9;
		reseal(p2 + 512, p2 + 1024);
		reseal(b2 + GPT_ENTRY_SECTORS * 512, b2);
		int rc = gpt_decode(p2, b2, DEV_SECTORS, r, &info, err, sizeof(err));
		CHECK(rc == 0 && info.primary_ok && info.backup_ok && r->part[0].name[0] == '?',
		      "a non-ASCII name: rc %d %s", rc, err);
		static uint8_t p3[GPT_PRIMARY_BYTES], b3[GPT_BACKUP_BYTES];
		CHECK(gpt_encode(r, p3, b3, err, sizeof(err)) == 0 &&
		      !memcmp(p3 + 1024, p2 + 1024, GPT_ENTRIES * 128),
		      "a non-ASCII name is not written back as it was read");
	}
	free(g);
	free(r);
}

static void test_free_extents(void)
{
	struct gpt *g = malloc(sizeof(*g));
	struct gpt_extent ext[8];
	uint8_t guid[16] = { 1 };
	char err[200];

	gpt_init(g, DEV_SECTORS, guid, err, sizeof(err));
	unsigned n = gpt_free_extents(g, ext, 8);
	/* one extent from 1 MiB up to the last whole MiB before the backup */
	CHECK(n == 1 && ext[0].first == 2048 && ext[0].sectors == DEV_SECTORS - 2 * 2048,
	      "empty: %u extents, first %llu len %llu", n, (unsigned long long)ext[0].first,
	      (unsigned long long)ext[0].sectors);
	memcpy(g->part[3].type, pool_type_volume, 16);
	g->part[3].first = 4096;
	g->part[3].last = 6143;
	n = gpt_free_extents(g, ext, 8);
	CHECK(n == 2 && ext[0].first == 2048 && ext[0].sectors == 2048 && ext[1].first == 6144,
	      "around a partition: %u extents", n);
	CHECK(gpt_free_entry(g) == 0, "first free entry");
	free(g);
}

static void test_label(void)
{
	struct pool_label l = { .index = 3, .ctime = 1764600000 }, r;
	uint8_t s[512];
	char err[200];

	memcpy(l.uuid, pool_type_label, 16);
	snprintf(l.name, sizeof(l.name), "tank-2");
	pool_label_encode(&l, s);
	CHECK(pool_label_decode(s, &r, err, sizeof(err)) == 0 && !memcmp(&l.uuid, r.uuid, 16) &&
	      !strcmp(r.name, "tank-2") && r.index == 3 && r.ctime == l.ctime, "label round trip");
	s[40] ^= 1;
	CHECK(pool_label_decode(s, &r, err, sizeof(err)) == -EINVAL, "label CRC");
	CHECK(!pool_name_ok("-x", 16) && !pool_name_ok("a/b", 16) && !pool_name_ok("", 16) &&
	      pool_name_ok("a.b_c-1", 16) && !pool_name_ok("abcdefghijklmnopq", 16), "names");
}

/* The wall's report of the write refused on purpose: counted, not printed. */
static void count_log(void *opaque, enum uraid_log_level level, const char *msg)
{
	(void)level;
	(void)msg;
	(*(unsigned *)opaque)++;
}

/* A member as a range of a file: its I/O lands at the range, nothing else moves. */
static void test_range_member(void)
{
	char path[] = "/tmp/uraid-test-range-XXXXXX", spec[300], err[300];
	int fd = mkstemp(path);
	uint8_t *buf;
	struct uraid_range_path rp;

	CHECK(fd >= 0, "mkstemp");
	CHECK(ftruncate(fd, 8 << 20) == 0, "size");
	if (posix_memalign((void **)&buf, 4096, 8 << 20))
		exit(1);
	for (size_t i = 0; i < (8u << 20); i++)
		buf[i] = (uint8_t)next_rand();
	CHECK(pwrite(fd, buf, 8 << 20, 0) == 8 << 20, "fill");

	snprintf(spec, sizeof(spec), "%s@4096+2048", path);
	CHECK(uraid_range_path_parse(spec, &rp, err, sizeof(err)) == 0 && rp.ranged &&
	      rp.start == 4096 && rp.sectors == 2048 && !strcmp(rp.path, path), "parse %s", spec);
	CHECK(uraid_range_path_parse(path, &rp, err, sizeof(err)) == 0 && !rp.ranged, "plain");
	CHECK(uraid_range_path_parse("/x@1+0", &rp, err, sizeof(err)) == -EINVAL, "empty range");
	CHECK(uraid_range_path_parse("/x@18446744073709551615+1", &rp, err, sizeof(err)) == -EINVAL,
	      "range past 2^64 bytes");
	CHECK(uraid_range_path_parse("/x@1+2junk", &rp, err, sizeof(err)) == 0 && !rp.ranged,
	      "not a range: a name");

	/* a file named like a range of a file that exists: refused, not guessed */
	char odd[320];
	snprintf(odd, sizeof(odd), "%s@0+8", path);
	int ofd = open(odd, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(ofd >= 0, "create %s", odd);
	close(ofd);
	CHECK(uraid_range_path_parse(odd, &rp, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "both a file and a range"), "both readings exist: %s", err);
	unlink(odd);
	CHECK(uraid_range_path_parse(odd, &rp, err, sizeof(err)) == 0 && rp.ranged &&
	      rp.sectors == 8, "only the range's file exists");

	struct member *m = member_new(), *m2 = member_new(), *m3 = member_new();
	unsigned reports = 0;
	const struct ulog quiet = { .fn = count_log, .opaque = &reports };
	CHECK(member_open(m, spec, MEMBER_OPEN_BUFFERED, &quiet, err, sizeof(err)) == 0, "open: %s",
	      err);
	CHECK(m->dev_sectors == 2048 && m->base == 4096, "sizes %llu base %llu",
	      (unsigned long long)m->dev_sectors, (unsigned long long)m->base);
	/* a second range of the same file opens; the same range again is refused */
	char spec2[300];
	snprintf(spec2, sizeof(spec2), "%s@8192+2048", path);
	CHECK(member_open(m2, spec2, MEMBER_OPEN_BUFFERED, NULL, err, sizeof(err)) == 0,
	      "a second range: %s", err);
	CHECK(member_open(m3, spec, MEMBER_OPEN_BUFFERED, NULL, err, sizeof(err)) == -EBUSY,
	      "the same range twice: %s", err);
	char past[300];
	snprintf(past, sizeof(past), "%s@16000+2048", path);
	CHECK(member_open(m3, past, MEMBER_OPEN_BUFFERED, NULL, err, sizeof(err)) == -EINVAL,
	      "a range past the end: %s", err);

	uint8_t *w, *r;
	if (posix_memalign((void **)&w, 4096, 65536) || posix_memalign((void **)&r, 4096, 65536))
		exit(1);
	memset(w, 0x5a, 65536);
	struct member_area whole = { 0, 2048 };
	member_set_areas(m, 0, 2048, &whole, 1);
	CHECK(member_pwrite_sync(m, w, 65536, 100) == 0, "write in the range");
	CHECK(member_pread_sync(m, r, 65536, 100) == 0 && !memcmp(r, w, 65536), "read back");
	CHECK(member_pwrite_sync(m, w, 512, 2048) == -EIO && reports == 1,
	      "a write past the range refused and reported (%u reports)", reports);
	/* the file: the bytes at 4096 + 100 sectors changed, nothing else */
	uint8_t *after = malloc(8 << 20);
	CHECK(pread(fd, after, 8 << 20, 0) == 8 << 20, "read file");
	size_t at = (4096 + 100) * 512;
	CHECK(!memcmp(after + at, w, 65536), "the write is at the range's start + 100 sectors");
	memcpy(buf + at, w, 65536);
	CHECK(!memcmp(after, buf, 8 << 20), "nothing outside the write changed");
	member_close(m);
	member_close(m2);
	free(m);
	free(m2);
	free(m3);
	free(after);
	free(w);
	free(r);
	free(buf);
	close(fd);
	unlink(path);
}

struct range_io {
	struct member_io mio;
	int res, done;
};

static void range_io_done(struct member_io *mio, int res)
{
	struct range_io *t = (struct range_io *)mio;
	t->res = res;
	t->done++;
}

static int range_run(struct reactor *r, struct member *m, enum member_op kind, uint32_t len,
		     uint64_t sector)
{
	struct range_io t = { .mio = { .kind = kind, .len = len, .sector = sector, .m = m,
				       .done = range_io_done } };
	member_submit(r, &t.mio);
	for (int i = 0; i < 1000 && !t.done; i++)
		reactor_poll(r, -1);
	return t.done == 1 ? t.res : -ETIME;
}

/* DISCARD and ZEROES over the whole of a range (PATH@4096+2048) of a file:
 * the range reads back zeroes, every byte outside it is unchanged; one
 * sector past the range is refused and changes nothing. */
static void test_range_punch(void)
{
	char path[] = "/tmp/uraid-test-punch-XXXXXX", spec[300], err[300];
	int fd = mkstemp(path);
	const size_t size = 8u << 20, at = 4096u * 512, len = 2048u * 512;
	uint8_t *buf = malloc(size), *after = malloc(size);
	struct reactor r;

	CHECK(fd >= 0 && buf && after, "mkstemp");
	for (size_t i = 0; i < size; i++)
		buf[i] = (uint8_t)next_rand();
	CHECK(pwrite(fd, buf, size, 0) == (ssize_t)size, "fill");
	snprintf(spec, sizeof(spec), "%s@4096+2048", path);
	struct member *m = member_new();
	unsigned reports = 0;
	const struct ulog quiet = { .fn = count_log, .opaque = &reports };
	CHECK(member_open(m, spec, MEMBER_OPEN_BUFFERED, &quiet, err, sizeof(err)) == 0,
	      "open: %s", err);
	struct member_area whole = { 0, 2048 };
	member_set_areas(m, 0, 2048, &whole, 1);
	CHECK(reactor_init(&r, 0, 16) == 0, "reactor");
	static const enum member_op ops[2] = { MEMBER_DISCARD, MEMBER_ZEROES };
	for (int k = 0; k < 2; k++) {
		const char *what = k ? "zeroes" : "discard";
		CHECK(pwrite(fd, buf + at, len, at) == (ssize_t)len, "refill the range");
		/* one sector past the range: refused, nothing changed */
		CHECK(range_run(&r, m, ops[k], (uint32_t)len + 512, 0) < 0, "%s past the range "
		      "not refused", what);
		CHECK(range_run(&r, m, ops[k], 512, 2048) < 0, "%s of the sector after the range "
		      "not refused", what);
		CHECK(pread(fd, after, size, 0) == (ssize_t)size && !memcmp(after, buf, size),
		      "%s refused: the file changed", what);
		int rc = range_run(&r, m, ops[k], (uint32_t)len, 0);
		if (rc == -EOPNOTSUPP) {
			printf("%s: not supported by the file system here, skipped\n", what);
			continue;
		}
		CHECK(rc == 0, "%s of the whole range: %d", what, rc);
		CHECK(pread(fd, after, size, 0) == (ssize_t)size, "read back");
		bool zero = true;
		for (size_t i = at; i < at + len && zero; i++)
			zero = after[i] == 0;
		CHECK(zero, "%s: the range does not read back zeroes", what);
		CHECK(!memcmp(after, buf, at) && !memcmp(after + at + len, buf + at + len,
							   size - at - len),
		      "%s: bytes outside the range changed", what);
	}
	reactor_fini(&r);
	member_close(m);
	free(m);
	free(buf);
	free(after);
	close(fd);
	unlink(path);
}

/*
 * A drive that grew: the table written for DEV_SECTORS, the file made 16 MiB
 * larger. Read as the table it was (grown, grown_from), its free space
 * unchanged; gpt_move_backup and a write make it a sound table of the new
 * size with the same partitions, and no longer grown. The primary damaged
 * too: refused (neither copy where the other says).
 */
static void test_grown(void)
{
	char path[] = "/tmp/uraid-test-grown-XXXXXX", err[300];
	int fd = mkstemp(path);
	struct gpt *g = malloc(sizeof(*g)), *r = malloc(sizeof(*r));
	struct gpt_read_info info;
	const uint64_t grown = DEV_SECTORS + 16 * 2048;

	CHECK(fd >= 0 && g && r, "mkstemp");
	if (fd < 0 || !g || !r)
		goto out;
	unlink(path);
	random_table(g);
	CHECK(ftruncate(fd, (off_t)DEV_SECTORS * 512) == 0, "truncate");
	CHECK(gpt_write(fd, g, err, sizeof(err)) == 0, "write: %s", err);
	CHECK(ftruncate(fd, (off_t)grown * 512) == 0, "grow the file");
	int rc = gpt_read(fd, grown, r, &info, err, sizeof(err));
	CHECK(rc == 0 && info.grown && info.grown_from == DEV_SECTORS && info.primary_ok &&
	      info.backup_ok, "grown: rc %d grown %d from %llu (%s)", rc, info.grown,
	      (unsigned long long)info.grown_from, err);
	CHECK(same_table(g, r), "grown: read as the table it was");
	CHECK(gpt_move_backup(r, DEV_SECTORS, err, sizeof(err)) == -EINVAL, "not larger: refused");
	CHECK(gpt_move_backup(r, grown, err, sizeof(err)) == 0 && r->dev_sectors == grown &&
	      r->last_usable == grown - 34, "moved: %s", err);
	CHECK(gpt_write(fd, r, err, sizeof(err)) == 0, "write moved: %s", err);
	rc = gpt_read(fd, grown, g, &info, err, sizeof(err));
	CHECK(rc == 0 && !info.grown && info.primary_ok && info.backup_ok && same_table(g, r),
	      "after the move: a sound table of the new size (%d %s)", rc, err);

	/* grown again, primary damaged: no copy where the other says */
	CHECK(ftruncate(fd, (off_t)(grown + 2048) * 512) == 0, "grow again");
	CHECK(pwrite(fd, "XXXX", 4, 512 + 16) == 4, "damage the primary");
	rc = gpt_read(fd, grown + 2048, g, &info, err, sizeof(err));
	CHECK(rc == -EINVAL && !info.grown, "grown with a damaged primary: refused (%d %s)", rc,
	      err);
out:
	if (fd >= 0)
		close(fd);
	free(g);
	free(r);
}

/* Put v (8 bytes LE) at off in the primary header of fd and its CRC right. */
static void primary_header_set(int fd, unsigned off, uint64_t v)
{
	uint8_t h[512];

	CHECK(pread(fd, h, 512, 512) == 512, "read the primary header");
	for (unsigned i = 0; i < 8; i++)
		h[off + i] = (uint8_t)(v >> (8 * i));
	uint32_t size = h[12] | h[13] << 8;
	memset(h + 16, 0, 4);
	uint32_t crc = gpt_crc32(h, size);
	for (unsigned i = 0; i < 4; i++)
		h[16 + i] = (uint8_t)(crc >> (8 * i));
	CHECK(pwrite(fd, h, 512, 512) == 512, "write the primary header");
}

/*
 * Hostile or half-done input for the grown-drive check (read_grown): a
 * primary whose alternate LBA is 0, the device's last but one, UINT64_MAX,
 * or beyond the device is not a grown drive (refused as damaged, not read
 * at a wild offset); a partition that ends past the old size is refused; a
 * repair cut halfway (the new backup written at the new end, the primary
 * still the old one) is read as the grown drive, and its repair ends it.
 */
static void test_grown_hostile(void)
{
	char path[] = "/tmp/uraid-test-grownh-XXXXXX", err[300];
	int fd = mkstemp(path);
	struct gpt *g = malloc(sizeof(*g)), *r = malloc(sizeof(*r));
	uint8_t *pb = malloc(GPT_PRIMARY_BYTES), *bb = malloc(GPT_BACKUP_BYTES);
	struct gpt_read_info info;
	const uint64_t grown = DEV_SECTORS + 16 * 2048;
	const uint64_t alts[] = { 0, grown - 2, UINT64_MAX, grown, grown + 4096 };

	CHECK(fd >= 0 && g && r && pb && bb, "mkstemp");
	if (fd < 0 || !g || !r || !pb || !bb)
		goto out;
	unlink(path);
	random_table(g);
	for (unsigned k = 0; k < sizeof(alts) / sizeof(alts[0]); k++) {
		CHECK(ftruncate(fd, 0) == 0 && ftruncate(fd, (off_t)DEV_SECTORS * 512) == 0,
		      "truncate");
		CHECK(gpt_write(fd, g, err, sizeof(err)) == 0, "write: %s", err);
		CHECK(ftruncate(fd, (off_t)grown * 512) == 0, "grow the file");
		primary_header_set(fd, 32, alts[k]);
		int rc = gpt_read(fd, grown, r, &info, err, sizeof(err));
		CHECK(rc == -EINVAL && !info.grown, "alternate LBA %llu: refused, not grown (%d %s) "
		      "p %d b %d pw %s bw %s", (unsigned long long)alts[k], rc, err, info.primary_ok,
		      info.backup_ok, info.primary_why, info.backup_why);
	}

	/* a partition that ends past the old size (both copies say so) */
	CHECK(ftruncate(fd, 0) == 0 && ftruncate(fd, (off_t)DEV_SECTORS * 512) == 0, "truncate");
	CHECK(gpt_encode(g, pb, bb, err, sizeof(err)) == 0, "encode: %s", err);
	uint8_t *e = pb + 1024;         /* the first entry (g->part[0]) */
	uint64_t last = DEV_SECTORS + 100;
	for (unsigned i = 0; i < 8; i++)
		e[40 + i] = (uint8_t)(last >> (8 * i));
	uint32_t ecrc = gpt_crc32(e, GPT_ENTRY_SECTORS * 512);
	for (unsigned i = 0; i < 4; i++) {
		pb[512 + 88 + i] = (uint8_t)(ecrc >> (8 * i));
		bb[GPT_ENTRY_SECTORS * 512 + 88 + i] = (uint8_t)(ecrc >> (8 * i));
	}
	memcpy(bb, e, GPT_ENTRY_SECTORS * 512);
	CHECK(pwrite(fd, pb, GPT_PRIMARY_BYTES, 0) == GPT_PRIMARY_BYTES &&
	      pwrite(fd, bb, GPT_BACKUP_BYTES, (DEV_SECTORS - GPT_BACKUP_BYTES / 512) * 512) ==
	      GPT_BACKUP_BYTES, "write the tables");
	primary_header_set(fd, 32, DEV_SECTORS - 1);    /* its header CRC again */
	{
		/* the backup header's CRC again too */
		uint8_t *h = bb + GPT_ENTRY_SECTORS * 512;
		memset(h + 16, 0, 4);
		uint32_t crc = gpt_crc32(h, 92);
		for (unsigned i = 0; i < 4; i++)
			h[16 + i] = (uint8_t)(crc >> (8 * i));
		CHECK(pwrite(fd, h, 512, (DEV_SECTORS - 1) * 512) == 512, "backup header");
	}
	CHECK(ftruncate(fd, (off_t)grown * 512) == 0, "grow the file");
	int rc = gpt_read(fd, grown, r, &info, err, sizeof(err));
	CHECK(rc == -EINVAL && !info.grown, "a partition past the old size: refused (%d %s)", rc,
	      err);
	/* refused for the partition, not for a CRC: the copies as on disk, decoded
	   at the old size */
	CHECK(pread(fd, pb, GPT_PRIMARY_BYTES, 0) == GPT_PRIMARY_BYTES &&
	      pread(fd, bb, GPT_BACKUP_BYTES, (DEV_SECTORS - GPT_BACKUP_BYTES / 512) * 512) ==
	      GPT_BACKUP_BYTES, "read back");
	CHECK(gpt_decode(pb, bb, DEV_SECTORS, r, &info, err, sizeof(err)) == -EINVAL &&
	      strstr(info.primary_why, "partition") && strstr(info.backup_why, "partition"),
	      "at the old size: %s / %s", info.primary_why, info.backup_why);

	/* a repair cut halfway: the moved backup written, the primary old */
	CHECK(ftruncate(fd, 0) == 0 && ftruncate(fd, (off_t)DEV_SECTORS * 512) == 0, "truncate");
	CHECK(gpt_write(fd, g, err, sizeof(err)) == 0, "write: %s", err);
	CHECK(ftruncate(fd, (off_t)grown * 512) == 0, "grow the file");
	*r = *g;
	CHECK(gpt_move_backup(r, grown, err, sizeof(err)) == 0, "move: %s", err);
	CHECK(gpt_encode(r, pb, bb, err, sizeof(err)) == 0, "encode moved: %s", err);
	CHECK(pwrite(fd, bb, GPT_BACKUP_BYTES, (grown - GPT_BACKUP_BYTES / 512) * 512) ==
	      GPT_BACKUP_BYTES, "only the new backup written");
	rc = gpt_read(fd, grown, r, &info, err, sizeof(err));
	CHECK(rc == 0 && info.grown && info.grown_from == DEV_SECTORS && info.primary_ok &&
	      same_table(g, r), "half a repair: still the grown drive (%d %s)", rc, err);
	CHECK(gpt_move_backup(r, grown, err, sizeof(err)) == 0 &&
	      gpt_write(fd, r, err, sizeof(err)) == 0, "the repair again: %s", err);
	rc = gpt_read(fd, grown, g, &info, err, sizeof(err));
	CHECK(rc == 0 && !info.grown && info.primary_ok && info.backup_ok && same_table(g, r),
	      "the repair again: a sound table of the new size (%d %s)", rc, err);
out:
	if (fd >= 0)
		close(fd);
	free(g);
	free(r);
	free(pb);
	free(bb);
}

int main(void)
{
	printf("seed 0x%x\n", SEED);
	test_crc_and_guid();
	test_damage();
	test_field_damage();
	test_free_extents();
	test_label();
	test_range_member();
	test_range_punch();
	test_grown();
	test_grown_hostile();
	if (failures)
		printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
