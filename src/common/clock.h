/* SPDX-License-Identifier: MIT */
/* The monotonic clock in nanoseconds: deadlines, uptimes and rates. */
#ifndef URAID_COMMON_CLOCK_H
#define URAID_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t uraid_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
