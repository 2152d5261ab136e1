/*
 * tls: TLS 1.3 with mutual certificate authentication on one socket, on
 * OpenSSL (see tls.h, doc/wire-protocol.md §5.6).
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/socket.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "tls.h"

struct tls_ctx {
	SSL_CTX *ctx;
};

struct tls {
	SSL *ssl;
	char reason[TLS_REASON_MAX];
};

/* The first error OpenSSL queued on this thread, as text; the queue is
 * cleared. */
static void ossl_reason(char *buf, size_t n)
{
	unsigned long e = ERR_get_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;

	if (r)
		snprintf(buf, n, "%s", r);
	else if (e)
		snprintf(buf, n, "OpenSSL error %lx", e);
	else
		snprintf(buf, n, "unknown OpenSSL error");
	ERR_clear_error();
}

/* Can the file be opened at all? OpenSSL says "system library" when not. */
static int readable(const char *what, const char *path, char *why, size_t n)
{
	FILE *f;

	if (!path || !*path) {
		snprintf(why, n, "%s is not set", what);
		return -EINVAL;
	}
	f = fopen(path, "r");
	if (!f) {
		int rc = -errno;

		snprintf(why, n, "%s %s: %s", what, path, strerror(errno));
		return rc;
	}
	fclose(f);
	return 0;
}

int tls_ctx_new(const struct tls_files *f, char *why, size_t n, struct tls_ctx **out)
{
	struct tls_ctx *c;
	char r[TLS_REASON_MAX];
	int rc;

	if ((rc = readable("tls-ca", f->ca, why, n)) < 0 ||
	    (rc = readable("tls-certificate", f->cert, why, n)) < 0 ||
	    (rc = readable("tls-key", f->key, why, n)) < 0)
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->ctx = SSL_CTX_new(TLS_method()))) {
		free(c);
		snprintf(why, n, "out of memory");
		return -ENOMEM;
	}
	ERR_clear_error();
	if (!SSL_CTX_set_min_proto_version(c->ctx, TLS1_3_VERSION) ||
	    !SSL_CTX_set_max_proto_version(c->ctx, TLS1_3_VERSION)) {
		ossl_reason(r, sizeof(r));
		snprintf(why, n, "TLS 1.3 is not available: %s", r);
		rc = -ENOTSUP;
		goto fail;
	}
	/* every socket does a full handshake: nothing to resume, no tickets
	 * arriving after it on a stream the setup machine reads exactly */
	SSL_CTX_set_num_tickets(c->ctx, 0);
	/* a TCP end without close_notify is the end of the stream, as on a
	 * plain socket (the peer died): the framing, not the end, marks
	 * where a packet ends, so no truncation can pass for a whole one */
	SSL_CTX_set_options(c->ctx, SSL_OP_NO_TICKET | SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_session_cache_mode(c->ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_mode(c->ctx, SSL_MODE_ENABLE_PARTIAL_WRITE);
	SSL_CTX_set_verify(c->ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	if (SSL_CTX_load_verify_file(c->ctx, f->ca) != 1) {
		ossl_reason(r, sizeof(r));
		snprintf(why, n, "tls-ca %s: %s (it must hold PEM certificates)", f->ca, r);
		rc = -EINVAL;
		goto fail;
	}
	if (SSL_CTX_use_certificate_chain_file(c->ctx, f->cert) != 1) {
		ossl_reason(r, sizeof(r));
		snprintf(why, n, "tls-certificate %s: %s (it must hold a PEM certificate, then "
				 "its chain)", f->cert, r);
		rc = -EINVAL;
		goto fail;
	}
	/* a key that does not match may be taken, the certificate dropped */
	rc = SSL_CTX_use_PrivateKey_file(c->ctx, f->key, SSL_FILETYPE_PEM);
	if (ERR_GET_LIB(ERR_peek_error()) == ERR_LIB_X509 &&
	    ERR_GET_REASON(ERR_peek_error()) == X509_R_KEY_VALUES_MISMATCH) {
		ERR_clear_error();
		snprintf(why, n, "tls-key %s is not the key of tls-certificate %s", f->key, f->cert);
		rc = -EINVAL;
		goto fail;
	}
	if (rc != 1) {
		ossl_reason(r, sizeof(r));
		snprintf(why, n, "tls-key %s: %s (it must hold an unencrypted PEM private key)",
			 f->key, r);
		rc = -EINVAL;
		goto fail;
	}
	if (SSL_CTX_check_private_key(c->ctx) != 1) {
		ERR_clear_error();
		snprintf(why, n, "tls-key %s is not the key of tls-certificate %s", f->key, f->cert);
		rc = -EINVAL;
		goto fail;
	}
	*out = c;
	return 0;
fail:
	SSL_CTX_free(c->ctx);
	free(c);
	return rc;
}

void tls_ctx_free(struct tls_ctx *c)
{
	if (!c)
		return;
	SSL_CTX_free(c->ctx); /* sessions hold their own reference */
	free(c);
}

/*
 * The socket under a session. OpenSSL's own socket BIO writes with
 * write(2), which raises SIGPIPE when the peer has gone: this one sends
 * with MSG_NOSIGNAL, so a library caller's process needs no signal
 * settings, and never waits (the socket's own mode does not matter).
 */
static BIO_METHOD *sock_method;
static pthread_once_t sock_once = PTHREAD_ONCE_INIT;

static int sock_fd(BIO *b)
{
	return (int)(intptr_t)BIO_get_data(b);
}

static int sock_write(BIO *b, const char *buf, size_t n, size_t *done)
{
	ssize_t w;

	do
		w = send(sock_fd(b), buf, n, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (w < 0 && errno == EINTR);
	BIO_clear_retry_flags(b);
	if (w < 0) {
		if (errno == EAGAIN)
			BIO_set_retry_write(b);
		return 0;
	}
	*done = (size_t)w;
	return 1;
}

static int sock_read(BIO *b, char *buf, size_t n, size_t *done)
{
	ssize_t r;

	do
		r = recv(sock_fd(b), buf, n, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	BIO_clear_retry_flags(b);
	if (r < 0) {
		if (errno == EAGAIN)
			BIO_set_retry_read(b);
		return 0;
	}
	if (r == 0)
		errno = 0; /* the end of the stream, not an error of the socket */
	*done = (size_t)r;
	return r > 0;
}

static long sock_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	(void)b;
	(void)num;
	(void)ptr;
	return cmd == BIO_CTRL_FLUSH ? 1 : 0;
}

static int sock_create(BIO *b)
{
	BIO_set_init(b, 1);
	return 1;
}

static void sock_method_init(void)
{
	BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "tandem socket");

	if (m && (!BIO_meth_set_write_ex(m, sock_write) || !BIO_meth_set_read_ex(m, sock_read) ||
		  !BIO_meth_set_ctrl(m, sock_ctrl) || !BIO_meth_set_create(m, sock_create))) {
		BIO_meth_free(m);
		m = NULL;
	}
	sock_method = m;
}

static BIO *sock_bio(int fd)
{
	BIO *b;

	pthread_once(&sock_once, sock_method_init);
	if (!sock_method || !(b = BIO_new(sock_method)))
		return NULL;
	BIO_set_data(b, (void *)(intptr_t)fd);
	return b;
}

int tls_new(struct tls_ctx *c, int fd, enum tls_role role, const char *const *peer_names,
	    size_t n_names, struct tls **out)
{
	struct tls *t = calloc(1, sizeof(*t));
	X509_VERIFY_PARAM *vp;
	BIO *bio;
	size_t i;

	if (!t)
		return -ENOMEM;
	ERR_clear_error();
	t->ssl = SSL_new(c->ctx);
	if (!t->ssl || !(bio = sock_bio(fd)))
		goto fail;
	SSL_set_bio(t->ssl, bio, bio); /* the session owns it */
	/* the peer's certificate must name the peer, in both roles: the
	 * verify parameters apply to whichever chain this side checks */
	vp = SSL_get0_param(t->ssl);
	X509_VERIFY_PARAM_set_hostflags(vp, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	for (i = 0; i < n_names; i++)
		if (X509_VERIFY_PARAM_add1_host(vp, peer_names[i], 0) != 1)
			goto fail;
	if (!n_names) /* a peer nobody can name is nobody's */
		goto fail;
	if (role == TLS_CLIENT) {
		SSL_set_connect_state(t->ssl);
		SSL_set_tlsext_host_name(t->ssl, peer_names[0]);
	} else {
		SSL_set_accept_state(t->ssl);
	}
	*out = t;
	return 0;
fail:
	ERR_clear_error();
	SSL_free(t->ssl);
	free(t);
	return -ENOMEM;
}

void tls_free(struct tls *t)
{
	if (!t)
		return;
	SSL_free(t->ssl);
	free(t);
}

const char *tls_reason(const struct tls *t)
{
	return t->reason;
}

/* The reasons that mean the other end sent something that is not TLS. */
static bool not_tls(unsigned long e)
{
	int r = ERR_GET_REASON(e);

	return ERR_GET_LIB(e) == ERR_LIB_SSL &&
	       (r == SSL_R_WRONG_VERSION_NUMBER || r == SSL_R_PACKET_LENGTH_TOO_LONG ||
		r == SSL_R_UNKNOWN_PROTOCOL || r == SSL_R_HTTP_REQUEST ||
		r == SSL_R_RECORD_LENGTH_MISMATCH);
}

/* Map a failed SSL_* call; rc its return value. */
static int failed(struct tls *t, int rc, bool handshake, short *events)
{
	int err = SSL_get_error(t->ssl, rc);
	unsigned long e;
	long v;

	switch (err) {
	case SSL_ERROR_WANT_READ:
		*events = POLLIN;
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		*events = POLLOUT;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		snprintf(t->reason, sizeof(t->reason), "the peer ended the TLS session");
		return -ECONNRESET;
	case SSL_ERROR_SYSCALL:
		if (errno && ERR_peek_error() == 0) {
			int en = errno;

			snprintf(t->reason, sizeof(t->reason), "%s", strerror(en));
			return -en;
		}
		ERR_clear_error();
		snprintf(t->reason, sizeof(t->reason), "the peer closed the connection%s",
			 handshake ? " during the TLS handshake (does it have tls yes, and "
				     "accept our certificate?)" : "");
		return -ECONNRESET;
	default:
		break;
	}
	e = ERR_peek_error();
	if (not_tls(e)) {
		ERR_clear_error();
		snprintf(t->reason, sizeof(t->reason),
			 "the peer does not speak TLS: set net { tls yes; } on both nodes, or on "
			 "neither");
		return -EPROTO;
	}
	v = SSL_get_verify_result(t->ssl);
	ossl_reason(t->reason, sizeof(t->reason));
	if (ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) > SSL_AD_REASON_OFFSET &&
	    ERR_GET_REASON(e) < SSL_AD_REASON_OFFSET + 256) { /* an alert the peer sent */
		size_t l = strlen(t->reason);

		snprintf(t->reason + l, sizeof(t->reason) - l,
			 " (the peer refused the connection: its log says why)");
		return -EPROTO;
	}
	if (v != X509_V_OK) {
		size_t l = strlen(t->reason);

		snprintf(t->reason + l, sizeof(t->reason) - l, ": %s%s",
			 X509_verify_cert_error_string(v),
			 v == X509_V_ERR_HOSTNAME_MISMATCH
				 ? " (its certificate must name the peer's host name as in its "
				   "'on' section)"
				 : "");
	}
	return -EPROTO;
}

int tls_handshake(struct tls *t, short *events)
{
	int rc;

	ERR_clear_error();
	errno = 0;
	rc = SSL_do_handshake(t->ssl);
	return rc == 1 ? 0 : failed(t, rc, true, events);
}

ssize_t tls_read(struct tls *t, void *buf, size_t n, short *events)
{
	size_t got = 0;
	int rc;

	ERR_clear_error();
	errno = 0;
	rc = SSL_read_ex(t->ssl, buf, n, &got);
	if (rc == 1)
		return (ssize_t)got;
	if (SSL_get_error(t->ssl, rc) == SSL_ERROR_ZERO_RETURN)
		return 0; /* close_notify: the end of the stream */
	return failed(t, rc, false, events);
}

ssize_t tls_write(struct tls *t, const void *buf, size_t n, short *events)
{
	size_t w = 0;
	int rc;

	ERR_clear_error();
	errno = 0;
	rc = SSL_write_ex(t->ssl, buf, n, &w);
	if (rc == 1)
		return (ssize_t)w;
	return failed(t, rc, false, events);
}

bool tls_pending(struct tls *t)
{
	/* decrypted bytes only: SSL_has_pending() also counts the start of a
	 * record whose rest is still to come, which poll would report, so a
	 * caller that trusted it would spin until the rest came */
	return SSL_pending(t->ssl) > 0;
}

void tls_describe(struct tls *t, char *buf, size_t n)
{
	X509 *peer = SSL_get0_peer_certificate(t->ssl);
	char cn[128] = "?";

	if (peer)
		X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, cn,
					  sizeof(cn));
	snprintf(buf, n, "%s %s, peer certificate CN=%s", SSL_get_version(t->ssl),
		 SSL_CIPHER_get_name(SSL_get_current_cipher(t->ssl)), cn);
}

bool tls_looks_like_hello(const void *buf, size_t n)
{
	const unsigned char *b = buf;

	/* a handshake record (22) of TLS 1.x (3, 1..4) */
	return n >= 3 && b[0] == 0x16 && b[1] == 0x03 && b[2] >= 1 && b[2] <= 4;
}
