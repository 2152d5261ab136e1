/*
 * digest: drbd.conf hash algorithms by their kernel crypto names, on
 * OpenSSL 3 EVP (explicitly fetched once, shared read-only between
 * threads) and on crc32c.c for crc32c.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/evp.h>

#include "crc32c.h"
#include "digest.h"

struct digest_alg {
	const char *name; /* kernel crypto / drbd.conf name */
	const char *ossl; /* OpenSSL digest name; NULL: crc32c */
	size_t size;
	bool hmac;
	EVP_MD *md; /* fetched by algs_init; NULL: not provided */
};

struct digest_ctx {
	const struct digest_alg *alg;
	EVP_MD_CTX *md;
	uint32_t crc;
	bool broken;
};

/* Sorted by name; the order of digest_name_at() and digest_known(). */
static struct digest_alg algs[] = {
    {"crc32c", NULL, 4, false, NULL},	  {"md5", "MD5", 16, true, NULL},
    {"sha1", "SHA1", 20, true, NULL},	  {"sha224", "SHA224", 28, true, NULL},
    {"sha256", "SHA256", 32, true, NULL}, {"sha384", "SHA384", 48, true, NULL},
    {"sha512", "SHA512", 64, true, NULL},
};

#define N_ALGS (sizeof(algs) / sizeof(algs[0]))

static char known[128];
static pthread_once_t algs_once = PTHREAD_ONCE_INIT;

/*
 * Fetch every EVP_MD once. The fetched objects are kept for the life of
 * the process: EVP_MD is reference counted and safe to share between
 * threads, and an explicit fetch avoids the implicit per-init lookup that
 * EVP_sha256() and friends cost in OpenSSL 3.
 */
static void algs_init(void)
{
	size_t i, used = 0;

	for (i = 0; i < N_ALGS; i++) {
		struct digest_alg *a = &algs[i];

		used += (size_t)snprintf(known + used, sizeof(known) - used, "%s%s", i ? ", " : "",
					 a->name);
		if (!a->ossl)
			continue;
		a->md = EVP_MD_fetch(NULL, a->ossl, NULL);
		if (a->md && EVP_MD_get_size(a->md) != (int)a->size) {
			EVP_MD_free(a->md);
			a->md = NULL;
		}
	}
	ERR_clear_error(); /* a digest FIPS mode refuses is not our caller's error */
}

static bool available(const struct digest_alg *a)
{
	return !a->ossl || a->md;
}

int digest_lookup(const char *name, const struct digest_alg **out)
{
	size_t i;

	if (!name || !out)
		return -EINVAL;
	pthread_once(&algs_once, algs_init);
	for (i = 0; i < N_ALGS; i++) {
		if (strcmp(name, algs[i].name) != 0)
			continue;
		if (!available(&algs[i]))
			return -EOPNOTSUPP;
		*out = &algs[i];
		return 0;
	}
	return -ENOENT;
}

const char *digest_name(const struct digest_alg *a)
{
	return a->name;
}

size_t digest_size(const struct digest_alg *a)
{
	return a->size;
}

bool digest_hmac_ok(const struct digest_alg *a)
{
	return a->hmac;
}

const char *digest_openssl_name(const struct digest_alg *a)
{
	return a->ossl;
}

const char *digest_name_at(size_t i)
{
	return i < N_ALGS ? algs[i].name : NULL;
}

const char *digest_known(void)
{
	pthread_once(&algs_once, algs_init);
	return known;
}

/* The kernel's crc32c shash result: inverted, stored little-endian. */
static void crc_out(uint32_t crc, uint8_t *out)
{
	crc = ~crc;
	out[0] = (uint8_t)crc;
	out[1] = (uint8_t)(crc >> 8);
	out[2] = (uint8_t)(crc >> 16);
	out[3] = (uint8_t)(crc >> 24);
}

int digest_buf(const struct digest_alg *a, const void *buf, size_t len, uint8_t *out)
{
	unsigned int got = 0;

	if (!a || !out || (!buf && len))
		return -EINVAL;
	if (!a->ossl) {
		crc_out(crc32c(~0u, buf, len), out);
		return 0;
	}
	if (!EVP_Digest(buf, len, out, &got, a->md, NULL) || got != a->size) {
		ERR_clear_error();
		return -EIO;
	}
	return 0;
}

static int ctx_start(struct digest_ctx *c)
{
	c->crc = ~0u;
	if (c->md && !EVP_DigestInit_ex2(c->md, c->alg->md, NULL)) {
		ERR_clear_error();
		c->broken = true;
		return -EIO;
	}
	return 0;
}

int digest_ctx_new(const struct digest_alg *a, struct digest_ctx **out)
{
	struct digest_ctx *c;

	if (!a || !out)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->alg = a;
	if (a->ossl) {
		c->md = EVP_MD_CTX_new();
		if (!c->md) {
			free(c);
			return -ENOMEM;
		}
	}
	if (ctx_start(c) < 0) {
		digest_ctx_free(c);
		return -EIO;
	}
	*out = c;
	return 0;
}

int digest_ctx_update(struct digest_ctx *c, const void *buf, size_t len)
{
	if (!c || (!buf && len))
		return -EINVAL;
	if (c->broken)
		return -EIO;
	if (!c->md) {
		c->crc = crc32c(c->crc, buf, len);
		return 0;
	}
	if (!EVP_DigestUpdate(c->md, buf, len)) {
		ERR_clear_error();
		c->broken = true;
		return -EIO;
	}
	return 0;
}

int digest_ctx_final(struct digest_ctx *c, uint8_t *out)
{
	unsigned int got = 0;

	if (!c || !out)
		return -EINVAL;
	if (c->broken)
		return -EIO;
	if (!c->md) {
		crc_out(c->crc, out);
	} else if (!EVP_DigestFinal_ex(c->md, out, &got) || got != c->alg->size) {
		ERR_clear_error();
		c->broken = true;
		return -EIO;
	}
	return ctx_start(c);
}

const struct digest_alg *digest_ctx_alg(const struct digest_ctx *c)
{
	return c->alg;
}

void digest_ctx_free(struct digest_ctx *c)
{
	if (!c)
		return;
	EVP_MD_CTX_free(c->md);
	free(c);
}
