/* SPDX-License-Identifier: MIT */
/*
 * How servers tell monitors what happens (uraid serve → uraid monitor).
 *
 * Each running `uraid monitor` binds a Unix datagram socket, mode 0600, in
 * RUNDIR/monitors/ (the run directory of ctl.h, closed to others), named
 * PID.sock. A server sends each event to every socket there, without
 * waiting: a monitor whose queue is full misses that event, a socket nobody
 * listens on any more is removed. One event is one datagram, one line of at
 * most MONITOR_MSG_MAX bytes:
 *
 *   uraid-event 1 TAB EVENT TAB ARRAY TAB MEMBER TAB CONTROL NEWLINE
 *
 * EVENT one of monitor_event_names, ARRAY the export name, MEMBER a member's
 * path or empty, CONTROL the server's control socket (who sent it, and
 * whom to ask for more). Fields are escaped (monitor_field_escape): a
 * backslash, tab, newline or carriage return as \\, \t, \n, \r, other
 * control characters as \xHH; a name with a tab is still told.
 *
 * A monitor learns the state at its start, and after each event, from the
 * control verb "monitor-state" (serve_events.c), whose body is lines of
 * tab-separated fields:
 *
 *   array TAB EXPORT TAB UUID TAB NAME TAB RAID_DISKS TAB DEGRADED TAB JOB TAB RUNNING
 *   member TAB PATH TAB STATE TAB SLOT
 *
 * its fields escaped as the datagram's; JOB the background work's kind
 * (uraid_sync_kind_name), RUNNING 0 or 1, STATE as `uraid status` names
 * member states, SLOT -1 for none.
 */
#ifndef URAID_CLI_MONITOR_PROTO_H
#define URAID_CLI_MONITOR_PROTO_H

#include <stdbool.h>
#include <stddef.h>

#define MONITOR_MSG_MAX    4096
#define MONITOR_MSG_MAGIC  "uraid-event 1"
#define MONITOR_DIR        "monitors"
#define MONITOR_STATE_VERB "monitor-state"

/* md's events, as mdadm --monitor names them (NULL-terminated). */
extern const char *const monitor_event_names[];
/* The name as spelled in monitor_event_names, or NULL if it is none. */
const char *monitor_event_known(const char *name);

struct monitor_event {
	const char *event;              /* points into monitor_event_names */
	char array[256];
	char member[1024];
	char control[1024];
};

/* A field escaped (see above) into out; 0 or -ENAMETOOLONG. */
int monitor_field_escape(const char *in, char *out, size_t len);
/* inlen bytes of an escaped field into out (NUL-terminated); 0 or -EPROTO
 * (a bad escape, a raw tab/newline/NUL, \x00, too long). */
int monitor_field_unescape(const char *in, size_t inlen, char *out, size_t len);
/* The datagram for ev into buf; its length, or -ENAMETOOLONG. */
int monitor_event_format(const struct monitor_event *ev, char *buf, size_t len);
/* Parse a datagram (len bytes, not NUL-terminated); 0 or -EPROTO. */
int monitor_event_parse(const char *buf, size_t len, struct monitor_event *ev);

/*
 * The monitors' directory (RUNDIR/monitors) opened, its path in buf;
 * created (0700) when create is true. A descriptor, or -errno with the
 * reason in err (-ENOENT without create when there is none).
 */
int monitor_dir_open(bool create, char *buf, size_t len, char *err, size_t errlen);

/*
 * Send the datagram to every monitor's socket, never waiting; sockets
 * nobody listens on are removed. Returns how many took it.
 */
int monitor_broadcast(const char *msg, size_t len);

#endif
