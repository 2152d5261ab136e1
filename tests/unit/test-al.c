/*
 * test-al: the activity log (doc/ondisk-format.pod, ACTIVITY LOG).
 *
 * A mock owner records every write_block/flush_extent call and keeps the
 * ring in memory. Fixed cases check the ring formula and block bytes (crc
 * from a bitwise reference implementation, literals computed
 * independently), batching, LRU eviction, flush-before-reuse and error
 * handling. Randomized cases (seed printed; AL_TEST_SEED=n repeats a run)
 * run workloads against a list-based reference model, crash the ring after
 * every transaction (whole, torn and garbage last block) and replay it,
 * and feed garbage rings to al_replay, comparing with a plain
 * transcription of drbdmeta's algorithm.
 */
#include "unit.h"

#include <inttypes.h>
#include <time.h>

#include "al.h"

#define BLK       AL_BLOCK_BYTES
#define SECT(e)   ((uint64_t)(e) << AL_EXTENT_SHIFT_SECT)
#define EXT_SECT  (1u << AL_EXTENT_SHIFT_SECT)
#define NO_SLOT   0xffffu

static const char msg_no_log[] = "No usable activity log found. Do you need to create-md?";
static const char msg_no_update[] = "No valid AL update transaction found.";

/* ---------------------------------------------------------------- random */

struct rng {
	uint64_t s;
};

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint32_t rng_below(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)(rng_next(r) % n) : 0;
}

static void rng_fill(struct rng *r, void *buf, size_t len)
{
	unsigned char *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (unsigned char)rng_next(r);
}

static struct rng rng_seeded(const char *test)
{
	static unsigned int calls;
	const char *env = getenv("AL_TEST_SEED");
	uint64_t seed;

	if (env && *env)
		seed = strtoull(env, NULL, 0);
	else
		seed = ((uint64_t)time(NULL) << 20) ^ ((uint64_t)getpid() << 8) ^ calls++;
	print_message("%s: seed %" PRIu64 " (repeat with AL_TEST_SEED=%" PRIu64 ")\n", test, seed,
		      seed);
	return (struct rng){seed};
}

/* ---------------------------------------------------------------- bytes */

static uint16_t get16(const unsigned char *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 8);
	p[1] = (unsigned char)v;
}

static void put32(unsigned char *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v & 0xffff);
}

/* Independent of crc32c.c: a plain byte table; seed 0, no final inversion. */
static uint32_t ref_crc32c(const unsigned char *p, size_t n)
{
	static uint32_t table[256];
	uint32_t crc = 0, c, i;
	int k;

	if (!table[1]) {
		for (i = 0; i < 256; i++) {
			for (c = i, k = 0; k < 8; k++)
				c = (c >> 1) ^ ((c & 1) ? 0x82f63b78u : 0);
			table[i] = c;
		}
	}
	while (n--)
		crc = (crc >> 8) ^ table[(crc ^ *p++) & 0xff];
	return crc;
}

static void seal(unsigned char *b)
{
	put32(b + 8, 0);
	put32(b + 8, ref_crc32c(b, BLK));
}

/* A hand-made transaction; tx_new() fills the "unused" values. */
struct tx {
	uint32_t magic, tr;
	uint16_t type, n_updates, ctx_size, ctx_start;
	uint16_t slot[AL_UPDATES_PER_TR];
	uint32_t ext[AL_UPDATES_PER_TR];
	uint32_t ctx[AL_CONTEXT_PER_TR];
};

static void tx_new(struct tx *t, uint32_t tr, uint16_t ctx_size, uint16_t ctx_start)
{
	unsigned int i;

	memset(t, 0, sizeof(*t));
	t->magic = AL_MAGIC;
	t->tr = tr;
	t->ctx_size = ctx_size;
	t->ctx_start = ctx_start;
	for (i = 0; i < AL_UPDATES_PER_TR; i++) {
		t->slot[i] = NO_SLOT;
		t->ext[i] = AL_FREE;
	}
	for (i = 0; i < AL_CONTEXT_PER_TR; i++)
		t->ctx[i] = AL_FREE;
}

static void tx_update(struct tx *t, uint16_t slot, uint32_t ext)
{
	t->slot[t->n_updates] = slot;
	t->ext[t->n_updates++] = ext;
}

static void tx_write(const struct tx *t, unsigned char *b)
{
	unsigned int i;

	memset(b, 0, BLK);
	put32(b, t->magic);
	put32(b + 4, t->tr);
	put16(b + 12, t->type);
	put16(b + 14, t->n_updates);
	put16(b + 16, t->ctx_size);
	put16(b + 18, t->ctx_start);
	for (i = 0; i < AL_UPDATES_PER_TR; i++) {
		put16(b + 36 + 2 * i, t->slot[i]);
		put32(b + 164 + 4 * i, t->ext[i]);
	}
	for (i = 0; i < AL_CONTEXT_PER_TR; i++)
		put32(b + 420 + 4 * i, t->ctx[i]);
	seal(b);
}

/* ---------------------------------------------------------------- mock owner */

enum call_kind { CALL_WRITE, CALL_FLUSH };

struct call {
	enum call_kind kind;
	uint32_t arg; /* tr_number written, or extent flushed */
	uint32_t block;
};

struct mock {
	struct al *al;
	uint32_t stripes, size, mx;
	unsigned char *ring; /* on-disk order, starts all "initialised" */
	struct call *calls;
	size_t n_calls, cap_calls;
	unsigned char *written; /* every block written, in order */
	uint32_t *written_at;
	size_t n_written, cap_written;
	int fail_after; /* let this many writes through, then */
	int fail_write; /* fail the next n calls */
	int fail_flush;
	int write_rc;   /* what a failing write returns */
	void (*hook)(struct mock *m, const unsigned char *buf);
	void *hook_arg;
};

static void mock_record(struct mock *m, enum call_kind kind, uint32_t arg, uint32_t block)
{
	if (m->n_calls == m->cap_calls) {
		m->cap_calls = m->cap_calls ? 2 * m->cap_calls : 256;
		m->calls = realloc(m->calls, m->cap_calls * sizeof(*m->calls));
		assert_non_null(m->calls);
	}
	m->calls[m->n_calls++] = (struct call){kind, arg, block};
}

static int mock_write(void *ctx, uint32_t block, const void *buf)
{
	struct mock *m = ctx;

	assert_true(block < m->mx);
	if (m->fail_write > 0 && m->fail_after > 0) {
		m->fail_after--;
	} else if (m->fail_write > 0) {
		m->fail_write--;
		memset(m->ring + (size_t)block * BLK, 0x5a, BLK / 2); /* a torn attempt */
		return m->write_rc;
	}
	if (m->hook)
		m->hook(m, buf);
	mock_record(m, CALL_WRITE, get32((const unsigned char *)buf + 4), block);
	memcpy(m->ring + (size_t)block * BLK, buf, BLK);
	if (m->n_written == m->cap_written) {
		m->cap_written = m->cap_written ? 2 * m->cap_written : 64;
		m->written = realloc(m->written, m->cap_written * BLK);
		m->written_at = realloc(m->written_at, m->cap_written * sizeof(*m->written_at));
		assert_non_null(m->written);
		assert_non_null(m->written_at);
	}
	memcpy(m->written + m->n_written * BLK, buf, BLK);
	m->written_at[m->n_written++] = block;
	return 0;
}

static int mock_flush(void *ctx, uint32_t extent)
{
	struct mock *m = ctx;

	if (m->fail_flush > 0) {
		m->fail_flush--;
		return -EIO;
	}
	mock_record(m, CALL_FLUSH, extent, 0);
	return 0;
}

static const struct al_ops mock_ops = {.write_block = mock_write, .flush_extent = mock_flush};

static void mock_free(void *p)
{
	struct mock *m = p;

	al_free(m->al);
	free(m->ring);
	free(m->calls);
	free(m->written);
	free(m->written_at);
	free(m);
}

static struct mock *mock_new(uint32_t nr, uint32_t stripes, uint32_t stripe_size)
{
	struct mock *m = calloc(1, sizeof(*m));
	uint32_t i;

	assert_non_null(m);
	unit_defer(mock_free, m);
	assert_int_equal(al_new(nr, stripes, stripe_size, &mock_ops, m, &m->al), 0);
	m->mx = al_ring_blocks(m->al);
	m->stripes = stripes ? stripes : 1;
	m->size = m->mx / m->stripes;
	m->write_rc = -EIO;
	m->ring = malloc((size_t)m->mx * BLK);
	assert_non_null(m->ring);
	for (i = 0; i < m->mx; i++)
		al_block_init(m->ring + (size_t)i * BLK);
	return m;
}

static const unsigned char *mock_last(const struct mock *m)
{
	assert_true(m->n_written > 0);
	return m->written + (m->n_written - 1) * BLK;
}

/* Begin a write of one extent; returns al_begin_io's result. */
static int begin1(struct mock *m, uint32_t extent)
{
	return al_begin_io(m->al, SECT(extent) + 8, 8);
}

static void complete1(struct mock *m, uint32_t extent)
{
	al_complete_io(m->al, SECT(extent) + 8, 8);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The hot set, sorted, malloc'd (n in *n). */
static uint32_t *active_sorted(const struct al *al, uint32_t *n)
{
	uint32_t nr = al_nr_extents(al);
	uint32_t *a = malloc(nr * sizeof(*a));

	assert_non_null(a);
	*n = al_active(al, a, nr);
	qsort(a, *n, sizeof(*a), cmp_u32);
	return a;
}

/* ---------------------------------------------------------------- ring, blocks */

static void test_ring_block(void **state)
{
	uint32_t geo[][2] = {{1, 8}, {2, 8}, {4, 2}, {3, 5}, {8, 1}, {1, 72}};
	static const uint32_t two[][2] = {
		{0, 0}, {1, 8}, {2, 1}, {3, 9}, {15, 15}, {16, 0},
		{0xfffffffeu, 7}, {0xffffffffu, 15}, {0xfffffff5u, 10},
	};
	unsigned char seen[72];
	unsigned int g, i;
	uint32_t t, mx;

	(void)state;
	for (t = 0; t < 40; t++) {
		assert_int_equal(al_ring_block(t, 1, 8), t % 8);
		assert_int_equal(al_ring_block(t, 0, 0), t % 8); /* 0 x 0 = 1 x 8 */
	}
	assert_int_equal(al_ring_block(0xffffffffu, 1, 8), 7);
	for (i = 0; i < UNIT_ARRAY_SIZE(two); i++)
		assert_int_equal(al_ring_block(two[i][0], 2, 8), two[i][1]);
	/* Every geometry: the formula, and positions 0..mx-1 cover every block. */
	for (g = 0; g < UNIT_ARRAY_SIZE(geo); g++) {
		mx = geo[g][0] * geo[g][1];
		memset(seen, 0, sizeof(seen));
		for (t = 0; t < mx; t++) {
			uint32_t b = al_ring_block(t, geo[g][0], geo[g][1]);

			assert_int_equal(b, (t % geo[g][0]) * geo[g][1] + t / geo[g][0]);
			assert_true(b < mx);
			assert_false(seen[b]);
			seen[b] = 1;
			assert_int_equal(al_ring_block(t + 5 * mx, geo[g][0], geo[g][1]), b);
		}
	}
}

static void test_block_init(void **state)
{
	static const unsigned char head[16] = {0x69, 0xcb, 0x65, 0xa2, 0, 0, 0, 0,
					       0x70, 0x9c, 0xc6, 0x51, 0xff, 0xff, 0, 0};
	unsigned char b[BLK], zero[BLK - 16];

	(void)state;
	memset(b, 0xaa, sizeof(b));
	memset(zero, 0, sizeof(zero));
	al_block_init(b);
	assert_memory_equal(b, head, sizeof(head));
	assert_memory_equal(b + 16, zero, sizeof(zero)); /* update slots 0, not 0xffff */
	put32(b + 8, 0);
	assert_int_equal(ref_crc32c(b, BLK), 0x709cc651u);
}

/* Two transactions checked field by field and against literal bytes. */
static void test_transaction_bytes(void **state)
{
	static const unsigned char head0[24] = {0x69, 0xcb, 0x65, 0xa2, 0, 0, 0, 0,
						0x58, 0x90, 0x78, 0x1a, 0, 0, 0, 2,
						0, 100, 0, 0, 0, 0, 0, 0};
	static const unsigned char head1[20] = {0x69, 0xcb, 0x65, 0xa2, 0, 0, 0, 1,
						0x4c, 0x6b, 0xf9, 0x34, 0, 0, 0, 1,
						0, 100, 0, 0};
	static const unsigned char slots1[6] = {0, 2, 0xff, 0xff, 0xff, 0xff};
	static const unsigned char ext1[8] = {0, 0, 0, 9, 0xff, 0xff, 0xff, 0xff};
	static const unsigned char ctx1[12] = {0, 0, 0, 5, 0, 0, 0, 7, 0xff, 0xff, 0xff, 0xff};
	struct mock *m = mock_new(100, 0, 0);
	unsigned char want[BLK];
	struct tx t;

	(void)state;
	assert_int_equal(al_begin_io(m->al, SECT(5), 8), 1);
	assert_int_equal(al_begin_io(m->al, SECT(7) + 100, 16), 1);
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(m->n_written, 1);
	assert_int_equal(m->written_at[0], 0);
	tx_new(&t, 0, 100, 0);
	tx_update(&t, 0, 5);
	tx_update(&t, 1, 7);
	tx_write(&t, want);
	assert_memory_equal(m->written, want, BLK);
	assert_memory_equal(m->written, head0, sizeof(head0));

	/* 919 >= 100: the context starts at slot 0 again, showing 5 and 7. */
	al_complete_io(m->al, SECT(5), 8);
	al_complete_io(m->al, SECT(7) + 100, 16);
	assert_int_equal(begin1(m, 9), 1);
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(m->written_at[1], 1);
	tx_new(&t, 1, 100, 0);
	tx_update(&t, 2, 9);
	t.ctx[0] = 5;
	t.ctx[1] = 7;
	tx_write(&t, want);
	assert_memory_equal(mock_last(m), want, BLK);
	assert_memory_equal(mock_last(m), head1, sizeof(head1));
	assert_memory_equal(mock_last(m) + 36, slots1, sizeof(slots1));
	assert_memory_equal(mock_last(m) + 164, ext1, sizeof(ext1));
	assert_memory_equal(mock_last(m) + 420, ctx1, sizeof(ctx1));
}

/* context_start_slot_nr steps by 919 and wraps to 0 at al-extents. */
static void test_context_cycle(void **state)
{
	static const uint32_t starts[] = {0, 919, 1838, 0, 919};
	struct mock *m = mock_new(2000, 0, 0);
	const unsigned char *b;
	unsigned int i, k;

	(void)state;
	assert_int_equal(al_nr_extents(m->al), 2000);
	for (i = 0; i < 2000; i++) {
		assert_int_equal(begin1(m, 10000 + i), 1);
		complete1(m, 10000 + i);
	}
	assert_int_equal(al_commit(m->al), 0); /* 32 transactions */
	assert_int_equal(m->n_written, 32);
	for (i = 0; i < 32; i++) {
		b = m->written + (size_t)i * BLK;
		assert_int_equal(get16(b + 16), 2000);
		assert_int_equal(get16(b + 18), starts[i % 3]);
		assert_int_equal(get16(b + 14), i < 31 ? 64 : 2000 - 31 * 64);
	}
	for (k = 0; k < UNIT_ARRAY_SIZE(starts); k++) {
		assert_int_equal(begin1(m, 50000 + k), 1); /* evicts slot k */
		complete1(m, 50000 + k);
		assert_int_equal(al_commit(m->al), 0);
		b = mock_last(m);
		assert_int_equal(get16(b + 18), starts[(32 + k) % 3]);
		for (i = 0; i < AL_CONTEXT_PER_TR; i++) {
			uint32_t s = get16(b + 18) + i, want;

			if (s >= 2000)
				want = AL_FREE;
			else if (s < k)
				want = 50000 + s;
			else
				want = 10000 + s;
			assert_int_equal(get32(b + 420 + 4 * i), want);
		}
	}
}

static void test_new_clamp_and_geometry(void **state)
{
	static const struct al_ops no_write = {.flush_extent = mock_flush};
	static const uint32_t cases[][4] = {
		/* asked, stripes, size, got */
		{1, 0, 0, 67},           {66, 1, 8, 67},          {67, 1, 8, 67},
		{1237, 1, 8, 1237},      {100000, 0, 0, 6433},    {100000, 2, 8, 13785},
		{100000, 1, 72, 65249},  {100000, 1, 73, 65534},  {65535, 4, 1024, 65534},
	};
	struct al *al = NULL;
	unsigned int i;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(cases); i++) {
		assert_int_equal(al_new(cases[i][0], cases[i][1], cases[i][2], &mock_ops, NULL, &al),
				 0);
		assert_int_equal(al_nr_extents(al), cases[i][3]);
		assert_int_equal(al_ring_blocks(al), cases[i][1] ? cases[i][1] * cases[i][2] : 8);
		al_free(al);
		al = NULL;
	}
	assert_int_equal(al_new(67, 0, 8, &mock_ops, NULL, &al), -EINVAL);
	assert_int_equal(al_new(67, 1, 0, &mock_ops, NULL, &al), -EINVAL);
	assert_int_equal(al_new(67, 1, 4, &mock_ops, NULL, &al), -EINVAL);
	assert_int_equal(al_new(67, 4096, 2048, &mock_ops, NULL, &al), -EINVAL);
	assert_int_equal(al_new(67, 0, 0, NULL, NULL, &al), -EINVAL);
	assert_int_equal(al_new(67, 0, 0, &no_write, NULL, &al), -EINVAL);
	assert_null(al);
	al_free(NULL);
}

/* ---------------------------------------------------------------- write path */

static void test_batching(void **state)
{
	static const uint32_t sizes[] = {1, 2, 63, 64, 65, 100, 128, 129};
	unsigned int k, i;

	(void)state;
	for (k = 0; k < UNIT_ARRAY_SIZE(sizes); k++) {
		struct mock *m = mock_new(1000, 0, 0);
		uint32_t n = sizes[k], want = (n + 63) / 64;
		struct al_stats st;

		for (i = 0; i < n; i++)
			assert_int_equal(begin1(m, 3 * i), 1);
		assert_int_equal(al_pending(m->al), n);
		assert_int_equal(m->n_written, 0);
		assert_int_equal(al_commit(m->al), 0);
		assert_int_equal(al_pending(m->al), 0);
		assert_int_equal(m->n_written, want);
		for (i = 0; i < want; i++) {
			const unsigned char *b = m->written + (size_t)i * BLK;

			assert_int_equal(get32(b + 4), i);
			assert_int_equal(get16(b + 14), i + 1 < want ? 64 : n - 64 * i);
		}
		for (i = 0; i < n; i++)
			assert_true(al_is_hot(m->al, 3 * i));
		al_get_stats(m->al, &st);
		assert_int_equal(st.transactions, want);
		assert_int_equal(st.misses, n);
		assert_int_equal(al_commit(m->al), 0); /* nothing pending: no I/O */
		assert_int_equal(m->n_written, want);
		unit_release(m);
	}
}

/*
 * Group commit: a prepared transaction carries the changes pending at
 * prepare time; changes added while it is written go into the next one;
 * a failed transaction leaves its changes pending; one open at a time.
 */
static void test_group_commit(void **state)
{
	struct mock *m = mock_new(67, 0, 0);
	unsigned char buf[BLK], buf2[BLK];
	struct al_tx tx, tx2;
	uint32_t i;

	(void)state;
	assert_int_equal(al_commit_prepare(m->al, &tx, buf), 0);
	assert_int_equal(tx.n, 0); /* nothing pending */
	assert_int_equal(begin1(m, 1), 1);
	assert_int_equal(begin1(m, 2), 1);
	assert_false(al_range_hot(m->al, SECT(1), 8));
	assert_int_equal(al_commit_prepare(m->al, &tx, buf), 0);
	assert_int_equal(tx.n, 2);
	assert_int_equal(tx.tr_number, 0);
	assert_int_equal(tx.n_evicted, 0);
	assert_int_equal(get32(buf + 4), 0);
	assert_int_equal(get16(buf + 14), 2);
	/* another writer arrives while the block is being written */
	assert_int_equal(begin1(m, 3), 1);
	assert_int_equal(al_commit_prepare(m->al, &tx2, buf2), -EBUSY);
	al_commit_finish(m->al, &tx, 0);
	assert_true(al_range_hot(m->al, SECT(1), 8));
	assert_true(al_range_hot(m->al, SECT(1), 2 * 8192)); /* extents 1 and 2 */
	assert_false(al_range_hot(m->al, SECT(3), 8));
	assert_int_equal(al_pending(m->al), 1);
	/* the next transaction fails: extent 3 stays pending */
	assert_int_equal(al_commit_prepare(m->al, &tx, buf), 0);
	assert_int_equal(tx.n, 1);
	assert_int_equal(tx.tr_number, 1);
	al_commit_finish(m->al, &tx, -EIO);
	assert_false(al_range_hot(m->al, SECT(3), 8));
	assert_int_equal(al_pending(m->al), 1);
	assert_int_equal(al_commit_prepare(m->al, &tx, buf), 0);
	assert_int_equal(tx.tr_number, 1); /* the number is reused */
	al_commit_finish(m->al, &tx, 0);
	assert_true(al_range_hot(m->al, SECT(3), 8));
	assert_false(al_range_hot(m->al, ~0ULL, 8)); /* out of range */

	/* Fill all 67 slots, idle them, then bring in one more: the evicted
	 * extent is named so that its bitmap pages can be written first. */
	complete1(m, 1);
	complete1(m, 2);
	complete1(m, 3);
	for (i = 10; i < 74; i++) {
		assert_int_equal(begin1(m, i), 1);
		complete1(m, i);
	}
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(begin1(m, 100), 1);
	assert_int_equal(al_commit_prepare(m->al, &tx, buf), 0);
	assert_int_equal(tx.n, 1);
	assert_int_equal(tx.n_evicted, 1);
	assert_int_equal(tx.evicted[0], 1); /* least recently used */
	al_commit_finish(m->al, &tx, 0);
	assert_false(al_is_hot(m->al, 1));
	assert_true(al_is_hot(m->al, 100));
}

/* Hot extents cost nothing; pending ones are referenced but not hot. */
static void test_hot_and_pending(void **state)
{
	struct mock *m = mock_new(67, 0, 0);
	struct al_stats st;
	uint32_t out[4];

	(void)state;
	/* One write spanning extents 3 and 4. */
	assert_int_equal(al_begin_io(m->al, SECT(4) - 8, 16), 2);
	assert_false(al_is_hot(m->al, 3));
	assert_int_equal(al_active(m->al, out, 4), 0);
	assert_int_equal(begin1(m, 4), 0); /* pending counts as hot for the reference */
	assert_int_equal(al_pending(m->al), 2);
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(get16(mock_last(m) + 14), 2);
	assert_true(al_is_hot(m->al, 3));
	assert_true(al_is_hot(m->al, 4));
	assert_false(al_is_hot(m->al, 5));
	assert_false(al_is_hot(m->al, AL_FREE));
	assert_int_equal(al_active(m->al, out, 4), 2);
	assert_int_equal(al_active(m->al, out, 1), 1);
	assert_int_equal(begin1(m, 3), 0);
	assert_int_equal(al_pending(m->al), 0);
	assert_int_equal(m->n_written, 1);
	al_get_stats(m->al, &st);
	assert_int_equal(st.hits, 2);
	assert_int_equal(st.misses, 2);
	assert_int_equal(st.evictions, 0);
	assert_int_equal(st.transactions, 1);

	/* A write given up before the commit: its slot is idle once committed. */
	assert_int_equal(begin1(m, 40), 1);
	complete1(m, 40);
	complete1(m, 40); /* unbalanced: ignored */
	assert_int_equal(al_commit(m->al), 0);
	assert_true(al_is_hot(m->al, 40));
	/* A zero-length range touches nothing. */
	assert_int_equal(al_begin_io(m->al, SECT(50), 0), 0);
	al_complete_io(m->al, SECT(50), 0);
	assert_int_equal(al_pending(m->al), 0);
}

/* Free slots go first (lowest first), then the least recently used. */
static void test_lru_eviction(void **state)
{
	struct mock *m = mock_new(67, 0, 0);
	struct al_stats st;
	uint32_t i;
	const unsigned char *b;

	(void)state;
	for (i = 0; i < 10; i++) {
		assert_int_equal(begin1(m, i), 1);
		assert_int_equal(al_commit(m->al), 0);
		complete1(m, i);
	}
	for (i = 10; i < 67; i++)
		assert_int_equal(begin1(m, i), 1);
	assert_int_equal(al_commit(m->al), 0);
	al_get_stats(m->al, &st);
	assert_int_equal(st.evictions, 0);
	b = mock_last(m);
	assert_int_equal(get16(b + 14), 57);
	assert_int_equal(get16(b + 36), 10);
	assert_int_equal(get32(b + 164), 10);
	/* Idle order: 0..9 (by completion), then 10, 3, 50 completed last. */
	for (i = 11; i < 67; i++)
		if (i != 20 && i != 50)
			complete1(m, i);
	complete1(m, 10);
	complete1(m, 50);
	/* Touching 0 and 1 again makes them most recently used. */
	assert_int_equal(begin1(m, 0), 0);
	assert_int_equal(begin1(m, 1), 0);
	complete1(m, 1);
	complete1(m, 0);
	m->n_calls = 0;
	assert_int_equal(begin1(m, 100), 1);
	assert_int_equal(begin1(m, 101), 1);
	assert_int_equal(begin1(m, 102), 1);
	assert_false(al_is_hot(m->al, 2)); /* evicted at once, in LRU order */
	assert_false(al_is_hot(m->al, 3));
	assert_false(al_is_hot(m->al, 4));
	assert_true(al_is_hot(m->al, 5));
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(m->n_calls, 4);
	assert_int_equal(m->calls[0].kind, CALL_FLUSH);
	assert_int_equal(m->calls[0].arg, 2);
	assert_int_equal(m->calls[1].arg, 3);
	assert_int_equal(m->calls[2].arg, 4);
	assert_int_equal(m->calls[3].kind, CALL_WRITE);
	b = mock_last(m);
	assert_int_equal(get16(b + 36), 2);
	assert_int_equal(get32(b + 164), 100);
	assert_int_equal(get16(b + 38), 3);
	assert_int_equal(get16(b + 40), 4);
	assert_int_equal(get32(b + 172), 102);
	al_get_stats(m->al, &st);
	assert_int_equal(st.evictions, 3);
	assert_true(al_is_hot(m->al, 20));
	/* In LRU order, 20 (busy) never; flushes right before the reusing block. */
	for (i = 0; i < 3; i++)
		complete1(m, 100 + i);
	m->n_calls = 0;
	for (i = 0; i < 66; i++)
		assert_int_equal(begin1(m, 1000 + i), 1);
	assert_true(al_is_hot(m->al, 20));
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(m->n_calls, 68);
	for (i = 0; i < 68; i++)
		assert_int_equal(m->calls[i].kind, i == 64 || i == 67 ? CALL_WRITE : CALL_FLUSH);
	assert_int_equal(m->calls[0].arg, 5);
	assert_int_equal(m->calls[58].arg, 66);
	assert_int_equal(m->calls[59].arg, 10);
	assert_int_equal(m->calls[60].arg, 50);
	assert_int_equal(m->calls[61].arg, 1);
	assert_int_equal(m->calls[62].arg, 0);
	assert_int_equal(m->calls[63].arg, 100);
	assert_int_equal(m->calls[65].arg, 101);
	assert_int_equal(m->calls[66].arg, 102);
	for (i = 0; i < 64; i++)
		assert_int_not_equal(m->calls[i].arg, 20);
	assert_true(al_is_hot(m->al, 20));
	assert_true(al_is_hot(m->al, 1065));
}

/* Not enough idle slots: -EAGAIN and nothing changed. */
static void test_eagain(void **state)
{
	struct mock *m = mock_new(67, 0, 0);
	struct al_stats before, after;
	uint32_t i;

	(void)state;
	for (i = 0; i < 67; i++)
		assert_int_equal(begin1(m, i), 1);
	assert_int_equal(al_commit(m->al), 0);
	al_get_stats(m->al, &before);
	assert_int_equal(begin1(m, 500), -EAGAIN);
	/* 66 is idle, but a write to 66..67 needs it as well as a slot for 67. */
	complete1(m, 66);
	assert_int_equal(al_begin_io(m->al, SECT(66) + 8, EXT_SECT), -EAGAIN);
	al_get_stats(m->al, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_int_equal(al_pending(m->al), 0);
	assert_true(al_is_hot(m->al, 66));
	/* With 5 idle too, 67 takes 5's slot although 66 is older. */
	complete1(m, 5);
	assert_int_equal(al_begin_io(m->al, SECT(66) + 8, EXT_SECT), 1);
	assert_true(al_is_hot(m->al, 66));
	assert_false(al_is_hot(m->al, 5));
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(get16(mock_last(m) + 36), 5);
	assert_int_equal(get32(mock_last(m) + 164), 67);
	/* Two cold extents, one idle slot. */
	complete1(m, 7);
	al_get_stats(m->al, &before);
	assert_int_equal(al_begin_io(m->al, SECT(200), 2 * EXT_SECT), -EAGAIN);
	al_get_stats(m->al, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	assert_true(al_is_hot(m->al, 7));
	assert_int_equal(begin1(m, 200), 1);
	assert_false(al_is_hot(m->al, 7));
	assert_int_equal(begin1(m, 201), -EAGAIN);
	assert_int_equal(begin1(m, 200), 0); /* pending, referenced again */
	assert_int_equal(al_pending(m->al), 1);
}

static void test_einval(void **state)
{
	struct mock *m = mock_new(67, 0, 0);

	(void)state;
	assert_int_equal(al_begin_io(m->al, 0, 68 * EXT_SECT), -EINVAL);
	assert_int_equal(al_begin_io(m->al, 100, 67 * EXT_SECT), -EINVAL); /* 68 extents */
	assert_int_equal(al_begin_io(m->al, UINT64_MAX, 2), -EINVAL);
	assert_int_equal(al_begin_io(m->al, SECT(0xffffffffu), 8), -EINVAL);
	assert_int_equal(al_begin_io(m->al, SECT(0xfffffffeu) + EXT_SECT - 8, 16), -EINVAL);
	assert_int_equal(al_begin_io(m->al, SECT(0xfffffffeu), 8), 1);
	assert_int_equal(al_pending(m->al), 1);
	assert_int_equal(al_begin_io(m->al, SECT(1000), 66 * EXT_SECT), 66);
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(m->n_written, 2);
	al_complete_io(m->al, SECT(1000), 66 * EXT_SECT);
	al_complete_io(m->al, SECT(0xfffffffeu), 8);
	assert_int_equal(al_begin_io(m->al, 0, 67 * EXT_SECT), 67); /* all of them */
	assert_int_equal(al_commit(m->al), 0);
	assert_true(al_is_hot(m->al, 66));
	assert_false(al_is_hot(m->al, 0xfffffffeu));
}

static void test_write_error_retry(void **state)
{
	struct mock *m = mock_new(67, 0, 0);
	struct al_stats st;
	uint32_t i;

	(void)state;
	for (i = 0; i < 3; i++)
		assert_int_equal(begin1(m, i), 1);
	m->fail_write = 1;
	assert_int_equal(al_commit(m->al), -EIO);
	assert_int_equal(al_pending(m->al), 3);
	assert_false(al_is_hot(m->al, 0));
	al_get_stats(m->al, &st);
	assert_int_equal(st.transactions, 0);
	m->fail_write = 1;
	m->write_rc = 1; /* not a negative errno: still an error */
	assert_int_equal(al_commit(m->al), -EIO);
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(m->n_written, 1);
	assert_int_equal(get32(m->written + 4), 0); /* the same transaction number */
	assert_int_equal(get16(m->written + 14), 3);
	assert_true(al_is_hot(m->al, 2));

	/* The second block of a batch fails: the first one stays committed. */
	for (i = 0; i < 3; i++)
		complete1(m, i);
	for (i = 10; i < 77; i++)
		assert_int_equal(begin1(m, i), 1);
	m->fail_after = 1;
	m->fail_write = 1;
	m->write_rc = -ENOSPC;
	m->n_calls = 0;
	assert_int_equal(al_commit(m->al), -ENOSPC);
	assert_int_equal(m->n_written, 2);
	assert_int_equal(al_pending(m->al), 3);
	assert_true(al_is_hot(m->al, 73));
	assert_false(al_is_hot(m->al, 74));
	assert_false(al_is_hot(m->al, 0)); /* evicted, flushed, still on disk */
	assert_int_equal(m->n_calls, 4);    /* write, 3 flushes */
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(m->n_calls, 8);    /* flushed again before the retry */
	assert_int_equal(m->calls[4].kind, CALL_FLUSH);
	assert_int_equal(m->calls[4].arg, 0);
	assert_int_equal(m->calls[7].kind, CALL_WRITE);
	assert_int_equal(m->n_written, 3);
	assert_int_equal(get32(m->written + BLK + 4), 1);
	assert_int_equal(get32(m->written + 2 * BLK + 4), 2);
	assert_int_equal(get16(m->written + BLK + 14), 64);
	assert_int_equal(get16(m->written + 2 * BLK + 14), 3);
	assert_true(al_is_hot(m->al, 76));
	al_get_stats(m->al, &st);
	assert_int_equal(st.transactions, 3);
	assert_int_equal(st.evictions, 3);
}

static void test_flush_error_retry(void **state)
{
	struct mock *m = mock_new(67, 0, 0);
	uint32_t i;

	(void)state;
	for (i = 0; i < 67; i++)
		assert_int_equal(begin1(m, i), 1);
	assert_int_equal(al_commit(m->al), 0);
	for (i = 0; i < 67; i++)
		complete1(m, i);
	assert_int_equal(begin1(m, 100), 1);
	assert_int_equal(begin1(m, 101), 1);
	m->fail_flush = 1;
	m->n_calls = 0;
	assert_int_equal(al_commit(m->al), -EIO);
	assert_int_equal(m->n_calls, 0); /* nothing written */
	assert_int_equal(m->n_written, 2);
	assert_int_equal(al_pending(m->al), 2);
	assert_false(al_is_hot(m->al, 100));
	assert_int_equal(al_commit(m->al), 0);
	assert_int_equal(m->n_calls, 3);
	assert_int_equal(m->calls[0].kind, CALL_FLUSH);
	assert_int_equal(m->calls[0].arg, 0);
	assert_int_equal(m->calls[1].arg, 1);
	assert_int_equal(m->calls[2].kind, CALL_WRITE);
	assert_int_equal(m->calls[2].arg, 2); /* tr 0 and 1 held 0..66 */
	assert_true(al_is_hot(m->al, 101));
}

static void test_tr_wrap_commit(void **state)
{
	struct mock *m = mock_new(67, 2, 8);
	struct al_replay r;
	uint32_t i;

	(void)state;
	al_set_next_tr(m->al, 0xfffffffeu);
	for (i = 0; i < 3; i++) {
		assert_int_equal(begin1(m, 10 + i), 1);
		assert_int_equal(al_commit(m->al), 0);
	}
	assert_int_equal(m->written_at[0], 7);
	assert_int_equal(m->written_at[1], 15);
	assert_int_equal(m->written_at[2], 0);
	assert_int_equal(get32(m->written + 2 * BLK + 4), 0);
	assert_int_equal(al_replay(m->ring, 16, 2, 8, &r), 0);
	assert_true(r.usable);
	assert_int_equal(r.n_updates, 3);
	assert_int_equal(r.newest_tr, 0);
	assert_int_equal(r.n_extents, 3);
	assert_int_equal(r.extents[0], 10);
	assert_int_equal(r.extents[2], 12);
	al_replay_free(&r);
	assert_null(r.extents);
}

/* ---------------------------------------------------------------- reference model */

/* A plain list-based model of the hot set (O(n) everywhere). */
struct model {
	uint32_t nr, universe, used;
	unsigned char *state; /* per extent: 0 cold, 1 pending, 2 committed */
	uint32_t *refs;
	uint32_t *lru, n_lru;   /* idle committed extents, oldest first */
	uint32_t *pend, n_pend; /* pending extents, in order */
	uint32_t *evict;        /* extent each pending one replaces, or AL_FREE */
	uint64_t transactions, evictions;
};

static void model_free(void *p)
{
	struct model *md = p;

	free(md->state);
	free(md->refs);
	free(md->lru);
	free(md->pend);
	free(md->evict);
	free(md);
}

static struct model *model_new(uint32_t nr, uint32_t universe)
{
	struct model *md = calloc(1, sizeof(*md));

	assert_non_null(md);
	unit_defer(model_free, md);
	md->nr = nr;
	md->universe = universe;
	md->state = calloc(universe, 1);
	md->refs = calloc(universe, sizeof(*md->refs));
	md->lru = malloc(nr * sizeof(*md->lru));
	md->pend = malloc(nr * sizeof(*md->pend));
	md->evict = malloc(nr * sizeof(*md->evict));
	assert_true(md->state && md->refs && md->lru && md->pend && md->evict);
	return md;
}

static void model_lru_remove(struct model *md, uint32_t e)
{
	uint32_t i;

	for (i = 0; i < md->n_lru; i++) {
		if (md->lru[i] == e) {
			memmove(md->lru + i, md->lru + i + 1, (md->n_lru - i - 1) * sizeof(*md->lru));
			md->n_lru--;
			return;
		}
	}
}

static int model_begin(struct model *md, uint32_t first, uint32_t n)
{
	uint32_t i, e, cold = 0, idle_own = 0;

	if (n > md->nr)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		e = first + i;
		if (!md->state[e])
			cold++;
		else if (md->state[e] == 2 && !md->refs[e])
			idle_own++;
	}
	if (cold > (md->nr - md->used) + md->n_lru - idle_own)
		return -EAGAIN;
	for (i = 0; i < n; i++) {
		e = first + i;
		if (!md->state[e])
			continue;
		if (md->state[e] == 2 && !md->refs[e])
			model_lru_remove(md, e);
		md->refs[e]++;
	}
	for (i = 0; i < n; i++) {
		e = first + i;
		if (md->state[e] && md->refs[e])
			continue;
		if (md->used < md->nr) {
			md->used++;
			md->evict[md->n_pend] = AL_FREE;
		} else {
			md->evict[md->n_pend] = md->lru[0];
			md->state[md->lru[0]] = 0;
			model_lru_remove(md, md->lru[0]);
			md->evictions++;
		}
		md->state[e] = 1;
		md->refs[e] = 1;
		md->pend[md->n_pend++] = e;
	}
	return (int)cold;
}

static void model_complete(struct model *md, uint32_t first, uint32_t n)
{
	uint32_t i, e;

	for (i = 0; i < n; i++) {
		e = first + i;
		if (!md->state[e] || !md->refs[e])
			continue;
		if (--md->refs[e] == 0 && md->state[e] == 2)
			md->lru[md->n_lru++] = e;
	}
}

/* Commit; checks the flushes the mock saw since calls[from]. */
static void model_commit(struct model *md, const struct mock *m, size_t from)
{
	uint32_t i, e;
	size_t c = from;

	for (i = 0; i < md->n_pend; i++) {
		if (i % AL_UPDATES_PER_TR == 0)
			md->transactions++;
		if (md->evict[i] != AL_FREE) {
			assert_true(c < m->n_calls);
			assert_int_equal(m->calls[c].kind, CALL_FLUSH);
			assert_int_equal(m->calls[c++].arg, md->evict[i]);
		}
		if (i % AL_UPDATES_PER_TR == AL_UPDATES_PER_TR - 1 || i + 1 == md->n_pend) {
			assert_true(c < m->n_calls);
			assert_int_equal(m->calls[c++].kind, CALL_WRITE);
		}
		e = md->pend[i];
		md->state[e] = 2;
		if (!md->refs[e])
			md->lru[md->n_lru++] = e;
	}
	assert_int_equal(c, m->n_calls);
	md->n_pend = 0;
}

static void model_check(const struct model *md, const struct al *al)
{
	uint32_t n, i, k = 0, *a = active_sorted(al, &n);
	struct al_stats st;

	for (i = 0; i < md->universe; i++) {
		assert_int_equal(al_is_hot(al, i), md->state[i] == 2);
		if (md->state[i] == 2) {
			assert_true(k < n);
			assert_int_equal(a[k++], i);
		}
	}
	assert_int_equal(k, n);
	free(a);
	al_get_stats(al, &st);
	assert_int_equal(st.transactions, md->transactions);
	assert_int_equal(st.evictions, md->evictions);
	assert_int_equal(al_pending(al), md->n_pend);
}

/* ---------------------------------------------------------------- workloads */

struct io {
	uint32_t first, n;
};

struct work {
	struct mock *m;
	struct model *md; /* NULL: no model */
	struct rng *rng;
	uint32_t universe;
	uint32_t big_batch; /* 0: mostly small batches; else up to this many */
	struct io *inflight;
	size_t n_inflight, cap;
	void (*on_commit)(struct work *w);
	void (*on_submit)(struct work *w, const struct io *io);
	void *arg;
};

static void work_free(void *p)
{
	struct work *w = p;

	free(w->inflight);
	free(w);
}

static struct work *work_new(struct mock *m, struct model *md, struct rng *rng, uint32_t universe)
{
	struct work *w = calloc(1, sizeof(*w));

	assert_non_null(w);
	unit_defer(work_free, w);
	w->m = m;
	w->md = md;
	w->rng = rng;
	w->universe = universe;
	w->cap = 256;
	w->inflight = malloc(w->cap * sizeof(*w->inflight));
	assert_non_null(w->inflight);
	return w;
}

static struct io work_pick(struct work *w)
{
	uint32_t nr = al_nr_extents(w->m->al), r = rng_below(w->rng, 100);
	struct io io = {.n = 1};

	if (r < 15)
		io.n = 2;
	else if (r == 15)
		io.n = 1 + rng_below(w->rng, nr / 2);
	else if (r == 16)
		io.n = nr + 1; /* too long: -EINVAL */
	if (io.n > w->universe)
		io.n = w->universe;
	/* Skewed: half of the writes go to the first fifth of the universe. */
	if (rng_below(w->rng, 2))
		io.first = rng_below(w->rng, w->universe / 5 + 1);
	else
		io.first = rng_below(w->rng, w->universe);
	if (io.first + io.n > w->universe)
		io.first = w->universe - io.n;
	return io;
}

static uint64_t io_sector(const struct io *io)
{
	return SECT(io->first) + (io->n > 1 ? EXT_SECT - 8 : 8);
}

static uint32_t io_nsect(const struct io *io)
{
	return io->n > 1 ? (io->n - 2) * EXT_SECT + 16 : 8;
}

/* Start up to k writes, commit them as one batch, submit them. */
static void work_batch(struct work *w, uint32_t k)
{
	size_t base = w->n_inflight, nb = 0, i, from = w->m->n_calls;
	struct io io;
	int rc;

	while (k--) {
		io = work_pick(w);
		rc = al_begin_io(w->m->al, io_sector(&io), io_nsect(&io));
		if (w->md)
			assert_int_equal(rc, model_begin(w->md, io.first, io.n));
		assert_true(rc >= 0 || rc == -EAGAIN || rc == -EINVAL);
		if (rc < 0)
			continue;
		if (base + nb == w->cap) {
			w->cap *= 2;
			w->inflight = realloc(w->inflight, w->cap * sizeof(*w->inflight));
			assert_non_null(w->inflight);
		}
		w->inflight[base + nb++] = io; /* started, not yet in flight */
	}
	assert_int_equal(al_commit(w->m->al), 0);
	if (w->md) {
		model_commit(w->md, w->m, from);
		model_check(w->md, w->m->al);
	}
	if (w->on_commit)
		w->on_commit(w);
	for (i = base; i < base + nb; i++) {
		assert_true(al_is_hot(w->m->al, w->inflight[i].first));
		if (w->on_submit)
			w->on_submit(w, &w->inflight[i]);
	}
	w->n_inflight = base + nb;
}

/* Complete each write in flight with probability pct %. */
static void work_complete(struct work *w, uint32_t pct)
{
	size_t i = 0;

	while (i < w->n_inflight) {
		if (rng_below(w->rng, 100) >= pct) {
			i++;
			continue;
		}
		al_complete_io(w->m->al, io_sector(&w->inflight[i]), io_nsect(&w->inflight[i]));
		if (w->md)
			model_complete(w->md, w->inflight[i].first, w->inflight[i].n);
		w->inflight[i] = w->inflight[--w->n_inflight];
	}
}

static void work_step(struct work *w)
{
	uint32_t nr = al_nr_extents(w->m->al);

	if (w->n_inflight > nr || rng_below(w->rng, 3) == 0)
		work_complete(w, w->n_inflight > nr ? 60 : 30);
	else if (w->big_batch)
		work_batch(w, 1 + rng_below(w->rng, w->big_batch));
	else
		work_batch(w, 1 + rng_below(w->rng, rng_below(w->rng, 4) ? 8 : 100));
}

static void test_model_random(void **state)
{
	static const uint32_t cfg[][3] = {
		/* nr, stripes, size */
		{67, 0, 0}, {100, 2, 8}, {919, 1, 8}, {1000, 4, 4}, {2000, 1, 8}, {6433, 1, 8},
	};
	struct rng rng = rng_seeded("model_random");
	unsigned int c, step;

	(void)state;
	for (c = 0; c < UNIT_ARRAY_SIZE(cfg); c++) {
		uint32_t nr = cfg[c][0], universe = nr + 1 + rng_below(&rng, 2 * nr);
		struct mock *m = mock_new(nr, cfg[c][1], cfg[c][2]);
		struct model *md = model_new(nr, universe);
		struct work *w = work_new(m, md, &rng, universe);
		uint32_t steps = nr > 1000 ? 300 : 1500;

		for (step = 0; step < steps; step++)
			work_step(w);
		work_complete(w, 100);
		work_batch(w, 20);
		unit_release(w);
		unit_release(md);
		unit_release(m);
	}
}

/* ---------------------------------------------------------------- crash at every point */

/*
 * A random workload writes into the mock ring; the state after every block
 * is recorded. Then the ring is rebuilt block by block and, after each
 * prefix (and with the next block torn or garbage), replayed: the result
 * must cover the hot set at the last complete block, every write in
 * flight before the next one, and every extent whose bitmap was flushed
 * for the next one (it is still in the log until that block is written).
 * With nothing pending at the snapshot, it must be exactly the hot set.
 */
struct snap {
	uint32_t *hot; /* committed extents after this block, sorted */
	uint32_t n_hot;
	bool exact;    /* nothing was pending: replay must equal hot */
	uint32_t *need; /* must also be covered until the next block */
	uint32_t n_need, cap_need;
};

struct crash {
	struct work *w;
	struct snap *snaps; /* one per block written */
	size_t cap;
	bool in_commit;
};

static void crash_free(void *p)
{
	struct crash *cr = p;
	size_t i;

	for (i = 0; i < cr->cap; i++) {
		free(cr->snaps[i].hot);
		free(cr->snaps[i].need);
	}
	free(cr->snaps);
	free(cr);
}

static bool crash_has_snap(const struct crash *cr, size_t k)
{
	return k < cr->cap && cr->snaps[k].hot;
}

static void snap_need(struct snap *s, uint32_t first, uint32_t n)
{
	uint32_t i;

	for (i = 0; i < n; i++) {
		if (s->n_need == s->cap_need) {
			s->cap_need = s->cap_need ? 2 * s->cap_need : 64;
			s->need = realloc(s->need, s->cap_need * sizeof(*s->need));
			assert_non_null(s->need);
		}
		s->need[s->n_need++] = first + i;
	}
}

/* The state after block k: hot set, and the writes in flight. */
static void crash_snap(struct crash *cr, size_t k, bool exact)
{
	struct snap *s;
	size_t i;

	while (k >= cr->cap) {
		size_t cap = cr->cap ? 2 * cr->cap : 256;

		cr->snaps = realloc(cr->snaps, cap * sizeof(*cr->snaps));
		assert_non_null(cr->snaps);
		memset(cr->snaps + cr->cap, 0, (cap - cr->cap) * sizeof(*cr->snaps));
		cr->cap = cap;
	}
	s = &cr->snaps[k];
	s->hot = active_sorted(cr->w->m->al, &s->n_hot);
	s->exact = exact;
	for (i = 0; i < cr->w->n_inflight; i++)
		snap_need(s, cr->w->inflight[i].first, cr->w->inflight[i].n);
}

static void crash_hook(struct mock *m, const unsigned char *buf)
{
	struct crash *cr = m->hook_arg;

	(void)buf;
	/* A later block of the same commit: the previous one is committed. */
	if (cr->in_commit && m->n_written > 0 && !crash_has_snap(cr, m->n_written - 1))
		crash_snap(cr, m->n_written - 1, false);
	cr->in_commit = true;
}

static void crash_commit(struct work *w)
{
	struct crash *cr = w->arg;

	if (w->m->n_written > 0 && !crash_has_snap(cr, w->m->n_written - 1))
		crash_snap(cr, w->m->n_written - 1, true);
	cr->in_commit = false;
}

static void crash_submit(struct work *w, const struct io *io)
{
	struct crash *cr = w->arg;

	assert_true(crash_has_snap(cr, w->m->n_written - 1));
	snap_need(&cr->snaps[w->m->n_written - 1], io->first, io->n);
}

/* A flush before block p: the extent must stay covered until block p. */
static void crash_flushes(struct crash *cr)
{
	const struct mock *m = cr->w->m;
	size_t c, writes = 0;

	for (c = 0; c < m->n_calls; c++) {
		if (m->calls[c].kind == CALL_WRITE) {
			writes++;
			continue;
		}
		assert_true(writes > 0 && crash_has_snap(cr, writes - 1));
		snap_need(&cr->snaps[writes - 1], m->calls[c].arg, 1);
	}
}

/* Replay ring, the state after p complete blocks (block p torn or not). */
static void crash_check(const struct crash *cr, const unsigned char *ring, size_t p, bool torn,
			uint32_t first_tr)
{
	const struct mock *m = cr->w->m;
	const struct snap *s = p ? &cr->snaps[p - 1] : NULL;
	unsigned char *in = calloc(cr->w->universe, 1);
	struct al_replay r;
	uint32_t i;

	assert_non_null(in);
	unit_defer(free, in);
	assert_int_equal(al_replay(ring, m->mx, m->stripes, m->size, &r), 0);
	unit_defer(free, r.extents);
	assert_int_equal(r.n_corrupt, torn ? 1 : 0);
	if (!p) {
		/* Nothing committed: fine unless a torn first block is not at
		 * position 0 (drbdmeta's rule; only a start at tr 0 is safe). */
		bool at0 = first_tr % m->mx == 0;

		assert_int_equal(r.usable, !torn || at0);
		if (!r.usable)
			assert_string_equal(r.problem, msg_no_update);
		assert_int_equal(r.n_extents, 0);
		unit_release(in);
		return;
	}
	assert_true(r.usable);
	assert_int_equal(r.newest_tr, first_tr + (uint32_t)p - 1);
	assert_int_equal(r.n_updates, torn && p >= m->mx ? m->mx - 1 : (p < m->mx ? p : m->mx));
	for (i = 0; i < r.n_extents; i++) {
		assert_true(r.extents[i] < cr->w->universe);
		in[r.extents[i]] = 1;
	}
	for (i = 0; i < s->n_hot; i++)
		if (!in[s->hot[i]])
			fail_msg("prefix %zu%s: hot extent %u not replayed", p, torn ? "+torn" : "",
				 s->hot[i]);
	for (i = 0; i < s->n_need; i++)
		if (!in[s->need[i]])
			fail_msg("prefix %zu%s: extent %u (in flight or flushed) not replayed", p,
				 torn ? "+torn" : "", s->need[i]);
	if (s->exact) {
		assert_int_equal(r.n_extents, s->n_hot);
		assert_memory_equal(r.extents, s->hot, s->n_hot * sizeof(*s->hot));
	}
	unit_release(r.extents);
	unit_release(in);
}

static void crash_replay_all(struct crash *cr, struct rng *rng, uint32_t first_tr)
{
	const struct mock *m = cr->w->m;
	size_t p, bytes = (size_t)m->mx * BLK, off;
	unsigned char *ring = unit_defer(free, malloc(bytes));
	unsigned char *tmp = unit_defer(free, malloc(bytes));
	const unsigned char *next;
	uint32_t i, cut;

	assert_true(ring && tmp);
	for (i = 0; i < m->mx; i++)
		al_block_init(ring + (size_t)i * BLK);
	for (p = 0; p <= m->n_written; p++) {
		crash_check(cr, ring, p, false, first_tr);
		if (p == m->n_written)
			break;
		next = m->written + p * BLK;
		off = (size_t)m->written_at[p] * BLK;
		/* Garbage where block p goes. */
		memcpy(tmp, ring, bytes);
		rng_fill(rng, tmp + off, BLK);
		crash_check(cr, tmp, p, true, first_tr);
		/* Block p half written: its first sectors, the old rest. */
		cut = 512 * (1 + rng_below(rng, 7));
		memcpy(tmp + off, ring + off, BLK);
		memcpy(tmp + off, next, cut);
		if (memcmp(tmp + off, next, BLK))
			crash_check(cr, tmp, p, true, first_tr);
		memcpy(ring + off, next, BLK);
	}
	unit_release(ring);
	unit_release(tmp);
}

static void test_crash_every_point(void **state)
{
	static const uint32_t cfg[][6] = {
		/* nr, stripes, size, first tr, steps, big batches */
		{67, 1, 8, 0, 400, 0},           {300, 2, 8, 0, 400, 0},
		{200, 4, 2, 0xfffffff5u, 400, 0}, {1000, 2, 4, 0xfffffffau, 300, 200},
		{6433, 1, 8, 0, 200, 400},       {6433, 2, 4, 0x7ffffff0u, 200, 400},
		{100, 1, 16, 3, 300, 0},         {13785, 2, 8, 0, 150, 800},
	};
	struct rng rng = rng_seeded("crash_every_point");
	struct al_stats st;
	unsigned int c, step;

	(void)state;
	for (c = 0; c < UNIT_ARRAY_SIZE(cfg); c++) {
		uint32_t nr = cfg[c][0], universe = nr + nr / 4 + 1 + rng_below(&rng, nr / 2);
		struct mock *m = mock_new(nr, cfg[c][1], cfg[c][2]);
		struct crash *cr = calloc(1, sizeof(*cr));
		struct work *w;

		assert_non_null(cr);
		unit_defer(crash_free, cr);
		assert_int_equal(al_nr_extents(m->al), nr);
		w = work_new(m, NULL, &rng, universe);
		w->big_batch = cfg[c][5];
		cr->w = w;
		w->arg = cr;
		w->on_commit = crash_commit;
		w->on_submit = crash_submit;
		m->hook = crash_hook;
		m->hook_arg = cr;
		al_set_next_tr(m->al, cfg[c][3]);
		for (step = 0; step < cfg[c][4]; step++)
			work_step(w);
		crash_flushes(cr);
		al_get_stats(m->al, &st);
		print_message("crash: nr %u, ring %ux%u: %zu transactions, %" PRIu64 " evictions\n",
			      nr, cfg[c][1], cfg[c][2], m->n_written, st.evictions);
		assert_true(st.evictions > 0);
		assert_true(m->n_written > 2 * m->mx);
		crash_replay_all(cr, &rng, cfg[c][3]);
		unit_release(w);
		unit_release(cr);
		unit_release(m);
	}
}

/* ---------------------------------------------------------------- replay */

static unsigned char *ring_new(uint32_t mx)
{
	unsigned char *ring = malloc((size_t)mx * BLK);
	uint32_t i;

	assert_non_null(ring);
	unit_defer(free, ring);
	for (i = 0; i < mx; i++)
		al_block_init(ring + (size_t)i * BLK);
	return ring;
}

static void assert_extents(const struct al_replay *r, const uint32_t *want, uint32_t n)
{
	uint32_t i;

	assert_true(r->usable);
	assert_int_equal(r->n_extents, n);
	for (i = 0; i < n; i++)
		assert_int_equal(r->extents[i], want[i]);
}

/* ondisk-format.pod's example, verified against drbdmeta. */
static void test_replay_worked_example(void **state)
{
	static const uint32_t want[] = {20, 30, 40, 255};
	unsigned char *ring = ring_new(8);
	struct al_replay r;
	struct tx t;

	(void)state;
	tx_new(&t, 5, 8, 0);
	t.ctx[0] = 10;
	t.ctx[1] = 20;
	tx_update(&t, 2, 30);
	tx_write(&t, ring + 5 * BLK);
	tx_new(&t, 6, 8, 0);
	t.ctx[0] = 10;
	t.ctx[1] = 20;
	t.ctx[2] = 30;
	tx_update(&t, 3, 255);
	tx_update(&t, 0, 40);
	tx_write(&t, ring + 6 * BLK);
	tx_new(&t, 7, 8, 0);
	tx_update(&t, 4, 100);
	tx_write(&t, ring + 7 * BLK);
	ring[7 * BLK + 9] ^= 1; /* bad crc */
	assert_int_equal(al_replay(ring, 8, 0, 0, &r), 0);
	assert_extents(&r, want, 4);
	assert_int_equal(r.n_corrupt, 1);
	assert_int_equal(r.n_updates, 2);
	assert_int_equal(r.newest_tr, 6);
	assert_null(r.problem);
	al_replay_free(&r);
}

/* 0xfffffffe < 0xffffffff < 0 < 1: the newest is tr 1. */
static void test_replay_serial_wrap(void **state)
{
	static const uint32_t trs[] = {0xfffffffeu, 0xffffffffu, 0, 1};
	static const uint32_t want[] = {103, 200};
	unsigned char *ring = ring_new(16);
	struct al_replay r;
	unsigned int k;
	struct tx t;

	(void)state;
	for (k = 0; k < UNIT_ARRAY_SIZE(trs); k++) {
		tx_new(&t, trs[k], 0, 0); /* context_size 0: FREE entries skipped */
		tx_update(&t, 0, 100 + k);
		if (k == 0)
			tx_update(&t, 1, 200);
		tx_write(&t, ring + (size_t)al_ring_block(trs[k], 2, 8) * BLK);
	}
	assert_int_equal(al_replay(ring, 16, 2, 8, &r), 0);
	assert_extents(&r, want, 2);
	assert_int_equal(r.newest_tr, 1);
	assert_int_equal(r.n_updates, 4);
	assert_int_equal(r.n_corrupt, 0);
	al_replay_free(&r);
}

static void test_replay_no_usable(void **state)
{
	unsigned char *ring = ring_new(8);
	struct al_replay r;

	(void)state;
	memset(ring, 0, 8 * BLK);
	assert_int_equal(al_replay(ring, 8, 1, 8, &r), 0);
	assert_false(r.usable);
	assert_string_equal(r.problem, msg_no_log);
	assert_int_equal(r.n_corrupt, 8);
	assert_int_equal(r.n_updates, 0);
	assert_null(r.extents);
	al_replay_free(&r);
	assert_int_equal(al_replay(ring, 7, 1, 8, &r), -EINVAL);
	assert_int_equal(al_replay(NULL, 8, 1, 8, &r), -EINVAL);
	assert_int_equal(al_replay(ring, 8, 0, 8, &r), -EINVAL);
	assert_int_equal(al_replay(ring, 8, 1, 0, &r), -EINVAL);
}

static void test_replay_no_update(void **state)
{
	unsigned char *ring = ring_new(16);
	struct al_replay r;

	(void)state;
	assert_int_equal(al_replay(ring, 16, 2, 8, &r), 0); /* all initialised */
	assert_true(r.usable);
	assert_int_equal(r.n_corrupt, 0);
	assert_int_equal(r.n_extents, 0);
	/* Only position 0 (block 0) torn: the first transaction never made it. */
	ring[100] ^= 1;
	assert_int_equal(al_replay(ring, 16, 2, 8, &r), 0);
	assert_true(r.usable);
	assert_int_equal(r.n_corrupt, 1);
	/* Position 1 is block 8 with 2 stripes. */
	ring[100] ^= 1;
	ring[8 * BLK + 100] ^= 1;
	assert_int_equal(al_replay(ring, 16, 2, 8, &r), 0);
	assert_false(r.usable);
	assert_string_equal(r.problem, msg_no_update);
	assert_int_equal(r.n_corrupt, 1);
	assert_null(r.extents);
	ring[100] ^= 1;
	assert_int_equal(al_replay(ring, 16, 2, 8, &r), 0);
	assert_false(r.usable);
	assert_int_equal(r.n_corrupt, 2);
	al_replay_free(&r);
}

/* Context and update skip rules, slot limits, odd types, duplicates. */
static void test_replay_skip_rules(void **state)
{
	static const uint32_t want[] = {77, 88, 1600, 2000, 2100, 3000, 9000, 9001, 9002, 9003};
	unsigned char *ring = ring_new(8);
	struct al_replay r;
	struct tx t;
	unsigned int i;

	(void)state;
	tx_new(&t, 0, 0, 0);
	tx_update(&t, 16, 1600);
	tx_update(&t, 5, 500);
	tx_write(&t, ring);
	/* Context from slot 5 of size 10: FREE clears slots 5..9, is skipped
	 * at 10 and above, other values apply anywhere. */
	tx_new(&t, 1, 10, 5);
	t.ctx[1] = 77;
	t.ctx[10] = 88;
	tx_update(&t, 20, 2000);
	t.slot[1] = 21; /* past n_updates but not 0xffff: applied */
	t.ext[1] = 2100;
	t.ext[2] = 2200; /* slot 0xffff: skipped */
	t.slot[3] = 0xfffe; /* out of range: ignored */
	t.ext[3] = 2300;
	tx_write(&t, ring + BLK);
	/* Slots from 65534 on are ignored, even as "updates". */
	tx_new(&t, 2, 0, 65530);
	for (i = 0; i < 5; i++)
		t.ctx[i] = 9000 + i;
	t.n_updates = 64;
	tx_write(&t, ring + 2 * BLK);
	/* Any valid type but 0xffff is an update; extent 77 twice. */
	tx_new(&t, 3, 0, 0);
	t.type = 0x1234;
	tx_update(&t, 30, 3000);
	tx_update(&t, 31, 77);
	tx_write(&t, ring + 3 * BLK);
	assert_int_equal(al_replay(ring, 8, 1, 8, &r), 0);
	assert_extents(&r, want, UNIT_ARRAY_SIZE(want));
	assert_int_equal(r.n_updates, 4);
	assert_int_equal(r.newest_tr, 3);
	al_replay_free(&r);
}

/* drbdmeta's replay_al_84 + apply-al's qsort, as plainly as possible. */
struct ref_out {
	int outcome; /* -1 no log, -2 no update, 0 nothing, 1 replayed */
	uint32_t corrupt, updates, newest;
	uint32_t hot[AL_EXTENTS_MAX];
};

static void ref_replay(const unsigned char *ring, uint32_t stripes, uint32_t size,
		       struct ref_out *o)
{
	uint32_t mx = stripes * size, b, i, valid = 0, oldest = 0, newest = 0, o_tr = 0,
		 n_tr = 0;
	bool *ok = calloc(mx, sizeof(*ok));
	const unsigned char *blk;

	assert_non_null(ok);
	memset(o, 0, sizeof(*o));
	memset(o->hot, 0xff, sizeof(o->hot));
	for (b = 0; b < mx; b++) {
		unsigned char copy[BLK];
		uint32_t tr;

		blk = ring + (size_t)((b % stripes) * size + b / stripes) * BLK;
		memcpy(copy, blk, BLK);
		put32(copy + 8, 0);
		ok[b] = get32(blk) == AL_MAGIC && get32(blk + 8) == ref_crc32c(copy, BLK);
		if (!ok[b])
			continue;
		valid++;
		if (get16(blk + 12) == 0xffff)
			continue;
		tr = get32(blk + 4);
		if (++o->updates == 1) {
			oldest = newest = b;
			o_tr = n_tr = tr;
			continue;
		}
		if ((int32_t)(tr - o_tr) < 0) {
			oldest = b;
			o_tr = tr;
		}
		if ((int32_t)(tr - n_tr) > 0) {
			newest = b;
			n_tr = tr;
		}
	}
	o->corrupt = mx - valid;
	o->newest = n_tr;
	if (!valid)
		o->outcome = -1;
	else if (!o->updates)
		o->outcome = valid == mx || (!ok[0] && valid == mx - 1) ? 0 : -2;
	else
		o->outcome = 1;
	if (newest < oldest)
		newest += mx;
	for (b = oldest; o->outcome == 1 && b <= newest; b++) {
		uint32_t idx = b % mx, slot;

		blk = ring + (size_t)((idx % stripes) * size + idx / stripes) * BLK;
		if (!ok[idx] || get16(blk + 12) == 0xffff)
			continue;
		for (i = 0; i < AL_CONTEXT_PER_TR; i++) {
			slot = get16(blk + 18) + i;
			if (get32(blk + 420 + 4 * i) == AL_FREE && slot >= get16(blk + 16))
				continue;
			if (slot < AL_EXTENTS_MAX)
				o->hot[slot] = get32(blk + 420 + 4 * i);
		}
		for (i = 0; i < AL_UPDATES_PER_TR; i++) {
			slot = get16(blk + 36 + 2 * i);
			if (i >= get16(blk + 14) && slot == 0xffff)
				continue;
			if (slot < AL_EXTENTS_MAX)
				o->hot[slot] = get32(blk + 164 + 4 * i);
		}
	}
	free(ok);
	for (b = 0, i = 0; b < AL_EXTENTS_MAX; b++)
		if (o->hot[b] != AL_FREE)
			o->hot[i++] = o->hot[b];
	qsort(o->hot, i, sizeof(o->hot[0]), cmp_u32);
	while (i < AL_EXTENTS_MAX)
		o->hot[i++] = AL_FREE;
}

static uint32_t garbage_u16(struct rng *rng)
{
	switch (rng_below(rng, 5)) {
	case 0:
		return 0xffff;
	case 1:
		return 0xfffe - rng_below(rng, 4);
	case 2:
		return rng_below(rng, 200);
	default:
		return (uint16_t)rng_next(rng);
	}
}

/* A block with valid magic and crc but arbitrary (often insane) fields. */
static void garbage_valid(struct rng *rng, unsigned char *b, uint32_t base_tr)
{
	uint32_t i;

	rng_fill(rng, b, BLK);
	put32(b, AL_MAGIC);
	put32(b + 4, rng_below(rng, 4) ? base_tr + rng_below(rng, 40) : (uint32_t)rng_next(rng));
	put16(b + 12, rng_below(rng, 4) ? 0 : rng_below(rng, 2) ? 0xffff : garbage_u16(rng));
	put16(b + 14, rng_below(rng, 2) ? rng_below(rng, 70) : garbage_u16(rng));
	put16(b + 16, garbage_u16(rng));
	put16(b + 18, garbage_u16(rng));
	for (i = 0; i < AL_UPDATES_PER_TR; i++)
		put16(b + 36 + 2 * i, garbage_u16(rng));
	for (i = 0; i < AL_CONTEXT_PER_TR + AL_UPDATES_PER_TR; i++) {
		unsigned char *p = i < AL_UPDATES_PER_TR ? b + 164 + 4 * i
							 : b + 420 + 4 * (i - AL_UPDATES_PER_TR);

		if (rng_below(rng, 3) == 0)
			put32(p, AL_FREE);
		else if (rng_below(rng, 2))
			put32(p, rng_below(rng, 5000));
	}
	seal(b);
}

static void test_replay_garbage(void **state)
{
	struct rng rng = rng_seeded("replay_garbage");
	struct ref_out *ref = malloc(sizeof(*ref));
	unsigned int iter;

	(void)state;
	assert_non_null(ref);
	unit_defer(free, ref);
	for (iter = 0; iter < 2000; iter++) {
		uint32_t stripes = 1 + rng_below(&rng, 4), size = 1 + rng_below(&rng, 8);
		uint32_t mx = stripes * size, b, i, k = 0, base = (uint32_t)rng_next(&rng);
		unsigned char *ring = unit_defer(free, malloc((size_t)mx * BLK));
		struct al_replay r;

		assert_non_null(ring);
		for (b = 0; b < mx; b++) {
			unsigned char *blk = ring + (size_t)b * BLK;

			switch (iter % 4 == 0 ? 0 : rng_below(&rng, 6)) {
			case 0:
				rng_fill(&rng, blk, BLK);
				break;
			case 1:
				al_block_init(blk);
				break;
			case 2:
				memset(blk, 0, BLK);
				if (rng_below(&rng, 2))
					put32(blk, AL_MAGIC); /* magic, bad crc */
				break;
			default:
				garbage_valid(&rng, blk, base);
			}
		}
		assert_int_equal(al_replay(ring, mx, stripes, size, &r), 0);
		unit_defer(free, r.extents);
		ref_replay(ring, stripes, size, ref);
		assert_int_equal(r.n_corrupt, ref->corrupt);
		assert_int_equal(r.n_updates, ref->updates);
		assert_int_equal(r.usable, ref->outcome >= 0);
		if (ref->outcome < 0)
			assert_string_equal(r.problem, ref->outcome == -1 ? msg_no_log : msg_no_update);
		if (ref->outcome == 1)
			assert_int_equal(r.newest_tr, ref->newest);
		for (i = 0; i < AL_EXTENTS_MAX && ref->hot[i] != AL_FREE; i++) {
			if (i && ref->hot[i] == ref->hot[i - 1])
				continue;
			assert_true(k < r.n_extents);
			assert_int_equal(r.extents[k++], ref->hot[i]);
		}
		assert_int_equal(k, r.n_extents);
		unit_release(r.extents);
		unit_release(ring);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ring_block),
		cmocka_unit_test(test_block_init),
		cmocka_unit_test(test_transaction_bytes),
		cmocka_unit_test(test_context_cycle),
		cmocka_unit_test(test_new_clamp_and_geometry),
		cmocka_unit_test(test_batching),
		cmocka_unit_test(test_hot_and_pending),
		cmocka_unit_test(test_group_commit),
		cmocka_unit_test(test_lru_eviction),
		cmocka_unit_test(test_eagain),
		cmocka_unit_test(test_einval),
		cmocka_unit_test(test_write_error_retry),
		cmocka_unit_test(test_flush_error_retry),
		cmocka_unit_test(test_tr_wrap_commit),
		cmocka_unit_test(test_model_random),
		cmocka_unit_test(test_crash_every_point),
		cmocka_unit_test(test_replay_worked_example),
		cmocka_unit_test(test_replay_serial_wrap),
		cmocka_unit_test(test_replay_no_usable),
		cmocka_unit_test(test_replay_no_update),
		cmocka_unit_test(test_replay_skip_rules),
		cmocka_unit_test(test_replay_garbage),
	};

	return cmocka_run_group_tests_name("al", tests, NULL, unit_teardown);
}
