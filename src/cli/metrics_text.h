/* SPDX-License-Identifier: MIT */
/*
 * One served array's metrics in Prometheus' text format (version 0.0.4):
 * metrics_text.c writes them from the engine's and the NBD server's
 * counters; the families are listed in docs/uraid.8 (METRICS).
 */
#ifndef URAID_CLI_METRICS_TEXT_H
#define URAID_CLI_METRICS_TEXT_H

#include <stddef.h>
#include <stdio.h>

struct uraid_array;
struct nbd_server;

struct metrics_source {
	struct uraid_array *array;
	const char *export_name;        /* the label array="..." */
	struct nbd_server *server;      /* NULL: no NBD families */
};

/* Every family of the array, each with HELP and TYPE; 0 or -ENOMEM. */
int metrics_write(FILE *out, const struct metrics_source *src);

/*
 * uraid serve's page, for --metrics and the control verb `metrics`, both
 * on serve's main thread: rendered at most once a METRICS_PAGE_CACHE_MS
 * (each rendering takes the array's metadata lock, as uraid status does,
 * and may wait behind a superblock write; a scraper polling fast gets the
 * same page again instead). *page stays the serve_state's. 0 or -ENOMEM.
 */
#define METRICS_PAGE_CACHE_MS 1000
struct serve_state;
int metrics_serve_page(struct serve_state *st, const char **page, size_t *len);

/* The same as a metrics_body_fn (arg: the serve_state). */
int metrics_serve_body(void *serve_state, FILE *out);

#endif
