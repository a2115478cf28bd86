/* SPDX-License-Identifier: MIT */
/*
 * The chance of losing data over a service life, and the rebuild time of
 * one member (docs/planner.md, "Reliability", states the model and its
 * assumptions): members fail independently at a constant rate from their
 * AFR; a failure opens a window (replacement delay, then the rebuild) in
 * which a further failure, or an unrecoverable read error in data that has
 * no redundancy left, loses data. Which further failures are fatal is asked
 * of the level (uraid_level_survives), so RAID 10's layouts count only the
 * members that hold the other copies.
 */
#ifndef URAID_PLAN_RELIABILITY_H
#define URAID_PLAN_RELIABILITY_H

#include <stddef.h>
#include <stdint.h>

#include "plan/model.h"

struct plan_rel_in {
	double afr;                 /* failures per member-year, 0..1 */
	double ure;                 /* unrecoverable errors per bit read */
	double window_h;            /* hours from a failure until redundancy is back */
	double years;               /* service life */
	uint64_t member_used_bytes; /* what a rebuild reads from each survivor */
};

struct plan_rel_out {
	double loss_per_year;       /* expected data-loss events per year */
	double loss_prob;           /* over the service life */
};

/* 0, or -EINVAL with the reason (bad geometry), -ENOMEM. */
int plan_reliability(const struct plan_candidate *c, const struct plan_rel_in *in,
		     struct plan_rel_out *out, char *err, size_t errlen);

/* Seconds to rebuild member_used_bytes at the lowest of the three rates (MiB/s). */
double plan_rebuild_seconds(uint64_t member_used_bytes, double limit_mib_s, double read_mib_s,
			    double write_mib_s);

#endif
