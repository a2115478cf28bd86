/* SPDX-License-Identifier: MIT */
/*
 * The stripe cache's size at run time, and its state (include/uraid/engine.h):
 * checked here, kept in the array, and handed to the level's hooks (RAID
 * 4/5/6: level/raid5_heads.c); levels without stripes keep the value and
 * ignore it.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "engine/core/array.h"

static inline struct array *A(struct uraid_array *ua) { return (struct array *)ua; }

bool array_stripe_cache_valid(unsigned size)
{
	return size >= URAID_STRIPE_CACHE_MIN && size <= URAID_STRIPE_CACHE_MAX;
}

uint64_t uraid_stripe_cache_memory_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	if (pages <= 0 || page <= 0)
		return UINT64_MAX;      /* unknown: only the count's range applies */
	return (uint64_t)pages * (uint64_t)page / 2;
}

bool array_stripe_cache_fits(unsigned size, unsigned members)
{
	return (uint64_t)size * 4096u * members <= uraid_stripe_cache_memory_limit();
}

int uraid_array_set_stripe_cache(struct uraid_array *ua, unsigned size)
{
	struct array *a = A(ua);
	int rc = 0;

	if (!array_stripe_cache_valid(size))
		return -EINVAL;
	if (a->ops && a->ops->stripe_cache_set && !array_stripe_cache_fits(size, a->geom.raid_disks))
		return -E2BIG;
	/* one resize at a time (the level's pool counts on it) */
	pthread_mutex_lock(&a->stripe_cache_lock);
	if (a->ops && a->ops->stripe_cache_set)
		rc = a->ops->stripe_cache_set(a, size);
	if (rc == 0)
		atomic_store(&a->stripe_cache, size);
	pthread_mutex_unlock(&a->stripe_cache_lock);
	if (rc)
		return rc;
	ulog(array_log(a), URAID_LOG_INFO, "stripe cache: %u stripe heads", size);
	return 0;
}

void array_stripe_cache_status(struct array *a, struct uraid_stripe_cache_status *st)
{
	unsigned size = atomic_load(&a->stripe_cache);

	memset(st, 0, sizeof(*st));
	if (a->ops && a->ops->stripe_cache_get) {
		a->ops->stripe_cache_get(a, st);
		return;
	}
	st->size = size ? size : URAID_STRIPE_CACHE_DEFAULT;
}

int uraid_array_stripe_cache(struct uraid_array *ua, struct uraid_stripe_cache_status *st)
{
	array_stripe_cache_status(A(ua), st);
	return 0;
}
