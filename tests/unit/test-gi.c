/* Unit tests for gi: each generation-UUID rule as a table. */
#include "config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "gi.h"

#define A 0x1111111111111110ULL
#define B 0x2222222222222220ULL
#define C 0x3333333333333330ULL
#define D 0x4444444444444440ULL
#define R 0xabcdef0123456788ULL /* "random" */

static void expect(const struct gi *g, uint64_t cur, uint64_t bm, uint64_t h0, uint64_t h1)
{
	assert_int_equal(g->uuid[GI_CURRENT], cur);
	assert_int_equal(g->uuid[GI_BITMAP], bm);
	assert_int_equal(g->uuid[GI_HISTORY0], h0);
	assert_int_equal(g->uuid[GI_HISTORY1], h1);
}

static void test_random(void **state)
{
	assert_int_equal(gi_random(R | 1), R);
	assert_true(gi_random(0) != 0);
	assert_true(gi_random(1) != 0);
	assert_true(gi_random(4) != 4);
	assert_true(gi_random(5) != 4);
	assert_int_equal(gi_random(0) & 1, 0);
	assert_int_equal(gi_random(4) & 1, 0);
}

static void test_role_bit(void **state)
{
	struct gi g = {{A, 0, 0, 0}};

	gi_set_role(&g, true);
	expect(&g, A | 1, 0, 0, 0);
	gi_set_role(&g, false);
	expect(&g, A, 0, 0, 0);
	assert_int_equal(gi_mask(A | 1), A);
}

static void test_new_current(void **state)
{
	struct gi g = {{A | 1, 0, C, D}};

	assert_false(gi_new_current(&g, R, true));
	/* old current -> bitmap, keeping bit 0: "was Primary" for the after-sb
	 * policies, as DRBD keeps it */
	expect(&g, R | 1, A | 1, C, D);
	/* over a nonzero bitmap UUID: overwritten, reported */
	assert_true(gi_new_current(&g, B, false));
	expect(&g, B, R | 1, C, D);
}

static void test_bitmap_set_clear(void **state)
{
	struct gi g = {{A, 0, C, D}};

	gi_set_bitmap(&g, B | 1);
	expect(&g, A, B, C, D); /* no rotation, bit 0 cleared */
	gi_clear_bitmap(&g);
	expect(&g, A, 0, B, C); /* B rotated into history, D dropped */
	gi_clear_bitmap(&g);
	expect(&g, A, 0, B, C); /* clearing 0: no rotation */
}

static void test_sync_source(void **state)
{
	struct gi g = {{A, B, C, D}};
	uint64_t s = gi_start_sync_source(&g, R);

	assert_int_equal(s, B + GI_NEW_BM_OFFSET);
	expect(&g, A, B + GI_NEW_BM_OFFSET, B, C);

	/* bitmap 0 or 4: a random sync UUID, nothing rotated for 0 */
	struct gi z = {{A, 0, C, D}};

	s = gi_start_sync_source(&z, R);
	assert_int_equal(s, R);
	expect(&z, A, R, C, D);
	struct gi j = {{A, GI_JUST_CREATED, C, D}};

	s = gi_start_sync_source(&j, R);
	assert_int_equal(s, R);
	expect(&j, A, R, GI_JUST_CREATED, C);
}

static void test_sync_target(void **state)
{
	struct gi g = {{C | 1, D, 0, 0}};

	gi_sync_target_receive(&g, B + GI_NEW_BM_OFFSET, false);
	expect(&g, B + GI_NEW_BM_OFFSET, 0, 0, 0); /* old current dropped, no rotation */
}

/* A full resync cycle: source and target end with equal UUID sets. */
static void test_resync_cycle(void **state)
{
	struct gi src = {{A | 1, B, C, D}};
	struct gi tgt = {{B, 0, C, D}};
	struct gi seen = src; /* the source's UUIDs as the target got them at connect */
	uint64_t s = gi_start_sync_source(&src, R);

	gi_sync_target_receive(&tgt, s, false);
	gi_end_sync_target(&tgt, &seen, false);
	gi_end_sync_source(&src);
	expect(&src, A | 1, 0, s, B);
	expect(&tgt, A, 0, s, B);
	assert_int_equal(gi_mask(src.uuid[GI_CURRENT]), gi_mask(tgt.uuid[GI_CURRENT]));
}

static void test_end_sync_target_steps(void **state)
{
	/* target current S, peer A:S:B:C -> bitmap := peer's, h := peer's,
	 * bitmap := own current (rotating peer bitmap), current := peer's,
	 * then bitmap cleared into history */
	struct gi tgt = {{D, 0, 0, 0}};
	struct gi peer = {{A, B, C, 0}};

	gi_end_sync_target(&tgt, &peer, true);
	expect(&tgt, A | 1, 0, D, B);
}

static void test_new_current_clear_bitmap(void **state)
{
	struct gi g = {{GI_JUST_CREATED, 0, 0, 0}};

	gi_new_current_clear_bitmap(&g, R, false);
	expect(&g, R, 0, 0, 0);
}

/* gi_entropy: 64 draws, no two alike and none 0 (a clock-based source
 * would repeat within a millisecond). */
static void test_entropy(void **state)
{
	uint64_t v[64];
	unsigned int i, j;

	(void)state;
	for (i = 0; i < 64; i++) {
		v[i] = gi_entropy();
		assert_true(v[i] != 0);
		for (j = 0; j < i; j++)
			assert_true(v[i] != v[j]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_role_bit),
		cmocka_unit_test(test_new_current),
		cmocka_unit_test(test_bitmap_set_clear),
		cmocka_unit_test(test_sync_source),
		cmocka_unit_test(test_sync_target),
		cmocka_unit_test(test_resync_cycle),
		cmocka_unit_test(test_end_sync_target_steps),
		cmocka_unit_test(test_new_current_clear_bitmap),
		cmocka_unit_test(test_entropy),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
