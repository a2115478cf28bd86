/* SPDX-License-Identifier: MIT */
/*
 * RAID 1/10 (mirror_io.c) seen from background work (sync_mirror.c): the
 * exclusion between one background unit and foreground writes.
 *
 * The unit publishes the array sectors it covers (its window). A write,
 * discard or write-zeroes piece that overlaps the window is parked and
 * resumed on its own reactor when the window closes; the unit starts its
 * member I/O only once every write that may have missed the window (issued
 * before it was published) has finished. So a repair or resync never copies
 * data over a newer write, and a rebuild never copies data a write is
 * changing. The foreground cost is one per-reactor counter and two loads.
 *
 * One window per array (one job at a time); open, drained and close are
 * called from the job's reactor.
 */
#ifndef URAID_ENGINE_MIRROR_H
#define URAID_ENGINE_MIRROR_H

#include <stdbool.h>
#include <stdint.h>

struct array;

/* Publish the window [lo, hi) (array sectors, lo < hi). */
void mirror_window_open(struct array *a, uint64_t lo, uint64_t hi);
/* True once the writes that may overlap the window are over; false: ask again later. */
bool mirror_window_drained(struct array *a);
/* Close the window and resume the writes parked behind it. */
void mirror_window_close(struct array *a);
/*
 * Did a foreground write to spare m fail while m held a slot being rebuilt?
 * Its rebuilt part then misses that write: reads avoid it, and the rebuild
 * must fail it. (A member that failed so never comes back: a device added
 * again is a new member.)
 */
struct member;
bool mirror_rebuild_write_failed(struct array *a, const struct member *m);

#endif
