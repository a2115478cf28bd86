/* SPDX-License-Identifier: MIT */
/*
 * The NBD protocol as uraid serves it: wire constants, the export description,
 * the server side of the fixed newstyle handshake (a state machine fed with
 * bytes), the transmission-phase request parser and the reply encoders.
 * Pure protocol: no sockets, no allocation, no engine. Every function that
 * can fail returns 0 (or a count) or a negative errno.
 *
 * Reference: doc/proto.md of the NetworkBlockDevice/nbd project. All
 * integers on the wire are big-endian.
 */
#ifndef URAID_NBD_PROTO_H
#define URAID_NBD_PROTO_H

#include <stddef.h>
#include <stdint.h>

/* ---- magics ---- */
#define NBD_MAGIC                  0x4e42444d41474943ull  /* "NBDMAGIC" */
#define NBD_OPTS_MAGIC             0x49484156454f5054ull  /* "IHAVEOPT" */
#define NBD_REP_MAGIC              0x0003e889045565a9ull  /* option replies */
#define NBD_REQUEST_MAGIC          0x25609513u
#define NBD_SIMPLE_REPLY_MAGIC     0x67446698u
#define NBD_STRUCTURED_REPLY_MAGIC 0x668e33efu

/* ---- handshake flags (server, 16 bits) and client flags (32 bits) ---- */
#define NBD_FLAG_FIXED_NEWSTYLE    (1u << 0)
#define NBD_FLAG_NO_ZEROES         (1u << 1)
#define NBD_FLAG_C_FIXED_NEWSTYLE  (1u << 0)
#define NBD_FLAG_C_NO_ZEROES       (1u << 1)

/* ---- transmission flags (16 bits) ---- */
#define NBD_FLAG_HAS_FLAGS         (1u << 0)
#define NBD_FLAG_READ_ONLY         (1u << 1)
#define NBD_FLAG_SEND_FLUSH        (1u << 2)
#define NBD_FLAG_SEND_FUA          (1u << 3)
#define NBD_FLAG_ROTATIONAL        (1u << 4)
#define NBD_FLAG_SEND_TRIM         (1u << 5)
#define NBD_FLAG_SEND_WRITE_ZEROES (1u << 6)
#define NBD_FLAG_SEND_DF           (1u << 7)
#define NBD_FLAG_CAN_MULTI_CONN    (1u << 8)
#define NBD_FLAG_SEND_RESIZE       (1u << 9)
#define NBD_FLAG_SEND_CACHE        (1u << 10)
#define NBD_FLAG_SEND_FAST_ZERO    (1u << 11)

/* ---- options ---- */
#define NBD_OPT_EXPORT_NAME        1
#define NBD_OPT_ABORT              2
#define NBD_OPT_LIST               3
#define NBD_OPT_PEEK_EXPORT        4   /* withdrawn */
#define NBD_OPT_STARTTLS           5
#define NBD_OPT_INFO               6
#define NBD_OPT_GO                 7
#define NBD_OPT_STRUCTURED_REPLY   8
#define NBD_OPT_LIST_META_CONTEXT  9
#define NBD_OPT_SET_META_CONTEXT   10
#define NBD_OPT_EXTENDED_HEADERS   11  /* later than the spec revision used here */

/* ---- option reply types ---- */
#define NBD_REP_ACK                1
#define NBD_REP_SERVER             2
#define NBD_REP_INFO               3
#define NBD_REP_META_CONTEXT       4
#define NBD_REP_FLAG_ERROR         (1u << 31)
#define NBD_REP_ERR_UNSUP          (NBD_REP_FLAG_ERROR | 1)
#define NBD_REP_ERR_POLICY         (NBD_REP_FLAG_ERROR | 2)
#define NBD_REP_ERR_INVALID        (NBD_REP_FLAG_ERROR | 3)
#define NBD_REP_ERR_PLATFORM       (NBD_REP_FLAG_ERROR | 4)
#define NBD_REP_ERR_TLS_REQD       (NBD_REP_FLAG_ERROR | 5)
#define NBD_REP_ERR_UNKNOWN        (NBD_REP_FLAG_ERROR | 6)
#define NBD_REP_ERR_SHUTDOWN       (NBD_REP_FLAG_ERROR | 7)
#define NBD_REP_ERR_BLOCK_SIZE_REQD (NBD_REP_FLAG_ERROR | 8)
#define NBD_REP_ERR_TOO_BIG        (NBD_REP_FLAG_ERROR | 9)

/* ---- NBD_REP_INFO information types ---- */
#define NBD_INFO_EXPORT            0
#define NBD_INFO_NAME              1
#define NBD_INFO_DESCRIPTION       2
#define NBD_INFO_BLOCK_SIZE        3

/* ---- commands and command flags ---- */
#define NBD_CMD_READ               0
#define NBD_CMD_WRITE              1
#define NBD_CMD_DISC               2
#define NBD_CMD_FLUSH              3
#define NBD_CMD_TRIM               4
#define NBD_CMD_CACHE              5
#define NBD_CMD_WRITE_ZEROES       6
#define NBD_CMD_BLOCK_STATUS       7
#define NBD_CMD_RESIZE             8

#define NBD_CMD_FLAG_FUA           (1u << 0)
#define NBD_CMD_FLAG_NO_HOLE       (1u << 1)
#define NBD_CMD_FLAG_DF            (1u << 2)
#define NBD_CMD_FLAG_REQ_ONE       (1u << 3)
#define NBD_CMD_FLAG_FAST_ZERO     (1u << 4)

/* ---- structured replies ---- */
#define NBD_REPLY_FLAG_DONE        (1u << 0)
#define NBD_REPLY_TYPE_NONE        0
#define NBD_REPLY_TYPE_OFFSET_DATA 1
#define NBD_REPLY_TYPE_OFFSET_HOLE 2
#define NBD_REPLY_TYPE_BLOCK_STATUS 5
#define NBD_REPLY_TYPE_ERROR       ((1u << 15) | 1)
#define NBD_REPLY_TYPE_ERROR_OFFSET ((1u << 15) | 2)

/* ---- metadata contexts ---- */
#define NBD_META_BASE_ALLOCATION   "base:allocation"
#define NBD_META_ID_ALLOCATION     1u   /* its id in replies to SET_META_CONTEXT */
#define NBD_STATE_HOLE             (1u << 0)   /* base:allocation flags */
#define NBD_STATE_ZERO             (1u << 1)
/* Extents in one BLOCK_STATUS reply (the spec asks for at most 2^20); a
 * client asks again from where they end. */
#define NBD_BS_MAX_EXTENTS         512u

/* ---- error values on the wire (not the host's errno numbers) ---- */
#define NBD_EPERM                  1
#define NBD_EIO                    5
#define NBD_ENOMEM                 12
#define NBD_EINVAL                 22
#define NBD_ENOSPC                 28
#define NBD_EOVERFLOW              75
#define NBD_ENOTSUP                95
#define NBD_ESHUTDOWN              108

/* ---- sizes ---- */
#define NBD_GREETING_BYTES         18   /* NBDMAGIC, IHAVEOPT, handshake flags */
#define NBD_OPT_HEADER_BYTES       16   /* IHAVEOPT, option, length */
#define NBD_REP_HEADER_BYTES       20   /* magic, option, type, length */
#define NBD_REQUEST_BYTES          28
#define NBD_SIMPLE_REPLY_BYTES     16
#define NBD_CHUNK_HEADER_BYTES     20
#define NBD_CHUNK_DATA_HEADER_BYTES 28  /* chunk header + 64-bit offset */
#define NBD_MAX_STRING             4096 /* names, descriptions, messages (spec) */
#define NBD_MAX_ERRMSG             256  /* what uraid puts in an error message */
/* Option payloads kept in memory: a GO/INFO with a name of NBD_MAX_STRING
 * bytes and up to 1024 information requests. Larger options are skipped
 * (never stored) and answered NBD_REP_ERR_TOO_BIG (or ERR_UNSUP/INVALID);
 * options longer than NBD_OPT_SKIP_MAX end the session (denial of service). */
#define NBD_OPT_DATA_MAX           (4 + NBD_MAX_STRING + 2 + 2 * 1024)
#define NBD_OPT_SKIP_MAX           (1u << 20)
/* Write payloads longer than this are never drained: the connection closes. */
#define NBD_DRAIN_MAX              (32u << 20)

/* Block sizes uraid advertises (NBD_INFO_BLOCK_SIZE). */
#define NBD_MIN_BLOCK              512u
#define NBD_MAX_BLOCK              (32u << 20)

/* ---- the export ---- */
#define NBD_EXPORT_READ_ONLY       (1u << 0)  /* refuse writes (EPERM) */
#define NBD_EXPORT_FLUSH           (1u << 1)  /* supports NBD_CMD_FLUSH */
#define NBD_EXPORT_FUA             (1u << 2)  /* supports NBD_CMD_FLAG_FUA */
#define NBD_EXPORT_TRIM            (1u << 3)
#define NBD_EXPORT_WRITE_ZEROES    (1u << 4)  /* with NBD_CMD_FLAG_NO_HOLE */
#define NBD_EXPORT_FAST_ZERO       (1u << 5)  /* answers FAST_ZERO (maybe ENOTSUP) */
/* A flush (or FUA) on one connection covers writes completed on every
 * connection: only then is NBD_FLAG_CAN_MULTI_CONN advertised. */
#define NBD_EXPORT_FLUSH_ALL_CONNS (1u << 6)
#define NBD_EXPORT_ROTATIONAL      (1u << 7)
#define NBD_EXPORT_NO_LIST         (1u << 8)  /* NBD_OPT_LIST: ERR_POLICY */

struct nbd_export {
	const char *name;         /* canonical name (also answers to ""), <= 4096 bytes */
	const char *description;  /* NULL or "" for none */
	uint64_t size;            /* bytes, a multiple of min_block */
	uint32_t min_block;       /* power of 2, <= 65536 */
	uint32_t pref_block;      /* power of 2, >= max(min_block, 512), <= max_block */
	uint32_t max_block;       /* multiple of min_block, >= min(pref_block, size) */
	unsigned flags;           /* NBD_EXPORT_* */
};

/* Fill the block sizes uraid advertises: minimum 512, maximum 32 MiB and the
 * preferred size from a hint (the stripe width, or 0 for 4096), rounded down
 * to a power of two and kept within [512, 32 MiB]. */
void nbd_export_block_sizes(struct nbd_export *ex, uint64_t preferred_hint);

/* 0 when ex satisfies the spec's constraints, else -EINVAL. */
int nbd_export_check(const struct nbd_export *ex);

/* What a session negotiated (a flags word). */
#define NBD_SESSION_STRUCTURED     (1u << 0)  /* NBD_OPT_STRUCTURED_REPLY acked */
#define NBD_SESSION_BLOCK_SIZE     (1u << 1)  /* GO asked for NBD_INFO_BLOCK_SIZE */
#define NBD_SESSION_NO_ZEROES      (1u << 2)  /* client set NBD_FLAG_C_NO_ZEROES */
/* SET_META_CONTEXT selected base:allocation (structured replies were on):
 * NBD_CMD_BLOCK_STATUS is accepted */
#define NBD_SESSION_ALLOCATION     (1u << 3)

/* The transmission flags for ex in a session (NBD_SESSION_*). A read-only
 * export advertises no FUA, TRIM or WRITE_ZEROES; SEND_DF only with
 * structured replies; CAN_MULTI_CONN only with NBD_EXPORT_FLUSH_ALL_CONNS. */
uint16_t nbd_tflags(const struct nbd_export *ex, unsigned session);

/* The one mapping of a (negative or positive) errno to an NBD error value:
 * 0 -> 0; EPERM/EROFS/EACCES -> EPERM; ENOMEM -> ENOMEM; EINVAL -> EINVAL;
 * ENOSPC/EDQUOT/EFBIG -> ENOSPC; EOVERFLOW -> EOVERFLOW; ENOTSUP -> ENOTSUP;
 * ESHUTDOWN -> ESHUTDOWN; anything else -> EIO. */
uint32_t nbd_errno_to_wire(int err);

/* ---- handshake ---- */
enum nbd_hs_status {
	NBD_HS_NEGOTIATING = 0,
	NBD_HS_TRANSMISSION,   /* export chosen: enter transmission after the output is sent */
	NBD_HS_ABORTED,        /* client sent NBD_OPT_ABORT: send the output, then close */
	NBD_HS_FAILED,         /* protocol violation: close now (why says what) */
	NBD_HS_STARTTLS,       /* STARTTLS acked: send the output, then run the TLS
				  handshake and call nbd_hs_tls_started; bytes the
				  client sent after the option are not options */
};

/* The server's TLS policy (doc/proto.md's modes). */
enum nbd_tls_mode {
	NBD_TLS_OFF = 0,       /* NOTLS: STARTTLS gets NBD_REP_ERR_POLICY */
	NBD_TLS_ON,            /* SELECTIVETLS with no TLS-only export: plain and TLS clients */
	NBD_TLS_REQUIRE,       /* FORCEDTLS: every option but STARTTLS and ABORT gets
				  NBD_REP_ERR_TLS_REQD until TLS is up; EXPORT_NAME closes */
};

/* The longest answer to one option (GO with name and description, or LIST),
 * and the output buffer: room for a few of them. */
#define NBD_HS_REPLY_MAX           (6 * NBD_REP_HEADER_BYTES + 2 * NBD_MAX_STRING + 64 + NBD_MAX_ERRMSG)
#define NBD_MAX_EXPORTS            128  /* exports one server serves */
#define NBD_HS_OUT_BYTES           (3 * NBD_HS_REPLY_MAX)

struct nbd_handshake {
	/* results: valid once status != NBD_HS_NEGOTIATING */
	int status;                  /* enum nbd_hs_status */
	const char *why;             /* FAILED/ABORTED: a reason for the log */
	uint32_t client_flags;
	unsigned session;            /* NBD_SESSION_* */
	uint16_t tflags;             /* transmission flags sent with the export */
	uint32_t name_len;           /* the name the client chose (may be "") */
	char name[NBD_MAX_STRING + 1];

	unsigned tls_mode;           /* enum nbd_tls_mode (nbd_hs_set_tls) */
	unsigned tls_active;         /* the options now arrive over TLS */

	int chosen;                  /* TRANSMISSION: the index of the export chosen */

	/* private */
	const struct nbd_export *ex;  /* the export table (nex of them) */
	unsigned nex;
	/* the export the last SET_META_CONTEXT named: its contexts count only
	   if GO chooses that one (proto.md) */
	int meta_export;
	char unknown_msg[NBD_MAX_ERRMSG + 1];   /* "no export 'X'; the exports: ..." */
	unsigned stage;
	unsigned shutdown;
	const char *refuse;          /* nbd_hs_refuse's message */
	uint32_t opt, opt_len, opt_have;
	uint32_t hdr_have;
	uint8_t hdr[NBD_OPT_HEADER_BYTES];
	uint8_t data[NBD_OPT_DATA_MAX];
	size_t out_head, out_tail;
	uint8_t out[NBD_HS_OUT_BYTES];
};

/* Start a handshake for ex (which must outlive hs): queues the greeting.
 * -EINVAL if ex fails nbd_export_check. */
int nbd_hs_init(struct nbd_handshake *hs, const struct nbd_export *ex);
/*
 * The same for a table of n exports (1..NBD_MAX_EXPORTS, names distinct,
 * checked with nbd_exports_check): LIST lists them all, INFO/GO and the
 * meta context options pick one by name, an unknown name gets ERR_UNKNOWN
 * with a message naming the exports; the default name "" answers only when
 * there is one export. hs->chosen says which one the client chose.
 */
int nbd_hs_init_table(struct nbd_handshake *hs, const struct nbd_export *ex, unsigned n);
/* 0 when the table can be served: each export passes nbd_export_check, the
 * names are distinct (and not "" when there are several), and the answer to
 * NBD_OPT_LIST fits the handshake's output buffer; else -EINVAL. */
int nbd_exports_check(const struct nbd_export *ex, unsigned n);

/* Feed bytes from the client. Returns how many were consumed: fewer than len
 * when the handshake ended (the rest belong to the transmission phase) or
 * when the output must be drained before the next option is read (then
 * nbd_hs_output is non-empty). Never fails: see hs->status. */
size_t nbd_hs_input(struct nbd_handshake *hs, const uint8_t *buf, size_t len);

/* Bytes to send to the client: returns their count and points *buf at them. */
size_t nbd_hs_output(const struct nbd_handshake *hs, const uint8_t **buf);

/* n bytes of the output were sent. */
void nbd_hs_sent(struct nbd_handshake *hs, size_t n);

/* The server is shutting down: further options (but ABORT) get ERR_SHUTDOWN. */
void nbd_hs_shutdown(struct nbd_handshake *hs);

/* The server will not serve this client (too many connections): every
 * option but ABORT gets NBD_REP_ERR_POLICY with msg (which must outlive hs),
 * EXPORT_NAME (which cannot be answered with an error) closes. */
void nbd_hs_refuse(struct nbd_handshake *hs, const char *msg);

/* The TLS policy for this session (before any input; NBD_TLS_OFF by default). */
void nbd_hs_set_tls(struct nbd_handshake *hs, enum nbd_tls_mode mode);

/* After NBD_HS_STARTTLS: the TLS handshake succeeded, the options go on over
 * TLS. What was negotiated before is forgotten (structured replies), as the
 * spec asks. -EINVAL unless the status was NBD_HS_STARTTLS. */
int nbd_hs_tls_started(struct nbd_handshake *hs);

/* ---- transmission: requests ---- */
enum nbd_req_verdict {
	NBD_REQ_OK = 0,        /* execute it (a WRITE's payload follows) */
	NBD_REQ_ERROR,         /* reply rq->error; discard rq->payload bytes first */
	NBD_REQ_DISC,          /* NBD_CMD_DISC: finish in-flight requests, close */
	NBD_REQ_CLOSE,         /* unrecoverable: close the connection now */
};

struct nbd_request {
	uint16_t flags;            /* NBD_CMD_FLAG_* */
	uint16_t type;             /* NBD_CMD_* */
	uint64_t cookie;           /* the client's handle, echoed in the reply */
	uint64_t offset;
	uint32_t length;
	uint32_t payload;          /* bytes following the header (WRITE: length) */
	int error;                 /* -errno for NBD_REQ_ERROR/NBD_REQ_CLOSE */
};

/* Decode and validate one request header against the export, the
 * transmission flags sent and what the session negotiated (NBD_SESSION_*:
 * BLOCK_STATUS needs NBD_SESSION_ALLOCATION). Returns an enum
 * nbd_req_verdict; rq is filled in every case (cookie included, for the
 * error reply). */
int nbd_request_parse(const uint8_t hdr[NBD_REQUEST_BYTES], const struct nbd_export *ex,
		      uint16_t tflags, unsigned session, struct nbd_request *rq);

/* ---- transmission: replies (return bytes written, 0 when cap is too small) ---- */

/* A simple reply: error is 0 or a negative errno (mapped with nbd_errno_to_wire). */
size_t nbd_simple_reply(uint8_t out[NBD_SIMPLE_REPLY_BYTES], uint64_t cookie, int error);

/* A structured chunk header. */
size_t nbd_chunk_header(uint8_t out[NBD_CHUNK_HEADER_BYTES], uint64_t cookie, uint16_t flags,
			uint16_t type, uint32_t length);

/* NBD_REPLY_TYPE_OFFSET_DATA header for data_len (1 .. 2^32 - 9) bytes at
 * offset; the data follows. */
size_t nbd_chunk_data(uint8_t out[NBD_CHUNK_DATA_HEADER_BYTES], uint64_t cookie, uint16_t flags,
		      uint64_t offset, uint32_t data_len);

/* NBD_REPLY_TYPE_NONE with NBD_REPLY_FLAG_DONE. */
size_t nbd_chunk_none(uint8_t out[NBD_CHUNK_HEADER_BYTES], uint64_t cookie);

/* NBD_REPLY_TYPE_ERROR (or _ERROR_OFFSET when flags carries NBD_CHUNK_AT_OFFSET)
 * with error (negative errno, mapped; EIO if 0) and msg (NULL or a string,
 * cut at NBD_MAX_ERRMSG bytes). */
#define NBD_CHUNK_AT_OFFSET        (1u << 16)
size_t nbd_chunk_error(uint8_t *out, size_t cap, uint64_t cookie, unsigned flags, int error,
		       const char *msg, uint64_t offset);

/* The header of a successful READ reply for len bytes at offset: a simple
 * reply, or with structured replies one OFFSET_DATA chunk marked DONE (the
 * data must be in hand: no error can follow). len 0 gives a NONE chunk.
 * The len bytes of data follow (none for len 0). */
size_t nbd_reply_read(uint8_t *out, size_t cap, unsigned session, uint64_t cookie,
		      uint64_t offset, uint32_t len);

/* The header of a successful BLOCK_STATUS reply: one BLOCK_STATUS chunk
 * marked DONE whose payload (the context id, then 8 bytes per extent) is
 * payload_len bytes and follows. */
size_t nbd_reply_block_status(uint8_t out[NBD_CHUNK_HEADER_BYTES], uint64_t cookie,
			      uint32_t payload_len);

/* The whole reply to a failed request (any command): a simple reply with the
 * error, or with structured replies an ERROR chunk marked DONE carrying msg. */
size_t nbd_reply_error(uint8_t *out, size_t cap, unsigned session, uint64_t cookie, int error,
		       const char *msg);

#endif
