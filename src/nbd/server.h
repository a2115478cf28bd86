/* SPDX-License-Identifier: MIT */
/*
 * The NBD server: one array (or several, one export each) exported over Unix or TCP sockets, served by the
 * engine's reactors (no thread per connection). Reactor 0 accepts; each new
 * connection goes to the next reactor in turn and lives there: its socket
 * operations, its array requests and their completions all run on that
 * reactor's thread, so a connection takes no lock per request.
 *
 * The engine must run its own threads (URAID_ENGINE_THREADS).
 */
#ifndef URAID_NBD_SERVER_H
#define URAID_NBD_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uraid/engine.h>

#define NBD_SERVER_MAX_LISTEN 8

/* Limits (0 in the options: these defaults). */
#define NBD_DEFAULT_MAX_CONNECTIONS   64u
#define NBD_DEFAULT_MAX_REFUSING      16u
#define NBD_DEFAULT_HANDSHAKE_MS      10000u
#define NBD_DEFAULT_MAX_BUFFER_BYTES  (1ull << 30)
/* The largest request (32 MiB) must fit in the shared half (at least half
 * of this, whatever --max-connections is), so that any one connection can
 * always make one, beyond its own share, once the others give memory back. */
#define NBD_MIN_BUFFER_BYTES          (64ull << 20)

struct nbd_server;
struct nbd_tls_creds;

/* One export of a server that serves several (a pool's volumes). */
struct nbd_server_export {
	struct uraid_array *array;
	const char *name;               /* distinct, not "" */
	const char *description;        /* NULL: none */
};

struct nbd_server_opts {
	struct uraid_engine *engine;
	/* one array: */
	struct uraid_array *array;
	const char *name;               /* export name (the default "" also answers) */
	const char *description;        /* NULL: none */
	/* or several (nexports > 0; array, name and description unused): the
	   client picks one by name, "" picks none unless there is only one */
	const struct nbd_server_export *exports;
	unsigned nexports;              /* at most NBD_MAX_EXPORTS (nbd/proto.h) */
	bool read_only;
	int listen_fds[NBD_SERVER_MAX_LISTEN];  /* listening sockets, taken over */
	unsigned nlisten;
	/*
	 * Connections served at once; the next ones are greeted and refused
	 * (NBD_REP_ERR_POLICY with the reason), at most max_refusing of them
	 * at a time: a new one beyond those makes the oldest one being refused
	 * cut, and is itself told why.
	 */
	unsigned max_connections, max_refusing;
	/* A client not in transmission this long after it connected is cut. */
	unsigned handshake_timeout_ms;
	/*
	 * Request buffers of all connections together (>= NBD_MIN_BUFFER_BYTES).
	 * Half is shared; the other half is split into a share each connection
	 * can always use, so that clients that take all they can (and never
	 * read the replies) cannot starve the others. A request that finds no
	 * room waits (its header stays unread) until buffers are freed.
	 */
	uint64_t max_buffer_bytes;
	const struct nbd_tls_creds *tls_creds;  /* NULL: no TLS; must outlive the server */
	unsigned tls_mode;              /* enum nbd_tls_mode (NBD_TLS_OFF without creds) */
};

/* What the limits hold now (for uraid status). */
struct nbd_server_usage {
	unsigned connections, max_connections;   /* served (counted against the limit) */
	unsigned refusing;                       /* being refused now */
	uint64_t refused;                        /* since start */
	unsigned handshake_timeout_ms;
	uint64_t buffer_bytes, max_buffer_bytes; /* request buffers held */
	uint64_t buffer_share_bytes;             /* each connection's own share */
	unsigned waiting_for_memory;             /* connections with a request waiting */
};

/* Listening sockets. Unix: an existing socket file is replaced only when no
 * server answers on it; created with mode (e.g. 0600). TCP: "HOST:PORT",
 * "[V6]:PORT" or ":PORT" (all addresses); port 0 picks one, see
 * nbd_listen_port. Return the descriptor or -errno (reason in err). */
int nbd_listen_unix(const char *path, unsigned mode, char *err, size_t errlen);
int nbd_listen_tcp(const char *hostport, char *err, size_t errlen);
int nbd_listen_port(int fd);
/* Does the socket listen on loopback only (127.0.0.0/8, ::1, or Unix)? */
bool nbd_listen_loopback(int fd);

int nbd_server_start(const struct nbd_server_opts *o, struct nbd_server **out, char *err,
		     size_t errlen);

/* Serve a client connected already (a socketpair's end, say), as if it had
 * been accepted: counted, limited and refused the same way. fd is taken
 * over. 0, or -ENOMEM / -ESHUTDOWN (fd closed). */
int nbd_server_add_client(struct nbd_server *s, int fd);

/* Connections served now (not those being refused), and since start. */
unsigned nbd_server_connections(struct nbd_server *s);
uint64_t nbd_server_connections_total(struct nbd_server *s);
void nbd_server_usage(struct nbd_server *s, struct nbd_server_usage *u);
/* The array's size changed (uraid grow): new connections are told the new
 * size, and requests of every connection are checked against it. */
void nbd_server_set_size(struct nbd_server *s, uint64_t bytes);
/* The same for export idx of a server with several (0: the first). */
void nbd_server_set_export_size(struct nbd_server *s, unsigned idx, uint64_t bytes);

/*
 * Stop: no more connections; every connection stops reading requests,
 * finishes the ones in flight, sends their replies and closes. Returns when
 * all are closed (after timeout_ms, connections still open are cut: their
 * sockets shut down). Then the array can be closed.
 */
void nbd_server_stop(struct nbd_server *s, unsigned timeout_ms);
void nbd_server_destroy(struct nbd_server *s);

#endif
