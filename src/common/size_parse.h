/* SPDX-License-Identifier: MIT */
/*
 * The one parser of sizes the user types (--chunk, --bs, --size, --compare
 * chunk=..., --sweep bs=...): digits, then an optional B, K, M, G or T
 * (binary; "K", "KiB" and "KB" all mean 1024), else default_unit.
 */
#ifndef URAID_COMMON_SIZE_PARSE_H
#define URAID_COMMON_SIZE_PARSE_H

#include <stdint.h>

/* A size at the start of s; *end after it (a list goes on there). 0 or -EINVAL. */
int size_parse_prefix(const char *s, uint64_t default_unit, uint64_t *bytes, const char **end);

/* The whole of s is one size. 0 or -EINVAL. */
int size_parse(const char *s, uint64_t default_unit, uint64_t *bytes);

#endif
