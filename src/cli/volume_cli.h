/* SPDX-License-Identifier: MIT */
/* What `uraid volume create|delete` (volume.c) and `volume grow` (volume_grow.c) share. */
#ifndef URAID_CLI_VOLUME_CLI_H
#define URAID_CLI_VOLUME_CLI_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/pool_cli.h"

/* The options every pool and volume command takes, last in their getopt
 * tables (getopt values POOL_OPT_*, and 'h'). */
enum { POOL_OPT_JSON = 256, POOL_OPT_CONFIG };
#define POOL_COMMON_LONGOPTS \
	{ "config", required_argument, NULL, POOL_OPT_CONFIG }, \
	{ "json", no_argument, NULL, POOL_OPT_JSON }, \
	{ "help", no_argument, NULL, 'h' }, \
	{ 0 }

struct volume_opts {
	const char *pool, *name, *config;
	bool have_res, max, json;
	enum pool_resiliency res;
	int level;
	uint64_t size_bytes;
	unsigned drives;
	unsigned groups;            /* RAID 50/60: inner arrays (0: one array) */
	bool nested;                /* --level=50|60 */
	uint32_t chunk_kib;
	int first;                  /* first DEVICE/GLOB operand */
};

/*
 * The GPT area (first 34 sectors) of every drive of the pool locked, in
 * the pool's drive order, the fds kept in fds[POOL_MAX_DRIVES] (-1 unused);
 * an exit status after a message, or 0.
 */
int volume_lock_tables(const char *cmd, const struct pool *p, int *fds);
void volume_unlock_tables(int *fds);
/* Write the tables of the drives `which` (indexes into p->drive) through
 * their locked fds; an exit status after a message, or 0. */
int volume_write_tables(const char *cmd, struct pool *p, const int *fds, const unsigned *which,
			unsigned n);

/* uraid volume grow, with the pool read again under the table locks. */
int volume_grow(const struct volume_opts *o, struct pool *p, int *fds);

#endif
