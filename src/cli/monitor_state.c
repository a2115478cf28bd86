// SPDX-License-Identifier: MIT
/*
 * What uraid monitor knows of each served array: asked of its server
 * ("monitor-state", monitor_proto.h) at the start, after each event and
 * every --delay; the events mdadm reports for an array it first sees; and
 * spare groups, which move a spare from one array to a degraded other
 * through the servers' own `remove` and `add`.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <syslog.h>
#include <unistd.h>

#include <uraid/superblock.h>

#include "cli/monitor.h"
#include "cli/monitor_proto.h"
#include "ctl/ctl.h"

/* The answer's limit: a line per member and one for the array. */
#define STATE_MAX_BYTES (64 * 1024)

static int split_tabs(char *line, char **field, int max)
{
	int n = 0;
	for (char *p = line; n < max;) {
		field[n++] = p;
		p = strchr(p, '\t');
		if (!p)
			break;
		*p++ = 0;
	}
	return n;
}

static int parse_uint(const char *s, unsigned max, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (!*s || *end || v > max)
		return -EPROTO;
	*out = (unsigned)v;
	return 0;
}

static int unescape(const char *field, char *out, size_t len)
{
	return monitor_field_unescape(field, strlen(field), out, len);
}

/* The answer's lines into a; every field checked. */
static int parse_state(char *text, struct mon_array *a)
{
	bool have_array = false;
	char *save = NULL;

	a->nmembers = 0;
	a->ninner = 0;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[10];
		int n = split_tabs(line, f, 10);
		unsigned running, slot_plus;
		if (n == 8 && strcmp(f[0], "array") == 0) {
			if (unescape(f[1], a->export_name, sizeof(a->export_name)) ||
			    unescape(f[3], a->name, sizeof(a->name)) ||
			    strlen(f[6]) >= sizeof(a->job) ||
			    parse_uint(f[4], URAID_MAX_MEMBERS, &a->raid_disks) ||
			    parse_uint(f[5], URAID_MAX_MEMBERS, &a->degraded) ||
			    parse_uint(f[7], 1, &running))
				return -EPROTO;
			a->has_uuid = uraid_uuid_parse(f[2], a->uuid) == 0;
			strcpy(a->job, f[6]);
			a->running = running;
			have_array = true;
		} else if (n == 4 && strcmp(f[0], "member") == 0) {
			if (a->nmembers >= URAID_MAX_MEMBERS)
				return -EPROTO;
			struct mon_member *mm = &a->members[a->nmembers];
			/* the slot, -1 for none */
			bool none = strcmp(f[3], "-1") == 0;
			if (unescape(f[1], mm->path, sizeof(mm->path)) || !*mm->path ||
			    strlen(f[2]) >= sizeof(mm->state) ||
			    (!none && parse_uint(f[3], URAID_MAX_MEMBERS, &slot_plus)))
				return -EPROTO;
			strcpy(mm->state, f[2]);
			mm->slot = none ? -1 : (int)slot_plus;
			a->nmembers++;
		} else if (n == 6 && strcmp(f[0], "inner") == 0) {
			/* a RAID 50/60's inner array: NAME RAID_DISKS DEGRADED JOB RUNNING */
			if (a->ninner >= MON_INNER_MAX)
				return -EPROTO;
			struct mon_inner *in = &a->inner[a->ninner];
			if (unescape(f[1], in->name, sizeof(in->name)) || !*in->name ||
			    parse_uint(f[2], URAID_MAX_MEMBERS, &in->raid_disks) ||
			    parse_uint(f[3], URAID_MAX_MEMBERS, &in->degraded) ||
			    strlen(f[4]) >= sizeof(in->job) || parse_uint(f[5], 1, &running))
				return -EPROTO;
			strcpy(in->job, f[4]);
			in->running = running;
			a->ninner++;
		} else {
			return -EPROTO;
		}
	}
	return have_array ? 0 : -EPROTO;
}

/* Ask the server at control; its answer parsed into *out (a new copy). */
static int query(struct monitor *m, const char *control, struct mon_array **out)
{
	const char *fields[] = { MONITOR_STATE_VERB };
	char msg[512], *text = NULL;
	size_t len = 0;
	*out = NULL;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	int rc = ctl_call(control, fields, 1, f, msg, sizeof(msg));
	fclose(f);
	if (rc == 0 && len > STATE_MAX_BYTES)
		rc = -EPROTO;
	struct mon_array *a = rc == 0 ? calloc(1, sizeof(*a)) : NULL;
	if (rc == 0 && !a)
		rc = -ENOMEM;
	if (rc == 0) {
		snprintf(a->control, sizeof(a->control), "%s", control);
		rc = parse_state(text, a);
		if (rc)
			monitor_log(m, LOG_ERR, "%s: an answer uraid monitor does not understand "
				    "(a server of another version?)", control);
	} else if (rc > 0) {
		monitor_log(m, LOG_ERR, "%s: %s", control, msg);
	}
	free(text);
	if (rc)
		free(a);
	else
		*out = a;
	return rc;
}

/* A spare, one being rebuilt onto, or a replacement: FailSpare, SpareActive. */
static bool spare_like(const char *state)
{
	return !strcmp(state, "spare") || !strcmp(state, "rebuilding") ||
	       !strcmp(state, "replacing");
}

static const struct mon_member *member_at(const struct mon_array *a, const char *path)
{
	for (unsigned i = 0; i < a->nmembers; i++)
		if (strcmp(a->members[i].path, path) == 0)
			return &a->members[i];
	return NULL;
}

/*
 * What changed from known to now and was not reported yet (a datagram that
 * was lost: a monitor's queue is short), reported as mdadm does from its
 * own comparisons: the job first, then member by member (by path). A spare
 * in sync while its job still runs is kept as known had it, as the server
 * does (serve_events.c), so that RebuildFinished comes before SpareActive.
 */
static void report_changes(struct monitor *m, const struct mon_array *known,
			   struct mon_array *now)
{
	/* a RAID 50/60's inner arrays' jobs, under their own names */
	for (unsigned i = 0; i < now->ninner; i++) {
		const struct mon_inner *n = &now->inner[i];
		const struct mon_inner *o = monitor_inner(known, n->name);
		bool same = o && o->running && n->running && !strcmp(o->job, n->job);
		if (o && o->running && !same)
			monitor_report(m, "RebuildFinished", n->name, NULL, now->control);
		if (o && n->running && !same)
			monitor_report(m, "RebuildStarted", n->name, NULL, now->control);
	}
	bool same_job = known->running && now->running && !strcmp(known->job, now->job);
	if (known->running && !same_job)
		monitor_report(m, "RebuildFinished", now->export_name, NULL, now->control);
	if (now->running && !same_job)
		monitor_report(m, "RebuildStarted", now->export_name, NULL, now->control);
	for (unsigned i = 0; i < now->nmembers; i++) {
		struct mon_member *n = &now->members[i];
		const struct mon_member *o = member_at(known, n->path);
		if (!o)
			continue;
		if (strcmp(o->state, "faulty") && !strcmp(n->state, "faulty")) {
			monitor_report(m, spare_like(o->state) ? "FailSpare" : "Fail",
				       now->export_name, n->path, now->control);
		} else if (spare_like(o->state) && !strcmp(n->state, "in-sync")) {
			if (same_job)
				snprintf(n->state, sizeof(n->state), "%s", o->state);
			else
				monitor_report(m, "SpareActive", now->export_name, n->path,
					       now->control);
		}
	}
}

int monitor_refresh(struct monitor *m, struct mon_array *a)
{
	struct mon_array *now;
	int rc = query(m, a->control, &now);
	if (rc)
		return rc;
	report_changes(m, a, now);
	now->conf = a->conf;
	now->seen = a->seen;
	*a = *now;
	free(now);
	return 0;
}

int monitor_query(struct monitor *m, const char *control, struct mon_array *a)
{
	struct mon_array *now;
	int rc = query(m, control, &now);
	if (rc)
		return rc;
	now->conf = a->conf;
	now->seen = a->seen;
	*a = *now;
	free(now);
	return 0;
}

struct mon_inner *monitor_inner(const struct mon_array *a, const char *name)
{
	for (unsigned i = 0; i < a->ninner; i++)
		if (strcmp(a->inner[i].name, name) == 0)
			return (struct mon_inner *)&a->inner[i];
	return NULL;
}

void monitor_note_event(struct mon_array *a, const char *array, const char *event,
			const char *member, bool *already)
{
	struct mon_inner *in = monitor_inner(a, array);
	struct mon_member *mm = NULL;

	if (in) {
		/* an inner array's: its job; its members are not listed (a
		   Fail is told once, from the event) */
		*already = false;
		if (!strcmp(event, "RebuildStarted")) {
			*already = in->running;
			in->running = true;
		} else if (!strcmp(event, "RebuildFinished")) {
			*already = !in->running;
			in->running = false;
		}
		return;
	}
	for (unsigned i = 0; member && i < a->nmembers && !mm; i++)
		if (strcmp(a->members[i].path, member) == 0)
			mm = &a->members[i];
	*already = false;
	if (!strcmp(event, "Fail") || !strcmp(event, "FailSpare")) {
		*already = mm && !strcmp(mm->state, "faulty");
		if (mm)
			snprintf(mm->state, sizeof(mm->state), "faulty");
	} else if (!strcmp(event, "SpareActive")) {
		*already = mm && !strcmp(mm->state, "in-sync");
		if (mm)
			snprintf(mm->state, sizeof(mm->state), "in-sync");
	} else if (!strcmp(event, "RebuildStarted")) {
		*already = a->running;
		a->running = true;
	} else if (!strcmp(event, "RebuildFinished")) {
		*already = !a->running;
		a->running = false;
	}
}

unsigned monitor_count(const struct mon_array *a, const char *state)
{
	unsigned n = 0;
	for (unsigned i = 0; i < a->nmembers; i++)
		n += strcmp(a->members[i].state, state) == 0;
	return n;
}

struct mon_array *monitor_find(struct monitor *m, const char *control)
{
	for (unsigned i = 0; i < m->narrays; i++)
		if (strcmp(m->arrays[i].control, control) == 0)
			return &m->arrays[i];
	return NULL;
}

void monitor_drop(struct monitor *m, struct mon_array *a)
{
	unsigned i = (unsigned)(a - m->arrays);
	memmove(&m->arrays[i], &m->arrays[i + 1], (m->narrays - i - 1) * sizeof(*a));
	m->narrays--;
}

/* Its ARRAY line: name= as written in the superblock, or without mdadm's "host:". */
static const struct config_array *find_conf(const struct monitor *m, const struct mon_array *a)
{
	const char *colon = strchr(a->name, ':');
	const struct config_array *c = config_find_array(&m->cfg, a->uuid, a->name);
	return c || !colon ? c : config_find_array(&m->cfg, a->uuid, colon + 1);
}

bool monitor_names(const struct mon_array *a, const char *arg)
{
	const char *colon = strchr(a->name, ':');
	return !strcmp(arg, a->export_name) || !strcmp(arg, a->name) ||
	       (colon && !strcmp(arg, colon + 1)) ||
	       (a->conf && a->conf->devname && !strcmp(arg, a->conf->devname));
}

/* Is a among the ARRAY arguments (all are when none was given)? */
static bool wanted(const struct monitor *m, const struct mon_array *a)
{
	if (!m->nnames)
		return true;
	for (unsigned i = 0; i < m->nnames; i++)
		if (monitor_names(a, m->names[i]))
			return true;
	return false;
}

/* What mdadm reports of an array it sees for the first time. */
static void first_seen(struct monitor *m, struct mon_array *a, bool initial)
{
	if (!initial)
		monitor_report(m, "NewArray", a->export_name, NULL, a->control);
	if (m->test)
		monitor_report(m, "TestMessage", a->export_name, NULL, a->control);
	if (a->degraded)
		monitor_report(m, "DegradedArray", a->export_name, NULL, a->control);
	/* a RAID 50/60: its RAID 0 is whole while an inner array is degraded */
	for (unsigned i = 0; i < a->ninner; i++)
		if (a->inner[i].degraded)
			monitor_report(m, "DegradedArray", a->inner[i].name, NULL, a->control);
	if (a->conf && a->conf->spares >= 0 &&
	    monitor_count(a, "spare") < (unsigned)a->conf->spares)
		monitor_report(m, "SparesMissing", a->export_name, NULL, a->control);
}

struct scan_ctx {
	struct monitor *m;
	bool initial;
};

/* The server's registry entry is removed when this says it is gone. */
static bool gone(int rc)
{
	return rc == -ECONNREFUSED || rc == -ENOENT;
}

static int scan_one(const char *control, void *arg)
{
	struct scan_ctx *sc = arg;
	struct monitor *m = sc->m;
	struct mon_array *known = monitor_find(m, control);
	if (known) {
		int rc = monitor_refresh(m, known);
		/* only a server that is gone is gone: one that is busy, slow or
		   says something strange keeps its array and what was known */
		known->seen = !gone(rc);
		return gone(rc) ? rc : 0;
	}
	struct mon_array *a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	int rc = monitor_query(m, control, a);
	if (rc == 0 && (a->conf = find_conf(m, a), wanted(m, a))) {
		if (m->narrays == m->cap) {
			unsigned cap = m->cap ? 2 * m->cap : 8;
			struct mon_array *n = realloc(m->arrays, cap * sizeof(*n));
			if (!n) {
				free(a);
				return -ENOMEM;
			}
			m->arrays = n;
			m->cap = cap;
		}
		a->seen = true;
		m->arrays[m->narrays++] = *a;
		first_seen(m, &m->arrays[m->narrays - 1], sc->initial);
	}
	free(a);
	return gone(rc) ? rc : 0;
}

void monitor_scan(struct monitor *m, bool initial)
{
	struct scan_ctx sc = { m, initial };
	char err[600];

	for (unsigned i = 0; i < m->narrays; i++)
		m->arrays[i].seen = false;
	if (ctl_for_each(scan_one, &sc, err, sizeof(err)) < 0) {
		monitor_log(m, LOG_ERR, "%s", err);
		return;         /* nothing is known to be gone */
	}
	for (unsigned i = 0; i < m->narrays;) {
		struct mon_array *a = &m->arrays[i];
		if (a->seen) {
			i++;
			continue;
		}
		monitor_report(m, "DeviceDisappeared", a->export_name, NULL, NULL);
		monitor_drop(m, a);
	}
}

/* ---- spare groups ---- */

static int call(struct monitor *m, const char *control, const char *verb, const char *path,
		bool force)
{
	const char *fields[] = { verb, path, "force" };
	char msg[512];
	FILE *out = fopen("/dev/null", "w");
	int rc = ctl_call(control, fields, force ? 3 : 2, out, msg, sizeof(msg));
	if (out)
		fclose(out);
	if (rc)
		monitor_log(m, LOG_ERR, "spare group: %s %s: %s", verb, path,
			    rc < 0 ? strerror(-rc) : msg);
	return rc;
}

/* Did moving the spare at path to to fail before (too small, say)? */
static bool tried(const struct monitor *m, const char *path, const char *to)
{
	for (unsigned i = 0; i < m->nfailed_moves; i++)
		if (!strcmp(m->failed_moves[i].path, path) && !strcmp(m->failed_moves[i].to, to))
			return true;
	return false;
}

static void remember_failed(struct monitor *m, const char *path, const char *to)
{
	unsigned i = m->nfailed_moves < MONITOR_FAILED_MOVES_MAX ? m->nfailed_moves++
		     : (unsigned)(m->failed_moves_next++ % MONITOR_FAILED_MOVES_MAX);
	snprintf(m->failed_moves[i].path, sizeof(m->failed_moves[i].path), "%s", path);
	snprintf(m->failed_moves[i].to, sizeof(m->failed_moves[i].to), "%s", to);
}

/* Move a spare of from (in the same group) to to; true when it moved. */
static bool move_spare(struct monitor *m, struct mon_array *to, struct mon_array *from)
{
	/* as it is now: another monitor, or a person, may have used it */
	if (monitor_refresh(m, from))
		return false;
	const struct mon_member *sp = NULL;
	for (unsigned i = 0; i < from->nmembers && !sp; i++)
		if (!strcmp(from->members[i].state, "spare") &&
		    !tried(m, from->members[i].path, to->control))
			sp = &from->members[i];
	char path[sizeof(sp->path)];
	if (!sp || from->degraded)
		return false;
	snprintf(path, sizeof(path), "%s", sp->path);
	if (call(m, from->control, "remove", path, false))
		return false;
	/* its superblock names the other array: overwritten, as mdadm does */
	if (call(m, to->control, "add", path, true)) {
		remember_failed(m, path, to->control);
		if (call(m, from->control, "add", path, true) == 0)
			monitor_log(m, LOG_ERR, "spare group: %s went back to %s", path,
				    from->export_name);
		else
			monitor_log(m, LOG_CRIT, "spare group: %s was removed from %s and is in no "
				    "array now; give it back with: uraid add --force %s %s", path,
				    from->export_name, from->export_name, path);
		monitor_refresh(m, from);
		return false;
	}
	monitor_log(m, LOG_INFO, "spare group %s: %s moved from %s to %s",
		    to->conf->spare_group, path, from->export_name, to->export_name);
	monitor_report(m, "MoveSpare", to->export_name, from->export_name, to->control);
	monitor_refresh(m, from);
	monitor_refresh(m, to);
	return true;
}

/* Held while spares are moved, so that two monitors do not both move one:
 * a descriptor, or -1 (no lock: nothing is moved). */
static int lock_moves(struct monitor *m)
{
	char dir[600], err[700], path[700];
	int dfd = monitor_dir_open(true, dir, sizeof(dir), err, sizeof(err));
	if (dfd < 0) {
		monitor_log(m, LOG_ERR, "spare group: %s", err);
		return -1;
	}
	int fd = openat(dfd, "spare-groups.lock", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	close(dfd);
	snprintf(path, sizeof(path), "%s/spare-groups.lock", dir);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		monitor_log(m, LOG_ERR, "spare group: %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

void monitor_spare_groups(struct monitor *m)
{
	bool any = false;
	for (unsigned i = 0; i < m->narrays && !any; i++)
		any = m->arrays[i].conf && m->arrays[i].conf->spare_group;
	if (!any)
		return;
	int lock = lock_moves(m);
	if (lock < 0)
		return;
	for (unsigned i = 0; i < m->narrays; i++) {
		struct mon_array *to = &m->arrays[i];
		/* degraded, with no spare of its own and nothing being rebuilt */
		if (!to->conf || !to->conf->spare_group || !to->degraded ||
		    monitor_count(to, "spare") || monitor_count(to, "rebuilding") ||
		    monitor_count(to, "replacing"))
			continue;
		for (unsigned j = 0; j < m->narrays; j++) {
			struct mon_array *from = &m->arrays[j];
			if (j == i || !from->conf || !from->conf->spare_group ||
			    strcmp(from->conf->spare_group, to->conf->spare_group) != 0 ||
			    from->degraded)
				continue;
			if (move_spare(m, to, from))
				break;
		}
	}
	close(lock);            /* the lock goes with it */
}
