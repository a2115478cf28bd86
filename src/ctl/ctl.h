/* SPDX-License-Identifier: MIT */
/*
 * The control socket of a served array, and the registry that lets
 * `uraid status` find every array served on this machine.
 *
 * Protocol (a Unix stream socket, mode 0600): the client sends one request
 * line, fields separated by tabs ("fail\t/dev/sdb\tforce\n"); the server
 * answers with a status line, "ok\n" or "error CODE MESSAGE\n" (CODE: the
 * exit status the command should end with), then a body of any length, and
 * closes the connection.
 */
#ifndef URAID_CTL_CTL_H
#define URAID_CTL_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CTL_MAX_LINE   4096
#define CTL_MAX_FIELDS 4

/* A request as the server reads it. */
struct ctl_request {
	char line[CTL_MAX_LINE];
	unsigned nfields;
	char *field[CTL_MAX_FIELDS];    /* field[0] is the command */
};

/* Server side: read one request from a connected client (bounded wait);
 * 0 or -errno (-EPROTO: no complete line, too long, or too many fields). */
int ctl_read_request(int fd, struct ctl_request *rq);
/* Send the status line and the body, then the caller closes fd. */
int ctl_reply(int fd, int code, const char *message, const char *body, size_t body_len);

/* Client side: send the fields, copy the body to out; returns the code
 * (0 for ok) and puts the error message in msg; -errno when the server
 * cannot be reached (msg says why). */
int ctl_call(const char *ctl_path, const char *const *fields, unsigned nfields, FILE *out,
	     char *msg, size_t msglen);

/* ---- registry: one file per server, named by its pid, holding the control path ---- */

/* $URAID_RUN_DIR, or /run/uraid for root, else $XDG_RUNTIME_DIR/uraid or
 * /tmp/uraid-UID. Created (0700) when missing. */
int ctl_run_dir(char *buf, size_t len);
int ctl_register(const char *ctl_path, char *err, size_t errlen);
void ctl_unregister(void);
/* Call fn for each registered control socket that answers; entries of
 * servers that are gone are removed. Returns how many answered. */
int ctl_for_each(int (*fn)(const char *ctl_path, void *arg), void *arg);

#endif
