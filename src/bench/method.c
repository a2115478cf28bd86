// SPDX-License-Identifier: MIT
/*
 * The benchmark method (see method.h): a plan's cells run one after the
 * other with bench_run_hooked, the X-bit rating of a queue-depth sweep,
 * steady-state rounds until the SNIA rule holds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/method.h"
#include "common/errmsg.h"

/* Slack per cell in the time estimate: setting up and tearing down a run. */
#define CELL_OVERHEAD_S 0.2

const char *bench_run_kind_name(enum bench_run_kind k)
{
	switch (k) {
	case BENCH_RUN_SWEEP: return "sweep";
	case BENCH_RUN_STEADY: return "steady-state";
	case BENCH_RUN_REPLAY: return "replay";
	case BENCH_RUN_COMPARE: return "compare";
	default: return "single";
	}
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int bench_outcome_plan(struct bench_outcome *o, const struct bench_runplan *p, char *err,
		       size_t errlen)
{
	int rc;

	o->kind = p->kind;
	o->ncells = o->nalloc = 1;
	if (p->precondition && (p->kind == BENCH_RUN_STEADY || p->kind == BENCH_RUN_REPLAY))
		return uraid_errf(err, errlen, -EINVAL, "--precondition runs before a measured run: "
				  "not with %s", p->kind == BENCH_RUN_STEADY ? "--steady-state, which "
				  "is its second half" : "--replay");
	if (p->precondition && p->kind == BENCH_RUN_SWEEP && p->axes.ndrives)
		return uraid_errf(err, errlen, -EINVAL, "--precondition with --sweep=drives: each "
				  "cell is another array (use --compare=members=...)");
	if (p->kind == BENCH_RUN_COMPARE) {
		rc = bench_compare_plan(&p->cmp, &p->tg, &o->cells, &o->ncells, err, errlen);
		if (rc)
			return rc;
		o->nalloc = o->ncells;
	} else if (p->kind == BENCH_RUN_SWEEP) {
		rc = bench_plan(&p->axes, p->tg.level, p->tg.npaths, &o->cells, &o->ncells, err,
				errlen);
		if (rc)
			return rc;
		o->nalloc = o->ncells;
	} else if (p->kind == BENCH_RUN_STEADY) {
		/* rounds are added as they run */
		o->nalloc = p->steady_max;
		o->ncells = 0;
		o->cells = calloc(o->nalloc, sizeof(*o->cells));
		if (!o->cells)
			return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	}
	o->res = calloc(o->nalloc, sizeof(*o->res));
	o->ran = calloc(o->nalloc, sizeof(*o->ran));
	if (p->precondition)
		o->pre = calloc(o->nalloc, sizeof(*o->pre));
	if (!o->res || !o->ran || (p->precondition && !o->pre))
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	return 0;
}

void bench_outcome_fini(struct bench_outcome *o)
{
	for (unsigned i = 0; o->res && i < o->nalloc; i++)
		bench_result_fini(&o->res[i]);
	free(o->res);
	free(o->ran);
	free(o->pre);
	free(o->cells);
	memset(o, 0, sizeof(*o));
}

/* The progress of one run: the plan's hook, told where the run is. */
struct progress {
	const struct bench_progress_hook *hook;
	struct bench_progress p;
};

static void progress_event(struct progress *pg, enum bench_progress_event ev)
{
	if (!pg->hook || !pg->hook->fn)
		return;
	pg->p.event = ev;
	pg->hook->fn(pg->hook->arg, &pg->p);
}

static void progress_cell(struct progress *pg, unsigned cell, const char *label)
{
	pg->p.cell = cell;
	pg->p.label = label;
	pg->p.elapsed_ns = pg->p.total_ns = 0;
	progress_event(pg, BENCH_PROGRESS_CELL);
}

static void progress_phase(struct progress *pg, unsigned cell, const char *label)
{
	pg->p.cell = cell;
	pg->p.label = label;
	pg->p.elapsed_ns = pg->p.total_ns = 0;
	progress_event(pg, BENCH_PROGRESS_PHASE);
}

/* bench_run_hooked's tick, passed on. */
static void progress_tick(void *arg, uint64_t elapsed_ns, uint64_t total_ns)
{
	struct progress *pg = arg;

	pg->p.elapsed_ns = elapsed_ns;
	pg->p.total_ns = total_ns;
	progress_event(pg, BENCH_PROGRESS_TICK);
}

/* Does a read-share sweep have a cell that writes (a share below 100 %)? */
static bool rwmix_writes(const struct bench_runplan *p)
{
	for (unsigned i = 0; p->kind == BENCH_RUN_SWEEP && i < p->axes.nrwmix; i++)
		if (p->axes.rwmix[i] < 100)
			return true;
	return false;
}

bool bench_plan_writes(const struct bench_runplan *p)
{
	/* (the workload's own writes count even when every swept share is 100 %:
	   on the safe side) */
	return p->axes.matrix || p->axes.ndrives || bench_workload_writes(&p->wl) ||
	       (p->tg.flags & BENCH_CREATE) || p->kind == BENCH_RUN_COMPARE || p->precondition ||
	       rwmix_writes(p);
}

/*
 * Writing destroys data: check it once, create what does not exist, then
 * let every cell write to what this run was allowed to write (tg gets
 * BENCH_FORCE_WRITE).
 */
static int prepare_once(const struct bench_runplan *p, struct bench_targets *tg, char *err,
			size_t errlen)
{
	bool created[BENCH_MAX_TARGETS];
	struct bench_workload probe = p->wl;

	if (bench_plan_writes(p) && !p->wl.trace) {
		probe.nlines = 1;
		probe.line[0].read_pct = 0;     /* some cell writes */
	}
	int rc = bench_check_write_permission(&probe, tg, err, errlen);
	if (!rc)
		rc = bench_prepare_paths(tg, tg->kind == BENCH_RAW, created, err, errlen);
	if (!rc)
		tg->flags |= BENCH_FORCE_WRITE;
	return rc;
}

/* The X-bit rating of a queue-depth sweep: its cells at the first cell's thread count. */
static void rate_qd_sweep(struct bench_outcome *o)
{
	unsigned qd[BENCH_SWEEP_MAX], n = 0;
	double iops[BENCH_SWEEP_MAX];

	for (unsigned i = 0; i < o->ncells && n < BENCH_SWEEP_MAX; i++) {
		if (o->cells[i].threads != o->cells[0].threads)
			continue;
		qd[n] = o->cells[i].qd;
		iops[n++] = bench_iops(&o->res[i]);
	}
	o->has_rating = true;
	o->rating = bench_xbit_rating(qd, iops, n, &o->rating_complete);
}

/*
 * SNIA PTS preconditioning into o->pre[slot]: a sequential fill of twice
 * the range in 128 KiB writes, whatever the workload, then rounds of wl
 * until the steady-state rule holds (or precondition_max rounds). tg loses
 * BENCH_CREATE after the fill: the runs after it use the array it filled.
 */
static int precondition(struct bench_outcome *o, unsigned slot, const struct bench_runplan *p,
			const struct bench_workload *wl, struct bench_targets *tg,
			struct progress *pg, unsigned cell, const char *cell_label, char *err,
			size_t errlen)
{
	struct bench_hooks hk = { .tick = progress_tick, .arg = pg };
	struct bench_precond *pc = &o->pre[slot];
	unsigned max = p->precondition_max ? p->precondition_max : BENCH_SS_MAX_ROUNDS;
	struct bench_workload fill = *wl;
	struct bench_result res;
	char label[128];
	uint64_t t0 = mono_ns();
	int rc;

	fill.nlines = 1;
	fill.line[0] = (struct bench_access){ .bytes = BENCH_PRECOND_BS, .weight = 100 };
	fill.align = 0;
	fill.workers = 0;               /* one per raw target, one for an array */
	fill.iodepth = BENCH_PRECOND_IODEPTH;
	fill.runtime_s = BENCH_PRECOND_FILL_MAX_S;
	fill.ramp_s = 0;
	fill.rate_iops = 0;
	fill.flags &= ~BENCH_VERIFY;
	fill.trace = NULL;
	fill.data = BENCH_DATA_RANDOM;
	fill.passes = BENCH_PRECOND_PASSES;
	fill.lat_log_max = 0;           /* only the measured run's I/Os are logged */
	snprintf(label, sizeof(label), "%s%sprecondition: sequential fill", cell_label,
		 cell_label[0] ? ", " : "");
	progress_phase(pg, cell, label);
	rc = bench_run_hooked(&fill, tg, &hk, &res, err, errlen);
	if (rc)
		return rc;
	pc->fill_bytes = bench_total_bytes(&res);
	pc->fill_range_bytes = res.range_bytes_total;
	pc->fill_targets = res.ntargets;
	bench_result_fini(&res);
	pc->fill_ns = mono_ns() - t0;
	tg->flags &= ~BENCH_CREATE;

	double *iops = calloc(max, sizeof(*iops));
	if (!iops)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	struct bench_workload round = *wl;
	round.ramp_s = 0;
	round.lat_log_max = 0;
	t0 = mono_ns();
	for (unsigned i = 0; i < max; i++) {
		snprintf(label, sizeof(label), "%s%sprecondition: round %u", cell_label,
			 cell_label[0] ? ", " : "", i + 1);
		progress_phase(pg, cell, label);
		rc = bench_run_hooked(&round, tg, &hk, &res, err, errlen);
		if (rc)
			break;
		iops[i] = bench_iops(&res);
		bench_result_fini(&res);
		pc->rounds = i + 1;
		if (bench_steady_check(iops, i + 1, &pc->ss))
			break;
	}
	free(iops);
	pc->reached = pc->ss.reached;
	pc->steady_ns = mono_ns() - t0;
	pc->done = rc == 0;
	return rc;
}

static int run_cells(struct bench_outcome *o, const struct bench_runplan *p,
		     struct progress *pg, char *err, size_t errlen)
{
	struct bench_hooks hk = { .tick = progress_tick, .arg = pg };
	struct bench_targets tg0 = p->tg;

	pg->p.ncells = o->ncells;
	pg->p.cell_s = p->wl.ramp_s + p->wl.runtime_s + CELL_OVERHEAD_S;
	progress_event(pg, BENCH_PROGRESS_BEGIN);
	int rc = prepare_once(p, &tg0, err, errlen);

	/* a sweep's targets stay the same: preconditioned once, with the base workload */
	if (!rc && p->precondition && p->kind == BENCH_RUN_SWEEP)
		rc = precondition(o, 0, p, &p->wl, &tg0, pg, 1, "", err, errlen);
	for (unsigned i = 0; !rc && i < o->ncells; i++) {
		struct bench_cell *cl = &o->cells[i];
		struct bench_workload wl;
		struct bench_targets tg;
		if (cl->skip[0])
			continue;
		if (cl->compare) {
			/* planned makeable: a refusal here would be a bug of the plan */
			if (bench_compare_apply(&p->cmp, cl, &p->wl, &tg0, &wl, &tg, cl->skip,
						sizeof(cl->skip)))
				continue;
		} else {
			bench_cell_apply(cl, &p->wl, &tg0, &wl, &tg);
		}
		if (p->precondition && cl->compare) {
			rc = precondition(o, i, p, &wl, &tg, pg, i + 1, cl->label, err, errlen);
			if (rc)
				break;
		}
		progress_cell(pg, i + 1, cl->label);
		rc = bench_run_hooked(&wl, &tg, &hk, &o->res[i], err, errlen);
		o->ran[i] = rc == 0;
	}
	progress_event(pg, BENCH_PROGRESS_END);
	if (!rc && o->ncells && o->cells[0].qd)
		rate_qd_sweep(o);
	return rc;
}

/* Rounds of the workload until the SNIA rule holds for the last window (or max rounds). */
static int run_steady(struct bench_outcome *o, const struct bench_runplan *p,
		      struct progress *pg, char *err, size_t errlen)
{
	struct bench_hooks hk = { .tick = progress_tick, .arg = pg };
	struct bench_targets tg = p->tg;
	double *iops = calloc(p->steady_max ? p->steady_max : 1, sizeof(*iops));

	if (!iops)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	pg->p.ncells = p->steady_max;
	/* rounds after the first have no ramp */
	pg->p.cell_s = p->wl.runtime_s + CELL_OVERHEAD_S;
	progress_event(pg, BENCH_PROGRESS_BEGIN);
	int rc = prepare_once(p, &tg, err, errlen);

	for (unsigned i = 0; !rc && i < p->steady_max && i < o->nalloc; i++) {
		struct bench_cell *cl = &o->cells[i];
		struct bench_workload wl = p->wl;
		snprintf(cl->label, sizeof(cl->label), "round=%u", i + 1);
		cl->read_pct = -1;
		if (i)
			wl.ramp_s = 0;
		progress_cell(pg, i + 1, cl->label);
		rc = bench_run_hooked(&wl, &tg, &hk, &o->res[i], err, errlen);
		if (rc)
			break;
		o->ran[i] = true;
		iops[i] = bench_iops(&o->res[i]);
		o->ncells = o->ss_rounds = i + 1;
		if (bench_steady_check(iops, i + 1, &o->ss)) {
			o->ss_reached = true;
			break;
		}
	}
	progress_event(pg, BENCH_PROGRESS_END);
	free(iops);
	return rc;
}

/* One run or a replay: bench_run checks and prepares its targets itself. */
static int run_single(struct bench_outcome *o, const struct bench_runplan *p,
		      struct progress *pg, char *err, size_t errlen)
{
	struct bench_hooks hk = { .tick = progress_tick, .arg = pg };
	struct bench_targets tg = p->tg;
	int rc = 0;

	pg->p.cell = pg->p.ncells = 1;
	pg->p.label = p->kind == BENCH_RUN_REPLAY ? "replay" : "run";
	/* a replay without a runtime lasts as long as its trace: no estimate */
	pg->p.cell_s = p->wl.runtime_s > 0 ? p->wl.ramp_s + p->wl.runtime_s : 0;
	pg->p.single = true;
	progress_event(pg, BENCH_PROGRESS_BEGIN);
	if (p->precondition) {
		rc = prepare_once(p, &tg, err, errlen);
		if (!rc)
			rc = precondition(o, 0, p, &p->wl, &tg, pg, 1, "", err, errlen);
		pg->p.label = "run";
	}
	if (!rc)
		rc = bench_run_hooked(&p->wl, &tg, &hk, &o->res[0], err, errlen);
	progress_event(pg, BENCH_PROGRESS_END);
	o->ran[0] = rc == 0;
	return rc;
}

int bench_outcome_run(struct bench_outcome *o, const struct bench_runplan *p,
		      const struct bench_progress_hook *hook, char *err, size_t errlen)
{
	struct progress pg = { .hook = hook };
	uint64_t t0 = mono_ns();

	pg.p.precondition = p->precondition;
	int rc;

	o->started = time(NULL);
	if (p->kind == BENCH_RUN_SWEEP || p->kind == BENCH_RUN_COMPARE)
		rc = run_cells(o, p, &pg, err, errlen);
	else if (p->kind == BENCH_RUN_STEADY)
		rc = run_steady(o, p, &pg, err, errlen);
	else
		rc = run_single(o, p, &pg, err, errlen);
	o->wall_ns = mono_ns() - t0;
	return rc;
}
