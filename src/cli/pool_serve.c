// SPDX-License-Identifier: MIT
/*
 * uraid serve --pool=POOL [--volume=VOLUME]: the command line that serves
 * one volume of a pool: the options given, --name=VOLUME first (so that a
 * --name given wins), "--" and the volume's partitions (as /dev nodes or
 * PATH@START+LENGTH ranges). serve parses it as if typed, as it does for
 * --scan (serve_scan.c). Without --volume, a pool of several volumes is
 * served whole: serve_pool_volumes gives each volume's members.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/pool_cli.h"
#include "cli/serve.h"

static int push(char ***v, int *n, const char *s)
{
	char **nv = realloc(*v, (size_t)(*n + 2) * sizeof(*nv));
	if (!nv)
		return -1;
	*v = nv;
	if (!(nv[*n] = strdup(s)))
		return -1;
	nv[++*n] = NULL;
	return 0;
}

int serve_pool_args(int argc, char **argv, int first, const char *pool_name, const char *volume,
		    const char *config, int *new_argc, char ***new_argv)
{
	struct pool_candidates c;
	struct pool *p = calloc(1, sizeof(*p));
	char *specs[POOL_MAX_DRIVES] = { 0 };
	int st = pool_candidates_get("serve", config, argv + first, (unsigned)(argc - first), &c);

	if (!p || st) {
		free(p);
		return st ? st : CLI_EXIT_FAIL;
	}
	if ((st = pool_cli_find("serve", pool_name, &c, p)) >= 0)
		goto out;
	st = CLI_EXIT_USAGE;
	const struct pool_volume *v = NULL;
	if (volume) {
		if (!(v = pool_volume_find(p, volume))) {
			fprintf(stderr, "uraid serve: pool '%s' has no volume '%s' ('uraid pool status "
				"%s' lists them)\n", pool_name, volume, pool_name);
			goto out;
		}
	} else if (p->nvolumes == 1) {
		v = &p->vol[0];
	} else if (p->nvolumes == 0) {
		fprintf(stderr, "uraid serve: pool '%s' has no volume to serve; make one with "
			"'uraid volume create %s VOLUME ...'\n", pool_name, pool_name);
		goto out;
	} else {
		st = SERVE_POOL_EVERY;  /* every volume, one process: serve_pool_volumes */
		goto out;
	}
	st = CLI_EXIT_FAIL;
	for (unsigned i = 0; i < v->nparts; i++)
		if (!(specs[i] = malloc(320)))
			goto out;
	pool_volume_members(p, v, specs, 320);

	char **nv = NULL, name_opt[64];
	int n = 0;
	snprintf(name_opt, sizeof(name_opt), "--name=%s", v->name);
	int rc = push(&nv, &n, argv[0]) || push(&nv, &n, name_opt);
	for (int i = 1; i < first && !rc; i++)
		if (i != first - 1 || strcmp(argv[i], "--"))
			rc = push(&nv, &n, argv[i]);
	if (!rc)
		rc = push(&nv, &n, "--");
	for (unsigned i = 0; i < v->nparts && !rc; i++)
		if (!pool_member_superseded(p, v, i))
			rc = push(&nv, &n, specs[i]);
	if (rc) {
		fprintf(stderr, "uraid serve: out of memory\n");
		goto out;
	}
	*new_argc = n;
	*new_argv = nv;
	st = -1;
out:
	for (unsigned i = 0; i < POOL_MAX_DRIVES; i++)
		free(specs[i]);
	pool_release(p);
	free(p);
	pool_candidates_free(&c);
	return st;
}

void serve_pool_volumes_free(struct serve_opts *o)
{
	for (unsigned i = 0; o->vols && i < o->nvols; i++) {
		for (unsigned j = 0; j < POOL_MAX_DRIVES; j++) {
			free(o->vols[i].members ? o->vols[i].members[j] : NULL);
			free(o->vols[i].drives ? o->vols[i].drives[j] : NULL);
		}
		free(o->vols[i].members);
		free(o->vols[i].drives);
	}
	free(o->vols);
	o->vols = NULL;
	o->nvols = 0;
}

int serve_pool_volumes(int argc, char **argv, int first, struct serve_opts *o)
{
	struct pool_candidates c;
	struct pool *p = calloc(1, sizeof(*p));
	int st = pool_candidates_get("serve", o->config, argv + first, (unsigned)(argc - first),
				     &c);

	if (!p || st) {
		free(p);
		return st ? st : CLI_EXIT_FAIL;
	}
	if ((st = pool_cli_find("serve", o->pool, &c, p)) >= 0)
		goto out;
	st = CLI_EXIT_FAIL;
	if (p->nvolumes > NBD_MAX_EXPORTS_POOL) {
		fprintf(stderr, "uraid serve: pool '%s' has %u volumes; one serve serves at most "
			"%u: give --volume=VOLUME\n", o->pool, p->nvolumes, NBD_MAX_EXPORTS_POOL);
		goto out;
	}
	if (!(o->vols = calloc(p->nvolumes, sizeof(*o->vols))))
		goto oom;
	o->nvols = p->nvolumes;
	memcpy(o->pool_uuid, p->label.uuid, sizeof(o->pool_uuid));
	for (unsigned i = 0; i < p->nvolumes; i++) {
		struct serve_volume_spec *vs = &o->vols[i];
		const struct pool_volume *v = &p->vol[i];
		snprintf(vs->name, sizeof(vs->name), "%s", v->name);
		/* the size a spare's partition gets (serve_pool_spare.c): read
		   now, while every drive found can be read */
		for (unsigned j = 0; j < v->nparts && !vs->part_sectors; j++) {
			const struct gpt_part *gp = &p->drive[v->drive[j]]->gpt.part[v->entry[j]];
			if (gp->last >= gp->first)
				vs->part_sectors = gp->last - gp->first + 1;
		}
		if (!(vs->members = calloc(POOL_MAX_DRIVES, sizeof(char *))) ||
		    !(vs->drives = calloc(POOL_MAX_DRIVES, sizeof(char *))))
			goto oom;
		for (unsigned j = 0; j < v->nparts; j++)
			if (!(vs->members[j] = malloc(320)) ||
			    !(vs->drives[j] = strdup(p->drive[v->drive[j]]->path)))
				goto oom;
		unsigned np = pool_volume_members(p, v, vs->members, 320), k = 0;
		/* superseded partitions (a spare rebuilt in their place) left out */
		for (unsigned j = 0; j < np; j++) {
			if (pool_member_superseded(p, v, j)) {
				free(vs->members[j]);
				free(vs->drives[j]);
			} else {
				vs->members[k] = vs->members[j];
				vs->drives[k++] = vs->drives[j];
			}
		}
		for (unsigned j = k; j < np; j++)
			vs->members[j] = vs->drives[j] = NULL;
		vs->nmembers = k;
		for (unsigned j = 0; j < vs->nmembers; j++)
			if (strpbrk(vs->members[j], "\t\n")) {
				fprintf(stderr, "uraid serve: the member path '%s' holds a tab or a "
					"newline, which the control socket cannot carry; rename it "
					"or give a symlink to it\n", vs->members[j]);
				goto out;
			}
	}
	st = 0;
	goto out;
oom:
	fprintf(stderr, "uraid serve: out of memory\n");
out:
	if (st)
		serve_pool_volumes_free(o);
	pool_release(p);
	free(p);
	pool_candidates_free(&c);
	return st;
}
