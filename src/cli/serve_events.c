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
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <uraid/engine.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/monitor_proto.h"
#include "cli/serve.h"
#include "cli/serve_events.h"
#include "cli/status_print.h"
#include "ctl/ctl.h"

/* How often a running job's progress is looked at (Rebuild20..80). */
#define PROGRESS_CHECK_MS 1000

struct ev_member {
	char path[256];
	enum uraid_member_state state;
	bool replacing;
};

struct ev_snapshot {
	unsigned nmembers;
	struct ev_member m[URAID_MAX_MEMBERS];
	uint64_t job;                   /* uraid_sync_status.job */
	bool running;
	unsigned step;                  /* progress in fifths: 0..4 (Rebuild20 = 1) */
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

int serve_events_timeout_ms(const struct serve_events *ev)
{
	return ev && ev->started && ev->last.running ? PROGRESS_CHECK_MS : -1;
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
	struct uraid_sync_status ss;
	if (uraid_array_status(st->array, &ev->status) || uraid_array_sync_status(st->array, &ss))
		return -1;
	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < ev->status.nmembers && s->nmembers < URAID_MAX_MEMBERS; i++) {
		const struct uraid_member_status *m = &ev->status.members[i];
		if (!*m->path)
			continue;       /* a missing slot */
		struct ev_member *e = &s->m[s->nmembers++];
		snprintf(e->path, sizeof(e->path), "%s", m->path);
		e->state = m->state;
		e->replacing = m->replacing;
	}
	s->job = ss.job;
	s->running = ss.running;
	s->step = progress_step(&ss);
	return 0;
}

static void send_event(struct serve_state *st, const char *event, const char *member)
{
	struct monitor_event me = { .event = event };
	char msg[MONITOR_MSG_MAX + 1];

	snprintf(me.array, sizeof(me.array), "%s", st->export_name);
	snprintf(me.member, sizeof(me.member), "%s", member ? member : "");
	snprintf(me.control, sizeof(me.control), "%s", st->control_path);
	int n = monitor_event_format(&me, msg, sizeof(msg));
	if (n > 0)
		monitor_broadcast(msg, (size_t)n);
	else    /* names too long for a datagram: the monitors' next look finds it */
		fprintf(stderr, "uraid serve: the %s event of %s%s%s could not be told to the "
			"monitors: %s\n", event, st->export_name, member ? ", member " : "",
			member ? member : "", strerror(-n));
}

static const struct ev_member *find(const struct ev_snapshot *s, const char *path)
{
	for (unsigned i = 0; i < s->nmembers; i++)
		if (strcmp(s->m[i].path, path) == 0)
			return &s->m[i];
	return NULL;
}

static bool was_spare(const struct ev_member *m)
{
	return m->state == URAID_MEMBER_SPARE || m->state == URAID_MEMBER_REBUILDING ||
	       m->replacing;
}

static void compare(struct serve_state *st, const struct ev_snapshot *old,
		    struct ev_snapshot *now)
{
	static const char *const rebuild_step[] = { NULL, "Rebuild20", "Rebuild40", "Rebuild60",
						    "Rebuild80" };

	for (unsigned i = 0; i < now->nmembers; i++) {
		const struct ev_member *o = find(old, now->m[i].path);
		if (o && o->state != URAID_MEMBER_FAULTY && now->m[i].state == URAID_MEMBER_FAULTY)
			send_event(st, was_spare(o) ? "FailSpare" : "Fail", now->m[i].path);
	}
	bool new_job = now->job != old->job;
	if (old->running && (new_job || !now->running))
		send_event(st, "RebuildFinished", NULL);
	for (unsigned i = 0; i < now->nmembers; i++) {
		const struct ev_member *o = find(old, now->m[i].path);
		if (!o || !was_spare(o) || now->m[i].state != URAID_MEMBER_IN_SYNC ||
		    now->m[i].replacing)
			continue;
		/* the engine moves the spare into its slot just before its job
		   counts as ended: kept as it was until then, so that
		   RebuildFinished comes first, as in mdadm */
		if (now->running && !new_job)
			now->m[i] = *o;
		else
			send_event(st, "SpareActive", now->m[i].path);
	}
	if (new_job && now->job) {
		/* one that ran and ended between two looks counts too */
		send_event(st, "RebuildStarted", NULL);
		if (!now->running)
			send_event(st, "RebuildFinished", NULL);
	}
	/* mdadm reports the fifth reached, not each one passed */
	unsigned before = new_job ? 0 : old->step;
	if (now->running && now->step > before)
		send_event(st, rebuild_step[now->step], NULL);
}

void serve_events_start(struct serve_events *ev, struct serve_state *st)
{
	if (!ev)
		return;
	if (take_snapshot(ev, st, &ev->last) == 0)
		ev->started = true;
	send_event(st, "NewArray", NULL);
}

void serve_events_work(struct serve_events *ev, struct serve_state *st)
{
	uint64_t count;
	if (!ev || !ev->started)
		return;
	if (read(ev->efd, &count, sizeof(count)) < 0 && errno == EAGAIN && !ev->last.running)
		return;         /* neither a change nor a job's progress to look at */
	struct ev_snapshot *now = malloc(sizeof(*now));
	if (!now)
		return;
	if (take_snapshot(ev, st, now) == 0) {
		compare(st, &ev->last, now);
		ev->last = *now;
	}
	free(now);
}

void serve_events_poke(struct serve_events *ev)
{
	if (ev)
		changed(ev);
}

void serve_events_stop(struct serve_events *ev, struct serve_state *st)
{
	if (ev)
		send_event(st, "DeviceDisappeared", NULL);
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
	free(e1);
	free(e2);
	free(as);
}
