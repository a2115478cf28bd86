// SPDX-License-Identifier: MIT
/*
 * Fuzz target for assembly across several member images: probe, superblock
 * validation, the areas check, geometry, bitmap setup, then (writable
 * inputs) a few writes and reads through the engine, which mark the array
 * active, write bitmap pages and superblocks. Properties besides "no crash,
 * no sanitizer report":
 *  - an assembled member's areas (its I/O wall) lie inside its device and
 *    the data area overlaps no metadata area;
 *  - no I/O of the engine reaches the wall (io/member_wall.c): every write
 *    uraid makes stays inside the member's own areas.
 *
 * The members are in-memory files (memfd) built from a valid array of one of
 * KINDS shapes (uraid_create, once), then edited by the input. Input:
 *   byte 0   shape (KINDS)
 *   byte 1   flags: FL_*
 *   byte 2   device shrink in 4 KiB units (every member)
 *   then 12-byte edits: member, where (bit 0: window at the device end,
 *   bits 1-2: log2 of the width), offset (u16 LE) in the 64 KiB window,
 *   value (u64 LE). Superblock checksums are fixed after the edits unless
 *   FL_RAW_CSUM, so that the checks after the checksum are reached.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uraid/uraid.h>
#include "engine/core/array.h"

#include "fuzz.h"

#define KINDS 6
#define MAXM 4
#define DEV_BYTES (4u << 20)
#define WIN (16u << 10)           /* metadata window at each end of a member */
#define EDIT_BYTES 12
#define HEAD_BYTES 3

#define FL_WRITABLE 0x1u
#define FL_IO       0x2u
#define FL_RAW_CSUM 0x4u
#define FL_FORCE    0x8u
#define FL_DIRTY    0x10u         /* resync_offset 0 on every member */

struct shape {
	const char *level;
	const char *layout;
	unsigned n, minor, chunk_kib;
	bool bitmap;
};

static const struct shape shapes[KINDS] = {
	{ "1", NULL, 2, 2, 0, true },
	{ "5", NULL, 3, 2, 64, true },
	{ "10", "n2", 4, 0, 64, true },
	{ "6", NULL, 4, 1, 64, false },
	{ "0", NULL, 2, 2, 64, false },
	{ "5", "parity-first", 3, 0, 64, true },
};

struct image {
	uint8_t head[WIN], tail[WIN];
};

static struct {
	bool ready;
	struct uraid_engine *e;
	int fd[MAXM];
	char path[MAXM][64];
	struct image img[KINDS][MAXM];
} G;

static void die(const char *what)
{
	perror(what);
	abort();
}

/* The shapes' valid members, made once with uraid_create on /dev/shm. */
static void make_templates(void)
{
	for (unsigned k = 0; k < KINDS; k++) {
		const struct shape *s = &shapes[k];
		char paths[MAXM][96];
		const char *p[MAXM];
		struct uraid_create_opts o = {
			.raid_disks = s->n, .chunk_kib = s->chunk_kib, .minor = s->minor,
			.bitmap = s->bitmap ? URAID_BITMAP_INTERNAL : URAID_BITMAP_NONE,
			.bitmap_chunk_kib = 64, .flags = URAID_CREATE_ASSUME_CLEAN | URAID_CREATE_FORCE,
			.npaths = s->n, .homehost = "<none>", .name = "fuzz", .ctime = 1700000000,
		};
		static const uint8_t uuid[16] = { 0xf0, 0x22, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
		char err[300];

		o.uuid = uuid;
		if (uraid_level_parse(s->level, &o.level))
			die("level");
		if (s->layout) {
			o.layout_given = true;
			if (uraid_layout_parse(o.level, s->layout, &o.layout))
				die("layout");
		}
		if (o.level <= URAID_LEVEL_0)
			o.bitmap = URAID_BITMAP_NONE;
		for (unsigned i = 0; i < s->n; i++) {
			snprintf(paths[i], sizeof(paths[i]), "/dev/shm/uraid-fuzz-%d-%u-%u", getpid(), k, i);
			p[i] = paths[i];
			int fd = open(paths[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
			if (fd < 0 || ftruncate(fd, DEV_BYTES))
				die(paths[i]);
			close(fd);
		}
		o.paths = p;
		if (uraid_create(&o, NULL, err, sizeof(err))) {
			fprintf(stderr, "fuzz_assemble: create %s: %s\n", s->level, err);
			abort();
		}
		for (unsigned i = 0; i < s->n; i++) {
			int fd = open(paths[i], O_RDONLY);
			if (fd < 0 || pread(fd, G.img[k][i].head, WIN, 0) != WIN ||
			    pread(fd, G.img[k][i].tail, WIN, DEV_BYTES - WIN) != WIN)
				die(paths[i]);
			close(fd);
			unlink(paths[i]);
		}
	}
}

static void setup(void)
{
	struct uraid_engine_opts eo = { .reactors = 1, .ring_entries = 64 };

	if (G.ready)
		return;
	make_templates();
	if (uraid_engine_create(&eo, &G.e))
		die("engine");
	for (unsigned i = 0; i < MAXM; i++) {
		G.fd[i] = memfd_create("uraid-fuzz-member", MFD_CLOEXEC);
		if (G.fd[i] < 0)
			die("memfd_create");
		snprintf(G.path[i], sizeof(G.path[i]), "/proc/self/fd/%d", G.fd[i]);
	}
	G.ready = true;
}

/* Fix the checksum of the superblock found at any of the three places. */
static void fix_checksums(uint8_t *head, uint8_t *tail, uint64_t dev_bytes)
{
	uint8_t *places[3] = { head + 4096, head, NULL };
	uint64_t sb0 = ((dev_bytes / 512 - 16) & ~7ull) * 512;

	if (sb0 >= dev_bytes - WIN)
		places[2] = tail + (sb0 - (dev_bytes - WIN));
	for (unsigned i = 0; i < 3; i++) {
		uint8_t *b = places[i];
		if (!b || b[0] != 0xfc || b[1] != 0x4e || b[2] != 0x2b || b[3] != 0xa9)
			continue;
		uint32_t c = uraid_sb_checksum(b);
		memcpy(b + 216, &c, 4);   /* little-endian host */
	}
}

static void set_dirty(uint8_t *head, uint8_t *tail, uint64_t dev_bytes)
{
	uint64_t sb0 = ((dev_bytes / 512 - 16) & ~7ull) * 512;
	uint8_t *places[3] = { head + 4096, head,
			       sb0 >= dev_bytes - WIN ? tail + (sb0 - (dev_bytes - WIN)) : NULL };
	for (unsigned i = 0; i < 3; i++)
		if (places[i] && places[i][0] == 0xfc && places[i][1] == 0x4e)
			memset(places[i] + 208, 0, 8);
}

/* The wall and the areas of every member of an assembled array. */
static void check_array(struct array *a)
{
	for (unsigned i = 0; i < a->nmembers; i++) {
		const struct member *m = a->members[i];
		if (!m)
			continue;
		if (m->data_offset > m->dev_sectors || m->data_len > m->dev_sectors - m->data_offset) {
			fprintf(stderr, "member %u: data %llu+%llu beyond %llu\n", i,
				(unsigned long long)m->data_offset, (unsigned long long)m->data_len,
				(unsigned long long)m->dev_sectors);
			abort();
		}
		for (unsigned k = 0; k < m->nareas; k++) {
			const struct member_area *r = &m->area[k];
			bool over = m->data_len && r->start < m->data_offset + m->data_len &&
				    m->data_offset < r->end;
			if (r->end > m->dev_sectors || over) {
				fprintf(stderr, "member %u: area %llu..%llu (data %llu+%llu, dev %llu)\n",
					i, (unsigned long long)r->start, (unsigned long long)r->end,
					(unsigned long long)m->data_offset,
					(unsigned long long)m->data_len,
					(unsigned long long)m->dev_sectors);
				abort();
			}
		}
	}
}

static void check_wall(struct array *a, const char *when)
{
	for (unsigned i = 0; i < a->nmembers; i++)
		if (a->members[i] && atomic_load(&a->members[i]->wall_reported)) {
			fprintf(stderr, "fuzz_assemble: member %u hit the wall %s\n", i, when);
			abort();
		}
}

static void do_io(struct uraid_array *ua)
{
	static uint8_t buf[8192] __attribute__((aligned(4096)));
	uint64_t size = uraid_array_size(ua);
	uint64_t at[3] = { 0, size / 2 / 4096 * 4096, size >= 8192 ? size - 8192 : 0 };

	memset(buf, 0x5a, sizeof(buf));
	for (unsigned i = 0; i < 3 && size >= 8192; i++) {
		(void)uraid_array_pwrite(ua, buf, sizeof(buf), at[i], 0);
		(void)uraid_array_pread(ua, buf, sizeof(buf), at[i]);
	}
	(void)uraid_array_flush(ua);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct image img[MAXM];

	setup();
	if (size < HEAD_BYTES)
		return 0;
	unsigned kind = data[0] % KINDS, flags = data[1];
	const struct shape *s = &shapes[kind];
	uint64_t dev_bytes = DEV_BYTES - (uint64_t)data[2] * 4096;
	memcpy(img, G.img[kind], sizeof(img[0]) * s->n);

	for (size_t off = HEAD_BYTES; off + EDIT_BYTES <= size; off += EDIT_BYTES) {
		const uint8_t *e = data + off;
		unsigned mem = e[0] % s->n, width = 1u << ((e[1] >> 1) & 3);
		unsigned pos = (unsigned)e[2] | (unsigned)e[3] << 8;
		uint8_t *win = (e[1] & 1) ? img[mem].tail : img[mem].head;
		if (pos + width <= WIN)
			memcpy(win + pos, e + 4, width);   /* little-endian host */
	}
	for (unsigned i = 0; i < s->n; i++) {
		if (flags & FL_DIRTY)
			set_dirty(img[i].head, img[i].tail, dev_bytes);
		if (!(flags & FL_RAW_CSUM))
			fix_checksums(img[i].head, img[i].tail, dev_bytes);
		if (ftruncate(G.fd[i], 0) || ftruncate(G.fd[i], (off_t)dev_bytes) ||
		    pwrite(G.fd[i], img[i].head, WIN, 0) != WIN ||
		    pwrite(G.fd[i], img[i].tail, WIN, (off_t)(dev_bytes - WIN)) != WIN)
			die("memfd");
	}

	const char *paths[MAXM];
	for (unsigned i = 0; i < s->n; i++)
		paths[i] = G.path[i];
	struct uraid_assemble_opts o = {
		.paths = paths, .npaths = s->n,
		.flags = URAID_ASSEMBLE_BUFFERED |
			 ((flags & FL_WRITABLE) ? 0 : URAID_ASSEMBLE_READONLY) |
			 ((flags & FL_FORCE) ? URAID_ASSEMBLE_FORCE : 0),
	};
	struct uraid_array *ua;
	char err[512];
	int rc = uraid_array_assemble(G.e, &o, &ua, err, sizeof(err));
	if (rc) {
		if (!err[0] || !memchr(err, 0, sizeof(err)) || strchr(err, '\n'))
			abort();   /* every refusal says why, in one line */
		return 0;
	}
	struct array *a = (struct array *)ua;
	check_array(a);
	if ((flags & FL_WRITABLE) && (flags & FL_IO)) {
		do_io(ua);
		check_wall(a, "after writes");
	}
	uraid_array_close(ua);
	return 0;
}

/* ---- the bounded seeded driver's side ---- */

static const uint32_t values32[] = { 0, 0xffffffffu, 0x80000000u, 1, 8, 2048, 0x7fffffffu, 16 };

const struct fuzz_target fuzz_target = {
	.name = "fuzz_assemble", .seeds = KINDS * 2, .max_input = 1024,
	.hot_bytes = 1024, .iterations = 2000,
	.values32 = values32, .nvalues32 = sizeof(values32) / sizeof(values32[0]),
};

/* Superblock fields (offset in the superblock, width) that place things. */
static const struct { uint16_t off; uint8_t width; } sb_fields[] = {
	{ 96, 4 },  /* bitmap_offset */ { 128, 8 }, /* data_offset */ { 136, 8 }, /* data_size */
	{ 80, 8 },  /* size */          { 88, 4 },  /* chunksize */   { 200, 8 }, /* events */
	{ 188, 4 }, /* bblog_offset */  { 186, 2 }, /* bblog_size */  { 92, 4 },  /* raid_disks */
	{ 76, 4 },  /* layout */        { 208, 8 }, /* resync_offset */ { 220, 4 }, /* max_dev */
	{ 160, 4 }, /* dev_number */    { 8, 4 },   /* feature_map */ { 152, 8 }, /* recovery_offset */
};
/* Bitmap header fields (offset from the bitmap's start). */
static const struct { uint16_t off; uint8_t width; } bm_fields[] = {
	{ 40, 8 }, /* sync_size */ { 52, 4 }, /* chunksize */ { 24, 8 }, /* events */
	{ 32, 8 }, /* events_cleared */ { 256, 8 }, /* the first bits */
};

static size_t put_edit(uint8_t *in, size_t len, size_t cap, unsigned mem, bool tail,
		       unsigned pos, unsigned width, const uint8_t *win)
{
	if (len + EDIT_BYTES > cap || pos + width > WIN)
		return len;
	uint8_t *e = in + len;
	memset(e, 0, EDIT_BYTES);
	e[0] = (uint8_t)mem;
	e[1] = (uint8_t)((tail ? 1 : 0) | (__builtin_ctz(width) << 1));
	e[2] = (uint8_t)pos;
	e[3] = (uint8_t)(pos >> 8);
	memcpy(e + 4, win + pos, width);    /* today's value: an identity edit */
	return len + EDIT_BYTES;
}

/*
 * Seed kind k: shape k % KINDS, writable with I/O when k >= KINDS; edits of
 * every placing field of members 0 and 1, holding today's values, so that
 * the driver's mutations of their bytes move the fields.
 */
size_t fuzz_seed(unsigned k, uint8_t *in, size_t cap)
{
	setup();
	unsigned kind = k % KINDS;
	const struct shape *s = &shapes[kind];
	size_t len = HEAD_BYTES;

	in[0] = (uint8_t)kind;
	in[1] = k >= KINDS ? FL_WRITABLE | FL_IO : 0;
	in[2] = 0;
	for (unsigned mem = 0; mem < 2 && mem < s->n; mem++) {
		const struct image *im = &G.img[kind][mem];
		bool tail = s->minor == 0;
		const uint8_t *win = tail ? im->tail : im->head;
		unsigned sb = s->minor == 2 ? 4096 : s->minor == 1 ? 0
				: (unsigned)((((DEV_BYTES / 512 - 16) & ~7ull) * 512) - (DEV_BYTES - WIN));
		for (unsigned f = 0; f < sizeof(sb_fields) / sizeof(sb_fields[0]); f++)
			len = put_edit(in, len, cap, mem, tail, sb + sb_fields[f].off,
				       sb_fields[f].width, win);
		if (!s->bitmap)
			continue;
		int32_t bmo;
		memcpy(&bmo, win + sb + 96, 4);
		long bm = (long)sb + (long)bmo * 512;
		for (unsigned f = 0; bm >= 0 && f < sizeof(bm_fields) / sizeof(bm_fields[0]); f++)
			len = put_edit(in, len, cap, mem, tail, (unsigned)bm + bm_fields[f].off,
				       bm_fields[f].width, win);
	}
	return len;
}
