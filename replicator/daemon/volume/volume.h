/*
 * volume/: the door of the volume room: a resource's volumes, their disk
 * I/O, activity log, bitmap and superblock write-back, and the on-io-error
 * policy (HACKING.md, "The rooms"). Uses state/.
 */
#ifndef TANDEM_VOLUME_H
#define TANDEM_VOLUME_H

#include <json-c/json.h>

#include "al.h"
#include "bdev.h"
#include "bitmap.h"
#include "gi.h"
#include "ioeng.h"
#include "md.h"
#include "tandemd.h"

/* A write in flight, for serialising overlapping writes. */
struct inflight {
	uint64_t off, len;
	struct inflight *next;
};

/* /proc/drbd counters (KiB or counts), see doc/control-protocol.md. */
struct counters {
	uint64_t ns, nr; /* KiB sent to / received from the peer (atomic) */
	uint64_t dw, dr, al, bm;
	int64_t lo, ap;
	int64_t pe, ua; /* sent to the peer, unanswered / from it, being answered (atomic) */
	int64_t frozen; /* requests waiting while I/O is frozen (lock) */
};

struct volume {
	struct resource *res;
	const struct conf_vol *cv;
	unsigned int vnr;
	struct vol_state *st;  /* its state, &res->vs[i]: state/ writes it */
	struct md *md; /* NULL while detached */
	struct md_sb sb;
	struct bitmap *bm;
	struct al *al;
	struct bdev *data;
	struct ioeng *io;   /* data I/O: io_uring, else a thread pool */
	uint64_t size_sect; /* exported size */
	pthread_mutex_t lock; /* al, bm, sb, counters, inflight */
	pthread_mutex_t md_lock; /* orders metadata writes (volume_unlock); before lock */
	bool sb_due, bm_due;     /* written by volume_unlock() (lock) */
	pthread_cond_t cond;
	struct inflight *inflight;
	struct counters c;
	/* group commit of the activity log (volume.c) */
	bool al_busy;             /* a thread is writing a transaction */
	bool md_busy;             /* volume_unlock() is writing metadata */
	unsigned char *al_block;  /* that transaction */
	unsigned char *al_pages;  /* evicted extents' bitmap pages */
	/* local I/O errors (on-io-error) */
	unsigned int users;       /* data requests inside the volume */
	bool failing;             /* detach pending: new requests get EIO */
	bool io_error_seen;       /* pass_on: an error was passed on */
	unsigned int frozen;      /* new requests wait: VOLUME_FROZEN_* bits */
	bool detaching;           /* detach writes the metadata back; requests wait */
	int wfc_class;            /* VOLUME_WFC_*, from the flags at attach */
	struct bdev_faults faults; /* TANDEM_FAULT_INJECTION only */
	unsigned int fault_ops;    /* VOLUME_FAULT_* */
	/* disk-timeout: local I/O in flight, and when it last made progress */
	unsigned int lio;         /* atomic */
	int64_t lio_progress_ms;  /* atomic; CLOCK_MONOTONIC */
	bool detach_wait;         /* a failed disk's detach waits for stuck requests */
	qb_loop_timer_handle detach_timer;
};

/* What a local I/O error hit. */
enum volume_err {
	VOLUME_ERR_DATA,
	VOLUME_ERR_MD,
};
/* Which startup timeout applies (wfc-timeout, degr-wfc-timeout,
 * outdated-wfc-timeout): ref/drbd-semantics.md §8. */
enum {
	VOLUME_WFC_DEFAULT,
	VOLUME_WFC_DEGRADED,
	VOLUME_WFC_OUTDATED,
};
#define VOLUME_FAULT_READ  1u
#define VOLUME_FAULT_WRITE 2u
#define VOLUME_FAULT_META  4u /* the metadata area too (internal metadata) */
#define VOLUME_FAULT_HANG  8u /* I/O hangs until the fault is cleared (disk-timeout) */
#define VOLUME_FAULT_FLUSH 16u /* only flushes fail (a cache that cannot be written back) */

int volume_attach(struct volume *v, struct reply_err *e);
int volume_detach(struct volume *v, struct reply_err *e);
/* A write in three steps: begin (may wait for overlapping writes and AL
 * slots), submit with a completion callback, end. */
int volume_write_begin(struct volume *v, struct inflight *me);
void volume_write_end(struct volume *v, struct inflight *me, int rc);
int volume_submit(struct volume *v, enum ioeng_op op, void *buf, uint64_t off, uint32_t len,
		  void (*done)(void *arg, int res), void *arg);
int volume_flush(struct volume *v);
int volume_trim(struct volume *v, uint64_t off, uint32_t len, bool zero, bool may_trim);
/*
 * Zero [off, off+len) only if it costs less than writing zeroes: with
 * fallocate (a hole if may_trim, else ZERO_RANGE), never falling back to
 * writes. -ENOTSUP, the data untouched, when the backing device cannot.
 */
int volume_zero_fast(struct volume *v, uint64_t off, uint32_t len, bool may_trim);
/*
 * The allocation of [off, off+len) of the data as consecutive extents
 * from off, from the holes of the backing file (SEEK_DATA/SEEK_HOLE; a
 * hole reads as zeroes): emit(arg, len, hole) once per extent, in order,
 * until it returns nonzero. Never past off+len nor the exported size, so
 * that the metadata at the end of the device is never described. A block
 * device, or a file system that cannot tell, is all data. 0 or a
 * negative errno (-EIO while detached).
 */
int volume_extents(struct volume *v, uint64_t off, uint64_t len,
		   int (*emit)(void *arg, uint64_t len, bool hole), void *arg);
/* Read [off, off+len) ahead into the page cache (posix_fadvise WILLNEED);
 * 0 once it is started, or a negative errno. */
int volume_cache(struct volume *v, uint64_t off, uint32_t len);
/*
 * Metadata writes, never under v->lock (HACKING.md): with the lock held,
 * volume_sync_sb() and volume_writeback_bitmap_locked() say that the
 * superblock / the dirty bitmap pages must go to disk; volume_unlock()
 * drops the lock and writes them (a copy taken under it, in order with
 * every other metadata write), and returns 0 or the error. A failure takes
 * the on-io-error path (a metadata error: the disk is detached), so that
 * the flags and UUIDs in memory never silently differ from the disk's.
 */
int volume_sync_sb(struct volume *v);
int volume_unlock(struct volume *v);
/*
 * The generation identifiers (UUIDs) and flags (MDF_*) of v's metadata,
 * only through these, with v->lock held. The setters change them in
 * memory and mark the superblock for volume_unlock() to write (as
 * volume_sync_sb(): -ENODEV while detached, when nothing is written).
 */
void volume_gi(const struct volume *v, struct gi *g);
uint64_t volume_uuid(const struct volume *v, unsigned int i); /* GI_* */
uint32_t volume_flags(const struct volume *v);
int volume_set_gi(struct volume *v, const struct gi *g);
int volume_set_flags(struct volume *v, uint32_t set, uint32_t clear);
/* A local I/O error: apply on-io-error (lock not held; any thread). */
void volume_io_error(struct volume *v, enum volume_err kind, const char *what, int rc);
/* The same, with the volume's lock held. */
void volume_io_error_locked(struct volume *v, enum volume_err kind, const char *what, int rc);
/*
 * Freeze: new requests wait while any reason holds; each reason is set and
 * lifted on its own, so that lifting one (a handshake done, fencing's
 * verdict or resume-io) leaves the others in force.
 */
#define VOLUME_FROZEN_HANDSHAKE 1u /* a connection's handshake (peer/) */
#define VOLUME_FROZEN_FENCING   2u /* resource-and-stonith: until fence-peer's verdict */
#define VOLUME_FROZEN_QUORUM    4u /* no quorum, on-no-quorum suspend-io */
void volume_freeze(struct volume *v, unsigned int why, bool on);
void volume_freeze_all(struct resource *r, unsigned int why, bool on);
void volume_mark_oos(struct volume *v, uint64_t off, uint64_t len);
void volume_clear_oos(struct volume *v, uint64_t off, uint64_t len);
/* The whole bitmap to disk (lock held; written by volume_unlock()). */
int volume_writeback_bitmap_locked(struct volume *v);
int volume_peer_write(struct volume *v, uint64_t off, uint32_t len, const void *buf, bool fua);
int volume_peer_trim(struct volume *v, uint64_t off, uint32_t len, bool zero);
int volume_read_frozen(struct volume *v, uint64_t off, uint32_t len, void *buf);
int volume_read_claimed(struct volume *v, uint64_t off, uint32_t len, void *buf, void *unused1,
			void *unused2);
void volume_read_release(struct volume *v, uint64_t off, uint32_t len);
int volume_rs_write(struct volume *v, uint64_t off, uint32_t len, const void *buf);
/* Tests: make the backing device fail (VOLUME_FAULT_*; 0 heals it). */
const struct bdev_faults *volume_fault_hooks(struct volume *v);
int volume_set_faults(struct volume *v, unsigned int ops);
/* disk-timeout: has local I/O been outstanding without progress for ms? */
bool volume_stalled(struct volume *v, int64_t ms);
/* Requests are still inside the volume (a detach would wait). */
bool volume_busy(struct volume *v);
bool volume_diskless(struct volume *v);
/* v's disk state, from any thread (state/ writes it). */
static inline enum state_disk volume_disk(const struct volume *v)
{
	return __atomic_load_n(&v->st->disk, __ATOMIC_ACQUIRE);
}
/* v's replication state (StandAlone: no session, or not set yet). */
static inline enum state_conn volume_repl(const struct volume *v)
{
	return __atomic_load_n(&v->st->repl, __ATOMIC_ACQUIRE);
}
/* It has a disk, failing or not (a detach after an error is pending). */
bool volume_attached(struct volume *v);

#endif
