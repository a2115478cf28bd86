// SPDX-License-Identifier: MIT
/*
 * The report model: run description, key figures and sections, all copied
 * into chunks owned by the report (one free releases everything, and the
 * total is bounded so that a runaway caller gets -E2BIG, not an OOM).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report_int.h"
#include "common/errmsg.h"

#define CHUNK_SIZE (64u << 10)

static void *br_alloc(struct bench_report *r, size_t n)
{
	struct br_chunk *c = r->chunks;
	size_t a = sizeof(max_align_t);
	void *p;

	n = (n + a - 1) / a * a;
	if (!n)
		n = a;
	if (!c || c->size - c->used < n) {
		size_t size = n > CHUNK_SIZE / 2 ? n : CHUNK_SIZE;

		if (r->bytes + size + sizeof(*c) > BENCH_REPORT_MAX_BYTES) {
			r->over = true;
			return NULL;
		}
		c = malloc(sizeof(*c) + size);
		if (!c)
			return NULL;
		c->size = size;
		c->used = 0;
		r->bytes += size + sizeof(*c);
		/* a big allocation gets its own chunk behind the current one, which keeps its room */
		if (size > CHUNK_SIZE && r->chunks) {
			c->next = r->chunks->next;
			r->chunks->next = c;
		} else {
			c->next = r->chunks;
			r->chunks = c;
		}
	}
	p = (char *)c->data + c->used;
	c->used += n;
	memset(p, 0, n);
	return p;
}

static const char *br_strdup(struct bench_report *r, const char *s)
{
	size_t n;
	char *p;

	if (!s)
		return NULL;
	n = strlen(s) + 1;
	p = br_alloc(r, n);
	if (p)
		memcpy(p, s, n);
	return p;
}

static void *br_memdup(struct bench_report *r, const void *src, size_t n)
{
	void *p = br_alloc(r, n);

	if (p && n)
		memcpy(p, src, n);
	return p;
}

static int nomem(const struct bench_report *r, char *err, size_t errlen, const char *what)
{
	if (r->over)
		return uraid_errf(err, errlen, -E2BIG, "report: %s: past the %u MiB bound",
				  what, BENCH_REPORT_MAX_BYTES >> 20);
	return uraid_errf(err, errlen, -ENOMEM, "report: %s: out of memory", what);
}

int bench_report_new(struct bench_report **rp, const char *title, char *err, size_t errlen)
{
	struct bench_report *r = calloc(1, sizeof(*r));

	*rp = NULL;
	if (!r)
		return uraid_errf(err, errlen, -ENOMEM, "report: out of memory");
	r->title = br_strdup(r, title ? title : "uraid bench");
	if (!r->title) {
		bench_report_free(r);
		return uraid_errf(err, errlen, -ENOMEM, "report: out of memory");
	}
	*rp = r;
	return 0;
}

void bench_report_free(struct bench_report *r)
{
	if (!r)
		return;
	while (r->chunks) {
		struct br_chunk *c = r->chunks;

		r->chunks = c->next;
		free(c);
	}
	free(r);
}

static int add_pair(struct bench_report *r, struct br_pair **head, struct br_pair **tail,
		    const char *key, const char *value, char *err, size_t errlen)
{
	struct br_pair *p = br_alloc(r, sizeof(*p));

	if (!p || !(p->key = br_strdup(r, key ? key : "")) ||
	    !(p->value = br_strdup(r, value ? value : "")))
		return nomem(r, err, errlen, key ? key : "");
	if (*tail)
		(*tail)->next = p;
	else
		*head = p;
	*tail = p;
	return 0;
}

int bench_report_add_info(struct bench_report *r, const char *key, const char *value,
			  char *err, size_t errlen)
{
	return add_pair(r, &r->info, &r->info_last, key, value, err, errlen);
}

int bench_report_add_figure(struct bench_report *r, const char *label, double value,
			    enum svg_unit unit, const char *suffix, char *err, size_t errlen)
{
	char num[48], text[128];

	svg_format(num, sizeof(num), unit, value, 0);
	snprintf(text, sizeof(text), "%s%s%s", num, suffix ? " " : "", suffix ? suffix : "");
	return add_pair(r, &r->figs, &r->figs_last, label, text, err, errlen);
}

static int new_section(struct bench_report *r, enum br_kind kind, const char *text,
		       struct br_section **sp, char *err, size_t errlen)
{
	struct br_section *s = NULL;

	if (r->nsections >= BENCH_REPORT_MAX_SECTIONS)
		return uraid_errf(err, errlen, -E2BIG, "report: \"%s\": more than %u sections",
				  text ? text : "", BENCH_REPORT_MAX_SECTIONS);
	s = br_alloc(r, sizeof(*s));
	if (!s || (text && !(s->text = br_strdup(r, text))))
		return nomem(r, err, errlen, text ? text : "section");
	s->kind = kind;
	*sp = s;
	return 0;
}

/* Sections are linked only once complete, so a failed add leaves the report as it was. */
static void link_section(struct bench_report *r, struct br_section *s)
{
	if (r->last)
		r->last->next = s;
	else
		r->sections = s;
	r->last = s;
	r->nsections++;
}

int bench_report_add_heading(struct bench_report *r, const char *text, char *err, size_t errlen)
{
	struct br_section *s = NULL;
	int rc = new_section(r, BR_HEADING, text ? text : "", &s, err, errlen);

	if (rc)
		return rc;
	link_section(r, s);
	return 0;
}

static const char **dup_strings(struct bench_report *r, const char *const *v, size_t n)
{
	const char **p = br_alloc(r, n * sizeof(*p));

	for (size_t i = 0; p && i < n; i++)
		if (!(p[i] = br_strdup(r, v[i] ? v[i] : "")))
			return NULL;
	return p;
}

static int copy_chart(struct bench_report *r, struct svg_chart *d, const struct svg_chart *c)
{
	struct svg_series *ser;

	*d = *c;
	if ((c->title && !(d->title = br_strdup(r, c->title))) ||
	    (c->subtitle && !(d->subtitle = br_strdup(r, c->subtitle))) ||
	    (c->x.label && !(d->x.label = br_strdup(r, c->x.label))) ||
	    (c->y.label && !(d->y.label = br_strdup(r, c->y.label))))
		return -ENOMEM;
	if (c->ncat && !(d->cat = dup_strings(r, c->cat, c->ncat)))
		return -ENOMEM;
	if (c->nmarks) {
		struct svg_mark *mk = br_alloc(r, c->nmarks * sizeof(*mk));

		if (!mk)
			return -ENOMEM;
		for (size_t i = 0; i < c->nmarks; i++) {
			mk[i].x = c->marks[i].x;
			if (!(mk[i].label = br_strdup(r, c->marks[i].label ? c->marks[i].label : "")) ||
			    (c->marks[i].group && !(mk[i].group = br_strdup(r, c->marks[i].group))))
				return -ENOMEM;
			if (!c->marks[i].group)
				mk[i].group = NULL;
		}
		d->marks = mk;
	}
	ser = br_alloc(r, c->nseries * sizeof(*ser));
	if (!ser)
		return -ENOMEM;
	for (size_t i = 0; i < c->nseries; i++) {
		const struct svg_series *s = &c->series[i];

		ser[i] = *s;
		if (!(ser[i].name = br_strdup(r, s->name)) ||
		    (s->x && !(ser[i].x = br_memdup(r, s->x, s->n * sizeof(double)))) ||
		    (s->y && !(ser[i].y = br_memdup(r, s->y, s->n * sizeof(double)))))
			return -ENOMEM;
	}
	d->series = ser;
	return 0;
}

int bench_report_add_chart(struct bench_report *r, const struct svg_chart *c, const char *note,
			   char *err, size_t errlen)
{
	struct br_section *s = NULL;
	/* refuse a malformed chart now, where the caller knows which, not at writing time */
	int rc = svg_chart_check(c, err, errlen);

	if (rc || (rc = new_section(r, BR_CHART, note, &s, err, errlen)))
		return rc;
	if (copy_chart(r, &s->chart, c))
		return nomem(r, err, errlen, c->title ? c->title : "chart");
	link_section(r, s);
	return 0;
}

int bench_report_add_table(struct bench_report *r, const char *title, size_t ncols,
			   const char *const *header, char *err, size_t errlen)
{
	struct br_section *s = NULL;
	int rc;

	if (!ncols || ncols > 64 || !header)
		return uraid_errf(err, errlen, -EINVAL, "report: table \"%s\": %zu columns",
				  title ? title : "", ncols);
	rc = new_section(r, BR_TABLE, title, &s, err, errlen);
	if (rc)
		return rc;
	s->ncols = ncols;
	if (!(s->header = dup_strings(r, header, ncols)))
		return nomem(r, err, errlen, title ? title : "table");
	link_section(r, s);
	return 0;
}

int bench_report_add_row(struct bench_report *r, const char *const *cells, char *err,
			 size_t errlen)
{
	struct br_section *t = r->last;
	struct br_row *row;

	if (!t || t->kind != BR_TABLE || !cells)
		return uraid_errf(err, errlen, -EINVAL, "report: a row without a table before it");
	row = br_alloc(r, sizeof(*row));
	if (!row || !(row->cells = dup_strings(r, cells, t->ncols)))
		return nomem(r, err, errlen, t->text ? t->text : "table row");
	if (t->last_row)
		t->last_row->next = row;
	else
		t->rows = row;
	t->last_row = row;
	t->nrows++;
	return 0;
}
