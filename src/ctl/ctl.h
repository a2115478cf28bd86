/* SPDX-License-Identifier: MIT */
/*
 * The control socket of a served array, and the registry that lets
 * `uraid status` find every array served on this machine.
 *
 * Protocol (a Unix stream socket, mode 0600): the server greets with
 * CTL_GREETING; the client sends one request line, fields separated by tabs
 * ("fail\t/dev/sdb\tforce\n"); the server answers with a status line, "ok\n"
 * or "error CODE MESSAGE\n" (CODE: the exit status the command should end
 * with), then a body of any length, and closes the connection. A client that
 * has not sent its line within CTL_TIMEOUT_S is dropped.
 */
#ifndef URAID_CTL_CTL_H
#define URAID_CTL_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CTL_MAX_LINE   4096
#define CTL_MAX_FIELDS 4
#define CTL_GREETING   "uraid-ctl 1\n"
#define CTL_TIMEOUT_S  10
/* Clients served at once; more are answered "error 1 " CTL_BUSY. */
#define CTL_MAX_CLIENTS 16
#define CTL_BUSY        "the server is busy with other control clients; try again"
/* The codes of error lines: exit statuses, as the protocol wants. */
#define CTL_CODE_FAIL   1       /* the request failed or was refused */
#define CTL_CODE_USAGE  2       /* the request is malformed or incomplete */

/* A request as the server reads it. */
struct ctl_request {
	char line[CTL_MAX_LINE];
	unsigned nfields;
	char *field[CTL_MAX_FIELDS];    /* field[0] is the command */
};

/* Server side: parse the first line of buf (len bytes, ending in a newline)
 * into rq; 0 or -EPROTO (no newline, too long, a NUL, too many fields). */
int ctl_parse_request(const char *buf, size_t len, struct ctl_request *rq);
/* Write the status line and the body to out (the answer being built). */
void ctl_reply(FILE *out, int code, const char *message, const char *body, size_t body_len);

/*
 * The server end for a poll loop (ctl_server.c): accepts clients on a
 * listening socket, gathers each request line without blocking, has fn write
 * the answer into memory and sends it as the client takes it, so that no
 * client holds up the loop or the others. Poll ctl_server_fd() for POLLIN,
 * with ctl_server_timeout_ms() as the timeout, then call ctl_server_work().
 */
struct ctl_server;
typedef void ctl_handler_fn(void *arg, const struct ctl_request *rq, FILE *out);
/* listen_fd stays the caller's (made non-blocking); 0 or -errno. */
int ctl_server_create(int listen_fd, ctl_handler_fn *fn, void *arg, struct ctl_server **out);
/* Sends what can go out without waiting, then closes the clients. */
void ctl_server_destroy(struct ctl_server *cs);
int ctl_server_fd(const struct ctl_server *cs);
/* Milliseconds until a client's time is up; -1 when there is none. */
int ctl_server_timeout_ms(const struct ctl_server *cs);
/* Accept, read, answer, send, drop the clients whose time is up: never waits. */
void ctl_server_work(struct ctl_server *cs);

/*
 * The verbs a server answers, as a table that ctl_dispatch looks the
 * request's first field up in (ctl_verbs.c); the table ends with a NULL
 * name. A handler answers with one ctl_reply and may use the fields after
 * the verb; what it needs from its server comes through arg.
 */
/* Changes the array or the server; the others only read (what a read-only
 * client, such as a monitor, could be limited to). */
#define CTL_VERB_CHANGES 1u
struct ctl_verb {
	const char *name;
	ctl_handler_fn *fn;
	/* Not NULL: field[1] (a path) is required; a request without it is
	 * answered "error 2 <arg_missing>" and fn is not called. */
	const char *arg_missing;
	unsigned flags;                 /* CTL_VERB_* */
	const char *help;               /* its fields and what it does, one line */
};
/* Answer rq with its verb's handler (arg passed on); an unknown verb is
 * answered "error 2 unknown control request 'VERB'". */
void ctl_dispatch(const struct ctl_verb *verbs, void *arg, const struct ctl_request *rq,
		  FILE *out);

/* Client side: send the fields, copy the body to out; returns the code
 * (0 for ok) and puts the error message in msg; -errno when the server
 * cannot be reached (msg says why). */
int ctl_call(const char *ctl_path, const char *const *fields, unsigned nfields, FILE *out,
	     char *msg, size_t msglen);
/* The same within limits: done by deadline_ns (uraid_now_ns' clock; 0: each
 * wait up to CTL_TIMEOUT_S, as ctl_call), connecting included, else
 * -ETIMEDOUT; a body longer than max_body is cut off with -EMSGSIZE (out
 * then holds at most max_body bytes of it). */
int ctl_call_limited(const char *ctl_path, const char *const *fields, unsigned nfields,
		     FILE *out, uint64_t deadline_ns, size_t max_body, char *msg, size_t msglen);

/* ---- registry: one file per served array, named by its server's pid, holding its sockets' paths ---- */

/* $URAID_RUN_DIR, or /run/uraid for root, else $XDG_RUNTIME_DIR/uraid or
 * /tmp/uraid-UID: its path in buf, created (0700) when missing. It must be
 * a directory (not a link) of this user's, closed to group and others, or it
 * is refused (another user could swap the sockets in it). Returns a
 * descriptor of it (the caller closes it), or -errno with the reason in err. */
int ctl_run_dir(char *buf, size_t len, char *err, size_t errlen);
/* export_path: the export's Unix socket, NULL for TCP. */
int ctl_register(const char *ctl_path, const char *export_path, char *err, size_t errlen);
void ctl_unregister(void);
/* The same for array idx of a server serving several (0: as ctl_register). */
int ctl_register_n(unsigned idx, const char *ctl_path, const char *export_path, char *err,
		   size_t errlen);
void ctl_unregister_n(unsigned idx);
/* Call fn for each registered control socket that answers; entries of
 * servers that are gone are removed. Returns how many answered, or -errno
 * when the run directory cannot be used (the reason in err). */
int ctl_for_each(int (*fn)(const char *ctl_path, void *arg), void *arg, char *err, size_t errlen);
/* The control socket of the listed server whose control socket or export
 * socket is the file at path (any spelling: the same device and inode), in
 * ctl; returns how many servers have it (0: none, ctl untouched). */
int ctl_find_socket(const char *path, char *ctl, size_t len);

#endif
