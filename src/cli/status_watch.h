/* SPDX-License-Identifier: MIT */
/*
 * `uraid status --watch[=SECONDS] [--count=N] [ARRAY]`: a live view of served
 * arrays, polled over their control sockets. On a terminal it redraws in
 * place (ANSI: cursor home, clear to the end; no curses); otherwise it
 * writes one plain block per interval, fit for a log.
 */
#ifndef URAID_CLI_STATUS_WATCH_H
#define URAID_CLI_STATUS_WATCH_H

#include <stdbool.h>
#include <stddef.h>

#define STATUS_WATCH_DEFAULT_MS 2000u

struct status_watch_opts {
	unsigned interval_ms;           /* 0: no --watch */
	unsigned long count;            /* refreshes to draw; 0: until interrupted */
};

/*
 * Takes --watch[=SECONDS] and --count=N (or --count N) out of argv (those
 * before a "--"), so that the command's own parser sees the rest; *argc is
 * updated. Returns -1 to go on, or an exit status after a one-line message.
 */
int status_watch_opts(int *argc, char **argv, struct status_watch_opts *wo);

/* Finds an array's control socket from what the user typed (ctl_cmds.c's
 * resolve_target): 0, or an exit status after a message. */
typedef int status_resolve_fn(const char *cmd, const char *target, char *out, size_t len);

/*
 * Run the view of target (NULL: every served array) until --count refreshes
 * are drawn or SIGINT, SIGTERM or SIGHUP comes (exit 0). A named array that
 * stops being served ends it with one line and exit 1.
 */
int status_watch(const struct status_watch_opts *wo, const char *target, bool json,
		 status_resolve_fn *resolve);

#endif
