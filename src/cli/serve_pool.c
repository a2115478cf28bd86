// SPDX-License-Identifier: MIT
/*
 * uraid serve --pool=POOL without --volume: every volume of the pool from
 * one process. One engine (its reactors serve every volume), one array per
 * volume, one NBD server whose exports are the volumes (nbd/server.h's
 * export table; the connection and buffer limits are the server's, shared).
 * Each volume has a serve_state of its own (st->vols), so that the control
 * verbs, events, grow and metrics of one array (serve_ctl.c, ...) serve it
 * unchanged through its own control socket, CONTROL.VOLUME; the pool's
 * control socket (serve_pool_ctl.c) answers for the whole pool and leads
 * clients that name POOL/VOLUME to the volume's socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/engine.h>

#include "cli/cli.h"
#include "cli/metrics_all.h"
#include "cli/metrics_text.h"
#include "cli/pool_cli.h"
#include "cli/serve.h"
#include "cli/serve_events.h"
#include "nbd/server.h"

int serve_pool_open(struct serve_state *st)
{
	const struct serve_opts *o = st->o;

	if (!(st->vols = calloc(o->nvols, sizeof(*st->vols)))) {
		fprintf(stderr, "uraid serve: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	snprintf(st->export_name, sizeof(st->export_name), "%s", o->pool);
	memcpy(st->pool_uuid, o->pool_uuid, sizeof(st->pool_uuid));
	st->pool_uuid_known = true;     /* serve_pool_volumes read it from the labels */
	for (unsigned i = 0; i < o->nvols; i++) {
		struct serve_state *v = &st->vols[i];
		*v = (struct serve_state){ .o = o, .engine = st->engine, .ctl_fd = -1,
					   .metrics_fd = -1, .export_idx = i,
					   .pool_name = o->pool, .pool = st,
					   .spec = &o->vols[i] };
		snprintf(v->export_name, sizeof(v->export_name), "%s", o->vols[i].name);
		/* room for the spares a rebuild adds (serve_pool_spare.c) */
		v->was_faulty = calloc(POOL_MAX_DRIVES, sizeof(*v->was_faulty));
		if (!v->was_faulty) {
			fprintf(stderr, "uraid serve: out of memory\n");
			return CLI_EXIT_FAIL;
		}
		st->nvols = i + 1;      /* what serve_pool_free closes */
		int rc = serve_open_array(v, (const char *const *)o->vols[i].members,
					  o->vols[i].nmembers);
		if (rc)
			return rc;
		/* a member faulty at assembly is not a new failure: the drive is
		   not failed in the other volumes for it (serve_pool_follow_failures) */
		for (unsigned j = 0; j < v->spec->nmembers; j++)
			v->was_faulty[j] = serve_member_state(v, v->spec->members[j]) ==
					   URAID_MEMBER_FAULTY;
		/* the engine tells the first volume's events of every change; the
		   others are poked then (serve.c's main loop) */
		if (i == 0) {
			v->events = st->events;
			st->events = NULL;
		} else {
			struct uraid_engine_opts unused = { 0 };
			if (!(v->events = serve_events_create(&unused)))
				fprintf(stderr, "uraid serve: no events for uraid monitor (%s): %s\n",
					v->export_name, strerror(errno));
		}
	}
	return 0;
}

int serve_pool_listen(struct serve_state *st)
{
	char err[512];

	for (unsigned i = 0; i < st->nvols; i++) {
		struct serve_state *v = &st->vols[i];
		snprintf(v->socket_path, sizeof(v->socket_path), "%s", st->socket_path);
		snprintf(v->endpoint, sizeof(v->endpoint), "%s", st->endpoint);
		int n = snprintf(v->control_path, sizeof(v->control_path), "%s.%s", st->control_path,
				 v->export_name);
		if (n < 0 || (size_t)n >= sizeof(v->control_path)) {
			fprintf(stderr, "uraid serve: the control socket of volume '%s' would be "
				"longer than %zu bytes; give a shorter --control\n", v->export_name,
				sizeof(v->control_path) - 1);
			return -ENAMETOOLONG;
		}
		v->ctl_fd = nbd_listen_unix(v->control_path, 0600, err, sizeof(err));
		if (v->ctl_fd < 0) {
			fprintf(stderr, "uraid serve: control socket of volume '%s': %s\n",
				v->export_name, err);
			return v->ctl_fd;
		}
		v->control_created = true;
	}
	return 0;
}

struct nbd_server_export *serve_pool_exports(struct serve_state *st)
{
	if (!st->nvols)
		return NULL;
	struct nbd_server_export *ex = calloc(st->nvols, sizeof(*ex));
	for (unsigned i = 0; ex && i < st->nvols; i++)
		ex[i] = (struct nbd_server_export){ .array = st->vols[i].array,
						    .name = st->vols[i].export_name,
						    .description = st->o->description };
	return ex;
}

void serve_pool_free(struct serve_state *st)
{
	for (unsigned i = 0; st->vols && i < st->nvols; i++) {
		serve_events_destroy(st->vols[i].events);
		free(st->vols[i].was_faulty);
		free(st->vols[i].metrics_page);
	}
	free(st->vols);
	serve_pool_spare_free(st);
	st->vols = NULL;
	st->nvols = 0;
}

bool serve_stop_requested(const struct serve_state *st)
{
	if (st->stop_requested)
		return true;
	for (unsigned i = 0; i < st->nvols; i++)
		if (st->vols[i].stop_requested)
			return true;
	return false;
}

int serve_pool_metrics_body(void *arg, FILE *out)
{
	struct serve_state *st = arg;
	const char **texts = calloc(st->nvols + 1, sizeof(*texts));
	char **copies = calloc(st->nvols + 1, sizeof(*copies));
	int rc = texts && copies ? 0 : -ENOMEM;

	/* each volume's page (NUL-terminated copies: metrics_merge reads strings) */
	for (unsigned i = 0; i < st->nvols && !rc; i++) {
		const char *page;
		size_t len;
		rc = metrics_serve_page(&st->vols[i], &page, &len);
		if (!rc && !(copies[i] = strndup(page, len)))
			rc = -ENOMEM;
		texts[i] = copies[i];
	}
	if (!rc)
		rc = metrics_merge(out, texts, st->nvols);
	for (unsigned i = 0; copies && i < st->nvols; i++)
		free(copies[i]);
	free(copies);
	free(texts);
	return rc;
}
