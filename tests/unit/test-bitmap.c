/*
 * test-bitmap: the quick-sync bitmap against a reference model (one bool
 * per bit and per page), the on-disk page layout byte for byte, write-back
 * order and errors, and the cost of operations on a 1 TiB bitmap.
 *
 * The randomized tests print their seed; TANDEM_SEED=<n> repeats a run.
 */
#include "unit.h"

#include <inttypes.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "bitmap.h"

#define PAGE_BITS ((uint64_t)BITMAP_PAGE_BITS)
#define PAGE_BYTES BITMAP_PAGE_BYTES
#define TIB_BITS (1ull << 28) /* 1 TiB of 4 KiB blocks */

#if defined(__SANITIZE_ADDRESS__)
#define UNIT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNIT_ASAN 1
#endif
#endif

#ifdef UNIT_ASAN
size_t __sanitizer_get_current_allocated_bytes(void);
const char *__asan_default_options(void);

/* Let the -ENOMEM test see calloc() fail instead of ASan aborting. */
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif
#if defined(__SANITIZE_THREAD__)
size_t __sanitizer_get_current_allocated_bytes(void);
const char *__tsan_default_options(void);

/* The same under ThreadSanitizer (--enable-tsan). */
const char *__tsan_default_options(void)
{
	return "allocator_may_return_null=1";
}
#endif

/* Bytes the heap has handed out, if we can tell. */
static bool heap_in_use(size_t *bytes)
{
#if defined(UNIT_ASAN) || defined(__SANITIZE_THREAD__)
	*bytes = __sanitizer_get_current_allocated_bytes();
	return true;
#elif defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 33)
	struct mallinfo2 mi = mallinfo2();

	*bytes = mi.uordblks + mi.hblkhd;
	return true;
#else
	(void)bytes;
	return false;
#endif
#else
	(void)bytes;
	return false;
#endif
}

static double now(void)
{
	struct timespec ts;

	assert_int_equal(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t div_up(uint64_t n, uint64_t d)
{
	return n / d + (n % d != 0);
}

/* ---------------------------------------------------------------- random */

struct rng {
	uint64_t s;
};

/* splitmix64: small, and the same sequence everywhere. */
static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_below(struct rng *r, uint64_t n)
{
	return n ? rng_next(r) % n : 0;
}

static void rng_init(struct rng *r, void **state, uint64_t salt)
{
	r->s = *(const uint64_t *)*state ^ salt;
}

/* A range length: mostly short, sometimes long, now and then "to the end". */
static uint64_t rng_count(struct rng *r, uint64_t bits)
{
	uint64_t k = rng_below(r, 100);

	if (k < 40)
		return 1 + rng_below(r, 8);
	if (k < 70)
		return rng_below(r, 200);
	if (k < 90)
		return rng_below(r, 5000);
	if (k < 97)
		return rng_below(r, bits + 1);
	return UINT64_MAX;
}

/* ---------------------------------------------------------------- model */

struct model {
	struct bitmap *bm;
	uint64_t bits;
	uint64_t pages;
	bool *bit;
	bool *dirty;
	uint64_t weight;
	uint64_t ndirty;
};

static void model_new(struct model *m, uint64_t bits)
{
	m->bits = bits;
	m->pages = div_up(bits, PAGE_BITS);
	assert_int_equal(bitmap_new(bits, &m->bm), 0);
	m->bit = calloc(bits, sizeof(bool));
	m->dirty = calloc(m->pages, sizeof(bool));
	assert_non_null(m->bit);
	assert_non_null(m->dirty);
	m->weight = 0;
	m->ndirty = 0;
}

static void model_free(struct model *m)
{
	bitmap_free(m->bm);
	free(m->bit);
	free(m->dirty);
}

static void model_mark(struct model *m, uint64_t page, bool dirty)
{
	if (m->dirty[page] == dirty)
		return;
	m->dirty[page] = dirty;
	if (dirty)
		m->ndirty++;
	else
		m->ndirty--;
}

/* What bitmap_set_range()/bitmap_clear_range() must do, bit by bit. */
static uint64_t model_change(struct model *m, uint64_t first, uint64_t count, bool set)
{
	uint64_t b, n = 0;

	for (b = first; b < m->bits && b - first < count; b++) {
		if (m->bit[b] == set)
			continue;
		m->bit[b] = set;
		n++;
		if (set)
			m->weight++;
		else
			m->weight--;
		model_mark(m, b / PAGE_BITS, true);
	}
	return n;
}

static uint64_t model_count(const struct model *m, uint64_t first, uint64_t count)
{
	uint64_t b, n = 0;

	for (b = first; b < m->bits && b - first < count; b++)
		n += m->bit[b];
	return n;
}

static uint64_t model_next(const struct model *m, uint64_t from, bool set)
{
	uint64_t b;

	for (b = from; b < m->bits; b++)
		if (m->bit[b] == set)
			return b;
	return m->bits;
}

/* The on-disk page, from the definition: bit n is bit n % 8 of byte n / 8. */
static void model_encode(const struct model *m, uint64_t page, unsigned char *buf)
{
	uint64_t b;

	memset(buf, 0, PAGE_BYTES);
	for (b = page * PAGE_BITS; b < m->bits && b < (page + 1) * PAGE_BITS; b++)
		if (m->bit[b])
			buf[(b - page * PAGE_BITS) / 8] |= (unsigned char)(1u << (b % 8));
}

/* Load a page into the model as bitmap_page_decode() must. */
static void model_decode(struct model *m, uint64_t page, const unsigned char *buf)
{
	uint64_t b;

	for (b = page * PAGE_BITS; b < m->bits && b < (page + 1) * PAGE_BITS; b++) {
		uint64_t o = b - page * PAGE_BITS;
		bool v = (buf[o / 8] >> (o % 8)) & 1;

		if (v != m->bit[b])
			m->weight += v ? 1 : (uint64_t)-1;
		m->bit[b] = v;
	}
	model_mark(m, page, false);
}

static void model_check_counts(const struct model *m)
{
	assert_int_equal(bitmap_weight(m->bm), m->weight);
	assert_int_equal(bitmap_dirty_pages(m->bm), m->ndirty);
}

/* Every bit, every page, both find chains and every encoded page. */
static void model_check_full(const struct model *m)
{
	unsigned char want[PAGE_BYTES], got[PAGE_BYTES];
	uint64_t b, p, n = 0;
	int set;

	model_check_counts(m);
	assert_int_equal(bitmap_bits(m->bm), m->bits);
	assert_int_equal(bitmap_pages(m->bm), m->pages);
	for (b = 0; b < m->bits; b++) {
		assert_int_equal(bitmap_test(m->bm, b), m->bit[b]);
		n += m->bit[b];
	}
	assert_int_equal(n, m->weight);
	for (p = 0; p < m->pages; p++) {
		assert_int_equal(bitmap_page_dirty(m->bm, p), m->dirty[p]);
		model_encode(m, p, want);
		bitmap_page_encode(m->bm, p, got);
		assert_memory_equal(got, want, PAGE_BYTES);
	}
	for (set = 0; set <= 1; set++) {
		for (b = 0;; b = n + 1) {
			n = model_next(m, b, set);
			if (set)
				assert_int_equal(bitmap_find_next_set(m->bm, b), n);
			else
				assert_int_equal(bitmap_find_next_clear(m->bm, b), n);
			if (n >= m->bits)
				break;
		}
	}
}

/* ---------------------------------------------------------------- write-back mock */

struct wlog {
	const struct model *m; /* check each buffer against it, or NULL */
	struct bitmap *bm;     /* with redirty: the bitmap being written */
	uint64_t pages[64];
	uint64_t n;
	uint64_t fail_page; /* UINT64_MAX: never fail */
	int fail_rc;
	bool redirty; /* change the page while it is being written */
};

static void wlog_init(struct wlog *w, const struct model *m)
{
	memset(w, 0, sizeof(*w));
	w->m = m;
	w->fail_page = UINT64_MAX;
}

static int wlog_write(void *ctx, uint64_t page, const void *buf)
{
	struct wlog *w = ctx;

	if (w->n < UNIT_ARRAY_SIZE(w->pages))
		w->pages[w->n] = page;
	w->n++;
	if (w->m) {
		unsigned char want[PAGE_BYTES];

		model_encode(w->m, page, want);
		assert_memory_equal(buf, want, PAGE_BYTES);
	}
	if (w->redirty)
		bitmap_set_range(w->bm, page * PAGE_BITS, PAGE_BITS);
	return page == w->fail_page ? w->fail_rc : 0;
}

/* ---------------------------------------------------------------- tests */

static const uint64_t sizes[] = {
	1, 63, 64, 65, PAGE_BITS - 1, PAGE_BITS, PAGE_BITS + 1, 3 * PAGE_BITS + 5,
};

static void test_new_errors(void **state)
{
	struct bitmap *bm = (struct bitmap *)1;

	(void)state;
	assert_int_equal(bitmap_new(0, &bm), -EINVAL);
	assert_null(bm);
	assert_int_equal(bitmap_new(1, NULL), -EINVAL);
	bm = (struct bitmap *)1;
	assert_int_equal(bitmap_new(UINT64_MAX, &bm), -ENOMEM);
	assert_null(bm);
	bitmap_free(NULL);
}

/* Geometry, clamping and the first and last bits, for every size. */
static void test_edges(void **state)
{
	unsigned int i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(sizes); i++) {
		uint64_t bits = sizes[i], pages = div_up(bits, PAGE_BITS), p;
		struct bitmap *bm;

		assert_int_equal(bitmap_new(bits, &bm), 0);
		assert_int_equal(bitmap_bits(bm), bits);
		assert_int_equal(bitmap_pages(bm), pages);
		assert_int_equal(bitmap_weight(bm), 0);
		assert_int_equal(bitmap_dirty_pages(bm), 0);
		assert_int_equal(bitmap_find_next_set(bm, 0), bits);
		assert_int_equal(bitmap_find_next_clear(bm, 0), 0);
		assert_int_equal(bitmap_find_next_clear(bm, bits), bits);
		assert_int_equal(bitmap_find_next_clear(bm, UINT64_MAX), bits);

		/* The last bit; ranges running past the end are clamped. */
		assert_int_equal(bitmap_set_range(bm, bits - 1, UINT64_MAX), 1);
		assert_true(bitmap_test(bm, bits - 1));
		assert_false(bitmap_test(bm, bits));
		assert_false(bitmap_test(bm, UINT64_MAX));
		assert_int_equal(bitmap_find_next_set(bm, 0), bits - 1);
		assert_int_equal(bitmap_find_next_clear(bm, bits - 1), bits);
		assert_int_equal(bitmap_dirty_pages(bm), 1);
		assert_true(bitmap_page_dirty(bm, pages - 1));
		assert_int_equal(bitmap_set_range(bm, bits, 5), 0);
		assert_int_equal(bitmap_set_range(bm, UINT64_MAX, UINT64_MAX), 0);
		assert_int_equal(bitmap_set_range(bm, 0, 0), 0);
		assert_int_equal(bitmap_count_range(bm, bits - 1, UINT64_MAX), 1);
		assert_int_equal(bitmap_count_range(bm, bits, UINT64_MAX), 0);

		assert_int_equal(bitmap_set_all(bm), bits - 1);
		assert_int_equal(bitmap_weight(bm), bits);
		assert_int_equal(bitmap_find_next_clear(bm, 0), bits);
		assert_int_equal(bitmap_count_range(bm, 0, UINT64_MAX), bits);
		assert_int_equal(bitmap_count_range(bm, 1, UINT64_MAX), bits - 1);
		assert_int_equal(bitmap_dirty_pages(bm), pages);

		/* Setting what is set changes nothing and dirties nothing. */
		for (p = 0; p < pages; p++)
			bitmap_page_mark(bm, p, false);
		assert_int_equal(bitmap_dirty_pages(bm), 0);
		assert_int_equal(bitmap_set_all(bm), 0);
		assert_int_equal(bitmap_dirty_pages(bm), 0);

		assert_int_equal(bitmap_clear_range(bm, 0, 1), 1);
		assert_int_equal(bitmap_find_next_clear(bm, 0), 0);
		assert_int_equal(bitmap_find_next_set(bm, 0), bits > 1 ? 1 : bits);
		assert_int_equal(bitmap_clear_all(bm), bits - 1);
		assert_int_equal(bitmap_weight(bm), 0);
		assert_int_equal(bitmap_clear_all(bm), 0);
		bitmap_free(bm);
	}
}

/* Word and page boundaries, one range at a time, from a table. */
static void test_ranges(void **state)
{
	static const struct {
		uint64_t first, count;
	} r[] = {
		{0, 1},		{63, 1},	{63, 2},	{64, 64},
		{60, 10},	{1, 62},	{0, 128},	{5, 200},
		{32767, 2},	{32704, 64},	{32700, 200},	{0, 32768},
		{1, 65534},	{32768, 32768},	{65535, 32770},	{98303, 10},
		{70000, 200},	{0, UINT64_MAX}, {98304, UINT64_MAX},
	};
	struct model m;
	unsigned int i;

	(void)state;
	model_new(&m, 3 * PAGE_BITS + 5);
	for (i = 0; i < UNIT_ARRAY_SIZE(r); i++) {
		uint64_t want = model_change(&m, r[i].first, r[i].count, true);

		assert_int_equal(bitmap_set_range(m.bm, r[i].first, r[i].count), want);
		assert_int_equal(bitmap_count_range(m.bm, r[i].first, r[i].count),
				 model_count(&m, r[i].first, r[i].count));
		model_check_full(&m);
		want = model_change(&m, r[i].first + 1, r[i].count / 2, false);
		assert_int_equal(bitmap_clear_range(m.bm, r[i].first + 1, r[i].count / 2), want);
		assert_int_equal(bitmap_count_range(m.bm, r[i].first, r[i].count),
				 model_count(&m, r[i].first, r[i].count));
		model_check_full(&m);
	}
	model_free(&m);
}

static void random_writeback(struct model *m, struct rng *r)
{
	uint64_t first = rng_below(r, m->pages + 1);
	uint64_t last = rng_below(r, 4) ? rng_below(r, m->pages + 1) : UINT64_MAX;
	uint64_t want[64], nwant = 0, p;
	int64_t rc, expect;
	struct wlog w;

	wlog_init(&w, m);
	if (rng_below(r, 3) == 0) {
		w.fail_page = rng_below(r, m->pages);
		w.fail_rc = -EIO;
	}
	expect = 0;
	for (p = first; p <= last && p < m->pages; p++) {
		if (!m->dirty[p])
			continue;
		want[nwant++] = p;
		if (p == w.fail_page) {
			expect = -EIO;
			break;
		}
		expect++;
	}
	rc = bitmap_writeback(m->bm, first, last, wlog_write, &w);
	assert_int_equal(rc, expect);
	assert_int_equal(w.n, nwant);
	for (p = 0; p < nwant; p++) {
		assert_int_equal(w.pages[p], want[p]);
		if (want[p] != w.fail_page)
			model_mark(m, want[p], false);
	}
}

static void random_decode(struct model *m, struct rng *r)
{
	unsigned char buf[PAGE_BYTES];
	uint64_t page = rng_below(r, m->pages), k = rng_below(r, 4), i;

	for (i = 0; i < PAGE_BYTES; i++)
		buf[i] = k == 0 ? 0 : k == 1 ? 0xff : (unsigned char)rng_next(r);
	model_decode(m, page, buf);
	bitmap_page_decode(m->bm, page, buf);
}

static void random_op(struct model *m, struct rng *r)
{
	uint64_t bits = m->bits;
	uint64_t first = rng_below(r, bits + 2), count = rng_count(r, bits);
	uint64_t k = rng_below(r, 100);

	if (k < 30) {
		assert_int_equal(bitmap_set_range(m->bm, first, count),
				 model_change(m, first, count, true));
	} else if (k < 60) {
		assert_int_equal(bitmap_clear_range(m->bm, first, count),
				 model_change(m, first, count, false));
	} else if (k < 70) {
		assert_int_equal(bitmap_test(m->bm, first), first < bits && m->bit[first]);
	} else if (k < 78) {
		assert_int_equal(bitmap_count_range(m->bm, first, count),
				 model_count(m, first, count));
	} else if (k < 86) {
		assert_int_equal(bitmap_find_next_set(m->bm, first), model_next(m, first, true));
		assert_int_equal(bitmap_find_next_clear(m->bm, first),
				 model_next(m, first, false));
	} else if (k < 90) {
		bool d = rng_below(r, 2);

		bitmap_page_mark(m->bm, first % m->pages, d);
		model_mark(m, first % m->pages, d);
	} else if (k < 95) {
		random_writeback(m, r);
	} else if (k < 98) {
		random_decode(m, r);
	} else if (k < 99) {
		assert_int_equal(bitmap_set_all(m->bm), model_change(m, 0, bits, true));
	} else {
		assert_int_equal(bitmap_clear_all(m->bm), model_change(m, 0, bits, false));
	}
	model_check_counts(m);
}

/* Thousands of random operations per size against the model. */
static void test_random_model(void **state)
{
	unsigned int i, n;

	for (i = 0; i < UNIT_ARRAY_SIZE(sizes); i++) {
		struct model m;
		struct rng r;

		rng_init(&r, state, sizes[i]);
		model_new(&m, sizes[i]);
		for (n = 0; n < 3000; n++) {
			random_op(&m, &r);
			if (n % 100 == 99)
				model_check_full(&m);
		}
		model_check_full(&m);
		model_free(&m);
	}
}

/* A page is dirty exactly when one of its bits changed. */
static void test_dirty_exact(void **state)
{
	struct bitmap *bm;
	uint64_t p;

	(void)state;
	assert_int_equal(bitmap_new(3 * PAGE_BITS, &bm), 0);
	assert_int_equal(bitmap_set_range(bm, PAGE_BITS + 5, 1), 1);
	assert_false(bitmap_page_dirty(bm, 0));
	assert_true(bitmap_page_dirty(bm, 1));
	assert_false(bitmap_page_dirty(bm, 2));
	assert_int_equal(bitmap_dirty_pages(bm), 1);

	bitmap_page_mark(bm, 1, false);
	assert_int_equal(bitmap_set_range(bm, PAGE_BITS + 5, 1), 0);
	assert_int_equal(bitmap_clear_range(bm, 0, PAGE_BITS), 0);
	assert_int_equal(bitmap_clear_range(bm, PAGE_BITS + 6, 100), 0);
	assert_int_equal(bitmap_dirty_pages(bm), 0);

	/* Page 1 already full: a range over all three dirties 0 and 2 only. */
	assert_int_equal(bitmap_set_range(bm, PAGE_BITS, PAGE_BITS), PAGE_BITS - 1);
	bitmap_page_mark(bm, 1, false);
	assert_int_equal(bitmap_set_range(bm, 0, UINT64_MAX), 2 * PAGE_BITS);
	assert_true(bitmap_page_dirty(bm, 0));
	assert_false(bitmap_page_dirty(bm, 1));
	assert_true(bitmap_page_dirty(bm, 2));
	assert_int_equal(bitmap_dirty_pages(bm), 2);

	/* Two bits straddling a page boundary dirty both pages. */
	for (p = 0; p < 3; p++)
		bitmap_page_mark(bm, p, false);
	assert_int_equal(bitmap_clear_range(bm, 2 * PAGE_BITS - 1, 2), 2);
	assert_false(bitmap_page_dirty(bm, 0));
	assert_true(bitmap_page_dirty(bm, 1));
	assert_true(bitmap_page_dirty(bm, 2));

	/* Marking is idempotent; pages past the end are ignored. */
	bitmap_page_mark(bm, 0, true);
	bitmap_page_mark(bm, 0, true);
	assert_int_equal(bitmap_dirty_pages(bm), 3);
	bitmap_page_mark(bm, 3, true);
	bitmap_page_mark(bm, UINT64_MAX, true);
	assert_false(bitmap_page_dirty(bm, 3));
	assert_int_equal(bitmap_dirty_pages(bm), 3);
	bitmap_free(bm);
}

/* Little-endian words: blocks 0 and 63 are bytes 01 00 00 00 00 00 00 80. */
static void test_encode_layout(void **state)
{
	static const unsigned char word0[8] = {0x01, 0, 0, 0, 0, 0, 0, 0x80};
	unsigned char raw[PAGE_BYTES + 1], want[PAGE_BYTES];
	unsigned char *buf = raw + 1; /* the buffer need not be aligned */
	struct bitmap *bm;

	(void)state;
	assert_int_equal(bitmap_new(2 * PAGE_BITS, &bm), 0);
	bitmap_set_range(bm, 0, 1);
	bitmap_set_range(bm, 63, 1);
	bitmap_page_encode(bm, 0, buf);
	memset(want, 0, sizeof(want));
	memcpy(want, word0, sizeof(word0));
	assert_memory_equal(buf, want, PAGE_BYTES);

	bitmap_set_range(bm, 64 + 9, 1);	       /* word 1, byte 1, bit 1 */
	bitmap_set_range(bm, PAGE_BITS + 7 * 64 + 62, 1); /* page 1, word 7, byte 7 */
	bitmap_page_encode(bm, 0, buf);
	want[9] = 0x02;
	assert_memory_equal(buf, want, PAGE_BYTES);
	bitmap_page_encode(bm, 1, buf);
	memset(want, 0, sizeof(want));
	want[7 * 8 + 7] = 0x40;
	assert_memory_equal(buf, want, PAGE_BYTES);

	/* And back: the same bytes decode to blocks 0 and 63 only. */
	memset(buf, 0, PAGE_BYTES);
	memcpy(buf, word0, sizeof(word0));
	bitmap_page_decode(bm, 0, buf);
	assert_true(bitmap_test(bm, 0));
	assert_true(bitmap_test(bm, 63));
	assert_false(bitmap_test(bm, 64 + 9));
	assert_int_equal(bitmap_count_range(bm, 0, PAGE_BITS), 2);
	assert_int_equal(bitmap_weight(bm), 3);
	bitmap_free(bm);
}

/* Bits at or beyond bitmap_bits() are written as zero and ignored on read. */
static void test_surplus(void **state)
{
	unsigned char ones[PAGE_BYTES], want[PAGE_BYTES], got[PAGE_BYTES];
	unsigned int i;

	(void)state;
	memset(ones, 0xff, sizeof(ones));
	for (i = 0; i < UNIT_ARRAY_SIZE(sizes); i++) {
		uint64_t bits = sizes[i], pages = div_up(bits, PAGE_BITS), p;
		uint64_t tail = bits - (pages - 1) * PAGE_BITS;
		struct bitmap *a, *b;

		assert_int_equal(bitmap_new(bits, &a), 0);
		assert_int_equal(bitmap_new(bits, &b), 0);
		bitmap_set_all(a);
		memset(want, 0, sizeof(want));
		memset(want, 0xff, tail / 8);
		if (tail % 8)
			want[tail / 8] = (unsigned char)((1u << (tail % 8)) - 1);
		bitmap_page_encode(a, pages - 1, got);
		assert_memory_equal(got, want, PAGE_BYTES);

		/* What drbdmeta apply-al leaves behind: whole words of ones. */
		for (p = 0; p < pages; p++)
			bitmap_page_decode(b, p, ones);
		assert_int_equal(bitmap_weight(b), bits);
		assert_int_equal(bitmap_find_next_clear(b, 0), bits);
		assert_int_equal(bitmap_count_range(b, 0, bits - 1), bits - 1);
		assert_int_equal(bitmap_set_range(b, 0, UINT64_MAX), 0);
		bitmap_page_encode(b, pages - 1, got);
		assert_memory_equal(got, want, PAGE_BYTES);
		if (pages > 1) {
			bitmap_page_encode(b, 0, got);
			assert_memory_equal(got, ones, PAGE_BYTES);
		}
		assert_int_equal(bitmap_clear_all(b), bits);
		bitmap_free(a);
		bitmap_free(b);
	}
}

/* Decode replaces one page, keeps the weight right and leaves it clean. */
static void test_decode(void **state)
{
	unsigned char buf[PAGE_BYTES];
	struct bitmap *bm;

	(void)state;
	assert_int_equal(bitmap_new(3 * PAGE_BITS, &bm), 0);
	bitmap_set_range(bm, 10, 3);
	bitmap_set_range(bm, PAGE_BITS, 5);
	bitmap_set_range(bm, 2 * PAGE_BITS + 100, 7);
	assert_int_equal(bitmap_dirty_pages(bm), 3);

	memset(buf, 0, sizeof(buf));
	buf[100] = 0xff;
	buf[4095] = 0x03;
	bitmap_page_decode(bm, 1, buf);
	assert_int_equal(bitmap_weight(bm), 3 + 10 + 7);
	assert_false(bitmap_test(bm, PAGE_BITS));
	assert_true(bitmap_test(bm, PAGE_BITS + 800));
	assert_true(bitmap_test(bm, 2 * PAGE_BITS - 7));
	assert_false(bitmap_test(bm, 2 * PAGE_BITS - 6));
	assert_true(bitmap_page_dirty(bm, 0));
	assert_false(bitmap_page_dirty(bm, 1));
	assert_true(bitmap_page_dirty(bm, 2));
	assert_int_equal(bitmap_count_range(bm, 0, PAGE_BITS), 3);
	assert_int_equal(bitmap_count_range(bm, 2 * PAGE_BITS, PAGE_BITS), 7);

	/* Pages past the end: encode gives zeros, decode does nothing. */
	memset(buf, 0xaa, sizeof(buf));
	bitmap_page_encode(bm, 3, buf);
	assert_int_equal(buf[0] | buf[2048] | buf[4095], 0);
	memset(buf, 0xff, sizeof(buf));
	bitmap_page_decode(bm, 3, buf);
	bitmap_page_decode(bm, UINT64_MAX, buf);
	assert_int_equal(bitmap_weight(bm), 20);
	assert_int_equal(bitmap_dirty_pages(bm), 2);
	bitmap_free(bm);
}

/* Encode every page of a random bitmap, decode into a fresh one. */
static void test_roundtrip(void **state)
{
	unsigned char buf[PAGE_BYTES], again[PAGE_BYTES];
	uint64_t bits = 5 * PAGE_BITS - 77, p, n;
	struct bitmap *a, *b;
	struct rng r;

	rng_init(&r, state, 0x7272);
	assert_int_equal(bitmap_new(bits, &a), 0);
	assert_int_equal(bitmap_new(bits, &b), 0);
	for (n = 0; n < 2000; n++)
		bitmap_set_range(a, rng_below(&r, bits), rng_below(&r, 300));
	for (p = 0; p < bitmap_pages(a); p++) {
		bitmap_page_encode(a, p, buf);
		bitmap_page_decode(b, p, buf);
		bitmap_page_encode(b, p, again);
		assert_memory_equal(buf, again, PAGE_BYTES);
	}
	assert_int_equal(bitmap_weight(b), bitmap_weight(a));
	assert_int_equal(bitmap_dirty_pages(b), 0);
	for (p = 0; p < bits; p++)
		assert_int_equal(bitmap_test(b, p), bitmap_test(a, p));
	bitmap_free(a);
	bitmap_free(b);
}

/* Dirty pages go out in page order; the first error stops, page stays dirty. */
static void test_writeback(void **state)
{
	struct model m;
	struct wlog w;
	uint64_t p;

	(void)state;
	model_new(&m, 5 * PAGE_BITS);
	assert_int_equal(bitmap_writeback(m.bm, 0, UINT64_MAX, NULL, NULL), -EINVAL);
	model_change(&m, 4 * PAGE_BITS + 1, 1, true);
	model_change(&m, 0, 3, true);
	model_change(&m, 2 * PAGE_BITS + 70, 2 * PAGE_BITS, true);
	bitmap_set_range(m.bm, 4 * PAGE_BITS + 1, 1);
	bitmap_set_range(m.bm, 0, 3);
	bitmap_set_range(m.bm, 2 * PAGE_BITS + 70, 2 * PAGE_BITS);
	model_check_full(&m);

	wlog_init(&w, &m);
	w.fail_page = 3;
	w.fail_rc = -EIO;
	assert_int_equal(bitmap_writeback(m.bm, 0, UINT64_MAX, wlog_write, &w), -EIO);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.pages[0], 0);
	assert_int_equal(w.pages[1], 2);
	assert_int_equal(w.pages[2], 3);
	model_mark(&m, 0, false);
	model_mark(&m, 2, false);
	model_check_full(&m);

	wlog_init(&w, &m);
	assert_int_equal(bitmap_writeback(m.bm, 0, UINT64_MAX, wlog_write, &w), 2);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.pages[0], 3);
	assert_int_equal(w.pages[1], 4);
	assert_int_equal(bitmap_dirty_pages(m.bm), 0);
	assert_int_equal(bitmap_writeback(m.bm, 0, UINT64_MAX, wlog_write, &w), 0);

	/* Only the pages asked for; an empty or out-of-range request is no-op. */
	for (p = 0; p < 5; p++)
		bitmap_page_mark(m.bm, p, true);
	wlog_init(&w, NULL);
	assert_int_equal(bitmap_writeback(m.bm, 1, 2, wlog_write, &w), 2);
	assert_int_equal(w.pages[0], 1);
	assert_int_equal(w.pages[1], 2);
	assert_int_equal(bitmap_writeback(m.bm, 3, 2, wlog_write, &w), 0);
	assert_int_equal(bitmap_writeback(m.bm, 5, UINT64_MAX, wlog_write, &w), 0);
	assert_int_equal(bitmap_writeback(m.bm, UINT64_MAX, UINT64_MAX, wlog_write, &w), 0);
	assert_int_equal(w.n, 2);
	assert_int_equal(bitmap_dirty_pages(m.bm), 3);

	/* A positive return from the callback is not success. */
	wlog_init(&w, NULL);
	w.fail_page = 0;
	w.fail_rc = 1;
	assert_int_equal(bitmap_writeback(m.bm, 0, 0, wlog_write, &w), -EIO);
	assert_true(bitmap_page_dirty(m.bm, 0));

	/* A page changed while it is being written stays dirty. */
	wlog_init(&w, NULL);
	w.bm = m.bm;
	w.redirty = true;
	assert_int_equal(bitmap_writeback(m.bm, 0, UINT64_MAX, wlog_write, &w), 3);
	assert_int_equal(w.n, 3);
	assert_true(bitmap_page_dirty(m.bm, 0));
	assert_false(bitmap_page_dirty(m.bm, 3)); /* page 3 was full: no change */
	assert_true(bitmap_page_dirty(m.bm, 4));
	assert_int_equal(bitmap_dirty_pages(m.bm), 2);
	model_free(&m);
}

static void test_bits_to_pages(void **state)
{
	static const struct {
		uint64_t first, count, first_page, last_page;
	} t[] = {
		{0, 1, 0, 0},
		{32767, 1, 0, 0},
		{32767, 2, 0, 1},
		{32768, 32768, 1, 1},
		{32768, 32769, 1, 2},
		{0, TIB_BITS, 0, 8191},
		{1024 * 255, 1024, 7, 7}, /* AL extent 255 */
		{UINT64_MAX, 1, UINT64_MAX / 32768, UINT64_MAX / 32768},
		{1, UINT64_MAX, 0, UINT64_MAX / 32768},
		{40000, UINT64_MAX, 1, UINT64_MAX / 32768},
		{UINT64_MAX - 5, 100, UINT64_MAX / 32768, UINT64_MAX / 32768},
		/* No bits: an empty range, first_page > last_page. */
		{0, 0, 1, 0},
		{5 * 32768 + 3, 0, 6, 5},
	};
	unsigned int i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		uint64_t fp = 42, lp = 42;

		bitmap_bits_to_pages(t[i].first, t[i].count, &fp, &lp);
		assert_int_equal(fp, t[i].first_page);
		assert_int_equal(lp, t[i].last_page);
	}
}

/*
 * 1 TiB: 32 MiB of words plus the page bitmap, and 100k operations that
 * never scan it, checked against a model of 4096 bits spread over it.
 */
static void test_large(void **state)
{
	enum { SLOTS = 4096, OPS = 100000 };
	uint64_t bits = TIB_BITS, pages = bits / PAGE_BITS, stride = bits / SLOTS;
	uint64_t weight = 0, ndirty = 0, n, b;
	size_t before = 0, after = 0, promised;
	bool measured;
	bool *slot = calloc(SLOTS, sizeof(bool));
	bool *dirty = calloc(pages, sizeof(bool));
	uint64_t *pos = calloc(SLOTS, sizeof(uint64_t));
	struct bitmap *bm;
	struct wlog w;
	struct rng r;
	double t0, t;

	assert_non_null(slot);
	assert_non_null(dirty);
	assert_non_null(pos);
	rng_init(&r, state, 0x1718);
	for (n = 0; n < SLOTS; n++)
		pos[n] = n * stride + rng_below(&r, stride);

	promised = (size_t)(bits / 64 * 8 + div_up(pages, 64) * 8);
	assert_int_equal(promised, 32 * 1024 * 1024 + 1024);
	measured = heap_in_use(&before);
	assert_int_equal(bitmap_new(bits, &bm), 0);
	if (heap_in_use(&after)) {
		/* The struct and the allocator's own rounding: under 8 KiB. */
		assert_in_range(after - before, promised, promised + 8192);
	}
	assert_int_equal(bitmap_pages(bm), 8192);

	t0 = now();
	for (n = 0; n < OPS; n++) {
		uint64_t s = rng_below(&r, SLOTS), k = rng_below(&r, 3), p = pos[s] / PAGE_BITS;

		if (k == 0) {
			assert_int_equal(bitmap_set_range(bm, pos[s], 1), !slot[s]);
			weight += !slot[s];
		} else if (k == 1) {
			assert_int_equal(bitmap_clear_range(bm, pos[s], 1), slot[s]);
			weight -= slot[s];
		} else {
			assert_int_equal(bitmap_test(bm, pos[s]), slot[s]);
			assert_int_equal(bitmap_count_range(bm, pos[s], 1), slot[s]);
			continue;
		}
		if (slot[s] != (k == 0) && !dirty[p]) {
			dirty[p] = true;
			ndirty++;
		}
		slot[s] = k == 0;
		assert_int_equal(bitmap_weight(bm), weight);
		assert_int_equal(bitmap_dirty_pages(bm), ndirty);
		if (n % 1024 == 0)
			assert_true(now() - t0 < 2.0); /* fail early if something scans */
	}
	t = now() - t0;
	print_message("# 1 TiB bitmap: %d operations in %.3f s\n", OPS, t);
	assert_true(t < 2.0);

	/* Write-back visits the page bitmap, not the data. */
	wlog_init(&w, NULL);
	t0 = now();
	assert_int_equal(bitmap_writeback(bm, 0, UINT64_MAX, wlog_write, &w), ndirty);
	assert_true(now() - t0 < 1.0);
	assert_int_equal(w.n, ndirty);
	assert_int_equal(bitmap_dirty_pages(bm), 0);

	/* One walk over the whole bitmap finds exactly the set slots. */
	n = 0;
	for (b = bitmap_find_next_set(bm, 0); b < bits; b = bitmap_find_next_set(bm, b + 1)) {
		while (n < SLOTS && !slot[n])
			n++;
		assert_true(n < SLOTS);
		assert_int_equal(b, pos[n]);
		n++;
	}
	assert_int_equal(bitmap_count_range(bm, 1, bits - 1) + bitmap_test(bm, 0), weight);

	assert_int_equal(bitmap_set_all(bm), bits - weight);
	assert_int_equal(bitmap_dirty_pages(bm), pages);
	assert_int_equal(bitmap_find_next_clear(bm, 0), bits);
	assert_int_equal(bitmap_clear_all(bm), bits);
	assert_int_equal(bitmap_weight(bm), 0);
	bitmap_free(bm);
	free(slot);
	free(dirty);
	free(pos);
	if (!measured) {
		print_message("SKIP: the heap cannot be measured here (a sanitizer's allocator): "
			      "the bitmap's allocation size is unchecked; the rest passed\n");
		skip();
	}
}

int main(void)
{
	const char *env = getenv("TANDEM_SEED");
	uint64_t seed = env && *env ? strtoull(env, NULL, 0)
				    : (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_errors),
		cmocka_unit_test(test_edges),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test_prestate(test_random_model, &seed),
		cmocka_unit_test(test_dirty_exact),
		cmocka_unit_test(test_encode_layout),
		cmocka_unit_test(test_surplus),
		cmocka_unit_test(test_decode),
		cmocka_unit_test_prestate(test_roundtrip, &seed),
		cmocka_unit_test(test_writeback),
		cmocka_unit_test(test_bits_to_pages),
		cmocka_unit_test_prestate(test_large, &seed),
	};

	print_message("# test-bitmap: seed %" PRIu64 " (repeat with TANDEM_SEED=%" PRIu64 ")\n",
		      seed, seed);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
