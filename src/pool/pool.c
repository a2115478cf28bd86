// SPDX-License-Identifier: MIT
/* A pool's drives on disk: the GPT, the label, the volumes' partitions (pool.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/create.h>

#include "common/block_parts.h"
#include "common/errmsg.h"
#include "common/full_io.h"
#include "pool/le.h"
#include "pool/pool.h"

const uint8_t pool_type_label[16] = { 0x2a, 0x6d, 0x1f, 0x7e, 0x9b, 0x3c, 0x51, 0x4f,
				      0xa0, 0xd8, 0x5b, 0x2e, 0x6c, 0x4a, 0x9f, 0x13 };
const uint8_t pool_type_volume[16] = { 0x33, 0x7a, 0x66, 0xc4, 0xe5, 0x60, 0x6a, 0x44,
				       0x85, 0xd3, 0x32, 0xd6, 0x4c, 0x31, 0xe5, 0x16 };

/* The label record: magic, version, then the fields, a CRC32 of bytes 0..507 at 508. */
static const char label_magic[8] = { 'U', 'R', 'A', 'I', 'D', 'P', 'L', '1' };
#define LABEL_VERSION 1u
#define LABEL_PREFIX "uraid-pool:"

bool pool_name_ok(const char *name, unsigned max)
{
	size_t n = strlen(name);

	if (n == 0 || n > max || name[0] == '.' || name[0] == '-')
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '_' || *c == '.' || *c == '-'))
			return false;
	return true;
}

void pool_label_encode(const struct pool_label *l, uint8_t s[512])
{
	memset(s, 0, 512);
	memcpy(s, label_magic, 8);
	le_put32(s + 8, LABEL_VERSION);
	le_put32(s + 12, l->index);
	memcpy(s + 16, l->uuid, 16);
	memcpy(s + 32, l->name, strnlen(l->name, POOL_NAME_MAX));
	le_put32(s + 64, (uint32_t)l->ctime);
	le_put32(s + 68, (uint32_t)(l->ctime >> 32));
	le_put32(s + 72, l->ndrives);
	le_put32(s + 508, gpt_crc32(s, 508));
}

int pool_label_decode(const uint8_t s[512], struct pool_label *l, char *err, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	if (memcmp(s, label_magic, 8))
		return uraid_errf(err, errlen, -ENOENT, "no pool label");
	if (gpt_crc32(s, 508) != le_get32(s + 508))
		return uraid_errf(err, errlen, -EINVAL, "the pool label's CRC32 does not match");
	if (le_get32(s + 8) != LABEL_VERSION)
		return uraid_errf(err, errlen, -EINVAL, "pool label version %" PRIu32 " (this uraid "
				  "reads version %u)", le_get32(s + 8), LABEL_VERSION);
	memcpy(l->uuid, s + 16, 16);
	memcpy(l->name, s + 32, POOL_NAME_MAX);
	l->name[POOL_NAME_MAX] = '\0';
	if (!pool_name_ok(l->name, POOL_NAME_MAX))
		return uraid_errf(err, errlen, -EINVAL, "the pool label holds an invalid name");
	l->index = le_get32(s + 12);
	if (l->index >= POOL_MAX_DRIVES)
		return uraid_errf(err, errlen, -EINVAL, "the pool label's drive index %" PRIu32
				  " is not below %u", l->index, POOL_MAX_DRIVES);
	l->ctime = le_get32(s + 64) | (uint64_t)le_get32(s + 68) << 32;
	l->ndrives = le_get32(s + 72);
	if (l->ndrives > POOL_MAX_DRIVES || (l->ndrives && l->index >= l->ndrives))
		return uraid_errf(err, errlen, -EINVAL, "the pool label's drive count %" PRIu32
				  " is above %u or not above its index %" PRIu32, l->ndrives,
				  POOL_MAX_DRIVES, l->index);
	return 0;
}

/* Open a drive and size it; 512-byte logical sectors only (GPT's LBA size here). */
static int open_drive(const char *path, int flags, uint64_t *sectors, bool *blockdev,
		      char *err, size_t errlen)
{
	int fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return uraid_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
	int rc = uraid_dev_sectors(fd, sectors, blockdev);
	if (rc) {
		close(fd);
		return uraid_errf(err, errlen, rc, "%s: not a block device or regular file", path);
	}
	int lbs = 512;
	if (*blockdev && ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs != 512) {
		close(fd);
		return uraid_errf(err, errlen, -EOPNOTSUPP, "%s has %d-byte sectors; pools are "
				  "made on drives with 512-byte sectors", path, lbs);
	}
	return fd;
}

int pool_drive_read(const char *path, struct pool_drive *d, char *err, size_t errlen)
{
	alignas(4096) uint8_t sector[512];
	char why[300];
	int rc;

	memset(d, 0, sizeof(*d));
	d->label_part = -1;
	if (strlen(path) >= sizeof(d->path))
		return uraid_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
	snprintf(d->path, sizeof(d->path), "%s", path);
	int fd = open_drive(path, O_RDONLY, &d->sectors, &d->blockdev, err, errlen);
	if (fd < 0)
		return fd;
	rc = gpt_read(fd, d->sectors, &d->gpt, &d->info, why, sizeof(why));
	if (rc) {
		close(fd);
		return uraid_errf(err, errlen, rc, "%s: %s", path, why);
	}
	for (unsigned i = 0; i < GPT_ENTRIES; i++)
		if (!memcmp(d->gpt.part[i].type, pool_type_label, 16)) {
			d->label_part = (int)i;
			break;
		}
	if (d->label_part < 0) {
		close(fd);
		return uraid_errf(err, errlen, -ENOENT, "%s: a GPT without a uraid pool label", path);
	}
	const struct gpt_part *lp = &d->gpt.part[d->label_part];
	rc = uraid_pread_full(fd, sector, sizeof(sector), lp->first * 512);
	close(fd);
	if (rc)
		return uraid_errf(err, errlen, -EIO, "%s: cannot read the pool label: %s", path,
				  strerror(-rc));
	rc = pool_label_decode(sector, &d->label, why, sizeof(why));
	if (rc)
		return uraid_errf(err, errlen, rc == -ENOENT ? -EINVAL : rc, "%s: %s in its label "
				  "partition", path, why);
	return 0;
}

/* Does [off, off + len) of fd hold anything but zeroes? */
static int range_has_data(int fd, uint64_t off, size_t len, bool *data)
{
	uint8_t *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	int rc = uraid_pread_full(fd, buf, len, off);
	*data = false;
	for (size_t i = 0; rc == 0 && i < len && !*data; i++)
		*data = buf[i] != 0;
	free(buf);
	return rc;
}

int pool_drive_check_blank(int fd, uint64_t sectors, char *err, size_t errlen)
{
	struct gpt *g = malloc(sizeof(*g));
	struct gpt_read_info info;
	struct uraid_probe *p = malloc(sizeof(*p));
	char why[300];
	int rc = 0;

	if (!g || !p) {
		free(g);
		free(p);
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	}
	int grc = gpt_read(fd, sectors, g, &info, why, sizeof(why));
	if (grc == 0 || grc == -EINVAL)
		rc = uraid_errf(err, errlen, -EEXIST, "holds a partition table (GPT%s)",
				grc ? ", damaged" : "");
	else if (info.mbr_partitions || info.protective_mbr)
		rc = uraid_errf(err, errlen, -EEXIST, "holds a partition table (MBR)");
	else if (uraid_probe_fd(fd, p) == 0 && (p->chosen >= 0 || p->has_md090))
		rc = uraid_errf(err, errlen, -EEXIST, "holds an md superblock (a member of an "
				"array)");
	if (rc == 0) {
		/* file systems, LVM, other labels: something in the first or the last MiB */
		uint64_t mib = 1u << 20, bytes = sectors * 512;
		uint64_t head = bytes < mib ? bytes : mib;
		bool data = false;
		rc = range_has_data(fd, 0, (size_t)head, &data);
		if (rc == 0 && !data && bytes > head)
			rc = range_has_data(fd, bytes - head, (size_t)head, &data);
		if (rc)
			rc = uraid_errf(err, errlen, rc, "cannot be read: %s", strerror(-rc));
		else if (data)
			rc = uraid_errf(err, errlen, -EEXIST, "holds data (its first or last MiB is "
					"not all zeroes)");
	}
	free(g);
	free(p);
	return rc;
}

int pool_drive_format(int fd, uint64_t sectors, const struct pool_label *l, char *err,
		      size_t errlen)
{
	struct gpt *g = malloc(sizeof(*g));
	alignas(4096) uint8_t sector[512];
	uint8_t disk_guid[16];
	int rc;

	if (!g)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	if ((rc = gpt_guid_random(disk_guid)) ||
	    (rc = gpt_init(g, sectors, disk_guid, err, errlen)))
		goto out;
	if (sectors < POOL_LABEL_FIRST + 2 * POOL_LABEL_SECTORS + GPT_BACKUP_BYTES / 512) {
		rc = uraid_errf(err, errlen, -EINVAL, "the drive has %" PRIu64 " sectors; a pool "
				"drive needs at least 3 MiB", sectors);
		goto out;
	}
	struct gpt_part *p = &g->part[0];
	memcpy(p->type, pool_type_label, 16);
	if ((rc = gpt_guid_random(p->guid)))
		goto out;
	p->first = POOL_LABEL_FIRST;
	p->last = POOL_LABEL_FIRST + POOL_LABEL_SECTORS - 1;
	snprintf(p->name, sizeof(p->name), LABEL_PREFIX "%s", l->name);
	/* the label partition is zeroed, then the record written, then the table */
	uint8_t *zero = calloc(1, POOL_LABEL_SECTORS * 512);
	if (!zero) {
		rc = uraid_errf(err, errlen, -ENOMEM, "out of memory");
		goto out;
	}
	pool_label_encode(l, sector);
	rc = uraid_pwrite_full(fd, zero, POOL_LABEL_SECTORS * 512, p->first * 512);
	free(zero);
	if (rc == 0)
		rc = uraid_pwrite_full(fd, sector, sizeof(sector), p->first * 512);
	if (rc) {
		uraid_errf(err, errlen, rc, "writing the pool label failed: %s", strerror(-rc));
		goto out;
	}
	rc = gpt_write(fd, g, err, errlen);
out:
	free(g);
	return rc;
}

void pool_part_name(const char *pool, const char *vol, char *out, size_t len)
{
	snprintf(out, len, "%s/%s", pool, vol);
}

const char *pool_part_volume(const struct gpt_part *p, const char *pool)
{
	size_t n = strlen(pool);

	if (memcmp(p->type, pool_type_volume, 16) || strncmp(p->name, pool, n) ||
	    p->name[n] != '/' || !pool_name_ok(p->name + n + 1, POOL_VOL_NAME_MAX))
		return NULL;
	return p->name + n + 1;
}

void pool_member_spec(const struct pool_drive *d, unsigned entry, char *out, size_t len)
{
	const struct gpt_part *p = &d->gpt.part[entry];
	struct stat st;

	/* the kernel's node of partition entry + 1 of the device the path names
	   (a /dev/disk/by-id link, a /dev/mapper name: by its st_rdev, in sysfs),
	   when it has the GPT's extent: a node left from an older table must not
	   stand for a new partition */
	if (d->blockdev && stat(d->path, &st) == 0 && S_ISBLK(st.st_mode) &&
	    uraid_block_part_node(st.st_rdev, entry + 1, p->first, p->last - p->first + 1, out,
				  len))
		return;
	snprintf(out, len, "%s@%" PRIu64 "+%" PRIu64, d->path, p->first, p->last - p->first + 1);
}

uint64_t pool_drive_largest_free(const struct pool_drive *d, uint64_t *first)
{
	struct gpt_extent ext[GPT_ENTRIES + 1];
	unsigned n = gpt_free_extents(&d->gpt, ext, GPT_ENTRIES + 1);
	uint64_t best = 0;

	*first = 0;
	for (unsigned i = 0; i < n; i++)
		if (ext[i].sectors > best) {
			best = ext[i].sectors;
			*first = ext[i].first;
		}
	return best;
}
