// SPDX-License-Identifier: MIT
/* uraid bench: the command line (fio's option names, Iometer's access specifications). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <uraid/geom.h>

#include "bench/data.h"
#include "bench/svg.h"
#include "cli/bench_cli.h"
#include "cli/cli.h"
#include "cli/util.h"

static void bench_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid bench [OPTIONS] DEVICE...\n"
		"       uraid bench [OPTIONS] --filename=DEVICE[:DEVICE]...   (a fio command line)\n"
		"       uraid bench --characterise [OPTIONS] DEVICE...   (a drive model)\n"
		"\n"
		"Measure IOPS, MiB/s, latency percentiles and CPU use of a workload (fio's option\n"
		"names, Iometer's access specifications). By default each DEVICE (file or block\n"
		"device) is a raw target, opened with O_DIRECT and driven by its own worker\n"
		"through io_uring (JBOD; at --iodepth=1 with pread and pwrite, the lightest\n"
		"way there). With --array the DEVICEs are the members of one array,\n"
		"assembled and driven in this process through liburaid, each worker driving its\n"
		"own reactor.\n"
		"\n"
		/* NBD targets (branch benchnbd): kept apart for merging */
		"A DEVICE may be an NBD URI: nbd://HOST[:PORT]/EXPORT, nbds://... (TLS),\n"
		"nbd+unix:///EXPORT?socket=PATH. Each worker opens its own connection and keeps\n"
		"--iodepth commands in flight on it (libnbd's asynchronous API); the size comes\n"
		"from the server, a read-only export refuses a workload that writes, and writing\n"
		"to an export needs --force-write.\n"
		"\n"
		"Workload (fio's words):\n"
		"      --rw=read|write|randread|randwrite|rw|randrw\n"
		"                          the I/O (default read; rw is fio's readwrite)\n"
		"      --bs=SIZE           block size, K/M suffix (default 4k; fio's --blocksize)\n"
		"      --bssplit=LIST      block sizes with percentages: 4k/60:64k/40\n"
		"      --rwmixread=PCT     reads in rw/randrw (default 50); --rwmixwrite=PCT\n"
		"      --percentage_random=PCT  random share of I/Os (Iometer's %% random); the\n"
		"                          others start where the worker's previous I/O ended;\n"
		"                          overrides --rw and --profile (not with --access)\n"
		"      --blockalign=SIZE   alignment of random offsets (default: each I/O's size;\n"
		"                          fio's --ba)\n"
		"Workload (Iometer's words; replace the options above):\n"
		"      --access=SPEC       an access specification line SIZE,READ%%,RANDOM%%[,ALIGN]\n"
		"                          [/WEIGHT], e.g. 4k,67,100,4k/60; repeat for more lines\n"
		"                          (weights are %% of I/Os; lines without one share the rest)\n"
		"      --access-file=PATH  the same lines from a file, one per line, # comments\n"
		"                          (at least one line)\n"
		"      --profile=NAME      a built-in workload (see --list-profiles): web-server,\n"
		"                          database, exchange, file-server, workstation,\n"
		"                          streaming-read, streaming-write, 4k-random-read,\n"
		"                          4k-random-write, 128k-seq-read, 128k-seq-write\n"
		"      --list-profiles     print the profiles' access lines and exit\n"
		"Run:\n"
		"      --iodepth=N         outstanding I/Os per worker (default 1)\n"
		"      --numjobs=N         workers (default: one per raw target; 1 for an array\n"
		"                          or a --filename list, as fio runs one job across it)\n"
		"      --runtime=SEC       measured time (default 10; 'ms', 's', 'm', 'h' suffixes;\n"
		"                          fio's --timeout)\n"
		"      --ramp_time=SEC     time run before measuring (default 0)\n"
		"      --size=SIZE         range used in each target (default: all); a raw\n"
		"                          target that does not exist is created to hold it\n"
		"                          (--offset + --size)\n"
		"      --offset=SIZE       start of the range (default 0; fio's --fileoffset)\n"
		"      --rate_iops=N       total I/Os per second; latency then counts from each\n"
		"                          I/O's scheduled start (no coordinated omission)\n"
		"      --seed=N            seed of offsets, mix and data (default 1; fio's\n"
		"                          --randseed)\n"
		"      --direct=0|1        0: page-cache I/O (default 1: O_DIRECT; fio's default\n"
		"                          is 0)\n"
		"      --verify[=crc32c]   stamp every written block with a header (offset,\n"
		"                          sequence number, seed) and its crc32c, check every block\n"
		"                          read, and read back what was written at the end; a\n"
		"                          mismatch names the offset, what was expected and found\n"
		"      --zero_buffers      write zeroes instead of random data (fio's option)\n"
		"      --buffer_pattern=P  write P repeated from the start of every buffer: 0x and\n"
		"                          hex bytes (0xdeadbeef) or a quoted string ('\"abc\"');\n"
		"                          at most 512 bytes (fio's option)\n"
		"Several runs:\n"
		"      --sweep=AXIS        qd=1,2,4 or qd=1..256 (doubling): IOPS and latency per\n"
		"                          queue depth and the X-bit rating (sum of IOPS(QD)/QD,\n"
		"                          QD 1..32); threads=LIST (with qd=: every pair);\n"
		"                          matrix: 8 block sizes x 7 read shares (56 cells,\n"
		"                          random unless --percentage_random; 2 workers at QD 32\n"
		"                          unless --numjobs, --iodepth); drives=1..N: with\n"
		"                          --array --level, the array on the first 1..N DEVICEs and\n"
		"                          the JBOD baseline of the same DEVICEs\n"
		"                          rwmixread=100..0:10: the read share from..to:step (or\n"
		"                          100,70,0) in every access line; bs=512..1M: block\n"
		"                          sizes, doubling (or 4k,64k); bs= and rwmixread= together:\n"
		"                          every pair\n"
		"      --compare=KEY=V1,V2,...\n"
		"                          the workload on several arrays made of the same DEVICEs\n"
		"                          (implies --array; each created anew, as --level does):\n"
		"                          level=0,1,4,5,6,10; members=2,4 (the first N DEVICEs);\n"
		"                          chunk=64K,512K; layout=left-symmetric,...;\n"
		"                          write-cache=through,back (64 MiB write-back). Several\n"
		"                          --compare: every combination. A configuration the\n"
		"                          DEVICEs cannot make, or that repeats one (the chunk of\n"
		"                          RAID 1), is skipped with the reason. With level=, give\n"
		"                          the layout as layout=, not --layout\n"
		"      --precondition[=MAX]  before measuring (SNIA PTS): write the range twice\n"
		"                          sequentially in 128 KiB writes, then run the workload in\n"
		"                          rounds of --runtime until steady (as --steady-state, at\n"
		"                          most MAX rounds, 25); once before a run or a sweep,\n"
		"                          before each configuration of --compare; writes\n"
		"      --steady-state[=MAX]  rounds of --runtime each until the last 5 rounds' IOPS\n"
		"                          lie within 20 %% of their mean and their fitted line\n"
		"                          moves by at most 10 %% (SNIA PTS), at most MAX (25)\n"
		"      --replay=FILE       replay a fio iolog (version 2 or 3) instead, one worker\n"
		"                          with --iodepth outstanding, as fast as possible; the\n"
		"                          trace's files map to the DEVICEs in order (or all to one)\n"
		"      --replay-timed      keep the trace's timestamps (v3) and waits (v2)\n"
		"Targets:\n"
		"      --array             the DEVICEs are the members of one array\n"
		"  -l, --level=L           with --array: first create the array (as uraid create\n"
		"                          --assume-clean --bitmap=none) on the DEVICEs\n"
		"  -c, --chunk=SIZE        its chunk (plain number in KiB; default 512K)\n"
		"  -p, --layout=NAME       its layout (as uraid create)\n"
		"      --member-size=SIZE  with --array: size of members that do not exist,\n"
		"                          created zero-filled\n"
		"      --force-write       allow writing to DEVICEs that existed before this run\n"
		"                          (writing destroys their data; also needed for --level on\n"
		"                          existing DEVICEs)\n"
		"Output:\n"
		"      --json              JSON (sizes in bytes, times in ns, rates per second;\n"
		"                          schema in docs/bench-json.md)\n"
		"      --output-format=human|json|csv\n"
		"                          human (default; fio's normal), json (fio's json and\n"
		"                          json+) or csv\n"
		"      --output=PATH       write the results to PATH instead of stdout\n"
		"      --csv=PATH          also write the results as CSV to PATH\n"
		"      --write_lat_log=PREFIX  also write every measured I/O's latency, as fio's\n"
		"                          option does: PREFIX_lat.N.log for worker N (from 1),\n"
		"                          a line 'MSEC, NSEC, DIR, BYTES, 0' per I/O (completion\n"
		"                          in ms since the measured window began, latency in ns,\n"
		"                          0 read 1 write); the first 4194304 I/Os of a worker\n"
		"                          (held in memory until the run ends, 16 bytes each);\n"
		"                          one run: not with --sweep, --compare, --steady-state\n"
		"      --html=PATH         also write a report to PATH: one self-contained HTML\n"
		"                          file (inline SVG, nothing fetched) with the run's\n"
		"                          description, key figures and the charts that fit it:\n"
		"                          IOPS and latency vs queue depth (a line per thread\n"
		"                          count), scaling vs drive count with the JBOD line,\n"
		"                          the block size x mix matrix as lines and radar,\n"
		"                          latency percentiles, the one-second time series\n"
		"fio's job options (paste a fio command line):\n"
		"      --name=NAME         the job's name (one job: a second --name is refused)\n"
		"      --filename=DEVICE[:DEVICE]...\n"
		"                          the targets instead of DEVICE arguments, as fio lists\n"
		"                          them ('\\:' is a colon in a name); --size is then\n"
		"                          shared by them, as fio does (raw targets)\n"
		"      --ioengine=io_uring|libaio|posixaio|sync|psync|vsync|pvsync|pvsync2\n"
		"                          io_uring, libaio, posixaio: io_uring at the same queue\n"
		"                          depth, 1 included; sync, psync, vsync, pvsync,\n"
		"                          pvsync2: one I/O outstanding per worker, as fio, with\n"
		"                          pread and pwrite (with --array the array's reactors),\n"
		"                          with a note on stderr when that is not the engine named\n"
		"      --buffered[=0|1]    --direct's opposite\n"
		"      --time_based, --group_reporting, --thread, --norandommap,\n"
		"      --random_distribution=random  what uraid bench does anyway: accepted\n"
		"      --fixedbufs, --registerfiles  (io_uring's) also what uraid bench does\n"
		"                          (raw targets, when the kernel allows)\n"
		"      --randrepeat[=0|1]  1 (fio's default): the same stream every run; 0: a seed\n"
		"                          from the clock unless --seed (the output has it)\n"
		"      --readonly          refuse a run that writes (the workload, --sweep=matrix\n"
		"                          or drives=, --level), before anything runs\n"
		/* --characterise (branch benchnbd): kept apart for merging */
		"Drive model:\n"
		"      --characterise      measure each DEVICE alone (one worker): 4 KiB random\n"
		"                          read and write at QD 1, 2, 4, 8, 16, 32 (IOPS, mean\n"
		"                          and p99 latency), 70/30 4 KiB random at QD 1 and 32,\n"
		"                          sequential read and write MiB/s at 128 KiB and 1 MiB\n"
		"                          (QD 8); reads before writes. Writes the drive model\n"
		"                          JSON (docs/json.md) to --output or stdout: an object\n"
		"                          for one DEVICE, an array of one per DEVICE for several;\n"
		"                          a short table goes to stdout with --output, else to\n"
		"                          stderr. Takes --runtime (per point, default 1 s),\n"
		"                          --ramp_time (default 0.25 s), --size (range used; a\n"
		"                          DEVICE that does not exist is created at it),\n"
		"                          --force-write (needed for any DEVICE that exists),\n"
		"                          --direct, --seed; 18 points per DEVICE\n"
		"  -h, --help              this text\n"
		"\n"
		"Write data is random (incompressible) unless --zero_buffers or --buffer_pattern\n"
		"(with --verify each block's header is stamped over it). DEVICEs the run\n"
		"creates may be written without --force-write. Latency percentiles come from a\n"
		"log-linear histogram (error below 0.4 %%, range about 4.9 hours); CPU is user\n"
		"and system time of the whole process during the measured window, in %% of one\n"
		"CPU. Runs of several cells show a progress line on stderr (cell, elapsed, ETA);\n"
		"a single run or a replay shows one when stderr is a terminal and it has run 2 s.\n"
		"Random offsets are drawn with replacement (as fio's --norandommap). Other fio\n"
		"options, and fio's values that would change what is measured (--time_based=0,\n"
		"--group_reporting=0, --verify=md5...), are refused with their name.\n");
}

static void list_profiles(FILE *f)
{
	for (unsigned i = 0; bench_profile_at(i); i++) {
		const struct bench_profile *p = bench_profile_at(i);
		fprintf(f, "%-16s %s\n", p->name, p->desc);
		for (unsigned k = 0; k < p->nlines; k++) {
			char sz[32];
			const struct bench_access *l = &p->line[k];
			if (l->bytes % 1024)
				snprintf(sz, sizeof(sz), "%u", l->bytes);
			else
				snprintf(sz, sizeof(sz), "%uk", l->bytes / 1024);
			fprintf(f, "%16s --access=%s,%u,%u/%u\n", "", sz, l->read_pct,
				l->random_pct, l->weight);
		}
	}
}

enum {
	OPT_RW = 256, OPT_BS, OPT_BSSPLIT, OPT_RWMIXREAD, OPT_RWMIXWRITE, OPT_PCTRANDOM,
	OPT_BLOCKALIGN, OPT_IODEPTH, OPT_NUMJOBS, OPT_RUNTIME, OPT_RAMP, OPT_SIZE, OPT_OFFSET,
	OPT_RATE, OPT_SEED, OPT_DIRECT, OPT_ARRAY, OPT_MEMBER_SIZE, OPT_FORCE_WRITE, OPT_JSON,
	OPT_ACCESS, OPT_ACCESS_FILE, OPT_PROFILE, OPT_LIST_PROFILES, OPT_VERIFY, OPT_FORMAT,
	OPT_CSV, OPT_HTML, OPT_LAT_LOG, OPT_SWEEP, OPT_STEADY, OPT_REPLAY, OPT_REPLAY_TIMED,
	OPT_COMPARE, OPT_PRECONDITION,
	OPT_ZERO_BUFFERS, OPT_BUFFER_PATTERN,
	/* fio's job options that uraid bench takes as they are or maps (bench_fio.c) */
	OPT_NAME, OPT_FILENAME, OPT_IOENGINE, OPT_BUFFERED, OPT_TIME_BASED, OPT_GROUP_REPORTING,
	OPT_THREAD, OPT_NORANDOMMAP, OPT_RANDREPEAT, OPT_RANDOM_DIST, OPT_OUTPUT, OPT_READONLY,
	OPT_FIXEDBUFS,
};

static const struct option bench_opts[] = {
	{ "rw", required_argument, NULL, OPT_RW },
	{ "readwrite", required_argument, NULL, OPT_RW },
	{ "bs", required_argument, NULL, OPT_BS },
	{ "blocksize", required_argument, NULL, OPT_BS },
	{ "bssplit", required_argument, NULL, OPT_BSSPLIT },
	{ "rwmixread", required_argument, NULL, OPT_RWMIXREAD },
	{ "rwmixwrite", required_argument, NULL, OPT_RWMIXWRITE },
	{ "percentage_random", required_argument, NULL, OPT_PCTRANDOM },
	{ "blockalign", required_argument, NULL, OPT_BLOCKALIGN },
	{ "ba", required_argument, NULL, OPT_BLOCKALIGN },
	{ "access", required_argument, NULL, OPT_ACCESS },
	{ "access-file", required_argument, NULL, OPT_ACCESS_FILE },
	{ "profile", required_argument, NULL, OPT_PROFILE },
	{ "list-profiles", no_argument, NULL, OPT_LIST_PROFILES },
	{ "iodepth", required_argument, NULL, OPT_IODEPTH },
	{ "numjobs", required_argument, NULL, OPT_NUMJOBS },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "timeout", required_argument, NULL, OPT_RUNTIME },
	{ "ramp_time", required_argument, NULL, OPT_RAMP },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "fileoffset", required_argument, NULL, OPT_OFFSET },
	{ "rate_iops", required_argument, NULL, OPT_RATE },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "randseed", required_argument, NULL, OPT_SEED },
	{ "direct", required_argument, NULL, OPT_DIRECT },
	{ "verify", optional_argument, NULL, OPT_VERIFY },
	{ "zero_buffers", no_argument, NULL, OPT_ZERO_BUFFERS },
	{ "buffer_pattern", required_argument, NULL, OPT_BUFFER_PATTERN },
	{ "sweep", required_argument, NULL, OPT_SWEEP },
	{ "steady-state", optional_argument, NULL, OPT_STEADY },
	{ "compare", required_argument, NULL, OPT_COMPARE },
	{ "precondition", optional_argument, NULL, OPT_PRECONDITION },
	{ "replay", required_argument, NULL, OPT_REPLAY },
	{ "replay-timed", no_argument, NULL, OPT_REPLAY_TIMED },
	{ "array", no_argument, NULL, OPT_ARRAY },
	{ "level", required_argument, NULL, 'l' },
	{ "chunk", required_argument, NULL, 'c' },
	{ "layout", required_argument, NULL, 'p' },
	{ "member-size", required_argument, NULL, OPT_MEMBER_SIZE },
	{ "force-write", no_argument, NULL, OPT_FORCE_WRITE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "output-format", required_argument, NULL, OPT_FORMAT },
	{ "csv", required_argument, NULL, OPT_CSV },
	{ "html", required_argument, NULL, OPT_HTML },
	{ "write_lat_log", required_argument, NULL, OPT_LAT_LOG },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "name", required_argument, NULL, OPT_NAME },
	{ "filename", required_argument, NULL, OPT_FILENAME },
	{ "ioengine", required_argument, NULL, OPT_IOENGINE },
	{ "buffered", optional_argument, NULL, OPT_BUFFERED },
	{ "time_based", optional_argument, NULL, OPT_TIME_BASED },
	{ "group_reporting", optional_argument, NULL, OPT_GROUP_REPORTING },
	{ "thread", optional_argument, NULL, OPT_THREAD },
	{ "norandommap", optional_argument, NULL, OPT_NORANDOMMAP },
	{ "randrepeat", optional_argument, NULL, OPT_RANDREPEAT },
	{ "random_distribution", required_argument, NULL, OPT_RANDOM_DIST },
	{ "readonly", optional_argument, NULL, OPT_READONLY },
	{ "fixedbufs", optional_argument, NULL, OPT_FIXEDBUFS },
	{ "registerfiles", optional_argument, NULL, OPT_FIXEDBUFS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
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

/*
 * "10", "10s", "2m", "1.5", "500ms" seconds, at most BENCH_MAX_SECONDS: the
 * run converts times to integer ns, which inf or 1e300 would overflow.
 */
static int parse_seconds(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v >= 0) || !isfinite(v))
		return -EINVAL;
	if (!strcmp(end, "m") || !strcmp(end, "min"))
		v *= 60;
	else if (!strcmp(end, "h"))
		v *= 3600;
	else if (!strcmp(end, "ms"))
		v /= 1000;
	else if (*end && strcmp(end, "s"))
		return -EINVAL;
	if (v > BENCH_MAX_SECONDS)
		return -EINVAL;
	*out = v;
	return 0;
}

/* --rw: the read share and the random share it implies. */
static int rw_mode(const char *rw, unsigned *read, unsigned *random, bool *mixed)
{
	static const struct { const char *name; unsigned read, random; } modes[] = {
		{ "read", 100, 0 }, { "write", 0, 0 }, { "randread", 100, 100 },
		{ "randwrite", 0, 100 }, { "rw", 50, 0 }, { "readwrite", 50, 0 },
		{ "randrw", 50, 100 },
	};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcmp(rw, modes[i].name))
			continue;
		*read = modes[i].read;
		*random = modes[i].random;
		*mixed = modes[i].read == 50;
		return 0;
	}
	return -EINVAL;
}

/* The access lines: from a profile, from --access, or from fio's options. */
static int build_lines(struct bench_cli *c, unsigned rwmix_read, unsigned pct_random)
{
	char err[200];
	bool fio_opts = c->rw_given || c->bs_given || c->rwmix_given;

	if ((c->profile || c->nacc) && fio_opts)
		return usage_error("%s", "--profile and --access replace --rw, --bs, --bssplit "
				   "and --rwmix*: give one or the other");
	if (c->profile && c->nacc)
		return usage_error("%s", "--profile and --access: give one or the other");
	if (c->nacc && c->random_given)
		return usage_error("%s", "--access lines give their own % random: drop "
				   "--percentage_random");
	if (c->profile) {
		const struct bench_profile *p = bench_profile_find(c->profile);
		if (!p)
			return usage_error("unknown profile '%s' (see --list-profiles)", c->profile);
		c->plan.wl.nlines = p->nlines;
		memcpy(c->plan.wl.line, p->line, sizeof(p->line));
		snprintf(c->what, sizeof(c->what), "profile %s", p->name);
		/* as with --rw, --percentage_random overrides what the profile implies */
		if (c->random_given) {
			for (unsigned i = 0; i < c->plan.wl.nlines; i++)
				c->plan.wl.line[i].random_pct = pct_random;
			snprintf(c->what, sizeof(c->what), "profile %s, %u %% random", p->name,
				 pct_random);
		}
		return 0;
	}
	if (c->nacc) {
		if (bench_access_finish(c->acc, c->acc_weight, &c->nacc, err, sizeof(err)))
			return usage_error("--access: %s", err);
		c->plan.wl.nlines = c->nacc;
		memcpy(c->plan.wl.line, c->acc, sizeof(c->acc));
		snprintf(c->what, sizeof(c->what), "%u access line%s", c->nacc,
			 c->nacc == 1 ? "" : "s");
		return 0;
	}
	unsigned read, random;
	bool mixed;
	if (rw_mode(c->rw, &read, &random, &mixed))
		return usage_error("--rw=%s: read, write, randread, randwrite, rw or randrw", c->rw);
	if (mixed && c->rwmix_given)
		read = rwmix_read;
	if (c->random_given)
		random = pct_random;
	c->plan.wl.nlines = c->nbs;
	for (unsigned i = 0; i < c->nbs; i++) {
		c->plan.wl.line[i] = c->bs[i];
		c->plan.wl.line[i].read_pct = read;
		c->plan.wl.line[i].random_pct = random;
	}
	char bs[32];
	if (c->nbs == 1)
		svg_format(bs, sizeof(bs), SVG_UNIT_BYTES, c->bs[0].bytes, 0);  /* as the report */
	else
		snprintf(bs, sizeof(bs), "bssplit of %u sizes", c->nbs);
	snprintf(c->what, sizeof(c->what), "%s, %s", c->rw, bs);
	return 0;
}

/* Options that contradict each other, and what --replay or the sweeps need. */
static int check_combinations(struct bench_cli *c)
{
	if ((c->plan.tg.flags & BENCH_CREATE) && c->plan.tg.kind != BENCH_ARRAY)
		return usage_error("%s", "--level needs --array");
	if (c->plan.tg.create_bytes && c->plan.tg.kind != BENCH_ARRAY)
		return usage_error("%s", "--member-size needs --array (raw targets that do not "
				   "exist are created at --size)");
	if (c->layout) {
		/* a layout name belongs to one level: with several, each needs its own */
		for (unsigned a = 0; a < c->plan.cmp.naxes; a++)
			if (!strcmp(c->plan.cmp.axis[a].key->name, "level")) {
				char msg[256];
				snprintf(msg, sizeof(msg), "--layout=%.64s with --compare=level=...: "
					 "a layout belongs to one level; give it as "
					 "--compare=layout=%.64s", c->layout, c->layout);
				return usage_error("%s", msg);
			}
		if (!(c->plan.tg.flags & BENCH_CREATE))
			return usage_error("%s", "--layout needs --level");
		if (uraid_layout_parse(c->plan.tg.level, c->layout, &c->plan.tg.layout))
			return usage_error("unknown layout '%s' for this level", c->layout);
		c->plan.tg.layout_given = true;
	}
	if (c->sweep && c->plan.steady_max)
		return usage_error("%s", "--sweep and --steady-state do not combine");
	if (c->lat_log_prefix && (c->sweep || c->compare || c->plan.steady_max))
		return usage_error("%s", "--write_lat_log logs one measured run: not with --sweep, "
				   "--compare or --steady-state");
	if (c->compare && (c->sweep || c->plan.steady_max || c->replay_path))
		return usage_error("%s", "--compare runs the workload once per configuration: not "
				   "with --sweep, --steady-state or --replay");
	if (c->plan.precondition && (c->plan.steady_max || c->replay_path))
		return usage_error("%s", "--precondition ends in steady state before a measured "
				   "run: not with --steady-state or --replay");
	if (c->plan.precondition && c->plan.axes.ndrives)
		return usage_error("%s", "--precondition with --sweep=drives: each cell is another "
				   "array (use --compare=members=... instead)");
	if (c->replay_path && (c->sweep || c->plan.steady_max || c->profile || c->nacc ||
			       (c->plan.wl.flags & BENCH_VERIFY) || c->plan.wl.rate_iops))
		return usage_error("%s", "--replay does not combine with --sweep, --steady-state, "
				   "--profile, --access, --verify or --rate_iops");
	if ((c->plan.wl.flags & BENCH_REPLAY_TIMED) && !c->replay_path)
		return usage_error("%s", "--replay-timed needs --replay");
	if (c->plan.axes.ndrives &&
	    !(c->plan.tg.kind == BENCH_ARRAY && (c->plan.tg.flags & BENCH_CREATE)))
		return usage_error("%s", "--sweep drives=... needs --array and --level (the array "
				   "is built on the first N DEVICEs)");
	if (c->plan.axes.matrix && (c->profile || c->nacc || c->nbs > 1))
		return usage_error("%s", "--sweep matrix sets block size and mix itself: drop "
				   "--profile, --access and --bssplit");
	return 0;
}

/* The report is written after the run: refuse a path that cannot be written before it. */
static int check_out_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	if (!slash)
		return access(".", W_OK | X_OK);
	if ((size_t)(slash - path) >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, (size_t)(slash - path));
	dir[slash - path] = 0;
	return access(slash == path ? "/" : dir, W_OK | X_OK);
}

/* An output file's path (OPTION=PATH), checked before the run; *path = PATH. */
static int check_out_path(const char *option, const char *arg, const char **path)
{
	char msg[512];
	struct stat st;

	if (!*arg || check_out_dir(arg))
		snprintf(msg, sizeof(msg), "%s=%s: the folder does not exist or is not writable",
			 option, arg);
	else if (!stat(arg, &st) && S_ISDIR(st.st_mode))
		snprintf(msg, sizeof(msg), "%s=%s: a folder; give a file's path", option, arg);
	else if (!stat(arg, &st) && access(arg, W_OK))
		snprintf(msg, sizeof(msg), "%s=%s: not writable", option, arg);
	else {
		*path = arg;
		return 0;
	}
	return usage_error("%s", msg);
}

/* fio's job options without a uraid name of their own (bench_fio.c maps them). */
static int parse_fio(struct bench_cli *c, int opt)
{
	char err[240];
	int yes = bench_fio_bool(optarg);

	switch (opt) {
	case OPT_NAME:
		/* on fio's command line every --name starts one more job */
		if (c->fio.name)
			return usage_error("--name=%s: a second job; uraid bench runs one job (give "
					   "--name once)", optarg);
		c->fio.name = optarg;
		break;
	case OPT_FILENAME:
		if (bench_fio_filename(&c->fio, optarg, err, sizeof(err)))
			return usage_error("%s", err);
		break;
	case OPT_IOENGINE:
		if (bench_fio_engine(&c->fio, optarg, err, sizeof(err)))
			return usage_error("%s", err);
		break;
	case OPT_BUFFERED:
		if (yes < 0)
			return usage_error("--buffered=%s: 0 or 1", optarg);
		if (yes)
			c->plan.tg.flags |= BENCH_BUFFERED;
		else
			c->plan.tg.flags &= ~BENCH_BUFFERED;
		break;
	case OPT_TIME_BASED:
		/* uraid bench always runs for --runtime; fio would stop after --size bytes */
		if (yes != 1)
			return usage_error("--time_based=%s: uraid bench always runs for --runtime "
					   "(leave the option out or give it without a value)",
					   optarg);
		c->fio.time_based = true;
		break;
	case OPT_GROUP_REPORTING:
		if (yes != 1)
			return usage_error("--group_reporting=%s: uraid bench reports all workers "
					   "together only", optarg);
		break;
	case OPT_THREAD:
		if (yes < 0)       /* workers are threads either way: nothing measured changes */
			return usage_error("--thread=%s: 0 or 1", optarg);
		break;
	case OPT_NORANDOMMAP:
		if (yes != 1)
			return usage_error("--norandommap=%s: uraid bench draws random offsets "
					   "with replacement (fio's --norandommap); fio's random "
					   "map is not supported", optarg);
		break;
	case OPT_RANDREPEAT:
		if (yes < 0)
			return usage_error("--randrepeat=%s: 0 or 1", optarg);
		c->fio.randrepeat_off = !yes;
		break;
	case OPT_READONLY:
		if (yes < 0)
			return usage_error("--readonly=%s: 0 or 1", optarg);
		c->fio.readonly = yes;
		break;
	case OPT_FIXEDBUFS:
		if (yes != 1)
			return usage_error("%s", "--fixedbufs=0, --registerfiles=0: uraid bench "
					   "registers its buffers and raw targets with the ring "
					   "when the kernel allows");
		break;
	case OPT_RANDOM_DIST:
		if (strcmp(optarg, "random"))
			return usage_error("--random_distribution=%s: uraid bench draws uniform "
					   "random offsets only (random)", optarg);
		break;
	default:
		return usage_error("%s", "unknown option");
	}
	return 0;
}

static int parse_one(struct bench_cli *c, int opt, unsigned *rwmix_read, unsigned *pct_random)
{
	char err[240];
	uint64_t v;

	switch (opt) {
	case OPT_RW:
		c->rw = optarg;
		c->rw_given = true;
		break;
	case OPT_BS:
		if (cli_parse_size(optarg, 1, &v) || !v || v % 512 || v > BENCH_MAX_BS)
			return usage_error("--bs=%s: a multiple of 512 up to 16M", optarg);
		c->nbs = 1;
		c->bs[0] = (struct bench_access){ .bytes = (uint32_t)v, .weight = 100 };
		c->bs_given = true;
		break;
	case OPT_BSSPLIT:
		if (bench_parse_bssplit(optarg, c->bs, &c->nbs, err, sizeof(err)))
			return usage_error("%s", err);
		for (unsigned i = 0; i < c->nbs; i++)
			if (c->bs[i].bytes % 512 || c->bs[i].bytes > BENCH_MAX_BS)
				return usage_error("--bssplit=%s: sizes are multiples of 512 up to 16M",
						   optarg);
		c->bs_given = true;
		break;
	case OPT_RWMIXREAD:
	case OPT_RWMIXWRITE:
		if (parse_uint(optarg, 100, &v))
			return usage_error("--rwmix*=%s: a percentage", optarg);
		*rwmix_read = (unsigned)(opt == OPT_RWMIXREAD ? v : 100 - v);
		c->rwmix_given = true;
		break;
	case OPT_PCTRANDOM:
		if (parse_uint(optarg, 100, &v))
			return usage_error("--percentage_random=%s: a percentage", optarg);
		*pct_random = (unsigned)v;
		c->random_given = true;
		break;
	case OPT_BLOCKALIGN:
		if (cli_parse_size(optarg, 1, &v) || !v || v % 512 || v > UINT32_MAX)
			return usage_error("--blockalign=%s: a multiple of 512", optarg);
		c->plan.wl.align = (uint32_t)v;
		break;
	case OPT_ACCESS:
		if (c->nacc == BENCH_MAX_LINES)
			return usage_error("--access: at most %s lines", "16");
		if (bench_parse_access(optarg, &c->acc[c->nacc], &c->acc_weight[c->nacc], err,
				       sizeof(err)))
			return usage_error("--access: %s", err);
		c->nacc++;
		break;
	case OPT_ACCESS_FILE:
		if (bench_load_access_file(optarg, c->acc, c->acc_weight, &c->nacc, err,
					   sizeof(err)))
			return usage_error("--access-file: %s", err);
		break;
	case OPT_PROFILE:
		c->profile = optarg;
		break;
	case OPT_IODEPTH:
		if (parse_uint(optarg, 4096, &v) || !v)
			return usage_error("--iodepth=%s: 1..4096", optarg);
		c->plan.wl.iodepth = (unsigned)v;
		c->iodepth_given = true;
		break;
	case OPT_NUMJOBS:
		if (parse_uint(optarg, BENCH_MAX_WORKERS, &v) || !v)
			return usage_error("--numjobs=%s: 1..256", optarg);
		c->plan.wl.workers = (unsigned)v;
		c->numjobs_given = true;
		break;
	case OPT_RUNTIME:
		if (parse_seconds(optarg, &c->plan.wl.runtime_s) || !(c->plan.wl.runtime_s > 0))
			return usage_error("--runtime=%s: seconds, more than 0 and at most 1000000",
					   optarg);
		c->runtime_given = true;
		break;
	case OPT_RAMP:
		if (parse_seconds(optarg, &c->plan.wl.ramp_s))
			return usage_error("--ramp_time=%s: seconds from 0, at most 1000000", optarg);
		break;
	case OPT_SIZE:
		if (cli_parse_size(optarg, 1, &c->plan.wl.size) || c->plan.wl.size % 512)
			return usage_error("--size=%s: a multiple of 512", optarg);
		/* 0 inside the run means "to the end": leaving --size out says that */
		if (!c->plan.wl.size)
			return usage_error("--size=%s: more than 0 (leave --size out to use the whole "
					   "target)", optarg);
		break;
	case OPT_OFFSET:
		if (cli_parse_size(optarg, 1, &c->plan.wl.offset) || c->plan.wl.offset % 512)
			return usage_error("--offset=%s: a multiple of 512", optarg);
		break;
	case OPT_RATE:
		if (parse_uint(optarg, UINT64_MAX, &c->plan.wl.rate_iops) || !c->plan.wl.rate_iops)
			return usage_error("--rate_iops=%s: a positive number", optarg);
		break;
	case OPT_SEED:
		if (parse_uint(optarg, UINT64_MAX, &c->plan.wl.seed))
			return usage_error("--seed=%s: a number", optarg);
		c->fio.seed_given = true;
		break;
	case OPT_DIRECT:
		if (bench_fio_bool(optarg) < 0)   /* fio's spellings: 1, true, on... */
			return usage_error("--direct=%s: 0 or 1", optarg);
		if (!bench_fio_bool(optarg))
			c->plan.tg.flags |= BENCH_BUFFERED;
		else
			c->plan.tg.flags &= ~BENCH_BUFFERED;
		break;
	case OPT_VERIFY:
		/* fio's --verify=crc32c is uraid's check; other digests are not */
		if (!optarg || !strcmp(optarg, "crc32c") || !strcmp(optarg, "crc32c-intel"))
			c->plan.wl.flags |= BENCH_VERIFY;
		else if (!strcmp(optarg, "0") || !strcmp(optarg, "none"))
			c->plan.wl.flags &= ~BENCH_VERIFY;
		else
			return usage_error("--verify=%s: uraid bench checks crc32c (--verify or "
					   "--verify=crc32c; none or 0: no check)", optarg);
		break;
	case OPT_ZERO_BUFFERS:
	case OPT_BUFFER_PATTERN:
		/* two data options would leave one silently unused */
		if (c->plan.wl.data != BENCH_DATA_RANDOM)
			return usage_error("%s", "give --zero_buffers or --buffer_pattern, once");
		if (opt == OPT_ZERO_BUFFERS) {
			c->plan.wl.data = BENCH_DATA_ZERO;
			break;
		}
		if (bench_parse_pattern(optarg, c->plan.wl.pattern, &c->plan.wl.pattern_len, err,
					sizeof(err)))
			return usage_error("%s", err);
		c->plan.wl.data = BENCH_DATA_PATTERN;
		break;
	case OPT_SWEEP:
		if (bench_axes_parse(optarg, &c->plan.axes, err, sizeof(err)))
			return usage_error("%s", err);
		c->sweep = true;
		break;
	case OPT_COMPARE:
		if (bench_compare_parse(optarg, &c->plan.cmp, err, sizeof(err)))
			return usage_error("%s", err);
		c->compare = true;
		break;
	case OPT_PRECONDITION:
		c->plan.precondition = true;
		if (optarg && (parse_uint(optarg, 1000, &v) || v < BENCH_SS_WINDOW))
			return usage_error("--precondition=%s: at most this many rounds of the "
					   "workload, 5..1000", optarg);
		c->plan.precondition_max = optarg ? (unsigned)v : 0;
		break;
	case OPT_STEADY:
		c->plan.steady_max = BENCH_SS_MAX_ROUNDS;
		if (optarg && (parse_uint(optarg, 1000, &v) || v < BENCH_SS_WINDOW))
			return usage_error("--steady-state=%s: at most this many rounds, 5..1000",
					   optarg);
		if (optarg)
			c->plan.steady_max = (unsigned)v;
		break;
	case OPT_REPLAY:
		c->replay_path = optarg;
		break;
	case OPT_REPLAY_TIMED:
		c->plan.wl.flags |= BENCH_REPLAY_TIMED;
		break;
	case OPT_ARRAY:
		c->plan.tg.kind = BENCH_ARRAY;
		break;
	case 'l':
		if (uraid_level_parse(optarg, &c->plan.tg.level))
			return usage_error("unknown RAID level '%s'", optarg);
		c->plan.tg.flags |= BENCH_CREATE;
		break;
	case 'c':
		if (cli_parse_size(optarg, 1024, &v) || v < 4096 || v % 4096 ||
		    v / 1024 > UINT32_MAX)
			return usage_error("--chunk=%s: a multiple of 4K", optarg);
		c->plan.tg.chunk_kib = (uint32_t)(v / 1024);
		break;
	case 'p':
		c->layout = optarg;
		break;
	case OPT_MEMBER_SIZE:
		if (cli_parse_size(optarg, 1, &v) || !v || v % 4096)
			return usage_error("--member-size=%s: a multiple of 4K", optarg);
		c->plan.tg.create_bytes = v;
		break;
	case OPT_FORCE_WRITE:
		c->plan.tg.flags |= BENCH_FORCE_WRITE;
		break;
	case OPT_JSON:
		c->fmt = BENCH_FMT_JSON;
		break;
	case OPT_FORMAT:
		/* fio's names: normal, json, json+ (whose latency buckets uraid has not) */
		if (!strcmp(optarg, "human") || !strcmp(optarg, "normal"))
			c->fmt = BENCH_FMT_HUMAN;
		else if (!strcmp(optarg, "json") || !strcmp(optarg, "json+"))
			c->fmt = BENCH_FMT_JSON;
		else if (!strcmp(optarg, "csv"))
			c->fmt = BENCH_FMT_CSV;
		else
			return usage_error("--output-format=%s: human (normal), json or csv", optarg);
		break;
	case OPT_CSV:
		return check_out_path("--csv", optarg, &c->csv_path);
	case OPT_HTML:
		return check_out_path("--html", optarg, &c->html_path);
	case OPT_LAT_LOG:
		/* PREFIX_lat.N.log: the folder must take new files */
		if (!*optarg || optarg[strlen(optarg) - 1] == '/' || check_out_dir(optarg))
			return usage_error("--write_lat_log=%s: the folder does not exist or is not "
					   "writable (give a folder and a file name prefix)", optarg);
		c->lat_log_prefix = optarg;
		c->plan.wl.lat_log_max = BENCH_LAT_LOG_MAX;
		break;
	case OPT_OUTPUT:
		return check_out_path("--output", optarg, &c->out_path);
	default:
		return parse_fio(c, opt);
	}
	return 0;
}

/*
 * getopt's complaint, as one line naming the option: one uraid bench does
 * not know (fio has many more; refusing is better than running something
 * else than what the pasted line asks), or a value missing or too many.
 */
static int not_an_option(const char *name)
{
	return usage_error("%s: not an option of uraid bench (it takes fio's common options, "
			   "listed in its help)", name);
}

static int bad_option(char **argv)
{
	char name[64];
	const char *arg = argv[optind - 1];
	bool has_value = strchr(arg, '=') != NULL;

	/*
	 * optopt is the short option's letter, or a long option's value: the
	 * long options whose value is a letter (--level...) say which by the
	 * word, the last one taken; any other letter is a short option's, found
	 * inside a cluster ("-xy") that need not be the last word taken.
	 */
	bool letter = optopt > 0 && optopt < 256;
	if (letter && (!strchr("lcph", optopt) || strncmp(arg, "--", 2))) {
		snprintf(name, sizeof(name), "-%c", optopt);
		return usage_error(strchr("lcp", optopt) ? "%s: needs a value" :
				   "%s: not an option of uraid bench", name);
	}
	snprintf(name, sizeof(name), "%.*s", (int)strcspn(arg, "="), arg);
	if (!optopt)
		return not_an_option(name);
	return usage_error(has_value ? "%s: takes no value" : "%s: needs a value", name);
}

/*
 * getopt_long takes a prefix of a long option for the option: fio's --rate
 * would run as --rate_iops, --mem as --member-size. A pasted line must run
 * what it says, so the name typed must be the table's name exactly.
 */
static int check_exact_name(char **argv, int longindex)
{
	const struct option *o = &bench_opts[longindex];
	const char *word = argv[optind - 1];

	/* "--opt VALUE": the value is the last word taken, the option the one before */
	if (o->has_arg == required_argument && optarg == argv[optind - 1] && optind >= 2)
		word = argv[optind - 2];
	if (strncmp(word, "--", 2))
		return 0;
	word += 2;
	size_t len = strcspn(word, "=");
	if (len == strlen(o->name) && !strncmp(word, o->name, len))
		return 0;
	char name[64];
	snprintf(name, sizeof(name), "--%.*s", (int)len, word);
	return not_an_option(name);
}

int bench_parse_args(int argc, char **argv, struct bench_cli *c)
{
	unsigned rwmix_read = 50, pct_random = 0;
	int opt, rc;

	c->rw = "read";
	c->nbs = 1;
	c->bs[0] = (struct bench_access){ .bytes = 4096, .weight = 100 };
	c->plan.wl.iodepth = 1;
	c->plan.wl.runtime_s = 10;
	c->plan.wl.seed = 1;
	c->plan.tg.kind = BENCH_RAW;
	c->argc = argc;
	c->argv = argv;
	optind = 1;
	opterr = 0;
	int longindex = -1;
	while ((opt = getopt_long(argc, argv, "l:c:p:h", bench_opts, &longindex)) != -1) {
		if (opt == '?')
			return bad_option(argv);
		if (longindex >= 0 && (rc = check_exact_name(argv, longindex)))
			return rc;
		longindex = -1;
		if (opt == 'h') {
			bench_usage(stdout);
			return -1;
		}
		if (opt == OPT_LIST_PROFILES) {
			list_profiles(stdout);
			return -1;
		}
		if ((rc = parse_one(c, opt, &rwmix_read, &pct_random)))
			return rc;
	}
	if (c->replay_path) {
		char err[320];
		if (bench_trace_load(c->replay_path, &c->trace, err, sizeof(err))) {
			fprintf(stderr, "uraid bench: --replay: %s\n", err);
			return CLI_EXIT_USAGE;
		}
		c->plan.wl.trace = &c->trace;
		if (!c->runtime_given)
			c->plan.wl.runtime_s = 0;    /* to the end of the trace */
		snprintf(c->what, sizeof(c->what), "replay of %s", c->replay_path);
	} else if ((rc = build_lines(c, rwmix_read, pct_random))) {
		return rc;
	}
	if (c->compare)      /* the DEVICEs are the members of every configuration */
		c->plan.tg.kind = BENCH_ARRAY;
	if (c->plan.axes.matrix && !c->random_given)
		c->plan.wl.line[0].random_pct = 100;     /* the matrix is random unless told */
	/* the review method runs the matrix with two workers at QD 32 (workloads.md section 1) */
	if (c->plan.axes.matrix && !c->numjobs_given)
		c->plan.wl.workers = BENCH_MATRIX_WORKERS;
	if (c->plan.axes.matrix && !c->iodepth_given)
		c->plan.wl.iodepth = BENCH_MATRIX_IODEPTH;
	if (c->plan.axes.matrix)     /* the cells set size and mix: --rw and --bs say nothing */
		snprintf(c->what, sizeof(c->what), "block size × read/write mix, %u %% random",
			 c->plan.wl.line[0].random_pct);
	/* a swept block size or read share is the cells', not what --bs or --rwmixread said */
	if ((c->plan.axes.nbs || c->plan.axes.nrwmix) && !c->replay_path)
		snprintf(c->what, sizeof(c->what), "%s, %s swept", c->profile ? c->profile :
			 c->nacc ? "access lines" : c->rw, c->plan.axes.nbs && c->plan.axes.nrwmix ?
			 "block size and read share" : c->plan.axes.nbs ? "block size" : "read share");
	if ((rc = check_combinations(c)))
		return rc;
	/* the checks above leave at most one of these (bench_fio_finish asks whether it writes) */
	c->plan.kind = c->compare ? BENCH_RUN_COMPARE : c->sweep ? BENCH_RUN_SWEEP :
		       c->plan.steady_max ? BENCH_RUN_STEADY : c->replay_path ? BENCH_RUN_REPLAY :
		       BENCH_RUN_SINGLE;
	/* "uraid bench fio --name=..." (the fio command pasted whole): fio is no target */
	if (optind < argc && !strcmp(argv[optind], "fio") && access("fio", F_OK))
		return usage_error("%s", "'fio' is not a target: drop the word fio and give fio's "
				   "options after 'uraid bench'");
	char err[240];
	if (bench_fio_finish(c, (unsigned)(argc - optind), err, sizeof(err)))
		return usage_error("%s", err);
	if (optind >= argc && !c->fio.nfiles)
		return usage_error("%s", "no DEVICE given (or --filename=NAME[:NAME]...)");
	/* a raw target the run creates holds the whole range (rounded up to 4 KiB, the
	   unit it is written in), not --size bytes of which --offset are never used */
	if (c->plan.tg.kind == BENCH_RAW && c->plan.wl.size) {
		if (c->plan.wl.size > UINT64_MAX - 4095 - c->plan.wl.offset)
			return usage_error("%s", "--offset + --size is too large");
		c->plan.tg.create_bytes = (c->plan.wl.offset + c->plan.wl.size + 4095) & ~4095ull;
	}
	if (c->fio.nfiles) {
		c->plan.tg.paths = c->fio.files;
		c->plan.tg.npaths = c->fio.nfiles;
	} else {
		c->plan.tg.paths = (const char *const *)argv + optind;
		c->plan.tg.npaths = (unsigned)(argc - optind);
	}
	return 0;
}
