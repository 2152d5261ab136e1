/*
 * test-rsctl: the resync rate controller. Fixed-rate numbers, the first
 * dynamic step, convergence of the dynamic controller over a simulated
 * link (bandwidth and latency) towards c-fill-target or c-delay-target
 * worth of data in flight, the c-max-rate clamp, the max-buffers cap, the
 * c-min-rate throttle as a table, parameter checks.
 */
#include "unit.h"

#include <inttypes.h>

#include "rsctl.h"

static void free_ctl(void *p)
{
	rsctl_free(p);
}

static struct rsctl *new_ctl(const struct rsctl_params *p)
{
	struct rsctl *ctl = NULL;

	assert_int_equal(rsctl_new(p, &ctl), 0);
	assert_non_null(ctl);
	return unit_defer(free_ctl, ctl);
}

/* ---------------------------------------------------------------- fixed rate */

static void test_fixed(void **state)
{
	static const struct {
		uint32_t rate; /* KiB/s */
		unsigned int steps;
		uint64_t sectors; /* requested over all steps */
		uint64_t first;	  /* in the first step */
	} t[] = {
	    {250, 1, 48, 48},	/* 6.25 blocks: 6, the quarter carried */
	    {250, 4, 200, 48},	/* 25 blocks in 0.4 s */
	    {250, 10, 496, 48}, /* 62.5 blocks: 62 */
	    {40, 1, 8, 8},	/* exactly one block per step */
	    {39, 1, 0, 0},	/* DRBD would never request anything */
	    {39, 40, 312, 0},	/* ... rsctl gets 39 blocks in 4 s */
	    {1, 40, 8, 0},	/* 1 KiB/s: one block every 4 s */
	    {1, 39, 0, 0},
	    {102400, 1, 20480, 20480}, /* 100 MiB/s: 2560 blocks */
	    {102400, 10, 204800, 20480},
	    /* 4 GiB/s = 104857.6 blocks, more than max-buffers 131072 / 2 */
	    {4194304, 1, 524288, 524288},
	    {4194304, 5, 5 * 524288, 524288},
	    {2621440, 5, 5 * 524288, 524288}, /* exactly the cap */
	};
	unsigned int i, s;

	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
		struct rsctl *ctl;
		uint64_t sum = 0, got;

		p.c_plan_ahead = 0;
		p.resync_rate = t[i].rate;
		p.max_buffers = 131072; /* out of the way */
		ctl = new_ctl(&p);
		for (s = 0; s < t[i].steps; s++) {
			/* what arrives and what is in flight do not matter */
			got = rsctl_step(ctl, s * 8, 0);
			assert_int_equal(got % 8, 0);
			if (s == 0 && got != t[i].first)
				fail_msg("rate %u: first step %" PRIu64, t[i].rate, got);
			sum += got;
		}
		if (sum != t[i].sectors)
			fail_msg("rate %u, %u steps: %" PRIu64 " sectors, expected %" PRIu64,
				 t[i].rate, t[i].steps, sum, t[i].sectors);
		assert_int_equal(rsctl_want_rate(ctl), t[i].rate);
		unit_release(ctl);
	}
}

/* ---------------------------------------------------------------- max-buffers */

static void test_max_buffers(void **state)
{
	static const struct {
		uint64_t in_flight; /* sectors */
		uint64_t sectors;
	} t[] = {
	    {0, 8192},		    /* 1024 blocks = max-buffers 2048 / 2 */
	    {7, 8192},		    /* a partial block does not count */
	    {8, 8184}, {8000, 192}, /* 1000 blocks in flight: 24 more */
	    {8191, 8}, {8192, 0},   {100000, 0}, {UINT64_MAX, 0},
	};
	unsigned int i, mode;

	for (mode = 0; mode < 2; mode++) {
		for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
			struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
			struct rsctl *ctl;
			uint64_t got;

			/* both modes would ask for far more than the cap */
			p.resync_rate = 1024000;
			p.c_max_rate = 1024000;
			p.c_fill_target = 1 << 20;
			p.c_plan_ahead = mode ? 1 : 0;
			ctl = new_ctl(&p);
			got = rsctl_step(ctl, 0, t[i].in_flight);
			if (got != t[i].sectors)
				fail_msg(
				    "%s, in flight %" PRIu64 ": %" PRIu64 ", expected %" PRIu64,
				    mode ? "dynamic" : "fixed", t[i].in_flight, got, t[i].sectors);
			unit_release(ctl);
		}
	}
}

/* ---------------------------------------------------------------- dynamic */

/* The first step requests resync-rate's worth, like fixed mode would. */
static void test_first_step(void **state)
{
	static const uint32_t rates[] = {250, 4000, 10000, 40, 45};
	static const uint32_t plans[] = {1, 20, 300};
	unsigned int i, j;

	for (i = 0; i < UNIT_ARRAY_SIZE(rates); i++) {
		for (j = 0; j < UNIT_ARRAY_SIZE(plans); j++) {
			struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
			struct rsctl *ctl;
			uint64_t want = (uint64_t)rates[i] * 2 / 10 / 8 * 8;

			p.resync_rate = rates[i];
			p.c_plan_ahead = plans[j];
			ctl = new_ctl(&p);
			assert_int_equal(rsctl_step(ctl, 0, 0), want);
			assert_int_equal(rsctl_want_rate(ctl), want / 8 * 40);
			unit_release(ctl);
		}
	}
}

/* DRBD's arithmetic, step by step, for the defaults. */
static void test_dynamic_steps(void **state)
{
	struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
	struct rsctl *ctl;

	p.c_plan_ahead = 4;
	p.c_fill_target = 400;
	p.max_buffers = 131072;
	ctl = new_ctl(&p);
	/* start: want = 50 * 4 = 200, cps 50 in every slot; take 50 -> 48 */
	assert_int_equal(rsctl_step(ctl, 0, 0), 48);
	/* planned 150; want 400 - 48 in flight - 150 = 202 -> cps 50 (slots
	 * 100, 100, 100, 50); take 100; request 0 + 100 -> 96 */
	assert_int_equal(rsctl_step(ctl, 0, 48), 96);
	/* planned 250; 48 arrived, 96 in flight: 400 - 96 - 250 = 54 -> cps
	 * 13 (slots 113, 113, 63, 13); take 113: 48 + 113 = 161 -> 160 */
	assert_int_equal(rsctl_step(ctl, 48, 96), 160);
	/* far too much in flight: planned 189; 400 - 5000 - 189 = -4789 ->
	 * cps -1197 (slots -1084, -1134, -1184, -1197): a negative request is 0 */
	assert_int_equal(rsctl_step(ctl, 0, 5000), 0);
	/* the negative plan keeps requests at 0 while data arrives */
	assert_int_equal(rsctl_step(ctl, 800, 4200), 0);

	/* reset: the next step is a start again */
	rsctl_reset(ctl);
	assert_int_equal(rsctl_step(ctl, 0, 0), 48);
	unit_release(ctl);

	/* sectors below a block are carried, not dropped: one slot, so the
	 * request is sect_in + want - in_flight */
	p.c_plan_ahead = 1;
	p.c_fill_target = 100;
	ctl = new_ctl(&p);
	assert_int_equal(rsctl_step(ctl, 1, 0), 96);  /* 101: 5 carried */
	assert_int_equal(rsctl_step(ctl, 0, 97), 8);  /* 3 + 5 (DRBD: 0) */
	assert_int_equal(rsctl_step(ctl, 0, 105), 0); /* -5: nothing, carry 0 */
	assert_int_equal(rsctl_step(ctl, 0, 93), 0);  /* 7 */
	assert_int_equal(rsctl_step(ctl, 0, 93), 8);  /* 7 + 7 = 14: 6 carried */
	unit_release(ctl);
}

/* A link: bandwidth in sectors per step, latency in steps. Requests are
 * served in order, at most `bw` sectors per step; half of each (in whole
 * blocks) becomes ready `lat` steps after it was sent, the rest a step
 * later: replies do not all arrive in the same 100 ms. (With no such
 * spread, a request pattern repeating with the latency's period is an
 * undamped mode of DRBD's controller, whose request includes sect_in.) */
#define QMAX 4096
struct link {
	uint64_t bw;
	unsigned int lat;
	uint64_t sect[QMAX], ready[QMAX];
	unsigned int head, tail;
	uint64_t in_flight;
};

static uint64_t link_serve(struct link *l, uint64_t now)
{
	uint64_t budget = l->bw, served = 0, n;

	while (budget && l->head != l->tail && l->ready[l->head] <= now) {
		n = l->sect[l->head] < budget ? l->sect[l->head] : budget;
		l->sect[l->head] -= n;
		budget -= n;
		served += n;
		if (!l->sect[l->head])
			l->head = (l->head + 1) % QMAX;
	}
	l->in_flight -= served;
	return served;
}

static void link_queue(struct link *l, uint64_t ready, uint64_t sect)
{
	if (!sect)
		return;
	l->sect[l->tail] = sect;
	l->ready[l->tail] = ready;
	l->tail = (l->tail + 1) % QMAX;
	assert_true(l->tail != l->head);
	l->in_flight += sect;
}

static void link_send(struct link *l, uint64_t now, uint64_t sect)
{
	uint64_t first = sect / 16 * 8;

	link_queue(l, now + l->lat, first);
	link_queue(l, now + l->lat + 1, sect - first);
}

struct sim {
	double in_flight; /* average the controller saw over the last 100 steps */
	double arrived;	  /* average sect_in over the last 100 steps */
	uint64_t max_req;
};

static void simulate(const struct rsctl_params *p, uint64_t bw, unsigned int lat,
		     unsigned int steps, struct sim *out)
{
	struct rsctl *ctl = new_ctl(p);
	struct link *l = unit_defer(free, calloc(1, sizeof(*l)));
	uint64_t t, in, req, sum_if = 0, sum_in = 0;

	l->bw = bw;
	l->lat = lat;
	out->max_req = 0;
	for (t = 0; t < steps; t++) {
		in = link_serve(l, t);
		req = rsctl_step(ctl, in, l->in_flight);
		if (t >= steps - 100) {
			sum_if += l->in_flight;
			sum_in += in;
		}
		if (req > out->max_req)
			out->max_req = req;
		link_send(l, t, req);
	}
	out->in_flight = sum_if / 100.0;
	out->arrived = sum_in / 100.0;
	unit_release(l);
	unit_release(ctl);
}

#define assert_near(v, want, tol)                                                                  \
	do {                                                                                       \
		double v_ = (v), w_ = (want);                                                      \
		if (v_ < w_ * (1 - (tol)) || v_ > w_ * (1 + (tol)))                                \
			fail_msg("%s = %.1f, expected %.1f +- %.0f%%", #v, v_, w_, (tol)*100);     \
	} while (0)

static void test_converge_fill(void **state)
{
	struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
	struct sim s;

	p.c_fill_target = 2000;
	/* saturated link (500 x 2 < 2000): the extra data queues up */
	simulate(&p, 500, 2, 600, &s);
	assert_near(s.in_flight, 2000, 0.10);
	assert_near(s.arrived, 500, 0.05);
	/* fast links: what the controller sees in flight are the requests
	 * of the last lat steps, less what has arrived early */
	simulate(&p, 50000, 4, 600, &s);
	assert_near(s.in_flight, 2000, 0.02);
	assert_near(s.arrived, 2000 / 3.5, 0.02);
	simulate(&p, 50000, 1, 600, &s);
	assert_near(s.in_flight, 2000, 0.02);
	assert_near(s.arrived, 2000 * 2, 0.02);
	/* shorter and longer plans; a long one reacts only to corrections
	 * of at least one sector per slot */
	p.c_plan_ahead = 5;
	simulate(&p, 50000, 2, 600, &s);
	assert_near(s.in_flight, 2000, 0.02);
	p.c_plan_ahead = 100;
	simulate(&p, 50000, 2, 1500, &s);
	assert_near(s.in_flight, 2000, 0.05);
	/* the default target, 100 sectors */
	p = (struct rsctl_params)RSCTL_PARAMS_DEFAULT;
	simulate(&p, 50000, 3, 600, &s);
	assert_near(s.in_flight, 100, 0.10);
	/* a large one: 10 MiB in flight */
	p.c_fill_target = 20480;
	p.max_buffers = 8192;
	simulate(&p, 4096, 2, 1500, &s);
	assert_near(s.in_flight, 20480, 0.10);
	assert_near(s.arrived, 4096, 0.05);
}

static void test_converge_delay(void **state)
{
	struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
	struct sim s;

	/* c-delay-target 1 s: one second's worth of what arrives */
	p.c_fill_target = 0;
	p.c_delay_target = 10;
	p.max_buffers = 8192; /* 4096 blocks = 32768 sectors may be in flight */
	simulate(&p, 1000, 2, 600, &s);
	assert_near(s.arrived, 1000, 0.05);
	assert_near(s.in_flight, 10000, 0.10);
	/* half a second, on a slower link */
	p.c_delay_target = 5;
	simulate(&p, 300, 1, 600, &s);
	assert_near(s.arrived, 300, 0.05);
	assert_near(s.in_flight, 1500, 0.10);
	/* the max-buffers cap wins over a delay target it cannot hold: at
	 * most 1024 blocks = 8192 sectors after a step's requests, of which
	 * 2000 arrive before the next step */
	p.max_buffers = 2048;
	p.c_delay_target = 10;
	simulate(&p, 2000, 1, 600, &s);
	assert_near(s.in_flight, 8192 - 2000, 0.02);
	assert_near(s.arrived, 2000, 0.02);
}

static void test_max_rate(void **state)
{
	struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
	struct rsctl *ctl;
	struct sim s;

	p.c_max_rate = 1000; /* 200 sectors per step */
	p.c_fill_target = 1 << 20;
	p.max_buffers = 131072;
	p.resync_rate = 100000;
	simulate(&p, 100000, 1, 300, &s);
	assert_int_equal(s.max_req, 200);
	assert_near(s.arrived, 200, 0.01);

	/* c-max-rate 250 KiB/s: 50 sectors, 6 blocks */
	p.c_max_rate = 250;
	ctl = new_ctl(&p);
	assert_int_equal(rsctl_step(ctl, 0, 0), 48);
	assert_int_equal(rsctl_want_rate(ctl), 240);
	assert_int_equal(rsctl_step(ctl, 48, 0), 48);
	unit_release(ctl);
}

/* ---------------------------------------------------------------- throttle */

static void test_throttle(void **state)
{
	static const struct {
		uint32_t min_rate;
		struct rsctl_io io;
		bool throttle;
		const char *why;
	} t[] = {
	    {250, {1000, false, false, 10000}, false, "first look: baseline only"},
	    {250, {1064, false, false, 10000}, false, "64 sectors are not I/O"},
	    {250, {1065, false, false, 10000}, true, "65 are, and resync is fast"},
	    {250, {1065, false, false, 10000}, false, "nothing new since"},
	    {250, {1100, false, false, 10000}, false, "35 new only"},
	    {250, {1100, true, false, 10000}, true, "writes wait for the AL"},
	    {250, {2000, false, false, 250}, false, "at c-min-rate is not above"},
	    {250, {3000, false, false, 251}, true, "above it is"},
	    {250, {3100, false, false, 0}, false, "seen, but no resync rate"},
	    {250, {4000, false, true, 251}, false, "the app waits for this extent"},
	    {250, {4000, false, false, 251}, false, "that counted as seen"},
	    {250, {4000, true, true, 100000}, false, "AL wait, but the app needs us"},
	    {0, {9000, true, false, 100000}, false, "c-min-rate 0: never"},
	    {0, {99000, false, false, 100000}, false, "c-min-rate 0: never"},
	    {100000, {200000, true, false, 99999}, false, "below a high c-min-rate"},
	    {100000, {300000, false, false, 100001}, true, "above it"},
	};
	struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
	struct rsctl *ctl = new_ctl(&p);
	unsigned int i;

	for (i = 0; i < UNIT_ARRAY_SIZE(t); i++) {
		p.c_min_rate = t[i].min_rate;
		assert_int_equal(rsctl_set_params(ctl, &p), 0);
		if (rsctl_should_throttle(ctl, &t[i].io) != t[i].throttle)
			fail_msg("row %u (%s): expected %s", i, t[i].why,
				 t[i].throttle ? "throttle" : "no throttle");
	}

	/* after a reset the counter's current value is the baseline again */
	rsctl_reset(ctl);
	p.c_min_rate = 250;
	assert_int_equal(rsctl_set_params(ctl, &p), 0);
	assert_false(rsctl_should_throttle(ctl, &(struct rsctl_io){5000000, false, false, 9999}));
	assert_true(rsctl_should_throttle(ctl, &(struct rsctl_io){5000065, false, false, 9999}));
	/* a wrapped counter is a difference too */
	rsctl_reset(ctl);
	assert_false(rsctl_should_throttle(ctl, &(struct rsctl_io){UINT64_MAX - 10, 0, 0, 9999}));
	assert_true(rsctl_should_throttle(ctl, &(struct rsctl_io){60, false, false, 9999}));
	unit_release(ctl);
}

static void test_recent_rate(void **state)
{
	struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
	struct rsctl *ctl = new_ctl(&p);
	unsigned int i;

	assert_int_equal(rsctl_recent_rate(ctl), 0);
	rsctl_step(ctl, 200, 0); /* 200 sectors in 0.1 s = 1000 KiB/s */
	assert_int_equal(rsctl_recent_rate(ctl), 1000);
	for (i = 0; i < 9; i++)
		rsctl_step(ctl, 0, 0);
	assert_int_equal(rsctl_recent_rate(ctl), 100); /* 100 KiB in 1 s */
	for (i = 0; i < RSCTL_RATE_STEPS; i++)
		rsctl_step(ctl, 2048, 0); /* 10 MiB/s */
	assert_int_equal(rsctl_recent_rate(ctl), 10240);
	for (i = 0; i < RSCTL_RATE_STEPS / 2; i++)
		rsctl_step(ctl, 0, 0);
	assert_int_equal(rsctl_recent_rate(ctl), 5120);
	for (i = 0; i < RSCTL_RATE_STEPS / 2; i++)
		rsctl_step(ctl, 0, 0);
	assert_int_equal(rsctl_recent_rate(ctl), 0);
	rsctl_step(ctl, 400, 0);
	rsctl_reset(ctl);
	assert_int_equal(rsctl_recent_rate(ctl), 0);
	unit_release(ctl);
}

/* ---------------------------------------------------------------- parameters */

struct param_case {
	size_t off;
	uint32_t v;
	const char *what;
};

static const struct param_case bad_params[] = {
    {offsetof(struct rsctl_params, resync_rate), 0, "resync_rate=0"},
    {offsetof(struct rsctl_params, resync_rate), 4194305, "resync_rate=4194305"},
    {offsetof(struct rsctl_params, c_plan_ahead), 301, "c_plan_ahead=301"},
    {offsetof(struct rsctl_params, c_delay_target), 0, "c_delay_target=0"},
    {offsetof(struct rsctl_params, c_delay_target), 101, "c_delay_target=101"},
    {offsetof(struct rsctl_params, c_fill_target), 1048577, "c_fill_target=1048577"},
    {offsetof(struct rsctl_params, c_max_rate), 249, "c_max_rate=249"},
    {offsetof(struct rsctl_params, c_max_rate), 4194305, "c_max_rate=4194305"},
    {offsetof(struct rsctl_params, c_min_rate), 4194305, "c_min_rate=4194305"},
    {offsetof(struct rsctl_params, max_buffers), 31, "max_buffers=31"},
    {offsetof(struct rsctl_params, max_buffers), 131073, "max_buffers=131073"},
};
static const struct param_case good_params[] = {
    {offsetof(struct rsctl_params, resync_rate), 1, "resync_rate=1"},
    {offsetof(struct rsctl_params, resync_rate), 4194304, "resync_rate=4194304"},
    {offsetof(struct rsctl_params, c_plan_ahead), 0, "c_plan_ahead=0"},
    {offsetof(struct rsctl_params, c_plan_ahead), 300, "c_plan_ahead=300"},
    {offsetof(struct rsctl_params, c_delay_target), 1, "c_delay_target=1"},
    {offsetof(struct rsctl_params, c_delay_target), 100, "c_delay_target=100"},
    {offsetof(struct rsctl_params, c_fill_target), 0, "c_fill_target=0"},
    {offsetof(struct rsctl_params, c_fill_target), 1048576, "c_fill_target=1048576"},
    {offsetof(struct rsctl_params, c_max_rate), 250, "c_max_rate=250"},
    {offsetof(struct rsctl_params, c_max_rate), 4194304, "c_max_rate=4194304"},
    {offsetof(struct rsctl_params, c_min_rate), 0, "c_min_rate=0"},
    {offsetof(struct rsctl_params, c_min_rate), 4194304, "c_min_rate=4194304"},
    {offsetof(struct rsctl_params, max_buffers), 32, "max_buffers=32"},
    {offsetof(struct rsctl_params, max_buffers), 131072, "max_buffers=131072"},
};

static void test_params(void **state)
{
	const struct rsctl_params def = RSCTL_PARAMS_DEFAULT;
	struct rsctl *ctl = new_ctl(&def), *other = NULL;
	unsigned int i;

	for (i = 0; i < UNIT_ARRAY_SIZE(bad_params); i++) {
		struct rsctl_params p = def;

		memcpy((char *)&p + bad_params[i].off, &bad_params[i].v, sizeof(uint32_t));
		if (rsctl_new(&p, &other) != -EINVAL || other)
			fail_msg("%s accepted by rsctl_new", bad_params[i].what);
		if (rsctl_set_params(ctl, &p) != -EINVAL)
			fail_msg("%s accepted by rsctl_set_params", bad_params[i].what);
	}
	/* the rejected changes left the defaults: a default first step */
	assert_int_equal(rsctl_step(ctl, 0, 0), 48);
	for (i = 0; i < UNIT_ARRAY_SIZE(good_params); i++) {
		struct rsctl_params p = def;

		memcpy((char *)&p + good_params[i].off, &good_params[i].v, sizeof(uint32_t));
		if (rsctl_new(&p, &other) != 0)
			fail_msg("%s refused", good_params[i].what);
		rsctl_step(other, 1000, 1000);
		rsctl_free(other);
		other = NULL;
		assert_int_equal(rsctl_set_params(ctl, &p), 0);
		rsctl_step(ctl, 1000, 1000);
	}
	unit_release(ctl);
}

/* Switching between fixed and dynamic while running. */
static void test_switch_mode(void **state)
{
	struct rsctl_params p = RSCTL_PARAMS_DEFAULT;
	struct rsctl *ctl = new_ctl(&p);

	p.max_buffers = 131072;
	assert_int_equal(rsctl_set_params(ctl, &p), 0);
	assert_int_equal(rsctl_step(ctl, 0, 0), 48);
	p.c_plan_ahead = 0;
	p.resync_rate = 4000;
	assert_int_equal(rsctl_set_params(ctl, &p), 0);
	assert_int_equal(rsctl_step(ctl, 8, 100000), 800);
	assert_int_equal(rsctl_want_rate(ctl), 4000);
	/* back to dynamic: a fresh plan (the old one still held 19 x 50),
	 * and data in flight, so no start: 100 - 8 = 92 -> 4 per slot;
	 * 8 in + 4 = 12 -> 8 (with the old plan: 8 + 8 = 16) */
	p.c_plan_ahead = 20;
	assert_int_equal(rsctl_set_params(ctl, &p), 0);
	assert_int_equal(rsctl_step(ctl, 8, 8), 8);
	/* the same plan length again keeps the plan */
	assert_int_equal(rsctl_set_params(ctl, &p), 0);
	assert_int_equal(rsctl_step(ctl, 0, 16), 8); /* a slot of 4 + 4 carried */
	unit_release(ctl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixed),	  cmocka_unit_test(test_max_buffers),
	    cmocka_unit_test(test_first_step),	  cmocka_unit_test(test_dynamic_steps),
	    cmocka_unit_test(test_converge_fill), cmocka_unit_test(test_converge_delay),
	    cmocka_unit_test(test_max_rate),	  cmocka_unit_test(test_throttle),
	    cmocka_unit_test(test_recent_rate),	  cmocka_unit_test(test_params),
	    cmocka_unit_test(test_switch_mode),
	};

	return cmocka_run_group_tests(tests, NULL, unit_teardown);
}
