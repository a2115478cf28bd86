// SPDX-License-Identifier: MIT
/* Opening a member and the synchronous metadata I/O on it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/block_parts.h"
#include "common/errmsg.h"
#include "common/file_lock.h"
#include "common/full_io.h"
#include "common/range_path.h"
#include "io/member_internal.h"

static void member_reset(struct member *m, const char *path)
{
	memset(m, 0, sizeof(*m));
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->fd = -1;
	m->dio_align = 512;
	member_counters_reset(m);
	atomic_init(&m->read_errors, 0);
	atomic_init(&m->write_errors, 0);
	atomic_init(&m->corrected_reads, 0);
	atomic_init(&m->corrected_unrecorded, 0);
	atomic_init(&m->wall_reported, false);
	atomic_init(&m->has_fault, false);
	atomic_init(&m->fault_rng, 0);
	m->fault.kind = URAID_FAULT_NONE;
}

struct member *member_new(void)
{
	/* sizeof is a multiple of the alignment, as aligned_alloc wants */
	struct member *m = aligned_alloc(_Alignof(struct member), sizeof(*m));

	if (m)
		memset(m, 0, sizeof(*m));
	return m;
}

/*
 * What member_open learns of a file's file system, from one statfs switch:
 * whether its data lives in memory (tmpfs, ramfs: see member_submit),
 * whether it is known to punch holes (others may too: the first punch that
 * goes through tells, member_submit), and whether its SEEK_DATA/SEEK_HOLE
 * answers are trusted (allocation.c). Seek is trusted on the same local file
 * systems that punch: FUSE, NFS 4.2, 9p and some ZFS versions have answered
 * "hole" over data, and a wrong hole reported to an NBD client is data it
 * skips, so every other file system reports data.
 */
static void member_fs_traits(struct member *m, int fd)
{
	struct statfs sfs;
	bool known = false;

	m->in_memory = false;
	m->seek_trusted = false;
	atomic_store(&m->punches, false);
	if (m->blockdev || fstatfs(fd, &sfs) < 0)
		return;
	switch ((unsigned long)sfs.f_type) {
	case TMPFS_MAGIC:
		m->in_memory = true;
		known = true;
		break;
	case RAMFS_MAGIC:               /* no holes: every byte is data */
		m->in_memory = true;
		break;
	case EXT4_SUPER_MAGIC:          /* ext2/3/4: the ext4 driver punches */
	case XFS_SUPER_MAGIC:
	case BTRFS_SUPER_MAGIC:
	case F2FS_SUPER_MAGIC:
		known = true;
		break;
	default:
		break;
	}
	m->seek_trusted = known;
	atomic_store(&m->punches, known);
}

/* Alignment O_DIRECT needs on this fd: logical block size or the file's DIO offset alignment. */
static uint32_t member_dio_align(int fd, bool blockdev)
{
	int lbs = 0;
	struct statx stx;

	if (blockdev) {
		if (ioctl(fd, BLKSSZGET, &lbs) == 0 && lbs >= 512)
			return (uint32_t)lbs;
		return 512;
	}
	if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
	    (stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align >= 512)
		return stx.stx_dio_offset_align;
	return 512;
}

int member_open(struct member *m, const char *path, unsigned how, const struct ulog *log,
		char *err, size_t errlen)
{
	bool readonly = how & MEMBER_OPEN_READONLY, buffered = how & MEMBER_OPEN_BUFFERED;
	bool unlocked = readonly && (how & MEMBER_OPEN_UNLOCKED);
	struct stat st;
	struct uraid_range_path range;
	uint64_t bytes = 0;
	int flags = (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	int fd, rc;

	member_reset(m, path);
	m->log = log;
	pthread_mutex_init(&m->fault_lock, NULL);
	if (strlen(path) >= sizeof(m->path))
		return uraid_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
	if ((rc = uraid_range_path_parse(path, &range, err, errlen)) < 0)
		return rc;
	const char *spec = path;
	path = range.path;      /* the file or device; m->path keeps the range */
	if (stat(path, &st) < 0) {
		rc = -errno;
		return uraid_errf(err, errlen, rc, "%s: %s", path, strerror(-rc));
	}
	m->blockdev = S_ISBLK(st.st_mode);
	if (!m->blockdev && !S_ISREG(st.st_mode))
		return uraid_errf(err, errlen, -EINVAL,
				  "%s: not a block device or regular file", path);
	/* the kernel's claim is of the whole device: a range is claimed by its lock */
	if (m->blockdev && !unlocked && !range.ranged)
		flags |= O_EXCL;

	fd = open(path, flags | (buffered ? 0 : O_DIRECT));
	if (fd < 0 && errno == EINVAL && !buffered) {
		fd = open(path, flags);
		if (fd >= 0)
			ulog(log, URAID_LOG_WARNING, "%s: O_DIRECT refused by the file system, "
			     "using buffered I/O", path);
	} else if (fd >= 0 && !buffered) {
		m->direct = true;
	}
	if (fd < 0) {
		rc = -errno;
		if (rc == -EBUSY && m->blockdev)
			return uraid_errf(err, errlen, rc, "%s: device is in use "
					  "(mounted, or a member of a running array)", path);
		return uraid_errf(err, errlen, rc, "%s: open: %s", path, strerror(-rc));
	}
	if (range.ranged && !unlocked) {
		rc = uraid_range_path_lock(fd, &range, !readonly, err, errlen);
		/* the kernel's claim of a partition over the same sectors (md
		   assembled it, another program serves /dev/sdb2) is not seen by
		   an open of the whole device: ask sysfs */
		if (rc == 0 && m->blockdev && !readonly)
			rc = uraid_block_parts_free(st.st_rdev, range.start, range.sectors, spec,
						    err, errlen);
	} else if (!m->blockdev && !unlocked) {
		rc = uraid_file_lock(fd, !readonly, path, err, errlen);
	} else if (!unlocked && !readonly) {
		rc = uraid_block_whole_lock(fd, path, err, errlen);    /* keeps ranges off */
	} else {
		rc = 0;
	}
	if (rc < 0) {
		close(fd);
		return rc;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		close(fd);
		return uraid_errf(err, errlen, rc, "%s: fstat: %s", path, strerror(-rc));
	}
	if (m->blockdev) {
		if (ioctl(fd, BLKGETSIZE64, &bytes) < 0) {
			rc = -errno;
			close(fd);
			return uraid_errf(err, errlen, rc, "%s: BLKGETSIZE64: %s", path,
					  strerror(-rc));
		}
	} else {
		bytes = (uint64_t)st.st_size;
	}
	if ((rc = uraid_range_path_check(&range, bytes / 512, err, errlen)) < 0) {
		close(fd);
		return rc;
	}
	m->fd = fd;
	m->dev_sectors = range.ranged ? range.sectors : bytes / 512;
	m->base = range.start;
	m->ranged = range.ranged;
	/* until it joins an array, the wall is the device itself */
	struct member_area whole = { 0, m->dev_sectors };
	member_set_areas(m, 0, m->dev_sectors, &whole, 1);
	m->dio_align = member_dio_align(fd, m->blockdev);
	member_fs_traits(m, fd);
	if (m->direct && (m->base * 512) % m->dio_align) {
		close(fd);
		m->fd = -1;
		return uraid_errf(err, errlen, -EINVAL, "%s: the range starts at byte %llu, not on "
				  "the %u-byte blocks O_DIRECT needs there", spec,
				  (unsigned long long)m->base * 512, m->dio_align);
	}
	return 0;
}

int member_open_stacked(struct member *m, const char *name, uint64_t sectors,
			const struct member_stack_ops *ops, void *ctx, const struct ulog *log,
			char *err, size_t errlen)
{
	member_reset(m, name);
	m->log = log;
	pthread_mutex_init(&m->fault_lock, NULL);
	if (strlen(name) >= sizeof(m->path))
		return uraid_errf(err, errlen, -ENAMETOOLONG, "%s: name too long", name);
	/* the place holder keeps every "fd >= 0: attached" test true; no I/O
	   ever goes to it (member_submit and the sync calls take ops first) */
	int fd = memfd_create("uraid-stacked", MFD_CLOEXEC);
	if (fd < 0)
		return uraid_errf(err, errlen, -errno, "%s: memfd_create: %s", name,
				  strerror(errno));
	m->fd = fd;
	m->stack = ops;
	m->stack_ctx = ctx;
	m->dev_sectors = sectors;
	m->dio_align = 512;
	struct member_area whole = { 0, sectors };
	member_set_areas(m, 0, sectors, &whole, 1);
	return 0;
}

int member_flush_sync(struct member *m)
{
	if (m->fd < 0)
		return -EBADF;
	if (m->stack)
		return m->stack->flush_sync(m->stack_ctx);
	return fdatasync(m->fd) < 0 ? -errno : 0;
}

void member_close(struct member *m)
{
	if (m->fd < 0)
		return;
	close(m->fd);
	m->fd = -1;
	pthread_mutex_destroy(&m->fault_lock);
}

/*
 * O_DIRECT needs buffer, offset and length aligned; when the caller's are not,
 * go through an aligned bounce buffer covering the enclosing blocks (reading
 * them first for a write: read-modify-write).
 */
static int member_rw_sync(struct member *m, bool write, void *buf, size_t len, uint64_t off)
{
	uint64_t a = m->direct ? m->dio_align : 1, start, end;
	void *bounce;
	int rc;

	if (m->fd < 0)
		return -EBADF;
	if (len == 0)
		return 0;
	if (off % 512 || !member_in_meta(m, off / 512, (len + 511) / 512))
		return member_wall(m, write ? "metadata write" : "metadata read", false, off / 512,
				   (len + 511) / 512);
	if (m->stack)
		return m->stack->rw_sync(m->stack_ctx, write, buf, len, off);
	off += m->base * 512;
	if (!m->direct || (off % a == 0 && len % a == 0 && (uintptr_t)buf % 4096 == 0))
		return write ? uraid_pwrite_full(m->fd, buf, len, off)
			     : uraid_pread_full(m->fd, buf, len, off);

	start = off / a * a;
	end = (off + len + a - 1) / a * a;
	if (posix_memalign(&bounce, a > 4096 ? a : 4096, end - start))
		return -ENOMEM;
	rc = 0;
	if (!write || start != off || end != off + len)
		rc = uraid_pread_full(m->fd, bounce, end - start, start);
	if (rc == 0 && write) {
		memcpy((char *)bounce + (off - start), buf, len);
		rc = uraid_pwrite_full(m->fd, bounce, end - start, start);
	} else if (rc == 0) {
		memcpy(buf, (char *)bounce + (off - start), len);
	}
	free(bounce);
	return rc;
}

int member_pwrite_sync(struct member *m, const void *buf, size_t len, uint64_t dev_sector)
{
	int rc = member_fault_check(m, MEMBER_WRITE, 0, 0);

	if (rc == 0 && member_fault_torn(m, len)) {
		/* URAID_FAULT_TORN_KILL: the first half of the pages, then the end */
		size_t pages = len / MEMBER_FAULT_PAGE;
		size_t keep = (pages / 2 ? pages / 2 : 1) * MEMBER_FAULT_PAGE;
		if (member_rw_sync(m, true, (void *)buf, keep, dev_sector * 512) == 0)
			member_flush_sync(m);
		raise(SIGKILL);
	}
	if (rc == 0)
		rc = member_rw_sync(m, true, (void *)buf, len, dev_sector * 512);
	if (rc == 0)
		rc = member_flush_sync(m);
	if (rc < 0)
		atomic_fetch_add(&m->write_errors, 1);
	return rc;
}

int member_pread_sync(struct member *m, void *buf, size_t len, uint64_t dev_sector)
{
	int rc = member_fault_check(m, MEMBER_READ, 0, 0);

	if (rc == 0)
		rc = member_rw_sync(m, false, buf, len, dev_sector * 512);
	if (rc < 0)
		atomic_fetch_add(&m->read_errors, 1);
	return rc;
}
