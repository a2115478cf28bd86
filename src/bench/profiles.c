// SPDX-License-Identifier: MIT
/*
 * Built-in workloads, exactly as reference/workloads.md section 1 defines
 * them (server profiles of the classic RAID reviews, and the four corners).
 * The server profiles are all random; the streaming ones sequential.
 * Every line is aligned on its own transfer size.
 */
#include <string.h>

#include "bench/bench.h"

#define K 1024u
#define L(sz, w, rd, rnd) { .bytes = (sz), .weight = (w), .read_pct = (rd), .random_pct = (rnd) }

static const struct bench_profile profiles[] = {
	{ "web-server", "100/0 read, random, 512 B..512 KiB mix", 10, {
		L(512, 22, 100, 100), L(1 * K, 15, 100, 100), L(2 * K, 8, 100, 100),
		L(4 * K, 23, 100, 100), L(8 * K, 15, 100, 100), L(16 * K, 2, 100, 100),
		L(32 * K, 6, 100, 100), L(64 * K, 7, 100, 100), L(128 * K, 1, 100, 100),
		L(512 * K, 1, 100, 100) } },
	{ "database", "67/33 read/write, random, 8 KiB", 1, { L(8 * K, 100, 67, 100) } },
	{ "exchange", "62/38 read/write, random, 32 KiB (mail server)", 1,
	  { L(32 * K, 100, 62, 100) } },
	{ "file-server", "80/20 read/write, random, 512 B..64 KiB mix", 8, {
		L(512, 10, 80, 100), L(1 * K, 5, 80, 100), L(2 * K, 5, 80, 100),
		L(4 * K, 60, 80, 100), L(8 * K, 2, 80, 100), L(16 * K, 4, 80, 100),
		L(32 * K, 4, 80, 100), L(64 * K, 10, 80, 100) } },
	{ "workstation", "80/20 read/write, 80 % random, 8 KiB", 1, { L(8 * K, 100, 80, 80) } },
	{ "streaming-read", "100/0 read, sequential, 64/128/256 KiB", 3, {
		L(64 * K, 34, 100, 0), L(128 * K, 33, 100, 0), L(256 * K, 33, 100, 0) } },
	{ "streaming-write", "0/100 write, sequential, 64/128/256 KiB", 3, {
		L(64 * K, 34, 0, 0), L(128 * K, 33, 0, 0), L(256 * K, 33, 0, 0) } },
	{ "4k-random-read", "4 KiB random read", 1, { L(4 * K, 100, 100, 100) } },
	{ "4k-random-write", "4 KiB random write", 1, { L(4 * K, 100, 0, 100) } },
	{ "128k-seq-read", "128 KiB sequential read", 1, { L(128 * K, 100, 100, 0) } },
	{ "128k-seq-write", "128 KiB sequential write", 1, { L(128 * K, 100, 0, 0) } },
};

const struct bench_profile *bench_profile_at(unsigned i)
{
	return i < sizeof(profiles) / sizeof(profiles[0]) ? &profiles[i] : NULL;
}

const struct bench_profile *bench_profile_find(const char *name)
{
	for (unsigned i = 0; bench_profile_at(i); i++)
		if (!strcmp(profiles[i].name, name))
			return &profiles[i];
	return NULL;
}
