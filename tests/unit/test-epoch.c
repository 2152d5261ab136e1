/*
 * test-epoch: the write-barrier bookkeeping of the sending node, as
 * tables of steps: write, complete, flush, ack, with what each returns.
 */
#include "unit.h"

#include "epoch.h"

enum op { W, C, F, A, R };

struct step {
	enum op op;
	uint32_t nr;    /* C: the epoch completed; A: the ack's number */
	uint32_t size;  /* A: set_size */
	int rc;         /* expected return */
	uint32_t out;   /* W: epoch (rc 0) or barrier (rc 1); F: barrier; A: writes */
};

struct row {
	const char *name;
	uint32_t max_size, max_open;
	struct step steps[16];
	uint32_t n;
	uint32_t unacked, oldest; /* at the end */
};

static const struct row rows[] = {
	{"writes share an epoch until one completes", 100, 4,
	 {{W, 0, 0, 0, 1}, {W, 0, 0, 0, 1}, {C, 1, 0, 0, 0}, {W, 0, 0, 1, 1}, {W, 0, 0, 0, 2}},
	 5, 1, 1},
	{"the barrier is sent before the next write, not at completion", 100, 4,
	 {{W, 0, 0, 0, 1}, {C, 1, 0, 0, 0}, {C, 1, 0, 0, 0}},
	 3, 0, 1},
	{"a completion of an older epoch closes nothing", 100, 4,
	 {{W, 0, 0, 0, 1}, {C, 1, 0, 0, 0}, {W, 0, 0, 1, 1}, {W, 0, 0, 0, 2}, {C, 1, 0, 0, 0},
	  {W, 0, 0, 0, 2}},
	 6, 1, 1},
	{"max-epoch-size closes a full epoch", 2, 4,
	 {{W, 0, 0, 0, 1}, {W, 0, 0, 0, 1}, {W, 0, 0, 1, 1}, {W, 0, 0, 0, 2}},
	 4, 1, 1},
	{"acks in order release epochs and say their size", 2, 4,
	 {{W, 0, 0, 0, 1}, {W, 0, 0, 0, 1}, {W, 0, 0, 1, 1}, {W, 0, 0, 0, 2}, {F, 0, 0, 0, 2},
	  {A, 1, 2, 0, 2}, {A, 2, 1, 0, 1}},
	 7, 0, 3},
	{"an ack out of order is a protocol error", 1, 4,
	 {{W, 0, 0, 0, 1}, {W, 0, 0, 1, 1}, {W, 0, 0, 0, 2}, {F, 0, 0, 0, 2}, {A, 2, 1, -EPROTO, 0}},
	 5, 2, 1},
	{"a wrong set_size is a protocol error", 100, 4,
	 {{W, 0, 0, 0, 1}, {W, 0, 0, 0, 1}, {F, 0, 0, 0, 1}, {A, 1, 3, -EPROTO, 0},
	  {A, 1, 2, 0, 2}},
	 5, 0, 2},
	{"an ack with nothing waiting is a protocol error", 100, 4,
	 {{A, 1, 0, -EPROTO, 0}, {W, 0, 0, 0, 1}, {A, 1, 1, -EPROTO, 0}},
	 3, 0, 1},
	{"an empty flush still closes an epoch", 100, 4,
	 {{F, 0, 0, 0, 1}, {A, 1, 0, 0, 0}, {W, 0, 0, 0, 2}},
	 3, 0, 2},
	{"too many unacked epochs: -EBUSY until an ack", 1, 2,
	 {{W, 0, 0, 0, 1}, {W, 0, 0, 1, 1}, {W, 0, 0, 0, 2}, {W, 0, 0, 1, 2}, {W, 0, 0, 0, 3},
	  {W, 0, 0, -EBUSY, 0}, {F, 0, 0, -EBUSY, 0}, {A, 1, 1, 0, 1}, {W, 0, 0, 1, 3},
	  {W, 0, 0, 0, 4}},
	 10, 2, 2},
	{"reset starts over", 100, 4,
	 {{W, 0, 0, 0, 1}, {F, 0, 0, 0, 1}, {W, 0, 0, 0, 2}, {R, 0, 0, 0, 0}, {W, 0, 0, 0, 1},
	  {A, 1, 1, -EPROTO, 0}},
	 6, 0, 1},
};

static void test_rows(void **state)
{
	size_t i, k;

	(void)state;
	for (i = 0; i < UNIT_ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];
		struct epoch *e;

		print_message("# %s\n", r->name);
		assert_int_equal(epoch_new(r->max_size, r->max_open, &e), 0);
		for (k = 0; k < r->n; k++) {
			const struct step *s = &r->steps[k];
			uint32_t nr = 0, bar = 0, writes = 0;
			int rc = 0;

			switch (s->op) {
			case W:
				rc = epoch_write(e, &nr, &bar);
				if (rc == 0)
					assert_int_equal(nr, s->out);
				else if (rc == 1)
					assert_int_equal(bar, s->out);
				break;
			case C:
				epoch_completed(e, s->nr);
				break;
			case F:
				rc = epoch_flush(e, &bar);
				if (rc == 0)
					assert_int_equal(bar, s->out);
				break;
			case A:
				rc = epoch_ack(e, s->nr, s->size, &writes);
				if (rc == 0)
					assert_int_equal(writes, s->out);
				break;
			case R:
				epoch_reset(e);
				break;
			}
			if (rc != s->rc)
				fail_msg("%s: step %zu returned %d, expected %d", r->name, k, rc, s->rc);
		}
		assert_int_equal(epoch_unacked(e), r->unacked);
		assert_int_equal(epoch_oldest(e), r->oldest);
		epoch_free(e);
	}
}

static void test_new_bounds(void **state)
{
	struct epoch *e;

	(void)state;
	assert_int_equal(epoch_new(0, 4, &e), -EINVAL);
	assert_int_equal(epoch_new(20001, 4, &e), -EINVAL);
	assert_int_equal(epoch_new(1, 1, &e), -EINVAL);
	assert_int_equal(epoch_new(20000, 2, &e), 0);
	epoch_free(e);
	epoch_free(NULL);
}

/* Many epochs through a small ring: numbers and sizes stay right. */
static void test_ring_wraps(void **state)
{
	struct epoch *e;
	uint32_t i, nr, bar, writes;

	(void)state;
	assert_int_equal(epoch_new(3, 2, &e), 0);
	for (i = 1; i <= 1000; i++) {
		assert_int_equal(epoch_write(e, &nr, &bar), 0);
		assert_int_equal(nr, i);
		assert_int_equal(epoch_flush(e, &bar), 0);
		assert_int_equal(bar, i);
		assert_int_equal(epoch_ack(e, i, 1, &writes), 0);
		assert_int_equal(writes, 1);
	}
	assert_int_equal(epoch_unacked(e), 0);
	epoch_free(e);
}

/* A completion makes the close due at once; nothing is due otherwise. */
static void test_close_due(void **state)
{
	struct epoch *e;
	uint32_t nr, bar = 0, writes;

	(void)state;
	assert_int_equal(epoch_new(100, 4, &e), 0);
	assert_int_equal(epoch_close_due(e, &bar), 0); /* empty */
	assert_int_equal(epoch_write(e, &nr, &bar), 0);
	assert_int_equal(epoch_close_due(e, &bar), 0); /* nothing completed */
	epoch_completed(e, 1);
	assert_int_equal(epoch_close_due(e, &bar), 1);
	assert_int_equal(bar, 1);
	assert_int_equal(epoch_close_due(e, &bar), 0); /* epoch 2 is empty */
	assert_int_equal(epoch_write(e, &nr, &bar), 0);
	assert_int_equal(nr, 2);
	assert_int_equal(epoch_ack(e, 1, 1, &writes), 0);
	epoch_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rows),
		cmocka_unit_test(test_new_bounds),
		cmocka_unit_test(test_ring_wraps),
		cmocka_unit_test(test_close_due),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
