/* SPDX-License-Identifier: MIT */
/*
 * The planner's answer: every candidate array that the pool can make
 * (levels, layouts, member counts, chunk sizes, a hot spare), each
 * predicted and checked against the need, ranked by fit. Write policies
 * (the write-back cache) are not candidates yet: plan_candidate grows a
 * policy field and plan_predict a term for it when the cache lands.
 */
#ifndef URAID_PLAN_SEARCH_H
#define URAID_PLAN_SEARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan/drive.h"
#include "plan/model.h"
#include "plan/reliability.h"

#define PLAN_MAX_CHUNKS 8
#define PLAN_MAX_LEVELS 8

/* The drives at hand, in the order the members are taken (slot 0 first). */
struct plan_pool {
	unsigned n;
	const struct plan_drive *drive[PLAN_MAX_POOL];
};

struct plan_need {
	uint64_t capacity_bytes;    /* usable at least; 0: any */
	unsigned failures;          /* members lost at once without losing data */
	double rebuild_mib_s;       /* the rebuild's speed limit per member */
	double years;               /* service life */
	double replace_hours;       /* until a replacement is in, without a hot spare */
	double min_iops;            /* 0: none; else fit needs it, and cost ranks first */
};

/* What to consider: levels, chunk sizes, spares. */
struct plan_space {
	unsigned nlevels;
	int level[PLAN_MAX_LEVELS];
	unsigned nchunks;
	uint32_t chunk_bytes[PLAN_MAX_CHUNKS];
	unsigned max_spares;        /* 0 or 1 */
	unsigned min_members, max_members;  /* 0: the level's least, the pool's size */
};

struct plan_answer {
	struct plan_candidate c;
	char layout_name[24];       /* "" for levels without layouts */
	struct plan_perf perf;
	uint64_t usable_bytes;
	double efficiency;          /* usable / raw of members and spares */
	unsigned survives;
	double rebuild_s;
	bool loss_known;            /* AFR and URE of every drive known */
	double loss_prob, loss_per_year;
	bool cost_known;
	double cost_per_tb;         /* price of members and spares per usable TB (10^12) */
	bool fits;
	char reason[160];
	/* --verify: medians over its rounds (re-measure the host, predict at
	   that load, measure), the planner's own prediction above unchanged */
	bool verified;
	unsigned rounds;
	double m_iops, m_mib_s, m_mean_us, m_p99_us;
	double m_cpu_us;            /* measured process CPU per client I/O */
	double now_iops;            /* predicted at the load of each round */
	double ratio;               /* median of (predicted at this load / measured) */
};

/*
 * Predict every candidate of space on pool for the need and workload, rank
 * them (*out, *nout: free() it). Candidates that cannot be built (a layout
 * the geometry refuses for that count, say) are left out: *ndropped of
 * them, the first one's reason in drop_why. 0, or -EINVAL with the reason
 * (nothing can be built from the pool), -ENOMEM.
 */
int plan_search(const struct plan_pool *pool, const struct plan_need *need,
		const struct plan_workload *w, const struct plan_host *h,
		const struct plan_space *sp, struct plan_answer **out, unsigned *nout,
		unsigned *ndropped, char *drop_why, size_t drop_len, char *err, size_t errlen);

/* The layouts worth comparing for a level on `members` members (out: 8 at
 * most): the default, and RAID 10's near, far and offset copies (2, and 3
 * where the members allow). How many. */
unsigned plan_layouts_of(int level, unsigned members, uint32_t *out);

/* One candidate, predicted (used by plan_search and --verify's re-prediction). */
int plan_evaluate(const struct plan_pool *pool, const struct plan_need *need,
		  const struct plan_workload *w, const struct plan_host *h,
		  const struct plan_candidate *c, struct plan_answer *a, char *err, size_t errlen);

#endif
