/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the subcommands: sizes, UUIDs, times, JSON output. */
#ifndef URAID_CLI_UTIL_H
#define URAID_CLI_UTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Parse "512", "512K", "4M", "1G", "2T" (binary units) into bytes; a plain
 * number is in default_unit bytes (mdadm: KiB for --chunk and --size).
 * Returns 0 or -EINVAL.
 */
int cli_parse_size(const char *s, uint64_t default_unit, uint64_t *bytes);
/* A read-ahead window (--read-ahead): "off" or 0 (URAID_READ_AHEAD_OFF),
 * "default" (URAID_READ_AHEAD_DEFAULT), or a size of 8K..64M (a plain number is bytes), rounded
 * down to 4 KiB. 0 or -EINVAL. */
int cli_parse_read_ahead(const char *s, uint64_t *bytes);

/* "190.00 MiB": binary units, two decimals (bytes below 1 KiB as "512 B"). */
const char *cli_bytes(uint64_t bytes, char *buf, size_t len);

/* mdadm's " (62.00 MiB 65.01 MB)" suffix; empty below 5000 KiB. */
const char *cli_mdadm_human(uint64_t bytes, char *buf, size_t len);

/* ctime()-style text of an md time field, without the newline. */
const char *cli_time(uint64_t md_time, char *buf, size_t len);

/*
 * A wrong option, after getopt_long returned '?' or ':' (with opterr 0):
 * one line naming it and pointing to `uraid CMD --help`. Returns
 * CLI_EXIT_USAGE.
 */
int cli_bad_option(const char *cmd, char **argv);

/*
 * Options of the subcommands that take only --json and --help before their
 * device list: sets *json and *first (index of the first device). Returns -1
 * to go on, or the exit status (help printed, or a usage error reported).
 */
int cli_json_and_devices(int argc, char **argv, const char *cmd, void (*usage)(FILE *f),
			 bool *json, int *first);
/* The same with --test too (test NULL: not offered). */
int cli_json_test_and_devices(int argc, char **argv, const char *cmd, void (*usage)(FILE *f),
			      bool *json, bool *test, int *first);

/*
 * A stripe cache size as serve and tune take it: a bare number is stripe
 * heads (md's stripe_cache_size), one with a suffix (K, M, G) the memory,
 * of which a head takes 4 KiB on each of `members` (0: check the syntax
 * only). 0, or -EINVAL with one line in err.
 */
int cli_parse_stripe_cache(const char *text, unsigned members, unsigned *heads, char *err,
			   size_t errlen);
/*
 * The same for a served array (its member count for a size in memory),
 * also refusing a size that needs more than uraid_stripe_cache_memory_limit()
 * on a level that uses it. 0, -EINVAL / -E2BIG with one line in err, -ENOMEM.
 */
struct uraid_array;
int cli_array_stripe_cache(struct uraid_array *a, const char *text, unsigned *heads, char *err,
			   size_t errlen);

/* The "version" key of every JSON document uraid prints (docs/json.md):
 * raised when a key changes meaning or goes away, not when one is added. */
#define CLI_JSON_VERSION 1

/* A minimal streaming JSON writer, pretty-printed. */
struct json {
	FILE *f;
	int depth;
	bool need_comma[32];
};
/* s as a JSON string, quoted and escaped (control characters as \\u00XX). */
void cli_json_escape(FILE *f, const char *s);
void json_begin(struct json *j, FILE *f);
void json_obj_open(struct json *j, const char *key);    /* key NULL inside arrays */
void json_obj_close(struct json *j);
void json_arr_open(struct json *j, const char *key);
void json_arr_close(struct json *j);
void json_str(struct json *j, const char *key, const char *val);
void json_u64(struct json *j, const char *key, uint64_t val);
void json_i64(struct json *j, const char *key, int64_t val);
void json_bool(struct json *j, const char *key, bool val);
void json_null(struct json *j, const char *key);
void json_end(struct json *j);

#endif
