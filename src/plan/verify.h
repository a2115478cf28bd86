/* SPDX-License-Identifier: MIT */
/*
 * `uraid plan --verify`: build a candidate on the given members and measure
 * it with the in-process benchmark (bench/), and a quick characterisation of
 * one member when no drive model is given. Writing destroys the members'
 * data: the caller passes BENCH_FORCE_WRITE only when the user said so.
 */
#ifndef URAID_PLAN_VERIFY_H
#define URAID_PLAN_VERIFY_H

#include <stdbool.h>
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

/* One run of the host's calibration: CPU µs per client I/O. */
struct plan_host_run {
	char name[48];              /* "linear_x2_write", "raid10_n2_x2_read", ... */
	double us;
};

#define PLAN_NOTE_MAX_RUNS 64

/* What the host-cost runs measured (0 runs: not measured). */
struct plan_host_note {
	unsigned nruns;
	struct plan_host_run run[PLAN_NOTE_MAX_RUNS];
	bool split;                 /* the client / member split was made */
};

/*
 * The host's CPU costs measured now (docs/planner.md, "--verify";
 * calibrate.c), all in the process's CPU time per client I/O of 4 KiB
 * random at QD 32, one worker: linear arrays of 1, 2, 3, 4, 6, ... members
 * up to the MEMBERs (and sp's largest count): a client I/O and one member
 * I/O with that many member files in use, into h->cpu_us_member_at and
 * h->cpu_share_at; RAID 0 x2 with 8 KiB I/O on a 4 KiB chunk (one member
 * I/O more than linear x2: the split into the client's own work and a
 * member I/O's); and each level family of sp's levels on its smallest array
 * (its own work beyond the model's member I/Os and parity: h->own). Member
 * reads always, writes when `writes`; the families in the directions the
 * workload uses. With one MEMBER the client's work is 0 and no family is
 * measured. h's parity rates must be measured before. 0 or -errno.
 */
int plan_verify_host_costs(const struct plan_verify_opts *o, bool reads, bool writes,
			   const struct plan_space *sp, struct plan_host *h,
			   struct plan_host_note *note, char *err, size_t errlen);

/* The CPU share now on a linear array of `members` (the workload's main
 * direction): measured again right before each verification, so that the
 * load of a shared machine moves a prediction and its measurement together. */
int plan_verify_share(const struct plan_verify_opts *o, bool writes, unsigned members,
		      double *share, char *err, size_t errlen);

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
