/*
 * volume: one attached volume: metadata, bitmap and activity log, and the
 * local data path (reads, writes through the AL, flush, trim, zero).
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
#include <unistd.h>

#include "log.h"
#include "md-replay.h"
#include "tandemd.h"

static int al_write_block(void *ctx, uint32_t block, const void *buf)
{
	struct volume *v = ctx;
	int rc = md_write_al_block(v->md, block, buf);

	if (rc == 0)
		v->c.al++;
	return rc;
}

static int bm_write_page(void *ctx, uint64_t page, const void *buf)
{
	struct volume *v = ctx;
	int rc = md_write_bm_page(v->md, page, buf);

	if (rc == 0)
		v->c.bm++;
	return rc;
}

/* Before an extent leaves the AL its bitmap pages must be on disk. */
static int al_flush_extent(void *ctx, uint32_t extent)
{
	struct volume *v = ctx;
	uint64_t first, last;
	int64_t rc;

	bitmap_bits_to_pages((uint64_t)extent * 1024, 1024, &first, &last);
	rc = bitmap_writeback(v->bm, first, last, bm_write_page, v); /* durable pages */
	return rc < 0 ? (int)rc : 0;
}

static const struct al_ops al_ops = {
	.write_block = al_write_block,
	.flush_extent = al_flush_extent,
};

int volume_sync_sb(struct volume *v)
{
	return md_write_sb(v->md, &v->sb);
}

static enum state_disk disk_from_flags(const struct volume *v)
{
	const char *fencing = conf_res_text(v->res->d->conf, v->res->cr, CONF_SECT_DISK, "fencing");
	uint32_t f = v->sb.flags;

	if (!(f & MDF_CONSISTENT))
		return DISK_INCONSISTENT;
	if (!(f & MDF_WAS_UP_TO_DATE))
		return DISK_OUTDATED;
	if ((f & MDF_PEER_OUT_DATED) || !strcmp(fencing, "dont-care"))
		return DISK_UPTODATE;
	return DISK_CONSISTENT;
}

static int load_bitmap(struct volume *v)
{
	uint64_t pages, p;
	uint8_t *buf;
	int rc;

	rc = bitmap_new(md_layout_bm_bits(v->size_sect), &v->bm);
	if (rc < 0)
		return rc;
	pages = md_layout_bm_bytes(v->size_sect) / 4096;
	buf = malloc(4096);
	if (!buf)
		return -ENOMEM;
	for (p = 0, rc = 0; p < pages && rc == 0; p++) {
		rc = md_read_bm(v->md, p, buf, 1);
		if (rc == 0)
			bitmap_page_decode(v->bm, p, buf);
	}
	free(buf);
	return rc;
}

static void volume_release(struct volume *v)
{
	ioeng_free(v->io);
	v->io = NULL;
	al_free(v->al);
	bitmap_free(v->bm);
	md_close(v->md);
	v->al = NULL;
	v->bm = NULL;
	v->md = NULL;
	v->data = NULL;
}

int volume_attach(struct volume *v, struct reply_err *e)
{
	const struct conf *c = v->res->d->conf;
	const struct conf_vol *cv = v->cv;
	struct md_open_opts o = {
		.data_path = cv->disk,
		.md_path = cv->md_dev,
		.index = cv->md_index,
		.writable = true,
	};
	struct md_replay_result rr;
	const char *mode;
	char err[256];
	uint64_t want;
	int rc;

	if (v->md)
		return 0;
	if (!cv->disk || !strcmp(cv->disk, "none")) {
		ERRF(e, 10, "volume %u is diskless ('disk none'); tandem needs a backing device",
		     v->vnr);
		return -ENODEV;
	}
	o.kind = cv->md == CONF_MD_INTERNAL ? MD_INTERNAL
		 : cv->md == CONF_MD_INDEXED ? MD_INDEXED
					     : MD_FLEXIBLE;
	rc = md_open(&o, &v->md, err, sizeof(err));
	if (rc < 0) {
		ERRF(e, 10, "volume %u: %s", v->vnr, err);
		return rc;
	}
	rc = md_load_sb(v->md, &v->sb, err, sizeof(err));
	if (rc == -EUCLEAN) {
		log_res(LOG_WARNING, v->res->name,
			"volume %u: metadata not clean (crash?): replaying the activity log", v->vnr);
		rc = md_replay(v->md, &v->sb, &rr);
		if (rc == 0 && rr.refused) {
			ERRF(e, 10,
			     "volume %u: %s, and this node was Primary: the activity log is "
			     "needed; see tandemadm apply-al",
			     v->vnr, rr.problem);
			rc = -EUCLEAN;
		} else if (rc == 0) {
			log_res(LOG_NOTICE, v->res->name,
				"volume %u: activity log replayed: %u extents, %llu KiB marked out of "
				"sync",
				v->vnr, rr.n_extents, (unsigned long long)rr.newly_marked * 4);
			rc = md_load_sb(v->md, &v->sb, err, sizeof(err));
		}
	}
	if (rc < 0) {
		if (!e->msg[0])
			ERRF(e, 10, "volume %u: %s", v->vnr, err);
		volume_release(v);
		return rc;
	}
	v->data = md_data_bdev(v->md);
	want = conf_res_num(c, v->res->cr, CONF_SECT_DISK, "size");
	if (!want || want > md_layout(v->md)->max_data_sect)
		want = md_layout(v->md)->max_data_sect;
	if (v->sb.la_size_sect && v->sb.la_size_sect > md_layout(v->md)->max_data_sect) {
		ERRF(e, 10,
		     "volume %u: the backing device is smaller than the last agreed size (%llu "
		     "sectors); refusing to truncate it",
		     v->vnr, (unsigned long long)v->sb.la_size_sect);
		volume_release(v);
		return -ENOSPC;
	}
	v->size_sect = v->sb.la_size_sect ? v->sb.la_size_sect : want;
	v->sb.la_size_sect = v->size_sect;
	rc = load_bitmap(v);
	if (rc == 0)
		rc = al_new((uint32_t)conf_res_num(c, v->res->cr, CONF_SECT_DISK, "al-extents"),
			    v->sb.al_stripes, v->sb.al_stripe_size_4k, &al_ops, v, &v->al);
	if (rc < 0) {
		ERRF(e, 20, "volume %u: cannot set up the bitmap and activity log: %s", v->vnr,
		     strerror(-rc));
		volume_release(v);
		return rc;
	}
	mode = getenv("TANDEM_IO");
	if (mode && (!strcmp(mode, "io_uring") || !strcmp(mode, "threads")))
		rc = ioeng_new(bdev_fd(v->data), 128,
			       !strcmp(mode, "threads") ? IOENG_FORCE_THREADS : 0, &v->io);
	if (rc < 0) {
		ERRF(e, 20, "volume %u: cannot set up the I/O engine: %s", v->vnr, strerror(-rc));
		volume_release(v);
		return rc;
	}
	if (v->io && ioeng_uring_error(v->io))
		log_res(LOG_NOTICE, v->res->name, "volume %u: io_uring unavailable (%s): using %s",
			v->vnr, strerror(-ioeng_uring_error(v->io)), ioeng_kind(v->io));
	/* a node that went down as Primary is a crashed primary */
	if (v->sb.flags & MDF_PRIMARY_IND)
		v->sb.flags |= MDF_CRASHED_PRIMARY;
	v->sb.flags &= ~(MDF_PRIMARY_IND | MDF_AL_CLEAN);
	v->sb.uuid[MD_UI_CURRENT] &= ~1ULL;
	v->sb.magic = MD_MAGIC_INUSE;
	rc = volume_sync_sb(v);
	if (rc < 0) {
		ERRF(e, 20, "volume %u: cannot write the superblock: %s", v->vnr, strerror(-rc));
		volume_release(v);
		return rc;
	}
	v->disk = disk_from_flags(v);
	log_res(LOG_INFO, v->res->name,
		"volume %u: attached %s, %llu KiB, disk %s, %llu KiB out of sync, I/O via %s",
		v->vnr, cv->disk, (unsigned long long)v->size_sect / 2, state_disk_name(v->disk),
		(unsigned long long)bitmap_weight(v->bm) * 4, v->io ? ioeng_kind(v->io) : "inline");
	return 0;
}

int volume_detach(struct volume *v, struct reply_err *e)
{
	int64_t rc = 0;

	if (!v->md)
		return 0;
	pthread_mutex_lock(&v->lock);
	rc = bdev_flush(v->data);
	if (rc == 0)
		rc = bitmap_writeback(v->bm, 0, bitmap_pages(v->bm) - 1, bm_write_page, v);
	if (rc >= 0)
		rc = md_init_al(v->md);
	if (rc >= 0) {
		v->sb.flags |= MDF_AL_CLEAN;
		v->sb.magic = MD_MAGIC_CLEAN;
		rc = volume_sync_sb(v);
	}
	pthread_mutex_unlock(&v->lock);
	if (rc < 0) {
		ERRF(e, 20, "volume %u: cannot write the metadata back: %s; it stays marked in use",
		     v->vnr, strerror((int)-rc));
		return (int)rc;
	}
	volume_release(v);
	v->disk = DISK_DISKLESS;
	return 0;
}

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
static int io_inline(struct volume *v, enum ioeng_op op, void *buf, uint64_t off, uint64_t len)
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
	rc = ioeng_run(v->io, &r);
	return rc < 0 ? rc : 0;
}

/* Take AL references for a write (waiting for idle slots) and mark the
 * bitmap: no peer is connected yet, so every write is out of sync. */
static int begin_write(struct volume *v, uint64_t off, uint32_t len)
{
	uint64_t sector = off / 512;
	uint32_t nsect = (len + 511) / 512;
	int rc;

	while ((rc = al_begin_io(v->al, sector, nsect)) == -EAGAIN)
		pthread_cond_wait(&v->cond, &v->lock);
	if (rc < 0)
		return rc;
	if (al_pending(v->al)) {
		rc = al_commit(v->al);
		if (rc < 0) {
			al_complete_io(v->al, sector, nsect);
			return rc;
		}
	}
	bitmap_set_range(v->bm, off / 4096, (off % 4096 + len + 4095) / 4096);
	return 0;
}

static void end_write(struct volume *v, uint64_t off, uint32_t len, struct inflight *me)
{
	al_complete_io(v->al, off / 512, (len + 511) / 512);
	release_range(v, me);
}

/* Claim the range, take AL references (committing cold extents) and mark
 * the bitmap; the data write may then be submitted. */
int volume_write_begin(struct volume *v, struct inflight *me)
{
	int rc;

	pthread_mutex_lock(&v->lock);
	claim_range(v, me);
	rc = begin_write(v, me->off, (uint32_t)me->len);
	if (rc < 0) {
		release_range(v, me);
		pthread_mutex_unlock(&v->lock);
		return rc;
	}
	v->c.lo++;
	v->c.ap++;
	pthread_mutex_unlock(&v->lock);
	return 0;
}

/* The data write of me finished with rc. */
void volume_write_end(struct volume *v, struct inflight *me, int rc)
{
	pthread_mutex_lock(&v->lock);
	v->c.lo--;
	v->c.ap--;
	if (rc >= 0)
		v->c.dw += me->len / 1024;
	end_write(v, me->off, (uint32_t)me->len, me);
	pthread_mutex_unlock(&v->lock);
}

int volume_submit(struct volume *v, enum ioeng_op op, void *buf, uint64_t off, uint32_t len,
		  void (*done)(void *arg, int res), void *arg)
{
	struct ioeng_req r = {.op = op, .buf = buf, .off = off, .len = len, .done = done, .arg = arg};

	if (op == IOENG_READ) {
		pthread_mutex_lock(&v->lock);
		v->c.dr += len / 1024;
		pthread_mutex_unlock(&v->lock);
	}
	if (!v->io) { /* inline: done before returning */
		int rc = io_inline(v, op, buf, off, len);

		done(arg, rc < 0 ? rc : (int)len);
		return 0;
	}
	return ioeng_submit(v->io, &r);
}

/* FLUSH reaches the backing device and the metadata. */
int volume_flush(struct volume *v)
{
	int64_t rc = io(v, IOENG_FSYNC, NULL, 0, 0);

	if (rc < 0)
		return (int)rc;
	pthread_mutex_lock(&v->lock);
	/* bitmap pages are written durably (RWF_DSYNC): no second flush */
	rc = bitmap_writeback(v->bm, 0, bitmap_pages(v->bm) - 1, bm_write_page, v);
	pthread_mutex_unlock(&v->lock);
	return rc < 0 ? (int)rc : 0;
}

/* TRIM and WRITE_ZEROES map to fallocate; zeroing falls back to writes.
 * Large ranges (up to 4 GiB) go in pieces the activity log can hold. */
static int trim_piece(struct volume *v, uint64_t off, uint32_t len, bool zero, bool may_trim);

int volume_trim(struct volume *v, uint64_t off, uint32_t len, bool zero, bool may_trim)
{
	const uint32_t piece = 64u << 20; /* 16 extents */
	int rc = 0;

	while (len > 0 && rc == 0) {
		uint32_t n = len < piece ? len : piece;

		rc = trim_piece(v, off, n, zero, may_trim);
		off += n;
		len -= n;
	}
	return rc;
}

static int trim_piece(struct volume *v, uint64_t off, uint32_t len, bool zero, bool may_trim)
{
	struct inflight me = {off, len, NULL};
	int rc;

	pthread_mutex_lock(&v->lock);
	claim_range(v, &me);
	rc = begin_write(v, off, len);
	if (rc < 0) {
		release_range(v, &me);
		pthread_mutex_unlock(&v->lock);
		return rc;
	}
	pthread_mutex_unlock(&v->lock);

	rc = io(v, (!zero || may_trim) ? IOENG_PUNCH_HOLE : IOENG_ZERO_RANGE, NULL, off, len);
	if (rc < 0 && zero)
		rc = bdev_zero(v->data, off, len);
	else if (rc < 0 && !zero)
		rc = 0; /* a discard is only a hint */

	pthread_mutex_lock(&v->lock);
	end_write(v, off, len, &me);
	pthread_mutex_unlock(&v->lock);
	return rc;
}
