// SPDX-License-Identifier: MIT
/*
 * uraid status | fail | remove | stop | check | repair | speed | add |
 * replace: commands for a running `uraid serve`, sent over its control
 * socket (ctl/ctl.h; the server's side is serve_ctl.c). The array is named
 * by its control socket, its export socket, or its export name; fail and
 * remove can also find it from the member's path alone.
 */
#include <errno.h>
#include <limits.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <uraid/engine.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/status_watch.h"
#include "cli/util.h"
#include "ctl/ctl.h"

struct find_ctx {
	const char *const *fields;      /* the request that identifies the server */
	unsigned nfields;
	char found[CTL_MAX_LINE];
	unsigned matches;
	unsigned busy;                  /* servers that turned the question away */
};

static int find_one(const char *ctl_path, void *arg)
{
	struct find_ctx *fc = arg;
	char msg[256];
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	int rc = ctl_call(ctl_path, fc->fields, fc->nfields, f, msg, sizeof(msg));
	if (f)
		fclose(f);
	free(body);
	if (rc > 0 && !strcmp(msg, CTL_BUSY))
		fc->busy++;
	if (rc == 0) {
		if (!fc->matches)
			snprintf(fc->found, sizeof(fc->found), "%s", ctl_path);
		fc->matches++;
	}
	return rc < 0 ? rc : 0;
}

/* ctl_for_each, the run directory's refusal told once: -1 then. */
static int each_served(const char *cmd, int (*fn)(const char *ctl_path, void *arg), void *arg)
{
	char err[512];
	int rc = ctl_for_each(fn, arg, err, sizeof(err));
	if (rc < 0)
		fprintf(stderr, "uraid %s: %s\n", cmd, err);
	return rc < 0 ? -1 : rc;
}

/* No server matched: say so first when some could not be asked. */
static bool report_busy(const char *cmd, const struct find_ctx *fc)
{
	if (fc->matches || !fc->busy)
		return false;
	fprintf(stderr, "uraid %s: %u served array%s did not answer (%s)\n", cmd, fc->busy,
		fc->busy > 1 ? "s" : "", CTL_BUSY);
	return true;
}

static bool is_socket(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISSOCK(st.st_mode);
}

/*
 * A socket's path: the list of served arrays says whose control or export
 * socket it is. A server not listed here (another run directory) is tried at
 * the default control path beside its export socket, else at the path
 * itself; the control socket's greeting tells it from an NBD socket before
 * anything is sent (ctl_call), so a request never reaches an export.
 */
static void resolve_path(const char *target, char *out, size_t len)
{
	char alt[CTL_MAX_LINE];

	if (ctl_find_socket(target, out, len) > 0)
		return;
	snprintf(alt, sizeof(alt), "%s.ctl", target);
	snprintf(out, len, "%s", is_socket(alt) ? alt : target);
}

/*
 * The control socket for TARGET: a path (with a '/', or naming a socket
 * that exists: a control socket or an export socket), else an export name
 * among the served arrays. NULL target: the only served array. 0, or an exit
 * status after a message.
 */
static int resolve_target(const char *cmd, const char *target, char *out, size_t len)
{
	if (target && (strchr(target, '/') || is_socket(target))) {
		resolve_path(target, out, len);
		return 0;
	}
	struct find_ctx fc = { 0 };
	const char *req[2] = { "export-is", target };
	const char *any[1] = { "summary" };
	if (target) {
		fc.fields = req;
		fc.nfields = 2;
	} else {
		fc.fields = any;
		fc.nfields = 1;
	}
	if (each_served(cmd, find_one, &fc) < 0)
		return CLI_EXIT_FAIL;
	if (fc.matches == 1) {
		snprintf(out, len, "%s", fc.found);
		return 0;
	}
	if (report_busy(cmd, &fc))
		return CLI_EXIT_FAIL;
	if (!target && fc.matches == 0)
		fprintf(stderr, "uraid %s: no array is being served on this machine\n", cmd);
	else if (!target)
		fprintf(stderr, "uraid %s: %u arrays are being served; name one (uraid status "
			"lists them)\n", cmd, fc.matches);
	else if (fc.matches == 0)
		fprintf(stderr, "uraid %s: no served array has the export name '%s' (uraid "
			"status lists them)\n", cmd, target);
	else
		fprintf(stderr, "uraid %s: %u served arrays are called '%s'; give the control "
			"socket's path\n", cmd, fc.matches, target);
	return CLI_EXIT_FAIL;
}

/* Send a request, print the body, turn the answer into an exit status. */
static int call(const char *cmd, const char *ctl, const char *const *fields, unsigned n)
{
	char msg[CTL_MAX_LINE];
	int rc = ctl_call(ctl, fields, n, stdout, msg, sizeof(msg));
	fflush(stdout);
	if (rc < 0) {
		fprintf(stderr, "uraid %s: %s\n", cmd, msg);
		return CLI_EXIT_FAIL;
	}
	if (rc > 0)
		fprintf(stderr, "uraid %s: %s\n", cmd, msg);
	return rc;
}

static int list_one(const char *ctl_path, void *arg)
{
	const char *fields[1] = { "summary" };
	char msg[256];
	int rc = ctl_call(ctl_path, fields, 1, stdout, msg, sizeof(msg));
	if (rc == 0)
		(*(unsigned *)arg)++;
	return rc < 0 ? rc : 0;
}

/* One object of `status --json` without ARRAY, after "[" or a comma. */
static int list_one_json(const char *ctl_path, void *arg)
{
	const char *fields[1] = { "summary-json" };
	char msg[256], *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	int rc = f ? ctl_call(ctl_path, fields, 1, f, msg, sizeof(msg)) : -ENOMEM;
	if (f)
		fclose(f);
	if (rc == 0 && body) {
		while (len && body[len - 1] == '\n')
			len--;
		printf("%s%.*s", (*(unsigned *)arg)++ ? ",\n" : "[\n", (int)len, body);
	}
	free(body);
	return rc < 0 ? rc : 0;
}

static const struct option ctl_longopts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ "control", required_argument, NULL, 'c' },
	{ "force", no_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct ctl_args {
	bool json, force;
	const char *control;
	int first;                      /* index of the first operand */
};

static int parse(int argc, char **argv, const char *allowed, void (*usage)(FILE *),
		 struct ctl_args *ca)
{
	int c;
	optind = 1;
	memset(ca, 0, sizeof(*ca));
	while ((c = getopt_long(argc, argv, "jc:fh", ctl_longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		if (c == '?' || !strchr(allowed, c)) {
			usage(stderr);
			return CLI_EXIT_USAGE;
		}
		if (c == 'j')
			ca->json = true;
		else if (c == 'c')
			ca->control = optarg;
		else if (c == 'f')
			ca->force = true;
	}
	ca->first = optind;
	return -1;
}

static void status_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid status [--json] [ARRAY]\n"
		"       uraid status --watch[=SECONDS] [--count=N] [ARRAY]\n"
		"\n"
		"Without ARRAY: one line for each array served on this machine. With ARRAY\n"
		"(an export name, the export socket, or the control socket): its state,\n"
		"members with their I/O counters, connections, and background work.\n"
		"\n"
		"  -j, --json         the state as one JSON object (sizes in bytes); without\n"
		"                     ARRAY, a JSON list of the served arrays, one object each\n"
		"      --watch[=S]    a live view, refreshed every S seconds (default 2, from\n"
		"                     0.1): per member reads and writes per second and MiB/s\n"
		"                     over the last interval (the first view has none yet: -),\n"
		"                     member states, background work with progress, rate and\n"
		"                     time left, connections; of ARRAY, or of every served\n"
		"                     array. On a terminal it redraws in place; otherwise one\n"
		"                     plain block per refresh. Ends on Ctrl-C (exit 0), or\n"
		"                     when ARRAY stops being served (one line, exit 1); a\n"
		"                     server not answering keeps its last view, marked so\n"
		"      --count=N      with --watch: stop after N views (exit 0)\n"
		"  -h, --help         this text\n");
}

int cmd_status(int argc, char **argv)
{
	struct ctl_args ca;
	struct status_watch_opts wo;
	char ctl[CTL_MAX_LINE];
	int rc = status_watch_opts(&argc, argv, &wo);
	if (rc >= 0 || (rc = parse(argc, argv, "jc", status_usage, &ca)) >= 0)
		return rc;
	const char *target = ca.control ? ca.control : (ca.first < argc ? argv[ca.first] : NULL);
	if (argc - ca.first > 1) {
		status_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (wo.interval_ms)
		return status_watch(&wo, target, ca.json, resolve_target);
	if (!target && ca.json) {
		unsigned n = 0;
		if (each_served("status", list_one_json, &n) < 0)
			return CLI_EXIT_FAIL;
		printf("%s\n", n ? "\n]" : "[]");
		return CLI_EXIT_OK;
	}
	if (!target) {
		unsigned n = 0;
		if (each_served("status", list_one, &n) < 0)
			return CLI_EXIT_FAIL;
		if (!n)
			printf("no array is being served on this machine\n");
		return CLI_EXIT_OK;
	}
	if ((rc = resolve_target("status", target, ctl, sizeof(ctl))) != 0)
		return rc;
	const char *fields[1] = { ca.json ? "status-json" : "status" };
	return call("status", ctl, fields, 1);
}

static void fail_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid fail [--force] [--control=PATH] MEMBER...\n"
		"\n"
		"Mark members of a served array faulty, as mdadm --fail does: the array goes\n"
		"on degraded. Failing a member whose loss the array cannot survive is refused\n"
		"unless --force (RAID 4/5/6; md never fails the last copy of RAID 0/1/10).\n"
		"The array is found from the member unless --control names it.\n"
		"\n"
		"  -f, --force          fail it even though the array will fail\n"
		"  -c, --control=PATH   the served array's control socket (or export socket)\n"
		"  -h, --help           this text\n");
}

static void remove_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid remove [--control=PATH] MEMBER...\n"
		"\n"
		"Take faulty or spare members out of a served array, as mdadm --remove does:\n"
		"the device is released and the other members' superblocks forget it. A member\n"
		"still in sync is refused: fail it first.\n"
		"\n"
		"  -c, --control=PATH   the served array's control socket (or export socket)\n"
		"  -h, --help           this text\n");
}

/* The server runs elsewhere: paths go to it absolute (as given if that fails). */
static const char *absolute(const char *path, char *buf)
{
	return realpath(path, buf) ? buf : path;
}

/* fail/remove: each member goes to the server that owns it. */
static int member_cmd(int argc, char **argv, const char *cmd, void (*usage)(FILE *))
{
	struct ctl_args ca;
	char ctl[CTL_MAX_LINE];
	int rc = parse(argc, argv, !strcmp(cmd, "fail") ? "cf" : "c", usage, &ca);
	if (rc >= 0)
		return rc;
	if (ca.first >= argc) {
		fprintf(stderr, "uraid %s: which member? run 'uraid %s --help'\n", cmd, cmd);
		return CLI_EXIT_USAGE;
	}
	int status = CLI_EXIT_OK;
	for (int i = ca.first; i < argc; i++) {
		if (ca.control) {
			if ((rc = resolve_target(cmd, ca.control, ctl, sizeof(ctl))) != 0)
				return rc;
		} else {
			char abs_owner[PATH_MAX];
			const char *owns[2] = { "owns", absolute(argv[i], abs_owner) };
			struct find_ctx fc = { .fields = owns, .nfields = 2 };
			if (each_served(cmd, find_one, &fc) < 0)
				return CLI_EXIT_FAIL;
			if (!fc.matches) {
				if (!report_busy(cmd, &fc))
					fprintf(stderr, "uraid %s: %s is not a member of any served "
						"array\n", cmd, argv[i]);
				status = CLI_EXIT_FAIL;
				continue;
			}
			snprintf(ctl, sizeof(ctl), "%s", fc.found);
		}
		char abs[PATH_MAX];
		const char *fields[3] = { cmd, absolute(argv[i], abs), "force" };
		rc = call(cmd, ctl, fields, ca.force ? 3 : 2);
		if (rc)
			status = rc;
	}
	return status;
}

int cmd_fail(int argc, char **argv)
{
	return member_cmd(argc, argv, "fail", fail_usage);
}

int cmd_remove(int argc, char **argv)
{
	return member_cmd(argc, argv, "remove", remove_usage);
}

static void stop_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid stop [ARRAY]\n"
		"\n"
		"Stop a running `uraid serve` (as SIGTERM does): requests in flight finish,\n"
		"the members are flushed and the array is marked clean. ARRAY: an export name,\n"
		"the export socket or the control socket; may be left out when only one array\n"
		"is served.\n"
		"\n"
		"  -h, --help   this text\n");
}

int cmd_stop(int argc, char **argv)
{
	struct ctl_args ca;
	char ctl[CTL_MAX_LINE];
	int rc = parse(argc, argv, "c", stop_usage, &ca);
	if (rc >= 0)
		return rc;
	const char *target = ca.control ? ca.control : (ca.first < argc ? argv[ca.first] : NULL);
	if ((rc = resolve_target("stop", target, ctl, sizeof(ctl))) != 0)
		return rc;
	const char *fields[1] = { "stop" };
	return call("stop", ctl, fields, 1);
}

static void sync_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid check [--wait] [--range=START-END] [--cancel] ARRAY\n"
		"       uraid repair [--wait] [--range=START-END] ARRAY\n"
		"       uraid speed [--min=KIB/S] [--max=KIB/S] ARRAY\n"
		"\n"
		"Background work on a served RAID 1/4/5/6/10 array (md's sync_action). On\n"
		"RAID 4/5/6 check reads every stripe, computes the parity from the data and\n"
		"counts the 4 KiB pages where it differs; on RAID 1/10 it compares every copy\n"
		"with the first and counts the 64 KiB blocks that differ, once per copy (both\n"
		"md's mismatch_cnt, in sectors). repair also rewrites the parity, or the\n"
		"differing copies from the first. Both run alongside the clients, at 3 %% over\n"
		"--min while they are busy and up to --max when idle (md's speed_limit_min/max;\n"
		"defaults 1000 and 200000 KiB/s per member). uraid status shows the progress.\n"
		"\n"
		"  -w, --wait     wait for the end; exit 1 if it failed or (check) found mismatches;\n"
		"                 on a terminal a line shows the progress, rate and time left\n"
		"  -x, --cancel   stop the running check, repair or resync\n"
		"  -r, --range=START-END  only the part of the array that holds these bytes\n"
		"                 (K, M, G, T suffixes; END left out: to the end), widened to\n"
		"                 whole stripe rows; a repair of a part does not end a resync\n"
		"      --min=N    (speed) KiB/s per member held while clients are busy\n"
		"      --max=N    (speed) KiB/s per member at most when the array is idle\n"
		"  -h, --help     this text\n");
}

/* A sync-status answer: the running or last job, or job `job` (0: the current one). */
struct sync_line {
	int kind, running, result, of_array;
	unsigned long long done, total, mism, job;
};

static int sync_status(const char *ctl, unsigned long long job, struct sync_line *sl, char *msg,
		       size_t msglen)
{
	char num[32], *body = NULL;
	size_t len = 0;
	const char *fields[2] = { "sync-status", num };
	FILE *f = open_memstream(&body, &len);

	snprintf(num, sizeof(num), "%llu", job);
	memset(sl, 0, sizeof(*sl));
	int rc = f ? ctl_call(ctl, fields, job ? 2 : 1, f, msg, msglen) : -ENOMEM;
	if (f)
		fclose(f);
	if (rc == 0 && (!body || sscanf(body, "%d %d %llu %llu %llu %d %d %llu", &sl->kind,
					 &sl->running, &sl->done, &sl->total, &sl->mism,
					 &sl->result, &sl->of_array, &sl->job) < 6)) {
		snprintf(msg, msglen, "bad answer");
		rc = -EPROTO;
	}
	free(body);
	return rc;
}

/* The job of `kind` numbered after `after` (0: none has started yet). */
static unsigned long long find_job(const char *ctl, int kind, unsigned long long after)
{
	struct sync_line cur, sl;
	char msg[256];

	if (sync_status(ctl, 0, &cur, msg, sizeof(msg)) != 0)
		return 0;
	for (unsigned long long j = after + 1; j <= cur.job; j++)
		if (sync_status(ctl, j, &sl, msg, sizeof(msg)) == 0 && sl.kind == kind)
			return j;
	return 0;
}

/*
 * Poll until the work ends; the exit status says how it went. A check or a
 * repair follows its own job (the first of its kind numbered after `after`):
 * the job that starts when it ends (a resync resumed, a rebuild) is not
 * waited for. A replacement may wait for other work to end first: its own
 * end counts.
 */
static int wait_sync(const char *cmd, const char *ctl, unsigned long long after)
{
	bool replace = !strcmp(cmd, "replace");
	int kind = !strcmp(cmd, "check") ? URAID_SYNC_CHECK : !strcmp(cmd, "repair")
		   ? URAID_SYNC_REPAIR : URAID_SYNC_REPLACE;
	unsigned long long job = 0;
	struct progress pg;

	progress_begin(&pg, stderr);
	for (unsigned idle = 0;; idle++) {
		struct sync_line sl;
		char msg[256];
		if (!replace && !job)
			job = find_job(ctl, kind, after);
		int rc = sync_status(ctl, job, &sl, msg, sizeof(msg));
		if (rc) {
			progress_end(&pg);
			fprintf(stderr, "uraid %s: lost the server while waiting: %s\n", cmd, msg);
			return CLI_EXIT_FAIL;
		}
		const char *of = sl.of_array ? "of the array" : "per member";
		if (sl.running)
			idle = 0;       /* counts the time nothing runs */
		if (!sl.running && (replace ? sl.kind != URAID_SYNC_REPLACE : !job)) {
			if (idle > 100) {
				progress_end(&pg);
				fprintf(stderr, "uraid %s: the %s has not started; see the "
					"server's log\n", cmd, replace ? "copy" : cmd);
				return CLI_EXIT_FAIL;
			}
		} else if (!sl.running) {
			progress_end(&pg);
			const char *how = sl.result == 0 ? "completed" : sl.result == -ECANCELED
				? "stopped" : "failed";
			if (!replace)
				printf("%s %s: %llu of %llu MiB %s, mismatch_cnt %llu\n", cmd,
				       how, sl.done >> 20, sl.total >> 20, of, sl.mism);
			else
				printf("%s %s: %llu of %llu MiB %s\n", cmd, how, sl.done >> 20,
				       sl.total >> 20, of);
			return sl.result != 0 || (kind == URAID_SYNC_CHECK && sl.mism)
			       ? CLI_EXIT_FAIL : CLI_EXIT_OK;
		}
		progress_show(&pg, &(struct progress_sample){ sl.running, sl.kind, sl.job, sl.done,
							      sl.total, sl.of_array });
		struct timespec ts = { 0, 200 * 1000000L };
		nanosleep(&ts, NULL);
	}
}

static const struct option sync_longopts[] = {
	{ "wait", no_argument, NULL, 'w' },
	{ "cancel", no_argument, NULL, 'x' },
	{ "range", required_argument, NULL, 'r' },
	{ "min", required_argument, NULL, 'm' },
	{ "max", required_argument, NULL, 'M' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* --range=START-END (END may be left out) into two decimal byte counts. */
static int parse_range(const char *arg, char *start, char *length, size_t n)
{
	const char *dash = strchr(arg, '-');
	char first[64];
	uint64_t a, b = 0;

	if (!dash || (size_t)(dash - arg) >= sizeof(first))
		return -EINVAL;
	memcpy(first, arg, (size_t)(dash - arg));
	first[dash - arg] = 0;
	if (cli_parse_size(first, 1, &a) || (dash[1] && (cli_parse_size(dash + 1, 1, &b) || b <= a)))
		return -EINVAL;
	snprintf(start, n, "%llu", (unsigned long long)a);
	snprintf(length, n, "%llu", (unsigned long long)(dash[1] ? b - a : 0));
	return 0;
}

static int sync_cmd(int argc, char **argv, const char *cmd)
{
	bool wait = false, cancel = false;
	const char *lo = "0", *hi = "0", *range = NULL;
	char r_start[32], r_len[32];
	char ctl[CTL_MAX_LINE], *end;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "wxr:h", sync_longopts, NULL)) != -1) {
		switch (c) {
		case 'w': wait = true; break;
		case 'x': cancel = true; break;
		case 'r': range = optarg; break;
		case 'm': lo = optarg; break;
		case 'M': hi = optarg; break;
		case 'h': sync_usage(stdout); return CLI_EXIT_OK;
		default: sync_usage(stderr); return CLI_EXIT_USAGE;
		}
	}
	bool speed = !strcmp(cmd, "speed");
	if (range && parse_range(range, r_start, r_len, sizeof(r_start))) {
		fprintf(stderr, "uraid %s: --range=%s: want START-END in bytes (K, M, G, T "
			"suffixes), END above START or left out\n", cmd, range);
		return CLI_EXIT_USAGE;
	}
	if ((range && (speed || cancel)) || (cancel && strcmp(cmd, "check")) ||
	    (speed && (wait || cancel)) ||
	    (!speed && (strcmp(lo, "0") || strcmp(hi, "0"))) ||
	    strtoul(lo, &end, 10) > 0xffffffffUL || *end || strtoul(hi, &end, 10) > 0xffffffffUL ||
	    *end || argc - optind > 1) {
		sync_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if ((rc = resolve_target(cmd, optind < argc ? argv[optind] : NULL, ctl, sizeof(ctl))) != 0)
		return rc;
	if (speed) {
		const char *fields[3] = { "speed", lo, hi };
		return call(cmd, ctl, fields, 3);
	}
	/* the job number before it, to know ours (a server that gives none: 0) */
	struct sync_line before;
	char msg[256];
	if (wait && sync_status(ctl, 0, &before, msg, sizeof(msg)) != 0)
		before.job = 0;
	const char *fields[3] = { cancel ? "sync-cancel" : cmd, r_start, r_len };
	rc = call(cmd, ctl, fields, range ? 3 : 1);
	if (rc || !wait)
		return rc;
	return wait_sync(cmd, ctl, before.job);
}

int cmd_check(int argc, char **argv)
{
	return sync_cmd(argc, argv, "check");
}

int cmd_repair(int argc, char **argv)
{
	return sync_cmd(argc, argv, "repair");
}

int cmd_speed(int argc, char **argv)
{
	return sync_cmd(argc, argv, "speed");
}

static void add_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid add [--force] ARRAY DEVICE...\n"
		"\n"
		"Add devices to a served array as spares, as mdadm --add does: each gets a\n"
		"superblock of the array (its own device number and UUID, the array's data\n"
		"offset), and a missing slot is rebuilt onto it by itself (RAID 1/4/5/6/10).\n"
		"ARRAY: the export name, the export socket or the control socket.\n"
		"A former member of the array (failed and removed) whose slot is still empty\n"
		"is re-added when the array has a write-intent bitmap and the member left\n"
		"after the bitmap last let bits go: it takes its slot back and only the\n"
		"chunks written since it left are rebuilt (mdadm --re-add). Any other device\n"
		"that holds an md superblock is refused unless --force.\n"
		"\n"
		"  -f, --force   overwrite an md superblock on the device (a former member\n"
		"                that cannot be re-added is then rebuilt in full)\n"
		"  -h, --help    this text\n");
}

int cmd_add(int argc, char **argv)
{
	struct ctl_args ca;
	char ctl[CTL_MAX_LINE];
	int rc = parse(argc, argv, "f", add_usage, &ca);
	if (rc >= 0)
		return rc;
	if (argc - ca.first < 2) {
		fprintf(stderr, "uraid add: give the array and at least one device; run 'uraid add "
			"--help'\n");
		return CLI_EXIT_USAGE;
	}
	if ((rc = resolve_target("add", argv[ca.first], ctl, sizeof(ctl))) != 0)
		return rc;
	int status = CLI_EXIT_OK;
	for (int i = ca.first + 1; i < argc; i++) {
		char abs[PATH_MAX];
		const char *fields[3] = { "add", absolute(argv[i], abs), "force" };
		rc = call("add", ctl, fields, ca.force ? 3 : 2);
		if (rc)
			status = rc;
	}
	return status;
}

static void replace_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid replace [--wait] [--force] [--control=PATH] OLD NEW\n"
		"\n"
		"Replace member OLD of a served RAID 1/4/5/6/10 array by NEW, as mdadm --replace\n"
		"OLD --with NEW: NEW (a spare of the array, or a device added as one now)\n"
		"gets a copy of OLD's slot in the background while OLD goes on serving, and\n"
		"every write reaches both; then NEW holds the slot and OLD is marked faulty\n"
		"(uraid remove takes it out). The array keeps its redundancy all along. A\n"
		"restart goes on where the copy stopped (recovery_offset), in uraid or md.\n"
		"The array is found from OLD unless --control names it.\n"
		"\n"
		"  -w, --wait           wait until NEW holds the slot (on a terminal a line\n"
		"                       shows the copy's progress, rate and time left)\n"
		"  -f, --force          overwrite an md superblock on NEW\n"
		"  -c, --control=PATH   the served array's control socket (or export socket)\n"
		"  -h, --help           this text\n");
}

int cmd_replace(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "wait", no_argument, NULL, 'w' },
		{ "force", no_argument, NULL, 'f' },
		{ "control", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	bool wait = false, force = false;
	const char *control = NULL;
	char ctl[CTL_MAX_LINE], abs_old[PATH_MAX], abs_new[PATH_MAX];
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "wfc:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'w': wait = true; break;
		case 'f': force = true; break;
		case 'c': control = optarg; break;
		case 'h': replace_usage(stdout); return CLI_EXIT_OK;
		default: replace_usage(stderr); return CLI_EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		replace_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	const char *old = absolute(argv[optind], abs_old);
	if (control) {
		if ((rc = resolve_target("replace", control, ctl, sizeof(ctl))) != 0)
			return rc;
	} else {
		const char *owns[2] = { "owns", old };
		struct find_ctx fc = { .fields = owns, .nfields = 2 };
		if (each_served("replace", find_one, &fc) < 0)
			return CLI_EXIT_FAIL;
		if (!fc.matches) {
			if (!report_busy("replace", &fc))
				fprintf(stderr, "uraid replace: %s is not a member of any served "
					"array\n", argv[optind]);
			return CLI_EXIT_FAIL;
		}
		snprintf(ctl, sizeof(ctl), "%s", fc.found);
	}
	const char *fields[4] = { "replace", old, absolute(argv[optind + 1], abs_new), "force" };
	rc = call("replace", ctl, fields, force ? 4 : 3);
	if (rc || !wait)
		return rc;
	return wait_sync("replace", ctl, 0);
}
