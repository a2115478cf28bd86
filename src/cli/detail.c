// SPDX-License-Identifier: MIT
/*
 * uraid detail: assemble the array from its members the way the engine
 * would run it (read-only: nothing is written) and report its state, as
 * `mdadm --detail` does for a running array.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/engine.h>
#include <uraid/geom.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/scan.h"
#include "cli/status_print.h"
#include "cli/util.h"

static void detail_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid detail [--json] [--test] MEMBER...\n"
		"       uraid detail --scan    one ARRAY line per served array, as mdadm --detail --scan\n"
		"\n"
		"Assemble the array the MEMBERs belong to, as uraid would run it, and print its\n"
		"state: level, size, layout, clean or active, degraded slots, and each member's\n"
		"role. Read-only: nothing is written. Members left out (another array, events\n"
		"behind) are listed with the reason on stderr.\n"
		"\n"
		"  -j, --json   the same as one JSON object (docs/json.md)\n"
		"  -t, --test   exit status as mdadm --detail --test: 0 every slot in sync,\n"
		"               1 degraded, 2 failed (more slots lost than the level survives),\n"
		"               4 the array could not be assembled from the MEMBERs\n"
		"  -h, --help   this text\n");
}

int cmd_detail(int argc, char **argv)
{
	if (scan_requested(argc, argv))        /* scan.c */
		return cmd_detail_scan(argc, argv);
	bool json, test;
	int first;
	int rc = cli_json_test_and_devices(argc, argv, "detail", detail_usage, &json, &test,
					   &first);
	if (rc >= 0)
		return rc;
	/* --test: 4 when there is nothing to judge, as mdadm when it cannot look */
	int failed = test ? 4 : CLI_EXIT_FAIL;

	struct uraid_engine *e;
	struct uraid_engine_opts eo = { .reactors = 1 };
	rc = uraid_engine_create(&eo, &e);
	if (rc) {
		fprintf(stderr, "uraid detail: cannot start the engine: %s\n", strerror(-rc));
		return failed;
	}
	/* read-only, and forced: show even an array md would not start; a look
	   only: members a running server holds are read as they stand */
	struct uraid_assemble_opts ao = {
		.paths = (const char *const *)argv + first, .npaths = (unsigned)(argc - first),
		.flags = URAID_ASSEMBLE_READONLY | URAID_ASSEMBLE_FORCE | URAID_ASSEMBLE_PEEK,
	};
	struct uraid_array *a;
	char err[512];
	rc = uraid_array_assemble(e, &ao, &a, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uraid detail: %s\n", err);
		uraid_engine_destroy(e);
		/* too few members to run: mdadm's "failed", not an error looking */
		if (test && rc == -ENODEV)
			return 2;
		return failed;
	}
	struct uraid_array_status *st = malloc(sizeof(*st));
	rc = CLI_EXIT_OK;
	if (st && uraid_array_status(a, st) == 0) {
		if (json)
			cli_status_json(stdout, st, NULL);
		else
			cli_status_human(stdout, st, NULL);
		if (test)
			rc = cli_array_health(st);
	} else {
		fprintf(stderr, "uraid detail: out of memory\n");
		rc = failed;
	}
	free(st);
	uraid_array_close(a);
	uraid_engine_destroy(e);
	return rc;
}
