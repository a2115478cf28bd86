// SPDX-License-Identifier: MIT
/*
 * GnuTLS over two memory buffers (see tls.h): credentials read at start,
 * one session per connection whose transport functions copy from the
 * ciphertext the reactor received and into the ciphertext it will send.
 *
 * Only TLS 1.2 and 1.3 are offered (doc/proto.md: 1.2 MUST, older SHOULD
 * NOT by default). The pre-shared keys are kept in memory and looked up by a
 * callback, so no file is read on a reactor thread.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gnutls/gnutls.h>

#include "common/errmsg.h"
#include "common/log.h"
#include "nbd/tls.h"

#define PSK_FILE_MAX   (1u << 20)       /* a key file larger than this is not one */
#define PSK_NAME_MAX   256u
#define PSK_KEY_MAX    512u             /* bytes; psktool writes 32 by default */
/* What a record may add to its plaintext under any cipher GnuTLS offers
 * (header, explicit nonce, MAC or tag, CBC padding, TLS 1.3 content type). */
#define RECORD_OVERHEAD_MAX 512u

struct psk_entry {
	char *name;
	uint8_t *key;
	size_t key_len;
};

struct nbd_tls_creds {
	gnutls_priority_t prio;
	gnutls_psk_server_credentials_t psk;
	gnutls_certificate_credentials_t x509;
	unsigned flags;
	struct psk_entry *keys;
	size_t nkeys;
};

struct nbd_tls {
	gnutls_session_t s;
	const struct nbd_tls_creds *cr;
	bool ready, stalled, out_busy;
	size_t record_max;
	uint8_t *in, *out;
	size_t in_head, in_tail;
	size_t out_head, out_tail, out_flight;
};

/* ---- credentials ---- */

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

/* One "USERNAME:HEXKEY" line (without its end of line) into e. */
static bool parse_psk_line(char *line, struct psk_entry *e)
{
	char *colon = strchr(line, ':');
	if (!colon || colon == line || (size_t)(colon - line) > PSK_NAME_MAX)
		return false;
	const char *hex = colon + 1;
	size_t hl = strlen(hex);
	if (hl == 0 || hl % 2 || hl / 2 > PSK_KEY_MAX)
		return false;
	e->key_len = hl / 2;
	e->key = malloc(e->key_len);
	if (!e->key)
		return false;
	for (size_t i = 0; i < e->key_len; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);
		if (hi < 0 || lo < 0) {
			free(e->key);
			e->key = NULL;
			return false;
		}
		e->key[i] = (uint8_t)(hi << 4 | lo);
	}
	*colon = 0;
	e->name = strdup(line);
	if (!e->name) {
		free(e->key);
		e->key = NULL;
		return false;
	}
	return true;
}

static int load_psk_file(struct nbd_tls_creds *cr, const char *path, const struct ulog *log,
			 char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	struct stat st;

	if (!f)
		return uraid_errf(err, errlen, -errno, "--tls-psk=%s: %s", path, strerror(errno));
	if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > PSK_FILE_MAX) {
		fclose(f);
		return uraid_errf(err, errlen, -EINVAL, "--tls-psk=%s: not a key file (a regular "
				  "file of USERNAME:HEXKEY lines, as psktool writes)", path);
	}
	if (st.st_mode & 077)
		ulog(log, URAID_LOG_WARNING, "--tls-psk=%s can be read by other users; "
			"chmod 600 it", path);
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	unsigned lineno = 0;
	int rc = 0;
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
			line[--n] = 0;
		if (n == 0)
			continue;
		struct psk_entry *grown = realloc(cr->keys, (cr->nkeys + 1) * sizeof(*grown));
		if (!grown) {
			rc = uraid_errf(err, errlen, -ENOMEM, "--tls-psk: out of memory");
			break;
		}
		cr->keys = grown;
		if (!parse_psk_line(line, &cr->keys[cr->nkeys])) {
			rc = uraid_errf(err, errlen, -EINVAL, "--tls-psk=%s: line %u: expected "
					"USERNAME:HEXKEY (an even number of hex digits, as psktool "
					"writes)", path, lineno);
			break;
		}
		cr->nkeys++;
	}
	if (line) {
		explicit_bzero(line, cap);
		free(line);
	}
	fclose(f);
	if (!rc && !cr->nkeys)
		rc = uraid_errf(err, errlen, -EINVAL, "--tls-psk=%s: no keys in the file; "
				"make one with: psktool -u USERNAME -p %s", path, path);
	return rc;
}

/* GnuTLS asks for the key of the user the client names. */
static int psk_lookup(gnutls_session_t s, const char *user, gnutls_datum_t *key)
{
	const struct nbd_tls *t = gnutls_session_get_ptr(s);
	const struct nbd_tls_creds *cr = t->cr;

	for (size_t i = 0; i < cr->nkeys; i++) {
		if (strcmp(cr->keys[i].name, user) != 0)
			continue;
		key->data = gnutls_malloc(cr->keys[i].key_len);
		if (!key->data)
			return -1;
		memcpy(key->data, cr->keys[i].key, cr->keys[i].key_len);
		key->size = (unsigned)cr->keys[i].key_len;
		return 0;
	}
	return -1;
}

static bool file_exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static int load_x509(struct nbd_tls_creds *cr, const char *dir, const struct ulog *log,
		     char *err, size_t errlen)
{
	char ca[4096], cert[4096], key[4096], crl[4096];
	struct stat st;
	int g;

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return uraid_errf(err, errlen, -ENOENT, "--tls-certificates=%s: not a directory "
				  "(it holds ca-cert.pem, server-cert.pem, server-key.pem)", dir);
	snprintf(ca, sizeof(ca), "%s/ca-cert.pem", dir);
	snprintf(cert, sizeof(cert), "%s/server-cert.pem", dir);
	snprintf(key, sizeof(key), "%s/server-key.pem", dir);
	snprintf(crl, sizeof(crl), "%s/ca-crl.pem", dir);
	if (!file_exists(cert) || !file_exists(key))
		return uraid_errf(err, errlen, -ENOENT, "--tls-certificates=%s: %s missing (the "
				  "directory needs server-cert.pem and server-key.pem)", dir,
				  file_exists(cert) ? "server-key.pem" : "server-cert.pem");
	if (stat(key, &st) == 0 && (st.st_mode & 077))
		ulog(log, URAID_LOG_WARNING, "%s can be read by other users; chmod 600 it",
			key);
	if (gnutls_certificate_allocate_credentials(&cr->x509) < 0)
		return uraid_errf(err, errlen, -ENOMEM, "TLS: out of memory");
	g = gnutls_certificate_set_x509_key_file(cr->x509, cert, key, GNUTLS_X509_FMT_PEM);
	if (g < 0)
		return uraid_errf(err, errlen, -EINVAL, "--tls-certificates: %s with %s: %s", cert,
				  key, gnutls_strerror(g));
	if (file_exists(ca)) {
		g = gnutls_certificate_set_x509_trust_file(cr->x509, ca, GNUTLS_X509_FMT_PEM);
		if (g <= 0)
			return uraid_errf(err, errlen, -EINVAL, "--tls-certificates: %s: %s", ca,
					  g < 0 ? gnutls_strerror(g) : "no certificate in it");
	} else if (cr->flags & NBD_TLS_VERIFY_PEER) {
		return uraid_errf(err, errlen, -ENOENT, "--tls-verify-peer: %s missing (the CA that "
				  "signs client certificates)", ca);
	}
	if (file_exists(crl)) {
		g = gnutls_certificate_set_x509_crl_file(cr->x509, crl, GNUTLS_X509_FMT_PEM);
		if (g < 0)
			return uraid_errf(err, errlen, -EINVAL, "--tls-certificates: %s: %s", crl,
					  gnutls_strerror(g));
	}
	gnutls_certificate_set_known_dh_params(cr->x509, GNUTLS_SEC_PARAM_MEDIUM);
	return 0;
}

int nbd_tls_creds_load(const struct nbd_tls_opts *o, struct nbd_tls_creds **out, char *err,
		       size_t errlen)
{
	struct nbd_tls_creds *cr = calloc(1, sizeof(*cr));
	int rc = 0;

	if (!cr)
		return uraid_errf(err, errlen, -ENOMEM, "TLS: out of memory");
	cr->flags = o->flags;
	if (!o->psk_file && !o->cert_dir) {
		rc = uraid_errf(err, errlen, -EINVAL, "TLS needs --tls-psk=FILE or "
				"--tls-certificates=DIR");
		goto fail;
	}
	if ((o->flags & NBD_TLS_VERIFY_PEER) && !o->cert_dir) {
		rc = uraid_errf(err, errlen, -EINVAL, "--tls-verify-peer checks client certificates: "
				"give --tls-certificates=DIR with ca-cert.pem");
		goto fail;
	}
	if (o->psk_file) {
		rc = load_psk_file(cr, o->psk_file, o->log, err, errlen);
		if (rc)
			goto fail;
		if (gnutls_psk_allocate_server_credentials(&cr->psk) < 0) {
			rc = uraid_errf(err, errlen, -ENOMEM, "TLS: out of memory");
			goto fail;
		}
		gnutls_psk_set_server_credentials_function(cr->psk, psk_lookup);
		gnutls_psk_set_server_known_dh_params(cr->psk, GNUTLS_SEC_PARAM_MEDIUM);
	}
	if (o->cert_dir) {
		rc = load_x509(cr, o->cert_dir, o->log, err, errlen);
		if (rc)
			goto fail;
	}
	const char *prio = cr->psk ? "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:"
				     "+ECDHE-PSK:+DHE-PSK:+PSK"
				   : "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
	const char *where;
	int g = gnutls_priority_init(&cr->prio, prio, &where);
	if (g < 0) {
		rc = uraid_errf(err, errlen, -EINVAL, "TLS priority \"%s\": %s", prio,
				gnutls_strerror(g));
		goto fail;
	}
	*out = cr;
	return 0;
fail:
	nbd_tls_creds_free(cr);
	return rc;
}

void nbd_tls_creds_free(struct nbd_tls_creds *cr)
{
	if (!cr)
		return;
	if (cr->prio)
		gnutls_priority_deinit(cr->prio);
	if (cr->psk)
		gnutls_psk_free_server_credentials(cr->psk);
	if (cr->x509)
		gnutls_certificate_free_credentials(cr->x509);
	for (size_t i = 0; i < cr->nkeys; i++) {
		explicit_bzero(cr->keys[i].key, cr->keys[i].key_len);
		free(cr->keys[i].key);
		free(cr->keys[i].name);
	}
	free(cr->keys);
	free(cr);
}

/* ---- the transport: two buffers ---- */

static ssize_t pull(gnutls_transport_ptr_t p, void *data, size_t len)
{
	struct nbd_tls *t = p;
	size_t avail = t->in_tail - t->in_head;

	if (!avail) {
		gnutls_transport_set_errno(t->s, EAGAIN);
		return -1;
	}
	if (len > avail)
		len = avail;
	memcpy(data, t->in + t->in_head, len);
	t->in_head += len;      /* never reset here: a receive may be filling the tail */
	return (ssize_t)len;
}

static int pull_timeout(gnutls_transport_ptr_t p, unsigned ms)
{
	const struct nbd_tls *t = p;
	(void)ms;               /* non-blocking: never waits */
	return t->in_tail > t->in_head;
}

/* Room at the end of the output, moving unsent bytes to the front when no
 * send is reading them. */
static size_t out_room(struct nbd_tls *t)
{
	if (!t->out_busy && t->out_head) {
		memmove(t->out, t->out + t->out_head, t->out_tail - t->out_head);
		t->out_tail -= t->out_head;
		t->out_head = 0;
	}
	return NBD_TLS_OUT_BYTES - t->out_tail;
}

static ssize_t push(gnutls_transport_ptr_t p, const void *data, size_t len)
{
	struct nbd_tls *t = p;
	size_t room = out_room(t);

	if (!room) {
		gnutls_transport_set_errno(t->s, EAGAIN);
		return -1;
	}
	if (len > room)
		len = room;
	memcpy(t->out + t->out_tail, data, len);
	t->out_tail += len;
	return (ssize_t)len;
}

int nbd_tls_new(const struct nbd_tls_creds *cr, struct nbd_tls **out)
{
	struct nbd_tls *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->cr = cr;
	t->in = malloc(NBD_TLS_IN_BYTES);
	t->out = malloc(NBD_TLS_OUT_BYTES);
	if (!t->in || !t->out ||
	    gnutls_init(&t->s, GNUTLS_SERVER | GNUTLS_NONBLOCK | GNUTLS_NO_TICKETS) < 0) {
		free(t->in);
		free(t->out);
		free(t);
		return -ENOMEM;
	}
	int g = gnutls_priority_set(t->s, cr->prio);
	if (g >= 0 && cr->psk)
		g = gnutls_credentials_set(t->s, GNUTLS_CRD_PSK, cr->psk);
	if (g >= 0 && cr->x509) {
		g = gnutls_credentials_set(t->s, GNUTLS_CRD_CERTIFICATE, cr->x509);
		if (cr->flags & NBD_TLS_VERIFY_PEER) {
			/* an x509 client's certificate is required and checked
			   against the CA during the handshake (no name to match:
			   any the CA signed); a PSK client proves itself by its
			   key and is asked for none */
			gnutls_certificate_server_set_request(t->s, GNUTLS_CERT_REQUIRE);
			gnutls_session_set_verify_cert(t->s, NULL, 0);
		}
	}
	if (g < 0) {
		nbd_tls_free(t);
		return -EIO;
	}
	gnutls_session_set_ptr(t->s, t);
	gnutls_transport_set_ptr(t->s, t);
	gnutls_transport_set_pull_function(t->s, pull);
	gnutls_transport_set_pull_timeout_function(t->s, pull_timeout);
	gnutls_transport_set_push_function(t->s, push);
	*out = t;
	return 0;
}

void nbd_tls_free(struct nbd_tls *t)
{
	if (!t)
		return;
	gnutls_deinit(t->s);
	free(t->in);
	free(t->out);
	free(t);
}

/* ---- records ---- */

static bool retry(int g)
{
	return g == GNUTLS_E_AGAIN || g == GNUTLS_E_INTERRUPTED;
}

int nbd_tls_handshake(struct nbd_tls *t, const char **why)
{
	for (;;) {
		int g = gnutls_handshake(t->s);
		if (g == 0) {
			t->ready = true;
			t->record_max = gnutls_record_get_max_size(t->s);
			return 1;
		}
		if (retry(g))
			return 0;
		if (gnutls_error_is_fatal(g)) {
			*why = gnutls_strerror(g);
			return -EPROTO;
		}
		/* a warning alert: go on */
	}
}

bool nbd_tls_ready(const struct nbd_tls *t)
{
	return t->ready;
}

ssize_t nbd_tls_read(struct nbd_tls *t, void *buf, size_t len, const char **why)
{
	if (!len)
		return 0;       /* GnuTLS calls a read of nothing invalid */
	for (;;) {
		ssize_t n = gnutls_record_recv(t->s, buf, len);
		if (n > 0)
			return n;
		if (n == 0)
			return -EPIPE;
		if (retry((int)n))
			return 0;
		if (gnutls_error_is_fatal((int)n)) {
			*why = gnutls_strerror((int)n);
			return -EPROTO;
		}
		/* a warning alert or a refused renegotiation: read on */
	}
}

size_t nbd_tls_record_max(const struct nbd_tls *t)
{
	return t->record_max;
}

bool nbd_tls_can_write(const struct nbd_tls *t)
{
	size_t room = t->out_busy ? NBD_TLS_OUT_BYTES - t->out_tail
				  : NBD_TLS_OUT_BYTES - (t->out_tail - t->out_head);
	return !t->stalled && room >= t->record_max + RECORD_OVERHEAD_MAX;
}

int nbd_tls_write(struct nbd_tls *t, const void *buf, size_t len, const char **why)
{
	ssize_t n = gnutls_record_send(t->s, buf, len);

	if (n == (ssize_t)len)
		return 0;
	if (retry((int)n)) {
		/* encrypted, but not all of it fitted: GnuTLS keeps the rest and
		   flushes it when asked again (nbd_tls_out_sent) */
		t->stalled = true;
		return 0;
	}
	*why = n < 0 ? gnutls_strerror((int)n) : "short TLS record";
	return -EPROTO;
}

void nbd_tls_bye(struct nbd_tls *t)
{
	gnutls_bye(t->s, GNUTLS_SHUT_WR);
}

/* ---- the reactor's side ---- */

void *nbd_tls_in_space(struct nbd_tls *t, size_t *len)
{
	if (t->in_head) {
		memmove(t->in, t->in + t->in_head, t->in_tail - t->in_head);
		t->in_tail -= t->in_head;
		t->in_head = 0;
	}
	*len = NBD_TLS_IN_BYTES - t->in_tail;
	return *len ? t->in + t->in_tail : NULL;
}

void nbd_tls_in_added(struct nbd_tls *t, size_t n)
{
	t->in_tail += n;
}

const void *nbd_tls_out_take(struct nbd_tls *t, size_t *len)
{
	if (t->out_busy || t->out_tail == t->out_head)
		return NULL;
	t->out_busy = true;
	t->out_flight = t->out_tail - t->out_head;
	*len = t->out_flight;
	return t->out + t->out_head;
}

int nbd_tls_out_sent(struct nbd_tls *t, size_t n, const char **why)
{
	if (n > t->out_flight)
		n = t->out_flight;
	t->out_head += n;
	t->out_busy = false;
	t->out_flight = 0;
	if (t->out_head == t->out_tail)
		t->out_head = t->out_tail = 0;
	if (!t->stalled)
		return 0;
	/* the record GnuTLS kept back (nbd_tls_write with no room) goes out */
	int g = (int)gnutls_record_send(t->s, NULL, 0);
	if (retry(g))
		return 0;
	t->stalled = false;
	if (g < 0) {
		if (why)
			*why = gnutls_strerror(g);
		return -EIO;
	}
	return 0;
}

bool nbd_tls_out_pending(const struct nbd_tls *t)
{
	return t->out_tail != t->out_head || t->stalled;
}
