/*
 * bmx: bitmap exchange, plain and run-length encoded chunks (the format
 * is described in bmx.h).
 *
 * The encoder reads bitmap words through bitmap_page_encode() (one page
 * cached per call, so the words are already little-endian) and runs
 * through bitmap_find_next_set/clear(). For each chunk it first encodes
 * runs into the caller's buffer until the next run length no longer fits,
 * then compares bits covered per byte with what a plain chunk from the
 * same position would cover, and overwrites the buffer with the plain
 * chunk if that is denser. The cost of a discarded RLE attempt is bounded
 * by the plain chunk that replaces it.
 *
 * The decoder parses a chunk twice: once to validate it completely, once
 * to apply it, so a rejected chunk changes nothing.
 */
#include "config.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bitmap.h"
#include "bmx.h"

#define WORD_BITS 64u
#define WORD_BYTES 8u
#define PAGE_WORDS (BITMAP_PAGE_BYTES / WORD_BYTES)
#define NO_PAGE UINT64_MAX

struct bmx_enc {
	const struct bitmap *bm;
	uint64_t nbits;
	uint64_t nwords;
	uint64_t pos; /* first bit not yet sent */
	bool use_rle;
	uint64_t page; /* the page in pagebuf, or NO_PAGE */
	struct bmx_stats st;
	unsigned char pagebuf[BITMAP_PAGE_BYTES];
};

/* ---------------------------------------------------------------- helpers */

static uint64_t get_le64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return le64toh(v);
}

static void put_le64(unsigned char *p, uint64_t v)
{
	v = htole64(v);
	memcpy(p, &v, sizeof(v));
}

static uint64_t words_for(uint64_t nbits)
{
	return nbits / WORD_BITS + (nbits % WORD_BITS != 0);
}

/* The bits of the last word that lie beyond the bitmap (0 if none). */
static uint64_t surplus_mask(uint64_t nbits)
{
	unsigned int r = nbits % WORD_BITS;

	return r ? ~0ull << r : 0;
}

static size_t vli_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static size_t vli_put(unsigned char *p, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* One canonical LEB128 value from p[0..len): 0 and *used, or -EBADMSG for
 * a truncated (runs out of bytes), overlong (a zero last group, an 11th
 * byte) or too large (beyond 64 bits) encoding. */
static int vli_get(const unsigned char *p, size_t len, uint64_t *v, size_t *used)
{
	uint64_t x = 0;
	size_t i;

	for (i = 0; i < len && i < BMX_VLI_MAX; i++) {
		unsigned char b = p[i];

		if (i == BMX_VLI_MAX - 1 && b > 1)
			return -EBADMSG;
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (b == 0 && i > 0)
				return -EBADMSG;
			*v = x;
			*used = i + 1;
			return 0;
		}
	}
	return -EBADMSG;
}

/* The 128-bit product a * b as hi:lo (no __int128 on 32-bit targets). */
static void mul_64x64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
	uint64_t al = a & 0xffffffffu, ah = a >> 32;
	uint64_t bl = b & 0xffffffffu, bh = b >> 32;
	uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
	uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);

	*lo = (mid << 32) | (ll & 0xffffffffu);
	*hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* Compare a * b with c * d exactly: <0, 0, >0. */
static int cmp_products(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
	uint64_t h1, l1, h2, l2;

	mul_64x64(a, b, &h1, &l1);
	mul_64x64(c, d, &h2, &l2);
	if (h1 != h2)
		return h1 < h2 ? -1 : 1;
	if (l1 != l2)
		return l1 < l2 ? -1 : 1;
	return 0;
}

/* ---------------------------------------------------------------- encoder */

int bmx_enc_new(const struct bitmap *bm, bool use_rle, struct bmx_enc **out)
{
	struct bmx_enc *e;

	*out = NULL;
	if (!bm)
		return -EINVAL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	e->bm = bm;
	e->nbits = bitmap_bits(bm);
	e->nwords = words_for(e->nbits);
	e->use_rle = use_rle;
	e->page = NO_PAGE;
	bmx_stats_init(&e->st, e->nbits);
	*out = e;
	return 0;
}

void bmx_enc_free(struct bmx_enc *enc)
{
	free(enc);
}

bool bmx_enc_done(const struct bmx_enc *enc)
{
	return enc->pos >= enc->nbits;
}

uint64_t bmx_enc_pos(const struct bmx_enc *enc)
{
	return enc->pos;
}

void bmx_enc_stats(const struct bmx_enc *enc, struct bmx_stats *st)
{
	*st = enc->st;
}

/* Word w in its little-endian wire form, copied to p. */
static void enc_word(struct bmx_enc *e, uint64_t w, unsigned char *p)
{
	uint64_t page = w / PAGE_WORDS;

	if (page != e->page) {
		bitmap_page_encode(e->bm, page, e->pagebuf);
		e->page = page;
	}
	memcpy(p, e->pagebuf + (w % PAGE_WORDS) * WORD_BYTES, WORD_BYTES);
}

/* The words of a plain chunk from e->pos in cap bytes; *end = first bit
 * after them. */
static uint64_t plain_words(const struct bmx_enc *e, size_t cap, uint64_t *end)
{
	uint64_t w0 = e->pos / WORD_BITS, n = (cap - BMX_PLAIN_HDR) / WORD_BYTES;

	if (n > e->nwords - w0)
		n = e->nwords - w0;
	*end = (w0 + n) * WORD_BITS;
	if (*end > e->nbits)
		*end = e->nbits;
	return n;
}

/* A plain chunk from e->pos; returns its length, *end = first bit after. */
static size_t enc_plain(struct bmx_enc *e, unsigned char *buf, size_t cap, uint64_t *end)
{
	uint64_t w0 = e->pos / WORD_BITS, n = plain_words(e, cap, end), i;

	put_le64(buf, w0);
	for (i = 0; i < n; i++)
		enc_word(e, w0 + i, buf + BMX_PLAIN_HDR + i * WORD_BYTES);
	return BMX_PLAIN_HDR + n * WORD_BYTES;
}

/* Runs from e->pos until the next length does not fit; returns the
 * length, *end = first bit after the last run. At least one run fits
 * since cap >= BMX_CHUNK_MIN > BMX_RLE_HDR + BMX_VLI_MAX. */
static size_t enc_rle(struct bmx_enc *e, unsigned char *buf, size_t cap, uint64_t *end)
{
	uint64_t at = e->pos;
	bool set = bitmap_test(e->bm, at);
	size_t n = BMX_RLE_HDR;

	buf[0] = set ? BMX_RLE_SET : 0;
	while (at < e->nbits) {
		uint64_t next =
		    set ? bitmap_find_next_clear(e->bm, at) : bitmap_find_next_set(e->bm, at);

		if (vli_len(next - at) > cap - n)
			break;
		n += vli_put(buf + n, next - at);
		at = next;
		set = !set;
	}
	*end = at;
	return n;
}

int bmx_enc_next(struct bmx_enc *enc, void *buf, size_t cap, size_t *len, enum bmx_kind *kind)
{
	unsigned char *p = buf;
	uint64_t rle_end, plain_end, rle_bits, plain_bits;
	size_t rle_len, plain_len;

	if (cap < BMX_CHUNK_MIN)
		return -EINVAL;
	if (bmx_enc_done(enc))
		return 0;
	enc->page = NO_PAGE; /* the bitmap may have changed since the last call */

	if (enc->use_rle) {
		rle_len = enc_rle(enc, p, cap, &rle_end);
		rle_bits = rle_end - enc->pos;
		/* the plain chunk this one would replace, without writing it */
		plain_len = BMX_PLAIN_HDR + plain_words(enc, cap, &plain_end) * WORD_BYTES;
		plain_bits = plain_end - enc->pos;
		/* RLE (ties included) if rle_bits / rle_len >= plain_bits / plain_len */
		if (cmp_products(rle_bits, plain_len, plain_bits, rle_len) >= 0) {
			*len = rle_len;
			*kind = BMX_RLE;
			enc->pos = rle_end;
			bmx_stats_add(&enc->st, BMX_RLE, rle_len);
			return 1;
		}
	}
	plain_len = enc_plain(enc, p, cap, &plain_end);
	*len = plain_len;
	*kind = BMX_PLAIN;
	enc->pos = plain_end;
	bmx_stats_add(&enc->st, BMX_PLAIN, plain_len);
	return 1;
}

/* ---------------------------------------------------------------- decoder */

/* Set the bits of word w (already in CPU order) at bit base, run by run. */
static void or_word(struct bitmap *dst, uint64_t base, uint64_t w)
{
	while (w) {
		unsigned int s = (unsigned int)__builtin_ctzll(w);
		uint64_t rest = ~(w >> s); /* bit 0 clear */
		unsigned int n = rest ? (unsigned int)__builtin_ctzll(rest) : WORD_BITS - s;

		bitmap_set_range(dst, base + s, n);
		if (s + n >= WORD_BITS)
			break;
		w &= ~0ull << (s + n);
	}
}

static int dec_plain(struct bitmap *dst, uint64_t *pos, const unsigned char *p, size_t len)
{
	uint64_t nbits = bitmap_bits(dst), nwords = words_for(nbits);
	uint64_t w0, n, i, end;

	if (len < BMX_PLAIN_HDR + WORD_BYTES || (len - BMX_PLAIN_HDR) % WORD_BYTES)
		return -EBADMSG;
	w0 = get_le64(p);
	n = (len - BMX_PLAIN_HDR) / WORD_BYTES;
	if (w0 != *pos / WORD_BITS || n > nwords - w0)
		return -ERANGE;
	if (w0 + n == nwords &&
	    (get_le64(p + BMX_PLAIN_HDR + (n - 1) * WORD_BYTES) & surplus_mask(nbits)))
		return -ERANGE;

	for (i = 0; i < n; i++)
		or_word(dst, (w0 + i) * WORD_BITS, get_le64(p + BMX_PLAIN_HDR + i * WORD_BYTES));
	end = (w0 + n) * WORD_BITS;
	*pos = end < nbits ? end : nbits;
	return 0;
}

/* Walk the runs of an RLE chunk from *pos; with dst NULL only validate
 * (and compute the end), else set the set runs (cannot fail then). */
static int walk_rle(struct bitmap *dst, uint64_t nbits, uint64_t *pos, const unsigned char *p,
		    size_t len)
{
	uint64_t at = *pos, run;
	bool set;
	size_t off, used;
	int rc;

	if (len < BMX_RLE_HDR + 1 || (p[0] & ~BMX_RLE_SET))
		return -EBADMSG;
	set = p[0] & BMX_RLE_SET;
	for (off = BMX_RLE_HDR; off < len; off += used) {
		rc = vli_get(p + off, len - off, &run, &used);
		if (rc < 0)
			return rc;
		if (run == 0)
			return -EBADMSG;
		if (run > nbits - at)
			return -ERANGE;
		if (dst && set)
			bitmap_set_range(dst, at, run);
		at += run;
		set = !set;
	}
	*pos = at;
	return 0;
}

int bmx_dec_apply(struct bitmap *dst, uint64_t *pos, enum bmx_kind kind, const void *buf,
		  size_t len)
{
	uint64_t nbits = bitmap_bits(dst), end = *pos;
	int rc;

	if (*pos > nbits)
		return -EINVAL;
	if (kind != BMX_PLAIN && kind != BMX_RLE)
		return -EBADMSG;
	if (*pos == nbits)
		return -ERANGE; /* the transfer is already complete */
	if (kind == BMX_PLAIN)
		return dec_plain(dst, pos, buf, len);

	rc = walk_rle(NULL, nbits, &end, buf, len);
	if (rc < 0)
		return rc;
	return walk_rle(dst, nbits, pos, buf, len);
}

/* ---------------------------------------------------------------- statistics */

void bmx_stats_init(struct bmx_stats *st, uint64_t nbits)
{
	memset(st, 0, sizeof(*st));
	st->raw_bytes = words_for(nbits) * WORD_BYTES;
}

void bmx_stats_add(struct bmx_stats *st, enum bmx_kind kind, size_t len)
{
	if (kind == BMX_RLE) {
		st->rle_bytes += len;
		st->rle_chunks++;
	} else {
		st->plain_bytes += len;
		st->plain_chunks++;
	}
}

unsigned int bmx_stats_permille(const struct bmx_stats *st)
{
	uint64_t total = st->plain_bytes + st->rle_bytes, lo = 0, mid, hi = 1000;

	if (total >= st->raw_bytes)
		return 0;
	/* DRBD: 1000 - floor(1000 * total / raw); the floor is the largest q
	 * with q * raw <= total * 1000, found without overflow */
	while (lo < hi) {
		mid = (lo + hi + 1) / 2;
		if (cmp_products(mid, st->raw_bytes, total, 1000) <= 0)
			lo = mid;
		else
			hi = mid - 1;
	}
	return (unsigned int)(1000 - lo);
}

int bmx_stats_format(const struct bmx_stats *st, char *buf, size_t size)
{
	unsigned int r = bmx_stats_permille(st);

	return snprintf(buf, size,
			"plain %llu(%llu), RLE %llu(%llu), total %llu; compression: %u.%u%%",
			(unsigned long long)st->plain_bytes, (unsigned long long)st->plain_chunks,
			(unsigned long long)st->rle_bytes, (unsigned long long)st->rle_chunks,
			(unsigned long long)(st->plain_bytes + st->rle_bytes), r / 10, r % 10);
}
