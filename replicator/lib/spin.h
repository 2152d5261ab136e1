/*
 * spin: how long a thread that expects an answer soon may busy-poll for it
 * before it sleeps (net { ack-poll-usec N; }, doc/perf-repl.md). The
 * budget starts at N µs; a spin that gets its answer lets the next one
 * have twice as long (up to N), one that does not halves it, and below
 * SPIN_MIN_US the thread sleeps at once for SPIN_BACKOFF waits before it
 * tries again with N/4. A link or a peer slower than N therefore costs a
 * few wasted spins per SPIN_BACKOFF waits, not one per wait. One thread
 * uses a spin at a time; spin_stats() may be called from any thread.
 */
#ifndef TANDEM_SPIN_H
#define TANDEM_SPIN_H

#include <stdbool.h>
#include <stdint.h>

#define SPIN_MAX_US  1000u /* the largest budget allowed */
#define SPIN_MIN_US  2u    /* below this the spin is not worth its syscalls */
#define SPIN_BACKOFF 64u   /* waits without a spin after the budget fell */

struct spin;

struct spin_stats {
	uint32_t max_us, cur_us; /* the configured budget, the current one */
	uint64_t spins, hits;    /* spins tried, of which got their answer */
	uint64_t spent_us;       /* time spent spinning, in all */
};

/* max_us 1..SPIN_MAX_US, else -EINVAL; -ENOMEM. */
int spin_new(uint32_t max_us, struct spin **out);
void spin_free(struct spin *s);
/* µs to spin for the coming wait; 0: sleep at once. */
uint32_t spin_budget(struct spin *s);
/* The spin that spin_budget() allowed ended: hit if the answer came
 * within it, after spent_ns. */
void spin_done(struct spin *s, bool hit, uint64_t spent_ns);
void spin_stats(const struct spin *s, struct spin_stats *st);

#endif
