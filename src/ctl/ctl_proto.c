// SPDX-License-Identifier: MIT
/* The control socket's line protocol, both ends. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "ctl/ctl.h"

#define CTL_TIMEOUT_S 10

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = CTL_TIMEOUT_S };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int ctl_read_request(int fd, struct ctl_request *rq)
{
	size_t have = 0;

	set_timeouts(fd);
	memset(rq, 0, sizeof(*rq));
	for (;;) {
		if (have == sizeof(rq->line) - 1)
			return -EPROTO;
		ssize_t r = recv(fd, rq->line + have, sizeof(rq->line) - 1 - have, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EPROTO;
		char *nl = memchr(rq->line + have, '\n', (size_t)r);
		have += (size_t)r;
		if (nl) {
			*nl = 0;
			break;
		}
	}
	if (strlen(rq->line) != strcspn(rq->line, "\n"))
		return -EPROTO;
	char *save = NULL;
	for (char *t = strtok_r(rq->line, "\t", &save); t; t = strtok_r(NULL, "\t", &save)) {
		if (rq->nfields == CTL_MAX_FIELDS)
			return -EPROTO;
		rq->field[rq->nfields++] = t;
	}
	return rq->nfields ? 0 : -EPROTO;
}

int ctl_reply(int fd, int code, const char *message, const char *body, size_t body_len)
{
	char head[512];
	int n;

	if (code == 0)
		n = snprintf(head, sizeof(head), "ok\n");
	else
		n = snprintf(head, sizeof(head), "error %d %s\n", code, message ? message : "");
	if (n < 0 || (size_t)n >= sizeof(head)) {   /* a long message: cut, keep the newline */
		n = sizeof(head) - 1;
		head[n - 1] = '\n';
	}
	int rc = write_all(fd, head, (size_t)n);
	if (!rc && body_len)
		rc = write_all(fd, body, body_len);
	return rc;
}

static int ctl_connect(const char *path, char *msg, size_t msglen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(msg, msglen, "%s: path too long for a socket", path);
		return -ENAMETOOLONG;
	}
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(msg, msglen, "socket: %s", strerror(errno));
		return -errno;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		snprintf(msg, msglen, "%s: %s (is `uraid serve` running with this control "
			 "socket?)", path, strerror(e));
		close(fd);
		return -e;
	}
	set_timeouts(fd);
	return fd;
}

int ctl_call(const char *ctl_path, const char *const *fields, unsigned nfields, FILE *out,
	     char *msg, size_t msglen)
{
	char line[CTL_MAX_LINE], buf[8192];
	size_t len = 0;

	msg[0] = 0;
	for (unsigned i = 0; i < nfields; i++) {
		size_t fl = strlen(fields[i]);
		if (strpbrk(fields[i], "\t\n") || len + fl + 2 > sizeof(line)) {
			snprintf(msg, msglen, "'%s': tabs, newlines and very long arguments cannot be "
				 "sent", fields[i]);
			return -EINVAL;
		}
		memcpy(line + len, fields[i], fl);
		len += fl;
		line[len++] = i + 1 < nfields ? '\t' : '\n';
	}
	int fd = ctl_connect(ctl_path, msg, msglen);
	if (fd < 0)
		return fd;
	int rc = write_all(fd, line, len);
	if (rc) {
		snprintf(msg, msglen, "%s: sending the request: %s", ctl_path, strerror(-rc));
		close(fd);
		return rc;
	}
	/* the status line first, then the body straight through */
	size_t have = 0;
	int code = -EPROTO;
	bool head_done = false;
	for (;;) {
		ssize_t r = recv(fd, buf + have, sizeof(buf) - have, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		if (!head_done) {
			char *nl = memchr(buf, '\n', have);
			if (!nl) {
				if (have == sizeof(buf))
					break;
				continue;
			}
			*nl = 0;
			if (!strcmp(buf, "ok")) {
				code = 0;
			} else if (sscanf(buf, "error %d", &code) == 1) {
				const char *m = strchr(buf + 6, ' ');
				snprintf(msg, msglen, "%s", m ? m + 1 : "");
			} else {
				break;
			}
			head_done = true;
			size_t rest = have - (size_t)(nl + 1 - buf);
			if (out && rest)
				fwrite(nl + 1, 1, rest, out);
		} else if (out) {
			fwrite(buf, 1, have, out);
		}
		if (head_done)
			have = 0;
	}
	close(fd);
	if (!head_done) {
		snprintf(msg, msglen, "%s: no valid answer from the server", ctl_path);
		return -EPROTO;
	}
	return code;
}
