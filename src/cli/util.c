// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <getopt.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uraid/engine.h>

#include "cli/cli.h"
#include "cli/util.h"
#include "common/size_parse.h"

#include <uraid/engine.h>

int cli_parse_size(const char *s, uint64_t default_unit, uint64_t *bytes)
{
	return size_parse(s, default_unit, bytes);
}

int cli_parse_read_ahead(const char *s, uint64_t *bytes)
{
	uint64_t v;

	if (strcmp(s, "off") == 0) {
		*bytes = URAID_READ_AHEAD_OFF;
		return 0;
	}
	if (strcmp(s, "default") == 0) {
		*bytes = URAID_READ_AHEAD_DEFAULT;
		return 0;
	}
	if (cli_parse_size(s, 1, &v) || (v && v < (8u << 10)) || v > URAID_READ_AHEAD_MAX)
		return -EINVAL;
	*bytes = v & ~(uint64_t)4095;       /* 0: URAID_READ_AHEAD_OFF */
	return 0;
}

const char *cli_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB", "PiB" };

	if (bytes < 1024) {
		snprintf(buf, len, "%" PRIu64 " B", bytes);
		return buf;
	}
	double v = (double)bytes / 1024;
	uint64_t unit = 1024;
	unsigned u = 0;
	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0]))
		v /= 1024, u++, unit *= 1024;
	if (bytes % unit == 0)
		snprintf(buf, len, "%" PRIu64 " %s", bytes / unit, units[u]);
	else
		snprintf(buf, len, "%.2f %s", v, units[u]);
	return buf;
}

const char *cli_mdadm_human(uint64_t bytes, char *buf, size_t len)
{
	/* mdadm's rendering: rounded hundredths, binary and decimal side by side */
	static const struct { uint64_t limit, bin, dec; const char *b, *d; } units[] = {
		{ 2ull << 30, 1ull << 20, 1000000ull, "MiB", "MB" },
		{ 2ull << 40, 1ull << 30, 1000000000ull, "GiB", "GB" },
		{ UINT64_MAX, 1ull << 40, 1000000000000ull, "TiB", "TB" },
	};

	buf[0] = 0;
	if (bytes < 5000 * 1024ull)
		return buf;
	for (unsigned i = 0; i < 3; i++) {
		if (bytes >= units[i].limit && i < 2)
			continue;
		uint64_t cb = (uint64_t)(((unsigned __int128)bytes * 200 / units[i].bin + 1) / 2);
		uint64_t cd = (bytes / (units[i].dec / 200) + 1) / 2;
		snprintf(buf, len, " (%" PRIu64 ".%02" PRIu64 " %s %" PRIu64 ".%02" PRIu64 " %s)",
			 cb / 100, cb % 100, units[i].b, cd / 100, cd % 100, units[i].d);
		break;
	}
	return buf;
}

const char *cli_time(uint64_t md_time, char *buf, size_t len)
{
	time_t t = (time_t)(md_time & 0xffffffffffull);
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%a %b %e %H:%M:%S %Y", &tm))
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}

/* ---- JSON ---- */

static void json_indent(struct json *j)
{
	for (int i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

void cli_json_escape(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_key(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	if (j->depth > 0)
		fputc('\n', j->f);
	j->need_comma[j->depth] = true;
	json_indent(j);
	if (key) {
		cli_json_escape(j->f, key);
		fputs(": ", j->f);
	}
}

void json_begin(struct json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

static void json_open(struct json *j, const char *key, char c)
{
	json_key(j, key);
	fputc(c, j->f);
	j->depth++;
	j->need_comma[j->depth] = false;
}

static void json_close(struct json *j, char c)
{
	bool had = j->need_comma[j->depth];
	j->depth--;
	if (had) {
		fputc('\n', j->f);
		json_indent(j);
	}
	fputc(c, j->f);
}

void json_obj_open(struct json *j, const char *key) { json_open(j, key, '{'); }
void json_obj_close(struct json *j) { json_close(j, '}'); }
void json_arr_open(struct json *j, const char *key) { json_open(j, key, '['); }
void json_arr_close(struct json *j) { json_close(j, ']'); }

void json_str(struct json *j, const char *key, const char *val)
{
	json_key(j, key);
	cli_json_escape(j->f, val);
}

void json_u64(struct json *j, const char *key, uint64_t val)
{
	json_key(j, key);
	fprintf(j->f, "%" PRIu64, val);
}

void json_i64(struct json *j, const char *key, int64_t val)
{
	json_key(j, key);
	fprintf(j->f, "%" PRId64, val);
}

void json_bool(struct json *j, const char *key, bool val)
{
	json_key(j, key);
	fputs(val ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	json_key(j, key);
	fputs("null", j->f);
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
}

int cli_bad_option(const char *cmd, char **argv)
{
	/* getopt_long has moved optind past the option it did not like (and
	   past its missing value's place); optopt is set for short ones */
	const char *arg = optind > 0 ? argv[optind - 1] : "?";
	if (!strncmp(arg, "--", 2) || !optopt)
		fprintf(stderr, "uraid %s: option '%.*s' is unknown or lacks its value; see "
			"'uraid %s --help'\n", cmd, (int)strcspn(arg, "="), arg, cmd);
	else
		fprintf(stderr, "uraid %s: option -%c is unknown or lacks its value; see 'uraid "
			"%s --help'\n", cmd, optopt, cmd);
	return CLI_EXIT_USAGE;
}

int cli_json_test_and_devices(int argc, char **argv, const char *cmd, void (*usage)(FILE *f),
			      bool *json, bool *test, int *first)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "test", no_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	*json = false;
	if (test)
		*test = false;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, test ? "jth" : "jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			*json = true;
			break;
		case 't':
			if (!test)
				return cli_bad_option(cmd, argv);
			*test = true;
			break;
		case 'h':
			usage(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_bad_option(cmd, argv);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "uraid %s: no devices given; see 'uraid %s --help'\n", cmd, cmd);
		return CLI_EXIT_USAGE;
	}
	*first = optind;
	return -1;
}

int cli_json_and_devices(int argc, char **argv, const char *cmd, void (*usage)(FILE *f),
			 bool *json, int *first)
{
	return cli_json_test_and_devices(argc, argv, cmd, usage, json, NULL, first);
}

int cli_parse_stripe_cache(const char *text, unsigned members, unsigned *heads, char *err,
			   size_t errlen)
{
	uint64_t v;
	bool bytes = text && *text && !isdigit((unsigned char)text[strlen(text) - 1]);

	if (cli_parse_size(text, 1, &v) || (bytes && v == 0)) {
		snprintf(err, errlen, "give stripe heads (%u..%u, md's stripe_cache_size) or "
			 "memory with a suffix (K, M, G)", URAID_STRIPE_CACHE_MIN,
			 URAID_STRIPE_CACHE_MAX);
		return -EINVAL;
	}
	/* memory: a head is 4 KiB on every member (members 0: syntax only) */
	if (bytes && members)
		v /= (uint64_t)4096 * members;
	else if (bytes)
		v = URAID_STRIPE_CACHE_DEFAULT;
	if (v < URAID_STRIPE_CACHE_MIN || v > URAID_STRIPE_CACHE_MAX) {
		char lo[32], hi[32];
		uint64_t head = (uint64_t)4096 * members;

		if (bytes)
			snprintf(err, errlen, "that makes %llu stripe heads of 4 KiB x %u members; "
				 "give %s..%s (%u..%u heads)", (unsigned long long)v,
				 members, cli_bytes(head * URAID_STRIPE_CACHE_MIN, lo, sizeof(lo)),
				 cli_bytes(head * URAID_STRIPE_CACHE_MAX, hi, sizeof(hi)),
				 URAID_STRIPE_CACHE_MIN, URAID_STRIPE_CACHE_MAX);
		else
			snprintf(err, errlen, "give %u..%u stripe heads (md's stripe_cache_size), "
				 "or memory with a suffix (K, M, G)", URAID_STRIPE_CACHE_MIN,
				 URAID_STRIPE_CACHE_MAX);
		return -EINVAL;
	}
	*heads = (unsigned)v;
	return 0;
}

int cli_array_stripe_cache(struct uraid_array *a, const char *text, unsigned *heads, char *err,
			   size_t errlen)
{
	struct uraid_array_status *as = malloc(sizeof(*as));   /* large: not on the stack */
	int rc;

	if (!as || uraid_array_status(a, as)) {
		free(as);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = cli_parse_stripe_cache(text, as->raid_disks, heads, err, errlen);
	uint64_t need = rc ? 0 : (uint64_t)*heads * 4096u * as->raid_disks;
	uint64_t limit = uraid_stripe_cache_memory_limit();
	if (as->stripe_cache.used && need > limit) {
		char n[32], l[32];

		snprintf(err, errlen, "%u stripe heads need %s (4 KiB x %u members each), more "
			 "than the limit of %s (half of this machine's memory): give fewer",
			 *heads, cli_bytes(need, n, sizeof(n)), as->raid_disks,
			 cli_bytes(limit, l, sizeof(l)));
		rc = -E2BIG;
	}
	free(as);
	return rc;
}
