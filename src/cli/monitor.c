// SPDX-License-Identifier: MIT
/*
 * uraid monitor: watch the served arrays of this machine and tell people
 * what happens to them, as mdadm --monitor does.
 *
 * The servers push events as they happen (serve_events.c) to the monitor's
 * datagram socket in the run directory (monitor_proto.h); the monitor asks
 * each server for its state at its start, after each event and every
 * --delay seconds, when it also notices servers that went away without a
 * word. Nothing is polled faster than --delay.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/metrics_all.h"
#include "cli/metrics_http.h"
#include "cli/monitor.h"
#include "cli/monitor_proto.h"
#include "cli/util.h"
#include "common/clock.h"
#include "common/private_file.h"
#include "nbd/server.h"

#define DELAY_DEFAULT_S 60
#define DELAY_MAX_S     86400

static void monitor_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid monitor [OPTIONS] [--scan] [ARRAY...]\n"
		"\n"
		"Watch every array served on this machine (or the ARRAYs named: export names,\n"
		"md names, or the config file's /dev/md/... names) and report what happens to\n"
		"them, as mdadm --monitor does. The servers push events as they happen; the\n"
		"monitor also looks at every array each --delay seconds (servers that went\n"
		"away without a word).\n"
		"\n"
		"Events: Fail, FailSpare, SpareActive, DegradedArray, NewArray,\n"
		"DeviceDisappeared, RebuildStarted, Rebuild20/40/60/80, RebuildFinished,\n"
		"SparesMissing, TestMessage, MoveSpare (see uraid(8), MONITOR).\n"
		"\n"
		"  -s, --scan               watch every served array (the default)\n"
		"  -p, --program=CMD        run CMD EVENT ARRAY [MEMBER] for each event (no shell;\n"
		"                           ARRAY is the export name; output to the log; killed\n"
		"                           after %d s); default: PROGRAM of the config file\n"
		"  -m, --mail=ADDR          mail Fail, FailSpare, DegradedArray, SparesMissing and\n"
		"                           TestMessage events to ADDR (sendmail -t -i);\n"
		"                           default: MAILADDR (and MAILFROM) of the config file\n"
		"      --sendmail=PATH      the sendmail to use (default $URAID_SENDMAIL, else\n"
		"                           /usr/sbin/sendmail)\n"
		"      --no-syslog          report on stderr instead of syslog (facility daemon,\n"
		"                           tag uraid)\n"
		"  -1, --oneshot            look once: report DegradedArray and SparesMissing for\n"
		"                           the arrays as they are, move spares, and exit (1 when\n"
		"                           an ARRAY named is not served)\n"
		"  -t, --test               report a TestMessage for each array at the start\n"
		"  -d, --delay=SECONDS      look at every array this often (default %d)\n"
		"  -f, --daemonise          run in the background; print its pid once it listens\n"
		"                           (exit 1 if it could not start)\n"
		"  -i, --pid-file=FILE      write the monitor's pid there (removed at exit)\n"
		"      --metrics=HOST:PORT  serve the Prometheus metrics of every array served on\n"
		"                           this machine at http://HOST:PORT/metrics (as serve\n"
		"                           --metrics does for one; no authentication: bind to\n"
		"                           loopback unless you mean it)\n"
		"  -c, --config=FILE        the configuration file (default, if there is one:\n"
		"                           %s): MAILADDR, MAILFROM, PROGRAM,\n"
		"                           ARRAY spares= and spare-group=\n"
		"  -h, --help               this text\n"
		"\n"
		"Spare groups: arrays whose ARRAY lines have the same spare-group= share spares:\n"
		"a degraded array without a spare gets one of another array of its group (not\n"
		"degraded), moved with uraid remove and uraid add (MoveSpare).\n",
		MONITOR_CHILD_TIMEOUT_S, DELAY_DEFAULT_S, URAID_CONFIG_DEFAULT);
}

enum { OPT_SENDMAIL = 256, OPT_NO_SYSLOG, OPT_METRICS };

struct monitor_opts {
	const char *program, *mailaddr, *config;
};

static bool header_safe(const char *s)
{
	return !strpbrk(s, "\r\n");
}

static int parse_args(int argc, char **argv, struct monitor *m, struct monitor_opts *o)
{
	static const struct option longopts[] = {
		{ "scan", no_argument, NULL, 's' },
		{ "program", required_argument, NULL, 'p' },
		{ "alert", required_argument, NULL, 'p' },      /* mdadm's other name */
		{ "mail", required_argument, NULL, 'm' },
		{ "sendmail", required_argument, NULL, OPT_SENDMAIL },
		{ "no-syslog", no_argument, NULL, OPT_NO_SYSLOG },
		{ "oneshot", no_argument, NULL, '1' },
		{ "test", no_argument, NULL, 't' },
		{ "delay", required_argument, NULL, 'd' },
		{ "daemonise", no_argument, NULL, 'f' },
		{ "daemonize", no_argument, NULL, 'f' },
		{ "pid-file", required_argument, NULL, 'i' },
		{ "config", required_argument, NULL, 'c' },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	m->use_syslog = true;
	m->delay_s = DELAY_DEFAULT_S;
	m->sendmail = getenv("URAID_SENDMAIL");
	optind = 1;
	opterr = 0;     /* a wrong option: one line (cli_bad_option) */
	while ((c = getopt_long(argc, argv, "sp:m:1td:fi:c:h", longopts, NULL)) != -1) {
		switch (c) {
		case 's': break;
		case 'p': o->program = optarg; break;
		case 'm': o->mailaddr = optarg; break;
		case OPT_SENDMAIL: m->sendmail = optarg; break;
		case OPT_NO_SYSLOG: m->use_syslog = false; break;
		case OPT_METRICS: {
			char why[256];
			if (!metrics_http_address_ok(optarg, why, sizeof(why))) {
				fprintf(stderr, "uraid monitor: %s\n", why);
				return CLI_EXIT_USAGE;
			}
			m->metrics = optarg;
			break;
		}
		case '1': m->oneshot = true; break;
		case 't': m->test = true; break;
		case 'f': m->daemonise = true; break;
		case 'i': m->pid_file = optarg; break;
		case 'c': o->config = optarg; break;
		case 'd': {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || v == 0 || v > DELAY_MAX_S) {
				fprintf(stderr, "uraid monitor: --delay=%s: expected seconds, 1..%u\n",
					optarg, DELAY_MAX_S);
				return CLI_EXIT_USAGE;
			}
			m->delay_s = (unsigned)v;
			break;
		}
		case 'h':
			monitor_usage(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_bad_option("monitor", argv);
		}
	}
	if (m->oneshot && m->metrics) {
		fprintf(stderr, "uraid monitor: --metrics needs a monitor that keeps running; "
			"drop --oneshot\n");
		return CLI_EXIT_USAGE;
	}
	if (m->oneshot && m->daemonise) {
		fprintf(stderr, "uraid monitor: --oneshot and --daemonise exclude each other; "
			"choose one\n");
		return CLI_EXIT_USAGE;
	}
	if (m->sendmail && !*m->sendmail)
		m->sendmail = NULL;
	m->names = argv + optind;
	m->nnames = (unsigned)(argc - optind);
	return -1;
}

/* The configuration file, and what it gives that the command line did not. */
static int load_config(struct monitor *m, const struct monitor_opts *o)
{
	char err[1200];
	int rc = config_load(o->config ? o->config : URAID_CONFIG_DEFAULT, &m->cfg, err,
			     sizeof(err));
	if (rc == -ENOENT && !o->config) {
		memset(&m->cfg, 0, sizeof(m->cfg));     /* none: fine */
	} else if (rc) {
		fprintf(stderr, "uraid monitor: %s\n", err);
		return CLI_EXIT_FAIL;
	}
	m->program = o->program ? o->program : m->cfg.program;
	m->mailaddr = o->mailaddr ? o->mailaddr : m->cfg.mailaddr;
	m->mailfrom = m->cfg.mailfrom;
	if ((m->mailaddr && !header_safe(m->mailaddr)) ||
	    (m->mailfrom && !header_safe(m->mailfrom))) {
		fprintf(stderr, "uraid monitor: a mail address holds a line break; give one "
			"address on one line\n");
		return CLI_EXIT_USAGE;
	}
	if (m->program && !*m->program)
		m->program = NULL;
	return 0;
}

/* The monitor's datagram socket: RUNDIR/monitors/PID.sock, mode 0600. */
static int open_socket(char *path, size_t len)
{
	char dir[600], err[700];
	int dfd = monitor_dir_open(true, dir, sizeof(dir), err, sizeof(err));
	if (dfd < 0) {
		fprintf(stderr, "uraid monitor: %s\n", err);
		return dfd;
	}
	close(dfd);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int n = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/%ld.sock", dir, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path) || (size_t)n >= len) {
		fprintf(stderr, "uraid monitor: %s: the run directory's path is too long for a "
			"socket; set URAID_RUN_DIR to a shorter one\n", dir);
		return -ENAMETOOLONG;
	}
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fprintf(stderr, "uraid monitor: socket: %s\n", strerror(errno));
		return -errno;
	}
	unlink(sa.sun_path);            /* a monitor of this pid that died */
	mode_t old = umask(0177);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (rc < 0) {
		rc = -errno;
		fprintf(stderr, "uraid monitor: %s: %s\n", sa.sun_path, strerror(-rc));
		close(fd);
		return rc;
	}
	snprintf(path, len, "%s", sa.sun_path);
	return fd;
}

static void handle_event(struct monitor *m, const struct monitor_event *ev)
{
	struct mon_array *a = monitor_find(m, ev->control);
	if (!a) {
		/* a server this monitor has not seen: the registry says whether it is
		   one (and reports it as NewArray) */
		monitor_scan(m, false);
		a = monitor_find(m, ev->control);
		if (!a || ev->event == monitor_event_known("NewArray"))
			return;
	} else if (strcmp(ev->event, "NewArray") == 0) {
		return;                 /* seen already */
	}
	if (strcmp(ev->event, "DeviceDisappeared") == 0) {
		monitor_report(m, ev->event, a->export_name, NULL, NULL);
		monitor_drop(m, a);
		return;
	}
	bool already;
	monitor_note_event(a, ev->array, ev->event, ev->member, &already);
	if (!already) {
		/* a copy: reporting may drain the socket, and the queue may move */
		char name[sizeof(a->export_name)], control[sizeof(a->control)];
		/* an inner array of a RAID 50/60 is named by its own events */
		snprintf(name, sizeof(name), "%s",
			 monitor_inner(a, ev->array) ? ev->array : a->export_name);
		snprintf(control, sizeof(control), "%s", a->control);
		monitor_report(m, ev->event, name, ev->member, control);
		a = monitor_find(m, control);
	}
	if (a && monitor_refresh(m, a) == 0)
		monitor_spare_groups(m);
}

void monitor_drain(struct monitor *m)
{
	char buf[MONITOR_MSG_MAX + 1];
	while (m->sock_fd >= 0 && m->qlen < MONITOR_QUEUE_MAX) {
		ssize_t n = recv(m->sock_fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0)
			return;         /* EAGAIN; another error shows in watch's poll */
		struct monitor_event *ev = &m->queue[(m->qhead + m->qlen) % MONITOR_QUEUE_MAX];
		if ((size_t)n > MONITOR_MSG_MAX || monitor_event_parse(buf, (size_t)n, ev)) {
			monitor_log(m, LOG_WARNING, "a datagram that is no event was ignored");
			continue;
		}
		m->qlen++;
	}
}

/* The oldest event received, handled; false when there is none. */
static bool handle_next(struct monitor *m)
{
	if (!m->qlen)
		return false;
	struct monitor_event ev = m->queue[m->qhead];
	m->qhead = (m->qhead + 1) % MONITOR_QUEUE_MAX;
	m->qlen--;
	handle_event(m, &ev);
	return true;
}

/* Until SIGTERM, SIGINT or SIGHUP. Every array is looked at each --delay
 * seconds, by the clock: events coming all the time do not put it off. */
static int watch(struct monitor *m, int sig_fd)
{
	uint64_t delay_ns = (uint64_t)m->delay_s * 1000000000ull;
	uint64_t next_scan = uraid_now_ns() + delay_ns;
	for (;;) {
		uint64_t now = uraid_now_ns();
		if (now >= next_scan) {
			monitor_scan(m, false);
			monitor_spare_groups(m);
			next_scan = uraid_now_ns() + delay_ns;
			continue;
		}
		struct pollfd p[3] = { { .fd = sig_fd, .events = POLLIN },
				       { .fd = m->sock_fd, .events = POLLIN },
				       { .fd = m->metrics_http ? metrics_http_fd(m->metrics_http) : -1,
					 .events = POLLIN } };
		/* events waiting: only a look at the signals */
		int timeout = m->qlen ? 0 : (int)((next_scan - now + 999999) / 1000000);
		int mt = m->metrics_http ? metrics_http_timeout_ms(m->metrics_http) : -1;
		if (mt >= 0 && mt < timeout)
			timeout = mt;
		int rc = poll(p, 3, timeout);
		if (rc < 0 && errno != EINTR) {
			monitor_log(m, LOG_ERR, "poll: %s; stopping", strerror(errno));
			return CLI_EXIT_FAIL;
		}
		if (rc > 0 && (p[0].revents & POLLIN))
			return CLI_EXIT_OK;
		if (rc > 0 && (p[1].revents & (POLLERR | POLLNVAL))) {
			monitor_log(m, LOG_ERR, "its socket failed; stopping");
			return CLI_EXIT_FAIL;
		}
		if (m->metrics_http)
			metrics_http_work(m->metrics_http);
		monitor_drain(m);
		handle_next(m);
	}
}

/* --metrics: listen, and say where (as serve does); 0 or -errno after a message. */
static int start_metrics(struct monitor *m)
{
	char err[512];
	int fd = metrics_http_listen(m->metrics, err, sizeof(err));
	if (fd < 0) {
		fprintf(stderr, "uraid monitor: %s\n", err);
		return fd;
	}
	if (!nbd_listen_loopback(fd))
		fprintf(stderr, "uraid monitor: warning: --metrics=%s is reachable from other "
			"hosts: anyone who can reach the port reads the metrics\n", m->metrics);
	int rc = metrics_http_create(fd, metrics_all_body, NULL, &m->metrics_http);
	if (rc) {
		fprintf(stderr, "uraid monitor: --metrics: %s\n", strerror(-rc));
		return rc;
	}
	if (!m->daemonise) {
		const char *colon = strrchr(m->metrics, ':');
		printf("uraid monitor: metrics on http://%.*s:%d/metrics\n",
		       (int)(colon - m->metrics), m->metrics, metrics_http_port(m->metrics_http));
		fflush(stdout);
	}
	return 0;
}

/* ARRAY arguments that name no served array: told once, at the start. */
static unsigned names_not_served(struct monitor *m)
{
	unsigned missing = 0;
	for (unsigned i = 0; i < m->nnames; i++) {
		bool found = false;
		for (unsigned j = 0; j < m->narrays && !found; j++)
			found = monitor_names(&m->arrays[j], m->names[i]);
		if (!found) {
			fprintf(stderr, "uraid monitor: '%s' is not served now%s (uraid status lists "
				"the served arrays)\n", m->names[i],
				m->oneshot ? "" : "; it is watched once it is");
			missing++;
		}
	}
	return missing;
}

/*
 * Into the background: the parent waits until the child says it is ready
 * (a byte on a pipe, monitor_ready) and exits 0 printing its pid, or 1 when
 * the child failed first (the pipe closed). Returns, in the child, the
 * pipe's end to report on, or -1 (fork failed).
 */
static int daemonise(const struct monitor *m)
{
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0) {
		fprintf(stderr, "uraid monitor: pipe: %s\n", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "uraid monitor: fork: %s\n", strerror(errno));
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if (pid > 0) {
		char c;
		close(ready[1]);
		ssize_t n;
		while ((n = read(ready[0], &c, 1)) < 0 && errno == EINTR)
			;
		if (n != 1)
			_exit(CLI_EXIT_FAIL);   /* the child said why on stderr */
		printf("%ld\n", (long)pid);
		fflush(stdout);
		_exit(CLI_EXIT_OK);
	}
	close(ready[0]);
	setsid();
	if (chdir("/") < 0) {
	}                       /* not holding a directory busy; "/" is there */
	return ready[1];
}

/* The daemon is ready: its parent exits 0; stdin, stdout (and stderr
 * unless --no-syslog) go to /dev/null. */
static void daemon_ready(const struct monitor *m, int ready_fd)
{
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (m->use_syslog)
			dup2(null, 2);  /* --no-syslog: the reports stay on stderr */
		if (null > 2)
			close(null);
	}
	if (write(ready_fd, "", 1) < 0) {
	}                       /* the parent is gone: nothing to tell */
	close(ready_fd);
}

static void write_pid_file(struct monitor *m)
{
	char pid[32], err[700];
	int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (uraid_file_replace(m->pid_file, pid, (size_t)n, 0644, err, sizeof(err)))
		monitor_log(m, LOG_ERR, "cannot write the pid file: %s", err);
	else
		m->pid_file_written = true;
}

int cmd_monitor(int argc, char **argv)
{
	struct monitor m = { .sock_fd = -1, .sig_fd = -1 };
	struct monitor_opts o = { 0 };
	int rc = parse_args(argc, argv, &m, &o);
	if (rc >= 0)
		return rc;
	if ((rc = load_config(&m, &o)))
		return rc;
	if (gethostname(m.host, sizeof(m.host)) < 0)
		snprintf(m.host, sizeof(m.host), "localhost");
	m.host[sizeof(m.host) - 1] = 0;
	if (m.use_syslog)
		openlog("uraid", LOG_PID, LOG_DAEMON);
	signal(SIGPIPE, SIG_IGN);       /* a sendmail or server that went away */

	if (m.oneshot) {
		monitor_scan(&m, true);
		monitor_spare_groups(&m);
		rc = names_not_served(&m) ? CLI_EXIT_FAIL : CLI_EXIT_OK;
		free(m.arrays);
		config_free(&m.cfg);
		return rc;
	}

	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	char pid_path[4096];
	if (m.pid_file && m.daemonise && m.pid_file[0] != '/') {
		/* the daemon works in "/": the path made absolute first */
		char cwd[3000];
		if (!getcwd(cwd, sizeof(cwd)) ||
		    snprintf(pid_path, sizeof(pid_path), "%s/%s", cwd, m.pid_file) >=
		    (int)sizeof(pid_path)) {
			fprintf(stderr, "uraid monitor: --pid-file=%s: give an absolute path\n",
				m.pid_file);
			config_free(&m.cfg);
			return CLI_EXIT_USAGE;
		}
		m.pid_file = pid_path;
	}
	int ready_fd = -1;
	if (m.daemonise && (ready_fd = daemonise(&m)) < 0)
		return CLI_EXIT_FAIL;
	int sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	char sock_path[108];
	/* bound before the first look: no event falls in between */
	int fd = sig_fd < 0 ? -1 : open_socket(sock_path, sizeof(sock_path));
	if (fd < 0) {
		if (sig_fd < 0)
			fprintf(stderr, "uraid monitor: signalfd: %s\n", strerror(errno));
		else
			close(sig_fd);
		config_free(&m.cfg);
		return CLI_EXIT_FAIL;
	}
	m.sock_fd = fd;
	m.sig_fd = sig_fd;
	m.queue = calloc(MONITOR_QUEUE_MAX, sizeof(*m.queue));
	if (!m.queue) {
		fprintf(stderr, "uraid monitor: out of memory\n");
		close(fd);
		unlink(sock_path);
		close(sig_fd);
		config_free(&m.cfg);
		return CLI_EXIT_FAIL;
	}
	if (m.metrics && start_metrics(&m)) {
		free(m.queue);
		close(fd);
		unlink(sock_path);
		close(sig_fd);
		config_free(&m.cfg);
		return CLI_EXIT_FAIL;
	}
	if (m.pid_file)
		write_pid_file(&m);
	if (ready_fd >= 0)
		daemon_ready(&m, ready_fd);
	monitor_scan(&m, true);
	names_not_served(&m);
	monitor_spare_groups(&m);
	int status = watch(&m, sig_fd);
	free(m.queue);
	metrics_http_destroy(m.metrics_http);

	close(fd);
	unlink(sock_path);
	close(sig_fd);
	if (m.pid_file_written) {
		char text[32];
		if (uraid_file_read_at(AT_FDCWD, m.pid_file, text, sizeof(text)) > 0 &&
		    strtol(text, NULL, 10) == (long)getpid())
			unlink(m.pid_file);
	}
	free(m.arrays);
	config_free(&m.cfg);
	return status;
}
