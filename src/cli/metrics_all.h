/* SPDX-License-Identifier: MIT */
/*
 * The metrics of every array served on this machine, for `uraid monitor
 * --metrics=HOST:PORT`: each server listed in the registry (ctl/ctl.h,
 * ctl_for_each) is asked for its control verb `metrics`, and the answers
 * are merged into one text where each family's HELP and TYPE appear once,
 * followed by the samples of every array.
 *
 * Serving them:
 *     int fd = metrics_http_listen("127.0.0.1:9100", err, sizeof(err));
 *     metrics_http_create(fd, metrics_all_body, NULL, &h);
 * then poll metrics_http_fd(h) as metrics_http.h says.
 */
#ifndef URAID_CLI_METRICS_ALL_H
#define URAID_CLI_METRICS_ALL_H

#include <stddef.h>
#include <stdio.h>

/* Merge texts[0..n) (each one server's `metrics` answer) into out. 0 or -ENOMEM. */
int metrics_merge(FILE *out, const char *const *texts, unsigned n);

/* Ask every registered server and write the merged text to out, ending
 * with uraid_served_arrays (how many answered). Each server has 1 s and
 * all of them 2 s to answer (at most 4 MiB each); a busy server's series
 * are missing from that scrape. Returns how many answered, or -errno when
 * the run directory cannot be used (the reason in err). */
int metrics_all_write(FILE *out, char *err, size_t errlen);

/* metrics_all_write as a metrics_body_fn (arg unused). */
int metrics_all_body(void *arg, FILE *out);

#endif
