// SPDX-License-Identifier: MIT
/*
 * Targets the bench creates itself: files that do not exist yet are made
 * at the requested size and written in full (so tmpfs holds real pages and
 * reads do not hit holes): random data for raw targets, zeroes for array
 * members (so that parity is consistent when the array is created clean).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/full_io.h"
#include "bench/worker.h"

#define FILL_CHUNK (1u << 20)

static int fill_file(int fd, uint64_t bytes, bool fill_random, uint8_t *buf)
{
	uint64_t rng = 0x5eed0f11ull;

	for (uint64_t off = 0; off < bytes; off += FILL_CHUNK) {
		size_t n = bytes - off < FILL_CHUNK ? (size_t)(bytes - off) : FILL_CHUNK;
		if (fill_random) {
			for (size_t i = 0; i + 8 <= n; i += 8) {
				rng ^= rng << 13;
				rng ^= rng >> 7;
				rng ^= rng << 17;
				memcpy(buf + i, &rng, 8);
			}
		}
		int rc = uraid_pwrite_full(fd, buf, n, off);
		if (rc)
			return rc;
	}
	return fsync(fd) ? -errno : 0;
}

int bench_prepare_paths(const struct bench_targets *t, bool fill_random, bool *created,
			char *err, size_t errlen)
{
	uint8_t *buf = NULL;
	int rc = 0;

	for (unsigned i = 0; i < t->npaths && !rc; i++) {
		struct stat st;
		created[i] = false;
		if (bench_is_nbd_uri(t->paths[i]))
			continue;       /* an export: the server has it */
		if (!stat(t->paths[i], &st))
			continue;
		if (errno != ENOENT)
			return uraid_errf(err, errlen, -errno, "%s: %s", t->paths[i], strerror(errno));
		if (!t->create_bytes || t->create_bytes % 4096)
			return uraid_errf(err, errlen, -ENOENT, "%s does not exist (give %s, a "
					  "multiple of 4 KiB, to create it)", t->paths[i],
					  t->kind == BENCH_ARRAY ? "--member-size" : "--size");
		if (!buf && !(buf = calloc(1, FILL_CHUNK)))
			return uraid_errf(err, errlen, -ENOMEM, "out of memory");
		int fd = open(t->paths[i], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0) {
			rc = uraid_errf(err, errlen, -errno, "cannot create %s: %s", t->paths[i],
					strerror(errno));
			break;
		}
		created[i] = true;
		rc = fill_file(fd, t->create_bytes, fill_random, buf);
		close(fd);
		if (rc)
			rc = uraid_errf(err, errlen, rc, "cannot fill %s: %s", t->paths[i],
					strerror(-rc));
	}
	free(buf);
	return rc;
}
