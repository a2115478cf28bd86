// SPDX-License-Identifier: MIT
/*
 * uraid serve --scan, --uuid=U, --array=NAME and --list-arrays: which array
 * to serve, found by superblock among candidate devices (scan.c), and the
 * serve options its ARRAY line in the configuration file carries. The
 * result is a new command line: the ARRAY line's options first, then the
 * ones given (so that those win, getopt keeping the last), then "--" and
 * the members found; serve parses it as if it had been typed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/scan.h"
#include "cli/serve.h"

/* The name an ARRAY line goes by (uraid@NAME.service, --array=NAME): its
 * export=, else its name= without "HOST:", else its device name without
 * /dev/md/, else its UUID. */
static const char *instance_name(const struct config_array *a, char *buf, size_t len)
{
	for (unsigned i = 0; i < a->nserve; i++)
		if (!strcmp(a->serve[i].key, "export") && a->serve[i].value)
			return a->serve[i].value;
	if (a->name)
		return scan_short_name(a->name);
	if (a->devname) {
		const char *slash = strrchr(a->devname, '/');
		return slash ? slash + 1 : a->devname;
	}
	return uraid_uuid_text(a->uuid, buf, len);
}

static bool names_match(const char *set_name, const char *want)
{
	return !strcmp(set_name, want) || !strcmp(scan_short_name(set_name), want);
}

/* Does --array=want name this ARRAY line? */
static bool entry_matches(const struct config_array *a, const char *want)
{
	char u[40];
	if (!strcmp(instance_name(a, u, sizeof(u)), want))
		return true;
	if (a->name && names_match(a->name, want))
		return true;
	if (a->devname) {
		const char *slash = strrchr(a->devname, '/');
		if (!strcmp(a->devname, want) || (slash && !strcmp(slash + 1, want)))
			return true;
	}
	uint8_t uuid[16];
	return a->has_uuid && uraid_uuid_parse(want, uuid) == 0 && !memcmp(uuid, a->uuid, 16);
}

static int list_arrays(const struct uraid_config *cfg)
{
	char u[40];
	for (unsigned i = 0; i < cfg->narrays; i++)
		printf("%s\n", instance_name(&cfg->arrays[i], u, sizeof(u)));
	return CLI_EXIT_OK;
}

/* The ARRAY line --array names; NULL when none; *status set on a refusal. */
static const struct config_array *entry_for_name(const struct uraid_config *cfg,
						 const char *want, int *status)
{
	const struct config_array *found = NULL;
	for (unsigned i = 0; i < cfg->narrays; i++) {
		if (!entry_matches(&cfg->arrays[i], want))
			continue;
		if (found) {
			fprintf(stderr, "uraid serve: --array=%s: lines %u and %u of %s both name it; "
				"choose one with --uuid\n", want, found->line, cfg->arrays[i].line,
				cfg->path ? cfg->path : "the configuration file");
			*status = CLI_EXIT_USAGE;
			return NULL;
		}
		found = &cfg->arrays[i];
	}
	return found;
}

struct want {
	bool has_uuid;
	uint8_t uuid[16];
	const char *name;               /* an md array name (with or without HOST:) */
	const struct config_array *entry;
};

static bool array_wanted(const struct scan_array *a, const struct want *w,
			 const struct uraid_config *cfg)
{
	if (w->has_uuid)
		return !memcmp(a->uuid, w->uuid, 16);
	if (w->name)
		return names_match(a->name, w->name);
	/* an ARRAY line with devices= only: the one array on those devices */
	if (w->entry)
		return true;
	/* plain --scan: an array the configuration names, or any without one */
	return !cfg->narrays || config_find_array(cfg, a->uuid, a->name);
}

static void what_wanted(const struct want *w, char *buf, size_t len)
{
	char u[40];
	if (w->has_uuid)
		snprintf(buf, len, "with UUID %s", uraid_uuid_text(w->uuid, u, sizeof(u)));
	else if (w->name)
		snprintf(buf, len, "named '%s'", w->name);
	else if (w->entry)
		snprintf(buf, len, "on the devices= of line %u", w->entry->line);
	else
		snprintf(buf, len, "%s", "named by an ARRAY line");
}

/* The one array found that is wanted; NULL with the refusal printed. */
static const struct scan_array *choose(const struct scan_result *r, const struct want *w,
				       const struct uraid_config *cfg)
{
	const struct scan_array *found = NULL;
	unsigned n = 0;
	char what[120], u1[40], u2[40];

	what_wanted(w, what, sizeof(what));
	for (unsigned i = 0; i < r->narrays; i++) {
		if (!array_wanted(&r->arrays[i], w, cfg))
			continue;
		if (found && n == 1) {
			fprintf(stderr, "uraid serve: more than one array %s: '%s' (UUID %s) and '%s' "
				"(UUID %s)%s; choose one with --uuid=UUID or --array=NAME\n", what,
				found->name, uraid_uuid_text(found->uuid, u1, sizeof(u1)),
				r->arrays[i].name, uraid_uuid_text(r->arrays[i].uuid, u2, sizeof(u2)),
				r->narrays > 2 ? " and others" : "");
			return NULL;
		}
		found = &r->arrays[i];
		n++;
	}
	if (!found)
		fprintf(stderr, "uraid serve: no array %s among %u candidate device%s%s; "
			"'uraid examine --scan' lists the arrays found\n", what, r->candidates,
			r->candidates == 1 ? "" : "s",
			r->unreadable ? " (some could not be read; -v names them)" : "");
	return found;
}

/* level= and num-devices= of the ARRAY line are checks, as in mdadm.conf. */
static bool entry_agrees(const struct config_array *e, const struct scan_array *a,
			 const char *path)
{
	if (e->level != -100 && e->level != a->level) {
		fprintf(stderr, "uraid serve: array '%s' has level %d, but line %u of %s says "
			"level=%d; correct the line or choose another array\n", a->name, a->level,
			e->line, path, e->level);
		return false;
	}
	if (e->num_devices >= 0 && (unsigned)e->num_devices != a->raid_disks) {
		fprintf(stderr, "uraid serve: array '%s' has %u member slots, but line %u of %s "
			"says num-devices=%d; correct the line or choose another array\n", a->name,
			a->raid_disks, e->line, path, e->num_devices);
		return false;
	}
	return true;
}

/* argv grows by one word; the words live until the process ends. */
static int push(char ***v, int *n, const char *word)
{
	char **grown = realloc(*v, (size_t)(*n + 2) * sizeof(**v));
	if (!grown)
		return -ENOMEM;
	*v = grown;
	if (!(grown[*n] = strdup(word)))
		return -ENOMEM;
	grown[++*n] = NULL;
	return 0;
}

/* The ARRAY line's serve options as long options; socket and listen only
 * when neither was given on the command line (one excludes the other). */
static int push_entry_options(char ***v, int *n, const struct config_array *e,
			      const struct serve_opts *o)
{
	for (unsigned i = 0; e && i < e->nserve; i++) {
		const struct config_option *opt = &e->serve[i];
		if ((!strcmp(opt->key, "socket") || !strcmp(opt->key, "listen")) &&
		    (o->socket || o->listen))
			continue;
		const char *key = !strcmp(opt->key, "export") ? "name" : opt->key;
		char *word;
		if (asprintf(&word, "--%s%s%s", key, opt->value ? "=" : "",
			     opt->value ? opt->value : "") < 0)
			return -ENOMEM;
		int rc = push(v, n, word);
		free(word);
		if (rc)
			return rc;
	}
	return 0;
}

int serve_scan_args(int argc, char **argv, int first, const struct serve_opts *o,
		    int *new_argc, char ***new_argv)
{
	struct uraid_config cfg;
	struct want w = { 0 };
	int status = scan_load_config("serve", o->config, &cfg);
	if (status)
		return status;
	if (o->list_arrays) {
		status = list_arrays(&cfg);
		config_free(&cfg);
		return status;
	}
	status = CLI_EXIT_USAGE;
	if (o->uuid && uraid_uuid_parse(o->uuid, w.uuid)) {
		fprintf(stderr, "uraid serve: --uuid=%s: expected 32 hex digits, e.g. "
			"3aaa0122:29827cfa:5331ad66:ca767371\n", o->uuid);
		goto out;
	}
	w.has_uuid = o->uuid != NULL;
	if (o->array_name) {
		int refused = 0;
		w.entry = entry_for_name(&cfg, o->array_name, &refused);
		if (refused)
			goto out;
		if (w.entry && w.entry->has_uuid && w.has_uuid && memcmp(w.entry->uuid, w.uuid, 16)) {
			fprintf(stderr, "uraid serve: --array=%s is line %u of %s, whose uuid= is not "
				"--uuid=%s\n", o->array_name, w.entry->line, cfg.path, o->uuid);
			goto out;
		}
		if (w.entry && w.entry->has_uuid && !w.has_uuid) {
			memcpy(w.uuid, w.entry->uuid, 16);
			w.has_uuid = true;
		}
		w.name = w.entry ? w.entry->name : o->array_name;
	} else if (w.has_uuid) {
		w.entry = config_find_array(&cfg, w.uuid, NULL);
	}

	/* candidates: the globs given, else the ARRAY line's devices=, else DEVICE lines */
	struct scan_result r;
	status = CLI_EXIT_FAIL;
	if (argc > first)
		status = scan_devices("serve", &cfg, argv + first, (unsigned)(argc - first),
				      o->verbose, &r);
	else if (w.entry && w.entry->ndevices)
		status = scan_devices("serve", &cfg, w.entry->devices, w.entry->ndevices,
				      o->verbose, &r);
	else
		status = scan_devices("serve", &cfg, NULL, 0, o->verbose, &r);
	if (status) {
		status = CLI_EXIT_FAIL;
		goto out;
	}
	const struct scan_array *a = choose(&r, &w, &cfg);
	status = CLI_EXIT_FAIL;
	if (a) {
		const struct config_array *e = w.entry ? w.entry
						       : config_find_array(&cfg, a->uuid, a->name);
		char u[40];
		if (e && !entry_agrees(e, a, cfg.path)) {
			scan_result_free(&r);
			goto out;
		}
		if (o->verbose) {
			fprintf(stderr, "uraid serve: array '%s' (UUID %s) found on", a->name,
				uraid_uuid_text(a->uuid, u, sizeof(u)));
			for (unsigned i = 0; i < a->nmembers; i++)
				fprintf(stderr, " %s", a->members[i].path);
			if (e)
				fprintf(stderr, "; serve options from line %u of %s", e->line,
					cfg.path);
			fprintf(stderr, "\n");
		}
		char **v = NULL;
		int n = 0;
		int rc = push(&v, &n, argv[0]);
		if (!rc)
			rc = push_entry_options(&v, &n, e, o);
		/* the options given, less a "--" ending them: one is added below */
		for (int i = 1; i < first && !rc; i++)
			if (i != first - 1 || strcmp(argv[i], "--"))
				rc = push(&v, &n, argv[i]);
		if (!rc)
			rc = push(&v, &n, "--");
		for (unsigned i = 0; i < a->nmembers && !rc; i++)
			rc = push(&v, &n, a->members[i].path);
		if (rc) {
			fprintf(stderr, "uraid serve: out of memory\n");
		} else {
			*new_argc = n;
			*new_argv = v;
			status = -1;
		}
	}
	scan_result_free(&r);
out:
	config_free(&cfg);
	return status;
}
