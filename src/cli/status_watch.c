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
#include "cli/progress.h"
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
	double pct = s->bg.total ? 100.0 * (double)s->bg.done / (double)s->bg.total : 0;
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
	char line[256];
	progress_format(line, sizeof(line), s->bg.kind, s->bg.done, s->bg.total, !s->bg.per_member,
			true, known, rate);
	fprintf(f, "  Background: %s\n", line);
}

static void draw_slot(FILE *f, const struct watch_snap *s, const struct watch_snap *p, int slot,
		      uint64_t dt)
{
	bool found = false;
	for (unsigned i = 0; i < s->nmembers; i++) {
		const struct watch_member *m = &s->members[i];
		if (m->slot != slot)
			continue;
		draw_member(f, m, p ? watch_snap_member(p, m) : NULL, dt);
		found = true;
	}
	if (!found && slot >= 0)
		fprintf(f, "  %4d  %-10s%9s%9s%9s%9s  -\n", slot, "missing", "-", "-", "-", "-");
}

static void draw_array(FILE *f, const struct watch_snap *s, const struct watch_snap *p)
{
	char size[32], when[16] = "";
	uint64_t dt = p ? s->t_ns - p->t_ns : 0;
	struct tm tm;

	if (s->stale)
		strftime(when, sizeof(when), "%H:%M:%S", localtime_r(&s->stale_since, &tm));
	if (s->no_facts) {
		fprintf(f, "%s: not answering since %s (%s)\n", s->export_name, when,
			s->stale_reason);
		return;
	}
	fprintf(f, "%s  %s  %s  %s  %u/%u in sync  connections %u of %u  in flight %llu\n",
		s->export_name, s->level, cli_bytes(s->array_bytes, size, sizeof(size)), s->state,
		s->raid_devices >= s->degraded ? s->raid_devices - s->degraded : 0,
		s->raid_devices, s->connections, s->max_connections,
		(unsigned long long)s->in_flight);
	if (s->stale)
		fprintf(f, "  not answering since %s (%s); the facts below are from before\n", when,
			s->stale_reason);
	draw_background(f, s, p);
	fprintf(f, "  %4s  %-10s%9s%9s%9s%9s  %s\n", "Slot", "State", "r/s", "w/s", "rMiB/s",
		"wMiB/s", "Device");
	/* as `uraid status`: the slots in order (an empty one as missing), then spares */
	for (unsigned slot = 0; slot < s->raid_devices && slot < 4096; slot++)
		draw_slot(f, s, p, (int)slot, dt);
	for (unsigned i = 0; i < s->nmembers; i++)
		if (s->members[i].slot < 0 || (unsigned)s->members[i].slot >= s->raid_devices)
			draw_member(f, &s->members[i], p ? watch_snap_member(p, &s->members[i]) : NULL,
				    dt);
}

/* ---- polling ---- */

/* Room for one more poll in w->cur: its slot, or NULL (out of memory). */
static struct watch_snap *next_snap(struct watch *w)
{
	if (w->ncur == w->capcur) {
		unsigned cap = w->capcur ? w->capcur * 2 : 4;
		struct watch_snap *n = realloc(w->cur, cap * sizeof(*n));
		if (!n)
			return NULL;
		w->cur = n;
		w->capcur = cap;
	}
	return &w->cur[w->ncur];
}

/* The server is not there any more (its socket gone or refusing), as
 * against there but not answering in time (a timeout, a bad answer). */
static bool gone(int rc)
{
	return rc == -ENOENT || rc == -ECONNREFUSED;
}

/*
 * Poll ctl into w->cur. One that does not answer is carried forward from
 * the poll before, marked stale with the reason (a new one: its name only).
 * Returns the poll's code (0; > 0 the server's error; -errno).
 */
static int add_snap(struct watch *w, const char *ctl, char *msg, size_t msglen)
{
	struct watch_snap *s = next_snap(w);
	if (!s) {
		snprintf(msg, msglen, "out of memory");
		return -ENOMEM;
	}
	int rc = watch_snap_poll(ctl, s, msg, msglen);
	if (rc == 0) {
		w->ncur++;
		return 0;
	}
	watch_snap_free(s);
	if (gone(rc) || (rc > 0 && !strcmp(msg, CTL_BUSY)))
		return rc;
	const struct watch_snap *p = find_prev(w, ctl);
	if (p ? watch_snap_copy(s, p) : 0)
		return rc;
	if (!p) {
		memset(s, 0, sizeof(*s));
		snprintf(s->ctl, sizeof(s->ctl), "%s", ctl);
		snprintf(s->export_name, sizeof(s->export_name), "%s", ctl);
		s->no_facts = true;
	}
	if (!s->stale)
		s->stale_since = time(NULL);
	s->stale = true;
	/* the reason may be the server's own words */
	watch_snap_clean(s->stale_reason, sizeof(s->stale_reason), msg);
	w->ncur++;
	return rc;
}

static int poll_one(const char *ctl, void *arg)
{
	char msg[256];
	/* one that does not answer now is shown as such (add_snap); the entry
	   of one that is gone is removed (ctl_for_each) */
	int rc = add_snap(arg, ctl, msg, sizeof(msg));
	return gone(rc) ? rc : 0;
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
 * (the one array watched is gone, or did not answer the first time:
 * reported). */
static int poll_all(struct watch *w)
{
	char msg[512];

	drop_snaps(w->cur, w->ncur);
	w->ncur = 0;
	if (w->ctl) {
		int rc = add_snap(w, w->ctl, msg, sizeof(msg));
		if (rc > 0 && !strcmp(msg, CTL_BUSY))
			return WATCH_SKIP;      /* the last view stays up */
		if (rc && (gone(rc) || !w->nprev)) {
			const char *name = w->nprev ? w->prev[0].export_name : w->ctl;
			fprintf(stderr, "uraid status: '%s' is %s: %s\n", name,
				w->nprev && gone(rc) ? "no longer served" : "not answering", msg);
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

/* The frame's text into w->text: false when there is no memory for it. */
static bool build_frame(struct watch *w)
{
	free(w->text);
	w->text = NULL;
	w->text_len = 0;
	FILE *f = open_memstream(&w->text, &w->text_len);
	char when[64];
	time_t now = time(NULL);
	struct tm tm;

	if (!f)
		return false;
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
	return fclose(f) == 0 && w->text;
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

/* Draw this poll's view; the text stays in w->text for a redraw (a
 * resized terminal, a continued job). */
static void show(struct watch *w)
{
	if (!build_frame(w)) {
		fprintf(stderr, "uraid status: out of memory for the view\n");
	} else if (w->tty) {
		show_tty(w);
	} else {
		fwrite(w->text, 1, w->text_len, stdout);
		fputs("\n", stdout);
		fflush(stdout);
	}
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

/* The signals that end the view; SIGTSTP and SIGWINCH come through the
 * signal descriptor too (a stop puts the cursor back first; a resize redraws). */
static const int end_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

/* A signal that ends the view while a poll waits on a server (up to the
 * control socket's timeout): the cursor back, and out at once. Only
 * async-signal-safe calls. */
static void end_now_tty(int sig)
{
	static const char show_cursor[] = "\033[?25h";
	ssize_t r = write(STDOUT_FILENO, show_cursor, sizeof(show_cursor) - 1);
	(void)r;
	_exit(CLI_EXIT_OK);
}

static void end_now(int sig)
{
	_exit(CLI_EXIT_OK);
}

/* Poll with the ending signals let through (their handler ends the
 * command), so Ctrl-C works while a server keeps the poll waiting; a signal
 * that came in while drawing is taken here too. */
static int poll_interruptible(struct watch *w)
{
	sigset_t ends;
	sigemptyset(&ends);
	for (unsigned i = 0; i < sizeof(end_signals) / sizeof(end_signals[0]); i++)
		sigaddset(&ends, end_signals[i]);
	sigprocmask(SIG_UNBLOCK, &ends, NULL);
	int rc = poll_all(w);
	sigprocmask(SIG_BLOCK, &ends, NULL);
	return rc;
}

/* Ctrl-Z: the cursor back while stopped, hidden and the view redrawn after. */
static void stop_here(struct watch *w)
{
	if (w->tty) {
		fputs("\033[?25h", stdout);
		fflush(stdout);
	}
	raise(SIGSTOP);
	if (w->tty) {
		fputs("\033[?25l\033[2J", stdout);
		if (w->text)
			show_tty(w);
	}
}

/* Wait until deadline (monotonic ns) or a signal that ends the view: false
 * on one. A resize redraws at once; a stop stops. */
static bool wait_until(struct watch *w, int sig_fd, uint64_t deadline)
{
	for (;;) {
		uint64_t now = uraid_now_ns();
		if (now >= deadline)
			return true;
		struct pollfd p = { .fd = sig_fd, .events = POLLIN };
		int rc = poll(&p, 1, (int)((deadline - now + 999999) / 1000000));
		if (rc < 0 && errno != EINTR)
			return true;
		if (rc <= 0)
			continue;
		struct signalfd_siginfo si;
		if (read(sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			continue;
		if (si.ssi_signo == SIGWINCH) {
			if (w->tty && w->text)
				show_tty(w);
		} else if (si.ssi_signo == SIGTSTP) {
			stop_here(w);
		} else {
			return false;
		}
	}
}

static int run(struct watch *w, int sig_fd)
{
	uint64_t next = uraid_now_ns();

	for (;;) {
		int rc = poll_interruptible(w);
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
		if (!wait_until(w, sig_fd, next))
			return CLI_EXIT_OK;
	}
}

int status_watch(const struct status_watch_opts *wo, const char *target, bool json,
		 status_resolve_fn *resolve)
{
	char ctl[CTL_MAX_LINE];
	struct watch w = { .o = wo, .tty = progress_terminal(STDOUT_FILENO) };
	sigset_t mask;
	int rc;

	if (json)
		return bad("--watch draws a view for people; scripts poll 'uraid status --json'");
	/* while a poll (or finding the array) waits on a server, the signals
	   that end the view end it at once, with status 0; while it draws and
	   waits they come through a descriptor, so the terminal is put back
	   however it ends */
	sigemptyset(&mask);
	for (unsigned i = 0; i < sizeof(end_signals) / sizeof(end_signals[0]); i++) {
		sigaddset(&mask, end_signals[i]);
		signal(end_signals[i], w.tty ? end_now_tty : end_now);
	}
	if (target) {
		if ((rc = resolve("status", target, ctl, sizeof(ctl))) != 0)
			return rc;
		w.ctl = ctl;
	}
	sigaddset(&mask, SIGTSTP);
	sigaddset(&mask, SIGWINCH);
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
	free(w.text);
	free(w.prev);
	free(w.cur);
	return rc;
}
