/*
 * fuzz-setup: one replication socket's setup (lib/setup.c,
 * doc/wire-protocol.md §5.1-§5.5) fed a peer's byte stream, framing
 * included, the way the daemon feeds it from a socket.
 *
 * Input: one byte of configuration, then the bytes the peer sends.
 *   bit 0  we are the acceptor (else the initiator)
 *   bit 1  cram-hmac-version 1 (else 2)
 *   bit 2  no authentication configured
 *   bit 3  the initiator's socket is the meta socket
 *   bit 4  the acceptor answers the P_HELLO as a duplicate
 *   bit 5  at the end of input: the deadline passes (else EOF)
 *   bits 6-7  the largest read: 1, 7, 64 bytes or whatever is wanted
 *
 * Checks, besides the sanitizers: no call takes more than setup_want();
 * everything the machine sends is a packet the decoder accepts; with a
 * secret configured no input reaches SETUP_DONE (the fuzzer does not know
 * the secret, and every challenge of ours is fresh); a version 2 acceptor
 * never sends its P_AUTH_RESPONSE; a machine that ends says why.
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "setup.h"
#include "wire.h"

static const char *const peer_names[] = {"alice", "alice-2"};
static const uint8_t zeros[SETUP_PKT_MAX + 1];

/* Our output, as a stream of packets: each one must decode. */
struct sent {
	uint8_t buf[4096];
	size_t len;
	bool response; /* a P_AUTH_RESPONSE went out */
};

static void take_output(struct setup *s, struct sent *o)
{
	size_t n, pos = 0;
	const uint8_t *p = setup_output(s, &n);

	if (n > sizeof(o->buf) - o->len)
		abort(); /* the machine holds at most 1 KiB, three packets per exchange */
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	setup_sent(s, n);
	while (o->len - pos >= WIRE_HDR_SIZE) {
		struct wire_hdr h;
		struct wire_pkt pkt;

		if (wire_hdr_decode(o->buf + pos, &h, NULL, 0) < 0)
			abort();
		if (o->len - pos < WIRE_HDR_SIZE + h.len)
			break;
		if (wire_pkt_decode(&h, o->buf + pos + WIRE_HDR_SIZE, h.len, &pkt, NULL, 0) < 0)
			abort();
		if (pkt.type == WIRE_P_AUTH_RESPONSE)
			o->response = true;
		pos += WIRE_HDR_SIZE + h.len;
	}
	memmove(o->buf, o->buf + pos, o->len - pos);
	o->len -= pos;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const size_t steps[] = {1, 7, 64, SIZE_MAX};
	struct setup_conf c;
	struct sent o = {{0}, 0, false};
	struct setup *s;
	uint8_t cfg;
	size_t step;
	bool acceptor, v1, noauth;

	if (size < 1)
		return 0;
	cfg = data[0];
	data++;
	size--;
	acceptor = cfg & 1;
	v1 = cfg & 2;
	noauth = cfg & 4;
	step = steps[cfg >> 6];
	c = (struct setup_conf){.res = "r0",
				.me = "bob",
				.peer_names = peer_names,
				.n_peer_names = 2,
				.alg = noauth ? "" : "sha256",
				.secret = "s3cret",
				.secret_len = 6,
				.auth_v1 = v1,
				.features = WIRE_F_TRIM | WIRE_F_CSUMS};
	if (setup_new(&c, acceptor ? SETUP_ACCEPTOR : SETUP_INITIATOR,
		      cfg & 8 ? WIRE_STREAM_META : WIRE_STREAM_DATA, 0x5eed, &s) < 0)
		abort();
	take_output(s, &o);
	while (setup_status(s) == SETUP_RUNNING || setup_status(s) == SETUP_HELLO) {
		size_t want = setup_want(s), n;

		if (setup_status(s) == SETUP_HELLO) {
			if (!acceptor || !setup_peer_hello(s))
				abort();
			if ((cfg & 16 ? setup_refuse(s) : setup_accept(s)) < 0)
				abort();
			take_output(s, &o);
			continue;
		}
		if (!want) /* running and wanting nothing: it would hang */
			abort();
		if (!size) {
			if (cfg & 32)
				setup_expire(s);
			else
				setup_eof(s);
			break;
		}
		n = want < step ? want : step;
		if (n > size)
			n = size;
		if (setup_input(s, data, n) < 0)
			abort();
		if (setup_input(s, zeros, setup_want(s) + 1) == 0) /* more than it wants */
			abort();
		data += n;
		size -= n;
		take_output(s, &o);
	}
	take_output(s, &o);
	switch (setup_status(s)) {
	case SETUP_DONE:
		if (!noauth) /* authenticated without the secret */
			abort();
		break;
	case SETUP_FAILED:
		if (!setup_reason(s)[0])
			abort();
		break;
	case SETUP_RUNNING:
	case SETUP_HELLO:
		abort(); /* EOF or the deadline ends every exchange */
	default:
		break;
	}
	if (acceptor && !noauth && !v1 && o.response)
		abort(); /* version 2's acceptor answers only a proof */
	setup_free(s);
	return 0;
}
