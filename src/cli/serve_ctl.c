// SPDX-License-Identifier: MIT
/*
 * The control requests a running `uraid serve` answers (see ctl/ctl.h for
 * the protocol): one handler per verb, and the table of them (serve_verbs,
 * at the end) that ctl_dispatch looks requests up in.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/geom.h>
#include <uraid/nested.h>

#include "cli/cli.h"
#include "cli/metrics_text.h"
#include "cli/serve.h"
#include "cli/serve_events.h"
#include "cli/monitor_proto.h"
#include "cli/status_print.h"
#include "cli/util.h"
#include "common/clock.h"
#include "ctl/ctl.h"
#include "nbd/proto.h"
#include "nbd/server.h"

static void serve_info(const struct serve_state *st, struct cli_serve_info *si)
{
	memset(si, 0, sizeof(*si));
	si->export_name = st->export_name;
	si->endpoint = st->endpoint;
	si->control = st->control_path;
	si->pid = (long)getpid();
	si->uptime_s = (uraid_now_ns() - st->start_ns) / 1000000000u;
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

	struct uraid_array_status *inner[URAID_NESTED_MAX_GROUPS] = { 0 };

	if (!as || uraid_array_status(st->array, as) != 0) {
		ctl_reply(out, CLI_EXIT_FAIL, "out of memory", NULL, 0);
	} else {
		serve_info(st, &si);
		/* a RAID 50/60 in JSON: its inner arrays in "inner" */
		for (unsigned g = 0; fn == cli_status_json && st->nested && g < st->nested->groups;
		     g++) {
			if (!(inner[g] = malloc(sizeof(*inner[g]))) ||
			    uraid_array_status(st->nested->inner[g], inner[g]) != 0)
				break;
			si.ninner = g + 1;
		}
		si.inner = (const struct uraid_array_status *const *)inner;
		ctl_reply(out, 0, NULL, NULL, 0);
		fn(out, as, &si);
		/* a RAID 50/60: each inner array with its members and jobs (human
		   output; the JSON has them in "inner", above) */
		for (unsigned g = 0; fn == cli_status_human && st->nested &&
				     g < st->nested->groups; g++) {
			if (uraid_array_status(st->nested->inner[g], as) != 0)
				continue;
			fprintf(out, "\nInner array %u of %u (a member of the RAID 0 above):\n",
				g + 1, st->nested->groups);
			si.array_only = true;
			uraid_array_sync_status(st->nested->inner[g], &si.sync);
			fn(out, as, &si);
		}
	}
	for (unsigned g = 0; g < URAID_NESTED_MAX_GROUPS; g++)
		free(inner[g]);
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

/* The member named by field[1] (ctl_dispatch made sure there is one): its
 * index in the array that holds it (an inner one of a RAID 50/60), or -1
 * after answering that it is not a member. */
static int member_arg_in(FILE *out, const struct serve_state *st, const struct ctl_request *rq,
			 struct uraid_array **a)
{
	int idx;
	*a = serve_member_array(st, rq->field[1], &idx);
	if (idx < 0) {
		char msg[CTL_MAX_LINE + 64];
		snprintf(msg, sizeof(msg), "%s is not a member of the served array '%s'",
			 rq->field[1], st->export_name);
		ctl_reply(out, CLI_EXIT_FAIL, msg, NULL, 0);
	}
	return idx;
}

/* field[n] is "force" */
static bool forced(const struct ctl_request *rq, unsigned n)
{
	return rq->nfields > n && !strcmp(rq->field[n], "force");
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

/* ---- the verbs: each a ctl_handler_fn, arg the serve_state ---- */

static void verb_status(void *arg, const struct ctl_request *rq, FILE *out)
{
	reply_report(out, arg, cli_status_human);
}

static void verb_status_json(void *arg, const struct ctl_request *rq, FILE *out)
{
	reply_report(out, arg, cli_status_json);
}

static void verb_summary(void *arg, const struct ctl_request *rq, FILE *out)
{
	reply_summary(out, arg);
}

static void verb_summary_json(void *arg, const struct ctl_request *rq, FILE *out)
{
	reply_report(out, arg, cli_summary_json);
}

static void verb_export_is(void *arg, const struct ctl_request *rq, FILE *out)
{
	const struct serve_state *st = arg;

	/* a pool's volume answers to POOL/VOLUME too */
	const char *name = rq->nfields == 2 ? rq->field[1] : NULL;
	size_t pl = st->pool_name ? strlen(st->pool_name) : 0;
	if (name && st->pool_name && !strncmp(name, st->pool_name, pl) && name[pl] == '/')
		name += pl + 1;
	if (name && !strcmp(name, st->export_name))
		ctl_reply(out, 0, NULL, NULL, 0);
	else
		ctl_reply(out, CLI_EXIT_FAIL, "another export name", NULL, 0);
}

/* "pool-is POOL": a volume of a pool served whole answers ok with the pool's
 * control socket (the pool is not listed itself: its volumes are) */
static void verb_pool_is(void *arg, const struct ctl_request *rq, FILE *out)
{
	const struct serve_state *st = arg;
	char line[700];

	if (rq->nfields == 2 && st->pool_name && st->pool && !strcmp(rq->field[1], st->pool_name)) {
		int n = snprintf(line, sizeof(line), "%s\n", st->pool->control_path);
		ctl_reply(out, 0, NULL, line, n > 0 ? (size_t)n : 0);
	} else {
		ctl_reply(out, CLI_EXIT_FAIL, "not a volume of that pool", NULL, 0);
	}
}

/* ok, with the member's state and its path as the server knows it
 * ("STATE\tPATH\n"): clients check a request before sending it */
static void verb_owns(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	char line[CTL_MAX_LINE];
	int n = 0;

	struct uraid_array *a;
	int idx = member_arg_in(out, arg, rq, &a);
	if (idx < 0) {
		free(as);
		return;
	}
	if (as && uraid_array_status(a, as) == 0 && (unsigned)idx < as->nmembers) {
		const struct uraid_member_status *m = &as->members[idx];
		n = snprintf(line, sizeof(line), "%s\t%s\n", m->replacing ? "replacing"
			     : cli_member_state_name(m->state), m->path);
	}
	free(as);
	ctl_reply(out, 0, NULL, line, n > 0 ? (size_t)n : 0);
}

/* the export name alone: cheap, for clients that only want to name the array */
static void verb_name(void *arg, const struct ctl_request *rq, FILE *out)
{
	const struct serve_state *st = arg;
	char line[300];
	int n = snprintf(line, sizeof(line), "%s\n", st->export_name);

	ctl_reply(out, 0, NULL, line, n > 0 ? (size_t)n : 0);
}

/*
 * "export\tNAME\n", then "member\tSTATE\tDETACHED\tPATH\n" for each member:
 * what the keywords failed and detached pick from. DETACHED (mdadm's: the
 * member's device or file is gone) is 0 or 1 when the request asks for it
 * ("members detached"; see uraid_array_member_detached), else "-".
 */
static void verb_members(void *arg, const struct ctl_request *rq, FILE *out)
{
	const struct serve_state *st = arg;
	struct uraid_array_status *as = malloc(sizeof(*as));
	bool want_detached = rq->nfields == 2 && !strcmp(rq->field[1], "detached");
	char *body = NULL, msg[128];
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	int rc = -ENOMEM;

	if (!as || !f || (rc = uraid_array_status(st->array, as)) != 0) {
		snprintf(msg, sizeof(msg), "cannot read the array's status: %s", strerror(-rc));
		ctl_reply(out, CLI_EXIT_FAIL, msg, NULL, 0);
	} else {
		fprintf(f, "export\t%s\n", st->export_name);
		for (unsigned i = 0; i < as->nmembers; i++) {
			const struct uraid_member_status *m = &as->members[i];
			int d = want_detached ? uraid_array_member_detached(st->array, i) : -1;
			fprintf(f, "member\t%s\t%s\t%s\n", m->replacing ? "replacing"
				: cli_member_state_name(m->state), d < 0 ? "-" : d ? "1" : "0",
				m->path);
		}
		fflush(f);
		ctl_reply(out, 0, NULL, body, len);
	}
	if (f)
		fclose(f);
	free(body);
	free(as);
}

/* "CODE STATE\n", CODE as mdadm --detail --test: 0 ok, 1 degraded, 2 failed */
static void verb_health(void *arg, const struct ctl_request *rq, FILE *out)
{
	const struct serve_state *st = arg;
	struct uraid_array_status *as = malloc(sizeof(*as));
	char line[128];
	int rc = -ENOMEM;

	if (!as || (rc = uraid_array_status(st->array, as)) != 0) {
		snprintf(line, sizeof(line), "cannot read the array's status: %s", strerror(-rc));
		ctl_reply(out, CLI_EXIT_FAIL, line, NULL, 0);
	} else {
		int health = cli_array_health(as);
		int n = snprintf(line, sizeof(line), "%d %s", health, cli_array_state(as));
		/* a RAID 50/60 is as healthy as its least healthy inner array */
		for (unsigned g = 0; st->nested && g < st->nested->groups; g++) {
			if (uraid_array_status(st->nested->inner[g], as) != 0 ||
			    cli_array_health(as) <= health)
				continue;
			health = cli_array_health(as);
			n = snprintf(line, sizeof(line), "%d inner array %s %s", health, as->name,
				     cli_array_state(as));
		}
		if (n > (int)sizeof(line) - 2)
			n = (int)sizeof(line) - 2;
		line[n++] = '\n';
		line[n] = 0;
		ctl_reply(out, 0, NULL, line, (size_t)n);
	}
	free(as);
}

static void verb_fail(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	char err[512], done[CTL_MAX_LINE + 64];
	struct uraid_array *a;
	int idx = member_arg_in(out, st, rq, &a);

	if (idx < 0)
		return;
	int rc = uraid_array_fail_member(a, (unsigned)idx,
					 forced(rq, 2) ? URAID_FAIL_FORCE : 0, err, sizeof(err));
	snprintf(done, sizeof(done), "%s: set faulty in '%s'\n", rq->field[1], st->export_name);
	reply_result(out, rc, err, done);
}

static void verb_remove(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	char err[512], done[CTL_MAX_LINE + 64];
	struct uraid_array *a;
	int idx = member_arg_in(out, st, rq, &a);

	if (idx < 0)
		return;
	int rc = uraid_array_remove_member(a, (unsigned)idx, err, sizeof(err));
	snprintf(done, sizeof(done), "%s: removed from '%s'\n", rq->field[1], st->export_name);
	reply_result(out, rc, err, done);
}

static void verb_add(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	char err[512], done[CTL_MAX_LINE + 64];
	struct uraid_array *a = serve_add_target(st, err, sizeof(err));
	if (!a) {
		ctl_reply(out, CLI_EXIT_FAIL, err, NULL, 0);
		return;
	}
	/* PATH [force|-] [append] (append: uraid grow --add on a linear) */
	uint32_t flags = forced(rq, 2) ? URAID_ADD_FORCE : 0;
	if (rq->nfields > 3 && !strcmp(rq->field[3], "append"))
		flags |= URAID_ADD_APPEND;
	int rc = uraid_array_add_member(a, rq->field[1], flags, err, sizeof(err));

	if (rc == URAID_ADD_READDED)
		snprintf(done, sizeof(done), "%s: re-added to '%s' in its old slot; only the "
			 "chunks written since it left are rebuilt\n", rq->field[1],
			 st->export_name);
	else
		snprintf(done, sizeof(done), "%s: added to '%s' as a spare\n", rq->field[1],
			 st->export_name);
	reply_result(out, rc < 0 ? rc : 0, err, done);
}

static void verb_replace(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	char err[512], done[CTL_MAX_LINE + 64];
	struct uraid_array *a;
	int idx = member_arg_in(out, st, rq, &a);

	if (idx < 0)
		return;
	if (rq->nfields < 3) {
		ctl_reply(out, CLI_EXIT_USAGE, "replace by what? (give the new device)", NULL, 0);
		return;
	}
	int rc = uraid_array_replace_member(a, (unsigned)idx, rq->field[2],
					    forced(rq, 3) ? URAID_ADD_FORCE : 0, err, sizeof(err));
	snprintf(done, sizeof(done), "%s: replacing %s in '%s'; it serves until the copy "
		 "is done\n", rq->field[2], rq->field[1], st->export_name);
	reply_result(out, rc, err, done);
}

/* check and repair: the whole array, or with a range START LENGTH in bytes
 * (LENGTH 0: to the end) */
static void sync_start(struct serve_state *st, enum uraid_sync_kind kind,
		       const struct ctl_request *rq, FILE *out)
{
	char err[512], done[CTL_MAX_LINE + 64];
	int rc = rq->nfields < 3
		 ? uraid_array_sync_start(st->array, kind, err, sizeof(err))
		 : uraid_array_sync_start_range(st->array, kind, strtoull(rq->field[1], NULL, 10),
						strtoull(rq->field[2], NULL, 10), err,
						sizeof(err));

	snprintf(done, sizeof(done), "'%s': %s started%s\n", st->export_name, rq->field[0],
		 rq->nfields < 3 ? "" : " on the range given");
	reply_result(out, rc, err, done);
}

static void verb_check(void *arg, const struct ctl_request *rq, FILE *out)
{
	sync_start(arg, URAID_SYNC_CHECK, rq, out);
}

static void verb_repair(void *arg, const struct ctl_request *rq, FILE *out)
{
	sync_start(arg, URAID_SYNC_REPAIR, rq, out);
}

static void verb_sync_cancel(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	char done[CTL_MAX_LINE + 64];
	int rc = uraid_array_sync_cancel(st->array);

	snprintf(done, sizeof(done), "'%s': background work stopping\n", st->export_name);
	reply_result(out, rc, "no background work is running", done);
}

/* The running or last job, or (with a number) that job. */
static void verb_sync_status(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	struct uraid_sync_status ss;
	char done[CTL_MAX_LINE + 64];

	if (rq->nfields < 2) {
		uraid_array_sync_status(st->array, &ss);
	} else if (uraid_array_sync_job(st->array, strtoull(rq->field[1], NULL, 10), &ss) != 0) {
		ctl_reply(out, CLI_EXIT_FAIL, "no such background job (not started, or too long "
			  "ago)", NULL, 0);
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
}

static void verb_speed(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	char err[512], done[CTL_MAX_LINE + 64];
	unsigned long lo = rq->nfields > 1 ? strtoul(rq->field[1], NULL, 10) : 0;
	unsigned long hi = rq->nfields > 2 ? strtoul(rq->field[2], NULL, 10) : 0;
	struct uraid_sync_status ss;

	if (lo > UINT32_MAX || hi > UINT32_MAX || (lo && hi && lo > hi)) {
		ctl_reply(out, CLI_EXIT_USAGE, "speed limits: MIN <= MAX, in KiB/s", NULL, 0);
		return;
	}
	uraid_array_sync_status(st->array, &ss);
	if (uraid_array_sync_speed(st->array, (uint32_t)lo, (uint32_t)hi) != 0) {
		/* one limit given, against the other as it stands */
		if (lo)
			snprintf(err, sizeof(err), "minimum %lu KiB/s is above the maximum in "
				 "effect, %u KiB/s; give --max too", lo, ss.max_kib_s);
		else
			snprintf(err, sizeof(err), "maximum %lu KiB/s is below the minimum in "
				 "effect, %u KiB/s; give --min too", hi, ss.min_kib_s);
		ctl_reply(out, CLI_EXIT_FAIL, err, NULL, 0);
		return;
	}
	uraid_array_sync_status(st->array, &ss);
	snprintf(done, sizeof(done), "'%s': background work limits %u..%u KiB/s\n",
		 st->export_name, ss.min_kib_s, ss.max_kib_s);
	ctl_reply(out, 0, NULL, done, strlen(done));
}

static void verb_stop(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	char done[CTL_MAX_LINE + 64];

	if (st->pool_name) {
		/* one process serves the pool's volumes: they stop together */
		snprintf(done, sizeof(done), "'%s' is a volume of pool '%s', served with the "
			 "others by one process: stop them all with 'uraid stop %s'",
			 st->export_name, st->pool_name, st->pool_name);
		ctl_reply(out, CLI_EXIT_USAGE, done, NULL, 0);
		return;
	}
	snprintf(done, sizeof(done), "'%s': stopping (finishing requests in flight, then "
		 "marking the array clean)\n", st->export_name);
	ctl_reply(out, 0, NULL, done, strlen(done));
	fprintf(stderr, "uraid serve: stop requested on the control socket\n");
	st->stop_requested = true;
}

/* The array's Prometheus metrics, as --metrics serves them (uraid monitor
 * gathers them from every server). */
static void verb_metrics(void *arg, const struct ctl_request *rq, FILE *out)
{
	const char *page;
	size_t len;

	if (metrics_serve_page(arg, &page, &len))
		ctl_reply(out, CLI_EXIT_FAIL, "out of memory", NULL, 0);
	else
		ctl_reply(out, 0, NULL, page, len);
}

#define WHICH_MEMBER "which member? (give its path)"

static const struct ctl_verb serve_verbs[] = {
	{ "status", verb_status, NULL, 0, "the array's state, as uraid detail prints it" },
	{ "status-json", verb_status_json, NULL, 0, "the same as one JSON object" },
	{ "summary", verb_summary, NULL, 0, "one line for uraid status without arguments" },
	{ "summary-json", verb_summary_json, NULL, 0, "that line's facts as JSON" },
	{ "metrics", verb_metrics, NULL, 0, "the array's metrics in Prometheus' text format" },
	{ "export-is", verb_export_is, NULL, 0, "NAME: ok if the export is NAME" },
	{ "pool-is", verb_pool_is, NULL, 0,
	  "POOL: ok (the pool's control socket) if the array is a volume of POOL served whole" },
	{ "owns", verb_owns, WHICH_MEMBER, 0, "PATH: ok (STATE PATH) if PATH is a member" },
	{ "name", verb_name, NULL, 0, "the export name" },
	{ "members", verb_members, NULL, 0, "[detached]: the export name, each member's state "
	  "(and whether its device is gone) and path" },
	{ "health", verb_health, NULL, 0, "0 ok, 1 degraded, 2 failed (mdadm --detail --test)" },
	{ "fail", verb_fail, WHICH_MEMBER, CTL_VERB_CHANGES, "PATH [force]: set a member faulty" },
	{ "remove", verb_remove, WHICH_MEMBER, CTL_VERB_CHANGES,
	  "PATH: take a faulty, spare or stale member out" },
	{ "add", verb_add, "which device? (give its path)", CTL_VERB_CHANGES,
	  "PATH [force|-] [append]: add a spare, or re-add a member that left" },
	{ "replace", verb_replace, WHICH_MEMBER, CTL_VERB_CHANGES,
	  "PATH NEW [force]: copy a member to NEW, which then takes its place" },
	{ "check", verb_check, NULL, CTL_VERB_CHANGES,
	  "[START LENGTH]: compare the redundancy, count mismatches" },
	{ "repair", verb_repair, NULL, CTL_VERB_CHANGES,
	  "[START LENGTH]: compare the redundancy and rewrite mismatches" },
	{ "sync-cancel", verb_sync_cancel, NULL, CTL_VERB_CHANGES, "stop the background work" },
	{ "sync-status", verb_sync_status, NULL, 0,
	  "[JOB]: the running or last background job (or JOB) as numbers" },
	{ "speed", verb_speed, NULL, CTL_VERB_CHANGES,
	  "[MIN [MAX]]: background work limits in KiB/s (0: unchanged)" },
	{ "tune", serve_tune_verb, NULL, CTL_VERB_CHANGES,
	  "text|json [NAME=VALUE ...]: change run-time settings, then show them all" },
	{ "grow", serve_grow_verb, NULL, CTL_VERB_CHANGES,
	  "plan|do SETTINGS: change the geometry, sizes or bitmap (uraid grow)" },
	{ MONITOR_STATE_VERB, serve_events_verb_state, NULL, 0,
	  "what uraid monitor watches, as tab-separated lines" },
	{ "stop", verb_stop, NULL, CTL_VERB_CHANGES, "drain, mark the array clean and exit" },
	{ NULL, NULL, NULL, 0, NULL }
};

void serve_ctl_handle(void *arg, const struct ctl_request *rq, FILE *out)
{
	ctl_dispatch(serve_verbs, arg, rq, out);
}
