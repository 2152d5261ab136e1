/*
 * test-ratelimit: the token bucket of log lines, on a clock the test
 * moves: the burst at once, then one per interval, the count of those
 * left out in the next line's note, and the bounds of ratelimit_new().
 */
#include "unit.h"

#include "ratelimit.h"

static void test_bounds(void **state)
{
	struct ratelimit *rl = NULL;

	(void)state;
	assert_int_equal(ratelimit_new(0, 1000, &rl), -EINVAL);
	assert_int_equal(ratelimit_new(1, 0, &rl), -EINVAL);
	assert_int_equal(ratelimit_new(1, 1, &rl), 0);
	ratelimit_free(rl);
	ratelimit_free(NULL);
}

/* First at once, then at most one per 10 s, with the count left out. */
static void test_one_per_interval(void **state)
{
	struct ratelimit *rl;
	char note[96];
	uint64_t t = 5000;
	unsigned int i, allowed = 0;

	(void)state;
	assert_int_equal(ratelimit_new(1, 10000, &rl), 0);
	assert_true(ratelimit_allow(rl, t, note, sizeof(note)));
	assert_string_equal(note, "");
	/* a flood: 148920 lines in 3 s, none of them goes out */
	for (i = 0; i < 148920; i++)
		allowed += ratelimit_allow(rl, t + i / 50, note, sizeof(note));
	assert_int_equal(allowed, 0);
	assert_false(ratelimit_allow(rl, t + 9999, note, sizeof(note)));
	assert_true(ratelimit_allow(rl, t + 10000, note, sizeof(note)));
	assert_string_equal(note, " (and 148921 more like it in the last 10 s)");
	assert_false(ratelimit_allow(rl, t + 10001, NULL, 0));
	assert_true(ratelimit_allow(rl, t + 20001, note, sizeof(note)));
	assert_string_equal(note, " (and 1 more like it in the last 11 s)");
	/* a quiet spell: the next one goes out at once, with nothing to add */
	assert_true(ratelimit_allow(rl, t + 90000, note, sizeof(note)));
	assert_string_equal(note, "");
	assert_int_equal(ratelimit_total(rl), 148920 + 6);
	ratelimit_free(rl);
}

/* A reset starts a new episode: the next line goes out at once, with no
 * count carried over; the total stays. */
static void test_reset(void **state)
{
	struct ratelimit *rl;
	char note[96];

	(void)state;
	assert_int_equal(ratelimit_new(1, 10000, &rl), 0);
	assert_true(ratelimit_allow(rl, 1000, note, sizeof(note)));
	assert_false(ratelimit_allow(rl, 1001, note, sizeof(note)));
	assert_false(ratelimit_allow(rl, 1002, note, sizeof(note)));
	ratelimit_reset(rl);
	assert_true(ratelimit_allow(rl, 1003, note, sizeof(note)));
	assert_string_equal(note, "");
	assert_false(ratelimit_allow(rl, 1004, note, sizeof(note)));
	assert_int_equal(ratelimit_total(rl), 5);
	ratelimit_free(rl);
}

/* A line refused here but logged by another limiter is not counted as
 * left out in the next note. */
static void test_unrefuse(void **state)
{
	struct ratelimit *rl;
	char note[96];

	(void)state;
	assert_int_equal(ratelimit_new(1, 10000, &rl), 0);
	assert_true(ratelimit_allow(rl, 1000, note, sizeof(note)));
	assert_false(ratelimit_allow(rl, 1001, note, sizeof(note)));
	assert_false(ratelimit_allow(rl, 1002, note, sizeof(note)));
	ratelimit_unrefuse(rl); /* 1002 went out */
	assert_false(ratelimit_allow(rl, 1003, note, sizeof(note)));
	assert_true(ratelimit_allow(rl, 11000, note, sizeof(note)));
	assert_string_equal(note, " (and 2 more like it in the last 10 s)");
	ratelimit_unrefuse(rl); /* nothing left out: stays 0 */
	assert_true(ratelimit_allow(rl, 21000, note, sizeof(note)));
	assert_string_equal(note, "");
	ratelimit_free(rl);
}

/* A burst goes out whole; the bucket refills one token per interval and
 * never holds more than the burst. */
static void test_burst(void **state)
{
	struct ratelimit *rl;
	unsigned int i, n = 0;

	(void)state;
	assert_int_equal(ratelimit_new(4, 1000, &rl), 0);
	for (i = 0; i < 10; i++)
		n += ratelimit_allow(rl, 0, NULL, 0);
	assert_int_equal(n, 4);
	assert_false(ratelimit_allow(rl, 999, NULL, 0));
	assert_true(ratelimit_allow(rl, 1000, NULL, 0));
	assert_false(ratelimit_allow(rl, 1500, NULL, 0));
	/* an hour later: a full bucket, not 3600 tokens */
	for (i = 0, n = 0; i < 10; i++)
		n += ratelimit_allow(rl, 3600000, NULL, 0);
	assert_int_equal(n, 4);
	/* two intervals give two tokens */
	for (i = 0, n = 0; i < 10; i++)
		n += ratelimit_allow(rl, 3602000, NULL, 0);
	assert_int_equal(n, 2);
	ratelimit_free(rl);
}

/* A clock that goes back does not stop the lines for good. */
static void test_clock_back(void **state)
{
	struct ratelimit *rl;

	(void)state;
	assert_int_equal(ratelimit_new(1, 1000, &rl), 0);
	assert_true(ratelimit_allow(rl, 100000, NULL, 0));
	assert_false(ratelimit_allow(rl, 50, NULL, 0));
	assert_true(ratelimit_allow(rl, 1050, NULL, 0));
	ratelimit_free(rl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds),
		cmocka_unit_test(test_one_per_interval),
		cmocka_unit_test(test_reset),
		cmocka_unit_test(test_unrefuse),
		cmocka_unit_test(test_burst),
		cmocka_unit_test(test_clock_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
