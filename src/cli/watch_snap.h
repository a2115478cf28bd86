/* SPDX-License-Identifier: MIT */
/*
 * One poll of a served array for `uraid status --watch`: the facts the view
 * shows, read from the server's `status-json` answer (json_read.h).
 */
#ifndef URAID_CLI_WATCH_SNAP_H
#define URAID_CLI_WATCH_SNAP_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "ctl/ctl.h"

struct watch_member {
	char path[CTL_MAX_LINE];
	int slot;                       /* -1: spare or not in a slot */
	char state[16];                 /* "in-sync", "replacing", ... */
	uint64_t reads, writes, read_bytes, write_bytes;
};

struct watch_snap {
	char ctl[CTL_MAX_LINE];         /* the control socket: who this is */
	uint64_t t_ns;                  /* when the answer came (monotonic) */
	char export_name[256], level[16], state[64];
	uint64_t array_bytes, in_flight;
	unsigned raid_devices, degraded, connections, max_connections;
	struct {
		bool running;
		char kind[16];          /* the running job, or the last one */
		char result[16];        /* of the last one: "completed", "stopped", "failed" */
		uint64_t done, total;
		uint64_t server_rate;   /* the server's own measure; 0: none yet */
		bool per_member;        /* done and total count per member */
	} bg;
	unsigned nmembers;
	struct watch_member *members;
	/* Not answering this time: the facts are the last answer's, carried
	   forward (no rates), since when and why. */
	bool stale;
	bool no_facts;                  /* stale, and never answered: the name only */
	time_t stale_since;
	char stale_reason[160];
};

/*
 * Ask the server at ctl for its state, into *s (watch_snap_free it). 0; the
 * server's error code (> 0, e.g. busy) or -errno (gone, bad answer) with
 * the reason in msg.
 */
int watch_snap_poll(const char *ctl, struct watch_snap *s, char *msg, size_t msglen);
void watch_snap_free(struct watch_snap *s);
/* src (NULL: "?") into dst for the terminal: control characters (C0, DEL,
 * C1) as '?'. */
void watch_snap_clean(char *dst, size_t len, const char *src);
/* *dst as a copy of src (its own members): 0 or -ENOMEM. */
int watch_snap_copy(struct watch_snap *dst, const struct watch_snap *src);
/* The member of s in the same slot with the same path (a spare: by path
 * alone), or NULL. */
const struct watch_member *watch_snap_member(const struct watch_snap *s,
					     const struct watch_member *m);

#endif
