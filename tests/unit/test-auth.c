/*
 * test-auth: cram-hmac challenge/response. HMAC values against the
 * published test vectors (RFC 2202 for MD5 and SHA-1, RFC 4231 for the
 * SHA-2 family), the algorithm names, challenge checks (reflection, short,
 * long, all zero), a full two-sided exchange, and every way a response
 * can be wrong; version 2's message M (doc/wire-protocol.md §5.4) against
 * bytes and HMACs computed independently (Python's hmac), and each relay
 * or reflection that M must defeat.
 */
#include "unit.h"

#include "auth.h"

struct vector {
	const char *alg;
	const char *key;  /* hex */
	const char *data; /* hex, or text if it starts with '"' */
	const char *mac;  /* hex */
};

#define K0B20 "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b"
#define KAA20 "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define JEFE "4a656665"
#define DD50                                                                                       \
	"dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"   \
	"dddddddddddddd"
#define BIGKEY_TEXT "\"Test Using Larger Than Block-Size Key - Hash Key First"
#define WANT_TEXT "\"what do ya want for nothing?"

static const struct vector vectors[] = {
    /* RFC 2202, HMAC-MD5: test cases 1, 2, 3, 6 */
    {"md5", "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b", "\"Hi There", "9294727a3638bb1c13f48ef8158bfc9d"},
    {"md5", JEFE, WANT_TEXT, "750c783e6ab0b503eaa86e310a5db738"},
    {"md5", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", DD50, "56be34521d144c88dbb8c733f0e8b3f6"},
    {"md5", NULL /* 0xaa x 80 */, BIGKEY_TEXT, "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd"},
    /* RFC 2202, HMAC-SHA-1: test cases 1, 2, 3, 6 */
    {"sha1", K0B20, "\"Hi There", "b617318655057264e28bc0b6fb378c8ef146be00"},
    {"sha1", JEFE, WANT_TEXT, "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"},
    {"sha1", KAA20, DD50, "125d7342b9ac11cd91a39af48aa17b4f63f175d3"},
    {"sha1", NULL /* 0xaa x 80 */, BIGKEY_TEXT, "aa4ae5e15272d00e95705637ce8a3b55ed402112"},
    /* RFC 4231: test cases 1 and 2 for every SHA-2, 6 for two */
    {"sha224", K0B20, "\"Hi There", "896fb1128abbdf196832107cd49df33f47b4b1169912ba4f53684b22"},
    {"sha256", K0B20, "\"Hi There",
     "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"},
    {"sha384", K0B20, "\"Hi There",
     "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59c"
     "faea9ea9076ede7f4af152e8b2fa9cb6"},
    {"sha512", K0B20, "\"Hi There",
     "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
     "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854"},
    {"sha224", JEFE, WANT_TEXT, "a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44"},
    {"sha256", JEFE, WANT_TEXT, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"},
    {"sha384", JEFE, WANT_TEXT,
     "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e"
     "8e2240ca5e69e2c78b3239ecfab21649"},
    {"sha512", JEFE, WANT_TEXT,
     "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
     "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737"},
    {"sha256", "" /* 0xaa x 131 */, BIGKEY_TEXT,
     "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"},
    {"sha512", "" /* 0xaa x 131 */, BIGKEY_TEXT,
     "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f352"
     "6b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598"},
    /* empty key and message (shared-secret unset) */
    {"md5", "-", "", "74e6f7298a9c2d168935f58c001bad88"},
    {"sha1", "-", "", "fbdb1d1b18aa6c08324b7d64b71fb76370690e1d"},
    {"sha256", "-", "", "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"},
};

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;
	unsigned int b;

	if (s[0] == '"') {
		n = strlen(s + 1);
		assert_true(n <= cap);
		memcpy(out, s + 1, n);
		return n;
	}
	for (; s[0] && s[1]; s += 2) {
		assert_true(n < cap);
		assert_int_equal(sscanf(s, "%2x", &b), 1);
		out[n++] = (uint8_t)b;
	}
	return n;
}

/* The key of a vector: NULL means 80 x 0xaa, "" 131 x 0xaa, "-" empty. */
static size_t vector_key(const struct vector *v, uint8_t *key, size_t cap)
{
	if (!v->key || !*v->key) {
		size_t n = v->key ? 131 : 80;

		memset(key, 0xaa, n);
		return n;
	}
	if (strcmp(v->key, "-") == 0)
		return 0;
	return unhex(v->key, key, cap);
}

static void test_vectors(void **state)
{
	unsigned int i;

	for (i = 0; i < UNIT_ARRAY_SIZE(vectors); i++) {
		const struct vector *v = &vectors[i];
		uint8_t key[200], data[200], want[AUTH_RESPONSE_MAX], got[AUTH_RESPONSE_MAX];
		size_t klen = vector_key(v, key, sizeof(key));
		size_t dlen = unhex(v->data, data, sizeof(data));
		size_t wlen = unhex(v->mac, want, sizeof(want));
		size_t glen = sizeof(got);
		int rc;

		rc = auth_response(v->alg, klen ? key : NULL, klen, data, dlen, got, &glen);
		if (rc != 0)
			fail_msg("vector %u (%s): rc %d", i, v->alg, rc);
		assert_int_equal(glen, wlen);
		assert_int_equal(auth_response_len(v->alg), (int)wlen);
		if (memcmp(got, want, wlen))
			fail_msg("vector %u (%s): wrong HMAC", i, v->alg);
		/* and the verifying side accepts exactly that */
		assert_int_equal(auth_verify(v->alg, key, klen, data, dlen, want, wlen), 0);
	}
}

static void test_names(void **state)
{
	static const struct {
		const char *name;
		const char *ossl;
		int len;
	} t[] = {
	    {"md5", "MD5", 16},
	    {"sha1", "SHA1", 20},
	    {"sha224", "SHA224", 28},
	    {"sha256", "SHA256", 32},
	    {"sha384", "SHA384", 48},
	    {"sha512", "SHA512", 64},
	    /* not drbd.conf names, or not hashes */
	    {"crc32c", NULL, -EOPNOTSUPP},
	    {"SHA1", NULL, -EOPNOTSUPP},
	    {"hmac(sha1)", NULL, -EOPNOTSUPP},
	    {"sha3-256", NULL, -EOPNOTSUPP},
	    {"sha", NULL, -EOPNOTSUPP},
	    {"", NULL, -EOPNOTSUPP},
	    {NULL, NULL, -EOPNOTSUPP},
	};
	unsigned int i;

	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		const char *o = auth_alg_openssl_name(t[i].name);

		if (t[i].ossl)
			assert_string_equal(o, t[i].ossl);
		else
			assert_null(o);
		assert_int_equal(auth_response_len(t[i].name), t[i].len);
		assert_int_equal(auth_alg_supported(t[i].name), t[i].len > 0);
	}
}

static void test_challenge(void **state)
{
	uint8_t a[AUTH_CHALLENGE_LEN], b[AUTH_CHALLENGE_LEN], peer[AUTH_CHALLENGE_MAX + 1];

	assert_int_equal(auth_challenge_new(a), 0);
	assert_int_equal(auth_challenge_new(b), 0);
	assert_memory_not_equal(a, b, sizeof(a));
	assert_int_equal(auth_check_peer_challenge(a, b, sizeof(b)), 0);
	assert_int_equal(auth_check_peer_challenge(b, a, sizeof(a)), 0);

	/* reflection: our own challenge, alone or with more bytes after it */
	assert_int_equal(auth_check_peer_challenge(a, a, sizeof(a)), -EACCES);
	memcpy(peer, a, sizeof(a));
	memset(peer + sizeof(a), 0x5a, sizeof(peer) - sizeof(a));
	assert_int_equal(auth_check_peer_challenge(a, peer, 100), -EACCES);
	assert_int_equal(auth_check_peer_challenge(a, peer, AUTH_CHALLENGE_MAX), -EACCES);
	/* one byte different is a different challenge */
	peer[63] ^= 1;
	assert_int_equal(auth_check_peer_challenge(a, peer, AUTH_CHALLENGE_LEN), 0);
	peer[63] ^= 1;
	peer[0] ^= 0x80;
	assert_int_equal(auth_check_peer_challenge(a, peer, AUTH_CHALLENGE_LEN), 0);

	/* lengths: 64..128 */
	memcpy(peer, b, sizeof(b));
	assert_int_equal(auth_check_peer_challenge(a, peer, AUTH_CHALLENGE_LEN - 1), -EBADMSG);
	assert_int_equal(auth_check_peer_challenge(a, peer, 1), -EBADMSG);
	assert_int_equal(auth_check_peer_challenge(a, peer, 0), -EBADMSG);
	assert_int_equal(auth_check_peer_challenge(a, NULL, 64), -EBADMSG);
	assert_int_equal(auth_check_peer_challenge(a, peer, AUTH_CHALLENGE_MAX), 0);
	assert_int_equal(auth_check_peer_challenge(a, peer, AUTH_CHALLENGE_MAX + 1), -EBADMSG);

	/* all zero, at any length; one nonzero byte anywhere is enough */
	memset(peer, 0, sizeof(peer));
	assert_int_equal(auth_check_peer_challenge(a, peer, AUTH_CHALLENGE_LEN), -EBADMSG);
	assert_int_equal(auth_check_peer_challenge(a, peer, AUTH_CHALLENGE_MAX), -EBADMSG);
	peer[AUTH_CHALLENGE_MAX - 1] = 1;
	assert_int_equal(auth_check_peer_challenge(a, peer, AUTH_CHALLENGE_MAX), 0);
}

struct side {
	const char *alg;
	const char *secret;
	uint8_t challenge[AUTH_CHALLENGE_LEN];
	uint8_t resp[AUTH_RESPONSE_MAX];
	size_t resp_len;
};

/* Steps 1-3 for both; returns what each side's auth_verify says. */
static void exchange(struct side *x, struct side *y, int *x_rc, int *y_rc)
{
	assert_int_equal(auth_challenge_new(x->challenge), 0);
	assert_int_equal(auth_challenge_new(y->challenge), 0);
	assert_int_equal(auth_check_peer_challenge(x->challenge, y->challenge, AUTH_CHALLENGE_LEN),
			 0);
	assert_int_equal(auth_check_peer_challenge(y->challenge, x->challenge, AUTH_CHALLENGE_LEN),
			 0);
	x->resp_len = y->resp_len = AUTH_RESPONSE_MAX;
	assert_int_equal(auth_response(x->alg, x->secret, strlen(x->secret), y->challenge,
				       AUTH_CHALLENGE_LEN, x->resp, &x->resp_len),
			 0);
	assert_int_equal(auth_response(y->alg, y->secret, strlen(y->secret), x->challenge,
				       AUTH_CHALLENGE_LEN, y->resp, &y->resp_len),
			 0);
	*x_rc = auth_verify(x->alg, x->secret, strlen(x->secret), x->challenge, AUTH_CHALLENGE_LEN,
			    y->resp, y->resp_len);
	*y_rc = auth_verify(y->alg, y->secret, strlen(y->secret), y->challenge, AUTH_CHALLENGE_LEN,
			    x->resp, x->resp_len);
}

static void test_exchange(void **state)
{
	struct side a = {.alg = "sha256", .secret = "s3cr3t-shared"};
	struct side b = {.alg = "sha256", .secret = "s3cr3t-shared"};
	uint8_t resp[AUTH_RESPONSE_MAX];
	size_t i, len;
	int ra, rb;

	exchange(&a, &b, &ra, &rb);
	assert_int_equal(ra, 0);
	assert_int_equal(rb, 0);

	/* each byte of the response matters */
	for (i = 0; i < b.resp_len; i++) {
		memcpy(resp, b.resp, b.resp_len);
		resp[i] ^= 0x01;
		assert_int_equal(auth_verify(a.alg, a.secret, strlen(a.secret), a.challenge,
					     AUTH_CHALLENGE_LEN, resp, b.resp_len),
				 -EACCES);
	}
	/* wrong length: short, long, empty, missing */
	assert_int_equal(auth_verify(a.alg, a.secret, strlen(a.secret), a.challenge,
				     AUTH_CHALLENGE_LEN, b.resp, b.resp_len - 1),
			 -EBADMSG);
	assert_int_equal(auth_verify(a.alg, a.secret, strlen(a.secret), a.challenge,
				     AUTH_CHALLENGE_LEN, b.resp, b.resp_len + 1),
			 -EBADMSG);
	assert_int_equal(auth_verify(a.alg, a.secret, strlen(a.secret), a.challenge,
				     AUTH_CHALLENGE_LEN, b.resp, 0),
			 -EBADMSG);
	assert_int_equal(auth_verify(a.alg, a.secret, strlen(a.secret), a.challenge,
				     AUTH_CHALLENGE_LEN, NULL, 32),
			 -EBADMSG);
	/* an answer to some other challenge (b's own) */
	len = sizeof(resp);
	assert_int_equal(auth_response(b.alg, b.secret, strlen(b.secret), b.challenge,
				       AUTH_CHALLENGE_LEN, resp, &len),
			 0);
	assert_int_equal(auth_verify(a.alg, a.secret, strlen(a.secret), a.challenge,
				     AUTH_CHALLENGE_LEN, resp, len),
			 -EACCES);
	/* unknown algorithm */
	assert_int_equal(auth_verify("sha3", a.secret, strlen(a.secret), a.challenge,
				     AUTH_CHALLENGE_LEN, b.resp, b.resp_len),
			 -EOPNOTSUPP);

	/* wrong secret: both sides refuse */
	b.secret = "s3cr3t-sharee";
	exchange(&a, &b, &ra, &rb);
	assert_int_equal(ra, -EACCES);
	assert_int_equal(rb, -EACCES);
	/* a secret that is a prefix of the right one */
	b.secret = "s3cr3t";
	exchange(&a, &b, &ra, &rb);
	assert_int_equal(ra, -EACCES);
	/* empty secrets on both sides work (conf-check warns about it) */
	a.secret = b.secret = "";
	exchange(&a, &b, &ra, &rb);
	assert_int_equal(ra, 0);
	assert_int_equal(rb, 0);
	/* different algorithms: the length already differs */
	a.secret = b.secret = "x";
	b.alg = "sha1";
	exchange(&a, &b, &ra, &rb);
	assert_int_equal(ra, -EBADMSG);
	assert_int_equal(rb, -EBADMSG);
	/* same length, different hash */
	a.alg = "sha512";
	b.alg = "sha512";
	exchange(&a, &b, &ra, &rb);
	assert_int_equal(ra, 0);
}

/* The reflection attack: Mallory has no secret, connects to A, and
 * presents A's own challenge, hoping A answers it so that Mallory can
 * replay the answer on a second connection. A refuses before answering. */
static void test_reflection(void **state)
{
	uint8_t a[AUTH_CHALLENGE_LEN], mallory[AUTH_CHALLENGE_LEN];

	assert_int_equal(auth_challenge_new(a), 0);
	memcpy(mallory, a, sizeof(a));
	assert_int_equal(auth_check_peer_challenge(a, mallory, sizeof(mallory)), -EACCES);
}

static void test_response_buffer(void **state)
{
	static const uint8_t ch[AUTH_CHALLENGE_LEN] = {1, 2, 3};
	uint8_t out[AUTH_RESPONSE_MAX + 8];
	size_t len;

	len = 19;
	assert_int_equal(auth_response("sha1", "k", 1, ch, sizeof(ch), out, &len), -ENOSPC);
	assert_int_equal(len, 19);
	len = 20;
	assert_int_equal(auth_response("sha1", "k", 1, ch, sizeof(ch), out, &len), 0);
	assert_int_equal(len, 20);
	len = sizeof(out);
	assert_int_equal(auth_response("sha512", "k", 1, ch, sizeof(ch), out, &len), 0);
	assert_int_equal(len, 64);
	len = sizeof(out);
	assert_int_equal(auth_response("whirlpool", "k", 1, ch, sizeof(ch), out, &len),
			 -EOPNOTSUPP);
	assert_int_equal(auth_response(NULL, "k", 1, ch, sizeof(ch), out, &len), -EOPNOTSUPP);
	/* a 64-character secret (the longest drbd.conf allows) */
	len = sizeof(out);
	assert_int_equal(auth_response("sha256",
				       "0123456789abcdef0123456789abcdef"
				       "0123456789abcdef0123456789abcdef",
				       64, ch, sizeof(ch), out, &len),
			 0);
}

/* ---------------------------------------------------------------- version 2 */

static uint8_t ch_i[AUTH_CHALLENGE_LEN], ch_a[AUTH_CHALLENGE_LEN];

static struct auth_v2 v2_base(void)
{
	memset(ch_i, 0x11, sizeof(ch_i));
	memset(ch_a, 0x22, sizeof(ch_a));
	return (struct auth_v2){.purpose = AUTH_DATA,
				.conn_id = 0x0102030405060708ull,
				.res = "r0",
				.initiator = "alice",
				.acceptor = "bob",
				.initiator_challenge = ch_i,
				.acceptor_challenge = ch_a};
}

/* HMAC-sha256("secret", M(sender)) as hex. */
static const char *v2_mac(const struct auth_v2 *a, enum auth_role sender)
{
	static char hex[2 * AUTH_RESPONSE_MAX + 1];
	uint8_t m[AUTH_V2_MSG_MAX], mac[AUTH_RESPONSE_MAX];
	size_t mlen = sizeof(m), maclen = sizeof(mac), i;

	assert_int_equal(auth_v2_message(a, sender, m, &mlen), 0);
	assert_int_equal(auth_response("sha256", "secret", 6, m, mlen, mac, &maclen), 0);
	for (i = 0; i < maclen; i++)
		snprintf(hex + 2 * i, 3, "%02x", mac[i]);
	return hex;
}

static void test_v2_message(void **state)
{
	static const uint8_t head[] = {
	    't', 'a', 'n', 'd', 'e', 'm', '-', 'a', 'u', 't', 'h', '-', 'v', '2', /* tag */
	    1, 1,				    /* data socket, sent by the initiator */
	    1, 2, 3, 4, 5, 6, 7, 8,		    /* conn_id, big-endian */
	    2, 'r', '0', 5, 'a', 'l', 'i', 'c', 'e', 3, 'b', 'o', 'b'};
	struct auth_v2 a = v2_base();
	uint8_t m[AUTH_V2_MSG_MAX];
	size_t len = sizeof(m);
	char big[AUTH_V2_NAME_MAX + 2];

	(void)state;
	assert_int_equal(auth_v2_message(&a, AUTH_INITIATOR, m, &len), 0);
	assert_int_equal(len, sizeof(head) + 2 * AUTH_CHALLENGE_LEN);
	assert_memory_equal(m, head, sizeof(head));
	/* the challenge it received (the acceptor's), then the one it sent */
	assert_memory_equal(m + sizeof(head), ch_a, AUTH_CHALLENGE_LEN);
	assert_memory_equal(m + sizeof(head) + AUTH_CHALLENGE_LEN, ch_i, AUTH_CHALLENGE_LEN);
	len = sizeof(m);
	assert_int_equal(auth_v2_message(&a, AUTH_ACCEPTOR, m, &len), 0);
	assert_int_equal(m[15], 2);
	assert_memory_equal(m + sizeof(head), ch_i, AUTH_CHALLENGE_LEN);

	/* HMACs computed by Python's hmac over the same fields */
	assert_string_equal(v2_mac(&a, AUTH_INITIATOR),
			    "bae936a47df1afbdbb79c74404e1d068595e636f08b104903d6d6f127006aa5b");
	assert_string_equal(v2_mac(&a, AUTH_ACCEPTOR),
			    "ae71c56cc200923f4d9a70205b7de36f2fe5d17e078f58ea359494f8f4c764d2");

	/* the longest message fits AUTH_V2_MSG_MAX; one byte less does not */
	memset(big, 'n', sizeof(big));
	big[AUTH_V2_NAME_MAX] = '\0';
	a.res = a.initiator = a.acceptor = big;
	len = sizeof(m);
	assert_int_equal(auth_v2_message(&a, AUTH_INITIATOR, m, &len), 0);
	assert_int_equal(len, AUTH_V2_MSG_MAX);
	len = AUTH_V2_MSG_MAX - 1;
	assert_int_equal(auth_v2_message(&a, AUTH_INITIATOR, m, &len), -ENOSPC);

	/* refused: a name too long or empty or missing, a bad role or purpose */
	big[AUTH_V2_NAME_MAX] = 'n';
	big[AUTH_V2_NAME_MAX + 1] = '\0';
	len = sizeof(m);
	assert_int_equal(auth_v2_message(&a, AUTH_INITIATOR, m, &len), -EINVAL);
	a = v2_base();
	a.acceptor = "";
	assert_int_equal(auth_v2_message(&a, AUTH_INITIATOR, m, &len), -EINVAL);
	a.acceptor = NULL;
	assert_int_equal(auth_v2_message(&a, AUTH_INITIATOR, m, &len), -EINVAL);
	a = v2_base();
	assert_int_equal(auth_v2_message(&a, 3, m, &len), -EINVAL);
	a.purpose = 0;
	assert_int_equal(auth_v2_message(&a, AUTH_INITIATOR, m, &len), -EINVAL);
	a = v2_base();
	a.initiator_challenge = NULL;
	assert_int_equal(auth_v2_message(&a, AUTH_INITIATOR, m, &len), -EINVAL);
}

/*
 * Each attack of doc/wire-protocol.md §5.4 as a change of one field: the
 * response an attacker can obtain (the real node's, computed over M as the
 * real node saw it) must not verify where the attacker wants to use it.
 */
static void test_v2_relays(void **state)
{
	const struct auth_v2 base = v2_base();
	struct auth_v2 a;
	char want[2 * AUTH_RESPONSE_MAX + 1];
	uint8_t other[AUTH_CHALLENGE_LEN];

	(void)state;
	snprintf(want, sizeof(want), "%s", v2_mac(&base, AUTH_INITIATOR));
	/* reflection: the acceptor's own response, as if it were the initiator's */
	assert_string_not_equal(v2_mac(&base, AUTH_ACCEPTOR), want);
	/* swapped challenges with the same role */
	a = base;
	a.initiator_challenge = ch_a;
	a.acceptor_challenge = ch_i;
	assert_string_not_equal(v2_mac(&a, AUTH_ACCEPTOR), want);
	/* another resource sharing the secret */
	a = base;
	a.res = "r1";
	assert_string_not_equal(v2_mac(&a, AUTH_INITIATOR), want);
	/* the other socket of the same attempt */
	a = base;
	a.purpose = AUTH_META;
	assert_string_not_equal(v2_mac(&a, AUTH_INITIATOR), want);
	/* another attempt */
	a = base;
	a.conn_id++;
	assert_string_not_equal(v2_mac(&a, AUTH_INITIATOR), want);
	/* the names swapped (the other direction) */
	a = base;
	a.initiator = "bob";
	a.acceptor = "alice";
	assert_string_not_equal(v2_mac(&a, AUTH_INITIATOR), want);
	/* a name boundary moved: "r0"+"alice" against "r0a"+"lice" */
	a = base;
	a.res = "r0a";
	a.initiator = "lice";
	assert_string_not_equal(v2_mac(&a, AUTH_INITIATOR), want);
	/* replay: the verifier's fresh challenge differs */
	memset(other, 0x33, sizeof(other));
	a = base;
	a.acceptor_challenge = other;
	assert_string_not_equal(v2_mac(&a, AUTH_INITIATOR), want);
	/* and nothing else changes it: same inputs, same response */
	a = base;
	assert_string_equal(v2_mac(&a, AUTH_INITIATOR), want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors),    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_challenge),  cmocka_unit_test(test_exchange),
	    cmocka_unit_test(test_reflection), cmocka_unit_test(test_response_buffer),
	    cmocka_unit_test(test_v2_message), cmocka_unit_test(test_v2_relays),
	};

	return cmocka_run_group_tests(tests, NULL, unit_teardown);
}
