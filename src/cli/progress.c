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

bool progress_terminal(int fd)
{
	const char *term = getenv("TERM");
	return isatty(fd) && !(term && !strcmp(term, "dumb"));
}

void progress_begin(struct progress *p, FILE *f)
{
	memset(p, 0, sizeof(*p));
	if (progress_terminal(fileno(f)))
		p->f = f;
}

void progress_format(char *buf, size_t len, const char *kind, uint64_t done, uint64_t total,
		     bool of_array, bool bar, bool rate_ok, double rate)
{
	double pct = total ? 100.0 * (double)done / (double)total : 0;
	char eta[32], bar_text[24] = "";
	size_t n = 0;

	if (done > total)
		done = total;
	if (bar) {
		unsigned fill = (unsigned)(pct / 5);
		bar_text[0] = '[';
		for (unsigned i = 0; i < 20; i++)
			bar_text[1 + i] = i < fill ? '=' : i == fill ? '>' : '.';
		bar_text[21] = ']';
		bar_text[22] = ' ';
		bar_text[23] = 0;
	}
	/* what matters most first: a narrow terminal cuts the counts, not the ETA */
	int r = snprintf(buf, len, "%s %s%5.1f%% ", kind, bar_text, pct);
	if (r > 0)
		n = (size_t)r < len ? (size_t)r : len;
	if (n < len) {
		if (rate_ok)
			r = snprintf(buf + n, len - n, "%.1f MiB/s, ETA %s",
				     rate / (1024.0 * 1024.0),
				     rate_eta_text(rate_eta_s(done, total, rate), eta,
						   sizeof(eta)));
		else
			r = snprintf(buf + n, len - n, "rate not measured yet");
		if (r > 0)
			n += (size_t)r < len - n ? (size_t)r : len - n;
	}
	if (n < len)
		snprintf(buf + n, len - n, " (%llu/%llu MiB %s)",
			 (unsigned long long)(done >> 20), (unsigned long long)(total >> 20),
			 of_array ? "of the array" : "per member");
}

void progress_text(char *buf, size_t len, const struct progress_sample *s, bool rate_ok,
		   double rate)
{
	progress_format(buf, len, uraid_sync_kind_name((enum uraid_sync_kind)s->kind), s->done,
			s->total, s->of_array, false, rate_ok, rate);
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
