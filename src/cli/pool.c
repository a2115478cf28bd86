// SPDX-License-Identifier: MIT
/*
 * uraid pool create|add|status|list: a set of drives with a GPT each, from
 * which volumes of different resiliency are carved (docs/pools.md). The
 * on-disk work is src/pool/; this file parses, checks and prints.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/level.h>
#include <uraid/nested.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/pool_cli.h"
#include "ctl/ctl.h"
#include "cli/scan.h"
#include "cli/util.h"
#include "cli/volume_cli.h"
#include "common/file_lock.h"
#include "common/full_io.h"
#include "common/range_path.h"

static void pool_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid pool create NAME DEVICE...   [--force] [--json]\n"
		"       uraid pool add NAME DEVICE...      [--force] [--json]\n"
		"       uraid pool status NAME [DEVICE|GLOB...] [--config=FILE] [--json]\n"
		"       uraid pool repair NAME [DEVICE|GLOB...] [--config=FILE]\n"
		"       uraid pool list [DEVICE|GLOB...]   [--config=FILE] [--json]\n"
		"\n"
		"A pool is a set of drives (block devices or image files), each with a GPT,\n"
		"from which volumes of different resiliency are made ('uraid volume'). Each\n"
		"volume is an md array over one partition per drive it uses: mdadm and the\n"
		"kernel assemble it without uraid. See docs/pools.md.\n"
		"\n"
		"  create   write a GPT and the pool's label to each DEVICE; refuses a drive\n"
		"           that holds a partition table, an md superblock or any data in its\n"
		"           first or last MiB, or belongs to a pool, and a NAME that another\n"
		"           pool among the candidates (as 'list' finds them) has, unless --force\n"
		"  add      add new drives to the pool (later volumes can use them); give the\n"
		"           new DEVICEs, and the pool's drives unless the configuration file's\n"
		"           DEVICE lines find them\n"
		"  status   drives and their free space, volumes (level, size, health), and\n"
		"           for each resiliency the largest volume that would still fit\n"
		"  repair   a drive that has grown (its backup GPT at the old end): the\n"
		"           backup moved to the new end, as sgdisk -e; a damaged GPT copy\n"
		"           written again from the sound one\n"
		"  list     the pools found\n"
		"\n"
		"Pools are found by reading the GPT of each candidate: the DEVICEs and GLOBs\n"
		"given, else the DEVICE lines of the configuration file (--config, default\n"
		"/etc/uraid/uraid.conf), else every partition of /proc/partitions.\n"
		"\n"
		"  -f, --force          write over what the drives hold\n"
		"      --config=FILE    the configuration file whose DEVICE lines to read\n"
		"      --json           the result as JSON (docs/json.md)\n"
		"  -h, --help           this text\n");
}

/* ---- shared with volume.c and serve ---- */

static int add_candidate(const char *path, void *arg)
{
	struct pool_candidates *c = arg;
	if (c->n == c->cap) {
		unsigned cap = c->cap ? c->cap * 2 : 16;
		char **np = realloc(c->path, cap * sizeof(*np));
		if (!np)
			return -ENOMEM;
		c->path = np;
		c->cap = cap;
	}
	if (!(c->path[c->n] = strdup(path)))
		return -ENOMEM;
	c->n++;
	return 0;
}

int pool_candidates_get(const char *cmd, const char *config, char *const *globs, unsigned n,
			struct pool_candidates *c)
{
	struct uraid_config cfg;
	int rc;

	memset(c, 0, sizeof(*c));
	if (n)
		rc = config_for_each_glob(globs, n, add_candidate, c);
	else {
		int st = scan_load_config(cmd, config, &cfg);
		if (st)
			return st;
		rc = config_for_each_device(&cfg, add_candidate, c);
		config_free(&cfg);
	}
	if (rc) {
		fprintf(stderr, "uraid %s: cannot list the candidate drives: %s\n", cmd,
			strerror(rc < 0 ? -rc : EIO));
		pool_candidates_free(c);
		return CLI_EXIT_FAIL;
	}
	return 0;
}

void pool_candidates_free(struct pool_candidates *c)
{
	for (unsigned i = 0; i < c->n; i++)
		free(c->path[i]);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

int pool_cli_find(const char *cmd, const char *name, const struct pool_candidates *c,
		  struct pool *p)
{
	char err[600];
	int rc = pool_find(name, c->path, c->n, p, err, sizeof(err));

	if (rc) {
		fprintf(stderr, "uraid %s: %s\n", cmd, err);
		return CLI_EXIT_FAIL;
	}
	if (p->ndrives == 0) {
		fprintf(stderr, "uraid %s: no drive of pool '%s' among the %u candidates; give the "
			"pool's drives (or globs), or DEVICE lines in the configuration file\n",
			cmd, name, c->n);
		return CLI_EXIT_FAIL;
	}
	for (unsigned i = 0; i < p->ndrives; i++) {
		const struct gpt_read_info *in = &p->drive[i]->info;
		char a[32], b[32];
		if (in->grown && strcmp(cmd, "pool repair"))
			fprintf(stderr, "uraid %s: %s has grown (%s -> %s): its backup GPT is at the "
				"old end; 'uraid pool repair %s' moves it to the new end (the free "
				"space grows)\n", cmd, p->drive[i]->path,
				cli_bytes(in->grown_from * 512, a, sizeof(a)),
				cli_bytes(p->drive[i]->sectors * 512, b, sizeof(b)), p->label.name);
		if (!in->primary_ok || !in->backup_ok)
			fprintf(stderr, "uraid %s: %s: the %s GPT is damaged (%s); the other copy is "
				"used; both are written again when a volume is made on or deleted from this "
				"drive\n", cmd,
				p->drive[i]->path, in->primary_ok ? "backup" : "primary",
				in->primary_ok ? in->backup_why : in->primary_why);
	}
	return -1;
}

void pool_free_per_drive(const struct pool *p, uint64_t *largest, uint64_t *first)
{
	for (unsigned i = 0; i < p->ndrives; i++)
		largest[i] = pool_drive_largest_free(p->drive[i], &first[i]);
}

uint64_t pool_largest_volume(const struct pool *p, enum pool_resiliency r, uint32_t chunk_kib,
			     unsigned *drives)
{
	uint64_t freeb[POOL_MAX_DRIVES], first[POOL_MAX_DRIVES], best = 0;
	unsigned pick[POOL_MAX_DRIVES];
	struct pool_shape s;

	*drives = 0;
	pool_free_per_drive(p, freeb, first);
	for (unsigned k = pool_resiliency_min_drives(r); k <= p->ndrives; k++) {
		uint64_t per = pool_place(freeb, p->ndrives, k, pick);
		if (!per || pool_shape_of(r, k, chunk_kib, &s, NULL, 0))
			continue;
		uint64_t size;
		pool_max_part(&s, per, &size);
		if (size >= best && size) {     /* a tie: more drives, more speed */
			best = size;
			*drives = k;
		}
	}
	return best;
}

uint64_t pool_largest_nested(const struct pool *p, int level, uint32_t chunk_kib,
			     unsigned *drives, unsigned *groups)
{
	uint64_t freeb[POOL_MAX_DRIVES], first[POOL_MAX_DRIVES], best = 0;
	unsigned pick[POOL_MAX_DRIVES], min = pool_nested_group_min(level);
	struct pool_shape s;

	*drives = *groups = 0;
	pool_free_per_drive(p, freeb, first);
	for (unsigned g = 2; g <= URAID_NESTED_MAX_GROUPS && g * min <= p->ndrives; g++)
		for (unsigned k = g * min; k <= p->ndrives; k += g) {
			uint64_t per = pool_place(freeb, p->ndrives, k, pick), size;
			if (!per || pool_shape_nested(level, k, g, chunk_kib, &s, NULL, 0))
				continue;
			pool_max_part(&s, per, &size);
			if (size && (size > best || (size == best && k > *drives))) {
				best = size;
				*drives = k;
				*groups = g;
			}
		}
	return best;
}

const char *pool_volume_word(const struct pool_volume *v, char *buf, size_t len)
{
	if (v->groups < 2)
		return pool_level_word(v->level, v->layout, v->raid_disks);
	snprintf(buf, len, "%s, %u groups", uraid_nested_level_name(v->level), v->groups);
	return buf;
}

const char *pool_level_word(int level, uint32_t layout, unsigned raid_disks)
{
	switch (level) {
	case URAID_LEVEL_0: return "simple";
	case URAID_LEVEL_1: return raid_disks >= 3 ? "three-way-mirror" : "mirror";
	case URAID_LEVEL_5: return "parity";
	case URAID_LEVEL_6: return "dual-parity";
	case URAID_LEVEL_10:
		if (layout == 0x102)
			return "mirror";
		if (layout == 0x103)
			return "three-way-mirror";
		return "raid10";
	default: return uraid_level_name(level);
	}
}

unsigned pool_volume_members(const struct pool *p, const struct pool_volume *v, char **out,
			     size_t len_each)
{
	for (unsigned i = 0; i < v->nparts; i++)
		pool_member_spec(p->drive[v->drive[i]], v->entry[i], out[i], len_each);
	return v->nparts;
}

bool pool_member_superseded(const struct pool *p, const struct pool_volume *v, unsigned i)
{
	if (i >= v->nparts || !v->superseded[i])
		return false;
	char spec[320];
	pool_member_spec(p->drive[v->drive[i]], v->entry[i], spec, sizeof(spec));
	fprintf(stderr, "uraid serve: volume '%s': %s left out: a newer member took its device "
		"number (a spare was rebuilt in its place)\n", v->name, spec);
	return true;
}

/* ---- options ---- */

struct pool_opts {
	bool force, json;
	const char *config;
	int first;                  /* index of the first operand */
};

static int parse_opts(const char *cmd, int argc, char **argv, struct pool_opts *o)
{
	static const struct option longopts[] = {
		{ "force", no_argument, NULL, 'f' },
		POOL_COMMON_LONGOPTS
	};
	int c;

	memset(o, 0, sizeof(*o));
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":fh", longopts, NULL)) != -1) {
		switch (c) {
		case 'f': o->force = true; break;
		case POOL_OPT_JSON: o->json = true; break;
		case POOL_OPT_CONFIG: o->config = optarg; break;
		case 'h': pool_usage(stdout); return CLI_EXIT_OK;
		default: return cli_bad_option(cmd, argv);
		}
	}
	o->first = optind;
	return -1;
}

/* ---- create and add ---- */

struct new_drive {
	const char *path;
	int fd;
	uint64_t sectors;
	bool blockdev;
};

static void close_new(struct new_drive *d, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (d[i].fd >= 0)
			close(d[i].fd);
}

/* Open a new drive for writing, claimed whole (O_EXCL, or an exclusive flock). */
static int open_new(const char *cmd, struct new_drive *d, bool force)
{
	char err[600];
	struct pool_drive *pd = malloc(sizeof(*pd));

	if (!pd)
		return CLI_EXIT_FAIL;
	if (pool_drive_read(d->path, pd, err, sizeof(err)) == 0 && !force) {
		fprintf(stderr, "uraid %s: %s is a drive of pool '%s'; use --force to take it "
			"(its volumes are lost)\n", cmd, d->path, pd->label.name);
		free(pd);
		return CLI_EXIT_FAIL;
	}
	free(pd);
	d->fd = open(d->path, O_RDWR | O_CLOEXEC);
	if (d->fd >= 0 && uraid_dev_sectors(d->fd, &d->sectors, &d->blockdev) == 0 && d->blockdev) {
		close(d->fd);
		d->fd = open(d->path, O_RDWR | O_CLOEXEC | O_EXCL);
	}
	if (d->fd < 0) {
		fprintf(stderr, "uraid %s: %s: %s\n", cmd, d->path,
			errno == EBUSY ? "in use (mounted, or held by a driver)" : strerror(errno));
		return CLI_EXIT_FAIL;
	}
	if (d->blockdev ? uraid_block_whole_lock(d->fd, d->path, err, sizeof(err))
			: uraid_file_lock(d->fd, true, d->path, err, sizeof(err))) {
		fprintf(stderr, "uraid %s: %s\n", cmd, err);
		return CLI_EXIT_FAIL;
	}
	if (!force && pool_drive_check_blank(d->fd, d->sectors, err, sizeof(err))) {
		fprintf(stderr, "uraid %s: %s %s; use --force to write over it\n", cmd, d->path, err);
		return CLI_EXIT_FAIL;
	}
	if (d->sectors < GPT_MIN_SECTORS + 2 * POOL_LABEL_SECTORS) {
		fprintf(stderr, "uraid %s: %s is too small for a pool drive (%llu KiB; at least "
			"%u KiB)\n", cmd, d->path, (unsigned long long)d->sectors / 2,
			(GPT_MIN_SECTORS + 2 * POOL_LABEL_SECTORS) / 2);
		return CLI_EXIT_FAIL;
	}
	return 0;
}

static int format_all(const char *cmd, struct new_drive *d, unsigned n,
		      const struct pool_label *base, unsigned first_index)
{
	char err[600];
	for (unsigned i = 0; i < n; i++) {
		struct pool_label l = *base;
		l.index = first_index + i;
		if (pool_drive_format(d[i].fd, d[i].sectors, &l, err, sizeof(err))) {
			fprintf(stderr, "uraid %s: %s: %s\n", cmd, d[i].path, err);
			return CLI_EXIT_FAIL;
		}
	}
	return 0;
}

/* Rewrite a pool drive's label with the pool's new drive count. */
static int relabel(const char *cmd, const struct pool_drive *pd, uint32_t ndrives)
{
	alignas(512) uint8_t sector[512];
	struct pool_label l = pd->label;
	int fd = open(pd->path, O_RDWR | O_CLOEXEC);
	int rc = fd < 0 ? -errno : 0;

	l.ndrives = ndrives;
	pool_label_encode(&l, sector);
	if (!rc && pd->label_part >= 0)
		rc = uraid_pwrite_full(fd, sector, 512, pd->gpt.part[pd->label_part].first * 512);
	if (!rc && fdatasync(fd) < 0)
		rc = -errno;
	if (fd >= 0)
		close(fd);
	if (rc)
		fprintf(stderr, "uraid %s: %s: writing its label: %s\n", cmd, pd->path,
			strerror(-rc));
	return rc ? CLI_EXIT_FAIL : 0;
}

static void print_made(const struct pool_opts *o, const char *verb, const struct pool_label *l,
		       const struct new_drive *d, unsigned n)
{
	char uuid[40], b[32];
	uint64_t total = 0;

	uraid_uuid_text(l->uuid, uuid, sizeof(uuid));
	for (unsigned i = 0; i < n; i++)
		total += d[i].sectors;
	if (o->json) {
		struct json j;
		json_begin(&j, stdout);
		json_obj_open(&j, NULL);
		json_u64(&j, "version", CLI_JSON_VERSION);
		json_str(&j, "pool", l->name);
		json_str(&j, "uuid", uuid);
		json_arr_open(&j, verb[0] == 'C' ? "drives" : "added");
		for (unsigned i = 0; i < n; i++)
			json_str(&j, NULL, d[i].path);
		json_arr_close(&j);
		json_obj_close(&j);
		json_end(&j);
		return;
	}
	printf("%s pool '%s' (UUID %s): %u drive%s, %s\n", verb, l->name, uuid, n,
	       n == 1 ? "" : "s", cli_bytes(total * 512, b, sizeof(b)));
}

/*
 * Another pool of this name among the candidates (found as pool list finds
 * them: the configuration's DEVICE lines, else /proc/partitions), on a
 * drive that is not one of the new ones: two pools of one name cannot be
 * told apart by 'pool status' or 'serve --pool'. 0, or an exit status
 * after a message.
 */
static int name_taken(const struct pool_opts *o, const char *name, char **newp, unsigned n)
{
	struct pool_candidates c;
	struct pool_drive *d = malloc(sizeof(*d));
	char err[600];
	int st = pool_candidates_get("pool create", o->config, NULL, 0, &c);

	if (st || !d) {
		free(d);
		return st ? st : CLI_EXIT_FAIL;
	}
	for (unsigned i = 0; i < c.n && !st; i++) {
		struct stat sc, sn;
		bool mine = false;
		if (stat(c.path[i], &sc))
			continue;
		for (unsigned k = 0; k < n && !mine; k++)
			mine = stat(newp[k], &sn) == 0 && uraid_same_file(&sc, &sn);
		if (mine || pool_drive_read(c.path[i], d, err, sizeof(err)) ||
		    strcmp(d->label.name, name))
			continue;
		fprintf(stderr, "uraid pool create: a pool named '%s' exists already (%s is its "
			"drive %u); choose another name, or --force to make a second one (then give "
			"the drives of one to every pool command)\n", name, c.path[i], d->label.index);
		st = CLI_EXIT_FAIL;
	}
	free(d);
	pool_candidates_free(&c);
	return st;
}

static int pool_create(const struct pool_opts *o, int argc, char **argv)
{
	const char *name = argv[o->first];
	unsigned n = (unsigned)(argc - o->first - 1);
	struct new_drive d[POOL_MAX_DRIVES];
	struct pool_label l = { .ctime = (uint64_t)time(NULL) };
	int st = 0;

	if (!pool_name_ok(name, POOL_NAME_MAX)) {
		fprintf(stderr, "uraid pool create: '%s' is not a pool name: 1 to %u letters, digits, "
			"'_', '.' or '-', not starting with '.' or '-'\n", name, POOL_NAME_MAX);
		return CLI_EXIT_USAGE;
	}
	if (n == 0 || n > POOL_MAX_DRIVES) {
		fprintf(stderr, "uraid pool create: give 1 to %u drives; see 'uraid pool --help'\n",
			POOL_MAX_DRIVES);
		return CLI_EXIT_USAGE;
	}
	for (unsigned i = 0; i < n; i++)
		d[i] = (struct new_drive){ .path = argv[o->first + 1 + i], .fd = -1 };
	if (!o->force && (st = name_taken(o, name, argv + o->first + 1, n)))
		return st;
	for (unsigned i = 0; i < n && !st; i++)
		st = open_new("pool create", &d[i], o->force);
	if (!st && gpt_guid_random(l.uuid))
		st = CLI_EXIT_FAIL;
	snprintf(l.name, sizeof(l.name), "%s", name);
	l.ndrives = n;
	if (!st)
		st = format_all("pool create", d, n, &l, 0);
	close_new(d, n);
	if (!st)
		print_made(o, "Created", &l, d, n);
	return st;
}

/*
 * A pool served whole (serve --pool): its server is told of each new drive,
 * which it uses as a spare for the degraded volumes (serve_pool_spare.c).
 * Its answer goes to stdout (stderr with --json); the drives are the
 * pool's whatever it says.
 */
static void tell_server(const struct pool_opts *o, const char *name, const struct new_drive *d,
			unsigned n)
{
	char ctl[CTL_MAX_LINE], msg[CTL_MAX_LINE], abs[PATH_MAX];
	if (!cli_pool_control(name, ctl, sizeof(ctl)))
		return;
	for (unsigned i = 0; i < n; i++) {
		const char *fields[2] = { "add", realpath(d[i].path, abs) ? abs : d[i].path };
		FILE *to = o->json ? stderr : stdout;
		fflush(stdout);
		int rc = ctl_call(ctl, fields, 2, to, msg, sizeof(msg));
		if (rc)
			fprintf(stderr, "uraid pool add: pool '%s' is served; its server did not take "
				"%s as a spare: %s\n", name, d[i].path, msg);
	}
}

static int pool_add(const struct pool_opts *o, int argc, char **argv)
{
	const char *name = argv[o->first];
	struct pool_candidates c = { 0 };
	struct pool *p = calloc(1, sizeof(*p));
	struct new_drive d[POOL_MAX_DRIVES];
	unsigned n = 0;
	int st;

	if (!p)
		return CLI_EXIT_FAIL;
	if (argc - o->first < 2) {
		fprintf(stderr, "uraid pool add: give the pool's name and the new drives; see "
			"'uraid pool --help'\n");
		free(p);
		return CLI_EXIT_USAGE;
	}
	/* the pool among the drives given, else the configuration's */
	char **given = argv + o->first + 1;
	unsigned ngiven = (unsigned)(argc - o->first - 1);
	struct pool_candidates gc = { .path = given, .n = ngiven };
	char err[600];
	if (pool_find(name, gc.path, gc.n, p, err, sizeof(err)) || p->ndrives == 0) {
		pool_release(p);
		st = pool_candidates_get("pool add", o->config, NULL, 0, &c);
		if (st || (st = pool_cli_find("pool add", name, &c, p)) >= 0)
			goto out;
	}
	for (unsigned i = 0; i < ngiven; i++) {
		bool member = false;
		struct pool_drive *pd = malloc(sizeof(*pd));
		if (pd && pool_drive_read(given[i], pd, err, sizeof(err)) == 0 &&
		    !memcmp(pd->label.uuid, p->label.uuid, 16))
			member = true;
		free(pd);
		if (member)
			continue;
		if (n + p->ndrives >= POOL_MAX_DRIVES) {
			fprintf(stderr, "uraid pool add: a pool has at most %u drives\n",
				POOL_MAX_DRIVES);
			st = CLI_EXIT_USAGE;
			goto out;
		}
		d[n++] = (struct new_drive){ .path = given[i], .fd = -1 };
	}
	if (n == 0) {
		fprintf(stderr, "uraid pool add: every drive given is in pool '%s' already\n", name);
		st = CLI_EXIT_USAGE;
		goto out;
	}
	st = 0;
	for (unsigned i = 0; i < n && !st; i++)
		st = open_new("pool add", &d[i], o->force);
	unsigned next = 0;
	for (unsigned i = 0; i < p->ndrives; i++)
		if (p->drive[i]->label.index >= next)
			next = p->drive[i]->label.index + 1;
	/* a new drive takes the next index: every drive of the pool must be found,
	   else it would take a missing drive's (the labels record the count) */
	unsigned recorded = 0;
	for (unsigned i = 0; i < p->ndrives; i++)
		if (p->drive[i]->label.ndrives > recorded)
			recorded = p->drive[i]->label.ndrives;
	if (!st && (p->ndrives != next || (recorded && p->ndrives < recorded))) {
		unsigned want = recorded > next ? recorded : next;
		fprintf(stderr, "uraid pool add: pool '%s' has %u drives, %u of them found; give "
			"every drive of the pool (a new drive must not take a missing one's "
			"number)\n", name, want, p->ndrives);
		st = CLI_EXIT_USAGE;
	}
	if (!st && next + n > POOL_MAX_DRIVES) {
		fprintf(stderr, "uraid pool add: a pool has at most %u drives\n", POOL_MAX_DRIVES);
		st = CLI_EXIT_USAGE;
	}
	struct pool_label l = p->label;
	l.ndrives = next + n;
	if (!st)
		st = format_all("pool add", d, n, &l, next);
	/* the pool's drives learn the new count */
	for (unsigned i = 0; i < p->ndrives && !st; i++)
		st = relabel("pool add", p->drive[i], l.ndrives);
	close_new(d, n);
	if (!st)
		print_made(o, "Added to", &l, d, n);
	if (!st)
		tell_server(o, name, d, n);
out:
	pool_release(p);
	free(p);
	pool_candidates_free(&c);
	return st;
}

/* ---- repair ---- */

/*
 * The GPTs of the pool's drives made whole again: a grown drive's backup
 * moved to the new end (as sgdisk -e), a damaged copy written again from
 * the sound one. Under the table locks volume create and delete take.
 */
static int pool_repair(const struct pool_opts *o, int argc, char **argv)
{
	const char *cmd = "pool repair", *name = argv[o->first];
	struct pool_candidates c;
	struct pool *p = calloc(1, sizeof(*p));
	int fds[POOL_MAX_DRIVES];
	unsigned which[POOL_MAX_DRIVES], n = 0;
	uint64_t old_end[POOL_MAX_DRIVES];
	char err[600], a[32], b[32];
	int st;

	for (unsigned i = 0; i < POOL_MAX_DRIVES; i++)
		fds[i] = -1;
	if (!p)
		return CLI_EXIT_FAIL;
	st = pool_candidates_get(cmd, o->config, argv + o->first + 1,
				 (unsigned)(argc - o->first - 1), &c);
	if (st || (st = pool_cli_find(cmd, name, &c, p)) >= 0 ||
	    (st = volume_lock_tables(cmd, p, fds)))
		goto out;
	/* each drive read again under its lock */
	for (unsigned i = 0; i < p->ndrives; i++) {
		struct pool_drive *d = p->drive[i];
		char path[sizeof(d->path)];
		uint32_t index = d->label.index;
		snprintf(path, sizeof(path), "%s", d->path);
		if (pool_drive_read(path, d, err, sizeof(err))) {
			fprintf(stderr, "uraid %s: %s\n", cmd, err);
			st = CLI_EXIT_FAIL;
			goto out;
		}
		/* the path may name another drive now (replaced between the look and
		   the lock): only the same drive of the same pool is written */
		if (memcmp(d->label.uuid, p->label.uuid, 16) || d->label.index != index) {
			fprintf(stderr, "uraid %s: %s changed while it was being locked (no longer "
				"drive %u of pool '%s'); nothing written, run it again\n", cmd, path,
				index, p->label.name);
			st = CLI_EXIT_FAIL;
			goto out;
		}
		old_end[i] = 0;
		if (d->info.grown) {
			old_end[i] = d->info.grown_from;
			if (gpt_move_backup(&d->gpt, d->sectors, err, sizeof(err))) {
				fprintf(stderr, "uraid %s: %s: %s\n", cmd, d->path, err);
				st = CLI_EXIT_FAIL;
				goto out;
			}
		} else if (d->info.primary_ok && d->info.backup_ok) {
			continue;
		}
		which[n++] = i;
	}
	if ((st = volume_write_tables(cmd, p, fds, which, n)))
		goto out;
	for (unsigned k = 0; k < n; k++) {
		const struct pool_drive *d = p->drive[which[k]];
		if (!old_end[which[k]]) {
			printf("%s: the damaged GPT copy written again from the sound one\n", d->path);
			continue;
		}
		/* the old backup (now in free space) zeroed, so that no tool finds a
		   stale header there; only below the new backup's entries: a drive
		   grown by less than the backup's 33 sectors has its new backup over
		   part of the old one */
		static const uint8_t zero[GPT_BACKUP_BYTES];
		uint64_t from = old_end[which[k]] - GPT_BACKUP_BYTES / 512;
		uint64_t to = d->sectors - GPT_BACKUP_BYTES / 512;
		if (to > old_end[which[k]])
			to = old_end[which[k]];
		uint64_t at = from * 512;
		int rc = 0;
		if (to > from)
			rc = uraid_pwrite_full(fds[which[k]], zero, (to - from) * 512, at);
		if (rc == 0 && to > from && fdatasync(fds[which[k]]) < 0)
			rc = -errno;
		if (rc)
			fprintf(stderr, "uraid %s: %s: zeroing the old backup GPT at byte %llu: %s "
				"(the new tables are written)\n", cmd, d->path,
				(unsigned long long)at, strerror(-rc));
		printf("%s: grown %s -> %s: the backup GPT moved to the new end\n", d->path,
		       cli_bytes(old_end[which[k]] * 512, a, sizeof(a)),
		       cli_bytes(d->sectors * 512, b, sizeof(b)));
	}
	if (!n)
		printf("pool '%s': nothing to repair (every GPT is sound and at its drive's end)\n",
		       p->label.name);
	st = CLI_EXIT_OK;
out:
	volume_unlock_tables(fds);
	pool_release(p);
	free(p);
	pool_candidates_free(&c);
	return st;
}

/* ---- status and list ---- */

static const char *volume_health(const struct pool_volume *v, char *buf, size_t len)
{
	if (!v->has_md)
		return "no md superblock";
	/* first: a member one event behind (md takes it) is usual when a
	   reshape is stopped as it starts */
	if (v->over_groups)
		snprintf(buf, len, "%u partition%s of more inner arrays than the %u uraid takes",
			 v->over_groups, v->over_groups == 1 ? "" : "s", URAID_NESTED_MAX_GROUPS);
	else if (v->reshaping)
		snprintf(buf, len, "mid-reshape (serve it to go on)");
	else if (v->present < v->raid_disks && v->groups >= 2) {
		/* RAID 50/60: which inner arrays lack members */
		size_t n = (size_t)snprintf(buf, len, "degraded (");
		for (unsigned g = 0, k = 0; g < v->groups && n < len; g++)
			if (v->group_present[g] < v->group_disks[g])
				n += (size_t)snprintf(buf + n, len - n, "%s%s: %u of %u",
						      k++ ? ", " : "", v->group_name[g],
						      v->group_present[g], v->group_disks[g]);
		if (n < len)
			snprintf(buf + n, len - n, ")");
	} else if (v->present < v->raid_disks)
		snprintf(buf, len, "degraded (%u of %u)", v->present, v->raid_disks);
	else
		snprintf(buf, len, v->resync_needed ? "resync needed" : "clean");
	return buf;
}

static void status_json(const struct pool *p, const uint64_t *freeb)
{
	char uuid[40], h[160], spec[320];
	struct json j;

	json_begin(&j, stdout);
	json_obj_open(&j, NULL);
	json_u64(&j, "version", CLI_JSON_VERSION);
	json_str(&j, "pool", p->label.name);
	json_str(&j, "uuid", uraid_uuid_text(p->label.uuid, uuid, sizeof(uuid)));
	json_arr_open(&j, "drives");
	for (unsigned i = 0; i < p->ndrives; i++) {
		const struct pool_drive *d = p->drive[i];
		json_obj_open(&j, NULL);
		json_str(&j, "path", d->path);
		json_u64(&j, "index", d->label.index);
		json_u64(&j, "size_bytes", d->sectors * 512);
		json_u64(&j, "largest_free_bytes", freeb[i] * 512);
		json_bool(&j, "gpt_primary_ok", d->info.primary_ok);
		json_bool(&j, "gpt_backup_ok", d->info.backup_ok);
		json_bool(&j, "grown", d->info.grown);
		if (d->info.grown)
			json_u64(&j, "gpt_size_bytes", d->info.grown_from * 512);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_arr_open(&j, "volumes");
	for (unsigned v = 0; v < p->nvolumes; v++) {
		const struct pool_volume *vol = &p->vol[v];
		json_obj_open(&j, NULL);
		json_str(&j, "name", vol->name);
		if (vol->has_md && vol->groups >= 2) {
			/* RAID 50/60: the RAID 0's size, every inner array */
			json_str(&j, "level", uraid_nested_level_name(vol->level));
			json_str(&j, "resiliency", pool_level_word(vol->level, vol->layout,
								    vol->raid_disks));
			json_u64(&j, "size_bytes", vol->array_sectors * 512);
			json_u64(&j, "raid_disks", vol->raid_disks);
			json_u64(&j, "groups", vol->groups);
			json_arr_open(&j, "inner");
			for (unsigned g = 0; g < vol->groups; g++) {
				json_obj_open(&j, NULL);
				json_str(&j, "name", vol->group_name[g]);
				json_str(&j, "uuid", uraid_uuid_text(vol->group_uuid[g], uuid,
								     sizeof(uuid)));
				json_str(&j, "level", uraid_level_name(vol->level));
				json_u64(&j, "raid_disks", vol->group_disks[g]);
				json_u64(&j, "present", vol->group_present[g]);
				json_obj_close(&j);
			}
			json_arr_close(&j);
		} else if (vol->has_md) {
			json_str(&j, "level", uraid_level_name(vol->level));
			json_str(&j, "resiliency", pool_level_word(vol->level, vol->layout,
								    vol->raid_disks));
			json_u64(&j, "size_bytes", vol->array_sectors * 512);
			json_u64(&j, "raid_disks", vol->raid_disks);
		}
		json_str(&j, "health", volume_health(vol, h, sizeof(h)));
		json_arr_open(&j, "members");
		for (unsigned k = 0; k < vol->nparts; k++) {
			pool_member_spec(p->drive[vol->drive[k]], vol->entry[k], spec, sizeof(spec));
			json_str(&j, NULL, spec);
		}
		json_arr_close(&j);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_arr_open(&j, "largest_new_volume");
	for (unsigned r = 0; r < POOL_RESILIENCIES; r++) {
		unsigned k;
		uint64_t s = pool_largest_volume(p, (enum pool_resiliency)r, 0, &k);
		json_obj_open(&j, NULL);
		json_str(&j, "resiliency", pool_resiliency_name((enum pool_resiliency)r));
		json_u64(&j, "size_bytes", s * 512);
		json_u64(&j, "drives", k);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_arr_open(&j, "largest_new_nested");
	for (int level = URAID_LEVEL_5; level <= URAID_LEVEL_6; level++) {
		unsigned k, g;
		uint64_t s = pool_largest_nested(p, level, 0, &k, &g);
		json_obj_open(&j, NULL);
		json_str(&j, "resiliency", level == URAID_LEVEL_6 ? "dual-parity" : "parity");
		json_str(&j, "level", uraid_nested_level_name(level));
		json_u64(&j, "size_bytes", s * 512);
		json_u64(&j, "drives", k);
		json_u64(&j, "groups", g);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_obj_close(&j);
	json_end(&j);
}

static int pool_status(const struct pool_opts *o, int argc, char **argv)
{
	const char *name = argv[o->first];
	struct pool_candidates c;
	struct pool *p = calloc(1, sizeof(*p));
	uint64_t freeb[POOL_MAX_DRIVES], first[POOL_MAX_DRIVES];
	char uuid[40], a[32], b[32], h[160];
	int st;

	if (!p)
		return CLI_EXIT_FAIL;
	st = pool_candidates_get("pool status", o->config, argv + o->first + 1,
				 (unsigned)(argc - o->first - 1), &c);
	if (st || (st = pool_cli_find("pool status", name, &c, p)) >= 0)
		goto out;
	st = CLI_EXIT_OK;
	pool_free_per_drive(p, freeb, first);
	if (o->json) {
		status_json(p, freeb);
		goto out;
	}
	printf("Pool '%s' (UUID %s), %u drive%s\n", p->label.name,
	       uraid_uuid_text(p->label.uuid, uuid, sizeof(uuid)), p->ndrives,
	       p->ndrives == 1 ? "" : "s");
	printf("\n  %-3s %-40s %12s %12s\n", "#", "drive", "size", "largest free");
	for (unsigned i = 0; i < p->ndrives; i++) {
		const struct pool_drive *d = p->drive[i];
		printf("  %-3u %-40s %12s %12s%s%s\n", d->label.index, d->path,
		       cli_bytes(d->sectors * 512, a, sizeof(a)), cli_bytes(freeb[i] * 512, b, sizeof(b)),
		       d->info.primary_ok && d->info.backup_ok ? "" : "  (one GPT copy damaged)",
		       d->info.grown ? "  (grown: 'uraid pool repair')" : "");
	}
	printf("\n  %-20s %-17s %12s %6s  %s\n", "volume", "resiliency", "size", "drives", "health");
	if (!p->nvolumes)
		printf("  (none)\n");
	for (unsigned v = 0; v < p->nvolumes; v++) {
		const struct pool_volume *vol = &p->vol[v];
		char word[40];
		printf("  %-20s %-17s %12s %6u  %s\n", vol->name,
		       vol->has_md ? pool_volume_word(vol, word, sizeof(word)) : "?",
		       vol->has_md ? cli_bytes(vol->array_sectors * 512, a, sizeof(a)) : "?",
		       vol->has_md ? vol->raid_disks : vol->nparts, volume_health(vol, h, sizeof(h)));
	}
	printf("\n  largest new volume:\n");
	for (unsigned r = 0; r < POOL_RESILIENCIES; r++) {
		unsigned k;
		uint64_t s = pool_largest_volume(p, (enum pool_resiliency)r, 0, &k);
		if (s)
			printf("  %-17s %12s on %u drive%s\n", pool_resiliency_name((enum pool_resiliency)r),
			       cli_bytes(s * 512, a, sizeof(a)), k, k == 1 ? "" : "s");
		else
			printf("  %-17s %12s (needs %u drives with free space)\n",
			       pool_resiliency_name((enum pool_resiliency)r), "-",
			       pool_resiliency_min_drives((enum pool_resiliency)r));
	}
	for (int level = URAID_LEVEL_5; level <= URAID_LEVEL_6; level++) {
		unsigned k, g;
		uint64_t s = pool_largest_nested(p, level, 0, &k, &g);
		const char *word = uraid_nested_level_name(level);
		if (s)
			printf("  %-17s %12s on %u drives, %u groups\n", word,
			       cli_bytes(s * 512, a, sizeof(a)), k, g);
		else
			printf("  %-17s %12s (needs %u drives with free space)\n", word, "-",
			       2 * pool_nested_group_min(level));
	}
out:
	pool_release(p);
	free(p);
	pool_candidates_free(&c);
	return st;
}

static int pool_list(const struct pool_opts *o, int argc, char **argv)
{
	struct pool_candidates c;
	char names[64][POOL_NAME_MAX + 1];
	uint8_t uuids[64][16];
	unsigned npools = 0;
	char err[600], uuid[40], a[32];
	struct json j;
	int st = pool_candidates_get("pool list", o->config, argv + o->first,
				     (unsigned)(argc - o->first), &c);
	if (st)
		return st;
	struct pool_drive *d = malloc(sizeof(*d));
	struct pool *p = calloc(1, sizeof(*p));
	if (!d || !p) {
		st = CLI_EXIT_FAIL;
		goto out;
	}
	for (unsigned i = 0; i < c.n && npools < 64; i++) {
		if (pool_drive_read(c.path[i], d, err, sizeof(err)))
			continue;
		bool seen = false;
		for (unsigned k = 0; k < npools; k++)
			seen |= !memcmp(uuids[k], d->label.uuid, 16);
		if (!seen) {
			memcpy(uuids[npools], d->label.uuid, 16);
			snprintf(names[npools++], POOL_NAME_MAX + 1, "%s", d->label.name);
		}
	}
	if (o->json) {
		json_begin(&j, stdout);
		json_obj_open(&j, NULL);
		json_u64(&j, "version", CLI_JSON_VERSION);
		json_arr_open(&j, "pools");
	}
	for (unsigned k = 0; k < npools; k++) {
		if (pool_find(names[k], c.path, c.n, p, err, sizeof(err))) {
			fprintf(stderr, "uraid pool list: %s\n", err);
			st = CLI_EXIT_FAIL;
			continue;
		}
		uint64_t total = 0;
		for (unsigned i = 0; i < p->ndrives; i++)
			total += p->drive[i]->sectors;
		uraid_uuid_text(p->label.uuid, uuid, sizeof(uuid));
		if (o->json) {
			json_obj_open(&j, NULL);
			json_str(&j, "pool", p->label.name);
			json_str(&j, "uuid", uuid);
			json_u64(&j, "drives", p->ndrives);
			json_u64(&j, "volumes", p->nvolumes);
			json_u64(&j, "size_bytes", total * 512);
			json_obj_close(&j);
		} else {
			printf("%-16s %s %2u drive%s %3u volume%s %12s\n", p->label.name, uuid,
			       p->ndrives, p->ndrives == 1 ? " " : "s", p->nvolumes,
			       p->nvolumes == 1 ? " " : "s", cli_bytes(total * 512, a, sizeof(a)));
		}
		pool_release(p);
	}
	if (o->json) {
		json_arr_close(&j);
		json_obj_close(&j);
		json_end(&j);
	}
out:
	free(d);
	free(p);
	pool_candidates_free(&c);
	return st;
}

int cmd_pool(int argc, char **argv)
{
	struct pool_opts o;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		pool_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	const char *verb = argv[1];
	char cmd[32];
	snprintf(cmd, sizeof(cmd), "pool %s", verb);
	int st = parse_opts(cmd, argc - 1, argv + 1, &o);
	if (st >= 0)
		return st;
	o.first += 1;           /* operands after the verb, in argv's numbering */
	bool has_name = argc > o.first;
	if (!strcmp(verb, "list"))
		return pool_list(&o, argc, argv);
	if (!strcmp(verb, "create") || !strcmp(verb, "add") || !strcmp(verb, "status") ||
	    !strcmp(verb, "repair")) {
		if (!has_name) {
			fprintf(stderr, "uraid %s: give the pool's name; see 'uraid pool --help'\n",
				cmd);
			return CLI_EXIT_USAGE;
		}
		if (!strcmp(verb, "create"))
			return pool_create(&o, argc, argv);
		if (!strcmp(verb, "add"))
			return pool_add(&o, argc, argv);
		if (!strcmp(verb, "repair"))
			return pool_repair(&o, argc, argv);
		return pool_status(&o, argc, argv);
	}
	fprintf(stderr, "uraid pool: '%s' is not a pool command (create, add, status, repair, list); "
		"see 'uraid pool --help'\n", verb);
	return CLI_EXIT_USAGE;
}
