// SPDX-License-Identifier: MIT
/*
 * uraid serve --pool=POOL [--volume=VOLUME]: the command line that serves
 * one volume of a pool: the options given, --name=VOLUME first (so that a
 * --name given wins), "--" and the volume's partitions (as /dev nodes or
 * PATH@START+LENGTH ranges). serve parses it as if typed, as it does for
 * --scan (serve_scan.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/pool_cli.h"

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
	} else {
		fprintf(stderr, "uraid serve: pool '%s' has %u volumes; serving them all from one "
			"process is not there yet: give --volume=VOLUME (one serve per volume)\n",
			pool_name, p->nvolumes);
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
