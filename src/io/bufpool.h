/* SPDX-License-Identifier: MIT */
/*
 * Per-reactor pool of 4096-byte aligned buffers in power-of-two size classes
 * (4 KiB .. 16 MiB). Buffers are allocated on first need and then reused, so
 * the steady state does no malloc; a pool belongs to one reactor thread and
 * takes no lock.
 */
#ifndef URAID_IO_BUFPOOL_H
#define URAID_IO_BUFPOOL_H

#include <stddef.h>

#define BUFPOOL_CLASSES 13          /* 4 KiB << 0 .. 4 KiB << 12 (16 MiB) */

struct bufpool {
	void *free[BUFPOOL_CLASSES];    /* singly linked through the first word */
	size_t cached_bytes, max_cached_bytes;
};

void bufpool_init(struct bufpool *p, size_t max_cached_bytes);
void bufpool_fini(struct bufpool *p);
/* A buffer of at least len bytes (len <= 16 MiB), 4096-aligned; NULL if out of memory. */
void *bufpool_get(struct bufpool *p, size_t len);
/* Return a buffer obtained with the same len. */
void bufpool_put(struct bufpool *p, void *buf, size_t len);

#endif
