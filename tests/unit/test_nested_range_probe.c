// SPDX-License-Identifier: MIT
/*
 * An attacker's inner superblock against the nested probe (md/nested.c
 * group_outer_sb): members given as ranges (PATH@START+LENGTH, a pool's
 * partitions) are read inside their range only. A RAID 50 (2x3) is made on
 * six files; then the member in slot 0 of each inner array gets a
 * superblock (valid checksum, events one behind) whose own size is 16
 * sectors at the range's last 16, its real data copied there. Each
 * superblock is valid for its own range, but the group is read with the
 * freshest member's size (11 MiB per member): a probe that reads slot 0
 * that far reads past its range (the next "partition"). Given as ranges of
 * their first 12 MiB, the members must not be detected as nested (slot 0's
 * data does not fit its range: no group can be read); given whole (the
 * file is larger), they are.
 *
 *   test_nested_range_probe (no randomness: no seed)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/nested.h>
#include <uraid/superblock.h>

#define MIB (1ull << 20)
#define MEMBER_BYTES (12 * MIB)
#define N 6
#define COPY_SECTORS 256u       /* the member data copied past the range */

static int failures;
#define CHECK(c, ...)                                                                     \
	do {                                                                              \
		if (!(c)) {                                                               \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);              \
			fprintf(stderr, __VA_ARGS__);                                     \
			fprintf(stderr, "\n");                                            \
			failures++;                                                       \
		}                                                                         \
	} while (0)

static int sb_of(const char *path, struct uraid_sb *out)
{
	struct uraid_probe *pr = malloc(sizeof(*pr));
	int fd = open(path, O_RDONLY);
	int rc = -1;

	if (pr && fd >= 0 && uraid_probe_fd(fd, pr) == 0 && pr->chosen >= 0 &&
	    !pr->loc[pr->chosen].status) {
		*out = pr->loc[pr->chosen].sb;
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	free(pr);
	return rc;
}

/* Member path, if it is slot 0: its size and data area 16 sectors at the
 * range's end, its data copied there and on (the file grows to twice the
 * range), its events one behind. */
static int craft(const char *path, uint64_t range)
{
	struct uraid_sb sb;
	alignas(4096) static uint8_t buf[URAID_SB_BYTES];
	static uint8_t data[COPY_SECTORS * 512];
	int fd = open(path, O_RDWR);
	int rc = -1;

	if (fd < 0 || sb_of(path, &sb))
		goto out;
	if (uraid_sb_role(&sb) != 0) {
		rc = 0;
		goto out;
	}
	if (pread(fd, data, sizeof(data), (off_t)(sb.data_offset * 512)) != (ssize_t)sizeof(data))
		goto out;
	uint64_t at = range - 16;
	if (ftruncate(fd, (off_t)(2 * range * 512)) ||
	    pwrite(fd, data, sizeof(data), (off_t)(at * 512)) != (ssize_t)sizeof(data))
		goto out;
	sb.data_offset = at;
	sb.data_size = 16;      /* valid for its range: offset + size at its end */
	sb.size = 16;
	sb.events--;
	uraid_sb_encode(&sb, buf);
	if (pwrite(fd, buf, sizeof(buf), (off_t)(sb.super_offset * 512)) != (ssize_t)sizeof(buf))
		goto out;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

int main(void)
{
	char dir[64], paths[N][96], specs[N][640], err[512] = "";
	const char *p[N], *sp[N];
	uint64_t range = MEMBER_BYTES / 512;

	printf("test_nested_range_probe (no seed: fixed content)\n");
	snprintf(dir, sizeof(dir), "/dev/shm/uraid-revfix-nrp.%d", getpid());
	mkdir(dir, 0700);
	for (unsigned i = 0; i < N; i++) {
		snprintf(paths[i], sizeof(paths[i]), "%s/m%u", dir, i);
		p[i] = paths[i];
		int fd = open(paths[i], O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)MEMBER_BYTES)) {
			perror(paths[i]);
			return 2;
		}
		close(fd);
		snprintf(specs[i], sizeof(specs[i]), "%s@0+%" PRIu64, paths[i], range);
		sp[i] = specs[i];
	}
	struct uraid_create_opts co = { .level = 5, .raid_disks = N, .chunk_kib = 64,
					.minor = 2, .bitmap = URAID_BITMAP_NONE, .name = "nrp",
					.homehost = "", .paths = p, .npaths = N,
					.flags = URAID_CREATE_ASSUME_CLEAN };
	struct uraid_nested_result r;
	int rc = uraid_nested_create(&co, 2, &r, err, sizeof(err));
	CHECK(rc == 0, "create: %s", err);
	if (rc == 0) {
		CHECK(uraid_nested_detect(sp, N) == 1, "the untouched RAID 50 given as ranges is "
		      "not detected as nested");
		for (unsigned i = 0; i < N; i++)
			CHECK(craft(paths[i], range) == 0, "%s: crafting the superblock", paths[i]);
		CHECK(uraid_nested_detect(p, N) == 1, "given whole, the crafted members' data "
		      "area (past the 12 MiB) holds the RAID 0: the test's setup is wrong");
		CHECK(uraid_nested_detect(sp, N) == 0, "the crafted members given as ranges are "
		      "detected as nested: the probe read past their ranges");
	}
	if (getenv("KEEP"))
		return failures ? 1 : 0;
	for (unsigned i = 0; i < N; i++)
		unlink(paths[i]);
	rmdir(dir);
	printf("%s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
