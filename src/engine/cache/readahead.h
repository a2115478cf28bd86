/* SPDX-License-Identifier: MIT */
/*
 * Read-ahead of sequential read streams (readahead.c). The array's request
 * path calls three hooks (core/array.c):
 *
 *   - ra_read() for every client READ before it is cut into pieces: true
 *     when read-ahead took the request (answered from prefetched data, or
 *     waiting for a prefetch in flight that covers it); false: the request
 *     goes to the level as usual. It also detects streams and starts
 *     prefetches.
 *   - ra_invalidate() for every WRITE, WRITE_ZEROES and DISCARD, when it
 *     starts and again when it has reached the members, before it is
 *     acknowledged: prefetched data of the range is dropped, and a prefetch
 *     in flight over it is dropped when it lands (its generation is old).
 *     A cache that acknowledges writes before they reach the members (a
 *     write-back cache) must call it when it accepts a write and when it
 *     destages one.
 *   - ra_status() for uraid_array_status.
 *
 * One mutex per array guards the stream table; reads that copy prefetched
 * data pin the buffers and copy outside it.
 */
#ifndef URAID_ENGINE_CACHE_READAHEAD_H
#define URAID_ENGINE_CACHE_READAHEAD_H

#include <stdbool.h>
#include <stdint.h>

#include <uraid/engine.h>

struct array;
struct array_req;

/* Set up at assembly (after the level's init): `bytes` as
 * uraid_assemble_opts.read_ahead_bytes. 0 or -errno with err filled. */
int ra_init(struct array *a, uint64_t bytes, char *err, size_t errlen);
/* At close, after every request and prefetch has ended. */
void ra_fini(struct array *a);

bool ra_read(struct array_req *rq);
void ra_invalidate(struct array *a, uint64_t offset, uint64_t length);
void ra_status(struct array *a, struct uraid_read_ahead_status *st);
/* Read ahead even when every member is in memory (tests: the paths of a
 * prefetch completed inline). Before the array's first read. */
void ra_prefetch_memory(struct array *a, bool on);

#endif
