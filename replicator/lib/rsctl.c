/*
 * rsctl: resync rate controller (fixed rate, DRBD 8.4's plan-ahead
 * controller, max-buffers cap, c-min-rate throttle); rules in rsctl.h.
 *
 * The plan is a ring of c_plan_ahead slots of signed sector counts; the
 * head is the slot used by the next step, and taking it out leaves a zero
 * slot at the far end of the plan. All arithmetic is in int64_t, and the
 * inputs are clamped to 32 bits, so nothing can overflow (the largest
 * products: resync-rate * 0.2 * 300 steps < 2^28, sect_in *
 * c-delay-target < 2^39).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rsctl.h"

#define KIB_PER_BLOCK 4u
#define STEPS_PER_SEC (1000u / RSCTL_STEP_MS)
#define RATE_MAX (4u << 20) /* 4 GiB/s in KiB/s */

struct rsctl {
	struct rsctl_params p;
	/* dynamic controller */
	int64_t plan[RSCTL_PLAN_MAX];
	unsigned int head;
	int64_t planned;   /* sum of the plan */
	int64_t dyn_carry; /* sectors below a whole block, 0..7 */
	/* fixed rate: KiB not yet requested, below one block's worth per step */
	uint64_t fixed_carry;
	uint64_t want_rate; /* KiB/s, last step */
	/* recent rate */
	uint64_t arrived[RSCTL_RATE_STEPS];
	unsigned int arrived_next, arrived_n;
	uint64_t arrived_sum;
	/* throttle */
	uint64_t last_app;
	bool have_last_app;
};

static int rsctl_check(const struct rsctl_params *p)
{
	if (p->resync_rate < 1 || p->resync_rate > RATE_MAX || p->c_plan_ahead > RSCTL_PLAN_MAX ||
	    p->c_delay_target < 1 || p->c_delay_target > 100 || p->c_fill_target > (1u << 20) ||
	    p->c_max_rate < 250 || p->c_max_rate > RATE_MAX || p->c_min_rate > RATE_MAX ||
	    p->max_buffers < 32 || p->max_buffers > 131072)
		return -EINVAL;
	return 0;
}

int rsctl_new(const struct rsctl_params *p, struct rsctl **out)
{
	struct rsctl *ctl;
	int rc = rsctl_check(p);

	*out = NULL;
	if (rc < 0)
		return rc;
	ctl = calloc(1, sizeof(*ctl));
	if (!ctl)
		return -ENOMEM;
	ctl->p = *p;
	*out = ctl;
	return 0;
}

void rsctl_free(struct rsctl *ctl)
{
	free(ctl);
}

static void rsctl_plan_clear(struct rsctl *ctl)
{
	memset(ctl->plan, 0, sizeof(ctl->plan));
	ctl->head = 0;
	ctl->planned = 0;
}

int rsctl_set_params(struct rsctl *ctl, const struct rsctl_params *p)
{
	int rc = rsctl_check(p);

	if (rc < 0)
		return rc;
	if (p->c_plan_ahead != ctl->p.c_plan_ahead) {
		rsctl_plan_clear(ctl);
		ctl->dyn_carry = 0;
	}
	if (p->resync_rate != ctl->p.resync_rate)
		ctl->fixed_carry = 0;
	ctl->p = *p;
	return 0;
}

void rsctl_reset(struct rsctl *ctl)
{
	rsctl_plan_clear(ctl);
	ctl->fixed_carry = 0;
	ctl->dyn_carry = 0;
	ctl->want_rate = 0;
	memset(ctl->arrived, 0, sizeof(ctl->arrived));
	ctl->arrived_next = ctl->arrived_n = 0;
	ctl->arrived_sum = 0;
	ctl->have_last_app = false;
}

/* ---------------------------------------------------------------- controller */

/* Fixed rate: blocks for this step, the fraction carried. */
static uint64_t rsctl_fixed(struct rsctl *ctl)
{
	uint64_t blocks;

	/* KiB/s accumulate per step; one block per 4 KiB x 10 steps/s */
	ctl->fixed_carry += ctl->p.resync_rate;
	blocks = ctl->fixed_carry / (KIB_PER_BLOCK * STEPS_PER_SEC);
	ctl->fixed_carry %= KIB_PER_BLOCK * STEPS_PER_SEC;
	ctl->want_rate = ctl->p.resync_rate;
	return blocks;
}

/* The plan-ahead controller: blocks for this step. */
static uint64_t rsctl_dynamic(struct rsctl *ctl, uint64_t sect_in, uint64_t in_flight)
{
	const int64_t steps = ctl->p.c_plan_ahead;
	int64_t want, correction, cps, curr, req, max_sect;
	unsigned int i;

	if (in_flight + sect_in == 0) /* start of resync, or stalled */
		want = (int64_t)ctl->p.resync_rate * 2 / STEPS_PER_SEC * steps;
	else if (ctl->p.c_fill_target)
		want = ctl->p.c_fill_target;
	else
		want = (int64_t)sect_in * ctl->p.c_delay_target;

	correction = want - (int64_t)in_flight - ctl->planned;
	cps = correction / steps; /* truncated towards zero, as DRBD */
	for (i = 0; i < steps; i++)
		ctl->plan[i] += cps;
	ctl->planned += cps * steps;

	curr = ctl->plan[ctl->head];
	ctl->plan[ctl->head] = 0;
	ctl->head = (ctl->head + 1) % (unsigned int)steps;
	ctl->planned -= curr;

	/* DRBD drops the part below a block here (up to 7 sectors a step,
	 * which the plan already counted as requested); rsctl carries it */
	req = (int64_t)sect_in + curr + ctl->dyn_carry;
	max_sect = (int64_t)ctl->p.c_max_rate * 2 / STEPS_PER_SEC;
	if (req < 0)
		req = 0;
	if (req > max_sect)
		req = max_sect;
	ctl->dyn_carry = req % RSCTL_SECT_PER_BLOCK;

	ctl->want_rate = (uint64_t)req / RSCTL_SECT_PER_BLOCK * KIB_PER_BLOCK * STEPS_PER_SEC;
	return (uint64_t)req / RSCTL_SECT_PER_BLOCK;
}

static void rsctl_note_arrived(struct rsctl *ctl, uint64_t sect_in)
{
	ctl->arrived_sum -= ctl->arrived[ctl->arrived_next];
	ctl->arrived[ctl->arrived_next] = sect_in;
	ctl->arrived_sum += sect_in;
	ctl->arrived_next = (ctl->arrived_next + 1) % RSCTL_RATE_STEPS;
	if (ctl->arrived_n < RSCTL_RATE_STEPS)
		ctl->arrived_n++;
}

uint64_t rsctl_step(struct rsctl *ctl, uint64_t sect_in, uint64_t in_flight)
{
	uint64_t blocks, mxb = ctl->p.max_buffers / 2, busy;

	/* sector counts beyond any real link would only risk overflow */
	if (sect_in > UINT32_MAX)
		sect_in = UINT32_MAX;
	if (in_flight > UINT32_MAX)
		in_flight = UINT32_MAX;
	rsctl_note_arrived(ctl, sect_in);

	if (ctl->p.c_plan_ahead)
		blocks = rsctl_dynamic(ctl, sect_in, in_flight);
	else
		blocks = rsctl_fixed(ctl);

	/* at most max-buffers / 2 blocks in flight */
	busy = in_flight / RSCTL_SECT_PER_BLOCK;
	if (busy >= mxb)
		blocks = 0;
	else if (blocks > mxb - busy)
		blocks = mxb - busy;
	return blocks * RSCTL_SECT_PER_BLOCK;
}

uint64_t rsctl_want_rate(const struct rsctl *ctl)
{
	return ctl->want_rate;
}

uint64_t rsctl_recent_rate(const struct rsctl *ctl)
{
	if (!ctl->arrived_n)
		return 0;
	/* sectors / 2 = KiB, over arrived_n tenths of a second */
	return ctl->arrived_sum * STEPS_PER_SEC / 2 / ctl->arrived_n;
}

/* ---------------------------------------------------------------- throttle */

bool rsctl_should_throttle(struct rsctl *ctl, const struct rsctl_io *io)
{
	bool seen;

	if (ctl->p.c_min_rate == 0)
		return false;
	if (!ctl->have_last_app) {
		/* the first look only takes the counter's starting point */
		ctl->last_app = io->app_sectors;
		ctl->have_last_app = true;
	}
	seen = io->app_sectors - ctl->last_app > RSCTL_APP_EVENTS;
	if (!seen && !io->al_waiting)
		return false;
	ctl->last_app = io->app_sectors;
	if (io->app_waits_here)
		return false;
	return io->rate_kib > ctl->p.c_min_rate;
}
