// SPDX-License-Identifier: MIT
/* Directories and files no other user can redirect (private_file.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/full_io.h"
#include "common/private_file.h"

#define DIR_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define TEMP_TRIES 16

int uraid_private_dir_open(const char *path, unsigned flags, const char *advice, char *err,
			   size_t errlen)
{
	int fd = open(path, DIR_OPEN_FLAGS);
	if (fd < 0 && errno == ENOENT && (flags & URAID_DIR_CREATE)) {
		/* 0700 from the start; whoever made it first (another user, in a race)
		   is caught by the checks below like any other */
		if (mkdir(path, 0700) < 0 && errno != EEXIST)
			return uraid_errf(err, errlen, -errno, "cannot create directory %s: %s; %s",
					  path, strerror(errno), advice);
		fd = open(path, DIR_OPEN_FLAGS);
	}
	struct stat st;
	if (fd < 0) {
		int e = errno;
		/* O_NOFOLLOW|O_DIRECTORY fails on a link with ELOOP or ENOTDIR: say which */
		if ((e == ELOOP || e == ENOTDIR) && lstat(path, &st) == 0) {
			if (S_ISLNK(st.st_mode))
				return uraid_errf(err, errlen, -ELOOP, "directory %s is a symbolic link: "
						  "remove it or %s", path, advice);
			if (!S_ISDIR(st.st_mode))
				return uraid_errf(err, errlen, -ENOTDIR, "%s is not a directory: remove "
						  "it or %s", path, advice);
		}
		return uraid_errf(err, errlen, -e, "directory %s: %s; %s", path, strerror(e), advice);
	}
	/* checked on the descriptor: what was opened, whatever the path names now */
	int rc = 0;
	if (fstat(fd, &st) < 0)
		rc = uraid_errf(err, errlen, -errno, "directory %s: %s", path, strerror(errno));
	else if (st.st_uid != geteuid())
		rc = uraid_errf(err, errlen, -EPERM, "directory %s is owned by uid %u, not you: "
				"remove it or %s", path, (unsigned)st.st_uid, advice);
	else if (st.st_mode & (S_IRWXG | S_IRWXO))
		rc = uraid_errf(err, errlen, -EPERM, "directory %s has mode %04o, open to other "
				"users: chmod 700 it or %s", path, (unsigned)(st.st_mode & 07777),
				advice);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

/* A name no one can guess ahead of time; O_EXCL makes a collision harmless. */
static uint32_t temp_suffix(void)
{
	uint32_t r;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		return r;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint32_t)ts.tv_nsec ^ ((uint32_t)getpid() << 16);
}

int uraid_file_replace_at(int dirfd, const char *show_dir, const char *name, const void *data,
			  size_t len, mode_t mode, char *err, size_t errlen)
{
	const char *sd = show_dir ? show_dir : "", *sep = show_dir ? "/" : "";
	char tmp[NAME_MAX + 1];
	int fd = -1;

	if (!*name || strchr(name, '/') || strlen(name) > NAME_MAX - 10)
		return uraid_errf(err, errlen, -EINVAL, "%s%s%s: not a file name in a directory",
				  sd, sep, name);
	for (unsigned i = 0; i < TEMP_TRIES && fd < 0; i++) {
		/* hidden, and never a pid: the registry skips it */
		snprintf(tmp, sizeof(tmp), ".%s.%08x", name, temp_suffix());
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0)
		return uraid_errf(err, errlen, -errno, "%s%s%s: %s", sd, sep, tmp, strerror(errno));
	int rc = uraid_pwrite_full(fd, data, len, 0);
	if (!rc && fchmod(fd, mode) < 0)        /* the mode asked for, not the umask's */
		rc = -errno;
	if (close(fd) < 0 && !rc)
		rc = -errno;
	if (!rc && renameat(dirfd, tmp, dirfd, name) < 0)
		rc = -errno;
	if (rc) {
		unlinkat(dirfd, tmp, 0);
		return uraid_errf(err, errlen, rc, "%s%s%s: %s", sd, sep, name, strerror(-rc));
	}
	return 0;
}

int uraid_file_replace(const char *path, const void *data, size_t len, mode_t mode, char *err,
		       size_t errlen)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	if (!slash)
		return uraid_file_replace_at(AT_FDCWD, NULL, path, data, len, mode, err, errlen);
	size_t dl = slash == path ? 1 : (size_t)(slash - path);
	if (dl >= sizeof(dir))
		return uraid_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", path);
	memcpy(dir, path, dl);
	dir[dl] = 0;
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return uraid_errf(err, errlen, -errno, "%s: %s", dir, strerror(errno));
	int rc = uraid_file_replace_at(dfd, strcmp(dir, "/") ? dir : "", slash + 1, data, len, mode,
				       err, errlen);
	close(dfd);
	return rc;
}

ssize_t uraid_file_read_at(int dirfd, const char *name, char *buf, size_t len)
{
	/* O_NONBLOCK: a FIFO put there does not hang the open */
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	size_t got = 0;
	int rc = 0;
	if (fstat(fd, &st) < 0)
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = -EINVAL;
	while (!rc && got + 1 < len) {
		ssize_t r = read(fd, buf + got, len - 1 - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			rc = -errno;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (rc)
		return rc;
	if (len)
		buf[got] = 0;
	return (ssize_t)got;
}
