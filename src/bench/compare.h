/* SPDX-License-Identifier: MIT */
/*
 * --compare: the same workload on several array configurations built from
 * the same members. Each --compare=KEY=V1,V2,... is one axis; several axes
 * form the cross product, one configuration (a struct bench_cell with
 * compare set) per combination.
 *
 * The keys live in one table (compare.c), one entry each: its name, a
 * parser for one value, and how that value sets the configuration up in
 * the workload and targets. Adding a key (the write cache, read-ahead) is
 * one entry there. A configuration the members cannot make (RAID 6 on 3
 * members, a layout its level has not) is planned as skipped, with the
 * reason; so is one that repeats an earlier configuration because a value
 * does not apply to its level (the chunk of RAID 1).
 *
 * Planning only: method.c runs the cells, each on an array created anew.
 */
#ifndef URAID_BENCH_COMPARE_H
#define URAID_BENCH_COMPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/bench.h"
#include "bench/sweep.h"

#define BENCH_COMPARE_MAX_VALUES  16
#define BENCH_COMPARE_MAX_CONFIGS 256

/* One value of a key as parsed: a number and/or a word, and how it is shown. */
struct bench_compare_value {
	uint64_t num;               /* level, members, chunk in KiB */
	char word[32];              /* a layout name */
	char text[32];              /* as shown in labels and JSON: "raid5", "64k" */
};

struct bench_compare_key {
	const char *name;           /* "level" */
	const char *want;           /* the values it takes, for errors and help */
	/* one value of s (not NUL-terminated: len chars); 0 or -EINVAL with err */
	int (*parse)(const char *s, size_t len, struct bench_compare_value *v, char *err,
		     size_t errlen);
	/*
	 * Set the configuration up: wl and tg hold the base with the keys
	 * before this one (table order) applied. 0, or 1 with why: these
	 * members cannot make it.
	 */
	int (*apply)(const struct bench_compare_value *v, struct bench_workload *wl,
		     struct bench_targets *tg, char *why, size_t whylen);
	/* does the key mean anything for the configuration tg (NULL: always)? */
	bool (*applies)(const struct bench_targets *tg);
};

struct bench_compare_axis {
	const struct bench_compare_key *key;
	unsigned nval;
	struct bench_compare_value val[BENCH_COMPARE_MAX_VALUES];
};

/* The axes, kept in the key table's order (a layout needs its level first). */
struct bench_compare {
	unsigned naxes;
	struct bench_compare_axis axis[BENCH_COMPARE_MAX_KEYS];
};

/* The i-th key of the table, NULL past the last (help, completion, tests). */
const struct bench_compare_key *bench_compare_key_at(unsigned i);

/* Add one --compare argument "KEY=V1,V2,..." to cmp; 0 or -EINVAL (a key twice too). */
int bench_compare_parse(const char *arg, struct bench_compare *cmp, char *err, size_t errlen);

/*
 * The configurations of cmp on the base targets tg0 (the paths given; the
 * level of --level unless an axis sets it), in run order, into a new array
 * (free()); those that cannot be made are skipped with the reason. -EINVAL
 * when no configuration has a level or a value asks more members than
 * given, -E2BIG past BENCH_COMPARE_MAX_CONFIGS.
 */
int bench_compare_plan(const struct bench_compare *cmp, const struct bench_targets *tg0,
		       struct bench_cell **cells, unsigned *ncells, char *err, size_t errlen);

/*
 * The configuration of cell c: the base workload and targets with every
 * axis' value applied (an array created on the first members). 0, or 1 with
 * why when it cannot be made.
 */
int bench_compare_apply(const struct bench_compare *cmp, const struct bench_cell *c,
			const struct bench_workload *wl0, const struct bench_targets *tg0,
			struct bench_workload *wl, struct bench_targets *tg, char *why,
			size_t whylen);

/*
 * c's configuration as "level=raid5;chunk=64 KiB" (the CSV's cell_config):
 * the axes that apply to it, values as in its label. The length written.
 */
size_t bench_compare_config(const struct bench_compare *cmp, const struct bench_cell *c,
			    char *buf, size_t len);

#endif
