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

int monitor_field_escape(const char *in, char *out, size_t len)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)in; *p; p++) {
		char e[5];
		if (*p == '\\')
			snprintf(e, sizeof(e), "\\\\");
		else if (*p == '\t')
			snprintf(e, sizeof(e), "\\t");
		else if (*p == '\n')
			snprintf(e, sizeof(e), "\\n");
		else if (*p == '\r')
			snprintf(e, sizeof(e), "\\r");
		else if (*p < 0x20 || *p == 0x7f)
			snprintf(e, sizeof(e), "\\x%02x", *p);
		else
			e[0] = (char)*p, e[1] = 0;
		size_t el = strlen(e);
		if (n + el >= len)
			return -ENAMETOOLONG;
		memcpy(out + n, e, el);
		n += el;
	}
	if (n >= len)
		return -ENAMETOOLONG;
	out[n] = 0;
	return 0;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int monitor_field_unescape(const char *in, size_t inlen, char *out, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < inlen; i++) {
		char c = in[i];
		if (c == '\t' || c == '\n' || c == 0)
			return -EPROTO;
		if (c == '\\') {
			if (++i >= inlen)
				return -EPROTO;
			switch (in[i]) {
			case '\\': c = '\\'; break;
			case 't': c = '\t'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 'x': {
				int hi = i + 2 < inlen ? hex_digit(in[i + 1]) : -1;
				int lo = hi >= 0 ? hex_digit(in[i + 2]) : -1;
				if (lo < 0 || (hi == 0 && lo == 0))
					return -EPROTO;
				c = (char)(hi * 16 + lo);
				i += 2;
				break;
			}
			default:
				return -EPROTO;
			}
		}
		if (n + 1 >= len)
			return -EPROTO;
		out[n++] = c;
	}
	if (n >= len)
		return -EPROTO;
	out[n] = 0;
	return 0;
}

int monitor_event_format(const struct monitor_event *ev, char *buf, size_t len)
{
	char array[2 * sizeof(ev->array)], member[2 * sizeof(ev->member)],
	     control[2 * sizeof(ev->control)];
	if (monitor_field_escape(ev->array, array, sizeof(array)) ||
	    monitor_field_escape(ev->member, member, sizeof(member)) ||
	    monitor_field_escape(ev->control, control, sizeof(control)))
		return -ENAMETOOLONG;
	int n = snprintf(buf, len, MONITOR_MSG_MAGIC "\t%s\t%s\t%s\t%s\n", ev->event, array,
			 member, control);
	return n < 0 || (size_t)n >= len || n > MONITOR_MSG_MAX ? -ENAMETOOLONG : n;
}

/* The field at *p (up to a tab, or the newline for the last), unescaped
 * into out; *p moves to the next field. */
static int take_field(const char **p, const char *end, char *out, size_t outlen, bool last)
{
	const char *f = *p;
	const char *stop = memchr(f, last ? '\n' : '\t', (size_t)(end - f));
	if (!stop || monitor_field_unescape(f, (size_t)(stop - f), out, outlen))
		return -EPROTO;
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
