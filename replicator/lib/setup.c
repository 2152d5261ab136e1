/*
 * setup: one socket's P_HELLO and authentication, sans I/O (see setup.h).
 *
 * The exchange, by phase (doc/wire-protocol.md §5.1, §5.4):
 *   HELLO_IN      the peer's P_HELLO; the initiator's own went out first
 *   DECIDE        acceptor: the caller keeps or refuses the attempt
 *   CHALLENGE_IN  our P_AUTH_CHALLENGE is out; the peer's comes in
 *   RESPONSE_IN   the peer's P_AUTH_RESPONSE; version 2's initiator sent
 *                 its own first, the acceptor sends its own only after it
 *   END           DONE, DUPLICATE, REFUSED or FAILED
 * Each phase takes exactly one packet type, read as a header and then its
 * payload, so nothing after the last packet is read.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "setup.h"

enum phase { HELLO_IN, DECIDE, CHALLENGE_IN, RESPONSE_IN, END };

#define OUT_MAX 1024u /* our P_HELLO, challenge and response at most */

struct setup {
	const struct setup_conf *c;
	enum setup_role role;
	enum phase phase;
	enum setup_status status;
	enum wire_stream stream;
	uint64_t conn_id;

	uint8_t hdr[WIRE_HDR_SIZE]; /* the packet being read */
	size_t have;		    /* bytes of it so far: header, then payload */
	struct wire_hdr h;
	bool in_payload;
	uint8_t payload[SETUP_PKT_MAX];

	uint8_t out[OUT_MAX]; /* to send: out[out_pos..out_len) */
	size_t out_pos, out_len;

	struct wire_hello own, peer;
	bool have_peer;
	struct wire_agreed ag;
	uint8_t challenge[AUTH_CHALLENGE_LEN];	     /* ours */
	uint8_t m_own[AUTH_V2_MSG_MAX];		     /* version 2: what we sign */
	uint8_t m_peer[AUTH_V2_MSG_MAX];	     /* and what the peer must have */
	size_t m_own_len, m_peer_len;
	char reason[WIRE_REASON_MAX + 128];
};

static bool with_auth(const struct setup *s)
{
	return s->c->alg && s->c->alg[0];
}

static void fail(struct setup *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
	va_end(ap);
	s->phase = END;
	s->status = SETUP_FAILED;
	s->out_pos = s->out_len = 0; /* a refused peer gets nothing more */
}

static int queue(struct setup *s, const struct wire_pkt *pkt)
{
	int n = wire_pkt_encode(pkt, s->out + s->out_len, sizeof(s->out) - s->out_len);

	if (n < 0)
		return n;
	s->out_len += (size_t)n;
	return 0;
}

static void own_hello(struct setup *s, uint8_t flags)
{
	struct wire_hello *h = &s->own;

	memset(h, 0, sizeof(*h));
	h->proto_min = WIRE_PROTO_MIN;
	h->proto_max = WIRE_PROTO_MAX;
	h->stream = (uint8_t)s->stream;
	if (with_auth(s))
		flags |= WIRE_HELLO_AUTH | (s->c->auth_v1 ? 0 : WIRE_HELLO_AUTH_V2);
	h->flags = flags;
	h->features = s->c->features;
	h->conn_id = s->conn_id;
	snprintf(h->node, sizeof(h->node), "%s", s->c->me);
	snprintf(h->res, sizeof(h->res), "%s", s->c->res);
}

static int queue_hello(struct setup *s)
{
	struct wire_pkt pkt;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_HELLO;
	pkt.volume = WIRE_VOL_NONE;
	pkt.u.hello = s->own;
	return queue(s, &pkt);
}

static int queue_challenge(struct setup *s)
{
	struct wire_pkt pkt;

	if (auth_challenge_new(s->challenge) < 0)
		return -EIO;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_AUTH_CHALLENGE;
	pkt.volume = WIRE_VOL_NONE;
	snprintf(pkt.u.challenge.alg, sizeof(pkt.u.challenge.alg), "%s", s->c->alg);
	memcpy(pkt.u.challenge.challenge, s->challenge, sizeof(s->challenge));
	return queue(s, &pkt);
}

/* Our P_AUTH_RESPONSE: HMAC(secret, msg). */
static int queue_response(struct setup *s, const uint8_t *msg, size_t len)
{
	uint8_t resp[AUTH_RESPONSE_MAX];
	size_t rlen = sizeof(resp);
	struct wire_pkt pkt;
	int rc = auth_response(s->c->alg, s->c->secret, s->c->secret_len, msg, len, resp, &rlen);

	if (rc < 0)
		return rc;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_AUTH_RESPONSE;
	pkt.volume = WIRE_VOL_NONE;
	pkt.digest = resp;
	pkt.digest_len = (uint32_t)rlen;
	return queue(s, &pkt);
}

int setup_new(const struct setup_conf *c, enum setup_role role, enum wire_stream stream,
	      uint64_t conn_id, struct setup **out)
{
	struct setup *s;

	if (!c || !c->res || !c->me || !out || (role != SETUP_INITIATOR && role != SETUP_ACCEPTOR))
		return -EINVAL;
	if (role == SETUP_INITIATOR &&
	    (!conn_id || (stream != WIRE_STREAM_DATA && stream != WIRE_STREAM_META)))
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->c = c;
	s->role = role;
	s->phase = HELLO_IN;
	s->status = SETUP_RUNNING;
	s->stream = role == SETUP_INITIATOR ? stream : WIRE_STREAM_DATA;
	s->conn_id = role == SETUP_INITIATOR ? conn_id : 0;
	if (role == SETUP_INITIATOR) {
		own_hello(s, 0);
		if (queue_hello(s) < 0) {
			free(s);
			return -EINVAL;
		}
	}
	*out = s;
	return 0;
}

void setup_free(struct setup *s)
{
	if (!s)
		return;
	/* the secret's answers are not left in freed memory */
	memset(s->m_own, 0, sizeof(s->m_own));
	memset(s->out, 0, sizeof(s->out));
	free(s);
}

/* ---------------------------------------------------------------- packets */

static bool peer_named(const struct setup *s, const char *node)
{
	for (size_t i = 0; i < s->c->n_peer_names; i++)
		if (s->c->peer_names[i] && !strcmp(s->c->peer_names[i], node))
			return true;
	return false;
}

/* Negotiate with the peer's P_HELLO; then authenticate, or done. */
static void agree(struct setup *s)
{
	char why[WIRE_REASON_MAX];
	int rc = wire_negotiate(&s->own, &s->peer, &s->ag, why, sizeof(why));

	if (rc == -EALREADY) {
		s->phase = END;
		s->status = SETUP_DUPLICATE;
		return;
	}
	if (rc < 0) {
		size_t pos = s->out_pos, len = s->out_len;

		fail(s, "%s", why);
		s->out_pos = pos; /* our P_HELLO still goes out: the peer learns why too */
		s->out_len = len;
		return;
	}
	if (!with_auth(s)) {
		s->phase = END;
		s->status = SETUP_DONE;
		return;
	}
	if (queue_challenge(s) < 0) {
		fail(s, "cannot make a challenge (OpenSSL's RAND_bytes failed)");
		return;
	}
	s->phase = CHALLENGE_IN;
}

static void on_hello(struct setup *s, const struct wire_pkt *pkt)
{
	const struct wire_hello *h = &pkt->u.hello;

	if (strcmp(h->res, s->c->res)) {
		fail(s, "it is for resource '%.64s'", h->res);
		return;
	}
	if (!peer_named(s, h->node)) {
		fail(s, "it claims node '%.64s', the configured peer is '%s'", h->node,
		     s->c->n_peer_names ? s->c->peer_names[0] : "(none)");
		return;
	}
	if (h->stream != WIRE_STREAM_DATA && h->stream != WIRE_STREAM_META) {
		fail(s, "its P_HELLO names no stream (%u)", h->stream);
		return;
	}
	s->peer = *h;
	s->have_peer = true;
	if (s->role == SETUP_ACCEPTOR) {
		s->stream = (enum wire_stream)h->stream;
		s->conn_id = h->conn_id;
		s->phase = DECIDE;
		s->status = SETUP_HELLO;
		return;
	}
	agree(s);
}

/* Version 2's messages, once both challenges are known. */
static int v2_messages(struct setup *s, const uint8_t *theirs)
{
	bool ini = s->role == SETUP_INITIATOR;
	struct auth_v2 a = {
		.purpose = s->stream == WIRE_STREAM_META ? AUTH_META : AUTH_DATA,
		.conn_id = s->ag.conn_id,
		.res = s->c->res,
		.initiator = ini ? s->c->me : s->peer.node,
		.acceptor = ini ? s->peer.node : s->c->me,
		.initiator_challenge = ini ? s->challenge : theirs,
		.acceptor_challenge = ini ? theirs : s->challenge,
	};
	int rc;

	s->m_own_len = sizeof(s->m_own);
	s->m_peer_len = sizeof(s->m_peer);
	rc = auth_v2_message(&a, ini ? AUTH_INITIATOR : AUTH_ACCEPTOR, s->m_own, &s->m_own_len);
	if (rc == 0)
		rc = auth_v2_message(&a, ini ? AUTH_ACCEPTOR : AUTH_INITIATOR, s->m_peer,
				     &s->m_peer_len);
	return rc;
}

static void on_challenge(struct setup *s, const struct wire_pkt *pkt)
{
	const uint8_t *theirs = pkt->u.challenge.challenge;
	int rc;

	if (strcmp(pkt->u.challenge.alg, s->c->alg)) {
		fail(s,
		     "Authentication of peer failed: the peer uses cram-hmac-alg %.64s, we use %s; "
		     "configure the same on both nodes",
		     pkt->u.challenge.alg, s->c->alg);
		return;
	}
	rc = auth_check_peer_challenge(s->challenge, theirs, WIRE_CHALLENGE);
	if (rc < 0) {
		fail(s, "Authentication of peer failed: %s",
		     rc == -EACCES ? "it reflected our challenge" : "a malformed challenge");
		return;
	}
	if (!s->ag.auth_v2) { /* DRBD's: answer at once, then check */
		memcpy(s->m_peer, s->challenge, sizeof(s->challenge));
		s->m_peer_len = sizeof(s->challenge);
		rc = queue_response(s, theirs, WIRE_CHALLENGE);
	} else {
		rc = v2_messages(s, theirs);
		if (rc == 0 && s->role == SETUP_INITIATOR) /* the initiator proves first */
			rc = queue_response(s, s->m_own, s->m_own_len);
	}
	if (rc < 0) {
		fail(s, "Authentication of peer failed: %s", strerror(-rc));
		return;
	}
	s->phase = RESPONSE_IN;
}

static void on_response(struct setup *s, const struct wire_pkt *pkt)
{
	if (auth_verify(s->c->alg, s->c->secret, s->c->secret_len, s->m_peer, s->m_peer_len,
			pkt->digest, pkt->digest_len) < 0) {
		fail(s,
		     "Authentication of peer failed: wrong shared-secret? (cram-hmac-alg %s, "
		     "cram-hmac-version %d); if it is the real peer, fix the configuration, then "
		     "'tandemadm adjust %s'",
		     s->c->alg, s->ag.auth_v2 ? 2 : 1, s->c->res);
		return;
	}
	/* only a peer that proved itself gets the acceptor's answer */
	if (s->ag.auth_v2 && s->role == SETUP_ACCEPTOR &&
	    queue_response(s, s->m_own, s->m_own_len) < 0) {
		fail(s, "Authentication of peer failed: cannot compute our response");
		return;
	}
	s->phase = END;
	s->status = SETUP_DONE;
}

static uint16_t expected(const struct setup *s)
{
	return s->phase == HELLO_IN	  ? WIRE_P_HELLO
	       : s->phase == CHALLENGE_IN ? WIRE_P_AUTH_CHALLENGE
					  : WIRE_P_AUTH_RESPONSE;
}

/* One whole packet is in (header s->h, payload s->payload). */
static void on_packet(struct setup *s)
{
	char why[WIRE_REASON_MAX];
	struct wire_pkt pkt;
	int rc = wire_pkt_decode(&s->h, s->payload, s->h.len, &pkt, why, sizeof(why));

	if (rc < 0) {
		if (s->phase == HELLO_IN)
			fail(s, "bad first packet: %s", why);
		else
			fail(s, "during authentication: %s", why);
		return;
	}
	if (pkt.type != expected(s)) {
		if (s->phase == HELLO_IN)
			fail(s, "first packet is %s, not P_HELLO", wire_type_name(pkt.type));
		else
			fail(s, "Authentication of peer failed: expected %s, got %s",
			     wire_type_name(expected(s)), wire_type_name(pkt.type));
		return;
	}
	switch (s->phase) {
	case HELLO_IN:
		on_hello(s, &pkt);
		break;
	case CHALLENGE_IN:
		on_challenge(s, &pkt);
		break;
	case RESPONSE_IN:
		on_response(s, &pkt);
		break;
	default:
		break;
	}
}

/* The header is in: may such a packet come now? */
static void on_header(struct setup *s)
{
	char why[WIRE_REASON_MAX];
	uint64_t features = s->phase == HELLO_IN ? WIRE_F_ALL : s->ag.features;
	int rc = wire_hdr_decode(s->hdr, &s->h, why, sizeof(why));

	if (rc == 0 && s->h.len > SETUP_PKT_MAX) {
		snprintf(why, sizeof(why), "%s of %u bytes, more than %u before authentication",
			 wire_type_name(s->h.type), s->h.len, SETUP_PKT_MAX);
		rc = -E2BIG;
	}
	if (rc == 0)
		rc = wire_pkt_check(&s->h, s->stream, features, why, sizeof(why));
	if (rc == -ENOMSG)
		snprintf(why, sizeof(why), "%s is not one of the setup's packets",
			 wire_type_name(s->h.type));
	if (rc < 0) {
		if (s->phase == HELLO_IN)
			fail(s, "bad first packet: %s", why);
		else
			fail(s, "during authentication: %s", why);
		return;
	}
	s->in_payload = true;
	s->have = 0;
	if (s->h.len == 0)
		on_packet(s);
}

size_t setup_want(const struct setup *s)
{
	if (s->phase != HELLO_IN && s->phase != CHALLENGE_IN && s->phase != RESPONSE_IN)
		return 0;
	return s->in_payload ? s->h.len - s->have : WIRE_HDR_SIZE - s->have;
}

int setup_input(struct setup *s, const void *buf, size_t len)
{
	size_t want = setup_want(s);

	if (!buf || len == 0 || len > want)
		return -EINVAL;
	if (s->in_payload) {
		memcpy(s->payload + s->have, buf, len);
		s->have += len;
		if (s->have == s->h.len) {
			s->in_payload = false;
			s->have = 0;
			on_packet(s);
		}
		return 0;
	}
	memcpy(s->hdr + s->have, buf, len);
	s->have += len;
	if (s->have == WIRE_HDR_SIZE)
		on_header(s);
	return 0;
}

/* Per phase: its name, and what EOF and the deadline mean there. */
static const struct {
	const char *name, *eof, *expire;
} phases[] = {
	[HELLO_IN] = {"awaiting P_HELLO", "closed before its P_HELLO", "no P_HELLO in time"},
	[DECIDE] = {"P_HELLO received", "during authentication: closed", "no decision in time"},
	[CHALLENGE_IN] = {"awaiting P_AUTH_CHALLENGE", "during authentication: closed",
			  "during authentication: no challenge in time"},
	[RESPONSE_IN] = {"awaiting P_AUTH_RESPONSE", "during authentication: closed",
			 "during authentication: no response in time"},
	[END] = {"ended", NULL, NULL},
};

void setup_eof(struct setup *s)
{
	if (s->phase == RESPONSE_IN && s->role == SETUP_INITIATOR && s->ag.auth_v2)
		fail(s, "Authentication of peer failed: it closed the connection instead of "
			"answering our response (a different shared-secret on the two nodes?)");
	else if (phases[s->phase].eof)
		fail(s, "%s", phases[s->phase].eof);
}

void setup_expire(struct setup *s)
{
	if (phases[s->phase].expire)
		fail(s, "%s", phases[s->phase].expire);
	else if (s->out_pos < s->out_len)
		fail(s, "it does not read what we send");
}

const void *setup_output(const struct setup *s, size_t *len)
{
	*len = s->out_len - s->out_pos;
	return s->out + s->out_pos;
}

void setup_sent(struct setup *s, size_t n)
{
	if (n > s->out_len - s->out_pos)
		n = s->out_len - s->out_pos;
	s->out_pos += n;
	if (s->out_pos == s->out_len)
		s->out_pos = s->out_len = 0;
}

enum setup_status setup_status(const struct setup *s)
{
	return s->status;
}

const char *setup_reason(const struct setup *s)
{
	return s->status == SETUP_FAILED ? s->reason : "";
}

const char *setup_phase_name(const struct setup *s)
{
	return phases[s->phase].name;
}

const struct wire_hello *setup_peer_hello(const struct setup *s)
{
	return s->have_peer ? &s->peer : NULL;
}

const struct wire_agreed *setup_agreed(const struct setup *s)
{
	return &s->ag;
}

enum wire_stream setup_stream(const struct setup *s)
{
	return s->stream;
}

int setup_accept(struct setup *s)
{
	if (s->status != SETUP_HELLO)
		return -EINVAL;
	s->status = SETUP_RUNNING;
	own_hello(s, 0);
	if (queue_hello(s) < 0) {
		fail(s, "cannot encode our P_HELLO");
		return 0;
	}
	agree(s);
	return 0;
}

int setup_refuse(struct setup *s)
{
	if (s->status != SETUP_HELLO)
		return -EINVAL;
	own_hello(s, WIRE_HELLO_DUPLICATE);
	s->phase = END;
	s->status = SETUP_REFUSED;
	if (queue_hello(s) < 0)
		fail(s, "cannot encode our P_HELLO");
	return 0;
}
