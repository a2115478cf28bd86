// SPDX-License-Identifier: MIT
/*
 * uraid detail: assemble the array from its members the way the engine
 * would run it (read-only: nothing is written) and report its state, as
 * `mdadm --detail` does for a running array.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/engine.h>
#include <uraid/geom.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/util.h"

static void detail_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid detail [--json] MEMBER...\n"
		"\n"
		"Assemble the array the MEMBERs belong to, as uraid would run it, and print its\n"
		"state: level, size, layout, clean or active, degraded slots, and each member's\n"
		"role. Read-only: nothing is written. Members left out (another array, events\n"
		"behind) are listed with the reason on stderr.\n"
		"\n"
		"  -j, --json   the same as one JSON object (sizes in bytes)\n"
		"  -h, --help   this text\n");
}

static const char *member_state_name(enum uraid_member_state s)
{
	switch (s) {
	case URAID_MEMBER_IN_SYNC: return "in-sync";
	case URAID_MEMBER_FAULTY: return "faulty";
	case URAID_MEMBER_MISSING: return "missing";
	case URAID_MEMBER_SPARE: return "spare";
	case URAID_MEMBER_STALE: return "stale";
	}
	return "unknown";
}

static const char *array_state(const struct uraid_array_status *st)
{
	if (st->resync_needed)
		return st->degraded ? "active, degraded, not synchronised" : "active, resync needed";
	if (st->degraded)
		return st->clean ? "clean, degraded" : "active, degraded";
	return st->clean ? "clean" : "active";
}

static void print_human(const struct uraid_array_status *st)
{
	char b1[64], b2[64];
	const char *lv = uraid_level_name(st->level);
	const char *layout = uraid_layout_name(st->level, st->layout, b2, sizeof(b2));

	printf("     Array UUID : %s\n", uraid_uuid_text(st->uuid, b1, sizeof(b1)));
	printf("           Name : %s\n", st->name);
	printf("     Raid Level : %s\n", lv ? lv : "-unknown-");
	printf("     Array Size : %s (%" PRIu64 " bytes)\n", cli_bytes(st->size_bytes, b1, sizeof(b1)),
	       st->size_bytes);
	printf("   Raid Devices : %u\n", st->raid_disks);
	if (layout && *layout)
		printf("         Layout : %s\n", layout);
	if (st->chunk_bytes)
		printf("     Chunk Size : %s\n", cli_bytes(st->chunk_bytes, b1, sizeof(b1)));
	printf("          State : %s\n", array_state(st));
	printf("       Degraded : %u of %u slots\n", st->degraded, st->raid_disks);
	printf("         Events : %" PRIu64 "\n\n", st->events);
	printf("    Slot  State     Direct  Device\n");
	for (int slot = 0; slot < (int)st->raid_disks; slot++) {
		bool found = false;
		for (unsigned i = 0; i < st->nmembers; i++) {
			const struct uraid_member_status *m = &st->members[i];
			if (m->slot != slot)
				continue;
			printf("    %4d  %-8s  %-6s  %s\n", slot, member_state_name(m->state),
			       m->direct ? "yes" : "no", m->path);
			found = true;
		}
		if (!found)
			printf("    %4d  %-8s  %-6s  -\n", slot, "missing", "");
	}
	for (unsigned i = 0; i < st->nmembers; i++) {
		const struct uraid_member_status *m = &st->members[i];
		if (m->slot < 0)
			printf("       -  %-8s  %-6s  %s\n", member_state_name(m->state),
			       m->direct ? "yes" : "no", m->path);
	}
}

static void print_json(const struct uraid_array_status *st)
{
	struct json j;
	char b[64];
	const char *layout = uraid_layout_name(st->level, st->layout, b, sizeof(b));

	json_begin(&j, stdout);
	json_obj_open(&j, NULL);
	char u[40];
	json_str(&j, "array_uuid", uraid_uuid_text(st->uuid, u, sizeof(u)));
	json_str(&j, "name", st->name);
	json_str(&j, "level", uraid_level_name(st->level) ? uraid_level_name(st->level) : "unknown");
	json_u64(&j, "array_bytes", st->size_bytes);
	json_u64(&j, "raid_devices", st->raid_disks);
	if (layout)
		json_str(&j, "layout", layout);
	else
		json_null(&j, "layout");
	json_u64(&j, "chunk_bytes", st->chunk_bytes);
	json_bool(&j, "clean", st->clean);
	json_bool(&j, "resync_needed", st->resync_needed);
	json_u64(&j, "degraded", st->degraded);
	json_u64(&j, "events", st->events);
	json_arr_open(&j, "members");
	for (unsigned i = 0; i < st->nmembers; i++) {
		const struct uraid_member_status *m = &st->members[i];
		json_obj_open(&j, NULL);
		json_str(&j, "device", m->path);
		if (m->slot >= 0)
			json_i64(&j, "slot", m->slot);
		else
			json_null(&j, "slot");
		json_str(&j, "state", member_state_name(m->state));
		json_bool(&j, "direct_io", m->direct);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_obj_close(&j);
	json_end(&j);
}

int cmd_detail(int argc, char **argv)
{
	bool json;
	int first;
	int rc = cli_json_and_devices(argc, argv, "detail", detail_usage, &json, &first);
	if (rc >= 0)
		return rc;

	struct uraid_engine *e;
	struct uraid_engine_opts eo = { .reactors = 1 };
	rc = uraid_engine_create(&eo, &e);
	if (rc) {
		fprintf(stderr, "uraid detail: cannot start the engine: %s\n", strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	/* read-only, and forced: show even an array md would not start */
	struct uraid_assemble_opts ao = {
		.paths = (const char *const *)argv + first, .npaths = (unsigned)(argc - first),
		.flags = URAID_ASSEMBLE_READONLY | URAID_ASSEMBLE_FORCE,
	};
	struct uraid_array *a;
	char err[512];
	rc = uraid_array_assemble(e, &ao, &a, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uraid detail: %s\n", err);
		uraid_engine_destroy(e);
		return CLI_EXIT_FAIL;
	}
	struct uraid_array_status *st = malloc(sizeof(*st));
	if (st && uraid_array_status(a, st) == 0) {
		if (json)
			print_json(st);
		else
			print_human(st);
	}
	free(st);
	uraid_array_close(a);
	uraid_engine_destroy(e);
	return CLI_EXIT_OK;
}
