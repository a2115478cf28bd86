// SPDX-License-Identifier: MIT
/*
 * The server side of `uraid grow` (cli/grow_cmd.c is the client): the
 * control request
 *
 *     "grow" MODE SETTINGS
 *
 * MODE "plan" (check and describe, change nothing) or "do"; SETTINGS
 * NAME=VALUE words separated by blanks, named as grow's options:
 * raid-devices, level, chunk, layout, size, array-size, bitmap,
 * consistency-policy, append=N (--add alone: linear's new members), and
 * adding=N (devices the client adds as spares between the plan and the
 * change). Every word is read and checked before the engine is asked; the
 * engine plans (engine/md/grow_plan.c) and carries out the steps. After a
 * change of size the NBD export follows (new connections see it).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/engine.h>
#include <uraid/geom.h>

#include "cli/cli.h"
#include "cli/serve.h"
#include "common/size_parse.h"
#include "ctl/ctl.h"
#include "nbd/server.h"

/* "max" or a size in KiB by default (mdadm's unit for --size). */
static int parse_size(const char *v, uint64_t *out)
{
	if (!strcmp(v, "max")) {
		*out = URAID_GROW_MAX;
		return 0;
	}
	return size_parse(v, 1024, out) || !*out || *out % 1024 ? -EINVAL : 0;
}

/* One NAME=VALUE into r; -EINVAL with the reason in err. */
static int parse_setting(char *w, int cur_level, struct uraid_grow *r, char *err, size_t errlen)
{
	char *v = strchr(w, '=');
	uint64_t n;

	if (!v)
		return snprintf(err, errlen, "'%s': settings are NAME=VALUE", w), -EINVAL;
	*v++ = 0;
	if (!strcmp(w, "raid-devices")) {
		char *end;
		unsigned long d = strtoul(v, &end, 10);
		if (*end || !*v || d < 1 || d > URAID_MAX_MEMBERS)
			return snprintf(err, errlen, "--raid-devices=%s: a member count, 1 to %d", v,
					URAID_MAX_MEMBERS), -EINVAL;
		r->raid_disks = (uint32_t)d;
	} else if (!strcmp(w, "level")) {
		if (uraid_level_parse(v, &r->level))
			return snprintf(err, errlen, "--level=%s: not a level (0, 1, 4, 5, 6, 10, "
					"linear, raid5, ...)", v), -EINVAL;
		r->level_set = true;
	} else if (!strcmp(w, "chunk")) {
		if (size_parse(v, 1024, &n) || n < 4096 || n > (1u << 30) || (n & (n - 1)))
			return snprintf(err, errlen, "--chunk=%s: a power of two from 4K (a plain "
					"number is KiB)", v), -EINVAL;
		r->chunk_bytes = (uint32_t)n;
	} else if (!strcmp(w, "layout")) {
		/* named for the level asked, else the array's */
		int level = r->level_set ? r->level : cur_level;
		if (uraid_layout_parse(level, v, &r->layout))
			return snprintf(err, errlen, "--layout=%s: not a layout of %s", v,
					uraid_level_name(level) ? uraid_level_name(level) : "the level"),
			       -EINVAL;
		r->layout_set = true;
	} else if (!strcmp(w, "size")) {
		if (parse_size(v, &r->size_bytes))
			return snprintf(err, errlen, "--size=%s: max, or a size in whole KiB (a plain "
					"number is KiB)", v), -EINVAL;
	} else if (!strcmp(w, "array-size")) {
		if (parse_size(v, &r->array_bytes))
			return snprintf(err, errlen, "--array-size=%s: max, or a size in whole KiB (a "
					"plain number is KiB)", v), -EINVAL;
	} else if (!strcmp(w, "bitmap")) {
		if (!strcmp(v, "internal"))
			r->bitmap = 1;
		else if (!strcmp(v, "none"))
			r->bitmap = -1;
		else
			return snprintf(err, errlen, "--bitmap=%s: internal or none", v), -EINVAL;
	} else if (!strcmp(w, "consistency-policy")) {
		if (!strcmp(v, "ppl"))
			r->policy = URAID_GROW_POLICY_PPL;
		else if (!strcmp(v, "resync"))
			r->policy = URAID_GROW_POLICY_RESYNC;
		else if (!strcmp(v, "bitmap"))
			r->policy = URAID_GROW_POLICY_BITMAP;
		else
			return snprintf(err, errlen, "--consistency-policy=%s: ppl, resync or bitmap "
					"(md changes a running array's policy to these)", v), -EINVAL;
	} else if (!strcmp(w, "append")) {
		/* --add alone (linear): the members to append, checked as
		   adding= is */
		char *end;
		unsigned long d = strtoul(v, &end, 10);
		if (*end || !*v || *v == '-' || d < 1 || d > URAID_MAX_MEMBERS)
			return snprintf(err, errlen, "append=%s: a member count, 1 to %d", v,
					URAID_MAX_MEMBERS), -EINVAL;
		r->append = (unsigned)d;
	} else if (!strcmp(w, "adding")) {
		/* the spares the client just added: a count, checked like any
		   number from the socket ("-1" would wrap to a huge one) */
		char *end;
		unsigned long d = strtoul(v, &end, 10);
		if (*end || !*v || *v == '-' || d > URAID_MAX_MEMBERS)
			return snprintf(err, errlen, "adding=%s: a spare count, 0 to %d", v,
					URAID_MAX_MEMBERS), -EINVAL;
		r->adding = (unsigned)d;
	} else {
		return snprintf(err, errlen, "--%s: not something grow changes; see 'uraid grow "
				"--help'", w), -EINVAL;
	}
	return 0;
}

void serve_grow_verb(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	struct uraid_grow r = { 0 };
	struct uraid_array_status *as = malloc(sizeof(*as));
	char list[CTL_MAX_LINE], err[600], done[2048];
	int rc;

	if (!as || uraid_array_status(st->array, as)) {
		free(as);
		ctl_reply(out, CLI_EXIT_FAIL, "cannot read the array's status", NULL, 0);
		return;
	}
	int cur_level = as->level;
	uint64_t size_before = as->size_bytes;
	if (rq->nfields < 3 || (strcmp(rq->field[1], "plan") && strcmp(rq->field[1], "do"))) {
		free(as);
		ctl_reply(out, CLI_EXIT_USAGE, "grow plan|do SETTINGS", NULL, 0);
		return;
	}
	r.plan_only = !strcmp(rq->field[1], "plan");
	snprintf(list, sizeof(list), "%s", rq->field[2]);
	char *save = NULL;
	for (char *w = strtok_r(list, " ", &save); w; w = strtok_r(NULL, " ", &save)) {
		if (parse_setting(w, cur_level, &r, err, sizeof(err))) {
			free(as);
			ctl_reply(out, CLI_EXIT_USAGE, err, NULL, 0);
			return;
		}
	}
	rc = uraid_array_grow(st->array, &r, done, sizeof(done), err, sizeof(err));
	/* a partial grow may have changed the size too */
	if (!r.plan_only && uraid_array_status(st->array, as) == 0 &&
	    as->size_bytes != size_before)
		nbd_server_set_export_size(st->server, st->export_idx, as->size_bytes);
	free(as);
	if (rc == -EALREADY)
		ctl_reply(out, 0, NULL, "nothing to change: the array already has that geometry\n",
			  strlen("nothing to change: the array already has that geometry\n"));
	else if (rc)
		ctl_reply(out, CLI_EXIT_FAIL, err, NULL, 0);
	else
		ctl_reply(out, 0, NULL, done, strlen(done));
}

/* While steps of a grow wait: look again at least every second. */
int serve_grow_timeout_ms(struct serve_state *st)
{
	return uraid_array_grow_pending(st->array) ? 1000 : -1;
}

void serve_grow_work(struct serve_state *st)
{
	char done[2048], err[600];

	if (uraid_array_grow_pending(st->array) &&
	    uraid_array_grow_continue(st->array, done, sizeof(done), err, sizeof(err)) < 0)
		fprintf(stderr, "uraid serve: grow: %s\n", err);
	/* a restripe's end (grow-core's job) changes the size too: new
	   connections see the size in effect */
	nbd_server_set_export_size(st->server, st->export_idx, uraid_array_size(st->array));
}
