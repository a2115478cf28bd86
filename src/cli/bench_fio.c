// SPDX-License-Identifier: MIT
/*
 * uraid bench: what a pasted fio command line brings that uraid bench says
 * otherwise: targets as fio's --filename list, fio's I/O engines mapped to
 * the one uraid bench uses, fio's yes/no options, --randrepeat. The options
 * uraid bench already has under fio's names are parsed in bench_opts.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "cli/bench_cli.h"

/* fio's engines uraid bench maps to its own, and whether fio runs them one I/O at a time. */
static const struct { const char *name; bool sync; } fio_engines[] = {
	{ "io_uring", false }, { "libaio", false }, { "posixaio", false },
	{ "sync", true }, { "psync", true }, { "vsync", true }, { "pvsync", true },
	{ "pvsync2", true },
};

int bench_fio_bool(const char *arg)
{
	if (!arg || !strcmp(arg, "1") || !strcmp(arg, "true") || !strcmp(arg, "on"))
		return 1;
	if (!strcmp(arg, "0") || !strcmp(arg, "false") || !strcmp(arg, "off"))
		return 0;
	return -1;
}

/*
 * fio's list: NAME[:NAME]..., a colon inside a name escaped as "\:" (fio's
 * rule; any other backslash is part of the name). Split into f->files,
 * pointing into a copy of arg.
 */
int bench_fio_filename(struct bench_fio *f, const char *arg, char *err, size_t errlen)
{
	if (f->filenames)
		return uraid_errf(err, errlen, -EINVAL, "--filename given twice: give the "
				  "targets once, as a colon-separated list");
	f->filenames = strdup(arg);
	if (!f->filenames)
		return uraid_errf(err, errlen, -ENOMEM, "--filename: out of memory");

	char *out = f->filenames, *start = f->filenames;
	for (const char *in = arg;; in++) {
		if (in[0] == '\\' && in[1] == ':') {
			*out++ = ':';
			in++;
			continue;
		}
		if (*in && *in != ':') {
			*out++ = *in;
			continue;
		}
		*out++ = 0;
		if (!*start)
			return uraid_errf(err, errlen, -EINVAL, "--filename=%s: an empty name in "
					  "the list", arg);
		if (f->nfiles == BENCH_MAX_TARGETS)
			return uraid_errf(err, errlen, -EINVAL, "--filename: at most %d "
					  "targets in the list", BENCH_MAX_TARGETS);
		f->files[f->nfiles++] = start;
		start = out;
		if (!*in)
			return 0;
	}
}

int bench_fio_engine(struct bench_fio *f, const char *arg, char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof(fio_engines) / sizeof(fio_engines[0]); i++) {
		if (strcmp(arg, fio_engines[i].name))
			continue;
		f->ioengine = fio_engines[i].name;
		f->sync_engine = fio_engines[i].sync;
		return 0;
	}
	/* the list from the table, so that an engine added there is named here */
	char names[160] = "";
	size_t n = sizeof(fio_engines) / sizeof(fio_engines[0]), used = 0;
	for (size_t i = 0; i < n && used < sizeof(names); i++)
		used += (size_t)snprintf(names + used, sizeof(names) - used, "%s%s",
					 i == 0 ? "" : i + 1 == n ? " and " : ", ",
					 fio_engines[i].name);
	return uraid_errf(err, errlen, -EINVAL, "--ioengine=%s: not supported (uraid bench "
			  "drives files and block devices; it takes %s)", arg, names);
}

/* One note line added to f->notes (what does not fit is left out). */
static void __attribute__((format(printf, 2, 3))) add_note(struct bench_fio *f, const char *fmt,
							    ...)
{
	size_t used = strlen(f->notes);
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(f->notes + used, sizeof(f->notes) - used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(f->notes) - used)
		f->notes[used] = 0;
}

/* The note when the engine asked for is not the one that runs. */
static void engine_note(struct bench_cli *c, unsigned iodepth_asked)
{
	struct bench_fio *f = &c->fio;
	bool array = c->plan.tg.kind == BENCH_ARRAY;
	char depth[128] = "";

	if (!f->ioengine || (!array && !strcmp(f->ioengine, "io_uring")))
		return;
	if (f->sync_engine)
		snprintf(depth, sizeof(depth), ", one I/O outstanding per worker as with %s%s",
			 f->ioengine, iodepth_asked > 1 ? " (--iodepth has no effect, as in fio)"
			 : "");
	else if (!strcmp(f->ioengine, "libaio") && (c->plan.tg.flags & BENCH_BUFFERED))
		/* the kernel's aio queues only O_DIRECT I/O: fio's libaio would wait on each */
		snprintf(depth, sizeof(depth), ", at the same queue depth (fio's libaio "
			 "with --direct=0 would be near-synchronous)");
	else
		snprintf(depth, sizeof(depth), ", at the same queue depth");
	add_note(f, "uraid bench: note: --ioengine=%s: the I/O goes through %s%s\n",
		 f->ioengine, array ? "the array's reactors (liburaid)"
		 : f->sync_engine ? "pread and pwrite" : "io_uring", depth);
}

/* The largest block any cell of the plan uses (0: a trace's, not known here). */
static uint32_t largest_block(const struct bench_runplan *p)
{
	uint32_t max = 0;

	if (p->wl.trace)
		return 0;
	for (unsigned i = 0; i < p->wl.nlines; i++)
		if (p->wl.line[i].bytes > max)
			max = p->wl.line[i].bytes;
	for (unsigned i = 0; p->axes.matrix && i < BENCH_MATRIX_NBS; i++)
		if (bench_matrix_bs[i] > max)
			max = bench_matrix_bs[i];
	return max;
}

int bench_fio_finish(struct bench_cli *c, unsigned npositional, char *err, size_t errlen)
{
	struct bench_fio *f = &c->fio;
	unsigned iodepth_asked = c->plan.wl.iodepth;

	if (f->nfiles && npositional)
		return uraid_errf(err, errlen, -EINVAL, "give the targets as DEVICE arguments or "
				  "as --filename, not both");
	if (f->sync_engine && (c->plan.axes.nqd || c->plan.axes.matrix))
		return uraid_errf(err, errlen, -EINVAL, "--ioengine=%s runs one I/O at a time: "
				  "it does not combine with --sweep=qd or matrix", f->ioengine);
	/* the plan is final here: the sweep, --level and the trace are known */
	if (f->readonly && bench_plan_writes(&c->plan))
		return uraid_errf(err, errlen, -EINVAL, "--readonly: this run writes (--rw, "
				  "--rwmix*, --access, --profile, the trace, --sweep=matrix or "
				  "drives=, or --level creating the array)");
	/* fio's size is the total of the job's files; uraid's --size is each raw target's */
	if (f->nfiles > 1 && c->plan.tg.kind == BENCH_RAW && c->plan.wl.size) {
		/* in 4 KiB units, the unit a created target is written in */
		uint64_t each = c->plan.wl.size / f->nfiles;
		uint32_t max_bs = largest_block(&c->plan);
		each -= each % 4096;
		if (each < max_bs || !each)
			return uraid_errf(err, errlen, -EINVAL, "--size (%llu bytes) is shared by "
					  "the %u --filename targets, as in fio: %llu each (in 4 KiB "
					  "units) holds no block of %u bytes; give a larger --size",
					  (unsigned long long)c->plan.wl.size, f->nfiles,
					  (unsigned long long)each, max_bs);
		c->plan.wl.size = each;
	}
	/* fio runs one job across all its files (--iodepth shared), where uraid's
	   default is a worker per raw target: that would be twice the load of fio's */
	if (f->nfiles && !c->numjobs_given && !c->plan.axes.matrix)
		c->plan.wl.workers = 1;
	if (f->sync_engine)
		c->plan.wl.iodepth = 1;
	else if (f->ioengine)   /* asked for an asynchronous engine: io_uring at QD 1 too */
		c->plan.tg.flags |= BENCH_URING;
	if (f->randrepeat_off && !f->seed_given) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		/* reported in the output (seed), so the run can still be repeated */
		c->plan.wl.seed = ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^
				  ((uint64_t)getpid() << 32);
	}
	engine_note(c, iodepth_asked);
	/* a fio job with --size and without --time_based ends after --size bytes */
	if ((f->name || f->nfiles) && c->plan.wl.size && !f->time_based && !c->plan.wl.trace)
		add_note(f, "uraid bench: note: --size without --time_based: fio would stop "
			 "after --size bytes; uraid bench runs for --runtime (%g s)\n",
			 c->plan.wl.runtime_s);
	return 0;
}

void bench_fio_free(struct bench_fio *f)
{
	free(f->filenames);
	f->filenames = NULL;
	f->nfiles = 0;
}
