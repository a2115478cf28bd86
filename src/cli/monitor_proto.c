// SPDX-License-Identifier: MIT
/*
 * The events' datagrams and the monitors' directory (monitor_proto.h):
 * shared by the servers that send and the monitors that receive.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli/monitor_proto.h"
#include "common/errmsg.h"
#include "common/private_file.h"
#include "ctl/ctl.h"

const char *const monitor_event_names[] = {
	"Fail", "FailSpare", "SpareActive", "DegradedArray", "NewArray", "DeviceDisappeared",
	"RebuildStarted", "Rebuild20", "Rebuild40", "Rebuild60", "Rebuild80",
	"RebuildFinished", "SparesMissing", "TestMessage", "MoveSpare", NULL,
};

const char *monitor_event_known(const char *name)
{
	for (unsigned i = 0; monitor_event_names[i]; i++)
		if (strcmp(name, monitor_event_names[i]) == 0)
			return monitor_event_names[i];
	return NULL;
}

static bool field_ok(const char *s)
{
	return strpbrk(s, "\t\n") == NULL;
}

int monitor_event_format(const struct monitor_event *ev, char *buf, size_t len)
{
	if (!field_ok(ev->array) || !field_ok(ev->member) || !field_ok(ev->control))
		return -EINVAL;
	int n = snprintf(buf, len, MONITOR_MSG_MAGIC "\t%s\t%s\t%s\t%s\n", ev->event, ev->array,
			 ev->member, ev->control);
	return n < 0 || (size_t)n >= len || n > MONITOR_MSG_MAX ? -ENAMETOOLONG : n;
}

/* Copy the field at *p (up to a tab or the end) into out; the next field after. */
static int take_field(const char **p, const char *end, char *out, size_t outlen, bool last)
{
	const char *f = *p;
	const char *stop = memchr(f, last ? '\n' : '\t', (size_t)(end - f));
	if (!stop || (size_t)(stop - f) >= outlen || memchr(f, '\t', (size_t)(stop - f)))
		return -EPROTO;
	memcpy(out, f, (size_t)(stop - f));
	out[stop - f] = 0;
	*p = stop + 1;
	return 0;
}

int monitor_event_parse(const char *buf, size_t len, struct monitor_event *ev)
{
	static const char magic[] = MONITOR_MSG_MAGIC "\t";
	char event[32];
	const char *p = buf, *end = buf + len;

	if (len > MONITOR_MSG_MAX || len < sizeof(magic) || memchr(buf, 0, len) ||
	    memcmp(buf, magic, sizeof(magic) - 1) != 0)
		return -EPROTO;
	p += sizeof(magic) - 1;
	if (take_field(&p, end, event, sizeof(event), false) ||
	    take_field(&p, end, ev->array, sizeof(ev->array), false) ||
	    take_field(&p, end, ev->member, sizeof(ev->member), false) ||
	    take_field(&p, end, ev->control, sizeof(ev->control), true) || p != end)
		return -EPROTO;
	ev->event = monitor_event_known(event);
	return ev->event && *ev->array && *ev->control ? 0 : -EPROTO;
}

int monitor_dir_open(bool create, char *buf, size_t len, char *err, size_t errlen)
{
	char run[512];
	int rfd = ctl_run_dir(run, sizeof(run), err, errlen);
	if (rfd < 0)
		return rfd;
	close(rfd);
	int n = snprintf(buf, len, "%s/" MONITOR_DIR, run);
	if (n < 0 || (size_t)n >= len)
		return uraid_errf(err, errlen, -ENAMETOOLONG, "%s: path too long", run);
	if (!create) {
		struct stat sb;
		if (lstat(buf, &sb) < 0)
			return uraid_errf(err, errlen, -ENOENT, "%s: no monitor listens", buf);
	}
	return uraid_private_dir_open(buf, create ? URAID_DIR_CREATE : 0, "set URAID_RUN_DIR",
				      err, errlen);
}

static bool is_socket(int dfd, const char *name)
{
	struct stat sb;
	return fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(sb.st_mode);
}

int monitor_broadcast(const char *msg, size_t len)
{
	char dir[600];
	int sent = 0;
	int dfd = monitor_dir_open(false, dir, sizeof(dir), NULL, 0);
	if (dfd < 0)
		return 0;               /* no monitor has ever run here */
	DIR *d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	for (struct dirent *de; fd >= 0 && (de = readdir(d));) {
		size_t nl = strlen(de->d_name);
		if ((de->d_type != DT_SOCK && de->d_type != DT_UNKNOWN) || nl < 6 ||
		    strcmp(de->d_name + nl - 5, ".sock") != 0)
			continue;
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%s", dir, de->d_name);
		if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
			continue;
		if (sendto(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&sa,
			   sizeof(sa)) == (ssize_t)len)
			sent++;
		else if (errno == ECONNREFUSED && is_socket(dirfd(d), de->d_name))
			unlinkat(dirfd(d), de->d_name, 0);      /* its monitor is gone */
		/* EAGAIN (its queue is full) and the rest: that monitor misses it */
	}
	if (fd >= 0)
		close(fd);
	closedir(d);
	return sent;
}
