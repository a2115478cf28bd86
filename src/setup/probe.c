// SPDX-License-Identifier: MIT
/*
 * Probing a member for md superblocks at the three 1.x locations, and for
 * the internal bitmap of the one mdadm would pick. Read-only.
 */
#include <errno.h>
#include <linux/fs.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/create.h>
#include "common/full_io.h"

/* Bitmaps larger than this are not scanned for dirty bits (md's are < 1 MiB). */
#define PROBE_BITMAP_MAX_BYTES (16u << 20)

int uraid_dev_sectors(int fd, uint64_t *sectors, bool *is_blockdev)
{
	struct stat st;
	uint64_t bytes;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0)
			return -errno;
	} else if (S_ISREG(st.st_mode)) {
		bytes = (uint64_t)st.st_size;
	} else {
		return -ENOTBLK;
	}
	*sectors = bytes / 512;
	if (is_blockdev)
		*is_blockdev = S_ISBLK(st.st_mode);
	return 0;
}

/* Where a probe reads: a file or device range, or a reader (a stacked array). */
struct probe_src {
	int fd;
	uint64_t base;              /* sectors */
	uraid_probe_read_fn read;   /* NULL: fd */
	void *ctx;
};

static int src_read(const struct probe_src *s, void *buf, size_t len, uint64_t off)
{
	if (s->read)
		return s->read(s->ctx, buf, len, off);
	return uraid_pread_full(s->fd, buf, len, s->base * 512 + off);
}

static void probe_location(const struct probe_src *src, unsigned minor, uint64_t dev_sectors,
			   struct uraid_probe_slot *slot)
{
	alignas(4096) uint8_t buf[URAID_SB_BYTES];

	slot->sb_start = uraid_sb_location(minor, dev_sectors);
	if (dev_sectors < 24 || slot->sb_start + URAID_SB_BYTES / 512 > dev_sectors) {
		slot->status = -ENOENT;
		return;
	}
	int rc = src_read(src, buf, sizeof(buf), slot->sb_start * 512);
	if (rc < 0) {
		slot->status = -EIO;
		snprintf(slot->reason, sizeof(slot->reason), "cannot read sector %llu: %s",
			 (unsigned long long)slot->sb_start, strerror(-rc));
		return;
	}
	slot->status = uraid_sb_decode(buf, &slot->sb);
	if (slot->status == -ENOENT)
		return;
	slot->csum_computed = uraid_sb_checksum(buf);
	if (slot->status == 0)
		slot->status = uraid_sb_validate(buf, minor, dev_sectors, slot->reason,
						 sizeof(slot->reason));
	else
		snprintf(slot->reason, sizeof(slot->reason),
			 "max_dev %u is larger than %u", slot->sb.max_dev, URAID_SB_MAX_DEV);
}

/* mdadm picks the valid superblock with the latest creation time. */
static int choose_location(const struct uraid_probe *p)
{
	int best = -1;

	for (int m = 0; m < 3; m++) {
		if (p->loc[m].status != 0)
			continue;
		if (best < 0 || uraid_sb_seconds(p->loc[m].sb.ctime) >
				uraid_sb_seconds(p->loc[best].sb.ctime))
			best = m;
	}
	if (best >= 0)
		return best;
	/* No valid one: report the first damaged one so examine can say why. */
	for (int m = 0; m < 3; m++)
		if (p->loc[m].status == -EINVAL || p->loc[m].status == -EIO)
			return m;
	return -1;
}

static void probe_bitmap(const struct probe_src *src, struct uraid_probe *p)
{
	const struct uraid_probe_slot *slot = &p->loc[p->chosen];
	int64_t start = (int64_t)slot->sb_start + slot->sb.bitmap_offset;

	p->has_bitmap = true;
	if (start < 0 || (uint64_t)start + 8 > p->dev_sectors) {
		p->bitmap_status = -EINVAL;
		snprintf(p->bitmap_reason, sizeof(p->bitmap_reason),
			 "bitmap offset %d points outside the device", slot->sb.bitmap_offset);
		return;
	}
	alignas(4096) uint8_t head[4096];
	int rc = src_read(src, head, sizeof(head), (uint64_t)start * 512);
	if (rc < 0) {
		p->bitmap_status = -EIO;
		snprintf(p->bitmap_reason, sizeof(p->bitmap_reason), "cannot read bitmap: %s",
			 strerror(-rc));
		return;
	}
	p->bitmap_status = uraid_bitmap_decode(head, &p->bitmap);
	if (p->bitmap_status == -ENOENT) {
		snprintf(p->bitmap_reason, sizeof(p->bitmap_reason),
			 "no bitmap magic at sector %lld", (long long)start);
		return;
	}
	p->bitmap_status = uraid_bitmap_validate(&p->bitmap, slot->sb.set_uuid,
						 p->bitmap_reason, sizeof(p->bitmap_reason));
	if (p->bitmap_status)
		return;

	uint64_t bits = uraid_bitmap_bits(p->bitmap.sync_size, p->bitmap.chunksize);
	uint64_t bytes = uraid_bitmap_bytes(p->bitmap.sync_size, p->bitmap.chunksize);
	if (bytes > PROBE_BITMAP_MAX_BYTES || (uint64_t)start * 512 + bytes > p->dev_sectors * 512)
		return;
	uint8_t *area = malloc(bytes);
	if (!area)
		return;
	if (src_read(src, area, bytes, (uint64_t)start * 512) == 0)
		p->bitmap_dirty_bits = uraid_bitmap_count(area, bits);
	free(area);
}

/* md 0.90 keeps its superblock 64 KiB from the end, aligned to 64 KiB. */
static bool probe_md090(const struct probe_src *src, uint64_t dev_sectors)
{
	alignas(512) uint8_t buf[512];
	uint64_t bytes = dev_sectors * 512;

	if (bytes < 128 * 1024)
		return false;
	uint64_t off = (bytes & ~(uint64_t)0xffff) - 0x10000;
	if (src_read(src, buf, sizeof(buf), off))
		return false;
	uint32_t magic = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 |
			 (uint32_t)buf[3] << 24;
	return magic == URAID_SB_MAGIC;
}

static void probe_src(const struct probe_src *src, uint64_t sectors, struct uraid_probe *p)
{
	p->dev_sectors = sectors;
	for (unsigned m = 0; m < 3; m++)
		probe_location(src, m, p->dev_sectors, &p->loc[m]);
	p->chosen = choose_location(p);
	p->has_md090 = probe_md090(src, p->dev_sectors);
	if (p->chosen >= 0 && p->loc[p->chosen].status == 0 &&
	    (p->loc[p->chosen].sb.feature_map & URAID_FEATURE_BITMAP_OFFSET))
		probe_bitmap(src, p);
}

int uraid_probe_range(int fd, uint64_t base, uint64_t sectors, struct uraid_probe *p)
{
	uint64_t whole;

	memset(p, 0, sizeof(*p));
	int rc = uraid_dev_sectors(fd, &whole, &p->is_blockdev);
	if (rc)
		return rc;
	if (base > whole || sectors > whole - base)
		return -EINVAL;
	struct probe_src src = { .fd = fd, .base = base };
	probe_src(&src, sectors, p);
	return 0;
}

int uraid_probe_reader(uraid_probe_read_fn read, void *ctx, uint64_t sectors,
		       struct uraid_probe *p)
{
	struct probe_src src = { .fd = -1, .read = read, .ctx = ctx };

	memset(p, 0, sizeof(*p));
	probe_src(&src, sectors, p);
	return 0;
}

int uraid_probe_fd(int fd, struct uraid_probe *p)
{
	uint64_t sectors = 0;
	int rc = uraid_dev_sectors(fd, &sectors, NULL);

	return rc ? rc : uraid_probe_range(fd, 0, sectors, p);
}
