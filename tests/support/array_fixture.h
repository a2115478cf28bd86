/* SPDX-License-Identifier: MIT */
/*
 * Shared by the unit tests that build arrays through the library: one call
 * that creates an array as those tests want it (no bitmap, assume-clean,
 * homehost "<none>").
 */
#ifndef URAID_TESTS_ARRAY_FIXTURE_H
#define URAID_TESTS_ARRAY_FIXTURE_H

#include <stdint.h>

/*
 * Create an array of n members at paths ("missing" for an absent one):
 * level and layout by name (layout NULL: the level's default), chunk_kib
 * (0: the default), superblock 1.minor. 0, or -1 with the reason on stderr
 * after `who`.
 */
int fixture_create_array(const char *who, const char *level, const char *layout, unsigned n,
			 unsigned chunk_kib, unsigned minor, const char *const *paths);

/* A new file of `bytes` (sparse) at path, replacing any; 0, or -1 after perror. */
int fixture_make_file(const char *path, uint64_t bytes);

#endif
