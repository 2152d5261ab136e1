/*
 * test-digest: the drbd.conf hash algorithms. Published vectors for each
 * (RFC 1321 for md5, FIPS 180 examples for the SHA family, RFC 3720 B.4
 * and the "123456789" check value for crc32c), names and sizes, unknown
 * names, incremental digests equal to one-shot ones in any chunking,
 * context reuse after final, and one context per thread in parallel.
 *
 * crc32c byte order: the digest is what the kernel's "crc32c" shash puts
 * in its output buffer, the inverted CRC as a little-endian 32-bit
 * integer. The check value 0xE3069283 of "123456789" is therefore the
 * bytes 83 92 06 e3, and RFC 3720's iSCSI vectors (which list the CRC
 * bytes in wire order, also little-endian) match byte for byte.
 */
#include "unit.h"

#include <pthread.h>

#include "crc32c.h"
#include "digest.h"

enum input {
	IN_TEXT,    /* text, repeated n times (n 0 means once) */
	IN_ZEROS32, /* RFC 3720 B.4 patterns */
	IN_ONES32,
	IN_INC32,
	IN_DEC32,
};

struct vector {
	const char *alg;
	enum input in;
	const char *text;
	size_t n;
	const char *hex;
};

static const struct vector vectors[] = {
    {"crc32c", IN_TEXT, "123456789", 0, "839206e3"},
    {"crc32c", IN_TEXT, "", 0, "00000000"},
    {"crc32c", IN_ZEROS32, NULL, 0, "aa36918a"},
    {"crc32c", IN_ONES32, NULL, 0, "43aba862"},
    {"crc32c", IN_INC32, NULL, 0, "4e79dd46"},
    {"crc32c", IN_DEC32, NULL, 0, "5cdb3f11"},
    {"md5", IN_TEXT, "", 0, "d41d8cd98f00b204e9800998ecf8427e"},
    {"md5", IN_TEXT, "abc", 0, "900150983cd24fb0d6963f7d28e17f72"},
    {"md5", IN_TEXT, "message digest", 0, "f96b697d7cb7938d525a2f31aaf161d0"},
    {"sha1", IN_TEXT, "", 0, "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
    {"sha1", IN_TEXT, "abc", 0, "a9993e364706816aba3e25717850c26c9cd0d89d"},
    {"sha1", IN_TEXT, "a", 1000000, "34aa973cd4c4daa4f61eeb2bdbad27316534016f"},
    {"sha224", IN_TEXT, "abc", 0, "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"},
    {"sha256", IN_TEXT, "", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"sha256", IN_TEXT, "abc", 0,
     "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"sha256", IN_TEXT, "a", 1000000,
     "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
    {"sha384", IN_TEXT, "abc", 0,
     "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed"
     "8086072ba1e7cc2358baeca134c825a7"},
    {"sha512", IN_TEXT, "abc", 0,
     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
     "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
};

static const struct {
	const char *name;
	size_t size;
	const char *ossl;
} names[] = {
    {"crc32c", 4, NULL},      {"md5", 16, "MD5"},	{"sha1", 20, "SHA1"},
    {"sha224", 28, "SHA224"}, {"sha256", 32, "SHA256"}, {"sha384", 48, "SHA384"},
    {"sha512", 64, "SHA512"},
};

static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned int v;

	for (; *hex; hex++) {
		if (*hex == ' ')
			continue;
		assert_true(n / 2 < max);
		assert_int_equal(sscanf((char[]){*hex, 0}, "%x", &v), 1);
		if (n % 2 == 0)
			out[n / 2] = (uint8_t)(v << 4);
		else
			out[n / 2] |= (uint8_t)v;
		n++;
	}
	assert_int_equal(n % 2, 0);
	return n / 2;
}

/* The input of v as a malloc'd buffer (registered for cleanup). */
static uint8_t *input(const struct vector *v, size_t *len)
{
	size_t i, tl = v->text ? strlen(v->text) : 0, n = v->n ? v->n : 1;
	uint8_t *b;

	*len = v->in == IN_TEXT ? tl * n : 32;
	b = unit_defer(free, malloc(*len + 1));
	assert_non_null(b);
	for (i = 0; i < *len; i++) {
		switch (v->in) {
		case IN_TEXT:
			b[i] = (uint8_t)v->text[i % tl];
			break;
		case IN_ZEROS32:
			b[i] = 0;
			break;
		case IN_ONES32:
			b[i] = 0xff;
			break;
		case IN_INC32:
			b[i] = (uint8_t)i;
			break;
		case IN_DEC32:
			b[i] = (uint8_t)(31 - i);
			break;
		}
	}
	return b;
}

static const struct digest_alg *alg(const char *name)
{
	const struct digest_alg *a = NULL;

	assert_int_equal(digest_lookup(name, &a), 0);
	assert_non_null(a);
	return a;
}

static void test_vectors(void **state)
{
	size_t i;

	for (i = 0; i < UNIT_ARRAY_SIZE(vectors); i++) {
		const struct vector *v = &vectors[i];
		const struct digest_alg *a = alg(v->alg);
		uint8_t want[DIGEST_MAX_SIZE], got[DIGEST_MAX_SIZE + 1];
		size_t len, wl = unhex(v->hex, want, sizeof(want));
		uint8_t *in = input(v, &len);

		assert_int_equal(wl, digest_size(a));
		memset(got, 0xee, sizeof(got));
		assert_int_equal(digest_buf(a, in, len, got), 0);
		if (memcmp(got, want, wl) != 0)
			fail_msg("vector %zu (%s): wrong digest", i, v->alg);
		/* nothing written past digest_size() */
		assert_int_equal(got[wl], 0xee);
		unit_release(in);
	}
}

/* crc32c is the kernel shash: le32(~crc32c(~0, data)), not the AL's raw
 * crc32c(0, data). */
static void test_crc32c_is_kernel_shash(void **state)
{
	static const char msg[] = "123456789";
	uint8_t out[4];
	uint32_t c;

	assert_int_equal(digest_buf(alg("crc32c"), msg, 9, out), 0);
	c = ~crc32c(~0u, msg, 9);
	assert_int_equal(c, 0xE3069283u);
	assert_int_equal(out[0] | out[1] << 8 | out[2] << 16 | (uint32_t)out[3] << 24, c);
	assert_true(crc32c(0, msg, 9) != c);
}

static void test_names(void **state)
{
	const struct digest_alg *a;
	size_t i;

	for (i = 0; i < UNIT_ARRAY_SIZE(names); i++) {
		a = NULL;
		assert_string_equal(digest_name_at(i), names[i].name);
		assert_int_equal(digest_lookup(names[i].name, &a), 0);
		assert_string_equal(digest_name(a), names[i].name);
		assert_int_equal(digest_size(a), names[i].size);
		assert_true(digest_size(a) <= DIGEST_MAX_SIZE);
		if (names[i].ossl)
			assert_string_equal(digest_openssl_name(a), names[i].ossl);
		else
			assert_null(digest_openssl_name(a));
		assert_int_equal(digest_hmac_ok(a), names[i].ossl != NULL);
	}
	assert_null(digest_name_at(UNIT_ARRAY_SIZE(names)));
	assert_string_equal(digest_known(), "crc32c, md5, sha1, sha224, sha256, sha384, sha512");
	/* the same object every time */
	assert_ptr_equal(alg("sha1"), alg("sha1"));
}

static void test_unknown(void **state)
{
	static const char *const bad[] = {
	    "",	     "SHA1",  "Sha256", "CRC32C", "crc32",     "sha3-256", "hmac(sha1)",
	    " sha1", "sha1 ", "sha",	"md4",	  "whirlpool", "sha5120",  "sha1\n",
	};
	const struct digest_alg *sentinel = alg("md5"), *a;
	size_t i;

	for (i = 0; i < UNIT_ARRAY_SIZE(bad); i++) {
		a = sentinel;
		if (digest_lookup(bad[i], &a) != -ENOENT)
			fail_msg("'%s' should be unknown", bad[i]);
		assert_ptr_equal(a, sentinel);
	}
	assert_int_equal(digest_lookup(NULL, &a), -EINVAL);
	assert_int_equal(digest_lookup("sha1", NULL), -EINVAL);
}

static void test_bad_args(void **state)
{
	const struct digest_alg *a = alg("sha256");
	struct digest_ctx *c = NULL;
	uint8_t out[DIGEST_MAX_SIZE], empty[DIGEST_MAX_SIZE];

	assert_int_equal(digest_buf(NULL, "x", 1, out), -EINVAL);
	assert_int_equal(digest_buf(a, NULL, 1, out), -EINVAL);
	assert_int_equal(digest_buf(a, "x", 1, NULL), -EINVAL);
	/* NULL with length 0 is the empty message */
	assert_int_equal(digest_buf(a, NULL, 0, out), 0);
	assert_int_equal(digest_buf(a, "", 0, empty), 0);
	assert_memory_equal(out, empty, 32);
	assert_int_equal(digest_ctx_new(NULL, &c), -EINVAL);
	assert_int_equal(digest_ctx_new(a, NULL), -EINVAL);
	assert_int_equal(digest_ctx_new(a, &c), 0);
	unit_defer((void (*)(void *))digest_ctx_free, c);
	assert_ptr_equal(digest_ctx_alg(c), a);
	assert_int_equal(digest_ctx_update(c, NULL, 5), -EINVAL);
	assert_int_equal(digest_ctx_update(c, NULL, 0), 0);
	assert_int_equal(digest_ctx_final(c, NULL), -EINVAL);
	assert_int_equal(digest_ctx_final(c, out), 0);
	assert_memory_equal(out, empty, 32);
	digest_ctx_free(NULL);
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint8_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint8_t)(rnd_state >> 32);
}

/* Feed buf in the given chunk sizes (cycled), return the final digest. */
static void chunked(struct digest_ctx *c, const uint8_t *buf, size_t len, const size_t *chunks,
		    size_t n_chunks, uint8_t *out)
{
	size_t off = 0, k = 0;

	while (off < len) {
		size_t n = chunks[k++ % n_chunks];

		if (n > len - off)
			n = len - off;
		assert_int_equal(digest_ctx_update(c, buf + off, n), 0);
		off += n;
	}
	assert_int_equal(digest_ctx_final(c, out), 0);
}

static void test_incremental(void **state)
{
	static const size_t chunks[][5] = {
	    {1, 1, 1, 1, 1},	     {0, 3, 0, 7, 1},	  {63, 64, 65, 1, 2},
	    {4096, 5, 4096, 0, 128}, {10007, 1, 1, 1, 1},
	};
	enum { LEN = 10007 };
	uint8_t *buf = unit_defer(free, malloc(LEN));
	size_t i, j, k;

	assert_non_null(buf);
	for (k = 0; k < LEN; k++)
		buf[k] = rnd();
	for (i = 0; digest_name_at(i); i++) {
		const struct digest_alg *a = alg(digest_name_at(i));
		struct digest_ctx *c = NULL;
		uint8_t one[DIGEST_MAX_SIZE], inc[DIGEST_MAX_SIZE], part[DIGEST_MAX_SIZE];
		size_t sz = digest_size(a);

		assert_int_equal(digest_ctx_new(a, &c), 0);
		unit_defer((void (*)(void *))digest_ctx_free, c);
		assert_int_equal(digest_buf(a, buf, LEN, one), 0);
		/* the same context, reused after each final */
		for (j = 0; j < UNIT_ARRAY_SIZE(chunks); j++) {
			chunked(c, buf, LEN, chunks[j], 5, inc);
			if (memcmp(one, inc, sz) != 0)
				fail_msg("%s: chunking %zu differs from one shot", digest_name(a),
					 j);
		}
		/* a shorter message after a final is not polluted by the old one */
		assert_int_equal(digest_ctx_update(c, buf, 100), 0);
		assert_int_equal(digest_ctx_final(c, inc), 0);
		assert_int_equal(digest_buf(a, buf, 100, part), 0);
		assert_memory_equal(inc, part, sz);
		assert_memory_not_equal(inc, one, sz);
		/* final with nothing fed is the empty message */
		assert_int_equal(digest_ctx_final(c, inc), 0);
		assert_int_equal(digest_buf(a, "", 0, part), 0);
		assert_memory_equal(inc, part, sz);
		unit_release(c);
	}
	unit_release(buf);
}

enum { TH_N = 4, TH_LEN = 65536, TH_ROUNDS = 20 };

struct th {
	pthread_t t;
	const char *name;
	const uint8_t *buf;
	uint8_t want[DIGEST_MAX_SIZE];
	int bad; /* 0 ok; no cmocka assertions off the main thread */
};

static void *th_run(void *p)
{
	struct th *t = p;
	const struct digest_alg *a;
	struct digest_ctx *c;
	uint8_t got[DIGEST_MAX_SIZE];
	size_t off;
	int r;

	if (digest_lookup(t->name, &a) || digest_ctx_new(a, &c)) {
		t->bad = 1;
		return NULL;
	}
	for (r = 0; r < TH_ROUNDS && !t->bad; r++) {
		for (off = 0; off < TH_LEN; off += 4096)
			if (digest_ctx_update(c, t->buf + off, 4096))
				t->bad = 2;
		if (digest_ctx_final(c, got) || memcmp(got, t->want, digest_size(a)))
			t->bad = 3;
	}
	digest_ctx_free(c);
	return NULL;
}

static void test_threads(void **state)
{
	static const char *const algs[TH_N] = {"sha256", "crc32c", "sha1", "sha256"};
	uint8_t *buf = unit_defer(free, malloc(TH_LEN));
	struct th th[TH_N];
	size_t i;

	assert_non_null(buf);
	for (i = 0; i < TH_LEN; i++)
		buf[i] = rnd();
	memset(th, 0, sizeof(th));
	for (i = 0; i < TH_N; i++) {
		th[i].name = algs[i];
		th[i].buf = buf;
		assert_int_equal(digest_buf(alg(algs[i]), buf, TH_LEN, th[i].want), 0);
	}
	for (i = 0; i < TH_N; i++)
		assert_int_equal(pthread_create(&th[i].t, NULL, th_run, &th[i]), 0);
	for (i = 0; i < TH_N; i++)
		assert_int_equal(pthread_join(th[i].t, NULL), 0);
	for (i = 0; i < TH_N; i++)
		if (th[i].bad)
			fail_msg("thread %zu (%s) failed at step %d", i, th[i].name, th[i].bad);
	unit_release(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vectors),  cmocka_unit_test(test_crc32c_is_kernel_shash),
	    cmocka_unit_test(test_names),    cmocka_unit_test(test_unknown),
	    cmocka_unit_test(test_bad_args), cmocka_unit_test(test_incremental),
	    cmocka_unit_test(test_threads),
	};

	return cmocka_run_group_tests(tests, NULL, unit_teardown);
}
