// SPDX-License-Identifier: MIT
/*
 * uraid status | fail | remove | stop | check | repair | speed | add |
 * replace: commands for a running `uraid serve`, sent over its control
 * socket (ctl/ctl.h; the server's side is serve_ctl.c). One rule for all:
 * ARRAY comes first where an array is named (as `mdadm /dev/md0 --fail`),
 * ARRAY being an export name, the export socket or the control socket;
 * fail, remove and replace also find the array from a member's path alone
 * when exactly one served array has it. Every argument is checked before
 * the first change is asked for.
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
#include "common/range_path.h"

struct find_ctx {
	const char *const *fields;      /* the request that identifies the server */
	unsigned nfields;
	char found[CTL_MAX_LINE];
	char body[CTL_MAX_LINE];        /* the first match's answer */
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
	int rc = f ? ctl_call(ctl_path, fc->fields, fc->nfields, f, msg, sizeof(msg)) : -ENOMEM;
	if (f)
		fclose(f);
	if (rc > 0 && !strcmp(msg, CTL_BUSY))
		fc->busy++;
	if (rc == 0) {
		if (!fc->matches) {
			snprintf(fc->found, sizeof(fc->found), "%s", ctl_path);
			snprintf(fc->body, sizeof(fc->body), "%.*s", (int)len, body ? body : "");
		}
		fc->matches++;
	}
	free(body);
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

/* POOL/VOLUME: a volume of a pool served whole (one '/', neither first nor
 * last, and no file of that path here). */
static bool volume_syntax(const char *target)
{
	const char *slash = strchr(target, '/');
	struct stat st;
	return slash && slash != target && slash[1] && !strchr(slash + 1, '/') &&
	       target[0] != '.' && lstat(target, &st) != 0;
}

/*
 * A pool served whole is not listed itself: its volumes are, and each
 * answers "pool-is POOL" with the pool's control socket. That socket into
 * out; the count of pools of that name found (0: none, out untouched).
 */
static int find_pool(const char *cmd, const char *name, char *out, size_t len)
{
	const char *req[2] = { "pool-is", name };
	struct find_ctx fc = { .fields = req, .nfields = 2 };
	if (each_served(cmd, find_one, &fc) < 0)
		return -1;
	if (!fc.matches)
		return 0;
	fc.body[strcspn(fc.body, "\n")] = 0;
	snprintf(out, len, "%s", fc.body);
	return 1;
}

/*
 * The control socket for TARGET: a path (with a '/', or naming a socket
 * that exists: a control socket or an export socket), else an export name
 * among the served arrays (a pool's volume: VOLUME or POOL/VOLUME), else
 * the name of a pool served whole. NULL target: the only served array. 0,
 * or an exit status after a message.
 */
/* pools_ok: a pool's name may stand for its control socket (false for the
   watch, whose view is of arrays: a pool is refused with how to name them). */
static int resolve_target_in(const char *cmd, const char *target, char *out, size_t len,
			     bool pools_ok)
{
	if (target && ((strchr(target, '/') && !volume_syntax(target)) || is_socket(target))) {
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
	if (target && fc.matches == 0 && !strchr(target, '/')) {
		int pools = find_pool(cmd, target, out, len);
		if (pools < 0)
			return CLI_EXIT_FAIL;
		if (pools > 0 && !pools_ok) {
			fprintf(stderr, "uraid %s: --watch shows arrays, and '%s' is a pool: watch "
				"every volume with 'uraid status --watch', or one with %s/VOLUME\n",
				cmd, target, target);
			return CLI_EXIT_USAGE;
		}
		if (pools > 0)
			return 0;
	}
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

static int resolve_target(const char *cmd, const char *target, char *out, size_t len)
{
	return resolve_target_in(cmd, target, out, len, true);
}

/* The watch's: arrays only. Asked inside the watch's loop, where Ctrl-C
   during a stuck server's answer ends the watch as a user expects. */
static int resolve_watch_target(const char *cmd, const char *target, char *out, size_t len)
{
	return resolve_target_in(cmd, target, out, len, false);
}

/* Send a request, print the body (to `to`: stdout, or a buffer for JSON),
 * turn the answer into an exit status. */
static int call_to(const char *cmd, const char *ctl, const char *const *fields, unsigned n,
		   FILE *to)
{
	char msg[CTL_MAX_LINE];
	int rc = ctl_call(ctl, fields, n, to, msg, sizeof(msg));
	fflush(to);
	if (rc < 0) {
		fprintf(stderr, "uraid %s: %s\n", cmd, msg);
		return CLI_EXIT_FAIL;
	}
	if (rc > 0)
		fprintf(stderr, "uraid %s: %s\n", cmd, msg);
	return rc;
}

static int call(const char *cmd, const char *ctl, const char *const *fields, unsigned n)
{
	return call_to(cmd, ctl, fields, n, stdout);
}

int cli_pool_control(const char *name, char *ctl, size_t len)
{
	char err[512];
	const char *req[2] = { "pool-is", name };
	struct find_ctx fc = { .fields = req, .nfields = 2 };
	if (ctl_for_each(find_one, &fc, err, sizeof(err)) < 0 || !fc.matches)
		return 0;
	fc.body[strcspn(fc.body, "\n")] = 0;
	snprintf(ctl, len, "%s", fc.body);
	return 1;
}

int cli_ctl_target(const char *cmd, const char *target, char *ctl, size_t len)
{
	return resolve_target(cmd, target, ctl, len);
}

int cli_ctl_call(const char *cmd, const char *ctl, const char *const *fields, unsigned n)
{
	return call(cmd, ctl, fields, n);
}

/* A request whose answer is read, not shown: its body in *body (malloc'd,
 * NUL-terminated), or an exit status after a message. */
static int ask(const char *cmd, const char *ctl, const char *const *fields, unsigned n,
	       char **body)
{
	size_t len = 0;
	*body = NULL;
	FILE *f = open_memstream(body, &len);
	if (!f) {
		fprintf(stderr, "uraid %s: out of memory\n", cmd);
		return CLI_EXIT_FAIL;
	}
	int rc = call_to(cmd, ctl, fields, n, f);
	fclose(f);
	if (rc) {
		free(*body);
		*body = NULL;
	}
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
	{ "test", no_argument, NULL, 't' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct ctl_args {
	bool json, force, test;
	const char *control;
	int first;                      /* index of the first operand */
};

/* The options in `allowed` (their short letters); -1 to go on, or the exit
 * status (help printed, or one line about a wrong option). */
static int parse(int argc, char **argv, const char *cmd, const char *allowed,
		 void (*usage)(FILE *), struct ctl_args *ca)
{
	int c;
	optind = 1;
	opterr = 0;
	memset(ca, 0, sizeof(*ca));
	while ((c = getopt_long(argc, argv, ":jc:fth", ctl_longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CLI_EXIT_OK;
		}
		if (c == '?' || c == ':' || !strchr(allowed, c))
			return cli_bad_option(cmd, argv);
		if (c == 'j')
			ca->json = true;
		else if (c == 'c')
			ca->control = optarg;
		else if (c == 'f')
			ca->force = true;
		else if (c == 't')
			ca->test = true;
	}
	ca->first = optind;
	return -1;
}

static void status_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid status [--json] [--test] [ARRAY]\n"
		"       uraid status --watch[=SECONDS] [--count=N] [ARRAY]\n"
		"\n"
		"Without ARRAY: one line for each array served on this machine. With ARRAY\n"
		"(an export name, the export socket, or the control socket): its state,\n"
		"members with their I/O counters, connections, and background work. A pool\n"
		"served whole (serve --pool): ARRAY may be POOL (every volume in turn) or\n"
		"POOL/VOLUME.\n"
		"\n"
		"  -j, --json   the state as one JSON object (docs/json.md); without ARRAY,\n"
		"               a JSON list of the served arrays, one object each\n"
		"  -t, --test   exit status as mdadm --detail --test: 0 every slot in sync,\n"
		"               1 degraded, 2 failed (more slots lost than the level survives),\n"
		"               4 the array could not be reached\n"
		"      --watch[=S]\n"
		"               a live view, refreshed every S seconds (default 2, from 0.1):\n"
		"               per member reads and writes per second and MiB/s over the\n"
		"               last interval (the first view has none yet: -), member\n"
		"               states, background work with progress, rate and time left,\n"
		"               connections; of ARRAY, or of every served array. On a\n"
		"               terminal it redraws in place; otherwise one plain block per\n"
		"               refresh. Ends on Ctrl-C (exit 0), or when ARRAY stops being\n"
		"               served (one line, exit 1); a server not answering keeps its\n"
		"               last view, marked so\n"
		"      --count=N\n"
		"               with --watch: stop after N views (exit 0)\n"
		"  -h, --help   this text\n");
}

/* --test: the served array's health as the exit status (4: not reached). */
static int health(const char *cmd, const char *ctl)
{
	const char *fields[1] = { "health" };
	char *body = NULL;
	int code = 4;

	if (ask(cmd, ctl, fields, 1, &body) == 0 && body && sscanf(body, "%d", &code) == 1 &&
	    (code < 0 || code > 2))
		code = 4;
	free(body);
	return code;
}

int cmd_status(int argc, char **argv)
{
	struct ctl_args ca;
	struct status_watch_opts wo;
	char ctl[CTL_MAX_LINE];
	int rc = status_watch_opts(&argc, argv, &wo);
	if (rc >= 0 || (rc = parse(argc, argv, "status", "jct", status_usage, &ca)) >= 0)
		return rc;
	const char *target = ca.control ? ca.control : (ca.first < argc ? argv[ca.first] : NULL);
	if (argc - ca.first > 1) {
		fprintf(stderr, "uraid status: one ARRAY at most; see 'uraid status --help'\n");
		return CLI_EXIT_USAGE;
	}
	if (wo.interval_ms)
		return status_watch(&wo, target, ca.json, resolve_watch_target);
	if (!target && ca.json && !ca.test) {
		unsigned n = 0;
		if (each_served("status", list_one_json, &n) < 0)
			return CLI_EXIT_FAIL;
		printf("%s\n", n ? "\n]" : "[]");
		return CLI_EXIT_OK;
	}
	if (!target && !ca.test) {
		unsigned n = 0;
		if (each_served("status", list_one, &n) < 0)
			return CLI_EXIT_FAIL;
		if (!n)
			printf("no array is being served on this machine\n");
		return CLI_EXIT_OK;
	}
	/* --test without ARRAY: the only served array, as mdadm needs one */
	if ((rc = resolve_target("status", target, ctl, sizeof(ctl))) != 0)
		return ca.test ? 4 : rc;
	const char *fields[1] = { ca.json ? "status-json" : "status" };
	rc = call("status", ctl, fields, 1);
	if (!ca.test)
		return rc;
	return rc ? 4 : health("status", ctl);
}

static void fail_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid fail [--force] [--json] [ARRAY] MEMBER...\n"
		"       uraid fail [--force] [--json] ARRAY detached\n"
		"\n"
		"Mark members of a served array faulty, as mdadm ARRAY --fail does: the array\n"
		"goes on degraded. Failing a member whose loss the array cannot survive is\n"
		"refused unless --force (RAID 4/5/6; md never fails the last copy of RAID\n"
		"0/1/10). ARRAY (an export name, the export socket or the control socket) may\n"
		"be left out when each MEMBER belongs to one served array only. 'detached'\n"
		"stands for every member whose device or file is gone (deleted, or a block\n"
		"device gone from the system; a renamed file is not). Every MEMBER is checked\n"
		"before the first is failed: a wrong one changes nothing. Several members\n"
		"failed together may be more than the array survives: as mdadm, they are\n"
		"failed in turn, and from the first one it cannot lose on they are refused.\n"
		"A file named 'detached' is written ./detached. A pool served whole (serve\n"
		"--pool): ARRAY POOL and MEMBER a drive of the pool fail the drive in every\n"
		"volume; a volume is VOLUME or POOL/VOLUME.\n"
		"\n"
		"  -f, --force          fail it even though the array will fail\n"
		"  -j, --json           what changed, as JSON (docs/json.md)\n"
		"  -c, --control=PATH   the same as ARRAY (older spelling)\n"
		"  -h, --help           this text\n");
}

static void remove_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid remove [--json] [ARRAY] MEMBER...\n"
		"       uraid remove [--json] ARRAY failed|detached\n"
		"\n"
		"Take faulty, spare or stale members out of a served array, as mdadm ARRAY\n"
		"--remove does: the device is released and the other members' superblocks\n"
		"forget it. A member in sync or being rebuilt is refused: fail it first. ARRAY (an export name, the\n"
		"export socket or the control socket) may be left out when each MEMBER belongs\n"
		"to one served array only. 'failed' stands for every faulty member, 'detached'\n"
		"for every member whose device or file is gone. Every MEMBER is checked before\n"
		"the first is removed: a wrong one changes nothing. A file named 'failed' or\n"
		"'detached' is written ./failed, ./detached.\n"
		"\n"
		"  -j, --json           what changed, as JSON (docs/json.md)\n"
		"  -c, --control=PATH   the same as ARRAY (older spelling)\n"
		"  -h, --help           this text\n");
}

/* The server runs elsewhere: paths go to it absolute (as given if that fails). */
static const char *absolute(const char *path, char *buf)
{
	struct uraid_range_path r;
	char file[PATH_MAX];

	if (realpath(path, buf))
		return buf;
	/* a range of a file (a pool's partition): the file's absolute path, the same range */
	if (uraid_range_path_parse(path, &r, NULL, 0) == 0 && r.ranged && realpath(r.path, file) &&
	    snprintf(buf, PATH_MAX, "%s@%llu+%llu", file, (unsigned long long)r.start,
		     (unsigned long long)r.sectors) < PATH_MAX)
		return buf;
	return path;
}

int cli_served_owner(const char *cmd, const char *path, char *name, size_t len)
{
	char abs[PATH_MAX], *body = NULL;
	const char *owns[2] = { "owns", absolute(path, abs) };
	struct find_ctx fc = { .fields = owns, .nfields = 2 };

	if (each_served(cmd, find_one, &fc) < 0)
		return -1;
	if (report_busy(cmd, &fc))
		return -1;
	snprintf(name, len, "?");
	if (fc.matches) {
		const char *fields[1] = { "name" };
		if (ask(cmd, fc.found, fields, 1, &body) == 0 && body && *body)
			snprintf(name, len, "%.*s", (int)strcspn(body, "\n"), body);
		free(body);
	}
	return (int)fc.matches;
}

/*
 * Is the first operand an ARRAY? A socket, or a word without '/' that is a
 * served array's export name, is an array; another path is a member. A word
 * that is both a file here and an export name is refused as ambiguous. 1
 * yes, 0 no, or -1 for a failure already reported.
 */
static int names_array(const char *cmd, const char *op)
{
	struct stat st;
	bool is_file = stat(op, &st) == 0;
	if (is_file && S_ISSOCK(st.st_mode))
		return 1;
	if (strchr(op, '/') && !volume_syntax(op))
		return 0;
	const char *req[2] = { "export-is", op };
	struct find_ctx fc = { .fields = req, .nfields = 2 };
	if (each_served(cmd, find_one, &fc) < 0)
		return -1;
	char pool_ctl[CTL_MAX_LINE];
	if (!fc.matches && !strchr(op, '/')) {
		int pools = find_pool(cmd, op, pool_ctl, sizeof(pool_ctl));
		if (pools < 0)
			return -1;
		fc.matches = (unsigned)pools;
	}
	if (is_file && fc.matches) {
		fprintf(stderr, "uraid %s: '%s' is both a file here and a served array's name; "
			"write ./%s for the file, or name the array by its socket (see 'uraid "
			"status'); nothing was changed\n", cmd, op, op);
		return -1;
	}
	return fc.matches > 0;
}

/* One member a verb acts on, resolved and checked before any change. */
struct target_member {
	char ctl[CTL_MAX_LINE];
	char path[CTL_MAX_LINE];        /* as the server knows it: sent back as is */
	char state[32];
	char export_name[256];
};

struct target_list {
	struct target_member *v;
	unsigned n, cap;
};

/* Add one (once: the same member named twice is acted on once). */
static int push_member(struct target_list *tl, const char *ctl, const char *path,
		       const char *state)
{
	for (unsigned i = 0; i < tl->n; i++)
		if (!strcmp(tl->v[i].ctl, ctl) && !strcmp(tl->v[i].path, path))
			return 0;
	if (tl->n == tl->cap) {
		unsigned cap = tl->cap ? tl->cap * 2 : 8;
		struct target_member *v = realloc(tl->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		tl->v = v;
		tl->cap = cap;
	}
	struct target_member *t = &tl->v[tl->n++];
	memset(t, 0, sizeof(*t));
	snprintf(t->ctl, sizeof(t->ctl), "%s", ctl);
	snprintf(t->path, sizeof(t->path), "%s", path);
	snprintf(t->state, sizeof(t->state), "%s", state);
	return 0;
}

/* "STATE\tPATH\n" of an owns answer into its two fields (in place). */
static bool split_owns(char *body, char **state, char **path)
{
	char *tab = strchr(body, '\t');
	if (!tab)
		return false;
	*tab = 0;
	*state = body;
	*path = tab + 1;
	(*path)[strcspn(*path, "\n")] = 0;
	return **path != 0;
}

/* MEMBER on the array at ctl: 0, or an exit status after one line. */
static int resolve_member_on(const char *cmd, const char *ctl, const char *arg,
			     struct target_list *tl)
{
	char abs[PATH_MAX], *body = NULL, *state, *path;
	const char *owns[2] = { "owns", absolute(arg, abs) };
	int rc = ask(cmd, ctl, owns, 2, &body);
	if (rc)
		return rc;
	/* an older server answers ok without the state: the state is unknown
	   here, and the server enforces its rules itself */
	if (!body || !split_owns(body, &state, &path)) {
		state = "unknown";
		path = (char *)owns[1];
	}
	rc = push_member(tl, ctl, path, state) ? CLI_EXIT_FAIL : 0;
	free(body);
	return rc;
}

/* MEMBER alone: the one served array that has it. */
static int resolve_member_anywhere(const char *cmd, const char *arg, struct target_list *tl)
{
	char abs[PATH_MAX], *state, *path;
	const char *owns[2] = { "owns", absolute(arg, abs) };
	struct find_ctx fc = { .fields = owns, .nfields = 2 };

	if (each_served(cmd, find_one, &fc) < 0)
		return CLI_EXIT_FAIL;
	if (!fc.matches) {
		if (!report_busy(cmd, &fc))
			fprintf(stderr, "uraid %s: %s is not a member of any served array (nor an "
				"array's name); see 'uraid status'\n", cmd, arg);
		return CLI_EXIT_FAIL;
	}
	if (fc.matches > 1) {
		fprintf(stderr, "uraid %s: %u served arrays have %s; name the array first "
			"('uraid %s ARRAY %s')\n", cmd, fc.matches, arg, cmd, arg);
		return CLI_EXIT_FAIL;
	}
	if (!split_owns(fc.body, &state, &path)) {
		state = "unknown";      /* an older server: it enforces its rules itself */
		path = (char *)owns[1];
	}
	return push_member(tl, fc.found, path, state) ? CLI_EXIT_FAIL : 0;
}

/*
 * The array's export name and, for a keyword ("failed": faulty members,
 * "detached": members whose device is gone; NULL: none), its members. 0 or
 * an exit status after a message.
 */
static int array_members(const char *cmd, const char *ctl, const char *keyword,
			 char *export_name, size_t len, struct target_list *tl)
{
	/* the name alone is cheap; whether a device is gone is asked only for
	   "detached" */
	bool detached = keyword && !strcmp(keyword, "detached");
	const char *fields[2] = { keyword ? "members" : "name", "detached" };
	char *body = NULL, msg[CTL_MAX_LINE];
	size_t blen = 0;
	int rc;
	if (!keyword) {
		/* an older server without "name" refuses it: the name is unknown */
		FILE *f = open_memstream(&body, &blen);
		rc = f ? ctl_call(ctl, fields, 1, f, msg, sizeof(msg)) : -ENOMEM;
		if (f)
			fclose(f);
		if (rc < 0) {
			fprintf(stderr, "uraid %s: %s\n", cmd, f ? msg : "out of memory");
			free(body);
			return CLI_EXIT_FAIL;
		}
		snprintf(export_name, len, "%.*s", rc == 0 && body ? (int)strcspn(body, "\n") : 1,
			 rc == 0 && body ? body : "?");
		free(body);
		return 0;
	}
	rc = ask(cmd, ctl, fields, detached ? 2 : 1, &body);
	if (rc)
		return rc;
	for (char *line = body, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		char *f[5] = { 0 };
		unsigned nf = 0;
		for (char *p = line; p && nf < 5; nf++) {
			f[nf] = p;
			p = strchr(p, '\t');
			if (p)
				*p++ = 0;
		}
		if (nf == 2 && !strcmp(f[0], "export")) {
			snprintf(export_name, len, "%s", f[1]);
		} else if (nf == 4 && !strcmp(f[0], "member")) {
			bool pick = !strcmp(keyword, "failed") ? !strcmp(f[1], "faulty")
				    : !strcmp(f[2], "1");
			if (pick && push_member(tl, ctl, f[3], f[1])) {
				rc = CLI_EXIT_FAIL;
				break;
			}
		}
	}
	free(body);
	return rc;
}

static bool is_keyword(const char *cmd, const char *arg)
{
	return !strcmp(arg, "detached") || (!strcmp(cmd, "remove") && !strcmp(arg, "failed"));
}

/* The JSON of fail, remove and add: what changed. */
static void json_changes(const char *cmd, const struct target_list *tl, const int *result,
			 const char *const *how)
{
	struct json j;

	json_begin(&j, stdout);
	json_obj_open(&j, NULL);
	json_u64(&j, "version", CLI_JSON_VERSION);
	json_str(&j, "command", cmd);
	json_arr_open(&j, "changes");
	for (unsigned i = 0; i < tl->n; i++) {
		json_obj_open(&j, NULL);
		json_str(&j, "array", tl->v[i].export_name);
		json_str(&j, "control", tl->v[i].ctl);
		json_str(&j, "device", tl->v[i].path);
		if (tl->v[i].state[0])
			json_str(&j, "before", tl->v[i].state);
		else
			json_null(&j, "before");        /* a device added: none */
		json_bool(&j, "done", result[i] == 0);
		if (result[i] == 0)
			json_str(&j, "after", how[i]);
		else
			json_null(&j, "after");
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_obj_close(&j);
	json_end(&j);
}

/*
 * fail/remove: [ARRAY] MEMBER... Every MEMBER is resolved (keywords
 * expanded) and checked first; only then is anything asked to change.
 */
static int member_cmd(int argc, char **argv, const char *cmd, void (*usage)(FILE *))
{
	struct ctl_args ca;
	char ctl[CTL_MAX_LINE];
	bool fail = !strcmp(cmd, "fail");
	int rc = parse(argc, argv, cmd, fail ? "cfj" : "cj", usage, &ca);
	if (rc >= 0)
		return rc;
	int first = ca.first;
	const char *array = ca.control;
	if (!array && first < argc && !is_keyword(cmd, argv[first])) {
		int is = names_array(cmd, argv[first]);
		if (is < 0)
			return CLI_EXIT_FAIL;
		if (is)
			array = argv[first++];
	}
	if (first >= argc) {
		fprintf(stderr, "uraid %s: which member%s%s? see 'uraid %s --help'\n", cmd,
			array ? " of " : "", array ? array : "", cmd);
		return CLI_EXIT_USAGE;
	}
	rc = array ? resolve_target(cmd, array, ctl, sizeof(ctl)) : 0;
	if (rc)
		return rc;

	struct target_list tl = { 0 };
	char name[256] = "";
	for (int i = first; i < argc && !rc; i++) {
		if (is_keyword(cmd, argv[i])) {
			/* a keyword without ARRAY: the only served array */
			if (!array && (rc = resolve_target(cmd, NULL, ctl, sizeof(ctl))) != 0)
				break;
			rc = array_members(cmd, ctl, argv[i], name, sizeof(name), &tl);
		} else if (array) {
			rc = resolve_member_on(cmd, ctl, argv[i], &tl);
		} else {
			rc = resolve_member_anywhere(cmd, argv[i], &tl);
		}
	}
	/* each array's name, for the messages and the JSON */
	for (unsigned i = 0; i < tl.n && !rc; i++) {
		if (i && !strcmp(tl.v[i].ctl, tl.v[i - 1].ctl))
			memcpy(tl.v[i].export_name, tl.v[i - 1].export_name,
			       sizeof(tl.v[i].export_name));
		else
			rc = array_members(cmd, tl.v[i].ctl, NULL, tl.v[i].export_name,
					   sizeof(tl.v[i].export_name), NULL);
	}
	/*
	 * md's rule, checked here so that nothing is removed before a refusal:
	 * only a faulty, spare or stale member leaves (a spare being rebuilt
	 * into a slot shows as rebuilding or replacing, and is refused too).
	 * "unknown" (an older server that does not say) is left to the server.
	 * fail is not checked so: several members failed together may be more
	 * than the array survives; as mdadm, the server fails them in turn and
	 * refuses the first one the array cannot lose.
	 */
	for (unsigned i = 0; i < tl.n && !rc && !fail; i++) {
		const char *s = tl.v[i].state;
		if (strcmp(s, "faulty") && strcmp(s, "spare") && strcmp(s, "stale") &&
		    strcmp(s, "unknown")) {
			fprintf(stderr, "uraid remove: %s is %s in '%s'; fail it first "
				"('uraid fail %s %s'), nothing was removed\n", tl.v[i].path, s,
				tl.v[i].export_name, tl.v[i].export_name, tl.v[i].path);
			rc = CLI_EXIT_FAIL;
		}
	}
	if (rc) {
		free(tl.v);
		return rc;
	}
	if (!tl.n && !ca.json)
		printf("%s: no member is %s\n", cmd, argv[first]);

	int status = CLI_EXIT_OK;
	int *result = calloc(tl.n + 1, sizeof(*result));
	const char **how = calloc(tl.n + 1, sizeof(*how));
	if (!result || !how) {
		fprintf(stderr, "uraid %s: out of memory\n", cmd);
		status = CLI_EXIT_FAIL;
	}
	for (unsigned i = 0; i < tl.n && result && how; i++) {
		const char *fields[3] = { cmd, tl.v[i].path, "force" };
		char *body = NULL;
		result[i] = ca.json ? ask(cmd, tl.v[i].ctl, fields, ca.force ? 3 : 2, &body)
			    : call(cmd, tl.v[i].ctl, fields, ca.force ? 3 : 2);
		how[i] = fail ? "faulty" : "removed";
		free(body);
		if (result[i])
			status = result[i];
	}
	if (ca.json && result && how)
		json_changes(cmd, &tl, result, how);
	free(result);
	free(how);
	free(tl.v);
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
	int rc = parse(argc, argv, "stop", "c", stop_usage, &ca);
	if (rc >= 0)
		return rc;
	const char *target = ca.control ? ca.control : (ca.first < argc ? argv[ca.first] : NULL);
	if (argc - ca.first > (ca.control ? 0 : 1)) {
		fprintf(stderr, "uraid stop: one ARRAY at most; see 'uraid stop --help'\n");
		return CLI_EXIT_USAGE;
	}
	if ((rc = resolve_target("stop", target, ctl, sizeof(ctl))) != 0)
		return rc;
	const char *fields[1] = { "stop" };
	return call("stop", ctl, fields, 1);
}

static void sync_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid check [--wait [--json]] [--range=START-END] [--cancel] [ARRAY]\n"
		"       uraid repair [--wait [--json]] [--range=START-END] [ARRAY]\n"
		"       uraid speed [--json] [--min=KIB/S] [--max=KIB/S] [ARRAY]\n"
		"\n"
		"Background work on a served RAID 1/4/5/6/10 array (md's sync_action). On\n"
		"RAID 4/5/6 check reads every stripe, computes the parity from the data and\n"
		"counts the 4 KiB pages where it differs; on RAID 1/10 it compares every copy\n"
		"with the first and counts the 64 KiB blocks that differ, once per copy (both\n"
		"md's mismatch_cnt, in sectors). repair also rewrites the parity, or the\n"
		"differing copies from the first. Both run alongside the clients, at 3 %% over\n"
		"--min while they are busy and up to --max when idle (md's speed_limit_min/max;\n"
		"defaults 1000 and 200000 KiB/s per member). uraid status shows the progress.\n"
		"ARRAY (an export name, the export socket or the control socket) may be left\n"
		"out when only one array is served.\n"
		"\n"
		"  -w, --wait     wait for the end; exit 1 if it failed or (check) found mismatches;\n"
		"                 on a terminal a line shows the progress, rate and time left\n"
		"  -x, --cancel   stop the running check, repair or resync\n"
		"  -r, --range=START-END  only the part of the array that holds these bytes\n"
		"                 (K, M, G, T suffixes; END left out: to the end), widened to\n"
		"                 whole stripe rows; a repair of a part does not end a resync\n"
		"      --min=N    (speed) KiB/s per member held while clients are busy\n"
		"      --max=N    (speed) KiB/s per member at most when the array is idle\n"
		"  -j, --json     (check and repair with --wait, speed) the outcome as JSON\n"
		"                 (docs/json.md)\n"
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

/* The end of a job waited for, as JSON. */
static void print_sync_json(const char *cmd, const char *how, const struct sync_line *sl)
{
	struct json j;

	json_begin(&j, stdout);
	json_obj_open(&j, NULL);
	json_u64(&j, "version", CLI_JSON_VERSION);
	json_str(&j, "command", cmd);
	json_str(&j, "result", how);
	json_u64(&j, "job", sl->job);
	json_u64(&j, "done_bytes", sl->done);
	json_u64(&j, "total_bytes", sl->total);
	json_bool(&j, "per_member", !sl->of_array);
	json_u64(&j, "mismatch_sectors", sl->mism);
	json_obj_close(&j);
	json_end(&j);
}

/*
 * Poll until the work ends; the exit status says how it went. A check or a
 * repair follows its own job (the first of its kind numbered after `after`):
 * the job that starts when it ends (a resync resumed, a rebuild) is not
 * waited for. A replacement may wait for other work to end first: its own
 * end counts.
 */
static int wait_sync(const char *cmd, const char *ctl, unsigned long long after, bool json)
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
			if (json)
				print_sync_json(cmd, how, &sl);
			else if (!replace)
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
	{ "json", no_argument, NULL, 'j' },
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

/* speed --json: the limits in effect after the change, from the answer's
 * "limits MIN..MAX KiB/s". */
static int speed_json(const char *ctl, const char *const *fields)
{
	char *body = NULL;
	unsigned lo, hi;
	int rc = ask("speed", ctl, fields, 3, &body);
	if (rc)
		return rc;
	const char *at = body ? strstr(body, "limits ") : NULL;
	if (!at || sscanf(at, "limits %u..%u", &lo, &hi) != 2) {
		fprintf(stderr, "uraid speed: the server's answer has no limits: %s", body ? body
			: "(empty)\n");
		free(body);
		return CLI_EXIT_FAIL;
	}
	free(body);
	struct json j;
	json_begin(&j, stdout);
	json_obj_open(&j, NULL);
	json_u64(&j, "version", CLI_JSON_VERSION);
	json_str(&j, "command", "speed");
	json_str(&j, "control", ctl);
	json_u64(&j, "min_kib_per_s", lo);
	json_u64(&j, "max_kib_per_s", hi);
	json_obj_close(&j);
	json_end(&j);
	return CLI_EXIT_OK;
}

static int sync_cmd(int argc, char **argv, const char *cmd)
{
	bool wait = false, cancel = false, json = false;
	const char *lo = "0", *hi = "0", *range = NULL;
	char r_start[32], r_len[32];
	char ctl[CTL_MAX_LINE], *end;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":wxr:jh", sync_longopts, NULL)) != -1) {
		switch (c) {
		case 'w': wait = true; break;
		case 'x': cancel = true; break;
		case 'r': range = optarg; break;
		case 'm': lo = optarg; break;
		case 'M': hi = optarg; break;
		case 'j': json = true; break;
		case 'h': sync_usage(stdout); return CLI_EXIT_OK;
		default: return cli_bad_option(cmd, argv);
		}
	}
	bool speed = !strcmp(cmd, "speed");
	if (range && parse_range(range, r_start, r_len, sizeof(r_start))) {
		fprintf(stderr, "uraid %s: --range=%s: want START-END in bytes (K, M, G, T "
			"suffixes), END above START or left out\n", cmd, range);
		return CLI_EXIT_USAGE;
	}
	const char *wrong = NULL;
	if (range && (speed || cancel))
		wrong = "--range goes with check and repair only, without --cancel";
	else if (cancel && strcmp(cmd, "check"))
		wrong = "--cancel goes with check only ('uraid check --cancel ARRAY')";
	else if (speed && (wait || cancel))
		wrong = "speed takes neither --wait nor --cancel";
	else if (!speed && (strcmp(lo, "0") || strcmp(hi, "0")))
		wrong = "--min and --max go with speed ('uraid speed --min=N ARRAY')";
	else if (strtoul(lo, &end, 10) > 0xffffffffUL || *end ||
		 strtoul(hi, &end, 10) > 0xffffffffUL || *end)
		wrong = "--min and --max take a number of KiB/s";
	else if (json && !speed && !wait)
		wrong = "--json goes with --wait (the outcome is known at the end)";
	else if (argc - optind > 1)
		wrong = "one ARRAY at most";
	if (wrong) {
		fprintf(stderr, "uraid %s: %s; see 'uraid %s --help'\n", cmd, wrong, cmd);
		return CLI_EXIT_USAGE;
	}
	if ((rc = resolve_target(cmd, optind < argc ? argv[optind] : NULL, ctl, sizeof(ctl))) != 0)
		return rc;
	if (speed) {
		const char *fields[3] = { "speed", lo, hi };
		if (!json)
			return call(cmd, ctl, fields, 3);
		return speed_json(ctl, fields);
	}
	/* the job number before it, to know ours (a server that gives none: 0) */
	struct sync_line before;
	char msg[256];
	if (wait && sync_status(ctl, 0, &before, msg, sizeof(msg)) != 0)
		before.job = 0;
	const char *fields[3] = { cancel ? "sync-cancel" : cmd, r_start, r_len };
	char *body = NULL;
	rc = json ? ask(cmd, ctl, fields, range ? 3 : 1, &body)
		  : call(cmd, ctl, fields, range ? 3 : 1);
	free(body);
	if (rc || !wait)
		return rc;
	return wait_sync(cmd, ctl, before.job, json);
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
		"Usage: uraid add [--force] [--json] ARRAY DEVICE...\n"
		"\n"
		"Add devices to a served array as spares, as mdadm ARRAY --add does: each gets\n"
		"a superblock of the array (its own device number and UUID, the array's data\n"
		"offset), and a missing slot is rebuilt onto it by itself (RAID 1/4/5/6/10).\n"
		"ARRAY: the export name, the export socket or the control socket.\n"
		"A former member of the array (failed and removed) whose slot is still empty\n"
		"is re-added when the array has a write-intent bitmap and the member left\n"
		"after the bitmap last let bits go: it takes its slot back and only the\n"
		"chunks written since it left are rebuilt (mdadm --re-add). Any other device\n"
		"that holds an md superblock is refused unless --force. Every DEVICE is\n"
		"checked (it exists, it is no member yet) before the first is added.\n"
		"A linear array takes no spares (md holds none): append with\n"
		"'uraid grow ARRAY --add DEVICE'.\n"
		"\n"
		"  -f, --force   overwrite an md superblock on the device (a former member\n"
		"                that cannot be re-added is then rebuilt in full)\n"
		"  -j, --json    what changed, as JSON (docs/json.md)\n"
		"  -h, --help    this text\n");
}

/* A device to add: it exists, and the array does not have it yet. */
static int check_new_device(const char *cmd, const char *ctl, const char *dev)
{
	char abs[PATH_MAX], msg[CTL_MAX_LINE];
	struct stat st;
	struct uraid_range_path range;

	if (uraid_range_path_parse(dev, &range, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "uraid %s: %s; nothing was changed\n", cmd, msg);
		return CLI_EXIT_FAIL;
	}
	if (stat(range.path, &st) != 0) {
		fprintf(stderr, "uraid %s: %s: %s; nothing was changed\n", cmd, dev, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "uraid %s: %s is neither a block device nor a file; nothing was "
			"changed\n", cmd, dev);
		return CLI_EXIT_FAIL;
	}
	const char *owns[2] = { "owns", absolute(dev, abs) };
	if (strpbrk(owns[1], "\t\n")) {
		fprintf(stderr, "uraid %s: the path '%s' holds a tab or a newline, which the "
			"control socket cannot carry; rename it or give a symlink to it; nothing was "
			"changed\n", cmd, owns[1]);
		return CLI_EXIT_FAIL;
	}
	FILE *null = fopen("/dev/null", "w");
	int rc = null ? ctl_call(ctl, owns, 2, null, msg, sizeof(msg)) : -ENOMEM;
	if (null)
		fclose(null);
	if (rc == 0) {
		fprintf(stderr, "uraid %s: %s is a member of the array already; nothing was "
			"changed\n", cmd, dev);
		return CLI_EXIT_FAIL;
	}
	if (rc < 0) {
		fprintf(stderr, "uraid %s: %s\n", cmd, msg);
		return CLI_EXIT_FAIL;
	}
	return 0;
}

int cmd_add(int argc, char **argv)
{
	return cli_add(argc, argv, false);
}

int cli_add(int argc, char **argv, bool append)
{
	struct ctl_args ca;
	char ctl[CTL_MAX_LINE], abs[PATH_MAX];
	int rc = parse(argc, argv, "add", "fj", add_usage, &ca);
	if (rc >= 0)
		return rc;
	if (argc - ca.first < 2) {
		fprintf(stderr, "uraid add: give the array and at least one device; see 'uraid add "
			"--help'\n");
		return CLI_EXIT_USAGE;
	}
	if ((rc = resolve_target("add", argv[ca.first], ctl, sizeof(ctl))) != 0)
		return rc;
	for (int i = ca.first + 1; i < argc; i++)
		if ((rc = check_new_device("add", ctl, argv[i])) != 0)
			return rc;
	struct target_list tl = { 0 };
	char name[256] = "";
	if ((rc = array_members("add", ctl, NULL, name, sizeof(name), NULL)) != 0)
		return rc;
	for (int i = ca.first + 1; i < argc; i++) {
		if (push_member(&tl, ctl, absolute(argv[i], abs), "")) {
			free(tl.v);
			fprintf(stderr, "uraid add: out of memory\n");
			return CLI_EXIT_FAIL;
		}
		snprintf(tl.v[tl.n - 1].export_name, sizeof(tl.v[0].export_name), "%s", name);
	}
	int status = CLI_EXIT_OK;
	int *result = calloc(tl.n + 1, sizeof(*result));
	const char **how = calloc(tl.n + 1, sizeof(*how));
	for (unsigned i = 0; i < tl.n && result && how; i++) {
		const char *fields[4] = { "add", tl.v[i].path, ca.force ? "force" : "-", "append" };
		unsigned nf = append ? 4 : ca.force ? 3 : 2;
		char *body = NULL;
		result[i] = ca.json ? ask("add", ctl, fields, nf, &body)
			    : call("add", ctl, fields, nf);
		/* the answer says which (serve_ctl.c verb_add) */
		how[i] = body && strstr(body, "re-added") ? "re-added" : "spare";
		free(body);
		if (result[i])
			status = result[i];
	}
	if (!result || !how) {
		fprintf(stderr, "uraid add: out of memory\n");
		status = CLI_EXIT_FAIL;
	} else if (ca.json) {
		json_changes("add", &tl, result, how);
	}
	free(result);
	free(how);
	free(tl.v);
	return status;
}

static void replace_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid replace [--wait] [--force] [ARRAY] OLD NEW\n"
		"\n"
		"Replace member OLD of a served RAID 1/4/5/6/10 array by NEW, as mdadm ARRAY\n"
		"--replace OLD --with NEW: NEW (a spare of the array, or a device added as one\n"
		"now) gets a copy of OLD's slot in the background while OLD goes on serving,\n"
		"and every write reaches both; then NEW holds the slot and OLD is marked faulty\n"
		"(uraid remove takes it out). The array keeps its redundancy all along. A\n"
		"restart goes on where the copy stopped (recovery_offset), in uraid or md.\n"
		"ARRAY (an export name, the export socket or the control socket) may be left\n"
		"out when OLD belongs to one served array only.\n"
		"\n"
		"  -w, --wait           wait until NEW holds the slot (on a terminal a line\n"
		"                       shows the copy's progress, rate and time left)\n"
		"  -f, --force          overwrite an md superblock on NEW\n"
		"  -c, --control=PATH   the same as ARRAY (older spelling)\n"
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
	char ctl[CTL_MAX_LINE], abs_new[PATH_MAX];
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":wfc:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'w': wait = true; break;
		case 'f': force = true; break;
		case 'c': control = optarg; break;
		case 'h': replace_usage(stdout); return CLI_EXIT_OK;
		default: return cli_bad_option("replace", argv);
		}
	}
	int n = argc - optind;
	if (n == 3 && !control)
		control = argv[optind++];
	else if (n != 2) {
		fprintf(stderr, "uraid replace: give [ARRAY] OLD NEW; see 'uraid replace --help'\n");
		return CLI_EXIT_USAGE;
	}
	struct target_list tl = { 0 };
	if (control) {
		if ((rc = resolve_target("replace", control, ctl, sizeof(ctl))) != 0 ||
		    (rc = resolve_member_on("replace", ctl, argv[optind], &tl)) != 0)
			goto out;
	} else if ((rc = resolve_member_anywhere("replace", argv[optind], &tl)) != 0) {
		goto out;
	}
	snprintf(ctl, sizeof(ctl), "%s", tl.v[0].ctl);
	struct stat st;
	if (stat(argv[optind + 1], &st) != 0) {
		fprintf(stderr, "uraid replace: %s: %s; nothing was changed\n", argv[optind + 1],
			strerror(errno));
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	const char *fields[4] = { "replace", tl.v[0].path, absolute(argv[optind + 1], abs_new),
				  "force" };
	rc = call("replace", ctl, fields, force ? 4 : 3);
	if (!rc && wait)
		rc = wait_sync("replace", ctl, 0, false);
out:
	free(tl.v);
	return rc;
}
