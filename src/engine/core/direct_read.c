// SPDX-License-Identifier: MIT
/*
 * A read sent straight to the one member that holds it (array.h,
 * array_direct_read_begin): the fast path of a nested RAID 50/60's member
 * I/O (md/stack.c). A 4 KiB read of the RAID 0 is a read of one inner
 * RAID 5/6 array; through the request path it costs a request (its free
 * list, counters, freeze and hold checks, cache and read-ahead looks) and a
 * RAID 5 piece (the stripe row's layout, its flags) around one member read,
 * about as much again as the RAID 0's own: on a healthy inner array the
 * level reads that member and nothing else, so the read goes there at once.
 *
 * It keeps the request path's contract with freezes and close: counted in
 * its reactor's in_flight before the array's state is looked at (as
 * req_start does), so a freeze (a reshape's start, a level change) or a
 * close that begins later waits for it. Anything the level would do more
 * than one member read for (a lost or rebuilding slot, a reshape, a
 * parity log, a write cache that may hold newer data) goes the request
 * path, as does a read whose member I/O fails (the level then repairs or
 * rebuilds it, and fails the member as md would). Read-ahead is passed by:
 * what it would answer is the member's data, read here (a nested array's
 * inner arrays have none of their own; the RAID 0 above has it).
 */
#include "engine/core/array.h"
#include "engine/core/freeze.h"
#include "engine/core/latency.h"

bool array_direct_read_begin(struct array *a, struct engine_reactor *er, uint64_t sector,
			     uint32_t nsect, struct member **m, uint64_t *msector)
{
	struct array_counters *c = &a->counters[er->r.index];
	unsigned slot;

	if (!a->ops->direct_map)
		return false;
	atomic_fetch_add(&c->in_flight, 1);
	if (atomic_load(&a->freeze_state) != FREEZE_NONE || a->reshape || a->plog ||
	    atomic_load_explicit(&a->wc, memory_order_acquire) ||
	    !a->ops->direct_map(a, sector, nsect, &slot, msector) ||
	    !(*m = atomic_load(&a->slot[slot].m))) {
		atomic_fetch_sub(&c->in_flight, 1);
		return false;
	}
	atomic_store_explicit(&c->started, atomic_load_explicit(&c->started, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	return true;
}

void array_direct_read_end(struct array *a, struct engine_reactor *er, uint64_t start_ns)
{
	struct array_counters *c = &a->counters[er->r.index];
	uint64_t end = reactor_now_ns(&er->r);

	latency_note(&c->latency, URAID_LATENCY_READ, end > start_ns ? end - start_ns : 0);
	atomic_fetch_sub(&c->in_flight, 1);
}
