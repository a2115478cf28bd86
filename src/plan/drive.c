// SPDX-License-Identifier: MIT
/*
 * Drive models for the planner: the IOPS-vs-queue-depth curve and its
 * lookup, data sheets from the command line, and drive model JSON from
 * `uraid bench --characterise` (read with the bounded JSON reader; every
 * number is checked before it is used).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "common/json_read.h"
#include "plan/drive.h"

#define MAX_IOPS   1e9          /* per drive: far beyond any drive, catches typos */
#define MAX_MIB_S  1e7
#define MAX_LAT_US 1e8
#define MAX_DRIVE_JSON (1u << 20)

/*
 * The curve at qd: between two measured points, IOPS and latency are
 * interpolated on log2(qd); below the first, a drive with fewer I/Os than
 * its first point has the same latency and proportionally fewer IOPS (it
 * is idle part of the time); past the last, IOPS stay and latency grows with
 * the queue (Little's law: latency = qd / IOPS).
 */
void plan_curve_at(const struct plan_curve *c, double qd, struct plan_drive_at *out)
{
	memset(out, 0, sizeof(*out));
	if (!c->n)
		return;
	const struct plan_curve_pt *a = &c->pt[0], *z = &c->pt[c->n - 1];
	if (qd <= a->qd) {
		out->iops = a->iops * qd / a->qd;
		out->mean_us = a->mean_us;
		out->p99_us = a->p99_us;
		return;
	}
	if (qd >= z->qd) {
		out->iops = z->iops;
		out->mean_us = qd * 1e6 / z->iops;
		out->p99_us = z->p99_us ? z->p99_us * out->mean_us / z->mean_us : 0;
		return;
	}
	for (unsigned i = 1; i < c->n; i++) {
		const struct plan_curve_pt *p = &c->pt[i - 1], *q = &c->pt[i];
		if (qd > q->qd)
			continue;
		double f = log2(qd / p->qd) / log2(q->qd / p->qd);
		out->iops = p->iops + f * (q->iops - p->iops);
		out->mean_us = p->mean_us + f * (q->mean_us - p->mean_us);
		out->p99_us = p->p99_us && q->p99_us ? p->p99_us + f * (q->p99_us - p->p99_us) : 0;
		return;
	}
}

/* A curve from a data sheet's peak IOPS and QD 1 latency (0: not given). */
static void sheet_curve(struct plan_curve *c, double peak, double lat_us)
{
	static const double qds[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256 };
	c->n = 0;
	for (unsigned i = 0; i < sizeof(qds) / sizeof(qds[0]); i++) {
		double iops = peak;
		if (lat_us > 0 && qds[i] * 1e6 / lat_us < peak)
			iops = qds[i] * 1e6 / lat_us;
		struct plan_curve_pt *p = &c->pt[c->n++];
		p->qd = qds[i];
		p->iops = iops;
		p->mean_us = qds[i] * 1e6 / iops;
		p->p99_us = 0;
	}
}

static int num_in(const char *key, const char *v, double lo, double hi, double *out,
		  char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	bool pct = *end == '%';
	if (pct)
		end++, x /= 100;
	if (end == v || *end || errno || !isfinite(x) || x < lo || x > hi)
		return uraid_errf(err, errlen, -EINVAL, "--drive: %s=%s is not a number in "
				  "%g..%g", key, v, lo, hi);
	*out = x;
	return 0;
}

/* "4T", "3.84TB", "480G", "1000000000": binary K/M/G/T/P, decimal KB/MB/GB/TB/PB. */
static int size_in(const char *v, uint64_t *out, char *err, size_t errlen)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	double mul = 1;
	static const char units[] = "KMGTP";
	const char *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
	if (u && *end) {
		int pw = (int)(u - units) + 1;
		if (end[1] == 'B' || end[1] == 'b')
			mul = pow(1000, pw), end += 2;
		else if (end[1] == 'i' && (end[2] == 'B' || end[2] == 'b'))
			mul = pow(1024, pw), end += 3;
		else
			mul = pow(1024, pw), end += 1;
	}
	x *= mul;
	if (end == v || *end || errno || !isfinite(x) || x < 1 << 20 || x > 1e18)
		return uraid_errf(err, errlen, -EINVAL, "--drive: capacity=%s is not a size "
				  "from 1M to 1E bytes (such as 3.84TB or 4T)", v);
	*out = (uint64_t)x;
	return 0;
}

static void drive_defaults(struct plan_drive *d)
{
	memset(d, 0, sizeof(*d));
	d->afr = -1;
	d->ure = -1;
	d->price = -1;
}

int plan_drive_parse_sheet(const char *s, struct plan_drive *d, char *err, size_t errlen)
{
	drive_defaults(d);
	double rio = 0, wio = 0, rlat = 0, wlat = 0;
	char buf[512];
	if (strlen(s) >= sizeof(buf))
		return uraid_errf(err, errlen, -EINVAL, "--drive: too long (at most %zu bytes)",
				  sizeof(buf) - 1);
	strcpy(buf, s);
	snprintf(d->name, sizeof(d->name), "data sheet");
	char *save = NULL;
	int rc = 0;
	for (char *kv = strtok_r(buf, ",", &save); kv && !rc; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		if (!v)
			return uraid_errf(err, errlen, -EINVAL, "--drive: '%s' is not KEY=VALUE "
					  "(keys: read_iops, write_iops, read_mib_s, write_mib_s, "
					  "capacity, afr, ure, read_lat_us, write_lat_us, price, name)", kv);
		*v++ = 0;
		if (!strcmp(kv, "read_iops"))
			rc = num_in(kv, v, 1, MAX_IOPS, &rio, err, errlen);
		else if (!strcmp(kv, "write_iops"))
			rc = num_in(kv, v, 1, MAX_IOPS, &wio, err, errlen);
		else if (!strcmp(kv, "read_mib_s"))
			rc = num_in(kv, v, 0.001, MAX_MIB_S, &d->seq_read_mib_s, err, errlen);
		else if (!strcmp(kv, "write_mib_s"))
			rc = num_in(kv, v, 0.001, MAX_MIB_S, &d->seq_write_mib_s, err, errlen);
		else if (!strcmp(kv, "read_lat_us"))
			rc = num_in(kv, v, 0.01, MAX_LAT_US, &rlat, err, errlen);
		else if (!strcmp(kv, "write_lat_us"))
			rc = num_in(kv, v, 0.01, MAX_LAT_US, &wlat, err, errlen);
		else if (!strcmp(kv, "afr"))
			rc = num_in(kv, v, 0, 1, &d->afr, err, errlen);
		else if (!strcmp(kv, "ure"))
			rc = num_in(kv, v, 0, 1e-3, &d->ure, err, errlen);
		else if (!strcmp(kv, "price"))
			rc = num_in(kv, v, 0, 1e12, &d->price, err, errlen);
		else if (!strcmp(kv, "capacity"))
			rc = size_in(v, &d->capacity_bytes, err, errlen);
		else if (!strcmp(kv, "name"))
			snprintf(d->name, sizeof(d->name), "%s", v);
		else
			return uraid_errf(err, errlen, -EINVAL, "--drive: unknown key '%s' (keys: "
					  "read_iops, write_iops, read_mib_s, write_mib_s, capacity, "
					  "afr, ure, read_lat_us, write_lat_us, price, name)", kv);
	}
	if (rc)
		return rc;
	const char *miss = !rio ? "read_iops" : !wio ? "write_iops" : !d->seq_read_mib_s ?
		"read_mib_s" : !d->seq_write_mib_s ? "write_mib_s" : !d->capacity_bytes ?
		"capacity" : NULL;
	if (miss)
		return uraid_errf(err, errlen, -EINVAL, "--drive: %s is missing (needed: "
				  "read_iops, write_iops, read_mib_s, write_mib_s, capacity)", miss);
	sheet_curve(&d->rand_read, rio, rlat);
	sheet_curve(&d->rand_write, wio, wlat);
	return 0;
}

/* A number member of obj, checked to lie in [lo, hi]. */
static int json_num(const struct jr_doc *doc, int obj, const char *key, double lo, double hi,
		    double *out, const char *where, char *err, size_t errlen)
{
	int n = jr_get(doc, obj, key);
	if (n < 0 || doc->node[n].type != JR_NUMBER)
		return uraid_errf(err, errlen, -EINVAL, "drive model: %s: \"%s\" is missing or "
				  "not a number", where, key);
	double x = doc->node[n].num;
	if (!isfinite(x) || x < lo || x > hi)
		return uraid_errf(err, errlen, -EINVAL, "drive model: %s: \"%s\" is %g, not in "
				  "%g..%g", where, key, x, lo, hi);
	*out = x;
	return 0;
}

static int json_curve(const struct jr_doc *doc, int obj, const char *key,
		      struct plan_curve *c, char *err, size_t errlen)
{
	int arr = jr_get(doc, obj, key);
	if (arr < 0 || doc->node[arr].type != JR_ARRAY)
		return uraid_errf(err, errlen, -EINVAL, "drive model: \"%s\" is missing or not "
				  "a list", key);
	c->n = 0;
	for (int e = jr_first(doc, arr); e >= 0; e = jr_next(doc, e)) {
		if (c->n == PLAN_MAX_QD_POINTS)
			return uraid_errf(err, errlen, -EINVAL, "drive model: \"%s\" has more than "
					  "%u points", key, PLAN_MAX_QD_POINTS);
		struct plan_curve_pt *p = &c->pt[c->n];
		char where[64];
		snprintf(where, sizeof(where), "%s[%u]", key, c->n);
		int rc = json_num(doc, e, "qd", 1, 65536, &p->qd, where, err, errlen);
		if (!rc)
			rc = json_num(doc, e, "iops", 1e-3, MAX_IOPS, &p->iops, where, err, errlen);
		if (!rc)
			rc = json_num(doc, e, "mean_us", 1e-3, MAX_LAT_US, &p->mean_us, where, err,
				      errlen);
		if (rc)
			return rc;
		p->p99_us = 0;
		if (jr_get(doc, e, "p99_us") >= 0 &&
		    (rc = json_num(doc, e, "p99_us", 1e-3, MAX_LAT_US, &p->p99_us, where, err,
				   errlen)))
			return rc;
		if (c->n && p->qd <= c->pt[c->n - 1].qd)
			return uraid_errf(err, errlen, -EINVAL, "drive model: %s: queue depths must "
					  "rise (%g after %g)", where, p->qd, c->pt[c->n - 1].qd);
		c->n++;
	}
	if (!c->n)
		return uraid_errf(err, errlen, -EINVAL, "drive model: \"%s\" is empty", key);
	return 0;
}

/* The best MiB/s of a list of {bs, mib_s}. */
static int json_seq(const struct jr_doc *doc, int obj, const char *key, double *best,
		    char *err, size_t errlen)
{
	int arr = jr_get(doc, obj, key);
	if (arr < 0 || doc->node[arr].type != JR_ARRAY)
		return uraid_errf(err, errlen, -EINVAL, "drive model: \"%s\" is missing or not "
				  "a list", key);
	*best = 0;
	unsigned i = 0;
	for (int e = jr_first(doc, arr); e >= 0; e = jr_next(doc, e), i++) {
		char where[64];
		double bs, v;
		snprintf(where, sizeof(where), "%s[%u]", key, i);
		int rc = json_num(doc, e, "bs", 512, 1 << 30, &bs, where, err, errlen);
		if (!rc)
			rc = json_num(doc, e, "mib_s", 1e-3, MAX_MIB_S, &v, where, err, errlen);
		if (rc)
			return rc;
		if (v > *best)
			*best = v;
	}
	if (!*best)
		return uraid_errf(err, errlen, -EINVAL, "drive model: \"%s\" is empty", key);
	return 0;
}

/* afr or ure: a number, or null for "not known". */
static int json_opt(const struct jr_doc *doc, int obj, const char *key, double hi, double *out,
		    const char *where, char *err, size_t errlen)
{
	int n = jr_get(doc, obj, key);
	*out = -1;
	if (n < 0 || doc->node[n].type == JR_NULL)
		return 0;
	return json_num(doc, obj, key, 0, hi, out, where, err, errlen);
}

/* One drive model object (node obj); where names it in errors. */
static int json_model(const struct jr_doc *doc, int obj, const char *where, struct plan_drive *d,
		      char *err, size_t errlen)
{
	char sub[200];
	double cap = 0;
	int rc = 0;
	drive_defaults(d);
	d->measured = true;
	if (doc->node[obj].type != JR_OBJECT ||
	    jr_u64(doc, jr_get(doc, obj, "uraid_drive_model"), 0) != 1)
		rc = uraid_errf(sub, sizeof(sub), -EINVAL, "not a uraid drive model "
				"(\"uraid_drive_model\": 1 is missing)");
	if (!rc)
		rc = json_num(doc, obj, "capacity_bytes", 1 << 20, 1e18, &cap, "top level", sub,
			      sizeof(sub));
	if (!rc)
		rc = json_curve(doc, obj, "random_read_4k", &d->rand_read, sub, sizeof(sub));
	if (!rc)
		rc = json_curve(doc, obj, "random_write_4k", &d->rand_write, sub, sizeof(sub));
	if (!rc)
		rc = json_seq(doc, obj, "seq_read", &d->seq_read_mib_s, sub, sizeof(sub));
	if (!rc)
		rc = json_seq(doc, obj, "seq_write", &d->seq_write_mib_s, sub, sizeof(sub));
	if (!rc)
		rc = json_opt(doc, obj, "afr", 1, &d->afr, "top level", sub, sizeof(sub));
	if (!rc)
		rc = json_opt(doc, obj, "ure", 1e-3, &d->ure, "top level", sub, sizeof(sub));
	if (rc) {
		/* "drive model: X" from the helpers; an array names its element */
		const char *tail = strncmp(sub, "drive model: ", 13) ? sub : sub + 13;
		return uraid_errf(err, errlen, rc, "drive model%s: %s", where, tail);
	}
	d->capacity_bytes = (uint64_t)cap;
	snprintf(d->name, sizeof(d->name), "%s",
		 jr_str(doc, jr_get(doc, obj, "name"), "measured"));
	return 0;
}

int plan_drive_parse_json(const char *text, size_t len, struct plan_drive *out, unsigned max,
			  unsigned *nout, char *err, size_t errlen)
{
	struct jr_doc doc;
	*nout = 0;
	int rc = jr_parse(text, len, &doc, err, errlen);
	if (rc) {
		jr_free(&doc);
		return rc;
	}
	if (doc.node[0].type == JR_ARRAY) {
		/* bench --characterise of several devices: one model per device */
		for (int e = jr_first(&doc, 0); e >= 0 && !rc; e = jr_next(&doc, e)) {
			char where[32];
			snprintf(where, sizeof(where), " [%u]", *nout);
			if (*nout == max)
				rc = uraid_errf(err, errlen, -EINVAL, "drive model: more than %u "
						"drives in the list", max);
			else
				rc = json_model(&doc, e, where, &out[*nout], err, errlen);
			if (!rc)
				(*nout)++;
		}
		if (!rc && !*nout)
			rc = uraid_errf(err, errlen, -EINVAL, "drive model: an empty list");
	} else {
		rc = json_model(&doc, 0, "", &out[0], err, errlen);
		if (!rc)
			*nout = 1;
	}
	if (rc)
		*nout = 0;
	jr_free(&doc);
	return rc;
}

/* The keys a data sheet adds to a measured model (a measurement cannot give them). */
static int model_extras(char *s, struct plan_drive *d, unsigned n, char *err, size_t errlen)
{
	char *save = NULL;
	for (char *kv = strtok_r(s, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *v = strchr(kv, '=');
		double x = 0;
		int rc = 0;
		if (!v)
			return uraid_errf(err, errlen, -EINVAL, "--drive-model: '%s' is not "
					  "KEY=VALUE (keys: afr, ure, price, name)", kv);
		*v++ = 0;
		if (!strcmp(kv, "afr"))
			rc = num_in(kv, v, 0, 1, &x, err, errlen);
		else if (!strcmp(kv, "ure"))
			rc = num_in(kv, v, 0, 1e-3, &x, err, errlen);
		else if (!strcmp(kv, "price"))
			rc = num_in(kv, v, 0, 1e12, &x, err, errlen);
		else if (strcmp(kv, "name"))
			return uraid_errf(err, errlen, -EINVAL, "--drive-model: unknown key '%s' "
					  "(keys after the file: afr, ure, price, name)", kv);
		if (rc)
			return rc;
		for (unsigned i = 0; i < n; i++) {
			if (!strcmp(kv, "afr"))
				d[i].afr = x;
			else if (!strcmp(kv, "ure"))
				d[i].ure = x;
			else if (!strcmp(kv, "price"))
				d[i].price = x;
			else
				snprintf(d[i].name, sizeof(d[i].name), "%s", v);
		}
	}
	return 0;
}

/* Where the file name of "FILE,afr=..." ends: at the first ",KEY=" of a known key. */
static size_t model_path_len(const char *spec)
{
	static const char *const keys[] = { "afr=", "ure=", "price=", "name=" };
	for (const char *c = strchr(spec, ','); c; c = strchr(c + 1, ','))
		for (unsigned k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (!strncmp(c + 1, keys[k], strlen(keys[k])))
				return (size_t)(c - spec);
	return strlen(spec);
}

int plan_drive_load_spec(const char *spec, struct plan_drive *out, unsigned max,
			 unsigned *nout, char *err, size_t errlen)
{
	char path[4096], extras[512];
	size_t plen = model_path_len(spec);
	*nout = 0;
	if (plen >= sizeof(path) || strlen(spec + plen) >= sizeof(extras))
		return uraid_errf(err, errlen, -EINVAL, "--drive-model: too long");
	memcpy(path, spec, plen);
	path[plen] = 0;
	snprintf(extras, sizeof(extras), "%s", spec[plen] ? spec + plen + 1 : "");
	unsigned n = 0;
	int rc = plan_drive_load(path, out, max, &n, err, errlen);
	if (!rc)
		rc = model_extras(extras, out, n, err, errlen);
	if (!rc)
		*nout = n;
	return rc;
}

int plan_drive_load(const char *path, struct plan_drive *d, unsigned max, unsigned *nout,
		    char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return uraid_errf(err, errlen, -errno, "%s: %s", path, strerror(errno));
	char *buf = malloc(MAX_DRIVE_JSON + 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	ssize_t n = 0, got = 0;
	while (n <= (ssize_t)MAX_DRIVE_JSON &&
	       (got = read(fd, buf + n, MAX_DRIVE_JSON + 1 - (size_t)n)) > 0)
		n += got;
	int rc = got < 0 ? -errno : 0;
	close(fd);
	if (rc)
		rc = uraid_errf(err, errlen, rc, "%s: %s", path, strerror(-rc));
	else if (n > (ssize_t)MAX_DRIVE_JSON)
		rc = uraid_errf(err, errlen, -E2BIG, "%s: larger than a drive model can be "
				"(1 MiB)", path);
	else {
		char sub[200];
		rc = plan_drive_parse_json(buf, (size_t)n, d, max, nout, sub, sizeof(sub));
		if (rc)
			uraid_errf(err, errlen, rc, "%s: %s", path, sub);
	}
	free(buf);
	return rc;
}
