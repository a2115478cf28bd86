/* SPDX-License-Identifier: MIT */
/* CHECK(cond, fmt, ...): count and report a failed expectation, keep going. */
#ifndef URAID_TESTS_CHECK_H
#define URAID_TESTS_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond, ...) do {                                                   \
	if (!(cond)) {                                                          \
		failures++;                                                     \
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__);                                   \
		fputc('\n', stderr);                                            \
	}                                                                       \
} while (0)

#endif
