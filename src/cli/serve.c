// SPDX-License-Identifier: MIT
/*
 * uraid serve: assemble an array and export it over NBD until SIGTERM or
 * SIGINT (or `uraid stop`), then drain, flush, mark it clean and exit 0.
 * The reactors serve the clients; this thread only waits for signals and
 * answers the control socket (serve_ctl.c).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include <uraid/engine.h>
#include <uraid/geom.h>

#include "cli/cli.h"
#include "cli/metrics_http.h"
#include "cli/metrics_text.h"
#include "cli/pool_cli.h"
#include "cli/serve.h"
#include "cli/serve_events.h"
#include "cli/status_print.h"
#include "cli/sd_notify.h"
#include "cli/util.h"
#include "ops/config.h"
#include "common/clock.h"
#include "common/private_file.h"
#include "ctl/ctl.h"
#include "nbd/proto.h"
#include "nbd/server.h"
#include "nbd/tls.h"

#define STOP_TIMEOUT_MS 30000

static void serve_usage(FILE *f)
{
	fprintf(f,
		"Usage: uraid serve [OPTIONS] MEMBER...\n"
		"       uraid serve [OPTIONS] --scan | --uuid=UUID | --array=NAME [DEVICE|GLOB...]\n"
		"       uraid serve --list-arrays [--config=FILE]\n"
		"\n"
		"Assemble the array the MEMBERs belong to (spares too) and export it over NBD\n"
		"until SIGTERM, SIGINT or `uraid stop`; then finish the requests in flight,\n"
		"flush, mark the array clean and exit 0. Assembly follows md's rules and\n"
		"refuses what md refuses, with the reason. An array whose member is merely\n"
		"missing (not given or not found, while the others list it as active) is not\n"
		"started without --run; one degraded before it stopped starts as before.\n"
		"\n"
		"Finding the members (read-only; see CONFIGURATION FILE in uraid(8)):\n"
		"      --scan               find them by superblock among the DEVICEs/GLOBs given,\n"
		"                           else the ARRAY line's devices=, else the DEVICE\n"
		"                           lines of the configuration file, else\n"
		"                           /proc/partitions; the array: the one the options\n"
		"                           below name, else the only one found that an ARRAY\n"
		"                           line names (or the only one found, with no ARRAY line)\n"
		"      --uuid=UUID          the array with this UUID (implies --scan)\n"
		"      --array=NAME         the array of this md name (with or without HOST:), or\n"
		"                           of the ARRAY line whose export=, name= or /dev/md/NAME\n"
		"                           is NAME (implies --scan); --name stays the export name\n"
		"      --config=FILE        the configuration file (default " URAID_CONFIG_DEFAULT "\n"
		"                           when it exists); the ARRAY line's serve options apply\n"
		"                           as if given here, options given here win (a flag\n"
		"                           there, e.g. read-only, cannot be switched off here)\n"
		"      --pool=POOL          serve the volumes of this pool (docs/pools.md): their\n"
		"                           partitions on the pool's drives among the DEVICEs/\n"
		"                           GLOBs given, else the DEVICE lines. Every volume\n"
		"                           from this one process, an export each, named after\n"
		"                           the volume (the default name \"\" only with one);\n"
		"                           the control socket answers for the pool, and\n"
		"                           CONTROL.VOLUME for each volume (uraid fail POOL/VOLUME)\n"
		"      --volume=VOLUME      serve this volume only\n"
		"      --list-arrays        print the name of each configured ARRAY (the instance\n"
		"                           names of uraid@.service) and exit\n"
		"      --run                start even when a member is merely missing (the array\n"
		"                           runs degraded; the member needs a rebuild later)\n"
		"  -v, --verbose            say which candidates were skipped and which found\n"
		"\n"
		"  -s, --socket=PATH        listen on this Unix socket (mode 0600); default:\n"
		"                           RUNDIR/NAME.sock (RUNDIR: /run/uraid for root)\n"
		"  -L, --listen=HOST:PORT   listen on TCP instead (only the address given;\n"
		"                           port 0 picks a free one)\n"
		"      --socket-mode=MODE   octal mode of the Unix socket (default 0600)\n"
		"  -n, --name=EXPORT        export name (default: the array's name); the\n"
		"                           default name \"\" answers too\n"
		"      --description=TEXT   export description shown by nbdinfo --list\n"
		"  -r, --read-only          refuse writes (the members are not written at all)\n"
		"  -t, --threads=N          reactor threads (default: one per online CPU)\n"
		"  -c, --control=PATH       control socket for uraid status/fail/remove/stop\n"
		"                           (default: the export socket's path + \".ctl\")\n"
		"  -f, --force              start a dirty degraded RAID 4/5/6 (md's --force);\n"
		"                           an array whose write journal is not given, or\n"
		"                           cannot be replayed: read-only\n"
		"      --ready-fd=FD        write \"ready\\n\" to FD and close it once serving\n"
		"                           (under systemd, Type=notify: READY=1 is sent to\n"
		"                           $NOTIFY_SOCKET as well)\n"
		"      --pid-file=PATH      write the pid there once serving (removed at exit)\n"
		"      --speed-min=KIB/S    background work (resync, check, repair) holds this\n"
		"                           rate per member while clients are busy (1000)\n"
		"      --speed-max=KIB/S    and goes up to this one when they are not (200000)\n"
		"      --stripe-cache=SIZE  RAID 4/5/6: stripe heads, each 4 KiB per member\n"
		"                           (md's stripe_cache_size, 17..32768, default 256),\n"
		"                           or the memory with a suffix (K, M, G). It bounds\n"
		"                           the row pieces in work at once (a head each,\n"
		"                           more wait); idle heads keep the 4 KiB units\n"
		"                           last written, which rewrites then need not read;\n"
		"                           uraid tune changes it; other levels ignore it\n"
		"      --read-ahead=SIZE    read ahead of each sequential read stream, in whole\n"
		"                           stripe rows or chunks, up to SIZE per stream (at\n"
		"                           most 64M; 8 streams at once), off, or default (four\n"
		"                           rows or chunks within 256K..8M); random reads\n"
		"                           never start it\n"
		"      --max-connections=N  clients served at once (default 64); the next are\n"
		"                           greeted and refused with the reason; fewer when\n"
		"                           the open file limit (ulimit -n) has no room\n"
		"      --handshake-timeout=SECONDS  a client that has not chosen the export\n"
		"                           by then is cut (default 10): idle sockets cannot\n"
		"                           hold connection slots\n"
		"      --max-buffer-memory=SIZE  request buffers of all clients together\n"
		"                           (default 1G, at least 64M); beyond it requests\n"
		"                           wait; half is shared, half split so that each\n"
		"                           client keeps a share whatever the others do\n"
		"      --write-cache=through|back  write policy (default through). back\n"
		"                           acknowledges writes once they are in uraid's\n"
		"                           memory and writes them to the members later, as a\n"
		"                           disk's volatile write cache: FLUSH and FUA are\n"
		"                           honoured, but a crash or power loss loses what was\n"
		"                           written since the client's last completed flush\n"
		"      --journal-mode=write-through|write-back  an array with a write journal\n"
		"                           (create --write-journal): write-back acknowledges\n"
		"                           a write of whole 4 KiB pages once it is durable in\n"
		"                           the journal, keeps it in memory (--cache-size) and\n"
		"                           writes it to the members later; nothing\n"
		"                           acknowledged is lost in a crash (md's write-back)\n"
		"      --cache-size=SIZE    memory of the write-back cache (default 64M;\n"
		"                           1M .. 64G, at most half the RAM), allocated at start\n"
		"      --metrics=HOST:PORT  serve Prometheus metrics at http://HOST:PORT/metrics\n"
		"                           (port 0 picks a free one; no authentication:\n"
		"                           anyone who can connect reads them; see METRICS\n"
		"                           in uraid(8))\n"
		"      --tls=off|on|require TLS for clients (NBD_OPT_STARTTLS): on offers it,\n"
		"                           require refuses clients without it (default off)\n"
		"      --tls-psk=FILE       pre-shared keys, USERNAME:HEXKEY lines as psktool\n"
		"                           writes them (clients: nbds://USER@HOST/?tls-psk-file=)\n"
		"      --tls-certificates=DIR  x509: DIR/server-cert.pem, DIR/server-key.pem and\n"
		"                           DIR/ca-cert.pem (for client certificates)\n"
		"      --tls-verify-peer    x509 clients must show a certificate ca-cert.pem\n"
		"                           signed (a PSK client has proven itself by its key)\n"
		"  -h, --help               this text\n"
		"\n"
		"Clients: nbdinfo nbd+unix:///?socket=PATH, qemu-img, nbdcopy, nbdfuse, fio\n"
		"(ioengine=nbd). The export advertises FLUSH, FUA, TRIM, WRITE_ZEROES,\n"
		"FAST_ZERO, multi-connection consistency and block status (base:allocation:\n"
		"holes of sparse member files, which nbdcopy and qemu-img skip).\n"
		"\n"
		"Anyone who can connect can read and overwrite the whole array: on a network,\n"
		"use --tls=require with --tls-psk or --tls-certificates (uraid warns when a\n"
		"TCP address other than loopback is served without it).\n");
}

enum { OPT_SOCKET_MODE = 256, OPT_DESCRIPTION, OPT_READY_FD, OPT_PID_FILE, OPT_SPEED_MIN,
       OPT_SPEED_MAX, OPT_MAX_CONNECTIONS, OPT_HANDSHAKE_TIMEOUT, OPT_MAX_BUFFER_MEMORY,
       OPT_TLS, OPT_TLS_PSK, OPT_TLS_CERTIFICATES, OPT_TLS_VERIFY_PEER, OPT_METRICS,
       OPT_SCAN, OPT_UUID, OPT_ARRAY, OPT_CONFIG, OPT_LIST_ARRAYS, OPT_RUN, OPT_WRITE_CACHE, OPT_JOURNAL_MODE,
       OPT_CACHE_SIZE, OPT_STRIPE_CACHE, OPT_READ_AHEAD };
enum { OPT_POOL = 400, OPT_VOLUME };

#define MAX_CONNECTIONS_LIMIT 100000u
#define HANDSHAKE_TIMEOUT_LIMIT 3600u

/* --max-connections, --handshake-timeout, --max-buffer-memory; 0 or usage. */
static int parse_limit(int c, const char *arg, struct serve_opts *o)
{
	char *end;
	unsigned long v;
	uint64_t bytes;

	switch (c) {
	case OPT_MAX_CONNECTIONS:
		v = strtoul(arg, &end, 10);
		if (*end || !*arg || v == 0 || v > MAX_CONNECTIONS_LIMIT) {
			fprintf(stderr, "uraid serve: --max-connections=%s: expected 1..%u\n", arg,
				MAX_CONNECTIONS_LIMIT);
			return CLI_EXIT_USAGE;
		}
		o->max_connections = (unsigned)v;
		return 0;
	case OPT_HANDSHAKE_TIMEOUT:
		v = strtoul(arg, &end, 10);
		if (*end || !*arg || v == 0 || v > HANDSHAKE_TIMEOUT_LIMIT) {
			fprintf(stderr, "uraid serve: --handshake-timeout=%s: expected seconds, "
				"1..%u\n", arg, HANDSHAKE_TIMEOUT_LIMIT);
			return CLI_EXIT_USAGE;
		}
		o->handshake_timeout_s = (unsigned)v;
		return 0;
	default:
		if (cli_parse_size(arg, 1, &bytes) != 0 || bytes < NBD_MIN_BUFFER_BYTES ||
		    bytes > (1ull << 50)) {
			fprintf(stderr, "uraid serve: --max-buffer-memory=%s: expected a size of "
				"at least 64M (e.g. 512M, 2G)\n", arg);
			return CLI_EXIT_USAGE;
		}
		o->max_buffer_bytes = bytes;
		return 0;
	}
}

static int parse_args(int argc, char **argv, struct serve_opts *o);

/*
 * --scan and its kin: find the members (serve_scan.c), then parse the
 * command line it makes (the ARRAY line's options, these, the members) from
 * the start, so that every option is checked as if typed.
 */
static int parse_scanned(int argc, char **argv, struct serve_opts *o)
{
	int new_argc;
	char **new_argv;
	int rc = serve_scan_args(argc, argv, optind, o, &new_argc, &new_argv);
	if (rc >= 0)
		return rc;
	*o = (struct serve_opts){ .scanned = true, .read_ahead_bytes = URAID_READ_AHEAD_DEFAULT };
	return parse_args(new_argc, new_argv, o);
}

/* --pool: the volume's partitions (pool_serve.c), then the same full restart. */
static int parse_pooled(int argc, char **argv, struct serve_opts *o)
{
	int new_argc;
	char **new_argv;
	int rc = serve_pool_args(argc, argv, optind, o->pool, o->volume, o->config, &new_argc,
				 &new_argv);
	if (rc == SERVE_POOL_EVERY) {
		/* every volume from this process (serve_pool.c): the options
		   stand as given, the members are each volume's */
		if (o->name) {
			fprintf(stderr, "uraid serve: --name with several volumes: each export is "
				"named after its volume; give --volume=VOLUME to serve one under "
				"another name\n");
			return CLI_EXIT_USAGE;
		}
		rc = serve_pool_volumes(argc, argv, optind, o);
		return rc ? rc : -1;
	}
	if (rc >= 0)
		return rc;
	*o = (struct serve_opts){ .scanned = true, .read_ahead_bytes = URAID_READ_AHEAD_DEFAULT };
	return parse_args(new_argc, new_argv, o);
}

static int parse_args(int argc, char **argv, struct serve_opts *o)
{
	static const struct option longopts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "listen", required_argument, NULL, 'L' },
		{ "socket-mode", required_argument, NULL, OPT_SOCKET_MODE },
		{ "name", required_argument, NULL, 'n' },
		{ "description", required_argument, NULL, OPT_DESCRIPTION },
		{ "read-only", no_argument, NULL, 'r' },
		{ "threads", required_argument, NULL, 't' },
		{ "control", required_argument, NULL, 'c' },
		{ "force", no_argument, NULL, 'f' },
		{ "ready-fd", required_argument, NULL, OPT_READY_FD },
		{ "pid-file", required_argument, NULL, OPT_PID_FILE },
		{ "speed-min", required_argument, NULL, OPT_SPEED_MIN },
		{ "speed-max", required_argument, NULL, OPT_SPEED_MAX },
		{ "max-connections", required_argument, NULL, OPT_MAX_CONNECTIONS },
		{ "handshake-timeout", required_argument, NULL, OPT_HANDSHAKE_TIMEOUT },
		{ "max-buffer-memory", required_argument, NULL, OPT_MAX_BUFFER_MEMORY },
		{ "tls", required_argument, NULL, OPT_TLS },
		{ "tls-psk", required_argument, NULL, OPT_TLS_PSK },
		{ "tls-certificates", required_argument, NULL, OPT_TLS_CERTIFICATES },
		{ "tls-verify-peer", no_argument, NULL, OPT_TLS_VERIFY_PEER },
		{ "metrics", required_argument, NULL, OPT_METRICS },
		{ "scan", no_argument, NULL, OPT_SCAN },
		{ "uuid", required_argument, NULL, OPT_UUID },
		{ "array", required_argument, NULL, OPT_ARRAY },
		{ "config", required_argument, NULL, OPT_CONFIG },
		{ "list-arrays", no_argument, NULL, OPT_LIST_ARRAYS },
		{ "run", no_argument, NULL, OPT_RUN },
		{ "write-cache", required_argument, NULL, OPT_WRITE_CACHE },
		{ "journal-mode", required_argument, NULL, OPT_JOURNAL_MODE },
		{ "cache-size", required_argument, NULL, OPT_CACHE_SIZE },
		{ "stripe-cache", required_argument, NULL, OPT_STRIPE_CACHE },
		{ "read-ahead", required_argument, NULL, OPT_READ_AHEAD },
		{ "pool", required_argument, NULL, OPT_POOL },
		{ "volume", required_argument, NULL, OPT_VOLUME },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end, why[512];
	int c;

	o->socket_mode = 0600;
	o->ready_fd = -1;
	optind = 0;     /* a full restart: parse_scanned parses a second command line */
	opterr = 0;     /* a wrong option: one line (cli_bad_option), not getopt's and the usage */
	while ((c = getopt_long(argc, argv, "s:L:n:rt:c:fvh", longopts, NULL)) != -1) {
		switch (c) {
		case 's': o->socket = optarg; break;
		case 'L': o->listen = optarg; break;
		case 'n': o->name = optarg; break;
		case 'r': o->read_only = true; break;
		case 'c': o->control = optarg; break;
		case 'f': o->force = true; break;
		case OPT_DESCRIPTION: o->description = optarg; break;
		case OPT_PID_FILE: o->pid_file = optarg; break;
		case OPT_TLS_PSK: o->tls_psk = optarg; break;
		case OPT_TLS_CERTIFICATES: o->tls_certificates = optarg; break;
		case OPT_TLS_VERIFY_PEER: o->tls_verify_peer = true; break;
		case OPT_METRICS:
			if (!metrics_http_address_ok(optarg, why, sizeof(why))) {
				fprintf(stderr, "uraid serve: %s\n", why);
				return CLI_EXIT_USAGE;
			}
			o->metrics = optarg;
			break;
		case OPT_SCAN: o->scan = true; break;
		case OPT_UUID: o->uuid = optarg; break;
		case OPT_ARRAY: o->array_name = optarg; break;
		case OPT_CONFIG: o->config = optarg; break;
		case OPT_LIST_ARRAYS: o->list_arrays = true; break;
		case OPT_RUN: o->run = true; break;
		case OPT_WRITE_CACHE:
			if (!strcmp(optarg, "through")) {
				o->write_cache = URAID_WRITE_THROUGH;
			} else if (!strcmp(optarg, "back")) {
				o->write_cache = URAID_WRITE_BACK;
			} else {
				fprintf(stderr, "uraid serve: --write-cache=%s: expected through or "
					"back\n", optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case OPT_JOURNAL_MODE:
			if (!strcmp(optarg, "write-through")) {
				o->journal_mode = URAID_JOURNAL_WRITE_THROUGH;
			} else if (!strcmp(optarg, "write-back")) {
				o->journal_mode = URAID_JOURNAL_WRITE_BACK;
			} else {
				fprintf(stderr, "uraid serve: --journal-mode=%s: expected write-through "
					"or write-back\n", optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case OPT_CACHE_SIZE: {
			uint64_t bytes;
			if (cli_parse_size(optarg, 1, &bytes) != 0 || bytes < (1ull << 20) ||
			    bytes > (64ull << 30)) {
				fprintf(stderr, "uraid serve: --cache-size=%s: expected a size from 1M "
					"to 64G (e.g. 256M)\n", optarg);
				return CLI_EXIT_USAGE;
			}
			/* the cache is allocated and touched at start: more than
			   half the memory would push everything else out */
			long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGE_SIZE);
			if (pages > 0 && psz > 0 && bytes > (uint64_t)pages * (uint64_t)psz / 2) {
				fprintf(stderr, "uraid serve: --cache-size=%s: more than half of this "
					"machine's memory (%" PRIu64 "M); choose a smaller size\n",
					optarg, (uint64_t)pages * (uint64_t)psz >> 20);
				return CLI_EXIT_USAGE;
			}
			o->cache_bytes = bytes;
			break;
		}
		case OPT_STRIPE_CACHE: {
			unsigned heads;
			if (cli_parse_stripe_cache(optarg, 0, &heads, why, sizeof(why))) {
				fprintf(stderr, "uraid serve: --stripe-cache=%s: %s\n", optarg, why);
				return CLI_EXIT_USAGE;
			}
			o->stripe_cache = optarg;
			break;
		}
		case 'v': o->verbose = true; break;
		case OPT_TLS:
			if (strcmp(optarg, "off") == 0) {
				o->tls_mode = NBD_TLS_OFF;
			} else if (strcmp(optarg, "on") == 0) {
				o->tls_mode = NBD_TLS_ON;
			} else if (strcmp(optarg, "require") == 0) {
				o->tls_mode = NBD_TLS_REQUIRE;
			} else {
				fprintf(stderr, "uraid serve: --tls=%s: expected off, on or require\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case OPT_SOCKET_MODE: {
			unsigned long m = strtoul(optarg, &end, 8);
			if (*end || !*optarg || m > 0777) {
				fprintf(stderr, "uraid serve: --socket-mode=%s: expected an octal mode "
					"such as 0600\n", optarg);
				return CLI_EXIT_USAGE;
			}
			o->socket_mode = (unsigned)m;
			break;
		}
		case OPT_POOL: o->pool = optarg; break;
		case OPT_VOLUME: o->volume = optarg; break;
		case OPT_READ_AHEAD:
			if (cli_parse_read_ahead(optarg, &o->read_ahead_bytes)) {
				fprintf(stderr, "uraid serve: --read-ahead=%s: expected off, default "
					"or a size of 8K..64M (e.g. 1M, 512K; 0 is off)\n", optarg);
				return CLI_EXIT_USAGE;
			}
			break;
		case OPT_MAX_CONNECTIONS:
		case OPT_HANDSHAKE_TIMEOUT:
		case OPT_MAX_BUFFER_MEMORY:
			if (parse_limit(c, optarg, o))
				return CLI_EXIT_USAGE;
			break;
		case OPT_SPEED_MIN:
		case OPT_SPEED_MAX: {
			unsigned long v = strtoul(optarg, &end, 10);
			if (*end || !*optarg || v == 0 || v > 0xffffffffUL) {
				fprintf(stderr, "uraid serve: --%s=%s: expected KiB/s, > 0\n",
					c == OPT_SPEED_MIN ? "speed-min" : "speed-max", optarg);
				return CLI_EXIT_USAGE;
			}
			*(c == OPT_SPEED_MIN ? &o->speed_min : &o->speed_max) = (uint32_t)v;
			break;
		}
		case 't': {
			unsigned long n = strtoul(optarg, &end, 10);
			if (*end || n == 0 || n > 256) {
				fprintf(stderr, "uraid serve: --threads=%s: expected 1..256\n", optarg);
				return CLI_EXIT_USAGE;
			}
			o->threads = (unsigned)n;
			break;
		}
		case OPT_READY_FD: {
			long n = strtol(optarg, &end, 10);
			if (*end || n < 0 || n > 65535 || fcntl((int)n, F_GETFD) < 0) {
				fprintf(stderr, "uraid serve: --ready-fd=%s: not an open descriptor\n",
					optarg);
				return CLI_EXIT_USAGE;
			}
			o->ready_fd = (int)n;
			break;
		}
		case 'h':
			serve_usage(stdout);
			return CLI_EXIT_OK;
		default:
			return cli_bad_option("serve", argv);
		}
	}
	if (o->speed_min && o->speed_max && o->speed_min > o->speed_max) {
		fprintf(stderr, "uraid serve: --speed-min=%u is above --speed-max=%u\n",
			o->speed_min, o->speed_max);
		return CLI_EXIT_USAGE;
	}
	if (o->tls_mode == NBD_TLS_OFF && (o->tls_psk || o->tls_certificates || o->tls_verify_peer)) {
		fprintf(stderr, "uraid serve: --tls-psk, --tls-certificates and --tls-verify-peer "
			"need --tls=require (or --tls=on)\n");
		return CLI_EXIT_USAGE;
	}
	if (o->tls_mode != NBD_TLS_OFF && !o->tls_psk && !o->tls_certificates) {
		fprintf(stderr, "uraid serve: --tls=%s needs keys: --tls-psk=FILE (psktool) or "
			"--tls-certificates=DIR\n", o->tls_mode == NBD_TLS_ON ? "on" : "require");
		return CLI_EXIT_USAGE;
	}
	if (o->socket && o->listen) {
		fprintf(stderr, "uraid serve: --socket and --listen exclude each other; choose one\n");
		return CLI_EXIT_USAGE;
	}
	if (o->volume && !o->pool) {
		fprintf(stderr, "uraid serve: --volume names a volume of a pool: give --pool too\n");
		return CLI_EXIT_USAGE;
	}
	if (o->pool && (o->scan || o->uuid || o->array_name || o->list_arrays)) {
		fprintf(stderr, "uraid serve: --pool finds its volume itself: give it without "
			"--scan, --uuid, --array or --list-arrays\n");
		return CLI_EXIT_USAGE;
	}
	if (o->pool && !o->scanned)
		return parse_pooled(argc, argv, o);
	if ((o->scan || o->uuid || o->array_name || o->list_arrays) && !o->scanned)
		return parse_scanned(argc, argv, o);
	if (optind >= argc) {
		fprintf(stderr, "uraid serve: no members given; give them, or --scan (run 'uraid "
			"serve --help')\n");
		return CLI_EXIT_USAGE;
	}
	o->members = (const char *const *)argv + optind;
	o->nmembers = (unsigned)(argc - optind);
	/* the export name goes into the control answers (tab-separated lines)
	   and onto terminals: no control characters */
	for (const char *p = o->name; p && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f) {
			fprintf(stderr, "uraid serve: --name holds a control character (a tab, a "
				"newline, ...); choose a name without\n");
			return CLI_EXIT_USAGE;
		}
	/* the control protocol's answers are lines of tab-separated fields:
	   a member path must fit in one field */
	for (unsigned i = 0; i < o->nmembers; i++)
		if (strpbrk(o->members[i], "\t\n")) {
			fprintf(stderr, "uraid serve: the member path '%s' holds a tab or a newline, "
				"which the control socket cannot carry; rename it or give a symlink "
				"to it\n", o->members[i]);
			return CLI_EXIT_USAGE;
		}
	return -1;
}

/* Default paths in the run directory, named after the export. */
static int default_paths(struct serve_state *st)
{
	char dir[512] = "", err[1200];
	const char *base = *st->export_name ? st->export_name : "uraid";
	bool default_socket = !st->o->socket && !st->o->listen;

	if (default_socket || (st->o->listen && !st->o->control)) {
		int dfd = ctl_run_dir(dir, sizeof(dir), err, sizeof(err));
		if (dfd < 0) {
			fprintf(stderr, "uraid serve: %s\n", err);
			return dfd;
		}
		close(dfd);     /* checked: the names in it are ours alone */
	}
	if (default_socket)
		snprintf(st->socket_path, sizeof(st->socket_path), "%.300s/%.200s.sock", dir,
			 base);
	if (!st->o->control) {
		if (st->o->listen)
			snprintf(st->control_path, sizeof(st->control_path), "%.300s/%.200s-%ld.ctl",
				 dir, base, (long)getpid());
		else
			snprintf(st->control_path, sizeof(st->control_path), "%s.ctl",
				 st->socket_path);
	}
	return 0;
}

static int open_listeners(struct serve_state *st, int *fd)
{
	char err[512];

	if (st->o->listen) {
		*fd = nbd_listen_tcp(st->o->listen, err, sizeof(err));
		if (*fd >= 0) {
			const char *colon = strrchr(st->o->listen, ':');
			snprintf(st->endpoint, sizeof(st->endpoint), "tcp:%.*s:%d",
				 (int)(colon - st->o->listen), st->o->listen, nbd_listen_port(*fd));
			if (st->o->tls_mode != NBD_TLS_REQUIRE && !nbd_listen_loopback(*fd))
				fprintf(stderr, "uraid serve: warning: --listen=%s is reachable from other "
					"hosts without --tls=require: anyone who can reach the port can "
					"read and overwrite the whole array\n", st->o->listen);
		}
	} else {
		*fd = nbd_listen_unix(st->socket_path, st->o->socket_mode, err, sizeof(err));
		if (*fd >= 0) {
			snprintf(st->endpoint, sizeof(st->endpoint), "unix:%s", st->socket_path);
			st->socket_created = true;
		}
	}
	if (*fd < 0) {
		fprintf(stderr, "uraid serve: %s\n", err);
		return *fd;
	}
	st->ctl_fd = nbd_listen_unix(st->control_path, 0600, err, sizeof(err));
	if (st->ctl_fd < 0) {
		fprintf(stderr, "uraid serve: control socket: %s\n", err);
		return st->ctl_fd;
	}
	st->control_created = true;
	if (st->o->metrics) {
		st->metrics_fd = metrics_http_listen(st->o->metrics, err, sizeof(err));
		if (st->metrics_fd < 0) {
			fprintf(stderr, "uraid serve: %s\n", err);
			close(*fd);     /* nothing is served */
			*fd = -1;
			return st->metrics_fd;
		}
		if (!nbd_listen_loopback(st->metrics_fd))
			fprintf(stderr, "uraid serve: warning: --metrics=%s is reachable from other "
				"hosts: anyone who can reach the port reads the metrics\n",
				st->o->metrics);
	}
	return 0;
}

/* The lines a user (or a script) sees once the export is up. */
static void announce(struct serve_state *st)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	char size[32];

	if (!as || uraid_array_status(st->array, as) != 0) {
		free(as);
		return;
	}
	unsigned in_sync = as->raid_disks - as->degraded;
	const char *lv = uraid_level_name(as->level);
	printf("uraid serve: export '%s' on %s", st->export_name, st->endpoint);
	if (!st->o->listen)
		printf(" (nbd+unix:///%s?socket=%s)", st->export_name, st->socket_path);
	printf("\nuraid serve: %s '%s', %s, %u of %u members in sync, %s%s; control %s\n",
	       lv ? lv : "?", as->name, cli_bytes(as->size_bytes, size, sizeof(size)), in_sync,
	       as->raid_disks, cli_array_state(as), st->o->read_only ? ", read-only" : "",
	       st->control_path);
	if (st->metrics_fd >= 0) {
		const char *colon = strrchr(st->o->metrics, ':');
		printf("uraid serve: metrics on http://%.*s:%d/metrics\n",
		       (int)(colon - st->o->metrics), st->o->metrics, nbd_listen_port(st->metrics_fd));
	}
	fflush(stdout);
	free(as);
}

/* A pool's line, after its volumes': its control socket, the metrics. */
static void announce_pool(struct serve_state *st)
{
	printf("uraid serve: pool '%s': %u volumes, an export each on %s; control %s (the pool), "
	       "%s.VOLUME (each volume)\n", st->export_name, st->nvols, st->endpoint,
	       st->control_path, st->control_path);
	if (st->metrics_fd >= 0) {
		const char *colon = strrchr(st->o->metrics, ':');
		printf("uraid serve: metrics on http://%.*s:%d/metrics\n",
		       (int)(colon - st->o->metrics), st->o->metrics, nbd_listen_port(st->metrics_fd));
	}
	fflush(stdout);
}

/* Type=notify units: READY=1 once the export answers, with a STATUS line. */
static void notify_systemd_ready(const struct serve_state *st)
{
	char msg[1000];
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=serving export '%.256s' on %.600s\nMAINPID=%ld",
		 st->export_name, st->endpoint, (long)getpid());
	int rc = cli_sd_notify(msg);
	if (rc < 0)
		fprintf(stderr, "uraid serve: cannot tell systemd (NOTIFY_SOCKET): %s\n",
			strerror(-rc));
}

static void signal_ready(struct serve_state *st)
{
	if (st->o->pid_file) {
		/* a new file renamed into place: a link planted at the path is replaced,
		   never written through */
		char pid[32], err[600];
		int n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
		if (uraid_file_replace(st->o->pid_file, pid, (size_t)n, 0644, err, sizeof(err)))
			fprintf(stderr, "uraid serve: cannot write the pid file: %s\n", err);
		else
			st->pid_file_written = true;
	}
	notify_systemd_ready(st);
	if (st->o->ready_fd >= 0) {
		if (write(st->o->ready_fd, "ready\n", 6) != 6)
			fprintf(stderr, "uraid serve: --ready-fd: %s\n", strerror(errno));
		close(st->o->ready_fd);
	}
}

/* The earlier of two poll timeouts (-1: none). */
static int min_timeout(int a, int b)
{
	return b >= 0 && (a < 0 || b < a) ? b : a;
}

/*
 * Signals and control requests; returns when asked to stop. The control
 * clients are served without blocking (ctl_server.c): one that says nothing
 * delays neither a signal nor another client.
 */
static void main_loop(struct serve_state *st, int sig_fd)
{
	/* one control server per array (a pool: each volume's), and a pool's own */
	unsigned n = serve_narrays(st), nctl = n + (st->nvols ? 1 : 0);
	struct ctl_server **cs = calloc(nctl, sizeof(*cs));
	struct pollfd *p = calloc(3 + nctl, sizeof(*p));
	struct metrics_http *mh = NULL;
	int rc = cs && p ? 0 : -ENOMEM;
	for (unsigned i = 0; i < nctl && !rc; i++) {
		struct serve_state *v = i < n ? serve_array_state(st, i) : st;
		rc = ctl_server_create(v->ctl_fd, i < n ? serve_ctl_handle : serve_pool_ctl_handle,
				       v, &cs[i]);
	}
	if (rc) {
		fprintf(stderr, "uraid serve: control socket: %s; stopping\n", strerror(-rc));
		goto out;
	}
	if (st->metrics_fd >= 0) {
		/* --metrics: the HTTP server, polled here as the control server is */
		rc = metrics_http_create(st->metrics_fd, st->nvols ? serve_pool_metrics_body
								    : metrics_serve_body, st, &mh);
		st->metrics_fd = -1;    /* taken over */
		if (rc) {
			fprintf(stderr, "uraid serve: --metrics: %s; stopping\n", strerror(-rc));
			goto out;
		}
	}
	struct serve_events *ev0 = serve_array_state(st, 0)->events;
	while (!serve_stop_requested(st)) {
		p[0] = (struct pollfd){ .fd = sig_fd, .events = POLLIN };
		p[1] = (struct pollfd){ .fd = mh ? metrics_http_fd(mh) : -1, .events = POLLIN };
		/* the engine tells one eventfd of a change in any of its arrays */
		p[2] = (struct pollfd){ .fd = serve_events_fd(ev0), .events = POLLIN };
		int timeout = mh ? metrics_http_timeout_ms(mh) : -1;
		for (unsigned i = 0; i < nctl; i++) {
			p[3 + i] = (struct pollfd){ .fd = ctl_server_fd(cs[i]), .events = POLLIN };
			timeout = min_timeout(timeout, ctl_server_timeout_ms(cs[i]));
		}
		for (unsigned i = 0; i < n; i++) {
			struct serve_state *v = serve_array_state(st, i);
			timeout = min_timeout(timeout, serve_events_timeout_ms(v->events));
			timeout = min_timeout(timeout, serve_grow_timeout_ms(v));
		}
		/* a pool looks at its volumes' failures every second too */
		if (st->nvols)
			timeout = min_timeout(timeout, 1000);
		if (poll(p, 3 + nctl, timeout) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "uraid serve: poll: %s; stopping\n", strerror(errno));
			break;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			if (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
				fprintf(stderr, "uraid serve: %s received; stopping\n",
					strsignal((int)si.ssi_signo));
				break;
			}
		}
		for (unsigned i = 0; i < nctl; i++)
			ctl_server_work(cs[i]);
		if (mh)
			metrics_http_work(mh);
		/* a change told to the first volume's eventfd may be another
		   volume's: each looks then. Told by what the first one read,
		   not by the poll's revents: a control verb handled above (a
		   pool's fail of a drive) changes arrays after the poll */
		bool changed = false;
		for (unsigned i = 0; i < n; i++) {
			struct serve_state *v = serve_array_state(st, i);
			if (i && changed)
				serve_events_poke(v->events);
			if (serve_events_work(v->events, v) && i == 0)
				changed = true;
			serve_grow_work(v);
		}
		if (st->nvols) {
			serve_pool_follow_failures(st);
			serve_pool_spare_work(st);
		}
	}
out:
	metrics_http_destroy(mh);
	for (unsigned i = 0; cs && i < nctl; i++)
		ctl_server_destroy(cs[i]);
	free(cs);
	free(p);
}

/*
 * The sockets go before the array is closed: closing lets the members go,
 * and a server started at once on them (after uraid stop) may then take
 * over these paths, which must not be unlinked under it.
 */
static void cleanup_sockets(struct serve_state *st)
{
	if (st->socket_created)
		unlink(st->socket_path);
	if (st->control_created)
		unlink(st->control_path);
	st->socket_created = st->control_created = false;
	if (st->registered)
		ctl_unregister_n(st->pool_name ? st->export_idx + 1 : 0);
	st->registered = false;
}

/* The pid file last (while it is there, the array may not be closed yet),
 * and only while it is still ours: a server started since may have written it. */
static void cleanup_files(struct serve_state *st)
{
	cleanup_sockets(st);
	if (!st->pid_file_written)
		return;
	char text[32];
	long pid = 0;
	if (uraid_file_read_at(AT_FDCWD, st->o->pid_file, text, sizeof(text)) > 0)
		pid = strtol(text, NULL, 10);
	if (pid == (long)getpid())
		unlink(st->o->pid_file);
}

/* Descriptors kept free for control clients (uraid status, stop) and the
 * engine's own needs, whatever the NBD clients do. */
#define FD_RESERVE (CTL_MAX_CLIENTS + 8)

/* As many descriptors as allowed: one per client connection. */
static void raise_fd_limit(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static unsigned open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	unsigned n = 0;
	if (!d)
		return 64;      /* a guess on the safe side */
	while (readdir(d))
		n++;
	closedir(d);
	return n > 3 ? n - 3 : 0;       /* ".", ".." and the directory's own */
}

/*
 * Connections that fit the open file limit with FD_RESERVE to spare: each
 * takes one descriptor, those being refused too. Lower than asked: a
 * warning, and the server serves fewer rather than run out of descriptors
 * (then it could not answer uraid status). 0: no room at all.
 */
static unsigned fit_connections(const struct serve_opts *o, unsigned *refusing)
{
	struct rlimit rl;
	unsigned want = o->max_connections ? o->max_connections : NBD_DEFAULT_MAX_CONNECTIONS;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) {
		*refusing = NBD_DEFAULT_MAX_REFUSING;
		return want;
	}
	uint64_t used = open_fds() + FD_RESERVE;
	uint64_t room = rl.rlim_cur > used ? rl.rlim_cur - used : 0;
	*refusing = NBD_DEFAULT_MAX_REFUSING;
	if (room >= (uint64_t)want + *refusing)
		return want;
	*refusing = room / 4 ? (unsigned)(room / 4) : 1;
	if (*refusing > NBD_DEFAULT_MAX_REFUSING)
		*refusing = NBD_DEFAULT_MAX_REFUSING;
	unsigned fit = room > *refusing ? (unsigned)(room - *refusing) : 0;
	if (fit > want)
		fit = want;
	if (fit)
		fprintf(stderr, "uraid serve: the open file limit (%llu) leaves room for %u client "
			"connections; serving at most %u at once (--max-connections=%u); raise it "
			"with ulimit -n\n", (unsigned long long)rl.rlim_cur, fit, fit, want);
	else
		fprintf(stderr, "uraid serve: the open file limit (%llu) leaves no descriptor for "
			"clients; raise it with ulimit -n\n", (unsigned long long)rl.rlim_cur);
	return fit;
}

/*
 * Assemble the array of these members with serve's options into st->array;
 * 0, or an exit status after a message (nothing left open).
 */
int serve_open_array(struct serve_state *st, const char *const *members, unsigned nmembers)
{
	char err[512];
	int rc;
	struct uraid_assemble_opts ao = {
		.paths = members, .npaths = nmembers,
		.flags = (st->o->force ? URAID_ASSEMBLE_FORCE : 0) |
			 (st->o->read_only ? URAID_ASSEMBLE_READONLY : 0) |
			 (st->o->run ? 0 : URAID_ASSEMBLE_COMPLETE),
		.write_cache = st->o->write_cache,
		.journal_mode = st->o->journal_mode,
		.cache_bytes = st->o->cache_bytes,
		.read_ahead_bytes = st->o->read_ahead_bytes,
	};
	/* stripe heads given as such go to assembly; memory needs the members' count */
	unsigned heads = 0;
	bool heads_later = st->o->stripe_cache &&
			   cli_parse_stripe_cache(st->o->stripe_cache, 0, &heads, err, sizeof(err)) == 0 &&
			   !isdigit((unsigned char)st->o->stripe_cache[strlen(st->o->stripe_cache) - 1]);
	ao.stripe_cache = heads_later ? 0 : heads;
	rc = serve_assemble(st, &ao, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "uraid serve: %s%s%s\n", st->pool_name ? st->export_name : "",
			st->pool_name ? ": " : "", err);
		return CLI_EXIT_FAIL;
	}
	if (heads_later) {
		rc = cli_array_stripe_cache(st->array, st->o->stripe_cache, &heads, err, sizeof(err));
		if (rc == 0 && (rc = uraid_array_set_stripe_cache(st->array, heads)) != 0)
			snprintf(err, sizeof(err), "%s", strerror(-rc));
		if (rc) {
			fprintf(stderr, "uraid serve: --stripe-cache=%s: %s\n", st->o->stripe_cache,
				err);
			serve_close_array(st);
			st->array = NULL;
			return rc == -ENOMEM ? CLI_EXIT_FAIL : CLI_EXIT_USAGE;
		}
	}
	if (uraid_array_sync_speed(st->array, st->o->speed_min, st->o->speed_max)) {
		/* one given, against the other's default */
		struct uraid_sync_status ss;
		uraid_array_sync_status(st->array, &ss);
		if (st->o->speed_min)
			fprintf(stderr, "uraid serve: --speed-min=%u is above the default maximum, "
				"%u KiB/s; give --speed-max too\n", st->o->speed_min, ss.max_kib_s);
		else
			fprintf(stderr, "uraid serve: --speed-max=%u is below the default minimum, "
				"%u KiB/s; give --speed-min too\n", st->o->speed_max, ss.min_kib_s);
		serve_close_array(st);
		st->array = NULL;
		return CLI_EXIT_USAGE;
	}
	return 0;
}

/* The export name: the one given, else the array's name without mdadm's
 * "homehost:". */
static void export_name_of(struct serve_state *st, const char *given)
{
	struct uraid_array_status *as = malloc(sizeof(*as));
	if (as && uraid_array_status(st->array, as) == 0) {
		const char *colon = strchr(as->name, ':');
		snprintf(st->export_name, sizeof(st->export_name), "%s",
			 given ? given : colon ? colon + 1 : as->name);
		/* a name from the superblock (any bytes a disk holds): control
		   characters become '_' (--name is checked when parsed) */
		for (char *c = st->export_name; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '_';
	}
	free(as);
}

static int run(struct serve_state *st, int sig_fd)
{
	char err[512];
	int rc;
	/* the library's messages, as the server's own: "uraid serve: ..." on stderr */
	static const char log_prefix[] = "uraid serve";
	const struct ulog log = { .fn = uraid_log_stderr, .opaque = (void *)log_prefix };
	if (st->o->tls_mode != NBD_TLS_OFF) {
		/* the keys are checked before any member is opened */
		struct nbd_tls_opts to = { .psk_file = st->o->tls_psk,
					   .cert_dir = st->o->tls_certificates,
					   .flags = st->o->tls_verify_peer ? NBD_TLS_VERIFY_PEER : 0,
					   .log = &log };
		rc = nbd_tls_creds_load(&to, &st->tls, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "uraid serve: %s\n", err);
			return CLI_EXIT_FAIL;
		}
	}
	struct uraid_engine_opts eo = { .reactors = st->o->threads, .flags = URAID_ENGINE_THREADS,
					.log = log.fn, .log_opaque = log.opaque };
	if (!(st->events = serve_events_create(&eo)))
		fprintf(stderr, "uraid serve: no events for uraid monitor: %s\n", strerror(errno));
	rc = uraid_engine_create(&eo, &st->engine);
	if (rc) {
		fprintf(stderr, "uraid serve: cannot start the engine: %s\n", strerror(-rc));
		return CLI_EXIT_FAIL;
	}
	if (st->o->nvols) {
		rc = serve_pool_open(st);
	} else {
		rc = serve_open_array(st, st->o->members, st->o->nmembers);
		if (rc == 0)
			export_name_of(st, st->o->name);
	}
	if (rc) {
		/* a pool's volumes opened before the one that failed */
		for (unsigned i = 0; i < st->nvols; i++)
			if (st->vols[i].array) {
				serve_close_array(&st->vols[i]);
				st->vols[i].array = NULL;
			}
		uraid_engine_destroy(st->engine);
		return rc;
	}

	int listen_fd = -1;
	int status = CLI_EXIT_FAIL;
	unsigned refusing = 0, max_conns = 0;
	if (default_paths(st) == 0 && open_listeners(st, &listen_fd) == 0 &&
	    (serve_pool_listen(st) != 0 ||
	     (max_conns = fit_connections(st->o, &refusing)) == 0)) {
		close(listen_fd);
		listen_fd = -1;
	} else if (listen_fd >= 0) {
		/* a pool's volumes: one export each (serve_pool.c) */
		struct nbd_server_export *exports = serve_pool_exports(st);
		struct nbd_server_opts so = {
			.engine = st->engine, .array = st->array, .name = st->export_name,
			.description = st->o->description, .read_only = st->o->read_only,
			.exports = exports, .nexports = exports ? st->nvols : 0,
			.listen_fds = { listen_fd }, .nlisten = 1,
			.max_connections = max_conns, .max_refusing = refusing,
			.handshake_timeout_ms = st->o->handshake_timeout_s * 1000u,
			.max_buffer_bytes = st->o->max_buffer_bytes,
			.tls_creds = st->tls, .tls_mode = st->o->tls_mode,
		};
		bool no_table = st->nvols && !exports;
		if (no_table)
			snprintf(err, sizeof(err), "out of memory");
		rc = no_table ? -ENOMEM : nbd_server_start(&so, &st->server, err, sizeof(err));
		free(exports);
		if (rc) {
			fprintf(stderr, "uraid serve: %s\n", err);
			close(listen_fd);
		} else {
			listen_fd = -1;         /* the server owns it now */
			st->start_ns = uraid_now_ns();
			/* listed: each array (a pool's volumes, not the pool: its socket
			   is found through them, serve_pool_ctl.c) */
			for (unsigned i = 0; i < serve_narrays(st); i++) {
				struct serve_state *v = serve_array_state(st, i);
				v->server = st->server;
				v->start_ns = st->start_ns;
				if (ctl_register_n(st->nvols ? i + 1 : 0, v->control_path,
						   st->o->listen ? NULL : st->socket_path, err,
						   sizeof(err)) == 0)
					v->registered = true;
				else
					fprintf(stderr, "uraid serve: not listed for `uraid status`: "
						"%s\n", err);
				serve_events_start(v->events, v);
				announce(v);
			}
			if (st->nvols)
				announce_pool(st);
			signal_ready(st);
			main_loop(st, sig_fd);
			cli_sd_notify("STOPPING=1\nSTATUS=stopping: finishing requests, flushing");
			nbd_server_stop(st->server, STOP_TIMEOUT_MS);
			nbd_server_destroy(st->server);
			status = CLI_EXIT_OK;
		}
	}
	if (st->metrics_fd >= 0)
		close(st->metrics_fd);
	free(st->metrics_page);
	st->metrics_page = NULL;
	cleanup_sockets(st);
	if (st->nvols && st->ctl_fd >= 0)
		close(st->ctl_fd);
	for (unsigned i = 0; i < serve_narrays(st); i++) {
		struct serve_state *v = serve_array_state(st, i);
		if (v->ctl_fd >= 0)
			close(v->ctl_fd);
		v->ctl_fd = -1;
		if (v != st) {
			free(v->metrics_page);
			v->metrics_page = NULL;
			cleanup_sockets(v);
		}
		if (!v->array)
			continue;
		struct uraid_array_status *fin = malloc(sizeof(*fin));
		bool dirty = fin && uraid_array_status(v->array, fin) == 0 && fin->resync_needed;
		free(fin);
		rc = serve_close_array(v);
		v->array = NULL;
		if (rc) {
			fprintf(stderr, "uraid serve: closing the array%s%s: %s\n",
				st->nvols ? " " : "", st->nvols ? v->export_name : "", strerror(-rc));
			status = CLI_EXIT_FAIL;
		} else if (status == CLI_EXIT_OK) {
			fprintf(stderr, "uraid serve: stopped; the array%s%s is flushed and %s\n",
				st->nvols ? " " : "", st->nvols ? v->export_name : "",
				st->o->read_only ? "was not written"
				: dirty ? "still needs a resync (it goes on from where it stopped)"
					: "marked clean");
		}
	}
	uraid_engine_destroy(st->engine);
	for (unsigned i = 0; status == CLI_EXIT_OK && i < serve_narrays(st); i++)
		serve_events_stop(serve_array_state(st, i)->events, serve_array_state(st, i));
	cleanup_files(st);
	return status;
}

int cmd_serve(int argc, char **argv)
{
	/* serve reads ahead by default (the library does not: an embedder opts in) */
	struct serve_opts o = { .read_ahead_bytes = URAID_READ_AHEAD_DEFAULT };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;

	struct serve_state st = { .o = &o, .ctl_fd = -1, .metrics_fd = -1 };
	raise_fd_limit();
	if (o.socket)
		snprintf(st.socket_path, sizeof(st.socket_path), "%s", o.socket);
	if (o.control)
		snprintf(st.control_path, sizeof(st.control_path), "%s", o.control);

	/* blocked before the engine starts its threads, so they inherit the mask
	   and the signals reach this thread's signalfd only */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	int sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sig_fd < 0) {
		fprintf(stderr, "uraid serve: signalfd: %s\n", strerror(errno));
		return CLI_EXIT_FAIL;
	}
	int status = run(&st, sig_fd);
	serve_events_destroy(st.events);        /* after the engine: its callback is gone */
	serve_pool_free(&st);
	serve_pool_volumes_free(&o);
	nbd_tls_creds_free(st.tls);
	close(sig_fd);
	return status;
}
