// SPDX-License-Identifier: MIT
/*
 * fio iolog parsing: version 2 (waits add up, below 100 us ignored) and
 * version 3 (timestamps in microseconds), files in the order they were
 * added, sync and trim, byte counts; and one clear error with the line
 * number for each kind of bad input. A random v3 trace round-trips.
 *
 *   test_bench_trace [SEED]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/trace.h"
#include "../support/check.h"

static int parse(const char *text, struct bench_trace *t, char *err)
{
	return bench_trace_parse("t", text, strlen(text), t, err, 200);
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 20240610, s = seed;
	struct bench_trace t;
	char err[200];

	printf("seed %" PRIu64 "\n", seed);
	const char *v2 = "fio version 2 iolog\n/dev/b add\n/dev/a add\n/dev/b open\n/dev/a open\n"
			 "/dev/a read 0 4096\n/dev/b write 8192 512\n/dev/a wait 50 0\n"
			 "/dev/a wait 2000 0\n/dev/b read 4096 65536\n/dev/a sync 0 0\n"
			 "/dev/a trim 0 4096\n/dev/a datasync 0 0\n/dev/a close\n/dev/b close\n";
	CHECK(!parse(v2, &t, err), "v2: %s", err);
	CHECK(t.version == 2 && t.nfiles == 2 && !strcmp(t.file[0], "/dev/b") && t.nops == 5,
	      "v2: version %u, %u files, %zu ops", t.version, t.nfiles, t.nops);
	if (t.nops == 5) {
		CHECK(t.ops[0].file == 1 && t.ops[0].op == BENCH_OP_READ && t.ops[0].t_ns == 0,
		      "v2 op 0");
		CHECK(t.ops[1].file == 0 && t.ops[1].op == BENCH_OP_WRITE && t.ops[1].len == 512 &&
		      t.ops[1].offset == 8192 && t.ops[1].lineno == 7, "v2 op 1");
		CHECK(t.ops[2].t_ns == 2000000, "v2: waits of 50 (ignored) and 2000 us: %" PRIu64,
		      t.ops[2].t_ns);
		CHECK(t.ops[3].op == BENCH_OP_SYNC && t.ops[4].op == BENCH_OP_SYNC, "v2 syncs");
	}
	CHECK(t.skipped == 1 && t.bytes[0] == 4096 + 65536 && t.bytes[1] == 512 &&
	      t.max_len == 65536, "v2 counts");
	bench_trace_free(&t);

	/* a random v3 trace */
	char *buf = malloc(1 << 20);
	size_t n = (size_t)sprintf(buf, "fio version 3 iolog\n0 /f add\n3 /f open\n");
	uint64_t off[1000], ts[1000];
	uint32_t len[1000];
	for (int i = 0; i < 1000; i++) {
		ts[i] = (i ? ts[i - 1] : 5) + rng_next(&s) % 1000;
		off[i] = rng_next(&s) % (1ull << 40) / 512 * 512;
		len[i] = (uint32_t)(1 + rng_next(&s) % 2048) * 512;
		n += (size_t)sprintf(buf + n, "%" PRIu64 " /f %s %" PRIu64 " %u\n", ts[i],
				     i % 2 ? "read" : "write", off[i], len[i]);
	}
	n += (size_t)sprintf(buf + n, "%" PRIu64 " /f close\n", ts[999] + 1);
	CHECK(!bench_trace_parse("r", buf, n, &t, err, sizeof(err)) && t.nops == 1000,
	      "v3 random (seed %" PRIu64 "): %s", seed, err);
	for (size_t i = 0; i < t.nops; i++)
		CHECK(t.ops[i].t_ns == ts[i] * 1000 && t.ops[i].offset == off[i] &&
		      t.ops[i].len == len[i] && t.ops[i].op == (i % 2 ? BENCH_OP_READ : BENCH_OP_WRITE),
		      "v3 op %zu (seed %" PRIu64 ")", i, seed);
	bench_trace_free(&t);
	free(buf);

	static const struct { const char *text, *want; } bad[] = {
		{ "fio version 1 iolog\n", "not a fio iolog" },
		{ "", "empty" },
		{ "fio version 2 iolog\n/a read 0 4096\n", "t:2: read before 'add'" },
		{ "fio version 2 iolog\n/a add\n/a read 0\n", "t:3: want FILE ACTION" },
		{ "fio version 2 iolog\n/a add\n/a read x 4096\n", "t:3: bad offset" },
		{ "fio version 2 iolog\n/a add\n/a read 0 0\n", "t:3: length 0" },
		{ "fio version 2 iolog\n/a add\n/a fly 0 4096\n", "t:3: unknown action 'fly'" },
		{ "fio version 2 iolog\n/a add\n/a rename\n", "t:3: unknown file action" },
		{ "fio version 3 iolog\n0 /a add\n5 /a wait 100 0\n", "t:3: 'wait' is not allowed" },
		{ "fio version 3 iolog\n0 /a add\n/a read 0 4096\n", "t:3: want TIMESTAMP" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		int rc = parse(bad[i].text, &t, err);
		CHECK(rc == -22 && strstr(err, bad[i].want), "bad trace %zu: rc %d, '%s' (want '%s')",
		      i, rc, err, bad[i].want);
	}
	if (failures)
		fprintf(stderr, "%d failures (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
