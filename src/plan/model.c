// SPDX-License-Identifier: MIT
/*
 * The planner's performance model: the shape of a candidate from the
 * geometry, the member I/O of one client I/O per level, and the queueing
 * that turns them into IOPS and latency. docs/planner.md states every rule
 * used here and why.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/errmsg.h"
#include "plan/model.h"

unsigned plan_workload_qd(const struct plan_workload *w, unsigned members)
{
	unsigned jobs = w->numjobs ? w->numjobs : 1;
	return w->qd_per_drive ? w->iodepth * members : w->iodepth * jobs;
}

int plan_shape_init(struct plan_shape *s, const struct plan_candidate *c,
		    const uint64_t *member_bytes, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->info = uraid_level_info(c->level);
	if (!s->info)
		return uraid_errf(err, errlen, -EINVAL, "level %d is not one uraid runs", c->level);
	if (c->members < s->info->create_min_members || c->members > URAID_MAX_MEMBERS)
		return uraid_errf(err, errlen, -EINVAL, "%s needs %u to %u members, not %u",
				  s->info->name, s->info->create_min_members, URAID_MAX_MEMBERS,
				  c->members);
	if (!uraid_layout_valid(c->level, c->layout, c->members))
		return uraid_errf(err, errlen, -EINVAL, "that layout is not valid for %s with %u "
				  "members", s->info->name, c->members);
	bool chunked = s->info->chunk == URAID_CHUNK_STRIPE;
	uint32_t chunk_sectors = chunked ? c->chunk_bytes / 512 : 0;
	if (chunked && !chunk_sectors)
		return uraid_errf(err, errlen, -EINVAL, "%s needs a chunk size", s->info->name);

	struct uraid_geom *g = malloc(sizeof(*g));
	uint64_t *ms = calloc(c->members, sizeof(*ms));
	if (!g || !ms) {
		free(g);
		free(ms);
		return -ENOMEM;
	}
	uint64_t smallest = UINT64_MAX;
	for (unsigned i = 0; i < c->members; i++) {
		ms[i] = member_bytes[i] / 512;
		if (chunk_sectors)
			ms[i] -= ms[i] % chunk_sectors;
		if (ms[i] < smallest)
			smallest = ms[i];
	}
	struct uraid_geom_params p = {
		.level = c->level, .layout = c->layout, .raid_disks = c->members,
		.chunk_sectors = chunk_sectors, .dev_sectors = smallest,
		.member_sectors = ms, .raid0_layout_flag = s->info->layout_feature != 0,
	};
	int rc = uraid_geom_init(g, &p, err, errlen);
	if (rc)
		goto out;
	s->n = c->members;
	s->level = c->level;
	s->layout = c->layout;
	s->chunk_bytes = chunked ? c->chunk_bytes : 0;
	s->parity = s->info->parity_members;
	s->copies = uraid_geom_copies(g);
	s->max_failures = uraid_geom_max_failures(g);
	s->data_per_row = s->info->data_striped ? s->n - s->parity : 1;
	s->usable_bytes = g->array_sectors * 512;
	s->member_used_bytes = g->dev_sectors * 512;

	/*
	 * Who holds what: count over enough rows or chunks for every rotation
	 * of the layout to come round (md's layouts repeat within n rows; a far
	 * copy's member is found through the map, wherever it lies).
	 */
	uint64_t step = chunk_sectors ? chunk_sectors : 8;
	if (s->parity) {
		uint64_t rows = 4ull * s->n, have = g->dev_sectors / chunk_sectors;
		if (rows > have)
			rows = have;
		struct uraid_stripe *st = malloc(sizeof(*st));
		if (!st) {
			rc = -ENOMEM;
			goto out;
		}
		for (uint64_t r = 0; r < rows && !rc; r++) {
			rc = uraid_geom_stripe(g, r, st);
			for (unsigned k = 0; !rc && k < st->data_disks; k++)
				s->copy_share[st->data_slot[k]] += 1.0 / ((double)rows * st->data_disks);
			if (!rc && st->p_slot >= 0)
				s->parity_share[st->p_slot] += 1.0 / ((double)rows * s->parity);
			if (!rc && st->q_slot >= 0)
				s->parity_share[st->q_slot] += 1.0 / ((double)rows * s->parity);
		}
		free(st);
		if (rc)
			uraid_errf(err, errlen, rc, "the stripe map of %s failed", s->info->name);
	} else {
		uint64_t chunks = 4ull * s->n * s->copies, have = g->array_sectors / step;
		if (chunks > have)
			chunks = have;
		struct uraid_loc loc[URAID_MAX_MEMBERS];
		double placed = 0;
		for (uint64_t k = 0; k < chunks && !rc; k++) {
			int nc = uraid_geom_map(g, k * step, loc, URAID_MAX_MEMBERS);
			if (nc < 0) {
				rc = uraid_errf(err, errlen, nc, "the map of %s failed", s->info->name);
				break;
			}
			for (int i = 0; i < nc; i++)
				s->copy_share[loc[i].slot] += 1;
			placed += nc;
		}
		for (unsigned i = 0; i < s->n && placed; i++)
			s->copy_share[i] /= placed;
	}
out:
	free(g);
	free(ms);
	return rc;
}

/* Spread count I/Os over the members by share (which sums to 1). */
static void spread(double *slot, const double *share, unsigned n, double count)
{
	for (unsigned i = 0; i < n; i++)
		slot[i] += count * share[i];
}

void plan_member_io(const struct plan_shape *s, uint32_t bytes, bool is_read, bool sequential,
		    struct plan_member_io *io)
{
	memset(io, 0, sizeof(*io));
	io->phases = 1;
	/* an I/O aligned on its own size crosses chunks only when larger than one */
	double chunk = s->chunk_bytes ? s->chunk_bytes : bytes;
	double pieces = bytes <= chunk ? 1 : ceil(bytes / chunk);
	double piece = bytes <= chunk ? bytes : chunk;
	unsigned d = s->data_per_row, p = s->parity;

	if (is_read) {
		/* one copy is read: mirrors balance reads over every copy's member */
		io->reads = pieces;
		io->read_bytes = bytes;
		spread(io->slot_reads, s->copy_share, s->n, pieces);
		return;
	}
	if (!p) {
		/* every copy is written */
		io->writes = pieces * s->copies;
		io->write_bytes = (double)bytes * s->copies;
		spread(io->slot_writes, s->copy_share, s->n, io->writes);
		return;
	}
	if (sequential) {
		/* a stream is gathered into full rows: no reads, p parity chunks per d */
		double par = pieces * p / d;
		io->writes = pieces + par;
		io->write_bytes = (double)bytes * (d + p) / d;
		io->parity_src_bytes = bytes;
		spread(io->slot_writes, s->copy_share, s->n, pieces);
		spread(io->slot_writes, s->parity_share, s->n, par);
		return;
	}
	/* random: whole rows need no reads; the rest of a row reads the fewer of
	   read-modify-write (its chunks and the parity) and reconstruct-write
	   (the row's other chunks), reconstruct-write on a tie as the engine */
	double full = floor(pieces / d), u = pieces - full * d;
	double wr_data = pieces, wr_par = (full + (u > 0)) * p;
	double rd_data = 0, rd_par = 0;
	io->parity_src_bytes = full * d * piece;
	if (u > 0) {
		double rmw = u + p, rcw = d - u;
		if (rcw <= rmw) {
			rd_data = rcw;
			io->parity_src_bytes += d * piece;
		} else {
			rd_data = u;
			rd_par = p;
			io->rmw = true;
			io->parity_src_bytes += (2 * u + p) * piece;
		}
	}
	io->reads = rd_data + rd_par;
	io->writes = wr_data + wr_par;
	io->read_bytes = io->reads * piece;
	io->write_bytes = io->writes * piece;
	io->phases = io->reads > 0 ? 2 : 1;
	spread(io->slot_reads, s->copy_share, s->n, rd_data);
	spread(io->slot_reads, s->parity_share, s->n, rd_par);
	spread(io->slot_writes, s->copy_share, s->n, wr_data);
	spread(io->slot_writes, s->parity_share, s->n, wr_par);
}

/* One member I/O of `size` on drive dr at queue depth q: drive-busy seconds
 * and latency in µs (and p99 in µs, 0 when the drive model has none). */
static void member_op(const struct plan_drive *dr, bool rd, bool seq, double size, double q,
		      double *busy_s, double *lat_us, double *p99_us)
{
	double bw = (rd ? dr->seq_read_mib_s : dr->seq_write_mib_s) * 1048576.0;
	double xfer = size / bw;
	if (seq) {
		/* a stream: the drive's sequential rate, whatever the queue */
		*busy_s = xfer;
		*lat_us = xfer * 1e6;
		*p99_us = 0;
		return;
	}
	struct plan_drive_at at;
	plan_curve_at(rd ? &dr->rand_read : &dr->rand_write, q < 1 ? 1 : q, &at);
	/* 4 KiB costs what the curve says; bytes beyond it the sequential rate */
	double extra = size > 4096 ? (size - 4096) / bw : 0;
	*busy_s = 1 / at.iops + extra;
	*lat_us = at.mean_us + extra * 1e6;
	*p99_us = at.p99_us ? at.p99_us + extra * 1e6 : 0;
}

/* The sub-workloads: (line, direction, random or sequential) with probability. */
struct sub {
	double prob;
	uint32_t bytes;
	bool rd, seq;
};

static unsigned subs_of(const struct plan_workload *w, struct sub *out)
{
	double total = 0;
	unsigned n = 0;
	for (unsigned l = 0; l < w->nlines; l++)
		total += w->line[l].weight;
	for (unsigned l = 0; l < w->nlines && total > 0; l++) {
		const struct bench_access *a = &w->line[l];
		for (int rd = 0; rd < 2; rd++)
			for (int seq = 0; seq < 2; seq++) {
				double pr = (rd ? a->read_pct : 100 - a->read_pct) / 100.0;
				double ps = (seq ? 100 - a->random_pct : a->random_pct) / 100.0;
				double prob = a->weight / total * pr * ps;
				if (prob > 0)
					out[n++] = (struct sub){ prob, a->bytes, rd, seq };
			}
	}
	return n;
}

int plan_predict(const struct plan_shape *s, const struct plan_drive *const *slot_drive,
		 const struct plan_workload *w, const struct plan_host *h, struct plan_perf *out)
{
	struct sub subs[BENCH_MAX_LINES * 4];
	unsigned nsub = subs_of(w, subs);
	memset(out, 0, sizeof(*out));
	if (!nsub || !s->n)
		return -EINVAL;
	struct plan_member_io *io = malloc(sizeof(*io));
	double *conc = calloc(s->n, sizeof(double)), *busy = calloc(s->n, sizeof(double));
	if (!io || !conc || !busy) {
		free(io);
		free(conc);
		free(busy);
		return -ENOMEM;
	}
	double Q = plan_workload_qd(w, s->n);
	double client_bytes = 0, member_bytes = 0, mios = 0, cpu_us = 0, par_bytes = 0;
	const struct plan_host_own *own = plan_host_own_of(h, s->level, s->layout);

	/* queue depth per member: the client's outstanding I/Os times the member
	   I/Os each has outstanding on it (its member I/Os over its phases) */
	for (unsigned k = 0; k < nsub; k++) {
		plan_member_io(s, subs[k].bytes, subs[k].rd, subs[k].seq, io);
		for (unsigned i = 0; i < s->n; i++)
			conc[i] += subs[k].prob * (io->slot_reads[i] + io->slot_writes[i]) / io->phases;
		client_bytes += subs[k].prob * subs[k].bytes;
		member_bytes += subs[k].prob * (io->read_bytes + io->write_bytes);
		mios += subs[k].prob * (io->reads + io->writes);
		cpu_us += subs[k].prob * plan_host_client_us(h, subs[k].rd);
		par_bytes += subs[k].prob * io->parity_src_bytes;
		/* the level's own work besides its member I/Os and its arithmetic
		   (measured per family: docs/planner.md, "--verify"); without it a
		   parity level's write still does the parity path's */
		if (own)
			cpu_us += subs[k].prob * (subs[k].rd ? own->read_us : own->write_us);
		else if (!subs[k].rd && s->parity)
			cpu_us += subs[k].prob * h->cpu_us_per_parity_write;
	}
	double qmax = 0;
	for (unsigned i = 0; i < s->n; i++) {
		conc[i] *= Q;
		if (conc[i] > qmax)
			qmax = conc[i];
	}

	/* busy time of each member per client I/O, and the client's latency
	   with every member at its queue depth (R) and at QD 1 (R1) */
	double R = 0, R1 = 0, p99_ratio = 0;
	bool have_p99 = true;
	for (unsigned k = 0; k < nsub; k++) {
		plan_member_io(s, subs[k].bytes, subs[k].rd, subs[k].seq, io);
		double rsz = io->reads ? io->read_bytes / io->reads : 0;
		double wsz = io->writes ? io->write_bytes / io->writes : 0;
		double lat_r = 0, lat_w = 0, lat_r1 = 0, lat_w1 = 0, p99_r = 0, p99_w = 0;
		for (unsigned i = 0; i < s->n; i++) {
			const struct plan_drive *dr = slot_drive[i];
			double b, l, p99, b1, l1, p1;
			/* each member I/O's CPU at its member's queue depth (measured) */
			cpu_us += subs[k].prob *
				  (io->slot_reads[i] * plan_host_member_us(h, true, conc[i], rsz) +
				   io->slot_writes[i] * plan_host_member_us(h, false, conc[i], wsz));
			if (io->slot_reads[i] > 0) {
				member_op(dr, true, subs[k].seq, rsz, conc[i], &b, &l, &p99);
				member_op(dr, true, subs[k].seq, rsz, 1, &b1, &l1, &p1);
				busy[i] += subs[k].prob * io->slot_reads[i] * b;
				lat_r += io->slot_reads[i] / io->reads * l;
				lat_r1 += io->slot_reads[i] / io->reads * l1;
				p99_r += io->slot_reads[i] / io->reads * (p99 ? p99 / l : 0);
				have_p99 = have_p99 && (p99 > 0 || subs[k].seq);
			}
			if (io->slot_writes[i] > 0) {
				member_op(dr, false, subs[k].seq, wsz, conc[i], &b, &l, &p99);
				member_op(dr, false, subs[k].seq, wsz, 1, &b1, &l1, &p1);
				busy[i] += subs[k].prob * io->slot_writes[i] * b;
				lat_w += io->slot_writes[i] / io->writes * l;
				lat_w1 += io->slot_writes[i] / io->writes * l1;
				p99_w += io->slot_writes[i] / io->writes * (p99 ? p99 / l : 0);
				have_p99 = have_p99 && (p99 > 0 || subs[k].seq);
			}
		}
		/* a phase lasts as long as its member I/Os; reads come before writes
		   when the I/O reads at all (a read, or the first phase of a write) */
		double lat = io->phases == 2 ? lat_r + lat_w : (subs[k].rd ? lat_r : lat_w);
		double lat1 = io->phases == 2 ? lat_r1 + lat_w1 : (subs[k].rd ? lat_r1 : lat_w1);
		R += subs[k].prob * lat;
		R1 += subs[k].prob * lat1;
		p99_ratio += subs[k].prob * (subs[k].rd ? p99_r : (p99_w > p99_r ? p99_w : p99_r));
	}

	double x = Q / (R * 1e-6);
	out->bound = "latency";
	for (unsigned i = 0; i < s->n; i++)
		if (busy[i] > 0 && 1 / busy[i] < x) {
			x = 1 / busy[i];
			out->bound = "drives";
		}
	/* the candidate's own parity: XOR or P+Q over its data chunks */
	double rate = s->parity ? plan_host_parity_mib_s(h, s->data_per_row, s->parity) : 0;
	double par_us = rate > 0 ? par_bytes / (rate * 1048576.0) * 1e6 : 0;
	double host_us = cpu_us + par_us;
	double cpus = (h->cores ? h->cores : 1) * plan_host_share(h, s->n);
	out->cpu_us = host_us;
	if (host_us > 0 && cpus * 1e6 / host_us < x) {
		x = cpus * 1e6 / host_us;
		out->bound = par_us > host_us / 2 ? "parity" : "host CPU";
	}
	if (h->link_mib_s > 0 && member_bytes > 0 && h->link_mib_s * 1048576.0 / member_bytes < x) {
		x = h->link_mib_s * 1048576.0 / member_bytes;
		out->bound = "link";
	}
	if (h->link_iops > 0 && h->link_iops / mios < x) {
		x = h->link_iops / mios;
		out->bound = "link";
	}
	out->iops = x;
	out->mib_s = x * client_bytes / 1048576.0;
	out->qd = Q;
	out->mean_us = Q / x * 1e6;
	/* p99: the drives' own spread where measured; else the waiting beyond
	   the unloaded latency taken as exponential (its 99th percentile is
	   ln(100) times its mean) */
	if (have_p99 && p99_ratio > 0)
		out->p99_us = out->mean_us * p99_ratio;
	else
		out->p99_us = R1 + (out->mean_us > R1 ? (out->mean_us - R1) * log(100) : 0);
	out->member_qd = qmax;
	out->member_ios = mios;
	out->member_bytes_per_byte = client_bytes ? member_bytes / client_bytes : 0;
	free(io);
	free(conc);
	free(busy);
	return 0;
}
