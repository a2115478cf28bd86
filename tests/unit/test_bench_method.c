// SPDX-License-Identifier: MIT
/*
 * The benchmark method (bench/method.h) as a library client uses it, on
 * files in a temporary folder (tmpfs when /dev/shm exists), cells of 50 ms:
 * a queue-depth sweep measures every cell in order and rates it; a drives
 * sweep skips the RAID 5 of one drive and says why; steady-state rounds stop
 * at their maximum; a single run is one cell without a struct bench_cell; an
 * impossible plan is -EINVAL and writing over a file that exists without
 * BENCH_FORCE_WRITE is -EPERM before any cell runs. Progress arrives as
 * BEGIN, a CELL per cell run, TICKs, END. A comparison of RAID 5 and 6 on 3
 * and 4 members runs three arrays and skips RAID 6 on 3 with the reason;
 * with preconditioning each configuration is first written twice over
 * (exactly: 2 x its range) and run in rounds, the phases announced before
 * its cell. A report of 70 configurations says its charts show 64.
 * Preconditioning two raw files fills both ranges twice (and says
 * so: range and target count); preconditioning a sweep fills the array once
 * and every cell runs on that array (its set UUID unchanged).
 *
 *   test_bench_method
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uraid/geom.h>

#include "bench/method.h"
#include "bench/report_run.h"
#include "../support/check.h"

#define CELL_S 0.05

struct events {
	unsigned begin, cell, end, order_bad, phase, fills;
	unsigned last_cell, ncells;
	bool single;
	char labels[8][64];
	/* set: at each cell, the md set UUID of this member (a 1.2 superblock) */
	const char *member;
	unsigned char uuid[8][16];
};

/* The set UUID of the 1.2 superblock at 4 KiB of path (zeros when unreadable). */
static void read_set_uuid(const char *path, unsigned char *uuid)
{
	FILE *f = fopen(path, "rb");

	memset(uuid, 0, 16);
	if (f && !fseek(f, 4096 + 16, SEEK_SET) && fread(uuid, 1, 16, f) != 16)
		memset(uuid, 0, 16);
	if (f)
		fclose(f);
}

static void on_progress(void *arg, const struct bench_progress *p)
{
	struct events *e = arg;

	if (e->end)
		e->order_bad++;         /* nothing after END */
	switch (p->event) {
	case BENCH_PROGRESS_BEGIN:
		e->order_bad += e->begin++ > 0;
		e->ncells = p->ncells;
		e->single = p->single;
		break;
	case BENCH_PROGRESS_CELL:
		e->order_bad += !e->begin || p->cell <= e->last_cell;
		e->last_cell = p->cell;
		if (e->cell < 8)
			snprintf(e->labels[e->cell], sizeof(e->labels[0]), "%s", p->label);
		if (e->member && e->cell < 8)
			read_set_uuid(e->member, e->uuid[e->cell]);
		e->cell++;
		break;
	case BENCH_PROGRESS_TICK:
		e->order_bad += !e->begin;
		break;
	case BENCH_PROGRESS_PHASE:
		/* before its cell: the cell's number is the next one */
		e->order_bad += !e->begin || p->cell <= e->last_cell;
		e->phase++;
		e->fills += strstr(p->label, "sequential fill") != NULL;
		break;
	case BENCH_PROGRESS_END:
		e->end++;
		break;
	}
}

static struct bench_runplan base_plan(const char *const *paths, unsigned npaths)
{
	struct bench_runplan p;

	memset(&p, 0, sizeof(p));
	p.wl.nlines = 1;
	p.wl.line[0] = (struct bench_access){ .bytes = 4096, .weight = 100, .read_pct = 100,
					      .random_pct = 100 };
	p.wl.iodepth = 1;
	p.wl.runtime_s = CELL_S;
	p.wl.seed = 1;
	p.tg.kind = BENCH_RAW;
	p.tg.paths = paths;
	p.tg.npaths = npaths;
	p.tg.create_bytes = 16u << 20;
	return p;
}

/* Plan and run p; the outcome stays in o (the caller finishes it). */
static int run(const struct bench_runplan *p, struct bench_outcome *o, struct events *e,
	       char *err, size_t errlen)
{
	struct bench_progress_hook hook = { .fn = on_progress, .arg = e };

	const char *member = e->member;

	memset(o, 0, sizeof(*o));
	memset(e, 0, sizeof(*e));
	e->member = member;
	int rc = bench_outcome_plan(o, p, err, errlen);
	return rc ? rc : bench_outcome_run(o, p, &hook, err, errlen);
}

static void check_qd_sweep(const char *const *paths)
{
	struct bench_runplan p = base_plan(paths, 1);
	struct bench_outcome o;
	struct events e;
	char err[400] = "";

	p.kind = BENCH_RUN_SWEEP;
	CHECK(!bench_axes_parse("qd=1,2,4", &p.axes, err, sizeof(err)), "%s", err);
	int rc = run(&p, &o, &e, err, sizeof(err));
	CHECK(!rc, "qd sweep: %d %s", rc, err);
	CHECK(o.kind == BENCH_RUN_SWEEP && !strcmp(bench_run_kind_name(o.kind), "sweep"),
	      "kind %d", o.kind);
	CHECK(o.ncells == 3 && o.cells, "%u cells", o.ncells);
	uint64_t ios = 0;
	for (unsigned i = 0; i < o.ncells; i++) {
		CHECK(bench_cell_measured(&o, i) && o.res[i].iodepth == o.cells[i].qd,
		      "cell %u: at QD %u", i, o.res[i].iodepth);
		ios += bench_total_ios(&o.res[i]);
	}
	/* (a loaded machine may complete nothing in one short cell, but not in all) */
	CHECK(ios > 0, "no I/O completed in %u cells", o.ncells);
	CHECK(o.has_rating && !o.rating_complete, "rating %.0f", o.rating);
	CHECK(e.begin == 1 && e.end == 1 && e.cell == 3 && !e.order_bad && e.ncells == 3 &&
	      !e.single, "events: %u begin, %u cells, %u end, %u out of order", e.begin, e.cell,
	      e.end, e.order_bad);
	CHECK(!strcmp(e.labels[0], "qd=1") && !strcmp(e.labels[2], "qd=4"), "labels '%s' '%s'",
	      e.labels[0], e.labels[2]);
	CHECK(o.wall_ns >= 3 * CELL_S * 1e9 && o.started, "wall %.3f s", o.wall_ns / 1e9);
	bench_outcome_fini(&o);
}

static void check_drives_sweep(const char *const *paths)
{
	struct bench_runplan p = base_plan(paths, 2);
	struct bench_outcome o;
	struct events e;
	char err[400] = "";

	p.kind = BENCH_RUN_SWEEP;
	p.tg.kind = BENCH_ARRAY;
	p.tg.flags |= BENCH_CREATE;
	p.tg.level = URAID_LEVEL_5;
	CHECK(!bench_axes_parse("drives=1..2", &p.axes, err, sizeof(err)), "%s", err);
	int rc = run(&p, &o, &e, err, sizeof(err));
	CHECK(!rc, "drives sweep: %d %s", rc, err);
	/* jbod x1, raid5 x1 (skipped), jbod x2, raid5 x2 */
	CHECK(o.ncells == 4, "%u cells", o.ncells);
	if (o.ncells == 4) {
		CHECK(bench_cell_measured(&o, 0) && !bench_cell_measured(&o, 1) &&
		      bench_cell_measured(&o, 2) && bench_cell_measured(&o, 3), "measured %d%d%d%d",
		      o.ran[0], o.ran[1], o.ran[2], o.ran[3]);
		CHECK(strstr(bench_cell_why_not(&o, 1), "at least 2 members"), "why: '%s'",
		      bench_cell_why_not(&o, 1));
		CHECK(strstr(o.res[3].target_desc, "raid5"), "cell 4 ran on '%s'",
		      o.res[3].target_desc);
	}
	CHECK(!o.has_rating, "a drives sweep has no X-bit rating");
	CHECK(e.cell == 3 && e.ncells == 4 && !e.order_bad, "events: %u cells of %u", e.cell,
	      e.ncells);
	bench_outcome_fini(&o);

	/* more drives than paths: the plan is refused before anything runs */
	memset(&p.axes, 0, sizeof(p.axes));
	CHECK(!bench_axes_parse("drives=3", &p.axes, err, sizeof(err)), "%s", err);
	rc = run(&p, &o, &e, err, sizeof(err));
	CHECK(rc == -EINVAL && strstr(err, "only 2 DEVICEs") && !e.begin, "drives=3: %d '%s'",
	      rc, err);
	bench_outcome_fini(&o);
}

static void check_steady(const char *const *paths)
{
	struct bench_runplan p = base_plan(paths, 1);
	struct bench_outcome o;
	struct events e;
	char err[400] = "";

	p.kind = BENCH_RUN_STEADY;
	p.steady_max = BENCH_SS_WINDOW;
	p.wl.ramp_s = 0.01;
	int rc = run(&p, &o, &e, err, sizeof(err));
	CHECK(!rc, "steady: %d %s", rc, err);
	/* a tmpfs file may be steady at once; either way the window's rounds ran */
	CHECK(o.ncells == BENCH_SS_WINDOW && o.ss_rounds == o.ncells,
	      "%u rounds, %u judged, mean %.0f", o.ncells, o.ss_rounds, o.ss.avg);
	CHECK(o.ncells && !strcmp(o.cells[o.ncells - 1].label, "round=5"), "label '%s'",
	      o.ncells ? o.cells[o.ncells - 1].label : "");
	CHECK(e.cell == o.ncells && e.ncells == BENCH_SS_WINDOW && e.end == 1, "events");
	bench_outcome_fini(&o);
}

static void check_single(const char *const *paths)
{
	struct bench_runplan p = base_plan(paths, 1);
	struct bench_outcome o;
	struct events e;
	char err[400] = "";

	p.kind = BENCH_RUN_SINGLE;
	int rc = run(&p, &o, &e, err, sizeof(err));
	CHECK(!rc && o.ncells == 1 && !o.cells && bench_cell_measured(&o, 0) &&
	      o.res[0].runtime_ns, "single: %d %s", rc, err);
	CHECK(e.begin == 1 && e.single && e.cell == 0 && e.end == 1, "single events");
	bench_outcome_fini(&o);

	/* writes to a file that existed before, without BENCH_FORCE_WRITE */
	p.kind = BENCH_RUN_SWEEP;
	p.wl.line[0].read_pct = 0;
	CHECK(!bench_axes_parse("qd=1,2", &p.axes, err, sizeof(err)), "%s", err);
	rc = run(&p, &o, &e, err, sizeof(err));
	CHECK(rc == -EPERM && !e.cell && e.end == 1 && !bench_cell_measured(&o, 0),
	      "writes without leave: %d '%s'", rc, err);
	bench_outcome_fini(&o);
}

static void check_compare(const char *const *paths)
{
	struct bench_runplan p = base_plan(paths, 4);
	struct bench_outcome o;
	struct events e;
	char err[400] = "";

	p.kind = BENCH_RUN_COMPARE;
	p.tg.create_bytes = 8u << 20;
	p.wl.line[0].read_pct = 50;
	p.precondition = true;
	p.precondition_max = BENCH_SS_WINDOW;
	CHECK(!bench_compare_parse("level=5,6", &p.cmp, err, sizeof(err)) &&
	      !bench_compare_parse("members=3,4", &p.cmp, err, sizeof(err)), "%s", err);
	int rc = run(&p, &o, &e, err, sizeof(err));
	CHECK(!rc, "compare: %d %s", rc, err);
	CHECK(o.kind == BENCH_RUN_COMPARE && !strcmp(bench_run_kind_name(o.kind), "compare") &&
	      o.ncells == 4 && o.pre, "kind %d, %u cells", o.kind, o.ncells);
	if (!rc && o.ncells == 4) {
		static const char *const desc[4] = { "raid5, 3 members", "raid5, 4 members", NULL,
						     "raid6, 4 members" };
		for (unsigned i = 0; i < 4; i++) {
			if (!desc[i]) {
				CHECK(!bench_cell_measured(&o, i) && !o.pre[i].done &&
				      strstr(bench_cell_why_not(&o, i), "raid6 needs at least 4"),
				      "raid6 x3: '%s'", bench_cell_why_not(&o, i));
				continue;
			}
			CHECK(bench_cell_measured(&o, i) && !strncmp(o.res[i].target_desc, desc[i],
								     strlen(desc[i])),
			      "cell %s ran on '%s'", o.cells[i].label, o.res[i].target_desc);
			const struct bench_precond *pc = &o.pre[i];
			CHECK(pc->done && pc->fill_range_bytes &&
			      pc->fill_bytes == 2 * pc->fill_range_bytes &&
			      pc->rounds >= 1 && pc->rounds <= BENCH_SS_WINDOW && pc->fill_ns &&
			      pc->steady_ns, "cell %s: fill %llu of range %llu, %u rounds",
			      o.cells[i].label, (unsigned long long)pc->fill_bytes,
			      (unsigned long long)pc->fill_range_bytes, pc->rounds);
		}
	}
	CHECK(e.cell == 3 && e.fills == 3 && e.phase >= 6 && !e.order_bad,
	      "events: %u cells, %u fills, %u phases, %u out of order", e.cell, e.fills, e.phase,
	      e.order_bad);
	bench_outcome_fini(&o);
}

/*
 * --precondition with a sweep fills the array once; every cell assembles
 * that array: the set UUID the fill's create wrote is the one each cell
 * starts on and the one left at the end (a cell that created the array
 * again would give it a new one).
 */
static void check_sweep_precondition(const char *const *paths)
{
	struct bench_runplan p = base_plan(paths, 2);
	struct bench_outcome o;
	struct events e = { .member = paths[0] };
	char err[400] = "";
	unsigned char end_uuid[16], zero[16] = { 0 };

	p.kind = BENCH_RUN_SWEEP;
	p.tg.kind = BENCH_ARRAY;
	p.tg.flags = BENCH_CREATE;
	p.tg.level = URAID_LEVEL_1;
	p.tg.create_bytes = 8u << 20;
	p.precondition = true;
	p.precondition_max = BENCH_SS_WINDOW;
	CHECK(!bench_axes_parse("qd=1,2,4", &p.axes, err, sizeof(err)), "%s", err);
	int rc = run(&p, &o, &e, err, sizeof(err));
	CHECK(!rc, "sweep with precondition: %d %s", rc, err);
	CHECK(e.fills == 1 && e.cell == 3 && o.pre && o.pre[0].done && o.pre[0].fill_targets == 1,
	      "one fill (%u), 3 cells (%u)", e.fills, e.cell);
	read_set_uuid(paths[0], end_uuid);
	CHECK(memcmp(end_uuid, zero, 16), "no superblock on %s", paths[0]);
	for (unsigned i = 0; i < e.cell && i < 8; i++)
		CHECK(!memcmp(e.uuid[i], end_uuid, 16), "cell %u ran on another array than the "
		      "filled one (set UUID changed)", i + 1);
	bench_outcome_fini(&o);
}

/*
 * Preconditioning two raw targets: the fill covers both ranges, twice
 * (the range it reports is both together, so the ratio is 2, not 4).
 */
static void check_raw_precondition(const char *const *paths)
{
	struct bench_runplan p = base_plan(paths, 2);
	struct bench_outcome o;
	struct events e = { 0 };
	char err[400] = "";

	p.kind = BENCH_RUN_SINGLE;
	p.tg.create_bytes = 4u << 20;   /* two raw files of 4 MiB, used whole */
	p.precondition = true;
	p.precondition_max = BENCH_SS_WINDOW;
	int rc = run(&p, &o, &e, err, sizeof(err));
	CHECK(!rc, "raw precondition: %d %s", rc, err);
	if (!rc && o.pre) {
		const struct bench_precond *pc = &o.pre[0];
		CHECK(pc->done && pc->fill_targets == 2 && pc->fill_range_bytes == 2 * (4u << 20) &&
		      pc->fill_bytes == 2 * pc->fill_range_bytes,
		      "fill %llu over %u targets, range %llu", (unsigned long long)pc->fill_bytes,
		      pc->fill_targets, (unsigned long long)pc->fill_range_bytes);
	}
	bench_outcome_fini(&o);
}

/*
 * The compare charts have room for SVG_MAX_CATEGORIES configurations: a
 * comparison of more (made up here, none run) says in the chart's note how
 * many it leaves out.
 */
static void check_many_configs(const char *dir)
{
	enum { N = SVG_MAX_CATEGORIES + 6 };
	struct bench_runplan p;
	struct bench_outcome o;
	struct bench_report *r = NULL;
	char err[400] = "", path[4096], html[1 << 16];

	memset(&p, 0, sizeof(p));
	memset(&o, 0, sizeof(o));
	p.kind = o.kind = BENCH_RUN_COMPARE;
	o.ncells = o.nalloc = N;
	o.cells = calloc(N, sizeof(*o.cells));
	o.res = calloc(N, sizeof(*o.res));
	o.ran = calloc(N, sizeof(*o.ran));
	if (!o.cells || !o.res || !o.ran) {
		CHECK(0, "out of memory");
		bench_outcome_fini(&o);
		return;
	}
	for (unsigned i = 0; i < N; i++) {
		o.cells[i].compare = true;
		o.cells[i].read_pct = -1;
		snprintf(o.cells[i].label, sizeof(o.cells[i].label), "config %u", i);
		o.res[i].runtime_ns = 100000000;
		o.res[i].dir[0].ios = 100 + i;
		o.ran[i] = true;
	}
	snprintf(path, sizeof(path), "%s/many.html", dir);
	int rc = bench_report_new(&r, "many", err, sizeof(err));
	if (!rc)
		rc = bench_report_add_compare_charts(r, &p, &o, "made up", err, sizeof(err));
	if (!rc)
		rc = bench_report_write_html(r, path, err, sizeof(err));
	CHECK(!rc, "report of %d configurations: %s", N, err);
	FILE *f = fopen(path, "r");
	size_t len = f ? fread(html, 1, sizeof(html) - 1, f) : 0;
	html[len] = 0;
	if (f)
		fclose(f);
	char want[96];
	snprintf(want, sizeof(want), "the first %d of the %d configurations run", SVG_MAX_CATEGORIES,
		 N);
	CHECK(strstr(html, want), "no note '%s' in the report (%zu bytes)", want, len);
	unlink(path);
	bench_report_free(r);
	bench_outcome_fini(&o);
}

/* A read-share sweep writes when one of its shares is below 100 %. */
static void check_rwmix_writes(const char *const *paths)
{
	struct bench_runplan p = base_plan(paths, 1);
	char err[200];

	p.kind = BENCH_RUN_SWEEP;
	CHECK(!bench_axes_parse("rwmixread=100", &p.axes, err, sizeof(err)) &&
	      !bench_plan_writes(&p), "rwmixread=100 of a read workload counted as writing");
	memset(&p.axes, 0, sizeof(p.axes));
	CHECK(!bench_axes_parse("rwmixread=100,70", &p.axes, err, sizeof(err)) &&
	      bench_plan_writes(&p), "rwmixread=100,70 not counted as writing");
}

int main(void)
{
	char dir[] = "/dev/shm/test_bench_method.XXXXXX", dir2[] = "/tmp/test_bench_method.XXXXXX";
	char *d = access("/dev/shm", W_OK) ? mkdtemp(dir2) : mkdtemp(dir);
	char a[4096], b[4096], c[4096], dd[4096];

	if (!d) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(a, sizeof(a), "%s/a.img", d);
	snprintf(b, sizeof(b), "%s/b.img", d);
	snprintf(c, sizeof(c), "%s/c.img", d);
	snprintf(dd, sizeof(dd), "%s/d.img", d);
	const char *const one[1] = { a }, *const two[2] = { a, b }, *const four[4] = { a, b, c, dd };

	check_rwmix_writes(one);
	check_many_configs(d);
	check_qd_sweep(one);
	check_single(one);
	check_steady(one);
	unlink(a);
	check_drives_sweep(two);
	unlink(a);
	unlink(b);
	check_raw_precondition(two);
	unlink(a);
	unlink(b);
	check_sweep_precondition(two);
	unlink(a);
	unlink(b);
	check_compare(four);
	unlink(a);
	unlink(b);
	unlink(c);
	unlink(dd);
	rmdir(d);
	if (failures)
		printf("%d failures\n", failures);
	else
		printf("ok: sweeps, steady state, single run, refusals, compare with precondition\n");
	return failures ? 1 : 0;
}
