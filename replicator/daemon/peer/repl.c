/*
 * repl: replication while connected (doc/wire-protocol.md §8, §10).
 *
 * On the node that writes (the Primary): every write goes to the local
 * disk and, in parallel, as P_DATA to the peer; it completes when the
 * local write is done and the peer's leg is too: protocol A once the
 * packet is sent, B on P_RECV_ACK, C on P_WRITE_ACK. The writes waiting
 * for the peer form the transfer log; when the link drops, their blocks
 * are marked out of sync and they complete with the local result. A FLUSH
 * also sends P_BARRIER and waits for P_BARRIER_ACK, which the peer sends
 * after flushing its disk.
 *
 * On the peer: the data stream is applied in the order it arrives (so
 * writes keep their order without epochs), each write going through the
 * activity log; acks go back on the meta stream.
 *
 * The session thread (the resource's peer thread) receives the data
 * stream through one table of handlers, one row per packet type; a meta
 * thread (repl-meta.c) receives the meta stream and keeps the connection alive
 * (ping-int, ping-timeout).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "epoch.h"
#include "peer/peer-int.h"

static void send_unlock(struct peer *p);

struct peer_vol *peer_vol_of(struct peer *p, uint16_t vnr)
{
	unsigned int i;

	for (i = 0; i < p->r->n_vols; i++)
		if (p->pv[i].v->vnr == vnr)
			return &p->pv[i];
	return NULL;
}

/* ---------------------------------------------------------------- sending */

void peer_fail(struct peer *p, int rc)
{
	pthread_mutex_lock(&p->lock);
	if (!p->session_err)
		p->session_err = rc ? rc : -ECONNRESET;
	if (p->data)
		pktio_shutdown(p->data);
	if (p->meta)
		pktio_shutdown(p->meta);
	pthread_cond_broadcast(&p->cond);
	pthread_cond_broadcast(&p->fl_cond);
	pthread_mutex_unlock(&p->lock);
}

int peer_send(struct peer *p, const struct wire_pkt *pkt)
{
	int rc, tries = p->ko_count > 0 ? p->ko_count : 1;

	pthread_mutex_lock(&p->send_lock);
	do /* each timeout costs one of ko-count (DRBD's ko counter) */
		rc = p->data ? pktio_send(p->data, pkt, p->timeout_ms) : -ENOTCONN;
	while (rc == -ETIMEDOUT && --tries > 0);
	send_unlock(p);
	if (rc < 0)
		peer_fail(p, rc);
	return rc;
}

int peer_send_meta(struct peer *p, const struct wire_pkt *pkt)
{
	int rc;

	pthread_mutex_lock(&p->meta_lock);
	rc = p->meta ? pktio_send(p->meta, pkt, p->timeout_ms) : -ENOTCONN;
	pthread_mutex_unlock(&p->meta_lock);
	if (rc < 0)
		peer_fail(p, rc);
	return rc;
}

void peer_fill_state(struct peer *p, struct wire_pkt *pkt, unsigned int vi)
{
	struct state s = resource_state(p->r);
	struct volume *v = &p->r->vols[vi];

	memset(pkt, 0, sizeof(*pkt));
	pkt->type = WIRE_P_STATE;
	pkt->volume = (uint16_t)v->vnr;
	pkt->u.state.role = (uint8_t)s.role;
	pkt->u.state.peer = (uint8_t)s.peer;
	pkt->u.state.disk = (uint8_t)volume_disk(v);
	pkt->u.state.pdsk = (uint8_t)s.pdsk;
	pthread_mutex_lock(&p->lock); /* p->pv goes when the session ends */
	pkt->u.state.conn = (uint8_t)(p->pv ? peer_vol_repl(&p->pv[vi]) : s.conn);
	pthread_mutex_unlock(&p->lock);
	pkt->u.state.isp = (uint8_t)((s.user_isp ? WIRE_ISP_USER : 0) |
				     (peer_after_isp(p->r) ? WIRE_ISP_AFTR : 0));
}

int peer_send_state(struct peer *p, unsigned int vi)
{
	struct wire_pkt pkt;

	peer_fill_state(p, &pkt, vi);
	return peer_send(p, &pkt);
}

/* Main loop or any thread: tell the peer about a role or disk change. */
void peer_state_changed(struct resource *r)
{
	struct peer *p = peer_of(r);
	unsigned int i;

	if (!p || !__atomic_load_n(&p->live, __ATOMIC_ACQUIRE))
		return;
	for (i = 0; i < r->n_vols; i++)
		peer_send_state(p, i);
}

/* ---------------------------------------------------------------- the transfer log */

/* pe (/proc/drbd's pending): requests sent to the peer, not yet answered */
static void pe_add(struct peer *p, uint32_t vnr, int64_t n)
{
	struct peer_vol *pv = peer_vol_of(p, (uint16_t)vnr);

	if (pv)
		__atomic_add_fetch(&pv->v->c.pe, n, __ATOMIC_RELAXED);
	__atomic_add_fetch(&p->pe_all, n, __ATOMIC_RELAXED);
}

static void tl_add(struct peer *p, struct peer_req *q)
{
	pe_add(p, q->vnr, 1);
	q->next = NULL;
	if (p->tl_tail)
		p->tl_tail->next = q;
	else
		p->tl = q;
	p->tl_tail = q;
}

/* The link is gone: every write waiting for the peer is out of sync;
 * reads waiting for it fail. */
void repl_fail_all(struct peer *p, int rc)
{
	struct peer_req *q, *next;
	struct peer_read *rd, *rnext;
	struct peer_flushw *fw, *fwnext;

	pthread_mutex_lock(&p->lock);
	q = p->tl;
	p->tl = p->tl_tail = NULL;
	rd = p->reads;
	p->reads = NULL;
	fw = p->flushw;
	p->flushw = NULL;
	__atomic_store_n(&p->live, false, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (; fw; fw = fwnext) { /* as peer_flush_wait: the link is gone */
		fwnext = fw->next;
		fw->done(fw->arg);
	}
	for (; q; q = next) {
		struct peer_vol *pv = peer_vol_of(p, (uint16_t)q->vnr);

		next = q->next;
		if (pv)
			volume_mark_oos(pv->v, q->sector * 512, q->size);
		if (pv && !q->done_called)
			__atomic_sub_fetch(&pv->v->c.pe, 1, __ATOMIC_RELAXED);
		if (!q->done_called && p->r->d->up->fence_frozen(p->r)) {
			/* resource-and-stonith: not acknowledged until the verdict */
			pthread_mutex_lock(&p->r->st_lock);
			q->next = p->r->held;
			p->r->held = q;
			pthread_mutex_unlock(&p->r->st_lock);
			continue;
		}
		if (!q->done_called)
			q->done(q->arg, rc < 0 ? rc : -ECONNRESET);
		free(q);
	}
	for (; rd; rd = rnext) {
		rnext = rd->next;
		__atomic_sub_fetch(&rd->v->c.pe, 1, __ATOMIC_RELAXED);
		rd->done(rd->arg, -EIO);
		free(rd);
	}
}

/* The fencing verdict is in (or I/O resumed): complete the requests that
 * were held when the connection was lost; their blocks are out of sync. */
void repl_release_held(struct resource *r)
{
	struct peer_req *q, *next;

	pthread_mutex_lock(&r->st_lock);
	q = r->held;
	r->held = NULL;
	pthread_mutex_unlock(&r->st_lock);
	for (; q; q = next) {
		next = q->next;
		q->done(q->arg, -ECONNRESET);
		free(q);
	}
}

bool peer_live(struct resource *r)
{
	struct peer *p = peer_of(r);

	return p && __atomic_load_n(&p->live, __ATOMIC_ACQUIRE);
}

/*
 * Send a write (P_DATA, or P_TRIM / P_WRITE_ZEROES without buf) to the
 * peer. 1: done(arg, rc) is called once the peer's leg completes (rc < 0:
 * it failed and the blocks were marked out of sync); 0: not connected
 * (the caller marked the blocks already); negative errno: not sent.
 */
/* Send under send_lock (held): a failure ends the session. */
static int sendv_locked(struct peer *p, const struct wire_pkt *pkts, int n)
{
	int rc, tries = p->ko_count > 0 ? p->ko_count : 1;

	do /* each timeout costs one of ko-count (DRBD's ko counter) */
		rc = p->data ? pktio_sendv(p->data, pkts, n, p->timeout_ms) : -ENOTCONN;
	while (rc == -ETIMEDOUT && --tries > 0);
	return rc;
}

static int send_locked(struct peer *p, const struct wire_pkt *pkt)
{
	return sendv_locked(p, pkt, 1);
}

/* flush: a FLUSH waits for this barrier (the peer flushes at once) */
static void barrier_pkt(const struct peer *p, uint32_t nr, bool flush, struct wire_pkt *b)
{
	memset(b, 0, sizeof(*b));
	b->type = WIRE_P_BARRIER;
	b->volume = WIRE_VOL_NONE;
	b->u.barrier.barrier = nr;
	if (flush && (p->agreed.features & WIRE_F_BARRIER_FLUSH))
		b->u.barrier.flags = WIRE_BF_FLUSH;
}

static int send_barrier_locked(struct peer *p, uint32_t nr, bool flush)
{
	struct wire_pkt b;

	barrier_pkt(p, nr, flush, &b);
	return send_locked(p, &b);
}

/* The peer's leg of q is done as far as the application is concerned
 * (A: sent, B: received, C: written); p->lock held. */
void repl_leg_done_locked(struct peer *p, struct peer_req *q)
{
	epoch_completed(p->ep, q->epoch);
	q->done_called = true;
	pe_add(p, q->vnr, -1);
}

/*
 * Send a write (P_DATA, or P_TRIM / P_WRITE_ZEROES without buf) to the
 * peer. 1: done(arg, rc) is called once the peer's leg completes (rc < 0:
 * it failed and the blocks were marked out of sync); 0: not connected;
 * negative errno: not sent. In both cases the blocks are marked out of
 * sync here (the link may have gone after the caller looked at it).
 *
 * The write joins the current epoch; the barrier that closes an epoch
 * goes out before the first write of the next one, both under send_lock
 * so that no write crosses a barrier on the wire. The request stays in
 * the transfer log until its epoch is acknowledged (protocols A and B
 * complete earlier, but a link failure before the ack marks the blocks
 * out of sync).
 */
int peer_submit(struct resource *r, struct volume *v, uint16_t type, uint64_t off, uint32_t len,
		const void *buf, uint32_t dp_flags, void (*done)(void *arg, int rc), void *arg)
{
	struct peer *p = peer_of(r);
	uint32_t nr = 0, bar;
	bool barrier = false; /* pkts[0] closes the epoch before this write */
	struct peer_req *q;
	struct wire_pkt pkts[2], pkt;
	uint8_t dg[DIGEST_MAX_SIZE], *bad = NULL;
	int rc;

	if (!peer_live(r)) {
		/* the caller saw the link up when it began the write */
		volume_mark_oos(v, off, len);
		return r->d->up->fence_wait(r); /* resource-and-stonith: frozen until the verdict */
	}
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->sector = off / 512;
	q->size = len;
	q->vnr = v->vnr;
	q->done = done;
	q->arg = arg;
	memset(&pkt, 0, sizeof(pkt));
	pkt.type = type;
	pkt.volume = (uint16_t)v->vnr;
	if (p->protocol == WIRE_PROTO_B)
		dp_flags |= WIRE_DP_SEND_RECV_ACK;
	else if (p->protocol == WIRE_PROTO_C)
		dp_flags |= WIRE_DP_SEND_WRITE_ACK;
	if (type == WIRE_P_DATA) { /* the digest outside the locks */
		pkt.data = buf;
		pkt.data_len = len;
		rc = integrity_sign(p, &pkt, dg);
		if (rc < 0) {
			free(q);
			volume_mark_oos(v, off, len);
			return rc;
		}
	}

	pthread_mutex_lock(&p->send_lock);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		if (!p->live || p->session_err) {
			pthread_mutex_unlock(&p->lock);
			send_unlock(p);
			free(q);
			volume_mark_oos(v, off, len);
			return r->d->up->fence_wait(r);
		}
		rc = epoch_write(p->ep, &nr, &bar);
		if (rc == 0)
			break;
		if (rc == -EBUSY) { /* too many epochs wait for acks: let them go */
			pthread_mutex_unlock(&p->lock);
			if (barrier) { /* on the wire before anyone else's write */
				barrier = false;
				rc = send_locked(p, &pkts[0]);
				if (rc < 0) {
					pthread_mutex_lock(&p->lock);
					break;
				}
			}
			send_unlock(p);
			pthread_mutex_lock(&p->lock);
			if (epoch_unacked(p->ep) > 0 && p->live && !p->session_err)
				pthread_cond_wait(&p->cond, &p->lock);
			pthread_mutex_unlock(&p->lock);
			pthread_mutex_lock(&p->send_lock);
			pthread_mutex_lock(&p->lock);
			continue;
		}
		if (barrier) { /* a second barrier due: the first goes alone */
			pthread_mutex_unlock(&p->lock);
			rc = send_locked(p, &pkts[0]);
			pthread_mutex_lock(&p->lock);
			barrier = false;
			if (rc < 0)
				break;
		}
		/* the barrier goes out with the write, in one sendmsg */
		barrier_pkt(p, bar, false, &pkts[0]);
		barrier = true;
	}
	q->id = ++p->next_id;
	q->epoch = nr;
	tl_add(p, q);
	pthread_mutex_unlock(&p->lock);
	if (rc == 0) {
		if (type == WIRE_P_DATA) {
			pkt.u.data = (struct wire_data){q->sector, q->id, 0, dp_flags};
			bad = integrity_fault_corrupt(p, &pkt);
		} else {
			pkt.u.zeroes = (struct wire_zeroes){q->sector, q->id, 0, dp_flags, len};
		}
		if (barrier) {
			pkts[1] = pkt;
			rc = sendv_locked(p, pkts, 2);
		} else {
			rc = send_locked(p, &pkt);
		}
		free(bad);
	}
	send_unlock(p);
	if (rc < 0) { /* the teardown marks the blocks and fails the request */
		peer_fail(p, rc);
		return 1;
	}
	__atomic_add_fetch(&v->c.ns, len / 1024, __ATOMIC_RELAXED);
	if (p->protocol != WIRE_PROTO_A)
		repl_kick_meta(p); /* its ack is due: ack-poll-usec */
	if (p->protocol == WIRE_PROTO_A) { /* done once handed to the socket */
		pthread_mutex_lock(&p->lock);
		repl_leg_done_locked(p, q);
		pthread_mutex_unlock(&p->lock);
		done(arg, 0);
		repl_close_due_epoch(p);
	}
	return 1;
}

/*
 * FLUSH, in two halves so that the local flush runs while the peer
 * flushes: peer_flush_start() closes the epoch with a barrier (0 and
 * *nr, or 0 and *nr = 0 if not connected); peer_flush_wait() waits for
 * its ack, after which every write sent before it is on the peer's
 * stable storage. A link failure marks the writes out of sync instead.
 */
int peer_flush_start(struct resource *r, uint32_t *nr)
{
	struct peer *p = peer_of(r);
	int rc;

	*nr = 0;
	if (!peer_live(r))
		return 0;
	pthread_mutex_lock(&p->send_lock);
	pthread_mutex_lock(&p->lock);
	while ((rc = epoch_flush(p->ep, nr)) == -EBUSY && p->live && !p->session_err)
		pthread_cond_wait(&p->cond, &p->lock);
	if (rc == 0)
		p->flush_nr = *nr; /* the meta thread expects its ack */
	pthread_mutex_unlock(&p->lock);
	if (rc == 0)
		rc = send_barrier_locked(p, *nr, true);
	send_unlock(p);
	if (rc == 0)
		repl_kick_meta(p); /* its ack is due: ack-poll-usec */
	if (rc < 0) {
		*nr = 0;
		peer_fail(p, rc);
	}
	return 0;
}

void peer_flush_wait(struct resource *r, uint32_t nr)
{
	struct peer *p = peer_of(r);

	if (!nr || !p)
		return;
	pthread_mutex_lock(&p->lock);
	while (p->live && !p->session_err && (int32_t)(p->barrier_acked - nr) < 0)
		pthread_cond_wait(&p->cond, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

int peer_flush_async(struct resource *r, struct peer_flushw *w)
{
	struct peer *p = peer_of(r);
	int rc = 0;

	if (!w->nr || !p)
		return 0;
	pthread_mutex_lock(&p->lock);
	if (p->live && !p->session_err && (int32_t)(p->barrier_acked - w->nr) < 0) {
		w->next = p->flushw;
		p->flushw = w;
		rc = 1;
	}
	pthread_mutex_unlock(&p->lock);
	return rc;
}

/*
 * Before a clean disconnect: close the current epoch and wait (at most
 * timeout_ms) for its ack, so that writes the peer has already got are
 * not marked out of sync when the transfer log is torn down. Protocol A
 * completes writes before the peer has them, so without this the last
 * epoch of an idle link would always be resynced after a reconnect.
 */
void peer_drain(struct resource *r, int timeout_ms)
{
	struct peer *p = peer_of(r);
	struct timespec ts;
	uint32_t nr;

	peer_flush_start(r, &nr);
	if (!nr)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += timeout_ms / 1000;
	ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&p->lock);
	while (p->live && !p->session_err && (int32_t)(p->barrier_acked - nr) < 0)
		if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT)
			break;
	if ((int32_t)(p->barrier_acked - nr) < 0)
		log_res(LOG_WARNING, r->name,
			"disconnect: the peer did not acknowledge the last writes within %d ms; "
			"they will be resynced", timeout_ms);
	pthread_mutex_unlock(&p->lock);
}

int peer_flush(struct resource *r)
{
	uint32_t nr;

	peer_flush_start(r, &nr);
	peer_flush_wait(r, nr);
	return 0;
}

/* ---------------------------------------------------------------- the data stream */

static int ack(struct peer *p, uint16_t type, const struct wire_pkt *in, uint32_t size)
{
	struct wire_pkt a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.volume = in->volume;
	a.u.ack = (struct wire_ack){in->u.data.sector, in->u.data.id, size, in->u.data.seq};
	return peer_send_meta(p, &a);
}

static int on_data(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	const struct wire_data *w = &pkt->u.data;
	int rc;

	if (!pv || (uint64_t)w->sector * 512 + pkt->data_len > pv->v->size_sect * 512)
		return -EPROTO;
	rc = integrity_check(p, pkt);
	if (rc < 0)
		return rc;
	if (w->dp_flags & WIRE_DP_SEND_RECV_ACK) {
		rc = ack(p, WIRE_P_RECV_ACK, pkt, pkt->data_len);
		if (rc < 0)
			return rc;
	}
	__atomic_add_fetch(&pv->v->c.nr, pkt->data_len / 1024, __ATOMIC_RELAXED);
	p->recv_epoch_writes++;
	rc = volume_peer_write(pv->v, w->sector * 512, pkt->data_len, pkt->data,
			       w->dp_flags & WIRE_DP_FUA);
	if (rc == 0 && pv->pstate.disk < DISK_INCONSISTENT) /* the writer has no disk */
		volume_mark_oos(pv->v, w->sector * 512, pkt->data_len);
	if (rc < 0)
		return ack(p, WIRE_P_NEG_ACK, pkt, pkt->data_len);
	if (w->dp_flags & WIRE_DP_SEND_WRITE_ACK)
		return ack(p, WIRE_P_WRITE_ACK, pkt, pkt->data_len);
	return 0;
}

static int on_zeroes(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	const struct wire_zeroes *z = &pkt->u.zeroes;
	struct wire_pkt a;
	int rc;

	if (!pv || z->sector * 512 + z->size > pv->v->size_sect * 512)
		return -EPROTO;
	p->recv_epoch_writes++;
	rc = volume_peer_trim(pv->v, z->sector * 512, z->size, pkt->type == WIRE_P_WRITE_ZEROES);
	memset(&a, 0, sizeof(a));
	a.type = rc < 0 ? WIRE_P_NEG_ACK
			: (z->dp_flags & WIRE_DP_SEND_RECV_ACK) ? WIRE_P_RECV_ACK : WIRE_P_WRITE_ACK;
	a.volume = pkt->volume;
	a.u.ack = (struct wire_ack){z->sector, z->id, z->size, z->seq};
	if (!(z->dp_flags & (WIRE_DP_SEND_RECV_ACK | WIRE_DP_SEND_WRITE_ACK)) && rc == 0)
		return 0;
	return peer_send_meta(p, &a);
}

static int on_state(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	struct state s;

	if (!pv)
		return -EPROTO;
	if (pkt->u.state.role == ROLE_PRIMARY && pkt->u.state.disk < DISK_INCONSISTENT &&
	    pv->pstate.disk >= DISK_INCONSISTENT) {
		/* the Primary lost its disk: writes now exist only here, a new
		 * data generation starts (ref §5) */
		struct volume *v = pv->v;
		struct gi g;

		pthread_mutex_lock(&v->lock);
		if (v->md && volume_disk(v) == DISK_UPTODATE && volume_uuid(v, GI_BITMAP) == 0) {
			volume_gi(v, &g);
			gi_new_current(&g, gi_entropy(), false);
			volume_set_gi(v, &g);
		}
		volume_unlock(v);
		log_res(LOG_NOTICE, p->r->name,
			"volume %u: the Primary has no disk now; it reads and writes here", v->vnr);
	}
	verify_peer_state(p, pv, &pkt->u.state);
	pv->pstate = pkt->u.state;
	__atomic_store_n(&pv->pisp, pkt->u.state.isp, __ATOMIC_RELEASE);
	peer_show_sync_state(p->r);
	s = resource_state(p->r);
	if (s.peer != pkt->u.state.role || s.pdsk != pkt->u.state.disk)
		state_change_conn(p->r, s.conn, (enum state_role)pkt->u.state.role,
				  (enum state_disk)pkt->u.state.disk, NULL);
	if (peer_vol_repl(pv) == CONN_SYNCSOURCE && pkt->u.state.disk == DISK_UPTODATE) {
		/* the target finished: its bits are ours to clear */
		struct volume *v = pv->v;
		struct gi g;

		pthread_mutex_lock(&v->lock);
		volume_gi(v, &g);
		gi_end_sync_source(&g);
		volume_set_gi(v, &g);
		bitmap_clear_all(v->bm);
		volume_sync_sb(v);
		volume_writeback_bitmap_locked(v);
		volume_unlock(v);
		state_change_repl(v->st, CONN_CONNECTED, "resync done (as SyncSource)");
		log_res(LOG_NOTICE, p->r->name, "volume %u: resync done (as SyncSource)", v->vnr);
		resync_log_csums(p, pv);
		peer_sync_done(p->r, v);
	}
	return 0;
}

static int on_uuids(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	struct volume *v;

	if (!pv)
		return -EPROTO;
	pv->puuids = pkt->u.uuids;
	v = pv->v;
	pthread_mutex_lock(&v->lock);
	if ((pkt->u.uuids.flags & WIRE_UF_SKIP_INITIAL_SYNC) &&
	    gi_mask(volume_uuid(v, GI_CURRENT)) == GI_JUST_CREATED) {
		/* new-current-uuid --clear-bitmap on the peer: no initial sync */
		struct gi g;

		volume_gi(v, &g);
		g.uuid[GI_CURRENT] = gi_mask(pkt->u.uuids.uuid[GI_CURRENT]);
		g.uuid[GI_BITMAP] = 0;
		volume_set_gi(v, &g);
		volume_set_flags(v, MDF_CONSISTENT | MDF_WAS_UP_TO_DATE, 0);
		state_change_disk(v->st, DISK_UPTODATE, "the peer skipped the initial sync");
		bitmap_clear_all(v->bm);
		volume_writeback_bitmap_locked(v);
		volume_unlock(v);
		log_res(LOG_NOTICE, p->r->name,
			"volume %u: the peer cleared the bitmap of new data: initial sync skipped",
			v->vnr);
		peer_state_changed(p->r);
		return 0;
	}
	pthread_mutex_unlock(&v->lock);
	return 0;
}

static int on_oos(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);

	if (!pv)
		return -EPROTO;
	volume_mark_oos(pv->v, pkt->u.oos.sector * 512, pkt->u.oos.size);
	return 0;
}

/* One row per packet type that may arrive on the data stream once the
 * handshake is over; any other is a protocol error. `ask`: the peer waits
 * for an answer, counted in ua (/proc/drbd's unacknowledged) meanwhile. */
static const struct {
	uint16_t type;
	int (*fn)(struct peer *p, const struct wire_pkt *pkt);
	bool ask;
} data_handlers[] = {
	{WIRE_P_DATA, on_data, true},
	{WIRE_P_TRIM, on_zeroes, true},
	{WIRE_P_WRITE_ZEROES, on_zeroes, true},
	{WIRE_P_BARRIER, flusher_on_barrier, false},
	{WIRE_P_STATE, on_state, false},
	{WIRE_P_UUIDS, on_uuids, false},
	{WIRE_P_OUT_OF_SYNC, on_oos, false},
	{WIRE_P_RS_DATA_REQUEST, resync_on_rs_request, true},
	{WIRE_P_RS_DATA_REPLY, resync_on_rs_reply, true},
	{WIRE_P_CSUM_RS_REQUEST, resync_on_csum_request, true},
	{WIRE_P_DATA_REQUEST, on_data_request, true},
	{WIRE_P_DATA_REPLY, on_data_reply, false},
	{WIRE_P_OV_REQUEST, verify_on_request, true},
	{WIRE_P_OV_REPLY, verify_on_reply, false},
};

int repl_receive(struct peer *p)
{
	char why[WIRE_REASON_MAX];
	struct peer_vol *ua;
	struct wire_pkt pkt;
	size_t i;
	int rc;

	for (;;) {
		rc = pktio_recv(p->data, -1, &pkt, why, sizeof(why));
		if (rc < 0) {
			if (rc == -EPROTO || rc == -EBADMSG || rc == -E2BIG)
				log_res(LOG_ERR, p->r->name, "protocol error: %s", why);
			return rc;
		}
		for (i = 0; i < sizeof(data_handlers) / sizeof(data_handlers[0]); i++)
			if (data_handlers[i].type == pkt.type)
				break;
		if (i == sizeof(data_handlers) / sizeof(data_handlers[0])) {
			log_res(LOG_ERR, p->r->name, "protocol error: unexpected %s on the data stream",
				wire_type_name(pkt.type));
			return -EPROTO;
		}
		ua = data_handlers[i].ask ? peer_vol_of(p, pkt.volume) : NULL;
		if (ua)
			__atomic_add_fetch(&ua->v->c.ua, 1, __ATOMIC_RELAXED);
		rc = data_handlers[i].fn(p, &pkt);
		if (ua)
			__atomic_sub_fetch(&ua->v->c.ua, 1, __ATOMIC_RELAXED);
		if (rc < 0) {
			if (rc == -EPROTO)
				log_res(LOG_ERR, p->r->name, "protocol error: bad %s (volume %u)",
					wire_type_name(pkt.type), pkt.volume);
			return rc;
		}
	}
}

/* ---------------------------------------------------------------- the meta stream */


/*
 * A completion closed the epoch: send its barrier now. This runs on the
 * meta thread, which must never wait for send_lock: the holder may be
 * blocked on a full data socket whose reader, on the peer, waits for us
 * to read its acks. If the lock is busy the holder sends the barrier
 * when it lets go (send_unlock).
 */
void repl_close_due_epoch(struct peer *p)
{
	uint32_t bar;
	int rc;

	if (pthread_mutex_trylock(&p->send_lock) != 0) {
		__atomic_store_n(&p->close_pending, true, __ATOMIC_SEQ_CST);
		if (pthread_mutex_trylock(&p->send_lock) != 0)
			return; /* the holder has not let go yet: it will see the flag */
	}
	__atomic_store_n(&p->close_pending, false, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&p->lock);
	rc = p->live && !p->session_err ? epoch_close_due(p->ep, &bar) : 0;
	pthread_mutex_unlock(&p->lock);
	if (rc == 1)
		rc = send_barrier_locked(p, bar, false);
	send_unlock(p);
	if (rc < 0 && rc != -EBUSY)
		peer_fail(p, rc);
}

/* Let go of send_lock; send a barrier that fell due meanwhile. */
static void send_unlock(struct peer *p)
{
	pthread_mutex_unlock(&p->send_lock);
	if (__atomic_load_n(&p->close_pending, __ATOMIC_SEQ_CST))
		repl_close_due_epoch(p);
}
