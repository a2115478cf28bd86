/* SPDX-License-Identifier: MIT */
/*
 * An array as a member of another array of the same engine (nested RAID
 * 50/60): the member kind of io/member.h whose I/O is a request of the
 * lower array, issued and completed on the same reactor. See stack.c.
 */
#ifndef URAID_ENGINE_MD_STACK_H
#define URAID_ENGINE_MD_STACK_H

#include <stddef.h>

#include <uraid/create.h>
#include "io/member.h"

struct array;

/*
 * Open m as a member whose device is `lower` (an assembled array of the
 * same engine, which must run its own threads), named `name` in messages,
 * and probe the superblocks on lower's data into p. 0 or -errno with err.
 */
int stack_member_open(struct array *upper, struct member *m, struct array *lower,
		      const char *name, struct uraid_probe *p, char *err, size_t errlen);
/* Free what stacking kept in `lower` (array_free, once nothing uses it). */
void stack_lower_free(struct array *lower);

#endif
