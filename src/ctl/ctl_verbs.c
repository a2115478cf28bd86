// SPDX-License-Identifier: MIT
/* A request's verb to its handler, through the server's table (ctl.h). */
#include <string.h>

#include "ctl/ctl.h"

void ctl_dispatch(const struct ctl_verb *verbs, void *arg, const struct ctl_request *rq,
		  FILE *out)
{
	const char *name = rq->field[0];

	for (const struct ctl_verb *v = verbs; v->name; v++) {
		if (strcmp(v->name, name))
			continue;
		if (v->arg_missing && rq->nfields < 2)
			ctl_reply(out, CTL_CODE_USAGE, v->arg_missing, NULL, 0);
		else
			v->fn(arg, rq, out);
		return;
	}
	char msg[128];
	snprintf(msg, sizeof(msg), "unknown control request '%.64s'", name);
	ctl_reply(out, CTL_CODE_USAGE, msg, NULL, 0);
}
