/* SPDX-License-Identifier: MIT */
/*
 * The RAID 4/5/6 write planner: per unit of a row (the same sector range
 * in every chunk), which of reconstruct-write, read-modify-write, FULL
 * (read what can be read, rebuild the rest) or DIRECT (no parity left to
 * write) needs the fewest member reads, given which data chunks the unit
 * writes and which blocks are lost. A full row needs no reads (RCW over no
 * untouched chunk): that is how gathered sequential writes (raid5_gather.c)
 * skip the reads. Blocks the stripe cache holds (raid5_heads.c) cost no
 * read, so a rewrite of a kept unit plans the mode that reads nothing.
 * A pure function; raid5_priv.h states the contract.
 *
 * In a write (raid5.c draws the whole path): write_unit (raid5_write.c)
 * asks r5_plan_write, then issues the reads the plan names.
 */
#include <errno.h>

#include "engine/level/raid5_priv.h"

int r5_plan_write(const struct r5_plan_in *in, struct r5_plan *out)
{
	unsigned d = in->data_disks, nw = 0, nu = 0, nw_lost = 0, nu_lost = 0;
	unsigned nw_cached = 0, nu_cached = 0;  /* readable blocks the stripe cache holds */
	bool q_lost = in->npar < 2 || in->q_lost;
	unsigned par_live = !in->p_lost + (in->npar == 2 && !in->q_lost);
	unsigned par_writable = !in->p_dead + (in->npar == 2 && !in->q_dead);
	unsigned nlost = in->p_lost + (in->npar == 2 && in->q_lost);

	for (unsigned k = 0; k < d; k++) {
		bool cached = in->cached && in->cached[k] && !in->lost[k];

		if (in->written[k]) {
			nw++;
			nw_lost += in->lost[k] ? 1 : 0;
			nw_cached += cached;
		} else {
			nu++;
			nu_lost += in->lost[k] ? 1 : 0;
			nu_cached += cached;
		}
	}
	nlost += nw_lost + nu_lost;
	out->skip_q = false;
	if (par_writable == 0) {
		out->mode = R5_DIRECT;
		out->reads = 0;
		return 0;
	}
	if (nlost > in->npar)
		return -EIO;
	if (!in->force_full) {
		bool rcw_ok = nu_lost == 0, rmw_ok = nw_lost == 0;
		unsigned par_cached = (!in->p_lost && in->p_cached) +
				      (in->npar == 2 && !in->q_lost && in->q_cached);
		/* reads left: blocks kept in the stripe cache need none */
		unsigned rcw = nu - nu_cached, rmw = nw - nw_cached + par_live - par_cached;

		if (rcw_ok && (!rmw_ok || rcw <= rmw)) {
			out->mode = R5_RCW;
			out->reads = rcw;
			return 0;
		}
		if (rmw_ok) {
			out->mode = R5_RMW;
			out->reads = rmw;
			return 0;
		}
	}
	out->mode = R5_FULL;
	out->skip_q = in->npar == 2 && !q_lost && nlost < 2;
	out->reads = d + in->npar - nlost - out->skip_q;
	return 0;
}
