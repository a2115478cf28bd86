// SPDX-License-Identifier: MIT
/*
 * How uraid monitor tells people (monitor.h): each event goes to syslog
 * (facility daemon, tag "uraid", mdadm's priorities) or to stderr, to the
 * program (PROGRAM EVENT ARRAY [MEMBER], as mdadm runs it: no shell, its
 * output logged, killed after MONITOR_CHILD_TIMEOUT_S), and by mail for
 * the events mdadm mails (piped to sendmail -t).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "cli/monitor.h"
#include "common/clock.h"
#include "ctl/ctl.h"

/* A mail's body keeps at most this much of the array's status. */
#define MAIL_STATUS_MAX (32 * 1024)

struct event_kind {
	const char *name;
	int priority;
	bool mail;
};

/* mdadm's priorities and the events it mails. */
static const struct event_kind kinds[] = {
	{ "Fail", LOG_CRIT, true },
	{ "FailSpare", LOG_CRIT, true },
	{ "DegradedArray", LOG_CRIT, true },
	{ "DeviceDisappeared", LOG_CRIT, false },
	{ "SparesMissing", LOG_WARNING, true },
	{ "RebuildStarted", LOG_WARNING, false },
	{ "Rebuild20", LOG_WARNING, false },
	{ "Rebuild40", LOG_WARNING, false },
	{ "Rebuild60", LOG_WARNING, false },
	{ "Rebuild80", LOG_WARNING, false },
	{ "RebuildFinished", LOG_WARNING, false },
	{ "TestMessage", LOG_INFO, true },
	{ "SpareActive", LOG_INFO, false },
	{ "NewArray", LOG_INFO, false },
	{ "MoveSpare", LOG_INFO, false },
};

static const struct event_kind *kind_of(const char *event)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(kinds[i].name, event) == 0)
			return &kinds[i];
	return NULL;
}

void monitor_log(struct monitor *m, int priority, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (m->use_syslog) {
		vsyslog(priority, fmt, ap);
	} else {
		char line[2048];
		vsnprintf(line, sizeof(line), fmt, ap);
		fprintf(stderr, "uraid monitor: %s\n", line);
		fflush(stderr);
	}
	va_end(ap);
}

/* Each line of the child's output, logged as coming from what. */
static void log_output(struct monitor *m, const char *what, char *buf, size_t *len, bool all)
{
	char *start = buf, *nl;
	while ((nl = memchr(start, '\n', *len - (size_t)(start - buf)))) {
		*nl = 0;
		monitor_log(m, LOG_INFO, "%s: %s", what, start);
		start = nl + 1;
	}
	size_t rest = *len - (size_t)(start - buf);
	if (all && rest) {
		buf[*len] = 0;
		monitor_log(m, LOG_INFO, "%s: %s", what, start);
		rest = 0;
	}
	memmove(buf, start, rest);
	*len = rest;
}

/*
 * Run argv (argv[0] a path, or a name looked up in PATH) with input on its
 * stdin (NULL: /dev/null), its output logged line by line; killed when it
 * runs past MONITOR_CHILD_TIMEOUT_S. 0 when it exited 0.
 */
/* A signal to stop is waiting (left unread for the main loop)? */
static bool stopping(const struct monitor *m)
{
	struct pollfd p = { .fd = m->sig_fd, .events = POLLIN };
	return m->sig_fd >= 0 && poll(&p, 1, 0) > 0;
}

static int run_child(struct monitor *m, char *const argv[], const char *input, size_t inlen)
{
	if (stopping(m))
		return -1;      /* the monitor stops: nothing more is started */
	int out[2], in[2] = { -1, -1 };
	monitor_drain(m);       /* the socket's queue is short; a child may take long */
	if (pipe2(out, O_CLOEXEC) < 0 || (input && pipe2(in, O_CLOEXEC) < 0)) {
		monitor_log(m, LOG_ERR, "%s: pipe: %s", argv[0], strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		monitor_log(m, LOG_ERR, "%s: fork: %s", argv[0], strerror(errno));
		close(out[0]);
		close(out[1]);
		if (input) {
			close(in[0]);
			close(in[1]);
		}
		return -1;
	}
	if (pid == 0) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);  /* the monitor blocks some */
		signal(SIGPIPE, SIG_DFL);               /* and ignores this one */
		setpgid(0, 0);                          /* killed with what it starts */
		int null = open("/dev/null", O_RDONLY);
		dup2(input ? in[0] : null, 0);
		dup2(out[1], 1);
		dup2(out[1], 2);
		close_range(3, ~0U, 0);                 /* the monitor's own, not inherited */
		if (strchr(argv[0], '/'))
			execv(argv[0], argv);
		else
			execvp(argv[0], argv);
		dprintf(2, "cannot run it: %s\n", strerror(errno));
		_exit(127);
	}
	close(out[1]);
	/* the input is written as the child reads it, in the loop below */
	size_t written = 0;
	int to_child = -1;
	if (input) {
		close(in[0]);
		to_child = in[1];
		fcntl(to_child, F_SETFL, O_NONBLOCK);
	}
	char buf[1024];
	size_t len = 0;
	int status = -1;
	uint64_t deadline = uraid_now_ns() + MONITOR_CHILD_TIMEOUT_S * 1000000000ull;
	bool open_out = true, exited = false;
	while (!exited || open_out) {
		if (!exited && waitpid(pid, &status, WNOHANG) == pid)
			exited = true;
		bool stop = stopping(m);
		if (stop || uraid_now_ns() > deadline) {
			if (stop)
				monitor_log(m, LOG_ERR, "%s: killed, the monitor stops", argv[0]);
			else
				monitor_log(m, LOG_ERR, "%s: still running after %d s; killed",
					    argv[0], MONITOR_CHILD_TIMEOUT_S);
			/* a pid reaped is free for another process: not killed */
			if (!exited) {
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
				waitpid(pid, &status, 0);
			}
			break;
		}
		if (!open_out && to_child < 0) {
			struct timespec ts = { 0, 20000000 };
			nanosleep(&ts, NULL);
			monitor_drain(m);
			continue;
		}
		monitor_drain(m);
		if (to_child >= 0 && (written == inlen || exited)) {
			if (written < inlen)
				monitor_log(m, LOG_ERR, "%s: exited before it read the whole message",
					    argv[0]);
			close(to_child);        /* the end of its input */
			to_child = -1;
		}
		struct pollfd p[2] = { { .fd = open_out ? out[0] : -1, .events = POLLIN },
				       { .fd = to_child, .events = POLLOUT } };
		if (poll(p, 2, 100) > 0 && to_child >= 0 && (p[1].revents & (POLLOUT | POLLERR))) {
			ssize_t n = write(to_child, input + written, inlen - written);
			if (n > 0) {
				written += (size_t)n;
			} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
				monitor_log(m, LOG_ERR, "%s: writing the message: %s", argv[0],
					    strerror(errno));
				written = inlen;
			}
		}
		if (p[0].revents) {
			ssize_t n = read(out[0], buf + len, sizeof(buf) - 1 - len);
			if (n <= 0) {
				open_out = false;
			} else {
				len += (size_t)n;
				log_output(m, argv[0], buf, &len, len == sizeof(buf) - 1);
			}
		} else if (exited && open_out) {
			open_out = false;       /* gone; a child of its own may hold the pipe */
		}
	}
	log_output(m, argv[0], buf, &len, true);
	close(out[0]);
	if (to_child >= 0)
		close(to_child);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		monitor_log(m, LOG_ERR, "%s exited with status %d", argv[0], WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		monitor_log(m, LOG_ERR, "%s was killed by signal %d", argv[0], WTERMSIG(status));
	return -1;
}

/* The array's status as `uraid status ARRAY` prints it, into out. */
static void append_status(FILE *mail, const char *control)
{
	const char *fields[] = { "status" };
	char msg[512], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	if (!out)
		return;
	int rc = control ? ctl_call(control, fields, 1, out, msg, sizeof(msg)) : -ENOENT;
	fclose(out);
	if (rc == 0)
		fprintf(mail, "The array's state now:\n\n%.*s", (int)(len > MAIL_STATUS_MAX
								       ? MAIL_STATUS_MAX : len), text);
	else
		fprintf(mail, "Its state could not be read: %s\n",
			rc < 0 ? strerror(-rc) : msg);
	free(text);
}

/* s with each control character as '?', cut to fit out. */
static const char *header_text(const char *s, char *out, size_t len)
{
	size_t n = 0;
	for (; *s && n + 1 < len; s++, n++)
		out[n] = (unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s;
	out[n] = 0;
	return out;
}

static void send_mail(struct monitor *m, const char *event, const char *array,
		      const char *member, const char *control)
{
	char *text = NULL, h[1200];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return;
	/* no control character in a header: a name with a newline would add
	   headers (sendmail -t reads the recipients from them) */
	fprintf(f, "From: %s\n", header_text(m->mailfrom ? m->mailfrom : "uraid monitor <root>",
					      h, sizeof(h)));
	fprintf(f, "To: %s\n", header_text(m->mailaddr, h, sizeof(h)));
	char subject[1200];
	snprintf(subject, sizeof(subject), "%s event on %s:%s", event, array, m->host);
	fprintf(f, "Subject: %s\n", header_text(subject, h, sizeof(h)));
	fprintf(f, "Auto-Submitted: auto-generated\n\n");
	fprintf(f, "uraid monitor on %s noticed a %s event on the array %s.\n", m->host, event,
		array);
	if (member && *member)
		fprintf(f, "%s: %s.\n", strcmp(event, "MoveSpare") ? "The member concerned"
				       : "The spare came from the array", member);
	fprintf(f, "\n");
	append_status(f, control);
	fclose(f);
	const char *sendmail = m->sendmail ? m->sendmail : "/usr/sbin/sendmail";
	/* -t: recipients from the headers; -i: a line of one dot is no end;
	   -f: the envelope sender, MAILFROM's address */
	char from[512] = "";
	if (m->mailfrom) {
		const char *lt = strrchr(m->mailfrom, '<'), *gt = lt ? strchr(lt, '>') : NULL;
		if (lt && gt)
			snprintf(from, sizeof(from), "%.*s", (int)(gt - lt - 1), lt + 1);
		else
			snprintf(from, sizeof(from), "%s", m->mailfrom);
	}
	char *argv[] = { (char *)sendmail, (char *)"-t", (char *)"-i",
			 *from ? (char *)"-f" : NULL, from, NULL };
	if (run_child(m, argv, text, len))
		monitor_log(m, LOG_ERR, "the mail about %s on %s could not be handed to %s", event,
			    array, sendmail);
	free(text);
}

void monitor_report(struct monitor *m, const char *event, const char *array,
		    const char *member, const char *control)
{
	const struct event_kind *k = kind_of(event);
	bool has_member = member && *member;
	if (!k)
		return;
	if (strcmp(event, "MoveSpare") == 0)
		monitor_log(m, k->priority, "%s event on %s: a spare came from %s", event, array,
			    member);
	else
		monitor_log(m, k->priority, "%s event on %s%s%s", event, array,
			    has_member ? ", member " : "", has_member ? member : "");
	if (m->program) {
		char *argv[] = { (char *)m->program, (char *)event, (char *)array,
				 has_member ? (char *)member : NULL, NULL };
		run_child(m, argv, NULL, 0);
	}
	if (m->mailaddr && k->mail)
		send_mail(m, event, array, member, control);
}
