// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <getopt.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/util.h"

#include <uraid/engine.h>

int cli_parse_size(const char *s, uint64_t default_unit, uint64_t *bytes)
{
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno)
		return -EINVAL;
	uint64_t unit = default_unit;
	if (*end) {
		switch (toupper((unsigned char)*end)) {
		case 'B': unit = 1; break;
		case 'K': unit = 1ull << 10; break;
		case 'M': unit = 1ull << 20; break;
		case 'G': unit = 1ull << 30; break;
		case 'T': unit = 1ull << 40; break;
		default: return -EINVAL;
		}
		end++;
		/* accept "K", "KiB", "KB" (all binary, as mdadm) */
		if (*end == 'i' || *end == 'I')
			end++;
		if ((*end == 'B' || *end == 'b') && unit != 1)
			end++;
		if (*end)
			return -EINVAL;
	}
	if (v > UINT64_MAX / unit)
		return -EINVAL;
	*bytes = v * unit;
	return 0;
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

static void json_escape(FILE *f, const char *s)
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
		json_escape(j->f, key);
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
	json_escape(j->f, val);
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
