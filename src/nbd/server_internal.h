/* SPDX-License-Identifier: MIT */
/*
 * Private to the NBD server's files (nbd/server.h is its API): the server
 * (listening, the connection list) and one client connection, a state
 * machine driven by completions on the reactor the connection lives on.
 * Files: server.c (start, accept, stop), listen.c (sockets), conn.c
 * (receive: handshake, request parsing, payloads), conn_reply.c (array
 * requests and the reply queue), conn_tls.c (the connection over TLS:
 * STARTTLS, ciphertext to and from the reactor), limits.c (handshake
 * deadlines, request buffer memory).
 */
#ifndef URAID_NBD_SERVER_INTERNAL_H
#define URAID_NBD_SERVER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <uraid/engine.h>

#include "io/bufpool.h"
#include "io/reactor.h"
#include "nbd/proto.h"
#include "nbd/server.h"
#include "nbd/tls.h"

#define NBD_CONN_IN_BYTES   (128u << 10)    /* receive buffer: headers and small payloads */
#define NBD_CONN_DIRECT_MIN (64u << 10)    /* payload left to receive without a copy */
#define NBD_CONN_MAX_OPS    512u            /* requests in flight per connection */
#define NBD_CONN_MAX_BYTES  (256ull << 20)  /* their buffers, per connection */
#define NBD_CONN_SEND_IOV   64u             /* iovecs in one sendmsg (two per reply) */
/* A BLOCK_STATUS request's buffer: the reply's payload (context id, 8 bytes
 * per extent), then the engine's extents; reserved as READ data is, for as
 * many extents as the request may get (REQ_ONE: one). */
static inline unsigned nbd_bs_max_extents(uint16_t cmd_flags)
{
	return (cmd_flags & NBD_CMD_FLAG_REQ_ONE) ? 1u : NBD_BS_MAX_EXTENTS;
}

static inline uint32_t nbd_bs_ext_at(unsigned max_extents)
{
	return (4u + 8u * max_extents + 15u) & ~15u;
}

static inline uint32_t nbd_bs_buf_bytes(uint16_t cmd_flags)
{
	unsigned n = nbd_bs_max_extents(cmd_flags);

	return nbd_bs_ext_at(n) + n * (uint32_t)sizeof(struct uraid_extent);
}

struct nbd_conn;

/* One request, from its header to the end of its reply. */
struct nbd_op {
	union {
		struct uraid_io io;
		struct uraid_alloc_query aq;    /* BLOCK_STATUS */
	};
	struct nbd_conn *c;
	struct nbd_op *next;            /* free list / reply queue */
	uint64_t cookie, offset;
	uint32_t length;                /* of the request */
	uint32_t payload;               /* bytes after the header (WRITE or a rejected one) */
	uint16_t type, flags;
	int error;                      /* 0 or -errno, for the reply */
	bool flush_after;               /* FUA on TRIM/WRITE_ZEROES: a flush before replying */
	void *buf;                      /* READ data / WRITE payload (NULL: none, or drained) */
	size_t buf_len;
	uint32_t hdr_len, data_len, sent;   /* the reply: header bytes, data bytes, sent so far */
	uint32_t budget;                /* buffer bytes reserved for it (limits.c) */
	uint32_t bs_bytes;              /* BLOCK_STATUS: the reply's payload in buf */
	uint8_t hdr[NBD_CHUNK_HEADER_BYTES + 6 + NBD_MAX_ERRMSG];
};

/* The bytes of a reply's payload: lent by the array (a READ answered
 * from read-ahead's buffers, URAID_IO_LEND), else the op's buffer. */
static inline const uint8_t *nbd_op_data(const struct nbd_op *op)
{
	if (op->type == NBD_CMD_READ && op->io.lend.data)
		return op->io.lend.data;
	return op->buf;
}

struct nbd_conn {
	struct nbd_server *s;
	struct nbd_conn *next;          /* the server's list (s->lock) */
	/* the export chosen in the handshake (the first until then) */
	struct uraid_array *a;
	const struct nbd_export *ex;
	unsigned ridx;
	struct reactor *r;
	struct bufpool *pool;
	int fd;
	struct reactor_msg start_msg;

	/* phase */
	struct nbd_handshake *hs;       /* until transmission */
	bool transmission;
	bool no_more_input;             /* DISC, end of stream, stop: read nothing more */
	bool dead;                      /* socket error or cut: send nothing more */
	bool closed;
	bool started;                   /* start_msg has run: until then it must live */
	bool in_kick, kick_again;       /* completions can run inside a kick (see kick) */
	unsigned session;
	uint16_t tflags;

	/* limits (limits.c; this reactor's thread) */
	bool counted, refusing;         /* against max_conns / max_refusing */
	bool hs_tracked, mem_waiting;
	uint64_t hs_deadline_ns;
	struct nbd_conn *hs_prev, *hs_next;     /* its reactor's handshake list */
	struct nbd_conn *mem_prev, *mem_next;   /* waiting for buffer memory */
	struct nbd_conn *ref_prev, *ref_next;   /* being refused (reactor 0) */
	uint64_t shared_held;           /* of op_bytes, drawn from the shared pool */

	/* receiving */
	struct io_op recv_op;
	bool recv_busy, recv_direct;    /* recv_direct: into cur->buf, not `in` */
	uint8_t *in;
	uint32_t in_head, in_tail;
	struct nbd_op *cur;             /* the request whose payload is arriving */
	uint32_t cur_have;

	/* sending */
	struct io_op send_op;
	bool send_busy, send_hs;        /* send_hs: the handshake's output is on the wire */
	struct msghdr msg;
	struct iovec iov[NBD_CONN_SEND_IOV];
	struct nbd_op *sq_head, *sq_tail;

	/* TLS (NULL: plaintext; see conn_tls.c) */
	struct nbd_tls *tls;
	uint8_t *tls_stage;             /* small replies gathered into one record */
	bool tls_eof;                   /* the client closed: decrypt what is left, then stop */
	bool tls_bye;                   /* close_notify queued */

	/* requests */
	struct nbd_op *free_ops;
	unsigned nops;                  /* taken from the free list, not yet returned */
	uint64_t op_bytes;              /* buffer bytes they have reserved */
	unsigned in_engine;             /* submitted to the array, not completed */
	/* BLOCK_STATUS: one lookup in flight (it runs on the engine's metadata
	   worker, which many connections share), the others wait here in order;
	   they count in in_engine */
	bool bs_busy;
	struct nbd_op *bs_head, *bs_tail;
};

/* A listening socket and its accept on reactor 0; when accept fails for
 * want of descriptors or memory, a timer (backoff_op) before the next. */
struct nbd_listener {
	struct io_op accept_op, cancel_op;
	struct io_op backoff_op, backoff_cancel_op;
	struct __kernel_timespec backoff_ts;
	unsigned accept_errors;         /* in a row */
	int fd;
	struct nbd_server *s;
};

/* Lines of one kind a server may write: at most `burst` per window (all
 * reactors together), so that clients cannot flood the log (limits.c). */
struct nbd_log_limit {
	_Atomic uint64_t window_ns;     /* start of the current window (0: none yet) */
	_Atomic unsigned lines;         /* asked for in it */
	_Atomic uint64_t left_out;      /* since the last line written */
};

#define NBD_LOG_WINDOW_NS  (10 * 1000000000ull)
#define NBD_LOG_CONN_BURST 20u      /* per-connection lines per window */

/* The server's state on one reactor (limits.c). */
struct nbd_reactor {
	struct nbd_server *s;
	struct reactor *r;
	/* connections not yet in transmission, oldest first, and the timer
	   set for the first one's deadline */
	struct nbd_conn *hs_head, *hs_tail;
	struct io_op timer_op, timer_cancel_op;
	struct __kernel_timespec timer_ts;
	bool timer_armed;
	/* connections waiting for shared buffer memory, oldest first */
	struct nbd_conn *wait_head, *wait_tail;
	_Atomic bool has_waiters, wake_posted;
	struct reactor_msg wake_msg;
	_Atomic uint64_t held_bytes;    /* reserved by its connections (status) */
};

/* A message to one reactor about the server (stop or cut its connections). */
struct nbd_server_msg {
	struct reactor_msg m;
	struct nbd_server *s;
};

struct nbd_server {
	struct uraid_engine *e;
	/* the exports: ex[i] is served from a[i] (one table, as the handshake
	   takes it); their names and descriptions are the server's copies */
	struct nbd_export *ex;
	struct uraid_array **a;
	char **names, **descriptions;
	unsigned nex;
	unsigned nreactors;

	struct nbd_listener listeners[NBD_SERVER_MAX_LISTEN];
	unsigned nlisten;
	_Atomic unsigned accepts_armed;
	/* messages posted to reactors and cancels issued, not yet run or
	   completed: the server's memory must outlive them */
	_Atomic unsigned pending;
	_Atomic bool stopping;
	unsigned next_reactor;          /* reactor 0's thread only */
	const struct nbd_tls_creds *tls_creds;   /* NULL: no TLS */
	unsigned tls_mode;              /* enum nbd_tls_mode */
	struct reactor_msg start_accept_msg, stop_accept_msg;
	struct nbd_server_msg *stop_msgs;   /* one per reactor */
	struct nbd_server_msg *cut_msgs;

	pthread_mutex_t lock;           /* conns: changes are rare (connect, close) */
	struct nbd_conn *conns;
	_Atomic unsigned nconns;        /* all open, refused ones too */
	_Atomic uint64_t total_conns;

	/* limits */
	struct nbd_reactor *rs;         /* one per reactor */
	unsigned max_conns, max_refusing;
	uint64_t handshake_ns;
	uint64_t max_buf_bytes;
	uint64_t conn_share;            /* each connection's own share of it */
	uint64_t shared_cap;            /* the rest, shared */
	uint64_t conn_max_bytes;        /* one connection's back-pressure point */
	_Atomic unsigned served, refusing;
	_Atomic uint64_t refused;
	_Atomic uint64_t shared_used;
	_Atomic unsigned mem_waiters;
	struct nbd_log_limit refusal_log;       /* "refusing new ones": one a window */
	struct nbd_log_limit conn_log;          /* per-connection lines (nbd_conn_log) */
	struct nbd_conn *ref_head, *ref_tail;   /* being refused, oldest first (reactor 0) */
	char refuse_msg[160];
};

static inline struct nbd_conn *nbd_conn_of_recv(struct io_op *op)
{
	return (struct nbd_conn *)((char *)op - offsetof(struct nbd_conn, recv_op));
}

static inline struct nbd_conn *nbd_conn_of_send(struct io_op *op)
{
	return (struct nbd_conn *)((char *)op - offsetof(struct nbd_conn, send_op));
}

/* Back-pressure: requests stay unread (or encrypted) until some complete. */
static inline bool nbd_conn_held_back(const struct nbd_conn *c)
{
	return c->nops >= NBD_CONN_MAX_OPS || c->op_bytes >= c->s->conn_max_bytes;
}

/* conn.c */
void nbd_conn_start(struct reactor *r, struct reactor_msg *m);
void nbd_conn_kick(struct nbd_conn *c);
void nbd_conn_stop(struct nbd_conn *c);     /* stop reading; finish and close */
void nbd_conn_cut(struct nbd_conn *c);      /* shut the socket down now */
void nbd_conn_payload_complete(struct nbd_conn *c);
/* One line about a connection (a failed handshake, a bad request, ...),
 * rate-limited per server: what a client provokes must not flood the log. */
void nbd_conn_log(const struct nbd_conn *c, const char *what);
/* Room at the end of c->in for more input, plaintext or decrypted (moving
 * what is left to the front when little room remains); NULL while
 * back-pressure holds requests back or the buffer is full. */
uint8_t *nbd_conn_in_room(struct nbd_conn *c, size_t *len);

/* limits.c */
/* May a line limited by l be written now (any thread)? *left_out: how many
 * were not since the last one written, to say so. */
bool nbd_log_allow(struct nbd_log_limit *l, unsigned burst, uint64_t *left_out);
int nbd_limits_init(struct nbd_server *s, const struct nbd_server_opts *o);
void nbd_limits_fini(struct nbd_server *s);
void nbd_hs_track(struct nbd_conn *c);      /* on its reactor: deadline starts */
void nbd_hs_untrack(struct nbd_conn *c);    /* reached transmission, or closing */
void nbd_limits_stop(struct nbd_server *s, unsigned ridx);  /* on that reactor */
/* On reactor 0: c is to be refused; the oldest one being refused is cut
 * when there are max_refusing already. */
void nbd_refusing_add(struct nbd_conn *c);
void nbd_refusing_remove(struct nbd_conn *c);
/* Reserve need bytes of request buffers for c; false: none now, c is woken
 * (kicked) when memory is given back. */
bool nbd_mem_take(struct nbd_conn *c, uint32_t need);
void nbd_mem_give(struct nbd_conn *c, uint32_t len);
void nbd_mem_unwait(struct nbd_conn *c);

/* conn_reply.c */
struct nbd_op *nbd_op_get(struct nbd_conn *c);
void nbd_op_put(struct nbd_conn *c, struct nbd_op *op);
void *nbd_op_buf(struct nbd_conn *c, struct nbd_op *op, size_t len);
void nbd_op_start(struct nbd_conn *c, struct nbd_op *op);   /* to the array */
void nbd_op_reply(struct nbd_conn *c, struct nbd_op *op);   /* queue the reply */
void nbd_conn_send(struct nbd_conn *c);     /* sendmsg what is queued, if idle */
void nbd_conn_send_hs(struct nbd_conn *c, const void *buf, size_t n);  /* handshake output */
void nbd_conn_drop_replies(struct nbd_conn *c);
void nbd_conn_free_ops(struct nbd_conn *c);

/* conn_tls.c: the hooks conn.c and conn_reply.c call when c->tls is set */
int nbd_conn_tls_start(struct nbd_conn *c);         /* after STARTTLS's ACK went out */
bool nbd_conn_tls_handshake(struct nbd_conn *c);    /* true once TLS is up */
void nbd_conn_tls_input(struct nbd_conn *c);        /* decrypt; receive ciphertext */
void nbd_conn_tls_send(struct nbd_conn *c);         /* encrypt the replies; send */
void nbd_conn_tls_send_hs(struct nbd_conn *c);      /* the handshake's output */
bool nbd_conn_tls_closing(struct nbd_conn *c);      /* true while close_notify goes out */
void nbd_conn_tls_free(struct nbd_conn *c);

#endif
