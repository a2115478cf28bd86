// SPDX-License-Identifier: MIT
/* One poll of a served array for `uraid status --watch` (see watch_snap.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"
#include "cli/watch_snap.h"
#include "common/clock.h"

/* A counter that no array reaches: more members than md allows, say. */
#define WATCH_MAX_MEMBERS 4096u

/* A string from the server, for the terminal: control characters (C0,
 * DEL, and C1 as UTF-8: U+0080..U+009F) become '?', so an answer cannot move
 * the cursor, retitle the window or reprogram the terminal. */
void watch_snap_clean(char *dst, size_t len, const char *src)
{
	size_t o = 0;

	if (!src)
		src = "?";
	for (const unsigned char *p = (const unsigned char *)src; *p && o + 1 < len; p++) {
		if (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			dst[o++] = '?';
			p++;
		} else {
			dst[o++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
		}
	}
	if (len)
		dst[o] = 0;
}

/* A count the view prints as a small number: checked, else 0. */
static unsigned small(const struct jr_doc *d, int node)
{
	uint64_t v = jr_u64(d, node, 0);
	return v <= 1000000000u ? (unsigned)v : 0;
}

static int read_members(const struct jr_doc *d, int list, struct watch_snap *s)
{
	unsigned n = 0;
	for (int m = jr_first(d, list); m >= 0; m = jr_next(d, m))
		n++;
	if (n > WATCH_MAX_MEMBERS)
		return -E2BIG;
	s->members = calloc(n ? n : 1, sizeof(*s->members));
	if (!s->members)
		return -ENOMEM;
	for (int m = jr_first(d, list); m >= 0; m = jr_next(d, m)) {
		struct watch_member *wm = &s->members[s->nmembers++];
		uint64_t slot = jr_u64(d, jr_get(d, m, "slot"), UINT64_MAX);
		watch_snap_clean(wm->path, sizeof(wm->path),
				 jr_str(d, jr_get(d, m, "device"), NULL));
		watch_snap_clean(wm->state, sizeof(wm->state),
				 jr_str(d, jr_get(d, m, "state"), NULL));
		wm->slot = slot < WATCH_MAX_MEMBERS ? (int)slot : -1;
		wm->reads = jr_u64(d, jr_get(d, m, "reads"), 0);
		wm->writes = jr_u64(d, jr_get(d, m, "writes"), 0);
		wm->read_bytes = jr_u64(d, jr_get(d, m, "read_bytes"), 0);
		wm->write_bytes = jr_u64(d, jr_get(d, m, "write_bytes"), 0);
	}
	return 0;
}

static void read_background(const struct jr_doc *d, struct watch_snap *s)
{
	int running = jr_first(d, jr_get(d, 0, "background"));
	int last = jr_get(d, 0, "last_background");
	int from = running >= 0 ? running : last;

	s->bg.running = running >= 0;
	watch_snap_clean(s->bg.kind, sizeof(s->bg.kind), jr_str(d, jr_get(d, from, "kind"), NULL));
	watch_snap_clean(s->bg.result, sizeof(s->bg.result),
			 jr_str(d, jr_get(d, last, "result"), NULL));
	s->bg.done = jr_u64(d, jr_get(d, from, "done_bytes"), 0);
	s->bg.total = jr_u64(d, jr_get(d, from, "total_bytes"), 0);
	if (s->bg.done > s->bg.total)
		s->bg.done = s->bg.total;
	s->bg.per_member = jr_bool(d, jr_get(d, from, "per_member"), true);
	s->bg.server_rate = running >= 0 ? jr_u64(d, jr_get(d, running, "rate_bytes_per_s"), 0) : 0;
}

static int read_snap(const struct jr_doc *d, struct watch_snap *s, char *msg, size_t msglen)
{
	int srv = jr_get(d, 0, "server");
	int members = jr_get(d, 0, "members");

	if (srv < 0 || members < 0 || d->node[members].type != JR_ARRAY) {
		snprintf(msg, msglen, "%s: the answer lacks the server's facts or the members "
			 "(an older uraid serve?)", s->ctl);
		return -EPROTO;
	}
	watch_snap_clean(s->export_name, sizeof(s->export_name),
		 jr_str(d, jr_get(d, srv, "export_name"), NULL));
	watch_snap_clean(s->level, sizeof(s->level), jr_str(d, jr_get(d, 0, "level"), NULL));
	watch_snap_clean(s->state, sizeof(s->state), jr_str(d, jr_get(d, 0, "state"), NULL));
	s->array_bytes = jr_u64(d, jr_get(d, 0, "array_bytes"), 0);
	s->in_flight = jr_u64(d, jr_get(d, 0, "in_flight"), 0);
	s->raid_devices = small(d, jr_get(d, 0, "raid_devices"));
	s->degraded = small(d, jr_get(d, 0, "degraded"));
	s->connections = small(d, jr_get(d, srv, "connections"));
	s->max_connections = small(d, jr_get(d, srv, "max_connections"));
	read_background(d, s);
	int rc = read_members(d, members, s);
	if (rc)
		snprintf(msg, msglen, "%s: %s", s->ctl, rc == -E2BIG ? "too many members in the "
			 "answer" : "out of memory");
	return rc;
}

int watch_snap_poll(const char *ctl, struct watch_snap *s, char *msg, size_t msglen)
{
	const char *fields[1] = { "status-json" };
	/* the answer goes into a buffer of fixed size: a server cannot make
	   this client hold more than that */
	char *body = malloc(JR_MAX_TEXT + 1);
	FILE *f = body ? fmemopen(body, JR_MAX_TEXT + 1, "w") : NULL;
	struct jr_doc doc;
	char err[128];
	int rc;

	memset(s, 0, sizeof(*s));
	snprintf(s->ctl, sizeof(s->ctl), "%s", ctl);
	if (!f) {
		free(body);
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	rc = ctl_call(ctl, fields, 1, f, msg, msglen);
	long len = ftell(f);
	fclose(f);
	s->t_ns = uraid_now_ns();
	if (rc == 0 && (len < 0 || (size_t)len > JR_MAX_TEXT)) {
		snprintf(msg, msglen, "%s: the answer is over %u MiB", ctl, JR_MAX_TEXT >> 20);
		rc = -E2BIG;
	} else if (rc == 0 && (rc = jr_parse(body, (size_t)len, &doc, err, sizeof(err))) != 0) {
		snprintf(msg, msglen, "%s: a bad answer: %s", ctl, err);
		jr_free(&doc);
	} else if (rc == 0) {
		rc = read_snap(&doc, s, msg, msglen);
		jr_free(&doc);
	}
	free(body);
	return rc;
}

void watch_snap_free(struct watch_snap *s)
{
	free(s->members);
	s->members = NULL;
	s->nmembers = 0;
}

int watch_snap_copy(struct watch_snap *dst, const struct watch_snap *src)
{
	*dst = *src;
	dst->members = calloc(src->nmembers ? src->nmembers : 1, sizeof(*dst->members));
	if (!dst->members) {
		dst->nmembers = 0;
		return -ENOMEM;
	}
	memcpy(dst->members, src->members, src->nmembers * sizeof(*dst->members));
	return 0;
}

const struct watch_member *watch_snap_member(const struct watch_snap *s,
					     const struct watch_member *m)
{
	for (unsigned i = 0; i < s->nmembers; i++)
		if (s->members[i].slot == m->slot && !strcmp(s->members[i].path, m->path))
			return &s->members[i];
	return NULL;
}
