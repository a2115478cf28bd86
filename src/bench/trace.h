/* SPDX-License-Identifier: MIT */
/*
 * fio iolog traces (version 2 and 3) for --replay: loaded whole before the
 * run into an array of read/write/sync actions with their file index and
 * (version 3, or version 2 "wait" lines) their time from the start.
 */
#ifndef URAID_BENCH_TRACE_H
#define URAID_BENCH_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "bench/bench.h"

enum { BENCH_OP_READ, BENCH_OP_WRITE, BENCH_OP_SYNC };

struct bench_trace_op {
	uint64_t t_ns;              /* from the start of the trace */
	uint64_t offset;
	uint32_t len;               /* 0 for sync */
	uint32_t lineno;            /* in the trace file, for messages */
	uint16_t file;              /* index into bench_trace.file */
	uint8_t op;                 /* BENCH_OP_* */
};

struct bench_trace {
	unsigned version;           /* 2 or 3 */
	unsigned nfiles;
	char *file[BENCH_MAX_TARGETS];      /* in the order of their "add" lines */
	size_t nops;
	struct bench_trace_op *ops;
	uint64_t skipped;           /* trim actions (not replayed) */
	uint32_t max_len;
	uint64_t bytes[2];          /* read, written by the whole trace */
};

/* Load a trace; 0 or -errno with "FILE:LINE: why". Free with bench_trace_free. */
int bench_trace_load(const char *path, struct bench_trace *t, char *err, size_t errlen);
/* The same from text in memory (name is used in messages). */
int bench_trace_parse(const char *name, const char *text, size_t len, struct bench_trace *t,
		      char *err, size_t errlen);
void bench_trace_free(struct bench_trace *t);

#endif
