/*
 * rsctl: the resync rate controller of the SyncTarget, DRBD 8.4's
 * (ref/drbd-semantics.md section 9). Every step (100 ms) the resync loop
 * asks how many sectors to request from the SyncSource; rsctl also decides
 * whether resync should yield to application I/O (c-min-rate).
 *
 * Units, as in drbd.conf:
 *   sectors   512 bytes; requests are whole bitmap blocks of 4 KiB
 *             (8 sectors), so rsctl_step() returns a multiple of 8
 *   KiB/s     resync-rate, c-max-rate, c-min-rate
 *   0.1 s     c-plan-ahead, c-delay-target, and the step itself
 *   pages     max-buffers (4 KiB)
 *
 * Fixed rate (c-plan-ahead 0): resync-rate KiB/s is resync-rate / 40
 * blocks per step. DRBD truncates that every step (250 KiB/s gives 6
 * blocks, 240 KiB/s; below 40 KiB/s nothing); rsctl carries the fraction
 * to the next step, so the average is exactly resync-rate.
 *
 * Dynamic (c-plan-ahead > 0, the 8.4 default): a plan of `steps` =
 * c-plan-ahead slots. Each step:
 *   want = resync-rate * 0.2 * steps      at the start (nothing in flight
 *                                         and nothing came in)
 *        = c-fill-target                  if set
 *        = sect_in * c-delay-target       else (what arrives per step,
 *                                         times the wanted delay in steps)
 *   correction = want - in_flight - planned
 *   correction / steps is added to every slot of the plan (planned grows
 *   by that times steps); the oldest slot is taken out (planned shrinks by
 *   it) and the request is sect_in + that slot, clamped to [0, c-max-rate
 *   * 0.2] sectors, in whole blocks. DRBD drops the sectors below a block
 *   every step, which keeps in-flight data below the target (by 15-20% in
 *   simulations with a 10 s plan); rsctl carries them to the next step.
 *   So in-flight data is steered towards c-fill-target (or c-delay-target
 *   worth of the current throughput) within about c-plan-ahead;
 *   resync-rate only sets the starting point. Corrections under one
 *   sector per slot are ignored (integer division, as DRBD), and a plan
 *   shorter than the round trip oscillates: c-plan-ahead should be
 *   several round trips.
 *
 * Both modes: at most max-buffers / 2 blocks of resync requests in flight.
 *
 * c-min-rate (rsctl_should_throttle): while application I/O is seen on the
 * backing device (more than 64 sectors since the last time it was seen),
 * or application writes wait for the activity log, resync is throttled if
 * its recent rate is above c-min-rate; 0 = never throttle. It is not a
 * floor for the controller. Resync is not throttled for an extent that
 * application I/O is waiting for (its progress is what unblocks it).
 *
 * Not thread-safe; pure computation, no clock: the caller calls
 * rsctl_step() once per 100 ms step.
 */
#ifndef TANDEM_RSCTL_H
#define TANDEM_RSCTL_H

#include <stdbool.h>
#include <stdint.h>

#define RSCTL_STEP_MS 100u
#define RSCTL_SECT_PER_BLOCK 8u /* 4 KiB bitmap block */
#define RSCTL_PLAN_MAX 300u	/* c-plan-ahead maximum: 30 s */
#define RSCTL_RATE_STEPS 60u	/* rsctl_recent_rate() window: 6 s */
#define RSCTL_APP_EVENTS 64u	/* sectors of application I/O that count as "seen" */

struct rsctl_params {
	uint32_t resync_rate;	 /* KiB/s, 1..4194304 */
	uint32_t c_plan_ahead;	 /* 0.1 s, 0..300; 0 = fixed rate */
	uint32_t c_delay_target; /* 0.1 s, 1..100; used if c_fill_target is 0 */
	uint32_t c_fill_target;	 /* sectors, 0..1048576 */
	uint32_t c_max_rate;	 /* KiB/s, 250..4194304 */
	uint32_t c_min_rate;	 /* KiB/s, 0..4194304; 0 = never throttle */
	uint32_t max_buffers;	 /* 4 KiB pages, 32..131072 */
};

/* DRBD 8.4's defaults. */
#define RSCTL_PARAMS_DEFAULT                                                                       \
	{                                                                                          \
		.resync_rate = 250, .c_plan_ahead = 20, .c_delay_target = 10,                      \
		.c_fill_target = 100, .c_max_rate = 102400, .c_min_rate = 250,                     \
		.max_buffers = 2048,                                                               \
	}

/* What rsctl_should_throttle() looks at. */
struct rsctl_io {
	/* Sectors read and written by the application on the backing device
	 * so far (a running counter, resync's own I/O not included). */
	uint64_t app_sectors;
	/* Application writes are waiting for activity-log extents. */
	bool al_waiting;
	/* An application request waits for the extent resync wants next. */
	bool app_waits_here;
	/* The recent resync rate in KiB/s (e.g. rsctl_recent_rate()). */
	uint64_t rate_kib;
};

struct rsctl;

/* -EINVAL for a parameter out of range, -ENOMEM. */
int rsctl_new(const struct rsctl_params *p, struct rsctl **out);
void rsctl_free(struct rsctl *ctl);
/* New parameters (drbdadm adjust) take effect at the next step; a new
 * c-plan-ahead starts an empty plan. -EINVAL leaves the old ones. */
int rsctl_set_params(struct rsctl *ctl, const struct rsctl_params *p);
/* At the start of a resync: empty plan, no history. */
void rsctl_reset(struct rsctl *ctl);

/*
 * One step. sect_in: sectors of resync data that arrived since the last
 * step; in_flight: sectors requested and not yet arrived, now (sect_in
 * already taken off). Returns the sectors to request in this step, a
 * multiple of 8.
 */
uint64_t rsctl_step(struct rsctl *ctl, uint64_t sect_in, uint64_t in_flight);
/* The rate the last step asked for, KiB/s (DRBD's "want:" in status):
 * resync-rate in fixed mode, the request before the max-buffers cap in
 * dynamic mode. */
uint64_t rsctl_want_rate(const struct rsctl *ctl);
/* KiB/s that arrived over the last RSCTL_RATE_STEPS steps (fewer at the
 * start; 0 before the first step). */
uint64_t rsctl_recent_rate(const struct rsctl *ctl);

/* Should resync wait this step for application I/O (see above)? */
bool rsctl_should_throttle(struct rsctl *ctl, const struct rsctl_io *io);

#endif
