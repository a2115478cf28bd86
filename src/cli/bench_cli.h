/* SPDX-License-Identifier: MIT */
/*
 * uraid bench, split by concern: bench_opts.c parses the command line into a
 * plan, bench.c runs it with the method of src/bench/method.h (showing its
 * progress line), bench_out.c prints the human table, JSON and CSV. The HTML
 * report (--html) is src/bench/report_run.h's: it is built from the plan
 * and the outcome alone, so another program can write the same report.
 */
#ifndef URAID_CLI_BENCH_CLI_H
#define URAID_CLI_BENCH_CLI_H

#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include "bench/bench.h"
#include "bench/method.h"
#include "bench/sweep.h"
#include "bench/trace.h"

enum bench_fmt { BENCH_FMT_HUMAN, BENCH_FMT_JSON, BENCH_FMT_CSV };

/* What a pasted fio command line says in words uraid bench has not (bench_fio.c). */
struct bench_fio {
	const char *name;           /* --name: fio's job name (one job per run) */
	const char *ioengine;       /* --ioengine as given; NULL: not given */
	bool sync_engine;           /* fio runs it one I/O at a time per job */
	bool randrepeat_off;        /* --randrepeat=0: a seed from the clock unless --seed */
	bool seed_given;            /* --seed or --randseed */
	bool readonly;              /* --readonly: refuse a run that writes */
	bool time_based;            /* --time_based given */
	char notes[512];            /* note lines for stderr, printed once parsing succeeded */
	char *filenames;            /* --filename's copy, split in place */
	const char *files[BENCH_MAX_TARGETS];
	unsigned nfiles;
};

struct bench_cli {
	struct bench_runplan plan;  /* what to run: workload, targets, sweep axes, rounds */
	const char *rw;             /* --rw as given (default "read") */
	const char *layout;
	const char *profile;        /* --profile */
	bool rwmix_given, rw_given, bs_given, random_given, runtime_given;
	bool iodepth_given, numjobs_given;
	unsigned nbs;               /* --bs / --bssplit sizes (weights set) */
	struct bench_access bs[BENCH_MAX_LINES];
	unsigned nacc;              /* --access / --access-file lines */
	struct bench_access acc[BENCH_MAX_LINES];
	bool acc_weight[BENCH_MAX_LINES];
	enum bench_fmt fmt;
	const char *csv_path;       /* --csv */
	const char *html_path;      /* --html */
	const char *lat_log_prefix; /* --write_lat_log */
	const char *out_path;       /* --output: the results there instead of stdout */
	struct bench_fio fio;
	int argc;                   /* the command line, for the report's description */
	char **argv;
	bool sweep;                 /* --sweep given (plan.axes) */
	bool compare;               /* --compare given (plan.cmp) */
	const char *replay_path;
	struct bench_trace trace;
	char what[96];              /* the workload in a few words, for headings */
};

/* Parse argv into c; -1: help or list printed (exit 0); else 0 or an exit status. */
int bench_parse_args(int argc, char **argv, struct bench_cli *c);

/* fio's yes/no option value: 1, 0, or -1 for neither (NULL, no value: 1). */
int bench_fio_bool(const char *arg);
/* --filename=NAME[:NAME]... ("\:" a colon in a name), --ioengine=E: 0 or -errno with err set. */
int bench_fio_filename(struct bench_fio *f, const char *arg, char *err, size_t errlen);
int bench_fio_engine(struct bench_fio *f, const char *arg, char *err, size_t errlen);
/*
 * After the options: --filename's targets against the DEVICE arguments, --size
 * shared by several --filename targets as fio does, a sync engine's single I/O
 * in flight, --randrepeat=0's seed; the notes (another engine runs, --size
 * without --time_based) go into f->notes for the caller to print once the
 * whole command line is accepted. 0 or -EINVAL.
 */
int bench_fio_finish(struct bench_cli *c, unsigned npositional, char *err, size_t errlen);
void bench_fio_free(struct bench_fio *f);

void bench_print_human(FILE *f, const struct bench_cli *c, const struct bench_outcome *o);
void bench_print_json(FILE *f, const struct bench_cli *c, const struct bench_outcome *o);
void bench_print_csv(FILE *f, const struct bench_cli *c, const struct bench_outcome *o);

/* uraid bench --characterise DEVICE... (bench_characterise.c): the drive model. */
bool bench_wants_characterise(int argc, char **argv);
int cmd_bench_characterise(int argc, char **argv);

#endif
