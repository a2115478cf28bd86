// SPDX-License-Identifier: MIT
/*
 * private_file.h: a directory is accepted only when it is a directory of
 * this user's with no group or other bits (a link to one, another owner, any
 * of the bits, a file: refused with the reason, nothing created); a file is
 * replaced, never written through a link at its name (the link's target keeps
 * its bytes), with the mode asked for whatever the umask; a read refuses
 * links, FIFOs (without hanging) and directories. The ownership cases need
 * root (chown); they are skipped, and said so, otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/private_file.h"
#include "../support/check.h"

#define OTHER_UID 65534

static char root[64];

static const char *at(const char *name)
{
	static char buf[4][256];
	static unsigned n;
	char *b = buf[n++ % 4];
	snprintf(b, sizeof(buf[0]), "%s/%s", root, name);
	return b;
}

static bool is_empty(const char *dir)
{
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s')\"", dir);
	return system(cmd) == 0;
}

/* Refused with rc and a reason containing want; nothing made inside. */
static void refused(const char *path, int want_rc, const char *want)
{
	char err[512] = "";
	int fd = uraid_private_dir_open(path, URAID_DIR_CREATE, "set X", err, sizeof(err));
	CHECK(fd == want_rc, "%s: got %d, want %d (%s)", path, fd, want_rc, err);
	if (fd >= 0)
		close(fd);
	CHECK(strstr(err, want) != NULL, "%s: reason '%s' lacks '%s'", path, err, want);
	CHECK(strstr(err, "set X") != NULL, "%s: reason '%s' gives no advice", path, err);
}

static void check_dirs(void)
{
	char err[512];
	struct stat st;

	/* missing: made 0700 even with a permissive umask, then accepted */
	mode_t old = umask(0);
	int fd = uraid_private_dir_open(at("made"), URAID_DIR_CREATE, "set X", err, sizeof(err));
	umask(old);
	CHECK(fd >= 0, "a missing directory is made: %s", err);
	CHECK(stat(at("made"), &st) == 0 && (st.st_mode & 07777) == 0700,
	      "made with mode %o", (unsigned)st.st_mode & 07777);
	if (fd >= 0)
		close(fd);
	fd = uraid_private_dir_open(at("absent"), 0, "set X", err, sizeof(err));
	CHECK(fd == -ENOENT && stat(at("absent"), &st) < 0, "without the flag: not made (%d)", fd);

	CHECK(symlink(at("made"), at("link")) == 0, "symlink");
	refused(at("link"), -ELOOP, "is a symbolic link");
	CHECK(is_empty(at("made")), "nothing in the link's target");
	CHECK(symlink(at("nowhere"), at("dangling")) == 0, "symlink");
	refused(at("dangling"), -ELOOP, "is a symbolic link");
	CHECK(lstat(at("nowhere"), &st) < 0, "the dangling link's target is not made");

	static const unsigned modes[] = { 0770, 0750, 0710, 0707, 0705, 0701, 0755, 0777, 01777 };
	for (unsigned i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		char name[32], want[32];
		snprintf(name, sizeof(name), "m%o", modes[i]);
		CHECK(mkdir(at(name), 0700) == 0 && chmod(at(name), modes[i]) == 0, "mkdir");
		snprintf(want, sizeof(want), "has mode %04o", modes[i]);
		refused(at(name), -EPERM, want);
	}
	int f = open(at("file"), O_CREAT | O_WRONLY, 0600);
	close(f);
	refused(at("file"), -ENOTDIR, "is not a directory");
	refused(at("file/sub"), -ENOTDIR, "file/sub");

	if (geteuid() != 0) {
		printf("not root: the other owner's directory is not tried\n");
		return;
	}
	CHECK(mkdir(at("theirs"), 0777) == 0 && chmod(at("theirs"), 0777) == 0 &&
	      chown(at("theirs"), OTHER_UID, OTHER_UID) == 0, "their directory");
	refused(at("theirs"), -EPERM, "is owned by uid 65534, not you: remove it or set X");
	CHECK(chmod(at("theirs"), 0700) == 0, "chmod");
	refused(at("theirs"), -EPERM, "is owned by uid 65534");
	CHECK(is_empty(at("theirs")), "nothing made in their directory");
}

static void check_files(void)
{
	char err[512], buf[64];
	struct stat st;
	int dfd = open(root, O_RDONLY | O_DIRECTORY);

	/* a link at the name: replaced by the file, its target untouched */
	int f = open(at("target"), O_CREAT | O_WRONLY, 0600);
	CHECK(f >= 0 && write(f, "target\n", 7) == 7, "target");
	close(f);
	CHECK(symlink(at("target"), at("pid")) == 0, "symlink");
	mode_t old = umask(0077);
	int rc = uraid_file_replace(at("pid"), "123\n", 4, 0644, err, sizeof(err));
	umask(old);
	CHECK(rc == 0, "replace: %s", err);
	CHECK(lstat(at("pid"), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0644,
	      "a regular file of mode 0644 despite umask 077 (mode %o)", (unsigned)st.st_mode);
	CHECK(uraid_file_read_at(AT_FDCWD, at("target"), buf, sizeof(buf)) == 7 &&
	      !strcmp(buf, "target\n"), "the target keeps its bytes: '%s'", buf);
	CHECK(uraid_file_read_at(dfd, "pid", buf, sizeof(buf)) == 4 && !strcmp(buf, "123\n"),
	      "the file holds what was written: '%s'", buf);

	/* replace again (over a file), relative to the directory, mode 0600 */
	rc = uraid_file_replace_at(dfd, root, "pid", "4567\n", 5, 0600, err, sizeof(err));
	CHECK(rc == 0 && stat(at("pid"), &st) == 0 && (st.st_mode & 07777) == 0600, "again: %s", err);
	CHECK(uraid_file_read_at(dfd, "pid", buf, sizeof(buf)) == 5 && !strcmp(buf, "4567\n"),
	      "new contents: '%s'", buf);

	/* only the one file left behind: no temporary */
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A '%s' | grep '^\\.')\"", root);
	CHECK(system(cmd) == 0, "no temporary file is left in %s", root);

	/* reads: a link, a FIFO (at once, not hanging), a directory, a missing file */
	CHECK(symlink(at("target"), at("rlink")) == 0 && mkfifo(at("fifo"), 0600) == 0, "setup");
	CHECK(uraid_file_read_at(dfd, "rlink", buf, sizeof(buf)) == -ELOOP, "a link is not read");
	CHECK(uraid_file_read_at(dfd, "fifo", buf, sizeof(buf)) == -EINVAL, "a FIFO is not read");
	CHECK(uraid_file_read_at(AT_FDCWD, root, buf, sizeof(buf)) == -EINVAL, "nor a directory");
	CHECK(uraid_file_read_at(dfd, "missing", buf, sizeof(buf)) == -ENOENT, "missing");
	/* a short buffer: what fits, terminated */
	CHECK(uraid_file_read_at(dfd, "target", buf, 4) == 3 && !strcmp(buf, "tar"), "short: '%s'",
	      buf);

	/* names that are no file name, and a directory that is not there */
	CHECK(uraid_file_replace_at(dfd, root, "a/b", "x", 1, 0600, err, sizeof(err)) == -EINVAL,
	      "a name with a slash is refused");
	CHECK(uraid_file_replace(at("none/pid"), "x", 1, 0600, err, sizeof(err)) == -ENOENT &&
	      strstr(err, "none"), "a missing directory: %s", err);
	close(dfd);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/test_private_file.XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		return 1;
	}
	printf("in %s\n", root);
	check_dirs();
	check_files();
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
