/*
 * test-auth: cram-hmac challenge/response. HMAC values against the
 * published test vectors (RFC 2202 for MD5 and SHA-1, RFC 4231 for the
 * SHA-2 family), the algorithm names, challenge checks (reflection, short,
 * long, all zero), a full two-sided exchange, and every way a response
 * can be wrong.
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors),    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_challenge),  cmocka_unit_test(test_exchange),
	    cmocka_unit_test(test_reflection), cmocka_unit_test(test_response_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, unit_teardown);
}
