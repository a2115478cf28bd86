// SPDX-License-Identifier: MIT
/*
 * Where served arrays are listed: a directory with one file per served
 * array, named by its server's pid ("PID-N" for the Nth array of a server
 * that serves several, a pool's volumes), holding the path of its control socket and, on a second
 * line, that of its export socket (empty for TCP). A server that
 * died without cleaning up leaves a file whose socket no longer answers;
 * whoever lists the directory removes it. The directory must be the user's
 * own and closed to others (private_file.h): whoever can write in it can
 * swap a socket for their own.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/private_file.h"
#include "ctl/ctl.h"

#define RUN_DIR_ADVICE "set URAID_RUN_DIR"

static int run_dir_path(char *buf, size_t len)
{
	const char *env = getenv("URAID_RUN_DIR");
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int n;

	if (env && *env)
		n = snprintf(buf, len, "%s", env);
	else if (geteuid() == 0)
		n = snprintf(buf, len, "/run/uraid");
	else if (xdg && *xdg)
		n = snprintf(buf, len, "%s/uraid", xdg);
	else
		n = snprintf(buf, len, "/tmp/uraid-%u", (unsigned)geteuid());
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int ctl_run_dir(char *buf, size_t len, char *err, size_t errlen)
{
	if (run_dir_path(buf, len))
		return uraid_errf(err, errlen, -ENAMETOOLONG, "the run directory's path is longer "
				  "than %zu bytes; " RUN_DIR_ADVICE, len - 1);
	return uraid_private_dir_open(buf, URAID_DIR_CREATE, RUN_DIR_ADVICE, err, errlen);
}

/* The entry of this process: "PID", or "PID-N" for its array N > 0. */
static void entry_name(char *name, size_t len, unsigned n)
{
	if (n)
		snprintf(name, len, "%ld-%u", (long)getpid(), n);
	else
		snprintf(name, len, "%ld", (long)getpid());
}

int ctl_register(const char *ctl_path, const char *export_path, char *err, size_t errlen)
{
	return ctl_register_n(0, ctl_path, export_path, err, errlen);
}

int ctl_register_n(unsigned idx, const char *ctl_path, const char *export_path, char *err,
		   size_t errlen)
{
	char dir[512], name[32], text[2 * CTL_MAX_LINE];
	int dfd = ctl_run_dir(dir, sizeof(dir), err, errlen);
	if (dfd < 0)
		return dfd;
	int n = snprintf(text, sizeof(text), "%s\n%s\n", ctl_path, export_path ? export_path : "");
	entry_name(name, sizeof(name), idx);
	int rc = n < 0 || (size_t)n >= sizeof(text)
		? uraid_errf(err, errlen, -ENAMETOOLONG, "socket paths too long to list")
		: uraid_file_replace_at(dfd, dir, name, text, (size_t)n, 0600, err, errlen);
	close(dfd);
	return rc;
}

void ctl_unregister(void)
{
	ctl_unregister_n(0);
}

void ctl_unregister_n(unsigned idx)
{
	char dir[512], name[32];
	int dfd = ctl_run_dir(dir, sizeof(dir), NULL, 0);
	if (dfd < 0)
		return;
	entry_name(name, sizeof(name), idx);
	unlinkat(dfd, name, 0);
	close(dfd);
}

/* What each_entry hands over: the entry (dfd, name) and the paths it lists. */
typedef int entry_fn(int dfd, const char *name, const char *ctl, const char *export, void *arg);

/*
 * Call fn with each entry of a live server (entries of dead ones are
 * removed). An entry is read only when it is a regular file: a link put
 * there is not followed. Returns how many calls returned 0, or -errno when
 * the run directory cannot be used (the reason in err).
 */
static int each_entry(entry_fn *fn, void *arg, char *err, size_t errlen)
{
	char dir[512], text[2 * CTL_MAX_LINE + 2];
	int answered = 0;
	int dfd = ctl_run_dir(dir, sizeof(dir), err, errlen);
	if (dfd < 0)
		return dfd;
	DIR *d = fdopendir(dfd);
	if (!d) {
		int rc = -errno;
		close(dfd);
		return uraid_errf(err, errlen, rc, "%s: %s", dir, strerror(-rc));
	}
	for (struct dirent *de; (de = readdir(d));) {
		/* an entry "PID" or "PID-N" (a process serving several arrays), or
		   ".PID[-N].RANDOM" being written (uraid_file_replace_at) */
		const char *digits = de->d_name + (de->d_name[0] == '.');
		char *end;
		long pid = strtol(digits, &end, 10);
		bool temp = digits != de->d_name;
		if (*end == '-' && isdigit((unsigned char)end[1]))
			strtoul(end + 1, &end, 10);
		if (!isdigit((unsigned char)digits[0]) || pid <= 0 || (temp ? *end != '.' : *end != 0))
			continue;
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			unlinkat(dfd, de->d_name, 0);   /* died without cleaning up */
			continue;
		}
		if (temp)
			continue;
		if (uraid_file_read_at(dfd, de->d_name, text, sizeof(text)) <= 0)
			continue;
		/* two lines: the control socket, the export socket (none from an older uraid) */
		char *ctl = text, *exp = strchr(text, '\n');
		if (!exp)
			continue;
		*exp++ = 0;
		exp[strcspn(exp, "\n")] = 0;
		if (!*ctl)
			continue;
		if (fn(dfd, de->d_name, ctl, exp, arg) == 0)
			answered++;
	}
	closedir(d);
	return answered;
}

struct for_each_ctx {
	int (*fn)(const char *ctl_path, void *arg);
	void *arg;
};

static int call_one(int dfd, const char *name, const char *ctl, const char *export, void *arg)
{
	struct for_each_ctx *fc = arg;
	int rc = fc->fn(ctl, fc->arg);
	if (rc == -ECONNREFUSED || rc == -ENOENT) {
		unlinkat(dfd, name, 0); /* the server is gone */
		return -1;
	}
	return 0;
}

int ctl_for_each(int (*fn)(const char *ctl_path, void *arg), void *arg, char *err, size_t errlen)
{
	struct for_each_ctx fc = { fn, arg };
	return each_entry(call_one, &fc, err, errlen);
}

static bool same_file(const struct stat *a, const char *path)
{
	struct stat b;
	return *path && stat(path, &b) == 0 && a->st_dev == b.st_dev && a->st_ino == b.st_ino;
}

struct find_ctx {
	struct stat target;
	char *ctl;
	size_t len;
	int matches;
};

static int find_one(int dfd, const char *name, const char *ctl, const char *export, void *arg)
{
	struct find_ctx *fc = arg;
	if (same_file(&fc->target, ctl) || same_file(&fc->target, export)) {
		if (!fc->matches++)
			snprintf(fc->ctl, fc->len, "%s", ctl);
	}
	return 0;
}

int ctl_find_socket(const char *path, char *ctl, size_t len)
{
	struct find_ctx fc = { .ctl = ctl, .len = len };
	if (stat(path, &fc.target) < 0)
		return 0;
	each_entry(find_one, &fc, NULL, 0);     /* no run directory: no match */
	return fc.matches;
}
