// SPDX-License-Identifier: MIT
/* Finding a pool's drives and volumes (pool_find.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <uraid/create.h>
#include <uraid/geom.h>
#include <uraid/level.h>

#include "common/errmsg.h"
#include "common/file_lock.h"
#include "pool/pool_find.h"

void pool_release(struct pool *p)
{
	for (unsigned i = 0; i < p->ndrives; i++)
		free(p->drive[i]);
	memset(p, 0, sizeof(*p));
}

struct pool_volume *pool_volume_find(struct pool *p, const char *name)
{
	for (unsigned v = 0; v < p->nvolumes; v++)
		if (!strcmp(p->vol[v].name, name))
			return &p->vol[v];
	return NULL;
}

/* Collect the volumes from every drive's partitions named "POOL/VOLUME". */
static void collect_volumes(struct pool *p)
{
	p->nvolumes = 0;
	for (unsigned d = 0; d < p->ndrives; d++) {
		const struct gpt *g = &p->drive[d]->gpt;
		for (unsigned e = 0; e < GPT_ENTRIES; e++) {
			const char *vn = pool_part_volume(&g->part[e], p->label.name);
			if (!vn)
				continue;
			struct pool_volume *v = pool_volume_find(p, vn);
			if (!v) {
				if (p->nvolumes >= POOL_MAX_VOLUMES)
					continue;
				v = &p->vol[p->nvolumes++];
				memset(v, 0, sizeof(*v));
				snprintf(v->name, sizeof(v->name), "%s", vn);
			}
			if (v->nparts < POOL_MAX_DRIVES) {
				v->drive[v->nparts] = d;
				v->entry[v->nparts++] = e;
			}
		}
	}
}

static uint64_t array_sectors_of(const struct uraid_sb *sb)
{
	struct uraid_geom g;
	char why[200];
	uint64_t members[URAID_MAX_MEMBERS];

	if (sb->raid_disks == 0 || sb->raid_disks > URAID_MAX_MEMBERS)
		return 0;
	for (unsigned i = 0; i < sb->raid_disks; i++)
		members[i] = sb->data_size;
	struct uraid_geom_params gp = {
		.level = (int)sb->level, .layout = sb->layout, .raid_disks = sb->raid_disks,
		.chunk_sectors = sb->chunksize, .dev_sectors = sb->size,
		.member_sectors = members,
		.raid0_layout_flag = sb->feature_map & 0x1000,  /* md's RAID 0 layout bit */
	};
	return uraid_geom_init(&g, &gp, why, sizeof(why)) ? 0 : uraid_geom_array_sectors(&g);
}

/* Partition i's state against f, the freshest superblock of its array. */
static void part_state(struct pool_volume *vol, unsigned i, const struct uraid_sb *sbs,
		       const bool *ok, const bool *none, const struct uraid_sb *f,
		       unsigned *present)
{
	vol->superseded[i] = false;
	for (unsigned j = 0; ok[i] && j < vol->nparts; j++)
		if (j != i && ok[j] && !memcmp(sbs[i].set_uuid, sbs[j].set_uuid, 16) &&
		    sbs[j].dev_number == sbs[i].dev_number && sbs[j].events > sbs[i].events)
			vol->superseded[i] = true;
	uint16_t role = ok[i] ? uraid_sb_role(&sbs[i]) : URAID_ROLE_SPARE;
	bool same = ok[i] && !memcmp(sbs[i].set_uuid, f->set_uuid, 16) &&
		    sbs[i].events == f->events;
	if (same && role < URAID_ROLE_MAX && role < f->raid_disks &&
	    f->dev_roles[sbs[i].dev_number] == role) {
		vol->present++;
		++*present;
		vol->part_state[i] = POOL_PART_MEMBER;
	} else if (same && role == URAID_ROLE_SPARE) {
		vol->spares++;
		vol->part_state[i] = POOL_PART_SPARE;
	} else if (none[i]) {
		vol->blank++;
		vol->part_state[i] = POOL_PART_BLANK;
	} else {
		vol->stale++;
		vol->part_state[i] = POOL_PART_STALE;
	}
}

/*
 * Are vol's partitions the inner arrays of a RAID 50/60 (more than one
 * array among them, and the RAID 0 over them on their data)? Then its
 * groups, and the RAID 0's superblock in *outer.
 */
static bool probe_nested(const struct pool *p, struct pool_volume *vol, const struct uraid_sb *sbs,
			 const bool *ok, struct uraid_sb *outer)
{
	char *specs[POOL_MAX_DRIVES];
	unsigned n = 0, groups = 0;
	bool two = false;

	for (unsigned i = 0; i < vol->nparts; i++)
		for (unsigned j = 0; ok[i] && j < i && !two; j++)
			two = ok[j] && memcmp(sbs[i].set_uuid, sbs[j].set_uuid, 16);
	if (!two)
		return false;
	for (unsigned i = 0; i < vol->nparts; i++) {
		if (!ok[i])
			continue;
		if (!(specs[n] = malloc(POOL_SPEC_LEN)))
			break;
		pool_member_spec(p->drive[vol->drive[i]], vol->entry[i], specs[n++], POOL_SPEC_LEN);
	}
	bool yes = uraid_nested_probe((const char *const *)specs, n, outer, &groups) == 1 &&
		   groups >= 2 && groups <= URAID_NESTED_MAX_GROUPS;
	for (unsigned i = 0; i < n; i++)
		free(specs[i]);
	return yes;
}

void pool_volumes_probe(struct pool *p)
{
	struct uraid_probe *pr = malloc(sizeof(*pr));
	struct uraid_sb *sbs = malloc(sizeof(*sbs) * POOL_MAX_DRIVES);
	struct uraid_sb *outer = malloc(sizeof(*outer));
	bool *ok = calloc(POOL_MAX_DRIVES, sizeof(*ok));
	bool *none = calloc(POOL_MAX_DRIVES, sizeof(*none));    /* no md magic at all */

	if (!pr || !sbs || !outer || !ok || !none)
		goto out;
	for (unsigned v = 0; v < p->nvolumes; v++) {
		struct pool_volume *vol = &p->vol[v];
		int fresh = -1;
		for (unsigned i = 0; i < vol->nparts; i++) {
			const struct pool_drive *d = p->drive[vol->drive[i]];
			const struct gpt_part *gp = &d->gpt.part[vol->entry[i]];
			ok[i] = none[i] = false;
			vol->part_group[i] = -1;
			int fd = open(d->path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			int prc = uraid_probe_range(fd, gp->first, gp->last - gp->first + 1, pr);
			none[i] = prc == 0 && pr->chosen < 0;
			if (prc == 0 && pr->chosen >= 0 && pr->loc[pr->chosen].status == 0) {
				sbs[i] = pr->loc[pr->chosen].sb;
				ok[i] = true;
				if (fresh < 0 || sbs[i].events > sbs[fresh].events)
					fresh = (int)i;
			}
			close(fd);
		}
		vol->has_md = fresh >= 0;
		if (!vol->has_md) {
			vol->stale = vol->nparts;
			for (unsigned i = 0; i < vol->nparts; i++)
				vol->part_state[i] = POOL_PART_STALE;
			continue;
		}
		const struct uraid_sb *f = &sbs[fresh];
		memcpy(vol->uuid, f->set_uuid, 16);
		vol->level = (int)f->level;
		vol->layout = f->layout;
		vol->chunk_sectors = f->chunksize;
		vol->raid_disks = f->raid_disks;
		vol->array_sectors = array_sectors_of(f);
		vol->resync_needed = f->resync_offset != UINT64_MAX;
		vol->reshaping = f->feature_map & URAID_FEATURE_RESHAPE_ACTIVE;
		vol->groups = 0;
		vol->over_groups = 0;
		if (!probe_nested(p, vol, sbs, ok, outer)) {
			unsigned present = 0;
			for (unsigned i = 0; i < vol->nparts; i++)
				part_state(vol, i, sbs, ok, none, f, &present);
			continue;
		}
		/* RAID 50/60: each partition against the freshest of its inner array */
		int gfresh[URAID_NESTED_MAX_GROUPS] = { 0 };
		for (unsigned i = 0; i < vol->nparts; i++) {
			unsigned g;
			if (!ok[i])
				continue;
			for (g = 0; g < vol->groups && memcmp(vol->group_uuid[g], sbs[i].set_uuid, 16); g++)
				;
			if (g == vol->groups) {
				if (g == URAID_NESTED_MAX_GROUPS) {
					/* an inner array past the ones uraid takes: counted,
					   and the status says so (not a member of any group) */
					vol->over_groups++;
					continue;
				}
				memcpy(vol->group_uuid[g], sbs[i].set_uuid, 16);
				snprintf(vol->group_name[g], sizeof(vol->group_name[g]), "%.32s",
					 sbs[i].set_name);
				gfresh[g] = (int)i;
				vol->groups++;
			}
			vol->part_group[i] = (int8_t)g;
			if (sbs[i].events > sbs[gfresh[g]].events)
				gfresh[g] = (int)i;
		}
		memcpy(vol->uuid, outer->set_uuid, 16);
		vol->array_sectors = array_sectors_of(outer);
		vol->chunk_sectors = outer->chunksize;
		vol->raid_disks = 0;
		vol->resync_needed = outer->resync_offset != UINT64_MAX;
		vol->reshaping = false;
		for (unsigned g = 0; g < vol->groups; g++) {
			const struct uraid_sb *gf = &sbs[gfresh[g]];
			vol->group_disks[g] = gf->raid_disks;
			vol->group_present[g] = 0;
			vol->raid_disks += gf->raid_disks;
			vol->resync_needed |= gf->resync_offset != UINT64_MAX;
			vol->reshaping |= (gf->feature_map & URAID_FEATURE_RESHAPE_ACTIVE) != 0;
		}
		vol->level = (int)sbs[gfresh[0]].level;
		vol->layout = sbs[gfresh[0]].layout;
		for (unsigned i = 0; i < vol->nparts; i++) {
			int g = vol->part_group[i];
			unsigned unused = 0;
			part_state(vol, i, sbs, ok, none, g >= 0 ? &sbs[gfresh[g]] : f,
				   g >= 0 ? &vol->group_present[g] : &unused);
		}
	}
out:
	free(pr);
	free(sbs);
	free(outer);
	free(ok);
	free(none);
}

int pool_find(const char *name, char *const *paths, unsigned n, struct pool *p, char *err,
	      size_t errlen)
{
	char why[400];

	memset(p, 0, sizeof(*p));
	if (!name)
		return uraid_errf(err, errlen, -EINVAL, "no pool name");
	for (unsigned i = 0; i < n; i++) {
		struct pool_drive *d = malloc(sizeof(*d));
		if (!d) {
			pool_release(p);
			return uraid_errf(err, errlen, -ENOMEM, "out of memory");
		}
		if (pool_drive_read(paths[i], d, why, sizeof(why)) ||
		    (name && strcmp(d->label.name, name))) {
			free(d);
			continue;
		}
		if (p->ndrives && memcmp(d->label.uuid, p->label.uuid, 16)) {
			free(d);
			uraid_errf(err, errlen, -EINVAL, "two pools are named '%s' (%s is not in "
				   "the pool of %s); give the drives of one", p->label.name,
				   paths[i], p->drive[0]->path);
			pool_release(p);
			return -EINVAL;
		}
		/* the same drive seen through two names (a glob and a link) counts once;
		   two different drives with one index is a pool that cannot be told apart */
		struct stat st_new, st_old;
		bool same = false;
		int clash = -1;
		bool have_new = stat(paths[i], &st_new) == 0;
		for (unsigned k = 0; k < p->ndrives && !same && clash < 0; k++) {
			if (p->drive[k]->label.index != d->label.index)
				continue;
			if (have_new && stat(p->drive[k]->path, &st_old) == 0 &&
			    uraid_same_file(&st_new, &st_old))
				same = true;
			else
				clash = (int)k;
		}
		if (same) {
			free(d);
			continue;
		}
		if (clash >= 0) {
			uraid_errf(err, errlen, -EINVAL, "%s and %s are both drive %u of pool '%s'; "
				   "one was added while the other was missing: give the drives of "
				   "one copy, or take the wrong one out ('pool create --force' over it)",
				   p->drive[clash]->path, paths[i], d->label.index, p->label.name);
			free(d);
			pool_release(p);
			return -EINVAL;
		}
		if (p->ndrives >= POOL_MAX_DRIVES) {
			free(d);
			pool_release(p);
			return uraid_errf(err, errlen, -EINVAL, "more than %u drives", POOL_MAX_DRIVES);
		}
		if (!p->ndrives)
			p->label = d->label;
		/* in the order of the drives' indexes */
		unsigned at = p->ndrives++;
		while (at && p->drive[at - 1]->label.index > d->label.index) {
			p->drive[at] = p->drive[at - 1];
			at--;
		}
		p->drive[at] = d;
	}
	collect_volumes(p);
	pool_volumes_probe(p);
	return 0;
}
