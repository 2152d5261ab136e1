/*
 * peer-ops: what a live connection does besides the write path (repl.c):
 * reads served by the peer for a Primary without UpToDate data, P_OUT_OF_SYNC
 * for writes the Primary cannot keep, status and resync progress,
 * pause-sync and resync-after, skipping the initial sync, renegotiation.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "peer/peer-int.h"

/* Tell the peer that [off, off+len) will not be on this node's disk. */
void peer_mark_missing(struct resource *r, struct volume *v, uint64_t off, uint32_t len)
{
	struct wire_pkt pkt;

	if (!peer_live(r))
		return;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_OUT_OF_SYNC;
	pkt.volume = (uint16_t)v->vnr;
	pkt.u.oos = (struct wire_oos){off / 512, len};
	peer_send(r->peer, &pkt);
}

/* ---------------------------------------------------------------- remote reads */

/* Should reads of v go to the peer? (no local UpToDate data, and the peer
 * has it) */
bool peer_reads_remote(struct resource *r, struct volume *v)
{
	struct state s;

	if (!peer_live(r))
		return false;
	s = resource_state(r);
	return s.pdsk == DISK_UPTODATE && (!v->md || v->failing || volume_disk(v) < DISK_UPTODATE);
}

/* Read through the peer: 1 if sent (done(arg, len or -errno) follows),
 * negative errno if not. */
int peer_read(struct resource *r, struct volume *v, uint64_t off, uint32_t len, void *buf,
	      void (*done)(void *arg, int res), void *arg)
{
	struct peer *p = r->peer;
	struct peer_read *rd = calloc(1, sizeof(*rd));
	struct wire_pkt pkt;
	int rc;

	if (!rd)
		return -ENOMEM;
	rd->buf = buf;
	rd->len = len;
	rd->done = done;
	rd->arg = arg;
	pthread_mutex_lock(&p->lock);
	if (!p->live || p->session_err) {
		pthread_mutex_unlock(&p->lock);
		free(rd);
		return -EIO;
	}
	rd->id = ++p->next_id;
	rd->v = v;
	rd->next = p->reads;
	p->reads = rd;
	__atomic_add_fetch(&v->c.pe, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&p->lock);
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = WIRE_P_DATA_REQUEST;
	pkt.volume = (uint16_t)v->vnr;
	pkt.u.req = (struct wire_req){off / 512, rd->id, len};
	rc = peer_send(p, &pkt);
	return rc < 0 ? 1 : 1; /* a failed send fails the read in the teardown */
}

static struct peer_read *read_take(struct peer *p, uint64_t id)
{
	struct peer_read **pp, *rd;

	pthread_mutex_lock(&p->lock);
	for (pp = &p->reads; (rd = *pp); pp = &rd->next)
		if (rd->id == id) {
			*pp = rd->next;
			__atomic_sub_fetch(&rd->v->c.pe, 1, __ATOMIC_RELAXED);
			break;
		}
	pthread_mutex_unlock(&p->lock);
	return rd;
}

/* The peer reads for us: the range is claimed while it is read and sent. */
int on_data_request(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	const struct wire_req *q = &pkt->u.req;
	struct wire_pkt rep;
	uint8_t dg[DIGEST_MAX_SIZE];
	uint8_t *buf;
	int rc;

	if (!pv || wire_req_check(q, pv->v->size_sect, WIRE_MAX_DATA) < 0)
		return -EPROTO;
	buf = malloc(q->size);
	if (!buf)
		return -ENOMEM;
	memset(&rep, 0, sizeof(rep));
	rep.volume = pkt->volume;
	rc = volume_disk(pv->v) == DISK_UPTODATE
		     ? volume_read_claimed(pv->v, q->sector * 512, q->size, buf, NULL, NULL)
		     : -EIO;
	if (rc < 0) {
		free(buf);
		rep.type = WIRE_P_NEG_DREPLY;
		rep.u.ack = (struct wire_ack){q->sector, q->id, q->size, 0};
		return peer_send_meta(p, &rep);
	}
	rep.type = WIRE_P_DATA_REPLY;
	rep.u.data = (struct wire_data){q->sector, q->id, 0, 0};
	rep.data = buf;
	rep.data_len = q->size;
	rc = integrity_sign(p, &rep, dg);
	if (rc == 0)
		rc = peer_send(p, &rep);
	volume_read_release(pv->v, q->sector * 512, q->size);
	free(buf);
	return rc;
}

int on_data_reply(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_read *rd = read_take(p, pkt->u.data.id);
	int rc;

	if (!rd)
		return -EPROTO;
	if (pkt->data_len != rd->len) {
		rd->done(rd->arg, -EIO);
		free(rd);
		return -EPROTO;
	}
	rc = integrity_check(p, pkt);
	if (rc < 0) {
		rd->done(rd->arg, -EIO);
		free(rd);
		return rc;
	}
	memcpy(rd->buf, pkt->data, rd->len);
	rd->done(rd->arg, (int)rd->len);
	free(rd);
	return 0;
}

void on_neg_dreply(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_read *rd = read_take(p, pkt->u.ack.id);

	if (!rd)
		return;
	log_res(LOG_ERR, p->r->name, "the peer could not read %u bytes at sector %llu either",
		rd->len, (unsigned long long)pkt->u.ack.sector);
	rd->done(rd->arg, -EIO);
	free(rd);
}

/*
 * new-current-uuid --clear-bitmap while connected, both disks just
 * created: both become UpToDate without a sync (the operator vouches that
 * both are blank, or identical). 1 if done, 0 if this is not the case.
 */
int peer_skip_initial_sync(struct resource *r)
{
	struct peer *p = r->peer;
	unsigned int i;
	struct wire_pkt pkt;

	if (!p || !peer_live(r) || resource_state(r).conn != CONN_CONNECTED)
		return 0;
	pthread_mutex_lock(&p->lock);
	for (i = 0; p->pv && i < r->n_vols; i++)
		if (gi_mask(p->pv[i].puuids.uuid[GI_CURRENT]) != GI_JUST_CREATED ||
		    gi_mask(volume_uuid(&r->vols[i], GI_CURRENT)) != GI_JUST_CREATED)
			break;
	pthread_mutex_unlock(&p->lock);
	if (!p->pv || i < r->n_vols)
		return 0;
	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];
		struct gi g;

		pthread_mutex_lock(&v->lock);
		volume_gi(v, &g);
		gi_new_current_clear_bitmap(&g, gi_entropy(), resource_state(r).role == ROLE_PRIMARY);
		volume_set_gi(v, &g);
		volume_set_flags(v, MDF_CONSISTENT | MDF_WAS_UP_TO_DATE, 0);
		state_change_disk(v->st, DISK_UPTODATE, "new-current-uuid --clear-bitmap");
		bitmap_clear_all(v->bm);
		volume_writeback_bitmap_locked(v);
		memset(&pkt, 0, sizeof(pkt));
		pkt.type = WIRE_P_UUIDS;
		pkt.volume = (uint16_t)v->vnr;
		memcpy(pkt.u.uuids.uuid, g.uuid, sizeof(pkt.u.uuids.uuid));
		pkt.u.uuids.flags = WIRE_UF_SKIP_INITIAL_SYNC;
		volume_unlock(v);
		peer_send(p, &pkt);
	}
	log_res(LOG_NOTICE, r->name, "new current UUID, bitmap cleared: initial sync skipped");
	peer_state_changed(r);
	return 1;
}

/* Run the handshake again (after primary --force or invalidate): the new
 * UUIDs and disk states decide a resync, as at connect. */
void peer_renegotiate(struct resource *r)
{
	if (r->peer && peer_live(r)) {
		log_res(LOG_NOTICE, r->name, "renegotiating with the peer: the UUIDs changed");
		peer_fail(r->peer, -ERESTART);
	}
}

/* ---------------------------------------------------------------- status */

/* Add the volume's replication state and, while it resyncs, the progress
 * (as /proc/drbd shows it) to a status object. Main loop. */
void peer_status(struct resource *r, unsigned int vi, json_object *jv)
{
	struct peer *p = r->peer;
	struct peer_vol *pv;
	json_object *js;
	uint64_t total, left, done;
	int64_t ms;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	if (!p->pv || vi >= r->n_vols) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	pv = &p->pv[vi];
	json_object_object_add(jv, "replication", json_object_new_string(state_conn_name(peer_vol_repl(pv))));
	if (peer_vol_repl(pv) == CONN_SYNCSOURCE || peer_vol_repl(pv) == CONN_SYNCTARGET) {
		pthread_mutex_lock(&pv->v->lock);
		left = pv->v->bm ? bitmap_weight(pv->v->bm) : 0;
		pthread_mutex_unlock(&pv->v->lock);
		total = pv->rs_total > left ? pv->rs_total : left;
		done = total - left;
		ms = peer_now_ms() - pv->rs_start_ms;
		js = json_object_new_object();
		json_object_object_add(js, "total_kib", json_object_new_uint64(total * 4));
		json_object_object_add(js, "left_kib", json_object_new_uint64(left * 4));
		json_object_object_add(js, "percent",
				       json_object_new_double(total ? 100.0 * (double)done / (double)total
								    : 100.0));
		json_object_object_add(js, "speed_kib_s",
				       json_object_new_uint64(ms > 0 ? done * 4 * 1000 / (uint64_t)ms : 0));
		json_object_object_add(js, "eta_s",
				       json_object_new_uint64(done && ms > 0 ? left * (uint64_t)ms / done / 1000
									      : 0));
		json_object_object_add(jv, "sync", js);
	}
	if (peer_vol_repl(pv) == CONN_VERIFYS || peer_vol_repl(pv) == CONN_VERIFYT) {
		total = pv->ov_stop > pv->ov_start ? (pv->ov_stop - pv->ov_start + 7) / 8 : 0;
		done = pv->ov_done < total ? pv->ov_done : total;
		ms = peer_now_ms() - pv->ov_start_ms;
		js = json_object_new_object();
		json_object_object_add(js, "start_sector", json_object_new_uint64(pv->ov_start));
		json_object_object_add(js, "total_kib", json_object_new_uint64(total * 4));
		json_object_object_add(js, "left_kib", json_object_new_uint64((total - done) * 4));
		json_object_object_add(js, "percent",
				       json_object_new_double(total ? 100.0 * (double)done / (double)total
								    : 100.0));
		json_object_object_add(js, "speed_kib_s",
				       json_object_new_uint64(ms > 0 ? done * 4 * 1000 / (uint64_t)ms : 0));
		json_object_object_add(js, "eta_s",
				       json_object_new_uint64(done && ms > 0 ? (total - done) *
									       (uint64_t)ms / done / 1000
									     : 0));
		json_object_object_add(js, "out_of_sync_blocks", json_object_new_uint64(pv->ov_oos));
		json_object_object_add(jv, "verify", js);
	}
	pthread_mutex_unlock(&p->lock);
}

/* ---------------------------------------------------------------- pause-sync */

/* resync-after: is the resource this one resyncs after still syncing? */
bool peer_after_isp(struct resource *r)
{
	const char *after = conf_res_text(tandemd_conf(r->d), resource_cr(r), CONF_SECT_DISK, "resync-after");
	struct resource *o;
	struct state s = {0};

	if (!after)
		return false;
	pthread_rwlock_rdlock(&r->d->res_lock); /* o stays while we look */
	o = resource_find(r->d, after);
	if (o && o != r)
		s = resource_state(o);
	pthread_rwlock_unlock(&r->d->res_lock);
	return s.conn >= CONN_STARTINGSYNCS && s.conn <= CONN_PAUSEDSYNCT &&
	       s.conn != CONN_VERIFYS && s.conn != CONN_VERIFYT;
}

/* Paused by this side (pause-sync, resync-after: `after`) or the peer's? */
static bool paused(const struct state *s, bool after, const struct peer_vol *pv)
{
	return s->user_isp || after ||
	       (__atomic_load_n(&pv->pisp, __ATOMIC_ACQUIRE) & (WIRE_ISP_USER | WIRE_ISP_AFTR));
}

/* Is the resync of pv paused by either side (pause-sync, resync-after)? */
bool peer_sync_paused(struct peer *p, const struct peer_vol *pv)
{
	struct state s = resource_state(p->r);

	return paused(&s, peer_after_isp(p->r), pv);
}

/* The connection state as shown: PausedSync* while paused. */
void peer_show_sync_state(struct resource *r)
{
	struct peer *p = r->peer;
	struct state s = resource_state(r);
	bool after = peer_after_isp(r); /* before p->lock: it takes res_lock */
	enum state_conn c;

	if (!p || !peer_live(r))
		return;
	pthread_mutex_lock(&p->lock);
	c = p->pv ? state_change_live(r) : s.conn;
	if (p->pv && (c == CONN_SYNCSOURCE || c == CONN_SYNCTARGET) &&
	    paused(&s, after, &p->pv[0]))
		c = c == CONN_SYNCSOURCE ? CONN_PAUSEDSYNCS : CONN_PAUSEDSYNCT;
	pthread_mutex_unlock(&p->lock);
	if (c != s.conn)
		state_change_conn(r, c, s.peer, s.pdsk, NULL);
}

/* A resync of r ended: the resources that resync after r may go on
 * (their peers learn it from P_STATE). Any thread. */
void resync_after_changed(struct resource *r)
{
	unsigned int i;

	pthread_rwlock_rdlock(&r->d->res_lock); /* the resources stay while we look */
	for (i = 0; i < r->d->n_res; i++) {
		struct resource *o = r->d->res[i];
		const char *after = conf_res_text(tandemd_conf(o->d), resource_cr(o), CONF_SECT_DISK,
						  "resync-after");

		if (o == r || !after || strcmp(after, r->name) || !peer_live(o))
			continue;
		peer_state_changed(o);
		peer_show_sync_state(o);
	}
	pthread_rwlock_unlock(&r->d->res_lock);
}
