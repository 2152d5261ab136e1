/*
 * verify: online verify (doc/wire-protocol.md §9.2, ref/drbd-semantics.md
 * §10), and the resync of the blocks it found.
 *
 * The node that runs `tandemadm verify` is VerifyS: it walks the device
 * in 4 KiB blocks and sends P_OV_REQUEST for each; VerifyT reads its
 * block, digests it with verify-alg and answers P_OV_REPLY; VerifyS
 * digests its own block, compares, marks a mismatch out of sync and sends
 * P_OV_RESULT, on which VerifyT marks it too. Nothing is copied: the
 * marked blocks resync at the next handshake (disconnect/connect, or
 * `tandemadm resync-oos` at once).
 *
 * Where a block is read on VerifyS decides whether an application write
 * can fall between the two reads. Writes and the verify packets travel on
 * the same ordered data stream, so the node that receives the writes
 * (the Secondary) reads when the answer arrives, after every write sent
 * before it; a Primary reads when it sends the request and holds the
 * block (writes to it wait) until the answer is in.
 *
 * Pacing is the resync's: the same controller (resync-rate, c-*) and at
 * most OV_WINDOW requests in flight.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bitmap.h"
#include "digest.h"
#include "log.h"
#include "peer/peer-int.h"
#include "rsctl.h"

#define OV_BLOCK 4096u
#define OV_STEP_MS 100

static const struct digest_alg *verify_alg(struct peer *p)
{
	const char *name = conf_res_text(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_NET, "verify-alg");
	const struct digest_alg *a = NULL;

	if (name && digest_lookup(name, &a) < 0)
		a = NULL;
	return a;
}

/* p->ov_alg: set by the control thread (verify) or the data receiver (the
 * peer started one), read by both receivers, which a peer may make run at
 * any time by sending P_OV_REQUEST. */
static const struct digest_alg *ov_alg(struct peer *p)
{
	return __atomic_load_n(&p->ov_alg, __ATOMIC_ACQUIRE);
}

static void set_ov_alg(struct peer *p, const struct digest_alg *a)
{
	__atomic_store_n(&p->ov_alg, a, __ATOMIC_RELEASE);
}

static uint32_t block_len(const struct peer_vol *pv, uint64_t sector)
{
	uint64_t left = (pv->v->size_sect - sector) * 512;

	return left < OV_BLOCK ? (uint32_t)left : OV_BLOCK;
}

/* Read and digest one block (claimed while read; `keep`: stays claimed). */
static int digest_block(struct peer *p, struct peer_vol *pv, uint64_t sector, uint32_t len,
			bool keep, uint8_t *out)
{
	uint8_t *buf = malloc(len);
	int rc;

	if (!buf)
		return -ENOMEM;
	rc = volume_read_claimed(pv->v, sector * 512, len, buf, NULL, NULL);
	if (rc >= 0) {
		rc = digest_buf(ov_alg(p), buf, len, out);
		if (!keep || rc < 0)
			volume_read_release(pv->v, sector * 512, len);
	}
	free(buf);
	return rc < 0 ? rc : 0;
}

/* An out-of-sync block: extend the current run or log it and start a new one. */
static void found(struct peer *p, struct peer_vol *pv, uint64_t sector, uint32_t len)
{
	volume_mark_oos(pv->v, sector * 512, len);
	pthread_mutex_lock(&p->lock);
	pv->ov_oos++;
	if (pv->ov_run_len && pv->ov_run_start + pv->ov_run_len == sector) {
		pv->ov_run_len += len / 512;
	} else {
		if (pv->ov_run_len)
			log_res(LOG_WARNING, p->r->name,
				"volume %u: Out of sync: start=%llu, size=%llu (sectors)", pv->v->vnr,
				(unsigned long long)pv->ov_run_start,
				(unsigned long long)pv->ov_run_len);
		pv->ov_run_start = sector;
		pv->ov_run_len = len / 512;
	}
	pthread_mutex_unlock(&p->lock);
}

static void log_last_run(struct peer *p, struct peer_vol *pv)
{
	if (!pv->ov_run_len)
		return;
	log_res(LOG_WARNING, p->r->name, "volume %u: Out of sync: start=%llu, size=%llu (sectors)",
		pv->v->vnr, (unsigned long long)pv->ov_run_start,
		(unsigned long long)pv->ov_run_len);
	pv->ov_run_len = 0;
}

/* Both sides, at the end: DRBD's lines, then the out-of-sync handler. */
static void verify_done(struct peer *p, struct peer_vol *pv, bool source)
{
	int64_t ms = peer_now_ms() - pv->ov_start_ms;
	uint64_t oos, done;

	pthread_mutex_lock(&p->lock);
	log_last_run(p, pv);
	oos = pv->ov_oos;
	done = pv->ov_done;
	state_change_repl(pv->v->st, CONN_CONNECTED, "verify done");
	pthread_mutex_unlock(&p->lock);
	log_res(LOG_NOTICE, p->r->name,
		"volume %u: Online verify done (total %lld sec; %llu K/sec), %llu blocks compared",
		pv->v->vnr, (long long)ms / 1000,
		(unsigned long long)(ms > 0 ? done * 4 * 1000 / (uint64_t)ms : 0),
		(unsigned long long)done);
	if (oos) {
		log_res(LOG_WARNING, p->r->name,
			"volume %u: Online verify found %llu 4k block out of sync! They resync at "
			"the next connection, or now with 'tandemadm resync-oos %s' on the node "
			"whose data is right",
			pv->v->vnr, (unsigned long long)oos, p->r->name);
		if (source && conf_res_text(tandemd_conf(p->r->d), resource_cr(p->r), CONF_SECT_HANDLERS,
					    "out-of-sync"))
			p->r->d->up->handler_run(p->r, "out-of-sync", (int)pv->v->vnr, NULL, NULL);
	} else {
		log_res(LOG_NOTICE, p->r->name, "volume %u: Online verify found no block out of sync",
			pv->v->vnr);
	}
	pthread_mutex_lock(&pv->v->lock);
	volume_writeback_bitmap_locked(pv->v);
	volume_unlock(pv->v);
}

/* ---------------------------------------------------------------- VerifyS */

static int send_request(struct peer *p, struct peer_vol *pv, uint64_t sector, bool primary)
{
	uint32_t len = block_len(pv, sector);
	struct ov_slot *s = &pv->ov_ring[(sector / 8) % OV_WINDOW];
	struct wire_pkt q;
	int rc;

	s->sector = sector;
	s->have = false;
	if (primary) { /* hold the block until the answer is in */
		rc = digest_block(p, pv, sector, len, true, s->digest);
		if (rc < 0)
			return rc;
		s->have = true;
	}
	memset(&q, 0, sizeof(q));
	q.type = WIRE_P_OV_REQUEST;
	q.volume = (uint16_t)pv->v->vnr;
	q.u.req = (struct wire_req){sector, sector, len};
	pthread_mutex_lock(&p->lock);
	pv->ov_inflight++;
	pthread_mutex_unlock(&p->lock);
	rc = peer_send(p, &q);
	if (rc < 0 && s->have)
		volume_read_release(pv->v, sector * 512, len);
	return rc;
}

/* The answer to one request is in (reply or failure): window bookkeeping. */
static void answered(struct peer *p, struct peer_vol *pv)
{
	pthread_mutex_lock(&p->lock);
	if (pv->ov_inflight)
		pv->ov_inflight--;
	pv->ov_done++;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

static struct ov_slot *slot_of(struct peer_vol *pv, uint64_t sector)
{
	struct ov_slot *s;

	if (!pv->ov_ring)
		return NULL;
	s = &pv->ov_ring[(sector / 8) % OV_WINDOW];
	return s->sector == sector ? s : NULL;
}

/* P_OV_REPLY (data stream): compare, mark, tell VerifyT. */
int verify_on_reply(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	const struct wire_req *q = &pkt->u.req;
	uint8_t mine[DIGEST_MAX_SIZE];
	struct ov_slot *s;
	struct wire_pkt res;
	const struct digest_alg *alg = ov_alg(p);
	bool same;
	int rc;

	if (!pv || peer_vol_repl(pv) != CONN_VERIFYS || !alg || !(s = slot_of(pv, q->sector)) ||
	    q->size != block_len(pv, q->sector))
		return -EPROTO;
	if (pkt->digest_len != digest_size(alg)) {
		log_res(LOG_ERR, p->r->name, "protocol error: P_OV_REPLY with a %u-byte digest, "
					     "%s has %zu", pkt->digest_len, digest_name(alg),
			digest_size(alg));
		return -EPROTO;
	}
	if (s->have) {
		memcpy(mine, s->digest, sizeof(mine));
		volume_read_release(pv->v, q->sector * 512, q->size);
		rc = 0;
	} else {
		rc = digest_block(p, pv, q->sector, q->size, false, mine);
	}
	s->sector = UINT64_MAX;
	same = rc == 0 && !memcmp(mine, pkt->digest, pkt->digest_len);
	if (!same)
		found(p, pv, q->sector, q->size);
	answered(p, pv);
	memset(&res, 0, sizeof(res));
	res.type = WIRE_P_OV_RESULT;
	res.volume = pkt->volume;
	res.u.ack = (struct wire_ack){q->sector, q->id, q->size,
				      same ? WIRE_OV_IN_SYNC : WIRE_OV_OUT_OF_SYNC};
	return peer_send_meta(p, &res);
}

/* P_NEG_RS_DREPLY to a P_OV_REQUEST: VerifyT could not read; counts as
 * out of sync, as DRBD. */
void verify_on_neg(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	struct ov_slot *s;

	if (!pv || !(s = slot_of(pv, pkt->u.ack.sector)))
		return;
	if (s->have)
		volume_read_release(pv->v, s->sector * 512, block_len(pv, s->sector));
	s->sector = UINT64_MAX;
	found(p, pv, pkt->u.ack.sector, pkt->u.ack.size);
	answered(p, pv);
}

static void *ov_thread(void *arg)
{
	struct peer *p = arg;
	struct rsctl *ctl = NULL;
	uint64_t done_before = 0;
	int64_t step_end = peer_now_ms() + OV_STEP_MS;
	unsigned int i;

	if (resync_new_ctl(p, &ctl) < 0)
		return NULL; /* the resync thread logs the same settings */
	for (;;) {
		bool active = false, over;

		pthread_mutex_lock(&p->lock); /* session_err is written under it */
		over = __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE) || p->session_err;
		pthread_mutex_unlock(&p->lock);
		if (over)
			break;
		for (i = 0; i < p->r->n_vols; i++) {
			struct peer_vol *pv = &p->pv[i];
			bool primary = resource_state(p->r).role == ROLE_PRIMARY;
			uint64_t budget, sent = 0, done_now;

			if (peer_vol_repl(pv) != CONN_VERIFYS)
				continue;
			active = true;
			if (peer_sync_paused(p, pv))
				continue;
			pthread_mutex_lock(&p->lock);
			done_now = pv->ov_done;
			budget = rsctl_step(ctl, (done_now - done_before) * 8, pv->ov_inflight * 8) / 8;
			done_before = done_now;
			pthread_mutex_unlock(&p->lock);
			while (sent < budget && pv->ov_pos < pv->ov_stop) {
				if (resync_wait_window(p, &pv->ov_inflight, 1, OV_WINDOW,
						       step_end) < 0)
					break;
				if (send_request(p, pv, pv->ov_pos, primary) < 0)
					break;
				pv->ov_pos += OV_BLOCK / 512;
				sent++;
			}
			pthread_mutex_lock(&p->lock);
			if (pv->ov_pos >= pv->ov_stop && !pv->ov_inflight) {
				pthread_mutex_unlock(&p->lock);
				verify_done(p, pv, true);
				peer_send_state(p, i);
				peer_show_sync_state(p->r);
				continue;
			}
			pthread_mutex_unlock(&p->lock);
		}
		if (!active)
			break;
		resync_step_sleep(p, &step_end, OV_STEP_MS);
	}
	rsctl_free(ctl);
	return NULL;
}

static void reset(struct peer_vol *pv, uint64_t start, uint64_t stop)
{
	unsigned int k;

	pv->ov_pos = pv->ov_start = start;
	pv->ov_stop = stop;
	pv->ov_inflight = pv->ov_done = pv->ov_oos = pv->ov_asked = 0;
	pv->ov_ending = false;
	pv->ov_run_len = 0;
	pv->ov_start_ms = peer_now_ms();
	for (k = 0; pv->ov_ring && k < OV_WINDOW; k++)
		pv->ov_ring[k].sector = UINT64_MAX;
}

/* tandemadm verify [--start S] [--stop S]: sectors, rounded down to 4 KiB. */
int peer_verify(struct resource *r, uint64_t start, uint64_t stop, struct reply_err *e)
{
	struct peer *p = r->peer;
	struct state s = resource_state(r);
	unsigned int i;

	if (!peer_live(r) || s.conn != CONN_CONNECTED) {
		ERRF(e, 11, "%s: State change failed: (-15) Need a connection to start verify or "
			    "resync", r->name);
		return -ENOTCONN;
	}
	if (s.disk != DISK_UPTODATE || s.pdsk != DISK_UPTODATE) {
		ERRF(e, 11, "%s: State change failed: verify needs UpToDate data on both nodes "
			    "(here %s, peer %s)", r->name, state_disk_name(s.disk),
		     state_disk_name(s.pdsk));
		return -EPERM;
	}
	set_ov_alg(p, verify_alg(p));
	if (!ov_alg(p)) {
		ERRF(e, 10, "%s: verify needs 'verify-alg' in the net section (e.g. sha256), on "
			    "both nodes; then 'tandemadm adjust %s' and reconnect", r->name, r->name);
		return -EINVAL;
	}
	if (p->ov_running) {
		pthread_join(p->ov_thread, NULL);
		p->ov_running = false;
	}
	pthread_mutex_lock(&p->lock);
	for (i = 0; i < r->n_vols; i++) {
		struct peer_vol *pv = &p->pv[i];
		uint64_t end = stop && stop < pv->v->size_sect ? stop : pv->v->size_sect;

		if (!pv->ov_ring)
			pv->ov_ring = calloc(OV_WINDOW, sizeof(*pv->ov_ring));
		if (!pv->ov_ring) {
			pthread_mutex_unlock(&p->lock);
			ERRF(e, 20, "%s: out of memory", r->name);
			return -ENOMEM;
		}
		reset(pv, start / 8 * 8 < end ? start / 8 * 8 : end, end);
		state_change_repl(pv->v->st, CONN_VERIFYS, "verify");
	}
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < r->n_vols; i++) {
		log_res(LOG_NOTICE, r->name, "volume %u: Online Verify start sector: %llu",
			p->pv[i].v->vnr, (unsigned long long)p->pv[i].ov_start);
		peer_send_state(p, i);
	}
	peer_show_sync_state(r);
	if (pthread_create(&p->ov_thread, NULL, ov_thread, p) != 0) {
		ERRF(e, 20, "%s: cannot start the verify thread", r->name);
		return -EAGAIN;
	}
	p->ov_running = true;
	return 0;
}

/* ---------------------------------------------------------------- VerifyT */

/*
 * VerifyT ends when the peer has said it is done (P_STATE Connected, data
 * stream) and the result of every request it answered is in (P_OV_RESULT,
 * meta stream): the two streams are not ordered against each other, so the
 * last results may come after the P_STATE. Under p->lock; true: the caller
 * ends it (once).
 */
static bool t_end_due(struct peer_vol *pv)
{
	if (!pv->ov_ending || pv->ov_done < pv->ov_asked)
		return false;
	pv->ov_ending = false;
	return true;
}

/* The peer's P_STATE: it started (VerifyS) or ended (Connected) a verify. */
void verify_peer_state(struct peer *p, struct peer_vol *pv, const struct wire_state *ps)
{
	if (ps->conn == CONN_VERIFYS && peer_vol_repl(pv) == CONN_CONNECTED) {
		set_ov_alg(p, verify_alg(p));
		pthread_mutex_lock(&p->lock);
		reset(pv, 0, pv->v->size_sect);
		state_change_repl(pv->v->st, CONN_VERIFYT, "verify started by the peer");
		pthread_mutex_unlock(&p->lock);
		log_res(LOG_NOTICE, p->r->name, "volume %u: Online verify started by the peer",
			pv->v->vnr);
	} else if (ps->conn == CONN_CONNECTED && peer_vol_repl(pv) == CONN_VERIFYT) {
		bool end;

		pthread_mutex_lock(&p->lock);
		pv->ov_ending = true;
		end = t_end_due(pv);
		pthread_mutex_unlock(&p->lock);
		if (end)
			verify_done(p, pv, false);
	}
}

/* P_OV_REQUEST (data stream): digest our block and answer. */
int verify_on_request(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	const struct wire_req *q = &pkt->u.req;
	const struct digest_alg *alg = ov_alg(p);
	uint8_t d[DIGEST_MAX_SIZE];
	struct wire_pkt rep;
	int rc;

	if (!pv || wire_req_check(q, pv->v->size_sect, OV_BLOCK) < 0)
		return -EPROTO;
	if (!alg) {
		log_res(LOG_ERR, p->r->name, "protocol error: P_OV_REQUEST but no verify-alg here");
		return -EPROTO;
	}
	memset(&rep, 0, sizeof(rep));
	rep.volume = pkt->volume;
	rc = digest_block(p, pv, q->sector, q->size, false, d);
	if (rc < 0) { /* no result comes for it: out of sync, compared, here */
		found(p, pv, q->sector, q->size);
		pthread_mutex_lock(&p->lock);
		pv->ov_asked++;
		pv->ov_done++;
		pthread_mutex_unlock(&p->lock);
		rep.type = WIRE_P_NEG_RS_DREPLY;
		rep.u.ack = (struct wire_ack){q->sector, q->id, q->size, 0};
		return peer_send_meta(p, &rep);
	}
	pthread_mutex_lock(&p->lock);
	pv->ov_asked++;
	pthread_mutex_unlock(&p->lock);
	rep.type = WIRE_P_OV_REPLY;
	rep.u.req = *q;
	rep.digest = d;
	rep.digest_len = (uint32_t)digest_size(alg);
	return peer_send(p, &rep);
}

/* P_OV_RESULT (meta stream): VerifyS compared; mark what differs. */
void verify_on_result(struct peer *p, const struct wire_pkt *pkt)
{
	struct peer_vol *pv = peer_vol_of(p, pkt->volume);
	bool end;

	if (!pv || peer_vol_repl(pv) != CONN_VERIFYT)
		return;
	if (pkt->u.ack.seq == WIRE_OV_OUT_OF_SYNC)
		found(p, pv, pkt->u.ack.sector, pkt->u.ack.size);
	pthread_mutex_lock(&p->lock);
	pv->ov_done++;
	end = t_end_due(pv);
	pthread_mutex_unlock(&p->lock);
	if (end)
		verify_done(p, pv, false);
}

/* The session ends: stop walking (the marked blocks stay marked). */
void verify_stop(struct peer *p)
{
	unsigned int i;

	if (p->ov_running) {
		pthread_join(p->ov_thread, NULL);
		p->ov_running = false;
	}
	for (i = 0; p->pv && i < p->r->n_vols; i++) {
		struct peer_vol *pv = &p->pv[i];

		if (pv->ov_ring) { /* blocks still held by requests in flight */
			unsigned int k;

			for (k = 0; k < OV_WINDOW; k++)
				if (pv->ov_ring[k].sector != UINT64_MAX && pv->ov_ring[k].have)
					volume_read_release(pv->v, pv->ov_ring[k].sector * 512,
							    block_len(pv, pv->ov_ring[k].sector));
			free(pv->ov_ring);
			pv->ov_ring = NULL;
		}
		if (peer_vol_repl(pv) == CONN_VERIFYS || peer_vol_repl(pv) == CONN_VERIFYT)
			log_res(LOG_WARNING, p->r->name,
				"volume %u: online verify aborted at sector %llu (%llu blocks out of "
				"sync so far)", pv->v->vnr, (unsigned long long)pv->ov_pos,
				(unsigned long long)pv->ov_oos);
	}
}

/* ---------------------------------------------------------------- resync-oos */

/*
 * tandemadm resync-oos: resync the blocks marked out of sync (by verify,
 * or left from before) now, from this node, without waiting for the next
 * connection: a new data generation here makes this node the SyncSource
 * of a bitmap-based resync at the renegotiation.
 */
int peer_resync_oos(struct resource *r, struct reply_err *e)
{
	struct state s = resource_state(r);
	uint64_t bits = 0;
	unsigned int i;

	if (!peer_live(r) || s.conn != CONN_CONNECTED) {
		ERRF(e, 11, "%s: State change failed: (-15) Need a connection to start verify or "
			    "resync", r->name);
		return -ENOTCONN;
	}
	if (s.disk != DISK_UPTODATE || s.peer == ROLE_PRIMARY) {
		ERRF(e, 11, "%s: State change failed: resync-oos copies from here: it needs "
			    "UpToDate data here and a Secondary peer (run it on the Primary)", r->name);
		return -EPERM;
	}
	for (i = 0; i < r->n_vols; i++) {
		struct volume *v = &r->vols[i];
		struct gi g;

		pthread_mutex_lock(&v->lock);
		if (v->md && v->bm && bitmap_weight(v->bm)) {
			bits += bitmap_weight(v->bm);
			volume_gi(v, &g);
			if (g.uuid[GI_BITMAP] == 0)
				gi_new_current(&g, gi_entropy(), s.role == ROLE_PRIMARY);
			volume_set_gi(v, &g);
			volume_writeback_bitmap_locked(v);
		}
		volume_unlock(v);
	}
	if (!bits) {
		log_res(LOG_INFO, r->name, "resync-oos: nothing is marked out of sync here");
		return 0;
	}
	log_res(LOG_NOTICE, r->name, "resync-oos: resyncing %llu KiB marked out of sync to the peer",
		(unsigned long long)bits * 4);
	peer_renegotiate(r);
	return 0;
}
