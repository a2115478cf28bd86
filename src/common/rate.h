/* SPDX-License-Identifier: MIT */
/*
 * Rates and times left from samples of a counter, for the live views
 * (`uraid status --watch`, `uraid check --wait` on a terminal): pure
 * functions of their arguments, so the arithmetic is tested on its own.
 */
#ifndef URAID_COMMON_RATE_H
#define URAID_COMMON_RATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The counter's rate per second between two samples dt_ns apart, in
 * *per_s. False, *per_s untouched, when it cannot be told: no time passed,
 * or the counter went back (the server restarted, a new job began).
 */
bool rate_per_s(uint64_t prev, uint64_t cur, uint64_t dt_ns, double *per_s);

/* Whole seconds until done reaches total at per_s, rounded up (never 0
 * while work is left); 0 when done; -1 when unknown (no rate yet). */
int64_t rate_eta_s(uint64_t done, uint64_t total, double per_s);

/* "0:05", "12:34", "1:02:03", "3d 04:05:06"; "-:--" for -1. Returns buf. */
const char *rate_eta_text(int64_t s, char *buf, size_t len);

/*
 * A job's progress over its last few samples: the rate is measured from the
 * oldest kept sample to the newest, so one late poll does not swing it. A
 * sample of another job (key), or one whose value went back, starts over.
 */
#define RATE_WINDOW_SAMPLES 16
struct rate_window {
	uint64_t key;                   /* the job the samples are of */
	unsigned n, next;               /* samples kept; where the next one goes */
	uint64_t t_ns[RATE_WINDOW_SAMPLES], value[RATE_WINDOW_SAMPLES];
};
void rate_window_add(struct rate_window *w, uint64_t key, uint64_t t_ns, uint64_t value);
/* False until two samples of the same job are kept a moment apart. */
bool rate_window_rate(const struct rate_window *w, double *per_s);

#endif
