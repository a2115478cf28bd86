// SPDX-License-Identifier: MIT
/*
 * Candidates from the pool, each predicted (model.c, reliability.c) and
 * ranked: first whether it fits (capacity, failures, and the IOPS asked
 * for), then performance (or cost, when an IOPS figure was asked for and
 * met), then cost.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "plan/search.h"

static double fmt_tib(uint64_t b)
{
	return (double)b / (double)(1ull << 40);
}

int plan_evaluate(const struct plan_pool *pool, const struct plan_need *need,
		  const struct plan_workload *w, const struct plan_host *h,
		  const struct plan_candidate *c, struct plan_answer *a, char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	a->c = *c;
	unsigned used = c->members + c->spares;
	if (used > pool->n)
		return uraid_errf(err, errlen, -EINVAL, "%u drives wanted, %u given", used, pool->n);
	uint64_t bytes[PLAN_MAX_POOL];
	for (unsigned i = 0; i < c->members; i++)
		bytes[i] = pool->drive[i]->capacity_bytes;
	struct plan_shape *s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	int rc = plan_shape_init(s, c, bytes, err, errlen);
	if (!rc)
		rc = plan_predict(s, pool->drive, w, h, &a->perf);
	if (rc) {
		free(s);
		return rc;
	}
	const struct uraid_level_info *info = s->info;
	if (info->has_layouts)
		uraid_layout_name(c->level, c->layout, a->layout_name, sizeof(a->layout_name));
	a->usable_bytes = s->usable_bytes;
	a->survives = s->max_failures;
	double raw = 0, price = 0, afr = 0, ure = 0, rd = INFINITY, wr = INFINITY;
	bool priced = true, known = true;
	for (unsigned i = 0; i < used; i++) {
		const struct plan_drive *d = pool->drive[i];
		raw += (double)d->capacity_bytes;
		priced = priced && d->price >= 0;
		price += d->price;
		/* a mixed pool: the worst member's rates (conservative) */
		known = known && d->afr >= 0 && d->ure >= 0;
		afr = fmax(afr, d->afr);
		ure = fmax(ure, d->ure);
		rd = fmin(rd, d->seq_read_mib_s);
		wr = fmin(wr, d->seq_write_mib_s);
	}
	a->efficiency = raw > 0 ? (double)a->usable_bytes / raw : 0;
	a->cost_known = priced && a->usable_bytes;
	a->cost_per_tb = a->cost_known ? price / ((double)a->usable_bytes / 1e12) : 0;
	a->rebuild_s = info->redundant ? plan_rebuild_seconds(s->member_used_bytes,
		need->rebuild_mib_s, rd, wr) : 0;
	a->loss_known = known;
	if (known) {
		struct plan_rel_in in = {
			.afr = afr, .ure = ure, .years = need->years,
			.window_h = a->rebuild_s / 3600 + (c->spares ? 0 : need->replace_hours),
			.member_used_bytes = s->member_used_bytes,
		};
		struct plan_rel_out ro;
		rc = plan_reliability(c, &in, &ro, err, errlen);
		a->loss_prob = ro.loss_prob;
		a->loss_per_year = ro.loss_per_year;
	}
	free(s);
	if (rc)
		return rc;

	bool cap_ok = a->usable_bytes >= need->capacity_bytes;
	bool fail_ok = a->survives >= need->failures;
	bool iops_ok = !need->min_iops || a->perf.iops >= need->min_iops;
	a->fits = cap_ok && fail_ok && iops_ok;
	if (!cap_ok)
		snprintf(a->reason, sizeof(a->reason), "too small: %.2f TiB usable, %.2f TiB needed",
			 fmt_tib(a->usable_bytes), fmt_tib(need->capacity_bytes));
	else if (!fail_ok)
		snprintf(a->reason, sizeof(a->reason), "survives %u failure%s, %u needed",
			 a->survives, a->survives == 1 ? "" : "s", need->failures);
	else if (!iops_ok)
		snprintf(a->reason, sizeof(a->reason), "too slow: %.0f IOPS, %.0f needed",
			 a->perf.iops, need->min_iops);
	return 0;
}

/* Whether a (in the fitting part, when an IOPS figure was asked for) is ranked
   by its known cost rather than by its IOPS. */
static bool by_cost(const struct plan_answer *a, bool min_iops_given)
{
	return min_iops_given && a->fits && a->cost_known;
}

/* After the IOPS: the cheaper, then the safer, then the fewer drives. */
static int tie_break(const struct plan_answer *a, const struct plan_answer *b)
{
	if (a->cost_known != b->cost_known)
		return a->cost_known ? -1 : 1;
	if (a->cost_known && a->cost_per_tb != b->cost_per_tb)
		return a->cost_per_tb < b->cost_per_tb ? -1 : 1;
	if (a->loss_known != b->loss_known)
		return a->loss_known ? -1 : 1;
	if (a->loss_known && a->loss_prob != b->loss_prob)
		return a->loss_prob < b->loss_prob ? -1 : 1;
	unsigned da = a->c.members + a->c.spares, db = b->c.members + b->c.spares;
	return da < db ? -1 : da > db;
}

/*
 * The strict order of the answer (a total order, so qsort_r's result does
 * not depend on the input order): fits first; among those that fit when an
 * IOPS figure was asked for, the priced ones by cost; then by IOPS, higher
 * first; then tie_break. arg: was an IOPS asked for?
 */
static int by_fit(const void *pa, const void *pb, void *arg)
{
	const struct plan_answer *a = pa, *b = pb;
	bool mi = *(const bool *)arg;
	if (a->fits != b->fits)
		return a->fits ? -1 : 1;
	if (by_cost(a, mi) != by_cost(b, mi))
		return by_cost(a, mi) ? -1 : 1;
	if (by_cost(a, mi) && a->cost_per_tb != b->cost_per_tb)
		return a->cost_per_tb < b->cost_per_tb ? -1 : 1;
	if (a->perf.iops != b->perf.iops)
		return a->perf.iops > b->perf.iops ? -1 : 1;
	return tie_break(a, b);
}

static int by_tie_break(const void *pa, const void *pb)
{
	return tie_break(pa, pb);
}

/*
 * IOPS within 2 % are the same performance (the model is not that precise,
 * and the cheaper or safer of two equals should win): after the strict
 * sort, each run of answers ranked by IOPS whose IOPS lie within 2 % of the
 * run's first is one group, ordered within by tie_break alone.
 */
static void group_equals(struct plan_answer *v, size_t n, bool mi)
{
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !by_cost(&v[i], mi) && v[j].fits == v[i].fits && !by_cost(&v[j], mi) &&
		       v[j].perf.iops >= 0.98 * v[i].perf.iops)
			j++;
		if (j - i > 1)
			qsort(v + i, j - i, sizeof(*v), by_tie_break);
		i = j;
	}
}

unsigned plan_layouts_of(int level, unsigned members, uint32_t *out)
{
	static const char *const r10[] = { "n2", "f2", "o2", "n3" };
	const struct uraid_level_info *info = uraid_level_info(level);
	unsigned n = 0;
	if (info && info->has_layouts && info->level == URAID_LEVEL_10) {
		for (unsigned i = 0; i < 4; i++)
			if (!uraid_layout_parse(level, r10[i], &out[n]) &&
			    uraid_layout_valid(level, out[n], members))
				n++;
		return n;
	}
	out[0] = uraid_layout_default(level);
	return uraid_layout_valid(level, out[0], members) ? 1 : 0;
}

int plan_search(const struct plan_pool *pool, const struct plan_need *need,
		const struct plan_workload *w, const struct plan_host *h,
		const struct plan_space *sp, struct plan_answer **out, unsigned *nout,
		unsigned *ndropped, char *drop_why, size_t drop_len, char *err, size_t errlen)
{
	size_t cap = 64, n = 0;
	struct plan_answer *v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	int rc = 0;
	unsigned dropped = 0;           /* candidates that could not be built, and why */
	char first_drop[160] = "";
	for (unsigned li = 0; li < sp->nlevels && !rc; li++) {
		const struct uraid_level_info *info = uraid_level_info(sp->level[li]);
		if (!info)
			continue;
		unsigned lo = info->create_min_members > sp->min_members ? info->create_min_members
									 : sp->min_members;
		unsigned hi = sp->max_members && sp->max_members < pool->n ? sp->max_members : pool->n;
		for (unsigned m = lo; m <= hi && !rc; m++) {
			uint32_t lay[8];
			unsigned nlay = plan_layouts_of(info->level, m, lay);
			unsigned nch = info->chunk == URAID_CHUNK_STRIPE ? sp->nchunks : 1;
			unsigned maxsp = info->redundant ? sp->max_spares : 0;
			for (unsigned spares = 0; spares <= maxsp && m + spares <= pool->n; spares++)
				for (unsigned l = 0; l < nlay; l++)
					for (unsigned k = 0; k < nch && !rc; k++) {
						struct plan_candidate c = {
							.level = info->level, .layout = lay[l],
							.members = m, .spares = spares,
							.chunk_bytes = info->chunk == URAID_CHUNK_STRIPE ?
								sp->chunk_bytes[k] : 0,
						};
						if (n == cap) {
							void *nv = realloc(v, 2 * cap * sizeof(*v));
							if (!nv) {
								rc = -ENOMEM;
								break;
							}
							v = nv;
							cap *= 2;
						}
						char why[160];
						int erc = plan_evaluate(pool, need, w, h, &c, &v[n], why,
									sizeof(why));
						if (erc == -ENOMEM)
							rc = erc;
						else if (erc == 0)
							n++;
						else if (dropped++ == 0)
							snprintf(first_drop, sizeof(first_drop), "%s",
								 why);
					}
		}
	}
	if (!rc && !n && dropped)
		rc = uraid_errf(err, errlen, -EINVAL, "no candidate can be built from %u drive%s: "
				"%s", pool->n, pool->n == 1 ? "" : "s", first_drop);
	else if (!rc && !n)
		rc = uraid_errf(err, errlen, -EINVAL, "no candidate can be built from %u drive%s "
				"with the levels and member counts asked for (RAID 0, 1, 4, 5 and 10 "
				"need 2 members, RAID 6 needs 4)", pool->n,
				pool->n == 1 ? "" : "s");
	*ndropped = dropped;
	if (dropped)
		snprintf(drop_why, drop_len, "%s", first_drop);
	if (rc) {
		free(v);
		return rc;
	}
	bool min_iops_given = need->min_iops > 0;
	qsort_r(v, n, sizeof(*v), by_fit, &min_iops_given);
	group_equals(v, n, min_iops_given);
	/* the reason of those that fit, now that the order is known */
	for (size_t i = 0; i < n; i++) {
		struct plan_answer *a = &v[i];
		if (!a->fits)
			continue;
		if (i == 0)
			snprintf(a->reason, sizeof(a->reason), "%s; %s", "best fit",
				 min_iops_given ? "lowest cost that meets the IOPS" :
				 "fastest for the workload");
		else
			snprintf(a->reason, sizeof(a->reason), "fits; %.0f%% of the best's IOPS%s",
				 v[0].perf.iops ? 100 * a->perf.iops / v[0].perf.iops : 0,
				 a->cost_known && v[0].cost_known ?
				 (a->cost_per_tb < v[0].cost_per_tb ? ", cheaper" : "") : "");
	}
	*out = v;
	*nout = (unsigned)n;
	return 0;
}
