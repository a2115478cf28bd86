// SPDX-License-Identifier: MIT
/*
 * What this host's CPU does for parity: XOR (RAID 4/5) and P+Q (RAID 6)
 * over d data buffers, timed in the calling thread's CPU time with the
 * library's ISA-L functions at plan time (docs/planner.md, "Host"). CPU
 * time, not wall time: on a loaded machine the wall clock counts other
 * processes' turns, and the planner converts CPU time to IOPS with one
 * share factor for every term alike.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uraid/parity.h>

#include "plan/model.h"

#define PAR_LEN (64u << 10)
#define BURST_CPU_NS 2000000ull   /* one burst: 2 ms of this thread's CPU */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int gen(unsigned nparity, unsigned d, void **buf)
{
	return nparity == 1 ? uraid_parity_gen_p(d, PAR_LEN, buf, buf[d])
			    : uraid_parity_gen_pq(d, PAR_LEN, buf, buf[d], buf[d + 1]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double plan_measure_parity_mib_s(unsigned d, unsigned nparity)
{
	if (d < 1 || (nparity != 1 && nparity != 2) || d > URAID_PARITY_MAX_SLOTS - 2)
		return 0;
	void **buf = calloc(d + 2, sizeof(void *));
	double rate = 0;
	if (!buf)
		return 0;
	unsigned got = 0;
	for (; got < d + 2; got++) {
		if (posix_memalign(&buf[got], 64, PAR_LEN))
			goto out;
		memset(buf[got], (int)(got * 37 + 1), PAR_LEN);
	}
	/* warm the caches once, then the median of three bursts */
	if (gen(nparity, d, buf))
		goto out;
	double r3[3];
	for (int b = 0; b < 3; b++) {
		uint64_t t0 = thread_cpu_ns(), t1 = t0, rounds = 0;
		while (t1 - t0 < BURST_CPU_NS) {
			if (gen(nparity, d, buf))
				goto out;
			rounds++;
			t1 = thread_cpu_ns();
		}
		r3[b] = (double)rounds * d * PAR_LEN / ((double)(t1 - t0) * 1e-9) / 1048576.0;
	}
	qsort(r3, 3, sizeof(r3[0]), cmp_double);
	rate = r3[1];
out:
	for (unsigned i = 0; i < got; i++)
		free(buf[i]);
	free(buf);
	return rate;
}

/* The data counts measured: others are interpolated between neighbours. */
static const unsigned measured_d[] = { 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64 };
#define NMEASURED (sizeof(measured_d) / sizeof(measured_d[0]))

int plan_host_measure_parity(struct plan_host *h, unsigned max_d)
{
	for (unsigned p = 1; p <= 2; p++)
		for (unsigned i = 0; i < NMEASURED; i++) {
			unsigned d = measured_d[i];
			if (d > max_d && (i == 0 || measured_d[i - 1] >= max_d))
				break;
			double r = plan_measure_parity_mib_s(d, p);
			if (r <= 0)
				return -1;
			h->parity_rate[p - 1][d] = r;
		}
	return 0;
}

double plan_host_parity_mib_s(const struct plan_host *h, unsigned d, unsigned nparity)
{
	if (h->parity_mib_s > 0)
		return h->parity_mib_s;
	if (nparity < 1 || nparity > 2 || d < 1)
		return 0;
	const double *t = h->parity_rate[nparity - 1];
	if (d < PLAN_HOST_MAX_D && t[d] > 0)
		return t[d];
	/* between the nearest measured counts below and above, linear in d */
	unsigned lo = 0, hi = 0;
	for (unsigned i = 0; i < NMEASURED; i++) {
		unsigned m = measured_d[i];
		if (m < d && t[m] > 0)
			lo = m;
		if (m > d && t[m] > 0 && !hi)
			hi = m;
	}
	if (lo && hi)
		return t[lo] + (t[hi] - t[lo]) * (double)(d - lo) / (double)(hi - lo);
	return lo ? t[lo] : hi ? t[hi] : 0;
}

/* t[n] measured for some n in 1..PLAN_HOST_MAX_N-1 (0: not): the value at n,
   linear between the nearest measured counts, flat beyond them; 0 when none */
static double by_members(const double *t, unsigned n)
{
	if (n >= 1 && n < PLAN_HOST_MAX_N && t[n] > 0)
		return t[n];
	unsigned lo = 0, hi = 0;
	for (unsigned k = 1; k < PLAN_HOST_MAX_N; k++) {
		if (!(t[k] > 0))
			continue;
		if (k < n)
			lo = k;
		else if (!hi)
			hi = k;
	}
	if (lo && hi)
		return t[lo] + (t[hi] - t[lo]) * (double)(n - lo) / (double)(hi - lo);
	return lo ? t[lo] : hi ? t[hi] : 0;
}

double plan_host_member_us(const struct plan_host *h, bool rd, double qd, double bytes)
{
	int d = rd ? 0 : 1;
	unsigned n = h->nmember_pts[d] < PLAN_HOST_MAX_PTS ? h->nmember_pts[d] : PLAN_HOST_MAX_PTS;
	const struct plan_host_pt *p = h->member_pt[d];
	double v = rd ? h->cpu_us_per_member_read : h->cpu_us_per_member_write;
	if (n && qd <= p[0].qd)
		v = p[0].us;
	else if (n && qd >= p[n - 1].qd)
		v = p[n - 1].us;
	else
		for (unsigned i = 1; i < n; i++)
			if (qd <= p[i].qd) {
				double t = (log2(qd) - log2(p[i - 1].qd)) /
					   (log2(p[i].qd) - log2(p[i - 1].qd));
				v = p[i - 1].us + t * (p[i].us - p[i - 1].us);
				break;
			}
	v += (bytes - 4096) / 1024 * h->cpu_us_per_member_kib[d];
	return v > 0 ? v : 0;
}

double plan_host_client_us(const struct plan_host *h, bool rd)
{
	return !rd && h->cpu_us_per_io_write > 0 ? h->cpu_us_per_io_write : h->cpu_us_per_io;
}

double plan_host_share(const struct plan_host *h, unsigned n)
{
	double v = by_members(h->cpu_share_at, n);
	if (v > 0)
		return v;
	return h->cpu_share > 0 ? h->cpu_share : 1;
}

const struct plan_host_own *plan_host_own_of(const struct plan_host *h, int level,
					     uint32_t layout)
{
	for (unsigned i = 0; i < h->nown && i < PLAN_HOST_MAX_OWN; i++)
		if (h->own[i].level == level && h->own[i].layout == layout)
			return &h->own[i];
	return NULL;
}
