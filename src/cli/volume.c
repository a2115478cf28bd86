// SPDX-License-Identifier: MIT
/*
 * uraid volume create|delete|grow: a volume of a pool is one partition on
 * each drive it uses and an md array over them (docs/pools.md). Create
 * adds the partitions to the drives' GPTs, then makes the array with
 * uraid create's code; if that fails the partitions go again.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include <uraid/create.h>
#include <uraid/geom.h>
#include <uraid/level.h>
#include <uraid/nested.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/create_cli.h"
#include "cli/pool_cli.h"
#include "cli/util.h"
#include "cli/volume_cli.h"
#include "common/block_parts.h"
#include "common/file_lock.h"
#include "common/full_io.h"
#include "common/range_path.h"
#include "pool/le.h"

static void volume_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid volume create POOL VOLUME --resiliency=R | --level=L --size=SIZE|max\n"
		"                           [--drives=N] [--groups=G] [--chunk=SIZE]\n"
		"                           [DEVICE|GLOB...] [--json]\n"
		"       uraid volume delete POOL VOLUME [DEVICE|GLOB...] [--json]\n"
		"       uraid volume grow POOL VOLUME --drives=N | --size=SIZE|max [DEVICE|GLOB...]\n"
		"\n"
		"A volume is an md array (metadata 1.2) over one new partition on each drive it\n"
		"uses, placed on the pool's drives with the most free space. The pool's drives\n"
		"are found as 'uraid pool status' finds them: the DEVICEs and GLOBs given, else\n"
		"the configuration file's DEVICE lines. Serve it with\n"
		"'uraid serve --pool=POOL --volume=VOLUME'.\n"
		"\n"
		"  -r, --resiliency=R   simple (RAID 0), mirror (RAID 1 on 2 drives, RAID 10 n2\n"
		"                       on more), three-way-mirror (RAID 1 on 3, RAID 10 n3 on\n"
		"                       more), parity (RAID 5), dual-parity (RAID 6)\n"
		"  -l, --level=L        an md level instead: 0, 1, 5, 6 or 10 (RAID 10 n2), or\n"
		"                       50, 60 (nested, with --groups)\n"
		"  -g, --groups=G       RAID 50/60: G inner RAID 5 (parity) or RAID 6\n"
		"                       (dual-parity) arrays, each over its own drives, and a\n"
		"                       RAID 0 over them; --drives a multiple of G, at least\n"
		"                       3 (RAID 50) or 4 (RAID 60) drives per group\n"
		"  -z, --size=SIZE      the volume's size (K, M, G, T; a plain number is KiB), or\n"
		"                       max: the largest that fits\n"
		"  -n, --drives=N       how many drives it uses (create's default: the count\n"
		"                       that gives the largest volume for max, else every\n"
		"                       drive with room: --level=1 mirrors across all of\n"
		"                       them; --drives=2 for a two-way mirror); grow: how\n"
		"                       many it is to use\n"
		"  -c, --chunk=SIZE     chunk size (default 512K; RAID 1 has none)\n"
		"      --config=FILE    the configuration file whose DEVICE lines to read\n"
		"      --json           what was made or deleted, as JSON (not for grow)\n"
		"  -h, --help           this text\n"
		"\n"
		"delete refuses a volume that is served (its partitions are locked by the server),\n"
		"then erases its md superblocks (a RAID 50/60 volume's: the RAID 0's on its inner\n"
		"arrays' data too) and removes its partitions.\n"
		"\n"
		"grow --drives=N puts the volume on N drives: new partitions of its partition\n"
		"size on the pool's drives with the most room, then md's reshape (RAID 4/5/6\n"
		"restripe, RAID 1 more mirrors, RAID 0 through RAID 4 and back). grow\n"
		"--size=SIZE|max extends each partition into the free space right after it,\n"
		"then the size used on each member (RAID 1/4/5/6; the new part is resynced).\n"
		"Not served: done here, with progress on stderr (killed, 'uraid serve' goes on\n"
		"from the reshape's checkpoint). Served: --drives goes through its server;\n"
		"--size is refused (stop it first). A degraded volume is refused, and so is\n"
		"a RAID 50/60 volume (md does not grow stacked arrays).\n");
}


static int parse_opts(const char *cmd, int argc, char **argv, struct volume_opts *o)
{
	static const struct option longopts[] = {
		{ "resiliency", required_argument, NULL, 'r' },
		{ "level", required_argument, NULL, 'l' },
		{ "size", required_argument, NULL, 'z' },
		{ "drives", required_argument, NULL, 'n' },
		{ "groups", required_argument, NULL, 'g' },
		{ "chunk", required_argument, NULL, 'c' },
		POOL_COMMON_LONGOPTS
	};
	uint64_t v;
	char *end;
	int c;

	memset(o, 0, sizeof(*o));
	o->level = -100;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":r:l:z:n:g:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (pool_resiliency_parse(optarg, &o->res)) {
				fprintf(stderr, "uraid %s: --resiliency=%s: say simple, mirror, "
					"three-way-mirror, parity or dual-parity\n", cmd, optarg);
				return CLI_EXIT_USAGE;
			}
			o->have_res = true;
			break;
		case 'l':
			if ((o->level = create_nested_level(optarg))) {
				o->nested = true;
			} else if (uraid_level_parse(optarg, &o->level)) {
				fprintf(stderr, "uraid %s: --level=%s is not an md level\n", cmd, optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'z':
			if (!strcmp(optarg, "max")) {
				o->max = true;
			} else if (cli_parse_size(optarg, 1024, &o->size_bytes) || !o->size_bytes ||
				   o->size_bytes % 512) {
				fprintf(stderr, "uraid %s: --size=%s: give a size (K, M, G, T; a plain "
					"number is KiB) or max\n", cmd, optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case 'n':
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 1 || v > POOL_MAX_DRIVES) {
				fprintf(stderr, "uraid %s: --drives=%s: a count of 1 to %u\n", cmd, optarg,
					POOL_MAX_DRIVES);
				return CLI_EXIT_USAGE;
			}
			o->drives = (unsigned)v;
			break;
		case 'g':
			errno = 0;
			v = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || v < 2 || v > URAID_NESTED_MAX_GROUPS) {
				fprintf(stderr, "uraid %s: --groups=%s: a count of 2 to %u inner "
					"arrays\n", cmd, optarg, URAID_NESTED_MAX_GROUPS);
				return CLI_EXIT_USAGE;
			}
			o->groups = (unsigned)v;
			break;
		case 'c':
			if (cli_parse_size(optarg, 1024, &v) || v < 4096 || v % 4096 ||
			    v / 1024 > (1u << 21)) {
				fprintf(stderr, "uraid %s: --chunk=%s: a multiple of 4K up to 2G\n", cmd,
					optarg);
				return CLI_EXIT_USAGE;
			}
			o->chunk_kib = (uint32_t)(v / 1024);
			break;
		case POOL_OPT_CONFIG: o->config = optarg; break;
		case POOL_OPT_JSON: o->json = true; break;
		case 'h': volume_usage(stdout); return CLI_EXIT_OK;
		default: return cli_bad_option(cmd, argv);
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "uraid %s: give the pool's and the volume's names; see 'uraid volume "
			"--help'\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (o->nested && !o->groups) {
		fprintf(stderr, "uraid %s: RAID 50/60 needs --groups=G (the number of inner "
			"arrays)\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (o->groups && (o->have_res ? o->res != POOL_PARITY && o->res != POOL_DUAL_PARITY
				      : o->level != URAID_LEVEL_5 && o->level != URAID_LEVEL_6)) {
		fprintf(stderr, "uraid %s: --groups is for parity or dual-parity volumes (RAID "
			"50 or 60: --resiliency=parity|dual-parity or --level=50|60)\n", cmd);
		return CLI_EXIT_USAGE;
	}
	o->pool = argv[optind];
	o->name = argv[optind + 1];
	o->first = optind + 2;
	return -1;
}

void volume_unlock_tables(int *fds)
{
	for (unsigned i = 0; i < POOL_MAX_DRIVES; i++)
		if (fds[i] >= 0) {
			close(fds[i]);
			fds[i] = -1;
		}
}

/*
 * Lock the table area (the first 34 sectors) of every drive of the pool,
 * in the pool's drive order (two commands cannot deadlock), waiting for
 * another uraid that is changing one. The pool is read again under these
 * locks and they are held until the command is done: two volume creates
 * cannot pick the same free space or GPT entry, and an undo or a delete
 * never writes a table read before another command changed it. Volumes
 * served from the drives go on (their locks are on their partitions).
 */
int volume_lock_tables(const char *cmd, const struct pool *p, int *fds)
{
	char err[600];

	for (unsigned i = 0; i < POOL_MAX_DRIVES; i++)
		fds[i] = -1;
	for (unsigned i = 0; i < p->ndrives; i++) {
		const char *path = p->drive[i]->path;
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0,
				    .l_len = GPT_PRIMARY_BYTES };
		int rc = 0;
		fds[i] = open(path, O_RDWR | O_CLOEXEC);
		if (fds[i] < 0)
			rc = -errno;
		else if (p->drive[i]->blockdev == false)
			/* shared, as a range's: keeps off a uraid using the whole file */
			rc = uraid_file_lock(fds[i], false, path, err, sizeof(err));
		while (!rc && fcntl(fds[i], F_OFD_SETLKW, &fl) < 0) {
			if (errno == EINTR)
				continue;
			/* a file system without locks (some network ones): none, as file_lock */
			if (errno != ENOLCK && errno != EOPNOTSUPP && errno != EINVAL)
				rc = -errno;
			break;
		}
		if (rc) {
			if (rc == -EBUSY)
				fprintf(stderr, "uraid %s: %s\n", cmd, err);
			else
				fprintf(stderr, "uraid %s: %s: cannot lock its GPT: %s\n", cmd, path,
					strerror(-rc));
			volume_unlock_tables(fds);
			return CLI_EXIT_FAIL;
		}
	}
	return 0;
}

/* Write the tables of the drives `which` through their locked fds (lock_tables). */
int volume_write_tables(const char *cmd, struct pool *p, const int *fds, const unsigned *which,
			unsigned n)
{
	char err[600];
	for (unsigned i = 0; i < n; i++) {
		struct pool_drive *d = p->drive[which[i]];
		int rc = gpt_write(fds[which[i]], &d->gpt, err, sizeof(err));
		/* the kernel reads the new table when no partition of the drive is open;
		   else its nodes stay old, and the volume's members are ranges (pool.c) */
		if (rc == 0 && d->blockdev)
			(void)ioctl(fds[which[i]], BLKRRPART);
		if (rc) {
			fprintf(stderr, "uraid %s: %s: %s\n", cmd, d->path, err);
			return CLI_EXIT_FAIL;
		}
	}
	return 0;
}

/* The inner level of a RAID 50/60 volume (5 or 6). */
static int nested_level(const struct volume_opts *o)
{
	if (!o->have_res)
		return o->level;
	return o->res == POOL_DUAL_PARITY ? URAID_LEVEL_6 : URAID_LEVEL_5;
}

/* The fewest drives the volume asked for takes. */
static unsigned min_drives(const struct volume_opts *o)
{
	if (o->groups)
		return o->groups * pool_nested_group_min(nested_level(o));
	return o->have_res ? pool_resiliency_min_drives(o->res) : 0;
}

/* The name of what is asked for, for messages. */
static const char *asked_name(const struct volume_opts *o)
{
	if (o->groups)
		return uraid_nested_level_name(nested_level(o));
	return o->have_res ? pool_resiliency_name(o->res) : uraid_level_name(o->level);
}

/* The shape asked for over k drives. */
static int shape_for(const struct volume_opts *o, unsigned k, struct pool_shape *s, char *err,
		     size_t errlen)
{
	if (o->groups)
		return pool_shape_nested(nested_level(o), k, o->groups, o->chunk_kib, s, err,
					 errlen);
	if (o->have_res)
		return pool_shape_of(o->res, k, o->chunk_kib, s, err, errlen);
	return pool_shape_of_level(o->level, k, o->chunk_kib, s, err, errlen);
}

/* The drive count: given, or the one that gives the most room (max), or
 * the most drives on which the size fits. */
static unsigned choose_drives(const struct volume_opts *o, const struct pool *p,
			      const uint64_t *freeb, uint64_t want, uint64_t *best_fit)
{
	unsigned pick[POOL_MAX_DRIVES], lo = 1, hi = p->ndrives, best = 0;
	struct pool_shape s;

	*best_fit = 0;
	if (o->drives)
		lo = hi = o->drives;
	for (unsigned k = lo; k <= hi && k <= p->ndrives; k++) {
		uint64_t per = pool_place(freeb, p->ndrives, k, pick);
		if (!per || shape_for(o, k, &s, NULL, 0))
			continue;
		uint64_t size;
		pool_max_part(&s, per, &size);
		if (size > *best_fit || (size == *best_fit && size)) {
			*best_fit = size;
			if (o->max)
				best = k;
		}
		if (!o->max && size >= want)
			best = k;       /* the most drives that hold it */
	}
	return best;
}

/* r is the array made; for a RAID 50/60 volume (nr not NULL) the RAID 0 over nr->inner. */
static void print_created(const struct volume_opts *o, const struct pool *p,
			  const struct uraid_create_result *r,
			  const struct uraid_nested_result *nr, char **specs, unsigned n)
{
	char uuid[40], a[32], level[64];
	const char *word = nr ? pool_level_word(nr->inner[0].level, nr->inner[0].layout,
						 nr->inner[0].raid_disks)
			      : pool_level_word(r->level, r->layout, r->raid_disks);

	uraid_uuid_text(r->uuid, uuid, sizeof(uuid));
	if (o->json) {
		struct json j;
		json_begin(&j, stdout);
		json_obj_open(&j, NULL);
		json_u64(&j, "version", CLI_JSON_VERSION);
		json_str(&j, "pool", p->label.name);
		json_str(&j, "volume", o->name);
		json_str(&j, "uuid", uuid);
		json_str(&j, "level", nr ? uraid_nested_level_name(nr->inner[0].level)
					 : uraid_level_name(r->level));
		json_str(&j, "resiliency", word);
		json_u64(&j, "size_bytes", r->array_sectors * 512);
		if (nr) {
			json_u64(&j, "groups", nr->groups);
			json_arr_open(&j, "inner");
			for (unsigned g = 0; g < nr->groups; g++) {
				json_obj_open(&j, NULL);
				json_str(&j, "name", nr->inner[g].set_name);
				char iu[40];
				json_str(&j, "uuid", uraid_uuid_text(nr->inner[g].uuid, iu,
								     sizeof(iu)));
				json_str(&j, "level", uraid_level_name(nr->inner[g].level));
				json_u64(&j, "raid_devices", nr->inner[g].raid_disks);
				json_obj_close(&j);
			}
			json_arr_close(&j);
		}
		json_arr_open(&j, "members");
		for (unsigned i = 0; i < n; i++)
			json_str(&j, NULL, specs[i]);
		json_arr_close(&j);
		json_obj_close(&j);
		json_end(&j);
		return;
	}
	if (nr)
		snprintf(level, sizeof(level), "RAID %d0: a RAID 0 of %u RAID %d arrays",
			 nr->inner[0].level, nr->groups, nr->inner[0].level);
	else
		snprintf(level, sizeof(level), "%s", uraid_level_name(r->level));
	printf("Created volume '%s' in pool '%s': %s (%s) on %u drive%s, %s, md UUID %s\n",
	       o->name, p->label.name, word, level, n, n == 1 ? "" : "s",
	       cli_bytes(r->array_sectors * 512, a, sizeof(a)), uuid);
	printf("Serve it with: uraid serve --pool=%s --volume=%s", p->label.name, o->name);
	for (unsigned i = 0; i < p->ndrives; i++)
		printf(" %s", p->drive[i]->path);
	printf("\n");
}

static int volume_create(struct volume_opts *o, struct pool *p, const int *fds)
{
	const char *cmd = "volume create";
	uint64_t freeb[POOL_MAX_DRIVES], first[POOL_MAX_DRIVES], fit;
	unsigned pick[POOL_MAX_DRIVES];
	struct pool_shape s;
	char err[600], a[32], b[32];
	char *specs[POOL_MAX_DRIVES] = { 0 };
	int st = CLI_EXIT_FAIL;

	if (!o->have_res && o->level == -100) {
		fprintf(stderr, "uraid %s: give --resiliency or --level\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (!o->max && !o->size_bytes) {
		fprintf(stderr, "uraid %s: give --size=SIZE or --size=max\n", cmd);
		return CLI_EXIT_USAGE;
	}
	if (!pool_name_ok(o->name, POOL_VOL_NAME_MAX)) {
		fprintf(stderr, "uraid %s: '%s' is not a volume name: 1 to %u letters, digits, "
			"'_', '.' or '-', not starting with '.' or '-'\n", cmd, o->name,
			POOL_VOL_NAME_MAX);
		return CLI_EXIT_USAGE;
	}
	if (pool_volume_find(p, o->name)) {
		fprintf(stderr, "uraid %s: pool '%s' has a volume '%s' already\n", cmd,
			p->label.name, o->name);
		return CLI_EXIT_USAGE;
	}
	if (o->drives && shape_for(o, o->drives, &s, err, sizeof(err))) {
		fprintf(stderr, "uraid %s: %s\n", cmd, err);
		return CLI_EXIT_USAGE;
	}
	if (!o->have_res && !o->groups && shape_for(o, p->ndrives, &s, err, sizeof(err))) {
		fprintf(stderr, "uraid %s: %s (pool '%s' has %u drives)\n", cmd, err, p->label.name,
			p->ndrives);
		return CLI_EXIT_USAGE;
	}
	if (o->drives > p->ndrives || min_drives(o) > p->ndrives) {
		unsigned need = o->drives ? o->drives : min_drives(o);
		fprintf(stderr, "uraid %s: %s%s needs %u drives; pool '%s' has %u\n", cmd,
			asked_name(o), o->groups ? " of that many groups" : "", need, p->label.name,
			p->ndrives);
		return CLI_EXIT_USAGE;
	}
	pool_free_per_drive(p, freeb, first);
	uint64_t want = o->size_bytes / 512;
	unsigned k = choose_drives(o, p, freeb, want, &fit);
	if (k == 0) {
		if (fit)
			fprintf(stderr, "uraid %s: %s does not fit in pool '%s': the largest %s volume "
				"that fits is %s%s\n", cmd, cli_bytes(o->size_bytes, a, sizeof(a)),
				p->label.name, asked_name(o), cli_bytes(fit * 512, b, sizeof(b)),
				o->drives ? " on that many drives" : "");
		else
			fprintf(stderr, "uraid %s: no room for a %s volume in pool '%s' (too few "
				"drives with free space)\n", cmd, asked_name(o),
				p->label.name);
		return CLI_EXIT_FAIL;
	}
	uint64_t per = pool_place(freeb, p->ndrives, k, pick);
	shape_for(o, k, &s, NULL, 0);
	uint64_t part = o->max ? pool_max_part(&s, per, NULL) : pool_part_sectors_for(&s, want);
	if (!part || part > per) {
		fprintf(stderr, "uraid %s: %s does not fit\n", cmd, cli_bytes(o->size_bytes, a, sizeof(a)));
		return CLI_EXIT_FAIL;
	}
	/* the partitions: one per drive chosen, at the start of its largest free extent */
	char pname[GPT_NAME_CHARS + 1];
	pool_part_name(p->label.name, o->name, pname, sizeof(pname));
	int entry[POOL_MAX_DRIVES];
	for (unsigned i = 0; i < k; i++) {
		struct pool_drive *d = p->drive[pick[i]];
		entry[i] = gpt_free_entry(&d->gpt);
		if (entry[i] < 0) {
			fprintf(stderr, "uraid %s: %s has no free GPT entry (128 partitions)\n", cmd,
				d->path);
			return CLI_EXIT_FAIL;
		}
		struct gpt_part *gp = &d->gpt.part[entry[i]];
		memcpy(gp->type, pool_type_volume, 16);
		if (gpt_guid_random(gp->guid))
			return CLI_EXIT_FAIL;
		gp->first = first[pick[i]];
		gp->last = gp->first + part - 1;
		snprintf(gp->name, sizeof(gp->name), "%s", pname);
		if (!(specs[i] = malloc(POOL_SPEC_LEN)))
			goto out;
	}
	if (volume_write_tables(cmd, p, fds, pick, k))
		goto undo;
	for (unsigned i = 0; i < k; i++)
		pool_member_spec(p->drive[pick[i]], (unsigned)entry[i], specs[i], POOL_SPEC_LEN);

	struct uraid_create_opts co = {
		.level = s.level, .layout_given = s.level == URAID_LEVEL_10 ||
						   s.level == URAID_LEVEL_5 ||
						   s.level == URAID_LEVEL_6,
		.layout = s.layout, .raid_disks = k, .chunk_kib = s.chunk_sectors / 2, .minor = 2,
		.name = o->name, .homehost = "<none>",
		/* the whole partition: a volume asked for by size is at least that size */
		.paths = (const char *const *)specs, .npaths = k,
	};
	struct uraid_create_result r;
	if (s.groups >= 2) {
		/* RAID 50/60: the inner arrays over the partitions in placement
		   order, group g on the g-th k/G of them, named VOLUME-g, and the
		   RAID 0 named VOLUME over them (uraid create --level=50|60) */
		struct uraid_nested_result *nr = malloc(sizeof(*nr));
		int rc = nr ? uraid_nested_create(&co, s.groups, nr, err, sizeof(err)) : -ENOMEM;
		if (rc) {
			fprintf(stderr, "uraid %s: %s; the partitions are taken out again\n", cmd,
				nr ? err : "out of memory");
			free(nr);
			goto undo;
		}
		print_created(o, p, &nr->outer, nr, specs, k);
		free(nr);
		st = CLI_EXIT_OK;
		goto out;
	}
	if (uraid_create(&co, &r, err, sizeof(err))) {
		fprintf(stderr, "uraid %s: %s; the partitions are taken out again\n", cmd, err);
		goto undo;
	}
	print_created(o, p, &r, NULL, specs, k);
	st = CLI_EXIT_OK;
	goto out;
undo:
	for (unsigned i = 0; i < k; i++)
		memset(&p->drive[pick[i]]->gpt.part[entry[i]], 0, sizeof(struct gpt_part));
	volume_write_tables(cmd, p, fds, pick, k);
out:
	for (unsigned i = 0; i < k; i++)
		free(specs[i]);
	return st;
}

/* Erase the md superblock (1.2: 4 KiB from the partition's start) of a partition. */
static int erase_superblock(int fd, const struct gpt_part *gp)
{
	alignas(4096) static const uint8_t zero[4096];
	uint64_t at = gp->first + uraid_sb_location(2, gp->last - gp->first + 1);
	int rc = uraid_pwrite_full(fd, zero, sizeof(zero), at * 512);
	return rc ? rc : (fdatasync(fd) < 0 ? -errno : 0);
}

/*
 * A RAID 50/60 volume: the RAID 0's superblock on each inner array's data
 * (uraid_nested_outer_sb_loc), zeroed where it is found (its md magic), as
 * zero-superblock zeroes a superblock: else a volume made later on the same
 * space would hold it in its data, and a scan of that volume (md's, blkid's)
 * would find a RAID 0 that is gone. It is looked for at that member sector
 * on every partition of the group, not only the data block's: the row's
 * other data blocks there are the RAID 0's empty metadata area, so a RAID
 * 5's parity block is a copy of the superblock (a RAID 6's P too). The
 * inner superblocks go right after, so parity left stale never matters.
 * Zeroed copies in *zeroed; 0 or an exit status after one line.
 */
static int erase_outer_superblocks(const char *cmd, const struct pool *p,
				   const struct pool_volume *v, const int *part_fd,
				   unsigned *zeroed)
{
	struct uraid_probe *pr = malloc(sizeof(*pr));
	struct uraid_sb *sb = calloc(v->nparts, sizeof(*sb));
	int st = 0;

	*zeroed = 0;
	if (!pr || !sb) {
		fprintf(stderr, "uraid %s: out of memory\n", cmd);
		st = CLI_EXIT_FAIL;
		goto out;
	}
	/* each partition's own superblock (none: level stays 0 in sb[i]) */
	for (unsigned i = 0; i < v->nparts; i++) {
		const struct gpt_part *gp = &p->drive[v->drive[i]]->gpt.part[v->entry[i]];
		if (uraid_probe_range(part_fd[i], gp->first, gp->last - gp->first + 1, pr) == 0 &&
		    pr->chosen >= 0 && !pr->loc[pr->chosen].status)
			sb[i] = pr->loc[pr->chosen].sb;
	}
	for (unsigned g = 0; g < v->groups && !st; g++) {
		const struct uraid_sb *fresh = NULL;
		struct uraid_loc loc;

		for (unsigned i = 0; i < v->nparts; i++)
			if (v->part_group[i] == (int8_t)g && sb[i].level &&
			    !memcmp(sb[i].set_uuid, v->group_uuid[g], 16) &&
			    (!fresh || sb[i].events > fresh->events))
				fresh = &sb[i];
		if (!fresh || uraid_nested_outer_sb_loc(fresh, &loc))
			continue;
		for (unsigned i = 0; i < v->nparts && !st; i++) {
			if (v->part_group[i] != (int8_t)g || !sb[i].level ||
			    memcmp(sb[i].set_uuid, v->group_uuid[g], 16))
				continue;
			const struct pool_drive *d = p->drive[v->drive[i]];
			const struct gpt_part *gp = &d->gpt.part[v->entry[i]];
			uint64_t at = gp->first + sb[i].data_offset + loc.sector;
			alignas(4096) uint8_t blk[URAID_SB_BYTES];
			alignas(4096) static const uint8_t zero[URAID_SB_BYTES];
			int rc = 0;

			if (at + URAID_SB_BYTES / 512 > gp->last + 1)
				continue;       /* a superblock that lies about its offsets */
			rc = uraid_pread_full(part_fd[i], blk, sizeof(blk), (off_t)(at * 512));
			if (rc == 0 && le_get32(blk) != URAID_SB_MAGIC)
				continue;
			if (rc == 0)
				rc = uraid_pwrite_full(part_fd[i], zero, sizeof(zero), (off_t)(at * 512));
			if (rc == 0 && fdatasync(part_fd[i]) < 0)
				rc = -errno;
			if (rc) {
				fprintf(stderr, "uraid %s: %s: erasing the RAID 0 superblock on %s "
					"failed: %s\n", cmd, d->path, v->group_name[g], strerror(-rc));
				st = CLI_EXIT_FAIL;
			} else {
				(*zeroed)++;
			}
		}
	}
out:
	free(sb);
	free(pr);
	return st;
}

static int volume_delete(struct volume_opts *o, struct pool *p, const int *fds)
{
	const char *cmd = "volume delete";
	struct pool_volume *v = pool_volume_find(p, o->name);
	char err[600], spec[320];
	unsigned which[POOL_MAX_DRIVES];
	int part_fd[POOL_MAX_DRIVES];
	int st = 0;

	if (!v) {
		fprintf(stderr, "uraid %s: pool '%s' has no volume '%s'\n", cmd, p->label.name,
			o->name);
		return CLI_EXIT_USAGE;
	}
	/* claim every partition first: a served volume holds its ranges locked */
	for (unsigned i = 0; i < v->nparts; i++) {
		const struct pool_drive *d = p->drive[v->drive[i]];
		const struct gpt_part *gp = &d->gpt.part[v->entry[i]];
		struct uraid_range_path rp = { .ranged = true, .start = gp->first,
					       .sectors = gp->last - gp->first + 1 };
		snprintf(rp.path, sizeof(rp.path), "%s", d->path);
		part_fd[i] = open(d->path, O_RDWR | O_CLOEXEC);
		which[i] = v->drive[i];
		int rc = part_fd[i] < 0 ? -errno : uraid_range_path_lock(part_fd[i], &rp, true, err,
								       sizeof(err));
		/* served from its partition node (/dev/sdb2), or assembled by the
		   kernel's md: that claim is not seen through the whole device */
		struct stat sb;
		pool_member_spec(d, v->entry[i], spec, sizeof(spec));
		if (rc == 0 && d->blockdev && fstat(part_fd[i], &sb) == 0 && S_ISBLK(sb.st_mode))
			rc = uraid_block_parts_free(sb.st_rdev, rp.start, rp.sectors, spec, err,
						    sizeof(err));
		if (rc) {
			pool_member_spec(d, v->entry[i], spec, sizeof(spec));
			if (rc == -EBUSY && d->blockdev)
				fprintf(stderr, "uraid %s: volume '%s' is in use: %s; nothing was "
					"changed\n", cmd, o->name, err);
			else if (rc == -EBUSY)
				fprintf(stderr, "uraid %s: volume '%s' is in use (another uraid holds "
					"%s: served?); stop serving it first ('uraid stop %s')\n", cmd,
					o->name, spec, o->name);
			else
				fprintf(stderr, "uraid %s: %s: %s\n", cmd, d->path,
					part_fd[i] < 0 ? strerror(-rc) : err);
			for (unsigned k = 0; k <= i; k++)
				if (part_fd[k] >= 0)
					close(part_fd[k]);
			return CLI_EXIT_FAIL;
		}
	}
	unsigned outer_zeroed = 0;
	if (v->groups >= 2)
		st = erase_outer_superblocks(cmd, p, v, part_fd, &outer_zeroed);
	for (unsigned i = 0; i < v->nparts && !st; i++) {
		struct pool_drive *d = p->drive[v->drive[i]];
		int rc = erase_superblock(part_fd[i], &d->gpt.part[v->entry[i]]);
		if (rc) {
			fprintf(stderr, "uraid %s: %s: erasing the md superblock failed: %s\n", cmd,
				d->path, strerror(-rc));
			st = CLI_EXIT_FAIL;
		}
		memset(&d->gpt.part[v->entry[i]], 0, sizeof(struct gpt_part));
	}
	for (unsigned i = 0; i < v->nparts; i++)
		close(part_fd[i]);
	if (st == 0)
		st = volume_write_tables(cmd, p, fds, which, v->nparts);
	if (st == 0 && o->json) {
		struct json j;
		json_begin(&j, stdout);
		json_obj_open(&j, NULL);
		json_u64(&j, "version", CLI_JSON_VERSION);
		json_str(&j, "pool", p->label.name);
		json_str(&j, "volume", o->name);
		json_u64(&j, "partitions_removed", v->nparts);
		if (v->groups >= 2)
			json_u64(&j, "outer_superblocks_erased", outer_zeroed);
		json_obj_close(&j);
		json_end(&j);
	}
	if (st == 0 && !o->json)
		printf("Deleted volume '%s' of pool '%s' (%u partition%s%s)\n", o->name,
		       p->label.name, v->nparts, v->nparts == 1 ? "" : "s",
		       v->groups >= 2 ? "; the RAID 0's superblocks on its inner arrays erased too"
				      : "");
	return st;
}

int cmd_volume(int argc, char **argv)
{
	struct volume_opts o;
	struct pool_candidates c;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		volume_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	const char *verb = argv[1];
	if (strcmp(verb, "create") && strcmp(verb, "delete") && strcmp(verb, "grow")) {
		fprintf(stderr, "uraid volume: '%s' is not a volume command (create, delete, grow); "
			"see 'uraid volume --help'\n", verb);
		return CLI_EXIT_USAGE;
	}
	char cmd[32];
	snprintf(cmd, sizeof(cmd), "volume %s", verb);
	int st = parse_opts(cmd, argc - 1, argv + 1, &o);
	if (st >= 0)
		return st;
	st = pool_candidates_get(cmd, o.config, argv + 1 + o.first, (unsigned)(argc - 1 - o.first),
				 &c);
	if (st)
		return st;
	/* find the pool's drives, lock their tables, then read the pool again
	   under the locks (lock_tables) */
	struct pool *p = calloc(1, sizeof(*p));
	int fds[POOL_MAX_DRIVES];
	char err[600];
	for (unsigned i = 0; i < POOL_MAX_DRIVES; i++)
		fds[i] = -1;
	if (!p) {
		st = CLI_EXIT_FAIL;
		goto out;
	}
	if (pool_find(o.pool, c.path, c.n, p, err, sizeof(err)) == 0 && p->ndrives &&
	    (st = volume_lock_tables(cmd, p, fds)))
		goto out;
	unsigned locked = p->ndrives;
	char (*locked_path)[256] = calloc(POOL_MAX_DRIVES, 256);
	if (!locked_path) {
		st = CLI_EXIT_FAIL;
		goto out;
	}
	for (unsigned i = 0; i < locked; i++)
		memcpy(locked_path[i], p->drive[i]->path, 256);
	pool_release(p);
	if ((st = pool_cli_find(cmd, o.pool, &c, p)) < 0) {
		bool same = p->ndrives == locked;
		for (unsigned i = 0; same && i < locked; i++)
			same = !strcmp(p->drive[i]->path, locked_path[i]);
		if (!same) {
			fprintf(stderr, "uraid %s: pool '%s' changed while its tables were being "
				"locked (a drive added?); run the command again\n", cmd, o.pool);
			st = CLI_EXIT_FAIL;
		} else {
			st = !strcmp(verb, "create") ? volume_create(&o, p, fds)
			     : !strcmp(verb, "grow") ? volume_grow(&o, p, fds)
						     : volume_delete(&o, p, fds);
		}
	}
	free(locked_path);
out:
	volume_unlock_tables(fds);
	if (p)
		pool_release(p);
	free(p);
	pool_candidates_free(&c);
	return st;
}
