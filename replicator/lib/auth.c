/*
 * auth: HMAC challenge/response (cram-hmac-alg) on OpenSSL 3 libcrypto:
 * EVP_Q_mac() for the HMAC, RAND_bytes() for challenges, CRYPTO_memcmp()
 * for the comparison. Buffers that held an expected response are wiped.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "auth.h"

/* drbd.conf (kernel crypto) names and their OpenSSL digest names. */
static const struct {
	const char *conf;
	const char *ossl;
} auth_algs[] = {
    {"md5", "MD5"},	  {"sha1", "SHA1"},	{"sha224", "SHA224"},
    {"sha256", "SHA256"}, {"sha384", "SHA384"}, {"sha512", "SHA512"},
};

const char *auth_alg_openssl_name(const char *name)
{
	size_t i;

	if (!name)
		return NULL;
	for (i = 0; i < sizeof(auth_algs) / sizeof(auth_algs[0]); i++)
		if (strcmp(name, auth_algs[i].conf) == 0)
			return auth_algs[i].ossl;
	return NULL;
}

int auth_response_len(const char *alg)
{
	const char *ossl = auth_alg_openssl_name(alg);
	EVP_MD *md;
	int len;

	if (!ossl)
		return -EOPNOTSUPP;
	md = EVP_MD_fetch(NULL, ossl, NULL);
	if (!md)
		return -EOPNOTSUPP;
	len = EVP_MD_get_size(md);
	EVP_MD_free(md);
	if (len <= 0 || len > (int)AUTH_RESPONSE_MAX)
		return -EOPNOTSUPP;
	return len;
}

bool auth_alg_supported(const char *name)
{
	return auth_response_len(name) > 0;
}

static bool all_zero(const uint8_t *p, size_t len)
{
	uint8_t acc = 0;
	size_t i;

	for (i = 0; i < len; i++)
		acc |= p[i];
	return acc == 0;
}

int auth_challenge_new(uint8_t out[AUTH_CHALLENGE_LEN])
{
	int tries;

	/* all zero has probability 2^-512; retrying keeps the promise cheap */
	for (tries = 0; tries < 3; tries++) {
		if (RAND_bytes(out, AUTH_CHALLENGE_LEN) != 1)
			return -EIO;
		if (!all_zero(out, AUTH_CHALLENGE_LEN))
			return 0;
	}
	return -EIO;
}

int auth_check_peer_challenge(const uint8_t own[AUTH_CHALLENGE_LEN], const uint8_t *peer,
			      size_t len)
{
	if (!peer || len < AUTH_CHALLENGE_LEN || len > AUTH_CHALLENGE_MAX)
		return -EBADMSG;
	if (all_zero(peer, len))
		return -EBADMSG;
	if (CRYPTO_memcmp(own, peer, AUTH_CHALLENGE_LEN) == 0)
		return -EACCES;
	return 0;
}

int auth_response(const char *alg, const void *secret, size_t secret_len, const uint8_t *challenge,
		  size_t len, uint8_t *out, size_t *outlen)
{
	static const unsigned char empty[1];
	int need = auth_response_len(alg);
	size_t got = 0;

	if (need < 0)
		return need;
	if (*outlen < (size_t)need)
		return -ENOSPC;
	/* EVP_MAC_init() takes a NULL key as "keep the key already set", and
	 * what that does on a fresh context varies between OpenSSL 3.x
	 * releases: an empty secret gets a non-NULL pointer */
	if (!secret || secret_len == 0) {
		secret = empty;
		secret_len = 0;
	}
	if (!challenge)
		challenge = empty;
	if (!EVP_Q_mac(NULL, "HMAC", NULL, auth_alg_openssl_name(alg), NULL, secret, secret_len,
		       challenge, len, out, *outlen, &got) ||
	    got != (size_t)need)
		return -EIO;
	*outlen = got;
	return 0;
}

int auth_verify(const char *alg, const void *secret, size_t secret_len, const uint8_t *own,
		size_t own_len, const uint8_t *resp, size_t resp_len)
{
	uint8_t want[AUTH_RESPONSE_MAX];
	size_t want_len = sizeof(want);
	int rc = auth_response_len(alg);

	if (rc < 0)
		return rc;
	if (!resp || resp_len != (size_t)rc)
		return -EBADMSG;
	rc = auth_response(alg, secret, secret_len, own, own_len, want, &want_len);
	if (rc == 0 && CRYPTO_memcmp(want, resp, want_len) != 0)
		rc = -EACCES;
	OPENSSL_cleanse(want, sizeof(want));
	return rc;
}

/* ---------------------------------------------------------------- version 2 */

static int put_name(uint8_t *out, size_t *at, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > AUTH_V2_NAME_MAX)
		return -EINVAL;
	out[(*at)++] = (uint8_t)n;
	memcpy(out + *at, name, n);
	*at += n;
	return 0;
}

int auth_v2_message(const struct auth_v2 *a, enum auth_role sender, uint8_t *out,
		    size_t *outlen)
{
	uint8_t m[AUTH_V2_MSG_MAX];
	const uint8_t *got, *sent;
	size_t at = 0;
	int i;

	if (!a || (sender != AUTH_INITIATOR && sender != AUTH_ACCEPTOR) ||
	    (a->purpose != AUTH_DATA && a->purpose != AUTH_META) || !a->initiator_challenge ||
	    !a->acceptor_challenge)
		return -EINVAL;
	memcpy(m, AUTH_V2_TAG, strlen(AUTH_V2_TAG));
	at = strlen(AUTH_V2_TAG);
	m[at++] = (uint8_t)a->purpose;
	m[at++] = (uint8_t)sender;
	for (i = 7; i >= 0; i--)
		m[at++] = (uint8_t)(a->conn_id >> (8 * i));
	if (put_name(m, &at, a->res) < 0 || put_name(m, &at, a->initiator) < 0 ||
	    put_name(m, &at, a->acceptor) < 0)
		return -EINVAL;
	got = sender == AUTH_INITIATOR ? a->acceptor_challenge : a->initiator_challenge;
	sent = sender == AUTH_INITIATOR ? a->initiator_challenge : a->acceptor_challenge;
	memcpy(m + at, got, AUTH_CHALLENGE_LEN);
	at += AUTH_CHALLENGE_LEN;
	memcpy(m + at, sent, AUTH_CHALLENGE_LEN);
	at += AUTH_CHALLENGE_LEN;
	if (*outlen < at)
		return -ENOSPC;
	memcpy(out, m, at);
	*outlen = at;
	return 0;
}
