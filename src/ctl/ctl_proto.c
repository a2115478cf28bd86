// SPDX-License-Identifier: MIT
/* The control socket's line protocol, both ends. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/clock.h"
#include "ctl/ctl.h"

/* How long the next wait of a client may take: CTL_TIMEOUT_S, or less when
 * the call's deadline (0: none) is nearer; 0 when it has passed. */
static uint64_t wait_ms(uint64_t deadline_ns)
{
	uint64_t ms = CTL_TIMEOUT_S * 1000u;
	if (deadline_ns) {
		uint64_t now = uraid_now_ns();
		uint64_t left = deadline_ns > now ? (deadline_ns - now + 999999u) / 1000000u : 0;
		if (left < ms)
			ms = left;
	}
	return ms;
}

/* Send and receive timeouts, set before connect so that it is bounded too
 * (a Unix socket's connect waits while the server's backlog is full). */
static void set_timeouts(int fd, uint64_t ms)
{
	struct timeval tv = { .tv_sec = (time_t)(ms / 1000u),
			      .tv_usec = (suseconds_t)(ms % 1000u) * 1000 };
	if (ms == 0)
		tv.tv_usec = 1;                 /* 0 would mean no timeout at all */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* Wait until fd can be read, up to wait_ms(deadline_ns): 0, or -ETIMEDOUT. */
static int wait_readable(int fd, uint64_t deadline_ns)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int n = poll(&p, 1, (int)wait_ms(deadline_ns));
		if (n > 0)
			return 0;
		if (n == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
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

int ctl_parse_request(const char *buf, size_t len, struct ctl_request *rq)
{
	const char *nl = memchr(buf, '\n', len);

	memset(rq, 0, sizeof(*rq));
	if (!nl || (size_t)(nl - buf) >= sizeof(rq->line) || memchr(buf, 0, (size_t)(nl - buf)))
		return -EPROTO;
	memcpy(rq->line, buf, (size_t)(nl - buf));
	char *save = NULL;
	for (char *t = strtok_r(rq->line, "\t", &save); t; t = strtok_r(NULL, "\t", &save)) {
		if (rq->nfields == CTL_MAX_FIELDS)
			return -EPROTO;
		rq->field[rq->nfields++] = t;
	}
	return rq->nfields ? 0 : -EPROTO;
}

void ctl_reply(FILE *out, int code, const char *message, const char *body, size_t body_len)
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
	fwrite(head, 1, (size_t)n, out);
	if (body_len)
		fwrite(body, 1, body_len, out);
}

/*
 * The server speaks first, so that a path that is not a control socket is
 * recognised before anything is sent to it: an NBD server greets with
 * "NBDMAGIC" and would take a request line for a handshake.
 */
static int read_greeting(int fd, const char *path, uint64_t deadline_ns, char *msg,
			 size_t msglen)
{
	char buf[sizeof(CTL_GREETING)];
	size_t have = 0, want = sizeof(CTL_GREETING) - 1;

	while (have < want) {
		int w = wait_readable(fd, deadline_ns);
		if (w) {
			snprintf(msg, msglen, "%s: the server does not answer", path);
			return w;
		}
		ssize_t r = recv(fd, buf + have, want - have, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(msg, msglen, "%s: %s", path, r < 0 && (errno == EAGAIN ||
				 errno == EWOULDBLOCK) ? "the server does not answer" :
				 "closed before answering (not a control socket of uraid serve?)");
			return r < 0 ? -errno : -EPROTO;
		}
		have += (size_t)r;
		if (have >= 8 && !memcmp(buf, "NBDMAGIC", 8)) {
			snprintf(msg, msglen, "%s is an NBD export socket that no server listed in "
				 "the run directory has; give its control socket (`uraid serve` "
				 "printed it)", path);
			return -EPROTO;
		}
	}
	if (memcmp(buf, CTL_GREETING, want)) {
		snprintf(msg, msglen, "%s: not the control socket of uraid serve (it greets with "
			 "something else)", path);
		return -EPROTO;
	}
	return 0;
}

static int ctl_connect(const char *path, uint64_t deadline_ns, char *msg, size_t msglen)
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
	set_timeouts(fd, wait_ms(deadline_ns));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		if (e == EAGAIN)
			snprintf(msg, msglen, "%s: the server does not take connections now (its "
				 "queue is full); try again", path);
		else
			snprintf(msg, msglen, "%s: %s (is `uraid serve` running with this control "
				 "socket?)", path, strerror(e));
		close(fd);
		return -e;
	}
	int rc = read_greeting(fd, path, deadline_ns, msg, msglen);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int ctl_call(const char *ctl_path, const char *const *fields, unsigned nfields, FILE *out,
	     char *msg, size_t msglen)
{
	return ctl_call_limited(ctl_path, fields, nfields, out, 0, SIZE_MAX, msg, msglen);
}

int ctl_call_limited(const char *ctl_path, const char *const *fields, unsigned nfields,
		     FILE *out, uint64_t deadline_ns, size_t max_body, char *msg, size_t msglen)
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
	int fd = ctl_connect(ctl_path, deadline_ns, msg, msglen);
	if (fd < 0)
		return fd;
	/* a server that turns the client away (busy) answers and closes before
	   the request arrives: its answer is still read */
	set_timeouts(fd, wait_ms(deadline_ns));
	int sent = write_all(fd, line, len);
	/* the status line first, then the body straight through */
	size_t have = 0, body = 0;
	int code = -EPROTO, cut = 0;
	bool head_done = false;
	for (;;) {
		if ((cut = wait_readable(fd, deadline_ns)) != 0)
			break;
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
			body = rest;
			if (out && rest && body <= max_body)
				fwrite(nl + 1, 1, rest, out);
		} else {
			body += have;
			if (out && body <= max_body)
				fwrite(buf, 1, have, out);
		}
		if (head_done)
			have = 0;
		if (body > max_body) {
			cut = -EMSGSIZE;
			break;
		}
	}
	close(fd);
	if (cut) {
		snprintf(msg, msglen, "%s: %s", ctl_path, cut == -EMSGSIZE ?
			 "the answer is longer than allowed" : cut == -ETIMEDOUT ?
			 "the server did not finish answering in time" : strerror(-cut));
		return cut;
	}
	if (!head_done && sent) {
		snprintf(msg, msglen, "%s: sending the request: %s", ctl_path, strerror(-sent));
		return sent;
	}
	if (!head_done) {
		snprintf(msg, msglen, "%s: no valid answer from the server", ctl_path);
		return -EPROTO;
	}
	return code;
}
