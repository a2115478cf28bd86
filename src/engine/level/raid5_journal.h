/* SPDX-License-Identifier: MIT */
/* md's write journal at run time, write-through (raid5_journal.c). */
#ifndef URAID_ENGINE_RAID5_JOURNAL_H
#define URAID_ENGINE_RAID5_JOURNAL_H

#include <stdint.h>

struct array;
struct parity_log;

/*
 * The journal's hooks for array a whose member jidx is the journal, with a
 * ring of `ring` sectors, the next meta block at head with seq, and
 * journal_tail on disk tail (journal_replay's result). 0 or -ENOMEM.
 */
int raid5_journal_log_create(struct array *a, unsigned jidx, uint64_t ring, uint64_t head,
			     uint64_t seq, uint64_t tail, struct parity_log **out);

#endif
