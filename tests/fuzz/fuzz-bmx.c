/*
 * fuzz-bmx: libFuzzer target for the bitmap exchange decoder and encoder
 * (replicator/lib/bmx.c).
 *
 * Input: byte 0 picks the bitmap size (low 3 bits), whether the round
 * trip uses RLE (bit 3) and how the round trip's bitmap is built (bit 4);
 * byte 1 is the chunk kind as it would come off the wire; bytes 2..3 the
 * receiver's cursor (little-endian, modulo bits + 2, so that the cursor
 * may also be at or past the end); the rest is the chunk.
 *
 * 1. Decode: the chunk goes into a bitmap that already has a pattern of
 *    bits. On error the bitmap and the cursor must be unchanged; on
 *    success no bit may be cleared, the cursor must have advanced within
 *    the bitmap and only bits between the cursor's word and the new
 *    cursor may have changed.
 * 2. Round trip: a bitmap built from the chunk bytes (as run lengths or
 *    as raw bits) is encoded with a capacity derived from the input and
 *    decoded into a bitmap with the pattern: the result must be exactly
 *    the union, every chunk within its capacity.
 * Anything else is abort()ed.
 */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitmap.h"
#include "bmx.h"

#define MAX_CAP 600

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint64_t sizes[8] = {1, 63, 64, 65, 200, 4096, 32769, 100000};

static void __attribute__((noreturn)) fail(const char *what, int rc)
{
	fprintf(stderr, "fuzz-bmx: %s (rc %d)\n", what, rc);
	abort();
}

static struct bitmap *new_bitmap(uint64_t nbits)
{
	struct bitmap *bm = NULL;

	if (bitmap_new(nbits, &bm) < 0)
		fail("bitmap_new", -ENOMEM);
	return bm;
}

/* The bitmap's words, for comparing before and after. */
static void *snapshot(const struct bitmap *bm)
{
	uint64_t pages = bitmap_pages(bm), p;
	unsigned char *buf = malloc(pages * BITMAP_PAGE_BYTES);

	if (!buf)
		fail("malloc", -ENOMEM);
	for (p = 0; p < pages; p++)
		bitmap_page_encode(bm, p, buf + p * BITMAP_PAGE_BYTES);
	return buf;
}

/* Load bytes (the on-disk page form, pages * 4096 of them) into bm. */
static void load(struct bitmap *bm, const unsigned char *bytes)
{
	uint64_t p;

	for (p = 0; p < bitmap_pages(bm); p++)
		bitmap_page_decode(bm, p, bytes + p * BITMAP_PAGE_BYTES);
}

/* Every 7th bit and a range in the middle, in page form, for sizes[k]
 * (built once per size and kept). */
static const unsigned char *pattern(unsigned int k)
{
	static unsigned char *pat[8];
	uint64_t n = sizes[k], i;

	if (!pat[k]) {
		struct bitmap *tmp = new_bitmap(n);

		for (i = 5; i < n; i += 7)
			bitmap_set_range(tmp, i, 1);
		bitmap_set_range(tmp, n / 2, n / 16 + 1);
		pat[k] = snapshot(tmp);
		bitmap_free(tmp);
	}
	return pat[k];
}

static void check_decode(unsigned int k, int kind, uint64_t pos0, const uint8_t *chunk, size_t len)
{
	uint64_t nbits = sizes[k], *before, *after, pos = pos0, nwords = (nbits + 63) / 64, w;
	struct bitmap *dst = new_bitmap(nbits);
	int rc;

	load(dst, pattern(k));
	before = snapshot(dst);
	rc = bmx_dec_apply(dst, &pos, (enum bmx_kind)kind, chunk, len);
	after = snapshot(dst);
	if (rc < 0) {
		if (rc != -EBADMSG && rc != -ERANGE && rc != -EINVAL)
			fail("unexpected error", rc);
		if ((rc == -EINVAL) != (pos0 > nbits))
			fail("-EINVAL for a valid cursor, or not for an invalid one", rc);
		if (pos != pos0 || memcmp(before, after, nwords * 8))
			fail("a rejected chunk changed something", rc);
	} else {
		if (rc != 0 || pos <= pos0 || pos > nbits)
			fail("bad cursor after success", rc);
		for (w = 0; w < nwords; w++) {
			if (before[w] & ~after[w])
				fail("a bit was cleared", rc);
			if (before[w] != after[w] && (w < pos0 / 64 || w * 64 >= pos))
				fail("a bit outside the chunk changed", rc);
		}
	}
	free(before);
	free(after);
	bitmap_free(dst);
}

static void check_roundtrip(unsigned int k, bool use_rle, bool raw, size_t cap, const uint8_t *d,
			    size_t len)
{
	uint64_t nbits = sizes[k], at = 0, pos = 0, i;
	struct bitmap *src = new_bitmap(nbits), *dst = new_bitmap(nbits);
	const unsigned char *pat = pattern(k);
	struct bmx_enc *enc = NULL;
	unsigned char buf[MAX_CAP], *a, *b;
	enum bmx_kind kind;
	size_t n, clen;
	int rc;

	/* raw: the bytes are the bits (repeated); else alternating run lengths */
	if (raw && len) {
		unsigned char *bytes = malloc(bitmap_pages(src) * BITMAP_PAGE_BYTES);

		if (!bytes)
			fail("malloc", -ENOMEM);
		for (i = 0; i < bitmap_pages(src) * BITMAP_PAGE_BYTES; i++)
			bytes[i] = d[i % len];
		load(src, bytes);
		free(bytes);
	}
	for (n = 0; !raw && n < len && at < nbits; n++) {
		uint64_t run = (uint64_t)d[n] * d[n] + 1;

		if (n % 2)
			bitmap_set_range(src, at, run);
		at += run;
	}
	load(dst, pat);

	if (bmx_enc_new(src, use_rle, &enc) < 0)
		fail("bmx_enc_new", -ENOMEM);
	while ((rc = bmx_enc_next(enc, buf, cap, &clen, &kind)) == 1) {
		if (clen > cap || (!use_rle && kind != BMX_PLAIN))
			fail("chunk too long or of the wrong kind", (int)clen);
		rc = bmx_dec_apply(dst, &pos, kind, buf, clen);
		if (rc < 0)
			fail("an encoded chunk was rejected", rc);
		if (pos != bmx_enc_pos(enc))
			fail("cursors disagree", 0);
	}
	if (rc != 0 || pos != nbits)
		fail("the encoder stopped early", rc);
	a = snapshot(dst);
	b = snapshot(src);
	for (i = 0; i < (nbits + 63) / 64 * 8; i++)
		if (a[i] != (b[i] | pat[i]))
			fail("round trip is not the union", 0);
	free(a);
	free(b);
	bmx_enc_free(enc);
	bitmap_free(dst);
	bitmap_free(src);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned int k;
	uint64_t pos;
	size_t cap;

	if (size < 4)
		return 0;
	k = data[0] & 7;
	pos = (uint64_t)(data[2] | data[3] << 8) % (sizes[k] + 2);
	check_decode(k, data[1], pos, data + 4, size - 4);

	cap = BMX_CHUNK_MIN + (size_t)(data[1] * 7 + data[2]) % (MAX_CAP - BMX_CHUNK_MIN + 1);
	check_roundtrip(k, data[0] & 8, data[0] & 16, cap, data + 4, size - 4);
	return 0;
}
