/* SPDX-License-Identifier: MIT */
/* The report model, shared by report.c (building) and report_html.c (writing); not an API. */
#ifndef URAID_BENCH_REPORT_INT_H
#define URAID_BENCH_REPORT_INT_H

#include "bench/report.h"

/* Allocations live in chunks freed together with the report. */
struct br_chunk {
	struct br_chunk *next;
	size_t used, size;
	max_align_t data[];
};

struct br_pair {
	struct br_pair *next;
	const char *key, *value;
};

struct br_row {
	struct br_row *next;
	const char **cells;
};

enum br_kind { BR_HEADING, BR_CHART, BR_TABLE };

struct br_section {
	struct br_section *next;
	enum br_kind kind;
	const char *text;           /* heading, table title or chart note (may be NULL) */
	struct svg_chart chart;     /* BR_CHART: every pointer into the report's chunks */
	size_t ncols, nrows;        /* BR_TABLE */
	const char **header;
	struct br_row *rows, *last_row;
};

struct bench_report {
	const char *title;
	struct br_chunk *chunks;
	size_t bytes;               /* allocated so far, bounded by BENCH_REPORT_MAX_BYTES */
	bool over;                  /* an allocation was refused for the bound (-E2BIG) */
	struct br_pair *info, *info_last;
	struct br_pair *figs, *figs_last;
	struct br_section *sections, *last;
	size_t nsections;
};

#endif
