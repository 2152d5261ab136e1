/*
 * test-spin: the adaptive busy-poll budget, as sequences of spins that
 * hit or miss and the budget each leaves for the next wait.
 */
#include "unit.h"

#include "spin.h"

static void bad_budgets(void **state)
{
	struct spin *s = NULL;

	(void)state;
	assert_int_equal(spin_new(0, &s), -EINVAL);
	assert_int_equal(spin_new(SPIN_MAX_US + 1, &s), -EINVAL);
	assert_int_equal(spin_new(SPIN_MAX_US, &s), 0);
	assert_int_equal(spin_budget(s), SPIN_MAX_US);
	spin_free(s);
}

/* misses halve the budget; a hit doubles it, never above the maximum */
static void misses_halve_hits_double(void **state)
{
	struct spin *s;
	struct spin_stats st;

	(void)state;
	assert_int_equal(spin_new(100, &s), 0);
	assert_int_equal(spin_budget(s), 100);
	spin_done(s, false, 100000);
	assert_int_equal(spin_budget(s), 50);
	spin_done(s, false, 50000);
	assert_int_equal(spin_budget(s), 25);
	spin_done(s, true, 10000);
	assert_int_equal(spin_budget(s), 50);
	spin_done(s, true, 10000);
	assert_int_equal(spin_budget(s), 100);
	spin_done(s, true, 10000);
	assert_int_equal(spin_budget(s), 100);
	spin_stats(s, &st);
	assert_int_equal(st.max_us, 100);
	assert_int_equal(st.cur_us, 100);
	assert_int_equal(st.spins, 5);
	assert_int_equal(st.hits, 3);
	assert_int_equal(st.spent_us, 180);
	spin_free(s);
}

/* when spinning never pays, the thread sleeps at once for SPIN_BACKOFF
 * waits, then tries a quarter of the budget */
static void back_off_when_it_never_pays(void **state)
{
	struct spin *s;
	uint32_t b, zeros = 0;
	int misses = 0;

	(void)state;
	assert_int_equal(spin_new(100, &s), 0);
	while ((b = spin_budget(s)) != 0) {
		spin_done(s, false, (uint64_t)b * 1000);
		misses++;
	}
	/* 100 50 25 12 6 3 (then 1 < SPIN_MIN_US): six spins wasted */
	assert_int_equal(misses, 6);
	while ((b = spin_budget(s)) == 0)
		zeros++;
	assert_int_equal(zeros + 1, SPIN_BACKOFF); /* + the wait that ended the loop above */
	assert_int_equal(b, 25);
	/* a hit then brings the whole budget back */
	spin_done(s, true, 5000);
	spin_done(s, true, 5000);
	assert_int_equal(spin_budget(s), 100);
	spin_free(s);
}

/* a budget below SPIN_MIN_US is kept as configured */
static void tiny_budget(void **state)
{
	struct spin *s;

	(void)state;
	assert_int_equal(spin_new(1, &s), 0);
	assert_int_equal(spin_budget(s), 1);
	spin_done(s, true, 500);
	assert_int_equal(spin_budget(s), 1);
	spin_done(s, false, 1000);
	assert_int_equal(spin_budget(s), 0);
	spin_free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(bad_budgets),
		cmocka_unit_test(misses_halve_hits_double),
		cmocka_unit_test(back_off_when_it_never_pays),
		cmocka_unit_test(tiny_budget),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
