/*
 * digest: the hash algorithms of verify-alg, csums-alg, data-integrity-alg
 * and cram-hmac-alg, named as drbd.conf names them (Linux kernel crypto
 * names, ref/drbd-semantics.md sections 1.4 and 9): crc32c, md5, sha1,
 * sha224, sha256, sha384, sha512. Names are case-sensitive, as the
 * kernel's crypto_alloc_shash() is: "SHA1" is unknown.
 *
 * The SHA and MD5 family come from OpenSSL 3 libcrypto (EVP); crc32c from
 * crc32c.c (the SSE4.2 instruction where the CPU has it). The crc32c
 * digest is the kernel's "crc32c" shash: seed ~0, final inversion, the
 * 32-bit result stored little-endian ("123456789" -> 83 92 06 e3, i.e.
 * 0xE3069283), so digests on the wire are the bytes DRBD would send.
 *
 * An algorithm (struct digest_alg) is a static object: look it up once,
 * share it between threads. A context (struct digest_ctx) belongs to one
 * thread at a time; use one per thread.
 *
 * Errors: -ENOENT for a name that is not a known algorithm, -EOPNOTSUPP
 * for a known one this OpenSSL does not provide (md5 in FIPS mode),
 * -EINVAL for NULL arguments, -ENOMEM, -EIO when OpenSSL fails.
 */
#ifndef TANDEM_DIGEST_H
#define TANDEM_DIGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DIGEST_MAX_SIZE 64u /* sha512 */

struct digest_alg;
struct digest_ctx;

/* The algorithm called name (NULL -> -EINVAL). 0, -ENOENT or -EOPNOTSUPP. */
int digest_lookup(const char *name, const struct digest_alg **out);
/* Its drbd.conf name ("sha256"). */
const char *digest_name(const struct digest_alg *a);
/* Digest length in bytes (4 for crc32c ... 64 for sha512). */
size_t digest_size(const struct digest_alg *a);
/* Can it key an HMAC (cram-hmac-alg)? The kernel's hmac() template
 * refuses crc32c (a keyed checksum, digest longer than its block). */
bool digest_hmac_ok(const struct digest_alg *a);
/* The OpenSSL digest name ("SHA256"), NULL for crc32c. */
const char *digest_openssl_name(const struct digest_alg *a);

/* The i-th known name (i from 0), NULL past the last one. */
const char *digest_name_at(size_t i);
/* All known names for messages: "crc32c, md5, sha1, ...". */
const char *digest_known(void);

/* One shot: digest_size(a) bytes into out. 0, -EINVAL or -EIO. */
int digest_buf(const struct digest_alg *a, const void *buf, size_t len, uint8_t *out);

/* Incremental: new, update any number of times, final. final writes
 * digest_size() bytes and starts the context over for the next message.
 * 0, -EINVAL, -ENOMEM or -EIO; after -EIO the context is unusable
 * (every call fails) until freed. */
int digest_ctx_new(const struct digest_alg *a, struct digest_ctx **out);
int digest_ctx_update(struct digest_ctx *c, const void *buf, size_t len);
int digest_ctx_final(struct digest_ctx *c, uint8_t *out);
/* The algorithm of c. */
const struct digest_alg *digest_ctx_alg(const struct digest_ctx *c);
void digest_ctx_free(struct digest_ctx *c);

#endif
