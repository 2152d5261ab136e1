/*
 * test-bmx: bitmap exchange. Round trips over many bitmap shapes, sizes
 * and chunk capacities; the exact bytes of small chunks; OR-merge into a
 * bitmap that already has bits; every kind of malformed chunk rejected
 * with the bitmap and cursor untouched; the statistics line.
 *
 * The randomized tests print their seed; TANDEM_SEED=<n> repeats a run.
 */
#include "unit.h"

#include <inttypes.h>
#include <time.h>

#include "bitmap.h"
#include "bmx.h"

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 0x2545f4914f6cdd1dull;
}

static void free_bitmap(void *p)
{
	bitmap_free(p);
}

static void free_enc(void *p)
{
	bmx_enc_free(p);
}

static struct bitmap *new_bitmap(uint64_t nbits)
{
	struct bitmap *bm = NULL;

	assert_int_equal(bitmap_new(nbits, &bm), 0);
	return unit_defer(free_bitmap, bm);
}

/* Every page of a and b encodes the same. */
static bool same_bits(const struct bitmap *a, const struct bitmap *b)
{
	static unsigned char pa[BITMAP_PAGE_BYTES], pb[BITMAP_PAGE_BYTES];
	uint64_t p;

	if (bitmap_bits(a) != bitmap_bits(b) || bitmap_weight(a) != bitmap_weight(b))
		return false;
	for (p = 0; p < bitmap_pages(a); p++) {
		bitmap_page_encode(a, p, pa);
		bitmap_page_encode(b, p, pb);
		if (memcmp(pa, pb, sizeof(pa)))
			return false;
	}
	return true;
}

/* dst |= src, through the public API. */
static void or_into(struct bitmap *dst, const struct bitmap *src)
{
	uint64_t n = bitmap_bits(src), at = bitmap_find_next_set(src, 0), end;

	while (at < n) {
		end = bitmap_find_next_clear(src, at);
		bitmap_set_range(dst, at, end - at);
		at = bitmap_find_next_set(src, end);
	}
}

enum shape { EMPTY, FULL, SPARSE, RANDOM, ALTERNATING, RUNS, MIXED, NSHAPES };
static const char *const shape_names[] = {"empty",	 "full", "sparse", "random",
					  "alternating", "runs", "mixed"};

static void fill(struct bitmap *bm, enum shape s)
{
	uint64_t n = bitmap_bits(bm), i, at;

	switch (s) {
	case EMPTY:
		break;
	case FULL:
		bitmap_set_all(bm);
		break;
	case SPARSE: /* a few single bits and short ranges, one at the very end */
		for (i = 3; i < n; i += 997)
			bitmap_set_range(bm, i, 1 + i % 5);
		bitmap_set_range(bm, n - 1, 1);
		break;
	case RANDOM:
		for (i = 0; i < n; i++)
			if (rnd() & 1)
				bitmap_set_range(bm, i, 1);
		break;
	case ALTERNATING:
		for (i = 1; i < n; i += 2)
			bitmap_set_range(bm, i, 1);
		break;
	case RUNS: /* alternating runs of random lengths from 1 to ~4000 */
		for (at = 0; at < n;) {
			uint64_t clear = 1 + rnd() % (rnd() & 1 ? 16 : 4000);
			uint64_t set = 1 + rnd() % (rnd() & 1 ? 16 : 4000);

			bitmap_set_range(bm, at + clear, set);
			at += clear + set;
		}
		break;
	case MIXED: /* compressible halves around a noisy middle */
		bitmap_set_range(bm, n / 8, n / 8);
		for (i = n / 3; i < n / 2; i++)
			if (rnd() & 1)
				bitmap_set_range(bm, i, 1);
		bitmap_set_range(bm, n - n / 5, n / 10 + 1);
		break;
	default:
		fail();
	}
}

struct xfer {
	uint64_t chunks[3]; /* by kind */
	uint64_t bytes;
	uint64_t plain_after_rle_midword;
};

/* Send src into dst chunk by chunk, checking every step. */
static void transfer(const struct bitmap *src, struct bitmap *dst, size_t cap, bool use_rle,
		     struct xfer *x)
{
	struct bmx_enc *enc = NULL;
	unsigned char *buf = unit_defer(free, malloc(cap + 64));
	uint64_t pos = 0, nbits = bitmap_bits(src);
	enum bmx_kind kind, prev = BMX_PLAIN;
	struct bmx_stats st;
	size_t len;
	int rc;

	memset(x, 0, sizeof(*x));
	assert_int_equal(bmx_enc_new(src, use_rle, &enc), 0);
	unit_defer(free_enc, enc);
	while ((rc = bmx_enc_next(enc, buf, cap, &len, &kind)) == 1) {
		uint64_t before = pos;

		assert_true(len >= 2 && len <= cap);
		assert_true(kind == BMX_PLAIN || kind == BMX_RLE);
		if (!use_rle)
			assert_int_equal(kind, BMX_PLAIN);
		if (kind == BMX_PLAIN && prev == BMX_RLE && pos % 64)
			x->plain_after_rle_midword++;
		assert_int_equal(bmx_dec_apply(dst, &pos, kind, buf, len), 0);
		assert_true(pos > before);
		assert_int_equal(pos, bmx_enc_pos(enc)); /* both cursors agree */
		x->chunks[kind]++;
		x->bytes += len;
		prev = kind;
	}
	assert_int_equal(rc, 0);
	assert_true(bmx_enc_done(enc));
	assert_int_equal(pos, nbits);
	assert_int_equal(bmx_enc_next(enc, buf, cap, &len, &kind), 0); /* stays done */

	bmx_enc_stats(enc, &st);
	assert_int_equal(st.plain_chunks, x->chunks[BMX_PLAIN]);
	assert_int_equal(st.rle_chunks, x->chunks[BMX_RLE]);
	assert_int_equal(st.plain_bytes + st.rle_bytes, x->bytes);
	assert_int_equal(st.raw_bytes, (nbits + 63) / 64 * 8);
	unit_release(enc);
	unit_release(buf);
}

static void test_roundtrip(void **state)
{
	static const uint64_t sizes[] = {1,   2,    63,	   64,	  65,	 127,
					 200, 4096, 32767, 32768, 32769, 100003};
	static const size_t caps[] = {16, 17, 23, 24, 100, 4096};
	unsigned int si, s, ci, r;

	rnd_state = *(uint64_t *)*state | 1;
	for (si = 0; si < UNIT_ARRAY_SIZE(sizes); si++) {
		for (s = 0; s < NSHAPES; s++) {
			struct bitmap *src = new_bitmap(sizes[si]);

			fill(src, (enum shape)s);
			for (ci = 0; ci < UNIT_ARRAY_SIZE(caps); ci++) {
				for (r = 0; r < 2; r++) {
					struct bitmap *dst = new_bitmap(sizes[si]);
					struct xfer x;

					transfer(src, dst, caps[ci], r, &x);
					if (!same_bits(src, dst))
						fail_msg("%s, %" PRIu64 " bits, cap %zu, rle %u",
							 shape_names[s], sizes[si], caps[ci], r);
					unit_release(dst);
				}
			}
			unit_release(src);
		}
	}
}

/* Which kind the encoder picks, and how much it saves. */
static void test_choice(void **state)
{
	struct bitmap *bm = new_bitmap(1ull << 24); /* 64 GiB of data */
	struct bitmap *dst;
	struct xfer x;
	uint64_t i;

	rnd_state = *(uint64_t *)*state | 1;
	/* all clear or all set: one tiny RLE chunk */
	dst = new_bitmap(1ull << 24);
	transfer(bm, dst, 4096, true, &x);
	assert_int_equal(x.chunks[BMX_RLE], 1);
	assert_int_equal(x.chunks[BMX_PLAIN], 0);
	assert_int_equal(x.bytes, 1 + 4); /* flags, 2^24 in 4 VLI bytes */
	bitmap_set_all(bm);
	transfer(bm, dst, 4096, true, &x);
	assert_true(same_bits(bm, dst));
	assert_int_equal(x.bytes, 5);
	/* without RLE: every word, 511 per chunk */
	transfer(bm, dst, 4096, false, &x);
	assert_int_equal(x.chunks[BMX_PLAIN], ((1u << 24) / 64 + 510) / 511);
	unit_release(dst);
	unit_release(bm);

	/* noise: plain wins; a noisy middle: both kinds, plain resumes mid-word */
	bm = new_bitmap(1u << 20);
	dst = new_bitmap(1u << 20);
	fill(bm, RANDOM);
	transfer(bm, dst, 4096, true, &x);
	assert_true(same_bits(bm, dst));
	assert_int_equal(x.chunks[BMX_RLE], 0);
	assert_int_equal(x.bytes, (1u << 20) / 8 + 8 * x.chunks[BMX_PLAIN]);
	unit_release(dst);
	/* a long clear run, then alternating bits: the first chunk is RLE and
	 * ends inside the noise, off a word boundary; plain takes over */
	bitmap_clear_all(bm);
	for (i = 100003; i < 200000; i += 2)
		bitmap_set_range(bm, i, 1);
	dst = new_bitmap(1u << 20);
	transfer(bm, dst, 4096, true, &x);
	assert_true(same_bits(bm, dst));
	assert_true(x.chunks[BMX_RLE] >= 2);
	assert_true(x.chunks[BMX_PLAIN] >= 1);
	assert_true(x.plain_after_rle_midword >= 1);
	unit_release(dst);
	unit_release(bm);
}

static void test_exact_bytes(void **state)
{
	struct bitmap *bm = new_bitmap(200), *dst = new_bitmap(200);
	struct bmx_enc *enc = NULL;
	unsigned char buf[64];
	enum bmx_kind kind;
	size_t len;
	uint64_t pos = 0, i;

	/* bits 2..4 and 130..199 set: runs 2, 3, 125, 70 */
	bitmap_set_range(bm, 2, 3);
	bitmap_set_range(bm, 130, 70);
	assert_int_equal(bmx_enc_new(bm, true, &enc), 0);
	unit_defer(free_enc, enc);
	assert_int_equal(bmx_enc_next(enc, buf, 16, &len, &kind), 1);
	assert_int_equal(kind, BMX_RLE);
	assert_int_equal(len, 5);
	assert_memory_equal(buf, ((unsigned char[]){0x00, 2, 3, 125, 70}), 5);
	assert_int_equal(bmx_enc_next(enc, buf, 16, &len, &kind), 0);
	unit_release(enc);

	/* 128 and more take two VLI bytes: 0x80 0x01 */
	bitmap_clear_all(bm);
	bitmap_set_range(bm, 0, 128);
	assert_int_equal(bmx_enc_new(bm, true, &enc), 0);
	unit_defer(free_enc, enc);
	assert_int_equal(bmx_enc_next(enc, buf, 16, &len, &kind), 1);
	assert_int_equal(kind, BMX_RLE);
	assert_int_equal(len, 4);
	assert_memory_equal(buf, ((unsigned char[]){BMX_RLE_SET, 0x80, 0x01, 72}), 4);
	assert_int_equal(bmx_dec_apply(dst, &pos, kind, buf, len), 0);
	assert_int_equal(pos, 200);
	assert_true(same_bits(bm, dst));
	unit_release(enc);

	/* plain: offset, then little-endian words; 16 bytes = 1 word */
	bitmap_clear_all(bm);
	bitmap_set_range(bm, 0, 1);
	bitmap_set_range(bm, 71, 2);
	assert_int_equal(bmx_enc_new(bm, false, &enc), 0);
	unit_defer(free_enc, enc);
	assert_int_equal(bmx_enc_next(enc, buf, 16, &len, &kind), 1);
	assert_int_equal(kind, BMX_PLAIN);
	assert_int_equal(len, 16);
	assert_memory_equal(
	    buf, ((unsigned char[]){0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0}), 16);
	assert_int_equal(bmx_enc_pos(enc), 64);
	assert_int_equal(bmx_enc_next(enc, buf, 23, &len, &kind), 1);
	assert_int_equal(len, 16);
	assert_memory_equal(
	    buf, ((unsigned char[]){1, 0, 0, 0, 0, 0, 0, 0, 0x80, 1, 0, 0, 0, 0, 0, 0}), 16);
	assert_int_equal(bmx_enc_next(enc, buf, 64, &len, &kind), 1);
	assert_int_equal(len, 24); /* only words 2 and 3 are left */
	assert_memory_equal(buf, ((unsigned char[]){2, 0, 0, 0, 0, 0, 0, 0}), 8);
	assert_int_equal(bmx_enc_pos(enc), 200);
	assert_int_equal(bmx_enc_next(enc, buf, 64, &len, &kind), 0);

	/* a change beyond the encoder's position is sent */
	bitmap_clear_all(bm);
	assert_int_equal(bmx_enc_new(bm, false, &enc), 0);
	unit_defer(free_enc, enc);
	assert_int_equal(bmx_enc_next(enc, buf, 16, &len, &kind), 1);
	bitmap_set_range(bm, 100, 1);
	assert_int_equal(bmx_enc_next(enc, buf, 16, &len, &kind), 1);
	assert_memory_equal(buf, ((unsigned char[]){1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10}), 13);

	/* too small a buffer */
	assert_int_equal(bmx_enc_next(enc, buf, 15, &len, &kind), -EINVAL);
	unit_release(enc);
	unit_release(dst);
	unit_release(bm);

	/* a tie in bits per byte goes to RLE, which may fill the buffer
	 * exactly: 15 runs (14 x 4 + 8) in 16 bytes vs one word in 16 bytes */
	bm = new_bitmap(64);
	for (i = 4; i < 56; i += 8)
		bitmap_set_range(bm, i, 4);
	assert_int_equal(bmx_enc_new(bm, true, &enc), 0);
	unit_defer(free_enc, enc);
	assert_int_equal(bmx_enc_next(enc, buf, 16, &len, &kind), 1);
	assert_int_equal(kind, BMX_RLE);
	assert_int_equal(len, 16);
	assert_int_equal(bmx_enc_pos(enc), 64);
	unit_release(enc);
	/* one bit more in the last run does not change that; one more run
	 * does not fit: then plain is denser */
	bitmap_set_range(bm, 63, 1);
	assert_int_equal(bmx_enc_new(bm, true, &enc), 0);
	unit_defer(free_enc, enc);
	assert_int_equal(bmx_enc_next(enc, buf, 16, &len, &kind), 1);
	assert_int_equal(kind, BMX_PLAIN);
	unit_release(enc);
	unit_release(bm);
}

static void test_merge(void **state)
{
	static const uint64_t sizes[] = {65, 4096, 70001};
	unsigned int si, a, b;

	rnd_state = *(uint64_t *)*state | 1;
	for (si = 0; si < UNIT_ARRAY_SIZE(sizes); si++) {
		for (a = 0; a < NSHAPES; a++) {
			for (b = 0; b < NSHAPES; b++) {
				struct bitmap *src = new_bitmap(sizes[si]);
				struct bitmap *dst = new_bitmap(sizes[si]);
				struct bitmap *want = new_bitmap(sizes[si]);
				struct xfer x;

				fill(src, (enum shape)a);
				fill(dst, (enum shape)b);
				or_into(want, src);
				or_into(want, dst);
				transfer(src, dst, 100, true, &x);
				if (!same_bits(want, dst))
					fail_msg("%s into %s, %" PRIu64 " bits", shape_names[a],
						 shape_names[b], sizes[si]);
				unit_release(want);
				unit_release(dst);
				unit_release(src);
			}
		}
	}
}

/* Applying the same chunks twice, or a chunk into a full bitmap, is harmless. */
static void test_idempotent(void **state)
{
	struct bitmap *src = new_bitmap(1000), *dst = new_bitmap(1000);
	struct xfer x;

	rnd_state = *(uint64_t *)*state | 1;
	fill(src, RUNS);
	transfer(src, dst, 24, true, &x);
	transfer(src, dst, 24, true, &x);
	assert_true(same_bits(src, dst));
	bitmap_set_all(dst);
	transfer(src, dst, 24, true, &x);
	assert_int_equal(bitmap_weight(dst), 1000);
	unit_release(dst);
	unit_release(src);
}

/* ---------------------------------------------------------------- corruption */

struct bad {
	const char *what;
	int kind;
	uint64_t pos; /* the receiver's cursor */
	size_t len;
	unsigned char b[32];
	int rc;
};

#define NB 100 /* bits of the receiving bitmap in the table: two words */
/* 9 continuation bytes: 9 x 0x80 (zero groups), 9 x 0xff (all ones) */
#define C9 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80
#define F9 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
#define W(x) (x) & 0xff, ((x) >> 8) & 0xff, 0, 0, 0, 0, 0, 0 /* a small LE word */

static const struct bad bad_chunks[] = {
    {"kind 0", 0, 0, 3, {0, 5, 95}, -EBADMSG},
    {"kind 3", 3, 0, 3, {0, 5, 95}, -EBADMSG},
    /* plain */
    {"plain, empty", BMX_PLAIN, 0, 0, {0}, -EBADMSG},
    {"plain, offset only", BMX_PLAIN, 0, 8, {W(0)}, -EBADMSG},
    {"plain, short word", BMX_PLAIN, 0, 15, {W(0), W(1)}, -EBADMSG},
    {"plain, trailing garbage", BMX_PLAIN, 0, 19, {W(0), W(1), 0xaa, 0xbb, 0xcc}, -EBADMSG},
    {"plain, offset ahead of cursor", BMX_PLAIN, 0, 16, {W(1), W(1)}, -ERANGE},
    {"plain, offset behind cursor", BMX_PLAIN, 64, 16, {W(0), W(1)}, -ERANGE},
    {"plain, offset huge", BMX_PLAIN, 0, 16, {0, 0, 0, 0, 0, 0, 0, 0x80, W(1)}, -ERANGE},
    {"plain, words past the end", BMX_PLAIN, 0, 32, {W(0), W(1), W(1), W(1)}, -ERANGE},
    {"plain, bit 100 set", BMX_PLAIN, 64, 16, {W(1), 0, 0, 0, 0, 0x10, 0, 0, 0}, -ERANGE},
    {"plain, bit 127 set", BMX_PLAIN, 64, 16, {W(1), 0, 0, 0, 0, 0, 0, 0, 0x80}, -ERANGE},
    /* rle: framing */
    {"rle, empty", BMX_RLE, 0, 0, {0}, -EBADMSG},
    {"rle, flags only", BMX_RLE, 0, 1, {BMX_RLE_SET}, -EBADMSG},
    {"rle, unknown flag", BMX_RLE, 0, 2, {0x02, 5}, -EBADMSG},
    {"rle, flag bit 7", BMX_RLE, 0, 2, {0x81, 5}, -EBADMSG},
    /* rle: run lengths */
    {"rle, zero first run", BMX_RLE, 0, 3, {0, 0, 100}, -EBADMSG},
    {"rle, zero later run", BMX_RLE, 0, 4, {BMX_RLE_SET, 5, 0, 95}, -EBADMSG},
    {"rle, truncated vli", BMX_RLE, 0, 3, {BMX_RLE_SET, 5, 0x80}, -EBADMSG},
    {"rle, truncated 2nd byte", BMX_RLE, 0, 4, {BMX_RLE_SET, 5, 0xff, 0xff}, -EBADMSG},
    {"rle, overlong 1", BMX_RLE, 0, 3, {BMX_RLE_SET, 0x81, 0x00}, -EBADMSG},
    {"rle, overlong 0", BMX_RLE, 0, 3, {BMX_RLE_SET, 0x80, 0x00}, -EBADMSG},
    {"rle, 11-byte vli", BMX_RLE, 0, 12, {BMX_RLE_SET, 0x81, C9, 0x00}, -EBADMSG},
    {"rle, vli beyond 64 bits", BMX_RLE, 0, 11, {BMX_RLE_SET, F9, 0x02}, -EBADMSG},
    {"rle, vli 2^64-1 (a valid vli)", BMX_RLE, 0, 11, {BMX_RLE_SET, F9, 0x01}, -ERANGE},
    /* rle: ranges */
    {"rle, one run past the end", BMX_RLE, 0, 2, {BMX_RLE_SET, 101}, -ERANGE},
    {"rle, runs past the end", BMX_RLE, 0, 4, {BMX_RLE_SET, 10, 50, 41}, -ERANGE},
    {"rle, past the end from cursor", BMX_RLE, 90, 2, {BMX_RLE_SET, 11}, -ERANGE},
    {"rle, trailing run", BMX_RLE, 0, 3, {0, 100, 1}, -ERANGE},
    {"rle, trailing zero byte", BMX_RLE, 0, 3, {BMX_RLE_SET, 100, 0}, -EBADMSG},
    {"rle, trailing partial vli", BMX_RLE, 0, 3, {BMX_RLE_SET, 100, 0x80}, -EBADMSG},
    {"rle, set run then bad", BMX_RLE, 0, 5, {BMX_RLE_SET, 50, 10, 40, 0x80}, -EBADMSG},
    /* the cursor */
    {"rle, after the end", BMX_RLE, NB, 2, {BMX_RLE_SET, 1}, -ERANGE},
    {"plain, after the end", BMX_PLAIN, NB, 16, {W(1), W(1)}, -ERANGE},
    {"rle, cursor beyond the end", BMX_RLE, NB + 1, 2, {BMX_RLE_SET, 1}, -EINVAL},
};

static void test_corrupt(void **state)
{
	struct bitmap *dst = new_bitmap(NB), *before = new_bitmap(NB);
	unsigned int i;

	/* something already set, so that "unchanged" means something */
	bitmap_set_range(dst, 7, 3);
	bitmap_set_range(dst, 64, 1);
	or_into(before, dst);
	for (i = 0; i < UNIT_ARRAY_SIZE(bad_chunks); i++) {
		const struct bad *t = &bad_chunks[i];
		uint64_t pos = t->pos;
		int rc = bmx_dec_apply(dst, &pos, (enum bmx_kind)t->kind, t->b, t->len);

		if (rc != t->rc)
			fail_msg("%s: rc %d, expected %d", t->what, rc, t->rc);
		if (pos != t->pos || !same_bits(before, dst))
			fail_msg("%s: changed the cursor or the bitmap", t->what);
	}
	unit_release(before);
	unit_release(dst);
}

/* The valid neighbours of the table's cases are accepted: the table tests
 * what it says and not an off-by-one. */
struct good {
	const char *what;
	int kind;
	uint64_t pos;
	size_t len;
	unsigned char b[32];
	uint64_t end; /* the cursor after */
};

static void test_valid_edges(void **state)
{
	static const struct good good[] = {
	    {"rle, runs to the end", BMX_RLE, 0, 4, {BMX_RLE_SET, 10, 50, 40}, NB},
	    {"rle, short of the end", BMX_RLE, 0, 4, {BMX_RLE_SET, 10, 50, 39}, 99},
	    {"rle, from cursor to the end", BMX_RLE, 90, 2, {BMX_RLE_SET, 10}, NB},
	    {"rle, set run of one", BMX_RLE, 99, 2, {BMX_RLE_SET, 1}, NB},
	    {"plain, last word, bit 99", BMX_PLAIN, 64, 16, {W(1), 0, 0, 0, 0, 0x08, 0, 0, 0}, NB},
	    {"plain, mid-word cursor", BMX_PLAIN, 70, 16, {W(1), W(1)}, NB},
	    {"plain, first word", BMX_PLAIN, 0, 16, {W(0), W(3)}, 64},
	    {"plain, both words", BMX_PLAIN, 0, 24, {W(0), W(3), W(1)}, NB},
	};
	unsigned int i;

	for (i = 0; i < UNIT_ARRAY_SIZE(good); i++) {
		struct bitmap *dst = new_bitmap(NB);
		uint64_t pos = good[i].pos;
		int rc =
		    bmx_dec_apply(dst, &pos, (enum bmx_kind)good[i].kind, good[i].b, good[i].len);

		if (rc != 0)
			fail_msg("%s: rc %d", good[i].what, rc);
		if (pos != good[i].end)
			fail_msg("%s: cursor %" PRIu64, good[i].what, pos);
		unit_release(dst);
	}

	/* what they set */
	{
		struct bitmap *dst = new_bitmap(NB);
		uint64_t pos = 0;
		const unsigned char rle[] = {BMX_RLE_SET, 10, 50, 40};
		const unsigned char plain[] = {W(1), 0, 0, 0, 0, 0x08, 0, 0, 0};

		assert_int_equal(bmx_dec_apply(dst, &pos, BMX_RLE, rle, sizeof(rle)), 0);
		assert_int_equal(bitmap_weight(dst), 50);
		assert_int_equal(bitmap_find_next_set(dst, 0), 0);
		assert_int_equal(bitmap_find_next_clear(dst, 0), 10);
		assert_int_equal(bitmap_find_next_set(dst, 10), 60);
		bitmap_clear_all(dst);
		pos = 64;
		assert_int_equal(bmx_dec_apply(dst, &pos, BMX_PLAIN, plain, sizeof(plain)), 0);
		assert_int_equal(bitmap_weight(dst), 1);
		assert_true(bitmap_test(dst, 99));
		unit_release(dst);
	}
}

/* Every truncation of every chunk of a real transfer is rejected or, when
 * it is a valid chunk by itself (an RLE chunk cut after a run), sets only
 * bits that the whole chunk sets. */
static void test_truncations(void **state)
{
	struct bitmap *src = new_bitmap(5000), *dst, *full;
	struct bmx_enc *enc = NULL;
	unsigned char buf[256];
	enum bmx_kind kind;
	uint64_t pos = 0, p2, start, want;
	size_t len, cut;
	int rc;

	rnd_state = *(uint64_t *)*state | 1;
	fill(src, MIXED);
	dst = new_bitmap(5000);
	full = new_bitmap(5000);
	assert_int_equal(bmx_enc_new(src, true, &enc), 0);
	unit_defer(free_enc, enc);
	while (bmx_enc_next(enc, buf, sizeof(buf), &len, &kind) == 1) {
		for (cut = 0; cut < len; cut++) {
			p2 = pos;
			bitmap_clear_all(dst);
			rc = bmx_dec_apply(dst, &p2, kind, buf, cut);
			if (rc == 0) {
				/* a shorter valid chunk: exactly src's bits in what it
				 * covers (plain resends its first word from its start) */
				assert_true(p2 > pos);
				start = kind == BMX_PLAIN ? pos / 64 * 64 : pos;
				want = bitmap_count_range(src, start, p2 - start);
				assert_int_equal(bitmap_weight(dst), want);
				assert_int_equal(bitmap_count_range(dst, start, p2 - start), want);
			} else {
				assert_true(rc == -EBADMSG || rc == -ERANGE);
				assert_int_equal(p2, pos);
				assert_int_equal(bitmap_weight(dst), 0);
			}
		}
		assert_int_equal(bmx_dec_apply(full, &pos, kind, buf, len), 0);
	}
	assert_true(same_bits(src, full));
	unit_release(enc);
	unit_release(full);
	unit_release(dst);
	unit_release(src);
}

/* ---------------------------------------------------------------- statistics */

static void test_stats(void **state)
{
	struct bmx_stats st;
	char line[160];

	bmx_stats_init(&st, 1000 * 64); /* raw 8000 bytes */
	assert_int_equal(st.raw_bytes, 8000);
	assert_int_equal(bmx_stats_permille(&st), 1000); /* nothing sent yet */
	bmx_stats_add(&st, BMX_PLAIN, 4000);
	bmx_stats_add(&st, BMX_RLE, 12);
	bmx_stats_add(&st, BMX_RLE, 3);
	assert_int_equal(st.plain_chunks, 1);
	assert_int_equal(st.rle_chunks, 2);
	/* 1000 - floor(1000 * 4015 / 8000) = 1000 - 501 */
	assert_int_equal(bmx_stats_permille(&st), 499);
	assert_int_equal(bmx_stats_format(&st, line, sizeof(line)),
			 (int)strlen("plain 4000(1), RLE 15(2), total 4015; compression: 49.9%"));
	assert_string_equal(line, "plain 4000(1), RLE 15(2), total 4015; compression: 49.9%");

	/* nothing saved: 0 */
	bmx_stats_add(&st, BMX_PLAIN, 3985);
	assert_int_equal(bmx_stats_permille(&st), 0);
	bmx_stats_add(&st, BMX_PLAIN, 1);
	assert_int_equal(bmx_stats_permille(&st), 0);

	/* huge numbers do not overflow */
	bmx_stats_init(&st, 64);
	st.raw_bytes = UINT64_MAX;
	st.rle_bytes = UINT64_MAX / 3;
	assert_int_equal(bmx_stats_permille(&st), 667);
	bmx_stats_init(&st, 1ull << 40);
	st.rle_bytes = 5;
	assert_int_equal(bmx_stats_permille(&st), 1000);
	assert_true(bmx_stats_format(&st, line, sizeof(line)) > 0);
	assert_non_null(strstr(line, "compression: 100.0%"));
}

int main(void)
{
	const char *env = getenv("TANDEM_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 0)
				    : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_prestate(test_roundtrip, &seed),
	    cmocka_unit_test_prestate(test_choice, &seed),
	    cmocka_unit_test(test_exact_bytes),
	    cmocka_unit_test_prestate(test_merge, &seed),
	    cmocka_unit_test_prestate(test_idempotent, &seed),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_valid_edges),
	    cmocka_unit_test_prestate(test_truncations, &seed),
	    cmocka_unit_test(test_stats),
	};

	print_message("# test-bmx: seed %" PRIu64 " (repeat with TANDEM_SEED=%" PRIu64 ")\n", seed,
		      seed);
	return cmocka_run_group_tests(tests, NULL, unit_teardown);
}
