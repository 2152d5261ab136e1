/* Unit tests for md-layout: v08 layout arithmetic for many device sizes. */
#include "config.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "md-layout.h"

struct internal_case {
	uint64_t cap;
	uint32_t stripes, size_4k;
	uint64_t sb, al_start, usable, bm_sect;
	uint32_t md_size;
	int32_t al_off, bm_off;
};

/* The rows checked against drbdmeta in doc/ondisk-format.pod (Worked
 * examples), plus the computed 100 TiB + 7 sectors row. */
static const struct internal_case internal_cases[] = {
	{2097152, 0, 0, 2097144, 2097080, 2097016, 64, 136, -64, -128},
	{1000001, 0, 0, 999992, 999928, 999896, 32, 104, -64, -96},
	{204800, 4, 16, 204792, 204280, 204272, 8, 528, -512, -520},
	{2147483648ULL, 0, 0, 2147483640ULL, 2147483576ULL, 2147418040ULL, 65536, 65608, -64,
	 -65600},
	{214748364807ULL, 0, 0, 214748364792ULL, 214748364728ULL, 214741811120ULL, 6553608,
	 6553680, -64, -6553672},
};

static void test_internal_table(void **state)
{
	size_t i;

	for (i = 0; i < sizeof(internal_cases) / sizeof(internal_cases[0]); i++) {
		const struct internal_case *c = &internal_cases[i];
		struct md_layout l;

		assert_int_equal(md_layout_compute(MD_INTERNAL, -1, c->cap, c->cap, c->stripes,
						   c->size_4k, &l),
				 0);
		assert_int_equal(l.sb_sect, c->sb);
		assert_int_equal(l.sb_sect + (uint64_t)(int64_t)l.al_offset, c->al_start);
		assert_int_equal(l.max_data_sect, c->usable);
		assert_int_equal(l.bm_size_sect, c->bm_sect);
		assert_int_equal(l.md_size_sect, c->md_size);
		assert_int_equal(l.al_offset, c->al_off);
		assert_int_equal(l.bm_offset, c->bm_off);
		/* usable data ends where the bitmap starts */
		assert_int_equal(l.sb_sect + (uint64_t)(int64_t)l.bm_offset, l.max_data_sect);
	}
}

/* Invariants over many odd sizes: the areas never overlap, stay inside
 * the device, and the bitmap covers the usable data. */
static void test_internal_invariants(void **state)
{
	uint64_t cap;

	for (cap = 64 * 2048; cap < 64 * 2048 + 40000; cap += 997) {
		struct md_layout l;
		uint64_t bm_start;

		assert_int_equal(md_layout_compute(MD_INTERNAL, -1, cap, cap, 0, 0, &l), 0);
		bm_start = l.sb_sect + (uint64_t)(int64_t)l.bm_offset;
		assert_true(l.sb_sect % 8 == 0);
		assert_true(l.sb_sect + 8 <= cap);
		assert_true(cap - (l.sb_sect + 8) < 8);
		assert_true(bm_start + l.bm_size_sect <= l.sb_sect + (uint64_t)(int64_t)l.al_offset);
		assert_true(md_layout_bm_bytes(l.max_data_sect) <= l.bm_size_sect * 512);
		assert_true(l.max_data_sect < cap);
	}
}

static void test_internal_limits(void **state)
{
	struct md_layout l;

	assert_int_equal(md_layout_compute(MD_INTERNAL, -1, 8, 8, 0, 0, &l), -ENOSPC);
	assert_int_equal(md_layout_compute(MD_INTERNAL, -1, 80, 80, 0, 0, &l), -ENOSPC);
	assert_int_equal(md_layout_compute(MD_INTERNAL, -1, 88, 88, 0, 0, &l), 0);
	assert_int_equal(l.max_data_sect, 8); /* tiny but legal: one 4 KiB block */
	assert_int_equal(md_layout_compute(MD_INTERNAL, -1, (1ULL << 41) + 8, 0, 0, 0, &l),
			 -EFBIG);
	assert_int_equal(md_layout_compute(MD_INTERNAL, -1, 1ULL << 41, 1ULL << 41, 0, 0, &l), 0);
	/* AL geometry: exactly one zero, too small, too large */
	assert_int_equal(md_layout_compute(MD_INTERNAL, -1, 1 << 21, 1 << 21, 1, 0, &l), -EINVAL);
	assert_int_equal(md_layout_compute(MD_INTERNAL, -1, 1 << 21, 1 << 21, 1, 4, &l), -EINVAL);
	assert_int_equal(md_layout_compute(MD_INTERNAL, -1, 1 << 21, 1 << 21, 2, 8192, &l),
			 -EINVAL);
}

static void test_flexible(void **state)
{
	struct md_layout l;

	/* 4 MiB metadata device, 2 stripes of 32 KiB (verified) */
	assert_int_equal(md_layout_compute(MD_FLEXIBLE, -1, 8192, 1ULL << 40, 2, 8, &l), 0);
	assert_int_equal(l.sb_sect, 0);
	assert_int_equal(l.md_size_sect, 8192);
	assert_int_equal(l.al_offset, 8);
	assert_int_equal(l.bm_offset, 136);
	assert_int_equal(l.bm_size_sect, 8056);
	assert_int_equal(l.max_data_sect, 263979008ULL);
	/* default AL */
	assert_int_equal(md_layout_compute(MD_FLEXIBLE, -1, 8192, 1ULL << 40, 0, 0, &l), 0);
	assert_int_equal(l.bm_offset, 72);
	assert_int_equal(l.max_data_sect, 266076160ULL);
	/* a small data device caps the usable size */
	assert_int_equal(md_layout_compute(MD_FLEXIBLE, -1, 8192, 12345, 0, 0, &l), 0);
	assert_int_equal(l.max_data_sect, 12345);
	/* less than 1 MiB is refused, as by the kernel */
	assert_int_equal(md_layout_compute(MD_FLEXIBLE, -1, 2047, 1 << 20, 0, 0, &l), -ENOSPC);
}

static void test_indexed(void **state)
{
	struct md_layout l;

	assert_int_equal(md_layout_compute(MD_INDEXED, 1, 3 * 262144, 1ULL << 40, 0, 0, &l), 0);
	assert_int_equal(l.sb_sect * 512, 134217728ULL);
	assert_int_equal((l.sb_sect + 8) * 512, 134221824ULL);
	assert_int_equal((l.sb_sect + (uint64_t)l.bm_offset) * 512, 134254592ULL);
	assert_int_equal(l.md_size_sect, 262144);
	assert_int_equal(md_layout_compute(MD_INDEXED, 0, 262144, 1ULL << 45, 0, 0, &l), 0);
	assert_int_equal(l.max_data_sect, 8587575296ULL);
	/* the slot must fit; striping is refused; index range */
	assert_int_equal(md_layout_compute(MD_INDEXED, 2, 3 * 262144 - 1, 1 << 20, 0, 0, &l),
			 -ENOSPC);
	assert_int_equal(md_layout_compute(MD_INDEXED, 0, 262144, 1 << 20, 2, 8, &l), -EINVAL);
	assert_int_equal(md_layout_compute(MD_INDEXED, 256, 1ULL << 40, 1 << 20, 0, 0, &l),
			 -EINVAL);
}

static void test_bitmap_sizes(void **state)
{
	/* 32 MiB of bitmap per TiB */
	assert_int_equal(md_layout_bm_bytes(1ULL << 31), 32ULL << 20);
	assert_int_equal(md_layout_bm_bytes(2097016), 32768);
	assert_int_equal(md_layout_bm_bytes(0), 0);
	assert_int_equal(md_layout_bm_bytes(1), 4096);
	assert_int_equal(md_layout_bm_bits(2097016), 262127);
	assert_int_equal(md_layout_bm_bits(7), 1);
	assert_int_equal(md_layout_bm_sect(2097152), 64);
	assert_int_equal(md_layout_bm_sect(1), 8);
	assert_int_equal(md_layout_al_extents_max(8), 6433);
	assert_int_equal(md_layout_al_extents_max(72), 65249);
	assert_int_equal(md_layout_al_extents_max(73), 65534);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_internal_table), cmocka_unit_test(test_internal_invariants),
		cmocka_unit_test(test_internal_limits), cmocka_unit_test(test_flexible),
		cmocka_unit_test(test_indexed),	       cmocka_unit_test(test_bitmap_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
