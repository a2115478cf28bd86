// SPDX-License-Identifier: MIT
/*
 * Latency logs and their pooling (src/bench/latlog.h): samples of several
 * runs written as uraid bench writes them (bench_lat_log_write) and as fio
 * does (its extra fields, no spaces), pooled with bench_lat_pool_file, give
 * the count, min, max and mean of the union exactly and its nearest-rank
 * percentiles within half a histogram bucket (1/256) of the sorted samples'
 * (computed here by sorting); trims are left out; a full log counts what it
 * drops; malformed lines are refused with the file and line.
 *
 *   test_lat_pool [SEED]
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/latlog.h"
#include "../support/check.h"

#define NRUNS 5

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
	return ((rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile of n sorted values: the ceil(p n / 100)-th (p to 3 decimals). */
static uint64_t exact(const uint64_t *sorted, uint64_t n, double p)
{
	uint64_t p1000 = (uint64_t)(p * 1000 + 0.5);
	uint64_t rank = (p1000 * n + 100000 - 1) / 100000;
	return sorted[(rank ? rank : 1) - 1];
}

/* A run's latency: ~1 ms lognormal with its own scale, and rare stalls of 5-50 ms. */
static uint64_t sample(uint64_t *s, double scale)
{
	double z = sqrt(-2 * log(unif(s))) * cos(6.283185307179586 * unif(s));
	double v = scale * 1e6 * exp(0.25 * z);
	if (unif(s) < 0.004)
		v += 5e6 + 45e6 * unif(s);
	return (uint64_t)v;
}

static void check_pool(const char *name, struct hist *h, uint64_t *v, uint64_t n)
{
	static const double pcts[] = { 0.001, 1, 50, 90, 99, 99.9, 99.99, 100 };
	long double sum = 0;

	CHECK(h->count == n, "%s: count %" PRIu64 " != %" PRIu64, name, h->count, n);
	if (!n || h->count != n)
		return;
	for (uint64_t i = 0; i < n; i++)
		sum += v[i];
	qsort(v, n, sizeof(*v), cmp_u64);
	CHECK(h->min == v[0] && h->max == v[n - 1], "%s: min/max %" PRIu64 "/%" PRIu64
	      " != %" PRIu64 "/%" PRIu64, name, h->min, h->max, v[0], v[n - 1]);
	CHECK(hist_mean(h) == (uint64_t)(sum / n + 0.5L), "%s: mean %" PRIu64, name, hist_mean(h));
	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		uint64_t want = exact(v, n, pcts[i]), got = hist_percentile(h, pcts[i]);
		double err = fabs((double)got - (double)want) / (double)(want ? want : 1);
		CHECK(err <= 1.0 / 256 + 1e-12, "%s: p%g = %" PRIu64 ", sorted %" PRIu64 " (%.3f %%)",
		      name, pcts[i], got, want, err * 100);
	}
	printf("ok %-6s n=%-7" PRIu64 " p50=%" PRIu64 " p99=%" PRIu64 " (sorted %" PRIu64
	       ") max=%" PRIu64 "\n", name, n, hist_percentile(h, 50), hist_percentile(h, 99),
	       exact(v, n, 99), v[n - 1]);
}

/* NRUNS runs, odd ones written by bench_lat_log_write, even ones as fio writes. */
static void test_pool(const char *dir, uint64_t seed)
{
	uint64_t s = seed, nv[2] = { 0, 0 };
	uint64_t *v[2] = { malloc(200000 * 8), malloc(200000 * 8) };
	static struct hist h[2];
	char path[4400], err[512];

	if (!v[0] || !v[1]) {
		CHECK(0, "out of memory");
		exit(1);
	}
	hist_init(&h[0]);
	hist_init(&h[1]);
	for (unsigned r = 0; r < NRUNS; r++) {
		uint64_t n = 2000 + rng_next(&s) % 30000;
		double scale = 0.8 + 0.5 * unif(&s), rshare = r == 2 ? 1.0 : 0.7;
		if (r % 2 == 0) {
			struct bench_lat_log l;
			char prefix[4200];
			CHECK(!bench_lat_log_init(&l, n), "init");
			for (uint64_t i = 0; i < n; i++) {
				unsigned w = unif(&s) >= rshare;
				uint64_t ns = sample(&s, scale);
				bench_lat_log_add(&l, ns, i / 800, 4096, w);
				v[w][nv[w]++] = ns;
			}
			snprintf(prefix, sizeof(prefix), "%s/run%u", dir, r);
			CHECK(!bench_lat_log_write(&l, 1, prefix, err, sizeof(err)), "write: %s", err);
			bench_lat_log_fini(&l);
			snprintf(path, sizeof(path), "%s_lat.1.log", prefix);
		} else {
			snprintf(path, sizeof(path), "%s/fio%u_lat.1.log", dir, r);
			FILE *f = fopen(path, "w");
			CHECK(f, "%s: %s", path, strerror(errno));
			if (!f)
				exit(1);
			for (uint64_t i = 0; i < n; i++) {
				unsigned d = unif(&s) < 0.02 ? 2 : unif(&s) >= rshare;
				uint64_t ns = sample(&s, scale);
				if (i % 3)
					fprintf(f, "%" PRIu64 ", %" PRIu64 ", %u, 4096, 0\n", i / 800, ns, d);
				else    /* fio with --log_offset: more fields; and no spaces */
					fprintf(f, "%" PRIu64 ",%" PRIu64 ",%u,4096,%" PRIu64 ",0\r\n",
						i / 800, ns, d, i * 4096);
				if (d < 2)
					v[d][nv[d]++] = ns;
			}
			fclose(f);
		}
		CHECK(!bench_lat_pool_file(path, h, err, sizeof(err)), "pool %s: %s", path, err);
	}
	check_pool("read", &h[0], v[0], nv[0]);
	check_pool("write", &h[1], v[1], nv[1]);
	free(v[0]);
	free(v[1]);
}

static void test_dropped(void)
{
	struct bench_lat_log l;

	CHECK(!bench_lat_log_init(&l, 3), "init");
	for (int i = 0; i < 5; i++)
		bench_lat_log_add(&l, 1000 + i, 0, 512, i & 1);
	CHECK(l.n == 3 && l.dropped == 2, "kept %" PRIu64 ", dropped %" PRIu64, l.n, l.dropped);
	CHECK(l.s[2].ns == 1002 && (l.s[1].bytes_dir >> 31) == 1 &&
	      (l.s[1].bytes_dir & 0x7fffffffu) == 512, "sample fields");
	bench_lat_log_fini(&l);
	CHECK(!bench_lat_log_init(&l, 0) && !l.cap, "no log");
}

static void test_bad_lines(const char *dir)
{
	static const char *bad[] = {
		"", "\n", "1, 2, 3\n", "a, 1, 0, 4096\n", "1, -2, 0, 4096\n",
		"1, 99999999999999999999999, 0, 4096\n", "1, 2, 3, 4096\n", "1, 2, 0, 4096x\n",
		"1 2 0 4096\n",
	};
	uint64_t ns;
	unsigned d;
	char path[4200], err[512];
	static struct hist h[2];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(bench_lat_log_parse_line(bad[i], &ns, &d) == -EINVAL, "accepted '%s'", bad[i]);
	CHECK(!bench_lat_log_parse_line("7, 1234, 1, 4096\n", &ns, &d) && ns == 1234 && d == 1,
	      "a good line");
	snprintf(path, sizeof(path), "%s/bad_lat.1.log", dir);
	FILE *f = fopen(path, "w");
	if (!f)
		exit(1);
	fputs("0, 100, 0, 4096, 0\n0, 1x0, 0, 4096, 0\n", f);
	fclose(f);
	hist_init(&h[0]);
	hist_init(&h[1]);
	CHECK(bench_lat_pool_file(path, h, err, sizeof(err)) == -EINVAL && strstr(err, ":2:"),
	      "bad line 2: '%s'", err);
	printf("bad line: %s\n", err);
	snprintf(path, sizeof(path), "%s/none.log", dir);
	CHECK(bench_lat_pool_file(path, h, err, sizeof(err)) == -ENOENT, "missing file: %s", err);
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 21;
	char dir[] = "/tmp/test_lat_pool.XXXXXX";

	printf("test_lat_pool: seed %" PRIu64 "\n", seed);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_pool(dir, seed);
	test_dropped();
	test_bad_lines(dir);
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	if (failures)
		fprintf(stderr, "test_lat_pool: %d failure(s) (seed %" PRIu64 ")\n", failures, seed);
	return failures ? 1 : 0;
}
