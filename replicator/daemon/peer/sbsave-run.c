/*
 * sbsave-run: the daemon's side of split-brain saves
 * (doc/split-brain-saves.md). When the handshake resolves a split brain
 * and this node's changes lose, the blocks that the resync will overwrite
 * (the union of both bitmaps, after the exchange) are copied into a save
 * set under the state directory before the first resync request goes out.
 * If they cannot all be saved, there is no resync: the connection is
 * refused (StandAlone) with the reason, and the data stay as they are.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bitmap.h"
#include "log.h"
#include "peer/peer-int.h"
#include "sbsave.h"

#define SAVE_CHUNK (1024u * 1024u) /* bytes read per step at most */

/* What decided, for the manifest: the after-sb policy that applied. */
static void policy_of(struct peer *p, struct peer_vol *pv, char *buf, size_t len)
{
	int prim = (resource_state(p->r).role == ROLE_PRIMARY) +
		   (pv->pstate.role == ROLE_PRIMARY);
	static const char *const opt[] = {"after-sb-0pri", "after-sb-1pri", "after-sb-2pri"};
	const char *val;

	if (p->discard_my_data) {
		snprintf(buf, len, "discard-my-data");
		return;
	}
	val = conf_res_text(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, opt[prim]);
	snprintf(buf, len, "%s=%s", opt[prim], val ? val : "disconnect");
}

/*
 * The handshake decided: if a split brain was resolved with this node as
 * the SyncTarget, open a save set now, so that its path is in the
 * split-brain handler's environment (TANDEM_SB_SAVE). -errno: refuse the
 * connection (nothing is overwritten without a save).
 */
int sbsave_run_prepare(struct peer *p, struct peer_vol *pv, bool split_brain, bool target)
{
	struct resource *r = p->r;
	struct volume *v = pv->v;
	char resdir[PATH_MAX], policy[128];
	struct sbsave_meta m;
	int rc;

	if (!split_brain || !target)
		return 0;
	rc = sbsave_resdir(r->d->state_dir, r->name, resdir, sizeof(resdir));
	if (rc == 0 && mkdir(r->d->state_dir, 0700) < 0 && errno != EEXIST)
		rc = -errno;
	if (rc < 0) {
		log_res(LOG_ERR, r->name,
			"volume %u: split brain: cannot use the state directory %s for the save of "
			"this node's diverging blocks: %s; no resync. Create it (or start tandemd "
			"with --state-dir), then 'tandemadm connect %s'",
			v->vnr, r->d->state_dir, strerror(-rc), r->name);
		return rc;
	}
	policy_of(p, pv, policy, sizeof(policy));
	memset(&m, 0, sizeof(m));
	m.resource = r->name;
	m.volume = v->vnr;
	m.node = p->me;
	m.peer = p->peer_name;
	m.policy = policy;
	pthread_mutex_lock(&v->lock);
	volume_gi(v, &m.local);
	pthread_mutex_unlock(&v->lock);
	memcpy(m.peer_uuids.uuid, pv->puuids.uuid, sizeof(m.peer_uuids.uuid));
	m.device_size = v->size_sect * 512;
	rc = sbsave_begin(resdir, &m, &pv->sbs);
	if (rc < 0) {
		log_res(LOG_ERR, r->name,
			"volume %u: split brain: cannot create a save set under %s: %s; no resync, "
			"nothing overwritten. Fix the directory, then 'tandemadm connect %s'",
			v->vnr, resdir, strerror(-rc), r->name);
		return rc;
	}
	snprintf(pv->sb_path, sizeof(pv->sb_path), "%s", sbsave_path(pv->sbs));
	log_res(LOG_WARNING, r->name,
		"volume %u: split brain: this node's changes lose (%s); its diverging blocks are "
		"saved to %s before the resync overwrites them",
		v->vnr, policy, pv->sb_path);
	return 0;
}

/* Copy bits [first, first+n) of the volume into the set. */
static int save_run(struct peer_vol *pv, uint8_t *buf, uint64_t first, uint64_t n)
{
	struct volume *v = pv->v;
	uint64_t off = first * 4096, end = (first + n) * 4096;
	int rc;

	if (end > v->size_sect * 512)
		end = v->size_sect * 512;
	while (off < end) {
		uint32_t len = end - off > SAVE_CHUNK ? SAVE_CHUNK : (uint32_t)(end - off);

		rc = volume_read_frozen(v, off, len, buf); /* the handshake froze it */
		if (rc < 0)
			return rc;
		rc = sbsave_range(pv->sbs, off, buf, len);
		if (rc < 0)
			return rc;
		off += len;
	}
	return 0;
}

/*
 * SyncTarget, after the bitmap exchange and before the first request:
 * save every block the resync will overwrite, then complete the set.
 * -errno: no resync (the caller refuses the connection).
 */
int sbsave_run_save(struct peer *p, struct peer_vol *pv)
{
	struct resource *r = p->r;
	struct volume *v = pv->v;
	uint64_t bit, next, weight, avail = 0, saved;
	uint8_t *buf;
	char resdir[PATH_MAX];
	int rc;

	if (!pv->sbs)
		return 0;
	pthread_mutex_lock(&v->lock);
	weight = bitmap_weight(v->bm);
	pthread_mutex_unlock(&v->lock);
	sbsave_resdir(r->d->state_dir, r->name, resdir, sizeof(resdir));
	rc = sbsave_space_ok(resdir, weight * 4096, &avail);
	if (rc < 0) {
		log_res(LOG_ERR, r->name,
			"volume %u: split brain: %llu KiB of this node's blocks must be saved before "
			"the resync, but %s has only %llu KiB free; no resync, nothing overwritten. "
			"Free space there, then 'tandemadm connect %s'",
			v->vnr, (unsigned long long)weight * 4, resdir,
			(unsigned long long)avail / 1024, r->name);
		goto fail;
	}
	buf = malloc(SAVE_CHUNK);
	if (!buf) {
		rc = -ENOMEM;
		goto fail;
	}
	for (bit = 0;; bit = next) {
		pthread_mutex_lock(&v->lock);
		bit = bitmap_find_next_set(v->bm, bit);
		next = bit < bitmap_bits(v->bm) ? bitmap_find_next_clear(v->bm, bit) : bit;
		pthread_mutex_unlock(&v->lock);
		if (bit >= bitmap_bits(v->bm))
			break;
		rc = save_run(pv, buf, bit, next - bit);
		if (rc < 0)
			break;
	}
	free(buf);
	if (rc < 0) {
		log_res(LOG_ERR, r->name,
			"volume %u: split brain: saving this node's diverging blocks to %s failed: "
			"%s; no resync, nothing overwritten. Fix the cause, then 'tandemadm "
			"connect %s'",
			v->vnr, pv->sb_path, strerror(-rc), r->name);
		goto fail;
	}
	saved = sbsave_bytes(pv->sbs);
	rc = sbsave_commit(pv->sbs);
	pv->sbs = NULL;
	if (rc < 0) {
		log_res(LOG_ERR, r->name,
			"volume %u: split brain: completing the save set %s failed: %s; no resync",
			v->vnr, pv->sb_path, strerror(-rc));
		return rc;
	}
	log_res(LOG_NOTICE, r->name,
		"volume %u: split brain: saved %llu KiB of this node's diverging blocks to %s "
		"(inspect with 'tandemadm sb-show %s %s')",
		v->vnr, (unsigned long long)saved / 1024, pv->sb_path, r->name,
		strrchr(pv->sb_path, '/') + 1);
	return 0;
fail:
	sbsave_abort(pv->sbs);
	pv->sbs = NULL;
	return rc < 0 ? rc : -EIO;
}

/* The session ended before the save was done: keep what is saved. */
void sbsave_run_abort(struct peer_vol *pv)
{
	if (pv->sbs) {
		sbsave_abort(pv->sbs);
		pv->sbs = NULL;
	}
}
