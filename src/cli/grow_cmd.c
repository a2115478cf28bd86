// SPDX-License-Identifier: MIT
/*
 * uraid grow [ARRAY] [--raid-devices=N] [--level=L] [--chunk=SIZE]
 *            [--layout=NAME] [--size=max|SIZE] [--array-size=max|SIZE]
 *            [--bitmap=internal|none] [--consistency-policy=ppl|resync|bitmap]
 *            [--add DEV... [--force]] [--json]
 * uraid grow [ARRAY] --add DEV... [--force] [--json]   (linear: append)
 *
 * mdadm --grow on a served array. This side gathers the options into one
 * control request (serve_grow.c reads and checks them, the engine plans
 * and does the change). With --add, the change is planned first (nothing
 * changed when it is refused), then the devices are added as spares as
 * `uraid add` does, then the change is made.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "ctl/ctl.h"

static void grow_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid grow [ARRAY] CHANGE... [--add DEV... [--force]] [--json]\n"
		"       uraid grow [ARRAY] --add DEV... [--force] [--json]   (linear: append)\n"
		"\n"
		"Change a served array while it serves, as mdadm --grow: its member count,\n"
		"level, chunk, layout, the size used on each member, the size exported, its\n"
		"bitmap or its consistency policy. The change is planned first as md would\n"
		"make it (a takeover that keeps the data in place, a restripe that moves it,\n"
		"or both in turn), and refused with the reason and what to do when md would\n"
		"not make it; nothing is changed then. ARRAY (an export name, the export\n"
		"socket or the control socket) may be left out when only one array is served.\n"
		"\n"
		"Changes:\n"
		"  -n, --raid-devices=N     the member count: RAID 1 mirrors (more, or fewer\n"
		"                           when the slots that go are empty), RAID 0/4/5/6\n"
		"                           and RAID 10 (near, offset) restripe\n"
		"                           (new members from the spares; fewer:\n"
		"                           --array-size first, the members that go become\n"
		"                           spares). A restripe moves the data offset as\n"
		"                           mdadm: down, or up (backwards) when the data\n"
		"                           members shrink or there is more room after the data.\n"
		"                           A degraded RAID 10 too, as md: a rebuild is stopped\n"
		"                           and its member rebuilt from 0 after the reshape\n"
		"  -l, --level=LEVEL        md's takeovers: 0 <-> 4/5, 1 -> 5 and 5 -> 1 (two\n"
		"                           members), 4 <-> 5, 5 -> 6 (a spare holds Q), 6 -> 5,\n"
		"                           10 (near=2) -> 0\n"
		"  -c, --chunk=SIZE         the chunk (restripe; a plain number is KiB)\n"
		"  -p, --layout=NAME        the RAID 5/6 layout, or RAID 10 n2 <-> o2 (restripe;\n"
		"                           far layouts are refused, as by mdadm)\n"
		"  -z, --size=max|SIZE      the size used on each member (md's component size):\n"
		"                           max takes the room that grew under the members; the\n"
		"                           new part is resynced. Smaller only below what is\n"
		"                           exported (see --array-size). A bitmap follows (its\n"
		"                           chunk doubled where md's would be)\n"
		"  -Z, --array-size=max|SIZE  the size clients see, at most the members'; kept\n"
		"                           until the array is served again (md stores it\n"
		"                           nowhere either). Set it lower before shrinking\n"
		"      --bitmap=internal|none  add or remove the write-intent bitmap\n"
		"  -k, --consistency-policy=ppl|resync|bitmap\n"
		"                           how a crash is made good, as mdadm --grow: ppl adds\n"
		"                           md's partial parity log (RAID 5, no bitmap or\n"
		"                           journal, not during a reshape; placed as mdadm:\n"
		"                           1 MiB next to each superblock, or the room there\n"
		"                           is), resync removes it (or the bitmap), bitmap is\n"
		"                           --bitmap=internal\n"
		"  -a, --add DEV...         add these devices as spares first (uraid add);\n"
		"                           alone, on a linear array: append them as new\n"
		"                           members (mdadm --grow --add), the size grows by\n"
		"                           theirs, no data moves\n"
		"\n"
		"  -f, --force              --add a device that holds another array's\n"
		"                           superblock (as uraid add --force)\n"
		"  -j, --json               the steps done as JSON\n"
		"  -h, --help               this text\n");
}

/* The options that take a value, with mdadm's short names. */
static const struct { const char *name; char shortopt; } grow_opts[] = {
	{ "raid-devices", 'n' }, { "level", 'l' }, { "chunk", 'c' }, { "layout", 'p' },
	{ "size", 'z' }, { "array-size", 'Z' }, { "bitmap", 0 }, { "consistency-policy", 'k' },
};

/* argv[*i] as NAME=VALUE into list; 1 when it is not one of grow's. */
static int take_setting(int argc, char **argv, int *i, char *list, size_t len, size_t *used)
{
	const char *w = argv[*i], *name = NULL, *value = NULL;
	char buf[64];

	for (size_t k = 0; k < sizeof(grow_opts) / sizeof(grow_opts[0]); k++) {
		size_t n = strlen(grow_opts[k].name);
		if (!strncmp(w, "--", 2) && !strncmp(w + 2, grow_opts[k].name, n) &&
		    (w[2 + n] == '=' || !w[2 + n])) {
			name = grow_opts[k].name;
			value = w[2 + n] == '=' ? w + 3 + n : NULL;
		} else if (grow_opts[k].shortopt && w[0] == '-' && w[1] == grow_opts[k].shortopt) {
			name = grow_opts[k].name;
			value = w[2] ? w + 2 : NULL;
		} else {
			continue;
		}
		break;
	}
	if (!name)
		return 1;
	if (!value) {
		if (*i + 1 >= argc) {
			fprintf(stderr, "uraid grow: --%s needs a value; see 'uraid grow --help'\n", name);
			return -1;
		}
		value = argv[++*i];
	}
	if (!*value || strpbrk(value, " \t\n")) {
		fprintf(stderr, "uraid grow: --%s: '%s' is not a value\n", name, value);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", name);
	int n = snprintf(list + *used, len - *used, "%s%s=%s", *used ? " " : "", buf, value);
	if (n < 0 || (size_t)n >= len - *used) {
		fprintf(stderr, "uraid grow: the options are too long\n");
		return -1;
	}
	*used += (size_t)n;
	return 0;
}

/* The steps (one a line) as a JSON object. */
static void print_json(const char *body)
{
	printf("{\"version\":1,\"command\":\"grow\",\"steps\":[");
	bool first = true;
	for (const char *p = body; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n) {
			printf("%s\"", first ? "" : ",");
			for (size_t k = 0; k < n; k++) {
				if (p[k] == '"' || p[k] == '\\')
					putchar('\\');
				putchar(p[k]);
			}
			putchar('"');
			first = false;
		}
		p += n + (nl ? 1 : 0);
	}
	printf("]}\n");
}

/* One grow request; the answer's body printed (human or JSON) unless quiet. */
static int grow_call(const char *ctl, const char *mode, const char *list, bool json, bool quiet)
{
	const char *fields[3] = { "grow", mode, list };
	char msg[CTL_MAX_LINE], *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);

	if (!f) {
		fprintf(stderr, "uraid grow: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	int rc = ctl_call(ctl, fields, 3, f, msg, sizeof(msg));
	fclose(f);
	if (rc) {
		fprintf(stderr, "uraid grow: %s\n", msg);
		free(body);
		return rc < 0 ? CLI_EXIT_FAIL : rc;
	}
	if (!quiet) {
		if (json)
			print_json(body);
		else
			fputs(body ? body : "", stdout);
	}
	free(body);
	return CLI_EXIT_OK;
}

int cmd_grow(int argc, char **argv)
{
	char list[CTL_MAX_LINE] = "", ctl[CTL_MAX_LINE];
	const char *target = NULL;
	char **add = NULL;
	int nadd = 0, rc;
	bool json = false, force = false;
	size_t used = 0;

	add = calloc((size_t)argc + 1, sizeof(*add));
	if (!add) {
		fprintf(stderr, "uraid grow: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	for (int i = 1; i < argc; i++) {
		const char *w = argv[i];
		if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
			grow_usage(stdout);
			free(add);
			return CLI_EXIT_OK;
		}
		if (!strcmp(w, "--json") || !strcmp(w, "-j")) {
			json = true;
			continue;
		}
		if (!strcmp(w, "--force") || !strcmp(w, "-f")) {
			force = true;   /* for the add: a device with another array's superblock */
			continue;
		}
		if (!strcmp(w, "--add") || !strcmp(w, "-a")) {
			/* the devices up to the next option */
			while (i + 1 < argc && argv[i + 1][0] != '-')
				add[nadd++] = argv[++i];
			if (!nadd) {
				fprintf(stderr, "uraid grow: --add needs a device\n");
				free(add);
				return CLI_EXIT_USAGE;
			}
			continue;
		}
		rc = take_setting(argc, argv, &i, list, sizeof(list), &used);
		if (rc < 0) {
			free(add);
			return CLI_EXIT_USAGE;
		}
		if (rc == 0)
			continue;
		if (w[0] == '-' && w[1]) {
			fprintf(stderr, "uraid grow: unknown option '%s'; see 'uraid grow --help'\n", w);
			free(add);
			return CLI_EXIT_USAGE;
		}
		if (target) {
			fprintf(stderr, "uraid grow: one ARRAY at most ('%s' and '%s'); devices to "
				"add go after --add\n", target, w);
			free(add);
			return CLI_EXIT_USAGE;
		}
		target = w;
	}
	if (!used && nadd) {
		/* mdadm --grow --add DEV alone: linear's append (the server
		   refuses it for other levels) */
		used = (size_t)snprintf(list, sizeof(list), "append=%d", nadd);
	}
	if (!used) {
		fprintf(stderr, "uraid grow: nothing to change: give --raid-devices, --level, "
			"--chunk, --layout, --size, --array-size, --bitmap or --consistency-policy; "
			"see 'uraid grow --help'\n");
		free(add);
		return CLI_EXIT_USAGE;
	}
	rc = cli_ctl_target("grow", target, ctl, sizeof(ctl));
	if (!rc && nadd) {
		/* refused before anything is added; then added as uraid add does */
		char planned[CTL_MAX_LINE];
		snprintf(planned, sizeof(planned), "%s adding=%d", list, nadd);
		rc = grow_call(ctl, "plan", planned, false, true);
		if (!rc) {
			char **av = calloc((size_t)nadd + 4, sizeof(*av));
			if (!av) {
				rc = CLI_EXIT_FAIL;
			} else {
				int ac = 0;
				av[ac++] = "add";
				if (force)
					av[ac++] = "--force";
				av[ac++] = ctl;
				for (int k = 0; k < nadd; k++)
					av[ac++] = add[k];
				/* --json: one document on stdout, the grow's; add's
				   lines are left out (its errors still go to stderr) */
				int saved = json ? dup(STDOUT_FILENO) : -1;
				if (saved >= 0) {
					fflush(stdout);
					if (!freopen("/dev/null", "w", stdout))
						saved = -1;
				}
				rc = cli_add(ac, av, !strncmp(list, "append=", 7));
				if (saved >= 0) {
					fflush(stdout);
					dup2(saved, STDOUT_FILENO);
					close(saved);
				}
				free(av);
			}
		}
	}
	if (!rc)
		rc = grow_call(ctl, "do", list, json, false);
	free(add);
	return rc;
}
