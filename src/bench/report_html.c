// SPDX-License-Identifier: MIT
/*
 * The report as one HTML file: inline CSS, inline SVG, no script and no
 * external reference (no fonts, images or links to fetch), so it opens the
 * same offline, in a mail attachment or years later.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/report_int.h"
#include "common/errmsg.h"

static const char CSS[] =
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:#f3f4f6;color:#1d1d1f;"
	"font:14px/1.45 'DejaVu Sans',Verdana,Arial,sans-serif}\n"
	"main{max-width:1480px;margin:0 auto;padding:20px 20px 48px}\n"
	"header h1{font-size:25px;margin:0 0 2px}\n"
	"header p{color:#666;margin:0}\n"
	/* cards in a grid that fills the width: two columns on a desktop, one on a phone */
	".top{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,440px),1fr));"
	"gap:16px;margin:18px 0 6px;align-items:start}\n"
	".card{background:#fff;border:1px solid #dfe2e6;border-radius:6px;padding:12px 18px}\n"
	".card h2{font-size:15px;border:0;margin:0 0 8px;padding:0;color:#444}\n"
	"table.info{border-collapse:collapse}\n"
	"table.info th{text-align:left;color:#666;font-weight:normal;padding:2px 18px 2px 0;"
	"vertical-align:top;white-space:nowrap}\n"
	"table.info td{padding:2px 0;overflow-wrap:anywhere}\n"
	".figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(180px,1fr));gap:10px}\n"
	".fig{border-left:3px solid #4e79a7;padding:2px 10px}\n"
	".fig .v{font-size:21px;font-weight:bold;color:#1f3f66;white-space:nowrap}\n"
	".fig .l{color:#666;font-size:12.5px}\n"
	"nav{margin:14px 0 0;color:#666;font-size:13px}\n"
	"nav a{color:#2b5b8f;text-decoration:none;margin-right:14px;white-space:nowrap}\n"
	"h2{font-size:19px;margin:32px 0 12px;padding-bottom:5px;border-bottom:2px solid #d5dae1}\n"
	".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,520px),1fr));"
	"gap:16px;align-items:start}\n"
	"figure{margin:0;background:#fff;border:1px solid #dfe2e6;border-radius:6px;padding:4px;"
	"min-width:0}\n"
	"figure svg{display:block;width:100%;max-width:760px;height:auto;margin:0 auto}\n"
	"figcaption{color:#555;font-size:12.5px;padding:2px 12px 8px}\n"
	".tables{display:flex;flex-wrap:wrap;gap:0 28px;align-items:flex-start}\n"
	".table{margin:18px 0;max-width:100%;overflow-x:auto}\n"
	".table h3{font-size:15px;margin:0 0 8px}\n"
	"table.data{border-collapse:collapse;background:#fff;border:1px solid #dfe2e6;"
	"font-variant-numeric:tabular-nums}\n"
	"table.data th,table.data td{padding:5px 14px;border-bottom:1px solid #eceef1;"
	"text-align:right;white-space:nowrap}\n"
	"table.data th:first-child,table.data td:first-child{text-align:left}\n"
	"table.kv td,table.kv th{text-align:left;white-space:normal}\n"
	"table.data thead th{background:#eef1f5;border-bottom:2px solid #cfd6df}\n"
	"table.data tbody tr:nth-child(even){background:#fafbfc}\n"
	"footer{margin-top:36px;color:#888;font-size:12px}\n"
	"@media print{body{background:#fff}figure,.card{break-inside:avoid;border-color:#ccc}}\n";

static void text_el(struct svg_out *o, const char *open, const char *s, const char *close)
{
	svg_puts(o, open);
	svg_escape(o, s);
	svg_puts(o, close);
}

static void head(struct svg_out *o, const struct bench_report *r)
{
	svg_puts(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
	text_el(o, "<title>", r->title, "</title>\n");
	svg_printf(o, "<style>\n%s</style>\n</head>\n<body>\n<main>\n", CSS);
	text_el(o, "<header>\n<h1>", r->title, "</h1>\n");
	svg_puts(o, "<p>uraid bench report</p>\n</header>\n");
}

static void top(struct svg_out *o, const struct bench_report *r)
{
	if (!r->info && !r->figs)
		return;
	svg_puts(o, "<div class=\"top\">\n");
	if (r->info) {
		svg_puts(o, "<section class=\"card run\">\n<h2>Run</h2>\n<table class=\"info\">\n");
		for (const struct br_pair *p = r->info; p; p = p->next) {
			text_el(o, "<tr><th>", p->key, "</th>");
			text_el(o, "<td>", p->value, "</td></tr>\n");
		}
		svg_puts(o, "</table>\n</section>\n");
	}
	if (r->figs) {
		svg_puts(o, "<section class=\"card figures\">\n<h2>Key figures</h2>\n"
			 "<div class=\"figs\">\n");
		for (const struct br_pair *p = r->figs; p; p = p->next) {
			text_el(o, "<div class=\"fig\"><div class=\"v\">", p->value, "</div>");
			text_el(o, "<div class=\"l\">", p->key, "</div></div>\n");
		}
		svg_puts(o, "</div>\n</section>\n");
	}
	svg_puts(o, "</div>\n");
}

/* Links to the headings: in-page anchors only. */
static void contents(struct svg_out *o, const struct bench_report *r)
{
	unsigned n = 0, k = 0;

	for (const struct br_section *s = r->sections; s; s = s->next)
		n += s->kind == BR_HEADING;
	if (n < 2)
		return;
	svg_puts(o, "<nav>Contents: ");
	for (const struct br_section *s = r->sections; s; s = s->next, k++)
		if (s->kind == BR_HEADING) {
			svg_printf(o, "<a href=\"#s%u\">", k);
			text_el(o, "", s->text, "</a>");
		}
	svg_puts(o, "</nav>\n");
}

static void table(struct svg_out *o, const struct br_section *s)
{
	svg_puts(o, "<section class=\"table\">\n");
	if (s->text && *s->text)
		text_el(o, "<h3>", s->text, "</h3>\n");
	/* two columns are settings and their values, read left to right */
	svg_puts(o, s->ncols == 2 ? "<table class=\"data kv\">\n<thead><tr>"
		 : "<table class=\"data\">\n<thead><tr>");
	for (size_t c = 0; c < s->ncols; c++)
		text_el(o, "<th>", s->header[c], "</th>");
	svg_puts(o, "</tr></thead>\n<tbody>\n");
	for (const struct br_row *row = s->rows; row; row = row->next) {
		svg_puts(o, "<tr>");
		for (size_t c = 0; c < s->ncols; c++)
			text_el(o, "<td>", row->cells[c], "</td>");
		svg_puts(o, "</tr>\n");
	}
	svg_puts(o, "</tbody>\n</table>\n</section>\n");
}

int bench_report_write(const struct bench_report *r, struct svg_out *o, char *err, size_t errlen)
{
	bool in_charts = false, in_tables = false;
	unsigned k = 0;
	int rc;

	head(o, r);
	top(o, r);
	contents(o, r);
	for (const struct br_section *s = r->sections; s; s = s->next, k++) {
		/* consecutive charts share one flowing block: two side by side on wide screens */
		if (in_charts && s->kind != BR_CHART) {
			svg_puts(o, "</div>\n");
			in_charts = false;
		}
		/* consecutive tables too: side by side when they fit */
		if (in_tables && s->kind != BR_TABLE) {
			svg_puts(o, "</div>\n");
			in_tables = false;
		}
		switch (s->kind) {
		case BR_HEADING:
			svg_printf(o, "<h2 id=\"s%u\">", k);
			text_el(o, "", s->text, "</h2>\n");
			break;
		case BR_TABLE:
			if (!in_tables)
				svg_puts(o, "<div class=\"tables\">\n");
			in_tables = true;
			table(o, s);
			break;
		case BR_CHART:
			if (!in_charts)
				svg_puts(o, "<div class=\"charts\">\n");
			in_charts = true;
			svg_printf(o, "<figure id=\"s%u\">\n", k);
			rc = svg_chart_write(o, &s->chart, err, errlen);
			if (rc)
				return rc;
			if (s->text)
				text_el(o, "<figcaption>", s->text, "</figcaption>\n");
			svg_puts(o, "</figure>\n");
			break;
		}
	}
	if (in_charts || in_tables)
		svg_puts(o, "</div>\n");
	svg_puts(o, "<footer>Written by uraid bench. Charts are inline SVG; hover a point for "
		 "its value.</footer>\n</main>\n</body>\n</html>\n");
	if (o->err)
		return uraid_errf(err, errlen, o->err, "report: %s", strerror(-o->err));
	return 0;
}

int bench_report_write_html(const struct bench_report *r, const char *path, char *err,
			    size_t errlen)
{
	struct svg_out o;
	char *tmp;
	FILE *f;
	int rc;

	/* write beside the target and rename: a reader never sees half a report */
	if (asprintf(&tmp, "%s.tmp%ld", path, (long)getpid()) < 0)
		return uraid_errf(err, errlen, -ENOMEM, "report: %s: out of memory", path);
	f = fopen(tmp, "w");
	if (!f) {
		rc = -errno;
		free(tmp);
		return uraid_errf(err, errlen, rc, "report: %s: %s", path, strerror(-rc));
	}
	svg_out_file(&o, f);
	rc = bench_report_write(r, &o, err, errlen);
	if (o.err)      /* a write failed: say where, not only what */
		rc = uraid_errf(err, errlen, o.err, "report: %s: %s", path, strerror(-o.err));
	if (fclose(f) && !rc)
		rc = uraid_errf(err, errlen, -errno, "report: %s: %s", path, strerror(errno));
	if (!rc && rename(tmp, path))
		rc = uraid_errf(err, errlen, -errno, "report: %s: %s", path, strerror(errno));
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}
