/*
 * volume: the local data path of an attached volume (reads, writes
 * through the activity log, flush, trim, zero) and the bitmap marks of
 * replication; attach, detach and metadata writes are in volume-md.c.
 *
 * Data I/O runs on the calling thread by default, or through an I/O engine
 * (io_uring, or a thread pool) when TANDEM_IO asks for it. Overlapping writes are serialised, the AL is
 * updated before a write to a cold extent, and every write marks the
 * bitmap while no peer is connected.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "md-replay.h"
#include "state/state-change.h"
#include "volume/volume-int.h"
#include "volume/volume.h"

/* ---------------------------------------------------------------- data path */

static bool overlaps(const struct inflight *a, uint64_t off, uint64_t len)
{
	return off < a->off + a->len && a->off < off + len;
}

/* Wait until no write in flight overlaps [off, off+len), then claim it. */
static void claim_range(struct volume *v, struct inflight *me)
{
	struct inflight *i;

	for (;;) {
		for (i = v->inflight; i; i = i->next)
			if (overlaps(i, me->off, me->len))
				break;
		if (!i)
			break;
		pthread_cond_wait(&v->cond, &v->lock);
	}
	me->next = v->inflight;
	v->inflight = me;
}

static void release_range(struct volume *v, struct inflight *me)
{
	struct inflight **pp;

	for (pp = &v->inflight; *pp; pp = &(*pp)->next) {
		if (*pp == me) {
			*pp = me->next;
			break;
		}
	}
	pthread_cond_broadcast(&v->cond);
}

/*
 * Where data I/O runs. "inline" (the default) does it with system calls
 * on the calling thread, the NBD connection thread; the measurements in
 * doc/perf-nbd.md showed that for buffered I/O on a file io_uring punts
 * every write to a kernel worker, and the extra thread hops halved small
 * writes. TANDEM_IO=io_uring or threads selects the engine instead.
 */
static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Local I/O starts and ends (disk-timeout watches the gaps). */
static void lio_begin(struct volume *v)
{
	if (__atomic_fetch_add(&v->lio, 1, __ATOMIC_ACQ_REL) == 0)
		__atomic_store_n(&v->lio_progress_ms, mono_ms(), __ATOMIC_RELEASE);
}

static void lio_end(struct volume *v)
{
	__atomic_store_n(&v->lio_progress_ms, mono_ms(), __ATOMIC_RELEASE);
	__atomic_sub_fetch(&v->lio, 1, __ATOMIC_ACQ_REL);
}

bool volume_stalled(struct volume *v, int64_t ms)
{
	return __atomic_load_n(&v->lio, __ATOMIC_ACQUIRE) &&
	       mono_ms() - __atomic_load_n(&v->lio_progress_ms, __ATOMIC_ACQUIRE) > ms;
}

bool volume_busy(struct volume *v)
{
	bool b;

	pthread_mutex_lock(&v->lock);
	b = v->users > 0;
	pthread_mutex_unlock(&v->lock);
	return b;
}

static int io_inline_raw(struct volume *v, enum ioeng_op op, void *buf, uint64_t off,
			 uint64_t len);

static int io_inline(struct volume *v, enum ioeng_op op, void *buf, uint64_t off, uint64_t len)
{
	int rc;

	lio_begin(v);
	rc = io_inline_raw(v, op, buf, off, len);
	lio_end(v);
	return rc;
}

static int io_inline_raw(struct volume *v, enum ioeng_op op, void *buf, uint64_t off,
			 uint64_t len)
{
	int mode;

	switch (op) {
	case IOENG_READ:
		return bdev_pread(v->data, buf, len, off);
	case IOENG_WRITE:
		return bdev_pwrite(v->data, buf, len, off);
	case IOENG_WRITE_FUA:
		return bdev_pwrite_sync(v->data, buf, len, off);
	case IOENG_FSYNC:
		return bdev_flush(v->data);
	case IOENG_PUNCH_HOLE:
	case IOENG_ZERO_RANGE:
		mode = (op == IOENG_PUNCH_HOLE ? FALLOC_FL_PUNCH_HOLE : FALLOC_FL_ZERO_RANGE) |
		       FALLOC_FL_KEEP_SIZE;
		return fallocate(bdev_fd(v->data), mode, (off_t)off, (off_t)len) < 0 ? -errno : 0;
	}
	return -EINVAL;
}

/* One request, waiting for it; 0 or a negative errno. */
static int io(struct volume *v, enum ioeng_op op, const void *buf, uint64_t off, uint64_t len)
{
	struct ioeng_req r = {.op = op, .buf = (void *)buf, .off = off, .len = len};
	int rc;

	if (!v->io)
		return io_inline(v, op, (void *)buf, off, len);
	lio_begin(v);
	rc = ioeng_run(v->io, &r);
	lio_end(v);
	return rc < 0 ? rc : 0;
}

/*
 * Group commit of the activity log (DESIGN §4): one thread at a time
 * writes a transaction, without the volume lock, so that reads and hot
 * writes go on meanwhile; cold extents that arrive while it is written
 * share the next transaction. The bitmap pages of evicted extents are
 * encoded under the lock and written first. Lock held on entry and exit.
 */
static int al_commit_unlocked(struct volume *v)
{
	uint64_t pg[AL_UPDATES_PER_TR], first, last;
	unsigned int n_pg = 0, i, j;
	struct al_tx tx;
	int rc;

	rc = al_commit_prepare(v->al, &tx, v->al_block);
	if (rc < 0 || !tx.n)
		return rc;
	for (i = 0; i < tx.n_evicted; i++) {
		bitmap_bits_to_pages((uint64_t)tx.evicted[i] * 1024, 1024, &first, &last);
		for (j = 0; j < n_pg && pg[j] != first; j++)
			;
		if (j < n_pg || !bitmap_page_dirty(v->bm, first))
			continue;
		bitmap_page_encode(v->bm, first, v->al_pages + (size_t)n_pg * BITMAP_PAGE_BYTES);
		bitmap_page_mark(v->bm, first, false);
		pg[n_pg++] = first;
	}
	v->al_busy = true;
	pthread_mutex_unlock(&v->lock);
	lio_begin(v); /* metadata I/O counts for disk-timeout too */
	for (i = 0; i < n_pg && rc == 0; i++)
		rc = md_write_bm_page(v->md, pg[i], v->al_pages + (size_t)i * BITMAP_PAGE_BYTES);
	if (rc == 0)
		rc = md_write_al_block(v->md, tx.block, v->al_block);
	lio_end(v);
	pthread_mutex_lock(&v->lock);
	v->al_busy = false;
	if (rc < 0) {
		for (i = 0; i < n_pg; i++)
			bitmap_page_mark(v->bm, pg[i], true);
	} else {
		__atomic_add_fetch(&v->c.bm, n_pg, __ATOMIC_RELAXED);
		v->c.al++;
	}
	al_commit_finish(v->al, &tx, rc);
	pthread_cond_broadcast(&v->cond);
	return rc;
}

/* Take AL references for a write (waiting for idle slots and for the
 * transaction that brings its extents in) and mark the bitmap: no peer is
 * connected yet, so every write is out of sync. */
static int begin_write(struct volume *v, uint64_t off, uint32_t len)
{
	uint64_t sector = off / 512;
	uint32_t nsect = (len + 511) / 512;
	int rc;

	while ((rc = al_begin_io(v->al, sector, nsect)) == -EAGAIN)
		pthread_cond_wait(&v->cond, &v->lock);
	if (rc < 0)
		return rc;
	while (!al_range_hot(v->al, sector, nsect)) {
		if (v->al_busy || v->md_busy) { /* one metadata writer at a time */
			pthread_cond_wait(&v->cond, &v->lock);
			continue;
		}
		rc = al_commit_unlocked(v);
		if (rc < 0) {
			al_complete_io(v->al, sector, nsect);
			pthread_cond_broadcast(&v->cond);
			return -EREMOTEIO; /* the caller reports it, unlocked */
		}
	}
	if (!v->res->d->up->replicating(v->res))
		bitmap_set_range(v->bm, off / 4096, (off % 4096 + len + 4095) / 4096);
	return 0;
}

static void end_write(struct volume *v, uint64_t off, uint32_t len, struct inflight *me)
{
	al_complete_io(v->al, off / 512, (len + 511) / 512);
	release_range(v, me);
}

/* begin_write failed: -EREMOTEIO means an AL write failed (lock not held). */
static int md_error(struct volume *v, int rc)
{
	if (rc != -EREMOTEIO)
		return rc;
	volume_io_error(v, VOLUME_ERR_MD, "writing the activity log to", -EIO);
	return -EIO;
}

/* A data request enters the volume (lock held): refused with EIO once the
 * volume failed or while it is detached. */
static int enter(struct volume *v)
{
	bool counted = false;

	while ((v->frozen || v->detaching) && v->md && !v->failing) {
		if (!counted && v->frozen) { /* status shows it: "frozen" */
			v->c.frozen++;
			counted = true;
		}
		pthread_cond_wait(&v->cond, &v->lock);
	}
	if (counted)
		v->c.frozen--;
	if (!v->md || v->failing)
		return -EIO;
	v->users++;
	return 0;
}

int volume_enter(struct volume *v)
{
	return enter(v);
}

void volume_leave(struct volume *v)
{
	if (--v->users == 0)
		pthread_cond_broadcast(&v->cond);
}

/* Claim the range, take AL references (committing cold extents) and mark
 * the bitmap; the data write may then be submitted. */
int volume_write_begin(struct volume *v, struct inflight *me)
{
	int rc;

	pthread_mutex_lock(&v->lock);
	rc = enter(v);
	if (rc < 0) {
		pthread_mutex_unlock(&v->lock);
		return rc;
	}
	claim_range(v, me);
	rc = begin_write(v, me->off, (uint32_t)me->len);
	if (rc < 0) {
		release_range(v, me);
		volume_leave(v);
		pthread_mutex_unlock(&v->lock);
		return md_error(v, rc);
	}
	v->c.lo++;
	v->c.ap++;
	pthread_mutex_unlock(&v->lock);
	return 0;
}

/* The data write of me finished with rc. */
void volume_write_end(struct volume *v, struct inflight *me, int rc)
{
	if (rc < 0)
		volume_io_error(v, VOLUME_ERR_DATA, "writing", rc);
	pthread_mutex_lock(&v->lock);
	v->c.lo--;
	v->c.ap--;
	if (rc >= 0)
		v->c.dw += me->len / 1024;
	end_write(v, me->off, (uint32_t)me->len, me);
	volume_leave(v);
	pthread_mutex_unlock(&v->lock);
}

/* A read through the I/O engine: count it out and check its result. */
struct read_req {
	struct volume *v;
	void (*done)(void *arg, int res);
	void *arg;
};

static void read_end(struct volume *v, int res)
{
	if (res < 0)
		volume_io_error(v, VOLUME_ERR_DATA, "reading", res);
	pthread_mutex_lock(&v->lock);
	volume_leave(v);
	pthread_mutex_unlock(&v->lock);
}

static void read_done(void *arg, int res)
{
	struct read_req rr = *(struct read_req *)arg;

	free(arg);
	lio_end(rr.v);
	read_end(rr.v, res);
	rr.done(rr.arg, res);
}

/* An asynchronous write (I/O engine) completed. */
static void write_done(void *arg, int res)
{
	struct read_req rr = *(struct read_req *)arg;

	free(arg);
	lio_end(rr.v);
	rr.done(rr.arg, res);
}

int volume_submit(struct volume *v, enum ioeng_op op, void *buf, uint64_t off, uint32_t len,
		  void (*done)(void *arg, int res), void *arg)
{
	struct ioeng_req r = {.op = op, .buf = buf, .off = off, .len = len, .done = done, .arg = arg};
	struct read_req *rr;
	int rc;

	if (op == IOENG_READ) {
		pthread_mutex_lock(&v->lock);
		rc = enter(v);
		if (rc == 0)
			v->c.dr += len / 1024;
		pthread_mutex_unlock(&v->lock);
		if (rc < 0)
			return rc;
	}
	if (!v->io) { /* inline: done before returning */
		rc = io_inline(v, op, buf, off, len);
		if (op == IOENG_READ)
			read_end(v, rc);
		done(arg, rc < 0 ? rc : (int)len);
		return 0;
	}
	rr = malloc(sizeof(*rr));
	if (!rr) {
		if (op == IOENG_READ)
			read_end(v, 0);
		return -ENOMEM;
	}
	*rr = (struct read_req){v, done, arg};
	r.done = op == IOENG_READ ? read_done : write_done;
	r.arg = rr;
	lio_begin(v);
	rc = ioeng_submit(v->io, &r);
	if (rc < 0) {
		lio_end(v);
		free(rr);
		if (op == IOENG_READ)
			read_end(v, 0);
	}
	return rc;
}

/*
 * FLUSH makes every completed write durable. The metadata needs nothing
 * more: AL transactions and bitmap pages are written durably when they
 * are written, and the bitmap bits of the extents still in the activity
 * log are rebuilt from it after a crash, as in DRBD. The bitmap is
 * written back lazily: on eviction from the AL, at detach and at down.
 */
int volume_flush(struct volume *v)
{
	int rc;

	pthread_mutex_lock(&v->lock);
	rc = enter(v);
	pthread_mutex_unlock(&v->lock);
	if (rc < 0)
		return rc;
	rc = io(v, IOENG_FSYNC, NULL, 0, 0);
	if (rc < 0)
		volume_io_error(v, VOLUME_ERR_DATA, "flushing", rc);
	pthread_mutex_lock(&v->lock);
	volume_leave(v);
	pthread_mutex_unlock(&v->lock);
	return rc;
}

/* TRIM and WRITE_ZEROES map to fallocate; zeroing falls back to writes.
 * Large ranges (up to 4 GiB) go in pieces the activity log can hold. */
static int trim_piece(struct volume *v, uint64_t off, uint32_t len, bool zero, bool may_trim,
		      bool fast);

static int trim_pieces(struct volume *v, uint64_t off, uint32_t len, bool zero, bool may_trim,
		       bool fast)
{
	const uint32_t piece = 64u << 20; /* 16 extents */
	int rc = 0;

	while (len > 0 && rc == 0) {
		uint32_t n = len < piece ? len : piece;

		rc = trim_piece(v, off, n, zero, may_trim, fast);
		off += n;
		len -= n;
	}
	return rc;
}

int volume_trim(struct volume *v, uint64_t off, uint32_t len, bool zero, bool may_trim)
{
	return trim_pieces(v, off, len, zero, may_trim, false);
}

int volume_zero_fast(struct volume *v, uint64_t off, uint32_t len, bool may_trim)
{
	return trim_pieces(v, off, len, true, may_trim, true);
}

/* fast: no fallback to writes; -ENOTSUP if fallocate cannot do it. */
static int trim_piece(struct volume *v, uint64_t off, uint32_t len, bool zero, bool may_trim,
		      bool fast)
{
	struct inflight me = {off, len, NULL};
	int rc;

	pthread_mutex_lock(&v->lock);
	rc = enter(v);
	if (rc < 0) {
		pthread_mutex_unlock(&v->lock);
		return rc;
	}
	if (fast && !may_trim && bdev_is_blockdev(v->data)) {
		/* the kernel's ZERO_RANGE on a block device may write zeroes */
		volume_leave(v);
		pthread_mutex_unlock(&v->lock);
		return -ENOTSUP;
	}
	claim_range(v, &me);
	rc = begin_write(v, off, len);
	if (rc < 0) {
		release_range(v, &me);
		volume_leave(v);
		pthread_mutex_unlock(&v->lock);
		return md_error(v, rc);
	}
	pthread_mutex_unlock(&v->lock);

	rc = io(v, (!zero || may_trim) ? IOENG_PUNCH_HOLE : IOENG_ZERO_RANGE, NULL, off, len);
	if (fast && (rc == -EOPNOTSUPP || rc == -ENOTSUP || rc == -EINVAL || rc == -ENODEV))
		rc = -ENOTSUP; /* nothing was changed: no I/O error either */
	else if (rc < 0 && zero)
		rc = bdev_zero(v->data, off, len);
	else if (rc < 0 && !zero)
		rc = 0; /* a discard is only a hint */
	if (rc < 0 && rc != -ENOTSUP)
		volume_io_error(v, VOLUME_ERR_DATA, "zeroing", rc);

	pthread_mutex_lock(&v->lock);
	end_write(v, off, len, &me);
	volume_leave(v);
	pthread_mutex_unlock(&v->lock);
	return rc;
}

/* ---------------------------------------------------------------- replication */

void volume_freeze(struct volume *v, unsigned int why, bool on)
{
	pthread_mutex_lock(&v->lock);
	if (on)
		v->frozen |= why;
	else
		v->frozen &= ~why;
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
}

void volume_freeze_all(struct resource *r, unsigned int why, bool on)
{
	unsigned int i;

	for (i = 0; i < r->n_vols; i++)
		volume_freeze(&r->vols[i], why, on);
}

static void bits_of(uint64_t off, uint64_t len, uint64_t *first, uint64_t *n)
{
	*first = off / 4096;
	*n = (off % 4096 + len + 4095) / 4096;
}

void volume_mark_oos(struct volume *v, uint64_t off, uint64_t len)
{
	uint64_t first, n;

	bits_of(off, len, &first, &n);
	pthread_mutex_lock(&v->lock);
	if (v->bm)
		bitmap_set_range(v->bm, first, n);
	pthread_mutex_unlock(&v->lock);
}

/* Only whole blocks become in sync. */
void volume_clear_oos(struct volume *v, uint64_t off, uint64_t len)
{
	uint64_t first = (off + 4095) / 4096, end = (off + len) / 4096;

	pthread_mutex_lock(&v->lock);
	if (v->bm && end > first)
		bitmap_clear_range(v->bm, first, end - first);
	pthread_mutex_unlock(&v->lock);
}

/* Lock held: the whole bitmap to disk (end of a resync). */
int volume_writeback_bitmap_locked(struct volume *v)
{
	v->bm_due = true;
	return v->md ? 0 : -ENODEV;
}

/* A write from the peer: through the activity log, never marked. */
int volume_peer_write(struct volume *v, uint64_t off, uint32_t len, const void *buf, bool fua)
{
	struct inflight me = {off, len, NULL};
	int rc;

	pthread_mutex_lock(&v->lock);
	rc = enter(v);
	if (rc < 0) {
		pthread_mutex_unlock(&v->lock);
		return rc;
	}
	claim_range(v, &me);
	rc = begin_write(v, off, len);
	if (rc < 0) {
		release_range(v, &me);
		volume_leave(v);
		pthread_mutex_unlock(&v->lock);
		return md_error(v, rc);
	}
	v->c.lo++;
	pthread_mutex_unlock(&v->lock);
	rc = io(v, fua ? IOENG_WRITE_FUA : IOENG_WRITE, buf, off, len);
	if (rc < 0)
		volume_io_error(v, VOLUME_ERR_DATA, "writing (from the peer)", rc);
	pthread_mutex_lock(&v->lock);
	v->c.lo--;
	if (rc >= 0)
		v->c.dw += len / 1024;
	end_write(v, off, len, &me);
	volume_leave(v);
	pthread_mutex_unlock(&v->lock);
	return rc;
}

int volume_peer_trim(struct volume *v, uint64_t off, uint32_t len, bool zero)
{
	return volume_trim(v, off, len, zero, !zero);
}

/* Resync source: read [off, off+len) with the range claimed, so that no
 * write of the same blocks lands between the read and the send; release
 * with volume_read_release(). */
int volume_read_claimed(struct volume *v, uint64_t off, uint32_t len, void *buf, void *unused1,
			void *unused2)
{
	struct inflight *me = calloc(1, sizeof(*me));
	int rc;

	if (!me)
		return -ENOMEM;
	me->off = off;
	me->len = len;
	pthread_mutex_lock(&v->lock);
	rc = enter(v);
	if (rc < 0) {
		pthread_mutex_unlock(&v->lock);
		free(me);
		return rc;
	}
	claim_range(v, me);
	pthread_mutex_unlock(&v->lock);
	rc = io(v, IOENG_READ, buf, off, len);
	if (rc < 0)
		volume_io_error(v, VOLUME_ERR_DATA, "reading (for the resync)", rc);
	pthread_mutex_lock(&v->lock);
	v->c.dr += len / 1024;
	if (rc < 0) {
		release_range(v, me);
		volume_leave(v);
		free(me);
	}
	pthread_mutex_unlock(&v->lock);
	return rc;
}

/* A read by the thread that froze the volume (the handshake): no request
 * enters; those that entered before are waited for. Nothing is claimed. */
int volume_read_frozen(struct volume *v, uint64_t off, uint32_t len, void *buf)
{
	int rc;

	pthread_mutex_lock(&v->lock);
	while (v->users && v->md && !v->failing) /* requests that entered before the freeze */
		pthread_cond_wait(&v->cond, &v->lock);
	rc = !v->md || v->failing ? -EIO : 0;
	pthread_mutex_unlock(&v->lock);
	if (rc == 0)
		rc = io(v, IOENG_READ, buf, off, len);
	if (rc < 0)
		volume_io_error(v, VOLUME_ERR_DATA, "reading (to save split-brain blocks)", rc);
	return rc < 0 ? rc : 0;
}

void volume_read_release(struct volume *v, uint64_t off, uint32_t len)
{
	struct inflight *i;

	pthread_mutex_lock(&v->lock);
	for (i = v->inflight; i; i = i->next)
		if (i->off == off && i->len == len)
			break;
	if (i) {
		release_range(v, i);
		volume_leave(v);
		free(i);
	}
	pthread_mutex_unlock(&v->lock);
}

/* Resync target: write blocks from the source and clear their bits. */
int volume_rs_write(struct volume *v, uint64_t off, uint32_t len, const void *buf)
{
	struct inflight me = {off, len, NULL};
	int rc;

	pthread_mutex_lock(&v->lock);
	rc = enter(v);
	if (rc < 0) {
		pthread_mutex_unlock(&v->lock);
		return rc;
	}
	claim_range(v, &me);
	pthread_mutex_unlock(&v->lock);
	rc = io(v, IOENG_WRITE, buf, off, len);
	if (rc < 0)
		volume_io_error(v, VOLUME_ERR_DATA, "writing (resync)", rc);
	pthread_mutex_lock(&v->lock);
	if (rc == 0) {
		v->c.dw += len / 1024;
		bitmap_clear_range(v->bm, off / 4096, len / 4096);
	}
	release_range(v, &me);
	volume_leave(v);
	pthread_mutex_unlock(&v->lock);
	return rc;
}

/* No local disk to read or write (detached, or failing). */
bool volume_attached(struct volume *v)
{
	bool a;

	pthread_mutex_lock(&v->lock);
	a = v->md != NULL;
	pthread_mutex_unlock(&v->lock);
	return a;
}

bool volume_diskless(struct volume *v)
{
	bool d;

	pthread_mutex_lock(&v->lock);
	d = !v->md || v->failing;
	pthread_mutex_unlock(&v->lock);
	return d;
}
