// SPDX-License-Identifier: MIT
/* Sweep planning, the X-bit rating and the steady-state rule (see sweep.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uraid/geom.h>
#include <uraid/level.h>

#include "common/errmsg.h"
#include "common/size_parse.h"
#include "bench/sweep.h"
#include "bench/svg.h"

const uint32_t bench_matrix_bs[BENCH_MATRIX_NBS] = {
	512, 4096, 8192, 16384, 32768, 65536, 131072, 1048576,
};
const unsigned bench_matrix_read_pct[BENCH_MATRIX_NMIX] = { 100, 95, 65, 50, 35, 5, 0 };

/* One value of a list at s: *end after it. */
typedef int (*list_item_fn)(const char *s, const char **end, uint64_t *v, uint64_t max);

/* "V1,V2,...": each value by item (at most BENCH_SWEEP_MAX), in v[], *n of them. */
static int walk_list(const char *s, list_item_fn item, uint64_t max, uint64_t *v, unsigned *n)
{
	const char *e;

	*n = 0;
	for (const char *p = s; *p;) {
		uint64_t x;
		if (item(p, &e, &x, max) || (*e && *e != ','))
			return -EINVAL;
		if (*n == BENCH_SWEEP_MAX)
			return -E2BIG;
		v[(*n)++] = x;
		p = *e ? e + 1 : e;
	}
	return *n ? 0 : -EINVAL;
}

/* "A..B": A, then A doubled (or plus one) while it is at most B. */
static int walk_range(uint64_t a, uint64_t b, bool doubling, uint64_t *v, unsigned *n)
{
	*n = 0;
	for (uint64_t x = a; x <= b; x = doubling ? x * 2 : x + 1) {
		if (*n == BENCH_SWEEP_MAX)
			return -E2BIG;
		v[(*n)++] = x;
	}
	return 0;
}

/* A count 1..max. */
static int parse_count(const char *s, const char **end, uint64_t *out, uint64_t max)
{
	char *e;
	unsigned long x = strtoul(s, &e, 10);

	if (e == s || !isdigit((unsigned char)*s) || !x || x > max)
		return -EINVAL;
	*out = x;
	*end = e;
	return 0;
}

/* "1,2,4" or "A..B" (A, 2A, 4A ... up to B; for drives every number A..B). */
static int parse_list(const char *s, bool doubling, unsigned max, unsigned *v, unsigned *n)
{
	const char *dots = strstr(s, "..");
	uint64_t tmp[BENCH_SWEEP_MAX], a, b;
	const char *e;
	int rc;

	if (dots) {
		if (parse_count(s, &e, &a, max) || e != dots || parse_count(dots + 2, &e, &b, max) ||
		    *e || b < a)
			return -EINVAL;
		rc = walk_range(a, b, doubling, tmp, n);
	} else {
		rc = walk_list(s, parse_count, max, tmp, n);
	}
	for (unsigned i = 0; !rc && i < *n; i++)
		v[i] = (unsigned)tmp[i];
	return rc;
}

/* A block size as --bs takes it (the same parser): a multiple of 512 up to max. */
static int parse_bs(const char *s, const char **end, uint64_t *out, uint64_t max)
{
	uint64_t v;

	if (size_parse_prefix(s, 1, &v, end) || !v || v % 512 || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* "512..1M" (A, a power of two, doubling up to B) or "4k,64k". */
static int parse_bs_list(const char *s, uint32_t *v, unsigned *n)
{
	uint64_t tmp[BENCH_SWEEP_MAX], a, b;
	const char *e;
	int rc;

	if (strstr(s, "..")) {
		if (parse_bs(s, &e, &a, BENCH_MAX_BS) || strncmp(e, "..", 2) ||
		    parse_bs(e + 2, &e, &b, BENCH_MAX_BS) || *e || b < a || (a & (a - 1)))
			return -EINVAL;
		rc = walk_range(a, b, true, tmp, n);
	} else {
		rc = walk_list(s, parse_bs, BENCH_MAX_BS, tmp, n);
	}
	for (unsigned i = 0; !rc && i < *n; i++)
		v[i] = (uint32_t)tmp[i];
	return rc;
}

/* A percentage 0..max (100) at s; *end after it. */
static int parse_pct(const char *s, const char **end, uint64_t *out, uint64_t max)
{
	char *e;
	unsigned long v = strtoul(s, &e, 10);

	if (e == s || !isdigit((unsigned char)*s) || v > max)
		return -EINVAL;
	*out = v;
	*end = e;
	return 0;
}

/* "100..0:10" (A to B in steps of S, up or down; S defaults to 10) or "100,70,0". */
static int parse_pct_list(const char *s, unsigned *v, unsigned *n)
{
	uint64_t tmp[BENCH_SWEEP_MAX], a, b, step = 10;
	const char *e;
	int rc = 0;

	*n = 0;
	if (strstr(s, "..")) {
		if (parse_pct(s, &e, &a, 100) || strncmp(e, "..", 2) || parse_pct(e + 2, &e, &b, 100))
			return -EINVAL;
		if (*e == ':' && (parse_pct(e + 1, &e, &step, 100) || !step))
			return -EINVAL;
		if (*e)
			return -EINVAL;
		/* both ends are cells even when the step does not land on B */
		for (int x = (int)a;; x += a <= b ? (int)step : -(int)step) {
			bool past = a <= b ? x >= (int)b : x <= (int)b;
			if (*n == BENCH_SWEEP_MAX)
				return -E2BIG;
			tmp[(*n)++] = past ? b : (unsigned)x;
			if (past)
				break;
		}
	} else {
		rc = walk_list(s, parse_pct, 100, tmp, n);
	}
	for (unsigned i = 0; !rc && i < *n; i++)
		v[i] = (unsigned)tmp[i];
	return rc;
}

int bench_axes_parse(const char *arg, struct bench_axes *ax, char *err, size_t errlen)
{
	if (!strcmp(arg, "matrix")) {
		ax->matrix = true;
		return 0;
	}
	if (!strncmp(arg, "bs=", 3)) {
		if (parse_bs_list(arg + 3, ax->bs, &ax->nbs))
			return uraid_errf(err, errlen, -EINVAL, "--sweep=%s: want block sizes, "
					  "multiples of 512 up to 16M, as 4k,64k or 512..1M (A a "
					  "power of two, doubled up to B; at most %d values)", arg, BENCH_SWEEP_MAX);
		return 0;
	}
	if (!strncmp(arg, "rwmixread=", 10)) {
		if (parse_pct_list(arg + 10, ax->rwmix, &ax->nrwmix))
			return uraid_errf(err, errlen, -EINVAL, "--sweep=%s: want read shares 0..100 "
					  "as 100,70,0 or 100..0:10 (from..to:step)", arg);
		return 0;
	}
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
	unsigned *v, *n, max;
	bool doubling = true;

	if (eq && klen == 2 && !strncmp(arg, "qd", 2)) {
		v = ax->qd; n = &ax->nqd; max = 4096;
	} else if (eq && klen == 7 && !strncmp(arg, "threads", 7)) {
		v = ax->threads; n = &ax->nthreads; max = BENCH_MAX_WORKERS;
	} else if (eq && klen == 6 && !strncmp(arg, "drives", 6)) {
		v = ax->drives; n = &ax->ndrives; max = BENCH_MAX_TARGETS;
		doubling = false;
	} else {
		return uraid_errf(err, errlen, -EINVAL, "--sweep=%s: want qd=LIST, threads=LIST, "
				  "matrix, drives=LIST, rwmixread=LIST or bs=LIST", arg);
	}
	int rc = parse_list(eq + 1, doubling, max, v, n);
	if (rc)
		return uraid_errf(err, errlen, -EINVAL, "--sweep=%s: want numbers 1..%u as "
				  "1,2,4 or 1..%u (at most %d values)", arg, max,
				  doubling ? 256 : 8, BENCH_SWEEP_MAX);
	return 0;
}

/* The fewest members the array cell's level takes: what uraid create accepts. */
static unsigned level_min_members(int level)
{
	const struct uraid_level_info *li = uraid_level_info(level);
	return li ? li->create_min_members : 1;
}

static char *label_of(const struct bench_axes *ax, char *buf, size_t len, unsigned t,
		      unsigned q)
{
	int n = 0;
	buf[0] = 0;
	if (ax->nthreads)
		n = snprintf(buf, len, "threads=%u", t);
	if (ax->nqd)
		snprintf(buf + n, len - (size_t)n, "%sqd=%u", n ? " " : "", q);
	return buf;
}

int bench_plan(const struct bench_axes *ax, int level, unsigned npaths,
	       struct bench_cell **cells, unsigned *ncells, char *err, size_t errlen)
{
	unsigned kinds = (ax->nqd || ax->nthreads) + ax->matrix + (ax->ndrives > 0) +
			 (ax->nbs || ax->nrwmix);
	if (kinds > 1)
		return uraid_errf(err, errlen, -EINVAL, "--sweep: qd/threads, matrix, drives and "
				  "bs/rwmixread do not combine");
	unsigned n = ax->matrix ? BENCH_MATRIX_NBS * BENCH_MATRIX_NMIX
		     : ax->ndrives ? 2 * ax->ndrives
		     : ax->nbs || ax->nrwmix ? (ax->nbs ? ax->nbs : 1) * (ax->nrwmix ? ax->nrwmix : 1)
		     : (ax->nthreads ? ax->nthreads : 1) * (ax->nqd ? ax->nqd : 1);
	struct bench_cell *c = calloc(n, sizeof(*c));
	if (!c)
		return uraid_errf(err, errlen, -ENOMEM, "out of memory");
	unsigned k = 0;
	if (ax->matrix) {
		for (unsigned b = 0; b < BENCH_MATRIX_NBS; b++)
			for (unsigned m = 0; m < BENCH_MATRIX_NMIX; m++, k++) {
				c[k].bs = bench_matrix_bs[b];
				c[k].read_pct = (int)bench_matrix_read_pct[m];
				c[k].matrix = true;
				char bs[32];

				/* the size as every chart, legend and table writes it: "4 KiB" */
				svg_format(bs, sizeof(bs), SVG_UNIT_BYTES, c[k].bs, 0);
				snprintf(c[k].label, sizeof(c[k].label), "bs=%s read=%u%%", bs,
					 (unsigned)c[k].read_pct);
			}
	} else if (ax->ndrives) {
		const char *lv = uraid_level_name(level);
		for (unsigned i = 0; i < ax->ndrives; i++) {
			unsigned d = ax->drives[i];
			if (d > npaths) {
				free(c);
				return uraid_errf(err, errlen, -EINVAL, "--sweep drives=%u: only %u "
						  "DEVICEs given", d, npaths);
			}
			for (unsigned j = 0; j < 2; j++, k++) {
				c[k].drives = d;
				c[k].jbod = j == 0;
				c[k].read_pct = -1;
				snprintf(c[k].label, sizeof(c[k].label), "%s x%u",
					 j == 0 ? "jbod" : lv ? lv : "array", d);
				if (j == 1 && d < level_min_members(level))
					snprintf(c[k].skip, sizeof(c[k].skip), "%s needs at least "
						 "%u members", lv ? lv : "the level",
						 level_min_members(level));
			}
		}
	} else if (ax->nbs || ax->nrwmix) {
		unsigned nb = ax->nbs ? ax->nbs : 1, nm = ax->nrwmix ? ax->nrwmix : 1;
		for (unsigned b = 0; b < nb; b++)
			for (unsigned m = 0; m < nm; m++, k++) {
				char sz[32] = "";
				c[k].bs = ax->nbs ? ax->bs[b] : 0;
				c[k].read_pct = ax->nrwmix ? (int)ax->rwmix[m] : -1;
				if (c[k].bs)
					svg_format(sz, sizeof(sz), SVG_UNIT_BYTES, c[k].bs, 0);
				snprintf(c[k].label, sizeof(c[k].label), "%s%s%s", c[k].bs ? "bs=" : "",
					 sz, c[k].bs && ax->nrwmix ? " " : "");
				if (ax->nrwmix)
					snprintf(c[k].label + strlen(c[k].label),
						 sizeof(c[k].label) - strlen(c[k].label), "read=%d%%",
						 c[k].read_pct);
			}
	} else {
		unsigned nt = ax->nthreads ? ax->nthreads : 1, nq = ax->nqd ? ax->nqd : 1;
		for (unsigned t = 0; t < nt; t++)
			for (unsigned q = 0; q < nq; q++, k++) {
				c[k].threads = ax->nthreads ? ax->threads[t] : 0;
				c[k].qd = ax->nqd ? ax->qd[q] : 0;
				c[k].read_pct = -1;
				label_of(ax, c[k].label, sizeof(c[k].label), c[k].threads, c[k].qd);
			}
	}
	*cells = c;
	*ncells = k;
	return 0;
}

void bench_cell_apply(const struct bench_cell *c, const struct bench_workload *wl0,
		      const struct bench_targets *tg0, struct bench_workload *wl,
		      struct bench_targets *tg)
{
	*wl = *wl0;
	*tg = *tg0;
	if (c->qd)
		wl->iodepth = c->qd;
	if (c->threads)
		wl->workers = c->threads;
	if (!c->matrix) {
		/* every line gets the cell's size or read share; the rest stays */
		for (unsigned i = 0; i < wl->nlines; i++) {
			if (c->bs) {
				wl->line[i].bytes = c->bs;
				wl->line[i].align = 0;
			}
			if (c->read_pct >= 0)
				wl->line[i].read_pct = (uint32_t)c->read_pct;
		}
		if (c->bs)
			wl->align = 0;
	} else if (c->bs) {
		/* one line: the cell's size and mix, the base workload's random share */
		struct bench_access l = wl0->line[0];
		l.bytes = c->bs;
		l.weight = 100;
		l.align = 0;
		l.read_pct = (uint32_t)c->read_pct;
		wl->nlines = 1;
		wl->line[0] = l;
		wl->align = 0;
	}
	if (c->drives) {
		tg->npaths = c->drives;
		if (c->jbod) {
			tg->kind = BENCH_RAW;
			tg->flags &= ~BENCH_CREATE;
			wl->workers = 0;        /* one worker per drive */
		} else {
			tg->kind = BENCH_ARRAY;
			tg->flags |= BENCH_CREATE;
		}
	}
}

double bench_xbit_rating(const unsigned *qd, const double *iops, unsigned n, bool *complete)
{
	double sum = 0;
	unsigned seen = 0;

	for (unsigned q = 1; q <= 32; q *= 2) {
		for (unsigned i = 0; i < n; i++) {
			if (qd[i] != q)
				continue;
			sum += iops[i] / q;
			seen++;
			break;
		}
	}
	*complete = seen == 6;
	return sum;
}

bool bench_steady_check(const double *y, unsigned n, struct bench_steady *ev)
{
	const unsigned w = BENCH_SS_WINDOW;

	memset(ev, 0, sizeof(*ev));
	if (n < w)
		return false;
	const double *v = y + n - w;
	double sx = 0, sy = 0, sxx = 0, sxy = 0, lo = v[0], hi = v[0];
	for (unsigned i = 0; i < w; i++) {
		sx += i;
		sy += v[i];
		sxx += (double)i * i;
		sxy += i * v[i];
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	ev->avg = sy / w;
	ev->range = hi - lo;
	ev->slope = (w * sxy - sx * sy) / (w * sxx - sx * sx);
	ev->excursion = (ev->slope < 0 ? -ev->slope : ev->slope) * (w - 1);
	ev->reached = ev->avg > 0 && ev->range <= ev->avg * BENCH_SS_RANGE_PCT / 100 &&
		      ev->excursion <= ev->avg * BENCH_SS_SLOPE_PCT / 100;
	return ev->reached;
}

double bench_eta_s(unsigned cell, unsigned ncells, double cell_s, double in_cell_s)
{
	/* the current cell counts whole, less what of it has run (an overrun cell: none left) */
	unsigned left = cell == 0 ? ncells : cell <= ncells ? ncells - cell + 1 : 0;
	double eta = left * cell_s - (in_cell_s < cell_s ? in_cell_s : cell_s);
	return eta > 0 ? eta : 0;
}
