/*
 * auth: peer authentication by HMAC challenge/response (net {
 * cram-hmac-alg; shared-secret; }, ref/drbd-semantics.md section 9), on
 * OpenSSL libcrypto.
 *
 * On every socket, when cram-hmac-alg is set, both sides:
 *   1. send a fresh challenge of AUTH_CHALLENGE_LEN random bytes
 *      (auth_challenge_new);
 *   2. receive the peer's challenge and check it (auth_check_peer_challenge):
 *      a challenge equal to one's own is a reflection attack (an attacker
 *      bouncing our challenge back to us to get our answer to it);
 *   3. version 2 (doc/wire-protocol.md §5.4): the initiator sends
 *      HMAC(secret, M(initiator)) (auth_v2_message, auth_response); the
 *      acceptor checks it (auth_verify) and only then sends HMAC(secret,
 *      M(acceptor)), which the initiator checks. M binds both challenges,
 *      the sender's role, the resource, both node names, the socket and
 *      the attempt. Version 1 (DRBD's): each sends HMAC(secret, peer's
 *      challenge) at once and compares the peer's with HMAC(secret, own
 *      challenge). A failure is "Authentication of peer failed".
 *
 * Algorithms are named the way drbd.conf names kernel crypto hashes
 * ("sha1", "sha256", ...; the names conf-opt.c accepts) and mapped to
 * OpenSSL digest names. crc32c is not a hash and is refused here too.
 *
 * Errors: -EOPNOTSUPP for an unknown algorithm (or one this OpenSSL does
 * not provide, e.g. md5 in FIPS mode), -EBADMSG for a malformed challenge
 * or response (short, long, all zero), -EACCES for a reflected challenge
 * or a wrong response, -ENOSPC for a too small output buffer, -EIO when
 * OpenSSL fails.
 */
#ifndef TANDEM_AUTH_H
#define TANDEM_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_CHALLENGE_LEN 64u	/* what we send */
#define AUTH_CHALLENGE_MAX 128u /* the longest peer challenge accepted (as DRBD) */
#define AUTH_RESPONSE_MAX 64u	/* the longest digest (sha512) */

/* name is a drbd.conf hash name whose HMAC this OpenSSL can compute. */
bool auth_alg_supported(const char *name);
/* The OpenSSL digest name for a drbd.conf name ("sha256" -> "SHA256"), or
 * NULL. */
const char *auth_alg_openssl_name(const char *name);
/* Length of the response (the digest) for alg: > 0, or -EOPNOTSUPP. */
int auth_response_len(const char *alg);

/* AUTH_CHALLENGE_LEN fresh random bytes (RAND_bytes), never all zero.
 * 0 or -EIO. */
int auth_challenge_new(uint8_t out[AUTH_CHALLENGE_LEN]);

/*
 * Check the peer's challenge (len bytes) against our own: shorter than
 * AUTH_CHALLENGE_LEN, longer than AUTH_CHALLENGE_MAX or all zero ->
 * -EBADMSG; its first AUTH_CHALLENGE_LEN bytes equal to own -> -EACCES.
 */
int auth_check_peer_challenge(const uint8_t own[AUTH_CHALLENGE_LEN], const uint8_t *peer,
			      size_t len);

/*
 * Our response to the peer's challenge: HMAC-alg(secret, challenge) into
 * out. *outlen: in, the size of out; out, the response length. secret may
 * be empty (secret_len 0). 0, -EOPNOTSUPP, -ENOSPC or -EIO.
 */
int auth_response(const char *alg, const void *secret, size_t secret_len, const uint8_t *challenge,
		  size_t len, uint8_t *out, size_t *outlen);

/*
 * Is the peer's response (resp_len bytes) HMAC-alg(secret, own challenge)?
 * 0; -EBADMSG if resp_len is not the digest length; -EACCES if it differs
 * (compared in constant time); -EOPNOTSUPP or -EIO.
 */
int auth_verify(const char *alg, const void *secret, size_t secret_len, const uint8_t *own,
		size_t own_len, const uint8_t *resp, size_t resp_len);

/* ---------------------------------------------------------------- version 2 */

#define AUTH_V2_TAG "tandem-auth-v2"
#define AUTH_V2_NAME_MAX 128u /* a name's longest length in M */
/* 14 tag + purpose + role + conn_id + 3 names + 2 challenges */
#define AUTH_V2_MSG_MAX (14u + 1u + 1u + 8u + 3u * (1u + AUTH_V2_NAME_MAX) + 2u * AUTH_CHALLENGE_LEN)

enum auth_role { AUTH_INITIATOR = 1, AUTH_ACCEPTOR = 2 };
enum auth_purpose { AUTH_DATA = 1, AUTH_META = 2 };

/* One socket's exchange, as both sides see it. */
struct auth_v2 {
	enum auth_purpose purpose;
	uint64_t conn_id;
	const char *res;
	const char *initiator; /* node names as in the P_HELLOs */
	const char *acceptor;
	const uint8_t *initiator_challenge; /* AUTH_CHALLENGE_LEN bytes each */
	const uint8_t *acceptor_challenge;
};

/*
 * M(sender) of doc/wire-protocol.md §5.4 into out (AUTH_V2_MSG_MAX bytes
 * are enough); *outlen: in, the size of out; out, M's length. 0; -EINVAL
 * for a bad role or purpose, a missing field, or a name that is empty or
 * longer than AUTH_V2_NAME_MAX; -ENOSPC.
 */
int auth_v2_message(const struct auth_v2 *a, enum auth_role sender, uint8_t *out,
		    size_t *outlen);

#endif
