/* SPDX-License-Identifier: MIT */
/*
 * uraid monitor (as mdadm --monitor): its context, shared by monitor.c (the
 * command and its loop), monitor_state.c (what each served array looks
 * like, spare groups) and monitor_report.c (syslog or stderr, the program,
 * mail).
 */
#ifndef URAID_CLI_MONITOR_H
#define URAID_CLI_MONITOR_H

#include <stdbool.h>
#include <stdint.h>

#include <uraid/geom.h>

#include "cli/monitor_proto.h"
#include "ops/config.h"

struct mon_member {
	char path[256];
	char state[16];                 /* as `uraid status` names it: in-sync, spare, ... */
	int slot;
};

/* An inner array of a served RAID 50/60 ("inner" lines): the array its
 * own events name (EXPORT/INNER). */
struct mon_inner {
	char name[256];
	unsigned raid_disks, degraded;
	char job[16];
	bool running;
};

#define MON_INNER_MAX 16        /* URAID_NESTED_MAX_GROUPS */

/* One served array, as its server's "monitor-state" answer says. */
struct mon_array {
	char control[1024];             /* its server's control socket: the key */
	char export_name[256];          /* how events name it */
	uint8_t uuid[16];
	bool has_uuid;
	char name[64];                  /* md's array name */
	unsigned raid_disks, degraded;
	char job[16];
	bool running;
	unsigned nmembers;
	struct mon_member members[URAID_MAX_MEMBERS];
	unsigned ninner;
	struct mon_inner inner[MON_INNER_MAX];
	const struct config_array *conf;        /* its ARRAY line, or NULL */
	bool seen;                      /* answered in the current scan */
};

#define MONITOR_FAILED_MOVES_MAX 16

struct metrics_http;

struct monitor {
	/* options and the configuration file */
	const char *program, *mailaddr, *mailfrom, *sendmail;
	const char *pid_file;
	const char *metrics;            /* --metrics=HOST:PORT, or NULL */
	struct metrics_http *metrics_http;      /* serving it (metrics_all.c) */
	bool use_syslog, oneshot, test, daemonise;
	unsigned delay_s;
	char **names;                   /* ARRAY arguments: watch only these */
	unsigned nnames;
	struct uraid_config cfg;        /* zeroed when there is no file */
	char host[256];
	/* the arrays being watched */
	struct mon_array *arrays;
	unsigned narrays, cap;
	bool pid_file_written;
	/* spare group moves that failed (spare's path, the array's control):
	   not tried again */
	struct {
		char path[256];
		char to[1024];
	} failed_moves[MONITOR_FAILED_MOVES_MAX];
	unsigned nfailed_moves, failed_moves_next;
	/* the events received and not yet handled (monitor_drain) */
	int sock_fd;                    /* -1: none (--oneshot) */
	int sig_fd;                     /* SIGTERM and co. (-1: none): children stop early */
	struct monitor_event *queue;
	unsigned qhead, qlen;
};

#define MONITOR_CHILD_TIMEOUT_S 30      /* the program's and sendmail's time */

/* The events waiting in the socket, read into the queue (at most
 * MONITOR_QUEUE_MAX; the rest wait in the socket, and what the socket
 * cannot hold is made up for by monitor_refresh). Called before and while
 * a child runs, so that the socket's short queue does not overflow. */
#define MONITOR_QUEUE_MAX 256
void monitor_drain(struct monitor *m);

/* ---- monitor_state.c ---- */
/* Ask the server at control for its state into a (a->control set; a->conf
 * and a->seen kept; a untouched on failure); 0 or the ctl_call error
 * (-errno when it cannot be reached). */
int monitor_query(struct monitor *m, const char *control, struct mon_array *a);
/* Ask a's server again; what changed since and was not reported is
 * reported (a lost event made up for); a is kept as it was when the
 * server cannot answer. 0 or monitor_query's error. */
int monitor_refresh(struct monitor *m, struct mon_array *a);
/* A datagram's event about to be reported: a updated as the event says
 * (array: the event's array name, a's own or one of its inner arrays');
 * *already when a's state says it was reported (by monitor_refresh). */
void monitor_note_event(struct mon_array *a, const char *array, const char *event,
			const char *member, bool *already);
/* a's inner array of that name (EXPORT/INNER), or NULL. */
struct mon_inner *monitor_inner(const struct mon_array *a, const char *name);
/* Members of a in the given state. */
unsigned monitor_count(const struct mon_array *a, const char *state);
/* Look at every served array (the registry): new ones are added (and
 * reported as NewArray unless initial; DegradedArray, SparesMissing and,
 * with --test, TestMessage as mdadm reports them for an array it first
 * sees), gone ones reported DeviceDisappeared and dropped. */
void monitor_scan(struct monitor *m, bool initial);
struct mon_array *monitor_find(struct monitor *m, const char *control);
/* Does the ARRAY argument arg name a: its export name, its md name (with or
 * without "host:"), or the device name of its ARRAY line (/dev/md/data)? */
bool monitor_names(const struct mon_array *a, const char *arg);
void monitor_drop(struct monitor *m, struct mon_array *a);
/* Spare groups: move a spare to a degraded array of the same group that
 * has none (MoveSpare). */
void monitor_spare_groups(struct monitor *m);

/* ---- monitor_report.c ---- */
/* One event: syslog (or stderr), the program, mail for the events mdadm
 * mails. member may be NULL or empty; control (the array's server, for the
 * status in mail) may be NULL. */
void monitor_report(struct monitor *m, const char *event, const char *array,
		    const char *member, const char *control);
/* A line of the monitor's own (errors, the program's output). */
void monitor_log(struct monitor *m, int priority, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
