// SPDX-License-Identifier: MIT
/*
 * uraid bench --characterise DEVICE...: the drive model of each DEVICE
 * (src/bench/characterise.h) as JSON (docs/json.md, "bench --characterise"):
 * one object for one DEVICE, an array of one object per DEVICE for several
 * (never their mean: a pool of unlike drives is the planner's to model).
 * The JSON goes to --output=FILE or stdout; a short table goes to stdout
 * when the JSON went to a file, else to stderr.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/characterise.h"
#include "cli/bench_cli.h"
#include "cli/cli.h"
#include "cli/util.h"

#define CHAR_DEFAULT_RUNTIME 1.0
#define CHAR_DEFAULT_RAMP    0.25

struct char_cli {
	struct bench_char_opts o;
	const char *out_path;
	bool tty;
};

bool bench_wants_characterise(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--characterise") || !strcmp(argv[i], "--characterize"))
			return true;
	return false;
}

static int char_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "uraid bench --characterise: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see 'uraid bench --help'\n");
	return CLI_EXIT_USAGE;
}

static int parse_secs(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v >= 0) || !isfinite(v))
		return -EINVAL;
	if (!strcmp(end, "ms"))
		v /= 1000;
	else if (!strcmp(end, "m"))
		v *= 60;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	if (v > BENCH_MAX_SECONDS)
		return -EINVAL;
	*out = v;
	return 0;
}

enum { CO_CHAR = 256, CO_RUNTIME, CO_RAMP, CO_SIZE, CO_OUTPUT, CO_FORCE, CO_DIRECT, CO_SEED };

static const struct option char_opts[] = {
	{ "characterise", no_argument, NULL, CO_CHAR },
	{ "characterize", no_argument, NULL, CO_CHAR },
	{ "runtime", required_argument, NULL, CO_RUNTIME },
	{ "ramp_time", required_argument, NULL, CO_RAMP },
	{ "size", required_argument, NULL, CO_SIZE },
	{ "output", required_argument, NULL, CO_OUTPUT },
	{ "force-write", no_argument, NULL, CO_FORCE },
	{ "direct", required_argument, NULL, CO_DIRECT },
	{ "seed", required_argument, NULL, CO_SEED },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse(int argc, char **argv, struct char_cli *c)
{
	int opt;

	c->o.runtime_s = CHAR_DEFAULT_RUNTIME;
	c->o.ramp_s = CHAR_DEFAULT_RAMP;
	c->o.seed = 1;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", char_opts, NULL)) != -1) {
		char *end;
		switch (opt) {
		case CO_CHAR:
			break;
		case CO_RUNTIME:
			if (parse_secs(optarg, &c->o.runtime_s) || !(c->o.runtime_s > 0))
				return char_usage_error("--runtime=%s: seconds per point, more than 0",
							optarg);
			break;
		case CO_RAMP:
			if (parse_secs(optarg, &c->o.ramp_s))
				return char_usage_error("--ramp_time=%s: seconds from 0", optarg);
			break;
		case CO_SIZE:
			if (cli_parse_size(optarg, 1, &c->o.size) || !c->o.size || c->o.size % 4096)
				return char_usage_error("--size=%s: a multiple of 4K, more than 0",
							optarg);
			c->o.create_bytes = c->o.size;
			break;
		case CO_OUTPUT:
			if (!*optarg)
				return char_usage_error("%s", "--output: give a file's path");
			c->out_path = optarg;
			break;
		case CO_FORCE:
			c->o.flags |= BENCH_FORCE_WRITE;
			break;
		case CO_DIRECT:
			if (strcmp(optarg, "0") && strcmp(optarg, "1"))
				return char_usage_error("--direct=%s: 0 or 1", optarg);
			if (!strcmp(optarg, "0"))
				c->o.flags |= BENCH_BUFFERED;
			else
				c->o.flags &= ~BENCH_BUFFERED;
			break;
		case CO_SEED:
			errno = 0;
			c->o.seed = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || *optarg == '-')
				return char_usage_error("--seed=%s: a number", optarg);
			break;
		case 'h':
			printf("uraid bench --characterise [--runtime=SEC] [--ramp_time=SEC] "
			       "[--size=SIZE] [--output=FILE]\n"
			       "                           [--force-write] [--direct=0|1] "
			       "[--seed=N] DEVICE...\n(see 'uraid bench --help')\n");
			return -1;
		default:
			return char_usage_error("%s: not an option of --characterise (it takes "
						"--runtime, --ramp_time, --size, --output, "
						"--force-write, --direct, --seed)",
						argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return char_usage_error("%s", "no DEVICE given");
	if (argc - optind > BENCH_MAX_TARGETS)
		return char_usage_error("%s", "at most 64 DEVICEs");
	return 0;
}

static void char_progress(void *arg, const char *path, unsigned index, const char *what)
{
	const struct char_cli *c = arg;

	if (!c->tty)
		return;
	fprintf(stderr, "\r\033[Kuraid bench: characterising %s: %s (%u/%u)", path, what,
		index + 1, BENCH_CHAR_POINTS);
	fflush(stderr);
}

static void json_points(FILE *f, const char *key, const struct bench_char_point *p, unsigned n,
			bool last)
{
	fprintf(f, "    \"%s\": [", key);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s\n      {\"qd\": %u, \"iops\": %.1f, \"mean_us\": %.2f, "
			"\"p99_us\": %.2f}", i ? "," : "", p[i].qd, p[i].iops, p[i].mean_us,
			p[i].p99_us);
	fprintf(f, "\n    ]%s\n", last ? "" : ",");
}

static void json_seq(FILE *f, const char *key, const struct bench_char_seq *s)
{
	fprintf(f, "    \"%s\": [", key);
	for (unsigned i = 0; i < BENCH_CHAR_NSEQ; i++)
		fprintf(f, "%s\n      {\"bs\": %u, \"mib_s\": %.1f}", i ? "," : "", s[i].bs,
			s[i].mib_s);
	fprintf(f, "\n    ],\n");
}

/* A string value with what JSON must escape escaped. */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_model(FILE *f, const struct bench_drive_model *m, const struct char_cli *c,
		       const char *host, const char *stamp)
{
	const char *slash = strrchr(m->path, '/');
	const char *name = bench_is_nbd_uri(m->path) || !slash ? m->path : slash + 1;

	fprintf(f, "  {\n    \"uraid_drive_model\": 1,\n    \"name\": ");
	json_string(f, name);
	fprintf(f, ",\n    \"path\": ");
	json_string(f, m->path);
	fprintf(f, ",\n    \"capacity_bytes\": %llu,\n    \"host\": ",
		(unsigned long long)m->capacity_bytes);
	json_string(f, host);
	fprintf(f, ",\n    \"timestamp\": \"%s\",\n    \"runtime_s\": %g,\n", stamp,
		c->o.runtime_s);
	json_points(f, "random_read_4k", m->random_read, BENCH_CHAR_NQD, false);
	json_points(f, "random_write_4k", m->random_write, BENCH_CHAR_NQD, false);
	json_points(f, "mixed_70_30_4k", m->mixed, BENCH_CHAR_NMIXED, false);
	json_seq(f, "seq_read", m->seq_read);
	json_seq(f, "seq_write", m->seq_write);
	fprintf(f, "    \"afr\": null,\n    \"ure\": null\n  }");
}

static void table(FILE *f, const struct bench_drive_model *m)
{
	fprintf(f, "%s: %.1f GiB\n", m->path, (double)m->capacity_bytes / (1 << 30));
	fprintf(f, "  4 KiB random   QD:");
	for (unsigned i = 0; i < BENCH_CHAR_NQD; i++)
		fprintf(f, " %9u", bench_char_qd[i]);
	fprintf(f, "\n  read IOPS         ");
	for (unsigned i = 0; i < BENCH_CHAR_NQD; i++)
		fprintf(f, " %9.0f", m->random_read[i].iops);
	fprintf(f, "\n  read p99 µs       ");
	for (unsigned i = 0; i < BENCH_CHAR_NQD; i++)
		fprintf(f, " %9.1f", m->random_read[i].p99_us);
	fprintf(f, "\n  write IOPS        ");
	for (unsigned i = 0; i < BENCH_CHAR_NQD; i++)
		fprintf(f, " %9.0f", m->random_write[i].iops);
	fprintf(f, "\n  write p99 µs      ");
	for (unsigned i = 0; i < BENCH_CHAR_NQD; i++)
		fprintf(f, " %9.1f", m->random_write[i].p99_us);
	fprintf(f, "\n  70/30 IOPS         QD 1 %.0f, QD 32 %.0f\n", m->mixed[0].iops,
		m->mixed[1].iops);
	fprintf(f, "  sequential MiB/s   read %.0f (128 KiB) %.0f (1 MiB), write %.0f (128 KiB) "
		"%.0f (1 MiB)\n", m->seq_read[0].mib_s, m->seq_read[1].mib_s,
		m->seq_write[0].mib_s, m->seq_write[1].mib_s);
}

static bool out_dir_writable(const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');

	if (!slash)
		return access(".", W_OK | X_OK) == 0;
	if ((size_t)(slash - path) >= sizeof(dir))
		return false;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	return access(slash == path ? "/" : dir, W_OK | X_OK) == 0;
}

int cmd_bench_characterise(int argc, char **argv)
{
	struct char_cli c = { .tty = isatty(STDERR_FILENO) };
	char err[400], host[256] = "", stamp[32];
	int rc = parse(argc, argv, &c);

	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	c.o.progress = char_progress;
	c.o.arg = &c;
	unsigned n = (unsigned)(argc - optind);
	char **paths = argv + optind;
	struct bench_drive_model *m = calloc(n, sizeof(*m));
	if (!m) {
		fprintf(stderr, "uraid bench --characterise: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	/* a folder that cannot take the file costs no run; the file is written at the end */
	if (c.out_path && !out_dir_writable(c.out_path)) {
		fprintf(stderr, "uraid bench --characterise: --output=%s: the folder does not "
			"exist or is not writable\n", c.out_path);
		free(m);
		return CLI_EXIT_USAGE;
	}
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	gethostname(host, sizeof(host) - 1);
	for (unsigned i = 0; i < n && !rc; i++) {
		rc = bench_characterise(paths[i], &c.o, &m[i], err, sizeof(err));
		if (c.tty)
			fputs("\r\033[K", stderr);
		if (rc) {
			fprintf(stderr, "uraid bench --characterise: %s\n", err);
			rc = rc == -EPERM || rc == -EINVAL || rc == -EROFS ? CLI_EXIT_USAGE
									  : CLI_EXIT_FAIL;
		}
	}
	FILE *out = stdout;
	if (!rc && c.out_path && !(out = fopen(c.out_path, "we"))) {
		fprintf(stderr, "uraid bench --characterise: --output: %s: %s\n", c.out_path,
			strerror(errno));
		rc = CLI_EXIT_FAIL;
		out = stdout;
	}
	if (!rc) {
		if (n > 1)
			fprintf(out, "[\n");
		for (unsigned i = 0; i < n; i++) {
			json_model(out, &m[i], &c, host, stamp);
			fprintf(out, "%s\n", i + 1 < n ? "," : "");
		}
		if (n > 1)
			fprintf(out, "]\n");
		for (unsigned i = 0; i < n; i++)
			table(c.out_path ? stdout : stderr, &m[i]);
	}
	if (out != stdout && fclose(out) && !rc) {
		fprintf(stderr, "uraid bench --characterise: --output: %s: %s\n", c.out_path,
			strerror(errno));
		rc = CLI_EXIT_FAIL;
	}
	free(m);
	return rc;
}
