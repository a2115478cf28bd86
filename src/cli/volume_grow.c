// SPDX-License-Identifier: MIT
/*
 * uraid volume grow POOL VOLUME --drives=N | --size=SIZE|max: a volume
 * onto more of the pool's drives (new partitions of the volume's partition
 * size, then md's reshape to N members), or larger on the same drives (each
 * partition extended into the free space right after it, then the array's
 * component size grown as `uraid grow --size=max` does).
 *
 * Not served: the volume is assembled here (the engine's threads), grown,
 * waited for with progress on stderr and closed; the reshape's checkpoint
 * on disk is what makes a kill in the middle resumable by `uraid serve`.
 * Served (its partitions locked by a server): --drives goes through the
 * server's control socket (grow_served, the one place that talks to it);
 * --size is refused (the server would have to take the partitions' new
 * length).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/engine.h>
#include <uraid/geom.h>
#include <uraid/level.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/util.h"
#include "cli/volume_cli.h"
#include "common/range_path.h"

#define CMD "volume grow"

static uint64_t part_sectors(const struct pool *p, const struct pool_volume *v, unsigned i)
{
	const struct gpt_part *gp = &p->drive[v->drive[i]]->gpt.part[v->entry[i]];
	return gp->last - gp->first + 1;
}

/*
 * Is a server holding the volume? Its partitions' ranges are locked by it
 * (common/range_path.c); the locks taken here to look are let go at once.
 * 0 with *served, or an exit status after a message.
 */
static int volume_served(const struct pool *p, const struct pool_volume *v, bool *is_served)
{
	char err[600];
	bool served = false;

	for (unsigned i = 0; i < v->nparts && !served; i++) {
		const struct pool_drive *d = p->drive[v->drive[i]];
		const struct gpt_part *gp = &d->gpt.part[v->entry[i]];
		struct uraid_range_path rp = { .ranged = true, .start = gp->first,
					       .sectors = gp->last - gp->first + 1 };
		snprintf(rp.path, sizeof(rp.path), "%s", d->path);
		int fd = open(d->path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			fprintf(stderr, "uraid %s: %s: %s\n", CMD, d->path, strerror(errno));
			return CLI_EXIT_FAIL;
		}
		int rc = uraid_range_path_lock(fd, &rp, true, err, sizeof(err));
		close(fd);
		if (rc == -EBUSY)
			served = true;
		else if (rc) {
			fprintf(stderr, "uraid %s: %s\n", CMD, err);
			return CLI_EXIT_FAIL;
		}
	}
	*is_served = served;
	return 0;
}

/*
 * The one place that talks to a server (today `serve --pool=P --volume=V`,
 * the export named after the volume): `uraid grow VOLUME --raid-devices=N
 * --add SPEC...`, which plans first (nothing added when refused), adds the
 * new partitions as spares and starts the reshape in the server.
 */
static int grow_served(const char *volume, unsigned raid_disks, char **specs, unsigned n)
{
	char nd[48];
	char **av = calloc(n + 5, sizeof(*av));

	if (!av)
		return CLI_EXIT_FAIL;
	snprintf(nd, sizeof(nd), "--raid-devices=%u", raid_disks);
	av[0] = "grow";
	av[1] = (char *)volume;
	av[2] = nd;
	av[3] = "--add";
	for (unsigned i = 0; i < n; i++)
		av[4 + i] = specs[i];
	/* no --add when every new member is a spare of the array already */
	int st = cmd_grow(n ? (int)n + 4 : 3, av);
	free(av);
	return st;
}

/* ---- in process ---- */

struct inproc {
	struct uraid_engine *e;
	struct uraid_array *a;
};

static int inproc_open(struct inproc *ip, char **specs, unsigned n)
{
	struct uraid_engine_opts eo = { .reactors = 2, .flags = URAID_ENGINE_THREADS };
	struct uraid_assemble_opts ao = { .paths = (const char *const *)specs, .npaths = n,
					  .flags = URAID_ASSEMBLE_COMPLETE };
	char err[600];

	memset(ip, 0, sizeof(*ip));
	if (uraid_engine_create(&eo, &ip->e)) {
		fprintf(stderr, "uraid %s: cannot start the engine\n", CMD);
		return CLI_EXIT_FAIL;
	}
	if (uraid_array_assemble(ip->e, &ao, &ip->a, err, sizeof(err))) {
		fprintf(stderr, "uraid %s: cannot assemble the volume: %s\n", CMD, err);
		uraid_engine_destroy(ip->e);
		ip->e = NULL;
		return CLI_EXIT_FAIL;
	}
	return 0;
}

static int inproc_close(struct inproc *ip)
{
	int rc = 0;

	if (ip->a && (rc = uraid_array_close(ip->a)))
		fprintf(stderr, "uraid %s: closing the volume: %s\n", CMD, strerror(-rc));
	if (ip->e)
		uraid_engine_destroy(ip->e);
	memset(ip, 0, sizeof(*ip));
	return rc ? CLI_EXIT_FAIL : 0;
}

/*
 * Wait for the grow's background work (a restripe, a rebuild of a new
 * mirror, the resync of the new part, and the steps that wait for them) to
 * end, with progress on stderr: a redrawn line on a terminal, else a line
 * every 10 seconds.
 */
static int inproc_wait(struct inproc *ip)
{
	struct progress pr;
	bool tty = progress_terminal(STDERR_FILENO);
	char done[2048], err[600], line[200];
	time_t last = time(NULL);
	int st = 0;

	progress_begin(&pr, stderr);
	for (;;) {
		struct uraid_sync_status ss;
		struct timespec ts = { 0, 200 * 1000000 };
		nanosleep(&ts, NULL);
		if (uraid_array_sync_status(ip->a, &ss))
			break;
		if (ss.running) {
			struct progress_sample s = { .running = true, .kind = ss.kind, .job = ss.job,
						     .done = ss.done_bytes, .total = ss.total_bytes,
						     .of_array = ss.array_positions };
			if (tty) {
				progress_show(&pr, &s);
			} else if (time(NULL) - last >= 10) {
				last = time(NULL);
				progress_text(line, sizeof(line), &s, false, 0);
				fprintf(stderr, "uraid %s: %s\n", CMD, line);
			}
			continue;
		}
		if (ss.job && ss.result < 0) {
			progress_end(&pr);
			fprintf(stderr, "uraid %s: the %s failed: %s\n", CMD,
				uraid_sync_kind_name(ss.kind), strerror(-ss.result));
			st = CLI_EXIT_FAIL;
			break;
		}
		int rc = uraid_array_grow_continue(ip->a, done, sizeof(done), err, sizeof(err));
		if (rc < 0) {
			progress_end(&pr);
			fprintf(stderr, "uraid %s: %s\n", CMD, err);
			st = CLI_EXIT_FAIL;
			break;
		}
		if (rc > 0)
			continue;       /* the steps are in the engine's log (stderr) */
		if (uraid_array_grow_pending(ip->a) || uraid_array_sync_status(ip->a, &ss) ||
		    ss.running)
			continue;
		/* nothing running and nothing waiting; a resync owed (the new part
		   of a size change) that the engine has not started yet, on a
		   loaded machine, is started here, so that the volume closes clean */
		struct uraid_array_status as;
		if (uraid_array_status(ip->a, &as) || !as.resync_needed)
			break;
		rc = uraid_array_sync_start(ip->a, URAID_SYNC_RESYNC, err, sizeof(err));
		if (rc && rc != -EBUSY) {
			progress_end(&pr);
			fprintf(stderr, "uraid %s: the resync of the new part did not start (%s); "
				"'uraid serve' makes it\n", CMD, err);
			break;
		}
	}
	progress_end(&pr);
	return st;
}

/* One grow request in process (the engine logs each step on stderr). */
static int inproc_grow(struct inproc *ip, const struct uraid_grow *r)
{
	char done[2048] = "", err[600];
	int rc = uraid_array_grow(ip->a, r, done, sizeof(done), err, sizeof(err));

	if (rc == -EALREADY)
		return 0;
	if (rc) {
		fprintf(stderr, "uraid %s: %s\n", CMD, err);
		return CLI_EXIT_FAIL;
	}
	return 0;
}

/* ---- checks shared by both ways ---- */

static int check_volume(const struct pool *p, const struct pool_volume *v, bool equal)
{
	if (!v->has_md) {
		fprintf(stderr, "uraid %s: volume '%s' has no md superblock on its partitions; "
			"nothing to grow\n", CMD, v->name);
		return CLI_EXIT_FAIL;
	}
	if (v->reshaping) {
		fprintf(stderr, "uraid %s: volume '%s' is in mid-reshape (a grow stopped before its "
			"end): serve it ('uraid serve --pool=%s --volume=%s'), which goes on with it, "
			"and grow it again once it is done\n", CMD, v->name, p->label.name, v->name);
		return CLI_EXIT_FAIL;
	}
	if (v->present < v->raid_disks || v->stale) {
		fprintf(stderr, "uraid %s: volume '%s' is degraded (%u of %u members present, %u "
			"stale): volume grow does not reshape a degraded volume; rebuild it "
			"first (serve it, and add a spare with 'uraid pool add' or 'uraid add')\n",
			CMD, v->name, v->present, v->raid_disks, v->stale);
		return CLI_EXIT_FAIL;
	}
	/* spare or blank partitions: --drives takes them as some of the new
	   ones (a --drives stopped half-way leaves them; its rerun ends it) */
	if ((v->spares + v->blank) && !equal) {
		fprintf(stderr, "uraid %s: volume '%s' has %u partition%s that %s not a member "
			"(%u spare, %u without an md superblock; a 'volume grow --drives' stopped "
			"half-way?): run 'uraid volume grow %s %s --drives=%u' to end it first\n",
			CMD, v->name, v->spares + v->blank, v->spares + v->blank == 1 ? "" : "s",
			v->spares + v->blank == 1 ? "is" : "are", v->spares, v->blank,
			p->label.name, v->name, v->raid_disks + v->spares + v->blank);
		return CLI_EXIT_FAIL;
	}
	if (v->nparts != v->raid_disks + v->spares + v->blank) {
		fprintf(stderr, "uraid %s: volume '%s' has %u partitions for %u members: "
			"volume grow handles volumes without other partitions\n", CMD, v->name,
			v->nparts, v->raid_disks);
		return CLI_EXIT_FAIL;
	}
	/* --size extends each partition by its own amount (a --size stopped
	   between two drives' tables leaves them unequal: its rerun ends it) */
	for (unsigned i = 1; i < v->nparts && equal; i++)
		if (part_sectors(p, v, i) != part_sectors(p, v, 0)) {
			fprintf(stderr, "uraid %s: the partitions of volume '%s' differ in size (%s "
				"and %s; a 'volume grow --size' stopped half-way?): run 'uraid volume "
				"grow %s %s --size=SIZE|max' to make them equal first\n", CMD, v->name,
				p->drive[v->drive[0]]->path, p->drive[v->drive[i]]->path,
				p->label.name, v->name);
			return CLI_EXIT_FAIL;
		}
	return 0;
}

/* ---- --drives=N ---- */

/* Take the spares path[0..n-1] out of the array again (a failed --drives).
 * false when one could not be taken out (it is in use: its partition stays). */
static bool remove_spares(struct inproc *ip, char **path, unsigned n)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	char err[600];
	bool all = as != NULL;

	for (unsigned i = 0; i < n && as; i++) {
		if (uraid_array_status(ip->a, as)) {
			all = false;
			break;
		}
		for (unsigned m = 0; m < as->nmembers; m++) {
			if (strcmp(as->members[m].path, path[i]))
				continue;
			if (uraid_array_remove_member(ip->a, m, err, sizeof(err)) < 0) {
				fprintf(stderr, "uraid %s: taking %s out again: %s\n", CMD, path[i], err);
				all = false;
			}
			break;
		}
	}
	free(as);
	return all;
}

static int grow_drives(const struct volume_opts *o, struct pool *p, struct pool_volume *v,
		       int *fds, bool served)
{
	uint64_t part = part_sectors(p, v, 0);
	unsigned want = o->drives, need = o->drives - v->raid_disks;
	unsigned cand[POOL_MAX_DRIVES], nc = 0, newdrv[POOL_MAX_DRIVES];
	uint64_t freeb[POOL_MAX_DRIVES], first[POOL_MAX_DRIVES];
	int entry[POOL_MAX_DRIVES];
	char *specs[URAID_MAX_MEMBERS] = { 0 };
	char a[32], b[32], err[600];
	unsigned nspec = 0, nlist = 0, nspare = 0, nblank = 0;
	struct inproc ip = { 0 };
	int st = CLI_EXIT_FAIL;

	for (unsigned i = 0; i < POOL_MAX_DRIVES; i++)
		entry[i] = -1;

	if (want <= v->raid_disks) {
		fprintf(stderr, "uraid %s: volume '%s' is on %u drives already; --drives=%u would "
			"not add any (volume grow does not shrink)\n", CMD, v->name, v->raid_disks,
			want);
		return CLI_EXIT_USAGE;
	}
	if (want > p->ndrives) {
		fprintf(stderr, "uraid %s: not enough drives: --drives=%u, and pool '%s' has %u "
			"('uraid pool add' a drive first)\n", CMD, want, p->label.name, p->ndrives);
		return CLI_EXIT_FAIL;
	}
	/* partitions of the volume that are not members (spares of the array,
	   partitions without a superblock: a --drives stopped half-way) are
	   some of the new ones; listed first: the spares, then the blank */
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < v->nparts; i++)
			if (v->part_state[i] == (pass ? POOL_PART_BLANK : POOL_PART_SPARE)) {
				newdrv[nlist] = v->drive[i];
				entry[nlist++] = (int)v->entry[i];
				*(pass ? &nblank : &nspare) += 1;
			}
	if (nlist > need) {
		fprintf(stderr, "uraid %s: volume '%s' has %u partitions that are not members "
			"(a 'volume grow --drives' stopped half-way?), more than --drives=%u adds: "
			"give --drives=%u\n", CMD, v->name, nlist, want, v->raid_disks + nlist);
		return CLI_EXIT_FAIL;
	}
	unsigned nnew = need - nlist;
	/* the drives without a partition of the volume, the most room first */
	pool_free_per_drive(p, freeb, first);
	for (unsigned d = 0; d < p->ndrives; d++) {
		bool used = false;
		for (unsigned i = 0; i < v->nparts; i++)
			used |= v->drive[i] == d;
		if (used || freeb[d] < part)
			continue;
		unsigned at = nc++;
		while (at && freeb[cand[at - 1]] < freeb[d]) {
			cand[at] = cand[at - 1];
			at--;
		}
		cand[at] = d;
	}
	if (nc < nnew) {
		fprintf(stderr, "uraid %s: not enough free space: %u drives to %u needs %u more "
			"drive%s with %s free each; %u of pool '%s''s other drives %s it\n", CMD,
			v->raid_disks, want, nnew, nnew == 1 ? "" : "s",
			cli_bytes(part * 512, a, sizeof(a)), nc, p->label.name,
			nc == 1 ? "has" : "have");
		return CLI_EXIT_FAIL;
	}

	/* the specs: the members and the spares (assembled), then the blank
	   and new partitions (added) */
	for (unsigned i = 0; i < v->nparts; i++) {
		if (v->part_state[i] != POOL_PART_MEMBER)
			continue;
		if (!(specs[nspec] = malloc(POOL_SPEC_LEN)))
			goto out;
		pool_member_spec(p->drive[v->drive[i]], v->entry[i], specs[nspec++], POOL_SPEC_LEN);
	}
	unsigned nmember = nspec;
	for (unsigned i = 0; i < nlist; i++) {
		if (!(specs[nspec] = malloc(POOL_SPEC_LEN)))
			goto out;
		pool_member_spec(p->drive[newdrv[i]], (unsigned)entry[i], specs[nspec++], POOL_SPEC_LEN);
	}

	if (!served) {
		/* md's plan with the spares to come: a level or state md cannot
		   reshape is refused before any table changes */
		if ((st = inproc_open(&ip, specs, nmember + nspare)))
			goto out;
		struct uraid_grow plan = { .raid_disks = want, .adding = need - nspare,
					   .plan_only = true };
		if ((st = inproc_grow(&ip, &plan)))
			goto out;
		st = CLI_EXIT_FAIL;
	}

	/* the new partitions, named as the others, at the start of each drive's
	   largest free stretch */
	char pname[GPT_NAME_CHARS + 1];
	pool_part_name(p->label.name, v->name, pname, sizeof(pname));
	for (unsigned i = 0; i < nnew; i++) {
		struct pool_drive *d = p->drive[cand[i]];
		unsigned k = nlist + i;
		newdrv[k] = cand[i];
		entry[k] = gpt_free_entry(&d->gpt);
		if (entry[k] < 0) {
			fprintf(stderr, "uraid %s: %s has no free GPT entry (128 partitions)\n", CMD,
				d->path);
			goto undo_mem;
		}
		struct gpt_part *gp = &d->gpt.part[entry[k]];
		memset(gp, 0, sizeof(*gp));
		memcpy(gp->type, pool_type_volume, 16);
		if (gpt_guid_random(gp->guid))
			goto undo_mem;
		gp->first = first[cand[i]];
		gp->last = gp->first + part - 1;
		snprintf(gp->name, sizeof(gp->name), "%s", pname);
	}
	if (nnew && volume_write_tables(CMD, p, fds, newdrv + nlist, nnew))
		goto undo;
	for (unsigned i = nlist; i < need; i++) {
		if (!(specs[nspec] = malloc(POOL_SPEC_LEN)))
			goto undo;
		pool_member_spec(p->drive[newdrv[i]], (unsigned)entry[i], specs[nspec++], POOL_SPEC_LEN);
	}
	/* to add: the blank and the new ones (the spares are in the array) */
	char **added = specs + nmember + nspare;
	unsigned nadd = need - nspare;
	if (served) {
		st = grow_served(v->name, want, added, nadd);
		/* refused at the plan: nothing added, the partitions go again; a
		   partition the server took as a spare stays (it is in the array) */
		char owner[256];
		if (st && nadd && !nspare &&
		    cli_served_owner(CMD, added[0], owner, sizeof(owner)) == 0)
			goto undo;
		if (st)
			goto out;
		printf("Volume '%s' of pool '%s' is being reshaped from %u to %u drives by its "
		       "server; 'uraid status %s' shows how far it is\n", v->name, p->label.name,
		       v->raid_disks, want, v->name);
		goto out;
	}
	unsigned nadded = 0;
	for (; nadded < nadd; nadded++)
		if (uraid_array_add_member(ip.a, added[nadded], 0, err, sizeof(err)) < 0) {
			fprintf(stderr, "uraid %s: adding %s: %s\n", CMD, added[nadded], err);
			goto undo_array;
		}
	uint64_t before = uraid_array_size(ip.a);
	struct uraid_grow r = { .raid_disks = want };
	if ((st = inproc_grow(&ip, &r)))
		goto undo_array;
	/* no table is written from here: the table locks go, so that other
	   pool commands do not wait for the whole reshape (the array's range
	   locks keep its members) */
	volume_unlock_tables(fds);
	if ((st = inproc_wait(&ip)))
		goto out;
	uint64_t after = uraid_array_size(ip.a);
	if ((st = inproc_close(&ip)))
		goto out;
	printf("Grew volume '%s' of pool '%s' from %u to %u drives: %s -> %s\n", v->name,
	       p->label.name, v->raid_disks, want, cli_bytes(before, a, sizeof(a)),
	       cli_bytes(after, b, sizeof(b)));
	goto out;
undo_array:
	/* the reshape did not start: the spares (found or added) go out of the
	   array, then their partitions go */
	if (!remove_spares(&ip, specs + nmember, nspare + nadded)) {
		fprintf(stderr, "uraid %s: the new partitions stay (spares of volume '%s'); "
			"'uraid volume grow %s %s --drives=%u' again uses them\n", CMD, v->name,
			p->label.name, v->name, want);
		st = CLI_EXIT_FAIL;
		goto out;
	}
	inproc_close(&ip);
undo:
	/* nothing of the array changed: the new (and the left-over) partitions go */
	for (unsigned i = 0; i < need; i++)
		memset(&p->drive[newdrv[i]]->gpt.part[entry[i]], 0, sizeof(struct gpt_part));
	volume_write_tables(CMD, p, fds, newdrv, need);
	st = CLI_EXIT_FAIL;
	goto out;
undo_mem:
	for (unsigned i = nlist; i < need; i++)
		if (entry[i] >= 0)
			memset(&p->drive[newdrv[i]]->gpt.part[entry[i]], 0, sizeof(struct gpt_part));
out:
	inproc_close(&ip);
	for (unsigned i = 0; i < nspec; i++)
		free(specs[i]);
	return st;
}

/* ---- --size=SIZE|max ---- */

/* The room right after partition gp on its drive: the free stretch that
 * starts where it ends (whole MiBs), 0 when another partition or the end
 * of the usable space is there. */
static uint64_t room_after(const struct pool_drive *d, const struct gpt_part *gp)
{
	struct gpt_extent ext[GPT_ENTRIES + 1];
	unsigned n = gpt_free_extents(&d->gpt, ext, GPT_ENTRIES + 1);

	for (unsigned i = 0; i < n; i++)
		if (ext[i].first == gp->last + 1)
			return ext[i].sectors;
	return 0;
}

/* The array's sectors with partitions of part sectors each (the volume's
 * data offset kept, md's component size rounded down to the chunk). */
static uint64_t comp_with(const struct pool_volume *v, uint64_t data_offset, uint64_t part)
{
	if (part <= data_offset)
		return 0;
	uint64_t comp = part - data_offset;
	if (v->chunk_sectors)
		comp -= comp % v->chunk_sectors;
	return comp;
}

static uint64_t size_with(const struct pool_volume *v, uint64_t data_offset, uint64_t part)
{
	struct uraid_geom g;
	uint64_t members[URAID_MAX_MEMBERS];
	char why[200];

	if (part <= data_offset || v->raid_disks > URAID_MAX_MEMBERS)
		return 0;
	uint64_t comp = comp_with(v, data_offset, part);
	for (unsigned i = 0; i < v->raid_disks; i++)
		members[i] = comp;
	struct uraid_geom_params gp = {
		.level = v->level, .layout = v->layout, .raid_disks = v->raid_disks,
		.chunk_sectors = v->chunk_sectors, .dev_sectors = comp, .member_sectors = members,
	};
	return uraid_geom_init(&g, &gp, why, sizeof(why)) ? 0 : uraid_geom_array_sectors(&g);
}

static int read_data_offset(const struct pool *p, const struct pool_volume *v, uint64_t *off,
			    uint64_t *used)
{
	const struct pool_drive *d = p->drive[v->drive[0]];
	const struct gpt_part *gp = &d->gpt.part[v->entry[0]];
	struct uraid_probe *pr = malloc(sizeof(*pr));
	int fd = open(d->path, O_RDONLY | O_CLOEXEC), rc = -EIO;

	if (pr && fd >= 0 && uraid_probe_range(fd, gp->first, gp->last - gp->first + 1, pr) == 0 &&
	    pr->chosen >= 0 && pr->loc[pr->chosen].status == 0) {
		*off = pr->loc[pr->chosen].sb.data_offset;
		*used = pr->loc[pr->chosen].sb.size;
		rc = 0;
	}
	if (fd >= 0)
		close(fd);
	free(pr);
	if (rc)
		fprintf(stderr, "uraid %s: %s: cannot read the volume's md superblock\n", CMD,
			d->path);
	return rc ? CLI_EXIT_FAIL : 0;
}

static int grow_size(const struct volume_opts *o, struct pool *p, struct pool_volume *v,
		     int *fds, bool served)
{
	uint64_t part = 0, smallest = UINT64_MAX, reach = UINT64_MAX, room, data_offset, used;
	uint64_t oldlast[POOL_MAX_DRIVES];
	unsigned which[POOL_MAX_DRIVES], tight = 0;
	char *specs[URAID_MAX_MEMBERS] = { 0 };
	char a[32], b[32], c[32], e[32];
	int st = CLI_EXIT_FAIL;

	if (v->level == URAID_LEVEL_0 || v->level == URAID_LEVEL_10) {
		fprintf(stderr, "uraid %s: volume '%s' is %s: md does not change the size used on "
			"the members of %s; grow it onto more drives (--drives) instead%s\n", CMD,
			v->name, uraid_level_name(v->level), uraid_level_name(v->level),
			v->level == URAID_LEVEL_10 ? " (not in uraid for RAID 10 yet)" : "");
		return CLI_EXIT_FAIL;
	}
	if (served) {
		fprintf(stderr, "uraid %s: volume '%s' is served: --size extends its partitions, "
			"which its server holds at their old length; stop it first ('uraid stop "
			"%s'), run volume grow, then serve it again\n", CMD, v->name, v->name);
		return CLI_EXIT_FAIL;
	}
	/* the partitions can differ (a --size stopped between two drives'
	   tables): the largest is the base, each is extended to base + growth,
	   as far as the tightest one's room reaches */
	for (unsigned i = 0; i < v->nparts; i++) {
		const struct pool_drive *d = p->drive[v->drive[i]];
		uint64_t ps = part_sectors(p, v, i);
		uint64_t r = ps + room_after(d, &d->gpt.part[v->entry[i]]);
		if (r < reach) {
			reach = r;
			tight = i;
		}
		part = ps > part ? ps : part;
		smallest = ps < smallest ? ps : smallest;
		which[i] = v->drive[i];
		oldlast[i] = d->gpt.part[v->entry[i]].last;
	}
	if (read_data_offset(p, v, &data_offset, &used))
		return CLI_EXIT_FAIL;
	if (smallest < data_offset + used) {
		fprintf(stderr, "uraid %s: a partition of volume '%s' (%s) is smaller than md uses "
			"(data offset + %s per member): the table does not match the array; "
			"nothing written\n", CMD, v->name, cli_bytes(smallest * 512, a, sizeof(a)),
			cli_bytes(used * 512, b, sizeof(b)));
		return CLI_EXIT_FAIL;
	}
	room = reach > part ? reach - part : 0;
	/* after a reshape md's component size can be below what the partitions
	   hold (the data offset moved): the size now is the superblocks' */
	uint64_t cur = v->array_sectors;
	uint64_t most = size_with(v, data_offset, part + room);
	uint64_t newpart = part + room;
	if (!o->max) {
		uint64_t want = o->size_bytes / 512;
		if (want <= v->array_sectors) {
			fprintf(stderr, "uraid %s: volume '%s' is %s already; --size=%s would not "
				"grow it\n", CMD, v->name, cli_bytes(v->array_sectors * 512, a, sizeof(a)),
				cli_bytes(want * 512, b, sizeof(b)));
			return CLI_EXIT_USAGE;
		}
		if (most < want) {
			const struct pool_drive *d = p->drive[v->drive[tight]];
			fprintf(stderr, "uraid %s: not enough free space: %s does not fit; the largest "
				"size that fits is %s (each partition can grow by %s: the room after "
				"the volume's partition on %s)\n", CMD,
				cli_bytes(want * 512, a, sizeof(a)), cli_bytes(most * 512, b, sizeof(b)),
				cli_bytes(room * 512, c, sizeof(c)), d->path);
			return CLI_EXIT_FAIL;
		}
		/* the smallest whole-MiB growth that holds it */
		uint64_t lo = 0, hi = room / GPT_ALIGN_SECTORS;
		while (lo < hi) {
			uint64_t mid = (lo + hi) / 2;
			if (size_with(v, data_offset, part + mid * GPT_ALIGN_SECTORS) >= want)
				hi = mid;
			else
				lo = mid + 1;
		}
		newpart = part + lo * GPT_ALIGN_SECTORS;
	}
	if (size_with(v, data_offset, newpart) <= cur) {
		const struct pool_drive *d = p->drive[v->drive[tight]];
		fprintf(stderr, "uraid %s: not enough free space: no room right after the "
			"partition of volume '%s' on %s (%s free there); the largest size that fits "
			"is %s, its size now\n", CMD, v->name, d->path, cli_bytes(room * 512, a,
			sizeof(a)), cli_bytes(v->array_sectors * 512, b, sizeof(b)));
		return CLI_EXIT_FAIL;
	}

	/* the partitions extended (each table: backup first, then primary; a
	   kill between two drives leaves them unequal, which a rerun ends) */
	bool change = false;
	for (unsigned i = 0; i < v->nparts; i++) {
		struct gpt_part *gp = &p->drive[v->drive[i]]->gpt.part[v->entry[i]];
		change |= gp->last != gp->first + newpart - 1;
		gp->last = gp->first + newpart - 1;
	}
	if (change && volume_write_tables(CMD, p, fds, which, v->nparts))
		goto undo;
	for (unsigned i = 0; i < v->nparts; i++) {
		if (!(specs[i] = malloc(POOL_SPEC_LEN)))
			goto undo;
		pool_member_spec(p->drive[v->drive[i]], v->entry[i], specs[i], POOL_SPEC_LEN);
	}
	struct inproc ip;
	if (inproc_open(&ip, specs, v->nparts))
		goto undo;
	/* no table is written from here: the table locks go (the array's range
	   locks keep its members), so that other pool commands do not wait */
	volume_unlock_tables(fds);
	struct uraid_array_status as;
	bool bitmap = uraid_array_status(ip.a, &as) == 0 && as.bitmap_chunk_bytes;
	/* md's bitmap does not follow a size change in uraid: taken off for the
	   change and put back, as the planner's refusal says to do by hand.
	   This dance can go once grow --size resizes the bitmap itself
	   (grow_bitmap_resize, on branch grow-r10). */
	struct uraid_grow nobm = { .bitmap = -1 }, grow = { .size_bytes = URAID_GROW_MAX },
			  bm = { .bitmap = 1 };
	/* --size=SIZE: md's component size that holds it, not the partitions' all */
	if (!o->max)
		grow.size_bytes = comp_with(v, data_offset, newpart) * 512;
	uint64_t before = uraid_array_size(ip.a);
	if (bitmap)
		fprintf(stderr, "uraid %s: volume '%s''s internal bitmap is taken off for the size "
			"change and put back after it; if this stops before the end, serve the "
			"volume and run 'uraid grow %s --bitmap=internal' to put it back\n", CMD,
			v->name, v->name);
	if (bitmap && (st = inproc_grow(&ip, &nobm))) {
		inproc_close(&ip);
		goto out;
	}
	if ((st = inproc_grow(&ip, &grow)) || (st = inproc_wait(&ip)) ||
	    (bitmap && (st = inproc_grow(&ip, &bm)))) {
		/* what was done stays done; the partitions stay extended (md uses
		   what its superblocks say); the bitmap is put back (a second try
		   when it was its own step that failed: the resync may have ended) */
		if (bitmap) {
			int bst = inproc_grow(&ip, &bm);
			fprintf(stderr, "uraid %s: %s\n", CMD, bst ? "the internal bitmap could "
				"not be put back: serve the volume and run 'uraid grow VOLUME "
				"--bitmap=internal'" : "the internal bitmap is back");
		}
		inproc_close(&ip);
		goto out;
	}
	uint64_t after = uraid_array_size(ip.a);
	if ((st = inproc_close(&ip)))
		goto out;
	printf("Grew volume '%s' of pool '%s' on its %u drives: partitions %s -> %s, volume %s "
	       "-> %s\n", v->name, p->label.name, v->nparts, cli_bytes(smallest * 512, a, sizeof(a)),
	       cli_bytes(newpart * 512, b, sizeof(b)), cli_bytes(before, c, sizeof(c)),
	       cli_bytes(after, e, sizeof(e)));
	goto out;
undo:
	for (unsigned i = 0; i < v->nparts; i++)
		p->drive[v->drive[i]]->gpt.part[v->entry[i]].last = oldlast[i];
	if (change)
		volume_write_tables(CMD, p, fds, which, v->nparts);
	st = CLI_EXIT_FAIL;
out:
	for (unsigned i = 0; i < v->nparts; i++)
		free(specs[i]);
	return st;
}

int volume_grow(const struct volume_opts *o, struct pool *p, int *fds)
{
	struct pool_volume *v = pool_volume_find(p, o->name);

	if (!v) {
		fprintf(stderr, "uraid %s: pool '%s' has no volume '%s'\n", CMD, p->label.name,
			o->name);
		return CLI_EXIT_USAGE;
	}
	if (o->json) {
		fprintf(stderr, "uraid %s: --json is not there for grow (its steps are logged on "
			"stderr)\n", CMD);
		return CLI_EXIT_USAGE;
	}
	if (v->groups >= 2) {
		/* a RAID 0 over arrays: md does not reshape it, and a larger inner
		   array does not make the RAID 0 above it larger (its members'
		   size is in its superblocks) */
		fprintf(stderr, "uraid %s: volume '%s' is a RAID %d0 (a RAID 0 over %u RAID %d "
			"arrays): stacked arrays are not grown (md does not reshape the RAID 0 "
			"of a nested array); make a larger volume and copy the data\n", CMD,
			o->name, v->level, v->groups, v->level);
		return CLI_EXIT_FAIL;
	}
	if (!o->drives == !(o->max || o->size_bytes) || o->have_res || o->level != -100 ||
	    o->chunk_kib || o->groups) {
		fprintf(stderr, "uraid %s: give --drives=N (onto more drives) or --size=SIZE|max "
			"(more size on the same drives), one of them\n", CMD);
		return CLI_EXIT_USAGE;
	}
	int st = check_volume(p, v, o->drives != 0);
	if (st)
		return st;
	bool served;
	if ((st = volume_served(p, v, &served)))
		return st;
	return o->drives ? grow_drives(o, p, v, fds, served)
			 : grow_size(o, p, v, fds, served);
}
