// SPDX-License-Identifier: MIT
/*
 * `uraid examine --scan` and `uraid detail --scan`: one ARRAY line per
 * array, in the words of `mdadm --examine --scan` and `mdadm --detail
 * --scan`, so that the output can be pasted into uraid.conf (or
 * mdadm.conf). examine reads the superblocks of candidate devices; detail
 * asks the arrays being served (the registry and their control sockets).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/create.h>
#include <uraid/superblock.h>

#include "cli/cli.h"
#include "cli/scan.h"
#include "ctl/ctl.h"

static void examine_scan_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid examine --scan [--config=FILE] [-v] [DEVICE|GLOB...]\n"
		"\n"
		"Read the md superblocks of the DEVICEs (globs such as '/srv/img/*.img' are\n"
		"expanded; default: the DEVICE lines of the configuration file, else every\n"
		"device of /proc/partitions) and print one ARRAY line per array found, as\n"
		"'mdadm --examine --scan' does:\n"
		"\n"
		"  ARRAY /dev/md/NAME metadata=1.2 UUID=... name=HOST:NAME [spares=N]\n"
		"\n"
		"The lines can be pasted into /etc/uraid/uraid.conf (see uraid(8)). Devices\n"
		"that cannot be read or hold no md superblock are skipped; -v says which and\n"
		"why. Read-only. Exit status 1 when no array was found.\n"
		"\n"
		"      --config=FILE  the configuration file for DEVICE lines (default\n"
		"                     " URAID_CONFIG_DEFAULT " when it exists)\n"
		"  -v, --verbose      name each skipped device and the reason\n"
		"  -h, --help         this text\n");
}

static void detail_scan_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid detail --scan\n"
		"\n"
		"Print one ARRAY line per array served on this machine (uraid serve), as\n"
		"'mdadm --detail --scan' does for running arrays:\n"
		"\n"
		"  ARRAY /dev/md/NAME metadata=1.2 [spares=N] name=HOST:NAME UUID=...\n"
		"\n"
		"  -h, --help   this text\n");
}

/* "ARRAY /dev/md/NAME" (NAME left out when it cannot be printed). */
static void array_head(FILE *f, const char *set_name)
{
	fputs("ARRAY", f);
	if (scan_name_printable(set_name))
		fprintf(f, " /dev/md/%s", scan_short_name(set_name));
}

static void name_word(FILE *f, const char *set_name)
{
	if (scan_name_printable(set_name))
		fprintf(f, " name=%s", set_name);
}

enum { OPT_CONFIG = 256 };

int cmd_examine_scan(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "scan", no_argument, NULL, 's' },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *config = NULL;
	bool verbose = false;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "svh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': break;
		case 'v': verbose = true; break;
		case OPT_CONFIG: config = optarg; break;
		case 'h':
			examine_scan_usage(stdout);
			return CLI_EXIT_OK;
		default:
			fprintf(stderr, "uraid examine: see 'uraid examine --help'\n");
			return CLI_EXIT_USAGE;
		}
	}
	struct uraid_config cfg;
	int rc = scan_load_config("examine", config, &cfg);
	if (rc)
		return rc;
	struct scan_result r;
	rc = scan_devices("examine", &cfg, argv + optind, (unsigned)(argc - optind), verbose, &r);
	config_free(&cfg);
	if (rc)
		return CLI_EXIT_FAIL;
	for (unsigned i = 0; i < r.narrays; i++) {
		const struct scan_array *a = &r.arrays[i];
		char u[40];
		array_head(stdout, a->name);
		printf(" metadata=1.%d UUID=%s", a->minor, uraid_uuid_text(a->uuid, u, sizeof(u)));
		name_word(stdout, a->name);
		if (a->spares)
			printf(" spares=%u", a->spares);
		printf("\n");
	}
	if (!r.narrays)
		fprintf(stderr, "uraid examine: no md array found on %u candidate device%s%s\n",
			r.candidates, r.candidates == 1 ? "" : "s",
			r.unreadable ? " (some could not be read; -v says which)" : "");
	rc = r.narrays ? CLI_EXIT_OK : CLI_EXIT_FAIL;
	scan_result_free(&r);
	return rc;
}

/* ---- detail --scan: the served arrays ---- */

struct served_line {
	char uuid[40];
	char name[40];
	unsigned spares;
	char member[CTL_MAX_LINE];      /* a member to read the metadata version from */
};

/* The fields of `uraid detail`'s human report this needs (status_print.c). */
static void parse_status(char *text, struct served_line *s)
{
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *colon = strstr(line, " : ");
		char key[32], state[32], path[CTL_MAX_LINE];
		if (colon) {
			if (sscanf(line, " %31[^:]", key) == 1) {
				const char *v = colon + 3;
				if (!strncmp(key, "Array UUID", 10))
					snprintf(s->uuid, sizeof(s->uuid), "%.39s", v);
				else if (!strncmp(key, "Name", 4) && strlen(v) < sizeof(s->name))
					snprintf(s->name, sizeof(s->name), "%s", v);
			}
			continue;
		}
		/* member lines: SLOT STATE DIRECT PATH (SLOT "-" for the others) */
		char slot[16], direct[16];
		if (sscanf(line, " %15s %31s %15s %4095[^\n]", slot, state, direct, path) != 4 ||
		    (slot[0] != '-' && (slot[0] < '0' || slot[0] > '9')))
			continue;
		if (!strcmp(state, "spare"))
			s->spares++;
		else if (!strcmp(state, "in-sync") && !s->member[0])
			snprintf(s->member, sizeof(s->member), "%s", path);
	}
}

/* metadata=1.x from a member's own superblock, read-only; -1 unknown. */
static int member_minor(const char *path)
{
	struct uraid_probe *p = malloc(sizeof(*p));
	int minor = -1, fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (p && fd >= 0 && uraid_probe_fd(fd, p) == 0 && p->chosen >= 0 &&
	    p->loc[p->chosen].status == 0)
		minor = p->chosen;
	if (fd >= 0)
		close(fd);
	free(p);
	return minor;
}

static int detail_one(const char *ctl_path, void *arg)
{
	unsigned *printed = arg;
	const char *fields[] = { "status" };
	char *body = NULL, msg[512];
	size_t len = 0;
	FILE *mem = open_memstream(&body, &len);
	if (!mem)
		return 0;
	int rc = ctl_call(ctl_path, fields, 1, mem, msg, sizeof(msg));
	fclose(mem);
	if (rc) {
		fprintf(stderr, "uraid detail: %s: %s\n", ctl_path, msg);
		free(body);
		return 0;
	}
	struct served_line s = { 0 };
	parse_status(body, &s);
	free(body);
	uint8_t uuid[16];
	if (uraid_uuid_parse(s.uuid, uuid)) {
		fprintf(stderr, "uraid detail: %s: its status names no array UUID\n", ctl_path);
		return 0;
	}
	char u[40];
	int minor = s.member[0] ? member_minor(s.member) : -1;
	array_head(stdout, s.name);
	if (minor >= 0)
		printf(" metadata=1.%d", minor);
	if (s.spares)
		printf(" spares=%u", s.spares);
	name_word(stdout, s.name);
	printf(" UUID=%s\n", uraid_uuid_text(uuid, u, sizeof(u)));
	(*printed)++;
	return 0;
}

int cmd_detail_scan(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "scan", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "sh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': break;
		case 'h':
			detail_scan_usage(stdout);
			return CLI_EXIT_OK;
		default:
			fprintf(stderr, "uraid detail: see 'uraid detail --help'\n");
			return CLI_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "uraid detail: --scan lists every served array and takes no "
			"members; for one array's members use 'uraid detail MEMBER...'\n");
		return CLI_EXIT_USAGE;
	}
	char err[512];
	unsigned printed = 0;
	int rc = ctl_for_each(detail_one, &printed, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "uraid detail: %s\n", err);
		return CLI_EXIT_FAIL;
	}
	fflush(stdout);
	return CLI_EXIT_OK;
}
