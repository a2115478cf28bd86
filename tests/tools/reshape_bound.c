// SPDX-License-Identifier: MIT
/*
 * reshape_bound: the rate a RAID 5 restripe (member count up) could reach
 * on given members with no engine around it, the reference `make bench`
 * (scripts/bench_reshape.sh) holds uraid's reshape against.
 *
 *   reshape_bound --old-disks=N --chunk=BYTES --offset=BYTES --new-offset=BYTES
 *                 --size=BYTES --step=BYTES MEMBER...
 *
 * It does per step what uraid's reshape job does (src/engine/jobs/
 * reshape.c), on one thread as the job does: the step's array bytes are
 * read in the old geometry (N members, left-symmetric, data at --offset,
 * one pread per chunk), written as rows of the new one (all the MEMBERs,
 * data at --new-offset, one pwrite per chunk, P the XOR of the row's data
 * chunks, ISA-L xor_gen), every member is fdatasync'd, then the checkpoint:
 * each member's 4 KiB superblock at byte 4096 read and written back
 * unchanged, and fdatasync'd again. The old array is --size bytes per
 * member; the step is a whole number of rows of both geometries (the
 * engine's); past the old array's end it reads nothing and lays out rows
 * of zeroes up to the new array's end, as the job does. What it writes is
 * not a valid array: run it on members whose contents no longer matter.
 *
 * Prints one line: "BYTES_PER_S SECONDS BYTES", the new array's bytes laid
 * out per second. Exit
 * status 1 with a message on any error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <isa-l/raid.h>

#define MAX_MEMBERS 32

static int io_all(int fd, void *buf, size_t len, uint64_t off, int write)
{
	while (len) {
		ssize_t n = write ? pwrite(fd, buf, len, (off_t)off) : pread(fd, buf, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf = (uint8_t *)buf + n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* left-symmetric: the slot of data chunk k of row r, of n members */
static unsigned data_slot(uint64_t r, unsigned k, unsigned n)
{
	unsigned p = (unsigned)(n - 1 - r % n);
	return (p + 1 + k) % n;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	uint64_t chunk = 0, off_old = 0, off_new = 0, size = 0, step = 0;
	unsigned nold = 0;
	static const struct option opts[] = {
		{ "old-disks", 1, 0, 'n' }, { "chunk", 1, 0, 'c' }, { "offset", 1, 0, 'o' },
		{ "new-offset", 1, 0, 'w' }, { "size", 1, 0, 's' }, { "step", 1, 0, 't' },
		{ 0, 0, 0, 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		uint64_t v = strtoull(optarg ? optarg : "0", NULL, 0);
		switch (c) {
		case 'n': nold = (unsigned)v; break;
		case 'c': chunk = v; break;
		case 'o': off_old = v; break;
		case 'w': off_new = v; break;
		case 's': size = v; break;
		case 't': step = v; break;
		default: return 1;
		}
	}
	unsigned nnew = (unsigned)(argc - optind);
	if (nold < 3 || nnew <= nold || nnew > MAX_MEMBERS || !chunk || !size || !step ||
	    step % ((nold - 1) * chunk) || step % ((nnew - 1) * chunk)) {
		fprintf(stderr, "reshape_bound: need --old-disks >= 3, more MEMBERs than that, "
			"--chunk, --size and a --step of whole rows of both geometries\n");
		return 1;
	}
	int fd[MAX_MEMBERS];
	for (unsigned i = 0; i < nnew; i++)
		if ((fd[i] = open(argv[optind + i], O_RDWR)) < 0) {
			fprintf(stderr, "reshape_bound: %s: %s\n", argv[optind + i], strerror(errno));
			return 1;
		}
	uint8_t *data = aligned_alloc(4096, step), *par = aligned_alloc(4096, chunk);
	uint8_t *sb = aligned_alloc(4096, 4096);
	void *blocks[MAX_MEMBERS + 1];
	if (!data || !par || !sb)
		return 1;
	uint64_t old_bytes = (nold - 1) * size;
	uint64_t odd = nold - 1, ndd = nnew - 1;
	double t0 = now_s();
	uint64_t new_bytes = ndd * size;
	for (uint64_t pos = 0; pos < new_bytes; pos += step) {
		uint64_t len = new_bytes - pos < step ? new_bytes - pos : step;
		/* the old rows' chunks; zeroes past the old array's end (the room
		   the new member adds, as the engine's job lays it out) */
		for (uint64_t b = 0; b < len; b += chunk) {
			uint64_t ch = (pos + b) / chunk, r = ch / odd;
			if (pos + b >= old_bytes) {
				memset(data + b, 0, chunk);
				continue;
			}
			unsigned s = data_slot(r, (unsigned)(ch % odd), nold);
			if (io_all(fd[s], data + b, chunk, off_old + r * chunk, 0))
				goto fail;
		}
		/* the new rows, P with them */
		for (uint64_t b = 0; b + ndd * chunk <= len; b += ndd * chunk) {
			uint64_t r = (pos + b) / (ndd * chunk);
			for (unsigned k = 0; k < ndd; k++)
				blocks[k] = data + b + k * chunk;
			blocks[ndd] = par;
			if (xor_gen((int)ndd + 1, (int)chunk, blocks))
				goto fail;
			for (unsigned k = 0; k < ndd; k++)
				if (io_all(fd[data_slot(r, k, nnew)], data + b + k * chunk, chunk,
					   off_new + r * chunk, 1))
					goto fail;
			if (io_all(fd[nnew - 1 - r % nnew], par, chunk, off_new + r * chunk, 1))
				goto fail;
		}
		for (unsigned i = 0; i < nnew; i++)
			if (fdatasync(fd[i]))
				goto fail;
		/* the checkpoint */
		for (unsigned i = 0; i < nnew; i++)
			if (io_all(fd[i], sb, 4096, 4096, 0) || io_all(fd[i], sb, 4096, 4096, 1) ||
			    fdatasync(fd[i]))
				goto fail;
	}
	double secs = now_s() - t0;
	printf("%.0f %.3f %llu\n", new_bytes / secs, secs, (unsigned long long)new_bytes);
	return 0;
fail:
	fprintf(stderr, "reshape_bound: I/O failed: %s\n", strerror(errno));
	return 1;
}
