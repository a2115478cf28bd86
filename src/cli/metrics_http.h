/* SPDX-License-Identifier: MIT */
/*
 * A small HTTP/1.x server for Prometheus' scrapes, driven by the caller's
 * poll loop as the control server is (ctl/ctl.h): GET or HEAD of /metrics
 * is answered with what the body function writes, in Prometheus' text
 * format (version 0.0.4); everything else gets its error status. One
 * request per connection (Connection: close). Every client has limits: at
 * most METRICS_HTTP_MAX_CLIENTS at once (the next are answered 503), a
 * request head of at most METRICS_HTTP_MAX_HEAD bytes (then 431), sent
 * within METRICS_HTTP_HEAD_S seconds (then 408), and the whole exchange
 * within METRICS_HTTP_TOTAL_S seconds (then it is cut). Nothing blocks.
 *
 * Poll metrics_http_fd() for POLLIN with metrics_http_timeout_ms() as the
 * timeout (or less), then call metrics_http_work().
 */
#ifndef URAID_CLI_METRICS_HTTP_H
#define URAID_CLI_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define METRICS_HTTP_MAX_CLIENTS 8
#define METRICS_HTTP_MAX_HEAD    8192
#define METRICS_HTTP_HEAD_S      5
#define METRICS_HTTP_TOTAL_S     15
#define METRICS_CONTENT_TYPE     "text/plain; version=0.0.4; charset=utf-8"

/* Writes the exposition text into out; 0, or -errno (answered 500). */
typedef int metrics_body_fn(void *arg, FILE *out);

struct metrics_http;

/* fn's text in a buffer of its own (*text, *len; the caller frees it):
 * 0, or fn's -errno, or -ENOMEM. */
int metrics_render(metrics_body_fn *fn, void *arg, char **text, size_t *len);

/* Is hostport of the form HOST:PORT or [V6]:PORT, PORT 0..65535? (The
 * host is looked up only when listening.) When not, the reason in err
 * ("--metrics=...: expected ..."). */
bool metrics_http_address_ok(const char *hostport, char *err, size_t errlen);
/* Listen on HOST:PORT, [V6]:PORT (port 0: a free one); the descriptor or
 * -errno with the reason in err. */
int metrics_http_listen(const char *hostport, char *err, size_t errlen);
/* listen_fd is taken over (closed by destroy); 0 or -errno. */
int metrics_http_create(int listen_fd, metrics_body_fn *fn, void *arg,
			struct metrics_http **out);
void metrics_http_destroy(struct metrics_http *h);
int metrics_http_fd(const struct metrics_http *h);
/* The port listened on (after port 0). */
int metrics_http_port(const struct metrics_http *h);
/* Milliseconds until a client's time is up; -1 when there is none. */
int metrics_http_timeout_ms(const struct metrics_http *h);
void metrics_http_work(struct metrics_http *h);

#endif
