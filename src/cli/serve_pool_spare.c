// SPDX-License-Identifier: MIT
/*
 * A spare drive for a pool served whole: "add DRIVE" on the pool's control
 * socket (uraid pool add tells the server of the drives it added, or
 * uraid add POOL DRIVE). The drive must carry this pool's label already
 * (uraid pool add). Each degraded volume gets a partition on it of the size
 * of its others (the GPT written once, under the lock volume create and
 * delete take), then each partition is added to its volume as a spare, one
 * volume at a time: the next is added when the previous rebuild has ended
 * (serve_pool_spare_work, from the main loop), so that the rebuilds do not
 * compete for the same drives. A volume's faulty member is taken out
 * before the spare goes in (md keeps a failed member listed until then).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/engine.h>

#include "cli/cli.h"
#include "cli/pool_cli.h"
#include "cli/serve.h"
#include "cli/util.h"
#include "common/file_lock.h"
#include "ctl/ctl.h"
#include "pool/gpt.h"
#include "pool/pool.h"

struct spare_item {
	unsigned vol;
	char spec[320];
	char drive[256];
	uint64_t job0;                  /* the volume's last job number when added */
};

/* The spares waiting for their turn, and the volume rebuilding now. */
struct serve_pool_queue {
	struct spare_item item[NBD_MAX_EXPORTS_POOL];
	unsigned n, next;
	int current;                    /* index into item being rebuilt, -1: none */
};

/*
 * The sectors of volume v's partitions: as read with the pool at start
 * (serve_pool_volumes), else from the GPT of any of its drives that can be
 * read now. Not only the first drive's: the failed drive, the one a spare
 * replaces, is often the first of every volume, and may be gone.
 */
static uint64_t part_sectors(const struct serve_state *v, struct pool_drive *d)
{
	char err[512];
	if (v->spec->part_sectors)
		return v->spec->part_sectors;
	for (unsigned j = 0; j < v->spec->nmembers; j++) {
		if (pool_drive_read(v->spec->drives[j], d, err, sizeof(err)) != 0)
			continue;
		for (unsigned e = 0; e < GPT_ENTRIES; e++) {
			const struct gpt_part *gp = &d->gpt.part[e];
			const char *name = pool_part_volume(gp, v->pool_name);
			if (name && !strcmp(name, v->export_name) && gp->last >= gp->first)
				return gp->last - gp->first + 1;
		}
	}
	return 0;
}

/* How long the table lock is asked for again before the answer is "busy":
 * short, since serve's main thread (its control sockets, stop, signals,
 * the failures it follows) waits meanwhile. */
#define LOCK_TRIES   25
#define LOCK_POLL_MS 20

/*
 * Lock the drive's table area as volume create and delete do (volume.c's
 * lock_tables: an image file also shared-flocked, which keeps off a uraid
 * using the whole file); the fd, or -1 with err. Not waited for: another
 * command holding it is told as busy, to be tried again.
 */
static int lock_table(const char *path, char *err, size_t errlen)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0,
			    .l_len = GPT_PRIMARY_BYTES };
	struct stat sb;
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return snprintf(err, errlen, "%s: %s", path, strerror(errno)), -1;
	if (fstat(fd, &sb) == 0 && !S_ISBLK(sb.st_mode) &&
	    uraid_file_lock(fd, false, path, err, errlen) < 0) {
		close(fd);
		return -1;
	}
	for (unsigned tries = 0; fcntl(fd, F_OFD_SETLK, &fl) < 0;) {
		if (errno == EINTR)
			continue;
		/* a file system without locks (some network ones): none, as file_lock */
		if (errno == ENOLCK || errno == EOPNOTSUPP || errno == EINVAL)
			break;
		if ((errno == EAGAIN || errno == EACCES) && ++tries < LOCK_TRIES) {
			usleep(LOCK_POLL_MS * 1000);
			continue;
		}
		if (errno == EAGAIN || errno == EACCES)
			snprintf(err, errlen, "%s: its GPT is being changed by another uraid (volume "
				 "create or delete); try again when it is done", path);
		else
			snprintf(err, errlen, "%s: cannot lock its GPT: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* Take volume v's faulty members out, then add spec as a spare; 0 or an
 * exit status with the reason in msg. */
static int add_spare(struct serve_state *v, const char *spec, const char *drive, char *msg,
		     size_t msglen)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	char err[512];
	/* the volume's array, or the degraded inner array of a RAID 50/60 */
	struct uraid_array *a = serve_add_target(v, err, sizeof(err));
	if (!a) {
		free(as);
		return snprintf(msg, msglen, "%s: not added to '%s': %s", spec, v->export_name, err),
		       CLI_EXIT_FAIL;
	}
	if (!as || uraid_array_status(a, as) != 0) {
		free(as);
		return snprintf(msg, msglen, "cannot read the state of '%s'", v->export_name),
		       CLI_EXIT_FAIL;
	}
	/* recorded in v->spec first, so that a failure of the spare is followed
	   in the other volumes (serve_pool_follow_failures): no room, no add */
	struct serve_volume_spec *vs = v->spec;
	char *m = NULL, *d = NULL;
	if (vs->nmembers >= POOL_MAX_DRIVES || !(m = strdup(spec)) || !(d = strdup(drive))) {
		free(as);
		free(m);
		free(d);
		return snprintf(msg, msglen, "%s: not added to '%s': %s", spec, v->export_name,
				vs->nmembers >= POOL_MAX_DRIVES ? "it has as many members as a "
				"pool has drives; remove its faulty ones first" : "out of memory"),
		       CLI_EXIT_FAIL;
	}
	for (unsigned i = as->nmembers; i-- > 0;)
		if (as->members[i].state == URAID_MEMBER_FAULTY)
			uraid_array_remove_member(a, i, err, sizeof(err));
	free(as);
	int rc = uraid_array_add_member(a, spec, 0, err, sizeof(err));
	if (rc < 0) {
		free(m);
		free(d);
		return snprintf(msg, msglen, "%s: adding to '%s': %s", spec, v->export_name, err),
		       CLI_EXIT_FAIL;
	}
	vs->members[vs->nmembers] = m;
	vs->drives[vs->nmembers] = d;
	v->was_faulty[vs->nmembers++] = false;
	fprintf(stderr, "uraid serve: %s added to volume '%s' as a spare: it rebuilds onto it\n",
		spec, v->export_name);
	return 0;
}

/*
 * Is the rebuild onto item it over? The add leaves the new member a plain
 * spare; the engine's tick starts the rebuild a moment later (a spare and
 * no job running is the state just after the add too). So it is over when
 * the member is in sync or faulty, when it is a spare of a volume no longer
 * degraded, or when a rebuild (a job after it->job0) has run on the volume
 * and ended with the member still a spare (stopped, or cancelled).
 */
static bool rebuild_over(struct serve_state *st, const struct spare_item *it)
{
	struct serve_state *v = &st->vols[it->vol];
	struct uraid_array_status *as = malloc(sizeof(*as));
	struct uraid_sync_status ss;
	int idx;
	struct uraid_array *a = serve_member_array(v, it->spec, &idx);  /* an inner one of a RAID 50/60 */
	const char *why = NULL;
	if (!as || uraid_array_status(a, as) != 0) {
		free(as);
		return false;           /* looked at again on the next pass */
	}
	uraid_array_sync_status(a, &ss);
	enum uraid_member_state s = idx >= 0 && (unsigned)idx < as->nmembers
					    ? as->members[idx].state : URAID_MEMBER_MISSING;
	if (s == URAID_MEMBER_MISSING)
		why = "no longer a member";
	else if (s == URAID_MEMBER_IN_SYNC)
		why = "in sync: rebuilt";
	else if (s == URAID_MEMBER_FAULTY)
		why = "faulty: the rebuild failed";
	else if (s == URAID_MEMBER_SPARE && as->degraded == 0)
		why = "a spare (not needed)";
	else if (s == URAID_MEMBER_SPARE && !ss.running && ss.job > it->job0 &&
		 ss.kind == URAID_SYNC_RECOVER)
		why = "still a spare: its rebuild stopped before the end";
	if (why)
		fprintf(stderr, "uraid serve: volume '%s': %s is %s\n", v->export_name, it->spec,
			why);
	free(as);
	return why != NULL;
}

void serve_pool_spare_work(struct serve_state *st)
{
	struct serve_pool_queue *q = st->spare_queue;
	char msg[CTL_MAX_LINE];

	if (!q)
		return;
	if (q->current >= 0 && !rebuild_over(st, &q->item[q->current]))
		return;
	q->current = -1;
	while (q->next < q->n) {
		struct spare_item *it = &q->item[q->next++];
		struct uraid_sync_status ss = { 0 };
		struct uraid_array *a = serve_add_target(&st->vols[it->vol], msg, sizeof(msg));
		if (a)
			uraid_array_sync_status(a, &ss);
		it->job0 = ss.job;
		if (add_spare(&st->vols[it->vol], it->spec, it->drive, msg, sizeof(msg)) == 0) {
			q->current = (int)(q->next - 1);
			return;
		}
		fprintf(stderr, "uraid serve: %s\n", msg);
	}
	q->n = q->next = 0;
}

bool serve_pool_rebuilding(const struct serve_state *st)
{
	return st->spare_queue && (st->spare_queue->current >= 0 ||
				   st->spare_queue->next < st->spare_queue->n);
}

void serve_pool_spare_free(struct serve_state *st)
{
	free(st->spare_queue);
	st->spare_queue = NULL;
}

/* The partitions for the degraded volumes on drive nd (locked at fd); the
 * new entries in items; their count, or -1 after a message into f. */
static int partition_drive(struct serve_state *st, struct pool_drive *nd, int fd,
			   struct spare_item *items, unsigned *ndegraded, FILE *f, char *msg,
			   size_t msglen)
{
	struct pool_drive *tmp = malloc(sizeof(*tmp));
	char err[512], size[32];
	int n = 0;
	bool changed = false;

	if (!tmp)
		return snprintf(msg, msglen, "out of memory"), -1;
	for (unsigned i = 0; i < st->nvols; i++) {
		struct serve_state *v = &st->vols[i];
		if (!serve_degraded(v))         /* a RAID 50/60: one of its inner arrays */
			continue;
		++*ndegraded;
		uint64_t sectors = part_sectors(v, tmp);
		if (!sectors) {
			fprintf(f, "volume '%s': its partition size is unknown; left degraded\n",
				v->export_name);
			continue;
		}
		/* a partition of this volume there already (a retry): used again */
		int entry = -1;
		for (unsigned e = 0; e < GPT_ENTRIES && entry < 0; e++) {
			const char *name = pool_part_volume(&nd->gpt.part[e], st->export_name);
			if (name && !strcmp(name, v->export_name))
				entry = (int)e;
		}
		if (entry < 0) {
			uint64_t first = 0, room = pool_drive_largest_free(nd, &first);
			entry = gpt_free_entry(&nd->gpt);
			if (room < sectors || entry < 0) {
				fprintf(f, "volume '%s': %s does not fit on %s (%s free); left "
					"degraded\n", v->export_name,
					cli_bytes(sectors * 512, size, sizeof(size)), nd->path,
					cli_bytes(room * 512, err, sizeof(err)));
				continue;
			}
			struct gpt_part *gp = &nd->gpt.part[entry];
			memcpy(gp->type, pool_type_volume, 16);
			if (gpt_guid_random(gp->guid)) {
				fprintf(f, "volume '%s': no random GUID; left degraded\n",
					v->export_name);
				continue;
			}
			gp->first = first;
			gp->last = first + sectors - 1;
			pool_part_name(st->export_name, v->export_name, gp->name, sizeof(gp->name));
			changed = true;
		}
		items[n].vol = i;
		snprintf(items[n].drive, sizeof(items[n].drive), "%s", nd->path);
		pool_member_spec(nd, (unsigned)entry, items[n].spec, sizeof(items[n].spec));
		n++;
	}
	free(tmp);
	if (changed && gpt_write(fd, &nd->gpt, err, sizeof(err)) != 0)
		return snprintf(msg, msglen, "%s: writing its GPT: %s", nd->path, err), -1;
	return n;
}

void serve_pool_add_drive(struct serve_state *st, const struct ctl_request *rq, FILE *out)
{
	struct pool_drive *nd = malloc(sizeof(*nd));
	struct serve_pool_queue *q = st->spare_queue;
	struct spare_item *items = calloc(NBD_MAX_EXPORTS_POOL, sizeof(*items));
	char msg[CTL_MAX_LINE], err[512], *body = NULL;
	size_t blen = 0;
	int fd = -1, n = 0;
	FILE *f = NULL;

	if (!q && (q = st->spare_queue = calloc(1, sizeof(*q))))
		q->current = -1;
	if (!nd || !items || !q || !(f = open_memstream(&body, &blen))) {
		ctl_reply(out, CLI_EXIT_FAIL, "out of memory", NULL, 0);
		goto out;
	}
	if (rq->nfields < 2) {
		ctl_reply(out, CLI_EXIT_USAGE, "which drive? (give its path)", NULL, 0);
		goto out;
	}
	const char *path = rq->field[1];
	for (unsigned i = 0; i < st->nvols; i++)
		for (unsigned j = 0; j < st->vols[i].spec->nmembers; j++)
			if (serve_pool_same_drive(st->vols[i].spec->drives[j], path)) {
				snprintf(msg, sizeof(msg), "%s holds a member of volume '%s' already: "
					 "a spare drive is a new one (uraid pool add %s DRIVE)", path,
					 st->vols[i].export_name, st->export_name);
				ctl_reply(out, CLI_EXIT_FAIL, msg, NULL, 0);
				goto out;
			}
	if (serve_pool_rebuilding(st)) {
		ctl_reply(out, CLI_EXIT_FAIL, "a spare drive is being rebuilt onto already; add "
			  "the next when it is done (uraid status POOL)", NULL, 0);
		goto out;
	}
	if ((fd = lock_table(path, err, sizeof(err))) < 0) {
		ctl_reply(out, CLI_EXIT_FAIL, err, NULL, 0);
		goto out;
	}
	/* read under the lock: the pool's label, with the UUID read at start
	   (not from a drive now: the one to ask may be the failed one) */
	int rc = pool_drive_read(path, nd, err, sizeof(err));
	if (rc == 0 && !st->pool_uuid_known) {
		rc = -ESRCH;
		snprintf(err, sizeof(err), "the UUID of pool '%s' is not known to its server, so "
			 "%s cannot be checked to be its drive; restart serve", st->export_name,
			 path);
	} else if (rc == 0 && memcmp(nd->label.uuid, st->pool_uuid, 16)) {
		rc = -EXDEV;
		snprintf(err, sizeof(err), "%s belongs to pool '%s', not to '%s'", path,
			 nd->label.name, st->export_name);
	}
	if (rc == -ESRCH) {
		ctl_reply(out, CLI_EXIT_FAIL, err, NULL, 0);
		goto out;
	}
	if (rc) {
		snprintf(msg, sizeof(msg), "%s%s: give it to the pool first (uraid pool add %s %s)",
			 rc == -ENOENT ? "not a drive of any pool: " : "", err, st->export_name,
			 path);
		ctl_reply(out, CLI_EXIT_FAIL, msg, NULL, 0);
		goto out;
	}
	unsigned ndegraded = 0;
	n = partition_drive(st, nd, fd, items, &ndegraded, f, msg, sizeof(msg));
	if (n < 0) {
		ctl_reply(out, CLI_EXIT_FAIL, msg, NULL, 0);
		goto out;
	}
	/* queued in volume order: the first starts now, the others in turn */
	q->n = q->next = 0;
	q->current = -1;
	for (int i = 0; i < n; i++) {
		q->item[q->n++] = items[i];
		fprintf(f, "%s: a spare for volume '%s'%s\n", items[i].spec,
			st->vols[items[i].vol].export_name,
			i ? ", rebuilt after the one before" : ", rebuilding now");
	}
	if (!n && ndegraded)
		fprintf(f, "%s: no spare added (see above)\n", nd->path);
	else if (!n)
		fprintf(f, "no volume of pool '%s' is degraded: nothing to rebuild\n",
			st->export_name);
	serve_pool_spare_work(st);
	fclose(f);
	f = NULL;
	ctl_reply(out, 0, NULL, body, blen);
out:
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	free(body);
	free(items);
	free(nd);
}
