/*
 * bitmap: the quick-sync bitmap, one bit per 4 KiB block.
 *
 * In memory the bitmap is an array of uint64_t words in CPU order: bit n
 * is bit n % 64 of word n / 64, exactly ceil(bits / 64) words. A second,
 * much smaller bitmap holds one "dirty" bit per 4096-byte page (512 words)
 * plus a count of the dirty pages, so write-back and dirty counting look
 * at the page bitmap only. The weight is adjusted by the popcount of the
 * bits that actually flipped in every word a change touches.
 *
 * Invariant: bits at or beyond bm_bits in the last word (the "surplus"
 * bits) are always zero. Every change is clamped to the bitmap and decode
 * masks them out, so encode and the find functions can rely on it.
 *
 * Not thread-safe: the caller serializes access.
 */
#include "config.h"

#include <assert.h>
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bitmap.h"

#define WORD_BITS 64u
#define PAGE_WORDS (BITMAP_PAGE_BYTES / sizeof(uint64_t))

/* ceil(n / d) without the overflow of (n + d - 1) / d. */
#define DIV_ROUND_UP(n, d) ((n) / (d) + ((n) % (d) != 0))

struct bitmap {
	uint64_t bm_bits;
	uint64_t bm_nwords;
	uint64_t bm_npages;
	uint64_t bm_weight;  /* set bits */
	uint64_t bm_ndirty;  /* set bits in bm_dirty */
	uint64_t *bm_words;  /* bm_nwords data words */
	uint64_t bm_dirty[]; /* one bit per page, DIV_ROUND_UP(bm_npages, 64) words */
};

/* ---------------------------------------------------------------- helpers */

/* The bits of word w that lie in [first, last] (w must overlap the range). */
static uint64_t bitmap_word_mask(uint64_t w, uint64_t first, uint64_t last)
{
	uint64_t mask = ~0ull;

	if (w == first / WORD_BITS)
		mask &= ~0ull << (first % WORD_BITS);
	if (w == last / WORD_BITS)
		mask &= ~0ull >> (WORD_BITS - 1 - last % WORD_BITS);
	return mask;
}

/* The bits of the last word that exist. */
static uint64_t bitmap_tail_mask(const struct bitmap *bm)
{
	unsigned int r = bm->bm_bits % WORD_BITS;

	return r ? (1ull << r) - 1 : ~0ull;
}

/*
 * Clamp [first, first + count) to the bitmap. False if nothing is left,
 * else *last is the last bit of the clamped range.
 */
static bool bitmap_clamp(const struct bitmap *bm, uint64_t first, uint64_t count, uint64_t *last)
{
	if (first >= bm->bm_bits || count == 0)
		return false;
	if (count > bm->bm_bits - first)
		count = bm->bm_bits - first;
	*last = first + count - 1;
	return true;
}

/*
 * Index of the first set bit at or after `from` in words[0..nwords), each
 * word XORed with `invert` first (~0 finds clear bits); UINT64_MAX if none.
 */
static uint64_t bitmap_scan(const uint64_t *words, uint64_t nwords, uint64_t from, uint64_t invert)
{
	uint64_t i = from / WORD_BITS;
	uint64_t w;

	if (i >= nwords)
		return UINT64_MAX;
	w = (words[i] ^ invert) & (~0ull << (from % WORD_BITS));
	while (!w) {
		if (++i == nwords)
			return UINT64_MAX;
		w = words[i] ^ invert;
	}
	return i * WORD_BITS + (uint64_t)__builtin_ctzll(w);
}

static void bitmap_set_dirty(struct bitmap *bm, uint64_t page)
{
	uint64_t m = 1ull << (page % WORD_BITS);
	uint64_t *w = &bm->bm_dirty[page / WORD_BITS];

	assert(page < bm->bm_npages);
	if (!(*w & m)) {
		*w |= m;
		bm->bm_ndirty++;
	}
}

static void bitmap_set_clean(struct bitmap *bm, uint64_t page)
{
	uint64_t m = 1ull << (page % WORD_BITS);
	uint64_t *w = &bm->bm_dirty[page / WORD_BITS];

	assert(page < bm->bm_npages);
	if (*w & m) {
		assert(bm->bm_ndirty > 0);
		*w &= ~m;
		bm->bm_ndirty--;
	}
}

/* Set or clear a range word by word; returns how many bits flipped. */
static uint64_t bitmap_change(struct bitmap *bm, uint64_t first, uint64_t count, bool set)
{
	uint64_t last, w, lw, changed = 0;

	if (!bitmap_clamp(bm, first, count, &last))
		return 0;
	lw = last / WORD_BITS;
	for (w = first / WORD_BITS; w <= lw; w++) {
		uint64_t mask = bitmap_word_mask(w, first, last);
		uint64_t old = bm->bm_words[w];
		uint64_t new = set ? old | mask : old & ~mask;

		if (new == old)
			continue;
		bm->bm_words[w] = new;
		changed += (uint64_t)__builtin_popcountll(old ^ new);
		bitmap_set_dirty(bm, w / PAGE_WORDS);
	}
	if (set)
		bm->bm_weight += changed;
	else
		bm->bm_weight -= changed;
	assert(bm->bm_weight <= bm->bm_bits);
	return changed;
}

/* The words of page `page`: *first is the index of its first word; returns
 * how many of its words exist (0 for a page beyond the bitmap). */
static uint64_t bitmap_page_words(const struct bitmap *bm, uint64_t page, uint64_t *first)
{
	if (page >= bm->bm_npages)
		return 0;
	*first = page * PAGE_WORDS;
	return bm->bm_nwords - *first < PAGE_WORDS ? bm->bm_nwords - *first : PAGE_WORDS;
}

/* ---------------------------------------------------------------- life cycle */

int bitmap_new(uint64_t nbits, struct bitmap **out)
{
	struct bitmap *bm;
	uint64_t nwords = DIV_ROUND_UP(nbits, WORD_BITS);
	uint64_t npages = DIV_ROUND_UP(nbits, BITMAP_PAGE_BITS);
	uint64_t ndirty_words = DIV_ROUND_UP(npages, WORD_BITS);

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (nbits == 0)
		return -EINVAL;
	/* Checked first: then the page bitmap (1/32768 of it) cannot overflow. */
	if (nwords > SIZE_MAX / sizeof(uint64_t))
		return -ENOMEM;
	bm = calloc(1, sizeof(*bm) + (size_t)ndirty_words * sizeof(uint64_t));
	if (!bm)
		return -ENOMEM;
	bm->bm_words = calloc((size_t)nwords, sizeof(uint64_t));
	if (!bm->bm_words) {
		free(bm);
		return -ENOMEM;
	}
	bm->bm_bits = nbits;
	bm->bm_nwords = nwords;
	bm->bm_npages = npages;
	*out = bm;
	return 0;
}

void bitmap_free(struct bitmap *bm)
{
	if (!bm)
		return;
	free(bm->bm_words);
	free(bm);
}

uint64_t bitmap_bits(const struct bitmap *bm)
{
	return bm->bm_bits;
}

uint64_t bitmap_pages(const struct bitmap *bm)
{
	return bm->bm_npages;
}

uint64_t bitmap_weight(const struct bitmap *bm)
{
	return bm->bm_weight;
}

/* ---------------------------------------------------------------- bits */

bool bitmap_test(const struct bitmap *bm, uint64_t bit)
{
	if (bit >= bm->bm_bits)
		return false;
	return (bm->bm_words[bit / WORD_BITS] >> (bit % WORD_BITS)) & 1;
}

uint64_t bitmap_set_range(struct bitmap *bm, uint64_t first, uint64_t count)
{
	return bitmap_change(bm, first, count, true);
}

uint64_t bitmap_clear_range(struct bitmap *bm, uint64_t first, uint64_t count)
{
	return bitmap_change(bm, first, count, false);
}

uint64_t bitmap_set_all(struct bitmap *bm)
{
	return bitmap_change(bm, 0, bm->bm_bits, true);
}

uint64_t bitmap_clear_all(struct bitmap *bm)
{
	return bitmap_change(bm, 0, bm->bm_bits, false);
}

uint64_t bitmap_count_range(const struct bitmap *bm, uint64_t first, uint64_t count)
{
	uint64_t last, w, lw, n = 0;

	if (!bitmap_clamp(bm, first, count, &last))
		return 0;
	if (first == 0 && last == bm->bm_bits - 1)
		return bm->bm_weight;
	lw = last / WORD_BITS;
	for (w = first / WORD_BITS; w <= lw; w++)
		n += (uint64_t)__builtin_popcountll(bm->bm_words[w] &
						    bitmap_word_mask(w, first, last));
	return n;
}

uint64_t bitmap_find_next_set(const struct bitmap *bm, uint64_t from)
{
	uint64_t bit;

	if (from >= bm->bm_bits)
		return bm->bm_bits;
	bit = bitmap_scan(bm->bm_words, bm->bm_nwords, from, 0);
	assert(bit == UINT64_MAX || bit < bm->bm_bits);
	return bit < bm->bm_bits ? bit : bm->bm_bits;
}

uint64_t bitmap_find_next_clear(const struct bitmap *bm, uint64_t from)
{
	uint64_t bit;

	if (from >= bm->bm_bits)
		return bm->bm_bits;
	/* The surplus bits read as clear here: clamp them to bm_bits. */
	bit = bitmap_scan(bm->bm_words, bm->bm_nwords, from, ~0ull);
	return bit < bm->bm_bits ? bit : bm->bm_bits;
}

/* ---------------------------------------------------------------- persistence */

bool bitmap_page_dirty(const struct bitmap *bm, uint64_t page)
{
	if (page >= bm->bm_npages)
		return false;
	return (bm->bm_dirty[page / WORD_BITS] >> (page % WORD_BITS)) & 1;
}

uint64_t bitmap_dirty_pages(const struct bitmap *bm)
{
	return bm->bm_ndirty;
}

void bitmap_page_mark(struct bitmap *bm, uint64_t page, bool dirty)
{
	if (page >= bm->bm_npages)
		return;
	if (dirty)
		bitmap_set_dirty(bm, page);
	else
		bitmap_set_clean(bm, page);
}

void bitmap_page_encode(const struct bitmap *bm, uint64_t page, void *buf)
{
	unsigned char *p = buf;
	uint64_t first = 0, i, n = bitmap_page_words(bm, page, &first);

	memset(buf, 0, BITMAP_PAGE_BYTES);
	for (i = 0; i < n; i++) {
		uint64_t v = bm->bm_words[first + i];

		assert(first + i + 1 < bm->bm_nwords || !(v & ~bitmap_tail_mask(bm)));
		v = htole64(v);
		memcpy(p + i * sizeof(v), &v, sizeof(v));
	}
}

void bitmap_page_decode(struct bitmap *bm, uint64_t page, const void *buf)
{
	const unsigned char *p = buf;
	uint64_t first = 0, i, n = bitmap_page_words(bm, page, &first);

	if (n == 0)
		return;
	for (i = 0; i < n; i++) {
		uint64_t *w = &bm->bm_words[first + i];
		uint64_t v;

		memcpy(&v, p + i * sizeof(v), sizeof(v));
		v = le64toh(v);
		if (first + i + 1 == bm->bm_nwords)
			v &= bitmap_tail_mask(bm);
		bm->bm_weight -= (uint64_t)__builtin_popcountll(*w);
		bm->bm_weight += (uint64_t)__builtin_popcountll(v);
		*w = v;
	}
	assert(bm->bm_weight <= bm->bm_bits);
	bitmap_set_clean(bm, page);
}

int64_t bitmap_writeback(struct bitmap *bm, uint64_t first_page, uint64_t last_page,
			 bitmap_write_fn write, void *ctx)
{
	_Alignas(4096) unsigned char buf[BITMAP_PAGE_BYTES];
	uint64_t ndw = DIV_ROUND_UP(bm->bm_npages, WORD_BITS);
	uint64_t page;
	int64_t done = 0;

	if (!write)
		return -EINVAL;
	if (last_page >= bm->bm_npages)
		last_page = bm->bm_npages - 1;
	for (page = bitmap_scan(bm->bm_dirty, ndw, first_page, 0); page <= last_page;
	     page = bitmap_scan(bm->bm_dirty, ndw, page + 1, 0)) {
		int rc;

		bitmap_page_encode(bm, page, buf);
		/* Clean before the write, so a change made meanwhile re-dirties it. */
		bitmap_set_clean(bm, page);
		rc = write(ctx, page, buf);
		if (rc != 0) {
			bitmap_set_dirty(bm, page);
			return rc < 0 ? rc : -EIO;
		}
		done++;
	}
	return done;
}

void bitmap_bits_to_pages(uint64_t first, uint64_t count, uint64_t *first_page, uint64_t *last_page)
{
	*first_page = first / BITMAP_PAGE_BITS;
	if (count == 0) {
		/* No bits, no pages: an empty range (first > last). */
		*last_page = *first_page;
		*first_page += 1;
		return;
	}
	/* A range running past the largest bit number ends there. */
	*last_page =
	    (count - 1 > UINT64_MAX - first ? UINT64_MAX : first + (count - 1)) / BITMAP_PAGE_BITS;
}
