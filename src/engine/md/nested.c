// SPDX-License-Identifier: MIT
/*
 * Nested RAID 50/60 (uraid/nested.h): creating the inner arrays and the
 * RAID 0 over them, finding them again among member paths and assembling
 * them in one engine (the member kind itself is md/stack.c).
 *
 * The RAID 0 is planned and written by uraid_create like any array, onto
 * an empty in-memory image of each inner array (a memfd of its size): only
 * its metadata region (before data_offset) is then copied onto the inner
 * array through the engine, and the 1.0 location at its end cleared, so a
 * stale superblock of an earlier array there cannot be found instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <uraid/geom.h>
#include <uraid/level.h>
#include <uraid/nested.h>
#include "common/errmsg.h"
#include "common/full_io.h"
#include "common/range_path.h"

static int check_shape(const struct uraid_create_opts *o, unsigned groups, char *err,
		       size_t errlen)
{
	const struct uraid_level_info *li = uraid_level_info(o->level);

	if (o->level != URAID_LEVEL_5 && o->level != URAID_LEVEL_6)
		return uraid_errf(err, errlen, -EINVAL, "nested arrays are RAID 50 and 60: inner "
				  "level 5 or 6, not %d", o->level);
	if (groups < 2 || groups > URAID_NESTED_MAX_GROUPS)
		return uraid_errf(err, errlen, -EINVAL, "--groups=%u: a RAID %d0 has 2 to %u groups",
				  groups, o->level, URAID_NESTED_MAX_GROUPS);
	if (o->spare_devices || o->write_journal)
		return uraid_errf(err, errlen, -EINVAL, "spares and journals of a RAID %d0 belong to "
				  "one group: add them to its inner array after create", o->level);
	if (o->npaths % groups)
		return uraid_errf(err, errlen, -EINVAL, "%u members do not split into %u groups of "
				  "equal size", o->npaths, groups);
	if (o->npaths / groups < li->create_min_members)
		return uraid_errf(err, errlen, -EINVAL, "%u members per group: RAID %d needs at "
				  "least %u", o->npaths / groups, o->level, li->create_min_members);
	return 0;
}

/* The inner array g's options: its members, its name. */
static void inner_opts(const struct uraid_create_opts *o, unsigned groups, unsigned g,
		       char *name, size_t namelen, struct uraid_create_opts *io)
{
	unsigned per = o->npaths / groups;

	*io = *o;
	snprintf(name, namelen, "%s-%u", o->name ? o->name : "uraid", g);
	io->name = name;
	io->paths = o->paths + g * per;
	io->npaths = per;
	io->raid_disks = per;
	io->uuid = NULL;        /* each its own */
}

struct images {
	int fd[URAID_NESTED_MAX_GROUPS];
	char path[URAID_NESTED_MAX_GROUPS][40];
	const char *paths[URAID_NESTED_MAX_GROUPS];
};

static void images_close(struct images *im, unsigned n)
{
	for (unsigned g = 0; g < n; g++)
		if (im->fd[g] >= 0)
			close(im->fd[g]);
}

/* An empty image of each inner array, the RAID 0's members while planning. */
static int images_open(struct images *im, const struct uraid_nested_result *r, char *err,
		       size_t errlen)
{
	for (unsigned g = 0; g < r->groups; g++)
		im->fd[g] = -1;
	for (unsigned g = 0; g < r->groups; g++) {
		im->fd[g] = memfd_create("uraid-nested", MFD_CLOEXEC);
		if (im->fd[g] < 0 || ftruncate(im->fd[g], (off_t)(r->inner[g].array_sectors * 512))) {
			int rc = -errno;
			images_close(im, g + 1);
			return uraid_errf(err, errlen, rc, "an image of the inner array: %s",
					  strerror(-rc));
		}
		snprintf(im->path[g], sizeof(im->path[g]), "/proc/self/fd/%d", im->fd[g]);
		im->paths[g] = im->path[g];
	}
	return 0;
}

static void outer_opts(const struct uraid_create_opts *o, const struct images *im,
		       unsigned groups, struct uraid_create_opts *oo)
{
	*oo = *o;
	oo->level = URAID_LEVEL_0;
	oo->layout_given = false;
	oo->raid_disks = groups;
	oo->spare_devices = 0;
	oo->bitmap = URAID_BITMAP_NONE;
	oo->ppl = false;
	oo->size_kib = 0;
	oo->paths = im->paths;
	oo->npaths = groups;
	oo->flags &= ~URAID_CREATE_ASSUME_CLEAN;
}

/* The RAID 0's metadata, from the images onto the inner arrays. */
static int copy_outer_meta(const struct uraid_create_opts *o, const struct uraid_nested_result *r,
			   const struct images *im, char *err, size_t errlen)
{
	struct uraid_engine_opts eo = { .reactors = 1, .flags = URAID_ENGINE_THREADS };
	struct uraid_engine *e;
	size_t head = (size_t)r->outer.data_offset * 512;
	unsigned per = o->npaths / r->groups;
	uint8_t *buf = NULL;
	int rc = uraid_engine_create(&eo, &e);

	if (rc)
		return uraid_errf(err, errlen, rc, "cannot start an engine: %s", strerror(-rc));
	if (posix_memalign((void **)&buf, 4096, head)) {
		uraid_engine_destroy(e);
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	}
	for (unsigned g = 0; g < r->groups && !rc; g++) {
		struct uraid_assemble_opts ao = { .paths = o->paths + g * per, .npaths = per };
		struct uraid_array *a;
		uint64_t size = r->inner[g].array_sectors;
		alignas(4096) static const uint8_t zero[URAID_SB_BYTES];

		if ((rc = uraid_array_assemble(e, &ao, &a, err, errlen)))
			break;
		rc = uraid_pread_full(im->fd[g], buf, head, 0);
		if (rc == 0)
			rc = uraid_array_pwrite(a, buf, head, 0, 0);
		if (rc == 0)
			rc = uraid_array_pwrite(a, zero, sizeof(zero),
						uraid_sb_location(0, size) * 512, 0);
		if (rc == 0)
			rc = uraid_array_flush(a);
		if (rc)
			uraid_errf(err, errlen, rc, "writing the RAID 0 superblock onto %s-%u: %s",
				   o->name ? o->name : "uraid", g, strerror(-rc));
		int r2 = uraid_array_close(a);
		if (!rc && r2)
			rc = uraid_errf(err, errlen, r2, "closing %s-%u: %s",
					o->name ? o->name : "uraid", g, strerror(-r2));
	}
	free(buf);
	uraid_engine_destroy(e);
	return rc;
}

/*
 * A creation that failed after `made` inner arrays were written leaves
 * them as arrays of their own on their members: err says so and names
 * them, with the command that erases them (nothing is undone here: a
 * superblock erased by us on a failing member could be the wrong one).
 */
static void half_made(const struct uraid_create_opts *o, unsigned groups, unsigned made,
		      char *err, size_t errlen)
{
	const char *name = o->name ? o->name : "uraid";
	unsigned per = o->npaths / groups;
	size_t n = strlen(err);

	if (!errlen || n >= errlen - 1)
		return;
	n += (size_t)snprintf(err + n, errlen - n, "; the stack is half made:");
	for (unsigned g = 0; g < made && n < errlen; g++)
		n += (size_t)snprintf(err + n, errlen - n, "%s %s-%u", g ? "," : "", name, g);
	if (n < errlen)
		n += (size_t)snprintf(err + n, errlen - n, " %s written as arrays of their own; "
				      "erase them before trying again: uraid zero-superblock",
				      made > 1 ? "are" : "is");
	for (unsigned i = 0; i < made * per && n < errlen; i++)
		n += (size_t)snprintf(err + n, errlen - n, " %s", o->paths[i]);
}

int uraid_nested_create(const struct uraid_create_opts *o, unsigned groups,
			struct uraid_nested_result *r, char *err, size_t errlen)
{
	char names[URAID_NESTED_MAX_GROUPS][40];
	struct uraid_create_opts io, oo;
	struct images im;
	int rc = check_shape(o, groups, err, errlen);

	if (rc)
		return rc;
	memset(r, 0, sizeof(*r));
	r->groups = groups;
	/* every array planned (nothing written) before any is created */
	for (unsigned g = 0; g < groups; g++) {
		inner_opts(o, groups, g, names[g], sizeof(names[g]), &io);
		io.flags |= URAID_CREATE_DRY_RUN;
		if ((rc = uraid_create(&io, &r->inner[g], err, errlen)))
			return rc;
	}
	if ((rc = images_open(&im, r, err, errlen)))
		return rc;
	outer_opts(o, &im, groups, &oo);
	oo.flags |= URAID_CREATE_DRY_RUN;
	rc = uraid_create(&oo, &r->outer, err, errlen);
	if (rc || (o->flags & URAID_CREATE_DRY_RUN)) {
		images_close(&im, groups);
		return rc;
	}
	unsigned made = 0;
	for (unsigned g = 0; g < groups && !rc; g++) {
		inner_opts(o, groups, g, names[g], sizeof(names[g]), &io);
		rc = uraid_create(&io, &r->inner[g], err, errlen);
		made += rc == 0;
	}
	if (rc == 0) {
		outer_opts(o, &im, groups, &oo);
		rc = uraid_create(&oo, &r->outer, err, errlen);
	}
	if (rc == 0)
		rc = copy_outer_meta(o, r, &im, err, errlen);
	images_close(&im, groups);
	if (rc && made)
		half_made(o, groups, made, err, errlen);
	return rc;
}

/* ---- finding and assembling ---- */

/*
 * Open a member read-only, a whole file or device or a range of one
 * (PATH@START+LENGTH, a pool's partition: common/range_path.h): the fd, its
 * first sector in *base; -errno.
 */
static int open_member(const char *path, uint64_t *base, uint64_t *sectors)
{
	struct uraid_range_path r;
	int fd;

	if (uraid_range_path_parse(path, &r, NULL, 0))
		return -EINVAL;
	fd = open(r.path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	*base = r.ranged ? r.start : 0;
	*sectors = r.ranged ? r.sectors : 0;
	return fd;
}

/* A member's chosen superblock; 0, or -errno (none, unreadable). */
static int member_sb(const char *path, struct uraid_sb *sb)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	uint64_t base, sectors;
	int fd = open_member(path, &base, &sectors);
	int rc = fd < 0 ? fd : (p ? 0 : -ENOMEM);

	if (rc == 0)
		rc = sectors ? uraid_probe_range(fd, base, sectors, p) : uraid_probe_fd(fd, p);
	if (rc == 0 && (p->chosen < 0 || p->loc[p->chosen].status))
		rc = -ENOENT;
	if (rc == 0)
		*sb = p->loc[p->chosen].sb;
	if (fd >= 0)
		close(fd);
	free(p);
	return rc;
}

struct grouping {
	unsigned n;
	uint8_t uuid[URAID_NESTED_MAX_GROUPS][16];
	char name[URAID_NESTED_MAX_GROUPS][33];
	struct uraid_sb sb[URAID_NESTED_MAX_GROUPS];    /* the freshest of each group */
	unsigned count[URAID_NESTED_MAX_GROUPS];
	const char *paths[URAID_NESTED_MAX_GROUPS][URAID_MAX_MEMBERS];
	/* each path's role, data offset and events (to read a group's data) */
	uint16_t role[URAID_NESTED_MAX_GROUPS][URAID_MAX_MEMBERS];
	uint64_t data_offset[URAID_NESTED_MAX_GROUPS][URAID_MAX_MEMBERS];
	uint64_t events[URAID_NESTED_MAX_GROUPS][URAID_MAX_MEMBERS];
};

static int group_paths(const char *const *paths, unsigned npaths, struct grouping *gr,
		       char *err, size_t errlen)
{
	memset(gr, 0, sizeof(*gr));
	for (unsigned i = 0; i < npaths; i++) {
		struct uraid_sb sb;
		unsigned g;
		int rc = member_sb(paths[i], &sb);

		if (rc)
			return uraid_errf(err, errlen, rc, "%s: no md superblock to group it by (%s)",
					  paths[i], strerror(-rc));
		for (g = 0; g < gr->n && memcmp(gr->uuid[g], sb.set_uuid, 16); g++)
			;
		if (g == gr->n) {
			if (gr->n == URAID_NESTED_MAX_GROUPS)
				return uraid_errf(err, errlen, -EINVAL, "the members belong to more "
						  "than %u arrays", URAID_NESTED_MAX_GROUPS);
			memcpy(gr->uuid[g], sb.set_uuid, 16);
			snprintf(gr->name[g], sizeof(gr->name[g]), "%s", sb.set_name);
			gr->sb[g] = sb;
			gr->n++;
		}
		if (gr->count[g] == URAID_MAX_MEMBERS)
			return uraid_errf(err, errlen, -EINVAL, "%s: too many members of '%s'",
					  paths[i], gr->name[g]);
		if (sb.events > gr->sb[g].events)
			gr->sb[g] = sb;
		unsigned k = gr->count[g]++;
		gr->paths[g][k] = paths[i];
		gr->role[g][k] = uraid_sb_role(&sb);
		gr->data_offset[g][k] = sb.data_offset;
		gr->events[g][k] = sb.events;
	}
	return 0;
}

/* A group's array data read from its members' files (no engine), as far as
 * the members in the slots that hold it are there: for the probe below. */
struct group_reader {
	struct uraid_geom geom;
	int fd[URAID_MAX_MEMBERS];              /* by slot; -1 none */
	uint64_t data_offset[URAID_MAX_MEMBERS];        /* from the file's start (a range's too) */
	struct uraid_loc loc[URAID_MAX_MEMBERS];        /* every copy (RAID 1/10) */
};

static int group_read(void *ctx, void *buf, size_t len, uint64_t off)
{
	struct group_reader *r = ctx;

	if ((off | len) % 512)
		return -EINVAL;
	for (size_t done = 0; done < len; done += 512) {
		uint64_t sector = (off + done) / 512;
		int n = uraid_geom_map(&r->geom, sector, r->loc, URAID_MAX_MEMBERS), c = 0;
		while (c < n && (r->loc[c].slot >= URAID_MAX_MEMBERS || r->fd[r->loc[c].slot] < 0))
			c++;
		if (c >= n)
			return -EIO;    /* its members are missing: the parity would tell */
		const struct uraid_loc *loc = &r->loc[c];
		int rc = uraid_pread_full(r->fd[loc->slot], (char *)buf + done, 512,
					  (off_t)((r->data_offset[loc->slot] + loc->sector) * 512));
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * The RAID 0 superblock on group g's data: 1 found (in *outer), 0 none
 * there, -1 cannot tell (a member it lies on is missing, a geometry uraid
 * cannot read this way).
 */
static int group_outer_sb(const struct grouping *gr, unsigned g, struct uraid_sb *outer)
{
	const struct uraid_sb *sb = &gr->sb[g];
	struct group_reader *r = malloc(sizeof(*r));
	struct uraid_probe *p = malloc(sizeof(*p));
	struct uraid_geom_params gp = { .level = sb->level, .layout = sb->layout,
					.raid_disks = sb->raid_disks,
					.chunk_sectors = sb->chunksize, .dev_sectors = sb->size };
	char why[160];
	int found = -1;

	if (!r || !p || (sb->level != 1 && sb->level != 4 && sb->level != 5 && sb->level != 6 &&
			 sb->level != 10) || uraid_geom_init(&r->geom, &gp, why, sizeof(why)))
		goto out;
	for (unsigned s = 0; s < URAID_MAX_MEMBERS; s++)
		r->fd[s] = -1;
	/* the freshest member of each slot */
	uint64_t best[URAID_MAX_MEMBERS] = { 0 };
	for (unsigned k = 0; k < gr->count[g]; k++) {
		unsigned s = gr->role[g][k];
		if (s >= sb->raid_disks || gr->events[g][k] < best[s])
			continue;
		uint64_t base, sectors;
		int fd = open_member(gr->paths[g][k], &base, &sectors);
		if (fd < 0)
			continue;
		/* data_offset and size come from the disk: a range member (a
		   pool's partition) is read inside its range only, never in the
		   partition next to it; one that does not fit is not read */
		uint64_t doff = gr->data_offset[g][k];
		if (sectors && (doff > sectors || sb->size > sectors - doff)) {
			close(fd);
			continue;
		}
		if (r->fd[s] >= 0)
			close(r->fd[s]);
		r->fd[s] = fd;
		r->data_offset[s] = base + gr->data_offset[g][k];
		best[s] = gr->events[g][k];
	}
	if (uraid_probe_reader(group_read, r, r->geom.array_sectors, p) == 0) {
		if (p->chosen >= 0 && !p->loc[p->chosen].status && p->loc[p->chosen].sb.level == 0) {
			*outer = p->loc[p->chosen].sb;
			found = 1;
		} else if (p->chosen < 0) {
			found = 0;
		}
	}
	for (unsigned s = 0; s < URAID_MAX_MEMBERS; s++)
		if (r->fd[s] >= 0)
			close(r->fd[s]);
out:
	free(p);
	free(r);
	return found;
}

int uraid_nested_probe(const char *const *paths, unsigned npaths, struct uraid_sb *outer,
		       unsigned *groups)
{
	struct grouping *gr = malloc(sizeof(*gr));
	struct uraid_sb *sb = malloc(sizeof(*sb)), *first = malloc(sizeof(*first));
	char err[256];
	unsigned confirmed = 0;
	int yes = gr && sb && first && group_paths(paths, npaths, gr, err, sizeof(err)) == 0 &&
		  gr->n > 1;

	/*
	 * More than one array among the paths is nested only when their data
	 * hold the superblock of one RAID 0 over as many arrays at least (a
	 * stray disk of another array is not): else plain assembly, which says
	 * what is wrong with the list. A group whose data cannot be read here
	 * (a member missing where the superblock lies) neither confirms nor
	 * denies; at least one group must confirm.
	 */
	for (unsigned g = 0; yes && g < gr->n; g++) {
		int f = group_outer_sb(gr, g, sb);
		if (f == 0)
			yes = 0;
		else if (f == 1 && !confirmed++)
			*first = *sb;
		else if (f == 1 && (memcmp(first->set_uuid, sb->set_uuid, 16) ||
				    sb->raid_disks != first->raid_disks))
			yes = 0;
	}
	if (yes && (!confirmed || gr->n > first->raid_disks))
		yes = 0;
	if (yes && outer)
		*outer = *first;
	if (yes && groups)
		*groups = gr->n;
	free(first);
	free(sb);
	free(gr);
	return yes;
}

int uraid_nested_detect(const char *const *paths, unsigned npaths)
{
	return uraid_nested_probe(paths, npaths, NULL, NULL);
}

int uraid_nested_close(struct uraid_nested *n)
{
	int rc = 0, r2;

	if (n->outer)
		rc = uraid_array_close(n->outer);
	n->outer = NULL;
	for (unsigned g = 0; g < n->groups; g++) {
		if (n->inner[g] && (r2 = uraid_array_close(n->inner[g])) && !rc)
			rc = r2;
		n->inner[g] = NULL;
	}
	n->groups = 0;
	return rc;
}

int uraid_nested_assemble(struct uraid_engine *e, const struct uraid_assemble_opts *o,
			  struct uraid_nested *n, char *err, size_t errlen)
{
	struct grouping *gr = malloc(sizeof(*gr));
	const char *names[URAID_NESTED_MAX_GROUPS];
	int rc = gr ? 0 : -ENOMEM;

	memset(n, 0, sizeof(*n));
	if (rc == 0)
		rc = group_paths(o->paths, o->npaths, gr, err, errlen);
	if (rc == 0 && gr->n < 2)
		rc = uraid_errf(err, errlen, -EINVAL, "the members are of one array ('%s'), not "
				"the inner arrays of a nested one", gr->name[0]);
	for (unsigned g = 0; rc == 0 && g < gr->n; g++) {
		/* the inner arrays: the caller's flags; no cache or read-ahead of
		   their own (the RAID 0 above has them) */
		struct uraid_assemble_opts io = { .paths = gr->paths[g], .npaths = gr->count[g],
						  .flags = o->flags,
						  .idle_clean_ms = o->idle_clean_ms,
						  .stripe_cache = o->stripe_cache };
		rc = uraid_array_assemble(e, &io, &n->inner[g], err, errlen);
		if (rc == 0) {
			snprintf(n->inner_name[g], sizeof(n->inner_name[g]), "%s", gr->name[g]);
			names[g] = n->inner_name[g];
			n->groups = g + 1;
		}
	}
	if (rc == 0) {
		struct uraid_assemble_opts oo = *o;
		oo.paths = names;
		oo.npaths = n->groups;
		oo.stacked = n->inner;
		rc = uraid_array_assemble(e, &oo, &n->outer, err, errlen);
	}
	if (rc)
		uraid_nested_close(n);
	free(gr);
	return rc;
}

int uraid_nested_outer_sb_loc(const struct uraid_sb *inner, struct uraid_loc *loc)
{
	struct uraid_geom_params gp = { .level = inner->level, .layout = inner->layout,
					.raid_disks = inner->raid_disks,
					.chunk_sectors = inner->chunksize, .dev_sectors = inner->size };
	struct uraid_geom g;
	char why[160];

	if ((inner->level != URAID_LEVEL_5 && inner->level != URAID_LEVEL_6) ||
	    uraid_geom_init(&g, &gp, why, sizeof(why)))
		return -EINVAL;
	uint64_t at = uraid_sb_location(2, g.array_sectors);
	/* a data block of a RAID 5/6 has one place; 4 KiB never crosses a
	   chunk there (chunks are powers of two of 4 KiB at least) */
	if (uraid_geom_chunk_left(&g, at) < URAID_SB_BYTES / 512 ||
	    uraid_geom_map(&g, at, loc, 1) != 1)
		return -EINVAL;
	return 0;
}

const char *uraid_nested_level_name(int inner_level)
{
	return inner_level == URAID_LEVEL_6 ? "raid60" : inner_level == URAID_LEVEL_5 ? "raid50"
										      : "raid?0";
}
