/*
 * setup: one replication socket from its first byte to authentication
 * (doc/wire-protocol.md §5.1-§5.5): P_HELLO, negotiation, and CRAM-HMAC
 * versions 1 and 2, with no I/O of its own. The caller reads at most
 * setup_want() bytes from the socket and hands them to setup_input(),
 * writes what setup_output() holds and reports it with setup_sent(), and
 * keeps the deadline. So one thread can drive many sockets at once, none
 * able to hold up another, and the fuzzer can feed one a byte stream.
 *
 * The machine never reads past the packet that ends its work: what
 * follows on the socket (the handshake of §6) stays there for pktio.
 *
 * A refusal is SETUP_FAILED with a reason for the log ("Authentication of
 * peer failed: ..."); nothing in here changes any state but its own.
 * Before authentication no packet may be longer than SETUP_PKT_MAX.
 *
 * Errors: -EINVAL for a call in the wrong status or bad arguments,
 * -ENOMEM; input that the peer got wrong is never an error of the call,
 * only SETUP_FAILED.
 */
#ifndef TANDEM_SETUP_H
#define TANDEM_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "wire.h"

#define SETUP_PKT_MAX 1024u /* payload bytes: the largest packet before authentication */

struct setup;

enum setup_role { SETUP_INITIATOR, SETUP_ACCEPTOR };

enum setup_status {
	SETUP_RUNNING,	 /* bytes to exchange */
	SETUP_HELLO,	 /* acceptor: the peer's P_HELLO is in and names this resource
			    and the configured peer; setup_accept() or setup_refuse() */
	SETUP_DONE,	 /* the peer is authenticated (or none is configured); once the
			    output is sent, the socket is the connection's */
	SETUP_DUPLICATE, /* initiator: the peer keeps its own attempt (§5.2) */
	SETUP_REFUSED,	 /* acceptor: answered "duplicate" by setup_refuse(); send the
			    output, then close */
	SETUP_FAILED,	 /* refused: setup_reason() says why; send the output (our
			    P_HELLO, when negotiation failed: the peer learns why too),
			    then close */
};

/* What a socket is set up with; the strings must outlive the machine. */
struct setup_conf {
	const char *res;		/* the resource */
	const char *me;			/* our node name */
	const char *const *peer_names;	/* the names of the configured peer */
	size_t n_peer_names;
	const char *alg;		/* cram-hmac-alg; NULL or "": none */
	const void *secret;
	size_t secret_len;
	bool auth_v1;			/* cram-hmac-version 1 (DRBD's), else 2 */
	uint64_t features;		/* ours (WIRE_F_*) */
};

/*
 * A machine for one socket. The initiator names the stream and the
 * attempt's conn_id (not 0) and has its P_HELLO in the output at once;
 * the acceptor learns both from the peer's P_HELLO (stream and conn_id
 * are ignored).
 */
int setup_new(const struct setup_conf *c, enum setup_role role, enum wire_stream stream,
	      uint64_t conn_id, struct setup **out);
void setup_free(struct setup *s);

/* How many bytes to read next (never more); 0 while none are wanted. */
size_t setup_want(const struct setup *s);
/* len (1..setup_want()) bytes from the peer. 0 or -EINVAL. */
int setup_input(struct setup *s, const void *buf, size_t len);
/* The peer closed its end, or the deadline passed: SETUP_FAILED with the
 * reason this means where the exchange stands. */
void setup_eof(struct setup *s);
void setup_expire(struct setup *s);

/* What to send: the bytes and their count (0: nothing). */
const void *setup_output(const struct setup *s, size_t *len);
/* n of them went out. */
void setup_sent(struct setup *s, size_t n);

enum setup_status setup_status(const struct setup *s);
/* Why SETUP_FAILED, one line for the log; "" otherwise. */
const char *setup_reason(const struct setup *s);
/* "awaiting P_HELLO", "authenticating", "done", ...: where it stands. */
const char *setup_phase_name(const struct setup *s);
/* The peer's P_HELLO, from SETUP_HELLO (acceptor) or SETUP_DONE on; else NULL. */
const struct wire_hello *setup_peer_hello(const struct setup *s);
/* The stream, conn_id, version and features agreed: valid at SETUP_DONE. */
const struct wire_agreed *setup_agreed(const struct setup *s);
enum wire_stream setup_stream(const struct setup *s);

/* Acceptor at SETUP_HELLO: go on with this attempt (our P_HELLO, then
 * authentication), or answer it as a duplicate (§5.2) and end. 0 or
 * -EINVAL. */
int setup_accept(struct setup *s);
int setup_refuse(struct setup *s);

#endif
