// SPDX-License-Identifier: MIT
/* uraid create: mdadm --create's options, no prompts, a one-paragraph summary. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/create.h>
#include <uraid/geom.h>
#include <uraid/level.h>

#include "cli/cli.h"
#include "cli/util.h"
#include "cli/create_cli.h"

static void create_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid create --level=L --raid-devices=N [OPTIONS] DEVICE...\n"
		"\n"
		"Write md superblocks (and a bitmap and bad-block log) to each DEVICE, making a\n"
		"new array that Linux md and mdadm assemble as they would one mdadm created.\n"
		"A DEVICE is a block device or an image file; 'missing' leaves a slot empty.\n"
		"Nothing is written unless every check passes; it never prompts.\n"
		"\n"
		"  -l, --level=L           0, 1, 4, 5, 6, 10 or linear (also raid5, mirror, stripe);\n"
		"                          50 or 60 (nested: a RAID 0 over RAID 5 or 6 arrays, with\n"
		"                          --groups)\n"
		"      --groups=G          RAID 50/60: split the DEVICEs, in order, into G inner\n"
		"                          arrays of equal size, named NAME-0 .. NAME-(G-1); the\n"
		"                          RAID 0 over them is NAME, its superblocks on their data\n"
		"                          (md's stacking); --chunk is both levels' chunk, as md\n"
		"                          users commonly do\n"
		"  -n, --raid-devices=N    active slots (DEVICEs beyond N are spares); RAID 50/60:\n"
		"                          all DEVICEs (optional)\n"
		"  -x, --spare-devices=N   spares, listed after the active members (default 0)\n"
		"  -c, --chunk=SIZE        chunk size, K/M suffix, plain number is KiB (default 512K;\n"
		"                          RAID 1 has none; for linear it is the rounding)\n"
		"  -p, --layout=NAME       RAID 5: left-asymmetric, right-asymmetric, left-symmetric\n"
		"                          (default), right-symmetric, parity-first, parity-last;\n"
		"                          RAID 4 is always parity-last;\n"
		"                          RAID 6 also ddf-zero-restart, ddf-N-restart,\n"
		"                          ddf-N-continue, left-asymmetric-6, right-asymmetric-6,\n"
		"                          left-symmetric-6, right-symmetric-6, parity-first-6;\n"
		"                          RAID 10 nK, fK, oK (default n2); RAID 0 original\n"
		"                          (default) or alternate\n"
		"  -e, --metadata=VER      1.0 (at the end), 1.1 (at the start), 1.2 (4 KiB from the\n"
		"                          start, default)\n"
		"  -b, --bitmap=internal|none\n"
		"                          write-intent bitmap (default as mdadm 4.2: internal when\n"
		"                          each member contributes more than 100 GiB)\n"
		"      --bitmap-chunk=SIZE array data per bitmap bit, plain number in KiB (default:\n"
		"                          mdadm's, at least 64M)\n"
		"      --consistency-policy=resync|bitmap|ppl\n"
		"                          how a crash is made good (mdadm's words): resync (no\n"
		"                          bitmap), bitmap (--bitmap=internal), ppl (RAID 5: md's\n"
		"                          partial parity log, 1 MiB on each member, no resync\n"
		"                          after a crash and no write hole)\n"
		"  -d, --delay=SECONDS     seconds between the bitmap's sweeps; a bit clears two\n"
		"                          sweeps after the last write to its chunk (default 5)\n"
		"      --write-journal=DEVICE\n"
		"                          RAID 4/5/6: DEVICE becomes md's write journal (role\n"
		"                          journal, no bitmap); give it to serve as well\n"
		"  -N, --name=NAME         array name (default 'uraid'), stored as HOST:NAME\n"
		"      --homehost=HOST     HOST part of the name (default: this host; '<none>')\n"
		"  -z, --size=SIZE         space to use from each member (default: all of the\n"
		"                          smallest)\n"
		"      --assume-clean      the members' redundancy is already right: no resync\n"
		"  -f, --force             overwrite members that belong to another array\n"
		"      --uuid=UUID         array UUID (default random)\n"
		"      --dry-run           check and print the summary, write nothing\n"
		"      --json              what was made, as JSON (docs/json.md)\n"
		"  -R, --run, -q, --quiet  accepted for mdadm compatibility (uraid never prompts)\n"
		"  -h, --help              this text\n"
		"\n"
		"Without --assume-clean the array is marked for a full resync, unless every\n"
		"member's data area reads as zeroes (sparse or new image files): then the\n"
		"redundancy is right already and the array is born clean.\n");
}

enum {
	OPT_ASSUME_CLEAN = 256,
	OPT_WRITE_JOURNAL,
	OPT_BITMAP_CHUNK,
	OPT_HOMEHOST,
	OPT_UUID,
	OPT_DRY_RUN,
	OPT_JSON,
	OPT_CONSISTENCY,
	OPT_GROUPS,
};

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* "/dev/md0", "/dev/md127", "/dev/md/NAME": what mdadm --create takes
 * first. The kernel's md devices are never members of a uraid array. */
static bool md_device_name(const char *path)
{
	if (!strncmp(path, "/dev/md/", 8))
		return path[8] != 0;
	if (strncmp(path, "/dev/md", 7) || !path[7])
		return false;
	for (const char *p = path + 7; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "uraid create: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see 'uraid create --help'\n");
	return CLI_EXIT_USAGE;
}

void create_print_summary(const struct uraid_create_opts *o, const struct uraid_create_result *r)
{
	char uuid[40], a[32], b[32], c[32], lay[64];
	const char *lv = uraid_level_name(r->level);

	uraid_uuid_text(r->uuid, uuid, sizeof(uuid));
	printf("%s %s array '%s' (UUID %s), metadata 1.%u, on %u member%s",
	       o->flags & URAID_CREATE_DRY_RUN ? "Would create" : "Created", lv, r->set_name, uuid,
	       r->minor, r->raid_disks, r->raid_disks == 1 ? "" : "s");
	if (r->spares)
		printf(" + %u spare%s", r->spares, r->spares == 1 ? "" : "s");
	printf(": ");
	const struct uraid_level_info *li = uraid_level_info(r->level);
	if (r->chunk_sectors && li->chunk == URAID_CHUNK_STRIPE)
		printf("chunk %s, ", cli_bytes(r->chunk_sectors * 512ull, a, sizeof(a)));
	const char *layout = uraid_layout_name(r->level, r->layout, lay, sizeof(lay));
	if (layout && *layout)
		printf("layout %s, ", layout);
	printf("%s usable", cli_bytes(r->array_sectors * 512, a, sizeof(a)));
	if (r->size_sectors)
		printf(" (%s of each member", cli_bytes(r->size_sectors * 512, b, sizeof(b)));
	else
		printf(" (all of each member");
	printf(" from data offset %s), ", cli_bytes(r->data_offset * 512, c, sizeof(c)));
	if (r->bitmap)
		printf("internal bitmap with %s chunks.", cli_bytes(r->bitmap_chunk, a, sizeof(a)));
	else if (r->ppl)
		printf("partial parity log (PPL), no bitmap.");
	else
		printf("no bitmap.");
	if (r->journal)
		printf(" Write journal on %s.", o->write_journal);
	printf(" State: ");
	if (r->missing)
		printf("degraded, %u of %u members missing; ", r->missing, r->raid_disks);
	if (!li->redundant)
		printf("clean (no redundancy to compute).\n");
	else if (r->clean && (o->flags & URAID_CREATE_ASSUME_CLEAN))
		printf("clean, as --assume-clean says.\n");
	else if (r->clean && r->members_zero)
		printf("clean: every member reads as zeroes, so the redundancy is already right.\n");
	else if (r->clean)
		printf("clean: no redundancy is left to compute.\n");
	else
		printf("resync needed: the first assembly recomputes the redundancy%s.\n",
		       r->bitmap ? " (every bitmap bit is set)" : " over the whole array");
}

void create_json_open(struct json *j, const struct uraid_create_opts *o)
{
	json_begin(j, stdout);
	json_obj_open(j, NULL);
	json_u64(j, "version", CLI_JSON_VERSION);
	json_bool(j, "written", !(o->flags & URAID_CREATE_DRY_RUN));
}

void create_print_json(const struct uraid_create_opts *o, const struct uraid_create_result *r)
{
	struct json j;
	char buf[64];

	create_json_open(&j, o);
	json_str(&j, "array_uuid", uraid_uuid_text(r->uuid, buf, sizeof(buf)));
	json_str(&j, "name", r->set_name);
	snprintf(buf, sizeof(buf), "1.%u", r->minor);
	json_str(&j, "metadata", buf);
	json_str(&j, "level", uraid_level_name(r->level));
	json_u64(&j, "raid_devices", r->raid_disks);
	json_u64(&j, "spare_devices", r->spares);
	json_u64(&j, "missing_devices", r->missing);
	const char *layout = uraid_layout_name(r->level, r->layout, buf, sizeof(buf));
	if (layout)
		json_str(&j, "layout", layout);
	else
		json_null(&j, "layout");
	json_u64(&j, "layout_number", r->layout);
	json_u64(&j, "chunk_bytes", r->chunk_sectors * 512ull);
	json_u64(&j, "array_bytes", r->array_sectors * 512);
	json_u64(&j, "used_dev_bytes", r->size_sectors * 512);
	json_u64(&j, "data_offset_bytes", r->data_offset * 512);
	if (r->bitmap)
		json_u64(&j, "bitmap_chunk_bytes", r->bitmap_chunk);
	else
		json_null(&j, "bitmap_chunk_bytes");
	json_str(&j, "consistency_policy", r->bitmap ? "bitmap" : r->ppl ? "ppl" : "resync");
	json_bool(&j, "clean", r->clean);
	json_bool(&j, "journal", r->journal);
	json_bool(&j, "members_zero", r->members_zero);
	json_obj_close(&j);
	json_end(&j);
}

int cmd_create(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "level", required_argument, NULL, 'l' },
		{ "raid-devices", required_argument, NULL, 'n' },
		{ "spare-devices", required_argument, NULL, 'x' },
		{ "chunk", required_argument, NULL, 'c' },
		{ "layout", required_argument, NULL, 'p' },
		{ "parity", required_argument, NULL, 'p' },
		{ "metadata", required_argument, NULL, 'e' },
		{ "bitmap", required_argument, NULL, 'b' },
		{ "bitmap-chunk", required_argument, NULL, OPT_BITMAP_CHUNK },
		{ "consistency-policy", required_argument, NULL, OPT_CONSISTENCY },
		{ "delay", required_argument, NULL, 'd' },
		{ "name", required_argument, NULL, 'N' },
		{ "homehost", required_argument, NULL, OPT_HOMEHOST },
		{ "size", required_argument, NULL, 'z' },
		{ "assume-clean", no_argument, NULL, OPT_ASSUME_CLEAN },
		{ "write-journal", required_argument, NULL, OPT_WRITE_JOURNAL },
		{ "force", no_argument, NULL, 'f' },
		{ "uuid", required_argument, NULL, OPT_UUID },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "run", no_argument, NULL, 'R' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "groups", required_argument, NULL, OPT_GROUPS },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct uraid_create_opts o = { .minor = 2, .bitmap = URAID_BITMAP_DEFAULT };
	const char *layout_name = NULL;
	const char *policy = NULL;      /* --consistency-policy */
	bool level_given = false, disks_given = false, json = false;
	int nested = 0;                 /* 5 or 6: RAID 50 or 60 */
	uint32_t groups = 0;
	uint8_t uuid[16];
	uint64_t bytes;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":l:n:x:c:p:e:b:d:N:z:fRqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'l':
			nested = create_nested_level(optarg);
			if (nested) {
				o.level = nested;
				level_given = true;
				break;
			}
			if (uraid_level_parse(optarg, &o.level))
				return usage_error("unknown RAID level '%s' (0, 1, 4, 5, 6, 10, linear)",
						   optarg);
			level_given = true;
			break;
		case 'n':
			if (parse_u32(optarg, &o.raid_disks) || o.raid_disks == 0)
				return usage_error("--raid-devices needs a positive number, not '%s'",
						   optarg);
			disks_given = true;
			break;
		case 'x':
			if (parse_u32(optarg, &o.spare_devices))
				return usage_error("--spare-devices needs a number, not '%s'", optarg);
			break;
		case 'c':
			if (cli_parse_size(optarg, 1024, &bytes) || bytes % 1024 || bytes == 0 ||
			    bytes / 1024 > UINT32_MAX)
				return usage_error("bad chunk size '%s' (e.g. 64K, 512K, 1M)", optarg);
			o.chunk_kib = (uint32_t)(bytes / 1024);
			break;
		case 'p':
			layout_name = optarg;
			break;
		case 'e':
			if (!strcmp(optarg, "1.2") || !strcmp(optarg, "1") ||
			    !strcmp(optarg, "default"))
				o.minor = 2;
			else if (!strcmp(optarg, "1.1"))
				o.minor = 1;
			else if (!strcmp(optarg, "1.0"))
				o.minor = 0;
			else
				return usage_error("metadata '%s' is not supported (1.0, 1.1, 1.2)",
						   optarg);
			break;
		case 'b':
			if (!strcmp(optarg, "internal"))
				o.bitmap = URAID_BITMAP_INTERNAL;
			else if (!strcmp(optarg, "none"))
				o.bitmap = URAID_BITMAP_NONE;
			else
				return usage_error("--bitmap takes 'internal' or 'none', not '%s'",
						   optarg);
			break;
		case 'd':
			if (parse_u32(optarg, &o.bitmap_delay_s) || o.bitmap_delay_s == 0)
				return usage_error("--delay needs a positive number of seconds, not "
						   "'%s'", optarg);
			break;
		case OPT_CONSISTENCY:
			if (strcmp(optarg, "resync") && strcmp(optarg, "bitmap") &&
			    strcmp(optarg, "ppl"))
				return usage_error("--consistency-policy takes resync, bitmap or ppl, "
						   "not '%s'", optarg);
			policy = optarg;
			break;
		case OPT_BITMAP_CHUNK:
			if (cli_parse_size(optarg, 1024, &bytes) || bytes % 1024 ||
			    bytes / 1024 > UINT32_MAX / 1024)
				return usage_error("bad bitmap chunk '%s' (e.g. 64M)", optarg);
			o.bitmap_chunk_kib = (uint32_t)(bytes / 1024);
			break;
		case 'N':
			o.name = optarg;
			break;
		case OPT_HOMEHOST:
			o.homehost = optarg;
			break;
		case 'z':
			if (!strcmp(optarg, "max")) {
				o.size_kib = 0;
				break;
			}
			if (cli_parse_size(optarg, 1024, &bytes) || bytes < 1024)
				return usage_error("bad size '%s' (e.g. 100M, 2G)", optarg);
			o.size_kib = bytes / 1024;
			break;
		case OPT_ASSUME_CLEAN:
			o.flags |= URAID_CREATE_ASSUME_CLEAN;
			break;
		case OPT_WRITE_JOURNAL:
			o.write_journal = optarg;
			break;
		case 'f':
			o.flags |= URAID_CREATE_FORCE;
			break;
		case OPT_UUID:
			if (uraid_uuid_parse(optarg, uuid))
				return usage_error("bad UUID '%s' (32 hex digits)", optarg);
			o.uuid = uuid;
			break;
		case OPT_DRY_RUN:
			o.flags |= URAID_CREATE_DRY_RUN;
			break;
		case OPT_JSON:
			json = true;
			break;
		case 'R':
		case 'q':
			break;
		case OPT_GROUPS:
			if (parse_u32(optarg, &groups) || groups < 2)
				return usage_error("--groups needs a number of inner arrays (2 or more), "
						   "not '%s'", optarg);
			break;
		case 'h':
			create_usage(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_bad_option("create", argv);
		}
	}
	if (policy) {
		/* mdadm's policy names over --bitmap: they must agree */
		enum uraid_bitmap_choice want = !strcmp(policy, "bitmap") ? URAID_BITMAP_INTERNAL
										: URAID_BITMAP_NONE;
		if (o.bitmap != URAID_BITMAP_DEFAULT && o.bitmap != want)
			return usage_error("--consistency-policy=%s and --bitmap disagree; give "
					   "one of them", policy);
		o.bitmap = want;
		o.ppl = !strcmp(policy, "ppl");
	}
	if (!level_given)
		return usage_error("%s", "--level is required");
	if (groups && !nested)
		return usage_error("%s", "--groups is for --level=50 or 60");
	if (nested && !groups)
		return usage_error("%s", "RAID 50/60 needs --groups=G (the number of inner arrays)");
	if (!disks_given && !nested)
		return usage_error("%s", "--raid-devices is required");
	if (layout_name) {
		/* levels without layouts: let the library say so in its words */
		const struct uraid_level_info *li = uraid_level_info(o.level);
		if (li && li->has_layouts && uraid_layout_parse(o.level, layout_name, &o.layout)) {
			fprintf(stderr, "uraid create: layout '%s' does not exist for %s; "
				"see 'uraid create --help'\n", layout_name, uraid_level_name(o.level));
			return CLI_EXIT_USAGE;
		}
		o.layout_given = true;
	}
	o.paths = (const char *const *)argv + optind;
	o.npaths = (unsigned)(argc - optind);
	if (o.npaths == 0)
		return usage_error("%s", "no devices given");
	if (md_device_name(o.paths[0])) {
		const char *name = strncmp(o.paths[0], "/dev/md/", 8) ? o.paths[0] + 5
				   : o.paths[0] + 8;
		fprintf(stderr, "uraid create: %s is an md device name (mdadm's first argument); "
			"uraid makes no /dev/md device: name the array with --name=%s and list "
			"only the members\n", o.paths[0], name);
		return CLI_EXIT_USAGE;
	}

	if (nested) {
		if (disks_given && o.raid_disks != o.npaths)
			return usage_error("%s", "RAID 50/60: --raid-devices counts every DEVICE "
					   "(or leave it out)");
		o.raid_disks = o.npaths;
		return create_nested(&o, groups, json);
	}
	struct uraid_create_result r;
	char err[512];
	if (uraid_create(&o, &r, err, sizeof(err))) {
		fprintf(stderr, "uraid create: %s\n", err);
		return CLI_EXIT_FAIL;
	}
	if (json)
		create_print_json(&o, &r);
	else
		create_print_summary(&o, &r);
	return CLI_EXIT_OK;
}
