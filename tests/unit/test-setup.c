/*
 * test-setup: one socket's P_HELLO and authentication as a machine with
 * no I/O (lib/setup.c, doc/wire-protocol.md §5.1-§5.5). Two machines are
 * joined by in-memory pipes and pumped, whole or a byte at a time:
 * versions 1 and 2 and no authentication reach DONE with the same
 * agreement; a wrong secret fails on the acceptor, which never sends its
 * answer; a duplicate, a reflected challenge, a foreign resource or node,
 * garbage, an oversized packet, a closed or silent peer each end with the
 * reason the log shows; and nothing past the last packet is read.
 */
#include "unit.h"

#include "auth.h"
#include "setup.h"
#include "wire.h"

static const char *const alice_names[] = {"alice"};
static const char *const bob_names[] = {"bob"};

static struct setup_conf conf_of(const char *me, const char *const *peer, const char *alg,
				 const char *secret, bool v1)
{
	return (struct setup_conf){.res = "r0",
				   .me = me,
				   .peer_names = peer,
				   .n_peer_names = 1,
				   .alg = alg,
				   .secret = secret,
				   .secret_len = secret ? strlen(secret) : 0,
				   .auth_v1 = v1,
				   .features = WIRE_F_TRIM | WIRE_F_CSUMS};
}

/* What one side sent and the other has not read yet. */
struct pipe {
	uint8_t buf[8192];
	size_t len;
};

/* from's output into p. */
static void drain(struct setup *from, struct pipe *p)
{
	size_t n;
	const void *o = setup_output(from, &n);

	assert_true(p->len + n <= sizeof(p->buf));
	memcpy(p->buf + p->len, o, n);
	p->len += n;
	setup_sent(from, n);
}

/* As much of p into to as it wants, step bytes at a time; bytes moved. */
static size_t feed(struct pipe *p, struct setup *to, size_t step)
{
	size_t moved = 0;

	while (p->len && setup_want(to)) {
		size_t n = setup_want(to);

		if (n > step)
			n = step;
		if (n > p->len)
			n = p->len;
		assert_int_equal(setup_input(to, p->buf, n), 0);
		memmove(p->buf, p->buf + n, p->len - n);
		p->len -= n;
		moved += n;
	}
	return moved;
}

/* Pump both ways until neither moves; the acceptor's HELLO decision by
 * accept (true) or refuse. */
static void pump(struct setup *i, struct setup *a, struct pipe *ia, struct pipe *ai, size_t step,
		 bool accept)
{
	for (int round = 0; round < 64; round++) {
		size_t moved;

		drain(i, ia);
		drain(a, ai);
		moved = feed(ia, a, step) + feed(ai, i, step);
		if (setup_status(a) == SETUP_HELLO) {
			assert_int_equal(accept ? setup_accept(a) : setup_refuse(a), 0);
			moved++;
		}
		if (!moved && !ia->len && !ai->len) {
			size_t n1, n2;

			setup_output(i, &n1);
			setup_output(a, &n2);
			if (!n1 && !n2)
				return;
		}
		if (!moved && setup_want(i) == 0 && setup_want(a) == 0) {
			drain(i, ia);
			drain(a, ai);
			return;
		}
	}
	fail_msg("the exchange does not end");
}

static void exchange(const struct setup_conf *ci, const struct setup_conf *ca, size_t step,
		     struct setup **pi, struct setup **pa, struct pipe *ia, struct pipe *ai)
{
	memset(ia, 0, sizeof(*ia));
	memset(ai, 0, sizeof(*ai));
	assert_int_equal(setup_new(ci, SETUP_INITIATOR, WIRE_STREAM_DATA, 0x1234, pi), 0);
	assert_int_equal(setup_new(ca, SETUP_ACCEPTOR, 0, 0, pa), 0);
	pump(*pi, *pa, ia, ai, step, true);
}

static void both_done(struct setup *i, struct setup *a)
{
	assert_int_equal(setup_status(i), SETUP_DONE);
	assert_int_equal(setup_status(a), SETUP_DONE);
	assert_int_equal(setup_agreed(i)->conn_id, 0x1234);
	assert_int_equal(setup_agreed(a)->conn_id, 0x1234);
	assert_int_equal(setup_agreed(i)->features, setup_agreed(a)->features);
	assert_int_equal(setup_agreed(i)->auth_v2, setup_agreed(a)->auth_v2);
	assert_int_equal(setup_stream(a), WIRE_STREAM_DATA);
	assert_string_equal(setup_peer_hello(i)->node, "bob");
	assert_string_equal(setup_peer_hello(a)->node, "alice");
	assert_int_equal(setup_want(i), 0);
	assert_int_equal(setup_want(a), 0);
}

static void test_versions(void **state)
{
	const size_t steps[] = {1, 3, 16, 100000};
	struct setup_conf ci, ca;
	struct pipe ia, ai;
	struct setup *i, *a;

	(void)state;
	for (size_t k = 0; k < sizeof(steps) / sizeof(steps[0]); k++) {
		for (int v = 0; v < 3; v++) { /* version 2, version 1, none */
			const char *alg = v == 2 ? NULL : "sha256";

			ci = conf_of("alice", bob_names, alg, "s3cret", v == 1);
			ca = conf_of("bob", alice_names, alg, "s3cret", v == 1);
			exchange(&ci, &ca, steps[k], &i, &a, &ia, &ai);
			both_done(i, a);
			assert_int_equal(setup_agreed(i)->auth_v2, v == 0);
			assert_int_equal(setup_agreed(i)->auth, v != 2);
			assert_int_equal(ia.len + ai.len, 0);
			setup_free(i);
			setup_free(a);
		}
	}
}

/* A wrong secret: the acceptor fails on the initiator's proof and sends
 * nothing more (with version 1, not even the answer it had ready); the
 * initiator sees it close. */
static void test_wrong_secret(void **state)
{
	struct setup_conf ci = conf_of("alice", bob_names, "sha256", "right", false);
	struct setup_conf ca = conf_of("bob", alice_names, "sha256", "wrong", false);
	struct pipe ia, ai;
	struct setup *i, *a;
	size_t n;

	(void)state;
	exchange(&ci, &ca, 7, &i, &a, &ia, &ai);
	assert_int_equal(setup_status(a), SETUP_FAILED);
	assert_non_null(strstr(setup_reason(a), "Authentication of peer failed: wrong shared-secret?"));
	setup_output(a, &n);
	assert_int_equal(n, 0);
	assert_int_equal(setup_status(i), SETUP_RUNNING);
	assert_string_equal(setup_phase_name(i), "awaiting P_AUTH_RESPONSE");
	setup_eof(i);
	assert_int_equal(setup_status(i), SETUP_FAILED);
	assert_non_null(strstr(setup_reason(i), "it closed the connection instead of answering"));
	setup_free(i);
	setup_free(a);

	/* version 1 answers at once: both fail on the other's answer */
	ci = conf_of("alice", bob_names, "sha1", "right", true);
	ca = conf_of("bob", alice_names, "sha1", "wrong", true);
	exchange(&ci, &ca, 100000, &i, &a, &ia, &ai);
	assert_int_equal(setup_status(a), SETUP_FAILED);
	assert_non_null(strstr(setup_reason(a), "cram-hmac-version 1"));
	assert_int_equal(setup_status(i), SETUP_RUNNING); /* bob's answer was dropped */
	setup_eof(i);
	assert_string_equal(setup_reason(i), "during authentication: closed");
	setup_free(i);
	setup_free(a);
}

static void test_duplicate(void **state)
{
	struct setup_conf ci = conf_of("alice", bob_names, "sha256", "s", false);
	struct setup_conf ca = conf_of("bob", alice_names, "sha256", "s", false);
	struct pipe ia = {0}, ai = {0};
	struct setup *i, *a;

	(void)state;
	assert_int_equal(setup_new(&ci, SETUP_INITIATOR, WIRE_STREAM_META, 77, &i), 0);
	assert_int_equal(setup_new(&ca, SETUP_ACCEPTOR, 0, 0, &a), 0);
	assert_int_equal(setup_accept(a), -EINVAL); /* no P_HELLO yet */
	pump(i, a, &ia, &ai, 5, false);
	assert_int_equal(setup_status(a), SETUP_REFUSED);
	assert_int_equal(setup_stream(a), WIRE_STREAM_META);
	assert_int_equal(setup_status(i), SETUP_DUPLICATE);
	setup_free(i);
	setup_free(a);
}

/* The acceptor's own bytes, bounced back at it by someone who has no
 * secret: its challenge comes back as the peer's. */
static void test_reflection(void **state)
{
	struct setup_conf ca = conf_of("bob", alice_names, "sha256", "s", false);
	struct setup_conf cm = conf_of("alice", bob_names, "sha256", "s", false);
	struct pipe ia = {0}, ai = {0};
	struct setup *a, *m;
	uint8_t hdr[WIRE_HDR_SIZE];
	size_t n;
	const uint8_t *o;

	(void)state;
	/* a P_HELLO from "alice" gets bob to send his HELLO and challenge */
	assert_int_equal(setup_new(&cm, SETUP_INITIATOR, WIRE_STREAM_DATA, 9, &m), 0);
	assert_int_equal(setup_new(&ca, SETUP_ACCEPTOR, 0, 0, &a), 0);
	drain(m, &ia);
	feed(&ia, a, 1000);
	assert_int_equal(setup_status(a), SETUP_HELLO);
	assert_int_equal(setup_accept(a), 0);
	drain(a, &ai);
	/* skip bob's P_HELLO, send his challenge back to him */
	memcpy(hdr, ai.buf, sizeof(hdr));
	n = WIRE_HDR_SIZE + wire_get32(hdr + 8);
	o = ai.buf + n;
	memcpy(ia.buf, o, ai.len - n);
	ia.len = ai.len - n;
	feed(&ia, a, 1000);
	assert_int_equal(setup_status(a), SETUP_FAILED);
	assert_non_null(strstr(setup_reason(a), "it reflected our challenge"));
	setup_free(a);
	setup_free(m);
}

/* Feed raw bytes to a fresh acceptor; its status and reason. */
static enum setup_status raw(const void *buf, size_t len, char *reason, size_t n)
{
	struct setup_conf ca = conf_of("bob", alice_names, "sha256", "s", false);
	struct setup *a;
	const uint8_t *p = buf;
	enum setup_status st;

	assert_int_equal(setup_new(&ca, SETUP_ACCEPTOR, 0, 0, &a), 0);
	while (len && setup_want(a)) {
		size_t k = setup_want(a) < len ? setup_want(a) : len;

		assert_int_equal(setup_input(a, p, k), 0);
		p += k;
		len -= k;
	}
	if (setup_status(a) == SETUP_RUNNING)
		setup_eof(a);
	st = setup_status(a);
	snprintf(reason, n, "%s", setup_reason(a));
	setup_free(a);
	return st;
}

static size_t hello_bytes(const char *node, const char *res, uint8_t *buf, size_t cap)
{
	struct wire_pkt pkt;
	int n;

	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_HELLO;
	pkt.volume = WIRE_VOL_NONE;
	pkt.u.hello.proto_min = WIRE_PROTO_MIN;
	pkt.u.hello.proto_max = WIRE_PROTO_MAX;
	pkt.u.hello.stream = WIRE_STREAM_DATA;
	pkt.u.hello.flags = WIRE_HELLO_AUTH | WIRE_HELLO_AUTH_V2;
	pkt.u.hello.conn_id = 5;
	snprintf(pkt.u.hello.node, sizeof(pkt.u.hello.node), "%s", node);
	snprintf(pkt.u.hello.res, sizeof(pkt.u.hello.res), "%s", res);
	n = wire_pkt_encode(&pkt, buf, cap);
	assert_true(n > 0);
	return (size_t)n;
}

static void test_refusals(void **state)
{
	uint8_t buf[4096];
	char why[512];
	struct wire_hdr h = {.type = WIRE_P_HELLO, .volume = WIRE_VOL_NONE, .len = 60000};
	size_t n;

	(void)state;
	n = hello_bytes("alice", "r9", buf, sizeof(buf));
	assert_int_equal(raw(buf, n, why, sizeof(why)), SETUP_FAILED);
	assert_string_equal(why, "it is for resource 'r9'");
	n = hello_bytes("mallory", "r0", buf, sizeof(buf));
	assert_int_equal(raw(buf, n, why, sizeof(why)), SETUP_FAILED);
	assert_string_equal(why, "it claims node 'mallory', the configured peer is 'alice'");
	assert_int_equal(raw("GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27, why, sizeof(why)),
			 SETUP_FAILED);
	assert_non_null(strstr(why, "bad first packet"));
	assert_int_equal(raw("\x01\x02", 2, why, sizeof(why)), SETUP_FAILED);
	assert_string_equal(why, "closed before its P_HELLO");
	/* a header that announces 60000 bytes: refused before they are read */
	wire_hdr_encode(&h, buf);
	assert_int_equal(raw(buf, WIRE_HDR_SIZE, why, sizeof(why)), SETUP_FAILED);
	assert_non_null(strstr(why, "before authentication"));
	/* a well-formed packet of the wrong type first */
	h = (struct wire_hdr){.type = WIRE_P_AUTH_RESPONSE, .volume = WIRE_VOL_NONE, .len = 32};
	wire_hdr_encode(&h, buf);
	memset(buf + WIRE_HDR_SIZE, 7, 32);
	assert_int_equal(raw(buf, WIRE_HDR_SIZE + 32, why, sizeof(why)), SETUP_FAILED);
	assert_string_equal(why, "first packet is P_AUTH_RESPONSE, not P_HELLO");
}

/* Silence in each phase has its own words. */
static void test_expire(void **state)
{
	struct setup_conf ci = conf_of("alice", bob_names, "sha256", "s", false);
	struct setup_conf ca = conf_of("bob", alice_names, "sha256", "s", false);
	struct pipe ia = {0}, ai = {0};
	struct setup *i, *a;

	(void)state;
	assert_int_equal(setup_new(&ca, SETUP_ACCEPTOR, 0, 0, &a), 0);
	setup_expire(a);
	assert_string_equal(setup_reason(a), "no P_HELLO in time");
	setup_free(a);

	/* the initiator got bob's HELLO and challenge, then silence */
	assert_int_equal(setup_new(&ci, SETUP_INITIATOR, WIRE_STREAM_DATA, 3, &i), 0);
	assert_int_equal(setup_new(&ca, SETUP_ACCEPTOR, 0, 0, &a), 0);
	drain(i, &ia);
	feed(&ia, a, 1000);
	assert_int_equal(setup_accept(a), 0);
	drain(a, &ai);
	feed(&ai, i, 1000);
	assert_string_equal(setup_phase_name(i), "awaiting P_AUTH_RESPONSE");
	setup_expire(i);
	assert_string_equal(setup_reason(i), "during authentication: no response in time");
	/* bob is still waiting for alice's challenge */
	assert_string_equal(setup_phase_name(a), "awaiting P_AUTH_CHALLENGE");
	setup_expire(a);
	assert_string_equal(setup_reason(a), "during authentication: no challenge in time");
	setup_free(i);
	setup_free(a);
}

/* Only one side has a secret: both learn why, the acceptor's P_HELLO
 * still goes out. */
static void test_negotiation(void **state)
{
	struct setup_conf ci = conf_of("alice", bob_names, NULL, NULL, false);
	struct setup_conf ca = conf_of("bob", alice_names, "sha256", "s", false);
	struct pipe ia, ai;
	struct setup *i, *a;

	(void)state;
	exchange(&ci, &ca, 100000, &i, &a, &ia, &ai);
	assert_int_equal(setup_status(a), SETUP_FAILED);
	assert_non_null(strstr(setup_reason(a), "peer has none configured"));
	assert_int_equal(setup_status(i), SETUP_FAILED);
	assert_non_null(strstr(setup_reason(i), "peer requires authentication"));
	setup_free(i);
	setup_free(a);
}

/* What follows the last packet stays unread. */
static void test_no_overread(void **state)
{
	struct setup_conf ci = conf_of("alice", bob_names, "sha256", "s", false);
	struct setup_conf ca = conf_of("bob", alice_names, "sha256", "s", false);
	struct pipe ia = {0}, ai = {0};
	struct setup *i, *a;

	(void)state;
	assert_int_equal(setup_new(&ci, SETUP_INITIATOR, WIRE_STREAM_DATA, 0x1234, &i), 0);
	assert_int_equal(setup_new(&ca, SETUP_ACCEPTOR, 0, 0, &a), 0);
	for (int r = 0; r < 16 && setup_status(i) != SETUP_DONE; r++) {
		drain(i, &ia);
		drain(a, &ai);
		if (setup_status(a) == SETUP_DONE && ai.len) {
			memcpy(ai.buf + ai.len, "NEXT", 4); /* the handshake's first bytes */
			ai.len += 4;
		}
		feed(&ia, a, 1000);
		feed(&ai, i, 1000);
		if (setup_status(a) == SETUP_HELLO)
			assert_int_equal(setup_accept(a), 0);
	}
	both_done(i, a);
	assert_int_equal(ai.len, 4);
	assert_memory_equal(ai.buf, "NEXT", 4);
	assert_int_equal(setup_input(i, "x", 1), -EINVAL);
	setup_free(i);
	setup_free(a);
}

static void test_args(void **state)
{
	struct setup_conf c = conf_of("alice", bob_names, NULL, NULL, false);
	struct setup *s;

	(void)state;
	assert_int_equal(setup_new(&c, SETUP_INITIATOR, WIRE_STREAM_DATA, 0, &s), -EINVAL);
	assert_int_equal(setup_new(&c, SETUP_INITIATOR, 0, 1, &s), -EINVAL);
	assert_int_equal(setup_new(NULL, SETUP_ACCEPTOR, 0, 0, &s), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_versions),	cmocka_unit_test(test_wrong_secret),
	    cmocka_unit_test(test_duplicate),	cmocka_unit_test(test_reflection),
	    cmocka_unit_test(test_refusals),	cmocka_unit_test(test_expire),
	    cmocka_unit_test(test_negotiation), cmocka_unit_test(test_no_overread),
	    cmocka_unit_test(test_args),
	};

	return cmocka_run_group_tests(tests, NULL, unit_teardown);
}
