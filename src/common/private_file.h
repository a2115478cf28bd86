/* SPDX-License-Identifier: MIT */
/*
 * Files that another user must not be able to redirect: the run directory
 * (where the sockets and the list of servers live), the files written in it
 * and the pid file. A directory another user owns, or may write to, lets that
 * user swap a socket for their own or plant a symbolic link where uraid is
 * about to write; so such a directory is refused (as tmux refuses its socket
 * directory), and files are written under a fresh name, never opened through
 * a link, then renamed into place.
 */
#ifndef URAID_COMMON_PRIVATE_FILE_H
#define URAID_COMMON_PRIVATE_FILE_H

#include <stddef.h>
#include <sys/types.h>

/* uraid_private_dir_open flags */
#define URAID_DIR_CREATE 1u     /* make the directory (mode 0700) when it is missing */

/*
 * Open the directory at path, checked on the open descriptor (no window
 * between check and use): a directory, not a symbolic link, owned by the
 * effective user, with no permission bits for group or others. Returns the
 * descriptor (O_DIRECTORY, close-on-exec), or -errno with one line in err
 * saying what is wrong and, from advice ("set URAID_RUN_DIR"), what to do.
 */
int uraid_private_dir_open(const char *path, unsigned flags, const char *advice, char *err,
			   size_t errlen);

/*
 * Make name (in the directory dirfd, or AT_FDCWD) a regular file holding
 * len bytes of data with the given mode: written to a new file of a random
 * name beside it (created with O_EXCL, so never through a link planted
 * there), its mode set on the descriptor, then renamed over name (a link
 * at name is replaced, not followed). 0, or -errno with the reason in err
 * (shown is the path show_dir/name; show_dir may be NULL).
 */
int uraid_file_replace_at(int dirfd, const char *show_dir, const char *name, const void *data,
			  size_t len, mode_t mode, char *err, size_t errlen);

/* The same for a path, in the directory the path names. */
int uraid_file_replace(const char *path, const void *data, size_t len, mode_t mode, char *err,
		       size_t errlen);

/*
 * Read the regular file name in dirfd (or AT_FDCWD) without following a
 * symbolic link at name: at most len - 1 bytes into buf, NUL-terminated.
 * The bytes read, or -errno (-ELOOP for a link, -EINVAL for no regular file).
 */
ssize_t uraid_file_read_at(int dirfd, const char *name, char *buf, size_t len);

#endif
