// SPDX-License-Identifier: MIT
/*
 * journal_inject: leaves a RAID 4/5/6 with a write journal as md leaves it
 * after a crash between its journal write and its member writes, for the
 * CLI test of the replay (tests/cli/test-journal.sh).
 *
 *   journal_inject inject SEED ROWS EXPECT JOURNAL MEMBER...
 *   journal_inject check EXPECT MEMBER...
 *
 * inject: MEMBERs in slot order (RAID 4/5/6, written by uraid create
 * --write-journal). For ROWS 4 KiB rows (member sectors 8 * k * 97 % size,
 * k = 0..ROWS-1), new random data (seeded by SEED) for every data slot and
 * the P (and Q) that matches it are logged after the block at journal_tail,
 * one meta block per row with seq one more each, as md writes them; the
 * members keep their old contents. The new rows go to the file EXPECT
 * (member sector, then raid_disks pages, per row).
 * check: every row of EXPECT is on the members. Exit 0 ok, 1 mismatch or
 * error (one line why).
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
#include "format/r5l.h"

#define PG 4096u

static int die(const char *fmt, const char *arg)
{
	fprintf(stderr, "journal_inject: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
	return 1;
}

static int open_sb(const char *path, int flags, struct uraid_sb *sb)
{
	static struct uraid_probe p;
	int fd = open(path, flags);
	if (fd < 0 || uraid_probe_fd(fd, &p) || p.chosen < 0 || p.loc[p.chosen].status)
		return -1;
	*sb = p.loc[p.chosen].sb;
	return fd;
}

static uint64_t rng;
static uint8_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint8_t)rng;
}

static int inject(int argc, char **argv)
{
	static struct uraid_sb jsb, msb[16];
	static struct uraid_geom g;
	static uint8_t meta[PG], rowbuf[16][PG];
	int mfd[16];
	unsigned n = (unsigned)argc - 4;
	char err[200];

	rng = strtoull(argv[0], NULL, 0) | 1;
	unsigned rows = (unsigned)atoi(argv[1]);
	FILE *ex = fopen(argv[2], "w");
	int jfd = open_sb(argv[3], O_RDWR, &jsb);
	if (!ex || jfd < 0 || n > 16)
		return die("cannot open %s or the journal", argv[2]);
	for (unsigned s = 0; s < n; s++)
		if ((mfd[s] = open_sb(argv[4 + s], O_RDWR, &msb[s])) < 0)
			return die("%s: no superblock", argv[4 + s]);
	struct uraid_geom_params gp = { .level = jsb.level, .layout = jsb.layout,
					.raid_disks = jsb.raid_disks, .chunk_sectors = jsb.chunksize,
					.dev_sectors = jsb.size };
	if (uraid_geom_init(&g, &gp, err, sizeof(err)) || g.raid_disks != n)
		return die("geometry: %s", err);
	uint32_t seed = uraid_r5l_seed(jsb.set_uuid);
	uint64_t log_sectors = jsb.data_size / 8 * 8, pos = jsb.recovery_offset;
	uint64_t seq;
	if (pread(jfd, meta, PG, (off_t)((jsb.data_offset + pos) * 512)) != PG)
		return die("%s: cannot read the tail block", argv[3]);
	memcpy(&seq, meta + 16, 8);
	pos = uraid_r5l_ring_add(log_sectors, pos, 8);   /* past the block at the tail */
	seq++;
	for (unsigned k = 0; k < rows; k++) {
		uint64_t ms = 8ull * k * 97 % (g.dev_sectors / 8 * 8);
		ms -= ms % 8;
		struct uraid_stripe st;
		uraid_geom_stripe(&g, ms / g.chunk_sectors, &st);
		uint64_t at = uraid_r5l_ring_add(log_sectors, pos, 8);
		uraid_r5l_meta_init(meta, seq, pos);
		void *syn[16];
		for (unsigned s = 0; s < n; s++) {
			struct uraid_rloc rl;
			uraid_geom_reverse(&g, s, ms, &rl);
			if (rl.kind != URAID_CHUNK_DATA)
				continue;
			for (unsigned i = 0; i < PG; i++)
				rowbuf[s][i] = rnd();
			uraid_r5l_meta_add_data(meta, rl.array_sector, uraid_r5l_page_csum(seed, rowbuf[s]));
			if (pwrite(jfd, rowbuf[s], PG, (off_t)((jsb.data_offset + at) * 512)) != PG)
				return die("%s: write", argv[3]);
			at = uraid_r5l_ring_add(log_sectors, at, 8);
		}
		uint32_t c[2];
		if (st.q_slot < 0) {
			for (unsigned k2 = 0; k2 < st.data_disks; k2++)
				syn[k2] = rowbuf[st.data_slot[k2]];
			uraid_parity_gen_p(st.data_disks, PG, syn, rowbuf[st.p_slot]);
		} else {
			for (unsigned k2 = 0; k2 < st.syndrome_slots; k2++)
				syn[k2] = (void *)uraid_parity_zero_block(PG);
			for (unsigned s = 0; s < n; s++)
				if (st.syndrome_of_slot[s] >= 0)
					syn[st.syndrome_of_slot[s]] = rowbuf[s];
			uraid_parity_gen_pq(st.syndrome_slots, PG, syn, rowbuf[st.p_slot],
					    rowbuf[st.q_slot]);
		}
		c[0] = uraid_r5l_page_csum(seed, rowbuf[st.p_slot]);
		c[1] = st.q_slot < 0 ? 0 : uraid_r5l_page_csum(seed, rowbuf[st.q_slot]);
		uraid_r5l_meta_add_parity(meta, ms, c, st.q_slot < 0 ? 1 : 2);
		for (int pq = 0; pq < (st.q_slot < 0 ? 1 : 2); pq++) {
			if (pwrite(jfd, rowbuf[pq ? st.q_slot : st.p_slot], PG,
				   (off_t)((jsb.data_offset + at) * 512)) != PG)
				return die("%s: write", argv[3]);
			at = uraid_r5l_ring_add(log_sectors, at, 8);
		}
		uraid_r5l_meta_seal(meta, seed);
		if (pwrite(jfd, meta, PG, (off_t)((jsb.data_offset + pos) * 512)) != PG)
			return die("%s: write", argv[3]);
		fwrite(&ms, 8, 1, ex);
		for (unsigned s = 0; s < n; s++)
			fwrite(rowbuf[s], PG, 1, ex);
		pos = at;
		seq++;
	}
	/* what comes after must not pass for the next block */
	memset(meta, 0, PG);
	if (pwrite(jfd, meta, PG, (off_t)((jsb.data_offset + pos) * 512)) != PG)
		return die("%s: write", argv[3]);
	fsync(jfd);
	fclose(ex);
	printf("logged %u rows after journal_tail %" PRIu64 "\n", rows, jsb.recovery_offset);
	return 0;
}

static int check(int argc, char **argv)
{
	static struct uraid_sb msb[16];
	static uint8_t want[PG], got[PG];
	int mfd[16];
	unsigned n = (unsigned)argc - 1, rows = 0, bad = 0;
	uint64_t ms;
	FILE *ex = fopen(argv[0], "r");

	if (!ex || n > 16)
		return die("cannot open %s", argv[0]);
	for (unsigned s = 0; s < n; s++)
		if ((mfd[s] = open_sb(argv[1 + s], O_RDONLY, &msb[s])) < 0)
			return die("%s: no superblock", argv[1 + s]);
	while (fread(&ms, 8, 1, ex) == 1) {
		for (unsigned s = 0; s < n; s++) {
			if (fread(want, PG, 1, ex) != 1 ||
			    pread(mfd[s], got, PG, (off_t)((msb[s].data_offset + ms) * 512)) != PG)
				return die("%s: short read", argv[0]);
			if (memcmp(want, got, PG)) {
				fprintf(stderr, "row at member sector %" PRIu64 " slot %u differs\n", ms, s);
				bad++;
			}
		}
		rows++;
	}
	printf("%u rows checked, %u pages differ\n", rows, bad);
	return bad || !rows;
}

int main(int argc, char **argv)
{
	if (argc >= 7 && !strcmp(argv[1], "inject"))
		return inject(argc - 2, argv + 2);
	if (argc >= 4 && !strcmp(argv[1], "check"))
		return check(argc - 2, argv + 2);
	fprintf(stderr, "usage: journal_inject inject SEED ROWS EXPECT JOURNAL MEMBER... | "
		"check EXPECT MEMBER...\n");
	return 1;
}
