/*
 * al: the activity log, DRBD 8.4's on-disk format (doc/ondisk-format.pod,
 * ACTIVITY LOG).
 *
 * In memory: the hot set of at most `al-extents` 4 MiB extents, each in a
 * numbered slot, with a count of writes in flight and an LRU order of the
 * idle ones. A write may start only once all its extents are in the hot
 * set on disk. Bringing cold extents in costs one synchronous 4 KiB
 * transaction, and all cold extents of a batch of concurrent writes go
 * into the same transaction (up to 64 changes per transaction).
 *
 * The module does no I/O itself: the owner supplies callbacks, so that
 * the write path, tests and tools share one implementation.
 *
 * Usage on the write path:
 *     rc = al_begin_io(al, sector, nsect);   for each write of a batch
 *     (rc == -EAGAIN: every slot is busy; retry after completions)
 *     if (al_pending(al)) al_commit(al);     one transaction for the batch
 *     ... submit the writes ...
 *     al_complete_io(al, sector, nsect);     as each write completes
 * or, with several threads, al_commit_prepare()/al_commit_finish() below.
 */
#ifndef TANDEM_AL_H
#define TANDEM_AL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AL_MAGIC            0x69cb65a2u
#define AL_BLOCK_BYTES      4096u
#define AL_UPDATES_PER_TR   64u
#define AL_CONTEXT_PER_TR   919u
#define AL_TR_UPDATE        0x0000u
#define AL_TR_INITIALIZED   0xffffu
#define AL_EXTENTS_MIN      67u
#define AL_EXTENTS_MAX      65534u
#define AL_FREE             0xffffffffu   /* no extent */
#define AL_EXTENT_SHIFT_SECT 13           /* 4 MiB = 8192 sectors */

struct al;

struct al_ops {
	/* Write transaction block `buf` (4096 bytes) to ring block `block`
	 * (already mapped through the stripe formula) durably (FUA/flush). */
	int (*write_block)(void *ctx, uint32_t block, const void *buf);
	/* Make the bitmap pages of `extent` durable before it leaves the
	 * hot set. */
	int (*flush_extent)(void *ctx, uint32_t extent);
};

/* nr_extents: al-extents (67..65534, clamped to what the ring can hold);
 * stripes x stripe_size_4k: the ring geometry (0, 0 = 1 x 8). */
int al_new(uint32_t nr_extents, uint32_t stripes, uint32_t stripe_size_4k,
	   const struct al_ops *ops, void *ctx, struct al **out);
void al_free(struct al *al);

uint32_t al_nr_extents(const struct al *al);   /* after clamping */
uint32_t al_ring_blocks(const struct al *al);
/* The next transaction gets number tr_number (after a replay: newest_tr + 1;
 * on a freshly initialised ring keep 0, see ondisk-format). */
void al_set_next_tr(struct al *al, uint32_t tr_number);

/*
 * Take a reference on every extent of [sector, sector + nsect). Hot
 * extents are only counted; cold ones get a slot (the least recently used
 * idle extent is evicted) and become pending changes. All or nothing:
 * returns the number of cold extents added (0 = none added by this call:
 * but an extent added by another call may still be pending, so submit the
 * data only after al_commit() when al_pending() was nonzero), or -EAGAIN if
 * not enough slots are idle (nothing changed), -EINVAL for a range that
 * needs more extents than the log holds.
 */
int al_begin_io(struct al *al, uint64_t sector, uint32_t nsect);
/* Drop the references of a completed write. */
void al_complete_io(struct al *al, uint64_t sector, uint32_t nsect);
/* Changes waiting for al_commit(). */
unsigned int al_pending(const struct al *al);
/* Write the pending changes (flush evicted extents' bitmap pages first,
 * then one transaction per 64 changes). 0 or a negative errno; on error
 * the pending changes stay pending. */
int al_commit(struct al *al);

/*
 * Group commit, for owners that write the transaction without holding
 * their lock: al_commit_prepare() builds the transaction of the oldest
 * (up to 64) pending changes into buf (4096 bytes) and says which evicted
 * extents' bitmap pages must be durable first; the owner drops its lock,
 * writes those pages and then the block to ring block tx->block, retakes
 * the lock and calls al_commit_finish() with the result. Meanwhile other
 * writers may add pending changes (they go into the next transaction),
 * and one transaction at most is open: a second prepare returns -EBUSY.
 * tx->n == 0: nothing was pending. A failed transaction (rc < 0) leaves
 * its changes pending.
 */
struct al_tx {
	uint32_t n;         /* pending changes it commits */
	uint32_t tr_number;
	uint32_t block;     /* ring block to write */
	uint32_t n_evicted;
	uint32_t evicted[AL_UPDATES_PER_TR];
};
int al_commit_prepare(struct al *al, struct al_tx *tx, void *buf);
void al_commit_finish(struct al *al, const struct al_tx *tx, int rc);
/* Are all extents of [sector, sector + nsect) committed (hot on disk)? */
bool al_range_hot(const struct al *al, uint64_t sector, uint32_t nsect);

bool al_is_hot(const struct al *al, uint32_t extent);
/* Copy the extents of the hot set (committed ones) into out[]; returns
 * how many (at most max). */
uint32_t al_active(const struct al *al, uint32_t *out, uint32_t max);

/* Statistics. */
struct al_stats {
	uint64_t transactions; /* blocks written */
	uint64_t evictions;
	uint64_t hits;         /* extents found hot in al_begin_io */
	uint64_t misses;       /* extents brought in */
};
void al_get_stats(const struct al *al, struct al_stats *st);

/* ---- the on-disk ring (pure functions) ---- */

/* Ring block of transaction tr_number. */
uint32_t al_ring_block(uint32_t tr_number, uint32_t stripes, uint32_t stripe_size_4k);
/* An "initialized" block, as drbdmeta create-md and apply-al write. */
void al_block_init(void *buf);

struct al_replay {
	uint32_t *extents;      /* active extents after replay (caller frees) */
	uint32_t n_extents;
	uint32_t n_corrupt;     /* blocks with bad magic or crc */
	uint32_t n_updates;     /* valid update transactions */
	uint32_t newest_tr;     /* tr_number of the newest valid update */
	bool usable;            /* false: "No usable activity log found" or
	                           "No valid AL update transaction found" */
	const char *problem;    /* message when !usable */
};

/* Replay a ring read as `blocks` raw 4 KiB blocks in on-disk order (block
 * i at byte i * 4096 of the AL area), drbdmeta apply-al's algorithm.
 * Returns 0 (see r->usable), -ENOMEM, or -EINVAL for a NULL ring or a
 * geometry that does not match `blocks`. */
int al_replay(const void *ring, uint32_t blocks, uint32_t stripes, uint32_t stripe_size_4k,
	      struct al_replay *r);
void al_replay_free(struct al_replay *r);

#endif
