// SPDX-License-Identifier: MIT
/* uraid create --level=50|60 --groups=G: the inner arrays and the RAID 0 over them. */
#include <stdio.h>
#include <string.h>

#include <uraid/geom.h>
#include <uraid/nested.h>

#include "cli/cli.h"
#include "cli/create_cli.h"
#include "cli/util.h"

int create_nested_level(const char *s)
{
	if (!strncmp(s, "raid", 4))
		s += 4;
	return !strcmp(s, "50") ? 5 : !strcmp(s, "60") ? 6 : 0;
}

static void print_json(const struct uraid_create_opts *o, const struct uraid_nested_result *r)
{
	struct json j;
	char buf[64];

	create_json_open(&j, o);
	json_str(&j, "level", uraid_nested_level_name(o->level));
	json_u64(&j, "groups", r->groups);
	json_u64(&j, "array_bytes", r->outer.array_sectors * 512);
	json_u64(&j, "chunk_bytes", r->outer.chunk_sectors * 512ull);
	json_obj_open(&j, "outer");
	json_str(&j, "array_uuid", uraid_uuid_text(r->outer.uuid, buf, sizeof(buf)));
	json_str(&j, "name", r->outer.set_name);
	json_str(&j, "level", uraid_level_name(r->outer.level));
	json_u64(&j, "raid_devices", r->outer.raid_disks);
	json_u64(&j, "data_offset_bytes", r->outer.data_offset * 512);
	json_obj_close(&j);
	json_arr_open(&j, "inner");
	for (unsigned g = 0; g < r->groups; g++) {
		const struct uraid_create_result *in = &r->inner[g];
		json_obj_open(&j, NULL);
		json_str(&j, "array_uuid", uraid_uuid_text(in->uuid, buf, sizeof(buf)));
		json_str(&j, "name", in->set_name);
		json_str(&j, "level", uraid_level_name(in->level));
		json_u64(&j, "raid_devices", in->raid_disks);
		json_u64(&j, "array_bytes", in->array_sectors * 512);
		json_u64(&j, "data_offset_bytes", in->data_offset * 512);
		json_bool(&j, "clean", in->clean);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_obj_close(&j);
	json_end(&j);
}

int create_nested(struct uraid_create_opts *o, unsigned groups, bool json)
{
	struct uraid_nested_result r;
	char err[512], a[32];

	if (uraid_nested_create(o, groups, &r, err, sizeof(err))) {
		fprintf(stderr, "uraid create: %s\n", err);
		return CLI_EXIT_FAIL;
	}
	if (json) {
		print_json(o, &r);
		return CLI_EXIT_OK;
	}
	printf("%s RAID %d0 '%s': a RAID 0 of %u RAID %d arrays of %u members, %s usable.\n",
	       o->flags & URAID_CREATE_DRY_RUN ? "Would create" : "Created", o->level,
	       r.outer.set_name, groups, o->level, o->npaths / groups,
	       cli_bytes(r.outer.array_sectors * 512, a, sizeof(a)));
	for (unsigned g = 0; g < groups; g++) {
		struct uraid_create_opts io = *o;
		io.paths = o->paths + g * (o->npaths / groups);
		io.npaths = o->npaths / groups;
		printf("  inner %u: ", g);
		create_print_summary(&io, &r.inner[g]);
	}
	struct uraid_create_opts oo = *o;
	oo.flags &= ~URAID_CREATE_ASSUME_CLEAN;
	printf("  outer: ");
	create_print_summary(&oo, &r.outer);
	return CLI_EXIT_OK;
}
