// SPDX-License-Identifier: MIT
/*
 * uraid bench: runs the plan the command line makes (one run, a sweep of
 * cells, steady-state rounds, or a trace replay; src/bench/method.h) with a
 * progress line on stderr for runs of several cells and for single runs
 * that last a while, then prints the human table, JSON or CSV, and writes
 * the CSV and HTML report files asked for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/method.h"
#include "bench/report_run.h"
#include "cli/bench_cli.h"
#include "cli/cli.h"
#include "cli/version.h"

/*
 * The progress line: the cell, the time since the first cell, an estimate of
 * the rest. A single run or a replay (one cell, no count shown) gets it only
 * on a terminal and only once it has run PROGRESS_QUIET_NS, so that short
 * runs print nothing but their result.
 */
#define PROGRESS_QUIET_NS 2000000000ull

struct progress {
	unsigned cell, ncells;
	const char *label;
	uint64_t t_start, cell_start;
	double cell_s;              /* planned length of one cell; 0: unknown (a replay) */
	bool single;                /* one run: no cell count, quiet at first */
	bool precondition;          /* the ETA leaves out the preconditioning phases */
	bool tty, shown;
	uint64_t last_sec;          /* of the last refresh on a terminal */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void progress_print(struct progress *p, bool newline)
{
	double elapsed = (mono_ns() - p->t_start) / 1e9;
	double in_cell = (mono_ns() - p->cell_start) / 1e9;
	char eta[48] = "";

	if (p->cell_s > 0)
		snprintf(eta, sizeof(eta), ", ETA %.0f s%s",
			 bench_eta_s(p->cell, p->ncells, p->cell_s, in_cell),
			 p->precondition ? " + preconditioning" : "");
	if (p->single)
		fprintf(stderr, "%suraid bench: %s, elapsed %.0f s%s%s", p->tty ? "\r\033[K" : "",
			p->label, elapsed, eta, newline ? "\n" : "");
	else
		fprintf(stderr, "%suraid bench: cell %u/%u (%s), elapsed %.0f s%s%s",
			p->tty ? "\r\033[K" : "", p->cell, p->ncells, p->label, elapsed, eta,
			newline ? "\n" : "");
	fflush(stderr);
	p->shown = true;
}

/* The method's progress events drawn as the line above. */
static void progress_hook(void *arg, const struct bench_progress *ev)
{
	struct progress *p = arg;
	uint64_t sec = ev->elapsed_ns / 1000000000ull;

	switch (ev->event) {
	case BENCH_PROGRESS_BEGIN:
		p->cell = ev->cell;
		p->ncells = ev->ncells;
		p->label = ev->label;
		p->cell_s = ev->cell_s;
		p->single = ev->single;
		p->precondition = ev->precondition;
		p->t_start = p->cell_start = mono_ns();
		break;
	case BENCH_PROGRESS_CELL:
	case BENCH_PROGRESS_PHASE:      /* shown as a cell is: its label says which phase */
		p->cell = ev->cell;
		p->label = ev->label;
		p->cell_start = mono_ns();
		progress_print(p, !p->tty);
		break;
	case BENCH_PROGRESS_TICK:
		/* only a terminal gets refreshes, about once a second */
		if (!p->tty || (p->single && ev->elapsed_ns < PROGRESS_QUIET_NS))
			return;
		if (p->shown && sec == p->last_sec)
			return;
		p->last_sec = sec;
		progress_print(p, false);
		break;
	case BENCH_PROGRESS_END:
		if (p->tty && p->shown)
			fputs("\r\033[K", stderr);
		break;
	}
}

static int write_csv_file(const struct bench_cli *c, const struct bench_outcome *o)
{
	FILE *f = fopen(c->csv_path, "we");
	if (!f) {
		fprintf(stderr, "uraid bench: --csv: %s: %s\n", c->csv_path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	bench_print_csv(f, c, o);
	if (fclose(f)) {
		fprintf(stderr, "uraid bench: --csv: %s: %s\n", c->csv_path, strerror(errno));
		return CLI_EXIT_FAIL;
	}
	return CLI_EXIT_OK;
}

static int write_html_file(const struct bench_cli *c, const struct bench_outcome *o, FILE *out)
{
	const struct bench_run_about about = {
		.what = c->what, .version = URAID_VERSION, .argc = c->argc, .argv = c->argv,
	};
	char err[400];

	if (bench_report_run_write(&c->plan, o, &about, c->html_path, err, sizeof(err))) {
		fprintf(stderr, "uraid bench: --html: %s\n", err);
		return CLI_EXIT_FAIL;
	}
	if (c->fmt == BENCH_FMT_HUMAN)
		fprintf(out, "report: %s\n", c->html_path);
	return CLI_EXIT_OK;
}

int cmd_bench(int argc, char **argv)
{
	struct bench_cli c;
	struct bench_outcome o = { 0 };
	struct progress p = { .tty = isatty(STDERR_FILENO) };
	const struct bench_progress_hook hook = { .fn = progress_hook, .arg = &p };
	char err[400];
	FILE *out = NULL;
	int rc;

	if (bench_wants_characterise(argc, argv))
		return cmd_bench_characterise(argc, argv);
	memset(&c, 0, sizeof(c));
	rc = bench_parse_args(argc, argv, &c);
	if (rc) {
		bench_trace_free(&c.trace);
		bench_fio_free(&c.fio);
		return rc < 0 ? CLI_EXIT_OK : rc;
	}
	fputs(c.fio.notes, stderr);     /* only now: the command line is accepted */
	rc = bench_outcome_plan(&o, &c.plan, err, sizeof(err));
	if (rc == -EINVAL) {
		fprintf(stderr, "uraid bench: %s; see 'uraid bench --help'\n", err);
		rc = CLI_EXIT_USAGE;
		goto out;
	} else if (rc) {
		fprintf(stderr, "uraid bench: %s\n", err);
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	/* --output (fio's): the results into a file, as fio writes them; opened
	   before the run so that a path that cannot be written costs no run */
	out = c.out_path ? fopen(c.out_path, "we") : stdout;
	if (!out) {
		fprintf(stderr, "uraid bench: --output: %s: %s\n", c.out_path, strerror(errno));
		rc = CLI_EXIT_FAIL;
		goto out;
	}
	rc = bench_outcome_run(&o, &c.plan, &hook, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uraid bench: %s\n", err);
		rc = rc == -EPERM || rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
		goto out;
	}
	if (c.fmt == BENCH_FMT_JSON)
		bench_print_json(out, &c, &o);
	else if (c.fmt == BENCH_FMT_CSV)
		bench_print_csv(out, &c, &o);
	else
		bench_print_human(out, &c, &o);
	if (c.csv_path)
		rc = write_csv_file(&c, &o);
	if (c.html_path && !rc)
		rc = write_html_file(&c, &o, out);
	/* a single run or a replay (bench_parse_args): one result */
	if (c.lat_log_prefix && !rc &&
	    bench_lat_log_write(o.res[0].lat_logs, o.res[0].nlat_logs, c.lat_log_prefix, err,
				sizeof(err))) {
		fprintf(stderr, "uraid bench: %s\n", err);
		rc = CLI_EXIT_FAIL;
	}
out:
	if (out && out != stdout && fclose(out) && !rc) {
		fprintf(stderr, "uraid bench: --output: %s: %s\n", c.out_path, strerror(errno));
		rc = CLI_EXIT_FAIL;
	}
	bench_outcome_fini(&o);
	bench_trace_free(&c.trace);
	bench_fio_free(&c.fio);
	return rc;
}
