// SPDX-License-Identifier: MIT
/*
 * uraid tune [--json] [ARRAY] [--NAME=VALUE...]: show or change the
 * run-time settings of a served array. The settings are the server's table
 * (serve_tune.c): this side only gathers --NAME=VALUE words and sends them
 * in one request, so that a setting added there needs nothing here but its
 * line in the help. The server reads and checks every one before it
 * changes any.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "ctl/ctl.h"

static void tune_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid tune [--json] [ARRAY] [SETTING...]\n"
		"\n"
		"Show the run-time settings of a served array, or change them while it\n"
		"serves. Without a SETTING it prints them. Every SETTING is read and checked\n"
		"first: one that is wrong is reported and none is changed. ARRAY (an export\n"
		"name, the export socket or the control socket) may be left out when only one\n"
		"array is served. A setting has the name and meaning of serve's option.\n"
		"\n"
		"Settings:\n"
		"      --stripe-cache=SIZE  RAID 4/5/6: stripe heads, each 4 KiB per member\n"
		"                           (md's stripe_cache_size, 17..32768), or the memory\n"
		"                           with a suffix (K, M, G): the row pieces in work\n"
		"                           at once (a head each, more wait); idle heads keep\n"
		"                           the 4 KiB units last written. Other levels keep\n"
		"                           it, unused\n"
		"      --write-cache=through|back  write-back: writes complete in memory and\n"
		"                           reach the members later (serve --write-cache);\n"
		"                           to through: every dirty byte is written out first\n"
		"      --journal-mode=write-through|write-back  arrays with a write journal\n"
		"                           (serve --journal-mode, md's journal_mode);\n"
		"                           to write-through: the cache is written out first\n"
		"      --read-ahead=SIZE    per sequential stream (serve --read-ahead), off,\n"
		"                           or default; what was read ahead is dropped\n"
		"      --speed-min=KIB/S    background work (resync, check, repair, rebuild)\n"
		"                           holds this rate per member while clients are busy\n"
		"                           (md's speed_limit_min; --speed-limit-min too)\n"
		"      --speed-max=KIB/S    and goes up to this one when they are not\n"
		"                           (md's speed_limit_max; --speed-limit-max too)\n"
		"\n"
		"  -j, --json               the settings in effect as JSON (docs/json.md)\n"
		"  -h, --help               this text\n");
}

int cmd_tune(int argc, char **argv)
{
	char list[CTL_MAX_LINE] = "", ctl[CTL_MAX_LINE];
	const char *target = NULL;
	bool json = false;
	size_t used = 0;

	for (int i = 1; i < argc; i++) {
		const char *w = argv[i];
		if (!strcmp(w, "--help") || !strcmp(w, "-h")) {
			tune_usage(stdout);
			return CLI_EXIT_OK;
		}
		if (!strcmp(w, "--json") || !strcmp(w, "-j")) {
			json = true;
		} else if (!strncmp(w, "--", 2) && w[2]) {
			const char *eq = strchr(w, '=');
			if (!eq || eq == w + 2 || !eq[1]) {
				fprintf(stderr, "uraid tune: '%s': settings are --NAME=VALUE; see "
					"'uraid tune --help'\n", w);
				return CLI_EXIT_USAGE;
			}
			if (strchr(w, ' ') || strchr(w, '\t') || strchr(w, '\n')) {
				fprintf(stderr, "uraid tune: '%s': no blanks in a setting\n", w);
				return CLI_EXIT_USAGE;
			}
			int n = snprintf(list + used, sizeof(list) - used, "%s%s", used ? " " : "",
					 w + 2);
			if (n < 0 || (size_t)n >= sizeof(list) - used) {
				fprintf(stderr, "uraid tune: too many settings in one command\n");
				return CLI_EXIT_USAGE;
			}
			used += (size_t)n;
		} else if (w[0] == '-' && w[1]) {
			fprintf(stderr, "uraid tune: unknown option '%s'; see 'uraid tune --help'\n", w);
			return CLI_EXIT_USAGE;
		} else if (!target) {
			target = w;
		} else {
			fprintf(stderr, "uraid tune: one ARRAY at most ('%s' and '%s'); see 'uraid "
				"tune --help'\n", target, w);
			return CLI_EXIT_USAGE;
		}
	}
	int rc = cli_ctl_target("tune", target, ctl, sizeof(ctl));
	if (rc)
		return rc;
	const char *fields[3] = { "tune", json ? "json" : "text", list };
	return cli_ctl_call("tune", ctl, fields, used ? 3 : 2);
}
