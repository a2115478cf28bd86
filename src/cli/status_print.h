/* SPDX-License-Identifier: MIT */
/*
 * An array's state as `uraid detail` and `uraid status` print it: a human
 * report in mdadm --detail's manner, or one JSON object (sizes in bytes).
 */
#ifndef URAID_CLI_STATUS_PRINT_H
#define URAID_CLI_STATUS_PRINT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <uraid/engine.h>

/* What a running server adds to the array's state (NULL for `detail`). */
struct cli_serve_info {
	/* an inner array of a served RAID 50/60: the array's lines only */
	bool array_only;
	const char *export_name;
	const char *endpoint;           /* "unix:/run/uraid/x.sock" or "tcp:127.0.0.1:10809" */
	const char *control;            /* the control socket's path */
	long pid;
	uint64_t uptime_s;
	unsigned connections, max_connections;     /* served now, and the limit */
	uint64_t connections_total;
	unsigned refusing;              /* being refused now */
	uint64_t refused;               /* since start */
	unsigned handshake_timeout_s;
	uint64_t buffer_bytes, max_buffer_bytes;  /* request buffers held, the cap */
	uint64_t buffer_share_bytes;    /* of the cap, each connection's own share */
	unsigned waiting_for_memory;    /* connections with a request waiting for it */
	bool read_only;
	const char *tls;                /* "off", "on" or "require" (--tls) */
	bool tls_psk, tls_x509, tls_verify_peer;    /* the credentials offered */
	struct uraid_sync_status sync;  /* background work, running or last */
	/* a served RAID 50/60: its inner arrays' states (status-json's "inner") */
	const struct uraid_array_status *const *inner;
	unsigned ninner;
};

const char *cli_member_state_name(enum uraid_member_state s);
/* "clean", "active, degraded", ... */
const char *cli_array_state(const struct uraid_array_status *st);
/* mdadm --detail --test's answer: 0 every slot in sync, 1 degraded but
 * running, 2 more slots lost than the level survives */
int cli_array_health(const struct uraid_array_status *st);
/* The stripe cache (RAID 4/5/6; other levels keep the size and ignore it):
 * the rest of a line after its label, and status-json's "stripe_cache". */
struct json;
void cli_stripe_cache_human(FILE *f, const struct uraid_stripe_cache_status *sc,
			    unsigned members, int level);
void cli_stripe_cache_json(struct json *j, const struct uraid_stripe_cache_status *sc);
void cli_status_human(FILE *f, const struct uraid_array_status *st,
		      const struct cli_serve_info *srv);
void cli_status_json(FILE *f, const struct uraid_array_status *st,
		     const struct cli_serve_info *srv);
/* A served array in the list of `uraid status --json` without ARRAY: what
 * the human listing shows, as one object. */
void cli_summary_json(FILE *f, const struct uraid_array_status *st,
		      const struct cli_serve_info *srv);

#endif
