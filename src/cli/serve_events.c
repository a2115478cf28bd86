// SPDX-License-Identifier: MIT
/*
 * Events for `uraid monitor`, derived where the array lives (serve_events.h).
 *
 * The engine's callback only bumps an eventfd (it may run under the
 * array's locks, on the metadata worker or the control thread, never
 * waiting). serve's main thread reads the eventfd, takes the array's status
 * and compares it with the snapshot it kept, member by member (by path) and
 * job by job (by number, so that a job that started and ended between two
 * looks is still reported). Of what one look finds, the order is:
 * failures, the end of a job, spares that came in sync, a job that
 * started, progress. mdadm reports an array's events first (DegradedArray,
 * SparesMissing, RebuildStarted, RebuildNN, RebuildFinished) and then each
 * device's (Fail, FailSpare, SpareActive); here a failure and the job that
 * follows it are nearly always found by different looks, so the order
 * seen is mdadm's; RebuildFinished before SpareActive is kept.
 *
 * A RAID 50/60 (st->nested): its inner arrays are looked at too, each as
 * the array of its own events, named EXPORT/INNER (the inner array's md
 * name, as metrics name it): a failed partition is a Fail of the inner
 * array that holds it, its rebuild that array's RebuildStarted and
 * RebuildFinished, as mdadm --monitor reports the md arrays under a RAID 0.
 * The state verb lists them ("inner" lines) for the monitor's first look
 * (DegradedArray) and for the jobs of events it missed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <uraid/engine.h>
#include <uraid/nested.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/monitor_proto.h"
#include "cli/serve.h"
#include "cli/serve_events.h"
#include "cli/status_print.h"
#include "ctl/ctl.h"

/* How often a running job's progress is looked at (Rebuild20..80). */
#define PROGRESS_CHECK_MS 1000

/* The arrays looked at: the served one (0), a RAID 50/60's inner ones (1 + g). */
#define EV_ARRAYS (1 + URAID_NESTED_MAX_GROUPS)

struct ev_member {
	char path[256];
	unsigned arr;                   /* which array's */
	enum uraid_member_state state;
	bool replacing;
};

struct ev_job {
	uint64_t job;                   /* uraid_sync_status.job */
	bool running;
	unsigned step;                  /* progress in fifths: 0..4 (Rebuild20 = 1) */
};

struct ev_snapshot {
	unsigned nmembers;              /* of every array, each tagged (arr) */
	struct ev_member m[URAID_MAX_MEMBERS];
	unsigned narrays;
	struct ev_job j[EV_ARRAYS];
};

struct serve_events {
	int efd;
	bool started;
	struct ev_snapshot last;
	struct uraid_array_status status;       /* scratch, too large for the stack */
};

/* The engine's callback: any thread, any lock held; never blocks. */
static void changed(void *opaque)
{
	struct serve_events *ev = opaque;
	uint64_t one = 1;
	/* EAGAIN: the counter is full, the loop will look anyway */
	if (write(ev->efd, &one, sizeof(one)) < 0) {
	}
}

struct serve_events *serve_events_create(struct uraid_engine_opts *eo)
{
	struct serve_events *ev = calloc(1, sizeof(*ev));
	if (!ev)
		return NULL;
	ev->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ev->efd < 0) {
		free(ev);
		return NULL;
	}
	eo->changed = changed;
	eo->changed_opaque = ev;
	return ev;
}

int serve_events_fd(const struct serve_events *ev)
{
	return ev ? ev->efd : -1;
}

static bool any_running(const struct ev_snapshot *s)
{
	for (unsigned i = 0; i < s->narrays; i++)
		if (s->j[i].running)
			return true;
	return false;
}

int serve_events_timeout_ms(const struct serve_events *ev)
{
	return ev && ev->started && any_running(&ev->last) ? PROGRESS_CHECK_MS : -1;
}

static unsigned ev_narrays(const struct serve_state *st)
{
	return 1 + (st->nested ? st->nested->groups : 0);
}

static struct uraid_array *ev_array(const struct serve_state *st, unsigned arr)
{
	return arr ? st->nested->inner[arr - 1] : st->array;
}

/* How events name array arr: the export, or EXPORT/INNER. */
static const char *ev_name(const struct serve_state *st, unsigned arr, char *buf, size_t len)
{
	if (!arr)
		return st->export_name;
	/* cut short like any name too long for the datagram (send_event) */
	if (snprintf(buf, len, "%s/%s", st->export_name, st->nested->inner_name[arr - 1]) >=
	    (int)len)
		buf[len - 1] = 0;
	return buf;
}

static unsigned progress_step(const struct uraid_sync_status *ss)
{
	if (!ss->running || !ss->total_bytes)
		return 0;
	uint64_t step = ss->done_bytes / (ss->total_bytes / 5 ? ss->total_bytes / 5 : 1);
	return step > 4 ? 4 : (unsigned)step;
}

static int take_snapshot(struct serve_events *ev, struct serve_state *st, struct ev_snapshot *s)
{
	memset(s, 0, sizeof(*s));
	s->narrays = ev_narrays(st);
	for (unsigned arr = 0; arr < s->narrays; arr++) {
		struct uraid_array *a = ev_array(st, arr);
		struct uraid_sync_status ss;
		if (uraid_array_status(a, &ev->status) || uraid_array_sync_status(a, &ss))
			return -1;
		for (unsigned i = 0; i < ev->status.nmembers && s->nmembers < URAID_MAX_MEMBERS;
		     i++) {
			const struct uraid_member_status *m = &ev->status.members[i];
			if (!*m->path)
				continue;       /* a missing slot */
			struct ev_member *e = &s->m[s->nmembers++];
			snprintf(e->path, sizeof(e->path), "%s", m->path);
			e->arr = arr;
			e->state = m->state;
			e->replacing = m->replacing;
		}
		s->j[arr].job = ss.job;
		s->j[arr].running = ss.running;
		s->j[arr].step = progress_step(&ss);
	}
	return 0;
}

static void send_event(struct serve_state *st, unsigned arr, const char *event,
		       const char *member)
{
	struct monitor_event me = { .event = event };
	char msg[MONITOR_MSG_MAX + 1], name[sizeof(me.array)];
	const char *array = ev_name(st, arr, name, sizeof(name));

	snprintf(me.array, sizeof(me.array), "%s", array);
	snprintf(me.member, sizeof(me.member), "%s", member ? member : "");
	snprintf(me.control, sizeof(me.control), "%s", st->control_path);
	int n = monitor_event_format(&me, msg, sizeof(msg));
	if (n > 0)
		monitor_broadcast(msg, (size_t)n);
	else    /* names too long for a datagram: the monitors' next look finds it */
		fprintf(stderr, "uraid serve: the %s event of %s%s%s could not be told to the "
			"monitors: %s\n", event, array, member ? ", member " : "",
			member ? member : "", strerror(-n));
}

static const struct ev_member *find(const struct ev_snapshot *s, unsigned arr, const char *path)
{
	for (unsigned i = 0; i < s->nmembers; i++)
		if (s->m[i].arr == arr && strcmp(s->m[i].path, path) == 0)
			return &s->m[i];
	return NULL;
}

static bool was_spare(const struct ev_member *m)
{
	return m->state == URAID_MEMBER_SPARE || m->state == URAID_MEMBER_REBUILDING ||
	       m->replacing;
}

/* The events of array arr, from old to now. */
static void compare_one(struct serve_state *st, unsigned arr, const struct ev_snapshot *old,
			struct ev_snapshot *now)
{
	static const char *const rebuild_step[] = { NULL, "Rebuild20", "Rebuild40", "Rebuild60",
						    "Rebuild80" };
	const struct ev_job *oj = &old->j[arr];
	const struct ev_job *nj = &now->j[arr];

	for (unsigned i = 0; i < now->nmembers; i++) {
		if (now->m[i].arr != arr)
			continue;
		const struct ev_member *o = find(old, arr, now->m[i].path);
		if (o && o->state != URAID_MEMBER_FAULTY && now->m[i].state == URAID_MEMBER_FAULTY)
			send_event(st, arr, was_spare(o) ? "FailSpare" : "Fail", now->m[i].path);
	}
	bool new_job = nj->job != oj->job;
	if (oj->running && (new_job || !nj->running))
		send_event(st, arr, "RebuildFinished", NULL);
	for (unsigned i = 0; i < now->nmembers; i++) {
		if (now->m[i].arr != arr)
			continue;
		const struct ev_member *o = find(old, arr, now->m[i].path);
		if (!o || !was_spare(o) || now->m[i].state != URAID_MEMBER_IN_SYNC ||
		    now->m[i].replacing)
			continue;
		/* the engine moves the spare into its slot just before its job
		   counts as ended: kept as it was until then, so that
		   RebuildFinished comes first, as in mdadm */
		if (nj->running && !new_job)
			now->m[i] = *o;
		else
			send_event(st, arr, "SpareActive", now->m[i].path);
	}
	if (new_job && nj->job) {
		/* one that ran and ended between two looks counts too */
		send_event(st, arr, "RebuildStarted", NULL);
		if (!nj->running)
			send_event(st, arr, "RebuildFinished", NULL);
	}
	/* mdadm reports the fifth reached, not each one passed */
	unsigned before = new_job ? 0 : oj->step;
	if (nj->running && nj->step > before)
		send_event(st, arr, rebuild_step[nj->step], NULL);
}

static void compare(struct serve_state *st, const struct ev_snapshot *old,
		    struct ev_snapshot *now)
{
	/* the same arrays in both (a served array's inner arrays do not change) */
	for (unsigned arr = 0; arr < now->narrays && arr < old->narrays; arr++)
		compare_one(st, arr, old, now);
}

void serve_events_start(struct serve_events *ev, struct serve_state *st)
{
	if (!ev)
		return;
	if (take_snapshot(ev, st, &ev->last) == 0)
		ev->started = true;
	send_event(st, 0, "NewArray", NULL);
}

bool serve_events_work(struct serve_events *ev, struct serve_state *st)
{
	uint64_t count;
	if (!ev || !ev->started)
		return false;
	bool told = read(ev->efd, &count, sizeof(count)) == sizeof(count);
	if (!told && !any_running(&ev->last))
		return false;   /* neither a change nor a job's progress to look at */
	struct ev_snapshot *now = malloc(sizeof(*now));
	if (!now)
		return told;
	if (take_snapshot(ev, st, now) == 0) {
		compare(st, &ev->last, now);
		ev->last = *now;
	}
	free(now);
	return told;
}

void serve_events_poke(struct serve_events *ev)
{
	if (ev)
		changed(ev);
}

void serve_events_stop(struct serve_events *ev, struct serve_state *st)
{
	if (ev)
		send_event(st, 0, "DeviceDisappeared", NULL);
}

void serve_events_destroy(struct serve_events *ev)
{
	if (!ev)
		return;
	close(ev->efd);
	free(ev);
}

void serve_events_verb_state(void *arg, const struct ctl_request *rq, FILE *out)
{
	struct serve_state *st = arg;
	struct uraid_array_status *as = malloc(sizeof(*as));
	struct uraid_sync_status ss;
	char uuid[40];

	if (!as || uraid_array_status(st->array, as) || uraid_array_sync_status(st->array, &ss)) {
		free(as);
		ctl_reply(out, CLI_EXIT_FAIL, "cannot read the array's state", NULL, 0);
		return;
	}
	/* escaped (monitor_proto.h): a name with a tab or newline is still told */
	char *e1 = malloc(2048), *e2 = malloc(2048);
	if (!e1 || !e2 || monitor_field_escape(st->export_name, e1, 2048) ||
	    monitor_field_escape(as->name, e2, 2048)) {
		free(e1);
		free(e2);
		free(as);
		ctl_reply(out, CLI_EXIT_FAIL, "cannot tell the array's names", NULL, 0);
		return;
	}
	ctl_reply(out, 0, NULL, NULL, 0);
	fprintf(out, "array\t%s\t%s\t%s\t%u\t%u\t%s\t%d\n", e1,
		uraid_uuid_text(as->uuid, uuid, sizeof(uuid)), e2, as->raid_disks,
		as->degraded, uraid_sync_kind_name(ss.kind), ss.running ? 1 : 0);
	for (unsigned i = 0; i < as->nmembers; i++) {
		const struct uraid_member_status *m = &as->members[i];
		if (*m->path && monitor_field_escape(m->path, e1, 2048) == 0)
			fprintf(out, "member\t%s\t%s\t%d\n", e1,
				m->replacing ? "replacing" : cli_member_state_name(m->state), m->slot);
	}
	/* a RAID 50/60's inner arrays: inner NAME RAID_DISKS DEGRADED JOB RUNNING */
	for (unsigned arr = 1; arr < ev_narrays(st); arr++) {
		char name[512];
		if (uraid_array_status(ev_array(st, arr), as) ||
		    uraid_array_sync_status(ev_array(st, arr), &ss) ||
		    monitor_field_escape(ev_name(st, arr, name, sizeof(name)), e1, 2048))
			continue;
		fprintf(out, "inner\t%s\t%u\t%u\t%s\t%d\n", e1, as->raid_disks, as->degraded,
			uraid_sync_kind_name(ss.kind), ss.running ? 1 : 0);
	}
	free(e1);
	free(e2);
	free(as);
}
