/* SPDX-License-Identifier: MIT */
/*
 * The benchmark method: what `uraid bench` (and `make bench`, or a planner)
 * runs for one plan, and what comes out of it.
 *
 * A plan is one of four kinds: a single run of the workload, a sweep of
 * cells (sweep.h: queue depth, threads, the block size x mix matrix, drive
 * count), steady-state rounds (the SNIA PTS rule over the last
 * BENCH_SS_WINDOW rounds), or the replay of a trace. The outcome holds one
 * result per cell (a single run or a replay is one cell without a struct
 * bench_cell), whether each cell was measured, the X-bit rating of a
 * queue-depth sweep and the steady-state verdict.
 *
 * Use: bench_outcome_plan (the cells; an impossible plan is -EINVAL), then
 * bench_outcome_run, then read the outcome and bench_outcome_fini. Nothing
 * here prints: progress goes to a callback, errors come back as -errno with
 * one line in err.
 */
#ifndef URAID_BENCH_METHOD_H
#define URAID_BENCH_METHOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "bench/bench.h"
#include "bench/compare.h"
#include "bench/sweep.h"

enum bench_run_kind {
	BENCH_RUN_SINGLE,           /* the workload once */
	BENCH_RUN_SWEEP,            /* a cell per point of axes */
	BENCH_RUN_STEADY,           /* rounds until steady (at most steady_max) */
	BENCH_RUN_REPLAY,           /* wl.trace once */
	BENCH_RUN_COMPARE,          /* the workload once per configuration of cmp */
};

/* What to run. */
struct bench_runplan {
	enum bench_run_kind kind;
	struct bench_workload wl;   /* the base workload (a replay: wl.trace set) */
	struct bench_targets tg;    /* the base targets */
	struct bench_axes axes;     /* BENCH_RUN_SWEEP */
	unsigned steady_max;        /* BENCH_RUN_STEADY: at most this many rounds (>= window) */
	struct bench_compare cmp;   /* BENCH_RUN_COMPARE */
	/*
	 * SNIA PTS preconditioning before the measured runs: a sequential fill
	 * of twice the range in BENCH_PRECOND_BS writes (workload-independent),
	 * then rounds of the workload until steady (the rule of
	 * bench_steady_check, at most precondition_max rounds). Once before a
	 * single run or a sweep (with the base workload), before each
	 * configuration of a comparison (each is a new array).
	 */
	bool precondition;
	unsigned precondition_max;  /* 0: BENCH_SS_MAX_ROUNDS */
};

#define BENCH_PRECOND_BS      (128u << 10)
#define BENCH_PRECOND_IODEPTH 16
#define BENCH_PRECOND_PASSES  2
#define BENCH_PRECOND_FILL_MAX_S 86400.0    /* a fill that takes longer is cut there */

/* What preconditioning did before one measured run (or a configuration's). */
struct bench_precond {
	bool done;
	uint64_t fill_ns, fill_bytes;       /* the sequential fill */
	uint64_t fill_range_bytes;          /* the range it covered, all targets together */
	unsigned fill_targets;              /* over that many targets (raw ones, or 1 array) */
	uint64_t steady_ns;                 /* the workload rounds */
	unsigned rounds;
	bool reached;
	struct bench_steady ss;
};

/* What was run: one result per cell. */
struct bench_outcome {
	enum bench_run_kind kind;
	unsigned ncells;            /* planned (a sweep), or run (steady-state rounds) */
	unsigned nalloc;            /* slots of cells, res and ran */
	struct bench_cell *cells;   /* NULL for a single run or a replay */
	struct bench_result *res;   /* ncells */
	bool *ran;                  /* ncells: false when skipped or not reached (error) */
	/* with p->precondition: [0] before a single run or a sweep, [i] before
	   configuration i of a comparison (nalloc entries) */
	struct bench_precond *pre;
	/* queue-depth sweep */
	bool has_rating, rating_complete;
	double rating;
	/* steady state */
	bool ss_reached;
	unsigned ss_rounds;
	struct bench_steady ss;
	/* when and how long (the report's description) */
	time_t started;
	uint64_t wall_ns;
};

/*
 * Does some cell of the plan write: the workload or the trace, a matrix
 * sweep's cells, a drive-count sweep or creating an array (superblocks)?
 */
bool bench_plan_writes(const struct bench_runplan *p);

/* "single", "sweep", "steady-state", "replay", "compare" (the JSON's "kind"). */
const char *bench_run_kind_name(enum bench_run_kind k);

/* Was cell i run to the end and measured (not skipped, no error before it)? */
static inline bool bench_cell_measured(const struct bench_outcome *o, unsigned i)
{
	return o->ran[i] && !(o->cells && o->cells[i].skip[0]);
}

/* Why cell i was not measured: the plan's reason to skip it, else "error". */
static inline const char *bench_cell_why_not(const struct bench_outcome *o, unsigned i)
{
	return o->cells && o->cells[i].skip[0] ? o->cells[i].skip : "error";
}

/* Progress of bench_outcome_run, for a progress line. */
enum bench_progress_event {
	BENCH_PROGRESS_BEGIN,       /* before anything (preparing the targets included) */
	BENCH_PROGRESS_CELL,        /* a cell starts (not for a single run or a replay) */
	BENCH_PROGRESS_PHASE,       /* --precondition: a phase before cell (or the run) starts,
	                               label "precondition: ..." */
	BENCH_PROGRESS_TICK,        /* about every 100 ms of a cell's run */
	BENCH_PROGRESS_END,         /* after the last cell, or the error */
};

struct bench_progress {
	enum bench_progress_event event;
	unsigned cell, ncells;      /* cell 1-based (0 at BEGIN of cells); ncells: planned */
	const char *label;          /* the cell's ("run" or "replay" for one run) */
	double cell_s;              /* planned length of a cell in seconds; 0: unknown */
	bool single;                /* one run or a replay: no cells to count */
	bool precondition;          /* phases of preconditioning come: their length depends
				       on the target's speed, so cell_s leaves them out */
	uint64_t elapsed_ns, total_ns;      /* TICK: of the cell's run (total 0: unknown) */
};

struct bench_progress_hook {
	void (*fn)(void *arg, const struct bench_progress *p);
	void *arg;
};

/*
 * The cells of p into o (zeroed by the caller), with a result slot each.
 * -EINVAL with the reason when the sweep cannot be planned (see bench_plan),
 * -ENOMEM. o must be given to bench_outcome_fini either way.
 */
int bench_outcome_plan(struct bench_outcome *o, const struct bench_runplan *p, char *err,
		       size_t errlen);

/*
 * Run the cells of o (planned from p), calling hook (may be NULL). Writing
 * destroys data: when a cell writes, the targets are checked once (-EPERM
 * as bench_check_write_permission) and made if missing, before the first
 * cell. A cell that fails ends the run with its error; the cells before it
 * stay in o (ran[]). For a queue-depth sweep the X-bit rating is computed,
 * for steady state the rule after every round.
 */
int bench_outcome_run(struct bench_outcome *o, const struct bench_runplan *p,
		      const struct bench_progress_hook *hook, char *err, size_t errlen);

void bench_outcome_fini(struct bench_outcome *o);

#endif
