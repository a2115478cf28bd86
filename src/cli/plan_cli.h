/* SPDX-License-Identifier: MIT */
/* uraid plan: what the option parser hands the output (plan.c, plan_out.c). */
#ifndef URAID_CLI_PLAN_CLI_H
#define URAID_CLI_PLAN_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "plan/search.h"
#include "plan/verify.h"

#define PLAN_MAX_ROUNDS 15

/* Everything the answer is printed from. */
struct plan_run {
	struct plan_pool pool;
	struct plan_need need;
	struct plan_workload wl;
	struct plan_host host;
	bool parity_measured;       /* host.parity_rate was measured now (no --parity-mib-s) */
	bool host_measured;         /* host CPU costs measured now on the MEMBERs */
	struct plan_host_note host_note;
	const char *drive_source;   /* how the drives were given, one line */
	struct plan_answer *ans;
	unsigned nans;
	unsigned top;               /* rows of the table (all in JSON) */
	unsigned verified;          /* the first `verified` answers have m_* */
	unsigned nmodels;
	struct plan_drive models[PLAN_MAX_DRIVE_MODELS];
	unsigned model_count[PLAN_MAX_DRIVE_MODELS];
};

void plan_print_table(FILE *f, const struct plan_run *r);
void plan_print_json(FILE *f, const struct plan_run *r);
/* 0, or -errno with the reason in err. */
int plan_write_html(const struct plan_run *r, const char *path, char *err, size_t errlen);
/* "raid5 left-symmetric 4+1 64K" */
const char *plan_cand_name(const struct plan_answer *a, char *buf, size_t len);

#endif
