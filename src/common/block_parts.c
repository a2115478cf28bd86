// SPDX-License-Identifier: MIT
/* The kernel's partitions of a block device (block_parts.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/block_parts.h"
#include "common/errmsg.h"

/* One number from a sysfs file; false when absent or not a number. */
static bool sysfs_u64(const char *dir, const char *name, const char *key, uint64_t *v)
{
	char path[600];
	unsigned long long x;

	snprintf(path, sizeof(path), "%s/%s/%s", dir, name, key);
	FILE *f = fopen(path, "r");
	int n = f ? fscanf(f, "%llu", &x) : 0;
	if (f)
		fclose(f);
	if (n != 1)
		return false;
	*v = x;
	return true;
}

/* Calls fn for each partition of disk (its sysfs directory name, number,
 * start, size) until fn returns non-zero; returns that. */
static int for_each_part(dev_t disk, int (*fn)(const char *name, uint64_t no, uint64_t start,
					       uint64_t size, void *arg), void *arg)
{
	char dir[80];
	int rc = 0;

	snprintf(dir, sizeof(dir), "/sys/dev/block/%u:%u", major(disk), minor(disk));
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	for (struct dirent *e; !rc && (e = readdir(d));) {
		uint64_t no, start, size;
		if (e->d_name[0] == '.' || strlen(e->d_name) > 200 ||
		    !sysfs_u64(dir, e->d_name, "partition", &no) ||
		    !sysfs_u64(dir, e->d_name, "start", &start) ||
		    !sysfs_u64(dir, e->d_name, "size", &size))
			continue;
		rc = fn(e->d_name, no, start, size, arg);
	}
	closedir(d);
	return rc;
}

struct node_find {
	unsigned partno;
	uint64_t start, sectors;
	char *out;
	size_t len;
};

static int node_match(const char *name, uint64_t no, uint64_t start, uint64_t size, void *arg)
{
	struct node_find *f = arg;
	char node[300];
	struct stat st;

	if (no != f->partno || start != f->start || size != f->sectors)
		return 0;
	snprintf(node, sizeof(node), "/dev/%s", name);
	if (stat(node, &st) || !S_ISBLK(st.st_mode))
		return 0;
	snprintf(f->out, f->len, "%s", node);
	return 1;
}

bool uraid_block_part_node(dev_t disk, unsigned partno, uint64_t start, uint64_t sectors,
			   char *out, size_t len)
{
	struct node_find f = { partno, start, sectors, out, len };
	return for_each_part(disk, node_match, &f) == 1;
}

struct busy_find {
	uint64_t start, sectors;
	const char *what;
	char *err;
	size_t errlen;
};

static int part_busy(const char *name, uint64_t no, uint64_t start, uint64_t size, void *arg)
{
	struct busy_find *b = arg;
	char path[300];
	(void)no;

	if (start >= b->start + b->sectors || b->start >= start + size)
		return 0;
	/* held by the kernel: md or dm stacked on it */
	snprintf(path, sizeof(path), "/sys/class/block/%s/holders", name);
	DIR *d = opendir(path);
	bool held = false;
	for (struct dirent *e; d && !held && (e = readdir(d));)
		held = e->d_name[0] != '.';
	if (d)
		closedir(d);
	if (held)
		return uraid_errf(b->err, b->errlen, -EBUSY, "%s: its sectors are those of /dev/%s, "
				  "which the kernel holds (an md or dm array: assembled by the "
				  "host's mdadm? stop it first)", b->what, name);
	/* opened exclusively by a program (another uraid serving it, a mount) */
	snprintf(path, sizeof(path), "/dev/%s", name);
	int fd = open(path, O_RDONLY | O_EXCL | O_CLOEXEC);
	if (fd < 0 && errno == EBUSY)
		return uraid_errf(b->err, b->errlen, -EBUSY, "%s: its sectors are those of %s, "
				  "which is in use (served, mounted or held by a driver)", b->what,
				  path);
	if (fd >= 0)
		close(fd);
	return 0;
}

int uraid_block_parts_free(dev_t disk, uint64_t start, uint64_t sectors, const char *what,
			   char *err, size_t errlen)
{
	struct busy_find b = { start, sectors, what, err, errlen };
	return for_each_part(disk, part_busy, &b);
}
