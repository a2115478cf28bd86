// SPDX-License-Identifier: MIT
/*
 * uraid zero-superblock: erase the md superblock of devices that are no
 * longer wanted in an array, as `mdadm --zero-superblock` does.
 *
 * What is erased: the 4 KiB at each place where a 1.x superblock was found
 * (1.0 near the end, 1.1 at the start, 1.2 at 4 KiB), and nothing else: the
 * bitmap, the bad-block log and the data stay, as mdadm leaves them. Where
 * mdadm erases the one superblock it would use, every valid 1.x superblock
 * on the device is erased here, so that nothing finds an array on it after.
 * As mdadm: a device without an md superblock is an error, a damaged one is
 * erased only with --force. Unlike mdadm --force, a member of a served
 * array is always refused: its server rewrites the superblock at the next
 * update anyway, and the member is still in use (fail and remove it, or
 * stop the array, first). Every DEVICE is checked before the first is
 * written to.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/create.h>

#include "cli/cli.h"
#include "cli/util.h"
#include "common/file_lock.h"

#define ZERO_BYTES 4096u        /* a 1.x superblock with its roles fits in 4 KiB */

static void zero_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid zero-superblock [--force] DEVICE...\n"
		"\n"
		"Erase the md superblock of each DEVICE, as mdadm --zero-superblock does, so\n"
		"that no array is found on it any more: the 4 KiB of each valid 1.0, 1.1 or 1.2\n"
		"superblock are zeroed; the bitmap, the bad-block log and the data are left as\n"
		"they are. A DEVICE without an md superblock is an error. A member of a served\n"
		"array is refused (fail and remove it, or stop the array, first), and so is a\n"
		"device another uraid is using. Every DEVICE is checked before anything is\n"
		"written.\n"
		"\n"
		"  -f, --force   also erase a damaged superblock (a magic number found where a\n"
		"                superblock belongs, the rest invalid)\n"
		"  -h, --help    this text\n");
}

/* One DEVICE, checked and open for the writing. */
struct zero_dev {
	const char *path;
	int fd;
	uint64_t at[3];                 /* byte offsets to zero */
	int minor[3];
	unsigned n;
};

/* Open and check one device; 0, or an exit status after one line. */
static int zero_plan(const char *path, bool force, struct zero_dev *z)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	char err[512], owner[256];
	struct stat st;
	int rc;

	z->path = path;
	z->fd = -1;
	z->n = 0;
	if (!p) {
		fprintf(stderr, "uraid zero-superblock: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	if (stat(path, &st) != 0) {
		fprintf(stderr, "uraid zero-superblock: %s: %s; nothing was changed\n", path,
			strerror(errno));
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	int served = cli_served_owner("zero-superblock", path, owner, sizeof(owner));
	if (served < 0) {
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (served > 0) {
		fprintf(stderr, "uraid zero-superblock: %s is a member of the served array '%s'; "
			"fail and remove it ('uraid fail %s %s', 'uraid remove %s %s') or stop the "
			"array first; nothing was changed\n", path, owner, owner, path, owner, path);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	/* as mdadm: O_EXCL keeps off a block device a driver or md holds; a file
	   gets the flock every uraid that uses it holds */
	z->fd = open(path, O_RDWR | O_CLOEXEC | (S_ISBLK(st.st_mode) ? O_EXCL : 0));
	if (z->fd < 0) {
		fprintf(stderr, "uraid zero-superblock: cannot open %s for writing: %s; nothing "
			"was changed\n", path, strerror(errno));
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (S_ISREG(st.st_mode) && uraid_file_lock(z->fd, true, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "uraid zero-superblock: %s; nothing was changed\n", err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if ((rc = uraid_probe_fd(z->fd, p)) != 0) {
		fprintf(stderr, "uraid zero-superblock: cannot read %s: %s; nothing was changed\n",
			path, strerror(-rc));
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	rc = 0;
	bool damaged = false;
	for (int m = 0; m < 3; m++) {
		const struct uraid_probe_slot *s = &p->loc[m];
		if (s->status == -ENOENT)
			continue;
		if (s->status != 0 && !force) {
			damaged = true;
			continue;
		}
		if (s->sb_start * 512 + ZERO_BYTES > p->dev_sectors * 512)
			continue;
		z->minor[z->n] = m;
		z->at[z->n++] = s->sb_start * 512;
	}
	if (!z->n) {
		if (damaged)
			fprintf(stderr, "uraid zero-superblock: %s: the md superblock is damaged; "
				"--force erases it anyway; nothing was changed\n", path);
		else if (p->has_md090)
			fprintf(stderr, "uraid zero-superblock: %s holds an md 0.90 superblock, "
				"which uraid does not handle (mdadm --zero-superblock erases it); "
				"nothing was changed\n", path);
		else
			fprintf(stderr, "uraid zero-superblock: %s has no md superblock (looked for "
				"1.0, 1.1 and 1.2); nothing was changed\n", path);
		rc = CLI_EXIT_FAIL;
	}
out:
	free(p);
	return rc;
}

/* Zero what zero_plan found; 0 or an exit status after one line. */
static int zero_write(struct zero_dev *z)
{
	static const char zeroes[ZERO_BYTES];

	for (unsigned i = 0; i < z->n; i++) {
		ssize_t w = pwrite(z->fd, zeroes, ZERO_BYTES, (off_t)z->at[i]);
		if (w != (ssize_t)ZERO_BYTES) {
			fprintf(stderr, "uraid zero-superblock: %s: writing at byte %" PRIu64 ": %s\n",
				z->path, z->at[i], w < 0 ? strerror(errno) : "short write");
			return CLI_EXIT_FAIL;
		}
	}
	if (fsync(z->fd) != 0) {
		fprintf(stderr, "uraid zero-superblock: %s: fsync: %s\n", z->path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	for (unsigned i = 0; i < z->n; i++)
		printf("%s: md 1.%d superblock erased (%u bytes at byte %" PRIu64 ")\n", z->path,
		       z->minor[i], ZERO_BYTES, z->at[i]);
	return 0;
}

int cmd_zero_superblock(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool force = false;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': force = true; break;
		case 'h': zero_usage(stdout); return CLI_EXIT_OK;
		default: return cli_bad_option("zero-superblock", argv);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "uraid zero-superblock: no devices given; see 'uraid "
			"zero-superblock --help'\n");
		return CLI_EXIT_USAGE;
	}
	unsigned n = (unsigned)(argc - optind);
	struct zero_dev *z = calloc(n, sizeof(*z));
	if (!z) {
		fprintf(stderr, "uraid zero-superblock: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	int rc = 0;
	unsigned planned = 0;
	for (; planned < n && !rc; planned++) {
		rc = zero_plan(argv[optind + planned], force, &z[planned]);
		/* the same device twice (any spelling) is zeroed once */
		struct stat a, b;
		for (unsigned k = 0; !rc && k < planned; k++)
			if (fstat(z[k].fd, &a) == 0 && fstat(z[planned].fd, &b) == 0 &&
			    uraid_same_file(&a, &b))
				z[planned].n = 0;
	}
	for (unsigned i = 0; i < planned && !rc; i++)
		rc = zero_write(&z[i]);
	for (unsigned i = 0; i < planned; i++)
		if (z[i].fd >= 0)
			close(z[i].fd);
	free(z);
	return rc;
}
