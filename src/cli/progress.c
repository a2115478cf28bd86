// SPDX-License-Identifier: MIT
/* The progress line of the --wait commands (see progress.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <uraid/engine.h>

#include "cli/progress.h"
#include "common/clock.h"

void progress_begin(struct progress *p, FILE *f)
{
	const char *term = getenv("TERM");

	memset(p, 0, sizeof(*p));
	if (isatty(fileno(f)) && !(term && !strcmp(term, "dumb")))
		p->f = f;
}

void progress_text(char *buf, size_t len, const struct progress_sample *s, bool rate_ok,
		   double rate)
{
	double pct = s->total ? 100.0 * (double)s->done / (double)s->total : 0;
	char eta[32];
	int n = snprintf(buf, len, "%s %5.1f%% (%llu/%llu MiB %s)",
			 uraid_sync_kind_name((enum uraid_sync_kind)s->kind), pct,
			 (unsigned long long)(s->done >> 20), (unsigned long long)(s->total >> 20),
			 s->of_array ? "of the array" : "per member");
	if (rate_ok && n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " %.1f MiB/s, ETA %s", rate / (1024.0 * 1024.0),
			 rate_eta_text(rate_eta_s(s->done, s->total, rate), eta, sizeof(eta)));
}

void progress_show(struct progress *p, const struct progress_sample *s)
{
	char line[256];
	double rate = 0;
	struct winsize ws = { 0 };

	if (!p->f || !s->running)
		return;
	rate_window_add(&p->rate, s->job * 16 + (uint64_t)s->kind, uraid_now_ns(), s->done);
	bool ok = rate_window_rate(&p->rate, &rate);
	progress_text(line, sizeof(line), s, ok, rate);
	/* a line longer than the terminal would wrap, and "\r" would no longer
	   go back to its start */
	size_t cols = ioctl(fileno(p->f), TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
	if (strlen(line) >= cols)
		line[cols - 1] = 0;
	fprintf(p->f, "\r%s\033[K", line);
	fflush(p->f);
	p->drawn = true;
}

void progress_end(struct progress *p)
{
	if (!p->drawn)
		return;
	fputs("\r\033[K", p->f);
	fflush(p->f);
	p->drawn = false;
}
