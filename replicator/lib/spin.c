/*
 * spin: an adaptive busy-poll budget (see spin.h). The counters are read
 * by spin_stats() from other threads, so they are atomics; the budget and
 * the back-off belong to the one thread that spins.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "spin.h"

struct spin {
	uint32_t max_us;
	uint32_t cur_us;  /* atomic: the budget of the next spin */
	uint32_t skip;    /* waits left to sleep through at once */
	uint64_t spins, hits, spent_us; /* atomics */
};

int spin_new(uint32_t max_us, struct spin **out)
{
	struct spin *s;

	if (max_us < 1 || max_us > SPIN_MAX_US)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->max_us = max_us;
	s->cur_us = max_us;
	*out = s;
	return 0;
}

void spin_free(struct spin *s)
{
	free(s);
}

uint32_t spin_budget(struct spin *s)
{
	uint32_t cur = __atomic_load_n(&s->cur_us, __ATOMIC_RELAXED);

	if (cur)
		return cur;
	if (s->skip) {
		s->skip--;
		return 0;
	}
	/* the back-off is over: try again, with a quarter of the budget */
	cur = s->max_us / 4 >= SPIN_MIN_US ? s->max_us / 4 : s->max_us;
	__atomic_store_n(&s->cur_us, cur, __ATOMIC_RELAXED);
	return cur;
}

void spin_done(struct spin *s, bool hit, uint64_t spent_ns)
{
	uint32_t cur = __atomic_load_n(&s->cur_us, __ATOMIC_RELAXED);

	__atomic_add_fetch(&s->spins, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->spent_us, spent_ns / 1000, __ATOMIC_RELAXED);
	if (hit) {
		__atomic_add_fetch(&s->hits, 1, __ATOMIC_RELAXED);
		cur = cur * 2 < s->max_us ? cur * 2 : s->max_us;
	} else {
		cur /= 2;
		if (cur < SPIN_MIN_US && cur < s->max_us) {
			cur = 0;
			s->skip = SPIN_BACKOFF;
		}
	}
	__atomic_store_n(&s->cur_us, cur, __ATOMIC_RELAXED);
}

void spin_stats(const struct spin *s, struct spin_stats *st)
{
	st->max_us = s->max_us;
	st->cur_us = __atomic_load_n(&s->cur_us, __ATOMIC_RELAXED);
	st->spins = __atomic_load_n(&s->spins, __ATOMIC_RELAXED);
	st->hits = __atomic_load_n(&s->hits, __ATOMIC_RELAXED);
	st->spent_us = __atomic_load_n(&s->spent_us, __ATOMIC_RELAXED);
}
