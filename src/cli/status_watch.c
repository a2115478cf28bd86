// SPDX-License-Identifier: MIT
/*
 * `uraid status --watch` (see status_watch.h): poll, draw, wait, again.
 * The rates of a view are the differences of the members' counters between
 * this poll and the one before, over the time measured between the two
 * answers (common/rate.h); the first view has none yet.
 */
#include <errno.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/status_watch.h"
#include "cli/util.h"
#include "cli/watch_snap.h"
#include "common/clock.h"
#include "common/rate.h"
#include "ctl/ctl.h"

#define MIB (1024.0 * 1024.0)

/* ---- options ---- */

static int bad(const char *what)
{
	fprintf(stderr, "uraid status: %s; run 'uraid status --help'\n", what);
	return CLI_EXIT_USAGE;
}

static int parse_seconds(const char *s, unsigned *ms)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0.1 && v <= 86400))
		return -EINVAL;
	*ms = (unsigned)lround(v * 1000);
	return 0;
}

int status_watch_opts(int *argc, char **argv, struct status_watch_opts *wo)
{
	int out = 1;
	bool ended = false, counted = false;
	char msg[256];

	memset(wo, 0, sizeof(*wo));
	for (int i = 1; i < *argc; i++) {
		const char *a = argv[i];
		const char *count = NULL;
		if (ended || a[0] != '-') {
			argv[out++] = argv[i];
			continue;
		}
		if (!strcmp(a, "--")) {
			ended = true;
		} else if ((!strcmp(a, "-c") || !strcmp(a, "--control")) && i + 1 < *argc) {
			argv[out++] = argv[i++];        /* its argument is not an option */
		} else if (!strcmp(a, "--watch")) {
			unsigned ms;
			/* "--watch 5" would watch an array called 5: say how it is meant */
			if (i + 1 < *argc && !parse_seconds(argv[i + 1], &ms)) {
				snprintf(msg, sizeof(msg), "--watch %s: give the seconds as "
					 "--watch=%s (an array named so goes first: uraid status "
					 "%s --watch)", argv[i + 1], argv[i + 1], argv[i + 1]);
				return bad(msg);
			}
			wo->interval_ms = STATUS_WATCH_DEFAULT_MS;
			continue;
		} else if (!strncmp(a, "--watch=", 8)) {
			if (parse_seconds(a + 8, &wo->interval_ms)) {
				snprintf(msg, sizeof(msg), "%s: want the seconds between refreshes, "
					 "0.1 to 86400 (default 2)", a);
				return bad(msg);
			}
			continue;
		} else if (!strncmp(a, "--count=", 8)) {
			count = a + 8;
		} else if (!strcmp(a, "--count")) {
			if (i + 1 >= *argc)
				return bad("--count: how many refreshes?");
			count = argv[++i];
		}
		if (count) {
			char *end;
			errno = 0;
			wo->count = strtoul(count, &end, 10);
			if (errno || end == count || *end || count[0] == '-' || !wo->count) {
				snprintf(msg, sizeof(msg), "--count=%s: want a whole number of "
					 "refreshes, 1 or more", count);
				return bad(msg);
			}
			counted = true;
			continue;
		}
		argv[out++] = argv[i];
	}
	argv[out] = NULL;
	*argc = out;
	if (counted && !wo->interval_ms)
		return bad("--count goes with --watch");
	return -1;
}

/* ---- the view ---- */

struct watch {
	const struct status_watch_opts *o;
	const char *ctl;                /* the one array watched; NULL: every served one */
	bool tty;
	unsigned long frames;           /* drawn so far */
	struct watch_snap *prev, *cur;  /* the polls before and now, sorted by name */
	unsigned nprev, ncur, capprev, capcur;
	char *text;                     /* the frame being built */
	size_t text_len;
};

static const struct watch_snap *find_prev(const struct watch *w, const char *ctl)
{
	for (unsigned i = 0; i < w->nprev; i++)
		if (!strcmp(w->prev[i].ctl, ctl))
			return &w->prev[i];
	return NULL;
}

static void put_rate(FILE *f, const char *fmt, bool ok, double v)
{
	if (ok)
		fprintf(f, fmt, v);
	else
		fprintf(f, "%9s", "-");
}

static void draw_member(FILE *f, const struct watch_member *m, const struct watch_member *pm,
			uint64_t dt_ns)
{
	double r = 0, wr = 0, rb = 0, wb = 0;
	/* a member new since the last poll, or whose counters went back
	   (replaced by another of the same path), has no rate yet */
	bool ok = pm && rate_per_s(pm->reads, m->reads, dt_ns, &r) &&
		  rate_per_s(pm->writes, m->writes, dt_ns, &wr) &&
		  rate_per_s(pm->read_bytes, m->read_bytes, dt_ns, &rb) &&
		  rate_per_s(pm->write_bytes, m->write_bytes, dt_ns, &wb);
	char slot[16] = "-";

	if (m->slot >= 0)
		snprintf(slot, sizeof(slot), "%d", m->slot);
	fprintf(f, "  %4s  %-10s", slot, m->state);
	put_rate(f, "%9.1f", ok, r);
	put_rate(f, "%9.1f", ok, wr);
	put_rate(f, "%9.2f", ok, rb / MIB);
	put_rate(f, "%9.2f", ok, wb / MIB);
	fprintf(f, "  %s\n", m->path);
}

static void draw_background(FILE *f, const struct watch_snap *s, const struct watch_snap *p)
{
	const char *of = s->bg.per_member ? "per member" : "of the array";
	double pct = s->bg.total ? 100.0 * (double)s->bg.done / (double)s->bg.total : 0;
	char bar[21], eta[32], rate_text[64];
	double rate = 0;

	if (!s->bg.running) {
		if (!strcmp(s->bg.kind, "none"))
			fprintf(f, "  Background: none\n");
		else
			fprintf(f, "  Background: none (last %s %s at %.1f%%)\n", s->bg.kind,
				s->bg.result, pct);
		return;
	}
	/* the interval's own rate while the same job runs; else the server's */
	bool same_job = p && p->bg.running && !strcmp(p->bg.kind, s->bg.kind);
	bool known = same_job && rate_per_s(p->bg.done, s->bg.done, s->t_ns - p->t_ns, &rate);
	if (!known && s->bg.server_rate) {
		rate = (double)s->bg.server_rate;
		known = true;
	}
	unsigned fill = (unsigned)(pct / 5);
	for (unsigned i = 0; i < 20; i++)
		bar[i] = i < fill ? '=' : i == fill ? '>' : '.';
	bar[20] = 0;
	if (known)
		snprintf(rate_text, sizeof(rate_text), "%.1f MiB/s, ETA %s", rate / MIB,
			 rate_eta_text(rate_eta_s(s->bg.done, s->bg.total, rate), eta,
				       sizeof(eta)));
	else
		snprintf(rate_text, sizeof(rate_text), "rate not measured yet");
	fprintf(f, "  Background: %s [%s] %5.1f%% (%llu/%llu MiB %s) %s\n", s->bg.kind, bar, pct,
		(unsigned long long)(s->bg.done >> 20), (unsigned long long)(s->bg.total >> 20),
		of, rate_text);
}

static void draw_array(FILE *f, const struct watch_snap *s, const struct watch_snap *p)
{
	char size[32];
	uint64_t dt = p ? s->t_ns - p->t_ns : 0;

	fprintf(f, "%s  %s  %s  %s  %u/%u in sync  connections %u of %u  in flight %llu\n",
		s->export_name, s->level, cli_bytes(s->array_bytes, size, sizeof(size)), s->state,
		s->raid_devices >= s->degraded ? s->raid_devices - s->degraded : 0,
		s->raid_devices, s->connections, s->max_connections,
		(unsigned long long)s->in_flight);
	draw_background(f, s, p);
	fprintf(f, "  %4s  %-10s%9s%9s%9s%9s  %s\n", "Slot", "State", "r/s", "w/s", "rMiB/s",
		"wMiB/s", "Device");
	for (unsigned i = 0; i < s->nmembers; i++)
		draw_member(f, &s->members[i], p ? watch_snap_member(p, s->members[i].path) : NULL,
			    dt);
}

/* ---- polling ---- */

static int add_snap(struct watch *w, const char *ctl, char *msg, size_t msglen)
{
	if (w->ncur == w->capcur) {
		unsigned cap = w->capcur ? w->capcur * 2 : 4;
		struct watch_snap *n = realloc(w->cur, cap * sizeof(*n));
		if (!n) {
			snprintf(msg, msglen, "out of memory");
			return -ENOMEM;
		}
		w->cur = n;
		w->capcur = cap;
	}
	int rc = watch_snap_poll(ctl, &w->cur[w->ncur], msg, msglen);
	if (rc == 0)
		w->ncur++;
	else
		watch_snap_free(&w->cur[w->ncur]);
	return rc;
}

static int poll_one(const char *ctl, void *arg)
{
	char msg[256];
	/* one that does not answer now (busy, gone since) is left out of this view */
	add_snap(arg, ctl, msg, sizeof(msg));
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct watch_snap *x = a, *y = b;
	int c = strcmp(x->export_name, y->export_name);
	return c ? c : strcmp(x->ctl, y->ctl);
}

static void drop_snaps(struct watch_snap *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		watch_snap_free(&s[i]);
}

/* poll_all's answer when the one array watched is busy this time */
#define WATCH_SKIP (-1)

/* The polls of this interval into w->cur: 0, WATCH_SKIP, or an exit status
 * (the one array watched is gone: reported). */
static int poll_all(struct watch *w)
{
	char msg[512];

	drop_snaps(w->cur, w->ncur);
	w->ncur = 0;
	if (w->ctl) {
		int rc = add_snap(w, w->ctl, msg, sizeof(msg));
		if (rc > 0 && !strcmp(msg, CTL_BUSY))
			return WATCH_SKIP;      /* the last view stays up */
		if (rc) {
			const char *name = w->nprev ? w->prev[0].export_name : w->ctl;
			fprintf(stderr, "uraid status: '%s' is %s: %s\n", name,
				w->nprev ? "no longer served" : "not answering", msg);
			return CLI_EXIT_FAIL;
		}
		return 0;
	}
	if (ctl_for_each(poll_one, w, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "uraid status: %s\n", msg);
		return CLI_EXIT_FAIL;
	}
	qsort(w->cur, w->ncur, sizeof(*w->cur), by_name);
	return 0;
}

/* ---- drawing on the terminal or as plain lines ---- */

static void build_frame(struct watch *w)
{
	FILE *f = open_memstream(&w->text, &w->text_len);
	char when[64];
	time_t now = time(NULL);
	struct tm tm;

	if (!f)
		return;
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
	fprintf(f, "uraid status: every %.1f s, %s", w->o->interval_ms / 1000.0, when);
	if (w->o->count)
		fprintf(f, " (%lu of %lu)", w->frames + 1, w->o->count);
	fprintf(f, "\n");
	if (!w->ncur)
		fprintf(f, "\nno array is being served on this machine\n");
	for (unsigned i = 0; i < w->ncur; i++) {
		fprintf(f, "\n");
		draw_array(f, &w->cur[i], find_prev(w, w->cur[i].ctl));
	}
	fclose(f);
}

/* Write one line of at most cols columns (cut at a character's start). */
static void put_cut(const char *line, size_t len, unsigned cols)
{
	size_t n = 0, shown = 0;
	while (n < len && shown < cols) {
		n++;
		while (n < len && ((unsigned char)line[n] & 0xc0) == 0x80)
			n++;
		shown++;
	}
	fwrite(line, 1, n, stdout);
}

/* On a terminal: cursor home, each line cut to the width and cleared to
 * its end, the rest of the screen cleared; lines past the screen's height
 * are left out (they would scroll the top away). */
static void show_tty(const struct watch *w)
{
	struct winsize ws = { 0 };
	unsigned rows = 24, cols = 80;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col > 1) {
		rows = ws.ws_row;
		cols = ws.ws_col;
	}
	cols--;         /* a full line leaves the cursor past the edge, where
			   clearing to the end of the line takes its last character */
	const char *p = w->text, *end = w->text + w->text_len;
	unsigned lines = 0;
	for (const char *q = p; q < end; q++)
		lines += *q == '\n';
	/* the last row stays free: a newline there would scroll the view */
	unsigned shown = lines < rows ? lines : rows > 2 ? rows - 2 : 1;
	fputs("\033[H", stdout);
	for (unsigned row = 0; p < end && row < shown; row++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
		put_cut(p, len, cols);
		fputs("\033[K\n", stdout);
		p += len + (nl ? 1 : 0);
	}
	if (shown < lines) {
		char more[96];
		int n = snprintf(more, sizeof(more), "(%u more lines: a taller terminal shows them)",
				 lines - shown);
		put_cut(more, n > 0 ? (size_t)n : 0, cols);
		fputs("\033[K\n", stdout);
	}
	fputs("\033[J", stdout);
	fflush(stdout);
}

static void show(struct watch *w)
{
	build_frame(w);
	if (w->tty) {
		show_tty(w);
	} else if (w->text) {
		fwrite(w->text, 1, w->text_len, stdout);
		fputs("\n", stdout);
		fflush(stdout);
	}
	free(w->text);
	w->text = NULL;
	w->frames++;
}

/* ---- the loop ---- */

/* This poll becomes the one before. */
static void swap_polls(struct watch *w)
{
	struct watch_snap *t = w->prev;
	unsigned tcap = w->capprev;

	drop_snaps(w->prev, w->nprev);
	w->prev = w->cur;
	w->nprev = w->ncur;
	w->capprev = w->capcur;
	w->cur = t;
	w->ncur = 0;
	w->capcur = tcap;
}

/* Wait until deadline (monotonic ns) or a signal: false on a signal. */
static bool wait_until(int sig_fd, uint64_t deadline)
{
	for (;;) {
		uint64_t now = uraid_now_ns();
		if (now >= deadline)
			return true;
		struct pollfd p = { .fd = sig_fd, .events = POLLIN };
		int rc = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
		if (rc < 0 && errno != EINTR)
			return true;
		if (rc > 0)
			return false;
	}
}

static int run(struct watch *w, int sig_fd)
{
	uint64_t next = uraid_now_ns();

	for (;;) {
		int rc = poll_all(w);
		if (rc > 0)
			return rc;
		if (rc == 0) {
			show(w);
			swap_polls(w);
		}
		if (w->o->count && w->frames >= w->o->count)
			return CLI_EXIT_OK;
		next += (uint64_t)w->o->interval_ms * 1000000u;
		/* a slow poll (a busy server) does not make the views come in a burst */
		if (next < uraid_now_ns())
			next = uraid_now_ns();
		if (!wait_until(sig_fd, next))
			return CLI_EXIT_OK;
	}
}

int status_watch(const struct status_watch_opts *wo, const char *target, bool json,
		 status_resolve_fn *resolve)
{
	char ctl[CTL_MAX_LINE];
	const char *term = getenv("TERM");
	struct watch w = { .o = wo, .tty = isatty(STDOUT_FILENO) && !(term && !strcmp(term, "dumb")) };
	sigset_t mask;
	int rc;

	if (json)
		return bad("--watch draws a view for people; scripts poll 'uraid status --json'");
	if (target) {
		if ((rc = resolve("status", target, ctl, sizeof(ctl))) != 0)
			return rc;
		w.ctl = ctl;
	}
	/* the signals that end the view come through a descriptor, so the
	   terminal is put back however it ends */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sig_fd < 0) {
		fprintf(stderr, "uraid status: signalfd: %s\n", strerror(errno));
		sigprocmask(SIG_UNBLOCK, &mask, NULL);
		return CLI_EXIT_FAIL;
	}
	if (w.tty)
		fputs("\033[?25l", stdout);     /* no cursor dancing over the view */
	rc = run(&w, sig_fd);
	if (w.tty) {
		fputs("\033[?25h", stdout);
		fflush(stdout);
	}
	close(sig_fd);
	/* the signals stay blocked: the command ends now, and a second one
	   (timeout(1) signals the command and then its whole group) must not
	   kill it after the view has ended and chosen its exit status */
	drop_snaps(w.prev, w.nprev);
	drop_snaps(w.cur, w.ncur);
	free(w.prev);
	free(w.cur);
	return rc;
}
