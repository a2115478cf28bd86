// SPDX-License-Identifier: MIT
/*
 * Every served array's metrics in one text (metrics_all.h). Prometheus
 * wants all samples of a family together, after its one HELP and TYPE:
 * the answers are split into families (a sample belongs to the family of
 * the HELP or TYPE line before it, so a histogram's _bucket, _sum and
 * _count stay with it) and written family by family, in the order the
 * families were first seen.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/metrics_all.h"
#include "common/clock.h"
#include "ctl/ctl.h"

/*
 * A scrape must not wait on one busy server (a status waits for its
 * metadata lock) nor hang on one that stopped answering: servers are asked
 * one after another, each within METRICS_ALL_SERVER_MS and all within
 * METRICS_ALL_TOTAL_MS; those that miss it are left out of this scrape.
 * An answer longer than METRICS_ALL_MAX_ANSWER is left out too.
 */
#define METRICS_ALL_TOTAL_MS    2000u
#define METRICS_ALL_SERVER_MS   1000u
#define METRICS_ALL_MAX_ANSWER  (4u << 20)

struct family {
	char *name, *help, *type;       /* the lines, without their newline; NULL: none */
	char *samples;
	size_t samples_len;
	FILE *f;                        /* into samples */
};

struct merge {
	struct family *fam;
	unsigned n, cap;
	bool oom;
};

static struct family *family_of(struct merge *m, const char *name, size_t len)
{
	for (unsigned i = 0; i < m->n; i++)
		if (strlen(m->fam[i].name) == len && !memcmp(m->fam[i].name, name, len))
			return &m->fam[i];
	if (m->n == m->cap) {
		unsigned cap = m->cap ? 2 * m->cap : 64;
		struct family *f = realloc(m->fam, cap * sizeof(*f));
		if (!f)
			return NULL;
		m->fam = f;
		m->cap = cap;
	}
	struct family *f = &m->fam[m->n];
	memset(f, 0, sizeof(*f));
	f->name = strndup(name, len);
	f->f = open_memstream(&f->samples, &f->samples_len);
	if (!f->name || !f->f) {
		if (f->f)
			fclose(f->f);
		free(f->samples);
		free(f->name);
		return NULL;
	}
	m->n++;
	return f;
}

/* "# HELP name ..." or "# TYPE name ...": its family, the line kept once. */
static struct family *comment(struct merge *m, const char *line, size_t len, bool help)
{
	const char *name = line + 7;
	size_t nl = strcspn(name, " \n");
	if (nl == 0 || name + nl > line + len)
		return NULL;
	struct family *f = family_of(m, name, nl);
	if (!f) {
		m->oom = true;
		return NULL;
	}
	char **keep = help ? &f->help : &f->type;
	if (!*keep && !(*keep = strndup(line, len)))
		m->oom = true;
	return f;
}

static void split(struct merge *m, const char *text)
{
	struct family *cur = NULL;

	for (const char *p = text; *p;) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len > 7 && (!strncmp(p, "# HELP ", 7) || !strncmp(p, "# TYPE ", 7))) {
			cur = comment(m, p, len, p[2] == 'H');
		} else if (len && p[0] != '#') {
			if (!cur) {
				/* a sample without HELP or TYPE: a family of its own name */
				size_t nl = strcspn(p, "{ \n");
				cur = family_of(m, p, nl < len ? nl : len);
				if (!cur)
					m->oom = true;
			}
			if (cur) {
				fwrite(p, 1, len, cur->f);
				fputc('\n', cur->f);
			}
		}
		p = e ? e + 1 : p + len;
	}
}

int metrics_merge(FILE *out, const char *const *texts, unsigned n)
{
	struct merge m = { 0 };

	for (unsigned i = 0; i < n; i++)
		split(&m, texts[i]);
	for (unsigned i = 0; i < m.n; i++) {
		struct family *f = &m.fam[i];
		if (fclose(f->f) != 0)
			m.oom = true;
		if (f->help)
			fprintf(out, "%s\n", f->help);
		if (f->type)
			fprintf(out, "%s\n", f->type);
		if (f->samples)
			fwrite(f->samples, 1, f->samples_len, out);
		free(f->name);
		free(f->help);
		free(f->type);
		free(f->samples);
	}
	free(m.fam);
	return m.oom || ferror(out) ? -ENOMEM : 0;
}

struct gather {
	char **texts;
	unsigned n, cap;
	uint64_t deadline_ns;           /* of the whole scrape */
};

/* One server: its `metrics` answer kept, when it gives one. */
static int ask(const char *ctl_path, void *arg)
{
	struct gather *g = arg;
	static const char *const fields[] = { "metrics" };
	char *text = NULL, msg[256];
	size_t len = 0;
	uint64_t now = uraid_now_ns(), deadline = now + METRICS_ALL_SERVER_MS * 1000000ull;
	if (now >= g->deadline_ns)
		return -ETIMEDOUT;      /* the scrape's time is up: left out */
	if (deadline > g->deadline_ns)
		deadline = g->deadline_ns;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return -ENOMEM;
	int rc = ctl_call_limited(ctl_path, fields, 1, f, deadline, METRICS_ALL_MAX_ANSWER, msg,
				  sizeof(msg));
	if (fclose(f) != 0 && rc == 0)
		rc = -ENOMEM;
	if (rc == 0 && g->n == g->cap) {
		unsigned cap = g->cap ? 2 * g->cap : 16;
		char **t = realloc(g->texts, cap * sizeof(*t));
		if (t) {
			g->texts = t;
			g->cap = cap;
		} else {
			rc = -ENOMEM;
		}
	}
	if (rc != 0) {
		/* gone (the registry drops it), busy, late, too long an answer, or
		   too old to know the verb */
		free(text);
		return rc < 0 ? rc : -EPROTO;
	}
	g->texts[g->n++] = text;
	return 0;
}

int metrics_all_write(FILE *out, char *err, size_t errlen)
{
	struct gather g = { .deadline_ns = uraid_now_ns() + METRICS_ALL_TOTAL_MS * 1000000ull };
	int rc = ctl_for_each(ask, &g, err, errlen);

	if (rc >= 0) {
		rc = metrics_merge(out, (const char *const *)g.texts, g.n);
		fprintf(out, "# HELP uraid_served_arrays Arrays served on this machine that "
			"answered.\n# TYPE uraid_served_arrays gauge\nuraid_served_arrays %u\n", g.n);
		if (rc == 0)
			rc = (int)g.n;
		else
			snprintf(err, errlen, "out of memory");
	}
	for (unsigned i = 0; i < g.n; i++)
		free(g.texts[i]);
	free(g.texts);
	return rc;
}

int metrics_all_body(void *arg, FILE *out)
{
	char err[512];
	int rc = metrics_all_write(out, err, sizeof(err));
	return rc < 0 ? rc : 0;
}
