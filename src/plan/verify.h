/* SPDX-License-Identifier: MIT */
/*
 * `uraid plan --verify`: build a candidate on the given members and measure
 * it with the in-process benchmark (bench/), and a quick characterisation of
 * one member when no drive model is given. Writing destroys the members'
 * data: the caller passes BENCH_FORCE_WRITE only when the user said so.
 */
#ifndef URAID_PLAN_VERIFY_H
#define URAID_PLAN_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "plan/drive.h"
#include "plan/search.h"

struct plan_verify_opts {
	const char *const *paths;   /* members, in slot order */
	unsigned npaths;
	uint32_t flags;             /* BENCH_FORCE_WRITE */
	double runtime_s, ramp_s;   /* of each measurement */
	uint64_t seed;
};

/*
 * Measure a characterisation of paths[0] as the engine drives it (a
 * linear array of that one member, built on it: 4 KiB random read and
 * write at QD 1, 4, 16 and 32, 1 MiB sequential read and write; one worker
 * each) into d, named "quick: PATH". 0 or -errno with the reason.
 */
int plan_verify_characterise(const struct plan_verify_opts *o, struct plan_drive *d,
			     char *err, size_t errlen);

/*
 * The host's cost of one member I/O now, as the characterisation takes it
 * (1 / IOPS of the one-member linear array at QD 32, one worker), for reads
 * when read_us is not NULL and writes when write_us is not NULL: measured
 * again right before each candidate, so that the load of a shared machine
 * moves a prediction and its measurement together.
 */
int plan_verify_host_cost(const struct plan_verify_opts *o, double *read_us, double *write_us,
			  char *err, size_t errlen);

/* Build a's candidate on the first a->c.members paths (no spare: a spare
 * does not change what the array does) and run w on it; fills a->m_*. */
int plan_verify_one(const struct plan_verify_opts *o, const struct plan_workload *w,
		    struct plan_answer *a, char *err, size_t errlen);

#endif
