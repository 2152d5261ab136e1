/*
 * ratelimit: a token bucket of log lines. It holds up to `burst` tokens
 * and gains one every `interval_ms`; a line takes one or is left out and
 * counted.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ratelimit.h"

struct ratelimit {
	pthread_mutex_t lock;
	unsigned int burst, interval_ms;
	unsigned int tokens;
	bool started;
	uint64_t refill_ms;    /* when the bucket last gained a token (or filled) */
	uint64_t allowed_ms;   /* when the last line went out */
	unsigned int left_out; /* since then */
	uint64_t total;
};

int ratelimit_new(unsigned int burst, unsigned int interval_ms, struct ratelimit **out)
{
	struct ratelimit *rl;

	if (!burst || !interval_ms)
		return -EINVAL;
	rl = calloc(1, sizeof(*rl));
	if (!rl)
		return -ENOMEM;
	pthread_mutex_init(&rl->lock, NULL);
	rl->burst = burst;
	rl->interval_ms = interval_ms;
	rl->tokens = burst;
	*out = rl;
	return 0;
}

void ratelimit_reset(struct ratelimit *rl)
{
	pthread_mutex_lock(&rl->lock);
	rl->tokens = rl->burst;
	rl->started = false;
	rl->left_out = 0;
	pthread_mutex_unlock(&rl->lock);
}

void ratelimit_unrefuse(struct ratelimit *rl)
{
	pthread_mutex_lock(&rl->lock);
	if (rl->left_out && rl->left_out < UINT32_MAX)
		rl->left_out--;
	pthread_mutex_unlock(&rl->lock);
}

void ratelimit_free(struct ratelimit *rl)
{
	if (!rl)
		return;
	pthread_mutex_destroy(&rl->lock);
	free(rl);
}

static void refill(struct ratelimit *rl, uint64_t now)
{
	uint64_t gained;

	if (!rl->started) {
		rl->started = true;
		rl->refill_ms = now;
		return;
	}
	if (now < rl->refill_ms) /* not monotonic: start again from here */
		rl->refill_ms = now;
	gained = (now - rl->refill_ms) / rl->interval_ms;
	if (!gained)
		return;
	if (gained >= rl->burst - rl->tokens) {
		rl->tokens = rl->burst;
		rl->refill_ms = now;
	} else {
		rl->tokens += (unsigned int)gained;
		rl->refill_ms += gained * rl->interval_ms;
	}
}

bool ratelimit_allow(struct ratelimit *rl, uint64_t now_ms, char *note, size_t len)
{
	unsigned int left_out;
	uint64_t since;

	pthread_mutex_lock(&rl->lock);
	rl->total++;
	refill(rl, now_ms);
	if (!rl->tokens) {
		if (rl->left_out < UINT32_MAX)
			rl->left_out++;
		pthread_mutex_unlock(&rl->lock);
		return false;
	}
	rl->tokens--;
	left_out = rl->left_out;
	since = now_ms >= rl->allowed_ms ? now_ms - rl->allowed_ms : 0;
	rl->left_out = 0;
	rl->allowed_ms = now_ms;
	pthread_mutex_unlock(&rl->lock);
	if (note && len) {
		if (left_out)
			snprintf(note, len, " (and %u more like it in the last %llu s)", left_out,
				 (unsigned long long)((since + 999) / 1000));
		else
			note[0] = '\0';
	}
	return true;
}

bool ratelimit_ok(struct ratelimit *rl, char *note, size_t len)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ratelimit_allow(rl, (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000,
			       note, len);
}

uint64_t ratelimit_total(const struct ratelimit *rl)
{
	uint64_t n;

	pthread_mutex_lock(&((struct ratelimit *)rl)->lock);
	n = rl->total;
	pthread_mutex_unlock(&((struct ratelimit *)rl)->lock);
	return n;
}
