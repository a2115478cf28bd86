// SPDX-License-Identifier: MIT
/*
 * Where served arrays are listed: a directory with one file per server,
 * named by its pid, holding the path of its control socket. A server that
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

int ctl_register(const char *ctl_path, char *err, size_t errlen)
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
	fprintf(f, "%s\n", ctl_path);
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

int ctl_for_each(int (*fn)(const char *ctl_path, void *arg), void *arg)
{
	char dir[512], path[800], ctl[CTL_MAX_LINE];
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
		fclose(f);
		if (!ok)
			continue;
		ctl[strcspn(ctl, "\n")] = 0;
		int rc = fn(ctl, arg);
		if (rc == -ECONNREFUSED || rc == -ENOENT)
			unlink(path);           /* the server is gone */
		else
			answered++;
	}
	closedir(d);
	return answered;
}
