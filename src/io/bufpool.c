// SPDX-License-Identifier: MIT
/* Aligned buffers in power-of-two classes, cached on free lists up to a cap. */
#include <stdint.h>
#include <stdlib.h>

#include "io/bufpool.h"

#define BUFPOOL_MIN ((size_t)4096)

/* Smallest class holding len bytes, or -1 when len is over 16 MiB. */
static int bufpool_class(size_t len)
{
	int c = 0;

	while (c < BUFPOOL_CLASSES && (BUFPOOL_MIN << c) < len)
		c++;
	return c < BUFPOOL_CLASSES ? c : -1;
}

void bufpool_init(struct bufpool *p, size_t max_cached_bytes)
{
	for (int c = 0; c < BUFPOOL_CLASSES; c++)
		p->free[c] = NULL;
	p->cached_bytes = 0;
	p->max_cached_bytes = max_cached_bytes;
}

void bufpool_fini(struct bufpool *p)
{
	for (int c = 0; c < BUFPOOL_CLASSES; c++) {
		while (p->free[c]) {
			void *buf = p->free[c];

			p->free[c] = *(void **)buf;
			free(buf);
		}
	}
	p->cached_bytes = 0;
}

void *bufpool_get(struct bufpool *p, size_t len)
{
	int c = bufpool_class(len);
	void *buf;

	if (c < 0)
		return NULL;
	buf = p->free[c];
	if (buf) {
		p->free[c] = *(void **)buf;
		p->cached_bytes -= BUFPOOL_MIN << c;
		return buf;
	}
	if (posix_memalign(&buf, BUFPOOL_MIN, BUFPOOL_MIN << c))
		return NULL;
	return buf;
}

void bufpool_put(struct bufpool *p, void *buf, size_t len)
{
	int c = bufpool_class(len);
	size_t size;

	if (!buf)
		return;
	if (c < 0) {                    /* not one of ours; cannot happen with a matching get */
		free(buf);
		return;
	}
	size = BUFPOOL_MIN << c;
	if (p->cached_bytes + size > p->max_cached_bytes) {
		free(buf);
		return;
	}
	*(void **)buf = p->free[c];
	p->free[c] = buf;
	p->cached_bytes += size;
}
