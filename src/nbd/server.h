/* SPDX-License-Identifier: MIT */
/*
 * The NBD server: one array exported over Unix or TCP sockets, served by the
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

struct nbd_server;
struct nbd_tls_creds;

struct nbd_server_opts {
	struct uraid_engine *engine;
	struct uraid_array *array;
	const char *name;               /* export name (the default "" also answers) */
	const char *description;        /* NULL: none */
	bool read_only;
	int listen_fds[NBD_SERVER_MAX_LISTEN];  /* listening sockets, taken over */
	unsigned nlisten;
	const struct nbd_tls_creds *tls_creds;  /* NULL: no TLS; must outlive the server */
	unsigned tls_mode;              /* enum nbd_tls_mode (NBD_TLS_OFF without creds) */
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

/* Connections open now, and served since start. */
unsigned nbd_server_connections(struct nbd_server *s);
uint64_t nbd_server_connections_total(struct nbd_server *s);

/*
 * Stop: no more connections; every connection stops reading requests,
 * finishes the ones in flight, sends their replies and closes. Returns when
 * all are closed (after timeout_ms, connections still open are cut: their
 * sockets shut down). Then the array can be closed.
 */
void nbd_server_stop(struct nbd_server *s, unsigned timeout_ms);
void nbd_server_destroy(struct nbd_server *s);

#endif
