/*
 * volume-md: a volume's metadata: attach (open, replay the activity log,
 * load the bitmap) and detach (write everything back), and the superblock
 * and bitmap writes asked for under the volume's lock, made after it is
 * dropped (volume_unlock(): no I/O under v->lock).
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
#include "state/state-change.h"
#include "volume/volume-int.h"
#include "volume/volume.h"

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
		__atomic_add_fetch(&v->c.bm, 1, __ATOMIC_RELAXED);
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
	v->sb_due = true;
	return v->md ? 0 : -ENODEV;
}

_Static_assert((int)GI_COUNT == (int)MD_UI_COUNT, "the metadata holds one struct gi");

void volume_gi(const struct volume *v, struct gi *g)
{
	memcpy(g->uuid, v->sb.uuid, sizeof(g->uuid));
}

uint64_t volume_uuid(const struct volume *v, unsigned int i)
{
	return i < GI_COUNT ? v->sb.uuid[i] : 0;
}

uint32_t volume_flags(const struct volume *v)
{
	return v->sb.flags;
}

int volume_set_gi(struct volume *v, const struct gi *g)
{
	memcpy(v->sb.uuid, g->uuid, sizeof(v->sb.uuid));
	return volume_sync_sb(v);
}

int volume_set_flags(struct volume *v, uint32_t set, uint32_t clear)
{
	v->sb.flags = (v->sb.flags & ~clear) | set;
	return volume_sync_sb(v);
}

/* A dirty bitmap page, copied under the lock for volume_unlock(). */
struct bm_copy {
	uint64_t page;
	struct bm_copy *next;
	_Alignas(4096) unsigned char buf[BITMAP_PAGE_BYTES];
};

static void free_copies(struct bm_copy *c)
{
	while (c) {
		struct bm_copy *next = c->next;

		free(c);
		c = next;
	}
}

static int copy_page(void *ctx, uint64_t page, const void *buf)
{
	struct bm_copy **list = ctx, *c;

	if (posix_memalign((void **)&c, 4096, sizeof(*c)) != 0)
		return -ENOMEM;
	c->page = page;
	memcpy(c->buf, buf, sizeof(c->buf));
	c->next = *list;
	*list = c;
	return 0;
}

int volume_unlock(struct volume *v)
{
	struct bm_copy *pages = NULL, *c;
	bool sb = v->sb_due, bm = v->bm_due;
	const char *what = NULL;
	struct md_sb copy;
	struct md *md;
	int rc = 0;

	v->sb_due = v->bm_due = false;
	pthread_mutex_unlock(&v->lock);
	if (!sb && !bm)
		return 0;
	/* md_lock first: the writes land in the order their copies were taken,
	 * so the newest copy is the last one written */
	pthread_mutex_lock(&v->md_lock);
	pthread_mutex_lock(&v->lock);
	/* the AL's group commit writes bitmap pages too: the write windows
	 * take turns, so pages land in the order they were copied */
	while (v->al_busy)
		pthread_cond_wait(&v->cond, &v->lock);
	if (!v->md || v->failing || v->detaching) {
		/* detached meanwhile, or failing: no write; detaching: the
		 * detach writes the superblock and the bitmap itself */
		pthread_mutex_unlock(&v->lock);
		pthread_mutex_unlock(&v->md_lock);
		return v->md && v->failing ? -EIO : 0;
	}
	v->md_busy = true;
	md = v->md;
	copy = v->sb;
	if (bm && v->bm) {
		/* pages are marked clean as they are copied: a change made while
		 * they are written dirties them again */
		int64_t n = bitmap_writeback(v->bm, 0, bitmap_pages(v->bm) - 1, copy_page, &pages);

		if (n < 0)
			rc = (int)n;
	}
	v->users++; /* md stays while we write (detach waits for users) */
	pthread_mutex_unlock(&v->lock);
	if (rc == 0 && sb) {
		rc = md_write_sb(md, &copy);
		what = "writing the superblock to";
	}
	for (c = pages; rc == 0 && c; c = c->next) {
		rc = md_write_bm_page(md, c->page, c->buf);
		what = "writing the bitmap to";
		if (rc == 0)
			__atomic_add_fetch(&v->c.bm, 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_lock(&v->lock);
	for (c = pages; rc < 0 && c; c = c->next)
		bitmap_page_mark(v->bm, c->page, true); /* not on disk: still dirty */
	if (rc < 0)
		volume_io_error_locked(v, VOLUME_ERR_MD, what ? what : "copying the bitmap of",
				       rc);
	v->md_busy = false;
	pthread_cond_broadcast(&v->cond);
	volume_leave(v);
	pthread_mutex_unlock(&v->lock);
	pthread_mutex_unlock(&v->md_lock);
	free_copies(pages);
	return rc;
}

static enum state_disk disk_from_flags(const struct volume *v)
{
	const char *fencing = conf_res_text(tandemd_conf(v->res->d), resource_cr(v->res), CONF_SECT_DISK, "fencing");
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
	if (v->data)
		bdev_set_faults(v->data, NULL);
	free(v->al_block);
	free(v->al_pages);
	v->al_block = v->al_pages = NULL;
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
	const struct conf *c = tandemd_conf(v->res->d);
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
	want = conf_res_num(c, resource_cr(v->res), CONF_SECT_DISK, "size");
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
	if (rc == 0 && (posix_memalign((void **)&v->al_block, 4096, AL_BLOCK_BYTES) ||
			posix_memalign((void **)&v->al_pages, 4096,
				       (size_t)AL_UPDATES_PER_TR * BITMAP_PAGE_BYTES)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = al_new((uint32_t)conf_res_num(c, resource_cr(v->res), CONF_SECT_DISK, "al-extents"),
			    v->sb.al_stripes, v->sb.al_stripe_size_4k, &al_ops, v, &v->al);
	if (rc < 0) {
		ERRF(e, 20, "volume %u: cannot set up the bitmap and activity log: %s", v->vnr,
		     strerror(-rc));
		volume_release(v);
		return rc;
	}
	/* io-engine (disk section); TANDEM_IO overrides it (tests) */
	mode = getenv("TANDEM_IO");
	if (!mode || (strcmp(mode, "io_uring") && strcmp(mode, "threads") && strcmp(mode, "inline")))
		mode = conf_res_text(c, resource_cr(v->res), CONF_SECT_DISK, "io-engine");
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
	/* which wfc timeout applies (ref §8): before the flags change below */
	v->wfc_class = (v->sb.flags & MDF_PEER_OUT_DATED)	 ? VOLUME_WFC_OUTDATED
		       : ((v->sb.flags & MDF_PRIMARY_IND) &&
			  !(v->sb.flags & MDF_CONNECTED_IND)) ? VOLUME_WFC_DEGRADED
							     : VOLUME_WFC_DEFAULT;
	/* a node that went down as Primary is a crashed primary */
	if (v->sb.flags & MDF_PRIMARY_IND)
		v->sb.flags |= MDF_CRASHED_PRIMARY;
	v->sb.flags &= ~(MDF_PRIMARY_IND | MDF_AL_CLEAN);
	v->sb.uuid[MD_UI_CURRENT] &= ~1ULL;
	v->sb.magic = MD_MAGIC_INUSE;
	rc = md_write_sb(v->md, &v->sb); /* a failure fails the attach */
	if (rc < 0) {
		ERRF(e, 20, "volume %u: cannot write the superblock: %s", v->vnr, strerror(-rc));
		volume_release(v);
		return rc;
	}
	state_change_disk(v->st, disk_from_flags(v), "attach");
	v->failing = false;
	v->io_error_seen = false;
	v->users = 0;
	if (v->res->d->fault_injection)
		bdev_set_faults(v->data, volume_fault_hooks(v));
	log_res(LOG_INFO, v->res->name,
		"volume %u: attached %s, %llu KiB, disk %s, %llu KiB out of sync, I/O via %s",
		v->vnr, cv->disk, (unsigned long long)v->size_sect / 2, state_disk_name(volume_disk(v)),
		(unsigned long long)bitmap_weight(v->bm) * 4, v->io ? ioeng_kind(v->io) : "inline");
	return 0;
}

int volume_detach(struct volume *v, struct reply_err *e)
{
	struct bm_copy *pages = NULL, *c;
	struct md_sb copy;
	int64_t rc = 0;

	if (!v->md)
		return 0;
	pthread_mutex_lock(&v->lock);
	while (v->users)
		pthread_cond_wait(&v->cond, &v->lock);
	if (v->failing) {
		/* the metadata stays "in use": the next attach replays the AL */
		pthread_mutex_unlock(&v->lock);
		volume_release(v);
		state_change_disk(v->st, DISK_DISKLESS, "detach");
		return 0;
	}
	/* the writes run without the lock: new requests wait (detaching),
	 * the dirty bitmap pages and the superblock are copied first */
	v->detaching = true;
	v->sb.flags |= MDF_AL_CLEAN;
	v->sb.magic = MD_MAGIC_CLEAN;
	copy = v->sb;
	rc = bitmap_writeback(v->bm, 0, bitmap_pages(v->bm) - 1, copy_page, &pages);
	pthread_mutex_unlock(&v->lock);
	pthread_mutex_lock(&v->md_lock);
	if (rc >= 0)
		rc = bdev_flush(v->data);
	for (c = pages; rc >= 0 && c; c = c->next)
		rc = bm_write_page(v, c->page, c->buf);
	if (rc >= 0)
		rc = md_init_al(v->md);
	if (rc >= 0)
		rc = md_write_sb(v->md, &copy); /* a failure fails the detach */
	pthread_mutex_unlock(&v->md_lock);
	if (rc >= 0)
		volume_release(v); /* the waiting requests find no disk */
	pthread_mutex_lock(&v->lock);
	for (c = pages; rc < 0 && c; c = c->next)
		bitmap_page_mark(v->bm, c->page, true); /* not on disk: still dirty */
	v->detaching = false;
	pthread_cond_broadcast(&v->cond);
	pthread_mutex_unlock(&v->lock);
	free_copies(pages);
	if (rc < 0) {
		ERRF(e, 20, "volume %u: cannot write the metadata back: %s; it stays marked in use",
		     v->vnr, strerror((int)-rc));
		return (int)rc;
	}
	state_change_disk(v->st, DISK_DISKLESS, "detach");
	return 0;
}
