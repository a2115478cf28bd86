/* SPDX-License-Identifier: MIT */
/*
 * Finding arrays by their superblocks among candidate devices (scan.c):
 * `uraid examine --scan`, `uraid detail --scan` (scan_cmds.c) and
 * `uraid serve --scan/--uuid/--array` (serve_scan.c). Candidates are only
 * read, never written; each superblock is validated (format/) before any of
 * its numbers is used, and what cannot be read is skipped.
 */
#ifndef URAID_CLI_SCAN_H
#define URAID_CLI_SCAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ops/config.h"

/* One device whose superblock belongs to a found array. */
struct scan_member {
	char *path;
	uint16_t role;                  /* its own superblock's role (URAID_ROLE_*) */
	uint32_t dev_number;            /* one member per device number and array */
	uint64_t events;
};

struct scan_array {
	uint8_t uuid[16];
	char name[33];                  /* the superblock's set_name */
	int minor;                      /* metadata 1.minor */
	int level;
	unsigned raid_disks;
	uint64_t events;                /* the freshest member's */
	unsigned spares;                /* members whose own role is spare */
	struct scan_member *members;
	unsigned nmembers;
};

struct scan_result {
	struct scan_array *arrays;
	unsigned narrays;
	unsigned candidates;            /* paths looked at */
	unsigned unreadable;            /* could not be opened or read */
};

/*
 * Read every candidate: the globs when nglobs > 0 (config_for_each_glob),
 * else cfg's DEVICE lines (cfg NULL: /proc/partitions). verbose: one line on
 * stderr, prefixed "uraid CMD: ", per candidate skipped and why. Returns 0
 * (out filled, arrays in the order first seen) or -errno with a message
 * printed.
 */
int scan_devices(const char *cmd, const struct uraid_config *cfg, char *const *globs,
		 unsigned nglobs, bool verbose, struct scan_result *out);
void scan_result_free(struct scan_result *r);

/* The name uraid uses for an array by default: set_name without mdadm's
 * "homehost:" (the export name, /dev/md/NAME of the ARRAY line). */
const char *scan_short_name(const char *set_name);
/* Is the name safe to print in an ARRAY line (no white space, quotes or
 * control characters)? Other names are left out of the line. */
bool scan_name_printable(const char *name);

/*
 * The configuration file: path given (NULL: the default, which may be
 * missing). 0 with cfg loaded (empty when the default file is missing), or
 * a usage/failure exit status with the message printed.
 */
int scan_load_config(const char *cmd, const char *path, struct uraid_config *cfg);

/* argv holds --scan (or -s before any device): the subcommand's scan form. */
bool scan_requested(int argc, char **argv);
int cmd_examine_scan(int argc, char **argv);
int cmd_detail_scan(int argc, char **argv);

#endif
