// SPDX-License-Identifier: MIT
/*
 * The control socket of a pool served whole (serve_pool.c): what is asked
 * of the pool goes to each volume's own verbs (serve_ctl.c), called here in
 * this thread as a client's request would be, and the answers are put
 * together. A drive of the pool is named by its path: `fail` and `remove`
 * act on that drive's member in every volume. A verb about one volume
 * (check, tune, grow, replace, ...) is refused with how to name it:
 * POOL/VOLUME, whose control socket answers it.
 *
 * The pool treats a drive as one thing, as Storage Spaces retires a drive
 * and not a slice of it: a member that fails in one volume (an I/O error)
 * fails the same drive's members in the others too
 * (serve_pool_follow_failures). A drive that returns errors in one place
 * will return them elsewhere; failing it everywhere at once starts every
 * volume's rebuild onto a spare now, rather than at the next error, and
 * keeps the pool's state simple: a drive is in use or gone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uraid/engine.h>

#include "cli/cli.h"
#include "cli/pool_cli.h"
#include "cli/serve.h"
#include "common/file_lock.h"
#include "ctl/ctl.h"

/* Ask volume v's own verbs (serve_ctl.c), as a client would: the code (0
 * ok), the message in msg, the body in *body (malloc'd, NUL-terminated). */
static int vol_ask(struct serve_state *v, const char *const *fields, unsigned n, char **body,
		   char *msg, size_t msglen)
{
	char line[CTL_MAX_LINE + 2];
	struct ctl_request rq;
	size_t used = 0, len = 0;
	char *text = NULL;

	*body = NULL;
	msg[0] = 0;
	for (unsigned i = 0; i < n; i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used > 1 ? sizeof(line) - used : 1,
					 "%s%s", i ? "\t" : "", fields[i]);
	if (used + 1 >= sizeof(line))
		return snprintf(msg, msglen, "request too long"), CLI_EXIT_FAIL;
	line[used++] = '\n';
	if (ctl_parse_request(line, used, &rq) != 0)
		return snprintf(msg, msglen, "malformed request"), CLI_EXIT_USAGE;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return snprintf(msg, msglen, "out of memory"), CLI_EXIT_FAIL;
	serve_ctl_handle(v, &rq, f);
	if (fclose(f) != 0 || !text) {
		free(text);
		return snprintf(msg, msglen, "out of memory"), CLI_EXIT_FAIL;
	}
	char *nl = strchr(text, '\n');
	int code = CLI_EXIT_FAIL;
	if (nl && !strncmp(text, "ok\n", 3)) {
		code = 0;
	} else if (nl && sscanf(text, "error %d", &code) == 1) {
		const char *m = strchr(text + 6, ' ');
		snprintf(msg, msglen, "%.*s", m ? (int)(nl - m - 1) : 0, m ? m + 1 : "");
	}
	*body = strdup(nl ? nl + 1 : "");
	free(text);
	return code;
}

/* The names of the volumes, "a, b, c", for messages. */
static void volume_names(const struct serve_state *st, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < st->nvols && used < len; i++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
					 st->vols[i].export_name);
}

bool serve_pool_same_drive(const char *a, const char *b)
{
	struct stat sa, sb;
	return !strcmp(a, b) || (stat(a, &sa) == 0 && stat(b, &sb) == 0 && uraid_same_file(&sa, &sb));
}

/*
 * The members PATH names in volume v: spec indexes into out (at most max):
 * every member on that drive when PATH is a drive of the pool, else the
 * member PATH is (as the volume finds it). Returns the count.
 */
static unsigned members_named(const struct serve_state *v, const char *path, unsigned *out,
			      unsigned max)
{
	unsigned n = 0;
	for (unsigned j = 0; j < v->spec->nmembers && n < max; j++)
		if (serve_pool_same_drive(v->spec->drives[j], path))
			out[n++] = j;
	if (n)
		return n;
	/* (in a RAID 50/60 volume, the member of an inner array) */
	int idx, jdx;
	const struct uraid_array *a = serve_member_array(v, path, &idx);
	for (unsigned j = 0; idx >= 0 && j < v->spec->nmembers && n < max; j++)
		if (serve_member_array(v, v->spec->members[j], &jdx) == a && jdx == idx)
			out[n++] = j;
	return n;
}

/* status, status-json, summary, summary-json: each volume's answer. */
static void pool_report(struct serve_state *st, const char *verb, FILE *out)
{
	bool json = strstr(verb, "json") != NULL, summary = !strncmp(verb, "summary", 7);
	char *bodies[NBD_MAX_EXPORTS_POOL] = { 0 }, msg[CTL_MAX_LINE];
	int rc = 0;

	for (unsigned i = 0; i < st->nvols && !rc; i++) {
		const char *f[1] = { verb };
		rc = vol_ask(&st->vols[i], f, 1, &bodies[i], msg, sizeof(msg));
	}
	if (rc) {
		ctl_reply(out, rc, msg, NULL, 0);
	} else {
		ctl_reply(out, 0, NULL, NULL, 0);
		if (json && !summary)
			fprintf(out, "{\"pool\": \"%s\", \"volumes\": [\n", st->export_name);
		for (unsigned i = 0; i < st->nvols; i++) {
			size_t len = strlen(bodies[i]);
			while (json && len && bodies[i][len - 1] == '\n')
				len--;
			if (json)
				fprintf(out, "%s%.*s", i ? ",\n" : "", (int)len, bodies[i]);
			else if (summary)
				fputs(bodies[i], out);
			else
				fprintf(out, "%sVolume '%s' of pool '%s' (control %s):\n%s",
					i ? "\n" : "", st->vols[i].export_name, st->export_name,
					st->vols[i].control_path, bodies[i]);
		}
		if (json)
			fprintf(out, summary ? "\n" : "\n]}\n");
	}
	for (unsigned i = 0; i < st->nvols; i++)
		free(bodies[i]);
}

/* health: the worst of the volumes' (0 ok, 1 degraded, 2 failed). */
static void pool_health(struct serve_state *st, FILE *out)
{
	int worst = 0;
	char msg[CTL_MAX_LINE], line[16];
	for (unsigned i = 0; i < st->nvols; i++) {
		const char *f[1] = { "health" };
		char *body;
		int h = 0, rc = vol_ask(&st->vols[i], f, 1, &body, msg, sizeof(msg));
		if (rc || sscanf(body, "%d", &h) != 1) {
			free(body);
			ctl_reply(out, rc ? rc : CLI_EXIT_FAIL, rc ? msg : "no health", NULL, 0);
			return;
		}
		free(body);
		if (h > worst)
			worst = h;
	}
	int n = snprintf(line, sizeof(line), "%d\n", worst);
	ctl_reply(out, 0, NULL, line, (size_t)n);
}

/*
 * owns/fail/remove PATH [force]: PATH a drive of the pool (every volume's
 * member on it) or one member. owns: "STATE\tPATH", PATH as given (sent
 * back by the client as is), STATE the members' when they all have the
 * same, else "unknown" (the client then leaves each member's rule to its
 * volume: remove takes out the faulty ones and refuses the others). fail and remove:
 * each member in turn, every volume's answer in the body; the first
 * failure's code and message end it.
 */
static void pool_members_verb(struct serve_state *st, const struct ctl_request *rq, FILE *out)
{
	const char *verb = rq->field[0];
	char *text = NULL, msg[CTL_MAX_LINE], first_err[2 * CTL_MAX_LINE + 64] = "";
	size_t len = 0;
	unsigned found = 0;
	int code = 0;
	char state[32] = "";

	if (rq->nfields < 2) {
		ctl_reply(out, CLI_EXIT_USAGE, "which drive? (give its path)", NULL, 0);
		return;
	}
	FILE *f = open_memstream(&text, &len);
	if (!f) {
		ctl_reply(out, CLI_EXIT_FAIL, "out of memory", NULL, 0);
		return;
	}
	for (unsigned i = 0; i < st->nvols; i++) {
		struct serve_state *v = &st->vols[i];
		unsigned idx[URAID_MAX_MEMBERS];
		unsigned n = members_named(v, rq->field[1], idx, URAID_MAX_MEMBERS);
		for (unsigned k = 0; k < n; k++) {
			const char *fields[3] = { verb, v->spec->members[idx[k]], "force" };
			unsigned nf = rq->nfields > 2 && !strcmp(rq->field[2], "force") ? 3 : 2;
			char *body;
			int rc = vol_ask(v, fields, nf, &body, msg, sizeof(msg));
			found++;
			if (!strcmp(verb, "owns")) {
				char *tab = rc ? NULL : strchr(body, '\t');
				if (!tab)
					code = rc ? rc : CLI_EXIT_FAIL;
				else if (!state[0])
					snprintf(state, sizeof(state), "%.*s", (int)(tab - body), body);
				else if (strncmp(state, body, (size_t)(tab - body)) ||
					 state[tab - body])
					snprintf(state, sizeof(state), "unknown");
			} else if (rc) {
				fprintf(f, "%s: %s in '%s': %s\n", v->spec->members[idx[k]], verb,
					v->export_name, msg);
				if (!code) {
					code = rc;
					snprintf(first_err, sizeof(first_err), "%s in '%s': %s",
						 v->spec->members[idx[k]], v->export_name, msg);
				}
			} else {
				fputs(body, f);
			}
			free(body);
		}
	}
	if (!strcmp(verb, "owns") && found && !code)
		fprintf(f, "%s\t%s\n", state, rq->field[1]);
	fclose(f);
	if (!found) {
		snprintf(msg, sizeof(msg), "%s is neither a drive nor a member of a volume of "
			 "pool '%s'", rq->field[1], st->export_name);
		ctl_reply(out, CLI_EXIT_FAIL, msg, NULL, 0);
	} else if (code && !strcmp(verb, "owns")) {
		ctl_reply(out, code, "cannot read the member's state", NULL, 0);
	} else {
		/* the volumes done before a failure are told in the body, after it */
		ctl_reply(out, code, code ? first_err : NULL, text, len);
	}
	free(text);
}

static void pool_stop(struct serve_state *st, FILE *out)
{
	char done[CTL_MAX_LINE];
	int n = snprintf(done, sizeof(done), "pool '%s': stopping (finishing requests in flight, "
			 "then marking every volume clean)\n", st->export_name);
	ctl_reply(out, 0, NULL, done, n > 0 ? (size_t)n : 0);
	fprintf(stderr, "uraid serve: stop requested on the pool's control socket\n");
	st->stop_requested = true;
}

/* "volumes": "NAME\tCONTROL\n" for each volume. */
static void pool_volumes(struct serve_state *st, FILE *out)
{
	ctl_reply(out, 0, NULL, NULL, 0);
	for (unsigned i = 0; i < st->nvols; i++)
		fprintf(out, "%s\t%s\n", st->vols[i].export_name, st->vols[i].control_path);
}

void serve_pool_ctl_handle(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	const char *verb = rq->field[0];
	char msg[CTL_MAX_LINE], names[CTL_MAX_LINE / 2];

	if (!strcmp(verb, "status") || !strcmp(verb, "status-json") ||
	    !strcmp(verb, "summary") || !strcmp(verb, "summary-json")) {
		pool_report(st, verb, out);
	} else if (!strcmp(verb, "health")) {
		pool_health(st, out);
	} else if (!strcmp(verb, "export-is")) {
		if (rq->nfields == 2 && !strcmp(rq->field[1], st->export_name))
			ctl_reply(out, 0, NULL, NULL, 0);
		else
			ctl_reply(out, CLI_EXIT_FAIL, "another pool name", NULL, 0);
	} else if (!strcmp(verb, "name")) {
		int n = snprintf(msg, sizeof(msg), "%s\n", st->export_name);
		ctl_reply(out, 0, NULL, msg, n > 0 ? (size_t)n : 0);
	} else if (!strcmp(verb, "owns") || !strcmp(verb, "fail") || !strcmp(verb, "remove")) {
		pool_members_verb(st, rq, out);
	} else if (!strcmp(verb, "metrics")) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		int rc = f ? serve_pool_metrics_body(st, f) : -ENOMEM;
		if (f && fclose(f) != 0)
			rc = -ENOMEM;
		if (rc)
			ctl_reply(out, CLI_EXIT_FAIL, "out of memory", NULL, 0);
		else
			ctl_reply(out, 0, NULL, text, len);
		free(text);
	} else if (!strcmp(verb, "add")) {
		serve_pool_add_drive(st, rq, out);
	} else if (!strcmp(verb, "volumes")) {
		pool_volumes(st, out);
	} else if (!strcmp(verb, "stop")) {
		pool_stop(st, out);
	} else {
		volume_names(st, names, sizeof(names));
		snprintf(msg, sizeof(msg), "'%s' is about one volume, and pool '%s' has %u (%s): name "
			 "one as %s/VOLUME (e.g. uraid %s %s/%s ...)", verb, st->export_name,
			 st->nvols, names, st->export_name, verb, st->export_name,
			 st->vols[0].export_name);
		ctl_reply(out, CLI_EXIT_USAGE, msg, NULL, 0);
	}
}

void serve_pool_follow_failures(struct serve_state *st)
{
	char err[512];

	/* a member's state in the array that holds it: an inner array of a
	   RAID 50/60 volume (serve_member_array), else the volume's */
	for (unsigned i = 0; i < st->nvols; i++) {
		struct serve_state *v = &st->vols[i];
		for (unsigned j = 0; j < v->spec->nmembers; j++) {
			bool faulty = serve_member_state(v, v->spec->members[j]) ==
				      URAID_MEMBER_FAULTY;
			bool newly = faulty && !v->was_faulty[j];
			v->was_faulty[j] = faulty;
			if (!newly)
				continue;
			/* this drive failed in v: fail it in every other volume */
			const char *drive = v->spec->drives[j];
			for (unsigned k = 0; k < st->nvols; k++) {
				struct serve_state *w = &st->vols[k];
				if (w == v)
					continue;
				for (unsigned m = 0; m < w->spec->nmembers; m++) {
					if (!serve_pool_same_drive(w->spec->drives[m], drive))
						continue;
					int widx;
					struct uraid_array *wa = serve_member_array(w, w->spec->members[m],
										    &widx);
					enum uraid_member_state ws = serve_member_state(w,
										w->spec->members[m]);
					if (widx < 0 || (ws != URAID_MEMBER_IN_SYNC &&
							 ws != URAID_MEMBER_REBUILDING &&
							 ws != URAID_MEMBER_SPARE))
						continue;
					int rc = uraid_array_fail_member(wa, (unsigned)widx, 0, err,
									 sizeof(err));
					if (rc == 0)
						w->was_faulty[m] = true;        /* told here */
					if (rc == 0)
						fprintf(stderr, "uraid serve: drive %s failed in volume "
							"'%s': set faulty in volume '%s' too\n", drive,
							v->export_name, w->export_name);
					else if (rc != -EALREADY)
						fprintf(stderr, "uraid serve: drive %s failed in volume "
							"'%s'; volume '%s' keeps it: %s\n", drive,
							v->export_name, w->export_name, err);
				}
			}
		}
	}
}
