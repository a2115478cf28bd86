// SPDX-License-Identifier: MIT
/*
 * uraid bench: runs what the command line asks (one run, a sweep of cells,
 * steady-state rounds, or a trace replay) with a progress line on stderr for
 * runs of several cells and for single runs that last a while, then prints the human table, JSON or CSV, and
 * writes the CSV and HTML report files asked for.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "bench/sweep.h"
#include "cli/bench_cli.h"
#include "cli/cli.h"

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
		snprintf(eta, sizeof(eta), ", ETA %.0f s",
			 bench_eta_s(p->cell, p->ncells, p->cell_s, in_cell));
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

static void progress_tick(void *arg, uint64_t elapsed_ns, uint64_t total_ns)
{
	struct progress *p = arg;
	uint64_t sec = elapsed_ns / 1000000000ull;

	(void)total_ns;
	/* only a terminal gets refreshes, about once a second */
	if (!p->tty || (p->single && elapsed_ns < PROGRESS_QUIET_NS))
		return;
	if (p->shown && sec == p->last_sec)
		return;
	p->last_sec = sec;
	progress_print(p, false);
}

static void progress_done(struct progress *p)
{
	if (p->tty && p->shown)
		fputs("\r\033[K", stderr);
}

/*
 * Writing destroys data: check it once, create what does not exist, then
 * let every cell write to what this invocation was allowed to write.
 */
static int prepare_once(struct bench_cli *c, bool writes, char *err, size_t errlen)
{
	bool created[BENCH_MAX_TARGETS];
	struct bench_workload probe = c->wl;

	if (writes && !c->wl.trace) {
		probe.nlines = 1;
		probe.line[0].read_pct = 0;     /* some cell writes */
	}
	int rc = bench_check_write_permission(&probe, &c->tg, err, errlen);
	if (!rc)
		rc = bench_prepare_paths(&c->tg, c->tg.kind == BENCH_RAW, created, err, errlen);
	if (!rc)
		c->tg.flags |= BENCH_FORCE_WRITE;
	return rc;
}

static bool cells_write(const struct bench_cli *c)
{
	return c->axes.matrix || c->axes.ndrives || bench_workload_writes(&c->wl) ||
	       (c->tg.flags & BENCH_CREATE);
}

static int run_cells(struct bench_cli *c, struct bench_outcome *o, char *err, size_t errlen)
{
	struct progress p = {
		.ncells = o->ncells,
		.t_start = mono_ns(),
		.cell_s = c->wl.ramp_s + c->wl.runtime_s + 0.2,
		.tty = isatty(STDERR_FILENO),
	};
	struct bench_hooks hk = { .tick = progress_tick, .arg = &p };
	int rc = prepare_once(c, cells_write(c), err, errlen);

	for (unsigned i = 0; !rc && i < o->ncells; i++) {
		const struct bench_cell *cl = &o->cells[i];
		struct bench_workload wl;
		struct bench_targets tg;
		if (cl->skip[0])
			continue;
		bench_cell_apply(cl, &c->wl, &c->tg, &wl, &tg);
		p.cell = i + 1;
		p.label = cl->label;
		p.cell_start = mono_ns();
		progress_print(&p, !p.tty);
		rc = bench_run_hooked(&wl, &tg, &hk, &o->res[i], err, errlen);
		o->ran[i] = rc == 0;
	}
	progress_done(&p);
	if (rc || !o->cells[0].qd)
		return rc;
	/* a queue-depth sweep: the X-bit rating of the cells at one thread count */
	unsigned qd[BENCH_SWEEP_MAX], n = 0;
	double iops[BENCH_SWEEP_MAX];
	for (unsigned i = 0; i < o->ncells && n < BENCH_SWEEP_MAX; i++) {
		if (o->cells[i].threads != o->cells[0].threads)
			continue;
		const struct bench_result *r = &o->res[i];
		qd[n] = o->cells[i].qd;
		iops[n++] = r->runtime_ns ? (r->dir[0].ios + r->dir[1].ios) * 1e9 / r->runtime_ns : 0;
	}
	o->has_rating = true;
	o->rating = bench_xbit_rating(qd, iops, n, &o->rating_complete);
	return 0;
}

/* Rounds of the workload until the SNIA rule holds for the last 5 (or max rounds). */
static int run_steady(struct bench_cli *c, struct bench_outcome *o, char *err, size_t errlen)
{
	struct progress p = {
		.ncells = c->steady_max,
		.t_start = mono_ns(),
		.cell_s = c->wl.runtime_s + 0.2,
		.tty = isatty(STDERR_FILENO),
	};
	struct bench_hooks hk = { .tick = progress_tick, .arg = &p };
	double iops[1000];
	int rc = prepare_once(c, cells_write(c), err, errlen);

	for (unsigned i = 0; !rc && i < c->steady_max; i++) {
		struct bench_cell *cl = &o->cells[i];
		struct bench_workload wl = c->wl;
		snprintf(cl->label, sizeof(cl->label), "round=%u", i + 1);
		cl->read_pct = -1;
		if (i)
			wl.ramp_s = 0;
		p.cell = i + 1;
		p.label = cl->label;
		p.cell_start = mono_ns();
		progress_print(&p, !p.tty);
		rc = bench_run_hooked(&wl, &c->tg, &hk, &o->res[i], err, errlen);
		if (rc)
			break;
		o->ran[i] = true;
		const struct bench_result *r = &o->res[i];
		iops[i] = r->runtime_ns ? (r->dir[0].ios + r->dir[1].ios) * 1e9 / r->runtime_ns : 0;
		o->ncells = o->ss_rounds = i + 1;
		if (bench_steady_check(iops, i + 1, &o->ss)) {
			o->ss_reached = true;
			break;
		}
	}
	progress_done(&p);
	return rc;
}

/* One run or a replay, with the progress line once it runs a while on a terminal. */
static int run_single(struct bench_cli *c, struct bench_outcome *o, char *err, size_t errlen)
{
	struct progress p = {
		.cell = 1,
		.ncells = 1,
		.label = c->replay_path ? "replay" : "run",
		.t_start = mono_ns(),
		/* a replay without --runtime lasts as long as its trace: no estimate */
		.cell_s = c->wl.runtime_s > 0 ? c->wl.ramp_s + c->wl.runtime_s : 0,
		.single = true,
		.tty = isatty(STDERR_FILENO),
	};
	struct bench_hooks hk = { .tick = progress_tick, .arg = &p };

	p.cell_start = p.t_start;
	int rc = bench_run_hooked(&c->wl, &c->tg, &hk, &o->res[0], err, errlen);
	progress_done(&p);
	return rc;
}

static int outcome_alloc(struct bench_outcome *o, unsigned n)
{
	o->res = calloc(n, sizeof(*o->res));
	o->ran = calloc(n, sizeof(*o->ran));
	return o->res && o->ran ? 0 : -ENOMEM;
}

static void outcome_free(struct bench_outcome *o, unsigned n)
{
	for (unsigned i = 0; o->res && i < n; i++)
		bench_result_fini(&o->res[i]);
	free(o->res);
	free(o->ran);
	free(o->cells);
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

int cmd_bench(int argc, char **argv)
{
	struct bench_cli c;
	struct bench_outcome o = { .kind = "single", .ncells = 1 };
	unsigned nalloc = 1;
	char err[400];
	int rc;

	memset(&c, 0, sizeof(c));
	rc = bench_parse_args(argc, argv, &c);
	if (rc) {
		bench_trace_free(&c.trace);
		return rc < 0 ? CLI_EXIT_OK : rc;
	}
	if (c.sweep) {
		o.kind = "sweep";
		rc = bench_plan(&c.axes, c.tg.level, c.tg.npaths, &o.cells, &o.ncells, err,
				sizeof(err));
		if (rc) {
			fprintf(stderr, "uraid bench: %s; see 'uraid bench --help'\n", err);
			return CLI_EXIT_USAGE;
		}
		nalloc = o.ncells;
	} else if (c.steady_max) {
		o.kind = "steady-state";
		nalloc = c.steady_max;
		o.ncells = 0;
		o.cells = calloc(nalloc, sizeof(*o.cells));
	} else if (c.replay_path) {
		o.kind = "replay";
	}
	o.started = time(NULL);
	uint64_t t0 = mono_ns();
	if (outcome_alloc(&o, nalloc) || (c.steady_max && !o.cells)) {
		fprintf(stderr, "uraid bench: out of memory\n");
		outcome_free(&o, nalloc);
		return CLI_EXIT_FAIL;
	}
	if (c.sweep)
		rc = run_cells(&c, &o, err, sizeof(err));
	else if (c.steady_max)
		rc = run_steady(&c, &o, err, sizeof(err));
	else
		rc = run_single(&c, &o, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uraid bench: %s\n", err);
		outcome_free(&o, nalloc);
		bench_trace_free(&c.trace);
		return rc == -EPERM || rc == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_FAIL;
	}
	o.ran[0] = o.ran[0] || !o.cells;
	o.wall_ns = mono_ns() - t0;
	if (c.fmt == BENCH_FMT_JSON)
		bench_print_json(stdout, &c, &o);
	else if (c.fmt == BENCH_FMT_CSV)
		bench_print_csv(stdout, &c, &o);
	else
		bench_print_human(stdout, &c, &o);
	if (c.csv_path)
		rc = write_csv_file(&c, &o);
	if (c.html_path && !rc) {
		if (bench_write_html(&c, &o, c.html_path, err, sizeof(err))) {
			fprintf(stderr, "uraid bench: --html: %s\n", err);
			rc = CLI_EXIT_FAIL;
		} else if (c.fmt == BENCH_FMT_HUMAN) {
			printf("report: %s\n", c.html_path);
		}
	}
	outcome_free(&o, nalloc);
	bench_trace_free(&c.trace);
	return rc;
}
