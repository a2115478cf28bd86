// SPDX-License-Identifier: MIT
/*
 * The run-time settings of a served array: the control verb behind `uraid
 * tune` (ctl_cmds.c sends it, serve_ctl.c's table routes it here).
 *
 * Each setting is one entry of `settings` below: its name (as serve's
 * option, so `serve --NAME=V` and `tune --NAME=V` mean the same), how its
 * VALUE is read, what must hold against the other settings given, how it is
 * applied, and how it prints (a human line, a JSON key). A request is
 * applied only when every setting in it reads and checks: one refusal
 * changes nothing. Settings apply in table order, those whose setter can
 * still fail (memory, a destage error) first; when one fails, those before
 * it stay changed and the answer names them.
 *
 * Request: "tune" FORMAT [SETTINGS], FORMAT "text" or "json", SETTINGS
 * "NAME=VALUE NAME=VALUE ..." (space-separated). Answer: the settings in
 * effect afterwards, as lines "NAME  VALUE..." or one JSON object.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/engine.h>

#include "cli/cli.h"
#include "cli/serve.h"
#include "cli/status_print.h"
#include "cli/util.h"
#include "ctl/ctl.h"

#define TUNE_MAX 16                     /* settings in the table, at most */

struct tune_plan;

struct tune_setting {
	const char *name;
	/* VALUE into *v: 0, or -EINVAL with one line in err (the array to
	   read the geometry from, not to change) */
	int (*parse)(struct uraid_array *a, const char *text, uint64_t *v, char *err, size_t n);
	/* against the other settings given and those in effect (NULL: none) */
	int (*check)(struct uraid_array *a, const struct tune_plan *p, char *err, size_t n);
	/* 0, or -errno with err (only a setter listed before any that cannot fail may) */
	int (*apply)(struct uraid_array *a, const struct tune_plan *p, char *err, size_t n);
	void (*show)(struct uraid_array *a, FILE *f);      /* the line's rest */
	void (*show_json)(struct uraid_array *a, struct json *j);
};

struct tune_plan {
	bool given[TUNE_MAX];
	uint64_t value[TUNE_MAX];
};

static const struct tune_setting settings[];
static int setting_index(const char *name);

/* The value given for the setting called name, or NULL. */
static const uint64_t *plan_value(const struct tune_plan *p, const char *name)
{
	int i = setting_index(name);

	return i >= 0 && p->given[i] ? &p->value[i] : NULL;
}

/* ---- stripe-cache ---- */

static int stripe_parse(struct uraid_array *a, const char *text, uint64_t *v, char *err,
			size_t n)
{
	unsigned heads = 0;
	int rc = cli_array_stripe_cache(a, text, &heads, err, n);

	*v = heads;
	return rc;
}

static int stripe_apply(struct uraid_array *a, const struct tune_plan *p, char *err, size_t n)
{
	int rc = uraid_array_set_stripe_cache(a, (unsigned)*plan_value(p, "stripe-cache"));

	if (rc)
		snprintf(err, n, "stripe cache: %s; nothing changed", strerror(-rc));
	return rc;
}

static void stripe_show(struct uraid_array *a, FILE *f)
{
	struct uraid_array_status *as = malloc(sizeof(*as));

	if (as && uraid_array_status(a, as) == 0)
		cli_stripe_cache_human(f, &as->stripe_cache, as->raid_disks, as->level);
	else
		fprintf(f, "?\n");
	free(as);
}

static void stripe_json(struct uraid_array *a, struct json *j)
{
	struct uraid_stripe_cache_status sc;

	uraid_array_stripe_cache(a, &sc);
	cli_stripe_cache_json(j, &sc);
}

/* ---- write-cache (through | back) ---- */

static int wcache_parse(struct uraid_array *a, const char *text, uint64_t *v, char *err,
			size_t n)
{
	(void)a;
	if (!strcmp(text, "through"))
		*v = URAID_WRITE_THROUGH;
	else if (!strcmp(text, "back"))
		*v = URAID_WRITE_BACK;
	else {
		snprintf(err, n, "expected through or back");
		return -EINVAL;
	}
	return 0;
}

/* To write-through, every dirty byte is destaged first: this waits for it
   (the control thread's, not a reactor's). */
static int wcache_apply(struct uraid_array *a, const struct tune_plan *p, char *err, size_t n)
{
	int rc = uraid_array_set_write_cache(a, (uint32_t)*plan_value(p, "write-cache"));

	if (rc == -EIO)
		snprintf(err, n, "write cache: now write-through, but cached data could not be "
			 "written to the members and is lost (the next flush fails)");
	else if (rc)
		snprintf(err, n, "write cache: %s", rc == -EROFS ? "the array is served read-only"
								 : strerror(-rc));
	return rc;
}

static void wcache_show(struct uraid_array *a, FILE *f)
{
	struct uraid_array_status *as = malloc(sizeof(*as));

	if (as && uraid_array_status(a, as) == 0) {
		const struct uraid_write_cache_status *w = &as->write_cache;
		char size[32], dirty[32];
		if (w->policy == URAID_WRITE_BACK)
			fprintf(f, "back (%s, %s dirty)\n",
				cli_bytes(w->size_bytes, size, sizeof(size)),
				cli_bytes(w->dirty_bytes, dirty, sizeof(dirty)));
		else
			fprintf(f, "through\n");
	} else {
		fprintf(f, "?\n");
	}
	free(as);
}

static void wcache_json(struct uraid_array *a, struct json *j)
{
	struct uraid_array_status *as = malloc(sizeof(*as));

	if (as && uraid_array_status(a, as) == 0)
		json_str(j, "write_cache", as->write_cache.policy == URAID_WRITE_BACK ? "back"
										: "through");
	free(as);
}

/* ---- journal-mode (write-through | write-back) ---- */

static int jmode_parse(struct uraid_array *a, const char *text, uint64_t *v, char *err,
		       size_t n)
{
	(void)a;
	if (!strcmp(text, "write-through"))
		*v = URAID_JOURNAL_WRITE_THROUGH;
	else if (!strcmp(text, "write-back"))
		*v = URAID_JOURNAL_WRITE_BACK;
	else {
		snprintf(err, n, "expected write-through or write-back");
		return -EINVAL;
	}
	return 0;
}

/* To write-through, every cached byte is destaged first: this waits for it. */
static int jmode_apply(struct uraid_array *a, const struct tune_plan *p, char *err, size_t n)
{
	int rc = uraid_array_set_journal_mode(a, (uint32_t)*plan_value(p, "journal-mode"));

	if (rc == -ENODEV)
		snprintf(err, n, "journal mode: the array has no write journal (create "
			 "--write-journal)");
	else if (rc == -EBUSY)
		snprintf(err, n, "journal mode: the array is degraded: write-back refused (md "
			 "refuses it too); add a member back first");
	else if (rc == -EIO)
		snprintf(err, n, "journal mode: now write-through, but cached data could not be "
			 "written to the members (the journal still holds it)");
	else if (rc)
		snprintf(err, n, "journal mode: %s", rc == -EROFS ? "the array is served read-only"
								  : strerror(-rc));
	return rc;
}

static void jmode_show(struct uraid_array *a, FILE *f)
{
	struct uraid_array_status *as = malloc(sizeof(*as));

	if (as && uraid_array_status(a, as) == 0 && as->journal_ring_bytes)
		fprintf(f, "%s\n", as->journal_mode == URAID_JOURNAL_WRITE_BACK ? "write-back"
									: "write-through");
	else
		fprintf(f, "none\n");
	free(as);
}

static void jmode_json(struct uraid_array *a, struct json *j)
{
	struct uraid_array_status *as = malloc(sizeof(*as));

	if (as && uraid_array_status(a, as) == 0 && as->journal_ring_bytes)
		json_str(j, "journal_mode", as->journal_mode == URAID_JOURNAL_WRITE_BACK
						    ? "write-back" : "write-through");
	else
		json_null(j, "journal_mode");
	free(as);
}

/* ---- read-ahead (SIZE | off | default) ---- */

static int ra_parse(struct uraid_array *a, const char *text, uint64_t *v, char *err, size_t n)
{
	(void)a;
	if (cli_parse_read_ahead(text, v)) {
		snprintf(err, n, "expected a size up to 64M per stream, off or default");
		return -EINVAL;
	}
	return 0;
}

static int ra_apply(struct uraid_array *a, const struct tune_plan *p, char *err, size_t n)
{
	int rc = uraid_array_set_read_ahead(a, *plan_value(p, "read-ahead"));

	if (rc)
		snprintf(err, n, "read-ahead: %s", strerror(-rc));
	return rc;
}

static void ra_show(struct uraid_array *a, FILE *f)
{
	struct uraid_array_status *as = malloc(sizeof(*as));

	if (as && uraid_array_status(a, as) == 0) {
		char win[32];
		if (!as->read_ahead.window_bytes)
			fprintf(f, "off\n");
		else
			fprintf(f, "%s per stream%s\n",
				cli_bytes(as->read_ahead.window_bytes, win, sizeof(win)),
				as->read_ahead.members_in_memory
					? " (nothing read ahead: every member is in memory)" : "");
	} else {
		fprintf(f, "?\n");
	}
	free(as);
}

static void ra_json(struct uraid_array *a, struct json *j)
{
	struct uraid_array_status *as = malloc(sizeof(*as));

	if (as && uraid_array_status(a, as) == 0)
		json_u64(j, "read_ahead_bytes", as->read_ahead.window_bytes);
	free(as);
}

/* ---- speed-min, speed-max (md's speed_limit_min/max, per member) ---- */

static int speed_parse(struct uraid_array *a, const char *text, uint64_t *v, char *err,
		       size_t n)
{
	char *end;
	unsigned long long k;

	(void)a;
	errno = 0;
	k = isdigit((unsigned char)*text) ? strtoull(text, &end, 10) : 0;
	if (!isdigit((unsigned char)*text) || errno || *end || k == 0 || k > UINT32_MAX) {
		snprintf(err, n, "'%s': give KiB/s per member, 1..%u", text, UINT32_MAX);
		return -EINVAL;
	}
	*v = k;
	return 0;
}

/* Both limits as they will be: the ones given, else those in effect. */
static void speeds_after(struct uraid_array *a, const struct tune_plan *p, uint64_t *lo,
			 uint64_t *hi)
{
	struct uraid_sync_status ss;
	const uint64_t *min = plan_value(p, "speed-min"), *max = plan_value(p, "speed-max");

	uraid_array_sync_status(a, &ss);
	*lo = min ? *min : ss.min_kib_s;
	*hi = max ? *max : ss.max_kib_s;
}

static int speed_check(struct uraid_array *a, const struct tune_plan *p, char *err, size_t n)
{
	uint64_t lo, hi;

	speeds_after(a, p, &lo, &hi);
	if (lo > hi) {
		snprintf(err, n, "speed-min %" PRIu64 " KiB/s would be above speed-max %" PRIu64
			 " KiB/s; give both", lo, hi);
		return -EINVAL;
	}
	return 0;
}

static int speed_apply(struct uraid_array *a, const struct tune_plan *p, char *err, size_t n)
{
	uint64_t lo, hi;
	int rc;

	speeds_after(a, p, &lo, &hi);
	rc = uraid_array_sync_speed(a, (uint32_t)lo, (uint32_t)hi);
	if (rc)
		snprintf(err, n, "speed limits: %s", strerror(-rc));
	return rc;
}

static void speed_min_show(struct uraid_array *a, FILE *f)
{
	struct uraid_sync_status ss;

	uraid_array_sync_status(a, &ss);
	fprintf(f, "%u KiB/s per member (background work while clients are busy)\n",
		ss.min_kib_s);
}

static void speed_max_show(struct uraid_array *a, FILE *f)
{
	struct uraid_sync_status ss;

	uraid_array_sync_status(a, &ss);
	fprintf(f, "%u KiB/s per member (background work when clients are not)\n",
		ss.max_kib_s);
}

static void speed_min_json(struct uraid_array *a, struct json *j)
{
	struct uraid_sync_status ss;

	uraid_array_sync_status(a, &ss);
	json_u64(j, "speed_min_kib_per_s", ss.min_kib_s);
}

static void speed_max_json(struct uraid_array *a, struct json *j)
{
	struct uraid_sync_status ss;

	uraid_array_sync_status(a, &ss);
	json_u64(j, "speed_max_kib_per_s", ss.max_kib_s);
}

/* ---- the table ---- */

static const struct tune_setting settings[] = {
	/* can fail (memory): first */
	{ "stripe-cache", stripe_parse, NULL, stripe_apply, stripe_show, stripe_json },
	/* can fail (memory when turned on, a destage error when turned off) */
	{ "write-cache", wcache_parse, NULL, wcache_apply, wcache_show, wcache_json },
	/* can fail likewise (the cache's memory; a destage error) */
	{ "journal-mode", jmode_parse, NULL, jmode_apply, jmode_show, jmode_json },
	{ "read-ahead", ra_parse, NULL, ra_apply, ra_show, ra_json },
	{ "speed-min", speed_parse, speed_check, speed_apply, speed_min_show, speed_min_json },
	{ "speed-max", speed_parse, speed_check, speed_apply, speed_max_show, speed_max_json },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
};

/* md's names of the speed limits, taken as ours */
static const char *const aliases[][2] = {
	{ "speed-limit-min", "speed-min" },
	{ "speed-limit-max", "speed-max" },
};

static int setting_index(const char *name)
{
	for (size_t k = 0; k < sizeof(aliases) / sizeof(aliases[0]); k++)
		if (!strcmp(name, aliases[k][0]))
			name = aliases[k][1];
	for (int i = 0; settings[i].name; i++)
		if (!strcmp(settings[i].name, name))
			return i;
	return -1;
}

static void show_all(struct uraid_array *a, const char *export_name, bool json, FILE *f)
{
	if (!json) {
		for (int i = 0; settings[i].name; i++) {
			fprintf(f, "%-14s ", settings[i].name);
			settings[i].show(a, f);
		}
		return;
	}
	struct json j;
	json_begin(&j, f);
	json_obj_open(&j, NULL);
	json_u64(&j, "version", CLI_JSON_VERSION);
	json_str(&j, "command", "tune");
	json_str(&j, "array", export_name);
	json_obj_open(&j, "settings");
	for (int i = 0; settings[i].name; i++)
		settings[i].show_json(a, &j);
	json_obj_close(&j);
	json_obj_close(&j);
	json_end(&j);
}

/* Read every NAME=VALUE of list into p; 0, or an error line in err. */
static int read_settings(struct uraid_array *a, char *list, struct tune_plan *p, char *err,
			 size_t n)
{
	char why[400];

	for (char *save = NULL, *tok = strtok_r(list, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		if (!eq || eq == tok || !eq[1]) {
			snprintf(err, n, "'%s': settings are --NAME=VALUE", tok);
			return -EINVAL;
		}
		*eq = 0;
		int i = setting_index(tok);
		if (i < 0) {
			snprintf(err, n, "no setting --%s (uraid tune --help lists them)", tok);
			return -EINVAL;
		}
		if (p->given[i]) {
			snprintf(err, n, "--%s given twice", settings[i].name);
			return -EINVAL;
		}
		if (settings[i].parse(a, eq + 1, &p->value[i], why, sizeof(why))) {
			snprintf(err, n, "--%s=%s: %s", tok, eq + 1, why);
			return -EINVAL;
		}
		p->given[i] = true;
	}
	for (int i = 0; settings[i].name; i++)
		if (p->given[i] && settings[i].check && settings[i].check(a, p, err, n))
			return -EINVAL;
	return 0;
}

void serve_tune_verb(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	struct tune_plan p = { 0 };
	char err[512], list[CTL_MAX_LINE];
	bool json = rq->nfields > 1 && !strcmp(rq->field[1], "json");
	bool any = false;

	snprintf(list, sizeof(list), "%s", rq->nfields > 2 ? rq->field[2] : "");
	if (read_settings(st->array, list, &p, err, sizeof(err))) {
		ctl_reply(out, CLI_EXIT_USAGE, err, NULL, 0);
		return;
	}
	char applied[256] = "";
	for (int i = 0; settings[i].name; i++) {
		if (!p.given[i])
			continue;
		if (settings[i].apply(st->array, &p, err, sizeof(err))) {
			/* those applied before it stay: say which (the man page's promise) */
			if (*applied) {
				size_t l = strlen(err);
				snprintf(err + l, sizeof(err) - l, "; changed before it: %s", applied);
				fprintf(stderr, "uraid serve: settings changed on the control socket "
					"before one failed: %s\n", applied);
			}
			ctl_reply(out, CLI_EXIT_FAIL, err, NULL, 0);
			return;
		}
		size_t l = strlen(applied);
		snprintf(applied + l, sizeof(applied) - l, "%s--%s", l ? " " : "", settings[i].name);
		any = true;
	}
	if (any)
		fprintf(stderr, "uraid serve: settings changed on the control socket: %s\n",
			rq->field[2]);

	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	if (!f) {
		ctl_reply(out, CLI_EXIT_FAIL, "out of memory", NULL, 0);
		return;
	}
	show_all(st->array, st->export_name, json, f);
	fclose(f);
	ctl_reply(out, 0, NULL, body, len);
	free(body);
}
