/* SPDX-License-Identifier: MIT */
/*
 * The progress line of `uraid check|repair|replace --wait`: on a terminal
 * (standard error), one line redrawn in place with "\r" as the job goes:
 * its kind, percent, MiB done, rate and time left. Not a terminal: nothing,
 * so logs and scripts see only the result.
 */
#ifndef URAID_CLI_PROGRESS_H
#define URAID_CLI_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/rate.h"

struct progress {
	FILE *f;                        /* NULL: not a terminal, nothing is drawn */
	bool drawn;                     /* a line is up and must be cleared */
	struct rate_window rate;
};

/* One job's state as a poll saw it. */
struct progress_sample {
	bool running;
	int kind;                       /* enum uraid_sync_kind */
	uint64_t job, done, total;
	bool of_array;                  /* done and total of the array, not per member */
};

void progress_begin(struct progress *p, FILE *f);
/* Redraw the line for a running job (a job not running leaves it as it is). */
void progress_show(struct progress *p, const struct progress_sample *s);
/* Clear the line, before the result or a message is written. */
void progress_end(struct progress *p);

/* Standard output or error (fd) is a terminal that knows escape codes. */
bool progress_terminal(int fd);

/*
 * A job's progress as text, the same in `uraid status`, its --watch view and
 * the --wait line: "check [=======>............]  37.5% 9.8 MiB/s, ETA 0:02
 * (11/30 MiB per member)" (the bar only with bar; "rate not measured yet"
 * without rate_ok). Percent, rate and ETA come first: cut to a narrow
 * terminal, the line loses the counts.
 */
void progress_format(char *buf, size_t len, const char *kind, uint64_t done, uint64_t total,
		     bool of_array, bool bar, bool rate_ok, double rate);

/* The --wait line's text, without "\r" (for tests). */
void progress_text(char *buf, size_t len, const struct progress_sample *s, bool rate_ok,
		   double rate);

#endif
