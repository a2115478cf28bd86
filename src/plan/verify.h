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

/* What the host-cost runs measured (CPU µs per client I/O; 0: not run). */
struct plan_host_note {
	double linear_read_us, linear_write_us, raid1_write_us, raid5_write_us;
};

/*
 * The host's CPU costs measured now (docs/planner.md, "Host"), all in the
 * process's CPU time per client I/O of 4 KiB random at QD 32, one worker:
 * a one-member linear array (client + 1 member I/O, reads and writes), a
 * two-member RAID 1 (client + 2 member writes: their difference is one
 * member write, the rest the client's own), a three-member RAID 5 (what
 * its client I/O, member I/Os and XOR leave is the parity path's work per
 * write). With one MEMBER everything is charged per member I/O; with two,
 * the parity path's work is not measured (0). h->cpu_share is the CPU share
 * of the linear run of the workload's main direction (writes if it writes).
 * h's parity rates must be measured before. 0 or -errno with the reason.
 */
int plan_verify_host_costs(const struct plan_verify_opts *o, bool writes, struct plan_host *h,
			   struct plan_host_note *note, char *err, size_t errlen);

/* The CPU share now (the one-member linear run alone): measured again right
 * before each verification, so that the load of a shared machine moves a
 * prediction and its measurement together. */
int plan_verify_share(const struct plan_verify_opts *o, bool writes, double *share,
		      char *err, size_t errlen);

/* One measurement of a candidate. */
struct plan_measured {
	double iops, mib_s, mean_us, p99_us;
	double cpu_us;              /* process CPU time per client I/O */
};

/* Build a's candidate on the first a->c.members paths (no spare: a spare
 * does not change what the array does) and run w on it, into *m. Refuses
 * (-EINVAL) a total queue depth that does not divide among w's jobs. */
int plan_verify_one(const struct plan_verify_opts *o, const struct plan_workload *w,
		    const struct plan_answer *a, struct plan_measured *m, char *err, size_t errlen);

#endif
