// SPDX-License-Identifier: MIT
/* bufpool: classes, alignment, reuse through the free lists, cache cap. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "io/bufpool.h"
#include "../support/check.h"

int main(void)
{
	struct bufpool p;
	void *a, *b, *c, *bufs[8];

	bufpool_init(&p, 64 * 1024);

	/* every size up to 16 MiB: aligned, writable over the whole class */
	static const size_t lens[] = { 1, 512, 4096, 4097, 8192, 65536, 65537,
				       1 << 20, (1 << 20) + 1, 16 << 20 };
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		a = bufpool_get(&p, lens[i]);
		CHECK(a != NULL, "len %zu", lens[i]);
		if (!a)
			continue;
		CHECK((uintptr_t)a % 4096 == 0, "len %zu not aligned: %p", lens[i], a);
		memset(a, 0x5a, lens[i]);
		bufpool_put(&p, a, lens[i]);
	}
	CHECK(bufpool_get(&p, (16 << 20) + 1) == NULL, "over 16 MiB must fail");

	/* LIFO reuse within a class, classes kept apart */
	a = bufpool_get(&p, 4096);
	b = bufpool_get(&p, 4096);
	c = bufpool_get(&p, 8192);
	CHECK(a && b && c && a != b, "distinct buffers");
	bufpool_put(&p, a, 4096);
	bufpool_put(&p, b, 100);                    /* same class as 4096 */
	bufpool_put(&p, c, 8192);
	CHECK(p.cached_bytes == 16384, "cached %zu", p.cached_bytes);
	CHECK(bufpool_get(&p, 4000) == b, "last put comes back first");
	CHECK(bufpool_get(&p, 4096) == a, "then the one before");
	CHECK(bufpool_get(&p, 5000) == c, "8 KiB class reused");
	bufpool_put(&p, a, 4096);
	bufpool_put(&p, b, 4096);
	bufpool_put(&p, c, 8192);

	/* the cap: at most 64 KiB cached, the rest freed */
	bufpool_fini(&p);
	CHECK(p.cached_bytes == 0, "fini empties, %zu", p.cached_bytes);
	bufpool_init(&p, 64 * 1024);
	for (int i = 0; i < 8; i++)
		bufs[i] = bufpool_get(&p, 16384);
	for (int i = 0; i < 8; i++)
		bufpool_put(&p, bufs[i], 16384);
	CHECK(p.cached_bytes == 64 * 1024, "cap: cached %zu", p.cached_bytes);
	for (int i = 0; i < 4; i++)
		CHECK(bufpool_get(&p, 16384) == bufs[3 - i], "cached buffer %d", i);
	CHECK(p.cached_bytes == 0, "all taken, %zu", p.cached_bytes);
	for (int i = 0; i < 4; i++)
		bufpool_put(&p, bufs[i], 16384);
	/* a cap of 0 caches nothing */
	bufpool_fini(&p);
	bufpool_init(&p, 0);
	a = bufpool_get(&p, 4096);
	bufpool_put(&p, a, 4096);
	CHECK(p.cached_bytes == 0 && p.free[0] == NULL, "cap 0 caches nothing");
	bufpool_put(&p, NULL, 4096);
	bufpool_fini(&p);

	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	printf("bufpool: ok\n");
	return 0;
}
