// SPDX-License-Identifier: MIT
/*
 * rebuild_bound: the rate a RAID 5 rebuild could reach on given members
 * with no engine around it, the reference `make bench` (scripts/bench.sh)
 * holds uraid's rebuild against.
 *
 *   rebuild_bound [--threads=N] [--chunk=BYTES] [--offset=BYTES] --size=BYTES
 *                 [--direct] TARGET SURVIVOR...
 *
 * It does per rebuilt byte what uraid's recovery does (src/engine/jobs/
 * sync_raid5.c): the member area [offset, offset + size) is taken chunk row
 * by chunk row; for each row, every SURVIVOR's chunk is read (one I/O of
 * the chunk size each), the missing chunk is their XOR (ISA-L xor_gen, as
 * src/parity/ computes it) and is written to TARGET in one I/O. Rows are
 * dealt round robin to N threads, one row in progress per thread: the
 * engine's lanes, one per reactor (`uraid serve --threads=N`).
 *
 * Without --direct the members are read and written with pread/pwrite by
 * the thread itself, as the engine copies tmpfs members (member_submit);
 * with --direct they are opened O_DIRECT and each row's reads go to
 * io_uring together, then its write, as the engine drives block devices.
 *
 * Prints one line: "BYTES_PER_S SECONDS BYTES", bytes per member (the
 * target's bytes written), as md counts rebuild speed. Exit status 1 with a
 * message on any error.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* O_DIRECT (the Makefile defines it; bench.sh builds this alone) */
#endif
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <isa-l/raid.h>
#include <liburing.h>

#define MAX_SURVIVORS 255

struct bound {
	int target;                     /* fd of the member being rebuilt */
	int src[MAX_SURVIVORS];         /* fds of the members read */
	unsigned nsrc;
	size_t chunk;
	uint64_t offset, size;
	unsigned threads;
	bool direct;
};

struct worker {
	const struct bound *b;
	unsigned index;
	pthread_t thread;
	int err;                        /* 0 or -errno */
	char what[160];                 /* what failed, when err */
};

/* Full-length pread/pwrite (short transfers go on; end of file is -EIO). */
static int full_io(bool rd, int fd, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = rd ? pread(fd, (char *)buf + done, len - done, (off_t)(off + done))
			       : pwrite(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

/* Submit the prepared SQEs and reap `want` completions; any short or failed
 * one fails the row (O_DIRECT on a block device transfers all or nothing). */
static int uring_wait(struct io_uring *ring, unsigned want, size_t len)
{
	int rc = io_uring_submit_and_wait(ring, want);

	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < want; i++) {
		struct io_uring_cqe *cqe;
		rc = io_uring_wait_cqe(ring, &cqe);
		if (rc < 0)
			return rc;
		int res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
		if (res < 0)
			return res;
		if ((size_t)res != len)
			return -EIO;
	}
	return 0;
}

/* XOR of the survivors' chunks into out. */
static void rebuild_chunk(const struct bound *b, void **bufs, void *out)
{
	if (b->nsrc == 1) {
		memcpy(out, bufs[0], b->chunk);         /* a 2-member RAID 5: a mirror */
	} else {
		bufs[b->nsrc] = out;            /* xor_gen: sources, then the destination */
		xor_gen((int)b->nsrc + 1, (int)b->chunk, bufs);
	}
#if defined(__x86_64__) || defined(__i386__)
	/* xor_gen may store non-temporally: visible before the write takes it
	   (src/parity/parity_internal.h, parity_store_fence) */
	__builtin_ia32_sfence();
#endif
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	const struct bound *b = w->b;
	void *bufs[MAX_SURVIVORS + 1] = { 0 };
	void *out = NULL;
	struct io_uring ring;
	bool ring_up = false;
	uint64_t rows = b->size / b->chunk;

	for (unsigned i = 0; i < b->nsrc && !w->err; i++)
		if (posix_memalign(&bufs[i], 4096, b->chunk))
			w->err = -ENOMEM;
	if (!w->err && posix_memalign(&out, 4096, b->chunk))
		w->err = -ENOMEM;
	if (w->err) {
		snprintf(w->what, sizeof(w->what), "buffers");
		goto out;
	}
	if (b->direct) {
		w->err = io_uring_queue_init(b->nsrc + 1, &ring, 0);
		if (w->err) {
			snprintf(w->what, sizeof(w->what), "io_uring_queue_init");
			goto out;
		}
		ring_up = true;
	}
	for (uint64_t row = w->index; row < rows; row += b->threads) {
		uint64_t off = b->offset + row * b->chunk;
		if (b->direct) {
			for (unsigned i = 0; i < b->nsrc; i++)
				io_uring_prep_read(io_uring_get_sqe(&ring), b->src[i], bufs[i],
						   (unsigned)b->chunk, off);
			w->err = uring_wait(&ring, b->nsrc, b->chunk);
		} else {
			for (unsigned i = 0; i < b->nsrc && !w->err; i++)
				w->err = full_io(true, b->src[i], bufs[i], b->chunk, off);
		}
		if (w->err) {
			snprintf(w->what, sizeof(w->what), "reading row %llu", (unsigned long long)row);
			break;
		}
		rebuild_chunk(b, bufs, out);
		if (b->direct) {
			io_uring_prep_write(io_uring_get_sqe(&ring), b->target, out, (unsigned)b->chunk, off);
			w->err = uring_wait(&ring, 1, b->chunk);
		} else {
			w->err = full_io(false, b->target, out, b->chunk, off);
		}
		if (w->err) {
			snprintf(w->what, sizeof(w->what), "writing row %llu", (unsigned long long)row);
			break;
		}
	}
out:
	if (ring_up)
		io_uring_queue_exit(&ring);
	for (unsigned i = 0; i < b->nsrc; i++)
		free(bufs[i]);
	free(out);
	return NULL;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int usage(void)
{
	fprintf(stderr, "usage: rebuild_bound [--threads=N] [--chunk=BYTES] [--offset=BYTES] "
		"--size=BYTES [--direct] TARGET SURVIVOR...\n");
	return 2;
}

/* A byte count from the command line, 0 when it is not a number. */
static uint64_t bytes_arg(const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	return errno || *end || end == s ? 0 : v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "offset", required_argument, NULL, 'o' },
		{ "size", required_argument, NULL, 's' },
		{ "direct", no_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	struct bound b = { .chunk = 512 * 1024, .threads = 2 };
	bool offset_ok = true;
	int c;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 't': b.threads = (unsigned)bytes_arg(optarg); break;
		case 'c': b.chunk = (size_t)bytes_arg(optarg); break;
		case 'o': b.offset = bytes_arg(optarg); offset_ok = b.offset || !strcmp(optarg, "0"); break;
		case 's': b.size = bytes_arg(optarg); break;
		case 'd': b.direct = true; break;
		default: return usage();
		}
	}
	if (argc - optind < 2 || argc - optind - 1 > MAX_SURVIVORS || !b.threads ||
	    b.threads > 256 || !offset_ok)
		return usage();
	if (!b.chunk || b.chunk % 4096 || b.chunk > (1u << 30) || b.offset % 4096 ||
	    b.size < b.chunk) {
		fprintf(stderr, "rebuild_bound: the chunk must be a multiple of 4 KiB (up to 1 GiB), "
			"the offset too, and the size at least one chunk\n");
		return 2;
	}
	b.size -= b.size % b.chunk;     /* whole rows, as the engine's units */

	int flags = b.direct ? O_DIRECT : 0;
	const char *tpath = argv[optind];
	b.target = open(tpath, O_WRONLY | flags);
	if (b.target < 0) {
		fprintf(stderr, "rebuild_bound: %s: %s\n", tpath, strerror(errno));
		return 1;
	}
	for (int i = optind + 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | flags);
		if (fd < 0) {
			fprintf(stderr, "rebuild_bound: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		b.src[b.nsrc++] = fd;
	}

	struct worker *w = calloc(b.threads, sizeof(*w));
	if (!w) {
		fprintf(stderr, "rebuild_bound: out of memory\n");
		return 1;
	}
	double t0 = now();
	unsigned started = 0;
	for (; started < b.threads; started++) {
		w[started].b = &b;
		w[started].index = started;
		int rc = pthread_create(&w[started].thread, NULL, worker_run, &w[started]);
		if (rc) {
			w[started].err = -rc;
			snprintf(w[started].what, sizeof(w[started].what), "pthread_create");
			break;
		}
	}
	for (unsigned i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
	double secs = now() - t0;
	int status = 0;
	for (unsigned i = 0; i < b.threads; i++) {
		if (w[i].err) {
			fprintf(stderr, "rebuild_bound: thread %u: %s: %s\n", i, w[i].what,
				strerror(-w[i].err));
			status = 1;
		}
	}
	free(w);
	if (status)
		return status;
	printf("%.0f %.6f %llu\n", secs > 0 ? (double)b.size / secs : 0, secs,
	       (unsigned long long)b.size);
	return 0;
}
