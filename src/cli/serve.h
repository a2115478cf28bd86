/* SPDX-License-Identifier: MIT */
/* uraid serve: its options and running state (serve.c, serve_ctl.c). */
#ifndef URAID_CLI_SERVE_H
#define URAID_CLI_SERVE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <uraid/engine.h>

struct nbd_server;
struct nbd_tls_creds;
struct serve_events;

/* One volume of a pool served with the others (serve --pool without
 * --volume): its name and its members (pool_serve.c). */
struct serve_volume_spec {
	char name[64];
	char **members;                 /* as given to assembly (a range, a /dev node) */
	char **drives;                  /* the pool's drive each member is on */
	unsigned nmembers;
	uint64_t part_sectors;          /* its partitions' size, from the pool read at start */
};

struct serve_opts {
	const char *const *members;
	unsigned nmembers;
	const char *socket, *listen, *control;
	const char *metrics;            /* --metrics=HOST:PORT, NULL: none */
	const char *name, *description;
	const char *pid_file;
	unsigned socket_mode;
	unsigned threads;
	uint32_t speed_min, speed_max;  /* KiB/s, 0: md's defaults */
	const char *stripe_cache;       /* --stripe-cache (checked), NULL: the default */
	unsigned max_connections;       /* 0: the defaults (nbd/server.h) */
	unsigned handshake_timeout_s;
	uint64_t max_buffer_bytes;
	uint32_t write_cache;           /* --write-cache: URAID_WRITE_* */
	uint32_t journal_mode;          /* --journal-mode: URAID_JOURNAL_* */
	uint64_t cache_bytes;           /* --cache-size, 0: the library's default */
	int ready_fd;
	bool read_only, force;
	/* TLS, in nbdkit's words */
	unsigned tls_mode;              /* enum nbd_tls_mode */
	const char *tls_psk, *tls_certificates;
	bool tls_verify_peer;
	/* finding the members (serve_scan.c) */
	const char *config;             /* --config=FILE, NULL: the default */
	const char *uuid, *array_name;  /* --uuid, --array */
	const char *pool, *volume;      /* --pool, --volume (pool_serve.c) */
	/* --pool without --volume: every volume, one array each (else NULL) */
	struct serve_volume_spec *vols;
	unsigned nvols;
	uint8_t pool_uuid[16];          /* with vols: the pool's, from its labels */
	bool scan, list_arrays, verbose;
	bool scanned;                   /* the members are the ones found */
	bool run;                       /* --run: start with a member merely missing */
	uint64_t read_ahead_bytes;      /* --read-ahead: URAID_READ_AHEAD_DEFAULT unless given; URAID_READ_AHEAD_OFF */
};

struct serve_state {
	const struct serve_opts *o;
	struct uraid_engine *engine;
	struct uraid_array *array;
	/* RAID 50/60: the inner arrays too (array is nested->outer), else NULL */
	struct uraid_nested *nested;
	struct nbd_server *server;
	struct nbd_tls_creds *tls;
	struct serve_events *events;    /* tells uraid monitor (serve_events.c) */
	char export_name[256];
	char socket_path[512];
	char control_path[600];
	char endpoint[600];
	int ctl_fd;
	int metrics_fd;                 /* --metrics' listening socket, -1: none */
	char *metrics_page;             /* the last page rendered (metrics_serve_page) */
	size_t metrics_page_len;
	uint64_t metrics_page_ns;
	uint64_t start_ns;
	bool socket_created, control_created, registered, pid_file_written;
	bool stop_requested;
	/*
	 * A pool's volumes served together (serve_pool.c): this state is the
	 * pool's (export_name is the pool's name, array NULL; its control
	 * socket answers for the pool, serve_pool_ctl_handle), and each volume
	 * has a state of its own in vols: its array, its export (export_idx in
	 * the server's table), its control socket and events; the engine, the
	 * server and the NBD socket are shared.
	 */
	struct serve_state *vols;
	unsigned nvols;
	unsigned export_idx;            /* this array's export in the server's table */
	const char *pool_name;          /* a volume's: its pool (answers "POOL/VOLUME") */
	const struct serve_state *pool; /* a volume's: the pool's state */
	struct serve_volume_spec *spec; /* a volume's members and their drives */
	struct serve_pool_queue *spare_queue;   /* the pool's: spares to add (serve_pool_spare.c) */
	bool *was_faulty;               /* per spec member: faulty at the last look */
	uint8_t pool_uuid[16];          /* the pool's: its UUID, read at start */
	bool pool_uuid_known;           /* (a spare drive must carry it) */
};

/* The arrays served: a pool's volumes, or the one array. */
static inline unsigned serve_narrays(const struct serve_state *st)
{
	return st->nvols ? st->nvols : 1;
}

static inline struct serve_state *serve_array_state(struct serve_state *st, unsigned i)
{
	return st->nvols ? &st->vols[i] : st;
}

/* Assemble these members with serve's options into st->array (serve.c); 0
 * or an exit status after a message. */
int serve_open_array(struct serve_state *st, const char *const *members, unsigned nmembers);

/* serve_pool.c: a pool's volumes served together. Each is a no-op (0, NULL)
 * for one array. */
int serve_pool_open(struct serve_state *st);            /* assemble every volume */
int serve_pool_listen(struct serve_state *st);          /* each volume's control socket */
/* The server's export table (malloc'd; NULL for one array, or no memory). */
struct nbd_server_export *serve_pool_exports(struct serve_state *st);
void serve_pool_free(struct serve_state *st);
/* Has stop been asked for, on any control socket? */
bool serve_stop_requested(const struct serve_state *st);
/* --metrics and the pool's "metrics" verb: every volume's, merged. */
int serve_pool_metrics_body(void *pool_state, FILE *out);

/*
 * --scan, --uuid, --array, --list-arrays: argv[first..] are globs. Returns
 * an exit status (done, or refused with the message printed), or -1 with
 * the command line to parse instead in *new_argc and *new_argv: the ARRAY
 * line's serve options, argv's options, "--" and the members found.
 */
int serve_scan_args(int argc, char **argv, int first, const struct serve_opts *o,
		    int *new_argc, char ***new_argv);

/* Assemble what the members hold (a nested RAID 50/60's inner arrays and
 * the RAID 0 over them, or one array) into st->array; close it. */
int serve_assemble(struct serve_state *st, const struct uraid_assemble_opts *ao, char *err,
		   size_t errlen);
int serve_close_array(struct serve_state *st);
/* The array that holds member `path` (an inner one of a nested array) and
 * its index there (-1 and st->array: none). */
struct uraid_array *serve_member_array(const struct serve_state *st, const char *path,
				       int *idx);
/* Where `add` puts a spare: st->array, or for a nested array the first
 * degraded inner one (NULL, with the reason in err: none is). */
struct uraid_array *serve_add_target(const struct serve_state *st, char *err, size_t errlen);
/* The state of member `path` in the array that holds it (an inner one of
 * a RAID 50/60); URAID_MEMBER_MISSING when no array of st has it. */
enum uraid_member_state serve_member_state(const struct serve_state *st, const char *path);
/* Is the served array degraded, or for a RAID 50/60 one of its inner arrays? */
bool serve_degraded(const struct serve_state *st);
/* --pool without --volume: each volume's members into o->vols (pool_serve.c);
 * 0, or an exit status after a message. */
int serve_pool_volumes(int argc, char **argv, int first, struct serve_opts *o);
void serve_pool_volumes_free(struct serve_opts *o);

/* Answer one control request into out (serve_ctl.c; a ctl_handler_fn, arg
 * the serve_state). */
struct ctl_request;
void serve_ctl_handle(void *arg, const struct ctl_request *rq, FILE *out);
/* The "tune" verb: show or change the run-time settings (serve_tune.c). */
void serve_tune_verb(void *arg, const struct ctl_request *rq, FILE *out);
/* The "grow" verb: plan or make a change of geometry or size (serve_grow.c). */
void serve_grow_verb(void *arg, const struct ctl_request *rq, FILE *out);
/* Steps of a grow waiting for a job: the poll timeout while some wait (-1:
 * none), and carrying them out when their wait is over (the main loop). */
int serve_grow_timeout_ms(struct serve_state *st);
void serve_grow_work(struct serve_state *st);

/* The pool's control socket (serve_pool_ctl.c; a ctl_handler_fn, arg the
 * pool's serve_state): status of every volume, fail/add of a whole drive,
 * the other verbs refused with how to name a volume. */
void serve_pool_ctl_handle(void *arg, const struct ctl_request *rq, FILE *out);
/* A member of one volume failed: fail the same drive's members in the other
 * volumes (the main loop, after the events; serve_pool_ctl.c). */
void serve_pool_follow_failures(struct serve_state *pool);
/* "add DRIVE" on the pool's socket: a partition on the drive for each
 * degraded volume, added as spares one volume at a time; the main loop
 * adds the next when a rebuild ends (serve_pool_spare.c). */
void serve_pool_add_drive(struct serve_state *pool, const struct ctl_request *rq, FILE *out);
void serve_pool_spare_work(struct serve_state *pool);
bool serve_pool_rebuilding(const struct serve_state *pool);
void serve_pool_spare_free(struct serve_state *pool);

/* Two paths name the same drive (the same string, or the same file). */
bool serve_pool_same_drive(const char *a, const char *b);

#endif
