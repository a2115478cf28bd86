// SPDX-License-Identifier: MIT
/*
 * The server end of the control socket, driven by the caller's poll loop.
 * Every descriptor is non-blocking and each client has its own buffers and a
 * deadline: a client that connects and says nothing (or takes no answer)
 * costs a slot until its time is up, never the loop's attention, so signals
 * and the other clients are always served. The codes of the error lines
 * sent from here are exit statuses, as the protocol wants: 1 a failure, 2 a
 * malformed request.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "ctl/ctl.h"

#define LISTENER UINT32_MAX             /* epoll data of the listening socket */
#define ACCEPTS_PER_CALL 64             /* then the loop's other work goes first */
#define LISTEN_PAUSE_NS (100000000ull)  /* out of descriptors without a spare one */

struct ctl_client {
	int fd;                         /* -1: a free slot */
	bool answered;                  /* the request is read, out holds the answer */
	size_t in_len;
	char in[CTL_MAX_LINE];
	char *out;
	size_t out_len, out_off;
	uint64_t deadline_ns;
};

struct ctl_server {
	int listen_fd, ep;
	int spare_fd;                   /* given up to answer a client when out of descriptors */
	uint64_t listen_paused_until_ns; /* 0: the listener is polled */
	ctl_handler_fn *fn;
	void *arg;
	struct ctl_client c[CTL_MAX_CLIENTS];
};

/* What fits in the socket now; a short line to a fresh socket always does. */
static void send_now(int fd, const char *s)
{
	ssize_t r = send(fd, s, strlen(s), MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)r;
}

static void drop(struct ctl_server *cs, struct ctl_client *c)
{
	epoll_ctl(cs->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
}

int ctl_server_create(int listen_fd, ctl_handler_fn *fn, void *arg, struct ctl_server **out)
{
	struct ctl_server *cs = calloc(1, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	cs->listen_fd = listen_fd;
	cs->fn = fn;
	cs->arg = arg;
	for (unsigned i = 0; i < CTL_MAX_CLIENTS; i++)
		cs->c[i].fd = -1;
	cs->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int fl = fcntl(listen_fd, F_GETFL);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = LISTENER };
	cs->ep = epoll_create1(EPOLL_CLOEXEC);
	if (fl < 0 || fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) < 0 || cs->ep < 0 ||
	    epoll_ctl(cs->ep, EPOLL_CTL_ADD, listen_fd, &ev) < 0) {
		int rc = -errno;
		if (cs->ep >= 0)
			close(cs->ep);
		if (cs->spare_fd >= 0)
			close(cs->spare_fd);
		free(cs);
		return rc;
	}
	*out = cs;
	return 0;
}

void ctl_server_destroy(struct ctl_server *cs)
{
	if (!cs)
		return;
	for (unsigned i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *c = &cs->c[i];
		if (c->fd < 0)
			continue;
		/* an answer not yet taken (uraid stop's, say): what fits goes out */
		if (c->answered && c->out_off < c->out_len) {
			ssize_t r = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
			(void)r;
		}
		drop(cs, c);
	}
	close(cs->ep);
	if (cs->spare_fd >= 0)
		close(cs->spare_fd);
	free(cs);
}

int ctl_server_fd(const struct ctl_server *cs)
{
	return cs->ep;
}

int ctl_server_timeout_ms(const struct ctl_server *cs)
{
	uint64_t now = uraid_now_ns(), first = UINT64_MAX;
	for (unsigned i = 0; i < CTL_MAX_CLIENTS; i++)
		if (cs->c[i].fd >= 0 && cs->c[i].deadline_ns < first)
			first = cs->c[i].deadline_ns;
	if (cs->listen_paused_until_ns && cs->listen_paused_until_ns < first)
		first = cs->listen_paused_until_ns;
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

/* Stop polling the listener for a moment (out of descriptors and no spare
 * one to answer a client with: it would stay readable, a busy loop). */
static void pause_listener(struct ctl_server *cs)
{
	epoll_ctl(cs->ep, EPOLL_CTL_DEL, cs->listen_fd, NULL);
	cs->listen_paused_until_ns = uraid_now_ns() + LISTEN_PAUSE_NS;
}

static void resume_listener(struct ctl_server *cs)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = LISTENER };
	if (epoll_ctl(cs->ep, EPOLL_CTL_ADD, cs->listen_fd, &ev) == 0 || errno == EEXIST)
		cs->listen_paused_until_ns = 0;
	else
		cs->listen_paused_until_ns = uraid_now_ns() + LISTEN_PAUSE_NS;
}

static void accept_all(struct ctl_server *cs)
{
	for (unsigned n = 0; n < ACCEPTS_PER_CALL; n++) {
		int fd = accept4(cs->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/* out of descriptors: the client would wait in the queue and the
			   listener stay readable (a busy loop); the spare one lets it
			   be accepted and told, then is taken again; without one the
			   listener rests a moment */
			if (cs->spare_fd < 0) {
				pause_listener(cs);
				return;
			}
			close(cs->spare_fd);
			fd = accept4(cs->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd >= 0) {
				send_now(fd, CTL_GREETING "error 1 the server is out of file "
					 "descriptors; try again\n");
				close(fd);
			}
			cs->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (cs->spare_fd < 0)
				pause_listener(cs);
			return;         /* level-triggered: the next poll takes the next one */
		}
		if (fd < 0)
			return;         /* EAGAIN: no more; anything else: the next poll retries */
		struct ctl_client *c = NULL;
		for (unsigned i = 0; i < CTL_MAX_CLIENTS && !c; i++)
			if (cs->c[i].fd < 0)
				c = &cs->c[i];
		struct epoll_event ev = { .events = EPOLLIN };
		if (c)
			ev.data.u32 = (uint32_t)(c - cs->c);
		if (!c || epoll_ctl(cs->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			send_now(fd, CTL_GREETING "error 1 " CTL_BUSY "\n");
			close(fd);
			continue;
		}
		c->fd = fd;
		c->answered = false;
		c->in_len = c->out_len = c->out_off = 0;
		c->deadline_ns = uraid_now_ns() + CTL_TIMEOUT_S * 1000000000ull;
		send_now(fd, CTL_GREETING);
	}
}

/* The request line is complete (or cannot be): build the answer. */
static void answer(struct ctl_server *cs, struct ctl_client *c)
{
	struct ctl_request *rq = malloc(sizeof(*rq));
	FILE *f = open_memstream(&c->out, &c->out_len);

	if (!rq || !f) {
		if (f)
			fclose(f);
		free(rq);
		send_now(c->fd, "error 1 out of memory\n");
		drop(cs, c);
		return;
	}
	if (ctl_parse_request(c->in, c->in_len, rq) != 0)
		ctl_reply(f, CTL_CODE_USAGE, "malformed control request", NULL, 0);
	else
		cs->fn(cs->arg, rq, f);
	fclose(f);
	free(rq);
	c->answered = true;
	struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = (uint32_t)(c - cs->c) };
	epoll_ctl(cs->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void read_some(struct ctl_server *cs, struct ctl_client *c)
{
	ssize_t r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (r <= 0) {
		drop(cs, c);            /* gone before asking anything */
		return;
	}
	bool line = memchr(c->in + c->in_len, '\n', (size_t)r) != NULL;
	c->in_len += (size_t)r;
	if (line || c->in_len == sizeof(c->in))
		answer(cs, c);          /* too long without a newline: refused there */
}

/* Returns with the client dropped once its answer is all out. */
static void write_some(struct ctl_server *cs, struct ctl_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t r = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0)
			break;          /* the client left */
		c->out_off += (size_t)r;
	}
	drop(cs, c);
}

void ctl_server_work(struct ctl_server *cs)
{
	struct epoll_event ev[CTL_MAX_CLIENTS + 1];
	int n = epoll_wait(cs->ep, ev, CTL_MAX_CLIENTS + 1, 0);

	for (int i = 0; i < n; i++) {
		if (ev[i].data.u32 == LISTENER) {
			accept_all(cs);
			continue;
		}
		struct ctl_client *c = &cs->c[ev[i].data.u32];
		if (c->fd < 0)
			continue;
		if (!c->answered)
			read_some(cs, c);
		/* answered just now or before: most answers go out at once */
		if (c->fd >= 0 && c->answered)
			write_some(cs, c);
	}
	uint64_t now = uraid_now_ns();
	if (cs->listen_paused_until_ns && cs->listen_paused_until_ns <= now)
		resume_listener(cs);
	for (unsigned i = 0; i < CTL_MAX_CLIENTS; i++) {
		struct ctl_client *c = &cs->c[i];
		if (c->fd < 0 || c->deadline_ns > now)
			continue;
		if (!c->answered)
			send_now(c->fd, "error 2 no complete request line in time\n");
		drop(cs, c);
	}
}
