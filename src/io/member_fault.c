// SPDX-License-Identifier: MIT
/* Fault injection on a member: replace the fault, judge one I/O against it. */
#include <errno.h>

#include "io/member_internal.h"

void member_set_fault(struct member *m, const struct uraid_fault *f)
{
	pthread_mutex_lock(&m->fault_lock);
	if (f && f->kind != URAID_FAULT_NONE) {
		m->fault = *f;
		atomic_store(&m->fault_rng, f->seed);
		atomic_store(&m->has_fault, true);
	} else {
		m->fault = (struct uraid_fault){ .kind = URAID_FAULT_NONE };
		atomic_store(&m->has_fault, false);
	}
	pthread_mutex_unlock(&m->fault_lock);
}

/* splitmix64 over an atomically advanced state: one draw per call, any thread. */
static uint64_t fault_draw(struct member *m)
{
	uint64_t z = atomic_fetch_add(&m->fault_rng, 0x9e3779b97f4a7c15ull) +
		     0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int member_fault_check(struct member *m, enum member_op kind, uint64_t sector, uint64_t nsect)
{
	struct uraid_fault f;
	int rc;

	if (!atomic_load_explicit(&m->has_fault, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&m->fault_lock);
	f = m->fault;
	pthread_mutex_unlock(&m->fault_lock);

	switch (f.kind) {
	case URAID_FAULT_VANISH:
		rc = -ENODEV;
		break;
	case URAID_FAULT_READ:
	case URAID_FAULT_WRITE:
		if (nsect == 0 || kind != (f.kind == URAID_FAULT_READ ? MEMBER_READ : MEMBER_WRITE))
			return 0;
		/* overlap of [sector, sector + nsect - 1] with [first, last] */
		if (sector > f.last_sector || sector + (nsect - 1) < f.first_sector)
			return 0;
		rc = -EIO;
		break;
	default:
		return 0;
	}
	if (f.rate_ppm != 0 && f.rate_ppm < 1000000 && fault_draw(m) % 1000000 >= f.rate_ppm)
		return 0;
	return rc;
}

bool member_fault_torn(struct member *m, size_t len)
{
	if (!atomic_load_explicit(&m->has_fault, memory_order_acquire) ||
	    len < 2 * MEMBER_FAULT_PAGE)
		return false;
	pthread_mutex_lock(&m->fault_lock);
	bool torn = m->fault.kind == URAID_FAULT_TORN_KILL;
	pthread_mutex_unlock(&m->fault_lock);
	return torn;
}
