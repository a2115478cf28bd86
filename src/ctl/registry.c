// SPDX-License-Identifier: MIT
/*
 * Where served arrays are listed: a directory with one file per server,
 * named by its pid, holding the path of its control socket and, on a second
 * line, that of its export socket (empty for TCP). A server that
 * died without cleaning up leaves a file whose socket no longer answers;
 * whoever lists the directory removes it.
 */
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
#include "ctl/ctl.h"

int ctl_run_dir(char *buf, size_t len)
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
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	if (mkdir(buf, 0700) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

static int entry_path(char *buf, size_t len, long pid)
{
	char dir[512];
	int rc = ctl_run_dir(dir, sizeof(dir));
	if (rc)
		return rc;
	int n = snprintf(buf, len, "%s/%ld", dir, pid);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int ctl_register(const char *ctl_path, const char *export_path, char *err, size_t errlen)
{
	char path[600], tmp[620];
	int rc = entry_path(path, sizeof(path), (long)getpid());
	if (rc)
		return uraid_errf(err, errlen, rc, "run directory: %s (set URAID_RUN_DIR)",
				  strerror(-rc));
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return uraid_errf(err, errlen, -errno, "%s: %s", tmp, strerror(errno));
	fprintf(f, "%s\n%s\n", ctl_path, export_path ? export_path : "");
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		rc = -errno;
		unlink(tmp);
		return uraid_errf(err, errlen, rc, "%s: %s", path, strerror(-rc));
	}
	return 0;
}

void ctl_unregister(void)
{
	char path[600];
	if (entry_path(path, sizeof(path), (long)getpid()) == 0)
		unlink(path);
}

/*
 * Call fn with each entry of a live server (entries of dead ones are
 * removed); fn returns what ctl_for_each's callback returns.
 */
static int each_entry(int (*fn)(const char *entry, const char *ctl, const char *export,
				void *arg), void *arg)
{
	char dir[512], path[800], ctl[CTL_MAX_LINE], exp[CTL_MAX_LINE];
	int answered = 0;

	if (ctl_run_dir(dir, sizeof(dir)))
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	for (struct dirent *de; (de = readdir(d));) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			unlink(path);           /* died without cleaning up */
			continue;
		}
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		bool ok = fgets(ctl, sizeof(ctl), f) != NULL;
		if (!fgets(exp, sizeof(exp), f))
			exp[0] = 0;     /* written by an older uraid: no export socket */
		fclose(f);
		if (!ok)
			continue;
		ctl[strcspn(ctl, "\n")] = 0;
		exp[strcspn(exp, "\n")] = 0;
		if (fn(path, ctl, exp, arg) == 0)
			answered++;
	}
	closedir(d);
	return answered;
}

struct for_each_ctx {
	int (*fn)(const char *ctl_path, void *arg);
	void *arg;
};

static int call_one(const char *entry, const char *ctl, const char *export, void *arg)
{
	struct for_each_ctx *fc = arg;
	int rc = fc->fn(ctl, fc->arg);
	if (rc == -ECONNREFUSED || rc == -ENOENT) {
		unlink(entry);          /* the server is gone */
		return -1;
	}
	return 0;
}

int ctl_for_each(int (*fn)(const char *ctl_path, void *arg), void *arg)
{
	struct for_each_ctx fc = { fn, arg };
	return each_entry(call_one, &fc);
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

static int find_one(const char *entry, const char *ctl, const char *export, void *arg)
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
	each_entry(find_one, &fc);
	return fc.matches;
}
