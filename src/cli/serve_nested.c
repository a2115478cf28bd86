// SPDX-License-Identifier: MIT
/*
 * uraid serve of a nested RAID 50/60 (uraid/nested.h): the inner arrays
 * found among the members and the RAID 0 on their data, assembled in the
 * server's engine; the control verbs that name a member reach the inner
 * array that holds it (serve_member_array).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <uraid/nested.h>

#include "cli/serve.h"

int serve_assemble(struct serve_state *st, const struct uraid_assemble_opts *ao, char *err,
		   size_t errlen)
{
	if (!uraid_nested_detect(ao->paths, ao->npaths))
		return uraid_array_assemble(st->engine, ao, &st->array, err, errlen);
	st->nested = calloc(1, sizeof(*st->nested));
	int rc = st->nested ? uraid_nested_assemble(st->engine, ao, st->nested, err, errlen)
			    : -ENOMEM;
	if (rc == 0)
		st->array = st->nested->outer;
	else if (rc == -ENOMEM && !st->nested)
		snprintf(err, errlen, "out of memory");
	if (rc) {
		free(st->nested);
		st->nested = NULL;
	}
	return rc;
}

int serve_close_array(struct serve_state *st)
{
	if (!st->nested)
		return uraid_array_close(st->array);
	int rc = uraid_nested_close(st->nested);
	free(st->nested);
	st->nested = NULL;
	return rc;
}

struct uraid_array *serve_member_array(const struct serve_state *st, const char *path,
				       int *idx)
{
	*idx = uraid_array_find_member(st->array, path);
	if (*idx >= 0 || !st->nested)
		return st->array;
	for (unsigned g = 0; g < st->nested->groups; g++) {
		*idx = uraid_array_find_member(st->nested->inner[g], path);
		if (*idx >= 0)
			return st->nested->inner[g];
	}
	return st->array;
}

struct uraid_array *serve_add_target(const struct serve_state *st, char *err, size_t errlen)
{
	struct uraid_array_status *as;

	if (!st->nested)
		return st->array;
	as = malloc(sizeof(*as));
	if (!as) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (unsigned g = 0; g < st->nested->groups; g++)
		if (uraid_array_status(st->nested->inner[g], as) == 0 && as->degraded) {
			free(as);
			return st->nested->inner[g];
		}
	free(as);
	snprintf(err, errlen, "no group of this RAID %s0 is degraded: a spare belongs to one "
		 "group, add it once one needs it", "5/6");
	return NULL;
}

enum uraid_member_state serve_member_state(const struct serve_state *st, const char *path)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	enum uraid_member_state s = URAID_MEMBER_MISSING;
	int idx;
	struct uraid_array *a = serve_member_array(st, path, &idx);

	if (as && idx >= 0 && uraid_array_status(a, as) == 0 && (unsigned)idx < as->nmembers)
		s = as->members[idx].state;
	free(as);
	return s;
}

bool serve_degraded(const struct serve_state *st)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	bool degraded = as && uraid_array_status(st->array, as) == 0 && as->degraded;

	/* a RAID 50/60's RAID 0 is whole while an inner array is degraded */
	for (unsigned g = 0; as && !degraded && st->nested && g < st->nested->groups; g++)
		degraded = uraid_array_status(st->nested->inner[g], as) == 0 && as->degraded;
	free(as);
	return degraded;
}
