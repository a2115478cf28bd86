// SPDX-License-Identifier: MIT
#ifndef URAID_ENGINE_MD_GROW_H
#define URAID_ENGINE_MD_GROW_H

struct array;

/* The array closes: steps of a grow still waiting (a->grow_pending) are
 * logged as the uraid grow commands that finish them, then forgotten. */
void grow_pending_drop(struct array *a);

#endif
