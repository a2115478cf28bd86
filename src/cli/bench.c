// SPDX-License-Identifier: MIT
/* uraid bench: fio's options, a human table or JSON with unit-suffixed keys. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>

#include "bench/bench.h"
#include "cli/cli.h"
#include "cli/util.h"

static void bench_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid bench [OPTIONS] DEVICE...\n"
		"\n"
		"Measure IOPS, MiB/s, latency percentiles and CPU use of a workload (fio's option\n"
		"names). By default each DEVICE (file or block device) is a raw target, opened\n"
		"with O_DIRECT and driven by its own worker through io_uring (JBOD). With --array\n"
		"the DEVICEs are the members of one array, assembled and driven in this process\n"
		"through liburaid, each worker driving its own reactor.\n"
		"\n"
		"Workload:\n"
		"      --rw=MODE           read, write, randread, randwrite, rw (readwrite) or randrw\n"
		"                          (default read)\n"
		"      --bs=SIZE           block size, K/M suffix (default 4k)\n"
		"      --bssplit=LIST      block sizes with percentages: 4k/60:64k/40\n"
		"      --rwmixread=PCT     reads in rw/randrw (default 50); --rwmixwrite=PCT\n"
		"      --percentage_random=PCT  random share of I/Os (Iometer's %% random); the\n"
		"                          others start where the worker's previous I/O ended\n"
		"      --blockalign=SIZE   alignment of random offsets (default: smallest bs)\n"
		"      --iodepth=N         outstanding I/Os per worker (default 1)\n"
		"      --numjobs=N         workers (default: one per raw target; 1 for an array)\n"
		"      --runtime=SEC       measured time (default 10; 's', 'm' suffixes)\n"
		"      --ramp_time=SEC     time run before measuring (default 0)\n"
		"      --size=SIZE         range used in each target (default: all); a raw\n"
		"                          target that does not exist is created at this size\n"
		"      --offset=SIZE       start of the range (default 0)\n"
		"      --rate_iops=N       total I/Os per second; latency then counts from each\n"
		"                          I/O's scheduled start (no coordinated omission)\n"
		"      --seed=N            seed of offsets, mix and data (default 1)\n"
		"      --direct=0|1        0: page-cache I/O (default 1: O_DIRECT)\n"
		"Targets:\n"
		"      --array             the DEVICEs are the members of one array\n"
		"  -l, --level=L           with --array: first create the array (as uraid create\n"
		"                          --assume-clean --bitmap=none) on the DEVICEs\n"
		"  -c, --chunk=SIZE        its chunk (plain number in KiB; default 512K)\n"
		"  -p, --layout=NAME       its layout (as uraid create)\n"
		"      --member-size=SIZE  size of members that do not exist, created zero-filled\n"
		"      --force-write       allow writing to DEVICEs that existed before this run\n"
		"                          (writing destroys their data; also needed for --level on\n"
		"                          existing DEVICEs)\n"
		"Output:\n"
		"      --json              JSON (sizes in bytes, times in ns, rates per second)\n"
		"  -h, --help              this text\n"
		"\n"
		"Write data is random (incompressible). DEVICEs the run creates may be written\n"
		"without --force-write. Latency percentiles come from a log-linear histogram\n"
		"(error below 0.4 %%, range about 4.9 hours); CPU is user and system time of\n"
		"the whole process during the measured window, in %% of one CPU.\n");
}

enum {
	OPT_RW = 256, OPT_BS, OPT_BSSPLIT, OPT_RWMIXREAD, OPT_RWMIXWRITE, OPT_PCTRANDOM,
	OPT_BLOCKALIGN, OPT_IODEPTH, OPT_NUMJOBS, OPT_RUNTIME, OPT_RAMP, OPT_SIZE, OPT_OFFSET,
	OPT_RATE, OPT_SEED, OPT_DIRECT, OPT_ARRAY, OPT_MEMBER_SIZE, OPT_FORCE_WRITE, OPT_JSON,
};

static const struct option bench_opts[] = {
	{ "rw", required_argument, NULL, OPT_RW },
	{ "readwrite", required_argument, NULL, OPT_RW },
	{ "bs", required_argument, NULL, OPT_BS },
	{ "bssplit", required_argument, NULL, OPT_BSSPLIT },
	{ "rwmixread", required_argument, NULL, OPT_RWMIXREAD },
	{ "rwmixwrite", required_argument, NULL, OPT_RWMIXWRITE },
	{ "percentage_random", required_argument, NULL, OPT_PCTRANDOM },
	{ "blockalign", required_argument, NULL, OPT_BLOCKALIGN },
	{ "iodepth", required_argument, NULL, OPT_IODEPTH },
	{ "numjobs", required_argument, NULL, OPT_NUMJOBS },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "ramp_time", required_argument, NULL, OPT_RAMP },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "rate_iops", required_argument, NULL, OPT_RATE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "direct", required_argument, NULL, OPT_DIRECT },
	{ "array", no_argument, NULL, OPT_ARRAY },
	{ "level", required_argument, NULL, 'l' },
	{ "chunk", required_argument, NULL, 'c' },
	{ "layout", required_argument, NULL, 'p' },
	{ "member-size", required_argument, NULL, OPT_MEMBER_SIZE },
	{ "force-write", no_argument, NULL, OPT_FORCE_WRITE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct bench_cli {
	struct bench_workload wl;
	struct bench_targets tg;
	const char *rw;
	const char *layout;
	bool rwmix_given;
	bool json;
};

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "uraid bench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "; see 'uraid bench --help'\n");
	return CLI_EXIT_USAGE;
}

static int parse_uint(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "10", "10s", "2m", "1.5" seconds */
static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v >= 0))
		return -EINVAL;
	if (!strcmp(end, "m") || !strcmp(end, "min"))
		v *= 60;
	else if (!strcmp(end, "ms"))
		v /= 1000;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	*out = v;
	return 0;
}

/* --rw: the read share and the random share it implies. */
static int apply_rw(struct bench_cli *c)
{
	static const struct { const char *name; unsigned read, random; } modes[] = {
		{ "read", 100, 0 }, { "write", 0, 0 }, { "randread", 100, 100 },
		{ "randwrite", 0, 100 }, { "rw", 50, 0 }, { "readwrite", 50, 0 },
		{ "randrw", 50, 100 },
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(c->rw, modes[i].name))
			continue;
		bool mixed = modes[i].read == 50;
		if (!mixed || !c->rwmix_given)
			c->wl.read_pct = modes[i].read;
		if (c->wl.random_pct == 101)
			c->wl.random_pct = modes[i].random;
		return 0;
	}
	return -EINVAL;
}

static int parse_args(int argc, char **argv, struct bench_cli *c)
{
	uint64_t v;
	int opt;
	char err[160];

	c->rw = "read";
	c->wl.nbs = 1;
	c->wl.bs[0] = (struct bench_bs){ .bytes = 4096, .weight = 1 };
	c->wl.read_pct = 50;
	c->wl.random_pct = 101;         /* unset: from --rw */
	c->wl.iodepth = 1;
	c->wl.runtime_s = 10;
	c->wl.seed = 1;
	c->tg.kind = BENCH_RAW;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "l:c:p:h", bench_opts, NULL)) != -1) {
		switch (opt) {
		case OPT_RW:
			c->rw = optarg;
			break;
		case OPT_BS:
			if (cli_parse_size(optarg, 1, &v) || !v || v % 512 || v > BENCH_MAX_BS)
				return usage_error("--bs=%s: a multiple of 512 up to 16M", optarg);
			c->wl.nbs = 1;
			c->wl.bs[0] = (struct bench_bs){ .bytes = (uint32_t)v, .weight = 1 };
			break;
		case OPT_BSSPLIT:
			if (bench_parse_bssplit(optarg, &c->wl, err, sizeof(err)))
				return usage_error("%s", err);
			break;
		case OPT_RWMIXREAD:
		case OPT_RWMIXWRITE:
			if (parse_uint(optarg, 100, &v))
				return usage_error("--rwmix*=%s: a percentage", optarg);
			c->wl.read_pct = (unsigned)(opt == OPT_RWMIXREAD ? v : 100 - v);
			c->rwmix_given = true;
			break;
		case OPT_PCTRANDOM:
			if (parse_uint(optarg, 100, &v))
				return usage_error("--percentage_random=%s: a percentage", optarg);
			c->wl.random_pct = (unsigned)v;
			break;
		case OPT_BLOCKALIGN:
			if (cli_parse_size(optarg, 1, &v) || !v || v % 512 || v > UINT32_MAX)
				return usage_error("--blockalign=%s: a multiple of 512", optarg);
			c->wl.align = (uint32_t)v;
			break;
		case OPT_IODEPTH:
			if (parse_uint(optarg, 4096, &v) || !v)
				return usage_error("--iodepth=%s: 1..4096", optarg);
			c->wl.iodepth = (unsigned)v;
			break;
		case OPT_NUMJOBS:
			if (parse_uint(optarg, BENCH_MAX_WORKERS, &v) || !v)
				return usage_error("--numjobs=%s: 1..256", optarg);
			c->wl.workers = (unsigned)v;
			break;
		case OPT_RUNTIME:
			if (parse_seconds(optarg, &c->wl.runtime_s) || !(c->wl.runtime_s > 0))
				return usage_error("--runtime=%s: seconds, more than 0", optarg);
			break;
		case OPT_RAMP:
			if (parse_seconds(optarg, &c->wl.ramp_s))
				return usage_error("--ramp_time=%s: seconds", optarg);
			break;
		case OPT_SIZE:
			if (cli_parse_size(optarg, 1, &c->wl.size) || c->wl.size % 512)
				return usage_error("--size=%s: a multiple of 512", optarg);
			break;
		case OPT_OFFSET:
			if (cli_parse_size(optarg, 1, &c->wl.offset) || c->wl.offset % 512)
				return usage_error("--offset=%s: a multiple of 512", optarg);
			break;
		case OPT_RATE:
			if (parse_uint(optarg, UINT64_MAX, &c->wl.rate_iops) || !c->wl.rate_iops)
				return usage_error("--rate_iops=%s: a positive number", optarg);
			break;
		case OPT_SEED:
			if (parse_uint(optarg, UINT64_MAX, &c->wl.seed))
				return usage_error("--seed=%s: a number", optarg);
			break;
		case OPT_DIRECT:
			if (strcmp(optarg, "0") && strcmp(optarg, "1"))
				return usage_error("--direct=%s: 0 or 1", optarg);
			if (!strcmp(optarg, "0"))
				c->tg.flags |= BENCH_BUFFERED;
			else
				c->tg.flags &= ~BENCH_BUFFERED;
			break;
		case OPT_ARRAY:
			c->tg.kind = BENCH_ARRAY;
			break;
		case 'l':
			if (uraid_level_parse(optarg, &c->tg.level))
				return usage_error("unknown RAID level '%s'", optarg);
			c->tg.flags |= BENCH_CREATE;
			break;
		case 'c':
			if (cli_parse_size(optarg, 1024, &v) || v < 4096 || v % 4096 ||
			    v / 1024 > UINT32_MAX)
				return usage_error("--chunk=%s: a multiple of 4K", optarg);
			c->tg.chunk_kib = (uint32_t)(v / 1024);
			break;
		case 'p':
			c->layout = optarg;
			break;
		case OPT_MEMBER_SIZE:
			if (cli_parse_size(optarg, 1, &v) || !v || v % 4096)
				return usage_error("--member-size=%s: a multiple of 4K", optarg);
			c->tg.create_bytes = v;
			break;
		case OPT_FORCE_WRITE:
			c->tg.flags |= BENCH_FORCE_WRITE;
			break;
		case OPT_JSON:
			c->json = true;
			break;
		case 'h':
			bench_usage(stdout);
			return -1;
		default:
			return usage_error("%s", "unknown option");
		}
	}
	if (apply_rw(c))
		return usage_error("--rw=%s: read, write, randread, randwrite, rw or randrw", c->rw);
	if (optind >= argc)
		return usage_error("%s", "no DEVICE given");
	if ((c->tg.flags & BENCH_CREATE) && c->tg.kind != BENCH_ARRAY)
		return usage_error("%s", "--level needs --array");
	if (c->layout) {
		if (!(c->tg.flags & BENCH_CREATE))
			return usage_error("%s", "--layout needs --level");
		if (uraid_layout_parse(c->tg.level, c->layout, &c->tg.layout))
			return usage_error("unknown layout '%s' for this level", c->layout);
		c->tg.layout_given = true;
	}
	if (c->tg.kind == BENCH_RAW)
		c->tg.create_bytes = c->wl.size;
	c->tg.paths = (const char *const *)argv + optind;
	c->tg.npaths = (unsigned)(argc - optind);
	return 0;
}

static const double pcts[] = { 50, 90, 99, 99.9, 99.99, 99.999 };
static const char *const pct_keys[] = { "p50", "p90", "p99", "p99_9", "p99_99", "p99_999" };
static const char *const pct_names[] = { "p50", "p90", "p99", "p99.9", "p99.99", "p99.999" };
#define NPCT (sizeof(pcts) / sizeof(pcts[0]))

static double per_s(uint64_t n, uint64_t ns)
{
	return ns ? (double)n * 1e9 / (double)ns : 0;
}

static void json_dir(struct json *j, const char *key, uint64_t ios, uint64_t bytes,
		     const struct hist *h, uint64_t ns)
{
	json_obj_open(j, key);
	json_u64(j, "ios", ios);
	json_u64(j, "bytes", bytes);
	json_u64(j, "iops", (uint64_t)(per_s(ios, ns) + 0.5));
	json_u64(j, "bw_bytes_per_s", (uint64_t)(per_s(bytes, ns) + 0.5));
	json_obj_open(j, "lat_ns");
	json_u64(j, "min", h->count ? h->min : 0);
	json_u64(j, "mean", hist_mean(h));
	for (size_t i = 0; i < NPCT; i++)
		json_u64(j, pct_keys[i], hist_percentile(h, pcts[i]));
	json_u64(j, "max", h->max);
	json_obj_close(j);
	json_obj_close(j);
}

static void print_json(const struct bench_cli *c, const struct bench_result *r)
{
	struct json j;
	const struct bench_workload *w = &c->wl;

	json_begin(&j, stdout);
	json_obj_open(&j, NULL);
	json_obj_open(&j, "workload");
	json_str(&j, "rw", c->rw);
	json_arr_open(&j, "bssplit");
	for (unsigned i = 0; i < w->nbs; i++) {
		json_obj_open(&j, NULL);
		json_u64(&j, "bs_bytes", w->bs[i].bytes);
		json_u64(&j, "pct", w->nbs > 1 ? w->bs[i].weight : 100);
		json_u64(&j, "ios", r->bs_ios[i]);
		json_obj_close(&j);
	}
	json_arr_close(&j);
	json_u64(&j, "rwmixread_pct", w->read_pct);
	json_u64(&j, "random_pct", w->random_pct);
	json_u64(&j, "iodepth", r->iodepth);
	json_u64(&j, "numjobs", r->workers);
	json_u64(&j, "ramp_ns", (uint64_t)(w->ramp_s * 1e9));
	json_u64(&j, "rate_iops", w->rate_iops);
	json_u64(&j, "seed", w->seed);
	json_obj_close(&j);
	json_obj_open(&j, "target");
	json_str(&j, "kind", c->tg.kind == BENCH_RAW ? "raw" : "array");
	json_str(&j, "description", r->target_desc);
	json_arr_open(&j, "paths");
	for (unsigned i = 0; i < c->tg.npaths; i++)
		json_str(&j, NULL, c->tg.paths[i]);
	json_arr_close(&j);
	json_u64(&j, "range_bytes", r->target_bytes);
	json_u64(&j, "degraded", r->degraded);
	json_obj_close(&j);
	json_u64(&j, "runtime_ns", r->runtime_ns);
	json_dir(&j, "read", r->dir[0].ios, r->dir[0].bytes, &r->dir[0].lat, r->runtime_ns);
	json_dir(&j, "write", r->dir[1].ios, r->dir[1].bytes, &r->dir[1].lat, r->runtime_ns);
	json_dir(&j, "total", r->dir[0].ios + r->dir[1].ios, r->dir[0].bytes + r->dir[1].bytes,
		 &r->lat, r->runtime_ns);
	json_obj_open(&j, "cpu");
	json_u64(&j, "user_ns", r->cpu_user_ns);
	json_u64(&j, "sys_ns", r->cpu_sys_ns);
	json_obj_close(&j);
	json_obj_close(&j);
	json_end(&j);
}

static void human_row(const char *name, uint64_t ios, uint64_t bytes, const struct hist *h,
		      uint64_t ns)
{
	printf("%-6s %10.0f %10.2f %9.1f %9.1f", name, per_s(ios, ns),
	       per_s(bytes, ns) / (1 << 20), h->count ? h->min / 1e3 : 0.0, hist_mean(h) / 1e3);
	for (size_t i = 0; i < NPCT; i++)
		printf(" %9.1f", hist_percentile(h, pcts[i]) / 1e3);
	printf(" %9.1f\n", h->max / 1e3);
}

static void print_human(const struct bench_cli *c, const struct bench_result *r)
{
	const struct bench_workload *w = &c->wl;
	char bs[32];

	if (w->nbs == 1)
		cli_bytes(w->bs[0].bytes, bs, sizeof(bs));
	else
		snprintf(bs, sizeof(bs), "bssplit of %u sizes", w->nbs);
	printf("%s, %s, %u%% read, %u%% random, %u worker%s x QD %u, %.1f s measured after "
	       "%.1f s ramp\non %s\n", c->rw, bs, w->read_pct, w->random_pct, r->workers,
	       r->workers == 1 ? "" : "s", r->iodepth, r->runtime_ns / 1e9, w->ramp_s,
	       r->target_desc);
	printf("%-6s %10s %10s  latency in µs:\n%-6s %10s %10s %9s %9s", "", "", "", "", "IOPS",
	       "MiB/s", "min", "mean");
	for (size_t i = 0; i < NPCT; i++)
		printf(" %9s", pct_names[i]);
	printf(" %9s\n", "max");
	if (r->dir[0].ios || w->read_pct)
		human_row("read", r->dir[0].ios, r->dir[0].bytes, &r->dir[0].lat, r->runtime_ns);
	if (r->dir[1].ios || w->read_pct < 100)
		human_row("write", r->dir[1].ios, r->dir[1].bytes, &r->dir[1].lat, r->runtime_ns);
	if (r->dir[0].ios && r->dir[1].ios)
		human_row("total", r->dir[0].ios + r->dir[1].ios,
			  r->dir[0].bytes + r->dir[1].bytes, &r->lat, r->runtime_ns);
	printf("CPU: user %.1f %%, system %.1f %% (of one CPU)\n",
	       100.0 * r->cpu_user_ns / (double)r->runtime_ns,
	       100.0 * r->cpu_sys_ns / (double)r->runtime_ns);
}

int cmd_bench(int argc, char **argv)
{
	struct bench_cli c = { 0 };
	char err[320];

	int rc = parse_args(argc, argv, &c);
	if (rc)
		return rc < 0 ? CLI_EXIT_OK : rc;
	struct bench_result *r = malloc(sizeof(*r));
	if (!r) {
		fprintf(stderr, "uraid bench: out of memory\n");
		return CLI_EXIT_FAIL;
	}
	rc = bench_run(&c.wl, &c.tg, r, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uraid bench: %s\n", err);
		free(r);
		return rc == -EPERM || rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}
	if (c.json)
		print_json(&c, r);
	else
		print_human(&c, r);
	free(r);
	return CLI_EXIT_OK;
}
