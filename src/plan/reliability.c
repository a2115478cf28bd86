// SPDX-License-Identifier: MIT
/*
 * Data-loss probability by walking the failure states a few steps deep:
 * from every first failure, every further failure within the window, until
 * a state the level does not survive. First-order in the window (failures
 * inside one window are rare): see docs/planner.md.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/level.h>

#include "common/errmsg.h"
#include "plan/reliability.h"

#define HOURS_PER_YEAR 8766.0   /* 365.25 days */
#define MAX_DEPTH 4             /* failure states walked at most (RAID 6 needs 3) */

struct walk {
	const struct uraid_geom *g;
	bool present[URAID_MAX_MEMBERS];
	double p_window;            /* one given member fails within a window */
	double ure, bits_per_member;
};

static bool survives(struct walk *w)
{
	return uraid_level_survives(w->g, w->present, NULL);
}

/* The chance of losing data in the window of the current state (one that
 * survives, `depth` members lost). */
static double loss_in_window(struct walk *w, unsigned depth)
{
	unsigned n = w->g->raid_disks;
	double at_risk_bits = 0, further = 0;
	for (unsigned t = 0; t < n; t++) {
		if (!w->present[t])
			continue;
		w->present[t] = false;
		bool fatal = !survives(w);
		/* a member whose loss now is fatal holds data with no other copy:
		   the rebuild reads it, and an unreadable sector there is lost */
		if (fatal)
			at_risk_bits += w->bits_per_member;
		double next = fatal ? 1 : depth + 1 < MAX_DEPTH ? loss_in_window(w, depth + 1) : 0;
		further += w->p_window * next;
		w->present[t] = true;
	}
	double p_ure = 1 - exp(-at_risk_bits * w->ure);
	double p = p_ure + (1 - p_ure) * (further > 1 ? 1 : further);
	return p > 1 ? 1 : p;
}

int plan_reliability(const struct plan_candidate *c, const struct plan_rel_in *in,
		     struct plan_rel_out *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const struct uraid_level_info *info = uraid_level_info(c->level);
	if (!info)
		return uraid_errf(err, errlen, -EINVAL, "level %d is not one uraid runs", c->level);
	struct walk *w = calloc(1, sizeof(*w));
	struct uraid_geom *g = malloc(sizeof(*g));
	uint64_t *ms = calloc(c->members, sizeof(uint64_t));
	int rc = 0;
	if (!w || !g || !ms) {
		rc = -ENOMEM;
		goto out;
	}
	/* which failures are fatal does not depend on the size: a small geometry */
	uint32_t cs = info->chunk == URAID_CHUNK_STRIPE ? (c->chunk_bytes ? c->chunk_bytes / 512 : 128) : 0;
	for (unsigned i = 0; i < c->members; i++)
		ms[i] = (uint64_t)(cs ? cs : 8) * 64;
	struct uraid_geom_params p = {
		.level = c->level, .layout = c->layout, .raid_disks = c->members,
		.chunk_sectors = cs, .dev_sectors = ms[0], .member_sectors = ms,
		.raid0_layout_flag = info->layout_feature != 0,
	};
	rc = uraid_geom_init(g, &p, err, errlen);
	if (rc)
		goto out;
	double lambda = -log(1 - (in->afr < 0.999999 ? in->afr : 0.999999));  /* per year */
	w->g = g;
	w->p_window = 1 - exp(-lambda * in->window_h / HOURS_PER_YEAR);
	w->ure = in->ure;
	w->bits_per_member = (double)in->member_used_bytes * 8;
	for (unsigned i = 0; i < c->members; i++)
		w->present[i] = true;
	double sum = 0;
	for (unsigned s = 0; s < c->members; s++) {
		w->present[s] = false;
		sum += survives(w) ? loss_in_window(w, 1) : 1;
		w->present[s] = true;
	}
	out->loss_per_year = lambda * sum;
	out->loss_prob = 1 - exp(-out->loss_per_year * in->years);
out:
	free(w);
	free(g);
	free(ms);
	return rc;
}

double plan_rebuild_seconds(uint64_t member_used_bytes, double limit_mib_s, double read_mib_s,
			    double write_mib_s)
{
	double r = limit_mib_s;
	if (read_mib_s > 0 && read_mib_s < r)
		r = read_mib_s;
	if (write_mib_s > 0 && write_mib_s < r)
		r = write_mib_s;
	return r > 0 ? (double)member_used_bytes / (r * 1048576.0) : INFINITY;
}
