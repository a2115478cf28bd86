// SPDX-License-Identifier: MIT
/*
 * uraid plan: which array to build from the drives at hand for a workload
 * and a need (capacity, failures to survive, service life), predicted by the
 * models of src/plan/ (docs/planner.md); with --verify, the top candidates
 * built on the given members and measured with the in-process benchmark.
 * Every option is checked before anything runs; bad input is one line and
 * exit status 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uraid/geom.h>
#include <uraid/level.h>

#include "bench/parse.h"
#include "cli/cli.h"
#include "cli/plan_cli.h"
#include "cli/util.h"
#include "plan/verify.h"

static void plan_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid plan DRIVES [NEED] [WORKLOAD] [options]\n"
		"       uraid plan --verify=N --force-write [options] MEMBER...\n"
		"\n"
		"Predict what every array the drives can make (RAID 0, 1, 4, 5, 6, 10 with\n"
		"their layouts, member counts, chunk sizes, a hot spare) does for a workload:\n"
		"IOPS, MiB/s, mean and p99 latency, usable capacity, rebuild time, the chance\n"
		"of losing data over the service life, cost per usable TB; ranked by fit. The\n"
		"model is explained in docs/planner.md.\n"
		"\n"
		"Drives (in the order members are taken; several for a mixed pool):\n"
		"  --drive=SHEET          a data sheet: read_iops=N,write_iops=N,read_mib_s=N,\n"
		"                         write_mib_s=N,capacity=SIZE[,afr=F,ure=F,read_lat_us=N,\n"
		"                         write_lat_us=N,price=N,name=S] (afr 0.01 or 1%%)\n"
		"  --drive-model=FILE[,afr=F,ure=F,price=N,name=S]\n"
		"                         a drive model JSON (uraid bench --characterise; a list\n"
		"                         of several devices is a mixed pool, one of each), with\n"
		"                         what a measurement cannot give from the data sheet\n"
		"  --drives=N             how many of the drive given just before (of each, after\n"
		"                         a list; default 1;\n"
		"                         with MEMBERs and no --drives: one per MEMBER)\n"
		"Need:\n"
		"  --capacity=SIZE        usable capacity wanted (K/M/G/T binary)\n"
		"  --failures=N           members lost at once without losing data (default 1)\n"
		"  --rebuild-speed=KIB_S  the rebuild's limit per member (default 200000, md's)\n"
		"  --years=N              service life (default 5)\n"
		"  --replace-hours=H      until a failed member is replaced without a hot spare\n"
		"                         (default 24)\n"
		"  --min-iops=N           IOPS wanted: fit needs it, then the cheapest ranks first\n"
		"Workload (a profile, access lines, or fio's words; default 4 KiB random read):\n"
		"  --profile=NAME         a bench profile (uraid bench --help lists them)\n"
		"  --access=LINE          an Iometer access line SIZE,READ%%,RANDOM%%[,ALIGN][/WEIGHT]\n"
		"  --bs=SIZE --rw=WORD --rwmixread=N   fio's words (rw: read, write, randread,\n"
		"                         randwrite, rw, randrw)\n"
		"  --iodepth=N            outstanding I/Os per job (default 32)\n"
		"  --numjobs=N            client jobs (default 1)\n"
		"  --qd-per-drive=N       outstanding I/Os per member instead (total N x members)\n"
		"Candidates:\n"
		"  --level=LIST           levels to consider (default 0,1,4,5,6,10)\n"
		"  --chunks=LIST          chunk sizes (default 64K,512K)\n"
		"  --spares=N             hot spares to consider, 0 or 1 (default 1)\n"
		"  --max-members=N        members at most (default: every drive)\n"
		"  --members=N            exactly N members\n"
		"Host (0 or absent: not counted):\n"
		"  --cores=N              threads issuing I/O (default: --numjobs)\n"
		"  --cpu-per-io=US        CPU per client I/O\n"
		"  --cpu-per-member-io=US CPU per member I/O\n"
		"  --parity-mib-s=N       parity rate of one CPU, any level (default: XOR and P+Q\n"
		"                         measured now with ISA-L for each data count)\n"
		"  --link-mib-s=N, --link-iops=N   a link's limit on member traffic\n"
		"Output:\n"
		"  --top=N                rows of the table (default 10; JSON has all)\n"
		"  --json                 the answer as JSON (docs/json.md)\n"
		"  --html=FILE            a report with charts\n"
		"Verify (destroys the members' data):\n"
		"  --verify=N             build the top N candidates on MEMBER... and measure each\n"
		"                         with the benchmark: predicted against measured, error %%\n"
		"  --force-write          allow writing to existing MEMBERs (needed)\n"
		"  --runtime=S --ramp=S   of each measurement (default 2 and 0.5)\n"
		"  --rounds=N             measure each candidate N times (default 1), the host's\n"
		"                         CPU share measured again before each; medians shown\n"
		"  --seed=N               of the workload (default 1)\n"
		"Without --drive or --drive-model, --verify measures MEMBER 1 quickly as uraid\n"
		"drives it (a linear array of it alone: 4 KiB random read and write at QD 1..32,\n"
		"1 MiB sequential) and plans with that.\n");
}

enum {
	O_DRIVE = 256, O_DRIVE_MODEL, O_DRIVES, O_CAPACITY, O_FAILURES, O_REBUILD, O_YEARS,
	O_REPLACE, O_MIN_IOPS, O_PROFILE, O_ACCESS, O_BS, O_RW, O_MIX, O_IODEPTH, O_NUMJOBS,
	O_QDPD, O_LEVEL, O_CHUNKS, O_SPARES, O_MAXM, O_MEMBERS, O_CORES, O_CPU_IO, O_CPU_MIO, O_PARITY,
	O_LINK_BW, O_LINK_IOPS, O_TOP, O_JSON, O_HTML, O_VERIFY, O_FORCE, O_RUNTIME, O_RAMP,
	O_SEED, O_ROUNDS,
};

static const struct option plan_opts[] = {
	{ "drive", required_argument, NULL, O_DRIVE },
	{ "drive-model", required_argument, NULL, O_DRIVE_MODEL },
	{ "drives", required_argument, NULL, O_DRIVES },
	{ "capacity", required_argument, NULL, O_CAPACITY },
	{ "failures", required_argument, NULL, O_FAILURES },
	{ "rebuild-speed", required_argument, NULL, O_REBUILD },
	{ "years", required_argument, NULL, O_YEARS },
	{ "replace-hours", required_argument, NULL, O_REPLACE },
	{ "min-iops", required_argument, NULL, O_MIN_IOPS },
	{ "profile", required_argument, NULL, O_PROFILE },
	{ "access", required_argument, NULL, O_ACCESS },
	{ "bs", required_argument, NULL, O_BS },
	{ "rw", required_argument, NULL, O_RW },
	{ "rwmixread", required_argument, NULL, O_MIX },
	{ "iodepth", required_argument, NULL, O_IODEPTH },
	{ "numjobs", required_argument, NULL, O_NUMJOBS },
	{ "qd-per-drive", required_argument, NULL, O_QDPD },
	{ "level", required_argument, NULL, O_LEVEL },
	{ "chunks", required_argument, NULL, O_CHUNKS },
	{ "spares", required_argument, NULL, O_SPARES },
	{ "max-members", required_argument, NULL, O_MAXM },
	{ "members", required_argument, NULL, O_MEMBERS },
	{ "cores", required_argument, NULL, O_CORES },
	{ "cpu-per-io", required_argument, NULL, O_CPU_IO },
	{ "cpu-per-member-io", required_argument, NULL, O_CPU_MIO },
	{ "parity-mib-s", required_argument, NULL, O_PARITY },
	{ "link-mib-s", required_argument, NULL, O_LINK_BW },
	{ "link-iops", required_argument, NULL, O_LINK_IOPS },
	{ "top", required_argument, NULL, O_TOP },
	{ "json", no_argument, NULL, O_JSON },
	{ "html", required_argument, NULL, O_HTML },
	{ "verify", required_argument, NULL, O_VERIFY },
	{ "force-write", no_argument, NULL, O_FORCE },
	{ "runtime", required_argument, NULL, O_RUNTIME },
	{ "ramp", required_argument, NULL, O_RAMP },
	{ "seed", required_argument, NULL, O_SEED },
	{ "rounds", required_argument, NULL, O_ROUNDS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* "uraid plan: ..." as one line on stderr. */
static void vsay(const char *fmt, va_list ap)
{
	fputs("uraid plan: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/* One line on stderr; the usage exit status. */
static int refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int refuse(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
	return CLI_EXIT_USAGE;
}

static bool num_arg(const char *s, double lo, double hi, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

struct plan_opts_in {
	const char *profile, *bs, *rw, *html;
	double mix;
	bool mix_given, json, force, drives_given;
	unsigned nacc;
	struct bench_access acc[BENCH_MAX_LINES];
	bool acc_weight[BENCH_MAX_LINES];
	unsigned verify;
	double runtime, ramp;
	uint64_t seed;
	unsigned rounds;
	double cpu_mio;
	bool cores_given, parity_given, cpu_mio_given;
	struct plan_space space;
};

/* The workload from a profile, access lines or fio's words. */
static int build_workload(struct plan_opts_in *o, struct plan_workload *w)
{
	char err[200];
	int given = !!o->profile + !!o->nacc + !!(o->bs || o->rw || o->mix_given);
	if (given > 1)
		return refuse("give one of --profile, --access, or fio's --bs/--rw/--rwmixread");
	if (o->profile) {
		const struct bench_profile *p = bench_profile_find(o->profile);
		if (!p)
			return refuse("--profile=%s: no such profile (uraid bench --help lists "
				      "them)", o->profile);
		snprintf(w->name, sizeof(w->name), "%s", p->name);
		w->nlines = p->nlines;
		memcpy(w->line, p->line, sizeof(w->line));
		return 0;
	}
	if (o->nacc) {
		if (bench_access_finish(o->acc, o->acc_weight, &o->nacc, err, sizeof(err)))
			return refuse("--access: %s", err);
		snprintf(w->name, sizeof(w->name), "access specification");
		w->nlines = o->nacc;
		memcpy(w->line, o->acc, sizeof(o->acc));
		return 0;
	}
	uint32_t bs = 4096;
	if (o->bs && bench_parse_xfer(o->bs, o->bs + strlen(o->bs), &bs))
		return refuse("--bs=%s: not a transfer size (512 to 16M, such as 4k)", o->bs);
	if (bs % 512 || bs > BENCH_MAX_BS)
		return refuse("--bs=%s: a multiple of 512 up to 16M, please", o->bs);
	const char *rw = o->rw ? o->rw : "randread";
	unsigned rd, rnd;
	if (!strcmp(rw, "read"))
		rd = 100, rnd = 0;
	else if (!strcmp(rw, "write"))
		rd = 0, rnd = 0;
	else if (!strcmp(rw, "randread"))
		rd = 100, rnd = 100;
	else if (!strcmp(rw, "randwrite"))
		rd = 0, rnd = 100;
	else if (!strcmp(rw, "rw") || !strcmp(rw, "readwrite"))
		rd = 50, rnd = 0;
	else if (!strcmp(rw, "randrw"))
		rd = 50, rnd = 100;
	else
		return refuse("--rw=%s: one of read, write, randread, randwrite, rw, randrw", rw);
	if (o->mix_given) {
		if (rd != 50)
			return refuse("--rwmixread needs --rw=rw or --rw=randrw");
		rd = (unsigned)o->mix;
	}
	w->nlines = 1;
	w->line[0] = (struct bench_access){ .bytes = bs, .weight = 100, .read_pct = rd,
					    .random_pct = rnd };
	snprintf(w->name, sizeof(w->name), "%s %u KiB%s", rw, bs / 1024,
		 rd != 0 && rd != 100 ? " mixed" : "");
	return 0;
}

/* One item of --level or --chunks into sp; 0 or the usage exit status. */
typedef int (*list_item_fn)(const char *item, struct plan_space *sp);

static int level_item(const char *t, struct plan_space *sp)
{
	int lv;
	const struct uraid_level_info *info;
	if (uraid_level_parse(t, &lv) || !(info = uraid_level_info(lv)) ||
	    lv == URAID_LEVEL_LINEAR)
		return refuse("--level: '%s' is not a level the planner knows (0, 1, 4, 5, 6, 10)",
			      t);
	if (sp->nlevels == PLAN_MAX_LEVELS)
		return refuse("--level: at most %d levels", PLAN_MAX_LEVELS);
	sp->level[sp->nlevels++] = lv;
	return 0;
}

static int chunk_item(const char *t, struct plan_space *sp)
{
	uint64_t b;
	if (cli_parse_size(t, 1024, &b) || b < 4096 || b > (1u << 30) || (b & (b - 1)))
		return refuse("--chunks: '%s' is not a power of two from 4K to 1G", t);
	if (sp->nchunks == PLAN_MAX_CHUNKS)
		return refuse("--chunks: at most %d sizes", PLAN_MAX_CHUNKS);
	sp->chunk_bytes[sp->nchunks++] = (uint32_t)b;
	return 0;
}

/* A comma-separated list of option opt, each item through one(); *count is
   the list's length in sp (reset first, checked non-empty after). */
static int parse_list(const char *s, const char *opt, list_item_fn one, unsigned *count,
		      struct plan_space *sp)
{
	char buf[128];
	if (strlen(s) >= sizeof(buf))
		return refuse("--%s: too long", opt);
	strcpy(buf, s);
	*count = 0;
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int rc = one(t, sp);
		if (rc)
			return rc;
	}
	return *count ? 0 : refuse("--%s: none given", opt);
}

static unsigned pool_add(struct plan_run *r, unsigned model, unsigned count)
{
	for (unsigned i = 0; i < count && r->pool.n < PLAN_MAX_POOL; i++)
		r->pool.drive[r->pool.n++] = &r->models[model];
	return r->pool.n;
}

/* count drives of each model from first to the last one read (a file may
   hold several: a characterisation of several devices) */
static void pool_add_group(struct plan_run *r, unsigned first, unsigned count)
{
	for (unsigned m = first; m < r->nmodels; m++)
		pool_add(r, m, count);
}

/* The progress of --verify, on stderr (the table or JSON stays clean). */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsay(fmt, ap);
	va_end(ap);
}

static bool workload_writes(const struct plan_workload *w)
{
	for (unsigned l = 0; l < w->nlines; l++)
		if (w->line[l].read_pct < 100)
			return true;
	return false;
}

static bool workload_reads(const struct plan_workload *w)
{
	for (unsigned l = 0; l < w->nlines; l++)
		if (w->line[l].read_pct > 0)
			return true;
	return false;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * Verify candidate i in `rounds` rounds. Members measured now share this
 * host's CPU with everything else on it: when the host's costs were
 * measured now, each round measures the CPU share again and predicts the
 * candidate at that share right before measuring it, so that a load that
 * moves during the run moves both alike; the answer keeps the planner's own
 * prediction (its rank and reason) and gets the medians beside it.
 */
static int verify_candidate(struct plan_run *r, const struct plan_verify_opts *vo, unsigned i,
			    unsigned rounds, bool requote, char *err, size_t errlen)
{
	struct plan_answer *a = &r->ans[i];
	double iops[PLAN_MAX_ROUNDS], mib[PLAN_MAX_ROUNDS], mean[PLAN_MAX_ROUNDS];
	double p99[PLAN_MAX_ROUNDS], cpu[PLAN_MAX_ROUNDS], now[PLAN_MAX_ROUNDS];
	double ratio[PLAN_MAX_ROUNDS];
	for (unsigned k = 0; k < rounds; k++) {
		now[k] = a->perf.iops;
		if (requote) {
			struct plan_host h = r->host;
			struct plan_answer q;
			/* the share on as many member files as the candidate has */
			unsigned n = a->c.members < PLAN_HOST_MAX_N ? a->c.members : 1;
			int rc = plan_verify_share(vo, workload_writes(&r->wl), n,
						   &h.cpu_share_at[n], err, errlen);
			if (!rc)
				rc = plan_evaluate(&r->pool, &r->need, &r->wl, &h, &a->c, &q, err,
						   errlen);
			if (rc)
				return rc;
			now[k] = q.perf.iops;
		}
		struct plan_measured m;
		int rc = plan_verify_one(vo, &r->wl, a, &m, err, errlen);
		if (rc)
			return rc;
		iops[k] = m.iops;
		mib[k] = m.mib_s;
		mean[k] = m.mean_us;
		p99[k] = m.p99_us;
		cpu[k] = m.cpu_us;
		ratio[k] = m.iops > 0 ? now[k] / m.iops : 0;
	}
	a->verified = true;
	a->rounds = rounds;
	a->m_iops = median(iops, rounds);
	a->m_mib_s = median(mib, rounds);
	a->m_mean_us = median(mean, rounds);
	a->m_p99_us = median(p99, rounds);
	a->m_cpu_us = median(cpu, rounds);
	a->now_iops = median(now, rounds);
	a->ratio = median(ratio, rounds);
	return 0;
}

int cmd_plan(int argc, char **argv)
{
	struct plan_run *r = calloc(1, sizeof(*r));
	struct plan_opts_in *o = calloc(1, sizeof(*o));
	int rc = CLI_EXIT_USAGE, opt;
	char err[256];
	if (!r || !o) {
		fprintf(stderr, "uraid plan: out of memory\n");
		free(r);
		free(o);
		return CLI_EXIT_FAIL;
	}
	r->need = (struct plan_need){ .failures = 1, .rebuild_mib_s = 200000 / 1024.0,
				      .years = 5, .replace_hours = 24 };
	r->wl.iodepth = 32;
	r->wl.numjobs = 1;
	r->top = 10;
	o->runtime = 2;
	o->ramp = 0.5;
	o->seed = 1;
	o->rounds = 1;
	o->space = (struct plan_space){ .nlevels = 6, .level = { 0, 1, 4, 5, 6, 10 },
					.nchunks = 2, .chunk_bytes = { 64u << 10, 512u << 10 },
					.max_spares = 1 };
	unsigned counts_pending = 0;    /* the last model still counts 1 unless --drives */
	unsigned group_start = 0;       /* the models the last --drive(-model) read */
	bool have_model = false, quick = false;
	double v;
	uint64_t sz;
	opterr = 0;
	optind = 1;
#define BAD(...) do { rc = refuse(__VA_ARGS__); goto out; } while (0)
	while ((opt = getopt_long(argc, argv, "h", plan_opts, NULL)) != -1) {
		switch (opt) {
		case 'h':
			plan_usage(stdout);
			rc = CLI_EXIT_OK;
			goto out;
		case O_DRIVE:
		case O_DRIVE_MODEL: {
			unsigned got = 0;
			if (r->nmodels == PLAN_MAX_DRIVE_MODELS)
				BAD("at most %d drive models", PLAN_MAX_DRIVE_MODELS);
			if (have_model && counts_pending)
				pool_add_group(r, group_start, 1);
			if ((opt == O_DRIVE ? plan_drive_parse_sheet(optarg, &r->models[r->nmodels],
								   err, sizeof(err))
			     : plan_drive_load_spec(optarg, &r->models[r->nmodels],
						    PLAN_MAX_DRIVE_MODELS - r->nmodels, &got, err,
						    sizeof(err))))
				BAD("%s", err);
			group_start = r->nmodels;
			r->nmodels += opt == O_DRIVE ? 1 : got;
			have_model = true;
			counts_pending = 1;
			break;
		}
		case O_DRIVES:
			if (!have_model || !counts_pending)
				BAD("--drives=%s: give it after the --drive or --drive-model it counts",
				    optarg);
			if (!num_arg(optarg, 1, PLAN_MAX_POOL, &v) || v != floor(v))
				BAD("--drives=%s: a count from 1 to %d", optarg, PLAN_MAX_POOL);
			/* after a file of several models: that many of each */
			if (r->pool.n + (unsigned)v * (r->nmodels - group_start) > PLAN_MAX_POOL)
				BAD("at most %d drives in a pool", PLAN_MAX_POOL);
			pool_add_group(r, group_start, (unsigned)v);
			counts_pending = 0;
			o->drives_given = true;
			break;
		case O_CAPACITY:
			if (cli_parse_size(optarg, 1, &sz))
				BAD("--capacity=%s: a size such as 10T or 500G (binary units)", optarg);
			r->need.capacity_bytes = sz;
			break;
		case O_FAILURES:
			if (!num_arg(optarg, 0, 8, &v) || v != floor(v))
				BAD("--failures=%s: a count from 0 to 8", optarg);
			r->need.failures = (unsigned)v;
			break;
		case O_REBUILD:
			if (!num_arg(optarg, 1, 1e9, &v))
				BAD("--rebuild-speed=%s: KiB/s from 1 to 1000000000", optarg);
			r->need.rebuild_mib_s = v / 1024;
			break;
		case O_YEARS:
			if (!num_arg(optarg, 0.01, 100, &v))
				BAD("--years=%s: from 0.01 to 100", optarg);
			r->need.years = v;
			break;
		case O_REPLACE:
			if (!num_arg(optarg, 0, 1e5, &v))
				BAD("--replace-hours=%s: from 0 to 100000", optarg);
			r->need.replace_hours = v;
			break;
		case O_MIN_IOPS:
			if (!num_arg(optarg, 0, 1e12, &v))
				BAD("--min-iops=%s: a number of IOPS", optarg);
			r->need.min_iops = v;
			break;
		case O_PROFILE: o->profile = optarg; break;
		case O_BS: o->bs = optarg; break;
		case O_RW: o->rw = optarg; break;
		case O_ACCESS:
			if (o->nacc == BENCH_MAX_LINES)
				BAD("--access: at most %d lines", BENCH_MAX_LINES);
			if (bench_parse_access(optarg, &o->acc[o->nacc], &o->acc_weight[o->nacc], err,
					       sizeof(err)))
				BAD("--access=%s: %s", optarg, err);
			o->nacc++;
			break;
		case O_MIX:
			if (!num_arg(optarg, 0, 100, &v) || v != floor(v))
				BAD("--rwmixread=%s: a percentage from 0 to 100", optarg);
			o->mix = v;
			o->mix_given = true;
			break;
		case O_IODEPTH:
		case O_NUMJOBS:
		case O_QDPD:
			if (!num_arg(optarg, 1, opt == O_NUMJOBS ? 256 : 65536, &v) || v != floor(v))
				BAD("--%s=%s: a count from 1 to %d", opt == O_IODEPTH ? "iodepth" :
				    opt == O_NUMJOBS ? "numjobs" : "qd-per-drive", optarg,
				    opt == O_NUMJOBS ? 256 : 65536);
			if (opt == O_NUMJOBS)
				r->wl.numjobs = (unsigned)v;
			else
				r->wl.iodepth = (unsigned)v;
			if (opt != O_NUMJOBS)
				r->wl.qd_per_drive = opt == O_QDPD;     /* the last one given */
			break;
		case O_LEVEL:
			if ((rc = parse_list(optarg, "level", level_item, &o->space.nlevels,
					     &o->space)))
				goto out;
			rc = CLI_EXIT_USAGE;
			break;
		case O_CHUNKS:
			if ((rc = parse_list(optarg, "chunks", chunk_item, &o->space.nchunks,
					     &o->space)))
				goto out;
			rc = CLI_EXIT_USAGE;
			break;
		case O_SPARES:
			if (!num_arg(optarg, 0, 1, &v) || v != floor(v))
				BAD("--spares=%s: 0 or 1", optarg);
			o->space.max_spares = (unsigned)v;
			break;
		case O_MAXM:
			if (!num_arg(optarg, 1, PLAN_MAX_POOL, &v) || v != floor(v))
				BAD("--max-members=%s: a count from 1 to %d", optarg, PLAN_MAX_POOL);
			o->space.max_members = (unsigned)v;
			break;
		case O_MEMBERS:
			if (!num_arg(optarg, 1, PLAN_MAX_POOL, &v) || v != floor(v))
				BAD("--members=%s: a count from 1 to %d", optarg, PLAN_MAX_POOL);
			o->space.min_members = o->space.max_members = (unsigned)v;
			break;
		case O_CORES:
			if (!num_arg(optarg, 1, 4096, &v) || v != floor(v))
				BAD("--cores=%s: a count from 1 to 4096", optarg);
			r->host.cores = (unsigned)v;
			o->cores_given = true;
			break;
		case O_CPU_IO:
		case O_CPU_MIO:
			if (!num_arg(optarg, 0, 1e6, &v))
				BAD("--%s=%s: microseconds from 0 to 1000000", opt == O_CPU_IO ?
				    "cpu-per-io" : "cpu-per-member-io", optarg);
			if (opt == O_CPU_IO)
				r->host.cpu_us_per_io = v;
			else
				o->cpu_mio = v, o->cpu_mio_given = true;
			break;
		case O_PARITY:
		case O_LINK_BW:
		case O_LINK_IOPS:
			if (!num_arg(optarg, 0, 1e12, &v))
				BAD("--%s=%s: a number from 0", opt == O_PARITY ? "parity-mib-s" :
				    opt == O_LINK_BW ? "link-mib-s" : "link-iops", optarg);
			if (opt == O_PARITY)
				r->host.parity_mib_s = v, o->parity_given = true;
			else if (opt == O_LINK_BW)
				r->host.link_mib_s = v;
			else
				r->host.link_iops = v;
			break;
		case O_TOP:
			if (!num_arg(optarg, 1, 100000, &v) || v != floor(v))
				BAD("--top=%s: a count from 1", optarg);
			r->top = (unsigned)v;
			break;
		case O_JSON: o->json = true; break;
		case O_HTML: o->html = optarg; break;
		case O_VERIFY:
			if (!num_arg(optarg, 1, 100, &v) || v != floor(v))
				BAD("--verify=%s: a count of candidates from 1 to 100", optarg);
			o->verify = (unsigned)v;
			break;
		case O_FORCE: o->force = true; break;
		case O_RUNTIME:
		case O_RAMP:
			if (!num_arg(optarg, opt == O_RAMP ? 0 : 0.1, 3600, &v))
				BAD("--%s=%s: seconds up to 3600", opt == O_RAMP ? "ramp" : "runtime",
				    optarg);
			*(opt == O_RAMP ? &o->ramp : &o->runtime) = v;
			break;
		case O_ROUNDS:
			if (!num_arg(optarg, 1, PLAN_MAX_ROUNDS, &v) || v != floor(v))
				BAD("--rounds=%s: a count from 1 to %d", optarg, PLAN_MAX_ROUNDS);
			o->rounds = (unsigned)v;
			break;
		case O_SEED:
			if (!num_arg(optarg, 0, 1e15, &v) || v != floor(v))
				BAD("--seed=%s: a whole number", optarg);
			o->seed = (uint64_t)v;
			break;
		default:
			rc = cli_bad_option("plan", argv);
			goto out;
		}
	}
	const char *const *members = (const char *const *)argv + optind;
	unsigned nmembers = (unsigned)(argc - optind);
	if (nmembers && !o->verify)
		BAD("'%s': members are only taken with --verify", members[0]);
	if (o->verify && !nmembers)
		BAD("--verify needs the MEMBERs to build the candidates on");
	if (o->verify && !o->force)
		BAD("--verify writes arrays over the MEMBERs (their data is lost): add "
		    "--force-write");
	if (nmembers > PLAN_MAX_POOL)
		BAD("at most %d MEMBERs", PLAN_MAX_POOL);
	/* --verify runs what is predicted: the outstanding I/Os shared evenly */
	if (o->verify && r->wl.qd_per_drive && r->wl.iodepth % r->wl.numjobs)
		BAD("--qd-per-drive=%u with --numjobs=%u: the outstanding I/Os do not divide "
		    "among the jobs; give a multiple of %u", r->wl.iodepth, r->wl.numjobs,
		    r->wl.numjobs);
	if ((rc = build_workload(o, &r->wl)))
		goto out;
	rc = CLI_EXIT_USAGE;
	if (o->verify && o->profile == NULL && o->nacc == 0 && r->wl.line[0].bytes % 4096)
		BAD("--verify: the array needs transfers in 4 KiB multiples");

	struct plan_verify_opts vo = {
		.paths = members, .npaths = nmembers, .flags = BENCH_FORCE_WRITE,
		.runtime_s = o->runtime, .ramp_s = o->ramp, .seed = o->seed,
	};
	if (!r->nmodels) {
		if (!o->verify)
			BAD("no drives: give --drive=SHEET or --drive-model=FILE (see 'uraid plan "
			    "--help')");
		say("no drive model given: measuring %s (4 KiB random at QD 1..32, 1 MiB "
		    "sequential; %.1f s each)", members[0], o->runtime);
		if (plan_verify_characterise(&vo, &r->models[0], err, sizeof(err))) {
			fprintf(stderr, "uraid plan: %s\n", err);
			rc = CLI_EXIT_FAIL;
			goto out;
		}
		r->nmodels = 1;
		have_model = true;
		counts_pending = 1;
		r->drive_source = "measured now on the first MEMBER (quick characterisation)";
		quick = true;
	} else {
		r->drive_source = r->models[0].measured ? "drive model file" : "data sheet";
	}
	if (counts_pending && quick)
		pool_add(r, 0, nmembers);
	else if (counts_pending)
		pool_add_group(r, group_start, o->verify && !o->drives_given &&
			       r->nmodels - group_start == 1 ? nmembers : 1);
	if (o->verify && !o->drives_given)
		r->pool.n = r->pool.n < nmembers ? r->pool.n : nmembers;
	for (unsigned i = 0; i < r->nmodels; i++) {
		unsigned c = 0;
		for (unsigned k = 0; k < r->pool.n; k++)
			c += r->pool.drive[k] == &r->models[i];
		r->model_count[i] = c;
	}

	/* the host: cores issuing I/O, parity measured now */
	if (!o->cores_given)
		r->host.cores = r->wl.numjobs;
	if (!o->parity_given) {
		if (plan_host_measure_parity(&r->host, r->pool.n)) {
			fprintf(stderr, "uraid plan: the parity functions failed on this host\n");
			rc = CLI_EXIT_FAIL;
			goto out;
		}
		r->parity_measured = true;
	}
	bool host_measured = false;
	if (o->cpu_mio_given) {
		r->host.cpu_us_per_member_read = r->host.cpu_us_per_member_write = o->cpu_mio;
	} else if (quick) {
		/* members measured now are files on this host: the CPU is their
		   limit as much as the medium; its costs per client I/O, per member
		   I/O and per parity write measured in CPU time (docs/planner.md) */
		double given_io = r->host.cpu_us_per_io;
		say("measuring the host's CPU per client I/O, per member I/O and each level's "
		    "own work (linear x1..x%u, RAID 0 x2 split, each level on its smallest "
		    "array)", nmembers);
		if (plan_verify_host_costs(&vo, workload_reads(&r->wl), workload_writes(&r->wl),
					   &o->space, &r->host, &r->host_note, err, sizeof(err))) {
			fprintf(stderr, "uraid plan: %s\n", err);
			rc = CLI_EXIT_FAIL;
			goto out;
		}
		if (given_io > 0)
			r->host.cpu_us_per_io = r->host.cpu_us_per_io_write = given_io;
		host_measured = true;
		r->host_measured = true;
	}

	/* an impossible capacity is refused before the search */
	if (r->need.capacity_bytes) {
		double raw = 0;
		for (unsigned i = 0; i < r->pool.n; i++)
			raw += (double)r->pool.drive[i]->capacity_bytes;
		if ((double)r->need.capacity_bytes > raw) {
			char a[32], b[32];
			BAD("--capacity: %s usable cannot be had from %u drive%s of %s in all; give "
			    "more drives or ask for less", cli_bytes(r->need.capacity_bytes, a,
			    sizeof(a)), r->pool.n, r->pool.n == 1 ? "" : "s",
			    cli_bytes((uint64_t)raw, b, sizeof(b)));
		}
	}
	unsigned dropped = 0;
	char drop_why[160];
	if (plan_search(&r->pool, &r->need, &r->wl, &r->host, &o->space, &r->ans, &r->nans,
			&dropped, drop_why, sizeof(drop_why), err, sizeof(err)))
		BAD("%s", err);
	if (dropped)
		say("%u candidate%s left out: cannot be built (the first: %s)", dropped,
		    dropped == 1 ? "" : "s", drop_why);

	if (o->verify) {
		unsigned nv = o->verify < r->nans ? o->verify : r->nans;
		for (unsigned i = 0; i < nv; i++) {
			char name[80];
			plan_cand_name(&r->ans[i], name, sizeof(name));
			if (r->ans[i].c.members > nmembers) {
				say("%s: %u members, %u given: not verified", name,
				    r->ans[i].c.members, nmembers);
				continue;
			}
			say("verifying %u/%u: %s, %u round%s of %.1f s (seed %llu)", i + 1, nv, name,
			    o->rounds, o->rounds == 1 ? "" : "s", o->runtime,
			    (unsigned long long)o->seed);
			if (verify_candidate(r, &vo, i, o->rounds, host_measured, err, sizeof(err))) {
				fprintf(stderr, "uraid plan: %s: %s\n", name, err);
				rc = CLI_EXIT_FAIL;
				goto out;
			}
		}
		r->verified = nv;
	}

	if (o->json)
		plan_print_json(stdout, r);
	else
		plan_print_table(stdout, r);
	rc = CLI_EXIT_OK;
	if (o->html && plan_write_html(r, o->html, err, sizeof(err))) {
		fprintf(stderr, "uraid plan: %s\n", err);
		rc = CLI_EXIT_FAIL;
	}
out:
	free(r->ans);
	free(r);
	free(o);
	return rc;
}
