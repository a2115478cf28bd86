// SPDX-License-Identifier: MIT
/*
 * The control requests a running `uraid serve` answers (see ctl/ctl.h for
 * the protocol): status, status-json, summary, summary-json, export-is, owns, fail,
 * remove, add, check, repair, sync-cancel, sync-status, speed, stop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uraid/geom.h>

#include "cli/cli.h"
#include "cli/serve.h"
#include "cli/status_print.h"
#include "cli/util.h"
#include "ctl/ctl.h"
#include "nbd/proto.h"
#include "nbd/server.h"

uint64_t cli_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void serve_info(const struct serve_state *st, struct cli_serve_info *si)
{
	memset(si, 0, sizeof(*si));
	si->export_name = st->export_name;
	si->endpoint = st->endpoint;
	si->control = st->control_path;
	si->pid = (long)getpid();
	si->uptime_s = (cli_now_ns() - st->start_ns) / 1000000000u;
	struct nbd_server_usage u;
	nbd_server_usage(st->server, &u);
	si->connections = u.connections;
	si->max_connections = u.max_connections;
	si->connections_total = nbd_server_connections_total(st->server);
	si->refusing = u.refusing;
	si->refused = u.refused;
	si->handshake_timeout_s = u.handshake_timeout_ms / 1000u;
	si->buffer_bytes = u.buffer_bytes;
	si->max_buffer_bytes = u.max_buffer_bytes;
	si->buffer_share_bytes = u.buffer_share_bytes;
	si->waiting_for_memory = u.waiting_for_memory;
	si->read_only = st->o->read_only;
	si->tls = st->o->tls_mode == NBD_TLS_REQUIRE ? "require"
		  : st->o->tls_mode == NBD_TLS_ON ? "on" : "off";
	si->tls_psk = st->o->tls_mode != NBD_TLS_OFF && st->o->tls_psk;
	si->tls_x509 = st->o->tls_mode != NBD_TLS_OFF && st->o->tls_certificates;
	si->tls_verify_peer = si->tls_x509 && st->o->tls_verify_peer;
	uraid_array_sync_status(st->array, &si->sync);
}

/* The status line, then the body fn writes. */
static void reply_report(FILE *out, const struct serve_state *st,
			 void (*fn)(FILE *, const struct uraid_array_status *,
				    const struct cli_serve_info *))
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	struct cli_serve_info si;

	if (!as || uraid_array_status(st->array, as) != 0) {
		ctl_reply(out, CLI_EXIT_FAIL, "out of memory", NULL, 0);
	} else {
		serve_info(st, &si);
		ctl_reply(out, 0, NULL, NULL, 0);
		fn(out, as, &si);
	}
	free(as);
}

/* One line for `uraid status` without arguments. */
static void reply_summary(FILE *out, const struct serve_state *st)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	char line[1200], size[32];

	if (!as || uraid_array_status(st->array, as) != 0) {
		free(as);
		ctl_reply(out, CLI_EXIT_FAIL, "out of memory", NULL, 0);
		return;
	}
	const char *lv = uraid_level_name(as->level);
	int n = snprintf(line, sizeof(line), "%-16s %-7s %10s  %u/%u in sync  %-18s %s  (pid %ld, "
			 "control %s)\n", st->export_name, lv ? lv : "?",
			 cli_bytes(as->size_bytes, size, sizeof(size)),
			 as->raid_disks - as->degraded, as->raid_disks, cli_array_state(as),
			 st->endpoint, (long)getpid(), st->control_path);
	free(as);
	ctl_reply(out, 0, NULL, line, n > 0 ? (size_t)n : 0);
}

static int member_arg(FILE *out, const struct serve_state *st, const struct ctl_request *rq)
{
	if (rq->nfields < 2) {
		ctl_reply(out, CLI_EXIT_USAGE, "which member? (give its path)", NULL, 0);
		return -EINVAL;
	}
	int idx = uraid_array_find_member(st->array, rq->field[1]);
	if (idx < 0) {
		char msg[CTL_MAX_LINE + 64];
		snprintf(msg, sizeof(msg), "%s is not a member of the served array '%s'",
			 rq->field[1], st->export_name);
		ctl_reply(out, CLI_EXIT_FAIL, msg, NULL, 0);
	}
	return idx;
}

/* A request that reached the engine was well formed: its refusal (the
 * array's state does not allow it, -EINVAL included) is a failure, not a
 * command-line error. */
static void reply_result(FILE *out, int rc, const char *err, const char *done)
{
	if (rc)
		ctl_reply(out, CLI_EXIT_FAIL, err, NULL, 0);
	else
		ctl_reply(out, 0, NULL, done, strlen(done));
}

void serve_ctl_handle(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	char err[512], done[CTL_MAX_LINE + 64];

	const char *cmd = rq->field[0];
	if (!strcmp(cmd, "status")) {
		reply_report(out, st, cli_status_human);
	} else if (!strcmp(cmd, "status-json")) {
		reply_report(out, st, cli_status_json);
	} else if (!strcmp(cmd, "summary")) {
		reply_summary(out, st);
	} else if (!strcmp(cmd, "summary-json")) {
		reply_report(out, st, cli_summary_json);
	} else if (!strcmp(cmd, "export-is")) {
		if (rq->nfields == 2 && !strcmp(rq->field[1], st->export_name))
			ctl_reply(out, 0, NULL, NULL, 0);
		else
			ctl_reply(out, CLI_EXIT_FAIL, "another export name", NULL, 0);
	} else if (!strcmp(cmd, "owns")) {
		if (member_arg(out, st, rq) >= 0)
			ctl_reply(out, 0, NULL, NULL, 0);
	} else if (!strcmp(cmd, "fail")) {
		int idx = member_arg(out, st, rq);
		if (idx < 0)
			return;
		bool force = rq->nfields > 2 && !strcmp(rq->field[2], "force");
		int rc = uraid_array_fail_member(st->array, (unsigned)idx,
						 force ? URAID_FAIL_FORCE : 0, err, sizeof(err));
		snprintf(done, sizeof(done), "%s: set faulty in '%s'\n", rq->field[1],
			 st->export_name);
		reply_result(out, rc, err, done);
	} else if (!strcmp(cmd, "remove")) {
		int idx = member_arg(out, st, rq);
		if (idx < 0)
			return;
		int rc = uraid_array_remove_member(st->array, (unsigned)idx, err, sizeof(err));
		snprintf(done, sizeof(done), "%s: removed from '%s'\n", rq->field[1],
			 st->export_name);
		reply_result(out, rc, err, done);
	} else if (!strcmp(cmd, "add")) {
		if (rq->nfields < 2) {
			ctl_reply(out, CLI_EXIT_USAGE, "which device? (give its path)", NULL, 0);
			return;
		}
		bool force = rq->nfields > 2 && !strcmp(rq->field[2], "force");
		int rc = uraid_array_add_member(st->array, rq->field[1], force ? URAID_ADD_FORCE : 0,
						err, sizeof(err));
		if (rc == URAID_ADD_READDED)
			snprintf(done, sizeof(done), "%s: re-added to '%s' in its old slot; only the "
				 "chunks written since it left are rebuilt\n", rq->field[1],
				 st->export_name);
		else
			snprintf(done, sizeof(done), "%s: added to '%s' as a spare\n", rq->field[1],
				 st->export_name);
		reply_result(out, rc < 0 ? rc : 0, err, done);
	} else if (!strcmp(cmd, "replace")) {
		int idx = member_arg(out, st, rq);
		if (idx < 0)
			return;
		if (rq->nfields < 3) {
			ctl_reply(out, CLI_EXIT_USAGE, "replace by what? (give the new device)", NULL, 0);
			return;
		}
		bool force = rq->nfields > 3 && !strcmp(rq->field[3], "force");
		int rc = uraid_array_replace_member(st->array, (unsigned)idx, rq->field[2],
						    force ? URAID_ADD_FORCE : 0, err, sizeof(err));
		snprintf(done, sizeof(done), "%s: replacing %s in '%s'; it serves until the copy "
			 "is done\n", rq->field[2], rq->field[1], st->export_name);
		reply_result(out, rc, err, done);
	} else if (!strcmp(cmd, "check") || !strcmp(cmd, "repair")) {
		enum uraid_sync_kind kind = !strcmp(cmd, "check") ? URAID_SYNC_CHECK
								   : URAID_SYNC_REPAIR;
		/* with a range: START LENGTH in bytes (LENGTH 0: to the end) */
		int rc = rq->nfields < 3
			 ? uraid_array_sync_start(st->array, kind, err, sizeof(err))
			 : uraid_array_sync_start_range(st->array, kind,
							strtoull(rq->field[1], NULL, 10),
							strtoull(rq->field[2], NULL, 10), err,
							sizeof(err));
		snprintf(done, sizeof(done), "'%s': %s started%s\n", st->export_name, cmd,
			 rq->nfields < 3 ? "" : " on the range given");
		reply_result(out, rc, err, done);
	} else if (!strcmp(cmd, "sync-cancel")) {
		int rc = uraid_array_sync_cancel(st->array);
		snprintf(done, sizeof(done), "'%s': background work stopping\n", st->export_name);
		reply_result(out, rc, "no background work is running", done);
	} else if (!strcmp(cmd, "sync-status")) {
		/* the running or last job, or (with a number) that job */
		struct uraid_sync_status ss;
		if (rq->nfields < 2) {
			uraid_array_sync_status(st->array, &ss);
		} else if (uraid_array_sync_job(st->array, strtoull(rq->field[1], NULL, 10),
						&ss) != 0) {
			ctl_reply(out, CLI_EXIT_FAIL, "no such background job (not started, or "
				  "too long ago)", NULL, 0);
			return;
		}
		/* kind running done total mismatches result array-positions job: for
		   scripts and --wait (the last two added later: readers take them as
		   optional) */
		snprintf(done, sizeof(done), "%d %d %llu %llu %llu %d %d %llu\n", (int)ss.kind,
			 ss.running, (unsigned long long)ss.done_bytes,
			 (unsigned long long)ss.total_bytes, (unsigned long long)ss.mismatch_sectors,
			 ss.result, ss.array_positions, (unsigned long long)ss.job);
		ctl_reply(out, 0, NULL, done, strlen(done));
	} else if (!strcmp(cmd, "speed")) {
		unsigned long lo = rq->nfields > 1 ? strtoul(rq->field[1], NULL, 10) : 0;
		unsigned long hi = rq->nfields > 2 ? strtoul(rq->field[2], NULL, 10) : 0;
		if (lo > UINT32_MAX || hi > UINT32_MAX || (lo && hi && lo > hi)) {
			ctl_reply(out, CLI_EXIT_USAGE, "speed limits: MIN <= MAX, in KiB/s", NULL, 0);
			return;
		}
		struct uraid_sync_status ss;
		uraid_array_sync_status(st->array, &ss);
		if (uraid_array_sync_speed(st->array, (uint32_t)lo, (uint32_t)hi) != 0) {
			/* one limit given, against the other as it stands */
			if (lo)
				snprintf(err, sizeof(err), "minimum %lu KiB/s is above the maximum "
					 "in effect, %u KiB/s; give --max too", lo, ss.max_kib_s);
			else
				snprintf(err, sizeof(err), "maximum %lu KiB/s is below the minimum "
					 "in effect, %u KiB/s; give --min too", hi, ss.min_kib_s);
			ctl_reply(out, CLI_EXIT_FAIL, err, NULL, 0);
			return;
		}
		uraid_array_sync_status(st->array, &ss);
		snprintf(done, sizeof(done), "'%s': background work limits %u..%u KiB/s\n",
			 st->export_name, ss.min_kib_s, ss.max_kib_s);
		ctl_reply(out, 0, NULL, done, strlen(done));
	} else if (!strcmp(cmd, "stop")) {
		snprintf(done, sizeof(done), "'%s': stopping (finishing requests in flight, "
			 "then marking the array clean)\n", st->export_name);
		ctl_reply(out, 0, NULL, done, strlen(done));
		fprintf(stderr, "uraid serve: stop requested on the control socket\n");
		st->stop_requested = true;
	} else {
		snprintf(err, sizeof(err), "unknown control request '%.64s'", cmd);
		ctl_reply(out, CLI_EXIT_USAGE, err, NULL, 0);
	}
}
