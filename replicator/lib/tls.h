/*
 * tls: TLS 1.3 with mutual certificate authentication on one socket
 * (doc/wire-protocol.md §5.6), on OpenSSL. No I/O of its own beyond the
 * socket it is given, which must be non-blocking: every call returns at
 * once, -EAGAIN with the poll events to wait for when the socket has
 * nothing to give or no room.
 *
 * A struct tls_ctx holds the configuration (CA, certificate, key), read
 * from files once; any number of struct tls, one per socket, share it,
 * and it may be freed while they live. One struct tls is not thread-safe:
 * callers that read and write from different threads serialise its calls
 * (pktio does, with a lock it releases while polling).
 */
#ifndef TANDEM_TLS_H
#define TANDEM_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tls_ctx;
struct tls;

#define TLS_REASON_MAX 256

struct tls_files {
	const char *ca;	  /* tls-ca: PEM certificates that sign a peer's */
	const char *cert; /* tls-certificate: PEM, our certificate then its chain */
	const char *key;  /* tls-key: PEM private key of the certificate */
};

/* Load the three files: 0, or a negative errno with why naming the file
 * and what is wrong with it. */
int tls_ctx_new(const struct tls_files *f, char *why, size_t n, struct tls_ctx **out);
void tls_ctx_free(struct tls_ctx *c);

enum tls_role {
	TLS_CLIENT, /* we connected */
	TLS_SERVER, /* we accepted */
};

/* A session on fd (not owned: tls_free does not close it) whose peer
 * certificate must name one of peer_names. */
int tls_new(struct tls_ctx *c, int fd, enum tls_role role, const char *const *peer_names,
	    size_t n_names, struct tls **out);
void tls_free(struct tls *t);

/* Drive the handshake: 0 when it is complete, -EAGAIN (wait for *events),
 * or a negative errno with tls_reason() saying why. */
int tls_handshake(struct tls *t, short *events);
/* Up to n bytes: the count, 0 at the peer's end of stream, -EAGAIN (wait
 * for *events), or a negative errno (-EPROTO with tls_reason()). */
ssize_t tls_read(struct tls *t, void *buf, size_t n, short *events);
/* Up to n bytes (n > 0), taken whole or in part: the count, -EAGAIN (wait
 * for *events; call again with the same bytes), or a negative errno. */
ssize_t tls_write(struct tls *t, const void *buf, size_t n, short *events);
/* Decrypted bytes wait to be read (a poll on the socket would not show them). */
bool tls_pending(struct tls *t);
/* Why the last call failed. */
const char *tls_reason(const struct tls *t);
/* "TLSv1.3 TLS_AES_256_GCM_SHA384, peer CN=alice" (after the handshake). */
void tls_describe(struct tls *t, char *buf, size_t n);

/* Do these first bytes of a stream look like a TLS handshake record? For
 * the log of a node without TLS whose peer speaks it. */
bool tls_looks_like_hello(const void *buf, size_t n);

#endif
