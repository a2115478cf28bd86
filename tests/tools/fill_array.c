// SPDX-License-Identifier: MIT
/*
 * fill_array: a referee helper. Writes a deterministic pseudo-random pattern
 * into the data area of an array that `uraid create` made, placing every
 * chunk with liburaid's geometry and computing P/Q with liburaid's parity,
 * without any engine. Linux md then reads the array and checks its
 * redundancy: a wrong layout or Q order shows up as different bytes or a
 * non-zero mismatch_cnt.
 *
 *   fill_array [--seed=N] [--emit] MEMBER...
 *
 * Members may be given in any order; their roles come from the superblocks,
 * and slots with no member are left unwritten (degraded arrays). --emit
 * writes nothing and prints the array's expected content to stdout instead
 * (pipe it to md5sum).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/geom.h>
#include <uraid/parity.h>

#include "../support/pattern.h"

#define PIECE_SECTORS 2048u   /* 1 MiB of array data per step for unstriped levels */

struct member {
	int fd;
	uint64_t data_offset;
};

struct fill {
	uint64_t seed;
	struct uraid_geom *g;
	struct member slot[URAID_MAX_MEMBERS];
};

/* The content of array sectors [sector, sector+n): see tests/support/pattern.c. */
#define pattern test_pattern

static int put(const struct fill *f, uint32_t slot, uint64_t sector, const void *buf,
	       uint64_t sectors)
{
	const struct member *m = &f->slot[slot];
	if (m->fd < 0)
		return 0;   /* missing member: degraded array */
	ssize_t n = pwrite(m->fd, buf, sectors * 512, (off_t)((m->data_offset + sector) * 512));
	if (n != (ssize_t)(sectors * 512)) {
		fprintf(stderr, "fill_array: write to slot %u at sector %" PRIu64 " failed: %s\n",
			slot, sector, n < 0 ? strerror(errno) : "short write");
		return -EIO;
	}
	return 0;
}

static int fill_parity(const struct fill *f)
{
	const struct uraid_geom *g = f->g;
	uint32_t C = g->chunk_sectors;
	size_t len = (size_t)C * 512;
	uint64_t stripes = g->dev_sectors / C;
	struct uraid_stripe *st = malloc(sizeof(*st));
	uint8_t *buf = aligned_alloc(64, len * (g->raid_disks + 0));
	void *slots[URAID_MAX_MEMBERS];
	int rc = 0;

	if (!st || !buf)
		return -ENOMEM;
	for (uint64_t s = 0; s < stripes && !rc; s++) {
		uraid_geom_stripe(g, s, st);
		/* member slot i's chunk lives at buf + i*len */
		for (uint32_t k = 0; k < st->data_disks; k++)
			pattern(f->seed, (s * st->data_disks + k) * C, C,
				buf + (size_t)st->data_slot[k] * len);
		void *p = buf + (size_t)st->p_slot * len;
		if (st->q_slot < 0) {
			for (uint32_t k = 0; k < st->data_disks; k++)
				slots[k] = buf + (size_t)st->data_slot[k] * len;
			rc = uraid_parity_gen_p(st->data_disks, len, slots, p);
		} else {
			void *q = buf + (size_t)st->q_slot * len;
			for (uint32_t i = 0; i < st->syndrome_slots; i++)
				slots[i] = (void *)uraid_parity_zero_block(len);
			for (uint32_t i = 0; i < g->raid_disks; i++)
				if (st->syndrome_of_slot[i] >= 0 && (int32_t)i != st->p_slot &&
				    (int32_t)i != st->q_slot)
					slots[st->syndrome_of_slot[i]] = buf + (size_t)i * len;
			rc = uraid_parity_gen_pq(st->syndrome_slots, len, slots, p, q);
		}
		for (uint32_t i = 0; i < g->raid_disks && !rc; i++)
			rc = put(f, i, s * C, buf + (size_t)i * len, C);
	}
	free(st);
	free(buf);
	return rc;
}

static int fill_copies(const struct fill *f)
{
	const struct uraid_geom *g = f->g;
	uint8_t *buf = aligned_alloc(64, PIECE_SECTORS * 512);
	struct uraid_loc loc[URAID_MAX_MEMBERS];
	int rc = 0;

	if (!buf)
		return -ENOMEM;
	for (uint64_t a = 0; a < g->array_sectors && !rc;) {
		uint64_t n = uraid_geom_chunk_left(g, a);
		if (n > PIECE_SECTORS)
			n = PIECE_SECTORS;
		if (n > g->array_sectors - a)
			n = g->array_sectors - a;
		pattern(f->seed, a, n, buf);
		int copies = uraid_geom_map(g, a, loc, URAID_MAX_MEMBERS);
		for (int c = 0; c < copies && !rc; c++)
			rc = put(f, loc[c].slot, loc[c].sector, buf, n);
		a += n;
	}
	free(buf);
	return rc;
}

static int emit(const struct fill *f)
{
	uint8_t *buf = malloc(PIECE_SECTORS * 512);

	if (!buf)
		return -ENOMEM;
	for (uint64_t a = 0; a < f->g->array_sectors; a += PIECE_SECTORS) {
		uint64_t n = f->g->array_sectors - a;
		if (n > PIECE_SECTORS)
			n = PIECE_SECTORS;
		pattern(f->seed, a, n, buf);
		if (fwrite(buf, 512, n, stdout) != n) {
			free(buf);
			return -EIO;
		}
	}
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	struct fill f = { .seed = 1 };
	struct uraid_probe *p = malloc(sizeof(*p));
	uint64_t member_sectors[URAID_MAX_MEMBERS] = { 0 };
	struct uraid_sb ref;
	bool do_emit = false, have_ref = false;
	int argi = 1;

	for (; argi < argc && !strncmp(argv[argi], "--", 2); argi++) {
		if (!strncmp(argv[argi], "--seed=", 7))
			f.seed = strtoull(argv[argi] + 7, NULL, 0);
		else if (!strcmp(argv[argi], "--emit"))
			do_emit = true;
	}
	for (int i = 0; i < URAID_MAX_MEMBERS; i++)
		f.slot[i].fd = -1;
	for (; argi < argc; argi++) {
		int fd = open(argv[argi], do_emit ? O_RDONLY : O_RDWR);
		if (fd < 0 || uraid_probe_fd(fd, p) || p->chosen < 0 || p->loc[p->chosen].status) {
			fprintf(stderr, "fill_array: %s: no valid md superblock\n", argv[argi]);
			return 1;
		}
		const struct uraid_sb *sb = &p->loc[p->chosen].sb;
		uint16_t role = uraid_sb_role(sb);
		if (role >= sb->raid_disks) {
			close(fd);   /* spare */
			continue;
		}
		f.slot[role] = (struct member){ .fd = fd, .data_offset = sb->data_offset };
		member_sectors[role] = sb->data_size;
		ref = *sb;
		have_ref = true;
	}
	if (!have_ref) {
		fprintf(stderr, "usage: fill_array [--seed=N] [--emit] MEMBER...\n");
		return 1;
	}
	f.g = malloc(sizeof(*f.g));
	char why[200];
	struct uraid_geom_params gp = {
		.level = ref.level, .layout = ref.layout, .raid_disks = ref.raid_disks,
		.chunk_sectors = ref.chunksize, .dev_sectors = ref.size,
		.member_sectors = member_sectors,
		.raid0_layout_flag = ref.feature_map & URAID_FEATURE_RAID0_LAYOUT,
	};
	if (!f.g || uraid_geom_init(f.g, &gp, why, sizeof(why))) {
		fprintf(stderr, "fill_array: geometry: %s\n", why);
		return 1;
	}
	fprintf(stderr, "fill_array: seed %" PRIu64 ", %" PRIu64 " sectors\n", f.seed,
		f.g->array_sectors);
	int rc;
	if (do_emit)
		rc = emit(&f);
	else if (ref.level == URAID_LEVEL_4 || ref.level == URAID_LEVEL_5 ||
		 ref.level == URAID_LEVEL_6)
		rc = fill_parity(&f);
	else
		rc = fill_copies(&f);
	for (int i = 0; i < URAID_MAX_MEMBERS; i++)
		if (f.slot[i].fd >= 0 && !do_emit && fsync(f.slot[i].fd))
			rc = -errno;
	return rc ? 1 : 0;
}
