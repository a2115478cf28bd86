/* SPDX-License-Identifier: MIT */
/*
 * uraid serve's side of `uraid monitor` (serve_events.c): the engine's
 * change callback wakes serve's main loop through an eventfd; the loop then
 * compares the array's state with the last one it saw, derives md's events
 * (Fail, FailSpare, SpareActive, RebuildStarted, Rebuild20..80,
 * RebuildFinished) and sends them to every monitor (monitor_proto.h). While
 * a background job runs, its progress is looked at on a coarse timer.
 * NewArray goes out when the server starts, DeviceDisappeared as it stops.
 */
#ifndef URAID_CLI_SERVE_EVENTS_H
#define URAID_CLI_SERVE_EVENTS_H

#include <stdbool.h>
#include <stdio.h>

struct serve_events;
struct serve_state;
struct uraid_engine_opts;
struct ctl_request;

/* The eventfd and the callback put into eo (before the engine is created);
 * NULL when out of resources (serve then tells no monitor, and says so). */
struct serve_events *serve_events_create(struct uraid_engine_opts *eo);
/* The first look at the array, and NewArray to the monitors. */
void serve_events_start(struct serve_events *ev, struct serve_state *st);
/* For the main loop's poll: the eventfd (POLLIN), and the timeout to
 * pass (-1: none; while a job runs, the progress timer). */
int serve_events_fd(const struct serve_events *ev);
int serve_events_timeout_ms(const struct serve_events *ev);
/* After poll: what changed, sent as events; never waits. True when its
 * eventfd told of a change (which, for the first volume's, may be any
 * array's of the engine: the others are poked then). */
bool serve_events_work(struct serve_events *ev, struct serve_state *st);
/* DeviceDisappeared to the monitors, then free (NULL is fine). Call after
 * the engine is gone: its callback must not run any more. */
/* Look at the array on the next serve_events_work, as after a change (the
 * engine tells one eventfd, the first volume's, of all its arrays'). */
void serve_events_poke(struct serve_events *ev);
void serve_events_stop(struct serve_events *ev, struct serve_state *st);
void serve_events_destroy(struct serve_events *ev);
/* The control verb MONITOR_STATE_VERB (a ctl_handler_fn; arg the serve_state). */
void serve_events_verb_state(void *arg, const struct ctl_request *rq, FILE *out);

#endif
