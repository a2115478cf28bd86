// SPDX-License-Identifier: MIT
/*
 * uraid zero-superblock: erase the md superblock of devices that are no
 * longer wanted in an array, as `mdadm --zero-superblock` does.
 *
 * What is erased: the superblock the device is a member by (the one mdadm
 * would use: valid, then the latest creation time), its own size only (the
 * 256 bytes and two per role of max_dev, rounded up to the device's logical
 * block), never reaching the next area it records (bitmap, bad-block log,
 * data): the bitmap, the bad-block log and the data stay, as mdadm leaves
 * them. Another valid 1.x superblock on the device is erased as well when it
 * lies outside the chosen one's data area; one inside it is array data (a
 * member holding an image of another member, say) and is left, with a note.
 * A damaged superblock (magic present, the rest invalid) is erased with
 * --force only, one logical block; a location that cannot be read is an
 * error and nothing is written.
 *
 * As mdadm: a device without an md superblock is an error. Unlike mdadm
 * --force, a member of a served
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
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/util.h"
#include "common/block_parts.h"
#include "common/file_lock.h"
#include "common/range_path.h"

static void zero_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid zero-superblock [--force] DEVICE...\n"
		"\n"
		"Erase the md superblock of each DEVICE, as mdadm --zero-superblock does, so\n"
		"that no array is found on it any more: the superblock it is a member by (1.0,\n"
		"1.1 or 1.2) is zeroed, its own size only; the bitmap, the bad-block log and\n"
		"the data are left as they are. Another valid superblock is zeroed too, unless\n"
		"it lies inside the first one's data area (then it is array data: left, and\n"
		"said so). The same device named twice is zeroed once. A DEVICE without an md superblock is an error. A member of a served\n"
		"array is refused (fail and remove it, or stop the array, first), and so is a\n"
		"device another uraid is using. Every DEVICE is checked before anything is\n"
		"written. A DEVICE may be a range PATH@START+LENGTH (512-byte sectors: a\n"
		"pool's partition on an image file): only the range is looked at and zeroed.\n"
		"\n"
		"  -f, --force   also erase a damaged superblock (a magic number found where a\n"
		"                superblock belongs, the rest invalid): one logical block\n"
		"  -h, --help    this text\n");
}

/* One DEVICE, checked and open for the writing. */
struct zero_dev {
	const char *path;
	int fd;
	struct stat st;
	struct uraid_range_path r;      /* a range PATH@START+LENGTH: only inside it */
	bool duplicate;                 /* named before: zeroed once, under the first name */
	uint64_t at[3], len[3];         /* byte ranges to zero */
	int minor[3];
	unsigned n;
	int kept[3];                    /* minors left: inside the chosen one's data area */
	uint64_t kept_at[3];
	unsigned n_kept;
};

static uint32_t zero_logical_block(int fd, bool blockdev)
{
	int lbs = 0;

	if (blockdev && ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs >= 512 && lbs <= 65536)
		return (uint32_t)lbs;
	return 512;
}

/*
 * Bytes to zero for a valid superblock at sb_start (sectors): its own size
 * rounded up to the logical block, cut short before the next area it records
 * after it (bitmap, bad-block log, data) and the device's end.
 */
static uint64_t zero_sb_bytes(const struct uraid_sb *sb, uint64_t sb_start,
			      uint64_t dev_sectors, uint32_t lbs)
{
	uint64_t bytes = uraid_sb_write_bytes(sb->max_dev);
	uint64_t limit = dev_sectors;   /* sectors: the first recorded area after sb_start */

	bytes = (bytes + lbs - 1) / lbs * lbs;
	if ((sb->feature_map & URAID_FEATURE_BITMAP_OFFSET) && sb->bitmap_offset > 0 &&
	    sb_start + (uint64_t)sb->bitmap_offset < limit)
		limit = sb_start + (uint64_t)sb->bitmap_offset;
	if (sb->bblog_size && sb->bblog_offset > 0 &&
	    sb_start + (uint64_t)sb->bblog_offset < limit)
		limit = sb_start + (uint64_t)sb->bblog_offset;
	if (sb->data_offset > sb_start && sb->data_offset < limit)
		limit = sb->data_offset;
	if ((limit - sb_start) * 512 < bytes)
		bytes = (limit - sb_start) * 512;
	return bytes;
}

/* Open and check one device; 0, or an exit status after one line. */
static int zero_plan(const char *path, bool force, struct zero_dev *z,
		     const struct zero_dev *planned, unsigned n_planned)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	char err[512], owner[256];
	struct stat *st = &z->st;
	int rc;

	z->path = path;
	z->fd = -1;
	z->n = 0;
	z->n_kept = 0;
	z->duplicate = false;
	if (!p) {
		fprintf(stderr, "uraid zero-superblock: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	if (uraid_range_path_parse(path, &z->r, err, sizeof(err))) {
		fprintf(stderr, "uraid zero-superblock: %s; nothing was changed\n", err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (stat(z->r.path, st) != 0) {
		fprintf(stderr, "uraid zero-superblock: %s: %s; nothing was changed\n", path,
			strerror(errno));
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	/* the same device (and range) under another name: our own open and lock
	   of it would refuse the second, so it is skipped before opening */
	for (unsigned k = 0; k < n_planned; k++)
		if (!planned[k].duplicate && uraid_same_file(&planned[k].st, st) &&
		    planned[k].r.ranged == z->r.ranged && planned[k].r.start == z->r.start &&
		    planned[k].r.sectors == z->r.sectors) {
			z->duplicate = true;
			rc = 0;
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
	/* a range of a block device is opened as uraid serves one: without
	   O_EXCL (the kernel's claim is of the whole device), the range locked */
	z->fd = open(z->r.path, O_RDWR | O_CLOEXEC |
			     (S_ISBLK(st->st_mode) && !z->r.ranged ? O_EXCL : 0));
	if (z->fd < 0) {
		fprintf(stderr, "uraid zero-superblock: cannot open %s for writing: %s; nothing "
			"was changed\n", path, strerror(errno));
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (z->r.ranged ? uraid_range_path_lock(z->fd, &z->r, true, err, sizeof(err)) < 0
	    : S_ISREG(st->st_mode) ? uraid_file_lock(z->fd, true, path, err, sizeof(err)) < 0
				   : uraid_block_whole_lock(z->fd, path, err, sizeof(err)) < 0) {
		fprintf(stderr, "uraid zero-superblock: %s; nothing was changed\n", err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	uint64_t dev_sectors;
	bool blockdev;
	rc = 0;
	/* a range: inside its device, and on a block device no partition over
	   it held by the kernel (an md array on /dev/sdb2: not seen through the
	   whole device's locks) */
	if (z->r.ranged && (rc = uraid_dev_sectors(z->fd, &dev_sectors, &blockdev)) == 0 &&
	    (uraid_range_path_check(&z->r, dev_sectors, err, sizeof(err)) ||
	     (S_ISBLK(st->st_mode) && uraid_block_parts_free(st->st_rdev, z->r.start,
							      z->r.sectors, path, err,
							      sizeof(err))))) {
		fprintf(stderr, "uraid zero-superblock: %s; nothing was changed\n", err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	if (rc || (rc = z->r.ranged ? uraid_probe_range(z->fd, z->r.start, z->r.sectors, p)
				    : uraid_probe_fd(z->fd, p)) != 0) {
		fprintf(stderr, "uraid zero-superblock: cannot read %s: %s; nothing was changed\n",
			path, strerror(-rc));
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	for (int m = 0; m < 3; m++)
		if (p->loc[m].status == -EIO) {
			fprintf(stderr, "uraid zero-superblock: %s: read error at the md 1.%d "
				"superblock's place (%s); nothing was changed\n", path, m,
				p->loc[m].reason);
			rc = CLI_EXIT_FAIL;
			goto out;
		}
	rc = 0;
	uint32_t lbs = zero_logical_block(z->fd, p->is_blockdev);
	uint64_t dev_bytes = p->dev_sectors * 512;
	/* the chosen superblock's data area, in bytes: [data_lo, data_hi) */
	uint64_t data_lo = 0, data_hi = 0;
	if (p->chosen >= 0) {
		const struct uraid_probe_slot *c = &p->loc[p->chosen];
		data_lo = c->sb.data_offset * 512;
		data_hi = data_lo + c->sb.data_size * 512;
	}
	bool damaged = false;
	/* the chosen one first, so that it is named first */
	for (int i = -1; i < 3; i++) {
		int m = i < 0 ? p->chosen : i;
		if (m < 0 || (i >= 0 && m == p->chosen))
			continue;
		const struct uraid_probe_slot *s = &p->loc[m];
		uint64_t at = s->sb_start * 512, len;
		if (s->status == -ENOENT)
			continue;
		if (s->status == 0) {
			len = zero_sb_bytes(&s->sb, s->sb_start, p->dev_sectors, lbs);
		} else if (force) {
			len = lbs;          /* its sizes are not to be trusted */
		} else {
			damaged = true;
			continue;
		}
		if (len == 0 || at >= dev_bytes)
			continue;
		if (at + len > dev_bytes)
			len = dev_bytes - at;
		if (m != p->chosen && at < data_hi && at + len > data_lo) {
			z->kept[z->n_kept] = m;
			z->kept_at[z->n_kept++] = at;
			continue;
		}
		z->minor[z->n] = m;
		z->at[z->n] = at + (z->r.ranged ? z->r.start * 512 : 0);   /* in the file */
		z->len[z->n++] = len;
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
	static const char zeroes[65536];

	for (unsigned i = 0; i < z->n; i++) {
		ssize_t w = pwrite(z->fd, zeroes, z->len[i], (off_t)z->at[i]);
		if (w != (ssize_t)z->len[i]) {
			fprintf(stderr, "uraid zero-superblock: %s: writing at byte %" PRIu64 ": %s\n",
				z->path, z->at[i], w < 0 ? strerror(errno) : "short write");
			return CLI_EXIT_FAIL;
		}
	}
	if (z->n && fsync(z->fd) != 0) {
		fprintf(stderr, "uraid zero-superblock: %s: fsync: %s\n", z->path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	for (unsigned i = 0; i < z->n; i++)
		printf("%s: md 1.%d superblock erased (%" PRIu64 " bytes at byte %" PRIu64 ")\n",
		       z->path, z->minor[i], z->len[i], z->at[i]);
	for (unsigned i = 0; i < z->n_kept; i++)
		printf("%s: md 1.%d superblock at byte %" PRIu64 " left: it lies in the data "
		       "area of the erased md 1.%d superblock (array data)\n", z->path,
		       z->kept[i], z->kept_at[i], z->minor[0]);
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
	for (; planned < n && !rc; planned++)
		rc = zero_plan(argv[optind + planned], force, &z[planned], z, planned);
	for (unsigned i = 0; i < planned && !rc; i++)
		if (!z[i].duplicate)
			rc = zero_write(&z[i]);
	for (unsigned i = 0; i < planned; i++)
		if (z[i].fd >= 0)
			close(z[i].fd);
	free(z);
	return rc;
}
