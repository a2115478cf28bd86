// SPDX-License-Identifier: MIT
/*
 * The drive model (characterise.h): the points run in an order that reads
 * before it writes (a fresh file's reads see the data it was filled with,
 * not what the write points left), each point one bench run of one worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <uraid/create.h>

#include "common/errmsg.h"
#include "bench/characterise.h"

const unsigned bench_char_qd[BENCH_CHAR_NQD] = { 1, 2, 4, 8, 16, 32 };
const unsigned bench_char_mixed_qd[BENCH_CHAR_NMIXED] = { 1, 32 };
const uint32_t bench_char_seq_bs[BENCH_CHAR_NSEQ] = { 128u << 10, 1u << 20 };

struct char_ctx {
	const char *path;
	const struct bench_char_opts *o;
	struct bench_targets tg;
	unsigned index;
	uint64_t range_bytes;       /* of the last run */
};

/* One point: bytes at read_pct % reads, random or sequential, at qd. */
static int run_point(struct char_ctx *c, const char *what, uint32_t bytes, unsigned read_pct,
		     bool random, unsigned qd, struct bench_result *res, char *err, size_t errlen)
{
	struct bench_workload wl = {
		.nlines = 1,
		.line[0] = { .bytes = bytes, .weight = 100, .read_pct = read_pct,
			     .random_pct = random ? 100 : 0 },
		.size = c->o->size,
		.workers = 1,
		.iodepth = qd,
		.runtime_s = c->o->runtime_s,
		.ramp_s = c->o->ramp_s,
		.seed = c->o->seed + c->index,
	};

	if (c->o->progress)
		c->o->progress(c->o->arg, c->path, c->index, what);
	c->index++;
	int rc = bench_run(&wl, &c->tg, res, err, errlen);
	if (rc)
		return rc;
	c->range_bytes = res->target_bytes;
	/* A point with no I/O completed in its window would enter the model
	   as a drive that does nothing (0 IOPS): the window was too short
	   for this drive or this machine's load; say so instead. */
	if (res->lat.count == 0) {
		bench_result_fini(res);
		return uraid_errf(err, errlen, -ETIMEDOUT, "%s: %s: no I/O completed in %g s; "
				  "give a longer --runtime", c->path, what, c->o->runtime_s);
	}
	return 0;
}

static void to_point(const struct bench_result *r, unsigned qd, struct bench_char_point *p)
{
	p->qd = qd;
	p->iops = bench_iops(r);
	p->mean_us = (double)hist_mean(&r->lat) / 1000.0;
	p->p99_us = (double)hist_percentile(&r->lat, 99) / 1000.0;
}

static int random_points(struct char_ctx *c, unsigned read_pct, const unsigned *qds, unsigned n,
			 struct bench_char_point *out, char *err, size_t errlen)
{
	for (unsigned i = 0; i < n; i++) {
		struct bench_result r;
		char what[64];
		snprintf(what, sizeof(what), "4 KiB random %s QD %u",
			 read_pct == 100 ? "read" : read_pct == 0 ? "write" : "70/30", qds[i]);
		int rc = run_point(c, what, 4096, read_pct, true, qds[i], &r, err, errlen);
		if (rc)
			return rc;
		to_point(&r, qds[i], &out[i]);
		bench_result_fini(&r);
	}
	return 0;
}

static int seq_points(struct char_ctx *c, bool write, struct bench_char_seq *out, char *err,
		      size_t errlen)
{
	for (unsigned i = 0; i < BENCH_CHAR_NSEQ; i++) {
		struct bench_result r;
		char what[64];
		snprintf(what, sizeof(what), "%u KiB sequential %s", bench_char_seq_bs[i] >> 10,
			 write ? "write" : "read");
		int rc = run_point(c, what, bench_char_seq_bs[i], write ? 0 : 100, false,
				   BENCH_CHAR_SEQ_QD, &r, err, errlen);
		if (rc)
			return rc;
		out[i].bs = bench_char_seq_bs[i];
		out[i].mib_s = bench_mib_s(&r);
		bench_result_fini(&r);
	}
	return 0;
}

/* The whole device's size (the runs use --size of it when given). */
static int capacity(struct char_ctx *c, uint64_t *bytes, char *err, size_t errlen)
{
	uint64_t sectors;

	if (bench_is_nbd_uri(c->path)) {
		*bytes = c->range_bytes;        /* the export's, read by the first run */
		return 0;
	}
	int fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return uraid_errf(err, errlen, -errno, "%s: %s", c->path, strerror(errno));
	int rc = uraid_dev_sectors(fd, &sectors, NULL);
	close(fd);
	if (rc)
		return uraid_errf(err, errlen, rc, "%s: cannot get its size: %s", c->path,
				  strerror(-rc));
	*bytes = sectors * 512;
	return 0;
}

int bench_characterise(const char *path, const struct bench_char_opts *o,
		       struct bench_drive_model *m, char *err, size_t errlen)
{
	struct char_ctx c = {
		.path = path,
		.o = o,
		.tg = { .kind = BENCH_RAW, .paths = &c.path, .npaths = 1, .flags = o->flags,
			.create_bytes = o->create_bytes },
	};
	struct bench_workload writes = { .nlines = 1, .line[0] = { .bytes = 4096, .weight = 100 } };
	bool created;

	memset(m, 0, sizeof(*m));
	m->path = path;
	/* the model writes: refuse what the bench refuses, once, then create what is missing */
	int rc = bench_check_write_permission(&writes, &c.tg, err, errlen);
	if (!rc)
		rc = bench_prepare_paths(&c.tg, true, &created, err, errlen);
	if (rc)
		return rc;
	c.tg.flags |= BENCH_FORCE_WRITE;

	if ((rc = random_points(&c, 100, bench_char_qd, BENCH_CHAR_NQD, m->random_read, err,
				errlen)) ||
	    (rc = seq_points(&c, false, m->seq_read, err, errlen)) ||
	    (rc = random_points(&c, 0, bench_char_qd, BENCH_CHAR_NQD, m->random_write, err,
				errlen)) ||
	    (rc = random_points(&c, BENCH_CHAR_MIX_READ, bench_char_mixed_qd, BENCH_CHAR_NMIXED,
				m->mixed, err, errlen)) ||
	    (rc = seq_points(&c, true, m->seq_write, err, errlen)))
		return rc;
	return capacity(&c, &m->capacity_bytes, err, errlen);
}
