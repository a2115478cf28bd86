/* SPDX-License-Identifier: MIT */
/*
 * TLS for NBD with GnuTLS, over memory instead of a socket: the reactor
 * receives ciphertext into a session's input buffer and sends its output
 * buffer; GnuTLS reads and writes only those buffers (a custom transport),
 * so it never makes a system call and never blocks.
 *
 * The credentials (nbd_tls_creds) are read once, at start, from the files
 * nbdkit reads: a PSK file as psktool writes it (USERNAME:HEXKEY lines) and/or
 * a directory with ca-cert.pem, server-cert.pem and server-key.pem. They are
 * shared, read-only, by every session on every reactor.
 */
#ifndef URAID_NBD_TLS_H
#define URAID_NBD_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/log.h"

struct nbd_tls_creds;
struct nbd_tls;

#define NBD_TLS_VERIFY_PEER (1u << 0)   /* clients must show a certificate the CA signed */

struct nbd_tls_opts {
	const char *psk_file;           /* NULL, or USERNAME:HEXKEY lines */
	const char *cert_dir;           /* NULL, or the x509 directory */
	unsigned flags;                 /* NBD_TLS_VERIFY_PEER */
	const struct ulog *log;         /* warnings (key files others can read); NULL: stderr */
};

/* Ciphertext buffers of a session: room for several records each way. */
#define NBD_TLS_IN_BYTES  (128u << 10)
#define NBD_TLS_OUT_BYTES (128u << 10)
#define NBD_TLS_RECORD_BYTES 16384u     /* the most plaintext a TLS record holds */

/* Read and check the credentials; 0, or -errno with one line in err. */
int nbd_tls_creds_load(const struct nbd_tls_opts *o, struct nbd_tls_creds **out, char *err,
		       size_t errlen);
void nbd_tls_creds_free(struct nbd_tls_creds *cr);

/* A server session (its handshake not started). 0 or -ENOMEM/-EIO. */
int nbd_tls_new(const struct nbd_tls_creds *cr, struct nbd_tls **out);
void nbd_tls_free(struct nbd_tls *t);

/* Run the handshake on what has arrived: 1 done, 0 wants more I/O (send the
 * output, receive more), or -EPROTO/-EACCES (why says what: a wrong key, no
 * client certificate...). */
int nbd_tls_handshake(struct nbd_tls *t, const char **why);
bool nbd_tls_ready(const struct nbd_tls *t);

/* Decrypt up to len bytes of application data into buf: the count, 0 when
 * more ciphertext is needed, -EPIPE when the client ended TLS (close_notify)
 * or -EPROTO (why says what). */
ssize_t nbd_tls_read(struct nbd_tls *t, void *buf, size_t len, const char **why);

/* Largest plaintext of one record, and whether the output buffer has room
 * for one more record of that size. */
size_t nbd_tls_record_max(const struct nbd_tls *t);
bool nbd_tls_can_write(const struct nbd_tls *t);

/* Encrypt len (<= nbd_tls_record_max) bytes as one record into the output
 * buffer; call only when nbd_tls_can_write. 0 or -EPROTO. */
int nbd_tls_write(struct nbd_tls *t, const void *buf, size_t len, const char **why);

/* Queue a close_notify alert (the server ends the session). */
void nbd_tls_bye(struct nbd_tls *t);

/* The reactor's side. Input: where to receive (NULL when full; only while no
 * receive is in flight, as it may move bytes), then how many arrived. */
void *nbd_tls_in_space(struct nbd_tls *t, size_t *len);
void nbd_tls_in_added(struct nbd_tls *t, size_t n);
/* Output: the bytes to send now (marks them in flight; NULL when none),
 * then how many went out. Records can be added while a send is in flight. */
const void *nbd_tls_out_take(struct nbd_tls *t, size_t *len);
/* 0, or -EIO when the record GnuTLS kept back for want of room then fails
 * (why: GnuTLS's reason; why may be NULL when the caller is closing). */
int nbd_tls_out_sent(struct nbd_tls *t, size_t n, const char **why);
bool nbd_tls_out_pending(const struct nbd_tls *t);

#endif
