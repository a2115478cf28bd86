/* SPDX-License-Identifier: MIT */
/*
 * The machine a benchmark ran on, as the reports state it: host name,
 * kernel, CPU model and the CPUs online. Read once, never fails (what cannot
 * be read is "?").
 */
#ifndef URAID_BENCH_HOST_H
#define URAID_BENCH_HOST_H

#include <stddef.h>
#include <time.h>

struct bench_host {
	char hostname[256];
	char kernel[400];           /* "Linux 6.1.0-18-amd64 x86_64" */
	char cpu_model[160];        /* /proc/cpuinfo's "model name" */
	unsigned cores;             /* CPUs online */
};

void bench_host_read(struct bench_host *h);

/* t as UTC ISO 8601, "2026-12-02T03:50:03Z". */
char *bench_utc_iso8601(time_t t, char *buf, size_t len);

#endif
