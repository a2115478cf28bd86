// SPDX-License-Identifier: MIT
/*
 * The HTTP server of `--metrics` (metrics_http.h). Every descriptor is
 * non-blocking and each client has a slot with its own buffers and
 * deadlines, as in ctl/ctl_server.c: a client that sends slowly, too much
 * or garbage costs its slot until it is answered or its time is up, never
 * the loop's attention. Only what a scraper needs is understood: a request
 * line "METHOD /metrics[?...] HTTP/1.x", header lines (read, checked for
 * form, otherwise ignored) and the empty line; any request body is not
 * read. After the answer the socket is shut for writing and what the
 * client still sends is read and dropped for a moment, so that unread
 * bytes do not make the kernel reset the connection before the client has
 * read the answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/metrics_http.h"
#include "common/clock.h"
#include "nbd/server.h"

#define LISTENER UINT32_MAX             /* epoll data of the listening socket */
#define LINGER_NS (1000000000ull)       /* reading what follows an answer */
#define NS_PER_S 1000000000ull
#define ACCEPTS_PER_CALL 64             /* then the loop's other work goes first */
#define LISTEN_PAUSE_NS (100000000ull)  /* out of descriptors without a spare one */

enum client_state { FREE, READING, SENDING, LINGERING };

struct http_client {
	int fd;
	enum client_state state;
	size_t in_len;
	char in[METRICS_HTTP_MAX_HEAD];
	char *out;
	size_t out_len, out_off;
	uint64_t head_deadline_ns, deadline_ns;
};

struct metrics_http {
	int listen_fd, ep, port;
	int spare_fd;                   /* given up to refuse a client when out of descriptors */
	uint64_t listen_paused_until_ns; /* 0: the listener is polled */
	metrics_body_fn *fn;
	void *arg;
	struct http_client c[METRICS_HTTP_MAX_CLIENTS];
};

bool metrics_http_address_ok(const char *hostport, char *err, size_t errlen)
{
	const char *colon = strrchr(hostport, ':');
	bool ok = colon && colon != hostport && colon[1] && strlen(colon + 1) <= 5;
	for (const char *d = colon ? colon + 1 : ""; ok && *d; d++)
		ok = *d >= '0' && *d <= '9';
	if (ok && atoi(colon + 1) <= 65535)
		return true;
	snprintf(err, errlen, "--metrics=%s: expected HOST:PORT, PORT 0..65535 "
		 "(e.g. 127.0.0.1:9617)", hostport);
	return false;
}

int metrics_http_listen(const char *hostport, char *err, size_t errlen)
{
	char e[512];
	if (!metrics_http_address_ok(hostport, err, errlen))
		return -EINVAL;
	int fd = nbd_listen_tcp(hostport, e, sizeof(e));

	if (fd < 0) {
		/* its reasons name --listen */
		const char *rest = strncmp(e, "--listen", 8) ? e : e + 8;
		snprintf(err, errlen, "--metrics%s%s", rest == e ? ": " : "", rest);
	}
	return fd;
}

/* A short answer to a fresh socket: it fits in the send buffer. */
static void send_now(int fd, const char *s, size_t len)
{
	ssize_t r = send(fd, s, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	(void)r;
}

static void drop(struct metrics_http *h, struct http_client *c)
{
	epoll_ctl(h->ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->state = FREE;
}

int metrics_http_create(int listen_fd, metrics_body_fn *fn, void *arg,
			struct metrics_http **out)
{
	struct metrics_http *h = calloc(1, sizeof(*h));
	if (!h) {
		close(listen_fd);
		return -ENOMEM;
	}
	h->listen_fd = listen_fd;
	h->fn = fn;
	h->arg = arg;
	h->port = nbd_listen_port(listen_fd);
	h->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	for (unsigned i = 0; i < METRICS_HTTP_MAX_CLIENTS; i++)
		h->c[i].fd = -1;
	int fl = fcntl(listen_fd, F_GETFL);
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = LISTENER };
	h->ep = epoll_create1(EPOLL_CLOEXEC);
	if (fl < 0 || fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) < 0 || h->ep < 0 ||
	    epoll_ctl(h->ep, EPOLL_CTL_ADD, listen_fd, &ev) < 0) {
		int rc = -errno;
		if (h->ep >= 0)
			close(h->ep);
		if (h->spare_fd >= 0)
			close(h->spare_fd);
		close(listen_fd);
		free(h);
		return rc;
	}
	*out = h;
	return 0;
}

void metrics_http_destroy(struct metrics_http *h)
{
	if (!h)
		return;
	for (unsigned i = 0; i < METRICS_HTTP_MAX_CLIENTS; i++)
		if (h->c[i].fd >= 0)
			drop(h, &h->c[i]);
	close(h->ep);
	close(h->listen_fd);
	if (h->spare_fd >= 0)
		close(h->spare_fd);
	free(h);
}

int metrics_http_fd(const struct metrics_http *h)
{
	return h->ep;
}

int metrics_http_port(const struct metrics_http *h)
{
	return h->port;
}

static uint64_t next_deadline(const struct http_client *c)
{
	return c->state == READING && c->head_deadline_ns < c->deadline_ns ? c->head_deadline_ns
									   : c->deadline_ns;
}

int metrics_http_timeout_ms(const struct metrics_http *h)
{
	uint64_t now = uraid_now_ns(), first = UINT64_MAX;
	for (unsigned i = 0; i < METRICS_HTTP_MAX_CLIENTS; i++)
		if (h->c[i].fd >= 0 && next_deadline(&h->c[i]) < first)
			first = next_deadline(&h->c[i]);
	if (h->listen_paused_until_ns && h->listen_paused_until_ns < first)
		first = h->listen_paused_until_ns;
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 : (int)((first - now + 999999) / 1000000);
}

/* An error answer with a one-line body; extra: more header lines ("X: y\r\n").
 * Its length, at most len - 1 (cut if buf is too small). */
static size_t error_text(char *buf, size_t len, int status, const char *reason,
			 const char *extra)
{
	int n = snprintf(buf, len, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\n%sConnection: close\r\n\r\n%s\n", status, reason,
			 strlen(reason) + 1, extra, reason);
	if (n < 0 || len == 0)
		return 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}

/* Stop polling the listener for a moment (out of descriptors and no spare
 * one to refuse a client with: it would stay readable, a busy loop). */
static void pause_listener(struct metrics_http *h)
{
	epoll_ctl(h->ep, EPOLL_CTL_DEL, h->listen_fd, NULL);
	h->listen_paused_until_ns = uraid_now_ns() + LISTEN_PAUSE_NS;
}

static void resume_listener(struct metrics_http *h)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = LISTENER };
	if (epoll_ctl(h->ep, EPOLL_CTL_ADD, h->listen_fd, &ev) == 0 || errno == EEXIST)
		h->listen_paused_until_ns = 0;
	else
		h->listen_paused_until_ns = uraid_now_ns() + LISTEN_PAUSE_NS;
}

/* A client turned away: its answer, then what it sent already read (unread
 * bytes would make the close a reset, which may lose the answer). */
static void refuse(int fd, const char *text, size_t len)
{
	char sink[1024];

	send_now(fd, text, len);
	shutdown(fd, SHUT_WR);
	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
	close(fd);
}

static void accept_all(struct metrics_http *h)
{
	for (unsigned n = 0; n < ACCEPTS_PER_CALL; n++) {
		int fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/* out of descriptors: the client would stay queued and the
			   listener readable (a busy loop); the spare one lets it be
			   accepted and closed, then is taken again; without one the
			   listener rests a moment */
			if (h->spare_fd < 0) {
				pause_listener(h);
				return;
			}
			close(h->spare_fd);
			fd = accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
			if (fd >= 0)
				close(fd);
			h->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (h->spare_fd < 0)
				pause_listener(h);
			return;
		}
		if (fd < 0)
			return;         /* EAGAIN: no more; anything else: the next poll retries */
		struct http_client *c = NULL;
		for (unsigned i = 0; i < METRICS_HTTP_MAX_CLIENTS && !c; i++)
			if (h->c[i].fd < 0)
				c = &h->c[i];
		struct epoll_event ev = { .events = EPOLLIN };
		if (c)
			ev.data.u32 = (uint32_t)(c - h->c);
		if (!c || epoll_ctl(h->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			char t[256];
			refuse(fd, t, error_text(t, sizeof(t), 503, "Service Unavailable",
						 "Retry-After: 1\r\n"));
			continue;
		}
		uint64_t now = uraid_now_ns();
		c->fd = fd;
		c->state = READING;
		c->in_len = c->out_len = c->out_off = 0;
		c->head_deadline_ns = now + METRICS_HTTP_HEAD_S * NS_PER_S;
		c->deadline_ns = now + METRICS_HTTP_TOTAL_S * NS_PER_S;
	}
}

/* Set c's answer and start sending it. */
static void respond(struct metrics_http *h, struct http_client *c, char *text, size_t len)
{
	free(c->out);
	c->out = text;
	c->out_len = len;
	c->out_off = 0;
	c->state = SENDING;
	struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = (uint32_t)(c - h->c) };
	epoll_ctl(h->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void respond_error(struct metrics_http *h, struct http_client *c, int status,
			  const char *reason, const char *extra)
{
	char *t = malloc(512);
	if (!t) {
		drop(h, c);
		return;
	}
	respond(h, c, t, error_text(t, 512, status, reason, extra));
}

/* RFC 9110's token characters (a method is one). */
static bool tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

int metrics_render(metrics_body_fn *fn, void *arg, char **text, size_t *len)
{
	*text = NULL;
	*len = 0;
	FILE *f = open_memstream(text, len);
	int rc = f ? fn(arg, f) : -ENOMEM;
	if (f && fclose(f) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc) {
		free(*text);
		*text = NULL;
		*len = 0;
	}
	return rc;
}

/* The answer to METHOD /metrics. */
static void respond_metrics(struct metrics_http *h, struct http_client *c, bool head)
{
	char *body, *text = NULL;
	size_t body_len, text_len = 0;
	int rc = metrics_render(h->fn, h->arg, &body, &body_len);
	FILE *t = rc == 0 ? open_memstream(&text, &text_len) : NULL;
	if (!t) {
		free(body);
		respond_error(h, c, 500, "Internal Server Error", "");
		return;
	}
	fprintf(t, "HTTP/1.1 200 OK\r\nContent-Type: " METRICS_CONTENT_TYPE "\r\n"
		"Content-Length: %zu\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
		body_len);
	if (!head)
		fwrite(body, 1, body_len, t);
	free(body);
	if (fclose(t) != 0) {
		free(text);
		respond_error(h, c, 500, "Internal Server Error", "");
		return;
	}
	respond(h, c, text, text_len);
}

/*
 * The head is complete (end is where its empty line starts): check its
 * form, then answer. Line ends are CRLF or, tolerated, LF.
 */
static void answer(struct metrics_http *h, struct http_client *c, size_t end)
{
	char *p = c->in, *stop = c->in + end;
	char *eol = memchr(p, '\n', (size_t)(stop - p));
	if (!eol)
		eol = stop;
	/* request line: METHOD SP TARGET SP HTTP/1.x */
	char *line_end = eol > p && eol[-1] == '\r' ? eol - 1 : eol;
	char *sp1 = memchr(p, ' ', (size_t)(line_end - p));
	char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(line_end - sp1 - 1)) : NULL;
	bool ok = sp1 && sp2 && sp1 > p && sp2 > sp1 + 1 && sp1[1] == '/' &&
		  line_end - sp2 - 1 == 8 && !memcmp(sp2 + 1, "HTTP/1.", 7) &&
		  (sp2[8] == '0' || sp2[8] == '1');
	for (char *q = p; ok && q < sp1; q++)
		ok = tchar(*q);
	for (char *q = sp1 ? sp1 + 1 : p; ok && q < sp2; q++)
		ok = (unsigned char)*q > 0x20 && *q != 0x7f;
	/* header lines: NAME ":" VALUE, no control characters but tab */
	for (char *q = eol + 1; ok && q < stop;) {
		char *e = memchr(q, '\n', (size_t)(stop - q));
		char *le = e ? e : stop;
		if (le > q && le[-1] == '\r')
			le--;
		char *colon = memchr(q, ':', (size_t)(le - q));
		ok = colon && colon > q;
		for (char *n = q; ok && n < colon; n++)
			ok = tchar(*n);
		for (char *v = colon ? colon + 1 : q; ok && v < le; v++)
			ok = *v == '\t' || ((unsigned char)*v >= 0x20 && *v != 0x7f);
		q = e ? e + 1 : stop;
	}
	if (!ok) {
		respond_error(h, c, 400, "Bad Request", "");
		return;
	}
	size_t path_len = (size_t)(sp2 - sp1 - 1);
	char *qmark = memchr(sp1 + 1, '?', path_len);
	if (qmark)
		path_len = (size_t)(qmark - sp1 - 1);
	if (path_len != 8 || memcmp(sp1 + 1, "/metrics", 8)) {
		respond_error(h, c, 404, "Not Found", "");
		return;
	}
	size_t mlen = (size_t)(sp1 - p);
	bool get = mlen == 3 && !memcmp(p, "GET", 3), head = mlen == 4 && !memcmp(p, "HEAD", 4);
	if (!get && !head) {
		respond_error(h, c, 405, "Method Not Allowed", "Allow: GET, HEAD\r\n");
		return;
	}
	respond_metrics(h, c, head);
}

/* Where the head's empty line starts, or 0 while there is none in the
 * first len bytes. An empty line before the request line is garbage. */
static size_t head_end(const char *in, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (in[i] != '\n')
			continue;
		/* LF LF or LF CR LF ends it */
		if (i + 1 < len && in[i + 1] == '\n')
			return i + 1;
		if (i + 2 < len && in[i + 1] == '\r' && in[i + 2] == '\n')
			return i + 1;
	}
	return 0;
}

static void read_some(struct metrics_http *h, struct http_client *c)
{
	ssize_t r = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, 0);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (r <= 0) {
		drop(h, c);            /* gone before asking anything */
		return;
	}
	size_t from = c->in_len > 2 ? c->in_len - 2 : 0;   /* an end split across reads */
	c->in_len += (size_t)r;
	if (memchr(c->in, 0, c->in_len)) {
		respond_error(h, c, 400, "Bad Request", "");
		return;
	}
	size_t end = head_end(c->in + from, c->in_len - from);
	if (end)
		answer(h, c, from + end);
	else if (c->in_len == sizeof(c->in))
		respond_error(h, c, 431, "Request Header Fields Too Large", "");
}

/* Sent: shut for writing and read what still comes for a moment. */
static void write_some(struct metrics_http *h, struct http_client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t r = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (r <= 0) {
			drop(h, c);     /* the client left */
			return;
		}
		c->out_off += (size_t)r;
	}
	shutdown(c->fd, SHUT_WR);
	free(c->out);
	c->out = NULL;
	c->state = LINGERING;
	uint64_t linger = uraid_now_ns() + LINGER_NS;
	if (linger < c->deadline_ns)
		c->deadline_ns = linger;
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)(c - h->c) };
	epoll_ctl(h->ep, EPOLL_CTL_MOD, c->fd, &ev);
}

static void linger_some(struct metrics_http *h, struct http_client *c)
{
	char sink[4096];
	ssize_t r = recv(c->fd, sink, sizeof(sink), 0);
	if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
		drop(h, c);
}

void metrics_http_work(struct metrics_http *h)
{
	struct epoll_event ev[METRICS_HTTP_MAX_CLIENTS + 1];
	int n = epoll_wait(h->ep, ev, METRICS_HTTP_MAX_CLIENTS + 1, 0);

	for (int i = 0; i < n; i++) {
		if (ev[i].data.u32 == LISTENER) {
			accept_all(h);
			continue;
		}
		struct http_client *c = &h->c[ev[i].data.u32];
		if (c->fd < 0)
			continue;
		if (c->state == READING)
			read_some(h, c);
		else if (c->state == LINGERING)
			linger_some(h, c);
		/* answered just now or before: most answers go out at once */
		if (c->fd >= 0 && c->state == SENDING)
			write_some(h, c);
	}
	uint64_t now = uraid_now_ns();
	if (h->listen_paused_until_ns && h->listen_paused_until_ns <= now)
		resume_listener(h);
	for (unsigned i = 0; i < METRICS_HTTP_MAX_CLIENTS; i++) {
		struct http_client *c = &h->c[i];
		if (c->fd < 0)
			continue;
		if (c->state == READING && c->head_deadline_ns <= now) {
			respond_error(h, c, 408, "Request Timeout", "");
			if (c->fd >= 0)
				write_some(h, c);
		} else if (c->state != READING && c->deadline_ns <= now) {
			drop(h, c);
		}
	}
}
